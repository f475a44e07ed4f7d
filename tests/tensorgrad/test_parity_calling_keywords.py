"""PyTorch's keyword names on the functions of tensorgrad's namespace (`tg.reshape(x, shape=...)`,
`tg.max(x, other=y)`, `tg.det(input=a)`, `tg.linalg.lstsq(input=a, b=b)`...), each call run
through torch and tensorgrad alike and compared; and the keywords torch refuses, refused here too."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)
ARRAYS = {"X": _rng.standard_normal((2, 3)), "M": _rng.standard_normal((3, 3)) + 3 * np.eye(3),
          "D": _rng.standard_normal((2, 2, 6)), "N": np.array([[1.5, np.nan, -2.5], [np.nan, 4.0, 1.5]])}

# name: call(lib, t) with torch's keyword names; t("M") a float64 tensor of ARRAYS["M"]
KEYWORD_CALLS = {
    "reshape(shape=)": lambda lib, t: lib.reshape(input=t("X"), shape=(3, 2)),
    "reshape positional": lambda lib, t: lib.reshape(t("X"), (-1,)),
    "broadcast_to(size=)": lambda lib, t: lib.broadcast_to(input=t("X")[0], size=(2, 3)),
    "swapdims(dim0=, dim1=)": lambda lib, t: lib.swapdims(input=t("X"), dim0=0, dim1=1),
    "swapaxes(axis0=, axis1=)": lambda lib, t: lib.swapaxes(input=t("X"), axis0=1, axis1=0),
    "tensor_split(sections=)": lambda lib, t: lib.tensor_split(input=t("D"), sections=4, dim=2),
    "tensor_split(indices=)": lambda lib, t: lib.tensor_split(t("D"), indices=[1, -2], dim=-1),
    "tensor_split(tensor_indices_or_sections=)": lambda lib, t: lib.tensor_split(
        t("D"), tensor_indices_or_sections=lib.tensor([2, 5]), dim=2),
    "tensor_split(sections=tensor)": lambda lib, t: lib.tensor_split(t("D"), sections=lib.tensor(3), dim=2),
    "tensor_split positional": lambda lib, t: lib.tensor_split(t("D"), [1], 1),
    "hsplit(sections=)": lambda lib, t: lib.hsplit(input=t("X"), sections=3),
    "hsplit(indices=)": lambda lib, t: lib.hsplit(t("X"), indices=[2]),
    "vsplit(indices=)": lambda lib, t: lib.vsplit(t("X"), indices=[1]),
    "dsplit(sections=)": lambda lib, t: lib.dsplit(t("D"), sections=2),
    "split(tensor=)": lambda lib, t: lib.split(tensor=t("X"), split_size_or_sections=2, dim=1),
    "max(other=)": lambda lib, t: lib.max(input=t("X"), other=-t("X")),
    "min(other=)": lambda lib, t: lib.min(t("X"), other=-t("X")),
    "max(dim=, keepdim=)": lambda lib, t: lib.max(input=t("X"), dim=1, keepdim=True),
    "min positional dim": lambda lib, t: lib.min(t("X"), 0),
    "nanmean(dtype=)": lambda lib, t: lib.nanmean(t("N").float(), dtype=lib.float64),
    "nanmean(dim, dtype=)": lambda lib, t: lib.nanmean(t("N"), 1, True, dtype=lib.float32),
    "nansum(dtype=) int": lambda lib, t: lib.nansum(t("N"), dtype=lib.int64),
    "nansum(dim, dtype=) float": lambda lib, t: lib.nansum((t("X") * 3).int(), 1, dtype=lib.float32),
    "isin(elements=, test_elements=)": lambda lib, t: lib.isin(elements=t("X"), test_elements=t("X")[0]),
    "isin(test_element=)": lambda lib, t: lib.isin(t("N"), test_element=1.5, invert=True),
    "isin(element=)": lambda lib, t: lib.isin(element=4.0, test_elements=t("N")),
    "isin(assume_unique=)": lambda lib, t: lib.isin(t("X"), test_elements=t("X"), assume_unique=True),
    "unique_consecutive(input=)": lambda lib, t: lib.unique_consecutive(input=lib.tensor([1, 1, 2, 1])),
    "det(input=)": lambda lib, t: lib.det(input=t("M")),
    "inverse(input=)": lambda lib, t: lib.inverse(input=t("M")),
    "slogdet(input=)": lambda lib, t: lib.slogdet(input=t("M")),
    "logdet(input=)": lambda lib, t: lib.logdet(input=t("M")),
    "linalg.det(A=)": lambda lib, t: lib.linalg.det(A=t("M")),
    "linalg.inv(A=)": lambda lib, t: lib.linalg.inv(A=t("M")),
    "linalg.slogdet(A=)": lambda lib, t: tuple(lib.linalg.slogdet(A=t("M"))),
    "linalg.lstsq(input=, b=)": lambda lib, t: lib.linalg.lstsq(input=t("M"), b=t("X").mT, driver="gelsd"),
    "linalg.svd(driver=None)": lambda lib, t: lib.linalg.svd(A=t("M"), full_matrices=False, driver=None).S,
    "linalg.svdvals(driver=None)": lambda lib, t: lib.linalg.svdvals(A=t("M"), driver=None),
}


def _tensor(lib):
    return lambda name: lib.tensor(ARRAYS[name])


def _flat(result):
    """A result as a list of (dtype, values): one entry per tensor of a tuple or named tuple."""
    parts = result if isinstance(result, tuple | list) else (result,)
    return [(str(p.dtype).removeprefix("torch."), np.asarray(p.tolist(), dtype=float)) for p in parts]


@pytest.mark.parametrize("name", KEYWORD_CALLS)
def test_keyword_call_matches_torch(name):
    call = KEYWORD_CALLS[name]
    want, got = call(torch, _tensor(torch)), call(tg, _tensor(tg))
    assert type(got).__name__ == type(want).__name__ or not isinstance(want, tuple), name
    want, got = _flat(want), _flat(got)
    assert len(got) == len(want), name
    for (want_dtype, want_values), (got_dtype, got_values) in zip(want, got, strict=True):
        assert got_dtype == want_dtype, name
        np.testing.assert_allclose(got_values, want_values, rtol=1e-5, atol=1e-6, equal_nan=True,
                                   err_msg=name)


# The keywords torch refuses (the other alias's names, both forms at once, a driver on the CPU).
REFUSED = {
    "swapdims(axis0=)": (lambda lib, t: lib.swapdims(t("X"), axis0=0, axis1=1), TypeError),
    "det(A=)": (lambda lib, t: lib.det(A=t("M")), TypeError),
    "linalg.det(input=)": (lambda lib, t: lib.linalg.det(input=t("M")), TypeError),
    "linalg.lstsq(A=, B=)": (lambda lib, t: lib.linalg.lstsq(A=t("M"), B=t("M")), TypeError),
    "max(other=, dim=)": (lambda lib, t: lib.max(t("X"), other=t("X"), dim=1), TypeError),
    "isin(elements=, element=)": (lambda lib, t: lib.isin(elements=t("X"), element=1.0, test_elements=t("X")),
                                  TypeError),
    "nanmean(dtype=int64)": (lambda lib, t: lib.nanmean(t("X"), dtype=lib.int64), RuntimeError),
    "linalg.svd(driver=) on CPU": (lambda lib, t: lib.linalg.svd(t("M"), driver="gesvd"), RuntimeError),
    "linalg.svdvals(driver=) on CPU": (lambda lib, t: lib.linalg.svdvals(t("M"), driver="gesvdj"),
                                       RuntimeError),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_keyword_matches_torch(name):
    call, error = REFUSED[name]
    with pytest.raises(error):
        call(torch, _tensor(torch))
    with pytest.raises(error):
        call(tg, _tensor(tg))


def test_keyword_results_keep_gradients():
    """The keyword forms are the same ops: gradients flow as through the positional ones."""
    grads = {}
    for lib in (torch, tg):
        x = lib.tensor(ARRAYS["X"], requires_grad=True)
        m = lib.tensor(ARRAYS["M"], requires_grad=True)
        y = lib.max(input=x, other=x.flip(1) * 0.5) * lib.tensor([1.0, 2.0, 3.0])
        z = lib.reshape(y, shape=(6,)).sum() + lib.det(input=m) + lib.slogdet(input=m).logabsdet
        z = z + lib.nansum(x, dtype=lib.float32).double() + lib.swapdims(x, dim0=0, dim1=1)[2, 1]
        z.backward()
        grads[lib] = (np.asarray(x.grad.tolist()), np.asarray(m.grad.tolist()))
    for got, want in zip(grads[tg], grads[torch], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_det_is_its_own_function():
    """tg.det takes PyTorch's `input`, tg.linalg.det its `A`: two functions, one computation."""
    assert tg.det is not tg.linalg.det and tg.inverse is not tg.linalg.inv
    m = tg.tensor(ARRAYS["M"])
    assert float(tg.det(m)) == float(tg.linalg.det(m))
