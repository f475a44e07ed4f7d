"""tg.linalg with complex matrices, and linalg.eig / eigvals, against PyTorch: values, dtypes,
errors and first-order gradients (PyTorch's convention: a leaf's gradient is conj(dL/dz), and a
real input of a complex op gets the real part). Decompositions are compared through losses that
do not depend on the phase of singular or eigen vectors."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


A = _complex(3, 3)
B = _complex(3, 2)
H = A @ A.conj().T + 3 * np.eye(3)  # Hermitian positive-definite
REAL = RNG.standard_normal((2, 4, 4))


def _modulus(x):
    """|x| from real ops, so the losses stay phase-invariant."""
    return (x.real ** 2 + x.imag ** 2).sqrt()


def _product(u, s, vh):
    return (u * s.to(u.dtype).unsqueeze(-2)) @ vh


def _loss(m, out):
    """A fixed linear functional of out (real and imaginary parts), so every entry's gradient is tested."""
    weights = m.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))
    if out.is_complex():
        return (out.real * weights).sum() + (out.imag * weights.flip(0) if out.ndim else out.imag).sum()
    return (out * weights.to(out.dtype)).sum()


CASES = {
    "inv": lambda m, a, b, h: m.linalg.inv(a),
    "det": lambda m, a, b, h: m.linalg.det(a),
    "slogdet logabsdet": lambda m, a, b, h: m.linalg.slogdet(a).logabsdet,
    "slogdet sign": lambda m, a, b, h: m.linalg.slogdet(a).sign,
    "logdet": lambda m, a, b, h: m.logdet(h),
    "solve": lambda m, a, b, h: m.linalg.solve(a, b),
    "solve_ex": lambda m, a, b, h: m.linalg.solve_ex(a, b).result,
    "inv_ex": lambda m, a, b, h: m.linalg.inv_ex(a).inverse,
    "cholesky": lambda m, a, b, h: m.linalg.cholesky(h),
    "cholesky upper": lambda m, a, b, h: m.linalg.cholesky(h, upper=True),
    "cholesky_ex": lambda m, a, b, h: m.linalg.cholesky_ex(h).L,
    "cholesky_solve": lambda m, a, b, h: m.cholesky_solve(b, m.linalg.cholesky(h)),
    "cholesky_solve upper": lambda m, a, b, h: m.cholesky_solve(b, m.linalg.cholesky(h, upper=True), True),
    "cholesky_inverse": lambda m, a, b, h: m.cholesky_inverse(m.linalg.cholesky(h)),
    "eigh eigenvalues": lambda m, a, b, h: m.linalg.eigh(h).eigenvalues,
    "eigh |eigenvectors|": lambda m, a, b, h: _modulus(m.linalg.eigh(h).eigenvectors),
    "eigh upper": lambda m, a, b, h: m.linalg.eigh(h, UPLO="U").eigenvalues,
    "eigvalsh": lambda m, a, b, h: m.linalg.eigvalsh(h),
    "svdvals": lambda m, a, b, h: m.linalg.svdvals(a),
    "svd S": lambda m, a, b, h: m.linalg.svd(b).S,
    "svd |U| tall": lambda m, a, b, h: _modulus(m.linalg.svd(b, full_matrices=False).U),
    "svd |U| wide": lambda m, a, b, h: _modulus(m.linalg.svd(b.mT, full_matrices=False).U),
    "svd |Vh| wide": lambda m, a, b, h: _modulus(m.linalg.svd(b.mT, full_matrices=False).Vh),
    "svd |Vh| tall": lambda m, a, b, h: _modulus(m.linalg.svd(b, full_matrices=False).Vh),
    "svd U S Vh": lambda m, a, b, h: _product(*m.linalg.svd(a)),
    "qr Q": lambda m, a, b, h: m.linalg.qr(a).Q,
    "qr R": lambda m, a, b, h: m.linalg.qr(a).R,
    "qr tall Q": lambda m, a, b, h: m.linalg.qr(b).Q,
    "qr tall R": lambda m, a, b, h: m.linalg.qr(b).R,
    "qr wide Q": lambda m, a, b, h: m.linalg.qr(b.mT).Q,
    "qr wide R": lambda m, a, b, h: m.linalg.qr(b.mT).R,
    "pinv": lambda m, a, b, h: m.linalg.pinv(a),
    "pinv tall": lambda m, a, b, h: m.linalg.pinv(b),
    "pinv wide": lambda m, a, b, h: m.linalg.pinv(b.mT),
    "pinv hermitian": lambda m, a, b, h: m.linalg.pinv(h, hermitian=True),
    "lstsq": lambda m, a, b, h: m.linalg.lstsq(a, b).solution,
    "lstsq tall": lambda m, a, b, h: m.linalg.lstsq(b, a[:, :1]).solution,
    "lstsq residuals": lambda m, a, b, h: m.linalg.lstsq(b, a[:, :1], driver="gelsd").residuals,
    "matrix_rank": lambda m, a, b, h: m.linalg.matrix_rank(a),
    "matrix_rank hermitian": lambda m, a, b, h: m.linalg.matrix_rank(h, hermitian=True),
    "matrix_exp": lambda m, a, b, h: m.linalg.matrix_exp(a),
    "matrix_power 3": lambda m, a, b, h: m.linalg.matrix_power(a, 3),
    "matrix_power -2": lambda m, a, b, h: m.linalg.matrix_power(a, -2),
    "vector_norm": lambda m, a, b, h: m.linalg.vector_norm(a),
    "vector_norm 1, dim": lambda m, a, b, h: m.linalg.vector_norm(a, 1, dim=0),
    "matrix_norm fro": lambda m, a, b, h: m.linalg.matrix_norm(a),
    "matrix_norm nuc": lambda m, a, b, h: m.linalg.matrix_norm(a, "nuc"),
    "matrix_norm 2": lambda m, a, b, h: m.linalg.matrix_norm(a, 2),
    "matrix_norm -2": lambda m, a, b, h: m.linalg.matrix_norm(a, -2),
    "matrix_norm 1": lambda m, a, b, h: m.linalg.matrix_norm(a, 1),
    "norm": lambda m, a, b, h: m.linalg.norm(a),
    "cond": lambda m, a, b, h: m.linalg.cond(a),
    "cross": lambda m, a, b, h: m.linalg.cross(a, a.flip(0)),
    "vecdot": lambda m, a, b, h: m.linalg.vecdot(a, a.flip(0)),
    "multi_dot": lambda m, a, b, h: m.linalg.multi_dot([a, b, b.mT]),
    "householder_product": lambda m, a, b, h: m.linalg.householder_product(a, a[0, :2]),
    "lu_factor": lambda m, a, b, h: m.linalg.lu_factor(a).LU,
    "lu L": lambda m, a, b, h: m.linalg.lu(a).L,
    "lu U": lambda m, a, b, h: m.linalg.lu(a).U,
    "lu_solve": lambda m, a, b, h: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
    "lu_solve adjoint": lambda m, a, b, h: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, adjoint=True),
    "lu_solve left=False": lambda m, a, b, h: m.linalg.lu_solve(*m.linalg.lu_factor(a), b.mT, left=False),
    "solve_triangular": lambda m, a, b, h: m.linalg.solve_triangular(a, b, upper=True),
    "tensorinv": lambda m, a, b, h: m.linalg.tensorinv(a, 1),
    "tensorsolve": lambda m, a, b, h: m.linalg.tensorsolve(a, b[:, 0]),
    "eig eigenvalues": lambda m, a, b, h: m.linalg.eig(a).eigenvalues,
    "eig |eigenvectors|": lambda m, a, b, h: _modulus(m.linalg.eig(a).eigenvectors),
    "eigvals": lambda m, a, b, h: m.linalg.eigvals(a),
}


def _run(m, name, arrays):
    leaves = [m.tensor(x, requires_grad=True) for x in arrays]
    out = CASES[name](m, *leaves)
    if out.requires_grad:
        _loss(m, out).backward()
    return out, [None if t.grad is None else np.asarray(t.grad) for t in leaves]


@pytest.mark.parametrize("name", CASES)
def test_complex_linalg_matches_pytorch(name):
    theirs, their_grads = _run(torch, name, (A, B, H))
    ours, our_grads = _run(tg, name, (A, B, H))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(np.asarray(ours.detach()), theirs.detach().resolve_conj().numpy(),
                               rtol=1e-9, atol=1e-10)
    for g_theirs, g_ours in zip(their_grads, our_grads, strict=True):
        assert (g_theirs is None) == (g_ours is None)
        if g_theirs is not None:
            assert g_ours.dtype == g_theirs.dtype
            np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-7, atol=1e-9)


def _numerical_gradient(loss, x, step=1e-6):
    """PyTorch's convention by central differences: dL/dRe + i dL/dIm (just dL/dx for real x)."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        for unit in ((1, 1j) if np.iscomplexobj(x) else (1,)):
            e = np.zeros_like(x)
            e[index] = unit * step
            grad[index] += unit * (loss(x + e) - loss(x - e)) / (2 * step)
    return grad


@pytest.mark.parametrize("name", ["eig eigenvalues", "eig |eigenvectors|", "svd |U| wide", "qr wide R",
                                  "cholesky upper", "slogdet sign", "eigh |eigenvectors|"])
def test_complex_gradients_match_finite_differences(name):
    arrays = [A, B, H]
    _, grads = _run(tg, name, arrays)
    for i, x in enumerate(arrays):
        if grads[i] is None:
            continue
        if name.startswith("eigh") or name.startswith("cholesky"):
            continue  # (these read one triangle: a perturbation that is not Hermitian is no test)

        def loss(value, i=i):
            inputs = [tg.tensor(v) for v in arrays[:i] + [value] + arrays[i + 1:]]
            return float(_loss(tg, CASES[name](tg, *inputs)).item())

        np.testing.assert_allclose(grads[i], _numerical_gradient(loss, x), rtol=1e-5, atol=1e-6)


# --- eig and eigvals -------------------------------------------------------------------------------

@pytest.mark.parametrize("values", [REAL, _complex(2, 3, 3)], ids=["real", "complex"])
def test_eig_matches_pytorch_float64(values):
    theirs = torch.linalg.eig(torch.tensor(values))
    ours = tg.linalg.eig(tg.tensor(values))
    assert type(ours).__name__ == "linalg_eig" and ours._fields == ("eigenvalues", "eigenvectors")
    for t, o in zip(theirs, ours, strict=True):
        assert o.dtype == tg.complex128
        np.testing.assert_allclose(np.asarray(o), t.numpy(), rtol=1e-10, atol=1e-12)
    eigvals = tg.linalg.eigvals(tg.tensor(values))
    np.testing.assert_allclose(np.asarray(eigvals), theirs.eigenvalues.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype, result", [(np.float32, tg.complex64), (np.complex64, tg.complex64),
                                           (np.float64, tg.complex128)])
def test_eig_dtypes_and_decomposition(dtype, result):
    # (single-precision geev builds differ in each eigenvector's sign: check A V = V L and unit norms)
    a = REAL[0].astype(dtype)
    values, vectors = tg.linalg.eig(tg.tensor(a))
    assert values.dtype == result and vectors.dtype == result
    assert tg.linalg.eigvals(tg.tensor(a)).dtype == result
    v, lam = np.asarray(vectors), np.asarray(values)
    np.testing.assert_allclose(a @ v, v * lam, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1, rtol=1e-5)
    their_values = torch.linalg.eigvals(torch.tensor(a)).numpy()
    distances = np.abs(lam[:, None] - their_values[None, :])  # each eigenvalue is one of PyTorch's
    assert distances.min(axis=1).max() < 1e-5 and distances.min(axis=0).max() < 1e-5


@pytest.mark.parametrize("values", [REAL, _complex(3, 3)], ids=["real", "complex"])
def test_eig_gradients_match_pytorch(values):
    grads = []
    for m in (torch, tg):
        a = m.tensor(values, requires_grad=True)
        lam, v = m.linalg.eig(a)
        weights = m.tensor(np.arange(lam.shape[-1]) + 0.5j)
        loss = (lam * weights).real.sum() + _modulus(v).sum() + (lam.real ** 2 + lam.imag ** 2).sum()
        loss.backward()
        grads.append(np.asarray(a.grad))
    assert grads[1].dtype == grads[0].dtype
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-8, atol=1e-10)


def test_eig_refuses_a_loss_that_depends_on_the_phase_of_the_eigenvectors():
    for m in (torch, tg):
        a = m.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            m.linalg.eig(a).eigenvectors.real.sum().backward()


def test_eig_errors_match_pytorch():
    for op in ("eig", "eigvals"):
        with pytest.raises(RuntimeError, match=f"linalg.{op}.*2 by 3"):
            getattr(tg.linalg, op)(tg.ones(2, 3))
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            getattr(tg.linalg, op)(tg.ones(3))
        with pytest.raises(RuntimeError, match="int64"):
            getattr(tg.linalg, op)(tg.ones(3, 3, dtype=tg.int64))
        with pytest.raises(RuntimeError):
            getattr(torch.linalg, op)(torch.ones(3, 3, dtype=torch.int64))
    values, vectors = tg.linalg.eig(tg.ones(2, 0, 0))
    assert values.shape == (2, 0) and vectors.shape == (2, 0, 0) and values.dtype == tg.complex64


def test_the_removed_eig_and_symeig_raise_pytorchs_error():
    for name in ("eig", "symeig"):
        messages = []
        for m in (torch, tg):
            with pytest.raises(RuntimeError) as error:
                getattr(m, name)(m.ones(2, 2))
            messages.append(str(error.value))
        assert messages[0] == messages[1]


# --- the rest --------------------------------------------------------------------------------------

def test_vector_norm_takes_x_or_input_as_pytorch():
    x = np.array([3.0, -4.0])
    for m in (torch, tg):
        assert float(m.linalg.vector_norm(x=m.tensor(x))) == 5
        assert float(m.linalg.vector_norm(input=m.tensor(x), ord=1)) == 7
        assert float(m.linalg.vector_norm(m.tensor(x), float("inf"))) == 4
        with pytest.raises(TypeError):
            m.linalg.vector_norm()


def test_complex_lu_pivots_by_real_plus_imaginary_magnitude():
    # LAPACK's izamax picks |re| + |im|: 1.6 + 1.6j beats 3 although its modulus is smaller.
    a = np.array([[3 + 0j, 1], [1.6 + 1.6j, 2]])
    theirs = torch.linalg.lu_factor(torch.tensor(a))
    ours = tg.linalg.lu_factor(tg.tensor(a))
    np.testing.assert_array_equal(np.asarray(ours.pivots), theirs.pivots.numpy())
    np.testing.assert_allclose(np.asarray(ours.LU), theirs.LU.numpy(), rtol=1e-12)


def test_mixed_complex_dtypes_are_refused_as_pytorch():
    a, b = torch.tensor(A), torch.tensor(B).to(torch.complex64)
    with pytest.raises(RuntimeError):
        torch.linalg.lstsq(a, b)
    with pytest.raises(RuntimeError, match="same dtype"):
        tg.linalg.lstsq(tg.tensor(A), tg.tensor(B).to(tg.complex64))
