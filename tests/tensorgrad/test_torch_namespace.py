"""torch-level functions (`tg.name` for `torch.name`), against PyTorch: shape and dtype helpers,
numerics (trapezoid, histogram), window functions, Poisson and binomial sampling, and the
`torch.X` spellings of nn.functional's ops with torch's positional argument order. Values,
dtypes, shapes and gradients are compared with PyTorch, gradients also with finite differences,
and every differentiable op runs on the foreign-array stand-in for GPU arrays."""

from __future__ import annotations

import numpy as np
import pytest
from foreign_array import is_foreign
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg
from tensorgrad.device import to_numpy

torch = pytest.importorskip("torch")

DTYPES = [tg.bool, tg.uint8, tg.int8, tg.int16, tg.int32, tg.int64, tg.float16, tg.float32, tg.float64]


def torch_dtype(dtype: np.dtype):
    """PyTorch's dtype for a numpy one."""
    return torch.from_numpy(np.zeros(1, dtype)).dtype


def np_dtype(dtype) -> np.dtype:
    """numpy's dtype for a PyTorch one."""
    return torch.zeros(1, dtype=dtype).numpy().dtype


def pair(array: np.ndarray, requires_grad: bool = False):
    """The same values as a tensorgrad tensor and a torch tensor."""
    a = tg.tensor(array, requires_grad=requires_grad)
    b = torch.tensor(array, requires_grad=requires_grad)
    return a, b


def assert_same(ours, theirs, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Same shape, dtype and values (nan where PyTorch has nan)."""
    if isinstance(theirs, tuple | list):
        assert isinstance(ours, tuple | list) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            assert_same(o, t, rtol, atol)
        return
    assert isinstance(ours, tg.Tensor), type(ours)
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype == np_dtype(theirs.dtype), (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(to_numpy(ours.data).astype(np.float64),
                               theirs.detach().numpy().astype(np.float64), rtol=rtol, atol=atol)


def assert_grads(ours, theirs, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    for o, t in zip(ours, theirs, strict=True):
        if t.grad is None:
            assert o.grad is None
        else:
            np.testing.assert_allclose(o.grad, t.grad.numpy(), rtol=rtol, atol=atol)


RNG = np.random.default_rng(0)


def randn(*shape: int, dtype=np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# --- shape helpers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_matches_torch_for_each_rank_and_calling_form(name):
    ours_f, theirs_f = getattr(tg, name), getattr(torch, name)
    arrays = [np.array(1.5), randn(3), randn(2, 3), randn(2, 3, 4), randn(1, 2, 1, 3)]
    for array in arrays:
        a, b = pair(array)
        assert_same(ours_f(a), theirs_f(b))
        assert ours_f(a).stride() == theirs_f(b).stride()
    pairs = [pair(array) for array in arrays]
    ours, theirs = ours_f(*(a for a, _ in pairs)), theirs_f(*(b for _, b in pairs))
    assert isinstance(ours, tuple)
    assert_same(ours, theirs)
    assert_same(ours_f([a for a, _ in pairs[:2]]), theirs_f([b for _, b in pairs[:2]]))
    big = tg.ones(2, 3, 4)
    assert ours_f(big) is big  # already high enough: the tensor itself, as in PyTorch
    with pytest.raises(TypeError):
        ours_f(1.0)


def test_atleast_are_views_with_gradient():
    x = tg.tensor(randn(4), requires_grad=True)
    y = tg.atleast_3d(x)
    assert y.shape == (1, 4, 1) and np.shares_memory(y.data, x.data)
    assert tg.gradcheck(lambda t: tg.atleast_3d(t) * 2, [x])
    s = tg.tensor(2.0, dtype=tg.float64, requires_grad=True)
    (tg.atleast_2d(s) * 3).sum().backward()
    assert s.grad == 3


def test_block_diag_values_dtypes_and_gradients_match_torch():
    arrays = [randn(2, 2), randn(3), np.array(4.0), randn(1, 2), np.zeros((0, 2))]
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = tg.block_diag(*ours), torch.block_diag(*theirs)
    assert_same(out, expected)
    weights = randn(*expected.shape)
    (out * tg.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    assert_grads(ours, theirs)
    assert tg.gradcheck(lambda *ts: tg.block_diag(*ts), ours[:4])
    mixed = (tg.tensor([[1, 2]], dtype=tg.int32), tg.tensor([3], dtype=tg.uint8), tg.tensor([True]))
    assert_same(tg.block_diag(*mixed), torch.block_diag(*(torch.from_numpy(t.numpy()) for t in mixed)))
    assert_same(tg.block_diag(tg.ones(2, dtype=tg.int64), tg.tensor([0.5])),
                torch.block_diag(torch.ones(2, dtype=torch.int64), torch.tensor([0.5])))
    assert_same(tg.block_diag(), torch.block_diag())
    with pytest.raises(RuntimeError, match="block_diag"):
        tg.block_diag(tg.ones(2, 2, 2))


def test_broadcast_shapes_matches_torch_and_returns_size():
    cases = [((2, 1), (3,)), (2, (1,)), (), ((5, 1, 4), (3, 1), [1]), ((0, 1), (3,)), ((1,), ())]
    for shapes in cases:
        out = tg.broadcast_shapes(*shapes)
        assert isinstance(out, tg.Size)
        assert tuple(out) == tuple(torch.broadcast_shapes(*shapes))
    with pytest.raises(RuntimeError, match=r"broadcast_shapes.*\(2,\).*\(3,\)"):
        tg.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError):
        tg.broadcast_shapes((-1,), (3,))


def test_broadcast_tensors_are_views_with_torch_strides_and_gradients():
    arrays = [randn(3, 1), randn(2), randn(1, 1)]
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = tg.broadcast_tensors(*ours), torch.broadcast_tensors(*theirs)
    assert_same(out, expected)
    for o, e, a in zip(out, expected, ours, strict=True):
        assert o.stride() == e.stride() and np.shares_memory(o.data, a.data)
    weights = [randn(3, 2) for _ in out]
    sum(((o * tg.tensor(w)).sum() for o, w in zip(out, weights, strict=True)), tg.tensor(0.0)).backward()
    sum((e * torch.tensor(w)).sum() for e, w in zip(expected, weights, strict=True)).backward()
    assert_grads(ours, theirs)
    assert tg.gradcheck(lambda *ts: tg.broadcast_tensors(*ts)[0] * tg.broadcast_tensors(*ts)[1], ours[:2])
    assert tg.broadcast_tensors() == ()
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(2,\)"):
        tg.broadcast_tensors(tg.ones(3), tg.ones(2))


def test_cartesian_prod_and_combinations_match_torch():
    a, b = pair(randn(3), True)
    c, d = pair(randn(2), True)
    assert_same(tg.cartesian_prod(a, c), torch.cartesian_prod(b, d))
    for r, replace in ((2, False), (3, False), (2, True), (0, False), (4, False)):
        assert_same(tg.combinations(a, r, replace), torch.combinations(b, r, replace))
    with pytest.raises(RuntimeError, match="non-negative"):
        tg.combinations(a, -1)
    out = tg.combinations(a, 2, with_replacement=True)
    expected = torch.combinations(b, 2, with_replacement=True)
    weights = randn(*expected.shape)
    (out * tg.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    assert_grads([a], [b])


def test_unravel_index_matches_torch_including_wraparound():
    for indices, shape in (([4, 1, 0, 5], (2, 3)), (4, (2, 3)), (-1, (2, 3)), (6, (2, 3)), (-7, (2, 3)),
                           ([[1, 5], [2, 3]], (3, 2)), (4, 6), (23, (2, 3, 4))):
        ours = tg.unravel_index(tg.tensor(indices), shape)
        assert_same(ours, torch.unravel_index(torch.tensor(indices), shape))
    assert_same(tg.unravel_index(tg.tensor([5], dtype=tg.int32), (2, 3)),
                torch.unravel_index(torch.tensor([5], dtype=torch.int32), (2, 3)))
    assert tg.unravel_index(tg.tensor(4), ()) == ()
    with pytest.raises(TypeError, match="integer"):
        tg.unravel_index(tg.tensor(1.5), (2, 3))
    with pytest.raises(TypeError, match="integer"):
        tg.unravel_index(tg.tensor(True), (2, 3))
    with pytest.raises(ValueError, match="negative"):
        tg.unravel_index(tg.tensor(1), (2, -3))


# --- dtype queries ----------------------------------------------------------------------------------


def test_can_cast_and_promote_types_match_torch_for_every_pair():
    for a in DTYPES:
        for b in DTYPES:
            assert tg.can_cast(a, b) == torch.can_cast(torch_dtype(a), torch_dtype(b)), (a, b)
            expected = np_dtype(torch.promote_types(torch_dtype(a), torch_dtype(b)))
            assert tg.promote_types(a, b) == expected, (a, b)
    assert tg.promote_types(tg.float, tg.long) == tg.float32


def test_result_type_follows_torch_categories_for_tensors_and_numbers():
    operands = [
        (np.ones(2, np.int32), np.ones(2, np.float16)), (np.ones(2, np.int32), 1.0),
        (np.ones(2, np.int32), np.array(1.0)), (np.array(1, np.int8), np.ones(2, np.uint8)),
        (np.array(1, np.int8), 1000), (2.0, np.ones(1, np.float16)), (1, 2.0), (1, 2), (True, 2),
        (True, False), (np.ones(2, np.float32), np.array(1.0)), (np.ones(2, bool), 3),
        (np.ones(2, np.uint8), np.array(-1, np.int64)), (np.array(True), 2.5), (np.ones(3, np.int64), True),
    ]
    for a, b in operands:
        ours = tg.result_type(*(tg.from_numpy(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
        theirs = torch.result_type(*(torch.from_numpy(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
        assert ours == np_dtype(theirs), (a, b)
    with pytest.raises(TypeError):
        tg.result_type([1], 2)


def test_is_floating_point_and_is_complex():
    for dtype in DTYPES:
        t = tg.zeros(2, dtype=dtype)
        expected = torch.zeros(2, dtype=torch_dtype(dtype))
        assert tg.is_floating_point(t) == torch.is_floating_point(expected)
        assert tg.is_complex(t) is False
    assert tg.is_complex(tg.tensor(np.ones(2, np.complex64)))
    with pytest.raises(TypeError):
        tg.is_floating_point(1.0)
    with pytest.raises(TypeError):
        tg.is_complex([1])


def test_isin_matches_torch():
    cases = [
        ([1, 2, 3, 2], [2, 5]), ([1.0, 2.0, float("nan")], [2.0, float("nan")]), ([[1, 2], [3, 4]], [[4]]),
        ([1, 2, 3], [2.0]), ([1, 2, 3], []), ([], [1, 2]),
    ]
    for elements, tests in cases:
        for invert in (False, True):
            a, b = tg.tensor(elements), tg.tensor(tests)
            expected = torch.isin(torch.tensor(elements), torch.tensor(tests), invert=invert)
            assert_same(tg.isin(a, b, invert=invert), expected)
            assert_same(tg.isin(a, b, assume_unique=False, invert=invert), expected)
    assert_same(tg.isin(tg.tensor([1.0, 2.0, 3.0]), 2), torch.isin(torch.tensor([1.0, 2.0, 3.0]), 2))
    assert_same(tg.isin(2, tg.tensor([1, 2])), torch.isin(2, torch.tensor([1, 2])))
    assert_same(tg.isin(tg.tensor([3, 1]), tg.tensor([1, 3]), assume_unique=True),
                torch.isin(torch.tensor([3, 1]), torch.tensor([1, 3]), assume_unique=True))
    with pytest.raises(TypeError):
        tg.isin(1, 2)
    with pytest.raises(RuntimeError, match="bool"):
        tg.isin(tg.tensor([True]), tg.tensor([True]))


def test_scalar_tensor_is_0d_in_the_default_float():
    for value, dtype in ((3, None), (True, None), (2.5, None), (2.0, torch.int64), (1.5, torch.float64)):
        ours = tg.scalar_tensor(value, dtype=None if dtype is None else np_dtype(dtype))
        assert_same(ours, torch.scalar_tensor(value, dtype=dtype))
    t = tg.scalar_tensor(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.shape == ()
    with pytest.raises(TypeError):
        tg.scalar_tensor("2")
    with pytest.raises(RuntimeError):
        tg.scalar_tensor(1 + 2j)


def test_rsub_matches_torch_values_dtypes_and_gradients():
    a, b = pair(randn(2, 3), True)
    c, d = pair(randn(3), True)
    out, expected = tg.rsub(a, c, alpha=2), torch.rsub(b, d, alpha=2)
    assert_same(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_grads([a, c], [b, d])
    assert tg.gradcheck(lambda x, y: tg.rsub(x, y, alpha=0.5), [a, c])
    for args in ((np.array([1.0, 2.0], np.float32), 3), (np.array([1, 2]), 3.5), (np.array([1, 2]), 3, 2),
                 (np.array([1, 2], np.int32), 3.5, 1.5), (np.array([1.0], np.float32), 3, 1.5)):
        ours = tg.rsub(tg.from_numpy(args[0]), *args[1:])
        assert_same(ours, torch.rsub(torch.from_numpy(args[0]), *args[1:]))
    with pytest.raises(RuntimeError, match="alpha"):
        tg.rsub(tg.tensor([1]), 3, alpha=1.5)
    with pytest.raises(RuntimeError):
        tg.rsub(tg.tensor([True]), True)
    with pytest.raises(TypeError):
        tg.rsub(3, tg.tensor([1.0]))


# --- numerics ---------------------------------------------------------------------------------------


TRAPEZOID_CASES = [
    ((2, 3), None, {}), ((2, 3), None, {"dx": 2.5}), ((2, 3), (3,), {}), ((4, 3), (4,), {"dim": 0}),
    ((2, 3, 4), (2, 3, 4), {"dim": 1}), ((5,), (5,), {}), ((3, 1), None, {}), ((0,), None, {}),
    ((2, 0), (0,), {}), ((3, 4), None, {"dim": -2, "dx": 0.5}),
]


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
@pytest.mark.parametrize(("y_shape", "x_shape", "options"), TRAPEZOID_CASES)
def test_trapezoid_family_matches_torch_values_and_gradients(name, y_shape, x_shape, options):
    ours_f, theirs_f = getattr(tg, name), getattr(torch, name)
    y, ty = pair(randn(*y_shape), True)
    args, targs = (), ()
    if x_shape is not None:
        x, tx = pair(np.sort(randn(*x_shape), axis=options.get("dim", -1)), True)
        args, targs = (x,), (tx,)
    out, expected = ours_f(y, *args, **options), theirs_f(ty, *targs, **options)
    assert_same(out, expected, rtol=1e-10)
    if expected.requires_grad:  # (PyTorch's result from an empty y has no graph)
        weights = randn(*expected.shape)
        (out * tg.tensor(weights)).sum().backward()
        (expected * torch.tensor(weights)).sum().backward()
        assert_grads([y, *args], [ty, *targs], rtol=1e-10)
        assert tg.gradcheck(lambda *ts: ours_f(*ts, **options), [y, *args])


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
def test_trapezoid_dtypes_follow_torch(name):
    ours_f, theirs_f = getattr(tg, name), getattr(torch, name)
    y_int = np.array([1, 2, 4, 7])
    cases = [
        ((y_int,), {}), ((y_int,), {"dx": 2}), ((y_int,), {"dx": 0.5}), ((y_int, np.array([0, 1, 3, 4])), {}),
        ((y_int.astype(np.float32), np.array([0.0, 1.0, 3.0, 4.0])), {}),
        ((y_int.astype(np.float32), np.array([0, 1, 3, 4])), {}),
        ((y_int.astype(np.float16),), {}),
    ]
    for arrays, options in cases:
        ours = ours_f(*(tg.from_numpy(a) for a in arrays), **options)
        assert_same(ours, theirs_f(*(torch.from_numpy(a) for a in arrays), **options), rtol=1e-3)


def test_trapezoid_errors():
    y = tg.ones(2, 3)
    with pytest.raises(RuntimeError, match="x"):
        tg.trapezoid(y, tg.tensor([0.0, 1.0]))
    with pytest.raises(TypeError):
        tg.trapezoid(y, tg.tensor([0.0, 1.0, 2.0]), dx=1)
    with pytest.raises(TypeError):
        tg.trapezoid(y, x=2.0)
    with pytest.raises(RuntimeError, match="bool"):
        tg.trapezoid(tg.tensor([True, False]))
    with pytest.raises(IndexError):
        tg.cumulative_trapezoid(y, dim=2)
    for f in (tg.trapezoid, tg.cumulative_trapezoid):
        with pytest.raises(IndexError):
            f(tg.tensor(1.5))


HISTOGRAM_CASES = [
    ([1.0, 2, 1, 4, 2.5], {"bins": 4}),
    ([1.0, 2, 1, 4, 2.5], {"bins": 3, "range": (0.0, 5.0), "density": True}),
    ([1.0, 2, 1, 4, 2.5], {"bins": [0.0, 1.5, 3, 10], "weight": [1.0, 2, 3, 4, 5]}),
    ([1.0, 2, 1, 4, 2.5], {"bins": [0.0, 1.5, 3, 10], "density": True}),
    ([[1.0, 2], [3, 4]], {"bins": 2}),
    ([3.0, 3.0], {"bins": 2}),
    ([], {"bins": 2}),
    ([1.0, float("inf"), -2.0, 7.0], {"bins": 2, "range": (0.0, 2.0)}),
    ([0.5, 0.25, 0.75, 1.0, 0.0], {"bins": 4, "weight": [1.0, 0.5, 2, 3, 4], "density": True}),
]


@pytest.mark.parametrize("dtype", [tg.float32, tg.float64])
@pytest.mark.parametrize(("values", "options"), HISTOGRAM_CASES)
def test_histogram_matches_torch(values, options, dtype):
    def convert(make, tensor_of):
        out = dict(options)
        for key in ("bins", "weight"):
            if isinstance(out.get(key), list):
                out[key] = tensor_of(out[key])
        return out

    ours = tg.histogram(tg.tensor(values, dtype=dtype),
                        **convert(options, lambda v: tg.tensor(v, dtype=dtype)))
    theirs = torch.histogram(torch.tensor(values, dtype=torch_dtype(dtype)),
                             **convert(options, lambda v: torch.tensor(v, dtype=torch_dtype(dtype))))
    assert type(ours).__name__ == "histogram" and ours._fields == ("hist", "bin_edges")
    assert_same(ours.hist, theirs.hist, rtol=1e-5)
    assert_same(ours.bin_edges, theirs.bin_edges, rtol=1e-6)
    hist, edges = ours
    assert hist is ours.hist and edges is ours.bin_edges


def test_histogram_errors_and_histogramdd():
    x = tg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(NotImplementedError):
        tg.histogram(tg.tensor([1, 2]), 2)
    with pytest.raises(RuntimeError, match="bins"):
        tg.histogram(x, 0)
    with pytest.raises(RuntimeError, match="min"):
        tg.histogram(x, 2, range=(3.0, 1.0))
    with pytest.raises(RuntimeError, match="weight"):
        tg.histogram(x, 2, weight=tg.ones(2))
    with pytest.raises(RuntimeError, match="dtype"):
        tg.histogram(x, tg.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="dtype"):
        tg.histogram(x, 2, weight=tg.ones(3, dtype=tg.float64))
    with pytest.raises(RuntimeError, match="finite"):
        tg.histogram(tg.tensor([1.0, float("nan")]), 2)
    with pytest.raises(RuntimeError, match="2 dimensions"):
        tg.histogramdd(x, [2])
    points = [[0.0, 1], [1, 0], [2, 0], [2, 2], [0.5, 1.5]]
    weights = [1.0, 2, 4, 8, 16]
    for options in ({"bins": [3, 2], "weight": weights}, {"bins": 2}, {"bins": [2, 3], "density": True},
                    {"bins": [2, 2], "range": [0.0, 4.0, -1.0, 1.0]}):
        ours = tg.histogramdd(tg.tensor(points), **{k: tg.tensor(v) if k == "weight" else v
                                                    for k, v in options.items()})
        theirs = torch.histogramdd(torch.tensor(points), **{k: torch.tensor(v) if k == "weight" else v
                                                            for k, v in options.items()})
        assert type(ours).__name__ == "histogramdd"
        assert_same(ours.hist, theirs.hist)
        assert_same(tuple(ours.bin_edges), tuple(theirs.bin_edges))
    edges = [tg.tensor([0.0, 1.0, 3.0]), tg.tensor([0.0, 0.5, 2.0])]
    ours = tg.histogramdd(tg.tensor(points), edges)
    theirs = torch.histogramdd(torch.tensor(points),
                               [torch.tensor([0.0, 1.0, 3.0]), torch.tensor([0.0, 0.5, 2.0])])
    assert_same(ours.hist, theirs.hist)


WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_match_torch(name):
    ours_f, theirs_f = getattr(tg, name), getattr(torch, name)
    for n in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            assert_same(ours_f(n, periodic), theirs_f(n, periodic), atol=1e-6)
            assert_same(ours_f(n, periodic=periodic, dtype=tg.float64),
                        theirs_f(n, periodic=periodic, dtype=torch.float64), atol=1e-12)
    assert_same(ours_f(6), theirs_f(6), atol=1e-6)
    w = ours_f(3, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    assert_same(ours_f(4, dtype=tg.float16), theirs_f(4, dtype=torch.float16), atol=1e-3)
    with pytest.raises(RuntimeError, match="non-negative"):
        ours_f(-1)
    with pytest.raises(RuntimeError, match="floating"):
        ours_f(3, dtype=tg.int64)
    with pytest.raises(TypeError):
        ours_f(2.5)


def test_window_extra_parameters_match_torch():
    assert_same(tg.hamming_window(7, True, 0.5, 0.5), torch.hamming_window(7, True, 0.5, 0.5))
    assert_same(tg.hamming_window(7, False, 0.6), torch.hamming_window(7, False, 0.6))
    assert_same(tg.kaiser_window(7, True, 5.0), torch.kaiser_window(7, True, 5.0), atol=1e-6)
    assert_same(tg.kaiser_window(6, False, 0.0), torch.kaiser_window(6, False, 0.0))


# --- random sampling --------------------------------------------------------------------------------


def test_poisson_samples_have_the_rate_as_mean_and_a_zero_gradient():
    tg.manual_seed(0)
    rates = tg.tensor([0.0, 1.0, 4.0, 30.0], dtype=tg.float64, requires_grad=True)
    samples = tg.poisson(rates.expand(20000, 4))
    assert samples.dtype == tg.float64 and samples.shape == (20000, 4)
    assert np.all(samples.data == np.round(samples.data)) and np.all(samples.data[:, 0] == 0)
    np.testing.assert_allclose(samples.data.mean(0), [0.0, 1.0, 4.0, 30.0], rtol=0.03, atol=0.02)
    np.testing.assert_allclose(samples.data.var(0), [0.0, 1.0, 4.0, 30.0], rtol=0.06, atol=0.02)
    assert samples.requires_grad  # as PyTorch: differentiable, with gradient 0
    samples.sum().backward()
    np.testing.assert_array_equal(rates.grad, np.zeros(4))
    g = tg.Generator().manual_seed(3)
    first = tg.poisson(tg.full((5,), 2.0), generator=g)
    again = tg.poisson(tg.full((5,), 2.0), generator=tg.Generator().manual_seed(3))
    np.testing.assert_array_equal(first.data, again.data)
    assert tg.poisson(tg.ones(3)).dtype == tg.float32
    with pytest.raises(NotImplementedError):
        tg.poisson(tg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="non-negative"):
        tg.poisson(tg.tensor([-1.0]))


def test_binomial_samples_broadcast_with_the_right_moments():
    tg.manual_seed(0)
    count = tg.tensor([[10.0], [40.0]])
    prob = tg.tensor([0.0, 0.25, 1.0]).expand(5000, 2, 3)
    samples = tg.binomial(count.expand(5000, 2, 1), prob)
    assert samples.shape == (5000, 2, 3) and samples.dtype == tg.float32
    assert not samples.requires_grad
    np.testing.assert_allclose(samples.data.mean(0), [[0, 2.5, 10], [0, 10, 40]], atol=0.15)
    np.testing.assert_allclose(samples.data.var(0), [[0, 1.875, 0], [0, 7.5, 0]], rtol=0.08, atol=0.01)
    theirs = torch.binomial(torch.tensor([3.0, 2.0]), torch.tensor([0.5]))
    assert tg.binomial(tg.tensor([3.0, 2.0]), tg.tensor([0.5])).shape == tuple(theirs.shape)
    with pytest.raises(ValueError):
        tg.binomial(tg.tensor([3]), tg.tensor([0.5]))
    with pytest.raises(RuntimeError, match="dtype"):
        tg.binomial(tg.tensor([3.0], dtype=tg.float64), tg.tensor([0.5]))
    with pytest.raises(RuntimeError):
        tg.binomial(tg.tensor([3.0, 2.0]), tg.tensor([0.5, 0.5, 0.5]))
    with pytest.raises(RuntimeError, match="prob"):
        tg.binomial(tg.tensor([3.0]), tg.tensor([1.5]))


# --- torch.X spellings of nn.functional's ops, called with torch's positional argument order ---------


def _nn_cases():
    """(name, arrays, build(lib, *tensors)): each call spelled exactly as for torch.X."""
    img, w2, b2 = randn(2, 3, 5, 5), randn(4, 3, 3, 3), randn(4)
    seq, w1, b1 = randn(2, 3, 7), randn(4, 3, 2), randn(4)
    wt1, wt2 = randn(3, 2, 3), randn(3, 2, 2, 2)
    bn = randn(4, 3, 5)
    logp, target = np.log(RNG.dirichlet(np.ones(5), size=4)), RNG.dirichlet(np.ones(5), size=4)
    a, p, n = randn(4, 6), randn(4, 6), randn(4, 6)
    sign = np.sign(randn(4))
    return [
        ("conv1d", [seq, w1, b1], lambda m, x, w, b: m.conv1d(x, w, b, 2, 1, 1, 1)),
        ("conv1d same", [seq, w1], lambda m, x, w: m.conv1d(x, w, None, 1, "same")),
        ("conv2d", [img, w2, b2], lambda m, x, w, b: m.conv2d(x, w, b, 1, 1, 2, 1)),
        ("conv_transpose1d", [seq, wt1, randn(2)],
         lambda m, x, w, b: m.conv_transpose1d(x, w, b, 2, 1, 1, 1, 1)),
        ("conv_transpose2d", [img, wt2], lambda m, x, w: m.conv_transpose2d(x, w, None, 2, 0, 1, 1, 1)),
        ("max_pool1d", [seq], lambda m, x: m.max_pool1d(x, 2)),
        ("max_pool1d all", [seq], lambda m, x: m.max_pool1d(x, 3, 2, 1, 1, True)),
        ("max_pool2d", [img], lambda m, x: m.max_pool2d(x, 2, [], 0, 1, False)),
        ("max_pool2d strided", [img], lambda m, x: m.max_pool2d(x, (3, 2), (2, 1), (1, 0), 1, True)),
        ("avg_pool1d", [seq], lambda m, x: m.avg_pool1d(x, 3, 2, 1, True, False)),
        ("adaptive_avg_pool1d", [seq], lambda m, x: m.adaptive_avg_pool1d(x, 3)),
        ("adaptive_max_pool1d", [seq], lambda m, x: m.adaptive_max_pool1d(x, 3)),
        ("batch_norm eval", [bn, randn(3), randn(3)],
         lambda m, x, w, b: m.batch_norm(x, w, b, m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64),
                                         False, 0.1, 1e-5, False)),
        ("batch_norm train", [bn, randn(3), randn(3)],
         lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False)),
        ("instance_norm", [bn, randn(3), randn(3)],
         lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False)),
        ("embedding", [randn(5, 3)], lambda m, w: m.embedding(w, m.tensor([[0, 2], [2, 4]]))),
        ("embedding padding", [randn(5, 3)],
         lambda m, w: m.embedding(w, m.tensor([0, 2, 2, 1]), 2, False, False)),
        ("embedding freq", [randn(5, 3)], lambda m, w: m.embedding(w, m.tensor([0, 2, 2, 1]), -1, True)),
        ("dropout eval", [a], lambda m, x: m.dropout(x, 0.5, False)),
        ("alpha_dropout eval", [a], lambda m, x: m.alpha_dropout(x, 0.5, False)),
        ("feature_alpha_dropout eval", [a], lambda m, x: m.feature_alpha_dropout(x, 0.5, False)),
        ("pixel_shuffle", [randn(1, 8, 2, 3)], lambda m, x: m.pixel_shuffle(x, 2)),
        ("pixel_unshuffle", [randn(1, 2, 4, 6)], lambda m, x: m.pixel_unshuffle(x, 2)),
        ("prelu", [a, np.array([0.25])], lambda m, x, w: m.prelu(x, w)),
        ("rrelu eval", [a], lambda m, x: m.rrelu(x, 0.1, 0.3)),
        ("rrelu default", [a], lambda m, x: m.rrelu(x)),
        ("threshold", [a], lambda m, x: m.threshold(x, 0.1, 20.0)),
        ("hardshrink", [a], lambda m, x: m.hardshrink(x, 0.3)),
        ("pairwise_distance", [a, p], lambda m, x, y: m.pairwise_distance(x, y, 1.5, 1e-6, True)),
        ("cosine_embedding_loss", [a, p],
         lambda m, x, y: m.cosine_embedding_loss(x, y, m.tensor(sign), 0.1, 0)),
        ("cosine_embedding_loss sum", [a, p],
         lambda m, x, y: m.cosine_embedding_loss(x, y, m.tensor(sign), 0.1, 2)),
        ("hinge_embedding_loss", [a], lambda m, x: m.hinge_embedding_loss(x, m.tensor(np.sign(p)), 0.5, 1)),
        ("margin_ranking_loss", [a[:, 0], p[:, 0]],
         lambda m, x, y: m.margin_ranking_loss(x, y, m.tensor(sign), 0.2, 2)),
        ("triplet_margin_loss", [a, p, n],
         lambda m, x, y, z: m.triplet_margin_loss(x, y, z, 1.0, 2.0, 1e-6, True, 0)),
        ("triplet_margin_loss default", [a, p, n], lambda m, x, y, z: m.triplet_margin_loss(x, y, z)),
        ("poisson_nll_loss", [a, np.abs(p)], lambda m, x, t: m.poisson_nll_loss(x, t, True, True, 1e-8, 1)),
        ("poisson_nll_loss rates", [np.abs(a) + 0.1, np.abs(p)],
         lambda m, x, t: m.poisson_nll_loss(x, t, False, False, 1e-8, 0)),
        ("kl_div", [logp, target], lambda m, x, t: m.kl_div(x, t, 0)),
        ("kl_div sum", [logp, np.log(target)], lambda m, x, t: m.kl_div(x, t, 2, log_target=True)),
        ("kl_div default", [logp, target], lambda m, x, t: m.kl_div(x, t)),
        ("binary_cross_entropy_with_logits", [a, RNG.random((4, 6))],
         lambda m, x, t: m.binary_cross_entropy_with_logits(x, t, None, m.full((6,), 2.0).double(), 0)),
        ("binary_cross_entropy_with_logits weight", [a, RNG.random((4, 6))],
         lambda m, x, t: m.binary_cross_entropy_with_logits(x, t, m.tensor(np.linspace(0.5, 2, 6)), None, 1)),
        ("binary_cross_entropy_with_logits default", [a, RNG.random((4, 6))],
         lambda m, x, t: m.binary_cross_entropy_with_logits(x, t)),
        ("kl_div mean", [logp, target], lambda m, x, t: m.kl_div(x, t, 1)),
        ("bilinear", [randn(4, 3), randn(4, 2), randn(5, 3, 2), randn(5)],
         lambda m, x, y, w, b: m.bilinear(x, y, w, b)),
        ("rms_norm", [randn(2, 3, 4), randn(3, 4)], lambda m, x, w: m.rms_norm(x, [3, 4], w, 1e-6)),
        ("rms_norm default eps", [randn(2, 3, 4)], lambda m, x: m.rms_norm(x, (4,))),
    ]


NN_CASES = _nn_cases()


@pytest.mark.filterwarnings("ignore:Using padding='same'")  # PyTorch's note on its own padding copy
@pytest.mark.parametrize(("name", "arrays", "build"), [pytest.param(*case, id=case[0]) for case in NN_CASES])
def test_torch_level_nn_spellings_match_torch_positionally(name, arrays, build):
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = build(tg, *ours), build(torch, *theirs)
    outs = out if isinstance(out, tuple) else (out,)
    expecteds = expected if isinstance(expected, tuple) else (expected,)
    assert_same(outs, expecteds, rtol=1e-10, atol=1e-10)
    weights = randn(*expecteds[0].shape)
    (outs[0] * tg.tensor(weights)).sum().backward()
    (expecteds[0] * torch.tensor(weights)).sum().backward()
    assert_grads(ours, theirs, rtol=1e-8, atol=1e-10)


def test_torch_level_nn_spellings_gradcheck():
    for name in ("conv1d", "max_pool2d strided", "batch_norm train", "kl_div", "triplet_margin_loss",
                 "binary_cross_entropy_with_logits", "embedding"):
        _, arrays, build = next(case for case in NN_CASES if case[0] == name)
        leaves = [tg.tensor(a, requires_grad=True) for a in arrays]
        assert tg.gradcheck(lambda *ts, build=build: build(tg, *ts), leaves), name


def test_torch_level_nn_spellings_keep_torch_differences_from_f():
    x = tg.ones(4, 3, requires_grad=True)
    with pytest.raises(TypeError):
        tg.dropout(x, 0.5)  # torch.dropout's `train` is required
    assert tg.dropout(x, 0.5, False) is not None
    tg.manual_seed(0)
    dropped = tg.dropout(x, 0.5, True)
    assert set(np.unique(dropped.data)) <= {0.0, 2.0}
    with pytest.raises(TypeError):
        tg.max_pool1d(tg.ones(1, 2, 5), 2, return_indices=True)
    with pytest.raises(TypeError, match="reduction"):
        tg.kl_div(x, x, "sum")
    with pytest.raises(ValueError, match="reduction"):
        tg.kl_div(x, x, 3)
    with pytest.raises(TypeError):
        tg.batch_norm(tg.ones(2, 3), None, None, None, None, True)  # every argument is required
    with pytest.raises(TypeError):
        tg.poisson_nll_loss(x, x)
    values, indices = tg.adaptive_max_pool1d(tg.arange(10.0).reshape(1, 2, 5), 2)
    np.testing.assert_array_equal(indices.data, [[[2, 4], [2, 4]]])
    # batch_norm in training updates the running statistics passed to it, as torch.batch_norm does
    mean, var = tg.zeros(3), tg.ones(3)
    data = randn(4, 3).astype(np.float32)
    tmean, tvar = torch.zeros(3), torch.ones(3)
    tg.batch_norm(tg.tensor(data), None, None, mean, var, True, 0.1, 1e-5, False)
    torch.batch_norm(torch.tensor(data), None, None, tmean, tvar, True, 0.1, 1e-5, False)
    np.testing.assert_allclose(mean.data, tmean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(var.data, tvar.numpy(), rtol=1e-6)


def test_rrelu_in_training_draws_its_slopes_from_the_generator():
    x = tg.tensor(-np.abs(randn(200)) - 0.1, requires_grad=True)
    first = tg.rrelu(x, 0.1, 0.3, True, tg.Generator().manual_seed(5))
    again = tg.rrelu(x, 0.1, 0.3, True, tg.Generator().manual_seed(5))
    np.testing.assert_array_equal(first.data, again.data)
    slopes = first.data / x.data
    assert np.all((slopes >= 0.1) & (slopes <= 0.3)) and slopes.std() > 0.02
    first.sum().backward()
    np.testing.assert_allclose(x.grad, slopes, rtol=1e-12)
    positive = tg.tensor([1.0, 2.0])
    np.testing.assert_array_equal(tg.rrelu(positive, 0.1, 0.3, True, tg.Generator()).data, [1.0, 2.0])
    assert tg.rrelu(x, training=True).shape == x.shape


# --- on the stand-in for GPU arrays -----------------------------------------------------------------


def _seeded(fn):
    def run(m, *ts):
        m.manual_seed(0)
        return fn(m, *ts)
    return run


FOREIGN = [
    ("atleast_3d", [(3,), ()], lambda m, a, b: m.atleast_3d(a, b)),
    ("block_diag", [(2, 2), (3,), ()], lambda m, a, b, c: m.block_diag(a, b, c)),
    ("broadcast_tensors", [(3, 1), (2,)], lambda m, a, b: m.broadcast_tensors(a, b)),
    ("rsub", [(2, 3), (3,)], lambda m, a, b: m.rsub(a, b, alpha=2)),
    ("trapezoid x", [(2, 4), (4,)], lambda m, y, x: m.trapezoid(y, x)),
    ("trapezoid dx", [(2, 4)], lambda m, y: m.trapezoid(y, dx=0.5, dim=0)),
    ("trapezoid nd x", [(2, 4), (2, 4)], lambda m, y, x: m.trapezoid(y, x)),
    ("cumulative_trapezoid", [(2, 4), (4,)], lambda m, y, x: m.cumulative_trapezoid(y, x)),
    ("combinations", [(4,)], lambda m, a: m.combinations(a, 2)),
    ("poisson", [(3,)], _seeded(lambda m, a: m.poisson(a.abs() * 3))),
    ("binomial", [(3,), (3,)],
     _seeded(lambda m, a, b: m.binomial(a.abs().detach() * 5, b.sigmoid().detach()))),
    ("isin", [(3,), (2,)], lambda m, a, b: m.isin(a, m.cat([b, a[:1]]))),
    ("histogram", [(6,)], lambda m, a: m.histogram(a.detach(), 3)),
    ("histogram edges", [(6,)],
     lambda m, a: m.histogram(a.detach(), m.tensor([-1.0, 0.0, 2.0]).double(), weight=a.detach().abs())),
    ("histogramdd", [(6, 2)], lambda m, a: m.histogramdd(a.detach(), [2, 3], density=True)[:1]),
    ("unravel_index", [(3,)], lambda m, a: m.unravel_index(m.tensor([4, -1, 2]), (2, 3))),
    ("max_pool2d", [(1, 2, 4, 4)], lambda m, x: m.max_pool2d(x, 2, [], 0, 1, False)),
    ("adaptive_max_pool1d", [(1, 2, 6)], lambda m, x: m.adaptive_max_pool1d(x, 3)),
    ("batch_norm", [(4, 3), (3,), (3,)],
     lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True)),
    ("instance_norm", [(2, 3, 4)],
     lambda m, x: m.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False)),
    ("embedding", [(5, 3)], lambda m, w: m.embedding(w, m.tensor([0, 2, 2]), 2, True)),
    ("dropout", [(4, 3)], _seeded(lambda m, x: m.dropout(x, 0.3, True))),
    ("rrelu generator", [(4, 3)], lambda m, x: m.rrelu(x, 0.1, 0.3, True, m.Generator().manual_seed(1))),
    ("kl_div", [(3, 4), (3, 4)], lambda m, x, t: m.kl_div(x, t.abs(), 2)),
    ("cosine_embedding_loss", [(3, 4), (3, 4)],
     lambda m, x, y: m.cosine_embedding_loss(x, y, m.tensor([1.0, -1.0, 1.0], dtype=m.float64), 0.0, 0)),
    ("hinge_embedding_loss", [(3,)],
     lambda m, x: m.hinge_embedding_loss(x, m.tensor([1.0, -1.0, 1.0], dtype=m.double), 1.0, 2)),
    ("margin_ranking_loss", [(3,), (3,)],
     lambda m, x, y: m.margin_ranking_loss(x, y, m.tensor([1.0, -1.0, 1.0], dtype=m.float64), 0.1, 1)),
    ("triplet_margin_loss", [(3, 4), (3, 4), (3, 4)],
     lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, True, 0)),
    ("poisson_nll_loss", [(3,), (3,)], lambda m, x, t: m.poisson_nll_loss(x, t.abs(), True, True, 1e-8, 1)),
    ("binary_cross_entropy_with_logits", [(3, 4), (3, 4), (4,)],
     # (pos_weight is a constant: PyTorch refuses one that requires grad)
     lambda m, x, t, pw: m.binary_cross_entropy_with_logits(x, t.sigmoid(), None, pw.abs().detach(), 1)),
]


@pytest.mark.parametrize(("name", "shapes", "fn"), [pytest.param(*case, id=case[0]) for case in FOREIGN])
def test_torch_level_functions_keep_foreign_arrays(name, shapes, fn):
    rng = np.random.default_rng(len(name))
    arrays = [rng.standard_normal(shape) for shape in shapes]
    runs = run_twice(fn, arrays)
    check_same(runs)
    assert all(is_foreign(out.data) for out in runs[1][0])


def test_windows_and_scalar_tensor_follow_device_placement():
    for make in (lambda: tg.hann_window(4, device="cpu"), lambda: tg.scalar_tensor(2.0, device="cpu"),
                 lambda: tg.kaiser_window(4, False, 3.0, device="cpu")):
        t = make()
        assert t.device == tg.device("cpu") and type(t.data) is np.ndarray


def test_tensor_histogram_method_matches_torch():
    values = randn(20).astype(np.float32)
    ours = tg.tensor(values).histogram(5, range=(-1.0, 1.0), density=True)
    theirs = torch.tensor(values).histogram(5, range=(-1.0, 1.0), density=True)
    assert_same(ours.hist, theirs.hist, rtol=1e-5)
    assert_same(ours.bin_edges, theirs.bin_edges)
