"""`Value`: one float in the graph, micrograd's node (tutorial chapter 1, "a Value").

Every op follows one pattern: compute the output, define `_backward(grad)` that adds each
parent's local derivative times `grad` into the parent's `.grad`, attach it, return the output.
`_backward` takes the gradient as an argument instead of reading `out.grad`, so it holds no
reference to `out`: the graph has no reference cycles and is freed the moment it is dropped.

`_backward` receives its inputs as default arguments, `def _backward(grad, self=self,
other=other)`, rather than reading them from the enclosing function. It is the same function,
but Python keeps default arguments in one tuple, where a closure needs a cell per variable plus
a tuple of cells: two objects fewer per node to allocate, free and (with the garbage collector
on) scan, which made the moons demo's training step about 30% faster. The engine calls it as
`_backward(grad)`.

Primitives: `+`, `*`, `**`, `relu`, `tanh`, `exp`, `log`, `sigmoid` and the n-ary `Value.sum`.
Everything else (`-`, `/`, the reflected forms) is composed from them in one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from numbers import Real
from typing import Union

from scalargrad.engine import _grad_mode
from scalargrad.engine import backward as _run_backward

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


def _log(x: float) -> float:
    """log(x) with PyTorch's answers where Python raises: -inf at 0, nan below."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


class Value:
    """A scalar node: `data` (a float), `grad`, `parents`, `op`, `label`.

    >>> a = Value(2.0, label="a")
    >>> b = a * a + 1
    >>> b.backward()
    >>> b.data, a.grad
    (5.0, 4.0)
    """

    # No __dict__: a node is a handful of pointers, and attribute access is a fixed offset.
    __slots__ = ("data", "grad", "parents", "op", "label", "_backward", "__weakref__")

    # The engine resets an inner node's grad to this before a pass, and keeps it afterwards
    # (so a picture drawn after backward shows every gradient, as in micrograd), each pass's own.
    _grad_init = 0.0
    _keeps_grad = True
    _kept_grad_adds_up = False

    def __init__(self, data: float, label: str = "") -> None:
        if type(data) is not float:
            if not isinstance(data, Real) or isinstance(data, bool):
                raise TypeError(
                    f"Value needs a real number (int or float), got {type(data).__name__}: {data!r}"
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
        if not isinstance(other, Value):
            other = Value(other)

        def _backward(grad: float, self=self, other=other) -> None:
            self.grad += grad
            other.grad += grad

        return _node(self.data + other.data, (self, other), "+", _backward)

    def __mul__(self, other: Scalar) -> Value:
        """self * other. d/dself = other, d/dother = self."""
        if not isinstance(other, Value):
            other = Value(other)

        def _backward(grad: float, self=self, other=other) -> None:
            self.grad += other.data * grad
            other.grad += self.data * grad

        return _node(self.data * other.data, (self, other), "*", _backward)

    def __pow__(self, exponent: Scalar) -> Value:
        """self ** exponent (int, float or Value).

        d/dself = exponent * self**(exponent - 1); d/dexponent = log(self) * self**exponent,
        which is nan for a negative base, as in PyTorch (and 0 for a zero base with a
        non-negative exponent).
        """
        if isinstance(exponent, Value):
            return self._pow_value(exponent)
        if not isinstance(exponent, (int, float)) or isinstance(exponent, bool):
            raise TypeError(f"Value ** needs an int, float or Value exponent, got {type(exponent).__name__}")

        def _backward(grad: float, self=self, exponent=exponent) -> None:
            if exponent != 0:  # x**0 is the constant 1: slope 0, also at x = 0 (not 0 * inf)
                self.grad += exponent * _pow(self.data, exponent - 1) * grad

        return _node(_pow(self.data, exponent), (self,), f"**{exponent}", _backward)

    def _pow_value(self, exponent: Value) -> Value:
        """self ** exponent where the exponent is a Value too: both get a gradient."""

        def _backward(grad: float, self=self, exponent=exponent) -> None:
            base, power = self.data, exponent.data
            if power != 0:  # x**0 is the constant 1: slope 0, also at x = 0 (not 0 * inf)
                self.grad += power * _pow(base, power - 1) * grad
            if base != 0 or power < 0:  # 0**p for p >= 0 is flat in p: PyTorch's 0, not 0 * -inf
                exponent.grad += _pow(base, power) * _log(base) * grad

        return _node(_pow(self.data, exponent.data), (self, exponent), "**", _backward)

    def relu(self) -> Value:
        """max(self, 0). Derivative: 1 where self > 0, else 0."""

        def _backward(grad: float, self=self) -> None:
            if self.data > 0:
                self.grad += grad

        return _node(self.data if self.data > 0 else 0.0, (self,), "relu", _backward)

    def tanh(self) -> Value:
        """tanh(self). Derivative: 1 - tanh(self)**2."""
        t = math.tanh(self.data)

        def _backward(grad: float, self=self, t=t) -> None:
            self.grad += (1.0 - t * t) * grad

        return _node(t, (self,), "tanh", _backward)

    def exp(self) -> Value:
        """e ** self. Derivative: e ** self."""
        try:
            e = math.exp(self.data)
        except OverflowError:
            e = math.inf

        def _backward(grad: float, self=self, e=e) -> None:
            self.grad += e * grad

        return _node(e, (self,), "exp", _backward)

    def log(self) -> Value:
        """Natural log of self (-inf at 0, nan below). Derivative: 1 / self."""

        def _backward(grad: float, self=self) -> None:
            self.grad += grad / self.data if self.data != 0 else math.copysign(math.inf, grad)

        return _node(_log(self.data), (self,), "log", _backward)

    def sigmoid(self) -> Value:
        """1 / (1 + e ** -self). Derivative: sigmoid(self) * (1 - sigmoid(self))."""
        x = self.data
        if x >= 0:  # two forms, so that exp never overflows
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)

        def _backward(grad: float, self=self, s=s) -> None:
            self.grad += s * (1.0 - s) * grad

        return _node(s, (self,), "sigmoid", _backward)

    @staticmethod
    def sum(values: Iterable[Scalar], start: Scalar = 0.0) -> Value:
        """start + v1 + v2 + ... as ONE node. Derivative: 1 for every term.

        A neuron's weighted sum is `n` additions; chaining binary `+` makes `n` nodes, this
        makes one, so forward and backward do a fraction of the work. The parents are `start`
        (left out when it is the number 0) then the values, in order. The sum is correctly
        rounded (`math.fsum`), so it does not depend on the order of the terms.
        """
        terms = tuple(values)
        if isinstance(start, Value) or start != 0:
            terms = (start, *terms)
        try:
            data = math.fsum([v.data for v in terms])
        except AttributeError:  # numbers among the terms: make them constant leaves
            terms = tuple(v if isinstance(v, Value) else Value(v) for v in terms)
            data = math.fsum([v.data for v in terms])

        def _backward(grad: float, terms=terms) -> None:
            for v in terms:
                v.grad += grad

        return _node(data, terms, "+", _backward)

    # --- composed from the primitives -----------------------------------------------------

    def __neg__(self) -> Value:
        """-self."""
        return self * -1.0  # -a is a * -1

    def __sub__(self, other: Scalar) -> Value:
        """self - other."""
        return self + (-other)  # a - b is a + (-b)

    def __truediv__(self, other: Scalar) -> Value:
        """self / other."""
        return self * other**-1  # a / b is a * b**-1

    def __radd__(self, other: Scalar) -> Value:
        """other + self, for a number on the left."""
        return self + other  # 2 + a is a + 2

    def __rmul__(self, other: Scalar) -> Value:
        """other * self, for a number on the left."""
        return self * other  # 2 * a is a * 2

    def __rsub__(self, other: Scalar) -> Value:
        """other - self, for a number on the left."""
        return (-self) + other  # 1 - a is -a + 1

    def __rtruediv__(self, other: Scalar) -> Value:
        """other / self, for a number on the left."""
        return self**-1 * other  # 1 / a is a**-1 * 1

    def __rpow__(self, base: Scalar) -> Value:
        """base ** self, for a number on the left."""
        return Value(base) ** self  # 2 ** a: a Value exponent on a constant base

    # --- autograd ------------------------------------------------------------------------

    def backward(self) -> None:
        """Fill `.grad` of every node under this one with d(self)/d(node).

        Inner nodes' grads are reset first; leaves accumulate across calls until zeroed.
        """
        _run_backward(self, 1.0)


_new_value = object.__new__


def _node(data: float, parents: tuple, op: str, backward_fn: Callable[[float], None]) -> Value:
    """A new node holding `data`, made by `op` from `parents`, with its backward function.

    Outside grad mode (`no_grad`) the node is a bare leaf: the graph is not recorded. It skips
    `Value.__init__`'s type check, as `data` is a float already.
    """
    out = _new_value(Value)
    out.data = data
    out.grad = 0.0
    out.label = ""
    if _grad_mode.enabled:
        out.parents = parents
        out.op = op
        out._backward = backward_fn
    else:
        out.parents = ()
        out.op = ""
        out._backward = None
    return out
