"""Lookup tables: `embedding`, `one_hot` and the `Embedding` layer (tutorial chapter 11, makemore).

An embedding is indexing: row i of the weight matrix for each index i, `weight[input]`. Its
gradient is the opposite move, a scatter-add: each looked-up row's gradient is added into
that row of the weight's gradient, so a character that appears three times in a batch gets
three contributions. `one_hot` is the same lookup into an identity matrix, as int64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad import dtypes
from tensorgrad.autograd import bump_version, record
from tensorgrad.device import namespace, ufunc_at
from tensorgrad.dtypes import int64
from tensorgrad.nn import init
from tensorgrad.nn.modules import Module, Parameter, _place
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["embedding", "one_hot", "Embedding"]


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


def _padding_index(padding_idx: int | None, rows: int) -> int | None:
    """padding_idx as a row number (a negative one counts from the end), checked as PyTorch does."""
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise AssertionError(f"Padding_idx must be within num_embeddings: got {padding_idx} for {rows} rows")
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
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise RuntimeError(f"embedding: 'weight' must be a 2-D tensor, got "
                           f"{weight.shape if isinstance(weight, Tensor) else type(weight).__name__}")
    rows, width = weight.shape
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

    return record(np.take(weight.data, idx, axis=0), "embedding", (weight,), vjp, saved=())


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of shape (*tensor.shape, num_classes): 1 at each index, 0 elsewhere.

    num_classes=-1 takes the largest index + 1. No gradient (the result is an integer tensor).
    """
    if not isinstance(tensor, Tensor) or tensor.data.dtype != np.int64:
        kind = tensor.dtype if isinstance(tensor, Tensor) else type(tensor).__name__
        raise RuntimeError(f"one_hot is only applicable to index tensors of dtype int64, got {kind}")
    idx = tensor.data
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("one_hot: can not infer the total number of classes from an empty tensor")
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
