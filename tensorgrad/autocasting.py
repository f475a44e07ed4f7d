"""Automatic mixed precision: `tg.autocast` runs the ops PyTorch lists in the dtype each one suits.

Half precision (float16) halves the memory a tensor takes and, on a GPU, runs the matrix products
several times faster; but its range ends at 65504 and its step near 1 is 1/1024, too coarse for a
sum of many terms or a loss. Inside `with tg.autocast(device_type, dtype=...)` each listed op picks
its dtype by one of PyTorch's rules, per device:

- "lower_precision_fp": floating inputs are cast to the autocast dtype (float16) first. The matrix
  products, linear layers, convolutions and attention: they gain the most and lose the least.
- "fp32": floating inputs are cast to float32. The losses, products, linear algebra and FFTs; on
  CUDA also exp, log, pow, softmax, sum, cumsum and the norms.
- "promote": inputs are cast to the widest floating dtype among them (`cat`, `stack`), so that a
  float16 and a float32 tensor meet in float32.
- "banned" (CUDA's `binary_cross_entropy`): an error that points to the logits form, which is
  safe in float16 where a sigmoid followed by a log is not.

The lists below are PyTorch's (ATen's autocast_mode.cpp), under this library's function names.
A tensor takes part when it lives on the autocast's device type and is float16 or float32 (float64
and integer tensors are never cast). As in PyTorch, only out-of-place calls cast: in-place variants,
calls with `out=` and calls with an explicit `dtype=` run as written, and so do the ops an op calls
inside itself, since the outer op has chosen the dtypes. An op not in a list runs as written, in
the dtypes it is given. Casts are recorded in the graph, so gradients reach float32 parameters in
float32; inside one autocast block a float32 parameter is cast to float16 once and reused.

tensorgrad has no bfloat16 (NumPy has none), so autocast on the CPU defaults to float16, where
PyTorch's default there is bfloat16.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = ["autocast", "policies_of", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
           "get_autocast_dtype", "set_autocast_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
           "autocast_decrement_nesting", "is_autocast_cpu_enabled", "get_autocast_cpu_dtype",
           "get_autocast_gpu_dtype"]

LOWER, FP32, PROMOTE, BANNED = "lower_precision_fp", "fp32", "promote", "banned"
_FLOAT16, _FLOAT32 = np.dtype(np.float16), np.dtype(np.float32)

# Which op runs in which dtype, per device type: PyTorch's lists by this library's names ("linalg."
# and "fft." name the functions of those modules; "torch." the top-level forms that differ from them).
_CPU_POLICIES = {
    LOWER: """conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d bmm mm
        linalg.vecdot baddbmm addmm addbmm linear matmul prelu scaled_dot_product_attention""",
    FP32: """avg_pool3d binary_cross_entropy grid_sample polar prod quantile nanquantile stft cdist
        trace view_as_complex torch.cholesky cholesky_inverse cholesky_solve torch.inverse
        torch.lu_solve orgqr ormqr pinverse max_pool3d max_unpool1d max_unpool2d max_unpool3d
        adaptive_avg_pool3d pad mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss poisson_nll_loss
        smooth_l1_loss cross_entropy l1_loss huber_loss margin_ranking_loss soft_margin_loss
        triplet_margin_loss multi_margin_loss ctc_loss kl_div multilabel_margin_loss
        binary_cross_entropy_with_logits fft.fft fft.ifft fft.fft2 fft.ifft2 fft.fftn fft.ifftn
        fft.rfft fft.irfft fft.rfft2 fft.irfft2 fft.rfftn fft.irfftn fft.hfft fft.ihfft linalg.cond
        linalg.matrix_rank linalg.solve linalg.cholesky linalg.svdvals linalg.eigvals
        linalg.eigvalsh linalg.inv linalg.householder_product linalg.tensorinv linalg.tensorsolve
        geqrf torch.lu torch.qr torch.svd triangular_solve fractional_max_pool2d
        fractional_max_pool3d adaptive_max_pool3d linalg.qr linalg.cholesky_ex linalg.svd
        linalg.eig linalg.eigh linalg.lstsq linalg.inv_ex""",
    PROMOTE: "stack cat index_copy",
}
_CUDA_POLICIES = {
    LOWER: """conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d prelu addmm
        addmv addr matmul einsum mm mv linalg.vecdot linear addbmm baddbmm bmm chain_matmul
        linalg.multi_dot lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell scaled_dot_product_attention""",
    FP32: """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow
        __rtruediv__ softplus layer_norm group_norm cosine_similarity poisson_nll_loss
        cosine_embedding_loss nll_loss hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss
        mse_loss margin_ranking_loss multilabel_margin_loss soft_margin_loss triplet_margin_loss
        multi_margin_loss binary_cross_entropy_with_logits cross_entropy dist pdist cdist renorm
        logsumexp interpolate prod softmax log_softmax cumprod cumsum linalg.vector_norm
        linalg.matrix_norm sum norm""",
    PROMOTE: "addcdiv addcmul atan2 bilinear cross dot vdot grid_sample index_put tensordot scatter_add",
    BANNED: "binary_cross_entropy",
}
_POLICIES = {"cpu": _CPU_POLICIES, "cuda": _CUDA_POLICIES}
_DEVICE_NAMES = {"cpu": "CPU", "cuda": "CUDA"}

_BANNED_MESSAGE = (
    "tensorgrad.nn.functional.binary_cross_entropy and tensorgrad.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using tensorgrad.nn.functional.binary_cross_entropy_with_logits\n"
    "or tensorgrad.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")

F = TypeVar("F", bound=Callable[..., Any])


def policies_of(name: str) -> dict[str, str]:
    """The rule `name` follows on each device type that lists it: {"cpu": "fp32", ...}."""
    return {device: policy for device, table in _POLICIES.items()
            for policy, names in table.items() if name in names.split()}


# --- the state: per thread, with a cheap global switch --------------------------------------------

class _ThreadState(threading.local):
    """This thread's autocast: the enabled device types, their dtypes, the weight cache."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {"cpu": False, "cuda": False}
        self.dtypes: dict[str, np.dtype] = {"cpu": _FLOAT16, "cuda": _FLOAT16}
        self.cache_enabled = True
        self.nesting = 0
        self.inside_listed_op = False
        self.cache: dict[int, tuple[weakref.ref, Any]] = {}


_state = _ThreadState()


class _Switch:
    """`switch.on`: whether some thread has autocast enabled. Every listed op asks, so it is a slot
    read, as grad mode's; only while it is on does an op read the thread's own state."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = False


switch = _Switch()
_threads_autocasting = 0
_switch_lock = threading.Lock()


def _set_enabled(device_type: str, enabled: bool) -> None:
    """Turn this thread's autocast on `device_type` on or off, and keep the global switch true."""
    global _threads_autocasting
    with _switch_lock:
        was_on = any(_state.enabled.values())
        _state.enabled[device_type] = bool(enabled)
        now_on = any(_state.enabled.values())
        _threads_autocasting += int(now_on) - int(was_on)
        switch.on = _threads_autocasting > 0


# --- the ops' side: a decorator, and the casts ---------------------------------------------------

def autocast_op(name: str, when: Callable[..., bool] | None = None) -> Callable[[F], F]:
    """Mark op `name` (a name in the lists above) for autocast: inside an autocast block its inputs
    are cast by the op's rule for the device it runs on. `when(*args, **kwargs)`, if given, says
    whether this call is the listed form (`pad` casts only in its reflect and replicate modes).
    Outside autocast the op costs one call and one attribute read more; an op listed for CUDA alone
    costs nothing where CuPy is not installed."""
    policies = policies_of(name)
    if not policies:
        raise ValueError(f"autocast_op: {name!r} is in no autocast list")

    def decorate(op: F) -> F:
        if set(policies) == {"cuda"} and not _cupy_installed():
            # no array can be on a GPU, so CUDA's autocast never reaches this op: it stays as it is,
            # without the wrapper's call (1.5% of the instructions of a small op such as `sum`)
            op.autocast_name = name  # type: ignore[attr-defined]
            return op
        @functools.wraps(op)
        def op_under_autocast(*args: Any, **kwargs: Any) -> Any:
            try:
                if switch.on:
                    return _call_under_autocast(op, policies, when, args, kwargs)
                return op(*args, **kwargs)
            except TypeError:  # (a `try` costs nothing until it catches)
                _refuse_mixed_devices(name, op, args, kwargs)
                raise

        op_under_autocast.autocast_name = name  # type: ignore[attr-defined]
        return op_under_autocast  # type: ignore[return-value]

    return decorate


def _refuse_mixed_devices(name: str, op: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """PyTorch's error if op `name`'s tensor arguments (by their parameter names, a list's by
    position) are on two devices: CuPy's TypeError for a numpy operand, raised anywhere inside an
    op, then names the op and its arguments instead. Return if they are on one device."""
    try:
        named = inspect.signature(op).bind_partial(*args, **kwargs).arguments.items()
    except TypeError:  # the call itself did not fit the op's parameters
        return
    from tensorgrad.device import refuse_mixed_devices
    from tensorgrad.tensor import Tensor

    tensors = []
    for parameter, value in named:
        values = enumerate(value) if isinstance(value, list | tuple) else [(None, value)]
        tensors += [(t, parameter if i is None else f"{parameter}[{i}]")
                    for i, t in values if isinstance(t, Tensor)]
    refuse_mixed_devices(name, *tensors)


@functools.cache
def _cupy_installed() -> bool:
    """Whether CuPy is installed (looked up, not imported)."""
    import importlib.util

    return importlib.util.find_spec("cupy") is not None


def _call_under_autocast(op: Callable[..., Any], policies: dict[str, str], when: Callable[..., bool] | None,
                         args: tuple, kwargs: dict) -> Any:
    """Run `op` with its inputs cast by the policy of the device its first tensor lives on."""
    device_type = _first_device_type(args, kwargs)
    policy = policies.get(device_type) if device_type is not None else None
    if (policy is None or _state.inside_listed_op or not _state.enabled[device_type]
            or kwargs.get("out") is not None or kwargs.get("dtype") is not None
            or (when is not None and not when(*args, **kwargs))):
        return op(*args, **kwargs)
    if policy == BANNED:
        raise RuntimeError(_BANNED_MESSAGE)
    to_dtype = _target_dtype(policy, device_type, args, kwargs)
    args, kwargs = cast_eligible(args, to_dtype, device_type), cast_eligible(kwargs, to_dtype, device_type)
    _state.inside_listed_op = True
    try:
        return op(*args, **kwargs)
    finally:
        _state.inside_listed_op = False


@contextlib.contextmanager
def suspended():
    """Inside the block listed ops run as written: for calls with `out=`, which PyTorch does not
    autocast (the `out=` layer of `tensorgrad.out` calls the op without it)."""
    if not switch.on:
        yield
        return
    previous, _state.inside_listed_op = _state.inside_listed_op, True
    try:
        yield
    finally:
        _state.inside_listed_op = previous


def _tensors_in(values: Any):
    """The tensors among call arguments, one level into lists and tuples (`cat`'s sequence)."""
    from tensorgrad.tensor import Tensor

    for value in values:
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (item for item in value if isinstance(item, Tensor))


def _first_device_type(args: tuple, kwargs: dict) -> str | None:
    for tensor in _tensors_in((*args, *kwargs.values())):
        return tensor.device.type
    return None


def _eligible(tensor: Any, device_type: str) -> bool:
    """A float16 or float32 tensor on the autocast's device type (float64 is never cast)."""
    return tensor.dtype in (_FLOAT16, _FLOAT32) and tensor.device.type == device_type


def _target_dtype(policy: str, device_type: str, args: tuple, kwargs: dict) -> np.dtype:
    if policy == LOWER:
        return _state.dtypes[device_type]
    if policy == FP32:
        return _FLOAT32
    widest = _state.dtypes[device_type]  # promote: float32 if any eligible input is float32
    for tensor in _tensors_in((*args, *kwargs.values())):
        if _eligible(tensor, device_type) and tensor.dtype == _FLOAT32:
            widest = _FLOAT32
    return widest


def cast_eligible(value: Any, dtype: np.dtype, device_type: str) -> Any:
    """`value` with its eligible tensors cast to `dtype`, inside lists, tuples and dicts (a call's
    arguments: `cat`'s sequence, `custom_fwd`'s keywords)."""
    from tensorgrad.tensor import Tensor

    if isinstance(value, Tensor):
        return _cached_cast(value, dtype) if _eligible(value, device_type) and value.dtype != dtype else value
    if isinstance(value, dict):
        return {key: cast_eligible(item, dtype, device_type) for key, item in value.items()}
    holds = (Tensor, list, tuple, dict)  # (a tuple of plain numbers, a shape, is left as it is)
    if isinstance(value, (list, tuple)) and any(isinstance(item, holds) for item in value):
        return type(value)(cast_eligible(item, dtype, device_type) for item in value)
    return value


def _cached_cast(tensor: Any, dtype: np.dtype) -> Any:
    """tensor.to(dtype); a float32 parameter (a leaf that requires grad) cast down is kept until the
    outermost autocast block ends, so a weight used many times is converted once, as in PyTorch."""
    cacheable = (_state.cache_enabled and dtype == _FLOAT16 and tensor.dtype == _FLOAT32
                 and tensor.requires_grad and tensor.is_leaf and tensor._base is None)
    if not cacheable:
        return tensor.to(dtype)
    entry = _state.cache.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        return entry[1]
    cast = tensor.to(dtype)
    _state.cache[id(tensor)] = (weakref.ref(tensor), cast)
    return cast


# --- the user's side -----------------------------------------------------------------------------

def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on `device_type`: "cpu" and "cuda"."""
    return device_type in _POLICIES


def _check_device_type(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if not is_autocast_available(device_type):
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return device_type


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on in this thread for `device_type` (CUDA's when none is given, as PyTorch)."""
    return _state.enabled[_check_device_type("cuda" if device_type is None else device_type)]


def set_autocast_enabled(device_type: Any, enabled: bool | None = None) -> None:
    """Turn autocast on or off for `device_type` in this thread (`set_autocast_enabled(True)`: CUDA's)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _set_enabled(_check_device_type(device_type), enabled)


def get_autocast_dtype(device_type: str) -> np.dtype:
    """The dtype the lower-precision ops run in under autocast on `device_type` (float16)."""
    return _state.dtypes[_check_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the dtype of autocast's lower-precision ops on `device_type` in this thread."""
    _state.dtypes[_check_device_type(device_type)] = np.dtype(dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast keeps the casts of float32 parameters for the rest of the block."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn autocast's cache of cast parameters on or off in this thread."""
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached casts of parameters (the outermost autocast block does so when it ends)."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    """One autocast block deeper; returns the depth."""
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    """One autocast block shallower; returns the depth."""
    _state.nesting -= 1
    return _state.nesting


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"tensorgrad.{old}() is deprecated. Please use tensorgrad.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    """PyTorch's older `is_autocast_enabled("cpu")` (deprecated)."""
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype() -> np.dtype:
    """PyTorch's older `get_autocast_dtype("cpu")` (deprecated)."""
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype() -> np.dtype:
    """PyTorch's older `get_autocast_dtype("cuda")` (deprecated)."""
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


class autocast:  # noqa: N801 - PyTorch's name
    """Run the listed ops in mixed precision inside a block (or a decorated function).

        with tg.autocast("cpu", dtype=tg.float16):
            out = model(x)            # linear layers in float16
            loss = F.mse_loss(out, y) # the loss in float32
        loss.backward()               # outside the block, as PyTorch recommends

    `device_type` is "cpu" or "cuda"; `dtype` defaults to `get_autocast_dtype(device_type)`
    (float16); `enabled=False` turns autocast off inside an enclosing block; `cache_enabled` keeps
    the casts of float32 parameters for the block. An unsupported dtype, or "cuda" without a GPU,
    warns and leaves autocast off, as PyTorch does.
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else np.dtype(dtype)
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        self._enabled = bool(enabled) and self._supported()

    def _supported(self) -> bool:
        """Whether autocast can run as asked; if not, PyTorch's warning, and autocast stays off."""
        if self.device == "cuda":
            from tensorgrad.device import cuda_available

            if not cuda_available():
                warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=3)
                return False
        supported = (_FLOAT16, _FLOAT32) if self.device == "cuda" else (_FLOAT16,)
        if self.fast_dtype not in supported:
            name, dtypes = _DEVICE_NAMES[self.device], ", ".join(map(str, supported))
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                          f"{name} Autocast only supports dtypes of {dtypes} currently.", stacklevel=3)
            return False
        return True

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc_info: Any) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: F) -> F:
        """Use as a decorator: `func` runs inside this autocast block at every call."""
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                            "Did you mean to use autocast as a context manager?")

        @functools.wraps(func)
        def run_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return run_autocast  # type: ignore[return-value]
