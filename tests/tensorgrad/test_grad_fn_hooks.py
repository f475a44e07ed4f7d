"""Hooks on `grad_fn` nodes that tensorgrad/graph.py's first tests leave out, compared with PyTorch:
post-hooks (`register_hook`) and pre-hooks on a custom `autograd.Function`'s node (one output or
several), and post-hooks on an op's node in the `create_graph=True` pass."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

A = np.random.default_rng(1).random((3, 4)) + 0.5


def make_functions(lib):
    """The same two Functions in either library: a scaled exp (with a tensor argument that may not
    require grad, and a number), and one with two outputs."""

    class Scaled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, w):
            y = x.exp() * k * w
            ctx.save_for_backward(y, w)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, w = ctx.saved_tensors
            return grad * y, None, grad * y / w

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3

    return Scaled, Two


def both():
    """(library, leaf x, tensor w that requires no grad, Scaled, Two) for tensorgrad and PyTorch."""
    return [(lib, lib.tensor(A, dtype=lib.float64, requires_grad=True), lib.tensor(A + 1, dtype=lib.float64),
             *make_functions(lib)) for lib in (tg, torch)]


def values(gs):
    return [None if g is None else np.asarray(g.detach().numpy() if hasattr(g, "detach") else g.data)
            for g in gs]


def assert_same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b, strict=True):
        assert (u is None) == (v is None)
        if u is not None:
            np.testing.assert_allclose(u, v, rtol=1e-12)


def test_function_post_hook_sees_and_replaces_grad_inputs():
    seen, grads = [], []
    for lib, x, w, Scaled, _ in both():
        y = Scaled.apply(x, 2.0, w)

        def hook(grad_inputs, grad_outputs, seen=seen):
            seen.append((values(grad_inputs), values(grad_outputs)))
            return (grad_inputs[0] * 10, None)

        y.grad_fn.register_hook(hook)
        (y * y).sum().backward()
        grads.append(np.asarray(x.grad))
    (gi, go), (gi_t, go_t) = seen
    assert len(gi) == 2 and len(go) == 1
    assert_same(gi, gi_t)  # (the grad of w, which requires none, is shown as backward returned it)
    assert_same(go, go_t)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_function_post_hook_removed_and_none_keeps():
    grads = []
    for lib, x, w, Scaled, _ in both():
        y = Scaled.apply(x, 2.0, w)
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, None)).remove()
        y.grad_fn.register_hook(lambda gi, go: None)
        y.sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
    np.testing.assert_allclose(grads[0], 2 * np.exp(A) * (A + 1), rtol=1e-12)


def test_function_post_hook_sees_summed_broadcast_gradient():
    shapes = []
    for lib in (tg, torch):
        class Spread(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g.expand(4, 3)

        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        y = Spread.apply(x)
        y.grad_fn.register_hook(lambda gi, go: shapes.append(tuple(gi[0].shape)))
        y.sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), [4.0, 4.0, 4.0])
    assert shapes == [(3,), (3,)]


def test_function_post_hook_wrong_count_raises():
    _, x, w, Scaled, _ = both()[0]
    y = Scaled.apply(x, 2.0, w)
    y.grad_fn.register_hook(lambda gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="ScaledBackward"):
        y.sum().backward()


def test_prehook_on_function_with_two_outputs():
    seen, grads = [], []
    for lib, x, _, _, Two in both():
        a, b = Two.apply(x)

        def prehook(grad_outputs, seen=seen):
            seen.append(values(grad_outputs))
            return (grad_outputs[0] * 10, grad_outputs[1])

        a.grad_fn.register_prehook(prehook)
        a.register_hook(lambda g: g + 1)  # a tensor hook: runs before the node's pre-hook
        (a * a).sum().backward()
        grads.append(np.asarray(x.grad))
    assert_same(seen[0], seen[1])
    assert seen[0][1] is None  # b got no gradient: None, materialized to zeros after the pre-hook
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_prehook_and_post_hook_on_function_with_two_outputs_removed():
    grads = []
    for lib, x, _, _, Two in both():
        a, b = Two.apply(x)
        a.grad_fn.register_prehook(lambda go: (go[0] * 0, go[1] * 0)).remove()
        post = b.grad_fn.register_hook(lambda gi, go: (gi[0] * 5,))
        (a * b).sum().backward(retain_graph=True)
        post.remove()
        (a + b).sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_prehook_on_single_output_function():
    grads = []
    for lib, x, w, Scaled, _ in both():
        y = Scaled.apply(x, 2.0, w)
        y.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        y.sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_post_hook_runs_in_create_graph_pass():
    seen, results = [], []
    for lib in (tg, torch):
        x = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        h = x * x

        def hook(grad_inputs, grad_outputs, x=x, seen=seen):
            seen.append(([g is None for g in grad_inputs], values(grad_inputs), values(grad_outputs)))
            return (grad_inputs[0] * x, grad_inputs[1])  # a replacement that carries a graph

        h.grad_fn.register_hook(hook)
        (g,) = lib.autograd.grad(h.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        results.append((values([g])[0], values([gg])[0]))
    assert seen[0][0] == seen[1][0]
    assert_same(seen[0][1], seen[1][1])
    assert_same(seen[0][2], seen[1][2])
    assert_same(results[0], results[1])  # g = 4 x^2, its gradient 8 x


def make_cube(lib):
    """x ** 3 as a Function whose backward reads its saved input (so it differentiates again)."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x)
            return x ** 3 * w

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad, None

    return Cube


def test_function_hooks_in_create_graph_pass():
    results = []
    for lib, x, w, _, _ in both():
        y = make_cube(lib).apply(x, w)
        y.grad_fn.register_hook(lambda gi, go, x=x: (gi[0] * x, gi[1]))
        y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        results.append((values([g])[0], values([gg])[0]))
    assert_same(results[0], results[1])


def test_function_post_hook_gradients_against_finite_differences():
    _, _, w, Scaled, _ = both()[0]

    def f(x):
        y = Scaled.apply(x, 2.0, w)
        if y.grad_fn is not None:
            y.grad_fn.register_hook(lambda gi, go: None)
        return y.tanh()

    x = tg.tensor(A, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(f, [x])
