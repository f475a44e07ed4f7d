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

from scalargrad.engine import no_grad
from tensorgrad import creation
from tensorgrad.autocasting import autocast_op
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


# --- more of torch's native spellings: 3-d pooling, CTC, padding, the RNN cells, the native norms ---


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """`F.max_pool3d` without `return_indices`; the stride defaults to the kernel size."""
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """`F.max_pool1d(..., return_indices=True)`: the tuple (values, indices), each index the
    argmax's position along the last dimension; the stride defaults to the kernel size."""
    return tuple(F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, True))


def ctc_loss(log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """`F.ctc_loss` with PyTorch's int reduction (0 none, the default; 1 mean over target lengths;
    2 sum)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction, "ctc_loss"), zero_infinity)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:  # noqa: A002
    """`F.pad(input, pad, "constant", value)`: (before, after) pairs from the last dimension back;
    a negative amount crops. Gradient: the grad's slice where the input sits."""
    return F.pad(input, pad, "constant", value)


@autocast_op("rnn_tanh_cell")
def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step, as `nn.RNNCell`'s forward: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    from tensorgrad.nn.rnn import _rnn_step

    return _rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh, "tanh")


@autocast_op("rnn_relu_cell")
def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ReLU: h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    from tensorgrad.nn.rnn import _rnn_step

    return _rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh, "relu")


@autocast_op("lstm_cell")
def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,  # noqa: A002
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step, as `nn.LSTMCell`'s forward: `hx` is (h, c); gates i, f, g, o in that order
    in the weights' rows; c' = f c + i g, h' = o tanh(c'). Returns (h', c')."""
    from tensorgrad.nn.rnn import _lstm_step

    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell(): hx must hold 2 tensors (h, c), got {len(hx)}")
    return _lstm_step(F.linear(input, w_ih, b_ih), (hx[0], hx[1]), w_hh, b_hh)


@autocast_op("gru_cell")
def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One GRU step, as `nn.GRUCell`'s forward: gates r, z, n in the weights' rows;
    h' = (1 - z) n + z h with n = tanh(x_n + r (h W_hn^T + b_hn))."""
    from tensorgrad.nn.rnn import _gru_step

    return _gru_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,  # noqa: A002
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """`F.layer_norm` and the statistics it used: (output, mean, rstd), mean and rstd =
    1 / sqrt(var + eps) (the biased variance) over the normalized dimensions, kept as size 1."""
    shape = tuple(normalized_shape) if isinstance(normalized_shape, Sequence) else (normalized_shape,)
    out = F.layer_norm(input, shape, weight, bias, eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    with no_grad():  # PyTorch's saved statistics are not differentiable outputs
        mean = input.mean(dims, keepdim=True)
        rstd = (input.var(dims, correction=0, keepdim=True) + eps).rsqrt()
    return out, mean, rstd


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """`F.batch_norm` (updating the running statistics in training) and the batch statistics it
    used: (output, save_mean, save_invstd), per channel; in evaluation both are empty, as PyTorch."""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = creation.zeros(0, dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    dims = (0, *range(2, input.ndim))
    with no_grad():  # PyTorch's saved statistics are not differentiable outputs
        mean = input.mean(dims)
        invstd = (input.var(dims, correction=0) + eps).rsqrt()
    return out, mean, invstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,  # noqa: A002, N803
                      C: int, HxW: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """`F.group_norm(input, group, weight, bias, eps)` and its statistics: (output, mean, rstd),
    mean and rstd of shape (N, group); N, C and HxW restate the input's shape (N, C, *)."""
    if input.numel() != N * C * HxW or (input.ndim > 1 and input.shape[1] != C):
        raise RuntimeError(f"native_group_norm(): the input of shape {input.shape} is not N={N} x C={C} "
                           f"x HxW={HxW}")
    out = F.group_norm(input, group, weight, bias, eps)
    grouped = input.reshape(N, group, C // group * HxW)  # (-1 can't be inferred when N = 0)
    mean = grouped.mean(-1)
    rstd = (grouped.var(-1, correction=0) + eps).rsqrt()
    return out, mean, rstd


def _keep_mask(input: Tensor, p: float, shape: tuple[int, ...], op: str) -> Tensor:
    """A mask of `shape` in input's dtype: 1 / (1 - p) with probability 1 - p, else 0."""
    if not 0 <= p <= 1:
        raise ValueError(f"{op}(): dropout probability has to be between 0 and 1, but got {p}")
    kept = creation.default_generator().random(shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return new_leaf(array_like(kept * scale, input.data, input.dtype))


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """Dropout and its mask: (input * mask / (1 - p), mask), mask a bool tensor True where an
    element was kept; `train=False` keeps everything (the output is the input's values, the mask
    all True); `train=None` means training. Gradient: the output's, where kept, times 1 / (1 - p)."""
    if train is False:
        return input.clone(), creation.ones_like(input, dtype=np.bool_)
    scaled = _keep_mask(input, p, input.shape, "native_dropout")
    return input * scaled, (scaled != 0) if p < 1 else creation.zeros_like(input, dtype=np.bool_)


def _feature_mask_shape(input: Tensor, op: str) -> tuple[int, ...]:
    if input.ndim < 2:
        raise RuntimeError(f"{op}(): Feature dropout requires at least 2 dimensions in the input, got "
                           f"shape {input.shape}")
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Dropout of whole feature maps: each (sample, channel) slice kept with probability 1 - p
    and scaled by 1 / (1 - p), else zeroed (the input's first two dimensions pick the slices)."""
    if not train or p == 0:
        return input
    return input * _keep_mask(input, p, _feature_mask_shape(input, "feature_dropout"), "feature_dropout")


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """`feature_dropout`, written into `input`; returns it."""
    if not train or p == 0:
        return input
    shape = _feature_mask_shape(input, "feature_dropout_")
    return input.mul_(_keep_mask(input, p, shape, "feature_dropout_"))


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    """The convolution `weight`'s dimensions pick (1-d, 2-d or 3-d; transposed or not), every
    argument given, as `torch.convolution`."""
    n = weight.ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution(): expected a weight of 3, 4 or 5 dimensions, got shape "
                           f"{weight.shape}")
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return conv(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return (F.conv1d, F.conv2d, F.conv3d)[n - 1](input, weight, bias, stride, padding, dilation, groups)


def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """sqrt(sum |x|^2) over `dim` (at most two dimensions): `linalg.vector_norm(input, 2, dim, keepdim)`."""
    from tensorgrad import linalg

    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"frobenius_norm(): expected at most 2 dims, got {len(dims)}")
    return linalg.vector_norm(input, 2, dims, keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The sum of the singular values: of a 2-D input, or of the matrices over the two dims
    `dim`; `nuclear_norm(input, keepdim)` too. `linalg.matrix_norm(input, "nuc", dim, keepdim)`."""
    from tensorgrad import linalg

    if isinstance(dim, bool):  # torch.nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    if dim is None:
        if input.ndim != 2:
            raise RuntimeError(f"nuclear_norm(): expected a 2-D tensor, got shape {input.shape}")
        dim = (0, 1)
    return linalg.matrix_norm(input, "nuc", tuple(dim), keepdim)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The `pow`-norm of each slice of v along `dim` (over every other dimension), v's shape with
    1 elsewhere, as weight normalisation uses; `dim=-1` is the norm of all of v, a 0-d tensor."""
    from tensorgrad import linalg

    if dim == -1:
        return linalg.vector_norm(v, pow)
    dim = dim % v.ndim if v.ndim else 0
    return linalg.vector_norm(v, pow, tuple(d for d in range(v.ndim) if d != dim), keepdim=True)
