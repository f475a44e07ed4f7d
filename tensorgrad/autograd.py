"""Autograd for tensors: the one room between an op's array line and scalargrad's engine.

Tutorial chapter 12 writes an op with it. Every differentiable op in tensorgrad is its numpy
forward line followed by one gradient formula (VJP) per input, handed to `record`, which owns
everything the ops would otherwise repeat:

- grad mode, and skipping the VJP of an input that needs no gradient;
- `unbroadcast`: a gradient of the broadcast output shape summed back to each input's shape,
  in exactly one place;
- accumulation into `.grad`, in a leaf's own memory layout (`_leaf_grad`);
- version counters: an op records the versions of what its VJPs read, and backward refuses
  stale data after an in-place change (`bump_version` is the one way to count a change);
- views as an autograd fact: `record(..., view_of=x)` shares x's version counter, and
  `is_view(t)` asks it;
- checking what a user's VJP returns (`_conform`).

The node it makes is a `Tensor` whose `_backward(grad)` the engine calls.
"""

from __future__ import annotations

import itertools
import threading
import warnings
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from scalargrad import engine
from scalargrad.engine import GraphFreedError, grad_mode
from tensorgrad.device import is_array
from tensorgrad.dtypes import float16, narrowed

__all__ = [
    "record", "CROSSED", "unbroadcast", "bump_version", "is_view", "history_moved", "refresh_view",
    "is_custom_function_view", "InplaceModifiedError", "GradDtypeError", "VJP", "register_hook",
    "note_dtype",
    "RemovableHandle", "run_backward", "hooked_grad", "grad", "backward", "detect_anomaly",
    "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    "register_post_accumulate_grad_hook",
]

VJP = Callable[[np.ndarray], np.ndarray]
# graph_vjp(grad, out, *inputs) -> one gradient tensor (or None) per input: see `record`.
GraphVJP = Callable[..., tuple]

# `record(..., saved=CROSSED)`: see record's docstring.
CROSSED = "each input's gradient reads the other input"

# Every inner node's creation number (`next` on a count is atomic under the GIL, so threads
# recording at once still get distinct, increasing numbers).
_creation_numbers = itertools.count()


class InplaceModifiedError(RuntimeError):
    """A tensor that backward needs was changed by an in-place op after it was used."""


class GradDtypeError(RuntimeError, TypeError):
    """A gradient of another dtype assigned to `.grad`: PyTorch's RuntimeError, Python's TypeError."""


def bump_version(t: Tensor) -> None:
    """Count one in-place change of t's storage (seen by every view sharing it)."""
    t._versions[0] += 1


def is_view(t: Tensor) -> bool:
    """Whether t is a view of another tensor's storage (PyTorch's `t._is_view()`)."""
    return t._base is not None


def summed(array: np.ndarray, axis: int | tuple[int, ...] | None, keepdims: bool = False) -> np.ndarray:
    """array summed over `axis`. A float16 array adds in float32 and rounds once, as PyTorch's:
    NumPy adds float16 along a strided axis in float16, where 5,000 numbers near 1 stop at 4096
    (a float16 bias's gradient over a batch of 8192 ones came out 2048). An overflow is inf,
    without NumPy's warning."""
    if array.dtype is float16:
        return narrowed(np.add.reduce(array, axis=axis, keepdims=keepdims, dtype=np.float32), float16)
    return np.add.reduce(array, axis=axis, keepdims=keepdims)


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum `grad` back down to `shape`, undoing NumPy broadcasting.

    Broadcasting an input of shape `shape` to the output's shape does two things: it prepends
    dimensions, and it stretches dimensions of size 1. Each copy of an input element receives
    its own gradient, and the element's gradient is their sum. Example: `b` of shape (3, 1)
    added to `a` of shape (2, 3, 4) is used as if it had shape (2, 3, 4), so its gradient is
    `grad.sum(axis=0)` (the prepended dimension, giving (3, 4)) and then
    `.sum(axis=1, keepdims=True)` (the stretched one, giving (3, 1)).
    """
    if grad.shape == shape:
        return grad
    prepended = grad.ndim - len(shape)
    if prepended:
        grad = summed(grad, tuple(range(prepended)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = summed(grad, stretched, keepdims=True)
    return grad


def record(data: Any, op: str, inputs: tuple[Tensor, ...], *vjps: VJP | None,
           saved: tuple[Tensor, ...] | None = None, saves_output: bool = False,
           view_of: Tensor | None = None, graph_vjp: GraphVJP | None = None) -> Tensor:
    """Wrap an op's result as a graph node: the one helper every differentiable op calls.

    `vjps` holds one function per input, mapping the output's gradient to that input's
    (`None` for an input that gets no gradient, like an index). The result of each VJP may
    have the broadcast output shape: it is summed back to the input's shape here, once. A
    VJP runs only if its input requires grad, so `x @ W` never pays for `x`'s gradient.

    `saved` names the inputs whose data the VJPs read (all of them by default; `CROSSED` for a
    product of two, where each input's gradient reads the other: only what a wanted gradient
    reads counts, as in PyTorch, so `z = y * 2; y.add_(1)` leaves z's backward valid; ops that read
    none, like `+`, pass `()`), and `saves_output` says the VJPs read the output's data. If any
    of them is changed in place before backward, backward raises instead of using stale data.

    `view_of=x` says the result is a view of x's storage (reshape, transpose, slicing...): it
    shares x's version counter, so an in-place change through either is seen by both.

    `graph_vjp(grad, out, *inputs)` is the same formulas written with tensor ops, for a backward
    pass that records a graph of the gradient (`autograd.grad(..., create_graph=True)`, for
    gradients of gradients): it gets the gradient, the output and the inputs as tensors and returns
    one tensor (or None) per input. An op without one is differentiable once: its gradient is
    computed, but a second pass through it raises (`tensorgrad.higher_order`).

    While grad mode is off, or when no input requires grad, the result is a plain leaf.

    A user-defined op is the same few lines as a built-in one::

        def cube(x):
            \"\"\"x ** 3. Derivative: 3 x ** 2.\"\"\"
            return tg.record(x.data ** 3, "cube", (x,), lambda grad: grad * 3 * x.data ** 2)
    """
    if type(data) is not np.ndarray and (isinstance(data, np.generic) or not is_array(data)):
        data = np.asarray(data)  # a numpy scalar (a full reduction's result); a GPU's array stays
    out = _new_tensor(Tensor)  # new_leaf(data), inlined: this is the hottest line of the library
    out._data = data
    out._grad = None
    out.label = ""
    out._keeps_grad = False
    if view_of is None:
        out._versions = [0]
        out._base = None
        out._view_version = 0
    else:  # a view: one version counter for the storage, and the tensor that owns it (PyTorch's `_base`)
        out._versions = view_of._versions
        out._base = view_of if view_of._base is None else view_of._base
        out._view_version = out._versions[0]
    # One edge per input that wants a gradient. Each remembers the input's history when the
    # op was recorded: an in-place op on an inner tensor gives it a new history, and gradient
    # routed into the new one would be wrong.
    edges = []
    if grad_mode.enabled:
        if len(vjps) != len(inputs):  # (zip's strict=True would cost four times this check)
            raise TypeError(f"record('{op}'): got {len(vjps)} gradient functions for {len(inputs)} "
                            "inputs; pass one per input (None for an input that gets no gradient)")
        try:
            for t, vjp in zip(inputs, vjps):  # noqa: B905 - lengths checked above
                if t._requires_grad and vjp is not None:
                    if t._base is not None and t._view_version != t._versions[0]:
                        refresh_view(t)  # its base changed in place since: a view of it as it is now
                    array = t._data
                    edges.append((t, vjp, t._backward, array.shape, array.dtype))
        except AttributeError:
            _raise_not_tensors(op, inputs)
        if _complex_values and edges:  # (only once a complex tensor was made: see `_conjugating`)
            edges, graph_vjp = _conjugating(edges, graph_vjp, data)
    if not edges:
        out.parents = ()
        out.op = ""
        out._backward = None
        out._requires_grad = False
        out._seq = None
        return out
    checks = []  # a loop, not a comprehension: on Python 3.11 that would cost a function call
    if saved is CROSSED:  # the gradient an input wants reads the other input: both, or the other one
        saved = inputs if len(edges) == 2 else (inputs[1] if edges[0][0] is inputs[0] else inputs[0],)
    for t in inputs if saved is None else saved:
        checks.append((t._versions, t._versions[0]))
    if saves_output:
        checks.append((out._versions, out._versions[0]))
    out._requires_grad = True
    out.parents = inputs
    out.op = op
    out._seq = seq = next(_creation_numbers)  # made after its inputs: see engine.creation_order
    # The node's backward is `_backward` with what it needs bound to it (a partial, not a closure:
    # it costs two objects per node instead of six).
    out._backward = partial(_backward, op, inputs, checks, edges, seq, graph_vjp)
    return out


def _backward(op: str, inputs: tuple[Tensor, ...], checks: list, edges: list, seq: int,
              graph_vjp: GraphVJP | None, grad: np.ndarray) -> None:
    """One node's step of the backward pass: the chain rule along each edge into its input.

    First, refuse stale data (an input the VJPs read was changed in place since). Then, for each
    input that wants a gradient, `vjp(grad)` summed back to its shape, added to its `.grad`.
    (`graph_vjp` is for `higher_order`'s pass, which reads it from this partial's arguments.)
    """
    for versions, version in checks:
        if versions[0] != version:
            _raise_modified(op, version, versions[0])
    for t, vjp, history, shape, dtype in edges:
        g = vjp(grad)
        if type(g) is not np.ndarray or g.shape != shape or g.dtype is not dtype:
            if getattr(g, "dtype", dtype).kind == "c" and dtype.kind != "c":  # a real input, a complex result
                g = _into_real(vjp, grad)
            g = _conform(g, shape, dtype, op, _position(t, inputs))
        if t._backward is not history:  # t was changed in place since this op used it
            t = _holder_of(history, t, op, seq)
        if t._grad is None:
            # (g has t's dtype already: `_conform` saw to that.)
            if history is None and (g is grad or g.base is not None or g.strides != t._data.strides):
                g = _leaf_grad(g, t._data)
            t._grad = g
        else:
            # A new array rather than +=: numpy's in-place add costs three times more on
            # small arrays, and nothing else holds the old one.
            total = t._grad + g
            if type(total) is not np.ndarray and isinstance(total, np.generic):  # 0-d + 0-d
                total = np.asarray(total)  # (the type test first: isinstance cost 0.5% of a small step)
            t._grad = total


# Complex gradients follow PyTorch's convention (conjugate Wirtinger calculus): an op's input z
# gets conj(df/dz) * grad, where a VJP written as for real numbers gives df/dz * grad. So the edge
# into a complex input runs conj(vjp(conj(grad))) (`_conjugated`), and the edge into a real input
# of an op with a complex result takes the real part of the same (`_backward`'s slow path). An op
# linear with real coefficients (sum, indexing, reshape) is the same either way; the few ops that
# are not complex-differentiable (imag, angle, conj) write their VJP so that this gives PyTorch's.
# An op's graph VJP is written in the same form and conjugated the same way, with tensor ops
# (`higher_order.complex_graph`), so complex gradients can be differentiated again.
#
# Real programs never pay for it: `record` looks at the inputs' dtypes only once a complex tensor
# has been made in this process (`note_dtype`, called where values come in: the
# factories, `from_numpy`, casts, numpy operands, `.data =`). Looking always cost 1% of a small step.


_complex_values = False  # whether a complex tensor was made in this process


def note_dtype(dtype: np.dtype) -> None:
    """Where values come in: a complex `dtype` makes `record` conjugate the VJPs into complex inputs
    from now on (see above)."""
    global _complex_values
    if dtype.kind == "c":
        _complex_values = True


def _conjugating(edges: list, graph_vjp: GraphVJP | None, out: Any) -> tuple[list, GraphVJP | None]:
    """`record`'s edges, with the VJPs into complex inputs in PyTorch's convention, and its graph
    VJP likewise when complex numbers are involved (`higher_order.complex_graph`: None for an op
    whose graph VJP is for real numbers only, which is then differentiable once)."""
    if not any(dtype.kind == "c" for *_, dtype in edges):
        if out.dtype.kind != "c" or graph_vjp is None:
            return edges, graph_vjp
        return edges, _conjugated_graph(graph_vjp)
    return [(t, partial(_conjugated, vjp) if dtype.kind == "c" else vjp, history, shape, dtype)
            for t, vjp, history, shape, dtype in edges], graph_vjp and _conjugated_graph(graph_vjp)


def _conjugated_graph(graph_vjp: GraphVJP) -> GraphVJP | None:
    from tensorgrad.higher_order import complex_graph  # (it imports this module)

    return complex_graph(graph_vjp)


def _conjugated(vjp: VJP, grad: np.ndarray) -> np.ndarray:
    """The VJP into a complex input, in PyTorch's convention (see above)."""
    return np.conj(vjp(_conj(grad)))


def _into_real(vjp: VJP, grad: np.ndarray) -> np.ndarray:
    """The gradient of a real input of an op with a complex result: the real part of PyTorch's
    conjugated form (see above)."""
    return np.conj(vjp(_conj(grad))).real


def _conj(grad: np.ndarray) -> np.ndarray:
    """conj(grad), still an array when grad is 0-d (numpy's ufuncs give a scalar there, and a VJP
    that writes into a copy of its gradient, as index_copy's does, needs an array)."""
    conjugate = np.conj(grad)
    return np.asarray(conjugate) if isinstance(conjugate, np.generic) else conjugate


def edge_gradient(vjp: VJP, grad: np.ndarray, dtype: np.dtype) -> Any:
    """vjp(grad) for an input of `dtype`, or `_into_real`'s where the input is real and the
    gradient complex (for `higher_order`'s pass; `_backward` runs the same test inline)."""
    g = vjp(grad)
    return _into_real(vjp, grad) if getattr(g, "dtype", dtype).kind == "c" and dtype.kind != "c" else g


def _conform(g: Any, shape: tuple[int, ...], dtype: np.dtype, op: str, index: int) -> np.ndarray:
    """A VJP's result as the gradient of input `index`: an array of that input's shape and dtype.

    A result of the output's broadcast shape is summed back (`unbroadcast`); anything else that
    does not fit is the op's bug, reported with the op and the input rather than stored.
    """
    if isinstance(g, np.generic):
        g = np.asarray(g)
    elif not is_array(g):
        raise TypeError(f"the gradient function of '{op}' for input {index} returned "
                        f"{type(g).__name__}; it must return a numpy array")
    if g.shape != shape:
        try:
            reduced = unbroadcast(g, shape)
        except (IndexError, ValueError):
            reduced = None
        if reduced is None or reduced.shape != shape:
            raise RuntimeError(f"the gradient function of '{op}' returned an invalid gradient for "
                               f"input {index}: got shape {g.shape}, but expected a shape that sums "
                               f"back to the input's shape {shape}")
        g = reduced
    return g if g.dtype == dtype else g.astype(dtype)


def _position(t: Tensor, inputs: tuple[Tensor, ...]) -> int:
    """Which input t is (by identity: tensors compare elementwise), for error messages."""
    return next(i for i, x in enumerate(inputs) if x is t)


def _raise_not_tensors(op: str, inputs: tuple) -> None:
    kinds = ", ".join(type(t).__name__ for t in inputs)
    raise TypeError(f"record('{op}'): inputs must be a tuple of Tensors, got ({kinds})")


def _leaf_grad(g: np.ndarray, leaf: np.ndarray) -> np.ndarray:
    """A copy of `g` that a leaf can keep as its `grad`: its own memory, in the leaf's dtype and layout.

    A leaf keeps its gradient, so it must not share it: a VJP may hand back its input or a view
    (shared with another node, perhaps read-only). The leaf's layout (PyTorch's rule too) keeps
    an optimizer's `p -= lr * p.grad` walking both arrays in the same order, which is several
    times faster than mixing a row-major array with a column-major one.
    """
    if g.strides == leaf.strides and g.dtype == leaf.dtype:
        return g.copy(order="K")  # the same layout already: the cheapest copy
    own = np.empty_like(leaf)  # the leaf's dtype and memory order
    own[...] = g
    return own


def history_moved(history: Any, holder: Tensor) -> None:
    """Note that `holder` now holds `history`, the graph place of a tensor an in-place op rewired.

    An op that used the tensor before gets its gradient there (`_holder_of`), as in PyTorch,
    where edges point at the old node. The note is a weak reference kept on the history itself
    (a partial): the holder already refers to the history, so a strong one would be a cycle.
    """
    history.moved_to = weakref.ref(holder)


def _holder_of(history: Any, t: Tensor, op: str, seq: int) -> Tensor:
    """The node holding `history`, t's place in the graph when op `op` used it (see `history_moved`)."""
    moved_to = getattr(history, "moved_to", None)
    holder = None if moved_to is None else moved_to()
    if holder is None:
        _raise_changed_history(t, op, seq)
    return holder


def is_custom_function_view(t: Tensor) -> bool:
    """Whether t is an output of a custom `Function` that shares an input's memory (`function.py`)."""
    return getattr(t._backward, "custom_function_view", False)


def refresh_view(view: Tensor) -> None:
    """Make a view whose base changed in place since it was made the view of the base as it is now.

    Its values are the base's current ones (they share memory), so its gradient must go to the
    base's current history, as PyTorch regenerates a view's `grad_fn`. The old history stays, in a
    node of its own, for the ops that used the view before.
    """
    from tensorgrad.inplace import view_of_base  # (inplace imports this module)

    if is_custom_function_view(view):
        raise RuntimeError(
            f"a view made by the custom Function {view.op} was used after its base (or another view of "
            "that base) was changed in place; its gradient can't be rebuilt. clone() the Function's "
            "output, or change the base after using the output"
        )
    view_of_base(view, "as_strided")


def _raise_modified(op: str, version: int, now: int) -> None:
    raise InplaceModifiedError(
        f"one of the tensors needed to compute the gradient of '{op}' was modified by an "
        f"in-place operation (version {version} became {now}); clone it before changing it, "
        "or change it after backward()"
    )


def _raise_changed_history(t: Tensor, op: str, seq: int) -> None:
    # An input numbered after the op's output was changed in place since (its new history is
    # newer): say so, even if this pass has freed that history already.
    if engine.is_freed(t) and (t._seq is None or t._seq < seq):
        raise GraphFreedError(
            "Trying to backward through the graph a second time: an earlier backward() freed part "
            "of it. Pass retain_graph=True to the first backward() to keep it."
        )
    raise InplaceModifiedError(
        f"an input of '{op}' was modified by an in-place operation after '{op}' used it, so its "
        "gradient would be wrong; clone it before changing it in place"
    )


# Last, so that whichever module is imported first, the names above exist when tensor.py's op
# modules import them.
from tensorgrad.tensor import Tensor, _new_tensor  # noqa: E402

# --- gradient hooks: `t.register_hook(fn)` ------------------------------------------------------
# Kept beside the tensors, not in them: a graph without hooks pays nothing (the pass is handed
# `on_grad` only while some tensor has one). Keyed by id, with a weak reference that removes the
# entry when the tensor goes (a WeakKeyDictionary would compare tensors with their elementwise ==).
_grad_hooks: dict[int, tuple[weakref.ref, dict]] = {}


def _hooks_of(t: Any) -> dict | None:
    entry = _grad_hooks.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


class RemovableHandle:
    """What `register_hook` returns: `handle.remove()` takes the hook off again."""

    def __init__(self, owner: int, hooks: dict, key: int) -> None:
        self._owner, self._hooks, self._key = owner, hooks, key

    def remove(self) -> None:
        """Take the hook off (a second call does nothing)."""
        self._hooks.pop(self._key, None)
        entry = _grad_hooks.get(self._owner)
        if not self._hooks and entry is not None and entry[1] is self._hooks:
            del _grad_hooks[self._owner]  # no hooks left: passes are hook-free again


_hook_numbers = itertools.count()


def register_hook(t: Any, hook: Callable[[Any], Any], *, first: bool = False) -> RemovableHandle:
    """Call `hook(grad)` with t's gradient each time a backward pass computes it; a tensor it
    returns replaces that gradient (None keeps it). For a leaf, the gradient of the whole pass,
    before it is added to `.grad`; for an inner tensor, before it flows on to its inputs. Hooks run
    in the order they were registered; `first` puts this one before those already there."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    owner = id(t)
    hooks = _hooks_of(t)
    if hooks is None:
        hooks = {}
        _grad_hooks[owner] = (weakref.ref(t, lambda _: _grad_hooks.pop(owner, None)), hooks)
    key = next(_hook_numbers)
    if first:
        earlier = list(hooks.items())
        hooks.clear()
        hooks[key] = hook
        hooks.update(earlier)
    else:
        hooks[key] = hook
        for k in [k for k, h in hooks.items() if getattr(h, "after_tensor_hooks", False)]:
            hooks[k] = hooks.pop(k)  # a grad_fn's pre-hooks run after the tensor's hooks (`graph`)
    return RemovableHandle(owner, hooks, key)


# Post-accumulate hooks (`register_post_accumulate_grad_hook`): called with the leaf itself once a
# pass has added its gradient to `.grad`, the place an optimizer step can run inside backward.
_post_accumulate_hooks: dict[int, tuple[weakref.ref, dict]] = {}


def register_post_accumulate_grad_hook(t: Any, hook: Callable[[Any], None]) -> RemovableHandle:
    """Call `hook(t)` each time a backward pass has accumulated t's gradient into `t.grad` (not
    for `autograd.grad`, which accumulates nothing). Leaves only, as in PyTorch."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._backward is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    owner = id(t)
    entry = _post_accumulate_hooks.get(owner)
    if entry is None or entry[0]() is not t:
        def forget(_: Any) -> None:
            _post_accumulate_hooks.pop(owner, None)
            _update_watch()
        entry = (weakref.ref(t, forget), {})
        _post_accumulate_hooks[owner] = entry
    key = next(_hook_numbers)
    entry[1][key] = hook
    _update_watch()
    return _PostHookHandle(owner, entry[1], key)


class _PostHookHandle(RemovableHandle):
    """`remove()` takes a post-accumulate hook off (the pass is hook-free again when none is left)."""

    def remove(self) -> None:
        self._hooks.pop(self._key, None)
        entry = _post_accumulate_hooks.get(self._owner)
        if not self._hooks and entry is not None and entry[1] is self._hooks:
            del _post_accumulate_hooks[self._owner]
        _update_watch()


def _post_hooks_of(t: Any) -> dict | None:
    entry = _post_accumulate_hooks.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t and entry[1] else None


def run_backward(root: Any, seed: Any, retain_graph: bool) -> None:
    """engine.backward from `root`, with the tensors' gradient hooks run where there are any, and
    each step checked for nan while anomaly detection is on.

    A leaf with hooks collects this pass's gradient apart from what its `.grad` held before, so
    its hooks see exactly this pass's sum; it is added to the old `.grad` after them.
    """
    if root._base is not None and root._view_version != root._versions[0] and root._requires_grad:
        refresh_view(root)  # a view whose base changed since: its gradient goes to the base as it is
    if not _grad_hooks and not _watched:
        engine.backward(root, seed, retain_graph)
        return
    if _quiet_floating_point:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            _watched_backward(root, seed, retain_graph)
    else:
        _watched_backward(root, seed, retain_graph)


def _watched_backward(root: Any, seed: Any, retain_graph: bool) -> None:
    """run_backward's pass with gradient hooks, post-accumulate hooks or anomaly detection's check."""
    check = _NanCheck() if _checking_nan else None
    if not _grad_hooks and not _post_accumulate_hooks:
        if check is None:
            engine.backward(root, seed, retain_graph)
        else:
            engine.backward(root, seed, retain_graph, on_grad=check.on_grad, on_step=check.on_step)
        return
    with engine._backward_lock:  # (reentrant) the leaves' set-aside gradients are this pass's alone
        alive = [ref() for ref, hooks in list(_grad_hooks.values()) if hooks]
        alive += [ref() for ref, _ in list(_post_accumulate_hooks.values())]
        leaves = list({id(t): (t, t._grad) for t in alive if t is not None and t._backward is None}.values())
        for leaf, _ in leaves:
            leaf._grad = None
        on_grad, on_step = hooked_grad, None
        if check is not None:
            check.with_hooks = True
            on_grad, on_step = check.on_grad, check.on_step
        try:
            engine.backward(root, seed, retain_graph, on_grad=on_grad, on_step=on_step)
        except BaseException:
            for leaf, before in leaves:  # what the pass reached is kept, without the hooks
                leaf._grad = _added(before, leaf._grad)
            raise
        reached = []
        for leaf, before in leaves:
            total = leaf._grad
            leaf._grad = _added(before, None if total is None else hooked_grad(leaf, total))
            if total is not None:
                reached.append(leaf)
        if _accumulating.on:  # after every leaf has its gradient, so a hook that raises loses none
            for leaf in reached:
                _run_post_hooks(leaf)


def _run_post_hooks(leaf: Any) -> None:
    """The leaf's post-accumulate hooks, in the order they were registered; each returns None."""
    for hook in list((_post_hooks_of(leaf) or {}).values()):
        result = hook(leaf)
        if result is not None:
            raise TypeError(f"post accumulate grad hook: expected the hook to return None, but it returned "
                            f"{type(result).__name__!r}")


class _Accumulating(threading.local):
    """False while `autograd.grad` runs its passes: they accumulate into no `.grad`, so no
    post-accumulate hook fires (per thread, as grad mode)."""

    on = True


_accumulating = _Accumulating()


# --- anomaly detection: which op's backward made the first nan -------------------------------------


class _AnomalyMode:
    """The process-wide switch (PyTorch's is global too, not per thread)."""

    enabled = False
    check_nan = True


_anomaly = _AnomalyMode()
# Both switches on, as one module global (an attribute read in the usual backward pass cost about
# 400 instructions a training step, measured under callgrind).
_checking_nan = False
# Whether a pass must take the watched path for another reason than tensor hooks: anomaly
# detection's check, or a post-accumulate hook. One global read is all a plain pass pays.
_watched = False


# Whether backward passes make infs and nans without NumPy's warnings (see quiet_floating_point_errors).
_quiet_floating_point = False


def _update_watch() -> None:
    global _watched
    _watched = _checking_nan or bool(_post_accumulate_hooks) or _quiet_floating_point


def quiet_floating_point_errors() -> None:
    """From now on, `backward` makes infs and nans without NumPy's RuntimeWarnings ("overflow
    encountered in matmul"), as PyTorch's makes them silently. `GradScaler` turns it on: in a
    mixed-precision loop the backward pass overflows float16 on purpose whenever the scaler tries
    a larger scale (it skips that step), and a warning at each would drown the training's output."""
    global _quiet_floating_point
    _quiet_floating_point = True
    _update_watch()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (`detect_anomaly`, `set_detect_anomaly`)."""
    return _anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks each backward step for nan."""
    return _anomaly.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for the whole process."""
    global _checking_nan
    _anomaly.enabled, _anomaly.check_nan = bool(enabled), bool(check_nan)
    _checking_nan = _anomaly.enabled and _anomaly.check_nan
    _update_watch()


class set_detect_anomaly:  # noqa: N801 - PyTorch's lower-case name
    """Anomaly detection on or off (`mode`) from here, back as it was at the end of a `with` block.

    While it is on, each backward step checks the gradients the op sent to its inputs and raises
    RuntimeError at the first op whose backward made a nan ("Function 'sqrt' returned nan values
    in its 0th output"), instead of letting the nan spread to every parameter. It costs one pass
    over each gradient: for debugging only. (PyTorch also prints where the op was called in the
    forward; tensorgrad names the op and its shapes.)
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._before = (_anomaly.enabled, _anomaly.check_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: Any) -> None:
        set_anomaly_enabled(*self._before)


class detect_anomaly:  # noqa: N801 - PyTorch's lower-case name
    """`with detect_anomaly():` turns on anomaly detection inside the block (see
    `set_detect_anomaly`), with PyTorch's warning that it slows the backward pass."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should "
                      "only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self._before = (_anomaly.enabled, _anomaly.check_nan)
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc_info: Any) -> None:
        set_anomaly_enabled(*self._before)


class _NanCheck:
    """engine.backward's `on_grad` and `on_step` for anomaly detection: after each step, a parent
    whose gradient holds nan now, and did not before the step, got it from this op."""

    def __init__(self) -> None:
        self.with_hooks = False  # run the tensors' gradient hooks too (engine.backward has one on_grad)
        self.before: dict[int, list[bool]] = {}

    def on_grad(self, node: Any, grad: Any) -> Any:
        if self.with_hooks:
            grad = hooked_grad(node, grad)
        self.before[id(node)] = [_has_nan(p._grad) for p in node.parents]
        return grad

    def on_step(self, node: Any, grad: Any) -> None:
        before = self.before.pop(id(node))
        for i, (parent, had_nan) in enumerate(zip(node.parents, before, strict=True)):
            if not had_nan and _has_nan(parent._grad):
                shapes = ", ".join(str(tuple(p.shape)) for p in node.parents)
                raise RuntimeError(f"Function '{node.op}' returned nan values in its {i}th output: the "
                                   f"gradient it sent to its input {i} (of shape {tuple(parent.shape)}) "
                                   f"holds nan; the op's inputs have shapes {shapes} and its incoming "
                                   f"gradient {'holds' if _has_nan(grad) else 'has no'} nan")


def _has_nan(grad: Any) -> bool:
    return grad is not None and getattr(grad, "dtype", None) is not None and grad.dtype.kind in "fc" \
        and bool(np.isnan(grad).any())


def _added(before: Any, new: Any) -> Any:
    """A leaf's gradient from before the pass plus this pass's (either may be None)."""
    if new is None:
        return before
    if before is None:
        return new
    total = before + new
    return np.asarray(total) if isinstance(total, np.generic) else total  # (0-d + 0-d is a scalar)


def hooked_grad(t: Any, grad: Any) -> Any:
    """`grad` passed through t's hooks in the order they were registered (itself if none)."""
    hooks = _hooks_of(t)
    if not hooks:
        return grad
    from tensorgrad.tensor import Tensor, new_leaf  # (tensor imports this module)

    for hook in list(hooks.values()):
        out = hook(new_leaf(grad))
        if out is None:
            continue
        out = out.data if isinstance(out, Tensor) else out
        if not is_array(out):
            raise TypeError(f"hook: a gradient hook must return a tensor or None, got {type(out).__name__}")
        if out.shape != grad.shape or out.dtype != grad.dtype:  # PyTorch refuses either change
            raise RuntimeError(f"hook: a gradient hook changed the gradient's shape or dtype: it was "
                               f"{grad.shape} {grad.dtype}, the hook returned {out.shape} {out.dtype}")
        grad = out
    return grad


# --- tg.autograd.grad: gradients returned, not accumulated ---------------------------------------


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple[Any, ...]:
    """The gradients of `outputs` (a tensor or a sequence; each times its `grad_outputs`, which a
    scalar output may leave out) with respect to `inputs`, as a tuple of tensors, one per input.
    As `torch.autograd.grad`: no `.grad` anywhere changes; an input the outputs do not depend on
    is an error unless `allow_unused` (then None, or zeros with `materialize_grads`). The graph
    is freed unless `retain_graph`.

    With `create_graph=True` the gradients are themselves graph nodes, so they can be
    differentiated again (a gradient penalty, a Hessian-vector product); the graph is then kept
    unless `retain_graph=False`. See `tensorgrad.higher_order`.

    With `is_grads_batched`, the first dimension of every `grad_outputs` entry is a batch: the
    result holds one gradient per batch entry, stacked along a new first dimension (rows of a
    Jacobian at once, in PyTorch with vmap; here one pass per row)."""
    from tensorgrad.tensor import Tensor, new_leaf  # (tensor imports this module)

    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not inputs:
        raise RuntimeError("autograd.grad: the `inputs` argument can't be empty")
    if materialize_grads and allow_unused is False:
        raise ValueError("autograd.grad: expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    seeds = _grad_seeds(outputs, grad_outputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t._requires_grad:
            raise RuntimeError(f"autograd.grad: input {i} does not require grad")
    if create_graph:
        return _grad_with_graph(outputs, seeds, grad_outputs, inputs, retain_graph, allow_unused,
                                materialize_grads)
    captured: list[Any] = [None] * len(inputs)
    # As PyTorch's: a gradient is returned after the tensor's hooks, except an inner tensor's whose
    # op must run on towards another input: that one is returned before them.
    handles = [register_hook(t, _capture(captured, i), first=_leads_to_another(t, inputs))
               for i, t in enumerate(inputs)]
    saved = _saved_gradients(outputs)
    accumulating, _accumulating.on = _accumulating.on, False
    try:
        for k, (out, seed) in enumerate(zip(outputs, seeds, strict=True)):
            keep = bool(retain_graph) or k < len(outputs) - 1
            if out._backward is None:  # a leaf output: its gradient is the seed itself
                hooked_grad(out, seed)
            else:
                run_backward(out, seed, keep)
    finally:
        _accumulating.on = accumulating
        for handle in handles:
            handle.remove()
        for node, value in saved:
            node._grad = value
    return tuple(_as_result(t, g, allow_unused, materialize_grads, i, new_leaf)
                 for i, (t, g) in enumerate(zip(inputs, captured, strict=True)))


def _batched_grad(outputs: list, inputs: tuple, grad_outputs: Any, retain_graph: bool | None,
                  create_graph: bool, allow_unused: bool | None, materialize: bool) -> tuple[Any, ...]:
    """`grad(..., is_grads_batched=True)`: one `grad` per entry of grad_outputs' first dimension, stacked."""
    from tensorgrad import stack  # (tensorgrad imports this module)

    given = _given_seeds(outputs, grad_outputs)
    if any(g is None for g in given):
        raise RuntimeError("autograd.grad: is_grads_batched=True needs a grad_outputs tensor for every "
                           "output")
    sizes = {len(g) for g in given}
    if len(sizes) != 1:
        raise RuntimeError(f"autograd.grad: with is_grads_batched=True every grad_outputs entry must have "
                           f"the same batch size (first dimension), got sizes {sorted(sizes)}")
    (batch,) = sizes
    if batch == 0:
        raise IndexError("autograd.grad: is_grads_batched=True needs a batch of at least one grad_outputs "
                         "entry")
    rows = [grad(outputs, inputs, [g[b] for g in given], retain_graph=bool(retain_graph) or b < batch - 1,
                 create_graph=create_graph, allow_unused=allow_unused, materialize_grads=materialize)
            for b in range(batch)]
    return tuple(None if column[0] is None else stack(column) for column in zip(*rows, strict=True))


def _grad_with_graph(outputs: list, seeds: list, grad_outputs: Any, inputs: tuple, retain_graph: bool | None,
                     allow_unused: bool | None, materialize: bool) -> tuple[Any, ...]:
    """`grad(..., create_graph=True)`: the gradients as tensors with a graph (`higher_order`). A
    grad_outputs tensor that requires grad stays in the graph, as in PyTorch."""
    from tensorgrad import higher_order
    from tensorgrad.tensor import Tensor, new_leaf  # (tensor imports this module)

    given = _given_seeds(outputs, grad_outputs)
    seed_tensors = [(g if g.dtype == seed.dtype else g.to(seed.dtype))
                    if isinstance(g, Tensor) and g._requires_grad else new_leaf(seed)
                    for g, seed in zip(given, seeds, strict=True)]
    after_hooks = {id(t) for t in inputs if t._backward is not None and not _leads_to_another(t, inputs)}
    grads = higher_order.graph_gradients(outputs, seed_tensors, retain_graph is not False, after_hooks)
    found = [higher_order.leaf_gradient(t, grads) for t in inputs]
    return tuple(g if g is not None else _as_result(t, None, allow_unused, materialize, i, new_leaf)
                 for i, (t, g) in enumerate(zip(inputs, found, strict=True)))


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """`torch.autograd.backward`: backward from several roots at once, their gradients summed into
    the leaves' `.grad` (each root times its `grad_tensors` entry, which a scalar may leave out).
    With `inputs`, only those tensors' `.grad` change (an inner tensor among them gets one too)."""
    from tensorgrad.tensor import Tensor  # (tensor imports this module)

    if create_graph:
        raise NotImplementedError("autograd.backward: create_graph=True is not supported: a leaf's .grad "
                                  "is a numpy array in tensorgrad, which can't carry a graph; "
                                  "tg.autograd.grad(outputs, inputs, create_graph=True) returns the "
                                  "gradients as tensors with their graph")
    roots = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("autograd.backward: inputs, when given, can't be empty")
        grads = grad(roots, inputs, grad_tensors, retain_graph, allow_unused=True)
        for t, g in zip(inputs, grads, strict=True):
            if g is not None:
                t.grad = g.data if t._grad is None else t._grad + g.data
        return
    seeds = _grad_seeds(roots, grad_tensors, "autograd.backward")
    for k, (root, seed) in enumerate(zip(roots, seeds, strict=True)):
        root.backward(seed, retain_graph=bool(retain_graph) or k < len(roots) - 1)


def _grad_seeds(outputs: list, grad_outputs: Any, op: str = "autograd.grad") -> list:
    """One seed per output: the given grad_outputs (tensors or arrays), or 1 for a scalar output."""
    given = _given_seeds(outputs, grad_outputs)
    if len(given) != len(outputs):
        raise RuntimeError(f"{op}: grad_outputs has {len(given)} entries, but there are "
                           f"{len(outputs)} outputs")
    seeds = []
    for out, seed in zip(outputs, given, strict=True):
        if not out._requires_grad:
            raise RuntimeError(f"{op}: element of the differentiated tensors does not require grad "
                               "and does not have a grad_fn")
        seeds.append(out._seed(seed))
    return seeds


def _given_seeds(outputs: list, grad_outputs: Any) -> list:
    """grad_outputs as a list with one entry per output (None where none is given)."""
    if grad_outputs is None:
        return [None] * len(outputs)
    return list(grad_outputs) if isinstance(grad_outputs, list | tuple) else [grad_outputs]


def _leads_to_another(t: Any, inputs: tuple) -> bool:
    """Whether t is an inner tensor with another of `inputs` in the graph under it."""
    if t._backward is None or len(inputs) == 1:
        return False
    others = {id(x) for x in inputs if x is not t}
    return any(id(p) in others for node in engine.creation_order(t) for p in node.parents)


def _capture(captured: list, i: int) -> Callable[[Any], None]:
    def hook(g: Any) -> None:
        captured[i] = g.data if captured[i] is None else captured[i] + g.data
    return hook


def _saved_gradients(outputs: list) -> list[tuple[Any, Any]]:
    """(node, its .grad) for every leaf and gradient-keeping node under the outputs: what the
    passes must leave as they found it."""
    saved, seen = [], set()
    for out in outputs:
        for node in [out, *engine.creation_order(out)]:
            for t in (node, *node.parents):
                if id(t) not in seen and (t._backward is None or t._keeps_grad):
                    seen.add(id(t))
                    saved.append((t, t._grad))
    return saved


def _as_result(t: Any, g: Any, allow_unused: bool | None, materialize: bool, i: int, new_leaf: Any) -> Any:
    if g is not None:
        return new_leaf(g)
    if materialize:
        return new_leaf(np.zeros_like(t._data))  # (numpy dispatches: zeros where the data lives)
    if not allow_unused:
        raise RuntimeError(f"autograd.grad: input {i} appears to not have been used in the graph; set "
                           "allow_unused=True if this is the desired behavior")
    return None



# --- tg.autograd.Function and tg.autograd.functional (tensorgrad/function.py) ----------------------
# Last: function.py builds on the names above.
from tensorgrad import function  # noqa: E402
from tensorgrad.function import Function, FunctionCtx, functional, once_differentiable  # noqa: E402

__all__ += ["Function", "FunctionCtx", "once_differentiable", "functional", "function"]

# `t.grad_fn`'s node objects, as `torch.autograd.graph` (tensorgrad/graph.py). This module is
# not a package, so the submodule is registered by its dotted name for PyTorch's import form,
# `import tensorgrad.autograd.graph`.
import sys as _sys  # noqa: E402

from tensorgrad import graph  # noqa: E402

_sys.modules[f"{__name__}.graph"] = graph
__all__ += ["graph"]

# The grad-mode switches and gradcheck, where PyTorch code also finds them (`torch.autograd.no_grad`).
from scalargrad.engine import enable_grad, no_grad, set_grad_enabled  # noqa: E402
from tensorgrad.compat import Variable, inference_mode  # noqa: E402
from tensorgrad.gradcheck import gradcheck, gradgradcheck  # noqa: E402

__all__ += ["enable_grad", "no_grad", "set_grad_enabled", "inference_mode", "gradcheck", "gradgradcheck",
            "Variable"]

# Forward-mode AD with dual tensors (`torch.autograd.forward_ad`, tensorgrad/forward_ad.py), registered
# by its dotted name as `graph` is: `import tensorgrad.autograd.forward_ad as fwAD`.
from tensorgrad import forward_ad  # noqa: E402

_sys.modules[f"{__name__}.forward_ad"] = forward_ad
__all__ += ["forward_ad"]
