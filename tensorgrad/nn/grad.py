"""`tensorgrad.nn.grad`: the gradients of a convolution with respect to its input and its weight,
given the gradient of its output (PyTorch's `torch.nn.grad`, also reached as `F.grad`).

Each is the vector-Jacobian product of the convolution itself: the convolution is linear in each
argument, so it is run on zeros of the missing argument's shape and differentiated with
`tensorgrad.autograd.grad`. The result is itself differentiable (with respect to the given weight
or input and `grad_output`) where grad mode is on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from scalargrad.engine import enable_grad, is_grad_enabled
from tensorgrad import autograd
from tensorgrad.nn.conv import conv1d, conv2d, conv3d
from tensorgrad.tensor import Tensor

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]

Size = int | Sequence[int]


def _input_grad(conv: Callable[..., Tensor], name: str, input_size: Sequence[int], weight: Tensor,
                grad_output: Tensor, options: tuple[Any, ...]) -> Tensor:
    """d(conv(x, weight)) / dx applied to `grad_output`, for an input x of shape `input_size`."""
    x = weight.new_zeros(tuple(input_size))
    return _vjp(name, lambda x: conv(x, weight, None, *options), x, weight, grad_output)


def _weight_grad(conv: Callable[..., Tensor], name: str, input: Tensor,  # noqa: A002
                 weight_size: Sequence[int], grad_output: Tensor, options: tuple[Any, ...]) -> Tensor:
    """d(conv(input, w)) / dw applied to `grad_output`, for a weight w of shape `weight_size`."""
    w = input.new_zeros(tuple(weight_size))
    return _vjp(name, lambda w: conv(input, w, None, *options), w, input, grad_output)


def _vjp(name: str, linear: Callable[[Tensor], Tensor], zeros: Tensor, given: Tensor,
         grad_output: Tensor) -> Tensor:
    """`grad_output` pulled back through `linear` onto its argument.

    `linear` is linear in its argument, so its gradient is the same at every point and `zeros`
    (of the argument's shape) serves. The result is differentiable with respect to `given` (the
    convolution's other argument) and `grad_output` when grad mode is on, as PyTorch's.
    """
    differentiable = is_grad_enabled() and (given.requires_grad or grad_output.requires_grad)
    with enable_grad():  # the pull-back needs a graph even under no_grad
        point = zeros.requires_grad_()
        out = linear(point)
        _check_output(name, out, grad_output)
        return autograd.grad(out, point, grad_output, create_graph=differentiable)[0]


def _check_output(name: str, out: Tensor, grad_output: Tensor) -> None:
    """A `grad_output` of another shape than the convolution's output is a caller's mistake."""
    if tuple(grad_output.shape) != tuple(out.shape):
        raise RuntimeError(f"{name}: grad_output has shape {tuple(grad_output.shape)}, but the convolution's "
                           f"output has shape {tuple(out.shape)}")


def conv1d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Size = 1,
                 padding: Size = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """The gradient of `conv1d` with respect to its input, of shape `input_size` (N, C_in, L)."""
    return _input_grad(conv1d, "conv1d_input", input_size, weight, grad_output,
                       (stride, padding, dilation, groups))


def conv1d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,  # noqa: A002
                  stride: Size = 1, padding: Size = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """The gradient of `conv1d` with respect to its weight, of shape `weight_size`
    (C_out, C_in / groups, kL)."""
    return _weight_grad(conv1d, "conv1d_weight", input, weight_size, grad_output,
                       (stride, padding, dilation, groups))


def conv2d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Size = 1,
                 padding: Size = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """The gradient of `conv2d` with respect to its input, of shape `input_size` (N, C_in, H, W)."""
    return _input_grad(conv2d, "conv2d_input", input_size, weight, grad_output,
                       (stride, padding, dilation, groups))


def conv2d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,  # noqa: A002
                  stride: Size = 1, padding: Size = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """The gradient of `conv2d` with respect to its weight, of shape `weight_size`
    (C_out, C_in / groups, kH, kW)."""
    return _weight_grad(conv2d, "conv2d_weight", input, weight_size, grad_output,
                       (stride, padding, dilation, groups))


def conv3d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Size = 1,
                 padding: Size = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """The gradient of `conv3d` with respect to its input, of shape `input_size` (N, C_in, D, H, W)."""
    return _input_grad(conv3d, "conv3d_input", input_size, weight, grad_output,
                       (stride, padding, dilation, groups))


def conv3d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,  # noqa: A002
                  stride: Size = 1, padding: Size = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """The gradient of `conv3d` with respect to its weight, of shape `weight_size`
    (C_out, C_in / groups, kD, kH, kW)."""
    return _weight_grad(conv3d, "conv3d_weight", input, weight_size, grad_output,
                       (stride, padding, dilation, groups))
