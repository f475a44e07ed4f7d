"""A stand-in for a GPU array type that runs on the CPU: `ForeignArray` and its namespace.

CuPy's arrays live in GPU memory, and CuPy refuses to mix them with numpy arrays: `cupy_a +
numpy_b`, `np.where(numpy_mask, cupy_a, 0)` and `cupy_a[...] = numpy_b` raise instead of
copying behind the user's back. An op that creates an array with plain numpy (`np.zeros(shape)`,
`np.array(list)`, `np.add.at` on a numpy target) or converts through `np.asarray` works on the
CPU and breaks on a GPU. Without a GPU, `ForeignArray` makes that mistake visible:

- it is a numpy array (a thin subclass, so numpy computes every result), whose ufuncs and array
  functions refuse any operand that is a plain numpy array with dimensions, with a `TypeError`
  naming the op, as CuPy does (also in `a[key] = value`); numbers, numpy scalars and 0-d arrays
  are let through;
- every result is a `ForeignArray` again (slices and reshapes of a subclass already are), and a
  full reduction gives a 0-d array rather than a numpy scalar, as CuPy's do;
- `NAMESPACE` is its module (what `tensorgrad.device.namespace` returns for it, as it returns
  CuPy for a CuPy array): numpy's names, where the creation functions, `einsum` and the stride
  tricks make `ForeignArray`s and the ufuncs (numpy's, `.at` included) dispatch on them, plus
  `asnumpy(a)`, a plain numpy copy.

It also has CuPy's gaps, as CuPy 14 documents and implements them, so that code which would
stop there stops here too:

- `ufunc.reduce` and `ufunc.accumulate` only for add and multiply, `ufunc.reduceat` only for
  add (`NotImplementedError`); the array methods (`a.max()`, `a.all()`) reduce natively;
- `ufunc.at` only for add, subtract, maximum, minimum and the bitwise ufuncs, each on the target
  dtypes its atomic operation has (`NotImplementedError` for another ufunc, `TypeError` for
  another dtype: `add.at` into a bool, int8 or complex array, `maximum.at` into a float16 one);
- `a.max()`/`a.min()` take no `initial=` or `where=` (`TypeError`).

Importing this module registers the namespace with `tensorgrad.device`; `foreign(a)` turns a
numpy array into a `ForeignArray` copy. What it does not model: a plain numpy index array,
which CuPy accepts in `a[idx]` (copying it to the GPU).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from tensorgrad.device import register_namespace

__all__ = ["ForeignArray", "NAMESPACE", "foreign", "is_foreign"]


def _refuse(op: str, values: Any) -> None:
    """Raise as CuPy does when a plain numpy array, even a 0-d one, is among `values` (nested).

    (CuPy's kernels take Python numbers and numpy scalars beside its arrays, nothing else.)
    """
    for value in values:
        if type(value) is np.ndarray:
            raise TypeError(f"{op}: a plain numpy array (shape {value.shape}) can't be mixed with "
                            "ForeignArray operands; make it in the operands' namespace")
        if isinstance(value, list | tuple):
            _refuse(op, value)


def _plain(value: Any) -> Any:
    """`value` with every ForeignArray in it viewed as a plain numpy array (the same memory)."""
    if isinstance(value, ForeignArray):
        return value.view(np.ndarray)
    if isinstance(value, list | tuple):
        return _rebuilt(value, [_plain(v) for v in value])
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _wrap(value: Any) -> Any:
    """A result as CuPy would give it: arrays (and numpy scalars, as 0-d arrays) are ForeignArrays."""
    if isinstance(value, np.ndarray):
        return value if isinstance(value, ForeignArray) else value.view(ForeignArray)
    if isinstance(value, np.generic):
        return np.asarray(value).view(ForeignArray)
    if isinstance(value, list | tuple):
        return _rebuilt(value, [_wrap(v) for v in value])
    return value


def _rebuilt(sequence: list | tuple, items: list) -> Any:
    """`items` in a sequence of `sequence`'s type (a named tuple, such as `svd`'s, included)."""
    return type(sequence)(*items) if hasattr(sequence, "_fields") else type(sequence)(items)


# The ufunc methods CuPy has beyond `__call__` and `outer`: the ufuncs each one takes.
_CUPY_METHODS = {"reduce": {"add", "multiply"}, "accumulate": {"add", "multiply"}, "reduceat": {"add"}}
# `ufunc.at`: the target dtypes of each ufunc's atomic operation in CuPy (all others refused).
_INTEGERS = {"int32", "int64", "uint32", "uint64"}
_CUPY_AT = {"add": _INTEGERS | {"float16", "float32", "float64"}, "subtract": {"int32", "uint32"},
            "maximum": _INTEGERS | {"float32", "float64"}, "minimum": _INTEGERS | {"float32", "float64"},
            "bitwise_and": _INTEGERS, "bitwise_or": _INTEGERS, "bitwise_xor": _INTEGERS}


def _refuse_method(ufunc: np.ufunc, method: str, inputs: tuple) -> None:
    """Raise as CuPy does for a ufunc method it lacks, or an `at` on a dtype it has no atomic for."""
    name = ufunc.__name__
    if method == "at":
        if name not in _CUPY_AT:
            raise NotImplementedError(f"`{name}.at` is not supported yet")
        if inputs[0].dtype.name not in _CUPY_AT[name]:
            raise TypeError(f"{name}.at only supports {', '.join(sorted(_CUPY_AT[name]))} as data type")
    elif method in _CUPY_METHODS and name not in _CUPY_METHODS[method]:
        raise NotImplementedError(f"`{name}.{method}` is not supported yet")


def _native_reduction(name: str) -> Any:
    """The array method `name` (`a.max()`), run by numpy on the plain array: CuPy reduces natively
    where its `ufunc.reduce` would refuse, but takes no `initial=` or `where=`."""
    def method(self: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        for unsupported in ("initial", "where"):
            if unsupported in kwargs:
                raise TypeError(f"{name}() got an unexpected keyword argument '{unsupported}'")
        return _wrap(getattr(self.view(np.ndarray), name)(*_plain(args), **_plain(kwargs)))

    method.__name__ = name
    return method


class ForeignArray(np.ndarray):
    """A numpy array that behaves like a GPU array: it refuses plain numpy operands."""

    max, min, all, any = (_native_reduction(name) for name in ("max", "min", "all", "any"))

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        _refuse_method(ufunc, method, inputs)
        out = kwargs.get("out", ())
        # `ufunc.at(a, index, values)`: the index may be any integer array (CuPy copies it over).
        operands = (inputs[0],) + inputs[2:] if method == "at" else inputs
        _refuse(name, operands + tuple(out) + (kwargs.get("where"),))
        if out:
            kwargs["out"] = _plain(tuple(out))
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        if method == "at":
            return None
        if out:
            return out[0] if len(out) == 1 else tuple(out)
        return _wrap(result)

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        _refuse(func.__name__, args + tuple(kwargs.values()))
        return _wrap(func(*_plain(args), **_plain(kwargs)))

    def __getitem__(self, key: Any) -> Any:
        return _wrap(super().__getitem__(_plain(key)))

    def __setitem__(self, key: Any, value: Any) -> None:
        _refuse("setitem", (value,))
        super().__setitem__(_plain(key), _plain(value))


def foreign(array: Any) -> ForeignArray:
    """A ForeignArray copy of `array` (numpy's, in its memory layout, or anything `np.array` takes)."""
    array = np.asarray(array)
    copy = np.empty_like(array)  # "K" order: a transposed array stays transposed
    copy[...] = array
    return copy.view(ForeignArray)


def is_foreign(value: Any) -> bool:
    """Whether `value` is a ForeignArray (a type check: a subclass of numpy's array is not enough)."""
    return type(value) is ForeignArray


def _creating(make: Any) -> Any:
    """numpy's `make`, its result a ForeignArray (a function of the namespace, like `cupy.zeros`)."""
    def create(*args: Any, **kwargs: Any) -> Any:
        return _wrap(make(*_plain(args), **_plain(kwargs)))

    create.__name__ = make.__name__
    return create


def _array(obj: Any, dtype: Any = None, **kwargs: Any) -> ForeignArray:
    """`np.array`, as a ForeignArray: always a copy, as CuPy's copy to the GPU is."""
    return _wrap(np.array(_plain(obj), dtype=dtype, **kwargs))


def _asarray(obj: Any, dtype: Any = None, **kwargs: Any) -> ForeignArray:
    """`np.asarray`: a ForeignArray itself (cast if asked), anything else copied into one."""
    if isinstance(obj, ForeignArray):
        return obj if dtype is None or obj.dtype == np.dtype(dtype) else obj.astype(dtype)
    return _array(obj, dtype=dtype, **kwargs)


def _asnumpy(array: Any) -> np.ndarray:
    """A plain numpy copy, as `cupy.asnumpy` copies a GPU array to the host."""
    return np.array(_plain(array))


_CREATION = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
             "arange", "eye", "identity", "linspace", "logspace", "geomspace", "tri", "indices",
             "ascontiguousarray", "asfortranarray", "fromiter", "frombuffer", "einsum", "meshgrid")


class _Namespace:
    """ForeignArray's module: numpy's names; those that make arrays make ForeignArrays."""

    __name__ = "foreign_array.NAMESPACE"

    def __init__(self) -> None:
        for name in _CREATION:
            setattr(self, name, _creating(getattr(np, name)))
        self.array, self.asarray, self.asnumpy = _array, _asarray, _asnumpy
        self.lib = SimpleNamespace(stride_tricks=SimpleNamespace(
            as_strided=_creating(np.lib.stride_tricks.as_strided),
            sliding_window_view=_creating(np.lib.stride_tricks.sliding_window_view)))

    def __getattr__(self, name: str) -> Any:
        # Everything else is numpy's: its functions and ufuncs dispatch on ForeignArray operands.
        return getattr(np, name)


NAMESPACE = _Namespace()
register_namespace(ForeignArray, NAMESPACE)
