"""`Adagrad`: a per-weight learning rate that shrinks with the sum of its squared gradients.

PyTorch's rule, step for step (tutorial chapter 9), with step count t:

    g = grad + weight_decay * p
    sum = sum + g**2
    p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import (
    Optimizer,
    ParamsT,
    check_options,
    count_step,
    decayed_gradient,
    hyper,
    scalar_dtype,
)
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi, Hazan and Singer), PyTorch's `torch.optim.Adagrad`.

    State per parameter: `step` (a 0-d float32 tensor) and `sum`, made for every parameter as
    the optimizer is built (as PyTorch does), starting at `initial_accumulator_value`. `lr` may be
    a 1-element Tensor. `foreach` and `fused` are accepted at any value (one numpy path: the rule
    is the same); `differentiable=True` is refused.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p.data, self.state[p], group)

    def _init_state(self, param: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        # PyTorch starts every sum at the constructor's value, even for a group that sets its own.
        state["step"] = new_leaf(np.zeros((), scalar_dtype(group)))
        state["sum"] = new_leaf(np.full_like(param, self.defaults["initial_accumulator_value"]))

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("Adagrad", group, "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        if not state:  # a parameter added by add_param_group after construction
            self._init_state(param, state, group)
        step = count_step(state, param, group)
        grad = decayed_gradient(param, grad, group)
        clr = hyper(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        state_sum = state["sum"].data
        state_sum += grad * grad
        std = np.sqrt(state_sum) + group["eps"]
        param -= clr * grad / std
