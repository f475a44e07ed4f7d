"""The adaptive softmax (Grave et al., 2016): `nn.AdaptiveLogSoftmaxWithLoss`, under PyTorch's name.

For a vocabulary of many classes sorted by frequency, the head scores the `cutoffs[0]` frequent
classes plus one entry per tail cluster; a tail cluster's classes are scored by a small
two-layer projection (narrower by `div_value` per cluster), and a class's log-probability is
its cluster's head entry plus its log-probability within the cluster. Rare classes thus cost
a small matmul, and only for the rows whose targets are in their cluster. Everything is built
from differentiable ops (`linear`, `log_softmax`, `gather`, `cat`, indexing); the parameters
and their state dict keys are PyTorch's (`head.weight`, `tail.0.0.weight`, `tail.0.1.weight`...).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorgrad.device import array_like, namespace, to_numpy
from tensorgrad.movement import cat
from tensorgrad.nn.modules import Linear, Module, ModuleList, Sequential
from tensorgrad.reduce import log_softmax
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])  # PyTorch's name for forward's result


class AdaptiveLogSoftmaxWithLoss(Module):
    """The adaptive softmax: `forward(input, target)` gives the named tuple (output, loss), the
    target classes' log-probabilities and the mean of their negatives; `log_prob(input)` the
    full (N, n_classes) log-probabilities; `predict(input)` the most probable class per row."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of length larger "
                             "than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive "
                             f"integers sorted in an increasing order, where each value is between 1 and "
                             f"n_classes-1, got {cutoffs} for n_classes={n_classes}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            width = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                                        Linear(hidden, width, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Linear's default initialisation of the head and of every tail projection."""
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Any) -> _ASMoutput:
        """(output, loss): output[n] = log p(target[n] | input[n]), loss = mean(-output)."""
        name = type(self).__name__
        labels = to_numpy(target_.data) if isinstance(target_, Tensor) else np.asarray(target_)
        if labels.ndim == 1:
            if input_.shape[0] != labels.shape[0]:
                raise RuntimeError(f"{name}: Input and target should have the same size in the batch "
                                   f"dimension, got input {tuple(input_.shape)} and target {labels.shape}")
            if input_.ndim != 2:
                raise RuntimeError(f"{name}: 1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {tuple(input_.shape)}")
        elif labels.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"{name}: 0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {tuple(input_.shape)}")
        else:
            raise RuntimeError(f"{name}: 0D or 1D target tensor expected, multi-target not supported "
                               f"(got target shape {labels.shape})")
        batched = labels.ndim > 0
        x = input_ if batched else input_.unsqueeze(0)
        labels = labels.reshape(-1).astype(np.int64)
        bounds = [0, *self.cutoffs]
        head_index = labels.copy()  # the head entry each row reads: its class, or its cluster's
        rows_in_order, pieces = [], []
        for i in range(len(bounds) - 1):
            inside = (labels >= bounds[i]) & (labels < bounds[i + 1])
            rows = np.flatnonzero(inside)
            if rows.size == 0:
                continue
            rows_in_order.append(rows)
            if i == 0:
                pieces.append(new_leaf(namespace(x.data).zeros(rows.size, dtype=x.dtype)))
                continue
            head_index[rows] = self.shortlist_size + i - 1
            subset = x.index_select(0, new_leaf(array_like(rows, x.data)))
            cluster = log_softmax(self.tail[i - 1](subset), dim=1)
            relative = new_leaf(array_like(labels[rows] - bounds[i], x.data)[:, None])
            pieces.append(cluster.gather(1, relative).squeeze(1))
        order = np.concatenate(rows_in_order) if rows_in_order else np.zeros(0, dtype=np.int64)
        if order.size != labels.size:
            raise RuntimeError(f"{name}: Target values should be in [0, {self.n_classes - 1}], but values in "
                               f"range [{labels.min()}, {labels.max()}] were found. ")
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        tail_part = cat(pieces)[new_leaf(array_like(inverse, x.data))]
        head = log_softmax(self.head(x), dim=1)
        output = tail_part + head.gather(1, new_leaf(array_like(head_index[:, None], x.data))).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:  # noqa: A002
        """log p(c | input) for every class c: the head's for the shortlist, cluster + within it else."""
        head = log_softmax(head_output, dim=1)
        parts = [head[:, :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster = head[:, self.shortlist_size + i].unsqueeze(1)
            parts.append(log_softmax(projection(input), dim=1) + cluster)
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """The log-probabilities of all n_classes classes: (N, in_features) to (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most probable class of each row: `log_prob(input).argmax(1)`, computing the tail
        clusters only for rows whose head prediction is a cluster."""
        head_output = self.head(input)
        output = head_output.argmax(1)
        elsewhere = to_numpy(output.data) >= self.shortlist_size
        if not elsewhere.any():
            return output
        if elsewhere.all():
            return self._full_log_prob(input, head_output).argmax(1)
        rows = new_leaf(array_like(np.flatnonzero(elsewhere), input.data))
        best = self._full_log_prob(input[rows], head_output[rows]).argmax(1)
        picked = output.data.copy()
        picked[rows.data] = best.data
        return new_leaf(picked)
