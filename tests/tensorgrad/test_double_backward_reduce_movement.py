"""Second derivatives (graph VJPs) of the reductions, movement and indexing ops.

Each op is checked by `gradgradcheck` (finite differences in float64) and against PyTorch's
double backward: the gradient of <d <f(xs), v> / d xs, w> with respect to xs and to v (the
second is what a linear op's gradient depends on).
"""

import numpy as np
import pytest
from second_derivatives import second_derivatives

import tensorgrad as tg

torch = pytest.importorskip("torch")



def _check(f, arrays, tol=1e-10, check=True):
    """gradgradcheck `f(tg)`, and its second derivatives against `f(torch)`'s. Integer arrays are
    indices: they go in as tensors that want no gradient."""
    def tensors(m):
        return [m.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]

    xs = tensors(tg)
    if check:
        assert tg.gradgradcheck(f(tg), [x for x in xs])
    ours = second_derivatives(tg, f(tg), xs)
    theirs = second_derivatives(torch, f(torch), tensors(torch))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _random(*shape, seed=0, positive=False, spread=True):
    """Distinct values (no ties, away from 0): a grid shuffled, with signs unless `positive`."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    values = (np.arange(n) + 1.0) / n * 1.5 + 0.3 if spread else np.full(n, 0.9)
    values = rng.permutation(values * (1 if positive else rng.choice([-1, 1], n)))
    return values.reshape(shape)


REDUCTIONS = {
    "amax": lambda m: lambda x: x.amax(1),
    "amin_keep": lambda m: lambda x: x.amin((0, 2), keepdim=True),
    "max_all": lambda m: lambda x: x.max(),
    "min_all": lambda m: lambda x: x.min(),
    "max_dim": lambda m: lambda x: x.max(1).values,
    "min_dim_keep": lambda m: lambda x: x.min(-1, keepdim=True).values,
    "prod_all": lambda m: lambda x: x.prod(),
    "prod_dim": lambda m: lambda x: x.prod(1),
    "prod_keep": lambda m: lambda x: x.prod(-1, keepdim=True),
    "var": lambda m: lambda x: x.var(1),
    "var_all": lambda m: lambda x: x.var(),
    "var_c0": lambda m: lambda x: x.var((0, 2), correction=0, keepdim=True),
    "var_c2": lambda m: lambda x: x.var(-1, correction=2),
    "std": lambda m: lambda x: x.std(1),
    "std_all": lambda m: lambda x: x.std(),
    "std_c0": lambda m: lambda x: x.std((0, 2), correction=0, keepdim=True),
    "norm2": lambda m: lambda x: x.norm(),
    "norm2_dim": lambda m: lambda x: x.norm(2, 1),
    "norm1": lambda m: lambda x: x.norm(1, -1),
    "norm3": lambda m: lambda x: x.norm(3, 1, keepdim=True),
    "norm1.5": lambda m: lambda x: x.norm(1.5, (0, 2)),
    "norm0.5": lambda m: lambda x: x.norm(0.5),
    "norm_inf": lambda m: lambda x: x.norm(float("inf"), 1),
    "norm_neginf": lambda m: lambda x: x.norm(-float("inf")),
    "logsumexp": lambda m: lambda x: x.logsumexp(1),
    "logsumexp_keep": lambda m: lambda x: x.logsumexp((0, 2), keepdim=True),
    "softmax": lambda m: lambda x: x.softmax(1),
    "log_softmax": lambda m: lambda x: x.log_softmax(-1),
    "cumsum": lambda m: lambda x: x.cumsum(1),
    "cumprod": lambda m: lambda x: x.cumprod(1),
    "cummax": lambda m: lambda x: x.cummax(1).values,
    "cummin": lambda m: lambda x: x.cummin(0).values,
    "sort": lambda m: lambda x: x.sort(1, descending=True).values,
    "topk": lambda m: lambda x: x.topk(2, -1).values,
    "median_all": lambda m: lambda x: x.median(),
    "median_dim": lambda m: lambda x: x.median(1).values,
    "kthvalue": lambda m: lambda x: x.kthvalue(2, 1).values,
    "nansum": lambda m: lambda x: x.nansum(1),
}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions(name):
    _check(REDUCTIONS[name], [_random(2, 3, 4)])


@pytest.mark.parametrize("name", ["prod_all", "prod_dim", "cumprod"])
@pytest.mark.parametrize("zeros", [1, 2])
def test_products_with_zeros(name, zeros):
    """A zero in the product: the gradient is the product of the others, exact (PyTorch's value)."""
    x = _random(2, 3, 4)
    x[0, 1, 2] = 0.0
    if zeros == 2:
        x[0, 2, 2] = 0.0
    _check(REDUCTIONS[name], [x])


def test_ties_share_the_gradient():
    x = np.array([[1.0, 3.0, 3.0], [2.0, -2.0, 0.5]])
    for name in ("amax", "max_all", "norm_inf", "median_all"):
        _check(REDUCTIONS[name], [x], check=False)


def _linear_in(f):
    """An op applied to x, times x: its gradient then reads x, so a second pass goes through the op's
    graph gradient on both sides (a linear op's own second derivative is 0)."""
    return lambda m: lambda x, *rest: f(m)(x, *rest) * f(m)(x, *rest)


MOVEMENT = {
    "cat": (lambda m: lambda a, b: m.cat([a, b * b], 1), [(2, 3), (2, 2)]),
    "stack": (lambda m: lambda a, b: m.stack([a, b * b], 1), [(2, 3), (2, 3)]),
    "flip": (_linear_in(lambda m: lambda x: x.flip((0, 2))), [(2, 3, 4)]),
    "rot90": (_linear_in(lambda m: lambda x: x.rot90(3, (1, 2))), [(2, 3, 4)]),
    "roll": (_linear_in(lambda m: lambda x: x.roll((1, -2), (0, 2))), [(2, 3, 4)]),
    "roll_flat": (_linear_in(lambda m: lambda x: x.roll(5)), [(2, 3, 4)]),
    "repeat": (_linear_in(lambda m: lambda x: x.repeat(2, 1, 3)), [(3, 2)]),
    "tile": (_linear_in(lambda m: lambda x: x.tile((2,))), [(3, 2)]),
    "repeat_interleave": (_linear_in(lambda m: lambda x: x.repeat_interleave(2, 1)), [(3, 2)]),
    "repeat_interleave_counts": (_linear_in(lambda m: lambda x: x.repeat_interleave(
        m.tensor([1, 0, 3]))), [(3,)]),
    "clone": (_linear_in(lambda m: lambda x: x.clone()), [(3, 2)]),
    "contiguous": (_linear_in(lambda m: lambda x: x.T.contiguous()), [(3, 2)]),
    "diagonal": (_linear_in(lambda m: lambda x: x.diagonal(1, 0, 2)), [(3, 2, 4)]),
    "diag_vector": (_linear_in(lambda m: lambda x: m.diag(x, -1)), [(3,)]),
    "diag_matrix": (_linear_in(lambda m: lambda x: m.diag(x, 1)), [(3, 4)]),
    "diag_embed": (_linear_in(lambda m: lambda x: m.diag_embed(x, 1, 0, 2)), [(2, 3)]),
    "tril": (_linear_in(lambda m: lambda x: x.tril(-1)), [(2, 3, 4)]),
    "triu": (_linear_in(lambda m: lambda x: x.triu(1)), [(3, 4)]),
    "unfold": (_linear_in(lambda m: lambda x: x.unfold(1, 3, 2)), [(2, 7)]),
    "flatten": (_linear_in(lambda m: lambda x: x.flatten(1)), [(2, 3, 4)]),
    "movedim": (_linear_in(lambda m: lambda x: x.movedim(0, -1)), [(2, 3, 4)]),
    "block_diag": (lambda m: lambda a, b: m.block_diag(a, b * b), [(2, 3), (1, 2)]),
}


@pytest.mark.parametrize("name", MOVEMENT)
def test_movement(name):
    f, shapes = MOVEMENT[name]
    _check(f, [_random(*shape, seed=i) for i, shape in enumerate(shapes)])


_INDEX = np.array([[2, 0, 1], [0, 0, 2]])
_DISTINCT = np.array([[2, 0, 1], [0, 1, 2]])  # (scatter's places: one write each)
_MASK = np.array([[True, False, True], [False, False, True]])

INDEXING = {
    "gather": (_linear_in(lambda m: lambda x, i: x.gather(1, i)), [(2, 4), _INDEX]),
    "index_select": (_linear_in(lambda m: lambda x, i: x.index_select(1, i)), [(2, 4), np.array([3, 0, 3])]),
    "take": (_linear_in(lambda m: lambda x, i: m.take(x, i)), [(2, 4), _INDEX]),
    "masked_fill": (_linear_in(lambda m: lambda x, k: x.masked_fill(k, 2.0)), [(2, 3), _MASK]),
    "masked_fill_value": (lambda m: lambda x, v, k: x.masked_fill(k, v * v) * x, [(2, 3), (), _MASK]),
    "masked_select": (_linear_in(lambda m: lambda x, k: x.masked_select(k)), [(3,), _MASK]),
    "scatter": (lambda m: lambda x, s, i: x.scatter(0, i, s * s) * x, [(3, 3), (2, 3), _DISTINCT]),
    "scatter_value": (lambda m: lambda x, i: x.scatter(0, i, 1.5) * x, [(3, 3), _INDEX]),
    "scatter_add": (lambda m: lambda x, s, i: x.scatter_add(1, i, s * s) * x, [(2, 4), (2, 3), _INDEX]),
    "scatter_reduce_sum": (lambda m: lambda x, s, i: x.scatter_reduce(1, i, s * s, "sum", include_self=False)
                           * x, [(2, 4), (2, 3), _INDEX]),
    "index_add": (lambda m: lambda x, s, i: x.index_add(1, i, s * s, alpha=-2.0) * x,
                  [(2, 4), (2, 3), np.array([3, 0, 3])]),
    "index_copy": (lambda m: lambda x, s, i: x.index_copy(1, i, s * s) * x,
                   [(2, 4), (2, 2), np.array([3, 0])]),
    "index_put": (lambda m: lambda x, v, i: x.index_put((i,), v * v) * x, [(4, 2), (2,), np.array([3, 1])]),
    "index_put_accumulate": (lambda m: lambda x, v, i: x.index_put((i,), v * v, accumulate=True) * x,
                             [(4, 2), (3, 2), np.array([3, 1, 3])]),
}


@pytest.mark.parametrize("name", INDEXING)
def test_indexing(name):
    f, arrays = INDEXING[name]
    _check(f, [_random(*a, seed=i) if isinstance(a, tuple) else a for i, a in enumerate(arrays)])


def test_scatter_from_a_larger_src():
    """src larger than the index: only its corner is written (PyTorch's double backward refuses this)."""
    x = tg.tensor(_random(3, 3), requires_grad=True)
    src = tg.tensor(_random(2, 4, seed=1), requires_grad=True)
    assert tg.gradgradcheck(lambda a, b: a.scatter(0, tg.tensor(_DISTINCT), b * b) * a, [x, src])


def _setitem(key):
    def f(m):
        def g(x, v):
            y = x * 1
            y[key] = v * v
            return y * x
        return g
    return f


@pytest.mark.parametrize(("key", "shape", "check"), [
    ((1, slice(None)), (4,), True),
    ((slice(None), [2, 0]), (3, 2), True),
    (([0, 2, 0],), (4,), False),  # a repeated place: the value's gradient sums them, as PyTorch's
], ids=["basic", "advanced", "repeated"])
def test_setitem(key, shape, check):
    _check(_setitem(key), [_random(3, 4), _random(*shape, seed=1)], check=check)
