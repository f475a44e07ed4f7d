"""The transformer layers against PyTorch's: the same weights (tensorgrad loads PyTorch's state
dict, whose keys must be the same), the same float64 inputs and masks; outputs, input gradients
and every parameter's gradient must match. Dropout is off (eval mode), as it draws its own
random numbers in each library."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
SOURCE, MEMORY = RNG.standard_normal((5, 2, 8)), RNG.standard_normal((6, 2, 8))
CAUSAL = np.triu(np.full((5, 5), -np.inf), 1)
PADDING = np.array([[False, False, False, True, True], [False] * 5])

# name -> (build(nn), inputs, masks by keyword)
CASES = {
    "encoder layer": (lambda nn: nn.TransformerEncoderLayer(8, 2, 16), [SOURCE], {}),
    "encoder layer, pre-norm gelu, batch_first": (
        lambda nn: nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", norm_first=True, batch_first=True),
        [SOURCE.transpose(1, 0, 2).copy()], {}),
    "encoder layer, causal and padding masks": (
        lambda nn: nn.TransformerEncoderLayer(8, 4, 12), [SOURCE],
        {"src_mask": CAUSAL, "src_key_padding_mask": PADDING}),
    "encoder layer, no bias": (lambda nn: nn.TransformerEncoderLayer(8, 2, 16, bias=False), [SOURCE], {}),
    "encoder of 2 layers with a final norm": (
        lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, norm=nn.LayerNorm(8)),
        [SOURCE], {"mask": CAUSAL}),
    "decoder layer": (lambda nn: nn.TransformerDecoderLayer(8, 2, 16), [SOURCE, MEMORY], {}),
    "decoder layer, pre-norm, masks": (
        lambda nn: nn.TransformerDecoderLayer(8, 2, 16, norm_first=True), [SOURCE, MEMORY],
        {"tgt_mask": CAUSAL, "memory_key_padding_mask": np.array([[False] * 5 + [True], [False] * 6])}),
    "decoder of 2 layers": (lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2),
                            [SOURCE, MEMORY], {"tgt_mask": CAUSAL}),
    "the whole transformer": (lambda nn: nn.Transformer(8, 2, 2, 2, 16), [MEMORY, SOURCE],
                              {"tgt_mask": CAUSAL, "src_key_padding_mask": np.array([[False] * 5 + [True],
                                                                                       [False] * 6])}),
}


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("name", list(CASES))
def test_layers_match_pytorch(name):
    build, inputs, masks = CASES[name]
    theirs, ours = build(torch.nn).double().eval(), build(tg.nn).double().eval()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({key: value.detach().numpy() for key, value in theirs.state_dict().items()})
    results = []
    for m, layer in ((tg, ours), (torch, theirs)):
        leaves = [m.tensor(a, requires_grad=True) for a in inputs]
        out = layer(*leaves, **{key: m.tensor(value) for key, value in masks.items()})
        weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * m.tensor(weights)).sum().backward()
        results.append([out] + [leaf.grad for leaf in leaves] + [p.grad for p in layer.parameters()])
    for mine, torchs in zip(*results, strict=True):
        mine = mine.data if isinstance(mine, tg.Tensor) else mine
        np.testing.assert_allclose(mine, torchs.detach().numpy(), rtol=1e-9, atol=1e-11)


def test_stacked_layers_are_independent_copies():
    layer = tg.nn.TransformerEncoderLayer(8, 2, 16)
    encoder = tg.nn.TransformerEncoder(layer, 3)
    weights = [block.linear1.weight for block in encoder.layers]
    assert len({id(w) for w in weights}) == 3 and all(w is not layer.linear1.weight for w in weights)
    np.testing.assert_array_equal(weights[0].data, weights[2].data)  # copies of one initialisation


def test_gradients_match_finite_differences():
    tg.manual_seed(0)
    layer = tg.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double()
    x = tg.tensor(np.random.default_rng(3).standard_normal((3, 1, 4)), requires_grad=True)
    assert tg.gradcheck(lambda t: layer(t), [x])


def test_an_unknown_activation_is_refused_as_pytorch():
    for m in (torch, tg):
        with pytest.raises(RuntimeError, match="relu/gelu"):
            m.nn.TransformerEncoderLayer(8, 2, activation="swish")


def test_the_causal_mask_and_the_initialisation_match_torch():
    ours = tg.nn.Transformer.generate_square_subsequent_mask(4)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert ours.tolist() == theirs.tolist() and ours.dtype == tg.float32
    weight = tg.nn.Transformer(8, 2, 1, 1, 16).encoder.layers[0].linear1.weight.data
    assert np.abs(weight).max() <= np.sqrt(6 / (8 + 16))  # xavier_uniform_, as PyTorch's
    assert np.abs(weight).max() > 0.8 * np.sqrt(6 / (8 + 16))
