"""Layers, losses, optimizers, data loading, saving and pictures on a stand-in for GPU arrays.

Each test builds the same model from the same seed twice: on numpy arrays, and with its
parameters, buffers and inputs as `ForeignArray`s (`foreign_array.py`), which refuse plain numpy
operands as CuPy's arrays do. The second run must keep every result, gradient and optimizer
buffer a ForeignArray and give the first run's numbers: what the same code needs to run on a GPU
(`.to("cuda")` there; `to_foreign` here).
"""

from __future__ import annotations

import numpy as np
import pytest
from foreign_array import foreign, is_foreign

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn, optim
from tensorgrad.data import DataLoader, TensorDataset
from tensorgrad.device import to_numpy
from visualize import draw_dot


def to_foreign(module: nn.Module) -> nn.Module:
    """The module with every parameter and buffer a ForeignArray (what `.to("cuda")` does on a GPU)."""
    for t in [*module.parameters(), *module.buffers()]:
        t.data = foreign(t.data)
    return module


def made(array: np.ndarray, on_foreign: bool, requires_grad: bool = False) -> tg.Tensor:
    """A leaf holding `array`, as a ForeignArray for the foreign run."""
    t = tg.from_numpy(foreign(array) if on_foreign else array)
    return t.requires_grad_() if requires_grad else t


def check_kind(on_foreign: bool, *arrays) -> None:
    """Each array is a ForeignArray in the foreign run (and plain numpy in the other)."""
    for array in arrays:
        assert is_foreign(array) == on_foreign, type(array)


def same(first: list, second: list) -> None:
    """The two runs' numbers agree (to float32 rounding: the order of a sum may differ)."""
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_allclose(to_numpy(b), to_numpy(a), rtol=1e-5, atol=1e-6)


def both(run) -> None:
    """`run(on_foreign)` from the same seed on numpy and on ForeignArrays: the same numbers."""
    results = []
    for on_foreign in (False, True):
        tg.manual_seed(0)
        results.append(run(on_foreign))
    same(*results)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 8)).astype(np.float32)
LABELS = np.array([0, 2, 1, 1, 0, 2])
IMAGES = RNG.standard_normal((4, 1, 6, 6)).astype(np.float32)
TARGETS = RNG.standard_normal((2, 3, 6)).astype(np.float32)


@pytest.mark.parametrize("make_optimizer", [
    lambda params: optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-3),
    lambda params: optim.Adam(params, lr=0.01),
], ids=["SGD", "Adam"])
def test_an_mlp_trains_with_sgd_and_adam(make_optimizer):
    def run(on_foreign):
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
        if on_foreign:
            to_foreign(model)
        opt = make_optimizer(model.parameters())
        x, y = made(X, on_foreign), made(LABELS, on_foreign)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
            losses += [loss.data, norm.data]
        check_kind(on_foreign, loss.data, norm.data, *(p.data for p in model.parameters()),
                   *(p.grad for p in model.parameters()))
        buffers = [b.data for state in opt.state.values() for key, b in state.items() if key != "step"]
        check_kind(on_foreign, *buffers)
        return losses + [p.data for p in model.parameters()] + buffers

    both(run)


def test_a_conv_net_with_batch_norm_and_pooling():
    def run(on_foreign):
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                              nn.AvgPool2d(1), nn.Flatten(), nn.Linear(36, 3))
        if on_foreign:
            to_foreign(model)
        opt = optim.SGD(model.parameters(), lr=0.1)
        x, y = made(IMAGES, on_foreign), made(LABELS[:4], on_foreign)
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        loss.backward()
        opt.step()
        norm = model[1]
        check_kind(on_foreign, loss.data, norm.running_mean.data, norm.running_var.data,
                   model[0].weight.grad, model[0].weight.data)
        model.eval()
        out = model(x)
        check_kind(on_foreign, out.data)
        return [loss.data, out.data, norm.running_mean.data, norm.running_var.data, model[0].weight.data,
                model[0].bias.grad]

    both(run)


def test_the_resampling_padding_and_gating_layers():
    def run(on_foreign):
        model = nn.Sequential(nn.Upsample(scale_factor=2, mode="bicubic"), nn.ReflectionPad2d(1),
                              nn.PixelUnshuffle(2), nn.PReLU(4), nn.Dropout2d(0.3), nn.GLU(1),
                              nn.Flatten(2), nn.ConvTranspose1d(2, 3, 3, stride=2), nn.MaxPool1d(2),
                              nn.AdaptiveAvgPool1d(4), nn.AdaptiveMaxPool1d(3))
        if on_foreign:
            to_foreign(model)
        x = made(IMAGES, on_foreign, requires_grad=True)
        out = model(x)
        loss = nn.HuberLoss()(out, made(np.zeros(out.shape, np.float32), on_foreign))
        loss.backward()
        check_kind(on_foreign, out.data, x.grad, model[3].weight.grad, model[7].weight.grad)
        return [out.data, x.grad, model[3].weight.grad, model[7].weight.grad]

    both(run)


def test_recurrent_layers_and_cells():
    def run(on_foreign):
        lstm, gru = nn.LSTM(8, 5, num_layers=2, bidirectional=True), nn.GRU(10, 4)
        cell = nn.RNNCell(4, 3)
        if on_foreign:
            for module in (lstm, gru, cell):
                to_foreign(module)
        x = made(X.reshape(3, 2, 8), on_foreign, requires_grad=True)
        out, (h, c) = lstm(x)
        out, h2 = gru(out)
        last = cell(out[-1])
        (last.sum() + h.sum() + c.sum() + h2.sum()).backward()
        grads = [x.grad, lstm.weight_hh_l1_reverse.grad, cell.weight_ih.grad]
        check_kind(on_foreign, out.data, h.data, last.data, *grads)
        return [out.data, h.data, c.data, last.data, *grads]

    both(run)


def test_embedding_and_layer_norm():
    def run(on_foreign):
        embed, norm = nn.Embedding(10, 6, padding_idx=0), nn.LayerNorm(6)
        if on_foreign:
            to_foreign(embed), to_foreign(norm)
        idx = made(np.array([[1, 2, 0], [2, 9, 1]]), on_foreign)
        loss = F.mse_loss(norm(embed(idx)), made(TARGETS, on_foreign))
        loss.backward()
        check_kind(on_foreign, loss.data, embed.weight.grad, norm.weight.grad)
        return [loss.data, embed.weight.grad, norm.weight.grad, norm.bias.grad]

    both(run)


def test_multihead_attention_with_a_padding_mask():
    def run(on_foreign):
        attention = nn.MultiheadAttention(8, 2, batch_first=True)
        if on_foreign:
            to_foreign(attention)
        x = made(X.reshape(2, 3, 8), on_foreign, requires_grad=True)
        mask = made(np.array([[False, False, True], [False, False, False]]), on_foreign)
        out, weights = attention(x, x, x, key_padding_mask=mask)
        out.sum().backward()
        check_kind(on_foreign, out.data, weights.data, x.grad, attention.in_proj_weight.grad)
        return [out.data, weights.data, x.grad, attention.in_proj_weight.grad]

    both(run)


def test_a_data_loader_keeps_batches_where_the_data_set_lives():
    def run(on_foreign):
        data = TensorDataset(made(X, on_foreign), made(LABELS, on_foreign))
        batches = [t.data for batch in DataLoader(data, batch_size=4, shuffle=True) for t in batch]
        check_kind(on_foreign, *batches)
        return batches

    both(run)


def test_a_state_dict_saves_host_copies_and_loads_onto_either_device(tmp_path):
    tg.manual_seed(0)
    model = to_foreign(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)))
    tg.save(model.state_dict(), tmp_path / "model.npz")
    loaded = tg.load(tmp_path / "model.npz")
    assert list(loaded) == list(model.state_dict())
    for name, value in model.state_dict().items():
        assert type(loaded[name].data) is np.ndarray  # the CPU: map_location's default
        np.testing.assert_array_equal(loaded[name].data, to_numpy(value.data))
    tg.manual_seed(1)
    other = to_foreign(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)))
    other.load_state_dict(loaded)  # CPU values into a model elsewhere: copied across
    for name, value in other.state_dict().items():
        check_kind(True, value.data)
        np.testing.assert_array_equal(to_numpy(value.data), loaded[name].data)


def test_a_picture_of_the_graph_reads_values_from_host_copies():
    def run(on_foreign):
        layer = nn.Linear(3, 2)
        if on_foreign:
            to_foreign(layer)
        loss = layer(made(X[:2, :3], on_foreign)).relu().sum()
        loss.backward(retain_graph=True)
        return draw_dot(loss, names=layer).source

    tg.manual_seed(0)
    plain = run(False)
    tg.manual_seed(0)
    assert run(True) == plain and "grad" in plain
