"""Complex numbers, the remaining gaps: second derivatives of the norms, acosh, pow with a tensor
exponent and the decompositions (cholesky, qr, svd, eigh, eig, the triangular and Cholesky
solves) compared with PyTorch's; cholesky_inverse's values; the refusals PyTorch makes for complex
tensors (bernoulli, abs_, pdist) and the ops it computes (pairwise_distance)."""

import numpy as np
import pytest
from complex_checks import inner as _inner
from complex_checks import weights as _weights

import tensorgrad as tg
from tensorgrad import higher_order

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _complex(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


Z = _complex(4)
X = np.array([0.5, -1.5, 2.0, 0.7])
A = _complex(3, 3) + 3 * np.eye(3)
BASE = A * 0.3  # (a base for pow kept away from 0 and from the branch cut, precomputed)
TALL = _complex(4, 3)
WIDE = _complex(3, 4)


def _derivatives(m, f, arrays, seed: int = 1) -> list[np.ndarray]:
    """The output, the first derivatives of <f(xs), v>, and every second derivative (the gradients
    of <d <f(xs), v> / d xs, w> with respect to xs and v), for random complex v and w."""
    rng = np.random.default_rng(seed)
    xs = [m.tensor(a, requires_grad=True) for a in arrays]
    out = f(m, *xs)
    v = _weights(m, rng, out).requires_grad_()
    grads = m.autograd.grad(_inner(m, out, v), xs, create_graph=True)
    total = sum(_inner(m, g, _weights(m, rng, g)) for g in grads)
    found = m.autograd.grad(total, [*xs, v], allow_unused=True, materialize_grads=True)
    return [np.asarray(t.detach().resolve_conj()) if m is torch else t.data for t in (out, *grads, *found)]


def _compare(f, arrays, rtol: float = 1e-9, atol: float = 1e-11) -> None:
    ours, theirs = _derivatives(tg, f, arrays), _derivatives(torch, f, arrays)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _hermitian(m, a):
    return a @ a.mH + m.eye(a.shape[-1])


INF = float("inf")

NORMS = {
    **{f"vector_norm ord={p}": (lambda p: lambda m, z: m.linalg.vector_norm(z * z, p))(p)
       for p in (2, 1, 3, 0.5, 1.5, INF, -INF)},
    "vector_norm ord=0": lambda m, z: m.linalg.vector_norm(z * z, 0) * z,
    "vector_norm over a dim": lambda m, z: m.linalg.vector_norm((z * z).reshape(2, 2), 3, dim=1),
    "norm, p=3 over a dim": lambda m, z: m.norm(m.outer(z, z), 3, dim=1),
    "norm 'fro'": lambda m, z: m.norm(m.outer(z, z.exp())),
    "norm 'nuc'": lambda m, z: m.norm(m.outer(z, z) + m.diag(z), "nuc"),
    "dist": lambda m, z: m.dist(z * z, z.exp(), 3),
}
NORMS.update({f"matrix_norm ord={p}": (lambda p: lambda m, z: m.linalg.matrix_norm(
    m.outer(z, z.exp()) + m.diag(z), p))(p) for p in ("fro", "nuc", 2, -2, 1, -1, INF, -INF)})


@pytest.mark.parametrize("name", NORMS)
def test_norms_differentiate_twice_as_pytorch(name):
    _compare(lambda m, z: NORMS[name](m, z), (Z,))


ELEMENTWISE = {
    "acosh": (lambda m, z: m.acosh(z * z), (Z,)),
    "acosh times real": (lambda m, z, x: m.acosh(z) * x, (Z, X)),
    "pow, complex base and exponent": (lambda m, a, b: a ** b, (BASE, A)),
    "pow, one tensor both ways": (lambda m, a: (a / 4) ** (a * a), (A,)),
    "pow, real base": (lambda m, z, x: x ** z, (Z, X)),
    "pow, real exponent tensor": (lambda m, z, x: z ** x, (Z, X)),
}


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_acosh_and_pow_differentiate_twice_as_pytorch(name):
    f, arrays = ELEMENTWISE[name]
    _compare(f, arrays)


def _phase_free(m, v):
    """A function of eigen/singular vectors that does not depend on their phases."""
    return v @ m.diag(m.arange(1, v.shape[-1] + 1).to(v.dtype)) @ v.mH


def _svd_product(usv):
    """U Vh times the sum of the singular values: phase-free, reading all three outputs."""
    u, s, vh = usv
    return u @ vh * s.sum()


DECOMPOSITIONS = {
    "cholesky": (lambda m, a: m.linalg.cholesky(_hermitian(m, a)), (A,)),
    "cholesky upper": (lambda m, a: m.linalg.cholesky(_hermitian(m, a), upper=True), (A,)),
    "qr of a tall matrix": (lambda m, a: m.cat([t.reshape(-1) for t in m.linalg.qr(a)]).abs(), (TALL,)),
    "qr Q Q^H": (lambda m, a: (lambda q: q @ q.mH)(m.linalg.qr(a).Q), (TALL,)),
    "qr R of a wide matrix": (lambda m, a: m.linalg.qr(a).R, (WIDE,)),
    "qr Q of a wide matrix": (lambda m, a: m.linalg.qr(a).Q.abs(), (WIDE,)),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), (TALL,)),
    "svd U U^H": (lambda m, a: (lambda u: u @ u.mH)(m.linalg.svd(a, full_matrices=False).U), (TALL,)),
    "svd Vh^H Vh": (lambda m, a: (lambda v: v.mH @ v)(m.linalg.svd(a, full_matrices=False).Vh), (WIDE,)),
    "svd U Vh, tall": (lambda m, a: _svd_product(m.linalg.svd(a, full_matrices=False)), (TALL,)),
    "svd U Vh, wide": (lambda m, a: _svd_product(m.linalg.svd(a, full_matrices=False)), (WIDE,)),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(_hermitian(m, a)), (A,)),
    "eigh": (lambda m, a: (lambda w, v: _phase_free(m, v) * w.sum())(*m.linalg.eigh(_hermitian(m, a))), (A,)),
    "eigh |V|": (lambda m, a: m.linalg.eigh(_hermitian(m, a), UPLO="U").eigenvectors.abs(), (A,)),
    "solve_triangular": (lambda m, a: m.linalg.solve_triangular(a, a * a, upper=True), (A,)),
    "solve_triangular right, unit": (lambda m, a: m.linalg.solve_triangular(
        a, a * a, upper=False, left=False, unitriangular=True), (A,)),
    "cholesky_solve": (lambda m, a: m.cholesky_solve(a * a, a.tril()), (A,)),
    "cholesky_inverse of a factor": (lambda m, a: m.cholesky_inverse(m.linalg.cholesky(_hermitian(m, a))),
                                     (A,)),
    "cholesky_inverse upper": (lambda m, a: m.cholesky_inverse(a.triu(), upper=True), (A,)),
    "cholesky_inverse of any matrix": (lambda m, a: m.cholesky_inverse(a), (A,)),
    "eigvals": (lambda m, a: m.linalg.eigvals(a), (A,)),
    "eigvals of a real matrix": (lambda m, a: m.linalg.eigvals(a), (A.real.copy(),)),
    "eig |V| L": (lambda m, a: (lambda w, v: v.abs() * w.unsqueeze(-2))(*m.linalg.eig(a)), (A,)),
    "eig V diag(L^2) V^-1": (lambda m, a: (lambda w, v: v @ m.diag_embed(w * w) @ m.linalg.inv(v))(
        *m.linalg.eig(a)), (A,)),
    "eig |V| of a real matrix": (lambda m, a: m.linalg.eig(a).eigenvectors.abs(), (A.real.copy(),)),
}


@pytest.mark.parametrize("name", DECOMPOSITIONS)
def test_decompositions_differentiate_twice_as_pytorch(name):
    f, arrays = DECOMPOSITIONS[name]
    _compare(f, arrays, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["vector_norm ord=3", "matrix_norm ord=nuc", "norm 'nuc'"])
def test_norms_gradgradcheck(name):
    assert tg.autograd.gradgradcheck(lambda z: NORMS[name](tg, z), [tg.tensor(Z, requires_grad=True)])


@pytest.mark.parametrize("name", ["cholesky", "svd U U^H", "eigh", "qr of a tall matrix", "eig |V| L"])
def test_decompositions_gradgradcheck(name):
    f, arrays = DECOMPOSITIONS[name]
    inputs = [tg.tensor(a, requires_grad=True) for a in arrays]
    assert tg.autograd.gradgradcheck(lambda *xs: f(tg, *xs), inputs, atol=1e-5)


@pytest.mark.parametrize("name", [
    "reduce._norm_graph", "reduce._extreme_norm_graph", "reduce._nuclear_norm_graph",
    "elementwise._acosh_graph", "elementwise._pow_graph", "linalg._cholesky_graph", "linalg._qr_q_graph",
    "linalg._svd_u_graph", "linalg._eigenvectors_graph", "linalg._solve_triangular_graph",
    "linalg._eig_vectors_graph"])
def test_the_graph_vjps_are_listed_as_complex_ready(name):
    assert f"tensorgrad.{name}" in higher_order.COMPLEX_READY_GRAPHS


def test_nuclear_norm_of_a_complex_matrix_is_real_with_pytorchs_gradient():
    found = []
    for m in (torch, tg):
        x = m.tensor(A, requires_grad=True)
        out = m.norm(x, "nuc")
        out.backward()
        found.append((out.dtype, np.asarray(out.detach()), np.asarray(x.grad)))
    assert found[1][0] == tg.float64 and found[0][0] == torch.float64
    for a, b in zip(found[0][1:], found[1][1:], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (5, 5), (2, 4, 4)])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_cholesky_inverse_of_complex_input_matches_pytorch(shape, upper, dtype):
    # A factor whose diagonal is not real: PyTorch returns LAPACK potri's numbers, not the inverse.
    a = (_complex(*shape) + 3 * np.eye(shape[-1])).astype(dtype)
    found = []
    for m in (torch, tg):
        x = m.tensor(a, requires_grad=True)
        out = m.cholesky_inverse(x, upper=upper)
        weights = m.tensor(np.arange(out.numel()).reshape(shape) * (1 - 2j))
        (g,) = m.autograd.grad(m.real(out * weights).sum(), x)
        found.append((np.asarray(out.detach()), np.asarray(g)))
    tolerance = 1e-5 if dtype == "complex64" else 1e-12
    for theirs, ours in zip(*found, strict=True):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance)


def test_cholesky_inverse_of_a_cholesky_factor_is_the_inverse():
    h = A @ A.conj().T + np.eye(3)
    factor = tg.linalg.cholesky(tg.tensor(h))
    np.testing.assert_allclose(tg.cholesky_inverse(factor).data, np.linalg.inv(h), rtol=1e-12, atol=1e-14)


def test_real_cholesky_inverse_is_unchanged():
    a = A.real.copy()
    for upper in (False, True):
        np.testing.assert_allclose(tg.cholesky_inverse(tg.tensor(a), upper=upper).data,
                                   torch.cholesky_inverse(torch.tensor(a), upper=upper).numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m, z: m.bernoulli(z),
    lambda m, z: m.bernoulli(z, 0.5),
    lambda m, z: z.bernoulli(),
    lambda m, z: z.clone().bernoulli_(0.5),
    lambda m, z: z.clone().bernoulli_(),
])
def test_bernoulli_of_complex_is_not_implemented_as_in_pytorch(call):
    z = np.array([0.2 + 0j, 0.5 + 0.1j])
    with pytest.raises(NotImplementedError):
        call(torch, torch.tensor(z))
    with pytest.raises(NotImplementedError, match="bernoulli"):
        call(tg, tg.tensor(z))


@pytest.mark.parametrize("call", [lambda m, z: z.abs_(), lambda m, z: z.absolute_(), lambda m, z: m.abs_(z)])
def test_in_place_abs_of_complex_raises_as_in_pytorch(call):
    for m in (torch, tg):
        z = m.tensor([1 + 1j, -2j])
        with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
            call(m, z)
        np.testing.assert_array_equal(np.asarray(z), [1 + 1j, -2j])  # untouched
    x = tg.tensor([-1.5, 2.0])
    x.abs_()
    np.testing.assert_array_equal(x.data, [1.5, 2.0])


@pytest.mark.parametrize("p", [2.0, 1.0])
def test_pdist_of_complex_raises_as_in_pytorch(p):
    z = _complex(3, 2)
    for m in (torch, tg):
        with pytest.raises(RuntimeError, match="pdist only supports floating-point dtypes"):
            m.nn.functional.pdist(m.tensor(z), p)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, INF])
@pytest.mark.parametrize("other", ["complex", "real"])
def test_pairwise_distance_of_complex_matches_pytorch(p, other):
    a, b = _complex(3, 4), (_complex(3, 4) if other == "complex" else RNG.standard_normal((3, 4)))
    found = []
    for m in (torch, tg):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        out = m.nn.functional.pairwise_distance(x, y, p, keepdim=True)
        grads = m.autograd.grad((out * m.tensor([[1.0], [2.0], [3.0]])).sum(), [x, y])
        found.append([np.asarray(t.detach()) for t in (out, *grads)])
    for theirs, ours in zip(*found, strict=True):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)


def test_pairwise_distance_of_complex_differentiates_twice_as_pytorch():
    b = _complex(2, 4)
    _compare(lambda m, a: m.nn.functional.pairwise_distance(a, m.tensor(b), 3.0), (_complex(2, 4),))


def test_adaptive_avg_pool1d_of_complex_is_not_implemented_as_in_pytorch():
    # PyTorch (this version) has no complex kernel for it (its adaptive_avg_pool2d's "not implemented").
    z = _complex(1, 2, 6)
    for m in (torch, tg):
        with pytest.raises(NotImplementedError, match="adaptive_avg_pool2d"):
            m.nn.functional.adaptive_avg_pool1d(m.tensor(z), 3)


def test_bernoulli_into_a_complex_tensor_is_refused_with_a_tensor_p_too():
    for m in (torch, tg):
        with pytest.raises(NotImplementedError):
            m.zeros(3, dtype=m.complex64).bernoulli_(m.full((3,), 0.5))
