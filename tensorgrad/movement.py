"""Movement ops: views that share storage and copy nothing, plus `cat` and `stack` (chapter 6).

A view is a new shape and new strides over the same storage buffer, so `reshape`, `transpose`,
`permute`, `expand`, `unsqueeze`, `squeeze`, `flatten` and basic slicing cost no copy: the
output's `data` is a numpy view of the input's, and both share one version counter, so an
in-place change through either is seen by backward. Each view's gradient is the inverse
movement of the incoming gradient (`expand`'s is a sum, done by `record`'s `unbroadcast`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorgrad import checks
from tensorgrad.checks import ShapeError
from tensorgrad.tensor import Tensor, record


def _view(x: Tensor, data: np.ndarray, op: str, vjp) -> Tensor:
    """Record a view op: the output shares x's storage, so it shares x's version counter."""
    out = record(data, op, (x,), vjp, saved=())
    out._versions = x._versions
    return out


def _dim(dim: int, ndim: int, op: str) -> int:
    """A dimension index in range(ndim), negative ones counted from the end."""
    return checks.dim(dim, ndim, op)


def reshape(x: Tensor, *shape: int) -> Tensor:
    """The same elements in a new shape (-1 infers one size); a view whenever strides allow."""
    shape = checks.sizes(shape, "reshape", allow_infer=True)
    try:
        data = x.data.reshape(shape)
    except ValueError:
        raise ShapeError(f"reshape: shape {shape} is invalid for a tensor of shape {x.shape} "
                         f"({x.data.size} elements)") from None
    in_shape = x.data.shape
    if np.may_share_memory(data, x.data):
        return _view(x, data, "reshape", lambda grad: grad.reshape(in_shape))
    return record(data, "reshape", (x,), lambda grad: grad.reshape(in_shape), saved=())


def view(x: Tensor, *shape: int) -> Tensor:
    """Like `reshape`, but never copies: raises when the strides don't allow a view."""
    shape = checks.sizes(shape, "view", allow_infer=True)
    try:
        data = np.reshape(x.data, shape, copy=False)
    except ValueError:
        if x.data.size == int(np.prod([n for n in shape if n != -1])) or -1 in shape:
            raise RuntimeError(
                f"view: shape {shape} is not compatible with the strides {x.stride()} of this "
                f"{x.shape} tensor (it is not contiguous); use reshape() or contiguous().view()"
            ) from None
        raise ShapeError(f"view: shape {shape} is invalid for a tensor of shape {x.shape} "
                         f"({x.data.size} elements)") from None
    in_shape = x.data.shape
    return _view(x, data, "view", lambda grad: grad.reshape(in_shape))


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view). Gradient: the same swap."""
    dim0, dim1 = _dim(dim0, x.ndim, "transpose"), _dim(dim1, x.ndim, "transpose")
    return _view(x, x.data.swapaxes(dim0, dim1), "transpose",
                 lambda grad: grad.swapaxes(dim0, dim1))


def T(x: Tensor) -> Tensor:
    """All dimensions reversed (a matrix's transpose; a view). Gradient: reversed back."""
    return _view(x, x.data.T, "T", lambda grad: grad.T)


def permute(x: Tensor, *dims: int) -> Tensor:
    """Reorder the dimensions (a view). Gradient: the inverse permutation."""
    if len(dims) == 1 and isinstance(dims[0], Sequence):
        dims = tuple(dims[0])
    dims = tuple(_dim(d, x.ndim, "permute") for d in dims)
    if sorted(dims) != list(range(x.ndim)):
        raise ShapeError(f"permute: {dims} is not a permutation of the {x.ndim} dimensions of {x.shape}")
    inverse = tuple(np.argsort(dims))
    return _view(x, x.data.transpose(dims), "permute", lambda grad: grad.transpose(inverse))


def expand(x: Tensor, *sizes: int) -> Tensor:
    """Broadcast size-1 dimensions to `sizes` (-1 keeps a size) with stride 0: a view.

    Gradient: summed over the expanded dimensions (by `record`).
    """
    sizes = checks.sizes(sizes, "expand", allow_infer=True)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: {sizes} has fewer dimensions than the tensor's shape {x.shape}")
    shape = tuple(x.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes))
    return broadcast_to(x, shape, op="expand")


def broadcast_to(x: Tensor, shape: Sequence[int], op: str = "expand") -> Tensor:
    """x broadcast to `shape` (stride 0 where it is stretched): a read-only view."""
    shape = checks.sizes((shape,), op, allow_infer=True)
    data = x.data
    lead = len(shape) - data.ndim
    if lead < 0 or min(shape, default=0) < 0 or any(
            n != size and n != 1 for n, size in zip(data.shape, shape[lead:], strict=True)):
        raise ShapeError(f"{op}: a tensor of shape {x.shape} can't be broadcast to {shape}")
    # PyTorch's strides: 0 where a dimension is stretched or added, kept where the size stays
    # (numpy's broadcast_to gives every size-1 dimension stride 0, even one that stays 1).
    strides = [s if n == size else 0
               for n, size, s in zip(data.shape, shape[lead:], data.strides, strict=True)]
    for size in reversed(shape[:lead]):
        if size != 1:
            strides.insert(0, 0)
        else:  # an added size-1 dimension: as unsqueeze would insert it
            strides.insert(0, shape[-len(strides)] * strides[0] if strides else data.itemsize)
    return _view(x, as_strided(data, shape, strides, writeable=False), "expand", lambda grad: grad)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at `dim` (a view)."""
    dim = _dim(dim, x.ndim + 1, "unsqueeze")
    in_shape = x.data.shape
    data = x.data
    step = data.shape[dim] * data.strides[dim] if dim < data.ndim else data.itemsize
    return _view(x, with_unit_dims(data, (dim,), (step,)), "unsqueeze", lambda grad: grad.reshape(in_shape))


def with_unit_dims(data: np.ndarray, dims: Sequence[int], byte_strides: Sequence[int]) -> np.ndarray:
    """A view of `data` with size-1 dimensions inserted at `dims` (ascending positions in the
    result), with the given strides (in bytes); the other dimensions keep theirs.

    A size-1 dimension's stride never moves an address, and numpy's own ways to add one
    (`expand_dims`, `None` in an index) pick 0 or recompute the strides of other size-1
    dimensions; PyTorch gives it the size times the stride of the dimension it is inserted
    before, and `stride()` should read as PyTorch's.
    """
    shape, strides = list(data.shape), list(data.strides)
    for d, s in zip(dims, byte_strides, strict=True):
        shape.insert(d, 1)
        strides.insert(d, s)
    return as_strided(data, shape, strides)


def squeeze(x: Tensor, dim: int | tuple[int, ...] | None = None) -> Tensor:
    """Remove dimensions of size 1 (all, or those in `dim` that have size 1): a view."""
    if dim is None:
        axes = tuple(i for i, n in enumerate(x.shape) if n == 1)
    else:
        axes = tuple(d for d in checks.dims(dim, x.ndim, "squeeze") if x.shape[d] == 1)
    in_shape = x.data.shape
    return _view(x, np.squeeze(x.data, axis=axes), "squeeze", lambda grad: grad.reshape(in_shape))


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one (a view when strides allow)."""
    if x.ndim == 0:
        return reshape(x, 1)
    start, end = _dim(start_dim, x.ndim, "flatten"), _dim(end_dim, x.ndim, "flatten")
    shape = x.shape[:start] + (int(np.prod(x.shape[start:end + 1])),) + x.shape[end + 1:]
    out = reshape(x, shape)
    out.op = "flatten"
    return out


def contiguous(x: Tensor) -> Tensor:
    """x itself if its elements are already in row-major order, else a row-major copy."""
    if x.data.flags.c_contiguous:
        return x
    return record(np.ascontiguousarray(x.data), "contiguous", (x,), lambda grad: grad, saved=())


def clone(x: Tensor) -> Tensor:
    """A copy with its own storage. Gradient: passed through."""
    return record(x.data.copy(), "clone", (x,), lambda grad: grad, saved=())


# --- joining ------------------------------------------------------------------------------------


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension. Each gets its slice of the gradient."""
    tensors = tuple(tensors)
    if not tensors:
        raise ShapeError("cat: expected a non-empty sequence of tensors")
    dim = _dim(dim, tensors[0].ndim, "cat")
    try:
        data = np.concatenate([t.data for t in tensors], axis=dim)
    except ValueError:
        shapes = ", ".join(str(t.shape) for t in tensors)
        raise ShapeError(f"cat: shapes {shapes} must match except in dimension {dim}") from None
    bounds = np.cumsum([0] + [t.shape[dim] for t in tensors])
    vjps = [_slice_of(dim, int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    return record(data, "cat", tensors, *vjps, saved=())


def _slice_of(dim: int, lo: int, hi: int):
    index = (slice(None),) * dim + (slice(lo, hi),)
    return lambda grad: grad[index]


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join same-shape tensors along a new dimension. Each gets its slice of the gradient."""
    tensors = tuple(tensors)
    if not tensors:
        raise ShapeError("stack: expected a non-empty sequence of tensors")
    dim = _dim(dim, tensors[0].ndim + 1, "stack")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors must have the same shape, got {sorted(shapes)}")
    data = np.stack([t.data for t in tensors], axis=dim)
    vjps = [_index_of(dim, i) for i in range(len(tensors))]
    return record(data, "stack", tensors, *vjps, saved=())


def _index_of(dim: int, i: int):
    index = (slice(None),) * dim + (i,)
    return lambda grad: grad[index]
