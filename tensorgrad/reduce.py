"""Reductions: sum, mean, max, min, logsumexp, softmax and friends (tutorial chapter 7).

`dim` is an int, a tuple of ints or None (all dimensions); `keepdim` keeps reduced dimensions
with size 1. A reduction's gradient is the incoming gradient, with the reduced dimensions put
back as size 1, broadcast over the input (and, for max/min, routed to the winners).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from tensorgrad.tensor import Tensor, _wrap, record

Dim = int | tuple[int, ...] | None


def _axes(dim: Dim, ndim: int, op: str) -> tuple[int, ...]:
    """`dim` as a sorted tuple of non-negative axes (all axes for None)."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int | np.integer) else tuple(dim)
    bound = builtins.max(ndim, 1)
    for d in dims:
        if not -bound <= d < bound:
            raise IndexError(f"{op}: dimension {d} is out of range for a tensor with {ndim} dimensions")
    axes = tuple(sorted({int(d) % bound for d in dims}))
    return axes if ndim else ()


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
        raise TypeError(f"mean: needs a floating point tensor, got dtype {x.dtype}; use .float() first")
    axes = _axes(dim, x.ndim, "mean")
    shape = x.data.shape
    count = math.prod(shape[a] for a in axes)
    kept = _kept_shape(shape, axes)
    # np.add.reduce then divide: the same numbers as ndarray.mean at a third of its overhead.
    return record(np.add.reduce(x.data, axis=axes, keepdims=keepdim) / count, "mean", (x,),
                  lambda grad: _spread(grad / count, kept, shape), saved=())


def _extreme(x: Tensor, dim: Dim, keepdim: bool, op: str) -> Tensor:
    """max or min: the gradient is split evenly among the elements that tie for the extreme."""
    if x.data.size == 0:
        raise ValueError(f"{op}: empty tensor has no {op}")
    axes = _axes(dim, x.ndim, op)
    reduce = np.max if op == "max" else np.min
    kept = reduce(x.data, axis=axes, keepdims=True)

    def vjp(grad: np.ndarray) -> np.ndarray:
        winners = x.data == kept
        return grad.reshape(kept.shape) * winners / winners.sum(axis=axes, keepdims=True)

    out = kept if keepdim else np.squeeze(kept, axis=axes)
    return record(out, op, (x,), vjp)


def max(x: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """The largest element over `dim` (values only: `argmax` gives the index).

    The gradient goes to the maximum; where several elements tie, it is split evenly among them.
    """
    return _extreme(x, dim, keepdim, "max")


def min(x: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """The smallest element over `dim` (values only: `argmin` gives the index).

    The gradient goes to the minimum; where several elements tie, it is split evenly among them.
    """
    return _extreme(x, dim, keepdim, "min")


def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (of the flattened tensor when dim is None); int64, no grad."""
    if dim is None:
        return _wrap(np.asarray(np.argmax(x.data)))
    axis = _axes(dim, x.ndim, "argmax")[0]
    return _wrap(np.asarray(np.argmax(x.data, axis=axis, keepdims=keepdim)))


def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (of the flattened tensor when dim is None); int64, no grad."""
    if dim is None:
        return _wrap(np.asarray(np.argmin(x.data)))
    axis = _axes(dim, x.ndim, "argmin")[0]
    return _wrap(np.asarray(np.argmin(x.data, axis=axis, keepdims=keepdim)))


def logsumexp(x: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, shifted by the max so it stays finite for large x.

    Derivative: softmax(x) over `dim`.
    """
    axes = _axes(dim, x.ndim, "logsumexp")
    shift = _finite_max(x.data, axes)
    with np.errstate(divide="ignore"):  # a slice of only -inf gives -inf, as in PyTorch
        lse = np.log(np.exp(x.data - shift).sum(axis=axes, keepdims=True)) + shift
    out = lse if keepdim else np.squeeze(lse, axis=axes)
    return record(out, "logsumexp", (x,),
                  lambda grad: grad.reshape(lse.shape) * np.exp(x.data - lse))


def _finite_max(data: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The max over `axes` (kept), with infinities replaced by 0 so that x - max is never nan."""
    shift = data.max(axis=axes, keepdims=True)
    if not np.isfinite(shift).all():  # rare: a slice of infinities (or an empty one)
        shift = np.where(np.isfinite(shift), shift, 0)
    return shift


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) over `dim`. Derivative: s * (grad - sum(grad * s))."""
    axes = _axes(dim, x.ndim, "softmax")
    e = np.exp(x.data - _finite_max(x.data, axes))
    out = e / e.sum(axis=axes, keepdims=True)
    return record(out, "softmax", (x,),
                  lambda grad: out * (grad - (grad * out).sum(axis=axes, keepdims=True)),
                  saved=(), saves_output=True)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    """x - logsumexp(x) over `dim`. Derivative: grad - softmax(x) * sum(grad)."""
    axes = _axes(dim, x.ndim, "log_softmax")
    shifted = x.data - _finite_max(x.data, axes)
    out = shifted - np.log(np.exp(shifted).sum(axis=axes, keepdims=True))
    return record(out, "log_softmax", (x,),
                  lambda grad: grad - np.exp(out) * grad.sum(axis=axes, keepdims=True),
                  saved=(), saves_output=True)
