"""Indexing: basic slicing gives views; advanced indexing copies (tutorial chapter 6).

`t[1:, ::2, None, ...]` (ints, slices, None, Ellipsis) is a view that shares storage. An index
with an integer or bool array or tensor (`t[idx]`, `t[rows, cols]`, `t[mask]`) copies the
selected elements, and its gradient is a scatter-add: an element picked twice gets both
gradients. `set_index` is the out-of-place form of `t[key] = value`; `index_put`, `put`,
`index_reduce` and the `*_scatter` family are PyTorch's functions that write into a copy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from tensorgrad import checks, elementwise
from tensorgrad import out as out_keyword  # (`out` is the argument of that name)
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record
from tensorgrad.checks import not_a_tensor
from tensorgrad.creation import checked_scalar
from tensorgrad.device import array_like, data_address, device_of, is_array, namespace, ufunc_at
from tensorgrad.higher_order import differentiable_once, linear_graph
from tensorgrad.movement import with_unit_dims
from tensorgrad.tensor import Tensor, new_leaf

_BASIC = (int, slice, type(None), type(Ellipsis), np.integer)


class IndexOutOfBoundsError(IndexError, RuntimeError):
    """An index past a dimension's end in gather, scatter or index_*: PyTorch's RuntimeError (an
    IndexError for some), and Python's IndexError; it is both, so code written for either catches it."""


def _plain_key(key: Any) -> Any:
    """Replace tensors in an index by their arrays (`_tensor_key`), and ranges by lists (PyTorch
    takes them as index sequences). A short list holding a tensor, a sequence, a slice, None or
    `...` is read as a tuple, as PyTorch (and old NumPy) read `t[[[1, 0], [0, 1]]]`."""
    if isinstance(key, Tensor):
        return _tensor_key(key)
    if type(key) is list and len(key) < 32 and any(isinstance(k, _SEQUENCE_LIKE) for k in key):
        key = tuple(key)
    if isinstance(key, tuple):
        return tuple(_tensor_key(k) if isinstance(k, Tensor) else list(k) if isinstance(k, range) else k
                     for k in key)
    return list(key) if isinstance(key, range) else key


_SEQUENCE_LIKE = (Tensor, list, tuple, slice, type(None), type(Ellipsis))


def _tensor_key(k: Tensor) -> Any:
    """A tensor in an index as PyTorch reads it: a uint8 one is a bool mask (PyTorch's old
    convention), a 0-d integer one an int (a select, so the result is a view), any other its array."""
    data = k.data
    if data.dtype == np.uint8:
        return data.astype(bool)
    if data.ndim == 0 and data.dtype.kind == "i":
        return int(data)
    return data


def _is_basic(key: Any) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, _BASIC) and not isinstance(k, bool) for k in parts)


def getitem(x: Tensor, key: Any) -> Tensor:
    """x[key]: a view for basic indexing, a copy (scatter-add gradient) for advanced indexing.

    An index that mixes ints, slices, None and Ellipsis with index arrays is applied as PyTorch
    applies it, which differs from NumPy where ints or None stand among the arrays: first the
    basic part, a view (each int a select, each None a new dimension), then the arrays on that
    view. `t[0, :, idx]` on a (2, 3, 4) tensor is (3, 2), where NumPy gives (2, 3).
    """
    key = _plain_key(key)
    _check_index_types(key, x)
    if _is_basic(key):
        return _basic(x, key)
    basic, advanced = _basic_then_advanced(key, x.ndim)
    if any(k != slice(None) for k in basic):
        x = _basic(x, basic)
    return _advanced(x, advanced)


def _is_integer(k: Any) -> bool:
    return isinstance(k, int | np.integer) and not isinstance(k, bool)


def _basic_then_advanced(key: Any, ndim: int) -> tuple[tuple, tuple]:
    """An index with arrays, split into a basic index (ints, slices, None; each array's dimensions
    kept whole) and the index of the arrays on the view it gives, one entry per dimension of that
    view (`:` where no array stands), so that NumPy's rule for where the arrays' dimensions go
    (in place if the arrays are next to each other, else first) sees what PyTorch sees."""
    parts = key if isinstance(key, tuple) else (key,)
    taken = sum(_width(k) for k in parts if k is not Ellipsis and k is not None)
    basic, advanced = [], []
    for k in parts:
        if k is Ellipsis:
            rest = max(ndim - taken, 0)
            basic += [slice(None)] * rest
            advanced += [slice(None)] * rest
        elif _is_integer(k):
            basic.append(k)  # a select: its dimension is gone from the view
        elif k is None or isinstance(k, slice):
            basic.append(k)
            advanced.append(slice(None))
        else:  # an index array (or list, or bool): the view keeps the dimensions it indexes
            basic += [slice(None)] * _width(k)
            advanced.append(k)
    return tuple(basic), tuple(advanced)


def _width(k: Any) -> int:
    """How many dimensions an index entry takes: a bool mask as many as it has (a bool 0)."""
    if isinstance(k, bool | np.bool_):
        return 0
    if _is_mask(k):
        return k.ndim
    if isinstance(k, list):
        values = np.asarray(k)
        return values.ndim if values.dtype == np.bool_ else 1
    return 1


def _is_mask(k: Any) -> bool:
    """Whether an index entry is a bool array (which takes as many dimensions as it has)."""
    return is_array(k) and k.dtype == np.bool_


def _check_index_types(key: Any, x: Tensor) -> None:
    """Only ints, slices, None, Ellipsis and integer or bool arrays index a tensor (PyTorch's rule)."""
    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, slice) and k.step is not None and k.step <= 0:
            raise ValueError(f"index: step must be greater than zero, got {k.step} in {k!r} (a tensor of "
                             f"shape {x.shape}); use flip() to reverse")
        if isinstance(k, int | slice | type(None) | type(Ellipsis) | np.integer | np.bool_):
            continue
        if isinstance(k, np.ndarray | list) or is_array(k):
            dtype = np.asarray(k).dtype if isinstance(k, list) else k.dtype
            if dtype.kind not in "iub" and not (isinstance(k, list) and len(k) == 0):
                raise IndexError(f"index: tensors used as indices must be integer or bool tensors, got "
                                 f"dtype {dtype} (indexing a tensor of shape {x.shape})")
            if type(x.data) is np.ndarray and not isinstance(k, np.ndarray | list):  # a GPU's indices
                raise RuntimeError(f"index: indices should be either on cpu or on the same device as the "
                                   f"indexed tensor (cpu), got indices on {device_of(k)} for a tensor of "
                                   f"shape {x.shape}")
        else:
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
        full = (np if type(grad) is np.ndarray else namespace(grad)).zeros(shape, dtype=grad.dtype)
        full[parts] = grad
        return full

    return record(data, "slice", (x,), vjp, saved=(), view_of=x,
                  graph_vjp=linear_graph("slice", vjp, lambda t: t[key]))


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
        xp = np if type(grad) is np.ndarray else namespace(grad)
        full = xp.zeros(shape, dtype=grad.dtype)
        ufunc_at(np.add, full, key, grad)  # scatter-add: repeated indices accumulate
        return full

    return record(data, "index", (x,), vjp, saved=(), graph_vjp=linear_graph("index", vjp, lambda t: t[key]))


def _linear(op: str, f: Callable, f_t: Callable, t: Tensor) -> Tensor:
    """f(t) as a graph node, for a linear numpy map f whose transpose is f_t: its gradient is f_t,
    recorded the same way, so it differentiates to any order. The gradient of an input of a
    several-input op that is linear in it (index_put's values, scatter's src) is one."""
    return record(f(t._data), op, (t,), f_t, saved=(), graph_vjp=partial(_linear_back, op, f, f_t))


def _linear_back(op: str, f: Callable, f_t: Callable, grad: Tensor, out: Tensor, t: Tensor) -> tuple[Tensor]:
    return (_linear(op, f_t, f, grad),)


def set_index(x: Tensor, key: Any, value: Tensor) -> Tensor:
    """A copy of x with x[key] = value. d/dx = grad except at key; d/dvalue = grad[key].

    The selection is PyTorch's (see `getitem`): `t[0, :, idx] = v` takes v of shape (3, 2) on a
    (2, 3, 4) tensor. (`x[key] = value` itself writes into x: `set_index_`.)
    """
    key = _plain_key(key)
    _check_index_types(key, x)
    out = x.data.copy()
    write_at(out, key, value)
    return record(out, "index_put", (x, value), *_index_put_vjps(key), saved=(),
                  graph_vjp=partial(_index_put_graph, key, False))


def set_index_(x: Tensor, before: Tensor | None, key: Any, value: Tensor) -> Tensor | None:
    """x[key] = value written into x's own memory; with `before` (a node holding x's place in the
    graph), the graph node of the result, whose inputs are `before` and `value`. The gradients are
    index_put's, which read no values, so nothing but the selection is written or copied."""
    key = _plain_key(key)
    _check_index_types(key, x)
    write_at(x.data, key, value)
    if before is None:
        return None
    return record(x.data, "index_put", (before, value), *_index_put_vjps(key), saved=(),
                  graph_vjp=partial(_index_put_graph, key, False))


def check_put_dtype(x: Tensor, key: Any, value: Tensor) -> None:
    """Refuse `x[key] = value` for a tensor value of another dtype where PyTorch does: an advanced
    key (PyTorch's index_put needs one dtype), unless it is a lone bool mask and value one element
    (PyTorch's masked_fill, which casts). A basic key copies with a cast, as `copy_`."""
    key = _plain_key(key)
    parts = key if isinstance(key, tuple) else (key,)
    if all(isinstance(k, _BASIC) for k in parts):  # (a Python bool too: an added dimension)
        return
    mask = parts[0] if len(parts) == 1 and is_array(parts[0]) and parts[0].dtype == bool else None
    if mask is not None and mask.ndim and value.numel() == 1:
        return
    raise RuntimeError(f"Index put requires the source and destination dtypes match, got {x.dtype} for the "
                       f"destination and {value.dtype} for the source.")


def write_at(array: np.ndarray, key: Any, value: Tensor) -> None:
    """array[key] = value's data, with PyTorch's selection (`_in_torch_order`)."""
    target, where = _in_torch_order(array, key)
    try:
        target[where] = value.data
    except ValueError:
        raise checks.ShapeError(
            f"setitem: a value of shape {value.shape} can't be broadcast to the selection "
            f"of shape {target[where].shape}"
        ) from None


def _index_put_vjps(key: Any) -> tuple[Callable, Callable]:
    """index_put's gradients: the incoming one with the selection zeroed (it was overwritten), and
    the selection itself (summed back to the value's shape by `record`)."""
    def vjp_x(grad: np.ndarray) -> np.ndarray:
        g = grad.copy()
        part, at = _in_torch_order(g, key)
        part[at] = 0
        return g

    def vjp_value(grad: np.ndarray) -> np.ndarray:
        part, at = _in_torch_order(grad, key)
        return part[at]

    return vjp_x, vjp_value


def _index_put_graph(key: Any, accumulate: bool, grad: Tensor, out: Tensor, x: Tensor,
                     value: Tensor) -> tuple[Tensor, Tensor]:
    """index_put's gradients as graph nodes: x's is grad with the selection zeroed (unless
    accumulating), value's the selection of grad, whose transpose adds back at the key."""
    if accumulate:
        grad_x = grad
    else:
        written = namespace(out._data).zeros(out.shape, dtype=bool)
        part, at = _in_torch_order(written, key)
        part[at] = True
        grad_x = elementwise.where(new_leaf(written), 0.0, grad)
    return grad_x, _linear("index_put backward", partial(_selected, key), partial(_added_at, key, out.shape),
                           grad)


def _selected(key: Any, grad: np.ndarray) -> np.ndarray:
    part, at = _in_torch_order(grad, key)
    return namespace(grad).array(part[at])  # a copy: a basic key's selection is a view of grad


def _added_at(key: Any, shape: tuple[int, ...], h: np.ndarray) -> np.ndarray:
    """Zeros of `shape` with h added at the key (the transpose of selecting it)."""
    full = namespace(h).zeros(shape, dtype=h.dtype)
    target, at = _in_torch_order(full, key)
    ufunc_at(np.add, target, at, np.broadcast_to(h, target[at].shape))
    return full


def _in_torch_order(array: np.ndarray, key: Any) -> tuple[np.ndarray, Any]:
    """(view, index) such that `view[index]` is `array[key]` as PyTorch selects it, and writing
    to `view[index]` writes into `array`: the basic part of the key as a NumPy view first."""
    if _is_basic(key):
        return array, key
    basic, advanced = _basic_then_advanced(key, array.ndim)
    return array[basic], advanced


@autocast_op("index_put")
def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of input with input[indices] = values, or += values with `accumulate` (a place
    named twice then gets both). `indices` is a tuple of integer or bool tensors, one per leading
    dimension. Gradients: input's is grad, zeroed at the written places unless accumulating;
    values' is grad[indices] (summed back over broadcasting).
    """
    key = _index_put_key(input, indices, values, "index_put")
    out = input.data.copy()
    target, where = _in_torch_order(out, key)
    if not accumulate:
        target[where] = values.data
        return record(out, "index_put", (input, values), *_index_put_vjps(key), saved=(),
                      graph_vjp=partial(_index_put_graph, key, False))
    ufunc_at(np.add, target, where, np.broadcast_to(values.data, target[where].shape))
    return record(out, "index_put", (input, values), lambda grad: grad, _index_put_vjps(key)[1], saved=(),
                  graph_vjp=partial(_index_put_graph, key, True))


def index_put_(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """input[indices] = values (+= with `accumulate`) written into input: `input.index_put_(...)`."""
    return input.index_put_(indices, values, accumulate)


def _index_put_key(x: Tensor, indices: Any, values: Any, op: str) -> tuple:
    """index_put's `indices` checked as PyTorch checks them, as an index key of arrays: a bool mask
    becomes the integer coordinates of its True elements (so that `accumulate` can scatter-add)."""
    if not isinstance(indices, tuple | list):
        raise TypeError(f"{op}(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}(): argument 'values' must be Tensor, not {type(values).__name__}")
    if not indices:
        raise RuntimeError(f"{op}(): indices can't be empty (a tensor of shape {x.shape})")
    key: list = []
    for i, k in enumerate(indices):
        if not isinstance(k, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 'indices', but got "
                            f"{type(k).__name__}")
        if k.dtype.kind not in "iub":
            raise IndexError(f"{op}(): tensors used as indices must be long, int, byte or bool tensors, "
                             f"got {k.dtype} (element {i})")
        mask = k.data if k.dtype.kind == "b" else k.data.astype(bool) if k.dtype == np.uint8 else None
        if mask is None:
            key.append(k.data)
            continue
        at = len(key)
        if mask.shape != x.shape[at:at + mask.ndim]:  # PyTorch's uint8 index is a (deprecated) mask
            raise IndexError(f"{op}(): the shape of the mask {tuple(mask.shape)} at index {i} does not "
                             f"match the shape of the indexed tensor {x.shape} at index {at}")
        key.extend(mask.nonzero() if mask.ndim else (mask,))  # (a 0-d mask adds a dimension)
    if sum(k.ndim if k.dtype.kind == "b" else 1 for k in indices) > x.ndim:
        raise IndexError(f"{op}(): too many indices for tensor of dimension {x.ndim} (got {len(key)})")
    if values.dtype != x.dtype:
        raise RuntimeError(f"{op}(): index put requires the source and destination dtypes match, got "
                           f"{x.dtype} for the destination and {values.dtype} for the source")
    key = tuple(key)
    try:
        selected = _in_torch_order(x.data, key)
        shape = selected[0][selected[1]].shape
    except IndexError as error:
        raise IndexError(f"{op}(): index out of range for a tensor of shape {x.shape}: {error}") from None
    if not checks.broadcasts_to(values.shape, shape):
        raise RuntimeError(f"{op}(): shape mismatch: value tensor of shape {values.shape} cannot be "
                           f"broadcast to indexing result of shape {shape}")
    return key


# --- gathers and scatters: PyTorch's indexing ops -------------------------------------------------


def _index_array(index: Any, x: Tensor, op: str) -> np.ndarray:
    """`index` (a tensor, an array or a list) as an array of x's kind, on x's device."""
    data = array_like(index.data if isinstance(index, Tensor) else index, x.data)
    if data.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): expected an integer (int64) index tensor, got dtype {data.dtype}")
    return data


def _along(index: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    """Full coordinates for `index` used along `dim`: the index itself there, its own position elsewhere."""
    xp = namespace(index)
    coords = [xp.arange(n).reshape((1,) * d + (-1,) + (1,) * (index.ndim - d - 1))  # open grids
              for d, n in enumerate(index.shape)]
    coords[dim] = index
    return tuple(coords)


def _check_gather_shapes(x: Tensor, dim: int, index: np.ndarray, op: str,
                         other: Tensor | None = None) -> None:
    """PyTorch's checks for gather and scatter: src has x's dtype; then, for a non-empty index only
    (an empty one is taken as it is), an int32 or int64 index with as many dimensions as x (and
    src; a 0-d tensor counts as 1-d), no longer than x but along dim, nor than src, within x's size."""
    if other is not None and other.dtype != x.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype, got {x.dtype} and "
                           f"{other.dtype}")
    if not index.size:
        return
    if index.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index, got {index.dtype}")
    ndim = max(index.ndim, 1)
    for name, t in (("self", x), ("src", other)):
        if t is not None and max(t.ndim, 1) != ndim:
            raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as {name} "
                               f"tensor (index of shape {index.shape}, {name} of shape {t.shape})")
    def longer(t: Tensor | None, d: int, n: int) -> bool:
        return t is not None and n > (t.shape[d] if t.ndim else 1)

    for d, n in enumerate(index.shape or (1,)):  # src's sizes bound the index along dim too
        if d != dim and longer(x, d, n) or longer(other, d, n):
            src = "" if other is None else f" and to be no larger size than src {list(other.shape)}"
            raise RuntimeError(f"{op}(): Expected index {list(index.shape)} to be no larger than self "
                               f"{list(x.shape)} apart from dimension {dim}{src}")
    size = x.shape[dim] if x.ndim else 1
    if index.min() < 0 or index.max() >= size:  # PyTorch counts no index from the end here
        raise _out_of_bounds(op, index, size, dim)


def _any_0d(*arrays: Any) -> bool:
    """Whether one of these tensors or arrays is 0-d: a gather or scatter, whose shapes are then checked
    to be at most 1-d, runs on their 1-d views (PyTorch takes a 0-d tensor as one of 1 element)."""
    return any(a is not None and a.ndim == 0 for a in arrays)


def _unchanged(op: str, x: Tensor, src: Tensor | None) -> Tensor:
    """A scatter with an empty index: a copy of x, whose gradient passes through (src's is zeros)."""
    xp = namespace(x.data)
    if src is None:
        return record(x.data.copy(), op, (x,), lambda grad: grad, saved=(),
                      graph_vjp=lambda grad, out, x: (grad,))
    shape = src.shape
    return record(x.data.copy(), op, (x, src), lambda grad: grad,
                  lambda grad: xp.zeros(shape, dtype=grad.dtype), saved=(),
                  graph_vjp=lambda grad, out, x, src: (grad, new_leaf(xp.zeros(shape, dtype=grad.dtype))))


def _out_of_bounds(op: str, index: np.ndarray, size: int, dim: int) -> IndexOutOfBoundsError:
    """The error for an index outside [0, size) (or [-size, size)), naming the first bad end."""
    bad = int(index.max()) if index.max() >= size else int(index.min())
    return IndexOutOfBoundsError(f"{op}(): index {bad} is out of bounds for dimension {dim} with size {size}")


def gather(input: Tensor, dim: int, index: Any, *, sparse_grad: bool = False,
           out: Tensor | None = None) -> Tensor:
    """out[i][j] = x[index[i][j]][j] (for dim 0). Gradient: scatter-added back to where it came from.

    (`sparse_grad` is accepted for PyTorch's signature; the gradient is always dense.) With
    `out`, the result is written into that tensor (of x's dtype; resized), without gradient.
    """
    if out is not None:
        out_keyword.check_no_grad("gather", out, (input, index))
        return out_keyword.write("gather", out, gather(input, dim, index, sparse_grad=sparse_grad), "exact",
                                 (input, index), separate=True)
    dim = checks.dim(dim, input.ndim, "gather")
    idx = _index_array(index, input, "gather")
    _check_gather_shapes(input, dim, idx, "gather")
    shape = input.data.shape
    xp = namespace(input.data)
    if not idx.size:  # an empty result in the index's shape, whatever that is
        return record(xp.zeros(idx.shape, dtype=input.dtype), "gather", (input,),
                      lambda grad: xp.zeros(shape, dtype=grad.dtype), saved=(),
                      graph_vjp=linear_graph("gather", lambda grad: xp.zeros(shape, dtype=grad.dtype),
                                             partial(gather, dim=dim, index=idx)))
    if _any_0d(input, idx):  # a 0-d tensor gathers as its 1-element 1-d view
        return gather(input.reshape(-1), 0, idx.reshape(-1)).reshape(*idx.shape)
    coords = _along(idx, dim)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = xp.zeros(shape, dtype=grad.dtype)
        ufunc_at(np.add, full, coords, grad)
        return full

    return record(input.data[coords], "gather", (input,), vjp, saved=(),
                  graph_vjp=linear_graph("gather", vjp, partial(gather, dim=dim, index=idx)))


def scatter(input: Tensor, dim: int, index: Any, src: Any = None, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """A copy of x with x[index[i][j]][j] = src[i][j] (for dim 0), or `value` there.

    Gradient: x's where nothing was written; src's gathered from the written places. `reduce`
    ('add' or 'multiply') combines instead of replacing (no gradient for 'multiply', as PyTorch).
    """
    if src is None and value is None:
        raise TypeError("scatter(): give src (a tensor) or value (a number)")
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src  # scatter(dim, index, 2.0): PyTorch reads a number as the value
    dim = checks.dim(dim, input.ndim, "scatter")
    idx = _index_array(index, input, "scatter")
    _check_gather_shapes(input, dim, idx, "scatter", src)
    if not idx.size:
        return _unchanged("scatter", input, src)
    if _any_0d(input, idx, src):  # (all of them at most 1-d)
        return scatter(input.reshape(-1), 0, idx.reshape(-1), None if src is None else src.reshape(-1), value,
                       reduce).reshape(*input.shape)
    if reduce == "add":
        return scatter_add(input, dim, index, src if src is not None else _filled(input, idx.shape, value))
    if reduce not in (None, "multiply"):
        raise RuntimeError(f"scatter(): reduce must be 'add' or 'multiply', got {reduce!r}")
    coords = _along(idx, dim)
    part = tuple(slice(0, n) for n in idx.shape)  # the corner of src that is written
    out = input.data.copy()
    values = value if src is None else src.data[part]
    xp = namespace(input.data)
    if reduce == "multiply":
        ufunc_at(np.multiply, out, coords, values)
        return record(out, "scatter", (input,), None)
    out[coords] = values
    written = xp.zeros(input.data.shape, dtype=bool)
    written[coords] = True
    if src is None:
        return record(out, "scatter", (input,), lambda grad: np.where(written, 0, grad), saved=(),
                      graph_vjp=partial(_scatter_graph, written, coords, part))
    src_shape = src.data.shape

    def vjp_src(grad: np.ndarray) -> np.ndarray:
        g = xp.zeros(src_shape, dtype=grad.dtype)
        g[part] = grad[coords]
        return g

    return record(out, "scatter", (input, src), lambda grad: np.where(written, 0, grad), vjp_src, saved=(),
                  graph_vjp=partial(_scatter_graph, written, coords, part))


def _scatter_graph(written: np.ndarray | None, coords: tuple, part: tuple, grad: Tensor, out: Tensor,
                   x: Tensor, src: Tensor | None = None) -> tuple[Tensor, ...]:
    """scatter's (and scatter_add's) gradients as graph nodes: x's is grad where nothing was written
    (all of it for `written` None); src's is grad at the places each element went."""
    grad_x = grad if written is None else elementwise.where(new_leaf(written), 0.0, grad)
    if src is None:
        return (grad_x,)
    return grad_x, _linear("scatter backward", partial(_gathered_into, coords, part, src.shape),
                           partial(_scattered_from, coords, part, out.shape), grad)


def _gathered_into(coords: tuple, part: tuple, shape: tuple[int, ...], grad: np.ndarray) -> np.ndarray:
    """Zeros of src's `shape` with grad at coords in the `part` that was scattered."""
    g = namespace(grad).zeros(shape, dtype=grad.dtype)
    g[part] = grad[coords]
    return g


def _scattered_from(coords: tuple, part: tuple, shape: tuple[int, ...], h: np.ndarray) -> np.ndarray:
    """Zeros of `shape` with h's `part` added at coords: the transpose of `_gathered_into`."""
    full = namespace(h).zeros(shape, dtype=h.dtype)
    ufunc_at(np.add, full, coords, h[part])
    return full


def _filled(x: Tensor, shape: tuple[int, ...], value: Any) -> Tensor:
    return new_leaf(namespace(x.data).full(shape, value, dtype=x.dtype))


@autocast_op("scatter_add")
def scatter_add(input: Tensor, dim: int, index: Any, src: Tensor) -> Tensor:
    """A copy of x with src[i][j] added at x[index[i][j]][j] (for dim 0); repeated places add up.

    Gradient: x's passes through; src's is gathered from where each element went.
    """
    return scatter_reduce(input, dim, index, src, "sum", include_self=True, op="scatter_add")


# Each reduction's ufunc (by name, taken from the data's namespace and applied with .at, so
# repeated places combine) and its identity.
_SCATTER_REDUCTIONS = {"sum": ("add", 0), "mean": ("add", 0), "prod": ("multiply", 1),
                       "amax": ("maximum", -np.inf), "amin": ("minimum", np.inf)}
# Counts of contributions per place: int32, which every GPU's atomic add takes (CuPy's before
# version 14 had none for int64).
_COUNT = np.int32


def scatter_reduce(input: Tensor, dim: int, index: Any, src: Tensor, reduce: str,
                   include_self: bool = True, op: str = "scatter_reduce") -> Tensor:
    """Combine src's elements into x at `index` along `dim` with `reduce`: 'sum', 'prod', 'mean',
    'amax' or 'amin' (x's own value joins in with `include_self`).

    Gradients: sum passes grad through; mean divides by each place's count; amax/amin share it
    evenly among the elements equal to the result; prod is the product of the others.
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's older names
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"{op}(): reduce must be one of sum, prod, mean, amax, amin, got {reduce!r}")
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}(): src must be a Tensor, got {type(src).__name__}")
    dim = checks.dim(dim, input.ndim, op)
    idx = _index_array(index, input, op)
    _check_gather_shapes(input, dim, idx, op, src)
    if reduce == "mean" and input.dtype == np.bool_:
        raise checks.UnsupportedDtypeError(f"{op}(): 'mean' is not implemented for bool tensors (PyTorch's "
                                           "scatter_gather_tensor_cpu_reduce_mean)")
    if not idx.size:
        return _unchanged(op, input, src)
    if _any_0d(input, idx, src):  # (all of them at most 1-d)
        return scatter_reduce(input.reshape(-1), 0, idx.reshape(-1), src.reshape(-1), reduce, include_self,
                              op).reshape(*input.shape)
    coords = _along(idx, dim)
    part = tuple(slice(0, n) for n in idx.shape)
    values = src.data[part]
    xp = namespace(input.data)
    touched = xp.zeros(input.data.shape, dtype=_COUNT)
    ufunc_at(np.add, touched, coords, 1)
    counts = touched + (1 if include_self else 0)
    name, start = _SCATTER_REDUCTIONS[reduce]
    if input.dtype == np.bool_:  # a bool's identity for max/min is False/True (-inf and inf cast to True)
        start = start > 0
    elif input.dtype.kind in "iu" and math.isinf(start):  # an integer's is its own extreme
        start = getattr(np.iinfo(input.dtype), "max" if start > 0 else "min")
    data = input.data
    out = data.copy() if include_self else np.where(touched > 0, xp.asarray(start, dtype=data.dtype), data)
    ufunc_at(getattr(np, name), out, coords, values)
    if reduce == "mean":
        # An integer mean rounds down, as PyTorch's (-5 / 2 is -3), where astype would truncate.
        mean = out // np.maximum(counts, 1) if out.dtype.kind in "iu" else out / np.maximum(counts, 1)
        out = np.where(touched > 0, mean, out).astype(input.dtype)
    src_shape = src.data.shape

    def share(grad: np.ndarray) -> np.ndarray:
        """The output gradient, divided as `reduce` divides it among the contributions to a place."""
        if reduce == "mean":
            return np.where(touched > 0, grad / np.maximum(counts, 1), grad)
        if reduce in ("amax", "amin"):
            # x's own element counts among the ties even without include_self, as in PyTorch's
            # scatter_reduce_backward (which then gives x no gradient at the written places).
            winners = xp.zeros(out.shape, dtype=_COUNT) + (input.data == out)
            ufunc_at(np.add, winners, coords, values == out[coords])
            return grad / np.maximum(winners, 1)
        return grad

    def vjp_x(grad: np.ndarray) -> np.ndarray:
        g = share(grad)
        if reduce in ("amax", "amin"):
            g = g * (input.data == out)
        elif reduce == "prod":
            g = _product_of_others(xp, grad, out, input.data, values, coords, include_self, "self")
        return np.where(touched > 0, g if include_self else 0, grad)

    def vjp_src(grad: np.ndarray) -> np.ndarray:
        g = share(grad)[coords]
        if reduce in ("amax", "amin"):
            g = g * (values == out[coords])
        elif reduce == "prod":
            g = _product_of_others(xp, grad, out, input.data, values, coords, include_self, "src")
        full = xp.zeros(src_shape, dtype=grad.dtype)
        full[part] = g
        return full

    if reduce == "sum":
        graph = partial(_scatter_graph, None if include_self else touched > 0, coords, part)
    elif reduce == "prod":
        graph = partial(_scatter_prod_graph, dim, idx, coords, part, touched > 0, include_self, op)
    else:  # mean, amax, amin: grad scaled by constants (counts, shares among ties), then gathered
        share_of_one = share(xp.ones(out.shape, dtype=input.dtype))
        mine = 1 if reduce == "mean" else (input.data == out)
        scale_x = np.where(touched > 0, share_of_one * mine if include_self else 0, 1).astype(input.dtype)
        src_mask = None
        if reduce != "mean":
            src_mask = xp.zeros(src_shape, dtype=input.dtype)
            src_mask[part] = values == out[coords]
        graph = partial(_scatter_scaled_graph, coords, part, scale_x, share_of_one.astype(input.dtype),
                        src_mask)
    return record(out, op, (input, src), vjp_x, vjp_src, graph_vjp=graph)


def _scatter_scaled_graph(coords: tuple, part: tuple, scale_x: np.ndarray, share: np.ndarray,
                          src_mask: np.ndarray | None, grad: Tensor, out: Tensor, x: Tensor,
                          src: Tensor) -> tuple[Tensor, Tensor]:
    """scatter_reduce's mean, amax and amin gradients, linear in grad: x's is grad times a constant;
    src's is grad times each place's share, gathered, then masked to the elements equal to the result."""
    grad_src = _linear("scatter_reduce backward", partial(_gathered_into, coords, part, src.shape),
                       partial(_scattered_from, coords, part, out.shape), grad * new_leaf(share))
    return grad * new_leaf(scale_x), grad_src if src_mask is None else grad_src * new_leaf(src_mask)


def _scatter_prod_graph(dim: int, idx: np.ndarray, coords: tuple, part: tuple, touched: np.ndarray,
                        include_self: bool, op: str, grad: Tensor, out: Tensor, x: Tensor,
                        src: Tensor) -> tuple[Tensor, Tensor]:
    """scatter_reduce's prod gradients with tensor ops (PyTorch's scatter_reduce_backward): x's is
    grad * (the product with x's zeros set to 1) / (x with zeros set to 1); src's is grad * out / src,
    or for the one zero of its place, grad * (the product with that zero set to 1). With two zeros in
    a place, src's gradient is differentiable once only, as PyTorch's."""
    written = new_leaf(touched)
    if include_self:
        masked_x = elementwise.where(new_leaf(x._data == 0), 1.0, x)
        product = scatter_reduce(masked_x, dim, idx, src, "prod", include_self=True)
        grad_x = elementwise.where(written, grad * product / masked_x, grad)
    else:
        grad_x = elementwise.where(written, 0.0, grad)
    values = src[part]
    zero = values._data == 0
    zeros = namespace(zero).zeros(out.shape, dtype=_COUNT)
    ufunc_at(np.add, zeros, coords, zero)
    single = new_leaf(zero & (zeros[coords] == 1))
    g = gather(grad * out, dim, idx) / elementwise.where(new_leaf(zero), 1.0, values)
    if single._data.any():
        masked = elementwise.where(single, 1.0, values)
        g = elementwise.where(single, gather(grad * scatter_reduce(x, dim, idx, masked, "prod", include_self),
                                             dim, idx), g)
    if (zeros > 1).any():
        g = differentiable_once(op, g._data, (grad, x, src))
    if values.shape != src.shape:
        g = _linear(f"{op} backward", partial(_into_part, partial(_keyed, part), src.shape),
                    partial(_part_of, partial(_keyed, part)), g)
    return grad_x, g


def _product_of_others(xp, grad, out, self_data, values, coords, include_self, which):
    """d(prod)/d(element) = the product of the other elements of its place, exact where some are 0."""
    zeros = xp.zeros(out.shape, dtype=_COUNT)
    ufunc_at(np.add, zeros, coords, values == 0)
    nonzero_product = xp.ones(out.shape, dtype=out.dtype)
    ufunc_at(np.multiply, nonzero_product, coords, np.where(values == 0, 1, values))
    if include_self:
        zeros += self_data == 0
        nonzero_product *= np.where(self_data == 0, 1, self_data)
    element = self_data if which == "self" else values
    place_zeros = zeros if which == "self" else zeros[coords]
    place_product = nonzero_product if which == "self" else nonzero_product[coords]
    g_place = grad if which == "self" else grad[coords]
    with np.errstate(divide="ignore", invalid="ignore"):
        others = np.where(element == 0, np.where(place_zeros == 1, place_product, 0),
                          np.where(place_zeros == 0, place_product / np.where(element == 0, 1, element), 0))
    return g_place * others


def index_select(input: Tensor, dim: int, index: Any, *, out: Tensor | None = None) -> Tensor:
    """The slices of x at `index` (a 1-D integer tensor) along `dim`. Gradient: scatter-added back.
    With `out`, the result is written into that tensor (of x's dtype; resized), without gradient."""
    if out is not None:
        out_keyword.check_no_grad("index_select", out, (input, index))
        result = index_select(input, dim, index)
        return out_keyword.write("index_select", out, result, "exact", (input, index),
                                 "index_select(): self and result must have the same scalar type",
                                 separate=True)
    dim = checks.dim(dim, input.ndim, "index_select")
    idx = _index_array(index, input, "index_select")
    if idx.ndim > 1:
        raise IndexError(f"index_select(): index must be 1-D, got shape {idx.shape}")
    if input.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    size = input.shape[dim] if input.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):  # no index from the end, as PyTorch
        raise _out_of_bounds("index_select", idx, size, dim)
    data = input.data if input.ndim else input.data.reshape(1)
    shape = input.data.shape
    xp = namespace(data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = xp.zeros(data.shape, dtype=grad.dtype)
        ufunc_at(np.add, np.moveaxis(full, dim, 0), idx.reshape(-1), np.moveaxis(grad.reshape(
            data.shape[:dim] + (idx.size,) + data.shape[dim + 1:]), dim, 0))
        return full.reshape(shape)

    out = np.take(data, idx.reshape(-1), axis=dim)
    return record(out if input.ndim else out.reshape(()), "index_select", (input,), vjp, saved=(),
                  graph_vjp=linear_graph("index_select", vjp, partial(index_select, dim=dim, index=idx)))


def _slice_index(x: Tensor, dim: int, index: Any, op: str) -> tuple[int, np.ndarray]:
    """(dim, index) checked for the index_* ops: a vector (or scalar) of positions along dim."""
    dim = checks.dim(dim, x.ndim, op)
    idx = _index_array(index, x, op)
    if idx.ndim > 1:
        raise RuntimeError(f"{op}(): index has to be a vector/scalar, got shape {idx.shape}")
    if op in ("index_copy", "index_fill") and idx.dtype != np.int64:  # (index_add takes int32 too)
        raise (IndexError if op == "index_fill" else RuntimeError)(
            f"{op}(): Expected a long (int64) tensor for index, but got {idx.dtype}")
    size = x.shape[dim] if x.ndim else 1
    low = -size if op == "index_fill" else 0  # only index_fill counts from the end, as PyTorch
    if idx.size and (idx.min() < low or idx.max() >= size):
        raise _out_of_bounds(op, idx, size, dim)
    return dim, idx.reshape(-1)


def _check_source(x: Tensor, dim: int, idx: np.ndarray, source: Tensor, op: str) -> None:
    """source has x's dtype and x's shape, with len(index) along dim (PyTorch's rules)."""
    if source.dtype != x.dtype:
        raise RuntimeError(f"{op}(): self ({x.dtype}) and source ({source.dtype}) must have the same "
                           "scalar type")
    if x.ndim == 0 or source.ndim == 0:
        fits = source.numel() == idx.size
    else:
        rows = source.shape[dim] if source.ndim > dim else None
        if rows != idx.size:  # PyTorch's index_copy calls this an IndexError, index_add a RuntimeError
            raise (IndexError if op == "index_copy" else RuntimeError)(
                f"{op}(): number of indices ({idx.size}) should be equal to source.size(dim) ({rows}), "
                f"for dim {dim} (source of shape {source.shape})")
        fits = source.shape == x.shape[:dim] + (idx.size,) + x.shape[dim + 1:]
    if not fits:
        raise RuntimeError(f"{op}(): source of shape {source.shape} doesn't fit: expected "
                           f"{x.shape[:dim] + (idx.size,) + x.shape[dim + 1:]} ({idx.size} indices along "
                           f"dimension {dim} of a tensor of shape {x.shape})")


def index_add(input: Tensor, dim: int, index: Any, source: Tensor, *, alpha: float = 1) -> Tensor:
    """A copy of x with alpha * source[..., i, ...] added at x[..., index[i], ...] along `dim`
    (repeated indices add up). Gradients: x's passes through; source's is alpha * grad[index]."""
    dim, idx = _slice_index(input, dim, index, "index_add")
    _check_source(input, dim, idx, source, "index_add")
    alpha = checked_scalar(alpha.item() if isinstance(alpha, Tensor | np.generic) else alpha, input.dtype,
                           "index_add")
    out = input.data.copy()
    values = source.data if alpha == 1 else source.data * input.dtype.type(alpha)
    ufunc_at(np.add, np.moveaxis(out.reshape(input.shape or (1,)), dim, 0), idx,
             np.moveaxis(values.reshape(source.shape or (1,)), dim, 0))
    return record(out, "index_add", (input, source), lambda grad: grad,
                  lambda grad: np.take(grad.reshape(input.shape or (1,)), idx, axis=dim).reshape(source.shape)
                  * (1 if alpha == 1 else input.dtype.type(alpha)), saved=(),
                  graph_vjp=partial(_index_add_graph, dim, idx, alpha))


def _index_add_graph(dim: int, idx: np.ndarray, alpha: float, grad: Tensor, out: Tensor, x: Tensor,
                     source: Tensor) -> tuple[Tensor, Tensor]:
    grad_source = grad.reshape(*(x.shape or (1,))).index_select(dim, idx).reshape(*source.shape)
    return grad, grad_source if alpha == 1 else grad_source * alpha


@autocast_op("index_copy")
def index_copy(input: Tensor, dim: int, index: Any, source: Tensor) -> Tensor:
    """A copy of x with source[..., i, ...] written at x[..., index[i], ...] along `dim`.
    Gradients: x's where nothing was written; source's is grad[index]."""
    dim, idx = _slice_index(input, dim, index, "index_copy")
    _check_source(input, dim, idx, source, "index_copy")
    key = (slice(None),) * dim + (idx,)
    out = input.data.copy()
    out.reshape(input.shape or (1,))[key] = source.data.reshape(source.shape or (1,))

    def vjp_x(grad: np.ndarray) -> np.ndarray:
        g = grad.copy()
        g.reshape(input.shape or (1,))[key] = 0
        return g

    return record(out, "index_copy", (input, source), vjp_x,
                  lambda grad: grad.reshape(input.shape or (1,))[key].reshape(source.shape), saved=(),
                  graph_vjp=partial(_index_copy_graph, dim, idx))


def _index_copy_graph(dim: int, idx: np.ndarray, grad: Tensor, out: Tensor, x: Tensor,
                      source: Tensor) -> tuple[Tensor, Tensor]:
    written = namespace(out._data).zeros(x.shape or (1,), dtype=bool)
    written[(slice(None),) * dim + (idx,)] = True
    grad_x = elementwise.where(new_leaf(written.reshape(x.shape)), 0.0, grad)
    return grad_x, grad.reshape(*(x.shape or (1,))).index_select(dim, idx).reshape(*source.shape)


def index_fill(input: Tensor, dim: int, index: Any, value: Any) -> Tensor:
    """A copy of x with `value` at x[..., index[i], ...] along `dim`. Gradients: x's where nothing
    was written; a 0-d tensor value's is the sum of grad over the filled places."""
    dim, idx = _slice_index(input, dim, index, "index_fill")
    complex_value = isinstance(value, complex) or isinstance(value, Tensor) and value.dtype.kind == "c"
    if complex_value and input.dtype.kind != "c":
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    filled = namespace(input.data).zeros(input.shape or (1,), dtype=bool)
    filled[(slice(None),) * dim + (idx,)] = True
    return masked_fill(input, filled.reshape(input.shape), value)


def masked_scatter(input: Tensor, mask: Any, source: Tensor) -> Tensor:
    """A copy of x with the first k elements of source (in row-major order) written where the
    mask is True, k being the number of Trues; x and the mask broadcast together (the result has
    their broadcast shape). Gradients: x's where the mask is False; source's first k elements get
    grad at the masked places."""
    m = _mask_array(mask, input, "masked_scatter")
    shape = np.broadcast_shapes(m.shape, input.shape)
    if shape != input.shape:
        input = input.expand(*shape)  # noqa: A001 (its gradient is summed back to input's shape)
    m = np.broadcast_to(m, shape)
    count = int(m.sum())
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter(): expected self and source to have same dtypes but got "
                           f"{input.dtype} and {source.dtype}")
    if source.numel() < count:
        raise RuntimeError(f"masked_scatter(): number of elements of source ({source.numel()}) < number of "
                           f"ones in mask ({count})")
    out = input.data.copy()
    out[m] = source.data.reshape(-1)[:count]
    xp = namespace(input.data)

    def vjp_source(grad: np.ndarray) -> np.ndarray:
        g = xp.zeros(source.numel(), dtype=grad.dtype)
        g[:count] = grad[m]
        return g.reshape(source.shape)

    return record(out, "masked_scatter", (input, source), lambda grad: np.where(m, 0, grad), vjp_source,
                  saved=(), graph_vjp=partial(_masked_scatter_graph, m, count))


def _masked_scatter_graph(m: np.ndarray, count: int, grad: Tensor, out: Tensor, x: Tensor,
                          source: Tensor) -> tuple[Tensor, Tensor]:
    return (elementwise.where(new_leaf(m), 0.0, grad),
            _linear("masked_scatter backward", partial(_masked_taken, m, count, source.shape),
                    partial(_masked_placed, m, count), grad))


def _masked_taken(m: np.ndarray, count: int, shape: tuple[int, ...], grad: np.ndarray) -> np.ndarray:
    """grad at the masked places, as the first `count` elements of zeros of source's `shape`."""
    g = namespace(grad).zeros(math.prod(shape), dtype=grad.dtype)
    g[:count] = grad[m]
    return g.reshape(shape)


def _masked_placed(m: np.ndarray, count: int, h: np.ndarray) -> np.ndarray:
    """Zeros of the mask's shape with h's first `count` elements at the masked places (the transpose)."""
    full = namespace(h).zeros(m.shape, dtype=h.dtype)
    full[m] = h.reshape(-1)[:count]
    return full


def take_along_dim(input: Tensor, indices: Any, dim: int | None = None) -> Tensor:
    """x's elements at `indices` along `dim` (x and indices broadcast together elsewhere), or of
    the flattened x for None. Along a dim, an index is taken modulo the dim's size, as PyTorch's
    (-1 is the last); the flattened x takes [0, numel) only. Gradient: scatter-added back (through
    `gather`)."""
    idx = _index_array(indices, input, "take_along_dim")
    if idx.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {idx.dtype}")
    if dim is None:
        return gather(input.reshape(-1), 0, idx.reshape(-1))
    if input.ndim == 0:
        raise IndexError(f"take_along_dim(): Dimension specified as {dim} but tensor has no dimensions")
    dim = checks.dim(dim, input.ndim, "take_along_dim")
    if idx.ndim != input.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {input.ndim} dimensions for input, and {idx.ndim} "
                           "dimensions "
                           "for indices")
    shape = [max(a, b) for a, b in zip(input.shape, idx.shape, strict=True)]
    x_shape, idx_shape = list(shape), list(shape)
    x_shape[dim], idx_shape[dim] = input.shape[dim], idx.shape[dim]
    if not checks.broadcasts_to(idx.shape, tuple(idx_shape)):
        raise checks.ShapeError(f"take_along_dim(): indices of shape {idx.shape} can't be broadcast with the "
                                f"input's shape {input.shape} (apart from dimension {dim})")
    if input.shape[dim] and idx.size and (idx.min() < 0 or idx.max() >= input.shape[dim]):
        idx = idx % input.shape[dim]
    return gather(input.expand(*x_shape), dim, np.broadcast_to(idx, idx_shape))


def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each: `nonzero(x)`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "argwhere")
    return nonzero(input)


def _mask_array(mask: Any, x: Tensor, op: str) -> np.ndarray:
    data = array_like(mask.data if isinstance(mask, Tensor) else mask, x.data)
    if data.dtype != np.bool_:
        raise RuntimeError(f"{op}(): expected a bool mask, got dtype {data.dtype}")
    try:
        np.broadcast_shapes(data.shape, x.shape)
    except ValueError:
        raise RuntimeError(f"{op}(): mask of shape {data.shape} can't be broadcast to the tensor's shape "
                           f"{x.shape}") from None
    return data


def masked_fill(input: Tensor, mask: Any, value: Any) -> Tensor:
    """x with `value` where mask is True. Gradient: x's where the mask is False; value's summed where True."""
    m = _mask_array(mask, input, "masked_fill")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill(): value must be a 0-d tensor or a number, got shape "
                               f"{value.shape}")
        if value.dtype != input.dtype:  # its number must fit input's dtype, as a number value's
            checked_scalar(value.item(), input.dtype, "masked_fill")
        out = np.where(m, value.data.astype(input.dtype), input.data)
        return record(out, "masked_fill", (input, value),
                      lambda grad: np.where(m, 0, grad),
                      lambda grad: np.where(m, grad, 0).sum(), saved=(),
                      graph_vjp=partial(_masked_fill_graph, m))
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | float | complex):
        value = checked_scalar(value, input.dtype, "masked_fill")
    out = np.where(m, namespace(input.data).asarray(value).astype(input.dtype), input.data)
    return record(out, "masked_fill", (input,), lambda grad: np.where(m, 0, grad), saved=(),
                  graph_vjp=partial(_masked_fill_graph, m))


def _masked_fill_graph(m: np.ndarray, grad: Tensor, out: Tensor, x: Tensor,
                       *value: Tensor) -> tuple[Tensor, ...]:
    mask = new_leaf(m)
    grad_x = elementwise.where(mask, 0.0, grad)
    return (grad_x, elementwise.where(mask, grad, 0.0).sum()) if value else (grad_x,)


def masked_select(input: Tensor, mask: Any, *, out: Tensor | None = None) -> Tensor:
    """The elements of x where mask is True, as a 1-D tensor (broadcasting both). Gradient: put back.
    With `out`, the result is written into that tensor (of x's dtype; resized), without gradient."""
    if out is not None:
        out_keyword.check_no_grad("masked_select", out, (input, mask))
        return out_keyword.write("masked_select", out, masked_select(input, mask), "exact", (input, mask),
                                 "masked_select(): self and result must have the same scalar type",
                                 separate=True)
    m = _mask_array(mask, input, "masked_select")
    shape = np.broadcast_shapes(m.shape, input.shape)
    full_mask = np.broadcast_to(m, shape)
    xp = namespace(input.data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = xp.zeros(shape, dtype=grad.dtype)
        full[full_mask] = grad
        return full

    return record(np.broadcast_to(input.data, shape)[full_mask], "masked_select", (input,), vjp, saved=(),
                  graph_vjp=linear_graph("masked_select", vjp, partial(masked_select, mask=full_mask)))


def nonzero(input: Tensor, as_tuple: bool = False) -> Any:
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or one 1-D tensor per dim."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "nonzero")
    coords = np.nonzero(input.data if input.ndim else input.data.reshape(1))
    if as_tuple:
        return tuple(new_leaf(c.astype(np.int64)) for c in coords)
    return new_leaf(np.stack(coords, axis=1).astype(np.int64) if input.ndim else
                    namespace(input.data).zeros((len(coords[0]), 0), dtype=np.int64))


def take(input: Tensor, index: Any, *, out: Tensor | None = None) -> Tensor:
    """x's elements at `index` into its flattened self, in index's shape. Gradient: scatter-added.
    With `out`, the result is written into that tensor (of x's dtype; resized), without gradient."""
    if out is not None:
        out_keyword.check_no_grad("take", out, (input, index))
        return out_keyword.write("take", out, take(input, index), "exact", (input, index),
                                 f"take(): self and out expected to have the same dtype, but got "
                                 f"self.dtype = {input.dtype} and out.dtype = {out.dtype}", separate=True)
    idx = _index_array(index, input, "take")
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long (int64) tensor for index, but got {idx.dtype}")
    if idx.size and (idx.min() < -input.numel() or idx.max() >= input.numel()):
        raise IndexError(f"take(): index out of range for a tensor of {input.numel()} elements")
    shape = input.data.shape
    xp = namespace(input.data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = xp.zeros(input.numel(), dtype=grad.dtype)
        ufunc_at(np.add, full, idx.reshape(-1), grad.reshape(-1))
        return full.reshape(shape)

    return record(input.data.reshape(-1)[idx], "take", (input,), vjp, saved=(),
                  graph_vjp=linear_graph("take", vjp, partial(take, index=idx)))


# --- writes into a copy: put, index_reduce and the *_scatter family ----------------------------------


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of input, seen as 1-D in row-major order, with source's elements written at `index`
    (added there with `accumulate`). Gradients: input's is grad, zeroed at the written places
    unless accumulating; source's is grad at index (flattened)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"put(): argument 'index' must be Tensor, not {type(index).__name__}")
    if not isinstance(source, Tensor):
        raise TypeError(f"put(): argument 'source' must be Tensor, not {type(source).__name__}")
    if index.dtype != np.int64:
        raise RuntimeError(f"put_(): expected a long (int64) tensor for index, got {index.dtype}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{input.dtype} and source.dtype = {source.dtype}")
    n = input.numel()
    if source.numel() != index.numel():
        raise IndexError(f"put_(): expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    idx = index.data.reshape(-1)
    if idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
        bad = int(idx.max()) if int(idx.max()) >= n else int(idx.min())
        raise IndexError(f"put_(): out of range: tried to access index {bad} on a tensor of {n} elements")
    idx = idx % max(n, 1)  # (negative positions count from the end)
    out = input.data.copy()  # row-major, so reshape(-1) is a view of it
    values = source.data.reshape(-1)
    if accumulate:
        ufunc_at(np.add, out.reshape(-1), idx, values)
    else:
        out.reshape(-1)[idx] = values
    shape = source.shape

    def vjp_input(grad: np.ndarray) -> np.ndarray:
        g = grad.copy()
        g.reshape(-1)[idx] = 0
        return g

    return record(out, "put", (input, source), (lambda grad: grad) if accumulate else vjp_input,
                  lambda grad: grad.reshape(-1)[idx].reshape(shape), saved=(),
                  graph_vjp=partial(_put_graph, idx, accumulate))


def _put_graph(idx: np.ndarray, accumulate: bool, grad: Tensor, out: Tensor, input: Tensor,  # noqa: A002
               source: Tensor) -> tuple[Tensor, Tensor]:
    """put's gradients as graph nodes: input's is grad (zeroed at idx unless accumulating), source's
    is take(grad, idx)."""
    grad_input = grad
    if not accumulate:
        written = namespace(out._data).zeros(out.shape, dtype=bool)
        written.reshape(-1)[idx] = True
        grad_input = elementwise.where(new_leaf(written), 0.0, grad)
    return grad_input, take(grad, idx.reshape(source.shape))


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,  # noqa: A002
                 include_self: bool = True) -> Tensor:
    """A copy of input where each slice input[..., index[i], ...] along `dim` combines, by `reduce`
    ('prod', 'mean', 'amax' or 'amin'), with the slices of source sent there (and itself with
    `include_self`). It is `scatter_reduce` with the index spread over source's shape, and has its
    gradients: mean divides by the count, amax/amin share among ties, prod is the product of the others.
    """
    op = "index_reduce_"
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"{op}(): expected reduce to be one of prod, mean, amax or amin but got "
                           f"{reduce!r}")
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): argument 'source' must be Tensor, not {type(source).__name__}")
    dim = checks.dim(dim, input.ndim, op)
    idx = _index_array(index, input, op)
    if idx.ndim > 1:
        raise IndexError(f"{op}(): index is supposed to be a vector, but got shape {idx.shape}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"{op}(): self ({input.dtype}) and source ({source.dtype}) must have the same "
                           "scalar type")
    if input.ndim == 0 or source.ndim == 0:
        if input.ndim != source.ndim:
            raise RuntimeError(f"{op}(): source tensor shape must match self tensor shape, excluding the "
                               f"specified dimension; got self of shape {input.shape} and source of "
                               f"shape {source.shape}")
        out = index_reduce(input.reshape(1), 0, idx.reshape(-1), source.reshape(1), reduce,
                           include_self=include_self)
        return out.reshape(())
    idx = idx.reshape(-1)
    if source.shape[dim] != idx.size:
        raise RuntimeError(f"{op}(): number of indices ({idx.size}) should be equal to source.size(dim) "
                           f"({source.shape[dim]}), for dim {dim}")
    if source.shape[:dim] + source.shape[dim + 1:] != input.shape[:dim] + input.shape[dim + 1:]:
        raise RuntimeError(f"{op}(): source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension; got self of shape {input.shape} and source of shape "
                           f"{source.shape} (dim {dim})")
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= input.shape[dim]):
        bad = int(idx.min()) if int(idx.min()) < 0 else int(idx.max())
        raise IndexError(f"{op}(): index out of range in self: index {bad} for dimension {dim} of size "
                         f"{input.shape[dim]}")
    spread = np.broadcast_to(idx.reshape((1,) * dim + (-1,) + (1,) * (source.ndim - dim - 1)), source.shape)
    return scatter_reduce(input, dim, spread, source, reduce, include_self=include_self, op="index_reduce")


def _written_part(x: Tensor, src: Any, where: Callable, op: str) -> Tensor:
    """A copy of x with src written into the part `where(array)` picks (a (view, index) pair with
    `view[index]` the part, writable through). Gradients: x's is grad with the part zeroed (it was
    overwritten); src's is grad's part. src is cast to x's dtype, as PyTorch casts it."""
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}(): argument 'src' must be Tensor, not {type(src).__name__}")
    out = x.data.copy()
    view, at = where(out)
    shape = view[at].shape
    if shape != src.shape:
        raise RuntimeError(f"{op}(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(shape)} (self of shape {x.shape})")
    view[at] = src.data

    def vjp_x(grad: np.ndarray) -> np.ndarray:
        g = grad.copy()
        part, where_g = where(g)
        part[where_g] = 0
        return g

    def vjp_src(grad: np.ndarray) -> np.ndarray:
        part, where_g = where(grad)
        return part[where_g]

    return record(out, op, (x, src), vjp_x, vjp_src, saved=(),
                  graph_vjp=partial(_written_part_graph, where, op))


def _written_part_graph(where: Callable, op: str, grad: Tensor, out: Tensor, x: Tensor,
                        src: Tensor) -> tuple[Tensor, Tensor]:
    """The *_scatter gradients as graph nodes: x's is grad with the part zeroed, src's the part of
    grad, whose transpose writes h into the part of zeros."""
    written = namespace(out._data).zeros(out.shape, dtype=bool)
    view, at = where(written)
    view[at] = True
    return (elementwise.where(new_leaf(written), 0.0, grad),
            _linear(f"{op} backward", partial(_part_of, where), partial(_into_part, where, out.shape), grad))


def _part_of(where: Callable, grad: np.ndarray) -> np.ndarray:
    part, at = where(grad)
    return namespace(grad).array(part[at])  # a copy: the part is a view of grad


def _into_part(where: Callable, shape: tuple[int, ...], h: np.ndarray) -> np.ndarray:
    """Zeros of `shape` with h written into the part (the transpose of taking it)."""
    full = namespace(h).zeros(shape, dtype=h.dtype)
    view, at = where(full)
    view[at] = h
    return full


def _keyed(key: tuple, array: np.ndarray) -> tuple[np.ndarray, tuple]:
    return array, key


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """A copy of input with src written at input.select(dim, index). Gradients: input's is grad
    with that slice zeroed; src's is grad.select(dim, index)."""
    if input.ndim == 0:
        raise IndexError("select_scatter(): select() cannot be applied to a 0-dim tensor")
    dim = checks.dim(dim, input.ndim, "select_scatter")
    index = checks.as_int(index, "select_scatter", "index")
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    key = (slice(None),) * dim + (index, Ellipsis)  # (the Ellipsis keeps a 0-d part a view)
    return _written_part(input, src, partial(_keyed, key), "select_scatter")


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,  # noqa: A002
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of input with src written at input[..., start:end:step] along `dim`. Gradients:
    input's is grad with that slice zeroed; src's is grad's slice."""
    dim = checks.dim(dim, input.ndim, "slice_scatter")
    step = checks.as_int(step, "slice_scatter", "step")
    if step <= 0:
        raise RuntimeError(f"slice_scatter(): slice step must be positive, got {step}")
    start = None if start is None else checks.as_int(start, "slice_scatter", "start")
    end = None if end is None else checks.as_int(end, "slice_scatter", "end")
    key = (slice(None),) * dim + (slice(start, end, step), Ellipsis)
    return _written_part(input, src, partial(_keyed, key), "slice_scatter")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,  # noqa: A002
                     dim2: int = 1) -> Tensor:
    """A copy of input with src written at input.diagonal(offset, dim1, dim2) (the diagonal as the
    last dimension of src). Gradients: input's is grad with the diagonal zeroed; src's is grad's
    diagonal."""
    op = "diagonal_scatter"
    dim1, dim2 = checks.dim(dim1, input.ndim, op), checks.dim(dim2, input.ndim, op)
    if dim1 == dim2:
        raise RuntimeError(f"{op}(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = checks.as_int(offset, op, "offset")
    rows, cols = input.shape[dim1], input.shape[dim2]
    n = max(0, min(rows - max(-offset, 0), cols - max(offset, 0)))
    xp = namespace(input.data)
    on_rows, on_cols = xp.arange(n) + max(-offset, 0), xp.arange(n) + max(offset, 0)
    return _written_part(input, src, partial(_on_diagonal, dim1, dim2, (Ellipsis, on_rows, on_cols)), op)


def _on_diagonal(dim1: int, dim2: int, key: tuple, array: np.ndarray) -> tuple[np.ndarray, tuple]:
    """(view, index) picking the diagonal over dim1 and dim2 (its positions in `key`), as the last dim."""
    return np.moveaxis(array, (dim1, dim2), (-2, -1)), key


def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any,  # noqa: A002
                       storage_offset: int | None = None) -> Tensor:
    """A copy of input with src written where input.as_strided(size, stride, storage_offset) reads
    input's storage (positions outside input's own elements are not part of the copy). Gradients:
    input's is grad zeroed at the written elements; src's is grad at them (0 elsewhere)."""
    from tensorgrad.movement import _element_indices, _storage_of

    op = "as_strided_scatter"
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}(): argument 'src' must be Tensor, not {type(src).__name__}")
    shape = checks.sizes((size,), op)
    steps = tuple(checks.as_int(s, op, "stride") for s in stride)
    if len(steps) != len(shape):
        raise RuntimeError(f"{op}(): mismatch in length of strides and shape: size {shape}, stride {steps}")
    if any(s < 0 for s in steps):
        raise RuntimeError(f"{op}(): negative strides are not supported, got strides {steps}")
    if src.shape != shape:
        raise RuntimeError(f"{op}(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(shape)}")
    storage = _storage_of(input.data)
    if not storage.flags.c_contiguous:
        raise RuntimeError(f"{op}(): the tensor's storage is not one contiguous buffer")
    item = input.data.itemsize
    xp = namespace(input.data)
    offset = storage_offset
    if offset is None:
        offset = (data_address(input.data) - data_address(storage)) // item
    offset = checks.as_int(offset, op, "storage_offset")
    last = offset + sum((n - 1) * s for n, s in zip(shape, steps, strict=True))
    if offset < 0 or (min(shape, default=1) > 0 and last >= storage.size):
        raise RuntimeError(f"{op}(): size {shape}, stride {steps} and offset {offset} reach outside the "
                           f"storage of {storage.size} elements")
    reads = offset + sum(xp.arange(n).reshape((-1,) + (1,) * (len(shape) - i - 1)) * s
                         for i, (n, s) in enumerate(zip(shape, steps, strict=True)))
    slot = xp.full(storage.size, -1, dtype=np.int64)  # each storage element's place in input, if any
    slot[_element_indices(input.data, storage, item).reshape(-1)] = xp.arange(input.numel())
    place = slot[np.broadcast_to(reads, shape)]
    inside = place >= 0
    targets, sources = place[inside], xp.arange(src.numel()).reshape(shape)[inside]
    out = input.data.copy()  # row-major, so reshape(-1) is a view of it
    out.reshape(-1)[targets] = src.data.reshape(-1)[sources]
    written = xp.zeros(input.numel(), dtype=bool)
    written[targets] = True
    written = written.reshape(input.shape)

    def vjp_src(grad: np.ndarray) -> np.ndarray:
        g = xp.zeros(src.numel(), dtype=grad.dtype)
        g[sources] = grad.reshape(-1)[targets]
        return g.reshape(shape)

    return record(out, op, (input, src), lambda grad: np.where(written, 0, grad), vjp_src, saved=(),
                  graph_vjp=partial(_as_strided_scatter_graph, written, targets, sources))


def _as_strided_scatter_graph(written: np.ndarray, targets: np.ndarray, sources: np.ndarray, grad: Tensor,
                              out: Tensor, input: Tensor, src: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    return (elementwise.where(new_leaf(written), 0.0, grad),
            _linear("as_strided_scatter backward", partial(_flat_moved, targets, sources, src.shape),
                    partial(_flat_moved, sources, targets, input.shape), grad))


def _flat_moved(frm: np.ndarray, to: np.ndarray, shape: tuple[int, ...], a: np.ndarray) -> np.ndarray:
    """Zeros of `shape` with a's flat elements at `frm` added at the flat places `to` (a place named
    twice gets both): as_strided_scatter's gradient for src, and its transpose."""
    full = namespace(a).zeros(math.prod(shape), dtype=a.dtype)
    ufunc_at(np.add, full, to, a.reshape(-1)[frm])
    return full.reshape(shape)


def fill_diagonal(x: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """A copy of x with `fill_value` on its main diagonal (for more than 2 dimensions, all of equal
    size, the elements with all indices equal); with `wrap`, a tall matrix's diagonal starts again
    every columns + 1 rows. Gradient: x's, zero on the diagonal. (`fill_diagonal_` writes it in place.)"""
    if x.ndim < 2:
        raise RuntimeError(f"fill_diagonal_(): dimensions must be larger than 1, got a tensor of shape "
                           f"{x.shape}")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise RuntimeError(f"fill_diagonal_(): all dimensions of input must be of equal length, got shape "
                           f"{x.shape}")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()  # a number, as PyTorch's Scalar argument: no gradient
    rows, cols = x.shape[0], x.shape[-1]
    # In row-major order the diagonal is every (1 + cols + cols**2 + ...)-th element.
    step = sum(cols ** k for k in range(x.ndim))
    end = x.numel() if (wrap and x.ndim == 2) else min(rows, cols) * step
    xp = namespace(x.data)
    diagonal = xp.zeros(x.numel(), dtype=bool)
    diagonal[xp.arange(0, end, step)] = True
    return masked_fill(x, diagonal.reshape(x.shape), fill_value)
