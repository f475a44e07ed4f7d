"""`tensorgrad.optim`: SGD and Adam follow PyTorch's update rules step for step."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import optim


def quadratic_loss(lib, params, step):
    """A loss whose gradient changes from step to step, so momentum and Adam's moments matter."""
    w, b = params
    x = lib.from_numpy(np.linspace(-1, 1, 12).reshape(4, 3) * (1 + step))
    return (((x @ w + b) ** 2).sum() + (w * w * w).sum())


def run(lib, make_optimizer, steps=6):
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal((3, 2)), requires_grad=True),
              lib.tensor(rng.standard_normal(2), requires_grad=True)]
    opt = make_optimizer(lib, params)
    for step in range(steps):
        opt.zero_grad()
        quadratic_loss(lib, params, step).backward()
        opt.step()
    return [p.detach().numpy() for p in params]


SETTINGS = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.01, momentum=0.5, weight_decay=0.1)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6)),
    ("Adam", dict(lr=0.05, weight_decay=0.2)),
]


@pytest.mark.parametrize(("name", "kwargs"), SETTINGS, ids=[f"{n}{k}" for n, k in SETTINGS])
def test_matches_pytorch_step_for_step(name, kwargs):
    torch = pytest.importorskip("torch")
    ours = run(tg, lambda lib, params: getattr(optim, name)(params, **kwargs))
    theirs = run(torch, lambda lib, params: getattr(torch.optim, name)(params, **kwargs))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_sgd_by_hand():
    w = tg.tensor([1.0, -2.0], dtype=tg.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.5)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()  # gradient 2w
        opt.step()
    # step 1: buf = 2w0 = (2, -4), w1 = w0 - 0.1 buf = (0.8, -1.6)
    # step 2: buf = 0.5 (2, -4) + 2 w1 = (2.6, -5.2), w2 = w1 - 0.1 buf = (0.54, -1.08)
    np.testing.assert_allclose(w.data, [0.54, -1.08])


def test_adam_first_step_moves_each_weight_by_lr():
    w = tg.tensor([3.0, -0.001, 50.0], dtype=tg.float64, requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()  # m / sqrt(v) = g / (|g| + eps) at the first step: about sign(g), whatever |g|
    grad = np.array([6.0, -0.002, 100.0])
    np.testing.assert_allclose(w.data, [3.0, -0.001, 50.0] - 0.1 * grad / (np.abs(grad) + 1e-8), rtol=1e-12)
    np.testing.assert_allclose(w.data, [2.9, 0.099, 49.9], rtol=1e-5)


def test_a_parameter_without_gradient_is_left_alone_and_zero_grad_drops_grads():
    a, b = tg.ones(2, requires_grad=True), tg.ones(2, requires_grad=True)
    opt = optim.Adam([a, b], lr=1.0)
    (a * 2).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.data, [1, 1])
    assert not np.allclose(a.data, 1)
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_step_bumps_the_version_so_a_stale_graph_refuses_backward():
    w = tg.ones(2, requires_grad=True)
    loss = (w * w).sum()  # saves w for its gradient
    loss.backward(retain_graph=True)
    optim.SGD([w], lr=0.1).step()
    with pytest.raises(tg.InplaceModifiedError):
        loss.backward()


def test_works_with_module_parameters():
    model = tg.nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.data.copy()
    model(tg.ones(2, 3)).sum().backward()
    opt.step()
    np.testing.assert_allclose(model.weight.data, before - 0.1 * 2)  # d/dW of the sum: 2 per weight


@pytest.mark.parametrize(("make", "message"), [
    (lambda: optim.SGD([], lr=0.1), "empty parameter list"),
    (lambda: optim.SGD([tg.ones(2)], lr=0.1), "parameter 0 must be a leaf tensor that requires grad"),
    (lambda: optim.SGD([tg.ones(2, requires_grad=True) * 2], lr=0.1), "parameter 0 must be a leaf"),
    (lambda: optim.SGD([tg.ones(2, requires_grad=True)], lr=-1), "invalid learning rate -1"),
    (lambda: optim.SGD([tg.ones(2, requires_grad=True)], lr=0.1, nesterov=True), "Nesterov"),
    (lambda: optim.Adam([tg.ones(2, requires_grad=True)], betas=(0.9, 1.0)), "betas"),
])
def test_bad_settings_are_clear_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()
