"""Convolution, pooling and resizing side by side with PyTorch: values, gradients, dtype rules and
the exception types of bad calls (cases that once differed, and a spread of the family)."""

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as tnn
import tensorgrad.nn.functional as TF

torch = pytest.importorskip("torch")
PF = torch.nn.functional

rng = np.random.default_rng(0)


def _r(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def _nan_windows(*shape):
    x = _r(*shape)
    x[_r(*shape) > 0.5] = np.nan
    return x


CASES = [
    ("conv2d groups stride pad", lambda F, x, w, b: F.conv2d(x, w, b, 2, 1, 1, 2),
     (_r(2, 4, 5, 4), _r(6, 2, 3, 2), _r(6))),
    ("conv1d same dilation", lambda F, x, w: F.conv1d(x, w, padding="same", dilation=2),
     (_r(2, 3, 7), _r(2, 3, 4))),
    ("conv3d unbatched", lambda F, x, w: F.conv3d(x, w, padding=1), (_r(3, 4, 3, 3), _r(2, 3, 2, 2, 2))),
    ("conv_transpose2d output_padding", lambda F, x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1, 2, 1),
     (_r(2, 4, 3, 4), _r(4, 3, 3, 2), _r(6))),
    ("conv2d int64", lambda F, x, w: F.conv2d(x, w), ((_r(1, 3, 4, 4) * 5).astype(np.int64),
                                                      (_r(2, 3, 2, 2) * 5).astype(np.int64))),
    ("conv1d int32", lambda F, x, w: F.conv1d(x, w, stride=2), ((_r(1, 3, 6) * 5).astype(np.int32),
                                                                (_r(2, 3, 2) * 5).astype(np.int32))),
    ("conv_transpose1d int64", lambda F, x, w: F.conv_transpose1d(x, w, stride=2),
     ((_r(1, 3, 4) * 5).astype(np.int64), (_r(3, 2, 2) * 5).astype(np.int64))),
    ("max_pool2d ceil dilation indices", lambda F, x: F.max_pool2d(x, 3, 2, 1, 2, True, True),
     (_r(2, 3, 7, 6),)),
    ("max_pool2d nan: last nan wins", lambda F, x: F.max_pool2d(x, 2, return_indices=True),
     (_nan_windows(1, 2, 6, 6),)),
    ("max_pool1d nan: last nan wins", lambda F, x: F.max_pool1d(x, 3, return_indices=True),
     (_nan_windows(1, 2, 9),)),
    ("max_pool3d -inf padded", lambda F, x: F.max_pool3d(x, 2, padding=1, return_indices=True),
     (np.full((1, 1, 3, 3, 3), -np.inf),)),
    ("max_pool2d int32", lambda F, x: F.max_pool2d(x, 2, padding=1, return_indices=True),
     ((_r(1, 2, 5, 5) * 9).astype(np.int32),)),
    ("avg_pool2d int64 truncates", lambda F, x: F.avg_pool2d(x, 3, 2, 1, True, False),
     ((_r(1, 2, 6, 7) * 9).astype(np.int64),)),
    ("avg_pool2d float16 sums in float32", lambda F, x: F.avg_pool2d(x, 3, 1),
     (_r(1, 4, 9, 9, dtype=np.float16),)),
    ("avg_pool3d divisor ceil", lambda F, x: F.avg_pool3d(x, 3, 2, 1, True, False, 5), (_r(2, 2, 5, 6, 5),)),
    ("adaptive_max_pool2d nan: last nan wins", lambda F, x: F.adaptive_max_pool2d(x, 2, True),
     (_nan_windows(1, 2, 7, 6),)),
    ("adaptive_max_pool1d empty batch", lambda F, x: F.adaptive_max_pool1d(x, 3, True), (_r(0, 3, 7),)),
    ("adaptive_avg_pool3d", lambda F, x: F.adaptive_avg_pool3d(x, (3, 2, 4)), (_r(2, 3, 7, 6, 5),)),
    ("lp_pool2d zero window: zero gradient", lambda F, x: F.lp_pool2d(x, 2, 2), (np.zeros((1, 2, 4, 4)),)),
    ("lp_pool1d", lambda F, x: F.lp_pool1d(x, 3, 3, 2, True), (np.abs(_r(2, 3, 8)) + 0.1,)),
    ("pad reflect 2 dims", lambda F, x: F.pad(x, (2, 1, -1, 3), mode="reflect"), (_r(2, 3, 5, 4),)),
    ("pad circular", lambda F, x: F.pad(x, (1, 2), mode="circular"), (_r(2, 3, 4),)),
    ("interpolate bicubic align_corners", lambda F, x: F.interpolate(x, size=(7, 3), mode="bicubic",
            align_corners=True),
     (_r(2, 3, 5, 4),)),
    ("interpolate trilinear scale", lambda F, x: F.interpolate(x, scale_factor=(1.7, 0.6, 2),
            mode="trilinear"),
     (_r(1, 2, 4, 5, 3),)),
    ("interpolate nearest-exact", lambda F, x: F.interpolate(x, scale_factor=1.7, mode="nearest-exact"),
     (_r(2, 3, 5),)),
    ("fold(unfold)", lambda F, x: F.fold(F.unfold(x, (2, 3), (1, 2), (1, 0), (2, 1)), (6, 7), (2, 3), (1, 2),
            (1, 0), (2, 1)),
     (_r(2, 3, 6, 7),)),
    ("grid_sample bicubic reflection", lambda F, x, g: F.grid_sample(x, g, "bicubic", "reflection", False),
     (_r(2, 3, 5, 4), _r(2, 3, 4, 2))),
]


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, fn, arrays):
    ours = [tg.tensor(a, requires_grad=a.dtype == np.float64) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=a.dtype == np.float64) for a in arrays]
    got, want = _outputs(fn(TF, *ours)), _outputs(fn(PF, *theirs))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype).replace("torch.", "")
        np.testing.assert_allclose(g.data.astype(np.float64), w.detach().numpy().astype(np.float64),
                                   rtol=1e-6, atol=1e-6)
    if not ours[0].requires_grad:
        return
    weights = np.arange(got[0].numel(), dtype=np.float64).reshape(tuple(got[0].shape)) % 7 + 1
    (got[0] * tg.tensor(weights)).sum().backward()
    (want[0] * torch.tensor(weights)).sum().backward()
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.grad, t.grad.numpy(), rtol=1e-6, atol=1e-6)


ERRORS = [
    ("conv2d zero out channels", lambda F, nn, x, w: F.conv2d(x, w), (_r(1, 3, 4, 4), _r(0, 3, 2, 2))),
    ("conv2d bool", lambda F, nn, x, w: F.conv2d(x, w), (_r(1, 3, 4, 4) > 0, _r(2, 3, 2, 2) > 0)),
    ("conv2d int and float", lambda F, nn, x, w: F.conv2d(x, w),
     (_r(1, 3, 4, 4).astype(np.int64), _r(2, 3, 2, 2))),
    ("conv_transpose2d int32", lambda F, nn, x, w: F.conv_transpose2d(x, w),
     (_r(1, 3, 4, 4).astype(np.int32), _r(3, 2, 2, 2).astype(np.int32))),
    ("conv2d wrong in_channels", lambda F, nn, x, w: F.conv2d(x, w), (_r(1, 4, 5, 5), _r(2, 3, 2, 2))),
    ("conv2d groups", lambda F, nn, x, w: F.conv2d(x, w, groups=2), (_r(1, 3, 4, 4), _r(2, 1, 2, 2))),
    ("conv2d kernel too big", lambda F, nn, x, w: F.conv2d(x, w), (_r(1, 3, 2, 2), _r(2, 3, 3, 3))),
    ("max_pool1d int64", lambda F, nn, x: F.max_pool1d(x, 2), (_r(1, 2, 6).astype(np.int64),)),
    ("max_pool2d bool", lambda F, nn, x: F.max_pool2d(x, 2), (_r(1, 2, 6, 6) > 0,)),
    ("max_pool2d no channels", lambda F, nn, x: F.max_pool2d(x, 2), (_r(2, 0, 6, 6),)),
    ("max_pool2d pad > kernel/2", lambda F, nn, x: F.max_pool2d(x, 2, padding=2), (_r(1, 2, 6, 6),)),
    ("avg_pool2d int32", lambda F, nn, x: F.avg_pool2d(x, 2), (_r(1, 2, 6, 6).astype(np.int32),)),
    ("adaptive_avg_pool2d int64", lambda F, nn, x: F.adaptive_avg_pool2d(x, 2),
     (_r(1, 2, 6, 6).astype(np.int64),)),
    ("adaptive_max_pool2d int64", lambda F, nn, x: F.adaptive_max_pool2d(x, 2),
     (_r(1, 2, 6, 6).astype(np.int64),)),
    ("adaptive_avg_pool2d None", lambda F, nn, x: F.adaptive_avg_pool2d(x, None), (_r(1, 2, 6, 6),)),
    ("adaptive_max_pool2d 4 sizes", lambda F, nn, x: F.adaptive_max_pool2d(x, (2, 2, 2, 2)),
     (_r(1, 2, 6, 6),)),
    ("adaptive_avg_pool1d 2 sizes", lambda F, nn, x: F.adaptive_avg_pool1d(x, (2, 2)), (_r(1, 2, 6),)),
    ("interpolate size 0", lambda F, nn, x: F.interpolate(x, size=0, mode="linear"), (_r(1, 2, 6),)),
    ("interpolate int64", lambda F, nn, x: F.interpolate(x, size=3), (_r(1, 2, 6).astype(np.int64),)),
    ("interpolate both", lambda F, nn, x: F.interpolate(x, size=3, scale_factor=2), (_r(1, 2, 6),)),
    ("pixel_shuffle 0", lambda F, nn, x: F.pixel_shuffle(x, 0), (_r(1, 4, 2, 2),)),
    ("pad reflect too large", lambda F, nn, x: F.pad(x, (4, 0), mode="reflect"), (_r(1, 2, 4),)),
    ("ConvTranspose2d output_size of 5", lambda F, nn, x: nn.ConvTranspose2d(3, 2, 3, stride=2).double()(
        x, output_size=[2, 3, 8, 8, 8]), (_r(2, 3, 3, 3),)),
]


@pytest.mark.parametrize("name, fn, arrays", ERRORS, ids=[c[0] for c in ERRORS])
def test_raises_like_torch(name, fn, arrays):
    with pytest.raises(Exception) as theirs:
        fn(PF, torch.nn, *(torch.tensor(a) for a in arrays))
    with pytest.raises(type(theirs.value)):
        fn(TF, tnn, *(tg.tensor(a) for a in arrays))
