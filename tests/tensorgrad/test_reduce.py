"""The reductions and scans of PyTorch: prod, var, std, var_mean, std_mean, norm, amax, amin, all,
any, count_nonzero, cumsum, cumprod, cummax, cummin, logcumsumexp, sort, argsort, topk, median.

Each differentiable op of the table runs on a contiguous input, on a transposed (non-contiguous)
leaf and on a stride-0 (expanded) view, over negative dims, dim tuples and `keepdim`. Oracle
one, always: float64 finite differences (`tg.gradcheck`). Oracle two, where PyTorch is
installed: the same expression in torch, comparing values, indices and gradients. Then ties
(stable sort, cummax's latest index, median's lower middle, gradients split among equals),
zeros (prod, cumprod, norm), nan, empty dims, integer and bool dtypes, return types and errors,
each against what PyTorch does.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import tensorgrad as tg

# --- the table --------------------------------------------------------------------------------


def _draw(rng: np.random.Generator, shape: tuple[int, ...], domain: str) -> np.ndarray:
    """Float64 samples of `shape`, away from each op's kinks and ties."""
    if domain == "real":
        values = rng.standard_normal(shape)
    elif domain == "distinct":  # no two elements, nor their absolute values, within 0.06; none near 0
        n = int(np.prod(shape))
        values = ((rng.permutation(n) - n // 2 + 0.3) * 0.1).reshape(shape)
    elif domain == "zeros":  # some exact zeros: prod and cumprod are polynomials, smooth there too
        values = rng.standard_normal(shape) * (rng.random(shape) > 0.3)
    elif domain == "nonzero":  # the kink of |x| (1-norm) stays 0.2 away
        values = rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 1.5, shape)
    else:
        raise ValueError(domain)
    return np.array(values, dtype=np.float64)


@dataclass(frozen=True)
class Case:
    """An expression written once for `m` = tensorgrad or torch; it returns a tensor, or a
    tuple whose first element carries the gradient and whose others are indices."""

    name: str
    fn: Callable
    shape: tuple[int, ...]
    domain: str = "real"
    # Which element wins among equal values is PyTorch's choice (undocumented) for these ops:
    # the expanded layout makes ties, so there the indices are checked by what they select.
    free_ties: bool = False
    dim: int = -1  # the dim a (values, indices) op reduces or sorts along


def _pair(out) -> tuple:
    return tuple(out)


CASES = [
    Case("prod()", lambda m, x: m.prod(x), (3, 4), "zeros"),
    Case("prod(1)", lambda m, x: x.prod(1), (3, 4), "zeros"),
    Case("prod(-1, keepdim)", lambda m, x: m.prod(x, -1, keepdim=True), (2, 3, 4), "zeros"),
    Case("prod(0)", lambda m, x: x.prod(0), (3, 4)),
    Case("var()", lambda m, x: m.var(x), (3, 4)),
    Case("var(1)", lambda m, x: x.var(1), (3, 4)),
    Case("var((0, -1), keepdim)", lambda m, x: m.var(x, (0, -1), keepdim=True), (2, 3, 4)),
    Case("var(correction=0)", lambda m, x: x.var(0, correction=0), (3, 4)),
    Case("var(unbiased=False)", lambda m, x: m.var(x, -2, unbiased=False), (3, 4)),
    Case("var(correction=2.5)", lambda m, x: x.var(dim=1, correction=2.5), (3, 5)),
    Case("std()", lambda m, x: m.std(x), (3, 4)),
    Case("std(-1, keepdim)", lambda m, x: x.std(-1, keepdim=True), (3, 4)),
    Case("std((0, 2))", lambda m, x: m.std(x, (0, 2)), (2, 3, 4)),
    Case("std(unbiased=False)", lambda m, x: m.std(x, 1, False), (3, 4)),
    Case("var_mean(1)", lambda m, x: (lambda v, mu: v * 2 + mu)(*m.var_mean(x, 1)), (3, 4)),
    Case("std_mean()", lambda m, x: (lambda s, mu: s * mu)(*m.std_mean(x, correction=0)), (3, 4)),
    Case("norm()", lambda m, x: m.norm(x), (3, 4)),
    Case("norm(fro, dim)", lambda m, x: x.norm("fro", dim=(0, 1)), (2, 3, 4)),
    Case("norm(1, -1)", lambda m, x: m.norm(x, 1, -1), (3, 4), "nonzero"),
    Case("norm(3, 0, keepdim)", lambda m, x: x.norm(3, 0, keepdim=True), (3, 4)),
    Case("norm(0.5)", lambda m, x: m.norm(x, 0.5), (3, 4), "nonzero"),
    Case("norm(-1.5, 1)", lambda m, x: m.norm(x, -1.5, 1), (3, 4), "nonzero"),
    Case("norm(inf, 1)", lambda m, x: m.norm(x, float("inf"), 1), (3, 4), "distinct"),
    Case("norm(-inf, (0, 1))", lambda m, x: x.norm(float("-inf"), (0, 1)), (3, 4), "distinct"),
    Case("norm(0) * x", lambda m, x: m.norm(x, 0, 1, keepdim=True) * x, (3, 4), "nonzero"),
    Case("norm(nuc)", lambda m, x: m.norm(x, "nuc"), (3, 4)),
    Case("norm(nuc, (0, 2))", lambda m, x: x.norm("nuc", (0, 2)), (3, 2, 4)),
    Case("amax(1)", lambda m, x: m.amax(x, 1), (3, 4), "distinct"),
    Case("amin((0, -1), keepdim)", lambda m, x: x.amin((0, -1), keepdim=True), (2, 3, 4), "distinct"),
    Case("cumsum(1)", lambda m, x: m.cumsum(x, 1), (3, 4)),
    Case("cumsum(-3)", lambda m, x: x.cumsum(-3), (2, 3, 4)),
    Case("cumprod(1)", lambda m, x: m.cumprod(x, 1), (3, 4), "zeros"),
    Case("cumprod(0)", lambda m, x: x.cumprod(0), (4, 3)),
    Case("logcumsumexp(1)", lambda m, x: m.logcumsumexp(x * 30, 1), (3, 4)),
    Case("logcumsumexp(-2)", lambda m, x: x.logcumsumexp(-2), (3, 4)),
    Case("cummax(1)", lambda m, x: _pair(m.cummax(x, 1)), (3, 4), "distinct"),
    Case("cummin(0)", lambda m, x: _pair(x.cummin(0)), (3, 4), "distinct"),
    Case("sort()", lambda m, x: _pair(m.sort(x)), (3, 4), "distinct", free_ties=True),
    Case("sort(0, descending)", lambda m, x: _pair(x.sort(0, descending=True)), (3, 4), "distinct",
         free_ties=True, dim=0),
    Case("sort(stable)", lambda m, x: _pair(m.sort(x, dim=1, stable=True)), (3, 4), "distinct"),
    Case("sort(-3, descending, stable)", lambda m, x: _pair(x.sort(dim=-3, descending=True, stable=True)),
         (2, 3, 4), "distinct"),
    Case("topk(2)", lambda m, x: _pair(m.topk(x, 2)), (3, 4), "distinct", free_ties=True),
    Case("topk(3, 0, smallest)", lambda m, x: _pair(x.topk(3, 0, largest=False)), (4, 3), "distinct",
         free_ties=True, dim=0),
    Case("median()", lambda m, x: m.median(x), (3, 4), "distinct"),
    Case("median(1)", lambda m, x: _pair(m.median(x, 1)), (3, 4), "distinct", free_ties=True),
    Case("median(0, keepdim)", lambda m, x: _pair(x.median(0, keepdim=True)), (4, 3), "distinct",
         free_ties=True, dim=0),
]
LAYOUTS = ("contiguous", "transposed", "expanded")
PARAMS = [pytest.param(case, layout, id=f"{case.name}-{layout}") for case in CASES for layout in LAYOUTS]


def _leaf_array(case: Case, layout: str) -> tuple[np.ndarray, tuple[int, ...] | None]:
    """The leaf's array laid out as `layout` asks, and the shape to expand it to (or None)."""
    rng = np.random.default_rng(zlib.crc32(f"{case.name}|{layout}".encode()))
    if layout == "transposed":  # the same shape, stored with the dimensions reversed
        return np.ascontiguousarray(_draw(rng, case.shape[::-1], case.domain)).transpose(), None
    if layout == "expanded":  # stride 0 along the first dimension: its rows are equal
        return _draw(rng, (1,) + case.shape[1:], case.domain), case.shape
    return _draw(rng, case.shape, case.domain), None


def _run(m, case: Case, leaf, expand: tuple[int, ...] | None):
    seen = leaf if expand is None else leaf.expand(*expand)
    if m is not tg and expand is not None:
        # PyTorch's median reads garbage along a stride-0 dim: the oracle gets a contiguous copy.
        seen = seen.contiguous()
    out = case.fn(m, seen)
    return out if isinstance(out, tuple) else (out,)


def test_table_covers_every_name():
    names = " ".join(case.name for case in CASES)
    for name in ["prod", "var", "std", "var_mean", "std_mean", "norm", "amax", "amin", "cumsum", "cumprod",
                 "logcumsumexp", "cummax", "cummin", "sort", "topk", "median"]:
        assert name + "(" in names, name


@pytest.mark.parametrize(("case", "layout"), PARAMS)
def test_gradient_matches_finite_differences(case: Case, layout: str):
    array, expand = _leaf_array(case, layout)
    leaf = tg.from_numpy(array).requires_grad_()
    if layout == "transposed":
        assert not leaf.is_contiguous()
    out = _run(tg, case, leaf, expand)[0]
    assert out.dtype == tg.float64 and out.requires_grad
    assert tg.gradcheck(lambda t: _run(tg, case, t, expand)[0], [leaf])


@pytest.mark.parametrize(("case", "layout"), PARAMS)
def test_matches_torch(case: Case, layout: str):
    torch = pytest.importorskip("torch")
    array, expand = _leaf_array(case, layout)
    ours = tg.from_numpy(array.copy(order="K")).requires_grad_()
    theirs = torch.from_numpy(array.copy(order="K")).requires_grad_()
    out, expected = _run(tg, case, ours, expand), _run(torch, case, theirs, expand)
    assert out[0].shape == tuple(expected[0].shape)
    np.testing.assert_allclose(out[0].data, expected[0].detach().numpy(), rtol=1e-12, atol=1e-14)
    for index, torch_index in zip(out[1:], expected[1:], strict=True):
        assert index.dtype == tg.int64
        if case.free_ties and layout == "expanded":  # equal rows: any index of an equal value will do
            continue
        np.testing.assert_array_equal(index.data, torch_index.numpy())

    weights = np.random.default_rng(3).standard_normal(out[0].shape)
    out[0].backward(weights)
    expected[0].backward(torch.from_numpy(weights))
    torch_grad = np.zeros(array.shape) if theirs.grad is None else theirs.grad.numpy()
    np.testing.assert_allclose(ours.grad, torch_grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if c.free_ties], ids=lambda c: c.name)
def test_indices_select_the_values_on_ties(case: Case):
    array, expand = _leaf_array(case, "expanded")
    x = tg.from_numpy(array).expand(*expand)
    values, indices = _run(tg, case, x, None)
    dim = case.dim
    np.testing.assert_array_equal(np.take_along_axis(x.data, _kept(indices, x, dim), axis=dim),
                                  _kept(values, x, dim))


def _kept(t, x, dim: int) -> np.ndarray:
    """An index or value tensor with the reduced dim kept, to index `x` along `dim`."""
    return t.data if t.ndim == x.ndim else np.expand_dims(t.data, dim)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_float32_stays_float32_as_in_torch(case: Case):
    torch = pytest.importorskip("torch")
    values = _draw(np.random.default_rng(5), case.shape, case.domain).astype(np.float32)
    x, y = tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, expected = _run(tg, case, x, None)[0], _run(torch, case, y, None)[0]
    assert out.dtype == tg.float32
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=2e-5, atol=1e-5)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad, y.grad.numpy(), rtol=1e-4, atol=1e-5)


# --- ties: PyTorch's documented choices, or equal values and gradient sums ------------------------

TIES = np.array([[2.0, 1.0, 2.0, 3.0, 1.0, 3.0, 2.0], [5.0, 5.0, 5.0, 4.0, 4.0, 6.0, 6.0]])


def _torch_pair(torch, values):
    return tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)


@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_of_ties_gives_torch_indices(descending: bool):
    torch = pytest.importorskip("torch")
    x, y = _torch_pair(torch, TIES)
    ours, theirs = x.sort(dim=1, descending=descending, stable=True), y.sort(dim=1, descending=descending,
                                                                            stable=True)
    np.testing.assert_array_equal(ours.values.data, theirs.values.detach().numpy())
    np.testing.assert_array_equal(ours.indices.data, theirs.indices.numpy())
    np.testing.assert_array_equal(tg.argsort(x, dim=1, descending=descending, stable=True).data,
                                  torch.argsort(y, dim=1, descending=descending, stable=True).numpy())
    weights = np.arange(TIES.size, dtype=np.float64).reshape(TIES.shape)
    ours.values.backward(weights)
    theirs.values.backward(torch.from_numpy(weights))
    np.testing.assert_array_equal(x.grad, y.grad.numpy())


def _tie_group_sums(values: np.ndarray, grad: np.ndarray) -> list:
    """Per row, the gradient summed over each group of equal values (where ties may route anywhere)."""
    return [[grad[row][values[row] == v].sum() for v in np.unique(values[row])] for row in range(len(values))]


@pytest.mark.parametrize("op", ["sort", "sort(descending)", "topk(3)", "topk(4, smallest)", "median(1)"])
def test_ties_without_a_documented_order_give_equal_values_and_gradient_sums(op: str):
    torch = pytest.importorskip("torch")
    call = {"sort": lambda m, t: m.sort(t, 1), "sort(descending)": lambda m, t: m.sort(t, 1, True),
            "topk(3)": lambda m, t: m.topk(t, 3),
            "topk(4, smallest)": lambda m, t: m.topk(t, 4, largest=False),
            "median(1)": lambda m, t: m.median(t, 1)}[op]
    x, y = _torch_pair(torch, TIES)
    ours, theirs = call(tg, x), call(torch, y)
    np.testing.assert_array_equal(ours.values.data, theirs.values.detach().numpy())
    kept = ours.indices.data if ours.indices.ndim == 2 else ours.indices.data[:, None]
    selected = np.take_along_axis(TIES, kept, 1).reshape(ours.values.shape)
    np.testing.assert_array_equal(selected, ours.values.data)
    weights = np.random.default_rng(0).standard_normal(ours.values.shape)
    ours.values.backward(weights)
    theirs.values.backward(torch.from_numpy(weights))
    np.testing.assert_allclose(_tie_group_sums(TIES, x.grad), _tie_group_sums(TIES, y.grad.numpy()))


def test_median_is_the_lower_middle_and_splits_its_gradient_among_equals():
    torch = pytest.importorskip("torch")
    values = np.array([[4.0, 1.0, 3.0, 2.0], [2.0, 7.0, 2.0, 9.0]])  # even counts: the lower middle
    x, y = _torch_pair(torch, values)
    np.testing.assert_array_equal(x.median(1).values.data, [2.0, 2.0])
    np.testing.assert_array_equal(x.median(1).values.data, y.median(1).values.detach().numpy())
    ours, theirs = tg.median(x), torch.median(y)
    assert ours.item() == theirs.item() == 2.0
    ours.backward()
    theirs.backward()
    np.testing.assert_array_equal(x.grad, y.grad.numpy())  # a third to each of the three 2.0s
    assert x.grad.sum() == 1.0 and np.count_nonzero(x.grad) == 3


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_and_cummin_take_the_latest_of_ties_as_torch(op: str):
    torch = pytest.importorskip("torch")
    x, y = _torch_pair(torch, TIES)
    ours, theirs = getattr(x, op)(1), getattr(y, op)(1)
    np.testing.assert_array_equal(ours.values.data, theirs.values.detach().numpy())
    np.testing.assert_array_equal(ours.indices.data, theirs.indices.numpy())
    weights = np.random.default_rng(1).standard_normal(TIES.shape)
    ours.values.backward(weights)
    theirs.values.backward(torch.from_numpy(weights))
    np.testing.assert_allclose(x.grad, y.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [lambda m, t: m.amax(t, 1), lambda m, t: m.amin(t),
                                  lambda m, t: m.amax(t, ()), lambda m, t: m.norm(t, float("inf"), 1),
                                  lambda m, t: m.norm(t, float("-inf"))],
                         ids=["amax(1)", "amin()", "amax(())", "norm(inf)", "norm(-inf)"])
def test_extremes_split_the_gradient_evenly_among_ties_as_torch(call):
    torch = pytest.importorskip("torch")
    values = TIES * np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0])  # ties of |x| with both signs
    x, y = _torch_pair(torch, values)
    ours, theirs = call(tg, x), call(torch, y)
    np.testing.assert_array_equal(ours.data, theirs.detach().numpy())
    weights = np.random.default_rng(2).standard_normal(ours.shape)
    ours.backward(weights)
    theirs.backward(torch.from_numpy(weights))
    np.testing.assert_allclose(x.grad, y.grad.numpy(), rtol=1e-12)


# --- zeros: exact gradients where a division would give 0 / 0 ----------------------------------------

ZEROS = [np.array([2.0, 0.0, 3.0, -1.5]), np.array([0.0, 2.0, 0.0, 3.0]), np.array([0.0, 0.0, 0.0, 0.0]),
         np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]])]


@pytest.mark.parametrize("values", ZEROS, ids=["one zero", "two zeros", "all zeros", "rows"])
@pytest.mark.parametrize("call", [lambda m, t: m.prod(t), lambda m, t: m.prod(t, -1),
                                  lambda m, t: m.cumprod(t, -1), lambda m, t: m.cumprod(t, 0),
                                  lambda m, t: m.norm(t),
                                  lambda m, t: m.norm(t, 1, -1), lambda m, t: m.norm(t, 3),
                                  lambda m, t: m.norm(t, 0.5), lambda m, t: m.norm(t, float("inf"), -1),
                                  lambda m, t: m.std(t, -1)],
                         ids=["prod", "prod(-1)", "cumprod(-1)", "cumprod(0)", "norm", "norm(1)", "norm(3)",
                              "norm(0.5)", "norm(inf)", "std"])
def test_zeros_give_torch_gradients(values: np.ndarray, call):
    torch = pytest.importorskip("torch")
    x, y = _torch_pair(torch, values)
    ours, theirs = call(tg, x), call(torch, y)
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)
    weights = np.random.default_rng(4).standard_normal(ours.shape)
    ours.backward(weights)
    theirs.backward(torch.from_numpy(weights))
    assert np.isfinite(x.grad).all()
    np.testing.assert_allclose(x.grad, y.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_prod_gradient_at_a_zero_is_the_product_of_the_others():
    x = tg.tensor([2.0, 0.0, 3.0, -1.5], dtype=tg.float64, requires_grad=True)
    x.prod().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 2.0 * 3.0 * -1.5, 0.0, 0.0])
    assert tg.gradcheck(lambda t: t.cumprod(0), [x], elementwise=True)


def test_norm_and_std_at_zero_have_gradient_zero():
    x = tg.zeros(3, dtype=tg.float64, requires_grad=True)
    (x.norm() + x.std() + x.norm(1) + x.norm(float("inf"))).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_logcumsumexp_gradient_stays_finite_where_exp_overflows():
    torch = pytest.importorskip("torch")
    values = np.array([[800.0, -800.0, 790.0, 1000.0], [-1e4, -1e4 + 1, -1e4 + 2, -1e4 + 3]])
    x, y = _torch_pair(torch, values)
    ours, theirs = x.logcumsumexp(1), y.logcumsumexp(1)
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)
    weights = np.array([[1.0, -2.0, 0.5, -1.0], [0.0, 1.0, -1.0, 2.0]])
    ours.backward(weights)
    theirs.backward(torch.from_numpy(weights))
    assert np.isfinite(x.grad).all()
    np.testing.assert_allclose(x.grad, y.grad.numpy(), rtol=1e-9, atol=1e-12)


# --- nan, as PyTorch: sorted as the largest, propagated by the reductions ---------------------------

NAN = np.array([[1.0, np.nan, -2.0, 3.0, np.nan], [0.5, 2.0, -1.0, 4.0, 3.0], [np.nan, 1.0, 1.0, 0.0, -3.0]])

NAN_CALLS = {
    "sort(stable)": lambda m, t: m.sort(t, dim=1, stable=True),
    "sort(descending, stable)": lambda m, t: m.sort(t, dim=1, descending=True, stable=True),
    "argsort(stable)": lambda m, t: m.argsort(t, dim=1, stable=True),
    "topk(2)": lambda m, t: m.topk(t, 2),
    "topk(2, smallest)": lambda m, t: m.topk(t, 2, largest=False),
    "median(1)": lambda m, t: m.median(t, 1),
    "median()": lambda m, t: m.median(t),
    "cummax": lambda m, t: m.cummax(t, 1),
    "cummin": lambda m, t: m.cummin(t, 1),
    "amax": lambda m, t: m.amax(t, 1),
    "prod": lambda m, t: m.prod(t, 1),
    "cumsum": lambda m, t: m.cumsum(t, 1),
    "logcumsumexp": lambda m, t: m.logcumsumexp(t, 1),
    "var": lambda m, t: m.var(t, 1),
    "norm": lambda m, t: m.norm(t, dim=1),
    "norm(inf)": lambda m, t: m.norm(t, float("inf"), 1),
    "all": lambda m, t: m.all(t, 1),
    "count_nonzero": lambda m, t: m.count_nonzero(t, 1),
}


@pytest.mark.parametrize("name", NAN_CALLS)
def test_nan_as_torch(name: str):
    torch = pytest.importorskip("torch")
    ours, theirs = NAN_CALLS[name](tg, tg.tensor(NAN)), NAN_CALLS[name](torch, torch.tensor(NAN))
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.numpy().dtype
        np.testing.assert_allclose(a.data, b.numpy(), rtol=1e-12, atol=0)  # nan equals nan here


# --- empty dims and 0-d tensors ------------------------------------------------------------------

EMPTY_CALLS = {
    "prod(1)": lambda m, t: m.prod(t, 1),
    "prod()": lambda m, t: m.prod(t),
    "var(1)": lambda m, t: m.var(t, 1),
    "std(0)": lambda m, t: m.std(t, 0),
    "norm(dim=1)": lambda m, t: m.norm(t, dim=1),
    "norm()": lambda m, t: m.norm(t),
    "all(1)": lambda m, t: m.all(t, 1),
    "any(1)": lambda m, t: m.any(t, 1),
    "count_nonzero(1)": lambda m, t: m.count_nonzero(t, 1),
    "cumsum(1)": lambda m, t: m.cumsum(t, 1),
    "cumprod(0)": lambda m, t: m.cumprod(t, 0),
    "cummax(1)": lambda m, t: m.cummax(t, 1)[1],
    "logcumsumexp(1)": lambda m, t: m.logcumsumexp(t, 1),
    "sort(1)": lambda m, t: m.sort(t, 1)[0],
    "argsort(0)": lambda m, t: m.argsort(t, 0),
    "topk(0, 1)": lambda m, t: m.topk(t, 0, 1)[1],
    "median(0)": lambda m, t: m.median(t, 0)[0],
    "median()": lambda m, t: m.median(t),
}


@pytest.mark.parametrize("name", EMPTY_CALLS)
def test_empty_dims_as_torch(name: str):
    torch = pytest.importorskip("torch")
    values = np.zeros((3, 0))
    expected = EMPTY_CALLS[name](torch, torch.tensor(values))
    out = EMPTY_CALLS[name](tg, tg.tensor(values))
    assert out.shape == tuple(expected.shape) and out.dtype == expected.numpy().dtype
    np.testing.assert_array_equal(out.data, expected.numpy())


@pytest.mark.parametrize("call", [lambda m, t: m.median(t, 1), lambda m, t: m.amax(t, 1),
                                  lambda m, t: m.norm(t, float("inf"), 1),
                                  lambda m, t: m.norm(t, float("-inf"))],
                         ids=["median(1)", "amax(1)", "norm(inf, 1)", "norm(-inf)"])
def test_selecting_from_an_empty_dim_is_an_error_as_torch(call):
    torch = pytest.importorskip("torch")
    with pytest.raises((IndexError, RuntimeError)) as expected:
        call(torch, torch.zeros(3, 0))
    with pytest.raises(type(expected.value)):
        call(tg, tg.zeros(3, 0))


ZERO_D_CALLS = {
    "sort": lambda m, t: m.sort(t), "topk(1)": lambda m, t: m.topk(t, 1),
    "cummax": lambda m, t: m.cummax(t, 0), "cumsum": lambda m, t: m.cumsum(t, -1),
    "cumprod": lambda m, t: m.cumprod(t, 0), "median(0)": lambda m, t: m.median(t, 0),
    "median()": lambda m, t: m.median(t), "prod(0)": lambda m, t: m.prod(t, 0),
    "logcumsumexp": lambda m, t: m.logcumsumexp(t, 0), "norm": lambda m, t: m.norm(t),
    "argsort": lambda m, t: m.argsort(t), "all": lambda m, t: m.all(t, 0),
}


@pytest.mark.parametrize("name", ZERO_D_CALLS)
def test_zero_d_tensors_as_torch(name: str):
    torch = pytest.importorskip("torch")
    x, y = tg.tensor(-1.5, dtype=tg.float64, requires_grad=True), torch.tensor(-1.5, requires_grad=True,
                                                                              dtype=torch.float64)
    ours, theirs = ZERO_D_CALLS[name](tg, x), ZERO_D_CALLS[name](torch, y)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == tuple(b.shape) == ()
        np.testing.assert_array_equal(a.data, b.detach().numpy())
    if ours[0].requires_grad:
        ours[0].backward()
        theirs[0].backward()
        np.testing.assert_array_equal(x.grad, y.grad.numpy())


# --- integer and bool dtypes: PyTorch's result dtype, or PyTorch's refusal -------------------------

INT_A = np.array([[-7, -3, -1, 0, 1, 2], [5, 9, -8, 4, 3, -2]])
INT_DTYPES = ["int64", "int32", "int16", "uint8", "bool"]
INT_CALLS = {
    "prod()": lambda m, t: m.prod(t), "prod(1)": lambda m, t: t.prod(1), "sum()": lambda m, t: m.sum(t),
    "sum(1)": lambda m, t: t.sum(1), "cumsum": lambda m, t: m.cumsum(t, 1),
    "cumprod": lambda m, t: t.cumprod(1),
    "cummax": lambda m, t: m.cummax(t, 1), "cummin": lambda m, t: t.cummin(1),
    "sort(stable)": lambda m, t: m.sort(t, dim=1, stable=True),
    "sort(descending, stable)": lambda m, t: t.sort(dim=1, descending=True, stable=True),
    "argsort(stable)": lambda m, t: m.argsort(t, dim=1, stable=True), "topk": lambda m, t: m.topk(t, 2, 1)[0],
    "median()": lambda m, t: m.median(t), "median(1)": lambda m, t: t.median(1)[0],
    "amax": lambda m, t: m.amax(t, 1), "amin": lambda m, t: t.amin(), "all": lambda m, t: m.all(t, 1),
    "any": lambda m, t: t.any(), "all()": lambda m, t: t.all(),
    "count_nonzero": lambda m, t: m.count_nonzero(t, 1),
    "var": lambda m, t: m.var(t), "std": lambda m, t: t.std(1), "norm": lambda m, t: m.norm(t),
    "logcumsumexp": lambda m, t: m.logcumsumexp(t, 1), "std_mean": lambda m, t: m.std_mean(t),
    "var_mean": lambda m, t: m.var_mean(t, 1),
}


def _as(values: np.ndarray, dtype: str) -> np.ndarray:
    return (values % 2 == 1) if dtype == "bool" else values.astype(dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", INT_CALLS)
def test_integer_and_bool_tensors_as_torch(name: str, dtype: str):
    torch = pytest.importorskip("torch")
    values = _as(INT_A, dtype)
    try:
        expected = INT_CALLS[name](torch, torch.tensor(values))
    except (RuntimeError, TypeError) as error:  # NotImplementedError is a RuntimeError
        with pytest.raises(type(error)):
            INT_CALLS[name](tg, tg.tensor(values))
        return
    out = INT_CALLS[name](tg, tg.tensor(values))
    out, expected = (out, expected) if isinstance(out, tuple) else ((out,), (expected,))
    for a, b in zip(out, expected, strict=True):
        assert a.dtype == b.numpy().dtype, (a.dtype, b.numpy().dtype)
        np.testing.assert_array_equal(a.data, b.numpy())
        assert not a.requires_grad


@pytest.mark.parametrize("dtype", [tg.float64, "float64"])
def test_dtype_argument_of_prod_cumsum_and_norm(dtype):
    x = tg.tensor([[1.5, 2.0], [3.0, -0.5]], requires_grad=True)
    outs = (x.prod(dtype=dtype), x.cumsum(0, dtype=dtype), x.cumprod(1, dtype=dtype), x.norm(dtype=dtype))
    for out in outs:
        assert out.dtype == tg.float64
        out.sum().backward()
    assert x.grad.dtype == np.float32
    assert tg.tensor([1, 2, 3]).cumsum(0, dtype=tg.float32).dtype == tg.float32


def test_no_gradient_through_all_any_count_nonzero_and_indices():
    x = tg.tensor([[1.0, 0.0], [2.0, 3.0]], requires_grad=True)
    for out in (x.all(), x.any(1), x.count_nonzero(), x.argsort(), x.sort().indices, x.topk(1).indices,
                x.cummax(0).indices, x.median(1).indices):
        assert not out.requires_grad and out.dtype in (tg.bool_, tg.int64)


# --- return types and signatures -------------------------------------------------------------------

RETURNS = {
    "sort": (lambda m, t: m.sort(t, 1), ("values", "indices")),
    "topk": (lambda m, t: m.topk(t, 2), ("values", "indices")),
    "cummax": (lambda m, t: m.cummax(t, 0), ("values", "indices")),
    "cummin": (lambda m, t: m.cummin(t, 1), ("values", "indices")),
    "median": (lambda m, t: m.median(t, 1), ("values", "indices")),
    "std_mean": (lambda m, t: m.std_mean(t, 1), ("std", "mean")),
    "var_mean": (lambda m, t: m.var_mean(t, 1), ("var", "mean")),
}


@pytest.mark.parametrize("name", RETURNS)
def test_named_tuple_returns(name: str):
    call, fields = RETURNS[name]
    x = tg.tensor([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]], requires_grad=True)
    out = call(tg, x)
    assert isinstance(out, tuple) and type(out).__name__ == name and out._fields == fields
    first, second = out
    assert first is out[0] is getattr(out, fields[0]) and second is getattr(out, fields[1])
    torch = pytest.importorskip("torch")
    expected = call(torch, torch.tensor(x.data))
    for a, b in zip(out, expected, strict=True):
        np.testing.assert_allclose(a.data, b.numpy(), rtol=1e-6)


def test_tensor_methods_and_tg_functions_where_torch_has_them():
    torch = pytest.importorskip("torch")
    for name in ["prod", "std", "var", "std_mean", "var_mean", "norm", "amax", "amin", "all", "any",
                 "count_nonzero", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "sort", "argsort",
                 "topk", "median"]:
        assert hasattr(tg, name) and name in tg.__all__, name
        assert hasattr(tg.Tensor, name) == hasattr(torch.Tensor, name), name


def test_unbiased_and_correction_spellings_agree_with_torch():
    torch = pytest.importorskip("torch")
    values = np.array([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]])
    x, y = tg.tensor(values), torch.tensor(values)
    pairs = [(x.var(True), y.var(True)), (x.var(False), y.var(False)), (x.std(1, False), y.std(1, False)),
             (tg.var(x, 1, True, True), torch.var(y, 1, True, True)),
             (x.std(0, correction=0), y.std(0, correction=0)),
             (x.var(dim=(0, 1), keepdim=True), y.var(dim=(0, 1), keepdim=True)), (x.std(()), y.std(dim=()))]
    for ours, theirs in pairs:
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-12)


# --- errors: PyTorch's exception types, messages naming the op --------------------------------------

DIM_CALLS = {
    "prod": lambda t: t.prod(2), "var": lambda t: t.var(-3), "std": lambda t: tg.std(t, (0, 2)),
    "var_mean": lambda t: tg.var_mean(t, 5), "std_mean": lambda t: tg.std_mean(t, -3),
    "norm": lambda t: t.norm(dim=2),
    "norm(nuc)": lambda t: t.norm("nuc", dim=(0, 2)),
    "all": lambda t: t.all(2), "any": lambda t: t.any(-3), "count_nonzero": lambda t: t.count_nonzero(2),
    "cumsum": lambda t: t.cumsum(2), "cumprod": lambda t: t.cumprod(-3), "cummax": lambda t: t.cummax(2),
    "cummin": lambda t: t.cummin(-3), "logcumsumexp": lambda t: t.logcumsumexp(2),
    "sort": lambda t: t.sort(2),
    "argsort": lambda t: t.argsort(-3), "topk": lambda t: t.topk(1, 2), "median": lambda t: t.median(2),
    "amax": lambda t: t.amax(2),
}


@pytest.mark.parametrize("name", DIM_CALLS)
def test_dim_out_of_range_is_an_index_error_naming_the_op(name: str):
    with pytest.raises(IndexError, match=name.split("(")[0] + r"\(\).*out of range"):
        DIM_CALLS[name](tg.ones(2, 3))


def test_clear_errors_of_the_kinds_torch_raises():
    x = tg.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"topk\(\).*k out of range.*k=4.*\(2, 3\)"):
        x.topk(4)
    with pytest.raises(RuntimeError, match="topk"):
        x.topk(-1)
    with pytest.raises(TypeError, match="topk.*'k' must be an int"):
        x.topk(1.5)
    with pytest.raises(TypeError, match=r"prod\(\).*'dim' must be an int.*tuple"):
        x.prod((0, 1))
    with pytest.raises(TypeError, match=r"cumsum\(\).*'dim' must be an int.*float"):
        x.cumsum(1.0)
    with pytest.raises(RuntimeError, match=r"var\(\).*floating point.*int64"):
        tg.tensor([1, 2, 3]).var()
    with pytest.raises(RuntimeError, match=r"std_mean\(\).*floating point"):
        tg.std_mean(tg.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match=r"norm\(\).*floating point.*int64"):
        tg.tensor([1, 2]).norm()
    with pytest.raises(RuntimeError, match="logcumsumexp"):
        tg.tensor([1, 2]).logcumsumexp(0)
    with pytest.raises(RuntimeError, match=r"var\(\).*dim 1 appears multiple times"):
        x.var((1, 1))
    with pytest.raises(TypeError, match="unbiased.*correction"):
        x.var(1, True, correction=0)
    with pytest.raises(RuntimeError, match="Frobenius.*two dims"):
        tg.ones(2, 2, 2).norm("fro", dim=(0, 1, 2))
    with pytest.raises(RuntimeError, match="nuclear.*2-D"):
        tg.ones(2, 2, 2).norm("nuc")
    with pytest.raises(ValueError, match="norm.*p must be"):
        x.norm("max")
    with pytest.raises(RuntimeError, match=r"norm\(\).*inf norm of an empty"):
        tg.zeros(0).norm(float("inf"))


def test_errors_have_torch_exception_types():
    torch = pytest.importorskip("torch")
    ones, ints, bools = np.ones((2, 3)), np.ones((2, 3), dtype=np.int64), np.ones((2, 3), dtype=bool)
    cases = [(lambda m, t: t.topk(4), ones), (lambda m, t: t.prod((0, 1)), ones),
             (lambda m, t: t.cumsum(1.0), ones), (lambda m, t: m.var(t), ints),
             (lambda m, t: m.norm(t), ints), (lambda m, t: t.logcumsumexp(0), ints),
             (lambda m, t: t.sort(2), ones), (lambda m, t: m.norm(t, "fro", (0, 1, 2)), ones),
             (lambda m, t: t.topk(1), bools), (lambda m, t: t.median(), bools),
             (lambda m, t: t.median(0), bools), (lambda m, t: t.std(), bools)]
    for call, values in cases:
        with pytest.raises(Exception) as expected:
            call(torch, torch.tensor(values))
        with pytest.raises(type(expected.value)):
            call(tg, tg.tensor(values))
