"""Convolution, pooling, padding, resampling, im2col (`tensorgrad.nn.conv`) against PyTorch.

One table of cases, each the same call in `tensorgrad.nn.functional` and `torch.nn.functional`
over the options that change the math; each case is checked twice: values and the gradient of
every input in float64 against PyTorch (on the CPU, and on a GPU where there is one), and backward
against finite differences (`gradcheck`).
Then the layers (state dicts both ways, padding modes), dtypes, the no-copy window view, and
bad arguments (PyTorch's exception types, messages naming the op and the shapes).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import placed_on

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn
from tensorgrad.device import to_numpy
from tensorgrad.nn import conv

RNG = np.random.default_rng(0)


def _data(*shape):
    return RNG.standard_normal(shape)


# name -> (function of the functional module F and the inputs, the input arrays). The same
# function runs with tensorgrad's F on tensorgrad tensors and torch's F on torch tensors.
X4 = _data(2, 4, 7, 6)
X3 = _data(2, 4, 9)
CASES = {
    "conv2d": (lambda F, x, w, b: F.conv2d(x, w, b), (X4, _data(6, 4, 3, 2), _data(6))),
    "conv2d stride padding": (lambda F, x, w, b: F.conv2d(x, w, b, stride=(2, 3), padding=(2, 1)),
                              (X4, _data(6, 4, 3, 2), _data(6))),
    "conv2d dilation": (lambda F, x, w: F.conv2d(x, w, dilation=2, padding=1), (X4, _data(3, 4, 2, 2))),
    "conv2d groups": (lambda F, x, w, b: F.conv2d(x, w, b, groups=2, stride=2),
        (X4, _data(6, 2, 3, 3), _data(6))),
    "conv2d depthwise": (lambda F, x, w: F.conv2d(x, w, groups=4), (X4, _data(8, 1, 3, 3))),
    "conv2d same even kernel": (lambda F, x, w, b: F.conv2d(x, w, b, padding="same"),
                                (X4, _data(5, 4, 4, 2), _data(5))),
    "conv2d same dilation": (lambda F, x, w: F.conv2d(x, w, padding="same", dilation=(2, 1)),
                             (X4, _data(3, 4, 3, 3))),
    "conv2d valid": (lambda F, x, w: F.conv2d(x, w, padding="valid"), (X4, _data(3, 4, 3, 3))),
    "conv2d unbatched": (lambda F, x, w: F.conv2d(x, w, padding=1), (X4[0], _data(3, 4, 3, 3))),
    "conv1d": (lambda F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1), (X3, _data(5, 4, 3), _data(5))),
    "conv1d groups same dilation": (lambda F, x, w: F.conv1d(x, w, padding="same", dilation=3, groups=2),
                                    (X3, _data(6, 2, 3))),
    "conv_transpose2d": (lambda F, x, w, b: F.conv_transpose2d(x, w, b), (X4, _data(4, 3, 3, 2), _data(3))),
    "conv_transpose2d stride padding output_padding": (
        lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        (X4, _data(4, 3, 3, 3), _data(3))),
    "conv_transpose2d groups dilation": (
        lambda F, x, w: F.conv_transpose2d(x, w, stride=(2, 3), padding=(1, 2), output_padding=(1, 2),
                                           groups=2, dilation=2), (X4, _data(4, 3, 3, 2))),
    "conv_transpose2d output_padding below dilation": (
        lambda F, x, w: F.conv_transpose2d(x, w, stride=2, dilation=3, output_padding=2),
            (X4, _data(4, 2, 2, 2))),
    "conv_transpose1d": (lambda F, x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, groups=2),
                         (X3, _data(4, 3, 3), _data(6))),
    "max_pool2d": (lambda F, x: F.max_pool2d(x, 2), (X4,)),
    "max_pool2d stride padding": (lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1), (X4,)),
    "max_pool2d ceil_mode dilation": (
        lambda F, x: F.max_pool2d(x, (2, 3), stride=(1, 2), padding=1, dilation=2, ceil_mode=True), (X4,)),
    "max_pool2d indices": (lambda F, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True), (X4,)),
    "max_pool1d indices": (lambda F, x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True, return_indices=True), (X3,)),
    "avg_pool2d": (lambda F, x: F.avg_pool2d(x, 2), (X4,)),
    "avg_pool2d padding": (lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1), (X4,)),
    "avg_pool2d exclude pad": (lambda F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (X4,)),
    "avg_pool2d ceil_mode": (lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (X4,)),
    "avg_pool2d ceil_mode exclude pad": (
        lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (X4,)),
    "avg_pool2d divisor_override": (lambda F, x: F.avg_pool2d(x, (2, 3), padding=1, divisor_override=5),
        (X4,)),
    "avg_pool1d": (lambda F, x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (X3,)),
    "adaptive_avg_pool2d": (lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)), (X4,)),
    "adaptive_avg_pool2d overlapping": (lambda F, x: F.adaptive_avg_pool2d(x, 5), (X4,)),
    "adaptive_avg_pool2d None": (lambda F, x: F.adaptive_avg_pool2d(x, (None, 4)), (X4,)),
    "pad constant crop": (lambda F, x: F.pad(x, (-1, 2, 1, 0, 0, 1), value=2.5), (X4,)),
    "pad reflect": (lambda F, x: F.pad(x, (1, 2, 3, 1), mode="reflect"), (X4,)),
    "pad replicate": (lambda F, x: F.pad(x, (4, 5, 6, 6), mode="replicate"), (X4,)),
    "pad circular": (lambda F, x: F.pad(x, (6, 6), mode="circular"), (X3,)),
    "pad crop and pad": (lambda F, x: F.pad(x, (2, -1, -2, 3), mode="circular"), (X4,)),
    "pad reflect crop": (lambda F, x: F.pad(x, (-1, 3, 4, -1), mode="reflect"), (X4,)),
    "pad replicate crop": (lambda F, x: F.pad(x, (-2, 3), mode="replicate"), (X3,)),
    "pad replicate beyond the size": (lambda F, x: F.pad(x, (12, 3), mode="replicate"), (X3,)),
    "interpolate nearest size": (lambda F, x: F.interpolate(x, size=(5, 9)), (X4,)),
    "interpolate nearest scale": (lambda F, x: F.interpolate(x, scale_factor=(0.6, 1.3)), (X4,)),
    "interpolate nearest-exact": (lambda F, x: F.interpolate(x, scale_factor=1.5, mode="nearest-exact"),
        (X4,)),
    "interpolate bilinear": (lambda F, x: F.interpolate(x, size=(5, 9), mode="bilinear"), (X4,)),
    "interpolate bilinear align_corners": (
        lambda F, x: F.interpolate(x, size=(5, 9), mode="bilinear", align_corners=True), (X4,)),
    "interpolate bilinear scale_factor": (
        lambda F, x: F.interpolate(x, scale_factor=(0.6, 2.3), mode="bilinear"), (X4,)),
    "interpolate bilinear one size kept": (
        lambda F, x: F.interpolate(x, scale_factor=(1.03, 2.21), mode="bilinear"), (X4,)),
    "interpolate nearest kept doubled": (lambda F, x: F.interpolate(x, scale_factor=(1.02, 2.01)),
                                         (_data(1, 2, 40, 20),)),
    "interpolate nearest-exact kept": (
        lambda F, x: F.interpolate(x, scale_factor=(1.0, 1.01), mode="nearest-exact"), (_data(1, 2, 3, 60),)),
    "interpolate bilinear recompute": (
        lambda F, x: F.interpolate(x, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True), (X4,)),
    "interpolate linear": (lambda F, x: F.interpolate(x, scale_factor=0.7, mode="linear", align_corners=True),
                           (X3,)),
    "interpolate area": (lambda F, x: F.interpolate(x, size=(3, 4), mode="area"), (X4,)),
    "interpolate bicubic": (lambda F, x: F.interpolate(x, size=(5, 9), mode="bicubic"), (X4,)),
    "interpolate bicubic align_corners": (
        lambda F, x: F.interpolate(x, size=(2, 7), mode="bicubic", align_corners=True), (X4,)),
    "interpolate bicubic scale_factor": (
        lambda F, x: F.interpolate(x, scale_factor=(0.6, 2.3), mode="bicubic"), (X4,)),
    "unfold": (lambda F, x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(2, 1)), (X4,)),
    "fold": (lambda F, x: F.fold(x, (7, 6), (2, 3), dilation=(2, 1), padding=1, stride=(2, 1)),
             (_data(2, 24, 24),)),
}


def _first(out):
    """The differentiable output (max_pool with return_indices gives (values, indices))."""
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_pytorch(name, device):
    f, arrays = CASES[name]
    check_against_torch(f, arrays, device, seed=len(name))


def check_against_torch(f, arrays, device, seed):
    """`f(F, *inputs)` in float64 on both libraries: values (and max pooling's indices), dtype,
    device, and every input's gradient under a random weighting of the output."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as torch_F  # noqa: N812

    ours = [tg.tensor(a, dtype=tg.float64, requires_grad=True, device=device) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = f(F, *ours), f(torch_F, *theirs)
    if isinstance(expected, tuple):  # the argmax indices of max pooling
        np.testing.assert_array_equal(to_numpy(out[1].data), expected[1].numpy())
        assert out[1].dtype == np.int64 and out[1].shape == tuple(expected[1].shape)
        assert out[1].device == out[0].device
    out, expected = _first(out), _first(expected)
    assert out.shape == tuple(expected.shape) and out.dtype == np.float64
    assert out.device == placed_on(device)
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(tg.tensor(weights, device=device))
    expected.backward(torch.from_numpy(weights))
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"input {i}")


@pytest.mark.parametrize("name", CASES)
def test_gradients_match_finite_differences(name):
    f, arrays = CASES[name]
    inputs = [tg.tensor(a, dtype=tg.float64, requires_grad=True) for a in arrays]
    assert tg.gradcheck(lambda *xs: _first(f(F, *xs)), inputs)


def test_nearest_1d_with_an_unchanged_size_follows_pytorchs_forward():
    # PyTorch's 1-D 'nearest' kernel maps an unchanged size through the scale (cell 1 copies cell 0
    # at scale_factor 1.02) where its 2-D kernel copies; its backward for this case disagrees with
    # its own forward, so the gradient here is checked against finite differences only.
    torch = pytest.importorskip("torch")
    x = _data(1, 2, 40)
    out = F.interpolate(tg.tensor(x, requires_grad=True), scale_factor=1.02)
    expected = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=1.02)
    np.testing.assert_array_equal(out.data, expected.numpy())
    assert tg.gradcheck(lambda t: F.interpolate(t, scale_factor=1.02), [tg.tensor(x, requires_grad=True)])


def test_convolution_by_hand():
    # A 2 x 2 kernel of ones sums each 2 x 2 window; stride 2 keeps the non-overlapping ones.
    x = tg.arange(16.0).reshape(1, 1, 4, 4)
    w = tg.ones(1, 1, 2, 2, requires_grad=True)
    out = F.conv2d(x, w, tg.tensor([0.5]), stride=2)
    np.testing.assert_array_equal(out.data.reshape(2, 2), [[10.5, 18.5], [42.5, 50.5]])
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.reshape(2, 2), [[20, 24], [36, 40]])  # sums of x[i::2, j::2]


def test_a_frozen_weight_still_passes_the_gradient_to_the_input():
    x = tg.randn(2, 3, 5, 5, dtype=tg.float64, requires_grad=True)
    w = tg.randn(4, 3, 3, 3, dtype=tg.float64)
    F.conv2d(x, w, padding=1, stride=2).sum().backward()
    frozen = x.grad
    x.grad, w.requires_grad = None, True
    F.conv2d(x, w, padding=1, stride=2).sum().backward()
    np.testing.assert_allclose(frozen, x.grad, rtol=1e-12)
    assert w.grad is not None


def test_max_pool_gives_the_gradient_to_the_first_of_tied_values_and_nan_wins():
    x = tg.tensor([[[[1.0, 1.0], [0.0, 1.0]]]], requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.reshape(2, 2), [[1, 0], [0, 0]])
    out = F.max_pool1d(tg.tensor([[[1.0, float("nan"), 3.0]]]), 3)
    assert np.isnan(out.item())


def test_float32_stays_float32():
    x = tg.randn(2, 3, 6, 6, requires_grad=True)
    layer = nn.Conv2d(3, 4, 3, padding=1)
    outs = [layer(x), F.max_pool2d(x, 2), F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 2), F.pad(x, (1, 1)),
            F.interpolate(x, scale_factor=2, mode="bilinear"), F.unfold(x, 2),
            F.conv_transpose2d(x, tg.randn(3, 2, 3, 3, requires_grad=True))]
    for out in outs:
        assert out.dtype == np.float32
        out.sum().backward()
    assert x.grad.dtype == np.float32 and layer.weight.grad.dtype == np.float32


def test_windows_are_a_view_and_the_im2col_matrix_is_the_one_copy():
    x = np.arange(2 * 3 * 6 * 5, dtype=np.float64).reshape(2, 3, 6, 5)
    windows = conv._windows(x, (3, 2), (2, 1), (1, 2))
    assert np.shares_memory(windows, x) and windows.shape == (2, 3, 3, 2, 2, 3)
    assert windows[1, 2, 1, 0, 1, 2] == x[1, 2, 1 * 2 + 1 * 1, 2 * 1 + 0 * 2]  # y*stride + i*dilation
    # The convolution keeps exactly one window-sized array (the im2col matrix) for its backward.
    out, cols = conv._conv_forward(x, np.ones((4, 3, 3, 2)), (2, 1), (1, 2), 1)
    assert cols.size == windows.size and not np.shares_memory(cols, x) and out.shape == (2, 4, 2, 3)


def test_fold_adds_overlapping_windows():
    # Every cell of a 3 x 3 plane is covered by as many 2 x 2 windows (stride 1) as fold counts.
    counts = F.fold(tg.ones(1, 4, 4), (3, 3), 2)
    np.testing.assert_array_equal(counts.numpy()[0, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])


# --- layers ---------------------------------------------------------------------------------------


LAYERS = {
    "Conv2d": (lambda nn: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
               (2, 4, 7, 6)),
    "Conv2d same no bias": (lambda nn: nn.Conv2d(4, 3, 4, padding="same", bias=False), (2, 4, 7, 6)),
    "Conv2d reflect": (lambda nn: nn.Conv2d(4, 3, 3, padding=(1, 2), padding_mode="reflect"), (2, 4, 7, 6)),
    "Conv2d replicate same": (lambda nn: nn.Conv2d(4, 3, (2, 3), padding="same", padding_mode="replicate"),
                              (2, 4, 7, 6)),
    "Conv2d circular": (lambda nn: nn.Conv2d(4, 3, 3, padding=2, padding_mode="circular"), (2, 4, 7, 6)),
    "Conv1d": (lambda nn: nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2, padding_mode="reflect"),
               (2, 4, 9)),
    "ConvTranspose2d": (lambda nn: nn.ConvTranspose2d(4, 6, 3, 2, padding=1, output_padding=1, groups=2),
                        (2, 4, 5, 4)),
    "MaxPool2d": (lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (2, 4, 7, 6)),
    "AvgPool2d": (lambda nn: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), (2, 4, 7, 6)),
    "AdaptiveAvgPool2d": (lambda nn: nn.AdaptiveAvgPool2d((2, 3)), (2, 4, 7, 6)),
}


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("direction", ["torch to ours", "ours to torch"])
def test_layers_load_state_dicts_both_ways_and_match_pytorch(name, direction, device):
    torch = pytest.importorskip("torch")
    make, shape = LAYERS[name]
    # float64 before any values move; on a GPU, the CPU state dict is copied across by loading.
    ours, theirs = make(nn).double().to(device), make(torch.nn).double()
    assert [k for k, _ in ours.named_parameters()] == [k for k, _ in theirs.named_parameters()]
    if direction == "torch to ours":
        ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    else:
        theirs.load_state_dict({k: torch.from_numpy(to_numpy(v.data)) for k, v in ours.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert all(p.device == placed_on(device) for p in ours.parameters())
    x = _data(*shape)
    x_ours, x_theirs = tg.tensor(x, requires_grad=True, device=device), torch.tensor(x, requires_grad=True)
    out, expected = ours(x_ours), theirs(x_theirs)
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = np.random.default_rng(len(name)).standard_normal(out.shape)
    out.backward(tg.tensor(weights, device=device))
    expected.backward(torch.from_numpy(weights))
    np.testing.assert_allclose(to_numpy(x_ours.grad), x_theirs.grad.numpy(), rtol=1e-10, atol=1e-12)
    their_params = dict(theirs.named_parameters())
    for key, param in ours.named_parameters():
        np.testing.assert_allclose(to_numpy(param.grad), their_params[key].grad.numpy(), rtol=1e-10,
                                   atol=1e-12)


def test_conv_layers_use_pytorchs_initialisation_bounds_and_the_seed():
    tg.manual_seed(3)
    first = nn.Conv2d(6, 8, 3, groups=2)
    tg.manual_seed(3)
    again = nn.Conv2d(6, 8, 3, groups=2)
    np.testing.assert_array_equal(first.weight.data, again.weight.data)
    bound = 1 / np.sqrt(3 * 3 * 3)  # fan_in = in_channels / groups * kernel size
    for param in (first.weight, first.bias):
        assert param.dtype == np.float32 and np.abs(param.data).max() <= bound
    assert np.abs(first.weight.data).max() > 0.9 * bound  # 216 draws spread over the whole range
    transposed = nn.ConvTranspose2d(4, 6, 2, groups=2)
    assert transposed.weight.shape == (4, 3, 2, 2) and transposed.bias.shape == (6,)
    assert np.abs(transposed.weight.data).max() <= 1 / np.sqrt(3 * 2 * 2)
    assert repr(nn.Conv2d(1, 2, 3, stride=2, bias=False)) == \
        "Conv2d(1, 2, kernel_size=(3, 3), stride=(2, 2), bias=False)"


def test_conv_transpose_output_size_picks_the_output_padding():
    layer = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    x = tg.randn(1, 2, 4, 4)
    assert layer(x).shape == (1, 3, 7, 7)
    assert layer(x, output_size=(8, 8)).shape == (1, 3, 8, 8)
    with pytest.raises(ValueError, match="ConvTranspose2d: requested an output size of"):
        layer(x, output_size=(9, 9))


# --- bad arguments ----------------------------------------------------------------------------------


X = tg.randn(2, 3, 5, 5)
W = tg.randn(4, 3, 3, 3)
BAD = [
    (lambda: F.conv2d(X, W, stride=1.5), TypeError, r"conv2d: argument 'stride' must be an int"),
    (lambda: F.conv2d(X, W, stride=0), RuntimeError, r"conv2d: non-positive stride"),
    (lambda: F.conv2d(X, W, padding=-1), RuntimeError, r"conv2d: negative padding"),
    (lambda: F.conv2d(X, W, padding="full"), RuntimeError, r"conv2d: invalid padding string 'full'"),
    (lambda: F.conv2d(X, W, padding="same", stride=2),
        RuntimeError, r"padding='same' is not supported for strided"),
    (lambda: F.conv2d(X, tg.randn(4, 2, 3, 3)),
        RuntimeError, r"expected the input to have 2 channels, but got 3"),
    (lambda: F.conv2d(X, W, groups=2), RuntimeError, r"groups=2"),
    (lambda: F.conv2d(X, tg.randn(4, 3, 7, 7)),
        RuntimeError, r"conv2d: padded input size per channel \(5, 5\)"),
    (lambda: F.conv2d(tg.randn(5, 5), W), RuntimeError, r"conv2d: expected a 3-D \(unbatched\) or 4-D"),
    (lambda: F.conv2d(X.double(), W), RuntimeError,
     r"conv2d: expected floating-point tensors of one dtype, got float64, float32"),
    (lambda: F.conv2d(X, W, tg.randn(3)), RuntimeError, r"expected bias of shape \(4,\), got \(3,\)"),
    (lambda: F.conv2d(X, W, stride=(1, 1, 1)),
        RuntimeError, r"stride to be a single integer value or a list of 2"),
    (lambda: F.conv_transpose2d(X, tg.randn(3, 4, 3, 3), output_padding=1), RuntimeError,
     r"conv_transpose2d: output padding must be smaller than either stride or dilation"),
    (lambda: F.max_pool2d(X, 2, padding=2), RuntimeError, r"max_pool2d: pad should be at most half"),
    (lambda: F.max_pool2d(X, 7), RuntimeError, r"max_pool2d: given input of shape \(3, 5, 5\).*too small"),
    (lambda: F.max_pool2d(X, 2.5), TypeError, r"max_pool2d: argument 'kernel_size'"),
    (lambda: F.avg_pool2d(X, 2, padding=2), RuntimeError, r"avg_pool2d: pad should be at most half"),
    (lambda: F.pad(X, (1,)), RuntimeError, r"pad: padding length must be divisible by 2"),
    (lambda: F.pad(X, (1,) * 10), RuntimeError, r"pad: padding length should be at most twice"),
    (lambda: F.pad(X, (5, 5, 0, 0), mode="reflect"),
        RuntimeError, r"at most 4 for dimension 3 of size 5"),
    (lambda: F.pad(X, (1, 1), mode="reflect"),
        NotImplementedError, r"padding size 2 is not supported for 4-D"),
    (lambda: F.pad(X, (1, 1), mode="wrap"), NotImplementedError, r"unrecognised padding mode 'wrap'"),
    (lambda: F.pad(X, (1.5, 1)), TypeError, r"pad: argument 'pad' must be an int"),
    (lambda: F.pad(X, (-3, -3)), RuntimeError, r"pad: amounts \(-3, -3\) crop more than the 5 cells"),
    (lambda: F.pad(X, (1, 1, 1, 1), mode="replicate", value=1.0), RuntimeError, r"doesn't take a value"),
    (lambda: F.interpolate(X, size=3, scale_factor=2), ValueError, r"only one of size or scale_factor"),
    (lambda: F.interpolate(X), ValueError, r"either size or scale_factor should be defined"),
    (lambda: F.interpolate(X, size=3, align_corners=True),
        ValueError, r"align_corners option can only be set"),
    (lambda: F.interpolate(X[0], size=3, mode="bilinear"),
        NotImplementedError, r"bilinear mode needs 4-D input"),
    (lambda: F.interpolate(X, size=3, mode="trilinear"),
        NotImplementedError, r"mode 'trilinear' is not supported"),
    (lambda: F.interpolate(X[0], size=3, mode="bicubic"),
        NotImplementedError, r"bicubic mode needs 4-D input"),
    (lambda: F.interpolate(X, size=(2, 2, 2)), ValueError, r"same number of spatial dimensions"),
    (lambda: F.fold(tg.randn(1, 12, 5), (4, 4), 2), RuntimeError, r"fold: given output_size=\(4, 4\)"),
    (lambda: F.adaptive_avg_pool2d(X, (2, 2, 2)),
        RuntimeError, r"adaptive_avg_pool2d: output_size must be 2"),
    (lambda: nn.Conv2d(3, 4, 3, padding="full"), ValueError, r"Conv2d: invalid padding string 'full'"),
    (lambda: nn.Conv2d(3, 4, 3, padding_mode="mirror"), ValueError, r"Conv2d: padding_mode must be one of"),
    (lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, r"Conv2d: in_channels \(3\) and out_channels \(4\)"),
    (lambda: nn.Conv2d(3, 4, 3, stride=2, padding="same"), ValueError, r"padding='same' is not supported"),
    (lambda: nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"), ValueError, r"only 'zeros' padding mode"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD, ids=[b[2][:40] for b in BAD])
def test_bad_arguments_raise_pytorchs_exception_type_with_a_clear_message(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_bad_arguments_raise_the_same_exception_types_in_pytorch():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as torch_F  # noqa: N812

    x, w = torch.randn(2, 3, 5, 5), torch.randn(4, 3, 3, 3)
    def error_of(message: str) -> type[Exception]:
        """The exception type BAD expects for the case whose message pattern starts so."""
        return next(error for _, error, pattern in BAD if pattern.startswith(message))

    same = [  # (our expected type, theirs): the type we raise must be the one PyTorch raises
        (error_of(r"conv2d: non-positive"), lambda: torch_F.conv2d(x, w, stride=0)),
        (error_of(r"expected the input to have 2"), lambda: torch_F.conv2d(x, torch.randn(4, 2, 3, 3))),
        (error_of(r"conv2d: expected floating"), lambda: torch_F.conv2d(x.double(), w)),
        (error_of(r"max_pool2d: given input"), lambda: torch_F.max_pool2d(x, 7)),
        (error_of(r"pad: padding length must"), lambda: torch_F.pad(x, (1,))),
        (error_of(r"padding size 2"), lambda: torch_F.pad(x, (1, 1), mode="reflect")),
        (error_of(r"doesn't take a value"), lambda: torch_F.pad(x, (1, 1, 1, 1), "replicate", value=1.0)),
        (error_of(r"bilinear mode needs"), lambda: torch_F.interpolate(x[0], size=3, mode="bilinear")),
        (error_of(r"only one of size"), lambda: torch_F.interpolate(x, size=3, scale_factor=2)),
        (error_of(r"align_corners option"), lambda: torch_F.interpolate(x, size=3, align_corners=True)),
        (error_of(r"conv2d: argument 'stride'"), lambda: torch_F.conv2d(x, w, stride=1.5)),
    ]
    for error, theirs in same:
        with pytest.raises(error):
            theirs()
