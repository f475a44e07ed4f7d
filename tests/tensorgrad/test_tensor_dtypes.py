"""Dtypes: float32 by default, float64 on request, float32 kept next to Python numbers.

Python floats make float32 tensors (PyTorch's default), numpy arrays keep their dtype, and a
float32 tensor stays float32 through every op of the table when mixed with Python scalars,
forward and gradient. Integer tensors can't require grad (a clear error), an integer tensor
with a Python float is float32, and comparisons give bool tensors that carry no gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_table import CASES, sample

import tensorgrad as tg


def test_python_floats_make_float32_and_ints_int64():
    assert tg.tensor([1.0, 2.0]).dtype == tg.float32
    assert tg.tensor(3.5).dtype == tg.float32
    assert tg.tensor([[1, 2]]).dtype == tg.int64
    assert tg.tensor([True, False]).dtype == tg.bool_
    for make in (tg.zeros(2), tg.ones(2, 3), tg.rand(2), tg.randn(2), tg.full((2,), 1.5), tg.eye(2),
                 tg.arange(0.0, 1.0, 0.5)):
        assert make.dtype == tg.float32
    assert tg.arange(3).dtype == tg.int64
    assert tg.full((2,), 7).dtype == tg.int64


def test_float64_on_request_and_numpy_dtypes_kept():
    assert tg.tensor([1.0], dtype=tg.float64).dtype == tg.float64
    assert tg.zeros(2, dtype=tg.float64).dtype == tg.float64
    assert tg.randn(2, 2, dtype=tg.float64).dtype == tg.float64
    assert tg.tensor(np.ones(2)).dtype == tg.float64
    assert tg.tensor(np.ones(2, dtype=np.float32)).dtype == tg.float32
    assert tg.from_numpy(np.ones(2)).dtype == tg.float64
    x = tg.tensor([1.5, 2.5])
    assert x.double().dtype == tg.float64 and x.to(tg.float64).dtype == tg.float64
    assert x.double().float().dtype == tg.float32
    assert tg.zeros_like(tg.zeros(2, dtype=tg.float64)).dtype == tg.float64


CONTIGUOUS = [pytest.param(case, id=case.name) for case in CASES if "to(float64)" not in case.name]


@pytest.mark.parametrize("case", CONTIGUOUS)
def test_float32_stays_float32_with_python_scalars_forward_and_grad(case):
    rng = np.random.default_rng(0)
    values = [sample(rng, shape, case.domain(i)) for i, shape in enumerate(case.shapes)]
    single = [tg.tensor(v.astype(np.float32), requires_grad=True) for v in values]
    double = [tg.tensor(v, requires_grad=True) for v in values]
    out, out64 = case.fn(tg, *single), case.fn(tg, *double)
    assert out.dtype == tg.float32
    np.testing.assert_allclose(out.data, out64.data, rtol=2e-4, atol=2e-5)
    weights = rng.standard_normal(out.shape)
    out.backward(weights.astype(np.float32))
    out64.backward(weights)
    for a, b in zip(single, double):
        assert a.grad.dtype == np.float32
        np.testing.assert_allclose(a.grad, b.grad, rtol=2e-3, atol=2e-4)


def test_cast_to_float64_sends_a_float32_gradient_back():
    x = tg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.to(tg.float64)
    assert y.dtype == tg.float64 and y.requires_grad
    (y * y).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, [2.0, -4.0, 6.0])


def test_cast_to_integer_cuts_the_graph():
    x = tg.tensor([1.7, 2.2], requires_grad=True)
    n = x.long()
    assert n.dtype == tg.int64 and not n.requires_grad
    np.testing.assert_array_equal(n.data, [1, 2])


def test_mixing_float32_and_float64_tensors_promotes_like_torch():
    a = tg.ones(2, requires_grad=True)
    b = tg.ones(2, dtype=tg.float64, requires_grad=True)
    out = a * b
    assert out.dtype == tg.float64
    out.sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64


@pytest.mark.parametrize("make", [
    lambda: tg.tensor([1, 2], requires_grad=True),
    lambda: tg.tensor([1, 2]).requires_grad_(),
    lambda: setattr(tg.tensor([1, 2]), "requires_grad", True),
    lambda: tg.arange(3, requires_grad=True),
    lambda: tg.tensor([True], requires_grad=True),
    lambda: tg.zeros(2, dtype=tg.int32, requires_grad=True),
], ids=["tensor", "requires_grad_", "setter", "arange", "bool", "zeros int32"])
def test_integer_tensors_cannot_require_grad(make):
    with pytest.raises(RuntimeError, match=r"floating point.*(int|bool)"):
        make()


def test_integer_tensor_with_python_float_is_float32():
    n = tg.tensor([1, 2, 3])
    for out in (n + 0.5, 0.5 + n, n * 1.5, n - 0.5, 1.5 / n, n / 2, n / n):
        assert out.dtype == tg.float32
    np.testing.assert_allclose((n + 0.5).data, [1.5, 2.5, 3.5])
    np.testing.assert_allclose((n / 2).data, [0.5, 1.0, 1.5])
    for out in (n + 1, n * 2, -n, n - n):
        assert out.dtype == tg.int64
    assert (tg.tensor([1, 2], dtype=tg.int32) + 1).dtype == tg.int32


def test_integer_tensor_with_python_float_matches_torch_dtype():
    torch = pytest.importorskip("torch")
    for expr in (lambda n: n + 0.5, lambda n: n / 2, lambda n: n * 2, lambda n: 2.5 * n):
        ours, theirs = expr(tg.tensor([1, 2])), expr(torch.tensor([1, 2]))
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_allclose(ours.data, theirs.numpy())


def test_integer_tensors_in_a_graph_get_no_gradient():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    counts = tg.tensor([1, 0, 2])
    out = x * counts
    assert out.dtype == tg.float32 and out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 0.0, 2.0])
    assert counts.grad is None


@pytest.mark.parametrize("compare", [
    lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b,
    lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a > 0.5, lambda a, b: 0.5 < a,  # noqa: SIM300 - the reflected form is the point
    lambda a, b: tg.lt(a, b), lambda a, b: tg.eq(a, 2.0),
], ids=["<", "<=", ">", ">=", "==", "!=", "> scalar", "scalar <", "tg.lt", "tg.eq"])
def test_comparisons_return_bool_tensors_without_grad(compare):
    a = tg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    b = tg.tensor([[2.0], [1.0]], requires_grad=True)
    out = compare(a, b)
    assert out.dtype == tg.bool_
    assert not out.requires_grad and out.is_leaf and out.grad_fn is None
    expected = compare(a.data, b.data)
    np.testing.assert_array_equal(out.data, expected)
    with pytest.raises(RuntimeError, match="does not require grad"):
        out.sum().backward()


def test_mask_from_a_comparison_routes_gradient_through_where_only():
    x = tg.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
    y = tg.where(x > 0, x * 3.0, x * 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [0.5, 3.0, 0.5, 3.0])
    assert x.grad.dtype == np.float32


CONVERSIONS = ["float", "double", "half", "long", "int", "short", "char", "byte", "bool"]


@pytest.mark.parametrize("method", CONVERSIONS)
def test_conversion_methods_match_torch(method):
    torch = pytest.importorskip("torch")
    values = [[1.7, -2.5, 0.0], [3.2, 0.5, -0.9]]  # truncation toward zero, and bool of nonzero
    ours = getattr(tg.tensor(values, dtype=tg.float64), method)()
    theirs = getattr(torch.tensor(values, dtype=torch.float64), method)()
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    same = tg.zeros(2, dtype=ours.dtype)
    assert getattr(same, method)() is same  # already that dtype: the tensor itself, as in PyTorch


def test_half_keeps_the_graph_and_integer_conversions_cut_it():
    x = tg.tensor([1.5, -2.0], dtype=tg.float64, requires_grad=True)
    (x.half() * 2).sum().backward()
    assert x.grad.dtype == np.float64 and x.grad.tolist() == [2.0, 2.0]
    for method in ("int", "short", "char", "byte", "bool"):
        assert not getattr(x, method)().requires_grad


def test_type_as_takes_the_other_tensors_dtype():
    labels, scores = tg.tensor([0, 2]), tg.tensor([0.5], dtype=tg.float64)
    assert labels.type_as(scores).dtype == tg.float64 and labels.type_as(scores).tolist() == [0.0, 2.0]
    assert scores.type_as(scores) is scores
    with pytest.raises(TypeError, match="type_as"):
        labels.type_as(tg.float64)


def test_new_tensors_take_this_ones_dtype_and_device_like_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = tg.zeros(1, dtype=tg.float64), torch.zeros(1, dtype=torch.float64)
    pairs = [
        (ours.new_zeros(2, 3), theirs.new_zeros(2, 3)),
        (ours.new_zeros((2, 3)), theirs.new_zeros((2, 3))),
        (ours.new_ones(2), theirs.new_ones(2)),
        (ours.new_full((2,), 7), theirs.new_full((2,), 7)),
        (ours.new_tensor([1, 2]), theirs.new_tensor([1, 2])),  # ints become this tensor's float64
        (ours.new_zeros(2, dtype=tg.int32), theirs.new_zeros(2, dtype=torch.int32)),
    ]
    for mine, torchs in pairs:
        assert str(mine.dtype) == str(torchs.dtype).removeprefix("torch.")
        assert mine.shape == tuple(torchs.shape)
        np.testing.assert_array_equal(mine.numpy(), torchs.numpy())
        assert mine.device == ours.device and not mine.requires_grad
    assert ours.new_empty(4).shape == (4,) and ours.new_empty(4).dtype == tg.float64
    assert ours.new_ones(2, requires_grad=True).requires_grad


def test_new_tensor_copies_and_detaches():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x.new_tensor(x)
    assert not y.requires_grad and y.is_leaf
    y.data[0] = 5.0
    assert x.tolist() == [1.0, 2.0]
