"""`RAdam`: Adam with its adaptive rate rectified while the second moment is unreliable (Liu et al.).

PyTorch's rule, with step count t and rho_inf = 2 / (1 - beta2) - 1:

    g = grad + weight_decay * p              (L2 penalty in the gradient)
    p = p * (1 - lr * weight_decay)          (instead, with decoupled_weight_decay)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g**2
    rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
    p = p - lr * m / (1 - beta1**t) * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t     if rho_t > 5
    p = p - lr * m / (1 - beta1**t)                                                  otherwise
    with r_t = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, PyTorch's `torch.optim.RAdam`, with `decoupled_weight_decay` (RAdamW).

    State per parameter: `step` (a 0-d float32 tensor), `exp_avg` and `exp_avg_sq`. `lr` may be a
    1-element Tensor. `foreach` is accepted at any value (one numpy path: the rule is the same);
    `capturable=True` and `differentiable=True` are refused.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_adam_options("RAdam", group)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        lr, (beta1, beta2) = hyper(group["lr"]), group["betas"]
        step = count_step(state, param, group, "exp_avg", "exp_avg_sq")
        grad = decayed_gradient(param, grad, group)
        exp_avg, exp_avg_sq = state["exp_avg"].data, state["exp_avg_sq"].data
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction2 = 1 - beta2**step
        update = exp_avg / (1 - beta1**step) * lr
        rect = _rectification(beta2, step, bias_correction2)
        if rect is not None:
            denom = np.sqrt(exp_avg_sq)
            denom += group["eps"]
            update = update * (bias_correction2**0.5 / denom) * rect
        param -= update


def _rectification(beta2: float, step: float, bias_correction2: float) -> float | None:
    """RAdam's r_t, or None while the variance is not yet tractable (rho_t <= 5)."""
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    if not rho_t > 5.0:
        return None
    return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
