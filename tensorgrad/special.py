"""`tg.special`: PyTorch's `torch.special` namespace (`import tensorgrad.special`, or `tg.special`).

The ops PyTorch also has at its top level live with the other elementwise ops in
`tensorgrad.elementwise` (each its forward kernel and its derivative, side by side); this module
gives them the names `torch.special` uses, so `tg.special.gammaln(x)` reads as
`torch.special.gammaln(x)`: `gammaln` is `lgamma`, `psi` is `digamma`, `multigammaln` is
`mvlgamma`, `expit` is `sigmoid`. `softmax`, `log_softmax` and `logsumexp` are the reductions,
with `dim` required as here in PyTorch.

The functions only `torch.special` has are defined here: the regularized incomplete gamma
functions `gammainc` and `gammaincc` (`tg.igamma`, `tg.igammac`), differentiable in x; the
Bessel functions and Airy's Ai (Cephes' rational and Chebyshev approximations, which PyTorch
uses too); and the classical orthogonal polynomials of degree n by their three-term recurrences.
Like PyTorch's, the Bessel functions and the polynomials carry no gradient.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from tensorgrad import elementwise, reduce
from tensorgrad.autograd import record
from tensorgrad.checks import ShapeError, UnsupportedDtypeError, as_int
from tensorgrad.elementwise import (
    _chbevl,
    _i0_array,
    _i1_array,
    _lgamma_array,
    _operands,
    _promoted,
    _rational,
    _real_floating,
    _refuse_complex_dtype,
    _refuse_half,
    _special,
    _zeta_array,
    digamma,
    entr,
    erf,
    erfc,
    erfcx,
    erfinv,
    exp2,
    expm1,
    i0,
    i0e,
    i1,
    i1e,
    log1p,
    log_ndtr,
    logit,
    ndtr,
    ndtri,
    polygamma,
    sinc,
    xlog1py,
    xlogy,
    zeta,
)
from tensorgrad.elementwise import lgamma as gammaln
from tensorgrad.elementwise import mvlgamma as multigammaln
from tensorgrad.elementwise import sigmoid as expit
from tensorgrad.tensor import Tensor, new_leaf, numpy_names

__all__ = [
    "digamma", "psi", "polygamma", "gammaln", "multigammaln", "erf", "erfc", "erfcx", "erfinv",
    "exp2", "expm1", "log1p", "expit", "logit", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr",
    "entr", "sinc", "round", "xlogy", "xlog1py", "zeta", "softmax", "log_softmax", "logsumexp",
    "gammainc", "gammaincc", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p",
]

psi = digamma


@numpy_names
def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002 - PyTorch's name
    """exp(x) / sum(exp(x)) over `dim` (in `dtype`, if given): `tg.softmax` with `dim` required, an int."""
    return reduce.softmax(input, as_int(dim, "softmax", "dim"), dtype=dtype)


@numpy_names
def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """x - logsumexp(x) over `dim` (in `dtype`, if given): `tg.log_softmax` with `dim` required, an int."""
    return reduce.log_softmax(input, as_int(dim, "log_softmax", "dim"), dtype=dtype)


@numpy_names
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """log(sum(exp(x))) over `dim`, computed stably: `tg.logsumexp` with `dim` required."""
    return reduce.logsumexp(input, dim, keepdim)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001, A002 - PyTorch's names
    """x rounded to `decimals` places, halves to even: `tg.round`, but for floating tensors only, as
    `torch.special.round` has no integer kernel (where `torch.round` has). Derivative: 0."""
    if isinstance(input, Tensor) and input.data.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"round: torch.special.round is not implemented for {input.dtype} "
                                    f"tensors (of shape {input.shape}), as in PyTorch; use tg.round")
    return elementwise.round(input, decimals=decimals)


# --- the regularized incomplete gamma functions ----------------------------------------------------

# The loops below stop as soon as every element has converged: the series needs about 9 sqrt(a)
# terms where x is close to a, the continued fraction about as many steps. The cap grows with the
# largest a (P(5e6, 5e6) takes 20,000 terms), up to a in the hundreds of millions.
_INCOMPLETE_GAMMA_STEPS = 3000
_MOST_INCOMPLETE_GAMMA_STEPS = 200_000


def _gamma_steps(a: np.ndarray) -> int:
    """How many terms the series and the continued fraction may take for these a."""
    largest = float(a.max()) if a.size else 0.0
    need = 10 * math.sqrt(largest) + 100 if math.isfinite(largest) else _INCOMPLETE_GAMMA_STEPS
    return int(min(max(_INCOMPLETE_GAMMA_STEPS, need), _MOST_INCOMPLETE_GAMMA_STEPS))
_EPS = float(np.finfo(np.float64).eps)
_TINY = 1e-300  # Lentz's stand-in for a zero denominator


def _incomplete_gamma_arrays(a: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(a, x), Q(a, x)) in float64: the series for x < a + 1 (Q's own series where it is small:
    small a with x <= 1.1, PyTorch's choice), the continued fraction elsewhere.

    The boundary as PyTorch's (SciPy's) tests it, in this order: nan for a < 0 or x < 0;
    P(0, x) = 1 for x > 0, else nan; P(a, 0) = 0; P(inf, x) = 0 (nan at x = inf); P(a, inf) = 1.
    """
    a, x = np.broadcast_arrays(a, x)
    p = np.where(np.isinf(x), 1.0, np.nan)  # the boundary values, written from the last test back
    p = np.where(np.isinf(a), np.where(np.isinf(x), np.nan, 0.0), p)
    p = np.where(x == 0, 0.0, p)
    p = np.where(a == 0, np.where(x > 0, 1.0, np.nan), p)
    boundary = (x < 0) | (a < 0) | (a == 0) | (x == 0) | np.isinf(a) | np.isinf(x)
    p = np.where((x < 0) | (a < 0), np.nan, p)
    inner = ~boundary & ~np.isnan(a + x)  # the rest is nan, and stays out of the loops
    series = inner & (x < a + 1)
    fraction = inner & (x >= a + 1)
    with_log = np.log(np.where(x < 0.5, x, 0.5))
    small_upper = series & (x <= 1.1) & np.where(x <= 0.5, -0.4 / with_log >= a, 1.1 * x >= a)
    # Each method runs on its own elements and on harmless stand-ins elsewhere, so that its loop
    # stops when its own elements have converged.
    lower = _lower_gamma_series(np.where(series, a, 1.0), np.where(series, x, 1.0))
    upper = _upper_gamma_fraction(np.where(fraction, a, 1.0), np.where(fraction, x, 3.0))
    upper_small = _upper_gamma_series(np.where(small_upper, a, 0.5), np.where(small_upper, x, 0.5))
    q = np.where(small_upper, upper_small, np.where(series, 1 - lower, np.where(fraction, upper, 1 - p)))
    p = np.where(series, lower, np.where(fraction, 1 - upper, p))
    return p, q


def _upper_gamma_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) = 1 - x**a / Gamma(a + 1) + x**a / Gamma(a) * sum over n >= 1 of (-x)**n / (n! (a + n)),
    for small a and x <= 1.1, where 1 - P(a, x) would cancel (Q(1e-10, 0.1) is 2e-10)."""
    factor = np.ones_like(a)
    total = np.zeros_like(a)
    done = np.zeros_like(a, dtype=bool)
    for n in range(1, _INCOMPLETE_GAMMA_STEPS):
        factor = factor * -x / n
        term = factor / (a + n)
        total = np.where(done, total, total + term)
        done = done | (np.abs(term) <= np.abs(total) * _EPS / 2)
        if bool(done.all()):
            break
    log_x = np.log(x)
    return -np.expm1(a * log_x - _lgamma1p(a)) - np.exp(a * log_x - _lgamma_array(a)) * total


# Stirling's series for ln Gamma(a) - ((a - 1/2) ln a - a + ln(2 pi) / 2): 1/(12 a) - 1/(360 a**3) + ...,
# the coefficients of a**-1, a**-3, ..., a**-13 (to double precision from a = 10 on).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


def _log_power_factor(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """ln(x**a e**-x / Gamma(a + 1)), the factor in front of both expansions.

    For a >= 10 it is a ln(1 + t) - a t - ln(a) / 2 - ln(2 pi) / 2 - Stirling's correction, with
    t = (x - a) / a: the terms a ln(x), x and ln Gamma(a + 1), each hundreds or thousands, cancel
    there, and their rounding would cost digits in proportion to a.
    """
    direct = a * np.log(x) - x - _lgamma1p(a)
    large = np.where(a >= 10, a, 10.0)
    t = (x - large) / large
    # ln(1 + t) from t only near 0, where it is exact; from x / a elsewhere (1 + t would round)
    log_ratio = np.where(np.abs(t) < 0.5, np.log1p(t), np.log(x / large))
    w = 1 / (large * large)
    correction = np.zeros_like(w)
    for c in reversed(_STIRLING):
        correction = correction * w + c
    correction = correction / large
    stirling = large * (log_ratio - t) - 0.5 * np.log(large) - _HALF_LOG_TWO_PI - correction
    return np.where(a >= 10, stirling, direct)


# ln Gamma(1 + a) = -gamma a + sum over k >= 2 of (-1)**k zeta(k) a**k / k, for |a| < 0.2: the
# coefficients of a**2, ..., a**26 (a**27 / 27 < 1e-20 there)
_LGAMMA1P = tuple((-1) ** k * float(z) / k
                  for k, z in zip(range(2, 27), _zeta_array(np.arange(2, 27.0), np.ones(25)), strict=True))
_EULER_GAMMA = 0.57721566490153286061


def _lgamma1p(a: np.ndarray) -> np.ndarray:
    """ln Gamma(1 + a), exact also for tiny a, where 1 + a would drop a's last digits."""
    small = np.where(np.abs(a) < 0.2, a, 0.0)
    series = np.zeros_like(small)
    for c in reversed(_LGAMMA1P):
        series = (series + c) * small
    series = (series - _EULER_GAMMA) * small
    return np.where(np.abs(a) < 0.2, series, _lgamma_array(a + 1))


def _lower_gamma_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = x**a e**-x / Gamma(a + 1) * (1 + x / (a + 1) + x**2 / ((a + 1)(a + 2)) + ...)."""
    term = np.ones_like(a)
    total = np.ones_like(a)
    denominator = a
    done = np.zeros_like(a, dtype=bool)
    for _ in range(_gamma_steps(a)):
        denominator = denominator + 1
        term = term * x / denominator
        total = np.where(done, total, total + term)
        done = done | (term <= total * _EPS)
        if bool(done.all()):
            break
    return np.exp(_log_power_factor(a, x)) * total


def _upper_gamma_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) = x**a e**-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (...))),
    the continued fraction evaluated by Lentz's method (for x >= a + 1, where it converges fast)."""
    b = x + 1 - a
    c = np.full_like(b, 1 / _TINY)
    d = 1 / b
    fraction = d
    done = np.zeros_like(b, dtype=bool)
    for i in range(1, _gamma_steps(a)):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        step = d * c
        fraction = np.where(done, fraction, fraction * step)
        done = done | (np.abs(step - 1) <= 2 * _EPS)  # once met, as the steps then wobble about 1
        if bool(done.all()):
            break
    return np.exp(_log_power_factor(a, x) + np.log(a)) * fraction


def _incomplete_gamma(input: Tensor, other: Tensor, op: str, upper: bool) -> Tensor:  # noqa: A002
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        bad, name = (input, "input") if not isinstance(input, Tensor) else (other, "other")
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(bad).__name__}")
    if input.data.dtype.kind in "biu" and other.data.dtype.kind in "biu":
        raise UnsupportedDtypeError(f"{op}: not implemented for {input.dtype} and {other.dtype} tensors "
                                    f"(shapes {input.shape} and {other.shape}), as in PyTorch; make one "
                                    "of them floating")
    a, x = _promoted(input.data, other.data, floating=True)
    try:
        shape = np.broadcast_shapes(a.shape, x.shape)
    except ValueError:
        raise ShapeError(f"{op}: shapes {input.shape} (input) and {other.shape} (other) can't be "
                         "broadcast together") from None
    _refuse_complex_dtype(a.dtype, op, input.shape, other.shape)
    with np.errstate(all="ignore"):
        p, q = _incomplete_gamma_arrays(a.astype(np.float64), x.astype(np.float64))
    out = (q if upper else p).astype(a.dtype, copy=False).reshape(shape)
    sign = -1.0 if upper else 1.0
    return record(out, op, (input, other),
                  lambda grad: _incomplete_gamma_first_argument(op),
                  lambda grad: grad * sign * _incomplete_gamma_slope(input, other),
                  graph_vjp=partial(_incomplete_gamma_graph, op, sign))


def _incomplete_gamma_graph(op: str, sign: float, grad: Tensor, out: Tensor, a: Tensor,
                            x: Tensor) -> tuple[None, Tensor]:
    """`_incomplete_gamma_slope` with tensor ops; d/da raises, as in the first pass."""
    if a.requires_grad:
        _incomplete_gamma_first_argument(op)
    with np.errstate(all="ignore"):
        return None, grad * sign * ((a - 1) * x.log() - x - a.lgamma()).exp()


def _incomplete_gamma_slope(a: Tensor, x: Tensor) -> np.ndarray:
    """d/dx P(a, x) = x**(a - 1) e**-x / Gamma(a), in the result's dtype: PyTorch's formula,
    boundary included (nan at x = 0 for a = 1, as there)."""
    s, y = _promoted(a.data, x.data, floating=True)
    with np.errstate(all="ignore"):
        s64, y64 = s.astype(np.float64), y.astype(np.float64)
        return np.exp((s64 - 1) * np.log(y64) - y64 - _lgamma_array(s64)).astype(s.dtype, copy=False)


def _incomplete_gamma_first_argument(op: str) -> np.ndarray:
    raise NotImplementedError(f"{op}: the derivative with respect to the first argument (input, a) is "
                              "not implemented (as in PyTorch); detach() it")


def gammainc(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """P(a, x) = (1 / Gamma(a)) * integral from 0 to x of t**(a - 1) e**-t dt, for a = input, x = other.

    The regularized lower incomplete gamma function (`tg.igamma`). Derivative with respect to x:
    x**(a - 1) e**-x / Gamma(a); with respect to a, not implemented (backward raises), as in PyTorch.
    """
    return _incomplete_gamma(input, other, "gammainc", upper=False)


def gammaincc(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """Q(a, x) = 1 - P(a, x) = (1 / Gamma(a)) * integral from x to inf of t**(a - 1) e**-t dt.

    The regularized upper incomplete gamma function (`tg.igammac`), computed as itself where it is
    small. Derivative with respect to x: -x**(a - 1) e**-x / Gamma(a); with respect to a, not
    implemented (backward raises), as in PyTorch.
    """
    return _incomplete_gamma(input, other, "gammaincc", upper=True)


igamma = gammainc
igammac = gammaincc


# --- Bessel functions and Airy's Ai ----------------------------------------------------------------
# Cephes' approximations (S. L. Moshier), as PyTorch evaluates them: rational functions of x**2
# near 0 and Hankel's asymptotic form with rational corrections in (5 / x)**2 beyond 5 for J and Y;
# Chebyshev series for K. Coefficients highest power first (zero-order term last for the series).
# Cephes evaluates some denominators with `p1evl`, whose leading coefficient 1 is left out of its
# tables; here it is written in (the 1.0 that starts _J0_QQ, _J0_RQ, _Y0_YQ, _J1_QQ, _J1_RQ,
# _Y1_YQ, _AIRY_AFD and _AIRY_AGD). PyTorch's port drops it, which costs its J, Y and Ai up to
# 3e-6: these agree with high-precision values to 1e-15 and with PyTorch's to its error.
# Computed in float64 and rounded once to the input's dtype; no gradient, as in PyTorch.

_AIRY_AN = (0.346538101525629, 12.007595273964581, 76.27960536152345, 168.08922493463058,
            159.75639135016442, 70.53609068404442, 14.026469116338967, 1.0)
_AIRY_AD = (0.5675945326387702, 14.75625625848472, 84.51389701414746, 177.31808814540045,
            164.2346928715297, 71.47784008255756, 14.095913560783403, 1.0)
_AIRY_AFN = (-0.1316963234183318, -0.6264565444319123, -0.6931580360369335, -0.2797799815451191,
             -0.04919001326095003, -0.004062659235948854, -0.0001592764962392621,
             -2.776491081552329e-06, -1.6778769848911465e-08)
_AIRY_AFD = (1.0, 13.356042070655324, 32.682503279522464, 26.736704094149957, 9.187074029072596,
             1.4752914677166642, 0.11568717379518804, 0.004402916416152112, 7.547203482874142e-05,
             4.5185009297058035e-07)
_AIRY_AGN = (0.01973399320916857, 0.39110302961568827, 1.0657989759959559, 0.9391692298166502,
             0.35146565610554764, 0.06338889196289255, 0.005858041130483885, 0.000282851600836737,
             6.98793669997261e-06, 8.117892395543892e-08, 3.415517847659236e-10)
_AIRY_AGD = (1.0, 9.30892908077442, 19.835292871831214, 15.564662893286462, 5.476860694229755,
             0.9542936116189619, 0.08645808263523921, 0.004126565238242226, 0.00010125908511650914,
             1.1716673321441352e-06, 4.9183457006293e-09)
_J0_PP = (0.0007969367292973471, 0.08283523921074408, 1.239533716464143, 5.447250030587687,
          8.74716500199817, 5.303240382353949, 1.0)
_J0_PQ = (0.0009244088105588637, 0.08562884743544745, 1.2535274390105895, 5.470977403304171,
          8.761908832370695, 5.306052882353947, 1.0)
_J0_QP = (-0.011366383889846916, -1.2825271867050931, -19.553954425773597, -93.20601521237683,
          -177.68116798048806, -147.07750515495118, -51.41053267665993, -6.050143506007285)
_J0_QQ = (1.0, 64.3178256118178, 856.4300259769806, 3882.4018360540163, 7240.467741956525,
          5930.727011873169, 2062.0933166032783, 242.0057402402914)
_J0_RP = (-4794432209.782018, 1956174919465.5657, -249248344360967.72, 9708622510473064.0)
_J0_RQ = (1.0, 499.563147152651, 173785.4016763747, 48440965.83399621, 11185553704.535683,
          2112775201154.892, 310518229857422.56, 3.1812195594320496e+16, 1.7108629408104315e+18)
_Y0_YP = (15592.436785523574, -14663929.59039716, 5435264770.518765, -982136065717.9115,
          87590639439536.7, -3466283033847297.0, 4.4273326857256984e+16, -1.8495080043698668e+16)
_Y0_YQ = (1.0, 1041.2835366425984, 626107.330137135, 268919633.39381415, 86400248710.3935,
          20297961275010.555, 3171577528429750.5, 2.5059625617265306e+17)
_J1_PP = (0.0007621256162081731, 0.07313970569409176, 1.1271960812968493, 5.112079511468076,
          8.424045901417724, 5.214515986823615, 1.0)
_J1_PQ = (0.0005713231280725487, 0.06884559087544954, 1.105142326340617, 5.073863861286015,
          8.399855543276042, 5.209828486823619, 1.0)
_J1_QP = (0.05108625947501766, 4.982138729512334, 75.82382841325453, 366.7796093601508,
          710.8563049989261, 597.4896124006136, 211.68875710057213, 25.207020585802372)
_J1_QQ = (1.0, 74.23732770356752, 1056.4488603826283, 4986.410583376536, 9562.318924047562,
          7997.041604473507, 2826.1927851763908, 336.0936078106983)
_J1_RP = (-899971225.7055594, 452228297998.19403, -72749424522181.83, 3682957328638529.0)
_J1_RQ = (1.0, 620.8364781180543, 256987.25675774884, 83514679.14319493, 22151159547.97925,
          4749141220799.914, 784369607876235.9, 8.952223361846274e+16, 5.322786203326801e+18)
_Y1_YP = (1263204747.9017804, -647355876379.1603, 114509511541823.73, -8127702555013251.0,
          2.024394757135949e+17, -7.788771962659501e+17)
_Y1_YQ = (1.0, 594.3015923461282, 235564.09294306856, 73481194.44597217, 18760131610.870617,
          3882312774962.3857, 620557727146953.8, 6.871410873553005e+16, 3.9727060811656064e+18)
_K0_A = (1.374465435613523e-16, 4.25981614279661e-14, 1.0349695257633842e-11, 1.904516377220209e-09,
         2.5347910790261494e-07, 2.286212103119452e-05, 0.001264615411446926, 0.0359799365153615,
         0.3442898999246285, -0.5353273932339028)
_K0_B = (5.300433772686263e-18, -1.6475804301524212e-17, 5.2103915050390274e-17,
         -1.678231096805412e-16, 5.512055978524319e-16, -1.848593377343779e-15,
         6.3400764774050706e-15, -2.2275133269916698e-14, 8.032890775363575e-14,
         -2.9800969231727303e-13, 1.140340588208475e-12, -4.514597883373944e-12,
         1.8559491149547177e-11, -7.957489244477107e-11, 3.577397281400301e-10,
         -1.69753450938906e-09, 8.574034017414225e-09, -4.660489897687948e-08,
         2.766813639445015e-07, -1.8317555227191195e-06, 1.39498137188765e-05,
         -0.00012849549581627802, 0.0015698838857300533, -0.0314481013119645, 2.4403030820659555)
_K1_A = (-7.023863479386288e-18, -2.427449850519366e-15, -6.666901694199329e-13,
         -1.4114883926335278e-10, -2.213387630734726e-08, -2.4334061415659684e-06,
         -0.0001730288957513052, -0.006975723859639864, -0.12261118082265715, -0.3531559607765449,
         1.5253002273389478)
_K1_B = (-5.756744483665017e-18, 1.7940508731475592e-17, -5.689462558442859e-17,
         1.838093544366639e-16, -6.057047248373319e-16, 2.038703165624334e-15,
         -7.019837090418314e-15, 2.4771544244813043e-14, -8.976705182324994e-14,
         3.3484196660784293e-13, -1.2891739609510289e-12, 5.13963967348173e-12,
         -2.1299678384275683e-11, 9.218315187605006e-11, -4.1903547593418965e-10,
         2.015049755197033e-09, -1.0345762465678097e-08, 5.7410841254500495e-08,
         -3.5019606030878126e-07, 2.406484947837217e-06, -1.936197974166083e-05,
         0.00019521551847135162, -0.002857816859622779, 0.10392373657681724, 2.7206261904844427)

_J0_ZEROS_SQUARED = (5.78318596294678452118, 30.4712623436620863991)  # j_{0,1}**2, j_{0,2}**2
_J1_ZEROS_SQUARED = (14.6819706421238932572, 49.2184563216946036703)  # j_{1,1}**2, j_{1,2}**2
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_TWO_OVER_PI = 2 / math.pi
_INV_SQRT_PI = 1 / math.sqrt(math.pi)


def _hankel(x: np.ndarray, p: tuple[tuple[float, ...], tuple[float, ...]],
            q: tuple[tuple[float, ...], tuple[float, ...]], phase: float, second_kind: bool) -> np.ndarray:
    """sqrt(2 / (pi x)) (P cos(x - phase) - 5/x Q sin(x - phase)) for J, (P sin + 5/x Q cos) for Y,
    with P and Q rational in (5 / x)**2: the large-x form (x > 5) of the order-0 and 1 functions."""
    w = 25.0 / (x * x)
    big = _rational(p, w)
    small = 5.0 / x * _rational(q, w)
    angle = x - phase
    if second_kind:
        wave = big * np.sin(angle) + small * np.cos(angle)
    else:
        wave = big * np.cos(angle) - small * np.sin(angle)
    return wave * _SQRT_2_OVER_PI / np.sqrt(x)


def _j0_array(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    z = a * a
    near = (z - _J0_ZEROS_SQUARED[0]) * (z - _J0_ZEROS_SQUARED[1]) * _rational((_J0_RP, _J0_RQ), z)
    near = np.where(a < 1e-5, 1 - z / 4, near)
    return np.where(a <= 5, near, _hankel(a, (_J0_PP, _J0_PQ), (_J0_QP, _J0_QQ), math.pi / 4, False))


def _j1_array(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    z = x * x
    near = _rational((_J1_RP, _J1_RQ), z) * x * (z - _J1_ZEROS_SQUARED[0]) * (z - _J1_ZEROS_SQUARED[1])
    far = _hankel(a, (_J1_PP, _J1_PQ), (_J1_QP, _J1_QQ), 3 * math.pi / 4, False)
    return np.where(a <= 5, near, np.where(x < 0, -far, far))


def _y0_array(x: np.ndarray) -> np.ndarray:
    near = _rational((_Y0_YP, _Y0_YQ), x * x) + _TWO_OVER_PI * np.log(x) * _j0_array(x)
    near = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, near))
    return np.where(x <= 5, near, _hankel(x, (_J0_PP, _J0_PQ), (_J0_QP, _J0_QQ), math.pi / 4, True))


def _y1_array(x: np.ndarray) -> np.ndarray:
    near = x * _rational((_Y1_YP, _Y1_YQ), x * x) + _TWO_OVER_PI * (_j1_array(x) * np.log(x) - 1 / x)
    near = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, near))
    return np.where(x <= 5, near, _hankel(x, (_J1_PP, _J1_PQ), (_J1_QP, _J1_QQ), 3 * math.pi / 4, True))


def _bessel_k(x: np.ndarray, order: int, scaled: bool) -> np.ndarray:
    """K0 or K1 (times e**x if `scaled`): a Chebyshev series in x**2 plus the log(x / 2) I term on
    (0, 2], a series in 8 / x times e**-x / sqrt(x) beyond; inf at 0, nan below."""
    near_series, far_series = (_K0_A, _K0_B) if order == 0 else (_K1_A, _K1_B)
    if order == 0:
        near = _chbevl(x * x - 2, near_series) - np.log(0.5 * x) * _i0_array(x)
    else:
        near = np.log(0.5 * x) * _i1_array(x) + _chbevl(x * x - 2, near_series) / x
    far = _chbevl(8.0 / x - 2, far_series) / np.sqrt(x)
    out = np.where(x <= 2, near * np.exp(x), far) if scaled else np.where(x <= 2, near, np.exp(-x) * far)
    return np.where(x == 0, np.inf, np.where(x < 0, np.nan, out))


def _spherical_j0_array(x: np.ndarray) -> np.ndarray:
    z = x * x
    # sin(x) / x's Taylor series below 1/2, where the quotient would lose digits
    near = 1 + z * (-1 / 6 + z * (1 / 120 + z * (-1 / 5040 + z * (1 / 362880 + z * (
        -1 / 39916800 + z * (1 / 6227020800))))))
    return np.where(np.isinf(x), 0.0, np.where(np.abs(x) < 0.5, near, np.sin(x) / x))


def _airy_ai_array(x: np.ndarray) -> np.ndarray:
    """Ai(x): the oscillating asymptotic form below -2.09, the decaying one from 2.09, and between
    them the Maclaurin series Ai(0) f(x) + Ai'(0) g(x) (summed until every element's next term is
    below eps); 0 beyond 103.892, nan at +-inf, as PyTorch's."""
    left, right = x < -2.09, x >= 2.09
    # zeta = 2/3 |x|**1.5 in PyTorch's order of operations: the phase of the waves below -2.09 is
    # zeta + pi/4, and a different rounding of a large zeta shows in the result
    zeta = np.where(x < 0, -2.0 * x * np.sqrt(-x) / 3.0, 2.0 * x * np.sqrt(x) / 3.0)
    z = 1 / zeta
    zz = z * z
    theta = zeta + 0.25 * math.pi
    oscillating = _INV_SQRT_PI / np.sqrt(np.sqrt(-x)) * (
        np.sin(theta) * (1 + zz * _rational((_AIRY_AFN, _AIRY_AFD), zz))
        - np.cos(theta) * (z * _rational((_AIRY_AGN, _AIRY_AGD), zz)))
    decaying = _INV_SQRT_PI * _rational((_AIRY_AN, _AIRY_AD), z) / (2 * np.sqrt(np.sqrt(x)) * np.exp(zeta))
    middle = np.where(left | right, 0.0, x)
    cube = middle * middle * middle
    f, g = np.ones_like(middle), middle
    m, n, k = np.ones_like(middle), middle, 1.0
    while True:
        m = m * cube / (k + 1) / (k + 2)
        n = n * cube / (k + 2) / (k + 3)
        k += 3.0
        f, g = f + m, g + n
        if not bool((np.abs(m / f) > _EPS).any()):
            break
    series = 0.355028053887817239260 * f - 0.258819403792806798405 * g
    out = np.where(left, oscillating, np.where(right, decaying, series))
    return np.where(np.isinf(x), np.nan, np.where(x > 103.892, 0.0, out))


def _no_gradient(kernel: Callable[[np.ndarray], np.ndarray], input: Tensor, op: str) -> Tensor:  # noqa: A002
    """kernel(input) as a tensor without gradient: PyTorch defines none for these functions."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    data = _real_floating(input, op)
    _refuse_half(data.dtype, input.shape, op)
    return new_leaf(_special(kernel, data))


def bessel_j0(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """J0(x), the Bessel function of the first kind of order 0. No gradient, as in PyTorch."""
    return _no_gradient(_j0_array, input, "bessel_j0")


def bessel_j1(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """J1(x), the Bessel function of the first kind of order 1. No gradient, as in PyTorch."""
    return _no_gradient(_j1_array, input, "bessel_j1")


def bessel_y0(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """Y0(x), the Bessel function of the second kind of order 0: -inf at 0, nan below.
    No gradient, as in PyTorch."""
    return _no_gradient(_y0_array, input, "bessel_y0")


def bessel_y1(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """Y1(x), the Bessel function of the second kind of order 1: -inf at 0, nan below.
    No gradient, as in PyTorch."""
    return _no_gradient(_y1_array, input, "bessel_y1")


def modified_bessel_i0(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """I0(x), the modified Bessel function of the first kind of order 0 (`i0`'s values).
    No gradient, as in PyTorch."""
    return _no_gradient(_i0_array, input, "modified_bessel_i0")


def modified_bessel_i1(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """I1(x), the modified Bessel function of the first kind of order 1 (`i1`'s values).
    No gradient, as in PyTorch."""
    return _no_gradient(_i1_array, input, "modified_bessel_i1")


def modified_bessel_k0(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """K0(x), the modified Bessel function of the second kind of order 0: inf at 0, nan below.
    No gradient, as in PyTorch."""
    return _no_gradient(lambda x: _bessel_k(x, 0, scaled=False), input, "modified_bessel_k0")


def modified_bessel_k1(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """K1(x), the modified Bessel function of the second kind of order 1: inf at 0, nan below.
    No gradient, as in PyTorch."""
    return _no_gradient(lambda x: _bessel_k(x, 1, scaled=False), input, "modified_bessel_k1")


def scaled_modified_bessel_k0(x: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """e**x K0(x), which does not underflow for large x. No gradient, as in PyTorch."""
    return _no_gradient(lambda v: _bessel_k(v, 0, scaled=True), x, "scaled_modified_bessel_k0")


def scaled_modified_bessel_k1(x: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """e**x K1(x), which does not underflow for large x. No gradient, as in PyTorch."""
    return _no_gradient(lambda v: _bessel_k(v, 1, scaled=True), x, "scaled_modified_bessel_k1")


def spherical_bessel_j0(x: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """j0(x) = sin(x) / x, the spherical Bessel function of the first kind of order 0 (1 at 0,
    0 at +-inf). No gradient, as in PyTorch."""
    return _no_gradient(_spherical_j0_array, x, "spherical_bessel_j0")


def airy_ai(x: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """Ai(x), the Airy function of the first kind, the solution of y'' = x y that decays as x -> inf.
    No gradient, as in PyTorch."""
    return _no_gradient(_airy_ai_array, x, "airy_ai")


# --- orthogonal polynomials ------------------------------------------------------------------------
# P_n(x) for a tensor or number n (truncated to an integer; nan, inf and negative n give 0), by
# the three-term recurrence from P_0 = 1 and P_1, run for all elements at once up to the largest
# degree still needed (an element drops out once it is nan, as PyTorch's loop stops). PyTorch's
# shortcuts are kept: the closed forms at x = +-1 (x = 0 and 1 when shifted), the trigonometric
# forms for |x| < 1 and large n (Chebyshev), nan for n beyond 128 (float32) or 512 (float64) (Hermite).
# Computed in the result's dtype, as PyTorch's are (so float32 overflows where PyTorch's does);
# no gradient, as in PyTorch.


def _degree(n: np.ndarray) -> np.ndarray:
    """n as int64, truncated toward zero as C's cast; nan, +-inf and |n| >= 2**63 become -1."""
    if n.dtype.kind in "biu":
        return n.astype(np.int64)
    usable = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
    return np.where(usable, np.trunc(np.where(usable, n, -1)), -1).astype(np.int64)


def _recurrence(x: np.ndarray, n: np.ndarray, first: np.ndarray,
                step: Callable[[int, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """P_n(x) for n >= 0 from P_0 = 1, P_1 = first and P_k = step(k, P_(k-2), P_(k-1))."""
    p, q = np.ones_like(x), first
    k = 2
    active = (n >= k) & ~np.isnan(q)
    while bool(active.any()):
        p, q = np.where(active, q, p), np.where(active, step(k, p, q), q)
        k += 1
        active = active & (n >= k) & ~np.isnan(q)
    return np.where(n == 0, 1, q).astype(x.dtype, copy=False)


def _chebyshev(x: np.ndarray, n: np.ndarray, kind: str, shifted: bool) -> np.ndarray:
    """T, U, V or W (`kind`) of degree n at x, or of the shifted polynomial (at 2x - 1)."""
    dtype = x.dtype
    y = x + x - 1 if shifted else x
    at_one, at_minus_one = ((x == 1), (x == 0)) if shifted else ((y == 1), (y == -1))
    sign = np.where(n % 2 == 0, 1, -1).astype(dtype)
    n_plus_1 = (n + 1).astype(dtype)
    two_n_plus_1 = (n + n + 1).astype(dtype)
    nf = n.astype(dtype)
    theta = np.arccos(y)
    threshold = {"t": 6, "u": 6 if shifted else 8, "v": 6 if shifted else 8, "w": 4 if shifted else 8}[kind]
    if kind == "t":
        ends, trig, first = (1.0, sign), np.cos(nf * theta), y
    elif kind == "u":
        sine = np.sin(theta)
        trig = np.where(sine != 0, np.sin(n_plus_1 * theta) / sine, n_plus_1 * np.cos(n_plus_1 * theta) / y)
        ends, first = (n_plus_1, sign * n_plus_1), y + y
    elif kind == "v":
        trig = np.where(np.sin(theta / 2) != 1, np.cos((nf + 0.5) * theta) / np.cos(theta / 2),
                        sign * two_n_plus_1)
        ends, first = (1.0, sign * two_n_plus_1), y + y - 1
    else:
        at_zero_angle = sign if shifted else np.where(x > 0, two_n_plus_1, sign)
        trig = np.where(np.cos(theta / 2) != 1, np.sin((nf + 0.5) * theta) / np.sin(theta / 2), at_zero_angle)
        ends, first = (two_n_plus_1, sign), y + y + 1
    use_trig = (n > threshold) & (np.abs(y) < 1)
    settled = (n < 0) | at_one | at_minus_one | use_trig
    out = _recurrence(y, np.where(settled, 0, n), first, lambda k, p, q: (y + y) * q - p)
    out = np.where(use_trig, trig, out)
    out = np.where(at_minus_one, ends[1], out)
    out = np.where(at_one, ends[0], out)
    return np.where(n < 0, 0, out).astype(dtype, copy=False)


_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}


def _hermite(x: np.ndarray, n: np.ndarray, physicists: bool) -> np.ndarray:
    """H_n(x) (`physicists`) or He_n(x): nan for n above the dtype's limit, as PyTorch's."""
    beyond = n > _HERMITE_LIMIT[x.dtype]
    if physicists:
        out = _recurrence(x, np.where(beyond, 0, n), x + x, lambda k, p, q: (x + x) * q - (2 * k - 2) * p)
    else:
        out = _recurrence(x, np.where(beyond, 0, n), x, lambda k, p, q: x * q - (k - 1) * p)
    return np.where(n < 0, 0, np.where(beyond, np.nan, out)).astype(x.dtype, copy=False)


def _laguerre(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """L_n(x): 1 at x = 0."""
    out = _recurrence(x, np.where(x == 0, 0, n), 1 - x,
                      lambda k, p, q: ((2 * k - 2 + (1 - x)) * q - (k - 1) * p) / k)
    return np.where(n < 0, 0, np.where(x == 0, 1, out)).astype(x.dtype, copy=False)


def _legendre(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """P_n(x): 1 at x = 1, (-1)**n at x = -1."""
    ends = np.abs(x) == 1
    out = _recurrence(x, np.where(ends, 0, n), x, lambda k, p, q: ((2 * k - 1) * x * q - (k - 1) * p) / k)
    out = np.where(ends, np.where((x > 0) | (n % 2 == 0), 1, -1), out)
    return np.where(n < 0, 0, out).astype(x.dtype, copy=False)


def _polynomial(kernel: Callable[[np.ndarray, np.ndarray], np.ndarray], input: Any, n: Any,  # noqa: A002
                op: str) -> Tensor:
    """kernel(x, n) for a tensor or number x and n (not both numbers), broadcast, in PyTorch's
    result dtype (that of x and n promoted; an integer one gives the default float)."""
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"{op}(): expected a Tensor as input or n, got {type(input).__name__} and "
                        f"{type(n).__name__}")
    x, degree = _operands(input, n)
    dtype = _promoted(x.data, degree.data, floating=True)[0].dtype
    _refuse_complex_dtype(dtype, op, x.shape, degree.shape)
    _refuse_half(dtype, x.shape, op)
    try:
        xb, nb = np.broadcast_arrays(x.data.astype(dtype, copy=False), _degree(degree.data))
    except ValueError:
        raise ShapeError(f"{op}: shapes {x.shape} (input) and {degree.shape} (n) can't be broadcast "
                         "together") from None
    with np.errstate(all="ignore"):
        return new_leaf(kernel(xb, nb))


def chebyshev_polynomial_t(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """T_n(x), the Chebyshev polynomial of the first kind: T_0 = 1, T_1 = x,
    T_k = 2x T_(k-1) - T_(k-2); cos(n acos(x)) on |x| < 1. No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _chebyshev(v, k, "t", shifted=False), x, n, "chebyshev_polynomial_t")


def chebyshev_polynomial_u(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """U_n(x), the Chebyshev polynomial of the second kind: U_0 = 1, U_1 = 2x,
    U_k = 2x U_(k-1) - U_(k-2). No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _chebyshev(v, k, "u", shifted=False), x, n, "chebyshev_polynomial_u")


def chebyshev_polynomial_v(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """V_n(x), the Chebyshev polynomial of the third kind: V_0 = 1, V_1 = 2x - 1,
    V_k = 2x V_(k-1) - V_(k-2). No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _chebyshev(v, k, "v", shifted=False), x, n, "chebyshev_polynomial_v")


def chebyshev_polynomial_w(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """W_n(x), the Chebyshev polynomial of the fourth kind: W_0 = 1, W_1 = 2x + 1,
    W_k = 2x W_(k-1) - W_(k-2). No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _chebyshev(v, k, "w", shifted=False), x, n, "chebyshev_polynomial_w")


def shifted_chebyshev_polynomial_t(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """T*_n(x) = T_n(2x - 1), the Chebyshev polynomial of the first kind shifted to [0, 1].
    No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _chebyshev(v, k, "t", shifted=True), x, n,
                       "shifted_chebyshev_polynomial_t")


def shifted_chebyshev_polynomial_u(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """U*_n(x) = U_n(2x - 1), the Chebyshev polynomial of the second kind shifted to [0, 1].
    No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _chebyshev(v, k, "u", shifted=True), x, n,
                       "shifted_chebyshev_polynomial_u")


def shifted_chebyshev_polynomial_v(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """V*_n(x) = V_n(2x - 1), the Chebyshev polynomial of the third kind shifted to [0, 1].
    No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _chebyshev(v, k, "v", shifted=True), x, n,
                       "shifted_chebyshev_polynomial_v")


def shifted_chebyshev_polynomial_w(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """W*_n(x) = W_n(2x - 1), the Chebyshev polynomial of the fourth kind shifted to [0, 1].
    No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _chebyshev(v, k, "w", shifted=True), x, n,
                       "shifted_chebyshev_polynomial_w")


def hermite_polynomial_h(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """H_n(x), the physicists' Hermite polynomial: H_0 = 1, H_1 = 2x,
    H_k = 2x H_(k-1) - 2(k - 1) H_(k-2). No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _hermite(v, k, physicists=True), x, n, "hermite_polynomial_h")


def hermite_polynomial_he(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """He_n(x), the probabilists' Hermite polynomial: He_0 = 1, He_1 = x,
    He_k = x He_(k-1) - (k - 1) He_(k-2). No gradient, as in PyTorch."""
    return _polynomial(lambda v, k: _hermite(v, k, physicists=False), x, n, "hermite_polynomial_he")


def laguerre_polynomial_l(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """L_n(x), the Laguerre polynomial: L_0 = 1, L_1 = 1 - x,
    k L_k = (2k - 1 - x) L_(k-1) - (k - 1) L_(k-2). No gradient, as in PyTorch."""
    return _polynomial(_laguerre, x, n, "laguerre_polynomial_l")


def legendre_polynomial_p(x: Tensor | float, n: Tensor | float) -> Tensor:  # noqa: A002
    """P_n(x), the Legendre polynomial: P_0 = 1, P_1 = x,
    k P_k = (2k - 1) x P_(k-1) - (k - 1) P_(k-2). No gradient, as in PyTorch."""
    return _polynomial(_legendre, x, n, "legendre_polynomial_p")
