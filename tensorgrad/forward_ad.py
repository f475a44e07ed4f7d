"""`tg.autograd.forward_ad`: forward-mode AD with dual tensors, as `torch.autograd.forward_ad`.

    >>> import tensorgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     dual = fwAD.make_dual(x, v)       # x, carrying the direction v
    ...     out = f(dual)
    ...     y, jvp = fwAD.unpack_dual(out)    # f(x) and J v, the Jacobian of f at x times v

PyTorch pushes a tangent through every op beside its value (one forward formula per op).
tensorgrad has reverse mode only, so a tangent is computed when it is asked for, from the graph:
the dual tensor is an alias of the primal that records a graph, and `unpack_dual(out)` runs the
"double vjp" (as `tg.func.jvp`): for a cotangent u that requires grad, g(u) = J^T u is linear in
u, and its gradient with respect to u, weighted by v, is J v. J runs from every dual tensor of
the level that `out` depends on, so several dual inputs add up, as in PyTorch. The tangent is
cached until `out` changes in place.

What differs from PyTorch, because the tangent rides on the reverse-mode graph:

- A dual tensor requires grad (it is a graph node, `grad_fn` AliasBackward0), and so does
  everything computed from it, inside the level and after it (where it has no tangent): making
  it plain again would break the backward pass of what was computed from it.
- Under `no_grad()` (or `inference_mode()`) no graph is recorded, so a result computed there
  cannot know it came from a dual tensor: `make_dual` refuses to run there, and `unpack_dual` of
  a tensor without a graph while grad mode is off raises instead of answering "no tangent", which
  might be wrong. A result computed under `no_grad()` and unpacked with grad mode back on has no
  tangent (PyTorch's would have one).
- A tangent may require grad where PyTorch's does not: it does whenever the function's graph
  reaches a tensor that requires grad (a parameter, a primal that required grad) or the tangent
  given requires grad, so it can be differentiated again; PyTorch decides per op.
- `unpack_dual` of a tensor whose graph was freed by a backward pass (`out.backward()` without
  `retain_graph=True`) raises `GraphFreedError`: the tangent needs that graph. Likewise an
  in-place change that overwrites a value the graph needs (`dual.mul_(dual)`) makes the tangent
  pass raise, as `backward()` would; PyTorch's forward formulas need no such value.
- Only one level, as in PyTorch ("Nested forward mode AD is not supported").
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from scalargrad.engine import GraphFreedError, enable_grad, is_freed, is_grad_enabled
from tensorgrad import autograd
from tensorgrad.movement import _as_is
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "dual_level"]


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal and its tangent (None for a tensor with none)."""

    primal: Tensor
    tangent: Tensor | None


class _Level:
    """The dual tensors of one level and the tangents computed so far."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.roots: list[tuple[Tensor, Tensor]] = []  # (root, its tangent): what J runs from
        self.root_ids: dict[int, Tensor] = {}
        self.hidden: dict[int, Tensor] = {}  # the leaves made to hold a primal that needs no grad
        # Weak references, so a long level keeps no graph alive: by the tensor's id, the tensor and
        # what is known of it. `unpack_dual`'s primals (no tangent passes through them) and, for
        # each tensor unpacked, (version, tangent, whether its graph is the user's too).
        self.primals: dict[int, tuple[weakref.ref, tuple]] = {}
        self.cache: dict[int, tuple[weakref.ref, tuple[int, Tensor | None, bool]]] = {}

    def remember(self, table: dict, t: Tensor, value: Any) -> None:
        """table[id(t)] = (a weak reference to t, value), the entry dropped when t dies."""
        key = id(t)
        table[key] = (weakref.ref(t, lambda _, table=table, key=key: table.pop(key, None)), value)

    @staticmethod
    def lookup(table: dict, t: Tensor) -> Any:
        """The value remembered for t (None if none)."""
        entry = table.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None


_current_level = -1
_level: _Level | None = None


class _Blocking(threading.local):
    """Whether a tangent pass is running: a primal from `unpack_dual` then passes no gradient."""

    on = False


_blocking = _Blocking()


# --- levels --------------------------------------------------------------------------------------


def enter_dual_level() -> int:
    """Enter a new forward-grad level (the first is 0) and make it the current one, which
    `make_dual` and `unpack_dual` use by default. Only one level may exist at a time."""
    global _current_level, _level
    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level += 1
    _level = _Level(_current_level)
    return _current_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the forward-grad level `level` (default: the current one, the only one that may be
    exited): its tangents are forgotten."""
    global _current_level, _level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    if level < 0 or _level is None:
        raise RuntimeError("Dual level must be a positive number.")
    _level = None
    _current_level = level - 1


class dual_level:  # noqa: N801 - PyTorch's lower-case name
    """Context manager (or decorator) that enters a forward-grad level and exits it at the end:
    `with fwAD.dual_level(): ...`; `as` gives the level's number."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc_info: Any) -> None:
        exit_dual_level()

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """`func` run inside a new level each call."""

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return func(*args, **kwargs)

        return wrapper


# --- dual tensors ---------------------------------------------------------------------------------


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """`tensor` carrying `tangent` in the level (default the current one): an alias of `tensor`
    (same memory) whose results' tangents `unpack_dual` gives. A tangent of another dtype is used
    in the primal's, as PyTorch's. Differentiable backward, with respect to `tensor`."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    for name, value in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(value, Tensor):
            raise TypeError(f"make_dual(): argument '{name}' must be Tensor, not {type(value).__name__}")
        if not (value.is_floating_point() or value.is_complex()):
            raise ValueError(f"Expected {name} to be floating point or complex, but got: {value.dtype}")
    lvl = _level
    if lvl is None:
        raise RuntimeError("Trying to access a forward AD level with an invalid index. This index was either "
                           "not created or is already deleted.")
    if level != lvl.number:
        raise RuntimeError("Invalid level given to _make_dual")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                           f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
                           f"while the given forward gradient is of size {list(tangent.shape)}.")
    if not is_grad_enabled():
        raise RuntimeError("make_dual: tensorgrad computes tangents from the graph that reverse mode "
                           "records, and no_grad()/inference_mode() records none; make dual tensors, and "
                           "compute with them, with grad mode on")
    if tensor.requires_grad and _reached(tensor, lvl, "make_dual")[0]:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at "
                           f"the same level {lvl.number} is not supported.")
    base = tensor if tensor.requires_grad else tensor.detach().requires_grad_()
    if base is not tensor:
        lvl.hidden[id(base)] = base
    # Two aliases: J runs from `root`, which nobody sees, so an in-place change of the dual (which
    # gives the dual a new history) still has its tangent measured from the primal.
    root = _alias(base, "make_dual")
    dual = _alias(root, "alias")
    # As PyTorch's, the tangent is kept as given, and used in the primal's dtype.
    lvl.roots.append((root, tangent if tangent.dtype == tensor.dtype else tangent.to(tensor.dtype)))
    lvl.root_ids[id(root)] = root
    lvl.remember(lvl.cache, dual, (dual._versions[0], tangent, base is tensor))
    return dual


def _alias(x: Tensor, op: str) -> Tensor:
    """A graph node holding x's data as it is, gradient passed through (the graph VJP of the view
    ops, which the complex numbers' convention knows)."""
    return autograd.record(x.data, op, (x,), _identity, saved=(), graph_vjp=_as_is)


def _identity(grad: Any) -> Any:
    return grad


def _no_tangent_through(grad: Tensor) -> Tensor | None:
    """A primal's gradient hook: in a tangent pass nothing flows through it, as it has no tangent."""
    return grad * 0 if _blocking.on else None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor` in the level (default the current one): the tangent is J v
    summed over the level's dual tensors that `tensor` depends on (None if it depends on none, or
    outside every level); the primal holds the same values and carries no tangent."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError("_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if _level is None:
        return UnpackedDualTensor(tensor, None)
    tangent, on_user_graph = _tangent(tensor, _level)
    if level != _level.number:  # (PyTorch checks the level of a tensor that has a tangent only)
        if tangent is not None:
            raise RuntimeError("Invalid level given to _fw_primal")
        return UnpackedDualTensor(tensor, None)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    if not on_user_graph:
        return UnpackedDualTensor(tensor.detach(), tangent)
    # The primal stays differentiable backward (to the parameters, to a primal that requires
    # grad), but no tangent may flow through it, as PyTorch's primal has none.
    primal = _alias(tensor, "alias")
    primal.register_hook(_no_tangent_through)
    _level.remember(_level.primals, primal, ())
    return UnpackedDualTensor(primal, tangent)


def _tangent(out: Tensor, lvl: _Level) -> tuple[Tensor | None, bool]:
    """(out's tangent or None, whether out's graph reaches a tensor that requires grad for the user)."""
    cached = lvl.lookup(lvl.cache, out)
    if cached is not None and cached[0] == out._versions[0]:  # (an in-place op bumps the version)
        return cached[1], cached[2]
    if not out.requires_grad:
        if not is_grad_enabled() and lvl.roots:
            raise RuntimeError("unpack_dual: this tensor has no graph and grad mode is off: tensorgrad "
                               "computes tangents from the graph that reverse mode records, and no_grad()/"
                               "inference_mode() records none, so whether it came from a dual tensor is "
                               "unknown; compute it with grad mode on")
        return None, False
    roots, on_user_graph = _reached(out, lvl, "unpack_dual")
    tangent = _jvp(out, roots, on_user_graph) if roots else None
    lvl.remember(lvl.cache, out, (out._versions[0], tangent, on_user_graph))
    return tangent, on_user_graph


def _reached(out: Tensor, lvl: _Level, op: str) -> tuple[list[tuple[Tensor, Tensor]], bool]:
    """(the level's (root, tangent) pairs that out's graph reaches, whether it also reaches a tensor
    that requires grad for the user). A walk over `parents` that stops at unpacked primals."""
    found: set[int] = set()
    user = False
    seen: set[int] = set()
    stack = [out]
    while stack:
        t = stack.pop()
        if id(t) in seen or not getattr(t, "_requires_grad", False):
            continue
        seen.add(id(t))
        if lvl.root_ids.get(id(t)) is t:
            found.add(id(t))
            user = user or lvl.hidden.get(id(t.parents[0])) is not t.parents[0]
            continue
        if lvl.lookup(lvl.primals, t) is not None:
            user = True  # (it is only made for a tensor on the user's graph)
            continue
        if t._backward is None:
            user = True  # a leaf that requires grad, not one of the level's own
            continue
        if is_freed(t):  # (its parents are gone: whether a dual tensor lies beyond is unknown)
            raise GraphFreedError(f"{op}: the graph of this tensor was freed by an earlier backward pass, "
                                  "and tensorgrad computes tangents from it; ask for the tangent before "
                                  "backward(), or pass retain_graph=True to it")
        stack.extend(t.parents)
    return [(root, v) for root, v in lvl.roots if id(root) in found], user


def _jvp(out: Tensor, roots: list[tuple[Tensor, Tensor]], on_user_graph: bool) -> Tensor:
    """J v from the roots to out, by the double vjp; a graph of it is kept when it can matter."""
    keep = on_user_graph or any(v.requires_grad for _, v in roots)
    u = new_leaf(np.zeros_like(out.data), requires_grad=True)
    blocking, _blocking.on = _blocking.on, True
    try:
        with enable_grad():
            vjps = autograd.grad(out, [root for root, _ in roots], u, create_graph=True, allow_unused=True,
                                 materialize_grads=True)
            pairs = [(g, v) for g, v in zip(vjps, (v for _, v in roots), strict=True) if g.requires_grad]
            if not pairs:  # (J^T u does not depend on u: J is zero)
                return new_leaf(np.zeros_like(out.data))
            # (retain_graph: J^T u's graph holds out's tensors, whose graph must outlive this pass)
            (jv,) = autograd.grad([g for g, _ in pairs], u, [v for _, v in pairs], retain_graph=True,
                                  create_graph=keep, allow_unused=True, materialize_grads=True)
    finally:
        _blocking.on = blocking
    return jv
