"""Differential tests against PyTorch for the rest of `nn.functional`: embedding, embedding_bag,
one_hot, multi_head_attention_forward, channel shuffle, the in-place activations and the
deterministic parts of dropout."""

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

R = np.random.RandomState(0)
W = R.randn(7, 3)


def _both(fn_t, fn_g, args, kwargs):
    """Run one call through torch and tensorgrad (numpy arrays become tensors of each)."""
    def conv(x, make):
        return make(x) if isinstance(x, np.ndarray) else x
    out = []
    for fn, make in ((fn_t, torch.from_numpy), (fn_g, tg.tensor)):
        try:
            out.append(fn(*[conv(a, make) for a in args], **{k: conv(v, make) for k, v in kwargs.items()}))
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            out.append(e)
    return out


def _assert_same(t, g):
    if isinstance(t, Exception):
        assert isinstance(g, type(t)), f"torch raised {t!r}, tensorgrad gave {g!r}"
        return
    assert not isinstance(g, Exception), f"torch succeeded, tensorgrad raised {g!r}"
    assert str(g.dtype) == str(t.dtype).replace("torch.", "")
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(g.data, t.detach().numpy(), rtol=1e-6, atol=1e-9)


EMBEDDING_CASES = [
    (np.array([[1, 2], [6, 1]]), {"padding_idx": -1}),
    (np.array([1, 1, 2, 5]), {"padding_idx": 1, "scale_grad_by_freq": True}),
    (np.array(3), {}),
    (np.array([0, 7]), {}),
    (np.array([0, -1]), {}),
    (np.array([1.0, 2.0]), {}),
    (np.array([1, 2]), {"padding_idx": 7}),
    (np.array([1, 2]), {"padding_idx": 1.0}),
]


@pytest.mark.parametrize("idx, kwargs", EMBEDDING_CASES)
def test_embedding(idx, kwargs):
    t, g = _both(TF.embedding, F.embedding, [idx, W], kwargs)
    _assert_same(t, g)
    if not isinstance(t, Exception):
        tw, gw = torch.tensor(W, requires_grad=True), tg.tensor(W, requires_grad=True)
        TF.embedding(torch.from_numpy(idx), tw, **kwargs).pow(2).sum().backward()
        F.embedding(tg.tensor(idx), gw, **kwargs).pow(2).sum().backward()
        np.testing.assert_allclose(gw.grad, tw.grad.numpy())


@pytest.mark.parametrize("norm_type", [1.0, 2.0, float("inf")])
def test_embedding_max_norm_renorms_weight_in_place(norm_type):
    tw, gw = torch.tensor(W * 3), tg.tensor(W * 3)
    idx = np.array([0, 2, 2, 5])
    out_t = TF.embedding(torch.from_numpy(idx), tw, max_norm=1.5, norm_type=norm_type)
    out_g = F.embedding(tg.tensor(idx), gw, max_norm=1.5, norm_type=norm_type)
    np.testing.assert_allclose(gw.data, tw.numpy())
    np.testing.assert_allclose(out_g.data, out_t.numpy())


BAG_CASES = [
    (np.array([1, 2, 2, 4, 1, 6, 0]), {"offsets": np.array([0, 3, 3, 5]), "mode": "max"}),
    (np.array([1, 2, 2, 4, 1, 6, 0]), {"offsets": np.array([0, 3, 5, 7]), "include_last_offset": True}),
    (np.array([[1, 2, 2], [4, 1, 6]]), {"mode": "sum"}),
    (np.array([1, 2, 2, 4, 1]), {"offsets": np.array([0, 2]), "padding_idx": -5, "mode": "mean"}),
    (np.array([1, 2, 2, 4, 1]), {"offsets": np.array([0, 2]), "mode": "sum",
                                 "per_sample_weights": R.randn(5)}),
    (np.array([1, 2, 2, 4, 1]), {"offsets": np.array([0, 2]), "padding_idx": 7}),
    (np.array([1, 2, 2, 4, 1]), {"offsets": np.array([0.0, 2.0])}),
    (np.array([1, 2, 2, 4, 1]), {"offsets": np.array([0, 2]), "mode": "sum",
                                 "per_sample_weights": R.randn(5).astype(np.float32)}),
    (np.array([1, 2, 2, 4, 1]), {"offsets": np.array([0, 2]), "mode": "mean",
                                 "per_sample_weights": R.randn(5)}),
    (np.array([1, 2, 2, 4, 9]), {"offsets": np.array([0, 2])}),
]


@pytest.mark.parametrize("idx, kwargs", BAG_CASES)
def test_embedding_bag(idx, kwargs):
    t, g = _both(TF.embedding_bag, F.embedding_bag, [idx, W], kwargs)
    _assert_same(t, g)


@pytest.mark.parametrize("x, num_classes", [
    (np.array([0, 2, 1]), -1), (np.array(2), 4), (np.zeros(0, np.int64), -1),
    (np.zeros((2, 0), np.int64), 0), (np.zeros(0, np.int64), 3), (np.array([0, -1]), 3),
    (np.array([0, 3]), 3), (np.array([0, 1], np.int32), 3),
])
def test_one_hot(x, num_classes):
    _assert_same(*_both(TF.one_hot, F.one_hot, [x, num_classes], {}))


def test_one_hot_non_tensor_is_type_error():
    with pytest.raises(TypeError):
        F.one_hot([0, 1], 3)


def test_embedding_non_tensor_weight_is_type_error():
    with pytest.raises(TypeError):
        F.embedding(tg.tensor([0, 1]), W)


@pytest.mark.parametrize("shape, groups", [((1, 6, 2, 2), 3), ((2, 6, 3), 2), ((1, 6), 3), ((1, 5, 2), 2),
                                           ((2, 6, 2), 0)])
def test_native_channel_shuffle(shape, groups):
    x = R.randn(*shape)
    _assert_same(*_both(torch.native_channel_shuffle, F.native_channel_shuffle, [x, groups], {}))


MHA_CASES = [
    dict(batched=True, sep=False, bias_kv=False, zero=False, mask="bool", need_weights=True, avg=True),
    dict(batched=True, sep=True, bias_kv=True, zero=True, mask="kpm", need_weights=True, avg=False),
    dict(batched=False, sep=False, bias_kv=True, zero=False, mask="float", need_weights=False, avg=True),
    dict(batched=True, sep=False, bias_kv=False, zero=True, mask="both", need_weights=False, avg=True),
]


@pytest.mark.parametrize("case", MHA_CASES)
def test_multi_head_attention_forward(case):
    rng = np.random.RandomState(1)
    length, source, batch, e, heads = 3, 4, 2, 6, 2
    kdim = 5 if case["sep"] else e
    bs = (batch,) if case["batched"] else ()
    arrays = {"q": rng.randn(length, *bs, e), "k": rng.randn(source, *bs, kdim),
              "v": rng.randn(source, *bs, kdim),
              "ipw": None if case["sep"] else rng.randn(3 * e, e), "ipb": rng.randn(3 * e),
              "bk": rng.randn(1, 1, e) if case["bias_kv"] else None,
              "bv": rng.randn(1, 1, e) if case["bias_kv"] else None,
              "opw": rng.randn(e, e), "opb": rng.randn(e),
              "qw": rng.randn(e, e) if case["sep"] else None,
              "kw": rng.randn(e, kdim) if case["sep"] else None,
              "vw": rng.randn(e, kdim) if case["sep"] else None,
              "am": {"bool": rng.rand(length, source) < 0.3, "float": rng.randn(length, source),
                     "both": rng.rand(length, source) < 0.3}.get(case["mask"]),
              "kpm": rng.rand(*bs, source) < 0.3 if case["mask"] in ("kpm", "both") else None}
    results = []
    for lib, fn in ((torch.tensor, TF.multi_head_attention_forward),
                    (tg.tensor, F.multi_head_attention_forward)):
        t = {k: None if v is None else lib(v, requires_grad=v.dtype.kind == "f") for k, v in arrays.items()}
        out, weights = fn(t["q"], t["k"], t["v"], e, heads, t["ipw"], t["ipb"], t["bk"], t["bv"],
                          case["zero"], 0.0, t["opw"], t["opb"], key_padding_mask=t["kpm"],
                          need_weights=case["need_weights"],
                          attn_mask=t["am"], use_separate_proj_weight=case["sep"], q_proj_weight=t["qw"],
                          k_proj_weight=t["kw"], v_proj_weight=t["vw"], average_attn_weights=case["avg"])
        loss = (out * lib(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum()
        if weights is not None:
            loss = loss + (weights * weights).nan_to_num().sum()
        loss.backward()
        grads = [np.asarray(t[k].grad) for k in ("q", "k", "opw", "ipb") if t[k] is not None]
        results.append((np.asarray(out.detach().numpy() if hasattr(out, "detach") else out.data),
                        None if weights is None else tuple(weights.shape), grads))
    (out_t, w_t, g_t), (out_g, w_g, g_g) = results
    np.testing.assert_allclose(np.asarray(out_g), out_t, rtol=1e-6, atol=1e-9)
    assert w_g == w_t
    for a, b in zip(g_t, g_g, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)


def test_multi_head_attention_forward_errors():
    q = tg.randn(3, 2, 6)
    with pytest.raises(AssertionError):  # query's width is not embed_dim_to_check
        F.multi_head_attention_forward(q, q, q, 8, 2, tg.randn(24, 8), None, None, None, False, 0.0,
                                       tg.randn(8, 8), None)
    with pytest.raises(RuntimeError):  # is_causal without attn_mask
        F.multi_head_attention_forward(q, q, q, 6, 2, tg.randn(18, 6), None, None, None, False, 0.0,
                                       tg.randn(6, 6), None, is_causal=True)


@pytest.mark.parametrize("name, args", [("relu_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)),
                                        ("hardtanh_", (-0.5, 0.5)), ("selu_", ()), ("celu_", (1.5,)),
                                        ("rrelu_", (0.1, 0.3, False)), ("threshold_", (0.1, 20.0))])
def test_inplace_activations(name, args):
    x = R.randn(3, 4) * 3
    tx, gx = torch.tensor(x), tg.tensor(x)
    assert getattr(F, name)(gx, *args) is gx
    getattr(TF, name)(tx, *args)
    assert gx._version == tx._version
    np.testing.assert_allclose(gx.data, tx.numpy())


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                  "feature_alpha_dropout"])
@pytest.mark.parametrize("p, training", [(0.5, False), (1.0, True), (0.0, True), (1.5, True)])
def test_dropout_deterministic(name, p, training):
    x = R.randn(2, 3, 2, 2, 2)[(slice(None),) * {"dropout1d": 3, "dropout2d": 4}.get(name, 5)
                                + (0,) * {"dropout1d": 2, "dropout2d": 1}.get(name, 0)]
    _assert_same(*_both(getattr(TF, name), getattr(F, name), [x], {"p": p, "training": training}))


def test_dropout_scales_kept_by_one_over_keep_probability():
    x = tg.tensor(np.abs(R.randn(4, 6, 5, 5)) + 1)
    for fn in (F.dropout, F.dropout2d):
        out = fn(x, 0.75).data
        kept = out != 0
        np.testing.assert_allclose(out[kept], 4 * x.data[kept])


def test_gumbel_softmax_hard_straight_through():
    tg.manual_seed(0)
    x = tg.tensor(R.randn(3, 4), requires_grad=True)
    y = F.gumbel_softmax(x, tau=0.5, hard=True, dim=0)
    assert set(np.unique(y.data)) <= {0.0, 1.0} and np.all(y.data.sum(0) == 1)
    (y * tg.tensor(R.randn(3, 4))).sum().backward()
    assert np.isfinite(x.grad).all() and np.abs(x.grad).sum() > 0
    np.testing.assert_allclose(x.grad.sum(0), 0, atol=1e-12)  # a softmax's gradient sums to 0 over dim


@pytest.mark.parametrize(("name", "shape"), [("dropout", (2, 3)), ("dropout1d", (2, 3, 4)),
                                           ("dropout2d", (2, 3, 4, 5)), ("dropout3d", (2, 3, 4, 5, 6))])
def test_dropout_of_integers_in_training_is_refused_and_kept_outside_it(name, shape):
    x = np.ones(shape, dtype=np.int64)
    with pytest.raises(RuntimeError):
        getattr(torch.nn.functional, name)(torch.tensor(x), 0.5, True)
    with pytest.raises(RuntimeError, match=f"{name}: result type Float"):
        getattr(F, name)(tg.tensor(x), 0.5, True)
    assert getattr(F, name)(tg.tensor(x), 0.5, False).dtype == np.int64


def test_dropout_of_a_list_is_a_type_error():
    with pytest.raises(TypeError):
        torch.nn.functional.dropout([1.0, 2.0])
    with pytest.raises(TypeError, match="dropout"):
        F.dropout([1.0, 2.0])


def test_channel_shuffle_at_the_top_level_as_torch():
    x = np.arange(2 * 6 * 2, dtype=np.float64).reshape(2, 6, 2)
    for name in ("channel_shuffle", "native_channel_shuffle"):
        np.testing.assert_array_equal(getattr(tg, name)(tg.tensor(x), 3).numpy(),
                                      getattr(torch, name)(torch.tensor(x), 3).numpy())
