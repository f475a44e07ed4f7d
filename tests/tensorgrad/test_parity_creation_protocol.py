"""Creation functions and the tensor protocol, side by side with PyTorch: dtype inference of
`tensor`, `full` and `arange`, the size forms of `zeros`, `from_numpy`'s refusals, and the dunders
(`in`, `== None`, `numpy(force=True)`, strides of empty tensors)."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

CASES = {
    "empty list is float": lambda M: M.tensor([]),
    "[[]] is float (1, 0)": lambda M: M.tensor([[]]),
    "python complex is complex64": lambda M: M.tensor([1 + 2j, 3]),
    "np.float64 beside a float": lambda M: M.tensor([2.0, np.float64(1.5)]),
    "np.int32 beside a float": lambda M: M.tensor([np.int32(1), 1.5]),
    "np.float16 beside an int": lambda M: M.tensor([np.float16(1), np.int64(2)]),
    "int tensor beside a float": lambda M: M.tensor([M.tensor(1), 2.5]),
    "one-element tensors count as numbers": lambda M: M.tensor([M.ones(1, 1), M.ones(1, 1)]),
    "range": lambda M: M.tensor(range(3)),
    "-1 wraps into uint8": lambda M: M.tensor([-1, -200], dtype=M.uint8),
    "big int to float64": lambda M: M.tensor(2**63, dtype=M.float64),
    "np uint8 scalars": lambda M: M.tensor([np.uint8(1), np.uint8(200)]),
    "zeros(size=)": lambda M: M.zeros(size=(2, 3)),
    "ones(size=)": lambda M: M.ones(size=[2]),
    "full int": lambda M: M.full((2,), 1),
    "full bool": lambda M: M.full((2,), True),
    "full complex": lambda M: M.full((2,), 1j),
    "full np.int32": lambda M: M.full((2,), np.int32(2)),
    "full 0-d tensor": lambda M: M.full((2,), M.tensor(3)),
    "arange end=": lambda M: M.arange(end=4),
    "arange int dtype float step": lambda M: M.arange(5, 1, -1.5, dtype=M.int32),
    "arange int dtype small step": lambda M: M.arange(-1, 1, 0.4, dtype=M.int32),
    "arange float step": lambda M: M.arange(0, 1, 0.1),
    "stride of empty": lambda M: M.zeros(0, 2).stride(),
    "1.0 in 0-d": lambda M: 2.5 in M.tensor(2.5),
    "2.0 in 2-d": lambda M: 2.0 in M.arange(6.0).reshape(2, 3),
    "tensor in tensor": lambda M: M.tensor([7.0]) in M.arange(6.0),
    "== None": lambda M: M.ones(2) == None,  # noqa: E711
    "!= None": lambda M: M.ones(2) != None,  # noqa: E711
    "== str": lambda M: M.ones(2) == "a",
    "numpy(force=True)": lambda M: M.tensor([1.0], requires_grad=True).numpy(force=True),
}

ERRORS = {
    "ragged": (lambda M: M.tensor([[1, 2], [3]]), ValueError),
    "scalar beside a list": (lambda M: M.tensor([1, [2]]), TypeError),
    "None": (lambda M: M.tensor([1, None]), RuntimeError),
    "None with dtype": (lambda M: M.tensor(None, dtype=M.float64), TypeError),
    "str with dtype": (lambda M: M.tensor("a", dtype=M.bool), TypeError),
    "int beyond int64": (lambda M: M.tensor(2**63), ValueError),
    "300 into uint8": (lambda M: M.tensor([300], dtype=M.uint8), RuntimeError),
    "nan into int64": (lambda M: M.tensor([float("nan")], dtype=M.int64), RuntimeError),
    "complex into int": (lambda M: M.tensor([1j], dtype=M.int64), TypeError),
    "multi-element tensor in a list": (lambda M: M.tensor([M.ones(2)]), ValueError),
    "int requires grad": (lambda M: M.tensor([1, 2], requires_grad=True), RuntimeError),
    "from_numpy strings": (lambda M: M.from_numpy(np.array(["a"])), TypeError),
    "from_numpy byte order": (lambda M: M.from_numpy(np.ones(2, ">f4")), ValueError),
    "from_numpy negative stride": (lambda M: M.from_numpy(np.arange(3.0)[::-1]), ValueError),
    "zeros no size": (lambda M: M.zeros(), TypeError),
    "rand int dtype": (lambda M: M.rand(2, dtype=M.int64), RuntimeError),
    "randn int dtype": (lambda M: M.randn(2, dtype=M.int32), RuntimeError),
    "full str": (lambda M: M.full((2,), "a"), TypeError),
    "full None": (lambda M: M.full((2,), None), TypeError),
    "full 300 uint8": (lambda M: M.full((2,), 300, dtype=M.uint8), RuntimeError),
    "full complex into float": (lambda M: M.full((2,), 1j, dtype=M.float32), RuntimeError),
    "arange nan": (lambda M: M.arange(float("nan")), RuntimeError),
    "arange inf": (lambda M: M.arange(0, float("inf")), RuntimeError),
    "arange step 0": (lambda M: M.arange(0, 3, 0), RuntimeError),
    "arange bool": (lambda M: M.arange(2, dtype=M.bool), RuntimeError),
    "len of 0-d": (lambda M: len(M.tensor(1.0)), TypeError),
    "bool of many": (lambda M: bool(M.ones(2)), RuntimeError),
    "item of many": (lambda M: M.ones(2).item(), RuntimeError),
    "float as index": (lambda M: [1, 2][M.tensor(1.0)], TypeError),
}


def _plain(result):
    if isinstance(result, torch.Tensor | tg.Tensor):
        data = result.detach().numpy() if isinstance(result, torch.Tensor) else np.asarray(result.data)
        if data.dtype.kind == "f":  # (float32 steps may differ in the last bit)
            data = np.round(data.astype(np.float64), 6)
        return "tensor", str(result.dtype).replace("torch.", ""), data.shape, data.tolist()
    if isinstance(result, np.ndarray):
        return "array", str(result.dtype), result.shape, result.tolist()
    return type(result).__name__, tuple(result) if isinstance(result, tuple) else result


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    make = CASES[name]
    assert _plain(make(tg)) == _plain(make(torch))


@pytest.mark.parametrize("name", ERRORS)
def test_raises_as_torch(name):
    make, error = ERRORS[name]
    with pytest.raises(error):
        make(torch)
    with pytest.raises(error):
        make(tg)


def test_python_floats_follow_the_default_dtype():
    tg.set_default_dtype(tg.float64)
    try:
        assert tg.tensor([1.5, 2]).dtype == tg.float64 and tg.tensor([1j]).dtype == np.complex128
    finally:
        tg.set_default_dtype(tg.float32)
