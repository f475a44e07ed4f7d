"""`tensorgrad.nn.attention`: scaled_dot_product_attention and MultiheadAttention against PyTorch.

scaled_dot_product_attention: each option that changes the math (masks of both kinds, causal,
scale, grouped-query heads, a query that sees no key) against PyTorch in float64, values and
gradients of every input, and against finite differences; dropout by its structure.
MultiheadAttention: PyTorch's module and ours with the same state dict (loaded either way),
over the layouts, masks and options, comparing outputs, weights and every gradient. The
comparisons with PyTorch run on the CPU, and on a GPU where there is one.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import placed_on

import tensorgrad as tg
from tensorgrad.device import to_numpy
from tensorgrad.nn.attention import MultiheadAttention, scaled_dot_product_attention

RNG = np.random.default_rng(0)
KEEP = RNG.random((4, 6)) > 0.3  # a bool mask: True = this query may see this key
KEEP[2] = False  # query 2 sees nothing: PyTorch gives it 0, and gradient 0

# (id, shapes of query, key, value and an optional float mask, keyword arguments)
SDPA = [
    ("plain", [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)], {}),
    ("causal", [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)], {"is_causal": True}),
    ("bool_mask", [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)], {"attn_mask": KEEP}),
    ("float_mask", [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), (4, 6)], {}),
    ("scale", [(3, 4, 5), (3, 6, 5), (3, 6, 2)], {"scale": 0.3}),
    ("unbatched", [(4, 5), (6, 5), (6, 3)], {}),
    ("broadcast_batch", [(2, 3, 4, 5), (3, 6, 5), (3, 6, 2)], {}),
    ("gqa", [(2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 3)], {"enable_gqa": True}),
]


def _call(lib, tensors, options, device="cpu"):
    options = dict(options)
    if "attn_mask" in options:
        mask = options["attn_mask"]
        options["attn_mask"] = tg.tensor(mask, device=device) if lib is tg else lib.tensor(mask)
    if len(tensors) == 4:  # the fourth input is a float mask, with its own gradient
        options["attn_mask"] = tensors[3]
    sdpa = scaled_dot_product_attention if lib is tg else lib.nn.functional.scaled_dot_product_attention
    return sdpa(*tensors[:3], **options)


def _same_input_gradients(torch, out, expected, seed, ours, theirs):
    """Both outputs backward with one random gradient (from `seed`); then each input's gradient."""
    g = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(tg.tensor(g, device=out.device))
    expected.backward(torch.tensor(g))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-11,
                                   err_msg=f"input {i}")


@pytest.mark.parametrize(("name", "shapes", "options"), SDPA, ids=[row[0] for row in SDPA])
def test_sdpa_matches_torch(name, shapes, options, device):
    torch = pytest.importorskip("torch")
    arrays = [np.random.default_rng(1).standard_normal(shape) for shape in shapes]
    ours = [tg.tensor(a, requires_grad=True, device=device) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = _call(tg, ours, options, device), _call(torch, theirs, options)
    assert out.device == placed_on(device)
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    _same_input_gradients(torch, out, expected, 2, ours, theirs)


@pytest.mark.parametrize(("name", "shapes", "options"), SDPA, ids=[row[0] for row in SDPA])
def test_sdpa_gradient_matches_finite_differences(name, shapes, options):
    rng = np.random.default_rng(3)
    inputs = [tg.tensor(rng.standard_normal(shape), requires_grad=True) for shape in shapes]
    assert tg.gradcheck(lambda *t: _call(tg, t, options), inputs)


def test_sdpa_dropout_zeroes_weights_and_scales_the_rest():
    q, k = tg.randn(2, 5, 4, dtype=tg.float64), tg.randn(2, 6, 4, dtype=tg.float64)
    identity = tg.eye(6, dtype=tg.float64)  # value = I: the output rows are the attention weights
    plain = scaled_dot_product_attention(q, k, identity).data
    tg.manual_seed(7)
    dropped = scaled_dot_product_attention(q, k, identity, dropout_p=0.4).data
    kept = dropped != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(dropped[kept], plain[kept] / 0.6)
    tg.manual_seed(7)  # the same seed drops the same weights
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k, identity, dropout_p=0.4).data, dropped)


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda q: scaled_dot_product_attention(q, q, q, attn_mask=tg.ones(3, 3, dtype=tg.bool_), is_causal=True),
     RuntimeError, "is_causal"),
    (lambda q: scaled_dot_product_attention(q, q[:, :2], q), RuntimeError, r"\(3, 4\).*\(3, 2\)"),
    (lambda q: scaled_dot_product_attention(q, q, q[:2]), RuntimeError, "same number of positions"),
    (lambda q: scaled_dot_product_attention(q[0], q, q), RuntimeError, "at least 2-dimensional"),
    (lambda q: scaled_dot_product_attention(q, q, q, attn_mask=tg.zeros(3, 3, dtype=tg.int64)), RuntimeError,
     "bool or float"),
    (lambda q: scaled_dot_product_attention(q, q, q, dropout_p=1.5), ValueError, "dropout_p"),
], ids=["causal with mask", "feature sizes", "positions", "1-D", "int mask", "dropout_p"])
def test_sdpa_bad_arguments_raise_pytorchs_error(call, error, words):
    with pytest.raises(error, match=words):
        call(tg.randn(3, 4))


# --- MultiheadAttention ---------------------------------------------------------------------------

E, H = 8, 2
MASKS = {
    "none": {},
    "padding": {"key_padding_mask": RNG.random((2, 5)) < 0.3},
    "attn_bool": {"attn_mask": RNG.random((4, 5)) < 0.3},
    "both": {"key_padding_mask": RNG.random((2, 5)) < 0.3, "attn_mask": RNG.random((4, 5)) < 0.2},
    "float_3d": {"attn_mask": RNG.standard_normal((2 * H, 4, 5))},
    "float_padding": {"key_padding_mask": RNG.standard_normal((2, 5))},
    "causal": {"attn_mask": np.triu(np.ones((4, 5), dtype=bool), 1), "is_causal": True},
}

# (id, constructor options, forward options, mask set)
MHA = [
    ("default", {}, {}, "none"),
    ("padding", {}, {}, "padding"),
    ("bool_attn_mask", {}, {}, "attn_bool"),
    ("both_masks", {"batch_first": True}, {}, "both"),
    ("float_3d_mask_per_head_weights", {}, {"average_attn_weights": False}, "float_3d"),
    ("float_padding", {}, {}, "float_padding"),
    ("causal_no_weights", {}, {"need_weights": False}, "causal"),
    ("kdim_vdim", {"kdim": 3, "vdim": 6}, {}, "padding"),
    ("bias_kv_zero_attn", {"add_bias_kv": True, "add_zero_attn": True}, {}, "both"),
    ("no_bias", {"bias": False}, {}, "attn_bool"),
    ("eval_ignores_dropout", {"dropout": 0.5}, {}, "padding"),
]


def _inputs(options, batched=True):
    rng = np.random.default_rng(4)
    dims = [E, options.get("kdim", E), options.get("vdim", E)]
    lengths = [4, 5, 5]
    if not batched:
        return [rng.standard_normal((n, d)) for n, d in zip(lengths, dims)]
    if options.get("batch_first"):
        return [rng.standard_normal((2, n, d)) for n, d in zip(lengths, dims)]
    return [rng.standard_normal((n, 2, d)) for n, d in zip(lengths, dims)]


def _pair(torch, options, device="cpu"):
    """PyTorch's layer, and ours on `device` holding its weights (copied across by loading)."""
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, H, dtype=torch.float64, **options)
    ours = MultiheadAttention(E, H, dtype=tg.float64, device=device, **options)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _compare(torch, ours, theirs, arrays, masks, forward, device="cpu"):
    a = [tg.tensor(x, requires_grad=True, device=device) for x in arrays]
    b = [torch.tensor(x, requires_grad=True) for x in arrays]
    mine = {k: (v if isinstance(v, bool) else tg.tensor(v, device=device)) for k, v in masks.items()}
    reference = {k: (v if isinstance(v, bool) else torch.tensor(v)) for k, v in masks.items()}
    out, weights = ours(*a, **mine, **forward)
    expected, expected_weights = theirs(*b, **reference, **forward)
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    if expected_weights is None:
        assert weights is None
    else:
        np.testing.assert_allclose(to_numpy(weights.data), expected_weights.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    _same_input_gradients(torch, out, expected, 5, a, b)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), q.grad.numpy(), rtol=1e-9, atol=1e-11, err_msg=name)


@pytest.mark.parametrize(("name", "options", "forward", "masks"), MHA, ids=[row[0] for row in MHA])
def test_multihead_attention_matches_torch(name, options, forward, masks, device):
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(torch, options, device)
    if options.get("dropout"):
        ours.eval(), theirs.eval()
    _compare(torch, ours, theirs, _inputs(options), MASKS[masks], forward, device)


def test_multihead_attention_takes_one_unbatched_sequence():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(torch, {})
    masks = {"key_padding_mask": np.array([False, True, False, False, True])}
    _compare(torch, ours, theirs, _inputs({}, batched=False), masks, {"average_attn_weights": False})


def test_multihead_attention_state_dict_loads_into_torch():
    torch = pytest.importorskip("torch")
    ours = MultiheadAttention(E, H, kdim=3, vdim=5, add_bias_kv=True)
    theirs = torch.nn.MultiheadAttention(E, H, kdim=3, vdim=5, add_bias_kv=True)
    theirs.load_state_dict({k: torch.from_numpy(v.data.copy()) for k, v in ours.state_dict().items()})
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), ours.state_dict()[key].data)
    assert repr(ours) == repr(theirs)


def test_multihead_attention_initialisation_is_pytorchs():
    tg.manual_seed(0)
    layer = MultiheadAttention(64, 4)
    bound = np.sqrt(6 / (64 + 3 * 64))  # Glorot uniform over the packed (3E, E) weight
    w = layer.in_proj_weight.data
    assert w.shape == (192, 64) and w.dtype == np.float32
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    np.testing.assert_array_equal(layer.in_proj_bias.data, 0)
    np.testing.assert_array_equal(layer.out_proj.bias.data, 0)
    assert np.abs(layer.out_proj.weight.data).max() <= 1 / 8  # Linear's default, 1 / sqrt(in_features)


def test_multihead_attention_dropout_applies_in_training_only():
    layer = MultiheadAttention(E, H, dropout=0.5, dtype=tg.float64)
    x = tg.randn(4, 2, E, dtype=tg.float64)
    layer.eval()
    _, calm = layer(x, x, x)
    np.testing.assert_allclose(calm.data.sum(-1), 1)
    layer.train()
    _, dropped = layer(x, x, x, average_attn_weights=False)
    assert (dropped.data == 0).any() and not np.allclose(dropped.data.sum(-1), 1)


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: MultiheadAttention(6, 4), AssertionError, "divisible"),
    (lambda: MultiheadAttention(0, 1), ValueError, "greater than 0"),
    (lambda: MultiheadAttention(E, H)(*[tg.randn(4, 2, E)] * 3, is_causal=True), RuntimeError, "attn_mask"),
    (lambda: MultiheadAttention(E, H)(*[tg.randn(4, 2, E)] * 3, attn_mask=tg.zeros(4, 3)), RuntimeError,
     r"2D attn_mask.*\(4, 4\)"),
    (lambda: MultiheadAttention(E, H)(tg.randn(4, 2, 6), tg.randn(4, 2, E), tg.randn(4, 2, E)),
     AssertionError, "embedding dimension of 8"),
    (lambda: MultiheadAttention(E, H)(tg.randn(4, 2, E), tg.randn(4, E), tg.randn(4, E)), AssertionError,
     "3-D"),
], ids=["heads", "sizes", "causal without mask", "mask shape", "embed_dim", "mixed batching"])
def test_multihead_attention_bad_arguments_raise_pytorchs_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_float32_stays_float32():
    q = tg.randn(2, 4, 8, requires_grad=True)
    out = scaled_dot_product_attention(q, q, q, attn_mask=tg.ones(4, 4, dtype=tg.bool_), is_causal=False)
    layer = MultiheadAttention(8, 2)
    mha, weights = layer(q, q, q, key_padding_mask=tg.tensor([[False, True]] * 4))  # (L, N, E) = (2, 4, 8)
    assert out.dtype == mha.dtype == weights.dtype == tg.float32
    (out.sum() + mha.sum()).backward()
    assert q.grad.dtype == np.float32 and layer.in_proj_weight.grad.dtype == np.float32


def test_multihead_attention_gradient_matches_finite_differences():
    tg.manual_seed(1)
    layer = MultiheadAttention(E, H, kdim=3, add_bias_kv=True, dtype=tg.float64)
    query, key, value = (tg.randn(*shape, dtype=tg.float64, requires_grad=True)
                         for shape in [(4, 2, E), (5, 2, 3), (5, 2, E)])
    params = list(layer.parameters())
    padding = tg.tensor([[False, False, True, False, False], [True, False, False, False, False]])

    def output(*tensors):
        return layer(*tensors[:3], key_padding_mask=padding)[0]

    assert tg.gradcheck(output, [query, key, value, *params])
