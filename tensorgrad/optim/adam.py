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
    hyper,
    lerp_,
)
from tensorgrad.tensor import Tensor

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma and Ba), PyTorch's `torch.optim.Adam`, with `amsgrad` and L2 weight decay.

    `decoupled_weight_decay=True` makes it AdamW. State per parameter: `step` (a 0-d float32
    tensor, as in PyTorch), `exp_avg`, `exp_avg_sq` and, with AMSGrad, `max_exp_avg_sq`. `lr` and
    the `betas` may be 1-element Tensors (both betas or neither), as in PyTorch. `foreach` and
    `fused` are accepted at any value (one numpy path: the rule is the same); `capturable=True`
    and `differentiable=True` are refused.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        name = type(self).__name__
        check_adam_options(name, group, tensor_betas=True)
        if isinstance(group["betas"][0], Tensor) != isinstance(group["betas"][1], Tensor):
            raise ValueError(f"{name}: betas must be either both numbers or both Tensors")
        # As PyTorch: a tuple, a 1-element Tensor squeezed to 0-d.
        group["betas"] = tuple(beta.reshape(()) if isinstance(beta, Tensor) and beta.ndim else beta
                               for beta in group["betas"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        lr, eps = hyper(group["lr"]), group["eps"]
        beta1, beta2 = (hyper(beta) for beta in group["betas"])
        extra = ("max_exp_avg_sq",) if group["amsgrad"] else ()
        step = count_step(state, param, group, "exp_avg", "exp_avg_sq", *extra)
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

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        group["decoupled_weight_decay"] = True  # whatever a loaded state says, as PyTorch's AdamW
