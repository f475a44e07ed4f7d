"""Tensors from other libraries' memory, and PyTorch's global switches that concern it.

`asarray`, `from_dlpack` and `frombuffer` wrap memory that already exists (a numpy or CuPy
array, another library's tensor, a `bytearray`) without copying it where they can, as PyTorch's
do; `empty_strided` makes a tensor of chosen strides. DLPack is the array libraries' common
exchange format: `tg.from_dlpack(torch_tensor)` and `torch.from_dlpack(tg_tensor)` share one
buffer, read through numpy's (host) or CuPy's (GPU) `from_dlpack`, picked in
`tensorgrad.device`. Creation is tutorial chapter 6; this module adds no op to the graph.

The deterministic-algorithms switches are kept and reported as PyTorch's are: tensorgrad's
algorithms are deterministic whatever they say.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad import checks, creation, dtypes, layouts
from tensorgrad.device import as_device, is_array, strided_view
from tensorgrad.device import from_dlpack as array_from_dlpack
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["asarray", "from_dlpack", "to_dlpack", "frombuffer", "empty_strided",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled"]


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """`obj` as a tensor, sharing its memory where it can, as `torch.asarray`.

    A tensor, a numpy or CuPy array, or an object with `__dlpack__` (another library's tensor)
    is shared when `dtype` and `device` match it (or are None) and `copy` is not True; a tensor
    is then returned itself. A buffer (`bytes`, `bytearray`) is read as `frombuffer` does, in
    `dtype` or the default float. Numbers and sequences are always copied, as `tg.tensor`.
    `copy=False` where a copy is needed raises ValueError. `requires_grad=None` keeps a tensor's
    own flag and history (False for everything else); True or False sets the flag, on the tensor
    itself where it is returned itself (PyTorch's rule).
    """
    if isinstance(obj, Tensor):
        return _from_tensor(obj, dtype, device, copy, requires_grad)
    if not _is_shareable(obj):
        if isinstance(obj, bytes | bytearray | memoryview):
            out = frombuffer(obj, dtype=dtypes.or_default(dtype))
            if copy:
                out = new_leaf(out.data.copy())
            return _placed(out, device, copy, requires_grad)
        if copy is False:
            raise ValueError("asarray: can't alias arbitrary sequence into a tensor (copy=False), got "
                             f"{type(obj).__name__}")
        return creation.tensor(obj, dtype=dtype, device=device, requires_grad=bool(requires_grad))
    array = obj if _is_array(obj) else array_from_dlpack(obj)
    if isinstance(array, np.generic):
        array = np.asarray(array)
    return _from_tensor(new_leaf(array), dtype, device, copy, requires_grad)


def _is_array(obj: Any) -> bool:
    return is_array(obj) or isinstance(obj, np.generic)


def _is_shareable(obj: Any) -> bool:
    """Whether `obj` holds memory a tensor can share: an array, or an object that exports DLPack."""
    return _is_array(obj) or hasattr(obj, "__dlpack__")


def _from_tensor(x: Tensor, dtype: Any, place: Any, copy: bool | None, requires_grad: bool | None) -> Tensor:
    """asarray of a tensor: x itself where nothing changes, else a conversion or a copy."""
    target_dtype = x.dtype if dtype is None else np.dtype(dtype)
    target = x.device if place is None else as_device(place)
    converts = target_dtype != x.dtype or target != x.device
    if converts and copy is False:
        what = (f"with dtype {x.dtype} into dtype {target_dtype}" if target_dtype != x.dtype
                else f"on {x.device} into a tensor on {target}")
        raise ValueError(f"asarray: can't alias tensor {what} (copy=False)")
    if not converts and not copy:
        if requires_grad is None or bool(requires_grad) == x.requires_grad:
            return x
        if requires_grad or x.is_leaf:
            return x.requires_grad_(bool(requires_grad))  # (PyTorch sets the flag on obj itself)
        return x.detach()
    out = x.to(device=target, dtype=target_dtype) if converts else x.clone()
    if out is x:
        out = x.clone()
    if requires_grad is False:
        out = out.detach()
    elif requires_grad and not out.requires_grad:
        out.requires_grad_(True)
    return out


def _placed(out: Tensor, place: Any, copy: bool | None, requires_grad: bool | None) -> Tensor:
    """A buffer's tensor on `place` (a move is a copy), requiring grad if asked."""
    if place is not None and as_device(place) != out.device:
        if copy is False:
            raise ValueError("asarray: can't alias a buffer on cpu into a tensor on "
                             f"{as_device(place)} (copy=False)")
        out = out.to(device=place)
    return out.requires_grad_(True) if requires_grad else out


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing the memory of `ext_tensor`, any object with `__dlpack__` (a torch tensor,
    a numpy or CuPy array, a tensorgrad tensor) or a DLPack capsule from `to_dlpack`. Zero copy
    unless `copy=True`, or `device` names another device (then a copy there)."""
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ (a tensor or an array) or a DLPack "
                        f"capsule, got {type(ext_tensor).__name__}")
    out = new_leaf(array_from_dlpack(ext_tensor, copy=copy))
    if device is not None and as_device(device) != out.device:
        if copy is False:
            raise BufferError(f"from_dlpack: can't share memory on {out.device} with a tensor on {device} "
                              "(copy=False)")
        out = out.to(device=device)
    return out


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of `tensor`'s memory (PyTorch's older interface: `from_dlpack` takes it,
    once). Tensors that require grad are refused, as in PyTorch: detach() them first."""
    return tensor.__dlpack__()


class _Capsule:
    """A bare DLPack capsule as an object numpy's and CuPy's `from_dlpack` take: the capsule says
    which device its memory is on (read from the DLTensor it points to)."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        import ctypes

        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        name = get_name(self.capsule)
        if name not in (b"dltensor", b"dltensor_versioned"):
            raise BufferError(f"from_dlpack: the capsule was used already, or is not a DLPack one ({name!r})")
        pointer = get_pointer(self.capsule, name)
        # DLManagedTensor starts with its DLTensor (a data pointer, then the device's type and index);
        # the versioned form puts a version, a context, a deleter and flags before it.
        start = 0 if name == b"dltensor" else 8 + 3 * ctypes.sizeof(ctypes.c_void_p) + 8
        kind, index = (ctypes.c_int32 * 2).from_address(pointer + start + ctypes.sizeof(ctypes.c_void_p))
        return kind, index


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over `buffer`'s bytes (an object with Python's buffer protocol), `count`
    elements of `dtype` (all, for -1) from byte `offset` on; it shares the buffer's memory, as
    `torch.frombuffer`. A read-only buffer (`bytes`) gives a read-only tensor."""
    dtype = np.dtype(dtype)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError(f"frombuffer: object does not implement Python buffer protocol, got "
                         f"{type(buffer).__name__}") from None
    length = view.nbytes
    count, offset = checks.as_int(count, "frombuffer", "count"), checks.as_int(offset, "frombuffer", "offset")
    if length == 0 or count == 0:
        raise ValueError(f"frombuffer: both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"frombuffer: offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % dtype.itemsize:
            raise ValueError(f"frombuffer: buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({dtype.itemsize})")
        count = (length - offset) // dtype.itemsize
    elif offset + count * dtype.itemsize > length:
        raise ValueError(f"frombuffer: requested buffer length ({count} * {dtype.itemsize} bytes) after "
                         f"offset ({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    data = np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    return new_leaf(data).requires_grad_(requires_grad) if requires_grad else new_leaf(data)


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of shape `size` whose elements sit `stride` elements apart, in
    one buffer just big enough (`torch.empty_strided`; stride 0 repeats an element). `layout` may
    only be `tg.strided` and `pin_memory` only False without a GPU, as every factory's."""
    layouts.check_layout(layout, "empty_strided")
    layouts.check_pin_memory(pin_memory, "empty_strided")
    shape, steps, extent = checks.strided_layout(size, stride, "empty_strided")
    dtype = dtypes.or_default(dtype)
    storage = creation.empty(extent, dtype=dtype, device=device).data
    data = strided_view(storage, shape, tuple(s * dtype.itemsize for s in steps))
    return new_leaf(data).requires_grad_(requires_grad) if requires_grad else new_leaf(data)


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised, dense tensor of shape `size` whose dimensions lie in memory in the order
    `physical_layout` gives, outermost first (`torch.empty_permuted`): (0, 2, 3, 1) is NHWC for an
    NCHW shape. The tensor's strides are then the row-major strides of the permuted shape, put
    back in logical order."""
    layouts.check_layout(layout, "empty_permuted")
    layouts.check_pin_memory(pin_memory, "empty_permuted")
    shape = checks.sizes(tuple(size), "empty_permuted")
    order = [checks.as_int(d, "empty_permuted", "physical_layout") for d in physical_layout]
    if sorted(order) != list(range(len(shape))):
        raise RuntimeError(f"empty_permuted: physical_layout {tuple(order)} must be a permutation of the "
                           f"{len(shape)} dimensions of size {shape}")
    physical_shape = tuple(shape[d] for d in order)
    physical = creation.empty(physical_shape, dtype=dtypes.or_default(dtype), device=device).data
    # logical dimension d is physical dimension order.index(d)
    data = physical.transpose(tuple(order.index(d) for d in range(len(order))))
    return new_leaf(data).requires_grad_(requires_grad) if requires_grad else new_leaf(data)


# --- deterministic algorithms: a flag kept for PyTorch code, as tensorgrad's are all deterministic ----

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (`torch.use_deterministic_algorithms`). tensorgrad's
    algorithms are deterministic already (the same inputs give the same bits on a device), so
    the flag changes no computation: it is kept and reported, for code that sets and reads it."""
    if not isinstance(mode, bool | int):
        raise TypeError("use_deterministic_algorithms(): argument 'mode' must be bool, not "
                        f"{type(mode).__name__}")
    _deterministic["mode"], _deterministic["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether `use_deterministic_algorithms(True)` was asked for (tensorgrad's algorithms are
    deterministic either way)."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether `use_deterministic_algorithms(..., warn_only=True)` was asked for (tensorgrad never
    needs to warn: its algorithms are deterministic)."""
    return _deterministic["warn_only"]
