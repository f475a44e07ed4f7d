"""Elementwise ops against PyTorch side by side: dtype promotion, edge values and gradients at kinks."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

NAN = float("nan")


def _run(lib, fn, arrays, grad):
    """fn(lib, *tensors) and, with `grad`, the inputs' gradients of a weighted sum of the result."""
    make = torch.from_numpy if lib is torch else tg.tensor
    ins = [make(a.copy()) for a in arrays]
    if grad:
        for t in ins:
            t.requires_grad_(True)
    try:
        out = fn(lib, *ins)
    except Exception as error:  # noqa: BLE001 - the test compares exception types
        return error, None
    grads = None
    if grad:
        weights = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))
        (out * make(weights)).sum().backward()
        grads = [np.asarray(t.grad) for t in ins]
    return out, grads


CASES = {
    # a Python bool in `-` is refused as a bool tensor is
    "float - True": (lambda L, x: x - True, [np.ones(3, np.float32)], False),
    "False - int": (lambda L, x: False - x, [np.ones(3, np.int64)], False),
    "sub(x, True)": (lambda L, x: L.sub(x, True), [np.ones(3)], False),
    "rsub(x, True)": (lambda L, x: L.rsub(x, True), [np.ones(3)], False),
    # bool ** bool tensor is not implemented; bool ** Python bool is
    "bool ** bool": (lambda L, x, y: x ** y, [np.array([True, False]), np.array([False, True])], False),
    "True ** bool": (lambda L, x: True ** x, [np.array([True, False])], False),
    "bool ** True": (lambda L, x: x ** True, [np.array([True, False])], False),
    # comparisons run in the promoted dtype: -3 next to uint8 wraps to 253
    "uint8 < -3": (lambda L, x: x < -3, [np.array([0, 5, 255], np.uint8)], False),
    "uint8 ne 253 0-d": (lambda L, x, y: x != y, [np.array([0, 253], np.uint8), np.array(-3)], False),
    "uint8 <= int8 0-d": (lambda L, x, y: x <= y,
                          [np.array([0, 5, 200], np.uint8), np.array(-1, np.int8)], False),
    "int8 == 1000": (lambda L, x: x == 1000, [np.array([-24, 1], np.int8)], False),
    "float16 == float64 0-d": (lambda L, x, y: x == y,
                               [np.array([1.5], np.float16), np.array(1.5001)], False),
    "logical_and promotes": (lambda L, x, y: L.logical_and(x, y),
                                 [np.array([1.0, 0.0], np.float16), np.array(1e-10)], False),
    # maximum / minimum: ties split, nan sends the gradient to both
    "maximum ties nan": (lambda L, x, y: L.maximum(x, y),
                         [np.array([1.0, 2.0, 3.0, NAN, 0.0]), np.array([1.0, 1.0, 3.0, 1.0, -0.0])], True),
    "minimum ties nan": (lambda L, x, y: L.minimum(x, y),
                         [np.array([1.0, 2.0, 3.0, NAN, 0.0]), np.array([1.0, 1.0, 3.0, NAN, -0.0])], True),
    "relu kink nan": (lambda L, x: L.relu(x), [np.array([-1.0, 0.0, -0.0, 2.0, NAN])], True),
    "F.relu nan": (lambda L, x: L.nn.functional.relu(x) * 2, [np.array([-1.0, 0.0, NAN])], True),
    "where two ints": (lambda L, c: L.where(c, 1, 0), [np.array([True, False])], False),
    "where two bools": (lambda L, c: L.where(c, True, False), [np.array([True, False])], False),
    "where int float": (lambda L, c: L.where(c, 1, 0.5), [np.array([True, False])], False),
    "where tensor number": (lambda L, c, x: L.where(c, x, 0.5),
                            [np.array([True, False]), np.array([1, 2], np.int32)], False),
    "logit eps > 0.5": (lambda L, x: L.logit(x, eps=0.6), [np.array([0.0, 0.5, 0.95, 1.0])], True),
    "logit eps": (lambda L, x: L.logit(x, eps=0.1), [np.array([0.0, 0.05, 0.5, 0.95, 1.0])], True),
    # a representative spread of the family
    "abs kink": (lambda L, x: L.abs(x), [np.array([-1.0, 0.0, -0.0, 1.0])], True),
    "sqrt at 0": (lambda L, x: L.sqrt(x), [np.array([0.0, 1.0, 4.0])], True),
    "pow at 0": (lambda L, x, y: x ** y,
                 [np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, 1.0, 2.0, 0.0])], True),
    "x ** 0": (lambda L, x: x ** 0, [np.array([-1.0, 0.0, 2.0])], True),
    "clamp bounds": (lambda L, x: L.clamp(x, -1.0, 1.0), [np.array([-2.0, -1.0, 0.0, 1.0, 2.0])], True),
    "clamp min > max": (lambda L, x: L.clamp(x, min=1.0, max=-1.0), [np.array([-2.0, 0.0, 2.0])], True),
    "int / int": (lambda L, x, y: x / y, [np.array([3, -7]), np.array([2, 2])], False),
    "int ** -1": (lambda L, x: x ** -1, [np.array([1, 2])], False),
    "int ** -1 tensor": (lambda L, x, y: x ** y, [np.array([1, -1, 2]), np.array([-2, -3, -1])], False),
    "int // 0": (lambda L, x, y: x // y, [np.array([3, 0]), np.array([0, 0])], False),
    "float32 + float64 0-d": (lambda L, x, y: x + y, [np.ones(2, np.float32), np.array(2.5)], False),
    "int32 + float64 0-d": (lambda L, x, y: x + y, [np.ones(2, np.int32), np.array(2.5)], False),
    "int32 * 1.5": (lambda L, x: x * 1.5, [np.ones(2, np.int32)], False),
    "bool + bool": (lambda L, x, y: x + y, [np.array([True, False]), np.array([True, True])], False),
    "uint8 + 300": (lambda L, x: x + 300, [np.array([1, 2], np.uint8)], False),
    "exp int": (lambda L, x: L.exp(x), [np.array([0, 1], np.int16)], False),
    "int add_ float": (lambda L, x: x.clone().add_(1.5), [np.array([1, 2])], False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    fn, arrays, grad = CASES[name]
    expected, expected_grads = _run(torch, fn, arrays, grad)
    got, got_grads = _run(tg, fn, arrays, grad)
    if isinstance(expected, Exception):
        assert isinstance(got, type(expected)), f"torch raised {expected!r}, tensorgrad gave {got!r}"
        return
    assert not isinstance(got, Exception), f"torch gave {expected}, tensorgrad raised {got!r}"
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype) == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(np.asarray(got.data, dtype=np.float64),
                               expected.detach().numpy().astype(np.float64), rtol=1e-6, equal_nan=True)
    for ours, theirs in zip(got_grads or [], expected_grads or [], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "tanh", "sigmoid", "relu", "abs", "neg", "sign",
                                  "isnan", "sqrt", "erf", "sum", "mean"])
def test_a_python_number_instead_of_a_tensor_is_pytorchs_type_error_naming_the_op(name):
    with pytest.raises(TypeError):
        getattr(torch, name)(0.5)
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'input' .*must be Tensor, not float"):
        getattr(tg, name)(0.5)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "bool"])
def test_isclose_measures_integers_in_the_default_float_without_wrapping(dtype):
    cases = [(2**40 + 1, 2**40, {"rtol": 0, "atol": 0}), (2**60 + 100, 2**60, {"rtol": 0, "atol": 50}),
             (-2**63, 0, {}), (16777217, 16777216, {"rtol": 0, "atol": 0.5}), (-128, 0, {}),
             (250, 3, {"atol": 10}), (5, 3, {"atol": 2}), (100000, 100001, {}), (1, 0, {})]
    for a, b, kwargs in cases:
        x, y = (torch.tensor([v]).to(getattr(torch, dtype)) for v in (a, b))
        expected = torch.isclose(x, y, **kwargs).item()
        ours = tg.isclose(tg.tensor(x.numpy()), tg.tensor(y.numpy()), **kwargs).item()
        assert ours == expected, (a, b, kwargs)
