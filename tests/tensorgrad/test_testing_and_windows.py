"""tg.testing (assert_close, make_tensor) and tg.signal.windows against PyTorch."""

import math
import re
import warnings

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

nan, inf = math.nan, math.inf

# --- assert_close: the same outcome and message as torch.testing.assert_close --------------------

# Each case builds (actual, expected, keywords) from a library (tg or torch) and its dtypes.
CASES = {
    "equal floats": lambda L: (L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.0, 3.0]), {}),
    "float32 one off": lambda L: (L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.1, 3.0]), {}),
    "float32 within tolerance": lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-6]), {}),
    "float64 2-d": lambda L: (L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64),
                              L.tensor([[1.0, 2.5], [3.0, 4.5]], dtype=L.float64), {}),
    "float16": lambda L: (L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float16),
                          L.tensor([[1.0, 2.0], [3.0, 4.1]], dtype=L.float16), {}),
    "float16 within 1e-3": lambda L: (L.tensor([1000.0], dtype=L.float16),
                                      L.tensor([1000.5], dtype=L.float16), {}),
    "ints exact": lambda L: (L.tensor([1, 2, 3]), L.tensor([1, 5, 3]), {}),
    "ints negative": lambda L: (L.tensor([[1, -2], [3, 4]]), L.tensor([[1, 2], [0, 4]]), {}),
    "int8": lambda L: (L.tensor([1, 2], dtype=L.int8), L.tensor([1, 9], dtype=L.int8), {}),
    "int8 extremes": lambda L: (L.tensor([-128, 1], dtype=L.int8), L.tensor([0, 1], dtype=L.int8), {}),
    "ints with tolerance": lambda L: (L.tensor([10, 20]), L.tensor([11, 20]), {"rtol": 0.1, "atol": 0.0}),
    "bools": lambda L: (L.tensor([True, False]), L.tensor([True, True]), {}),
    "complex": lambda L: (L.tensor([1 + 1j, 2 + 0j]), L.tensor([1 + 1j, 2.5 + 0j]), {}),
    "0-d": lambda L: (L.tensor(1.0), L.tensor(2.0), {}),
    "0-d int": lambda L: (L.tensor(3), L.tensor(5), {}),
    "nan mismatch": lambda L: (L.tensor([1.0, nan]), L.tensor([1.0, nan]), {}),
    "nan equal_nan": lambda L: (L.tensor([1.0, nan]), L.tensor([1.0, nan]), {"equal_nan": True}),
    "nan vs number": lambda L: (L.tensor([1.0, nan, 3.0]), L.tensor([2.0, 1.0, 3.0]), {}),
    "inf equal": lambda L: (L.tensor([inf, -inf]), L.tensor([inf, -inf]), {}),
    "inf vs big": lambda L: (L.tensor([inf]), L.tensor([1e30]), {}),
    "zeros expected": lambda L: (L.tensor([0.0, 2.0]), L.tensor([1.0, 0.0]), {}),
    "all mismatched": lambda L: (L.tensor([[1.0, 2.0, 3.0]]), L.tensor([[4.0, 6.0, 3.5]]), {}),
    "custom tolerances pass": lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.05, 2.0]),
                                         {"rtol": 0.1, "atol": 0.0}),
    "custom tolerances fail": lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.5, 2.0]),
                                         {"rtol": 0.1, "atol": 0.1}),
    "zero tolerances": lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.5]), {"rtol": 0, "atol": 0}),
    "only rtol": lambda L: (L.tensor([1.0]), L.tensor([1.0]), {"rtol": 1e-3}),
    "only atol": lambda L: (L.tensor([1.0]), L.tensor([1.0]), {"atol": 1e-3}),
    "shape": lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0, 3.0]), {}),
    "dtype": lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0], dtype=L.float64), {}),
    "dtype unchecked pass": lambda L: (L.tensor([1, 2]), L.tensor([1.0, 2.0]), {"check_dtype": False}),
    "dtype unchecked fail": lambda L: (L.tensor([1, 2]), L.tensor([1.0, 2.5]), {"check_dtype": False}),
    "float32 vs float64 unchecked": lambda L: (L.tensor([1.0, 2.0]),
                                               L.tensor([1.0, 2.0 + 1e-6], dtype=L.float64),
                                               {"check_dtype": False}),
    "stride unchecked": lambda L: (L.zeros(2, 3).t(), L.zeros(3, 2), {}),
    "stride checked": lambda L: (L.zeros(2, 3).t(), L.zeros(3, 2), {"check_stride": True}),
    "msg string": lambda L: (L.tensor([1.0]), L.tensor([2.0]), {"msg": "custom message"}),
    "msg callable": lambda L: (L.tensor([1.0, 2.0]), L.tensor([2.0, 2.0]), {"msg": lambda m: "<" + m + ">"}),
    "empty": lambda L: (L.zeros(0, 3), L.zeros(0, 3), {}),
    "numbers close": lambda L: (1.0, 1.0 + 1e-9, {}),
    "numbers far": lambda L: (1.0, 1.5, {}),
    "number zero": lambda L: (0.5, 0.0, {}),
    "int vs float": lambda L: (1, 1.0, {}),
    "int vs float unchecked": lambda L: (1, 1.0, {"check_dtype": False}),
    "ints": lambda L: (3, 4, {}),
    "complex numbers": lambda L: (1 + 2j, 1 + 2.5j, {}),
    "nan numbers": lambda L: (nan, nan, {}),
    "nan numbers equal_nan": lambda L: (nan, nan, {"equal_nan": True}),
    "numpy scalar": lambda L: (np.float32(1.0), 1.0001, {}),
    "bool vs bool": lambda L: (True, False, {}),
    "numpy bool": lambda L: (np.bool_(True), True, {}),
    "bool vs int": lambda L: (True, 1, {}),
    "None": lambda L: (None, None, {}),
    "None vs number": lambda L: (None, 1, {}),
    "strings": lambda L: ("a", "a", {}),
    "number vs string": lambda L: (1, "a", {}),
    "numpy arrays": lambda L: (np.array([1.0, 2.0]), np.array([1.0, 3.0]), {}),
    "numpy vs tensor": lambda L: (np.array([1.0, 2.0]), L.tensor([1.0, 2.0]), {}),
    "list": lambda L: ([1, L.tensor(2.0)], [1, L.tensor(3.0)], {}),
    "nested": lambda L: ({"a": [L.tensor([1.0]), 2], "b": (3.0,)},
                         {"a": [L.tensor([1.0]), 2], "b": (3.5,)}, {}),
    "nested callable msg": lambda L: ([L.tensor([1.0, 2.0])], [L.tensor([1.0, 3.0])],
                                      {"msg": lambda m: m.upper()}),
    "length": lambda L: ([1, 2], [1, 2, 3], {"msg": "ignored for structure"}),
    "keys": lambda L: ({"a": 1.0, "c": 2}, {"b": 1.5, "c": 2}, {}),
    "structure before values": lambda L: ([L.tensor([1.0]), {"a": 1}], [L.tensor([2.0]), {"b": 1}], {}),
    "tuple vs list": lambda L: ((1.0, 2.0), [1.0, 2.0], {}),
    "tensor vs list": lambda L: (L.tensor([1.0, 2.0]), [1.0, 2.0], {}),
}


def _outcome(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return type(error), str(error)
    return None, ""


def _torch_message(text):
    """PyTorch's message in tensorgrad's spelling: dtypes print as `float32`, shapes as tuples."""
    text = re.sub(r"torch\.Size\(\[([^\]]*)\]\)", lambda m: str(tuple(int(v) for v in m.group(1).split(", ")
                                                                     if v)), text)
    return text.replace("torch.Tensor", "tensorgrad.tensor.Tensor").replace("torch.", "")


@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_matches_torch(name):
    actual, expected, options = CASES[name](tg)
    t_actual, t_expected, t_options = CASES[name](torch)
    got = _outcome(lambda: tg.testing.assert_close(actual, expected, **options))
    want = _outcome(lambda: torch.testing.assert_close(t_actual, t_expected, **t_options))
    assert got[0] is want[0]
    if want[0] is RuntimeError:  # the text of an internal error is PyTorch's own wording
        assert got[1].startswith(want[1].split(" with")[0])
    else:
        assert got[1] == _torch_message(want[1])


def test_assert_close_parameter_subclass_and_allow_subclasses():
    p = tg.nn.Parameter(tg.tensor([1.0, 2.0]))
    tg.testing.assert_close(p, tg.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="No comparison pair"):
        tg.testing.assert_close(p, tg.tensor([1.0, 2.0]), allow_subclasses=False)
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="No comparison pair"):
        torch.testing.assert_close(tp, torch.tensor([1.0, 2.0]), allow_subclasses=False)


def test_assert_close_greatest_difference_in_a_random_tensor():
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64, np.int32, np.complex64):
        a = (rng.normal(size=(4, 5, 3)) * 10).astype(dtype)
        changed = rng.random(a.shape) < 0.3
        if dtype == np.int32:
            b = a + changed * rng.integers(-3, 4, a.shape).astype(dtype)
        else:
            b = a + changed * (rng.normal(size=a.shape) * 0.01).astype(dtype)
        got = _outcome(lambda: tg.testing.assert_close(tg.tensor(a), tg.tensor(b)))
        want = _outcome(lambda: torch.testing.assert_close(torch.tensor(a), torch.tensor(b)))
        assert got == (want[0], _torch_message(want[1]))


def test_assert_close_compares_without_recording_or_changing_inputs():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    tg.testing.assert_close(x * 2, tg.tensor([2.0, 4.0]))
    assert x.grad is None


# --- make_tensor ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "float32", "float64", "complex64", "complex128"])
def test_make_tensor_default_ranges(dtype):
    t = tg.testing.make_tensor(40, 50, dtype=getattr(tg, dtype), device="cpu")
    ref = torch.testing.make_tensor(40, 50, dtype=getattr(torch, dtype), device="cpu")
    assert t.shape == tuple(ref.shape) and t.dtype == getattr(tg, dtype) and t.is_contiguous()
    values, ref_values = t.numpy(), ref.numpy()
    parts = [values.real, values.imag] if values.dtype.kind == "c" else [values]
    for part in parts:
        part = part.astype(np.float64)
        low, high = (0, 1) if dtype == "bool" else ((0, 9) if dtype == "uint8" else (-9, 9))
        assert part.min() >= low and part.max() <= high
        assert part.max() - part.min() > (high - low) * 0.7  # spread over the range
    assert ref_values.astype(np.float64 if dtype[0] != "c" else np.complex128).real.min() >= -9


def test_make_tensor_options():
    t = tg.testing.make_tensor((3, 4), dtype=tg.float64, device="cpu", low=2, high=3, requires_grad=True)
    assert t.shape == (3, 4) and t.requires_grad and t.is_leaf
    assert t.detach().numpy().min() >= 2 and t.detach().numpy().max() < 3
    t = tg.testing.make_tensor(3, 4, dtype=tg.float32, device="cpu", noncontiguous=True)
    ref = torch.testing.make_tensor(3, 4, dtype=torch.float32, device="cpu", noncontiguous=True)
    assert t.shape == (3, 4) and not t.is_contiguous() and t.stride() == ref.stride()
    assert tg.testing.make_tensor(1, dtype=tg.float32, device="cpu", noncontiguous=True).is_contiguous()
    t = tg.testing.make_tensor(200, dtype=tg.int64, device="cpu", low=-1, high=2, exclude_zero=True)
    assert set(t.tolist()) <= {-1, 1}
    t = tg.testing.make_tensor(2, 3, 4, 5, dtype=tg.float32, device="cpu", memory_format=tg.channels_last)
    ref = torch.testing.make_tensor(2, 3, 4, 5, dtype=torch.float32, device="cpu",
                                    memory_format=torch.channels_last)
    assert t.stride() == ref.stride()
    t = tg.testing.make_tensor(1000, dtype=tg.float32, device="cpu", low=-1e38, high=3e38)
    assert np.isfinite(t.numpy()).all()
    t = tg.testing.make_tensor(50, dtype=tg.uint8, device="cpu", low=250.5, high=1000)
    assert t.numpy().min() >= 251  # low rounded up, high clamped to 256
    with pytest.warns(FutureWarning):
        t = tg.testing.make_tensor(3, dtype=tg.float32, device="cpu", low=1.0, high=1.0)


@pytest.mark.parametrize("call", [
    lambda L: L.testing.make_tensor(3, dtype=L.int64, device="cpu", requires_grad=True),
    lambda L: L.testing.make_tensor(3, dtype=L.float32, device="cpu", low=2, high=1),
    lambda L: L.testing.make_tensor(3, dtype=L.float32, device="cpu", low=nan),
    lambda L: L.testing.make_tensor(3, dtype=L.uint8, device="cpu", low=-10, high=-1),
    lambda L: L.testing.make_tensor(3, dtype=L.float32, device="cpu", noncontiguous=True,
                                    memory_format=L.contiguous_format),
])
def test_make_tensor_errors_match_torch(call):
    got, want = _outcome(lambda: call(tg)), _outcome(lambda: call(torch))
    assert got[0] is want[0] is ValueError
    assert got[1].split(",")[0].split(" but")[0] == _torch_message(want[1]).split(",")[0].split(" but")[0]


# --- signal.windows ------------------------------------------------------------------------------

WINDOWS = {
    "bartlett": {}, "blackman": {}, "cosine": {}, "hamming": {}, "hann": {}, "nuttall": {},
    "exponential": {"tau": 2.5}, "gaussian": {"std": 0.7}, "kaiser": {"beta": 5.0},
    "general_cosine": {"a": [0.46, 0.23, 0.31]}, "general_hamming": {"alpha": 0.6},
}


@pytest.mark.parametrize("name", list(WINDOWS))
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(name, sym, dtype):
    ours, theirs = getattr(tg.signal.windows, name), getattr(torch.signal.windows, name)
    for M in (0, 1, 2, 3, 7, 16):
        got = ours(M, sym=sym, dtype=getattr(tg, dtype), **WINDOWS[name])
        want = theirs(M, sym=sym, dtype=getattr(torch, dtype), **WINDOWS[name])
        assert got.dtype == getattr(tg, dtype) and got.shape == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6 if dtype == "float32" else 1e-13,
                                   atol=1e-7 if dtype == "float32" else 1e-15)
    # The defaults: symmetric, the default float
    np.testing.assert_allclose(ours(9, **WINDOWS[name]).numpy(), theirs(9, **WINDOWS[name]).numpy(),
                               atol=1e-6)
    assert ours(9, **WINDOWS[name]).dtype == tg.get_default_dtype()


def test_windows_defaults_and_exponential_center():
    got = tg.signal.windows.exponential(8, center=2.0, sym=False, dtype=tg.float64)
    want = torch.signal.windows.exponential(8, center=2.0, sym=False, dtype=torch.float64)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-14)
    np.testing.assert_allclose(tg.signal.windows.kaiser(10, dtype=tg.float64).numpy(),
                               torch.signal.windows.kaiser(10, dtype=torch.float64).numpy(), rtol=1e-13)
    # A periodic window is tg's *_window with periodic=True
    np.testing.assert_allclose(tg.signal.windows.hann(12, sym=False).numpy(), tg.hann_window(12).numpy(),
                               atol=1e-7)


def test_windows_requires_grad_builds_a_graph_as_torch():
    for name in WINDOWS:
        got = getattr(tg.signal.windows, name)(6, requires_grad=True, **WINDOWS[name])
        want = getattr(torch.signal.windows, name)(6, requires_grad=True, **WINDOWS[name])
        assert got.requires_grad == want.requires_grad and got.is_leaf == want.is_leaf, name
    assert tg.signal.windows.hann(0, requires_grad=True).is_leaf


@pytest.mark.parametrize("call", [
    lambda W, L: W.hann(-1),
    lambda W, L: W.kaiser(-3),
    lambda W, L: W.hann(4, dtype=L.float16),
    lambda W, L: W.bartlett(4, dtype=L.int64),
    lambda W, L: W.blackman(4, dtype=L.complex64),
    lambda W, L: W.exponential(4, tau=0),
    lambda W, L: W.exponential(4, center=1.0),
    lambda W, L: W.gaussian(4, std=-1.0),
    lambda W, L: W.kaiser(4, beta=-1.0),
    lambda W, L: W.general_cosine(4, a=[]),
    lambda W, L: W.general_cosine(4, a=3),
    lambda W, L: W.cosine(4, layout=None),
])
def test_window_errors_match_torch(call):
    got = _outcome(lambda: call(tg.signal.windows, tg))
    want = _outcome(lambda: call(torch.signal.windows, torch))
    assert got[0] is want[0] and got[0] is not None
    assert got[1] == _torch_message(want[1])


def test_window_signatures_match_torch():
    import inspect
    for name in torch.signal.windows.__all__:
        ours = inspect.signature(getattr(tg.signal.windows, name))
        theirs = inspect.signature(getattr(torch.signal.windows, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        for p, q in zip(ours.parameters.values(), theirs.parameters.values(), strict=True):
            assert p.kind == q.kind, (name, p.name)
            if p.name not in ("layout", "dtype", "device"):
                assert p.default == q.default, (name, p.name)


def test_assert_close_signature_matches_torch():
    import inspect
    for ours, theirs in ((tg.testing.assert_close, torch.testing.assert_close),
                         (tg.testing.make_tensor, torch.testing.make_tensor)):
        a, b = inspect.signature(ours), inspect.signature(theirs)
        assert [(p.name, p.kind, p.default) for p in a.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in b.parameters.values()]


def test_warnings_not_raised_for_ordinary_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.testing.assert_close(tg.signal.windows.hann(5), tg.signal.windows.hann(5))


def test_window_graphs_backpropagate_as_torch():
    for name in WINDOWS:
        got = getattr(tg.signal.windows, name)(5, requires_grad=True, dtype=tg.float64, **WINDOWS[name])
        want = getattr(torch.signal.windows, name)(5, requires_grad=True, dtype=torch.float64,
                                                   **WINDOWS[name])
        got.sum().backward()  # the graph runs back to the window's grid, as PyTorch's does
        want.sum().backward()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-13, atol=1e-15)
