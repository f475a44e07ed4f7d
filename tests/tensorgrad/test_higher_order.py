"""Gradients of gradients: `autograd.grad(..., create_graph=True)` and what builds on it
(`tensorgrad.higher_order`), checked against finite differences and PyTorch's double backward."""

import numpy as np
import pytest

import tensorgrad as tg
from scalargrad.engine import GraphFreedError
from tensorgrad.autograd import InplaceModifiedError
from tensorgrad.gradcheck import GradcheckError

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3))
W1 = RNG.standard_normal((3, 5))
B1 = RNG.standard_normal(5)
W2 = RNG.standard_normal((5, 1))


def _critic(m, x, w1, b1, w2):
    """A two-layer critic, written with ops both libraries share."""
    return ((x @ w1 + b1).tanh() @ w2).sigmoid()


def _tensors(m, *arrays, requires_grad=True):
    return [m.tensor(a, dtype=m.float64, requires_grad=requires_grad) for a in arrays]


def _gradient_penalty(m):
    """WGAN-GP's penalty: the squared distance of |d critic / d x| from 1, differentiated with
    respect to the critic's weights."""
    x, w1, b1, w2 = _tensors(m, X, W1, B1, W2)
    out = _critic(m, x, w1, b1, w2)
    (gx,) = m.autograd.grad(out.sum(), x, create_graph=True)
    penalty = ((((gx * gx).sum(1) + 1e-12) ** 0.5 - 1) ** 2).mean()
    return [penalty.detach(), *m.autograd.grad(penalty, (w1, b1, w2))]


def test_gradient_penalty_matches_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_gradient_penalty(tg), _gradient_penalty(torch), strict=True):
        np.testing.assert_allclose(np.asarray(ours.data), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_gradient_penalty_matches_finite_differences():
    x, w1, b1, w2 = _tensors(tg, X, W1, B1, W2)
    assert tg.gradgradcheck(lambda *ts: _critic(tg, *ts), [x, w1, b1, w2])


def test_the_gradient_carries_a_graph_and_a_third_derivative_is_right():
    x = tg.tensor([0.3, -1.2, 2.0], dtype=tg.float64, requires_grad=True)
    (g1,) = tg.autograd.grad((x ** 4).sum(), x, create_graph=True)
    assert g1.requires_grad and not g1.is_leaf
    (g2,) = tg.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = tg.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(g1.data, 4 * x.data ** 3)
    np.testing.assert_allclose(g2.data, 12 * x.data ** 2)
    np.testing.assert_allclose(g3.data, 24 * x.data)
    assert not g3.requires_grad  # the last pass, without create_graph, is a plain gradient


def test_float32_gradients_stay_float32_and_broadcast_inputs_get_their_own_shape():
    a = tg.ones(2, 3, requires_grad=True)
    b = tg.tensor([0.5, 1.0, 2.0], requires_grad=True)
    ga, gb = tg.autograd.grad((a * b * b).sum(), (a, b), create_graph=True)
    assert ga.dtype == tg.float32 and gb.dtype == tg.float32
    assert ga.shape == (2, 3) and gb.shape == (3,)
    np.testing.assert_allclose(gb.data, 2 * 2 * b.data)  # d/db sum(a b^2) = 2 b, summed over 2 rows
    (hb,) = tg.autograd.grad(gb.sum(), b)
    np.testing.assert_allclose(hb.data, [4.0, 4.0, 4.0])


def test_grad_outputs_that_require_grad_stay_in_the_graph():
    torch = pytest.importorskip("torch")
    results = []
    for m in (tg, torch):
        x, v = _tensors(m, X[0], X[1])
        y = (x.exp() * x[0]).tanh()
        (g,) = m.autograd.grad(y, x, v, create_graph=True)  # v^T J, linear in v
        results.append([t.detach().numpy() if m is torch else t.data
                        for t in m.autograd.grad((g * g).sum(), (x, v))])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_allow_unused_and_materialize_grads_with_create_graph():
    x, y = _tensors(tg, X[0], X[1])
    with pytest.raises(RuntimeError, match="not have been used"):
        tg.autograd.grad((x * x).sum(), (x, y), create_graph=True)
    gx, gy = tg.autograd.grad((x * x).sum(), (x, y), create_graph=True, allow_unused=True)
    assert gy is None and gx.requires_grad
    _, gy = tg.autograd.grad((x * x).sum(), (x, y), create_graph=True, materialize_grads=True)
    np.testing.assert_array_equal(gy.data, np.zeros(3))


@pytest.mark.parametrize("create_graph", [False, True])
def test_hooks_and_inner_inputs_as_pytorch(create_graph):
    """An inner input's gradient is returned before its hooks, a leaf's after them; the hooks
    change what flows on. With create_graph, they see tensors with a graph, and run again in a
    pass through the gradient's graph."""
    torch = pytest.importorskip("torch")
    results, seen = [], []
    for m in (tg, torch):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        x.register_hook(lambda g: g * 3)
        h = x * x
        h.register_hook(lambda g: seen.append(g) or g * 5)
        gh, gx = m.autograd.grad((h * h).sum(), (h, x), create_graph=create_graph)
        found = [gh, gx]
        if create_graph:
            found += m.autograd.grad(gx.sum(), x)
        results.append([np.asarray(g.detach()) for g in found])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs)
    assert isinstance(seen[0], tg.Tensor) and seen[0].requires_grad == create_graph


def test_ops_changed_in_place_route_gradients_as_the_usual_pass():
    torch = pytest.importorskip("torch")
    results = []
    for m in (tg, torch):
        (x,) = _tensors(m, X[0])
        a = x * 1.0
        b = a.exp()  # (exp's gradient reads its output, not a)
        a.mul_(3.0)  # b used the old a; the new a is 3 old a
        (g,) = m.autograd.grad((b * a).sum(), x, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), x)
        results.append((np.asarray(g.detach()), np.asarray(h)))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_stale_data_is_refused_in_the_recording_pass_too():
    (x,) = _tensors(tg, X[0])
    a = x * 1.0
    b = a.exp()
    b.add_(1.0)  # exp's gradient reads its output, changed since
    with pytest.raises(InplaceModifiedError, match="exp"):
        tg.autograd.grad(b.sum(), x, create_graph=True)


def test_retain_graph_false_frees_the_forward_graph():
    (x,) = _tensors(tg, X[0])
    y = x.exp().sum()
    (g,) = tg.autograd.grad(y, x, create_graph=True, retain_graph=False)
    with pytest.raises(GraphFreedError):
        tg.autograd.grad(y, x)
    with pytest.raises(GraphFreedError):  # g reads exp's output, whose graph is gone
        tg.autograd.grad(g.sum(), x)
    (x,) = _tensors(tg, X[0])
    y = x.exp().sum()
    tg.autograd.grad(y, x, create_graph=True)  # kept by default with create_graph, as in PyTorch
    np.testing.assert_allclose(tg.autograd.grad(y, x)[0].data, np.exp(x.data))


def _cube(x):
    """A user's op, with the record docstring's first-order formula only."""
    return tg.record(x.data ** 3, "cube", (x,), lambda grad: grad * 3 * x.data ** 2)


def _cube_graph(grad, out, x):
    return (grad * 3 * x * x,)


def test_an_op_without_a_graph_vjp_is_differentiable_once():
    (x,) = _tensors(tg, X[0])
    (g,) = tg.autograd.grad(_cube(x).sum(), x, create_graph=True)  # the first order works
    np.testing.assert_allclose(g.data, 3 * X[0] ** 2)
    with pytest.raises(RuntimeError, match="gradient of 'cube' can't be differentiated"):
        tg.autograd.grad(g.sum(), x)


def test_a_user_op_with_a_graph_vjp_differentiates_to_any_order():
    def cube(x):
        return tg.record(x.data ** 3, "cube", (x,), lambda grad: grad * 3 * x.data ** 2,
                         graph_vjp=_cube_graph)

    (x,) = _tensors(tg, X[0])
    assert tg.gradgradcheck(cube, [x])
    (g,) = tg.autograd.grad(cube(x).sum(), x, create_graph=True)
    (h,) = tg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.data, 6 * X[0])


def test_gradgradcheck_catches_a_wrong_second_derivative():
    def wrong_graph(grad, out, x):
        return (grad * 3 * x.detach() * x,)  # misses half of d/dx (3 x^2)

    def cube(x):
        return tg.record(x.data ** 3, "cube", (x,), lambda grad: grad * 3 * x.data ** 2,
                         graph_vjp=wrong_graph)

    (x,) = _tensors(tg, X[0])
    assert tg.gradcheck(cube, [x])  # the first order is right
    with pytest.raises(GradcheckError):
        tg.gradgradcheck(cube, [x])


def test_gradgradcheck_catches_a_wrong_recorded_first_derivative():
    def wrong_graph(grad, out, x):
        return (grad * 2 * x * x,)  # 2 x^2 where backward gives 3 x^2: consistent with its own derivative

    def cube(x):
        return tg.record(x.data ** 3, "cube", (x,), lambda grad: grad * 3 * x.data ** 2,
                         graph_vjp=wrong_graph)

    (x,) = _tensors(tg, X[0])
    with pytest.raises(GradcheckError, match="recorded with create_graph=True"):
        tg.gradgradcheck(cube, [x])


def _functions(m):
    """Two custom Functions, one output and two, whose backward is written with tensor ops."""

    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x

    class DoubleAndExp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x.exp()

        @staticmethod
        def backward(ctx, grad_double, grad_exp):
            (x,) = ctx.saved_tensors
            return grad_double * 2 + grad_exp * x.exp()

    return Cube, DoubleAndExp


def test_custom_functions_run_their_backward_under_grad_mode_as_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for m in (tg, torch):
        cube, double_and_exp = _functions(m)
        (x,) = _tensors(m, X[0])
        doubled, exp = double_and_exp.apply(x)
        y = (cube.apply(x) * doubled).sum() + (exp ** 2).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), x)
        results.append((np.asarray(g.detach()), np.asarray(h)))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_a_once_differentiable_backward_refuses_a_second_pass_by_name():
    class Square(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @tg.autograd.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x

    (x,) = _tensors(tg, X[0])
    (g,) = tg.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.data, 2 * X[0])
    with pytest.raises(RuntimeError, match="gradient of 'Square' can't be differentiated"):
        tg.autograd.grad(g.sum(), x)
    Square.apply(x).sum().backward()  # the usual pass is not affected
    np.testing.assert_allclose(x.grad, 2 * X[0])


def test_backward_with_create_graph_points_to_autograd_grad():
    with pytest.raises(NotImplementedError, match=r"autograd\.grad"):
        (tg.ones(2, requires_grad=True) * 2).sum().backward(create_graph=True)


def _scalar_function(m):
    return lambda t, w: ((w @ t.tanh()) ** 2).sum() * t.exp().sum()


def _flat(result):
    """A tensor, or nested tuples of them, as a flat list of arrays."""
    if isinstance(result, tuple):
        return [a for r in result for a in _flat(r)]
    return [np.asarray(result.detach())]


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp", "jvp", "vjp", "jacobian"])
def test_autograd_functional_matches_torch(name):
    torch = pytest.importorskip("torch")
    results = []
    for m in (tg, torch):
        t, w, v = _tensors(m, X[0], W1.T, X[1], requires_grad=False)
        f = _scalar_function(m)
        functional = getattr(m.autograd.functional, name)
        if name == "hessian":
            result = functional(f, (t, w))
        elif name in ("hvp", "vhp"):
            result = functional(f, (t, w), (v, w * 0.5))[1]
        elif name == "jvp":
            result = functional(lambda a: w @ (a.exp() * a[0]).tanh(), t, v)[1]
        elif name == "vjp":
            result = functional(lambda a: a.sigmoid() * a.sum(), t, v)[1]
        else:
            result = functional(lambda a, b: (b @ a.tanh(), a * a[1]), (t, w))
        results.append(_flat(result))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_functional_results_with_create_graph_differentiate_with_respect_to_the_inputs():
    torch = pytest.importorskip("torch")
    results = []
    for m in (tg, torch):
        (t,) = _tensors(m, X[0])
        (v,) = _tensors(m, X[1], requires_grad=False)
        _, hv = m.autograd.functional.hvp(lambda a: (a.tanh() ** 3).sum(), t, v, create_graph=True)
        jac = m.autograd.functional.jacobian(lambda a: a.exp() * a[0], t, create_graph=True)
        results.append([np.asarray(g) for g in m.autograd.grad((hv * hv).sum() + jac.sum(), t)])
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10)


def test_func_transforms_nest():
    torch = pytest.importorskip("torch")
    results = []
    for m in (tg, torch):
        t, w = _tensors(m, X[0], W1.T, requires_grad=False)
        f = _scalar_function(m)
        second = m.func.grad(lambda a: m.func.grad(f)(a, w).sum())(t)
        hessian = m.func.hessian(f, argnums=(0, 1))(t, w)
        jacjac = m.func.jacrev(m.func.jacrev(lambda a: a.exp() * a[1]))(t)
        results.append(_flat((second, hessian, jacjac)))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_func_grad_of_a_tensor_that_requires_grad_stays_differentiable():
    (w,) = _tensors(tg, X[0])
    g = tg.func.grad(lambda a: (a ** 3).sum())(w)  # w requires grad: the gradient keeps its graph
    assert g.requires_grad
    np.testing.assert_allclose(tg.autograd.grad(g.sum(), w)[0].data, 6 * X[0])
    plain = tg.func.grad(lambda a: (a ** 3).sum())(w.detach())
    assert not plain.requires_grad


def test_dtype_casts_carry_the_graph_and_cast_the_gradient_back():
    torch = pytest.importorskip("torch")
    results = []
    for m in (tg, torch):
        x = m.tensor([0.5, -1.0, 0.25], requires_grad=True)  # float32, computed in float64
        y = ((x.double().exp() * x.double()) ** 2).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), x)
        assert str(g.dtype).endswith("float32") and str(h.dtype).endswith("float32")
        results.append((np.asarray(g.detach()), np.asarray(h)))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_anomaly_detection_names_the_op_in_the_recording_pass():
    x = tg.tensor([0.0, 1.0], dtype=tg.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"), tg.autograd.detect_anomaly(), \
            pytest.raises(RuntimeError, match="Function 'sqrt' returned nan"):
        tg.autograd.grad((x.sqrt() * 0).sum(), x, create_graph=True)  # 0 / (2 sqrt 0) = nan
