"""Reductions: sum, mean, max, min, logsumexp, softmax and friends (tutorial chapter 7); then
PyTorch's breadth: prod, var/std, norm, all/any, the scans (cumsum, cumprod, cummax, cummin,
logcumsumexp) and sorting (sort, argsort, topk, median).

`dim` is an int, a tuple of ints or None (all dimensions); `keepdim` keeps reduced dimensions
with size 1. A reduction's gradient is the incoming gradient, with the reduced dimensions put
back as size 1, broadcast over the input (and, for max/min, routed to the winners).
"""

from __future__ import annotations

import builtins  # `range`, which histogram's argument of that name hides
import math
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from tensorgrad import checks, elementwise, movement, return_types
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record, summed
from tensorgrad.checks import (
    ArgumentValueError,
    ShapeError,
    UnsupportedDtypeError,
    not_a_tensor,
    user_stacklevel,
)
from tensorgrad.device import accumulate, array_like, is_array, namespace, to_numpy, ufunc_at
from tensorgrad.dtypes import float16, float_dtype, narrowed, promote_types
from tensorgrad.higher_order import linear_graph
from tensorgrad.tensor import Tensor, _cast, new_leaf

Dim = int | tuple[int, ...] | None


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
    if type(grad) is np.ndarray:
        out = np.empty(shape, grad.dtype)
    else:  # a GPU's array: made by its module
        out = namespace(grad).empty(shape, grad.dtype)
    if kept_shape:
        out[...] = grad.reshape(kept_shape)
    else:  # a 0-d gradient (everything was reduced): `fill` costs a third less than `out[...] =`
        out.fill(grad)
    return out


@autocast_op("sum")
def sum(input: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum over `dim` (in `dtype`, if given). Derivative: 1 for every element."""
    if dtype is not None:  # (an int32 sum stays int32: the int64 below is for sums without a dtype)
        out = sum(input.to(dtype), dim, keepdim)
        return out if out.dtype == np.dtype(dtype) else out.to(dtype)
    try:
        data = input._data  # the slot, not the property: sum ends most graphs
    except AttributeError:
        raise checks.not_a_tensor(input, "sum") from None
    shape = data.shape
    if data.dtype.kind in "biu":  # PyTorch sums bool and integers in int64 (NumPy: uint8 to uint64)
        data = data.astype(np.int64)
    if dim is None and not keepdim:  # the common case, kept short: it ends most graphs
        # np.add.reduce is what ndarray.sum calls, without its Python-level wrapper; `summed` (float16
        # in float32) only where needed, as its call would cost every sum.
        total = np.add.reduce(data, axis=None) if data.dtype is not float16 else summed(data, None)
        return record(total, "sum", (input,), lambda grad: _spread(grad, (), shape),
                      saved=(), graph_vjp=_sum_all_graph)
    axes = checks.dims(dim, input.ndim, "sum") or tuple(range(input.ndim))  # dim=() is every dim (PyTorch's)
    kept = _kept_shape(shape, axes)
    return record(summed(data, axes, keepdim), "sum", (input,),
                  lambda grad: _spread(grad, kept, shape), saved=(),
                  graph_vjp=partial(_spread_graph, kept, 1))


def _sum_all_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad.expand(*x.shape),)


def _spread_graph(kept: tuple[int, ...], count: int, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """sum's and mean's gradient as tensor ops: grad / count in every element that was reduced."""
    spread = grad.reshape(*kept).expand(*x.shape)
    return (spread if count == 1 else spread / count,)


def mean(input: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean over `dim` (in `dtype`, if given). Derivative: 1 / (number of elements averaged)."""
    if not isinstance(input, Tensor):
        raise checks.not_a_tensor(input, "mean")
    if dtype is not None:
        input = input.to(dtype)
    if input.data.dtype.kind not in "fc":
        raise RuntimeError(f"mean(): needs a floating point tensor, got dtype {input.dtype}; "
                           "use .float() first")
    axes = checks.dims(dim, input.ndim, "mean") or tuple(range(input.ndim))
    shape = input.data.shape
    count = math.prod(shape[a] for a in axes)
    kept = _kept_shape(shape, axes)
    # np.add.reduce then divide: the same numbers as ndarray.mean at a third of its overhead.
    with np.errstate(invalid="ignore", divide="ignore"):  # the mean of nothing is nan, as in PyTorch
        out = summed(input.data, axes, keepdim) / count
    return record(out, "mean", (input,),
                  lambda grad: _spread(grad / count, kept, shape), saved=(),
                  graph_vjp=partial(_spread_graph, kept, count))


def _extreme(x: Tensor, dim: Dim, keepdim: bool, op: str) -> Tensor:
    """amax or amin: the gradient is split evenly among the elements that tie for the extreme."""
    elementwise.refuse_complex(x, op)
    if x.data.size == 0 and dim is None:
        raise RuntimeError(f"{op}(): the tensor is empty (shape {x.shape}); give a dim to reduce over")
    axes = checks.dims(dim, x.ndim, op)
    for axis in axes:
        _nonempty(x, axis, op)
    reduce = np.max if op.endswith("max") else np.min
    kept = reduce(x.data, axis=axes, keepdims=True)
    nan_wins = op in ("max", "min")  # max() and min(): a nan result's gradient goes to the nans (amax: nan)

    def vjp(grad: np.ndarray) -> np.ndarray:
        winners = _winners(x.data, kept, nan_wins)
        return grad.reshape(kept.shape) * winners / winners.sum(axis=axes, keepdims=True)

    out = kept if keepdim else np.squeeze(kept, axis=axes)
    return record(out, op, (x,), vjp, graph_vjp=partial(_extreme_graph, axes, nan_wins))


def _winners(data: np.ndarray, kept: np.ndarray, nan_wins: bool) -> np.ndarray:
    """Where data equals its extreme `kept`; with `nan_wins`, the nans where the extreme is nan."""
    winners = data == kept
    if nan_wins and data.dtype.kind == "f":
        winners |= np.isnan(data) & np.isnan(kept)
    return winners


def _extreme_graph(axes: tuple[int, ...], nan_wins: bool, grad: Tensor, out: Tensor,
                   x: Tensor) -> tuple[Tensor]:
    """amax's and amin's gradient: grad times a constant share, 1 / (the number of winners) at each."""
    kept = _kept_shape(x.shape, axes)
    winners = _winners(x._data, out._data.reshape(kept), nan_wins)
    share = (winners / winners.sum(axis=axes, keepdims=True)).astype(x._data.dtype, copy=False)
    return (grad.reshape(*kept) * new_leaf(share),)


def _extreme_along(x: Tensor, dim: int, keepdim: bool, op: str) -> tuple[Tensor, Tensor]:
    """max or min over one dim: (values, indices); the gradient goes to the element at the index."""
    elementwise.refuse_complex(x, op)
    axis = checks.dim(dim, x.ndim, op)
    _nonempty(x, axis, op)
    data = x.data if x.ndim else x.data.reshape(1)
    pick = np.argmax if op == "max" else np.argmin
    index = pick(data, axis=axis, keepdims=True)
    values = np.take_along_axis(data, index, axis=axis)
    shape = data.shape
    xp = namespace(data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = xp.zeros(shape, dtype=grad.dtype)
        np.put_along_axis(full, index, grad.reshape(index.shape), axis=axis)
        return full.reshape(x.data.shape)

    indices = index
    if not keepdim or not x.ndim:
        values, indices = np.squeeze(values, axis=axis), np.squeeze(indices, axis=axis)
    if not x.ndim:
        values, indices = values.reshape(()), indices.reshape(())
    graph = linear_graph(op, vjp, partial(_gather_along, shape, axis, index, values.shape))
    return (record(values, op, (x,), vjp, saved=(), graph_vjp=graph),
            new_leaf(indices.astype(np.int64, copy=False)))


def _gather_along(shape: tuple[int, ...], axis: int, index: np.ndarray, out_shape: tuple[int, ...],
                  t: Tensor) -> Tensor:
    """t's elements at `index` along `axis`, as tensor ops: the forward of the ops whose gradient
    goes to an index (max and min along a dim, the scans of extremes, sort, topk, median...)."""
    return t.reshape(*shape).gather(axis, index).reshape(*out_shape)


def max(input: Tensor, dim: int | None = None, keepdim: bool = False, *,  # noqa: A001
        other: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    """The largest element; with `dim`, the named tuple `(values, indices)` along it.

    Without `dim` the gradient is split evenly among the elements that tie for the maximum; with
    `dim` it goes to the element at `indices` (the first maximum), as in PyTorch.
    """
    if isinstance(dim, Tensor):  # tg.max(a, b): the elementwise maximum, as torch.max(input, other)
        return elementwise.maximum(input, dim)
    if other is not None:  # tg.max(a, other=b)
        return elementwise.maximum(input, _only_other(other, dim, keepdim, "max"))
    input = _input(input, "max")
    if dim is None:
        return _extreme(input, None, False, "max")
    return return_types.max(*_extreme_along(input, dim, keepdim, "max"))


def min(input: Tensor, dim: int | None = None, keepdim: bool = False, *,  # noqa: A001
        other: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    """The smallest element; with `dim`, the named tuple `(values, indices)` along it.

    Without `dim` the gradient is split evenly among tied minima; with `dim` it goes to `indices`.
    """
    if isinstance(dim, Tensor):  # tg.min(a, b): the elementwise minimum
        return elementwise.minimum(input, dim)
    if other is not None:  # tg.min(a, other=b)
        return elementwise.minimum(input, _only_other(other, dim, keepdim, "min"))
    input = _input(input, "min")
    if dim is None:
        return _extreme(input, None, False, "min")
    return return_types.min(*_extreme_along(input, dim, keepdim, "min"))


def _only_other(other: Tensor, dim: Any, keepdim: bool, op: str) -> Tensor:
    """`other` of max(input, other=...), which takes no dim or keepdim (PyTorch's TypeError)."""
    if dim is not None or keepdim:
        raise TypeError(f"{op}(): got an invalid combination of arguments: other= with dim={dim}, "
                        f"keepdim={keepdim}; the elementwise {op}(input, other) takes neither")
    return other


def amax(input: Tensor, dim: Dim = (), keepdim: bool = False) -> Tensor:
    """The largest values over `dim` (every dim for `()` or None); ties share the gradient evenly."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "amax")
    return _extreme(input, None if dim == () else dim, keepdim, "amax")


def amin(input: Tensor, dim: Dim = (), keepdim: bool = False) -> Tensor:
    """The smallest values over `dim` (every dim for `()` or None); ties share the gradient evenly."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "amin")
    return _extreme(input, None if dim == () else dim, keepdim, "amin")


def _input(x: Any, op: str) -> Tensor:
    """The tensor an op reads: x, or an array wrapped (`tg.max(out.data, 1)`: `.data` is an array)."""
    if isinstance(x, Tensor):
        return x
    if is_array(x):
        return new_leaf(x)
    raise TypeError(f"{op}(): argument 'input' must be a Tensor, got {type(x).__name__}")


def _arg_extreme(x: Tensor, dim: int | None, keepdim: bool, op: str) -> Tensor:
    x = _input(x, op)
    elementwise.refuse_complex(x, op)
    if x.data.dtype.kind == "b":
        raise RuntimeError(f"{op}(): does not support bool input (shape {x.shape}); use .int() or "
                           ".float() first")
    pick = np.argmax if op == "argmax" else np.argmin
    if dim is None:
        if x.data.size == 0:  # PyTorch's IndexError
            raise IndexError(f"{op}(): the tensor is empty (shape {x.shape}); give a dim to reduce over")
        index = namespace(x.data).asarray(pick(x.data))  # numpy gives a scalar: an array here
        return new_leaf(index.reshape((1,) * x.ndim) if keepdim else index)
    axis = checks.dim(dim, x.ndim, op)
    _nonempty(x, axis, op)
    data = x.data if x.ndim else x.data.reshape(1)
    index = namespace(data).asarray(pick(data, axis=axis, keepdims=keepdim and x.ndim > 0))
    return new_leaf(index.reshape(()) if not x.ndim else index)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (of the flattened tensor when dim is None); int64, no grad."""
    return _arg_extreme(input, dim, keepdim, "argmax")


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (of the flattened tensor when dim is None); int64, no grad."""
    return _arg_extreme(input, dim, keepdim, "argmin")


@autocast_op("logsumexp")
def logsumexp(input: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, shifted by the max so it stays finite for large x (for
    complex x, the principal log, shifted by the largest real part).

    Derivative: softmax(x) over `dim`.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "logsumexp")
    axes = checks.dims(dim, input.ndim, "logsumexp") or tuple(range(input.ndim))
    data = elementwise._floating(input)
    # complex: shifted by the largest real part (a real shift keeps the log's imaginary part in
    # (-pi, pi], the principal branch, as PyTorch's)
    shift = _finite_max(data.real if data.dtype.kind == "c" else data, axes)
    with np.errstate(divide="ignore"):  # a slice of only -inf (or none) gives -inf, as in PyTorch
        lse = np.log(summed(np.exp(data - shift), axes, keepdims=True)) + shift
    out = lse if keepdim else np.squeeze(lse, axis=axes)
    return record(out, "logsumexp", (input,),
                  lambda grad: grad.reshape(lse.shape) * np.exp(input.data - lse),
                  graph_vjp=partial(_logsumexp_graph, lse.shape))


def _logsumexp_graph(kept: tuple[int, ...], grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad.reshape(*kept) * (x - out.reshape(*kept)).exp(),)


def _kept_max(data: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The max over `axes` (kept as size 1), -inf for an empty slice: numpy's `initial=-inf`, which
    a GPU array's max does not take (there, an empty array gets its -inf filled in)."""
    if type(data) is np.ndarray:
        return data.max(axis=axes, keepdims=True, initial=-np.inf)
    if data.size:
        return data.max(axis=axes, keepdims=True)
    return namespace(data).full(_kept_shape(data.shape, axes), -np.inf, dtype=data.dtype)


def _finite_max(data: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The max over `axes` (kept), with infinities replaced by 0 so that x - max is never nan."""
    shift = _kept_max(data, axes)
    if not np.isfinite(shift).all():  # rare: a slice of infinities (or an empty one)
        shift = np.where(np.isfinite(shift), shift, 0)
    return shift


def _softmax_input(x: Tensor, op: str) -> np.ndarray:
    """x's data for softmax and log_softmax: floats only (PyTorch refuses integers, as its kernels
    do, unless `dtype=` asks for a float; an empty one stays as it is), float16 computed in float32
    as PyTorch's kernels do. A complex x is refused, as by PyTorch's kernels."""
    data = x.data
    if data.dtype.kind == "c" and data.size:  # (an empty one passes, as in PyTorch)
        raise UnsupportedDtypeError(f"{op}(): not implemented for complex tensors ({x.dtype}, shape "
                                    f"{x.shape}), as in PyTorch")
    if data.dtype.kind != "f" and data.size:
        raise UnsupportedDtypeError(f"{op}(): not implemented for dtype {x.dtype} (shape {x.shape}); pass a "
                                    f"floating dtype= or use .float() first")
    return data.astype(np.float32) if data.dtype.kind not in "fc" or data.dtype == np.float16 else data


def implicit_softmax_dim(ndim: int, op: str) -> int:
    """The dim PyTorch picks when softmax-like ops get dim=None (deprecated there, so it warns).
    The warning names the user's line; the ops keep PyTorch's `_stacklevel` argument, unneeded here."""
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to include "
                  "dim=X as an argument.", UserWarning, stacklevel=user_stacklevel())
    return 0 if ndim in (0, 1, 3) else 1


@autocast_op("softmax")
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) over `dim` (in `dtype`, if given). Derivative: s * (grad - sum(grad * s)).
    Without a dim, PyTorch's deprecated implicit choice (dim 0 for 0-, 1- and 3-d input, else 1)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "softmax")
    if dim is None:
        dim = implicit_softmax_dim(input.ndim, "softmax")
    if dtype is not None:
        input = input.to(dtype)
    axes = checks.dims(dim, input.ndim, "softmax")
    data = _softmax_input(input, "softmax")
    # The plain max: an infinite element makes its whole slice nan, as in PyTorch.
    with np.errstate(invalid="ignore"):
        e = np.exp(data - _kept_max(data, axes))
        out = (e / e.sum(axis=axes, keepdims=True)).astype(input.data.dtype, copy=False)
    def vjp(grad: np.ndarray) -> np.ndarray:  # out * (grad - sum(grad * out)), in one new array
        slope = grad * out
        if not slope.ndim:  # 0-d: numpy's product is a scalar, which takes no out=
            return out * (grad - slope)
        total = summed(slope, axes, keepdims=True)
        np.subtract(grad, total, out=slope)
        slope *= out
        return slope

    return record(out, "softmax", (input,), vjp, saved=(), saves_output=True,
                  graph_vjp=partial(_softmax_graph, axes))


def _softmax_graph(axes: tuple[int, ...], grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (out * (grad - (grad * out).sum(axes, keepdim=True)),)


@autocast_op("log_softmax")
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """x - logsumexp(x) over `dim` (in `dtype`, if given). Derivative: grad - softmax(x) * sum(grad).
    Without a dim, PyTorch's deprecated implicit choice, as `softmax`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "log_softmax")
    if dim is None:
        dim = implicit_softmax_dim(input.ndim, "log_softmax")
    if dtype is not None:
        input = input.to(dtype)
    axes = checks.dims(dim, input.ndim, "log_softmax")
    data = _softmax_input(input, "log_softmax")
    with np.errstate(invalid="ignore", divide="ignore"):  # infinities give nan, as in PyTorch
        shifted = data - _kept_max(data, axes)
        out = shifted - np.log(np.exp(shifted).sum(axis=axes, keepdims=True))
    out = out.astype(input.data.dtype, copy=False)
    return record(out, "log_softmax", (input,),
                  lambda grad: grad - np.exp(out) * summed(grad, axes, keepdims=True),
                  saved=(), saves_output=True, graph_vjp=partial(_log_softmax_graph, axes))


def _log_softmax_graph(axes: tuple[int, ...], grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad - out.exp() * grad.sum(axes, keepdim=True),)


# --- more reductions: prod, var and std, norm, all, any, count_nonzero ---------------------------


def _accumulated_dtype(x: Tensor, dtype: Any) -> np.dtype:
    """The dtype a sum or product runs in: `dtype` if given, int64 for bool and integers (PyTorch)."""
    if dtype is not None:
        return np.dtype(dtype)
    return np.dtype(np.int64) if x.data.dtype.kind in "biu" else x.data.dtype


def _scan_dtype(x: Tensor, dtype: Any, op: str) -> np.dtype:
    """The dtype a running sum or product runs in; PyTorch has no bool kernel for it."""
    scan_dtype = _accumulated_dtype(x, dtype)
    if scan_dtype == np.bool_:
        raise UnsupportedDtypeError(f"{op}(): not implemented for dtype bool (input of shape {x.shape})")
    return scan_dtype


def _along(axis: int, ndim: int, part: slice) -> tuple[slice, ...]:
    """An index selecting `part` of dimension `axis` and all of the others."""
    return (slice(None),) * axis + (part,) + (slice(None),) * (ndim - axis - 1)


def _exclusive_cumprod(data: np.ndarray, axis: int) -> np.ndarray:
    """The product of the elements before each one along `axis` (1 for the first): no division."""
    out = np.ones_like(data)
    out[_along(axis, data.ndim, slice(1, None))] = np.cumprod(data[_along(axis, data.ndim, slice(None, -1))],
                                                              axis=axis)
    return out


def _product_of_others(data: np.ndarray, axis: int) -> np.ndarray:
    """For each element, the product of the other elements along `axis`: exact where some are 0."""
    after = np.flip(_exclusive_cumprod(np.flip(data, axis), axis), axis)
    return _exclusive_cumprod(data, axis) * after


@autocast_op("prod")
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Product over dim. Derivative: the product of the others.

    `dim` is one int (or None for all elements), as in PyTorch. The gradient is PyTorch's:
    grad * out / x where x holds no zero; else the products before and after each element, so
    zeros in the input give the exact gradient rather than 0 / 0. Bool and integer tensors
    multiply in int64.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "prod")
    data = input.data.astype(_accumulated_dtype(input, dtype), copy=False)
    if dim is None:
        out = np.prod(data, keepdims=keepdim, dtype=data.dtype)
        return record(out, "prod", (input,),
                      lambda grad: _prod_vjp(grad.reshape((1,)), out.reshape((1,)), data.reshape(-1), 0,
                                             input.ndim).reshape(data.shape),
                      graph_vjp=partial(_prod_graph, None))
    axis = checks.dim(dim, input.ndim, "prod")
    line = data if input.ndim else data.reshape(1)
    kept = np.prod(line, axis=axis, keepdims=True, dtype=data.dtype)
    shape = input.shape
    out = (kept if keepdim else np.squeeze(kept, axis=axis)).reshape(_reduced_shape(shape, axis, keepdim))
    return record(out, "prod", (input,),
                  lambda grad: _prod_vjp(grad.reshape(kept.shape), kept, line, axis, len(shape))
                  .reshape(shape),
                  graph_vjp=partial(_prod_graph, axis))


def _prod_vjp(grad: np.ndarray, kept: np.ndarray, line: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """grad * out / x where no element is 0 (so a nan or an infinity spreads, as in PyTorch); else
    grad * (the product of the others). A 0-d tensor's gradient is grad."""
    if ndim and not (line == 0).any():
        with np.errstate(invalid="ignore", divide="ignore"):
            return grad * (kept / line)
    return grad * _product_of_others(line, axis)


def _prod_graph(axis: int | None, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """prod's gradient: grad * out / x (PyTorch's prod_backward) where x holds no zero; else the
    product of the others, from one copy of each slice per element (`_each_replaced`)."""
    if not (x._data == 0).any():
        kept = (1,) * x.ndim if axis is None else _kept_shape(x.shape, (axis,))
        return (grad.reshape(*kept) * out.reshape(*kept) / x,)
    line = x.reshape(-1) if axis is None or not x.ndim else x
    kept = _kept_shape(line.shape, (0 if axis is None else axis,))
    others = prod(_each_replaced(line, 0 if axis is None else axis), (0 if axis is None else axis) + 1)
    return ((grad.reshape(*kept) * others).reshape(*x.shape),)


def _each_replaced(x: Tensor, axis: int) -> Tensor:
    """x with a new dimension at `axis`: its slice i is x with the i-th element along `axis` set to 1."""
    n = x.shape[axis]
    eye = namespace(x._data).eye(n, dtype=bool).reshape((n, n) + (1,) * (x.ndim - axis - 1))
    copies = x.unsqueeze(axis).expand(*x.shape[:axis], n, *x.shape[axis:])
    return elementwise.where(new_leaf(eye), 1.0, copies)


def _reduced_shape(shape: tuple[int, ...], axis: int, keepdim: bool) -> tuple[int, ...]:
    """`shape` reduced over `axis` (a 0-d shape stays 0-d)."""
    if not shape:
        return ()
    return shape[:axis] + ((1,) if keepdim else ()) + shape[axis + 1:]


def _correction(dim: Any, unbiased: bool | None, correction: float | None, op: str) -> tuple[Any, float]:
    """PyTorch's two spellings: `correction=` (default 1), or the older `unbiased` (True is 1).

    `var(x, True)` passes `unbiased` where `dim` stands, as PyTorch allows.
    """
    if isinstance(dim, bool):
        dim, unbiased = None, dim if unbiased is None else unbiased
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}(): give either 'unbiased' or 'correction', not both")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    elif isinstance(correction, bool) or not isinstance(correction, int | float | np.integer | np.floating):
        raise TypeError(f"{op}(): argument 'correction' must be a number, not {type(correction).__name__}")
    return (None if dim == () else dim), correction


def _std_var_dtype(x: Tensor, op: str) -> None:
    if x.data.dtype.kind not in "fc":
        raise RuntimeError(f"{op}(): std and var only support floating point and complex dtypes, "
                           f"got a tensor of dtype {x.dtype}")


def _centered(x: Tensor, dim: Any, correction: float, op: str) -> tuple[np.ndarray, tuple[int, ...], float]:
    """x minus its mean over dim, the reduced axes, and the degrees of freedom N - correction."""
    _std_var_dtype(x, op)
    axes = checks.dims(dim, x.ndim, op)
    count = math.prod(x.data.shape[a] for a in axes)
    with np.errstate(invalid="ignore", divide="ignore"):  # the mean of nothing is nan
        centered = x.data - summed(x.data, axes, keepdims=True) / count
    # PyTorch clamps N - correction at 0: dividing by it gives inf (or nan for 0 / 0).
    return centered, axes, float(np.maximum(count - correction, 0))


def var(input: Tensor, dim: Dim | bool = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """sum((x - mean)**2) / (N - correction) over dim. Derivative: 2 (x - mean) / (N - correction)."""
    dim, correction = _correction(dim, unbiased, correction, "var")
    centered, axes, dof = _centered(input, dim, correction, "var")
    if centered.dtype.kind == "c":
        return _complex_spread(input, centered, axes, dof, keepdim, "var")
    with np.errstate(invalid="ignore", divide="ignore"):
        kept = summed(centered * centered, axes, keepdims=True) / dof
    out = kept if keepdim else np.squeeze(kept, axis=axes)

    def vjp(grad: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return grad.reshape(kept.shape) * 2 * centered / dof

    return record(out.astype(input.data.dtype, copy=False), "var", (input,), vjp,
                  graph_vjp=partial(_var_graph, axes, dof))


def _complex_spread(input: Tensor, centered: np.ndarray, axes: tuple[int, ...], dof: float, keepdim: bool,
                    op: str) -> Tensor:
    """var or std of a complex tensor: sum(|x - mean|**2) / (N - correction) (its square root for
    std), real. PyTorch's gradient: 2 grad (x - mean) / dof for var, grad (x - mean) / (dof std)
    for std (0 where std is 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        kept = np.add.reduce((centered * np.conj(centered)).real, axis=axes, keepdims=True) / dof
        if op == "std":
            kept = np.sqrt(kept)
    out = kept if keepdim else np.squeeze(kept, axis=axes)

    def formula(grad: np.ndarray) -> np.ndarray:
        grad = grad.reshape(kept.shape)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = 2 * grad / dof if op == "var" else np.where(kept == 0, 0, grad / (dof * kept))
        return scale * centered

    graph = partial(_var_graph if op == "var" else _std_graph, axes, dof)
    return record(out, op, (input,), elementwise.pytorch_gradient(formula), graph_vjp=graph)


def _var_graph(axes: tuple[int, ...], dof: float, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """var's gradient, 2 grad (x - mean) / (N - correction); conj(x - mean) for a complex x, which
    `higher_order.conjugated_graph` turns into PyTorch's 2 grad (x - mean) / (N - correction)."""
    centered = (x - x.mean(axes, keepdim=True)).conj()  # (a real tensor's conj is itself)
    return (grad.reshape(*_kept_shape(x.shape, axes)) * 2 * centered / dof,)


def std(input: Tensor, dim: Dim | bool = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """sqrt(var(x)) over dim. Derivative: (x - mean) / ((N - correction) std), 0 where std is 0."""
    dim, correction = _correction(dim, unbiased, correction, "std")
    centered, axes, dof = _centered(input, dim, correction, "std")
    if centered.dtype.kind == "c":
        return _complex_spread(input, centered, axes, dof, keepdim, "std")
    with np.errstate(invalid="ignore", divide="ignore"):
        kept = np.sqrt(summed(centered * centered, axes, keepdims=True) / dof)
    out = kept if keepdim else np.squeeze(kept, axis=axes)

    def vjp(grad: np.ndarray) -> np.ndarray:
        # PyTorch's convention: a slice with no spread (std 0) gets gradient 0, not 0 / 0.
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(kept == 0, 0, grad.reshape(kept.shape) / (dof * kept))
        return scale * centered

    return record(out.astype(input.data.dtype, copy=False), "std", (input,), vjp,
                  graph_vjp=partial(_std_graph, axes, dof))


def _std_graph(axes: tuple[int, ...], dof: float, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """std's gradient, grad (x - mean) / ((N - correction) std): 0 where std is 0, as in the
    first-order formula (the division reads 1 there, so that its own gradient stays finite). A
    complex x gets conj(x - mean), as in `_var_graph`."""
    kept = _kept_shape(x.shape, axes)
    std = out.reshape(*kept)
    flat = new_leaf(std._data == 0)
    scale = elementwise.where(flat, 0.0, grad.reshape(*kept) / (elementwise.where(flat, 1.0, std) * dof))
    return (scale * (x - x.mean(axes, keepdim=True)).conj(),)


def var_mean(input: Tensor, dim: Dim | bool = None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    """(var(x), mean(x)) over dim, as the named tuple `(var, mean)`; each carries its gradient."""
    dim, correction = _correction(dim, unbiased, correction, "var_mean")
    _std_var_dtype(input, "var_mean")  # checked here, so that an error names the op called
    checks.dims(dim, input.ndim, "var_mean")
    return return_types.var_mean(var(input, dim, keepdim=keepdim, correction=correction),
                                 mean(input, dim, keepdim))


def std_mean(input: Tensor, dim: Dim | bool = None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    """(std(x), mean(x)) over dim, as the named tuple `(std, mean)`; each carries its gradient."""
    dim, correction = _correction(dim, unbiased, correction, "std_mean")
    _std_var_dtype(input, "std_mean")  # checked here, so that an error names the op called
    checks.dims(dim, input.ndim, "std_mean")
    return return_types.std_mean(std(input, dim, keepdim=keepdim, correction=correction),
                                 mean(input, dim, keepdim))


@autocast_op("dist")
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of x - other (broadcast), a 0-d tensor, as `torch.dist`; differentiable in both."""
    return norm(elementwise.sub(input, other), float(p))


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where `values` would go in the sorted last dimension of `sorted_sequence` to keep it sorted
    (the first such place, or the last with `right=True` / `side="right"`); int64, no gradient.
    A 1-d sequence takes values of any shape; an (..., N) one, values of shape (..., M)."""
    side = side or ("right" if right else "left")
    if side not in ("left", "right"):
        raise RuntimeError(f"searchsorted(): side can only be 'left' or 'right', got {side!r}")
    sequence = sorted_sequence.data
    if sorter is not None:
        sequence = np.take_along_axis(sequence, sorter.data, axis=-1)
    scalar = not isinstance(input, Tensor)
    queries = array_like(input, sequence) if scalar else input.data
    dtype = np.int32 if out_int32 else np.int64
    if sequence.ndim <= 1:
        found = _binary_search(sequence.reshape(1, -1), queries.reshape(1, -1), side)
        return new_leaf(found.reshape(queries.shape).astype(dtype))
    if sequence.shape[:-1] != queries.shape[:-1]:
        raise RuntimeError(f"searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we "
                           f"got boundaries tensor {tuple(sequence.shape)} and input value tensor "
                           f"{tuple(queries.shape)}")
    rows = math.prod(sequence.shape[:-1])
    rows_of = (rows, sequence.shape[-1]), (rows, queries.shape[-1])
    found = _binary_search(sequence.reshape(rows_of[0]), queries.reshape(rows_of[1]), side)
    return new_leaf(found.reshape(queries.shape).astype(dtype))


def _binary_search(sequence: np.ndarray, queries: np.ndarray, side: str) -> np.ndarray:
    """For each row r and query queries[r, j], PyTorch's binary search in sequence[r] (R, N):
    the first index whose boundary is not below the query ("left") or is above it ("right").
    All queries take their halving steps together; the comparisons are PyTorch's, so a nan query
    goes past the end and a nan boundary counts as below every query."""
    xp, size = namespace(sequence), sequence.shape[-1]
    start = xp.zeros(queries.shape, dtype=np.int64)
    end = xp.full(queries.shape, size, dtype=np.int64)
    for _ in builtins.range(size.bit_length()):  # (each step at least halves every interval)
        active = start < end
        middle = (start + end) >> 1
        boundary = np.take_along_axis(sequence, xp.minimum(middle, size - 1), axis=-1)
        above = boundary >= queries if side == "left" else boundary > queries
        start = xp.where(active & ~above, middle + 1, start)
        end = xp.where(active & above, middle, end)
    return start


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:  # noqa: A002
    """The bucket of each element of `input` among the 1-d sorted `boundaries`, as
    `torch.bucketize` (`right=True`: boundaries[i-1] <= x < boundaries[i]); int64, no gradient."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"bucketize(): boundaries tensor must be 1 dimension, but got "
                           f"dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@autocast_op("norm")
def norm(x: Tensor, p: float | str = "fro", dim: Dim = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """The p-norm over dim: sum(|x|**p) ** (1 / p). Derivative: sign(x) |x|**(p-1) / norm**(p-1).

    `p` is a number, inf (the largest |x|), -inf (the smallest), 0 (the count of non-zeros),
    'fro' (the 2-norm of the elements) or 'nuc' (the sum of a matrix's singular values, over
    two dims). Where the norm is 0 the gradient is 0 (PyTorch's subgradient); for inf and -inf
    it is split evenly among the elements that tie for the extreme.
    """
    if dtype is not None:
        if x.data.dtype.kind in "fc" and np.dtype(dtype).itemsize < x.data.dtype.itemsize:
            raise RuntimeError(f"norm(): the dtype of the input ({x.dtype}) should be convertible without "
                               f"narrowing to the specified dtype ({np.dtype(dtype)})")
        x = _cast(x, np.dtype(dtype))
    if x.data.dtype.kind not in "fc":
        raise RuntimeError(f"norm(): expected a floating point tensor as input, got dtype {x.dtype}")
    if p == "nuc":
        return _nuclear_norm(x, dim, keepdim)
    if p == "fro":
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"norm(): the Frobenius norm takes one or two dims, got dim={dim}")
        p = 2
    if isinstance(p, str | bool) or not isinstance(p, int | float | np.number):
        raise ArgumentValueError(f"norm(): p must be a number, 'fro' or 'nuc', got {p!r}")
    axes = checks.dims(dim, x.ndim, "norm")
    if math.isinf(p):
        return _extreme_norm(x, axes, keepdim, p)
    kept = _p_norm(np.abs(x.data), axes, float(p))

    def vjp(grad: np.ndarray) -> np.ndarray:
        if p == 0:  # a count: it does not change with x
            return np.zeros_like(x.data)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(kept == 0, 0, grad.reshape(kept.shape) / kept ** (p - 1))
            power = np.where(x.data == 0, 0, np.abs(x.data) ** (p - 1))
        sign = _sign(x.data)
        if sign.dtype.kind == "c":  # PyTorch's gradient has sgn(x): the VJP states its conjugate (see `abs`)
            sign = np.conj(sign)
        return sign * power * scale

    return record(kept if keepdim else np.squeeze(kept, axis=axes), "norm", (x,), vjp,
                  graph_vjp=partial(_norm_graph, axes, float(p)))


def _norm_graph(axes: tuple[int, ...], p: float, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The p-norm's gradient, sign(x) |x|**(p-1) grad / norm**(p-1), as PyTorch's norm_backward:
    0 where the norm is 0, and |x|**(p-1) read as 0 at x = 0 (both divisions read 1 at those
    places, so that the gradient's own gradient stays finite there)."""
    if p == 0:  # a count: it does not change with x
        return (new_leaf(np.zeros_like(x._data)),)
    kept = _kept_shape(x.shape, axes)
    grad = grad.reshape(*kept)
    if p == 1:
        return (grad * _conj_sign(x),)
    norm = out.reshape(*kept)
    flat = new_leaf(norm._data == 0)
    if p == 2:
        return (x.conj() * elementwise.where(flat, 0.0, grad / elementwise.where(flat, 1.0, norm)),)
    scale = elementwise.where(flat, 0.0, grad / elementwise.where(flat, 1.0, norm) ** (p - 1))
    zero = new_leaf(x._data == 0)
    power = elementwise.where(zero, 0.0, elementwise.where(zero, 1.0, x).abs() ** (p - 1))
    return (_conj_sign(x) * power * scale,)


def _conj_sign(x: Tensor) -> Tensor:
    """The norms' graph VJPs' sign of x: a constant for real x; for complex x, conj(sgn(x)), recorded
    (PyTorch's gradient has sgn(x), which changes with x, and the graph VJP states its conjugate)."""
    return x.sgn().conj() if x._data.dtype.kind == "c" else new_leaf(_sign(x._data))


def _sign(data: np.ndarray) -> np.ndarray:
    """The sign of each element, 0 at nan (PyTorch's sign, which the norms' gradients use)."""
    return np.where(np.isnan(data), 0, np.sign(data))


def _p_norm(magnitude: np.ndarray, axes: tuple[int, ...], p: float) -> np.ndarray:
    """(sum |x|**p) ** (1/p) over axes (kept), with the cheaper forms for p = 0, 1 and 2.

    float16 is summed in float32 and rounded at the end, as PyTorch (|x|**p overflows float16)."""
    if magnitude.dtype == np.float16:
        return _p_norm(magnitude.astype(np.float32), axes, p).astype(np.float16)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if p == 0:
            return np.add.reduce(magnitude != 0, axis=axes, keepdims=True).astype(magnitude.dtype)
        if p == 1:
            return np.add.reduce(magnitude, axis=axes, keepdims=True)
        if p == 2:
            return np.sqrt(np.add.reduce(magnitude * magnitude, axis=axes, keepdims=True))
        return np.add.reduce(magnitude ** p, axis=axes, keepdims=True) ** (1 / p)


def _extreme_norm(x: Tensor, axes: tuple[int, ...], keepdim: bool, p: float) -> Tensor:
    """The inf-norm (largest |x|) or -inf-norm (smallest |x|); ties share the gradient evenly."""
    if math.prod(x.data.shape[a] for a in axes) == 0:
        raise RuntimeError(f"norm(): cannot compute the {p} norm of an empty slice (input shape {x.shape}): "
                           "the operation has no identity")
    magnitude = np.abs(x.data)
    reduce = np.max if p > 0 else np.min
    kept = reduce(magnitude, axis=axes, keepdims=True)

    def vjp(grad: np.ndarray) -> np.ndarray:
        winners = (magnitude == kept) | np.isnan(magnitude)
        return _sign(x.data) * winners * (grad.reshape(kept.shape) / np.add.reduce(winners, axis=axes,
                                                                                        keepdims=True))

    if x.data.dtype.kind == "c":  # sgn(x) * grad is PyTorch's gradient as it stands: |x| is not holomorphic
        vjp = elementwise.pytorch_gradient(vjp)
    return record(kept if keepdim else np.squeeze(kept, axis=axes), "norm", (x,), vjp,
                  graph_vjp=partial(_extreme_norm_graph, axes))


def _extreme_norm_graph(axes: tuple[int, ...], grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The inf-norm's gradient: grad times sign(x) / (the number of tied extremes), a constant."""
    kept = _kept_shape(x.shape, axes)
    magnitude = np.abs(x._data)
    winners = (magnitude == out._data.reshape(kept)) | np.isnan(magnitude)
    share = winners / np.add.reduce(winners, axis=axes, keepdims=True)
    if x._data.dtype.kind == "c":  # sgn(x) changes with x (see `_conj_sign`)
        return (grad.reshape(*kept) * new_leaf(share.astype(magnitude.dtype, copy=False)) * _conj_sign(x),)
    share = _sign(x._data) * share
    return (grad.reshape(*kept) * new_leaf(share.astype(x._data.dtype, copy=False)),)


def _nuclear_norm(x: Tensor, dim: Dim, keepdim: bool) -> Tensor:
    """The sum of the singular values of the matrices over two dims. Derivative: U V^T (the SVD's)."""
    if dim is None and x.ndim != 2:
        raise RuntimeError(f"norm(): the nuclear norm needs a 2-D tensor or two dims, got shape {x.shape}")
    pair = (0, 1) if dim is None else dim
    if isinstance(pair, int) or len(pair) != 2:
        raise RuntimeError(f"norm(): the nuclear norm takes two dims, got dim={dim}")
    rows, cols = (checks.dim(d, x.ndim, "norm") for d in pair)
    if rows == cols:
        raise RuntimeError(f"norm(): the nuclear norm takes two different dims, got dim={dim}")
    matrices = np.moveaxis(x.data, (rows, cols), (-2, -1))
    u, s, vh = np.linalg.svd(matrices, full_matrices=False)
    out = np.add.reduce(s, axis=-1)
    if keepdim:
        out = np.expand_dims(out, tuple(sorted((rows, cols))))

    def vjp(grad: np.ndarray) -> np.ndarray:
        per_matrix = grad.reshape(out.shape) if not keepdim else np.squeeze(grad, axis=(rows, cols))
        return np.moveaxis(per_matrix[..., None, None] * (u @ vh), (-2, -1), (rows, cols))

    if x.data.dtype.kind == "c":  # grad U V^H is PyTorch's gradient as it stands: |.| is not holomorphic
        vjp = elementwise.pytorch_gradient(vjp)
    return record(out.astype(x.data.real.dtype, copy=False), "norm", (x,), vjp,  # (real for a complex x)
                  graph_vjp=partial(_nuclear_norm_graph, rows, cols))


def _nuclear_norm_graph(rows: int, cols: int, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The nuclear norm's gradient grad * U V^T, with U and V from a recorded (differentiable) SVD."""
    from tensorgrad import linalg  # (linalg imports this module)

    u, _, vh = linalg.svd(movement.movedim(x, (rows, cols), (-2, -1)), full_matrices=False)
    batch = tuple(n for i, n in enumerate(x.shape) if i not in (rows, cols))
    # (U V^H conjugated for a complex x: the form autograd conjugates back, as `pytorch_gradient`'s)
    return (movement.movedim(grad.reshape(*batch, 1, 1) * (u @ vh).conj(), (-2, -1), (rows, cols)),)


def _truth(x: Tensor, out: np.ndarray) -> Tensor:
    """A result of all() or any(): bool, or uint8 for a uint8 input, as PyTorch; no gradient."""
    return new_leaf(namespace(x.data).asarray(out, dtype=np.uint8 if x.data.dtype == np.uint8 else np.bool_))


def all(input: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element over dim is non-zero (bool; no gradient)."""
    return _truth(input, np.all(input.data, axis=checks.dims(dim, input.ndim, "all"), keepdims=keepdim))


def any(input: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element over dim is non-zero (bool; no gradient)."""
    return _truth(input, np.any(input.data, axis=checks.dims(dim, input.ndim, "any"), keepdims=keepdim))


def count_nonzero(input: Tensor, dim: Dim = None) -> Tensor:
    """The number of non-zero elements over dim (int64; no gradient)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "count_nonzero")
    axes = checks.dims(dim, input.ndim, "count_nonzero") or tuple(range(input.ndim))
    return new_leaf(np.add.reduce(input.data != 0, axis=axes, dtype=np.int64))


# --- scans: cumsum, cumprod, cummax, cummin, logcumsumexp ------------------------------------------


# The scans that compare elements: PyTorch refuses them for complex tensors (cumsum, cumprod and
# logcumsumexp take complex numbers).
_ORDERING = frozenset(("sort", "argsort", "topk", "median", "nanmedian", "kthvalue", "mode", "cummax",
                       "cummin"))


def _scan_input(x: Tensor, dim: int, op: str) -> tuple[np.ndarray, int]:
    """x's data with at least one dimension (a 0-d tensor scans as one element), and the axis.
    A complex x is refused (PyTorch's error) by the ops that need an order (sort, cummax...)."""
    axis = checks.dim(dim, x.ndim, op)
    if op in _ORDERING:
        elementwise.refuse_complex(x, op)
    return (x.data if x.ndim else x.data.reshape(1)), axis


def _reverse_cumsum(a: np.ndarray, axis: int) -> np.ndarray:
    """Sums from each element to the end along `axis`: the transpose of cumsum."""
    return np.flip(_running(np.cumsum, np.flip(a, axis), axis, a.dtype), axis)


def _running(scan: Callable[..., np.ndarray], data: np.ndarray, axis: int, dtype: np.dtype) -> np.ndarray:
    """np.cumsum or np.cumprod of data in dtype. A float16 scan runs in float32 and rounds each
    output once, as PyTorch's (its "opmath"): in float16 itself a running sum of ones stops at 2048,
    where 2048 + 1 rounds back to 2048."""
    if np.dtype(dtype) == np.float16:
        return narrowed(scan(data, axis=axis, dtype=np.float32), np.float16)
    return scan(data, axis=axis, dtype=dtype)


def nansum(input: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum over `dim` counting nan as 0 (of input cast to `dtype` if given, a nan cast to an
    integer dtype being 0). Derivative: 1, and 0 at the nans."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "nansum")
    elementwise.refuse_complex(input, "nansum")
    if dtype is not None:
        if input.data.dtype.kind in "fc" and np.dtype(dtype).kind not in "fc":
            input = elementwise.where(elementwise.isnan(input), 0, input)
        input = input.to(dtype)
    if input.data.dtype.kind not in "fc":
        return sum(input, dim, keepdim)  # integers hold no nan
    data = input.data
    axes = checks.dims(dim, input.ndim, "nansum") or tuple(range(input.ndim))
    kept = _kept_shape(data.shape, axes)

    def vjp(grad: np.ndarray) -> np.ndarray:
        # Times the mask rather than a `where`: an infinite grad at a nan gives nan, as in PyTorch
        # (nanmean of an all-nan slice), silently.
        with np.errstate(invalid="ignore"):
            return _spread(grad, kept, data.shape) * ~np.isnan(data)

    total = (np.nansum(data, axis=axes, keepdims=keepdim) if data.dtype is not float16  # (see `summed`)
             else narrowed(np.nansum(data, axis=axes, keepdims=keepdim, dtype=np.float32), np.float16))
    return record(total, "nansum", (input,), vjp,
                  graph_vjp=partial(_nansum_graph, kept))


def _nansum_graph(kept: tuple[int, ...], grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad.reshape(*kept).expand(*x.shape) * new_leaf(~np.isnan(x._data)),)


def nanmean(input: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean over `dim` of the elements that are not nan (nan where all are), computed in `dtype`
    if given (a floating dtype). Derivative: 1 / (the number of non-nan elements averaged), 0 at the nans."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "nanmean")
    elementwise.refuse_complex(input, "nanmean")
    if input.data.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"nanmean(): expected input to have floating point dtype but got "
                                    f"{input.dtype} (shape {input.shape})")
    if dtype is not None:
        if np.dtype(dtype).kind not in "fc":
            raise UnsupportedDtypeError(f"nanmean(): could not infer output dtype. Optional dtype must be "
                                        f"either a floating point or complex dtype. Got: {dtype}")
        input = input.to(dtype)
    present = sum(elementwise.logical_not(elementwise.isnan(input)), dim, keepdim)
    return elementwise.div(nansum(input, dim, keepdim), present.to(input.dtype))


@autocast_op("trace")
def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's diagonal (integers summed in int64). Derivative: 1 on the diagonal."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "trace")
    if input.ndim != 2:
        raise ShapeError(f"trace: expected a matrix, but got tensor with dim {input.ndim} "
                         f"(shape {input.shape})")
    return sum(input.diagonal())


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along `dim`: out[i] = x[i + 1] - x[i], n times (for bool
    tensors, x[i + 1] != x[i]), after putting `prepend` before x and `append` after it.
    Derivative: through the subtractions (the difference of shifted slices)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "diff")
    if input.ndim == 0:
        raise ShapeError("diff: expected at least one dimension, got a 0-d tensor")
    if n < 0:
        raise ArgumentValueError(f"diff: order must be non-negative but got {n}")
    dim = checks.dim(dim, input.ndim, "diff")
    pieces = [t for t in (prepend, input, append) if t is not None]
    out = movement.cat(pieces, dim) if len(pieces) > 1 else input  # (also checks their shapes)
    if n == 0:  # PyTorch: a copy of the input alone, prepend and append checked but left out
        return movement.clone(input)
    for _ in range(n):
        length = out.shape[dim]
        if length == 0:
            break
        later, earlier = out.narrow(dim, 1, length - 1), out.narrow(dim, 0, length - 1)
        out = elementwise.ne(later, earlier) if out.dtype.kind == "b" else elementwise.sub(later, earlier)
    return out


def gradient(input: Tensor, *, spacing: Any = 1, dim: int | list[int] | tuple[int, ...] | None = None,  # noqa: A002
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of sampled values along each of `dim` (every dimension by default), one
    tensor per dimension: central differences inside, one-sided ones of order `edge_order` (1 or
    2) at the two edges, as `torch.gradient` and `numpy.gradient`.

    `spacing` is the distance between samples: one number for every dimension, one per
    dimension, or per dimension a 1-D tensor of the sample coordinates (then the second-order
    formulas for uneven steps). Integer tensors give the default float. Derivative: through the
    differences (each result is a weighted sum of shifted slices, and of the coordinates).
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "gradient")
    x = input
    if edge_order not in (1, 2):
        raise RuntimeError(f"gradient: torch.gradient only supports edge_order=1 and edge_order=2 (got "
                           f"{edge_order})")
    if x.dtype.kind == "b":
        raise RuntimeError("gradient: the differences of a bool tensor are not defined (subtraction of bool "
                           f"tensors); got shape {x.shape}")
    if x.dtype.kind in "iu":
        x = x.to(float_dtype(x.dtype))
    if dim is None:
        dims = list(builtins.range(x.ndim))
    else:
        dims = [checks.dim(d, x.ndim, "gradient") for d in (dim if isinstance(dim, list | tuple) else [dim])]
        if len(set(dims)) != len(dims):
            repeated = builtins.max(dims, key=dims.count)
            raise RuntimeError(f"gradient: dim {repeated} appears multiple times in the list of dims {dim}")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, list | tuple):
        if len(spacing) != len(dims):
            given = "since dim argument was not given" if dim is None else f"for the dims {dims}"
            raise RuntimeError(f"gradient: expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to {len(dims)} ({given}), but got a list of length {len(spacing)}")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    if builtins.any(x.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError(f"gradient: expected each dimension size to be at least edge_order+1 = "
                           f"{edge_order + 1}, got shape {x.shape} along dims {dims}")
    return tuple(_gradient_along(x, d, step, edge_order) for d, step in zip(dims, steps, strict=True))


def _gradient_along(x: Tensor, dim: int, step: Any, edge_order: int) -> Tensor:
    """torch.gradient along one dimension, `step` a number (even samples) or a 1-D tensor of
    coordinates."""
    n = x.shape[dim]

    def part(start: int, length: int) -> Tensor:
        return x.narrow(dim, start, length)

    if isinstance(step, Tensor) and step.ndim != 0:
        return _gradient_uneven(x, dim, step, edge_order)
    h = step.item() if isinstance(step, Tensor) else step
    inside = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / h
        last = (part(n - 1, 1) - part(n - 2, 1)) / h
    else:
        first = (part(0, 1) * -1.5 + part(1, 1) * 2 - part(2, 1) * 0.5) / h
        last = (part(n - 3, 1) * 0.5 - part(n - 2, 1) * 2 + part(n - 1, 1) * 1.5) / h
    return movement.cat([first, inside, last], dim)


def _gradient_uneven(x: Tensor, dim: int, coordinates: Tensor, edge_order: int) -> Tensor:
    """torch.gradient along `dim` with samples at `coordinates` (second-order accurate inside,
    from the three-point Lagrange polynomial through each sample and its neighbours)."""
    n = x.shape[dim]
    if coordinates.ndim != 1 or coordinates.shape[0] != n:
        raise RuntimeError(f"gradient: expected each element of spacing to be a 1-D tensor of the size {n} "
                           f"of dimension {dim}, got one of shape {coordinates.shape}")
    if coordinates.dtype.kind in "iub":
        coordinates = coordinates.to(float_dtype(coordinates.dtype))
    shape = [1] * x.ndim
    shape[dim] = n - 1
    dx = (coordinates[1:] - coordinates[:-1]).reshape(shape)

    def part(t: Tensor, start: int, length: int) -> Tensor:
        return t.narrow(dim, start, length)

    before, after = part(dx, 0, n - 2), part(dx, 1, n - 2)
    inside = (part(x, 0, n - 2) * (-after / (before * (before + after)))
              + part(x, 1, n - 2) * ((after - before) / (before * after))
              + part(x, 2, n - 2) * (before / (after * (before + after))))
    if edge_order == 1:
        first = (part(x, 1, 1) - part(x, 0, 1)) / part(dx, 0, 1)
        last = (part(x, n - 1, 1) - part(x, n - 2, 1)) / part(dx, n - 2, 1)
    else:
        h1, h2 = part(dx, 0, 1), part(dx, 1, 1)
        first = (part(x, 0, 1) * (-(2 * h1 + h2) / (h1 * (h1 + h2))) + part(x, 1, 1) * ((h1 + h2) / (h1 * h2))
                 + part(x, 2, 1) * (-h1 / (h2 * (h1 + h2))))
        h1, h2 = part(dx, n - 3, 1), part(dx, n - 2, 1)
        last = (part(x, n - 3, 1) * (h2 / (h1 * (h1 + h2))) + part(x, n - 2, 1) * (-(h1 + h2) / (h1 * h2))
                + part(x, n - 1, 1) * ((2 * h2 + h1) / (h2 * (h1 + h2))))
    return movement.cat([first, inside, last], dim)


@autocast_op("cumsum")
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running sum along dim: out[i] = x[0] + ... + x[i]. Derivative: the sum of grad from i on."""
    data, axis = _scan_input(input, dim, "cumsum")
    out = _running(np.cumsum, data, axis, _scan_dtype(input, dtype, "cumsum"))

    def vjp(grad: np.ndarray) -> np.ndarray:
        return _reverse_cumsum(grad.reshape(data.shape), axis).reshape(input.shape)

    return record(out.reshape(input.shape), "cumsum", (input,), vjp, saved=(),
                  graph_vjp=linear_graph("cumsum", vjp, partial(cumsum, dim=dim)))


@autocast_op("cumprod")
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running product along dim: out[i] = x[0] * ... * x[i].

    Derivative: out[i] = the product of the others before i times x[i]; see `_cumprod_vjp`.
    """
    data, axis = _scan_input(input, dim, "cumprod")
    data = data.astype(_scan_dtype(input, dtype, "cumprod"), copy=False)
    out = _running(np.cumprod, data, axis, data.dtype)
    return record(out.reshape(input.shape), "cumprod", (input,),
                  lambda grad: _cumprod_vjp(data, out, grad.reshape(data.shape), axis).reshape(input.shape),
                  graph_vjp=partial(_cumprod_graph, axis))


def _cumprod_graph(axis: int, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """cumprod's gradient: the sum from i on of grad * out, over x[i], where x holds no zero (PyTorch's
    formula); else x[i]'s term j is grad[j] times the running product to j of the others."""
    shape = x.shape
    if not x.ndim:
        grad, out, x = grad.reshape(1), out.reshape(1), x.reshape(1)
    if not (x._data == 0).any():
        return (((grad * out).flip(axis).cumsum(axis).flip(axis) / x).reshape(*shape),)
    n = x.shape[axis]
    later = namespace(x._data).triu(namespace(x._data).ones((n, n), dtype=bool))  # [i, j]: j >= i
    others = cumprod(_each_replaced(x, axis), axis + 1)  # [.., i, j, ..]: x[:j+1]'s product without x[i]
    terms = elementwise.where(new_leaf(later.reshape((n, n) + (1,) * (x.ndim - axis - 1))), others, 0.0)
    return ((grad.unsqueeze(axis) * terms).sum(axis + 1).reshape(*shape),)


def _cumprod_vjp(data: np.ndarray, out: np.ndarray, grad: np.ndarray, axis: int) -> np.ndarray:
    """x[i]'s gradient, sum over j >= i of grad[j] * (the product of x[:j+1] without x[i]).

    Before a slice's first zero that is sum(grad[j] out[j] for j >= i) / x[i] (x[i] is not 0;
    out is 0 from the zero on). At the first zero z it is out[z-1] times the sum over j >= z of
    grad[j] * x[z+1] * ... * x[j]. After it, every product holds the zero: 0. No 0 / 0 anywhere.
    """
    zeros_so_far = np.cumsum(data == 0, axis=axis)
    before_zero = zeros_so_far == 0
    first_zero = (data == 0) & (zeros_so_far == 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        result = np.where(before_zero, _reverse_cumsum(grad * out, axis) / np.where(before_zero, data, 1), 0)
    # x[z+1] * ... * x[j]: a running product that starts after the first zero (ones up to it).
    after_zero = np.cumprod(np.where(before_zero | first_zero, 1, data), axis=axis)
    at_zero = _exclusive_cumprod(data, axis) * _reverse_cumsum(grad * after_zero, axis)
    return np.where(first_zero, at_zero, result)


def _scatter_add_along(grad: np.ndarray, index: np.ndarray, axis: int, shape: tuple[int, ...]) -> np.ndarray:
    """An array of `shape` where each grad[..., j, ...] is added at index[..., j, ...] along `axis`."""
    full = np.zeros_like(grad, shape=shape)
    # index says where along `axis`; every other dimension maps to itself (open grids).
    where = [np.arange(n, like=index).reshape((-1,) + (1,) * (index.ndim - d - 1))
             for d, n in enumerate(index.shape)]
    where[axis] = index
    ufunc_at(np.add, full, tuple(where), grad)  # add, not assign: several outputs may share an index
    return full


def _cumulative_extreme(x: Tensor, dim: int, op: str) -> tuple[Tensor, Tensor]:
    """cummax or cummin: the running extreme and the index it came from (the latest on ties)."""
    data, axis = _scan_input(x, dim, op)
    values = accumulate(np.maximum if op == "cummax" else np.minimum, data, axis)
    # Where x reaches the running extreme (or is nan, which the extreme then stays), the index
    # moves there; elsewhere it keeps the latest such place.
    reached = data == values
    if data.dtype.kind in "fc":
        reached |= np.isnan(data)
    positions = np.arange(data.shape[axis], like=data).reshape((-1,) + (1,) * (data.ndim - axis - 1))
    indices = accumulate(np.maximum, np.where(reached, positions, 0), axis).astype(np.int64, copy=False)
    shape = data.shape

    def vjp(grad: np.ndarray) -> np.ndarray:
        return _scatter_add_along(grad.reshape(shape), indices, axis, shape).reshape(x.shape)

    graph = linear_graph(op, vjp, partial(_gather_along, shape, axis, indices, x.shape))
    return (record(values.reshape(x.shape), op, (x,), vjp, saved=(), graph_vjp=graph),
            new_leaf(indices.reshape(x.shape)))


def cummax(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """Running maximum along dim, as the named tuple `(values, indices)`.

    Derivative: each grad[j] goes to x[indices[j]] (the latest maximum, as PyTorch).
    """
    return return_types.cummax(*_cumulative_extreme(input, dim, "cummax"))


def cummin(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """Running minimum along dim, as the named tuple `(values, indices)`.

    Derivative: each grad[j] goes to x[indices[j]] (the latest minimum, as PyTorch).
    """
    return return_types.cummin(*_cumulative_extreme(input, dim, "cummin"))


def _reverse_logcumsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    """log(sum(exp(a[i:]))) along `axis`, for each i."""
    return np.flip(accumulate(np.logaddexp, np.flip(a, axis), axis), axis)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(exp(x[0]) + ... + exp(x[i])) along dim. Derivative: sum over j >= i of grad[j] exp(x[i] - out[j]).

    The gradient is summed in log space, its positive and negative parts apart (as PyTorch), so
    it stays finite where exp(x) would overflow.
    """
    data, axis = _scan_input(input, dim, "logcumsumexp")
    if input.data.dtype.kind not in "fc":
        # NotImplementedError is a RuntimeError: PyTorch raises it for integer input here.
        raise NotImplementedError(f"logcumsumexp(): not implemented for integer or bool tensors "
                                  f"(dtype {input.dtype}); use .float() first")
    if data.dtype.kind == "c":
        return _complex_logcumsumexp(input, data, axis)
    with np.errstate(invalid="ignore"):  # inf - inf inside a slice of infinities: nan, as in PyTorch
        if data.dtype is float16:  # (in float32, rounded once, as PyTorch's: see `_running`)
            out = narrowed(accumulate(np.logaddexp, data.astype(np.float32), axis), np.float16)
        else:
            out = accumulate(np.logaddexp, data, axis)

    def vjp(grad: np.ndarray) -> np.ndarray:
        grad = grad.reshape(data.shape)
        lowest = np.finfo(grad.dtype).min
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_size = np.log(np.abs(grad))
            positive = np.exp(_reverse_logcumsumexp(np.where(grad > 0, log_size, lowest) - out, axis) + data)
            negative = np.exp(_reverse_logcumsumexp(np.where(grad < 0, log_size, lowest) - out, axis) + data)
        return (positive - negative).reshape(input.shape)

    return record(out.reshape(input.shape), "logcumsumexp", (input,), vjp, saves_output=True,
                  graph_vjp=partial(_logcumsumexp_graph, axis))


def _complex_scan_logaddexp(a: np.ndarray, axis: int) -> np.ndarray:
    """logcumsumexp of complex `a` along `axis`, one step at a time as PyTorch's loop (which
    fixes the imaginary parts' branch: see `elementwise.complex_logaddexp`), in complex128."""
    a = np.moveaxis(a.astype(np.complex128, copy=False), axis, 0)
    out = np.empty_like(a)
    total = np.empty_like(a, shape=a.shape[1:])
    total[...] = -np.inf  # PyTorch's starting value: log of an empty sum
    for i in builtins.range(a.shape[0]):
        total = out[i, ...] = elementwise.complex_logaddexp(a[i, ...], total)
    return np.moveaxis(out, 0, axis)


def _complex_logcumsumexp(input: Tensor, data: np.ndarray, axis: int) -> Tensor:
    """logcumsumexp of complex input. Derivative (PyTorch's, before autograd's conjugation):
    exp(reversed logcumsumexp of log(grad) - out, plus x) -- no split by sign: a complex log
    takes any sign."""
    out = _complex_scan_logaddexp(data, axis).astype(data.dtype, copy=False)

    def vjp(grad: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            logs = np.flip(np.log(grad.reshape(data.shape)) - out, axis)
            total = np.flip(_complex_scan_logaddexp(logs, axis), axis)
            return np.exp(total + data).astype(data.dtype, copy=False).reshape(input.shape)

    return record(out.reshape(input.shape), "logcumsumexp", (input,), vjp, saves_output=True,
                  graph_vjp=partial(_complex_logcumsumexp_graph, axis))


def _complex_logcumsumexp_graph(axis: int, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The complex numpy formula with tensor ops: exp(reversed logcumsumexp of log(grad) - out, plus
    x), which `higher_order.conjugated_graph` turns into PyTorch's complex logcumsumexp_backward."""
    shape = x.shape
    if not x.ndim:
        grad, out, x = grad.reshape(1), out.reshape(1), x.reshape(1)
    logs = (grad.log() - out).flip(axis)
    return ((logcumsumexp(logs, axis).flip(axis) + x).exp().reshape(*shape),)


def _logcumsumexp_graph(axis: int, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The numpy formula with tensor ops (PyTorch's logcumsumexp_backward): the reversed
    logcumsumexp of log|grad| - out, for grad's positive and negative parts apart, plus x, exp'd."""
    shape = x.shape
    if not x.ndim:
        grad, out, x = grad.reshape(1), out.reshape(1), x.reshape(1)
    log_size = grad.abs().log()
    lowest = float(np.finfo(grad._data.dtype).min)
    parts = []
    for side in (grad._data > 0, grad._data < 0):
        logs = elementwise.where(new_leaf(side), log_size, lowest) - out
        parts.append((logcumsumexp(logs.flip(axis), axis).flip(axis) + x).exp())
    return ((parts[0] - parts[1]).reshape(*shape),)


# --- sorting: sort, argsort, topk, median ------------------------------------------------------------


def _sorting_order(data: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Indices that sort `data` along `axis`, stable (ties keep their order), nan counted largest.

    Descending: sort the reversed data ascending, then reverse the order back, so that ties
    still come in increasing index order.
    """
    if not descending:
        return np.argsort(data, axis=axis, kind="stable")
    reversed_order = np.argsort(np.flip(data, axis), axis=axis, kind="stable")
    return np.flip(data.shape[axis] - 1 - reversed_order, axis)


def _not_bool(x: Tensor, op: str) -> None:
    """topk and median compare numbers: PyTorch refuses bool tensors (NotImplementedError)."""
    if x.data.dtype == np.bool_:
        raise NotImplementedError(f"{op}(): not implemented for bool tensors; use .int() or .float() first")


def _take_along(x: Tensor, data: np.ndarray, index: np.ndarray, axis: int, op: str,
                shape: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    """(x's elements at `index` along `axis`, the index), both in `shape`; grad goes to the index."""
    values = np.take_along_axis(data, index, axis=axis)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = np.zeros_like(grad, shape=data.shape)
        np.put_along_axis(full, index, grad.reshape(index.shape), axis=axis)  # indices differ in a slice
        return full.reshape(x.shape)

    indices = new_leaf(index.astype(np.int64).reshape(shape))
    graph = linear_graph(op, vjp, partial(_gather_along, data.shape, axis, index, shape))
    return record(values.reshape(shape), op, (x,), vjp, saved=(), graph_vjp=graph), indices


def sort(input: Tensor, dim: int = -1, descending: bool = False, *,
         stable: bool = False) -> tuple[Tensor, Tensor]:
    """x sorted along dim, as the named tuple `(values, indices)`: values = x[indices].

    Derivative: grad[j] goes back to x[indices[j]]. The sort is always stable (ties keep their
    order), which `stable=False` allows; nan sorts as the largest value, as in PyTorch.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "sort")
    data, axis = _scan_input(input, dim, "sort")
    order = _sorting_order(data, axis, descending)
    return return_types.sort(*_take_along(input, data, order, axis, "sort", input.shape))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices that sort x along dim (int64; no gradient): `sort(x, dim).indices`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "argsort")
    data, axis = _scan_input(input, dim, "argsort")
    return new_leaf(_sorting_order(data, axis, descending).astype(np.int64).reshape(input.shape))


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> tuple[Tensor, Tensor]:  # noqa: A002
    """The k largest (or smallest) elements along dim, as the named tuple `(values, indices)`.

    Derivative: grad[j] goes back to x[indices[j]]. The result is always sorted (PyTorch
    leaves the order free when `sorted=False`); nan counts as the largest value.
    """
    data, axis = _scan_input(input, dim, "topk")
    _not_bool(input, "topk")
    k = checks.as_int(k, "topk", "k")
    if not 0 <= k <= data.shape[axis]:
        raise RuntimeError(f"topk(): selected index k out of range: k={k} for dim {dim} of size "
                           f"{data.shape[axis]} (input shape {input.shape})")
    if not input.ndim:
        k = 1  # a 0-d tensor gives its one element for k of 0 or 1, as PyTorch
    order = _sorting_order(data, axis, descending=largest)[_along(axis, data.ndim, slice(0, k))]
    shape = input.shape[:axis] + (k,) + input.shape[axis + 1:] if input.ndim else ()
    return return_types.topk(*_take_along(input, data, order, axis, "topk", shape))


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The lower median: for n elements, the ((n - 1) // 2)-th smallest; nan if there is a nan.

    Without dim, one value whose gradient is split evenly among the elements equal to it (as
    PyTorch). With dim, the named tuple `(values, indices)` along it; the gradient goes to the
    element at `indices`.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "median")
    if dim is None:
        _not_bool(input, "median")
        elementwise.refuse_complex(input, "median")
        return _median_of_all(input)
    data, axis = _scan_input(input, dim, "median")
    _nonempty(input, axis, "median")
    _not_bool(input, "median")
    middle = (data.shape[axis] - 1) // 2
    index = np.argsort(data, axis=axis, kind="stable")[_along(axis, data.ndim, slice(middle, middle + 1))]
    if data.dtype.kind in "fc":  # a slice holding nan has median nan, at its first nan
        nan = np.isnan(data)
        index = np.where(nan.any(axis=axis, keepdims=True), np.argmax(nan, axis=axis, keepdims=True), index)
    shape = _reduced_shape(input.shape, axis, keepdim)
    return return_types.median(*_take_along(input, data, index, axis, "median", shape))


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """`median` of the elements that are not nan (nan where all are): the lower median of each
    slice's numbers. With dim, the named tuple `(values, indices)`; gradients as `median`'s."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "nanmedian")
    if dim is not None:  # (PyTorch checks the dim before the dtype)
        _nonempty(input, checks.dim(dim, input.ndim, "nanmedian"), "nanmedian")
    _not_bool(input, "nanmedian")
    elementwise.refuse_complex(input, "nanmedian")
    if input.data.dtype.kind not in "fc":
        out = median(input, dim, keepdim)
        return out if dim is None else return_types.nanmedian(*out)
    if dim is None:
        flat = input.data.reshape(-1)
        numbers = flat[~np.isnan(flat)]
        if numbers.size == 0:
            return _median_of_all(input)  # nan, as the median of nothing
        value = namespace(flat).asarray(np.sort(numbers)[(numbers.size - 1) // 2])
        return record(value, "nanmedian", (input,),
                      lambda grad: (input.data == value)
                      * (grad / np.add.reduce(input.data == value, axis=None)),
                      graph_vjp=_median_graph)  # (value is no nan: the elements equal to it share grad)
    data, axis = _scan_input(input, dim, "nanmedian")
    _nonempty(input, axis, "nanmedian")
    order = np.argsort(data, axis=axis, kind="stable")  # nan sorts last
    counted = np.add.reduce(~np.isnan(data), axis=axis, keepdims=True)
    middle = np.maximum(counted - 1, 0) // 2
    index = np.take_along_axis(order, middle, axis=axis)
    shape = _reduced_shape(input.shape, axis, keepdim)
    return return_types.nanmedian(*_take_along(input, data, index, axis, "nanmedian", shape))


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The k-th smallest element along `dim` (k from 1), as the named tuple `(values, indices)`.
    Derivative: grad goes to x[indices]. nan counts as the largest value."""
    data, axis = _scan_input(input, dim, "kthvalue")
    _nonempty(input, axis, "kthvalue")
    _not_bool(input, "kthvalue")
    k = checks.as_int(k, "kthvalue", "k")
    if not 1 <= k <= data.shape[axis]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}: k={k}, "
                           f"size {data.shape[axis]} (input shape {input.shape})")
    index = np.argsort(data, axis=axis, kind="stable")[_along(axis, data.ndim, slice(k - 1, k))]
    shape = _reduced_shape(input.shape, axis, keepdim)
    return return_types.kthvalue(*_take_along(input, data, index, axis, "kthvalue", shape))


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The smallest and the largest values (over `dim`, or all), as the named tuple `(min, max)`.
    Gradients as `amin`'s and `amax`'s: split evenly among ties."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "aminmax")
    if dim is None and input.numel() == 0:
        raise RuntimeError(f"aminmax(): cannot compute aminmax over an empty tensor of shape {input.shape}")
    if dim is not None:
        _nonempty(input, checks.dim(dim, input.ndim, "aminmax"), "aminmax")
    dims = () if dim is None else dim
    return return_types.aminmax(amin(input, dims, keepdim), amax(input, dims, keepdim))


def msort(input: Tensor) -> Tensor:
    """x sorted along its first dimension: `sort(x, dim=0).values`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "msort")
    return sort(input, 0).values


_QUANTILE_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


@autocast_op("quantile")
def quantile(input: Tensor, q: float | Tensor, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles along `dim` (of all elements for None): the value at rank q (n - 1) of
    the sorted slice, between neighbours as `interpolation` says; nan where a slice holds a nan.
    A 1-D q puts its dimension first. Gradient: through the sort and the interpolation (also
    to a tensor q, as PyTorch: the linear interpolation's weight changes with q)."""
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", ignore_nan=False)


@autocast_op("nanquantile")
def nanquantile(input: Tensor, q: float | Tensor, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """`quantile` of the elements that are not nan (nan where all are)."""
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", ignore_nan=True)


def _quantile(x: Tensor, q: float | Tensor, dim: int | None, keepdim: bool, interpolation: str,
              op: str, ignore_nan: bool) -> Tensor:
    qs = _checked_quantiles(x, q, interpolation, op)
    axis = None if dim is None else checks.dim(dim, x.ndim, op)
    rows = x.reshape(-1) if axis is None or x.ndim == 0 else x.movedim(axis, -1)
    ordered = sort(rows, -1).values  # each row ascending, nan last
    data = ordered.data
    counted = (np.add.reduce(~np.isnan(data), axis=-1, keepdims=True) if ignore_nan
               else namespace(data).full(data.shape[:-1] + (1,), data.shape[-1]))
    # (*rows, Q): where each quantile sits in its sorted row (q made where the data lives)
    ranks = array_like(qs.reshape(-1), data) * (counted - 1).astype(data.dtype)
    lower, upper = _quantile_neighbours(ranks, interpolation)
    last = data.shape[-1] - 1
    below = ordered.gather(-1, new_leaf(np.clip(lower, 0, last).astype(np.int64)))
    above = ordered.gather(-1, new_leaf(np.clip(upper, 0, last).astype(np.int64)))
    blank = (counted == 0) if ignore_nan else np.isnan(data).any(axis=-1, keepdims=True)
    if interpolation == "linear":
        weight = new_leaf((ranks - lower).astype(data.dtype))
        if isinstance(q, Tensor) and q.requires_grad:  # the weight q (n - 1) - lower carries q's gradient
            moving = _cast(q, data.dtype).reshape(-1) * new_leaf((counted - 1).astype(data.dtype))
            moving = moving - new_leaf(lower.astype(data.dtype))
            # (not where the result is nan: PyTorch's rank there is a constant)
            weight = elementwise.where(new_leaf(np.broadcast_to(blank, ranks.shape)), weight, moving)
        out = elementwise.lerp(below, above, weight)
    else:
        out = (below + above) * 0.5 if interpolation == "midpoint" else below
    if blank.any():  # a row of nothing but nan (nanquantile), or holding a nan (quantile)
        out = elementwise.where(new_leaf(np.broadcast_to(blank, out.shape)), float("nan"), out)
    out = out.movedim(-1, 0)  # the q dimension first
    if keepdim:
        reduced = tuple(range(x.ndim)) if axis is None else (axis,)
        out = out.reshape(out.shape[0], *_kept_shape(x.shape, reduced))
    return out.squeeze(0) if qs.ndim == 0 else out


def _checked_quantiles(x: Tensor, q: float | Tensor, interpolation: str, op: str) -> np.ndarray:
    """q as a host array in x's dtype, after PyTorch's checks of x, q and the interpolation."""
    if x.data.dtype.kind != "f":
        raise UnsupportedDtypeError(f"{op}() input tensor must be either float or double dtype, "
                                    f"got {x.dtype}")
    if interpolation not in _QUANTILE_INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of {', '.join(_QUANTILE_INTERPOLATIONS)}. "
                           f"Got {interpolation!r}")
    qs = np.asarray(to_numpy(q.data) if isinstance(q, Tensor) else q, dtype=x.data.dtype)
    if qs.ndim > 1:
        raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got shape {qs.shape}")
    if qs.size and (qs.min() < 0 or qs.max() > 1):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if x.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    return qs


def _quantile_neighbours(ranks: np.ndarray, interpolation: str) -> tuple[np.ndarray, np.ndarray]:
    """The ranks of the two sorted elements a quantile is taken between (the same one for lower,
    higher and nearest)."""
    if interpolation == "lower":
        return np.floor(ranks), np.floor(ranks)
    if interpolation == "higher":
        return np.ceil(ranks), np.ceil(ranks)
    if interpolation == "nearest":
        return np.round(ranks), np.round(ranks)  # half to even, as torch.round
    return np.floor(ranks), np.ceil(ranks)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The most frequent value along `dim` (the smallest of equally frequent ones) and the index
    of its last occurrence, as the named tuple `(values, indices)`. Gradient: to that index."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "mode")
    data, axis = _scan_input(input, dim, "mode")
    _nonempty(input, axis, "mode")
    moved = np.moveaxis(data, axis, -1)
    order = np.argsort(moved, axis=-1, kind="stable")  # equal values together, in index order
    ordered = np.take_along_axis(moved, order, -1)
    xp, length = namespace(data), ordered.shape[-1]
    first = xp.ones(ordered.shape[:-1] + (1,), dtype=bool)
    starts = np.concatenate([first, ordered[..., 1:] != ordered[..., :-1]], -1)  # where each run begins
    positions = xp.arange(length)
    run_start = accumulate(np.maximum, np.where(starts, positions, 0), -1)
    run_length = positions - run_start + 1  # at each element, how many equal ones so far
    # The longest run ends at the last occurrence of the mode; argmax takes the first (smallest value).
    last = np.argmax(run_length, axis=-1)[..., None]
    index = np.moveaxis(np.take_along_axis(order, last, -1), -1, axis)
    shape = _reduced_shape(input.shape, axis, keepdim)
    return return_types.mode(*_take_along(input, data, index, axis, "mode", shape))


def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values (or slices along `dim`), sorted; with `return_inverse` where each
    element went, with `return_counts` how often each occurs. No gradient, as in PyTorch."""
    if not isinstance(x, Tensor):
        raise not_a_tensor(x, "unique")
    elementwise.refuse_complex(x, "unique")
    data = x.data
    axis = None if dim is None else _unique_axis(x, dim, "unique")
    values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=axis)
    inverse = inverse.reshape(data.shape if axis is None else (data.shape[axis],))
    return _unique_results(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """Each run of equal consecutive values (or slices along `dim`) kept once; inverse and counts
    as `unique`'s. No gradient."""
    x = input
    if not isinstance(x, Tensor):
        raise not_a_tensor(x, "unique_consecutive")
    elementwise.refuse_complex(x, "unique_consecutive")
    data = x.data if dim is not None else x.data.reshape(-1)
    axis = 0 if dim is None else _unique_axis(x, dim, "unique_consecutive")
    moved, xp = np.moveaxis(data, axis, 0), namespace(data)
    if moved.shape[0] == 0:
        starts = xp.zeros(0, dtype=bool)
    else:
        slices = moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))  # (a 0-d tensor: one slice)
        differs = (slices[1:] != slices[:-1]).any(axis=1)
        starts = np.concatenate([xp.ones(1, dtype=bool), differs])
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), moved.shape[0]))
    values = np.moveaxis(moved[starts], 0, axis)
    inverse = inverse.reshape(x.shape) if dim is None else inverse
    return _unique_results(values, inverse, counts, return_inverse, return_counts)


def _unique_axis(x: Tensor, dim: int, op: str) -> int:
    """The dim whose slices unique compares: the others must hold something to compare (PyTorch)."""
    axis = checks.dim(dim, x.ndim, op)
    if builtins.any(n == 0 for i, n in enumerate(x.shape) if i != axis):
        raise RuntimeError(f"{op}(): there are 0 sized dimensions, and they aren't selected, so unique "
                           f"cannot be applied (shape {x.shape}, dim={dim})")
    return axis


def _unique_results(values: np.ndarray, inverse: np.ndarray, counts: np.ndarray, return_inverse: bool,
                    return_counts: bool) -> Any:
    out = [new_leaf(values)]
    if return_inverse:
        out.append(new_leaf(inverse.astype(np.int64)))
    if return_counts:
        out.append(new_leaf(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in a 1-D tensor of non-negative integers (summing
    `weights` instead of counting, if given), at least `minlength` long. No gradient."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "bincount")
    if input.data.dtype.kind not in "iu":
        raise UnsupportedDtypeError(f"bincount(): not implemented for dtype {input.dtype} "
                                    f"(shape {input.shape}); it "
                                    f"counts non-negative integers")
    if input.ndim != 1:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got shape "
                           f"{input.shape} "
                           f"and dtype {input.dtype}")
    if minlength < 0:
        raise ArgumentValueError(f"bincount(): minlength should be >= 0, got {minlength}")
    if input.numel() and input.data.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs")
    if weights is None:
        return new_leaf(np.bincount(input.data, minlength=minlength).astype(np.int64))
    w = weights.data
    dtype = w.dtype if w.dtype.kind == "f" else np.dtype(np.float64)  # PyTorch: integer weights sum in double
    return new_leaf(np.bincount(input.data, weights=w, minlength=minlength).astype(dtype))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of `bins` equal bins over [min, max] (the data's own range when both are 0);
    values outside are left out, the top edge counts in the last bin. No gradient."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "histc")
    data = input.data.reshape(-1)
    if data.dtype.kind != "f":
        raise UnsupportedDtypeError(f"histc: \"histogram_cpu\" not implemented for {input.dtype}")
    bins = checks.as_int(bins, "histc", "bins")
    if bins <= 0:
        raise ArgumentValueError(f"histc: bins must be > 0, but got {bins}")
    low, high = float(min), float(max)
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise RuntimeError(f"histc: max must be larger than min, got min={min} and max={max}")
    # PyTorch's rule: bin int((x - low) * bins / (high - low)), worked out in the input's dtype
    # (so float16 rounds at each step), for x in [low, high]; the top edge goes in the last bin.
    low, high = data.dtype.type(low), data.dtype.type(high)
    inside = data[(data >= low) & (data <= high)]
    with np.errstate(over="ignore", invalid="ignore"):
        position = ((inside - low) * data.dtype.type(bins) / (high - low)).astype(np.int64)
    position = np.clip(position, 0, bins - 1)
    return new_leaf(np.bincount(position, minlength=bins)[:bins].astype(data.dtype))


def _median_of_all(x: Tensor) -> Tensor:
    """The lower median of every element (nan for none). Derivative: split among its equals."""
    flat = x.data.reshape(-1)
    xp = namespace(flat)
    if flat.size == 0:  # nan, cast to x's dtype as PyTorch casts it (an integer's is what C's cast gives)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value = xp.asarray(np.nan).astype(flat.dtype)
        return record(value, "median", (x,), lambda grad: np.zeros_like(x.data))
    value = np.sort(flat)[(flat.size - 1) // 2]  # numpy sorts nan last: a nan anywhere is found below
    if flat.dtype.kind in "fc" and np.isnan(flat).any():
        value = flat.dtype.type(np.nan)
    value = xp.asarray(value)  # numpy gives a scalar: an array, where the data lives

    def vjp(grad: np.ndarray) -> np.ndarray:
        equal = np.isnan(x.data) if np.isnan(value) else x.data == value
        return equal * (grad / np.add.reduce(equal, axis=None))

    return record(value, "median", (x,), vjp, graph_vjp=_median_graph)


def _median_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    equal = np.isnan(x._data) if np.isnan(out._data) else x._data == out._data
    return (grad * new_leaf((equal / np.add.reduce(equal, axis=None)).astype(x._data.dtype, copy=False)),)


# --- torch.trapezoid and cumulative_trapezoid, histogram and histogramdd, isin ---------------------


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along `dim`: sum((y[i+1] + y[i]) * (x[i+1] - x[i])) / 2, with sample
    points `x` (1-d, or y's shape) or a constant spacing `dx` (default 1). Derivative: through
    the sums, products and differences it is made of."""
    later, earlier, spacing, dim = _trapezoid_parts(y, x, dx, dim, "trapezoid")
    return ((later + earlier) * spacing).sum(dim) / 2


trapz = trapezoid


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal rule along `dim` (one value fewer than y there): out[i] is the
    `trapezoid` of y[0 .. i+1]. Derivative: through the running sum and the products."""
    later, earlier, spacing, dim = _trapezoid_parts(y, x, dx, dim, "cumulative_trapezoid")
    return cumsum((later + earlier) * spacing, dim) / 2


def _trapezoid_parts(y: Tensor, x: Tensor | None, dx: float | None, dim: int,
                     op: str) -> tuple[Tensor, Tensor, Any, int]:
    """y's later and earlier neighbours along dim, the spacing between them (a number or a
    tensor that broadcasts against them) and dim as a non-negative index."""
    if not isinstance(y, Tensor):
        raise TypeError(f"{op}(): argument 'y' must be a Tensor, not {type(y).__name__}")
    if y.dtype.kind == "b":
        raise RuntimeError(f"{op}(): received a bool input for `y`, but bool is not supported")
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        raise TypeError(f"{op}(): takes sample points x (a Tensor) or a spacing dx, not both; got "
                        f"x={type(x).__name__}, dx={dx!r}")
    if y.ndim == 0:
        raise IndexError(f"{op}(): dimension {dim} is out of range for a 0-d y (shape ()): y needs a "
                         "dimension to integrate along")
    dim = checks.dim(dim, y.ndim, op)
    length = y.shape[dim]
    inner = builtins.max(length - 1, 0)
    later, earlier = (y.narrow(dim, 1, inner) if length else y), y.narrow(dim, 0, inner)
    if x is None:
        return later, earlier, 1 if dx is None else dx, dim
    if x.ndim == 1:
        if x.shape[0] != length:
            raise ShapeError(f"{op}(): there must be one `x` value for each sample point: x has shape "
                             f"{x.shape}, y has {length} points along dim {dim} (shape {y.shape})")
        spacing = diff(x).reshape((inner,) + (1,) * (y.ndim - 1 - dim)) if length else x
        return later, earlier, spacing, dim
    if x.ndim != y.ndim:
        raise ShapeError(f"{op}(): x of shape {x.shape} must be 1-d or have y's {y.ndim} dimensions "
                         f"(y has shape {y.shape})")
    if x.shape[dim] != length:
        raise ShapeError(f"{op}(): there must be one `x` value for each sample point: x has shape "
                         f"{x.shape}, y has shape {y.shape} (dim {dim})")
    return later, earlier, diff(x, dim=dim) if length else x, dim


def histogram(input: Tensor, bins: int | Tensor = 100, *, range: tuple[float, float] | None = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, Tensor]:
    """Counts of `input`'s elements in `bins` bins of equal width over `range` (default: from the
    smallest element to the largest), or between the edges of a 1-d `bins` tensor; each bin holds
    [left, right) and the last also its right edge. Returns `(hist, bin_edges)`, in input's
    floating dtype. `weight` counts each element with its weight; `density` divides by the total
    and the bin's width. No gradient."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "histogram")
    if weight is not None and weight.shape != input.shape:
        raise ShapeError(f"histogram(): weight must have the input's shape {input.shape}, got {weight.shape}")
    points = input.reshape(-1, 1)
    bins = [bins] if isinstance(bins, Tensor) else bins
    hist, edges = _histogramdd(points, bins, range, weight, density, "histogram")
    return return_types.histogram(hist, edges[0])


def histogramdd(input: Tensor, bins: Any, range: Any = None, weight: Tensor | None = None,  # noqa: A002
                density: bool = False) -> tuple[Tensor, tuple[Tensor, ...]]:
    """The D-dimensional histogram of the points in `input` (..., D): counts in a grid of bins
    (`bins` an int or one int per dimension, over `range` given as [min0, max0, min1, ...] or
    each dimension's extent; or one 1-d tensor of edges per dimension). Returns
    `(hist, bin_edges)`, hist of shape (bins0, bins1, ...). No gradient."""
    if input.ndim < 2:
        raise ShapeError(f"histogramdd(): input should have at least 2 dimensions (points, coordinates), got "
                         f"shape {input.shape}")
    if weight is not None and weight.shape != input.shape[:-1]:
        raise ShapeError(f"histogramdd(): if weight tensor is provided it should have the same shape as the "
                         f"input tensor excluding its innermost dimension, but got input with shape "
                         f"{input.shape} and weight with shape {weight.shape}")
    points = input.reshape(-1, input.shape[-1])
    hist, edges = _histogramdd(points, bins, range, weight, density, "histogramdd")
    return return_types.histogramdd(hist, edges)


def _histogramdd(points: Tensor, bins: Any, range: Any, weight: Tensor | None, density: bool,  # noqa: A002
                 op: str) -> tuple[Tensor, tuple[Tensor, ...]]:
    """The histogram of N points of D coordinates (N, D): (hist, the D edge tensors)."""
    data, dims = points.data, points.shape[-1]
    if data.dtype.kind != "f":
        raise UnsupportedDtypeError(f"{op}(): not implemented for dtype {points.dtype}, only floating ones")
    if weight is not None and weight.dtype != points.dtype:
        raise RuntimeError(f"{op}(): if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input {points.dtype} and weight {weight.dtype}")
    xp = namespace(data)
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool):
        bins = [int(bins)] * dims
    if len(bins) != dims:
        raise RuntimeError(f"{op}(): expected {dims} sequences of bin edges or bin counts (one per dimension "
                           f"of the points), got {len(bins)}")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"{op}(): expected range to give a min and a max for each of the {dims} "
                           f"dimensions, got {len(range)} numbers")
    edges = [_bin_edges(data[:, d], bins[d], None if range is None else range[2 * d:2 * d + 2], d, op)
             for d in builtins.range(dims)]
    counts = [e.shape[0] - 1 for e in edges]
    flat = xp.zeros(data.shape[0], dtype=np.int64)
    inside = xp.ones(data.shape[0], dtype=bool)
    for d, e in enumerate(edges):
        values = data[:, d]
        # PyTorch's rule, which also holds for edges out of order: a point counts when it lies
        # between the first and the last edge, in the bin that a binary search (C++'s
        # upper_bound) finds; the last bin keeps its right edge.
        position = _upper_bound(e, values) - 1
        position = xp.where(position == counts[d], counts[d] - 1, position)
        inside &= (values >= e[0]) & (values <= e[-1])
        flat = flat * counts[d] + xp.clip(position, 0, builtins.max(counts[d] - 1, 0))
    weights = None if weight is None else weight.data.reshape(-1)[inside]
    total = math.prod(counts)
    hist = xp.bincount(flat[inside], weights=weights, minlength=total)[:total].astype(data.dtype)
    hist = hist.reshape(counts)
    if density:
        with np.errstate(invalid="ignore", divide="ignore"):  # (no points, or bins of no width: as PyTorch)
            hist = hist / hist.sum()
            for d, e in enumerate(edges):
                hist = hist / (e[1:] - e[:-1]).reshape((-1,) + (1,) * (dims - 1 - d))
        hist = hist.astype(data.dtype)
    return new_leaf(hist), tuple(new_leaf(e) for e in edges)


def _upper_bound(edges: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each value, the index that C++'s std::upper_bound finds in `edges`: the first edge
    above the value when the edges are sorted (numpy's searchsorted, side="right"), and the
    same halving steps when they are not (where searchsorted's answer differs)."""
    xp = namespace(values)
    size = edges.shape[0]
    first = xp.zeros(values.shape, dtype=np.int64)
    length = xp.full(values.shape, size, dtype=np.int64)
    for _ in builtins.range(size.bit_length()):  # (each step at least halves every length)
        half = length >> 1
        middle = first + half
        left = values < edges[xp.minimum(middle, size - 1)]
        active = length > 0
        first = xp.where(active & ~left, middle + 1, first)
        length = xp.where(active, xp.where(left, half, length - half - 1), 0)
    return first


def _bin_edges(values: np.ndarray, bins: Any, extent: Any, d: int, op: str) -> np.ndarray:
    """Dimension d's bin edges: a tensor of them as given, or `bins` + 1 evenly spaced ones."""
    if isinstance(bins, Tensor):
        if bins.dtype != values.dtype:
            raise RuntimeError(f"{op}(): input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {values.dtype} and bins for dimension {d} with dtype "
                               f"{bins.dtype}")
        if bins.ndim != 1:
            raise RuntimeError(f"{op}(): bins tensor for dimension {d} should be 1-d, got shape {bins.shape}")
        return bins.data
    count = checks.as_int(bins, op, "bins")
    if count <= 0:
        raise RuntimeError(f"{op}(): bins must be > 0, but got {count} for dimension {d}")
    if extent is not None:
        low, high = float(extent[0]), float(extent[1])
    elif values.size:
        low, high = float(values.min()), float(values.max())
    else:
        low, high = 0.0, 1.0
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"{op}(): dimension {d}'s range [{low}, {high}] is not finite")
    if low > high:
        raise RuntimeError(f"{op}(): min should not exceed max, but got min {low} max {high} for "
                           f"dimension {d}")
    if low == high:  # one value: a bin of width 1 around it, as PyTorch and NumPy widen it
        low, high = low - 0.5, high + 0.5
    return array_like(np.linspace(low, high, count + 1), values, values.dtype)


def isin(elements: Any = None, test_elements: Any = None, *, assume_unique: bool = False,
         invert: bool = False, element: Any = None, test_element: Any = None) -> Tensor:
    """Whether each of `elements` equals some element of `test_elements` (either may be a
    number, by PyTorch's keyword `element=` or `test_element=`): a bool tensor of elements'
    shape (`invert=True`: whether it equals none). No gradient."""
    if (element is not None and elements is not None) or (test_element is not None
                                                           and test_elements is not None):
        raise TypeError("isin(): got both elements= and element=, or test_elements= and test_element=")
    elements = elements if element is None else element
    test_elements = test_elements if test_element is None else test_element
    tensors = [t for t in (elements, test_elements) if isinstance(t, Tensor)]
    if not tensors:
        raise TypeError(f"isin(): expected a Tensor for elements or test_elements, got "
                        f"{type(elements).__name__} and {type(test_elements).__name__}")
    if builtins.any(t.dtype.kind == "b" for t in tensors):
        raise RuntimeError("isin(): unsupported input type encountered: bool")
    like = tensors[0].data
    values, tests = (t.data if isinstance(t, Tensor) else array_like(t, like)
                     for t in (elements, test_elements))
    xp = namespace(like)
    tests = xp.sort(tests.reshape(-1))
    if tests.size == 0:
        found = xp.zeros(values.shape, dtype=bool)
    else:  # a binary search in the sorted tests, then one comparison: any array module runs it
        place = xp.clip(xp.searchsorted(tests, values), 0, tests.size - 1)
        found = tests[place] == values
    return new_leaf(~found if invert else found)


# --- norms of slices, sums down to a size, covariance: renorm, sum_to_size, cov, corrcoef ---------


@autocast_op("renorm")
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """x with each slice along `dim` (x.select(dim, i)) whose p-norm exceeds maxnorm scaled to
    that norm: x * maxnorm / (norm + 1e-7) there, x elsewhere (complex x: the norm of |x|).
    Gradient: through the norm too."""
    if not isinstance(input, Tensor):
        raise TypeError(f"renorm(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions "
                           f"(shape {input.shape})")
    dim = checks.dim(dim, input.ndim, "renorm")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive norms are not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dtype.kind not in "fc":
        raise RuntimeError(f"renorm: expected a floating point or complex tensor as input, got {input.dtype} "
                           f"(shape {input.shape})")
    norms = norm(input, float(p), dim=tuple(d for d in builtins.range(input.ndim) if d != dim), keepdim=True)
    return input * elementwise.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def sum_to_size(x: Tensor, *size: int) -> Tensor:
    """x summed down to `size`, a shape that expands to x's (expand's inverse): the leading
    dimensions summed away, and those where size has a 1. Gradient: expanded back (by `sum`)."""
    if not size:
        raise TypeError("sum_to_size() missing 1 required positional argument: 'size'")
    size = checks.sizes(size, "sum_to_size")
    lead = x.ndim - len(size)
    if lead < 0 or builtins.any(n not in (m, 1) for n, m in zip(size, x.shape[lead:], strict=True)):
        raise ShapeError(f"sum_to_size: size {list(size)} is not expandable to size {list(x.shape)} "
                         f"(the tensor's shape)")
    if size == x.shape and size:  # (an empty size is a full sum, which widens integers, as PyTorch's)
        return x
    stretched = (lead + i for i, n in enumerate(size) if n == 1 != x.shape[lead + i])
    dims = tuple(builtins.range(lead)) + tuple(stretched)
    return sum(x, dims, keepdim=True).reshape(*size)


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,  # noqa: A002
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in input's rows, observed in its columns (a 1-D
    input is one variable, giving a 0-d result): with weights w (fweights, integer repeat counts,
    times aweights, floating importances),

        cov[i, j] = sum_k w_k (x_ik - mean_i) (x_jk - mean_j) / (sum_k w_k - correction)

    (with aweights, the correction counts sum(w * aweights) / sum(w) instead). PyTorch's
    formula; integer inputs give the default float. Gradient: through the sums and products,
    to input and aweights.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "cov")
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions (shape {input.shape})")
    if input.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    correction = checks.as_int(correction, "cov", "correction")
    observations = input.reshape(1, -1) if input.ndim < 2 else input
    count = observations.shape[1]
    for name, w, kinds, kind in (("fweights", fweights, "iu", "integral"),
                                 ("aweights", aweights, "f", "floating point")):
        if w is None:
            continue
        if w.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} "
                               f"with {w.ndim} dimensions")
        if w.numel() != count:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations "
                               f"in the input but got {w.numel()} != {count}")
        if w.dtype.kind not in kinds:
            raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                               f"{w.dtype} dtype")
        if (w.data < 0).any():
            raise RuntimeError(f"cov(): {name} cannot be negative")
    dtype = float_dtype(input.dtype if aweights is None else promote_types(input.dtype, aweights.dtype))
    x = _cast(observations, dtype)
    # The weights keep their own dtype (float32 aweights: the sums and the divisor in float32),
    # as PyTorch's do; only their products with x promote.
    a = None if aweights is None else aweights.reshape(-1)
    f = None if fweights is None else fweights.reshape(-1)
    w = a if f is None else f if a is None else f * a
    if w is None:
        total = count
    else:
        total = sum(w)
        if not total.item():
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    mean = sum(x if w is None else x * w, 1, keepdim=True) / total
    factor = total - correction * sum(w * a) / total if a is not None and correction else total - correction
    if float(factor) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0; correction should be strictly less than the number "
                      "of observations", UserWarning, stacklevel=2)
        factor = 0.0
    centered = x - mean
    right = (centered if w is None else centered * w).T
    if right.dtype.kind == "c":  # E[(x - mean) conj(y - mean)]: a Hermitian matrix, as PyTorch's
        right = right.conj()
    return ((centered @ right) / factor).squeeze()


def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """Pearson's correlation coefficients of the variables in input's rows: cov[i, j] / (std_i
    std_j), clipped to [-1, 1] (a complex one's real and imaginary parts each; a 0-d input's is
    cov / cov). Gradient: through cov, sqrt and clip."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "corrcoef")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    variances = c.diagonal()
    std = (variances.real if variances.dtype.kind == "c" else variances).sqrt()
    c = c / std.reshape(-1, 1) / std.reshape(1, -1)
    if c.dtype.kind == "c":  # each part clipped, as PyTorch
        return movement.complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)
