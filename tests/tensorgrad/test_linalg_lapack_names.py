"""LAPACK's own names: geqrf, orgqr, ormqr, linalg.ldl_factor(_ex) and linalg.ldl_solve, against
PyTorch (values, pivots, infos, dtypes, named tuples, gradients or their absence, errors) and
against finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest
from sample_arrays import random_array

import tensorgrad as tg

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _random(shape, dtype=np.float64):
    return random_array(RNG, shape, dtype)


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def _dtype(t):
    """A dtype's name without its library ("float32" for tg.float32 and torch.float32)."""
    return str(t.dtype).split(".")[-1]


def _same_error(ours, theirs):
    """Both calls raise, and ours raises PyTorch's exception class."""
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value)):
        ours()


# --- geqrf ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 4, 2), (1, 1), (0, 3), (3, 0), (2, 0, 0)])
def test_geqrf_as_pytorch(shape, dtype):
    x = _random(shape, dtype)
    ours, theirs = tg.geqrf(tg.tensor(x)), torch.geqrf(torch.tensor(x))
    assert type(ours).__name__ == "geqrf" and ours._fields == ("a", "tau")
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == tuple(b.shape) and _dtype(a) == _dtype(b)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=_tol(dtype), atol=_tol(dtype))
    method = tg.tensor(x).geqrf()
    np.testing.assert_array_equal(method.a.numpy(), ours.a.numpy())


def test_geqrf_has_no_derivative():
    x = tg.tensor(_random((4, 3)), requires_grad=True)
    a, tau = tg.geqrf(x)
    assert a.requires_grad and tau.requires_grad  # recorded, as PyTorch's GeqrfBackward0
    for out in (a, tau):
        with pytest.raises(NotImplementedError, match="geqrf"):
            out.sum().backward(retain_graph=True)


def test_geqrf_errors_as_pytorch():
    _same_error(lambda: tg.geqrf(tg.ones(3)), lambda: torch.geqrf(torch.ones(3)))
    for dtype in ("int64", "float16", "bool"):
        _same_error(lambda d=dtype: tg.geqrf(tg.ones(3, 3, dtype=getattr(tg, d))),
                    lambda d=dtype: torch.geqrf(torch.ones(3, 3, dtype=getattr(torch, d))))
    with pytest.raises(TypeError):
        tg.geqrf(np.ones((3, 3)))


# --- orgqr / householder_product -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_orgqr_as_pytorch(dtype):
    a, tau = torch.geqrf(torch.tensor(_random((2, 5, 3), dtype)))
    expected = torch.orgqr(a, tau).numpy()
    for ours in (tg.orgqr(tg.tensor(a.numpy()), tg.tensor(tau.numpy())),
                 tg.tensor(a.numpy()).orgqr(tg.tensor(tau.numpy())),
                 tg.linalg.householder_product(tg.tensor(a.numpy()), tg.tensor(tau.numpy()))):
        assert _dtype(ours) == _dtype(torch.orgqr(a, tau))
        np.testing.assert_allclose(ours.numpy(), expected, rtol=_tol(dtype), atol=_tol(dtype))


def _grads(fn_ours, fn_theirs, arrays, rtol=1e-9, atol=1e-10):
    """Values and the gradient of every input under a random weighting, in both libraries."""
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_ours, out_theirs = fn_ours(*ours), fn_theirs(*theirs)
    np.testing.assert_allclose(out_ours.detach().numpy(), out_theirs.detach().numpy(), rtol=rtol, atol=atol)
    w = _random(out_theirs.shape, arrays[0].dtype)
    for loss in ((out_ours * tg.tensor(w)).sum(), (out_theirs * torch.tensor(w)).sum()):
        (loss.real if loss.is_complex() else loss).backward()
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=rtol, atol=atol, err_msg=f"input {i}")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_orgqr_gradients_as_pytorch(dtype):
    _grads(tg.orgqr, torch.orgqr, [_random((2, 5, 3), dtype), _random((2, 2), dtype)])


def test_householder_product_errors_as_pytorch():
    cases = [((3, 4), (2,), "float64"), ((4, 3), (4,), "float64"), ((4, 3), (2, 2), "float64"),
             ((2, 4, 3), (3, 2), "float64"), ((4,), (2,), "float64"), ((4, 3), (2,), "int64"),
             ((4, 3), (2,), "float16")]
    for a, t, dtype in cases:
        _same_error(lambda a=a, t=t, d=dtype: tg.linalg.householder_product(
                        tg.ones(*a, dtype=getattr(tg, d)), tg.ones(*t, dtype=getattr(tg, d))),
                    lambda a=a, t=t, d=dtype: torch.linalg.householder_product(
                        torch.ones(*a, dtype=getattr(torch, d)), torch.ones(*t, dtype=getattr(torch, d))))
    _same_error(lambda: tg.orgqr(tg.ones(4, 3, dtype=tg.float64), tg.ones(2)),
                lambda: torch.orgqr(torch.ones(4, 3, dtype=torch.float64), torch.ones(2)))


# --- ormqr ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_ormqr_as_pytorch(shape, left, transpose, dtype):
    a, tau = torch.geqrf(torch.tensor(_random(shape, dtype)))
    m = shape[-2]
    c = torch.tensor(_random(shape[:-2] + ((m, 2) if left else (3, m)), dtype))
    expected = torch.ormqr(a, tau, c, left, transpose)
    args = [tg.tensor(t.numpy()) for t in (a, tau, c)]
    for ours in (tg.ormqr(*args, left=left, transpose=transpose),
                 args[0].ormqr(args[1], args[2], left, transpose)):
        assert ours.shape == tuple(expected.shape) and _dtype(ours) == _dtype(expected)
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=_tol(dtype), atol=_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("left, transpose", [(True, False), (True, True), (False, False), (False, True)])
def test_ormqr_gradients_as_pytorch(left, transpose, dtype):
    # (an arbitrary input and tau: the gradient reaches the reflectors below the diagonal and tau)
    c_shape = (2, 5, 3) if left else (2, 3, 5)
    _grads(lambda *t: tg.ormqr(*t, left=left, transpose=transpose),
           lambda *t: torch.ormqr(*t, left=left, transpose=transpose),
           [_random((2, 5, 4), dtype), _random((2, 4), dtype), _random(c_shape, dtype)])


def test_ormqr_gradcheck():
    inputs = [tg.tensor(_random(s), requires_grad=True) for s in ((4, 3), (3,), (4, 2))]
    assert tg.autograd.gradcheck(lambda a, t, c: tg.ormqr(a, t, c, transpose=True), inputs)
    assert tg.autograd.gradcheck(tg.ormqr, inputs)


def test_ormqr_errors_as_pytorch():
    d = np.float64
    a, t, c = _random((5, 3), d), _random((3,), d), _random((5, 2), d)
    cases = [(a, t, _random((4, 2), d), True), (a, t[:2], c, True), (a, _random((4,), d), c, True),
             (a[0], t, c, True), (a, t, c[:, 0], True), (a, t, _random((2, 4), d), False),
             (a, t[:2], _random((2, 5), d), False), (a, t, _random((2, 5, 2), d), True),
             (_random((2, 5, 3), d), _random((3, 3), d), _random((2, 5, 2), d), True),
             (_random((2, 5, 3), d), _random((2, 3), d), _random((3, 5, 2), d), True),
             (a, t.astype(np.float32), c, True), (a, t, c.astype(np.float32), True),
             (a.astype(np.int32), t.astype(np.int32), c.astype(np.int32), True),
             (a.astype(np.float16), t.astype(np.float16), c.astype(np.float16), True)]
    for arrays in cases:
        _same_error(lambda arrays=arrays: tg.ormqr(*map(tg.tensor, arrays[:3]), arrays[3]),
                    lambda arrays=arrays: torch.ormqr(*map(torch.tensor, arrays[:3]), arrays[3]))


# --- ldl_factor / ldl_solve ----------------------------------------------------------------------

def _symmetric(n, dtype, hermitian, kind):
    """A random symmetric (Hermitian) matrix: plain, with small integers (ties, zeros), with a
    zero diagonal (2x2 pivots forced), or with zero rows and columns (zero pivots)."""
    x = _random((n, n), dtype)
    if kind == "integers":
        x = np.round(2 * x)
    elif kind == "zero diagonal":
        np.fill_diagonal(x, 0)
    elif kind == "singular":
        x[:, RNG.integers(n)] = 0
        x[RNG.integers(n)] = 0
    a = x + (x.conj().T if hermitian else x.T)
    if kind == "singular":
        a[0], a[:, 0] = 0, 0
    return a.astype(dtype)


KINDS = ("plain", "integers", "zero diagonal", "singular")


def _check_ldl_factor(dtype, hermitian, per_kind):
    """Bunch-Kaufman's pivots equal LAPACK's (MKL's) on every matrix, and LD bit for bit in real
    arithmetic (to rounding in complex arithmetic): `per_kind` of each kind for each n, as a batch.

    Complex matrices of small integers are left out: two pivot candidates there tie exactly in
    exact arithmetic, and MKL's complex rounding (not numpy's) decides which is larger."""
    kinds = KINDS if np.dtype(dtype).kind == "f" else tuple(k for k in KINDS if k != "integers")
    for n in range(1, 13):
        a = np.stack([_symmetric(n, dtype, hermitian, kind) for kind in kinds for _ in range(per_kind)])
        ours = tg.linalg.ldl_factor_ex(tg.tensor(a), hermitian=hermitian)
        theirs = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
        assert type(ours).__name__ == "linalg_ldl_factor_ex" and ours._fields == ("LD", "pivots", "info")
        assert ours.pivots.dtype == tg.int32 and ours.info.dtype == tg.int32
        np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy(), err_msg=f"n = {n}")
        np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy(), err_msg=f"n = {n}")
        if np.dtype(dtype).kind == "f":
            np.testing.assert_array_equal(ours.LD.numpy(), theirs.LD.numpy(), err_msg=f"n = {n}")
        else:
            np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=_tol(dtype), atol=_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_as_pytorch(dtype, hermitian):
    _check_ldl_factor(dtype, hermitian, per_kind=3)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_as_pytorch_on_many_matrices(dtype, hermitian):
    _check_ldl_factor(dtype, hermitian, per_kind=50)


def test_ldl_factor_batched_and_empty():
    a = np.stack([_symmetric(5, np.float64, False, kind) for kind in ("plain", "zero diagonal", "integers")])
    a = a.reshape(3, 1, 5, 5)
    ours, theirs = tg.linalg.ldl_factor(tg.tensor(a)), torch.linalg.ldl_factor(torch.tensor(a))
    assert type(ours).__name__ == "linalg_ldl_factor" and ours._fields == ("LD", "pivots")
    np.testing.assert_array_equal(ours.LD.numpy(), theirs.LD.numpy())
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        ours = tg.linalg.ldl_factor_ex(tg.zeros(*shape, dtype=tg.float64))
        theirs = torch.linalg.ldl_factor_ex(torch.zeros(*shape, dtype=torch.float64))
        for x, y in zip(ours, theirs, strict=True):
            assert x.shape == tuple(y.shape) and _dtype(x) == _dtype(y)


def test_ldl_factor_singular_and_nan():
    for a in ([[0.0, 1, 0], [1, 0, 0], [0, 0, 0]], np.zeros((3, 3)), [[np.nan, 1], [1, 2]],
              [[1.0, 2, 3], [2, 4, 5], [3, 5, 6]]):
        ours = tg.linalg.ldl_factor_ex(tg.tensor(a, dtype=tg.float64))
        theirs = torch.linalg.ldl_factor_ex(torch.tensor(a, dtype=torch.float64))
        np.testing.assert_array_equal(ours.LD.numpy(), theirs.LD.numpy())
        np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
        assert int(ours.info.item()) == int(theirs.info)
    # PyTorch raises too (an internal assert, "Unknown error code"): ours says what is singular
    with pytest.raises(tg.linalg.LinAlgError, match="zero pivot"):
        tg.linalg.ldl_factor(tg.zeros(2, 3, 3, dtype=tg.float64))
    with pytest.raises(RuntimeError):
        tg.linalg.ldl_factor_ex(tg.zeros(3, 3, dtype=tg.float64), check_errors=True)


def test_ldl_factor_errors_as_pytorch():
    for shape, dtype in (((3, 4), "float64"), ((3,), "float64"), ((3, 3), "int64"), ((3, 3), "float16"),
                         ((3, 3), "bool")):
        for name in ("ldl_factor", "ldl_factor_ex"):
            _same_error(lambda s=shape, d=dtype, f=name: getattr(tg.linalg, f)(
                            tg.ones(*s, dtype=getattr(tg, d))),
                        lambda s=shape, d=dtype, f=name: getattr(torch.linalg, f)(
                            torch.ones(*s, dtype=getattr(torch, d))))


def test_ldl_ops_have_no_derivative():
    a = tg.tensor(_symmetric(4, np.float64, False, "plain"), requires_grad=True)
    LD, pivots = tg.linalg.ldl_factor(a)  # noqa: N806
    assert LD.requires_grad and not pivots.requires_grad
    with pytest.raises(RuntimeError, match="ldl_factor"):
        LD.sum().backward()
    b = tg.tensor(_random((4, 2)), requires_grad=True)
    x = tg.linalg.ldl_solve(LD.detach(), pivots, b)
    with pytest.raises(RuntimeError, match="ldl_solve"):
        x.sum().backward()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_solve_as_pytorch(dtype, hermitian):
    for n in range(1, 13):
        a = np.stack([_symmetric(n, dtype, hermitian, kind) for kind in KINDS[:3] for _ in range(4)])
        LD, pivots, info = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)  # noqa: N806
        keep = (info == 0).numpy()  # (a singular D solves to inf and nan)
        a, LD, pivots = a[keep], LD[keep], pivots[keep]  # noqa: N806
        b = _random((len(a), n, 3), dtype)  # (PyTorch's ldl_solve crashes when B has more batch dimensions)
        expected = torch.linalg.ldl_solve(LD, pivots, torch.tensor(b), hermitian=hermitian)
        ours = tg.linalg.ldl_solve(tg.tensor(LD.numpy()), tg.tensor(pivots.numpy()), tg.tensor(b),
                                   hermitian=hermitian)
        assert ours.shape == tuple(expected.shape) and _dtype(ours) == _dtype(expected)
        tol = 100 * _tol(dtype)
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=tol, atol=tol)
        if np.dtype(dtype) == np.float64:  # and it solves A X = B
            np.testing.assert_allclose(a @ ours.numpy(), b, atol=1e-8 * n)


def test_ldl_solve_broadcasts_and_takes_any_integer_pivots():
    a = np.stack([_symmetric(4, np.float64, False, "zero diagonal") for _ in range(3)])
    LD, pivots = tg.linalg.ldl_factor(tg.tensor(a))  # noqa: N806
    b = _random((2, 1, 4, 2))
    x = tg.linalg.ldl_solve(LD, pivots.to(tg.int64), tg.tensor(b))
    assert x.shape == (2, 3, 4, 2)
    np.testing.assert_allclose(a @ x.numpy(), np.broadcast_to(b, (2, 3, 4, 2)), atol=1e-10)
    x = tg.linalg.ldl_solve(LD[0], pivots[0].to(tg.int16), tg.tensor(b[0]))
    np.testing.assert_allclose(a[0] @ x.numpy(), b[0], atol=1e-10)


def test_ldl_solve_errors_as_pytorch():
    LD, pivots = torch.linalg.ldl_factor(torch.eye(3, dtype=torch.float64) + 1)  # noqa: N806
    d = torch.float64
    b = torch.ones(3, 2, dtype=d)
    cases = [(LD, pivots, torch.ones(3, dtype=d)), (LD, pivots, torch.ones(4, 2, dtype=d)),
             (LD, pivots, torch.ones(3, 2)), (LD.float(), pivots, b), (LD, pivots[:2], b),
             (LD.expand(5, 3, 3), pivots, b), (LD[:2], pivots, b), (LD, pivots.float(), b),
             (LD, pivots.bool(), b), (LD.int(), pivots, torch.ones(3, 2, dtype=torch.int32)),
             (LD, torch.tensor([0, 1, 1], dtype=torch.int32), b),
             (LD, torch.tensor([-4, 1, 1], dtype=torch.int32), b)]
    for args in cases:
        _same_error(lambda args=args: tg.linalg.ldl_solve(*(tg.tensor(t.numpy()) for t in args)),
                    lambda args=args: torch.linalg.ldl_solve(*args))


def test_orthogonal_householder_right_inverse_uses_geqrf():
    layer = tg.nn.utils.parametrizations.orthogonal(tg.nn.Linear(3, 5, dtype=tg.float64),
                                                    orthogonal_map="householder", use_trivialization=False)
    q = np.linalg.qr(_random((5, 3)))[0]
    layer.weight = tg.tensor(q)
    np.testing.assert_allclose(layer.weight.detach().numpy(), q, atol=1e-12)
