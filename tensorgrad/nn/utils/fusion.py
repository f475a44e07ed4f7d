"""Folding an eval-mode BatchNorm into the convolution or linear layer before it, as
`torch.nn.utils.fusion` does (tutorial chapter 10).

In eval mode BatchNorm is a fixed affine map per channel, y = (x - mean) / sqrt(var + eps) * w + b,
so it can be merged into the preceding layer's weight and bias: one layer, the same outputs, less
work at inference. Each channel's weight row is scaled by w / sqrt(var + eps) and the bias becomes
(bias - mean) * w / sqrt(var + eps) + b.
"""

from __future__ import annotations

import copy
from typing import TypeVar

from tensorgrad.creation import ones_like, zeros_like
from tensorgrad.elementwise import rsqrt
from tensorgrad.nn.modules import Linear, Module, Parameter
from tensorgrad.nn.normalization import _BatchNorm
from tensorgrad.tensor import Tensor

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]

ConvT = TypeVar("ConvT", bound=Module)
LinearT = TypeVar("LinearT", bound=Linear)


def fuse_conv_bn_eval(conv: ConvT, bn: _BatchNorm, transpose: bool = False) -> ConvT:
    """A new convolution (a copy of `conv`) computing conv then `bn`, both in eval mode.
    `transpose` for a transposed convolution, whose weight holds the output channels second."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """(weight, bias) of the convolution that equals conv then eval-mode BatchNorm:
    weight * (bn_w / sqrt(bn_rv + bn_eps)) per output channel and
    (conv_b - bn_rm) * bn_w / sqrt(bn_rv + bn_eps) + bn_b, as new Parameters in the convolution's
    dtypes (a missing bias is 0, a missing BatchNorm weight 1)."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ones_like(bn_rm)
    if bn_b is None:
        bn_b = zeros_like(bn_rm)
    bn_var_rsqrt = rsqrt(bn_rv + bn_eps)
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return (Parameter(fused_w.detach(), conv_w.requires_grad),
            Parameter(fused_b.detach(), conv_b.requires_grad))


def fuse_linear_bn_eval(linear: LinearT, bn: _BatchNorm) -> LinearT:
    """A new Linear (a copy of `linear`) computing linear then `bn`, both in eval mode; `bn` has
    `linear.out_features` channels, or one."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    # The BatchNorm's channels must broadcast against the linear layer's outputs.
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                           bn_eps: float, bn_w: Tensor, bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """(weight, bias) of the Linear that equals linear then eval-mode BatchNorm: each output's
    row times bn_w / sqrt(bn_rv + bn_eps), bias (linear_b - bn_rm) * that + bn_b, as new
    Parameters in the Linear's dtypes (a missing bias is 0)."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = zeros_like(bn_rm)
    bn_scale = bn_w * rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=bias_dtype)
    return (Parameter(fused_w.detach(), linear_w.requires_grad),
            Parameter(fused_b.detach(), linear_b.requires_grad))
