"""`tg.amp`: automatic mixed precision, as `torch.amp`.

`autocast` runs each op PyTorch lists in the dtype it suits (see `tensorgrad.autocasting`);
`GradScaler` scales the loss up before backward so that small float16 gradients do not round to
zero, and unscales them before the optimizer's step, skipping a step whose gradients overflowed.
`custom_fwd` / `custom_bwd` let a custom `autograd.Function` take part.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorgrad.amp.grad_scaler import GradScaler, OptState
from tensorgrad.autocasting import (
    autocast,
    cast_eligible,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler", "OptState"]


def _check_device_type_argument(device_type: Any) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorate a custom Function's `forward` for autocast. With `cast_inputs=dtype`, inside an
    autocast block its floating inputs are cast to dtype and it runs with autocast off; without,
    it runs in the surrounding autocast state. Outside autocast it changes nothing."""
    _check_device_type_argument(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward_under_autocast(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        ctx._dtype = get_autocast_dtype(device_type)
        autocasting = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = autocasting and cast_inputs is None
        if cast_inputs is None or not autocasting:
            return fwd(ctx, *args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(ctx, *cast_eligible(args, np.dtype(cast_inputs), device_type),
                       **cast_eligible(kwargs, np.dtype(cast_inputs), device_type))

    return forward_under_autocast


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate a custom Function's `backward` so that it runs in the autocast state its forward
    ran in (see `custom_fwd`)."""
    _check_device_type_argument(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward_under_autocast(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(ctx, *args, **kwargs)

    return backward_under_autocast


def warn_deprecated_spelling(module: str, old: str, new: str) -> None:
    """The FutureWarning of PyTorch's older `torch.cuda.amp` / `torch.cpu.amp` spellings."""
    warnings.warn(f"`tensorgrad.{module}.amp.{old}(args...)` is deprecated. "
                  f"Please use `tensorgrad.amp.{new}` instead.", FutureWarning, stacklevel=3)


def deprecated_spellings(device_type: str) -> tuple[type, type]:
    """`autocast` and `GradScaler` of `tg.<device_type>.amp`: `tg.amp`'s with the device fixed, which
    warn that they are deprecated, as PyTorch's do."""

    class DeviceAutocast(autocast):
        __doc__ = f"`tg.amp.autocast({device_type!r}, ...)` (deprecated spelling); dtype float16 by default."

        def __init__(self, enabled: bool = True, dtype: Any = np.float16, cache_enabled: bool = True) -> None:
            warn_deprecated_spelling(device_type, "autocast", f"autocast({device_type!r}, args...)")
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class DeviceGradScaler(GradScaler):
        __doc__ = f"`tg.amp.GradScaler({device_type!r}, ...)` (deprecated spelling)."

        def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
            warn_deprecated_spelling(device_type, "GradScaler", f"GradScaler({device_type!r}, args...)")
            super().__init__(device_type, init_scale, growth_factor, backoff_factor, growth_interval, enabled)

    DeviceAutocast.__name__ = DeviceAutocast.__qualname__ = "autocast"
    DeviceGradScaler.__name__ = DeviceGradScaler.__qualname__ = "GradScaler"
    DeviceAutocast.__module__ = DeviceGradScaler.__module__ = f"tensorgrad.{device_type}.amp"
    return DeviceAutocast, DeviceGradScaler
