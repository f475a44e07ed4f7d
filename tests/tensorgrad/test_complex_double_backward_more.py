"""Second derivatives through complex numbers for the reductions, decompositions, index writes and
views whose graph VJPs test_complex_double_backward.py does not cover: each case takes complex128
inputs through the op, differentiates a real loss with create_graph=True, differentiates the
first gradient again, and compares every second derivative with PyTorch's. Where PyTorch has no
complex gradient to compare with (or a first-order one tensorgrad deliberately does not follow),
`gradgradcheck` checks the second derivatives against finite differences."""

import warnings

import numpy as np
import pytest
from test_complex_double_backward import _second_derivatives

import tensorgrad as tg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _complex(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


A = _complex(3, 3)
B = _complex(3, 2)
Z = _complex(2, 3)
V = _complex(4)
X = RNG.standard_normal(4)
EYE = np.eye(3, dtype=bool)


def _set_row(m, a, v):
    a = a * 1
    a[0] = v[:3]
    return a


def _fill_row(m, a):
    a = a * 1
    a[0].fill_(2.0)
    return a * a


def _copy_into(m, a, src):
    a = a * 1
    a[:, :2].copy_(src)
    return a * a


CASES = {
    # reductions
    "var": (lambda m, z: m.var(z, dim=1), [Z]),
    "var of all": (lambda m, z: (z * z).var(), [Z]),
    "var, correction 0": (lambda m, z: m.var(z, 0, correction=0, keepdim=True), [Z]),
    "std": (lambda m, z: m.std(z, dim=0), [Z]),
    "std of all": (lambda m, z: (z * z).std(), [Z]),
    "var_mean": (lambda m, z: m.var_mean(z, 1)[0] * m.var_mean(z, 1)[1], [Z]),
    "std_mean": (lambda m, z: m.std_mean(z, 1)[0] * m.std_mean(z, 1)[1], [Z]),
    "logcumsumexp": (lambda m, z: m.logcumsumexp(z, 1), [Z]),
    "logcumsumexp, dim 0": (lambda m, z: m.logcumsumexp(z * z, 0), [Z]),
    "logcumsumexp of a 0-d tensor": (lambda m, v: m.logcumsumexp(v[1], 0), [V]),
    # decompositions
    "slogdet sign": (lambda m, a: m.linalg.slogdet(a)[0], [A]),
    "slogdet, both": (lambda m, a: m.linalg.slogdet(a)[0] * m.linalg.slogdet(a)[1], [A]),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [A, B]),
    "lstsq residuals": (lambda m, a, b: m.linalg.lstsq(m.cat([a, b.T[:1]]), m.cat([b, a[:1, :2]]),
                                                       driver="gelsd").residuals, [A, B]),
    "lstsq residuals, a vector b": (lambda m, a, v: m.linalg.lstsq(m.cat([a, a[:1] * a[1:2]]), v,
                                                                   driver="gelss").residuals, [A, V]),
    "lu_factor": (lambda m, a: m.linalg.lu_factor(a)[0], [A]),
    "lu": (lambda m, a: m.linalg.lu(a)[1] + m.linalg.lu(a)[2], [A]),
    "lu_solve": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b), [A, B]),
    "matrix_power 0": (lambda m, a: m.linalg.matrix_power(a, 0) * a, [A]),
    # index writes
    "index_put": (lambda m, a, b: a.index_put((m.tensor([0, 2]),), b.T.contiguous()[:, :3]), [A, B]),
    "index_put, accumulate": (lambda m, a, b: a.index_put((m.tensor([0, 0]),), b.T.contiguous(),
                                                          accumulate=True), [A, B]),
    "setitem": (_set_row, [A, V]),
    "index_add": (lambda m, a, b: a.index_add(1, m.tensor([0, 2]), b, alpha=2), [A, B]),
    "index_copy": (lambda m, a, b: a.index_copy(1, m.tensor([0, 2]), b), [A, B]),
    "masked_scatter": (lambda m, a, b: a.masked_scatter(m.tensor(EYE), b), [A, B]),
    "put": (lambda m, a, b: a.put(m.tensor([0, 4]), b[:2, 0]), [A, B]),
    "put, accumulate": (lambda m, a, b: a.put(m.tensor([0, 0]), b[:2, 0], accumulate=True), [A, B]),
    "diagonal_scatter": (lambda m, a, v: m.diagonal_scatter(a, v[:3] * v[1:]), [A, V]),
    # views and copies
    "as_strided": (lambda m, a: m.as_strided(a * a, (2, 2), (1, 2), 1), [A]),
    "copy_": (_copy_into, [A, B]),
    "copy_ of a real source": (lambda m, a, x: _copy_into(m, a, x[:3].reshape(3, 1)), [A, X]),
    "fill_": (_fill_row, [A]),
    "rot90": (lambda m, a: m.rot90(a * a, 1, (0, 1)), [A]),
    "block_diag": (lambda m, a, b: m.block_diag(a * a, b), [A, B]),
}


@pytest.mark.parametrize("name", CASES)
def test_second_derivatives_match_pytorch(name):
    f, arrays = CASES[name]
    found = []
    for m in (tg, torch):
        xs = [m.tensor(a, requires_grad=True) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's about complex lstsq drivers and the like)
            found.append(_second_derivatives(m, f, xs))
    for a, b in zip(*found, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# gradgradcheck takes a batch of two matrices for slogdet: with a 0-d complex output its finite
# differences fail to write into the 0-d weights (a numpy scalar there).


def _gradgrad(func, *arrays):
    inputs = [tg.tensor(a, requires_grad=True) for a in arrays]
    assert tg.autograd.gradgradcheck(func, inputs)


GRADGRAD = {
    "var": (lambda z: tg.var(z * z, dim=1), (Z,)),
    "std": (lambda z: tg.std(z, dim=0, correction=0), (Z,)),
    "logcumsumexp": (lambda z: tg.logcumsumexp(z, 1), (Z,)),
    "slogdet sign": (lambda a: tg.linalg.slogdet(a).sign, (np.stack([A, A.T * 1j]),)),  # (see below)
    "lstsq": (lambda a, b: tg.linalg.lstsq(a, b).solution, (A, B)),
    # PyTorch gives the input of as_strided_scatter the gradient of the written elements (see
    # test_index_writes.py), and refuses complex select_scatter and slice_scatter
    "as_strided_scatter": (lambda a, v: tg.as_strided_scatter(a, v[:3] * v[:3], (3,), (4,)), (A, V)),
    "select_scatter": (lambda a, v: tg.select_scatter(a * a, v[:3], 0, 1), (A, V)),
    "slice_scatter": (lambda a, b: tg.slice_scatter(a * a, b, 1, 0, 2), (A, B)),
    "as_strided of a strided view": (lambda a: tg.as_strided(a[1:, ::2], (2, 2), (1, 3)) ** 2, (A,)),
}


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck_on_complex_inputs(name):
    func, arrays = GRADGRAD[name]
    _gradgrad(func, *arrays)


def test_as_strided_is_twice_differentiable_for_real_inputs_too():
    # as_strided had no graph VJP at all: its second pass raised for real inputs as well.
    x = RNG.standard_normal(10)
    _gradgrad(lambda t: tg.as_strided(t, (3, 3), (2, 1), 1) ** 3, x)
    _gradgrad(lambda t: tg.as_strided(t, (), (), 4) ** 3, x)  # a 0-d view
    found = []
    for m in (tg, torch):
        t = m.tensor(x, requires_grad=True)
        found.append(_second_derivatives(m, lambda m, t: m.as_strided(t * t, (2, 3), (3, 1), 2), [t]))
    for a, b in zip(*found, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", ["var", "std"])
def test_real_spread_second_derivatives_are_unchanged(op):
    x = RNG.standard_normal((3, 4))
    found = []
    for m in (tg, torch):
        t = m.tensor(x, requires_grad=True)
        found.append(_second_derivatives(m, lambda m, t: getattr(m, op)(t * t, 1), [t]))
    for a, b in zip(*found, strict=True):
        assert a.dtype == b.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_first_gradients_are_graph_nodes_of_their_dtype():
    z = tg.tensor(Z, requires_grad=True)
    (g,) = tg.autograd.grad(tg.std(z, 1).sum() + tg.logcumsumexp(z, 1).abs().sum(), [z], create_graph=True)
    assert g.requires_grad and g.dtype == tg.complex128
    a = tg.tensor(A, requires_grad=True)
    (g,) = tg.autograd.grad(tg.linalg.slogdet(a).sign.real.sum(), [a], create_graph=True)
    assert g.requires_grad and g.dtype == tg.complex128
