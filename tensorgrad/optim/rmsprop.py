"""`RMSprop`: divide the gradient by a running root mean square of it (Hinton's lecture 6e).

PyTorch's rule, step for step (tutorial chapter 9):

    g = grad + weight_decay * p
    v = alpha * v + (1 - alpha) * g**2
    avg = sqrt(v - gavg**2) with gavg = alpha * gavg + (1 - alpha) * g if centered, else sqrt(v)
    buf = momentum * buf + g / (avg + eps); p = p - lr * buf    (with momentum)
    p = p - lr * g / (avg + eps)                                (without)
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
    lerp_,
)
from tensorgrad.tensor import Tensor

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, PyTorch's `torch.optim.RMSprop` (with `centered` and `momentum`).

    State per parameter: `step` (a 0-d float32 tensor), `square_avg`, and `momentum_buffer` and
    `grad_avg` when momentum and centering are used. `lr` may be a 1-element Tensor. `foreach` is
    accepted at any value (one numpy path: the rule is the same); `capturable=True` and
    `differentiable=True` are refused.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("RMSprop", group, "lr", "eps", "momentum", "weight_decay", "alpha")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        alpha, momentum, lr = group["alpha"], group["momentum"], hyper(group["lr"])
        extra = (("momentum_buffer",) if momentum > 0 else ()) + (("grad_avg",) if group["centered"] else ())
        count_step(state, param, group, "square_avg", *extra)
        grad = decayed_gradient(param, grad, group)
        square_avg = state["square_avg"].data
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"].data
            lerp_(grad_avg, grad, 1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += group["eps"]
        if momentum > 0:
            buf = state["momentum_buffer"].data
            buf *= momentum
            buf += grad / avg
            param -= lr * buf
        else:
            param -= lr * grad / avg
