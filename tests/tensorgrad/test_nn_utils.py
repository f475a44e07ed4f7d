"""`nn.utils.clip_grad_norm_` and `clip_grad_value_` against PyTorch (on a GPU too, where there is one)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import placed_on

import tensorgrad as tg
from tensorgrad import nn
from tensorgrad.device import to_numpy

RNG = np.random.default_rng(5)
GRADS = [RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((2, 2, 2))]


def _with_grads(make, dtype, device=None):
    if device is not None:  # tensorgrad's tensors on `device`, their gradients set as tensors there
        params = [tg.zeros(g.shape, dtype=dtype, device=device) for g in GRADS]
        for p, g in zip(params, GRADS):
            p.grad = tg.tensor(g.astype(dtype), device=device)
        return params
    params = [make(np.zeros_like(g, dtype=dtype)) for g in GRADS]
    for p, g in zip(params, GRADS):
        p.grad = make(g.astype(dtype)) if make is not tg.tensor else g.astype(dtype)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip_grad_norm_matches_pytorch(norm_type, max_norm, dtype, device):
    torch = pytest.importorskip("torch")
    ours = _with_grads(tg.tensor, dtype, device)
    theirs = _with_grads(torch.tensor, dtype)
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, tg.Tensor) and total.shape == () and total.dtype == dtype
    assert total.device == placed_on(device)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(total.item(), expected.item(), rtol=rtol)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(to_numpy(p.grad), q.grad.numpy(), rtol=rtol)
    clipped = np.linalg.norm(np.concatenate([to_numpy(p.grad).ravel() for p in ours]), ord=norm_type)
    assert clipped == pytest.approx(min(max_norm, total.item()), rel=1e-4)


def test_clip_grad_norm_takes_one_tensor_a_generator_or_a_module_and_skips_missing_grads():
    layer = nn.Linear(3, 2)
    layer(tg.ones(1, 3)).sum().backward()
    layer.bias.grad = None
    weight_grad = layer.weight.grad.copy()
    total = nn.utils.clip_grad_norm_(layer.parameters(), max_norm=1e-3)
    assert total.item() == pytest.approx(np.linalg.norm(weight_grad), rel=1e-6)
    assert np.linalg.norm(layer.weight.grad) == pytest.approx(1e-3, rel=1e-3)
    assert nn.utils.clip_grad_norm_(layer.weight, 1.0).item() == pytest.approx(1e-3, rel=1e-3)
    assert nn.utils.clip_grad_norm_([tg.zeros(2, requires_grad=True)], 1.0).item() == 0.0  # no grads


def test_clip_grad_norm_refuses_a_nonfinite_norm_only_when_asked():
    p = tg.zeros(2, requires_grad=True)
    p.grad = np.array([np.inf, 1.0], np.float32)
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isinf(nn.utils.clip_grad_norm_([p], 1.0).item())


def test_clip_grad_value_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _with_grads(tg.tensor, np.float64), _with_grads(torch.tensor, np.float64)
    assert nn.utils.clip_grad_value_(ours, 0.5) is None
    torch.nn.utils.clip_grad_value_(theirs, 0.5)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad, q.grad.numpy())
    assert max(np.abs(p.grad).max() for p in ours) == 0.5


def test_clipping_refuses_what_is_not_tensors():
    with pytest.raises(TypeError, match=r"clip_grad_norm_: parameters\[1\] is a list"):
        nn.utils.clip_grad_norm_([tg.zeros(1), [1.0]], 1.0)
    with pytest.raises(TypeError, match="clip_grad_value_: parameters must be a Tensor"):
        nn.utils.clip_grad_value_(3.0, 1.0)


def test_total_norm_and_clipping_in_two_steps_match_torch():
    torch = pytest.importorskip("torch")
    values = [np.array([[3.0, -4.0]]), np.array([12.0])]
    results = []
    for m in (tg, torch):
        params = [m.tensor(v, requires_grad=True) for v in values]
        for p, v in zip(params, values, strict=True):
            p.grad = m.tensor(v * 2)
        total = m.nn.utils.get_total_norm([p.grad for p in params], 3.0)
        m.nn.utils.clip_grads_with_norm_(params, 5.0, total)
        results.append((float(total), [np.asarray(p.grad if m is tg else p.grad.numpy()) for p in params]))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    for ours, theirs in zip(results[0][1], results[1][1], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_parameters_to_vector_and_back():
    model = tg.nn.Linear(3, 2)
    vector = tg.nn.utils.parameters_to_vector(model.parameters())
    assert vector.shape == (8,) and vector.requires_grad
    (vector * tg.arange(8.0)).sum().backward()
    assert model.weight.grad.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert model.bias.grad.tolist() == [6.0, 7.0]
    tg.nn.utils.vector_to_parameters(tg.arange(8.0), model.parameters())
    assert model.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and model.bias.tolist() == [6.0, 7.0]
    with pytest.raises(TypeError):
        tg.nn.utils.vector_to_parameters([1.0], model.parameters())
