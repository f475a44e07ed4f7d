"""PyTorch's answer or a clear error: the inputs a PyTorch user gives, checked against PyTorch.

Each row is the same expression written once for both libraries (`m` is `tensorgrad` or `torch`):
the values, the dtype and the shape must agree, and where PyTorch raises, so must we, with the
same exception type and a message that names the op. The silent cases come first: a wrong number
is the worst thing an autograd library can do.
"""

import numpy as np
import pytest

import tensorgrad as tg

INF = float("inf")


# --- same values, same dtype ----------------------------------------------------------------------

ANSWERS = {
    "float32 + 0-d float64 stays float32": lambda m: m.ones(3) + m.tensor(1.0, dtype=m.float64),
    "0-d float64 + float32 stays float32": lambda m: m.tensor(1.0, dtype=m.float64) * m.ones(3),
    "int32 + 0-d float64 is float64": lambda m: m.ones(3, dtype=m.int32) + m.tensor(1.5, dtype=m.float64),
    "int32 + 0-d int64 stays int32": lambda m: m.ones(3, dtype=m.int32) + m.tensor(7),
    "int32 + int64 is int64": lambda m: m.ones(3, dtype=m.int32) + m.ones(3, dtype=m.int64),
    "int32 + python float is float32": lambda m: m.ones(3, dtype=m.int32) + 1.5,
    "int32 * float32 is float32": lambda m: m.ones(3, dtype=m.int32) * m.full((3,), 0.1),
    "0-d float64 + 0-d float32 is float64": lambda m: m.tensor(1.0) + m.tensor(1.0, dtype=m.float64),
    "bool + python int is int64": lambda m: m.tensor([True, False]) + 1,
    "int / int is float32": lambda m: m.tensor([1, 2, 3]) / m.tensor([2, 2, 2]),
    "int / python int is float32": lambda m: m.tensor([1, 2, 3]) / 2,
    "exp of an int is float32": lambda m: m.tensor(2).exp(),
    "sqrt of an int is float32": lambda m: m.tensor([4, 9]).sqrt(),
    "tanh of an int is float32": lambda m: m.tensor([1, 2]).tanh(),
    "sigmoid of an int is float32": lambda m: m.tensor([1, 2]).sigmoid(),
    "log of an int is float32": lambda m: m.tensor([1, 2]).log(),
    "abs of an int stays int": lambda m: m.tensor([-2, 3]).abs(),
    "relu of an int stays int": lambda m: m.tensor([-2, 3]).relu(),
    "int32 ** 2 stays int32": lambda m: m.tensor([-2, 0, 2], dtype=m.int32) ** 2,
    "int32 ** 2.5 is float32": lambda m: m.tensor([2, 4], dtype=m.int32) ** 2.5,
    "int ** negative int tensor truncates":
        lambda m: m.tensor([2, 4, 1, -1, -1]) ** m.tensor([-1, -1, -3, -3, -2]),
    "int ** 0-d int tensor stays int32": lambda m: m.tensor([2, 4], dtype=m.int32) ** m.tensor(2),
    "softmax of inf is nan everywhere": lambda m: m.tensor([INF, 1.0, 0.0]).softmax(0),
    "log_softmax of inf is nan everywhere": lambda m: m.tensor([INF, 1.0, 0.0]).log_softmax(0),
    "softmax of all -inf is nan": lambda m: m.tensor([-INF, -INF]).softmax(0),
    "logsumexp of inf is inf": lambda m: m.tensor([INF, 1.0, 0.0]).logsumexp(0),
    "logsumexp of all -inf is -inf": lambda m: m.tensor([-INF, -INF]).logsumexp(0),
    "softmax over an empty dim": lambda m: m.zeros(0, 2).softmax(1),
    "softmax of an empty dim": lambda m: m.zeros(2, 0).softmax(1),
    "logsumexp over an empty dim is -inf": lambda m: m.zeros(2, 0).logsumexp(1),
    "sum over an empty dim is 0": lambda m: m.zeros(2, 0).sum(1),
    "mean over an empty dim is nan": lambda m: m.zeros(2, 0).mean(1),
    "argmax along a dim of an empty tensor": lambda m: m.zeros(0, 2).argmax(1),
    "max(dim) values": lambda m: m.tensor([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]]).max(dim=1)[0],
    "max(dim) indices": lambda m: m.tensor([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]]).max(dim=1)[1],
    "min(dim, keepdim) indices": lambda m: m.tensor([[1.0, 5.0, 1.0], [7.0, 0.0, 7.0]]).min(1, True).indices,
    "max of two tensors": lambda m: m.max(m.tensor([1.0, 5.0]), m.tensor([[3.0, 2.0]])),
    "amax of a 0-d tensor": lambda m: m.tensor(3.0).amax(),
    "an int between index arrays is a select":
        lambda m: m.arange(24).reshape(2, 3, 4)[0, :, m.tensor([0, 3])],
    "an int after an index array": lambda m: m.arange(24).reshape(2, 3, 4)[m.tensor([1, 0]), 2],
    "ints and arrays around an ellipsis": lambda m: m.arange(24).reshape(2, 3, 4)[..., 1, m.tensor([2, 0])],
    "squeeze of a 0-d tensor": lambda m: m.tensor(5.0).squeeze(0),
    "squeeze of a 0-d tensor, dim -1": lambda m: m.tensor(5.0).squeeze(-1),
    "a 0-d tensor's argmax(dim=0)": lambda m: m.tensor(5.0).argmax(0),
    "a size given as a tuple": lambda m: m.zeros((2, 3)),
    "a size given as a list": lambda m: m.ones([2, 1]),
    "an int, None, then an index array":
        lambda m: m.arange(32).reshape(2, 4, 4)[1, None, :, m.tensor([0, 3])],
    "an int, a slice, None, an index array":
        lambda m: m.arange(48).reshape(3, 4, 4)[2, :, None, m.tensor([0, 3, 1])],
    "index arrays around an empty Ellipsis":
        lambda m: m.arange(24).reshape(3, 4, 2)[:, m.tensor([3, 0, 0]), ..., m.tensor([1])],
    "a mask after an int and None":
        lambda m: m.arange(8).reshape(2, 4)[0, None, m.tensor([True, False, True, True])],
    "None between two index arrays":
        lambda m: m.arange(12).reshape(3, 4)[m.tensor([0, 2]), None, m.tensor([1, 3])],
}

# `t[key] = value` selects as `t[key]` does: the value has the shape PyTorch's selection has.
SETITEM_KEYS = {
    "an int among index arrays": lambda m: (0, slice(None), m.tensor([1, 3])),
    "an int, None, then an index array": lambda m: (1, None, slice(None), m.tensor([0, 2])),
    "index arrays around an empty Ellipsis":
        lambda m: (slice(None), m.tensor([3, 0]), Ellipsis, m.tensor([1])),
}


@pytest.mark.parametrize("name", list(SETITEM_KEYS))
def test_setitem_selects_as_pytorch_with_its_gradients(name):
    torch = pytest.importorskip("torch")
    shape = (2, 3, 4) if name != "index arrays around an empty Ellipsis" else (3, 4, 2)
    start = np.arange(24.0).reshape(shape)
    value_shape = tuple(torch.tensor(start)[SETITEM_KEYS[name](torch)].shape)
    value = np.random.default_rng(0).standard_normal(value_shape)
    weights = np.random.default_rng(1).standard_normal(shape)
    results = []
    for m in (tg, torch):
        x, v = m.tensor(start, requires_grad=True), m.tensor(value, requires_grad=True)
        y = x * 1.0
        y[SETITEM_KEYS[name](m)] = v
        (y * m.tensor(weights)).sum().backward()
        results.append([np.asarray(a.detach().numpy() if m is torch else a.data) for a in (y,)]
                       + [np.asarray(g.numpy() if m is torch else g) for g in (x.grad, v.grad)])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("name", list(ANSWERS))
def test_the_same_answer_as_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = ANSWERS[name](tg), ANSWERS[name](torch)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), name
    assert ours.shape == tuple(theirs.shape), name
    # The same formula in float32 may differ in the last bit between numpy's and PyTorch's kernels.
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=0, err_msg=name)


# --- same error type, a message naming the op -------------------------------------------------------

ERRORS = {
    "a float size": (lambda m: m.zeros(2.5), "zeros"),
    "a float size among ints": (lambda m: m.randn(2.9, 2), "randn"),
    "a float size in a tuple": (lambda m: m.ones((2, 2.0)), "ones"),
    "a negative size": (lambda m: m.zeros(-1), "zeros"),
    "a float eye": (lambda m: m.eye(2.5), "eye"),
    "a negative eye": (lambda m: m.eye(-1), "eye"),
    "arange with step 0": (lambda m: m.arange(0, 5, 0), "step"),
    "argmax over a tuple of dims": (lambda m: m.zeros(2, 3).argmax(dim=(0, 1)), "argmax"),
    "mean over a repeated dim": (lambda m: m.zeros(2, 3).mean(dim=(0, 0)), "appears multiple times"),
    "sum over a repeated dim": (lambda m: m.zeros(2, 3).sum(dim=(1, -1)), "appears multiple times"),
    "sum over a dim out of range": (lambda m: m.zeros(2, 3).sum(dim=5), "range"),
    "sum over a float dim": (lambda m: m.zeros(2, 3).sum(dim=1.0), "sum"),
    "softmax over a dim out of range": (lambda m: m.zeros(2, 3).softmax(dim=2), "range"),
    "argmax over a dim out of range": (lambda m: m.zeros(2, 3).argmax(dim=2), "range"),
    "transpose a dim out of range": (lambda m: m.zeros(2, 3).transpose(0, 2), "range"),
    "unsqueeze a dim out of range": (lambda m: m.zeros(2, 3).unsqueeze(3), "range"),
    "squeeze a dim out of range": (lambda m: m.zeros(2, 3).squeeze(2), "range"),
    "flatten a dim out of range": (lambda m: m.zeros(2, 3).flatten(2), "range"),
    "permute a repeated dim": (lambda m: m.zeros(2, 3).permute(0, 0), "permute"),
    "argmax over an empty dim": (lambda m: m.zeros(2, 0).argmax(1), "argmax"),
    "max over an empty dim": (lambda m: m.zeros(2, 0).max(1), "max"),
    "amax over an empty dim": (lambda m: m.zeros(2, 0).amax(1), "amax"),
    "max of an empty tensor": (lambda m: m.zeros(2, 0).max(), "max"),
    "reshape to a wrong size": (lambda m: m.zeros(2, 3).reshape(4, 2), "(4, 2)"),
    "view to a wrong size": (lambda m: m.zeros(2, 3).view(4, 2), "(4, 2)"),
    "expand a non-singleton dim": (lambda m: m.zeros(2, 3).expand(3, 3), "expand"),
    "matmul of mismatched shapes": (lambda m: m.zeros(2, 3) @ m.zeros(4, 5), "(2, 3)"),
    "matmul of mixed dtypes": (lambda m: m.zeros(2, 3) @ m.zeros(3, 2, dtype=m.float64), "dtype"),
    "a float index": (lambda m: m.zeros(2, 3)[1.0], "indices"),
    "a float tensor as index": (lambda m: m.zeros(2, 3)[m.tensor([1.0])], "indices"),
    "an index out of range": (lambda m: m.zeros(2, 3)[5], "5"),
    "a ragged list": (lambda m: m.tensor([[1, 2], [3]]), "length"),
    "int ** negative int": (lambda m: m.tensor([2, 4]) ** -1, "negative integer powers"),
    "item of many elements": (lambda m: m.zeros(2, 3).item(), "item"),
    "bool - bool": (lambda m: m.tensor([True]) - m.tensor([False]), "subtraction"),
    "1 - a bool mask": (lambda m: 1 - m.tensor([True, False]), "subtraction"),
    "float - bool": (lambda m: m.ones(2) - m.tensor([True, False]), "subtraction"),
}

# Where the message differs from PyTorch's but the type agrees, the first word we check differs.
_OUR_WORDS = {"a ragged list": "equal lengths", "item of many elements": "one element"}


@pytest.mark.parametrize("name", list(ERRORS))
def test_the_same_error_as_pytorch(name):
    torch = pytest.importorskip("torch")
    build, words = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        build(torch)
    with pytest.raises(theirs.type) as ours:
        build(tg)
    assert _OUR_WORDS.get(name, words).lower() in str(ours.value).lower(), str(ours.value)


def test_shape_errors_are_runtime_errors_and_value_errors_both():
    """Broadcast errors are ValueError (the design's rule) and RuntimeError (PyTorch's): both."""
    for bad in (lambda: tg.ones(2, 3) + tg.ones(4, 3), lambda: tg.ones(2, 3) @ tg.ones(4, 5),
                lambda: tg.ones(2, 3).view(5)):
        with pytest.raises(ValueError) as info:
            bad()
        assert isinstance(info.value, RuntimeError)
    with pytest.raises(ValueError, match=r"\+ \(add\): shapes \(2, 3\) and \(4, 3\)"):
        tg.ones(2, 3) + tg.ones(4, 3)


def test_an_error_inside_a_binary_op_is_not_reported_as_broadcasting():
    with pytest.raises(RuntimeError) as info:
        tg.tensor([1, 2]) & tg.tensor([1.0, 2.0]) if hasattr(tg.Tensor, "__and__") else (
            tg.tensor([2, 4]) ** -1)
    assert "broadcast" not in str(info.value)


# --- gradients ------------------------------------------------------------------------------------


def test_x_to_the_zero_has_a_zero_gradient_at_zero():
    x = tg.tensor([0.0, 2.0], requires_grad=True)
    (x ** 0).sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


def test_zero_to_the_zero_gives_zero_gradients_like_pytorch():
    torch = pytest.importorskip("torch")
    values = ([0.0, 0.0, 2.0, 0.0], [0.0, 2.0, 0.0, -1.0])
    a, b = (tg.tensor(v, dtype=tg.float64, requires_grad=True) for v in values)
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values)
    (a ** b).sum().backward()
    (ta ** tb).sum().backward()
    np.testing.assert_array_equal(a.grad, ta.grad.numpy())
    np.testing.assert_array_equal(b.grad, tb.grad.numpy())


def test_max_with_a_dim_unpacks_into_values_and_indices():
    t = tg.tensor([[1.0, 9.0], [4.0, 2.0]], requires_grad=True)
    vals, idx = t.max(dim=1)
    assert vals.tolist() == [9.0, 4.0] and idx.tolist() == [1, 0]
    vals.sum().backward()
    np.testing.assert_array_equal(t.grad, [[0, 1], [1, 0]])


# --- .grad and .data ------------------------------------------------------------------------------


def test_assigning_a_tensor_to_grad_stores_its_array_and_optimizers_use_it():
    for make in (lambda w: tg.optim.SGD([w], lr=1.0), lambda w: tg.optim.Adam([w], lr=1.0)):
        w = tg.zeros(3, requires_grad=True)
        opt = make(w)
        w.grad = tg.ones(3)
        assert type(w.grad) is np.ndarray
        opt.step()
        np.testing.assert_allclose(w.data, [-1.0, -1.0, -1.0], rtol=1e-6)


@pytest.mark.parametrize("bad, error", [
    (np.ones(1, np.float32), RuntimeError),          # would broadcast: PyTorch refuses it
    (np.ones((3, 1), np.float32), RuntimeError),
    (np.ones(3, np.float64), TypeError),              # another dtype
    ([1.0, 1.0, 1.0], TypeError),                     # not an array
])
def test_a_gradient_of_the_wrong_shape_or_dtype_is_refused(bad, error):
    w = tg.zeros(3, requires_grad=True)
    with pytest.raises(error, match="grad"):
        w.grad = bad
    assert w.grad is None


def test_assigning_a_tensor_to_data_stores_its_array():
    w = tg.zeros(3, requires_grad=True)
    w.data = tg.ones(2)
    assert type(w.data) is np.ndarray and w.shape == (2,)
    assert "1." in repr(w)
    (w * 3).sum().backward()
    np.testing.assert_array_equal(w.grad, [3.0, 3.0])
    with pytest.raises(TypeError, match="data"):
        w.data = [1.0, 2.0]


# --- custom ops through tg.record -----------------------------------------------------------------


def test_record_refuses_a_gradient_of_the_wrong_shape_naming_the_op_and_input():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = tg.record(x.data * 2, "double", (x,), lambda grad: np.ones(3))
    with pytest.raises(RuntimeError, match=r"'double'.*input 0.*\(3,\).*\(2,\)"):
        y.sum().backward()
    assert x.grad is None


def test_record_sums_a_broadcast_gradient_and_casts_it_to_the_inputs_dtype():
    x = tg.tensor([1.0, 2.0], dtype=tg.float32, requires_grad=True)
    y = tg.record(x.data * 2, "double", (x,), lambda grad: np.ones((4, 2)))
    y.sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [4.0, 4.0]


def test_record_needs_one_gradient_function_per_input():
    a, b = tg.ones(2, requires_grad=True), tg.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match=r"record\('pair'\): got 1 gradient functions for 2 inputs"):
        tg.record(a.data + b.data, "pair", (a, b), lambda grad: grad)


def test_record_refuses_a_gradient_that_is_not_an_array():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = tg.record(x.data * 2, "double", (x,), lambda grad: [1.0, 1.0])
    with pytest.raises(TypeError, match=r"'double' for input 0 returned list"):
        y.sum().backward()


def test_record_refuses_inputs_that_are_not_tensors():
    with pytest.raises(TypeError, match=r"record\('f'\): inputs must be a tuple of Tensors"):
        tg.record(np.ones(2), "f", (np.ones(2),), lambda grad: grad)
