"""The last torch.nn names against PyTorch: CTC loss, fractional max pooling, the remaining 3-D pools,
the triplet loss under any distance, the adaptive softmax, lazy 3-D / transposed convolutions and
lazy norms, NLLLoss2d and the recurrent base classes.

Each op: values, dtypes and gradients against PyTorch (float64, tight tolerances), gradients
against finite differences, a run on the stand-in for GPU arrays (outputs and gradients must
stay ForeignArrays), signatures, reprs, state dict keys and PyTorch's exception types.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from foreign_array import foreign, is_foreign
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn
from tensorgrad.device import to_numpy

torch = pytest.importorskip("torch")
torch_F = torch.nn.functional  # noqa: N816 - the same alias as F

RNG = np.random.default_rng(11)


def _t(a, grad=False):
    return tg.tensor(a, requires_grad=grad)


def _pt(a, grad=False):
    return torch.tensor(a, requires_grad=grad)


# --- CTC loss ----------------------------------------------------------------------------------------

T, N, C = 8, 3, 5
LOGITS = RNG.standard_normal((T, N, C))
TARGETS = np.array([[1, 2, 2, 0], [3, 1, 4, 4], [2, 2, 0, 0]])  # repeats need a blank in between
INPUT_LENGTHS = np.array([8, 6, 5])
TARGET_LENGTHS = np.array([3, 4, 2])


def _log_probs(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def _ctc_both(log_probs, targets, input_lengths, target_lengths, seed=0, **kwargs):
    """Loss and log_probs' gradient (for a random output gradient) from both libraries."""
    ours_lp, theirs_lp = _t(log_probs, True), _pt(log_probs, True)
    convert = (lambda v, f: f(v) if isinstance(v, np.ndarray) else v)
    ours = F.ctc_loss(ours_lp, convert(targets, tg.tensor), convert(input_lengths, tg.tensor),
                      convert(target_lengths, tg.tensor), **kwargs)
    theirs = torch_F.ctc_loss(theirs_lp, convert(targets, torch.tensor), convert(input_lengths, torch.tensor),
                              convert(target_lengths, torch.tensor), **kwargs)
    weights = np.random.default_rng(seed).standard_normal(tuple(theirs.shape))
    ours.backward(weights)
    theirs.backward(torch.tensor(weights))
    return ours, theirs, ours_lp.grad, theirs_lp.grad.numpy()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_values_and_gradient_match_torch(reduction, zero_infinity):
    ours, theirs, grad, reference = _ctc_both(_log_probs(LOGITS), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS,
                                              reduction=reduction, zero_infinity=zero_infinity)
    assert ours.dtype == tg.float64 and ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, reference, rtol=1e-10, atol=1e-10)
    assert np.all(grad[6:, 1] == 0) and np.all(grad[5:, 2] == 0)  # past each input's length


@pytest.mark.parametrize("form", ["concatenated", "tuples", "int32", "blank last", "unbatched",
                                  "empty target", "float32"])
def test_ctc_loss_forms_match_torch(form):
    log_probs, targets, lengths, target_lengths = _log_probs(LOGITS), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS
    kwargs = {"reduction": "none"}
    if form == "concatenated":
        targets = np.concatenate([row[:n] for row, n in zip(TARGETS, TARGET_LENGTHS, strict=True)])
    elif form == "tuples":
        lengths, target_lengths = tuple(INPUT_LENGTHS.tolist()), tuple(TARGET_LENGTHS.tolist())
    elif form == "int32":
        targets = TARGETS.astype(np.int32)
    elif form == "blank last":
        targets, kwargs = TARGETS - 1 + (TARGETS == 0) * 4, {"blank": C - 1, "reduction": "mean"}
    elif form == "unbatched":
        log_probs, targets, lengths, target_lengths = log_probs[:, 0], TARGETS[0, :3], (8,), (3,)
        kwargs = {"reduction": "mean"}
    elif form == "empty target":
        target_lengths = np.array([3, 0, 2])
        kwargs = {"reduction": "mean"}
    else:
        log_probs = log_probs.astype(np.float32)
    ours, theirs, grad, reference = _ctc_both(log_probs, targets, lengths, target_lengths, **kwargs)
    assert ours.dtype == getattr(tg, str(theirs.dtype).removeprefix("torch."))
    assert ours.shape == tuple(theirs.shape)
    tol = 1e-5 if form == "float32" else 1e-10
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(grad, reference, rtol=tol, atol=tol)


def test_ctc_loss_impossible_alignment_is_infinite_or_zeroed():
    targets = np.array([[1, 1, 1], [2, 3, 0]])  # 1 1 1 needs 5 frames
    lengths, target_lengths = np.array([4, 4]), np.array([3, 2])
    log_probs = _log_probs(LOGITS[:4, :2])
    ours, theirs, _, _ = _ctc_both(log_probs, targets, lengths, target_lengths, reduction="none")
    assert np.isinf(ours.data[0]) and np.isinf(theirs.detach().numpy()[0])
    ours, theirs, grad, reference = _ctc_both(log_probs, targets, lengths, target_lengths, reduction="sum",
                                              zero_infinity=True)
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)
    assert np.all(grad[:, 0] == 0)
    np.testing.assert_allclose(grad, reference, rtol=1e-10, atol=1e-10)


def test_ctc_loss_gradient_through_log_softmax_matches_finite_differences():
    # The gradient with respect to log_probs is PyTorch's, which is right for the logits behind
    # a log_softmax: check it there.
    logits = tg.tensor(LOGITS[:6], requires_grad=True)
    targets, lengths, target_lengths = tg.tensor(TARGETS), tg.tensor([6, 6, 5]), tg.tensor(TARGET_LENGTHS)
    assert tg.gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), targets, lengths, target_lengths), [logits])
    assert tg.gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), targets, lengths, target_lengths,
                                             reduction="none"), [logits])


def test_ctc_loss_layer_and_errors():
    layer = nn.CTCLoss(blank=0, reduction="sum")
    assert repr(layer) == repr(torch.nn.CTCLoss()) == "CTCLoss()"
    assert list(layer.state_dict()) == []
    log_probs = _log_probs(LOGITS)
    expected = torch.nn.CTCLoss(reduction="sum")(_pt(log_probs), _pt(TARGETS), _pt(INPUT_LENGTHS),
                                                  _pt(TARGET_LENGTHS))
    out = layer(_t(log_probs), _t(TARGETS), _t(INPUT_LENGTHS), _t(TARGET_LENGTHS))
    np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-12)
    lp = _t(log_probs)
    for call, error in [
        (lambda: F.ctc_loss(lp, _t(TARGETS), (9, 6, 5), (3, 4, 2)), RuntimeError),  # longer than T
        (lambda: F.ctc_loss(lp, _t(TARGETS[:, :3]), (8, 6, 5), (3, 4, 2)), RuntimeError),  # too short
        (lambda: F.ctc_loss(lp, _t(TARGETS), (8, 6), (3, 4, 2)), RuntimeError),  # not one per sample
        (lambda: F.ctc_loss(lp, _t(TARGETS), (8, 6, 5), (3, 4, 2), blank=5), RuntimeError),
        (lambda: F.ctc_loss(lp, _t(TARGETS), (8, 6, 5), (3, 4, 2), reduction="avg"), ValueError),
        (lambda: F.ctc_loss(_t(TARGETS), _t(TARGETS), (8, 6, 5), (3, 4, 2)), NotImplementedError),
    ]:
        with pytest.raises(error, match="ctc_loss"):
            call()


# --- fractional max pooling --------------------------------------------------------------------------

FRACTIONAL = [
    (2, (2, 3, 9, 11), (2, 3), {"output_size": (4, 5)}),
    (2, (3, 10, 10), 3, {"output_size": (1, 4)}),
    (2, (2, 2, 12, 9), 2, {"output_ratio": (0.5, 0.7)}),
    (3, (2, 2, 7, 8, 9), (2, 2, 3), {"output_size": (3, 4, 2)}),
    (3, (2, 6, 7, 5), 2, {"output_ratio": 0.6}),
]


@pytest.mark.parametrize("dims, shape, kernel, size", FRACTIONAL)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fractional_max_pool_matches_torch_given_the_same_samples(dims, shape, kernel, size, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    batch, channels = (shape[0] if len(shape) == dims + 2 else 1), shape[-dims - 1]
    samples = RNG.uniform(size=(batch, channels, dims)).astype(dtype)
    name = f"fractional_max_pool{dims}d"
    ours_x, theirs_x = _t(x, True), _pt(x, True)
    out, index = getattr(F, name)(ours_x, kernel, return_indices=True, _random_samples=_t(samples), **size)
    ref, ref_index = getattr(torch_F, name)(theirs_x, kernel, return_indices=True,
                                            _random_samples=_pt(samples), **size)
    assert out.dtype == getattr(tg, dtype) and index.dtype == tg.int64
    np.testing.assert_array_equal(out.data, ref.detach().numpy())
    np.testing.assert_array_equal(index.data, ref_index.numpy())
    weights = RNG.standard_normal(out.shape).astype(dtype)
    out.backward(weights)
    ref.backward(torch.tensor(weights))
    np.testing.assert_array_equal(ours_x.grad, theirs_x.grad.numpy())
    values, indices = getattr(F, name + "_with_indices")(_t(x), kernel, _random_samples=_t(samples), **size)
    np.testing.assert_array_equal(indices.data, ref_index.numpy())
    assert isinstance(getattr(F, name)(_t(x), kernel, _random_samples=_t(samples), **size), tg.Tensor)


def test_fractional_max_pool_nan_and_infinity_follow_torch():
    nan, inf = float("nan"), float("inf")
    for rows in ([[nan, 1.0, 2, 2], [3, nan, 2, nan]], [[nan, nan, -inf, -inf], [nan, nan, -inf, -inf]]):
        x = np.array([[rows]])
        samples = np.array([[[0.3, 0.6]]])
        out, index = F.fractional_max_pool2d(_t(x), 2, output_size=(1, 2), return_indices=True,
                                             _random_samples=_t(samples))
        ref, ref_index = torch_F.fractional_max_pool2d(_pt(x), 2, output_size=(1, 2), return_indices=True,
                                                       _random_samples=_pt(samples))
        np.testing.assert_array_equal(out.data, ref.numpy())
        np.testing.assert_array_equal(index.data, ref_index.numpy())


def test_fractional_max_pool_draws_its_samples_from_tensorgrads_generator():
    x = _t(RNG.standard_normal((2, 3, 9, 9)))
    tg.manual_seed(5)
    drawn = F.fractional_max_pool2d(x, 2, output_size=4)
    tg.manual_seed(5)
    given = F.fractional_max_pool2d(x, 2, output_size=4, _random_samples=tg.rand(2, 3, 2, dtype=tg.float64))
    np.testing.assert_array_equal(drawn.data, given.data)
    tg.manual_seed(6)
    assert not np.array_equal(F.fractional_max_pool2d(x, 2, output_size=4).data, drawn.data)


def test_fractional_max_pool_gradient_matches_finite_differences():
    x = tg.tensor(RNG.permutation(2 * 2 * 7 * 8).reshape(2, 2, 7, 8) / 10.0, requires_grad=True)
    samples = tg.tensor(RNG.uniform(size=(2, 2, 2)))
    assert tg.gradcheck(lambda t: F.fractional_max_pool2d(t, 2, output_size=(4, 3), _random_samples=samples),
                        [x])
    v = tg.tensor(RNG.permutation(2 * 5 * 6 * 5).reshape(2, 5, 6, 5) / 10.0, requires_grad=True)
    samples3 = tg.tensor(RNG.uniform(size=(1, 2, 3)))
    assert tg.gradcheck(lambda t: F.fractional_max_pool3d(t, 2, output_ratio=0.5, _random_samples=samples3),
                        [v])


def test_fractional_max_pool_layers_and_errors():
    samples = RNG.uniform(size=(1, 2, 2))
    ours = nn.FractionalMaxPool2d(2, output_size=3, return_indices=True, _random_samples=_t(samples))
    theirs = torch.nn.FractionalMaxPool2d(2, output_size=3, return_indices=True, _random_samples=_pt(samples))
    assert repr(ours) == repr(theirs) == "FractionalMaxPool2d()"
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_random_samples"]
    assert list(nn.FractionalMaxPool3d(2, output_ratio=0.5).state_dict()) == []
    x = RNG.standard_normal((1, 2, 7, 7))
    np.testing.assert_array_equal(ours(_t(x))[1].data, theirs(_pt(x))[1].numpy())
    with pytest.raises(ValueError, match="output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of"):
        nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)
    with pytest.raises(ValueError, match="fractional_max_pool2d"):
        F.fractional_max_pool2d(_t(x), 2)
    with pytest.raises(RuntimeError, match="fractional_max_pool2d.*too large"):
        F.fractional_max_pool2d(_t(x), 4, output_size=5)
    with pytest.raises(RuntimeError, match="_random_samples"):
        F.fractional_max_pool2d(_t(x), 2, output_size=3, _random_samples=_t(RNG.uniform(size=(1, 2, 3))))
    with pytest.raises(RuntimeError, match="_random_samples.*dtype"):
        F.fractional_max_pool2d(_t(x), 2, output_size=3, _random_samples=tg.rand(1, 2, 2))
    with pytest.raises(RuntimeError, match="fractional_max_pool3d"):
        F.fractional_max_pool3d(_t(x[0, 0]), 2, output_size=3)


# --- the remaining 3-D pools -------------------------------------------------------------------------

VOLUME = RNG.standard_normal((2, 2, 4, 6, 5))
EVEN = VOLUME[..., :4]  # what pooling by 2 and unpooling gives back whole

POOLS = {
    "lp_pool3d": (lambda F, x: F.lp_pool3d(x, 2, (2, 3, 2), stride=(1, 2, 2)), VOLUME),
    "lp_pool3d p=3 ceil_mode": (lambda F, x: F.lp_pool3d(x.abs() + 0.5, 3.0, 2, ceil_mode=True), VOLUME),
    "lp_pool3d unbatched": (lambda F, x: F.lp_pool3d(x, 1.5, 2), VOLUME[0] ** 2 + 0.1),
    "max_pool3d_with_indices": (lambda F, x: F.max_pool3d_with_indices(x, 2, stride=1, padding=1), VOLUME),
    "adaptive_max_pool3d_with_indices": (lambda F, x: F.adaptive_max_pool3d_with_indices(x, (3, 2, 4)),
                                         VOLUME),
    "max_unpool3d": (lambda F, x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2), EVEN),
    "max_unpool3d output_size unbatched": (
        lambda F, x: F.max_unpool3d(*F.max_pool3d(x, 2, stride=2, return_indices=True), 2,
                                    output_size=(4, 6, 5)), VOLUME[0]),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_remaining_3d_pools_match_torch(name):
    fn, x = POOLS[name]
    ours_x, theirs_x = _t(x, True), _pt(x, True)
    ours, theirs = fn(F, ours_x), fn(torch_F, theirs_x)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == getattr(tg, str(b.dtype).removeprefix("torch.")) and a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-12, atol=1e-12)
    weights = RNG.standard_normal(theirs[0].shape)
    ours[0].backward(weights)
    theirs[0].backward(torch.tensor(weights))
    np.testing.assert_allclose(ours_x.grad, theirs_x.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert tg.gradcheck(lambda t: fn(F, t) if not isinstance(fn(F, t), tuple) else fn(F, t)[0],
                        [_t(x, True)])


def test_3d_pool_layers_match_torch():
    for ours, theirs in [(nn.MaxUnpool3d(2), torch.nn.MaxUnpool3d(2)),
                         (nn.MaxUnpool3d((1, 2, 2), stride=2, padding=(0, 1, 0)),
                          torch.nn.MaxUnpool3d((1, 2, 2), stride=2, padding=(0, 1, 0))),
                         (nn.LPPool3d(2, 2), torch.nn.LPPool3d(2, 2)),
                         (nn.LPPool3d(1.5, (2, 1, 2), stride=1, ceil_mode=True),
                          torch.nn.LPPool3d(1.5, (2, 1, 2), stride=1, ceil_mode=True))]:
        assert repr(ours) == repr(theirs)
    values, indices = F.max_pool3d(_t(EVEN), 2, return_indices=True)
    ref_values, ref_indices = torch_F.max_pool3d(_pt(EVEN), 2, return_indices=True)
    np.testing.assert_array_equal(nn.MaxUnpool3d(2)(values, indices).data,
                                  torch.nn.MaxUnpool3d(2)(ref_values, ref_indices).numpy())
    np.testing.assert_allclose(nn.LPPool3d(2, 2)(_t(VOLUME)).data,
                               torch.nn.LPPool3d(2, 2)(_pt(VOLUME)).numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="max_unpool3d"):
        F.max_unpool3d(values, indices.float(), 2)


# --- triplet margin loss under any distance ----------------------------------------------------------

ANCHOR, POSITIVE, NEGATIVE = (RNG.standard_normal((5, 4)) for _ in range(3))


def _cosine_distance(F):
    return lambda a, b: 1.0 - F.cosine_similarity(a, b)


@pytest.mark.parametrize("kwargs", [{}, {"margin": 0.5, "swap": True}, {"reduction": "none"},
                                    {"reduction": "sum", "distance": "cosine"},
                                    {"swap": True, "distance": "l1"}])
def test_triplet_margin_with_distance_loss_matches_torch(kwargs):
    kwargs = dict(kwargs)
    distance = kwargs.pop("distance", None)
    distances = {"cosine": _cosine_distance, "l1": lambda F: lambda a, b: (a - b).abs().sum(-1)}
    ours_in = [_t(a, True) for a in (ANCHOR, POSITIVE, NEGATIVE)]
    theirs_in = [_pt(a, True) for a in (ANCHOR, POSITIVE, NEGATIVE)]
    ours = F.triplet_margin_with_distance_loss(
        *ours_in, distance_function=distances[distance](F) if distance else None, **kwargs)
    theirs = torch_F.triplet_margin_with_distance_loss(
        *theirs_in, distance_function=distances[distance](torch_F) if distance else None, **kwargs)
    assert ours.shape == tuple(theirs.shape) and ours.dtype == tg.float64
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)
    weights = RNG.standard_normal(theirs.shape)
    ours.backward(weights)
    theirs.backward(torch.tensor(weights))
    for a, b in zip(ours_in, theirs_in, strict=True):
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=1e-10, atol=1e-12)
    fresh = [_t(a, True) for a in (ANCHOR, POSITIVE, NEGATIVE)]
    assert tg.gradcheck(lambda *t: F.triplet_margin_with_distance_loss(
        *t, distance_function=distances[distance](F) if distance else None, **kwargs), fresh)


def test_triplet_margin_with_distance_loss_layer_and_errors():
    ours, theirs = nn.TripletMarginWithDistanceLoss(), torch.nn.TripletMarginWithDistanceLoss()
    assert isinstance(ours.distance_function, nn.PairwiseDistance)
    assert repr(ours).startswith("TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance(")
    assert list(ours.state_dict()) == []
    custom = nn.TripletMarginWithDistanceLoss(distance_function=_cosine_distance(F), margin=0.3, swap=True,
                                              reduction="none")
    reference = torch.nn.TripletMarginWithDistanceLoss(distance_function=_cosine_distance(torch_F),
                                                       margin=0.3, swap=True, reduction="none")
    assert repr(custom) == repr(reference) == "TripletMarginWithDistanceLoss()"
    np.testing.assert_allclose(custom(_t(ANCHOR), _t(POSITIVE), _t(NEGATIVE)).data,
                               reference(_pt(ANCHOR), _pt(POSITIVE), _pt(NEGATIVE)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours(_t(ANCHOR), _t(POSITIVE), _t(NEGATIVE)).data,
                               theirs(_pt(ANCHOR), _pt(POSITIVE), _pt(NEGATIVE)).numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="TripletMarginWithDistanceLoss.*margin"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(ValueError, match="triplet_margin_with_distance_loss.*margin"):
        F.triplet_margin_with_distance_loss(_t(ANCHOR), _t(POSITIVE), _t(NEGATIVE), margin=-1.0)
    with pytest.raises(ValueError, match="triplet_margin_with_distance_loss.*reduction"):
        F.triplet_margin_with_distance_loss(_t(ANCHOR), _t(POSITIVE), _t(NEGATIVE), reduction="avg")
    with pytest.raises(RuntimeError, match="triplet_margin_with_distance_loss.*anchor 2D, positive 1D"):
        F.triplet_margin_with_distance_loss(_t(ANCHOR), _t(POSITIVE[0]), _t(NEGATIVE))
    with pytest.raises(TypeError):
        F.triplet_margin_with_distance_loss(_t(ANCHOR), _t(POSITIVE), _t(NEGATIVE), None)  # keyword-only


# --- the adaptive softmax ----------------------------------------------------------------------------


def _adaptive_pair(head_bias=True):
    torch.manual_seed(0)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=head_bias).double()
    ours = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=head_bias, dtype=tg.float64)
    ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def test_adaptive_log_softmax_structure_matches_torch():
    ours, theirs = _adaptive_pair()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "head.weight", "head.bias", "tail.0.0.weight", "tail.0.1.weight", "tail.1.0.weight",
        "tail.1.1.weight"]
    for key, value in theirs.state_dict().items():
        assert ours.state_dict()[key].shape == tuple(value.shape), key
    assert list(nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3]).state_dict()) == list(
        torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3]).state_dict())
    for cutoffs in ([], [3, 3], [7, 3], [0, 4], [3, 12]):
        with pytest.raises(ValueError, match="cutoffs"):
            nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs)


@pytest.mark.parametrize("labels", [[0, 5, 11, 2, 7, 4], [9, 8], [1], 10])
def test_adaptive_log_softmax_forward_log_prob_predict_match_torch(labels):
    ours, theirs = _adaptive_pair()
    batched = isinstance(labels, list)
    x = RNG.standard_normal((len(labels), 8) if batched else (8,))
    ours_x, theirs_x = _t(x, True), _pt(x, True)
    out = ours(ours_x, tg.tensor(labels))
    ref = theirs(theirs_x, torch.tensor(labels))
    assert out._fields == ref._fields == ("output", "loss")
    assert out.output.shape == tuple(ref.output.shape) and out.loss.shape == ()
    np.testing.assert_allclose(out.output.data, ref.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.loss.data, ref.loss.detach().numpy(), rtol=1e-12)
    (out.loss * 2 + out.output.sum()).backward()
    (ref.loss * 2 + ref.output.sum()).backward()
    np.testing.assert_allclose(ours_x.grad, theirs_x.grad.numpy(), rtol=1e-10, atol=1e-12)
    ours_grads = dict(ours.named_parameters())
    for key, p in theirs.named_parameters():
        reference = np.zeros(p.shape) if p.grad is None else p.grad.numpy()
        got = np.zeros(p.shape) if ours_grads[key].grad is None else ours_grads[key].grad
        np.testing.assert_allclose(got, reference, rtol=1e-10, atol=1e-12, err_msg=key)
    if batched:
        rows = RNG.standard_normal((20, 8)) * 3
        np.testing.assert_allclose(ours.log_prob(_t(rows)).data, theirs.log_prob(_pt(rows)).detach().numpy(),
                                   rtol=1e-12)
        np.testing.assert_array_equal(ours.predict(_t(rows)).data, theirs.predict(_pt(rows)).numpy())


def test_adaptive_log_softmax_gradient_and_errors():
    ours, _ = _adaptive_pair()
    x = tg.tensor(RNG.standard_normal((4, 8)), requires_grad=True)
    labels = tg.tensor([0, 5, 11, 4])
    assert tg.gradcheck(lambda t: ours(t, labels).loss, [x])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 11\]"):
        ours(x, tg.tensor([0, 12, 1, 1]))
    with pytest.raises(RuntimeError, match="same size in the batch"):
        ours(x, tg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="multi-target"):
        ours(x, tg.tensor([[0, 1]]))


# --- lazy layers -------------------------------------------------------------------------------------

LAZY = [
    ("LazyConv3d", (4, 2), {"padding": 1}, (2, 3, 4, 5, 4)),
    ("LazyConv3d", (4, (1, 2, 2)), {"groups": 2, "bias": False}, (4, 3, 4, 5)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"output_padding": 1, "stride": 2, "bias": False}, (2, 3, 4, 5)),
    ("LazyConvTranspose2d", (2, 2), {}, (3, 4, 5)),
    ("LazyConvTranspose3d", (2, 2), {"groups": 2}, (2, 4, 3, 4, 3)),
    ("LazyBatchNorm3d", (), {"momentum": 0.3}, (3, 2, 2, 3, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 5)),
    ("LazyInstanceNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 3, 2)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_layer_becomes_its_non_lazy_class_as_torch(name, args, kwargs, shape):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.has_uninitialized_params()
    x = RNG.standard_normal(shape).astype(np.float32)
    out = ours(tg.tensor(x))
    reference = theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name.removeprefix("Lazy")
    assert isinstance(ours, getattr(nn, name.removeprefix("Lazy")))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert ours.state_dict()[key].shape == tuple(value.shape), key
    if "Norm" in name:  # the same initial weights (ones, zeros) and one step of the same statistics
        np.testing.assert_allclose(out.data, reference.detach().numpy(), rtol=1e-4, atol=1e-5)
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-5, err_msg=key)
        return
    # PyTorch's non-lazy layer, given our initial parameters, computes what ours did
    fresh = getattr(torch.nn, name.removeprefix("Lazy"))(_channels(name, shape), *args, **kwargs)
    fresh.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    np.testing.assert_allclose(out.data, fresh(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def _channels(name, shape):
    dims = int(name[-2])
    return shape[1] if len(shape) == dims + 2 else shape[0]


def test_lazy_instance_norm_reads_the_channels_of_an_unbatched_input():
    layer = nn.LazyInstanceNorm2d(affine=True)
    layer(tg.tensor(RNG.standard_normal((3, 4, 5)), dtype=tg.float32))  # (the parameters' dtype)
    assert layer.num_features == 3 and layer.weight.shape == (3,) and type(layer) is nn.InstanceNorm2d


def test_lazy_transposed_convolution_initialises_from_the_generator():
    tg.manual_seed(4)
    lazy = nn.LazyConvTranspose2d(3, 2, stride=2)
    lazy(tg.ones(1, 5, 3, 3))
    tg.manual_seed(4)
    eager = nn.ConvTranspose2d(5, 3, 2, stride=2)
    np.testing.assert_array_equal(lazy.weight.data, eager.weight.data)
    np.testing.assert_array_equal(lazy.bias.data, eager.bias.data)
    assert lazy.weight.shape == (5, 3, 2, 2) and not lazy._forward_pre_hooks


# --- NLLLoss2d and the recurrent base classes --------------------------------------------------------


def test_nll_loss_2d_is_the_deprecated_nll_loss():
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        ours = nn.NLLLoss2d(ignore_index=1, reduction="sum")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = torch.nn.NLLLoss2d(ignore_index=1, reduction="sum")
    assert isinstance(ours, nn.NLLLoss) and repr(ours) == repr(theirs) == "NLLLoss2d()"
    x = _log_probs(RNG.standard_normal((2, 3, 4, 4)).transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2).copy()
    labels = RNG.integers(0, 3, (2, 4, 4))
    np.testing.assert_allclose(ours(_t(x), _t(labels)).data, theirs(_pt(x), _pt(labels)).numpy(), rtol=1e-12)


def test_recurrent_layers_share_torchs_base_classes():
    for layer in (nn.RNN(3, 4), nn.LSTM(3, 4), nn.GRU(3, 4, num_layers=2)):
        assert isinstance(layer, nn.RNNBase)
    for cell in (nn.RNNCell(3, 4), nn.LSTMCell(3, 4), nn.GRUCell(3, 4)):
        assert isinstance(cell, nn.RNNCellBase)
    assert (nn.LSTM(3, 4).mode, nn.GRU(3, 4).mode, nn.RNN(3, 4, nonlinearity="relu").mode) == (
        "LSTM", "GRU", "RNN_RELU")
    base = nn.RNNBase("GRU", 3, 4, bidirectional=True, dtype=tg.float64)
    reference = torch.nn.GRU(3, 4, bidirectional=True).double()
    assert repr(base) == repr(torch.nn.RNNBase("GRU", 3, 4, bidirectional=True))
    assert list(base.state_dict()) == list(reference.state_dict())
    base.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in reference.state_dict().items()})
    x = RNG.standard_normal((5, 2, 3))
    np.testing.assert_allclose(base(tg.tensor(x))[0].data, reference(torch.tensor(x))[0].detach().numpy(),
                               rtol=1e-10)
    cell = nn.RNNCellBase(3, 4, True, 2)
    torch_cell = torch.nn.RNNCellBase(3, 4, True, 2)
    assert repr(cell) == repr(torch_cell)
    assert [tuple(p.shape) for p in cell.parameters()] == [tuple(p.shape) for p in torch_cell.parameters()]
    with pytest.raises(ValueError, match="Unrecognized RNN mode"):
        nn.RNNBase("FOO", 3, 4)


# --- signatures and the stand-in for GPU arrays ------------------------------------------------------

FUNCTIONS = ["ctc_loss", "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
             "max_unpool3d", "lp_pool3d", "max_pool3d_with_indices", "adaptive_max_pool3d_with_indices",
             "triplet_margin_with_distance_loss"]
LAYERS = ["CTCLoss", "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool3d", "LPPool3d",
          "TripletMarginWithDistanceLoss", "AdaptiveLogSoftmaxWithLoss", "LazyConv3d", "LazyConvTranspose1d",
          "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
          "LazyInstanceNorm2d", "LazyInstanceNorm3d", "NLLLoss2d", "RNNBase", "RNNCellBase", "LSTMCell",
          "GRUCell"]


def _parameters(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", FUNCTIONS + ["fractional_max_pool2d", "fractional_max_pool3d"])
def test_functional_signatures_match_torch(name):
    ours = _parameters(getattr(F, name))
    if name.startswith("fractional") and not name.endswith("indices"):  # PyTorch's is a dispatcher
        name += "_with_indices"
    assert ours == _parameters(getattr(torch_F, name))


@pytest.mark.parametrize("name", LAYERS)
def test_layer_signatures_match_torch(name):
    assert _parameters(getattr(nn, name).__init__) == _parameters(getattr(torch.nn, name).__init__)


SAMPLES = RNG.uniform(size=(3, 3, 3))
FOREIGN = {
    "ctc_loss": (lambda m, lp: F.ctc_loss(lp.log_softmax(2), m.tensor(TARGETS), m.tensor(INPUT_LENGTHS),
                                          m.tensor(TARGET_LENGTHS), reduction="none"), [LOGITS]),
    "ctc_loss concatenated mean zero_infinity": (
        lambda m, lp: F.ctc_loss(lp.log_softmax(2), m.tensor([1, 1, 1, 2]), (4, 5), (3, 1),
                                 zero_infinity=True),
        [LOGITS[:5, :2]]),
    "fractional_max_pool2d": (lambda m, x: F.fractional_max_pool2d(
        x, 2, output_size=(3, 4), return_indices=True, _random_samples=m.tensor(SAMPLES[:2, :, :2])),
        [RNG.standard_normal((2, 3, 7, 8))]),
    "fractional_max_pool2d drawn": (lambda m, x: _drawn(x), [RNG.standard_normal((3, 6, 6))]),
    "fractional_max_pool3d": (lambda m, x: F.fractional_max_pool3d(
        x, 2, output_size=2, _random_samples=m.tensor(SAMPLES[:1, :2])),
        [RNG.standard_normal((1, 2, 5, 4, 5))]),
    "lp_pool3d": (lambda m, x: F.lp_pool3d(x, 2, 2), [VOLUME]),
    "max_unpool3d": (lambda m, x: F.max_unpool3d(*F.max_pool3d_with_indices(x, 2), 2), [EVEN]),
    "adaptive_max_pool3d_with_indices": (lambda m, x: F.adaptive_max_pool3d_with_indices(x, 2), [VOLUME]),
    "triplet_margin_with_distance_loss": (
        lambda m, a, p, n: F.triplet_margin_with_distance_loss(a, p, n, swap=True, reduction="none"),
        [ANCHOR, POSITIVE, NEGATIVE]),
    "adaptive softmax": (lambda m, x: _foreign_adaptive(m, x), [RNG.standard_normal((5, 8))]),
}


def _drawn(x):
    tg.manual_seed(2)  # both runs draw the same samples
    return F.fractional_max_pool2d(x, 2, output_ratio=0.5)


def _foreign_adaptive(m, x):
    tg.manual_seed(1)
    layer = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=True, dtype=tg.float64)
    if m is not tg:
        for p in layer.parameters():
            p.data = foreign(p.data)
    out = layer(x, m.tensor([0, 5, 11, 2, 7]))
    return out.output, out.loss, layer.log_prob(x), layer.predict(x)


@pytest.mark.parametrize("name", list(FOREIGN))
def test_ops_keep_foreign_arrays(name):
    fn, arrays = FOREIGN[name]
    runs = run_twice(fn, arrays)
    check_same(runs)
    (_, _), (outs, leaves) = runs
    assert all(is_foreign(out.data) for out in outs)
    assert all(leaf.grad is None or is_foreign(leaf.grad) for leaf in leaves)
    assert all(np.all(np.isfinite(to_numpy(leaf.grad))) for leaf in leaves if leaf.grad is not None)
