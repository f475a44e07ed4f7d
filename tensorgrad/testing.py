"""`tg.testing`: `assert_close` and `make_tensor`, PyTorch's `torch.testing` helpers.

`assert_close(actual, expected)` passes when the two are close and raises an `AssertionError`
that says how far apart they are when they are not. Tensors are close elementwise when

    |actual - expected| <= atol + rtol * |expected|

with tolerances chosen by dtype unless given (float32: rtol 1.3e-6, atol 1e-5; integers and bools
must be equal). Before the values, the attributes must agree: shape always; device, dtype and
(with `check_stride=True`) strides unless the `check_*` flag is off, in which case both sides are
moved to the CPU or promoted to a common dtype first. Sequences and mappings are compared item by
item, recursively; Python numbers and booleans as scalars; `None` only with `None`.

The work is in two steps, as PyTorch does it: first the inputs are paired up (which fails at
once on a length, key or type mismatch, or on bad tolerances), then every pair is compared and
the first failure is reported, with the item it occurred at.

`make_tensor(*shape, dtype=, device=)` draws a random tensor for a test: integers in [-9, 10)
and floats in [-9, 9) by default, clamped to what the dtype holds.
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import warnings
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

import tensorgrad
from tensorgrad import dtypes
from tensorgrad.device import to_numpy
from tensorgrad.tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

# {dtype: (rtol, atol)}: PyTorch's defaults; every other dtype (integers, bool) compares exactly.
_DTYPE_PRECISIONS = {
    np.dtype(np.float16): (0.001, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
    np.dtype(np.complex64): (1.3e-6, 1e-5),
    np.dtype(np.complex128): (1e-7, 1e-7),
}
# The dtype a Python number is compared as (for its default tolerances).
_NUMBER_DTYPES = {int: np.dtype(np.int64), float: np.dtype(np.float64), complex: np.dtype(np.complex128)}

Message = str | Callable[[str], str] | None
Item = tuple[Any, ...]  # the keys and indices leading to a pair in nested inputs
Options = dict[str, Any]  # assert_close's keyword arguments
Compare = Callable[[], None]  # compares one pair; raises _MismatchError


class _MismatchError(Exception):
    """A failed check: the exception class to raise, its message and the item it occurred at
    (the keys and indices leading to it in nested inputs)."""

    def __init__(self, kind: type[Exception], msg: str, item: tuple[Any, ...]) -> None:
        super().__init__(msg)
        self.kind, self.msg, self.item = kind, msg, item

    def to_error(self, msg: Message = None) -> Exception:
        """The exception to raise: `msg` verbatim if it is a string, else the generated message
        (with the item appended), passed through `msg` if it is a callable."""
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.item:
            text += f"\n\nThe failure occurred for item {''.join(str([key]) for key in self.item)}"
        return self.kind(msg(text) if callable(msg) else text)


class _UnsupportedError(Exception):
    """Raised while pairing: this kind of comparison doesn't handle these inputs; try the next."""


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: Message = None) -> None:
    """Assert that `actual` and `expected` are close: tensors (or numpy arrays) elementwise within
    `atol + rtol * |expected|`, numbers likewise, booleans and None equal, sequences and mappings
    item by item. `rtol` and `atol` go together; omitted, they follow the dtypes (see the module's
    docstring). `msg`: a string replacing the message, or a callable that rewrites it."""
    __tracebackhide__ = True  # noqa: F841 - pytest hides this frame in tracebacks
    options = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol, "equal_nan": equal_nan,
               "check_device": check_device, "check_dtype": check_dtype, "check_layout": check_layout,
               "check_stride": check_stride}
    try:
        comparisons = _pair_up(actual, expected, (), options)
    except _MismatchError as mismatch:  # a structural failure: the user's msg doesn't replace it
        raise mismatch.to_error() from None
    for compare in comparisons:
        try:
            compare()
        except _MismatchError as mismatch:
            raise mismatch.to_error(msg) from None


# --- pairing the inputs up ---------------------------------------------------------------------


def _pair_up(actual: Any, expected: Any, item: Item, options: Options) -> list[Compare]:
    """One comparison (a function raising `_MismatchError`) per pair of leaves in the two inputs."""
    sequence = collections.abc.Sequence
    if isinstance(actual, sequence) and isinstance(expected, sequence) \
            and not isinstance(actual, str) and not isinstance(expected, str):  # "a"[0] is "a": no end
        if len(actual) != len(expected):
            raise _MismatchError(AssertionError, "The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}", item)
        return [c for i in range(len(actual)) for c in _pair_up(actual[i], expected[i], (*item, i), options)]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        keys, expected_keys = set(actual.keys()), set(expected.keys())
        if keys != expected_keys:
            raise _MismatchError(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(expected_keys - keys)}\n"
                            f"Additional keys in the actual mapping: {sorted(keys - expected_keys)}", item)
        with contextlib.suppress(Exception):  # sorted where the keys sort, so the first failure is stable
            keys = sorted(keys)
        return [c for key in keys for c in _pair_up(actual[key], expected[key], (*item, key), options)]
    for kind, make in _PAIRS:
        try:
            return [make(actual, expected, item, options)]
        except _UnsupportedError:
            continue
        except _MismatchError:
            raise
        except Exception as error:  # a bug in pairing these inputs, not a mismatch
            raise RuntimeError(f"Originating a {kind}() at item {''.join(str([k]) for k in item)} "
                               f"with\n\n{type(actual).__name__}(): {actual}\n\nand\n\n"
                               f"{type(expected).__name__}(): {expected}\n\n"
                               "resulted in the unexpected exception above.") from error
    raise _MismatchError(TypeError, "No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.", item)


def _none_pair(actual: Any, expected: Any, item: Item, options: Options) -> Compare:
    """None matches only None."""
    if actual is not None and expected is not None:
        raise _UnsupportedError

    def compare() -> None:
        if not (actual is None and expected is None):
            raise _MismatchError(AssertionError, f"None mismatch: {actual} is not {expected}", item)
    return compare


def _bool_pair(actual: Any, expected: Any, item: Item, options: Options) -> Compare:
    """Python and numpy booleans must be the same."""
    if not all(isinstance(value, bool | np.bool_) for value in (actual, expected)):
        raise _UnsupportedError
    actual, expected = bool(actual), bool(expected)

    def compare() -> None:
        if actual is not expected:
            raise _MismatchError(AssertionError, f"Booleans mismatch: {actual} is not {expected}", item)
    return compare


def _number_pair(actual: Any, expected: Any, item: Item, options: Options) -> Compare:
    """Python and numpy numbers: close within the tolerances of int64, float64 or complex128."""
    if not all(isinstance(value, int | float | complex | np.number) for value in (actual, expected)):
        raise _UnsupportedError
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    # A bool paired with a number has no dtype here: a KeyError, reported as PyTorch does (RuntimeError)
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(actual)], _NUMBER_DTYPES[type(expected)]], options, item)

    def compare() -> None:
        if options["check_dtype"] and type(actual) is not type(expected):
            raise _MismatchError(AssertionError,
                            f"The (d)types do not match: {type(actual)} != {type(expected)}.", item)
        _compare_scalars(actual, expected, rtol, atol, options["equal_nan"], item)
    return compare


def _tensor_pair(actual: Any, expected: Any, item: Item, options: Options) -> Compare:
    """Tensors, or two objects of one type that `tg.as_tensor` reads (numpy arrays)."""
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _UnsupportedError
    if not options["allow_subclasses"] and type(actual) is not type(expected):
        raise _UnsupportedError
    actual, expected = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], options, item)
    return lambda: _compare_tensors(actual, expected, rtol, atol, options, item)


# The kinds of leaves, tried in this order (named as PyTorch names them, for its error messages)
_PAIRS = (("NonePair", _none_pair), ("BooleanPair", _bool_pair), ("NumberPair", _number_pair),
          ("TensorLikePair", _tensor_pair))


def _as_tensor(value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    try:
        return tensorgrad.as_tensor(value)
    except Exception:
        raise _UnsupportedError from None


def _tolerances(dtype_list: list[np.dtype], options: Options, item: Item) -> tuple[float, float]:
    """(rtol, atol): the given pair, or the loosest defaults of the dtypes."""
    rtol, atol = options["rtol"], options["atol"]
    if (rtol is None) != (atol is None):  # one alone surprises: atol=0 could still pass through rtol
        raise _MismatchError(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                        f"but got no {'rtol' if rtol is None else 'atol'}.", item)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*(_DTYPE_PRECISIONS.get(np.dtype(d), (0.0, 0.0)) for d in dtype_list), strict=True)
    return max(rtols), max(atols)


# --- comparing a pair --------------------------------------------------------------------------


def _compare_scalars(actual: Any, expected: Any, rtol: float, atol: float, equal_nan: bool,
                     item: tuple[Any, ...]) -> None:
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    diff = abs(actual - expected)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _MismatchError(AssertionError, _scalar_message(actual, expected, rtol, atol), item)


def _compare_tensors(actual: Tensor, expected: Tensor, rtol: float, atol: float, options: dict[str, Any],
                     item: tuple[Any, ...]) -> None:
    """Attributes first (shape; device, dtype, layout, strides unless told not to), then values."""
    def mismatch(name: str, a: Any, e: Any) -> NoReturn:
        raise _MismatchError(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.",
                             item)

    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if actual.layout != expected.layout:
        if options["check_layout"]:
            mismatch("layout", actual.layout, expected.layout)
    elif options["check_stride"] and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if options["check_device"] and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if options["check_dtype"] and actual.dtype != expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    a, e = _equalize(actual, expected)
    matches = _matches(a, e, rtol, atol, options["equal_nan"])
    if matches.all():
        return
    if a.ndim == 0:
        raise _MismatchError(AssertionError, _scalar_message(a.item(), e.item(), rtol, atol), item)
    message = _tensor_message(to_numpy(a.data), to_numpy(e.data), matches, rtol, atol)
    raise _MismatchError(AssertionError, message, item)


def _matches(actual: Tensor, expected: Tensor, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """Where the two are close: `tg.isclose`, except that integers' distance is measured without
    overflow (in int8, -128 - 0 wraps around to -128, which would pass as 'within 0')."""
    if actual.dtype.kind not in "iu":
        return to_numpy(tensorgrad.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan).data)
    x, y = to_numpy(actual.data), to_numpy(expected.data)
    # Wrapping uint64 arithmetic gives the true distance when the larger one comes first
    ux, uy = x.astype(np.uint64), y.astype(np.uint64)
    distance = np.where(x >= y, ux - uy, uy - ux)
    return (x == y) | (distance <= atol + rtol * np.abs(y.astype(np.float64)))


def _equalize(actual: Tensor, expected: Tensor) -> tuple[Tensor, Tensor]:
    """On one device (the CPU where they differ) and of one dtype (the promoted one)."""
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        # Wide unsigned integers compare as int64, as PyTorch's promotion has no rule for them
        a_dtype, e_dtype = (np.dtype(np.int64) if d.kind == "u" and d.itemsize > 1 else d
                            for d in (actual.dtype, expected.dtype))
        dtype = dtypes.promote_types(a_dtype, e_dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    return actual, expected


def _scalar_message(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    diff = abs(actual - expected)
    relative = math.inf if expected == 0 else diff / abs(expected)
    return _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", diff, None, relative, None,
                             rtol, atol)


def _tensor_message(actual: np.ndarray, expected: np.ndarray, matches: np.ndarray, rtol: float,
                    atol: float) -> str:
    """Counts the mismatches and finds the greatest absolute and relative differences among them,
    computed in the tensors' dtype (integers and bools as int64, their ratio in the default float)."""
    total = matches.size
    wrong = total - int(matches.sum())
    counts = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    a, e, matches = actual.ravel(), expected.ravel(), matches.ravel()
    if a.dtype.kind not in "fc":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):  # 0 / 0 and x / 0 where expected is 0; the matches are zeroed
        diff = np.abs(a - e)
        diff[matches] = 0
        relative = diff / np.abs(e)
    if a.dtype.kind not in "fc":
        relative = relative.astype(dtypes.get_default_dtype())  # as PyTorch's int64 / int64
    relative[matches] = 0
    # argmax finds the first nan, where PyTorch's max reports nan too
    i, j = int(np.argmax(diff)), int(np.argmax(relative))
    return _mismatch_message("Tensor-likes", counts, diff[i].item(), _unravel(i, actual.shape),
                             relative[j].item(), _unravel(j, actual.shape), rtol, atol)


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(k) for k in np.unravel_index(flat, shape))


def _mismatch_message(identifier: str, extra: str, diff: Any, diff_index: tuple[int, ...] | None,
                      relative: Any, relative_index: tuple[int, ...] | None, rtol: float, atol: float) -> str:
    """PyTorch's report: a header, the extra line, then the absolute and relative differences
    (the greatest ones, with their index, for tensors) and the tolerances unless both are 0."""
    equality = rtol == 0 and atol == 0

    def line(kind: str, value: Any, index: tuple[int, ...] | None, tolerance: float) -> str:
        text = f"{kind.title()} difference: {value}" if index is None else \
            f"Greatest {kind} difference: {value} at index {index}"
        return text + ("" if equality else f" (up to {tolerance} allowed)") + "\n"

    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    text += line("absolute", diff, diff_index, atol) + line("relative", relative, relative_index, rtol)
    return text.strip()


# --- make_tensor -------------------------------------------------------------------------------


def make_tensor(*shape: int | tuple[int, ...] | list[int], dtype: Any, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format: Any = None) -> Tensor:
    """A random tensor of `shape` for tests: integers uniform in [low, high) (default [-9, 10)),
    floats and complex parts uniform in [low, high) (default [-9, 9)), bools either; the range
    clamped to what `dtype` holds. `noncontiguous`: every other element of a buffer twice as wide;
    `exclude_zero`: zeros replaced by 1 (integers) or the smallest normal float."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(shape)
    dtype = np.dtype(dtype)
    exact = dtype.kind in "biu"
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and exact:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice as wide, so the elements skipped differ from those kept
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype.kind == "b":
        low, high = _value_range(low, high, dtype, 0, 2, 0, 2)
        result = tensorgrad.randint(low, high, shape, dtype=dtype, device=device)
    elif exact:
        info = np.iinfo(dtype)
        # randint's bounds are int64, so int64's largest value can't be drawn
        low, high = _value_range(low, high, dtype, int(info.min), int(info.max) + (dtype != np.int64), -9, 10)
        result = tensorgrad.randint(low, high, shape, dtype=dtype, device=device)
    elif dtype.kind in "fc":
        info = np.finfo(dtype)
        low, high = _value_range(low, high, dtype, float(info.min), float(info.max), -9, 9)
        result = _uniform(shape, dtype, device, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by tg.testing.make_tensor().")
    if noncontiguous:
        result = result[..., 1::2]  # offset by one to also catch offset bugs
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if exact else float(np.finfo(dtype).tiny)
    if not exact:
        result.requires_grad = requires_grad
    return result


def _value_range(low: float | None, high: float | None, dtype: np.dtype, lowest: float, highest: float,
                 default_low: float, default_high: float) -> tuple[Any, Any]:
    """[low, high) from the defaults, checked and clamped to [lowest, highest); integers' bounds
    rounded up (randint's high is exclusive, so it is rounded up too)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.kind in "fc":
        warnings.warn("Passing `low==high` to `tg.testing.make_tensor` for floating or complex types is "
                      "deprecated. Use `tg.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype.kind in "biu":
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform(shape: tuple[int, ...], dtype: np.dtype, device: Any, low: float, high: float) -> Tensor:
    """Uniform in [low, high): for complex dtypes, the real and the imaginary parts each."""
    real_dtype = np.empty(0, dtype).real.dtype
    parts = (*shape, 2) if dtype.kind == "c" else shape
    result = tensorgrad.empty(parts, dtype=real_dtype, device=device)
    if high - low >= float(np.finfo(real_dtype).max):  # the width overflows: draw half as wide, double
        result.uniform_(low / 2, high / 2).mul_(2)
    else:
        result.uniform_(low, high)
    return tensorgrad.view_as_complex(result) if dtype.kind == "c" else result
