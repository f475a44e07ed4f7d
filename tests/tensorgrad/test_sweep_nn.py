"""PyTorch answers found by running PyTorch's own op samples through tensorgrad, for the nn
functions: complex activations, softmin's dtype=, float16 rms_norm, interpolate and attention
computed in float32, complex rms_norm, normalize and l1_loss, the norms' statistics and empty
batches, adaptive pools' error classes, integer average pools with a negative divisor, integer
inputs to the distance losses and local_response_norm, and linear_cross_entropy's K-dimensional
weights, and complex convolutions."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _tg(t: torch.Tensor, requires_grad: bool = False) -> tg.Tensor:
    return tg.tensor(t.detach().numpy().copy(), requires_grad=requires_grad)


def _same(ours: tg.Tensor, theirs: torch.Tensor, **tolerance: float) -> None:
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), equal_nan=True, **tolerance)


def _complex(*shape: int, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(shape, dtype=torch.complex128, generator=gen)


# --- activations on complex input; softmin's dtype= ----------------------------------------------


@pytest.mark.parametrize("name", ["softsign", "silu", "tanhshrink"])
@pytest.mark.parametrize("shape", [(20,), (1, 0, 3), ()])
def test_complex_activations_match_pytorch(name, shape):
    x = _complex(*shape)
    _same(getattr(F, name)(_tg(x)), getattr(TF, name)(x), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["softsign", "tanhshrink"])
def test_complex_activation_gradients_match_pytorch(name):
    x = _complex(6).requires_grad_()
    getattr(TF, name)(x).abs().sum().backward()
    ours = _tg(x, True)
    getattr(F, name)(ours).abs().sum().backward()
    np.testing.assert_allclose(np.asarray(ours.grad), x.grad.numpy(), rtol=1e-10)


def test_complex_silu_gradient_is_the_holomorphic_derivative():
    # PyTorch refuses to differentiate complex silu; ours follows the composition x * sigmoid(x).
    x = _complex(5).requires_grad_()
    (x * torch.sigmoid(x)).abs().sum().backward()
    ours = _tg(x, True)
    F.silu(ours).abs().sum().backward()
    np.testing.assert_allclose(np.asarray(ours.grad), x.grad.numpy(), rtol=1e-10)


def test_real_activations_keep_their_dtypes():
    x = torch.tensor([-2, 0, 3])
    _same(F.softsign(_tg(x)), TF.softsign(x), rtol=1e-6)
    _same(F.tanhshrink(_tg(x)), TF.tanhshrink(x), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        F.silu(_tg(x))


@pytest.mark.filterwarnings("ignore:Casting complex values")
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.complex128, torch.float32])
@pytest.mark.parametrize("name", ["softmin", "softmax", "log_softmax"])
def test_softmax_family_with_dtype_casts_first(name, dtype):
    x = (torch.arange(10).reshape(2, 5) * 3 % 7).to(dtype)
    _same(getattr(F, name)(_tg(x), 1, dtype=tg.float64), getattr(TF, name)(x, 1, dtype=torch.float64),
          rtol=1e-12)


def test_softmin_without_dtype_refuses_integers():
    with pytest.raises(NotImplementedError):
        F.softmin(tg.tensor([1, 2, 3]), 0)


def test_prelu_refuses_a_two_dimensional_weight():
    with pytest.raises(RuntimeError, match="1D"):
        F.prelu(tg.ones(2, 3), tg.ones(1, 1))
    _same(F.prelu(tg.ones(2, 3), tg.ones(3) * 0.5), TF.prelu(torch.ones(2, 3), torch.ones(3) * 0.5))


# --- rms_norm, normalize, l1_loss -----------------------------------------------------------------


@pytest.mark.parametrize("eps", [None, 0.5, 1e-6])
def test_float16_rms_norm_squares_in_float32(eps):
    gen = torch.Generator().manual_seed(1)
    x = (torch.rand(2, 2, 3, generator=gen) * 800).half()  # x**2 overflows float16
    w = (torch.rand(2, 3, generator=gen) * 10).half()
    _same(F.rms_norm(_tg(x), (2, 3), _tg(w), eps=eps), TF.rms_norm(x, (2, 3), w, eps=eps),
          rtol=2e-3, atol=1e-3)


def test_float16_rms_norm_default_eps_is_float32s():
    x = torch.tensor([0.01, 0.02], dtype=torch.float16)
    _same(F.rms_norm(_tg(x), (2,)), TF.rms_norm(x, (2,)), rtol=1e-3)


def test_complex_rms_norm_matches_pytorch_with_gradient():
    x, w = _complex(2, 3, seed=1).requires_grad_(), _complex(3, seed=2).requires_grad_()
    expected = TF.rms_norm(x, (3,), w)
    expected.abs().sum().backward()
    ours_x, ours_w = _tg(x, True), _tg(w, True)
    out = F.rms_norm(ours_x, (3,), ours_w)
    _same(out, expected, rtol=1e-12)
    out.abs().sum().backward()
    np.testing.assert_allclose(np.asarray(ours_x.grad), x.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(ours_w.grad), w.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.5, float("inf")])
def test_complex_normalize_matches_pytorch_with_gradient(p):
    x = _complex(2, 3, 4, seed=3).requires_grad_()
    expected = TF.normalize(x, p=p, dim=1)
    (expected.abs().sum() + expected.real.sum()).backward()
    ours = _tg(x, True)
    out = F.normalize(ours, p=p, dim=1)
    _same(out, expected, rtol=1e-12)
    (out.abs().sum() + out.real.sum()).backward()
    np.testing.assert_allclose(np.asarray(ours.grad), x.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_complex_l1_loss_is_real_with_pytorchs_gradient(reduction):
    x, y = _complex(3, 2, seed=4).requires_grad_(), _complex(3, 2, seed=5)
    expected = TF.l1_loss(x, y, reduction=reduction)
    expected.sum().backward()
    ours = _tg(x, True)
    out = F.l1_loss(ours, _tg(y), reduction=reduction)
    _same(out, expected, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(np.asarray(ours.grad), x.grad.numpy(), rtol=1e-10)


# --- float16 interpolate and attention: float32 inside, one rounding --------------------------------


@pytest.mark.parametrize(("mode", "shape", "size"), [
    ("linear", (2, 3, 5), (7,)), ("bilinear", (2, 3, 4, 5), (5, 6)), ("bicubic", (2, 3, 4, 5), (5, 6)),
    ("bicubic", (2, 3, 4, 4), (3, 3)), ("trilinear", (2, 3, 4, 3, 5), (5, 4, 6))])
@pytest.mark.parametrize("align_corners", [False, True])
def test_float16_interpolate_rounds_once(mode, shape, size, align_corners):
    gen = torch.Generator().manual_seed(6)
    x = (torch.rand(*shape, generator=gen) * 18 - 9).half()
    expected = TF.interpolate(x, size=size, mode=mode, align_corners=align_corners)
    _same(F.interpolate(_tg(x), size=size, mode=mode, align_corners=align_corners), expected,
          rtol=1e-3, atol=8e-3)  # within one float16 ulp of values up to ~9


def test_float16_interpolate_gradient_is_float16():
    x = tg.ones(1, 1, 3, 3, dtype=tg.float16, requires_grad=True)
    F.interpolate(x, scale_factor=1.7, mode="bicubic").sum().backward()
    assert x.grad.dtype == np.float16


@pytest.mark.parametrize("mask", [None, "float", "bool", "causal"])
def test_float16_attention_matches_pytorch(mask):
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(2, 4, n, 8, generator=gen).half() * 3 for n in (3, 6, 6))
    kwargs = {"is_causal": True} if mask == "causal" else {}
    if mask == "float":
        kwargs["attn_mask"] = torch.randn(3, 6, generator=gen).half()
    if mask == "bool":
        kwargs["attn_mask"] = torch.rand(3, 6, generator=gen) > 0.3
    expected = TF.scaled_dot_product_attention(q, k, v, **kwargs)
    ours = F.scaled_dot_product_attention(_tg(q), _tg(k), _tg(v),
                                          **{n: _tg(t) if isinstance(t, torch.Tensor) else t
                                             for n, t in kwargs.items()})
    _same(ours, expected, rtol=2e-3, atol=2e-3)


# --- the norms' statistics and empty batches -----------------------------------------------------


def test_native_norms_statistics_are_not_differentiable():
    x = torch.randn(3, 2, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, dtype=torch.float64, requires_grad=True)
    ours_x, ours_w = _tg(x, True), _tg(w, True)
    cases = [(tg.native_layer_norm(ours_x, (4,), None, None, 1e-5),
              torch.native_layer_norm(x, (4,), None, None, 1e-5)),
             (tg.native_batch_norm(ours_x, ours_w, ours_w, None, None, True, 0.1, 1e-5),
              torch.native_batch_norm(x, w, w, None, None, True, 0.1, 1e-5)),
             (tg.native_group_norm(ours_x, ours_w, ours_w, 3, 2, 4, 1, 1e-5),
              torch.native_group_norm(x, w, w, 3, 2, 4, 1, 1e-5))]
    for ours, theirs in cases:
        assert [o.requires_grad for o in ours] == [t.requires_grad for t in theirs]
        for o, t in zip(ours, theirs, strict=True):
            _same(o, t, rtol=1e-12)


@pytest.mark.parametrize("native", [False, True])
def test_group_norm_of_an_empty_batch(native):
    x, w = torch.zeros(0, 2, dtype=torch.float64, requires_grad=True), torch.ones(2, dtype=torch.float64)
    ours = _tg(x, True)
    if native:
        expected = torch.native_group_norm(x, w, w, 0, 2, 1, 1, 1e-5)
        out = tg.native_group_norm(ours, _tg(w), _tg(w), 0, 2, 1, 1, 1e-5)
        for o, t in zip(out, expected, strict=True):
            _same(o, t)
        out = out[0]
    else:
        _same(out := F.group_norm(ours, 1, _tg(w), _tg(w)), TF.group_norm(x, 1, w, w))
    out.sum().backward()
    assert ours.grad.shape == (0, 2)


@pytest.mark.parametrize("shape", [(0,), (0, 2), (0, 2, 3)])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_of_an_empty_batch_leaves_the_running_statistics(shape, training):
    channels = shape[1] if len(shape) > 1 else 0
    rm, rv = torch.zeros(channels, dtype=torch.float64), torch.ones(channels, dtype=torch.float64)
    ours_rm, ours_rv = _tg(rm), _tg(rv)
    w = torch.ones(channels, dtype=torch.float64, requires_grad=True)
    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    weight = w if channels else None
    expected = TF.batch_norm(x, rm, rv, weight, None, training=training)
    ours_x, ours_w = _tg(x, True), _tg(w, True)
    out = F.batch_norm(ours_x, ours_rm, ours_rv, ours_w if channels else None, None, training=training)
    _same(out, expected)
    _same(ours_rm, rm)
    _same(ours_rv, rv)
    out.sum().backward()
    assert ours_x.grad.shape == shape


def test_batch_norm_training_still_refuses_one_value_per_channel():
    with pytest.raises(ValueError):
        F.batch_norm(tg.ones(1, 3), None, None, training=True)


# --- pools ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "dims"), [("adaptive_avg_pool2d", 2), ("adaptive_max_pool2d", 2),
                                            ("adaptive_avg_pool3d", 3), ("adaptive_max_pool3d", 3)])
@pytest.mark.parametrize("rank_short", [0, 1])
@pytest.mark.parametrize("sequence", [False, True])
def test_adaptive_pool_rank_errors_are_pytorchs(name, dims, rank_short, sequence):
    shape = (2,) * (dims - rank_short)
    size = (2,) * dims if sequence else 2
    with pytest.raises(Exception) as theirs:
        getattr(TF, name)(torch.zeros(shape), size)
    with pytest.raises(theirs.type):
        getattr(F, name)(tg.zeros(shape), size)


@pytest.mark.parametrize("divisor", [-2, 3, -3, None])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_integer_avg_pool_truncates_toward_zero(divisor, dims):
    gen = torch.Generator().manual_seed(dims)
    x = torch.randint(-20, 20, (1, 1) + (5,) * dims, generator=gen)
    name = f"avg_pool{dims}d"
    kwargs = {} if dims == 1 or divisor is None else {"divisor_override": divisor}
    _same(getattr(F, name)(_tg(x), 2, **kwargs), getattr(TF, name)(x, 2, **kwargs))


# --- integer inputs to the distance losses and local_response_norm --------------------------------


INTS = [torch.int64, torch.int32, torch.uint8]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("p", [1.0, 2.0])
def test_pairwise_distance_of_integers_is_float32(dtype, p):
    a, b = torch.tensor([[1, 2, 3], [4, 0, 7]]).to(dtype), torch.tensor([[0, 2, 1], [1, 1, 1]]).to(dtype)
    _same(F.pairwise_distance(_tg(a), _tg(b), p=p), TF.pairwise_distance(a, b, p=p), rtol=1e-6)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_triplet_margin_loss_of_integers_is_float32(dtype, reduction):
    a, b, c = (torch.tensor(v).to(dtype) for v in ([[1, 2, 3], [4, 0, 7]], [[0, 2, 1], [1, 1, 1]],
                                                   [[3, 2, 5], [1, 0, 1]]))
    _same(F.triplet_margin_loss(_tg(a), _tg(b), _tg(c), reduction=reduction),
          TF.triplet_margin_loss(a, b, c, reduction=reduction), rtol=1e-6)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("options", [{}, {"log_input": False}, {"full": True}, {"reduction": "none"}])
def test_poisson_nll_loss_of_integers_is_float32(dtype, options):
    a, b = torch.tensor([1, 2, 3, 4]).to(dtype), torch.tensor([0, 2, 1, 3]).to(dtype)
    _same(F.poisson_nll_loss(_tg(a), _tg(b), **options), TF.poisson_nll_loss(a, b, **options), rtol=1e-6)


@pytest.mark.parametrize("shape", [(1, 6, 3), (2, 4, 2, 3)])
def test_local_response_norm_of_int64_is_float32(shape):
    x = torch.arange(int(np.prod(shape))).reshape(shape) % 7 - 3
    _same(F.local_response_norm(_tg(x), 3, alpha=1.0, k=1.0), TF.local_response_norm(x, 3, alpha=1.0, k=1.0),
          rtol=1e-6)


@pytest.mark.parametrize("dtype", [torch.int32, torch.uint8])
def test_local_response_norm_refuses_other_integers(dtype):
    with pytest.raises(NotImplementedError):
        TF.local_response_norm(torch.ones(1, 3, 2, dtype=dtype), 2)
    with pytest.raises(NotImplementedError):
        F.local_response_norm(_tg(torch.ones(1, 3, 2, dtype=dtype)), 2)


def test_multi_margin_loss_checks_the_weight_rank_first():
    with pytest.raises(ValueError, match="one-dimensional"):
        F.multi_margin_loss(tg.ones(2, 3), tg.ones(2), weight=tg.ones(1, 3))


# --- linear_cross_entropy ------------------------------------------------------------------------


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("probabilities", [False, True])
def test_linear_cross_entropy_with_a_k_dimensional_weight(bias, probabilities):
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(4, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(2, 5, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    b = torch.randn(2, 5, dtype=torch.float64, generator=gen, requires_grad=True) if bias else None
    target = (torch.rand(4, 2, 5, dtype=torch.float64, generator=gen).softmax(1) if probabilities
              else torch.randint(0, 2, (4, 5), generator=gen))
    expected = TF.linear_cross_entropy(x, w, target, linear_bias=b)
    expected.backward()
    ours = [_tg(t, True) for t in (x, w)] + ([_tg(b, True)] if bias else [])
    out = F.linear_cross_entropy(ours[0], ours[1], _tg(target), linear_bias=ours[2] if bias else None)
    _same(out, expected, rtol=1e-12)
    out.backward()
    for o, t in zip(ours, (x, w, b), strict=False):
        np.testing.assert_allclose(np.asarray(o.grad), t.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize(("x_shape", "w_shape", "b_shape"), [((2, 2, 3), (4, 3), None), ((2, 3), (4,), None),
                                                              ((2, 3), (4, 2), None), ((2, 3), (4, 3), (5,)),
                                                              ((3,), (4, 2, 3), None)])
def test_linear_cross_entropy_shape_errors(x_shape, w_shape, b_shape):
    target = torch.zeros(x_shape[:-1], dtype=torch.int64)
    b = None if b_shape is None else torch.zeros(b_shape)
    with pytest.raises(RuntimeError):
        TF.linear_cross_entropy(torch.zeros(x_shape), torch.zeros(w_shape), target, linear_bias=b)
    with pytest.raises(RuntimeError):
        F.linear_cross_entropy(tg.zeros(x_shape), tg.zeros(w_shape), _tg(target),
                               linear_bias=None if b is None else _tg(b))


def test_linear_cross_entropy_k_dimensional_gradient_matches_finite_differences():
    gen = np.random.default_rng(9)
    x = tg.tensor(gen.standard_normal((3, 4)), requires_grad=True)
    w = tg.tensor(gen.standard_normal((2, 3, 4)), requires_grad=True)
    target = tg.tensor(gen.integers(0, 2, (3, 3)))
    assert tg.autograd.gradcheck(lambda a, b: F.linear_cross_entropy(a, b, target), (x, w))


# --- complex convolutions ------------------------------------------------------------------------


CONVOLUTIONS = [("conv1d", (2, 4, 7), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
                ("conv2d", (1, 3, 5, 4), (2, 3, 3, 2), {"dilation": (1, 2), "padding": "same"}),
                ("conv2d", (3, 5, 4), (2, 3, 3, 3), {}),
                ("conv3d", (1, 2, 4, 3, 4), (3, 2, 2, 2, 2), {"stride": (1, 2, 1)}),
                ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"stride": 2, "output_padding": 1}),
                ("conv_transpose2d", (1, 4, 3, 4), (4, 1, 2, 3), {"groups": 2, "padding": 1}),
                ("conv_transpose3d", (1, 2, 3, 2, 3), (2, 2, 2, 2, 2), {"dilation": 2})]


@pytest.mark.parametrize(("name", "x_shape", "w_shape", "options"), CONVOLUTIONS)
@pytest.mark.parametrize("bias", [False, True])
def test_complex_convolutions_match_pytorch_with_gradients(name, x_shape, w_shape, options, bias):
    out_channels = w_shape[1] * options.get("groups", 1) if "transpose" in name else w_shape[0]
    x, w, b = _complex(*x_shape, seed=10), _complex(*w_shape, seed=11), _complex(out_channels, seed=12)
    inputs = [x, w] + ([b] if bias else [])
    for t in inputs:
        t.requires_grad_()
    expected = getattr(TF, name)(*inputs, **options)
    (expected.abs().sum() + expected.imag.sum()).backward()
    ours = [_tg(t, True) for t in inputs]
    out = getattr(F, name)(*ours, **options)
    _same(out, expected, rtol=1e-10, atol=1e-12)
    (out.abs().sum() + out.imag.sum()).backward()
    for o, t in zip(ours, inputs, strict=True):
        np.testing.assert_allclose(np.asarray(o.grad), t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_complex_convolution_refuses_mixed_dtypes():
    with pytest.raises(RuntimeError):
        TF.conv1d(torch.ones(1, 1, 3, dtype=torch.complex128), torch.ones(1, 1, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError):
        F.conv1d(tg.ones(1, 1, 3, dtype=tg.complex128), tg.ones(1, 1, 2, dtype=tg.float64))


def test_complex_conv2d_gradient_matches_finite_differences():
    gen = np.random.default_rng(13)
    x, w = (tg.tensor(gen.standard_normal(shape) + 1j * gen.standard_normal(shape), requires_grad=True)
            for shape in ((1, 2, 4, 4), (2, 2, 2, 2)))
    assert tg.autograd.gradcheck(lambda a, b: F.conv2d(a, b, stride=2), (x, w))
