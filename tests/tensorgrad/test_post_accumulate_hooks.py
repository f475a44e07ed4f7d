"""`Tensor.register_post_accumulate_grad_hook`: called with the leaf once a backward pass has added
its gradient to `.grad`, as PyTorch's; not for `autograd.grad`, not for leaves the pass missed."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _record(m):
    w = m.ones(2, requires_grad=True)
    unused = m.ones(2, requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda p: seen.append(("w", p.grad.tolist())))
    unused.register_post_accumulate_grad_hook(lambda p: seen.append(("unused", None)))
    (w * 3).sum().backward()
    (w * 2).sum().backward()                         # accumulates: the hook sees 5
    m.autograd.grad((w * 7).sum(), w)                # accumulates nothing: no call
    handle.remove()
    (w * 1).sum().backward()                         # removed: no call
    return seen, w.grad.tolist()


def test_post_accumulate_hooks_fire_where_pytorchs_do():
    assert _record(tg) == _record(torch) == ([("w", [3.0, 3.0]), ("w", [5.0, 5.0])], [6.0, 6.0])


def test_tensor_hooks_run_first_and_the_post_hook_sees_their_result():
    for m in (tg, torch):
        w = m.ones(2, requires_grad=True)
        log = []
        w.register_hook(lambda g: log.append("hook") or g * 10)
        w.register_post_accumulate_grad_hook(lambda p: log.append(p.grad.tolist()))
        (w * 1).sum().backward()
        assert log == ["hook", [10.0, 10.0]]


def test_an_optimizer_step_inside_backward():
    """The pattern the hook is for: each parameter updated, and its gradient dropped, as soon as
    backward has it. The result equals a step after backward."""
    rng = np.random.default_rng(0)
    x, y = tg.tensor(rng.standard_normal((8, 3))), tg.tensor(rng.standard_normal((8, 1)))
    weights = [rng.standard_normal((3, 4)), rng.standard_normal((4, 1))]

    def loss_of(params):
        return ((x @ params[0]).tanh() @ params[1] - y).pow(2).mean()

    after = [tg.tensor(w, requires_grad=True) for w in weights]
    loss_of(after).backward()
    with tg.no_grad():
        for p in after:
            p -= 0.1 * tg.tensor(p.grad)

    inside = [tg.tensor(w, requires_grad=True) for w in weights]

    def step(p):
        with tg.no_grad():
            p -= 0.1 * tg.tensor(p.grad)
        p.grad = None
    for p in inside:
        p.register_post_accumulate_grad_hook(step)
    loss_of(inside).backward()
    for a, b in zip(after, inside, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
        assert b.grad is None


def test_registration_errors_are_pytorchs():
    w = tg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tg.ones(2).register_post_accumulate_grad_hook(lambda p: None)
    w.register_post_accumulate_grad_hook(lambda p: 5)
    other = tg.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="return None"):
        (w * other).sum().backward()
    assert other.grad.tolist() == [1.0, 1.0]  # every leaf got its gradient before the hook raised
