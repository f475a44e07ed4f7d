"""`NAdam`: Adam with Nesterov momentum (Dozat), PyTorch's rule with its momentum schedule.

Per parameter, with step count t:

    g = grad + weight_decay * p              (L2 penalty in the gradient)
    p = p * (1 - lr * weight_decay)          (instead, with decoupled_weight_decay: NAdamW)
    mu_t = beta1 * (1 - 0.96**(t * momentum_decay) / 2)       (and mu_{t+1} the same at t + 1)
    prod = prod * mu_t                       (the product of the mu so far, kept in float32)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g**2
    denom = sqrt(v / (1 - beta2**t)) + eps
    p = p - lr * (1 - mu_t) / (1 - prod) * g / denom
    p = p - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / denom
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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, PyTorch's `torch.optim.NAdam`, with `momentum_decay` and `decoupled_weight_decay`.

    State per parameter: `step` and `mu_product` (0-d float32 tensors on the host, as PyTorch
    keeps them), `exp_avg` and `exp_avg_sq`. `lr` may be a 1-element Tensor. `foreach` is accepted
    at any value (one numpy path: the rule is the same); `capturable=True` and
    `differentiable=True` are refused.
    """

    _host_scalars = frozenset({"step", "mu_product"})

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_adam_options("NAdam", group, "momentum_decay")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        lr, (beta1, beta2) = hyper(group["lr"]), group["betas"]
        # (mu_product: the product of the momenta so far)
        step = count_step(state, param, group, "exp_avg", "exp_avg_sq", mu_product=1.0)
        grad = decayed_gradient(param, grad, group)
        mu = _momentum(beta1, step, group["momentum_decay"])
        mu_next = _momentum(beta1, step + 1, group["momentum_decay"])
        state["mu_product"].data *= mu  # in the product's own float32, as PyTorch multiplies it
        mu_product = float(state["mu_product"].data)
        exp_avg, exp_avg_sq = state["exp_avg"].data, state["exp_avg_sq"].data
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        denom = np.sqrt(exp_avg_sq / (1 - beta2**step))
        denom += group["eps"]
        param += (-lr * (1.0 - mu) / (1.0 - mu_product)) * grad / denom
        param += (-lr * mu_next / (1.0 - mu_product * mu_next)) * exp_avg / denom


def _momentum(beta1: float, step: float, momentum_decay: float) -> float:
    """NAdam's momentum at `step`: beta1 * (1 - 0.96**(step * momentum_decay) / 2)."""
    return beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
