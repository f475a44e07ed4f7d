"""The rest of `tg.special` against PyTorch: incomplete gamma, Bessel and Airy functions, polynomials.

`gammainc`/`gammaincc` (and `tg.igamma`, `Tensor.igamma(c)(_)`) over a grid of (a, x) with
PyTorch's boundary values, high-precision references where PyTorch's own error shows, its dtype
rules, its gradient in x (float64 and float32, broadcast, finite differences) and its refusal of
a gradient in a. The Bessel functions and Airy's Ai over dense grids in float64 and float32, the
orthogonal polynomials over (x, n) grids with PyTorch's special cases (x = +-1, n < 0, large n,
a float n); neither carries a gradient, as in PyTorch. Then the errors PyTorch raises, and every
op on ForeignArrays (the GPU stand-in) with the same results.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from foreign_array import is_foreign
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan

BESSELS = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"]
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]

RNG = np.random.default_rng(20261126)
# Each branch of the approximations and its edges: J and Y switch at 5, K at 2, I at 8, Ai at
# +-2.09, 8.32 and 103.892; tiny and huge arguments, signed zeros, infinities and nan.
REALS = np.concatenate([
    np.linspace(-40, 40, 4001), RNG.uniform(-200, 200, 1000), 10.0 ** RNG.uniform(-300, 300, 400),
    -(10.0 ** RNG.uniform(-300, 3, 400)), [0.0, -0.0, INF, -INF, NAN, 1e-5, 0.99e-5, 0.5, -0.5, 2.0,
                                            5.0, -5.0, 8.0, 2.09, -2.09, 8.3203353, 103.8, 103.9, 700.0],
])


def torch_special(name: str, *args):
    return getattr(torch.special, name)(*args)


# --- the incomplete gamma functions ----------------------------------------------------------------

GAMMA_VALUES = np.array([0.0, 1e-10, 1e-3, 0.1, 0.5, 1.0, 1.1, 1.5, 2.0, 3.0, 5.0, 9.5, 10.0, 20.0, 30.0,
                         50.0, 100.0, 150.0, 199.0, 250.0, 500.0, 1000.0, 3000.0, 1e4, INF, NAN, -1.0])
A_GRID, X_GRID = (g.ravel() for g in np.meshgrid(GAMMA_VALUES, GAMMA_VALUES))


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_values_as_torch_in_float64(name):
    ours = getattr(tg.special, name)(tg.tensor(A_GRID, dtype=tg.float64), tg.tensor(X_GRID, dtype=tg.float64))
    theirs = torch_special(name, torch.tensor(A_GRID), torch.tensor(X_GRID)).numpy()
    assert ours.dtype == tg.float64 and not ours.requires_grad
    # PyTorch's own error reaches 1.3e-9 where a ~ x ~ 200 (its asymptotic series), and 3e-7 in
    # Q(1e-10, 1.1) (tiny a): both checked against mpmath below
    tiny_a = A_GRID == 1e-10
    np.testing.assert_allclose(ours.numpy()[~tiny_a], theirs[~tiny_a], rtol=2e-9, atol=1e-300)
    np.testing.assert_allclose(ours.numpy()[tiny_a], theirs[tiny_a], rtol=1e-6, atol=1e-300)


def test_incomplete_gamma_boundary_values_as_torch():
    a = tg.tensor([NAN, 1.0, 0.0, 0.0, INF, INF, 1.0, -1.0, 2.0, 1.0, NAN, NAN, 0.0, INF], dtype=tg.float64)
    x = tg.tensor([1.0, NAN, 0.0, 1.0, INF, 1.0, INF, 1.0, -1.0, 0.0, 0.0, INF, NAN, NAN], dtype=tg.float64)
    lower = [NAN, NAN, NAN, 1.0, NAN, 0.0, 1.0, NAN, NAN, 0.0, 0.0, 1.0, NAN, 0.0]
    np.testing.assert_array_equal(tg.special.gammainc(a, x).numpy(), lower)
    np.testing.assert_array_equal(tg.special.gammaincc(a, x).numpy(), [1 - v for v in lower])
    for name in ("gammainc", "gammaincc"):
        np.testing.assert_array_equal(getattr(tg.special, name)(a, x).numpy(),
                                      torch_special(name, torch.tensor(a.numpy()), torch.tensor(x.numpy())))


def test_incomplete_gamma_is_exact_where_torch_loses_digits():
    """Against mpmath: a ~ x ~ 200 (PyTorch 1e-9 off) and Q for tiny a (1 - P would cancel)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    points = [(199.0, 150.0), (250.0, 199.0), (3000.0, 2900.0), (1e4, 1e4), (1e4, 1.02e4), (1e5, 1.01e5),
              (10.0, 30.0), (15.0, 1.0), (12.0, 100.0), (1e-10, 0.1),
              (1e-10, 1.0), (1e-10, 1.1), (1e-3, 1e-3), (0.5, 30.0), (2.5, 1e-5)]
    a = tg.tensor([p[0] for p in points], dtype=tg.float64)
    x = tg.tensor([p[1] for p in points], dtype=tg.float64)
    lower = [float(mpmath.gammainc(s, 0, y, regularized=True)) for s, y in points]
    upper = [float(mpmath.gammainc(s, y, mpmath.inf, regularized=True)) for s, y in points]
    np.testing.assert_allclose(tg.special.gammainc(a, x).numpy(), lower, rtol=5e-14)
    np.testing.assert_allclose(tg.special.gammaincc(a, x).numpy(), upper, rtol=5e-14)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_float32_is_the_float64_result_rounded(name):
    """Computed in float64 and rounded once: PyTorch's float32 kernel is less exact (it gives
    Q(1e-10, 0.1) = 2.4e-10 for 1.82e-10), so the reference is its float64 result rounded."""
    finite = np.isfinite(A_GRID) & np.isfinite(X_GRID)
    a32, x32 = A_GRID[finite].astype(np.float32), X_GRID[finite].astype(np.float32)
    ours = getattr(tg.special, name)(tg.tensor(a32), tg.tensor(x32))
    assert ours.dtype == tg.float32
    reference = torch_special(name, torch.tensor(a32).double(), torch.tensor(x32).double())
    np.testing.assert_allclose(ours.numpy(), reference.float().numpy(), rtol=3e-7, atol=1e-44)
    # and near PyTorch's own float32 kernel where that one is accurate
    theirs = torch_special(name, torch.tensor(a32), torch.tensor(x32)).numpy()
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("a", "x"), [
    ([1, 2, 3], [1.0, 2.0, 3.0]), ([1.0, 2.0], [1, 2]), ([True, False], [1.0, 2.0]),
    (np.float32([1.5, 2.5]), np.float64([1.0, 2.0])), (np.float64(2.0), np.float32([1.0, 2.0])),
    (np.float16([1.5, 2.5]), np.float16([1.0, 3.0])),
])
def test_incomplete_gamma_dtypes_as_torch(a, x):
    for ours_fn, name in ((tg.special.gammainc, "gammainc"), (tg.igammac, "gammaincc")):
        ours = ours_fn(tg.tensor(a), tg.tensor(x))
        theirs = torch_special(name, torch.tensor(a), torch.tensor(x))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.double().numpy(), rtol=2e-3)


def test_incomplete_gamma_names_and_methods():
    a, x = tg.tensor([0.5, 2.0, 7.0]), tg.tensor([1.5, 1.0, 9.0])
    lower, upper = tg.special.gammainc(a, x).numpy(), tg.special.gammaincc(a, x).numpy()
    theirs = torch.igamma(torch.tensor(a.numpy()), torch.tensor(x.numpy()))
    np.testing.assert_allclose(lower, theirs, rtol=1e-6)
    for value, expected in ((tg.igamma(a, x), lower), (a.igamma(x), lower), (tg.igammac(a, x), upper),
                            (a.igammac(x), upper)):
        np.testing.assert_array_equal(value.numpy(), expected)
    b = a.clone()
    assert b.igamma_(x) is b
    np.testing.assert_array_equal(b.numpy(), lower)
    c = a.clone()
    assert c.igammac_(x) is c
    np.testing.assert_array_equal(c.numpy(), upper)
    d = a.clone().igamma_(x.double())  # the result is stored in self's dtype, as in PyTorch
    assert d.dtype == tg.float32


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_incomplete_gamma_gradient_in_x_as_torch_with_broadcasting(name, dtype):
    a = np.array([[0.5], [1.0], [2.5], [30.0]])
    x = np.array([0.2, 1.0, 3.0, 28.0, 45.0])
    weights = RNG.standard_normal((4, 5))
    tx = tg.tensor(x, dtype=getattr(tg, dtype), requires_grad=True)
    out = getattr(tg.special, name)(tg.tensor(a, dtype=getattr(tg, dtype)), tx)
    (out * tg.tensor(weights, dtype=getattr(tg, dtype))).sum().backward()
    px = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    pout = torch_special(name, torch.tensor(a, dtype=getattr(torch, dtype)), px)
    (pout * torch.tensor(weights, dtype=getattr(torch, dtype))).sum().backward()
    assert tx.grad.dtype == np.dtype(dtype) and tx.grad.shape == (5,)
    np.testing.assert_allclose(tx.grad, px.grad.numpy(), rtol=1e-10 if dtype == "float64" else 1e-5)


def test_incomplete_gamma_gradient_at_the_boundary_as_torch():
    a = np.array([1.0, 0.0, 1.0, -1.0, 2.0, 3.0])
    x = np.array([0.0, 1.0, INF, 1.0, -1.0, 0.0])
    tx = tg.tensor(x, dtype=tg.float64, requires_grad=True)
    tg.special.gammainc(tg.tensor(a, dtype=tg.float64), tx).sum().backward()
    px = torch.tensor(x, requires_grad=True)
    torch.special.gammainc(torch.tensor(a), px).sum().backward()
    np.testing.assert_array_equal(tx.grad, px.grad.numpy())


def test_incomplete_gamma_gradient_against_finite_differences():
    a = tg.tensor([[0.7], [3.0], [12.0]], dtype=tg.float64)
    x = tg.tensor([0.4, 2.0, 5.5, 14.0], dtype=tg.float64, requires_grad=True)
    assert tg.gradcheck(lambda t: tg.special.gammainc(a, t), [x])
    assert tg.gradcheck(lambda t: tg.special.gammaincc(a, t) * t, [x])
    assert tg.gradcheck(lambda t: a.igamma(t.exp()), [x])


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_has_no_gradient_in_a_as_torch(name):
    a = tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)
    out = getattr(tg.special, name)(a, tg.tensor([0.5, 1.5], dtype=tg.float64))
    assert out.requires_grad  # PyTorch records the op, and its backward refuses a
    with pytest.raises(NotImplementedError, match=rf"{name}.*first argument"):
        out.sum().backward()
    pa = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(NotImplementedError):
        torch_special(name, pa, torch.tensor([0.5, 1.5], dtype=torch.float64)).sum().backward()


def test_incomplete_gamma_in_place_gradient_reaches_x():
    x = tg.tensor([0.5, 2.0, 4.0], dtype=tg.float64, requires_grad=True)
    a = tg.tensor([1.5, 1.5, 3.0], dtype=tg.float64)
    a.igammac_(x)
    a.sum().backward()
    px = torch.tensor([0.5, 2.0, 4.0], dtype=torch.float64, requires_grad=True)
    pa = torch.tensor([1.5, 1.5, 3.0], dtype=torch.float64)
    pa.igammac_(px)
    pa.sum().backward()
    np.testing.assert_allclose(a.detach().numpy(), pa.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(x.grad, px.grad.numpy(), rtol=1e-12)


def test_incomplete_gamma_errors_as_torch():
    a = tg.tensor([1.0, 2.0])
    for call in (lambda m, t: m.special.gammainc(t, 2.0), lambda m, t: m.special.gammaincc(2.0, t),
                 lambda m, t: t.igamma_(2.0), lambda m, t: m.igamma(1, t)):
        with pytest.raises(TypeError):
            call(torch, torch.tensor([1.0, 2.0]))
        with pytest.raises(TypeError):
            call(tg, a)
    with pytest.raises(RuntimeError, match=r"gammainc.*\(2,\).*\(3,\)"):
        tg.special.gammainc(a, tg.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError):
        torch.special.gammainc(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="igamma_"):  # in place, the result can't grow
        a.clone().igamma_(tg.tensor([[1.0, 2.0]]))
    with pytest.raises(RuntimeError):
        torch.tensor([1.0, 2.0]).igamma_(torch.tensor([[1.0, 2.0]]))
    for ints in (([1, 2], [3, 4]), ([True], [False]), ([1], [True])):  # PyTorch has no integer kernel
        with pytest.raises(NotImplementedError, match="gammainc"):
            tg.special.gammainc(*(tg.tensor(v) for v in ints))
        with pytest.raises(NotImplementedError):
            torch.special.gammainc(*(torch.tensor(v) for v in ints))
    with pytest.raises(RuntimeError, match="igamma_"):  # no float result into an integer tensor
        tg.tensor([1, 2]).igamma_(tg.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2]).igamma_(torch.tensor([1.0, 2.0]))


# --- Bessel functions and Airy's Ai --------------------------------------------------------------


# PyTorch's port of Cephes leaves out the leading 1 of the denominators Cephes evaluates with
# `p1evl`, which costs its J, Y and Ai up to 3e-6 (relative, or absolute below 1); the others are
# within ulps of it.
OFF_IN_TORCH = {"bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"}


@pytest.mark.parametrize("name", BESSELS)
def test_bessel_values_as_torch_in_float64(name):
    ours = getattr(tg.special, name)(tg.tensor(REALS, dtype=tg.float64))
    theirs = torch_special(name, torch.tensor(REALS)).numpy()
    assert ours.dtype == tg.float64
    if name in OFF_IN_TORCH:
        assert np.array_equal(np.isnan(ours.numpy()), np.isnan(theirs))
        finite = np.isfinite(theirs)
        np.testing.assert_array_equal(ours.numpy()[~finite], theirs[~finite])
        error = np.abs(ours.numpy()[finite] - theirs[finite]) / np.maximum(np.abs(theirs[finite]), 1)
        assert error.max() < 3e-6
    else:
        # relative to the value, and absolute near the zeros, where the ulps get small
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-13, atol=2e-16)


@pytest.mark.parametrize(("name", "reference", "budget"), [
    ("bessel_j0", lambda v: mpmath_module().besselj(0, v), 1e-15),
    ("bessel_j1", lambda v: mpmath_module().besselj(1, v), 1e-15),
    ("bessel_y0", lambda v: mpmath_module().bessely(0, v), 3e-15),
    ("bessel_y1", lambda v: mpmath_module().bessely(1, v), 3e-15),
    ("airy_ai", lambda v: mpmath_module().airyai(v), 3e-14),  # the phase zeta + pi/4 of large zeta
    ("modified_bessel_k0", lambda v: mpmath_module().besselk(0, v), 1e-15),
    ("scaled_modified_bessel_k1", lambda v: mpmath_module().exp(v) * mpmath_module().besselk(1, v), 1e-15),
])
def test_bessel_against_high_precision(name, reference, budget):
    """Against mpmath, relative to max(|value|, 1): exact to rounding, where PyTorch's J, Y and Ai
    are up to 3e-6 off (at x = 7, J1 by 2.6e-8)."""
    x = np.concatenate([np.linspace(0.05, 30, 120), [2.09, 5.0, 7.0, 8.0], -np.linspace(0.05, 60, 80)])
    if name.startswith(("bessel_y", "modified", "scaled")):
        x = x[x > 0]
    if name.startswith(("modified", "scaled")):
        x = x[::5]  # (mpmath's K is slow; PyTorch's K agrees with these to ulps anyway)
    ours = getattr(tg.special, name)(tg.tensor(x, dtype=tg.float64)).numpy()
    exact = np.array([float(reference(v)) for v in x])
    error = np.abs(ours - exact) / np.maximum(np.abs(exact), 1)
    assert error.max() < budget, f"{name} at x={x[np.argmax(error)]}"


def mpmath_module():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    return mpmath


@pytest.mark.parametrize("name", BESSELS)
def test_bessel_float32_is_the_float64_result_rounded(name):
    """Computed in float64 and rounded once (PyTorch's float32 kernels are off by 2e-3 relative
    next to the zeros of J and Y); within float32's precision of PyTorch's float32 elsewhere."""
    x = REALS[np.abs(REALS) < 1e30].astype(np.float32)
    ours = getattr(tg.special, name)(tg.tensor(x))
    assert ours.dtype == tg.float32
    with np.errstate(over="ignore"):  # I0(100) is inf in float32
        rounded = getattr(tg.special, name)(tg.tensor(x, dtype=tg.float64)).numpy().astype(np.float32)
    np.testing.assert_array_equal(ours.numpy(), rounded)
    theirs = torch_special(name, torch.tensor(x)).numpy()
    # (PyTorch's float32 kernels give nan at subnormal x and lose the phase of Ai far left)
    moderate = (np.abs(x) < 20) & ((np.abs(x) > 1e-30) | (x == 0))
    np.testing.assert_allclose(ours.numpy()[moderate], theirs[moderate], rtol=1e-4, atol=5e-6)


def test_bessel_special_points_as_torch():
    x = tg.tensor([0.0, -0.0, INF, -INF, NAN, -1.0, 1.0], dtype=tg.float64)
    for name in BESSELS:
        np.testing.assert_allclose(getattr(tg.special, name)(x).numpy(),
                                   torch_special(name, torch.tensor(x.numpy())).numpy(),
                                   rtol=3e-6 if name in OFF_IN_TORCH else 4e-16, err_msg=name)
    assert math.copysign(1, tg.special.bessel_j1(x).numpy()[1]) == -1  # J1(-0) = -0: J1 is odd


def test_bessel_closed_forms():
    x = np.array([0.3, 1.0, 2.5, 7.0, 12.0])
    t = tg.tensor(x, dtype=tg.float64)
    np.testing.assert_allclose(tg.special.spherical_bessel_j0(t).numpy(), np.sin(x) / x, rtol=1e-15)
    # Wronskian: J1 Y0 - J0 Y1 = 2 / (pi x)
    j0, j1 = tg.special.bessel_j0(t).numpy(), tg.special.bessel_j1(t).numpy()
    y0, y1 = tg.special.bessel_y0(t).numpy(), tg.special.bessel_y1(t).numpy()
    np.testing.assert_allclose(j1 * y0 - j0 * y1, 2 / (np.pi * x), rtol=1e-13)
    # I0 K1 + I1 K0 = 1 / x, and the scaled K are e**x K
    i0, i1 = tg.special.modified_bessel_i0(t).numpy(), tg.special.modified_bessel_i1(t).numpy()
    k0, k1 = tg.special.modified_bessel_k0(t).numpy(), tg.special.modified_bessel_k1(t).numpy()
    np.testing.assert_allclose(i0 * k1 + i1 * k0, 1 / x, rtol=1e-13)
    np.testing.assert_allclose(tg.special.scaled_modified_bessel_k1(t).numpy(), np.exp(x) * k1, rtol=1e-13)
    np.testing.assert_allclose(tg.special.modified_bessel_i0(t).numpy(), tg.i0(t).numpy(), rtol=1e-15)
    # Ai(0) = 1 / (3**(2/3) Gamma(2/3))
    assert tg.special.airy_ai(tg.tensor(0.0, dtype=tg.float64)).item() == pytest.approx(
        1 / (3 ** (2 / 3) * math.gamma(2 / 3)), rel=1e-15)


@pytest.mark.parametrize("name", BESSELS)
def test_bessel_dtypes_and_no_gradient_as_torch(name):
    fn = getattr(tg.special, name)
    for data in ([1, 2, 3], [True, False]):
        ours, theirs = fn(tg.tensor(data)), torch_special(name, torch.tensor(data))
        assert ours.dtype == tg.float32 and theirs.dtype == torch.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    x = tg.tensor([0.5, 1.5], requires_grad=True)
    out = fn(x)
    assert not out.requires_grad
    assert not torch_special(name, torch.tensor([0.5, 1.5], requires_grad=True)).requires_grad
    with pytest.raises(RuntimeError):
        out.sum().backward()


@pytest.mark.parametrize("name", BESSELS)
def test_bessel_errors_as_torch(name):
    fn = getattr(tg.special, name)
    with pytest.raises(TypeError, match=name):
        fn(1.5)
    with pytest.raises(TypeError):
        torch_special(name, 1.5)
    with pytest.raises(NotImplementedError, match=rf"{name}.*float16"):
        fn(tg.tensor([1.0], dtype=tg.float16))
    with pytest.raises(NotImplementedError):
        torch_special(name, torch.tensor([1.0], dtype=torch.float16))


# --- orthogonal polynomials ------------------------------------------------------------------------

POLY_X = np.concatenate([np.linspace(-1.5, 1.5, 241), [1.0, -1.0, 0.0, 0.5, 1e-20, -1e-20, 2.5, -3.0,
                                                        1 - 1e-12, -1 + 1e-12, 1e3, -40.0]])
POLY_N = np.array([-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 30, 100, 129, 300, 513, 600])
X_POLY, N_POLY = np.meshgrid(POLY_X, POLY_N)


def _torch_polynomial(name, x, n):
    return torch_special(name, torch.tensor(x), torch.tensor(n)).numpy()


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_values_as_torch_in_float64(name):
    ours = getattr(tg.special, name)(tg.tensor(X_POLY, dtype=tg.float64), tg.tensor(N_POLY))
    theirs = _torch_polynomial(name, X_POLY, N_POLY)
    assert ours.dtype == tg.float64 and not ours.requires_grad
    assert np.array_equal(np.isfinite(ours.numpy()), np.isfinite(theirs))
    # the recurrences agree to rounding (PyTorch's compiled loop fuses multiply-adds)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_values_as_torch_in_float32(name):
    x32 = X_POLY.astype(np.float32)
    ours = getattr(tg.special, name)(tg.tensor(x32), tg.tensor(N_POLY)).numpy()
    theirs = _torch_polynomial(name, x32, N_POLY)
    assert ours.dtype == np.float32
    # computed in float32 as PyTorch does: it overflows to inf, then nan, at the same places (up
    # to a rounding at float32's largest value)
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    edge = np.isfinite(ours) != np.isfinite(theirs)
    assert (np.abs(np.where(np.isfinite(ours), ours, theirs)[edge]) > 3.3e38).all()
    finite = np.isfinite(theirs) & np.isfinite(ours)
    error = np.abs(ours[finite].astype(np.float64) - theirs[finite]) / np.maximum(np.abs(theirs[finite]), 1)
    assert error.max() < 2e-4


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_special_cases_as_torch(name):
    fn = getattr(tg.special, name)
    # nan x: nan from degree 1 on where PyTorch defines it (its other loops return an unset value)
    degrees = [0, 1, 2, 5] if name in ("chebyshev_polynomial_t", "hermite_polynomial_h",
                                       "hermite_polynomial_he") else [0, 1]
    for n in degrees:
        np.testing.assert_array_equal(fn(tg.tensor([NAN, INF, -INF], dtype=tg.float64), n).numpy()[:1],
                                      _torch_polynomial(name, np.array([NAN]), np.array(n)))
    # a float n is truncated; nan, inf and huge n give 0
    x = tg.tensor([0.3, -0.7, 2.0], dtype=tg.float64)
    for n in (3.7, -0.5, 2.0, NAN, INF, -INF, 1e30):
        np.testing.assert_allclose(fn(x, tg.tensor(n, dtype=tg.float64)).numpy(),
                                   _torch_polynomial(name, x.numpy(), np.float64(n)), rtol=1e-14, atol=1e-15,
                                   err_msg=str(n))
    np.testing.assert_array_equal(fn(x, 3.7).numpy(), fn(x, 3).numpy())


def test_polynomial_closed_forms():
    x = np.linspace(-0.95, 0.95, 21)
    t = tg.tensor(x, dtype=tg.float64)
    theta = np.arccos(x)
    for n in (2, 5, 9, 40):  # below and above the degrees where PyTorch switches to cos/sin forms
        np.testing.assert_allclose(tg.special.chebyshev_polynomial_t(t, n).numpy(), np.cos(n * theta),
                                   atol=1e-12)
        np.testing.assert_allclose(tg.special.chebyshev_polynomial_u(t, n).numpy(),
                                   np.sin((n + 1) * theta) / np.sin(theta), atol=1e-11)
        np.testing.assert_allclose(tg.special.shifted_chebyshev_polynomial_t((t + 1) / 2, n).numpy(),
                                   np.cos(n * theta), atol=1e-12)
    for name, n, expected in (("hermite_polynomial_h", 3, 8 * x ** 3 - 12 * x),
                              ("hermite_polynomial_he", 4, x ** 4 - 6 * x ** 2 + 3),
                              ("laguerre_polynomial_l", 2, (x * x - 4 * x + 2) / 2),
                              ("legendre_polynomial_p", 3, (5 * x ** 3 - 3 * x) / 2)):
        np.testing.assert_allclose(getattr(tg.special, name)(t, n).numpy(), expected, atol=1e-13)


@pytest.mark.parametrize(("x", "n"), [
    ([1, 2, 3], 3), ([1.0, 2.0], [3, 4]), ([1.0, 2.0], np.float64([3.0, 4.0])), (0.5, [3, 4]),
    (0.5, np.float64([3.0, 4.0])), ([1, 2], [3, 4]), ([1.0, 2.0], [3.5, 4.2]), (np.float64([0.5]), 2),
    ([[0.5], [0.25]], [1, 2, 3]), ([0.5], True),
])
def test_polynomial_dtypes_and_broadcasting_as_torch(x, n):
    for name in ("chebyshev_polynomial_t", "legendre_polynomial_p", "hermite_polynomial_he"):
        tx = tg.tensor(x) if isinstance(x, list | np.ndarray) else x
        tn = tg.tensor(n) if isinstance(n, list | np.ndarray) else n
        px = torch.tensor(x) if isinstance(x, list | np.ndarray) else x
        pn = torch.tensor(n) if isinstance(n, list | np.ndarray) else n
        ours, theirs = getattr(tg.special, name)(tx, tn), torch_special(name, px, pn)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_errors_and_no_gradient_as_torch(name):
    fn = getattr(tg.special, name)
    with pytest.raises(TypeError, match=name):
        fn(0.5, 3)
    with pytest.raises(TypeError):
        torch_special(name, 0.5, 3)
    with pytest.raises(RuntimeError, match=rf"{name}.*\(2,\).*\(3,\)"):
        fn(tg.tensor([0.1, 0.2]), tg.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError):
        torch_special(name, torch.tensor([0.1, 0.2]), torch.tensor([1, 2, 3]))
    with pytest.raises(NotImplementedError, match="float16"):
        fn(tg.tensor([0.5], dtype=tg.float16), 2)
    with pytest.raises(NotImplementedError):
        torch_special(name, torch.tensor([0.5], dtype=torch.float16), 2)
    x = tg.tensor([0.5, 1.5], requires_grad=True)
    assert not fn(x, 3).requires_grad
    assert not torch_special(name, torch.tensor([0.5, 1.5], requires_grad=True), 3).requires_grad


def test_polynomial_large_degree_stays_vectorised():
    """One element of degree 20000 (|x| < 1: the cosine form for Chebyshev, the loop for Legendre)
    next to small degrees: every element gets its own degree's value."""
    x = tg.tensor([0.3, 0.3, -0.6, 0.9], dtype=tg.float64)
    n = tg.tensor([20000, 2, 7, 3])
    np.testing.assert_allclose(tg.special.legendre_polynomial_p(x, n).numpy(),
                               _torch_polynomial("legendre_polynomial_p", x.numpy(), n.numpy()), rtol=1e-9)
    np.testing.assert_allclose(tg.special.chebyshev_polynomial_t(x, n).numpy(),
                               _torch_polynomial("chebyshev_polynomial_t", x.numpy(), n.numpy()), rtol=1e-12)


# --- on the GPU stand-in -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_keeps_foreign_arrays(name):
    rng = np.random.default_rng(3)
    a = rng.uniform(0.2, 20, (3, 4))
    x = rng.uniform(0.1, 30, (3, 4))
    runs = run_twice(lambda m, s, y: getattr(m.special, name)(s.detach(), y) * s, [a, x])
    check_same(runs)
    assert runs[1][1][1].grad is not None and is_foreign(runs[1][1][1].grad)
    runs = run_twice(lambda m, s, y: s.detach().clone().igamma_(y), [a, x])
    check_same(runs)


@pytest.mark.parametrize("name", BESSELS)
def test_bessel_keeps_foreign_arrays(name):
    x = np.concatenate([np.linspace(-12, 12, 13), [0.0, 2.5, 150.0]])
    runs = run_twice(lambda m, t: getattr(m.special, name)(t), [x])
    check_same(runs)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_keeps_foreign_arrays(name):
    x = np.array([[-1.0, -0.4, 0.0, 0.3, 1.0, 1.7]])
    for n in (lambda m: m.tensor([[0], [1], [3], [12]]), lambda m: 5):
        check_same(run_twice(lambda m, t, n=n: getattr(m.special, name)(t, n(m)), [x]))
