"""Activation functions beyond relu/tanh/sigmoid, under PyTorch's names (tutorial chapter 9).

Each function is its forward line and its derivative, handed to `record`, with PyTorch's
formula, parameters and defaults. At a kink the derivative takes the side PyTorch takes (for
example `leaky_relu` has slope `negative_slope` at 0, `hardtanh` has slope 0 at its limits),
so gradients agree with PyTorch everywhere, not only between kinks. `inplace=True` writes the
result into the input (PyTorch's in-place form, with the same rules about leaves).

Only floating point tensors are accepted (PyTorch's kernels refuse integers too), except by
`hardtanh`/`relu6`, which clip integers, and `softsign`, which computes in float32. `silu`,
`softsign` and `tanhshrink` also take complex tensors, as PyTorch's do.
The modules at the end (`GELU`, `SiLU`, ...) hold the options and call the functions.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from tensorgrad import creation, dtypes
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record
from tensorgrad.checks import ArgumentValueError, UnsupportedDtypeError
from tensorgrad.device import array_like, namespace
from tensorgrad.dtypes import float16, float32
from tensorgrad.elementwise import _erf_array, at_least_1d, neg, sigmoid_array, where
from tensorgrad.higher_order import held_constant
from tensorgrad.inplace import apply_inplace
from tensorgrad.nn.modules import Module, Parameter
from tensorgrad.reduce import implicit_softmax_dim, log_softmax, softmax
from tensorgrad.tensor import Tensor, new_leaf

__all__ = [
    "gelu", "silu", "elu", "selu", "celu", "leaky_relu", "relu6", "hardtanh", "hardsigmoid",
    "hardswish", "softplus", "softsign", "mish", "logsigmoid", "softmin", "threshold", "tanhshrink", "glu",
    "prelu", "hardshrink", "softshrink", "gumbel_softmax", "rrelu", "RReLU",
    "relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "rrelu_", "threshold_",
    "GELU", "SiLU", "Mish", "LeakyReLU", "ELU", "SELU", "CELU", "Hardtanh", "ReLU6", "Hardsigmoid",
    "Hardswish", "Softplus", "Softsign", "LogSigmoid", "Softmin", "Softmax", "LogSoftmax", "Threshold",
    "Tanhshrink", "GLU", "PReLU", "Softmax2d", "Hardshrink", "Softshrink",
]

# SELU's constants (Klambauer et al. 2017), as PyTorch writes them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _floating(x: Any, op: str, complex_ok: bool = False) -> Tensor:
    """x, checked to be a floating point Tensor (PyTorch's kernels refuse integer dtypes), or a
    complex one where `complex_ok` (the few activations PyTorch also computes on complex)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    if x.data.dtype.kind != "f" and not (complex_ok and x.data.dtype.kind == "c"):
        raise UnsupportedDtypeError(f"{op}: not implemented for dtype {x.dtype}; convert with .float() first")
    return x


# --- smooth activations ---------------------------------------------------------------------------


def float16_in_float32(function: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """`function` with a float16 input computed in float32, its output and its gradient each rounded
    to float16 once, as PyTorch's activation kernels (forward and backward) compute float16.

    NumPy rounds float16 at every step of a formula: one value in three of `gelu`'s came out an ulp
    off PyTorch's, and as many of its gradients. The two casts are graph nodes (`to`), as
    autocast's are. In place (`inplace=True`) the function runs as written.
    """
    parameters = list(inspect.signature(function).parameters)
    inplace_at = parameters.index("inplace") - 1 if "inplace" in parameters else None  # (in *args)

    @functools.wraps(function)
    def computed_in_float32(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        if type(input) is Tensor and input._data.dtype == np.float16:
            positional = inplace_at is not None and len(args) > inplace_at
            if not kwargs.get("inplace", args[inplace_at] if positional else False):
                return function(input.to(float32), *args, **kwargs).to(float16)
        return function(input, *args, **kwargs)

    return computed_in_float32


@float16_in_float32
def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002 - PyTorch's name
    """x * Phi(x), Phi the standard normal CDF. Derivative: Phi(x) + x * phi(x).

    `approximate='tanh'`: 0.5 x (1 + tanh(k (x + 0.044715 x**3))), k = sqrt(2 / pi), with its
    own derivative 0.5 (1 + t) + 0.5 x (1 - t**2) k (1 + 3 * 0.044715 x**2).
    """
    x = _floating(input, "gelu")
    if approximate == "none":
        return _gelu_exact(x)
    if approximate == "tanh":
        return _gelu_tanh(x)
    raise RuntimeError(f"gelu: approximate argument must be either 'none' or 'tanh', got {approximate!r}")


def _gelu_exact(x: Tensor) -> Tensor:
    data = at_least_1d(x.data)
    cdf = _normal_cdf_array(data)
    pdf_scale = 1 / math.sqrt(2 * math.pi)

    def vjp(grad: np.ndarray) -> np.ndarray:  # grad * (cdf + x * exp(-x**2 / 2) / sqrt(2 pi))
        slope = -0.5 * data
        slope *= data
        np.exp(slope, out=slope)
        slope *= data
        slope *= pdf_scale
        slope += cdf
        return _times(slope, grad, x.shape)

    return record((data * cdf).reshape(x.shape), "gelu", (x,), vjp, graph_vjp=_gelu_exact_graph)


def _times(values: np.ndarray, grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """values * grad in the input's `shape`, into `values` where the shapes allow (a VJP's last
    step, see `_gelu_tanh`)."""
    if values.shape == np.broadcast_shapes(values.shape, grad.shape) and values.dtype == grad.dtype:
        values *= grad
        return values.reshape(shape)
    return (values * grad).reshape(shape)


def _gelu_exact_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad * (_normal_cdf(x) + x * _normal_pdf(x)),)


def _normal_cdf_array(data: np.ndarray) -> np.ndarray:
    """Phi(x) = (1 + erf(x / sqrt(2))) / 2, erf computed in float64, in x's dtype."""
    return 0.5 * (1 + _erf_array(data / math.sqrt(2)))


def _normal_pdf(x: Tensor) -> Tensor:
    """phi(x) = exp(-x**2 / 2) / sqrt(2 pi), from tensor ops."""
    return (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))


def _normal_cdf(x: Tensor) -> Tensor:
    """Phi(x), as a node whose derivative phi(x) is made of tensor ops (so it differentiates again)."""
    cdf = _normal_cdf_array(x.data)
    return record(cdf, "normal_cdf", (x,), lambda grad: grad * _normal_pdf(new_leaf(x.data)).data,
                  graph_vjp=_normal_cdf_graph)


def _normal_cdf_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad * _normal_pdf(x),)


def _gelu_tanh(x: Tensor) -> Tensor:
    """GELU's tanh form, computed as PyTorch's kernel computes it, step by step in place: the one
    numpy expression made a dozen temporaries, and on a (32, 16, 256) float32 batch its backward
    took 1.9 ms (the allocator handing each temporary back to the system and faulting it in
    again) against 0.25 ms in place."""
    k, c, data = math.sqrt(2 / math.pi), 0.044715, at_least_1d(x.data)
    t = data * data
    t *= data  # x**3 as a product, as PyTorch computes it (numpy's power is 30x slower)
    t *= c
    t += data
    t *= k
    np.tanh(t, out=t)  # tanh(k (x + c x**3))
    out = t + 1
    out *= 0.5 * data
    out = out.reshape(x.shape)

    def vjp(grad: np.ndarray) -> np.ndarray:  # grad * (0.5 (1 + t) + 0.5 x (1 - t**2) k (1 + 3 c x**2))
        inner_slope = data * data
        inner_slope *= 3 * c
        inner_slope += 1
        inner_slope *= k
        slope = t * t
        np.subtract(1, slope, out=slope)
        slope *= 0.5 * data
        slope *= inner_slope
        inner_slope[...] = t
        inner_slope += 1
        inner_slope *= 0.5
        slope += inner_slope
        return _times(slope, grad, x.shape)

    return record(out, "gelu", (x,), vjp, graph_vjp=_gelu_tanh_graph)


def _gelu_tanh_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    k, c = math.sqrt(2 / math.pi), 0.044715
    x2 = x * x
    t = (k * (x + c * x2 * x)).tanh()
    return (grad * 0.5 * (1 + t + x * (1 - t * t) * k * (1 + 3 * c * x2)),)


@float16_in_float32
def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * sigmoid(x). Derivative: s * (1 + x * (1 - s)), s = sigmoid(x)."""
    x = _floating(input, "silu", complex_ok=True)
    if inplace:
        return apply_inplace(x, silu, name="silu_")
    if x.data.dtype.kind == "c":  # PyTorch computes complex silu too; tensor ops give its derivative
        return x * x.sigmoid()
    s = sigmoid_array(x.data)
    return record(x.data * s, "silu", (x,),
                  lambda grad: grad * s * (1 + x.data * (1 - s)), graph_vjp=_silu_graph)


def _silu_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    s = x.sigmoid()
    return (grad * s * (1 + x * (1 - s)),)


@float16_in_float32
def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * tanh(softplus(x)). Derivative: t + x * sigmoid(x) * (1 - t**2), t = tanh(softplus(x))."""
    x = _floating(input, "mish")
    if inplace:
        return apply_inplace(x, mish, name="mish_")
    t = np.tanh(np.logaddexp(0, x.data))  # logaddexp(0, x) = log(1 + e**x), without overflow
    return record(x.data * t, "mish", (x,),
                  lambda grad: grad * (t + x.data * sigmoid_array(x.data) * (1 - t * t)),
                  graph_vjp=_mish_graph)


def _mish_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    t = softplus(x, threshold=math.inf).tanh()
    return (grad * (t + x * x.sigmoid() * (1 - t * t)),)


@autocast_op("softplus")
@float16_in_float32
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.

    Derivative: sigmoid(beta x), and 1 where beta x > threshold.
    """
    x = _floating(input, "softplus")
    bx = beta * x.data
    linear = bx > threshold
    out = np.where(linear, x.data, np.logaddexp(0, bx) / beta)
    return record(out, "softplus", (x,),
                  lambda grad: grad * np.where(linear, 1, sigmoid_array(bx)),
                  graph_vjp=partial(_softplus_graph, beta, linear))


def _softplus_graph(beta: float, linear: np.ndarray, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad * where(new_leaf(linear), 1.0, (x * beta).sigmoid()),)


@float16_in_float32
def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """log(sigmoid(x)) = -log(1 + exp(-x)). Derivative: sigmoid(-x)."""
    x = _floating(input, "logsigmoid")
    return record(-np.logaddexp(0, -x.data), "logsigmoid", (x,),
                  lambda grad: grad * sigmoid_array(-x.data), graph_vjp=_logsigmoid_graph)


def _logsigmoid_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad * (-x).sigmoid(),)


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """x / (1 + |x|). Derivative: 1 / (1 + |x|)**2. An integer tensor gives float32, as in PyTorch."""
    if not isinstance(input, Tensor):
        raise TypeError(f"softsign(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input.dtype == np.bool_:
        raise UnsupportedDtypeError("softsign: abs is not implemented for bool tensors")
    if input.data.dtype.kind == "c":  # x / (|x| + 1) from tensor ops: its derivative goes through |x|
        return input / (input.abs() + 1)
    x = input if input.data.dtype.kind == "f" else input.to(float32)
    denominator = 1 + np.abs(x.data)
    # At x = +-inf the output is inf / inf = nan, and so is the gradient, as PyTorch's (which
    # differentiates the quotient).
    return record(x.data / denominator, "softsign", (x,),
                  lambda grad: np.where(np.isinf(x.data), np.nan, grad / (denominator * denominator)),
                  graph_vjp=_softsign_graph)


def _softsign_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    denominator = 1 + x.abs()
    return ((grad / (denominator * denominator)).masked_fill(x.isinf(), math.nan),)


# --- the exponential linear units: the negative side takes the exponential branch, 0 included ---


@float16_in_float32
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > 0, else alpha * (exp(x) - 1). Derivative: 1 where x > 0, else alpha * exp(x)."""
    x = _floating(input, "elu")
    if inplace:
        return apply_inplace(x, elu, alpha, name="elu_")
    return _exponential_unit(x, alpha, 1.0, 1.0, "elu")


@float16_in_float32
def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """scale * elu(x, alpha) with SELU's fixed alpha and scale. Derivative: scale * elu's."""
    x = _floating(input, "selu")
    if inplace:
        return apply_inplace(x, selu, name="selu_")
    return _exponential_unit(x, SELU_ALPHA, SELU_SCALE, 1.0, "selu")


@float16_in_float32
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > 0, else alpha * (exp(x / alpha) - 1). Derivative: 1 where x > 0, else exp(x / alpha)."""
    x = _floating(input, "celu")
    if alpha == 0:
        raise RuntimeError("celu: alpha cannot be 0 (the negative side divides by it)")
    if inplace:
        return apply_inplace(x, celu, alpha, name="celu_")
    return _exponential_unit(x, alpha, 1.0, 1 / alpha, "celu")


def _exponential_unit(x: Tensor, alpha: float, scale: float, input_scale: float, op: str) -> Tensor:
    """scale * (x where x > 0, else alpha * (exp(input_scale * x) - 1)), the shape of elu, selu, celu."""
    positive = x.data > 0
    negative = np.minimum(x.data, 0)  # (exp of the positive side is never taken: it could overflow)
    out = scale * np.where(positive, x.data, alpha * np.expm1(input_scale * negative))

    def vjp(grad: np.ndarray) -> np.ndarray:
        # d/dx alpha (exp(s x) - 1) = alpha s exp(s x), from x as PyTorch's: from the output
        # (out + alpha) it cancels, 18% off at x = -6 in float16.
        return grad * scale * np.where(positive, 1, (alpha * input_scale) * np.exp(input_scale * negative))

    return record(out, op, (x,), vjp,
                  graph_vjp=partial(_exponential_unit_graph, alpha, scale, input_scale, positive))


def _exponential_unit_graph(alpha: float, scale: float, input_scale: float, positive: np.ndarray,
                            grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    mask = new_leaf(positive)
    negative = where(mask, 0.0, x)  # (not exp of the positive side: it may overflow)
    return (grad * scale * where(mask, 1.0, (negative * input_scale).exp() * (alpha * input_scale)),)


def _masked_graph(slope: np.ndarray, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The graph VJP of a piecewise linear op: its slope, read from x, has a zero derivative."""
    return (grad * held_constant(x, slope),)


# --- piecewise linear ------------------------------------------------------------------------------


@float16_in_float32
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > 0, else negative_slope * x. Derivative: 1 where x > 0, else negative_slope (0 included)."""
    x = _floating(input, "leaky_relu")
    if inplace:
        return apply_inplace(x, leaky_relu, negative_slope, name="leaky_relu_")
    positive = x.data > 0
    return record(np.where(positive, x.data, x.data * negative_slope), "leaky_relu", (x,),
                  lambda grad: grad * np.where(positive, 1, negative_slope).astype(x.data.dtype),
                  graph_vjp=partial(_leaky_relu_graph, negative_slope))


def _leaky_relu_graph(negative_slope: float, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad * held_constant(x, np.where(x.data > 0, 1, negative_slope).astype(x.data.dtype)),)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """x clipped to [min_val, max_val]. Derivative: 1 strictly inside, 0 outside and at the limits."""
    if not isinstance(input, Tensor):
        raise TypeError(f"hardtanh(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    if input.dtype == np.bool_:
        raise RuntimeError("hardtanh: Bool inputs not supported for hardtanh")
    if inplace:
        return apply_inplace(input, hardtanh, min_val, max_val, name="hardtanh_")
    x = input
    out = np.clip(x.data, min_val, max_val).astype(x.data.dtype, copy=False)  # integers stay integers
    return record(out, "hardtanh", (x,),
                  lambda grad: grad * ((x.data > min_val) & (x.data < max_val)),
                  graph_vjp=partial(_hardtanh_graph, min_val, max_val))


def _hardtanh_graph(min_val: float, max_val: float, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad * held_constant(x, (x.data > min_val) & (x.data < max_val)),)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(x, 0), 6) = hardtanh(x, 0, 6). Derivative: 1 for 0 < x < 6, else 0 (at 0 and 6 too)."""
    return hardtanh(input, 0.0, 6.0, inplace)


@float16_in_float32
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """relu6(x + 3) / 6. Derivative: 1/6 for -3 < x < 3, else 0."""
    x = _floating(input, "hardsigmoid")
    if inplace:
        return apply_inplace(x, hardsigmoid, name="hardsigmoid_")
    inside = (x.data > -3) & (x.data < 3)
    return record(np.clip(x.data / 6 + 0.5, 0, 1), "hardsigmoid", (x,),
                  lambda grad: grad * inside / 6, graph_vjp=partial(_hardsigmoid_graph, inside))


def _hardsigmoid_graph(inside: np.ndarray, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (grad * new_leaf(inside) / 6,)


@float16_in_float32
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * relu6(x + 3) / 6. Derivative: 0 for x <= -3, x / 3 + 1/2 for -3 < x < 3, 1 for x >= 3."""
    x = _floating(input, "hardswish")
    if inplace:
        return apply_inplace(x, hardswish, name="hardswish_")
    slope = np.where(x.data <= -3, 0, np.where(x.data < 3, x.data / 3 + 0.5, 1)).astype(x.data.dtype)
    return record(x.data * np.clip(x.data + 3, 0, 6) / 6, "hardswish", (x,),
                  lambda grad: grad * slope, saved=(), graph_vjp=_hardswish_graph)


def _hardswish_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    middle = new_leaf((x.data > -3) & (x.data < 3))
    return (grad * where(middle, x / 3 + 0.5, new_leaf((x.data >= 3).astype(x.dtype))),)


# --- softmin --------------------------------------------------------------------------------------


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """softmax(-x) over `dim`: the smallest entries weigh most. Derivative: softmax's, negated."""
    # With dtype=, PyTorch negates in the input's dtype (uint8 wraps around) and casts after, so
    # integer and complex input may ask for a float dtype.
    x = input if dtype is not None and isinstance(input, Tensor) else _floating(input, "softmin")
    if dim is None:
        dim = implicit_softmax_dim(x.ndim, "softmin")
    return softmax(neg(x), dim, dtype=dtype)


# --- modules ---------------------------------------------------------------------------------------


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > threshold, else value. Derivative: 1 where x > threshold, else 0.

    Integer tensors stay integer (`value` cast to their dtype), as in PyTorch."""
    integral = isinstance(input, Tensor) and input.dtype.kind in "iu"
    x = input if integral else _floating(input, "threshold")
    if inplace:
        return apply_inplace(x, _thresholded, threshold, value, name="threshold_")
    return _thresholded(x, threshold, value)


def _thresholded(x: Tensor, limit: float, value: float) -> Tensor:
    above = ~(x.data <= limit)  # (nan stays, with its gradient, as in PyTorch)
    if isinstance(value, bool | int | float):  # (-9 wraps into uint8; 300 does not fit)
        value = creation.checked_scalar(value, x.dtype, "threshold")
    return record(np.where(above, x.data, x.dtype.type(value)), "threshold", (x,),
                  lambda grad: grad * above, saved=(), graph_vjp=partial(_masked_graph, above))


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: x where x > 0, else a * x. In training each element's slope a is drawn
    uniformly from [lower, upper] (from tensorgrad's generator); outside training (the default, as
    in PyTorch) a = (lower + upper) / 2, which is `leaky_relu`. Derivative: 1 where x > 0, else a.
    """
    x = _floating(input, "rrelu")
    if lower > upper:
        raise ArgumentValueError(f"rrelu: Lower bound should be less than or equal to the upper bound, "
                                 f"got lower={lower}, upper={upper}")
    if not training:
        return leaky_relu(x, (lower + upper) / 2, inplace)
    if inplace:
        return apply_inplace(x, rrelu, lower, upper, True, name="rrelu_")
    drawn = creation.default_generator().uniform(lower, upper, x.shape)
    slope = np.where(x.data <= 0, array_like(drawn.astype(x.dtype), x.data), 1.0)
    return record(x.data * slope, "rrelu", (x,), lambda grad: grad * slope, saved=(),
                  graph_vjp=partial(_masked_graph, slope))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x where |x| > lambd, else 0. Derivative: 1 where |x| > lambd, else 0."""
    x = _floating(input, "hardshrink")
    outside = np.abs(x.data) > lambd
    inside = np.abs(x.data) <= lambd  # (nan is neither: it stays nan, with no gradient, as in PyTorch)
    return record(np.where(inside, 0, x.data).astype(x.dtype), "hardshrink", (x,),
                  lambda grad: grad * outside, saved=(), graph_vjp=partial(_masked_graph, outside))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x - lambd above lambd, x + lambd below -lambd, 0 between. Derivative: 1 outside, 0 between."""
    x = _floating(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}.")
    outside = np.abs(x.data) > lambd
    inside = np.abs(x.data) <= lambd  # (nan is neither: it stays nan, with no gradient, as in PyTorch)
    out = np.where(inside, 0, x.data - np.sign(x.data) * x.dtype.type(lambd)).astype(x.dtype)
    return record(out, "softshrink", (x,), lambda grad: grad * outside, saved=(),
                  graph_vjp=partial(_masked_graph, outside))


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """x - tanh(x). Derivative: tanh(x)**2. An integer tensor gives the default float dtype."""
    if isinstance(input, Tensor) and input.dtype.kind in "iu":
        input = input.to(dtypes.get_default_dtype())  # noqa: A001
    x = _floating(input, "tanhshrink", complex_ok=True)
    if x.data.dtype.kind == "c":  # PyTorch's complex tanhshrink; tensor ops give its derivative
        return x - x.tanh()
    t = np.tanh(x.data)
    return record(x.data - t, "tanhshrink", (x,), lambda grad: grad * t * t, saved=(),
                  graph_vjp=_tanhshrink_graph)


def _tanhshrink_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    t = x.tanh()
    return (grad * t * t,)


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """The gated linear unit: a * sigmoid(b), where a and b are the halves of x along `dim`.
    Gradient: through the product and the sigmoid of the two halves."""
    x = _floating(input, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = dim % x.ndim if -x.ndim <= dim < x.ndim else dim
    if not 0 <= axis < x.ndim:
        raise IndexError(f"glu: dimension out of range (expected to be in range of [{-x.ndim}, "
                         f"{x.ndim - 1}], but got {dim})")
    if x.shape[axis] % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {axis} is size "
                           f"{x.shape[axis]}")
    a, b = x.chunk(2, axis)
    return a * b.sigmoid()


@autocast_op("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """x where x > 0, else weight * x, with one learned slope per channel (dimension 1) or one
    for all. Gradients: through the selection; the weight's is the sum of x where x <= 0."""
    x = _floating(input, "prelu")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
                           f"{weight.ndim} (shape {tuple(weight.shape)})")
    if weight.dtype != x.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {x.dtype} and {weight.dtype}")
    if weight.numel() != 1 and (x.ndim < 2 or weight.numel() != x.shape[1]):
        channels = x.shape[1] if x.ndim >= 2 else 1
        raise RuntimeError(f"prelu: mismatch of parameter numbers and input channel size. Found parameter "
                           f"numbers = {weight.numel()} and channel size = {channels}.")
    if weight.numel() == 1:
        slope = weight.reshape(-1 if x.ndim else ())  # (a 0-d input stays 0-d)
    else:
        slope = weight.reshape((1, -1) + (1,) * (x.ndim - 2))
    return where(x > 0, x, slope * x)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A differentiable sample of a categorical distribution: softmax((logits + g) / tau) with
    Gumbel noise g = -log(-log(u)). With `hard`, the one-hot of its argmax on the forward pass
    and the soft sample's gradient on the backward (the straight-through estimator). Noise from
    tensorgrad's generator (`tg.manual_seed`)."""
    x = _floating(logits, "gumbel_softmax")
    uniform = creation.default_generator().random(x.shape)
    gumbels = -np.log(-np.log(uniform))  # (1 - u is as uniform: u = 0 has probability 0)
    noise = namespace(x.data).asarray(gumbels.astype(x.dtype))
    soft = softmax((x + new_leaf(noise)) / tau, dim)
    if not hard:
        return soft
    axis = dim % x.ndim if x.ndim else 0
    index = np.expand_dims(np.argmax(soft.data, axis=axis), axis)
    positions = namespace(x.data).arange(x.shape[axis]).reshape((-1,) + (1,) * (x.ndim - axis - 1))
    one_hot = (positions == index).astype(x.dtype)
    return soft + new_leaf(one_hot - soft.data)  # the hard sample forward, the soft one's gradient


# --- in-place forms: F.relu_ and friends write the result into `input` and return it ---------------


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """max(x, 0), written into x (in place). Derivative: 1 where x > 0, else 0. Integers too."""
    if not isinstance(input, Tensor):
        raise TypeError(f"relu_(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return input.relu_()


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """elu(x, alpha), written into x (in place). Derivative: elu's."""
    return elu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """leaky_relu(x, negative_slope), written into x (in place). Derivative: leaky_relu's."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """x clipped to [min_val, max_val], written into x (in place). Derivative: hardtanh's."""
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """selu(x), written into x (in place). Derivative: selu's."""
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """celu(x, alpha), written into x (in place). Derivative: celu's."""
    return celu(input, alpha, inplace=True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False) -> Tensor:
    """rrelu(x, lower, upper, training), written into x (in place). Derivative: rrelu's."""
    return apply_inplace(_floating(input, "rrelu_"), rrelu, lower, upper, training, name="rrelu_")


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """x where x > threshold, else value, written into x (in place). Derivative: threshold's.
    Integer tensors too, as PyTorch's in-place kernel takes them."""
    if not isinstance(input, Tensor):
        raise TypeError(f"threshold_(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return apply_inplace(input, _thresholded, threshold, value, name="threshold_")


class _Activation(Module):
    """A layer that applies one of the functions above with the options it was built with.

    The options are plain attributes under PyTorch's names (`layer.negative_slope`), and the repr
    lists them as PyTorch's does (`inplace=True` only when set).
    """

    def __init__(self, function: Callable[..., Tensor], **options: Any) -> None:
        super().__init__()
        self._function, self._options = function, tuple(options)
        for name, value in options.items():
            setattr(self, name, value)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._function(input, **{name: getattr(self, name) for name in self._options})

    def extra_repr(self) -> str:
        shown = [f"{name}={getattr(self, name)!r}" for name in self._options if name != "inplace"]
        return ", ".join(shown + (["inplace=True"] if getattr(self, "inplace", False) else []))


class GELU(_Activation):
    """gelu(x) as a layer; `approximate='tanh'` for the tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__(gelu, approximate=approximate)


class SiLU(_Activation):
    """x * sigmoid(x) as a layer."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(silu, inplace=inplace)


class Mish(_Activation):
    """x * tanh(softplus(x)) as a layer."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(mish, inplace=inplace)


class LeakyReLU(_Activation):
    """leaky_relu(x, negative_slope) as a layer."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__(leaky_relu, negative_slope=negative_slope, inplace=inplace)


class ELU(_Activation):
    """elu(x, alpha) as a layer."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(elu, alpha=alpha, inplace=inplace)


class SELU(_Activation):
    """selu(x) as a layer."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(selu, inplace=inplace)


class CELU(_Activation):
    """celu(x, alpha) as a layer."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(celu, alpha=alpha, inplace=inplace)


class Hardtanh(_Activation):
    """x clipped to [min_val, max_val] as a layer."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
        super().__init__(hardtanh, min_val=min_val, max_val=max_val, inplace=inplace)


class ReLU6(_Activation):
    """min(max(x, 0), 6) as a layer."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(relu6, inplace=inplace)


class Hardsigmoid(_Activation):
    """relu6(x + 3) / 6 as a layer."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(hardsigmoid, inplace=inplace)

    def extra_repr(self) -> str:
        return ""  # PyTorch's Hardsigmoid shows no options, not even inplace


class Hardswish(_Activation):
    """x * relu6(x + 3) / 6 as a layer."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(hardswish, inplace=inplace)

    def extra_repr(self) -> str:
        return ""  # PyTorch's Hardswish shows no options, not even inplace


class Softplus(_Activation):
    """softplus(x, beta, threshold) as a layer."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__(softplus, beta=beta, threshold=threshold)


class Softsign(_Activation):
    """x / (1 + |x|) as a layer."""

    def __init__(self) -> None:
        super().__init__(softsign)


class LogSigmoid(_Activation):
    """log(sigmoid(x)) as a layer."""

    def __init__(self) -> None:
        super().__init__(logsigmoid)


class Softmin(_Activation):
    """softmin over `dim` as a layer (dim=None: PyTorch's deprecated implicit choice, with a warning)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__(softmin, dim=dim)


class Softmax(Module):
    """softmax over `dim` as a layer (dim=None: PyTorch's deprecated implicit choice, with a warning)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        dim = implicit_softmax_dim(input.ndim, "softmax") if self.dim is None else self.dim
        return softmax(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log_softmax over `dim` as a layer (dim=None: PyTorch's deprecated implicit choice, with a warning)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        dim = implicit_softmax_dim(input.ndim, "log_softmax") if self.dim is None else self.dim
        return log_softmax(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Threshold(Module):
    """threshold(x, threshold, value) as a layer."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class Tanhshrink(_Activation):
    """x - tanh(x) as a layer."""

    def __init__(self) -> None:
        super().__init__(tanhshrink)


class GLU(_Activation):
    """glu(x, dim) as a layer: the first half of `dim` gated by the sigmoid of the second."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__(glu, dim=dim)


class PReLU(Module):
    """prelu with a learned slope: `num_parameters` 1 (shared) or the number of channels,
    initialised to `init`. State dict key `weight`, as PyTorch's."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        weight = creation.full((num_parameters,), init, dtype=dtypes.or_default(dtype), device=device)
        self.weight = Parameter(weight)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """softmax over the channels (dimension -3) of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input of 3 or 4 dimensions, got shape "
                             f"{tuple(input.shape)}")
        return softmax(input, -3)


class Hardshrink(_Activation):
    """hardshrink(x, lambd) as a layer."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(hardshrink, lambd=lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"  # Hardshrink(0.5), as PyTorch prints it


class Softshrink(_Activation):
    """softshrink(x, lambd) as a layer."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(softshrink, lambd=lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"  # Softshrink(0.5), as PyTorch prints it


class RReLU(Module):
    """rrelu(x, lower, upper) as a layer: random negative slopes in training, their mean in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")
