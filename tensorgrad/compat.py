"""PyTorch's top-level odds and ends that user code reaches for: `tg.Size`, `tg.is_tensor`,
`tg.numel`, `tg.inference_mode`, and the legacy typed constructors `tg.FloatTensor(...)`,
`tg.LongTensor(...)` (also what `t.type()` names and `t.type(tg.FloatTensor)` takes).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import sys
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from scalargrad.engine import is_grad_enabled, no_grad, set_grad_enabled
from tensorgrad import checks, dtypes
from tensorgrad.dtypes import _CATEGORY, bool_, float16, float32, float64, int8, int16, int32, int64, uint8
from tensorgrad.layouts import strided
from tensorgrad.tensor import Tensor

__all__ = ["Size", "is_tensor", "numel", "inference_mode", "is_inference_mode_enabled", "LEGACY_TYPES",
           "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "legacy_type", "can_cast", "promote_types",
           "result_type", "is_floating_point", "is_complex"]


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


class _VariableType(type):
    """Makes `isinstance(t, Variable)` true of every tensor, as in PyTorch."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableType):
    """`torch.autograd.Variable`, from before tensors carried gradients themselves: old tutorials
    write `Variable(x, requires_grad=True)`. It gives a tensor that shares `data`'s values, cut
    from the graph, with `requires_grad` as asked; every tensor is a Variable."""

    def __new__(cls, data: Any, requires_grad: bool = False, volatile: bool = False) -> Tensor:  # type: ignore[misc]
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with tg.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        return data.detach().requires_grad_(requires_grad)


class inference_mode(set_grad_enabled):  # noqa: N801 - PyTorch's lower-case name
    """`torch.inference_mode`: record no graph, as `no_grad`, and mark the tensors made inside as
    inference tensors (`t.is_inference()`); a context manager and a decorator (`@inference_mode()`,
    bare `@inference_mode` too); `inference_mode(False)` changes nothing."""

    def __new__(cls, mode: Any = True):  # type: ignore[misc]
        if callable(mode):  # a bare decorator: @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        super().__init__(False)
        self.inference = bool(mode)
        self._inference_before: list[bool] = []

    def __enter__(self) -> None:
        self.mode = False if self.inference else is_grad_enabled()
        super().__enter__()
        self._inference_before.append(is_inference_mode_enabled())
        _set_inference_mode(self.inference)

    def __exit__(self, *exc_info: object) -> None:
        _set_inference_mode(self._inference_before.pop())
        super().__exit__(*exc_info)

    def __call__(self, func: Callable) -> Callable:
        if not self.inference:
            return func
        if inspect.isgeneratorfunction(func):  # (its body runs without grad, its tensors unmarked)
            return no_grad()(func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode():
                return func(*args, **kwargs)

        return wrapper


# Inference tensors, by id, while they live. Tensors have no slot for the mark (a slot would cost
# every tensor memory): while some thread is in inference mode, the constructor that `record` and
# `new_leaf` call is swapped for one that marks the tensors a thread in inference mode makes;
# outside inference mode, making a tensor costs nothing more.
_inference_tensors: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()
_inference_threads = threading.local()  # `.enabled`: this thread is in inference mode
_inference_lock = threading.Lock()
_threads_in_inference = 0


def _new_marked_tensor(cls: type) -> Tensor:
    """`object.__new__(cls)`, remembering the tensor if this thread is in inference mode."""
    t = object.__new__(cls)
    if getattr(_inference_threads, "enabled", False):
        _inference_tensors[id(t)] = t
    return t


def _set_inference_mode(enabled: bool) -> None:
    """Switch this thread's inference mode, and the tensor constructor with it."""
    global _threads_in_inference
    # (the modules, from sys.modules: `tensorgrad.tensor` as an attribute is the function tg.tensor)
    autograd, tensor = sys.modules["tensorgrad.autograd"], sys.modules["tensorgrad.tensor"]
    with _inference_lock:
        if getattr(_inference_threads, "enabled", False) == enabled:
            return
        _inference_threads.enabled = enabled
        _threads_in_inference += 1 if enabled else -1
        new = _new_marked_tensor if _threads_in_inference else object.__new__
        tensor._new_tensor = autograd._new_tensor = new


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode()` (`no_grad` alone is not inference mode)."""
    return getattr(_inference_threads, "enabled", False)


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


# --- dtype queries: torch.can_cast, promote_types, result_type, is_floating_point, is_complex ---


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules let `from_` become `to` in an op's output: never down a
    category (float to integer, integer to bool, complex to real); within one, any width."""
    return _CATEGORY[np.dtype(from_).kind] <= _CATEGORY[np.dtype(to).kind]


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The smallest dtype both `type1` and `type2` convert to: the higher category's (bool <
    integer < floating < complex), or the wider within one (uint8 and int8 give int16)."""
    return dtypes.promote_types(np.dtype(type1), np.dtype(type2))


def result_type(tensor: Any, other: Any) -> np.dtype:
    """The dtype of an arithmetic op on `tensor` and `other` (tensors or Python numbers), by
    PyTorch's rules: a tensor with dimensions decides within its category, a 0-d tensor only when
    its category is higher, and a Python number only lifts the category (to int64, the default
    float or complex), never the width."""
    tiers: list[np.dtype | None] = [None, None, None]  # dimensioned tensors, 0-d tensors, numbers
    for operand in (tensor, other):
        if isinstance(operand, Tensor):
            tier, dtype = (0 if operand.ndim else 1), operand.dtype
        elif isinstance(operand, bool | int | float | complex):
            tier, dtype = 2, _number_dtype(operand)
        else:
            raise TypeError(f"result_type(): expected Tensors or Python numbers, got "
                            f"{type(operand).__name__}")
        tiers[tier] = dtype if tiers[tier] is None else dtypes.promote_types(tiers[tier], dtype)
    result = None
    for dtype in tiers:
        if dtype is not None and (result is None or _CATEGORY[dtype.kind] > _CATEGORY[result.kind]):
            result = dtype if result is None else dtypes.promote_types(result, dtype)
    return result


def _number_dtype(number: bool | int | float | complex) -> np.dtype:
    """The dtype a Python number takes in an op: bool, int64, the default float or its complex."""
    if isinstance(number, bool):
        return bool_
    if isinstance(number, int):
        return int64
    if isinstance(number, float):
        return dtypes.default_float
    return np.dtype(np.complex128 if dtypes.default_float == float64 else np.complex64)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002 - PyTorch's argument name
    """Whether `input`'s dtype is a floating one (float16, float32, float64)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_floating_point(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return input.dtype.kind == "f"


def is_complex(input: Tensor) -> bool:  # noqa: A002 - PyTorch's argument name
    """Whether `input`'s dtype is a complex one."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_complex(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return input.dtype.kind == "c"


# --- tensor queries: torch.is_nonzero, is_signed, is_same_size, is_conj, is_neg, is_inference, get_device ---


def _tensor_argument(op: str, value: Any, name: str = "input") -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(value).__name__}")
    return value


def is_nonzero(input: Tensor) -> bool:  # noqa: A002 - PyTorch's argument name
    """Whether a one-element tensor's value is not zero (nan is not zero); any other size raises."""
    size = _tensor_argument("is_nonzero", input).numel()
    if size != 1:
        amount = "no values" if size == 0 else "more than one value"
        raise RuntimeError(f"is_nonzero(): Boolean value of Tensor with {amount} is ambiguous "
                           f"(shape {input.shape})")
    return bool(input.item())


def is_signed(input: Tensor) -> bool:  # noqa: A002 - PyTorch's argument name
    """Whether `input`'s dtype holds negative numbers: not for bool and the unsigned integers."""
    return _tensor_argument("is_signed", input).dtype.kind in "ifc"


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002 - PyTorch's argument name
    """Whether the two tensors have the same shape."""
    return _tensor_argument("is_same_size", input).shape == _tensor_argument("is_same_size", other,
                                                                             "other").shape


def is_conj(input: Tensor) -> bool:  # noqa: A002 - PyTorch's argument name
    """Whether `input` carries a lazy conjugation: never, as tensorgrad's `conj` computes it."""
    _tensor_argument("is_conj", input)
    return False


def is_neg(input: Tensor) -> bool:  # noqa: A002 - PyTorch's argument name
    """Whether `input` carries a lazy negation: never, as tensorgrad computes every negation."""
    _tensor_argument("is_neg", input)
    return False


def is_inference(input: Tensor) -> bool:  # noqa: A002 - PyTorch's argument name
    """Whether `input` is an inference tensor: one made inside `inference_mode()`, or a view of
    one (a view made there of an ordinary tensor is ordinary, as in PyTorch)."""
    owner = _tensor_argument("is_inference", input)._base
    owner = input if owner is None else owner
    return _inference_tensors.get(id(owner)) is owner


def get_device(input: Tensor) -> int:  # noqa: A002 - PyTorch's argument name
    """The index of the GPU holding `input`, or -1 for a tensor on the CPU."""
    place = _tensor_argument("get_device", input).device
    return -1 if place.type == "cpu" else place.index or 0


# --- torch.fill, torch.range, conj_physical, nonzero_static, and the `*_copy` spellings ---


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """A new tensor of input's shape and dtype holding `value` everywhere (a number, or a 0-d
    tensor, cast to input's dtype: 2.7 fills an int tensor with 2). Gradient: none to input,
    the grad's sum to a tensor `value`."""
    from tensorgrad import creation, elementwise, inplace

    input = _tensor_argument("fill", input)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill(): only supports a 0-dimension value tensor, but got one with "
                               f"{value.ndim} dimensions")
        value = value.to(input.dtype)
    elif isinstance(value, bool | int | float | complex | np.number):
        if isinstance(value, complex | np.complexfloating) and input.dtype.kind != "c":
            if value.imag:
                inplace.raise_lost_imaginary(value, input.dtype, "fill")
            value = value.real
        value = creation.full_like(input.detach(), np.asarray(value).astype(input.dtype).item())
    else:
        raise TypeError(f"fill(): argument 'value' must be a Number or a 0-d Tensor, not "
                        f"{type(value).__name__}")
    return elementwise.where(creation.ones_like(input, dtype=bool_), value, input)  # (input's grad: 0)


def legacy_range(start: float = 0, end: float | None = None, step: float = 1, *, dtype: Any = None,
                 layout: Any = strided, device: Any = None, requires_grad: bool = False) -> Tensor:
    """`torch.range`, deprecated in PyTorch for `arange`: start, start + step, ... up to and INCLUDING end
    (floor((end - start) / step) + 1 values), in the default float dtype unless `dtype` says.
    `layout` may only be `tg.strided` (not even None, as PyTorch's range)."""
    import warnings

    from tensorgrad import creation

    if layout is not strided:
        raise TypeError(f"range(): argument 'layout' must be tensorgrad.layout, not {type(layout).__name__}")

    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior "
                  "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
                  "values in [start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0 or (end - start) * step < 0:
        raise RuntimeError(f"range(): upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    count = int(np.floor((end - start) / step)) + 1
    values = creation.arange(count, dtype=float64, device=device) * step + start
    return values.to(dtypes.default_float if dtype is None else dtype).requires_grad_(requires_grad)


def conj_physical(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """The complex conjugate, computed (tensorgrad has no lazy conjugation); a real input's values
    unchanged, as a new tensor. Gradient: the grad's conjugate."""
    from tensorgrad import movement

    return movement.conj(_tensor_argument("conj_physical", input)).clone()


def conj_physical_(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """`conj_physical`, in place: no change to a real input; returns input."""
    from tensorgrad import movement

    if _tensor_argument("conj_physical_", input).dtype.kind != "c":
        return input
    return input.copy_(movement.conj(input))


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """`nonzero(input)` with exactly `size` rows: cut to the first `size`, or padded with rows of
    `fill_value`; an int64 tensor of shape (size, input.ndim)."""
    from tensorgrad import creation, indexing

    size = checks.as_int(size, "nonzero_static", "size")
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    from tensorgrad.movement import cat

    found = indexing.nonzero(_tensor_argument("nonzero_static", input))[:size]
    short = size - found.shape[0]
    if short == 0:
        return found
    padding = creation.full((short, input.ndim), fill_value, dtype=int64, device=input.device)
    return cat([found, padding]) if found.shape[0] else padding


def as_strided_(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:  # noqa: A002
    """`input.as_strided_(size, stride, storage_offset)`: input becomes that view of its storage."""
    return _tensor_argument("as_strided_", input).as_strided_(size, stride, storage_offset)


def _copy_of(op: str, doc: str) -> Callable[..., Tensor]:
    """torch's `op_copy`: `input.op(...)`, then cloned (a tensor of its own, never a view)."""

    def copy(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        result = getattr(_tensor_argument(f"{op}_copy", input), op)(*args, **kwargs)
        if isinstance(result, tuple | list):
            return type(result)(part.clone() for part in result)
        return result.clone()

    copy.__name__ = copy.__qualname__ = f"{op}_copy"
    copy.__doc__ = f"`input.{op}({doc})`, as a new tensor (a clone, not a view)."
    return copy


alias_copy = _copy_of("clone", "")
detach_copy = _copy_of("detach", "")
diagonal_copy = _copy_of("diagonal", "offset=0, dim1=0, dim2=1")
expand_copy = _copy_of("expand", "size")
permute_copy = _copy_of("permute", "dims")
select_copy = _copy_of("select", "dim, index")
split_copy = _copy_of("split", "split_size, dim=0")
split_with_sizes_copy = _copy_of("split", "split_sizes, dim=0")
squeeze_copy = _copy_of("squeeze", "dim=None")
t_copy = _copy_of("t", "")
transpose_copy = _copy_of("transpose", "dim0, dim1")
unbind_copy = _copy_of("unbind", "dim=0")
unfold_copy = _copy_of("unfold", "dimension, size, step")
unsqueeze_copy = _copy_of("unsqueeze", "dim")
view_copy = _copy_of("view", "size or dtype")
as_strided_copy = _copy_of("as_strided", "size, stride, storage_offset=None")


def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,  # noqa: A002
               step: int = 1) -> Tensor:
    """`input[..., start:end:step]` along `dim`, as a new tensor (torch.slice_copy)."""
    input = _tensor_argument("slice_copy", input)
    dim = checks.dim(dim, input.ndim, "slice_copy")
    return input[(slice(None),) * dim + (slice(start, end, step),)].clone()


# --- small queries: typename, is_storage, warn_always, matmul precision ---


def typename(obj: Any) -> str:
    """PyTorch's type name of `obj`: "torch.FloatTensor" (and friends) for a tensor, else the
    qualified name of its class."""
    if isinstance(obj, Tensor):
        kind = LEGACY_TYPES.get(obj.dtype)
        if kind is not None:
            return f"torch.{kind.__name__}"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def is_storage(obj: Any) -> bool:
    """Whether `obj` is a PyTorch storage: never, as tensorgrad's tensors hold numpy arrays."""
    return False


_warn_always = False


def set_warn_always(b: bool) -> None:
    """Whether warnings PyTorch gives once per process (deprecations) are to be given every time.
    Recorded for `is_warn_always_enabled`; tensorgrad's warnings follow Python's filters."""
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    """What `set_warn_always` last set (False at start)."""
    return _warn_always


_matmul_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """"highest", "high" or "medium": how much float32 matmuls may trade precision for speed.
    numpy always computes in full float32 ("highest"); the setting is recorded only."""
    global _matmul_precision
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"set_float32_matmul_precision(): invalid precision {precision!r}: expected "
                           "'highest', 'high' or 'medium'")
    _matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """What `set_float32_matmul_precision` last set ("highest" at start)."""
    return _matmul_precision


def set_num_threads(n: int) -> None:
    """How many threads the BLAS library under numpy (matrix products, linear algebra) may use,
    as `torch.set_num_threads` sets PyTorch's: 1 makes every op single-threaded (the rest of
    numpy's work is single-threaded already). Set through `threadpoolctl`, for the whole process."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    from threadpoolctl import threadpool_limits  # (on first use: most programs never ask)

    threadpool_limits(limits=int(n), user_api="blas")  # kept until changed: not used as a `with`


def get_num_threads() -> int:
    """The threads numpy's BLAS library uses: what `set_num_threads` set, else the library's
    default (the machine's cores, usually)."""
    from threadpoolctl import threadpool_info

    libraries = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    numpys = [lib for lib in libraries if "numpy" in lib["filepath"]]  # (beside PyTorch's own, say)
    return int((numpys or libraries)[0]["num_threads"]) if libraries else 1
