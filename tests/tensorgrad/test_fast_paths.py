"""The speed paths give PyTorch's numbers: scalar powers computed as PyTorch computes them, linear
on a batch of sequences as one matrix product, erf by ranges."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

SPECIAL = [0.0, -0.0, np.inf, -np.inf, 1e-30, -1e-30, 1e30, 3.0, -2.5]


def _values(dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.standard_normal(5000) * 10, rng.random(5000) * 1e-3, SPECIAL]).astype(dtype)


@pytest.mark.parametrize("exponent", [1, 2, 3, 0.5, -0.5, -1, -2, 2.0, 4, 1.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scalar_powers_have_pytorchs_bits_and_gradient(exponent, dtype):
    x = _values(dtype)
    ours = tg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    with np.errstate(all="ignore"):
        out = ours ** exponent
    expected = theirs ** exponent
    same = np.isnan(out.detach().numpy()) == np.isnan(expected.detach().numpy())
    assert same.all()
    if exponent in (1, 2, 3, -0.5, -1, -2):  # the forms PyTorch computes without pow()
        np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    else:
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=2e-6)
    weights = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    (ours_grad,) = tg.autograd.grad((out * tg.tensor(weights)).sum(), ours)
    (their_grad,) = torch.autograd.grad((expected * torch.tensor(weights)).sum(), theirs)
    finite = np.isfinite(their_grad.numpy())
    np.testing.assert_allclose(ours_grad.numpy()[finite], their_grad.numpy()[finite], rtol=1e-6)


def test_a_cube_is_a_product_not_numpys_power():
    x = tg.tensor([1.1, -2.7, 3.3], dtype=tg.float32)
    np.testing.assert_array_equal((x ** 3).numpy(), x.numpy() * x.numpy() * x.numpy())


@pytest.mark.parametrize("shape", [(4, 5, 6), (2, 3, 4, 6), (0, 5, 6), (3, 0, 6), (6,)])
def test_linear_on_batches_of_sequences_as_pytorch(shape):
    rng = np.random.default_rng(2)
    x, weight, bias = rng.standard_normal(shape), rng.standard_normal((7, 6)), rng.standard_normal(7)
    outputs, grads = [], []
    for m in (tg, torch):
        tensors = [m.tensor(a, requires_grad=True) for a in (x, weight, bias)]
        out = m.nn.functional.linear(*tensors)
        seed = m.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)) / 10)
        grads.append([np.asarray(g.numpy()) for g in m.autograd.grad((out * seed).sum(), tensors)])
        outputs.append(out.detach().numpy())
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-12, atol=1e-12)
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_linear_on_a_transposed_batch_reads_it_right():
    x = tg.randn(5, 4, 3, dtype=tg.float64).transpose(0, 1)  # (4, 5, 3), not contiguous
    layer = tg.nn.Linear(3, 2, dtype=tg.float64)
    weight, bias = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    expected = np.einsum("abi,oi->abo", x.numpy(), weight) + bias
    np.testing.assert_allclose(layer(x).detach().numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_by_ranges_as_pytorch(dtype):
    x = np.concatenate([_values(dtype), np.array([0.46875, 4.0, -4.0, 27.0, np.nan], dtype=dtype)])
    ours, theirs = tg.erf(tg.tensor(x)).numpy(), torch.erf(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=4e-7 if dtype == "float32" else 1e-15, atol=0)
    assert np.array_equal(np.signbit(ours[np.isfinite(x)]), np.signbit(theirs[np.isfinite(x)]))


ZERO_D = {
    "erf": lambda m, t: m.erf(t),
    "gelu": lambda m, t: m.nn.functional.gelu(t),
    "gelu tanh": lambda m, t: m.nn.functional.gelu(t, approximate="tanh"),
    "softmax": lambda m, t: m.softmax(t, 0),
    "cube": lambda m, t: t ** 3,
    "layer_norm of one": lambda m, t: m.nn.functional.layer_norm(t.reshape(1, 1) * 2, (1,)).sum() + t,
}


@pytest.mark.parametrize("name", sorted(ZERO_D))
@pytest.mark.parametrize("value", [0.3, -1.7, 5.0])
def test_the_in_place_paths_take_a_0d_tensor(name, value):
    """numpy hands a 0-d result back as a scalar, which the in-place steps can't write into."""
    results = []
    for m in (tg, torch):
        x = m.tensor(value, dtype=m.float64, requires_grad=True)
        y = ZERO_D[name](m, x)
        (grad,) = m.autograd.grad(y * 3, x)
        results.append((tuple(y.shape), y.item(), grad.item()))
    (ours_shape, ours_value, ours_grad), (their_shape, their_value, their_grad) = results
    assert ours_shape == their_shape == ()
    assert ours_value == pytest.approx(their_value, rel=1e-12, abs=1e-15)
    assert ours_grad == pytest.approx(their_grad, rel=1e-12, abs=1e-15)
