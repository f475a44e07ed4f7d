"""`tg.cuda`: whether the GPU path can run, waiting for it, and PyTorch's `torch.cuda` basics.

Random numbers for every device come from one generator, on the CPU (see `tensorgrad.creation`),
so `manual_seed`/`manual_seed_all` seed that generator where a GPU is available; without one
they do nothing, as PyTorch's are "silently ignored" there. The queries that need a GPU raise
AssertionError without one, PyTorch's type.
"""

from __future__ import annotations

import importlib
from typing import Any

from tensorgrad.device import as_device, cuda_available

__all__ = ["is_available", "device_count", "synchronize", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "current_device", "get_device_name", "empty_cache", "memory_allocated",
           "memory_reserved", "amp"]


def is_available() -> bool:
    """True when CuPy is installed and sees a GPU, so `device="cuda"` works."""
    return cuda_available()


def device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy)."""
    if not cuda_available():
        return 0
    return int(_cupy().cuda.runtime.getDeviceCount())


def synchronize() -> None:
    """Wait until the GPU has finished the work queued so far (a no-op without a GPU)."""
    if cuda_available():
        _cupy().cuda.Device().synchronize()


def manual_seed(seed: int) -> None:
    """Seed the random numbers drawn for the GPU (the one generator; nothing without a GPU)."""
    if cuda_available():
        from tensorgrad import creation

        creation.manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """`manual_seed` for every GPU: they share the one generator."""
    manual_seed(seed)


def seed() -> None:
    """Seed the GPU's random numbers from the operating system (nothing without a GPU)."""
    if cuda_available():
        from tensorgrad import creation

        creation.seed()


def seed_all() -> None:
    """`seed` for every GPU: they share the one generator."""
    seed()


def initial_seed() -> Any:
    """The seed of the GPU's random numbers (the one generator's)."""
    _require_gpu("initial_seed")
    from tensorgrad import creation

    return creation.initial_seed()


def current_device() -> int:
    """The index of the GPU that CuPy uses now."""
    _require_gpu("current_device")
    return int(_cupy().cuda.Device().id)


def get_device_name(device: Any = None) -> str:
    """The GPU's name, e.g. "NVIDIA H100 80GB HBM3" (`device`: an index, "cuda:i" or None for
    the current one)."""
    _require_gpu("get_device_name")
    properties = _cupy().cuda.runtime.getDeviceProperties(_device_index(device))
    name = properties["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def empty_cache() -> None:
    """Give the GPU memory CuPy keeps for reuse, but no array holds, back to the driver."""
    if cuda_available():
        _cupy().get_default_memory_pool().free_all_blocks()


def memory_allocated(device: Any = None) -> int:
    """Bytes of GPU memory that arrays hold now (0 without a GPU)."""
    return int(_cupy().get_default_memory_pool().used_bytes()) if cuda_available() else 0


def memory_reserved(device: Any = None) -> int:
    """Bytes of GPU memory CuPy holds, in use or kept for reuse (0 without a GPU)."""
    return int(_cupy().get_default_memory_pool().total_bytes()) if cuda_available() else 0


def _cupy() -> Any:
    return importlib.import_module("cupy")


def _require_gpu(name: str) -> None:
    if not cuda_available():
        raise AssertionError(f"cuda.{name}(): CUDA is not available here: the GPU path needs CuPy and an "
                             "NVIDIA GPU (tg.cuda.is_available() is False)")


def _device_index(device: Any) -> int:
    """A device given as None, an index, "cuda" or "cuda:i" (or a tg.device), as an index."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    index = as_device(device).index  # "cuda:1" and tg.device("cuda", 1) alike (a str's .index is a method)
    return current_device() if index is None else index


def __getattr__(name: str) -> object:
    """`tg.cuda.amp` (PyTorch's older spellings of `tg.amp`), imported when first asked for."""
    if name == "amp":
        return importlib.import_module(f"{__name__}.amp")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
