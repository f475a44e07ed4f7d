"""PyTorch parity of memory formats (`clone`, `*_like`, `to` keep a dense input's layout),
deepcopy and pickle of tensors, integer and complex `linspace`/`logspace`, and the argument
checks of the random functions, each compared with PyTorch side by side."""

import copy
import pickle

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _inputs(M):
    b = M.arange(24.0).reshape(2, 3, 4)
    return {"T": M.ones(3, 4).t(), "perm": b.permute(2, 0, 1), "step": b[:, ::2],
            "stepT": b.permute(2, 0, 1)[::2], "expand": M.ones(3, 1).expand(3, 4),
            "size1": M.ones(3, 1, 4).transpose(0, 2),
            "expandT": M.ones(4, 1, 3).expand(4, 5, 3).transpose(0, 2)}


LAYOUT_OPS = {
    "clone": lambda M, x: x.clone(), "tg.clone": lambda M, x: M.clone(x),
    "clone_contiguous": lambda M, x: x.clone(memory_format=M.contiguous_format),
    "to64": lambda M, x: x.to(M.float64), "double": lambda M, x: x.double(), "long": lambda M, x: x.long(),
    "to_copy": lambda M, x: x.to(M.float32, copy=True),
    "to_positional_copy": lambda M, x: x.to(M.float32, False, True),
    "to_contiguous": lambda M, x: x.to(M.float64, memory_format=M.contiguous_format),
    "zeros_like": lambda M, x: M.zeros_like(x), "full_like": lambda M, x: M.full_like(x, 2),
    "empty_like": lambda M, x: M.empty_like(x), "randn_like": lambda M, x: M.randn_like(x),
    "randint_like": lambda M, x: M.randint_like(x, 5),
    "ones_like_contiguous": lambda M, x: M.ones_like(x, memory_format=M.contiguous_format),
}


@pytest.mark.parametrize("op", LAYOUT_OPS)
def test_layout_kept_as_pytorch(op):
    for kind, x in _inputs(torch).items():
        want = LAYOUT_OPS[op](torch, x)
        got = LAYOUT_OPS[op](tg, _inputs(tg)[kind])
        assert (got.shape, got.stride()) == (tuple(want.shape), want.stride()), (op, kind)
        assert str(got.dtype) == str(want.dtype).removeprefix("torch.")
        if op in ("clone", "to64", "long", "full_like"):
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_memory_format_arguments():
    x = tg.ones(3, 4).t()
    assert x.to(tg.float32, copy=True) is not x and x.to(tg.float32) is x
    assert x.contiguous(memory_format=tg.contiguous_format).stride() == (3, 1)
    assert tg.ones(2).contiguous(memory_format=tg.preserve_format).stride() == (1,)
    with pytest.raises(RuntimeError):
        x.contiguous(memory_format=tg.preserve_format)  # as torch: only when a copy is needed
    with pytest.raises(TypeError):
        x.clone(memory_format="contiguous")
    with pytest.raises(TypeError):
        x.clone(tg.contiguous_format)
    assert pickle.loads(pickle.dumps(tg.preserve_format)) is tg.preserve_format
    y = tg.ones(2, 3, requires_grad=True)
    y.t().clone().sum().backward()
    np.testing.assert_array_equal(y.grad, np.ones((2, 3)))
    for name in ("new_zeros", "new_ones"):
        assert getattr(tg.ones(2), name)(size=(2, 3)).shape == (2, 3)
    assert tg.ones(2).new_empty(size=(2, 3)).shape == (2, 3)
    for call in (lambda M: M.full(2, 1.0), lambda M: M.ones(2).new_full(2, 1.0), lambda M: M.randint(5, 3),
                 lambda M: M.normal(0.0, 1.0, 3)):
        with pytest.raises(TypeError):
            call(torch)
        with pytest.raises(TypeError):
            call(tg)


def _leaf_with_grad(M):
    x = M.tensor([1.0, 2.0], dtype=M.float64, requires_grad=True)
    (x * x).sum().backward()
    return x


def test_deepcopy_and_pickle():
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(tg.ones(2, requires_grad=True) * 2)
    for M in (torch, tg):
        y = copy.deepcopy(_leaf_with_grad(M))
        assert y.requires_grad and y.is_leaf and np.asarray(y.grad).tolist() == [2.0, 4.0]
        assert "float64" in str(y.dtype)
        assert type(copy.deepcopy(M.nn.Parameter(M.ones(2)))).__name__ == "Parameter"
        linear = M.nn.Linear(2, 3)
        twin = copy.deepcopy(linear)
        assert twin.weight is not linear.weight and type(twin.weight).__name__ == "Parameter"
        assert copy.deepcopy(M.arange(6.0).reshape(2, 3).t()).stride() == (1, 3)
        back = pickle.loads(pickle.dumps(M.ones(2, requires_grad=True) * 2))  # the graph is dropped
        assert back.is_leaf and back.requires_grad and back.tolist() == [2.0, 2.0] and back.grad is None
        assert type(pickle.loads(pickle.dumps(M.nn.Parameter(M.ones(2))))).__name__ == "Parameter"


SPACING = [
    ("logspace", (-1.5, 1.5, 4), "int64"), ("logspace", (0, 5, 6, 2.0), "int32"),
    ("logspace", (2.5, 3, 1), "int64"), ("linspace", (0.5, 3.7, 3), "int64"),
    ("linspace", (-7, 3, 6), "int32"), ("linspace", (2.5, 3, 1), "int64"),
    ("linspace", (1 + 2j, 3 - 1j, 4), None), ("linspace", (0, 3j, 4), None), ("logspace", (1j, 2, 3), None),
    ("linspace", (-0.16, 5.97, 4), "uint8"), ("linspace", (3.48, -3.13, 1), "uint8"),
    ("linspace", (5.0, -3.0, 0), "uint8"), ("logspace", (5.42, -0.35, 1), "int8"),
    ("linspace", (1 + 2j, 3, 4), "float32"), ("linspace", (0, 1, 3), "bool"), ("logspace", (0, 1, 3), "bool"),
]


@pytest.mark.parametrize("op,args,dtype", SPACING)
def test_spacing_as_pytorch(op, args, dtype):
    options = {} if dtype is None else {"dtype": dtype}
    want, got = _outcomes(lambda M: getattr(M, op)(*args, **{k: getattr(M, v) for k, v in options.items()}))
    if isinstance(want, Exception):
        assert isinstance(got, type(want)), (want, got)
        return
    assert str(got.dtype) == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


RANDOM = {
    "multinomial 0 categories": lambda M: M.multinomial(M.ones(2, 0), 1),
    "multinomial too many": lambda M: M.multinomial(M.tensor([[0.2, 0.8]]), 3),
    "bernoulli int": lambda M: M.bernoulli(M.ones(2, 3, dtype=M.int64)),
    "bernoulli bool": lambda M: M.bernoulli(M.ones(2, dtype=M.bool)),
    "bernoulli f64": lambda M: M.bernoulli(M.full((2,), 0.5, dtype=M.float64)),
    "normal int mean": lambda M: M.normal(M.zeros(2, dtype=M.int64), 1.0),
    "normal int dtype": lambda M: M.normal(0.0, 1.0, (2,), dtype=M.int64),
    "normal broadcast": lambda M: M.normal(M.zeros(2, 1), M.ones(3)),
    "normal float mean": lambda M: M.normal(1.0, M.ones(2, 3, dtype=M.float64)),
    "poisson 0-d": lambda M: M.poisson(M.tensor(3.0)),
    "randperm uint8 overflow": lambda M: M.randperm(300, dtype=M.uint8),
    "randperm bool": lambda M: M.randperm(3, dtype=M.bool),
    "randperm float16": lambda M: M.randperm(3, dtype=M.float16),
    "randint uint8 high": lambda M: M.randint(0, 300, (2,), dtype=M.uint8),
    "randint uint8 low": lambda M: M.randint(-5, 0, (2,), dtype=M.uint8),
    "randint int8": lambda M: M.randint(-5, 0, (2, 1), dtype=M.int8),
}


def _outcomes(call):
    """call(torch) and call(tg): each result, or the exception it raised."""
    results = []
    for M in (torch, tg):
        try:
            results.append(call(M))
        except Exception as error:  # noqa: BLE001 - compared by the caller
            results.append(error)
    return results


@pytest.mark.parametrize("case", RANDOM)
def test_random_arguments_as_pytorch(case):
    want, got = _outcomes(RANDOM[case])
    if isinstance(want, Exception):
        assert isinstance(got, type(want)), (want, got)
        return
    assert (tuple(got.shape), str(got.dtype)) == (tuple(want.shape), str(want.dtype).removeprefix("torch."))
