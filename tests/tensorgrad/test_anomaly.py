"""Anomaly detection (`tg.autograd.detect_anomaly`, `set_detect_anomaly`): the backward pass names
the first op whose backward made a nan, as PyTorch's does, and otherwise changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import autograd

torch = pytest.importorskip("torch")


def _sqrt_at_zero(m):
    """sqrt(0) * 0: the forward is fine, sqrt's backward makes 0 * inf = nan."""
    a = m.tensor([0.0, 1.0], requires_grad=True)
    return a, (a.sqrt() * 0).sum()


def test_detect_anomaly_names_the_op_whose_backward_made_nan():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"), autograd.detect_anomaly():
        _, loss = _sqrt_at_zero(tg)
        with pytest.raises(RuntimeError, match=r"Function 'sqrt' returned nan values in its 0th output"):
            loss.backward()
    with pytest.warns(UserWarning), torch.autograd.detect_anomaly():  # PyTorch's words, for comparison
        _, loss = _sqrt_at_zero(torch)
        with pytest.raises(RuntimeError, match=r"'SqrtBackward0' returned nan values in its 0th output"):
            loss.backward()
    assert not autograd.is_anomaly_enabled()


def test_the_input_index_is_the_one_that_got_nan():
    def xlogy_at_zero(m):  # x log y at x = y = 0: 0; d/dx = log(y) where x != 0, else 0; d/dy = x / y: nan
        x = m.tensor([0.0], requires_grad=True)
        y = m.tensor([0.0], requires_grad=True)
        return m.xlogy(x, y).sum()
    with autograd.set_detect_anomaly(True), pytest.raises(RuntimeError, match="'xlogy' returned nan values "
                                                                              "in its 1th output"):
        xlogy_at_zero(tg).backward()
    with torch.autograd.set_detect_anomaly(True), pytest.raises(RuntimeError, match="in its 1th output"):
        xlogy_at_zero(torch).backward()


def test_without_anomaly_detection_the_nan_reaches_the_leaf_silently():
    a, loss = _sqrt_at_zero(tg)
    loss.backward()
    assert np.isnan(a.grad[0]) and a.grad[1] == 0
    with autograd.set_detect_anomaly(True, check_nan=False):
        a, loss = _sqrt_at_zero(tg)
        loss.backward()
        assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
    assert np.isnan(a.grad[0])


def test_a_leaf_that_held_nan_before_the_pass_is_not_blamed():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    w.grad = np.array([np.nan, 0.0], dtype=np.float32)  # from an earlier pass
    with autograd.set_detect_anomaly(True):
        (w * 3).sum().backward()
    assert np.isnan(w.grad[0]) and w.grad[1] == 3


def test_anomaly_mode_gives_the_same_gradients_and_runs_hooks():
    def run():
        w = tg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        seen = []
        w.register_hook(lambda g: seen.append(g.numpy().copy()))
        h = (w * 2).tanh()
        h.register_hook(lambda g: g * 10)
        h.sum().backward()
        return w.grad, seen
    plain, plain_seen = run()
    with autograd.set_detect_anomaly(True):
        checked, checked_seen = run()
    np.testing.assert_array_equal(plain, checked)
    np.testing.assert_array_equal(plain_seen[0], checked_seen[0])


def test_set_detect_anomaly_restores_the_previous_mode():
    assert not autograd.is_anomaly_enabled()
    with autograd.set_detect_anomaly(True):
        assert autograd.is_anomaly_enabled()
        with autograd.set_detect_anomaly(False):
            assert not autograd.is_anomaly_enabled()
        assert autograd.is_anomaly_enabled()
    assert not autograd.is_anomaly_enabled()
    autograd.set_anomaly_enabled(True)
    try:
        assert tg.is_anomaly_enabled()
    finally:
        autograd.set_anomaly_enabled(False)


def test_pytorchs_autograd_names_are_there():
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "gradcheck", "grad",
                 "backward", "Function", "detect_anomaly", "set_detect_anomaly"):
        assert hasattr(tg.autograd, name) and hasattr(torch.autograd, name), name
    with tg.autograd.no_grad():
        assert not tg.is_grad_enabled()
