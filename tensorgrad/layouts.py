"""`tg.layout` and `tg.strided`: how a tensor's elements are organised, PyTorch's `torch.layout`.

Every tensorgrad tensor is dense and strided (a numpy or CuPy array), so `strided` is the one
layout; it exists so that code which checks `t.layout == torch.strided`, or passes
`layout=torch.strided` to a factory, runs unchanged. Sparse layouts have no meaning here.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

__all__ = ["layout", "strided", "check_layout", "check_pin_memory", "dim_order", "is_set_to"]


class layout:  # noqa: N801 - PyTorch's name
    """The type of `tg.strided` (dense elements at regular strides in one storage)."""

    _made = False

    def __init__(self, name: str) -> None:
        if layout._made:  # as PyTorch: the one instance is the module's `strided`
            raise TypeError("cannot create 'tensorgrad.layout' instances")
        layout._made = True
        self._name = name

    def __repr__(self) -> str:
        return f"tensorgrad.{self._name}"

    def __reduce__(self) -> str:
        return self._name  # pickled as the module's one object of that name


strided = layout("strided")


def check_layout(value: Any, op: str) -> None:
    """A factory's `layout=` keyword: None or `tg.strided` (TypeError for anything else, as
    PyTorch for a non-layout; a sparse layout does not exist here)."""
    if value is not None and value is not strided:
        raise TypeError(f"{op}(): argument 'layout' must be tensorgrad.layout (tensorgrad.strided, the only "
                        f"layout), not {type(value).__name__}")


def check_pin_memory(value: Any, op: str, *, strict: bool = False) -> None:
    """A factory's `pin_memory=` keyword: False (or None) is accepted, and True where a GPU is (a
    hint for faster copies to it, which tensorgrad's CuPy copies do without); without one, True is
    PyTorch's RuntimeError. `strict`: only a bool will do (`torch.tensor`'s TypeError otherwise)."""
    if strict and not isinstance(value, bool):
        raise TypeError(f"{op}(): argument 'pin_memory' must be bool, not {type(value).__name__}")
    if value:
        from tensorgrad import cuda  # here: the device module is not needed to import this one

        if not cuda.is_available():
            raise RuntimeError(f"{op}(): pin_memory=True requires a CUDA or other accelerator backend; no "
                               "pinned memory allocator is available to tensorgrad")


def dim_order(t: Any, ambiguity_check: Any = False) -> tuple[int, ...]:
    """`Tensor.dim_order()`: t's dimensions from the outermost in memory to the innermost, as
    PyTorch 2.13 computes it (row-major and channels-last tensors by their contiguity, others by
    their strides). `ambiguity_check=True` raises RuntimeError where more than one order fits (a
    size-1 dimension, two equal strides); a list of memory formats allows that where t is laid out
    in exactly one of them."""
    from tensorgrad import creation  # here: creation imports the tensor module, which imports this one

    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    if not isinstance(ambiguity_check, bool | list) or \
            not all(isinstance(f, creation.memory_format) for f in formats):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides = t.shape, t.stride()
    several = any(a == b for a, b in pairwise(strides)) or 1 in shape
    if (ambiguity_check is not False and several
            and sum(t.is_contiguous(memory_format=f) for f in formats) != 1):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the "
                           "given memory formats.")
    if t.ndim < 2:
        return tuple(range(t.ndim))
    row_major, channels_last = t.is_contiguous(), t.is_contiguous(memory_format=creation.channels_last)
    if row_major != channels_last:  # PyTorch's fast path: one of the two layouts, no ambiguity
        return tuple(range(t.ndim)) if row_major else (0, *range(2, t.ndim), 1)
    perm = _sorted_dims(shape, strides)
    if ambiguity_check and any(_compare(shape, strides, a, b) != -1 for a, b in pairwise(perm)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


def _sorted_dims(shape: tuple[int, ...], strides: tuple[int, ...]) -> list[int]:
    """The dimensions from the innermost to the outermost, by `_compare`."""
    return innermost_first(len(shape), lambda a, b: _compare(shape, strides, a, b))


def innermost_first(ndim: int, compare: Callable[[int, int], int]) -> list[int]:
    """The dimensions ordered from the innermost to the outermost by PyTorch's insertion sort:
    starting from the last dimension, each moves outwards past those `compare` ranks above it
    (> 0), stops at one it ranks below (< 0), and steps over those it can't compare (0: a stride
    0, equal strides and sizes), which so stay where they are."""
    dims = list(reversed(range(ndim)))
    for i in range(1, ndim):
        moving = i
        for before in reversed(range(i)):
            order = compare(dims[before], dims[moving])
            if order > 0:
                dims[before], dims[moving] = dims[moving], dims[before]
                moving = before
            elif order < 0:
                break
    return dims


def _compare(shape: tuple[int, ...], strides: tuple[int, ...], a: int, b: int) -> int:
    """1 where dimension a sits outside b in memory, -1 inside, 0 where the strides can't tell
    (PyTorch's `should_swap`, for one tensor)."""
    def at_least(x: int, y: int) -> bool:
        return y == 0 or (x != 0 and (x >= y or x % y == 0))

    if strides[a] == 0 or strides[b] == 0:
        return 0
    if strides[a] == strides[b]:
        return 0 if at_least(shape[b], shape[a]) else 1
    return -1 if at_least(strides[b], strides[a]) else 1


def is_set_to(t: Any, other: Any) -> bool:
    """`Tensor.is_set_to(other)`: whether the two tensors view the same memory the same way (one
    storage, and the same offset, sizes and strides in elements)."""
    from tensorgrad.device import data_address
    from tensorgrad.tensor import Tensor

    if not isinstance(other, Tensor):
        raise TypeError("is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return (_owner(t.data) is _owner(other.data) and t.shape == other.shape and t.stride() == other.stride()
            and t.storage_offset() == other.storage_offset()
            and data_address(t.data) == data_address(other.data))


def _owner(array: Any) -> Any:
    """The array that owns `array`'s memory (the end of its chain of views)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array
