"""A custom Function whose backward reads a saved OUTPUT is differentiable twice, as in PyTorch.

PyTorch unpacks a saved output with its grad_fn, so in a `create_graph=True` pass Exp's
`grad * y` is a function of x through y. Each Function here is written for both libraries from
the same lines; second derivatives are compared in float64 and checked by `tg.gradgradcheck`.
Also: saved inputs, an in-between value of forward (a constant in PyTorch), `mark_dirty`,
several outputs (one of them unused), and the in-place check on a saved output.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])
B = np.array([[0.9, 1.3, -0.6], [0.4, -2.1, 1.1]])


def make(lib, base):
    """The test Functions, on `lib` (tensorgrad or torch) with `base` its Function class."""

    class Exp(base):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    class Hypot(base):  # the tutorial's (chapter 12): saves its inputs and its output
        @staticmethod
        def forward(ctx, a, b):
            out = (a * a + b * b).sqrt()
            ctx.save_for_backward(a, b, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            a, b, out = ctx.saved_tensors
            return grad * a / out, grad * b / out

    class Middle(base):  # saves a value of forward that it doesn't return: a constant
        @staticmethod
        def forward(ctx, x):
            e = x.exp()
            ctx.save_for_backward(e)
            return e * 2

        @staticmethod
        def backward(ctx, grad):
            (e,) = ctx.saved_tensors
            return grad * 2 * e

    class ExpInPlace(base):  # changes its input in place and saves it (an output)
        @staticmethod
        def forward(ctx, x):
            x.exp_()
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    class SinCos(base):  # two outputs, both saved
        @staticmethod
        def forward(ctx, x):
            s, c = x.sin(), x.cos()
            ctx.save_for_backward(s, c)
            return s, c

        @staticmethod
        def backward(ctx, gs, gc):
            s, c = ctx.saved_tensors
            return gs * c - gc * s

    class Tanh(base):  # the new style: the output saved in setup_context
        @staticmethod
        def forward(x):
            return x.tanh()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * (1 - y * y)

    return {"Exp": Exp, "Hypot": Hypot, "Middle": Middle, "ExpInPlace": ExpInPlace, "SinCos": SinCos,
            "Tanh": Tanh}


TG = make(tg, tg.autograd.Function)
TORCH = make(torch, torch.autograd.Function)


def tg_leaf(a):
    return tg.tensor(a, dtype=tg.float64, requires_grad=True)


def torch_leaf(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def close(ours, theirs):
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


# Each case: the function of the inputs (given the Functions), and the inputs' arrays.
CASES = {
    "Exp": (lambda f, x: f["Exp"].apply(x), [X]),
    "Exp twice": (lambda f, x: f["Exp"].apply(f["Exp"].apply(x) * 0.5), [X]),
    "Hypot": (lambda f, a, b: f["Hypot"].apply(a, b), [X, B]),
    "Middle": (lambda f, x: f["Middle"].apply(x), [X]),
    "ExpInPlace": (lambda f, x: f["ExpInPlace"].apply(x * 1.0), [X]),
    "SinCos": (lambda f, x: (lambda s, c: s * 2 + c * c)(*f["SinCos"].apply(x)), [X]),
    "SinCos, one used": (lambda f, x: f["SinCos"].apply(x)[0] ** 2, [X]),
    "Tanh": (lambda f, x: f["Tanh"].apply(x), [X]),
}


@pytest.mark.parametrize("case", CASES)
def test_second_derivatives_match_pytorch(case):
    fn, arrays = CASES[case]
    ours, theirs = [tg_leaf(a) for a in arrays], [torch_leaf(a) for a in arrays]
    weights = np.linspace(-1.0, 1.5, X.size).reshape(X.shape)
    out_tg, out_torch = fn(TG, *ours), fn(TORCH, *theirs)
    close(out_tg, out_torch)
    g_tg = tg.autograd.grad(out_tg, ours, tg.tensor(weights), create_graph=True)
    g_torch = torch.autograd.grad(out_torch, theirs, torch.tensor(weights), create_graph=True)
    for a, b in zip(g_tg, g_torch, strict=True):
        close(a, b)
        assert a.requires_grad == b.requires_grad
    if not g_torch[0].requires_grad:  # (Middle: the saved value is a constant in both)
        with pytest.raises(RuntimeError):
            tg.autograd.grad(g_tg[0].sum(), ours)
        return
    h_tg = tg.autograd.grad(sum((g * g).sum() for g in g_tg), ours)
    h_torch = torch.autograd.grad(sum((g * g).sum() for g in g_torch), theirs)
    for a, b in zip(h_tg, h_torch, strict=True):
        close(a, b)


def test_the_brief_example_gives_exp():
    x = tg_leaf(X)
    (g,) = tg.autograd.grad(TG["Exp"].apply(x).sum(), x, create_graph=True)
    (h,) = tg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), np.exp(X), rtol=1e-14)


@pytest.mark.parametrize("case", ["Exp", "Hypot", "ExpInPlace", "SinCos", "SinCos, one used", "Tanh"])
def test_gradgradcheck(case):
    fn, arrays = CASES[case]
    assert tg.gradgradcheck(lambda *xs: fn(TG, *xs), [tg_leaf(a) for a in arrays])


def test_third_derivative():
    x, xt = tg_leaf(X), torch_leaf(X)
    (g,) = tg.autograd.grad(TG["Tanh"].apply(x).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(TORCH["Tanh"].apply(xt).sum(), xt, create_graph=True)
    (h,) = tg.autograd.grad(g.sum(), x, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), xt, create_graph=True)
    close(h, ht)
    close(tg.autograd.grad(h.sum(), x)[0], torch.autograd.grad(ht.sum(), xt)[0])


def test_first_pass_unchanged_and_saved_output_read_as_is():
    """The usual pass still hands backward the plain saved tensor (no graph), and `saved_tensors`
    is the packed one again after a recorded pass."""
    seen = []

    class Exp(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            seen.append(y.requires_grad)
            return grad * y

    x = tg_leaf(X)
    y = Exp.apply(x)
    tg.autograd.grad(y.sum(), x, create_graph=True)
    y.sum().backward()
    assert seen == [True, False]
    np.testing.assert_allclose(x.grad, np.exp(X))


def test_saved_output_changed_in_place_raises():
    x, xt = tg_leaf(X), torch_leaf(X)
    y, yt = TG["Exp"].apply(x), TORCH["Exp"].apply(xt)
    with tg.no_grad():
        y.add_(1)
    with torch.no_grad():
        yt.add_(1)
    with pytest.raises(RuntimeError):
        torch.autograd.grad(yt.sum(), xt, create_graph=True)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        tg.autograd.grad(y.sum(), x, create_graph=True)


def test_no_reference_cycle_through_saved_output():
    x = tg_leaf(X)
    y = TG["SinCos"].apply(x)[0]
    (g,) = tg.autograd.grad(y.sum(), x, create_graph=True)
    ref = weakref.ref(y)
    del y, g
    gc.disable()
    try:
        assert ref() is None  # freed by reference counting alone
    finally:
        gc.enable()
