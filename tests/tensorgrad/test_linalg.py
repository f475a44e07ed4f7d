"""`tg.linalg` against `torch.linalg` and finite differences: values, batched shapes and the
gradient of every input, then the matrices PyTorch's answer differs on and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)  # a batch of two, well conditioned
B = RNG.standard_normal((2, 3, 2))
V = RNG.standard_normal(3)
INF = float("inf")


def _spd(m, a):
    """A symmetric positive-definite matrix made from a: a a^T + 3 I."""
    return a @ a.mT + 3 * m.eye(a.shape[-1], dtype=m.float64)


# name -> (function of (m, *inputs), the inputs)
CASES = {
    "inv": (lambda m, a: m.linalg.inv(a), [A]),
    "inverse method": (lambda m, a: a[0].inverse(), [A]),
    "det": (lambda m, a: m.linalg.det(a), [A]),
    "det method": (lambda m, a: a.det(), [A]),
    "slogdet logabsdet": (lambda m, a: m.linalg.slogdet(a).logabsdet, [A]),
    "slogdet sign": (lambda m, a: m.slogdet(a)[0] * 1.0, [-A]),
    "logdet": (lambda m, a: m.logdet(_spd(m, a)), [A]),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), [A, B]),
    "solve a vector": (lambda m, a, b: m.linalg.solve(a, b), [A[0], V]),
    "solve a batch of vectors": (lambda m, a, b: m.linalg.solve(a, b), [A, B[..., 0]]),
    "solve broadcast": (lambda m, a, b: m.linalg.solve(a, b), [A[0], B]),
    "solve left=False": (lambda m, a, b: m.linalg.solve(a, b, left=False), [A, B.swapaxes(-1, -2)]),
    "cholesky": (lambda m, a: m.linalg.cholesky(_spd(m, a)), [A]),
    "cholesky upper": (lambda m, a: m.linalg.cholesky(_spd(m, a), upper=True), [A]),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), [RNG.standard_normal((2, 4, 3))]),
    "matrix_norm fro": (lambda m, a: m.linalg.matrix_norm(a), [A]),
    "matrix_norm nuc": (lambda m, a: m.linalg.matrix_norm(a, "nuc"), [A]),
    "matrix_norm 2": (lambda m, a: m.linalg.matrix_norm(a, 2), [A]),
    "matrix_norm -2 keepdim": (lambda m, a: m.linalg.matrix_norm(a, -2, keepdim=True), [A]),
    "matrix_norm 1": (lambda m, a: m.linalg.matrix_norm(a, 1), [A]),
    "matrix_norm -1": (lambda m, a: m.linalg.matrix_norm(a, -1, dim=(0, 2)), [A]),
    "matrix_norm inf keepdim": (lambda m, a: m.linalg.matrix_norm(a, INF, keepdim=True), [A]),
    "matrix_norm -inf": (lambda m, a: m.linalg.matrix_norm(a, -INF, dim=(2, 1)), [A]),
    "vector_norm": (lambda m, a: m.linalg.vector_norm(a), [A]),
    "vector_norm 3 dims": (lambda m, a: m.linalg.vector_norm(a, 3, dim=(0, 2), keepdim=True), [A]),
    "vector_norm inf": (lambda m, a: m.linalg.vector_norm(a, INF, dim=-1), [A]),
    "norm": (lambda m, a: m.linalg.norm(a), [A]),
    "norm of a matrix, ord": (lambda m, a: m.linalg.norm(a, -INF), [A[0]]),
    "norm of a vector, ord": (lambda m, a: m.linalg.norm(a, 1), [V]),
    "norm dim": (lambda m, a: m.linalg.norm(a, dim=1), [A]),
    "norm two dims, ord": (lambda m, a: m.linalg.norm(a, "nuc", dim=(1, 2)), [A]),
    "matrix_power 3": (lambda m, a: m.linalg.matrix_power(a, 3), [A]),
    "matrix_power 0": (lambda m, a: m.matrix_power(a, 0) + a, [A]),
    "matrix_power -2": (lambda m, a: a.matrix_power(-2), [A]),
    "linalg.cross": (lambda m, a, b: m.linalg.cross(a, b), [A, np.ascontiguousarray(A[::-1])]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_and_finite_differences(name):
    build, arrays = CASES[name]
    leaves = [tg.tensor(a, requires_grad=True) for a in arrays]
    out = build(tg, *leaves)
    weights = np.random.default_rng(1).standard_normal(out.shape)
    if out.requires_grad:
        (out * tg.tensor(weights)).sum().backward()
        assert tg.gradcheck(lambda *xs: build(tg, *xs), [tg.tensor(a, requires_grad=True) for a in arrays])
    torch = pytest.importorskip("torch")
    tleaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    tout = build(torch, *tleaves)
    assert out.shape == tuple(tout.shape) and str(out.dtype) == str(tout.dtype).removeprefix("torch.")
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert tout.requires_grad == out.requires_grad
    if tout.requires_grad:
        (tout * torch.tensor(weights)).sum().backward()
        for leaf, tleaf in zip(leaves, tleaves, strict=True):
            expected = np.zeros(leaf.shape) if tleaf.grad is None else tleaf.grad.numpy()  # None: zero
            np.testing.assert_allclose(leaf.grad, expected, rtol=1e-9, atol=1e-10)


def test_det_of_a_singular_matrix_has_the_adjugate_as_gradient():
    """PyTorch documents an SVD-based backward for singular input; the exact derivative of det is
    the cofactor matrix, which finite differences confirm (PyTorch 2.13 returns zeros here)."""
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    a = tg.tensor(singular, requires_grad=True)
    det = tg.linalg.det(a)
    det.backward()
    assert abs(det.item()) < 1e-12
    minor = lambda i, j: np.delete(np.delete(singular, i, 0), j, 1)  # noqa: E731
    cofactors = [[(-1) ** (i + j) * np.linalg.det(minor(i, j)) for j in range(3)] for i in range(3)]
    np.testing.assert_allclose(a.grad, cofactors, atol=1e-12)
    assert tg.gradcheck(tg.linalg.det, [tg.tensor(singular, requires_grad=True)])


def test_logdet_and_slogdet_of_negative_and_zero_determinants():
    negative = tg.tensor([[0.0, 1.0], [1.0, 0.0]])
    assert np.isnan(tg.logdet(negative).item())
    sign, logabsdet = tg.linalg.slogdet(tg.tensor([[1.0, 2.0], [2.0, 4.0]]))
    assert sign.item() == 0 and logabsdet.item() == -INF


@pytest.mark.parametrize("build, error", [
    (lambda m: m.linalg.inv(m.tensor([[1.0, 2.0], [2.0, 4.0]])), RuntimeError),
    (lambda m: m.linalg.inv(m.ones(2, 3)), RuntimeError),
    (lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]])), RuntimeError),
    (lambda m: m.linalg.solve(m.eye(3), m.ones(2, 2)), RuntimeError),
    (lambda m: m.linalg.solve(m.tensor([[1.0, 2.0], [2.0, 4.0]]), m.ones(2)), RuntimeError),
    (lambda m: m.linalg.matrix_norm(m.ones(3, 3), 3), RuntimeError),
    (lambda m: m.linalg.matrix_norm(m.ones(3)), RuntimeError),
    (lambda m: m.linalg.norm(m.ones(2, 2, 2), 2), RuntimeError),
    (lambda m: m.linalg.det(m.ones(2, 2, dtype=m.int64)), RuntimeError),
])
def test_bad_input_raises_as_pytorch(build, error):
    torch = pytest.importorskip("torch")
    with pytest.raises(error):
        build(torch)
    with pytest.raises(error):
        build(tg)


def test_linalg_errors_are_runtime_errors_by_their_own_name():
    with pytest.raises(tg.linalg.LinAlgError, match="singular"):
        tg.linalg.inv(tg.zeros(2, 2))
    assert issubclass(tg.linalg.LinAlgError, RuntimeError)
