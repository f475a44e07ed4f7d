"""Reductions: sum, mean, max, min, logsumexp, softmax and friends (tutorial chapter 7).

`dim` is an int, a tuple of ints or None (all dimensions); `keepdim` keeps reduced dimensions
with size 1. A reduction's gradient is the incoming gradient, with the reduced dimensions put
back as size 1, broadcast over the input (and, for max/min, routed to the winners).
"""

from __future__ import annotations

import math

import numpy as np

from tensorgrad import checks, elementwise, return_types
from tensorgrad.dtypes import float_dtype
from tensorgrad.tensor import Tensor, _wrap, record

Dim = int | tuple[int, ...] | None


def _axes(dim: Dim, ndim: int, op: str) -> tuple[int, ...]:
    """`dim` as a sorted tuple of non-negative axes (all axes for None); see `tensorgrad.checks`."""
    return checks.dims(dim, ndim, op)


def _nonempty(x: Tensor, axis: int, op: str) -> None:
    """Selecting one element along `axis` needs at least one there (PyTorch's IndexError)."""
    if x.data.shape and x.data.shape[axis] == 0:
        raise IndexError(f"{op}(): expected reduction dim {axis} to have non-zero size, but the tensor "
                         f"has shape {x.shape}")


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """`shape` with the reduced axes as size 1 (the output's shape with keepdim=True)."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _spread(grad: np.ndarray, kept_shape: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
    """A reduced output's gradient copied back over every element that was reduced."""
    out = np.empty(shape, dtype=grad.dtype)
    out[...] = grad.reshape(kept_shape) if kept_shape else grad
    return out


def sum(x: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Sum over `dim`. Derivative: 1 for every element."""
    shape = x.data.shape
    if dim is None and not keepdim:  # the common case, kept short: it ends most graphs
        # np.add.reduce is what ndarray.sum calls, without its Python-level wrapper.
        return record(np.add.reduce(x.data, axis=None), "sum", (x,), lambda grad: _spread(grad, (), shape),
                      saved=())
    axes = _axes(dim, x.ndim, "sum")
    kept = _kept_shape(shape, axes)
    return record(x.data.sum(axis=axes, keepdims=keepdim), "sum", (x,),
                  lambda grad: _spread(grad, kept, shape), saved=())


def mean(x: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """Mean over `dim`. Derivative: 1 / (number of elements averaged)."""
    if x.data.dtype.kind not in "fc":
        raise RuntimeError(f"mean(): needs a floating point tensor, got dtype {x.dtype}; use .float() first")
    axes = _axes(dim, x.ndim, "mean")
    shape = x.data.shape
    count = math.prod(shape[a] for a in axes)
    kept = _kept_shape(shape, axes)
    # np.add.reduce then divide: the same numbers as ndarray.mean at a third of its overhead.
    with np.errstate(invalid="ignore", divide="ignore"):  # the mean of nothing is nan, as in PyTorch
        out = np.add.reduce(x.data, axis=axes, keepdims=keepdim) / count
    return record(out, "mean", (x,),
                  lambda grad: _spread(grad / count, kept, shape), saved=())


def _extreme(x: Tensor, dim: Dim, keepdim: bool, op: str) -> Tensor:
    """amax or amin: the gradient is split evenly among the elements that tie for the extreme."""
    if x.data.size == 0 and dim is None:
        raise RuntimeError(f"{op}(): the tensor is empty (shape {x.shape}); give a dim to reduce over")
    axes = _axes(dim, x.ndim, op)
    for axis in axes:
        _nonempty(x, axis, op)
    reduce = np.max if op.endswith("max") else np.min
    kept = reduce(x.data, axis=axes, keepdims=True)

    def vjp(grad: np.ndarray) -> np.ndarray:
        winners = x.data == kept
        return grad.reshape(kept.shape) * winners / winners.sum(axis=axes, keepdims=True)

    out = kept if keepdim else np.squeeze(kept, axis=axes)
    return record(out, op, (x,), vjp)


def _extreme_along(x: Tensor, dim: int, keepdim: bool, op: str) -> tuple[Tensor, Tensor]:
    """max or min over one dim: (values, indices); the gradient goes to the element at the index."""
    axis = checks.dim(dim, x.ndim, op)
    _nonempty(x, axis, op)
    data = x.data if x.ndim else x.data.reshape(1)
    pick = np.argmax if op == "max" else np.argmin
    index = pick(data, axis=axis, keepdims=True)
    values = np.take_along_axis(data, index, axis=axis)
    shape = data.shape

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = np.zeros(shape, dtype=grad.dtype)
        np.put_along_axis(full, index, grad.reshape(index.shape), axis=axis)
        return full.reshape(x.data.shape)

    indices = index
    if not keepdim or not x.ndim:
        values, indices = np.squeeze(values, axis=axis), np.squeeze(indices, axis=axis)
    if not x.ndim:
        values, indices = values.reshape(()), indices.reshape(())
    return record(values, op, (x,), vjp, saved=()), _wrap(indices.astype(np.int64, copy=False))


def max(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:  # noqa: A001
    """The largest element; with `dim`, the named tuple `(values, indices)` along it.

    Without `dim` the gradient is split evenly among the elements that tie for the maximum; with
    `dim` it goes to the element at `indices` (the first maximum), as in PyTorch.
    """
    if isinstance(dim, Tensor):  # tg.max(a, b): the elementwise maximum, as torch.max(input, other)
        return elementwise.maximum(x, dim)
    if dim is None:
        return _extreme(x, None, False, "max")
    return return_types.max(*_extreme_along(x, dim, keepdim, "max"))


def min(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:  # noqa: A001
    """The smallest element; with `dim`, the named tuple `(values, indices)` along it.

    Without `dim` the gradient is split evenly among tied minima; with `dim` it goes to `indices`.
    """
    if isinstance(dim, Tensor):  # tg.min(a, b): the elementwise minimum
        return elementwise.minimum(x, dim)
    if dim is None:
        return _extreme(x, None, False, "min")
    return return_types.min(*_extreme_along(x, dim, keepdim, "min"))


def amax(x: Tensor, dim: Dim = (), keepdim: bool = False) -> Tensor:
    """The largest values over `dim` (every dim for `()` or None); ties share the gradient evenly."""
    return _extreme(x, None if dim == () else dim, keepdim, "amax")


def amin(x: Tensor, dim: Dim = (), keepdim: bool = False) -> Tensor:
    """The smallest values over `dim` (every dim for `()` or None); ties share the gradient evenly."""
    return _extreme(x, None if dim == () else dim, keepdim, "amin")


def _arg_extreme(x: Tensor, dim: int | None, keepdim: bool, op: str) -> Tensor:
    pick = np.argmax if op == "argmax" else np.argmin
    if dim is None:
        if x.data.size == 0:
            raise RuntimeError(f"{op}(): the tensor is empty (shape {x.shape}); give a dim to reduce over")
        index = np.asarray(pick(x.data))
        return _wrap(index.reshape((1,) * x.ndim) if keepdim else index)
    axis = checks.dim(dim, x.ndim, op)
    _nonempty(x, axis, op)
    data = x.data if x.ndim else x.data.reshape(1)
    index = pick(data, axis=axis, keepdims=keepdim and x.ndim > 0)
    return _wrap(np.asarray(index).reshape(()) if not x.ndim else np.asarray(index))


def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (of the flattened tensor when dim is None); int64, no grad."""
    return _arg_extreme(x, dim, keepdim, "argmax")


def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (of the flattened tensor when dim is None); int64, no grad."""
    return _arg_extreme(x, dim, keepdim, "argmin")


def logsumexp(x: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, shifted by the max so it stays finite for large x.

    Derivative: softmax(x) over `dim`.
    """
    axes = _axes(dim, x.ndim, "logsumexp")
    data = _floating(x)
    shift = _finite_max(data, axes)
    with np.errstate(divide="ignore"):  # a slice of only -inf (or none) gives -inf, as in PyTorch
        lse = np.log(np.exp(data - shift).sum(axis=axes, keepdims=True)) + shift
    out = lse if keepdim else np.squeeze(lse, axis=axes)
    return record(out, "logsumexp", (x,),
                  lambda grad: grad.reshape(lse.shape) * np.exp(x.data - lse))


def _finite_max(data: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The max over `axes` (kept), with infinities replaced by 0 so that x - max is never nan."""
    shift = data.max(axis=axes, keepdims=True, initial=-np.inf)
    if not np.isfinite(shift).all():  # rare: a slice of infinities (or an empty one)
        shift = np.where(np.isfinite(shift), shift, 0)
    return shift


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) over `dim`. Derivative: s * (grad - sum(grad * s))."""
    axes = _axes(dim, x.ndim, "softmax")
    data = _floating(x)
    # The plain max: an infinite element makes its whole slice nan, as in PyTorch.
    with np.errstate(invalid="ignore"):
        e = np.exp(data - data.max(axis=axes, keepdims=True, initial=-np.inf))
        out = e / e.sum(axis=axes, keepdims=True)
    return record(out, "softmax", (x,),
                  lambda grad: out * (grad - (grad * out).sum(axis=axes, keepdims=True)),
                  saved=(), saves_output=True)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    """x - logsumexp(x) over `dim`. Derivative: grad - softmax(x) * sum(grad)."""
    axes = _axes(dim, x.ndim, "log_softmax")
    data = _floating(x)
    with np.errstate(invalid="ignore", divide="ignore"):  # infinities give nan, as in PyTorch
        shifted = data - data.max(axis=axes, keepdims=True, initial=-np.inf)
        out = shifted - np.log(np.exp(shifted).sum(axis=axes, keepdims=True))
    return record(out, "log_softmax", (x,),
                  lambda grad: grad - np.exp(out) * grad.sum(axis=axes, keepdims=True),
                  saved=(), saves_output=True)


def _floating(x: Tensor) -> np.ndarray:
    """x's data in a floating dtype (an integer tensor is computed in the default float)."""
    data = x.data
    return data if data.dtype.kind in "fc" else data.astype(float_dtype(data.dtype))
