"""Devices: where a tensor's array lives, `"cpu"` (numpy) or `"cuda"` (CuPy), as `torch.device`.

The one module that knows about CuPy: it is imported only when a tensor is asked to go to
`"cuda"`, so the CPU path never pays for it, and without CuPy that request is a clear error.
A tensor's device is read from its array's type: a numpy array is on the CPU.

The ops never import CuPy. Most of their array calls need nothing from here: numpy hands a
CuPy array to CuPy by itself (`np.exp(a)`, `a.sum()`, `np.zeros_like(a)`, `np.concatenate`).
Where numpy's dispatch does not reach (a new array from a shape, stride tricks, moving to the
host), an op asks `namespace(array)` for the module that makes arrays of that kind and calls it
by numpy's name: `namespace(x).zeros(shape, dtype)`, `namespace(x).einsum(...)`. CuPy spells all
of these as numpy does. Two ufunc methods CuPy has only in part go through helpers here:
`ufunc_at` (scatters such as `np.add.at`: CuPy has no `multiply.at`, and its atomics skip some
dtypes) and `accumulate` (running extremes: CuPy accumulates only add and multiply); where the
GPU module refuses, both fall back to a log-step scan that any array module can run.
`register_namespace` adds a third kind of array; the tests use it to run every op on a stand-in
for CuPy's arrays, with CuPy's gaps, without a GPU.

Host data reaches an op's arrays through `array_like(values, like)` (random numbers drawn on the
CPU, index arrays from Python lists, the gradient given to `backward`), and leaves them through
`to_numpy`. `writeable` and `data_address` read what numpy keeps in `flags` and
`__array_interface__`, which a CuPy array spells differently or not at all.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided as _numpy_as_strided

__all__ = ["device", "as_device", "namespace", "register_namespace", "is_array", "to_numpy",
           "array_like", "strided_view", "ufunc_at", "accumulate", "writeable", "data_address",
           "device_of", "to_device", "cuda_available", "from_dlpack", "set_default_device",
           "get_default_device", "default_device", "refuse_mixed_devices"]

_TYPES = ("cpu", "cuda")


class device:  # noqa: N801 - PyTorch's lower-case name
    """A device: `tg.device("cpu")`, `tg.device("cuda")`, `tg.device("cuda", 1)` or `"cuda:1"`."""

    __slots__ = ("type", "index")

    def __init__(self, spec: Any, index: int | None = None) -> None:
        if isinstance(spec, device):
            spec, index = spec.type, spec.index if index is None else index
        if not isinstance(spec, str):
            raise TypeError(f"device: expected a string such as 'cpu' or 'cuda', got {type(spec).__name__}")
        kind, _, number = spec.partition(":")
        if kind not in _TYPES:
            raise RuntimeError(f"device: expected one of {', '.join(_TYPES)} at the start of the device "
                               f"string, got {spec!r}")
        if number:
            if index is not None or not number.isdigit():
                raise RuntimeError(f"device: invalid device string {spec!r}")
            index = int(number)
        if kind == "cpu" and index not in (None, 0):
            raise RuntimeError(f"device: the CPU has no index {index}")
        self.type, self.index = kind, index

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{index})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        """`with tg.device("cuda"):` makes the factories (`tensor`, `zeros`, `randn`, modules'
        parameters...) create on this device inside the block, as PyTorch's does."""
        _default.entered.append(_default.device)
        _default.device = self
        return self

    def __exit__(self, *exc_info: Any) -> None:
        _default.device = _default.entered.pop()


CPU = device("cpu")


class _DefaultDevice(threading.local):
    """Where the factories create a tensor not given `device=`: None for the CPU. Per thread, as
    PyTorch's default device is; `entered` holds what each open `with device(...)` replaced."""

    device: device | None = None

    def __init__(self) -> None:
        self.entered: list[device | None] = []


_default = _DefaultDevice()


def set_default_device(spec: Any) -> None:
    """Create tensors on `spec` ("cpu", "cuda", a device; None: the CPU) wherever a factory is not
    given `device=`, in this thread, as `torch.set_default_device`. Ops, `from_numpy` and the
    `*_like` forms are not affected: their results live where their inputs do."""
    _default.device = None if spec is None else device(spec)


def get_default_device() -> device:
    """The device the factories create on when not given `device=` (the CPU unless set)."""
    return _default.device or CPU


def default_device() -> device | None:
    """The default device set by `set_default_device` or `with device(...)`, or None (the CPU)."""
    return _default.device


def as_device(spec: Any) -> device:
    """`spec` (a string, a device or None for the CPU) as a device."""
    return CPU if spec is None else device(spec)


def _cupy(purpose: str) -> Any:
    try:
        return importlib.import_module("cupy")
    except ImportError:
        raise RuntimeError(
            f"{purpose}: device 'cuda' needs CuPy and an NVIDIA GPU; CuPy is not installed "
            "(pip install cupy-cuda12x, matching your CUDA version), so tensors stay on 'cpu'"
        ) from None


def cuda_available() -> bool:
    """Whether CuPy is installed and sees at least one GPU."""
    try:
        cupy = importlib.import_module("cupy")
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver or no GPU: all mean "not available"
        return False


# Array types other than numpy's and the module that makes each (CuPy's is added when first seen).
_namespaces: dict[type, Any] = {}


def register_namespace(array_type: type, module: Any) -> None:
    """Let tensors hold arrays of `array_type`, made and moved by `module` (numpy's API, plus
    `asnumpy(array)` to copy one to the host, as CuPy has)."""
    _namespaces[array_type] = module


def namespace(array: Any) -> Any:
    """The module whose functions make arrays like `array`: numpy, or CuPy for a GPU array."""
    kind = type(array)
    if kind is np.ndarray:  # the CPU: first, and nothing else to look at
        return np
    module = _namespaces.get(kind)
    if module is not None:
        return module
    if _is_cupy_type(kind):
        cupy = _cupy("namespace")
        register_namespace(kind, cupy)
        return cupy
    return np  # numpy scalars and numpy subclasses


def is_array(value: Any) -> bool:
    """Whether `value` is an array a tensor can hold: numpy's, or one of a registered kind."""
    return isinstance(value, np.ndarray) or type(value) in _namespaces or (
        _is_cupy_type(type(value)) and hasattr(value, "__cuda_array_interface__"))


def _is_cupy_type(kind: type) -> bool:
    """Whether a type comes from CuPy (asked without importing CuPy)."""
    return kind.__module__.partition(".")[0] == "cupy"


def to_numpy(array: Any) -> np.ndarray:
    """`array` as a numpy array: itself on the CPU, a copy from a GPU's memory otherwise."""
    if type(array) is np.ndarray:
        return array
    module = namespace(array)
    return np.asarray(array) if module is np else module.asnumpy(array)


def array_like(values: Any, like: Any, dtype: Any = None) -> Any:
    """`values` (an array of any kind, a list or a number) as an array of `like`'s kind, on
    like's device, in `dtype` if given: `values` itself when it is one already, else a copy.

    How host data reaches an op's arrays: random numbers drawn on the CPU, index and mask
    arrays built from Python lists, a gradient given to `backward`.
    """
    if type(like) is np.ndarray:  # the CPU: numpy's own conversion, from the host if need be
        if type(values) is not np.ndarray and is_array(values):
            values = to_numpy(values)
        return np.asarray(values, dtype)
    module = namespace(like)
    if type(values) is type(like) and (dtype is None or values.dtype == dtype) and (
            getattr(values, "device", None) == getattr(like, "device", None)):
        return values
    if is_array(values) and namespace(values) is not module:
        values = to_numpy(values)  # another kind of array (numpy's, or a GPU's): through the host
    place = getattr(like, "device", None)  # a CuPy array's GPU, made current while copying there
    with place if hasattr(place, "__enter__") else contextlib.nullcontext():
        return module.asarray(values, dtype)


def strided_view(array: Any, shape: Sequence[int], strides: Sequence[int], read_only: bool = False) -> Any:
    """A view of `array`'s memory with the given shape and strides (in bytes): numpy's or the GPU
    module's `as_strided`. `read_only` marks a numpy view read-only (windows, expand); a GPU
    array has no such flag, and `writeable` reads its stride 0 instead."""
    if type(array) is np.ndarray:
        return _numpy_as_strided(array, shape, strides, writeable=not read_only)
    return namespace(array).lib.stride_tricks.as_strided(array, shape, strides)


def ufunc_at(ufunc: np.ufunc, target: Any, index: Any, values: Any) -> None:
    """`ufunc.at(target, index, values)`: combine `values` into `target[index]` in place, a place
    named several times getting each of its values in turn (`np.add.at` is a scatter-add).

    numpy's own on the CPU. On a GPU, its module's `ufunc.at` where that has one for this ufunc
    and target dtype (CuPy's atomic scatters: add, maximum, minimum and a few more, not multiply,
    and no add into bool, int8, int16 or complex arrays); else `_scatter_by_segments`.
    """
    if type(target) is np.ndarray:
        ufunc.at(target, index, values)
        return
    try:
        getattr(namespace(target), ufunc.__name__).at(target, index, values)
    except (NotImplementedError, TypeError):  # CuPy's answers for a ufunc or dtype it lacks
        _scatter_by_segments(ufunc, target, index, values)


def _scatter_by_segments(ufunc: np.ufunc, target: Any, index: Any, values: Any) -> None:
    """`ufunc.at` from whole-array operations: sort the written places, combine each place's
    values with a segmented log-step scan, then combine each total with the target once.

    log2(n) steps for n values however often a place repeats. The values are combined as a tree
    rather than one after another, which for floats can round differently in the last bit.
    """
    xp = namespace(target)
    picked = xp.arange(target.size).reshape(target.shape)[index]  # each written place, by numpy's rules
    if picked.size == 0:
        return
    values = xp.broadcast_to(array_like(values, target, target.dtype), picked.shape).reshape(-1)
    places = picked.reshape(-1)
    order = xp.argsort(places, kind="stable")  # stable: a place's values keep their order
    places, values = places[order], values[order]
    totals = _log_step_scan(ufunc, values, 0, segments=places)
    last = xp.concatenate((places[1:] != places[:-1], xp.ones(1, dtype=bool)))  # a place's last value
    places, totals = places[last], totals[last]
    work = target if target.flags.c_contiguous else xp.ascontiguousarray(target)
    flat = work.reshape(-1)
    flat[places] = ufunc(flat[places], totals)
    if work is not target:
        target[...] = work


def accumulate(ufunc: np.ufunc, array: Any, axis: int) -> Any:
    """`ufunc.accumulate(array, axis=axis)`: the running combination along `axis` (for
    `np.maximum`, the running maximum). numpy's own on the CPU, the GPU module's where it has one
    (CuPy: add and multiply), else `_log_step_scan`."""
    if type(array) is np.ndarray:
        return ufunc.accumulate(array, axis=axis)
    try:
        return ufunc.accumulate(array, axis=axis)
    except NotImplementedError:  # CuPy's answer for maximum, minimum, logaddexp
        return _log_step_scan(ufunc, array, axis)


def _log_step_scan(ufunc: np.ufunc, array: Any, axis: int, segments: Any = None) -> Any:
    """The inclusive scan of `array` along `axis` with the associative `ufunc`, by doubling
    (Hillis and Steele): after the step with shift s each element combines the 2s elements that
    end at it. log2(n) whole-array steps where a loop takes n, each one kernel on a GPU.

    With `segments` (1-D, sorted, one label per element), a scan restarts at each new label.
    """
    xp = namespace(array)
    out = xp.moveaxis(array, axis, -1).copy()  # a new array, as accumulate's, even when n < 2
    length, shift = out.shape[-1], 1
    while shift < length:
        earlier, later = out[..., :-shift], out[..., shift:]
        combined = ufunc(earlier, later)  # earlier first: the order accumulate combines in
        if segments is not None:
            combined = xp.where(segments[:-shift] == segments[shift:], combined, later)
        out = xp.concatenate((out[..., :shift], combined.astype(out.dtype, copy=False)), axis=-1)
        shift *= 2
    return xp.moveaxis(out, -1, axis)


def writeable(array: Any) -> bool:
    """Whether an op may write into `array`: numpy's flag (an expand view is read-only). CuPy's
    arrays carry no such flag, so for them a view with a stride-0 dimension (an expand, where
    elements share memory) counts as read-only."""
    if type(array) is np.ndarray:
        return bool(array.flags.writeable)
    return getattr(array.flags, "writeable", True) and all(
        step != 0 or size <= 1 for step, size in zip(array.strides, array.shape, strict=True))


def data_address(array: Any) -> int:
    """The memory address of an array's first element (in the GPU's memory for a CuPy array)."""
    interface = getattr(array, "__array_interface__", None) or array.__cuda_array_interface__
    return interface["data"][0]


def from_dlpack(ext: Any, copy: bool | None = None) -> Any:
    """The array that `ext` (any object with `__dlpack__`) exports, by the module of its device:
    numpy's `from_dlpack` for host memory, CuPy's for a GPU's (imported only then). Shares
    `ext`'s memory unless `copy` is True."""
    kind, _ = ext.__dlpack_device__()
    if int(kind) == _DLPACK_CPU:
        return np.from_dlpack(ext, copy=copy)
    if int(kind) not in _DLPACK_CUDA:
        raise BufferError(f"from_dlpack: DLPack device type {int(kind)} is neither the CPU nor a CUDA GPU")
    cupy = _cupy("from_dlpack")
    # (CuPy before 13 has no `copy` keyword: pass it only when asked)
    return cupy.from_dlpack(ext) if copy is None else cupy.from_dlpack(ext, copy=copy)


# DLPack's device types: kDLCPU, and kDLCUDA with its host-pinned and managed memory.
_DLPACK_CPU, _DLPACK_CUDA = 1, (2, 3, 13)


def device_of(array: Any) -> device:
    """The device an array lives on."""
    if isinstance(array, np.ndarray | np.generic) or not hasattr(array, "device"):
        return CPU
    return device("cuda", int(array.device.id))


def refuse_mixed_devices(op: str, *operands: tuple[Any, str]) -> None:
    """Raise PyTorch's RuntimeError if the (tensor, argument name) pairs of one op are on two
    devices, naming the op, each argument, its device and its shape; return if they agree.

    The ops call it where an array call raised a TypeError (CuPy refuses a numpy operand, numpy
    a CuPy one), so a call whose tensors are on one device pays nothing for the check."""
    placed = [(t.device, name, tuple(t.shape)) for t, name in operands if t is not None]
    devices = list(dict.fromkeys(where for where, _, _ in placed))
    if len(devices) > 1:
        each = ", ".join(f"{name} on {where} with shape {shape}" for where, name, shape in placed)
        raise RuntimeError(f"{op}: Expected all tensors to be on the same device, but found at least two "
                           f"devices, {devices[0]} and {devices[1]}! ({each})") from None


def to_device(array: Any, target: device, purpose: str) -> Any:
    """`array` on `target`: itself if it is there already, else a copy there."""
    if target.type == "cpu":
        return array if isinstance(array, np.ndarray) else to_numpy(array)
    cupy = _cupy(purpose)
    with cupy.cuda.Device(target.index or 0):
        return cupy.asarray(array)
