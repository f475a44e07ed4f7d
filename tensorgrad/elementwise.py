"""Elementwise ops: arithmetic, unary math, comparisons and in-place updates (tutorial chapter 7).

Each op is its forward line followed by one gradient formula (VJP) per input, handed to
`record`, which reduces broadcast gradients back to each input's shape. Binary ops take a
Tensor or a Python number on either side; a float32 tensor stays float32 next to Python numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from scalargrad.engine import _grad_mode
from tensorgrad.tensor import VIEW_OPS, Tensor, _generator, _wrap, ensure_tensor, float32, float64, record

Operand = Tensor | float | int


def _operands(a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    # The ops test `type(x) is Tensor` first, as the fast path; a subclass (nn.Parameter) is
    # a Tensor too, and comes here.
    if not isinstance(a, Tensor):
        a = ensure_tensor(a, b) if isinstance(b, Tensor) else Tensor(a)
    if not isinstance(b, Tensor):
        b = ensure_tensor(b, a)
    return a, b


def _binary(ufunc: np.ufunc, a: Tensor, b: Tensor, op: str) -> np.ndarray:
    """ufunc(a, b) with NumPy broadcasting; a clear error when the shapes don't broadcast."""
    try:
        out = ufunc(a.data, b.data)
    except ValueError:
        name = op if op == ufunc.__name__ else f"{op} ({ufunc.__name__})"  # '+ (add)'
        raise ValueError(
            f"{name}: shapes {a.shape} and {b.shape} can't be broadcast together "
            "(trailing dimensions must match or be 1)"
        ) from None
    if out.dtype == float64 and a.data.dtype != float64 and b.data.dtype != float64:
        out = out.astype(float32)  # int tensor with a float: PyTorch's default float dtype
    return out


# --- arithmetic ---------------------------------------------------------------------------------


def add(a: Operand, b: Operand) -> Tensor:
    """a + b, broadcasting. d/da = 1, d/db = 1."""
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    return record(_binary(np.add, a, b, "+"), "+", (a, b),
                  lambda grad: grad,
                  lambda grad: grad, saved=())


def sub(a: Operand, b: Operand) -> Tensor:
    """a - b, broadcasting. d/da = 1, d/db = -1."""
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
                  lambda grad: grad * b.data,
                  lambda grad: grad * a.data)


def div(a: Operand, b: Operand) -> Tensor:
    """a / b, broadcasting. d/da = 1 / b, d/db = -a / b**2."""
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    return record(_binary(np.true_divide, a, b, "/"), "/", (a, b),
                  lambda grad: grad / b.data,
                  lambda grad: -grad * a.data / (b.data * b.data))


def neg(x: Tensor) -> Tensor:
    """-x. Derivative: -1."""
    return record(-x.data, "neg", (x,),
                  lambda grad: -grad, saved=())


def pow(a: Operand, b: Operand) -> Tensor:  # noqa: A001 - the op's name, as in torch.pow
    """a ** b. d/da = b * a**(b - 1); d/db = log(a) * a**b (0 where a == 0 and b >= 0)."""
    if isinstance(a, Tensor) and isinstance(b, int | float) and not isinstance(b, bool):
        return _pow_scalar(a, b)
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _binary(np.power, a, b, "**")

    def vjp_base(grad: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return grad * b.data * np.power(a.data, b.data - 1)

    def vjp_exponent(grad: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            g = grad * out * np.log(a.data)
        return np.where((a.data == 0) & (b.data >= 0), 0, g)

    return record(out, "**", (a, b), vjp_base, vjp_exponent, saves_output=True)


def _pow_scalar(x: Tensor, exponent: float) -> Tensor:
    """x ** c for a Python number c. Derivative: c * x**(c - 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.power(x.data, exponent if x.data.dtype.kind == "f" else float(exponent))
    if out.dtype == float64 and x.data.dtype != float64:
        out = out.astype(float32)

    def vjp(grad: np.ndarray) -> np.ndarray:
        if exponent == 2:
            return grad * 2 * x.data
        with np.errstate(divide="ignore", invalid="ignore"):
            return grad * exponent * np.power(x.data, exponent - 1)

    return record(out, f"**{exponent}", (x,), vjp)


# --- unary math ---------------------------------------------------------------------------------


def exp(x: Tensor) -> Tensor:
    """e ** x. Derivative: e ** x."""
    out = np.exp(x.data)
    return record(out, "exp", (x,),
                  lambda grad: grad * out, saved=(), saves_output=True)


def log(x: Tensor) -> Tensor:
    """Natural log of x. Derivative: 1 / x."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(x.data)
    return record(out, "log", (x,),
                  lambda grad: grad / x.data)


def sqrt(x: Tensor) -> Tensor:
    """Square root of x. Derivative: 1 / (2 * sqrt(x))."""
    with np.errstate(invalid="ignore"):
        out = np.sqrt(x.data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return grad / (2 * out)

    return record(out, "sqrt", (x,), vjp, saved=(), saves_output=True)


def abs(x: Tensor) -> Tensor:  # noqa: A001 - the op's name, as in torch.abs
    """|x|. Derivative: sign(x) (0 at 0, as in PyTorch)."""
    return record(np.abs(x.data), "abs", (x,),
                  lambda grad: grad * np.sign(x.data))


def tanh(x: Tensor) -> Tensor:
    """tanh(x). Derivative: 1 - tanh(x)**2."""
    out = np.tanh(x.data)
    return record(out, "tanh", (x,),
                  lambda grad: grad * (1 - out * out), saved=(), saves_output=True)


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + e**-x). Derivative: sigmoid(x) * (1 - sigmoid(x))."""
    out = sigmoid_array(x.data)
    return record(out, "sigmoid", (x,),
                  lambda grad: grad * out * (1 - out), saved=(), saves_output=True)


def sigmoid_array(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e**-x) on an array, in x's dtype, without overflow for large |x|."""
    # e**-|x| never overflows; the two branches give the same value where both are finite.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def relu(x: Tensor) -> Tensor:
    """max(x, 0). Derivative: 1 where x > 0, else 0."""
    out = np.maximum(x.data, 0)
    return record(out, "relu", (x,),
                  lambda grad: grad * (out > 0), saved=(), saves_output=True)


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """x * mask / (1 - p), each mask element 0 with probability p, else 1. Derivative: mask / (1 - p).

    Outside training (or with p = 0) it is x itself. Draws from tensorgrad's generator
    (`tg.manual_seed`).
    """
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be between 0 and 1, got {p}")
    if not training or p == 0:
        return x
    keep = _generator().random(x.shape) >= p
    scale = (keep / (1 - p) if p < 1 else keep * 0.0).astype(x.dtype)  # p = 1 drops everything
    return record(x.data * scale, "dropout", (x,), lambda grad: grad * scale, saved=())


def clamp(x: Tensor, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
    """x limited to [min, max]. Derivative: 1 where min <= x <= max, else 0."""
    if min is None and max is None:
        raise ValueError("clamp: give at least one of min and max")
    out = np.clip(x.data, min, max)
    out = out.astype(x.data.dtype, copy=False)

    def vjp(grad: np.ndarray) -> np.ndarray:
        inside = np.ones(x.data.shape, dtype=bool)
        if min is not None:
            inside &= x.data >= min
        if max is not None:
            inside &= x.data <= max
        return grad * inside

    return record(out, "clamp", (x,), vjp)


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


def where(condition: Any, a: Operand, b: Operand) -> Tensor:
    """a where condition is true, else b (broadcasting all three). The gradient follows."""
    cond = condition.data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got dtype {cond.dtype}")
    if type(a) is not Tensor or type(b) is not Tensor:
        a, b = _operands(a, b)
    try:
        out = np.where(cond, a.data, b.data)
    except ValueError:
        raise ValueError(
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
            return _wrap(np.asarray(ufunc(a.data, b.data)))
        except ValueError:
            raise ValueError(
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


# --- in place -----------------------------------------------------------------------------------


def arithmetic_inplace(x: Tensor, ufunc: np.ufunc, op: Callable[..., Tensor], other: Any,
                       name: str) -> Tensor:
    """x = op(x, other) in place; outside the graph, one numpy call that writes into x itself.

    An optimizer's `p -= lr * p.grad` takes this path under `no_grad()`: no temporary array, no
    copy. Inside the graph it is `apply_inplace`.
    """
    if _grad_mode.enabled and (x._requires_grad or (isinstance(other, Tensor) and other._requires_grad)):
        return apply_inplace(x, op, other, name=name)
    if not x.data.flags.writeable:
        _raise_read_only(name)
    values = other.data if isinstance(other, Tensor) else other
    try:
        ufunc(x.data, values, out=x.data, casting="same_kind")
    except ValueError:
        raise ValueError(
            f"{name}: an operand of shape {np.shape(values)} can't be broadcast to the shape {x.shape} "
            "of the tensor changed in place"
        ) from None
    except TypeError:
        raise TypeError(
            f"{name}: a result of dtype {np.result_type(x.data, values)} can't be stored in a "
            f"{x.dtype} tensor"
        ) from None
    x._versions[0] += 1
    return x


def apply_inplace(x: Tensor, op: Callable[..., Tensor], *args: Any, name: str) -> Tensor:
    """Write `op(x, *args)` into x's storage and make x the output of that op in the graph.

    The storage's version counter goes up, so a backward pass that saved the old values
    raises instead of using the new ones. Outside `no_grad`, a leaf that requires grad can't
    be changed in place: its gradient would no longer describe the values it holds.
    """
    recording = _grad_mode.enabled and (
        x._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args)
    )
    if not recording:
        _write(x, op(x, *args).data, name)
        return x
    if x._requires_grad and x._backward is None:
        raise RuntimeError(
            f"{name}: a leaf tensor that requires grad can't be changed in place outside "
            "no_grad(); wrap the update in `with tg.no_grad():`"
        )
    if x.data.base is not None and x._backward is not None and x.op in VIEW_OPS:
        raise RuntimeError(
            f"{name}: in-place change of a view ('{x.op}') of a tensor in the graph is not "
            "supported; apply the op out of place (y = y + ...) or clone() the view first"
        )
    before = _detached_copy_with_history(x)
    result = op(before, *args)
    _write(x, result.data, name)
    x.parents, x._backward, x._requires_grad = result.parents, result._backward, True
    x.op, x.grad = name, None
    return x


def _detached_copy_with_history(x: Tensor) -> Tensor:
    """A node that holds x's current values (a copy) and x's place in the graph."""
    before = _wrap(x.data.copy())
    before.parents, before._backward, before.op = x.parents, x._backward, x.op
    before._requires_grad, before.label = x._requires_grad, x.label
    return before


def _write(x: Tensor, values: np.ndarray, name: str) -> None:
    if not x.data.flags.writeable:
        _raise_read_only(name)
    if values.shape != x.data.shape:
        raise ValueError(
            f"{name}: the result has shape {values.shape} but the tensor changed in place has "
            f"shape {x.shape}; in-place ops can't change a tensor's shape"
        )
    try:
        np.copyto(x.data, values, casting="same_kind")
    except TypeError:
        raise TypeError(
            f"{name}: a result of dtype {values.dtype} can't be stored in a {x.dtype} tensor"
        ) from None
    x._versions[0] += 1


def _raise_read_only(name: str) -> None:
    raise RuntimeError(
        f"{name}: this tensor is read-only: an expand/broadcast_to view, whose elements share "
        "memory, or a read-only numpy array; clone() it before changing it in place"
    )


def fill(x: Tensor, value: float) -> Tensor:
    """A tensor like x, every element `value`. Derivative: 0."""
    return record(np.full_like(x.data, value), "fill", (x,),
                  lambda grad: np.zeros_like(grad), saved=())


def copy(x: Tensor, src: Tensor) -> Tensor:
    """`src` broadcast to x's shape, in x's dtype. d/dx = 0, d/dsrc = 1 (summed over broadcast)."""
    try:
        out = np.broadcast_to(src.data, x.data.shape).astype(x.data.dtype)
    except ValueError:
        raise ValueError(f"copy_: source of shape {src.shape} can't be broadcast to {x.shape}") from None
    return record(out, "copy", (x, src),
                  lambda grad: np.zeros_like(grad),
                  lambda grad: grad, saved=())
