"""Second derivatives through the Fourier transforms: every `tg.fft` transform records its gradient
as a graph (another transform, `conj`, `pad`), so `create_graph=True` can differentiate it again.
Each case runs the same loss in tensorgrad and PyTorch, with real and complex float64 inputs and a
few `n` / `s` / `dim` / `norm` choices, and compares every second derivative; `gradgradcheck`
checks a few against finite differences, and `stft` / `istft` are differentiated twice."""

import warnings

import numpy as np
import pytest
from complex_checks import inner as _inner
from complex_checks import weights as _weights

import tensorgrad as tg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 6))
Z = RNG.standard_normal((3, 6)) + 1j * RNG.standard_normal((3, 6))
X3 = RNG.standard_normal((2, 3, 4))
Z3 = RNG.standard_normal((2, 3, 4)) + 1j * RNG.standard_normal((2, 3, 4))

ONE_DIM = [{}, {"n": 4}, {"n": 8, "norm": "ortho"}, {"dim": 0, "norm": "forward"}]
TO_REAL_ONE_DIM = [{}, {"n": 7}, {"n": 4, "norm": "ortho"}, {"dim": 0, "norm": "forward"}]
N_DIM = [{}, {"s": (2, 8)}, {"dim": (1, 0), "s": (4, 5), "norm": "ortho"}, {"dim": (0,), "norm": "forward"}]
TO_REAL_N_DIM = [{}, {"s": (4, 7)}, {"dim": (1, 0), "norm": "forward"}, {"s": (2, -1), "norm": "ortho"}]

# (transform, the inputs it takes, its argument choices)
TRANSFORMS = [
    ("fft", (X, Z), ONE_DIM), ("ifft", (X, Z), ONE_DIM),
    ("rfft", (X,), ONE_DIM), ("ihfft", (X,), ONE_DIM),
    ("irfft", (X, Z), TO_REAL_ONE_DIM), ("hfft", (X, Z), TO_REAL_ONE_DIM),
    ("fft2", (X, Z), N_DIM), ("ifft2", (X, Z), N_DIM), ("fftn", (X, Z, Z3), N_DIM), ("ifftn", (X, Z), N_DIM),
    ("rfft2", (X,), N_DIM), ("rfftn", (X, X3), N_DIM), ("ihfft2", (X,), N_DIM), ("ihfftn", (X, X3), N_DIM),
    ("irfft2", (X, Z), TO_REAL_N_DIM), ("irfftn", (X, Z, Z3), TO_REAL_N_DIM),
    ("hfft2", (X, Z), TO_REAL_N_DIM), ("hfftn", (X, Z, Z3), TO_REAL_N_DIM),
]
# Losses of a transform's output y: through y itself, holomorphic, and through |y|, which is not.
LOSSES = {
    "square": lambda m, y: y * y,
    "abs squared": lambda m, y: m.abs(y) ** 2,
}
# Each (transform, input, arguments) with one loss, the two taking turns.
CASES = [pytest.param(name, a, kw, loss, id=f"{name}-{a.dtype}{a.ndim}d-{kw}-{loss}")
         for name, arrays, choices in TRANSFORMS for i, a in enumerate(arrays) for j, kw in enumerate(choices)
         for loss in [list(LOSSES)[(i + j) % 2]]]


def _second_derivatives(m, f, x, seed: int = 1) -> list[np.ndarray]:
    """The first gradient of <f(x), v> (for random v), and the gradients of <that gradient, w>
    with respect to x and v: every second derivative of f."""
    rng = np.random.default_rng(seed)
    out = f(m, x)
    v = _weights(m, rng, out).requires_grad_()
    (grad,) = m.autograd.grad(_inner(m, out, v), [x], create_graph=True)
    found = m.autograd.grad(_inner(m, grad, _weights(m, rng, grad)), [x, v], allow_unused=True,
                            materialize_grads=True)
    return [_numpy(g) for g in (grad, *found)]


def _numpy(g) -> np.ndarray:
    return g.detach().data if isinstance(g, tg.Tensor) else g.detach().resolve_conj().numpy()


def _compare(f, array: np.ndarray, seed: int = 1) -> None:
    found, expected = ([*_second_derivatives(m, f, m.tensor(array, requires_grad=True), seed)]
                       for m in (tg, torch))
    for a, b in zip(found, expected, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("name", "array", "kw", "loss"), CASES)
def test_second_derivatives_equal_pytorchs(name, array, kw, loss):
    _compare(lambda m, x: LOSSES[loss](m, getattr(m.fft, name)(x, **kw)), array)


@pytest.mark.parametrize(("name", "array", "kw"), [
    ("fft", Z[0], {"n": 5}), ("rfft", X[0], {"norm": "ortho"}), ("irfft", Z[0, :4], {"n": 5}),
    ("ihfft", X[0], {}), ("hfft2", Z[:2, :3], {"s": (3, 3)}), ("irfftn", X[:2, :4], {"norm": "forward"}),
    ("rfftn", X[:2], {"s": (3, 5)}),
])
def test_gradgradcheck(name, array, kw):
    def func(x):
        y = getattr(tg.fft, name)(x, **kw)
        return y * y

    assert tg.autograd.gradgradcheck(func, [tg.tensor(array, requires_grad=True)])


def test_a_third_derivative_equals_pytorchs():
    found = []
    for m in (tg, torch):
        x = m.tensor(X[0], requires_grad=True)
        y = (m.abs(m.fft.rfft(x * x)) ** 2).sum()
        (g,) = m.autograd.grad(y, [x], create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), [x], create_graph=True)
        (third,) = m.autograd.grad((h * m.tensor(X[1])).sum(), [x])
        found.append(_numpy(third))
    np.testing.assert_allclose(found[0], found[1], rtol=1e-9, atol=1e-9)


def test_hessian_through_irfft_equals_pytorchs():
    def loss(m, z):
        return (m.fft.irfft(z, n=7) ** 4).sum()

    found = tg.func.hessian(lambda z: loss(tg, z))(tg.tensor(X[0, :4]))
    expected = torch.func.hessian(lambda z: loss(torch, z))(torch.tensor(X[0, :4]))
    np.testing.assert_allclose(found.data, expected.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("array", [X[0], X[:2], Z[0]], ids=["real", "real batch", "complex"])
@pytest.mark.parametrize("normalized", [False, True])
def test_stft_second_derivatives_equal_pytorchs(array, normalized):
    def f(m, x):
        window = m.hann_window(4, dtype=m.float64)
        return m.stft(x, 4, hop_length=1, window=window, normalized=normalized, return_complex=True) ** 2

    _compare(f, array)


@pytest.mark.parametrize("onesided", [True, False])
def test_istft_second_derivatives_equal_pytorchs(onesided):
    spectrum = Z[:, :4] if onesided else Z.T[:4, :3]  # (frequencies, frames)

    def f(m, s):
        window = m.hann_window(4, dtype=m.float64)
        return m.istft(s, 4, hop_length=1, window=window, onesided=onesided, return_complex=not onesided) ** 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's about a spectrum that is not a real signal's)
        _compare(f, spectrum)


@pytest.mark.parametrize("name", ["rfft", "irfft", "fft"])
def test_single_precision_second_derivatives_keep_pytorchs_dtypes(name):
    array = (X[0] if name == "rfft" else Z[0]).astype(np.complex64 if name != "rfft" else np.float32)
    found, expected = ([*_second_derivatives(m, lambda m, x: getattr(m.fft, name)(x) ** 2,
                                             m.tensor(array, requires_grad=True))] for m in (tg, torch))
    for a, b in zip(found, expected, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
