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

import functools

import numpy as np

__all__ = [
    "float32", "float64", "int64", "int32", "bool_",
    "default_float", "promote_types", "result_type", "float_dtype",
    "float", "double", "half", "float16", "long", "int", "short", "int16", "int8", "uint8", "bool",
]

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int64 = np.dtype(np.int64)
int32 = np.dtype(np.int32)
bool_ = np.dtype(np.bool_)

default_float = float32

# PyTorch's dtype aliases, so that `dtype=tg.float` reads as `dtype=torch.float`. (They shadow
# the builtins in this module only, which uses none of them.)
float = default_float  # noqa: A001
double = np.dtype(np.float64)
half = float16 = np.dtype(np.float16)
long = np.dtype(np.int64)
int = np.dtype(np.int32)  # noqa: A001
short = int16 = np.dtype(np.int16)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
bool = np.dtype(np.bool_)  # noqa: A001

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """The dtype holding both: the higher category's, or the wider within one category."""
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca == cb:
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


def float_dtype(dtype: np.dtype) -> np.dtype:
    """`dtype` if floating, else the default float: what `exp` or `/` computes in."""
    return dtype if dtype.kind in "fc" else default_float
