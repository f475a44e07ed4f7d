"""Shape logic, property-tested with Hypothesis: broadcasting, reductions, matmul, round trips.

For random broadcastable shapes, every binary op's result has `np.broadcast_shapes`'s shape
and each input's gradient has that input's shape and the values of an independent reference
(a scatter-add over the broadcast index map, not `unbroadcast`). Shapes that don't broadcast
raise a `ValueError` naming the op and both shapes. `reshape` and `permute` round trips give
back the same tensor, and their gradients are the inverse movement.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import tensorgrad as tg

SETTINGS = settings(max_examples=60, deadline=None)
BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a ** b,
    "maximum": tg.maximum,
    "minimum": tg.minimum,
}
# d(op)/da and d(op)/db as numpy, on broadcast operands: the reference for the gradients.
PARTIALS = {
    "+": (lambda a, b: np.ones_like(a * b), lambda a, b: np.ones_like(a * b)),
    "-": (lambda a, b: np.ones_like(a * b), lambda a, b: -np.ones_like(a * b)),
    "*": (lambda a, b: b + 0 * a, lambda a, b: a + 0 * b),
    "/": (lambda a, b: 1 / b + 0 * a, lambda a, b: -a / b**2),
    "**": (lambda a, b: b * a ** (b - 1), lambda a, b: np.log(a) * a**b),
    "maximum": (lambda a, b: (a > b) * 1.0, lambda a, b: (b > a) * 1.0),
    "minimum": (lambda a, b: (a < b) * 1.0, lambda a, b: (b < a) * 1.0),
}


def scatter_to(shape: tuple[int, ...], out_shape: tuple[int, ...], values: np.ndarray) -> np.ndarray:
    """Sum `values` (of out_shape) into the elements of an input of `shape` they were broadcast from."""
    source = np.broadcast_to(np.arange(int(np.prod(shape))).reshape(shape), out_shape)
    return np.bincount(source.ravel(), weights=values.ravel(), minlength=int(np.prod(shape))).reshape(shape)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
       op=st.sampled_from(sorted(BINARY)), seed=st.integers(0, 2**16))
def test_binary_ops_broadcast_like_numpy_and_gradients_come_back_to_each_shape(shapes, op, seed):
    (shape_a, shape_b), out_shape = shapes
    rng = np.random.default_rng(seed)
    a_data = rng.uniform(0.5, 2.0, shape_a)  # positive: a valid base for **
    b_data = rng.uniform(-1.5, 1.5, shape_b) + 0.01  # ties of maximum/minimum have probability 0
    a = tg.tensor(a_data, requires_grad=True)
    b = tg.tensor(b_data, requires_grad=True)
    out = BINARY[op](a, b)
    assert out.shape == np.broadcast_shapes(shape_a, shape_b) == out_shape
    weights = rng.standard_normal(out_shape)
    out.backward(weights)
    assert a.grad.shape == shape_a and b.grad.shape == shape_b
    a_wide, b_wide = np.broadcast_to(a_data, out_shape), np.broadcast_to(b_data, out_shape)
    da, db = PARTIALS[op]
    expected_a = scatter_to(shape_a, out_shape, weights * da(a_wide, b_wide))
    expected_b = scatter_to(shape_b, out_shape, weights * db(a_wide, b_wide))
    np.testing.assert_allclose(a.grad, expected_a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad, expected_b, rtol=1e-10, atol=1e-12)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=4, max_side=3),
       data=st.data())
def test_unbroadcast_sums_back_to_the_input_shape(shapes, data):
    (shape, _), out_shape = shapes
    grad = np.random.default_rng(0).standard_normal(out_shape)
    reduced = tg.unbroadcast(grad, shape)
    assert reduced.shape == shape
    np.testing.assert_allclose(reduced, scatter_to(shape, out_shape, grad), rtol=1e-12)


@st.composite
def non_broadcastable(draw):
    """Two shapes with one trailing-aligned dimension that differs and is not 1 in either."""
    shape = draw(st.lists(st.integers(2, 4), min_size=1, max_size=3))
    other = list(shape[draw(st.integers(0, len(shape) - 1)):])
    i = draw(st.integers(0, len(other) - 1))
    other[i] = other[i] + draw(st.integers(1, 3))
    return tuple(shape), tuple(other)


@SETTINGS
@given(shapes=non_broadcastable(), op=st.sampled_from(["+", "-", "*", "/", "maximum"]),
       swap=st.booleans())
def test_shapes_that_do_not_broadcast_raise_a_value_error_naming_op_and_shapes(shapes, op, swap):
    shape_a, shape_b = shapes[::-1] if swap else shapes
    a, b = tg.ones(shape_a, requires_grad=True), tg.ones(shape_b)
    with pytest.raises(ValueError) as info:
        BINARY[op](a, b)
    message = str(info.value)
    assert op in message and str(shape_a) in message and str(shape_b) in message


def _logsumexp(values, axis, keepdims):
    return np.log(np.exp(values).sum(axis=axis, keepdims=keepdims))


REDUCTIONS = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min, "logsumexp": _logsumexp}


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple),
       dims=st.lists(st.integers(-4, 3), max_size=3, unique=True), keepdim=st.booleans(),
       op=st.sampled_from(["sum", "mean", "amax", "amin", "logsumexp"]))
def test_reductions_give_numpy_shapes_and_input_shaped_gradients(shape, dims, keepdim, op):
    ndim = len(shape)
    dims = [d for d in dims if -ndim <= d < ndim]
    assume(len({d % ndim for d in dims}) == len(dims) if ndim else not dims)
    dim = tuple(dims) if dims else None
    axis = dim if dim is None else tuple(d % ndim for d in dim)
    values = np.random.default_rng(0).permutation(int(np.prod(shape))).reshape(shape).astype(float)
    x = tg.tensor(values, requires_grad=True)
    out = getattr(x, op)(dim=dim, keepdim=keepdim)
    expected = REDUCTIONS[op](values, axis=axis, keepdims=keepdim)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.data, expected, rtol=1e-12)
    out.backward(np.ones(out.shape))
    assert x.grad.shape == shape
    kept = REDUCTIONS[op](values, axis=axis, keepdims=True)
    count = values.size // kept.size  # elements per reduced group
    if op == "sum":
        np.testing.assert_array_equal(x.grad, np.ones(shape))
    elif op == "mean":
        np.testing.assert_allclose(x.grad, np.full(shape, 1 / count), rtol=1e-12)
    elif op in ("amax", "amin"):  # the values are distinct: all of it to the one winner
        np.testing.assert_array_equal(x.grad, (values == kept) * 1.0)
    else:  # logsumexp: softmax over each group
        np.testing.assert_allclose(x.grad, np.exp(values - kept), rtol=1e-12)


@st.composite
def matmul_shapes(draw):
    """Operands for matmul: vectors, matrices, or batches whose batch dimensions broadcast."""
    n, k, m = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    (batch_a, batch_b), _ = draw(mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    a = (k,) if draw(st.booleans()) else batch_a + (n, k)
    b = (k,) if draw(st.booleans()) else batch_b + (k, m)
    return a, b


@SETTINGS
@given(shapes=matmul_shapes())
def test_matmul_shapes_follow_numpy_and_gradients_have_input_shapes(shapes):
    shape_a, shape_b = shapes
    rng = np.random.default_rng(0)
    a_data, b_data = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    a, b = tg.tensor(a_data, requires_grad=True), tg.tensor(b_data, requires_grad=True)
    out = a @ b
    expected = np.matmul(a_data, b_data)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.data, expected, rtol=1e-12)
    out.backward(np.ones(out.shape))
    assert a.grad.shape == shape_a and b.grad.shape == shape_b
    # d sum(a @ b) / da[..., i, j] = sum of row j of b, summed over broadcast batches: check one way.
    np.testing.assert_allclose((a.grad * a_data).sum(), expected.sum(), rtol=1e-10)
    np.testing.assert_allclose((b.grad * b_data).sum(), expected.sum(), rtol=1e-10)


@st.composite
def reshapes(draw):
    """A shape and another shape with the same number of elements (one size possibly -1)."""
    sizes = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=5))
    shape = tuple(sizes)
    other = list(draw(st.permutations(sizes)))
    # Merge a random run of neighbours, so the number of dimensions changes too.
    if len(other) > 1 and draw(st.booleans()):
        i = draw(st.integers(0, len(other) - 2))
        other[i:i + 2] = [other[i] * other[i + 1]]
    if draw(st.booleans()):
        other[draw(st.integers(0, len(other) - 1))] = -1
    return shape, tuple(other)


@SETTINGS
@given(shapes=reshapes())
def test_reshape_round_trip(shapes):
    shape, other = shapes
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = tg.tensor(values, requires_grad=True)
    y = x.reshape(other)
    assert y.shape == values.reshape(other).shape
    assert np.shares_memory(y.data, x.data)
    back = y.reshape(shape)
    np.testing.assert_array_equal(back.data, values)
    weights = np.arange(y.data.size, dtype=np.float64).reshape(y.shape) + 1
    (y * tg.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad, weights.reshape(shape))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), data=st.data())
def test_permute_round_trip(shape, data):
    dims = tuple(data.draw(st.permutations(range(len(shape)))))
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = tg.tensor(values, requires_grad=True)
    y = x.permute(*dims)
    np.testing.assert_array_equal(y.data, values.transpose(dims))
    assert np.shares_memory(y.data, x.data)
    inverse = tuple(np.argsort(dims))
    np.testing.assert_array_equal(y.permute(inverse).data, values)
    weights = np.random.default_rng(0).standard_normal(y.shape)
    (y * tg.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad, weights.transpose(inverse))
