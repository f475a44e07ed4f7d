"""`tensorgrad.utils.data.dataloader`: PyTorch's import path for `DataLoader` and its helpers (the
objects of `tensorgrad.data`, not copies)."""

from tensorgrad.data import DataLoader, default_collate, default_convert, get_worker_info

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]
