"""Complex numbers where tensorgrad used to differ from PyTorch: logaddexp and logcumsumexp of
complex input, Hermitian cov and corrcoef, the functions PyTorch refuses for complex input (and
the exception class it raises), fill with a complex value, the gradient of the inf-norms, in-place
writes through dtype-changing views (`z.real`, `view_as_real`, `view_as_complex`), and the line
wrapping of a complex tensor's repr. Each is compared with PyTorch: values, dtypes, errors and
first-order gradients (complex128), and checked against finite differences."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
V = (RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))) * 1.5
W = (RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))) * 1.5
INF, NAN = float("inf"), float("nan")


def _numpy(t):
    """A tensor of either library as a numpy array (PyTorch's with its lazy conjugation resolved)."""
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().resolve_neg().numpy()
    return np.asarray(t.detach() if isinstance(t, tg.Tensor) else t)  # (`.grad` is a numpy array)


def _same_values(theirs, ours, tol=1e-12):
    theirs, ours = _numpy(theirs), _numpy(ours)
    assert theirs.shape == ours.shape and theirs.dtype == ours.dtype
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol, equal_nan=True)


def _same_gradients(fn, *arrays, tol=1e-12):
    """fn(m, *leaves) in both libraries, values and every leaf's gradient for one random
    (complex where the result is) upstream gradient."""
    results = []
    for m in (torch, tg):
        leaves = [m.tensor(a, requires_grad=True) for a in arrays]
        out = fn(m, *leaves)
        results.append((out, leaves))
    (theirs, their_leaves), (ours, our_leaves) = results
    _same_values(theirs, ours, tol)
    grad = RNG.normal(size=tuple(theirs.shape))
    if theirs.dtype.is_complex:
        grad = grad + 1j * RNG.normal(size=grad.shape)
    theirs.backward(torch.tensor(grad, dtype=theirs.dtype))
    ours.backward(tg.tensor(grad, dtype=ours.dtype))
    for t, o in zip(their_leaves, our_leaves, strict=True):
        _same_values(t.grad, o.grad, tol)


# --- logaddexp and logcumsumexp ------------------------------------------------------------------


def test_logaddexp_of_complex_values_and_special_values_as_pytorch():
    x = [complex(INF, 1), complex(-INF, 2), complex(NAN, 0), 1 + 1j, 1 + 2j, 3 - 1j, 2 + 1j, 0j]
    y = [complex(INF, 3), complex(-INF, 5), 1j, complex(-INF, 0), 2 + 4j, -2 + 3j, 2 + 3j, complex(0, NAN)]
    for dtype in ("complex64", "complex128"):
        _same_values(torch.logaddexp(torch.tensor(x, dtype=getattr(torch, dtype)), torch.tensor(y)),
                     tg.logaddexp(tg.tensor(x, dtype=getattr(tg, dtype)), tg.tensor(y)), tol=1e-6)


def test_logaddexp_of_complex_and_real_operands_dtype_as_pytorch():
    z, r = V.astype(np.complex64), RNG.normal(size=4).astype(np.float32)
    _same_values(torch.logaddexp(torch.tensor(z), torch.tensor(r)), tg.logaddexp(tg.tensor(z), tg.tensor(r)),
                 tol=1e-6)
    _same_values(torch.logaddexp(torch.tensor(r), torch.tensor(z)), tg.logaddexp(tg.tensor(r), tg.tensor(z)),
                 tol=1e-6)


def test_logaddexp_complex_gradients_as_pytorch():
    _same_gradients(lambda m, a, b: m.logaddexp(a, b), V, W)
    _same_gradients(lambda m, a, b: m.logaddexp(a, b * 2), V, W[0])  # broadcast


def test_logaddexp2_of_complex_is_refused_as_pytorch():
    with pytest.raises(NotImplementedError):
        torch.logaddexp2(torch.tensor(V), torch.tensor(W))
    with pytest.raises(NotImplementedError, match="logaddexp2"):
        tg.logaddexp2(tg.tensor(V), tg.tensor(W))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_logcumsumexp_of_complex_values_and_gradients_as_pytorch(dim):
    _same_gradients(lambda m, a: m.logcumsumexp(a, dim), V * 2)


def test_logcumsumexp_of_complex_dtypes_and_shapes_as_pytorch():
    row = [[1 + 2j, 3 + 3j, -1 + 4j, 2 - 5j, 0.5 + 7j]]  # the imaginary parts leave (-pi, pi]
    _same_values(torch.logcumsumexp(torch.tensor(row, dtype=torch.complex128), 1),
                 tg.logcumsumexp(tg.tensor(row, dtype=tg.complex128), 1))
    _same_values(torch.logcumsumexp(torch.tensor(V.astype(np.complex64)), 1),
                 tg.logcumsumexp(tg.tensor(V.astype(np.complex64)), 1), tol=1e-6)
    _same_values(torch.logcumsumexp(torch.tensor(1 - 2j), 0), tg.logcumsumexp(tg.tensor(1 - 2j), 0), tol=1e-6)
    empty = np.zeros((0, 3), dtype=np.complex64)
    _same_values(torch.logcumsumexp(torch.tensor(empty), 0), tg.logcumsumexp(tg.tensor(empty), 0))


def test_logaddexp_and_logcumsumexp_complex_gradients_against_finite_differences():
    z = tg.tensor(V[:2, :3], requires_grad=True)
    w = tg.tensor(W[:2, :3], requires_grad=True)
    assert tg.autograd.gradcheck(lambda a, b: tg.logaddexp(a, b), (z, w))
    assert tg.autograd.gradcheck(lambda a: tg.logcumsumexp(a, 1), (z,))


# --- cov and corrcoef -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 6), (6,)])
def test_cov_and_corrcoef_of_complex_input_are_hermitian_as_pytorch(shape):
    x = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)
    _same_gradients(lambda m, a: m.cov(a), x)
    _same_gradients(lambda m, a: m.corrcoef(a), x)
    c = tg.cov(tg.tensor(x))
    np.testing.assert_allclose(c.data, np.conj(c.data.T))


def test_cov_of_complex_input_with_weights_as_pytorch():
    x = RNG.normal(size=(3, 6)) + 1j * RNG.normal(size=(3, 6))
    fweights = RNG.integers(1, 4, size=6)
    _same_gradients(lambda m, a, w: m.cov(a, correction=0, fweights=m.tensor(fweights), aweights=w),
                    x, RNG.uniform(0.5, 2, size=6))
    x32, w64 = x.astype(np.complex64), RNG.uniform(size=6)
    _same_values(torch.cov(torch.tensor(x32), aweights=torch.tensor(w64.astype(np.float32))),
                 tg.cov(tg.tensor(x32), aweights=tg.tensor(w64.astype(np.float32))), tol=1e-5)


def test_complex_cov_gradient_against_finite_differences():
    x = tg.tensor(V[:2], requires_grad=True)
    assert tg.autograd.gradcheck(lambda a: tg.cov(a), (x,))
    assert tg.autograd.gradcheck(lambda a: tg.corrcoef(a), (x,))


# --- what PyTorch refuses for complex input ---------------------------------------------------------


UNARY_REFUSED = {
    "lgamma": lambda m, z: m.lgamma(z),
    "digamma": lambda m, z: m.digamma(z),
    "polygamma": lambda m, z: m.polygamma(1, z),
    "mvlgamma": lambda m, z: m.mvlgamma(z, 2),
    "erf": lambda m, z: m.erf(z),
    "erfc": lambda m, z: m.erfc(z),
    "erfinv": lambda m, z: m.erfinv(z),
    "i0": lambda m, z: m.i0(z),
    "logit": lambda m, z: m.logit(z),
    "special.i0e": lambda m, z: m.special.i0e(z),
    "special.i1": lambda m, z: m.special.i1(z),
    "special.erfcx": lambda m, z: m.special.erfcx(z),
    "special.ndtr": lambda m, z: m.special.ndtr(z),
    "special.ndtri": lambda m, z: m.special.ndtri(z),
    "special.log_ndtr": lambda m, z: m.special.log_ndtr(z),
    "special.entr": lambda m, z: m.special.entr(z),
    "special.bessel_j0": lambda m, z: m.special.bessel_j0(z),
    "special.modified_bessel_k1": lambda m, z: m.special.modified_bessel_k1(z),
    "special.airy_ai": lambda m, z: m.special.airy_ai(z),
    "special.chebyshev_polynomial_t": lambda m, z: m.special.chebyshev_polynomial_t(z, 2),
    "special.hermite_polynomial_h": lambda m, z: m.special.hermite_polynomial_h(z, 2),
    "softmax": lambda m, z: m.softmax(z, 0),
    "log_softmax": lambda m, z: m.log_softmax(z, 0),
    "nn.functional.softmax": lambda m, z: m.nn.functional.softmax(z, 0),
    "unique_consecutive": lambda m, z: m.unique_consecutive(z),
    "unique_consecutive(dim)": lambda m, z: m.unique_consecutive(z, dim=0),
}


@pytest.mark.parametrize("name", UNARY_REFUSED)
def test_functions_of_real_numbers_refuse_complex_as_pytorch(name):
    for m in (torch, tg):
        with pytest.raises(NotImplementedError):
            UNARY_REFUSED[name](m, m.tensor(V))


BINARY_REFUSED = {
    "fmod": lambda m, a, b: m.fmod(a, b),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "%": lambda m, a, b: a % b,
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "//": lambda m, a, b: a // b,
    "atan2": lambda m, a, b: m.atan2(a, b),
    "copysign": lambda m, a, b: m.copysign(a, b),
    "xlogy": lambda m, a, b: m.xlogy(a, b),
    "special.xlog1py": lambda m, a, b: m.special.xlog1py(a, b),
    "special.zeta": lambda m, a, b: m.special.zeta(a, b),
    "special.gammainc": lambda m, a, b: m.special.gammainc(a, b),
    "hypot": lambda m, a, b: m.hypot(a, b),
}


@pytest.mark.parametrize("name", BINARY_REFUSED)
@pytest.mark.parametrize("real_first", [False, True])
def test_binary_functions_of_real_numbers_refuse_complex_as_pytorch(name, real_first):
    for m in (torch, tg):
        a, b = m.tensor(V), m.tensor(W)
        if real_first:
            a = m.tensor(V.real.copy())
        with pytest.raises(NotImplementedError):
            BINARY_REFUSED[name](m, a, b)


def test_refusal_names_the_op_and_the_shapes():
    with pytest.raises(NotImplementedError, match=r"fmod.*complex128.*\(3, 4\) and \(4,\)"):
        tg.fmod(tg.tensor(V), tg.tensor(W[0]))
    with pytest.raises(NotImplementedError, match=r"erf.*complex64.*\(3, 4\)"):
        tg.erf(tg.tensor(V.astype(np.complex64)))


def test_real_input_of_those_functions_still_computes():
    x = tg.tensor([0.25, 0.5])
    assert np.allclose(tg.erf(x).data, torch.erf(torch.tensor([0.25, 0.5])).numpy())
    assert np.allclose(tg.fmod(x, 0.2).data, torch.fmod(torch.tensor([0.25, 0.5]), 0.2).numpy())


def test_softmax_of_an_empty_complex_tensor_passes_as_in_pytorch():
    empty = np.zeros((0, 2), dtype=np.complex64)
    _same_values(torch.softmax(torch.tensor(empty), 1), tg.softmax(tg.tensor(empty), 1))


# --- fill and full with complex values --------------------------------------------------------------


def test_fill_with_a_complex_value_as_pytorch():
    for fill in (lambda m, t: m.fill(t, 1 + 1j), lambda m, t: t.fill_(1 + 1j),
                 lambda m, t: m.fill(t, m.tensor(2 - 3j))):
        _same_values(fill(torch, torch.ones(2, dtype=torch.complex64)),
                     fill(tg, tg.ones(2, dtype=tg.complex64)))
    _same_values(torch.fill(torch.ones(2, dtype=torch.int64), 3 + 0j),
                 tg.fill(tg.ones(2, dtype=tg.int64), 3 + 0j))
    _same_values(torch.ones(2).fill_(2 + 0j), tg.ones(2).fill_(2 + 0j))


def test_fill_of_a_real_tensor_with_an_imaginary_part_raises_as_pytorch():
    for m in (torch, tg):
        with pytest.raises(RuntimeError):
            m.fill(m.ones(2), 1 + 1j)
        with pytest.raises(RuntimeError):
            m.ones(2).fill_(1 + 1j)


def test_fill_of_a_complex_tensor_gradient_as_pytorch():
    _same_gradients(lambda m, z, v: m.fill(z * 2, v), V, np.array(1 - 2j))


def test_full_infers_complex64_from_a_complex_value():
    assert tg.full((2,), 1 + 2j).dtype == tg.complex64 == tg.tensor(1j).dtype
    assert str(torch.full((2,), 1 + 2j).dtype) == "torch.complex64"


# --- norms, cumprod, vander --------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [INF, -INF])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_inf_norms_of_complex_input_gradient_as_pytorch(ord, dim):
    x = V.copy()
    x[0, 1] = x[0, 2]  # a tie, which shares the gradient
    _same_gradients(lambda m, a: m.linalg.vector_norm(a, ord, dim), x)


def test_inf_norm_complex_gradient_against_finite_differences():
    assert tg.autograd.gradcheck(lambda a: tg.linalg.vector_norm(a, INF), (tg.tensor(V, requires_grad=True),))


def test_cumprod_and_vander_of_complex_input_as_pytorch():
    x = V.copy()
    x[0, 2] = 0  # cumprod's gradient through a zero
    _same_gradients(lambda m, a: m.cumprod(a, 1), x)
    _same_gradients(lambda m, a: m.linalg.vander(a), V)
    _same_gradients(lambda m, a: m.linalg.vander(a, N=6), V)


# --- in-place writes through views of another dtype -----------------------------------------------


COMPLEX_BASE_WRITES = {
    "real": lambda m, w: w.real.mul_(2),
    "imag": lambda m, w: w.imag.mul_(3),
    "view_as_real, real parts": lambda m, w: m.view_as_real(w)[..., 0].mul_(2),
    "view_as_real, imaginary parts": lambda m, w: m.view_as_real(w)[..., 1].add_(1),
    "view_as_real, transposed": lambda m, w: m.view_as_real(w).transpose(0, 2)[1].mul_(-1),
    "a row of the real part": lambda m, w: w.real[1].mul_(w.imag[0].clone()),
    "real then imaginary": lambda m, w: (w.real.mul_(2), w.imag.add_(1)),
}


@pytest.mark.parametrize("name", COMPLEX_BASE_WRITES)
def test_inplace_through_real_views_of_complex_tensors_as_pytorch(name):
    def fn(m, z):
        w = z * (1 + 0.5j)
        COMPLEX_BASE_WRITES[name](m, w)
        return w * w
    _same_gradients(fn, V[:2, :3])


REAL_BASE_WRITES = {
    "view_as_complex": lambda m, r: m.view_as_complex(r).mul_(2j),
    "a row of view_as_complex": lambda m, r: m.view_as_complex(r)[1].mul_(1 + 1j),
    "view_as_complex of a row": lambda m, r: m.view_as_complex(r[1]).add_(m.view_as_complex(r[0]).clone()),
}


@pytest.mark.parametrize("name", REAL_BASE_WRITES)
def test_inplace_through_complex_views_of_real_tensors_as_pytorch(name):
    def fn(m, x):
        r = x * 2
        REAL_BASE_WRITES[name](m, r)
        return r * r.sin()
    _same_gradients(fn, RNG.normal(size=(2, 3, 2)))


def test_inplace_through_a_real_view_against_finite_differences():
    def fn(z):
        w = z * 1.5
        w.imag.mul_(3)
        tg.view_as_real(w)[..., 0].add_(1)
        return w * w
    assert tg.autograd.gradcheck(fn, (tg.tensor(V[:2, :2], requires_grad=True),))


def test_inplace_through_a_real_view_of_a_complex_leaf_is_refused_as_pytorch():
    for m in (torch, tg):
        z = m.tensor(V, requires_grad=True)
        with pytest.raises(RuntimeError):
            z.real.mul_(2)


# --- printing ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64", "float16", "int32"])
def test_repr_wraps_as_pytorch(dtype):
    """PyTorch decides where to wrap by the length of "dtype=torch.complex128"; tensorgrad prints
    "dtype=complex128" at the same places."""
    for shape in [(2,), (3,), (4,), (7,), (2, 3), (3, 4)]:
        for scale, requires_grad in [(1, False), (1e-5, False), (100, dtype == "float64")]:
            a = RNG.normal(size=shape) * scale
            if "complex" in dtype:
                a = a + 1j * RNG.normal(size=shape) * scale
            a = a.astype(dtype)
            theirs = repr(torch.tensor(a, requires_grad=requires_grad)).replace("torch.", "")
            assert repr(tg.tensor(a, requires_grad=requires_grad)) == theirs


def test_complex_with_floating_promotes_as_wide_as_both():
    import itertools
    names = ["bool", "uint8", "int32", "int64", "float32", "float64", "complex64", "complex128"]
    for a, b in itertools.product(names, names):
        theirs = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).removeprefix("torch.")
        assert str(tg.promote_types(np.dtype(a), np.dtype(b))) == theirs, (a, b)
    for shapes in (((2,), ()), ((), (2,)), ((2,), (2,))):
        for a, b in (("complex64", "float64"), ("float64", "complex64"), ("complex64", "int64")):
            ours = tg.ones(shapes[0], dtype=np.dtype(a)) + tg.ones(shapes[1], dtype=np.dtype(b))
            ta, tb = getattr(torch, a), getattr(torch, b)
            theirs = torch.ones(shapes[0], dtype=ta) + torch.ones(shapes[1], dtype=tb)
            assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), (shapes, a, b)
