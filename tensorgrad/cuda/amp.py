"""`tg.cuda.amp`: PyTorch's older spellings of `tg.amp` for CUDA, deprecated there and here."""

from __future__ import annotations

from typing import Any

from tensorgrad import amp
from tensorgrad.amp import deprecated_spellings, warn_deprecated_spelling

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]

autocast, GradScaler = deprecated_spellings("cuda")


def custom_fwd(fwd: Any = None, *, cast_inputs: Any = None) -> Any:
    """`tg.amp.custom_fwd(device_type="cuda")` (deprecated spelling)."""
    warn_deprecated_spelling("cuda", "custom_fwd", "custom_fwd(args..., device_type='cuda')")
    return amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Any = None) -> Any:
    """`tg.amp.custom_bwd(device_type="cuda")` (deprecated spelling)."""
    warn_deprecated_spelling("cuda", "custom_bwd", "custom_bwd(args..., device_type='cuda')")
    return amp.custom_bwd(bwd, device_type="cuda")
