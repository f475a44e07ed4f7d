"""`tg.cpu.amp`: PyTorch's older spellings of `tg.amp` for the CPU, deprecated there and here."""

from tensorgrad.amp import deprecated_spellings

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = deprecated_spellings("cpu")
