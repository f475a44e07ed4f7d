"""Every Value op: forward values and gradients against central finite differences.

One table of ops drives the gradient checks (tutorial chapters 1 and 2). Points have both signs
and stay away from kinks (relu at 0) and outside each op's domain edges.
"""

import itertools
import math
import sys

import numpy as np
import pytest

from scalargrad import GradcheckError, Value, gradcheck

POINTS = [-2.3, -0.7, 0.4, 1.9]


def same(ours, reference):
    """Equal to 12 digits, or both nan (PyTorch's answer for an undefined derivative)."""
    return (math.isnan(ours) and math.isnan(reference)) or ours == pytest.approx(
        reference, rel=1e-12, abs=1e-300
    )


POSITIVE = [0.3, 0.9, 1.7, 3.2]

# name: (Value function, float reference, points)
UNARY = {
    "neg": (lambda a: -a, lambda x: -x, POINTS),
    "relu": (lambda a: a.relu(), lambda x: max(x, 0.0), POINTS),
    "tanh": (lambda a: a.tanh(), math.tanh, POINTS),
    "exp": (lambda a: a.exp(), math.exp, POINTS),
    "log": (lambda a: a.log(), math.log, POSITIVE),
    "sigmoid": (lambda a: a.sigmoid(), lambda x: 1 / (1 + math.exp(-x)), POINTS),
    "pow int 2": (lambda a: a**2, lambda x: x**2, POINTS),
    "pow int 3": (lambda a: a**3, lambda x: x**3, POINTS),
    "pow int -2": (lambda a: a**-2, lambda x: x**-2, POINTS),
    "pow 0": (lambda a: a**0, lambda x: 1.0, POINTS),
    "pow float 0.5": (lambda a: a**0.5, math.sqrt, POSITIVE),
    "pow float -1.5": (lambda a: a**-1.5, lambda x: x**-1.5, POSITIVE),
    "pow float 2.0": (lambda a: a**2.0, lambda x: x**2.0, POINTS),
    "self times self": (lambda a: a * a, lambda x: x * x, POINTS),
    "chain": (lambda a: (a * 2 + 1).tanh().exp(), lambda x: math.exp(math.tanh(2 * x + 1)), POINTS),
}

BINARY = {
    "add": (lambda a, b: a + b, lambda x, y: x + y, POINTS),
    "sub": (lambda a, b: a - b, lambda x, y: x - y, POINTS),
    "mul": (lambda a, b: a * b, lambda x, y: x * y, POINTS),
    "truediv": (lambda a, b: a / b, lambda x, y: x / y, POINTS),
    "pow Value": (lambda a, b: a**b, lambda x, y: x**y, POSITIVE),
    "sum": (lambda a, b: Value.sum([a, b, a * b]), lambda x, y: x + y + x * y, POINTS),
    "sum with start": (lambda a, b: Value.sum([b, 2.0], start=a), lambda x, y: x + y + 2.0, POINTS),
    "mixed": (lambda a, b: (a * b).sigmoid() + (a - 0.5 * b).relu() * b, None, POINTS),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_forward_and_gradient(name):
    fn, reference, points = UNARY[name]
    for x in points:
        assert fn(Value(x)).data == pytest.approx(reference(x), rel=1e-12)
        assert gradcheck(fn, [x], atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("name", BINARY)
def test_binary_forward_and_gradient(name):
    fn, reference, points = BINARY[name]
    for x, y in itertools.product(points, points):
        if reference is not None:
            assert fn(Value(x), Value(y)).data == pytest.approx(reference(x, y), rel=1e-12)
        assert gradcheck(fn, [x, y], atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize(
    "fn, x, grad",
    [
        (lambda a: a.relu(), -1.5, 0.0),
        (lambda a: a.relu(), 1.5, 1.0),
        (lambda a: a.tanh(), 0.5, 1 - math.tanh(0.5) ** 2),
        (lambda a: a.exp(), 1.2, math.exp(1.2)),
        (lambda a: a.log(), 4.0, 0.25),
        (lambda a: a.sigmoid(), 0.0, 0.25),
        (lambda a: a**3, -2.0, 12.0),
        (lambda a: a**-1, 2.0, -0.25),
    ],
)
def test_known_derivatives(fn, x, grad):
    a = Value(x)
    fn(a).backward()
    assert a.grad == pytest.approx(grad, rel=1e-12)


@pytest.mark.parametrize(
    "expr, data, grad",
    [
        (lambda a: 2 * a, 6.0, 2.0),
        (lambda a: 2.5 * a, 7.5, 2.5),
        (lambda a: a * 2, 6.0, 2.0),
        (lambda a: a * 2.5, 7.5, 2.5),
        (lambda a: 1 + a, 4.0, 1.0),
        (lambda a: 1.5 + a, 4.5, 1.0),
        (lambda a: a + 1, 4.0, 1.0),
        (lambda a: a + 1.5, 4.5, 1.0),
        (lambda a: 1 - a, -2.0, -1.0),
        (lambda a: 1.5 - a, -1.5, -1.0),
        (lambda a: a - 1, 2.0, 1.0),
        (lambda a: a - 1.5, 1.5, 1.0),
        (lambda a: 1 / a, 1 / 3, -1 / 9),
        (lambda a: 2.0 / a, 2 / 3, -2 / 9),
        (lambda a: a / 2, 1.5, 0.5),
        (lambda a: a / 2.0, 1.5, 0.5),
        (lambda a: 2**a, 8.0, 8.0 * math.log(2)),
        (lambda a: 2.0**a, 8.0, 8.0 * math.log(2)),
        (lambda a: a**2, 9.0, 6.0),
        (lambda a: -a, -3.0, -1.0),
    ],
)
def test_reflected_and_mixed_forms(expr, data, grad):
    a = Value(3.0)
    out = expr(a)
    assert isinstance(out, Value)
    out.backward()
    assert out.data == pytest.approx(data, rel=1e-12)
    assert a.grad == pytest.approx(grad, rel=1e-12)


def test_numbers_become_floats():
    assert type(Value(3).data) is float
    assert type(Value(np.float64(2.5)).data) is float
    assert type(Value(np.int64(4)).data) is float
    assert Value(3).grad == 0.0


@pytest.mark.parametrize(
    "bad, name", [("s", "str"), (None, "NoneType"), ([1.0], "list"), (1 + 2j, "complex"), (True, "bool")]
)
def test_non_real_data_is_a_type_error_naming_the_type(bad, name):
    with pytest.raises(TypeError, match=name):
        Value(bad)


def test_non_number_exponent_is_a_type_error():
    with pytest.raises(TypeError, match="str"):
        Value(2.0) ** "2"


def test_repr_shows_data_and_grad():
    a = Value(-4.0, label="a")
    (a * a).backward()
    assert repr(a) == "Value(data=-4, grad=-8, label='a')"
    assert repr(Value(2.5)) == "Value(data=2.5, grad=0)"


def test_hashable_by_identity():
    a, b = Value(1.0), Value(1.0)
    assert a != b
    assert a == a
    assert len({a, b}) == 2
    assert {a: 1}[a] == 1


def test_value_pow_value_matches_pytorch_conventions():
    # (base, exponent): data, d/dbase, d/dexponent, as PyTorch float64 gives them
    nan, inf = math.nan, math.inf
    cases = {
        (2.0, 0.5): (math.sqrt(2), 0.5 / math.sqrt(2), math.sqrt(2) * math.log(2)),
        (-2.0, 2.0): (4.0, -4.0, nan),
        (-2.0, 0.5): (nan, nan, nan),
        (0.0, 2.0): (0.0, 0.0, 0.0),
        (0.0, 0.0): (1.0, 0.0, 0.0),
        (0.0, -1.0): (inf, -inf, -inf),
        (0.0, 0.5): (0.0, inf, 0.0),
    }
    for (x, p), expected in cases.items():
        base, exponent = Value(x), Value(p)
        out = base**exponent
        out.backward()
        got = (out.data, base.grad, exponent.grad)
        assert all(same(g, e) for g, e in zip(got, expected, strict=True)), (x, p, got)


def test_value_pow_value_against_pytorch():
    torch = pytest.importorskip("torch")
    for x, p in [(2.0, 0.5), (-2.0, 2.0), (-2.0, 0.5), (0.0, 2.0), (0.0, 0.0), (0.0, -1.0), (1.5, -2.5)]:
        base, exponent = Value(x), Value(p)
        out = base**exponent
        out.backward()
        bt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        pt = torch.tensor(p, dtype=torch.float64, requires_grad=True)
        ot = bt**pt
        ot.backward()
        assert same(out.data, ot.item())
        assert same(base.grad, bt.grad.item())
        assert same(exponent.grad, pt.grad.item())


def test_unary_ops_against_pytorch():
    torch = pytest.importorskip("torch")
    ops = {
        "tanh": (lambda a: a.tanh(), torch.tanh),
        "exp": (lambda a: a.exp(), torch.exp),
        "log": (lambda a: a.log(), torch.log),
        "sigmoid": (lambda a: a.sigmoid(), torch.sigmoid),
        "relu": (lambda a: a.relu(), torch.relu),
        "pow": (lambda a: a**-1.5, lambda t: t**-1.5),
    }
    for name, (ours, theirs) in ops.items():
        for x in [-2.3, -0.7, 0.4, 1.9, 30.0, -800.0]:
            a = Value(x)
            out = ours(a)
            out.backward()
            t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            o = theirs(t)
            o.backward()
            assert same(out.data, o.item()), (name, x)
            assert same(a.grad, t.grad.item()), (name, x)


def test_extreme_inputs_give_pytorch_answers_not_exceptions():
    assert Value(1000.0).exp().data == math.inf
    assert Value(-1000.0).sigmoid().data == 0.0
    assert Value(1000.0).sigmoid().data == 1.0
    assert Value(0.0).log().data == -math.inf
    assert math.isnan(Value(-1.0).log().data)
    assert (Value(0.0) ** -1).data == math.inf
    assert math.isnan((Value(-8.0) ** (1 / 3)).data)


def test_sum_is_one_node_with_parents_in_order():
    a, b, c = Value(1.0), Value(2.0), Value(3.0)
    s = Value.sum([a, b, c])
    assert s.parents == (a, b, c)
    assert s.data == 6.0
    s.backward()
    assert (a.grad, b.grad, c.grad) == (1.0, 1.0, 1.0)


def test_sum_start_value_is_a_parent_even_when_zero():
    # A neuron's bias starts at 0.0: it must still be a term, or it never gets a gradient.
    bias, w = Value(0.0), Value(2.0)
    s = Value.sum([w * 3.0], start=bias)
    assert s.parents[0] is bias
    s.backward()
    assert bias.grad == 1.0
    assert w.grad == 3.0


def test_sum_numbers_become_constant_leaves_and_zero_start_is_dropped():
    a = Value(1.5)
    s = Value.sum([a, 2, 0.25])
    assert len(s.parents) == 3
    assert s.data == 3.75
    s2 = Value.sum([a], start=10)
    assert s2.data == 11.5
    assert [p.data for p in s2.parents] == [10.0, 1.5]
    assert Value.sum([]).data == 0.0


def test_sum_is_exactly_rounded():
    # Chained float additions lose the 1.0 here; the n-ary sum does not.
    terms = [Value(1e16), Value(1.0), Value(-1e16)]
    assert Value.sum(terms).data == 1.0


def test_gradcheck_catches_a_wrong_derivative():
    def wrong_square(a):
        out = a * a

        def _backward(out, grad):
            a, _ = out.parents
            a.grad += 3 * a.data * grad  # should be 2 * a

        out._backward = _backward
        return out

    with pytest.raises(GradcheckError, match=r"input 1: backward gives 4\.5 where finite differences give 3"):
        gradcheck(lambda x, y: x + wrong_square(y), [0.5, 1.5])


def test_numerical_and_backward_grads_agree_and_leave_inputs_alone():
    from scalargrad.gradcheck import backward_grads, numerical_grads

    a = Value(2.0)
    f = lambda x, y: x * y + y**2
    assert numerical_grads(f, [a, 3.0]) == pytest.approx([3.0, 8.0], rel=1e-8)
    assert backward_grads(f, [a, 3.0]) == [3.0, 8.0]
    assert a.grad == 0.0
    with pytest.raises(TypeError, match="float"):
        gradcheck(lambda x: 1.0, [a])


def test_dot_gradients_against_finite_differences():
    # w1*x1 + w2*x2 + w3*x3 + b, every term a leaf: six weights and inputs and the bias.
    def f(w1, w2, w3, x1, x2, x3, b):
        return Value.dot([w1, w2, w3], [x1, x2, x3], b)

    gradcheck(f, [0.3, -1.2, 0.8, 2.0, -0.5, 1.5, 0.25])
    gradcheck(lambda w, x: Value.dot([w, w], [x, w]).tanh(), [0.7, -0.4])  # a leaf in two places


def test_dot_against_pytorch():
    torch = pytest.importorskip("torch")
    w = [Value(v) for v in (0.3, -1.2, 0.8)]
    x = [Value(v) for v in (2.0, -0.5, 1.5)]
    b = Value(0.25)
    out = Value.dot(w, x, b).tanh()
    out.backward()
    wt = torch.tensor([0.3, -1.2, 0.8], dtype=torch.float64, requires_grad=True)
    xt = torch.tensor([2.0, -0.5, 1.5], dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(0.25, dtype=torch.float64, requires_grad=True)
    ot = (torch.dot(wt, xt) + bt).tanh()
    ot.backward()
    assert out.data == pytest.approx(ot.item(), rel=1e-14)
    assert [v.grad for v in w] == pytest.approx(wt.grad.tolist(), rel=1e-14)
    assert [v.grad for v in x] == pytest.approx(xt.grad.tolist(), rel=1e-14)
    assert b.grad == pytest.approx(bt.grad.item(), rel=1e-14)


def test_dot_adds_in_micrograds_order():
    # micrograd's neuron computes sum((wi*xi ...), b): b + w1*x1 + w2*x2 + ..., left to right,
    # which loses the 0.5 and the 1.0 here; Python 3.12's sum compensates and keeps them.
    w = [1e16, 1.0, -1e16]
    x = [1.0, 1.0, 1.0]
    micrograd = 0.5
    for wi, xi in zip(w, x):
        micrograd = micrograd + wi * xi
    out = Value.dot([Value(v) for v in w], x, 0.5)
    assert out.data == (micrograd if sys.version_info < (3, 12) else 1.5)
    assert [p.data for p in out.parents] == [*w, *x, 0.5]  # numbers became constant leaves


def test_dot_without_bias_and_empty():
    a, b = Value(2.0), Value(3.0)
    out = Value.dot([a], [b])
    out.backward()
    assert (out.data, a.grad, b.grad, out.parents) == (6.0, 3.0, 2.0, (a, b))
    assert Value.dot([], [], 1.5).data == 1.5


def test_backward_functions_are_shared_by_all_nodes_of_an_op():
    a, b = Value(2.0), Value(3.0)
    assert (a * b)._backward is (b * a)._backward
    assert (a**2)._backward is (b**2)._backward
    assert (a.tanh())._backward is (b.tanh())._backward
