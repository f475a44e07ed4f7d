"""Convolution, pooling, padding and resampling, under PyTorch's names (tutorial chapter 10).

Everything here rests on one idea: a convolution's windows are a strided VIEW of the (padded)
input. For an input (N, C, H, W) and a kh x kw kernel, `_windows` returns an array of shape
(N, C, kh, kw, oh, ow) whose element [n, c, i, j, y, x] is input[n, c, y*stride + i*dilation,
x*stride + j*dilation], made with `as_strided`: no element is copied. Then

- convolution is that view, reshaped to (N, groups, C/groups*kh*kw, oh*ow) (this reshape is the
  one copy: "im2col"), multiplied by the weight matrix in ONE batched BLAS matmul;
- its gradient is the transposed matmuls, and a `_fold` (col2im) that scatter-adds the
  window gradients back onto the input: kh*kw strided additions, one per kernel offset;
- `conv_transpose` IS the gradient of convolution with respect to its input (and its gradient
  is a convolution again);
- max and average pooling reduce over the same windows; their gradients fold the same way;
- `F.unfold` / `F.fold` are the im2col / col2im themselves, each the other's gradient.

Adaptive average pooling and linear interpolation are separable weighted averages: a small
matrix per spatial dimension, applied with tensorgrad's own differentiable `matmul`.

1-D ops are the 2-D ones on a height of 1; an unbatched input (no N) gets a batch of 1. 3-D ops
(N, C, D, H, W) run the same helpers with one more spatial dimension: the window view is then
(N, C, kd, kh, kw, od, oh, ow) and the fold makes kd*kh*kw strided additions.

On a GPU the same lines run on CuPy arrays: the window view is CuPy's `as_strided`, and the
few small arrays made on the host (averaging and interpolation matrices, pooling divisors,
padding indices) are copied to the input's device.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from tensorgrad import creation, dtypes
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record, summed
from tensorgrad.checks import ShapeError, UnsupportedDtypeError, user_stacklevel
from tensorgrad.device import array_like, namespace, strided_view, ufunc_at
from tensorgrad.elementwise import where
from tensorgrad.higher_order import linear_graph
from tensorgrad.matmul import matmul, matmul_arrays
from tensorgrad.movement import complex as tensor_complex
from tensorgrad.nn.modules import LazyModuleMixin, Module, Parameter, _place, _uniform
from tensorgrad.tensor import Tensor, new_leaf

__all__ = [
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d",
    "pad", "interpolate", "unfold", "fold",
    "Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
    "ConstantPad3d", "ZeroPad3d", "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
    "max_unpool3d", "lp_pool3d", "max_pool3d_with_indices", "adaptive_max_pool3d_with_indices",
    "LPPool3d", "MaxUnpool3d", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
    "FractionalMaxPool2d", "FractionalMaxPool3d",
]

Size = int | Sequence[int]
Pads = tuple[tuple[int, int], ...]  # (lo, hi) per spatial dimension: ((top, bottom), (left, right))


# --- arguments ----------------------------------------------------------------------------------


def _ints(value: Any, n: int, name: str, op: str) -> tuple[int, ...]:
    """An int or a sequence of n ints, as a tuple of n Python ints (TypeError for a float)."""
    items = tuple(value) if isinstance(value, Sequence) and not isinstance(value, str) else (value,)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | np.integer):
            raise TypeError(f"{op}: argument '{name}' must be an int or a tuple of {n} ints, got "
                            f"{value!r} ({type(item).__name__})")
    if len(items) == 1:
        items = items * n
    if len(items) != n:
        raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of {n} "
                           f"values, but got {name}={list(items)}")
    return tuple(int(i) for i in items)


def _as_2d(values: tuple[int, ...], fill: int) -> tuple[int, ...]:
    """A 1-D op's (size,) as the 2-D op's (fill, size): a height of 1 in front (2-D, 3-D: as given)."""
    return (fill, values[0]) if len(values) == 1 else values


def _spatial_input(x: Tensor, dims: int, op: str) -> np.ndarray:
    """x's data as (N, C, H, W): an unbatched input gets N = 1, a 1-D one H = 1."""
    if x.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{op}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D (batched) "
                           f"input, got shape {tuple(x.shape)}")
    data = x.data if x.ndim == dims + 2 else x.data[None]
    return data[:, :, None, :] if dims == 1 else data


def _check_float(op: str, *tensors: Tensor | None, integers: str = "none") -> None:
    """Convolutions and pooling need one dtype for all their tensors (input, weight, bias): a
    floating one, or an integer one where PyTorch's CPU kernel takes it (`integers`: "all" but
    bool, or "int64" only). Mixed dtypes are a RuntimeError; a dtype the op has no kernel for is
    PyTorch's NotImplementedError."""
    present = [t for t in tensors if t is not None]
    dtypes = ", ".join(str(t.dtype) for t in present)
    if len({t.dtype for t in present}) > 1:
        raise RuntimeError(f"{op}: expected floating-point tensors of one dtype, got {dtypes}")
    dtype = present[0].dtype
    if dtype.kind == "f" or (integers == "all" and dtype.kind in "iu") or (integers == "int64"
                                                                         and dtype == np.int64):
        return
    raise UnsupportedDtypeError(f"{op}: not implemented for dtype {dtype} (expected a floating-point "
                                f"tensor{'' if integers == 'none' else ' or an integer one'})")


def _output_size(size: int, kernel: int, stride: int, dilation: int) -> int:
    """How many windows of `kernel` (spread by `dilation`) fit in `size`, every `stride`."""
    return (size - dilation * (kernel - 1) - 1) // stride + 1


# --- windows (im2col as a view) and fold (col2im as kh*kw strided adds) -------------------------


def _windows(xp: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...],
             dilation: tuple[int, ...]) -> np.ndarray:
    """Every kernel window of xp (N, C, *S), as a read-only view of shape (N, C, *kernel, *out):
    (N, C, kh, kw, oh, ow) for a 2-D input, (N, C, kd, kh, kw, od, oh, ow) for a 3-D one."""
    # One plain loop over the dimensions (no generators): this runs in every convolution and pooling.
    shape, strides, outs, moves = [*xp.shape[:2], *kernel], list(xp.strides[:2]), [], []
    for size, step, k, s, d in zip(xp.shape[2:], xp.strides[2:], kernel, stride, dilation, strict=True):
        strides.append(step * d)  # to the next element of a window
        outs.append(_output_size(size, k, s, d))
        moves.append(step * s)  # to the next window
    return strided_view(xp, shape + outs, strides + moves, read_only=True)


def _fold(grad_windows: np.ndarray, shape: tuple[int, ...], stride: tuple[int, ...],
          dilation: tuple[int, ...]) -> np.ndarray:
    """col2im: add each window's values (A, B, kh, kw, oh, ow) back at its place in an (A, B, H, W) array
    (and (A, B, kd, kh, kw, od, oh, ow) into (A, B, D, H, W) likewise).

    One strided addition per kernel offset (i, j): window element (i, j) of every window lands
    on rows i*dilation, i*dilation + stride, ... of the input.
    """
    dims = len(shape) - 2
    kernel, outs = grad_windows.shape[2:2 + dims], grad_windows.shape[2 + dims:]
    out = namespace(grad_windows).zeros(shape, dtype=grad_windows.dtype)
    whole = (slice(None), slice(None))
    # Per dimension, where the elements at each kernel offset land: made once, not per offset.
    places = [[slice(i * d, i * d + s * (n - 1) + 1, s) for i in range(k)]
              for k, d, s, n in zip(kernel, dilation, stride, outs, strict=True)]
    for offset, place in zip(itertools.product(*map(range, kernel)), itertools.product(*places), strict=True):
        out[whole + place] += grad_windows[whole + offset]
    return out


def _pad_array(x: np.ndarray, pads: Pads, value: float = 0.0) -> np.ndarray:
    """x (N, C, *S) with constant cells added around each spatial dimension (x itself when none)."""
    if not any(map(any, pads)):
        return x
    shape, inside = list(x.shape), [slice(None), slice(None)]
    for d, (lo, hi) in enumerate(pads, start=2):
        inside.append(slice(lo, lo + shape[d]))
        shape[d] += lo + hi
    out = namespace(x).full(shape, value, dtype=x.dtype)
    out[tuple(inside)] = x
    return out


def _crop(x: np.ndarray, pads: Pads) -> np.ndarray:
    """Undo `_pad_array`: the inner part of x."""
    inside = [slice(None), slice(None)]
    for size, (lo, hi) in zip(x.shape[2:], pads, strict=True):
        inside.append(slice(lo, size - hi))
    return x[tuple(inside)]


def _linear_node(op: str, forward: Any, vjp: Any, x: Tensor) -> Tensor:
    """A linear op of x given as numpy functions: `forward` (the op on an array of x's shape) and its
    transpose `vjp`; differentiable to any order (`higher_order.linear_graph`)."""
    return record(forward(x.data), op, (x,), vjp, saved=(), graph_vjp=_linear_graph_of(op, forward, vjp))


def _linear_graph_of(op: str, forward: Any, vjp: Any) -> Any:
    """The graph VJP of a linear op whose forward and VJP are numpy functions."""
    return linear_graph(op, vjp, partial(_linear_node, op, forward, vjp))


# --- the convolution, on arrays: forward and its two gradients side by side ---------------------


def _im2col(xp: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...],
            groups: int) -> np.ndarray:
    """The windows of xp as matrices (N, groups, C/groups*kh*kw, oh*ow): one column per window.

    The reshape of the window view is the one copy a convolution makes of its input ("im2col").
    """
    windows = _windows(xp, kernel, stride, dilation)
    n, c = windows.shape[:2]
    length = math.prod(windows.shape[2 + len(kernel):])
    return windows.reshape(n, groups, c // groups * math.prod(kernel), length)


def _grad_matrix(grad: np.ndarray, groups: int) -> np.ndarray:
    """An (N, O, oh, ow) gradient as (N, groups, O/groups, oh*ow): the shape of the forward's product."""
    n, out_channels = grad.shape[:2]
    return grad.reshape(n, groups, out_channels // groups, math.prod(grad.shape[2:]))


def _conv_forward(xp: np.ndarray, weight: np.ndarray, stride: tuple[int, ...],
                  dilation: tuple[int, ...], groups: int) -> tuple[np.ndarray, np.ndarray]:
    """out[n, o] = sum over c, i, j of weight[o, c, i, j] * window[n, c, i, j]; returns (out, cols).

    One batched BLAS matmul: (groups, O/groups, K) @ (N, groups, K, oh*ow), K = C/groups*kh*kw,
    whose result is already out in PyTorch's (N, O, oh, ow) layout. cols, the im2col matrices,
    are kept for the weight's gradient.
    """
    out_channels, kernel = weight.shape[0], weight.shape[2:]
    cols = _im2col(xp, kernel, stride, dilation, groups)
    out = matmul_arrays(weight.reshape(groups, out_channels // groups, -1), cols)
    outs = map(_output_size, xp.shape[2:], kernel, stride, dilation)
    return out.reshape(xp.shape[0], out_channels, *outs), cols


def _conv_weight_grad(grad: np.ndarray, cols: np.ndarray, weight_shape: tuple[int, ...],
                      groups: int) -> np.ndarray:
    """d/dweight = sum over the batch of grad @ cols^T: the forward's matmul, transposed (a view)."""
    return summed(matmul_arrays(_grad_matrix(grad, groups), cols.swapaxes(-1, -2)), 0).reshape(weight_shape)


def _conv_input_grad(grad: np.ndarray, weight: np.ndarray, padded_shape: tuple[int, ...],
                     stride: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> np.ndarray:
    """d/dinput = fold(weight^T @ grad): each window's gradient, scatter-added onto the padded input."""
    n, out_channels = grad.shape[:2]
    c_per_group = weight.shape[1]
    weight_t = weight.reshape(groups, out_channels // groups, -1).swapaxes(-1, -2)  # (G, K, O/G)
    grad_cols = matmul_arrays(weight_t, _grad_matrix(grad, groups))  # (N, G, K, oh*ow): im2col's shape
    grad_windows = grad_cols.reshape(n, groups * c_per_group, *weight.shape[2:], *grad.shape[2:])
    return _fold(grad_windows, padded_shape, stride, dilation)


# --- convolution ----------------------------------------------------------------------------------


def _conv_padding(padding: Any, kernel: tuple[int, ...],
                  stride: tuple[int, ...], dilation: tuple[int, ...], dims: int, op: str) -> Pads:
    """((top, bottom), (left, right)) from an int, a tuple, 'valid' or 'same' (PyTorch's split)."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * len(kernel)
        if padding != "same":
            raise RuntimeError(f"{op}: invalid padding string {padding!r} (use 'valid' or 'same')")
        if any(s != 1 for s in stride):
            raise RuntimeError(f"{op}: padding='same' is not supported for strided convolutions, "
                               f"got stride {stride[-dims:]}")
        # 'same': dilation*(k-1) in total, the odd one out on the bottom/right (as PyTorch).
        totals = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
        return tuple((t // 2, t - t // 2) for t in totals)  # type: ignore[return-value]
    values = _as_2d(_ints(padding, dims, "padding", op), 0)
    if any(p < 0 for p in values):
        raise RuntimeError(f"{op}: negative padding is not supported, got padding {values[-dims:]}")
    return tuple((p, p) for p in values)


def _check_conv(x: np.ndarray, weight: Tensor, groups: int, in_channels_per_group: int, op: str) -> None:
    """PyTorch's checks on channels and groups, with its exception type (RuntimeError)."""
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise RuntimeError(f"{op}: groups must be a positive int, got {groups!r}")
    w_shape = tuple(weight.shape)
    if w_shape[0] == 0:
        raise RuntimeError(f"{op}: given weight of size {list(w_shape)}, expected weight to be at least 1 "
                           f"at dimension 0")
    if w_shape[0] % groups:
        raise RuntimeError(f"{op}: weight of shape {w_shape}: dimension 0 ({w_shape[0]}) must be "
                           f"divisible by groups={groups}")
    if x.shape[1] != in_channels_per_group * groups:
        raise RuntimeError(f"{op}: given groups={groups} and weight of shape {w_shape}, expected the "
                           f"input to have {in_channels_per_group * groups} channels, but got {x.shape[1]} "
                           f"channels (input of {x.ndim}-D shape {x.shape})")


def _check_bias(bias: Tensor | None, channels: int, weight: Tensor, op: str) -> None:
    if bias is not None and tuple(bias.shape) != (channels,):
        raise RuntimeError(f"{op}: given weight of shape {tuple(weight.shape)}, expected bias of shape "
                           f"({channels},), got {tuple(bias.shape)}")


def _complex_convolution(real_conv: Callable[[Tensor, Tensor], Tensor], x: Tensor, weight: Tensor,
                         bias: Tensor | None, dims: int, op: str) -> Tensor:
    """A complex convolution (PyTorch computes them) from four real ones: with x = a + ib and
    weight = c + id, the bilinear x * weight = (a*c - b*d) + i (a*d + b*c); the bias is added after.
    Gradients go through `real`, `imag` and `complex`, so they are the complex (conjugate) ones."""
    if len({t.dtype for t in (x, weight, bias) if t is not None}) > 1:
        raise RuntimeError(f"{op}: expected input, weight and bias of one dtype, got {x.dtype}, "
                           f"{weight.dtype}{'' if bias is None else f' and {bias.dtype}'}")
    a, b, c, d = x.real, x.imag, weight.real, weight.imag
    out = tensor_complex(real_conv(a, c) - real_conv(b, d), real_conv(a, d) + real_conv(b, c))
    return out if bias is None else out + bias.reshape((-1,) + (1,) * dims)


def _convolution(x: Tensor, weight: Tensor, bias: Tensor | None, stride: Size, padding: Any,
                 dilation: Size, groups: int, dims: int, op: str) -> Tensor:
    """conv1d / conv2d: one graph node whose VJPs are the convolution's two gradients and a sum."""
    if x.dtype.kind == "c" or weight.dtype.kind == "c":
        return _complex_convolution(lambda a, w: _convolution(a, w, None, stride, padding, dilation, groups,
                                                              dims, op), x, weight, bias, dims, op)
    xd = _spatial_input(x, dims, op)
    if weight.ndim != dims + 2:
        raise RuntimeError(f"{op}: weight must be {dims + 2}-D (out_channels, in_channels/groups, "
                           f"kernel...), got shape {tuple(weight.shape)}")
    _check_float(op, x, weight, bias, integers="all")
    wd = weight.data[:, :, None, :] if dims == 1 else weight.data
    stride2 = _as_2d(_ints(stride, dims, "stride", op), 1)
    dilation2 = _as_2d(_ints(dilation, dims, "dilation", op), 1)
    if any(s < 1 for s in stride2) or any(d < 1 for d in dilation2):
        raise RuntimeError(f"{op}: non-positive stride or dilation is not supported, got stride "
                           f"{stride2[-dims:]} and dilation {dilation2[-dims:]}")
    _check_conv(xd, weight, groups, wd.shape[1], op)
    _check_bias(bias, wd.shape[0], weight, op)
    pads = _conv_padding(padding, wd.shape[2:], stride2, dilation2, dims, op)
    xp = _pad_array(xd, pads)
    _check_kernel_fits(xp.shape[2:], wd.shape[2:], dilation2, op)
    out, cols = _conv_forward(xp, wd, stride2, dilation2, groups)
    if not weight.requires_grad:
        cols = None  # only the weight's gradient reads the im2col matrix: let it go now
    spatial_axes = tuple(range(2, out.ndim))
    if bias is not None:
        out += bias.data.reshape(-1, *(1,) * len(spatial_axes))
    out_shape = _restore(out.shape, x.ndim, dims)

    def vjp_input(grad: np.ndarray) -> np.ndarray:
        grad4 = grad.reshape(out.shape)
        return _crop(_conv_input_grad(grad4, wd, xp.shape, stride2, dilation2, groups), pads).reshape(x.shape)

    def vjp_weight(grad: np.ndarray) -> np.ndarray:
        return _conv_weight_grad(grad.reshape(out.shape), cols, wd.shape, groups).reshape(weight.shape)

    inputs, vjps = (x, weight), [vjp_input, vjp_weight]
    if bias is not None:
        inputs += (bias,)
        vjps.append(lambda grad: summed(grad.reshape(out.shape), (0, *spatial_axes)))
    spec = _ConvSpec(op, stride2, dilation2, pads, groups, x.shape, xd.shape, weight.shape, wd.shape,
                     out_shape, out.shape, 1 if x.ndim == dims + 2 else 0)
    return record(out.reshape(out_shape), op, inputs, *vjps, saved=(x, weight),
                  graph_vjp=partial(_with_bias, _conv_node_graph, spec))


# --- convolution's gradients as differentiable ops (for gradients of gradients) ---------------------
#
# A convolution C(x, w) is bilinear, and so are its two gradients: T(g, w), the input's (a
# transposed convolution), and B(x, g), the weight's. Their gradients are each other:
# <C(x, w), g> = <x, T(g, w)> = <w, B(x, g)>, so d<T(g, w), h>/dg = C(h, w), /dw = B(h, g), and
# d<B(x, g), h>/dx = T(g, h), /dg = C(x, h). Three nodes whose graph VJPs name each other
# differentiate to any order. `_ConvSpec` holds one convolution's geometry: the shapes of x, w
# and g as the caller sees them and as the 2-D/3-D helpers do (N and a height of 1 added).


class _ConvSpec(NamedTuple):
    op: str
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    pads: Pads
    groups: int
    x: tuple[int, ...]
    x_inner: tuple[int, ...]
    w: tuple[int, ...]
    w_inner: tuple[int, ...]
    g: tuple[int, ...]
    g_inner: tuple[int, ...]
    channel: int  # the channel axis of the caller's shapes: 1, or 0 for an unbatched input


def _conv_padded(spec: _ConvSpec, x: np.ndarray) -> np.ndarray:
    """x padded, then cut to the part the windows reach (output_padding's extra cells: none)."""
    xp = _pad_array(x.reshape(spec.x_inner), spec.pads)
    kernel = spec.w_inner[2:]
    reach = tuple((o - 1) * s + d * (k - 1) + 1 for o, s, d, k in
                  zip(spec.g_inner[2:], spec.stride, spec.dilation, kernel, strict=True))
    return xp[(slice(None), slice(None), *(slice(0, r) for r in reach))]


def _conv_c(spec: _ConvSpec, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = _conv_forward(_conv_padded(spec, x), w.reshape(spec.w_inner), spec.stride, spec.dilation,
                        spec.groups)[0]
    return out.reshape(spec.g)


def _conv_t(spec: _ConvSpec, g: np.ndarray, w: np.ndarray) -> np.ndarray:
    padded = list(spec.x_inner)
    for d, (lo, hi) in enumerate(spec.pads, start=2):
        padded[d] += lo + hi
    grad = _conv_input_grad(g.reshape(spec.g_inner), w.reshape(spec.w_inner), tuple(padded), spec.stride,
                            spec.dilation, spec.groups)
    return namespace(grad).ascontiguousarray(_crop(grad, spec.pads)).reshape(spec.x)


def _conv_b(spec: _ConvSpec, x: np.ndarray, g: np.ndarray) -> np.ndarray:
    cols = _im2col(_conv_padded(spec, x), spec.w_inner[2:], spec.stride, spec.dilation, spec.groups)
    return _conv_weight_grad(g.reshape(spec.g_inner), cols, spec.w_inner, spec.groups).reshape(spec.w)


def _conv_node(spec: _ConvSpec, x: Tensor, w: Tensor) -> Tensor:
    """C(x, w): the convolution without bias."""
    return record(_conv_c(spec, x.data, w.data), spec.op, (x, w),
                  lambda h: _conv_t(spec, h, w.data), lambda h: _conv_b(spec, x.data, h),
                  graph_vjp=partial(_conv_node_graph, spec))


def _conv_node_graph(spec: _ConvSpec, grad: Tensor, out: Tensor, x: Tensor,
                     w: Tensor) -> tuple[Tensor, Tensor]:
    return _conv_input_node(spec, grad, w), _conv_weight_node(spec, x, grad)


def _with_bias(graph_of_x_and_w: Callable[..., tuple[Tensor, Tensor]], spec: _ConvSpec, grad: Tensor,
               out: Tensor, x: Tensor, w: Tensor, bias: Tensor | None = None) -> tuple[Tensor, ...]:
    """A (transposed) convolution's graph VJP: `graph_of_x_and_w`'s gradients of x and w, and the
    bias's, grad summed over every dimension but the channels'."""
    grads = graph_of_x_and_w(spec, grad, out, x, w)
    if bias is None:
        return grads
    return *grads, grad.sum(tuple(d for d in range(grad.ndim) if d != spec.channel))


def _conv_input_node(spec: _ConvSpec, g: Tensor, w: Tensor) -> Tensor:
    """T(g, w): the convolution's gradient with respect to its input (a transposed convolution)."""
    return record(_conv_t(spec, g.data, w.data), f"{spec.op} backward", (g, w),
                  lambda h: _conv_c(spec, h, w.data), lambda h: _conv_b(spec, h, g.data),
                  graph_vjp=partial(_conv_input_graph, spec))


def _conv_input_graph(spec: _ConvSpec, grad: Tensor, out: Tensor, g: Tensor,
                      w: Tensor) -> tuple[Tensor, Tensor]:
    return _conv_node(spec, grad, w), _conv_weight_node(spec, grad, g)


def _conv_weight_node(spec: _ConvSpec, x: Tensor, g: Tensor) -> Tensor:
    """B(x, g): the convolution's gradient with respect to its weight."""
    return record(_conv_b(spec, x.data, g.data), f"{spec.op} backward", (x, g),
                  lambda h: _conv_t(spec, g.data, h), lambda h: _conv_c(spec, x.data, h),
                  graph_vjp=partial(_conv_weight_graph, spec))


def _conv_weight_graph(spec: _ConvSpec, grad: Tensor, out: Tensor, x: Tensor,
                       g: Tensor) -> tuple[Tensor, Tensor]:
    return _conv_input_node(spec, g, grad), _conv_node(spec, x, grad)


def _restore(shape4: tuple[int, ...], ndim: int, dims: int) -> tuple[int, ...]:
    """An (N, C, H, W) result's shape as the caller's: H dropped for 1-D ops, N for unbatched."""
    shape = shape4[:2] + shape4[3:] if dims == 1 else shape4
    return shape if ndim == dims + 2 else shape[1:]


def _check_kernel_fits(padded: tuple[int, ...], kernel: tuple[int, ...], dilation: tuple[int, ...],
                       op: str) -> None:
    effective = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel, strict=True))
    if any(e > p for e, p in zip(effective, padded, strict=True)):
        raise RuntimeError(f"{op}: padded input size per channel {tuple(padded)} is smaller than the "
                           f"kernel's extent {effective} (kernel size {tuple(kernel)}, dilation "
                           f"{tuple(dilation)}): the kernel can't be greater than the input")


@autocast_op("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,  # noqa: A002
           padding: Size | str = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation: out[n,o,y,x] = b[o] + sum_{c,i,j} w[o,c,i,j] * in[n,c,y*s + i*d,x*s + j*d].

    input (N, C, H, W) or (C, H, W); weight (O, C/groups, kh, kw); padding an int, a pair,
    'valid' or 'same'. Gradients: d/dinput = fold(weight^T @ grad), d/dweight = grad @ im2col^T,
    d/dbias = grad summed over N, H, W.
    """
    out = _convolution(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")
    return _channels_last_as(out, input, weight)


@autocast_op("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,  # noqa: A002
           padding: Size | str = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation: out[n, o, t] = bias[o] + sum_{c,k} weight[o, c, k] * x[n, c, t*s + k*d].

    input (N, C, L) or (C, L); weight (O, C/groups, k). `conv2d` on a height of 1.
    """
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


# --- transposed convolution: the gradient of convolution ------------------------------------------


def _transposed_arguments(stride: Size, padding: Size, output_padding: Size, dilation: Size, dims: int,
                          op: str) -> tuple[tuple[int, ...], ...]:
    """stride, padding, output_padding and dilation of a transposed convolution, checked, as pairs."""
    stride2 = _as_2d(_ints(stride, dims, "stride", op), 1)
    pad2 = _as_2d(_ints(padding, dims, "padding", op), 0)
    extra = _as_2d(_ints(output_padding, dims, "output_padding", op), 0)
    dilation2 = _as_2d(_ints(dilation, dims, "dilation", op), 1)
    if any(s < 1 for s in stride2) or any(d < 1 for d in dilation2) or any(p < 0 for p in pad2):
        raise RuntimeError(f"{op}: stride and dilation must be positive and padding non-negative, got "
                           f"stride {stride2[-dims:]}, dilation {dilation2[-dims:]}, padding "
                           f"{pad2[-dims:]}")
    if any(e < 0 or (e >= s and e >= d) for e, s, d in zip(extra, stride2, dilation2, strict=True)):
        raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, got "
                           f"output_padding {extra[-dims:]}, stride {stride2[-dims:]}, dilation "
                           f"{dilation2[-dims:]}")
    return stride2, pad2, extra, dilation2


def _conv_transposed(x: Tensor, weight: Tensor, bias: Tensor | None, stride: Size, padding: Size,
                     output_padding: Size, groups: int, dilation: Size, dims: int, op: str) -> Tensor:
    """conv_transpose1d / 2d: the input-gradient of the convolution whose weight is `weight`.

    A complex one is made of real ones, as `_complex_convolution` says.

    As that convolution's weight, `weight` (C_in, C_out/groups, kh, kw) maps C_out channels to
    C_in. Forward is its `_conv_input_grad` (fold of weight^T @ x), cropped by `padding`; the
    gradients are its forward (for x) and its weight gradient with x in the place of grad.
    """
    if x.dtype.kind == "c" or weight.dtype.kind == "c":
        def real_conv(a: Tensor, w: Tensor) -> Tensor:
            return _conv_transposed(a, w, None, stride, padding, output_padding, groups, dilation, dims, op)

        return _complex_convolution(real_conv, x, weight, bias, dims, op)
    xd = _spatial_input(x, dims, op)
    if weight.ndim != dims + 2:
        raise RuntimeError(f"{op}: weight must be {dims + 2}-D (in_channels, out_channels/groups, "
                           f"kernel...), got shape {tuple(weight.shape)}")
    _check_float(op, x, weight, bias, integers="int64")
    wd = weight.data[:, :, None, :] if dims == 1 else weight.data
    stride2, pad2, extra, dilation2 = _transposed_arguments(stride, padding, output_padding, dilation,
                                                            dims, op)
    in_channels, out_per_group, kernel = wd.shape[0], wd.shape[1], wd.shape[2:]
    _check_conv(xd, weight, groups, in_channels // groups, op)
    _check_bias(bias, out_per_group * groups, weight, op)
    # The rows and columns that windows reach, then output_padding's extra ones (which none reach).
    reach = tuple((size - 1) * s + d * (k - 1) + 1
                  for size, s, d, k in zip(xd.shape[2:], stride2, dilation2, kernel, strict=True))
    full = (xd.shape[0], out_per_group * groups, *(r + e for r, e in zip(reach, extra, strict=True)))
    if any(f - 2 * p < 1 for f, p in zip(full[2:], pad2, strict=True)):
        raise RuntimeError(f"{op}: the output would be empty for input of shape {tuple(x.shape)}, "
                           f"weight of shape {tuple(weight.shape)} and padding {pad2[-dims:]}")
    pads = tuple((p, p) for p in pad2)
    out = _crop(_conv_input_grad(xd, wd, full, stride2, dilation2, groups), pads)
    out = namespace(out).ascontiguousarray(out)
    spatial_axes = tuple(range(2, out.ndim))
    if bias is not None:
        out += bias.data.reshape(-1, *(1,) * len(spatial_axes))
    reached = (slice(None), slice(None), *(slice(0, r) for r in reach))

    def grad_as_input(grad: np.ndarray) -> np.ndarray:
        """This op's output gradient, padded back to the full size: the convolution's input."""
        padded = _pad_array(namespace(grad).ascontiguousarray(grad.reshape(out.shape)), pads)
        return padded[reached]

    def vjp_input(grad: np.ndarray) -> np.ndarray:
        return _conv_forward(grad_as_input(grad), wd, stride2, dilation2, groups)[0].reshape(x.shape)

    def vjp_weight(grad: np.ndarray) -> np.ndarray:
        cols = _im2col(grad_as_input(grad), kernel, stride2, dilation2, groups)
        return _conv_weight_grad(xd, cols, wd.shape, groups).reshape(weight.shape)

    inputs, vjps = (x, weight), [vjp_input, vjp_weight]
    if bias is not None:
        inputs += (bias,)
        vjps.append(lambda grad: summed(grad.reshape(out.shape), (0, *spatial_axes)))
    out_shape = _restore(out.shape, x.ndim, dims)
    # As a convolution's input gradient T(x, w), the convolution's input is this op's output.
    spec = _ConvSpec(op, stride2, dilation2, pads, groups, out_shape, out.shape, weight.shape, wd.shape,
                     x.shape, xd.shape, 1 if x.ndim == dims + 2 else 0)
    return record(out.reshape(out_shape), op, inputs, *vjps, saved=(x, weight),
                  graph_vjp=partial(_with_bias, _conv_input_graph, spec))


@autocast_op("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,  # noqa: A002
                     padding: Size = 0, output_padding: Size = 0, groups: int = 1,
                     dilation: Size = 1) -> Tensor:
    """2-D transposed convolution: the gradient of `conv2d` with respect to its input.

    input (N, C_in, H, W); weight (C_in, C_out/groups, kh, kw). Output height
    (H - 1)*stride - 2*padding + dilation*(kh - 1) + output_padding + 1. Gradients: d/dinput is
    conv2d(grad, weight), d/dweight conv2d's weight gradient with the roles of input and grad swapped.
    """
    return _conv_transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                            "conv_transpose2d")


@autocast_op("conv_transpose1d")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,  # noqa: A002
                     padding: Size = 0, output_padding: Size = 0, groups: int = 1,
                     dilation: Size = 1) -> Tensor:
    """1-D transposed convolution: the gradient of `conv1d` with respect to its input.

    input (N, C_in, L); weight (C_in, C_out/groups, k). `conv_transpose2d` on a height of 1.
    """
    return _conv_transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                            "conv_transpose1d")


# --- pooling over the same windows ----------------------------------------------------------------


def _pool_geometry(xd: np.ndarray, kernel_size: Size, stride: Size | None, padding: Size,
                   dilation: Size, ceil_mode: bool, dims: int, op: str):
    """kernel, stride, dilation, the padding per side (ceil_mode adds some at the end) and output size."""
    kernel = _as_2d(_ints(kernel_size, dims, "kernel_size", op), 1)
    strides = kernel if stride is None or (isinstance(stride, Sequence) and len(stride) == 0) else \
        _as_2d(_ints(stride, dims, "stride", op), 1)
    pad2 = _as_2d(_ints(padding, dims, "padding", op), 0)
    dilation2 = _as_2d(_ints(dilation, dims, "dilation", op), 1)
    if any(k < 1 for k in kernel) or any(s < 1 for s in strides) or any(d < 1 for d in dilation2):
        raise RuntimeError(f"{op}: kernel_size, stride and dilation must be positive, got kernel_size "
                           f"{kernel[-dims:]}, stride {strides[-dims:]}, "
                           f"dilation {dilation2[-dims:]}")
    effective = [d * (k - 1) + 1 for d, k in zip(dilation2, kernel, strict=True)]
    # PyTorch bounds the padding by half the kernel itself, not by half of its dilated span.
    if any(p < 0 or p > k // 2 for p, k in zip(pad2, kernel, strict=True)):
        raise RuntimeError(f"{op}: pad should be at most half of kernel size, but got pad="
                           f"{pad2[-dims:]}, kernel_size={kernel[-dims:]} and "
                           f"dilation={dilation2[-dims:]}")
    out, pads = [], []
    for size, s, p, e in zip(xd.shape[2:], strides, pad2, effective, strict=True):
        span = size + 2 * p - e
        n = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (n - 1) * s >= size + p:  # the last window must start inside the input
            n -= 1
        out.append(n)
        pads.append((p, max((n - 1) * s + e - size - p, p)))
    if any(n < 1 for n in out):
        raise RuntimeError(f"{op}: given input of shape {xd.shape[1:]}, the calculated output size "
                           f"{tuple(out)} is too small")
    return kernel, strides, dilation2, tuple(pads), tuple(out), pad2


def max_pool2d(input: Tensor, kernel_size: Size, stride: Size | None = None, padding: Size = 0,  # noqa: A002
               dilation: Size = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value of each window. Gradient: each output's grad goes to its argmax.

    With `return_indices`, also the argmax positions as flat indices into each H x W plane
    (int64), as PyTorch. Ties go to the first position in the window; NaN wins, as in PyTorch.
    """
    out = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")
    if return_indices:
        return _channels_last_as(out[0], input), _channels_last_as(out[1], input)
    return _channels_last_as(out, input)


def max_pool1d(input: Tensor, kernel_size: Size, stride: Size | None = None, padding: Size = 0,  # noqa: A002
               dilation: Size = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value of each window along the last dimension (`max_pool2d` on a height of 1)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1,
                     "max_pool1d")


def _max_pool(x: Tensor, kernel_size: Size, stride: Size | None, padding: Size, dilation: Size,
              ceil_mode: bool, return_indices: bool, dims: int, op: str) -> Any:
    xd = _spatial_input(x, dims, op)
    _check_float(op, x, integers="all" if dims > 1 else "none")  # PyTorch's 1-D kernel is float-only
    if 0 in x.shape[-dims - 1:]:
        raise RuntimeError(f"{op}: expected input's non-batch dimensions to have positive length, but "
                           f"input has a shape of {tuple(x.shape)}")
    kernel, strides, dilation2, pads, outs, _ = _pool_geometry(
        xd, kernel_size, stride, padding, dilation, ceil_mode, dims, op)
    lowest = -np.inf if xd.dtype.kind == "f" else np.iinfo(xd.dtype).min
    xp = _pad_array(xd, pads, value=lowest)
    windows = _windows(xp, kernel, strides, dilation2)[(..., *(slice(0, o) for o in outs))]
    n, c, k = xd.shape[0], xd.shape[1], len(kernel)
    # The kernel offsets as the last axis (this copy is what argmax needs).
    order = (0, 1, *range(2 + k, 2 + 2 * k), *range(2, 2 + k))
    flat = windows.transpose(order).reshape(n, c, *outs, math.prod(kernel))
    argmax = flat.argmax(axis=-1)
    out = np.take_along_axis(flat, argmax[..., None], axis=-1)[..., 0]
    # PyTorch's winner: the first largest, the last NaN, and the first cell inside the input for a
    # window of nothing but the lowest value (numpy's argmax: the first NaN, or a padding cell).
    if xd.dtype.kind == "f" and np.isnan(out).any():
        nans = np.isnan(flat)
        argmax = np.where(nans.any(axis=-1), flat.shape[-1] - 1 - nans[..., ::-1].argmax(axis=-1), argmax)
    if any(map(any, pads)) and (out == lowest).any():
        inside = _pad_array(namespace(xd).ones((1, 1, *xd.shape[2:]), dtype=bool), pads, value=False)
        inside = _windows(inside, kernel, strides, dilation2)[(..., *(slice(0, o) for o in outs))]
        first_inside = inside.transpose(order).reshape(1, 1, *outs, -1).argmax(axis=-1)
        argmax = np.where(out == lowest, first_inside, argmax)

    def vjp(grad: np.ndarray) -> np.ndarray:
        grad = grad.reshape(out.shape)
        grad_windows = namespace(grad).zeros(windows.shape, dtype=grad.dtype)
        # each output's gradient to the kernel offset that won
        for i, offset in enumerate(itertools.product(*(range(size) for size in kernel))):
            grad_windows[(slice(None), slice(None), *offset)] = np.where(argmax == i, grad, 0)
        return _crop(_fold(grad_windows, xp.shape, strides, dilation2), pads).reshape(x.shape)

    def pick(a: np.ndarray) -> np.ndarray:
        """The values of `a` at the positions that won in x: the op's derivative, a linear map."""
        cells = _windows(_pad_array(a.reshape(xd.shape), pads), kernel, strides, dilation2)
        cells = cells[(..., *(slice(0, o) for o in outs))].transpose(order).reshape(flat.shape)
        return np.take_along_axis(cells, argmax[..., None], axis=-1).reshape(result.shape)

    result = record(out.reshape(_restore(out.shape, x.ndim, dims)), op, (x,), vjp, saved=(),
                    graph_vjp=_linear_graph_of(op, pick, vjp))
    if not return_indices:
        return result
    # Flat index in the input's H x W (D x H x W) volume: the window's start plus the winning offset.
    arange = namespace(argmax).arange
    offsets, rest = [], argmax
    for size in reversed(kernel):
        offsets.insert(0, rest % size)
        rest = rest // size
    index = 0
    for d in range(k):
        start = (arange(outs[d]) * strides[d] - pads[d][0]).reshape(-1, *(1,) * (k - 1 - d))
        index = index * xd.shape[2 + d] + start + offsets[d] * dilation2[d]
    return result, new_leaf(index.astype(np.int64).reshape(result.shape))


def avg_pool2d(input: Tensor, kernel_size: Size, stride: Size | None = None, padding: Size = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window: sum / divisor. Gradient: grad / divisor to every window element.

    The divisor is the window's size, counting the zero padding (`count_include_pad`) but never
    the extra cells that `ceil_mode` adds, or `divisor_override`, as PyTorch computes it.
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     2, "avg_pool2d")


def avg_pool1d(input: Tensor, kernel_size: Size, stride: Size | None = None, padding: Size = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """The mean of each window along the last dimension (`avg_pool2d` on a height of 1)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1,
                     "avg_pool1d")


def _avg_divisor(size: int, out: int, kernel: int, stride: int, pad: int,
                 count_include_pad: bool) -> np.ndarray:
    """Per output position along one dimension, how many cells its window counts (PyTorch's rule)."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)  # the padding counts, the ceil_mode overhang not
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(x: Tensor, kernel_size: Size, stride: Size | None, padding: Size, ceil_mode: bool,
              count_include_pad: bool, divisor_override: int | None, dims: int, op: str) -> Tensor:
    xd = _spatial_input(x, dims, op)
    _check_float(op, x, integers="int64")
    kernel, strides, ones, pads, outs, pad2 = _pool_geometry(
        xd, kernel_size, stride, padding, 1, ceil_mode, dims, op)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override, int | np.integer) \
                or not divisor_override:
            raise RuntimeError(f"{op}: divisor_override must be a non-zero int, got {divisor_override!r}")
        divisor = np.array(divisor_override, dtype=xd.dtype)
    else:
        per_dim = [_avg_divisor(size, o, k, s, p, count_include_pad)
                   for size, o, k, s, p in zip(xd.shape[2:], outs, kernel, strides, pad2, strict=True)]
        divisor = functools.reduce(np.multiply.outer, per_dim).astype(xd.dtype)
    divisor = namespace(xd).asarray(divisor)  # made on the host, used where x lives
    xp = _pad_array(xd, pads)
    windows = _windows(xp, kernel, strides, ones)[(..., *(slice(0, o) for o in outs))]
    kernel_axes = tuple(range(2, 2 + len(kernel)))
    out = _window_mean(windows, kernel_axes, divisor)

    def vjp(grad: np.ndarray) -> np.ndarray:
        share = grad.reshape(out.shape) / divisor
        spread = share[(slice(None), slice(None), *(None,) * len(kernel))]
        grad_windows = np.broadcast_to(spread, windows.shape)
        return _crop(_fold(grad_windows, xp.shape, strides, ones), pads).reshape(x.shape)

    def forward(a: np.ndarray) -> np.ndarray:
        cells = _windows(_pad_array(a.reshape(xd.shape), pads), kernel, strides, ones)
        return _window_mean(cells[(..., *(slice(0, o) for o in outs))], kernel_axes, divisor).reshape(shape)

    shape = _restore(out.shape, x.ndim, dims)
    return record(out.reshape(shape), op, (x,), vjp, saved=(), graph_vjp=_linear_graph_of(op, forward, vjp))


def _window_mean(windows: np.ndarray, kernel_axes: tuple[int, ...], divisor: np.ndarray) -> np.ndarray:
    """Each window's sum / divisor, as PyTorch: float16 summed in float32, integers divided
    rounding toward zero (C's integer division, a negative divisor_override included)."""
    if windows.dtype.kind in "iu":
        total = windows.sum(axis=kernel_axes)
        return np.sign(total) * np.sign(divisor) * (np.abs(total) // np.abs(divisor))
    if windows.dtype == np.float16:
        return (windows.sum(axis=kernel_axes, dtype=np.float32) / divisor).astype(np.float16)
    return windows.sum(axis=kernel_axes) / divisor


def _averaging_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """(out, size): row i averages cells floor(i*size/out) .. ceil((i+1)*size/out) - 1."""
    rows = np.arange(out)
    start = (rows * size) // out
    end = -((-(rows + 1) * size) // out)
    cells = np.arange(size)
    inside = (cells >= start[:, None]) & (cells < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def adaptive_avg_pool2d(input: Tensor, output_size: Size | Sequence[int | None]) -> Tensor:  # noqa: A002
    """Average pooling to a fixed output size: out = A_h @ x @ A_w^T, A averaging matrices.

    Row i of A_h averages rows floor(i*H/oh) .. ceil((i+1)*H/oh) - 1 (PyTorch's windows);
    `None` in output_size keeps that size. The gradient is matmul's: A_h^T @ grad @ A_w.
    """
    op = "adaptive_avg_pool2d"
    if input.ndim not in (3, 4):
        _raise_adaptive_rank(input, output_size, 2, op)
    _check_float(op, input)
    h, w = input.shape[-2:]
    oh, ow = _adaptive_sizes((h, w), output_size, op)
    on_device = namespace(input.data).asarray  # the matrices are made on the host
    rows = new_leaf(on_device(_averaging_matrix(h, oh, input.dtype)))
    cols = new_leaf(on_device(_averaging_matrix(w, ow, input.dtype).T.copy()))
    return _channels_last_as(matmul(matmul(rows, input), cols), input)


def _channels_last_as(out: Tensor, *inputs: Tensor) -> Tensor:
    """A 4-d `out`, made just now, laid out channels-last where an input is (PyTorch's layout for
    conv2d and the 2-d poolings). The values stay; a row-major input costs a flag check only."""
    if out.ndim == 4 and any(not t.data.flags.c_contiguous and t.ndim == 4
                             and creation.suggested_format(t.shape, t.stride()) is creation.channels_last
                             for t in inputs):
        out._data = creation.laid_out(out.data, out.data, creation.channels_last)
    return out


# --- padding --------------------------------------------------------------------------------------


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pads_by_reflection_or_replication(input: Tensor, pad: Sequence[int], mode: str = "constant",  # noqa: A002
                                        value: float | None = None) -> bool:
    """Whether a `pad` call is one autocast lists on the CPU: reflect over 1 or 2 dimensions,
    replicate over 1 to 3 (PyTorch's reflection_pad1d/2d and replication_pad1d/2d/3d)."""
    return (mode == "reflect" and len(pad) in (2, 4)) or (mode == "replicate" and len(pad) in (2, 4, 6))


@autocast_op("pad", when=_pads_by_reflection_or_replication)
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad the last len(pad)//2 dimensions: pad = (last_lo, last_hi, second_last_lo, ...).

    mode 'constant' fills with `value` (negative amounts crop); 'reflect' mirrors without
    repeating the edge, 'replicate' repeats the edge, 'circular' wraps around. Gradient: the
    constant mode's is the inner slice of grad; the others' adds each copied cell's gradient
    back onto its source (a scatter-add).
    """
    op = "pad"
    amounts = _ints(tuple(pad), len(pad), "pad", op) if len(pad) else ()
    if len(amounts) % 2:
        raise RuntimeError(f"{op}: padding length must be divisible by 2, got pad={list(amounts)}")
    if len(amounts) // 2 > input.ndim:
        raise RuntimeError(f"{op}: padding length should be at most twice the input's dimension, got "
                           f"pad of length {len(amounts)} for input of shape {tuple(input.shape)}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"{op}: unrecognised padding mode {mode!r} "
                                  f"(use one of {', '.join(_PAD_MODES)})")
    # (lo, hi) per padded dimension, in dimension order (pad lists them from the last one back).
    per_dim = [(amounts[2 * i], amounts[2 * i + 1]) for i in range(len(amounts) // 2)][::-1]
    first = input.ndim - len(per_dim)
    if mode == "constant":
        return _pad_constant(input, per_dim, first, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"{op}: padding mode {mode!r} doesn't take a value, got value={value}")
    return _pad_by_index(input, per_dim, first, mode)


def _pad_constant(x: Tensor, per_dim: list[tuple[int, int]], first: int, value: float) -> Tensor:
    """Constant padding: out[inside] = x[kept]; negative amounts drop cells instead."""
    out_shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for d, (lo, hi) in enumerate(per_dim, start=first):
        size = x.shape[d]
        kept = size - max(-lo, 0) - max(-hi, 0)  # what the negative amounts leave
        if kept < 0:
            raise RuntimeError(f"pad: amounts {(lo, hi)} crop more than the {size} cells of dimension {d} "
                               f"(input shape {tuple(x.shape)})")
        out_shape[d] = size + lo + hi
        src[d] = slice(max(-lo, 0), max(-lo, 0) + kept)
        dst[d] = slice(max(lo, 0), max(lo, 0) + kept)
    src_key, dst_key = tuple(src), tuple(dst)
    out = namespace(x.data).full(out_shape, value, dtype=x.dtype)
    out[dst_key] = x.data[src_key]

    def vjp(grad: np.ndarray) -> np.ndarray:
        grad_x = np.zeros_like(x.data)
        grad_x[src_key] = grad[dst_key]
        return grad_x

    def forward(a: np.ndarray) -> np.ndarray:  # the derivative: padding with zeros (value is a constant)
        padded = namespace(a).zeros(out_shape, dtype=a.dtype)
        padded[dst_key] = a[src_key]
        return padded

    return record(out, "pad", (x,), vjp, saved=(), graph_vjp=_linear_graph_of("pad", forward, vjp))


def _source_index(size: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """For each position of a padded dimension, the input position its value comes from."""
    positions = np.arange(-lo, size + hi)
    if mode == "replicate":
        return np.clip(positions, 0, size - 1)
    if mode == "circular":
        return positions % size
    period = 2 * (size - 1)  # reflect: ... 2 1 | 0 1 2 ... n-1 | n-2 n-3 ...
    folded = np.abs(positions) % period if period else np.zeros_like(positions)
    return np.where(folded < size, folded, period - folded)


def _pad_by_index(x: Tensor, per_dim: list[tuple[int, int]], first: int, mode: str) -> Tensor:
    """reflect, replicate, circular: one gather along the padded dimensions; the gradient scatter-adds."""
    spatial = len(per_dim)
    if x.ndim not in (spatial + 1, spatial + 2) or spatial > 3:
        raise NotImplementedError(
            f"pad: padding size {2 * spatial} is not supported for {x.ndim}-D input in mode {mode!r}: "
            "non-constant padding pads the last 1, 2 or 3 dimensions of an input with 1 or 2 more "
            "(a batch and channel, or a channel)")
    sources = []
    for d, (lo, hi) in enumerate(per_dim, start=first):
        start, size = 0, x.shape[d]
        if size + lo + hi <= 0:  # cropped to nothing: empty (PyTorch's answer), or an error below 0
            if size + lo + hi < 0:
                raise RuntimeError(f"pad: amounts {(lo, hi)} crop more than the {size} cells of dimension "
                                   f"{d} (input shape {tuple(x.shape)})")
            sources.append(np.arange(0))
            continue
        if mode == "circular":  # a negative amount crops first, then the rest wraps around what is left
            start, size = max(-lo, 0), size - max(-lo, 0) - max(-hi, 0)
            lo, hi = max(lo, 0), max(hi, 0)
        # PyTorch's bound, on the size before any crop (replicate repeats the edge: no bound).
        limit = {"reflect": x.shape[d] - 1, "circular": x.shape[d]}.get(mode, max(lo, hi))
        if max(lo, hi) > limit or size <= 0:
            raise RuntimeError(f"pad: in mode {mode!r} each padding amount must be at most {limit} for "
                               f"dimension {d} of size {x.shape[d]}, got {per_dim[d - first]} (input "
                               f"shape {tuple(x.shape)})")
        sources.append(start + _source_index(size, lo, hi, mode))  # negative lo, hi: fewer positions
    arrays = namespace(x.data)  # numpy, or CuPy for a tensor on a GPU
    index = (Ellipsis, *(arrays.asarray(i) for i in np.ix_(*sources)))  # host-made, used where x lives
    out = x.data[index]

    def vjp(grad: np.ndarray) -> np.ndarray:
        grad_x = np.zeros_like(x.data)
        ufunc_at(np.add, grad_x, index, grad)  # a cell copied several times gets the sum
        return grad_x

    return record(out, "pad", (x,), vjp, saved=(),
                  graph_vjp=_linear_graph_of("pad", partial(_gathered, index), vjp))


def _gathered(index: tuple, a: np.ndarray) -> np.ndarray:
    return a[index]


# --- interpolation --------------------------------------------------------------------------------


_INTERPOLATE_MODES = {"nearest": None, "nearest-exact": None, "linear": 1, "bilinear": 2, "bicubic": 2,
                      "trilinear": 3, "area": None}


def _interpolates_by_upsampling(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
                                 mode: str = "nearest", *args: Any, **kwargs: Any) -> bool:
    """Whether an `interpolate` call is one autocast lists on CUDA: every mode but "area", which
    is an adaptive average pooling (PyTorch's upsample_* kernels)."""
    return mode != "area"


@autocast_op("interpolate", when=_interpolates_by_upsampling)
def interpolate(input: Tensor, size: Size | None = None, scale_factor: float | Sequence[float] | None = None,  # noqa: A002
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dimensions (the last 1, 2 or 3) to `size`, or by `scale_factor`.

    'nearest' takes input cell floor(out_index * scale); 'nearest-exact' floor((out_index + 0.5)
    * scale); 'linear' / 'bilinear' / 'trilinear' blend the two nearest cells per dimension, with
    PyTorch's coordinate map:
    src = (dst + 0.5) * scale - 0.5 (clamped at 0), or dst * (in - 1) / (out - 1) with
    `align_corners`; 'bicubic' blends four cells per dimension with Keys' cubic (a = -0.75);
    'area' is `adaptive_avg_pool`. With `scale_factor` (and no
    `recompute_scale_factor`), scale is 1 / scale_factor, as in PyTorch; else in / out.
    `antialias` (bilinear and bicubic, 4-D input) widens the filter by the scale when shrinking,
    so every input cell counts (see `_antialias_weights`). uint8 input (nearest, and bilinear /
    bicubic on 4-D) is resized as PyTorch's CPU kernels do, with rounding and saturation.
    Gradient: the transpose of the same weights (a scatter-add for nearest).
    """
    op = "interpolate"
    if mode not in _INTERPOLATE_MODES:
        raise NotImplementedError(f"{op}: mode {mode!r} is not supported (use one of "
                                  f"{', '.join(_INTERPOLATE_MODES)})")
    needs = _INTERPOLATE_MODES[mode]
    if align_corners is not None and needs is None:
        raise ValueError(f"{op}: align_corners option can only be set with the interpolating modes "
                         f"linear | bilinear | bicubic | trilinear, not {mode!r}")
    spatial = input.ndim - 2
    if spatial < 1:
        raise NotImplementedError(f"{op}: expected a 3-D, 4-D or 5-D input (N, C, [[D,] H,] W), got shape "
                                  f"{tuple(input.shape)}")
    in_sizes = tuple(input.shape[2:])
    out_sizes, scales = _interpolate_sizes(in_sizes, size, scale_factor, recompute_scale_factor, op,
                                           allow_empty=mode == "area")
    if antialias and not (mode in ("bilinear", "bicubic") and spatial == 2):  # PyTorch checks this here
        raise ValueError(f"{op}: anti-alias option is restricted to bilinear and bicubic modes and requires "
                         f"a 4-D tensor as input, got mode {mode!r} and shape {tuple(input.shape)}")
    if spatial > 3:
        raise NotImplementedError(f"{op}: expected a 3-D, 4-D or 5-D input (N, C, [[D,] H,] W), got shape "
                                  f"{tuple(input.shape)}")
    if needs is not None and needs != spatial:
        raise NotImplementedError(f"{op}: mode {mode!r} is not supported on {input.ndim}-D input: "
                                  f"{mode} mode needs {needs + 2}-D input")
    if input.dtype == np.uint8 and mode in ("bilinear", "bicubic"):
        return _resample_uint8(input, out_sizes, scales, mode, bool(align_corners), antialias)
    if not (input.dtype == np.uint8 and mode in ("nearest", "nearest-exact")):
        _check_float(op, input)
    if antialias:
        if input.dtype.itemsize < 4:
            raise UnsupportedDtypeError(f"{op}: antialias is not implemented for dtype {input.dtype}")
        support = 1.0 if mode == "bilinear" else 2.0
        scales = [_pixel_scale(i, o, s, bool(align_corners), input.dtype)
                  for i, o, s in zip(in_sizes, out_sizes, scales, strict=True)]
        return _separable(input, [_resampling_weights(i, o, s, support, True, 0.0, input.dtype)
                                  for i, o, s in zip(in_sizes, out_sizes, scales, strict=True)])
    if mode == "area":
        if spatial == 1:
            return adaptive_avg_pool2d(input.unsqueeze(2), (1, out_sizes[0])).squeeze(2)
        return (adaptive_avg_pool2d if spatial == 2 else adaptive_avg_pool3d)(input, out_sizes)
    if needs is None:
        return _nearest(input, out_sizes, scales, exact=mode == "nearest-exact")
    # Separable: one (out, in) weight matrix per dimension. float16 is computed in float32 and
    # rounded once at the end, as PyTorch's kernels do (their opmath type).
    weights = _cubic_weights if mode == "bicubic" else _linear_weights
    x = input.to(np.float32) if input.dtype == np.float16 else input
    out = _separable(x, [weights(i, o, s, bool(align_corners), x.dtype)
                         for i, o, s in zip(in_sizes, out_sizes, scales, strict=True)])
    return out.to(input.dtype)


def _separable(x: Tensor, matrices: list[np.ndarray]) -> Tensor:
    """x with matrix k (out_k, in_k) applied along the k-th of its last len(matrices) dimensions,
    through tensorgrad's differentiable matmul: x @ M_w^T, then M_h @ that, then M_d on (..., D, H*W)."""
    on_device = namespace(x.data).asarray  # the matrices are made on the host
    out = matmul(x, new_leaf(on_device(np.ascontiguousarray(matrices[-1].T))))
    if len(matrices) > 1:
        out = matmul(new_leaf(on_device(matrices[-2])), out)
    if len(matrices) > 2:
        *lead, depth, h, w = out.shape
        out = matmul(new_leaf(on_device(matrices[-3])), out.reshape(*lead, depth, h * w))
        out = out.reshape(*lead, matrices[-3].shape[0], h, w)
    return out


def _interpolate_sizes(in_sizes: tuple[int, ...], size: Any, scale_factor: Any,
                       recompute_scale_factor: bool | None, op: str, allow_empty: bool = False):
    """The output sizes, and the scale factors the kernels see (None: computed from the sizes).
    `allow_empty`: an output size of 0 is allowed (mode 'area', whose pools allow it)."""
    spatial = len(in_sizes)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: " + ("only one of size or scale_factor should be defined" if size is not None
                                      else "either size or scale_factor should be defined"))
    if size is not None:
        if isinstance(size, Sequence) and len(size) != spatial:
            raise ValueError(f"{op}: input and output must have the same number of spatial dimensions, "
                             f"but got input with spatial dimensions of {list(in_sizes)} and output "
                             f"size of {size}")
        out_sizes = _ints(size, spatial, "size", op)
        if any(s < 0 or (s == 0 and not allow_empty) for s in out_sizes):
            raise ShapeError(f"{op}: output size must be positive, got {out_sizes}")
        return out_sizes, (None,) * spatial
    factors = tuple(scale_factor) if isinstance(scale_factor, Sequence) else (scale_factor,) * spatial
    if len(factors) != spatial:
        raise ValueError(f"{op}: scale_factor must have {spatial} entries for input with spatial "
                         f"dimensions {list(in_sizes)}, got {scale_factor}")
    for f in factors:
        if isinstance(f, bool) or not isinstance(f, int | float) or f <= 0:
            raise ValueError(f"{op}: scale_factor must be positive numbers, got {scale_factor!r}")
    out_sizes = tuple(int(math.floor(float(i) * f)) for i, f in zip(in_sizes, factors, strict=True))
    if any(s <= 0 for s in out_sizes):
        raise RuntimeError(f"{op}: scale_factor {scale_factor} gives an empty output for input sizes "
                           f"{list(in_sizes)}")
    scales = (None,) * spatial if recompute_scale_factor else tuple(float(f) for f in factors)
    return out_sizes, scales


def _scale(in_size: int, out_size: int, scale_factor: float | None, dtype: np.dtype) -> np.floating:
    """PyTorch's compute_scales_value: 1 / scale_factor when given, else in / out, in `dtype`."""
    if scale_factor is not None and scale_factor > 0:
        return dtype.type(1.0 / scale_factor)
    return dtype.type(in_size) / dtype.type(out_size)


def _nearest_index(in_size: int, out_size: int, scale_factor: float | None, exact: bool,
                   keeps_sizes: bool) -> np.ndarray:
    """The input cell each output cell copies (PyTorch computes the scale in float32 here).

    With `keeps_sizes` (PyTorch's 2-D 'nearest' kernel), an unchanged size copies and a doubled
    one repeats each cell, whatever the scale_factor.
    """
    dst = np.arange(out_size)
    if keeps_sizes and out_size == in_size:
        return dst
    if keeps_sizes and out_size == 2 * in_size:
        return dst // 2
    scale = _scale(in_size, out_size, scale_factor, np.dtype(np.float32))
    dst = dst.astype(np.float32)
    source = (dst + np.float32(0.5)) * scale if exact else dst * scale  # float32 arithmetic, as PyTorch
    return np.minimum(np.floor(source).astype(np.int64), in_size - 1)


def _nearest(x: Tensor, out_sizes: tuple[int, ...], scales: tuple, exact: bool) -> Tensor:
    """Nearest-neighbour resize: one gather; its gradient scatter-adds onto the copied cells."""
    in_sizes = x.shape[2:]
    keeps_sizes = len(in_sizes) == 2 and not exact  # PyTorch's 1-D kernel has no such special cases
    arrays = namespace(x.data)  # numpy, or CuPy for a tensor on a GPU
    cells = np.ix_(*(_nearest_index(i, o, s, exact, keeps_sizes)
                     for i, o, s in zip(in_sizes, out_sizes, scales, strict=True)))
    index = (Ellipsis, *(arrays.asarray(i) for i in cells))  # made on the host, used where x lives
    out = x.data[index]

    def vjp(grad: np.ndarray) -> np.ndarray:
        grad_x = np.zeros_like(x.data)
        ufunc_at(np.add, grad_x, index, grad)
        return grad_x

    return record(out, "interpolate", (x,), vjp, saved=(),
                  graph_vjp=_linear_graph_of("interpolate", partial(_gathered, index), vjp))


def _linear_weights(in_size: int, out_size: int, scale_factor: float | None, align_corners: bool,
                    dtype: np.dtype) -> np.ndarray:
    """(out, in): row o blends cells i0 and i1 = min(i0 + 1, in - 1) with weights 1 - t and t.

    PyTorch's area_pixel_compute_source_index, in the input's float type. A dimension whose size
    does not change is copied as it is, whatever the scale_factor (as PyTorch does).
    """
    if out_size == in_size:
        return np.eye(in_size, dtype=dtype)
    dst = np.arange(out_size, dtype=dtype)
    if align_corners:
        scale = dtype.type(in_size - 1) / dtype.type(out_size - 1) if out_size > 1 else dtype.type(0)
        src = scale * dst
    else:
        scale = _scale(in_size, out_size, scale_factor, dtype)
        src = np.maximum(scale * (dst + dtype.type(0.5)) - dtype.type(0.5), dtype.type(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    t = np.clip(src - i0, 0, 1).astype(dtype)
    weights = np.zeros((out_size, in_size), dtype=dtype)
    rows = np.arange(out_size)
    np.add.at(weights, (rows, i0), 1 - t)
    np.add.at(weights, (rows, i1), t)
    return weights


# Keys' cubic convolution kernel with a = -0.75, as PyTorch's bicubic (and OpenCV's) uses.
_CUBIC_A = -0.75


def _cubic_weights(in_size: int, out_size: int, scale_factor: float | None, align_corners: bool,
                   dtype: np.dtype) -> np.ndarray:
    """(out, in): row o blends cells floor(src) - 1 .. floor(src) + 2 (clamped to the edges) with
    the cubic kernel's weights at their distances from src. The coordinate map is the linear one's,
    not clamped at 0 (PyTorch's area_pixel_compute_source_index with cubic=True)."""
    if out_size == in_size:
        return np.eye(in_size, dtype=dtype)
    dst = np.arange(out_size, dtype=dtype)
    if align_corners:
        src = (dtype.type(in_size - 1) / dtype.type(out_size - 1) if out_size > 1 else dtype.type(0)) * dst
    else:
        src = _scale(in_size, out_size, scale_factor, dtype) * (dst + dtype.type(0.5)) - dtype.type(0.5)
    start = np.floor(src).astype(np.int64)
    t = (src - start).astype(dtype)
    weights = np.zeros((out_size, in_size), dtype=dtype)
    rows = np.arange(out_size)
    for k, distance in enumerate((t + 1, t, 1 - t, 2 - t)):  # from cells start - 1 .. start + 2
        np.add.at(weights, (rows, np.clip(start - 1 + k, 0, in_size - 1)), _keys_cubic(distance))
    return weights


def _keys_cubic(distance: np.ndarray, a: float = _CUBIC_A) -> np.ndarray:
    """The cubic convolution kernel at 0 <= distance <= 2 (one polynomial inside 1, one outside)."""
    a = distance.dtype.type(a)
    inside = ((a + 2) * distance - (a + 3)) * distance * distance + 1
    outside = ((a * distance - 5 * a) * distance + 8 * a) * distance - 4 * a
    return np.where(distance <= 1, inside, outside)


def _pixel_scale(in_size: int, out_size: int, scale_factor: float | None, align_corners: bool,
                 dtype: np.dtype) -> np.floating:
    """PyTorch's area_pixel_compute_scale: (in - 1) / (out - 1) with align_corners (0 for a single
    output cell), else `_scale`."""
    if align_corners:
        return dtype.type(in_size - 1) / dtype.type(out_size - 1) if out_size > 1 else dtype.type(0)
    return _scale(in_size, out_size, scale_factor, dtype)


def _resampling_weights(in_size: int, out_size: int, scale: np.floating, support: float, antialias: bool,
                        delta: float, dtype: np.dtype) -> np.ndarray:
    """(out, in): PyTorch's antialiased resampling (PIL's), support 1 the triangle (bilinear), 2
    Keys' cubic with a = -0.5 (bicubic: PIL's a, not the -0.75 of plain bicubic).

    Output cell i is centred at c = scale * (i + 0.5 - delta) in input coordinates, and cell j
    weighs filter((j + 0.5 - delta - c) * squeeze) for the cells within `support` of c (clipped
    at the edges), the weights normalised to sum to 1. Shrinking (scale >= 1) with `antialias`
    stretches the filter by the scale (support * scale, squeeze 1 / scale), so every input cell
    under an output cell counts. The arithmetic is PyTorch's, in `dtype`, to agree to the last bits.
    """
    if in_size == out_size:  # copied as it is, whatever the scale_factor (as PyTorch does)
        return np.eye(in_size, dtype=dtype)
    kind = dtype.type
    stretch = antialias and scale >= 1
    reach = kind(support * float(scale)) if stretch else kind(support)
    squeeze = 1.0 / float(scale) if stretch else 1.0
    rows = np.arange(out_size)
    center = (float(scale) * (rows + 0.5 - delta)).astype(dtype)
    first = np.maximum(np.trunc((center - reach).astype(np.float64) + 0.5 + delta).astype(np.int64), 0)
    end = np.minimum(np.trunc((center + reach).astype(np.float64) + 0.5 + delta).astype(np.int64), in_size)
    cells = first[:, None] + np.arange(max(int((end - first).max(initial=0)), 0))
    inside = cells < end[:, None]
    x = ((cells.astype(dtype) - center[:, None]).astype(np.float64) + 0.5 - delta) * kind(squeeze)
    x = np.abs(x.astype(dtype))
    if support == 1.0:
        weights = np.where(inside & (x < 1), 1 - x, kind(0))
    else:
        weights = np.where(inside & (x < 2), _keys_cubic(x, -0.5), kind(0))
    total = np.zeros(out_size, dtype)
    for tap in weights.T:  # one tap after another, as PyTorch adds them
        total += tap
    weights = weights / np.where(total == 0, kind(1), total)[:, None]
    matrix = np.zeros((out_size, in_size), dtype)
    matrix[np.broadcast_to(rows[:, None], cells.shape)[inside], cells[inside]] = weights[inside]
    return matrix


def _resample_uint8(x: Tensor, out_sizes: tuple[int, ...], scales: tuple, mode: str, align_corners: bool,
                    antialias: bool) -> Tensor:
    """'bilinear' / 'bicubic' on uint8 images, as PyTorch's CPU kernel (PIL's): the width, then the
    height, each resampled with `_resampling_weights` (plain bicubic: `_cubic_weights`) rounded to
    integers with `precision` fraction bits; each pass is rounded and saturated to 0..255."""
    support = 1.0 if mode == "bilinear" else 2.0
    delta = 0.5 if align_corners and not antialias else 0.0  # PyTorch's align_corners_delta
    out = x.data
    for axis in (-1, -2):
        in_size, out_size = out.shape[axis], out_sizes[axis]
        if in_size == out_size:
            continue
        double = np.dtype(np.float64)
        if mode == "bicubic" and not antialias:  # the float kernel's weights (edges repeated)
            weights = _cubic_weights(in_size, out_size, scales[axis], align_corners, double)
        else:
            scale = _pixel_scale(in_size, out_size, scales[axis], align_corners, double)
            weights = _resampling_weights(in_size, out_size, scale, support, antialias, delta, double)
        largest = weights.max(initial=0.0)
        precision = next((p for p in range(22) if int(0.5 + largest * (1 << (p + 1))) >= 1 << 15), 22)
        fixed = np.trunc(weights * (1 << precision) + np.where(weights < 0, -0.5, 0.5)).astype(np.int64)
        arrays = namespace(out)  # numpy, or CuPy for a tensor on a GPU; the weights are made on the host
        total = out.swapaxes(axis, -1).astype(np.int64) @ arrays.asarray(fixed.T) + (1 << (precision - 1))
        out = np.clip(total >> precision, 0, 255).astype(np.uint8).swapaxes(axis, -1)
        out = arrays.ascontiguousarray(out)
    return new_leaf(out.copy() if out is x.data else out)


# --- F.unfold / F.fold: im2col and col2im as ops --------------------------------------------------


def _im2col_geometry(kernel_size: Size, dilation: Size, padding: Size, stride: Size, op: str):
    kernel = _ints(kernel_size, 2, "kernel_size", op)
    dilation2 = _ints(dilation, 2, "dilation", op)
    pad2 = _ints(padding, 2, "padding", op)
    stride2 = _ints(stride, 2, "stride", op)
    if min(kernel + dilation2 + stride2) < 1 or min(pad2) < 0:
        raise RuntimeError(f"{op}: kernel_size, dilation and stride must be positive and padding "
                           f"non-negative, got kernel_size={kernel}, dilation={dilation2}, "
                           f"padding={pad2}, stride={stride2}")
    return kernel, dilation2, ((pad2[0], pad2[0]), (pad2[1], pad2[1])), stride2


def unfold(input: Tensor, kernel_size: Size, dilation: Size = 1, padding: Size = 0,  # noqa: A002
           stride: Size = 1) -> Tensor:
    """im2col: (N, C, H, W) -> (N, C*kh*kw, L), column l holding the l-th window (row-major).

    The windows are a strided view; the reshape to columns is the copy. Gradient: `fold`.
    """
    op = "unfold"
    kernel, dilation2, pads, stride2 = _im2col_geometry(kernel_size, dilation, padding, stride, op)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{op}: expected a 3-D (unbatched) or 4-D (batched) input, got shape "
                           f"{tuple(input.shape)}")
    xd = input.data if input.ndim == 4 else input.data[None]
    xp = _pad_array(xd, pads)
    _check_kernel_fits(xp.shape[2:], kernel, dilation2, op)
    windows = _windows(xp, kernel, stride2, dilation2)
    n, c, kh, kw, oh, ow = windows.shape
    out = windows.reshape(n, c * kh * kw, oh * ow)

    def vjp(grad: np.ndarray) -> np.ndarray:
        grad_windows = grad.reshape(windows.shape)
        return _crop(_fold(grad_windows, xp.shape, stride2, dilation2), pads).reshape(input.shape)

    def forward(a: np.ndarray) -> np.ndarray:
        cells = _windows(_pad_array(a.reshape(xd.shape), pads), kernel, stride2, dilation2)
        return cells.reshape(result.shape)

    result = out if input.ndim == 4 else out[0]
    return record(result, "unfold", (input,), vjp, saved=(),
                  graph_vjp=_linear_graph_of("unfold", forward, vjp))


def fold(input: Tensor, output_size: Size, kernel_size: Size, dilation: Size = 1, padding: Size = 0,  # noqa: A002
         stride: Size = 1) -> Tensor:
    """col2im: (N, C*kh*kw, L) -> (N, C, H, W), summing where windows overlap. Gradient: `unfold`."""
    op = "fold"
    kernel, dilation2, pads, stride2 = _im2col_geometry(kernel_size, dilation, padding, stride, op)
    out_hw = _ints(output_size, 2, "output_size", op)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{op}: expected a 2-D (unbatched) or 3-D (batched) input, got shape "
                           f"{tuple(input.shape)}")
    cd = input.data if input.ndim == 3 else input.data[None]
    n, ckk, length = cd.shape
    padded = (out_hw[0] + 2 * pads[0][0], out_hw[1] + 2 * pads[1][0])
    oh, ow = (_output_size(p, k, s, d) for p, k, s, d in zip(padded, kernel, stride2, dilation2, strict=True))
    if ckk % (kernel[0] * kernel[1]) or oh < 1 or ow < 1 or oh * ow != length:
        raise RuntimeError(
            f"{op}: given output_size={out_hw}, kernel_size={kernel}, dilation={dilation2}, padding="
            f"{(pads[0][0], pads[1][0])}, stride={stride2}, expected input of shape {tuple(input.shape)} to "
            f"have a dimension -2 divisible by {kernel[0] * kernel[1]} and dimension -1 equal to "
            f"{max(oh, 0) * max(ow, 0)} blocks")
    c = ckk // (kernel[0] * kernel[1])
    full_shape = (n, c, *padded)
    grad_windows = cd.reshape(n, c, kernel[0], kernel[1], oh, ow)
    out = _crop(_fold(grad_windows, full_shape, stride2, dilation2), pads)

    def vjp(grad: np.ndarray) -> np.ndarray:
        gp = _pad_array(namespace(grad).ascontiguousarray(grad.reshape(out.shape)), pads)
        return _windows(gp, kernel, stride2, dilation2).reshape(input.shape)

    def forward(a: np.ndarray) -> np.ndarray:
        folded = _crop(_fold(a.reshape(grad_windows.shape), full_shape, stride2, dilation2), pads)
        return namespace(folded).ascontiguousarray(folded).reshape(result.shape)

    out = namespace(out).ascontiguousarray(out)
    result = out if input.ndim == 3 else out[0]
    return record(result, "fold", (input,), vjp, saved=(), graph_vjp=_linear_graph_of("fold", forward, vjp))


# --- modules --------------------------------------------------------------------------------------


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What Conv1d, Conv2d and ConvTranspose2d share: arguments, parameters, initialisation.

    PyTorch's default initialisation: weight and bias uniform in ±1/sqrt(fan_in), where fan_in
    is weight.shape[1] times the kernel's size (kaiming_uniform_ with a=sqrt(5)).
    """

    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Size | str = 0, dilation: Size = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", output_padding: Size = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name, dims = type(self).__name__, self._dims
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must both be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {', '.join(_PADDING_MODES)}, got "
                             f"{padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _ints(kernel_size, dims, "kernel_size", name)
        self.stride = _ints(stride, dims, "stride", name)
        self.dilation = _ints(dilation, dims, "dilation", name)
        self.output_padding = _ints(output_padding, dims, "output_padding", name)
        self.padding_mode, self.transposed = padding_mode, self._transposed
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: invalid padding string {padding!r}, should be one of "
                                 "'valid', 'same'")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _ints(padding, dims, "padding", name)
        if self.transposed:
            channels = (in_channels, out_channels // groups)
        else:
            channels = (out_channels, in_channels // groups)
        dtype = dtypes.or_default(dtype)
        fan_in = channels[1] * math.prod(self.kernel_size)
        bound = 1 / math.sqrt(fan_in) if fan_in else 0.0
        self.weight = Parameter(_uniform(bound, (*channels, *self.kernel_size), dtype))
        self.bias = Parameter(_uniform(bound, (out_channels,), dtype)) if bias else None
        _place(self, device)

    def _padded(self, x: Tensor) -> tuple[Tensor, Size | str]:
        """x padded by `padding_mode` (then the convolution pads nothing), or x and the padding."""
        if self.padding_mode == "zeros":
            return x, self.padding
        if self.padding == "valid":
            return x, 0
        if self.padding == "same":
            totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size, strict=True)]
            per_dim = [(t // 2, t - t // 2) for t in totals]
        else:
            per_dim = [(p, p) for p in self.padding]
        amounts = [a for lo_hi in reversed(per_dim) for a in lo_hi]  # last dimension first
        return pad(x, amounts, mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        text += f", stride={self.stride}"
        if self.padding != (0,) * self._dims:
            text += f", padding={self.padding}"  # PyTorch's: padding=same, no quotes
        if self.dilation != (1,) * self._dims:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class _Conv(_ConvNd):
    """What Conv1d and Conv2d share: the constructor and a forward through `_conv`."""

    _conv = staticmethod(conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Size | str = 0, dilation: Size = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        x, padding = self._padded(input)
        return self._conv(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv2d(_Conv):
    """2-D convolution layer: `F.conv2d(x, weight, bias, ...)` with weight (out, in/groups, kh, kw).

    `padding_mode` 'zeros' (the convolution pads), or 'reflect', 'replicate', 'circular' (`F.pad`
    first). State dict keys `weight`, `bias`, as PyTorch's.
    """


class Conv1d(_Conv):
    """1-D convolution layer: `F.conv1d(x, weight, bias, ...)` with weight (out, in/groups, k)."""

    _dims = 1
    _conv = staticmethod(conv1d)


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution layer: `F.conv_transpose2d`, weight (in, out/groups, kh, kw).

    `forward(x, output_size=None)`: an output_size picks the output_padding that reaches it.
    """

    _transposed = True
    _conv = staticmethod(conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size, stride: Size = 1,
                 padding: Size = 0, output_padding: Size = 0, groups: int = 1, bias: bool = True,
                 dilation: Size = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(f"{name}: only 'zeros' padding mode is supported, got {padding_mode!r}")
        if isinstance(padding, str):
            raise ValueError(f"{name}: padding must be an int or a tuple of ints, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device=device, dtype=dtype)

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:  # noqa: A002
        extra = self.output_padding if output_size is None else self._output_padding(input, output_size)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, extra,
                          self.groups, self.dilation)

    def _output_padding(self, x: Tensor, output_size: Sequence[int]) -> tuple[int, ...]:
        """The output_padding that makes the output `output_size` (its last entries)."""
        dims = self._dims
        if len(output_size) not in (dims, x.ndim):
            raise ValueError(f"{type(self).__name__}: for {x.ndim}-D input, output_size must have {dims} "
                             f"or {x.ndim} elements (got {len(output_size)})")
        wanted = tuple(output_size)[-dims:]
        extra = []
        for d, want in enumerate(wanted):
            smallest = ((x.shape[d - dims] - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            if not smallest <= want < smallest + self.stride[d]:
                raise ValueError(f"{type(self).__name__}: requested an output size of {tuple(wanted)}, but "
                                 f"valid sizes for input of shape {tuple(x.shape)} range from {smallest} "
                                 f"to {smallest + self.stride[d] - 1} in dimension {d - dims}")
            extra.append(want - smallest)
        return tuple(extra)


class ConvTranspose1d(ConvTranspose2d):
    """1-D transposed convolution layer: `F.conv_transpose1d`, weight (in, out/groups, k)."""

    _dims = 1
    _conv = staticmethod(conv_transpose1d)


class MaxPool2d(Module):
    """`F.max_pool2d` as a layer (no parameters)."""

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0, dilation: Size = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    _pool = staticmethod(max_pool2d)

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """`F.avg_pool2d` as a layer (no parameters)."""

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """`F.adaptive_avg_pool2d` as a layer: any input size to `output_size` (no parameters)."""

    def __init__(self, output_size: Size | Sequence[int | None]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool1d(MaxPool2d):
    """`F.max_pool1d` as a layer (no parameters)."""

    _pool = staticmethod(max_pool1d)


class AvgPool1d(AvgPool2d):
    """`F.avg_pool1d` as a layer (no parameters)."""

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        def single(size: Size) -> tuple:  # PyTorch keeps the 1-d sizes as 1-tuples (and shows them so)
            return tuple(size) if isinstance(size, Sequence) else (size,)

        super().__init__(single(kernel_size), single(kernel_size if stride is None else stride),
                         single(padding), ceil_mode, count_include_pad)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)


def adaptive_avg_pool1d(input: Tensor, output_size: int) -> Tensor:  # noqa: A002
    """The mean of `output_size` adaptive windows along the last dimension (of (N, C, L) or (C, L))."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d: expected a 2-D or 3-D input, got shape "
                           f"{tuple(input.shape)}")
    size = _one_size(output_size, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def _one_size(output_size: Any, op: str) -> Any:
    """A 1-D adaptive pool's output_size: an int or a sequence of one."""
    if not isinstance(output_size, Sequence):
        return output_size
    if len(output_size) != 1:
        raise RuntimeError(f"{op}() argument 'output_size' should contain one int (got {len(output_size)})")
    return output_size[0]


def adaptive_max_pool2d(input: Tensor, output_size: Size | Sequence[int | None],  # noqa: A002
                        return_indices: bool = False) -> Any:
    """The largest value of each of output_size adaptive windows (rows floor(i H / oh) to
    ceil((i + 1) H / oh), columns likewise), with its index in the H * W plane if asked.
    Gradient: to that element (the first of equal largest ones), through `gather`."""
    return _adaptive_max_pool(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def _adaptive_sizes(sizes: tuple[int, ...], output_size: Any, op: str) -> tuple[int, ...]:
    """output_size (an int, or one int or None per spatial dimension) as ints: None keeps that size."""
    dims = len(sizes)
    if output_size is None:
        raise TypeError(f"{op}: output_size must be an int or a sequence of {dims} ints or None, got None")
    given = tuple(output_size) if isinstance(output_size, Sequence) else (output_size,) * dims
    if len(given) != dims:
        raise ShapeError(f"{op}: output_size must be {dims} numbers, got {output_size!r}")
    outs = _ints(tuple(size if o is None else o for size, o in zip(sizes, given, strict=True)), dims,
                 "output_size", op)
    if any(o < 0 for o in outs) or 0 in sizes:
        raise RuntimeError(f"{op}: output_size {outs} and input sizes {sizes} must be non-negative and "
                           "non-empty")
    return outs


def _raise_adaptive_rank(input: Tensor, output_size: Any, dims: int, op: str) -> None:  # noqa: A002
    """The error for an input of the wrong rank: PyTorch's Python wrapper raises ValueError when a
    sequence output_size has as many entries as the input has dimensions, or more; else its kernel's
    RuntimeError."""
    shape = tuple(input.shape)
    if not isinstance(output_size, int | np.integer) and input.ndim <= len(output_size):
        raise ValueError(f"{op}: Input dimension should be at least {len(output_size) + 1}, got shape "
                         f"{shape}")
    raise RuntimeError(f"{op}: expected a {dims + 1}-D or {dims + 2}-D input, got shape {shape}")


def _adaptive_max_pool(input: Tensor, output_size: Any, return_indices: bool, dims: int,  # noqa: A002
                       op: str) -> Any:
    """adaptive_max_pool2d / 3d: per output cell, the argmax of its window as a flat index into the
    input's plane (volume), found with one argmax per cell; the values are one differentiable `gather`."""
    x = input if input.ndim == dims + 2 else input.unsqueeze(0)
    if x.ndim != dims + 2:
        _raise_adaptive_rank(input, output_size, dims, op)
    _check_float(op, x)
    n, c, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
    outs = _adaptive_sizes(sizes, output_size, op)
    steps = [math.prod(sizes[d + 1:]) for d in range(dims)]  # a flat index's step per dimension
    spans = [[((i * size) // o, -(-(i + 1) * size // o)) for i in range(o)]
             for size, o in zip(sizes, outs, strict=True)]
    index = namespace(x.data).zeros((n, c, math.prod(outs)), dtype=np.int64)
    for cell, bounds in enumerate(itertools.product(*spans)):
        window = x.data[(slice(None), slice(None), *(slice(lo, hi) for lo, hi in bounds))]
        window = window.reshape(n, c, math.prod(hi - lo for lo, hi in bounds))
        rest = np.argmax(window, axis=-1)  # the first largest; PyTorch's: the last nan, if there is one
        nans = np.isnan(window)
        if nans.any():
            rest = np.where(nans.any(axis=-1), window.shape[-1] - 1 - nans[..., ::-1].argmax(axis=-1), rest)
        position = 0
        for (lo, hi), step in zip(reversed(bounds), reversed(steps), strict=True):
            position = position + (lo + rest % (hi - lo)) * step
            rest = rest // (hi - lo)
        index[:, :, cell] = position
    out = x.reshape(n, c, math.prod(sizes)).gather(2, new_leaf(index)).reshape(n, c, *outs)
    indices = new_leaf(index.reshape(n, c, *outs))
    if input.ndim == dims + 1:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size: int, return_indices: bool = False) -> Any:  # noqa: A002
    """`adaptive_max_pool2d` along the last dimension of (N, C, L) or (C, L) input."""
    size = _one_size(output_size, "adaptive_max_pool1d")
    result = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


class AdaptiveMaxPool2d(Module):
    """`F.adaptive_max_pool2d` as a layer (no parameters)."""

    _pool = staticmethod(adaptive_max_pool2d)

    def __init__(self, output_size: Size | Sequence[int | None], return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return self._pool(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """`F.adaptive_max_pool1d` as a layer (no parameters)."""

    _pool = staticmethod(adaptive_max_pool1d)


class AdaptiveAvgPool1d(Module):
    """`F.adaptive_avg_pool1d` as a layer: any length to `output_size` (no parameters)."""

    def __init__(self, output_size: int) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class Upsample(Module):
    """`F.interpolate` as a layer: resize to `size`, or by `scale_factor`, with `mode`."""

    def __init__(self, size: Size | None = None, scale_factor: float | Sequence[float] | None = None,
                 mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.size is not None:
            given = f"size={self.size}"
        else:  # PyTorch prints the factor as a float (2.0, or (2.0, 3.0))
            factor = self.scale_factor
            factor = tuple(float(f) for f in factor) if isinstance(factor, Sequence) else float(factor)
            given = f"scale_factor={factor}"
        return f"{given}, mode={self.mode!r}"


class Unfold(Module):
    """`F.unfold` (im2col) as a layer: (N, C, H, W) -> (N, C*kh*kw, L)."""

    def __init__(self, kernel_size: Size, dilation: Size = 1, padding: Size = 0, stride: Size = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """`F.fold` (col2im) as a layer: (N, C*kh*kw, L) -> (N, C, H, W), overlaps summed."""

    def __init__(self, output_size: Size, kernel_size: Size, dilation: Size = 1, padding: Size = 0,
                 stride: Size = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


# --- padding layers: F.pad with a fixed mode over the last 1 or 2 dimensions ----------------------


class _PadNd(Module):
    """`F.pad(x, padding, mode)` as a layer; an int pads every side by that much."""

    _dims = 2
    _mode = "constant"

    def __init__(self, padding: Size) -> None:
        super().__init__()
        sides = 2 * self._dims
        self.padding = (padding,) * sides if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != sides:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {sides} ints, "
                             f"got {padding!r}")
        self.value = 0.0

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pad(input, self.padding, self._mode, self.value if self._mode == "constant" else None)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ConstantPad2d(_PadNd):
    """Pad the last two dimensions with `value`: padding (left, right, top, bottom) or one int."""

    def __init__(self, padding: Size, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(ConstantPad2d):
    """Pad the last dimension with `value`: padding (left, right) or one int."""

    _dims = 1


class ZeroPad2d(_PadNd):
    """Pad the last two dimensions with zeros: padding (left, right, top, bottom) or one int."""


class ZeroPad1d(ZeroPad2d):
    """Pad the last dimension with zeros: padding (left, right) or one int."""

    _dims = 1


class ReflectionPad2d(_PadNd):
    """Pad the last two dimensions with their reflection (the edge not repeated)."""

    _mode = "reflect"


class ReflectionPad1d(ReflectionPad2d):
    """Pad the last dimension with its reflection (the edge not repeated)."""

    _dims = 1


class ReplicationPad2d(_PadNd):
    """Pad the last two dimensions by repeating their edge values."""

    _mode = "replicate"


class ReplicationPad1d(ReplicationPad2d):
    """Pad the last dimension by repeating its edge values."""

    _dims = 1


class CircularPad2d(_PadNd):
    """Pad the last two dimensions by wrapping around."""

    _mode = "circular"


class CircularPad1d(CircularPad2d):
    """Pad the last dimension by wrapping around."""

    _dims = 1


# --- 3-D: convolution, pooling and padding of (N, C, D, H, W) volumes ------------------------------
# The same window view, fold and matmuls as 2-D, over three spatial dimensions.


@autocast_op("conv3d")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,  # noqa: A002
           padding: Size | str = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation: out[n,o,z,y,x] = b[o] + sum_{c,i,j,k} w[o,c,i,j,k] * in[n,c,z',y',x'],
    z' = z*s + i*d, y' = y*s + j*d, x' = x*s + k*d.

    input (N, C, D, H, W) or (C, D, H, W); weight (O, C/groups, kd, kh, kw); padding an int, a
    triple, 'valid' or 'same'. Gradients as conv2d's: fold(weight^T @ grad), grad @ im2col^T, sums.
    """
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


@autocast_op("conv_transpose3d")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,  # noqa: A002
                     padding: Size = 0, output_padding: Size = 0, groups: int = 1,
                     dilation: Size = 1) -> Tensor:
    """3-D transposed convolution: the gradient of `conv3d` with respect to its input.

    input (N, C_in, D, H, W); weight (C_in, C_out/groups, kd, kh, kw). Output size per dimension
    (in - 1)*stride - 2*padding + dilation*(k - 1) + output_padding + 1. Gradients: d/dinput is
    conv3d(grad, weight), d/dweight conv3d's weight gradient with input and grad swapped.
    """
    return _conv_transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                            "conv_transpose3d")


@autocast_op("max_pool3d")
def max_pool3d(input: Tensor, kernel_size: Size, stride: Size | None = None, padding: Size = 0,  # noqa: A002
               dilation: Size = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The largest value of each kd x kh x kw window. Gradient: each output's grad goes to its argmax.

    With `return_indices`, also the argmax positions as flat indices into each D x H x W volume
    (int64), as PyTorch. Ties go to the first position in the window; NaN wins.
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3,
                     "max_pool3d")


@autocast_op("avg_pool3d")
def avg_pool3d(input: Tensor, kernel_size: Size, stride: Size | None = None, padding: Size = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each kd x kh x kw window: sum / divisor. Gradient: grad / divisor to every window
    element. The divisor follows `avg_pool2d`'s rule in each dimension."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     3, "avg_pool3d")


@autocast_op("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size: Size | Sequence[int | None]) -> Tensor:  # noqa: A002
    """Average pooling to a fixed (od, oh, ow): averaging matrices A_d, A_h, A_w applied along D, H, W.

    Row i of A_d averages cells floor(i*D/od) .. ceil((i+1)*D/od) - 1 (PyTorch's windows); `None`
    keeps that size. The gradient is matmul's: the same matrices, transposed.
    """
    op = "adaptive_avg_pool3d"
    if input.ndim not in (4, 5):
        _raise_adaptive_rank(input, output_size, 3, op)
    _check_float(op, input)
    sizes = tuple(input.shape[-3:])
    outs = _adaptive_sizes(sizes, output_size, op)
    matrices = [_averaging_matrix(size, o, input.dtype) for size, o in zip(sizes, outs, strict=True)]
    return _separable(input, matrices)


@autocast_op("adaptive_max_pool3d")
def adaptive_max_pool3d(input: Tensor, output_size: Size | Sequence[int | None],  # noqa: A002
                        return_indices: bool = False) -> Any:
    """The largest value of each of output_size adaptive windows (as `adaptive_max_pool2d`, in three
    dimensions), with its index in the D * H * W volume if asked. Gradient: to that element."""
    return _adaptive_max_pool(input, output_size, return_indices, 3, "adaptive_max_pool3d")


class Conv3d(_Conv):
    """3-D convolution layer: `F.conv3d(x, weight, bias, ...)` with weight (out, in/groups, kd, kh, kw).

    `padding_mode` 'zeros', 'reflect', 'replicate' or 'circular', as `Conv2d`.
    """

    _dims = 3
    _conv = staticmethod(conv3d)


class ConvTranspose3d(ConvTranspose2d):
    """3-D transposed convolution layer: `F.conv_transpose3d`, weight (in, out/groups, kd, kh, kw)."""

    _dims = 3
    _conv = staticmethod(conv_transpose3d)


class MaxPool3d(MaxPool2d):
    """`F.max_pool3d` as a layer (no parameters)."""

    _pool = staticmethod(max_pool3d)


class AvgPool3d(AvgPool2d):
    """`F.avg_pool3d` as a layer (no parameters)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """`F.adaptive_avg_pool3d` as a layer: any volume to `output_size` (no parameters)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """`F.adaptive_max_pool3d` as a layer (no parameters)."""

    _pool = staticmethod(adaptive_max_pool3d)


class ConstantPad3d(ConstantPad2d):
    """Pad the last three dimensions with `value`: padding (left, right, top, bottom, front, back)
    or one int."""

    _dims = 3


class ZeroPad3d(ZeroPad2d):
    """Pad the last three dimensions with zeros: padding (left, right, top, bottom, front, back)
    or one int."""

    _dims = 3


class ReflectionPad3d(ReflectionPad2d):
    """Pad the last three dimensions with their reflection (the edge not repeated)."""

    _dims = 3


class ReplicationPad3d(ReplicationPad2d):
    """Pad the last three dimensions by repeating their edge values."""

    _dims = 3


class CircularPad3d(CircularPad2d):
    """Pad the last three dimensions by wrapping around."""

    _dims = 3


# --- pixel shuffle: channels to space and back -----------------------------------------------------


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels becomes an r x r block.
    Gradient: the inverse rearrangement (through reshape and permute)."""
    r = _positive_factor(upscale_factor, "pixel_shuffle", "upscale_factor")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *batch, channels, height, width = input.shape
    if channels % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                           f"square of upscale_factor, but input.size(-3)={channels} is not divisible "
                           f"by {r * r}")
    n = len(batch)
    x = input.reshape(*batch, channels // (r * r), r, r, height, width)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*batch, channels // (r * r), height * r, width * r)


def _positive_factor(factor: Any, op: str, name: str) -> int:
    """pixel_shuffle's factor: an int (TypeError otherwise), positive (RuntimeError otherwise)."""
    factor = _ints(factor, 1, name, op)[0]
    if factor < 1:
        raise RuntimeError(f"{op}: {name} must be greater than 0, but got {factor}")
    return factor


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of `pixel_shuffle`."""
    r = _positive_factor(downscale_factor, "pixel_unshuffle", "downscale_factor")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    *batch, channels, height, width = input.shape
    if height % r or width % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, "
                           f"but got height={height}, width={width}, downscale_factor={r}")
    n = len(batch)
    x = input.reshape(*batch, channels, height // r, r, width // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*batch, channels * r * r, height // r, width // r)


class PixelShuffle(Module):
    """`F.pixel_shuffle` as a layer."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """`F.pixel_unshuffle` as a layer."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


# --- more pooling: power averages, unpooling, the index-returning aliases; channel shuffle ----------


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Size, stride: Size | None = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """(sum of x**p over each window) ** (1/p): the power-average pool, as PyTorch computes it,
    from `avg_pool2d` of x**p times the window's size. norm_type=inf is the max of |x|.
    Gradient: through those ops (0 where a window's sum is 0)."""
    kernel = _ints(kernel_size, 2, "kernel_size", "lp_pool2d")
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, kernel[0] * kernel[1],
                    avg_pool2d, max_pool2d)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Size | None = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """`lp_pool2d` along the last dimension: (sum of x**p over each window) ** (1/p)."""
    kernel = _ints(kernel_size, 1, "kernel_size", "lp_pool1d")
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, kernel[0], avg_pool1d, max_pool1d)


def _lp_pool(x: Tensor, norm_type: float, kernel_size: Size, stride: Size | None, ceil_mode: bool,
             window: int, average: Any, maximum: Any) -> Tensor:
    if norm_type == math.inf:
        return maximum(x.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -maximum(-x.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = average(x.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    # PyTorch's sign(out) * relu(|out|) is out itself with a zero gradient at 0, where the root's
    # infinite one is masked (a select, so inf * 0 is no nan).
    return where(out != 0, out, 0.0).mul(window).pow(1.0 / norm_type)


@autocast_op("max_unpool2d")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Size, stride: Size | None = None,  # noqa: A002
                 padding: Size = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """The inverse of `max_pool2d`: zeros of the unpooled size, with each input value put at
    its index (flat, in its H x W plane) from `max_pool2d(..., return_indices=True)`.
    Gradient: the output's gradient read back at those indices."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


@autocast_op("max_unpool1d")
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Size, stride: Size | None = None,  # noqa: A002
                 padding: Size = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """The inverse of `max_pool1d`: zeros of the unpooled length, each value put at its index."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def _unpool_size(in_sizes: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
                 padding: tuple[int, ...], output_size: Sequence[int] | None) -> tuple[int, ...]:
    """PyTorch's `_unpool_output_size`: (in - 1) * stride + kernel - 2 * padding, or the
    `output_size` asked for when it is within a stride of that."""
    default = tuple((i - 1) * s + k - 2 * p
                    for i, s, k, p in zip(in_sizes, stride, kernel, padding, strict=True))
    if output_size is None:
        return default
    sizes = tuple(output_size)
    if len(sizes) == len(kernel) + 2:
        sizes = sizes[2:]
    if len(sizes) != len(kernel):
        raise ValueError(f"max_unpool: output_size should be a sequence containing {len(kernel)} or "
                         f"{len(kernel) + 2} elements, but it has a length of '{len(sizes)}'")
    for d, (size, base, s) in enumerate(zip(sizes, default, stride, strict=True)):
        if not base - s < size < base + s:
            raise ValueError(f'max_unpool: invalid output_size "{tuple(output_size)}" (dim {d} must be '
                             f"between {base - s} and {base + s})")
    return tuple(int(size) for size in sizes)


def _max_unpool(x: Tensor, indices: Tensor, kernel_size: Size, stride: Size | None, padding: Size,
                output_size: Sequence[int] | None, dims: int, op: str) -> Tensor:
    if x.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{op}: expected a {dims + 1}-D or {dims + 2}-D input, got shape {tuple(x.shape)}")
    if not isinstance(indices, Tensor) or indices.data.dtype != np.int64:
        kind = indices.dtype if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"{op}: elements in indices should be type int64 but got: {kind}")
    if tuple(indices.shape) != tuple(x.shape):
        raise RuntimeError(f"{op}: expected shape of indices to be the same as that of the input "
                           f"{tuple(x.shape)}, got {tuple(indices.shape)}")
    kernel = _ints(kernel_size, dims, "kernel_size", op)
    strides = kernel if stride is None else _ints(stride, dims, "stride", op)
    sizes = _unpool_size(tuple(x.shape[-dims:]), kernel, strides, _ints(padding, dims, "padding", op),
                         output_size)
    plane = math.prod(sizes)
    lead = x.shape[:-dims]
    rows = math.prod(lead)
    flat = indices.data.reshape(rows, -1)
    if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= plane):
        bad = int(flat.max()) if int(flat.max()) >= plane else int(flat.min())
        raise RuntimeError(f"{op}: Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, sizes + (1,) * (2 - dims)))})")
    xp = namespace(x.data)
    places = (xp.arange(rows)[:, None], flat)
    out = xp.zeros((rows, plane), dtype=x.data.dtype)
    out[places] = x.data.reshape(rows, -1)
    def vjp(grad: np.ndarray) -> np.ndarray:
        return grad.reshape(rows, plane)[places].reshape(x.shape)

    def forward(a: np.ndarray) -> np.ndarray:
        spread = xp.zeros((rows, plane), dtype=a.dtype)
        spread[places] = a.reshape(rows, -1)
        return spread.reshape(*lead, *sizes)

    return record(out.reshape(*lead, *sizes), op, (x,), vjp, saved=(),
                  graph_vjp=_linear_graph_of(op, forward, vjp))


def max_pool2d_with_indices(input: Tensor, kernel_size: Size, stride: Size | None = None,  # noqa: A002
                            padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """`max_pool2d` returning (values, indices) whatever `return_indices` says (PyTorch's alias)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d_with_indices(input: Tensor, kernel_size: Size, stride: Size | None = None,  # noqa: A002
                            padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """`max_pool1d` returning (values, indices) whatever `return_indices` says (PyTorch's alias)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Size | Sequence[int | None],  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """`adaptive_max_pool2d` returning (values, indices) whatever `return_indices` says."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: int,  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """`adaptive_max_pool1d` returning (values, indices) whatever `return_indices` says."""
    return adaptive_max_pool1d(input, output_size, True)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """Interleave the channels (dimension 1) of `groups` groups: (N, g, C/g, *) transposed to
    (N, C/g, g, *), as ShuffleNet does. Gradient: the inverse permutation (a view's)."""
    op = "channel_shuffle"
    if input.ndim <= 2:
        raise RuntimeError(f"{op} expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int | np.integer) or groups <= 0:
        raise RuntimeError(f"{op}: Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"{op}: Number of channels must be divisible by groups. Got {c} channels and "
                           f"{groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


# --- the deprecated resampling names: interpolate under its old names ------------------------------


def upsample(input: Tensor, size: Size | None = None, scale_factor: float | Sequence[float] | None = None,  # noqa: A002
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """`interpolate` under its deprecated name (it warns, as PyTorch does)."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=user_stacklevel())
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Size | None = None,  # noqa: A002
                     scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """`interpolate(mode='nearest')` under its deprecated name (it warns)."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=user_stacklevel())
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Size | None = None,  # noqa: A002
                      scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """`interpolate(mode='bilinear', align_corners=True)` under its deprecated name (it warns)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=user_stacklevel())
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


class LPPool2d(Module):
    """`F.lp_pool2d` as a layer (no parameters)."""

    _pool = staticmethod(lp_pool2d)

    def __init__(self, norm_type: float, kernel_size: Size, stride: Size | None = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(LPPool2d):
    """`F.lp_pool1d` as a layer (no parameters)."""

    _pool = staticmethod(lp_pool1d)


class MaxUnpool2d(Module):
    """`F.max_unpool2d` as a layer: `layer(input, indices, output_size=None)` (no parameters)."""

    _dims = 2
    _unpool = staticmethod(max_unpool2d)

    def __init__(self, kernel_size: Size, stride: Size | None = None, padding: Size = 0) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _ints(kernel_size, self._dims, "kernel_size", name)
        self.stride = self.kernel_size if stride is None else _ints(stride, self._dims, "stride", name)
        self.padding = _ints(padding, self._dims, "padding", name)

    def forward(self, input: Tensor, indices: Tensor,  # noqa: A002
                output_size: Sequence[int] | None = None) -> Tensor:
        return self._unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(MaxUnpool2d):
    """`F.max_unpool1d` as a layer: `layer(input, indices, output_size=None)` (no parameters)."""

    _dims = 1
    _unpool = staticmethod(max_unpool1d)


class ChannelShuffle(Module):
    """`F.channel_shuffle` as a layer (no parameters)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W) input: `Upsample(mode='nearest')`."""

    def __init__(self, size: Size | None = None, scale_factor: float | Sequence[float] | None = None) -> None:
        super().__init__(size, _float_factors(scale_factor), mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) input, corners aligned: `Upsample(mode='bilinear',
    align_corners=True)`."""

    def __init__(self, size: Size | None = None, scale_factor: float | Sequence[float] | None = None) -> None:
        super().__init__(size, _float_factors(scale_factor), mode="bilinear", align_corners=True)


def _float_factors(scale_factor: Any) -> Any:
    """A scale factor as PyTorch's Upsample keeps it: floats (a tuple stays a tuple), or None."""
    if isinstance(scale_factor, tuple):
        return tuple(float(f) for f in scale_factor)
    return float(scale_factor) if scale_factor else None


# --- lazy convolutions: in_channels read from the first input --------------------------------------


class _LazyConvolution(LazyModuleMixin):
    """What the lazy convolutions share: `in_channels` read from the first input (dimension 1, or
    0 unbatched), the layer then built with the options it was given."""

    def _become_lazy(self, out_channels: int, groups: int, bias: bool, options: tuple) -> None:
        if out_channels % groups:
            raise ValueError(f"{type(self).__name__}: out_channels ({out_channels}) must be divisible by "
                             f"groups ({groups})")
        self.out_channels = out_channels
        self._make_lazy(("weight", "bias") if bias else ("weight",), (), options)

    def _inferred_sizes(self, input: Tensor) -> dict[str, int]:  # noqa: A002
        return {"in_channels": input.shape[1] if input.ndim == self._dims + 2 else input.shape[0]}

    def _built_for(self, sizes: dict[str, int]) -> Module:
        return self.cls_to_become(sizes["in_channels"], self.out_channels, *self._lazy_options)


class LazyConv2d(_LazyConvolution, Conv2d):
    """`Conv2d` whose `in_channels` is read from the first input (dimension 1, or 0 unbatched);
    until then `weight` and `bias` are `UninitializedParameter`s. Then it is a `Conv2d`."""

    cls_to_become = Conv2d

    def __init__(self, out_channels: int, kernel_size: Size, stride: Size = 1, padding: Size | str = 0,
                 dilation: Size = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        options = (kernel_size, stride, padding, dilation, groups, bias, padding_mode, device, dtype)
        # Built empty and without a bias: no random numbers drawn before the real ones.
        self.cls_to_become.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                                    padding_mode, device, dtype)
        self._become_lazy(out_channels, groups, bias, options)


class LazyConv1d(LazyConv2d):
    """`Conv1d` whose `in_channels` is read from the first input (dimension 1, or 0 unbatched);
    until then `weight` and `bias` are `UninitializedParameter`s. Then it is a `Conv1d`."""

    cls_to_become = Conv1d
    _dims = 1
    _conv = staticmethod(conv1d)


class LazyConv3d(LazyConv2d):
    """`Conv3d` whose `in_channels` is read from the first input (dimension 1, or 0 unbatched);
    until then `weight` and `bias` are `UninitializedParameter`s. Then it is a `Conv3d`."""

    cls_to_become = Conv3d
    _dims = 3
    _conv = staticmethod(conv3d)


class LazyConvTranspose2d(_LazyConvolution, ConvTranspose2d):
    """`ConvTranspose2d` whose `in_channels` is read from the first input (dimension 1, or 0
    unbatched); until then `weight` and `bias` are `UninitializedParameter`s. Then it is a
    `ConvTranspose2d`."""

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels: int, kernel_size: Size, stride: Size = 1, padding: Size = 0,
                 output_padding: Size = 0, groups: int = 1, bias: bool = True, dilation: Size = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        options = (kernel_size, stride, padding, output_padding, groups, bias, dilation, padding_mode,
                   device, dtype)
        # Built empty and without a bias: no random numbers drawn before the real ones.
        self.cls_to_become.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                                    dilation, padding_mode, device, dtype)
        self._become_lazy(out_channels, groups, bias, options)


class LazyConvTranspose1d(LazyConvTranspose2d):
    """`ConvTranspose1d` whose `in_channels` is read from the first input; until then `weight`
    and `bias` are `UninitializedParameter`s. Then it is a `ConvTranspose1d`."""

    cls_to_become = ConvTranspose1d
    _dims = 1
    _conv = staticmethod(conv_transpose1d)


class LazyConvTranspose3d(LazyConvTranspose2d):
    """`ConvTranspose3d` whose `in_channels` is read from the first input; until then `weight`
    and `bias` are `UninitializedParameter`s. Then it is a `ConvTranspose3d`."""

    cls_to_become = ConvTranspose3d
    _dims = 3
    _conv = staticmethod(conv_transpose3d)


# --- 3-D: the unpooling, power-average and index-returning pools of (N, C, D, H, W) volumes -------


@autocast_op("max_unpool3d")
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Size, stride: Size | None = None,  # noqa: A002
                 padding: Size = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """The inverse of `max_pool3d`: zeros of the unpooled size, with each input value put at its
    index (flat, in its D x H x W volume). Gradient: the output's gradient read back there."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Size, stride: Size | None = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """(sum of x**p over each kd x kh x kw window) ** (1/p), from `avg_pool3d` of x**p times the
    window's size, as `lp_pool2d`. Gradient: through those ops."""
    kernel = _ints(kernel_size, 3, "kernel_size", "lp_pool3d")
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, math.prod(kernel), avg_pool3d,
                    max_pool3d)


def max_pool3d_with_indices(input: Tensor, kernel_size: Size, stride: Size | None = None,  # noqa: A002
                            padding: Size = 0, dilation: Size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """`max_pool3d` returning (values, indices) whatever `return_indices` says (PyTorch's alias)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Size | Sequence[int | None],  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """`adaptive_max_pool3d` returning (values, indices) whatever `return_indices` says."""
    return adaptive_max_pool3d(input, output_size, True)


class LPPool3d(LPPool2d):
    """`F.lp_pool3d` as a layer (no parameters)."""

    _pool = staticmethod(lp_pool3d)


class MaxUnpool3d(MaxUnpool2d):
    """`F.max_unpool3d` as a layer: `layer(input, indices, output_size=None)` (no parameters)."""

    _dims = 3
    _unpool = staticmethod(max_unpool3d)


# --- fractional max pooling: windows at pseudo-random, increasing starts ---------------------------


@autocast_op("fractional_max_pool2d")
def fractional_max_pool2d(input: Tensor, kernel_size: Size, output_size: Size | None = None,  # noqa: A002
                          output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """The largest value of each kh x kw window, the windows starting at Graham's pseudo-random
    increasing positions: along a size-n dimension pooled to m, start i is
    int((i + u) a) - int(u a) with a = (n - k) / (m - 1) and u in [0, 1) (the last start is n - k).

    `_random_samples` (N, C, 2) holds u per plane (width's, then height's); drawn from tensorgrad's
    generator when not given. `output_ratio` r gives the size int(n r). With `return_indices`, also
    each maximum's flat index in its H x W plane. Gradient: to that element, through `gather`.
    """
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 2, "fractional_max_pool2d")


@autocast_op("fractional_max_pool3d")
def fractional_max_pool3d(input: Tensor, kernel_size: Size, output_size: Size | None = None,  # noqa: A002
                          output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """`fractional_max_pool2d` over kd x kh x kw windows of (N, C, D, H, W) or (C, D, H, W) input;
    `_random_samples` (N, C, 3) holds u per volume (depth's, height's, width's)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 3, "fractional_max_pool3d")


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Size, output_size: Size | None = None,  # noqa: A002
                                       output_ratio: float | Sequence[float] | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """`fractional_max_pool2d` returning (values, indices) whatever `return_indices` says."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Size, output_size: Size | None = None,  # noqa: A002
                                       output_ratio: float | Sequence[float] | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """`fractional_max_pool3d` returning (values, indices) whatever `return_indices` says."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)


_SPATIAL_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_max_pool(input: Tensor, kernel_size: Size, output_size: Any, output_ratio: Any,  # noqa: A002
                         return_indices: bool, samples: Tensor | None, dims: int, op: str) -> Any:
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{op}: expected a {dims + 1}-D or {dims + 2}-D input, got shape "
                           f"{tuple(input.shape)}")
    _check_float(op, input)
    x = input if input.ndim == dims + 2 else input.unsqueeze(0)
    n, c, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
    kernel = _ints(kernel_size, dims, "kernel_size", op)
    if output_size is None:
        ratios = tuple(output_ratio) if isinstance(output_ratio, Sequence) else (output_ratio,) * dims
        output_size = tuple(int(size * r) for size, r in zip(sizes, ratios, strict=True))
    outs = _ints(output_size, dims, "output_size", op)
    for name, size, k, o in zip(_SPATIAL_NAMES[dims], sizes, kernel, outs, strict=True):
        if o + k - 1 > size:
            raise RuntimeError(f"{op}(): pool {name} {k} too large relative to input {name} {size} "
                               f"(output {name} {o})")
    xp = namespace(x.data)
    if samples is None:
        u = array_like(creation.rand(n, c, dims, dtype=x.dtype, device="cpu").data, x.data)
    else:
        if tuple(samples.shape) != (n, c, dims):
            raise RuntimeError(f"{op}: expected _random_samples of shape {(n, c, dims)}, got "
                               f"{tuple(samples.shape)}")
        if samples.dtype != x.dtype:
            raise RuntimeError(f"{op}: Expect _random_samples to have the same dtype as input, got "
                               f"{samples.dtype} for an input of {x.dtype}")
        u = samples.data
    # PyTorch's samples run (width, height) in 2-D and (time, height, width) in 3-D.
    order = (1, 0) if dims == 2 else (0, 1, 2)
    steps = [math.prod(sizes[d + 1:]) for d in range(dims)]  # a flat index's step per dimension
    index = xp.zeros((n, c, *outs, *kernel), dtype=np.int64)
    for d in range(dims):
        starts = _fractional_starts(u[:, :, order[d]], sizes[d], outs[d], kernel[d], x.dtype)
        starts = starts.reshape(n, c, *(o if e == d else 1 for e, o in enumerate(outs)), *(1,) * dims)
        offsets = xp.arange(kernel[d]).reshape(*(k if e == d else 1 for e, k in enumerate(kernel)))
        index = index + (starts + offsets) * steps[d]
    flat = index.reshape(n, c, math.prod(outs), math.prod(kernel))
    # (sizes named, not -1: an empty batch has no size to infer them from)
    taken = flat.reshape(n, c, flat.shape[2] * flat.shape[3])
    values = xp.take_along_axis(x.data.reshape(n, c, math.prod(sizes)), taken, axis=2).reshape(flat.shape)
    # the first largest value; a NaN wins, the last NaN of a window as in PyTorch
    nan = xp.isnan(values)
    last_nan = flat.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1)
    pick = xp.where(nan.any(axis=-1), last_nan, values.argmax(axis=-1))
    chosen = xp.take_along_axis(flat, pick[..., None], axis=-1)[..., 0]
    out = x.reshape(n, c, math.prod(sizes)).gather(2, new_leaf(chosen)).reshape(n, c, *outs)
    indices = new_leaf(chosen.reshape(n, c, *outs))
    if input.ndim == dims + 1:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def _fractional_starts(u: Any, size: int, out: int, kernel: int, dtype: np.dtype) -> Any:
    """Each window's start along one dimension, per plane: (N, C, out) int64, PyTorch's
    `generate_intervals` computed in the input's dtype as it does."""
    xp = namespace(u)
    if out == 1:
        return xp.full((*u.shape, 1), size - kernel, dtype=np.int64)
    alpha = np.dtype(dtype).type(size - kernel) / np.dtype(dtype).type(out - 1)
    steps = xp.arange(out - 1, dtype=dtype)
    starts = ((steps + u[..., None]) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)[..., None]
    last = xp.full((*u.shape, 1), size - kernel, dtype=np.int64)
    return xp.concatenate((starts, last), axis=-1)


class FractionalMaxPool2d(Module):
    """`F.fractional_max_pool2d` as a layer; `_random_samples`, if given, is a buffer."""

    _dims = 2
    _pool = staticmethod(fractional_max_pool2d)

    def __init__(self, kernel_size: Size, output_size: Size | None = None,
                 output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
                 _random_samples: Tensor | None = None) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size, self.return_indices = kernel_size, return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = output_size
        self.output_ratio = (output_ratio if output_ratio is None or isinstance(output_ratio, Sequence)
                             else (output_ratio,) * self._dims)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return self._pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                          _random_samples=self._random_samples)


class FractionalMaxPool3d(FractionalMaxPool2d):
    """`F.fractional_max_pool3d` as a layer; `_random_samples`, if given, is a buffer."""

    _dims = 3
    _pool = staticmethod(fractional_max_pool3d)
