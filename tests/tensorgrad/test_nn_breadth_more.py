"""More of torch.nn: in-place activations, local response norm, power-average pooling, unpooling,
the index-returning pool aliases, multi-class margin losses, bags of embeddings, channel shuffle,
the deprecated upsample names, `nn.Buffer` and the lazy layers.

Each function runs in both libraries on the same float64 input: values, dtypes, shapes and
gradients must match PyTorch's, the gradients finite differences too, and a stand-in for GPU
arrays must come through every op (outputs and gradients stay in the input's array kind).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from foreign_array import is_foreign
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg
import tensorgrad.nn as tnn
import tensorgrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(1234)
X4 = RNG.standard_normal((2, 6, 4, 5))
X3 = RNG.standard_normal((2, 6, 9))


def _both(values):
    """The same float64 numbers as a tensorgrad leaf and a torch leaf, both requiring grad."""
    return tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)


def _compare(fn_tg, fn_torch, arrays, rtol=1e-10, atol=1e-12):
    """Run both functions on leaves made from `arrays`; compare the output and every gradient."""
    ours, theirs = zip(*(_both(a) for a in arrays), strict=True)
    out, expected = fn_tg(*ours), fn_torch(*theirs)
    assert out.shape == tuple(expected.shape)
    assert str(out.dtype) == str(expected.dtype).replace("torch.", "")
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=rtol, atol=atol)
    weights = RNG.standard_normal(out.shape)
    out.backward(tg.tensor(weights))
    expected.backward(torch.tensor(weights))
    for leaf, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(leaf.grad, reference.grad.numpy(), rtol=rtol, atol=atol)


def _gradcheck(fn, arrays):
    assert tg.gradcheck(fn, [tg.tensor(a, requires_grad=True) for a in arrays])


# --- in-place activations ---------------------------------------------------------------------------

INPLACE = [
    ("relu_", (), {}),
    ("elu_", (0.7,), {}),
    ("leaky_relu_", (0.2,), {}),
    ("hardtanh_", (-0.5, 0.8), {}),
    ("selu_", (), {}),
    ("celu_", (1.3,), {}),
    ("rrelu_", (0.1, 0.3), {}),
    ("threshold_", (0.1, -2.0), {}),
]


@pytest.mark.parametrize("name, args, kwargs", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_activation_writes_into_input_and_matches_torch(name, args, kwargs):
    ours, theirs = _both(X4)
    a, b = ours * 1.0, theirs * 1.0
    out, expected = getattr(F, name)(a, *args, **kwargs), getattr(TF, name)(b, *args, **kwargs)
    assert out is a
    np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-12)
    assert not np.allclose(a.data, X4)  # the input itself changed
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    # (PyTorch's celu keeps 1 / alpha in float32: its gradient is off by ~1e-8; gradcheck below)
    np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-6 if name == "celu_" else 1e-12)
    if name != "rrelu_":
        _gradcheck(lambda t: getattr(F, name)(t * 1.0, *args, **kwargs), [X4[0, :2]])


@pytest.mark.parametrize("name, args, kwargs", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_activation_refuses_a_leaf_that_requires_grad(name, args, kwargs):
    with pytest.raises(RuntimeError):
        getattr(TF, name)(torch.tensor(X4, requires_grad=True), *args, **kwargs)
    with pytest.raises(RuntimeError, match=name):
        getattr(F, name)(tg.tensor(X4, requires_grad=True), *args, **kwargs)


def test_inplace_activations_on_integers_follow_torch():
    for name, args in (("relu_", ()), ("threshold_", (0, 5)), ("hardtanh_", ())):
        ours, theirs = tg.tensor([-3, 0, 2]), torch.tensor([-3, 0, 2])
        getattr(F, name)(ours, *args)
        getattr(TF, name)(theirs, *args)
        assert ours.tolist() == theirs.tolist() and ours.dtype == tg.int64
    for name in ("elu_", "leaky_relu_"):
        with pytest.raises(NotImplementedError):
            getattr(TF, name)(torch.tensor([-3, 2]))
        with pytest.raises(NotImplementedError, match=name.rstrip("_")):
            getattr(F, name)(tg.tensor([-3, 2]))


def test_rrelu_in_training_draws_slopes_within_bounds():
    x = tg.tensor(-np.ones(1000))
    F.rrelu_(x, 0.2, 0.4, training=True)
    assert (x.data <= -0.2).all() and (x.data >= -0.4).all() and x.data.std() > 0.03


# --- local response norm --------------------------------------------------------------------------


@pytest.mark.parametrize("shape, size", [((2, 6, 9), 3), ((2, 6, 4, 5), 2), ((2, 6, 4, 5), 5),
                                         ((1, 7, 2, 3, 2), 4), ((2, 3, 4), 8)])
def test_local_response_norm_matches_torch(shape, size):
    x = RNG.standard_normal(shape)
    _compare(lambda t: F.local_response_norm(t, size, alpha=0.3, beta=0.6, k=1.5),
             lambda t: TF.local_response_norm(t, size, alpha=0.3, beta=0.6, k=1.5), [x])
    _gradcheck(lambda t: F.local_response_norm(t, size, alpha=0.3, beta=0.6, k=1.5), [x])


def test_local_response_norm_modules():
    _compare(tnn.LocalResponseNorm(3, 0.2), torch.nn.LocalResponseNorm(3, 0.2), [X4])
    assert repr(tnn.LocalResponseNorm(3)) == repr(torch.nn.LocalResponseNorm(3))
    assert repr(tnn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    # CrossMapLRN2d is the documented maths of LocalResponseNorm, for 4-D input only.
    _compare(tnn.CrossMapLRN2d(3, 0.5, 0.75, 1.0), torch.nn.LocalResponseNorm(3, 0.5, 0.75, 1.0), [X4])
    with pytest.raises(ValueError, match="4D"):
        tnn.CrossMapLRN2d(3)(tg.tensor(X3))
    with pytest.raises(ValueError):
        TF.local_response_norm(torch.ones(2, 3), 2)
    with pytest.raises(ValueError, match=r"local_response_norm.*\(2, 3\)"):
        F.local_response_norm(tg.ones(2, 3), 2)
    assert tnn.LocalResponseNorm(2).state_dict() == {}


# --- power-average pooling --------------------------------------------------------------------------


@pytest.mark.parametrize("norm_type", [1, 2, 3, 1.5, float("inf")])
def test_lp_pool_matches_torch(norm_type):
    x4, x3 = np.abs(X4) + 0.1, np.abs(X3) + 0.1  # positive: x ** 1.5 is defined
    _compare(lambda t: F.lp_pool2d(t, norm_type, 2), lambda t: TF.lp_pool2d(t, norm_type, 2), [x4])
    _compare(lambda t: F.lp_pool2d(t, norm_type, (2, 3), stride=(1, 2), ceil_mode=True),
             lambda t: TF.lp_pool2d(t, norm_type, (2, 3), stride=(1, 2), ceil_mode=True), [x4])
    _compare(lambda t: F.lp_pool1d(t, norm_type, 3, 2), lambda t: TF.lp_pool1d(t, norm_type, 3, 2), [x3])
    _gradcheck(lambda t: F.lp_pool2d(t, norm_type, 2, 1), [x4[:1, :2]])


def test_lp_pool_signed_input_and_modules():
    _compare(lambda t: F.lp_pool2d(t, 2, 2), lambda t: TF.lp_pool2d(t, 2, 2), [X4])
    _compare(lambda t: F.lp_pool1d(t, 3, 2), lambda t: TF.lp_pool1d(t, 3, 2), [X3])
    _compare(tnn.LPPool2d(2, 3, stride=1), torch.nn.LPPool2d(2, 3, stride=1), [X4])
    _compare(tnn.LPPool1d(1.5, 3, 2), torch.nn.LPPool1d(1.5, 3, 2), [np.abs(X3)])
    for args in ((2, 3), (1.5, (2, 3), 2, True)):
        assert repr(tnn.LPPool2d(*args)) == repr(torch.nn.LPPool2d(*args))
        assert repr(tnn.LPPool1d(*args[:2])) == repr(torch.nn.LPPool1d(*args[:2]))


# --- unpooling ------------------------------------------------------------------------------------


def test_max_unpool2d_inverts_max_pool2d_as_torch():
    for kwargs, size in (({}, None), ({"stride": 1}, None), ({"stride": 2, "padding": 1}, None),
                         ({}, (5, 5)), ({}, (2, 6, 5, 5))):
        x = RNG.standard_normal((2, 6, 4, 4))
        values, indices = F.max_pool2d(tg.tensor(x), 2, return_indices=True, **kwargs)
        t_values, t_indices = TF.max_pool2d(torch.tensor(x), 2, return_indices=True, **kwargs)
        assert indices.tolist() == t_indices.tolist()
        _compare(lambda v: F.max_unpool2d(v, indices, 2, output_size=size, **kwargs),  # noqa: B023
                 lambda v: TF.max_unpool2d(v, t_indices, 2, output_size=size, **kwargs),  # noqa: B023
                 [values.data])
        if kwargs.get("stride") != 1:  # (overlapping windows share indices: one value is kept, both
            # get its gradient, in PyTorch too, so finite differences disagree there)
            _gradcheck(lambda v: F.max_unpool2d(v, indices, 2, output_size=size, **kwargs),  # noqa: B023
                       [values.data])


def test_max_unpool1d_and_modules():
    values, indices = F.max_pool1d(tg.tensor(X3), 3, 2, return_indices=True)
    t_values, t_indices = TF.max_pool1d(torch.tensor(X3), 3, 2, return_indices=True)
    _compare(lambda v: F.max_unpool1d(v, indices, 3, 2), lambda v: TF.max_unpool1d(v, t_indices, 3, 2),
             [values.data])
    _compare(lambda v: tnn.MaxUnpool1d(3, 2)(v, indices, output_size=[10]),
             lambda v: torch.nn.MaxUnpool1d(3, 2)(v, t_indices, output_size=[10]), [values.data])
    unbatched, t_unbatched = F.max_pool2d(tg.tensor(X4[0]), 2, return_indices=True), \
        TF.max_pool2d(torch.tensor(X4[0]), 2, return_indices=True)
    _compare(lambda v: tnn.MaxUnpool2d(2)(v, unbatched[1], (4, 5)),
             lambda v: torch.nn.MaxUnpool2d(2)(v, t_unbatched[1], (4, 5)), [unbatched[0].data])
    for args in ((2,), (3, 1, 1), ((2, 3), (1, 2))):
        assert repr(tnn.MaxUnpool2d(*args)) == repr(torch.nn.MaxUnpool2d(*args))
    assert repr(tnn.MaxUnpool1d(2, 1)) == repr(torch.nn.MaxUnpool1d(2, 1))


def test_max_unpool_errors_match_torch():
    values, indices = F.max_pool2d(tg.tensor(X4), 2, return_indices=True)
    t_values, t_indices = TF.max_pool2d(torch.tensor(X4), 2, return_indices=True)
    with pytest.raises(ValueError):
        TF.max_unpool2d(t_values, t_indices, 2, output_size=(9, 9))
    with pytest.raises(ValueError, match=r"max_unpool.*\(9, 9\)"):
        F.max_unpool2d(values, indices, 2, output_size=(9, 9))
    with pytest.raises(RuntimeError):
        TF.max_unpool2d(t_values, t_indices.int(), 2)
    with pytest.raises(RuntimeError, match="max_unpool2d.*int64"):
        F.max_unpool2d(values, indices.int(), 2)
    with pytest.raises(RuntimeError):
        TF.max_unpool2d(t_values, t_indices * 100, 2)
    with pytest.raises(RuntimeError, match="max_unpool2d: Found an invalid max index"):
        F.max_unpool2d(values, indices * 100, 2)


def test_pool_aliases_always_return_values_and_indices():
    x = tg.tensor(X4)
    for name, args in (("max_pool2d_with_indices", (2,)), ("max_pool1d_with_indices", (3, 2)),
                       ("adaptive_max_pool2d_with_indices", ((2, 3),)),
                       ("adaptive_max_pool1d_with_indices", (4,))):
        source = x if "2d" in name else tg.tensor(X3)
        values, indices = getattr(F, name)(source, *args)
        t_values, t_indices = getattr(TF, name)(torch.tensor(source.data), *args)
        np.testing.assert_array_equal(values.data, t_values.numpy())
        assert indices.tolist() == t_indices.tolist() and indices.dtype == tg.int64


# --- multi-class margin losses ---------------------------------------------------------------------


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multi_margin_loss_matches_torch(p, reduction):
    x, target, weight = RNG.standard_normal((4, 5)), [0, 3, 4, 1], RNG.random(5)
    for w in (None, weight):
        _compare(lambda t: F.multi_margin_loss(t, tg.tensor(target), p, 0.7,  # noqa: B023
                                               None if w is None else tg.tensor(w), reduction=reduction),  # noqa: B023
                 lambda t: TF.multi_margin_loss(t, torch.tensor(target), p, 0.7,  # noqa: B023
                                                None if w is None else torch.tensor(w), reduction=reduction),  # noqa: B023
                 [x])
    # 1-D input: one sample, its loss shaped as the target
    for target1 in (2, [2]):
        _compare(lambda t: F.multi_margin_loss(t, tg.tensor(target1), p, reduction=reduction),  # noqa: B023
                 lambda t: TF.multi_margin_loss(t, torch.tensor(target1), p, reduction=reduction),  # noqa: B023
                 [x[0]])
    _gradcheck(lambda t: F.multi_margin_loss(t, tg.tensor(target), p, 0.7, tg.tensor(weight)), [x])


def test_multi_margin_loss_errors_and_module():
    x = tg.tensor(RNG.standard_normal((3, 4)))
    for call, error, words in (
            (lambda m, t: m(t, T(m, [0, 1, 2]), p=3), ValueError, "only p == 1 and p == 2"),
            (lambda m, t: m(t, T(m, [0, 1, 5])), RuntimeError, "target out of range"),
            (lambda m, t: m(t, T(m, [0, 1])), RuntimeError, r"target size \[3\]"),
            (lambda m, t: m(t, T(m, [0, 1, 2]) * 1.0), RuntimeError, "Long"),
            (lambda m, t: m(t, T(m, [0, 1, 2]), weight=T(m, [1.0, 2.0, 3.0], t)), RuntimeError,
             "inconsistent weight size")):
        with pytest.raises(error):
            call(TF.multi_margin_loss, torch.tensor(x.data))
        with pytest.raises(error, match=f"multi_margin_loss.*{words}"):
            call(F.multi_margin_loss, x)
    weight = RNG.random(4)
    ours = tnn.MultiMarginLoss(2, 0.5, tg.tensor(weight))
    theirs = torch.nn.MultiMarginLoss(2, 0.5, torch.tensor(weight))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert repr(ours) == repr(theirs) == "MultiMarginLoss()"
    target = [1, 0, 3]
    _compare(lambda t: ours(t, tg.tensor(target)), lambda t: theirs(t, torch.tensor(target)), [x.data])


def T(m, values, like=None):
    """A tensor of `values` in torch's or tensorgrad's kind, as the loss `m` being called takes."""
    if m.__module__.startswith("torch"):
        return torch.tensor(values, dtype=None if like is None else like.dtype)
    return tg.tensor(values, dtype=None if like is None else like.dtype)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_matches_torch(reduction):
    x = RNG.standard_normal((4, 5))
    # targets end at the first -1; a repeated target counts twice, as in PyTorch's kernel
    target = [[3, 0, -1, 1, 2], [1, 1, -1, -1, -1], [-1, 2, 3, 0, 0], [4, 3, 2, 1, 0]]
    _compare(lambda t: F.multilabel_margin_loss(t, tg.tensor(target), reduction=reduction),
             lambda t: TF.multilabel_margin_loss(t, torch.tensor(target), reduction=reduction), [x])
    _compare(lambda t: F.multilabel_margin_loss(t, tg.tensor(target[0]), reduction=reduction),
             lambda t: TF.multilabel_margin_loss(t, torch.tensor(target[0]), reduction=reduction), [x[0]])
    _gradcheck(lambda t: F.multilabel_margin_loss(t, tg.tensor(target), reduction=reduction), [x])


def test_multilabel_margin_loss_errors_and_module():
    x = RNG.standard_normal((2, 4))
    for target, words in (([1, -1, 0, 0], "inconsistent target size"), ([[1, 5, 0, 0], [0, -1, 0, 0]],
                                                                          "out of range")):
        with pytest.raises(RuntimeError):
            TF.multilabel_margin_loss(torch.tensor(x), torch.tensor(target))
        with pytest.raises(RuntimeError, match=f"multilabel_margin_loss.*{words}"):
            F.multilabel_margin_loss(tg.tensor(x), tg.tensor(target))
    assert repr(tnn.MultiLabelMarginLoss()) == repr(torch.nn.MultiLabelMarginLoss())
    target = [[2, 1, -1, 0], [0, -1, 3, 3]]
    _compare(lambda t: tnn.MultiLabelMarginLoss(reduction="sum")(t, tg.tensor(target)),
             lambda t: torch.nn.MultiLabelMarginLoss(reduction="sum")(t, torch.tensor(target)), [x])


# --- bags of embeddings ------------------------------------------------------------------------------

INDICES, OFFSETS = [1, 2, 4, 4, 3, 0, 5, 2], [0, 2, 2, 5]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag_matches_torch(mode, padding_idx):
    weight = RNG.standard_normal((6, 3))
    # offsets, then the same bags in CSR form (include_last_offset), then a 2-D batch
    for inputs, offsets, last in ((INDICES, OFFSETS, False), (INDICES, OFFSETS + [8], True),
                                  ([[1, 2, 4, 4], [3, 0, 5, 2]], None, False)):
        def ours(w, inputs=inputs, offsets=offsets, last=last):
            return F.embedding_bag(tg.tensor(inputs), w, None if offsets is None else tg.tensor(offsets),
                                   mode=mode, include_last_offset=last, padding_idx=padding_idx)

        def theirs(w, inputs=inputs, offsets=offsets, last=last):
            return TF.embedding_bag(torch.tensor(inputs), w,
                                    None if offsets is None else torch.tensor(offsets), mode=mode,
                                    include_last_offset=last, padding_idx=padding_idx)

        _compare(ours, theirs, [weight])
        _gradcheck(ours, [weight])


def test_embedding_bag_per_sample_weights_and_max_norm():
    weight, scale = RNG.standard_normal((6, 3)), RNG.standard_normal(8)
    _compare(lambda w, s: F.embedding_bag(tg.tensor(INDICES), w, tg.tensor(OFFSETS), mode="sum",
                                          per_sample_weights=s, padding_idx=2),
             lambda w, s: TF.embedding_bag(torch.tensor(INDICES), w, torch.tensor(OFFSETS), mode="sum",
                                           per_sample_weights=s, padding_idx=2), [weight, scale])
    _gradcheck(lambda w, s: F.embedding_bag(tg.tensor(INDICES), w, tg.tensor(OFFSETS), mode="sum",
                                            per_sample_weights=s), [weight, scale])
    ours, theirs = tg.tensor(weight * 3), torch.tensor(weight * 3)
    out = F.embedding_bag(tg.tensor(INDICES), ours, tg.tensor(OFFSETS), max_norm=1.0)
    expected = TF.embedding_bag(torch.tensor(INDICES), theirs, torch.tensor(OFFSETS), max_norm=1.0)
    np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-12)  # rows renormalised in place


def test_embedding_bag_errors_match_torch():
    w = tg.tensor(np.ones((5, 3)))
    i = [1, 2, 4, 4, 3, 0]
    cases = [
        (lambda m, T: m(T(i).reshape(2, 3), W(m, w), T([0, 2])), ValueError, "offsets has to be None"),
        (lambda m, T: m(T(i), W(m, w)), ValueError, "offsets has to be a 1D Tensor"),
        (lambda m, T: m(T(i), W(m, w), T([0, 2]), mode="mean", per_sample_weights=W(m, w)[0].repeat(2)),
         NotImplementedError, "only supported for mode='sum'"),
        (lambda m, T: m(T(i), W(m, w), T([0, 2]), mode="bad"), ValueError, "mode has to be one of"),
        (lambda m, T: m(T(i), W(m, w), T([0, 7])), RuntimeError, "can not be greater than"),
        (lambda m, T: m(T(i) * 2, W(m, w), T([0, 2])), RuntimeError, "not in the valid range"),
        (lambda m, T: m(T(i) * 1.0, W(m, w), T([0, 2])), RuntimeError, "Long, Int"),
        (lambda m, T: m(T(i), W(m, w), T([0, 2]), mode="max", scale_grad_by_freq=True), ValueError,
         "scaling"),
    ]
    for call, error, words in cases:
        with pytest.raises(error):
            call(TF.embedding_bag, torch.tensor)
        with pytest.raises(error, match=f"embedding_bag.*{words}"):
            call(F.embedding_bag, tg.tensor)


def W(m, weight):
    """`weight` as the kind of tensor the embedding_bag `m` takes."""
    return torch.tensor(weight.data) if m.__module__.startswith("torch") else weight


def test_embedding_bag_module():
    tg.manual_seed(0)
    bag = tnn.EmbeddingBag(6, 3, mode="max", padding_idx=1, max_norm=1.0)
    reference = torch.nn.EmbeddingBag(6, 3, mode="max", padding_idx=1, max_norm=1.0)
    assert repr(bag) == repr(reference)
    assert repr(tnn.EmbeddingBag(4, 3)) == repr(torch.nn.EmbeddingBag(4, 3))
    assert list(bag.state_dict()) == list(reference.state_dict()) == ["weight"]
    assert (bag.weight.data[1] == 0).all() and bag.weight.data.std() > 0.3
    reference.load_state_dict({"weight": torch.tensor(bag.weight.data)})
    out = bag(tg.tensor(INDICES), tg.tensor(OFFSETS))
    expected = reference(torch.tensor(INDICES), torch.tensor(OFFSETS))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-6)
    pretrained = tnn.EmbeddingBag.from_pretrained(tg.tensor(RNG.standard_normal((6, 3))), mode="sum")
    assert not pretrained.weight.requires_grad and pretrained.mode == "sum"
    assert tnn.EmbeddingBag.from_pretrained(tg.ones(3, 2), freeze=False).weight.requires_grad


# --- channel shuffle and the deprecated upsample names ----------------------------------------------


def test_channel_shuffle_matches_torch():
    for groups in (1, 2, 3, 6):
        _compare(lambda t: F.channel_shuffle(t, groups), lambda t: TF.channel_shuffle(t, groups), [X4])  # noqa: B023
    _compare(tnn.ChannelShuffle(3), torch.nn.ChannelShuffle(3), [X3])
    assert repr(tnn.ChannelShuffle(3)) == repr(torch.nn.ChannelShuffle(3))
    x = tg.arange(12).reshape(1, 6, 2)
    expected = TF.channel_shuffle(torch.arange(12).reshape(1, 6, 2), 2)
    assert F.channel_shuffle(x, 2).tolist() == expected.tolist() and x.dtype == tg.int64
    for args, words in (((X4, 4), "divisible by groups"), ((X4, 0), "must be positive"),
                        ((X4[0, 0], 2), "> 2 dims")):
        with pytest.raises(RuntimeError):
            TF.channel_shuffle(torch.tensor(args[0]), args[1])
        with pytest.raises(RuntimeError, match=f"channel_shuffle.*{words}"):
            F.channel_shuffle(tg.tensor(args[0]), args[1])


def test_upsample_names_match_torch_and_warn():
    for name, kwargs in (("upsample", {"scale_factor": 2, "mode": "bilinear"}),
                         ("upsample", {"size": (5, 7)}), ("upsample_nearest", {"scale_factor": 2}),
                         ("upsample_bilinear", {"size": (7, 9)}),
                         ("upsample_bilinear", {"scale_factor": 1.5})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _compare(lambda t: getattr(F, name)(t, **kwargs), lambda t: getattr(TF, name)(t, **kwargs),  # noqa: B023
                     [X4])
        with pytest.warns(UserWarning, match=f"{name} is deprecated"):
            getattr(F, name)(tg.tensor(X4), **kwargs)


def test_upsampling_modules_match_torch():
    for cls, kwargs in (("UpsamplingNearest2d", {"scale_factor": 2}), ("UpsamplingNearest2d", {"size": 7}),
                        ("UpsamplingBilinear2d", {"scale_factor": 2}),
                        ("UpsamplingBilinear2d", {"size": (3, 8)})):
        ours, theirs = getattr(tnn, cls)(**kwargs), getattr(torch.nn, cls)(**kwargs)
        assert repr(ours) == repr(theirs)
        _compare(ours, theirs, [X4])


# --- nn.Buffer --------------------------------------------------------------------------------------


def _with_buffers(nn, ones):
    module = nn.Module()
    module.kept = nn.Buffer(ones(3))
    module.scratch = nn.Buffer(ones(2), persistent=False)
    module.inner = nn.Linear(2, 2)
    module.inner.stat = nn.Buffer(ones(1))
    module.plain = ones(4)  # a tensor that is not marked stays a plain attribute
    return module


def test_buffer_registers_on_assignment_as_torch():
    ours, theirs = _with_buffers(tnn, tg.ones), _with_buffers(torch.nn, torch.ones)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()] == \
        ["kept", "scratch", "inner.stat"]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "scratch" not in ours.state_dict() and "plain" not in ours.state_dict()
    assert isinstance(ours.kept, tg.Tensor) and not ours.kept.requires_grad
    ours.kept = tg.zeros(3)  # a registered buffer takes a plain tensor
    assert ours.get_buffer("kept").tolist() == [0.0, 0.0, 0.0]
    ours.scratch = tnn.Buffer(tg.ones(2), persistent=True)  # re-marking changes persistence
    assert "scratch" in ours.state_dict()
    source = tg.ones(3)
    shared = tnn.Buffer(source)
    source.data[0] = 5
    assert shared.tolist()[0] == 5  # shares memory, as torch.nn.Buffer(t) does
    with pytest.raises(TypeError, match="parameter 'weight'"):
        ours.inner.weight = tnn.Buffer(tg.ones(2, 2))
    ours.to(tg.float64)
    assert ours.kept.dtype == tg.float64


# --- lazy layers ------------------------------------------------------------------------------------

LAZY = [
    ("LazyLinear", (3,), {}, (2, 4)),
    ("LazyLinear", (3,), {"bias": False}, (2, 5, 4)),
    ("LazyConv2d", (4, 3), {"padding": 1, "stride": 2}, (2, 3, 6, 6)),
    ("LazyConv2d", (4, 3), {"groups": 2, "bias": False}, (4, 6, 5)),
    ("LazyConv1d", (4, 2), {}, (2, 3, 7)),
    ("LazyBatchNorm1d", (), {}, (5, 3)),
    ("LazyBatchNorm1d", (), {"affine": False, "momentum": None}, (5, 3, 4)),
    ("LazyBatchNorm2d", (), {"eps": 1e-3}, (4, 3, 2, 2)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_layer_becomes_its_non_lazy_class_as_torch(name, args, kwargs, shape):
    ours, theirs = getattr(tnn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (key, value), (_, reference) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert repr(value) == repr(reference) == "<UninitializedParameter>", key
    assert ours.has_uninitialized_params()
    weight = ours.weight if "weight" in ours._parameters else None
    x = RNG.standard_normal(shape).astype(np.float32)
    out = ours(tg.tensor(x))
    theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name.removeprefix("Lazy")
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert ours.state_dict()[key].shape == tuple(value.shape), key
    if weight is not None:
        assert ours.weight is weight and type(weight) is tnn.Parameter  # the same object, materialised
    # from here on the layer is the non-lazy one: PyTorch's module, given its state, agrees
    reference = getattr(torch.nn, name.removeprefix("Lazy"))
    fresh = theirs if "BatchNorm" in name else reference(*_real_args(name, args, shape), **kwargs)
    fresh.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    if "BatchNorm" in name:  # both took one training step from the same zero and one statistics
        for key in ("running_mean", "running_var"):
            np.testing.assert_allclose(ours.state_dict()[key].numpy(), theirs.state_dict()[key].numpy(),
                                       rtol=1e-5)
    else:
        np.testing.assert_allclose(out.data, fresh(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def _real_args(name, args, shape):
    """The non-lazy constructor's arguments: the inferred size first."""
    if name == "LazyLinear":
        return (shape[-1], *args)
    channels = shape[1] if len(shape) == (3 if name == "LazyConv1d" else 4) else shape[0]
    return (channels, *args)


def test_lazy_linear_initialises_as_linear_from_the_generator():
    tg.manual_seed(3)
    lazy = tnn.LazyLinear(2)
    lazy(tg.ones(1, 5))
    tg.manual_seed(3)
    eager = tnn.Linear(5, 2)
    np.testing.assert_array_equal(lazy.weight.data, eager.weight.data)
    np.testing.assert_array_equal(lazy.bias.data, eager.bias.data)
    assert type(lazy) is tnn.Linear and not lazy._forward_pre_hooks
    assert lazy(tg.ones(3, 5)).shape == (3, 2)  # later calls are a plain Linear's


def test_lazy_layers_take_the_shapes_of_a_loaded_state_dict():
    reference = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(),
                                    torch.nn.Linear(18, 4))
    reference.eval()
    lazy = tnn.Sequential(tnn.LazyConv2d(2, 3), tnn.LazyBatchNorm2d(), tnn.Flatten(), tnn.LazyLinear(4))
    lazy.eval()
    torch_lazy = torch.nn.LazyLinear(4)
    torch_lazy.load_state_dict(reference[3].state_dict())  # PyTorch's lazy layers load too
    lazy.load_state_dict({key: value.numpy() for key, value in reference.state_dict().items()})
    assert lazy[3].weight.shape == tuple(torch_lazy.weight.shape) == (4, 18)
    x = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
    expected = reference(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(lazy(tg.tensor(x)).data, expected, rtol=1e-5, atol=1e-6)
    assert repr(lazy[0]) == repr(reference[0]) and repr(lazy[3]) == repr(reference[3])


# --- stand-in GPU arrays ------------------------------------------------------------------------------

FOREIGN = [
    ("relu_", lambda m, x: F.relu_(x * 1.0), [X4]),
    ("elu_", lambda m, x: F.elu_(x * 1.0, 0.5), [X4]),
    ("leaky_relu_", lambda m, x: F.leaky_relu_(x * 1.0), [X4]),
    ("hardtanh_", lambda m, x: F.hardtanh_(x * 1.0), [X4]),
    ("selu_", lambda m, x: F.selu_(x * 1.0), [X4]),
    ("celu_", lambda m, x: F.celu_(x * 1.0, 0.5), [X4]),
    ("rrelu_", lambda m, x: (tg.manual_seed(0), F.rrelu_(x * 1.0, training=True))[1], [X4]),
    ("threshold_", lambda m, x: F.threshold_(x * 1.0, 0.1, 3.0), [X4]),
    ("local_response_norm", lambda m, x: F.local_response_norm(x, 3, alpha=0.5), [X4]),
    ("CrossMapLRN2d", lambda m, x: tnn.CrossMapLRN2d(2, 0.5)(x), [X4]),
    ("lp_pool2d", lambda m, x: F.lp_pool2d(x, 2, 2), [X4]),
    ("lp_pool1d", lambda m, x: F.lp_pool1d(x, 1.5, 3, 2), [np.abs(X3)]),
    ("max_unpool2d",
     lambda m, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2, output_size=(4, 5)), [X4]),
    ("max_unpool1d", lambda m, x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2), [X3]),
    ("max_pool2d_with_indices", lambda m, x: F.max_pool2d_with_indices(x, 2)[0], [X4]),
    ("adaptive_max_pool1d_with_indices", lambda m, x: F.adaptive_max_pool1d_with_indices(x, 4)[0], [X3]),
    # (the weight is a constant: PyTorch refuses one that requires grad)
    ("multi_margin_loss", lambda m, x, w: F.multi_margin_loss(x, m.tensor([0, 3, 4]), p=2, weight=w.detach()),
     [RNG.standard_normal((3, 5)), RNG.random(5)]),
    ("multilabel_margin_loss",
     lambda m, x: F.multilabel_margin_loss(x, m.tensor([[3, 0, -1, 1, 2], [1, 1, -1, -1, -1],
                                                        [-1, 2, 3, 0, 0]])),
     [RNG.standard_normal((3, 5))]),
    ("embedding_bag sum", lambda m, w, s: F.embedding_bag(m.tensor(INDICES), w, m.tensor(OFFSETS), mode="sum",
                                                          per_sample_weights=s, padding_idx=3),
     [RNG.standard_normal((6, 3)), RNG.standard_normal(8)]),
    ("embedding_bag mean", lambda m, w: F.embedding_bag(m.tensor(INDICES), w, m.tensor(OFFSETS)),
     [RNG.standard_normal((6, 3))]),
    ("embedding_bag max", lambda m, w: F.embedding_bag(m.tensor([[1, 2, 4], [4, 3, 0]]), w, mode="max"),
     [RNG.standard_normal((6, 3))]),
    ("channel_shuffle", lambda m, x: F.channel_shuffle(x, 3), [X4]),
    ("UpsamplingBilinear2d", lambda m, x: tnn.UpsamplingBilinear2d(scale_factor=2)(x), [X4]),
    ("UpsamplingNearest2d", lambda m, x: tnn.UpsamplingNearest2d(size=7)(x), [X4]),
]


@pytest.mark.parametrize("name, fn, arrays", FOREIGN, ids=[c[0] for c in FOREIGN])
def test_ops_keep_foreign_arrays(name, fn, arrays):
    check_same(run_twice(fn, arrays))


def test_lazy_layer_materialises_where_and_as_its_uninitialised_parameters_are():
    from foreign_array import foreign

    layer = tnn.LazyLinear(2)
    layer.to(tg.float64)  # before the first call, as PyTorch allows
    for param in layer.parameters():  # what moving it to a GPU does to each array
        param.data = foreign(param.data)
    out = layer(tg.from_numpy(foreign(X4[0, 0])))  # (4, 5) -> (4, 2)
    assert out.shape == (4, 2) and is_foreign(out.data)
    assert is_foreign(layer.weight.data) and layer.weight.dtype == tg.float64
