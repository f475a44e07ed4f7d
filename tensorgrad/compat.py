"""PyTorch's top-level odds and ends that user code reaches for: `tg.Size`, `tg.is_tensor`,
`tg.numel`, `tg.inference_mode`, and the legacy typed constructors `tg.FloatTensor(...)`,
`tg.LongTensor(...)` (also what `t.type()` names and `t.type(tg.FloatTensor)` takes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from scalargrad.engine import is_grad_enabled, no_grad, set_grad_enabled
from tensorgrad import checks
from tensorgrad.dtypes import bool_, float16, float32, float64, int8, int16, int32, int64, uint8
from tensorgrad.tensor import Tensor

__all__ = ["Size", "is_tensor", "numel", "inference_mode", "is_inference_mode_enabled", "LEGACY_TYPES",
           "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "legacy_type"]


class Size(tuple):
    """A shape, as `torch.Size`: a tuple of ints (`tg.Size([2, 3]) == (2, 3)`); shapes are tuples."""

    def __new__(cls, sizes: Any = ()) -> Size:
        return super().__new__(cls, checks.sizes((tuple(sizes),), "Size"))

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return int(np.prod(self, dtype=np.int64))

    def __repr__(self) -> str:
        return f"tensorgrad.Size({list(self)})"


def is_tensor(obj: Any) -> bool:
    """Whether `obj` is a tensorgrad Tensor (a Parameter too)."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:  # noqa: A002 - PyTorch's argument name
    """The number of elements of `input`."""
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' must be a Tensor, got {type(input).__name__}")
    return input.numel()


class inference_mode(set_grad_enabled):  # noqa: N801 - PyTorch's lower-case name
    """`torch.inference_mode`: record no graph (here, the same as `no_grad`): a context manager
    and a decorator (`@inference_mode()`, bare `@inference_mode` too); `inference_mode(False)`
    changes nothing."""

    def __new__(cls, mode: Any = True):  # type: ignore[misc]
        if callable(mode):  # a bare decorator: @inference_mode
            return no_grad()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        super().__init__(False)
        self.inference = bool(mode)

    def __enter__(self) -> None:
        self.mode = False if self.inference else is_grad_enabled()
        super().__enter__()

    def __call__(self, func: Callable) -> Callable:
        if not self.inference:
            return func
        return no_grad()(func)


def is_inference_mode_enabled() -> bool:
    """Whether graph recording is off (tensorgrad's inference mode is `no_grad`)."""
    return not is_grad_enabled()


class _LegacyTensorType:
    """`tg.FloatTensor` and friends: `FloatTensor([1, 2])` holds data, `FloatTensor(2, 3)` is an
    uninitialised tensor of that shape; `isinstance(t, tg.FloatTensor)` checks the dtype."""

    def __init__(self, name: str, dtype: np.dtype) -> None:
        self.__name__ = self.__qualname__ = name
        self.dtype = dtype

    def __call__(self, *args: Any, device: Any = None) -> Tensor:
        from tensorgrad import creation

        return creation.legacy(self.dtype, args, device)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == self.dtype

    def __repr__(self) -> str:
        return f"<class 'tensorgrad.{self.__name__}'>"


FloatTensor = _LegacyTensorType("FloatTensor", float32)
DoubleTensor = _LegacyTensorType("DoubleTensor", float64)
HalfTensor = _LegacyTensorType("HalfTensor", float16)
LongTensor = _LegacyTensorType("LongTensor", int64)
IntTensor = _LegacyTensorType("IntTensor", int32)
ShortTensor = _LegacyTensorType("ShortTensor", int16)
CharTensor = _LegacyTensorType("CharTensor", int8)
ByteTensor = _LegacyTensorType("ByteTensor", uint8)
BoolTensor = _LegacyTensorType("BoolTensor", bool_)
LEGACY_TYPES = {t.dtype: t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor,
                                     ShortTensor, CharTensor, ByteTensor, BoolTensor)}


def legacy_type(spec: Any) -> np.dtype:
    """The dtype a `Tensor.type(...)` argument names: a dtype, a legacy type (`tg.FloatTensor`) or
    its name as PyTorch writes it ("torch.FloatTensor", "torch.cuda.LongTensor")."""
    if isinstance(spec, _LegacyTensorType):
        return spec.dtype
    if isinstance(spec, str) and spec.endswith("Tensor"):
        name = spec.rsplit(".", 1)[-1]
        for dtype, kind in LEGACY_TYPES.items():
            if kind.__name__ == name:
                return dtype
        raise ValueError(f"type(): invalid type {spec!r}")
    return np.dtype(spec)
