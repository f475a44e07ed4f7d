"""Helpers the complex-gradient tests share, written for either library (`m` is torch or tensorgrad)."""

from __future__ import annotations

import numpy as np


def is_complex(m, t) -> bool:
    """Whether tensor t has a complex dtype."""
    return t.dtype in (m.complex64, m.complex128)


def weights(m, rng: np.random.Generator, t):
    """Standard normal weights of t's shape, complex for a complex t."""
    w = rng.standard_normal(tuple(t.shape))
    return m.tensor(w + 1j * rng.standard_normal(tuple(t.shape)) if is_complex(m, t) else w)


def inner(m, a, w):
    """sum(Re(conj(a) w)): PyTorch's real loss for weights w of a (real or complex)."""
    return m.real(a.conj() * w).sum() if is_complex(m, a) else (a * w).sum()
