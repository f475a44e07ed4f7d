"""PyTorch's everyday names beyond the design's lists: special values, dtypes and in-place forms.

The ops themselves (`atan2`, `fmax`, `xlogy`, `sinc`, `logit`, `mm`, `select`, `diff`, ...) sit in
the op tables of `test_elementwise.py` and `test_shape_breadth.py`, checked against PyTorch and
finite differences on smooth inputs. This file checks what those tables cannot: values and
gradients at nan, inf and 0, the result dtypes of integer inputs and the errors, and every
in-place form (`exp_`, `clamp_`, `masked_fill_`, ...) inside a graph, each against PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")
WITH_NANS = [[NAN, 1.0, NAN, 2.0, 3.0], [1.0, NAN, NAN, 2.0, -1.0]]


def _both(build, *arrays, grad: bool = True):
    """`build(m, *leaves)` in both libraries on float64 leaves; backward of the sum where it can.

    Returns (ours, theirs) as (output, [input gradients]) pairs of numpy arrays.
    """
    runs = []
    for m, make in ((tg, lambda a: tg.tensor(a, dtype=tg.float64, requires_grad=grad)),
                    (torch, lambda a: torch.tensor(a, dtype=torch.float64, requires_grad=grad))):
        leaves = [make(a) for a in arrays]
        out = build(m, *leaves)
        if grad:
            out.sum().backward()
        data = out.data if m is tg else out.detach().numpy()
        grads = [np.asarray(leaf.grad) if m is tg else leaf.grad.numpy() for leaf in leaves] if grad else []
        runs.append((np.asarray(data), grads))
    return runs


SPECIAL = {
    "xlogy at x = 0 and at nan": (lambda m, x, y: m.xlogy(x, y), [[0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 0.0],
                                                                  [0.0, INF, -1.0, 2.0, 0.0, NAN, NAN]]),
    "fmax ignores nan": (lambda m, a, b: m.fmax(a, b), WITH_NANS),
    "fmin ignores nan": (lambda m, a, b: m.fmin(a, b), WITH_NANS),
    "nan_to_num defaults": (lambda m, x: m.nan_to_num(x), [[NAN, INF, -INF, 1.5]]),
    "nan_to_num given": (lambda m, x: x.nan_to_num(nan=-1.0, posinf=9.0, neginf=-9.0),
                         [[NAN, INF, -INF, 1.5]]),
    "sinc at 0": (lambda m, x: m.sinc(x), [[0.0, 1.0, -2.5, 1e-9]]),
    "logit outside [0, 1]": (lambda m, x: m.logit(x), [[-0.5, 0.0, 0.25, 1.0, 1.5]]),
    "logit(eps) clamps": (lambda m, x: m.logit(x, eps=0.1), [[0.05, 0.1, 0.5, 0.95, 2.0]]),
    "atan2 at the origin": (lambda m, a, b: m.atan2(a, b), [[0.0, 0.0, -0.0, 1.0], [0.0, -1.0, -1.0, 0.0]]),
    "hypot of infinities": (lambda m, a, b: m.hypot(a, b), [[INF, 3.0, NAN], [NAN, 4.0, 1.0]]),
    "nansum of all nan": (lambda m, x: m.nansum(x, 1), [[[NAN, NAN], [1.0, NAN]]]),
    "nanmean of all nan": (lambda m, x: x.nanmean(1), [[[NAN, NAN], [1.0, NAN]]]),
    "float_power of negatives": (lambda m, a, b: m.float_power(a, b), [[-2.0, 2.0, 0.0], [3.0, -0.5, 2.0]]),
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_values_and_their_gradients_as_torch(name):
    build, arrays = SPECIAL[name]
    (ours, our_grads), (theirs, their_grads) = _both(build, *arrays)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, equal_nan=True)
    for mine, torchs in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(mine, torchs, rtol=1e-12, equal_nan=True)


DTYPES = {
    "atan2 of ints is float32": lambda m: m.atan2(m.tensor([1, 2]), m.tensor([2, 2])),
    "xlogy of ints is float32": lambda m: m.xlogy(m.tensor([0, 2]), m.tensor([0, 3])),
    "xlogy of a number and a tensor": lambda m: m.xlogy(2, m.tensor([0.5, 4.0])),
    "fmax of ints stays int": lambda m: m.fmax(m.tensor([1, 5], dtype=m.int32), m.tensor([3, 2])),
    "float_power of ints is float64": lambda m: m.float_power(m.tensor([2, 3]), 2),
    "float_power of float32 is float64": lambda m: m.tensor([2.0, 3.0]).float_power(m.tensor([0.5, 2.0])),
    "deg2rad of ints is float32": lambda m: m.deg2rad(m.tensor([90, 180])),
    "sinc of ints is float32": lambda m: m.sinc(m.tensor([0, 1, 2])),
    "logit of ints is float32": lambda m: m.logit(m.tensor([0, 1])),
    "nan_to_num of ints": lambda m: m.nan_to_num(m.tensor([1, 2], dtype=m.int32)),
    "nansum of ints is int64": lambda m: m.nansum(m.tensor([1, 2], dtype=m.int32)),
    "trace of int32 is int64": lambda m: m.trace(m.tensor([[1, 2], [3, 4]], dtype=m.int32)),
    "diff of bools is xor": lambda m: m.diff(m.tensor([True, False, False, True])),
    "diff of ints": lambda m: m.tensor([1, 4, 9, 16], dtype=m.int32).diff(n=2),
    "diff of nothing": lambda m: m.tensor([1.0]).diff(),
    "outer of int and float": lambda m: m.outer(m.tensor([1, 2]), m.tensor([0.5, 1.5, 2.5])),
    "dot of ints": lambda m: m.dot(m.tensor([1, 2, 3]), m.tensor([4, 5, 6])),
    "mm of int64": lambda m: m.mm(m.ones(2, 3, dtype=m.int64), m.ones(3, 2, dtype=m.int64)),
    "clamp_min of ints": lambda m: m.clamp_min(m.tensor([1, 5, -3]), 0),
    "positive": lambda m: m.positive(m.tensor([1.5, -2.0])),
    "sgn": lambda m: m.sgn(m.tensor([-2.0, 0.0, 3.0])),
    "t of a 0-d tensor": lambda m: m.tensor(2.0).t(),
}


@pytest.mark.parametrize("name", list(DTYPES))
def test_values_and_dtypes_of_integer_and_edge_inputs_as_torch(name):
    ours, theirs = DTYPES[name](tg), DTYPES[name](torch)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), name
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True)


ERRORS = {
    "hypot of ints": lambda m: m.hypot(m.tensor([3]), m.tensor([4])),
    "logaddexp2 of ints": lambda m: m.logaddexp2(m.tensor([3]), m.tensor([4])),
    "positive of bools": lambda m: m.positive(m.tensor([True])),
    "nanmean of ints": lambda m: m.nanmean(m.tensor([1, 2])),
    "diff of a 0-d tensor": lambda m: m.tensor(1.0).diff(),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    with pytest.raises(RuntimeError):  # NotImplementedError for some: a RuntimeError too
        ERRORS[name](torch)
    with pytest.raises(RuntimeError, match=name.split()[0]):  # our message names the op
        ERRORS[name](tg)


# In-place forms inside a graph: y = x * 1 is changed in place, then backward through it.
IN_PLACE = {
    "exp_": (lambda y: y.exp_(), "real"),
    "log_": (lambda y: y.log_(), "positive"),
    "sqrt_": (lambda y: y.sqrt_(), "positive"),
    "square_": (lambda y: y.square_(), "real"),
    "pow_": (lambda y: y.pow_(3), "real"),
    "abs_": (lambda y: y.abs_(), "real"),
    "neg_": (lambda y: y.neg_(), "real"),
    "reciprocal_": (lambda y: y.reciprocal_(), "positive"),
    "sin_": (lambda y: y.sin_(), "real"),
    "cos_": (lambda y: y.cos_(), "real"),
    "tanh_": (lambda y: y.tanh_(), "real"),
    "sigmoid_": (lambda y: y.sigmoid_(), "real"),
    "relu_": (lambda y: y.relu_(), "real"),
    "floor_": (lambda y: y.floor_(), "real"),
    "ceil_": (lambda y: y.ceil_(), "real"),
    "round_": (lambda y: y.round_(), "real"),
    "round_(decimals)": (lambda y: y.round_(decimals=1), "real"),
    "trunc_": (lambda y: y.trunc_(), "real"),
    "sign_": (lambda y: y.sign_(), "real"),
    "clamp_": (lambda y: y.clamp_(-0.5, 0.5), "real"),
    "clamp_min_": (lambda y: y.clamp_min_(0.1), "real"),
    "clamp_max_": (lambda y: y.clamp_max_(0.1), "real"),
    "fmod_": (lambda y: y.fmod_(0.7), "real"),
    "remainder_": (lambda y: y.remainder_(0.7), "real"),
    "lerp_": (lambda y: y.lerp_(y.detach() * 0 + 2.0, 0.25), "real"),
    "nan_to_num_": (lambda y: y.log_().nan_to_num_(posinf=5.0), "real"),
    "masked_fill_": (lambda y: y.masked_fill_(y.detach() > 0, -1.0), "real"),
}


@pytest.mark.parametrize("name", list(IN_PLACE))
def test_in_place_forms_change_the_tensor_and_backprop_as_torch(name):
    change, domain = IN_PLACE[name]
    rng = np.random.default_rng(3)
    values = rng.uniform(0.2, 2.0, (3, 4)) if domain == "positive" else rng.standard_normal((3, 4))
    results = []
    for m in (tg, torch):
        x = m.tensor(values, requires_grad=True)
        y = x * 1.0
        out = change(y)
        assert out is y  # the tensor itself, changed
        (y * m.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy() if m is torch else x.grad))
    (ours, our_grad), (theirs, their_grad) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12, equal_nan=True)


def test_scatter_in_place_forms_as_torch():
    index = [[0, 1, 2, 0], [2, 0, 0, 1]]
    for build in (lambda m, y, s: y.scatter_(0, m.tensor(index), s),
                  lambda m, y, s: y.scatter_add_(0, m.tensor(index), s),
                  lambda m, y, s: y.scatter_(1, m.tensor(index), 2.5)):
        results = []
        for m in (tg, torch):
            x = m.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
            src = m.tensor(np.linspace(-1, 1, 8).reshape(2, 4), requires_grad=True)
            y = x * 2.0
            build(m, y, src)
            (y * y).sum().backward()
            if m is torch:
                src_grad = None if src.grad is None else src.grad.numpy()
                results.append([y.detach().numpy(), x.grad.numpy(), src_grad])
            else:
                results.append([y.data, x.grad, src.grad])
        for mine, torchs in zip(*results, strict=True):
            assert (mine is None) == (torchs is None)
            if mine is not None:
                np.testing.assert_allclose(mine, torchs, rtol=1e-12)


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = tg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="exp_"):
        x.exp_()
    with tg.no_grad():
        x.exp_()
    np.testing.assert_allclose(x.data, np.e)


def test_info_methods_as_torch():
    for dtype in ("float16", "float32", "float64", "int8", "int64", "bool"):
        ours = tg.zeros(2, 3, dtype=getattr(tg, dtype))
        theirs = torch.zeros(2, 3, dtype=getattr(torch, dtype))
        assert ours.element_size() == theirs.element_size()
        assert ours.is_floating_point() == theirs.is_floating_point()
        assert ours.is_complex() == theirs.is_complex() is False
        assert ours.nelement() == theirs.nelement() == 6


def test_comparison_methods_as_torch():
    a, b = [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        ours = getattr(tg.tensor(a), name)(tg.tensor(b))
        theirs = getattr(torch.tensor(a), name)(torch.tensor(b))
        assert ours.dtype == tg.bool and ours.tolist() == theirs.tolist()
        assert getattr(tg.tensor(a), name)(2.0).tolist() == getattr(torch.tensor(a), name)(2.0).tolist()


COUNTING = {
    "unique": lambda m: m.unique(m.tensor([3, 1, 2, 3, 1])),
    "unique with inverse and counts": lambda m: m.unique(m.tensor([[3, 1], [1, 2]]), return_inverse=True,
                                                         return_counts=True),
    "unique rows": lambda m: m.tensor([[1, 3], [2, 3], [1, 3]]).unique(dim=0, return_inverse=True),
    "unique floats with nan last": lambda m: m.unique(m.tensor([2.0, -1.0, 2.0, 0.5])),
    "unique_consecutive": lambda m: m.unique_consecutive(m.tensor([1, 1, 2, 2, 3, 1, 1]), return_inverse=True,
                                                         return_counts=True),
    "unique_consecutive rows": lambda m: m.tensor([[1, 1], [1, 1], [2, 0], [1, 1]]).unique_consecutive(
        dim=0, return_counts=True),
    "bincount": lambda m: m.bincount(m.tensor([0, 2, 2, 5]), minlength=8),
    "bincount weights": lambda m: m.tensor([0, 2, 2, 5]).bincount(m.tensor([0.5, 1.0, 1.0, 2.0])),
    "bincount int weights": lambda m: m.bincount(m.tensor([1, 1, 0]), m.tensor([2, 3, 4])),
    "histc": lambda m: m.histc(m.tensor([1.0, 2.0, 1.0, 4.0]), bins=4),
    "histc range": lambda m: m.tensor([1.0, 2.0, 1.0, 4.0, -1.0]).histc(bins=3, min=0, max=3),
    "mode": lambda m: m.mode(m.tensor([[1, 3, 3, 1, 2], [4, 4, 2, 2, 5]])),
    "mode keepdim": lambda m: m.tensor([[2.0, 1.0], [2.0, 1.0], [1.0, 1.0]]).mode(0, keepdim=True),
}


@pytest.mark.parametrize("name", list(COUNTING))
def test_counting_ops_match_torch(name):
    ours, theirs = COUNTING[name](tg), COUNTING[name](torch)
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    assert len(ours) == len(theirs)
    for mine, torchs in zip(ours, theirs, strict=True):
        assert str(mine.dtype) == str(torchs.dtype).removeprefix("torch.")
        assert mine.tolist() == torchs.tolist()


def test_mode_routes_the_gradient_to_its_index_as_torch():
    values = [[1.0, 3.0, 3.0, 1.0, 2.0], [4.0, 4.0, 2.0, 2.0, 5.0]]
    grads = []
    for m in (tg, torch):
        x = m.tensor(values, requires_grad=True)
        (x.mode(1).values * m.tensor([2.0, 3.0])).sum().backward()
        grads.append(np.asarray(x.grad if m is tg else x.grad.numpy()).tolist())
    assert grads[0] == grads[1]


def test_bincount_refuses_negative_and_non_integer_input():
    for bad in (tg.tensor([1, -1]), tg.tensor([1.0]), tg.tensor([[1]])):
        with pytest.raises(RuntimeError, match="bincount"):
            tg.bincount(bad)
