"""Special functions (`tg.lgamma`, `tg.special.*`) against PyTorch, closed forms and finite differences.

Each function is swept over thousands of float64 points (negative non-integers, points next to
the poles, large arguments, the tails) and must stay within a few ulps of PyTorch. Where PyTorch
is itself off (its trigamma stops a series early, its erfcx squares x before exp, its ndtr rounds
the lower tail to 0, its log_ndtr loses the upper tail) the values must match closed forms or
high-precision references instead, and the sweep against PyTorch allows PyTorch's error. Then
PyTorch's values at special points (poles, +-1, 0, +-inf, nan), its gradients (`derivatives.yaml`)
in float64 and float32, finite differences, its dtype rules (an integer input gives float32) and
its errors for bad arguments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan


def ulps(ours: np.ndarray, theirs: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """|ours - theirs| in units of the last place of the larger (0 where equal, both nan included)."""
    a, b = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    spacing = np.spacing(np.maximum(np.abs(a), np.abs(b)).astype(dtype)).astype(np.float64)
    with np.errstate(all="ignore"):
        return np.where(same, 0.0, np.abs(a - b) / spacing)


def assert_ulps(ours: np.ndarray, theirs: np.ndarray, budget: float, x: np.ndarray, name: str,
                dtype: type = np.float64) -> None:
    error = ulps(ours, theirs, dtype)
    worst = int(np.argmax(error))
    assert error[worst] <= budget, (f"{name}: {error[worst]:.3g} ulps at x={x.flat[worst]!r}: "
                                    f"{np.asarray(ours).flat[worst]!r} vs {np.asarray(theirs).flat[worst]!r}")


def _grid(rng: np.random.Generator) -> np.ndarray:
    """Real arguments: uniform over [-60, 60] and [0, 10], log-spaced up to 1e300, just off the poles."""
    poles = np.arange(-30.0, 1.0)
    return np.concatenate([
        rng.uniform(-60, 60, 4000), rng.uniform(0, 10, 2000), 10.0 ** rng.uniform(-300, 300, 600),
        -(10.0 ** rng.uniform(-300, 1.5, 600)), poles + 1e-9, poles - 1e-9, poles + 0.5, poles + 1e-3,
        [1.0, 2.0, 1.4616321449683622, 0.5, 2.5, 8.0, 10.0, 1e17, 2.0 ** 52 + 0.5],
    ])


RNG = np.random.default_rng(20240611)
REALS = _grid(RNG)
NON_POLES = REALS[~((REALS <= 0) & (np.round(REALS) == REALS))]
POSITIVE = NON_POLES[NON_POLES > 0]
UNIT = np.concatenate([RNG.uniform(-1, 1, 4000), 1 - 10.0 ** RNG.uniform(-16, -1, 500),
                       -1 + 10.0 ** RNG.uniform(-16, -1, 500), 10.0 ** RNG.uniform(-300, 0, 300)])
PROBABILITY = np.concatenate([RNG.uniform(0, 1, 4000), 10.0 ** RNG.uniform(-300, 0, 500),
                              1 - 10.0 ** RNG.uniform(-16, 0, 500)])
MODERATE = np.concatenate([RNG.uniform(-40, 40, 4000), RNG.uniform(-4, 4, 2000),
                           [0.0, -0.0, 0.46875, -0.46875]])
BESSEL = np.concatenate([RNG.uniform(-30, 30, 4000), RNG.uniform(-720, 720, 1000),
                         10.0 ** RNG.uniform(-300, 2.85, 500), [0.0, -0.0, 8.0, -8.0, 700.0, 710.0, 800.0]])
BELOW_ONE = np.concatenate([MODERATE[MODERATE < 1], -(10.0 ** RNG.uniform(1, 150, 300))])


def _both(fn, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """fn(m, t) with m = tensorgrad and with m = torch, on float64 x: both results' arrays."""
    ours = fn(tg, tg.tensor(x, dtype=tg.float64)).data
    return ours, fn(torch, torch.tensor(x, dtype=torch.float64)).numpy()


# name: (the function of (m, t), m being tensorgrad or torch; arguments; most ulps from PyTorch)
SWEEPS = {
    "lgamma x>0": (lambda m, t: m.lgamma(t), POSITIVE, 4),
    "digamma": (lambda m, t: m.digamma(t), NON_POLES, 2),
    "polygamma(2)": (lambda m, t: m.polygamma(2, t), POSITIVE, 4),
    "polygamma(3)": (lambda m, t: t.polygamma(3), NON_POLES[NON_POLES > -60], 64),
    "polygamma(5) x>0": (lambda m, t: m.special.polygamma(5, t), POSITIVE, 8),
    "mvlgamma(p=4)": (lambda m, t: m.mvlgamma(t, 4), POSITIVE[POSITIVE > 1.5], 8),
    "erfinv": (lambda m, t: m.erfinv(t), UNIT, 4),
    "erfcx x>-1": (lambda m, t: m.special.erfcx(t), MODERATE[MODERATE > -1], 8),
    "ndtr x>-1": (lambda m, t: m.special.ndtr(t), MODERATE[MODERATE > -1], 4),
    "ndtri": (lambda m, t: m.special.ndtri(t), PROBABILITY, 8),
    "log_ndtr x<1": (lambda m, t: m.special.log_ndtr(t), BELOW_ONE, 8),
    "i0": (lambda m, t: m.i0(t), BESSEL, 6),
    "i0e": (lambda m, t: m.special.i0e(t), BESSEL, 6),
    "i1": (lambda m, t: m.special.i1(t), BESSEL, 16),
    "i1e": (lambda m, t: m.special.i1e(t), BESSEL, 16),
    "entr": (lambda m, t: m.special.entr(t), np.concatenate([POSITIVE, -POSITIVE[:100], [0.0]]), 2),
}


@pytest.mark.parametrize("name", SWEEPS)
def test_values_within_a_few_ulps_of_pytorch(name):
    fn, x, budget = SWEEPS[name]
    ours, theirs = _both(fn, x)
    assert ours.dtype == np.float64 and ours.shape == x.shape
    assert_ulps(ours, theirs, budget, x, name)


def test_lgamma_of_negative_arguments_as_pytorch():
    """fdlibm's reflection, as C's lgamma outside (-28, -2): a few ulps. Between -28 and -2 glibc has
    code of its own, closer next to the zeros of lgamma; there the error is absolute, 2e-16."""
    x = NON_POLES[NON_POLES < 0]
    ours, theirs = _both(lambda m, t: m.lgamma(t), x)
    near_zero = (np.abs(theirs) < 0.5) & (x > -28) & (x < -2)
    assert_ulps(ours[~near_zero], theirs[~near_zero], 32, x[~near_zero], "lgamma x<0")
    assert np.max(np.abs(ours[near_zero] - theirs[near_zero])) < 1e-15


def test_trigamma_is_exact_where_pytorch_is_off_by_1e_10():
    """psi'(1/2) = pi**2/2, psi'(1) = pi**2/6, psi'(-1/2) = pi**2/2 + 4, and 40-digit references
    (mpmath) elsewhere, among them 1.42695..., where PyTorch's trigamma is 5e-10 off."""
    references = {0.5: math.pi ** 2 / 2, 1.0: math.pi ** 2 / 6, -0.5: math.pi ** 2 / 2 + 4,
                  0.25: 17.19732915450711, -2.7: 14.769375845132314, 1.4269557574919067: 0.9993397457188726,
                  5.5: 0.19934238698962767, 3.0: 0.39493406684822646, 1e-3: 1000001.6425331958,
                  30.25: 0.0336102817442533}
    x = np.array(list(references))
    ours = tg.polygamma(1, tg.tensor(x, dtype=tg.float64)).data
    assert_ulps(ours, list(references.values()), 2, x, "trigamma")
    theirs = torch.polygamma(1, torch.tensor(x, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)  # PyTorch: right to 9 digits
    assert ulps(theirs[5], references[1.4269557574919067]) > 1e5  # ... and not to 16


def test_trigamma_sweep_against_pytorch_to_its_own_precision():
    """(Within 1e-6 of a pole, PyTorch's sin(pi x) costs it more: 1e-5 relative at 1e-9 from -30.)"""
    x = NON_POLES[(np.abs(NON_POLES) < 1e6) & (np.abs(NON_POLES - np.round(NON_POLES)) > 1e-6)]
    ours, theirs = _both(lambda m, t: m.polygamma(1, t), x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_high_order_polygamma_reference_values():
    """n! exactly (PyTorch's exp(lgamma(n + 1)) is ~15 ulps off for n = 10) and the reflection at
    negative x, accurate next to a zero of psi''."""
    x = np.array([4.259266569245874, -21.500044873210555])
    ours = np.array([tg.polygamma(10, tg.tensor(x[:1], dtype=tg.float64)).item(),
                     tg.polygamma(2, tg.tensor(x[1:], dtype=tg.float64)).item()])
    assert_ulps(ours, [-0.48414503768600775, -0.010807158893097628], 8, x, "polygamma")


def test_tails_where_pytorch_loses_digits():
    """ndtr's lower tail, erfcx's negative tail and log_ndtr's upper tail, against 40-digit values."""
    x = tg.tensor([-10.0, -30.0], dtype=tg.float64)
    assert_ulps(tg.special.ndtr(x).data, [7.619853024160525e-24, 4.906713927148187e-198], 4, x.data, "ndtr")
    assert torch.special.ndtr(torch.tensor(-10.0, dtype=torch.float64)).item() == 0.0  # PyTorch's 1 + erf
    x = tg.tensor([-20.0, -10.0], dtype=tg.float64)
    assert_ulps(tg.special.erfcx(x).data, [1.0442939379528289e+174, 5.376234283632271e+43], 4, x.data,
                "erfcx")
    x = tg.tensor([30.0, 10.0], dtype=tg.float64)
    assert_ulps(tg.special.log_ndtr(x).data, [-4.906713927148187e-198, -7.619853024160525e-24], 4, x.data,
                "log_ndtr")
    x = tg.tensor([1 - 2.0 ** -40], dtype=tg.float64)
    assert_ulps(tg.erfinv(x).data, [5.05125408524939], 2, x.data, "erfinv")


def test_tails_against_pytorch_to_its_precision():
    ours, theirs = _both(lambda m, t: m.special.erfcx(t), MODERATE)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13)  # PyTorch's 2 exp(x*x): ~x**2 ulps
    ours, theirs = _both(lambda m, t: m.special.ndtr(t), MODERATE)
    np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=2e-16)
    ours, theirs = _both(lambda m, t: m.special.log_ndtr(t), MODERATE)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-320)  # (subnormal results)


def test_against_high_precision_references():
    """A sample of each function against mpmath at 50 digits (PyTorch's own references)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-30, 30, 60), rng.uniform(0.01, 5, 40)])
    x = x[np.abs(x - np.round(x)) > 1e-6]
    u = rng.uniform(-0.999999, 0.999999, 60)
    cases = [
        (tg.digamma, mpmath.digamma, x, 1e-13),  # relative to the result: digamma's root cancels
        (lambda t: tg.polygamma(1, t), lambda v: mpmath.polygamma(1, v), x, 1e-15),
        (lambda t: tg.polygamma(4, t), lambda v: mpmath.polygamma(4, v), x, 4e-15),
        (tg.erfinv, mpmath.erfinv, u, 1e-15),
        (tg.special.erfcx, lambda v: mpmath.exp(v * v) * mpmath.erfc(v), x, 1e-15),
        (tg.special.ndtr, mpmath.ncdf, x, 1e-15),
        (tg.special.i1, lambda v: mpmath.besseli(1, v), x, 3e-15),
    ]
    for fn, exact, args, rtol in cases:
        ours = fn(tg.tensor(args, dtype=tg.float64)).data
        np.testing.assert_allclose(ours, [float(exact(mpmath.mpf(float(v)))) for v in args], rtol=rtol)
    lg = tg.lgamma(tg.tensor(x[x > 0], dtype=tg.float64)).data
    np.testing.assert_allclose(lg, [float(mpmath.loggamma(v)) for v in x[x > 0]], rtol=1e-15, atol=1e-16)


# --- PyTorch's values at special points -----------------------------------------------------------

SPECIAL_POINTS = {
    "lgamma": (lambda m, t: m.lgamma(t), [0.0, -0.0, -1.0, -2.0, -1e20, 1.0, 2.0, INF, -INF, NAN, 1e-320,
                                          -1e-320, 1e306]),
    "digamma": (lambda m, t: m.digamma(t), [0.0, -0.0, -1.0, -5.0, -INF, INF, NAN, 1.0, 10.0, 1e-310, 1e18]),
    "polygamma(2)": (lambda m, t: m.polygamma(2, t), [0.0, -1.0, -3.0, INF, -INF, NAN, 1e-300]),
    "polygamma(3)": (lambda m, t: m.polygamma(3, t), [0.0, -0.0, -1.0, -INF, NAN, 1e-300]),
    "erfinv": (lambda m, t: m.erfinv(t), [1.0, -1.0, 1.5, -1.0000001, 0.0, -0.0, NAN, INF, 1e-310]),
    "erfcx": (lambda m, t: m.special.erfcx(t), [INF, -INF, NAN, 0.0, -27.0, 1e300, 5e7, 1e-320]),
    "ndtr": (lambda m, t: m.special.ndtr(t), [INF, -INF, NAN, 0.0, 40.0]),
    "ndtri": (lambda m, t: m.special.ndtri(t), [0.0, 1.0, -0.1, 1.1, 0.5, NAN, 1e-320]),
    "log_ndtr": (lambda m, t: m.special.log_ndtr(t), [INF, -INF, NAN, 0.0, 40.0, -1e5]),
    "i0": (lambda m, t: m.i0(t), [0.0, 710.0, -710.0, INF, -INF, NAN]),
    "i0e": (lambda m, t: m.special.i0e(t), [0.0, INF, -INF, NAN, 1e300]),
    "i1": (lambda m, t: m.special.i1(t), [0.0, -0.0, 710.0, -710.0, INF, -INF, NAN]),
    "i1e": (lambda m, t: m.special.i1e(t), [0.0, INF, -INF, NAN, -1e300]),
    "entr": (lambda m, t: m.special.entr(t), [0.0, -1.0, INF, NAN, 1.0]),
}


@pytest.mark.parametrize("name", SPECIAL_POINTS)
def test_special_points_as_pytorch(name):
    fn, points = SPECIAL_POINTS[name]
    x = np.array(points)
    ours, theirs = _both(fn, x)
    np.testing.assert_array_equal(np.signbit(ours) | np.isnan(ours), np.signbit(theirs) | np.isnan(theirs))
    assert_ulps(ours, theirs, 4, x, name)


def test_poles_of_trigamma_are_infinite():
    """psi' has a double pole at 0 and the negative integers: +inf, where PyTorch's sin(pi x) gives
    6.6e32 at -1 (it agrees at 0); +-inf give nan and 0 as in PyTorch."""
    out = tg.polygamma(1, tg.tensor([0.0, -1.0, -7.0, -1e20, -INF, INF], dtype=tg.float64)).data
    np.testing.assert_array_equal(out, [INF, INF, INF, INF, NAN, 0.0])


def test_zeta_against_pytorch():
    s = np.array([2.0, 1.0, 0.5, 3.0, 3.0, 3.5, 4.0, 2.0, 7.0])
    q = np.array([1.0, 1.0, 1.0, -1.0, -1.5, -1.5, 0.25, 1e10, 3.0])
    ours = tg.special.zeta(tg.tensor(s, dtype=tg.float64), tg.tensor(q, dtype=tg.float64)).data
    theirs = torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    assert_ulps(ours, theirs, 2, q, "zeta")
    assert tg.special.zeta(2, tg.tensor([1, 2])).dtype == tg.float32  # integers: the default float
    np.testing.assert_allclose(tg.special.zeta(tg.tensor([2.0, 4.0]), 1.0).data,
                               [math.pi ** 2 / 6, math.pi ** 4 / 90], rtol=1e-7)


# --- gradients ------------------------------------------------------------------------------------

# name: (the function of (m, t), its arguments); every input gets a gradient.
GRADIENTS = {
    "lgamma": (lambda m, t: m.lgamma(t), [-3.7, -0.4, 0.3, 1.5, 4.0, 17.2]),
    "digamma": (lambda m, t: m.digamma(t), [-3.7, -0.4, 0.3, 1.5, 4.0, 17.2]),
    "polygamma(1)": (lambda m, t: m.polygamma(1, t), [-3.7, -0.4, 0.3, 1.5, 4.0]),
    "polygamma(3)": (lambda m, t: t.polygamma(3), [-2.2, 0.3, 1.5, 4.0]),
    "mvlgamma": (lambda m, t: m.mvlgamma(t, 3), [1.2, 2.5, 7.0]),
    "multigammaln": (lambda m, t: m.special.multigammaln(t, 1), [0.3, 2.5]),
    "erfinv": (lambda m, t: m.erfinv(t), [-0.95, -0.3, 0.0, 0.6, 0.99]),
    "erfcx": (lambda m, t: m.special.erfcx(t), [-3.0, -0.3, 0.2, 2.0, 30.0]),
    "ndtr": (lambda m, t: m.special.ndtr(t), [-3.0, -0.3, 0.2, 2.0]),
    "ndtri": (lambda m, t: m.special.ndtri(t), [0.01, 0.3, 0.5, 0.97]),
    "log_ndtr": (lambda m, t: m.special.log_ndtr(t), [-12.0, -1.5, -0.3, 0.2, 6.0]),
    "i0": (lambda m, t: m.i0(t), [-9.0, -0.5, 0.3, 2.0, 12.0]),
    "i0e": (lambda m, t: m.special.i0e(t), [-9.0, -0.5, 0.3, 2.0, 12.0]),
    "i1": (lambda m, t: m.special.i1(t), [-9.0, -0.5, 0.3, 2.0, 12.0]),
    "i1e": (lambda m, t: m.special.i1e(t), [-9.0, -0.5, 0.3, 2.0, 12.0]),
    "entr": (lambda m, t: m.special.entr(t), [0.1, 0.5, 2.0]),
    "gammaln": (lambda m, t: m.special.gammaln(t), [0.7, 3.0]),
    "psi": (lambda m, t: m.special.psi(t), [0.7, 3.0]),
    "expit": (lambda m, t: m.special.expit(t), [-2.0, 0.5]),
    "logit": (lambda m, t: m.special.logit(t, 0.1), [0.05, 0.5, 0.7]),
    "sinc": (lambda m, t: m.special.sinc(t), [-1.3, 0.4, 2.5]),
    "round": (lambda m, t: m.special.round(t), [-1.3, 0.4, 2.7]),
    "exp2/expm1/log1p": (lambda m, t: m.special.exp2(t) + m.special.expm1(t) * m.special.log1p(t),
                         [0.3, 1.5]),
    "erf/erfc": (lambda m, t: m.special.erf(t) * m.special.erfc(t), [-0.7, 0.4]),
    "softmax": (lambda m, t: m.special.softmax(t, 0), [0.3, -1.0, 2.0]),
    "log_softmax": (lambda m, t: m.special.log_softmax(t, dim=0), [0.3, -1.0, 2.0]),
    "logsumexp": (lambda m, t: m.special.logsumexp(t, 0), [0.3, -1.0, 2.0]),
}


@pytest.mark.parametrize("name", GRADIENTS)
def test_gradients_match_pytorch_and_finite_differences(name):
    fn, points = GRADIENTS[name]
    x = tg.tensor(points, dtype=tg.float64, requires_grad=True)
    xt = torch.tensor(points, dtype=torch.float64, requires_grad=True)
    out, expected = fn(tg, x), fn(torch, xt)
    weights = np.linspace(0.5, 1.5, out.data.size).reshape(out.shape)
    (out * tg.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-9)
    # PyTorch's trigamma (digamma's derivative) is 1e-10 off; the rest agree to rounding.
    np.testing.assert_allclose(x.grad, xt.grad.numpy(), rtol=1e-9 if name in ("digamma", "psi") else 1e-12)
    assert tg.gradcheck(lambda t: fn(tg, t), [tg.tensor(points, dtype=tg.float64, requires_grad=True)],
                        elementwise=True)


def test_binary_gradients_match_pytorch():
    """xlog1py: d/da log1p(b) (0 where a = 0 and b <= -1), d/db a / (1 + b); zeta: d/dq -s zeta(s + 1, q)."""
    a_values, b_values = [0.0, 0.0, 1.0, 2.0, -1.5, 0.0], [-1.0, -2.0, -1.0, 3.0, 0.5, NAN]
    a, b = (tg.tensor(v, dtype=tg.float64, requires_grad=True) for v in (a_values, b_values))
    at, bt = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a_values, b_values))
    out, expected = tg.special.xlog1py(a, b), torch.special.xlog1py(at, bt)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_array_equal(out.data, expected.detach().numpy())
    np.testing.assert_array_equal(a.grad, at.grad.numpy())
    np.testing.assert_array_equal(b.grad, bt.grad.numpy())
    q = tg.tensor([0.5, 2.0, 7.5], dtype=tg.float64, requires_grad=True)
    qt = torch.tensor([0.5, 2.0, 7.5], dtype=torch.float64, requires_grad=True)
    tg.special.zeta(3.0, q).sum().backward()
    torch.special.zeta(3.0, qt).sum().backward()
    np.testing.assert_allclose(q.grad, qt.grad.numpy(), rtol=1e-14)
    assert tg.gradcheck(lambda u, v: tg.special.xlog1py(u, v), [
        tg.tensor([0.3, -1.2, 2.0], dtype=tg.float64, requires_grad=True),
        tg.tensor([0.5, 1.5, -0.5], dtype=tg.float64, requires_grad=True)])
    assert tg.gradcheck(lambda v: tg.special.zeta(2.5, v),
                        [tg.tensor([0.7, 3.0], dtype=tg.float64, requires_grad=True)])


def test_gradients_at_special_points_as_pytorch():
    """i1 and i1e have slope 1/2 at 0 (PyTorch takes the limit), i0e slope 0 there; erfinv and ndtri
    are infinitely steep at their ends; entr's slope at 0 is inf; lgamma's at a pole is nan."""
    cases = {
        "i1": [0.0, -0.0, 1e-20], "i1e": [0.0, 1e-20], "i0e": [0.0, -0.0], "erfinv": [-1.0, 1.0, 0.5],
        "ndtri": [0.0, 1.0, 0.5], "entr": [0.0, -1.0, 1.0], "gammaln": [-2.0, 0.0, 3.0], "i0": [0.0, 3.0],
    }
    for name, points in cases.items():
        x = tg.tensor(points, dtype=tg.float64, requires_grad=True)
        xt = torch.tensor(points, dtype=torch.float64, requires_grad=True)
        getattr(tg.special, name)(x).backward(tg.ones(len(points), dtype=tg.float64))
        getattr(torch.special, name)(xt).backward(torch.ones(len(points), dtype=torch.float64))
        np.testing.assert_allclose(x.grad, xt.grad.numpy(), rtol=1e-12, err_msg=name)


def test_polygamma_has_no_gradient_in_n_and_zeta_none_in_x():
    with pytest.raises(TypeError, match="polygamma.*'n' must be int"):
        tg.polygamma(tg.tensor([1]), tg.tensor([1.0]))  # a 0-d int tensor is an int, as in PyTorch
    s = tg.tensor([2.0, 3.0], requires_grad=True)
    out = tg.special.zeta(s, tg.tensor(1.0))
    with pytest.raises(NotImplementedError, match="zeta.*first argument"):
        out.sum().backward()
    st = torch.tensor([2.0, 3.0], requires_grad=True)
    with pytest.raises(NotImplementedError):
        torch.special.zeta(st, torch.tensor(1.0)).sum().backward()


# --- dtypes, float32, methods and names -----------------------------------------------------------

UNARY = {
    "lgamma": (lambda m, t: m.lgamma(t), [0.3, 2.5, -1.5, 7.0]),
    "digamma": (lambda m, t: m.digamma(t), [0.3, 2.5, -1.5, 7.0]),
    "polygamma": (lambda m, t: m.polygamma(2, t), [0.3, 2.5, -1.5, 7.0]),
    "mvlgamma": (lambda m, t: m.mvlgamma(t, 2), [1.3, 2.5, 7.0]),
    "erfinv": (lambda m, t: m.erfinv(t), [0.3, -0.9, 0.999]),
    "erfcx": (lambda m, t: m.special.erfcx(t), [0.3, -2.5, 7.0]),
    "ndtr": (lambda m, t: m.special.ndtr(t), [0.3, -2.5, 7.0]),
    "ndtri": (lambda m, t: m.special.ndtri(t), [0.3, 0.01, 0.9]),
    "log_ndtr": (lambda m, t: m.special.log_ndtr(t), [0.3, -2.5, 7.0]),
    "i0": (lambda m, t: m.i0(t), [0.3, -2.5, 9.0]),
    "i0e": (lambda m, t: m.special.i0e(t), [0.3, -2.5, 9.0]),
    "i1": (lambda m, t: m.special.i1(t), [0.3, -2.5, 9.0]),
    "i1e": (lambda m, t: m.special.i1e(t), [0.3, -2.5, 9.0]),
    "entr": (lambda m, t: m.special.entr(t), [0.3, 2.5, 7.0]),
}


@pytest.mark.parametrize("name", UNARY)
def test_float32_in_float32_out_correctly_rounded(name):
    """float32 in, float32 out: the float64 value rounded (PyTorch's float32 kernels are a few ulps
    off that, more where they cancel), so compared with PyTorch's float64 result, rounded."""
    fn, points = UNARY[name]
    x = tg.tensor(points, dtype=tg.float32, requires_grad=True)
    out = fn(tg, x)
    assert out.dtype == tg.float32
    exact = fn(torch, torch.tensor(np.float32(points), dtype=torch.float64)).numpy().astype(np.float32)
    assert_ulps(out.data, exact, 1, np.array(points), name, np.float32)
    theirs = fn(torch, torch.tensor(points, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(out.data, theirs, rtol=5e-6)
    out.sum().backward()
    assert x.grad.dtype == np.float32


@pytest.mark.parametrize("name", UNARY)
def test_integer_and_bool_inputs_give_the_default_float(name):
    fn, _ = UNARY[name]
    for values in ([1, 2, 3], [True, False]) if name != "mvlgamma" else ([1, 2, 3],):
        out, expected = fn(tg, tg.tensor(values)), fn(torch, torch.tensor(values))
        assert out.dtype == tg.float32 and expected.dtype == torch.float32
        np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-6, equal_nan=True)


def test_names_methods_and_in_place_forms():
    assert tg.special.psi is tg.special.digamma is tg.digamma
    assert tg.special.gammaln is tg.lgamma and tg.special.multigammaln is tg.mvlgamma
    assert tg.special.expit is tg.sigmoid and tg.special.erf is tg.erf and tg.special.logit is tg.logit
    for name in tg.special.__all__:
        assert hasattr(torch.special, name), name
        assert getattr(tg.special, name).__doc__, name
    x = tg.tensor([0.3, 1.7], dtype=tg.float64)
    for method in ("lgamma", "digamma", "erfinv", "i0"):
        np.testing.assert_array_equal(getattr(x, method)().data, getattr(tg, method)(x).data)
    np.testing.assert_array_equal(x.polygamma(2).data, tg.polygamma(2, x).data)
    np.testing.assert_array_equal(x.mvlgamma(1).data, tg.lgamma(x).data)
    leaf = tg.tensor([0.3, 1.7], dtype=tg.float64, requires_grad=True)
    leaf_t = torch.tensor([0.3, 1.7], dtype=torch.float64, requires_grad=True)
    y, yt = leaf * 2, leaf_t * 2
    for t in (y, yt):
        t.lgamma_().digamma_().polygamma_(1).mvlgamma_(1).i0_()
        t.sum().backward()
    np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=1e-9)  # (PyTorch's trigamma: 1e-10)
    np.testing.assert_allclose(leaf.grad, leaf_t.grad.numpy(), rtol=1e-8)
    z = tg.tensor([0.1, -0.4])
    assert z.erfinv_() is z and np.allclose(z.data, torch.erfinv(torch.tensor([0.1, -0.4])).numpy())


def test_special_softmax_family_takes_dim_as_pytorch():
    x = tg.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=tg.float64)
    xt = torch.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=torch.float64)
    np.testing.assert_allclose(tg.special.softmax(x, 1, dtype=tg.float32).data,
                               torch.special.softmax(xt, 1, dtype=torch.float32).numpy(), rtol=1e-6)
    np.testing.assert_allclose(tg.special.log_softmax(x, 0).data, torch.special.log_softmax(xt, 0).numpy())
    np.testing.assert_allclose(tg.special.logsumexp(x, (0, 1), keepdim=True).data,
                               torch.special.logsumexp(xt, (0, 1), keepdim=True).numpy())
    np.testing.assert_allclose(tg.special.logsumexp(x, axis=1).data,
                               torch.special.logsumexp(xt, axis=1).numpy())
    for fn in (tg.special.softmax, tg.special.log_softmax, tg.special.logsumexp):
        with pytest.raises(TypeError, match="dim"):
            fn(x)


def test_special_round_and_xlogy():
    x = tg.tensor([1.25, 2.5, -0.35])
    np.testing.assert_array_equal(tg.special.round(x, decimals=1).data,
                                  torch.special.round(torch.tensor([1.25, 2.5, -0.35]), decimals=1).numpy())
    np.testing.assert_array_equal(tg.special.xlogy(x.abs(), 2.0).data,
                                  torch.special.xlogy(torch.tensor([1.25, 2.5, 0.35]), 2.0).numpy())


def test_xlog1py_operands_and_dtypes_as_pytorch():
    cases = [(2.0, [1.0, 2.0]), ([1, 2], [1, 2]), ([1.0, 2.0], 3), ([0.0, 1.0], [-1.0, NAN])]
    def operand(m, v):
        return v if isinstance(v, float | int) else m.tensor(v)

    for a, b in cases:
        out = tg.special.xlog1py(operand(tg, a), operand(tg, b))
        expected = torch.special.xlog1py(operand(torch, a), operand(torch, b))
        assert str(out.dtype) == str(expected.dtype).removeprefix("torch.")
        np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-6, equal_nan=True)


def test_mvlgamma_as_pytorch():
    """The sum of lgamma(x - j/2) plus p(p - 1)/4 log(pi); elements below (p - 1)/2 give inf or nan
    as PyTorch gives them (PyTorch no longer checks them)."""
    x = [0.5, 2.0, 3.3, 10.0]
    for p in (1, 2, 3, 5):
        ours = tg.mvlgamma(tg.tensor(x, dtype=tg.float64), p).data
        theirs = torch.mvlgamma(torch.tensor(x, dtype=torch.float64), p).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    assert tg.mvlgamma(tg.tensor(2.5), 2).shape == ()


# --- bad input --------------------------------------------------------------------------------------


def test_bad_arguments_raise_as_pytorch():
    x = tg.tensor([0.5, 2.0])
    with pytest.raises(RuntimeError, match="polygamma.*negative n"):
        tg.polygamma(-1, x)
    with pytest.raises(TypeError, match="polygamma.*'n' must be int, not float"):
        tg.polygamma(1.5, x)
    with pytest.raises(RuntimeError, match="mvlgamma: p has to be greater than or equal to 1"):
        tg.mvlgamma(x, 0)
    with pytest.raises(TypeError, match="mvlgamma.*'p' must be int"):
        x.mvlgamma(2.0)
    with pytest.raises(RuntimeError, match="mvlgamma: the input may not be a bool tensor"):
        tg.mvlgamma(tg.tensor([True]), 1)
    with pytest.raises(RuntimeError, match="may not be a boolean"):
        torch.mvlgamma(torch.tensor([True]), 1)
    with pytest.raises(RuntimeError, match=r"xlog1py: shapes \(2,\) and \(3,\)"):
        tg.special.xlog1py(x, tg.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match=r"zeta: shapes \(2,\) and \(3,\)"):
        tg.special.zeta(x, tg.tensor([1.0, 2.0, 3.0]))
    for fn in (lambda: torch.polygamma(-1, torch.ones(2)), lambda: torch.mvlgamma(torch.ones(2), 0)):
        with pytest.raises(RuntimeError):
            fn()


def test_erfc_keeps_full_relative_precision_in_its_upper_tail():
    torch = pytest.importorskip("torch")
    x = np.linspace(-6.0, 26.5, 3001)
    ours, theirs = tg.erfc(tg.tensor(x)).numpy(), torch.special.erfc(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=4e-15, atol=0)  # was 5.7e-14 near x = 25
