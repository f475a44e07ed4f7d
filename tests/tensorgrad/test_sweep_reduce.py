"""PyTorch answers found by running PyTorch's own op samples through tensorgrad, for reductions,
elementwise and special functions: cov's weights, diff with n=0, float16 norms, gradient's
defaults, histc's and histogramdd's bin rules, complex lerp, logsumexp and renorm, quantile's
gradient in q, clamp on bool tensors, searchsorted's edge cases, float_power_ on complex
tensors and the accuracy of the Bessel functions."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _tg(t: torch.Tensor, requires_grad: bool = False) -> tg.Tensor:
    return tg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _same(ours: tg.Tensor, theirs: torch.Tensor, **tolerance: float) -> None:
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), equal_nan=True, **tolerance)


# --- cov: the weights keep their dtype --------------------------------------------------------


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128, torch.float32])
@pytest.mark.parametrize("weights", ["a32", "a64", "f", "fa"])
def test_cov_with_weights_matches_pytorch(correction, dtype, weights):
    gen = torch.Generator().manual_seed(correction)
    x = torch.randn(2, 3, dtype=dtype, generator=gen)
    a = torch.rand(3, generator=gen) + 0.1
    kw = {"a32": {"aweights": a}, "a64": {"aweights": a.double()}, "f": {"fweights": torch.tensor([1, 3, 2])},
          "fa": {"aweights": a, "fweights": torch.tensor([2, 1, 2])}}
    expected = torch.cov(x, correction=correction, **kw[weights])
    out = tg.cov(_tg(x), correction=correction, **{k: _tg(v) for k, v in kw[weights].items()})
    _same(out, expected, rtol=1e-6 if dtype == torch.float32 else 1e-13, atol=1e-15)


def test_cov_gradient_to_float32_aweights_matches_pytorch():
    """(float32 weights: their sums round in float32, in both libraries, each its own way)"""
    for seed in range(10):
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(3, 5, dtype=torch.float64, generator=gen, requires_grad=True)
        a = (torch.rand(5, generator=gen) + 0.1).requires_grad_()
        torch.cov(x, aweights=a, correction=2).sum().backward()
        ours_x, ours_a = _tg(x, True), _tg(a, True)
        tg.cov(ours_x, aweights=ours_a, correction=2).sum().backward()
        for ours, theirs in ((ours_x.grad, x.grad), (ours_a.grad, a.grad)):
            scale = float(theirs.abs().max())
            np.testing.assert_allclose(np.asarray(ours), theirs.numpy(), rtol=1e-5, atol=1e-5 * scale)


# --- diff and gradient ------------------------------------------------------------------------


def test_diff_of_order_zero_is_a_copy_of_the_input_alone():
    x = torch.randn(5, 5, dtype=torch.float64, requires_grad=True)
    before, after = torch.randn(1, 5, dtype=torch.float64), torch.randn(2, 5, dtype=torch.float64)
    expected = torch.diff(x, 0, 0, before, after)
    ours_x = _tg(x, True)
    out = tg.diff(ours_x, 0, 0, _tg(before), _tg(after))
    _same(out, expected)
    out.sum().backward()
    np.testing.assert_array_equal(np.asarray(ours_x.grad), np.ones((5, 5)))
    out.data[0, 0] = 100.0  # a copy: the input is untouched
    assert ours_x.data[0, 0] != 100.0
    _same(tg.diff(_tg(x), 0, 1, append=_tg(torch.randn(5, 3, dtype=torch.float64))), x)
    with pytest.raises(RuntimeError):  # prepend's shape is still checked, as PyTorch
        torch.diff(x, 0, 0, torch.randn(1, 4, dtype=torch.float64))
    with pytest.raises(RuntimeError):
        tg.diff(_tg(x), 0, 0, _tg(torch.randn(1, 4, dtype=torch.float64)))


def test_diff_of_order_one_still_uses_prepend_and_append():
    x = torch.randn(3, 4, dtype=torch.float64)
    before, after = torch.randn(3, 1, dtype=torch.float64), torch.randn(3, 2, dtype=torch.float64)
    _same(tg.diff(_tg(x), 1, 1, _tg(before), _tg(after)), torch.diff(x, 1, 1, before, after))


def test_gradient_takes_explicit_nones_as_the_defaults():
    x = torch.randn(5, 4, dtype=torch.float64)
    expected = torch.gradient(x, spacing=None, dim=None, edge_order=1)
    out = tg.gradient(_tg(x), spacing=None, dim=None, edge_order=1)
    assert len(out) == len(expected) == 2
    for ours, theirs in zip(out, expected, strict=True):
        _same(ours, theirs, rtol=1e-14)
    _same(tg.gradient(_tg(x), spacing=None, dim=1)[0], torch.gradient(x, spacing=None, dim=1)[0])


# --- norms of float16 tensors accumulate in float32 -------------------------------------------


@pytest.mark.parametrize("p", [4, 6, 3.5, 2, 1, 0])
def test_float16_norms_do_not_overflow(p):
    gen = torch.Generator().manual_seed(3)
    x = (torch.randn(5, 5, 5, generator=gen) * 4).half()
    y = (torch.randn(5, 5, 5, generator=gen) * 4).half()
    _same(tg.dist(_tg(x), _tg(y), p), torch.dist(x, y, p), rtol=1e-3)
    _same(tg.linalg.vector_norm(_tg(x), p), torch.linalg.vector_norm(x, p), rtol=1e-3)
    _same(tg.norm(_tg(x), p, dim=1), torch.norm(x, p, dim=1), rtol=1e-3)
    assert np.isfinite(tg.linalg.vector_norm(_tg(x), p).numpy())


# --- histc and histogramdd: PyTorch's bin rules -----------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("bins, low, high", [(100, -10, 10), (7, 0, 0), (10, -3.3, 2.7), (3, 1, 1),
                                             (1, 0, 10)])
def test_histc_bins_as_pytorch(dtype, bins, low, high):
    gen = torch.Generator().manual_seed(bins)
    for _ in range(5):
        x = (torch.randn(5, 5, 5, generator=gen) * 6).to(dtype)
        _same(tg.histc(_tg(x), bins, low, high), torch.histc(x, bins, low, high))


@pytest.mark.parametrize("sorted_edges", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("density", [True, False])
def test_histogramdd_with_edge_tensors_as_pytorch(sorted_edges, weighted, density):
    """Edges out of order too (PyTorch's samples draw them at random): PyTorch bins by a binary
    search over them as they are and keeps the points between the first and the last edge."""
    gen = torch.Generator().manual_seed(int(sorted_edges) + 2 * int(weighted) + 4 * int(density))
    for _ in range(20):
        x = torch.randn(30, 3, generator=gen) * 3
        counts = torch.randint(1, 6, (3,), generator=gen).tolist()
        edges = [torch.randn(c + 1, generator=gen) * 3 for c in counts]
        if sorted_edges:
            edges = [e.sort().values for e in edges]
        weight = torch.rand(30, generator=gen) if weighted else None
        expected = torch.histogramdd(x, edges, weight=weight, density=density)
        out = tg.histogramdd(_tg(x), [_tg(e) for e in edges], weight=None if weight is None else _tg(weight),
                             density=density)
        _same(out.hist, expected.hist, rtol=1e-5)
        for ours, theirs in zip(out.bin_edges, expected.bin_edges, strict=True):
            _same(ours, theirs)


def test_histogramdd_with_bin_counts_still_matches():
    x = torch.randn(5, 5, 5)
    for bins in ([2, 3, 2, 3, 2], [1, 1, 1, 1, 1], 3):
        expected = torch.histogramdd(x, bins)
        out = tg.histogramdd(_tg(x), bins)
        _same(out.hist, expected.hist)


# --- complex lerp, logsumexp and renorm -------------------------------------------------------


def test_complex_lerp_values_and_gradients():
    gen = torch.Generator().manual_seed(4)
    start, end, weight = (torch.randn(3, 4, dtype=torch.complex128, generator=gen).requires_grad_()
                          for _ in range(3))
    expected = torch.lerp(start, end, weight)
    expected.abs().sum().backward()
    ours = [_tg(t, True) for t in (start, end, weight)]
    out = tg.lerp(*ours)
    _same(out, expected, rtol=1e-14)
    out.abs().sum().backward()
    for a, b in zip(ours, (start, end, weight), strict=True):
        np.testing.assert_allclose(np.asarray(a.grad), b.grad.numpy(), rtol=1e-12)
    for w in (0.3, 0.7 + 0.2j):
        _same(tg.lerp(ours[0], ours[1], w), torch.lerp(start, end, w), rtol=1e-14)
    assert tg.gradcheck(lambda s, e, w: tg.lerp(s, e, w), ours)
    with pytest.raises(RuntimeError):  # a real weight tensor for complex ends: PyTorch refuses it
        tg.lerp(ours[0], ours[1], tg.rand(3, 4).double())


@pytest.mark.parametrize("scale", [1.0, 1e3, 1e6])
@pytest.mark.parametrize("dim, keepdim", [(0, True), (1, True), (-2, False), ((0, 1), False)])
def test_complex_logsumexp_is_the_principal_log(scale, dim, keepdim):
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(5, 5, dtype=torch.complex128, generator=gen) * scale
    expected = torch.logsumexp(x, dim, keepdim)
    out = tg.logsumexp(_tg(x), dim, keepdim)
    _same(out, expected, rtol=1e-12, atol=1e-12 * scale)
    assert np.all(np.abs(out.numpy().imag) <= np.pi)


def test_complex_logsumexp_gradient():
    x = torch.randn(3, 4, dtype=torch.complex128, requires_grad=True)
    torch.logsumexp(x, 1).abs().sum().backward()
    ours = _tg(x, True)
    tg.logsumexp(ours, 1).abs().sum().backward()
    np.testing.assert_allclose(np.asarray(ours.grad), x.grad.numpy(), rtol=1e-12)


def test_real_logsumexp_unchanged_at_infinities():
    x = torch.tensor([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, 1.0]], dtype=torch.float64)
    _same(tg.logsumexp(_tg(x), 1), torch.logsumexp(x, 1))


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64, torch.float64])
@pytest.mark.parametrize("p, dim", [(2, 1), (1, 0), (3.5, 2)])
def test_renorm_of_complex_tensors(dtype, p, dim):
    x = torch.randn(3, 4, 5, dtype=dtype, requires_grad=True)
    expected = torch.renorm(x, p, dim, 0.5)
    expected.abs().sum().backward()
    ours = _tg(x, True)
    out = tg.renorm(ours, p, dim, 0.5)
    tolerance = 1e-5 if dtype == torch.complex64 else 1e-12
    _same(out, expected, rtol=tolerance, atol=tolerance)
    out.abs().sum().backward()
    np.testing.assert_allclose(np.asarray(ours.grad), x.grad.numpy(), rtol=tolerance, atol=tolerance)
    in_place = _tg(x)
    in_place.renorm_(p, dim, 0.5)
    _same(in_place, expected, rtol=tolerance, atol=tolerance)


# --- quantile: the gradient reaches q ---------------------------------------------------------


@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
@pytest.mark.parametrize("shape, dim, keepdim", [((2,), None, False), ((3, 5), 1, True),
                                                 ((3, 2, 1, 2), None, False), ((3, 5), 0, False)])
@pytest.mark.parametrize("with_nan", [False, True])
def test_quantile_gives_q_a_gradient(op, shape, dim, keepdim, with_nan):
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(*shape, dtype=torch.float64, generator=gen)
    if with_nan:
        x[0] = float("nan")
    x.requires_grad_()
    q = torch.tensor([0.3, 0.75, 0.5], dtype=torch.float64, requires_grad=True)
    expected = getattr(torch, op)(x, q, dim, keepdim)
    weights = torch.randn(expected.shape, dtype=torch.float64, generator=gen)
    (expected * weights).nansum().backward()
    ours_x, ours_q = _tg(x, True), _tg(q, True)
    out = getattr(tg, op)(ours_x, ours_q, dim, keepdim)
    _same(out, expected, rtol=1e-14)
    (out * _tg(weights)).nansum().backward()
    np.testing.assert_allclose(np.asarray(ours_q.grad), q.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(ours_x.grad), x.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_quantile_gradient_in_q_by_finite_differences():
    x = tg.tensor(np.random.default_rng(7).standard_normal((4, 6)))
    q = tg.tensor([0.1, 0.45, 0.9], dtype=tg.float64, requires_grad=True)
    assert tg.gradcheck(lambda q: tg.quantile(x, q, dim=1), (q,))


@pytest.mark.parametrize("interpolation", ["lower", "higher", "nearest", "midpoint"])
def test_quantile_other_interpolations_give_q_no_gradient(interpolation):
    x = torch.randn(4, 5, dtype=torch.float64)
    q = torch.tensor([0.3, 0.6], dtype=torch.float64, requires_grad=True)
    expected = torch.quantile(x, q, 1, interpolation=interpolation)
    out = tg.quantile(_tg(x), _tg(q, True), 1, interpolation=interpolation)
    _same(out, expected)
    assert out.requires_grad == expected.requires_grad


# --- clamp on bool tensors, and its dtype -----------------------------------------------------


@pytest.mark.parametrize("op", ["clamp", "clamp_min", "clamp_max"])
@pytest.mark.parametrize("bound", [[True], [False, True], 0, 0.5])
def test_clamp_of_bool_tensors_as_pytorch(op, bound):
    x = torch.tensor([True, False])
    theirs = torch.tensor(bound) if isinstance(bound, list) else bound
    ours = tg.tensor(bound) if isinstance(bound, list) else bound
    _same(getattr(tg, op)(tg.tensor([True, False]), ours), getattr(torch, op)(x, theirs))


@pytest.mark.parametrize("op", ["clamp", "clamp_min", "clamp_max"])
def test_clamp_of_bool_tensor_by_python_bool_is_refused(op):
    with pytest.raises(NotImplementedError):
        getattr(torch, op)(torch.tensor([True, False]), True)
    with pytest.raises(NotImplementedError):
        getattr(tg, op)(tg.tensor([True, False]), True)


def test_clamp_bool_tensor_by_two_bool_tensors_is_refused():
    with pytest.raises(NotImplementedError):
        torch.tensor([True, False]).clamp(torch.tensor(True), torch.tensor(False))
    with pytest.raises(NotImplementedError):
        tg.tensor([True, False]).clamp(tg.tensor(True), tg.tensor(False))
    x = torch.tensor([True, False])  # an integer bound makes it an integer clamp
    _same(tg.tensor([True, False]).clamp(tg.tensor(True), 1), x.clamp(torch.tensor(True), 1))
    _same(tg.tensor([True, False]).clamp(0, tg.tensor(True)), x.clamp(0, torch.tensor(True)))


@pytest.mark.parametrize("bound", [torch.tensor([3, -5], dtype=torch.int32),
                                   torch.tensor(3, dtype=torch.int32), torch.tensor(3.5),
                                   torch.tensor([3.0, 1.0], dtype=torch.float64)])
def test_clamp_dtype_promotes_with_tensor_bounds(bound):
    x = torch.tensor([1, 200], dtype=torch.uint8)
    _same(tg.clamp(_tg(x), min=_tg(bound)), torch.clamp(x, min=bound))
    _same(tg.clamp_min(_tg(x), _tg(bound)), torch.clamp_min(x, bound))


# --- searchsorted -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64, torch.int64, torch.uint8])
@pytest.mark.parametrize("shape", [(10,), (3, 10), (2, 3, 7), (0,), (4, 0), (0, 0)])
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_as_pytorch(dtype, shape, right):
    gen = torch.Generator().manual_seed(len(shape))
    sequence = (torch.randn(shape, generator=gen) * 20).to(dtype).sort(-1).values
    queries_shape = shape[:-1] + (5,) if len(shape) > 1 else (4, 3)
    queries = (torch.randn(queries_shape, generator=gen) * 20).to(dtype)
    if len(shape) > 1:  # a non-contiguous query tensor, as PyTorch's samples
        queries = queries.transpose(-1, -2).contiguous().transpose(-1, -2)
    for int32 in (False, True):
        expected = torch.searchsorted(sequence, queries, right=right, out_int32=int32)
        _same(tg.searchsorted(_tg(sequence), _tg(queries), right=right, out_int32=int32), expected)


def test_searchsorted_float16_keeps_its_precision():
    """Close float16 values: subtracting a shift in float16 used to merge them."""
    sequence = torch.tensor([[1000.0, 1001.0, 1002.0], [-3.0, 0.0, 2048.0]], dtype=torch.float16)
    queries = torch.tensor([[1001.0, 1001.5], [2048.0, -2.999]], dtype=torch.float16)
    for right in (False, True):
        _same(tg.searchsorted(_tg(sequence), _tg(queries), right=right),
              torch.searchsorted(sequence, queries, right=right))


def test_searchsorted_with_nan_infinities_scalars_and_sorter():
    sequence = torch.tensor([[-np.inf, 1.0, 2.0, np.nan], [0.0, 1.0, np.inf, np.inf]], dtype=torch.float64)
    queries = torch.tensor([[np.nan, 2.0, -np.inf], [np.inf, 0.5, 1.0]], dtype=torch.float64)
    for right in (False, True):
        _same(tg.searchsorted(_tg(sequence), _tg(queries), right=right),
              torch.searchsorted(sequence, queries, right=right))
    _same(tg.searchsorted(tg.tensor([1.0, 2.0, 3.0]), 2.0),
          torch.searchsorted(torch.tensor([1.0, 2.0, 3.0]), 2.0))
    values = torch.tensor([3.0, 1.0, 2.0])
    order = torch.argsort(values)
    _same(tg.searchsorted(_tg(values), tg.tensor([2.5, 0.0]), sorter=_tg(order)),
          torch.searchsorted(values, torch.tensor([2.5, 0.0]), sorter=order))
    _same(tg.bucketize(tg.tensor([0.5, 2.0]), tg.tensor([1.0, 2.0]), right=True),
          torch.bucketize(torch.tensor([0.5, 2.0]), torch.tensor([1.0, 2.0]), right=True))


# --- float_power_ on complex tensors ----------------------------------------------------------


@pytest.mark.parametrize("self_dtype", [torch.complex128, torch.complex64, torch.float64, torch.float32])
@pytest.mark.parametrize("exponent", [torch.tensor(2.0 + 1.0j, dtype=torch.complex128), torch.tensor(2.0), 2,
                                      2.5 + 1j])
def test_float_power_in_place_dtype_rule(self_dtype, exponent):
    x = torch.tensor([1.0 + 2j, 3 - 1j]) if self_dtype.is_complex else torch.tensor([1.0, 2.0])
    x = x.to(self_dtype)
    ours = _tg(x)
    ours_exponent = _tg(exponent) if isinstance(exponent, torch.Tensor) else exponent
    try:
        expected = x.clone().float_power_(exponent)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            ours.float_power_(ours_exponent)
        return
    _same(ours.float_power_(ours_exponent), expected, rtol=1e-14)


# --- the Bessel functions: double accuracy ----------------------------------------------------


@pytest.mark.parametrize("name", ["j0", "j1", "y0", "y1"])
def test_bessel_functions_to_double_accuracy(name):
    """Against 40-digit values: within 2e-14 absolute (Y1 grows like 2 / (pi x) near 0, so
    relative there) at many points, large arguments and the first zeros included. (PyTorch's
    own port is only good to about 4e-7, so it is no oracle here.)"""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    zeros = {"j0": [2.404825557695773, 5.520078110286311, 8.653727912911013],
             "j1": [3.8317059702075125, 7.015586669815619, 10.173468135062722],
             "y0": [0.8935769662791675, 3.957678419314858, 7.086051060301773],
             "y1": [2.197141326031017, 5.429681040794135, 8.596005868331169]}[name]
    x = np.concatenate([np.linspace(0.05, 30, 120), [4.99, 5.0, 5.01, 50.3, 100.7, 1e3 + 0.7, 1e5 + 0.3],
                        zeros, np.nextafter(zeros, 0), np.nextafter(zeros, 100)])
    if name.startswith("j"):
        x = np.concatenate([x, -x[::7], [0.0, 1e-6, 1e-3]])
    order = int(name[1])
    exact = mpmath.besselj if name.startswith("j") else mpmath.bessely
    expected = np.array([float(exact(order, mpmath.mpf(float(v)))) for v in x])
    out = getattr(tg.special, f"bessel_{name}")(tg.tensor(x)).numpy()
    np.testing.assert_allclose(out, expected, rtol=2e-14, atol=2e-14)
    near_zeros = getattr(tg.special, f"bessel_{name}")(tg.tensor(np.array(zeros))).numpy()
    assert np.all(np.abs(near_zeros) < 1e-15)
