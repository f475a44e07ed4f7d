"""`Adam` and `AdamW`: adaptive moment estimation, PyTorch's rules (tutorial chapter 9).

Per parameter, with step count t:

    g = grad + weight_decay * p            (Adam: L2 penalty in the gradient)
    p = p * (1 - lr * weight_decay)        (AdamW instead: decay the weights, "decoupled")
    m = beta1 * m + (1 - beta1) * g        (first moment)
    v = beta2 * v + (1 - beta2) * g**2     (second moment; AMSGrad uses the running max of v)
    p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
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
    lerp_,
)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma and Ba), PyTorch's `torch.optim.Adam`, with `amsgrad` and L2 weight decay.

    `decoupled_weight_decay=True` makes it AdamW. State per parameter: `step` (a 0-d float32
    tensor, as in PyTorch), `exp_avg`, `exp_avg_sq` and, with AMSGrad, `max_exp_avg_sq`.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 maximize: bool = False, decoupled_weight_decay: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        name = type(self).__name__
        check_adam_options(name, group)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        extra = ("max_exp_avg_sq",) if group["amsgrad"] else ()
        step = count_step(state, param, "exp_avg", "exp_avg_sq", *extra)
        grad = decayed_gradient(param, grad, group)
        exp_avg, exp_avg_sq = state["exp_avg"].data, state["exp_avg_sq"].data
        lerp_(exp_avg, grad, 1 - beta1)  # beta1 m + (1 - beta1) g
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        if group["amsgrad"]:
            second_moment = state["max_exp_avg_sq"].data
            np.maximum(second_moment, exp_avg_sq, out=second_moment)
        else:
            second_moment = exp_avg_sq
        step_size = lr / (1 - beta1**step)
        denom = np.sqrt(second_moment) / (1 - beta2**step) ** 0.5 + eps
        param -= step_size * exp_avg / denom


class AdamW(Adam):
    """AdamW (Loshchilov and Hutter), PyTorch's `torch.optim.AdamW`: Adam with decoupled decay.

    The weights shrink by `lr * weight_decay` each step instead of the decay entering the
    gradient (and so the moments). Default `weight_decay=0.01`, as in PyTorch.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        group["decoupled_weight_decay"] = True  # whatever a loaded state says, as PyTorch's AdamW
