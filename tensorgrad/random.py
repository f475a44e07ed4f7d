"""`tg.random`, PyTorch's `torch.random`: the default generator, its seed and its state, and
`fork_rng` to draw numbers without disturbing the stream the rest of a program sees."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from tensorgrad.creation import (
    Generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
    the_default_generator,
)

default_generator: Generator = the_default_generator

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed",
           "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices: Iterable[Any] | None = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str | None = None) -> Iterator[None]:
    """Within the block, draw as you like; on leaving it the default generator is back where it
    was. `enabled=False` makes it a no-op. The GPU's numbers come from the same generator here,
    so `devices` and `device_type` change nothing."""
    if not enabled:
        yield
        return
    saved = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(saved)
