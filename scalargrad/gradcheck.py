"""`gradcheck` for Values: backward's gradients against finite differences (tutorial chapter 2).

The first correctness tool of the tutorial. For f of a few scalars, the derivative with respect
to input i is estimated by the central difference (f(x + eps e_i) - f(x - eps e_i)) / (2 eps),
whose error shrinks like eps**2, and compared with what backward put in `.grad`. A wrong local
derivative in any op shows up as a mismatch on the inputs it touches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from scalargrad.engine import no_grad
from scalargrad.value import Value, _values

__all__ = ["GradcheckError", "gradcheck", "numerical_grads", "backward_grads"]

Inputs = Sequence[Value | float]


class GradcheckError(AssertionError):
    """Backward's gradient and the finite-difference estimate disagree."""


def _points(inputs: Inputs) -> list[float]:
    """The inputs' values as floats; a TypeError names an input that is not a number or Value."""
    return [v.data for v in _values(inputs, "gradcheck: input")]


def _call(f: Callable[..., Value], leaves: list[Value]) -> Value:
    out = f(*leaves)
    if not isinstance(out, Value):
        raise TypeError(f"gradcheck: f must return a Value, got {type(out).__name__}")
    return out


def backward_grads(f: Callable[..., Value], inputs: Inputs) -> list[float]:
    """d f / d input_i for every input, by backward, at the inputs' values.

    f is called on fresh leaves holding the inputs' values, so the inputs' own `.grad` is
    left alone.
    """
    leaves = [Value(x) for x in _points(inputs)]
    _call(f, leaves).backward()
    return [leaf.grad for leaf in leaves]


def numerical_grads(f: Callable[..., Value], inputs: Inputs, eps: float = 1e-6) -> list[float]:
    """(f(x + eps e_i) - f(x - eps e_i)) / (2 eps) for every input i: central differences."""
    point = _points(inputs)
    grads = []
    with no_grad():  # only the forward values are needed: record no graph
        for i in range(len(point)):
            shifted = list(point)
            shifted[i] = point[i] + eps
            plus = _call(f, [Value(x) for x in shifted]).data
            shifted[i] = point[i] - eps
            minus = _call(f, [Value(x) for x in shifted]).data
            grads.append((plus - minus) / (2 * eps))
    return grads


def _close(analytic: float, numeric: float, atol: float, rtol: float) -> bool:
    if math.isnan(analytic) or math.isnan(numeric):
        return math.isnan(analytic) and math.isnan(numeric)
    if analytic == numeric:  # also equal infinities, where the difference below is nan
        return True
    return abs(analytic - numeric) <= atol + rtol * abs(numeric)


def gradcheck(
    f: Callable[..., Value], inputs: Inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4
) -> bool:
    """Check backward's gradient of `f(*inputs)` against central differences, input by input.

    `f` takes one Value per input and returns a Value; `inputs` are numbers or Values (their
    `data` is the point of the check). Returns True, or raises `GradcheckError` naming the
    input and both numbers. Keep the point away from kinks (relu at 0), where the two sides
    of the difference see different slopes.

    >>> gradcheck(lambda a, b: a * b + b.tanh(), [1.5, -0.5])
    True
    """
    if eps <= 0:
        raise ValueError(f"gradcheck: eps must be positive, got {eps}")
    analytic = backward_grads(f, inputs)
    numeric = numerical_grads(f, inputs, eps)
    for i, (a, n) in enumerate(zip(analytic, numeric, strict=True)):
        if not _close(a, n, atol, rtol):
            raise GradcheckError(
                f"gradcheck: input {i}: backward gives {a:.8g} where finite differences give {n:.8g}"
            )
    return True
