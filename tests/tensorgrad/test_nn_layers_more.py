"""More of torch.nn's layers: 1-D pools and transposed convolutions, resampling, padding, pixel
shuffle, the remaining activations, distances, losses, channel dropout and parameter containers.

Each layer is built in both libraries (tensorgrad's loads PyTorch's state dict, so both start
from the same weights) and run on the same float64 input: the output, the input gradients and
the parameter gradients must match PyTorch's, and the gradients finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

# name -> (build(nn) -> layer, input shapes, how inputs enter: "x" as they are, or "probabilities")
LAYERS = {
    "Upsample bilinear": (lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"), [(2, 3, 4, 5)]),
    "Upsample bicubic align_corners": (
        lambda nn: nn.Upsample(size=(3, 7), mode="bicubic", align_corners=True), [(1, 2, 4, 5)]),
    "Upsample nearest": (lambda nn: nn.Upsample(size=(3, 7)), [(1, 2, 4, 5)]),
    "MaxPool1d": (lambda nn: nn.MaxPool1d(3, 2, padding=1), [(2, 3, 9)]),
    "AvgPool1d": (lambda nn: nn.AvgPool1d(3, 2, padding=1, ceil_mode=True, count_include_pad=False),
                  [(2, 3, 9)]),
    "AdaptiveAvgPool1d": (lambda nn: nn.AdaptiveAvgPool1d(4), [(2, 3, 9)]),
    "AdaptiveMaxPool1d": (lambda nn: nn.AdaptiveMaxPool1d(4), [(2, 3, 9)]),
    "AdaptiveMaxPool2d": (lambda nn: nn.AdaptiveMaxPool2d((3, 2)), [(2, 3, 7, 5)]),
    "AdaptiveMaxPool2d unbatched, None": (lambda nn: nn.AdaptiveMaxPool2d((None, 3)), [(3, 4, 7)]),
    "ConvTranspose1d": (
        lambda nn: nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), [(2, 4, 7)]),
    "ConvTranspose1d dilated, no bias": (
        lambda nn: nn.ConvTranspose1d(2, 3, 2, dilation=2, bias=False), [(1, 2, 5)]),
    "Fold": (lambda nn: nn.Fold((5, 6), (2, 3)), [(2, 18, 16)]),
    "Unfold": (lambda nn: nn.Unfold((2, 3), padding=1, stride=2), [(2, 3, 5, 6)]),
    "ZeroPad1d": (lambda nn: nn.ZeroPad1d((2, 1)), [(2, 3, 4)]),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), [(2, 3, 4, 5)]),
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d(2, 3.5), [(2, 3, 4)]),
    "ConstantPad2d": (lambda nn: nn.ConstantPad2d((0, 1, 1, 2), -1.0), [(2, 3, 4, 5)]),
    "ReflectionPad1d": (lambda nn: nn.ReflectionPad1d((2, 1)), [(2, 3, 4)]),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d(1), [(2, 3, 4, 5)]),
    "ReplicationPad1d": (lambda nn: nn.ReplicationPad1d(3), [(2, 3, 4)]),
    "ReplicationPad2d": (lambda nn: nn.ReplicationPad2d((1, 2, 0, 3)), [(2, 3, 4, 5)]),
    "CircularPad1d": (lambda nn: nn.CircularPad1d((1, 2)), [(2, 3, 4)]),
    "CircularPad2d": (lambda nn: nn.CircularPad2d(1), [(2, 3, 4, 5)]),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), [(2, 8, 3, 4)]),
    "PixelShuffle unbatched": (lambda nn: nn.PixelShuffle(3), [(9, 2, 2)]),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), [(2, 2, 4, 6)]),
    "PReLU shared": (lambda nn: nn.PReLU(), [(2, 3, 4)]),
    "PReLU per channel": (lambda nn: nn.PReLU(3, init=0.1), [(2, 3, 4, 5)]),
    "Threshold": (lambda nn: nn.Threshold(0.1, 20.0), [(3, 4)]),
    "Tanhshrink": (lambda nn: nn.Tanhshrink(), [(3, 4)]),
    "GLU": (lambda nn: nn.GLU(1), [(2, 6, 3)]),
    "GLU last dim": (lambda nn: nn.GLU(), [(2, 3, 4)]),
    "Softmax2d": (lambda nn: nn.Softmax2d(), [(2, 3, 4, 5)]),
    "CosineSimilarity": (lambda nn: nn.CosineSimilarity(dim=-1), [(3, 5), (3, 5)]),
    "PairwiseDistance": (lambda nn: nn.PairwiseDistance(p=1.5, keepdim=True), [(3, 5), (3, 5)]),
    "PairwiseDistance broadcast": (lambda nn: nn.PairwiseDistance(), [(3, 5), (5,)]),
    "BCELoss": (lambda nn: nn.BCELoss(), [(3, 4), (3, 4)], "probabilities"),
    "BCELoss weighted sum": (lambda nn: nn.BCELoss(weight=_weights(nn), reduction="sum"), [(3, 4), (3, 4)],
                             "probabilities"),
    "KLDivLoss": (lambda nn: nn.KLDivLoss(reduction="batchmean"), [(3, 4), (3, 4)], "log and probabilities"),
    "KLDivLoss log_target": (lambda nn: nn.KLDivLoss(reduction="sum", log_target=True), [(3, 4), (3, 4)],
                             "log and probabilities"),
    "Hardshrink": (lambda nn: nn.Hardshrink(0.3), [(3, 4)]),
    "Softshrink": (lambda nn: nn.Softshrink(), [(3, 4)]),
    "RMSNorm": (lambda nn: nn.RMSNorm([3, 4]), [(2, 3, 4)]),
    "RMSNorm eps, no affine": (lambda nn: nn.RMSNorm(4, eps=1e-3, elementwise_affine=False), [(2, 3, 4)]),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(3), [(2, 3, 5)]),
    "InstanceNorm1d affine, tracked": (lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
                                       [(2, 3, 5)]),
    "InstanceNorm2d unbatched": (lambda nn: nn.InstanceNorm2d(3, affine=True), [(3, 4, 5)]),
    "SmoothL1Loss": (lambda nn: nn.SmoothL1Loss(beta=0.5), [(3, 4), (3, 4)]),
    "HuberLoss": (lambda nn: nn.HuberLoss(reduction="sum", delta=0.7), [(3, 4), (3, 4)]),
}


def _weights(nn):
    values = np.linspace(0.5, 1.5, 4)
    return tg.tensor(values) if nn is tg.nn else torch.tensor(values)


def _inputs(shapes, kind: str) -> list[np.ndarray]:
    rng = np.random.default_rng(len(shapes) * 7 + sum(map(len, shapes)))
    arrays = [rng.standard_normal(shape) for shape in shapes]
    if kind == "probabilities":
        arrays = [1 / (1 + np.exp(-a)) for a in arrays]
    elif kind == "log and probabilities":
        probabilities = [np.exp(a) / np.exp(a).sum(-1, keepdims=True) for a in arrays]
        arrays = [np.log(probabilities[0]), probabilities[1]]
    return arrays


def _run(m, layer, arrays):
    leaves = [m.tensor(a, requires_grad=True) for a in arrays]
    out = layer(*leaves)
    weights = np.random.default_rng(5).standard_normal(tuple(out.shape))
    (out * m.tensor(weights)).sum().backward()
    return out, leaves


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_pytorch(name):
    build, shapes, *kind = LAYERS[name]
    arrays = _inputs(shapes, kind[0] if kind else "x")
    theirs = build(torch.nn).double()
    ours = build(tg.nn).double()
    ours.load_state_dict({key: value.detach().numpy() for key, value in theirs.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    out, leaves = _run(tg, ours, arrays)
    tout, tleaves = _run(torch, theirs, arrays)
    assert out.shape == tuple(tout.shape)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    for leaf, tleaf in zip(leaves, tleaves, strict=True):
        np.testing.assert_allclose(leaf.grad, tleaf.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (key, param), (tkey, tparam) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert key == tkey
        np.testing.assert_allclose(param.grad, tparam.grad.numpy(), rtol=1e-10, atol=1e-12)
    fresh = [tg.tensor(a, requires_grad=True) for a in arrays]
    assert tg.gradcheck(lambda *xs: ours(*xs), fresh)


@pytest.mark.parametrize("build, error", [
    (lambda m: m.nn.functional.pixel_shuffle(m.zeros(1, 3, 2, 2), 2), RuntimeError),
    (lambda m: m.nn.functional.pixel_unshuffle(m.zeros(1, 3, 3, 4), 2), RuntimeError),
    (lambda m: m.nn.functional.glu(m.zeros(2, 3), 1), RuntimeError),
    (lambda m: m.nn.functional.prelu(m.zeros(2, 3), m.ones(2)), RuntimeError),
    (lambda m: m.nn.functional.dropout1d(m.zeros(2, 3, 4, 5)), RuntimeError),
    (lambda m: m.nn.ZeroPad2d((1, 2, 3))(m.zeros(1, 2, 3, 4)), (ValueError, RuntimeError)),
])
def test_bad_arguments_raise_as_pytorch(build, error):
    with pytest.raises(error):
        build(torch)
    with pytest.raises(error):
        build(tg)


# (layer, input shape, the number of trailing dimensions one draw covers)
CHANNEL_DROPOUT = [(tg.nn.Dropout1d(0.4), (6, 50, 3), 1), (tg.nn.Dropout1d(0.4), (50, 3), 1),
                   (tg.nn.Dropout2d(0.4), (6, 50, 3, 2), 2), (tg.nn.Dropout2d(0.4), (6, 50, 2), 1)]


@pytest.mark.filterwarnings("ignore:dropout2d")
@pytest.mark.parametrize("layer, shape, covered", CHANNEL_DROPOUT)
def test_channel_dropout_drops_whole_channels(layer, shape, covered):
    tg.manual_seed(0)
    x = tg.ones(*shape, dtype=tg.float64, requires_grad=True)
    out = layer(x)
    channels = out.data.reshape(-1, int(np.prod(shape[-covered:])))
    assert all(len(set(row)) == 1 for row in channels)  # one draw per channel
    assert set(np.unique(channels)) <= {0.0, 1 / 0.6}
    assert 0.2 < (channels[:, 0] == 0).mean() < 0.6
    out.sum().backward()
    np.testing.assert_array_equal(x.grad, out.data)  # the gradient is the mask
    layer.eval()
    assert layer(x) is x
    layer.train()


def test_dropout2d_reads_3d_input_as_torch_does():
    with pytest.warns(UserWarning, match="3D input"):
        tg.nn.functional.dropout2d(tg.ones(4, 5, 6), 0.5)


def test_parameter_list_and_dict_register_like_torch():
    class Net(tg.nn.Module):
        def __init__(self, nn, make):
            super().__init__()
            self.scales = nn.ParameterList([make(np.ones(2)), make(np.zeros(3))])
            self.scales.append(make(np.full(1, 2.0)))
            self.table = nn.ParameterDict({"a": make(np.ones(4))})
            self.table["b"] = make(np.zeros((2, 2)))

    tg_net = Net(tg.nn, lambda a: tg.tensor(a))
    torch_net = torch.nn.Module()
    torch_net.scales = torch.nn.ParameterList([torch.tensor(np.ones(2)), torch.tensor(np.zeros(3))])
    torch_net.scales.append(torch.tensor(np.full(1, 2.0)))
    torch_net.table = torch.nn.ParameterDict({"a": torch.tensor(np.ones(4))})
    torch_net.table["b"] = torch.tensor(np.zeros((2, 2)))
    assert [k for k, _ in tg_net.named_parameters()] == [k for k, _ in torch_net.named_parameters()]
    assert list(tg_net.state_dict()) == list(torch_net.state_dict())
    assert all(isinstance(p, tg.nn.Parameter) and p.requires_grad for p in tg_net.parameters())
    assert len(tg_net.scales) == 3 and tg_net.scales[-1].tolist() == [2.0]
    assert len(tg_net.scales[1:]) == 2 and "b" in tg_net.table and len(tg_net.table) == 2
    assert list(tg_net.table.keys()) == ["a", "b"]
    total = sum((p * p).sum() for p in tg_net.parameters())
    total.backward()
    assert tg_net.table["a"].grad.tolist() == [2.0] * 4
    with pytest.raises(TypeError):
        tg_net.scales.append([1.0, 2.0])


def _signs(shape):
    return np.where(np.random.default_rng(9).random(shape) > 0.5, 1.0, -1.0)


# name -> (build(nn) -> criterion, inputs that get gradients, fixed targets (±1 labels and the like))
CRITERIA = {
    "GaussianNLLLoss": (lambda nn: nn.GaussianNLLLoss(), [(4, 3), (4, 3), "positive (4, 3)"], []),
    "GaussianNLLLoss full, one var per row": (lambda nn: nn.GaussianNLLLoss(full=True, reduction="sum"),
                                              [(4, 3), (4, 3), "positive (4, 1)"], []),
    "PoissonNLLLoss": (lambda nn: nn.PoissonNLLLoss(), [(4, 3), "positive (4, 3)"], []),
    "PoissonNLLLoss rates, full": (lambda nn: nn.PoissonNLLLoss(log_input=False, full=True),
                                   ["positive (4, 3)", "positive (4, 3)"], []),
    "MarginRankingLoss": (lambda nn: nn.MarginRankingLoss(margin=0.2), [(5,), (5,)], [_signs((5,))]),
    "HingeEmbeddingLoss": (lambda nn: nn.HingeEmbeddingLoss(margin=0.7), [(4, 3)], [_signs((4, 3))]),
    "CosineEmbeddingLoss": (lambda nn: nn.CosineEmbeddingLoss(margin=0.1), [(5, 3), (5, 3)], [_signs((5,))]),
    "SoftMarginLoss": (lambda nn: nn.SoftMarginLoss(reduction="sum"), [(4, 3)], [_signs((4, 3))]),
    "MultiLabelSoftMarginLoss": (lambda nn: nn.MultiLabelSoftMarginLoss(), [(4, 3)],
                                 [(_signs((4, 3)) + 1) / 2]),
    "TripletMarginLoss": (lambda nn: nn.TripletMarginLoss(margin=0.5), [(4, 3), (4, 3), (4, 3)], []),
    "TripletMarginLoss p=1, swap": (lambda nn: nn.TripletMarginLoss(p=1, swap=True, reduction="none"),
                                    [(4, 3), (4, 3), (4, 3)], []),
}


def _criterion_inputs(specs):
    rng = np.random.default_rng(11)
    arrays = []
    for spec in specs:
        if isinstance(spec, str):  # "positive (4, 3)"
            arrays.append(rng.uniform(0.5, 2.0, eval(spec.split(" ", 1)[1])))
        else:
            arrays.append(rng.standard_normal(spec))
    return arrays


@pytest.mark.parametrize("name", list(CRITERIA))
def test_criteria_match_pytorch(name):
    build, specs, fixed = CRITERIA[name]
    arrays = _criterion_inputs(specs)
    results = []
    for m in (tg, torch):
        leaves = [m.tensor(a, requires_grad=True) for a in arrays]
        out = build(m.nn)(*leaves, *(m.tensor(f) for f in fixed))
        (out * m.tensor(np.random.default_rng(2).standard_normal(tuple(out.shape)))).sum().backward()
        results.append((np.asarray(out.data if m is tg else out.detach().numpy()),
                        [np.asarray(leaf.grad if m is tg else leaf.grad.numpy()) for leaf in leaves]))
    (ours, our_grads), (theirs, their_grads) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for mine, torchs in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(mine, torchs, rtol=1e-9, atol=1e-12)


def test_adaptive_max_pool_indices_match_torch():
    x = np.random.default_rng(4).standard_normal((2, 3, 7, 6))
    ours = tg.nn.functional.adaptive_max_pool2d(tg.tensor(x), (3, 4), return_indices=True)
    theirs = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), (3, 4), return_indices=True)
    assert ours[1].tolist() == theirs[1].tolist() and ours[1].dtype == tg.int64
    np.testing.assert_allclose(ours[0].data, theirs[0].numpy())


def test_bilinear_and_pdist_match_torch():
    rng = np.random.default_rng(6)
    theirs = torch.nn.Bilinear(3, 4, 5).double()
    ours = tg.nn.Bilinear(3, 4, 5).double()
    ours.load_state_dict({key: value.detach().numpy() for key, value in theirs.state_dict().items()})
    x1, x2, rows = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 4)), rng.standard_normal((5, 3))
    results = []
    for m, layer in ((tg, ours), (torch, theirs)):
        a, b, r = (m.tensor(v, requires_grad=True) for v in (x1, x2, rows))
        out, distances = layer(a, b), m.nn.functional.pdist(r, p=1.5)
        (out.sum() + (distances * m.tensor(np.arange(10.0))).sum()).backward()
        results.append([out, distances, a.grad, b.grad, r.grad, layer.weight.grad, layer.bias.grad])
    for mine, torchs in zip(*results, strict=True):
        mine = mine.data if isinstance(mine, tg.Tensor) else mine
        np.testing.assert_allclose(mine, torchs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_gumbel_softmax_samples_and_passes_the_soft_gradient_through_the_hard_one():
    tg.manual_seed(0)
    logits = tg.tensor(np.log([[0.7, 0.2, 0.1]] * 4000), requires_grad=True)
    soft = tg.nn.functional.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.data.sum(-1), 1.0, rtol=1e-6)
    hard = tg.nn.functional.gumbel_softmax(logits, hard=True)
    assert set(np.unique(hard.data)) == {0.0, 1.0} and (hard.data.sum(-1) == 1).all()
    frequencies = hard.data.mean(0)  # a Gumbel-max sample follows the softmax of the logits
    np.testing.assert_allclose(frequencies, [0.7, 0.2, 0.1], atol=0.03)
    (hard * tg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert np.abs(logits.grad).sum() > 0  # the straight-through gradient reaches the logits
