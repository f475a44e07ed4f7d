"""Second derivatives through complex numbers: `autograd.grad(..., create_graph=True)` records the
gradient of a complex op in PyTorch's convention (conj(graph_vjp(conj(grad))) into a complex input,
its real part into a real one), so it can be differentiated again. Each case runs the same
expression in tensorgrad and PyTorch and compares every second derivative; `gradgradcheck`
checks complex inputs and outputs against finite differences."""

import warnings

import numpy as np
import pytest
from complex_checks import inner as _inner
from complex_checks import weights as _weights

import tensorgrad as tg
from tensorgrad import higher_order
from tensorgrad.gradcheck import GradcheckError

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
Z = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
X = RNG.standard_normal(4)
W = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))


def _second_derivatives(m, f, xs, seed: int = 1) -> list[np.ndarray]:
    """The gradients of <d <f(xs), v> / d xs, w> with respect to xs and v, for random v and w
    (complex where the value is complex): every second derivative of f."""
    rng = np.random.default_rng(seed)
    out = f(m, *xs)
    v = _weights(m, rng, out).requires_grad_()
    grads = m.autograd.grad(_inner(m, out, v), xs, create_graph=True)
    total = sum(_inner(m, g, _weights(m, rng, g)) for g in grads)
    found = m.autograd.grad(total, [*xs, v], allow_unused=True, materialize_grads=True)
    return [g.data if hasattr(g, "_data") else g.detach().resolve_conj().numpy() for g in found]


def _both(f, arrays=(Z, X), seed: int = 1) -> tuple[list[np.ndarray], list[np.ndarray]]:
    found = []
    for m in (tg, torch):
        xs = [m.tensor(a, requires_grad=True) for a in arrays]
        found.append(_second_derivatives(m, f, xs, seed))
    return found[0], found[1]


CASES = {
    "|z|^2 sum": lambda m, z, x: ((z * z.conj()).real * x).sum(),
    "(z*z).real": lambda m, z, x: (z * z).real + x,
    "exp": lambda m, z, x: m.exp(z * x),
    "log": lambda m, z, x: m.log(z) * x,
    "sin": lambda m, z, x: m.sin(z) * x,
    "matmul, complex weights": lambda m, z, x: m.tensor(W) @ (z * x),
    "matmul, then abs": lambda m, z, x: (m.tensor(W) @ z).abs() ** 2 * x,
    "abs": lambda m, z, x: m.abs(z) * x,
    "abs of a product": lambda m, z, x: m.abs(z * z) * x.exp(),
    "angle": lambda m, z, x: m.angle(z * z) * x,
    "real": lambda m, z, x: m.real(z * z) * x,
    "imag": lambda m, z, x: m.imag(z * z) * x,
    "sgn": lambda m, z, x: m.sgn(z * x),
    "conj": lambda m, z, x: m.conj(z) * z * x,
    "view_as_real": lambda m, z, x: m.view_as_real(z * z) * x.reshape(4, 1),
    "view_as_complex": lambda m, z, x: m.view_as_complex(m.stack([x, x * x], -1)) ** 2 * z,
    "complex": lambda m, z, x: m.complex(x, x * x) * z,
    "polar": lambda m, z, x: m.polar(x.exp(), x * 2) * z,
    "cast to complex": lambda m, z, x: x.to(m.complex128) * z * z,
    "quotient, power, sqrt": lambda m, z, x: z / (x + 3j) + z ** 3 * m.sqrt(z),
    "tanh, mean, cat": lambda m, z, x: m.cat([m.tanh(z) * x, (z * x).mean().reshape(1)]),
}


@pytest.mark.parametrize("name", CASES)
def test_second_derivatives_match_pytorch(name):
    ours, theirs = _both(CASES[name])
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_first_gradients_are_graph_nodes_of_their_dtype():
    z = tg.tensor(Z, requires_grad=True)
    x = tg.tensor(X, requires_grad=True)
    gz, gx = tg.autograd.grad((tg.exp(z) * x).abs().sum(), [z, x], create_graph=True)
    assert gz.requires_grad and gx.requires_grad
    assert (gz.dtype, gx.dtype) == (tg.complex128, tg.float64)


def test_hessian_vector_product_matches_pytorch():
    # Hv for the real loss f(z, x) = sum(|W z|^2 x) + sum(sin(z).imag): the gradient of <grad f, v>.
    v_z = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    v_x = RNG.standard_normal(4)
    found = []
    for m in (tg, torch):
        z, x = m.tensor(Z, requires_grad=True), m.tensor(X, requires_grad=True)
        loss = ((m.tensor(W) @ z).abs() ** 2 * x).sum() + m.sin(z).imag.sum()
        gz, gx = m.autograd.grad(loss, [z, x], create_graph=True)
        product = m.real(gz.conj() * m.tensor(v_z)).sum() + (gx * m.tensor(v_x)).sum()
        found.append([np.asarray(g.detach()) for g in m.autograd.grad(product, [z, x])])
    for a, b in zip(*found, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_third_derivative_matches_pytorch():
    found = []
    for m in (tg, torch):
        z = m.tensor(Z, requires_grad=True)
        (g,) = m.autograd.grad(m.exp(z).abs().sum() + (z * z).angle().sum(), [z], create_graph=True)
        (h,) = m.autograd.grad(m.real(g * g).sum(), [z], create_graph=True)
        (k,) = m.autograd.grad(m.imag(h).sum() + h.abs().sum(), [z])
        found.append(np.asarray(k.detach()))
    np.testing.assert_allclose(found[0], found[1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("op", ["sgn", "angle", "abs"])
def test_second_derivatives_at_zero_are_zero_not_nan(op):
    # PyTorch's second derivatives of sgn and angle are nan at 0 (0/0 in a masked branch); the
    # gradient there is 0, and so are its derivatives here.
    z0 = np.array([0j, 1 + 1j, -2 + 0.5j])
    x0 = np.array([0.5, 1.5, -1.0])
    f = {"sgn": lambda m, z, x: m.sgn(z) * x, "angle": lambda m, z, x: m.angle(z) * x,
         "abs": lambda m, z, x: m.abs(z) * x}[op]
    ours, theirs = _both(f, (z0, x0))
    for a, b in zip(ours, theirs, strict=True):
        assert np.isfinite(a).all()
        np.testing.assert_allclose(a[1:], b[1:], rtol=1e-10, atol=1e-12)
        if op != "abs":
            assert not np.any(a[:1])


GRADGRAD = {
    "exp times real": (lambda z, x: tg.exp(z) * x, (Z, X)),
    "abs of a complex matmul": (lambda z, x: (tg.tensor(W) @ z).abs() * x, (Z, X)),
    "matmul by a complex leaf": (lambda z, w: w @ tg.sin(z), (Z, W)),
    "angle": (lambda z: z.angle(), (Z,)),
    "sgn": (lambda z: z.sgn(), (Z,)),
    "polar": (lambda x: tg.polar(x.exp(), x), (X,)),
    "view_as_real of a log": (lambda z: tg.view_as_real(tg.log(z)), (Z,)),
    "view_as_complex": (lambda x: tg.view_as_complex(tg.stack([x, x * x], -1)) ** 2, (X,)),
}


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck_on_complex_inputs_and_outputs(name):
    func, arrays = GRADGRAD[name]
    inputs = [tg.tensor(a, requires_grad=True) for a in arrays]
    assert tg.autograd.gradgradcheck(func, inputs)


def test_gradgradcheck_draws_complex_weights_for_a_complex_output():
    # With real weights, an error in the imaginary part of the output's gradient would go unseen.
    z = tg.tensor(Z, requires_grad=True)
    seen = []

    def func(z):
        out = z * z
        if out.requires_grad:  # (not in the finite differences, which run without grad)
            out.register_hook(lambda g: seen.append(g.dtype))
        return out

    assert tg.autograd.gradgradcheck(func, [z])
    assert tg.complex128 in seen


def _listed(monkeypatch, function):
    """List a test's graph VJP as complex-ready, for this test only."""
    name = f"{function.__module__}.{function.__qualname__}"
    monkeypatch.setattr(higher_order, "COMPLEX_READY_GRAPHS", higher_order.COMPLEX_READY_GRAPHS | {name})


def _square_graph_missing_a_term(grad, out, x):
    return (grad * tg.tensor(2 * x.data),)  # 2 z read as a constant: no second derivative


def test_gradgradcheck_finds_a_missing_complex_second_derivative(monkeypatch):
    # z ** 2 whose recorded gradient reads 2 z as a constant: the first derivative is right, the
    # second is missing, and only finite differences of the recorded gradient can tell.
    _listed(monkeypatch, _square_graph_missing_a_term)

    def square(z):
        return tg.record(z.data ** 2, "square", (z,), lambda grad: grad * 2 * z.data,
                         graph_vjp=_square_graph_missing_a_term)

    z = tg.tensor(Z, requires_grad=True)
    assert tg.autograd.gradcheck(square, [z])
    with pytest.raises(GradcheckError):
        tg.autograd.gradgradcheck(square, [z])
    assert not tg.autograd.gradgradcheck(square, [z], raise_exception=False)


def _cube_graph(grad, out, x):
    return (grad * 3 * x ** 2,)


def _cube(z):
    """A user op with a holomorphic VJP stated as for real numbers (grad * 3 z**2)."""
    return tg.record(z.data ** 3, "cube", (z,), lambda grad: grad * 3 * z.data ** 2, graph_vjp=_cube_graph)


def test_a_listed_user_graph_vjp_is_conjugated_like_its_vjp(monkeypatch):
    _listed(monkeypatch, _cube_graph)
    ours, theirs = [], []
    for m, f, found in ((tg, _cube, ours), (torch, lambda z: z ** 3, theirs)):
        z = m.tensor(Z, requires_grad=True)
        (g,) = m.autograd.grad(f(z).abs().sum(), [z], create_graph=True)
        (h,) = m.autograd.grad(m.real(g * g).sum(), [z])
        found += [np.asarray(g.detach()), np.asarray(h.detach())]
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, f", [
    ("cube", lambda z: _cube(z).abs().sum()),  # a graph VJP not listed as complex-ready
    # PyTorch has no complex gradient here to check a formula against
    ("scatter_reduce", lambda z: z.scatter_reduce(0, tg.tensor([0, 0, 1, 1]), z * z, "prod").abs().sum()),
])
def test_an_op_without_a_complex_graph_vjp_is_differentiable_once(name, f):
    z = tg.tensor(Z, requires_grad=True)
    (g,) = tg.autograd.grad(f(z), [z], create_graph=True)
    (plain,) = tg.autograd.grad(f(z), [z])
    np.testing.assert_allclose(g.data, plain.data, rtol=1e-12)
    with pytest.raises(RuntimeError, match=f"gradient of '{name}' can't be differentiated"):
        tg.autograd.grad(g.abs().sum(), [z])


A = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)) + 3 * np.eye(3)

# One case per graph VJP listed in `higher_order.COMPLEX_READY_GRAPHS` that CASES leaves out.
LISTED = {
    "add, sub, neg": lambda m, a: -(a + a * a) - a.conj(),
    "reciprocal, rsqrt": lambda m, a: m.reciprocal(a) + m.rsqrt(a),
    "square, exp2, expm1": lambda m, a: m.square(a) + m.exp2(a) + m.expm1(a),
    "log2, log10, log1p": lambda m, a: m.log2(a) + m.log10(a) + m.log1p(a),
    "cos, tan": lambda m, a: m.cos(a) + m.tan(a),
    "asin, acos, atan": lambda m, a: m.asin(a * 0.3) + m.acos(a * 0.3) + m.atan(a * 0.3),
    "sinh, cosh, asinh, atanh": lambda m, a: m.sinh(a) + m.cosh(a) + m.asinh(a) + m.atanh(a * 0.3),
    "sigmoid": lambda m, a: m.sigmoid(a),
    "where": lambda m, a: m.where(m.tensor([True, False, True]), a * a, a),
    "T, transpose, permute": lambda m, a: (a * a).T + a.transpose(0, 1) * a.permute(1, 0),
    "flip, roll, repeat": lambda m, a: m.flip(a * a, [0]) * m.roll(a, 1, 0) + a.repeat(1, 1),
    "triu, stack, unsqueeze": lambda m, a: m.stack([m.triu(a * a), a]).unsqueeze(0),
    "expand, clone, contiguous": lambda m, a: a[0:1].expand(3, 3).clone().contiguous() * a,
    "index, index_select, gather": lambda m, a: ((a * a)[[0, 2]] + m.index_select(a, 0, m.tensor([2, 0]))
                                                 * m.gather(a, 0, m.tensor([[0, 1, 2], [2, 1, 0]]))),
    "masked_fill": lambda m, a: (a * a).masked_fill(m.tensor([True, False, True]), 0),
    "scatter_add": lambda m, a: m.zeros(3, 3, dtype=m.complex128).scatter_add(
        0, m.tensor([[0, 1, 2], [2, 0, 1], [1, 2, 0]]), a * a),
    "einsum, linear": lambda m, a: m.einsum("ij,jk->ik", a, a) + m.nn.functional.linear(a, a * a, a[0]),
    "sum, mean, prod, cumprod, cumsum": lambda m, a: ((a * a).sum(0) + (a * a).mean(1) + a.prod(0)
                                                      + a.cumprod(1)[0] + a.cumsum(0)[1]),
    "logsumexp": lambda m, a: m.logsumexp(a, 0),
    "diag, diagonal, trace": lambda m, a: m.diag(a * a) + m.diagonal(a @ a) * (a @ a).trace(),
    "inv, det": lambda m, a: m.linalg.inv(a) * m.linalg.det(a),
    "solve, slogdet": lambda m, a: m.linalg.solve(a, a[0]) * m.linalg.slogdet(a)[1],
    "matrix_exp, pinv": lambda m, a: m.linalg.matrix_exp(a * 0.3) + m.linalg.pinv(a),
}


@pytest.mark.parametrize("name", LISTED)
def test_listed_graph_vjps_match_pytorch(name):
    ours, theirs = _both(lambda m, a: LISTED[name](m, a), (A,))
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


def test_a_real_op_keeps_its_graph_vjp_once_complex_numbers_exist():
    # The real path is untouched: a real op's recorded node holds the graph VJP it was given.
    tg.tensor(Z)  # (complex numbers in this process)
    x = tg.tensor(X, requires_grad=True)

    def graph(grad, out, x):
        return (grad * 2,)

    y = tg.record(x.data * 2, "double", (x,), lambda grad: grad * 2, graph_vjp=graph)
    assert y._backward.args[-1] is graph


def test_a_complex_scalar_needs_an_explicit_gradient_as_in_pytorch():
    for m in (torch, tg):
        z = m.tensor([1 + 2j], requires_grad=True)
        with pytest.raises(RuntimeError, match="real scalar outputs"):
            m.autograd.grad((z * z).sum(), z)
        with pytest.raises(RuntimeError, match="real scalar outputs"):
            (z * z).sum().backward()


def test_second_derivative_through_a_real_to_complex_cast_is_quiet_and_pytorchs():
    results = []
    for m in (torch, tg):
        x = m.tensor([0.5, 1.5], dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no ComplexWarning from casting the gradient back
            (g,) = m.autograd.grad((x.to(m.complex128) ** 2 * (1 + 1j)).real.sum(), x, create_graph=True)
            (h,) = m.autograd.grad((g * g).sum(), x)
        results.append((np.asarray(g.detach()), np.asarray(h)))
    for theirs, ours in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
