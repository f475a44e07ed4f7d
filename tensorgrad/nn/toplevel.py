"""The `torch.X` spellings of `nn.functional` ops whose signature differs from `F.X` (`tg.X`).

PyTorch exposes many functional ops twice: as `torch.nn.functional.X`, the documented form, and
as `torch.X`, the form its own code calls, with the arguments in the native kernel's order and
the reduction as an int (0 none, 1 mean, 2 sum). User code written against either runs here:
each function below is a thin adapter that reorders its arguments and calls the op in
`tensorgrad.nn.functional`, where its forward and backward live. Where the two forms agree
(`torch.conv2d`, `torch.pixel_shuffle`, ...), `tg.X` is `F.X` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from tensorgrad import creation
from tensorgrad.autograd import record
from tensorgrad.device import array_like
from tensorgrad.nn import functional as F  # noqa: N812 - the name PyTorch code gives it
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["max_pool1d", "max_pool2d", "adaptive_max_pool1d", "batch_norm", "instance_norm", "embedding",
           "dropout", "alpha_dropout", "feature_alpha_dropout", "rrelu", "cosine_embedding_loss",
           "hinge_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss", "kl_div",
           "binary_cross_entropy_with_logits"]

_REDUCTIONS = ("none", "mean", "sum")  # PyTorch's reduction enum, in its order: 0, 1, 2

# The reduction's default is 0 (none): the native schemas say 1 (mean), but `torch.kl_div(a, b)`
# and the other losses here, called without it, return the unreduced loss, and that is the
# answer PyTorch code gets.


def _reduction(reduction: Any, op: str) -> str:
    """The reduction an int of PyTorch's enum names (0 none, 1 mean, 2 sum)."""
    if isinstance(reduction, bool) or not isinstance(reduction, int | np.integer):
        raise TypeError(f"{op}(): argument 'reduction' must be int (0 none, 1 mean, 2 sum), not "
                        f"{type(reduction).__name__}")
    if not 0 <= reduction < len(_REDUCTIONS):
        raise ValueError(f"{op}(): argument 'reduction' must be 0 (none), 1 (mean) or 2 (sum), got "
                         f"{reduction}")
    return _REDUCTIONS[int(reduction)]


def _stride(stride: Any) -> Any:
    """PyTorch's native default stride, an empty list, as F's None (the kernel size)."""
    return None if isinstance(stride, Sequence) and len(stride) == 0 else stride


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """`F.max_pool1d` without `return_indices`; the stride defaults to the kernel size."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """`F.max_pool2d` without `return_indices`; the stride defaults to the kernel size."""
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """`F.adaptive_max_pool1d` that always returns `(values, indices)`, as `torch.adaptive_max_pool1d`."""
    return tuple(F.adaptive_max_pool1d(input, output_size, True))


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
               running_mean: Tensor | None, running_var: Tensor | None, training: bool, momentum: float,
               eps: float, cudnn_enabled: bool) -> Tensor:
    """`F.batch_norm` in the native argument order (weight and bias first, every argument given);
    `cudnn_enabled` picks a GPU kernel in PyTorch and changes nothing here."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                  running_mean: Tensor | None, running_var: Tensor | None, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """`F.instance_norm` in the native argument order (weight and bias first, every argument
    given); `cudnn_enabled` changes nothing here."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """weight[indices], the weight first (`F.embedding(indices, weight)` swapped); a negative
    `padding_idx` (the default -1) means no padding row."""
    padding = None if padding_idx < 0 else padding_idx
    return F.embedding(indices, weight, padding, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """`F.dropout(input, p, training=train)`, every argument required as in `torch.dropout`."""
    return F.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """`F.alpha_dropout(input, p, training=train)`, every argument required."""
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """`F.feature_alpha_dropout(input, p, training=train)`, every argument required."""
    return F.feature_alpha_dropout(input, p, train)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          generator: creation.Generator | None = None) -> Tensor:
    """`F.rrelu` whose slopes in training may come from a `generator`: x where x > 0, else a * x,
    a uniform in [lower, upper]. Derivative: 1 where x > 0, else a."""
    if generator is None or not training or not isinstance(input, Tensor) or input.dtype.kind != "f" \
            or lower > upper:
        return F.rrelu(input, lower, upper, training)  # F's checks, and its draws from the default stream
    drawn = creation.rand(*input.shape, generator=generator, dtype=np.float64, device="cpu").data
    slope = array_like(lower + (upper - lower) * drawn, input.data, input.dtype)
    slope = np.where(input.data <= 0, slope, 1).astype(input.dtype)
    return record(input.data * slope, "rrelu", (input,), lambda grad: grad * slope, saved=(),
                  graph_vjp=partial(_rrelu_graph, slope))


def _rrelu_graph(slope: np.ndarray, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad * new_leaf(slope),)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """`F.cosine_embedding_loss` with PyTorch's int reduction (0 none, the default; 1 mean; 2 sum)."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction, "cosine_embedding_loss"))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         reduction: int = 0) -> Tensor:
    """`F.hinge_embedding_loss` with PyTorch's int reduction (0 none, the default; 1 mean; 2 sum)."""
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction(reduction, "hinge_embedding_loss"))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """`F.margin_ranking_loss` with PyTorch's int reduction (0 none, the default; 1 mean; 2 sum)."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction, "margin_ranking_loss"))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    """`F.triplet_margin_loss` with PyTorch's int reduction (0 none, the default; 1 mean; 2 sum)."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction, "triplet_margin_loss"))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,  # noqa: A002
                     reduction: int) -> Tensor:
    """`F.poisson_nll_loss` with every argument required and an int reduction (0 none, 1 mean, 2 sum)."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss"))


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:  # noqa: A002
    """`F.kl_div` with PyTorch's int reduction (0 none, the default; 1 mean over every element; 2 sum)."""
    how = _reduction(reduction, "kl_div")
    if how == "mean":  # the unreduced loss's mean: F's "mean" warns to use "batchmean", torch.kl_div doesn't
        return F.kl_div(input, target, reduction="none", log_target=log_target).mean()
    return F.kl_div(input, target, reduction=how, log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    """`F.binary_cross_entropy_with_logits` in the native order (pos_weight before reduction) with
    an int reduction (0 none, the default; 1 mean; 2 sum)."""
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction, "binary_cross_entropy_with_logits"),
        pos_weight=pos_weight)
