"""The two ufunc methods a GPU module has only in part: `device.ufunc_at` and `device.accumulate`.

CuPy scatters (`ufunc.at`) with add, maximum, minimum and a few more, each on the dtypes its
atomic operation has, and accumulates only add and multiply. Where it refuses, the helpers fall
back to a log-step scan built from whole-array operations. The stand-in `ForeignArray` refuses
exactly what CuPy refuses, so these tests run the fallbacks on a CPU and compare them with
numpy's own `ufunc.at` and `ufunc.accumulate`, value for value.
"""

from __future__ import annotations

import numpy as np
import pytest
from foreign_array import foreign, is_foreign

import tensorgrad as tg
from tensorgrad.device import accumulate, to_numpy, ufunc_at


def test_the_stand_in_refuses_what_cupy_lacks():
    """If the stand-in let these through, the fallbacks below would never run."""
    floats, small = foreign(np.zeros(4)), foreign(np.zeros(4, dtype=np.int8))
    with pytest.raises(NotImplementedError, match="multiply.at"):
        np.multiply.at(floats, foreign(np.array([0, 0])), 2.0)
    with pytest.raises(TypeError, match="add.at"):
        np.add.at(small, foreign(np.array([0, 0])), 1)
    with pytest.raises(NotImplementedError, match="maximum.accumulate"):
        np.maximum.accumulate(floats)
    with pytest.raises(NotImplementedError, match="maximum.reduce"):
        np.maximum.reduce(floats)
    with pytest.raises(TypeError, match="initial"):
        floats.max(initial=0.0)
    assert is_foreign(floats.max()) and floats.max() == 0.0  # the method reduces natively
    np.add.at(floats, foreign(np.array([1, 1])), 1.5)  # what CuPy has works
    assert floats.tolist() == [0.0, 3.0, 0.0, 0.0]


def _scatter_cases():
    """(ufunc, target, index, values) on numpy arrays: places repeat, dtypes CuPy's atomics lack."""
    rng = np.random.default_rng(0)
    normal = rng.standard_normal
    repeats = np.array([3, 0, 3, 1, 3, 0, 2])
    rows, cols = np.array([0, 2, 0, 1, 0]), np.array([1, 1, 1, 0, 1])
    with_nan = normal(7).astype(np.float16)
    with_nan[2] = np.nan
    flags = np.array([0, 1, 0, 0, 1, 0, 0], bool)
    small = rng.integers(-50, 50, 7).astype(np.int16)
    return {
        "multiply float64": (np.multiply, normal(4), repeats, normal(7)),
        "multiply float64, many repeats": (np.multiply, normal(5), rng.integers(0, 5, 40),
                                           1 + normal(40) / 4),
        "multiply int64, a number": (np.multiply, np.arange(1, 5), repeats, 3),
        "add int8 wraps": (np.add, np.full(4, 100, np.int8), repeats, np.full(7, 100, np.int8)),
        "add bool": (np.add, np.array([False, True, False, False]), repeats, flags),
        "add complex128": (np.add, np.zeros(4, np.complex128), repeats, normal(7) + 1j * normal(7)),
        "maximum float16 with nan": (np.maximum, np.zeros(4, np.float16), repeats, with_nan),
        "minimum int16": (np.minimum, np.zeros(4, np.int16), repeats, small),
        "multiply 2-D, tuple index": (np.multiply, normal((3, 2)), (rows, cols), normal(5)),
        "multiply with a slice": (np.multiply, normal((4, 3)), (slice(None), np.array([2, 0, 2])),
                                  normal((4, 3))),
        "multiply broadcast values": (np.multiply, normal((4, 3)), np.array([1, 1, 3]), normal(3)),
        "multiply nothing": (np.multiply, normal(4), np.array([], dtype=np.int64), 2.0),
    }


@pytest.mark.parametrize("case", list(_scatter_cases()))
def test_ufunc_at_falls_back_to_numpys_answer(case):
    ufunc, target, index, values = _scatter_cases()[case]
    expected = target.copy()
    ufunc.at(expected, index, values)
    on_foreign = foreign(target)
    index_there = tuple(foreign(i) if isinstance(i, np.ndarray) else i for i in index) \
        if isinstance(index, tuple) else foreign(index)
    ufunc_at(ufunc, on_foreign, index_there, foreign(values) if isinstance(values, np.ndarray) else values)
    assert is_foreign(on_foreign) and on_foreign.dtype == expected.dtype
    # Integers, bools and extremes exactly; float products and sums to the last bits (a tree of
    # operations rounds differently from numpy's one-at-a-time loop).
    np.testing.assert_allclose(to_numpy(on_foreign), expected, rtol=1e-13, atol=0)


def test_ufunc_at_writes_through_a_non_contiguous_view():
    base = np.arange(12.0).reshape(3, 4)
    expected = base.copy()
    np.multiply.at(expected.T, np.array([1, 1, 3]), 2.0)
    on_foreign = foreign(base)
    ufunc_at(np.multiply, on_foreign.T, foreign(np.array([1, 1, 3])), 2.0)  # a transposed view
    np.testing.assert_array_equal(to_numpy(on_foreign), expected)


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.logaddexp])
@pytest.mark.parametrize("shape, axis", [((0,), 0), ((1,), 0), ((2,), 0), ((7,), 0), ((8,), 0),
                                         ((9,), 0), ((3, 9), 1), ((9, 3), 0), ((2, 5, 4), 1)])
def test_accumulate_falls_back_to_numpys_answer(ufunc, shape, axis):
    rng = np.random.default_rng(sum(shape))
    data = rng.standard_normal(shape)
    if data.size > 4:
        data.reshape(-1)[[1, 4]] = [np.nan, -np.inf]
    with np.errstate(invalid="ignore"):
        expected = ufunc.accumulate(data, axis=axis)
        out = accumulate(ufunc, foreign(data), axis)
    assert is_foreign(out) and out.shape == expected.shape
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-14, atol=0)


def test_accumulate_returns_a_new_array():
    data = foreign(np.array([3.0]))
    out = accumulate(np.maximum, data, 0)
    out[0] = 5.0
    assert data[0] == 3.0


def test_accumulate_of_integers_is_exact():
    data = np.array([[5, -3, 7, 7, 2, 9, -1]], dtype=np.int32)
    out = accumulate(np.maximum, foreign(data), 1)
    assert out.dtype == np.int32 and to_numpy(out).tolist() == [[5, 5, 7, 7, 7, 9, 9]]


def _on_foreign(array: np.ndarray, **kwargs) -> tg.Tensor:
    return tg.from_numpy(foreign(array)).requires_grad_(kwargs.get("requires_grad", False))


def _rows(values: list, dtype) -> np.ndarray:
    return np.array(values, dtype).reshape(2, 3)


OPS_ON_GAPS = {
    # (inputs, op): ops whose scatters or scans CuPy lacks for these dtypes
    "scatter_add into int8": ([np.full((2, 3), 120, np.int8), np.full((2, 3), 7, np.int8)],
                              lambda x, s, idx: x.scatter_add(0, idx, s)),
    "scatter_reduce amax in float16": ([np.zeros((2, 3), np.float16), _rows(range(-3, 3), np.float16)],
                                       lambda x, s, idx: x.scatter_reduce(0, idx, s, "amax")),
    "scatter_reduce prod in int64": ([_rows(range(1, 7), np.int64), _rows(range(2, 8), np.int64)],
                                     lambda x, s, idx: x.scatter_reduce(0, idx, s, "prod",
                                                                        include_self=False)),
    "cummax of int32": ([np.array([[4, 1, 9, 9, 2, 11]], np.int32)], lambda x, idx: x.cummax(1)),
    "cummin of float32": ([np.array([[4, 1, 9, -2, 2, -2]], np.float32)], lambda x, idx: x.cummin(1)),
}


@pytest.mark.parametrize("case", list(OPS_ON_GAPS))
def test_ops_give_numpys_answer_where_cupy_lacks_the_method(case):
    arrays, op = OPS_ON_GAPS[case]
    index = np.array([[1, 1, 0], [1, 0, 0]])
    plain = op(*(tg.from_numpy(a.copy()) for a in arrays), tg.from_numpy(index))
    there = op(*(_on_foreign(a) for a in arrays), _on_foreign(index))
    plain, there = (plain, there) if isinstance(plain, tuple) else ((plain,), (there,))
    for p, t in zip(plain, there, strict=True):
        assert is_foreign(t.data) and t.dtype == p.dtype
        np.testing.assert_array_equal(to_numpy(t.data), p.data)
