"""A user's own differentiable op, written with `tg.record` as the built-in ops are.

`record(data, op, inputs, *vjps)` turns a forward array and one gradient formula per input into
a graph node; it reduces broadcast gradients, skips inputs that need no gradient, honours grad
mode and checks in-place versions. These tests write ops the documented way and check them
with `tg.gradcheck`, the public finite-difference checker.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg


def cube(x: tg.Tensor) -> tg.Tensor:
    """x ** 3. Derivative: 3 x ** 2."""
    return tg.record(x.data ** 3, "cube", (x,), lambda grad: grad * 3 * x.data ** 2)


def smooth_max(a: tg.Tensor, b: tg.Tensor) -> tg.Tensor:
    """log(e**a + e**b), broadcasting. d/da = sigmoid(a - b), d/db = sigmoid(b - a)."""
    out = np.logaddexp(a.data, b.data)
    return tg.record(out, "smooth_max", (a, b),
                     lambda grad: grad * np.exp(a.data - out),
                     lambda grad: grad * np.exp(b.data - out))


def test_cube_forward_backward_and_gradcheck():
    x = tg.tensor([[-1.5, 0.5], [2.0, 3.0]], dtype=tg.float64, requires_grad=True)
    y = cube(x)
    assert y.op == "cube" and y.parents == (x,) and not y.is_leaf
    np.testing.assert_allclose(y.data, x.data ** 3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad, 3 * x.data ** 2)
    assert tg.gradcheck(cube, [x])
    assert tg.gradcheck(lambda t: cube(t.T * 2.0).sum(0), [x], elementwise=True)


def test_custom_op_composes_with_built_in_ops_and_matches_torch():
    torch = pytest.importorskip("torch")
    values = np.array([0.5, -1.0, 2.0])
    x = tg.tensor(values, requires_grad=True)
    (cube(x.tanh()) * x).sum().backward()
    t = torch.tensor(values, requires_grad=True)
    (t.tanh() ** 3 * t).sum().backward()
    np.testing.assert_allclose(x.grad, t.grad.numpy(), rtol=1e-12)


def test_record_reduces_broadcast_gradients_for_custom_ops():
    a = tg.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    b = tg.tensor([0.3, -0.2, 0.0, 1.0], dtype=tg.float64, requires_grad=True)
    c = tg.tensor(0.7, dtype=tg.float64, requires_grad=True)
    out = smooth_max(smooth_max(a, b), c)
    assert out.shape == (3, 4)
    out.sum().backward()
    assert a.grad.shape == (3, 4) and b.grad.shape == (4,) and c.grad.shape == ()
    # The weights of a softmax over the three inputs sum to one per element.
    total = a.grad + b.grad / 3 + c.grad / 12
    np.testing.assert_allclose(total.sum(), 12.0, rtol=1e-12)
    assert tg.gradcheck(lambda p, q, r: smooth_max(smooth_max(p, q), r), [a, b, c])


def test_a_wrong_gradient_formula_is_caught_by_gradcheck():
    def bad_cube(x):
        return tg.record(x.data ** 3, "cube", (x,), lambda grad: grad * 3 * x.data)

    x = tg.tensor([0.5, 2.0], dtype=tg.float64, requires_grad=True)
    with pytest.raises(tg.GradcheckError, match="input 0"):
        tg.gradcheck(bad_cube, [x])


def test_gradcheck_wants_float64_inputs():
    with pytest.warns(UserWarning, match="float64"):  # PyTorch warns too, and checks anyway
        tg.gradcheck(cube, [tg.tensor([1.0], requires_grad=True)], raise_exception=False)


def test_record_skips_the_vjp_of_an_input_that_needs_no_gradient():
    def never(grad):
        raise AssertionError("this input needs no gradient")

    w = tg.tensor([1.0, 2.0], requires_grad=True)
    x = tg.tensor([3.0, 4.0])  # data: no gradient wanted
    out = tg.record(x.data * w.data, "mul", (x, w), never, lambda grad: grad * x.data)
    out.sum().backward()
    np.testing.assert_array_equal(w.grad, [3.0, 4.0])
    assert x.grad is None


def test_record_under_no_grad_or_without_grad_inputs_makes_a_leaf():
    x = tg.tensor([1.0], requires_grad=True)
    with tg.no_grad():
        assert cube(x).is_leaf and not cube(x).requires_grad
    assert cube(tg.tensor([1.0])).is_leaf


def test_record_checks_versions_of_what_the_vjp_reads():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    y = cube(h)
    with tg.no_grad():
        h.mul_(5.0)
    with pytest.raises(tg.InplaceModifiedError, match="cube"):
        y.sum().backward()


def test_record_is_documented_with_an_example():
    assert "record(" in tg.record.__doc__ and "lambda grad" in tg.record.__doc__
