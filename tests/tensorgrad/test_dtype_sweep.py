"""Every elementwise op and reduction over every dtype, against PyTorch.

The op tables check gradients on float64; this sweep checks the dtype rules, which live in many
places (integer and bool inputs, mixed dtypes, 0-d tensors and Python numbers beside a tensor):
wherever PyTorch gives an answer, tensorgrad gives the same dtype and values. Where PyTorch
raises, tensorgrad may be more lenient (it takes a Python number where `torch.maximum` wants a
tensor, and multiplies bool matrices), so only the first direction is asserted, plus the
errors PyTorch raises on purpose (`-` with a bool tensor), which are asserted elsewhere.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
VALUES = {"bool": [True, False, True], "uint8": [0, 3, 200], "int8": [-5, 0, 7], "int16": [-300, 2, 9],
          "int32": [-7, 0, 11], "int64": [-9, 4, 13], "float16": [-1.5, 0.0, 2.25],
          "float32": [-2.5, 0.5, 3.0], "float64": [-0.75, 1.5, 4.0]}

UNARY = ["abs", "neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "floor", "ceil", "round",
         "trunc", "sign", "square", "reciprocal", "rsqrt", "exp2", "expm1", "log2", "log10", "log1p", "erf",
         "sinc", "logit", "deg2rad", "rad2deg", "isnan", "isinf", "isfinite", "logical_not", "nan_to_num",
         "sgn"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder", "floor_divide",
          "copysign", "logaddexp", "logaddexp2", "atan2", "hypot", "fmax", "fmin", "xlogy", "float_power",
          "true_divide", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
          "bitwise_and", "bitwise_or", "bitwise_xor"]
NUMBERS = (2, -1.5, True)


def _vector(m, dtype: str, zero_d: bool = False):
    values = VALUES[dtype]
    return m.tensor(values[1] if zero_d else values, dtype=getattr(m, dtype))


def _outcome(build, m):
    """(dtype name, float64 values) of build(m), or None if it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = build(m)
    except Exception:  # what PyTorch refuses, tensorgrad may refuse or answer: not asserted
        return None
    data = out.detach().numpy() if m is torch else out.numpy()
    return str(out.dtype).removeprefix("torch."), np.asarray(data, dtype=np.float64)


def _assert_torchs_answer(case: str, build) -> None:
    theirs = _outcome(build, torch)
    if theirs is None:
        return
    ours = _outcome(build, tg)
    assert ours is not None, f"{case}: PyTorch answers {theirs[0]}, tensorgrad raises"
    assert ours[0] == theirs[0], f"{case}: dtype {ours[0]}, PyTorch's {theirs[0]}"
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-2, atol=1e-3, equal_nan=True, err_msg=case)


@pytest.mark.parametrize("op", UNARY)
def test_unary_ops_over_every_dtype(op):
    for dtype in DTYPES:
        _assert_torchs_answer(f"{op}({dtype})", lambda m, dtype=dtype: getattr(m, op)(_vector(m, dtype)))


@pytest.mark.parametrize("op", BINARY)
def test_binary_ops_over_every_dtype_pair_and_number(op):
    for first, second in itertools.product(DTYPES, DTYPES):
        for zero_d in (False, True):
            _assert_torchs_answer(
                f"{op}({first}, {second}{' 0-d' if zero_d else ''})",
                lambda m, a=first, b=second, z=zero_d: getattr(m, op)(_vector(m, a), _vector(m, b, z)))
    for dtype, number in itertools.product(DTYPES, NUMBERS):
        _assert_torchs_answer(f"{op}({dtype}, {number!r})",
                              lambda m, dtype=dtype, number=number: getattr(m, op)(_vector(m, dtype), number))


MATRIX = np.array([[1, 0, 3], [2, 5, 0]])
REDUCTIONS = {
    "sum": lambda m, x: x.sum(), "sum(1)": lambda m, x: x.sum(1), "prod(1)": lambda m, x: x.prod(1),
    "mean": lambda m, x: x.mean(), "max": lambda m, x: x.max(), "max(1)": lambda m, x: x.max(1)[0],
    "argmax": lambda m, x: x.argmax(), "argmin(1)": lambda m, x: x.argmin(1),
    "amax(1)": lambda m, x: x.amax(1),
    "cumsum(1)": lambda m, x: x.cumsum(1), "cumprod(0)": lambda m, x: x.cumprod(0),
    "cummax(1)": lambda m, x: x.cummax(1)[0], "cummin(1) indices": lambda m, x: x.cummin(1)[1],
    "std": lambda m, x: x.std(), "var(1)": lambda m, x: x.var(1), "norm": lambda m, x: x.norm(),
    "all": lambda m, x: x.all(), "any(1)": lambda m, x: x.any(1),
    "count_nonzero": lambda m, x: x.count_nonzero(), "median": lambda m, x: x.median(),
    "sort(1)": lambda m, x: x.sort(1)[0], "argsort(1)": lambda m, x: x.argsort(1),
    "topk(2, 1)": lambda m, x: x.topk(2, 1)[0], "logsumexp(1)": lambda m, x: x.logsumexp(1),
    "softmax(1)": lambda m, x: x.softmax(1), "nansum": lambda m, x: m.nansum(x),
    "nanmean": lambda m, x: m.nanmean(x), "trace": lambda m, x: m.trace(x), "diff": lambda m, x: m.diff(x),
    "clamp(1, 2)": lambda m, x: x.clamp(1, 2), "clamp(0.5)": lambda m, x: x.clamp(0.5),
    "where": lambda m, x: m.where(x > 1, x, 0), "masked_fill(7.5)": lambda m, x: x.masked_fill(x > 1, 7.5),
    "pow(0.5)": lambda m, x: x ** 0.5, "x // 2": lambda m, x: x // 2, "x % 2": lambda m, x: x % 2,
    "x / 2": lambda m, x: x / 2,
    "scatter_add": lambda m, x: x.scatter_add(1, m.tensor([[0, 0, 1], [2, 1, 1]]), x),
    "mm": lambda m, x: m.mm(x, x.t()), "outer": lambda m, x: m.outer(x[0], x[1]),
    "int()": lambda m, x: x.int(), "bool()": lambda m, x: x.bool(), "float()": lambda m, x: x.float(),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions_and_shape_ops_over_every_dtype(name):
    for dtype in DTYPES:
        values = (MATRIX > 1) if dtype == "bool" else MATRIX
        _assert_torchs_answer(f"{name} of {dtype}", lambda m, dtype=dtype, values=values: REDUCTIONS[name](
            m, m.tensor(values.tolist(), dtype=getattr(m, dtype))))
