"""`tensorgrad.nn.activation`: every activation against PyTorch, at its kinks too.

One table names each function with the same arguments in both libraries. Every row is checked
against finite differences (float64, at points away from the kinks) and against PyTorch
(values and gradients at a grid that includes every kink and threshold, where the side a
derivative takes is a choice PyTorch made; on the CPU, and on a GPU where there is one), then
float32 in gives float32 out, the in-place forms, the modules and the errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.device import to_numpy
from tensorgrad.nn import activation as A

# (id, our call, torch's call): the same arguments on both sides.
TABLE = [
    ("gelu", lambda x: A.gelu(x), lambda F, x: F.gelu(x)),
    ("gelu_tanh", lambda x: A.gelu(x, approximate="tanh"), lambda F, x: F.gelu(x, approximate="tanh")),
    ("silu", lambda x: A.silu(x), lambda F, x: F.silu(x)),
    ("elu", lambda x: A.elu(x), lambda F, x: F.elu(x)),
    ("elu_alpha", lambda x: A.elu(x, alpha=0.5), lambda F, x: F.elu(x, alpha=0.5)),
    ("selu", lambda x: A.selu(x), lambda F, x: F.selu(x)),
    ("celu", lambda x: A.celu(x), lambda F, x: F.celu(x)),
    ("celu_alpha", lambda x: A.celu(x, alpha=2.0), lambda F, x: F.celu(x, alpha=2.0)),
    ("leaky_relu", lambda x: A.leaky_relu(x), lambda F, x: F.leaky_relu(x)),
    ("leaky_relu_slope", lambda x: A.leaky_relu(x, 0.2), lambda F, x: F.leaky_relu(x, 0.2)),
    ("relu6", lambda x: A.relu6(x), lambda F, x: F.relu6(x)),
    ("hardtanh", lambda x: A.hardtanh(x), lambda F, x: F.hardtanh(x)),
    ("hardtanh_limits", lambda x: A.hardtanh(x, -2.5, 3.0), lambda F, x: F.hardtanh(x, -2.5, 3.0)),
    ("hardsigmoid", lambda x: A.hardsigmoid(x), lambda F, x: F.hardsigmoid(x)),
    ("hardswish", lambda x: A.hardswish(x), lambda F, x: F.hardswish(x)),
    ("softplus", lambda x: A.softplus(x), lambda F, x: F.softplus(x)),
    ("softplus_beta", lambda x: A.softplus(x, beta=2.0, threshold=6.0),
     lambda F, x: F.softplus(x, beta=2.0, threshold=6.0)),
    ("softsign", lambda x: A.softsign(x), lambda F, x: F.softsign(x)),
    ("mish", lambda x: A.mish(x), lambda F, x: F.mish(x)),
    ("logsigmoid", lambda x: A.logsigmoid(x), lambda F, x: F.logsigmoid(x)),
    ("softmin", lambda x: A.softmin(x, dim=-1), lambda F, x: F.softmin(x, dim=-1)),
]
IDS = [row[0] for row in TABLE]

# PyTorch's CPU hardsigmoid backward multiplies by 1/6 rounded to float32, also for float64
# tensors; ours multiplies by 1/6 itself, so the gradients differ in the 8th digit.
GRAD_RTOL = {"hardsigmoid": 1e-7}

# Every kink and threshold of the table (0, +-1, +-2.5, +-3, 6, 20), the points either side, and
# values far out where exp overflows if computed naively.
KINKS = np.array([-800.0, -25.0, -6.0, -3.5, -3.0, -2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5, 3.0, 3.5,
                  6.0, 6.5, 19.5, 20.0, 20.5, 800.0])


@pytest.mark.parametrize(("name", "ours", "theirs"), TABLE, ids=IDS)
def test_gradient_matches_finite_differences(name, ours, theirs):
    rng = np.random.default_rng(0)
    # Odd multiples of 0.05 up to +-7.45: never a kink, never within 0.05 of one.
    x = tg.tensor(rng.integers(-75, 75, (3, 5)) * 0.1 + 0.05, dtype=tg.float64, requires_grad=True)
    assert tg.gradcheck(ours, [x], eps=1e-7)


@pytest.mark.parametrize(("name", "ours", "theirs"), TABLE, ids=IDS)
def test_values_and_gradients_match_torch_at_the_kinks(name, ours, theirs, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    points = np.stack([KINKS, rng.standard_normal(KINKS.size) * 4])
    weights = rng.standard_normal(points.shape)
    x = tg.tensor(points, requires_grad=True, dtype=tg.float64, device=device)
    xt = torch.tensor(points, requires_grad=True)
    out, expected = ours(x), theirs(torch.nn.functional, xt)
    out.backward(tg.tensor(weights, device=device))
    expected.backward(torch.tensor(weights))
    rtol = 1e-12 if device == "cpu" else 1e-10  # a GPU's exp and log differ from the CPU's in the last bits
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=rtol, atol=1e-14)
    np.testing.assert_allclose(to_numpy(x.grad), xt.grad.numpy(), rtol=max(GRAD_RTOL.get(name, rtol), rtol),
                               atol=1e-14)


@pytest.mark.parametrize(("name", "ours", "theirs"), TABLE, ids=IDS)
def test_float32_stays_float32(name, ours, theirs):
    x = tg.randn(4, 3, requires_grad=True)
    out = ours(x)
    assert out.dtype == tg.float32
    out.sum().backward()
    assert x.grad.dtype == np.float32


def test_integer_input_is_refused_except_where_pytorch_takes_it():
    ints = tg.tensor([-7, 0, 2, 9])
    with pytest.raises(NotImplementedError, match="gelu.*int64"):
        A.gelu(ints)
    clipped = A.relu6(ints)
    assert clipped.dtype == tg.int64 and clipped.tolist() == [0, 0, 2, 6]
    soft = A.softsign(ints)
    assert soft.dtype == tg.float32
    np.testing.assert_allclose(soft.data, [-7 / 8, 0, 2 / 3, 0.9])


@pytest.mark.parametrize("name", ["silu", "elu", "selu", "celu", "leaky_relu", "relu6", "hardtanh",
                                  "hardsigmoid", "hardswish", "mish"])
def test_inplace_writes_into_the_input_and_keeps_the_gradient(name):
    torch = pytest.importorskip("torch")
    points = np.array([-4.0, -3.0, -0.5, 0.0, 0.5, 3.0, 7.0])
    a = tg.tensor(points, requires_grad=True, dtype=tg.float64)
    at = torch.tensor(points, requires_grad=True)
    x, xt = a * 2, at * 2
    out = getattr(A, name)(x, inplace=True)
    expected = getattr(torch.nn.functional, name)(xt, inplace=True)
    assert out is x
    (out * tg.tensor(points, dtype=tg.float64)).sum().backward()
    (expected * torch.tensor(points)).sum().backward()
    np.testing.assert_allclose(x.data, xt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(a.grad, at.grad.numpy(), rtol=GRAD_RTOL.get(name, 1e-12))


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match="leaf"):
        A.elu(tg.randn(3, requires_grad=True), inplace=True)


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: A.gelu(tg.randn(2), approximate="fast"), RuntimeError, "none.*tanh"),
    (lambda: A.hardtanh(tg.randn(2), 2.0, 1.0), ValueError, "min_val"),
    (lambda: A.celu(tg.randn(2), alpha=0.0), RuntimeError, "alpha"),
    (lambda: A.silu([1.0, 2.0]), TypeError, "silu.*list"),
], ids=["gelu approximate", "hardtanh limits", "celu alpha", "not a tensor"])
def test_bad_arguments_raise_pytorchs_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


# (module name, constructor arguments, the function call it must equal)
MODULES = [
    ("GELU", (), lambda x: A.gelu(x)),
    ("GELU", ("tanh",), lambda x: A.gelu(x, "tanh")),
    ("SiLU", (), lambda x: A.silu(x)),
    ("Mish", (), lambda x: A.mish(x)),
    ("LeakyReLU", (0.3,), lambda x: A.leaky_relu(x, 0.3)),
    ("ELU", (0.7,), lambda x: A.elu(x, 0.7)),
    ("SELU", (), lambda x: A.selu(x)),
    ("CELU", (2.0,), lambda x: A.celu(x, 2.0)),
    ("Hardtanh", (-0.5, 2.0), lambda x: A.hardtanh(x, -0.5, 2.0)),
    ("ReLU6", (), lambda x: A.relu6(x)),
    ("Hardsigmoid", (), lambda x: A.hardsigmoid(x)),
    ("Hardswish", (), lambda x: A.hardswish(x)),
    ("Softplus", (2.0, 1.0), lambda x: A.softplus(x, 2.0, 1.0)),
    ("Softsign", (), lambda x: A.softsign(x)),
    ("LogSigmoid", (), lambda x: A.logsigmoid(x)),
    ("Softmin", (0,), lambda x: A.softmin(x, 0)),
    ("Softmax", (0,), lambda x: tg.softmax(x, 0)),
    ("LogSoftmax", (1,), lambda x: tg.log_softmax(x, 1)),
]


@pytest.mark.parametrize(("name", "args", "function"), MODULES, ids=[f"{m[0]}{m[1]}" for m in MODULES])
def test_modules_call_their_function(name, args, function):
    x = tg.randn(3, 4, dtype=tg.float64) * 3
    layer = getattr(A, name)(*args)
    np.testing.assert_array_equal(layer(x).data, function(x).data)
    assert list(layer.parameters()) == [] and layer.state_dict() == {}


@pytest.mark.parametrize("name", ["SiLU", "Mish", "LeakyReLU", "ELU", "SELU", "CELU", "Hardtanh", "ReLU6",
                                  "Hardsigmoid", "Hardswish"])
def test_inplace_modules_write_into_their_input(name):
    x = tg.randn(3, 4, dtype=tg.float64) * 3
    expected = getattr(A, name)()(x).data
    assert getattr(A, name)(inplace=True)(x) is x
    np.testing.assert_array_equal(x.data, expected)


def test_module_reprs_match_pytorchs():
    torch = pytest.importorskip("torch")
    for name, args, _ in MODULES:
        assert repr(getattr(A, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    for name in ["SiLU", "Mish", "ReLU6", "Hardswish", "Hardsigmoid", "SELU"]:
        assert repr(getattr(A, name)(inplace=True)) == repr(getattr(torch.nn, name)(inplace=True))
    pairs = [(A.LeakyReLU(0.2, True), torch.nn.LeakyReLU(0.2, True)),
             (A.Hardtanh(-2, 2, True), torch.nn.Hardtanh(-2, 2, True)),
             (A.Softmax(), torch.nn.Softmax()), (A.Softmin(), torch.nn.Softmin())]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(("shape", "dim"), [((5,), 0), ((2, 5), 1), ((2, 3, 4), 0), ((2, 3, 4, 5), 1)])
def test_softmax_without_dim_picks_pytorchs_implicit_dim_and_warns(shape, dim):
    x = tg.randn(*shape, dtype=tg.float64)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        out = A.Softmax()(x)
    np.testing.assert_allclose(out.data.sum(axis=dim), 1.0)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        low = A.softmin(x)
    np.testing.assert_allclose(low.data, tg.softmax(-x, dim).data)
