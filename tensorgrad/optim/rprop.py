"""`Rprop`: resilient backpropagation, a per-weight step that grows or shrinks with the gradient's sign.

PyTorch's rule, step for step (etas = (etaminus, etaplus), step_sizes = (min, max)):

    s = sign(g * prev)
    step_size = clamp(step_size * (etaplus if s > 0, etaminus if s < 0, 1 if s == 0), min, max)
    g = 0 where s < 0                   (the sign flipped: skip this step, forget the gradient)
    p = p - sign(g) * step_size
    prev = g

`step_size` starts at the group's `lr`; the gradient's size never enters the step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import Optimizer, ParamsT, check_options, check_pair, count_step, hyper
from tensorgrad.tensor import Tensor

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop (Riedmiller and Braun), PyTorch's `torch.optim.Rprop` (no weight decay, as there).

    State per parameter: `step` (a 0-d float32 tensor), `prev` (the last gradient used) and
    `step_size`. `lr` may be a 1-element Tensor. `foreach` is accepted at any value (one numpy
    path: the rule is the same); `capturable=True` and `differentiable=True` are refused.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("Rprop", group, "lr")
        check_pair("Rprop", group, "etas", low=-float("inf"))
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(f"Rprop: invalid etas = {group['etas']}: they must be (etaminus, etaplus) "
                             "with 0 < etaminus < 1 < etaplus")
        check_pair("Rprop", group, "step_sizes", low=-float("inf"))  # PyTorch checks no range

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
        first = not state
        count_step(state, param, group, "prev", "step_size")
        if first:
            state["step_size"].data[...] = hyper(group["lr"])
        prev, step_size = state["prev"].data, state["step_size"].data
        sign = np.sign(grad * prev)
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, np.where(sign == 0, 1.0, sign)))
        step_size *= factor
        np.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad = np.where(factor == etaminus, 0, grad)  # a new array: the parameter's .grad stays
        param -= np.sign(grad) * step_size
        prev[...] = grad
