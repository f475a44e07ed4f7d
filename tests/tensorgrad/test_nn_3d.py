"""3-D convolution, pooling, padding, normalisation and dropout, and the spatial transformer
(`affine_grid`, `grid_sample`) against PyTorch.

One table of functional cases, each the same call in `tensorgrad.nn.functional` and
`torch.nn.functional`: values, dtypes and the gradient of every input in float64 against PyTorch,
backward against finite differences, and a run on the stand-in for GPU arrays (every output and
gradient must stay a ForeignArray). Then the layers (reprs, state dicts both ways, padding modes,
running statistics), dropout's masks, float32, signatures and bad arguments (PyTorch's exception
types, messages naming the op and the shapes).
"""

from __future__ import annotations

import inspect
import re
import zlib

import numpy as np
import pytest
from foreign_array import is_foreign
from test_foreign_arrays import run_twice
from test_nn_conv import check_against_torch

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn
from tensorgrad.device import to_numpy

torch = pytest.importorskip("torch")
torch_F = torch.nn.functional  # noqa: N816 - the same alias as F
# PyTorch warns that its 'same' padding with an even kernel copies the input; tensorgrad's always pads.
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

RNG = np.random.default_rng(3)


def _data(*shape):
    return RNG.standard_normal(shape)


X5 = _data(2, 4, 5, 4, 6)
GRID = RNG.uniform(-1.3, 1.3, (2, 3, 5, 2))  # reaches outside the image, where padding_mode matters
IMAGE = _data(2, 3, 4, 5)
GRID3 = RNG.uniform(-1.3, 1.3, (2, 2, 3, 2, 3))
VOLUME = _data(2, 2, 3, 4, 3)

# name -> (function of the functional module F and the inputs, the input arrays). The same
# function runs with tensorgrad's F on tensorgrad tensors and torch's F on torch tensors.
CASES = {
    "conv3d": (lambda F, x, w, b: F.conv3d(x, w, b), (X5, _data(3, 4, 2, 3, 2), _data(3))),
    "conv3d stride padding dilation": (
        lambda F, x, w, b: F.conv3d(x, w, b, stride=(1, 2, 3), padding=(1, 0, 2), dilation=(2, 1, 1)),
        (X5, _data(3, 4, 2, 2, 3), _data(3))),
    "conv3d groups same": (lambda F, x, w: F.conv3d(x, w, padding="same", groups=2),
                           (X5, _data(4, 2, 3, 2, 3))),
    "conv3d valid unbatched": (lambda F, x, w: F.conv3d(x, w, padding="valid"),
                               (X5[0], _data(2, 4, 2, 2, 2))),
    "conv_transpose3d": (lambda F, x, w, b: F.conv_transpose3d(x, w, b),
                         (X5, _data(4, 2, 2, 3, 2), _data(2))),
    "conv_transpose3d stride padding output_padding groups dilation": (
        lambda F, x, w, b: F.conv_transpose3d(x, w, b, stride=(2, 1, 3), padding=(1, 0, 1),
                                              output_padding=(1, 0, 2), groups=2, dilation=(1, 2, 1)),
        (X5, _data(4, 1, 2, 2, 2), _data(2))),
    "max_pool3d": (lambda F, x: F.max_pool3d(x, 2), (X5,)),
    "max_pool3d indices ceil_mode dilation": (
        lambda F, x: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 1), True, True), (X5,)),
    "max_pool3d unbatched indices": (lambda F, x: F.max_pool3d(x, 2, padding=1, return_indices=True),
                                     (X5[1],)),
    "avg_pool3d": (lambda F, x: F.avg_pool3d(x, 2), (X5,)),
    "avg_pool3d ceil_mode exclude pad": (
        lambda F, x: F.avg_pool3d(x, (2, 3, 3), (1, 2, 2), (1, 1, 1), ceil_mode=True,
                                  count_include_pad=False), (X5,)),
    "avg_pool3d divisor_override": (lambda F, x: F.avg_pool3d(x, 3, 2, 1, divisor_override=5), (X5,)),
    "adaptive_avg_pool3d": (lambda F, x: F.adaptive_avg_pool3d(x, (3, None, 4)), (X5,)),
    "adaptive_avg_pool3d unbatched": (lambda F, x: F.adaptive_avg_pool3d(x, 2), (X5[0],)),
    "adaptive_max_pool3d indices": (lambda F, x: F.adaptive_max_pool3d(x, (3, 2, 4), return_indices=True),
                                    (X5,)),
    "adaptive_max_pool3d unbatched": (lambda F, x: F.adaptive_max_pool3d(x, (2, None, 5)), (X5[0],)),
    "adaptive_max_pool2d indices": (lambda F, x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True),
                                    (X5[0],)),
    "pad 3-D reflect": (lambda F, x: F.pad(x, (1, 2, 2, 1, 1, 3), mode="reflect"), (X5,)),
    "pad 3-D replicate": (lambda F, x: F.pad(x, (2, 0, 1, 3, 0, 2), mode="replicate"), (X5,)),
    "pad 3-D circular": (lambda F, x: F.pad(x, (1, 2, 3, 1, 2, 2), mode="circular"), (X5,)),
    "interpolate 5-D nearest size": (lambda F, x: F.interpolate(x, size=(3, 7, 9)), (X5,)),
    "interpolate 5-D nearest scale": (lambda F, x: F.interpolate(x, scale_factor=(2.0, 0.6, 1.4)), (X5,)),
    "interpolate 5-D nearest-exact": (
        lambda F, x: F.interpolate(x, scale_factor=(1.5, 0.7, 2.0), mode="nearest-exact"), (X5,)),
    "interpolate trilinear": (lambda F, x: F.interpolate(x, size=(7, 3, 8), mode="trilinear"), (X5,)),
    "interpolate trilinear align_corners": (
        lambda F, x: F.interpolate(x, size=(7, 3, 8), mode="trilinear", align_corners=True), (X5,)),
    "interpolate trilinear scale_factor": (
        lambda F, x: F.interpolate(x, scale_factor=(1.5, 0.7, 2.1), mode="trilinear"), (X5,)),
    "interpolate 5-D area": (lambda F, x: F.interpolate(x, size=(3, 3, 4), mode="area"), (X5,)),
    "affine_grid 2-D": (lambda F, t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False), (_data(2, 2, 3),)),
    "affine_grid 2-D align_corners": (lambda F, t: F.affine_grid(t, [2, 3, 4, 5], align_corners=True),
                                      (_data(2, 2, 3),)),
    "affine_grid 3-D": (lambda F, t: F.affine_grid(t, (2, 1, 3, 4, 5), align_corners=False),
                        (_data(2, 3, 4),)),
    "affine_grid 3-D align_corners": (lambda F, t: F.affine_grid(t, (2, 1, 3, 4, 5), align_corners=True),
                                      (_data(2, 3, 4),)),
    "spatial transformer": (
        lambda F, x, t: F.grid_sample(x, F.affine_grid(t, (2, 3, 6, 3), align_corners=False),
                                      align_corners=False),
        (IMAGE, np.eye(2, 3) + 0.3 * _data(2, 2, 3))),
    **{f"grid_sample {mode} {padding} {'align_corners' if align else ''}".strip(): (
        lambda F, x, g, mode=mode, padding=padding, align=align: F.grid_sample(x, g, mode, padding, align),
        (IMAGE, GRID))
       for mode in ("bilinear", "nearest", "bicubic") for padding in ("zeros", "border", "reflection")
       for align in (False, True)},
    **{f"grid_sample 5-D {mode} {padding} {'align_corners' if align else ''}".strip(): (
        lambda F, x, g, mode=mode, padding=padding, align=align: F.grid_sample(x, g, mode, padding, align),
        (VOLUME, GRID3))
       for mode, padding, align in [("bilinear", "zeros", False), ("bilinear", "border", True),
                                    ("bilinear", "reflection", False), ("bilinear", "reflection", True),
                                    ("nearest", "zeros", True)]},
}


def _first(out):
    """The differentiable output (pooling with return_indices gives (values, indices))."""
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_pytorch(name, device):
    f, arrays = CASES[name]
    check_against_torch(f, arrays, device, seed=zlib.crc32(name.encode()))


@pytest.mark.parametrize("name", CASES)
def test_gradients_match_finite_differences(name):
    f, arrays = CASES[name]
    inputs = [tg.tensor(a, dtype=tg.float64, requires_grad=True) for a in arrays]
    assert tg.gradcheck(lambda *xs: _first(f(F, *xs)), inputs)


@pytest.mark.parametrize("name", CASES)
def test_ops_keep_foreign_arrays(name):
    f, arrays = CASES[name]
    (plain_outs, plain_leaves), (outs, leaves) = run_twice(lambda m, *xs: f(F, *xs), list(arrays))
    for plain, out in zip(plain_outs, outs, strict=True):
        assert is_foreign(out.data), f"output is {type(out.data).__name__}"
        assert out.dtype == plain.dtype and out.shape == plain.shape
        np.testing.assert_allclose(to_numpy(out.data), plain.data, rtol=1e-12, atol=1e-12)
    for i, (plain, leaf) in enumerate(zip(plain_leaves, leaves, strict=True)):
        assert is_foreign(leaf.grad), f"the gradient of input {i} is {type(leaf.grad).__name__}"
        np.testing.assert_allclose(to_numpy(leaf.grad), plain.grad, rtol=1e-12, atol=1e-12)


def test_nearest_3d_upscaling_to_double_follows_pytorchs_forward():
    # As in 1-D, PyTorch's 3-D 'nearest' kernel maps a size that doubles under a scale_factor
    # other than 2 through the scale (2.1: cells 0 0 0 1 1 2 ...), and its backward for this
    # case disagrees with its own forward (it sends cells 2k, 2k+1 to k); the gradient here is
    # the forward's, checked against finite differences.
    x = _data(1, 2, 3, 2, 5)
    out = F.interpolate(tg.tensor(x), scale_factor=(1.0, 1.0, 2.1))
    expected = torch_F.interpolate(torch.tensor(x), scale_factor=(1.0, 1.0, 2.1))
    np.testing.assert_array_equal(out.data, expected.numpy())
    np.testing.assert_array_equal(out.data[0, 0, 0, 0], x[0, 0, 0, 0, [0, 0, 0, 1, 1, 2, 2, 3, 3, 4]])
    assert tg.gradcheck(lambda t: F.interpolate(t, scale_factor=(1.0, 1.0, 2.1)),
                        [tg.tensor(x, requires_grad=True)])


# --- by hand --------------------------------------------------------------------------------------


def test_conv3d_by_hand():
    # A 2 x 2 x 2 kernel of ones sums each 2 x 2 x 2 block; stride 2 keeps the disjoint ones.
    x = tg.arange(64.0).reshape(1, 1, 4, 4, 4)
    w = tg.ones(1, 1, 2, 2, 2, requires_grad=True)
    out = F.conv3d(x, w, stride=2)
    blocks = np.arange(64.0).reshape(2, 2, 2, 2, 2, 2).sum(axis=(1, 3, 5))
    np.testing.assert_array_equal(out.data[0, 0], blocks)
    out.sum().backward()
    np.testing.assert_array_equal(w.grad[0, 0], np.arange(64.0).reshape(2, 2, 2, 2, 2, 2).sum(axis=(0, 2, 4)))


def test_max_pool3d_indices_point_into_the_volume():
    x = tg.zeros(1, 1, 2, 3, 4)
    x.data[0, 0, 1, 2, 3] = 5.0
    out, indices = F.max_pool3d(x, (2, 3, 4), return_indices=True)
    assert out.item() == 5.0 and indices.item() == 1 * 12 + 2 * 4 + 3


def test_grid_sample_identity_grid_reads_the_image_back():
    x = tg.tensor(_data(1, 2, 3, 4), requires_grad=True)
    grid = F.affine_grid(tg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=tg.float64), (1, 2, 3, 4),
                         align_corners=False)
    out = F.grid_sample(x, grid, align_corners=False)
    np.testing.assert_allclose(out.data, x.data, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(x.grad, np.ones((1, 2, 3, 4)), rtol=1e-12)


def test_grid_sample_blends_between_pixels_and_reads_zero_outside():
    x = tg.tensor([[[[0.0, 10.0], [20.0, 30.0]]]])
    # align_corners: -1 and 1 are the corner pixels' centres; (0, 0) is the middle of all four.
    grid = tg.tensor([[[[0.0, 0.0], [0.5, -1.0], [3.0, 0.0]]]])
    out = F.grid_sample(x, grid, align_corners=True)
    np.testing.assert_allclose(out.data.ravel(), [15.0, 7.5, 0.0])
    border = F.grid_sample(x, grid, padding_mode="border", align_corners=True)
    np.testing.assert_allclose(border.data.ravel(), [15.0, 7.5, 20.0])


# --- layers ---------------------------------------------------------------------------------------


LAYERS = [
    ("Conv3d", (4, 6, 3), {}),
    ("Conv3d", (4, 6, (1, 2, 3)), dict(stride=2, padding=1, dilation=(2, 1, 1), groups=2, bias=False)),
    ("Conv3d", (4, 2, 3), dict(padding="same", padding_mode="reflect")),
    ("Conv3d", (4, 2, 2), dict(padding=(1, 0, 2), padding_mode="replicate")),
    ("Conv3d", (4, 2, 3), dict(padding=1, padding_mode="circular", stride=(1, 2, 1))),
    ("ConvTranspose3d", (4, 6, 3), dict(stride=2, output_padding=1, groups=2)),
    ("MaxPool3d", (3, 1, 1, 2, True, True), {}),
    ("MaxPool3d", (2,), {}),
    ("AvgPool3d", (3, 2, 1, True, False, 5), {}),
    ("AvgPool3d", (2,), {}),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}),
    ("AdaptiveMaxPool3d", (2,), dict(return_indices=True)),
    ("ConstantPad3d", (1, 2.0), {}),
    ("ConstantPad3d", ((1, 0, 2, 1, 0, 3), -1.5), {}),
    ("ZeroPad3d", ((1, 2, 3, 0, 1, 1),), {}),
    ("ReflectionPad3d", (1,), {}),
    ("ReplicationPad3d", ((2, 0, 1, 3, 0, 1),), {}),
    ("CircularPad3d", (2,), {}),
    ("Upsample", (), dict(scale_factor=2.0, mode="trilinear")),
    ("Upsample", (), dict(size=(3, 5, 7), mode="nearest")),
    ("BatchNorm3d", (4,), {}),
    ("InstanceNorm3d", (4,), dict(affine=True, track_running_stats=True)),
    ("InstanceNorm3d", (4,), {}),
    ("InstanceNorm3d", (4,), dict(affine=True, bias=False)),
    ("Dropout3d", (0.3,), {}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), LAYERS, ids=[f"{n} {a} {k}" for n, a, k in LAYERS])
def test_layers_match_pytorchs_repr_state_dict_and_output(name, args, kwargs):
    ours = getattr(nn, name)(*args, **kwargs).double()
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    theirs.load_state_dict({k: torch.from_numpy(np.array(to_numpy(v.data)))
                            for k, v in ours.state_dict().items()})
    if name == "Dropout3d":
        ours.eval(), theirs.eval()
    x = tg.tensor(X5, requires_grad=True)
    tx = torch.tensor(X5, requires_grad=True)
    out, expected = _first(ours(x)), _first(theirs(tx))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = np.random.default_rng(1).standard_normal(out.shape)
    out.backward(tg.tensor(weights))
    expected.backward(torch.from_numpy(weights))
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    params = zip(ours.named_parameters(), theirs.named_parameters(), strict=True)
    for (key, param), (_, their_param) in params:
        np.testing.assert_allclose(param.grad, their_param.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=key)
    for key, buffer in theirs.state_dict().items():  # running statistics updated alike
        np.testing.assert_allclose(to_numpy(ours.state_dict()[key].data), buffer.numpy(), rtol=1e-10,
                                   err_msg=key)


def test_conv_transpose3d_output_size_picks_the_output_padding():
    layer = nn.ConvTranspose3d(4, 2, 3, stride=2).double()
    theirs = torch.nn.ConvTranspose3d(4, 2, 3, stride=2)
    out = layer(tg.tensor(X5), output_size=(12, 10, 14))  # one more than the smallest, 11 9 13
    assert out.shape == (2, 2, 12, 10, 14)
    assert out.shape == tuple(theirs.double()(torch.tensor(X5), (12, 10, 14)).shape)
    with pytest.raises(ValueError, match="ConvTranspose3d"):
        layer(tg.tensor(X5), output_size=(13, 10, 14))


def test_batch_norm3d_eval_uses_the_running_statistics():
    ours, theirs = nn.BatchNorm3d(4, momentum=None).double(), torch.nn.BatchNorm3d(4, momentum=None).double()
    for _ in range(2):
        ours(tg.tensor(X5)), theirs(torch.tensor(X5))
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(tg.tensor(X5[:1])).data, theirs(torch.tensor(X5[:1])).detach().numpy(),
                               rtol=1e-10, atol=1e-12)
    assert int(ours.num_batches_tracked.item()) == 2


def test_instance_norm3d_takes_unbatched_input():
    layer, theirs = nn.InstanceNorm3d(4), torch.nn.InstanceNorm3d(4)
    np.testing.assert_allclose(layer(tg.tensor(X5[0])).data, theirs(torch.tensor(X5[0])).numpy(), rtol=1e-10,
                               atol=1e-12)


def test_dropout3d_zeros_whole_volumes_and_scales_the_rest():
    tg.manual_seed(0)
    x = tg.ones(8, 16, 2, 3, 2, requires_grad=True)
    out = F.dropout3d(x, p=0.25)
    per_volume = out.data.reshape(8, 16, -1)
    assert set(np.unique(per_volume)) == {0.0, np.float32(1 / 0.75)}
    assert (per_volume == per_volume[..., :1]).all()  # one draw per (sample, channel)
    assert 0.1 < (per_volume[..., 0] == 0).mean() < 0.4
    out.backward(tg.ones(*out.shape))
    np.testing.assert_array_equal(x.grad, out.data)  # the gradient is the same mask
    unbatched = F.dropout3d(tg.ones(16, 2, 3, 2), p=0.5).data.reshape(16, -1)
    assert (unbatched == unbatched[:, :1]).all()
    assert F.dropout3d(x, p=0.5, training=False) is x
    layer = nn.Dropout3d(0.5)
    assert layer.eval()(x) is x


def test_dropout3d_inplace_and_other_ranks():
    x = tg.ones(2, 3, 2, 2, 2)
    assert F.dropout3d(x, 0.5, inplace=True) is x
    assert set(np.unique(x.data)) <= {0.0, 2.0}
    with pytest.warns(UserWarning, match="dropout3d"):
        out = F.dropout3d(tg.ones(4, 5, 6), 0.5)  # read as unbatched: one draw per row of dim 0
    assert (out.data == out.data[:, :1, :1]).all()
    with pytest.raises(ValueError, match="dropout3d"):
        F.dropout3d(x, 1.5)


def test_float32_stays_float32():
    x = tg.randn(1, 2, 4, 4, 4, requires_grad=True)
    grid = tg.rand(1, 3, 3, 2) * 2 - 1
    outs = [nn.Conv3d(2, 3, 2)(x), nn.ConvTranspose3d(2, 3, 2)(x), F.max_pool3d(x, 2), F.avg_pool3d(x, 2),
            F.adaptive_avg_pool3d(x, 3), F.adaptive_max_pool3d(x, 3), F.pad(x, (1,) * 6, mode="reflect"),
            F.interpolate(x, scale_factor=1.5, mode="trilinear"), nn.BatchNorm3d(2)(x), F.dropout3d(x),
            F.grid_sample(x[:, :, 0], grid, align_corners=False),
            F.affine_grid(tg.randn(1, 2, 3, requires_grad=True), (1, 2, 3, 3), align_corners=False)]
    for out in outs:
        assert out.dtype == np.float32
        out.sum().backward()
    assert x.grad.dtype == np.float32


# --- signatures and bad arguments -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["adaptive_avg_pool3d", "dropout3d", "affine_grid", "grid_sample"])
def test_functional_signatures_match_pytorch(name):
    ours, theirs = inspect.signature(getattr(F, name)), inspect.signature(getattr(torch_F, name))
    assert [(p.name, p.default) for p in ours.parameters.values()] == \
        [(p.name, p.default) for p in theirs.parameters.values()]


@pytest.mark.parametrize(("name", "expected"), [
    ("conv3d", "input weight bias=None stride=1 padding=0 dilation=1 groups=1"),
    ("conv_transpose3d", "input weight bias=None stride=1 padding=0 output_padding=0 groups=1 dilation=1"),
    ("avg_pool3d", "input kernel_size stride=None padding=0 ceil_mode=False count_include_pad=True "
                   "divisor_override=None"),
    ("max_pool3d", "input kernel_size stride=None padding=0 dilation=1 ceil_mode=False return_indices=False"),
    ("adaptive_max_pool3d", "input output_size return_indices=False"),
])
def test_builtin_signatures_match_pytorchs_documented_ones(name, expected):
    # PyTorch's C++ functions have no inspectable signature: these are the ones its docs state.
    params = inspect.signature(getattr(F, name)).parameters.values()
    assert " ".join(p.name if p.default is p.empty else f"{p.name}={p.default}" for p in params) == expected


@pytest.mark.parametrize("name", ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
                                  "AdaptiveMaxPool3d", "BatchNorm3d", "InstanceNorm3d", "Dropout3d",
                                  "ConstantPad3d", "ZeroPad3d", "ReflectionPad3d", "ReplicationPad3d",
                                  "CircularPad3d"])
def test_layer_signatures_match_pytorch(name):
    ours = inspect.signature(getattr(nn, name).__init__).parameters.values()
    theirs = inspect.signature(getattr(torch.nn, name).__init__).parameters.values()
    assert [(p.name, p.default) for p in ours] == [(p.name, p.default) for p in theirs]


def _error(f):
    """The exception f raises, in either library."""
    with pytest.raises(Exception) as info:  # noqa: PT011 - comparing the types is the point
        f()
    return info.value


ERRORS = {
    "conv3d channels": (lambda F, t: F.conv3d(t(2, 3, 4, 4, 4), t(2, 2, 1, 1, 1)), "conv3d"),
    "conv3d input rank": (lambda F, t: F.conv3d(t(2, 3, 4, 4), t(2, 3, 1, 1, 1)), "conv3d"),
    "conv_transpose3d output_padding": (
        lambda F, t: F.conv_transpose3d(t(2, 3, 4, 4, 4), t(3, 2, 2, 2, 2), output_padding=1),
        "conv_transpose3d"),
    "max_pool3d padding": (lambda F, t: F.max_pool3d(t(2, 3, 4, 4, 4), 2, padding=2), "max_pool3d"),
    "avg_pool3d rank": (lambda F, t: F.avg_pool3d(t(3, 4, 4), 2), "avg_pool3d"),
    "adaptive_avg_pool3d rank": (lambda F, t: F.adaptive_avg_pool3d(t(3, 4), 2), "adaptive_avg_pool3d"),
    "adaptive_max_pool3d rank": (lambda F, t: F.adaptive_max_pool3d(t(3, 4), 2), "adaptive_max_pool3d"),
    "interpolate bilinear on 5-D": (
        lambda F, t: F.interpolate(t(1, 1, 2, 2, 2), scale_factor=2, mode="bilinear"), "bilinear"),
    "interpolate trilinear on 4-D": (
        lambda F, t: F.interpolate(t(1, 1, 2, 2), scale_factor=2, mode="trilinear"), "trilinear"),
    "affine_grid theta shape": (lambda F, t: F.affine_grid(t(2, 2, 3), (2, 3, 4, 5, 6), False), "Nx3x4"),
    "affine_grid size": (lambda F, t: F.affine_grid(t(2, 2, 3), (2, 3, 4), False), "affine_grid"),
    "affine_grid integer theta": (lambda F, t: F.affine_grid(t(2, 2, 3).int(), (2, 3, 4, 4), False), "theta"),
    "affine_grid empty": (lambda F, t: F.affine_grid(t(2, 2, 3), (2, 3, 0, 4), False), "positive"),
    "affine_grid batch": (lambda F, t: F.affine_grid(t(3, 2, 3), (2, 3, 4, 4), False), "3"),
    "grid_sample mode": (
        lambda F, t: F.grid_sample(t(2, 3, 4, 4), t(2, 3, 3, 2), "cubic", align_corners=False), "mode"),
    "grid_sample padding_mode": (
        lambda F, t: F.grid_sample(t(2, 3, 4, 4), t(2, 3, 3, 2), padding_mode="wrap", align_corners=False),
        "padding_mode"),
    "grid_sample grid size": (lambda F, t: F.grid_sample(t(2, 3, 4, 4), t(2, 3, 3, 3), align_corners=False),
                              r"\(2, 3, 3, 3\)"),
    "grid_sample bicubic 5-D": (
        lambda F, t: F.grid_sample(t(2, 3, 4, 4, 4), t(2, 3, 3, 3, 3), "bicubic", align_corners=False),
        "bicubic"),
    "grid_sample grid rank": (
        lambda F, t: F.grid_sample(t(2, 3, 4, 4, 4), t(2, 3, 3, 2), align_corners=False),
        "same number of dimensions"),
    "grid_sample batch": (lambda F, t: F.grid_sample(t(2, 3, 4, 4), t(1, 3, 3, 2), align_corners=False),
                          "batch"),
    "grid_sample dtypes": (
        lambda F, t: F.grid_sample(t(2, 3, 4, 4), t(2, 3, 3, 2).double(), align_corners=False), "float64"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_bad_arguments_raise_pytorchs_exception_types(name):
    f, message = ERRORS[name]
    ours = _error(lambda: f(F, lambda *shape: tg.randn(*shape)))
    theirs = _error(lambda: f(torch_F, lambda *shape: torch.randn(*shape)))
    assert type(ours) is type(theirs), (ours, theirs)
    assert re.search(message, str(ours)), str(ours)


def test_bad_layer_input_raises_like_pytorch():
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected 5D input \(got 4D"):
        nn.BatchNorm3d(3)(tg.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match="InstanceNorm3d: expected 4D or 5D input"):
        nn.InstanceNorm3d(3)(tg.randn(3, 4, 4))
    with pytest.raises(ValueError, match="ConvTranspose3d"):
        nn.ConvTranspose3d(2, 2, 3, padding_mode="reflect")


def test_align_corners_none_warns_as_pytorch():
    theta = tg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    with pytest.warns(UserWarning, match="align_corners=False"):
        grid = F.affine_grid(theta, (1, 1, 2, 2))
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.grid_sample(tg.ones(1, 1, 2, 2), grid)
