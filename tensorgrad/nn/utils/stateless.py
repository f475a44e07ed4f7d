"""`functional_call` under its older home, `torch.nn.utils.stateless` (deprecated in PyTorch in
favour of `torch.func.functional_call`, which `tensorgrad.func` has)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from tensorgrad import func

__all__ = ["functional_call"]


def functional_call(module: Any, parameters_and_buffers: Mapping[str, Any], args: Any = None,
                    kwargs: Mapping[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """module(*args, **kwargs) with the given tensors in place of its parameters and buffers:
    `tensorgrad.func.functional_call`, with PyTorch's FutureWarning for this old name."""
    warnings.warn("`nn.utils.stateless.functional_call` is deprecated (as of PyTorch 2.0). Please use "
                  "`tensorgrad.func.functional_call` instead, which is a drop-in replacement.", FutureWarning,
                  stacklevel=2)
    return func.functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                                strict=strict)
