"""torch's in-place functions: `tg.relu_(x)` is `x.relu_()`, `tg.zero_(x)` is `x.zero_()`, ...

PyTorch spells many in-place methods as functions of `torch` too. Each here calls the Tensor
method (or, for the activations and dropouts that have no method, nn.functional's `inplace=True`
form), so it writes into its input, bumps the version counter and is recorded in the graph as
the method is (tensorgrad/inplace.py, tutorial chapter 6), and returns the input itself.
"""

from __future__ import annotations

from typing import Any

from tensorgrad.checks import not_a_tensor
from tensorgrad.creation import Generator
from tensorgrad.inplace import apply_inplace
from tensorgrad.nn import functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad.nn.toplevel import rrelu
from tensorgrad.tensor import Tensor

__all__ = [
    "relu_", "sigmoid_", "tanh_", "exp_", "log_", "sqrt_", "ceil_", "floor_", "trunc_", "fix_",
    "frac_", "neg_", "negative_", "reciprocal_", "rsqrt_", "square_", "abs_", "sin_", "cos_", "tan_",
    "sinh_", "cosh_", "asin_", "acos_", "atan_", "asinh_", "acosh_", "atanh_", "arcsin_", "arccos_",
    "arctan_", "arcsinh_", "arccosh_", "arctanh_", "erf_", "erfc_", "exp2_", "expm1_", "log10_",
    "log1p_", "log2_", "deg2rad_", "rad2deg_", "sinc_", "i0_", "xlogy_", "gcd_", "lcm_", "ldexp_",
    "zero_", "fill_", "clamp_", "clamp_min_", "clamp_max_", "clip_", "round_", "logit_", "nan_to_num_",
    "selu_", "celu_", "rrelu_", "threshold_", "dropout_", "alpha_dropout_", "feature_alpha_dropout_",
    "detach_", "detach",
]


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """input = max(input, 0), in place: `input.relu_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "relu_")
    return input.relu_()


def sigmoid_(input: Tensor) -> Tensor:  # noqa: A002
    """input = sigmoid(input), in place: `input.sigmoid_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "sigmoid_")
    return input.sigmoid_()


def tanh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = tanh(input), in place: `input.tanh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "tanh_")
    return input.tanh_()


def exp_(input: Tensor) -> Tensor:  # noqa: A002
    """input = exp(input), in place: `input.exp_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "exp_")
    return input.exp_()


def log_(input: Tensor) -> Tensor:  # noqa: A002
    """input = log(input), in place: `input.log_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "log_")
    return input.log_()


def sqrt_(input: Tensor) -> Tensor:  # noqa: A002
    """input = sqrt(input), in place: `input.sqrt_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "sqrt_")
    return input.sqrt_()


def ceil_(input: Tensor) -> Tensor:  # noqa: A002
    """input = input rounded up, in place: `input.ceil_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "ceil_")
    return input.ceil_()


def floor_(input: Tensor) -> Tensor:  # noqa: A002
    """input = input rounded down, in place: `input.floor_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "floor_")
    return input.floor_()


def trunc_(input: Tensor) -> Tensor:  # noqa: A002
    """input = input rounded toward zero, in place: `input.trunc_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "trunc_")
    return input.trunc_()


def fix_(input: Tensor) -> Tensor:  # noqa: A002
    """input = input rounded toward zero (`trunc_`), in place: `input.fix_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "fix_")
    return input.fix_()


def frac_(input: Tensor) -> Tensor:  # noqa: A002
    """input = input - trunc(input), in place: `input.frac_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "frac_")
    return input.frac_()


def neg_(input: Tensor) -> Tensor:  # noqa: A002
    """input = -input, in place: `input.neg_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "neg_")
    return input.neg_()


def negative_(input: Tensor) -> Tensor:  # noqa: A002
    """input = -input (`neg_`), in place: `input.negative_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "negative_")
    return input.negative_()


def reciprocal_(input: Tensor) -> Tensor:  # noqa: A002
    """input = 1 / input, in place: `input.reciprocal_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "reciprocal_")
    return input.reciprocal_()


def rsqrt_(input: Tensor) -> Tensor:  # noqa: A002
    """input = 1 / sqrt(input), in place: `input.rsqrt_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "rsqrt_")
    return input.rsqrt_()


def square_(input: Tensor) -> Tensor:  # noqa: A002
    """input = input ** 2, in place: `input.square_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "square_")
    return input.square_()


def abs_(input: Tensor) -> Tensor:  # noqa: A002
    """input = |input|, in place: `input.abs_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "abs_")
    return input.abs_()


def sin_(input: Tensor) -> Tensor:  # noqa: A002
    """input = sin(input), in place: `input.sin_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "sin_")
    return input.sin_()


def cos_(input: Tensor) -> Tensor:  # noqa: A002
    """input = cos(input), in place: `input.cos_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "cos_")
    return input.cos_()


def tan_(input: Tensor) -> Tensor:  # noqa: A002
    """input = tan(input), in place: `input.tan_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "tan_")
    return input.tan_()


def sinh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = sinh(input), in place: `input.sinh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "sinh_")
    return input.sinh_()


def cosh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = cosh(input), in place: `input.cosh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "cosh_")
    return input.cosh_()


def asin_(input: Tensor) -> Tensor:  # noqa: A002
    """input = asin(input), in place: `input.asin_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "asin_")
    return input.asin_()


def acos_(input: Tensor) -> Tensor:  # noqa: A002
    """input = acos(input), in place: `input.acos_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "acos_")
    return input.acos_()


def atan_(input: Tensor) -> Tensor:  # noqa: A002
    """input = atan(input), in place: `input.atan_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "atan_")
    return input.atan_()


def asinh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = asinh(input), in place: `input.asinh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "asinh_")
    return input.asinh_()


def acosh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = acosh(input), in place: `input.acosh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "acosh_")
    return input.acosh_()


def atanh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = atanh(input), in place: `input.atanh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "atanh_")
    return input.atanh_()


def arcsin_(input: Tensor) -> Tensor:  # noqa: A002
    """input = asin(input) (`asin_`), in place: `input.arcsin_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "arcsin_")
    return input.arcsin_()


def arccos_(input: Tensor) -> Tensor:  # noqa: A002
    """input = acos(input) (`acos_`), in place: `input.arccos_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "arccos_")
    return input.arccos_()


def arctan_(input: Tensor) -> Tensor:  # noqa: A002
    """input = atan(input) (`atan_`), in place: `input.arctan_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "arctan_")
    return input.arctan_()


def arcsinh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = asinh(input) (`asinh_`), in place: `input.arcsinh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "arcsinh_")
    return input.arcsinh_()


def arccosh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = acosh(input) (`acosh_`), in place: `input.arccosh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "arccosh_")
    return input.arccosh_()


def arctanh_(input: Tensor) -> Tensor:  # noqa: A002
    """input = atanh(input) (`atanh_`), in place: `input.arctanh_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "arctanh_")
    return input.arctanh_()


def erf_(input: Tensor) -> Tensor:  # noqa: A002
    """input = erf(input), in place: `input.erf_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "erf_")
    return input.erf_()


def erfc_(input: Tensor) -> Tensor:  # noqa: A002
    """input = 1 - erf(input), in place: `input.erfc_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "erfc_")
    return input.erfc_()


def exp2_(input: Tensor) -> Tensor:  # noqa: A002
    """input = 2 ** input, in place: `input.exp2_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "exp2_")
    return input.exp2_()


def expm1_(input: Tensor) -> Tensor:  # noqa: A002
    """input = exp(input) - 1, in place: `input.expm1_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "expm1_")
    return input.expm1_()


def log10_(input: Tensor) -> Tensor:  # noqa: A002
    """input = log10(input), in place: `input.log10_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "log10_")
    return input.log10_()


def log1p_(input: Tensor) -> Tensor:  # noqa: A002
    """input = log(1 + input), in place: `input.log1p_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "log1p_")
    return input.log1p_()


def log2_(input: Tensor) -> Tensor:  # noqa: A002
    """input = log2(input), in place: `input.log2_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "log2_")
    return input.log2_()


def deg2rad_(input: Tensor) -> Tensor:  # noqa: A002
    """input = input * pi / 180, in place: `input.deg2rad_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "deg2rad_")
    return input.deg2rad_()


def rad2deg_(input: Tensor) -> Tensor:  # noqa: A002
    """input = input * 180 / pi, in place: `input.rad2deg_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "rad2deg_")
    return input.rad2deg_()


def sinc_(input: Tensor) -> Tensor:  # noqa: A002
    """input = sin(pi input) / (pi input), in place: `input.sinc_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "sinc_")
    return input.sinc_()


def i0_(input: Tensor) -> Tensor:  # noqa: A002
    """input = I0(input), the modified Bessel function of order 0, in place: `input.i0_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "i0_")
    return input.i0_()


def xlogy_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """input = input * log(other) (0 where input is 0), in place: `input.xlogy_(other)`."""
    return input.xlogy_(other)


def gcd_(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """input = gcd(input, other) (integer tensors), in place: `input.gcd_(other)`."""
    return input.gcd_(other)


def lcm_(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """input = lcm(input, other) (integer tensors), in place: `input.lcm_(other)`."""
    return input.lcm_(other)


def ldexp_(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """input = input * 2**other, in place: `input.ldexp_(other)`."""
    return input.ldexp_(other)


def zero_(input: Tensor) -> Tensor:  # noqa: A002
    """input = 0 everywhere, in place: `input.zero_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "zero_")
    return input.zero_()


def fill_(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """input = value everywhere, in place: `input.fill_(value)`."""
    return input.fill_(value)


def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """input limited to [min, max], in place: `input.clamp_(min, max)`."""
    return input.clamp_(min, max)


def clip_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """input limited to [min, max], in place (`clamp_`): `input.clip_(min, max)`."""
    return input.clip_(min, max)


def clamp_min_(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    """input = max(input, min), in place: `input.clamp_min_(min)`."""
    return input.clamp_min_(min)


def clamp_max_(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    """input = min(input, max), in place: `input.clamp_max_(max)`."""
    return input.clamp_max_(max)


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A002
    """input rounded half to even (to `decimals` places), in place: `input.round_(decimals=...)`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "round_")
    return input.round_(decimals=decimals)


def logit_(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """input = log(input / (1 - input)), input clamped to [eps, 1 - eps] first if eps is given, in
    place: `input.logit_(eps)`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "logit_")
    return input.logit_(eps)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
                neginf: float | None = None) -> Tensor:
    """nan, +inf and -inf in input replaced by finite numbers, in place: `input.nan_to_num_(...)`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "nan_to_num_")
    return input.nan_to_num_(nan, posinf, neginf)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """input = selu(input), in place: `F.selu(input, inplace=True)`."""
    return F.selu_(input)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """input = celu(input, alpha), in place: `F.celu(input, alpha, inplace=True)`."""
    return F.celu_(input, alpha)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
           generator: Generator | None = None) -> Tensor:
    """input = rrelu(input, lower, upper, training), in place, the slopes in training drawn from
    `generator` if given (else tensorgrad's generator): `F.rrelu(input, ..., inplace=True)`."""
    if generator is None:
        return F.rrelu_(input, lower, upper, training)
    return apply_inplace(input, rrelu, lower, upper, training, generator, name="rrelu_")


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """input where input > threshold, else value, in place: `F.threshold(..., inplace=True)`."""
    return F.threshold_(input, threshold, value)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Dropout written into input (when `train`): `F.dropout(input, p, train, inplace=True)`."""
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Alpha dropout written into input (when `train`): `F.alpha_dropout(input, p, train, inplace=True)`."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Feature alpha dropout written into input (when `train`):
    `F.feature_alpha_dropout(input, p, train, inplace=True)`."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def detach_(input: Tensor) -> Tensor:  # noqa: A002
    """input cut from the graph in place (a leaf that does not require grad): `input.detach_()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "detach_")
    return input.detach_()


def detach(input: Tensor) -> Tensor:  # noqa: A002
    """A new tensor sharing input's data, cut from the graph: `input.detach()`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "detach")
    return input.detach()


# --- the random fills PyTorch has as Tensor methods only: cauchy_, log_normal_, geometric_ ---


def _in_dtype(values: Any, t: Tensor) -> Any:
    """Draws cast to t's dtype; the far tail of a float16 draw becomes inf without a warning."""
    import numpy as np

    with np.errstate(over="ignore"):
        return values.astype(t.dtype)


def _floating_fill(t: Tensor, name: str, what: str) -> None:
    if t.dtype.kind != "f":
        raise NotImplementedError(f"{name}(): {what} draws floating values; not implemented for dtype "
                                  f"{t.dtype}")


def cauchy_(t: Tensor, median: float = 0.0, sigma: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill t in place with Cauchy samples, median + sigma * tan(pi * (u - 1/2)); returns t."""
    from tensorgrad.creation import _fill_in_place, _stream

    if t.dtype.kind != "f":
        raise RuntimeError(f"cauchy_(): Cauchy distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {t.dtype}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    draws = median + sigma * _stream(generator).standard_cauchy(t.shape)
    return _fill_in_place(t, _in_dtype(draws, t), "cauchy_")


def log_normal_(t: Tensor, mean: float = 1.0, std: float = 2.0, generator: Generator | None = None) -> Tensor:
    """Fill t in place with exp(N(mean, std**2)) samples (mean and std are the logarithm's); returns t."""
    from tensorgrad.creation import _fill_in_place, _stream

    _floating_fill(t, "log_normal_", "the log-normal distribution")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill_in_place(t, _in_dtype(_stream(generator).lognormal(mean, std, t.shape), t), "log_normal_")


def geometric_(t: Tensor, p: float, generator: Generator | None = None) -> Tensor:
    """Fill t in place with the number of Bernoulli(p) trials up to the first success (1, 2, ...;
    mean 1 / p), in any dtype but bool; returns t."""
    from tensorgrad.creation import _fill_in_place, _stream

    if t.dtype.kind == "b":
        raise NotImplementedError("geometric_(): not implemented for dtype bool")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill_in_place(t, _stream(generator).geometric(p, t.shape), "geometric_")
