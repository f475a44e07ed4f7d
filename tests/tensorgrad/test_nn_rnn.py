"""Recurrent layers and cells against PyTorch: same weights (tensorgrad loads PyTorch's state
dict), same float64 input, then the outputs, the final states and every gradient (input, initial
state, each parameter) must match; finite differences check a small network end to end."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

CONFIGS = {
    "one layer": {},
    "two layers, bidirectional": {"num_layers": 2, "bidirectional": True},
    "batch_first, no bias": {"batch_first": True, "bias": False},
    "three layers, dropout in eval": {"num_layers": 3, "dropout": 0.5},
}


def _pair(name: str, config: dict, extra: dict | None = None):
    """The same layer in both libraries, tensorgrad's loaded with PyTorch's weights (float64)."""
    options = {**config, **(extra or {})}
    theirs = getattr(torch.nn, name)(3, 4, **options).double()
    ours = getattr(tg.nn, name)(3, 4, **options).double()
    ours.load_state_dict({key: value.detach().numpy() for key, value in theirs.state_dict().items()})
    return ours, theirs


def _loss(m, out, final, weights):
    """A weighted sum of the output and of every final state, so each gets a gradient."""
    states = final if isinstance(final, tuple) else (final,)
    total = (out * m.tensor(weights)).sum()
    for k, state in enumerate(states):
        total = total + state.sum() * (k + 2)
    return total


def _compare(ours, theirs, inputs: list[np.ndarray]):
    results = []
    for m, layer in ((tg, ours), (torch, theirs)):
        leaves = [m.tensor(a, requires_grad=True) for a in inputs]
        state = None if len(leaves) == 1 else (leaves[1] if len(leaves) == 2 else tuple(leaves[1:]))
        out, final = layer(leaves[0], state)
        weights = np.random.default_rng(3).standard_normal(tuple(out.shape))
        _loss(m, out, final, weights).backward()
        finals = final if isinstance(final, tuple) else (final,)
        results.append(([out, *finals], leaves, list(layer.parameters())))
    (outs, leaves, params), (touts, tleaves, tparams) = results
    for a, b in zip(outs, touts, strict=True):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(leaves + params, tleaves + tparams, strict=True):
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_layers_match_pytorch(name, config):
    ours, theirs = _pair(name, CONFIGS[config])
    ours.eval(), theirs.eval()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    batch_first = CONFIGS[config].get("batch_first", False)
    x = np.random.default_rng(0).standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    _compare(ours, theirs, [x])


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_given_initial_states_and_unbatched_input(name):
    ours, theirs = _pair(name, {"num_layers": 2})
    rng = np.random.default_rng(1)
    states = [rng.standard_normal((2, 2, 4)) for _ in range(2 if name == "LSTM" else 1)]
    _compare(ours, theirs, [rng.standard_normal((5, 2, 3)), *states])
    unbatched = [rng.standard_normal((2, 4)) for _ in range(2 if name == "LSTM" else 1)]
    _compare(ours, theirs, [rng.standard_normal((6, 3)), *unbatched])


def test_relu_rnn_matches_pytorch():
    ours, theirs = _pair("RNN", {"nonlinearity": "relu", "num_layers": 2})
    _compare(ours, theirs, [np.random.default_rng(2).standard_normal((4, 3, 3))])


@pytest.mark.parametrize("name, options", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                           ("LSTMCell", {}), ("GRUCell", {}), ("GRUCell", {"bias": False})])
def test_cells_match_pytorch(name, options):
    theirs = getattr(torch.nn, name)(3, 4, **options).double()
    ours = getattr(tg.nn, name)(3, 4, **options).double()
    ours.load_state_dict({key: value.detach().numpy() for key, value in theirs.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(4)
    for batch in ((2,), ()):
        x = rng.standard_normal(batch + (3,))
        states = [rng.standard_normal(batch + (4,)) for _ in range(2 if name == "LSTMCell" else 1)]
        for given in (False, True):
            results = []
            for m, cell in ((tg, ours), (torch, theirs)):
                leaves = [m.tensor(a, requires_grad=True) for a in [x, *states]]
                state = None if not given else (leaves[1] if len(leaves) == 2 else tuple(leaves[1:]))
                out = cell(leaves[0], state)
                outs = out if isinstance(out, tuple) else (out,)
                sum(o.sum() * (k + 1) for k, o in enumerate(outs)).backward()
                results.append((outs, leaves if given else leaves[:1], list(cell.parameters())))
                cell.zero_grad()
            for a, b in zip(results[0][0], results[1][0], strict=True):
                np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-10, atol=1e-12)
            for a, b in zip(results[0][1], results[1][1], strict=True):
                np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_backpropagation_through_time_matches_finite_differences(name):
    tg.manual_seed(0)
    layer = getattr(tg.nn, name)(2, 3, bidirectional=True).double()
    x = tg.tensor(np.random.default_rng(5).standard_normal((4, 1, 2)), requires_grad=True)
    assert tg.gradcheck(lambda t: layer(t)[0], [x])


def test_dropout_between_layers_only_in_training():
    tg.manual_seed(0)
    layer = tg.nn.GRU(3, 4, num_layers=2, dropout=0.5).double()
    x = tg.tensor(np.random.default_rng(6).standard_normal((5, 2, 3)))
    layer.eval()
    first, second = layer(x)[0], layer(x)[0]
    np.testing.assert_array_equal(first.data, second.data)
    layer.train()
    assert not np.allclose(layer(x)[0].data, first.data)


@pytest.mark.parametrize("build, error", [
    (lambda m: m.nn.GRU(3, 4)(m.zeros(1, 2, 5, 3)), ValueError),
    (lambda m: m.nn.LSTM(3, 4)(m.zeros(5, 2, 3), (m.zeros(1, 3, 4), m.zeros(1, 3, 4))), RuntimeError),
    (lambda m: m.nn.RNN(3, 4, nonlinearity="sigmoid"), ValueError),
    (lambda m: m.nn.LSTM(3, 4, dropout=1.5), ValueError),
])
def test_bad_arguments_raise_as_pytorch(build, error):
    with pytest.raises(error):
        build(torch)
    with pytest.raises(error):
        build(tg)


def test_repr_reads_like_pytorchs():
    assert repr(tg.nn.LSTM(3, 4, num_layers=2, batch_first=True)) == repr(
        torch.nn.LSTM(3, 4, num_layers=2, batch_first=True))
    assert repr(tg.nn.GRUCell(3, 4)) == repr(torch.nn.GRUCell(3, 4))
