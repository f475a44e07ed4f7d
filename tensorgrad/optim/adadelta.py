"""`Adadelta`: steps scaled by the ratio of running RMS of past steps and of gradients (Zeiler).

PyTorch's rule, step for step:

    g = grad + weight_decay * p
    v = rho * v + (1 - rho) * g**2                      (square_avg)
    delta = sqrt(u + eps) / sqrt(v + eps) * g           (u: acc_delta, the running mean of delta**2)
    u = rho * u + (1 - rho) * delta**2
    p = p - lr * delta
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import (
    Optimizer,
    ParamsT,
    check_number,
    check_options,
    count_step,
    decayed_gradient,
    hyper,
)
from tensorgrad.tensor import Tensor

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, PyTorch's `torch.optim.Adadelta` (its `lr` scales the step; 1.0 is the paper's rule).

    State per parameter: `step` (a 0-d float32 tensor), `square_avg` and `acc_delta`. `lr` may be a
    1-element Tensor. `foreach` is accepted at any value (one numpy path: the rule is the same);
    `capturable=True` and `differentiable=True` are refused.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("Adadelta", group, "lr")
        check_number("Adadelta", "rho", group["rho"], high=1.0)
        check_options("Adadelta", group, "eps", "weight_decay")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        count_step(state, param, group, "square_avg", "acc_delta")
        grad = decayed_gradient(param, grad, group)
        square_avg, acc_delta = state["square_avg"].data, state["acc_delta"].data
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        std = np.sqrt(square_avg + eps)
        delta = np.sqrt(acc_delta + eps)
        delta /= std
        delta *= grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param -= hyper(group["lr"]) * delta
