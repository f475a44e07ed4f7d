"""PyTorch answers found by running PyTorch's own op samples through tensorgrad: the reflected
matmul's gradient, addbmm's integer dtype."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("left_shape, right_shape", [
    ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)), ((2, 3, 4), (4, 5)), ((4,), (4,)),
])
def test_reflected_matmul_sends_gradient_to_both_operands(left_shape, right_shape):
    rng = np.random.default_rng(0)
    left, right = rng.standard_normal(left_shape), rng.standard_normal(right_shape)
    weight = None
    grads = {}
    for lib, make in (("torch", torch.tensor), ("tg", tg.tensor)):
        a, b = make(left, requires_grad=True), make(right, requires_grad=True)
        out = b.__rmatmul__(a)          # a @ b, spelled the way Python calls it for `array @ tensor`
        if weight is None:
            weight = rng.standard_normal(tuple(out.shape))
        (out * make(weight)).sum().backward()
        grads[lib] = (np.asarray(a.grad), np.asarray(b.grad))
    for ours, theirs in zip(grads["tg"], grads["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "int64"])
def test_addbmm_keeps_the_integer_dtype(dtype):
    rng = np.random.default_rng(1)
    batch1 = rng.integers(0, 4, (3, 2, 5)).astype(dtype)
    batch2 = rng.integers(0, 4, (3, 5, 4)).astype(dtype)
    base = rng.integers(0, 4, (2, 4)).astype(dtype)
    expected = torch.addbmm(torch.tensor(base), torch.tensor(batch1), torch.tensor(batch2), beta=2, alpha=3)
    out = tg.addbmm(tg.tensor(base), tg.tensor(batch1), tg.tensor(batch2), beta=2, alpha=3)
    assert str(out.dtype) == dtype == str(expected.dtype).replace("torch.", "")
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


@pytest.mark.parametrize("out_features, bias, kwargs", [
    ((), False, {}),
    ((), True, {"label_smoothing": 0.2, "reduction": "sum"}),
    ((2,), True, {"ignore_index": 1, "reduction": "none"}),
])
def test_linear_cross_entropy_loss_module_is_pytorchs(out_features, bias, kwargs):
    rng = np.random.default_rng(2)
    theirs = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=out_features, bias=bias, **kwargs).double()
    ours = tg.nn.LinearCrossEntropyLoss(4, 3, out_features=out_features, bias=bias, **kwargs).double()
    assert repr(ours) == repr(theirs).replace("torch.", "")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: tg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((5, 4))
    target = rng.integers(0, 3, (5, *out_features))
    expected = theirs(torch.tensor(x), torch.tensor(target))
    expected.sum().backward()
    got = ours(tg.tensor(x), tg.tensor(target))
    got.sum().backward()
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ours.linear.weight.grad), theirs.linear.weight.grad.numpy(),
                               rtol=1e-10)
    with pytest.raises(RuntimeError, match="expected weight shape"):
        tg.nn.LinearCrossEntropyLoss(4, 3, weight=tg.ones(2))
    with pytest.raises(RuntimeError, match="label_smoothing"):
        tg.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float32"])
@pytest.mark.parametrize("shape, size", [((), ()), ((2, 3), (1, 3)), ((2, 3), (2, 3)), ((3,), (1,))])
def test_sum_to_size_dtype_is_pytorchs(dtype, shape, size):
    values = np.ones(shape, dtype=dtype)
    expected = torch.tensor(values).sum_to_size(size)
    out = tg.tensor(values).sum_to_size(size)
    assert str(out.dtype) == str(expected.dtype).replace("torch.", "")
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "float16", "bool", "complex64"])
@pytest.mark.parametrize("value", [-1, 300, 1e10, float("nan"), float("inf"), -1.5, 2**40, True, 2 + 0j,
                                   1 + 2j])
def test_fill_checks_the_value_fits_as_pytorch(dtype, value):
    def run(m):
        try:
            return m.zeros(2, dtype=getattr(m, dtype)).fill_(value)[0].item()
        except (RuntimeError, OverflowError) as error:
            return type(error)
    expected, got = run(torch), run(tg)
    if isinstance(expected, type):
        assert got is expected
    else:
        np.testing.assert_equal(got, expected)


@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_hinge_embedding_loss_at_infinity_is_pytorchs(reduction):
    x = np.array([-4.8, np.inf, 2.0, np.inf, -np.inf])
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    expected = torch.nn.functional.hinge_embedding_loss(torch.tensor(x), torch.tensor(y), reduction=reduction)
    out = tg.nn.functional.hinge_embedding_loss(tg.tensor(x), tg.tensor(y), reduction=reduction)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
