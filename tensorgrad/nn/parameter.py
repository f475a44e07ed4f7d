"""`tensorgrad.nn.parameter`: PyTorch's import path for the tensors a module registers
(`Parameter`, `Buffer`, and the lazy layers' `UninitializedParameter` and `UninitializedBuffer`).

The classes live in `tensorgrad.nn.modules`; these are the same objects, not copies.
"""

from __future__ import annotations

from typing import Any

from tensorgrad.nn.modules import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def is_lazy(param: Any) -> bool:
    """Whether `param` is a lazy layer's placeholder, not yet given a shape (PyTorch's `is_lazy`)."""
    return isinstance(param, UninitializedParameter | UninitializedBuffer)
