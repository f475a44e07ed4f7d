"""Alpha dropout, RReLU, `view(dtype)`, NumPy's `axis=`/`keepdims=` and the in-place shape ops,
against PyTorch.

Random ops draw from tensorgrad's generator, so their streams differ from PyTorch's by design:
eval mode must equal PyTorch exactly, and training mode must have PyTorch's structure (the value
a dropped unit takes, the affine map of a kept one, the range of RReLU's slopes, whole channels
for feature dropout), statistics (the fraction dropped, zero mean and unit variance kept) and
gradient. `view(dtype)` must give PyTorch's shapes, strides, bytes and errors; the in-place shape
ops PyTorch's shapes, strides, gradients and rules about leaves and saved tensors.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad import nn
from tensorgrad.autograd import InplaceModifiedError

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# --- alpha dropout ----------------------------------------------------------------------------------

SELU_ALPHA_PRIME = 1.7580993408473766


def _alpha_constants(p: float) -> tuple[float, float, float]:
    """(a, the kept shift, the dropped value) of PyTorch's alpha dropout at p."""
    a = 1 / np.sqrt((SELU_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    return a, SELU_ALPHA_PRIME * a * p, SELU_ALPHA_PRIME * a * (p - 1)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_alpha_dropout_training_has_pytorchs_values_and_statistics(p):
    tg.manual_seed(0)
    torch.manual_seed(0)
    x_np = np.random.default_rng(1).standard_normal((400, 250))
    x = tg.tensor(x_np, dtype=tg.float64, requires_grad=True)
    out = F.alpha_dropout(x, p, training=True)
    theirs = TF.alpha_dropout(torch.tensor(x_np), p, training=True).numpy()
    a, shift, dropped_value = _alpha_constants(p)
    for values in (out.data, theirs):
        kept_value = a * x_np + shift
        dropped = np.isclose(values, dropped_value, rtol=0, atol=1e-12)
        dropped &= ~np.isclose(kept_value, dropped_value)  # (a kept element can't pass for a dropped one)
        np.testing.assert_allclose(values[~dropped], a * x_np[~dropped] + shift, rtol=1e-12)
        assert abs(dropped.mean() - p) < 4 * np.sqrt(p * (1 - p) / x_np.size)
        assert abs(values.mean()) < 0.02 and abs(values.std() - 1) < 0.02  # self-normalizing: kept
    out.backward(tg.ones_like(out))
    kept = ~np.isclose(out.data, dropped_value, rtol=0, atol=1e-12)
    np.testing.assert_allclose(x.grad, np.where(kept, a, 0.0), rtol=1e-12)


def test_alpha_dropout_eval_zero_one_and_reproducibility():
    x = tg.randn(5, 6)
    xt = torch.tensor(x.data)
    assert F.alpha_dropout(x) is x and F.alpha_dropout(x, 0.5, False) is x  # training=False by default
    assert F.alpha_dropout(x, 0.0, True) is x and F.feature_alpha_dropout(x, 0.3) is x
    assert TF.alpha_dropout(xt, 0.0, True) is xt
    np.testing.assert_array_equal(F.alpha_dropout(x, 1.0, True).data, TF.alpha_dropout(xt, 1.0, True).numpy())
    assert not F.alpha_dropout(x, 1.0, True).data.any()
    tg.manual_seed(3)
    first = F.alpha_dropout(x, 0.4, True).data
    tg.manual_seed(3)
    np.testing.assert_array_equal(F.alpha_dropout(x, 0.4, True).data, first)
    assert F.alpha_dropout(tg.zeros(0, 3), 0.5, True).shape == (0, 3)


def test_feature_alpha_dropout_drops_whole_channels():
    tg.manual_seed(0)
    x_np = np.random.default_rng(2).standard_normal((50, 40, 3, 4))
    p = 0.3
    a, shift, dropped_value = _alpha_constants(p)
    for out in (F.feature_alpha_dropout(tg.tensor(x_np), p, True).data,
                TF.feature_alpha_dropout(torch.tensor(x_np), p, True).numpy()):
        kept = np.isclose(out, a * x_np + shift, rtol=1e-12)
        dropped = np.isclose(out, dropped_value, rtol=1e-12)
        assert (kept | dropped).all()
        per_channel = kept.reshape(50, 40, -1)
        assert (per_channel.all(-1) | ~per_channel.any(-1)).all()  # all or nothing per (N, C)
        assert abs((~per_channel[..., 0]).mean() - p) < 0.06


def test_alpha_dropout_in_place_and_in_the_graph():
    tg.manual_seed(0)
    leaf = tg.randn(30, 20, dtype=tg.float64, requires_grad=True)
    y = leaf * 1.0
    assert F.alpha_dropout(y, 0.5, True, inplace=True) is y
    y.sum().backward()
    a, _, dropped_value = _alpha_constants(0.5)
    kept = ~np.isclose(y.data, dropped_value, rtol=0, atol=1e-12)
    np.testing.assert_allclose(leaf.grad, np.where(kept, a, 0.0))
    with pytest.raises(RuntimeError, match="leaf"):
        F.alpha_dropout(leaf, 0.5, True, inplace=True)
    z = tg.randn(4, 5, 6)
    before = z.data.copy()
    F.feature_alpha_dropout(z, 0.5, True, inplace=True)
    assert not np.array_equal(z.data, before)


def test_alpha_dropout_errors_as_pytorch():
    x = tg.randn(3, 4)
    for name in ("alpha_dropout", "feature_alpha_dropout"):
        fn, torch_fn = getattr(F, name), getattr(TF, name)
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            fn(x, 1.5, True)
        with pytest.raises(ValueError):
            torch_fn(torch.randn(3, 4), 1.5, True)
        with pytest.raises(RuntimeError):
            fn(tg.arange(6).reshape(2, 3), 0.5, True)
        with pytest.raises(RuntimeError):
            torch_fn(torch.arange(6).reshape(2, 3), 0.5, True)
    with pytest.raises(RuntimeError, match=r"Feature dropout requires at least 2 dimensions.*\(3,\)"):
        F.feature_alpha_dropout(tg.randn(3), 0.5, True)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        TF.feature_alpha_dropout(torch.randn(3), 0.5, True)


def test_alpha_dropout_modules_as_pytorch():
    for ours, theirs in ((nn.AlphaDropout(0.2), torch.nn.AlphaDropout(0.2)),
                         (nn.FeatureAlphaDropout(0.3, True), torch.nn.FeatureAlphaDropout(0.3, True))):
        assert repr(ours) == repr(theirs)
        x = tg.randn(6, 5, 4)
        ours.eval()
        assert ours(x) is x
        ours.train()
        before = x.data.copy()
        out = ours(x)
        assert out.shape == x.shape and not np.array_equal(out.data, before)
        assert (out is x) == theirs.inplace  # inplace=True writes into the input, as PyTorch's
        assert not ours.state_dict() and not list(ours.parameters())
    with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"):
        nn.AlphaDropout(-0.1)
    with pytest.raises(ValueError):
        torch.nn.AlphaDropout(-0.1)


# --- RReLU ------------------------------------------------------------------------------------------


def test_rrelu_eval_is_leaky_relu_with_the_mean_slope_as_pytorch():
    values = [-3.0, -0.5, 0.0, 0.7, 2.0]
    x = tg.tensor(values, dtype=tg.float64, requires_grad=True)
    xt = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    out, expected = F.rrelu(x, 0.1, 0.3), TF.rrelu(xt, 0.1, 0.3)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-15)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad, xt.grad.numpy(), rtol=1e-15)
    np.testing.assert_allclose(x.grad, [0.2, 0.2, 0.2, 1.0, 1.0])
    layer, torch_layer = nn.RReLU(0.1, 0.3).eval(), torch.nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(layer(x).data, torch_layer(xt).detach().numpy(), rtol=1e-15)


def test_rrelu_training_draws_a_slope_per_negative_element():
    tg.manual_seed(0)
    x_np = np.random.default_rng(3).standard_normal(20000)
    x_np[:10] = 0.0
    lower, upper = 0.1, 0.4
    x = tg.tensor(x_np, dtype=tg.float64, requires_grad=True)
    out = F.rrelu(x, lower, upper, training=True)
    out.backward(tg.ones_like(out))
    theirs_x = torch.tensor(x_np, dtype=torch.float64, requires_grad=True)
    theirs = TF.rrelu(theirs_x, lower, upper, training=True)
    theirs.backward(torch.ones_like(theirs))
    for values, grad in ((out.data, x.grad), (theirs.detach().numpy(), theirs_x.grad.numpy())):
        positive, negative = x_np > 0, x_np < 0
        np.testing.assert_array_equal(values[positive], x_np[positive])
        np.testing.assert_array_equal(grad[positive], 1.0)
        slopes = values[negative] / x_np[negative]
        assert slopes.min() >= lower and slopes.max() <= upper
        assert abs(slopes.mean() - (lower + upper) / 2) < 0.01 and slopes.std() > 0.08  # uniform: 0.087
        np.testing.assert_allclose(grad[negative], slopes, rtol=1e-12)
        assert ((grad[:10] >= lower) & (grad[:10] <= upper)).all()  # at 0: a drawn slope too
    layer = nn.RReLU(lower, upper)
    assert layer.training and not np.array_equal(layer(x).data, layer(x).data)


def test_rrelu_in_place_repr_and_errors_as_pytorch():
    assert repr(nn.RReLU()) == repr(torch.nn.RReLU())
    assert repr(nn.RReLU(0.1, 0.2, True)) == repr(torch.nn.RReLU(0.1, 0.2, True))
    y = tg.tensor([-1.0, 2.0])
    assert F.rrelu(y, inplace=True) is y
    np.testing.assert_allclose(y.data, [-(1 / 8 + 1 / 3) / 2, 2.0])
    z = tg.tensor([-1.0, 2.0, -3.0])
    F.rrelu(z, 0.2, 0.3, training=True, inplace=True)
    assert -0.3 * 1.0 <= z.data[0] <= -0.2 and z.data[1] == 2.0
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(y, 0.5, 0.1)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        TF.rrelu(torch.ones(2), 0.5, 0.1)
    with pytest.raises(RuntimeError, match="rrelu"):
        F.rrelu(tg.arange(3), training=True)
    with pytest.raises(RuntimeError):
        TF.rrelu(torch.arange(3), training=True)


# --- view(dtype) --------------------------------------------------------------------------------------

VIEW_CASES = [
    ("float32 as int32", lambda m: m.arange(12.0).reshape(3, 4), "int32"),
    ("float32 as float64", lambda m: m.arange(12.0).reshape(3, 4), "float64"),
    ("float32 as int16", lambda m: m.arange(12.0).reshape(3, 4), "int16"),
    ("float32 as uint8", lambda m: m.arange(12.0).reshape(3, 4), "uint8"),
    ("strided rows as float64", lambda m: m.arange(12.0).reshape(3, 4)[::2], "float64"),
    ("one column as int16", lambda m: m.zeros(4, 2)[:, :1], "int16"),
    ("0-d same size", lambda m: m.tensor(1.5), "int32"),
    ("bool as int8", lambda m: m.tensor([[True, False, True], [False, True, True]]), "int8"),
    ("int8 as float32", lambda m: m.arange(8, dtype=m.int8).reshape(2, 4), "float32"),
    ("int64 as float64", lambda m: m.arange(6).reshape(2, 3), "float64"),
    ("transposed same size", lambda m: m.arange(6.0).reshape(2, 3).T, "int32"),
]


@pytest.mark.parametrize(("name", "make", "dtype"), VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_dtype_as_pytorch(name, make, dtype):
    x, xt = make(tg), make(torch)
    out, expected = x.view(getattr(tg, dtype)), xt.view(getattr(torch, dtype))
    assert out.shape == tuple(expected.shape) and out.stride() == expected.stride()
    assert str(out.dtype) == dtype
    np.testing.assert_array_equal(out.data, expected.numpy())
    assert np.shares_memory(out.data, x.data)
    assert x.view(dtype=getattr(tg, dtype)).shape == out.shape


def test_view_dtype_shares_storage_and_version_but_no_gradient():
    x = tg.zeros(2, 4)
    bits = x.view(tg.int32)
    x.add_(1.0)
    assert bits.data[0, 0] == 1065353216 and bits._version == x._version == 1
    bits[0, 0] = 0
    assert x.data[0, 0] == 0.0
    leaf = tg.ones(3, requires_grad=True)
    assert not leaf.view(tg.float32).requires_grad and not leaf.view(tg.int32).requires_grad
    assert not (leaf * 2).view(tg.float32).requires_grad  # as PyTorch: not differentiable
    y = leaf * 2
    z = y * y
    y.view(tg.int32).add_(1)  # a change through the int view bumps y's version
    with pytest.raises(InplaceModifiedError):
        z.sum().backward()
    assert x.view(np.int32).dtype == tg.int32  # a numpy scalar type names a dtype too
    with pytest.raises(TypeError, match="shape or a dtype"):
        x.view(8, dtype=tg.int32)
    with pytest.raises(TypeError):
        torch.zeros(2, 4).view(8, dtype=torch.int32)


def test_view_dtype_errors_as_pytorch():
    cases = [
        (lambda m: m.arange(12.0).reshape(3, 4).T, "int16", r"self.stride\(-1\) must be 1 .* but got 4"),
        (lambda m: m.arange(12.0).reshape(3, 4).T, "float64", r"size\(-1\) must be divisible by 2 .* got 3"),
        (lambda m: m.tensor(1.0), "int16", r"self.dim\(\) cannot be 0"),
        (lambda m: m.zeros(4, 2).T[:1], "float64", r"self.stride\(-1\) must be 1 .* but got 2"),
        (lambda m: m.zeros(2, 6, dtype=m.int8)[:, 1:5], "float32", r"storage_offset\(\) must be divisible"),
        (lambda m: m.zeros(3, 8, dtype=m.int8)[:, :4], "float64", r"self.size\(-1\) must be divisible by 8"),
        (lambda m: m.zeros(3, 12, dtype=m.int8)[:, :8], "float64", r"stride\(0\) must be divisible by 8"),
    ]
    for make, dtype, message in cases:
        with pytest.raises(RuntimeError, match=message):
            make(tg).view(getattr(tg, dtype))
        with pytest.raises(RuntimeError, match=message):
            make(torch).view(getattr(torch, dtype))


# --- NumPy's axis= and keepdims= --------------------------------------------------------------------

AXIS_CASES = [
    ("sum", {"axis": 0}), ("sum", {"axis": (0, 1), "keepdims": True}),
    ("mean", {"axis": 1, "keepdims": True}),
    ("prod", {"axis": 1}), ("std", {"axis": 0}), ("var", {"axis": 1, "keepdims": True}),
    ("max", {"axis": 1}), ("min", {"axis": 0, "keepdims": True}), ("amax", {"axis": 1}),
    ("amin", {"axis": (0, 1)}),
    ("argmax", {"axis": 1}), ("argmin", {"axis": 0, "keepdims": True}), ("logsumexp", {"axis": 1}),
    ("softmax", {"axis": 0}), ("log_softmax", {"axis": 1}), ("cumsum", {"axis": 1}), ("cumprod", {"axis": 0}),
    ("cummax", {"axis": 1}), ("cummin", {"axis": 0}), ("logcumsumexp", {"axis": 1}), ("median", {"axis": 1}),
    ("nanmean", {"axis": 0}), ("nansum", {"axis": 1, "keepdims": True}), ("count_nonzero", {"axis": 0}),
    ("sort", {"axis": 0}), ("argsort", {"axis": 1}), ("kthvalue", {"k": 2, "axis": 1}), ("mode", {"axis": 0}),
    ("quantile", {"q": 0.3, "axis": 1}), ("nanquantile", {"q": 0.3, "axis": 0, "keepdims": True}),
    ("aminmax", {"axis": 1}), ("nanmedian", {"axis": 0}), ("topk", {"k": 2, "axis": 0}),
    ("all", {"axis": 1}), ("any", {"axis": 0, "keepdims": True}),
]


@pytest.mark.parametrize(("op", "kwargs"), AXIS_CASES, ids=[f"{op}-{'-'.join(kw)}" for op, kw in AXIS_CASES])
def test_reductions_take_numpys_axis_and_keepdims_as_pytorch(op, kwargs):
    values = np.array([[0.5, 2.0, -1.0], [3.0, 0.25, 4.0], [1.5, -2.0, 0.75]])
    if op in ("all", "any"):
        values = values > 0
    x, xt = tg.tensor(values), torch.tensor(values)
    for ours, theirs in ((getattr(x, op)(**kwargs), getattr(xt, op)(**kwargs)),
                         (getattr(tg, op)(x, **kwargs), getattr(torch, op)(xt, **kwargs))):
        ours = ours if isinstance(ours, tuple) else (ours,)
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a.data, b.numpy(), rtol=1e-6)


def test_axis_keeps_the_gradient_and_clashes_with_dim():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x.sum(axis=1, keepdims=True).mean(axis=0).sum().backward()
    np.testing.assert_allclose(x.grad, np.full((2, 2), 0.5))
    with pytest.raises(TypeError, match="sum\\(\\) got multiple values for argument 'dim'"):
        x.sum(dim=0, axis=0)
    with pytest.raises(TypeError, match="'keepdim'"):
        tg.mean(x, 0, keepdim=True, keepdims=True)
    with pytest.raises(TypeError):
        torch.ones(2).sum(dim=0, axis=0)
    assert tg.sum.__name__ == "sum" and tg.Tensor.sum.__doc__


# --- in-place shape ops ---------------------------------------------------------------------------------

SHAPE_CASES = [
    ("squeeze_", lambda t: t.squeeze_(), (1, 3, 1, 2)),
    ("squeeze_(dim)", lambda t: t.squeeze_(2), (1, 3, 1, 2)),
    ("squeeze_(dims)", lambda t: t.squeeze_((0, 3)), (1, 3, 2, 1)),
    ("squeeze_(non-1 dim)", lambda t: t.squeeze_(1), (1, 3, 1, 2)),
    ("unsqueeze_", lambda t: t.unsqueeze_(1), (3, 2)),
    ("unsqueeze_(-1)", lambda t: t.unsqueeze_(-1), (3, 2)),
    ("t_", lambda t: t.t_(), (3, 2)),
    ("t_ 1-D", lambda t: t.t_(), (3,)),
    ("transpose_", lambda t: t.transpose_(0, 2), (2, 3, 4)),
    ("swapdims_", lambda t: t.swapdims_(-1, 0), (2, 3, 4)),
    ("swapaxes_", lambda t: t.swapaxes_(1, 2), (2, 3, 4)),
]


@pytest.mark.parametrize(("name", "change", "shape"), SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_in_place_shape_ops_as_pytorch(name, change, shape):
    values = np.random.default_rng(4).standard_normal(shape)
    leaf = tg.tensor(values, dtype=tg.float64, requires_grad=True)
    leaf_t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y, yt = leaf * 2.0, leaf_t * 2.0
    data_before = y.data
    assert change(y) is y and change(yt) is yt
    assert y.shape == tuple(yt.shape) and y.stride() == yt.stride() and y._version == yt._version == 1
    assert np.shares_memory(y.data, data_before)
    np.testing.assert_array_equal(y.data, yt.detach().numpy())
    weights = np.random.default_rng(5).standard_normal(y.shape)
    (y * tg.tensor(weights)).sum().backward()
    (yt * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(leaf.grad, leaf_t.grad.numpy())
    plain = tg.tensor(values)
    change(plain)
    assert plain.shape == y.shape and plain.is_leaf and not plain.requires_grad


def test_in_place_shape_ops_chain_and_views():
    """A chain records each view op on top of the last; a view changed in shape stays a view, and a
    later in-place change through it reaches its base, as in PyTorch."""
    results = []
    for m in (tg, torch):
        leaf = m.tensor(np.arange(6.0).reshape(1, 6), dtype=m.float64, requires_grad=True)
        base = leaf * 1.0
        view = base.view(2, 3)
        view.unsqueeze_(0).squeeze_(0).t_()
        view.mul_(m.tensor(np.arange(1.0, 3.0), dtype=m.float64))
        out = (base * m.tensor(np.arange(6.0), dtype=m.float64)).sum() + view.sum()
        out.backward()
        if m is torch:
            base, grad = base.detach().numpy(), leaf.grad.numpy()
        else:
            base, grad = base.data, leaf.grad
        results.append((base, grad, tuple(view.shape)))
    (base, grad, shape), (base_t, grad_t, shape_t) = results
    np.testing.assert_array_equal(base, base_t)
    np.testing.assert_array_equal(grad, grad_t)
    assert shape == shape_t


def test_in_place_shape_ops_leaf_rules_as_pytorch():
    for m in (tg, torch):
        leaf = m.ones(1, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            leaf.squeeze_()
        with pytest.raises(RuntimeError, match="leaf"):
            leaf[0].unsqueeze_(0)
        with m.no_grad():
            leaf.squeeze_()
        assert tuple(leaf.shape) == (3,) and leaf.is_leaf and leaf.requires_grad and leaf._version == 1


def test_in_place_shape_op_invalidates_saved_tensors_as_pytorch():
    for m, error in ((tg, InplaceModifiedError), (torch, RuntimeError)):
        c = m.ones(1, 3, requires_grad=True) * 2
        y = c * c
        c.squeeze_(0)
        with pytest.raises(error):
            y.sum().backward()
        d = m.ones(1, 3, requires_grad=True) * 2
        z = d + 1  # saves nothing: still fine
        d.t_()
        z.sum().backward()


def test_in_place_shape_op_errors_as_pytorch():
    for m in (tg, torch):
        x = m.zeros(2, 3, 4)
        with pytest.raises(RuntimeError, match="expects a tensor with <= 2 dimensions"):
            x.t_()
        with pytest.raises(IndexError):
            x.squeeze_(5)
        with pytest.raises(IndexError):
            x.transpose_(0, 3)
        with pytest.raises(IndexError):
            x.unsqueeze_(4)
        assert tuple(x.shape) == (2, 3, 4) and x._version == 0  # nothing changed
