"""`Adamax`: Adam with the infinity norm in place of the second moment, PyTorch's rule.

Per parameter, with step count t:

    g = grad + weight_decay * p
    m = beta1 * m + (1 - beta1) * g            (first moment)
    u = max(beta2 * u, |g| + eps)              (exponentially weighted infinity norm)
    p = p - lr / (1 - beta1**t) * m / u
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import (
    Optimizer,
    ParamsT,
    check_adam_options,
    count_step,
    decayed_gradient,
    hyper,
    lerp_,
)
from tensorgrad.tensor import Tensor

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma and Ba, section 7), PyTorch's `torch.optim.Adamax`.

    State per parameter: `step` (a 0-d float32 tensor, as in PyTorch), `exp_avg` and `exp_inf`.
    `lr` may be a 1-element Tensor. `foreach` is accepted at any value (one numpy path: the rule is
    the same); `differentiable=True` and `capturable=True` are refused.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_adam_options("Adamax", group)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        step = count_step(state, param, group, "exp_avg", "exp_inf")
        grad = decayed_gradient(param, grad, group)
        exp_avg, exp_inf = state["exp_avg"].data, state["exp_inf"].data
        lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        np.maximum(exp_inf, np.abs(grad) + group["eps"], out=exp_inf)
        step_size = hyper(group["lr"]) / (1 - beta1**step)
        param -= step_size * exp_avg / exp_inf
