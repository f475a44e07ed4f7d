"""Lookup tables: `embedding`, `one_hot` and the `Embedding` layer (tutorial chapter 11, makemore).

An embedding is indexing: row i of the weight matrix for each index i, `weight[input]`. Its
gradient is the opposite move, a scatter-add: each looked-up row's gradient is added into
that row of the weight's gradient, so a character that appears three times in a batch gets
three contributions. `one_hot` is the same lookup into an identity matrix, as int64.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from tensorgrad import dtypes
from tensorgrad.autograd import bump_version, record
from tensorgrad.checks import as_int
from tensorgrad.device import namespace, refuse_mixed_devices, ufunc_at
from tensorgrad.dtypes import int64
from tensorgrad.higher_order import linear_graph
from tensorgrad.nn import init
from tensorgrad.nn.modules import Module, Parameter, _place
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["embedding", "one_hot", "Embedding", "embedding_bag", "EmbeddingBag"]


def _indices(input: Any, rows: int, op: str) -> np.ndarray:  # noqa: A002
    """The index array of `input`, checked: an integer tensor whose values pick existing rows."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor of indices, not {type(input).__name__}")
    idx = input.data
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{op}: expected indices of dtype int64 or int32, got {input.dtype} "
                           "(convert with .long())")
    if idx.size and (idx.min() < 0 or idx.max() >= rows):
        raise IndexError(f"{op}: index out of range: indices must be in [0, {rows}), got values from "
                         f"{idx.min()} to {idx.max()}")
    return idx


def _padding_index(padding_idx: int | None, rows: int, error: type[Exception] = AssertionError) -> int | None:
    """padding_idx as a row number (a negative one counts from the end), checked as PyTorch does
    (embedding asserts the range, embedding_bag raises a RuntimeError)."""
    if padding_idx is None:
        return None
    padding_idx = as_int(padding_idx, "embedding", "padding_idx")
    if not -rows <= padding_idx < rows:
        raise error(f"Padding_idx must be within num_embeddings: got {padding_idx} for {rows} rows "
                    f"(from {-rows} through {rows - 1})")
    return padding_idx % rows


def _renorm_rows(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Scale, in place and outside the graph, each looked-up row whose norm exceeds max_norm down to it."""
    rows = np.unique(idx)
    norms = np.linalg.norm(weight.data[rows], ord=norm_type, axis=1)
    too_long = norms > max_norm
    # PyTorch's factor, with its 1e-7 guard, so that the rows match it to the last digit.
    scale = (max_norm / (norms[too_long] + 1e-7)).astype(weight.data.dtype)
    weight.data[rows[too_long]] *= scale[:, None]
    bump_version(weight)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """weight[input]: the row of `weight` for each index. Derivative: each row's gradient
    scatter-added into weight's gradient (repeated indices add up; the `padding_idx` row gets none).

    `max_norm` first rescales, in place, the looked-up rows longer than it (in `norm_type`
    norm); `scale_grad_by_freq` divides each row's gradient by its count in `input`. The
    gradient is a dense array also with `sparse=True` (the same values, stored in full).
    """
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: 'weight' must be a 2-D tensor, got shape {weight.shape}")
    rows, width = weight.shape
    if isinstance(input, Tensor) and type(input.data) is not type(weight.data):  # as PyTorch: one device
        refuse_mixed_devices("embedding", (input, "input"), (weight, "weight"))
    idx = _indices(input, rows, "embedding")
    padding_idx = _padding_index(padding_idx, rows)
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)

    def vjp(grad: np.ndarray) -> np.ndarray:
        flat, row_grads = idx.reshape(-1), grad.reshape(-1, width)
        if scale_grad_by_freq:
            row_grads = row_grads / np.bincount(flat, minlength=rows)[flat, None]
        full = _rows_added(flat, row_grads, rows)  # scatter-add: a repeated index accumulates
        if padding_idx is not None:
            full[padding_idx] = 0
        return full

    return record(np.take(weight.data, idx, axis=0), "embedding", (weight,), vjp, saved=(),
                  graph_vjp=partial(_embedding_graph, idx, padding_idx, vjp))


def _embedding_graph(idx: np.ndarray, padding_idx: int | None, vjp: Any, grad: Tensor, out: Tensor,
                     weight: Tensor) -> tuple[Tensor]:
    """Linear in weight: `vjp`, whose own gradient is the lookup of the padding-masked rows
    (PyTorch's embedding_dense_double_backward: scale_grad_by_freq is not applied there)."""
    mask = None if padding_idx is None else (idx != padding_idx)[..., None]
    return linear_graph("embedding", vjp, partial(_looked_up, idx, mask))(grad, out, weight)


def _looked_up(idx: np.ndarray, mask: np.ndarray | None, t: Tensor) -> Tensor:
    rows = t[idx]
    return rows if mask is None else rows * new_leaf(mask)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of shape (*tensor.shape, num_classes): 1 at each index, 0 elsewhere.

    num_classes=-1 takes the largest index + 1. No gradient (the result is an integer tensor).
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor.data.dtype != np.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensors of dtype int64, got {tensor.dtype}")
    idx = tensor.data
    if idx.size == 0 and num_classes <= 0:
        raise RuntimeError(f"one_hot: can not infer the total number of classes from an empty tensor "
                           f"(num_classes={num_classes})")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError(f"one_hot: class values must be non-negative, got {idx.min()}")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError(f"one_hot: class values must be smaller than num_classes ({num_classes}), "
                           f"got {idx.max()}")
    return new_leaf(namespace(idx).eye(num_classes, dtype=int64)[idx])


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`: `weight[input]`.

    The weight starts as N(0, 1) samples from tensorgrad's generator (`tg.manual_seed`), with
    the `padding_idx` row zeroed; that row never receives a gradient.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            table = np.empty((num_embeddings, embedding_dim), dtypes.or_default(dtype))
            self.weight = Parameter(table, requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(f"Shape of weight {tuple(_weight.shape)} does not match num_embeddings "
                                     f"and embedding_dim ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        _place(self, device)

    def reset_parameters(self) -> None:
        """Weight from N(0, 1); the padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight.data[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, sparse: bool = False) -> Embedding:
        """An Embedding whose weight is `embeddings` (2-D, memory shared); frozen unless freeze=False."""
        if embeddings.ndim != 2:
            raise AssertionError(f"Embeddings parameter is expected to be 2-dimensional, got shape "
                                 f"{tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)


# A one-hot matrix this small costs less to build and multiply than np.add.at's per-element
# loop: on makemore's (96 indices, 27 rows, width 10) 11.5 µs against 21.6 µs, about 3% of a
# training step. Beyond it the one-hot matrix's memory outweighs the gain.
_ONE_HOT_LIMIT = 1_000_000


def _rows_added(flat: np.ndarray, row_grads: np.ndarray, rows: int) -> np.ndarray:
    """A (rows, width) array whose row r is the sum of the row_grads at the places flat == r."""
    xp = namespace(row_grads)
    if flat.size * rows <= _ONE_HOT_LIMIT:
        one_hot = xp.zeros((flat.size, rows), dtype=row_grads.dtype)
        one_hot[xp.arange(flat.size), flat] = 1
        return (one_hot.T @ row_grads).astype(row_grads.dtype, copy=False)
    full = xp.zeros((rows, row_grads.shape[1]), dtype=row_grads.dtype)
    ufunc_at(np.add, full, flat, row_grads)
    return full


# --- bags of embeddings: the rows of each bag reduced to one --------------------------------------


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """One row per bag: the sum, mean or max of weight[i] over the indices i of the bag.

    A 2-D input (B, L) is B bags of L indices; a 1-D input is cut into bags at `offsets` (bag b
    runs from offsets[b] to offsets[b + 1]; with `include_last_offset` the last offset ends the
    last bag). Indices equal to `padding_idx` are left out (of the mean's count too); an empty
    bag gives zeros. `per_sample_weights` (mode 'sum') scales each looked-up row. Gradient: each
    row's share back to its index (scatter-add), to the weights of each sample, and in 'max'
    mode to the first row holding each maximum.
    """
    op = "embedding_bag"
    if not isinstance(weight, Tensor):
        raise TypeError(f"{op}(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    if weight.ndim != 2:
        raise RuntimeError(f"{op}: 'weight' must be a 2-D tensor, got shape {weight.shape}")
    if not isinstance(input, Tensor) or input.data.dtype not in (np.int64, np.int32):
        kind = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"{op}: expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {kind}")
    if mode not in _BAG_MODES:
        raise ValueError(f"{op}: mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"{op}: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode={mode!r})")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError(f"{op}: max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(f"{op}: if per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, then "
                         f"it must have the same shape as the input ({tuple(input.shape)})")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(f"{op}: expected per_sample_weights of the weight's dtype {weight.dtype}, got "
                           f"{per_sample_weights.dtype}")
    rows, width = weight.shape
    idx = input.data.reshape(-1)
    xp = namespace(idx)
    starts, ends = _bag_bounds(input, offsets, include_last_offset, op)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= rows):
        bad = int(idx.max()) if int(idx.max()) >= rows else int(idx.min())
        raise RuntimeError(f"{op}: index {bad} is not in the valid range [0, {rows})")
    padding_idx = _padding_index(padding_idx, rows, RuntimeError)
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    # Each index's bag: the last bag starting at or before it. Indices past the last bag's end
    # (include_last_offset) and padding indices take part in none.
    position = xp.arange(idx.size)
    bag = xp.searchsorted(starts, position, side="right") - 1
    keep = (bag >= 0) & (position < ends[xp.maximum(bag, 0)]) if starts.size else position < 0
    if padding_idx is not None:
        keep &= idx != padding_idx
    kept = xp.nonzero(keep)[0]
    bag, bags = bag[kept], starts.size
    looked_up = embedding(new_leaf(idx[kept].astype(np.int64)), weight,
                          scale_grad_by_freq=scale_grad_by_freq)
    if per_sample_weights is not None:
        looked_up = looked_up * per_sample_weights.reshape(-1)[new_leaf(kept)].unsqueeze(1)
    if mode == "max":
        return _bag_max(looked_up, bag, bags)
    summed = _bag_sum(looked_up, bag, bags)
    if mode == "sum":
        return summed
    counts = xp.bincount(bag, minlength=bags)[:bags]
    return summed / new_leaf(xp.maximum(counts, 1).astype(weight.data.dtype)[:, None])


def _bag_bounds(input: Tensor, offsets: Tensor | None, include_last_offset: bool,  # noqa: A002
                op: str) -> tuple[np.ndarray, np.ndarray]:
    """Where each bag starts and ends in the flattened input, checked as PyTorch checks offsets."""
    xp = namespace(input.data)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{op}: if input is 2D, then offsets has to be None, as input is treated is a "
                             f"mini-batch of fixed length sequences. However, found offsets of type "
                             f"{type(offsets).__name__}")
        count, length = input.shape
        starts = xp.arange(count) * length
        return starts, starts + length
    if input.ndim != 1:
        raise ValueError(f"{op}: input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None or not isinstance(offsets, Tensor) or offsets.ndim != 1:
        got = "None" if offsets is None else (f"{offsets.ndim}D" if isinstance(offsets, Tensor) else
                                              type(offsets).__name__)
        raise ValueError(f"{op}: offsets has to be a 1D Tensor but got {got}")
    if offsets.data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{op}: expected tensor for argument 'offsets' to have one of the following "
                           f"scalar types: Long, Int; but got {offsets.dtype}")
    bounds = offsets.data.astype(np.int64)
    length = input.shape[0]
    if bounds.size:
        if int(bounds[0]) != 0:
            raise RuntimeError(f"{op}: offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                               f"has to start from position 0. However, got {int(bounds[0])}")
        if int(bounds[-1]) > length:
            raise RuntimeError(f"{op}: offsets[-1] can not be greater than input's length {length} but got "
                               f"offsets[-1] of {int(bounds[-1])}")
        if bool((bounds[1:] < bounds[:-1]).any()):
            raise RuntimeError(f"{op}: offsets must be non-decreasing, got {offsets.tolist()}")
    if include_last_offset:
        return bounds[:-1], bounds[1:]
    return bounds, xp.concatenate((bounds[1:], xp.full(1, length, dtype=np.int64)))


def _bag_sum(rows: Tensor, bag: np.ndarray, bags: int) -> Tensor:
    """out[b] = the sum of the rows in bag b. Gradient: each row gets its bag's gradient."""
    vjp = partial(_bag_rows, bag)
    graph = linear_graph("embedding_bag", vjp, partial(_bag_sum, bag=bag, bags=bags))
    return record(_rows_added(bag, rows.data, bags), "embedding_bag", (rows,), vjp, saved=(), graph_vjp=graph)


def _bag_rows(bag: np.ndarray, grad: np.ndarray) -> np.ndarray:
    return grad[bag]


def _bag_max(rows: Tensor, bag: np.ndarray, bags: int) -> Tensor:
    """out[b, d] = the largest rows[i, d] in bag b (0 for an empty bag). Gradient: to that row,
    the first one of equal largest ones."""
    xp = namespace(rows.data)
    count, width = rows.shape
    first = xp.searchsorted(bag, xp.arange(bags), side="left")  # each bag's first row
    if count == 0:
        return record(xp.zeros((bags, width), dtype=rows.data.dtype), "embedding_bag", (rows,),
                      lambda grad: xp.zeros((0, width), dtype=grad.dtype), saved=())
    place = xp.arange(count) - first[bag]  # each row's place in its bag
    dense = xp.full((bags, int(place.max()) + 1, width), -xp.inf, dtype=rows.data.dtype)
    dense[bag, place] = rows.data
    winner = dense.argmax(axis=1)  # (bags, width): the first largest
    filled = xp.bincount(bag, minlength=bags)[:bags, None] > 0
    largest = xp.take_along_axis(dense, winner[:, None], axis=1)[:, 0]
    out = xp.where(filled, largest, 0).astype(rows.data.dtype)
    source = (first[:, None] + winner, xp.arange(width)[None, :])

    def vjp(grad: np.ndarray) -> np.ndarray:
        grad_rows = xp.zeros((count, width), dtype=grad.dtype)
        grad_rows[source[0][filled[:, 0]], source[1]] = grad[filled[:, 0]]
        return grad_rows

    def pick(a: np.ndarray) -> np.ndarray:
        """The values of `a` at the rows that won: the op's derivative, a linear map."""
        return xp.where(filled, a[source], 0).astype(a.dtype)

    return record(out, "embedding_bag", (rows,), vjp, saved=(),
                  graph_vjp=linear_graph("embedding_bag", vjp, partial(_picked_node, pick, vjp)))


def _picked_node(pick: Any, vjp: Any, t: Tensor) -> Tensor:
    """`pick` (a linear map) applied to t, as a node differentiable to any order."""
    return record(pick(t.data), "embedding_bag", (t,), vjp, saved=(),
                  graph_vjp=linear_graph("embedding_bag", vjp, partial(_picked_node, pick, vjp)))


class EmbeddingBag(Module):
    """`F.embedding_bag` with its own table: `num_embeddings` rows of size `embedding_dim`,
    from N(0, 1) (tensorgrad's generator) with the `padding_idx` row zeroed.
    `bag(input, offsets=None, per_sample_weights=None)`."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        if _weight is None:
            self.weight = Parameter(np.empty((num_embeddings, embedding_dim), dtypes.or_default(dtype)))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(f"Shape of weight {tuple(_weight.shape)} does not match num_embeddings "
                                     f"and embedding_dim ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        _place(self, device)

    def reset_parameters(self) -> None:
        """Weight from N(0, 1); the padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight.data[self.padding_idx] = 0

    def forward(self, input: Tensor, offsets: Tensor | None = None,  # noqa: A002
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                             self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx!r}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is `embeddings` (2-D, memory shared); frozen unless freeze=False."""
        if embeddings.ndim != 2:
            raise AssertionError(f"Embeddings parameter is expected to be 2-dimensional, got shape "
                                 f"{tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, _weight=embeddings,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag
