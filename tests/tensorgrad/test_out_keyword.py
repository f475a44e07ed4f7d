"""`out=`: the result written into a tensor the caller has, with PyTorch's dtype rule for each op
(cast, exact or computed in out's dtype), its resizing, its refusal to record gradients."""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.out import RULES

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.uniform(0.2, 0.9, (3, 4)).astype(np.float32)
Y = RNG.uniform(0.2, 0.9, (3, 4)).astype(np.float32)
SQUARE = (RNG.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)


def _lib(m):
    return {"": m, "linalg": m.linalg, "special": m.special, "fft": m.fft}


# name -> (arguments as a function of the library, then keyword arguments)
CALLS = {
    "add": lambda m: ((m.tensor(X), m.tensor(Y)), {"alpha": 2}),
    "sub": lambda m: ((m.tensor(X), m.tensor(Y)), {}),
    "mul": lambda m: ((m.tensor(X), 3), {}),
    "div": lambda m: ((m.tensor(X), m.tensor(Y)), {"rounding_mode": "floor"}),
    "pow": lambda m: ((m.tensor(X), 2), {}),
    "exp": lambda m: ((m.tensor(X),), {}),
    "sqrt": lambda m: ((m.tensor(X),), {}),
    "tanh": lambda m: ((m.tensor(X),), {}),
    "eq": lambda m: ((m.tensor(X), m.tensor(X)), {}),
    "maximum": lambda m: ((m.tensor(X), m.tensor(Y)), {}),
    "clamp": lambda m: ((m.tensor(X), 0.3, 0.6), {}),
    "where": lambda m: ((m.tensor(X) > 0.5, m.tensor(X), m.tensor(Y)), {}),
    "cat": lambda m: (([m.tensor(X), m.tensor(Y)],), {"dim": 1}),
    "stack": lambda m: (([m.tensor(X), m.tensor(Y)],), {}),
    "mean": lambda m: ((m.tensor(X), 0), {}),
    "logsumexp": lambda m: ((m.tensor(X), 1), {}),
    "sum": lambda m: ((m.tensor(X), 0), {}),
    "prod": lambda m: ((m.tensor(X), 1), {}),
    "cumsum": lambda m: ((m.tensor(X), 1), {}),
    "matmul": lambda m: ((m.tensor(X), m.tensor(Y).T), {}),
    "mm": lambda m: ((m.tensor(X), m.tensor(Y).T), {}),
    "addmm": lambda m: ((m.tensor(SQUARE), m.tensor(X), m.tensor(Y).T), {"beta": 0.5}),
    "abs": lambda m: ((m.tensor(X) - 0.5,), {}),
    "round": lambda m: ((m.tensor(X) * 10,), {}),
    "tril": lambda m: ((m.tensor(X),), {"diagonal": 1}),
    "amax": lambda m: ((m.tensor(X), 1), {}),
    "norm": lambda m: ((m.tensor(X),), {"dim": 0}),
    "arange": lambda m: ((1, 7, 2), {}),
    "linspace": lambda m: ((0, 1, 5), {}),
    "zeros": lambda m: ((2, 3), {}),
    "full": lambda m: (((2, 2), 7), {}),
    "eye": lambda m: ((3,), {}),
    "linalg.inv": lambda m: ((m.tensor(SQUARE),), {}),
    "linalg.vector_norm": lambda m: ((m.tensor(X),), {"ord": 3}),
    "linalg.matrix_power": lambda m: ((m.tensor(SQUARE), 3), {}),
    "special.expit": lambda m: ((m.tensor(X),), {}),
    "special.xlogy": lambda m: ((m.tensor(X), m.tensor(Y)), {}),
    "fft.rfft": lambda m: ((m.tensor(X),), {}),
    "sigmoid": lambda m: ((m.tensor(X),), {}),
    "argmax": lambda m: ((m.tensor(X), 1), {}),
    "softmax": lambda m: ((m.tensor(X), 1), {}),
    "tensordot": lambda m: ((m.tensor(X), m.tensor(Y).T), {"dims": 1}),
    "isin": lambda m: ((m.tensor(X), m.tensor(X[0])), {}),
    "linalg.matrix_rank": lambda m: ((m.tensor(SQUARE),), {}),
    "fft.irfft": lambda m: ((m.tensor(X).to(m.complex64),), {}),
}


def _function(m, name):
    prefix, _, base = name.rpartition(".")
    return getattr(_lib(m)[prefix], base)


def _rule(name):
    return next(rule for rule, names in RULES.items() if name in names)


def _run(m, name, out_dtype, out_shape=(0,)):
    args, kwargs = CALLS[name](m)
    out = m.empty(out_shape, dtype=getattr(m, out_dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = _function(m, name)(*args, **kwargs, out=out)
        except (RuntimeError, TypeError, NotImplementedError) as error:
            return type(error)
    assert result is out
    return out


def _same(ours, theirs):
    if isinstance(theirs, type):
        assert isinstance(ours, type) and issubclass(ours, theirs), f"tensorgrad: {ours}, PyTorch: {theirs}"
        return
    assert not isinstance(ours, type), f"tensorgrad raised {ours}, PyTorch wrote {theirs}"
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64", "complex64", "bool"])
def test_out_follows_pytorchs_dtype_rule(name, out_dtype):
    _same(_run(tg, name, out_dtype), _run(torch, name, out_dtype))


@pytest.mark.parametrize("name", ["add", "exp", "sum", "matmul", "cat", "linalg.inv"])
def test_out_of_another_shape_is_resized_with_pytorchs_warning(name):
    for m in (torch, tg):
        args, kwargs = CALLS[name](m)
        expected = _function(m, name)(*args, **kwargs)
        out = m.full((7,), 5.0, dtype=expected.dtype)
        resized = "^An output with one or more elements was resized since it had shape \\[7\\]"
        with pytest.warns(UserWarning, match=resized):
            _function(m, name)(*args, **kwargs, out=out)
        assert tuple(out.shape) == tuple(expected.shape)
        np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name, warning", [
    ("linspace", None), ("zeros", None), ("arange", "number of elements in the out tensor of shape \\[7\\]"),
])
def test_factories_resize_out_as_pytorchs(name, warning):
    for m in (torch, tg):
        args, kwargs = CALLS[name](m)
        out = m.full((7,), 5.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _function(m, name)(*args, **kwargs, out=out)
        messages = [str(w.message) for w in caught]
        assert messages == [] if warning is None else any(re.search(warning, text) for text in messages)
        np.testing.assert_allclose(out.numpy(), _function(m, name)(*args, **kwargs).float().numpy())


def test_out_refuses_to_record_gradients_as_pytorch():
    for m in (torch, tg):
        x = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
            m.exp(x, out=m.empty(3))
        with m.no_grad():
            out = m.exp(x, out=m.empty(3))
        assert not out.requires_grad and out.tolist() == pytest.approx([np.e] * 3)


def test_several_results_go_into_a_tuple_of_tensors():
    for m in (torch, tg):
        x = m.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
        values, indices = m.empty(0), m.empty(0, dtype=m.int64)
        result = m.max(x, 1, out=(values, indices))
        assert result.values is values and result.indices is indices
        assert values.tolist() == [3.0, 5.0] and indices.tolist() == [0, 1]
        result = m.sort(x, 1, descending=True, out=(m.empty(0), m.empty(0, dtype=m.int64)))
        assert result.values.tolist() == [[3.0, 2.0, 1.0], [5.0, 4.0, 0.0]]
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
            m.topk(x, 2, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64)))


def test_clamp_casts_into_out_only_with_tensor_bounds_as_pytorch():
    for m in (torch, tg):
        x = m.tensor(X)
        out = m.empty(0, dtype=m.float64)
        m.clamp(x, m.tensor(0.3), m.tensor(0.6), out=out)
        np.testing.assert_allclose(out.numpy(), np.clip(X, 0.3, 0.6), rtol=1e-6)
        with pytest.raises(RuntimeError):
            m.clamp(x, 0.3, 0.6, out=m.empty(0, dtype=m.float64))
        with pytest.raises(RuntimeError, match="does not support the out kwarg when as_tuple is True"):
            m.nonzero(x, as_tuple=True, out=m.empty(0, dtype=m.int64))


def test_random_ops_and_aminmax_write_into_out():
    for m in (torch, tg):
        low, high = m.empty(0), m.empty(0)
        assert m.aminmax(m.tensor([3.0, -1.0, 2.0]), out=(low, high)).max is high
        assert (low.item(), high.item()) == (-1.0, 3.0)
        drawn = m.empty(0, dtype=m.int64)
        assert m.multinomial(m.ones(4), 2, out=drawn) is drawn and drawn.shape == (2,)
        with pytest.raises(RuntimeError):
            m.multinomial(m.ones(4), 2, out=m.empty(0))
        coins = m.empty(0, dtype=m.float64)
        assert m.bernoulli(m.full((5,), 0.5), out=coins) is coins and coins.dtype == m.float64


def test_an_elementwise_op_may_write_over_its_input():
    for m in (torch, tg):
        a = m.tensor([1.0, 2.0, 3.0])
        m.add(a, a, out=a)
        assert a.tolist() == [2.0, 4.0, 6.0]
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            m.add(a, a, out=m.zeros(1).expand(3))


def test_every_op_in_the_table_takes_out():
    modules = {"": tg, "linalg": tg.linalg, "special": tg.special, "fft": tg.fft}
    for rule, names in RULES.items():
        assert rule in ("cast", "exact", "dtype", "floating")
        for name in names:
            prefix, _, base = name.rpartition(".")
            function = getattr(modules[prefix], base)
            assert "out" in inspect.signature(function).parameters, name
            assert function.__doc__, name
    assert tg.add(tg.ones(2), 1).tolist() == [2.0, 2.0]       # (no out: the op as it was)
    assert _rule("add") == "cast" and _rule("mm") == "exact" and _rule("sum") == "dtype"


@pytest.mark.parametrize("name", ["mul", "exp", "where", "clamp", "scatter_add", "index_select", "sum", "cat",
                                  "matmul"])
def test_an_expanded_out_of_another_shape_is_refused_or_resized_as_pytorch_does(name):
    """PyTorch's elementwise kernels (and the scatters) refuse an out whose elements share memory
    before resizing it; the others resize it first, and the expand is gone."""
    torch = pytest.importorskip("torch")
    calls = {
        "mul": lambda lib, out: lib.mul(lib.ones(3), 2, out=out),
        "exp": lambda lib, out: lib.exp(lib.ones(3), out=out),
        "where": lambda lib, out: lib.where(lib.ones(3) > 0, lib.ones(3), lib.zeros(3), out=out),
        "clamp": lambda lib, out: lib.clamp(lib.ones(3), 0, 1, out=out),
        "scatter_add": lambda lib, out: lib.scatter_add(lib.ones(3), 0, lib.tensor([0, 1]), lib.ones(2),
                                                        out=out),
        "index_select": lambda lib, out: lib.index_select(lib.ones(3, 6), 1, lib.tensor([0, 1]), out=out),
        "sum": lambda lib, out: lib.sum(lib.ones(3, 2), 1, out=out),
        "cat": lambda lib, out: lib.cat([lib.ones(3)], out=out),
        "matmul": lambda lib, out: lib.matmul(lib.ones(3, 2), lib.ones(2), out=out),
    }
    outcomes = []
    for lib in (tg, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcomes.append(tuple(calls[name](lib, lib.zeros(1).expand(5)).shape))
        except RuntimeError as error:
            assert "more than one element of the written-to tensor" in str(error)
            outcomes.append("refused")
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("name", ["sum", "prod"])
def test_a_full_sum_or_prod_takes_no_out_as_in_pytorch(name):
    with pytest.raises(TypeError, match=f"{name}\\(\\) received an invalid combination of arguments"):
        getattr(tg, name)(tg.ones(3), out=tg.empty(()))
    expected = [3.0, 3.0] if name == "sum" else [1.0, 1.0]
    assert getattr(tg, name)(tg.ones(3, 2), 0, out=tg.empty(2)).tolist() == expected


@pytest.mark.parametrize("call", [
    lambda m, c, x, o: m.where(c, x, 0.0, out=o),
    lambda m, c, x, o: m.where(c, 2.0, x, out=o),
    lambda m, c, x, o: m.where(c, x, other=1.0, out=o),
    lambda m, c, x, o: m.where(c, input=2.0, other=x, out=o),
    lambda m, c, x, o: m.where([True, False], x, x, out=o),
    lambda m, c, x, o: m.where(c, out=o),
    lambda m, c, x, o: m.where(c, x, x * 3, out=o),
])
def test_where_takes_out_in_its_all_tensor_form_only_as_pytorchs(call):
    def run(m):
        try:
            return call(m, m.tensor([True, False]), m.tensor([1.0, 2.0]), m.zeros(2)).tolist()
        except TypeError as error:
            return str(error).split(":")[0] if "combination" in str(error) else str(error)
    assert run(tg) == run(torch)
