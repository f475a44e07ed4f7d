"""Reductions and scans side by side with PyTorch: values, dtypes, named tuples, errors and gradients,
at the corners where they once differed (dim=(), integer and empty inputs, nan and ties)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")
ROUNDED = np.array([[1., 3., 3.], [2., -2., 2.], [5., 0., 5.]])
NANS = np.array([[1., NAN, 3.], [2., 0., 2.], [NAN, NAN, 1.]])
INFS = np.array([[1., INF, -INF], [2., 2., -INF], [INF, 3., 1.]])
HALF = (np.random.default_rng(0).standard_normal((64, 33)) * 3).astype(np.float16)
INTS = np.array([[3, -1, 2], [0, 4, 4]], dtype=np.int32)


def _pair(a: np.ndarray, grad: bool) -> tuple:
    t = torch.from_numpy(a.copy())
    x = tg.tensor(a.copy())
    if grad:
        t.requires_grad_(True)
        x.requires_grad = True
    return x, t


def _same(ours, theirs, where: str = "") -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tg.Tensor), where
        assert tuple(ours.shape) == tuple(theirs.shape), where
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), where
        np.testing.assert_allclose(np.asarray(ours.data, dtype=np.float64),
                                   theirs.detach().numpy().astype(np.float64), rtol=1e-6, atol=1e-9,
                                   equal_nan=True, err_msg=where)
        return
    if type(theirs) is not tuple:  # a named tuple of torch.return_types (std_mean's is a plain tuple)
        assert type(ours).__name__ == type(theirs).__name__, where
    assert len(ours) == len(theirs), where
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        _same(a, b, f"{where}[{i}]")


# (name, input, call with the module, tg or torch, as `m`)
CASES = {
    "sum dim=() is every dim": (ROUNDED, lambda m, x: m.sum(x, dim=())),
    "sum dim=[] keepdim": (ROUNDED, lambda m, x: x.sum(dim=[], keepdim=True)),
    "mean dim=()": (ROUNDED, lambda m, x: m.mean(x, ())),
    "nansum dim=()": (NANS, lambda m, x: m.nansum(x, ())),
    "nanmean dim=()": (NANS, lambda m, x: m.nanmean(x, (), keepdim=True)),
    "count_nonzero dim=()": (INTS, lambda m, x: m.count_nonzero(x, ())),
    "logsumexp dim=() keepdim": (ROUNDED, lambda m, x: m.logsumexp(x, (), keepdim=True)),
    "sum of int32 is int64": (INTS, lambda m, x: x.sum(-1)),
    "sum of bool is int64": (INTS > 0, lambda m, x: m.sum(x, 0)),
    "prod dtype=int32 stays int32": (INTS, lambda m, x: m.prod(x, dtype=m.int32)),
    "prod dim dtype=int32": (INTS, lambda m, x: m.prod(x, 1, dtype=m.int32)),
    "cumprod dtype=int32": (INTS, lambda m, x: m.cumprod(x, 0, dtype=m.int32)),
    "prod of bool is int64": (INTS > 0, lambda m, x: m.prod(x)),
    "softmax of float16 in float32": (HALF, lambda m, x: m.softmax(x, 1)),
    "log_softmax of float16": (HALF, lambda m, x: m.log_softmax(x, 0)),
    "softmax of an empty int tensor": (np.zeros((2, 0), np.int64), lambda m, x: m.softmax(x, 0)),
    "nanmedian of ints is a nanmedian tuple": (INTS, lambda m, x: m.nanmedian(x, 1)),
    "median of an empty int tensor": (np.zeros(0, np.int64), lambda m, x: m.median(x)),
    "unique_consecutive of a 0-d tensor": (np.array(3.),
                                           lambda m, x: m.unique_consecutive(x, return_inverse=True)),
    "aminmax over a dim beside an empty one": (np.zeros((2, 0, 3)), lambda m, x: m.aminmax(x, dim=0)),
    "max with nan": (NANS, lambda m, x: (m.max(x), m.max(x, 1), m.min(x, 0, keepdim=True))),
    "argmax with nan": (NANS, lambda m, x: (m.argmax(x), m.argmax(x, 0), m.argmin(x, -1, keepdim=True))),
    "sort with nan and infinities": (np.where(np.isnan(NANS), INF, NANS) * NANS,
                                     lambda m, x: m.sort(x, dim=1, descending=True, stable=True)),
    "median with nan": (NANS, lambda m, x: (m.median(x), m.median(x, 0), m.nanmedian(x, 1))),
    "ties: max(dim) and median(dim) take the first": (ROUNDED, lambda m, x: (m.max(x, 1), m.median(x, 0))),
    "ties: mode": (np.array([[2., 1., 2., 1.], [3., 3., 0., 0.]]), lambda m, x: m.mode(x, 1)),
    "cummax and cummin with ties": (ROUNDED, lambda m, x: (m.cummax(x, 1), m.cummin(x, 0))),
    "0-d with dim=0 and -1": (np.array(2.5), lambda m, x: (m.max(x, 0), m.sum(x, -1), m.cumsum(x, 0),
                                                            m.sort(x, -1), m.argmax(x, 0, keepdim=True))),
    "var and std with correction, dim tuples": (ROUNDED, lambda m, x: (m.var(x, (0, -1), correction=0),
                                                                       m.std(x, -2, keepdim=True),
                                                                       m.var_mean(x, 1, unbiased=False))),
    "norms": (ROUNDED, lambda m, x: (m.norm(x, INF, 0), m.norm(x, -INF), m.norm(x, 0), m.norm(x, "nuc"),
                                     m.norm(x, 3, (0, 1), keepdim=True))),
    "topk and kthvalue without ties": (np.array([[4., 1., 7., 2.], [0., 9., 3., 5.]]),
                                       lambda m, x: (m.topk(x, 2), m.topk(x, 3, -1, largest=False),
                                                     m.kthvalue(x, 2, 1))),
}


@pytest.mark.parametrize("name", CASES)
def test_results_as_torch(name: str):
    data, call = CASES[name]
    x, t = _pair(data, grad=False)
    _same(call(tg, x), call(torch, t), name)


# Gradients at the conventions' corners: ties split or routed to indices, zeros, nan, infinities.
GRADS = {
    "max() with nan: the nans share it": (NANS, lambda m, x: m.max(x)),
    "min() with nan": (NANS, lambda m, x: m.min(x)),
    "amax ties split evenly": (ROUNDED, lambda m, x: m.amax(x, 1)),
    "max(dim) to indices": (ROUNDED, lambda m, x: m.max(x, 1).values),
    "median() ties": (ROUNDED, lambda m, x: m.median(x)),
    "prod with nan spreads it": (NANS, lambda m, x: m.prod(x, 1)),
    "prod with infinities": (INFS, lambda m, x: m.prod(x)),
    "prod with a zero": (np.array([[0., 3., 2.], [0., 0., 2.]]), lambda m, x: m.prod(x, 1)),
    "norm 1 with nan: 0 there": (NANS, lambda m, x: m.norm(x, 1)),
    "norm inf with nan": (NANS, lambda m, x: m.norm(x, INF, 0)),
    "norm inf ties": (ROUNDED, lambda m, x: m.norm(x, INF, 1)),
    "norm 2 at zero": (np.zeros((2, 3)), lambda m, x: m.norm(x, dim=1)),
    "std at zero spread": (np.ones((2, 3)), lambda m, x: m.std(x, 1)),
    "sum dim=()": (ROUNDED, lambda m, x: m.sum(x, ())),
    "cumprod with a zero": (np.array([2., 0., 3., 4.]), lambda m, x: m.cumprod(x, 0)),
    "logcumsumexp": (ROUNDED, lambda m, x: m.logcumsumexp(x, 0)),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients_as_torch(name: str):
    data, call = GRADS[name]
    x, t = _pair(data, grad=True)
    ours, theirs = call(tg, x), call(torch, t)
    weights = np.random.default_rng(0).uniform(0.5, 1.5, tuple(theirs.shape))
    (theirs * torch.from_numpy(weights)).sum().backward()
    (ours * tg.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad, t.grad.numpy(), rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=name)


ERRORS = {
    "softmax of ints": (INTS, lambda m, x: m.softmax(x, 0)),
    "log_softmax of bool": (INTS > 0, lambda m, x: x.log_softmax(-1)),
    "argmax of empty without dim": (np.zeros(0), lambda m, x: m.argmax(x)),
    "kthvalue over an empty dim": (np.zeros((2, 0)), lambda m, x: m.kthvalue(x, 1, 1)),
    "aminmax over an empty dim": (np.zeros((2, 0)), lambda m, x: m.aminmax(x, dim=1)),
    "max over a zero-size dim": (np.zeros((2, 0)), lambda m, x: m.max(x, 1)),
    "max of empty": (np.zeros((2, 0)), lambda m, x: m.max(x)),
    "mean of ints": (INTS, lambda m, x: m.mean(x)),
    "histc of ints": (INTS, lambda m, x: m.histc(x)),
    "histc bins=0": (ROUNDED, lambda m, x: m.histc(x, bins=0)),
    "bincount of floats": (np.array([1., 2.]), lambda m, x: m.bincount(x)),
    "bincount minlength<0": (np.array([1, 2]), lambda m, x: m.bincount(x, minlength=-1)),
    "unique with an unselected empty dim": (np.zeros((2, 0, 3)), lambda m, x: m.unique(x, dim=0)),
    "unique_consecutive likewise": (np.zeros((2, 0, 3)), lambda m, x: m.unique_consecutive(x, dim=2)),
    "norm narrowing dtype": (ROUNDED, lambda m, x: m.norm(x, dtype=m.float32)),
    "norm bad p": (ROUNDED, lambda m, x: m.norm(x, p="abc")),
    "var_mean of ints before the dim": (INTS, lambda m, x: m.var_mean(x, 5)),
    "logcumsumexp dim before dtype": (INTS, lambda m, x: m.logcumsumexp(x, 5)),
    "median dim before dtype": (INTS > 0, lambda m, x: m.median(x, 5)),
    "nanmedian dim before dtype": (INTS > 0, lambda m, x: m.nanmedian(x, 5)),
    "sum dim repeated": (ROUNDED, lambda m, x: m.sum(x, (1, -1))),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_torch(name: str):
    data, call = ERRORS[name]
    x, t = _pair(data, grad=False)
    with pytest.raises(Exception) as theirs:
        call(torch, t)
    with pytest.raises(theirs.type):
        call(tg, x)


def test_mean_of_nothing_and_sum_of_nothing():
    assert tg.zeros(0, 3).sum().item() == 0.0
    assert tg.tensor(np.zeros((0, 2), np.int32)).sum(0).tolist() == [0, 0]
    assert math.isnan(tg.zeros(0).mean().item())


@pytest.mark.parametrize("shape", [(), (5,), (2, 5), (2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_functional_softmax_without_dim_takes_pytorchs_implicit_dim_and_warns(name, shape):
    x = np.random.default_rng(3).standard_normal(shape)
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        ours = getattr(tg.nn.functional, name)(tg.tensor(x))
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
