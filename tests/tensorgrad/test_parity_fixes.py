"""Small PyTorch answers that once differed: `alpha`'s dtype rules, silent edges of the elementwise
gradients (no numpy warning where PyTorch gives a value quietly), sinc's slope near 0."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("a, b, alpha", [
    ([1, 2], [3, 4], 1.5),       # integer tensors, float alpha: refused
    ([1, 2], 3, 0.5),            # an integer tensor and an int scalar: still integer
    ([1.0, 2.0], [3, 4], 1.5),   # a float result takes a float alpha
    ([1, 2], 2.0, 0.5),          # a float scalar makes the result float
    ([1, 2], [3, 4], 2),
])
def test_alpha_follows_pytorchs_dtype_rules(op, a, b, alpha):
    def run(m):
        b_ = m.tensor(b) if isinstance(b, list) else b
        return getattr(m, op)(m.tensor(a), b_, alpha=alpha)
    try:
        expected = run(torch)
    except RuntimeError:
        with pytest.raises(RuntimeError, match=f"{op}\\(\\): For integral input tensors, argument alpha"):
            run(tg)
        return
    out = run(tg)
    assert str(out.dtype) == str(expected.dtype).replace("torch.", "")
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


@pytest.mark.parametrize("op", ["log", "sqrt", "rsqrt", "reciprocal", "log2", "log10", "sinc"])
def test_gradients_at_the_domain_edge_come_quietly_as_pytorchs(op):
    points = [0.0, 1.0, float("inf"), -float("inf")]
    x = tg.tensor(points, dtype=tg.float64, requires_grad=True)
    reference = torch.tensor(points, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning fails the test
        out = getattr(x, op)()
        out.backward(tg.ones_like(out))
    theirs = getattr(reference, op)()
    theirs.backward(torch.ones_like(theirs))
    np.testing.assert_allclose(out.detach().numpy(), theirs.detach().numpy(), equal_nan=True)
    np.testing.assert_allclose(x.grad, reference.grad.numpy(), equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sinc_slope_near_zero_is_pytorchs_not_nan(dtype):
    """Where pi x^2 underflows, the slope formula is 0 / 0: PyTorch gives 0 there, not nan."""
    points = [0.0, 1e-30, -1e-30, 1e-20, 1e-9, 0.01, 0.3, -2.5]
    x = tg.tensor(points, dtype=getattr(tg, dtype), requires_grad=True)
    x.sinc().sum().backward()
    reference = torch.tensor(points, dtype=getattr(torch, dtype), requires_grad=True)
    reference.sinc().sum().backward()
    assert np.all(np.isfinite(x.grad))
    np.testing.assert_allclose(x.grad, reference.grad.numpy(), rtol=1e-5 if dtype == "float32" else 1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("name, call", [
    ("index_add_", lambda m, s, w: s.index_add_(0, m.tensor([0, 2]), w, alpha=2)),
    ("scatter_", lambda m, s, w: s.scatter_(0, m.tensor([[2, 0, 1], [0, 1, 2]]), w)),
    ("scatter_add_", lambda m, s, w: s.scatter_add_(0, m.tensor([[2, 0, 1], [0, 1, 2]]), w)),
    ("addcmul_", lambda m, s, w: s[:2].addcmul_(w, w, value=0.5)),
    ("addcdiv_", lambda m, s, w: s[:2].addcdiv_(w, w * w + 1, value=3)),
    ("addmm_", lambda m, s, w: s[:2].addmm_(w, m.ones(3, 3, dtype=m.float64), beta=2, alpha=0.5)),
])
def test_an_in_place_write_of_a_tensor_that_requires_grad_is_recorded(name, call):
    """Into a buffer that needs no gradient: the change still joins the graph, as in PyTorch."""
    values = np.arange(6.0).reshape(2, 3) / 4 + 0.5
    results = []
    for m in (tg, torch):
        buffer = m.zeros(3, 3, dtype=m.float64)
        w = m.tensor(values, requires_grad=True)
        call(m, buffer, w)
        assert buffer.requires_grad, name
        (buffer * m.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
        results.append((buffer.detach().numpy(), np.asarray(w.grad)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


@pytest.mark.parametrize("args, error", [((0, 3, 4), RuntimeError), ((0, 6, 0), IndexError),
                                         ((0, -6, 1), IndexError), ((0, 2, -1), RuntimeError)])
def test_narrow_raises_pytorchs_exception_types(args, error):
    with pytest.raises(error):
        torch.arange(5).narrow(*args)
    with pytest.raises(error, match="narrow"):
        tg.arange(5).narrow(*args)
    assert tg.arange(5).narrow(0, -2, 2).tolist() == [3, 4]


def test_upsample_prints_its_factor_as_pytorch():
    for factor in (2, (2, 3), 1.5):
        assert repr(tg.nn.Upsample(scale_factor=factor)) == repr(torch.nn.Upsample(scale_factor=factor))


@pytest.mark.parametrize("name, shape", [("dropout1d", (2, 3, 4)), ("dropout2d", (2, 3, 4, 4))])
def test_channel_dropout_takes_pytorchs_arguments_and_works_in_place(name, shape):
    import inspect

    ours = inspect.signature(getattr(tg.nn.functional, name))
    theirs = inspect.signature(getattr(torch.nn.functional, name))
    assert list(ours.parameters) == list(theirs.parameters)
    tg.manual_seed(0)
    x = tg.ones(*shape, requires_grad=True)
    y = x * 1
    out = getattr(tg.nn.functional, name)(y, 0.5, inplace=True)
    assert out is y
    kept = y.detach().numpy().reshape(shape[0] * shape[1], -1)
    assert set(np.unique(kept)) <= {0.0, 2.0} and all(len(set(row)) == 1 for row in kept)  # whole channels
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, y.detach().numpy())
    module = getattr(tg.nn, name.capitalize())(0.5, inplace=True)
    z = tg.ones(*shape) * 1
    assert module(z) is z


@pytest.mark.parametrize("x_shape, w_shape", [((2, 0), (3, 0)), ((2, 4), (0, 4)), ((0, 4), (3, 4)),
                                              ((2, 5, 0), (3, 0))])
def test_linear_with_an_empty_dimension_has_pytorchs_gradients(x_shape, w_shape):
    results = []
    for m in (tg, torch):
        x = m.ones(*x_shape, requires_grad=True)
        w = m.ones(*w_shape, requires_grad=True)
        b = m.ones(w_shape[0], requires_grad=True)
        out = m.nn.functional.linear(x, w, b)
        out.sum().backward()
        results.append([np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)
                        for t in (out, x.grad, w.grad, b.grad)])
    for ours, theirs in zip(*results, strict=True):
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)


def test_pairwise_distance_prints_as_pytorch():
    ours, theirs = tg.nn.PairwiseDistance(p=3.0), torch.nn.PairwiseDistance(p=3.0)
    assert repr(ours) == repr(theirs) == "PairwiseDistance()"


@pytest.mark.parametrize("values", [
    np.array([1 + 2j, -3.5 - 0.25j]),
    np.array(1 + 0j),
    np.array([1 + 2j], np.complex64),
    np.array([np.nan + 1j, np.inf - 2j]),
    np.arange(12).reshape(3, 4) * (1 + 1j),
    np.array([1e-5 + 1e5j]),
])
def test_complex_tensors_print_as_pytorchs(values):
    """PyTorch's layout: a format for the real parts and one for the imaginary parts."""
    assert repr(tg.tensor(values)) == repr(torch.tensor(values)).replace("torch.", "")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_number_divided_by_a_tensor_is_pytorchs_reciprocal_times_the_number(dtype):
    """PyTorch computes `c / x` as `x.reciprocal() * c`: the same bits (a true division rounds
    differently in a quarter of float32 values), the same gradient and grad_fn."""
    values = np.random.default_rng(5).uniform(-10, 10, 5000).astype(dtype)
    weights = np.random.default_rng(6).standard_normal(5000).astype(dtype)
    results = []
    for lib in (tg, torch):
        x = lib.tensor(values, requires_grad=True)
        out = 3.3 / x
        (out * lib.tensor(weights)).sum().backward()
        grad = x.grad.numpy() if hasattr(x.grad, "numpy") else x.grad
        results.append((out.detach().numpy(), np.asarray(grad), out.grad_fn.name()))
    (out, grad, name), (their_out, their_grad, their_name) = results
    assert name == their_name == "MulBackward0"
    np.testing.assert_array_equal(out, their_out)
    np.testing.assert_array_equal(grad, their_grad)
    assert (1 / tg.tensor([2, 4])).tolist() == [0.5, 0.25]  # an integer tensor: float32, as there
