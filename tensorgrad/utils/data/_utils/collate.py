"""`tensorgrad.utils.data._utils.collate`: PyTorch's import path for `default_collate` and
`default_convert` (the functions of `tensorgrad.data`, not copies)."""

from tensorgrad.data import default_collate, default_convert

__all__ = ["default_collate", "default_convert"]
