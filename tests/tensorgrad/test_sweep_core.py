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


@pytest.mark.parametrize("a, b", [(-8, 6), (5, 1), (2.5, 1), (3, 2.0), (True, True), (1 + 2j, 1)])
@pytest.mark.parametrize("op", ["add", "mul", "sub", "div"])
def test_two_numbers_make_a_0d_result_as_pytorch(op, a, b):
    try:
        expected = getattr(torch, op)(a, b)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            getattr(tg, op)(a, b)
        return
    out = getattr(tg, op)(a, b)
    assert out.shape == () and str(out.dtype) == str(expected.dtype).replace("torch.", "")
    assert out.item() == pytest.approx(expected.item())


@pytest.mark.parametrize("a, x", [(4988429.2, 4988429.2), (4988429.2, 4990000.0), (2e5, 2e5),
                                  (1e6, 1e6 + 1000), (50.0, 49.0)])
def test_incomplete_gamma_for_large_a_is_accurate(a, x):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    # P(a, a) -> 1/2 + 1/(3 sqrt(2 pi a)) (Temme): a check independent of any one implementation
    exact = float(mpmath.gammainc(a, 0, x, regularized=True)) if a < 1e6 else None
    a_, x_ = tg.tensor([a], dtype=tg.float64), tg.tensor([x], dtype=tg.float64)
    p, q = tg.igamma(a_, x_).item(), tg.igammac(a_, x_).item()
    theirs = torch.igamma(torch.tensor([a], dtype=torch.float64), torch.tensor([x], dtype=torch.float64))
    theirs = theirs.item()
    assert p + q == pytest.approx(1.0, abs=1e-15)
    assert p == pytest.approx(theirs, abs=1e-9)
    if exact is not None:
        assert p == pytest.approx(exact, abs=1e-14)
    if a == x:
        assert p == pytest.approx(0.5 + 1 / (3 * np.sqrt(2 * np.pi * a)), abs=1e-9)


@pytest.mark.parametrize("s, q", [(501.0, -4988429.2), (501.0, -1001.2), (501.0, -13437.7), (200.0, -77.77),
                                  (30.0, -10000.3), (3.0, -20.5)])
def test_hurwitz_zeta_far_below_zero_is_pytorchs_and_quick(s, q):
    ours = tg.special.zeta(tg.tensor([s], dtype=tg.float64), tg.tensor([q], dtype=tg.float64)).item()
    theirs = torch.special.zeta(torch.tensor([s], dtype=torch.float64),
                                torch.tensor([q], dtype=torch.float64))
    assert ours == pytest.approx(theirs.item(), rel=1e-12)


def test_threshold_value_must_fit_an_integer_dtype_as_pytorch():
    for m in (torch, tg):
        x = m.tensor([1, 200, 3], dtype=m.uint8)
        assert m.nn.functional.threshold(x, 2, -1).tolist() == [255, 200, 3]
        with pytest.raises(RuntimeError, match="without overflow"):
            m.nn.functional.threshold(x, 2, 300)


@pytest.mark.parametrize("method, dtype", [("cfloat", "complex64"), ("cdouble", "complex128")])
def test_complex_conversions_are_pytorchs(method, dtype):
    values = np.array([1.5, -2.0])
    theirs = torch.tensor(values, requires_grad=True)
    ours = tg.tensor(values, requires_grad=True)
    converted_theirs, converted = getattr(theirs, method)(), getattr(ours, method)()
    assert str(converted.dtype) == dtype == str(converted_theirs.dtype).replace("torch.", "")
    (converted_theirs * (1 - 2j)).real.sum().backward()
    (converted * (1 - 2j)).real.sum().backward()
    np.testing.assert_allclose(np.asarray(ours.grad), theirs.grad.numpy())
    assert converted.cfloat() is converted if dtype == "complex64" else converted.cdouble() is converted


@pytest.mark.parametrize("dims, shape", [(2, (0, 1, 9, 9)), (3, (0, 1, 4, 5, 4))])
def test_fractional_max_pool_of_an_empty_batch_is_empty(dims, shape):
    kernel = (2,) * dims
    for m in (torch, tg):
        pool = getattr(m.nn.functional, f"fractional_max_pool{dims}d")
        out, indices = pool(m.zeros(shape), kernel, output_size=2, return_indices=True)
        assert tuple(out.shape) == tuple(indices.shape) == (0, 1) + (2,) * dims


def test_gradgradcheck_takes_a_0d_complex_output():
    z = tg.tensor([1 + 2j, 3 - 1j], dtype=tg.complex128, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda z: (z * z).sum(), [z])
    w = tg.tensor(1 + 2j, dtype=tg.complex128, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda w: w * w * w, [w])
    # a wrong second derivative is caught: the first gradient's own gradient is off here
    assert not tg.autograd.gradgradcheck(_cube_with_wrong_second_derivative, [w], raise_exception=False)


def _cube_with_wrong_second_derivative(w):
    """w**3 whose first gradient is right but is recorded as 3 w**2 + a constant times w."""
    class Cube(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * (3 * x * x).conj() + grad * (x - x.detach()) * 5
    return Cube.apply(w)
