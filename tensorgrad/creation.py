"""Creating tensors: `tensor`, `from_numpy`, `zeros`, `ones`, `full`, `arange`, `eye`, `empty`,
`linspace`, `logspace`, the `*_like` forms, and randomness: `manual_seed` and the generator
behind it, `rand`, `randn`, `randint`, `randperm`, `multinomial`, `bernoulli`, the in-place
initialisers `normal_` and `uniform_`, and `Generator` for a stream of one's own (tutorial
chapter 6).

Every random function draws from the generator behind `tg.manual_seed` unless a
`generator=tg.Generator().manual_seed(n)` is passed, as in PyTorch. Sizes are checked once by
`tensorgrad.checks`. The results are leaves: they carry no history.

Devices: a tensor is made on the CPU and moved once to `device=` if that is elsewhere; the
`*_like` forms and the random functions that take a tensor follow its device. Random numbers are
always drawn on the CPU, by numpy's generator, and then moved: the same seed gives the same
numbers on either device, at the price of one copy to the GPU.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from scalargrad.engine import grad_mode
from tensorgrad import autograd, checks, dtypes, layouts
from tensorgrad.autograd import bump_version, record
from tensorgrad.checks import ShapeError, UnsupportedDtypeError
from tensorgrad.device import (
    CPU,
    array_like,
    as_device,
    data_address,
    default_device,
    device_of,
    is_array,
    namespace,
    strided_view,
    to_device,
    to_numpy,
    writeable,
)
from tensorgrad.dtypes import int64
from tensorgrad.tensor import Tensor, init_node, new_leaf, to_array

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "arange", "eye", "zeros_like",
    "ones_like", "full_like", "manual_seed", "rand", "randn", "rand_like", "randn_like",
    "Generator", "empty", "empty_like", "linspace", "logspace", "randint", "randperm", "multinomial",
    "bernoulli", "normal_", "uniform_", "normal", "randint_like", "initial_seed", "seed", "get_rng_state",
    "set_rng_state", "exponential_", "random_", "tril_indices", "triu_indices", "scalar_tensor",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "poisson",
    "binomial", "memory_format", "preserve_format", "contiguous_format", "channels_last", "channels_last_3d",
    "clone",
]

def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers or an array).

    Python floats become the default float (float32) and ints int64; numpy arrays keep their dtype.
    A GPU array stays on its GPU (unless `device` says otherwise). `pin_memory` as `torch.tensor`'s
    (a bool; True needs a GPU, see `tensorgrad.layouts`).
    """
    if pin_memory is not False:
        layouts.check_pin_memory(pin_memory, "tensor", strict=True)
    if type(data) is not np.ndarray and is_array(data):  # a GPU's array: copied through the host
        t = new_leaf(to_array(to_numpy(data), dtype), requires_grad)
        return _placed(t, device, "tensor") if device is not None else _following(t, data)
    if isinstance(data, np.ndarray) and data.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"tensor(): can't convert np.ndarray of type {data.dtype}; the supported types are "
                        "bool, integers, floats and complex numbers")
    python_data = not isinstance(data, Tensor | np.ndarray | np.generic) and not hasattr(data, "__array__")
    array = _from_python(data, dtype) if python_data else to_array(data, dtype)
    return _placed(new_leaf(array, requires_grad), device, "tensor")



_NUMBERS = bool | int | float | complex
_NUMERIC_KINDS = "biufc"


def _from_python(data: Any, dtype: Any) -> np.ndarray:
    """Nested lists of numbers (and numpy numbers, numpy arrays, one-element tensors) as a fresh array
    of PyTorch's dtype: each leaf has a dtype (a Python float the default float, an int int64, a complex
    the default complex; a numpy number or tensor its own) and the result has the promotion of them all.
    An int that does not fit the target dtype is an error, as in PyTorch (a negative one wraps around
    into an unsigned dtype: `tensor([-1], dtype=uint8)` is 255)."""
    if dtype is None and type(data) in _PYTHON_DTYPES and type(data) is not int:
        return np.array(data, dtype=_PYTHON_DTYPES[type(data)]())  # one bool, float or complex: 3x faster
    leaf_dtypes: set[np.dtype] = set()
    try:
        holds_tensors = _leaf_dtypes(data, leaf_dtypes)
    except RuntimeError as error:  # not a number: PyTorch's TypeError once the dtype is given
        if dtype is None or "Could not infer" not in str(error):
            raise
        raise TypeError(f"{error}: it must be a number to become {np.dtype(dtype)}") from None
    if holds_tensors:  # a one-element tensor counts as the number it holds, whatever its shape
        data = _items(data)
    try:
        array = np.array(data)
    except ValueError as error:
        raise DataTypeError(f"tensor(): the nested sequences must have equal lengths at every depth "
                            f"(got a ragged {type(data).__name__}): {str(error).split('. ')[0]}") from None
    inferred = functools.reduce(dtypes.promote_types, leaf_dtypes) if leaf_dtypes else dtypes.default_float
    target = inferred if dtype is None else np.dtype(dtype)
    if target == array.dtype:  # the common case: nothing to convert, nothing that can overflow
        return array
    _check_conversion(array, target, leaf_dtypes)
    with np.errstate(over="ignore"):
        return array.astype(target) if target.kind != "u" or array.dtype.kind != "i" else \
            array.astype(np.int64).astype(target)


def _check_conversion(array: np.ndarray, target: np.dtype, leaf_dtypes: set[np.dtype]) -> None:
    """Raise as PyTorch does where the numbers in `array` don't fit `target`."""
    unsigned = np.dtype(np.uint64)
    beyond_int64 = array.dtype == object or (array.dtype == unsigned and unsigned not in leaf_dtypes)
    if beyond_int64 and target.kind in "iu":  # a Python int beyond int64
        raise ValueError("tensor(): Overflow when unpacking long long: an int does not fit in int64")
    if target.kind in "iuf" and array.dtype.kind == "c":
        raise TypeError(f"tensor(): a complex number can't be converted to {target}: must be real number, "
                        "not complex")
    if target.kind in "iu" and array.size:
        info = np.iinfo(target)
        low = -int(info.max) if target.kind == "u" and array.dtype.kind in "iu" else int(info.min)
        with np.errstate(invalid="ignore"):
            if not (np.all(array >= low) and np.all(array <= int(info.max))):  # (NaN fails both)
                raise RuntimeError(f"tensor(): value cannot be converted to type {target} without overflow")


def _leaf_dtypes(data: Any, found: set[np.dtype]) -> bool:
    """Add the dtype of every leaf of the nested sequence `data` to `found`; whether a leaf is a tensor.

    Level by level, so that the common case, lists of Python numbers, costs a few C-speed passes
    (`set(map(type, ...))`) rather than a Python call per row: 5x faster on 100,000 rows."""
    holds_tensors = False
    level = [data]
    while level:
        kinds = set(map(type, level))
        for kind in kinds - _LISTS:
            if kind in _PYTHON_DTYPES:
                found.add(_PYTHON_DTYPES[kind]())
                continue
            for leaf in (x for x in level if type(x) is kind):  # numpy numbers, tensors, ranges...
                holds_tensors |= _other_leaf(leaf, found)
        deeper = kinds & _LISTS
        level = list(itertools.chain.from_iterable(x for x in level if type(x) in deeper)) if deeper else []
    return holds_tensors


_LISTS = {list, tuple}


def _other_leaf(data: Any, found: set[np.dtype]) -> bool:
    """`_leaf_dtypes` for one element that is not a list, a tuple or a plain Python number."""
    if isinstance(data, Sequence) and not isinstance(data, str):  # a range, a user's sequence
        return _leaf_dtypes(list(data), found)
    if isinstance(data, _NUMBERS):
        found.add(_PYTHON_DTYPES[type(data)]() if type(data) in _PYTHON_DTYPES else np.dtype(type(data)))
        return False
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise ValueError("tensor(): only one element tensors can be converted to Python scalars, got "
                             f"a tensor of shape {data.shape} in the list")
        found.add(data.dtype)
        return True
    if isinstance(data, np.ndarray | np.generic) and data.dtype.kind in _NUMERIC_KINDS:
        found.add(data.dtype)
        return False
    name = type(data).__name__
    if isinstance(data, str):
        raise DataTypeError(f"tensor(): new(): invalid data type 'str' (got {data!r})")
    raise RuntimeError(f"tensor(): Could not infer dtype of {name}")


def _items(data: Any) -> Any:
    """The nested sequence `data` with each (one-element) tensor replaced by its number."""
    if isinstance(data, Sequence) and not isinstance(data, str):
        return [_items(x) for x in data]
    return data.item() if isinstance(data, Tensor) else data


_PYTHON_DTYPES = {  # the dtype each kind of Python number becomes (read when called: the default can change)
    bool: lambda: np.dtype(bool), int: lambda: int64, float: lambda: dtypes.default_float,
    complex: lambda: np.dtype(np.complex128 if dtypes.default_float == np.float64 else np.complex64),
}


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` itself if it is already a Tensor (of that dtype and device), a tensor sharing the
    memory of an array of that dtype (as `from_numpy`), else a new tensor."""
    same_dtype = dtype is None or getattr(data, "dtype", None) == np.dtype(dtype)
    if isinstance(data, Tensor) and same_dtype and (device is None or data.device == as_device(device)):
        return data
    if isinstance(data, Tensor):
        return _placed(data.detach().to(dtype=dtype), device, "as_tensor")
    target = device if device is not None else default_device()  # (an array goes to the default device)
    if is_array(data) and same_dtype and (target is None or as_device(target) == device_of(data)):
        return new_leaf(data)
    return tensor(data, dtype=dtype, device=device)


class DataTypeError(TypeError, ValueError):
    """Data a tensor can't hold (a string, ragged lists): PyTorch raises TypeError or ValueError, by
    where the offending element sits."""


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with `array` (a change to one shows in the other).

    As in PyTorch, the array must hold bool, integers, floats or complex numbers, in the machine's
    byte order, with no negative stride (`a[::-1]`: copy it first)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray, got {type(array).__name__}")
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"from_numpy(): can't convert np.ndarray of type {array.dtype}; the supported types "
                        "are bool, integers, floats and complex numbers")
    if not array.dtype.isnative:
        raise ValueError(f"from_numpy(): the array's byte order ({array.dtype.str}) differs from the native "
                         "byte order; convert it with array.astype(array.dtype.newbyteorder('='))")
    if any(stride < 0 for stride in array.strides):
        raise ValueError(f"from_numpy(): at least one stride of the array is negative ({array.strides}), "
                         "and tensors with negative strides are not supported; copy it with array.copy()")
    autograd.note_dtype(array.dtype)
    return new_leaf(array)


def _new(data: np.ndarray, requires_grad: bool, device: Any, op: str) -> Tensor:
    """A fresh leaf holding `data`, on `device`."""
    return _placed(new_leaf(data, requires_grad=requires_grad), device, op)


def _placed(t: Tensor, device: Any, op: str) -> Tensor:
    """t on `device` (checked; None is the default device, the CPU unless set). Made on the CPU
    first: a fresh leaf, moved once."""
    if device is None:
        device = default_device()
    if device is not None:
        target = as_device(device)
        if target.type != "cpu":
            t._data = to_device(t._data, target, op)
    autograd.note_dtype(t._data.dtype)
    return t


def _following(t: Tensor, like: Any) -> Tensor:
    """t (a fresh leaf made on the CPU) moved to where the array `like` lives, as its kind of array."""
    if type(like) is not np.ndarray:
        t._data = array_like(t._data, like)
    return t


def _creation_dtype(dtype: Any) -> np.dtype:
    return dtypes.or_default(dtype)


def legacy(dtype: np.dtype, args: tuple, device: Any = None) -> Tensor:
    """PyTorch's legacy constructors (`tg.Tensor(...)`, `tg.FloatTensor(...)`): data converted to
    `dtype` (`Tensor([1, 2])` is float), sizes as an uninitialised tensor (`Tensor(2, 3)`), or
    nothing for an empty one."""
    if not args:
        return empty(0, dtype=dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], int | np.integer):
        data = args[0]
        if isinstance(data, Tensor):
            return data.detach().to(dtype=dtype)
        return tensor(data, dtype=dtype, device=device)
    return empty(*args, dtype=dtype, device=device)


def _shape(size: tuple, named: Any, op: str) -> tuple[int, ...]:
    """The shape given as `f(2, 3)`, `f((2, 3))`, `f([2, 3])` or `f(size=(2, 3))`, exactly one of them."""
    if (named is None) == (not size):
        raise TypeError(f"{op}() takes the size either as positional arguments or as size=, exactly once")
    return checks.sizes(size if named is None else (named,), op)


def zeros(*size: int, dtype: Any = None, requires_grad: bool = False,
          device: Any = None, **named: Any) -> Tensor:
    """A tensor of zeros: `zeros(2, 3)`, `zeros((2, 3))` or `zeros(size=(2, 3))`."""
    shape = _shape(size, _size_named(named, "zeros"), "zeros")
    return _new(np.zeros(shape, _creation_dtype(dtype)), requires_grad, device, "zeros")


def _options(layout: Any, pin_memory: Any, op: str) -> None:
    """A factory's `layout=` and `pin_memory=` keywords, checked (see `tensorgrad.layouts`): the
    defaults cost two comparisons."""
    if layout is not None:
        layouts.check_layout(layout, op)
    if pin_memory:
        layouts.check_pin_memory(pin_memory, op)


def _size_named(named: dict, op: str) -> Any:
    """The `size=` keyword out of **named (with PyTorch's `layout=` and `pin_memory=`, checked:
    the only ones accepted there)."""
    unknown = set(named) - {"size", "layout", "pin_memory"}
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    layouts.check_layout(named.get("layout"), op)
    layouts.check_pin_memory(named.get("pin_memory", False), op)
    return named.get("size")


def ones(*size: int, dtype: Any = None, requires_grad: bool = False,
         device: Any = None, **named: Any) -> Tensor:
    """A tensor of ones: `ones(2, 3)`, `ones((2, 3))` or `ones(size=(2, 3))`."""
    shape = _shape(size, _size_named(named, "ones"), "ones")
    return _new(np.ones(shape, _creation_dtype(dtype)), requires_grad, device, "ones")


def full(size: Sequence[int], fill_value: float, *, dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of shape `size` (a sequence of ints, as PyTorch) filled with `fill_value`."""
    _options(layout, pin_memory, "full")
    if not isinstance(size, Sequence) or isinstance(size, str):
        raise TypeError(f"full(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    if isinstance(fill_value, Tensor | np.ndarray | np.generic) and np.ndim(fill_value) == 0:
        fill_value = fill_value.item()  # a number however it comes
    if not isinstance(fill_value, bool | int | float | complex):
        raise TypeError(f"full(): argument 'fill_value' must be a number, not {type(fill_value).__name__}")
    if dtype is None and not isinstance(fill_value, float):  # bool, int64 or complex, as PyTorch infers
        dtype = _from_python(fill_value, None).dtype
    dtype = _creation_dtype(dtype)
    fill_value = checked_scalar(fill_value, dtype, "full")
    data = np.full(checks.sizes((size,), "full"), fill_value, dtype)
    return _new(data, requires_grad, device, "full")


def arange(start: float = 0, end: float | None = None, step: float = 1, *, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Evenly spaced values in [start, end): int64 for integer arguments, else the default float.

    The count is ceil((end - start) / step), computed in float64; an integer dtype then steps by
    the integer parts of start and step, as PyTorch (`arange(5, 1, -1.5, dtype=int32)` is 5, 4, 3).
    For int64, PyTorch first truncates start, end and step to integers and counts with them:
    `arange(3.1, dtype=int64)` has 3 elements (int32's has 4), and a step below 1 in magnitude is
    a ValueError."""
    _options(layout, pin_memory, "arange")
    if end is None:
        start, end = 0, start
    # 0-d tensors and numpy scalars count as the numbers they hold (`arange(t.size(0))`, `arange(n)`).
    start, end, step = (v.item() if isinstance(v, Tensor | np.generic) else v for v in (start, end, step))
    if not all(np.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange(): upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    if dtype is None:
        integral = all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if integral else dtypes.default_float
    dtype = np.dtype(dtype)
    if dtype.kind in "bc":
        raise UnsupportedDtypeError(f"arange(): not implemented for dtype {dtype}")
    if dtype == np.int64:
        start, end, step = int(start), int(end), int(step)  # (toward zero, as C++'s conversion)
        if step == 0:
            raise ValueError("arange(): step must be nonzero (after conversion to int64)")
        count = abs(end - start + step - (1 if step > 0 else -1)) // abs(step)  # (the signs agree)
        return _new(start + step * np.arange(count, dtype=np.int64), requires_grad, device, "arange")
    if dtype.kind in "iu":
        count = max(0, int(np.ceil((end - start) / step)))
        data = int(start) + int(step) * np.arange(count, dtype=np.int64)
        return _new(data.astype(dtype), requires_grad, device, "arange")
    return _new(np.arange(start, end, step, dtype=dtype), requires_grad, device, "arange")


def eye(n: int, m: int | None = None, *, dtype: Any = None, layout: Any = None, device: Any = None,
        requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """The identity matrix, n x m (m defaults to n)."""
    _options(layout, pin_memory, "eye")
    n, m = checks.sizes((n, n if m is None else m), "eye")
    return _new(np.eye(n, m, dtype=_creation_dtype(dtype)), requires_grad, device, "eye")


def manual_seed(seed: int) -> Generator:
    """Seed the generator behind `rand`, `randn` and their `_like` forms; returns it
    (`tg.default_generator`, as PyTorch returns its default generator)."""
    return the_default_generator.manual_seed(seed)


def initial_seed() -> Any:
    """The seed last given to `manual_seed` (None before the first)."""
    return the_default_generator.initial_seed()


def seed() -> int:
    """Seed the default generator with a fresh random seed; returns the seed."""
    return the_default_generator.seed()


def get_rng_state() -> Tensor:
    """The default generator's state, as a uint8 tensor (its JSON text) for `set_rng_state`."""
    return the_default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from `get_rng_state()`."""
    _restore_state(the_default_generator._rng, new_state, "set_rng_state")


def default_generator() -> np.random.Generator:
    """The numpy stream behind `rand`, `randn`, dropout and `nn.Linear`'s initialisation."""
    return the_default_generator._rng


def rand(*size: int, generator: Generator | None = None, dtype: Any = None, requires_grad: bool = False,
         device: Any = None, **named: Any) -> Tensor:
    """Uniform samples from [0, 1) (a floating dtype)."""
    shape = _shape(size, _size_named(named, "rand"), "rand")
    _floating(dtype, "rand")
    target = _creation_dtype(dtype)
    data = _stream(generator).random(shape, dtype=np.float64)
    if target.kind == "c":  # a complex dtype: real and imaginary parts each uniform in [0, 1)
        data = data + 1j * _stream(generator).random(shape, dtype=np.float64)
    return _new(data.astype(target), requires_grad, device, "rand")


def randn(*size: int, generator: Generator | None = None, dtype: Any = None, requires_grad: bool = False,
          device: Any = None, **named: Any) -> Tensor:
    """Samples from the standard normal distribution (a floating dtype)."""
    shape = _shape(size, _size_named(named, "randn"), "randn")
    target = _floating(dtype, "randn")
    data = _stream(generator).standard_normal(shape)
    if target.kind == "c":  # as PyTorch: real and imaginary parts each of variance 1/2, so E|z|^2 = 1
        data = (data + 1j * _stream(generator).standard_normal(shape)) * np.sqrt(0.5)
    return _new(data.astype(target), requires_grad, device, "randn")


class memory_format:  # noqa: N801 - PyTorch's name
    """How a new tensor's elements sit in storage: `tg.preserve_format` (the default of `clone`,
    the `*_like` functions and `to`: a dense input's layout is kept, a transposed (3, 4) tensor's
    clone has strides (1, 3)), `tg.contiguous_format` (row-major), `tg.channels_last` (a 4-d
    NCHW tensor stored as NHWC: strides (HWC, 1, WC, C)) or `tg.channels_last_3d` (5-d, NDHWC)."""

    def __init__(self, name: str, rank: int = 0) -> None:
        self._name = name
        self.rank = rank  # the number of dimensions a channels-last format needs; 0 for the others

    def __repr__(self) -> str:
        return f"tensorgrad.{self._name}"

    def __reduce__(self) -> str:
        return self._name  # pickled as the module's one object of that name


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)


def check_memory_format(value: Any, op: str) -> memory_format:
    """`value` checked to be a memory format (TypeError otherwise, as PyTorch)."""
    if not isinstance(value, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be memory_format, not {type(value).__name__}")
    return value


def _check_rank(ndim: int, layout: memory_format) -> None:
    """PyTorch's error for a channels-last format on a tensor of another number of dimensions."""
    if ndim != layout.rank:
        raise RuntimeError(f"required rank {layout.rank} tensor to use {layout._name} format")


def is_channels_last_contiguous(shape: tuple[int, ...], strides: tuple[int, ...],
                                layout: memory_format) -> bool:
    """Whether `strides` lay `shape` out densely in `layout`'s order, size-1 dimensions ignored
    (PyTorch's `is_contiguous(memory_format=...)`; False for a tensor of another rank)."""
    if len(shape) != layout.rank:
        return False
    expected = 1
    for d in (1, *range(len(shape) - 1, 1, -1), 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def suggested_format(shape: tuple[int, ...], strides: tuple[int, ...]) -> memory_format:
    """The format PyTorch reads from strides (`suggest_memory_format`): channels_last(_3d) where
    the channels are innermost and the rest in order, ambiguous size-1 cases read as contiguous."""
    layout = {4: channels_last, 5: channels_last_3d}.get(len(shape))
    if layout is None or strides[1] == 0:
        return contiguous_format
    least = 0
    for d in (1, *range(len(shape) - 1, 1, -1), 0):
        if shape[d] == 0 or strides[d] < least or (d == 0 and least == strides[1]):
            return contiguous_format
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return layout


def _channels_last_copy(values: Any, layout: memory_format) -> Any:
    """`values` copied into `layout` (checked to suit its rank): stored with the channels last."""
    _check_rank(values.ndim, layout)
    if not values.size:  # numpy keeps no layout for no elements: PyTorch's strides, set by hand
        return _with_strides(values, channels_last_strides(values.shape))
    to_last = (0, *range(2, values.ndim), 1)
    return values.transpose(to_last).copy().transpose(np.argsort(to_last))


def channels_last_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's channels-last strides for a 4-d or 5-d shape, in elements: the channels innermost,
    then the last dimension, ..., the batch outermost; a size 0 is not counted as 1, so that
    `empty((2, 0, 3, 4), memory_format=channels_last).stride()` is (0, 1, 0, 0), as PyTorch's."""
    strides = [0] * len(shape)
    expected = 1
    for d in (1, *range(len(shape) - 1, 1, -1), 0):
        strides[d] = expected
        expected *= shape[d]
    return tuple(strides)


def empty_strides(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """The strides PyTorch gives a new tensor with no elements (numpy's are no guide): channels-last
    ones where `_channels_last_copy` set them, else row-major with sizes 0 counted as 1."""
    if len(shape) in (4, 5) and strides == channels_last_strides(shape):
        return strides
    return tuple(math.prod(max(n, 1) for n in shape[i + 1:]) for i in range(len(shape)))


def _with_strides(values: Any, strides: tuple[int, ...]) -> Any:
    """A fresh array holding `values` laid out at `strides` (in elements; dense, no overlap)."""
    extent = 0 if not values.size else 1 + sum((n - 1) * step for n, step in zip(values.shape, strides,
                                                                                 strict=True))
    memory = namespace(values).empty(extent, values.dtype)
    out = strided_view(memory, values.shape, tuple(step * values.itemsize for step in strides))
    out[...] = values
    return out


def in_format(array: Any, layout: memory_format) -> Any:
    """`array` (4-d or 5-d) as `Tensor.to(memory_format=layout)` leaves it: itself where its strides
    already suggest `layout` (or `layout` is preserve_format), else a copy laid out in `layout`."""
    strides = tuple(s // array.itemsize for s in array.strides)
    if layout is preserve_format or suggested_format(array.shape, strides) is layout:
        return array
    return laid_out(array.copy(), array, layout)


def _stride_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> list[int]:
    """The dimensions from innermost to outermost as PyTorch orders them for a layout to keep
    (its `infer_dense_strides`): by stride, the smaller size first on a tie, and a dimension of
    stride 0 (broadcast) left where it is."""
    def order(a: int, b: int) -> int:
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return 1 if strides[a] > strides[b] else -1
        return 1 if shape[a] > shape[b] else 0

    return layouts.innermost_first(len(shape), order)


def laid_out(values: Any, like: Any, layout: memory_format = preserve_format) -> Any:
    """`values` (an array of `like`'s shape, made row-major) copied into `like`'s layout where
    PyTorch's preserve_format keeps one: a strided but not row-major `like`; with a channels-last
    format, in that. Else `values` itself."""
    if layout.rank:
        return _channels_last_copy(values, layout)
    if layout is contiguous_format:
        return values
    if like.flags.c_contiguous or not like.size:
        return _same_strides(values, like)
    strides = tuple(s // like.itemsize for s in like.strides)
    if _dense(like.shape, strides):  # no gaps, no overlap, in some order: those very strides
        return _with_strides(values, strides)
    inner_first = _stride_order(like.shape, strides)
    outer_first = inner_first[::-1]
    return values.transpose(outer_first).copy().transpose(np.argsort(outer_first))


def _dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether `strides` (in elements) lay `shape` out with no gaps and no overlap, in some order
    of the dimensions, size-1 ones ignored (PyTorch's `is_non_overlapping_and_dense`)."""
    expected = 1
    for step, n in sorted((step, n) for step, n in zip(strides, shape, strict=True) if n != 1):
        if step != expected:
            return False
        expected *= n
    return True


def _same_strides(values: Any, like: Any) -> Any:
    """`values` (row-major) laid out at the strides of `like`, a row-major array (or an empty one)
    whose strides may still differ in its size-1 dimensions, or a channels-last empty one: PyTorch's
    preserve_format copies a dense layout's strides exactly (a (2, 3, 1, 1) channels-last tensor's
    clone keeps strides (3, 1, 3, 3), not (3, 1, 1, 1))."""
    if 1 not in like.shape and like.size:  # the common case: nothing that can differ
        return values
    strides = tuple(step // like.itemsize for step in like.strides)
    if not like.size:
        strides = empty_strides(like.shape, strides)
    if strides == tuple(step // values.itemsize for step in values.strides):
        return values
    return _with_strides(values, strides)


def clone(input: Tensor, *, memory_format: memory_format = preserve_format) -> Tensor:  # noqa: A002
    """A copy with its own storage, still in the graph (PyTorch's `torch.clone`)."""
    if not isinstance(input, Tensor):
        raise checks.not_a_tensor(input, "clone")
    return input.clone(memory_format=memory_format)


def rebuild_tensor(kind: type, data: Any, requires_grad: bool) -> Tensor:
    """A tensor (or Parameter) back from pickle: its values and `requires_grad`, no graph and no
    grad, as PyTorch's."""
    t = kind.__new__(kind)
    init_node(t, data, requires_grad)
    return t


def as_subclass(t: Tensor, cls: type) -> Tensor:
    """`Tensor.as_subclass(cls)`: an instance of `cls` (a subclass of Tensor) sharing t's memory,
    a view of t in the graph (the gradient flows through it unchanged); `cls.__init__` is not run."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                        f"possible. Make sure your class inherits from Tensor (got {cls!r}).")
    alias = record(t.data, "alias", (t,), lambda grad: grad, saved=(), view_of=t,
                   graph_vjp=lambda grad, out, x: (grad,))
    out = object.__new__(cls)  # (as PyTorch: neither cls.__new__ nor cls.__init__ runs)
    for name in Tensor.__slots__:  # the node's attributes, as `record` set them
        if name != "__weakref__":
            setattr(out, name, getattr(alias, name))
    return out


def deep_copied(t: Tensor, memo: dict) -> Tensor:
    """`copy.deepcopy` of a leaf: a new leaf of the same class (a Parameter stays one) with copies
    of the values (in their layout), `grad`, `requires_grad` and any attributes set on it. As in
    PyTorch, the memory the values lie in is copied once per deepcopy: a tensor and a view of it
    copied together (`deepcopy([b, b[0]])`) share the copied memory, so the copies stay linked."""
    new = type(t).__new__(type(t))
    memo[id(t)] = new
    init_node(new, _deep_copied_data(t.data, memo), t.requires_grad)
    new.grad, new.label = copy.deepcopy(t.grad, memo), t.label
    if hasattr(t, "__dict__"):
        new.__dict__.update(copy.deepcopy(t.__dict__, memo))
    return new


def _deep_copied_data(data: Any, memo: dict) -> Any:
    """A copy of `data` (a NumPy array): when it views the memory of another array (PyTorch's
    storage), the same view (offset, strides) of that memory's copy, made once per `memo`."""
    if type(data) is not np.ndarray:  # a GPU's array (or another array type): copied on its own
        return copy.deepcopy(data, memo)
    root = data
    while type(root.base) is np.ndarray:
        root = root.base
    if root is data or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return copy.deepcopy(data, memo)
    raw = copy.deepcopy(root, memo).reshape(-1, order="A").view(np.uint8)  # the copy's bytes, in memory order
    offset = data_address(data) - data_address(root)
    view = np.ndarray(data.shape, data.dtype, buffer=raw, offset=offset, strides=data.strides)
    view.flags.writeable = data.flags.writeable
    return view


def _like(make: Any, t: Tensor, dtype: Any, requires_grad: bool, device: Any, name: str,
          *args: Any, memory_format: memory_format = preserve_format, layout: Any = None,
          pin_memory: bool = False, **drawing: Any) -> Tensor:
    """`make(t.shape, *args, ...)` with t's dtype and device unless others are asked for, laid out
    in storage as t is unless `memory_format=tg.contiguous_format`. `drawing`: a random maker's
    `generator=`."""
    if not isinstance(t, Tensor):
        raise checks.not_a_tensor(t, name)
    _options(layout, pin_memory, name)
    out = make(t.shape, *args, dtype=t.dtype if dtype is None else dtype, requires_grad=requires_grad,
               device=CPU, **drawing)  # (made on the host, then moved once: not to the default device)
    out._data = laid_out(out._data, t.data, check_memory_format(memory_format, name))
    return _following(out, t.data) if device is None else _placed(out, device, name)


def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, pin_memory: bool = False,
               memory_format: memory_format = preserve_format) -> Tensor:
    """Zeros of `input`'s shape, dtype and device."""
    return _like(zeros, input, dtype, requires_grad, device, "zeros_like", memory_format=memory_format,
                 layout=layout, pin_memory=pin_memory)


def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, pin_memory: bool = False,
              memory_format: memory_format = preserve_format) -> Tensor:
    """Ones of `input`'s shape, dtype and device."""
    return _like(ones, input, dtype, requires_grad, device, "ones_like", memory_format=memory_format,
                 layout=layout, pin_memory=pin_memory)


def full_like(input: Tensor, fill_value: float, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, pin_memory: bool = False,
              memory_format: memory_format = preserve_format) -> Tensor:
    """`fill_value` in `input`'s shape, dtype and device."""
    return _like(full, input, dtype, requires_grad, device, "full_like", fill_value,
                 memory_format=memory_format, layout=layout, pin_memory=pin_memory)


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
              memory_format: memory_format = preserve_format) -> Tensor:
    """Uniform [0, 1) samples in `input`'s shape, dtype and device."""
    return _like(rand, input, dtype, requires_grad, device, "rand_like", memory_format=memory_format,
                 layout=layout, pin_memory=pin_memory, generator=generator)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None, layout: Any = None,
               device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
               memory_format: memory_format = preserve_format) -> Tensor:
    """Standard normal samples in `input`'s shape, dtype and device."""
    return _like(randn, input, dtype, requires_grad, device, "randn_like", memory_format=memory_format,
                 layout=layout, pin_memory=pin_memory, generator=generator)


class Generator:
    """A stream of random numbers of its own: `g = tg.Generator().manual_seed(0)`, then
    `tg.randint(10, (3,), generator=g)`. Independent of `tg.manual_seed`."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng()
        self._seed: Any = None

    def manual_seed(self, seed: Any) -> Generator:
        """Restart the stream from `seed`; returns the generator (PyTorch's chaining)."""
        self._seed = checks.as_int(seed, "manual_seed", "seed")
        self._rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> Any:
        """The seed last given to `manual_seed` (None if never seeded)."""
        return self._seed

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        fresh = int(np.random.SeedSequence().entropy % 2**63)
        self.manual_seed(fresh)
        return fresh

    def get_state(self) -> Tensor:
        """The stream's position, a uint8 tensor for `set_state` (restarts the same draws)."""
        return new_leaf(_state_bytes(self._rng))

    def set_state(self, new_state: Tensor) -> Generator:
        """Go back to a position saved by `get_state`; returns the generator."""
        _restore_state(self._rng, new_state, "set_state")
        return self

    @property
    def device(self) -> Any:
        """Where the stream's numbers are drawn: the CPU."""
        from tensorgrad.device import device

        return device("cpu")

    def __repr__(self) -> str:
        return f"<tensorgrad.Generator object at {id(self):#x}>"


# The process-wide stream behind `rand`, `randn`, dropout and initialisation (`tg.default_generator`):
# `tg.manual_seed` reseeds it and returns it, as PyTorch's.
the_default_generator = Generator()


def _state_bytes(stream: np.random.Generator) -> np.ndarray:
    """A bit generator's state as uint8 bytes (its JSON text)."""
    return np.frombuffer(json.dumps(stream.bit_generator.state).encode(), dtype=np.uint8).copy()


def _restore_state(stream: np.random.Generator, new_state: Any, op: str) -> None:
    """Set a bit generator's state from `_state_bytes`' tensor, with PyTorch's error types."""
    if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
        raise TypeError(f"{op}(): expects the uint8 tensor that get_rng_state() returns, got "
                        f"{type(new_state).__name__}")
    try:
        stream.bit_generator.state = json.loads(to_numpy(new_state.data).tobytes())
    except (ValueError, TypeError, KeyError) as error:
        raise RuntimeError(f"{op}(): not a state from get_rng_state() ({error})") from None


def _stream(generator: Generator | None) -> np.random.Generator:
    if generator is None:
        return default_generator()
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a tg.Generator, got {type(generator).__name__}")
    return generator._rng


def _floating(dtype: Any, op: str) -> np.dtype:
    """`dtype` (or the default), checked to be one random floats can be drawn in, as PyTorch."""
    dtype = _creation_dtype(dtype)
    if dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"{op}(): not implemented for dtype {dtype}: it draws floating values")
    return dtype


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False,
          device: Any = None, memory_format: memory_format = contiguous_format, **named: Any) -> Tensor:
    """A tensor whose values are whatever the memory held (fill it before reading); laid out
    row-major, or as `memory_format=tg.channels_last` (4-d) / `tg.channels_last_3d` (5-d) says."""
    shape = _shape(size, _size_named(named, "empty"), "empty")
    data = np.empty(shape, _creation_dtype(dtype))
    if memory_format is not contiguous_format:
        if check_memory_format(memory_format, "empty") is preserve_format:
            raise RuntimeError("empty(): unsupported memory format Preserve")
        data = _channels_last_copy(data, memory_format)
    return _new(data, requires_grad, device, "empty")


def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, pin_memory: bool = False,
               memory_format: memory_format = preserve_format) -> Tensor:
    """`empty` in input's shape and dtype."""
    return _like(empty, input, dtype, requires_grad, device, "empty_like", memory_format=memory_format,
                 layout=layout, pin_memory=pin_memory)


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """`steps` evenly spaced values from start to end, both included (the default float unless
    `dtype`; complex64 for a complex endpoint). An integer dtype truncates the endpoints first and
    each value after, as PyTorch: `linspace(0.5, 3.7, 3, dtype=tg.int64)` is [0, 1, 3]."""
    _options(layout, pin_memory, "linspace")
    steps = _steps(steps, "linspace")
    start, end, dtype = _spacing(start, end, dtype, "linspace")
    if dtype.kind in "iu":
        values = _integer_spacing(start, end, steps, dtype, "linspace", fused=True)
    else:
        values = np.linspace(start, end, steps, dtype=np.result_type(np.float64, dtype))
    return _new(_cast_truncating(values, dtype), requires_grad, device, "linspace")


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False,
             pin_memory: bool = False) -> Tensor:
    """`steps` values base**x for x evenly spaced from start to end, both included. An integer
    dtype spaces the truncated endpoints, as PyTorch: `logspace(-1.5, 1.5, 4, dtype=tg.int64)` is
    [0, 0, 2, 10]."""
    _options(layout, pin_memory, "logspace")
    steps = _steps(steps, "logspace")
    start, end, dtype = _spacing(start, end, dtype, "logspace")
    if dtype.kind in "iu" and steps == 1:
        _check_fits(base ** start, dtype, "logspace")
    if dtype.kind in "iu" and steps > 1:
        exponents = _integer_spacing(start, end, steps, dtype, "logspace")
    else:
        exponents = np.linspace(start, end, steps, dtype=np.result_type(np.float64, dtype))
    values = np.power(np.float64(base), exponents)
    return _new(_cast_truncating(values, dtype), requires_grad, device, "logspace")


def _spacing(start: Any, end: Any, dtype: Any, op: str) -> tuple[Any, Any, np.dtype]:
    """linspace's and logspace's endpoints as Python numbers, and the dtype they make."""
    start, end = (v.item() if isinstance(v, Tensor | np.ndarray | np.generic) else v for v in (start, end))
    is_complex = isinstance(start, complex) or isinstance(end, complex)
    default = np.result_type(dtypes.default_float, np.complex64) if is_complex else _creation_dtype(None)
    dtype = default if dtype is None else np.dtype(dtype)
    if is_complex and dtype.kind != "c":
        raise RuntimeError(f"{op}(): inferred dtype {default} can't be safely cast to passed dtype {dtype}")
    if dtype.kind == "b":
        raise UnsupportedDtypeError(f"{op}(): not implemented for dtype bool")
    return start, end, dtype


def _integer_spacing(start: float, end: float, steps: int, dtype: np.dtype, op: str,
                     fused: bool = False) -> np.ndarray:
    """PyTorch's integer linspace: the endpoints truncated to integers, then spaced by a float
    step, from the start for the first half and from the end for the rest (float64 values).

    `fused`: each value `low + step * i` rounded once, as a fused multiply-add, as PyTorch's CPU
    linspace kernel computes it (compiled with FMA for AVX2 and later CPUs): linspace(-3.28, 1,
    7, dtype=int16) is [-3, -2, -1, 0, 0, 0, 1], where 1 - 2/3 * 3 rounded twice would give -1."""
    for value in (start, end)[:steps]:
        _check_fits(value, dtype, op)
    low, high = math.trunc(start), math.trunc(end)
    if steps < 2:
        return np.full(steps, low, np.float64)
    step = (high - low) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    if fused:
        first, last = _fma(np.float64(step), i, np.float64(low)), _fma(np.float64(-step), steps - i - 1, high)
    else:
        first, last = low + step * i, high - step * (steps - i - 1)
    return np.where(i < steps // 2, first, last)


def _fma(a: Any, b: np.ndarray, c: Any) -> np.ndarray:
    """a * b + c with one rounding, in float64 (NumPy has no fma): the product split exactly into
    p + e (Dekker's two-product), then p + c exactly into s + t (Knuth's two-sum), then s + (t + e)."""
    p = a * b
    a_hi, a_lo = _halves(a)
    b_hi, b_lo = _halves(b)
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s = p + c
    bent = s - p
    t = (p - (s - bent)) + (c - bent)
    return s + (t + e)


def _halves(x: Any) -> tuple[Any, Any]:
    """x as hi + lo, each of at most 26 significant bits (Veltkamp's split), so products are exact."""
    scaled = 134217729.0 * x  # 2**27 + 1
    hi = scaled - (scaled - x)
    return hi, x - hi


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The (2, N) row and column indices of the lower triangle of a row x col matrix (on and below
    diagonal `offset`), row by row, as `torch.tril_indices`."""
    _options(layout, pin_memory, "tril_indices")
    return _triangle_indices(np.tril_indices, row, col, offset, dtype, device, "tril_indices")


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The (2, N) row and column indices of the upper triangle of a row x col matrix (on and above
    diagonal `offset`), row by row, as `torch.triu_indices`."""
    _options(layout, pin_memory, "triu_indices")
    return _triangle_indices(np.triu_indices, row, col, offset, dtype, device, "triu_indices")


def _triangle_indices(indices: Any, row: int, col: int, offset: int, dtype: Any, device: Any,
                      op: str) -> Tensor:
    row, col = checks.sizes((row, col), op)
    offset = checks.as_int(offset, op, "offset")
    rows, cols = indices(row, k=offset, m=col)
    data = np.stack([rows, cols]).astype(int64 if dtype is None else np.dtype(dtype))
    return _new(data, False, device, op)


def _steps(steps: Any, op: str) -> int:
    steps = checks.as_int(steps, op, "steps")
    if steps < 0:
        raise RuntimeError(f"{op}(): number of steps must be non-negative, got {steps}")
    return steps


_INT64 = np.iinfo(np.int64)


def checked_scalar(value: bool | int | float | complex, dtype: Any, op: str, *,
                   check_floats: bool = True) -> bool | int | float | complex:
    """A Python number as it is written into a tensor of `dtype`, checked as PyTorch's
    `checked_convert` checks it (full, full_like, masked_fill, index_fill, index_add's alpha...).

    A bool tensor takes any number. An integer must lie in the dtype's range, except that an
    unsigned dtype also takes -max..-1 and wraps it (two's complement: -1 is 255 in uint8). A
    float must lie in the range too (truncated toward zero: -1.5 fits int8 but not uint8); NaN
    fits no integer dtype; an infinity fits every float dtype. A complex number needs a zero
    imaginary part unless the dtype is complex. `check_floats=False` skips the range check into a
    float dtype (`scalar_tensor`'s, which overflows to inf). An int beyond int64 (and uint64)
    is Python's OverflowError; the rest RuntimeError."""
    dtype = np.dtype(dtype)
    if isinstance(value, int) and not isinstance(value, bool) and not _INT64.min <= value < 2 ** 64:
        raise OverflowError(f"{op}(): value {value} doesn't fit in a 64-bit integer")
    if dtype == np.bool_ or isinstance(value, bool):
        return bool(value) if dtype == np.bool_ else value
    if isinstance(value, complex):
        if dtype.kind == "c":
            return value
        if value.imag:
            raise RuntimeError(f"{op}(): value {value} cannot be converted to type {dtype} without overflow")
        value = value.real
    if dtype.kind in "fc":
        if check_floats and math.isfinite(value) and abs(value) > float(np.finfo(dtype).max):
            raise RuntimeError(f"{op}(): value {value} cannot be converted to type {dtype} without overflow")
        return value
    info = np.iinfo(dtype)
    low = -int(info.max) if dtype.kind == "u" and isinstance(value, int) else int(info.min)
    if not (math.isfinite(value) and low <= value <= info.max):  # (NaN fails the comparisons too)
        raise RuntimeError(f"{op}(): value {value} cannot be converted to type {dtype} without overflow")
    return int(value) % (int(info.max) + 1) if dtype.kind == "u" else int(value)


def _check_fits(value: float, dtype: np.dtype, op: str) -> None:
    """PyTorch's check that a number converts to an integer dtype without overflow."""
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise RuntimeError(f"{op}(): value {value} cannot be converted to type {dtype} without overflow")


def _cast_truncating(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    # An integer dtype truncates toward zero, as PyTorch's linspace(dtype=torch.int64) does.
    return (np.trunc(values) if dtype.kind in "iu" else values).astype(dtype)


def randint(*args: Any, generator: Generator | None = None, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
            **named: Any) -> Tensor:
    """Uniform integers in [low, high): `randint(high, size)` or `randint(low, high, size)`; int64.

    The arguments may be named, as in PyTorch: `randint(low=0, high=10, size=(3,))`."""
    unknown = set(named) - {"low", "high", "size"}
    if unknown:
        raise TypeError(f"randint() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    _options(layout, pin_memory, "randint")
    if named:
        names = ("low", "high", "size") if len(args) + len(named) == 3 else ("high", "size")
        given = dict(zip(names, args, strict=False))
        repeated = set(given) & set(named)
        if repeated:
            raise TypeError(f"randint() got multiple values for argument {sorted(repeated)[0]!r}")
        given.update(named)
        if set(given) != set(names):
            raise TypeError(f"randint() takes (high, size) or (low, high, size), got {sorted(given)}")
        args = tuple(given[name] for name in names)
    if len(args) == 2:
        low, (high, size) = 0, args
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError(f"randint() takes (high, size) or (low, high, size), got {len(args)} arguments")
    low, high = checks.as_int(low, "randint", "low"), checks.as_int(high, "randint", "high")
    if low >= high:
        raise RuntimeError(f"randint(): expects low < high, got low={low} >= high={high}")
    if not isinstance(size, Sequence):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    out_dtype = int64 if dtype is None else np.dtype(dtype)
    if out_dtype.kind in "iu" and not np.iinfo(out_dtype).min <= low < high <= np.iinfo(out_dtype).max + 1:
        raise RuntimeError(f"randint(): the range [{low}, {high}) is out of bounds for dtype {out_dtype}")
    shape = checks.sizes((size,), "randint")
    data = _stream(generator).integers(low, high, size=shape, dtype=np.int64)
    return _new(data.astype(int64 if dtype is None else np.dtype(dtype)), requires_grad, device, "randint")


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64 unless `dtype`)."""
    _options(layout, pin_memory, "randperm")
    n = checks.sizes((n,), "randperm")[0]
    dtype = int64 if dtype is None else np.dtype(dtype)
    if dtype.kind == "b":
        raise UnsupportedDtypeError("randperm(): not implemented for dtype bool")
    if n > 1 and dtype.kind in "iu":
        _check_fits(n - 1, dtype, "randperm")
    return _new(_stream(generator).permutation(n).astype(dtype), requires_grad, device, "randperm")


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, generator: Generator | None = None,
                 dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
                 pin_memory: bool = False, memory_format: memory_format = preserve_format) -> Tensor:
    """Uniform integers in [low, high) in input's shape, dtype and device: `randint_like(t, high)`
    or `randint_like(t, low, high)`."""
    if not isinstance(input, Tensor):
        raise checks.not_a_tensor(input, "randint_like")
    _options(layout, pin_memory, "randint_like")
    if high is None:
        low, high = 0, low
    out = randint(low, high, input.shape, generator=generator, dtype=input.dtype if dtype is None else dtype,
                  requires_grad=requires_grad, device=CPU)
    out._data = laid_out(out._data, input.data, check_memory_format(memory_format, "randint_like"))
    return _following(out, input.data) if device is None else _placed(out, device, "randint_like")


def normal(mean: Any = 0.0, std: Any = 1.0, size: Sequence[int] | None = None, *,
           generator: Generator | None = None, dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Samples from N(mean, std**2): `normal(mean, std, size)` with numbers, or `normal(means, stds)`
    with tensors (elementwise, broadcast), as PyTorch's `torch.normal`."""
    _options(layout, pin_memory, "normal")
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal(): with a number mean and std, give the size: normal(mean, std, size)")
        if std < 0:
            raise RuntimeError(f"normal(): expects std >= 0.0, got std={std}")
        if not isinstance(size, Sequence):
            raise TypeError(f"normal(): argument 'size' must be tuple of ints, not {type(size).__name__}")
        shape = checks.sizes((size,), "normal")
        _floating(dtype, "normal")
        data = _stream(generator).normal(mean, std, shape).astype(_creation_dtype(dtype))
        return _new(data, requires_grad, device, "normal")
    if size is not None:
        raise TypeError("normal(): size is taken from the tensor mean or std; don't give it")
    means, stds = (to_numpy(v.data) if isinstance(v, Tensor) else v for v in (mean, std))
    if np.any(np.asarray(stds) < 0):
        raise RuntimeError("normal(): expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(np.shape(means), np.shape(stds))
    out_dtype = np.result_type(*(t.dtype for t in tensors)) if dtype is None else np.dtype(dtype)
    if out_dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"normal(): not implemented for dtype {out_dtype}: it draws floats")
    data = (means + stds * _stream(generator).standard_normal(shape)).astype(out_dtype)
    out = new_leaf(data, requires_grad=requires_grad)
    return _following(out, tensors[0].data) if device is None else _placed(out, device, "normal")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False,  # noqa: A002
                generator: Generator | None = None) -> Tensor:
    """Sample indices from each row's categorical distribution (weights need not sum to 1); int64.

    Without replacement this is the Gumbel-top-k construction: add independent Gumbel noise to the
    log-weights and keep the `num_samples` largest, which is distributed as drawing one category
    after another without putting it back, in one vectorised step.
    """
    weights = to_numpy(input.data)  # sampled on the host (the same draws on every device), moved back
    num_samples = checks.as_int(num_samples, "multinomial", "num_samples")
    if weights.ndim not in (1, 2) or weights.dtype.kind != "f":
        raise RuntimeError(f"multinomial(): expects a 1-D or 2-D float tensor of weights, got shape "
                           f"{input.shape} and dtype {input.dtype}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("multinomial(): probability tensor contains either `inf`, `nan` or element < 0")
    if weights.shape[-1] == 0:
        raise RuntimeError(f"multinomial(): cannot sample from 0 categories (input of shape {input.shape})")
    rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)
    if np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError("multinomial(): invalid distribution: a row of weights sums to 0")
    if num_samples <= 0 or (not replacement and num_samples > rows.shape[1]):
        raise RuntimeError(f"multinomial(): cannot sample {num_samples} samples from {rows.shape[1]} "
                           f"categories {'with' if replacement else 'without'} replacement")
    rng = _stream(generator)
    if replacement:
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows.shape[0], num_samples))
        samples = (u[:, :, None] >= cdf[:, None, :]).sum(axis=2)
        samples = np.minimum(samples, rows.shape[1] - 1)
    else:
        with np.errstate(divide="ignore"):
            keys = np.log(rows) + rng.gumbel(size=rows.shape)
        samples = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    out = samples.astype(int64)
    return _following(new_leaf(out.reshape(num_samples) if weights.ndim == 1 else out), input.data)


def bernoulli(input: Tensor, p: float | None = None, generator: Generator | None = None) -> Tensor:  # noqa: A002
    """1 with probability `input` (or `p`) elementwise, else 0, in input's dtype; no gradient."""
    if not isinstance(input, Tensor):
        raise checks.not_a_tensor(input, "bernoulli")
    if input.dtype.kind == "c":  # (PyTorch has no complex draws, with or without p)
        raise UnsupportedDtypeError(f"bernoulli(): not implemented for dtype {input.dtype} (input of shape "
                                    f"{input.shape}): the probabilities and the result are real")
    if p is None and input.dtype.kind != "f":
        raise UnsupportedDtypeError(f"bernoulli(): not implemented for dtype {input.dtype}: the "
                                    "probabilities must be floating")
    probability = input.data if p is None else np.full_like(input.data, p)
    if np.any((probability < 0) | (probability > 1)):
        raise RuntimeError("bernoulli(): expects all probabilities to be in [0, 1]")
    draws = array_like(_stream(generator).random(input.shape), input.data) < probability
    return new_leaf(draws.astype(input.dtype if input.dtype.kind == "f" else dtypes.default_float))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill t in place with samples from N(mean, std**2); returns t."""
    if std < 0:
        raise RuntimeError(f"normal_(): expects std >= 0.0, got std={std}")
    return _fill_in_place(t, _stream(generator).normal(mean, std, t.shape), "normal_")


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill t in place with samples from U[a, b); returns t. (PyTorch's `from`, `to`.)"""
    if a > b:
        raise RuntimeError(f"uniform_(): expects from <= to, got from={a} > to={b}")
    return _fill_in_place(t, _stream(generator).uniform(a, b, t.shape), "uniform_")


def exponential_(t: Tensor, lambd: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill t in place with samples from the exponential distribution of rate `lambd`; returns t."""
    if lambd <= 0:
        raise RuntimeError(f"exponential_(): expects lambd > 0.0, got lambd={lambd}")
    return _fill_in_place(t, _stream(generator).exponential(1.0 / lambd, t.shape), "exponential_")


def random_(t: Tensor, low: int = 0, high: int | None = None, generator: Generator | None = None) -> Tensor:
    """Fill t in place with integers uniform in [low, high): `random_(high)`, `random_(low, high)`;
    with neither, up to the largest integer t's dtype holds exactly. Returns t."""
    if high is None and low != 0:
        low, high = 0, low
    if high is None:
        high = 2 ** (np.finfo(t.dtype).nmant + 1) + 1 if t.dtype.kind == "f" else \
            (2 if t.dtype.kind == "b" else int(np.iinfo(t.dtype).max) + 1)
    low, high = checks.as_int(low, "random_", "from"), checks.as_int(high, "random_", "to")
    if low >= high:
        raise RuntimeError(f"random_(): expects 'from' < 'to', got from={low} >= to={high}")
    return _fill_in_place(t, _stream(generator).integers(low, high, t.shape), "random_")


def _fill_in_place(t: Tensor, values: np.ndarray, name: str) -> Tensor:
    if grad_mode.enabled and t.requires_grad and t.is_leaf:
        raise RuntimeError(f"{name}: a leaf tensor that requires grad can't be changed in place outside "
                           "no_grad(); wrap the update in `with tg.no_grad():`")
    if not writeable(t.data):
        raise RuntimeError(f"{name}: this tensor is read-only (an expand/broadcast_to view); clone() it")
    t.data[...] = array_like(values, t.data)  # drawn on the host, written where t lives
    bump_version(t)
    return t


# --- torch.scalar_tensor, window functions, and Poisson and binomial sampling ----------------------


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A 0-d tensor holding the number `s`, in the default float dtype unless `dtype` says
    otherwise (also for an int or bool `s`, as `torch.scalar_tensor`)."""
    _options(layout, pin_memory, "scalar_tensor")
    if isinstance(s, Tensor | np.ndarray | np.generic) and np.ndim(s) == 0:
        s = s.item()
    if not isinstance(s, bool | int | float | complex):
        raise TypeError(f"scalar_tensor(): argument 's' must be a number, not {type(s).__name__}")
    dtype = _creation_dtype(dtype)
    s = checked_scalar(s, dtype, "scalar_tensor", check_floats=False)
    with np.errstate(over="ignore"):  # a float dtype overflows to inf, as PyTorch's
        return _new(np.asarray(s, dtype), requires_grad, device, "scalar_tensor")


def _window(op: str, window_length: int, periodic: bool, dtype: Any, requires_grad: bool, device: Any,
            values: Any, options: tuple[Any, bool]) -> Tensor:
    """A window of `window_length` samples: `values(k, m)` at k = 0 .. m-1 for a symmetric window of
    m points, where a periodic window (for spectral analysis) is the first n of n + 1 points.
    `options`: the factory's (layout, pin_memory)."""
    _options(*options, op)
    n = checks.as_int(window_length, op, "window_length")
    if n < 0:
        raise RuntimeError(f"{op}(): requires non-negative window_length, got window_length={n}")
    dtype = _creation_dtype(dtype)
    if dtype.kind != "f":
        raise RuntimeError(f"{op}(): expects floating point dtypes, got {dtype}")
    if n <= 1:  # PyTorch's: an empty window, or the single point 1
        data = np.ones(n)
    else:
        m = n + 1 if periodic else n
        data = values(np.arange(m, dtype=np.float64), m)[:n]
    return _new(data.astype(dtype), requires_grad, device, op)


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, requires_grad: bool = False,
                device: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The Hann window: 0.5 - 0.5 cos(2 pi k / (m - 1)) for k = 0 .. m-1 (periodic: m = n + 1, the
    last point dropped)."""
    return _window("hann_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: 0.5 - 0.5 * np.cos(2 * np.pi * k / (m - 1)),
                   (layout, pin_memory))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, requires_grad: bool = False, device: Any = None,
                   layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The generalised Hamming window: alpha - beta cos(2 pi k / (m - 1)) for k = 0 .. m-1
    (periodic: m = n + 1, the last point dropped)."""
    return _window("hamming_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: alpha - beta * np.cos(2 * np.pi * k / (m - 1)),
                   (layout, pin_memory))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    requires_grad: bool = False, device: Any = None,
                    layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The Blackman window: 0.42 - 0.5 cos(2 pi k / (m - 1)) + 0.08 cos(4 pi k / (m - 1)) for
    k = 0 .. m-1 (periodic: m = n + 1, the last point dropped)."""
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: 0.42 - 0.5 * np.cos(2 * np.pi * k / (m - 1))
                   + 0.08 * np.cos(4 * np.pi * k / (m - 1)),
                   (layout, pin_memory))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    requires_grad: bool = False, device: Any = None,
                    layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The Bartlett (triangular) window: 1 - |2k / (m - 1) - 1| for k = 0 .. m-1 (periodic:
    m = n + 1, the last point dropped)."""
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: 1 - np.abs(2 * k / (m - 1) - 1),
                   (layout, pin_memory))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  requires_grad: bool = False, device: Any = None,
                  layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The Kaiser window: I0(beta sqrt(1 - (2k / (m - 1) - 1)**2)) / I0(beta) for k = 0 .. m-1,
    I0 the modified Bessel function of order 0 (periodic: m = n + 1, the last point dropped)."""
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: np.i0(beta * np.sqrt(np.clip(1 - (2 * k / (m - 1) - 1) ** 2, 0, None)))
                   / np.i0(beta),
                   (layout, pin_memory))


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:  # noqa: A002 - PyTorch's name
    """Samples from Poisson(rate) for each element of `input` (the rates), in input's dtype.
    Derivative: 0 (a sample does not vary smoothly with its rate), as PyTorch defines it."""
    if not isinstance(input, Tensor):
        raise checks.not_a_tensor(input, "poisson")
    if input.dtype.kind != "f":
        raise UnsupportedDtypeError(f"poisson(): the rates must be a floating tensor, got {input.dtype}")
    rates = to_numpy(input.data)  # drawn on the host (the same draws on every device), moved back
    if np.any(rates < 0) or np.any(np.isnan(rates)):
        raise RuntimeError("poisson(): invalid Poisson rate, expected rate to be non-negative")
    draws = np.asarray(_stream(generator).poisson(rates.astype(np.float64))).astype(input.dtype)
    return record(array_like(draws, input.data), "poisson", (input,),
                  lambda grad: namespace(grad).zeros_like(grad), saved=())


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from Binomial(count, prob) elementwise (broadcasting), in count's floating dtype:
    the number of successes in `count` trials that each succeed with probability `prob`. No
    gradient."""
    if count.dtype.kind != "f":
        raise ValueError(f"binomial(): only floating-point dtypes are supported for count, got {count.dtype}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"binomial(): count and prob must have one dtype, got {count.dtype} and "
                           f"{prob.dtype}")
    trials, chance = to_numpy(count.data), to_numpy(prob.data)  # drawn on the host, as `poisson`
    try:
        shape = np.broadcast_shapes(trials.shape, chance.shape)
    except ValueError:
        raise ShapeError(f"binomial(): count of shape {count.shape} and prob of shape {prob.shape} can't be "
                         "broadcast together") from None
    if not np.all((chance >= 0) & (chance <= 1)) or not np.all(trials >= 0):
        raise RuntimeError("binomial(): expects every prob in [0, 1] and every count >= 0")
    draws = _stream(generator).binomial(np.broadcast_to(trials, shape).astype(np.int64),
                                        np.broadcast_to(chance, shape))
    return _following(new_leaf(draws.astype(count.dtype)), count.data)
