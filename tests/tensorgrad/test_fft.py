"""`tg.fft` against `torch.fft`: values, dtypes, shapes, errors and gradients, for real and complex
inputs, every norm, cropped and zero-padded lengths, odd and even sizes, one and several dims.

A gradient is compared through the loss (out * w).real.sum() with a fixed random complex w (the
real and imaginary parts of every output count), and for real inputs also against finite
differences (`tg.gradcheck`)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

NORMS = [None, "backward", "ortho", "forward"]
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # PyTorch's FFT on small inputs is 40 times slower with a thread pool on a busy machine.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _random(shape, complex_):
    values = RNG.standard_normal(shape)
    return values + 1j * RNG.standard_normal(shape) if complex_ else values


def _array(t):
    """A tensor's values (PyTorch's lazily conjugated ones resolved)."""
    return np.asarray(t.detach().resolve_conj()) if isinstance(t, torch.Tensor) else np.asarray(t)


def _compare(name, data, *args, **kwargs):
    """Run torch.fft.<name> and tg.fft.<name> on `data` (float64 or complex128) and compare the
    output's values, dtype and shape and the input's gradient through a weighted loss."""
    results = []
    weights = None
    for module, fft in ((torch, torch.fft), (tg, tg.fft)):
        x = module.tensor(data, requires_grad=True)
        out = getattr(fft, name)(x, *args, **kwargs)
        if weights is None:
            weights = _random(tuple(out.shape), True)
        (out * module.tensor(weights)).real.sum().backward()
        results.append((_array(out), str(out.dtype).split(".")[-1], _array(x.grad)))
    (theirs, their_dtype, their_grad), (ours, our_dtype, our_grad) = results
    assert our_dtype == their_dtype
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    assert our_grad.dtype == their_grad.dtype
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-10, atol=1e-10)


# --- 1-D transforms -----------------------------------------------------------------------------


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 3, 5, 8])
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_fft_ifft_match_pytorch(name, complex_, n, norm):
    _compare(name, _random((3, 5), complex_), n=n, norm=norm)


@pytest.mark.parametrize("dim", [0, 1, -2])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft"])
def test_one_dim_transforms_along_another_dim(name, dim):
    _compare(name, _random((4, 3, 2), name in ("fft", "ifft")), n=5, dim=dim)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 4, 5, 9, 12])
@pytest.mark.parametrize("name", ["rfft", "ihfft"])
def test_rfft_ihfft_match_pytorch(name, n, norm):
    _compare(name, _random((2, 7), False), n=n, norm=norm)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 1, 2, 5, 6, 7, 13, 14])
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_irfft_hfft_match_pytorch(name, complex_, n, norm):
    # Input of 4 frequencies: n = 6 or 7 uses all, smaller n crops them, larger n zero-pads.
    _compare(name, _random((3, 4), complex_), n=n, norm=norm)


def test_irfft_of_one_value_given_n():
    _compare("irfft", _random((1,), True), n=1)
    _compare("hfft", _random((2, 1), True), n=3, dim=1)


# --- n-D transforms -----------------------------------------------------------------------------


SHAPES_AND_ARGS = [
    ((3, 4, 5), {}),
    ((3, 4, 5), {"dim": (0, 2)}),
    ((3, 4, 5), {"dim": (2, 0)}),
    ((3, 4, 5), {"dim": 1}),
    ((3, 4, 5), {"s": (2, 7)}),
    ((3, 4, 5), {"s": (6, -1), "dim": (0, 1)}),
    ((3, 4, 5), {"s": (2, 3, 8), "dim": (-1, 0, 1)}),
    ((4, 6), {"s": [5]}),
]


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("shape, kwargs", SHAPES_AND_ARGS)
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", ["fftn", "ifftn", "irfftn", "hfftn"])
def test_n_dim_transforms_match_pytorch(name, complex_, shape, kwargs, norm):
    _compare(name, _random(shape, complex_), **kwargs, norm=norm)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("shape, kwargs", SHAPES_AND_ARGS)
@pytest.mark.parametrize("name", ["rfftn", "ihfftn"])
def test_real_n_dim_transforms_match_pytorch(name, shape, kwargs, norm):
    _compare(name, _random(shape, False), **kwargs, norm=norm)


@pytest.mark.parametrize("kwargs", [{}, {"s": (3, 6)}, {"s": (5, 5), "dim": (0, 2)}, {"norm": "ortho"}])
@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
def test_two_dim_transforms_match_pytorch(name, kwargs):
    _compare(name, _random((2, 4, 5), name not in ("rfft2", "ihfft2")), **kwargs)


@pytest.mark.parametrize("name", ["fftn", "ifftn"])
def test_n_dim_transform_of_no_dims_is_a_complex_copy(name):
    _compare(name, _random((2, 3), False), dim=())
    _compare(name, _random((), False))
    _compare(name, _random((), True))


# --- inverses, dtypes ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [6, 7])
def test_inverse_pairs_round_trip(n):
    x = tg.tensor(_random((3, n), False))
    np.testing.assert_allclose(tg.fft.irfft(tg.fft.rfft(x), n=n).data, x.data, atol=1e-12)
    np.testing.assert_allclose(tg.fft.hfft(tg.fft.ihfft(x), n=n).data, x.data, atol=1e-12)
    np.testing.assert_allclose(tg.fft.ifft(tg.fft.fft(x)).data, x.data, atol=1e-12)
    np.testing.assert_allclose(tg.fft.irfftn(tg.fft.rfftn(x), s=x.shape).data, x.data, atol=1e-12)
    np.testing.assert_allclose(tg.fft.hfftn(tg.fft.ihfftn(x), s=x.shape).data, x.data, atol=1e-12)


DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool", "complex64", "complex128", "float16"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "rfftn",
                                  "irfftn", "hfftn", "ihfftn"])
def test_dtypes_and_refusals_match_pytorch(name, dtype):
    data = np.array([[1, 0, 2, 3], [2, 1, 0, 1]]).astype(dtype)
    outcomes = []
    for module, fft in ((torch, torch.fft), (tg, tg.fft)):
        x = module.tensor(data)
        try:
            out = getattr(fft, name)(x)
        except Exception as error:  # noqa: BLE001 - the exception class is what is compared
            outcomes.append(type(error))
        else:
            outcomes.append((str(out.dtype).split(".")[-1], tuple(out.shape), _array(out)))
    theirs, ours = outcomes
    if isinstance(theirs, type):
        assert isinstance(ours, type) and issubclass(ours, theirs), (ours, theirs)
        return
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-5)


def test_single_precision_is_kept_and_gradients_are_float32():
    x = tg.randn(4, 6, requires_grad=True)
    out = tg.fft.rfft2(x)
    assert out.dtype == tg.complex64
    (out * out.conj()).real.sum().backward()
    assert x.grad.dtype == np.float32
    y = tg.fft.irfft(tg.randn(3, 4).to(tg.complex64))
    assert y.dtype == tg.float32


def test_integer_input_follows_the_default_dtype():
    previous = tg.get_default_dtype()
    tg.set_default_dtype(tg.float64)
    try:
        assert tg.fft.fft(tg.arange(4)).dtype == tg.complex128
        assert tg.fft.irfft(tg.arange(4)).dtype == tg.float64
    finally:
        tg.set_default_dtype(previous)


# --- errors -------------------------------------------------------------------------------------


ERRORS = [
    ("fft", (3, 4), {"n": 0}),
    ("fft", (3, 4), {"n": -1}),
    ("fft", (3, 4), {"n": 2.0}),
    ("fft", (3, 4), {"dim": 2}),
    ("fft", (3, 4), {"dim": -3}),
    ("fft", (3, 4), {"dim": (0,)}),
    ("fft", (3, 4), {"dim": None}),
    ("fft", (3, 4), {"norm": "bad"}),
    ("fft", (3, 4), {"norm": "Ortho"}),
    ("fft", (3, 4), {"norm": 3}),
    ("fft", (), {}),
    ("fft", (0,), {}),
    ("rfft", (0, 3), {"dim": 0}),
    ("fft2", (3,), {}),
    ("fftn", (3, 4), {"s": (2, 3, 4)}),
    ("fftn", (3, 4), {"s": (2,), "dim": (0, 1)}),
    ("fftn", (3, 4), {"dim": (0, 0)}),
    ("fftn", (3, 4), {"dim": (0, -2)}),
    ("fftn", (3, 4), {"s": (0, 3)}),
    ("fftn", (3, 4), {"s": (-2, 3)}),
    ("fft2", (3, 4), {"s": (2, 3, 4)}),
    ("rfftn", (3, 4), {"dim": ()}),
    ("irfftn", (3, 4), {"dim": ()}),
    ("hfftn", (3, 4), {"dim": ()}),
    ("ihfftn", (3, 4), {"dim": ()}),
    ("irfft", (1,), {}),
    ("hfft", (1,), {}),
    ("irfftn", (3, 1), {}),
    ("irfft", (3,), {"n": 0}),
    ("rfft", (3, 4), {"n": -5}),
]


@pytest.mark.parametrize("name, shape, kwargs", ERRORS)
def test_errors_match_pytorch(name, shape, kwargs):
    data = _random(shape, False)
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class is compared below
        getattr(torch.fft, name)(torch.tensor(data), **kwargs)
    with pytest.raises(theirs.type) as ours:
        getattr(tg.fft, name)(tg.tensor(data), **kwargs)
    assert name.removeprefix("i") in str(ours.value) or "fft" in str(ours.value)


@pytest.mark.parametrize("name", ["rfft", "ihfft", "rfftn", "ihfftn", "rfft2", "ihfft2"])
def test_real_only_transforms_refuse_complex_input(name):
    data = _random((3, 4), True)
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class is compared below
        getattr(torch.fft, name)(torch.tensor(data))
    with pytest.raises(theirs.type, match="ComplexDouble"):
        getattr(tg.fft, name)(tg.tensor(data))


def test_a_non_tensor_input_is_a_type_error():
    with pytest.raises(TypeError, match="Tensor"):
        tg.fft.fft([1.0, 2.0])
    with pytest.raises(TypeError, match="Tensor"):
        tg.fft.fftn([1.0, 2.0])


# --- gradients: finite differences ----------------------------------------------------------


@pytest.mark.parametrize("name, kwargs", [
    ("fft", {"n": 3}), ("ifft", {"n": 7, "norm": "ortho"}), ("rfft", {"n": 6}), ("rfft", {"n": 3}),
    ("ihfft", {"norm": "forward"}), ("irfft", {"n": 7}), ("irfft", {"n": 4}), ("hfft", {"n": 9}),
    ("fftn", {"s": (3, 6)}), ("rfftn", {"s": (2, 5)}), ("irfftn", {"s": (4, 4)}), ("hfftn", {}),
    ("ihfftn", {"dim": (1, 0)}),
])
def test_gradients_of_real_inputs_against_finite_differences(name, kwargs):
    x = tg.tensor(_random((3, 5), False), requires_grad=True)
    weights = tg.tensor(_random(tuple(getattr(tg.fft, name)(x, **kwargs).shape), True))
    assert tg.gradcheck(lambda x: (getattr(tg.fft, name)(x, **kwargs) * weights).real, (x,))


def test_gradients_of_a_complex_input_against_finite_differences():
    # d loss / d Re z + i d loss / d Im z, each estimated by central differences.
    z = _random((2, 5), True)
    weights = _random((2, 8), False)

    def loss(values):
        return float((np.fft.irfft(values, n=8, norm="ortho") * weights).sum())

    x = tg.tensor(z, requires_grad=True)
    (tg.fft.irfft(x, n=8, norm="ortho") * tg.tensor(weights)).sum().backward()
    eps = 1e-6
    for index in np.ndindex(z.shape):
        for step, part in ((eps, 1), (1j * eps, 1j)):
            plus, minus = z.copy(), z.copy()
            plus[index] += step
            minus[index] -= step
            estimate = (loss(plus) - loss(minus)) / (2 * eps)
            assert abs(estimate - (x.grad[index] * np.conj(part)).real) < 1e-6


def test_a_chain_of_transforms_matches_pytorch():
    data = _random((4, 6), False)
    grads = []
    for module in (torch, tg):
        x = module.tensor(data, requires_grad=True)
        spectrum = module.fft.rfft(x, norm="ortho")
        filtered = spectrum * module.tensor(np.linspace(1.0, 0.0, 4))
        y = module.fft.irfft(filtered, n=6, norm="ortho")
        z = module.fft.fft2(y * y)
        (z * z.conj()).real.sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-10)


@pytest.mark.slow
def test_the_first_complex_tensor_made_by_a_transform_switches_the_convention_on():
    # In a fresh process, no complex tensor was made before the fft: the product of its output
    # must still send its gradient back in PyTorch's convention.
    code = textwrap.dedent("""
        import numpy as np
        import tensorgrad as tg
        x = tg.tensor([1.0, 2.0, -1.0, 0.5], requires_grad=True)
        y = tg.fft.fft(x)
        (y * y).real.sum().backward()
        print(repr(x.grad.tolist()))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    x = torch.tensor([1.0, 2.0, -1.0, 0.5], dtype=torch.float64, requires_grad=True)
    y = torch.fft.fft(x)
    (y * y).real.sum().backward()
    np.testing.assert_allclose(eval(result.stdout), x.grad.tolist(), rtol=1e-6)  # noqa: S307


# --- frequencies and shifts ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_match_pytorch(name, n):
    for d, dtype in ((1.0, None), (0.1, "float64"), (2, "float32")):
        theirs = getattr(torch.fft, name)(n, d, dtype=dtype and getattr(torch, dtype))
        ours = getattr(tg.fft, name)(n, d, dtype=dtype and getattr(tg, dtype))
        assert str(ours.dtype) == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-6)  # (nan where PyTorch has it)
    assert getattr(tg.fft, name)(n, requires_grad=True).requires_grad


def test_rfftfreq_of_a_negative_length_is_pytorch_s():
    assert np.array_equal(tg.fft.rfftfreq(-1).data, torch.fft.rfftfreq(-1).numpy())
    assert tg.fft.rfftfreq(-3).shape == torch.fft.rfftfreq(-3).shape


@pytest.mark.parametrize("kwargs", [{"n": -1}, {"n": -5}, {"n": 5.0}, {"n": 5, "dtype": "int64"},
                                    {"n": 5, "dtype": "complex64"}])
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequency_errors_match_pytorch(name, kwargs):
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    if name == "rfftfreq" and kwargs.get("n") == -1:
        return  # (PyTorch's rfftfreq(-1) is [-0.]: see above)
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class is compared below
        getattr(torch.fft, name)(**kwargs, dtype=dtype and getattr(torch, dtype))
    with pytest.raises(theirs.type):
        getattr(tg.fft, name)(**kwargs, dtype=dtype and getattr(tg, dtype))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (-1,), (1, 1)])
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts_match_pytorch(name, dim):
    for shape in ((5, 4), (3, 7)):
        data = _random(shape, False)
        results = []
        for module in (torch, tg):
            x = module.tensor(data, requires_grad=True)
            out = getattr(module.fft, name)(x, dim=dim)
            (out * module.tensor(np.arange(out.numel()).reshape(shape))).sum().backward()
            results.append((_array(out), _array(x.grad)))
        np.testing.assert_array_equal(results[1][0], results[0][0])
        np.testing.assert_array_equal(results[1][1], results[0][1])


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shift_errors_match_pytorch(name):
    for data, dim in ((np.array(1.0), None), (np.zeros((2, 3)), 5)):
        with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class is compared below
            getattr(torch.fft, name)(torch.tensor(data), dim=dim)
        with pytest.raises(theirs.type):
            getattr(tg.fft, name)(tg.tensor(data), dim=dim)
    assert getattr(tg.fft, name)(tg.arange(5)).dtype == tg.int64


# --- stft / istft ------------------------------------------------------------------------------


def _window(module, n):
    return module.tensor(np.hanning(n + 2)[1:-1] + 0.1, requires_grad=True)


STFT_CASES = [
    {},
    {"hop_length": 3, "win_length": 6},
    {"center": False, "normalized": True},
    {"onesided": False},
    {"pad_mode": "constant"},
    {"pad_mode": "replicate", "hop_length": 5},
    {"pad_mode": "circular", "win_length": 5},
    {"no_window": True},
    {"return_complex": False},
    # a window shorter than n_fft, aligned to the frame's start: the signal is padded by its margins
    {"center": False, "win_length": 5, "hop_length": 2, "align_to_window": True},
    {"center": False, "win_length": 6, "align_to_window": False},
    {"center": False, "win_length": 5, "hop_length": 2, "align_to_window": True, "onesided": False},
]


@pytest.mark.filterwarnings("ignore:.*window was not provided.*", "ignore:.*return_complex=False.*")
@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("kwargs", STFT_CASES)
def test_stft_matches_pytorch_with_gradients(kwargs, batched):
    kwargs = dict(kwargs)
    kwargs.setdefault("return_complex", True)
    no_window = kwargs.pop("no_window", False)
    data = _random((2, 30) if batched else (30,), False)
    results = []
    weights = None
    for module in (torch, tg):
        x = module.tensor(data, requires_grad=True)
        window = None if no_window else _window(module, kwargs.get("win_length", 8))
        out = module.stft(x, 8, window=window, **kwargs)
        if weights is None:
            weights = _random(tuple(out.shape), kwargs["return_complex"])
        (out * module.tensor(weights)).real.sum().backward()
        results.append((_array(out), x.grad, None if no_window else window.grad))
    (theirs, *their_grads), (ours, *our_grads) = results
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    for their, our in zip(their_grads, our_grads, strict=True):
        if their is not None:
            np.testing.assert_allclose(np.asarray(our), _array(their), rtol=1e-10, atol=1e-10)


def test_stft_of_a_complex_signal_matches_pytorch():
    data = _random((25,), True)
    results = []
    for module in (torch, tg):
        x = module.tensor(data, requires_grad=True)
        out = module.stft(x, 6, hop_length=2, window=_window(module, 6))
        (out * out.conj()).real.sum().backward()
        results.append((_array(out), _array(x.grad)))
    for ours, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


ISTFT_CASES = [
    {},
    {"hop_length": 3, "win_length": 6},
    {"length": 25},
    {"length": 40},
    {"center": False, "normalized": True, "window": "ones"},
    {"onesided": False, "from_twosided": True},
    {"return_complex": True, "from_twosided": True},
]


@pytest.mark.filterwarnings("ignore:.*length of signal.*")
@pytest.mark.parametrize("kwargs", ISTFT_CASES)
def test_istft_matches_pytorch_with_gradients(kwargs):
    kwargs = dict(kwargs)
    twosided = kwargs.pop("from_twosided", False)
    ones = kwargs.pop("window", None) == "ones"
    n_fft, frames = 8, 11
    data = _random((2, n_fft if twosided else n_fft // 2 + 1, frames), True)
    if not twosided:  # a real signal's spectrum: real at frequency 0 and n_fft / 2
        data[:, [0, -1]] = data[:, [0, -1]].real
    results = []
    weights = None
    for module in (torch, tg):
        x = module.tensor(data, requires_grad=True)
        window = (module.ones(kwargs.get("win_length", n_fft), dtype=module.float64, requires_grad=True)
                  if ones else _window(module, kwargs.get("win_length", n_fft)))
        out = module.istft(x, n_fft, window=window, **kwargs)
        if weights is None:
            weights = _random(tuple(out.shape), True)
        (out * module.tensor(weights)).real.sum().backward()
        results.append((_array(out), _array(x.grad), _array(window.grad)))
    (theirs, *their_grads), (ours, *our_grads) = results
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)
    for their, our in zip(their_grads, our_grads, strict=True):
        np.testing.assert_allclose(our, their, rtol=1e-9, atol=1e-10)


def test_missing_windows_and_the_old_format_warn_as_in_pytorch():
    x = tg.tensor(_random((30,), False))
    with pytest.warns(UserWarning, match="window"):
        spectrum = tg.stft(x, 8, return_complex=True)
    with pytest.warns(UserWarning, match="window"):
        tg.istft(spectrum, 8)
    with pytest.warns(UserWarning, match="return_complex=False"):
        tg.stft(x, 8, window=tg.ones(8, dtype=tg.float64), return_complex=False)


def test_istft_inverts_stft():
    x = tg.tensor(_random((3, 50), False))
    window = tg.hann_window(16, dtype=tg.float64)
    spectrum = tg.stft(x, 16, hop_length=4, window=window, return_complex=True)
    np.testing.assert_allclose(spectrum.istft(16, hop_length=4, window=window, length=50).data, x.data,
                               atol=1e-12)


STFT_ERRORS = [
    ("stft", (30,), {"n_fft": 8}),  # return_complex missing for a real signal
    ("stft", (30,), {"n_fft": 0, "return_complex": True}),
    ("stft", (5,), {"n_fft": 8, "center": False, "return_complex": True}),
    ("stft", (30,), {"n_fft": 8, "hop_length": 0, "return_complex": True}),
    ("stft", (30,), {"n_fft": 8, "win_length": 9, "return_complex": True}),
    ("stft", (30,), {"n_fft": 8, "window": 5, "return_complex": True}),
    ("stft", (2, 3, 30), {"n_fft": 8, "return_complex": True}),
    ("stft", (30,), {"n_fft": 8, "align_to_window": True, "return_complex": True}),
    ("stft", "complex", {"n_fft": 8, "onesided": True}),
    ("istft", (5, 4), {"n_fft": 8}),  # a real input
    ("istft", "spectrum", {"n_fft": 10}),
    ("istft", "spectrum", {"n_fft": 8, "onesided": False}),
    ("istft", "spectrum", {"n_fft": 8, "return_complex": True}),
    ("istft", "spectrum", {"n_fft": 8, "center": False, "window": "hann"}),  # NOLA fails at the ends
]


@pytest.mark.filterwarnings("ignore:.*window.*")
@pytest.mark.parametrize("name, shape, kwargs", STFT_ERRORS)
def test_stft_istft_errors_match_pytorch(name, shape, kwargs):
    if shape == "complex":
        data = _random((30,), True)
    elif shape == "spectrum":
        data = _random((5, 6), True)
    else:
        data = _random(shape, False)
    outcomes = []
    for module in (torch, tg):
        arguments = dict(kwargs)
        if isinstance(arguments.get("window"), int):
            arguments["window"] = module.ones(arguments["window"], dtype=module.float64)
        elif arguments.get("window") == "hann":
            arguments["window"] = module.hann_window(8, dtype=module.float64)
        with pytest.raises(Exception) as error:  # noqa: PT011 - the classes are compared below
            getattr(module, name)(module.tensor(data), **arguments)
        outcomes.append(error.type)
    assert issubclass(outcomes[1], outcomes[0]), outcomes


def test_transforms_keep_a_gpu_style_array_type():
    # The stand-in for CuPy's arrays refuses numpy operands: every array the transforms and
    # their gradients make must be of the input's kind.
    from foreign_array import ForeignArray, foreign

    x = tg.from_numpy(foreign(_random((2, 30), False))).requires_grad_()
    window = tg.from_numpy(foreign(np.hanning(8)))
    spectrum = tg.stft(x, 8, window=window, return_complex=True)
    outs = [tg.fft.fft(x, n=40), tg.fft.rfft(x, n=17), tg.fft.irfft(tg.fft.rfft(x), n=31),
            tg.fft.hfftn(tg.fft.ihfftn(x)), tg.fft.fftshift(x), tg.fft.fft2(x, s=(3, 20)), spectrum,
            tg.istft(spectrum, 8, window=window, length=30)]
    assert all(isinstance(out.data, ForeignArray) for out in outs)
    sum((out * out.conj()).real.sum() for out in outs).backward()
    assert isinstance(x.grad, ForeignArray)
