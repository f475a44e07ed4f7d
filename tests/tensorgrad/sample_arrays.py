"""Random test inputs shared by the test files: real or complex normal arrays of a given dtype."""

from __future__ import annotations

import numpy as np


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
    """Standard normal values of `shape` in `dtype`; a complex dtype gets a normal imaginary part too."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)
