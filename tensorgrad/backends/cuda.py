"""`tg.backends.cuda`: PyTorch's CUDA matmul switches (see `tg.backends`).

`matmul.allow_tf32` is `tg.set_float32_matmul_precision` seen as a bool, as in PyTorch: True is
"high", False "highest". The reduced-precision-reduction switches are kept and checked.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from tensorgrad import compat

__all__ = ["is_built", "matmul"]


def is_built() -> bool:
    """Whether the CUDA path is installed: CuPy is importable (`tg.cuda.is_available()` also
    asks for a GPU)."""
    return importlib.util.find_spec("cupy") is not None


class CuBLASModule:
    """`tg.backends.cuda.matmul`: the float32 matmul switches, with PyTorch's checks."""

    def __init__(self) -> None:
        object.__setattr__(self, "_reduced", {"allow_fp16_reduced_precision_reduction": True,
                                              "allow_bf16_reduced_precision_reduction": True})

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return compat.get_float32_matmul_precision() != "highest"
        if name in self._reduced:
            return self._reduced[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
            compat.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._reduced:
            if not isinstance(value, bool | tuple | list):
                raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)}")
            self._reduced[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = CuBLASModule()
