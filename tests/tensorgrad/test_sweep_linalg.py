"""Linear algebra against PyTorch where its own OpInfo samples found differences: empty matrices
(inv_ex, solve_ex, lu_solve, the 1 / 2 / inf matrix norms), lstsq's residuals (always an output of
the graph, real for complex input), matrix_power(A, 0) and householder_product with no reflectors
in the graph, linalg.cross's rank check, tensordot's size-1 broadcast, tensorsolve's dims,
matrix_exp in float16, addbmm's float16 rounding, einsum's integer dtypes, and the randomized
svd_lowrank / pca_lowrank."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sample_arrays import random_array

import tensorgrad as tg

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(7)


def _random(shape, dtype=np.float64):
    return random_array(RNG, shape, dtype)


def _name(t):
    """A dtype's name without its library ("float32" for tg.float32 and torch.float32)."""
    return str(t.dtype).split(".")[-1]


def _pair(array, requires_grad=False):
    return (tg.tensor(array.copy(), requires_grad=requires_grad),
            torch.tensor(array.copy(), requires_grad=requires_grad))


def _same(ours, theirs, tol=1e-10):
    assert ours.shape == tuple(theirs.shape)
    assert _name(ours) == _name(theirs)
    expected = theirs.detach().resolve_conj().numpy()
    np.testing.assert_allclose(ours.detach().numpy(), expected, rtol=tol, atol=tol)


# --- empty matrices -----------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [(), (2,), (0,)])
def test_inv_ex_and_solve_ex_of_empty_matrices(batch):
    a = np.zeros(batch + (0, 0))
    ours, theirs = tg.linalg.inv_ex(tg.tensor(a)), torch.linalg.inv_ex(torch.tensor(a))
    _same(ours.inverse, theirs.inverse)
    _same(ours.info, theirs.info)
    for b_shape in [batch + (0,), batch + (0, 3)]:
        b = np.zeros(b_shape)
        ours = tg.linalg.solve_ex(tg.tensor(a), tg.tensor(b))
        theirs = torch.linalg.solve_ex(torch.tensor(a), torch.tensor(b))
        _same(ours.result, theirs.result)
        _same(ours.info, theirs.info)


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 0)])
def test_lu_factor_and_lu_of_empty_matrices(shape):
    a = np.zeros(shape)
    ours, theirs = tg.linalg.lu_factor_ex(tg.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
    for o, t in zip(ours, theirs, strict=True):
        _same(o, t)
    for o, t in zip(tg.linalg.lu(tg.tensor(a)), torch.linalg.lu(torch.tensor(a)), strict=True):
        _same(o, t)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_with_empty_factors(left, adjoint):
    lu, pivots = np.zeros((0, 0)), np.zeros((0,), np.int32)
    b = np.zeros((0, 4)) if left else np.zeros((4, 0))
    ours = tg.linalg.lu_solve(tg.tensor(lu), tg.tensor(pivots), tg.tensor(b), left=left, adjoint=adjoint)
    theirs = torch.linalg.lu_solve(torch.tensor(lu), torch.tensor(pivots), torch.tensor(b), left=left,
                                   adjoint=adjoint)
    _same(ours, theirs)


def test_legacy_lu_solve_with_empty_factors():
    b, lu, pivots = np.zeros((0, 4)), np.zeros((0, 0)), np.zeros((0,), np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = tg.lu_solve(tg.tensor(b), tg.tensor(lu), tg.tensor(pivots))
        theirs = torch.lu_solve(torch.tensor(b), torch.tensor(lu), torch.tensor(pivots))
    _same(ours, theirs)


def test_lu_solve_still_solves_batches():
    a, b = _random((2, 3, 3)), _random((2, 3, 2))
    lu, pivots = tg.linalg.lu_factor(tg.tensor(a))
    np.testing.assert_allclose(tg.linalg.lu_solve(lu, pivots, tg.tensor(b)).numpy(), np.linalg.solve(a, b),
                               atol=1e-12)


@pytest.mark.parametrize("ord", [1, -1, 2, -2, math.inf, -math.inf, "fro", "nuc"])
@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 3)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_matrix_norm_of_empty_matrices(ord, shape, keepdim, dtype):  # noqa: A002
    """The largest of no column / row sums or singular values is 0 (a constant); the smallest raises
    IndexError, as in PyTorch."""
    ours_in, theirs_in = _pair(np.zeros(shape, dtype), requires_grad=True)
    try:
        theirs = torch.linalg.matrix_norm(theirs_in, ord, keepdim=keepdim)
    except IndexError:
        with pytest.raises(IndexError):
            tg.linalg.matrix_norm(ours_in, ord, keepdim=keepdim)
        return
    ours = tg.linalg.matrix_norm(ours_in, ord, keepdim=keepdim)
    _same(ours, theirs)
    assert ours.requires_grad == theirs.requires_grad


@pytest.mark.parametrize("ord", [1, math.inf, 2])
def test_norm_of_an_empty_matrix_and_of_a_nonempty_one(ord):  # noqa: A002
    _same(tg.linalg.norm(tg.zeros(0, 0), ord), torch.linalg.norm(torch.zeros(0, 0), ord))
    a = _random((3, 4))
    ours_in, theirs_in = _pair(a, requires_grad=True)
    ours, theirs = tg.linalg.norm(ours_in, ord), torch.linalg.norm(theirs_in, ord)
    _same(ours, theirs)
    ours.backward()
    theirs.backward()
    np.testing.assert_allclose(np.asarray(ours_in.grad), theirs_in.grad.numpy(), atol=1e-10)


# --- lstsq -------------------------------------------------------------------------------------------


LSTSQ_CASES = [(driver, shape) for driver in ("gels", "gelsy", "gelsd", "gelss")
               for shape in [(2, 3), (3, 3), (4, 3), (3, 4, 3)]]


@pytest.mark.parametrize(("driver", "shape"), LSTSQ_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lstsq_outputs_dtypes_and_graph(driver, shape, dtype):
    """residuals is an output of the graph whether filled or empty, and real (as singular_values)."""
    a, b = _random(shape, dtype), _random(shape[:-1] + (2,), dtype)
    (ours_a, theirs_a), (ours_b, theirs_b) = _pair(a, True), _pair(b, True)
    ours = tg.linalg.lstsq(ours_a, ours_b, driver=driver)
    theirs = torch.linalg.lstsq(theirs_a, theirs_b, driver=driver)
    for o, t in zip(ours, theirs, strict=True):
        _same(o, t, 1e-8)
        assert o.requires_grad == t.requires_grad
    if ours.residuals.numel() == 0:  # an empty output: zero gradients
        ours.residuals.sum().backward()
        assert not np.asarray(ours_a.grad).any() and not np.asarray(ours_b.grad).any()


@pytest.mark.parametrize("driver", ["gels", "gelsd"])
def test_lstsq_residuals_gradient_matches_pytorch(driver):
    a, b = _random((5, 3)), _random((5, 2))
    (ours_a, theirs_a), (ours_b, theirs_b) = _pair(a, True), _pair(b, True)
    weights = _random((2,))
    (tg.linalg.lstsq(ours_a, ours_b, driver=driver).residuals * tg.tensor(weights)).sum().backward()
    (torch.linalg.lstsq(theirs_a, theirs_b, driver=driver).residuals * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(np.asarray(ours_a.grad), theirs_a.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(np.asarray(ours_b.grad), theirs_b.grad.numpy(), atol=1e-10)


def test_lstsq_gradcheck_with_empty_residuals():
    a, b = tg.tensor(_random((2, 3)), requires_grad=True), tg.tensor(_random((2, 2)), requires_grad=True)
    assert tg.gradcheck(lambda x, y: tg.linalg.lstsq(x, y, driver="gelsd").solution, [a, b])
    assert tg.gradcheck(lambda x, y: tg.linalg.lstsq(x, y).residuals.sum() + x.sum(), [a, b])


# --- results that do not depend on the input -------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 1), (2, 2, 2), (0, 2, 2)])
def test_matrix_power_zero_is_in_the_graph(shape):
    a = _random(shape)
    (ours_in, theirs_in) = _pair(a, True)
    ours, theirs = tg.linalg.matrix_power(ours_in, 0), torch.linalg.matrix_power(theirs_in, 0)
    _same(ours, theirs)
    assert ours.requires_grad and theirs.requires_grad
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_array_equal(np.asarray(ours_in.grad), theirs_in.grad.numpy())
    (grad,) = tg.autograd.grad(tg.linalg.matrix_power(ours_in, 0).sum(), ours_in, create_graph=True)
    assert not grad.detach().numpy().any()
    assert not tg.linalg.matrix_power(tg.tensor(a), 0).requires_grad


@pytest.mark.parametrize("shape", [(0, 0), (5, 5), (5, 3), (2, 4, 3)])
@pytest.mark.parametrize("tau_grad", [False, True])
def test_householder_product_without_reflectors(shape, tau_grad):
    a, tau = _random(shape), np.zeros(shape[:-2] + (0,))
    (ours_a, theirs_a), (ours_t, theirs_t) = _pair(a, not tau_grad), _pair(tau, tau_grad)
    ours = tg.linalg.householder_product(ours_a, ours_t)
    theirs = torch.linalg.householder_product(theirs_a, theirs_t)
    _same(ours, theirs)
    assert ours.requires_grad and theirs.requires_grad
    ours.sum().backward()
    leaf = ours_t if tau_grad else ours_a
    assert leaf.grad is not None and not np.asarray(leaf.grad).any()


def test_householder_product_with_reflectors_unchanged():
    a, tau = _random((5, 3)), _random((2,))
    (ours_a, theirs_a), (ours_t, theirs_t) = _pair(a, True), _pair(tau, True)
    _same(tg.linalg.householder_product(ours_a, ours_t), torch.linalg.householder_product(theirs_a, theirs_t))
    assert tg.gradcheck(tg.linalg.householder_product, [ours_a, ours_t])


# --- cross, tensordot, tensorsolve ----------------------------------------------------------------


@pytest.mark.parametrize(("shape_a", "shape_b"), [((2, 3), (3,)), ((3,), (4, 3)), ((1, 2, 3), (2, 3))])
def test_cross_needs_the_same_number_of_dimensions(shape_a, shape_b):
    a, b = tg.tensor(_random(shape_a)), tg.tensor(_random(shape_b))
    with pytest.raises(RuntimeError, match="linalg.cross: inputs must have the same number of dimensions."):
        torch.linalg.cross(torch.zeros(shape_a), torch.zeros(shape_b))
    with pytest.raises(RuntimeError, match="linalg.cross: inputs must have the same number of dimensions."):
        tg.linalg.cross(a, b)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        tg.cross(a, b, dim=-1)


def test_cross_still_broadcasts_sizes():
    a, b = _random((1, 3)), _random((4, 3))
    _same(tg.linalg.cross(tg.tensor(a), tg.tensor(b)), torch.linalg.cross(torch.tensor(a), torch.tensor(b)))


TENSORDOT_CASES = [((1, 1, 1), (2, 1, 2), ((0, 1), (2, 0))), ((1, 1, 1), (2, 1, 2), ([0, 1], [2, 0])),
                   ((3, 1), (1, 4), ([1], [0])), ((3, 4), (1, 5), ([1], [0])),
                   ((2, 1, 3), (3, 5, 1), ([1, 2], [2, 0])), ((2, 3), (3, 2), 1)]


@pytest.mark.parametrize(("shape_a", "shape_b", "dims"), TENSORDOT_CASES)
def test_tensordot_broadcasts_size_one_contractions(shape_a, shape_b, dims):
    a, b = _random(shape_a), _random(shape_b)
    (ours_a, theirs_a), (ours_b, theirs_b) = _pair(a, True), _pair(b, True)
    ours, theirs = tg.tensordot(ours_a, ours_b, dims=dims), torch.tensordot(theirs_a, theirs_b, dims=dims)
    _same(ours, theirs)
    weights = _random(ours.shape)
    (ours * tg.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(np.asarray(ours_a.grad), theirs_a.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(ours_b.grad), theirs_b.grad.numpy(), atol=1e-12)


def test_tensordot_integers_and_mismatch():
    a, b = RNG.integers(-3, 4, (3, 1)).astype(np.int32), RNG.integers(-3, 4, (2, 4)).astype(np.int32)
    _same(tg.tensordot(tg.tensor(a), tg.tensor(b), dims=([1], [0])),
          torch.tensordot(torch.tensor(a), torch.tensor(b), dims=([1], [0])))
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        tg.tensordot(tg.zeros(3, 2), tg.zeros(3, 4), dims=([1], [0]))


TENSORSOLVE_CASES = [((2, 3, 6), (2, 3), (0, 2)), ((2, 3, 6), (3, 2), None), ((6, 2, 3), (6,), None),
                     ((3, 2, 6), (3, 2), (-1,)), ((2, 3, 6), (6,), None), ((2, 3, 4), (6,), None),
                     ((4, 6), (6,), None)]


@pytest.mark.parametrize(("shape_a", "shape_b", "dims"), TENSORSOLVE_CASES)
def test_tensorsolve_dims_and_sizes(shape_a, shape_b, dims):
    a, b = _random(shape_a), _random(shape_b)
    try:
        theirs = torch.linalg.tensorsolve(torch.tensor(a), torch.tensor(b), dims=dims)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            tg.linalg.tensorsolve(tg.tensor(a), tg.tensor(b), dims=dims)
        return
    _same(tg.linalg.tensorsolve(tg.tensor(a), tg.tensor(b), dims=dims), theirs, 1e-8)


# --- matrix_exp ------------------------------------------------------------------------------------


def test_matrix_exp_float32_is_float32_rounding():
    """Large entries (up to ~1e5) make absolute differences of a few 1e-2: the relative error to the
    float64 result is float32's, as PyTorch's."""
    a = (_random((5, 5, 5)) * 2.5).astype(np.float32)
    exact = torch.matrix_exp(torch.tensor(a, dtype=torch.float64)).numpy()
    ours = tg.linalg.matrix_exp(tg.tensor(a)).numpy()
    theirs = torch.matrix_exp(torch.tensor(a)).numpy()
    scale = np.abs(exact).max(axis=(-2, -1), keepdims=True)
    assert ours.dtype == np.float32
    assert np.abs(ours - exact).max() / scale.max() < 1e-5
    assert (np.abs(ours - exact) / scale).max() <= max((np.abs(theirs - exact) / scale).max(), 1e-6)


def test_matrix_exp_float16_through_float32():
    """Computed in float32, then rounded. PyTorch's CPU half kernel is not matched: it gives
    exp(I) = -20896 (and nan for most inputs)."""
    a = (_random((3, 4, 4)) * 0.5).astype(np.float16)
    x = tg.tensor(a, requires_grad=True)
    ours = tg.linalg.matrix_exp(x)
    assert ours.dtype == tg.float16
    expected = torch.matrix_exp(torch.tensor(a.astype(np.float32))).numpy().astype(np.float16)
    np.testing.assert_array_equal(ours.detach().numpy(), expected)
    ours.sum().backward()
    assert np.asarray(x.grad).dtype == np.float16


# --- addbmm float16 --------------------------------------------------------------------------------


@pytest.mark.parametrize("input_shape", [(5, 10), (1,), ()])
@pytest.mark.parametrize(("beta", "alpha"), [(1, 1), (0.5, 2.0), (0.3, 0.7), (0, 1.3)])
def test_addbmm_float16_rounds_per_batch_as_pytorch(input_shape, beta, alpha):
    i = (RNG.standard_normal(input_shape) * 3).astype(np.float16)
    a = (RNG.standard_normal((5, 5, 5)) * 3).astype(np.float16)
    b = (RNG.standard_normal((5, 5, 10)) * 3).astype(np.float16)
    ours = tg.addbmm(tg.tensor(i), tg.tensor(a), tg.tensor(b), beta=beta, alpha=alpha)
    theirs = torch.addbmm(torch.tensor(i), torch.tensor(a), torch.tensor(b), beta=beta, alpha=alpha)
    assert ours.dtype == tg.float16
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_addbmm_float16_gradients_and_other_dtypes():
    a = tg.tensor(_random((3, 2, 4)).astype(np.float16), requires_grad=True)
    b = tg.tensor(_random((3, 4, 2)).astype(np.float16), requires_grad=True)
    i = tg.tensor(np.full((2, 2), np.nan, np.float16), requires_grad=True)
    out = tg.addbmm(i, a, b, beta=0)  # beta = 0 ignores input, nan included
    assert not np.isnan(out.detach().numpy()).any()
    out.sum().backward()
    assert np.asarray(a.grad).dtype == np.float16 and not np.asarray(i.grad).any()
    for dtype in (np.float64, np.int32):
        x, y, z = (RNG.integers(-3, 4, s).astype(dtype) for s in [(2, 2), (3, 2, 4), (3, 4, 2)])
        _same(tg.addbmm(tg.tensor(x), tg.tensor(y), tg.tensor(z)),
              torch.addbmm(torch.tensor(x), torch.tensor(y), torch.tensor(z)))


# --- einsum dtypes ---------------------------------------------------------------------------------


EINSUM_CASES = {"i->": ((3,),), "ij->i": ((2, 3),), "ij->ij": ((2, 3),), "ij->ji": ((2, 3),),
                "ii->i": ((3, 3),), "ii->": ((3, 3),), "ij,jk->ik": ((2, 3), (3, 4)),
                "ij,jk->": ((2, 3), (3, 4)), "i,i->": ((3,), (3,)), "i,j->ij": ((3,), (3,)),
                "ij,j->ij": ((2, 3), (3,)), "ij,ij->": ((2, 3), (2, 3)), "iji->j": ((1, 3, 1),),
                "...ik,...j->ij": ((1, 2, 3), (3,)), "i,i,i->": ((3,), (3,), (3,)),
                "ij,kl->": ((2, 3), (2, 3)), "ij,k->ij": ((2, 3), (3,))}


@pytest.mark.parametrize("equation", list(EINSUM_CASES))
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int16, np.bool_, np.float16, np.int64])
def test_einsum_integer_dtypes(equation, dtype):
    """A letter summed away on one operand alone widens integers to int64 (PyTorch's sum); products
    keep the dtype."""
    arrays = [RNG.integers(0, 3, shape).astype(dtype) for shape in EINSUM_CASES[equation]]
    try:
        theirs = torch.einsum(equation, *(torch.tensor(a) for a in arrays))
    except RuntimeError:  # bool products, which PyTorch's bmm does not take
        return
    ours = tg.einsum(equation, *(tg.tensor(a) for a in arrays))
    assert _name(ours) == _name(theirs)
    np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64), rtol=1e-3)


# --- svd_lowrank, pca_lowrank ----------------------------------------------------------------------


def _low_rank(shape, rank, dtype=np.float64):
    return (_random(shape[:-1] + (rank,), dtype) @ _random(shape[:-2] + (rank, shape[-1]), dtype))


@pytest.mark.parametrize("shape", [(20, 8), (8, 20), (3, 12, 10)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_svd_lowrank_recovers_a_low_rank_matrix(shape, dtype):
    a = _low_rank(shape, 3, dtype)
    tg.manual_seed(0)
    u, s, v = tg.svd_lowrank(tg.tensor(a), q=4)
    tu, ts, tv = torch.svd_lowrank(torch.tensor(a), q=4)
    for ours, theirs in ((u, tu), (s, ts), (v, tv)):
        assert ours.shape == tuple(theirs.shape) and _name(ours) == _name(theirs)
    tol = 1e-3 if dtype == np.float32 else 1e-9
    exact = np.linalg.svd(a, compute_uv=False)[..., :4]
    scale = exact[..., :1]
    np.testing.assert_allclose(s.numpy() / scale, exact / scale, atol=tol)
    rebuilt = (u * s.unsqueeze(-2)) @ v.mH
    np.testing.assert_allclose(rebuilt.numpy(), a, atol=tol * np.abs(a).max())


def test_svd_lowrank_with_m_and_defaults():
    a = _low_rank((15, 9), 2)
    mean = _random((1, 9))
    tg.manual_seed(1)
    u, s, v = tg.svd_lowrank(tg.tensor(a + mean), M=tg.tensor(mean))
    assert u.shape == (15, 6) and s.shape == (6,) and v.shape == (9, 6)
    np.testing.assert_allclose(s.numpy()[:2], np.linalg.svd(a, compute_uv=False)[:2], rtol=1e-9)
    np.testing.assert_allclose(s.numpy()[2:], 0, atol=1e-9)


def test_svd_lowrank_is_random_through_tg_generator_and_differentiable():
    a = tg.tensor(_low_rank((10, 6), 2), requires_grad=True)
    tg.manual_seed(3)
    first = tg.svd_lowrank(a, q=2)[0].detach().numpy()
    tg.manual_seed(3)
    u, s, v = tg.svd_lowrank(a, q=2)
    np.testing.assert_array_equal(u.detach().numpy(), first)
    s.sum().backward()
    exact_u, _, exact_vh = np.linalg.svd(a.detach().numpy(), full_matrices=False)
    # the sum of the (exact, as q = rank) singular values: d/dA = U_2 V_2^T
    np.testing.assert_allclose(np.asarray(a.grad), exact_u[:, :2] @ exact_vh[:2], atol=1e-6)


@pytest.mark.parametrize("center", [True, False])
def test_pca_lowrank_matches_the_exact_pca(center):
    data = _low_rank((30, 7), 3) + (_random((1, 7)) * 5 if center else 0)
    tg.manual_seed(2)
    u, s, v = tg.pca_lowrank(tg.tensor(data), q=3, center=center)
    tu, ts, tv = torch.pca_lowrank(torch.tensor(data), q=3, center=center)
    assert (u.shape, s.shape, v.shape) == (tuple(tu.shape), tuple(ts.shape), tuple(tv.shape))
    centered = data - data.mean(axis=0) if center else data
    exact = np.linalg.svd(centered, compute_uv=False)[:3]
    np.testing.assert_allclose(s.numpy(), exact, rtol=1e-9)
    np.testing.assert_allclose(ts.numpy(), exact, rtol=1e-9)
    # the same principal directions, up to sign
    np.testing.assert_allclose(np.abs(v.numpy().T @ tv.numpy()), np.eye(3), atol=1e-8)


def test_pca_lowrank_default_q_and_errors():
    a = tg.tensor(_random((4, 9)))
    assert tg.pca_lowrank(a)[1].shape == torch.pca_lowrank(torch.zeros(4, 9) + 1)[1].shape == (4,)
    for kwargs in ({"q": 5}, {"q": -1}, {"niter": -1}):
        with pytest.raises(ValueError, match="must be non-negative integer"):
            torch.pca_lowrank(torch.tensor(a.numpy()), **kwargs)
        with pytest.raises(ValueError, match="must be non-negative integer"):
            tg.pca_lowrank(a, **kwargs)
