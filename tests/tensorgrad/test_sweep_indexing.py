"""Indexing, movement and creation cases where PyTorch's OpInfo samples found tensorgrad apart
from PyTorch: 0-d and empty gathers and scatters, take_along_dim's wrapping, masked_scatter's
broadcasting, the overflow rule for numbers written into a tensor, narrow's tensor start, the
split/roll/tile edge cases, int64 arange with float bounds, `out=` and `__rdiv__`.

Every case is compared with PyTorch: values, dtypes, shapes, gradients and exception classes.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _run(m, fn):
    """fn(m) as (value, dtype name) or the exception class it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(m)
    except Exception as error:  # noqa: BLE001 (the class is what is compared)
        return error
    if isinstance(r, tuple):
        return [(np.asarray(p.tolist()).tolist(), str(p.dtype).split(".")[-1]) for p in r]
    return np.asarray(r.tolist()).tolist(), str(r.dtype).split(".")[-1], tuple(r.shape)


def _same(fn):
    """fn(tg) and fn(torch) agree: the same values, dtype and shape, or both raise, the same class."""
    mine, theirs = _run(tg, fn), _run(torch, fn)
    if isinstance(theirs, Exception):
        assert isinstance(mine, type(theirs)), f"tensorgrad gave {mine!r}, PyTorch raised {theirs!r}"
    else:
        assert not isinstance(mine, Exception), f"tensorgrad raised {mine!r}, PyTorch gave {theirs}"
        assert repr(mine) == repr(theirs)  # (so that NaN matches NaN)


def _grads(fn, *arrays):
    """The gradients of sum(fn(m, *leaves) * weights) in both libraries, float64, compared."""
    results = []
    for m in (tg, torch):
        leaves = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
        out = fn(m, *leaves)
        weights = np.arange(1.0, 1.0 + out.numel()).reshape(tuple(out.shape))
        (out * m.tensor(weights)).sum().backward()
        results.append([np.asarray(x.grad.tolist()) for x in leaves])
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs)


# --- scatter and gather with 0-d and empty tensors ---------------------------------------------

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_0d(reduce, include_self):
    _same(lambda m: m.scatter_reduce(m.tensor(3.0), 0, m.tensor(0), m.tensor(5.0), reduce,
                                     include_self=include_self))
    _grads(lambda m, x, s: m.scatter_reduce(x, 0, m.tensor(0), s, reduce, include_self=include_self),
           3.0, 5.0)


@pytest.mark.parametrize("case", [
    ((), (), ()), ((), (1,), (1,)), ((), (2,), (2,)), ((3,), (), ()), ((3,), (1,), ()), ((3,), (2,), ()),
    ((), (1, 1), (1,)), ((3, 2), (), ()), ((3,), (), (1, 1)), ((), (0,), (1,)), ((), (0, 0), (1,)),
    ((3, 4), (2, 0, 3), (2, 0, 3)), ((3, 4), (2, 0), (1,)), ((5,), (2, 0), (2, 0)),
])
def test_scatter_shapes(case):
    """PyTorch's rule: a 0-d tensor counts as 1-d; an empty index skips the shape checks."""
    x_shape, idx_shape, src_shape = case
    idx = np.zeros(idx_shape, dtype=np.int64)
    _same(lambda m: m.scatter(m.zeros(x_shape), 0, m.tensor(idx), m.ones(src_shape)))
    _same(lambda m: m.scatter(m.zeros(x_shape), 0, m.tensor(idx), 2.0))
    _same(lambda m: m.scatter_add(m.zeros(x_shape), 0, m.tensor(idx), m.ones(src_shape)))
    _same(lambda m: m.zeros(x_shape).scatter_(0, m.tensor(idx), m.ones(src_shape)))
    _same(lambda m: m.gather(m.arange(float(np.prod(x_shape))).reshape(x_shape), 0, m.tensor(idx)))


def test_scatter_gather_0d_and_empty_gradients():
    _grads(lambda m, x, s: m.scatter(x, 0, m.tensor(0), s), 3.0, 5.0)
    _grads(lambda m, x, s: m.scatter_add(x, 0, m.tensor([0, 0]), s), 3.0, [5.0, 6.0])
    _grads(lambda m, x, s: m.scatter(x, 0, m.zeros(2, 0, 3, dtype=m.int64), s),
           np.ones((3, 4)), np.ones((2, 0, 3)))
    _grads(lambda m, x: m.gather(x, 0, m.tensor(1)), [1.0, 2.0, 3.0])
    _grads(lambda m, x: m.gather(x, 0, m.zeros(2, 0, dtype=m.int64)) + 1, [1.0, 2.0, 3.0])
    for reduce in REDUCES:
        x = tg.tensor(3.0, dtype=tg.float64, requires_grad=True)
        s = tg.tensor(5.0, dtype=tg.float64, requires_grad=True)
        assert tg.gradcheck(lambda x, s, r=reduce: tg.scatter_reduce(x, 0, tg.tensor(0), s, r), (x, s))


def test_gather_index_dtypes():
    """int32 and int64 indices; any other dtype raises, unless the index is empty."""
    for dtype in ("int32", "int64", "uint8", "int16"):
        _same(lambda m, dtype=dtype: m.gather(m.arange(5.0), 0, m.tensor([1, 0], dtype=getattr(m, dtype))))
        _same(lambda m, dtype=dtype: m.gather(m.arange(5.0), 0, m.zeros(2, 0, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_bool(reduce, include_self):
    rng = np.random.default_rng(0)
    x, src = rng.random((6, 3)) > 0.5, rng.random((5, 3)) > 0.5
    idx = rng.integers(0, 6, (5, 3))
    _same(lambda m: m.scatter_reduce(m.tensor(x), 0, m.tensor(idx), m.tensor(src), reduce,
                                     include_self=include_self))


# --- take_along_dim, masked_scatter ---------------------------------------------------------------


def test_take_along_dim_wraps_along_a_dim():
    x = np.arange(10.0).reshape(2, 5)
    for v in (-11, -6, -5, -1, 0, 4, 5, 7, 100):
        _same(lambda m, v=v: m.take_along_dim(m.tensor(x), m.tensor([[v], [v]]), 1))
        _same(lambda m, v=v: m.take_along_dim(m.tensor(x), m.tensor([[v, 1, 2, 3, 4]]), 0))
        _same(lambda m, v=v: m.take_along_dim(m.tensor(x), m.tensor([[v, 1]]), 0))  # (no broadcast: raises)
    for v in (-1, 9, 10):  # flattened: no wrapping
        _same(lambda m, v=v: m.take_along_dim(m.tensor(x), m.tensor([v])))
    _same(lambda m: m.take_along_dim(m.tensor(x), m.tensor([[1]], dtype=m.int32), 1))
    _same(lambda m: m.take_along_dim(m.tensor(3.0), m.tensor(0), 0))
    _grads(lambda m, x: m.take_along_dim(x, m.tensor([[-1, 4, 9]]), 1), x)


@pytest.mark.parametrize("shapes", [((5,), (5, 5)), ((5, 1), (1, 3)), ((5, 1), (4, 3)), ((2, 3), (3,)),
                                    ((), (2,))])
def test_masked_scatter_broadcasts(shapes):
    x_shape, mask_shape = shapes
    rng = np.random.default_rng(1)
    mask = rng.random(mask_shape) > 0.4
    x = rng.random(x_shape)
    source = np.arange(30.0)
    _same(lambda m: m.masked_scatter(m.tensor(x), m.tensor(mask), m.tensor(source)))
    _same(lambda m: m.tensor(x).masked_scatter_(m.tensor(mask), m.tensor(source)))
    if shapes != ((5, 1), (4, 3)):  # (which don't broadcast together)
        _grads(lambda m, x, s: m.masked_scatter(x, m.tensor(mask), s), x, source)


# --- numbers written into a tensor: PyTorch's overflow rule ----------------------------------------

VALUES = [-1, -9, 255, 256, 1000, -129, -255, -256, 2 ** 31, 2 ** 63, -2 ** 63 - 1, 1e10, -1.5, -0.5, 300.7,
          float("inf"), float("nan"), True, 1 + 0j, 1 + 1j]
DTYPES = ["uint8", "int8", "int32", "int64", "bool", "float16", "float32", "complex64"]
ENTRIES = {
    "full": lambda m, v, d: m.full((2,), v, dtype=d),
    "full_like": lambda m, v, d: m.full_like(m.zeros(2, dtype=d), v),
    "scalar_tensor": lambda m, v, d: m.scalar_tensor(v, dtype=d),
    "masked_fill": lambda m, v, d: m.zeros(2, dtype=d).masked_fill(m.tensor([True, False]), v),
    "index_fill": lambda m, v, d: m.zeros(2, dtype=d).index_fill(0, m.tensor([0]), v),
    "index_add": lambda m, v, d: m.zeros(2, dtype=d).index_add(0, m.tensor([0]), m.ones(1, dtype=d),
                                                                alpha=v),
}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_number_written_into_a_tensor(entry, dtype):
    for v in VALUES:
        _same(lambda m, v=v: ENTRIES[entry](m, v, getattr(m, dtype)))


def test_masked_fill_tensor_value_must_fit():
    for v, dtype in itertools.product([1000, -1, -1.5, 1 + 1j, 7], ["uint8", "int8", "float16"]):
        _same(lambda m, v=v, dtype=dtype: m.zeros(2, dtype=getattr(m, dtype)).masked_fill(
            m.tensor([True, False]), m.tensor(v)))


# --- narrow, splits, roll, tile ---------------------------------------------------------------------


def test_narrow_tensor_start():
    for start in ("i64", "i32", "u8", "neg", "1d", "float", "bool"):
        def make(m, start=start):
            return {"i64": m.tensor(2), "i32": m.tensor(2, dtype=m.int32), "u8": m.tensor(2, dtype=m.uint8),
                    "neg": m.tensor(-3), "1d": m.tensor([2]), "float": m.tensor(2.0),
                    "bool": m.tensor(True)}[start]
        _same(lambda m, make=make: m.narrow(m.arange(10), 0, make(m), 3))
        _same(lambda m, make=make: m.arange(10).narrow(0, make(m), 3))
        if start != "bool":  # (PyTorch's narrow_copy fails an internal assert there)
            _same(lambda m, make=make: m.narrow_copy(m.arange(10), 0, make(m), 3))
    _grads(lambda m, x: m.narrow(x, 0, m.tensor(2), 3), np.arange(10.0))


def test_narrow_copy_dim_out_of_range():
    for dim in (-4, -3, 2, 3):
        _same(lambda m, dim=dim: m.narrow_copy(m.zeros(20, 5, 10), dim, 0, 1))
    _same(lambda m: m.narrow_copy(m.tensor(1.0), 0, 0, 1))


@pytest.mark.parametrize("op", ["dsplit", "hsplit", "vsplit"])
def test_splits_with_zero_sections(op):
    for sections in (0, -2, 3, 2, []):
        _same(lambda m, sections=sections: getattr(m, op)(m.zeros(4, 4, 4), sections))
        _same(lambda m, sections=sections: getattr(m, op)(m.zeros(0, 0, 0), sections))
    _same(lambda m: m.hsplit(m.zeros(4), 0))


def test_roll_shifts_required():
    y = np.arange(6.0).reshape(2, 3)
    for shifts, dims in [((), None), ((), ()), ([], 0), (1, ()), (1, None), (-2, None), ([1], None),
                         (1, 0), ((1, 2), (0, 1)), ([1, 2], None), ((1, 2), (0,)), ((1,), (0, 1))]:
        _same(lambda m, shifts=shifts, dims=dims: m.roll(m.tensor(y), shifts, dims))
    _same(lambda m: m.tensor(y).roll(()))
    _grads(lambda m, x: m.roll(x, 2, ()), y)


def test_tile_with_no_reps():
    for shape, reps in [((), ()), ((2, 3), ()), ((2, 3), (2,)), ((), (2, 2))]:
        _same(lambda m, shape=shape, reps=reps: m.tile(m.ones(shape), reps))
        _same(lambda m, shape=shape, reps=reps: m.ones(shape).tile(reps))
    _same(lambda m: m.ones(2, 3).repeat(()))
    _same(lambda m: m.tensor(1.0).repeat(()))


# --- arange with float bounds and an integer dtype --------------------------------------------------


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_arange_float_bounds_integer_dtype(dtype):
    values = [0, 1, 3.1, -0.9, 2.1, -2.9, 5.000001, -8.000001, 0.5, -0.5, 10]
    steps = [1, 2.0, -1.0, 0.5, -0.5, 1.5, -1.5, 3, 0.9]
    for start, end, step in itertools.product(values, values, steps):
        _same(lambda m, a=(start, end, step): m.arange(*a, dtype=getattr(m, dtype)))
    for end in values:
        _same(lambda m, end=end: m.arange(end, dtype=getattr(m, dtype)))


# --- out= -------------------------------------------------------------------------------------------

OUT_OPS = {
    "gather": lambda m, x, out: m.gather(x, 1, m.tensor([[0, 1], [1, 0]]), out=out),
    "index_select": lambda m, x, out: m.index_select(x, 1, m.tensor([0, 2]), out=out),
    "take": lambda m, x, out: m.take(x, m.tensor([0, 5]), out=out),
    "masked_select": lambda m, x, out: m.masked_select(x, x > 2, out=out),
}


@pytest.mark.parametrize("op", list(OUT_OPS))
def test_out(op):
    fn = OUT_OPS[op]
    for shape, dtype in [((0,), "float32"), ((2, 2), "float32"), ((7, 7), "float32"), ((2, 2), "float64"),
                         ((3,), "int64")]:
        def call(m, shape=shape, dtype=dtype):
            out = m.full(shape, -1.0, dtype=getattr(m, dtype))
            result = fn(m, m.arange(6.0).reshape(2, 3), out)
            assert result is out
            return out
        _same(call)
    # no gradient through out=, unless grad mode is off
    _same(lambda m: fn(m, m.arange(6.0).reshape(2, 3).requires_grad_(), m.empty(0)))
    _same(lambda m: fn(m, m.arange(6.0).reshape(2, 3), m.empty(0, requires_grad=True)))

    def no_grad(m):
        with m.no_grad():
            return fn(m, m.arange(6.0).reshape(2, 3).requires_grad_(), m.empty(0))
    _same(no_grad)

    def aliased(m):
        x = m.arange(6.0).reshape(2, 3)
        return fn(m, x, x)
    _same(aliased)


def test_out_expanded_or_a_view():
    _same(lambda m: m.gather(m.arange(6.0).reshape(2, 3), 1, m.tensor([[0, 1], [1, 0]]),
                             out=m.zeros(2, 1).expand(2, 2)))

    def into_view(m):
        base = m.zeros(2, 4)
        m.gather(m.arange(6.0).reshape(2, 3), 1, m.tensor([[0, 1], [1, 0]]), out=base[:, :2])
        return base
    _same(into_view)


# --- Tensor.__rdiv__ --------------------------------------------------------------------------------


def test_rdiv():
    _same(lambda m: m.tensor([2.0, 4.0]).__rdiv__(8))
    _same(lambda m: m.tensor([2, 4]).__rdiv__(8))
    _grads(lambda m, x: x.__rdiv__(3.0), [2.0, 4.0])
