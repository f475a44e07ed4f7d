"""Bad input to a Value op or a scalargrad.nn module: a clear error that names the op, never a
bare message from deep inside Python, never a wrong number.
"""

import math

import numpy as np
import pytest

from scalargrad import Value
from scalargrad.nn import MLP, Layer, Neuron

# --- division by zero: Python's error, naming the op and the operands ------------------------


@pytest.mark.parametrize(
    "divide",
    [
        lambda: Value(1.0) / 0,
        lambda: Value(1.0) / 0.0,
        lambda: Value(1.0) / Value(0.0),
        lambda: 1 / Value(0.0),
        lambda: 2.5 / Value(-0.0),
        lambda: Value(1.0) / np.float64(0.0),
    ],
)
def test_division_by_zero_is_a_zero_division_error_naming_the_op(divide):
    with pytest.raises(ZeroDivisionError, match=r"Value division by zero: .* / "):
        divide()


def test_division_by_zero_message_shows_both_operands():
    with pytest.raises(ZeroDivisionError, match=r"Value division by zero: 1\.5 / 0$"):
        Value(1.5) / 0


def test_zero_to_a_negative_power_is_pytorchs_inf_not_a_bare_error():
    # `**` gives PyTorch's answers (float64 tensors give inf and the gradients below).
    for out, base in [(lambda x: x**-1, Value(0.0)), (lambda x: x**-2.5, Value(0.0))]:
        y = out(base)
        y.backward()
        assert y.data == math.inf
        assert base.grad == -math.inf
    assert (0 ** Value(-1.0)).data == math.inf
    assert (Value(0.0) ** Value(-1.0)).data == math.inf


def test_log_of_zero_and_negatives_gives_pytorchs_answers():
    zero, negative = Value(0.0), Value(-2.0)
    a, b = zero.log(), negative.log()
    a.backward()
    b.backward()
    assert a.data == -math.inf and zero.grad == math.inf
    assert math.isnan(b.data) and negative.grad == -0.5


def test_log_at_the_edges_matches_pytorch():
    torch = pytest.importorskip("torch")
    for x in [0.0, -2.0, 1e-300]:
        v = Value(x)
        out = v.log()
        out.backward()
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        torch.log(t).backward()
        for ours, theirs in [(out.data, torch.log(t).item()), (v.grad, t.grad.item())]:
            assert (math.isnan(ours) and math.isnan(theirs)) or ours == theirs


# --- operands that are not numbers: Python's TypeError, naming the op -------------------------


@pytest.mark.parametrize(
    "expr, symbol",
    [
        (lambda a: a + "1", r"\+"),
        (lambda a: "1" + a, r"\+|concatenate"),
        (lambda a: a * [1.0], r"\*|multiply"),
        (lambda a: a - None, "-"),
        (lambda a: None - a, "-"),
        (lambda a: a / "2", "/"),
        (lambda a: "2" / a, "/"),
        (lambda a: a ** "2", r"\*\*"),
        (lambda a: "2" ** a, r"\*\*"),
        (lambda a: a + True, r"\+"),
        (lambda a: a * (1 + 2j), r"\*"),
    ],
)
def test_non_number_operands_are_type_errors_naming_the_op(expr, symbol):
    with pytest.raises(TypeError, match=symbol) as error:
        expr(Value(2.0))
    assert "Value" in str(error.value) or "str" in str(error.value)


def test_numpy_numbers_are_operands():
    a = Value(2.0)
    out = a * np.float64(3.0) + np.int64(1) - np.float32(0.5)
    out.backward()
    assert out.data == 6.5 and a.grad == 3.0
    assert isinstance(np.int64(-1) * a, Value)  # micrograd's notebook writes -yi * score


def test_sum_and_dot_name_the_bad_item():
    with pytest.raises(TypeError, match=r"Value.sum: term 1 is a str"):
        Value.sum([Value(1.0), "x"])
    with pytest.raises(TypeError, match=r"Value.dot: input 1 is a NoneType"):
        Value.dot([Value(1.0), Value(2.0)], [1.0, None])
    with pytest.raises(TypeError, match=r"Value.dot: bias is a str"):
        Value.dot([Value(1.0)], [1.0], "b")
    with pytest.raises(ValueError, match=r"Value.dot: 2 weights but 3 inputs"):
        Value.dot([Value(1.0), Value(2.0)], [1.0, 2.0, 3.0])


# --- scalargrad.nn: sizes at construction, inputs at the call ---------------------------------


def test_mlp_with_too_many_inputs_names_both_counts():
    with pytest.raises(ValueError, match=r"MLP\(2, \[3, 1\]\) takes 2 inputs, got 3"):
        MLP(2, [3, 1])([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"MLP\(2, \[3, 1\]\) takes 2 inputs, got 1"):
        MLP(2, [3, 1])([1.0])
    with pytest.raises(ValueError, match=r"MLP\(2, \[3, 1\]\) takes 2 inputs, got 1"):
        MLP(2, [3, 1])(1.0)


def test_layer_and_neuron_name_themselves_and_both_counts():
    with pytest.raises(ValueError, match=r"Layer\(3, 2\) takes 3 inputs, got 2"):
        Layer(3, 2)([1.0, 2.0])
    with pytest.raises(ValueError, match=r"Neuron\(3\) takes 3 inputs, got 4"):
        Neuron(3)([1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize("bad, name", [("ab", "str"), (None, "NoneType"), ({1.0: 2.0}.keys(), None)])
def test_inputs_that_are_not_a_list_of_numbers_are_type_errors(bad, name):
    if name is None:  # an iterable of numbers is fine, as a list would be
        assert isinstance(MLP(1, [2, 1], seed=0)(bad), Value)
        return
    with pytest.raises(TypeError, match=rf"MLP\(2, \[3, 1\]\): inputs must be a list .* got {name}"):
        MLP(2, [3, 1])(bad)


@pytest.mark.parametrize("item, name", [("a", "str"), (None, "NoneType"), (True, "bool"), ([1.0], "list")])
def test_an_input_that_is_not_a_number_is_a_type_error_naming_its_position(item, name):
    with pytest.raises(TypeError, match=rf"MLP\(2, \[3, 1\]\): input 1 is a {name}"):
        MLP(2, [3, 1])([1.0, item])
    with pytest.raises(TypeError, match=rf"Neuron\(2\): input 1 is a {name}"):
        Neuron(2)([1.0, item])


@pytest.mark.parametrize(
    "build, error, message",
    [
        (lambda: MLP(2.0, [3, 1]), TypeError, r"MLP: nin must be an int, got float"),
        (lambda: MLP(2, [3.5, 1]), TypeError, r"MLP: nouts\[0\] must be an int, got float"),
        (lambda: MLP(2, [3, -1]), ValueError, r"MLP: nouts\[1\] must be >= 0, got -1"),
        (lambda: MLP(2, 3), TypeError, r"MLP: nouts must be a list of layer sizes .* got int"),
        (lambda: MLP(2, "31"), TypeError, r"MLP: nouts must be a list of layer sizes .* got str"),
        (lambda: Layer(-1, 3), ValueError, r"Layer: nin must be >= 0, got -1"),
        (lambda: Layer(2, True), TypeError, r"Layer: nout must be an int, got bool"),
        (lambda: Neuron(-2), ValueError, r"Neuron: nin must be >= 0, got -2"),
        (lambda: Neuron("3"), TypeError, r"Neuron: nin must be an int, got str"),
    ],
)
def test_bad_sizes_are_clear_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_numpy_int_sizes_are_sizes():
    model = MLP(np.int64(2), [np.int32(3), 1], seed=0)
    assert len(model.parameters()) == 2 * 3 + 3 + 3 + 1


def test_label_must_be_a_string():
    with pytest.raises(TypeError, match=r"Value: label must be a str, got int"):
        Value(1.0, label=3)


def test_gradcheck_names_a_bad_input_and_a_bad_eps():
    from scalargrad import gradcheck

    with pytest.raises(TypeError, match=r"gradcheck: input 1 is a str"):
        gradcheck(lambda x, y: x * y, [1.0, "2"])
    with pytest.raises(ValueError, match=r"gradcheck: eps must be positive, got 0"):
        gradcheck(lambda x: x * x, [1.0], eps=0)
