"""`tg.linalg`'s decompositions and their relatives against `torch.linalg` and finite differences:
svd (and `tg.svd`), qr (and `tg.qr`), eigh, eigvalsh, pinv, lstsq, matrix_rank, matrix_exp,
multi_dot, vander (and `tg.vander`), diagonal.

A decomposition's factors are unique only up to signs (each singular pair, each eigenvector), so
the expressions compared are the ones that don't depend on them: singular values, the product
U diag(S) Vh, |U|, projectors U U^T. Matrices are built with well separated singular values and
eigenvalues, where the gradients are defined and finite differences are accurate.
"""

from __future__ import annotations

import numpy as np
import pytest
from foreign_array import foreign, is_foreign

import tensorgrad as tg
from tensorgrad.device import to_numpy

RNG = np.random.default_rng(20)


def _orthogonal(rng: np.random.Generator, n: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diagonal(r))


def _spread(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Matrices of `shape` whose singular values are 1, 1.8, 2.6, ... (well apart, none near 0)."""
    rng = np.random.default_rng(seed)
    *batch, m, n = shape
    k = min(m, n)
    out = np.empty(shape)
    for index in np.ndindex(*batch):
        s = 1 + 0.8 * np.arange(k)[::-1]
        out[index] = _orthogonal(rng, m)[:, :k] * s @ _orthogonal(rng, n)[:k]
    return out


def _symmetric(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Symmetric matrices of `shape` with eigenvalues -2, -0.9, 0.2, 1.3, ... (1.1 apart)."""
    rng = np.random.default_rng(seed)
    *batch, n, _ = shape
    out = np.empty(shape)
    for index in np.ndindex(*batch):
        q = _orthogonal(rng, n)
        out[index] = q * (-2 + 1.1 * np.arange(n)) @ q.T
    return out


TALL, WIDE, SQUARE = _spread((2, 5, 3), 1), _spread((2, 3, 5), 2), _spread((3, 3), 3)
SYM = _symmetric((2, 4, 4), 4)


def _reconstruct(m, a, full_matrices=False):
    """U diag(S) Vh from svd(a): a again, with a gradient through all three factors."""
    u, s, vh = m.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    return (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]


def _cat(m, *tensors):
    return m.cat([t.reshape(-1) for t in tensors])


def _sym(a):
    """(a + a^T) / 2: eigh reads one triangle of its input, so finite differences of the raw input
    see that triangle alone; through this, a change of either triangle is a symmetric change."""
    return (a + a.mT) / 2


# name -> (function of (m, *inputs), the inputs); m is tensorgrad or torch
CASES = {
    "svd S": (lambda m, a: m.linalg.svd(a).S, [TALL]),
    "svd S wide": (lambda m, a: m.linalg.svd(a, full_matrices=False)[1], [WIDE]),
    "svd U S Vh tall": (lambda m, a: _reconstruct(m, a), [TALL]),
    "svd U S Vh wide": (lambda m, a: _reconstruct(m, a), [WIDE]),
    "svd U S Vh square": (lambda m, a: _reconstruct(m, a, True), [SQUARE]),
    "svd U S Vh full_matrices tall": (lambda m, a: _reconstruct(m, a, True), [TALL[0]]),
    "svd |U| tall": (lambda m, a: m.linalg.svd(a, full_matrices=False).U.abs(), [TALL]),
    "svd |U| wide": (lambda m, a: m.linalg.svd(a, full_matrices=False).U.abs(), [WIDE]),
    "svd |Vh| tall": (lambda m, a: m.linalg.svd(a, full_matrices=False).Vh.abs(), [TALL]),
    "svd |Vh| wide": (lambda m, a: m.linalg.svd(a, full_matrices=False).Vh.abs(), [WIDE]),
    "svd |U| square": (lambda m, a: m.linalg.svd(a).U.abs(), [SQUARE]),
    "svd |Vh| square": (lambda m, a: m.linalg.svd(a).Vh.abs(), [SQUARE]),
    "svd |U| full_matrices, first k": (lambda m, a: m.linalg.svd(a).U[..., :3].abs(), [TALL]),
    "svd |Vh| full_matrices, first k": (lambda m, a: m.linalg.svd(a).Vh[..., :3, :].abs(), [WIDE]),
    "svd projector U U^T": (lambda m, a: (lambda u: u @ u.mT)(m.linalg.svd(a, full_matrices=False).U),
                            [TALL]),
    "svd of a transposed leaf": (lambda m, a: m.linalg.svd(a.mT, full_matrices=False).U.abs(), [WIDE]),
    "tg.svd U S V^T": (lambda m, a: (lambda r: (r.U * r.S[..., None, :]) @ r.V.mT)(m.svd(a)), [TALL]),
    "tg.svd |V|": (lambda m, a: m.svd(a)[2].abs(), [WIDE]),
    "Tensor.svd S": (lambda m, a: a.svd().S, [SQUARE]),
    "qr tall": (lambda m, a: _cat(m, *m.linalg.qr(a)), [TALL]),
    "qr wide": (lambda m, a: _cat(m, *m.linalg.qr(a)), [WIDE]),
    "qr square": (lambda m, a: _cat(m, *m.linalg.qr(a)), [SQUARE]),
    "qr Q only": (lambda m, a: m.linalg.qr(a).Q, [TALL]),
    "qr R only": (lambda m, a: m.linalg.qr(a).R, [TALL[0]]),
    "qr R only, wide": (lambda m, a: m.linalg.qr(a)[1], [WIDE]),
    "qr complete, wide": (lambda m, a: _cat(m, *m.linalg.qr(a, mode="complete")), [WIDE]),
    "tg.qr": (lambda m, a: _cat(m, *m.qr(a)), [TALL]),
    "Tensor.qr": (lambda m, a: a.qr()[0], [SQUARE]),
    "eigh eigenvalues": (lambda m, a: m.linalg.eigh(_sym(a)).eigenvalues, [SYM]),
    "eigh |eigenvectors|": (lambda m, a: m.linalg.eigh(_sym(a))[1].abs(), [SYM]),
    "eigh UPLO=U": (lambda m, a: _cat(m, *(lambda r: (r.eigenvalues, r.eigenvectors.abs()))(
        m.linalg.eigh(_sym(a), UPLO="U"))), [SYM[0]]),
    "eigh V diag(L) V^T": (lambda m, a: (lambda w, v: (v * w[..., None, :]) @ v.mT)(*m.linalg.eigh(_sym(a))),
                           [SYM]),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(_sym(a)), [SYM]),
    "eigvalsh UPLO=U": (lambda m, a: m.linalg.eigvalsh(_sym(a), UPLO="U"), [SYM[1]]),
    "pinv tall": (lambda m, a: m.linalg.pinv(a), [TALL]),
    "pinv wide": (lambda m, a: m.linalg.pinv(a), [WIDE]),
    "pinv square": (lambda m, a: m.linalg.pinv(a), [SQUARE]),
    "pinv hermitian": (lambda m, a: m.linalg.pinv(_sym(a), hermitian=True), [SYM]),
    "pinverse": (lambda m, a: m.pinverse(a), [TALL]),
    "Tensor.pinverse": (lambda m, a: a.pinverse(), [WIDE[0]]),
    "lstsq tall": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [TALL, RNG.standard_normal((2, 5, 2))]),
    "lstsq wide": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [WIDE, RNG.standard_normal((2, 3, 4))]),
    "lstsq vector": (lambda m, a, b: m.linalg.lstsq(a, b)[0], [TALL[0], RNG.standard_normal(5)]),
    "lstsq batch of vectors": (lambda m, a, b: m.linalg.lstsq(a, b)[0], [TALL, RNG.standard_normal((2, 5))]),
    "lstsq broadcast A": (lambda m, a, b: m.linalg.lstsq(a, b)[0],
                          [TALL[:1], RNG.standard_normal((2, 5, 2))]),
    "lstsq broadcast B": (lambda m, a, b: m.linalg.lstsq(a, b)[0], [TALL, RNG.standard_normal((1, 5, 2))]),
    "lstsq residuals gelsd": (lambda m, a, b: m.linalg.lstsq(a, b, driver="gelsd").residuals,
                              [TALL, RNG.standard_normal((2, 5, 2))]),
    "lstsq residuals gels, vector": (lambda m, a, b: m.linalg.lstsq(a, b, driver="gels").residuals,
                                     [TALL[1], RNG.standard_normal(5)]),
    "lstsq solution and residuals": (lambda m, a, b: _cat(m, *m.linalg.lstsq(a, b, driver="gelss")[:2]),
                                     [TALL, RNG.standard_normal((2, 5, 3))]),
    "matrix_exp": (lambda m, a: m.linalg.matrix_exp(a), [RNG.standard_normal((2, 3, 3))]),
    "matrix_exp needs squaring": (lambda m, a: m.matrix_exp(a), [np.stack([3 * SQUARE, 0.1 * SQUARE])]),
    "Tensor.matrix_exp": (lambda m, a: a.matrix_exp(), [SYM[0]]),
    "multi_dot": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
                  [RNG.standard_normal((6, 2)), RNG.standard_normal((2, 5)), RNG.standard_normal((5, 3))]),
    "multi_dot vectors at the ends": (lambda m, a, b, c, d: m.linalg.multi_dot([a, b, c, d]),
                                      [RNG.standard_normal(3), RNG.standard_normal((3, 7)),
                                       RNG.standard_normal((7, 2)), RNG.standard_normal(2)]),
    "multi_dot two": (lambda m, a, b: m.linalg.multi_dot((a, b)),
                      [RNG.standard_normal((3, 4)), RNG.standard_normal(4)]),
    "vander": (lambda m, x: m.linalg.vander(x), [RNG.standard_normal((2, 4))]),
    "vander N, with a zero": (lambda m, x: m.linalg.vander(x, N=5), [np.array([0.0, 1.5, -0.7])]),
    "vander of a 0-d x": (lambda m, x: m.linalg.vander(x, N=3), [np.array(1.5)]),
    "diagonal": (lambda m, a: m.linalg.diagonal(a), [TALL]),
    "diagonal offset dims": (lambda m, a: m.linalg.diagonal(a, offset=-1, dim1=0, dim2=2), [WIDE]),
}


@pytest.mark.filterwarnings("ignore:torch.qr is deprecated")
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_and_finite_differences(name):
    build, arrays = CASES[name]
    leaves = [tg.tensor(a, requires_grad=True) for a in arrays]
    out = build(tg, *leaves)
    assert out.requires_grad
    weights = np.random.default_rng(1).standard_normal(out.shape)
    (out * tg.tensor(weights)).sum().backward()
    assert tg.gradcheck(lambda *xs: build(tg, *xs), [tg.tensor(a, requires_grad=True) for a in arrays])
    torch = pytest.importorskip("torch")
    tleaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    tout = build(torch, *tleaves)
    assert out.shape == tuple(tout.shape) and str(out.dtype) == str(tout.dtype).removeprefix("torch.")
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-9, atol=1e-11)
    (tout * torch.tensor(weights)).sum().backward()
    for leaf, tleaf in zip(leaves, tleaves, strict=True):
        np.testing.assert_allclose(leaf.grad, tleaf.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["svd U S Vh tall", "qr wide", "eigh V diag(L) V^T", "pinv tall",
                                  "lstsq tall", "matrix_exp", "vander", "multi_dot"])
def test_float32_keeps_its_dtype_and_agrees_with_float64(name):
    build, arrays = CASES[name]
    single = [tg.tensor(a, dtype=tg.float32, requires_grad=True) for a in arrays]
    double = [tg.tensor(a, requires_grad=True) for a in arrays]
    out32, out64 = build(tg, *single), build(tg, *double)
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32.data, out64.data, rtol=2e-4, atol=2e-5)
    out32.sum().backward()
    out64.sum().backward()
    for a, b in zip(single, double, strict=True):
        assert a.grad.dtype == np.float32
        np.testing.assert_allclose(a.grad, b.grad, rtol=2e-3, atol=2e-4)


def test_named_tuples_read_by_pytorch_names():
    a = tg.tensor(TALL[0])
    u, s, vh = tg.linalg.svd(a)
    assert type(tg.linalg.svd(a)).__name__ == "linalg_svd" and tg.linalg.svd(a).Vh.shape == (3, 3)
    assert (u.shape, s.shape, vh.shape) == ((5, 5), (3,), (3, 3))
    assert tg.linalg.svd(a, full_matrices=False).U.shape == (5, 3)
    assert tg.svd(a).V.shape == (3, 3) and tg.svd(a, some=False).U.shape == (5, 5)
    assert tg.linalg.qr(a).Q.shape == (5, 3) and tg.linalg.qr(a, mode="complete").Q.shape == (5, 5)
    assert tg.qr(a, some=False).R.shape == (5, 3)
    values, vectors = tg.linalg.eigh(tg.tensor(SYM))
    assert tg.linalg.eigh(tg.tensor(SYM)).eigenvectors.shape == (2, 4, 4) and values.shape == (2, 4)
    result = tg.linalg.lstsq(tg.tensor(TALL), tg.tensor(TALL))
    assert result._fields == ("solution", "residuals", "rank", "singular_values")


def test_svd_values_and_reconstruction_match_numpy_batched():
    a = RNG.standard_normal((3, 2, 4, 6))
    u, s, vh = tg.linalg.svd(tg.tensor(a), full_matrices=False)
    np.testing.assert_allclose(s.data, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((u.data * s.data[..., None, :]) @ vh.data, a, atol=1e-12)
    np.testing.assert_allclose(u.data.swapaxes(-1, -2) @ u.data, np.broadcast_to(np.eye(4), (3, 2, 4, 4)),
                               atol=1e-12)


def test_svd_full_matrices_ignores_the_extra_columns_as_pytorch():
    """U's columns past min(m, n) are any basis of a subspace: their gradient is dropped, so a loss
    on all of |U| has the gradient of the loss on its first k columns."""
    torch = pytest.importorskip("torch")
    weights = RNG.standard_normal((2, 5, 5))
    a = tg.tensor(TALL, requires_grad=True)
    (tg.linalg.svd(a).U.abs() * tg.tensor(weights)).sum().backward()
    first_k = tg.tensor(TALL, requires_grad=True)
    (tg.linalg.svd(first_k).U[..., :3].abs() * tg.tensor(weights[..., :3])).sum().backward()
    np.testing.assert_allclose(a.grad, first_k.grad, atol=1e-12)
    t = torch.tensor(TALL, requires_grad=True)
    (torch.linalg.svd(t).U.abs() * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(a.grad, t.grad.numpy(), rtol=1e-9, atol=1e-10)
    assert np.abs(a.grad).max() > 0.1


def test_svd_without_uv_gives_zero_u_and_v():
    torch = pytest.importorskip("torch")
    a = tg.tensor(TALL, requires_grad=True)
    u, s, v = tg.svd(a, compute_uv=False)
    tu, ts, tv = torch.svd(torch.tensor(TALL), compute_uv=False)
    assert u.shape == tuple(tu.shape) == (2, 5, 5) and v.shape == tuple(tv.shape) == (2, 3, 3)
    assert not u.data.any() and not v.data.any() and not u.requires_grad
    np.testing.assert_allclose(s.data, ts.numpy(), rtol=1e-12)
    s.sum().backward()  # the gradient of the singular values still flows: U V^T
    uu, _, vvh = np.linalg.svd(TALL, full_matrices=False)
    np.testing.assert_allclose(a.grad, uu @ vvh, atol=1e-12)


def test_qr_values_match_pytorch_exactly_in_each_mode():
    torch = pytest.importorskip("torch")
    for a in (TALL, WIDE, SQUARE):
        for mode in ("reduced", "complete"):
            q, r = tg.linalg.qr(tg.tensor(a), mode=mode)
            tq, tr = torch.linalg.qr(torch.tensor(a), mode=mode)
            np.testing.assert_allclose(q.data, tq.numpy(), atol=1e-12)
            np.testing.assert_allclose(r.data, tr.numpy(), atol=1e-12)
        q, r = tg.linalg.qr(tg.tensor(a), mode="r")
        tq, tr = torch.linalg.qr(torch.tensor(a), mode="r")
        assert q.shape == tuple(tq.shape) == (0,) and q.dtype == np.float64
        np.testing.assert_allclose(r.data, tr.numpy(), atol=1e-12)


@pytest.mark.parametrize("mode, array", [("r", TALL), ("complete", TALL[0])])
def test_qr_modes_pytorch_cannot_differentiate_raise_in_backward(mode, array):
    torch = pytest.importorskip("torch")
    r = torch.linalg.qr(torch.tensor(array, requires_grad=True), mode=mode).R
    with pytest.raises(RuntimeError) as expected:
        r.sum().backward()
    ours = tg.linalg.qr(tg.tensor(array, requires_grad=True), mode=mode).R
    assert ours.requires_grad
    with pytest.raises(RuntimeError, match="linalg.qr") as got:
        ours.sum().backward()
    assert str(expected.value).split(".")[0] in str(got.value)


def test_eigh_reads_one_triangle_and_its_gradient_is_symmetric_as_pytorchs():
    """The triangle not read gets no say in the values; the gradient is PyTorch's symmetric one
    (V (diag(gL) + ...) V^T), equal for both triangles, not the zero a one-sided read suggests."""
    torch = pytest.importorskip("torch")
    lower = np.tril(SYM[0]) + np.triu(RNG.standard_normal((4, 4)), 1)  # garbage above the diagonal
    upper = np.triu(SYM[0]) + np.tril(RNG.standard_normal((4, 4)), -1)
    for array, uplo in ((lower, "L"), (upper, "U")):
        a = tg.tensor(array, requires_grad=True)
        values, vectors = tg.linalg.eigh(a, UPLO=uplo)
        np.testing.assert_allclose(values.data, np.linalg.eigvalsh(SYM[0]), atol=1e-12)
        weights = RNG.standard_normal((2, 4, 4))
        (values * tg.tensor(weights[0, 0]) + vectors.abs() * tg.tensor(weights[1])).sum().backward()
        t = torch.tensor(array, requires_grad=True)
        tvalues, tvectors = torch.linalg.eigh(t, UPLO=uplo)
        (tvalues * torch.tensor(weights[0, 0]) + tvectors.abs() * torch.tensor(weights[1])).sum().backward()
        np.testing.assert_allclose(a.grad, t.grad.numpy(), rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(a.grad, a.grad.T, atol=1e-12)


@pytest.mark.parametrize("function", [lambda a: tg.linalg.eigh(a).eigenvalues,
                                      lambda a: tg.linalg.eigh(a, UPLO="U").eigenvectors.abs(),
                                      lambda a: tg.linalg.eigvalsh(a)],
                         ids=["eigenvalues", "eigenvectors", "eigvalsh"])
def test_eigh_gradient_is_the_derivative_along_symmetric_directions(function):
    """Finite differences of A -> f(A + A^T): a symmetric change, which both triangles see."""
    assert tg.gradcheck(lambda a: function(a + a.mT), [tg.tensor(SYM / 2, requires_grad=True)])


def test_eigvalsh_without_grad_records_nothing():
    values = tg.linalg.eigvalsh(tg.tensor(SYM))
    np.testing.assert_allclose(values.data, np.linalg.eigvalsh(SYM), rtol=1e-12)
    assert not values.requires_grad and values.is_leaf
    with tg.no_grad():
        assert not tg.linalg.eigvalsh(tg.tensor(SYM, requires_grad=True)).requires_grad


def _low_rank() -> np.ndarray:
    """A batch of two 5 x 4 matrices with singular values (3, 1, 1e-3, 0) and (2, 0.5, 0.05, 0)."""
    rng = np.random.default_rng(5)
    out = np.empty((2, 5, 4))
    for i, s in enumerate(([3, 1, 1e-3, 0], [2, 0.5, 0.05, 0])):
        out[i] = _orthogonal(rng, 5)[:, :4] * np.array(s, float) @ _orthogonal(rng, 4)
    return out


@pytest.mark.parametrize("kwargs", [{}, {"atol": 0.01}, {"rtol": 0.1}, {"atol": 0.01, "rtol": 0.2},
                                    {"atol": 0.0}, {"atol": "tensor"}, {"rtol": "tensor"},
                                    {"hermitian": True}, {"hermitian": True, "atol": 0.6}])
def test_pinv_and_matrix_rank_tolerances_match_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    a = _low_rank()
    if kwargs.get("hermitian"):  # symmetric, eigenvalues (2, -1, 0.5, 1e-3, 0) and (-3, 1, 0.05, 0, 0)
        rng = np.random.default_rng(6)
        a = np.stack([q * np.array(values) @ q.T for q, values in (
            (_orthogonal(rng, 5), [2, -1, 0.5, 1e-3, 0]), (_orthogonal(rng, 5), [-3, 1, 0.05, 0, 0]))])
    for m in (tg, torch):
        given = {k: m.tensor([0.01, 0.6] if k == "atol" else [0.5, 1e-4]) if v == "tensor" else v
                 for k, v in kwargs.items()}
        results = m.linalg.pinv(m.tensor(a), **given), m.linalg.matrix_rank(m.tensor(a), **given)
        if m is tg:
            ours = results
        else:
            theirs = results
    np.testing.assert_allclose(ours[0].data, theirs[0].numpy(), rtol=1e-9, atol=1e-9)
    assert ours[1].dtype == np.int64 and ours[1].tolist() == theirs[1].tolist()


@pytest.mark.parametrize("kwargs, rank", [({"atol": 0.5, "rtol": 0.0}, 1), ({"atol": 1e-30}, 3), ({}, 2),
                                          ({"rtol": 0.25}, 1), ({"rtol": 0.25, "hermitian": True}, 1)])
def test_tolerance_edges_on_exact_singular_values(kwargs, rank):
    """A diagonal matrix's singular values are exact: one equal to the tolerance is not counted (>),
    and a positive atol alone sets rtol to 0 (1e-18 then counts; eps * n * 2 would hide it)."""
    torch = pytest.importorskip("torch")
    a = np.diag([2.0, -0.5, 1e-18])
    assert tg.linalg.matrix_rank(tg.tensor(a), **kwargs).item() == rank
    assert torch.linalg.matrix_rank(torch.tensor(a), **kwargs).item() == rank
    np.testing.assert_allclose(tg.linalg.pinv(tg.tensor(a), **kwargs).data,
                               torch.linalg.pinv(torch.tensor(a), **kwargs).numpy(), rtol=1e-15)


def test_pinv_rcond_and_matrix_rank_tol_are_the_older_names():
    torch = pytest.importorskip("torch")
    a = _low_rank()
    np.testing.assert_allclose(tg.linalg.pinv(tg.tensor(a), 0.1).data,
                               torch.linalg.pinv(torch.tensor(a), 0.1).numpy(), atol=1e-12)
    np.testing.assert_allclose(tg.pinverse(tg.tensor(a), rcond=0.01).data,
                               torch.pinverse(torch.tensor(a), rcond=0.01).numpy(), atol=1e-12)
    assert tg.linalg.matrix_rank(tg.tensor(a), 0.04).tolist() == [2, 3]
    assert torch.linalg.matrix_rank(torch.tensor(a), 0.04).tolist() == [2, 3]
    one = tg.linalg.matrix_rank(tg.tensor(a[0]))
    assert one.tolist() == 3 and one.ndim == 0


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("shapes", [((2, 5, 3), (2, 5, 2)), ((3, 6), (3, 6)), ((5, 3), (5,)),
                                    ((1, 5, 3), (4, 5))])
def test_lstsq_fills_the_fields_each_driver_fills_in_pytorch(driver, shapes):
    torch = pytest.importorskip("torch")
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    if len(shapes[1]) == len(shapes[0]) - 1 and shapes[0][:-2] != shapes[1][:-1]:
        b = b[:1]  # a batch of vectors has A's batch dimensions
    ours = tg.linalg.lstsq(tg.tensor(a), tg.tensor(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for field, mine, expected in zip(ours._fields, ours, theirs, strict=True):
        assert mine.shape == tuple(expected.shape), field
        assert str(mine.dtype) == str(expected.dtype).removeprefix("torch."), field
        np.testing.assert_allclose(mine.data, expected.numpy(), rtol=1e-9, atol=1e-11, err_msg=field)


def test_lstsq_of_a_rank_deficient_matrix_is_the_smallest_solution():
    torch = pytest.importorskip("torch")
    a, b = _low_rank()[1], RNG.standard_normal((5, 2))
    a[:, 3] = a[:, 0] + a[:, 1]  # rank 3 of 4 columns: many solutions
    ours = tg.linalg.lstsq(tg.tensor(a), tg.tensor(b), driver="gelsd")
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gelsd")
    np.testing.assert_allclose(ours.solution.data, np.linalg.pinv(a) @ b, atol=1e-10)
    np.testing.assert_allclose(ours.solution.data, theirs.solution.numpy(), atol=1e-10)
    assert ours.rank.item() == theirs.rank.item() == 3 and ours.residuals.shape == (0,)
    rcond = tg.linalg.lstsq(tg.tensor(_low_rank()[0]), tg.tensor(b), rcond=1e-2, driver="gelss")
    assert rcond.rank.item() == torch.linalg.lstsq(torch.tensor(_low_rank()[0]), torch.tensor(b), rcond=1e-2,
                                                   driver="gelss").rank.item() == 2


def test_lstsq_default_driver_on_a_gpu_array_is_gels_as_pytorchs():
    """PyTorch's default is 'gelsy' on the CPU and 'gels' on CUDA (residuals, no rank)."""
    a, b = foreign(TALL), foreign(RNG.standard_normal((2, 5, 2)))
    result = tg.linalg.lstsq(tg.from_numpy(a), tg.from_numpy(b))
    assert all(is_foreign(t.data) for t in result)
    assert result.rank.shape == (0,) and result.singular_values.shape == (0,)
    assert result.residuals.shape == (2, 2)
    expected = tg.linalg.lstsq(tg.tensor(TALL), tg.tensor(to_numpy(b)), driver="gels")
    np.testing.assert_allclose(to_numpy(result.residuals.data), expected.residuals.data, rtol=1e-12)


def test_matrix_exp_of_known_matrices():
    t = 0.7
    rotation = tg.linalg.matrix_exp(tg.tensor([[0.0, t], [-t, 0.0]]))
    np.testing.assert_allclose(rotation.data, [[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]], atol=1e-6)
    identities = np.broadcast_to(np.eye(3), (2, 3, 3))
    np.testing.assert_array_equal(tg.matrix_exp(tg.zeros(2, 3, 3)).data, identities)
    diagonal = np.diag([-30.0, 0.5, 12.0])  # far past the Pade bound: the squaring path
    np.testing.assert_allclose(tg.linalg.matrix_exp(tg.tensor(diagonal)).data,
                               np.diag(np.exp(np.diag(diagonal))), rtol=1e-13, atol=1e-300)
    assert tg.linalg.matrix_exp(tg.zeros(0, 0)).shape == (0, 0)


def test_matrix_exp_matches_pytorch_per_matrix_scaling():
    """Matrices of very different norms in one batch, each squared as often as it needs."""
    torch = pytest.importorskip("torch")
    a = np.stack([20 * SQUARE, 1e-3 * SQUARE, SYM[0, :3, :3]])
    a32 = a.astype(np.float32)
    np.testing.assert_allclose(tg.linalg.matrix_exp(tg.tensor(a)).data,
                               torch.linalg.matrix_exp(torch.tensor(a)).numpy(), rtol=1e-11)
    np.testing.assert_allclose(tg.linalg.matrix_exp(tg.tensor(a32)).data,
                               torch.linalg.matrix_exp(torch.tensor(a32)).numpy(), rtol=2e-5, atol=1e-5)


def test_multi_dot_picks_the_cheapest_order_with_the_same_values():
    torch = pytest.importorskip("torch")
    shapes = [(10, 30), (30, 5), (5, 60), (60, 2), (2, 9)]
    arrays = [RNG.standard_normal(s) for s in shapes]
    ours = tg.linalg.multi_dot([tg.tensor(x, requires_grad=True) for x in arrays])
    np.testing.assert_allclose(ours.data, torch.linalg.multi_dot([torch.tensor(x) for x in arrays]).numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(ours.data, np.linalg.multi_dot(arrays), rtol=1e-10)

    def cheapest(sizes):  # every bracketing, tried
        if len(sizes) == 2:
            return 0
        return min(cheapest(sizes[:k + 1]) + cheapest(sizes[k:]) + sizes[0] * sizes[k] * sizes[-1]
                   for k in range(1, len(sizes) - 1))

    def cost(node):  # the multiplications the graph did
        if not node.parents:
            return 0
        (m, k), (_, n) = node.parents[0].shape, node.parents[1].shape
        return m * k * n + cost(node.parents[0]) + cost(node.parents[1])

    sizes = [s[0] for s in shapes] + [shapes[-1][1]]
    left_to_right = 10 * 30 * 5 + 10 * 5 * 60 + 10 * 60 * 2 + 10 * 2 * 9
    assert cost(ours) == cheapest(sizes) < left_to_right
    vectors = tg.linalg.multi_dot([tg.tensor(np.ones(3)), tg.tensor(np.ones(3))])
    assert vectors.shape == () and vectors.item() == 3.0
    ints = tg.linalg.multi_dot([tg.ones(2, 2, dtype=tg.int64)] * 3)
    assert ints.dtype == np.int64 and ints.tolist() == [[4, 4], [4, 4]]


def test_vander_values_and_dtypes_as_pytorch():
    torch = pytest.importorskip("torch")
    ints = np.array([2, -1, 3], dtype=np.int32)
    for x in (ints, ints.astype(np.float32), np.array([True, False])):
        for kwargs in ({}, {"N": 0}, {"N": 1}, {"N": 4}, {"N": 4, "increasing": True}):
            ours, theirs = tg.vander(tg.tensor(x), **kwargs), torch.vander(torch.tensor(x), **kwargs)
            assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
            assert ours.shape == tuple(theirs.shape)
            np.testing.assert_array_equal(ours.data, theirs.numpy())
    for x in (ints, ints.astype(np.float64)):
        ours, theirs = tg.linalg.vander(tg.tensor(x), N=5), torch.linalg.vander(torch.tensor(x), N=5)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.data, theirs.numpy())


def test_vander_gradient_against_finite_differences():
    """torch.vander's backward fails in PyTorch 2.13 (an in-place write it saved); tg.vander's is
    the gradient of x^j, checked here by finite differences."""
    x = tg.tensor([0.0, 1.5, -0.7, 2.0], dtype=tg.float64, requires_grad=True)
    assert tg.gradcheck(lambda t: tg.vander(t), [x], elementwise=True)
    assert tg.gradcheck(lambda t: tg.vander(t, N=6, increasing=True), [x])
    tg.vander(x, N=3).sum().backward()  # d/dx (x^2 + x + 1) = 2x + 1
    np.testing.assert_allclose(x.grad, 2 * x.data + 1)


@pytest.mark.parametrize("build, error, words", [
    (lambda m: m.linalg.svd(m.ones(3)), RuntimeError, ["linalg.svd", "A", "(3,)"]),
    (lambda m: m.linalg.svd(m.ones(3, 3, dtype=m.int64)), RuntimeError, ["linalg.svd", "A", "int64"]),
    (lambda m: m.svd(m.ones(3)), RuntimeError, ["svd", "(3,)"]),
    (lambda m: m.linalg.qr(m.ones(3)), RuntimeError, ["linalg.qr", "A", "(3,)"]),
    (lambda m: m.linalg.qr(m.ones(3, 3), mode="full"), RuntimeError, ["linalg.qr", "mode", "'full'"]),
    (lambda m: m.linalg.qr(m.ones(2, 3, 3, dtype=m.int64)), RuntimeError,
     ["linalg.qr", "int64", "(2, 3, 3)"]),
    (lambda m: m.linalg.eigh(m.ones(3, 2)), RuntimeError, ["linalg.eigh", "A", "3 by 2", "(3, 2)"]),
    (lambda m: m.linalg.eigh(m.ones(3)), RuntimeError, ["linalg.eigh", "A", "(3,)"]),
    (lambda m: m.linalg.eigh(m.ones(3, 3), UPLO="X"), RuntimeError, ["linalg.eigh", "UPLO", "'X'"]),
    (lambda m: m.linalg.eigh(m.ones(3, 3, dtype=m.int64)), NotImplementedError,
     ["linalg.eigh", "int64", "(3, 3)"]),
    (lambda m: m.linalg.eigvalsh(m.ones(2, 3, 4)), RuntimeError, ["linalg.eigvalsh", "A", "(2, 3, 4)"]),
    (lambda m: m.linalg.pinv(m.ones(3)), RuntimeError, ["linalg.pinv", "A", "(3,)"]),
    (lambda m: m.linalg.pinv(m.ones(3, 3, dtype=m.int64)), RuntimeError, ["linalg.pinv", "int64", "(3, 3)"]),
    (lambda m: m.linalg.pinv(m.ones(3, 2), hermitian=True), RuntimeError, ["linalg.pinv", "A", "(3, 2)"]),
    (lambda m: m.linalg.matrix_rank(m.ones(3)), RuntimeError, ["linalg.matrix_rank", "(3,)"]),
    (lambda m: m.linalg.matrix_rank(m.ones(3, 3, dtype=m.int64)), RuntimeError,
     ["linalg.matrix_rank", "A", "int64", "(3, 3)"]),
    (lambda m: m.linalg.lstsq(m.ones(3), m.ones(3)), RuntimeError, ["linalg.lstsq", "input", "(3,)"]),
    (lambda m: m.linalg.lstsq(m.ones(2, 4, 3), m.ones(3)), RuntimeError,
     ["linalg.lstsq", "(2, 4, 3)", "(3,)"]),
    (lambda m: m.linalg.lstsq(m.ones(4, 3), m.ones(5, 2)), RuntimeError,
     ["linalg.lstsq", "(4, 3)", "(5, 2)"]),
    (lambda m: m.linalg.lstsq(m.ones(4, 3), m.ones(4, 2, dtype=m.float64)), RuntimeError,
     ["linalg.lstsq", "float32", "float64"]),
    (lambda m: m.linalg.lstsq(m.ones(4, 3), m.ones(4, 2), driver="qr"), RuntimeError,
     ["linalg.lstsq", "driver"]),
    (lambda m: m.linalg.lstsq(m.ones(4, 3, dtype=m.int64), m.ones(4, 2, dtype=m.int64)), RuntimeError,
     ["linalg.lstsq", "int64"]),
    (lambda m: m.linalg.matrix_exp(m.ones(3, 2)), RuntimeError, ["linalg.matrix_exp", "A", "(3, 2)"]),
    (lambda m: m.linalg.matrix_exp(m.ones(3)), RuntimeError, ["linalg.matrix_exp", "A", "(3,)"]),
    (lambda m: m.linalg.matrix_exp(m.ones(3, 3, dtype=m.int64)), RuntimeError,
     ["linalg.matrix_exp", "A", "int64", "(3, 3)"]),
    (lambda m: m.linalg.multi_dot([m.ones(3, 3)]), RuntimeError, ["multi_dot", "2 tensors", "1"]),
    (lambda m: m.linalg.multi_dot([]), RuntimeError, ["multi_dot", "0"]),
    (lambda m: m.linalg.multi_dot([m.ones(3, 3, 3), m.ones(3, 3)]), RuntimeError,
     ["multi_dot", "first", "(3, 3, 3)"]),
    (lambda m: m.linalg.multi_dot([m.ones(3, 3), m.ones(3), m.ones(3, 3)]), RuntimeError,
     ["multi_dot", "tensor 1", "(3,)"]),
    (lambda m: m.linalg.multi_dot([m.ones(3, 3), m.ones(2, 3)]), RuntimeError,
     ["multi_dot", "(3, 3)", "(2, 3)"]),
    (lambda m: m.linalg.multi_dot([m.ones(3, 3), m.ones(3, 3, dtype=m.float64)]), RuntimeError,
     ["multi_dot", "float32", "float64"]),
    (lambda m: m.linalg.vander(m.ones(3), N=1), RuntimeError, ["vander", "N", "(3,)"]),
    (lambda m: m.linalg.vander(m.ones(3, dtype=m.bool)), RuntimeError, ["vander", "bool", "(3,)"]),
    (lambda m: m.linalg.vander(m.ones(3), N=2.5), TypeError, ["vander", "N"]),
    (lambda m: m.vander(m.ones(2, 3)), RuntimeError, ["vander", "one-dimensional", "(2, 3)"]),
    (lambda m: m.vander(m.ones(3), N=-1), RuntimeError, ["vander", "N", "-1"]),
])
def test_bad_input_raises_as_pytorch(build, error, words):
    torch = pytest.importorskip("torch")
    with pytest.raises(error):
        build(torch)
    with pytest.raises(error) as raised:
        build(tg)
    for word in words:
        assert word in str(raised.value), (word, str(raised.value))


def test_complex_input_is_accepted_as_in_pytorch():
    # These once refused complex input; PyTorch takes it, and so do they now (test_linalg_complex
    # compares values and gradients): on the identity each gives the identity's own answer.
    a = tg.tensor(np.eye(2) + 0j)
    assert np.allclose(tg.linalg.svd(a).S.data, [1, 1])
    assert np.allclose(np.abs(tg.linalg.qr(a).R.data), np.eye(2))
    assert np.allclose(tg.linalg.eigh(a).eigenvalues.data, [1, 1])
    assert tg.linalg.eigh(a).eigenvalues.dtype == np.float64
    assert np.allclose(tg.linalg.pinv(a).data, np.eye(2))
    assert np.allclose(tg.linalg.matrix_exp(a).data, np.e * np.eye(2))
    assert tg.linalg.matrix_exp(a).dtype == np.complex128


def test_batched_results_equal_one_matrix_at_a_time():
    a = _spread((2, 3, 5, 4), 7)
    sym = _symmetric((3, 2, 3, 3), 8)
    for op in (lambda t: tg.linalg.svd(t).S, lambda t: tg.linalg.qr(t).R, lambda t: tg.linalg.pinv(t),
               lambda t: tg.linalg.matrix_exp(t[..., :4, :]), lambda t: tg.linalg.matrix_rank(t)):
        whole = op(tg.tensor(a)).data
        for index in np.ndindex(2, 3):
            np.testing.assert_allclose(whole[index], op(tg.tensor(a[index])).data, rtol=1e-12, atol=1e-13)
    values = tg.linalg.eigvalsh(tg.tensor(sym)).data
    for index in np.ndindex(3, 2):
        np.testing.assert_allclose(values[index], np.linalg.eigvalsh(sym[index]), rtol=1e-12)
