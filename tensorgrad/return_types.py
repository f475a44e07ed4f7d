"""Named tuples that ops return, as `torch.return_types`: `values, indices = t.max(dim=1)`.

Each is a plain `namedtuple` named after its op, so it unpacks, indexes (`out[1]`) and reads by
name (`out.indices`) as PyTorch's do, and prints as `max(values=..., indices=...)`.
"""

from __future__ import annotations

from collections import namedtuple

__all__ = ["max", "min"]

max = namedtuple("max", ["values", "indices"])  # noqa: A001 - PyTorch's name, torch.return_types.max
min = namedtuple("min", ["values", "indices"])  # noqa: A001
