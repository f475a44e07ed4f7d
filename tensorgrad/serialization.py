"""`tg.save` and `tg.load`: state dicts to and from `.npz` files, never pickle (tutorial chapter 10).

A state dict (`model.state_dict()`) maps names to tensors; `save` writes one array per name
into a numpy `.npz` archive, and `load` reads them back as tensors, in the same order and
dtypes. No pickle is written or read, so loading a file cannot run code from it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from tensorgrad.tensor import Tensor, _wrap

__all__ = ["save", "load"]

PathOrFile = str | os.PathLike | IO[bytes]


def save(obj: Mapping[str, Any], path: PathOrFile) -> None:
    """Write a state dict (names to tensors, arrays or numbers) to `path` as an `.npz` archive.

    The file is written exactly at `path` (numpy would add `.npz` to a name without it).
    """
    if not isinstance(obj, Mapping):
        raise TypeError(
            f"tg.save stores a state dict (a mapping of names to tensors), got {type(obj).__name__}"
        )
    arrays = {}
    for name, value in obj.items():
        if not isinstance(name, str):
            raise TypeError(f"tg.save: keys must be strings, got {name!r}")
        array = np.asarray(value.data if isinstance(value, Tensor) else value)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"tg.save: {name} is not numeric (dtype {array.dtype}); only tensors and "
                            "numbers are stored, never pickled objects")
        arrays[name] = array
    if isinstance(path, str | os.PathLike):
        with open(path, "wb") as file:
            np.savez(file, **arrays)
    else:
        np.savez(path, **arrays)


def load(path: PathOrFile) -> dict[str, Tensor]:
    """Read a state dict written by `save`: names to tensors, in the order they were saved."""
    with np.load(path, allow_pickle=False) as archive:
        return {name: _wrap(archive[name]) for name in archive.files}
