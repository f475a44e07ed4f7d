"""`tg.cpu`: PyTorch's `torch.cpu`, the CPU as a device module (always there, one of it)."""

from __future__ import annotations

from typing import Any

__all__ = ["is_available", "device_count", "current_device", "synchronize", "amp"]


def is_available() -> bool:
    """True: the CPU is always there."""
    return True


def device_count() -> int:
    """1: the CPU counts as one device."""
    return 1


def current_device() -> str:
    """"cpu", PyTorch's answer."""
    return "cpu"


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU ops finish before they return."""


def __getattr__(name: str) -> object:
    """`tg.cpu.amp`, imported when first asked for."""
    if name == "amp":
        import importlib

        return importlib.import_module(f"{__name__}.amp")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
