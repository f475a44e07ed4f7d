"""Autograd semantics, one test (or a few) per clause of DESIGN.md's autograd paragraph.

`requires_grad` and `is_leaf`, which nodes keep `grad`, `retain_grad`, `backward(gradient,
retain_graph)` and its errors, the graph and its saved arrays freed after backward (weakref
and tracemalloc), no reference cycles, `detach`, grad mode (`no_grad` as context manager and
decorator, `enable_grad`, per thread), and in-place ops: values, version counters, the errors
that keep gradients honest, and PyTorch's gradients through in-place changes of inner nodes.
"""

from __future__ import annotations

import gc
import threading
import tracemalloc
import weakref

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import InplaceModifiedError


def leaf(values, dtype=tg.float64):
    return tg.tensor(values, dtype=dtype, requires_grad=True)


# --- requires_grad, is_leaf, grad -----------------------------------------------------------


def test_requires_grad_is_settable_on_leaves():
    x = tg.tensor([1.0, 2.0])
    assert x.requires_grad is False
    assert not (x * 2).requires_grad
    x.requires_grad = True
    assert x.requires_grad
    y = x * 3
    assert y.requires_grad and not y.is_leaf
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])
    x.requires_grad = False
    assert not (x * 3).requires_grad


def test_requires_grad_cannot_be_switched_off_on_a_non_leaf():
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
    assert y.requires_grad_() is y  # switching it on is a no-op


def test_requires_grad_underscore_returns_the_tensor():
    x = tg.zeros(2)
    assert x.requires_grad_() is x and x.requires_grad
    assert x.requires_grad_(False) is x and not x.requires_grad


def test_is_leaf():
    x = leaf([1.0, 2.0])
    c = tg.tensor([3.0, 4.0])
    assert x.is_leaf and c.is_leaf
    assert not (x + c).is_leaf
    assert (c * 2).is_leaf  # no input requires grad: no graph
    with tg.no_grad():
        assert (x * 2).is_leaf
    assert (x * 2).detach().is_leaf
    assert x.grad_fn is None and (x * 2).grad_fn.name() == "MulBackward0" and (x * 2).op == "*"


def test_grad_is_kept_for_leaves_only():
    x = leaf([1.0, 2.0])
    h = x * x
    out = (h * 3).sum()
    out.backward()
    np.testing.assert_array_equal(x.grad, [6.0, 12.0])
    assert h.grad is None and out.grad is None


def test_retain_grad_keeps_the_gradient_of_an_inner_node():
    x = leaf([1.0, -2.0])
    y = x * 2
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    z = (y * y).sum()
    z.backward()
    np.testing.assert_array_equal(y.grad, [4.0, -8.0])  # dz/dy = 2y
    np.testing.assert_array_equal(x.grad, [8.0, -16.0])


def test_a_retained_gradient_accumulates_across_passes_like_a_leafs():
    x = leaf([1.0, -2.0])
    y = x * 2
    y.retain_grad()
    out = (y * 3).sum()
    out.retain_grad()
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(y.grad, [3.0, 3.0])
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(y.grad, [6.0, 6.0])  # PyTorch: 3 + 3
    assert out.grad == 2.0  # the root's own seeds add up too
    np.testing.assert_array_equal(x.grad, [12.0, 12.0])
    # A pass that does not reach y leaves its gradient as it was.
    (x * 1.0).sum().backward()
    np.testing.assert_array_equal(y.grad, [6.0, 6.0])
    y.grad = None  # zeroed, it starts again
    (y * 1.0).sum().backward()
    np.testing.assert_array_equal(y.grad, [1.0, 1.0])


def test_a_node_reached_by_several_paths_gets_the_sum():
    x = leaf([3.0])
    (x * x + x + x.exp() * 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [7.0])


def test_leaf_grads_accumulate_across_backward_calls_until_reset():
    x = leaf([1.0, 2.0])
    (x * 2).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [4.0, 6.0])
    x.grad = None
    (x * 5).sum().backward()
    np.testing.assert_array_equal(x.grad, [5.0, 5.0])


def test_backward_with_gradient_for_a_non_scalar_root():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * x
    y.backward(gradient=np.array([[1.0, 0.0], [10.0, -1.0]]))
    np.testing.assert_array_equal(x.grad, [[2.0, 0.0], [60.0, -8.0]])
    x.grad = None
    (x * 3).backward(tg.ones(2, 2, dtype=tg.float64))
    np.testing.assert_array_equal(x.grad, np.full((2, 2), 3.0))


def test_non_scalar_root_without_gradient_raises():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match=r"scalar.*\(2,\)"):
        y.backward()


def test_gradient_of_the_wrong_shape_raises():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(2,\)"):
        y.backward(np.ones(3))


def test_backward_of_a_tensor_that_does_not_require_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.tensor([1.0]).sum().backward()


def test_second_backward_through_a_freed_graph_raises():
    x = leaf([1.0, 2.0])
    out = (x.exp() * x).sum()
    out.backward()
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_a_freed_subgraph_shared_with_a_new_graph_raises():
    x = leaf([1.0, 2.0])
    h = x.tanh()
    h.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        (h * 2).sum().backward()


def test_retain_graph_allows_a_second_backward_and_leaf_grads_accumulate():
    x = leaf([1.0, 2.0])
    out = (x * x * x).sum()
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad, [3.0, 12.0])
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad, [6.0, 24.0])
    out.backward()
    np.testing.assert_array_equal(x.grad, [9.0, 36.0])
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_a_long_chain_needs_no_recursion():
    x = leaf([0.5])
    y = x
    for _ in range(20_000):
        y = y * 1.0 + 0.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0])


# --- memory: saved buffers freed after backward, no reference cycles ---------------------------


def test_saved_arrays_and_intermediates_are_released_after_backward():
    gc.disable()
    try:
        x = leaf(np.linspace(-1, 1, 1000))
        h = x * 3.0
        t = h.tanh()  # saves its output's array
        saved_array, intermediate, inner = weakref.ref(t.data), weakref.ref(h), weakref.ref(t)
        root = (t * 2.0).sum()
        del h, t
        assert intermediate() is not None and saved_array() is not None  # the graph holds them
        root.backward()
        assert intermediate() is None and inner() is None and saved_array() is None
        assert root.parents == ()  # the root is still here, its graph is not
        assert x.grad is not None
    finally:
        gc.enable()


def test_retain_graph_keeps_the_saved_arrays():
    gc.disable()
    try:
        x = leaf(np.ones(10))
        t = (x * 3.0).tanh()
        saved_array = weakref.ref(t.data)
        root = t.sum()
        del t
        root.backward(retain_graph=True)
        assert saved_array() is not None
        root.backward()
        assert saved_array() is None
    finally:
        gc.enable()


def test_deep_graph_over_large_tensors_returns_its_memory_after_backward():
    layers, size = 30, 256 * 256  # each layer saves float32 arrays of 256 KiB
    x = tg.randn(256, 256, requires_grad=True)
    weight = tg.tensor(np.float32(0.9))
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        y = x
        for _ in range(layers):
            y = (y * weight).tanh()
        root = y.sum()
        built = tracemalloc.get_traced_memory()[0]
        root.backward()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    array = size * 4
    assert built - start > layers * array  # the graph really held a saved array per layer
    # What's left: x.grad, and a little bookkeeping; never the layers' arrays.
    assert after - start < 3 * array, (start, built, after)
    assert root.parents == () and x.grad.shape == (256, 256)


def test_a_dropped_graph_is_freed_without_the_cycle_collector():
    gc.disable()
    try:
        x = leaf(np.ones(5))
        y = x * 2.0
        z = (y.exp() + y).log()
        nodes = [weakref.ref(t) for t in (y, z)]
        arrays = [weakref.ref(y.data), weakref.ref(z.data)]
        del y, z
        assert all(r() is None for r in nodes + arrays)
        # Also after a backward pass that kept the graph.
        y = x * 2.0
        z = (y.sigmoid() * y).sum()
        z.backward(retain_graph=True)
        nodes = [weakref.ref(y), weakref.ref(z)]
        del y, z
        assert all(r() is None for r in nodes)
    finally:
        gc.enable()


# --- detach, grad mode --------------------------------------------------------------------------


def test_detach_shares_memory_and_carries_no_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert np.shares_memory(d.data, y.data)
    assert not d.requires_grad and d.is_leaf and d.grad is None
    assert not (d * x.detach()).requires_grad
    d.data[0] = 10.0
    assert y.data[0] == 10.0


def test_in_place_change_through_detach_is_seen_by_backward():
    x = leaf([1.0, 2.0])
    y = x.exp()  # exp saves its output
    y.detach().add_(1.0)
    with pytest.raises(InplaceModifiedError):
        y.sum().backward()


def test_no_grad_context_manager():
    x = leaf([1.0])
    assert tg.is_grad_enabled()
    with tg.no_grad():
        assert not tg.is_grad_enabled()
        y = x * 2
    assert tg.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf


def test_no_grad_restores_the_mode_after_an_exception():
    with pytest.raises(ZeroDivisionError), tg.no_grad():
        1 / 0
    assert tg.is_grad_enabled()


@pytest.mark.parametrize("decorator", [tg.no_grad(), tg.no_grad], ids=["@no_grad()", "@no_grad"])
def test_no_grad_as_a_decorator(decorator):
    x = leaf([1.0])

    @decorator
    def f(t):
        """Docstring kept."""
        return t * 2, tg.is_grad_enabled()

    y, enabled = f(x)
    assert not enabled and not y.requires_grad
    assert tg.is_grad_enabled()
    assert f.__doc__ == "Docstring kept."


def test_enable_grad_inside_no_grad():
    x = leaf([2.0])
    with tg.no_grad():
        with tg.enable_grad():
            assert tg.is_grad_enabled()
            y = x * x
        assert not tg.is_grad_enabled()
        z = x * x

        @tg.enable_grad()
        def g(t):
            return t * 3

        w = g(x)
    assert y.requires_grad and not z.requires_grad and w.requires_grad
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [4.0])


def test_nested_no_grad_restores_each_level():
    with tg.no_grad():
        with tg.no_grad():
            pass
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()


def test_grad_mode_is_per_thread():
    results = {}

    def build():
        results["enabled"] = tg.is_grad_enabled()
        x = leaf([3.0])
        (x * x).sum().backward()
        results["grad"] = x.grad.copy()

    with tg.no_grad():
        thread = threading.Thread(target=build)
        thread.start()
        thread.join()
        assert not tg.is_grad_enabled()
    assert results["enabled"] is True
    np.testing.assert_array_equal(results["grad"], [6.0])

    def off():
        with tg.no_grad():
            results["inside"] = tg.is_grad_enabled()
            done.wait(5)

    done = threading.Event()
    thread = threading.Thread(target=off)
    thread.start()
    assert tg.is_grad_enabled()  # the other thread's no_grad doesn't reach this one
    assert (leaf([1.0]) * 2).requires_grad
    done.set()
    thread.join()
    assert results["inside"] is False


# --- in place -----------------------------------------------------------------------------------

INPLACE = {
    "add_": (lambda t: t.add_(2.0), lambda a: a + 2.0),
    "add_ tensor": (lambda t: t.add_(tg.tensor([1.0, 2.0, 3.0])), lambda a: a + [1.0, 2.0, 3.0]),
    "sub_": (lambda t: t.sub_(0.5), lambda a: a - 0.5),
    "mul_": (lambda t: t.mul_(3.0), lambda a: a * 3.0),
    "div_": (lambda t: t.div_(4.0), lambda a: a / 4.0),
    "zero_": (lambda t: t.zero_(), lambda a: a * 0.0),
    "fill_": (lambda t: t.fill_(7.0), lambda a: np.full_like(a, 7.0)),
    "copy_": (lambda t: t.copy_(tg.tensor([9.0, 8.0, 7.0])),
              lambda a: np.broadcast_to([9.0, 8.0, 7.0], a.shape)),
}


def _iop(name):
    def run(t):
        if name == "+=":
            t += 2.0
        elif name == "-=":
            t -= 2.0
        elif name == "*=":
            t *= 2.0
        else:
            t /= 2.0
        return t
    return run


INPLACE.update({
    "+=": (_iop("+="), lambda a: a + 2.0),
    "-=": (_iop("-="), lambda a: a - 2.0),
    "*=": (_iop("*="), lambda a: a * 2.0),
    "/=": (_iop("/="), lambda a: a / 2.0),
})


@pytest.mark.parametrize(("op", "expected"), list(INPLACE.values()), ids=list(INPLACE))
def test_in_place_ops_compute_in_place_and_bump_the_version(op, expected):
    values = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    t = tg.tensor(values)
    buffer, view = t.data, t[1]
    assert t._version == 0
    out = op(t)
    assert out is t and t.data is buffer  # same tensor, same storage
    np.testing.assert_allclose(t.data, expected(values))
    assert t.dtype == tg.float32
    assert t._version == 1 and view._version == 1  # one counter per storage
    op(t)
    assert t._version == 2


def test_in_place_on_a_leaf_that_requires_grad_raises_outside_no_grad():
    x = leaf([1.0, 2.0])
    for change in (lambda: x.add_(1.0), lambda: x.mul_(2.0), lambda: x.zero_(), lambda: x.copy_(tg.ones(2))):
        with pytest.raises(RuntimeError, match="leaf.*no_grad"):
            change()
    with pytest.raises(RuntimeError, match="leaf"):
        x += 1.0
    np.testing.assert_array_equal(x.data, [1.0, 2.0])
    assert x._version == 0


def test_in_place_on_a_leaf_inside_no_grad_works_like_an_optimizer_step():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    with tg.no_grad():
        x -= 0.5 * tg.tensor(x.grad)
    np.testing.assert_array_equal(x.data, [0.0, 0.0])
    assert x.is_leaf and x.requires_grad and x._version == 1
    x.grad = None
    (x + 1.0).sum().backward()  # the updated leaf is still a leaf of new graphs
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])


def test_backward_raises_when_a_saved_output_was_changed_in_place():
    x = leaf([1.0, 2.0])
    y = x.exp()
    y.add_(1.0)
    with pytest.raises(InplaceModifiedError, match="in-place"):
        y.sum().backward()


def test_backward_raises_when_a_saved_input_was_changed_under_no_grad():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    z = (a * b).sum()
    with tg.no_grad():
        a.mul_(2.0)
    with pytest.raises(InplaceModifiedError, match="'\\*'"):
        z.backward()


def test_backward_raises_when_a_view_of_a_saved_tensor_was_changed():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    h = x * 1.0
    row = h[0]
    p = (row * row).sum()  # saves row, a view of h
    with tg.no_grad():
        h.add_(1.0)
    with pytest.raises(InplaceModifiedError):
        p.backward()


def test_ops_that_save_nothing_allow_in_place_changes():
    x = leaf([1.0, 2.0])
    y = x + 1.0
    z = (y + 2.0).sum()  # + saves no data
    with tg.no_grad():
        y.mul_(100.0)
    z.backward()
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])


def test_using_a_view_taken_before_its_base_changed_in_place_follows_the_base():
    """PyTorch rebuilds the view's history from the base's current one, and so does tensorgrad."""
    x = leaf([1.0, 2.0])
    y = x * 1.0
    v = y[0]
    y.mul_(2.0)
    assert v.item() == 2.0  # the view sees the new value
    (v * 1.0).backward()
    np.testing.assert_array_equal(x.grad, [2.0, 0.0])


def _inplace_1(m, x, w):
    y = x * 2
    y.add_(1)
    y.mul_(x)
    return y


def _inplace_2(m, x, w):
    y = x * w
    y.sub_(x)
    y.div_(w * w + 2.0)
    return y ** 2


def _inplace_3(m, x, w):
    y = x * 1
    y += w
    y *= 2.0
    y -= x.exp()
    y /= 4
    return y.tanh()


def _inplace_4(m, x, w):
    y = x.clone()
    y.copy_(w)
    return y * x


def _inplace_5(m, x, w):
    y = x * 1
    y.zero_()
    y.add_(w)
    return y * x


def _inplace_6(m, x, w):
    y = x * 1
    y.fill_(2.0)
    return y * x


def _setitem_1(m, x, w):
    y = x.clone()
    y[0] = w * 3
    return y.tanh()


def _setitem_2(m, x, w):
    y = x * 1
    y[:, 1] = 0.0
    y[1, 0] = w[0]
    return y.sum(0) * w


def _setitem_3(m, x, w):
    y = x.exp()
    z = y * 1
    z[[0, 1], [2, 2]] = w[:2]
    return z * y


def _setitem_4(m, x, w):
    y = x * 1
    y[y > 1.0] = 0.0
    return y * w


TORCH_INPLACE = [_inplace_1, _inplace_2, _inplace_3, _inplace_4, _inplace_5, _inplace_6,
                 _setitem_1, _setitem_2, _setitem_3, _setitem_4]


@pytest.mark.parametrize("expr", TORCH_INPLACE, ids=[f.__name__ for f in TORCH_INPLACE])
def test_in_place_on_inner_nodes_gives_pytorchs_gradients(expr):
    torch = pytest.importorskip("torch")
    x_values = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    w_values = np.array([0.3, 1.2, -0.8])
    x, w = leaf(x_values), leaf(w_values)
    tx = torch.tensor(x_values, requires_grad=True)
    tw = torch.tensor(w_values, requires_grad=True)
    out, expected = expr(tg, x, w), expr(torch, tx, tw)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12)
    weights = np.arange(1.0, out.data.size + 1).reshape(out.shape)
    out.backward(weights)
    expected.backward(torch.from_numpy(weights))
    for ours, theirs in ((x, tx), (w, tw)):
        if theirs.grad is None:  # not used by the expression
            assert ours.grad is None
        else:
            np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_in_place_on_inner_nodes_passes_gradcheck():
    x, w = leaf([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), leaf([0.3, 1.2, -0.8])
    for expr in TORCH_INPLACE[:-1]:  # the last one's mask depends on the values
        assert tg.gradcheck(lambda a, b, f=expr: f(tg, a, b), [x, w])


def test_setitem_writes_values_and_bumps_the_version():
    t = tg.zeros(3, 4)
    t[1] = 5.0
    t[:, 0] = tg.tensor([1.0, 2.0, 3.0])
    t[[0, 2], [3, 3]] = tg.tensor([7.0, 8.0])
    t[t > 6.5] = -1.0
    expected = np.zeros((3, 4), dtype=np.float32)
    expected[1] = 5.0
    expected[:, 0] = [1.0, 2.0, 3.0]
    expected[[0, 2], [3, 3]] = -1.0
    np.testing.assert_array_equal(t.data, expected)
    assert t._version == 4 and t.dtype == tg.float32


def test_setitem_on_a_leaf_that_requires_grad_raises_outside_no_grad():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf"):
        x[0] = 3.0
    with tg.no_grad():
        x[0] = 3.0
    np.testing.assert_array_equal(x.data, [3.0, 2.0])


def test_in_place_on_a_tensor_that_requires_no_grad_with_a_value_that_does():
    """Writing a graph value into a plain tensor puts the tensor in the graph (as in PyTorch)."""
    x = leaf([2.0, 3.0])
    buffer = tg.zeros(2, dtype=tg.float64)
    buffer.add_(x * x)
    assert buffer.requires_grad and not buffer.is_leaf
    buffer.sum().backward()
    np.testing.assert_array_equal(x.grad, [4.0, 6.0])


# --- gradient hooks --------------------------------------------------------------------------------


def _hook_run(m, double_leaf: bool, clip_inner: bool):
    """A graph with hooks on a leaf used twice and on an inner tensor; what the hooks saw."""
    x = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(("x", g.tolist())) or (g * 2 if double_leaf else None))
    y = x * x
    y.register_hook(lambda g: seen.append(("y", g.tolist())) or (g.clamp(-0.5, 0.5) if clip_inner else None))
    (y * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().add((x * 3).sum()).backward()
    return seen, x.grad.tolist()


@pytest.mark.parametrize("double_leaf", [False, True])
@pytest.mark.parametrize("clip_inner", [False, True])
def test_hooks_see_and_replace_gradients_as_torchs(double_leaf, clip_inner):
    torch = pytest.importorskip("torch")
    assert _hook_run(tg, double_leaf, clip_inner) == _hook_run(torch, double_leaf, clip_inner)


def test_a_leaf_hook_sees_each_pass_alone_and_handles_remove_it():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3).sum().backward()
    (x * 5).sum().backward()  # the hook sees 5s, not the accumulated 8s
    assert seen == [[3.0, 3.0], [5.0, 5.0]] and x.grad.tolist() == [8.0, 8.0]
    handle.remove()
    handle.remove()  # a second remove does nothing
    (x * 7).sum().backward()
    assert len(seen) == 2 and x.grad.tolist() == [15.0, 15.0]


def test_a_hook_on_a_leaf_root_and_errors():
    x = tg.tensor(2.0, requires_grad=True)
    x.register_hook(lambda g: g * 10)
    x.backward()
    assert x.grad.item() == 10.0
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tg.ones(2).register_hook(lambda g: g)
    y = tg.ones(3, requires_grad=True)
    z = y * 2
    z.register_hook(lambda g: g[:2])
    with pytest.raises(RuntimeError, match="hook"):
        z.sum().backward()
    assert y.grad is None  # nothing reached y: the hook failed first


# --- autograd.grad -------------------------------------------------------------------------------


def _grad_run(m):
    x = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
    w = m.tensor([0.5, 1.5, -1.0], dtype=m.float64, requires_grad=True)
    h = (x * w).tanh()
    y, z = (h ** 2).sum(), (h * x).sum()
    first = m.autograd.grad(y, (x, h), retain_graph=True)
    second = m.autograd.grad([y, z], [w, x], grad_outputs=[m.tensor(2.0, dtype=m.float64),
                                                             m.tensor(-1.0, dtype=m.float64)])
    vector = m.autograd.grad(x * w, x, grad_outputs=m.tensor([1.0, 2.0, 3.0], dtype=m.float64))
    return [g.tolist() for g in (*first, *second, *vector)]


def test_autograd_grad_matches_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_grad_run(tg), _grad_run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_autograd_grad_leaves_every_grad_as_it_was():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    x.grad = np.array([10.0, 20.0], np.float32)
    h = x * w
    h.retain_grad()
    (h.sum() * 2).backward(retain_graph=True)
    kept = h.grad.copy()
    (gx,) = tg.autograd.grad((h * h).sum(), [x], retain_graph=True)
    assert gx.tolist() == [2 * 3.0 * 3.0, 2 * 8.0 * 4.0]
    assert x.grad.tolist() == [16.0, 28.0] and w.grad.tolist() == [2.0, 4.0]  # the backward's alone
    np.testing.assert_array_equal(h.grad, kept)


def test_autograd_grad_frees_the_graph_unless_retained_and_refuses_what_torch_refuses():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    tg.autograd.grad(y, x)
    with pytest.raises(RuntimeError):
        tg.autograd.grad(y, x)  # freed
    with pytest.raises(RuntimeError, match="not have been used"):
        tg.autograd.grad((x * 2).sum(), [x, tg.ones(1, requires_grad=True)])
    unused = tg.autograd.grad((x * 2).sum(), [x, tg.ones(1, requires_grad=True)], allow_unused=True)
    assert unused[1] is None
    with pytest.raises(RuntimeError, match="implicitly created only for scalar"):
        tg.autograd.grad(x * 2, x)
    (g,) = tg.autograd.grad((x * x).sum(), x, create_graph=True)  # a gradient with a graph of its own
    assert g.requires_grad
    np.testing.assert_allclose(tg.autograd.grad(g.sum(), x)[0].data, [2.0, 2.0])


def test_autograd_backward_of_several_roots_and_backward_with_inputs_as_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for m in (tg, torch):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x * w
        z, h = (y * y).sum(), y.exp()
        m.autograd.backward([z, h], [None, m.ones(3, dtype=m.float64)], retain_graph=True)
        both = [np.asarray(x.grad).copy(), np.asarray(w.grad).copy()]
        x.grad = w.grad = None
        z.backward(inputs=[x], retain_graph=True)  # only x's grad changes
        only_x = (np.asarray(x.grad).copy(), w.grad)
        if m is torch:
            y.retain_grad()  # (PyTorch warns when an inner tensor gets .grad without it)
        z.backward(inputs=[y, x])  # an inner tensor among the inputs gets its .grad
        results.append((both, only_x, np.asarray(x.grad), np.asarray(y.grad)))
    (ours_both, ours_x, ours_x2, ours_y), (their_both, their_x, their_x2, their_y) = results
    for a, b in zip(ours_both, their_both, strict=True):
        np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(ours_x[0], their_x[0])
    assert ours_x[1] is None and their_x[1] is None
    np.testing.assert_allclose(ours_x2, their_x2)
    np.testing.assert_allclose(ours_y, their_y)
    with pytest.raises(NotImplementedError, match="autograd.grad"):  # .grad is a numpy array here
        tg.ones(2, requires_grad=True).sum().backward(create_graph=True)
