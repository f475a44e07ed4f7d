"""In-place ops: `add_`, `mul_`, `zero_`, `fill_`, `copy_`, `t[key] = value`, `+=` and friends.

Tutorial chapter 6. Out of the graph (under `no_grad()`, the optimizer's `p -= lr * p.grad`) an
in-place op is one numpy call writing into the tensor's own memory. In the graph, the tensor
becomes the output of the out-of-place op (`apply_inplace`): its old values move to a copy that
keeps its place in the graph, and the version counter goes up, so a backward pass that saved the
old values raises instead of using the new ones. As in PyTorch's derivatives table, no in-place
op has a gradient formula of its own: each is its out-of-place op, written back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from scalargrad.engine import grad_mode
from tensorgrad.autograd import bump_version, is_view, record
from tensorgrad.checks import ShapeError
from tensorgrad.device import writeable
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["arithmetic_inplace", "apply_inplace", "fill", "copy"]


def arithmetic_inplace(x: Tensor, ufunc: np.ufunc, op: Callable[..., Tensor], other: Any,
                       name: str) -> Tensor:
    """x = op(x, other) in place; outside the graph, one numpy call that writes into x itself.

    An optimizer's `p -= lr * p.grad` takes this path under `no_grad()`: no temporary array, no
    copy. Inside the graph it is `apply_inplace`.
    """
    if grad_mode.enabled and (x._requires_grad or (isinstance(other, Tensor) and other._requires_grad)):
        return apply_inplace(x, op, other, name=name)
    data = x.data
    # (numpy's flag read inline: an optimizer runs this once per parameter per step)
    if not (data.flags.writeable if type(data) is np.ndarray else writeable(data)):
        _raise_read_only(name)
    values = other.data if isinstance(other, Tensor) else other
    try:
        ufunc(data, values, out=data, casting="same_kind")
    except ValueError:
        raise ShapeError(
            f"{name}: an operand of shape {np.shape(values)} can't be broadcast to the shape {x.shape} "
            "of the tensor changed in place"
        ) from None
    except TypeError:
        raise TypeError(
            f"{name}: a result of dtype {np.result_type(x.data, values)} can't be stored in a "
            f"{x.dtype} tensor"
        ) from None
    bump_version(x)
    return x


def apply_inplace(x: Tensor, op: Callable[..., Tensor], *args: Any, name: str) -> Tensor:
    """Write `op(x, *args)` into x's storage and make x the output of that op in the graph.

    The storage's version counter goes up, so a backward pass that saved the old values
    raises instead of using the new ones. Outside `no_grad`, a leaf that requires grad can't
    be changed in place: its gradient would no longer describe the values it holds.
    """
    recording = grad_mode.enabled and (
        x._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args)
    )
    if not recording:
        _write(x, op(x, *args).data, name)
        return x
    if x._requires_grad and x._backward is None:
        raise RuntimeError(
            f"{name}: a leaf tensor that requires grad can't be changed in place outside "
            "no_grad(); wrap the update in `with tg.no_grad():`"
        )
    if is_view(x):
        raise RuntimeError(
            f"{name}: in-place change of a view ('{x.op}') of a tensor in the graph is not "
            "supported; apply the op out of place (y = y + ...) or clone() the view first"
        )
    before = _detached_copy_with_history(x)
    result = op(before, *args)
    _write(x, result.data, name)
    x.parents, x._backward, x._requires_grad = result.parents, result._backward, True
    x._seq = result._seq  # x is now the newest node: it comes after `before` in creation order
    x.op, x.grad = name, None
    return x


def _detached_copy_with_history(x: Tensor) -> Tensor:
    """A node that holds x's current values (a copy) and x's place in the graph."""
    before = new_leaf(x.data.copy())
    before.parents, before._backward, before.op, before._seq = x.parents, x._backward, x.op, x._seq
    before._requires_grad, before.label = x._requires_grad, x.label
    return before


def _write(x: Tensor, values: np.ndarray, name: str) -> None:
    if not writeable(x.data):
        _raise_read_only(name)
    if values.shape != x.data.shape:
        raise ShapeError(
            f"{name}: the result has shape {values.shape} but the tensor changed in place has "
            f"shape {x.shape}; in-place ops can't change a tensor's shape"
        )
    try:
        np.copyto(x.data, values, casting="same_kind")
    except TypeError:
        raise TypeError(
            f"{name}: a result of dtype {values.dtype} can't be stored in a {x.dtype} tensor"
        ) from None
    bump_version(x)


def _raise_read_only(name: str) -> None:
    raise RuntimeError(
        f"{name}: this tensor is read-only: an expand/broadcast_to view, whose elements share "
        "memory, or a read-only numpy array; clone() it before changing it in place"
    )


def fill(x: Tensor, value: float) -> Tensor:
    """A tensor like x, every element `value`. Derivative: 0."""
    return record(np.full_like(x.data, value), "fill", (x,),
                  lambda grad: np.zeros_like(grad), saved=())


def copy(x: Tensor, src: Tensor) -> Tensor:
    """`src` broadcast to x's shape, in x's dtype. d/dx = 0, d/dsrc = 1 (summed over broadcast)."""
    try:
        out = np.broadcast_to(src.data, x.data.shape).astype(x.data.dtype)
    except ValueError:
        raise ShapeError(f"copy_: source of shape {src.shape} can't be broadcast to {x.shape}") from None
    return record(out, "copy", (x, src),
                  lambda grad: np.zeros_like(grad),
                  lambda grad: grad, saved=())
