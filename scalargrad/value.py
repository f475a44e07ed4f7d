"""`Value`: one float in the graph, micrograd's node (tutorial chapter 1, "a Value").

Every op follows one pattern: compute the output, define `_backward(grad)` that adds each
parent's local derivative times `grad` into the parent's `.grad`, attach it, return the output.
`_backward` takes the gradient as an argument instead of reading `out.grad`, so it holds no
reference to `out`: the graph has no reference cycles and is freed the moment it is dropped.

Primitives: `+`, `*`, `**`, `relu`, `tanh`, `exp`, `log`, `sigmoid` and the n-ary `Value.sum`.
Everything else (`-`, `/`, the reflected forms) is composed from them in one line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Real
from typing import Union

from scalargrad.engine import backward as _run_backward
from scalargrad.engine import is_grad_enabled

__all__ = ["Value"]

Scalar = Union["Value", float, int]


def _pow(base: float, exponent: float) -> float:
    """base ** exponent with PyTorch's answers where Python raises or goes complex."""
    try:
        result = base**exponent
    except ZeroDivisionError:  # 0 ** negative
        return math.inf
    except OverflowError:
        return math.inf
    if type(result) is complex:  # negative base, fractional exponent
        return math.nan
    return float(result)


class Value:
    """A scalar node: `data` (a float), `grad`, `parents`, `op`, `label`.

    >>> a = Value(2.0, label="a")
    >>> b = a * a + 1
    >>> b.backward()
    >>> b.data, a.grad
    (5.0, 4.0)
    """

    __slots__ = ("data", "grad", "parents", "op", "label", "_backward", "__weakref__")

    # The engine resets an inner node's grad to this before a pass, and keeps it afterwards
    # (so a picture drawn after backward shows every gradient, as in micrograd).
    _grad_init = 0.0
    _keeps_grad = True

    def __init__(self, data: float, label: str = "") -> None:
        if type(data) is not float:
            if not isinstance(data, Real) or isinstance(data, bool):
                raise TypeError(
                    f"Value needs a real number (int or float), got {type(data).__name__}: "
                    f"{data!r}"
                )
            data = float(data)
        self.data = data
        self.grad = 0.0
        self.parents = ()
        self.op = ""
        self.label = label
        self._backward = None

    def __repr__(self) -> str:
        label = f", label={self.label!r}" if self.label else ""
        return f"Value(data={self.data:.6g}, grad={self.grad:.6g}{label})"

    # --- primitives -----------------------------------------------------------------------

    def __add__(self, other: Scalar) -> Value:
        """self + other. d/dself = 1, d/dother = 1."""
        other = other if isinstance(other, Value) else Value(other)
        out = _result(self.data + other.data)
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                self.grad += grad
                other.grad += grad

            _attach(out, (self, other), "+", _backward)
        return out

    def __mul__(self, other: Scalar) -> Value:
        """self * other. d/dself = other, d/dother = self."""
        other = other if isinstance(other, Value) else Value(other)
        out = _result(self.data * other.data)
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                self.grad += other.data * grad
                other.grad += self.data * grad

            _attach(out, (self, other), "*", _backward)
        return out

    def __pow__(self, exponent: Scalar) -> Value:
        """self ** exponent (int, float or Value).

        d/dself = exponent * self**(exponent - 1); d/dexponent = log(self) * self**exponent,
        which is nan for a negative base and 0 for a zero base, as in PyTorch.
        """
        if isinstance(exponent, Value):
            return self._pow_value(exponent)
        if not isinstance(exponent, (int, float)) or isinstance(exponent, bool):
            raise TypeError(f"Value ** needs an int, float or Value exponent, got {type(exponent).__name__}")
        out = _result(_pow(self.data, exponent))
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                self.grad += exponent * _pow(self.data, exponent - 1) * grad

            _attach(out, (self,), f"**{exponent}", _backward)
        return out

    def _pow_value(self, exponent: Value) -> Value:
        """self ** exponent where the exponent is a Value too: both get a gradient."""
        out = _result(_pow(self.data, exponent.data))
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                base, power = self.data, exponent.data
                self.grad += power * _pow(base, power - 1) * grad
                if base > 0:
                    exponent.grad += math.log(base) * _pow(base, power) * grad
                elif base < 0 or power < 0:
                    exponent.grad += math.nan
                # base == 0 with power >= 0: the exponent's gradient is 0, as in PyTorch

            _attach(out, (self, exponent), "**", _backward)
        return out

    def relu(self) -> Value:
        """max(self, 0). Derivative: 1 where self > 0, else 0."""
        out = _result(self.data if self.data > 0 else 0.0)
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                if self.data > 0:
                    self.grad += grad

            _attach(out, (self,), "relu", _backward)
        return out

    def tanh(self) -> Value:
        """tanh(self). Derivative: 1 - tanh(self)**2."""
        t = math.tanh(self.data)
        out = _result(t)
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                self.grad += (1.0 - t * t) * grad

            _attach(out, (self,), "tanh", _backward)
        return out

    def exp(self) -> Value:
        """e ** self. Derivative: e ** self."""
        try:
            e = math.exp(self.data)
        except OverflowError:
            e = math.inf
        out = _result(e)
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                self.grad += e * grad

            _attach(out, (self,), "exp", _backward)
        return out

    def log(self) -> Value:
        """Natural log of self (-inf at 0, nan below). Derivative: 1 / self."""
        x = self.data
        out = _result(math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan))
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                self.grad += grad / self.data if self.data != 0 else math.copysign(math.inf, grad)

            _attach(out, (self,), "log", _backward)
        return out

    def sigmoid(self) -> Value:
        """1 / (1 + e ** -self). Derivative: sigmoid(self) * (1 - sigmoid(self))."""
        x = self.data
        if x >= 0:  # two forms, so that exp never overflows
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)
        out = _result(s)
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                self.grad += s * (1.0 - s) * grad

            _attach(out, (self,), "sigmoid", _backward)
        return out

    @staticmethod
    def sum(values: Iterable[Scalar], start: Scalar = 0.0) -> Value:
        """start + v1 + v2 + ... as ONE node. Derivative: 1 for every term.

        A neuron's weighted sum is `n` additions; chaining binary `+` makes `n` nodes, this
        makes one, which is most of why training here is fast.
        """
        terms = tuple(v if isinstance(v, Value) else Value(v) for v in values)
        if not isinstance(start, Value) or start.data != 0.0 or start.parents:
            terms += (start if isinstance(start, Value) else Value(start),)
        out = _result(math.fsum(v.data for v in terms) if terms else 0.0)
        if is_grad_enabled():

            def _backward(grad: float) -> None:
                for v in terms:
                    v.grad += grad

            _attach(out, terms, "+", _backward)
        return out

    # --- composed from the primitives -----------------------------------------------------

    def __neg__(self) -> Value:
        return self * -1.0  # -a is a * -1

    def __sub__(self, other: Scalar) -> Value:
        return self + (-other)  # a - b is a + (-b)

    def __truediv__(self, other: Scalar) -> Value:
        return self * other**-1  # a / b is a * b**-1

    def __radd__(self, other: Scalar) -> Value:
        return self + other  # 2 + a is a + 2

    def __rmul__(self, other: Scalar) -> Value:
        return self * other  # 2 * a is a * 2

    def __rsub__(self, other: Scalar) -> Value:
        return (-self) + other  # 1 - a is -a + 1

    def __rtruediv__(self, other: Scalar) -> Value:
        return self**-1 * other  # 1 / a is a**-1 * 1

    def __rpow__(self, base: Scalar) -> Value:
        return Value(base) ** self  # 2 ** a: a Value exponent on a constant base

    # --- autograd ------------------------------------------------------------------------

    def backward(self) -> None:
        """Fill `.grad` of every node under this one with d(self)/d(node).

        Inner nodes' grads are reset first; leaves accumulate across calls until zeroed.
        """
        _run_backward(self, 1.0)


def _result(data: float) -> Value:
    """A new node holding `data`, without `Value.__init__`'s type check (data is a float)."""
    out = _new_value(Value)
    out.data = data
    out.grad = 0.0
    out.parents = ()
    out.op = ""
    out.label = ""
    out._backward = None
    return out


def _attach(out: Value, parents: tuple, op: str, backward_fn) -> None:
    """Record in `out` how it was made: its parents, its op and its backward function."""
    out.parents = parents
    out.op = op
    out._backward = backward_fn


_new_value = object.__new__
