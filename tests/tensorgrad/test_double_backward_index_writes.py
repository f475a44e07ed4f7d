"""Second derivatives (graph VJPs) of the ops that write into a copy (the *_scatter family,
masked_scatter, put, index_reduce, scatter_reduce), of logcumsumexp, nanmedian, the nuclear norm
and a real tensor's angle.

Each op is checked by `gradgradcheck` (finite differences in float64) and against PyTorch's
double backward: the gradient of <d <f(xs), v> / d xs, w> with respect to xs and to v.
"""

import numpy as np
import pytest
from second_derivatives import second_derivatives

import tensorgrad as tg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:index_reduce")  # (PyTorch's: it is in beta)



def _check(f, arrays, check=True, tol=1e-10):
    """gradgradcheck `f(tg)` (unless not `check`), and its second derivatives against `f(torch)`'s."""
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    if check:
        assert tg.gradgradcheck(f(tg), xs)
    ours = second_derivatives(tg, f(tg), xs)
    theirs = second_derivatives(torch, f(torch), [torch.tensor(a, requires_grad=True) for a in arrays])
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _random(*shape, seed=0):
    """Distinct values away from 0 (no ties), with signs."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    values = rng.permutation((np.arange(n) + 1.0) / n * 1.5 + 0.3) * rng.choice([-1, 1], n)
    return values.reshape(shape)


IDX = np.array([[0, 2, 0, 1], [2, 2, 1, 0]])  # scatter_reduce's index into a (3, 4) x along dim 0
MASK = np.array([True, False, True, True])


def _idx(m, a):
    return m.tensor(a, dtype=m.int64)


WRITES = {
    "select_scatter": (lambda m: lambda x, s: m.select_scatter(x, s, 1, 2), [(3, 4), (3,)]),
    "slice_scatter": (lambda m: lambda x, s: m.slice_scatter(x, s, 1, 0, 4, 2), [(3, 4), (3, 2)]),
    "diagonal_scatter": (lambda m: lambda x, s: m.diagonal_scatter(x, s, 1), [(3, 4), (3,)]),
    "diagonal_scatter_3d": (lambda m: lambda x, s: m.diagonal_scatter(x, s, -1, 0, 2), [(3, 2, 4), (2, 2)]),
    # (input's first gradient in PyTorch 2 is grad at the written places, not grad elsewhere: only src
    # is compared; test_as_strided_scatter checks both inputs by finite differences)
    "as_strided_scatter": (lambda m: lambda s: m.as_strided_scatter(m.tensor(_random(3, 4)), s, (2, 2),
                                                                    (1, 4), 1), [(2, 2)]),
    "masked_scatter": (lambda m: lambda x, s: x.masked_scatter(m.tensor(MASK), s), [(3, 4), (3, 5)]),
    "put": (lambda m: lambda x, s: x.put(_idx(m, [[5, 0], [-1, 7]]), s), [(3, 4), (2, 2)]),
    "put_accumulate": (lambda m: lambda x, s: x.put(_idx(m, [5, 0, 5]), s, accumulate=True), [(3, 4), (3,)]),
    "index_reduce_prod": (lambda m: lambda x, s: x.index_reduce(1, _idx(m, [0, 3, 0]), s, "prod"),
                          [(3, 4), (3, 3)]),
    "index_reduce_mean": (lambda m: lambda x, s: x.index_reduce(0, _idx(m, [2, 0, 2]), s, "mean",
                                                                include_self=False), [(3, 4), (3, 4)]),
    "index_reduce_amax": (lambda m: lambda x, s: x.index_reduce(1, _idx(m, [1, 1, 2]), s, "amax"),
                          [(3, 4), (3, 3)]),
    "index_reduce_amin": (lambda m: lambda x, s: x.index_reduce(1, _idx(m, [1, 1, 2]), s, "amin",
                                                                include_self=False), [(3, 4), (3, 3)]),
}
for _reduce in ("prod", "mean", "amax", "amin"):
    for _self in (True, False):
        WRITES[f"scatter_reduce_{_reduce}_{_self}"] = (
            lambda m, r=_reduce, i=_self: lambda x, s: x.scatter_reduce(0, _idx(m, IDX), s, r,
                                                                        include_self=i), [(3, 4), (2, 4)])

UNARY = {
    "logcumsumexp": (lambda m: lambda x: x.logcumsumexp(1), (3, 4)),
    "logcumsumexp_0d": (lambda m: lambda x: x.logcumsumexp(0), ()),
    "nanmedian": (lambda m: lambda x: x.nanmedian(), (3, 4)),
    "nanmedian_even": (lambda m: lambda x: x.nanmedian(), (2, 3)),
    "norm_nuc": (lambda m: lambda x: x.norm(p="nuc"), (3, 4)),
    "norm_nuc_dims": (lambda m: lambda x: m.norm(x, "nuc", (0, 2), keepdim=True), (3, 2, 4)),
    "matrix_norm_nuc": (lambda m: lambda x: m.linalg.matrix_norm(x, "nuc"), (2, 4, 3)),
    "angle": (lambda m: lambda x: x.angle() * x * x, (3, 4)),
}


@pytest.mark.parametrize("name", WRITES)
def test_writes(name):
    f, shapes = WRITES[name]
    _check(f, [_random(*shape, seed=i) for i, shape in enumerate(shapes)])


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    f, shape = UNARY[name]
    _check(f, [_random(*shape)])


def test_as_strided_scatter():
    x, s = tg.tensor(_random(3, 4), requires_grad=True), tg.tensor(_random(2, 3, seed=1), requires_grad=True)
    assert tg.gradgradcheck(lambda a, b: (a.as_strided_scatter(b, (2, 3), (1, 4), 1)) ** 2, [x, s])


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_scatter_reduce_larger_src(reduce):
    """src larger than the index (only its corner is scattered; PyTorch's backward refuses it)."""
    x, s = tg.tensor(_random(3, 4), requires_grad=True), tg.tensor(_random(3, 5, seed=1), requires_grad=True)
    assert tg.gradgradcheck(lambda a, b: a.scatter_reduce(0, tg.tensor(IDX), b, reduce, include_self=False),
                            [x, s])


def test_nanmedian_skips_nan():
    x = _random(3, 4)
    x[1, 2] = np.nan
    _check(lambda m: lambda t: t.nanmedian() * t.nansum(), [x], check=False)


def test_logcumsumexp_large_values():
    """The gradient stays finite where exp(x) overflows."""
    _check(lambda m: lambda x: x.logcumsumexp(0), [_random(5) * 600], check=False)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_ties(reduce, include_self):
    """Tied extremes share the gradient, as in PyTorch (no finite differences at a kink)."""
    x = np.array([[1.0, 2.0, -3.0, 0.5], [0.25, 1.5, -2.0, 4.0], [3.0, -1.0, 2.5, -0.75]])
    src = np.array([[1.0, 2.0, -3.0, -2.0], [1.0, 2.0, -2.0, 0.5]])
    _check(lambda m: lambda a, b: a.scatter_reduce(0, _idx(m, IDX), b, reduce, include_self=include_self),
           [x, src], check=False)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("zeros", [[(0, 0)], [(1, 0)], [(0, 2)], [(0, 1)]])
def test_scatter_reduce_prod_zeros(zeros, include_self):
    """A zero in src (or in x) gets the product of the others; the others' gradients stay exact."""
    x, src = _random(3, 4), _random(2, 4, seed=1)
    for i, j in zeros:
        src[i, j] = 0.0
    x[2, 1] = 0.0  # (a place that src writes to)
    _check(lambda m: lambda a, b: a.scatter_reduce(0, _idx(m, IDX), b, "prod", include_self=include_self),
           [x, src])


def test_scatter_reduce_prod_two_zeros_once():
    """Two zeros of src sent to one place: src's gradient is differentiable once, as in PyTorch."""
    src = _random(2, 4, seed=1)
    src[0, 1] = src[1, 1] = 0.0  # both to x[2, 1]
    x, s = tg.tensor(_random(3, 4), requires_grad=True), tg.tensor(src, requires_grad=True)
    (_, g) = tg.autograd.grad(x.scatter_reduce(0, tg.tensor(IDX), s, "prod").sum(), [x, s], create_graph=True)
    with pytest.raises(RuntimeError, match="scatter_reduce"):
        tg.autograd.grad(g.sum(), s)


def test_third_order_writes():
    """The gradients of linear writes are linear ops themselves: they differentiate again."""
    x = tg.tensor(_random(3, 4), requires_grad=True)
    s = tg.tensor(_random(3, 2, seed=1), requires_grad=True)
    y = (x.slice_scatter(s * s, 1, 0, 4, 2) ** 3).sum()
    (g,) = tg.autograd.grad(y, s, create_graph=True)
    (h,) = tg.autograd.grad(g.sum(), s, create_graph=True)
    (k,) = tg.autograd.grad(h.sum(), s)
    xt = torch.tensor(_random(3, 4))
    st = torch.tensor(_random(3, 2, seed=1), requires_grad=True)
    (gt,) = torch.autograd.grad((xt.slice_scatter(st * st, 1, 0, 4, 2) ** 3).sum(), st, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), st, create_graph=True)
    (kt,) = torch.autograd.grad(ht.sum(), st)
    np.testing.assert_allclose(k.data, kt.numpy(), rtol=1e-10)
