"""`tg.backends.cudnn`: PyTorch's cuDNN switches (see `tg.backends`). tensorgrad calls no cuDNN
kernel, so `is_available()` is False and the switches, kept and checked, change no result."""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["is_available", "version", "flags", "enabled", "benchmark", "deterministic", "allow_tf32",
           "benchmark_limit"]

enabled = True  # PyTorch's defaults
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit: int | None = None


def is_available() -> bool:
    """Whether cuDNN can be used: never here (CuPy's array operations do the GPU work)."""
    return False


def version() -> int | None:
    """cuDNN's version: None, as PyTorch says where cuDNN is not available."""
    return None


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, **_others: Any) -> Iterator[None]:
    """Set the switches for the body of a `with` block and put the old ones back after it."""
    module = sys.modules[__name__]
    new = {"enabled": enabled, "benchmark": benchmark, "deterministic": deterministic,
           "allow_tf32": allow_tf32}
    saved = {name: getattr(module, name) for name in new}
    for name, value in new.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


class CudnnModule(types.ModuleType):
    """This module's class: its switches take only bools (RuntimeError otherwise, with PyTorch's
    message, which names its setter); other names are set as on any module, as in PyTorch."""

    _SETTERS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
                "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cublas"}

    def __setattr__(self, name: str, value: Any) -> None:
        setter = self._SETTERS.get(name)
        if setter is not None and not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = CudnnModule
