"""Indexing: basic slicing gives views; advanced indexing copies (tutorial chapter 6).

`t[1:, ::2, None, ...]` (ints, slices, None, Ellipsis) is a view that shares storage. An index
with an integer or bool array or tensor (`t[idx]`, `t[rows, cols]`, `t[mask]`) copies the
selected elements, and its gradient is a scatter-add: an element picked twice gets both
gradients. `index_put` is the out-of-place form of `t[key] = value`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.movement import with_unit_dims
from tensorgrad.tensor import Tensor, record

_BASIC = (int, slice, type(None), type(Ellipsis), np.integer)


def _plain_key(key: Any) -> Any:
    """Replace tensors in an index by their arrays."""
    if isinstance(key, Tensor):
        return key.data
    if isinstance(key, tuple):
        return tuple(k.data if isinstance(k, Tensor) else k for k in key)
    return key


def _is_basic(key: Any) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, _BASIC) and not isinstance(k, bool) for k in parts)


def getitem(x: Tensor, key: Any) -> Tensor:
    """x[key]: a view for basic indexing, a copy (scatter-add gradient) for advanced indexing.

    Where an index mixes integers with index arrays, PyTorch (unlike NumPy) reads each integer
    as a select, a basic view, before the arrays are applied: `t[0, :, idx]` on a (2, 3, 4)
    tensor is (3, 2), where NumPy gives (2, 3).
    """
    key = _plain_key(key)
    _check_index_types(key, x)
    if _is_basic(key):
        return _basic(x, key)
    selects = _integer_selects_first(key, x.ndim)
    if selects is not None:
        return _advanced(_basic(x, selects[0]), selects[1])
    return _advanced(x, key)


def _is_integer(k: Any) -> bool:
    return isinstance(k, int | np.integer) and not isinstance(k, bool)


def _integer_selects_first(key: Any, ndim: int) -> tuple[tuple, tuple] | None:
    """An index with both integers and arrays, split into (the integers as a basic index, the rest)."""
    parts = key if isinstance(key, tuple) else (key,)
    if not any(_is_integer(k) for k in parts) or any(k is None for k in parts):
        return None
    # Every entry takes one dimension, but a bool mask takes as many as it has; Ellipsis the rest.
    taken = sum(np.ndim(k) if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
                for k in parts if k is not Ellipsis)
    basic, rest = [], []
    for k in parts:
        if k is Ellipsis:
            basic += [slice(None)] * max(ndim - taken, 0)
            rest.append(Ellipsis)
        elif _is_integer(k):
            basic.append(k)
        else:
            width = np.ndim(k) if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
            basic += [slice(None)] * width
            rest.append(k)
    return tuple(basic), tuple(rest)


def _check_index_types(key: Any, x: Tensor) -> None:
    """Only ints, slices, None, Ellipsis and integer or bool arrays index a tensor (PyTorch's rule)."""
    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, np.ndarray | list):
            kind = np.asarray(k).dtype.kind
            if kind not in "iub" and not (isinstance(k, list) and len(k) == 0):
                raise IndexError(f"index: tensors used as indices must be integer or bool tensors, got "
                                 f"dtype {np.asarray(k).dtype} (indexing a tensor of shape {x.shape})")
        elif not isinstance(k, int | slice | type(None) | type(Ellipsis) | np.integer | np.bool_ | bool):
            raise IndexError(f"index: only integers, slices (`:`), ellipsis (`...`), None and integer or "
                             f"bool tensors are valid indices, got {type(k).__name__} ({k!r}) for a "
                             f"tensor of shape {x.shape}")


def _basic(x: Tensor, key: Any) -> Tensor:
    parts = key if isinstance(key, tuple) else (key,)
    if Ellipsis not in parts:
        parts = parts + (Ellipsis,)  # so that numpy returns a 0-d view, never a scalar copy
    try:
        if None in parts:  # numpy would give the new dimensions stride 0; PyTorch unsqueezes
            data = with_unit_dims(x.data[tuple(k for k in parts if k is not None)], *_new_dims(x.data, parts))
        else:
            data = x.data[parts]
    except IndexError as error:
        raise IndexError(f"index {key!r} is out of range for a tensor of shape {x.shape}: {error}") from None
    shape = x.data.shape

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = np.zeros(shape, dtype=grad.dtype)
        full[parts] = grad
        return full

    out = record(data, "slice", (x,), vjp, saved=())
    out._versions = x._versions
    return out


def _new_dims(data: np.ndarray, parts: tuple) -> tuple[list[int], list[int]]:
    """Where the None entries of a basic index put their size-1 dimensions, and their strides.

    PyTorch applies the index left to right, so a None is an `unsqueeze` in front of the next
    dimension of `data` that the index has not reached yet: stride = its size times its stride.
    """
    consumed = sum(1 for k in parts if k is not None and k is not Ellipsis)
    dims, strides = [], []
    d = k_in = 0  # the next dimension of the result, and of `data`
    for k in parts:
        if k is None:
            dims.append(d)
            strides.append(data.shape[k_in] * data.strides[k_in] if k_in < data.ndim else data.itemsize)
            d += 1
        elif k is Ellipsis:
            d += data.ndim - consumed
            k_in += data.ndim - consumed
        else:
            d += isinstance(k, slice)
            k_in += 1
    return dims, strides


def _advanced(x: Tensor, key: Any) -> Tensor:
    try:
        data = x.data[key]
    except IndexError as error:
        raise IndexError(f"index out of range for a tensor of shape {x.shape}: {error}") from None
    shape = x.data.shape

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = np.zeros(shape, dtype=grad.dtype)
        np.add.at(full, key, grad)  # scatter-add: repeated indices accumulate
        return full

    return record(data, "index", (x,), vjp, saved=())


def index_put(x: Tensor, key: Any, value: Tensor) -> Tensor:
    """A copy of x with x[key] = value. d/dx = grad except at key; d/dvalue = grad[key]."""
    key = _plain_key(key)
    out = x.data.copy()
    try:
        out[key] = value.data
    except ValueError:
        raise ValueError(
            f"setitem: a value of shape {value.shape} can't be broadcast to the selection "
            f"of shape {x.data[key].shape}"
        ) from None

    def vjp_x(grad: np.ndarray) -> np.ndarray:
        g = grad.copy()
        g[key] = 0
        return g

    def vjp_value(grad: np.ndarray) -> np.ndarray:
        return grad[key]

    return record(out, "index_put", (x, value), vjp_x, vjp_value, saved=())
