"""`Value`: one float in the graph, micrograd's node (tutorial chapter 1, "a Value").

Every op follows one pattern: compute the output's data, make the node with its parents, and
name the op's backward, written right below the forward: a function of the node and its
gradient that adds each parent's local derivative times the gradient into the parent's `.grad`.
It reads the parents (and, for tanh, exp and sigmoid, the output) from the node it is given.

micrograd writes that backward as a closure made per node. Here it is one function per op,
shared by all of the op's nodes, so a node is just the `Value` and its parents tuple: two
objects for Python's cycle collector to walk in every collection, where a closure per node made
four, and the collector's time was most of a training step. The lesson of the closure stays:
the backward takes the gradient as an argument instead of reading `out.grad`, and nothing a node
holds refers back to it, so a graph has no reference cycles and is freed the moment it is
dropped. The engine calls it as `node._backward(node, grad)` (see `Value._backward_takes_node`).

Primitives: `+`, `*`, `**`, `relu`, `tanh`, `exp`, `log`, `sigmoid`, the n-ary `Value.sum`
and `Value.dot` (a neuron's `w . x + b` as one node). Everything else (`-`, `/`, the reflected
forms) is composed from them in one line.

Numbers follow Python's floats where Python raises on an operator (division by zero is a
`ZeroDivisionError`), and PyTorch's answers where Python would raise in a function or go complex:
`0 ** -1` is inf, `log(0)` is -inf, `log(-1)` and `(-8) ** (1/3)` are nan, `exp(1000)` is inf.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from numbers import Real
from operator import mul
from typing import Union

from scalargrad.engine import backward as _run_backward
from scalargrad.engine import grad_mode

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


def _is_number(x: object) -> bool:
    """A real number a Value can hold: int, float, numpy's numbers; not bool, not complex."""
    return isinstance(x, Real) and not isinstance(x, bool)


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
    # `_backward` is the op's shared function, so the engine hands it the node: f(node, grad).
    _backward_takes_node = True
    _seq = None  # not numbered: the engine orders a Value graph by its walk (engine.creation_order)

    def __init__(self, data: float, label: str = "") -> None:
        if type(data) is not float:
            if not _is_number(data):
                raise TypeError(
                    f"Value needs a real number (int or float), got {type(data).__name__}: {data!r}"
                )
            data = float(data)
        if type(label) is not str:
            raise TypeError(f"Value: label must be a str, got {type(label).__name__}: {label!r}")
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
            if not _is_number(other):
                return NotImplemented  # Python then says "unsupported operand type(s) for +"
            other = Value(other)
        return _node(self.data + other.data, (self, other), "+", Value._add_backward)

    @staticmethod
    def _add_backward(out: Value, grad: float) -> None:
        a, b = out.parents
        a.grad += grad
        b.grad += grad

    def __mul__(self, other: Scalar) -> Value:
        """self * other. d/dself = other, d/dother = self."""
        if not isinstance(other, Value):
            if not _is_number(other):
                return NotImplemented
            other = Value(other)
        return _node(self.data * other.data, (self, other), "*", Value._mul_backward)

    @staticmethod
    def _mul_backward(out: Value, grad: float) -> None:
        a, b = out.parents
        a.grad += b.data * grad
        b.grad += a.data * grad

    def __pow__(self, exponent: Scalar) -> Value:
        """self ** exponent (int, float or Value). d/dself = exponent * self**(exponent - 1).

        With a Value exponent, d/dexponent = log(self) * self**exponent too, which is nan for a
        negative base, as in PyTorch (and 0 for a zero base with a non-negative exponent).
        """
        if isinstance(exponent, Value):
            return _node(_pow(self.data, exponent.data), (self, exponent), "**", Value._pow_value_backward)
        if not _is_number(exponent):
            return NotImplemented  # Python then says "unsupported operand type(s) for ** or pow()"
        return _node(_pow(self.data, exponent), (self,), f"**{exponent}", Value._pow_backward(exponent))

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def _pow_backward(exponent: float) -> Callable[[Value, float], None]:
        """The backward of `** exponent`: one function per exponent, shared by its nodes."""

        def backward(out: Value, grad: float) -> None:
            if exponent != 0:  # x**0 is the constant 1: slope 0, also at x = 0 (not 0 * inf)
                (x,) = out.parents
                x.grad += exponent * _pow(x.data, exponent - 1) * grad

        return backward

    @staticmethod
    def _pow_value_backward(out: Value, grad: float) -> None:
        x, exponent = out.parents
        base, power = x.data, exponent.data
        if power != 0:  # x**0 is the constant 1: slope 0, also at x = 0 (not 0 * inf)
            x.grad += power * _pow(base, power - 1) * grad
        if base != 0 or power < 0:  # 0**p for p >= 0 is flat in p: PyTorch's 0, not 0 * -inf
            exponent.grad += out.data * _log(base) * grad

    def relu(self) -> Value:
        """max(self, 0). Derivative: 1 where self > 0, else 0."""
        return _node(self.data if self.data > 0 else 0.0, (self,), "relu", Value._relu_backward)

    @staticmethod
    def _relu_backward(out: Value, grad: float) -> None:
        if out.data > 0:
            out.parents[0].grad += grad

    def tanh(self) -> Value:
        """tanh(self). Derivative: 1 - tanh(self)**2."""
        return _node(math.tanh(self.data), (self,), "tanh", Value._tanh_backward)

    @staticmethod
    def _tanh_backward(out: Value, grad: float) -> None:
        out.parents[0].grad += (1.0 - out.data * out.data) * grad

    def exp(self) -> Value:
        """e ** self. Derivative: e ** self."""
        try:
            e = math.exp(self.data)
        except OverflowError:
            e = math.inf
        return _node(e, (self,), "exp", Value._exp_backward)

    @staticmethod
    def _exp_backward(out: Value, grad: float) -> None:
        out.parents[0].grad += out.data * grad

    def log(self) -> Value:
        """Natural log of self (-inf at 0, nan below, as in PyTorch). Derivative: 1 / self."""
        return _node(_log(self.data), (self,), "log", Value._log_backward)

    @staticmethod
    def _log_backward(out: Value, grad: float) -> None:
        (x,) = out.parents
        x.grad += grad / x.data if x.data != 0 else math.copysign(math.inf, grad)

    def sigmoid(self) -> Value:
        """1 / (1 + e ** -self). Derivative: sigmoid(self) * (1 - sigmoid(self))."""
        x = self.data
        if x >= 0:  # two forms, so that exp never overflows
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)
        return _node(s, (self,), "sigmoid", Value._sigmoid_backward)

    @staticmethod
    def _sigmoid_backward(out: Value, grad: float) -> None:
        s = out.data
        out.parents[0].grad += s * (1.0 - s) * grad

    @staticmethod
    def sum(values: Iterable[Scalar], start: Scalar = 0.0) -> Value:
        """start + v1 + v2 + ... as ONE node. Derivative: 1 for every term.

        Chaining binary `+` over n terms makes n nodes; this makes one, so forward and backward
        do a fraction of the work. The parents are `start` (left out when it is the number 0)
        then the values, in order. The sum is correctly rounded (`math.fsum`), so it does not
        depend on the order of the terms.
        """
        terms = tuple(values)
        if isinstance(start, Value) or start != 0:
            terms = (start, *terms)
        try:
            data = math.fsum([v.data for v in terms])
        except AttributeError:  # numbers among the terms: make them constant leaves
            terms = _values(terms, "Value.sum: term")
            data = math.fsum([v.data for v in terms])
        return _node(data, terms, "+", Value._sum_backward)

    @staticmethod
    def _sum_backward(out: Value, grad: float) -> None:
        for v in out.parents:
            v.grad += grad

    @staticmethod
    def dot(weights: Sequence[Scalar], inputs: Sequence[Scalar], bias: Scalar | None = None) -> Value:
        """w1*x1 + ... + wn*xn + bias as ONE node: a neuron's weighted sum.

        Derivatives: d/dwi = xi, d/dxi = wi, d/dbias = 1. The parents are the weights, then
        the inputs, then the bias (when given). The terms are added in micrograd's order,
        `bias + w1*x1 + w2*x2 + ...`, so a neuron's value equals micrograd's to the last bit
        (on Python 3.12+, whose `sum` compensates rounding, to rounding).
        """
        if not isinstance(weights, (list, tuple)) or not isinstance(inputs, (list, tuple)):
            weights, inputs = tuple(weights), tuple(inputs)  # a neuron's lists need no copy
        if len(weights) != len(inputs):
            raise ValueError(f"Value.dot: {len(weights)} weights but {len(inputs)} inputs; they pair up")
        if bias is not None and not isinstance(bias, Value):
            if not _is_number(bias):
                raise TypeError(f"Value.dot: bias is a {type(bias).__name__} ({bias!r}), "
                                "not a number or Value")
            bias = Value(bias)
        try:
            w_data, x_data = [w.data for w in weights], [x.data for x in inputs]
        except AttributeError:  # numbers among them: make them constant leaves
            weights, inputs = _values(weights, "Value.dot: weight"), _values(inputs, "Value.dot: input")
            w_data, x_data = [w.data for w in weights], [x.data for x in inputs]
        if bias is None:
            data, parents = sum(map(mul, w_data, x_data), 0.0), (*weights, *inputs)
        else:
            data, parents = sum(map(mul, w_data, x_data), bias.data), (*weights, *inputs, bias)
        return _node(data, parents, "dot", Value._dot_backward)

    @staticmethod
    def _dot_backward(out: Value, grad: float) -> None:
        parents = out.parents
        n = len(parents) // 2  # the weights, the inputs, then maybe the bias
        for w, x in zip(parents[:n], parents[n : 2 * n]):  # noqa: B905 - equal by construction
            w.grad += x.data * grad
            x.grad += w.data * grad
        if len(parents) % 2:
            parents[-1].grad += grad

    # --- composed from the primitives -----------------------------------------------------

    def __neg__(self) -> Value:
        """-self."""
        return self * -1.0  # -a is a * -1

    def __sub__(self, other: Scalar) -> Value:
        """self - other."""
        if not isinstance(other, Value) and not _is_number(other):
            return NotImplemented
        return self + (-other)  # a - b is a + (-b)

    def __truediv__(self, other: Scalar) -> Value:
        """self / other. Dividing by zero raises ZeroDivisionError, as Python's floats do."""
        if not isinstance(other, Value) and not _is_number(other):
            return NotImplemented
        _check_divisor(self, other, "/")
        return self * other**-1  # a / b is a * b**-1

    def __radd__(self, other: Scalar) -> Value:
        """other + self, for a number on the left."""
        return self + other  # 2 + a is a + 2

    def __rmul__(self, other: Scalar) -> Value:
        """other * self, for a number on the left."""
        return self * other  # 2 * a is a * 2

    def __rsub__(self, other: Scalar) -> Value:
        """other - self, for a number on the left."""
        if not _is_number(other):
            return NotImplemented
        return (-self) + other  # 1 - a is -a + 1

    def __rtruediv__(self, other: Scalar) -> Value:
        """other / self, for a number on the left. Dividing by zero raises ZeroDivisionError."""
        if not _is_number(other):
            return NotImplemented
        _check_divisor(other, self, "/")
        return self**-1 * other  # 1 / a is a**-1 * 1

    def __rpow__(self, base: Scalar) -> Value:
        """base ** self, for a number on the left."""
        if not _is_number(base):
            return NotImplemented
        return Value(base) ** self  # 2 ** a: a Value exponent on a constant base

    # --- autograd ------------------------------------------------------------------------

    def backward(self) -> None:
        """Fill `.grad` of every node under this one with d(self)/d(node).

        Inner nodes' grads are reset first; leaves accumulate across calls until zeroed.
        """
        _run_backward(self, 1.0)


# The engine reads and writes gradients as `_grad` (see `engine.Node`): for a Value that is the
# `grad` slot itself, under a second name.
Value._grad = Value.grad

_new_value = object.__new__


def _node(data: float, parents: tuple, op: str, backward_fn: Callable[[Value, float], None]) -> Value:
    """A new node holding `data`, made by `op` from `parents`, with its op's backward function.

    Outside grad mode (`no_grad`) the node is a bare leaf: the graph is not recorded. It skips
    `Value.__init__`'s type check, as `data` is a float already.
    """
    out = _new_value(Value)
    out.data = data
    out.grad = 0.0
    out.label = ""
    if grad_mode.enabled:
        out.parents = parents
        out.op = op
        out._backward = backward_fn
    else:
        out.parents = ()
        out.op = ""
        out._backward = None
    return out


def _values(items: Iterable[Scalar], what: str) -> tuple[Value, ...]:
    """The items as Values (numbers become constant leaves); a TypeError names any other item."""
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Value):
            if not _is_number(item):
                raise TypeError(f"{what} {i} is a {type(item).__name__} ({item!r}), not a number or Value")
            item = Value(item)
        out.append(item)
    return tuple(out)


def _check_divisor(numerator: Scalar, divisor: Scalar, op: str) -> None:
    """Raise ZeroDivisionError, naming the op and both operands, for a zero divisor."""
    value = divisor.data if isinstance(divisor, Value) else divisor
    if value == 0:
        left = numerator.data if isinstance(numerator, Value) else numerator
        raise ZeroDivisionError(f"Value division by zero: {left!r} {op} {value!r}")
