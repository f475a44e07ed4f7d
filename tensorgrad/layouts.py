"""`tg.layout` and `tg.strided`: how a tensor's elements are organised, PyTorch's `torch.layout`.

Every tensorgrad tensor is dense and strided (a numpy or CuPy array), so `strided` is the one
layout; it exists so that code which checks `t.layout == torch.strided`, or passes
`layout=torch.strided` to a factory, runs unchanged. Sparse layouts have no meaning here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["layout", "strided", "check_layout", "check_pin_memory"]


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


def check_pin_memory(value: Any, op: str) -> None:
    """A factory's `pin_memory=` keyword: False is accepted, and True where a GPU is (a hint for
    faster copies to it, which tensorgrad's CuPy copies do without); without one, True is
    PyTorch's RuntimeError."""
    from tensorgrad import cuda  # here: the device module is not needed to import this one

    if value and not cuda.is_available():
        raise RuntimeError(f"{op}(): pin_memory=True requires a CUDA or other accelerator backend; no pinned "
                           "memory allocator is available to tensorgrad")
