"""Devices: where a tensor's array lives, `"cpu"` (numpy) or `"cuda"` (CuPy), as `torch.device`.

The one module that knows about CuPy: it is imported only when a tensor is asked to go to
`"cuda"`, so the CPU path never pays for it, and without CuPy that request is a clear error.
A tensor's device is read from its array's type: a numpy array is on the CPU.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

__all__ = ["device", "as_device", "array_namespace", "to_device", "cuda_available"]

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


CPU = device("cpu")


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


def array_namespace(array: Any) -> Any:
    """The module whose functions make arrays like `array`: numpy, or CuPy for a GPU array."""
    return np if isinstance(array, np.ndarray) else _cupy("array_namespace")


def device_of(array: Any) -> device:
    """The device an array lives on."""
    if isinstance(array, np.ndarray | np.generic):
        return CPU
    return device("cuda", int(array.device.id))


def to_device(array: Any, target: device, purpose: str) -> Any:
    """`array` on `target`: itself if it is there already, else a copy there."""
    if target.type == "cpu":
        return array if isinstance(array, np.ndarray) else _cupy(purpose).asnumpy(array)
    cupy = _cupy(purpose)
    with cupy.cuda.Device(target.index or 0):
        return cupy.asarray(array)
