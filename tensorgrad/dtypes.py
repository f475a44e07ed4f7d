"""PyTorch's dtype rules, in one place: what dtype an op on mixed operands returns.

Two rules differ from NumPy's, and both matter to a PyTorch user:

- Categories come first: bool < integer < floating. Mixing categories gives the higher
  category's dtype (`int32` with `float32` is `float32`, where NumPy says `float64`); within a
  category the wider dtype wins.
- A 0-d tensor or a Python number never widens a dimensioned tensor within its category:
  `float32 (3,) + float64 ()` is `float32`. It does lift the category: `int32 (3,) + float64 ()`
  is `float64`, and `int32 (3,) + 1.5` is the default float, `float32`.

An integer tensor given to a floating-only op (`exp`, `sqrt`, `/`) is computed in the default
float dtype, `float32`.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any

import numpy as np

__all__ = [
    "float32", "float64", "int64", "int32", "bool_",
    "default_float", "promote_types", "result_type", "float_dtype",
    "float", "double", "half", "float16", "long", "int", "short", "int16", "int8", "uint8", "bool",
    "get_default_dtype", "set_default_dtype", "or_default", "finfo", "iinfo",
    "complex64", "complex128", "cfloat", "cdouble", "dtype",
]

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int64 = np.dtype(np.int64)
int32 = np.dtype(np.int32)
bool_ = np.dtype(np.bool_)

# The dtype Python floats and integer-to-float results take: float32 unless `set_default_dtype`
# changed it. Module state, read as `dtypes.default_float` (a `from` import would freeze it).
default_float = float32

# PyTorch's dtype aliases, so that `dtype=tg.float` reads as `dtype=torch.float`. (They shadow
# the builtins in this module only, which uses none of them.)
float = float32  # noqa: A001
double = np.dtype(np.float64)
half = float16 = np.dtype(np.float16)
long = np.dtype(np.int64)
int = np.dtype(np.int32)  # noqa: A001
short = int16 = np.dtype(np.int16)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
bool = np.dtype(np.bool_)  # noqa: A001
complex64 = cfloat = np.dtype(np.complex64)
complex128 = cdouble = np.dtype(np.complex128)

# The type every dtype above is, so `isinstance(t.dtype, tg.dtype)` holds as with torch.dtype.
dtype = np.dtype

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """The dtype holding both: the higher category's, or the wider within one category."""
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca == cb or (ca + cb == 5):  # complex with floating: as wide as both (complex64, float64: complex128)
        return np.promote_types(a, b)
    return a if ca > cb else b


@functools.cache
def result_type(a: np.dtype, a_is_dimensioned: bool, b: np.dtype, b_is_dimensioned: bool) -> np.dtype:
    """The dtype of a binary op's result, for operands of dtypes `a` and `b`.

    A dimensioned operand (ndim > 0) decides the dtype within its category; a 0-d one decides
    only when its category is higher.
    """
    if a_is_dimensioned == b_is_dimensioned:
        return promote_types(a, b)
    dimensioned, zero_d = (a, b) if a_is_dimensioned else (b, a)
    if _CATEGORY[zero_d.kind] > _CATEGORY[dimensioned.kind]:
        return promote_types(dimensioned, zero_d)
    return dimensioned


def get_default_dtype() -> np.dtype:
    """The dtype Python floats become (float32 unless `set_default_dtype` changed it), as
    `torch.get_default_dtype()`."""
    return default_float


def or_default(dtype: Any) -> np.dtype:
    """`dtype`, or the default float when it is None: what a factory or a layer's weights take."""
    return default_float if dtype is None else np.dtype(dtype)


def set_default_dtype(d: Any) -> None:
    """Make `d` (float16, float32 or float64) the dtype that Python floats, `tg.zeros(3)`,
    `nn.Linear`'s weights and integer-to-float results take, as `torch.set_default_dtype`."""
    global default_float
    dtype = np.dtype(d)
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default "
                        f"type, got {dtype}")
    default_float = dtype


class finfo:  # noqa: N801 - PyTorch's lower-case name
    """The limits of a floating dtype as Python floats, as `torch.finfo(torch.float32).eps`:
    `bits eps max min tiny smallest_normal resolution dtype`."""

    def __init__(self, type: np.dtype | None = None) -> None:  # noqa: A002 - PyTorch's argument name
        dtype = default_float if type is None else np.dtype(type)
        if dtype.kind != "f":
            raise TypeError(f"finfo(): expects a floating point dtype, got {dtype}")
        info = np.finfo(dtype)
        self.bits = info.bits
        self.eps, self.max = builtins.float(info.eps), builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = builtins.float(info.resolution)
        self.dtype = dtype.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, eps={self.eps}, "
                f"smallest_normal={self.smallest_normal}, tiny={self.tiny}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - PyTorch's lower-case name
    """The limits of an integer dtype as Python ints, as `torch.iinfo(torch.int64).max`:
    `bits max min dtype`."""

    def __init__(self, type: np.dtype) -> None:  # noqa: A002 - PyTorch's argument name
        dtype = np.dtype(type)
        if dtype.kind not in "iub":
            raise TypeError(f"iinfo(): expects an integer dtype, got {dtype}")
        info = np.iinfo(np.uint8 if dtype.kind == "b" else dtype)
        self.bits, self.dtype = info.bits, dtype.name
        self.max, self.min = builtins.int(info.max), builtins.int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def float_dtype(dtype: np.dtype) -> np.dtype:
    """`dtype` if floating, else the default float: what `exp` or `/` computes in."""
    return dtype if dtype.kind in "fc" else default_float


def narrowed(array: Any, dtype: np.dtype) -> Any:
    """array.astype(dtype) in C order; a value beyond a narrower float dtype's range becomes inf
    without NumPy's overflow warning, as in PyTorch: mixed precision meets such values routinely
    (its loss scaler looks for them), and a warning at each would drown the training's output."""
    if array.dtype.itemsize > np.dtype(dtype).itemsize:
        with np.errstate(over="ignore"):
            return array.astype(dtype, order="C")
    return array.astype(dtype, order="C")
