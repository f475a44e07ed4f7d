"""`tensorgrad.nn.sparse`: embedding (lookup forward, scatter-add gradient), one_hot, Embedding.

Each option that changes the math (padding_idx, scale_grad_by_freq, max_norm, index shapes,
repeated indices) is checked against PyTorch in float64, the weight's gradient also against
finite differences; the layer's initialisation, state dict (both ways) and errors follow. The
comparisons with PyTorch run on the CPU, and on a GPU where there is one.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import placed_on

import tensorgrad as tg
from tensorgrad.device import to_numpy
from tensorgrad.nn import sparse as S

INDICES = [[0, 3, 3], [5, 0, 3]]  # repeats: row 3 three times, row 0 twice; rows 1, 2, 4 unused

# (id, index array, keyword arguments of F.embedding)
OPTIONS = [
    ("plain", INDICES, {}),
    ("flat", [4, 1, 1, 2], {}),
    ("padding", INDICES, {"padding_idx": 3}),
    ("negative_padding", INDICES, {"padding_idx": -1}),
    ("scale_grad_by_freq", INDICES, {"scale_grad_by_freq": True}),
    ("max_norm", INDICES, {"max_norm": 1.0}),
    ("max_norm_l1", INDICES, {"max_norm": 2.0, "norm_type": 1.0}),
    ("everything", INDICES, {"padding_idx": 0, "scale_grad_by_freq": True, "max_norm": 1.5}),
]


@pytest.mark.parametrize(("name", "indices", "options"), OPTIONS, ids=[o[0] for o in OPTIONS])
def test_embedding_matches_torch(name, indices, options, device):
    torch = pytest.importorskip("torch")
    table = np.random.default_rng(0).standard_normal((6, 4)) * 2
    weight = tg.tensor(table, requires_grad=True, device=device)
    weight_t = torch.tensor(table, requires_grad=True)
    out = S.embedding(tg.tensor(indices, device=device), weight, **options)
    expected = torch.nn.functional.embedding(torch.tensor(indices), weight_t, **options)
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-12)
    renormed = weight_t.detach().numpy()  # max_norm rescales the looked-up rows in place
    np.testing.assert_allclose(to_numpy(weight.data), renormed, rtol=1e-12)
    grad = np.random.default_rng(1).standard_normal(out.shape)
    out.backward(tg.tensor(grad, device=device))
    expected.backward(torch.tensor(grad))
    np.testing.assert_allclose(to_numpy(weight.grad), weight_t.grad.numpy(), rtol=1e-12)


# Only the plain lookups: padding_idx and scale_grad_by_freq change the gradient on purpose (it is
# no longer the derivative), and max_norm changes the weight itself; PyTorch checks those above.
@pytest.mark.parametrize(("name", "indices", "options"), OPTIONS[:2], ids=[o[0] for o in OPTIONS[:2]])
def test_embedding_gradient_matches_finite_differences(name, indices, options):
    weight = tg.randn(6, 4, dtype=tg.float64, requires_grad=True)
    assert tg.gradcheck(lambda w: S.embedding(tg.tensor(indices), w, **options), [weight])


def test_embedding_gradient_is_a_scatter_add():
    weight = tg.zeros(4, 2, dtype=tg.float64, requires_grad=True)
    S.embedding(tg.tensor([1, 3, 1, 1]), weight, padding_idx=3).sum().backward()
    np.testing.assert_array_equal(weight.grad, [[0, 0], [3, 3], [0, 0], [0, 0]])


def test_embedding_takes_int32_indices_and_keeps_the_weights_dtype():
    weight = tg.randn(5, 3, requires_grad=True)
    out = S.embedding(tg.tensor(np.array([[4, 0]], dtype=np.int32)), weight)
    assert out.shape == (1, 2, 3) and out.dtype == tg.float32
    out.sum().backward()
    assert weight.grad.dtype == np.float32


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda w: S.embedding(tg.tensor([1.0]), w), RuntimeError, "int64 or int32.*float32"),
    (lambda w: S.embedding(tg.tensor([5]), w), IndexError, r"out of range.*\[0, 5\)"),
    (lambda w: S.embedding(tg.tensor([-1]), w), IndexError, "out of range"),
    (lambda w: S.embedding([1, 2], w), TypeError, "list"),
    (lambda w: S.embedding(tg.tensor([1]), w, padding_idx=5), AssertionError, "Padding_idx"),
    (lambda w: S.embedding(tg.tensor([1]), w[0]), RuntimeError, "2-D"),
    (lambda w: S.one_hot(tg.tensor([1.0])), RuntimeError, "int64"),
    (lambda w: S.one_hot(tg.tensor([-1]), 3), RuntimeError, "non-negative"),
    (lambda w: S.one_hot(tg.tensor([3]), 3), RuntimeError, "smaller than num_classes"),
    (lambda w: S.one_hot(tg.tensor(np.zeros(0, np.int64))), RuntimeError, "empty"),
], ids=["float indices", "too large", "negative", "list", "padding_idx", "1-D weight", "one_hot float",
        "one_hot negative", "one_hot too large", "one_hot empty"])
def test_bad_arguments_raise_pytorchs_error(call, error, words):
    with pytest.raises(error, match=words):
        call(tg.randn(5, 3))


@pytest.mark.parametrize(("indices", "num_classes"),
                         [([3, 0, 1], -1), ([[1, 2], [0, 0]], 5), ([], 3), (2, 4)])
def test_one_hot_matches_torch(indices, num_classes, device):
    torch = pytest.importorskip("torch")
    out = S.one_hot(tg.tensor(np.array(indices, dtype=np.int64), device=device), num_classes)
    expected = torch.nn.functional.one_hot(torch.tensor(indices, dtype=torch.long), num_classes)
    assert out.dtype == tg.int64 and out.shape == tuple(expected.shape) and out.device == placed_on(device)
    np.testing.assert_array_equal(to_numpy(out.data), expected.numpy())


# --- the layer ----------------------------------------------------------------------------------


def test_embedding_layer_starts_standard_normal_with_the_padding_row_zero_and_seeded():
    tg.manual_seed(0)
    layer = S.Embedding(2000, 50, padding_idx=7)
    assert layer.weight.shape == (2000, 50) and layer.weight.dtype == tg.float32
    assert layer.weight.requires_grad
    np.testing.assert_array_equal(layer.weight.data[7], 0)
    assert abs(layer.weight.data.mean()) < 0.01 and abs(layer.weight.data.std() - 1) < 0.01
    tg.manual_seed(0)
    np.testing.assert_array_equal(S.Embedding(2000, 50, padding_idx=7).weight.data, layer.weight.data)


def test_embedding_layer_matches_torch_and_loads_state_both_ways(device):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Embedding(6, 3, padding_idx=2, dtype=torch.float64)
    ours = S.Embedding(6, 3, padding_idx=2, dtype=tg.float64, device=device)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    ours.load_state_dict(theirs.state_dict())
    idx = [[0, 2, 5], [2, 2, 1]]
    out, expected = ours(tg.tensor(idx, device=device)), theirs(torch.tensor(idx))
    np.testing.assert_array_equal(to_numpy(out.data), expected.detach().numpy())
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_array_equal(to_numpy(ours.weight.grad), theirs.weight.grad.numpy())
    back = torch.nn.Embedding(6, 3, dtype=torch.float64)
    back.load_state_dict({k: torch.from_numpy(to_numpy(v.data).copy()) for k, v in ours.state_dict().items()})
    np.testing.assert_array_equal(back.weight.detach().numpy(), to_numpy(ours.weight.data))


def test_from_pretrained_shares_the_table_and_freezes_it_by_default():
    table = tg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    frozen = S.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad
    assert np.shares_memory(frozen.weight.data, table.data)
    np.testing.assert_array_equal(frozen(tg.tensor([2, 0])).data, [[5, 6], [1, 2]])
    trainable = S.Embedding.from_pretrained(table, freeze=False, padding_idx=1)
    assert trainable.weight.requires_grad and trainable.padding_idx == 1
    with pytest.raises(AssertionError, match="2-dimensional"):
        S.Embedding.from_pretrained(tg.tensor([1.0, 2.0]))


def test_embedding_reprs_match_pytorchs():
    torch = pytest.importorskip("torch")
    for args, options in [((10, 3), {}), ((5, 2), {"padding_idx": -1, "max_norm": 1.0}),
                          ((4, 4), {"norm_type": 1.0, "scale_grad_by_freq": True})]:
        assert repr(S.Embedding(*args, **options)) == repr(torch.nn.Embedding(*args, **options))
