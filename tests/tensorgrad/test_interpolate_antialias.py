"""F.interpolate's antialiased bilinear / bicubic, its uint8 kernels and 'area' to size 0, against PyTorch.

Antialias widens the filter by the scale when shrinking (PIL's resampling); uint8 images are
resampled with integer weights, rounded and saturated as PyTorch's CPU kernel does, so they must
agree exactly.
"""

import itertools

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

SIZES = [dict(size=(2, 3)), dict(size=(1, 1)), dict(size=(11, 4)), dict(size=(7, 13)),
         dict(scale_factor=0.3), dict(scale_factor=(0.45, 1.7)), dict(scale_factor=1.2),
         dict(scale_factor=0.6, recompute_scale_factor=True)]


def _both(array, **kw):
    ours = tg.nn.functional.interpolate(tg.tensor(array), **kw)
    theirs = torch.nn.functional.interpolate(torch.tensor(array), **kw)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    return ours.data, theirs.numpy()


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_antialias_values(mode, dtype):
    rng = np.random.default_rng(0)
    tol = 2e-6 if dtype == np.float32 else 1e-12
    for (h, w), kw, corners in itertools.product([(9, 7), (5, 4), (16, 13)], SIZES, (False, True)):
        x = rng.standard_normal((2, 2, h, w)).astype(dtype)
        ours, theirs = _both(x, mode=mode, antialias=True, align_corners=corners, **kw)
        assert ours.shape == theirs.shape, (h, w, kw, corners)
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol, err_msg=f"{h, w, kw, corners}")


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("kw", [dict(size=(3, 2)), dict(size=(8, 3), align_corners=True),
                                dict(scale_factor=(0.4, 1.6))])
def test_antialias_gradient(mode, kw):
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 5))
    ours, theirs = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = tg.nn.functional.interpolate(ours, mode=mode, antialias=True, **kw)
    ref = torch.nn.functional.interpolate(theirs, mode=mode, antialias=True, **kw)
    weight = np.cos(np.arange(ref.numel())).reshape(ref.shape)
    (out * tg.tensor(weight)).sum().backward()
    (ref * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_antialias_double_backward():
    x = tg.tensor(np.random.default_rng(2).standard_normal((1, 2, 6, 5)), requires_grad=True)
    assert tg.gradgradcheck(lambda t: tg.nn.functional.interpolate(t, size=(3, 2), mode="bicubic",
                                                                   antialias=True), [x])


@pytest.mark.parametrize("mode, aa", [("bilinear", False), ("bilinear", True), ("bicubic", False),
                                      ("bicubic", True), ("nearest", False), ("nearest-exact", False)])
def test_uint8_exact(mode, aa):
    rng = np.random.default_rng(3)
    corners = (False, True) if mode in ("bilinear", "bicubic") else (None,)
    for (c, h, w), kw, corner in itertools.product([(3, 9, 7), (5, 16, 13), (1, 40, 40)], SIZES[2:], corners):
        x = rng.integers(0, 256, (2, c, h, w)).astype(np.uint8)
        if h == 40:  # black and white: overshoots to saturate
            x = np.where(x < 128, 0, 255).astype(np.uint8)
        ours, theirs = _both(x, mode=mode, antialias=aa, align_corners=corner, **kw)
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{c, h, w, kw, corner}")


@pytest.mark.parametrize("call, error", [
    (lambda F, x: F.interpolate(x, scale_factor=0.5, antialias=True), ValueError),
    (lambda F, x: F.interpolate(x, size=2, mode="area", antialias=True), ValueError),
    (lambda F, x: F.interpolate(x[0], size=2, mode="bilinear", antialias=True), ValueError),
    (lambda F, x: F.interpolate(x.half(), size=2, mode="bilinear", antialias=True), NotImplementedError),
    (lambda F, x: F.interpolate(x.long(), size=2, mode="bicubic", antialias=True), NotImplementedError),
    (lambda F, x: F.interpolate(x.long(), size=2, mode="bilinear"), NotImplementedError),
    (lambda F, x: F.interpolate(x.byte(), size=2, mode="area"), NotImplementedError),
])
def test_errors(call, error):
    x = np.random.default_rng(4).standard_normal((2, 3, 6, 5))
    with pytest.raises(error):
        call(torch.nn.functional, torch.tensor(x))
    with pytest.raises(error):
        call(tg.nn.functional, tg.tensor(x))


@pytest.mark.parametrize("size, shape", [(0, (2, 3, 5)), ((2, 0), (2, 3, 4, 5)), (0, (1, 2, 3, 4, 5))])
def test_area_to_size_zero(size, shape):
    ours, theirs = _both(np.ones(shape), size=size, mode="area")
    assert ours.shape == theirs.shape
