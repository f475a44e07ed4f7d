"""Elementwise ops: arithmetic, unary math, comparisons and in-place updates (tutorial chapter 7).

Each op is its forward line followed by one gradient formula (VJP) per input, handed to
`record`, which reduces broadcast gradients back to each input's shape. Binary ops take a
Tensor or a Python number on either side; a float32 tensor stays float32 next to Python numbers.

After them, PyTorch's elementwise breadth: trigonometric, hyperbolic, exponential and rounding
ops, the division family (`fmod`, `remainder`, `//`, `div(rounding_mode=)`), `copysign`,
`logaddexp`, `lerp`, `clip`, bitwise and logical ops, and the tests `isnan`, `isclose`, `equal`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorgrad import creation
from tensorgrad.autograd import CROSSED, record
from tensorgrad.checks import (
    ArgumentValueError,
    IntegerDivisionByZeroError,
    ShapeError,
    UnsupportedDtypeError,
)
from tensorgrad.device import array_like, is_array
from tensorgrad.dtypes import float_dtype, result_type
from tensorgrad.tensor import Tensor, ensure_tensor, new_leaf

Operand = Tensor | float | int


def _operands(a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    # The ops test `type(x) is Tensor` first, as the fast path; a subclass (nn.Parameter) is
    # a Tensor too, and comes here.
    if not isinstance(a, Tensor):
        a = ensure_tensor(a, b) if isinstance(b, Tensor) else Tensor(a)
    if not isinstance(b, Tensor):
        b = ensure_tensor(b, a)
    return a, b


def _binary(ufunc: np.ufunc, a: Tensor, b: Tensor, op: str, floating: bool = False) -> np.ndarray:
    """ufunc(a, b) in PyTorch's result dtype, broadcasting; a clear error when shapes don't broadcast.

    `floating` ops (`/`) compute in the default float dtype when both operands are integers.
    """
    x, y = a._data, b._data  # the array slots: `_binary` runs in every binary op
    if x.dtype is not y.dtype or floating:
        if op == "-" and "b" in (x.dtype.kind, y.dtype.kind):
            _raise_bool_subtraction(a, b)
        x, y = _promoted(x, y, floating)
    try:
        return ufunc(x, y)
    except ValueError as error:
        _raise_binary_error(op, ufunc, a, b, error)
    except TypeError:
        if op == "-":  # numpy refuses bool - bool with a message of its own
            _raise_bool_subtraction(a, b)
        raise


def _promoted(x: np.ndarray, y: np.ndarray, floating: bool) -> tuple[np.ndarray, np.ndarray]:
    """Both operands cast to the dtype PyTorch computes in (see `tensorgrad.dtypes`)."""
    dtype = result_type(x.dtype, x.ndim > 0, y.dtype, y.ndim > 0)
    if floating:
        dtype = float_dtype(dtype)
    return x.astype(dtype, copy=False), y.astype(dtype, copy=False)


def _raise_bool_subtraction(a: Tensor, b: Tensor) -> None:
    """PyTorch refuses `-` with a bool operand: `1 - mask` is usually a mask inverted by mistake."""
    raise UnsupportedDtypeError(
        f"-: subtraction with a bool tensor is not supported (shapes {a.shape} {a.dtype} and {b.shape} "
        f"{b.dtype}), as in PyTorch; to invert a mask use ~ or logical_not(), to compare two use ^")


def _raise_binary_error(op: str, ufunc: np.ufunc, a: Tensor, b: Tensor, error: ValueError) -> None:
    name = op if op == ufunc.__name__ else f"{op} ({ufunc.__name__})"  # '+ (add)'
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ShapeError(
            f"{name}: shapes {a.shape} and {b.shape} can't be broadcast together "
            "(trailing dimensions must match or be 1)"
        ) from None
    raise RuntimeError(f"{name} on tensors of shapes {a.shape} ({a.dtype}) and {b.shape} ({b.dtype}): "
                       f"{error}") from None


def _floating(x: Tensor) -> np.ndarray:
    """x's data, in the default float dtype if it is an integer or bool tensor (`exp` of an int)."""
    data = x.data
    return data if data.dtype.kind in "fc" else data.astype(float_dtype(data.dtype))


# --- arithmetic ---------------------------------------------------------------------------------


def add(a: Operand, b: Operand, *, alpha: Any = 1) -> Tensor:
    """a + b (a + alpha * b), broadcasting. d/da = 1, d/db = 1 (alpha)."""
    if alpha != 1:
        return add(a, mul(b, alpha) if isinstance(b, Tensor) else b * alpha)
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    return record(_binary(np.add, a, b, "+"), "+", (a, b),
                  lambda grad: grad,
                  lambda grad: grad, saved=())


def sub(a: Operand, b: Operand, *, alpha: Any = 1) -> Tensor:
    """a - b (a - alpha * b), broadcasting. d/da = 1, d/db = -1 (-alpha)."""
    if alpha != 1:
        return sub(a, mul(b, alpha) if isinstance(b, Tensor) else b * alpha)
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    return record(_binary(np.subtract, a, b, "-"), "-", (a, b),
                  lambda grad: grad,
                  lambda grad: -grad, saved=())


def mul(a: Operand, b: Operand) -> Tensor:
    """a * b, broadcasting. d/da = b, d/db = a."""
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    return record(_binary(np.multiply, a, b, "*"), "*", (a, b),
                  lambda grad: grad * b._data,
                  lambda grad: grad * a._data, saved=CROSSED)


def div(a: Operand, b: Operand, *, rounding_mode: str | None = None) -> Tensor:
    """a / b, broadcasting. d/da = 1 / b, d/db = -a / b**2.

    With `rounding_mode` 'trunc' or 'floor', the quotient rounded (`div_rounded`).
    """
    if rounding_mode is not None:
        return div_rounded(a, b, rounding_mode)
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 is inf or nan, silently, as in PyTorch
        out = _binary(np.true_divide, a, b, "/", floating=True)
    return record(out, "/", (a, b),
                  lambda grad: _quiet_divide(grad, b.data),
                  lambda grad: _quiet_divide(-grad * a.data, b.data * b.data))


def _quiet_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return x / y


def neg(x: Tensor) -> Tensor:
    """-x. Derivative: -1."""
    try:
        out = -x.data
    except TypeError:  # numpy refuses `-` on bool, as PyTorch does: say so in PyTorch's terms
        raise UnsupportedDtypeError(f"neg (-): not supported on a bool tensor (shape {x.shape}), as in "
                                    "PyTorch; `~` or logical_not() inverts a mask") from None
    return record(out, "neg", (x,),
                  lambda grad: -grad, saved=())


def pow(a: Operand, b: Operand) -> Tensor:  # noqa: A001 - the op's name, as in torch.pow
    """a ** b. d/da = b * a**(b - 1) (0 where b == 0); d/db = log(a) * a**b (0 where a == 0 and b >= 0)."""
    if isinstance(a, Tensor) and isinstance(b, int | float) and not isinstance(b, bool):
        return _pow_scalar(a, b)
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _binary(_power, a, b, "**")

    def vjp_base(grad: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            g = grad * b.data * np.power(a.data, b.data - 1)
        return np.where(b.data == 0, 0, g)

    def vjp_exponent(grad: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            g = grad * out * np.log(a.data)
        return np.where((a.data == 0) & (b.data >= 0), 0, g)

    return record(out, "**", (a, b), vjp_base, vjp_exponent, saves_output=True)


def _power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """np.power, with PyTorch's integer powers: a negative exponent gives 1 / x**-y truncated;
    bools stay bool (x ** True is x, x ** False is True), where numpy gives int8."""
    if x.dtype.kind == "b" and y.dtype.kind == "b":
        return x | ~y
    if x.dtype.kind not in "iu" or not (y < 0).any():
        return np.power(x, y)
    positive = np.power(x, np.maximum(y, 0))
    odd = (y % 2) != 0
    truncated = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0)).astype(positive.dtype)
    return np.where(y < 0, truncated, positive)


def _pow_scalar(x: Tensor, exponent: float) -> Tensor:
    """x ** c for a Python number c. Derivative: c * x**(c - 1) (0 for c == 0)."""
    if isinstance(exponent, int) and x.data.dtype.kind in "iub":
        if exponent < 0:
            raise RuntimeError(f"**: integers to negative integer powers are not allowed "
                               f"({x.dtype} tensor ** {exponent})")
        return new_leaf(np.power(x.data, exponent))  # an integer tensor stays integer, no gradient
    data = _floating(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.power(data, data.dtype.type(exponent))  # a numpy scalar, which a GPU takes (not a 0-d array)

    def vjp(grad: np.ndarray) -> np.ndarray:
        if exponent == 0:
            return np.zeros_like(grad)
        with np.errstate(divide="ignore", invalid="ignore"):
            return grad * exponent * np.power(x.data, exponent - 1)

    return record(out, f"**{exponent}", (x,), vjp)


# --- unary math ---------------------------------------------------------------------------------


def exp(x: Tensor) -> Tensor:
    """e ** x. Derivative: e ** x."""
    out = np.exp(_floating(x))
    return record(out, "exp", (x,),
                  lambda grad: grad * out, saved=(), saves_output=True)


def log(x: Tensor) -> Tensor:
    """Natural log of x. Derivative: 1 / x."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(_floating(x))
    return record(out, "log", (x,),
                  lambda grad: grad / x.data)


def sqrt(x: Tensor) -> Tensor:
    """Square root of x. Derivative: 1 / (2 * sqrt(x))."""
    with np.errstate(invalid="ignore"):
        out = np.sqrt(_floating(x))

    def vjp(grad: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return grad / (2 * out)

    return record(out, "sqrt", (x,), vjp, saved=(), saves_output=True)


def abs(x: Tensor) -> Tensor:  # noqa: A001 - the op's name, as in torch.abs
    """|x|. Derivative: sign(x) (0 at 0 and at nan, as in PyTorch)."""
    _require_dtype(x, "iuf", "abs", "integer or floating")
    return record(np.abs(x.data), "abs", (x,),
                  lambda grad: grad * _sign_array(x.data, grad.dtype))


def tanh(x: Tensor) -> Tensor:
    """tanh(x). Derivative: 1 - tanh(x)**2."""
    out = np.tanh(_floating(x))
    return record(out, "tanh", (x,),
                  lambda grad: grad * (1 - out * out), saved=(), saves_output=True)


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + e**-x). Derivative: sigmoid(x) * (1 - sigmoid(x))."""
    out = sigmoid_array(_floating(x))
    return record(out, "sigmoid", (x,),
                  lambda grad: grad * out * (1 - out), saved=(), saves_output=True)


def sigmoid_array(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e**-x) on an array, in x's dtype, without overflow for large |x|."""
    # e**-|x| never overflows; the two branches give the same value where both are finite.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0). Derivative: 1 where x > 0, else 0. `inplace=True` (F.relu's) writes into x."""
    if inplace:
        return x.relu_()
    out = np.maximum(x.data, 0)
    return record(out, "relu", (x,),
                  lambda grad: grad * (out > 0), saved=(), saves_output=True)


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """x * mask / (1 - p), each mask element 0 with probability p, else 1. Derivative: mask / (1 - p).

    Outside training (or with p = 0) it is x itself. Draws from tensorgrad's generator
    (`tg.manual_seed`). `inplace=True` writes the result into x.
    """
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be between 0 and 1, got {p}")
    if not training or p == 0:
        return x
    if inplace:
        from tensorgrad.inplace import apply_inplace

        return apply_inplace(x, lambda t: _dropped(t, p, t.shape, "dropout"), name="dropout_")
    return _dropped(x, p, x.shape, "dropout")


def _dropped(x: Tensor, p: float, mask_shape: tuple[int, ...], op: str) -> Tensor:
    """x times a mask of `mask_shape` (broadcast over x): 0 with probability p, else 1 / (1 - p)."""
    keep = creation.default_generator().random(mask_shape) >= p
    scale = (keep / (1 - p) if p < 1 else keep * 0.0).astype(x.dtype)  # p = 1 drops everything
    if type(x.data) is not np.ndarray:  # the mask was drawn on the host: moved to x's device
        scale = array_like(scale, x.data)
    return record(x.data * scale, op, (x,), lambda grad: grad * scale, saved=())


def dropout1d(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Channel dropout of (N, C, L) or (C, L) input: each channel zeroed whole with probability p,
    the rest scaled by 1 / (1 - p). Derivative: the same mask."""
    return _channel_dropout(x, p, training, 1, "dropout1d")


def dropout2d(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Channel dropout of (N, C, H, W) or (C, H, W) input: each feature map zeroed whole with
    probability p, the rest scaled by 1 / (1 - p). Derivative: the same mask.

    A 3-D input is read as (N, C, L), with PyTorch's warning, as PyTorch reads it.
    """
    if x.ndim == 3:
        warnings.warn("dropout2d: received a 3D input; assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), as in PyTorch", stacklevel=2)
        return _channel_dropout(x, p, training, 1, "dropout2d")
    return _channel_dropout(x, p, training, 2, "dropout2d")


def _channel_dropout(x: Tensor, p: float, training: bool, spatial: int, op: str) -> Tensor:
    """Dropout with one draw per channel: the mask has size 1 along the last `spatial` dimensions."""
    if x.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{op}: expected {spatial + 1}D or {spatial + 2}D input, but received input "
                           f"of shape {x.shape}")
    if not 0 <= p <= 1:
        raise ValueError(f"{op}: p must be between 0 and 1, got {p}")
    if not training or p == 0:
        return x
    return _dropped(x, p, x.shape[:x.ndim - spatial] + (1,) * spatial, op)


def clamp(x: Tensor, min: Operand | None = None, max: Operand | None = None) -> Tensor:  # noqa: A002
    """x limited to [min, max]. Derivative: 1 where min <= x <= max, else 0 (see `clip`)."""
    if min is None and max is None:
        raise ArgumentValueError("clamp: at least one of 'min' and 'max' must not be None")
    return clip(x, min, max)


def maximum(a: Operand, b: Operand) -> Tensor:
    """Elementwise max(a, b). The gradient goes to the larger input, split evenly on ties."""
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    return record(_binary(np.maximum, a, b, "maximum"), "maximum", (a, b),
                  lambda grad: grad * _share(a.data, b.data),
                  lambda grad: grad * _share(b.data, a.data))


def minimum(a: Operand, b: Operand) -> Tensor:
    """Elementwise min(a, b). The gradient goes to the smaller input, split evenly on ties."""
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    return record(_binary(np.minimum, a, b, "minimum"), "minimum", (a, b),
                  lambda grad: grad * _share(b.data, a.data),
                  lambda grad: grad * _share(a.data, b.data))


def _share(winner: np.ndarray, loser: np.ndarray) -> np.ndarray:
    """1 where `winner` > `loser`, 0.5 where equal, 0 elsewhere."""
    return (winner > loser) + 0.5 * (winner == loser)


def where(condition: Any, a: Operand | None = None, b: Operand | None = None) -> Any:
    """a where condition is true, else b (broadcasting all three). The gradient follows.

    `where(condition)` alone is `nonzero(condition, as_tuple=True)`, as in PyTorch.
    """
    cond = condition.data if isinstance(condition, Tensor) else np.asarray(condition)
    if a is None and b is None:
        from tensorgrad.indexing import nonzero

        return nonzero(condition if isinstance(condition, Tensor) else new_leaf(cond), as_tuple=True)
    if a is None or b is None:
        raise TypeError("where(): give both input and other, or neither")
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where(): condition must be a bool tensor, got dtype {cond.dtype}")
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    x, y = a.data, b.data
    if type(x) is not np.ndarray:  # a condition given as a list or a numpy array: where the operands are
        cond = array_like(cond, x)
    if x.dtype is not y.dtype:
        x, y = _promoted(x, y, floating=False)
    try:
        out = np.where(cond, x, y)
    except ValueError:
        raise ShapeError(
            f"where: shapes {cond.shape}, {a.shape} and {b.shape} can't be broadcast together"
        ) from None
    return record(out, "where", (a, b),
                  lambda grad: np.where(cond, grad, 0),
                  lambda grad: np.where(cond, 0, grad), saved=())


# --- comparisons: bool tensors, no gradient -----------------------------------------------------


def _compare(ufunc: np.ufunc, name: str) -> Callable[[Operand, Operand], Tensor]:
    def compare(a: Operand, b: Operand) -> Tensor:
        a, b = _operands(a, b)
        try:
            out = ufunc(a.data, b.data)
            return new_leaf(out if is_array(out) else np.asarray(out))  # numpy's 0-d result is a scalar
        except ValueError:
            raise ShapeError(
                f"{name} ({ufunc.__name__}): shapes {a.shape} and {b.shape} can't be broadcast together"
            ) from None

    compare.__name__ = compare.__qualname__ = ufunc.__name__
    compare.__doc__ = f"a {name} b, elementwise: a bool tensor that carries no gradient."
    return compare


lt = _compare(np.less, "<")
le = _compare(np.less_equal, "<=")
gt = _compare(np.greater, ">")
ge = _compare(np.greater_equal, ">=")
eq = _compare(np.equal, "==")
ne = _compare(np.not_equal, "!=")


# --- breadth: errors of the ops below ---------------------------------------------------------


def _require_dtype(x: Tensor, kinds: str, op: str, what: str) -> None:
    """Raise `UnsupportedDtypeError` unless x's dtype kind is one of `kinds` ('b', 'iu', 'f')."""
    if x.data.dtype.kind not in kinds:
        raise UnsupportedDtypeError(f"{op}: not implemented for {x.dtype} tensors (of shape {x.shape}); "
                                    f"it takes {what} tensors, as in PyTorch")


def _quietly(ufunc: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
    """ufunc(*args) without numpy's floating-point warnings: PyTorch gives inf and nan silently."""
    with np.errstate(all="ignore"):
        return ufunc(*args)


def _quiet(vjp: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """`vjp`, run without numpy's floating-point warnings (d/dx acos(x) at 1 is -inf, silently)."""
    def quiet_vjp(grad: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return vjp(grad)
    return quiet_vjp


def _no_slope(grad: np.ndarray) -> np.ndarray:
    """The gradient of a step function (sign, floor, round, ...): 0, as PyTorch defines it."""
    return np.zeros_like(grad)


# --- trigonometric and hyperbolic functions ---------------------------------------------------
# Floating ops: an integer or bool tensor is computed in the default float dtype (`_floating`).


def sin(x: Tensor) -> Tensor:
    """sin(x). Derivative: cos(x)."""
    return record(_quietly(np.sin, _floating(x)), "sin", (x,),
                  _quiet(lambda grad: grad * np.cos(x.data)))


def cos(x: Tensor) -> Tensor:
    """cos(x). Derivative: -sin(x)."""
    return record(_quietly(np.cos, _floating(x)), "cos", (x,),
                  _quiet(lambda grad: -grad * np.sin(x.data)))


def tan(x: Tensor) -> Tensor:
    """tan(x). Derivative: 1 + tan(x)**2."""
    out = _quietly(np.tan, _floating(x))
    return record(out, "tan", (x,),
                  _quiet(lambda grad: grad * (1 + out * out)), saved=(), saves_output=True)


def asin(x: Tensor) -> Tensor:
    """arcsin(x) (nan outside [-1, 1]). Derivative: 1 / sqrt(1 - x**2)."""
    return record(_quietly(np.arcsin, _floating(x)), "asin", (x,),
                  _quiet(lambda grad: grad / np.sqrt(1 - x.data * x.data)))


def acos(x: Tensor) -> Tensor:
    """arccos(x) (nan outside [-1, 1]). Derivative: -1 / sqrt(1 - x**2)."""
    return record(_quietly(np.arccos, _floating(x)), "acos", (x,),
                  _quiet(lambda grad: -grad / np.sqrt(1 - x.data * x.data)))


def atan(x: Tensor) -> Tensor:
    """arctan(x). Derivative: 1 / (1 + x**2)."""
    return record(_quietly(np.arctan, _floating(x)), "atan", (x,),
                  _quiet(lambda grad: grad / (1 + x.data * x.data)))


def sinh(x: Tensor) -> Tensor:
    """sinh(x). Derivative: cosh(x)."""
    return record(_quietly(np.sinh, _floating(x)), "sinh", (x,),
                  _quiet(lambda grad: grad * np.cosh(x.data)))


def cosh(x: Tensor) -> Tensor:
    """cosh(x). Derivative: sinh(x)."""
    return record(_quietly(np.cosh, _floating(x)), "cosh", (x,),
                  _quiet(lambda grad: grad * np.sinh(x.data)))


def asinh(x: Tensor) -> Tensor:
    """arsinh(x). Derivative: 1 / sqrt(x**2 + 1)."""
    return record(_quietly(np.arcsinh, _floating(x)), "asinh", (x,),
                  _quiet(lambda grad: grad / np.sqrt(x.data * x.data + 1)))


def acosh(x: Tensor) -> Tensor:
    """arcosh(x) (nan below 1). Derivative: 1 / sqrt(x**2 - 1)."""
    return record(_quietly(np.arccosh, _floating(x)), "acosh", (x,),
                  _quiet(lambda grad: grad / np.sqrt(x.data * x.data - 1)))


def atanh(x: Tensor) -> Tensor:
    """artanh(x) (+-inf at +-1, nan beyond). Derivative: 1 / (1 - x**2)."""
    return record(_quietly(np.arctanh, _floating(x)), "atanh", (x,),
                  _quiet(lambda grad: grad / (1 - x.data * x.data)))


# --- exponentials, logarithms, powers ---------------------------------------------------------

_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))
_TWO_OVER_SQRT_PI = 2 / float(np.sqrt(np.pi))


def erf(x: Tensor) -> Tensor:
    """erf(x) = 2/sqrt(pi) * integral from 0 to x of e**(-t**2) dt. Derivative: 2/sqrt(pi) * e**(-x**2)."""
    return record(_erf_array(_floating(x)), "erf", (x,),
                  _quiet(lambda grad: grad * _TWO_OVER_SQRT_PI * np.exp(-x.data * x.data)))


# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23 (1969),
# the coefficients of netlib's CALERF, highest power first: erf to double precision.
_ERF_SMALL = ((1.85777706184603153e-1, 3.16112374387056560e0, 1.13864154151050156e2,
               3.77485237685302021e2, 3.20937758913846947e3),
              (1.0, 2.36012909523441209e1, 2.44024637934444173e2, 1.28261652607737228e3,
               2.84423683343917062e3))
_ERFC_MIDDLE = ((2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e0,
                 6.61191906371416295e1, 2.98635138197400131e2, 8.81952221241769090e2,
                 1.71204761263407058e3, 2.05107837782607147e3, 1.23033935479799725e3),
                (1.0, 1.57449261107098347e1, 1.17693950891312499e2, 5.37181101862009858e2,
                 1.62138957456669019e3, 3.29079923573345963e3, 4.36261909014324716e3,
                 3.43936767414372164e3, 1.23033935480374942e3))
_ERFC_LARGE = ((1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
                1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4),
               (1.0, 2.56852019228982242e0, 1.87295284992346047e0, 5.27905102951428412e-1,
                6.05183413124413191e-2, 2.33520497626869185e-3))


def _erf_array(x: np.ndarray) -> np.ndarray:
    """erf of a float array, in its dtype (NumPy has no erf; this is Cody's, computed in float64)."""
    small, tail, y = _erf_parts(x)
    with np.errstate(invalid="ignore"):
        out = np.where(y < 0.46875, small, np.where(np.isnan(y), y, 1 - tail))
    return np.copysign(out, x).astype(x.dtype, copy=False)  # erf is odd; erf(-0.0) is -0.0


def _erfc_array(x: np.ndarray) -> np.ndarray:
    """erfc = 1 - erf, without the cancellation: the tail is computed as itself (erfc(10) ~ 2e-45)."""
    small, tail, y = _erf_parts(x)
    with np.errstate(invalid="ignore"):
        out = np.where(y < 0.46875, 1 - np.copysign(small, x), np.where(x > 0, tail, 2 - tail))
        out = np.where(np.isnan(y), y, out)
    return out.astype(x.dtype, copy=False)


def _erf_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(erf(|x|) where |x| < 0.46875, erfc(|x|) elsewhere, |x|), in float64 (Cody's three ranges).

    Below 0.46875, erf(|x|) / |x| is a rational function of x**2; up to 4, erfc(|x|) * e**(x**2)
    is one of |x|; beyond, erfc(|x|) * e**(x**2) * |x| is one of 1 / x**2.
    """
    y = np.abs(x.astype(np.float64))
    with np.errstate(all="ignore"):  # each range is evaluated everywhere, and kept where it holds
        z = y * y
        small = y * _rational(_ERF_SMALL, z)
        middle = np.exp(-z) * _rational(_ERFC_MIDDLE, y)
        w = 1 / z
        large = np.exp(-z) / y * (1 / float(np.sqrt(np.pi)) - w * _rational(_ERFC_LARGE, w))
        tail = np.where(y <= 4, middle, large)
    return small, tail, y


def _rational(coefficients: tuple[tuple[float, ...], tuple[float, ...]], z: np.ndarray) -> np.ndarray:
    """p(z) / q(z) for polynomials given by their coefficients, highest power first (Horner)."""
    numerator, denominator = (np.full_like(z, c[0]) for c in coefficients)
    for c in coefficients[0][1:]:
        numerator = numerator * z + c
    for c in coefficients[1][1:]:
        denominator = denominator * z + c
    return numerator / denominator


def erfc(x: Tensor) -> Tensor:
    """1 - erf(x), accurate where erf(x) is close to 1. Derivative: -2/sqrt(pi) * e**(-x**2)."""
    return record(_erfc_array(_floating(x)), "erfc", (x,),
                  _quiet(lambda grad: -grad * _TWO_OVER_SQRT_PI * np.exp(-x.data * x.data)))


def exp2(x: Tensor) -> Tensor:
    """2 ** x. Derivative: 2 ** x * ln(2)."""
    out = _quietly(np.exp2, _floating(x))
    return record(out, "exp2", (x,),
                  _quiet(lambda grad: grad * out * _LN2), saved=(), saves_output=True)


def expm1(x: Tensor) -> Tensor:
    """e ** x - 1, accurate near 0. Derivative: e ** x."""
    out = _quietly(np.expm1, _floating(x))
    return record(out, "expm1", (x,),
                  _quiet(lambda grad: grad * (out + 1)), saved=(), saves_output=True)


def log2(x: Tensor) -> Tensor:
    """log2(x). Derivative: 1 / (x * ln(2))."""
    return record(_quietly(np.log2, _floating(x)), "log2", (x,),
                  _quiet(lambda grad: grad / (x.data * _LN2)))


def log10(x: Tensor) -> Tensor:
    """log10(x). Derivative: 1 / (x * ln(10))."""
    return record(_quietly(np.log10, _floating(x)), "log10", (x,),
                  _quiet(lambda grad: grad / (x.data * _LN10)))


def log1p(x: Tensor) -> Tensor:
    """ln(1 + x), accurate near 0. Derivative: 1 / (1 + x)."""
    return record(_quietly(np.log1p, _floating(x)), "log1p", (x,),
                  _quiet(lambda grad: grad / (x.data + 1)))


def rsqrt(x: Tensor) -> Tensor:
    """1 / sqrt(x). Derivative: -1 / (2 * x ** 1.5), that is -rsqrt(x)**3 / 2."""
    out = _quietly(lambda data: 1 / np.sqrt(data), _floating(x))
    return record(out, "rsqrt", (x,),
                  _quiet(lambda grad: -0.5 * grad * out * out * out), saved=(), saves_output=True)


def square(x: Tensor) -> Tensor:
    """x ** 2 (an integer tensor stays integer; bool becomes int64). Derivative: 2 * x."""
    data = x.data.astype(np.int64) if x.data.dtype.kind == "b" else x.data
    return record(_quietly(np.square, data), "square", (x,),
                  _quiet(lambda grad: grad * 2 * x.data))


def reciprocal(x: Tensor) -> Tensor:
    """1 / x. Derivative: -1 / x**2."""
    out = _quietly(np.reciprocal, _floating(x))
    return record(out, "reciprocal", (x,),
                  _quiet(lambda grad: -grad * out * out), saved=(), saves_output=True)


# --- sign and rounding: step functions, whose gradient PyTorch defines as 0 ---------------------


def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of x (0 for 0, -0.0 and nan, as in PyTorch). Derivative: 0."""
    data = x.data
    out = data.copy() if data.dtype.kind == "b" else _sign_array(data, data.dtype)
    return record(out, "sign", (x,), _no_slope, saved=())


def _sign_array(data: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """(data > 0) - (data < 0) in `dtype`: PyTorch's sign, 0 at -0.0 and nan (np.sign gives nan)."""
    return np.subtract(data > 0, data < 0, dtype=dtype)


def floor(x: Tensor) -> Tensor:
    """The largest integer <= x (an integer tensor is returned as a copy). Derivative: 0."""
    return record(_rounded(np.floor, x, "floor"), "floor", (x,), _no_slope, saved=())


def ceil(x: Tensor) -> Tensor:
    """The smallest integer >= x (an integer tensor is returned as a copy). Derivative: 0."""
    return record(_rounded(np.ceil, x, "ceil"), "ceil", (x,), _no_slope, saved=())


def trunc(x: Tensor) -> Tensor:
    """x rounded toward zero (an integer tensor is returned as a copy). Derivative: 0."""
    return record(_rounded(np.trunc, x, "trunc"), "trunc", (x,), _no_slope, saved=())


def round(x: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001 - the op's name, as in torch.round
    """x rounded to `decimals` places, halves to even (round(2.5) is 2). Derivative: 0."""
    if decimals == 0:
        return record(_rounded(np.rint, x, "round"), "round", (x,), _no_slope, saved=())
    _require_dtype(x, "f", "round(decimals=)", "floating")
    # x * 10**decimals rounded, then divided back: numpy's and PyTorch's algorithm alike.
    return record(_quietly(np.round, x.data, decimals), "round", (x,), _no_slope, saved=())


def _rounded(ufunc: np.ufunc, x: Tensor, op: str) -> np.ndarray:
    """ufunc(x) for a float tensor; a copy of an integer one (already whole); bool is refused."""
    _require_dtype(x, "iuf", op, "integer or floating")
    return x.data.copy() if x.data.dtype.kind in "iu" else _quietly(ufunc, x.data)


def frac(x: Tensor) -> Tensor:
    """x - trunc(x), the fractional part with x's sign. Derivative: 1."""
    _require_dtype(x, "f", "frac", "floating")
    return record(_quietly(lambda data: data - np.trunc(data), x.data), "frac", (x,),
                  lambda grad: grad, saved=())


# --- division family: integer tensors stay integer --------------------------------------------


def fmod(a: Operand, b: Operand) -> Tensor:
    """C's fmod: a - trunc(a / b) * b, with the sign of a. d/da = 1, d/db = -trunc(a / b)."""
    a, b = _operands(a, b)
    return record(_dividing(np.fmod, a, b, "fmod"), "fmod", (a, b),
                  lambda grad: grad,
                  _quiet(lambda grad: -grad * np.trunc(a.data / b.data)))


def remainder(a: Operand, b: Operand) -> Tensor:
    """Python's a % b: a - floor(a / b) * b, with the sign of b. d/da = 1, d/db = -floor(a / b)."""
    a, b = _operands(a, b)
    return record(_dividing(_remainder, a, b, "remainder"), "remainder", (a, b),
                  lambda grad: grad,
                  _quiet(lambda grad: -grad * np.floor_divide(a.data, b.data)))


def _remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """fmod moved into the divisor's sign where they differ (PyTorch's formula, zeros keep x's sign)."""
    mod = np.fmod(x, y)
    return np.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod)


def floor_divide(a: Operand, b: Operand) -> Tensor:
    """a // b, the quotient rounded down. No derivative: backward raises, as in PyTorch."""
    a, b = _operands(a, b)
    no_slope = _not_differentiable("floor_divide", "; div(a, b, rounding_mode='floor') computes the same "
                                                   "with a zero gradient")
    return record(_dividing(np.floor_divide, a, b, "floor_divide"), "floor_divide", (a, b),
                  no_slope, no_slope, saved=())


def div_rounded(a: Operand, b: Operand, rounding_mode: str) -> Tensor:
    """a / b rounded toward zero ('trunc') or down ('floor'); integers stay integer. Derivative: 0.

    `div(a, b, rounding_mode=...)` comes here.
    """
    if rounding_mode not in ("trunc", "floor"):
        raise ArgumentValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', "
                                 f"got {rounding_mode!r}")
    a, b = _operands(a, b)
    ufunc = _trunc_divide if rounding_mode == "trunc" else np.floor_divide
    return record(_dividing(ufunc, a, b, "div"), "div", (a, b), _no_slope, _no_slope, saved=())


def _trunc_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The quotient rounded toward zero; for integers without a float round trip (exact for int64)."""
    if x.dtype.kind == "f":
        return np.trunc(x / y)
    floored = np.floor_divide(x, y)
    return floored + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0))).astype(floored.dtype)


def _dividing(ufunc: Callable[..., np.ndarray], a: Tensor, b: Tensor, op: str) -> np.ndarray:
    """ufunc(a, b) in the promoted dtype. Integers divided by zero raise; floats give inf and nan."""
    if a.data.dtype.kind == "b" and b.data.dtype.kind == "b":
        raise UnsupportedDtypeError(f"{op}: not implemented for two bool tensors (shapes {a.shape} "
                                    f"and {b.shape}), as in PyTorch")
    integral = a.data.dtype.kind in "iub" and b.data.dtype.kind in "iub"
    if integral and not np.all(b.data):
        raise IntegerDivisionByZeroError(f"{op}: integer division by zero (the divisor of shape {b.shape} "
                                    "holds a 0)")
    with np.errstate(all="ignore"):
        return _binary(ufunc, a, b, op)


def _not_differentiable(op: str, instead: str = "") -> Callable[[np.ndarray], np.ndarray]:
    """A VJP that raises as PyTorch does for an op without a derivative, naming what to use instead."""
    def vjp(grad: np.ndarray) -> np.ndarray:
        raise RuntimeError(f"the derivative of {op} is not implemented (as in PyTorch)" + instead)
    return vjp


# --- more binary math -------------------------------------------------------------------------


def copysign(a: Operand, b: Operand) -> Tensor:
    """|a| with the sign of b. d/da = copysign(a, b) / a (0 at a = 0), d/db = 0.

    Integer and bool operands give the default float dtype, as in PyTorch.
    """
    a, b = _operands(a, b)
    out = _binary(np.copysign, a, b, "copysign", floating=True)
    return record(out, "copysign", (a, b),
                  _quiet(lambda grad: grad * np.where(a.data == 0, 0, out / a.data)),
                  _no_slope, saves_output=True)


def logaddexp(a: Operand, b: Operand) -> Tensor:
    """ln(e**a + e**b), without overflow. d/da = 1 / (1 + e**(b - a)), d/db = 1 / (1 + e**(a - b))."""
    return _log_of_sum(a, b, np.logaddexp, np.exp, "logaddexp")


def _log_of_sum(a: Operand, b: Operand, ufunc: np.ufunc, power: np.ufunc, op: str) -> Tensor:
    """log_k(k**a + k**b) by `ufunc`, k = e or 2 (`power` is k**x): floating operands only.
    d/da = 1 / (1 + k**(b - a)), d/db = 1 / (1 + k**(a - b))."""
    a, b = _operands(a, b)
    _require_floating_result(a, b, op)
    return record(_quietly(_binary, ufunc, a, b, op), op, (a, b),
                  _quiet(lambda grad: grad / (1 + power(b.data - a.data))),
                  _quiet(lambda grad: grad / (1 + power(a.data - b.data))))


def lerp(start: Tensor, end: Tensor, weight: Tensor | float) -> Tensor:
    """start + weight * (end - start). d/dstart = 1 - weight, d/dend = weight, d/dweight = end - start.

    All three broadcast; the result has start's dtype, which end (and a weight tensor with
    dimensions) must share, as in PyTorch.
    """
    operands = (start, end) if not isinstance(weight, Tensor) else (start, end, weight)
    for name, t in zip(("start", "end", "weight"), operands, strict=False):
        if not isinstance(t, Tensor):
            raise TypeError(f"lerp: {name} must be a Tensor, got {type(t).__name__}")
        _require_dtype(t, "f", f"lerp ({name})", "floating")
        if t.dtype != start.dtype and t.ndim > 0:
            raise UnsupportedDtypeError(f"lerp: expected dtype {start.dtype} for {name}, got {t.dtype}")
    w = weight.data.astype(start.dtype, copy=False) if isinstance(weight, Tensor) else weight
    try:
        out = _lerp_array(start.data, end.data, w)
    except ValueError:
        shapes = " and ".join(str(t.shape) for t in operands)
        raise ShapeError(f"lerp: shapes {shapes} (start, end, weight) can't be broadcast together") from None
    vjps = (_quiet(lambda grad: grad * (1 - w)),
            _quiet(lambda grad: grad * w),
            _quiet(lambda grad: grad * (end.data - start.data)))
    return record(out, "lerp", operands, *vjps[:len(operands)])


def _lerp_array(s: np.ndarray, e: np.ndarray, w: np.ndarray | float) -> np.ndarray:
    # PyTorch's two-sided formula: exact at both ends (weight 0 gives start, weight 1 gives end).
    with np.errstate(all="ignore"):
        diff = e - s
        return np.where(np.abs(w) < 0.5, s + w * diff, e - diff * (1 - w))


def clip(x: Tensor, min: Operand | None = None, max: Operand | None = None) -> Tensor:  # noqa: A002
    """x limited to [min, max] (bounds: numbers or tensors, broadcasting; where min > max, max).

    d/dx = 1 where min <= x <= max, d/dmin = 1 where x < min (and min < max),
    d/dmax = 1 where x > max (or max < min); 0 elsewhere. The same op as `clamp`.
    """
    if min is None and max is None:
        raise ArgumentValueError("clip: at least one of 'min' and 'max' must not be None")
    lo = None if min is None else ensure_tensor(min, x)
    hi = None if max is None else ensure_tensor(max, x)
    if all(t.data.dtype.kind == "b" for t in (x, lo, hi) if t is not None):
        _require_dtype(x, "iuf", "clip", "integer or floating")  # bool bounds keep a bool tensor bool
    out = x
    if lo is not None:
        out = new_leaf(_binary(np.maximum, out, lo, "clip"))
    if hi is not None:
        out = new_leaf(_binary(np.minimum, out, hi, "clip"))
    inputs = (x,) + tuple(t for t in (lo, hi) if t is not None)
    return record(out.data, "clip", inputs, *_clip_vjps(x, lo, hi))


def _clip_vjps(x: Tensor, lo: Tensor | None, hi: Tensor | None) -> list[Callable[[np.ndarray], np.ndarray]]:
    """One gradient formula per given input of clip (PyTorch's `clamp_backward_min_max`)."""
    def inside() -> np.ndarray:
        above = True if lo is None else x.data >= lo.data
        below = True if hi is None else x.data <= hi.data
        return np.logical_and(above, below)

    vjps = [lambda grad: np.where(inside(), grad, 0)]
    if lo is not None:
        vjps.append(lambda grad: np.where((x.data < lo.data) & (True if hi is None else lo.data < hi.data),
                                          grad, 0))
    if hi is not None:
        vjps.append(lambda grad: np.where((x.data > hi.data) | (False if lo is None else hi.data < lo.data),
                                          grad, 0))
    return vjps


# --- more two-argument math: atan2, hypot, fmax, fmin, xlogy, logaddexp2, float_power -----------


def atan2(a: Operand, b: Operand) -> Tensor:
    """The angle of the point (b, a), in (-pi, pi]. d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2).

    Integer operands give the default float dtype, as in PyTorch (`arctan2` is the same op).
    """
    a, b = _operands(a, b)
    out = _quietly(_binary, np.arctan2, a, b, "atan2", True)

    def inverse_square_radius() -> np.ndarray:
        """1 / (a^2 + b^2), 0 at the origin (where PyTorch's gradient is 0)."""
        square = a.data * a.data + b.data * b.data
        return np.where(square == 0, 0, 1 / np.where(square == 0, 1, square))

    return record(out, "atan2", (a, b),
                  lambda grad: grad * b.data * inverse_square_radius(),
                  lambda grad: -grad * a.data * inverse_square_radius())


arctan2 = atan2


def hypot(a: Operand, b: Operand) -> Tensor:
    """sqrt(a^2 + b^2), without overflow. d/da = a / out, d/db = b / out. Floating tensors only."""
    a, b = _operands(a, b)
    _require_floating_result(a, b, "hypot")
    out = _binary(np.hypot, a, b, "hypot")
    return record(out, "hypot", (a, b),
                  _quiet(lambda grad: grad * a.data / out), _quiet(lambda grad: grad * b.data / out),
                  saves_output=True)


def fmax(a: Operand, b: Operand) -> Tensor:
    """Elementwise max that ignores nan (nan only where both are). The gradient goes to a where
    a >= b or b is nan, else to b (all of it to a on ties, as PyTorch's formula)."""
    a, b = _operands(a, b)
    return record(_binary(np.fmax, a, b, "fmax"), "fmax", (a, b),
                  lambda grad: np.where((a.data >= b.data) | _nan(b.data), grad, 0),
                  lambda grad: np.where((a.data >= b.data) | _nan(b.data), 0, grad))


def fmin(a: Operand, b: Operand) -> Tensor:
    """Elementwise min that ignores nan (nan only where both are). The gradient goes to a where
    a <= b or b is nan, else to b."""
    a, b = _operands(a, b)
    return record(_binary(np.fmin, a, b, "fmin"), "fmin", (a, b),
                  lambda grad: np.where((a.data <= b.data) | _nan(b.data), grad, 0),
                  lambda grad: np.where((a.data <= b.data) | _nan(b.data), 0, grad))


def _require_floating_result(a: Tensor, b: Tensor, op: str) -> None:
    """Raise for two integer or bool operands: ops that PyTorch computes only in floating point."""
    if a.data.dtype.kind != "f" and b.data.dtype.kind != "f":
        _require_dtype(a, "f", op, "floating")


def _nan(data: np.ndarray) -> np.ndarray | bool:
    """Where `data` is nan (False for integers, which have none)."""
    return np.isnan(data) if data.dtype.kind in "fc" else False


def xlogy(a: Operand, b: Operand) -> Tensor:
    """a * log(b), 0 where a is 0 (even where b is 0), nan where b is nan.

    d/da = log(b) (0 where a = 0 and b <= 0), d/db = a / b. Integers give the default float dtype.
    """
    a, b = _operands(a, b)
    x, y = _promoted(a.data, b.data, floating=True)
    with np.errstate(all="ignore"):
        out = np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y)).astype(x.dtype, copy=False)
    return record(out, "xlogy", (a, b),
                  _quiet(lambda grad: np.where(((grad == 0) & ~np.isnan(y)) | ((x == 0) & (y <= 0)),
                                               0, grad * np.log(y))),
                  _quiet(lambda grad: grad * x / y))


def logaddexp2(a: Operand, b: Operand) -> Tensor:
    """log2(2**a + 2**b), without overflow. d/da = 1 / (1 + 2**(b - a)), d/db = 1 / (1 + 2**(a - b))."""
    return _log_of_sum(a, b, np.logaddexp2, np.exp2, "logaddexp2")


def float_power(a: Operand, b: Operand) -> Tensor:
    """a ** b computed in float64 whatever the operands' dtypes (PyTorch's double precision power).
    Gradient: as `pow`'s, cast back to each operand's dtype."""
    a, b = _operands(a, b)
    return pow(a.double(), b.double())


# --- unary math: sinc, logit, nan_to_num, angle conversions, and PyTorch's alias names ----------


def sinc(x: Tensor) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0. Derivative: (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at 0."""
    data = _floating(x)
    out = np.sinc(data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            angle = np.pi * data
            slope = (np.cos(angle) * angle - np.sin(angle)) / (angle * data)
        return grad * np.where(data == 0, 0, slope)

    return record(out, "sinc", (x,), vjp)


def logit(x: Tensor, eps: float | None = None) -> Tensor:
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given.

    Derivative: 1 / (x (1 - x)); with eps, 0 where x was clamped; without, nan outside [0, 1].
    """
    data = _floating(x)
    z = data if eps is None else np.clip(data, eps, 1 - eps)
    with np.errstate(all="ignore"):
        out = np.log(z / (1 - z))

    def vjp(grad: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            slope = grad / (data * (1 - data))
        if eps is None:
            return np.where((data < 0) | (data > 1), np.nan, slope)
        return np.where((data < eps) | (data > 1 - eps), 0, slope)

    return record(out, "logit", (x,), vjp)


def nan_to_num(x: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """x with nan, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite values
    unless given). Derivative: 1 where x is finite, 0 where it was replaced."""
    data = x.data
    if data.dtype.kind not in "fc":
        return record(data.copy(), "nan_to_num", (x,), lambda grad: grad, saved=())
    out = np.nan_to_num(data, nan=nan, posinf=posinf, neginf=neginf)
    return record(out, "nan_to_num", (x,), lambda grad: np.where(np.isfinite(data), grad, 0))


def deg2rad(x: Tensor) -> Tensor:
    """Degrees to radians: x * pi / 180 (integers give the default float dtype)."""
    return mul(x, np.pi / 180)


def rad2deg(x: Tensor) -> Tensor:
    """Radians to degrees: x * 180 / pi (integers give the default float dtype)."""
    return mul(x, 180 / np.pi)


def sgn(x: Tensor) -> Tensor:
    """The sign of x (for real tensors, `sign`). Derivative: 0."""
    return sign(x)


def negative(x: Tensor) -> Tensor:
    """-x (`neg` by its NumPy name)."""
    return neg(x)


def positive(x: Tensor) -> Tensor:
    """x itself (unary +); a bool tensor is refused, as in PyTorch."""
    if x.data.dtype.kind == "b":
        raise UnsupportedDtypeError("positive: the + operator on a bool tensor is not supported; "
                                    "use logical ops instead")
    return x


def absolute(x: Tensor) -> Tensor:
    """|x| (`abs` by its NumPy name)."""
    return abs(x)


def true_divide(a: Operand, b: Operand) -> Tensor:
    """a / b in floating point (`div` without a rounding mode)."""
    return div(a, b)


def clamp_min(x: Tensor, min: Operand) -> Tensor:  # noqa: A002 - PyTorch's name
    """max(x, min): `clamp(x, min=min)`."""
    return clamp(x, min=min)


def clamp_max(x: Tensor, max: Operand) -> Tensor:  # noqa: A002 - PyTorch's name
    """min(x, max): `clamp(x, max=max)`."""
    return clamp(x, max=max)


# --- bitwise ops: integer and bool tensors, no gradient ----------------------------------------


def bitwise_and(a: Operand, b: Operand) -> Tensor:
    """a & b, bit by bit (logical and on bool tensors). No gradient."""
    return _bitwise(np.bitwise_and, a, b, "bitwise_and (&)")


def bitwise_or(a: Operand, b: Operand) -> Tensor:
    """a | b, bit by bit (logical or on bool tensors). No gradient."""
    return _bitwise(np.bitwise_or, a, b, "bitwise_or (|)")


def bitwise_xor(a: Operand, b: Operand) -> Tensor:
    """a ^ b, bit by bit (logical xor on bool tensors). No gradient."""
    return _bitwise(np.bitwise_xor, a, b, "bitwise_xor (^)")


def bitwise_left_shift(a: Operand, b: Operand) -> Tensor:
    """a << b, that is a * 2**b wrapped to the dtype (0 for a shift past the width). No gradient."""
    return _bitwise(np.left_shift, a, b, "bitwise_left_shift (<<)", bools=False)


def bitwise_right_shift(a: Operand, b: Operand) -> Tensor:
    """a >> b, that is floor(a / 2**b) (0 or -1 for a shift past the width). No gradient."""
    return _bitwise(np.right_shift, a, b, "bitwise_right_shift (>>)", bools=False)


def bitwise_not(x: Tensor) -> Tensor:
    """~x: every bit flipped (logical not on a bool tensor). No gradient."""
    _require_dtype(x, "iub", "bitwise_not (~)", "integer or bool")
    return new_leaf(np.logical_not(x.data) if x.data.dtype.kind == "b" else np.invert(x.data))


def _bitwise(ufunc: np.ufunc, a: Operand, b: Operand, op: str, bools: bool = True) -> Tensor:
    a, b = _operands(a, b)
    _require_dtype(a, "iub", op, "integer or bool")
    _require_dtype(b, "iub", op, "integer or bool")
    if not bools and a.data.dtype.kind == "b" and b.data.dtype.kind == "b":
        raise UnsupportedDtypeError(f"{op}: not implemented for two bool tensors, as in PyTorch")
    return new_leaf(_binary(ufunc, a, b, op))


# --- logical ops and tests: bool tensors, no gradient ------------------------------------------

logical_and = _compare(np.logical_and, "and")
logical_or = _compare(np.logical_or, "or")
logical_xor = _compare(np.logical_xor, "xor")


def logical_not(x: Tensor) -> Tensor:
    """not x, elementwise (nonzero is true): a bool tensor that carries no gradient."""
    return new_leaf(np.logical_not(x.data))


def heaviside(x: Tensor, values: Operand) -> Tensor:
    """0 where x < 0, 1 where x > 0, `values` where x == 0 (broadcast), in their common dtype.
    No derivative: backward raises, as in PyTorch."""
    x, values = _operands(x, values)
    if x.dtype != values.dtype:
        raise UnsupportedDtypeError(f"heaviside: input ({x.dtype}) and values ({values.dtype}) must have "
                                    "the same dtype, as in PyTorch")
    out = _binary(lambda a, v: np.where(a == 0, v, (a > 0).astype(a.dtype)).astype(a.dtype, copy=False),
                  x, values, "heaviside")
    no_slope = _not_differentiable("heaviside")
    return record(out, "heaviside", (x, values), no_slope, no_slope, saved=())


def signbit(x: Tensor) -> Tensor:
    """True where the sign bit is set (negative numbers and -0.0): a bool tensor without gradient."""
    return new_leaf(np.signbit(x.data))


def isposinf(x: Tensor) -> Tensor:
    """True where x is +inf: a bool tensor without gradient."""
    return new_leaf(np.isposinf(x.data) if x.data.dtype.kind == "f" else np.zeros_like(x.data, dtype=bool))


def isneginf(x: Tensor) -> Tensor:
    """True where x is -inf: a bool tensor without gradient."""
    return new_leaf(np.isneginf(x.data) if x.data.dtype.kind == "f" else np.zeros_like(x.data, dtype=bool))


def isnan(x: Tensor) -> Tensor:
    """True where x is nan: a bool tensor that carries no gradient."""
    return new_leaf(np.isnan(x.data))


def isinf(x: Tensor) -> Tensor:
    """True where x is +inf or -inf: a bool tensor that carries no gradient."""
    return new_leaf(np.isinf(x.data))


def isfinite(x: Tensor) -> Tensor:
    """True where x is neither inf nor nan: a bool tensor that carries no gradient."""
    return new_leaf(np.isfinite(x.data))


def isclose(a: Tensor, b: Operand, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|a - b| <= atol + rtol * |b|, elementwise (equal infinities are close): a bool tensor.

    Both tensors have one dtype, as PyTorch requires; `equal_nan` makes nan close to nan.
    """
    a, b = _operands(a, b)
    if a.dtype != b.dtype:
        raise UnsupportedDtypeError(f"isclose: both tensors must have the same dtype, got {a.dtype} "
                                    f"and {b.dtype}")
    if rtol < 0 or atol < 0:
        raise ArgumentValueError(f"isclose: rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")
    x, y = a.data, b.data
    if x.dtype.kind == "b":  # PyTorch measures bools' distance as floats
        x, y = x.astype(float_dtype(x.dtype)), y.astype(float_dtype(y.dtype))
    try:
        close = x == y
    except ValueError:
        raise ShapeError(f"isclose: shapes {a.shape} and {b.shape} can't be broadcast together") from None
    if equal_nan:
        close = close | (np.isnan(x) & np.isnan(y))
    with np.errstate(all="ignore"):  # inf - inf is nan: not close, unless equal above
        error = np.abs(x - y)
        allowed = atol + rtol * np.abs(y)
    out = close | (np.isfinite(error) & (error <= allowed))
    return new_leaf(out if is_array(out) else np.asarray(out))


def allclose(a: Tensor, b: Operand, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether `isclose(a, b, ...)` holds for every element: a Python bool."""
    return bool(isclose(a, b, rtol, atol, equal_nan).data.all())


def equal(a: Tensor, b: Tensor) -> bool:
    """Whether a and b have the same shape and the same values (nan is never equal): a Python bool."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"equal: expected two Tensors, got {type(a).__name__} and {type(b).__name__}")
    return a.shape == b.shape and bool((a.data == b.data).all())
