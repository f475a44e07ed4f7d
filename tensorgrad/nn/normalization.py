"""Normalisation: layer_norm, batch_norm, group_norm, normalize, cosine_similarity (tutorial chapter 11).

The three norms share one idea: standardise x over some axes, x_hat = (x - mean) / sqrt(var + eps)
(biased variance), then scale and shift per feature, out = x_hat * weight + bias. They differ
only in the axes: the last dimensions (layer_norm), every dimension but the channels
(batch_norm), the channels of a group and the positions (group_norm).

Each is one op, so the backward is the formula makemore derives by hand for BatchNorm instead
of a chain of a dozen small nodes. With g = grad * weight and means over the normalised axes:

    dx = (g - mean(g) - x_hat * mean(g * x_hat)) / sqrt(var + eps)
    dweight = sum(grad * x_hat),  dbias = sum(grad)   (sums over everything but the feature)

`BatchNorm1d/2d` keep running statistics as registered buffers (`running_mean`, `running_var`,
`num_batches_tracked`, PyTorch's state_dict keys): training mode normalises with the batch's
statistics and updates the running ones; eval mode normalises with the running ones.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from scalargrad.engine import is_grad_enabled, no_grad
from tensorgrad import autograd, dtypes
from tensorgrad import out as out_keyword
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import bump_version, record
from tensorgrad.checks import UnsupportedDtypeError
from tensorgrad.dtypes import float16, int64
from tensorgrad.nn.modules import LazyModuleMixin, Module, Parameter, _place
from tensorgrad.tensor import Tensor, new_leaf

__all__ = [
    "layer_norm", "batch_norm", "group_norm", "normalize", "cosine_similarity", "pairwise_distance",
    "rms_norm", "instance_norm",
    "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "CosineSimilarity", "PairwiseDistance",
    "RMSNorm", "InstanceNorm1d", "InstanceNorm2d", "BatchNorm3d", "InstanceNorm3d",
    "local_response_norm", "LocalResponseNorm", "CrossMapLRN2d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]


# --- the shared arithmetic ----------------------------------------------------------------------


def _mean(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The mean over `axes`, kept as size 1 (np.add.reduce: ndarray.mean's result, without its overhead)."""
    # (float16 adds in float32, as PyTorch's: NumPy's float16 sum along a strided axis stalls at 4096)
    total = np.add.reduce(a, axis=axes, keepdims=True, dtype=np.float32 if a.dtype is float16 else None)
    return total / max(a.size // total.size if total.size else 1, 1)  # (an empty batch: nothing to divide)


def _standardize(x: np.ndarray, axes: tuple[int, ...],
                 eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """x_hat = (x - mean) / sqrt(var + eps) over `axes` (biased variance); also 1 / sqrt(var + eps),
    the mean and the variance (each with the reduced axes kept as size 1)."""
    mean = _mean(x, axes)
    centered = x - mean
    var = _mean(centered * centered, axes)
    rstd = 1 / np.sqrt(var + eps)
    return centered * rstd, rstd, mean, var


def _standardize_vjp(g: np.ndarray, x_hat: np.ndarray, rstd: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The gradient through x_hat = (x - mean) * rstd, mean and rstd computed from x over `axes`.

    g is the gradient at x_hat. The mean's gradient takes out mean(g); the variance's takes out
    x_hat * mean(g * x_hat).
    """
    if not g.dtype == x_hat.dtype == rstd.dtype:  # (float16 statistics kept in float32: promote)
        return rstd * (g - _mean(g, axes) - x_hat * _mean(g * x_hat, axes))
    # The same steps in place, two arrays fewer (see activation._gelu_tanh for what that saves).
    through_var = g * x_hat
    np.multiply(x_hat, _mean(through_var, axes), out=through_var)
    out = g - _mean(g, axes)
    out -= through_var
    out *= rstd
    return out


def _affine_node(op: str, x: Tensor, out: np.ndarray, vjp_x: Callable, x_hat: np.ndarray,
                 weight: Tensor | None, bias: Tensor | None, summed: tuple[int, ...],
                 layout: _Layout) -> Tensor:
    """The graph node of out = x_hat * weight + bias: x's VJP given, the weight's and bias's here.

    `summed` are the axes of `out` that a weight element is applied over (all but the features);
    `layout` says how x_hat was made, for the graph VJP.
    """
    inputs, vjps = [x], [vjp_x]
    if weight is not None:
        inputs.append(weight)
        vjps.append(lambda grad: autograd.summed(grad * x_hat, summed).reshape(weight.shape))
    if bias is not None:
        inputs.append(bias)
        vjps.append(lambda grad: autograd.summed(grad, summed).reshape(bias.shape))
    return record(out, op, tuple(inputs), *vjps, saved=() if weight is None else (weight,),
                  graph_vjp=partial(_norm_graph, layout._replace(summed=summed, weighted=weight is not None,
                                                                 biased=bias is not None)))


class _Layout(NamedTuple):
    """How a norm standardises x, for its graph VJP: over `axes` of x reshaped to `grouped` (None:
    as it is), with the batch's statistics or, when `constants` holds them, (mean, 1 / std) arrays;
    weight and bias reshaped to `view`."""
    axes: tuple[int, ...]
    grouped: tuple[int, ...] | None
    view: tuple[int, ...]
    eps: float
    constants: tuple[np.ndarray, np.ndarray] | None = None
    summed: tuple[int, ...] = ()
    weighted: bool = False
    biased: bool = False


def _norm_graph(layout: _Layout, grad: Tensor, out: Tensor, x: Tensor, *params: Tensor) -> tuple[Tensor, ...]:
    """The norms' gradients (the module docstring's formulas) with tensor ops, x_hat recomputed from x."""
    axes, grouped, view = layout.axes, layout.grouped, layout.view
    xg = x if grouped is None else x.reshape(grouped)
    if layout.constants is None:
        centered = xg - xg.mean(axes, keepdim=True)
        rstd = ((centered * centered).mean(axes, keepdim=True) + layout.eps).rsqrt()
    else:
        centered, rstd = xg - new_leaf(layout.constants[0]), new_leaf(layout.constants[1])
    x_hat = centered * rstd
    g = grad if not layout.weighted else grad * params[0].reshape(view)
    g = g if grouped is None else g.reshape(grouped)
    if layout.constants is None:
        g = g - g.mean(axes, keepdim=True) - x_hat * (g * x_hat).mean(axes, keepdim=True)
    grads = [(rstd * g).reshape(x.shape)]
    if layout.weighted:
        grads.append(_summed(grad * x_hat.reshape(x.shape), layout.summed).reshape(params[0].shape))
    if layout.biased:
        grads.append(_summed(grad, layout.summed).reshape(params[-1].shape))
    return tuple(grads)


def _summed(t: Tensor, axes: tuple[int, ...]) -> Tensor:
    return t.sum(axes) if axes else t


def _scale_shift(x_hat: np.ndarray, weight: Tensor | None, bias: Tensor | None,
                 shape: tuple[int, ...]) -> np.ndarray:
    """x_hat * weight + bias, with weight and bias reshaped to `shape` to broadcast over x_hat."""
    out = x_hat if weight is None else x_hat * weight.data.reshape(shape)
    return out if bias is None else out + bias.data.reshape(shape)


def _floating_input(x: Any, op: str, complex_ok: bool = False) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    if x.data.dtype.kind != "f" and not (complex_ok and x.data.dtype.kind == "c"):
        raise UnsupportedDtypeError(f"{op}: expected a floating point input, got dtype {x.dtype}")
    return x


def _check_mixed_dtypes(x: Tensor, *params: Tensor | None) -> None:
    """PyTorch's CPU rule for layer_norm's and group_norm's dtypes: a float16 input may take
    float32 weight and bias (the output is float16: a float32 model under autocast normalises
    float16 activations so); otherwise all must share the input's dtype."""
    for param in params:
        if param is None or param.dtype == x.dtype:
            continue
        if param.dtype != np.float32:
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if x.dtype != np.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _check_param(op: str, name: str, param: Tensor | None, shape: tuple[int, ...],
                 input_shape: tuple[int, ...]) -> None:
    if param is not None and tuple(param.shape) != shape:
        raise RuntimeError(f"{op}: expected {name} of shape {shape} for an input of shape {input_shape}, "
                           f"got {tuple(param.shape)}")


# --- layer_norm ---------------------------------------------------------------------------------


@autocast_op("layer_norm")
def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias, mean and var over the last len(normalized_shape) dims.

    Derivative: see the module docstring; weight and bias have shape `normalized_shape`.
    """
    x = _floating_input(input, "layer_norm")
    if not isinstance(normalized_shape, Sequence) or not all(isinstance(n, int | np.integer)
                                                             for n in normalized_shape):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' must be a tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    shape = tuple(int(n) for n in normalized_shape)
    k = len(shape)
    if k == 0 or x.shape[x.ndim - k:] != shape or x.ndim < k:
        raise RuntimeError(f"layer_norm: given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size {list(x.shape)}")
    _check_param("layer_norm", "weight", weight, shape, x.shape)
    _check_param("layer_norm", "bias", bias, shape, x.shape)
    _check_mixed_dtypes(x, weight, bias)
    axes = tuple(range(x.ndim - k, x.ndim))
    x_hat, rstd, _, _ = _standardize(x.data, axes, eps)
    out = _scale_shift(x_hat, weight, bias, shape).astype(x.dtype, copy=False)

    def vjp_x(grad: np.ndarray) -> np.ndarray:
        return _standardize_vjp(grad if weight is None else grad * weight.data, x_hat, rstd, axes)

    return _affine_node("layer_norm", x, out, vjp_x, x_hat, weight, bias, tuple(range(x.ndim - k)),
                        _Layout(axes, None, shape, eps))


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight, the mean over the last len(normalized_shape) dims (no
    centring, no bias: LLaMA's norm). eps defaults to the machine epsilon of the dtype computed in,
    as PyTorch's. A float16 input is computed in float32 and rounded before the weight (PyTorch's
    opmath: its squares would overflow); a complex one squares without conjugating, as PyTorch's.
    Gradient: through the composed ops."""
    x = _floating_input(input, "rms_norm", complex_ok=True)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or x.ndim < k or x.shape[x.ndim - k:] != shape:
        raise RuntimeError(f"rms_norm: given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size {list(x.shape)}")
    _check_param("rms_norm", "weight", weight, shape, x.shape)
    wide = x.to(np.float32) if x.dtype == np.float16 else x
    eps = float(np.finfo(wide.data.dtype).eps) if eps is None else eps
    axes = tuple(range(x.ndim - k, x.ndim))
    out = (wide * ((wide * wide).mean(axes, keepdim=True) + eps).rsqrt()).to(x.dtype)
    return out if weight is None else out * weight


# --- batch_norm ---------------------------------------------------------------------------------


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Per channel (dim 1): (x - mean) / sqrt(var + eps) * weight + bias.

    training=True: mean and var of the batch (over every dim but 1), and the running statistics
    given are updated in place: running = (1 - momentum) * running + momentum * batch, with the
    unbiased batch variance for `running_var`, as in PyTorch. training=False: the running
    statistics are the mean and var, constants for the gradient (dx = grad * weight / sqrt(var + eps)).
    """
    x = _floating_input(input, "batch_norm")
    if x.ndim < 2 and x.data.size == 0:  # PyTorch gives an empty input back without its checks
        return x.clone()
    if x.ndim < 2:  # PyTorch's exception: its running_mean size check, else a dim out of range
        error = IndexError if running_mean is None and running_var is None else RuntimeError
        raise error(f"batch_norm: expected an input of at least 2 dimensions (N, C, ...), got shape "
                    f"{x.shape}")
    if not isinstance(momentum, numbers.Real):  # the functional form has no cumulative average (None)
        raise TypeError(f"batch_norm(): argument 'momentum' must be float, not {type(momentum).__name__}")
    channels = x.shape[1]
    for name, tensor in (("running_mean", running_mean), ("running_var", running_var),
                         ("weight", weight), ("bias", bias)):
        _check_param("batch_norm", name, tensor, (channels,), x.shape)
    for name, tensor in (("running_mean", running_mean), ("running_var", running_var),
                         ("weight", weight), ("bias", bias)):
        half_with_float32 = x.dtype == np.float16 and tensor is not None and tensor.dtype == np.float32
        if tensor is not None and tensor.dtype != x.dtype and not half_with_float32:
            raise RuntimeError(f"batch_norm: mixed dtype: expected {name} to have the input's dtype "
                               f"{x.dtype} (or float32 for a half input), got {tensor.dtype}")
    for name, tensor in (("running_mean", running_mean), ("running_var", running_var)):
        if tensor is not None and tensor.requires_grad and is_grad_enabled():
            raise RuntimeError(f"batch_norm is not differentiable with respect to {name}: it can't have "
                               "requires_grad=True")
    axes = (0, *range(2, x.ndim))
    view = (1, channels) + (1,) * (x.ndim - 2)  # a per-channel vector, broadcast over x
    if training:
        x_hat, vjp_x = _batch_statistics(x, axes, eps, weight, view, running_mean, running_var, momentum)
        layout = _Layout(axes, None, view, eps)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var must be given when training=False")
        rstd = 1 / np.sqrt(running_var.data.reshape(view) + eps)
        x_hat = (x.data - running_mean.data.reshape(view)) * rstd
        scale = rstd if weight is None else rstd * weight.data.reshape(view)
        vjp_x = lambda grad: grad * scale  # the statistics are constants here
        layout = _Layout(axes, None, view, eps, (running_mean.data.reshape(view), rstd))
    out = _scale_shift(x_hat, weight, bias, view).astype(x.data.dtype, copy=False)
    return _affine_node("batch_norm", x, out, vjp_x, x_hat, weight, bias, axes, layout)


def _batch_statistics(x: Tensor, axes: tuple[int, ...], eps: float, weight: Tensor | None,
                      view: tuple[int, ...], running_mean: Tensor | None, running_var: Tensor | None,
                      momentum: float) -> tuple[np.ndarray, Callable]:
    """x_hat from the batch's own statistics and the gradient through them; updates the running ones."""
    count = x.data.size // x.shape[1] if x.shape[1] else math.prod(x.shape[:1] + x.shape[2:])
    if count == 1:  # (an empty batch passes, as in PyTorch, and leaves the running statistics alone)
        raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got input "
                         f"of shape {x.shape}")
    x_hat, rstd, mean, var = _standardize(x.data, axes, eps)
    # The running variance takes the unbiased batch variance (divided by n - 1), as in PyTorch.
    if count:
        _update_running(running_mean, mean.reshape(-1), momentum)
        _update_running(running_var, var.reshape(-1) * (count / (count - 1)), momentum)

    def vjp_x(grad: np.ndarray) -> np.ndarray:
        g = grad if weight is None else grad * weight.data.reshape(view)
        return _standardize_vjp(g, x_hat, rstd, axes)

    return x_hat, vjp_x


def _update_running(running: Tensor | None, batch_value: np.ndarray, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * batch_value, in place (outside the graph)."""
    if running is not None:
        running.data[...] = (1 - momentum) * running.data + momentum * batch_value
        bump_version(running)


# --- group_norm ---------------------------------------------------------------------------------


@autocast_op("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Split the C channels into `num_groups` groups; standardise each sample's group over its
    channels and positions; then weight and bias per channel. Derivative: as layer_norm's, per group."""
    x = _floating_input(input, "group_norm")
    if x.ndim < 2:
        raise RuntimeError(f"group_norm: expected an input of at least 2 dimensions (N, C, ...), "
                           f"got shape {x.shape}")
    n, channels = x.shape[0], x.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(f"group_norm: expected the number of channels of the input to be divisible by "
                           f"num_groups, but got input of shape {x.shape} and num_groups={num_groups}")
    _check_param("group_norm", "weight", weight, (channels,), x.shape)
    _check_param("group_norm", "bias", bias, (channels,), x.shape)
    _check_mixed_dtypes(x, weight, bias)
    # each group's channels and positions on one axis (spelled out: -1 can't be inferred when n = 0)
    grouped = (n, num_groups, channels // num_groups * math.prod(x.shape[2:]))
    x_hat_grouped, rstd, _, _ = _standardize(x.data.reshape(grouped), (2,), eps)
    x_hat = x_hat_grouped.reshape(x.shape)
    view = (1, channels) + (1,) * (x.ndim - 2)
    out = _scale_shift(x_hat, weight, bias, view).astype(x.dtype, copy=False)

    def vjp_x(grad: np.ndarray) -> np.ndarray:
        g = grad if weight is None else grad * weight.data.reshape(view)
        return _standardize_vjp(g.reshape(grouped), x_hat_grouped, rstd, (2,)).reshape(x.shape)

    return _affine_node("group_norm", x, out, vjp_x, x_hat, weight, bias, (0, *range(2, x.ndim)),
                        _Layout((2,), grouped, view, eps))


# --- normalize and cosine_similarity --------------------------------------------------------------


def _vector_norm(x: np.ndarray, p: float, axis: int) -> tuple[np.ndarray, Callable[[], np.ndarray]]:
    """The p-norm over `axis` (kept), and a function giving its derivative d norm / d x.

    The derivative is sign(x) |x|**(p-1) / norm**(p-1) (for p = inf: the largest |x|, split
    evenly among ties), and 0 where the norm is 0, as in PyTorch.
    """
    a = np.abs(x)
    if p == 0:  # the number of nonzero entries: a step function, derivative 0
        norm = (a != 0).sum(axis=axis, keepdims=True).astype(x.dtype)
        return norm, lambda: np.zeros_like(x)
    if abs(p) == math.inf:  # the largest (p = inf) or smallest (p = -inf) |x|
        norm = a.max(axis=axis, keepdims=True) if p > 0 else a.min(axis=axis, keepdims=True)

        def derivative() -> np.ndarray:
            winners = (a == norm) & (norm > 0)
            return np.sign(x) * winners / np.maximum(winners.sum(axis=axis, keepdims=True), 1)
    else:
        with np.errstate(divide="ignore"):  # p < 0: a zero entry makes the norm 0, as in PyTorch
            norm = (a ** p).sum(axis=axis, keepdims=True) ** (1 / p)

        def derivative() -> np.ndarray:
            with np.errstate(divide="ignore", invalid="ignore"):
                d = np.sign(x) * (a / norm) ** (p - 1)
            return np.where(norm > 0, d, 0)
    return norm, derivative


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    """x / max(||x||_p, eps) over `dim`. Derivative: grad / d - x * sum(grad * x) / d**2 * d||x||/dx,
    with d = max(||x||_p, eps) and the second term only where ||x||_p >= eps (clamp's gradient).

    With `out`, the result is written into that tensor instead (no gradient, as in PyTorch). A
    complex x is divided by its (real) norm, through tensor ops, as PyTorch's composite does."""
    x = _floating_input(input, "normalize", complex_ok=True)  # any p, as PyTorch: 0 counts, negative p, -inf
    axis = _dim(dim, x.ndim, "normalize")
    if x.data.dtype.kind == "c":
        result = x / x.norm(p, dim=axis, keepdim=True).clamp_min(eps)
        return result if out is None else _write_normalized(out, x, result)
    norm, norm_derivative = _vector_norm(x.data, p, axis)
    denominator = np.maximum(norm, eps)
    if out is not None:
        return _write_normalized(out, x, new_leaf(x.data / denominator))

    def vjp(grad: np.ndarray) -> np.ndarray:
        through_norm = -(grad * x.data).sum(axis=axis, keepdims=True) / (denominator * denominator)
        return grad / denominator + np.where(norm >= eps, through_norm, 0) * norm_derivative()

    graph = partial(_normalize_graph, axis, eps) if p == 2 else partial(_normalize_p_graph, p, axis, eps)
    return record(x.data / denominator, "normalize", (x,), vjp, graph_vjp=graph)


def _normalize_graph(axis: int, eps: float, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """normalize's VJP for p = 2 with tensor ops: grad / d - x * sum(grad * x) / d**3 where the
    norm is at least eps (then d = norm), with d = max(norm, eps)."""
    norm = (x * x).sum(axis, keepdim=True).sqrt()
    big = new_leaf(norm.data >= eps)
    d = norm * big + new_leaf(np.where(big.data, 0, eps).astype(x.data.dtype))  # max(norm, eps)
    return (grad / d - x * ((grad * x).sum(axis, keepdim=True) * big / (d * d * d)),)


def _normalize_p_graph(p: float, axis: int, eps: float, grad: Tensor, out: Tensor,
                       x: Tensor) -> tuple[Tensor]:
    """normalize's VJP for p != 2 with tensor ops: grad / d - x * sum(grad * x) / d**2 * d||x||/dx
    (`_vector_norm`'s derivative: sign(x) (|x| / norm)**(p-1), or the largest |x| shared among
    ties for p = inf, 0 where the norm is 0)."""
    a = x.abs()
    if p == 0:  # the count of nonzero entries: a constant of the graph
        norm = new_leaf((a.data != 0).sum(axis=axis, keepdims=True).astype(x.data.dtype))
        slope = new_leaf(np.zeros_like(x.data))
    elif abs(p) == math.inf:
        norm = a.amax(axis, keepdim=True) if p > 0 else a.amin(axis, keepdim=True)
        winners = (a.data == norm.data) & (norm.data > 0)
        shares = winners / np.maximum(winners.sum(axis=axis, keepdims=True), 1)
        slope = x.sign() * new_leaf(shares.astype(x.data.dtype))
    else:
        norm = (a ** p).sum(axis, keepdim=True) ** (1 / p)
        positive = new_leaf(norm.data > 0)
        safe = norm * positive + new_leaf(np.where(positive.data, 0, 1).astype(x.data.dtype))
        slope = x.sign() * (a / safe) ** (p - 1) * positive
    big = new_leaf(norm.data >= eps)
    d = norm * big + new_leaf(np.where(big.data, 0, eps).astype(x.data.dtype))  # max(norm, eps)
    return (grad / d - (grad * x).sum(axis, keepdim=True) * big / (d * d) * slope,)


def _write_normalized(out: Tensor, x: Tensor, result: Tensor) -> Tensor:
    """PyTorch's `out=` of normalize, which is that of the `div` it ends with: cast to out's dtype,
    resized to the result's shape, and no gradient."""
    out_keyword.check_no_grad("div", out, (x,))
    return out_keyword.write("div", out, result, "cast", (x,))


@autocast_op("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) over `dim`, x1 and x2 broadcast together.

    Derivative: d/dx1 = u2 / d1 - out * x1 / (d1 * ||x1||), u = x / d, d = max(||x||, eps); the
    twin for x2. Like PyTorch, the second term is kept where a norm is below eps (its clamp is
    applied outside the graph there).
    """
    x1, x2 = _floating_input(x1, "cosine_similarity"), _floating_input(x2, "cosine_similarity")
    try:
        shape = np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise RuntimeError(f"cosine_similarity: shapes {x1.shape} and {x2.shape} can't be broadcast "
                           "together") from None
    axis = _dim(dim, len(shape), "cosine_similarity")
    a, b = np.broadcast_to(x1.data, shape), np.broadcast_to(x2.data, shape)
    norm_a = np.sqrt((a * a).sum(axis=axis, keepdims=True))
    norm_b = np.sqrt((b * b).sum(axis=axis, keepdims=True))
    d_a, d_b = np.maximum(norm_a, eps), np.maximum(norm_b, eps)
    u_a, u_b = a / d_a, b / d_b
    similarity = (u_a * u_b).sum(axis=axis, keepdims=True)

    def vjp(grad: np.ndarray, x: np.ndarray, d: np.ndarray, norm: np.ndarray,
            u_other: np.ndarray) -> np.ndarray:
        g = np.expand_dims(grad, axis)
        with np.errstate(divide="ignore", invalid="ignore"):
            direction = np.where(norm > 0, x / norm, 0)
        return g * (u_other / d - similarity / d * direction)

    return record(np.squeeze(similarity, axis), "cosine_similarity", (x1, x2),
                  lambda grad: vjp(grad, a, d_a, norm_a, u_b),
                  lambda grad: vjp(grad, b, d_b, norm_b, u_a),
                  graph_vjp=partial(_cosine_similarity_graph, shape, axis, eps))


def _cosine_similarity_graph(shape: tuple[int, ...], axis: int, eps: float, grad: Tensor, out: Tensor,
                             x1: Tensor, x2: Tensor) -> tuple[Tensor, Tensor]:
    """The VJP above with tensor ops. As in PyTorch, max(norm, eps) is the norm plus a constant: its
    gradient is the norm's."""
    a, b = x1.broadcast_to(shape), x2.broadcast_to(shape)
    norm_a, norm_b = (a * a).sum(axis, keepdim=True).sqrt(), (b * b).sum(axis, keepdim=True).sqrt()
    d_a = norm_a + new_leaf(np.maximum(norm_a.data, eps) - norm_a.data)
    d_b = norm_b + new_leaf(np.maximum(norm_b.data, eps) - norm_b.data)
    u_a, u_b = a / d_a, b / d_b
    similarity = (u_a * u_b).sum(axis, keepdim=True)
    g = grad.unsqueeze(axis)
    # x / norm, 0 where the norm is 0 (x is 0 there)
    direction_a = a / (norm_a + new_leaf((norm_a.data == 0).astype(a.data.dtype)))
    direction_b = b / (norm_b + new_leaf((norm_b.data == 0).astype(b.data.dtype)))
    return (g * (u_b / d_a - similarity / d_a * direction_a),
            g * (u_a / d_b - similarity / d_b * direction_b))


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dimension, x1 and x2 broadcast together.
    Gradient: the norm's, through the difference. Complex inputs give the (real) norm of their
    complex difference, as PyTorch's. Integer inputs give float32, as PyTorch's (x1 - x2 is taken
    in their dtype, so uint8 wraps around)."""
    for x in (x1, x2):
        if not isinstance(x, Tensor):
            raise TypeError(f"pairwise_distance(): argument must be a Tensor, not {type(x).__name__}")
    return (x1 - x2 + eps).norm(p, dim=-1, keepdim=keepdim)


class CosineSimilarity(Module):
    """`F.cosine_similarity(x1, x2, dim, eps)` as a layer."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """`F.pairwise_distance(x1, x2, p, eps, keepdim)` as a layer."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


def _dim(dim: int, ndim: int, op: str) -> int:
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"{op}: dimension {dim} is out of range for a tensor with {ndim} dimensions")
    return dim % max(ndim, 1)


# --- modules ------------------------------------------------------------------------------------


def _param_dtype(dtype: Any) -> np.dtype:
    """The dtype of a module's parameters (float32 by default)."""
    return dtypes.or_default(dtype)


def _affine_parameters(module: Module, shape: tuple[int, ...], affine: bool, bias: bool,
                       dtype: np.dtype) -> None:
    """Register `weight` (ones) and `bias` (zeros) of `shape`, or None for those left out."""
    module.register_parameter("weight", Parameter(np.ones(shape, dtype)) if affine else None)
    module.register_parameter("bias", Parameter(np.zeros(shape, dtype)) if affine and bias else None)


def _reset_affine(module: Module) -> None:
    """weight 1 and bias 0, in place, for those the module has."""
    for name, value in (("weight", 1), ("bias", 0)):
        param = module._parameters[name]
        if param is not None:
            param.data[...] = value
            bump_version(param)


def _keep_num_batches_tracked(module: Module, state_dict: dict, prefix: str, *_: Any) -> None:
    """A state dict without `num_batches_tracked` (one saved before PyTorch had it) keeps the
    module's own count rather than reporting it missing, as PyTorch loads such a dict."""
    key = prefix + "num_batches_tracked"
    if key not in state_dict and module.num_batches_tracked is not None:
        state_dict[key] = module.num_batches_tracked.data.copy()


class _BatchNorm(Module):
    """BatchNorm's state and forward; the subclasses only say which input shapes they take."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = _param_dtype(dtype)
        _affine_parameters(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", new_leaf(np.zeros(num_features, dtype)))
            self.register_buffer("running_var", new_leaf(np.ones(num_features, dtype)))
            self.register_buffer("num_batches_tracked", new_leaf(np.array(0, int64)))
            self.register_load_state_dict_pre_hook(_keep_num_batches_tracked)
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        _place(self, device)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            self.running_mean.data[...] = 0
            self.running_var.data[...] = 1
            self.num_batches_tracked.data[...] = 0

    def reset_parameters(self) -> None:
        """The running statistics reset, weight 1 and bias 0."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, x: Tensor) -> None:
        """Raise unless x has the ranks this norm takes; each subclass says which (PyTorch's
        `_NormBase` leaves it to them too)."""
        raise NotImplementedError(f"{type(self).__name__} must define _check_input_dim")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        self._check_input_dim(input)
        # The registries, read once: each registered name read as an attribute is a lookup.
        buffers, params = self._buffers, self._parameters
        running_mean, running_var = buffers["running_mean"], buffers["running_var"]
        # PyTorch's rule: momentum=None averages over all batches seen (a cumulative mean).
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            count = buffers["num_batches_tracked"].add_(1)
            if self.momentum is None:
                factor = 1.0 / float(count.item())
        # Batch statistics in training, and in eval too when there are no running statistics.
        use_batch = self.training or running_mean is None
        keep = not self.training or self.track_running_stats
        return batch_norm(input, running_mean if keep else None, running_var if keep else None,
                          params["weight"], params["bias"], use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs over N (and L), per channel C.

    Buffers `running_mean`, `running_var`, `num_batches_tracked`; eval mode uses the running ones.
    """

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim not in (2, 3):
            raise ValueError(f"BatchNorm1d: expected 2D or 3D input (got {x.ndim}D input of shape {x.shape})")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs over N, H and W, per channel C.

    Buffers `running_mean`, `running_var`, `num_batches_tracked`; eval mode uses the running ones.
    """

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim != 4:
            raise ValueError(f"BatchNorm2d: expected 4D input (got {x.ndim}D input of shape {x.shape})")


def instance_norm(input: Tensor, running_mean: Tensor | None = None,  # noqa: A002
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Each sample's channel standardised over its positions (N, C, *), then weight and bias
    per channel. As PyTorch computes it: `batch_norm` on the input seen as (1, N * C, *), so
    running statistics given are updated with the mean over the batch of each sample's own."""
    x = _floating_input(input, "instance_norm")
    if x.ndim < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dimensions (N, C, ...), "
                         f"got shape {x.shape}")
    n, c = x.shape[:2]

    def per_instance(t: Tensor | None) -> Tensor | None:
        """A per-channel tensor repeated for each sample: one value per (sample, channel)."""
        return None if t is None else t.repeat(n)

    stats = (per_instance(running_mean), per_instance(running_var))
    out = batch_norm(x.reshape(1, n * c, *x.shape[2:]), *stats, per_instance(weight), per_instance(bias),
                     training=use_input_stats, momentum=momentum, eps=eps)
    if use_input_stats:
        with no_grad():
            for running, repeated in zip((running_mean, running_var), stats, strict=True):
                if running is not None:
                    running.copy_(repeated.reshape(n, c).mean(0))
    return out.reshape(x.shape)


class _InstanceNorm(_BatchNorm):
    """InstanceNorm's state (PyTorch's: no affine parameters and no running statistics by
    default) and forward; the subclasses say which input shapes they take."""

    _batched_ndim = 3

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        unbatched = input.ndim == self._batched_ndim - 1
        if input.ndim not in (self._batched_ndim - 1, self._batched_ndim):
            raise ValueError(f"{type(self).__name__}: expected {self._batched_ndim - 1}D or "
                             f"{self._batched_ndim}D input (got {input.ndim}D input of shape {input.shape})")
        x = input.unsqueeze(0) if unbatched else input
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) inputs: each sample's channel over L."""


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) inputs: each sample's channel over H, W."""

    _batched_ndim = 4


# --- 3-D: normalisation of (N, C, D, H, W) volumes -------------------------------------------------


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs over N, D, H and W, per channel C.

    Buffers `running_mean`, `running_var`, `num_batches_tracked`; eval mode uses the running ones.
    """

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim != 5:
            raise ValueError(f"BatchNorm3d: expected 5D input (got {x.ndim}D input of shape {x.shape})")


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) inputs: each sample's channel over
    D, H, W."""

    _batched_ndim = 5


class RMSNorm(Module):
    """rms_norm over the last dims, of shape `normalized_shape`, with a learned weight (1)."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        _affine_parameters(self, shape, elementwise_affine, False, _param_dtype(dtype))
        _place(self, device)

    def reset_parameters(self) -> None:
        """Weight 1."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LayerNorm(Module):
    """layer_norm over the last dims, of shape `normalized_shape`, with learned weight (1) and bias (0)."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        _affine_parameters(self, shape, elementwise_affine, bias, _param_dtype(dtype))
        _place(self, device)

    def reset_parameters(self) -> None:
        """Weight 1 and bias 0."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """group_norm with `num_groups` groups of the `num_channels` channels; weight 1, bias 0 per channel."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _affine_parameters(self, (num_channels,), affine, bias, _param_dtype(dtype))
        _place(self, device)

    def reset_parameters(self) -> None:
        """Weight 1 and bias 0."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


# --- local response normalisation: each channel divided by its neighbours' energy ---------------


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,  # noqa: A002
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x**2 over `size` neighbouring channels) ** beta.

    The window of channel c runs from c - size // 2 to c + (size - 1) // 2, zeros beyond the
    edges (PyTorch's padding, counted in the mean). Gradient: through those differentiable ops.
    An int64 input works as in PyTorch (whose integer average pool truncates): float32 out.
    """
    op = "local_response_norm"
    x = input if isinstance(input, Tensor) and input.dtype == int64 else _floating_input(input, op)
    if x.ndim < 3:
        raise ValueError(f"local_response_norm: expected 3D or higher dimensionality input (got {x.ndim} "
                         f"dimensions, shape {tuple(x.shape)})")
    if x.numel() == 0:
        return x
    from tensorgrad.nn.conv import pad  # (conv imports this package's modules)

    squares = (x * x).reshape(x.shape[0], x.shape[1], -1)
    padded = pad(squares, (0, 0, size // 2, (size - 1) // 2))
    windows = padded.unfold(1, size, 1)
    # PyTorch's int64 average pool divides integers (the squares are >= 0: floor is truncation)
    energy = (windows.sum(-1) // size if x.dtype == int64 else windows.mean(-1)).reshape(x.shape)
    return x / (energy * alpha + k).pow(beta)


class LocalResponseNorm(Module):
    """`F.local_response_norm(input, size, alpha, beta, k)` as a layer (no parameters)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """Local response normalisation across the channels of a 4-D (N, C, H, W) input: the maths
    of `LocalResponseNorm`, for 4-D input only (PyTorch's running-sum version drops a window
    edge; this one computes the documented formula)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead "
                             f"(shape {tuple(input.shape)}).")
        return super().forward(input)


# --- lazy batch norms: num_features read from the first input --------------------------------------


class LazyBatchNorm1d(LazyModuleMixin, BatchNorm1d):
    """`BatchNorm1d` whose `num_features` is read from the first input's dimension 1; until then
    `weight`, `bias` and the running statistics are uninitialised. Then it is a `BatchNorm1d`."""

    cls_to_become = BatchNorm1d

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        options = (eps, momentum, affine, track_running_stats, bias, device, dtype)
        self.cls_to_become.__init__(self, 0, eps, momentum, affine, track_running_stats, device, dtype,
                                    bias=bias)
        present = tuple(name for name in ("weight", "bias") if self._parameters[name] is not None)
        self._make_lazy(present, ("running_mean", "running_var"), options)

    def _inferred_sizes(self, input: Tensor) -> dict[str, int]:  # noqa: A002
        return {"num_features": input.shape[1]}

    def _built_for(self, sizes: dict[str, int]) -> Module:
        eps, momentum, affine, track, bias, device, dtype = self._lazy_options
        return self.cls_to_become(sizes["num_features"], eps, momentum, affine, track, device, dtype,
                                  bias=bias)


class LazyBatchNorm2d(LazyBatchNorm1d):
    """`BatchNorm2d` whose `num_features` is read from the first input's dimension 1; until then
    `weight`, `bias` and the running statistics are uninitialised. Then it is a `BatchNorm2d`."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(LazyBatchNorm1d):
    """`BatchNorm3d` whose `num_features` is read from the first input's dimension 1; until then
    `weight`, `bias` and the running statistics are uninitialised. Then it is a `BatchNorm3d`."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


# --- lazy instance norms: num_features read from the first input's channels ----------------------


class LazyInstanceNorm1d(LazyModuleMixin, InstanceNorm1d):
    """`InstanceNorm1d` whose `num_features` is read from the first input's channels (dimension 1,
    or 0 unbatched); until then `weight`, `bias` and the running statistics are uninitialised.
    Then it is an `InstanceNorm1d`. PyTorch's defaults: affine and tracking running statistics."""

    cls_to_become = InstanceNorm1d
    __init__ = LazyBatchNorm1d.__init__
    _built_for = LazyBatchNorm1d._built_for

    def _inferred_sizes(self, input: Tensor) -> dict[str, int]:  # noqa: A002
        return {"num_features": input.shape[1] if input.ndim == self._batched_ndim else input.shape[0]}


class LazyInstanceNorm2d(LazyInstanceNorm1d):
    """`InstanceNorm2d` whose `num_features` is read from the first input's channels; until then
    `weight`, `bias` and the running statistics are uninitialised. Then it is an `InstanceNorm2d`."""

    cls_to_become = InstanceNorm2d
    _batched_ndim = InstanceNorm2d._batched_ndim


class LazyInstanceNorm3d(LazyInstanceNorm1d):
    """`InstanceNorm3d` whose `num_features` is read from the first input's channels; until then
    `weight`, `bias` and the running statistics are uninitialised. Then it is an `InstanceNorm3d`."""

    cls_to_become = InstanceNorm3d
    _batched_ndim = InstanceNorm3d._batched_ndim
