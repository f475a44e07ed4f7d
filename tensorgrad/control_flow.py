"""`tg.cond` and `tg.while_loop`: PyTorch's structured control flow, run as they run eagerly.

In PyTorch they exist so that `torch.compile` and `torch.export` can capture a branch or a loop
whose path depends on a tensor's value; run eagerly they are a Python `if` and `while`. tensorgrad
always runs eagerly, so that is what they are here, with PyTorch's argument checks: the gradient
flows through whichever branch ran, as it would through the `if`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorgrad.tensor import Tensor


def _truth(pred: Any, op: str) -> bool:
    """pred as a Python bool: a bool or number, or a tensor of one element."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got a tensor of "
                               f"shape {tuple(pred.shape)} ({op})")
        return bool(pred.item())
    if not isinstance(pred, bool | int | float):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {type(pred).__name__} ({op})")
    return bool(pred)


def cond(pred: bool | int | float | Tensor, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: tuple | list = ()) -> Any:
    """`true_fn(*operands)` if pred is true, else `false_fn(*operands)` (`torch.cond`)."""
    return (true_fn if _truth(pred, "cond") else false_fn)(*operands)


def while_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
               carried_inputs: tuple | list) -> tuple:
    """Run `carried = body_fn(*carried)` while `cond_fn(*carried)` is true; returns the final
    values as a tuple (`torch.while_loop`). The body returns as many values as it is given."""
    if not isinstance(carried_inputs, tuple | list):
        raise RuntimeError(f"while_loop: carried_inputs must be a tuple or list, got "
                           f"{type(carried_inputs).__name__}")
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried), "while_loop"):
        step = body_fn(*carried)
        step = tuple(step) if isinstance(step, tuple | list) else (step,)
        if len(step) != len(carried):
            raise RuntimeError(f"while_loop: body_fn returned {len(step)} values for the {len(carried)} "
                               "carried inputs it took; it must return as many as it takes")
        carried = step
    return carried
