"""Second derivatives (graph VJPs) of the linear algebra ops, the in-place writes through views,
and rnn's, sampling's and rrelu's recorded ops.

Each op is checked by `gradgradcheck` (finite differences in float64) and against PyTorch's
double backward: the gradient of <d <f(xs), v> / d xs, w> with respect to xs and to v.
"""

import numpy as np
import pytest
from second_derivatives import second_derivatives

import tensorgrad as tg

torch = pytest.importorskip("torch")



def _check(f, arrays, tol=1e-10):
    """gradgradcheck `f(tg)`, and its second derivatives against `f(torch)`'s."""
    def tensors(m):
        return [m.tensor(a, requires_grad=True) for a in arrays]

    xs = tensors(tg)
    assert tg.gradgradcheck(f(tg), xs)
    ours = second_derivatives(tg, f(tg), xs)
    theirs = second_derivatives(torch, f(torch), tensors(torch))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


_rng = np.random.default_rng(0)


def _randn(*shape):
    return _rng.standard_normal(shape)


def _well(*shape):
    """Well-conditioned square matrices: random plus 3 I."""
    return _randn(*shape) + 3 * np.eye(shape[-1])


def _spd(m, x):
    """A symmetric positive-definite matrix made from x, in module m."""
    return x @ x.mT + 3 * m.eye(x.shape[-1], dtype=m.float64)


def _svd_invariant(m, full_matrices):
    """A function of svd's three outputs that does not depend on the signs of the singular pairs."""
    def f(a):
        u, s, vh = m.linalg.svd(a, full_matrices=full_matrices)
        k = s.shape[-1]
        return (u[..., :, :k] ** 2 * s.unsqueeze(-2)) @ vh[..., :k, :] ** 2
    return f


def _eigh_invariant(m, a, uplo="L"):
    values, vectors = m.linalg.eigh(a, UPLO=uplo)
    return vectors ** 2 * values.unsqueeze(-2)


LINALG = {
    "inv": (lambda m: m.linalg.inv, [_well(3, 3)]),
    "inv batched": (lambda m: m.linalg.inv, [_well(2, 3, 3)]),
    "det": (lambda m: m.linalg.det, [_well(2, 3, 3)]),
    "slogdet": (lambda m: lambda a: m.linalg.slogdet(a).logabsdet, [_randn(2, 3, 3)]),
    "logdet": (lambda m: lambda x: m.logdet(_spd(m, x)), [_randn(3, 3)]),
    "solve": (lambda m: m.linalg.solve, [_well(3, 3), _randn(3, 2)]),
    "solve vector": (lambda m: m.linalg.solve, [_well(2, 3, 3), _randn(2, 3)]),
    "solve broadcast": (lambda m: m.linalg.solve, [_well(3, 3), _randn(2, 3, 4)]),
    "solve right": (lambda m: lambda a, b: m.linalg.solve(a, b, left=False), [_well(3, 3), _randn(2, 3)]),
    "cholesky": (lambda m: lambda x: m.linalg.cholesky(_spd(m, x)), [_randn(2, 3, 3)]),
    "cholesky upper": (lambda m: lambda x: m.linalg.cholesky(_spd(m, x), upper=True), [_randn(3, 3)]),
    "solve_triangular": (lambda m: lambda a, b: m.linalg.solve_triangular(a, b, upper=False),
                         [_well(3, 3), _randn(3, 2)]),
    "solve_triangular upper right": (
        lambda m: lambda a, b: m.linalg.solve_triangular(a, b, upper=True, left=False),
        [_well(2, 3, 3), _randn(2, 4, 3)]),
    "solve_triangular unit": (
        lambda m: lambda a, b: m.linalg.solve_triangular(a, b, upper=True, unitriangular=True),
        [_randn(3, 3), _randn(3, 2)]),
    "cholesky_solve": (lambda m: lambda b, x: m.cholesky_solve(b, x.tril()), [_randn(3, 2), _well(3, 3)]),
    "cholesky_solve upper": (lambda m: lambda b, x: m.cholesky_solve(b, x.triu(), upper=True),
                             [_randn(2, 3, 2), _well(3, 3)]),
    "cholesky_inverse": (lambda m: lambda x: m.cholesky_inverse(x.tril()), [_well(3, 3)]),
    "cholesky_inverse upper": (lambda m: lambda x: m.cholesky_inverse(x.triu(), upper=True), [_well(3, 3)]),
    "pinv wide": (lambda m: m.linalg.pinv, [_randn(3, 4)]),
    "pinv tall": (lambda m: m.linalg.pinv, [_randn(2, 4, 3)]),
    "lstsq": (lambda m: lambda a, b: m.linalg.lstsq(a, b).solution, [_randn(5, 3), _randn(5, 2)]),
    "lstsq vector": (lambda m: lambda a, b: m.linalg.lstsq(a, b).solution, [_randn(2, 5, 3), _randn(2, 5)]),
    "matrix_exp": (lambda m: m.linalg.matrix_exp, [0.5 * _randn(2, 3, 3)]),
    "svdvals": (lambda m: m.linalg.svdvals, [_randn(2, 4, 3)]),
    "svd square": (lambda m: _svd_invariant(m, False), [_randn(3, 3)]),
    "svd tall": (lambda m: _svd_invariant(m, False), [_randn(2, 4, 3)]),
    "svd wide full": (lambda m: _svd_invariant(m, True), [_randn(3, 4)]),
    "eigvalsh": (lambda m: lambda x: m.linalg.eigvalsh(x + x.mT), [_randn(2, 3, 3)]),
    "eigh": (lambda m: lambda x: _eigh_invariant(m, x + x.mT), [_randn(3, 3)]),
    "eigh upper": (lambda m: lambda x: _eigh_invariant(m, x + x.mT, "U"), [_randn(2, 3, 3)]),
}


@pytest.mark.parametrize("name", LINALG)
def test_linalg(name):
    f, arrays = LINALG[name]
    _check(f, arrays)


@pytest.mark.parametrize("vector", [False, True])
def test_lstsq_residuals(vector):
    a = tg.tensor(_randn(5, 3), requires_grad=True)
    b = tg.tensor(_randn(5) if vector else _randn(5, 2), requires_grad=True)
    assert tg.gradgradcheck(lambda a, b: tg.linalg.lstsq(a, b, driver="gelsd").residuals, [a, b])


def test_det_singular_is_differentiable_once():
    singular = np.arange(9.0).reshape(3, 3)  # rank 2: the cofactors are not all 0
    a = tg.tensor(singular, requires_grad=True)
    (g,) = tg.autograd.grad(tg.linalg.det(a), a, create_graph=True)
    tg.linalg.det(a).backward()
    np.testing.assert_allclose(g.data, a.grad, atol=1e-12)  # the cofactors, as the usual pass's
    with pytest.raises(RuntimeError, match="'det'"):
        tg.autograd.grad(g.sum(), a)


# --- in-place writes ------------------------------------------------------------------------------


def _view_mul(m):
    def f(x, w):
        y = x * 1
        y[0].mul_(w)
        return y ** 2
    return f


def _view_read_after(m):
    def f(x, w):
        y = x * 1
        v = y[:, 1]
        v.add_(w * w)
        return y * v.sum() + (v ** 3).sum()
    return f


def _two_views(m):
    def f(x, w):
        y = x * 2
        a, b = y[:2], y[2:]
        a.mul_(w)
        b.add_(a.sum())
        return y * y
    return f


def _fill(m):
    def f(x):
        y = x ** 2
        y[1].fill_(2.0)
        return y ** 3
    return f


def _copy_view(m):
    def f(x, src):
        y = x * x
        y[0].copy_(src)
        return y ** 2
    return f


def _copy_whole(m):
    def f(x, src):
        y = x * x
        z = y + 1
        y.copy_(src)
        return y ** 2 + z
    return f


def _compare(m):
    def f(x):
        y = x * x
        y.lt_(0.5)
        return y * x
    return f


INPLACE = {
    "view mul_": (_view_mul, [_randn(3, 2), _randn(2)]),
    "view read after": (_view_read_after, [_randn(2, 3), _randn(2)]),
    "two views": (_two_views, [_randn(4, 3), _randn(3)]),
    "fill_": (_fill, [_randn(3, 2)]),
    "copy_ view": (_copy_view, [_randn(3, 2), _randn(2)]),
    "copy_ broadcast": (_copy_whole, [_randn(3, 2), _randn(2)]),
    "lt_": (_compare, [_randn(3, 2)]),
}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace(name):
    f, arrays = INPLACE[name]
    _check(f, arrays)


# --- rnn's packing, rrelu ---------------------------------------------------------------------------


def _packed(m):
    def f(x):
        packed = m.nn.utils.rnn.pack_padded_sequence(x * x, [2, 3, 1], enforce_sorted=False)
        padded, _ = m.nn.utils.rnn.pad_packed_sequence(packed, padding_value=1.5, total_length=4)
        return padded ** 2
    return f


def test_packed_sequence():
    _check(_packed, [_randn(3, 3, 2)])


def test_rrelu_with_generator():
    def f(x):
        generator = tg.Generator().manual_seed(3)  # the same slopes at every call
        return tg.rrelu(x * x - 1, 0.1, 0.3, training=True, generator=generator) ** 2

    x = tg.tensor(_randn(3, 4), requires_grad=True)
    assert tg.gradgradcheck(f, [x])
