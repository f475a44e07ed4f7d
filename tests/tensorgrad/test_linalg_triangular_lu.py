"""Triangular solves, the LU family, the `*_ex` forms and the remaining `torch.linalg` names, against
PyTorch (values, pivots, infos, gradients, errors) and against finite differences in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")
# The older spellings (torch.lu, torch.cholesky, ...) warn that they are deprecated, in both libraries.
pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated in favor of:UserWarning")
RNG = np.random.default_rng(0)


def _both(*arrays):
    """Each array as a float64 leaf requiring grad, in both libraries."""
    return ([tg.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _compare(fn_ours, fn_theirs, arrays, rtol=1e-9, atol=1e-10, outputs=None):
    """Values of every output and the gradients of every input, under a random weighting."""
    ours, theirs = _both(*arrays)
    out_ours, out_theirs = fn_ours(*ours), fn_theirs(*theirs)
    if not isinstance(out_ours, tuple):
        out_ours, out_theirs = (out_ours,), (out_theirs,)
    total_ours, total_theirs = 0, 0
    for i, (a, b) in enumerate(zip(out_ours, out_theirs, strict=True)):
        np.testing.assert_allclose(np.asarray(a.detach().numpy(), dtype=float),
                                   b.detach().numpy().astype(float), rtol=rtol, atol=atol,
                                   err_msg=f"output {i}")
        if (outputs is None or i in outputs) and b.requires_grad:
            w = RNG.standard_normal(b.shape)
            total_ours = total_ours + (a * tg.tensor(w)).sum()
            total_theirs = total_theirs + (b * torch.tensor(w)).sum()
    total_ours.backward()
    total_theirs.backward()
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=rtol, atol=atol, err_msg=f"grad of input {i}")


def _matrix(*shape, well_conditioned=True):
    a = RNG.standard_normal(shape)
    if well_conditioned and shape[-1] == shape[-2]:
        a = a + 3 * np.eye(shape[-1])
    return a


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular_reads_one_triangle_as_pytorch(upper, left, unitriangular):
    a = _matrix(2, 4, 4)  # both triangles full: only one may be read
    b = RNG.standard_normal((2, 4, 3) if left else (2, 3, 4))

    def solve(m):
        return lambda A, B: m.linalg.solve_triangular(A, B, upper=upper, left=left,
                                                      unitriangular=unitriangular)
    _compare(solve(tg), solve(torch), [a, b])


def test_solve_triangular_broadcasts_batches_and_checks_shapes():
    _compare(lambda A, B: tg.linalg.solve_triangular(A, B, upper=False),
             lambda A, B: torch.linalg.solve_triangular(A, B, upper=False),
             [_matrix(3, 3), RNG.standard_normal((2, 3, 2))])
    with pytest.raises(RuntimeError, match="solve_triangular"):
        tg.linalg.solve_triangular(tg.eye(3), tg.ones(2, 1), upper=True)
    with pytest.raises(RuntimeError, match="solve_triangular"):
        tg.linalg.solve_triangular(tg.eye(3), tg.ones(3), upper=True)  # B must be a matrix


def test_solve_triangular_gradient_against_finite_differences():
    a = tg.tensor(_matrix(3, 3), requires_grad=True)
    b = tg.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    assert tg.gradcheck(lambda A, B: tg.linalg.solve_triangular(A, B, upper=True), (a, b))
    assert tg.gradcheck(lambda A, B: tg.linalg.solve_triangular(A, B, upper=False, left=False,
                                                                 unitriangular=True), (a, b.mT.detach()
                                                                                       .requires_grad_()))


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 4), (2, 3, 4, 2)])
def test_lu_factor_gives_pytorchs_factors_pivots_and_gradient(shape):
    a = RNG.standard_normal(shape)
    _compare(lambda A: tuple(tg.linalg.lu_factor(A)), lambda A: tuple(torch.linalg.lu_factor(A)), [a])
    _compare(lambda A: tuple(tg.linalg.lu(A)), lambda A: tuple(torch.linalg.lu(A)), [a])
    LU, pivots = tg.linalg.lu_factor(tg.tensor(a))  # noqa: N806
    assert pivots.dtype == tg.int32 and LU.shape == shape
    P, L, U = tg.lu_unpack(LU, pivots)  # noqa: N806
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)


def test_lu_factor_gradient_against_finite_differences():
    for shape in [(3, 3), (4, 2), (2, 4)]:
        a = tg.tensor(RNG.standard_normal(shape), requires_grad=True)
        assert tg.gradcheck(lambda A: tg.linalg.lu_factor(A).LU, (a,))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_solves_and_sends_gradients_to_lu_and_b(left, adjoint):
    a, b = _matrix(2, 4, 4), RNG.standard_normal((2, 4, 3) if left else (2, 3, 4))

    def solve(m):
        def run(A, B):
            LU, pivots = m.linalg.lu_factor(A)  # noqa: N806
            return m.linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint)
        return run
    _compare(solve(tg), solve(torch), [a, b])
    _compare(lambda A, B: tg.lu_solve(B, *tg.linalg.lu_factor(A)),
             lambda A, B: torch.lu_solve(B, *torch.linalg.lu_factor(A)), [a, RNG.standard_normal((2, 4, 3))])


def test_a_singular_matrix_gets_pytorchs_infos_and_errors():
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    zero = np.zeros((3, 3))
    for a in (singular, zero):
        ours, theirs = tg.linalg.lu_factor_ex(tg.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
        assert ours.info.item() == theirs.info.item() > 0
        np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
        np.testing.assert_allclose(ours.LU.numpy(), theirs.LU.numpy(), atol=1e-15)
        assert tg.linalg.inv_ex(tg.tensor(a)).info.item() == torch.linalg.inv_ex(torch.tensor(a)).info.item()
        assert (tg.linalg.solve_ex(tg.tensor(a), tg.ones(3, dtype=tg.float64)).info.item()
                == torch.linalg.solve_ex(torch.tensor(a), torch.ones(3, dtype=torch.float64)).info.item())
        with pytest.raises(RuntimeError, match="is zero and using it on lu_solve"):
            tg.linalg.lu_factor(tg.tensor(a))
        with pytest.raises(RuntimeError, match="is zero and using it on lu_solve"):
            torch.linalg.lu_factor(torch.tensor(a))
        with pytest.raises(RuntimeError, match="singular"):
            tg.linalg.inv_ex(tg.tensor(a), check_errors=True)
        assert tg.linalg.lu(tg.tensor(a)).U.shape == (3, 3)  # lu itself does not refuse
        assert len(tg.lu(tg.tensor(a), get_infos=True)) == 3
    with pytest.raises(RuntimeError, match="without pivoting"):
        tg.linalg.lu_factor(tg.eye(2), pivot=False)
    good = _matrix(3, 3)
    inverse, info = tg.linalg.inv_ex(tg.tensor(good))
    assert info.item() == 0 and info.dtype == tg.int32
    np.testing.assert_allclose(inverse.numpy(), np.linalg.inv(good), rtol=1e-12)


@pytest.mark.parametrize("a", [
    np.array([[4.0, 2.0], [2.0, 3.0]]),
    np.array([[1.0, 2.0], [2.0, 1.0]]),
    np.array([[-1.0, 0.0], [0.0, 2.0]]),
    np.array([[4.0, 2.0, 0.0], [2.0, 2.0, 0.0], [0.0, 0.0, -1.0]]),
])
def test_cholesky_ex_info_is_pytorchs(a):
    ours, theirs = tg.linalg.cholesky_ex(tg.tensor(a)), torch.linalg.cholesky_ex(torch.tensor(a))
    assert ours.info.item() == theirs.info.item()
    if theirs.info.item() == 0:
        np.testing.assert_allclose(ours.L.numpy(), theirs.L.numpy(), rtol=1e-12)
    else:
        with pytest.raises(RuntimeError, match=f"leading minor of order {theirs.info.item()}"):
            tg.linalg.cholesky_ex(tg.tensor(a), check_errors=True)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1])
def test_cond_as_pytorch(p):
    a = _matrix(2, 3, 3)
    if p in (None, 2, -2):
        _compare(lambda A: tg.linalg.cond(A, p), lambda A: torch.linalg.cond(A, p), [a])
    else:  # PyTorch's backward fails for these norms (it changes inv_ex's output in place): check ours
        np.testing.assert_allclose(tg.linalg.cond(tg.tensor(a), p).numpy(),
                                   torch.linalg.cond(torch.tensor(a), p).numpy(), rtol=1e-12)
        assert tg.gradcheck(lambda A: tg.linalg.cond(A, p), (tg.tensor(a, requires_grad=True),))
    singular = np.array([[1.0, 0.0], [0.0, 0.0]])
    expected = torch.linalg.cond(torch.tensor(singular), p).item()
    assert tg.linalg.cond(tg.tensor(singular), p).item() == expected


def test_vecdot_tensorinv_tensorsolve_as_pytorch():
    _compare(lambda x, y: tg.linalg.vecdot(x, y, dim=0), lambda x, y: torch.linalg.vecdot(x, y, dim=0),
             [RNG.standard_normal((3, 2)), RNG.standard_normal((3, 1))])
    a = _matrix(6, 6).reshape(6, 2, 3)
    _compare(lambda A: tg.linalg.tensorinv(A, ind=1), lambda A: torch.linalg.tensorinv(A, ind=1), [a])
    b = RNG.standard_normal((2, 3))
    _compare(lambda A, B: tg.linalg.tensorsolve(A, B), lambda A, B: torch.linalg.tensorsolve(A, B),
             [_matrix(6, 6).reshape(2, 3, 6), b])
    _compare(lambda A, B: tg.linalg.tensorsolve(A, B, dims=(0,)),
             lambda A, B: torch.linalg.tensorsolve(A, B, dims=(0,)), [_matrix(6, 6).reshape(6, 2, 3), b])
    with pytest.raises(RuntimeError):
        tg.linalg.tensorinv(tg.ones(2, 3), ind=1)


def test_householder_product_as_pytorch():
    _compare(lambda A, tau: tg.linalg.householder_product(A, tau),
             lambda A, tau: torch.linalg.householder_product(A, tau),
             [RNG.standard_normal((2, 5, 3)), RNG.uniform(0.5, 1.5, (2, 2))])
    A, tau = torch.geqrf(torch.tensor(RNG.standard_normal((4, 3))))  # noqa: N806
    q = tg.linalg.householder_product(tg.tensor(A.numpy()), tg.tensor(tau.numpy()))
    np.testing.assert_allclose(q.numpy(), torch.linalg.householder_product(A, tau).numpy(), rtol=1e-12)
    np.testing.assert_allclose((q.mT @ q).numpy(), np.eye(3), atol=1e-12)  # orthonormal columns


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_as_pytorch(upper):
    m = _matrix(3, 3)
    spd = m @ m.T + 3 * np.eye(3)
    factor = np.linalg.cholesky(spd)
    factor = factor.T if upper else factor
    _compare(lambda B, L: tg.cholesky_solve(B, L, upper), lambda B, L: torch.cholesky_solve(B, L, upper),
             [RNG.standard_normal((2, 3, 2)), factor])
    _compare(lambda L: tg.cholesky_inverse(L, upper), lambda L: torch.cholesky_inverse(L, upper), [factor])
    _compare(lambda B, L: B.cholesky_solve(L, upper), lambda B, L: B.cholesky_solve(L, upper),
             [RNG.standard_normal((3, 2)), factor])
    _compare(lambda A: tg.cholesky(A, upper), lambda A: torch.cholesky(A, upper), [spd])
    lopsided = spd + np.triu(np.full((3, 3), 0.3), 1)  # only the triangle `upper` names is read
    _compare(lambda A: tg.linalg.cholesky(A, upper=upper), lambda A: torch.linalg.cholesky(A, upper=upper),
             [lopsided])


@pytest.mark.parametrize("upper, transpose, unitriangular", [(True, False, False), (False, True, False),
                                                             (True, True, True)])
def test_triangular_solve_the_older_form(upper, transpose, unitriangular):
    def solve(_):
        return lambda b, A: tuple(b.triangular_solve(A, upper, transpose, unitriangular))
    _compare(solve(tg), solve(torch), [RNG.standard_normal((3, 2)), _matrix(3, 3)])


def test_the_older_spellings_warn_as_pytorchs_do():
    a = tg.tensor(_matrix(3, 3))
    for call in (lambda: tg.lu(a), lambda: tg.cholesky(a @ a.T), lambda: tg.triangular_solve(a, a),
                 lambda: tg.lu_solve(a, *tg.linalg.lu_factor(a))):
        with pytest.warns(UserWarning, match="is deprecated in favor of"):
            call()


def test_the_older_lu_method_gives_packed_factors():
    a = _matrix(3, 3)
    ours, theirs = tg.tensor(a).lu(), torch.tensor(a).lu()
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    b = RNG.standard_normal((3, 1))
    np.testing.assert_allclose(tg.tensor(b).lu_solve(*ours).numpy(),
                               torch.tensor(b).lu_solve(*theirs).numpy(),
                               rtol=1e-12)


def test_lu_and_triangular_solves_keep_foreign_arrays():
    from foreign_array import foreign, is_foreign

    a, b = _matrix(3, 4, 4), RNG.standard_normal((3, 4, 2))
    results = []
    for convert in (np.array, foreign):
        A = tg.from_numpy(convert(a)).requires_grad_()  # noqa: N806
        B = tg.from_numpy(convert(b)).requires_grad_()  # noqa: N806
        LU, pivots = tg.linalg.lu_factor(A)  # noqa: N806
        x = tg.linalg.lu_solve(LU, pivots, B) + tg.linalg.solve_triangular(A, B, upper=True)
        (x * x).sum().backward()
        results.append((x, A.grad, B.grad))
    for plain, moved in zip(*results, strict=True):
        moved_data = moved.data if isinstance(moved, tg.Tensor) else moved
        plain_data = plain.data if isinstance(plain, tg.Tensor) else plain
        assert is_foreign(moved_data)
        np.testing.assert_allclose(np.asarray(moved_data), np.asarray(plain_data), rtol=1e-12)
