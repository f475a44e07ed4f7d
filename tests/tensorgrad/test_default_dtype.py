"""`tg.set_default_dtype`, `tg.Tensor(...)` and the dtype of `tg.tensor([...])`, as PyTorch has them.

The default float is what Python floats become, what factories make without `dtype=`, what an
integer tensor turns into in `exp` or `/`, and what layers' weights are: float32, unless
`set_default_dtype` says float64 (a habit of scientific code and of gradient checks).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn

# Each entry makes a tensor in library `m` with no dtype given.
MADE = {
    "tensor of floats": lambda m: m.tensor([1.5, 2.0]),
    "tensor of ints": lambda m: m.tensor([1, 2]),
    "zeros": lambda m: m.zeros(2),
    "ones": lambda m: m.ones(2, 3),
    "full float": lambda m: m.full((2,), 1.5),
    "empty": lambda m: m.empty(2),
    "eye": lambda m: m.eye(2),
    "arange float": lambda m: m.arange(0, 1, 0.5),
    "arange int": lambda m: m.arange(3),
    "linspace": lambda m: m.linspace(0, 1, 3),
    "logspace": lambda m: m.logspace(0, 1, 3),
    "rand": lambda m: m.rand(2),
    "randn": lambda m: m.randn(2),
    "int / int": lambda m: m.arange(3) / 2,
    "int + float": lambda m: m.arange(3) + 0.5,
    "exp of int": lambda m: m.arange(3).exp(),
    "Tensor(list)": lambda m: m.Tensor([1, 2]),
    "Tensor(sizes)": lambda m: m.Tensor(2, 3),
    "Linear weight": lambda m: m.nn.Linear(2, 3).weight,
    "Conv2d weight": lambda m: m.nn.Conv2d(1, 2, 3).weight,
    "LSTM weight": lambda m: m.nn.LSTM(2, 3).weight_ih_l0,
    "Embedding weight": lambda m: m.nn.Embedding(4, 2).weight,
    "BatchNorm running_mean": lambda m: m.nn.BatchNorm1d(3).running_mean,
    "LayerNorm weight": lambda m: m.nn.LayerNorm(3).weight,
    "PReLU weight": lambda m: m.nn.PReLU().weight,
    "MultiheadAttention weight": lambda m: m.nn.MultiheadAttention(4, 2).in_proj_weight,
}


@pytest.fixture
def float64_default():
    """float64 as the default float in both libraries for one test, float32 again after it."""
    torch = pytest.importorskip("torch")
    tg.set_default_dtype(tg.float64)
    torch.set_default_dtype(torch.float64)
    yield torch
    tg.set_default_dtype(tg.float32)
    torch.set_default_dtype(torch.float32)


def _name(dtype) -> str:
    return str(dtype).replace("torch.", "")


@pytest.mark.parametrize("name", list(MADE))
def test_float64_as_the_default_dtype_as_pytorch(name, float64_default):
    torch = float64_default
    assert tg.get_default_dtype() == tg.float64 and torch.get_default_dtype() == torch.float64
    assert _name(MADE[name](tg).dtype) == _name(MADE[name](torch).dtype)


@pytest.mark.parametrize("name", list(MADE))
def test_the_default_dtype_is_float32(name):
    torch = pytest.importorskip("torch")
    assert tg.get_default_dtype() == tg.float32
    assert _name(MADE[name](tg).dtype) == _name(MADE[name](torch).dtype)


def test_the_default_shows_in_the_repr_only_when_it_is_not_the_default(float64_default):
    torch = float64_default
    assert repr(tg.tensor([1.5, 2.0])) == repr(torch.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
    assert repr(tg.tensor([1.5], dtype=tg.float32)).startswith("tensor([1.5000], dtype=")


def test_only_floating_dtypes_can_be_the_default():
    with pytest.raises(TypeError, match="floating-point"):
        tg.set_default_dtype(tg.int64)
    assert tg.get_default_dtype() == tg.float32


def test_a_model_trains_in_float64_after_set_default_dtype(float64_default):
    model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    x = tg.tensor([[0.5, -1.0], [1.5, 2.0]])
    loss = model(x).pow(2).mean()
    loss.backward()
    assert loss.dtype == tg.float64 and all(p.grad.dtype == np.float64 for p in model.parameters())
    assert tg.gradcheck(lambda a: (a * a).tanh(), [tg.tensor([0.3, -0.7], requires_grad=True)])


def test_the_legacy_constructor_as_pytorch():
    torch = pytest.importorskip("torch")
    for args in ([[1, 2]], [[[1.5, 2.0]]], [2, 3], [], [np.array([1, 2], dtype=np.int64)]):
        ours, theirs = tg.Tensor(*args), torch.Tensor(*args)
        assert ours.shape == tuple(theirs.shape) and _name(ours.dtype) == _name(theirs.dtype)
        if ours.numel() and args and not isinstance(args[0], int):
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert not tg.Tensor([1.0]).requires_grad and tg.Tensor([1.0]).is_leaf


def test_a_list_of_tensors_or_numpy_numbers_keeps_their_dtype():
    torch = pytest.importorskip("torch")
    for make in (lambda m: m.tensor([m.tensor(1.0, dtype=m.float64), m.tensor(2.0, dtype=m.float64)]),
                 lambda m: m.tensor([np.float64(1.5), np.float64(2.5)]),
                 lambda m: m.tensor([[np.float64(1.5)], [np.float64(2.5)]]),
                 lambda m: m.tensor([m.tensor(1.0), m.tensor(2.0)]),
                 lambda m: m.tensor([1.5, 2.5])):
        assert _name(make(tg).dtype) == _name(make(torch).dtype)
