"""Memory formats: tg.channels_last / tg.channels_last_3d against PyTorch (strides, errors, and
the layout the common CNN ops give a channels-last input)."""

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812

torch = pytest.importorskip("torch")

SHAPES = [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 3, 4, 5), (2, 3, 1, 5), (1, 1, 1, 1), (3, 2, 1, 4)]
FORMATS = [("channels_last", 4), ("channels_last_3d", 5)]


def _shape(shape, rank):
    return shape if rank == 4 else (*shape, 2)


def _pair(shape, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return tg.tensor(values), torch.tensor(values)


@pytest.mark.parametrize("name,rank", FORMATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_strides_match_torch(shape, name, rank):
    shape = _shape(shape, rank)
    fmt, tfmt = getattr(tg, name), getattr(torch, name)
    x, tx = _pair(shape)
    assert tg.empty(shape, memory_format=fmt).stride() == torch.empty(shape, memory_format=tfmt).stride()
    assert x.is_contiguous(memory_format=fmt) == tx.is_contiguous(memory_format=tfmt)
    y, ty = x.contiguous(memory_format=fmt), tx.contiguous(memory_format=tfmt)
    assert y.stride() == ty.stride() and (y is x) == (ty is tx)
    assert y.is_contiguous() == ty.is_contiguous()
    assert y.is_contiguous(memory_format=fmt) and ty.is_contiguous(memory_format=tfmt)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    z, tz = x.to(memory_format=fmt), tx.to(memory_format=tfmt)
    assert z.stride() == tz.stride() and (z is x) == (tz is tx)
    assert (y.to(memory_format=fmt) is y) == (ty.to(memory_format=tfmt) is ty)
    assert x.clone(memory_format=fmt).stride() == tx.clone(memory_format=tfmt).stride()
    assert y.clone().stride() == ty.clone().stride()
    assert y.contiguous().stride() == ty.contiguous().stride()
    contiguous = y.to(memory_format=tg.contiguous_format)
    assert contiguous.stride() == ty.to(memory_format=torch.contiguous_format).stride()
    assert x.double(memory_format=fmt).stride() == tx.double(memory_format=tfmt).stride()
    assert x.float(memory_format=fmt).stride() == tx.float(memory_format=tfmt).stride()
    assert x.to(tg.float32, memory_format=fmt).stride() == tx.to(torch.float32, memory_format=tfmt).stride()
    for like in ("empty_like", "zeros_like", "ones_like", "rand_like", "randn_like"):
        ours, theirs = getattr(tg, like)(x, memory_format=fmt), getattr(torch, like)(tx, memory_format=tfmt)
        assert ours.stride() == theirs.stride(), like
        assert getattr(tg, like)(y).stride() == getattr(torch, like)(ty).stride(), like
    full = tg.full_like(x, 2.0, memory_format=fmt)
    assert full.stride() == torch.full_like(tx, 2.0, memory_format=tfmt).stride()
    integers = tg.randint_like(x, 5, memory_format=fmt)
    assert integers.stride() == torch.randint_like(tx, 5, memory_format=tfmt).stride()


def test_format_objects():
    assert repr(tg.channels_last) == "tensorgrad.channels_last"
    assert isinstance(tg.channels_last_3d, tg.memory_format)
    x = tg.randn(2, 3, 4, 5)
    assert not x.is_contiguous(memory_format=tg.channels_last)
    assert x.is_contiguous(memory_format=tg.contiguous_format)
    assert tg.randn(2, 3, 4).is_contiguous(memory_format=tg.channels_last) is False


@pytest.mark.parametrize("call", [
    lambda m, fmt: m.randn(2, 3, 4).contiguous(memory_format=fmt.channels_last),
    lambda m, fmt: m.randn(2, 3, 4).to(memory_format=fmt.channels_last),
    lambda m, fmt: m.randn(2, 3, 4).clone(memory_format=fmt.channels_last),
    lambda m, fmt: m.empty(2, 3, 4, memory_format=fmt.channels_last),
    lambda m, fmt: m.zeros_like(m.randn(2, 3, 4), memory_format=fmt.channels_last),
    lambda m, fmt: m.randn(2, 3, 4, 5).contiguous(memory_format=fmt.channels_last_3d),
    lambda m, fmt: m.randn(2, 3, 4, 5, 6).float(memory_format=fmt.channels_last),
    lambda m, fmt: m.empty(2, 3, memory_format=fmt.preserve_format),
])
def test_errors_as_torch(call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch)
    with pytest.raises(type(theirs.value)):
        call(tg, tg)


def test_bad_memory_format_type():
    with pytest.raises(TypeError):
        tg.randn(2, 3, 4, 5).contiguous(memory_format=3)
    with pytest.raises(TypeError):
        tg.nn.Conv2d(2, 3, 2).to(memory_format="channels_last")


def test_module_to_channels_last():
    torch.manual_seed(0)
    conv = tg.nn.Conv2d(2, 3, 2)
    tconv = torch.nn.Conv2d(2, 3, 2)
    weight = conv.weight
    conv.weight.grad = tg.ones(3, 2, 2, 2)
    assert conv.to(memory_format=tg.channels_last) is conv
    tconv.to(memory_format=torch.channels_last)
    assert conv.weight is weight
    assert conv.weight.stride() == tconv.weight.stride() == (8, 1, 4, 2)
    assert tuple(s // 4 for s in conv.weight.grad.strides) == (8, 1, 4, 2)
    assert conv.bias.stride() == (1,)
    conv.to(tg.float64, memory_format=tg.channels_last)
    assert conv.weight.dtype == tg.float64 and conv.weight.stride() == (8, 1, 4, 2)
    conv.to(memory_format=tg.contiguous_format)
    assert conv.weight.stride() == (8, 4, 2, 1)
    with pytest.raises(RuntimeError):
        torch.nn.Conv3d(2, 3, 2).to(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError):
        tg.nn.Conv3d(2, 3, 2).to(memory_format=tg.channels_last)


def _cnn_ops(lib):
    f = lib.nn.functional
    return {
        "conv2d": lambda x, w: f.conv2d(x, w, padding=1),
        "batch_norm": lambda x, w: f.batch_norm(x, None, None, training=True),
        "relu": lambda x, w: f.relu(x),
        "mul_add": lambda x, w: x * x + 1,
        "max_pool2d": lambda x, w: f.max_pool2d(x, 2),
        "avg_pool2d": lambda x, w: f.avg_pool2d(x, 2),
        "adaptive_avg_pool2d": lambda x, w: f.adaptive_avg_pool2d(x, (2, 3)),
        "adaptive_avg_pool2d_1": lambda x, w: f.adaptive_avg_pool2d(x, 1),
    }


@pytest.mark.parametrize("op", list(_cnn_ops(torch)))
@pytest.mark.parametrize("channels_last_weight", [False, True])
def test_cnn_ops_keep_channels_last(op, channels_last_weight):
    x, tx = _pair((2, 3, 6, 5))
    w, tw = _pair((4, 3, 3, 3), seed=1)
    if channels_last_weight:
        w, tw = w.contiguous(memory_format=tg.channels_last), tw.contiguous(memory_format=torch.channels_last)
    else:
        x, tx = x.contiguous(memory_format=tg.channels_last), tx.contiguous(memory_format=torch.channels_last)
    x.requires_grad_(), tx.requires_grad_(), w.requires_grad_(), tw.requires_grad_()
    out, tout = _cnn_ops(tg)[op](x, w), _cnn_ops(torch)[op](tx, tw)
    assert out.stride() == tout.stride()
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    grad = np.random.default_rng(2).standard_normal(tuple(tout.shape))
    out.backward(tg.tensor(grad))
    tout.backward(torch.tensor(grad))
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    if op == "conv2d":
        np.testing.assert_allclose(w.grad, tw.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_max_pool2d_indices_and_gradcheck_channels_last():
    x, tx = _pair((2, 3, 4, 4))
    x, tx = x.contiguous(memory_format=tg.channels_last), tx.contiguous(memory_format=torch.channels_last)
    out, index = F.max_pool2d(x, 2, return_indices=True)
    tout, tindex = torch.nn.functional.max_pool2d(tx, 2, return_indices=True)
    assert out.stride() == tout.stride() and index.stride() == tindex.stride()
    np.testing.assert_array_equal(index.numpy(), tindex.numpy())
    w = tg.randn(2, 3, 2, 2, dtype=tg.float64, requires_grad=True)
    x.requires_grad_()
    assert tg.autograd.gradcheck(lambda a, b: F.conv2d(a, b), (x, w))
    assert tg.autograd.gradcheck(lambda a: F.adaptive_avg_pool2d(a, (3, 2)), (x,))


def test_default_path_stays_row_major():
    x = tg.randn(2, 3, 6, 5)
    w = tg.randn(4, 3, 3, 3)
    for out in (F.conv2d(x, w), F.max_pool2d(x, 2), F.adaptive_avg_pool2d(x, 2), x.clone(), x.to(tg.float64)):
        assert out.is_contiguous()
    assert x.contiguous() is x and x.contiguous(memory_format=tg.contiguous_format) is x
