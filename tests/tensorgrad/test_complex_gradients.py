"""Gradients through complex numbers follow PyTorch's convention (conjugate Wirtinger calculus):
a complex leaf's gradient is conj(df/dz) times the incoming one, so d Re(z*z)/dz is 2 conj(z),
not 2 z. Each case runs the same expression in both libraries and compares every leaf's gradient."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])
W = np.array([0.3 - 1j, 1.5 + 0.5j, -1 + 1j])
X = np.array([0.5, -1.2, 2.0])

CASES = {
    "product, real part": lambda m, z, w, x: (z * z).real.sum(),
    "product, imaginary part": lambda m, z, w, x: (z * w).imag.sum(),
    "quotient, angle": lambda m, z, w, x: (z / w).angle().sum(),
    "exp": lambda m, z, w, x: z.exp().real.sum() + 2 * z.exp().imag.sum(),
    "log and sqrt": lambda m, z, w, x: (z.log() + w.sqrt()).imag.sum(),
    "power": lambda m, z, w, x: (z ** 3).real.sum(),
    "matmul": lambda m, z, w, x: (z.reshape(1, 3) @ w.reshape(3, 1)).real.sum(),
    "conj": lambda m, z, w, x: (z * z.conj()).real.sum() + (z.conj() * w).imag.sum(),
    "real times complex": lambda m, z, w, x: (x * w).imag.sum(),
    "real times complex constant": lambda m, z, w, x: ((x * w.detach()).imag + (x * w.detach()).real).sum(),
    "cast to complex": lambda m, z, w, x: (x.to(z.dtype) * w).real.sum(),
    "indexing and sum": lambda m, z, w, x: (z[[0, 2]] * w[1]).imag.sum() + z.sum().real,
    "sin, tanh, mean": lambda m, z, w, x: z.sin().imag.sum() + z.tanh().mean().imag,
    "real part times real": lambda m, z, w, x: (z.real * x).sum(),
    "where and cat": lambda m, z, w, x: (m.where(m.tensor([True, False, True]), z, w).real.sum()
                                         + m.cat([z, w]).imag.pow(2).sum()),
    "imaginary part of a product": lambda m, z, w, x: ((z * 2).imag * x).sum(),
}


@pytest.mark.parametrize("name", CASES)
def test_complex_gradients_match_pytorch(name):
    grads = []
    for m in (torch, tg):
        leaves = [m.tensor(a, requires_grad=True) for a in (Z, W, X)]
        CASES[name](m, *leaves).backward()
        grads.append([None if t.grad is None else np.asarray(t.grad) for t in leaves])
    for theirs, ours in zip(*grads, strict=True):
        assert (theirs is None) == (ours is None)
        if theirs is not None:
            assert ours.dtype == theirs.dtype
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_a_complex_constant_alone_switches_the_convention_on():
    # In a fresh process, the first complex tensor is a constant (no gradient of its own): the
    # product's gradient into the real x must still come out in PyTorch's convention.
    code = textwrap.dedent("""
        import tensorgrad as tg
        x = tg.tensor([1.5], requires_grad=True)
        z = x * tg.tensor([1 + 2j])           # x (1 + 2j)
        (z * z).real.sum().backward()         # Re(x^2 (1 + 2j)^2) = -3 x^2
        print(float(x.grad[0]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(out.stdout) == pytest.approx(-9.0)


def test_create_graph_through_real_and_complex_gives_pytorchs_first_derivative():
    results = []
    for m in (torch, tg):
        x, w = m.tensor(X, requires_grad=True), m.tensor(W, requires_grad=True)
        z = x * w.detach()                    # real to complex
        loss = (z * z).imag.sum() + (x * w).real.sum() + (w * w).real.sum()
        results.append([np.asarray(g.detach()) for g in m.autograd.grad(loss, (x, w), create_graph=True)])
    for theirs, ours in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def _square_function(conjugated: bool) -> type:
    """z*z as an autograd.Function whose backward is PyTorch's conj(2z) grad, or the unconjugated 2z grad."""
    class Square(tg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, grad):
            (t,) = ctx.saved_tensors
            return grad * ((2 * t).conj() if conjugated else 2 * t)

    return Square


def test_gradcheck_checks_complex_inputs_and_outputs_as_pytorch_does():
    z = tg.tensor(np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j]), requires_grad=True)
    x = tg.tensor(np.array([0.3, 1.2, -0.7]), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # complex128 is double precision: no warning
        assert tg.autograd.gradcheck(lambda t: t.abs(), (z,))                        # complex to real
        assert tg.autograd.gradcheck(lambda t: (t.exp() * t.conj()).sin(), (z,))    # complex to complex
        assert tg.autograd.gradcheck(lambda a: tg.polar(a.abs() + 0.1, a), (x,))    # real to complex
        assert tg.autograd.gradcheck(_square_function(True).apply, (z,))
    # the unconjugated gradient is wrong in PyTorch's convention, and both libraries say so
    assert not tg.autograd.gradcheck(_square_function(False).apply, (z,), raise_exception=False)

    class TorchSquare(torch.autograd.Function):
        forward = staticmethod(lambda ctx, t: (ctx.save_for_backward(t), t * t)[1])
        backward = staticmethod(lambda ctx, grad: grad * 2 * ctx.saved_tensors[0])

    zt = torch.tensor(z.data, requires_grad=True)
    assert not torch.autograd.gradcheck(TorchSquare.apply, (zt,), raise_exception=False)
