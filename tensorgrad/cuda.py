"""`tg.cuda`: whether the GPU path can run, and waiting for it (PyTorch's `torch.cuda` basics)."""

from __future__ import annotations

import importlib

from tensorgrad.device import cuda_available

__all__ = ["is_available", "device_count", "synchronize"]


def is_available() -> bool:
    """True when CuPy is installed and sees a GPU, so `device="cuda"` works."""
    return cuda_available()


def device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy)."""
    if not cuda_available():
        return 0
    return int(importlib.import_module("cupy").cuda.runtime.getDeviceCount())


def synchronize() -> None:
    """Wait until the GPU has finished the work queued so far (a no-op without a GPU)."""
    if cuda_available():
        importlib.import_module("cupy").cuda.Device().synchronize()
