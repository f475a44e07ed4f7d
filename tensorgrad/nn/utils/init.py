"""`skip_init`: build a module without spending time or random numbers on its initial values, as
`torch.nn.utils.skip_init` (tutorial chapter 10)."""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

from tensorgrad.creation import get_rng_state, set_rng_state
from tensorgrad.nn.modules import Module

__all__ = ["skip_init"]

ModuleT = TypeVar("ModuleT", bound=Module)


def skip_init(module_cls: type[ModuleT], *args: Any, **kwargs: Any) -> ModuleT:
    """`module_cls(*args, **kwargs)` with its parameters and buffers left uninitialised: their
    values are unspecified (set them yourself) and the default generator is left as it was.

    The class must take a `device` argument (RuntimeError otherwise), as in PyTorch. PyTorch
    builds the module on its storage-less "meta" device and then allocates empty memory;
    tensorgrad has no such device, so the constructor runs where the module will live and the
    generator's state is put back afterwards.
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    state = get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        set_rng_state(state)
