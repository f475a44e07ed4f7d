"""float16 reductions, scans and norms accumulate in float32 and round once, as PyTorch's: checked
on 5,000 numbers near 1 along a strided axis, where float16 addition alone stops at 4096 (each
next 1 is half of float16's step there, and rounds away)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

DATA = np.random.default_rng(0).uniform(0.5, 1.5, (5000, 4)).astype(np.float16)


CASES = {
    "sum": lambda lib, x: x.sum(0),
    "sum_of_a_transpose": lambda lib, x: x.T.sum(),
    "mean": lambda lib, x: x.mean(0),
    "var": lambda lib, x: x.var(0),
    "std_mean": lambda lib, x: lib.std_mean(x, 0)[0],
    "nansum": lambda lib, x: x.nansum(0),
    "nanmean": lambda lib, x: x.nanmean(0),
    "logsumexp": lambda lib, x: lib.logsumexp(x, 0),
    "cumsum": lambda lib, x: x.cumsum(0)[-8:],
    "cumprod": lambda lib, x: x[:300].cumprod(0)[-8:],
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x, 0)[-8:],
    "einsum": lambda lib, x: lib.einsum("ij->j", x),
    "einsum_contraction": lambda lib, x: lib.einsum("ij,ik->jk", x, x * 0.01),
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x.T.contiguous(), (5000,))[:, :8],
    "group_norm": lambda lib, x: lib.nn.functional.group_norm(x.T.reshape(1, 4, 5000), 2)[0, :, :8],
    "batch_norm": lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True)[:8],
    "mse_loss": lambda lib, x: lib.nn.functional.mse_loss(x, x * 0),
    "cross_entropy": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.zeros(5000, dtype=lib.long)),
}


def as_float64(out) -> np.ndarray:
    return np.asarray(out.detach().float().numpy(), dtype=np.float64)


@pytest.mark.parametrize("name", CASES)
def test_float16_values_are_pytorchs(name):
    ours = as_float64(CASES[name](tg, tg.tensor(DATA)))
    theirs = as_float64(CASES[name](torch, torch.tensor(DATA)))
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=4e-3, atol=1e-2)  # a few of float16's steps at most


@pytest.mark.parametrize("name", ["sum", "mean", "cumsum", "layer_norm", "einsum"])
def test_float16_gradients_are_pytorchs(name):
    grads = []
    for lib in (tg, torch):
        x = lib.tensor(DATA, requires_grad=True)
        out = CASES[name](lib, x)
        (out.float() * lib.linspace(0.5, 1.5, out.numel()).reshape(out.shape)).sum().backward()
        grads.append(np.asarray(x.grad if lib is tg else x.grad.numpy(), dtype=np.float64))
        assert str(x.grad.dtype).endswith("float16")
    np.testing.assert_allclose(grads[0], grads[1], rtol=4e-3, atol=1e-3)


def test_a_float16_sum_that_overflows_is_inf_without_a_warning():
    import warnings

    big = tg.tensor(np.full((5000, 4), 30, np.float16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(big.sum(0).numpy()).all() and np.isinf(big.cumsum(0)[-1].numpy()).all()


def test_float16_grid_sample_places_pixels_as_float32_does():
    """grid_sample computes float16 in float32: across 456 pixels a float16 place is a quarter of a
    pixel coarse. PyTorch's CPU float16 kernel computes there in float16 and gives nan on this
    input; tensorgrad gives PyTorch's float32 answer, rounded to float16."""
    rng = np.random.default_rng(1)
    image = rng.uniform(0, 255, (1, 2, 345, 456)).astype(np.float16)
    grid = rng.uniform(-1.1, 1.1, (1, 40, 50, 2)).astype(np.float16)
    ours = tg.nn.functional.grid_sample(tg.tensor(image), tg.tensor(grid), align_corners=False)
    wide = torch.nn.functional.grid_sample(torch.tensor(image).float(), torch.tensor(grid).float(),
                                           align_corners=False)
    assert ours.dtype == tg.float16
    np.testing.assert_allclose(ours.numpy().astype(np.float64), wide.half().numpy().astype(np.float64),
                               rtol=1e-3, atol=1e-3)


def test_float16_gradients_summed_over_a_batch_add_in_float32():
    """A bias's gradient is a sum over the batch: a float16 linear layer under autocast, a float16
    broadcast add and a float16 convolution, over 8192 rows, give PyTorch's gradients (adding in
    float16 stopped at 2048)."""
    rows = DATA.astype(np.float32)[:4096].repeat(2, axis=0)  # 8192 rows
    found = []
    for lib in (tg, torch):
        layer = lib.nn.Linear(4, 3)
        shift = lib.zeros(4, dtype=lib.float16, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.float16):
            out = layer(lib.tensor(rows))
        (out.float().sum() + (lib.tensor(rows).half() + shift).float().sum()).backward()
        conv = lib.nn.Conv2d(2, 3, 3).half()
        conv(lib.ones(64, 2, 10, 10, dtype=lib.float16)).float().sum().backward()
        found.append([np.asarray(g if lib is tg else g.numpy(), dtype=np.float64)
                      for g in (layer.bias.grad, shift.grad, conv.bias.grad)])
    for ours, theirs in zip(*found, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-3)
    assert found[0][0].tolist() == [8192.0] * 3


def test_a_float16_layer_norms_bias_gradient_is_the_exact_sum():
    """LayerNorm on float16 input with float32 parameters: the bias's gradient sums 8192 rows in
    float32. (PyTorch's CPU kernel adds them in float16 and stops at 2048 and 4096.)"""
    norm = tg.nn.LayerNorm(4)
    scale = tg.linspace(0, 1, 4)
    (norm(tg.tensor(DATA[:4096].repeat(2, axis=0))).float() * scale).sum().backward()
    per_row = np.linspace(0, 1, 4).astype(np.float16).astype(np.float64)  # the output's grad is float16
    np.testing.assert_allclose(norm.bias.grad, 8192 * per_row, rtol=1e-6)
