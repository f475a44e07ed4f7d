"""Numerics: stable softmax/log_softmax/logsumexp/sigmoid, and how ties share the gradient.

Logits of +-1e4 in float32 overflow a naive exp; the results and gradients must stay finite
and correct (and raise no numpy warnings). `max`/`min` route the gradient to the extreme and,
as their docstrings say, split it evenly among elements that tie; `maximum`/`minimum` split
ties evenly too, as PyTorch does.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorgrad as tg

BIG = np.array([[1e4, 0.0, -1e4], [1e4, 1e4 - 1.0, 1e4], [-1e4, -1e4 + 2.0, -1e4]], dtype=np.float32)


def _softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture
def no_numpy_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", divide="raise", invalid="raise"):  # underflow to 0 is fine
            yield


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_softmax_family_stays_finite_for_logits_of_1e4(dim, sign, no_numpy_warnings):
    logits = BIG * np.float32(sign)
    shifted = logits.astype(np.float64) - logits.max(dim, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(dim, keepdims=True))
    weights = np.arange(9, dtype=np.float32).reshape(3, 3) - 4
    for op, expected in [
        ("softmax", _softmax64(logits.astype(np.float64), dim)),
        ("log_softmax", shifted - log_sum),  # finite everywhere: -2e4, never log(0)
        ("logsumexp", (log_sum + logits.max(dim, keepdims=True)).squeeze(dim)),
    ]:
        x = tg.tensor(logits, requires_grad=True)
        out = getattr(x, op)(dim)
        assert out.dtype == tg.float32
        assert np.isfinite(out.data).all(), op
        np.testing.assert_allclose(out.data, expected, rtol=1e-5, atol=1e-6, err_msg=op)
        out.backward(weights if out.ndim == 2 else weights[0])
        assert x.grad.dtype == np.float32
        assert np.isfinite(x.grad).all(), op


def test_softmax_family_with_1e4_matches_torch():
    torch = pytest.importorskip("torch")
    for op in ("softmax", "log_softmax", "logsumexp"):
        for logits in (BIG, -BIG):
            ours, theirs = tg.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
            a, b = getattr(ours, op)(1), getattr(theirs, op)(1)
            np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-5, atol=1e-5)
            weights = np.linspace(-1, 1, a.data.size, dtype=np.float32).reshape(a.shape)
            a.backward(weights)
            b.backward(torch.from_numpy(weights))
            np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_logsumexp_and_softmax_with_minus_infinity(no_numpy_warnings):
    x = tg.tensor([[0.0, -np.inf], [-np.inf, -np.inf]])
    np.testing.assert_array_equal(x.logsumexp(1).data, [0.0, -np.inf])
    np.testing.assert_array_equal(x[:1].softmax(1).data, [[1.0, 0.0]])


def test_sigmoid_and_tanh_of_large_inputs(no_numpy_warnings):
    x = tg.tensor([-1e4, -100.0, 0.0, 100.0, 1e4], requires_grad=True)
    s = x.sigmoid()
    np.testing.assert_allclose(s.data, [0.0, 0.0, 0.5, 1.0, 1.0], atol=1e-30)
    s.sum().backward()
    np.testing.assert_allclose(x.grad, [0.0, 0.0, 0.25, 0.0, 0.0], atol=1e-30)
    y = tg.tensor([-1e4, 1e4], requires_grad=True)
    t = y.tanh()
    np.testing.assert_array_equal(t.data, [-1.0, 1.0])
    t.sum().backward()
    np.testing.assert_array_equal(y.grad, [0.0, 0.0])


def test_max_without_dim_and_amax_split_the_gradient_evenly_on_ties_as_documented():
    assert "evenly" in tg.max.__doc__ and "evenly" in tg.amin.__doc__
    x = tg.tensor([1.0, 3.0, 3.0, 2.0, 3.0], requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad, [0, 1 / 3, 1 / 3, 0, 1 / 3])
    z = tg.tensor([[4.0, 4.0], [0.0, 4.0]], requires_grad=True)
    z.amax(dim=0, keepdim=True).backward(np.array([[2.0, 3.0]]))
    np.testing.assert_allclose(z.grad, [[2.0, 1.5], [0.0, 1.5]])


def test_max_with_dim_returns_values_and_indices_and_routes_the_gradient_to_the_index():
    z = tg.tensor([[4.0, 4.0], [0.0, 4.0]], requires_grad=True)
    values, indices = z.max(dim=0, keepdim=True)
    out = z.max(0, True)
    assert out.values is not values and out[1].tolist() == indices.tolist() == [[0, 0]]
    assert repr(out).startswith("max(values=") and indices.dtype == tg.int64
    values.backward(np.array([[2.0, 3.0]]))
    np.testing.assert_array_equal(z.grad, [[2.0, 3.0], [0.0, 0.0]])  # ties: the first index wins
    y = tg.tensor([[1.0, 1.0, 0.0], [2.0, 0.0, 5.0]], requires_grad=True)
    smallest = tg.min(y, dim=1)
    assert smallest.indices.tolist() == [2, 1]
    smallest.values.backward(np.array([6.0, 10.0]))
    np.testing.assert_allclose(y.grad, [[0, 0, 6.0], [0, 10.0, 0]])


def test_max_of_two_tensors_is_the_elementwise_maximum():
    a, b = tg.tensor([1.0, 5.0]), tg.tensor([3.0, 2.0])
    assert tg.max(a, b).tolist() == [3.0, 5.0] and tg.min(a, b).tolist() == [1.0, 2.0]


def test_max_without_ties_sends_everything_to_the_winner():
    x = tg.tensor([[0.5, -2.0, 7.0], [3.0, 2.0, 1.0]], requires_grad=True)
    out = x.max(dim=-1).values
    np.testing.assert_array_equal(out.data, [7.0, 3.0])
    out.backward(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(x.grad, [[0, 0, 1.0], [2.0, 0, 0]])


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_and_min_with_ties_match_torch(op):
    torch = pytest.importorskip("torch")
    values = np.array([[2.0, 5.0, 5.0, 1.0], [3.0, 3.0, 3.0, 3.0], [0.0, -1.0, 0.0, 4.0]])
    for dim in (None, 0, 1, (0, 1), -1):
        for keepdim in (False, True):
            ours, theirs = tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
            if isinstance(dim, int):  # (values, indices): the gradient follows the index
                a, b = getattr(ours, op)(dim, keepdim), getattr(theirs, op)(dim, keepdim)
                np.testing.assert_array_equal(a.indices.numpy(), b.indices.numpy())
                a, b = a.values, b.values
            else:  # amax / amin: ties share it evenly
                a = getattr(ours, "a" + op)(dim=() if dim is None else dim, keepdim=keepdim)
                b = getattr(theirs, "a" + op)(dim=() if dim is None else dim, keepdim=keepdim)
            weights = np.arange(1.0, a.data.size + 1).reshape(a.shape)
            a.backward(weights)
            b.backward(torch.from_numpy(weights))
            np.testing.assert_allclose(a.data, b.detach().numpy())
            np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), err_msg=f"{op} dim={dim}")


def test_maximum_and_minimum_split_ties_evenly():
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tg.tensor([1.0, 5.0, 0.0], requires_grad=True)
    tg.maximum(a, b).backward(np.array([2.0, 2.0, 2.0]))
    np.testing.assert_array_equal(a.grad, [1.0, 0.0, 2.0])
    np.testing.assert_array_equal(b.grad, [1.0, 2.0, 0.0])
    a.grad = b.grad = None
    tg.minimum(a, b).backward(np.array([2.0, 2.0, 2.0]))
    np.testing.assert_array_equal(a.grad, [1.0, 2.0, 0.0])
    np.testing.assert_array_equal(b.grad, [1.0, 0.0, 2.0])


def test_maximum_with_broadcast_ties_matches_torch():
    torch = pytest.importorskip("torch")
    a_values = np.array([[1.0, 2.0, 3.0], [3.0, 3.0, 0.0]])
    b_values = np.array([3.0, 2.0, 0.0])
    for op in ("maximum", "minimum"):
        a, b = tg.tensor(a_values, requires_grad=True), tg.tensor(b_values, requires_grad=True)
        ta, tb = torch.tensor(a_values, requires_grad=True), torch.tensor(b_values, requires_grad=True)
        getattr(tg, op)(a, b).sum().backward()
        getattr(torch, op)(ta, tb).sum().backward()
        np.testing.assert_array_equal(a.grad, ta.grad.numpy())
        np.testing.assert_array_equal(b.grad, tb.grad.numpy())


def test_relu_abs_clamp_at_the_kink_follow_torch():
    """At exactly 0 (or a clamp bound) the subgradient is a choice; PyTorch's is the one to copy."""
    torch = pytest.importorskip("torch")
    values = np.array([-1.0, 0.0, 0.5, 1.0])
    for expr in (lambda x: x.relu(), lambda x: x.abs(), lambda x: x.clamp(min=0.0, max=0.5),
                 lambda x: x.sqrt()):
        ours, theirs = tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
        with np.errstate(all="ignore"):
            expr(ours).sum().backward()
        expr(theirs).sum().backward()
        np.testing.assert_array_equal(ours.grad[1:], theirs.grad.numpy()[1:])
        assert np.array_equal(ours.grad[:1], theirs.grad.numpy()[:1], equal_nan=True)
