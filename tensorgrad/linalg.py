"""`tg.linalg`: linear algebra under `torch.linalg`'s names (`tg.linalg.cross`, ...).

Each name is the op itself, defined beside its kind (products in `matmul`, norms in `reduce`),
with `torch.linalg`'s defaults where they differ from the top-level names'.
"""

from __future__ import annotations

from tensorgrad.matmul import cross as _cross  # (`tensorgrad.matmul` is also the function's name)
from tensorgrad.tensor import Tensor

__all__ = ["cross"]


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002 - PyTorch's name
    """The cross product of 3-vectors along `dim` (-1 by default, unlike `tg.cross`)."""
    return _cross(input, other, dim)
