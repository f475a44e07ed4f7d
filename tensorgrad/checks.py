"""Argument checks at the public edge, one helper per kind (sizes, dims), and the errors ops raise.

Every op that takes a size or a dimension passes it through here once, so a float size, a
dimension out of range or a repeated dimension gets the same clear error, with PyTorch's
exception type, wherever it is given: `TypeError` for a value of the wrong type, `IndexError`
for a dimension out of range, `RuntimeError` for a negative size or a repeated dimension (as
PyTorch raises them). The message names the op and the argument.

Where PyTorch's exception type and Python's convention differ, the error classes here are both
(`ShapeError` is a RuntimeError and a ValueError), so code written for either catches them.
"""

from __future__ import annotations

import operator
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["ShapeError", "UnsupportedDtypeError", "ArgumentValueError", "IntegerDivisionByZeroError",
           "as_int", "sizes", "dim", "dims", "not_a_tensor"]


class ShapeError(RuntimeError, ValueError):
    """Shapes that don't fit an op: PyTorch raises RuntimeError, and NumPy users expect ValueError.

    It is both, so code written for either catches it.
    """


class UnsupportedDtypeError(NotImplementedError, TypeError):
    """An op not defined on a dtype (`&` on floats, `frac` on integers).

    PyTorch raises NotImplementedError (a RuntimeError) and Python's convention is TypeError;
    it is both, so code written for either catches it.
    """


class ArgumentValueError(RuntimeError, ValueError):
    """A bad argument value (a `rounding_mode` that does not exist): PyTorch's RuntimeError and
    Python's ValueError at once."""


class IntegerDivisionByZeroError(RuntimeError, ZeroDivisionError):
    """An integer tensor divided by zero: PyTorch's RuntimeError and Python's ZeroDivisionError."""


def user_stacklevel() -> int:
    """The `stacklevel` for `warnings.warn` that names the first line outside the library: the
    user's call, however many of the library's frames lie between (a method calling a function,
    an op's autocast wrapper, a module's `__call__`). Call it in the function that warns."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in _LIBRARY:
        frame, level = frame.f_back, level + 1
    return level


_LIBRARY = ("tensorgrad", "scalargrad")


def ignore_floating_point_warnings() -> None:
    """Let the library's own array calls make infs and nans silently, as PyTorch's ops do.

    NumPy warns where a result overflows or is undefined ("RuntimeWarning: overflow encountered in
    multiply", pointing at a line inside the library); PyTorch never does, and a learner whose
    learning rate is too high should see the nan loss PyTorch shows, not a warning about
    `elementwise.py`. The filter matches NumPy's four texts raised from the library's modules only,
    so the user's own NumPy code warns as before. It costs an op nothing (filters are read only
    when something warns), where an `np.errstate` block costs 1.5 µs, a third of a small op.

    `warnings.catch_warnings` restores the filters it found on entry, so a package imported inside
    such a block (pytest collects tests inside one) loses the filter at its end; call this again
    there. The ops that make infs and nans by design (`x / 0`, `log(0)`, the reductions of
    nothing) also run under `np.errstate`, which holds either way.
    """
    warnings.filterwarnings("ignore", message=_NUMPY_FLOATING_POINT_WARNING, category=RuntimeWarning,
                            module=r"(tensorgrad|scalargrad)\.")


_NUMPY_FLOATING_POINT_WARNING = r"(overflow|divide by zero|invalid value|underflow) encountered"


def not_a_tensor(value: Any, op: str) -> TypeError:
    """The error for a non-tensor input (`tg.exp(0.5)`), worded as PyTorch's."""
    return TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(value).__name__}")


def as_int(value: Any, op: str, argument: str) -> int:
    """`value` as a Python int; a float, a bool-less string or any non-integer is a TypeError."""
    if isinstance(value, bool | float | np.floating) or not _is_integral(value):
        raise TypeError(f"{op}(): argument '{argument}' must be an int, not {type(value).__name__} "
                        f"({value!r})")
    return operator.index(value)


def _is_integral(value: Any) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def sizes(size: tuple, op: str, allow_infer: bool = False, keep: bool = False) -> tuple[int, ...]:
    """A shape given as `f(2, 3)` or `f((2, 3))` (or a list), as a tuple of non-negative ints.

    With `allow_infer` (reshape, view) one size may be -1, to be inferred; with `keep` (expand)
    any number of sizes may be -1, each keeping its dimension's size.
    """
    if len(size) == 1 and isinstance(size[0], Sequence | np.ndarray) and not isinstance(size[0], str):
        size = tuple(size[0])
    shape = tuple(as_int(n, op, "size") for n in size)
    for n in shape:
        if n < 0 and not ((allow_infer or keep) and n == -1):
            raise RuntimeError(f"{op}(): sizes must be non-negative, got {n} in {shape}")
    if allow_infer and shape.count(-1) > 1:
        raise RuntimeError(f"{op}(): only one size can be inferred (-1), got {shape}")
    return shape


def dim(d: Any, ndim: int, op: str) -> int:
    """One dimension index as a non-negative int in range(ndim) (a 0-d tensor accepts -1 and 0)."""
    d = as_int(d, op, "dim")
    bound = max(ndim, 1)
    if not -bound <= d < bound:
        raise IndexError(f"{op}(): dimension out of range (expected to be in range of "
                         f"[{-bound}, {bound - 1}], but got {d}) for a tensor with {ndim} dimensions")
    return d % bound


def dims(d: Any, ndim: int, op: str) -> tuple[int, ...]:
    """`dim` as an int or a sequence of ints, each in range and none repeated, sorted.

    None means every dimension.
    """
    if d is None:
        return tuple(range(ndim))
    if isinstance(d, Sequence) and not isinstance(d, str):
        axes = [dim(one, ndim, op) for one in d]
    else:
        axes = [dim(d, ndim, op)]
    if len(set(axes)) != len(axes):
        repeated = next(a for a in axes if axes.count(a) > 1)
        raise RuntimeError(f"{op}(): dim {repeated} appears multiple times in the list of dims {d}")
    return tuple(sorted(axes)) if ndim else ()


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether an array of `shape` broadcasts to `target` without growing it (in-place and
    index-write rules: the values must fit the place they are written to)."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def strided_layout(size: Any, stride: Any, op: str) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, extent) of an `empty_strided`-style request, checked: strides in elements,
    one per dimension, none negative; extent the number of elements the buffer needs."""
    shape = sizes((size,), op)
    steps = tuple(as_int(s, op, "stride") for s in stride)
    if len(steps) != len(shape):
        raise RuntimeError(f"{op}: dimensionality of sizes ({len(shape)}) must match dimensionality of "
                           f"strides ({len(steps)})")
    if any(s < 0 for s in steps):
        raise RuntimeError(f"{op}: strides must be non-negative, got sizes={list(shape)} and "
                           f"strides={list(steps)}")
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, steps, strict=True))
    return shape, steps, extent
