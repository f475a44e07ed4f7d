"""`tensorgrad.nn.functional`: the stateless half of `nn`, under PyTorch's names.

`import tensorgrad.nn.functional as F`, then `F.relu(F.linear(x, w, b))` and
`F.cross_entropy(logits, labels)`, exactly as with `torch.nn.functional`. Each name is the op
itself (defined in its op module), so "jump to definition" lands on the forward and backward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tensorgrad.elementwise import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    feature_alpha_dropout,
    relu,
    sigmoid,
    tanh,
)
from tensorgrad.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from tensorgrad.matmul import bilinear, linear, pdist
from tensorgrad.reduce import log_softmax, softmax

if TYPE_CHECKING:
    from tensorgrad.tensor import Tensor

__all__ = [
    "relu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "dropout",
    "dropout1d",
    "dropout2d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "linear",
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "gaussian_nll_loss",
    "poisson_nll_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
]

# Convolution, pooling, padding and resampling (tensorgrad/nn/conv.py).
from tensorgrad.nn.conv import (  # noqa: E402
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    interpolate,
    max_pool1d,
    max_pool2d,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
    unfold,
)

__all__ += ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d",
            "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "pad", "interpolate",
            "unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "adaptive_max_pool1d",
            "adaptive_max_pool2d"]

# Activations, normalisation, lookup tables and attention (tensorgrad/nn/activation.py,
# normalization.py, sparse.py, attention.py).
from tensorgrad.nn.activation import (  # noqa: E402
    celu,
    elu,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    logsigmoid,
    mish,
    prelu,
    relu6,
    rrelu,
    selu,
    silu,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)
from tensorgrad.nn.attention import scaled_dot_product_attention  # noqa: E402
from tensorgrad.nn.normalization import (  # noqa: E402
    batch_norm,
    cosine_similarity,
    group_norm,
    instance_norm,
    layer_norm,
    normalize,
    pairwise_distance,
    rms_norm,
)
from tensorgrad.nn.sparse import embedding, one_hot  # noqa: E402

__all__ += ["gelu", "silu", "elu", "selu", "celu", "leaky_relu", "relu6", "hardtanh", "hardsigmoid",
            "hardswish", "softplus", "softsign", "mish", "logsigmoid", "softmin", "layer_norm", "batch_norm",
            "group_norm", "normalize", "cosine_similarity", "embedding", "one_hot",
            "scaled_dot_product_attention", "glu", "prelu", "tanhshrink", "threshold", "pairwise_distance",
            "hardshrink", "softshrink", "rms_norm", "instance_norm", "gumbel_softmax", "bilinear", "pdist",
            "rrelu"]

# In-place activations, local response norm, more pooling, multi-class margin losses, bags of
# embeddings, channel shuffle and the deprecated upsample names.
from tensorgrad.loss import multi_margin_loss, multilabel_margin_loss  # noqa: E402
from tensorgrad.nn.activation import (  # noqa: E402
    celu_,
    elu_,
    hardtanh_,
    leaky_relu_,
    relu_,
    rrelu_,
    selu_,
    threshold_,
)
from tensorgrad.nn.conv import (  # noqa: E402
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    channel_shuffle,
    lp_pool1d,
    lp_pool2d,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_unpool1d,
    max_unpool2d,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from tensorgrad.nn.normalization import local_response_norm  # noqa: E402
from tensorgrad.nn.sparse import embedding_bag  # noqa: E402

__all__ += ["relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "rrelu_", "threshold_",
            "local_response_norm", "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d",
            "max_pool1d_with_indices", "max_pool2d_with_indices", "adaptive_max_pool1d_with_indices",
            "adaptive_max_pool2d_with_indices", "multi_margin_loss", "multilabel_margin_loss",
            "embedding_bag", "channel_shuffle", "upsample", "upsample_nearest", "upsample_bilinear"]

# 3-D convolution, pooling and channel dropout, and the spatial transformer's affine_grid and
# grid_sample (tensorgrad/nn/conv.py, elementwise.py, sampling.py).
from tensorgrad.elementwise import dropout3d  # noqa: E402
from tensorgrad.nn.conv import (  # noqa: E402
    adaptive_avg_pool3d,
    adaptive_max_pool3d,
    avg_pool3d,
    conv3d,
    conv_transpose3d,
    max_pool3d,
)
from tensorgrad.nn.sampling import affine_grid, grid_sample  # noqa: E402

__all__ += ["conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
            "adaptive_max_pool3d", "dropout3d", "affine_grid", "grid_sample"]

# Connectionist temporal classification, fractional max pooling, the rest of the 3-D pools and
# triplets under any distance (tensorgrad/nn/ctc.py, conv.py, loss.py).
from tensorgrad.loss import triplet_margin_with_distance_loss  # noqa: E402
from tensorgrad.nn.conv import (  # noqa: E402
    adaptive_max_pool3d_with_indices,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool3d,
    max_pool3d_with_indices,
    max_unpool3d,
)
from tensorgrad.nn.ctc import ctc_loss  # noqa: E402

__all__ += ["ctc_loss", "fractional_max_pool2d", "fractional_max_pool3d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "max_unpool3d",
            "lp_pool3d", "max_pool3d_with_indices", "adaptive_max_pool3d_with_indices",
            "triplet_margin_with_distance_loss"]

# Multi-head attention over given parameters (tensorgrad/nn/attention.py) and channel shuffle's
# native spelling (the same op).
from tensorgrad.nn.attention import multi_head_attention_forward  # noqa: E402
from tensorgrad.nn.conv import channel_shuffle as native_channel_shuffle  # noqa: E402

__all__ += ["multi_head_attention_forward", "native_channel_shuffle"]

# Cross entropy of a linear layer's logits (PyTorch 2.13's fused spelling; here the reference form).


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,  # noqa: A002
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """`cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`; `ignore_index=None`
    means -100, and `options` (PyTorch's chunking, a memory saving) changes nothing here.

    input (N, in) or (in,); linear_weight (C, in), or (C, d1, ..., dK, in) for a K-dimensional loss
    (batched input only): the logits are then (N, C, d1, ..., dK), as PyTorch's."""
    if not 1 <= input.ndim <= 2:
        raise RuntimeError(f"linear_cross_entropy: expected input with dimensionality 1 or 2, got "
                           f"{input.ndim}")
    if linear_weight.ndim < 2 or input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError(f"linear_cross_entropy: expected linear_weight of at least 2 dimensions whose "
                           f"last (in_features) equals the input's, got shapes "
                           f"{tuple(linear_weight.shape)} and {tuple(input.shape)}")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"linear_cross_entropy: expected linear_bias shape {(classes, *out_features)}, "
                           f"got {tuple(linear_bias.shape)}")
    if out_features and input.ndim == 1:
        raise RuntimeError(f"linear_cross_entropy: K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, got shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*input.shape[:-1], classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("linear_cross_entropy: ignore_index cannot be specified when target contains "
                           "probabilities")
    if out_features:  # one linear map to C * d1 * ... * dK outputs, then the logits' own shape
        linear_weight = linear_weight.reshape(-1, input.shape[-1])
        linear_bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


__all__ += ["linear_cross_entropy"]

# The convolutions' input and weight gradients, PyTorch's `F.grad` (tensorgrad/nn/grad.py).
from tensorgrad.nn import grad  # noqa: E402

__all__ += ["grad"]
