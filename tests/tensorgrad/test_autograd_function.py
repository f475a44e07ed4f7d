"""`tg.autograd.Function`: a user's op as a class with forward, backward and a ctx, as in PyTorch.

Each Function is written twice, once for tensorgrad and once for PyTorch, from the same lines,
and the two are compared in float64 (values, gradients, what backward receives and how often
it runs); `tg.gradcheck` checks the gradients against finite differences. Then the ctx's
features, the errors (wrong count, wrong shape, stale saved tensor, freed graph), the graph's
shape (one backward call for several outputs, no reference cycles, the op in pictures), the
GPU stand-in, and `tg.autograd.functional`.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from conftest import placed_on
from foreign_array import foreign, is_foreign

import tensorgrad as tg
from scalargrad.engine import GraphFreedError
from tensorgrad.device import to_numpy

torch = pytest.importorskip("torch")

Function = tg.autograd.Function
X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])
W = np.array([[0.5, -0.3, 0.8], [1.1, 0.2, -0.9]])


def tg_leaf(a: np.ndarray) -> tg.Tensor:
    return tg.tensor(a, dtype=tg.float64, requires_grad=True)


def torch_leaf(a: np.ndarray):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def close(ours, theirs) -> None:
    np.testing.assert_allclose(to_numpy(ours.data if isinstance(ours, tg.Tensor) else ours),
                               theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


# --- the same Functions in both libraries --------------------------------------------------------------


def make_exp(base):
    class Exp(base):
        calls = 0

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            Exp.calls += 1
            (y,) = ctx.saved_tensors
            return grad_output * y

    return Exp


def make_scaled_split(base):
    """Several outputs, a non-tensor argument and a non-tensor output: (x * k + w, (x * w).sum(), k)."""

    class ScaledSplit(base):
        calls = 0
        seen = []

        @staticmethod
        def forward(ctx, x, k, w):
            ctx.k = k
            ctx.save_for_backward(x, w)
            ScaledSplit.seen.append(tuple(ctx.needs_input_grad))
            return x * k + w, (x * w).sum(), k

        @staticmethod
        def backward(ctx, grad_a, grad_s, grad_k):
            ScaledSplit.calls += 1
            ScaledSplit.seen.append(grad_k)
            x, w = ctx.saved_tensors
            return grad_a * ctx.k + grad_s * w, None, grad_a + grad_s * x

    return ScaledSplit


def make_new_style(base):
    class MulAdd(base):
        @staticmethod
        def forward(x, y, alpha=2.0):
            return x * y + alpha * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, alpha = inputs
            ctx.alpha = alpha
            ctx.save_for_backward(x, y)

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * (y + ctx.alpha), grad * x, None

    return MulAdd


def test_exp_matches_torch_and_finite_differences():
    ours, theirs = make_exp(Function), make_exp(torch.autograd.Function)
    x, tx = tg_leaf(X), torch_leaf(X)
    y, ty = ours.apply(x), theirs.apply(tx)
    close(y, ty)
    assert y.requires_grad and not y.is_leaf and y.op == "Exp"
    assert y.grad_fn.name() == "ExpBackward" == ty.grad_fn.name()
    weights = np.arange(6.0).reshape(2, 3)
    (y * tg.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    close(x.grad, tx.grad)
    assert ours.calls == theirs.calls == 1
    assert tg.gradcheck(lambda t: ours.apply(t * 0.5).sum(0), [tg_leaf(X)], elementwise=True)


def test_several_outputs_call_backward_once_with_every_gradient():
    ours, theirs = make_scaled_split(Function), make_scaled_split(torch.autograd.Function)
    x, w, tx, tw = tg_leaf(X), tg_leaf(W), torch_leaf(X), torch_leaf(W)
    a, s, k = ours.apply(x, 3.0, w)
    ta, ts, tk = theirs.apply(tx, 3.0, tw)
    assert k == tk == 3.0  # a non-tensor output passes through
    close(a, ta)
    close(s, ts)
    assert a.op == "ScaledSplit[0]" and a.parents[0].op == "ScaledSplit"  # both through one hub
    ((a * a).sum() + 5 * s).backward()
    ((ta * ta).sum() + 5 * ts).backward()
    close(x.grad, tx.grad)
    close(w.grad, tw.grad)
    assert ours.calls == theirs.calls == 1
    # needs_input_grad in forward, and the gradient of the non-tensor output (None)
    assert ours.seen == theirs.seen == [(True, False, True), None]
    assert tg.gradcheck(lambda p, q: ours.apply(p, -2.0, q)[0], [tg_leaf(X), tg_leaf(W)])
    assert tg.gradcheck(lambda p, q: ours.apply(p, 0.5, q)[1], [tg_leaf(X), tg_leaf(W)])


def test_an_output_without_gradient_gets_zeros_or_none():
    got = {}

    def make(base, materialize):
        class Two(base):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                got[base, materialize] = (ga, gb)
                return (ga if ga is not None else 0 * gb) * 2

        return Two

    for materialize in (True, False):
        x, tx = tg_leaf(X), torch_leaf(X)
        make(Function, materialize).apply(x)[0].sum().backward()
        make(torch.autograd.Function, materialize).apply(tx)[0].sum().backward()
        close(x.grad, tx.grad)
        ours, theirs = got[Function, materialize], got[torch.autograd.Function, materialize]
        if materialize:
            close(ours[1], theirs[1])
            np.testing.assert_array_equal(ours[1].data, np.zeros((2, 3)))
        else:
            assert ours[1] is None and theirs[1] is None


def test_new_style_setup_context_and_keyword_arguments_match_torch():
    ours, theirs = make_new_style(Function), make_new_style(torch.autograd.Function)
    for kwargs in ({}, {"alpha": -1.5}):
        x, y, tx, ty = tg_leaf(X), tg_leaf(W), torch_leaf(X), torch_leaf(W)
        out, tout = ours.apply(x, y, **kwargs), theirs.apply(tx, ty, **kwargs)
        close(out, tout)
        out.sum().backward()
        tout.sum().backward()
        close(x.grad, tx.grad)
        close(y.grad, ty.grad)
    assert tg.gradcheck(lambda p, q: ours.apply(p, q, 0.25), [tg_leaf(X), tg_leaf(W)])
    # an old-style forward takes keyword arguments too (PyTorch 2 binds them to forward's names)
    x, y, tx, ty = tg_leaf(X), tg_leaf(W), torch_leaf(X), torch_leaf(W)
    make_scaled_split(Function).apply(x, 2.0, w=y)[0].sum().backward()
    make_scaled_split(torch.autograd.Function).apply(tx, 2.0, w=ty)[0].sum().backward()
    close(y.grad, ty.grad)


def test_mark_non_differentiable_and_integer_outputs():
    def make(base, lib):
        class SortWithIndex(base):
            @staticmethod
            def forward(ctx, x):
                values, index = x.sort(dim=1)
                ctx.mark_non_differentiable(index)
                ctx.save_for_backward(index)
                positive = x > 0  # bool: never differentiable
                scaled = x * 2
                ctx.mark_non_differentiable(scaled)
                return values, index, positive, scaled

            @staticmethod
            def backward(ctx, g_values, g_index, g_positive, g_scaled):
                (index,) = ctx.saved_tensors
                assert not g_index.any() and not g_scaled.any()  # zeros, materialized
                return lib.zeros_like(g_values).scatter(1, index, g_values)

        return SortWithIndex

    x, tx = tg_leaf(X), torch_leaf(X)
    outs, touts = make(Function, tg).apply(x), make(torch.autograd.Function, torch).apply(tx)
    assert [t.requires_grad for t in outs] == [t.requires_grad for t in touts] == [True, False, False, False]
    for ours, theirs in zip(outs, touts, strict=True):
        close(ours, theirs)
    weights = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (outs[0] * tg.tensor(weights)).sum().backward()
    (touts[0] * torch.tensor(weights)).sum().backward()
    close(x.grad, tx.grad)


def test_non_tensor_arguments_must_get_none_and_inputs_without_grad_get_nothing():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.k = k
            return x * k + y

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None, grad  # y needs no gradient: ignored, as in PyTorch

    x, y = tg_leaf(X), tg.tensor(W, dtype=tg.float64)
    Scale.apply(x, 4.0, y).sum().backward()
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 4.0))
    assert y.grad is None

    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    with pytest.raises(RuntimeError, match=r"Bad\.backward returned a gradient different from None "
                                           r"for argument 1"):
        Bad.apply(tg_leaf(X), 2.0).sum().backward()


def test_wrong_count_wrong_shape_and_wrong_type_name_the_function():
    def make(result):
        class Broken(Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, grad):
                return result(grad)

        return Broken

    x, y = tg_leaf(X), tg_leaf(W)
    with pytest.raises(RuntimeError, match=r"function Broken\.backward returned an incorrect number of "
                                           r"gradients \(expected 2, .*got 1\)"):
        make(lambda g: g).apply(x, y).sum().backward()
    with pytest.raises(RuntimeError, match=r"expected 2, .*got 3"):
        make(lambda g: (g, g, g)).apply(x, y).sum().backward()
    with pytest.raises(RuntimeError, match=r"Function Broken\.backward returned an invalid gradient "
                                           r"at index 1 - got \[3\] but expected shape compatible "
                                           r"with \[2, 3\]"):
        make(lambda g: (g, tg.ones(3, dtype=tg.float64))).apply(x, y).sum().backward()
    with pytest.raises(RuntimeError, match=r"Broken\.backward returned a float for argument 0"):
        make(lambda g: (1.0, g)).apply(x, y).sum().backward()
    # extra Nones are allowed; a gradient that broadcasts to the input is summed back; dtypes are cast
    x, y = tg_leaf(X), tg_leaf(W)
    make(lambda g: (tg.ones(4, 2, 3, dtype=tg.float32), g, None)).apply(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 4.0))
    assert x.grad.dtype == np.float64


def test_saved_tensor_changed_in_place_raises():
    ours, theirs = make_exp(Function), make_exp(torch.autograd.Function)
    y, ty = ours.apply(tg_leaf(X)), theirs.apply(torch_leaf(X))
    with tg.no_grad():
        y.add_(1.0)
    with torch.no_grad():
        ty.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.sum().backward()
    with pytest.raises(tg.InplaceModifiedError, match=r"'Exp' has been modified by an in-place "
                                                      r"operation: saved tensor 0 .* is at version 1; "
                                                      r"expected version 0"):
        y.sum().backward()


def test_retain_graph_twice_and_the_freed_graph_error():
    for cls in (make_exp(Function), make_scaled_split(Function)):
        x, w = tg_leaf(X), tg_leaf(W)
        out = cls.apply(x) if cls.__name__ == "Exp" else cls.apply(x, 2.0, w)[0]
        loss = (out * out).sum()
        loss.backward(retain_graph=True)
        first = x.grad.copy()
        loss.backward()
        np.testing.assert_allclose(x.grad, 2 * first)
        assert cls.calls == 2
        with pytest.raises(GraphFreedError, match="second time"):
            loss.backward()


def test_second_output_after_the_first_freed_the_shared_node():
    cls = make_scaled_split(Function)
    a, s, _ = cls.apply(tg_leaf(X), 2.0, tg_leaf(W))
    a.sum().backward()
    with pytest.raises(GraphFreedError, match="second time"):
        s.backward()


def test_the_graph_holds_no_cycles():
    cls = make_scaled_split(Function)
    x, w = tg_leaf(X), tg_leaf(W)
    gc.collect()
    gc.disable()
    try:
        a, s, _ = cls.apply(x, 2.0, w)
        refs = [weakref.ref(a), weakref.ref(s), weakref.ref(a.parents[0])]
        del a, s
        assert [r() for r in refs] == [None, None, None]
        y = make_exp(Function).apply(x)
        ref = weakref.ref(y)
        del y
        assert ref() is None
    finally:
        gc.enable()


def test_backward_releases_ctx_and_its_saved_tensors():
    contexts = []

    class Pair(Function):
        @staticmethod
        def forward(ctx, x):
            contexts.append(weakref.ref(ctx))
            big = x * 10
            ctx.save_for_backward(big)
            contexts.append(weakref.ref(big))
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            (big,) = ctx.saved_tensors
            return ga * 2 + gb * 3 + 0 * big

    x = tg_leaf(X)
    a, b = Pair.apply(x)
    a.sum().backward()  # b is alive and was not in the pass: its node must not keep ctx
    assert [r() for r in contexts] == [None, None]
    assert b.requires_grad
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 2.0))


def test_mark_dirty_matches_torch():
    def make(base):
        class AddOneInPlace(base):
            @staticmethod
            def forward(ctx, x, y):
                x.add_(y)
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)  # the new values
                return x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3, grad * x

        return AddOneInPlace

    x, w, tx, tw = tg_leaf(X), tg_leaf(W), torch_leaf(X), torch_leaf(W)
    h, th = x * 2, tx * 2
    used_before, tused_before = h * 5, th * 5
    out, tout = make(Function).apply(h, w), make(torch.autograd.Function).apply(th, tw)
    assert out is h and tout is th  # the same tensor object, changed in place
    close(out, tout)
    (out * out).sum().add(used_before.sum()).backward()
    (tout * tout).sum().add(tused_before.sum()).backward()
    close(x.grad, tx.grad)
    close(w.grad, tw.grad)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        make(Function).apply(tg_leaf(X), tg_leaf(W))
    with pytest.raises(RuntimeError, match="mark_dirty must be an input"):
        class NotReturned(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x * 2

        NotReturned.apply(tg_leaf(X) * 1)


def test_an_input_returned_as_it_is_is_a_view_of_it():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = tg_leaf(X)
    y = Identity.apply(x)
    assert y is not x and y._base is x and np.shares_memory(y.data, x.data) and y.op == "Identity"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 2.0))
    with pytest.raises(RuntimeError, match="leaf"):
        Identity.apply(tg_leaf(X)).mul_(2)  # the view of a leaf that requires grad


def test_no_graph_under_no_grad_or_without_inputs_that_require_grad():
    cls = make_exp(Function)
    with tg.no_grad():
        y = cls.apply(tg_leaf(X))
    assert y.is_leaf and not y.requires_grad
    y = cls.apply(tg.tensor(X))
    assert y.is_leaf and not y.requires_grad


def test_once_differentiable_vjp_alias_and_autograd_grad():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @tg.autograd.once_differentiable
        def vjp(ctx, grad):
            assert not tg.is_grad_enabled()
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = tg_leaf(X)
    (g,) = tg.autograd.grad(Square.apply(x).sum(), [x])
    np.testing.assert_allclose(g.data, 2 * X)
    assert x.grad is None
    assert tg.autograd.function.FunctionCtx is tg.autograd.FunctionCtx
    with pytest.raises(RuntimeError, match="apply"):
        Square()(x)


def test_draw_dot_shows_the_function_name():
    visualize = pytest.importorskip("visualize")
    y = make_exp(Function).apply(tg_leaf(X))
    assert "Exp" in visualize.draw_dot(y.sum()).source
    a, s, _ = make_scaled_split(Function).apply(tg_leaf(X), 2.0, tg_leaf(W))
    source = visualize.draw_dot(a.sum() + s).source
    assert "ScaledSplit[0]" in source and "ScaledSplit[1]" in source and "label=ScaledSplit " in source
    steps = visualize.backprop_steps(a.sum() + s)
    assert len(steps) > 1


def test_on_the_gpu_stand_in_every_array_stays_foreign():
    cls = make_scaled_split(Function)

    class Zeros(Function):  # materialized zeros for the unused output are made where the data lives
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            assert is_foreign(ga.data) and is_foreign(gb.data)
            return ga * 2 + gb

    x = tg.from_numpy(foreign(X.copy())).requires_grad_()
    w = tg.from_numpy(foreign(W.copy())).requires_grad_()
    a, s, _ = cls.apply(x, 3.0, w)
    assert is_foreign(a.data) and is_foreign(s.data)
    ((a * a).sum() + 5 * s).backward()
    assert is_foreign(x.grad) and is_foreign(w.grad)
    px, pw = tg_leaf(X), tg_leaf(W)
    pa, ps, _ = cls.apply(px, 3.0, pw)
    ((pa * pa).sum() + 5 * ps).backward()
    np.testing.assert_allclose(to_numpy(x.grad), px.grad)
    np.testing.assert_allclose(to_numpy(w.grad), pw.grad)
    x = tg.from_numpy(foreign(X.copy())).requires_grad_()
    Zeros.apply(x)[0].sum().backward()
    assert is_foreign(x.grad)
    np.testing.assert_array_equal(to_numpy(x.grad), np.full((2, 3), 2.0))


def test_functions_and_module_hooks_on_each_device(device: str):
    """The same Function and hooked module on the device (CuPy arrays on a GPU) as on the CPU."""
    cls = make_scaled_split(Function)
    results = []
    for where in ("cpu", device):
        x = tg.tensor(X, dtype=tg.float64, device=where, requires_grad=True)
        w = tg.tensor(W, dtype=tg.float64, device=where, requires_grad=True)
        a, s, _ = cls.apply(x, 3.0, w)
        layer = tg.nn.Linear(3, 2).double()
        with tg.no_grad():
            layer.weight.copy_(tg.tensor(W[:, ::-1].copy(), dtype=tg.float64))
            layer.bias.fill_(0.5)
        layer.to(where)
        seen = []
        layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].data, go[0].data)))
        (layer(a).sum() + s).backward()
        assert a.device == x.device == placed_on(where) and type(x.grad) is type(x.data)
        results.append([to_numpy(v) for v in (x.grad, w.grad, layer.weight.grad, *seen[0])])
    for ours, cpu in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, cpu, rtol=1e-12, atol=1e-12)


# --- tg.autograd.functional ---------------------------------------------------------------------------


def test_jacobian_matches_torch_for_every_structure():
    jacobian, tjacobian = tg.autograd.functional.jacobian, torch.autograd.functional.jacobian
    x, y = tg.tensor(X, dtype=tg.float64), tg.tensor(W[0], dtype=tg.float64)
    tx, ty = torch.tensor(X, dtype=torch.float64), torch.tensor(W[0], dtype=torch.float64)
    close(jacobian(lambda a: (a * a).tanh(), x), tjacobian(lambda a: (a * a).tanh(), tx))
    ours = jacobian(lambda a, b: (a * b).sum(0), (x, y))
    theirs = tjacobian(lambda a, b: (a * b).sum(0), (tx, ty))
    for o, t in zip(ours, theirs, strict=True):
        close(o, t)
    ours = jacobian(lambda a: (a.exp(), a.sum()), x)
    theirs = tjacobian(lambda a: (a.exp(), a.sum()), tx)
    for o, t in zip(ours, theirs, strict=True):
        close(o, t)
    ours = jacobian(lambda a, b: (a, b * 2), (x, y))
    theirs = tjacobian(lambda a, b: (a, b * 2), (tx, ty))
    for row, trow in zip(ours, theirs, strict=True):
        for o, t in zip(row, trow, strict=True):
            close(o, t)
    assert x.grad is None and not x.requires_grad  # the caller's tensors are left alone
    with pytest.raises(RuntimeError, match="independent of input 1"):
        jacobian(lambda a, b: a * 2, (x, y), strict=True)
    graphed = jacobian(lambda a: a * a, x.detach().requires_grad_(), create_graph=True)
    assert graphed.requires_grad  # differentiable again (tests/tensorgrad/test_higher_order.py)


def test_vjp_matches_torch():
    vjp, tvjp = tg.autograd.functional.vjp, torch.autograd.functional.vjp
    x, w = tg.tensor(X, dtype=tg.float64), tg.tensor(W, dtype=tg.float64)
    tx, tw = torch.tensor(X, dtype=torch.float64), torch.tensor(W, dtype=torch.float64)
    out, grads = vjp(lambda a, b: (a * b).sin(), (x, w), tg.tensor(X + 1, dtype=tg.float64))
    tout, tgrads = tvjp(lambda a, b: (a * b).sin(), (tx, tw), torch.tensor(X + 1, dtype=torch.float64))
    close(out, tout)
    for o, t in zip(grads, tgrads, strict=True):
        close(o, t)
    out, grad = vjp(lambda a: a.exp().sum(), x)
    tout, tgrad = tvjp(lambda a: a.exp().sum(), tx)
    close(out, tout)
    close(grad, tgrad)
    assert not out.requires_grad
    _, grad = vjp(lambda a: tg.ones(2, dtype=tg.float64), x, tg.ones(2, dtype=tg.float64))
    np.testing.assert_array_equal(grad.data, np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match="v can only be None"):
        vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="invalid size"):
        vjp(lambda a: a * 2, x, tg.ones(3, dtype=tg.float64))
    _, graphed = vjp(lambda a: (a * a).sum(), x.detach().requires_grad_(), create_graph=True)
    assert graphed.requires_grad
