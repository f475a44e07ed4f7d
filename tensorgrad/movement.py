"""Movement ops: views that share storage and copy nothing, plus `cat` and `stack` (chapter 6).

A view is a new shape and new strides over the same storage buffer, so `reshape`, `transpose`,
`permute`, `expand`, `unsqueeze`, `squeeze`, `flatten` and basic slicing cost no copy: the
output's `data` is a numpy view of the input's, and both share one version counter, so an
in-place change through either is seen by backward. Each view's gradient is the inverse
movement of the incoming gradient (`expand`'s is a sum, done by `record`'s `unbroadcast`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from tensorgrad import autograd, checks
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record
from tensorgrad.checks import ShapeError, UnsupportedDtypeError, not_a_tensor
from tensorgrad.device import array_like, data_address, is_array, namespace, strided_view, to_numpy, ufunc_at
from tensorgrad.dtypes import float_dtype, promote_types
from tensorgrad.higher_order import linear_graph
from tensorgrad.tensor import Tensor, _one_shape, _one_split, new_leaf


def _view(x: Tensor, data: np.ndarray, op: str, vjp, graph_vjp=None) -> Tensor:
    """Record a view op: the output shares x's storage, so `record` gives it x's version counter."""
    return record(data, op, (x,), vjp, saved=(), view_of=x, graph_vjp=graph_vjp)


def _reshaped_back(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The graph gradient of an op that only changes the shape (reshape, view, squeeze, unsqueeze)."""
    return (grad.reshape(*x.shape),)


def _as_is(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The graph gradient of an op whose gradient is the incoming one (expand: summed back by the pass)."""
    return (grad,)


def reshape(input: Tensor, *sizes: int, shape: Sequence[int] | None = None) -> Tensor:
    """The same elements in a new shape (-1 infers one size); a view whenever strides allow. The
    shape comes as PyTorch's one argument (`reshape(x, (2, 3))`, `shape=(2, 3)`) or size by size."""
    if shape is not None:
        sizes = _one_shape(sizes, shape, "reshape", "shape")
    return _reshape(input, checks.sizes(sizes, "reshape", allow_infer=True), "reshape")


def _reshape(x: Tensor, shape: tuple[int, ...], op: str) -> Tensor:
    try:
        data = x.data.reshape(shape)
    except ValueError:
        raise ShapeError(f"{op}: shape {shape} is invalid for a tensor of shape {x.shape} "
                         f"({x.data.size} elements)") from None
    except AttributeError:  # not a tensor (`tg.reshape([1, 2], (2,))`); the `try` costs nothing till then
        raise checks.not_a_tensor(x, op) from None
    in_shape = x.data.shape
    if np.may_share_memory(data, x.data):
        return _view(x, data, op, lambda grad: grad.reshape(in_shape), _reshaped_back)
    return record(data, op, (x,), lambda grad: grad.reshape(in_shape), saved=(), graph_vjp=_reshaped_back)


def view(x: Tensor, *shape: int) -> Tensor:
    """Like `reshape`, but never copies: raises when the strides don't allow a view."""
    shape = checks.sizes(shape, "view", allow_infer=True)
    try:
        if type(x.data) is np.ndarray:
            data = np.reshape(x.data, shape, copy=False)
        else:  # CuPy's reshape has no copy=False: it copies when it must, which is told apart here
            data = x.data.reshape(shape)
            if x.data.size and not np.may_share_memory(data, x.data):
                raise ValueError("a copy")
    except ValueError:
        if x.data.size == int(np.prod([n for n in shape if n != -1])) or -1 in shape:
            raise RuntimeError(
                f"view: shape {shape} is not compatible with the strides {x.stride()} of this "
                f"{x.shape} tensor (it is not contiguous); use reshape() or contiguous().view()"
            ) from None
        raise ShapeError(f"view: shape {shape} is invalid for a tensor of shape {x.shape} "
                         f"({x.data.size} elements)") from None
    in_shape = x.data.shape
    return _view(x, data, "view", lambda grad: grad.reshape(in_shape), _reshaped_back)


def is_dtype(spec: Any) -> bool:
    """Whether `spec` names a dtype (`tg.int32`, `np.float32`), as `view(dtype)` tells it from a size."""
    return isinstance(spec, np.dtype) or (isinstance(spec, type) and issubclass(spec, np.generic))


def view_dtype(x: Tensor, dtype: Any) -> Tensor:
    """x's bytes read as `dtype`, sharing its storage and version counter: PyTorch's `view(dtype)`.

    The same element size keeps the shape and strides. A smaller one splits each element along
    the last dimension, which must have stride 1 (a float32 (3, 4) viewed as int16 is (3, 8)); a
    larger one merges elements, so the last dimension's size, the storage offset and the other
    strides must be multiples of the ratio. No gradient flows through it, as in PyTorch.
    """
    new = np.dtype(dtype)
    data = x.data
    old = data.dtype
    if new.itemsize != old.itemsize:
        what = f"to view {old} as {new} (different element sizes)"
        if data.ndim == 0:
            raise RuntimeError(f"view: self.dim() cannot be 0 {what}")
        ratio = max(new.itemsize, old.itemsize) // min(new.itemsize, old.itemsize)
        strides = x.stride()
        if new.itemsize > old.itemsize:
            if data.shape[-1] % ratio:
                raise RuntimeError(f"view: self.size(-1) must be divisible by {ratio} {what}, "
                                   f"but got {data.shape[-1]} (shape {x.shape})")
            if x.storage_offset() % ratio:
                raise RuntimeError(f"view: self.storage_offset() must be divisible by {ratio} {what}, "
                                   f"but got {x.storage_offset()}")
        if strides[-1] != 1:
            raise RuntimeError(f"view: self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        for i, stride in enumerate(strides[:-1] if new.itemsize > old.itemsize else ()):
            if stride % ratio:
                raise RuntimeError(f"view: self.stride({i}) must be divisible by {ratio} {what}, "
                                   f"but got {stride}")
    out = new_leaf(data.view(new))
    out._versions = x._versions  # one storage: an in-place change through either is seen by both
    return out


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view). Gradient: the same swap."""
    dim0, dim1 = checks.dim(dim0, input.ndim, "transpose"), checks.dim(dim1, input.ndim, "transpose")
    if input.ndim == 0:  # dims 0 and -1 name the 0-d tensor's one "dimension": a view of itself
        return _view(input, input.data.view(), "transpose", lambda grad: grad, _as_is)
    return _view(input, input.data.swapaxes(dim0, dim1), "transpose",
                 lambda grad: grad.swapaxes(dim0, dim1), partial(_transpose_graph, dim0, dim1))


def _transpose_graph(dim0: int, dim1: int, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (transpose(grad, dim0, dim1),)


def T(x: Tensor, op: str = "T") -> Tensor:
    """All dimensions reversed (a matrix's transpose; a view). Gradient: reversed back.

    `op` names the node: "T" for `.T` (PyTorch's PermuteBackward0), "t" for `t()` (TBackward0).
    """
    return _view(x, x.data.T, op, lambda grad: grad.T, partial(_T_graph, op))


def _T_graph(op: str, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:  # noqa: N802 - the op's name
    return (T(grad, op),)


def permute(x: Tensor, *dims: int, **keyword: Sequence[int]) -> Tensor:
    """Reorder the dimensions (a view). Gradient: the inverse permutation.

    `dims` may also be given by keyword, as `torch.permute(x, dims=(1, 0))`.
    """
    if not isinstance(x, Tensor):
        raise not_a_tensor(x, "permute")
    if keyword:
        if dims or set(keyword) != {"dims"}:
            raise TypeError(f"permute() takes the dims positionally or as dims=, got {dims} and {keyword}")
        dims = (keyword["dims"],)
    if len(dims) == 1 and isinstance(dims[0], Sequence):
        dims = tuple(dims[0])
    dims = tuple(checks.dim(d, x.ndim, "permute") for d in dims)
    if sorted(dims) != list(range(x.ndim)):
        raise ShapeError(f"permute: {dims} is not a permutation of the {x.ndim} dimensions of {x.shape}")
    inverse = tuple(np.argsort(dims))
    return _view(x, x.data.transpose(dims), "permute", lambda grad: grad.transpose(inverse),
                 partial(_permute_graph, inverse))


def _permute_graph(inverse: tuple[int, ...], grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (permute(grad, *inverse),)


def expand(x: Tensor, *sizes: int) -> Tensor:
    """Broadcast size-1 dimensions to `sizes` (-1 keeps a size) with stride 0: a view.

    Gradient: summed over the expanded dimensions (by `record`).
    """
    return broadcast_to(x, checks.sizes(sizes, "expand", keep=True), op="expand")


def broadcast_to(input: Tensor, size: Sequence[int], op: str = "expand") -> Tensor:
    """input broadcast to `size` (-1 keeps a size; stride 0 where it is stretched): a read-only view."""
    x, shape = input, checks.sizes((size,), op, keep=True)
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ShapeError(f"{op}: {shape} has fewer dimensions than the tensor's shape {x.shape}")
    if -1 in shape[:lead]:
        raise RuntimeError(f"{op}: the expanded size -1 isn't allowed in a leading, non-existing dimension "
                           f"({shape} for a tensor of shape {x.shape})")
    shape = tuple(x.shape[i - lead] if n == -1 else n for i, n in enumerate(shape))
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
    return _view(x, strided_view(data, shape, strides, read_only=True), "expand", lambda grad: grad, _as_is)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at `dim` (a view)."""
    dim = checks.dim(dim, input.ndim + 1, "unsqueeze")
    in_shape = input.data.shape
    data = input.data
    step = data.shape[dim] * data.strides[dim] if dim < data.ndim else data.itemsize
    return _view(input, with_unit_dims(data, (dim,), (step,)), "unsqueeze",
                 lambda grad: grad.reshape(in_shape),
                 _reshaped_back)


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
    return strided_view(data, shape, strides)


def squeeze(input: Tensor, dim: int | tuple[int, ...] | None = None) -> Tensor:
    """Remove dimensions of size 1 (all, or those in `dim` that have size 1): a view."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "squeeze")
    if dim is None:
        axes = tuple(i for i, n in enumerate(input.shape) if n == 1)
    else:
        axes = tuple(d for d in checks.dims(dim, input.ndim, "squeeze") if input.shape[d] == 1)
    in_shape = input.data.shape
    return _view(input, np.squeeze(input.data, axis=axes), "squeeze", lambda grad: grad.reshape(in_shape),
                 _reshaped_back)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one (a view when strides allow)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "flatten")
    if input.ndim == 0:
        return reshape(input, 1)
    start, end = checks.dim(start_dim, input.ndim, "flatten"), checks.dim(end_dim, input.ndim, "flatten")
    if start > end:
        raise RuntimeError(f"flatten() has invalid args: start_dim ({start_dim}) cannot come after "
                           f"end_dim ({end_dim}) for a tensor of shape {input.shape}")
    shape = input.shape[:start] + (math.prod(input.shape[start:end + 1]),) + input.shape[end + 1:]
    return _reshape(input, shape, "flatten")


def contiguous(x: Tensor) -> Tensor:
    """x itself if its elements are already in row-major order, else a row-major copy."""
    if x.data.flags.c_contiguous:
        return x
    data = namespace(x.data).ascontiguousarray(x.data)
    return record(data, "contiguous", (x,), lambda grad: grad, saved=(), graph_vjp=_as_is)


def clone(x: Tensor) -> Tensor:
    """A copy with its own storage. Gradient: passed through."""
    return record(x.data.copy(), "clone", (x,), lambda grad: grad, saved=(), graph_vjp=_as_is)


# --- joining ------------------------------------------------------------------------------------


@autocast_op("cat")
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension. Each gets its slice of the gradient."""
    tensors = _tensors(tensors, "cat")
    if not tensors:
        raise ShapeError("cat: expected a non-empty sequence of tensors")
    # PyTorch's dtype: the promoted one (int64 with float32 is float32, where NumPy says float64).
    dtype = functools.reduce(promote_types, (t.dtype for t in tensors))
    # As PyTorch, an empty 1-d tensor joins anything (`out = tg.tensor([])`, then `cat([out, x])`):
    # it is left out of the join and gets an empty gradient.
    mixed = any(t.ndim != 1 for t in tensors)
    skipped = [mixed and t.shape == (0,) for t in tensors]
    skipped[0] = skipped[0] and not all(skipped)
    joined = [t for t, skip in zip(tensors, skipped, strict=True) if not skip]
    dim = checks.dim(dim, joined[0].ndim, "cat")
    try:
        data = np.concatenate([t.data if t.dtype == dtype else t.data.astype(dtype) for t in joined],
                              axis=dim)
    except ValueError:
        shapes = ", ".join(str(t.shape) for t in tensors)
        raise ShapeError(f"cat: shapes {shapes} must match except in dimension {dim}") from None
    bounds = np.cumsum([0] + [0 if skip else t.shape[dim] for t, skip in zip(tensors, skipped, strict=True)])
    vjps = [_nothing_of if skip else _part_of(dim, slice(int(lo), int(hi)))
            for lo, hi, skip in zip(bounds[:-1], bounds[1:], skipped, strict=True)]
    return record(data, "cat", tensors, *vjps, saved=(),
                  graph_vjp=partial(_cat_graph, dim, bounds.tolist(), skipped))


def _nothing_of(grad: np.ndarray) -> np.ndarray:
    """The gradient of an empty 1-d tensor left out of a cat: empty too."""
    return np.zeros_like(grad, shape=(0,))


def _cat_graph(dim: int, bounds: list[int], skipped: list[bool], grad: Tensor, out: Tensor,
               *tensors: Tensor) -> tuple[Tensor, ...]:
    return tuple(reshape(narrow(grad, dim, lo, 0), 0) if skip else narrow(grad, dim, lo, hi - lo)
                 for lo, hi, skip in zip(bounds[:-1], bounds[1:], skipped, strict=True))


def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """`cat` (PyTorch's alias)."""
    return cat(tensors, dim)


def concatenate(tensors: Sequence[Tensor], axis: int = 0, *, dim: int | None = None) -> Tensor:
    """`cat` (PyTorch's NumPy-style alias: the dimension as `axis` or `dim`)."""
    return cat(tensors, axis if dim is None else dim)


def _tensors(tensors: Any, op: str) -> tuple[Tensor, ...]:
    """`tensors` (a sequence of tensors) as a tuple; anything else is PyTorch's TypeError."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not a Tensor")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return tensors


def _at_least(tensors: Sequence[Tensor], ndim: int, op: str) -> tuple[Tensor, ...]:
    """Each tensor with dimensions added as numpy's atleast_1d/2d/3d add them."""
    tensors = _tensors(tensors, op)
    if not tensors:
        raise ShapeError(f"{op}: expected a non-empty sequence of tensors")
    out = []
    for t in tensors:
        if t.ndim == 0:
            t = reshape(t, (1,) * ndim)
        elif t.ndim == 1 and ndim >= 2:
            t = unsqueeze(t, 0) if ndim == 2 else reshape(t, (1, t.shape[0], 1))
        elif t.ndim == 2 and ndim == 3:
            t = unsqueeze(t, -1)
        out.append(t)
    return tuple(out)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along the columns: dimension 0 for 1-d tensors, else 1 (as `np.hstack`)."""
    tensors = _at_least(tensors, 1, "hstack")
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along the rows, 1-d tensors as rows (as `np.vstack`)."""
    return cat(_at_least(tensors, 2, "vstack"), 0)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along the third dimension, after making each at least 3-d (as `np.dstack`)."""
    return cat(_at_least(tensors, 3, "dstack"), 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Join as columns: 0-d and 1-d tensors become columns, the rest join along dimension 1."""
    tensors = _tensors(tensors, "column_stack")
    if not tensors:
        raise ShapeError("column_stack: expected a non-empty sequence of tensors")
    return cat([reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors], 1)


def _part_of(dim: int, part: slice | int):
    """A VJP taking the gradient's `part` along `dim` (an input's slice of a cat or stack)."""
    index = (slice(None),) * dim + (part,)
    return lambda grad: grad[index]


@autocast_op("stack")
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join same-shape tensors along a new dimension. Each gets its slice of the gradient."""
    tensors = _tensors(tensors, "stack")
    if not tensors:
        raise ShapeError("stack: expected a non-empty sequence of tensors")
    dim = checks.dim(dim, tensors[0].ndim + 1, "stack")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors must have the same shape, got {sorted(shapes)}")
    data = np.stack([t.data for t in tensors], axis=dim)
    vjps = [_part_of(dim, i) for i in range(len(tensors))]
    return record(data, "stack", tensors, *vjps, saved=(), graph_vjp=partial(_stack_graph, dim))


def _stack_graph(dim: int, grad: Tensor, out: Tensor, *tensors: Tensor) -> tuple[Tensor, ...]:
    return tuple(select(grad, dim, i) for i in range(len(tensors)))


# --- more movement: PyTorch's shape ops (views where PyTorch gives views) ---------------------------


def _storage_of(data: np.ndarray) -> np.ndarray:
    """The array that owns `data`'s memory (up the chain of views, through as_strided's holder)."""
    base = data
    while is_array(base.base) or hasattr(base.base, "__array_interface__"):
        holder = base.base
        if is_array(holder):
            base = holder
        elif is_array(getattr(holder, "base", None)):
            base = holder.base  # numpy's as_strided holder keeps the array it views: go on from there
        else:
            owner = np.asarray(holder)
            if owner.base is holder:  # (asarray of a holder is a view of it again: stop, or loop forever)
                return owner
            base = owner
    return base


def narrow(input: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    """Elements start .. start+length-1 along `dim` (a view). Gradient: placed back there."""
    dim, start, length = _narrow_bounds(input, dim, start, length, "narrow")
    return _select_view(input, dim, slice(start, start + length), "narrow")


def narrow_copy(input: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:  # noqa: A002
    """A row-major copy of elements start .. start+length-1 along `dim` (`narrow`, then `clone`).
    Gradient: placed back there."""
    if input.ndim and checks.as_int(dim, "narrow_copy", "dim") >= input.ndim:  # (a negative one: IndexError)
        raise RuntimeError(f"narrow_copy(): dim {dim} is out of range for a tensor of shape {input.shape}")
    dim, start, length = _narrow_bounds(input, dim, start, length, "narrow_copy")
    return clone(_select_view(input, dim, slice(start, start + length), "narrow_copy"))


def _narrow_bounds(x: Tensor, dim: int, start: int | Tensor, length: int, op: str) -> tuple[int, int, int]:
    """(dim, start, length) of a narrow, checked, with PyTorch's exception types: IndexError for a
    start outside [-size, size], RuntimeError for a negative length or one past the end."""
    if x.ndim == 0:
        raise RuntimeError(f"{op}() cannot be applied to a 0-dim tensor.")
    dim = checks.dim(dim, x.ndim, op)
    size = x.shape[dim]
    if op == "narrow" and isinstance(start, Tensor) and (start.ndim or start.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")  # (narrow_copy's start is an int)
    start = checks.as_int(start, op, "start")
    length = checks.as_int(length, op, "length")
    if not -size <= start <= size:
        raise IndexError(f"{op}(): start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start}) for dimension {dim} of shape {x.shape}")
    start = start + size if start < 0 else start
    if length < 0:
        raise RuntimeError(f"{op}(): length must be non-negative, got {length}")
    if start + length > size:
        raise RuntimeError(f"{op}(): start ({start}) + length ({length}) exceeds dimension size ({size}) "
                           f"of dimension {dim} of shape {x.shape}")
    return dim, start, length


def _select_view(x: Tensor, dim: int, part: slice | int, op: str) -> Tensor:
    key = (slice(None),) * dim + (part,)
    shape = x.data.shape
    xp = namespace(x.data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = xp.zeros(shape, dtype=grad.dtype)
        full[key] = grad
        return full

    return _view(x, x.data[key], op, vjp, linear_graph(op, vjp, lambda t: t[key]))


def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces along `dim` of the given size (the last may be smaller) or sizes (views)."""
    x = tensor
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = checks.dim(dim, x.ndim, "split")
    size = x.shape[dim]
    if isinstance(split_size_or_sections, int | np.integer):
        step = checks.as_int(split_size_or_sections, "split", "split_size")
        if step <= 0 and size > 0:
            raise RuntimeError(f"split(): split_size must be positive, got {step}")
        sizes = [min(step, size - lo) for lo in range(0, size, step)] if size else [0]
    else:
        sizes = [checks.as_int(n, "split", "split_sizes") for n in split_size_or_sections]
        if sum(sizes) != size or min(sizes, default=0) < 0:
            raise RuntimeError(f"split(): split_sizes {sizes} must sum to the size {size} of dimension {dim}")
    bounds = np.cumsum([0] + sizes)
    return tuple(_select_view(x, dim, slice(int(lo), int(hi)), "split")
                 for lo, hi in zip(bounds[:-1], bounds[1:], strict=True))


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most `chunks` pieces along `dim`, each ceil(size / chunks) long but the last (views)."""
    chunks = checks.as_int(chunks, "chunk", "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk(): chunks must be greater than 0, got {chunks}")
    size = input.shape[checks.dim(dim, input.ndim, "chunk")]
    if size == 0:  # as PyTorch: `chunks` empty pieces
        return split(input, [0] * chunks, dim)
    return split(input, max(-(-size // chunks), 1), dim)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of the given sizes along `dim` (views): `split` with a list."""
    return split(input, list(split_sizes), dim)


def tensor_split(input: Tensor, indices_or_sections: int | Sequence[int] | None = None, dim: int = 0, *,
                 sections: int | None = None, indices: Sequence[int] | None = None,
                 tensor_indices_or_sections: Tensor | None = None) -> tuple[Tensor, ...]:
    """`sections` near-equal pieces along `dim` (the first size % sections one longer), or the
    pieces between the given indices (views; indices past the end give empty pieces). The split
    comes by position or by one of PyTorch's keywords."""
    indices_or_sections = _one_split("tensor_split", indices_or_sections, sections, indices,
                                     tensor_indices_or_sections)
    dim = checks.dim(dim, input.ndim, "tensor_split")
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dtype != "int64" or indices_or_sections.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a 0-d or 1-d tensor "
                               f"of dtype int64, but got {indices_or_sections.dtype} of shape "
                               f"{indices_or_sections.shape}")
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int | np.integer):
        sections = checks.as_int(indices_or_sections, "tensor_split", "sections")
        if sections <= 0:
            raise RuntimeError(f"tensor_split(): number of sections must be larger than 0, got {sections}")
        longer, base = size % sections, size // sections
        sizes = [base + 1] * longer + [base] * (sections - longer)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        indices = [checks.as_int(i, "tensor_split", "indices") for i in indices_or_sections]
        bounds = [0] + [min(max(i + size if i < 0 else i, 0), size) for i in indices] + [size]
    return tuple(_select_view(input, dim, slice(lo, max(lo, hi)), "tensor_split")
                 for lo, hi in zip(bounds[:-1], bounds[1:], strict=True))


def hsplit(input: Tensor, indices_or_sections: int | Sequence[int] | None = None, *,
           sections: int | None = None, indices: Sequence[int] | None = None) -> tuple[Tensor, ...]:
    """`tensor_split` along dimension 1 (0 for a 1-D tensor); sections must divide the size."""
    chosen = _one_split("hsplit", indices_or_sections, sections, indices)
    return _split_evenly(input, chosen, 0 if input.ndim == 1 else 1, "hsplit", 1)


def vsplit(input: Tensor, indices_or_sections: int | Sequence[int] | None = None, *,
           sections: int | None = None, indices: Sequence[int] | None = None) -> tuple[Tensor, ...]:
    """`tensor_split` along dimension 0 of a tensor with at least 2 dimensions."""
    chosen = _one_split("vsplit", indices_or_sections, sections, indices)
    return _split_evenly(input, chosen, 0, "vsplit", 2)


def dsplit(input: Tensor, indices_or_sections: int | Sequence[int] | None = None, *,
           sections: int | None = None, indices: Sequence[int] | None = None) -> tuple[Tensor, ...]:
    """`tensor_split` along dimension 2 of a tensor with at least 3 dimensions; sections must
    divide the size (views)."""
    chosen = _one_split("dsplit", indices_or_sections, sections, indices)
    return _split_evenly(input, chosen, 2, "dsplit", 3)


def unsafe_split(input: Tensor, split_size: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """`split` (views). PyTorch's unsafe form skips its view checks; tensorgrad's views need none."""
    return split(input, split_size, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """`chunk` (views). PyTorch's unsafe form skips its view checks; tensorgrad's views need none."""
    return chunk(input, chunks, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """`split_with_sizes` (views). PyTorch's unsafe form skips its view checks; tensorgrad's need none."""
    return split_with_sizes(input, split_sizes, dim)


def _split_evenly(x: Tensor, indices_or_sections: int | Sequence[int], dim: int, op: str,
                  min_ndim: int) -> tuple[Tensor, ...]:
    if x.ndim < min_ndim:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_ndim} dimension, but got a "
                           f"tensor with {x.ndim} dimensions!")
    if isinstance(indices_or_sections, int | np.integer) and (indices_or_sections == 0
                                                              or x.shape[dim] % indices_or_sections):
        raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size of the "
                           f"dimension {x.shape[dim]} is not divisible by the split_size "
                           f"{indices_or_sections}!")
    return tensor_split(x, indices_or_sections, dim)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Every slice along `dim`, with that dimension removed (views)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "unbind")
    dim = checks.dim(dim, input.ndim, "unbind")
    return tuple(_select_view(input, dim, i, "unbind") for i in range(input.shape[dim]))


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dimension `dim` into `sizes` (one may be -1): a view."""
    dim = checks.dim(dim, input.ndim, "unflatten")
    sizes = checks.sizes((sizes,), "unflatten", allow_infer=True)
    known = int(np.prod([n for n in sizes if n != -1]))
    if -1 in sizes:
        sizes = tuple(input.shape[dim] // known if n == -1 and known else n for n in sizes)
    if int(np.prod(sizes)) != input.shape[dim]:
        raise ShapeError(f"unflatten(): sizes {sizes} don't multiply to the size {input.shape[dim]} of "
                         f"dimension {dim}")
    return reshape(input, input.shape[:dim] + tuple(sizes) + input.shape[dim + 1:])


def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Move dimensions to new positions, the others keeping their order (a view)."""
    src = [source] if isinstance(source, int | np.integer) else list(source)
    dst = [destination] if isinstance(destination, int | np.integer) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim(): source {src} and destination {dst} must have the same length")
    src = [checks.dim(d, input.ndim, "movedim") for d in src]
    dst = [checks.dim(d, input.ndim, "movedim") for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim(): repeated dim in source {src} or destination {dst}")
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute(input, *order)


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """Swap two dimensions (a view): PyTorch's alias of `transpose`."""
    return transpose(input, axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view): PyTorch's alias of `transpose`, with its names dim0 and dim1."""
    return transpose(input, dim0, dim1)


moveaxis = movedim


def t(input: Tensor) -> Tensor:
    """A matrix's transpose (a view); a 0-d or 1-D tensor comes back as a view of itself."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "t")
    if input.ndim > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D "
                         f"(shape {input.shape}); use transpose(dim0, dim1) or .mT")
    return T(input, "t")


def mT(x: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """The transpose of the last two dimensions (of a matrix or a batch of matrices; a view)."""
    if x.ndim == 0:  # deprecated in PyTorch, where it is the identity (a view)
        return transpose(x, 0, 0)
    if x.ndim < 2:
        raise ShapeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                         f"Got {x.ndim}-D tensor.")
    return transpose(x, -2, -1)


def ravel(input: Tensor) -> Tensor:
    """All elements in one dimension, in row-major order (a view when strides allow)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "ravel")
    return _reshape(input, (input.data.size,), "ravel")


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, that dimension removed (a view): `x[:, index]` for dim 1."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = checks.dim(dim, input.ndim, "select")
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} "
                         f"at dimension {dim}")
    return input[(slice(None),) * dim + (index,)]


def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """The elements in reverse order along `dims` (a copy, as in PyTorch). Gradient: flipped back."""
    axes = checks.dims(dims, input.ndim, "flip")
    return record(np.flip(input.data, axes).copy(), "flip", (input,),
                  lambda grad: np.flip(grad, axes), saved=(), graph_vjp=partial(_flip_graph, axes))


def _flip_graph(axes: tuple[int, ...], grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (flip(grad, axes),)


def fliplr(input: Tensor) -> Tensor:
    """The columns in reverse order: `flip(x, 1)` (at least 2-D)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "fliplr")
    if input.ndim < 2:
        raise RuntimeError(f"fliplr: input must be >= 2-d, got shape {input.shape}")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    """The rows in reverse order: `flip(x, 0)` (at least 1-D)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "flipud")
    if input.ndim < 1:
        raise RuntimeError("flipud: input must be >= 1-d, got a 0-d tensor")
    return flip(input, 0)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotated by 90 degrees k times in the plane of `dims`, from the first towards the second
    (a copy, as in PyTorch). Gradient: rotated back."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "rot90")
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    first, second = (checks.dim(d, input.ndim, "rot90") for d in dims)
    if first == second:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and "
                           f"dim1 = {dims[1]}")
    turns = k % 4
    rotated = np.rot90(input.data, turns, (first, second))  # a view (x itself for k = 0)
    return record(namespace(rotated).array(rotated, order="C"), "rot90", (input,),
                  lambda grad: np.rot90(grad, -turns, (first, second)), saved=(),
                  graph_vjp=partial(_rot90_graph, -turns, (first, second)))


def _rot90_graph(turns: int, dims: tuple[int, int], grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (rot90(grad, turns, dims),)


def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:
    """Elements shifted cyclically along `dims` (of the flattened tensor if None or empty, with
    one shift). Gradient: rolled back."""
    shifts = (shifts,) if isinstance(shifts, int | np.integer) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, int | np.integer) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")  # (PyTorch's words)
    if len(shifts) != max(len(dims), 1):
        raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if not dims:
        shape = input.data.shape
        back = -shifts[0]
        return record(np.roll(input.data, shifts[0]), "roll", (input,),
                      lambda grad: np.roll(grad.reshape(-1), back).reshape(shape), saved=(),
                      graph_vjp=partial(_roll_graph, back, None))
    axes = tuple(checks.dim(d, input.ndim, "roll") for d in dims)
    back = tuple(-s for s in shifts)
    return record(np.roll(input.data, shifts, axes), "roll", (input,),
                  lambda grad: np.roll(grad, back, axes), saved=(),
                  graph_vjp=partial(_roll_graph, back, axes))


def _roll_graph(back: Any, axes: tuple[int, ...] | None, grad: Tensor, out: Tensor,
                x: Tensor) -> tuple[Tensor]:
    """roll's gradient: rolled back (along `axes`, or over the flattened tensor for None)."""
    return (roll(grad, back, axes),)


def repeat(x: Tensor, *sizes: int) -> Tensor:
    """The tensor tiled `sizes` times along each dimension (a copy). Gradient: the copies summed."""
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    sizes = checks.sizes(sizes, "repeat")
    if len(sizes) < x.ndim:
        raise RuntimeError(f"repeat(): number of repeat dims {len(sizes)} can not be smaller than the "
                           f"number of dimensions {x.ndim} of the tensor")
    shape = (1,) * (len(sizes) - x.ndim) + x.data.shape

    def vjp(grad: np.ndarray) -> np.ndarray:
        # Each output dimension is (copy, element): sum over the copies.
        split_shape = [n for pair in zip(sizes, shape, strict=True) for n in pair]
        summed = grad.reshape(split_shape).sum(axis=tuple(range(0, 2 * len(sizes), 2)))
        return summed.reshape(x.data.shape)

    return record(np.tile(x.data.reshape(shape), sizes), "repeat", (x,), vjp, saved=(),
                  graph_vjp=partial(_repeat_graph, sizes, shape))


def _repeat_graph(sizes: tuple[int, ...], shape: tuple[int, ...], grad: Tensor, out: Tensor,
                  x: Tensor) -> tuple[Tensor]:
    """repeat's gradient: each output dimension split as (copy, element), summed over the copies."""
    split_shape = [n for pair in zip(sizes, shape, strict=True) for n in pair]
    return (grad.reshape(*split_shape).sum(tuple(range(0, 2 * len(sizes), 2))).reshape(*x.shape),)


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """`repeat`, with fewer sizes than dimensions meaning 1 for the leading ones (torch.tile)."""
    dims = checks.sizes((dims,), "tile")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)  # (one tuple: () tiles a 0-d tensor)


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element repeated `repeats` times (an int, or one count per element) along `dim`.

    With no `repeats`, x holds the counts and the result repeats their indices
    (`repeat_interleave(tensor([1, 0, 2]))` is `[0, 2, 2]`). `output_size`, when given, must be
    the result's length along `dim`.
    Gradient: each element's copies summed (`np.add.reduceat` over their runs).
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "repeat_interleave")
    if repeats is None:
        positions = new_leaf(namespace(input.data).arange(input.numel()))
        return repeat_interleave(positions, input, output_size=output_size)
    data = input.data.reshape(-1) if dim is None else input.data
    axis = 0 if dim is None else checks.dim(dim, input.ndim, "repeat_interleave")
    counts = array_like(repeats.data if isinstance(repeats, Tensor) else repeats, data)
    if counts.dtype.kind not in "iu":
        raise UnsupportedDtypeError(f"repeat_interleave(): repeats must be an integer tensor, got "
                                    f"{counts.dtype}")
    if np.any(counts < 0) or counts.ndim > 1 or counts.size not in (1, data.shape[axis]):
        raise RuntimeError(f"repeat_interleave(): repeats must be non-negative, and one count or one per "
                           f"element along dim {dim} (size {data.shape[axis]}), got {counts}")
    counts = np.broadcast_to(counts.reshape(-1) if counts.ndim else counts, (data.shape[axis],))
    if output_size is not None and output_size != int(counts.sum()):
        raise RuntimeError(f"repeat_interleave(): output_size {output_size} does not match the size "
                           f"{int(counts.sum())} the repeats give")
    # (CuPy's repeat takes the counts as a list, not as an array.)
    out = np.repeat(data, counts if type(data) is np.ndarray else to_numpy(counts).tolist(), axis=axis)
    shape = input.data.shape

    def vjp(grad: np.ndarray) -> np.ndarray:
        starts = np.cumsum(counts) - counts  # where each element's run of copies begins
        g = namespace(data).zeros(data.shape, dtype=grad.dtype)
        nonzero = counts > 0
        if nonzero.any():
            sums = np.add.reduceat(grad, starts[nonzero], axis=axis)
            np.moveaxis(g, axis, 0)[nonzero] = np.moveaxis(sums, axis, 0)
        return g.reshape(shape)

    forward = partial(repeat_interleave, repeats=counts, dim=dim)
    return record(out, "repeat_interleave", (input,), vjp, saved=(),
                  graph_vjp=linear_graph("repeat_interleave", vjp, forward))


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the (dim1, dim2) planes, as a last dimension (a writable view, as PyTorch's).

    Gradient: written back onto the diagonal of zeros.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "diagonal")
    d1, d2 = checks.dim(dim1, input.ndim, "diagonal"), checks.dim(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal(): dim1 and dim2 can't be the same dimension ({dim1}, {dim2})")
    offset = checks.as_int(offset, "diagonal", "offset")
    in_shape = input.data.shape

    def vjp(grad: np.ndarray) -> np.ndarray:
        return _onto_diagonal(grad, in_shape, offset, d1, d2)

    return _view(input, _diagonal_of(input.data, offset, d1, d2), "diagonal", vjp,
                 linear_graph("diagonal", vjp, partial(diagonal, offset=offset, dim1=d1, dim2=d2)))


def _diagonal_of(data: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """A writable strided view of the diagonal (numpy's `np.diagonal` is read-only)."""
    n1, n2 = data.shape[d1], data.shape[d2]
    length = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    start = [slice(None)] * data.ndim
    if length:  # begin at the diagonal's first element: (0, offset) or (-offset, 0) in the plane
        start[d2 if offset >= 0 else d1] = slice(abs(offset), None)
    rest = [d for d in range(data.ndim) if d not in (d1, d2)]
    shape = [data.shape[d] for d in rest] + [length]
    strides = [data.strides[d] for d in rest] + [data.strides[d1] + data.strides[d2]]
    return strided_view(data[tuple(start)], shape, strides)


def _onto_diagonal(grad: np.ndarray, shape: tuple[int, ...], offset: int, d1: int, d2: int) -> np.ndarray:
    full = namespace(grad).zeros(shape, dtype=grad.dtype)
    _diagonal_of(full, offset, d1, d2)[...] = grad
    return full


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D tensor's values on a matrix's diagonal, or a matrix's diagonal as a 1-D tensor (copies)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "diag")
    offset = checks.as_int(diagonal, "diag", "diagonal")
    forward = partial(diag, diagonal=offset)
    if input.ndim == 1:
        def vjp(grad: np.ndarray) -> np.ndarray:
            return np.diagonal(grad, offset).copy()

        return record(np.diag(input.data, offset), "diag", (input,), vjp, saved=(),
                      graph_vjp=linear_graph("diag", vjp, forward))
    if input.ndim == 2:
        shape = input.data.shape

        def vjp(grad: np.ndarray) -> np.ndarray:
            return _onto_diagonal(grad, shape, offset, 0, 1)

        return record(np.diagonal(input.data, offset).copy(), "diag", (input,), vjp, saved=(),
                      graph_vjp=linear_graph("diag", vjp, forward))
    raise RuntimeError(f"diag(): expects a 1-D or 2-D tensor, got shape {input.shape}")


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (on and below `diagonal`) of the last two dims; zeros above. Gradient: masked."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "tril")
    return _triangle(input, diagonal, np.tril, "tril")


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above `diagonal`) of the last two dims; zeros below. Gradient: masked."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "triu")
    return _triangle(input, diagonal, np.triu, "triu")


def _triangle(x: Tensor, diagonal: int, keep, op: str) -> Tensor:
    if x.ndim < 2:
        raise RuntimeError(f"{op}(): expects a tensor with at least 2 dimensions, got shape {x.shape}")
    k = checks.as_int(diagonal, op, "diagonal")
    mask = keep(namespace(x.data).ones(x.shape[-2:], dtype=bool), k)
    return record(np.where(mask, x.data, 0).astype(x.dtype, copy=False), op, (x,),
                  lambda grad: np.where(mask, grad, 0), saved=(), graph_vjp=partial(_triangle_graph, mask))


def _triangle_graph(mask: np.ndarray, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    from tensorgrad.elementwise import where  # (elementwise imports this module)

    return (where(new_leaf(mask), grad, 0.0),)


def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of `size` elements along `dimension`, `step` apart, as a new last dimension: a view.

    No copy: the window dimension walks the original stride, and the window count steps `step`
    strides at a time. Gradient: each window's gradient added back where it came from.
    """
    dim = checks.dim(dimension, max(x.ndim, 1), "unfold")
    size, step = checks.as_int(size, "unfold", "size"), checks.as_int(step, "unfold", "step")
    data = x.data if x.ndim else x.data.reshape(1)
    n = data.shape[dim]
    if size > n or size < 0 or step <= 0:
        raise RuntimeError(f"unfold(): size {size} must be in [0, {n}] and step {step} positive "
                           f"(dimension {dim} of shape {x.shape})")
    count = (n - size) // step + 1
    shape = data.shape[:dim] + (count,) + data.shape[dim + 1:] + (size,)
    strides = data.strides[:dim] + (data.strides[dim] * step,) + data.strides[dim + 1:] + (data.strides[dim],)
    if x.ndim == 0:  # as PyTorch: a 0-d tensor's one window is the result, shape (size,)
        shape, strides = shape[1:], strides[1:]
    in_shape = x.data.shape
    xp = namespace(data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = xp.zeros(data.shape, dtype=grad.dtype)
        moved = np.moveaxis(full, dim, -1)
        windows = grad.reshape(count, size) if x.ndim == 0 else grad
        windows = np.moveaxis(windows, dim, -2)  # (..., count, size)
        for k in range(size):  # one strided add per window offset, not per element
            moved[..., k:k + step * (count - 1) + 1:step] += windows[..., k]
        return full.reshape(in_shape)

    return _view(x, strided_view(data, shape, strides), "unfold", vjp,
                 linear_graph("unfold", vjp, partial(unfold, dimension=dim, size=size, step=step)))


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view with the given sizes and strides (in elements) over x's storage.

    Gradient: each output element's gradient added to the storage element it reads, then read
    back in x's own layout (elements read twice get both).
    """
    shape = checks.sizes((size,), "as_strided")
    steps = tuple(checks.as_int(s, "as_strided", "stride") for s in stride)
    if len(steps) != len(shape):
        raise RuntimeError(f"as_strided(): size {shape} and stride {steps} must have the same length")
    if min(steps, default=0) < 0:
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(steps)}")
    storage = _storage_of(input.data)
    item = input.data.itemsize
    base_offset = (data_address(input.data) - data_address(storage)) // item
    offset = base_offset if storage_offset is None else checks.as_int(storage_offset, "as_strided", "offset")
    flat = storage.reshape(-1) if storage.flags.c_contiguous else None
    if flat is None:
        raise RuntimeError("as_strided(): the tensor's storage is not one contiguous buffer")
    last = offset + sum((n - 1) * s for n, s in zip(shape, steps, strict=True) if n > 0)
    if offset < 0 or (min(shape, default=1) > 0 and last >= flat.size):
        raise RuntimeError(f"as_strided(): size {shape}, stride {steps} and offset {offset} reach "
                           "outside "
                           f"the storage of {flat.size} elements")
    # x's module, not the storage's: under x's kind of array the storage may be a plain buffer.
    xp = namespace(input.data)
    data = xp.lib.stride_tricks.as_strided(flat[offset:], shape, [s * item for s in steps])
    reads = offset + sum(xp.arange(n).reshape((-1,) + (1,) * (len(shape) - i - 1)) * s
                         for i, (n, s) in enumerate(zip(shape, steps, strict=True)))
    x_index = _element_indices(input.data, storage, item)

    def vjp(grad: np.ndarray) -> np.ndarray:
        total = xp.zeros(flat.size, dtype=grad.dtype)
        ufunc_at(np.add, total, np.broadcast_to(reads, shape), grad)
        return total[x_index]

    def forward(t: Tensor) -> Tensor:
        # The map itself on a tensor of x's shape (the transpose of vjp, for the gradient's own
        # gradient): its elements added into a storage of zeros where x's lie, then read as the view.
        total = xp.zeros(flat.size, dtype=t.data.dtype)
        ufunc_at(np.add, total, x_index, t.data)
        return record(total[reads].reshape(shape), "as_strided", (t,), vjp, saved=(), graph_vjp=graph)

    graph = linear_graph("as_strided", vjp, forward)
    return _view(input, data, "as_strided", vjp, graph)


def _element_indices(data: np.ndarray, storage: np.ndarray, item: int) -> np.ndarray:
    """For each element of the view `data`, its index in the flat `storage`."""
    xp = namespace(data)
    start = (data_address(data) - data_address(storage)) // item
    index = xp.full(data.shape, start, dtype=np.int64)
    for i, (n, s) in enumerate(zip(data.shape, data.strides, strict=True)):
        index += xp.arange(n).reshape((-1,) + (1,) * (data.ndim - i - 1)) * (s // item)
    return index


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-d tensor, as rows (N, k) in order (the
    first tensor slowest), as `torch.cartesian_prod`; one tensor comes back as it is."""
    tensors = _tensors(tensors, "cartesian_prod")
    if any(t.ndim != 1 for t in tensors):
        raise RuntimeError("cartesian_prod(): expects 1-d tensors, got shapes "
                           + ", ".join(str(t.shape) for t in tensors))
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The r-element combinations of a 1-d tensor's elements as rows (C, r), in
    itertools.combinations' order, as `torch.combinations`; the gradient flows back."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "combinations")
    if input.ndim != 1:
        raise RuntimeError(f"combinations(): expects a 1-d tensor, got shape {input.shape}")
    r = checks.as_int(r, "combinations", "r")
    if r < 0:
        raise RuntimeError(f"combinations(): expects a non-negative r, but got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))  # indices only: C(n, r) tuples of positions
    if r == 0:
        return input[:0]
    if not rows:  # more picks than elements: no rows, each r wide
        return reshape(input[:0], (0, r))
    return input[new_leaf(array_like(np.array(rows, dtype=np.int64), input.data))]


def meshgrid(*tensors: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors, as expanded views ('ij' or 'xy' indexing)."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tensors[0]
    tensors = _tensors(tensors, "meshgrid")
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid(): indexing must be 'ij' or 'xy', got {indexing!r}")
    if any(t.ndim > 1 for t in tensors):
        raise RuntimeError(f"meshgrid(): expects 0-D or 1-D tensors, got shapes {[t.shape for t in tensors]}")
    sizes = [t.numel() for t in tensors]
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        order[0], order[1] = 1, 0
    full = tuple(sizes[order[i]] for i in range(len(tensors)))
    grids = []
    for i, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[order.index(i)] = -1
        grids.append(expand(reshape(t, *shape), *full))
    return tuple(grids)


# --- torch-level shape helpers: atleast_*d, block_diag, broadcast_shapes/tensors, unravel_index ----


def _one_or_tuple(tensors: tuple, ndim: int, op: str) -> Tensor | tuple[Tensor, ...]:
    """PyTorch's atleast_*d calling forms: one tensor gives a tensor, several or a sequence a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        return _at_least(_checked_tensors(tensors[0], op), ndim, op) if tensors[0] else ()
    if len(tensors) == 1:
        return _at_least(_checked_tensors(tensors, op), ndim, op)[0]
    return _at_least(_checked_tensors(tensors, op), ndim, op) if tensors else ()


def _checked_tensors(tensors: Sequence[Any], op: str) -> tuple[Tensor, ...]:
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected a Tensor as element {i}, but got {type(t).__name__}")
    return tuple(tensors)


def atleast_1d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least 1 dimension (a 0-d one becomes shape (1,)): a view, or the tensor
    itself. One tensor gives a tensor; several, or a list of them, a tuple."""
    return _one_or_tuple(tensors, 1, "atleast_1d")


def atleast_2d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least 2 dimensions ((n,) becomes (1, n)): a view, or the tensor itself.
    One tensor gives a tensor; several, or a list of them, a tuple."""
    return _one_or_tuple(tensors, 2, "atleast_2d")


def atleast_3d(*tensors: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least 3 dimensions ((n,) becomes (1, n, 1), (m, n) becomes (m, n, 1)): a
    view, or the tensor itself. One tensor gives a tensor; several, or a list of them, a tuple."""
    return _one_or_tuple(tensors, 3, "atleast_3d")


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-d as a row, or 2-d) placed along the diagonal of a zero matrix, in the
    promoted dtype. Gradient: each input's block of the output's gradient."""
    tensors = _checked_tensors(tensors, "block_diag")
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"block_diag(): input tensors must have 2 or fewer dimensions, but input {i} "
                               f"has shape {t.shape}")
    if not tensors:  # PyTorch's answer for no blocks: an empty (1, 0) row
        from tensorgrad.creation import zeros

        return zeros(1, 0)
    shapes = [(1, 1) if t.ndim == 0 else (1, t.shape[0]) if t.ndim == 1 else t.shape for t in tensors]
    dtype = functools.reduce(promote_types, (t.dtype for t in tensors))
    rows, cols = np.cumsum([0] + [r for r, _ in shapes]), np.cumsum([0] + [c for _, c in shapes])
    out = namespace(tensors[0].data).zeros((int(rows[-1]), int(cols[-1])), dtype)
    blocks = [(slice(int(rows[i]), int(rows[i + 1])), slice(int(cols[i]), int(cols[i + 1])))
              for i in range(len(tensors))]
    for t, shape, block in zip(tensors, shapes, blocks, strict=True):
        out[block] = t.data.reshape(shape)
    vjps = [_block_of(block, t.shape) for t, block in zip(tensors, blocks, strict=True)]
    return record(out, "block_diag", tensors, *vjps, saved=(), graph_vjp=partial(_block_diag_graph, blocks))


def _block_diag_graph(blocks: list[tuple[slice, slice]], grad: Tensor, out: Tensor,
                      *tensors: Tensor) -> tuple[Tensor, ...]:
    return tuple(grad[block].reshape(*t.shape) for t, block in zip(tensors, blocks, strict=True))


def _block_of(block: tuple[slice, slice], shape: tuple[int, ...]):
    return lambda grad: grad[block].reshape(shape)


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape that tensors of these shapes broadcast to together (a `tg.Size`), by NumPy's
    rules: aligned from the right, each size equal or 1. An int is a 1-d shape."""
    from tensorgrad.compat import Size

    parsed = []
    for shape in shapes:
        if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
            shape = (shape,)
        if not isinstance(shape, Sequence) or not all(
                isinstance(n, int | np.integer) and not isinstance(n, bool) for n in shape):
            raise RuntimeError(f"broadcast_shapes(): input shapes should be ints, tuples of ints or lists "
                               f"of ints, got {shape!r}")
        if any(n < 0 for n in shape):
            raise ValueError(f"broadcast_shapes(): a dimension can't have negative length, got "
                             f"{tuple(shape)}")
        parsed.append(tuple(int(n) for n in shape))
    ndim = max((len(s) for s in parsed), default=0)
    out = [1] * ndim
    for shape in parsed:
        for i, n in enumerate(shape, ndim - len(shape)):
            if n != out[i] and n != 1 and out[i] != 1:
                raise ShapeError(f"broadcast_shapes(): shapes {', '.join(str(s) for s in parsed)} can't be "
                                 f"broadcast together (sizes {out[i]} and {n} at dimension {i - ndim})")
            if n != 1:
                out[i] = n
    return Size(out)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape: read-only views (stride 0 where
    stretched). Gradient: summed back over the stretched dimensions."""
    tensors = _checked_tensors(tensors, "broadcast_tensors")
    try:
        shape = broadcast_shapes(*(t.shape for t in tensors))
    except ShapeError:
        raise ShapeError(f"broadcast_tensors(): tensors of shapes {', '.join(str(t.shape) for t in tensors)} "
                         "can't be broadcast together") from None
    return tuple(broadcast_to(t, shape) for t in tensors)


def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of `shape` of each flat (row-major) index: a tuple of int64
    tensors of `indices`' shape, one per dimension. Indices wrap around modulo the number of
    elements, as PyTorch's do (-1 is the last element). No gradient."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): expected 'indices' to be a Tensor, got {type(indices).__name__}")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"unravel_index(): expected 'indices' to be integer dtype, but got {indices.dtype}")
    sizes = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    sizes = tuple(checks.as_int(n, "unravel_index", "shape") for n in sizes)
    if any(n < 0 for n in sizes):
        raise ValueError(f"unravel_index(): 'shape' cannot have negative values, but got {sizes}")
    if 0 in sizes and indices.numel():
        raise RuntimeError(f"unravel_index(): can't index into shape {sizes}, which has no elements")
    rest = indices.data.astype(np.int64)
    coords = []
    for n in reversed(sizes):
        coords.append(np.remainder(rest, n) if n else rest)
        rest = np.floor_divide(rest, n) if n else rest
    return tuple(new_leaf(c) for c in reversed(coords))


# --- diagonals built from values, and conjugate transposes ------------------------------------------


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """x's last dimension put on the `offset` diagonal of the (dim1, dim2) planes of a new tensor of
    zeros (one more dimension, each plane of side size + |offset|). Gradient: that diagonal."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "diag_embed")
    ndim = input.ndim + 1
    d1, d2 = checks.dim(dim1, ndim, "diag_embed"), checks.dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diag_embed(): diagonal dimensions cannot be identical ({dim1}, {dim2})")
    offset = checks.as_int(offset, "diag_embed", "offset")
    side = input.shape[-1] + abs(offset)
    rest = iter(input.shape[:-1])
    shape = tuple(side if d in (d1, d2) else next(rest) for d in range(ndim))
    full = namespace(input.data).zeros(shape, dtype=input.dtype)
    _diagonal_of(full, offset, d1, d2)[...] = input.data
    return record(full, "diag_embed", (input,),
                  lambda grad: _diagonal_of(grad, offset, d1, d2), saved=(),
                  graph_vjp=linear_graph("diag_embed", partial(_diagonal_copy, offset, d1, d2),
                                         partial(diag_embed, offset=offset, dim1=d1, dim2=d2)))


def _diagonal_copy(offset: int, d1: int, d2: int, grad: np.ndarray) -> np.ndarray:
    """diag_embed's gradient as a new array (the first-order one is a view of grad)."""
    return _diagonal_of(grad, offset, d1, d2).copy()


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with x's elements (flattened) on the `offset` diagonal and zeros elsewhere.
    Gradient: that diagonal, reshaped as x."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "diagflat")
    return diag(input.reshape(-1), offset)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate: for a real tensor x itself (no copy, as in PyTorch); for a complex
    one a conjugated copy (PyTorch's is a lazy view). Gradient: conjugated back."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "conj")
    if input.dtype.kind != "c":
        return input
    return record(np.conj(input.data), "conj", (input,), lambda grad: np.conj(grad), saved=(),
                  graph_vjp=_conj_graph)


def _conj_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (conj(grad),)


def real(input: Tensor) -> Tensor:
    """The real part: of a complex tensor a view of its real parts (a float tensor sharing its
    memory), of a real tensor x itself. Gradient: the real gradient, as a complex one."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "real")
    if input.dtype.kind != "c":
        return input
    dtype = input.dtype
    return record(input.data.real, "real", (input,), lambda grad: grad.astype(dtype), saved=(), view_of=input,
                  graph_vjp=_real_graph)


def _real_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The real gradient as a complex one (autograd's conjugation leaves it as it is)."""
    return (complex(grad, _zeros_of(grad)),)


def _zeros_of(t: Tensor) -> Tensor:
    """A constant tensor of zeros like t (no gradient)."""
    return new_leaf(np.zeros_like(t.data))  # (numpy dispatches: zeros where the data lives)


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, a view of its imaginary parts. Gradient: i times
    the real gradient. A real tensor has none: RuntimeError, as in PyTorch."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "imag")
    if input.dtype.kind != "c":
        raise RuntimeError(f"imag is not implemented for tensors with non-complex dtypes. (got dtype "
                           f"{input.dtype}, shape {input.shape})")
    dtype = input.dtype
    return record(input.data.imag, "imag", (input,), lambda grad: (grad * -1j).astype(dtype, copy=False),
                  saved=(), view_of=input, graph_vjp=_imag_graph)


def _imag_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """-i grad, which autograd's conjugation makes PyTorch's i grad (see `angle`)."""
    return (complex(_zeros_of(grad), -grad),)


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's memory seen as floats: shape (..., 2) holding (real, imag), a view (writes
    through it change input). Gradient: the (real, imag) pairs of the gradient as complex numbers."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "view_as_real")
    data = input.data
    if data.dtype.kind != "c":
        raise RuntimeError(f"view_as_real is only supported for complex tensors (got {input.dtype}, "
                           f"shape {input.shape})")
    parts = data.real  # the real parts: the same memory, strides and shape, in the float dtype
    out = strided_view(parts, parts.shape + (2,), parts.strides + (parts.itemsize,))
    dtype = data.dtype
    # grad[..., 0] + i grad[..., 1] is PyTorch's gradient; the VJP states its conjugate (see `imag`).
    return record(out, "view_as_real", (input,),
                  lambda grad: (grad[..., 0] - 1j * grad[..., 1]).astype(dtype, copy=False),
                  saved=(), view_of=input, graph_vjp=_view_as_real_graph)


def _view_as_real_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (complex(grad[..., 0], -grad[..., 1]),)


@autocast_op("view_as_complex")
def view_as_complex(input: Tensor) -> Tensor:
    """A float32 or float64 tensor of shape (..., 2) seen as complex numbers (real, imag), a view
    (writes through it change input). The last dim must have size 2 and stride 1, the other
    strides and the storage offset must be even (PyTorch's RuntimeErrors otherwise).
    Gradient: the gradient's (real, imag) pairs."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "view_as_complex")
    data = input.data
    if data.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a "
                           f"tensor of dtype {input.dtype} (shape {input.shape})")
    if not input.ndim or data.shape[-1] != 2:
        raise RuntimeError(f"view_as_complex: Tensor must have a last dimension of size 2 (got shape "
                           f"{input.shape})")
    steps = [stride // data.itemsize for stride in data.strides]
    if steps[-1] != 1:
        raise RuntimeError(f"view_as_complex: Tensor must have a last dimension with stride 1 (got "
                           f"strides {tuple(steps)})")
    if any(step % 2 for step in steps[:-1]):
        raise RuntimeError(f"view_as_complex: Tensor must have a stride divisible by 2 for all but last "
                           f"dimension (got strides {tuple(steps)})")
    if input.storage_offset() % 2:
        raise RuntimeError(f"view_as_complex: Tensor must have a storage_offset divisible by 2 (got "
                           f"{input.storage_offset()})")
    dtype = np.dtype(np.complex64 if data.dtype == np.float32 else np.complex128)
    out = data.view(dtype).reshape(data.shape[:-1])  # the last axis, 2 floats, is one complex: no copy
    # A real input: its gradient is the VJP's result as it stands, here PyTorch's view_as_real(grad).
    return record(out, "view_as_complex", (input,),
                  lambda grad: namespace(grad).stack([grad.real, grad.imag], axis=-1),
                  saved=(), view_of=input, graph_vjp=_view_as_complex_graph)


def _view_as_complex_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (view_as_real(grad),)


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 - the op's name, as in torch.complex
    """real + i imag, broadcast, from two float32 (complex64) or two float64 (complex128) tensors.
    Gradients: the real part of the gradient to `real`, its imaginary part to `imag`."""
    parts = _complex_parts(real, imag, "complex")
    shape = np.broadcast_shapes(parts[0].shape, parts[1].shape)
    out = namespace(parts[0]).empty(shape, dtype=_complex_of(parts[0]))
    out.real, out.imag = parts  # set apart, not real + 1j * imag: an inf part must not make a nan
    # d out / d real = 1, d out / d imag = i; autograd takes the real part for a real input.
    return record(out, "complex", (real, imag), lambda grad: grad, lambda grad: grad * 1j, saved=(),
                  graph_vjp=_complex_graph)


def _complex_graph(grad: Tensor, out: Tensor, real: Tensor, imag: Tensor) -> tuple[Tensor, Tensor]:
    return grad, grad * 1j


@autocast_op("polar")
def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument names
    """abs (cos(angle) + i sin(angle)), broadcast, from two float32 or two float64 tensors.
    Gradients (through autograd's real part): d out / d abs = sgn(out) (as PyTorch: e**(i angle)
    where abs > 0), d out / d angle = i out."""
    magnitude, phase = _complex_parts(abs, angle, "polar")
    shape = np.broadcast_shapes(magnitude.shape, phase.shape)
    out = namespace(magnitude).empty(shape, dtype=_complex_of(magnitude))
    out.real, out.imag = magnitude * np.cos(phase), magnitude * np.sin(phase)
    # PyTorch's gradient to abs reads sgn(out), not e**(i angle): they differ where abs <= 0
    size = np.abs(out)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.where(size == 0, 0, out / size)
    return record(out, "polar", (abs, angle), lambda grad: grad * unit, lambda grad: grad * 1j * out,
                  saved=(), saves_output=True, graph_vjp=_polar_graph)


def _polar_graph(grad: Tensor, out: Tensor, abs: Tensor, angle: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    """PyTorch's polar_backward: sgn(out) and i out, both read from the output (autograd takes the
    real parts)."""
    return grad * out.sgn(), grad * 1j * out


def _complex_parts(a: Tensor, b: Tensor, op: str) -> tuple[np.ndarray, np.ndarray]:
    """The arrays of `complex`'s or `polar`'s two inputs: tensors, both float32 or both float64
    (PyTorch's RuntimeErrors otherwise)."""
    for x in (a, b):
        if not isinstance(x, Tensor):
            raise not_a_tensor(x, op)
    x, y = a.data, b.data
    if x.dtype.kind != "f" or y.dtype.kind != "f":
        raise RuntimeError(f"{op}: expected both inputs to be Float or Double tensors but got {a.dtype} and "
                           f"{b.dtype} (shapes {a.shape} and {b.shape})")
    if x.dtype != y.dtype:
        raise RuntimeError(f"{op}: expected both inputs to have the same dtype, but got {a.dtype} and "
                           f"{b.dtype} for the second argument (shapes {a.shape} and {b.shape})")
    if x.dtype == np.float16:
        raise UnsupportedDtypeError(f"{op}: not implemented for float16 tensors (shapes {a.shape} and "
                                    f"{b.shape}), as in PyTorch")
    return x, y


def _complex_of(x: np.ndarray) -> np.dtype:
    """The complex dtype whose parts have x's float dtype (and a note to autograd that complex
    numbers are in use)."""
    dtype = np.dtype(np.complex64 if x.dtype == np.float32 else np.complex128)
    autograd.note_dtype(dtype)
    return dtype


def angle(input: Tensor) -> Tensor:
    """The argument of each element, atan2(imag, real), in the matching float dtype (integers give
    the default float). A real x gives pi where x < 0, 0 elsewhere, nan for nan.
    Derivative: i x / |x|**2 for a complex x (0 at 0), 0 for a real one. (The complex VJPs are
    written for `autograd`'s conjugation: imag's -i and angle's -i conj(x) give PyTorch's i and i x.)"""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "angle")
    data = input.data
    if data.dtype.kind == "c":
        squared = data.real ** 2 + data.imag ** 2
        return record(np.angle(data), "angle", (input,),
                      lambda grad: grad * np.conj(data) * -1j / np.where(squared == 0, 1, squared),
                      graph_vjp=partial(_complex_angle_graph, squared == 0))
    dtype = float_dtype(data.dtype)
    out = np.where(data < 0, np.pi, 0.0).astype(dtype)
    if data.dtype.kind == "f":
        out = np.where(data != data, data, out)  # nan stays nan
    return record(out, "angle", (input,), lambda grad: np.zeros_like(grad), saved=(), graph_vjp=_angle_graph)


def _complex_angle_graph(at_zero: Any, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The complex VJP with tensor ops: -i grad conj(x) / |x|**2, 0 where x is 0 (`at_zero`; its
    derivatives too, where PyTorch's are nan)."""
    squared = x.real ** 2 + x.imag ** 2
    if at_zero.any():  # (a denominator of 1 there, and the gradient zeroed: 0, not nan)
        squared = squared + new_leaf(at_zero.astype(squared.data.dtype))
        grad = grad * new_leaf(~at_zero)
    return (grad * x.conj() * -1j / squared,)


def _angle_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """A real x's angle is constant where it is defined: its gradient is 0, not a function of grad."""
    return (new_leaf(namespace(grad._data).zeros(grad.shape, dtype=grad._data.dtype)),)


def resolve_conj(input: Tensor) -> Tensor:
    """x with a pending lazy conjugation applied: x itself, as tensorgrad's conj is never lazy."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "resolve_conj")
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """x with a pending lazy negation applied: x itself, as tensorgrad never negates lazily."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "resolve_neg")
    return input


def H(x: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """The conjugate transpose of a matrix (a view for a real one); a 0-d tensor is itself."""
    if x.ndim not in (0, 2):
        hint = "; for batches of matrices, use tensor.mH" if x.ndim > 2 else ""
        raise ShapeError(f"tensor.H is only supported on matrices (2-D tensors). Got {x.ndim}-D tensor "
                         f"(shape {x.shape}){hint}")
    return conj(x if x.ndim == 0 else transpose(x, 0, 1))


def mH(x: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """The conjugate transpose of the last two dimensions (of a matrix or a batch of them; a view
    for a real tensor). Gradient: transposed back."""
    return _conjugate_transpose(x, "tensor.mH")


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (of a matrix or a batch of them; a view
    for a real tensor), as `mH`. Gradient: transposed back."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "adjoint")
    return _conjugate_transpose(input, "tensor.adjoint()")


def _conjugate_transpose(x: Tensor, op: str) -> Tensor:
    if x.ndim == 0:  # deprecated in PyTorch, where it is conj(x)
        return conj(x)
    if x.ndim < 2:
        raise ShapeError(f"{op} is only supported on matrices or batches of matrices. Got {x.ndim}-D "
                         f"tensor (shape {x.shape})")
    return conj(transpose(x, -2, -1))
