"""`Adagrad`: a per-weight learning rate that shrinks with the sum of its squared gradients.

PyTorch's rule, step for step (tutorial chapter 9), with step count t:

    g = grad + weight_decay * p
    sum = sum + g**2
    p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import Optimizer, ParamsT, check_options
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi, Hazan and Singer), PyTorch's `torch.optim.Adagrad`.

    State per parameter: `step` (a 0-d float32 tensor) and `sum`, made for every parameter as
    the optimizer is built (as PyTorch does), starting at `initial_accumulator_value`.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, *,
                 maximize: bool = False) -> None:
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "maximize": maximize}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p.data, self.state[p])

    def _init_state(self, param: np.ndarray, state: dict[str, Any]) -> None:
        # PyTorch starts every sum at the constructor's value, even for a group that sets its own.
        state["step"] = new_leaf(np.zeros((), np.float32))
        state["sum"] = new_leaf(np.full_like(param, self.defaults["initial_accumulator_value"]))

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("Adagrad", group, "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        if not state:  # a parameter added by add_param_group after construction
            self._init_state(param, state)
        step_count: Tensor = state["step"]
        step_count.data += 1
        step = float(step_count.data)
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state_sum = state["sum"].data
        state_sum += grad * grad
        std = np.sqrt(state_sum) + group["eps"]
        param -= clr * grad / std
