"""The elementwise breadth of PyTorch: trigonometric, exponential and rounding ops, the division
family, bitwise and logical ops, closeness tests and the Python operators behind them.

Each differentiable op of the table runs on contiguous inputs, on a transposed (non-contiguous)
leaf and on a stride-0 (expanded) view, binary ops over broadcast pairings. Oracle one, always:
float64 finite differences (`tg.gradcheck`). Oracle two, where PyTorch is installed: the same
expression in torch, comparing values and every gradient. Then the dtype rules on integer and
bool tensors, the values and gradients at special points (nan, inf, 0, -0.0), and the errors,
each against what PyTorch does.
"""

from __future__ import annotations

import operator
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.checks import ShapeError

# --- the table --------------------------------------------------------------------------------


def _draw(rng: np.random.Generator, shape: tuple[int, ...], domain: str) -> np.ndarray:
    """Float64 samples of `shape`, away from each op's kinks, jumps and domain edges."""
    if domain == "real":
        values = rng.standard_normal(shape)
    elif domain == "unit":  # inside (-1, 1): asin, acos, atanh
        values = rng.uniform(-0.9, 0.9, shape)
    elif domain == "above1":  # acosh
        values = rng.uniform(1.1, 3.0, shape)
    elif domain == "positive":  # logarithms, rsqrt
        values = rng.uniform(0.5, 2.0, shape)
    elif domain == "nonzero":  # a divisor, the kink of copysign
        values = rng.choice([-1.0, 1.0], shape) * rng.uniform(0.6, 1.6, shape)
    elif domain == "grid":  # odd multiples of 0.05: 0.05 away from integers and halves
        values = rng.integers(-30, 30, shape) * 0.1 + 0.05
    elif domain == "low":  # clip bounds: low < high always, and never equal to a "grid" value
        values = rng.integers(-15, 0, shape) * 0.1
    elif domain == "high":
        values = rng.integers(0, 15, shape) * 0.1 + 0.03
    else:
        raise ValueError(domain)
    return np.array(values, dtype=np.float64)


@dataclass(frozen=True)
class Case:
    """An expression written once for `m` = tensorgrad or torch, with its inputs' shapes and domains."""

    name: str
    fn: Callable
    shapes: tuple[tuple[int, ...], ...]
    domains: tuple[str, ...]


UNARY = [
    ("sin", lambda m, x: m.sin(x), "real"),
    ("cos", lambda m, x: x.cos(), "real"),
    ("tan", lambda m, x: m.tan(x), "unit"),
    ("asin", lambda m, x: m.asin(x), "unit"),
    ("acos", lambda m, x: x.acos(), "unit"),
    ("atan", lambda m, x: m.atan(x), "real"),
    ("sinh", lambda m, x: m.sinh(x), "real"),
    ("cosh", lambda m, x: x.cosh(), "real"),
    ("tanh", lambda m, x: m.tanh(x), "real"),
    ("asinh", lambda m, x: m.asinh(x), "real"),
    ("acosh", lambda m, x: x.acosh(), "above1"),
    ("atanh", lambda m, x: m.atanh(x), "unit"),
    ("erf", lambda m, x: m.erf(x), "real"),
    ("exp2", lambda m, x: m.exp2(x), "real"),
    ("expm1", lambda m, x: x.expm1(), "real"),
    ("log2", lambda m, x: m.log2(x), "positive"),
    ("log10", lambda m, x: x.log10(), "positive"),
    ("log1p", lambda m, x: m.log1p(x), "positive"),
    ("rsqrt", lambda m, x: m.rsqrt(x), "positive"),
    ("square", lambda m, x: m.square(x), "real"),
    ("reciprocal", lambda m, x: x.reciprocal(), "nonzero"),
    ("sign", lambda m, x: m.sign(x) * x, "nonzero"),
    ("floor", lambda m, x: m.floor(x) + x, "grid"),
    ("ceil", lambda m, x: x.ceil() * x, "grid"),
    ("round", lambda m, x: m.round(x) * x, "grid"),
    ("round(decimals=1)", lambda m, x: m.round(x * 10.3, decimals=1) * x, "real"),
    ("trunc", lambda m, x: x.trunc() * x, "grid"),
    ("frac", lambda m, x: m.frac(x), "grid"),
    ("neg", lambda m, x: x.neg(), "real"),
    ("abs()", lambda m, x: abs(x), "nonzero"),
    ("clip", lambda m, x: m.clip(x, -0.5, 0.8), "grid"),
    ("clip(max=)", lambda m, x: x.clip(max=0.5), "grid"),
    ("sinc", lambda m, x: m.sinc(x), "real"),
    ("logit", lambda m, x: m.logit(x.sigmoid()), "real"),
    ("logit(eps)", lambda m, x: x.sigmoid().logit(eps=0.3), "real"),
    ("nan_to_num", lambda m, x: m.nan_to_num(x.log()), "positive"),
    ("deg2rad", lambda m, x: m.deg2rad(x), "real"),
    ("rad2deg", lambda m, x: x.rad2deg(), "real"),
    ("sgn", lambda m, x: m.sgn(x) * x, "nonzero"),
    ("negative", lambda m, x: x.negative(), "real"),
    ("positive", lambda m, x: m.positive(x) * 2, "real"),
    ("absolute", lambda m, x: m.absolute(x), "nonzero"),
    ("clamp_min", lambda m, x: m.clamp_min(x, 0.2), "grid"),
    ("clamp_max", lambda m, x: x.clamp_max(-0.3), "grid"),
]

BINARY = [
    ("fmod", lambda m, a, b: m.fmod(a, b), ("real", "nonzero")),
    ("remainder", lambda m, a, b: m.remainder(a, b), ("real", "nonzero")),
    ("%", lambda m, a, b: a % b, ("real", "nonzero")),
    ("copysign", lambda m, a, b: m.copysign(a, b), ("nonzero", "nonzero")),
    ("logaddexp", lambda m, a, b: m.logaddexp(a, b), ("real", "real")),
    ("div(trunc)", lambda m, a, b: m.div(a, b, rounding_mode="trunc") * a + b, ("real", "nonzero")),
    ("div(floor)", lambda m, a, b: a.div(b, rounding_mode="floor") * a + b, ("real", "nonzero")),
    ("lerp(scalar)", lambda m, a, b: m.lerp(a, b, 0.3), ("real", "real")),
    ("lerp(0.8)", lambda m, a, b: a.lerp(b, 0.8), ("real", "real")),
    ("lerp(weight)", lambda m, a, b: m.lerp(a, a * 2 + 1, b), ("real", "real")),
    ("lerp(end, weight)", lambda m, a, b: m.lerp(a.sin(), b, b.cos()), ("real", "real")),
    ("clip(min tensor)", lambda m, a, b: m.clip(a, min=b), ("grid", "low")),
    ("clip(max tensor)", lambda m, a, b: a.clip(max=b), ("grid", "high")),
    ("clip(min, max)", lambda m, a, b: m.clip(a, b, b * 0.5 + 1.01), ("grid", "low")),
    ("atan2", lambda m, a, b: m.atan2(a, b), ("real", "nonzero")),
    ("arctan2", lambda m, a, b: a.arctan2(b), ("nonzero", "real")),
    ("hypot", lambda m, a, b: m.hypot(a, b), ("nonzero", "nonzero")),
    ("fmax", lambda m, a, b: m.fmax(a, b), ("real", "real")),
    ("fmin", lambda m, a, b: a.fmin(b), ("real", "real")),
    ("xlogy", lambda m, a, b: m.xlogy(a, b), ("real", "positive")),
    ("logaddexp2", lambda m, a, b: a.logaddexp2(b), ("real", "real")),
    ("float_power", lambda m, a, b: m.float_power(a, b), ("positive", "real")),
    ("true_divide", lambda m, a, b: a.true_divide(b), ("real", "nonzero")),
]
PAIRINGS = [((3, 4), (4,)), ((4,), (3, 4)), ((2, 1, 4), (3, 1)), ((), (3, 4)), ((3, 4), ())]

CASES = ([Case(name, fn, ((3, 4),), (domain,)) for name, fn, domain in UNARY]
         + [Case(f"{name}{sa}&{sb}", fn, (sa, sb), domains)
            for name, fn, domains in BINARY for sa, sb in PAIRINGS]
         + [Case("clip(min, max tensors)", lambda m, x, lo, hi: m.clip(x, lo, hi), ((3, 4), (4,), (3, 1)),
                 ("grid", "low", "high")),
            Case("lerp(3 tensors)", lambda m, s, e, w: s.lerp(e, w), ((3, 4), (4,), (2, 1, 1)),
                 ("real", "real", "real"))])


def _leaves(case: Case, layout: str) -> tuple[list[np.ndarray], list[tuple[int, ...] | None]]:
    """The leaf arrays laid out as `layout` asks, and per leaf the shape to expand it to (or None).

    Only the first input changes layout; the others stay contiguous.
    """
    rng = np.random.default_rng(zlib.crc32(f"{case.name}|{layout}".encode()))
    arrays, expands = [], []
    for i, (shape, domain) in enumerate(zip(case.shapes, case.domains, strict=True)):
        if i == 0 and layout == "transposed" and len(shape) >= 2:
            arrays.append(np.ascontiguousarray(_draw(rng, shape[::-1], domain)).T)
            expands.append(None)
        elif i == 0 and layout == "expanded" and len(shape) >= 1 and shape[0] > 1:
            arrays.append(_draw(rng, (1,) + shape[1:], domain))
            expands.append(shape)
        else:
            arrays.append(_draw(rng, shape, domain))
            expands.append(None)
    return arrays, expands


def _applies(case: Case, layout: str) -> bool:
    return layout == "contiguous" or len(case.shapes[0]) >= 2


PARAMS = [pytest.param(case, layout, id=f"{case.name}-{layout}")
          for case in CASES for layout in ("contiguous", "transposed", "expanded") if _applies(case, layout)]


def _run(m, case: Case, leaves: list, expands: list):
    seen = [leaf if shape is None else leaf.expand(*shape)
            for leaf, shape in zip(leaves, expands, strict=True)]
    return case.fn(m, *seen)


def test_table_covers_the_layouts():
    layouts = [p.values[1] for p in PARAMS]
    assert layouts.count("transposed") >= 40 and layouts.count("expanded") >= 40


@pytest.mark.parametrize(("case", "layout"), PARAMS)
def test_gradient_matches_finite_differences(case: Case, layout: str):
    arrays, expands = _leaves(case, layout)
    leaves = [tg.from_numpy(a).requires_grad_() for a in arrays]
    if layout == "transposed":
        assert not leaves[0].is_contiguous()
    out = _run(tg, case, leaves, expands)
    assert out.dtype == tg.float64
    assert tg.gradcheck(lambda *ts: _run(tg, case, list(ts), expands), leaves)


@pytest.mark.parametrize(("case", "layout"), PARAMS)
def test_matches_torch(case: Case, layout: str):
    torch = pytest.importorskip("torch")
    arrays, expands = _leaves(case, layout)
    ours = [tg.from_numpy(a.copy(order="K")).requires_grad_() for a in arrays]
    theirs = [torch.from_numpy(a.copy(order="K")).requires_grad_() for a in arrays]
    out = _run(tg, case, ours, expands)
    expected = _run(torch, case, theirs, expands)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12, atol=1e-14)

    weights = np.random.default_rng(3).standard_normal(out.shape)
    out.backward(weights)
    expected.backward(torch.from_numpy(weights))
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"input {i}")


@pytest.mark.parametrize(("name", "fn", "domain"), UNARY, ids=[u[0] for u in UNARY])
def test_float32_stays_float32_as_in_torch(name, fn, domain):
    torch = pytest.importorskip("torch")
    values = _draw(np.random.default_rng(5), (2, 3), domain).astype(np.float32)
    x, y = tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, expected = fn(tg, x), fn(torch, y)
    assert out.dtype == tg.float32
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=2e-6, atol=1e-6)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad, y.grad.numpy(), rtol=2e-5, atol=1e-6)


# --- integer and bool dtypes: PyTorch's result dtype, or PyTorch's refusal -----------------------

INT_A = np.array([[-7, -3, -1, 0, 1, 2], [5, 9, -8, 4, 3, -2]])
INT_B = np.array([[-3, 2, 5, -1, 4, 7], [3, -2, 6, 1, -4, 2]])  # no zero: a divisor
BOOL_A = np.array([[True, False, True, False, True, True], [False, False, True, True, False, True]])
SHIFT = np.array([[0, 1, 3, 63, 64, 70], [-1, 2, 8, 9, 31, 5]])  # past the width and negative too

UNARY_ANY_DTYPE = [
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
    "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "square", "reciprocal", "sign", "floor", "ceil",
    "round", "trunc", "frac", "neg", "abs", "bitwise_not", "logical_not", "isnan", "isinf", "isfinite",
]
BINARY_ANY_DTYPE = [
    "fmod", "remainder", "floor_divide", "copysign", "logaddexp", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_or", "logical_xor",
]
OPERATORS = [operator.floordiv, operator.mod, operator.and_, operator.or_, operator.xor, operator.lshift,
             operator.rshift, operator.truediv]
INT_DTYPES = ["int64", "int32", "int16", "uint8", "bool"]


def _as(values: np.ndarray, dtype: str) -> np.ndarray:
    return (values % 2 == 1) if dtype == "bool" else values.astype(dtype)


def _same_outcome(ours: Callable, theirs: Callable):
    """Both raise (ours an instance of torch's exception type), or both give equal values and dtype."""
    try:
        expected = theirs()
    except (RuntimeError, TypeError) as error:
        with pytest.raises(type(error)):
            ours()
        return
    out = ours()
    expected_values = expected.numpy()
    assert out.dtype == expected_values.dtype, (out.dtype, expected_values.dtype)
    if out.dtype.kind == "f":
        np.testing.assert_allclose(out.data, expected_values, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(out.data, expected_values)
    assert not out.requires_grad


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", UNARY_ANY_DTYPE)
def test_unary_on_integer_and_bool_tensors_as_torch(name, dtype):
    torch = pytest.importorskip("torch")
    values = _as(INT_A, dtype)
    _same_outcome(lambda: getattr(tg, name)(tg.tensor(values)),
                  lambda: getattr(torch, name)(torch.tensor(values)))


DTYPE_PAIRS = [("int64", "int64"), ("int64", "int32"), ("int16", "int64"), ("uint8", "int64"),
               ("bool", "int64"), ("int32", "bool"), ("bool", "bool"), ("int64", "float32"),
               ("float32", "int32"), ("float64", "float32"), ("uint8", "uint8")]


@pytest.mark.parametrize(("dtype_a", "dtype_b"), DTYPE_PAIRS, ids=[f"{a}-{b}" for a, b in DTYPE_PAIRS])
@pytest.mark.parametrize("name", BINARY_ANY_DTYPE)
def test_binary_on_mixed_dtypes_as_torch(name, dtype_a, dtype_b):
    torch = pytest.importorskip("torch")
    b_values = SHIFT if "shift" in name and dtype_b != "uint8" else INT_B
    a, b = _as(INT_A, dtype_a), _as(b_values, dtype_b)
    if dtype_b == "bool" and name in ("fmod", "remainder", "floor_divide"):
        b = np.ones_like(b)  # a bool divisor must be True everywhere
    _same_outcome(lambda: getattr(tg, name)(tg.tensor(a), tg.tensor(b)),
                  lambda: getattr(torch, name)(torch.tensor(a), torch.tensor(b)))


SCALARS = [3, -2, 2.5, True]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32"])
@pytest.mark.parametrize("scalar", SCALARS, ids=[repr(s) for s in SCALARS])
@pytest.mark.parametrize("op", OPERATORS, ids=[op.__name__ for op in OPERATORS])
def test_operators_with_python_numbers_on_either_side_as_torch(op, scalar, dtype, request):
    torch = pytest.importorskip("torch")
    values = _as(INT_B, dtype)  # no zero, for the reflected divisions
    if op in (operator.lshift, operator.rshift) and scalar is not True and scalar < 0:
        scalar = 3
    _same_outcome(lambda: op(tg.tensor(values), scalar), lambda: op(torch.tensor(values), scalar))
    _same_outcome(lambda: op(scalar, tg.tensor(values)), lambda: op(scalar, torch.tensor(values)))


def test_invert_and_abs_operators():
    torch = pytest.importorskip("torch")
    for values in (INT_A, INT_A.astype(np.int8), BOOL_A):
        _same_outcome(lambda v=values: ~tg.tensor(v), lambda v=values: ~torch.tensor(v))
        _same_outcome(lambda v=values: abs(tg.tensor(v)), lambda v=values: abs(torch.tensor(v)))
    assert (~tg.tensor(BOOL_A)).dtype == tg.bool_
    with pytest.raises(TypeError):  # as `~` on a float tensor in PyTorch
        ~tg.tensor([1.5])


def test_div_rounding_modes_on_integers_stay_integer():
    torch = pytest.importorskip("torch")
    for mode in ("trunc", "floor"):
        for b in (INT_B, 2, -3, 2.5):
            ours = b if np.isscalar(b) else tg.tensor(b)
            theirs = b if np.isscalar(b) else torch.tensor(b)
            _same_outcome(lambda b=ours, mode=mode: tg.div(tg.tensor(INT_A), b, rounding_mode=mode),
                          lambda b=theirs, mode=mode: torch.div(torch.tensor(INT_A), b, rounding_mode=mode))
    big = np.array([2**62 + 1, -(2**62) - 1])  # exact: no round trip through float64
    quotient = (2**62 + 1) // 3
    assert tg.div(tg.tensor(big), 3, rounding_mode="trunc").tolist() == [quotient, -quotient]


def test_round_decimals_and_frac_refuse_integers_as_torch():
    with pytest.raises(RuntimeError):
        tg.round(tg.tensor([1, 2]), decimals=1)
    with pytest.raises(NotImplementedError):
        tg.frac(tg.tensor([1, 2]))
    assert tg.round(tg.tensor([15, -25]), decimals=0).tolist() == [15, -25]


# --- special points: nan, inf, 0 and -0.0, values and gradients ----------------------------------

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-300, 40.0])


def _assert_same_floats(ours: np.ndarray, theirs: np.ndarray, rtol: float = 1e-12):
    """Equal values, nan where nan, and the same sign on every zero (and every infinity)."""
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=0, equal_nan=True)
    zeros = theirs == 0
    np.testing.assert_array_equal(np.signbit(ours[zeros]), np.signbit(theirs[zeros]))


UNARY_NAMES = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf",
               "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "square", "reciprocal", "sign", "floor",
               "ceil", "round", "trunc", "frac", "neg", "abs"]


@pytest.mark.parametrize("name", UNARY_NAMES)
def test_unary_special_points_values_and_gradients_as_torch(name):
    torch = pytest.importorskip("torch")
    x = tg.tensor(SPECIAL, dtype=tg.float64, requires_grad=True)
    y = torch.tensor(SPECIAL, dtype=torch.float64, requires_grad=True)
    out, expected = getattr(tg, name)(x), getattr(torch, name)(y)
    _assert_same_floats(out.data, expected.detach().numpy())
    out.backward(np.ones(SPECIAL.shape))
    expected.backward(torch.ones(SPECIAL.shape, dtype=torch.float64))
    _assert_same_floats(x.grad, y.grad.numpy())


BINARY_SPECIAL = {
    "fmod": lambda m, a, b: m.fmod(a, b),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "copysign": lambda m, a, b: m.copysign(a, b),
    "logaddexp": lambda m, a, b: m.logaddexp(a, b),
    "div(trunc)": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div(floor)": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "lerp": lambda m, a, b: m.lerp(a, b, b * 0.25),
    "clip": lambda m, a, b: m.clip(a, b, b * 0.5 + 0.25),  # the bounds cross where b < -0.5
}


@pytest.mark.parametrize("name", list(BINARY_SPECIAL))
def test_binary_special_points_values_and_gradients_as_torch(name):
    torch = pytest.importorskip("torch")
    fn = BINARY_SPECIAL[name]
    grid_a, grid_b = np.meshgrid(SPECIAL, SPECIAL, indexing="ij")
    a = tg.tensor(grid_a, requires_grad=True, dtype=tg.float64)
    b = tg.tensor(grid_b, requires_grad=True, dtype=tg.float64)
    ta = torch.tensor(grid_a, requires_grad=True)
    tb = torch.tensor(grid_b, requires_grad=True)
    out, expected = fn(tg, a, b), fn(torch, ta, tb)
    _assert_same_floats(out.data, expected.detach().numpy())
    out.backward(np.ones(out.shape))
    expected.backward(torch.ones(expected.shape, dtype=torch.float64))
    _assert_same_floats(a.grad, ta.grad.numpy())
    _assert_same_floats(b.grad, tb.grad.numpy())


def test_floor_divide_special_points_and_no_derivative_as_torch():
    torch = pytest.importorskip("torch")
    grid_a, grid_b = np.meshgrid(SPECIAL, SPECIAL, indexing="ij")
    _assert_same_floats((tg.tensor(grid_a) // tg.tensor(grid_b)).data,
                        (torch.tensor(grid_a) // torch.tensor(grid_b)).numpy())
    x = tg.tensor([1.5, -2.5], requires_grad=True)
    out = x // 2
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="floor_divide"):  # PyTorch: derivative not implemented
        out.sum().backward()


def test_gradient_conventions_at_zero():
    """abs and copysign at 0: 0; sign, round: 0 everywhere; frac: 1; fmod and remainder: -trunc, -floor."""
    x = tg.tensor([0.0, -0.0, 2.5, -1.5], dtype=tg.float64, requires_grad=True)
    (abs(x) + x.sign() + x.round() + x.floor() + x.ceil() + x.trunc()).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, -1.0]
    x.grad = None
    x.copysign(-1.0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, -1.0, 1.0]
    a = tg.tensor([7.5, -7.5], dtype=tg.float64, requires_grad=True)
    b = tg.tensor([2.0, 2.0], dtype=tg.float64, requires_grad=True)
    tg.fmod(a, b).sum().backward()
    assert b.grad.tolist() == [-3.0, 3.0]
    b.grad = None
    (a % b).sum().backward()
    assert b.grad.tolist() == [-3.0, 4.0]
    assert a.grad.tolist() == [2.0, 2.0]


def test_sign_of_nan_and_negative_zero_as_torch():
    out = tg.tensor([np.nan, -0.0, 0.0, -3.0]).sign()
    assert out.tolist() == [0.0, 0.0, 0.0, -1.0]
    assert not np.signbit(out.data[1])


def test_round_is_half_to_even():
    assert tg.tensor([0.5, 1.5, 2.5, -0.5, -1.5]).round().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    assert tg.round(tg.tensor([1.25, 1.35, -1.25]), decimals=1).tolist() == pytest.approx([1.2, 1.4, -1.2])
    assert tg.tensor([1234.0]).round(decimals=-2).tolist() == [1200.0]


def test_erf_to_double_precision():
    import math

    x = np.concatenate([np.linspace(-7, 7, 2801), [0.46875, -0.46875, 4.0, 1e-20, 30.0]])
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(tg.erf(tg.tensor(x)).data, expected, rtol=1e-15, atol=1e-300)
    assert tg.erf(tg.tensor([np.inf, -np.inf])).tolist() == [1.0, -1.0]
    assert np.isnan(tg.erf(tg.tensor([np.nan])).item())


# --- ops that carry no gradient ----------------------------------------------------------------


def test_integer_bool_and_test_ops_carry_no_gradient():
    x = tg.tensor([1.5, -2.0, np.nan], requires_grad=True)
    for out in (x.isnan(), x.isinf(), x.isfinite(), x.logical_not(), x.logical_and(x), tg.logical_or(x, 0),
                tg.logical_xor(x, 1.0), tg.isclose(x, x), x > 0):
        assert out.dtype == tg.bool_
        assert not out.requires_grad
    i = tg.tensor([3, -4])
    for out in (i & 1, 2 | i, i ^ i, ~i, i << 2, 64 >> i.abs(), i // 2, i % 3, tg.fmod(i, 2), i.square(),
                i.sign(), i.floor(), tg.div(i, 2, rounding_mode="floor")):
        assert out.dtype == tg.int64
        assert not out.requires_grad


def test_logical_ops_as_torch():
    torch = pytest.importorskip("torch")
    values = np.array([0.0, -0.0, np.nan, 2.0, -1.0])
    for name in ("logical_and", "logical_or", "logical_xor"):
        ours = getattr(tg, name)(tg.tensor(values), tg.tensor(values[::-1].copy()))
        theirs = getattr(torch, name)(torch.tensor(values), torch.tensor(values[::-1].copy()))
        np.testing.assert_array_equal(ours.data, theirs.numpy())
    np.testing.assert_array_equal(tg.logical_not(tg.tensor(values)).data,
                                  torch.logical_not(torch.tensor(values)).numpy())
    np.testing.assert_array_equal(tg.isnan(tg.tensor(values)).data, [False, False, True, False, False])
    assert tg.isinf(tg.tensor([np.inf, -np.inf, np.nan, 1.0])).tolist() == [True, True, False, False]
    assert tg.isfinite(tg.tensor([np.inf, -np.inf, np.nan, 1.0])).tolist() == [False, False, False, True]


# --- closeness and equality --------------------------------------------------------------------

CLOSE_A = np.array([1.0, np.inf, -np.inf, np.inf, np.nan, 0.0, 1e-9, 100.0, 100.0])
CLOSE_B = np.array([1.0 + 1e-6, np.inf, np.inf, 1.0, np.nan, 1e-8, 0.0, 100.001, 100.01])


@pytest.mark.parametrize("kwargs", [{}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.0}, {"rtol": 1e-3},
                                    {"atol": 0.02, "rtol": 0.0}])
def test_isclose_and_allclose_as_torch(kwargs):
    torch = pytest.importorskip("torch")
    for dtype in ("float64", "float32"):
        a, b = CLOSE_A.astype(dtype), CLOSE_B.astype(dtype)
        ours = tg.isclose(tg.tensor(a), tg.tensor(b), **kwargs)
        theirs = torch.isclose(torch.tensor(a), torch.tensor(b), **kwargs)
        np.testing.assert_array_equal(ours.data, theirs.numpy())
        for i in range(len(a)):
            assert tg.tensor(a[i:i + 1]).allclose(tg.tensor(b[i:i + 1]), **kwargs) == torch.allclose(
                torch.tensor(a[i:i + 1]), torch.tensor(b[i:i + 1]), **kwargs)
    np.testing.assert_array_equal(tg.isclose(tg.tensor(INT_A), tg.tensor(INT_A + 1), atol=1).data,
                                  torch.isclose(torch.tensor(INT_A), torch.tensor(INT_A + 1), atol=1).numpy())
    np.testing.assert_array_equal(tg.isclose(tg.tensor(BOOL_A), tg.tensor(~BOOL_A), atol=1).data,
                                  torch.isclose(torch.tensor(BOOL_A), torch.tensor(~BOOL_A), atol=1).numpy())


def test_isclose_broadcasts_and_allclose_returns_a_python_bool():
    a = tg.tensor([[1.0, 2.0], [1.0, 2.0]])
    assert tg.isclose(a, tg.tensor([1.0, 2.0000001])).tolist() == [[True, True], [True, True]]
    assert tg.allclose(a, tg.tensor([1.0, 2.0])) is True
    assert tg.allclose(a, tg.tensor([1.0, 2.1])) is False


def test_equal_as_torch():
    assert tg.equal(tg.tensor([1, 2]), tg.tensor([1.0, 2.0])) is True  # values, across dtypes
    assert tg.equal(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0, 3.0])) is False  # shapes differ
    assert tg.equal(tg.tensor([[1.0, 2.0]]), tg.tensor([1.0, 2.0])) is False  # no broadcasting
    assert tg.equal(tg.tensor([np.nan]), tg.tensor([np.nan])) is False
    assert tg.tensor([[1, 2], [3, 4]]).T.equal(tg.tensor([[1, 3], [2, 4]])) is True


def test_int_and_index_of_one_element_tensors_as_torch():
    assert int(tg.tensor([2.7])) == 2
    assert int(tg.tensor(-2.7)) == -2
    assert operator.index(tg.tensor([3])) == 3
    assert operator.index(tg.tensor(True)) == 1
    assert [10, 20, 30, 40][tg.tensor(2)] == 30
    with pytest.raises(TypeError):
        operator.index(tg.tensor(2.0))
    with pytest.raises(TypeError):
        operator.index(tg.tensor([1, 2]))
    with pytest.raises(ValueError):  # PyTorch: "only one element tensors can be converted to Python scalars"
        int(tg.tensor([1.0, 2.0]))


# --- clip --------------------------------------------------------------------------------------


def test_clip_dtype_and_crossed_bounds_as_torch():
    torch = pytest.importorskip("torch")
    values = np.array([-3, 0, 5])
    for lo, hi in ((0.5, 1), (None, 2), (-1, None), (2, -1)):
        _same_outcome(lambda lo=lo, hi=hi: tg.clip(tg.tensor(values), lo, hi),
                      lambda lo=lo, hi=hi: torch.clip(torch.tensor(values), lo, hi))
    floats = np.array([-1.5, 0.0, 2.5, np.nan])
    out, expected = tg.tensor(floats).clip(0.0, -1.0), torch.tensor(floats).clip(0.0, -1.0).numpy()
    np.testing.assert_array_equal(out.data, expected)
    assert out.dtype == expected.dtype


# --- errors: PyTorch's exception types, messages naming the op ----------------------------------


def test_bitwise_ops_refuse_floats():
    f = tg.tensor([1.5, 2.0])
    for expression in (lambda: f & f, lambda: f | 1, lambda: 1 ^ f, lambda: tg.tensor([1]) & 1.5,
                       lambda: f << 1, lambda: 2 >> f, lambda: tg.bitwise_not(f)):
        with pytest.raises(RuntimeError, match="bitwise") as info:  # NotImplementedError in PyTorch
            expression()
        assert isinstance(info.value, NotImplementedError | TypeError)
        assert "float32" in str(info.value)
    with pytest.raises(NotImplementedError, match="two bool"):
        tg.tensor([True]) << tg.tensor([True])


def test_rounding_mode_must_exist():
    with pytest.raises(ValueError, match="rounding_mode") as info:
        tg.div(tg.tensor([1.0]), 2.0, rounding_mode="round")
    assert isinstance(info.value, RuntimeError)  # PyTorch's type too
    with pytest.raises(ValueError, match="rounding_mode"):
        tg.tensor([1.0]).div(2.0, rounding_mode="ceil")


def test_integer_division_by_zero_raises_and_float_division_does_not():
    i = tg.tensor([4, 5])
    for expression in (lambda: i // 0, lambda: i % tg.tensor([1, 0]), lambda: tg.fmod(i, 0),
                       lambda: tg.div(i, 0, rounding_mode="trunc"), lambda: 3 // tg.tensor([0])):
        with pytest.raises(RuntimeError, match="division by zero") as info:
            expression()
        assert isinstance(info.value, ZeroDivisionError)
    assert (tg.tensor([4.0, -5.0, 0.0]) // 0).tolist()[:2] == [np.inf, -np.inf]


def test_dtype_refusals_as_torch():
    with pytest.raises(NotImplementedError, match="logaddexp"):
        tg.logaddexp(tg.tensor([1, 2]), tg.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="lerp"):
        tg.lerp(tg.tensor([1, 2]), tg.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match="lerp: expected dtype float32"):
        tg.lerp(tg.tensor([1.0]), tg.tensor([1.0], dtype=tg.float64), 0.5)
    with pytest.raises(RuntimeError, match="same dtype"):
        tg.isclose(tg.tensor([1.0]), tg.tensor([1.0], dtype=tg.float64))
    with pytest.raises(NotImplementedError, match="floor"):
        tg.tensor([True]).floor()
    with pytest.raises(NotImplementedError, match="two bool"):
        tg.tensor([True]) // tg.tensor([True])


def test_bad_arguments():
    with pytest.raises(ValueError, match="clip") as info:
        tg.tensor([1.0]).clip()
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(ValueError, match="rtol"):
        tg.isclose(tg.tensor([1.0]), tg.tensor([1.0]), rtol=-1.0)
    with pytest.raises(TypeError, match="lerp: end must be a Tensor"):
        tg.lerp(tg.tensor([1.0]), 2.0, 0.5)


@pytest.mark.parametrize("op", [tg.fmod, tg.remainder, tg.floor_divide, tg.copysign, tg.logaddexp,
                                tg.bitwise_and, tg.logical_and, tg.isclose, lambda a, b: tg.clip(a, b)],
                         ids=["fmod", "remainder", "floor_divide", "copysign", "logaddexp", "bitwise_and",
                              "logical_and", "isclose", "clip"])
def test_shapes_that_dont_broadcast_name_the_op_and_both_shapes(op):
    a = tg.tensor(np.ones((2, 3), dtype=np.int64 if op is tg.bitwise_and else np.float32))
    b = tg.tensor(np.ones((4,), dtype=a.dtype))
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4,\)") as info:
        op(a, b)
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value, ValueError)


def test_lerp_shapes_that_dont_broadcast():
    with pytest.raises(ShapeError, match=r"lerp: shapes \(2, 3\) and \(4,\)"):
        tg.lerp(tg.zeros(2, 3), tg.zeros(4), 0.5)


def test_in_graph_use_with_broadcast_and_python_numbers():
    """A small expression mixing the new ops; its gradient against finite differences."""
    x = tg.tensor(np.linspace(0.21, 0.88, 12).reshape(3, 4), dtype=tg.float64, requires_grad=True)
    w = tg.tensor(np.linspace(-1, 1, 4), dtype=tg.float64, requires_grad=True)

    def f(x, w):
        return (x.asin() * w.erf() + tg.logaddexp(x, w).log1p() - (x % 0.3) * w.square()).lerp(x.exp2(), 0.25)

    assert tg.gradcheck(f, [x, w])


def test_augmented_operators_change_the_tensor_in_place_as_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = tg.tensor(INT_A.copy()), torch.tensor(INT_A.copy())
    our_view, their_view = ours[1], theirs[1]
    for name in ("ifloordiv", "imod", "iand", "ior", "ixor", "ilshift", "irshift"):
        operand = 3 if name != "ilshift" else 1
        result = getattr(operator, name)(ours, operand)
        getattr(operator, name)(theirs, operand)
        assert result is ours  # the same tensor, changed in place
        np.testing.assert_array_equal(ours.data, theirs.numpy(), err_msg=name)
    np.testing.assert_array_equal(our_view.data, their_view.numpy())  # views see every change
    assert ours._version == 7


def test_clip_in_place_keeps_the_graph():
    x = tg.tensor([0.5, 1.5, -2.5], dtype=tg.float64, requires_grad=True)
    y = x * 2
    assert y.clip_(-1.0, 2.0) is y
    y.sum().backward()
    assert y.tolist() == [1.0, 2.0, -1.0]
    assert x.grad.tolist() == [2.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="leaf"):
        x.clip_(max=1.0)
