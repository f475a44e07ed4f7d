"""`SGD`: stochastic gradient descent with momentum, dampening, weight decay and Nesterov.

PyTorch's rule, step for step (tutorial chapter 9):

    g = grad + weight_decay * p                      (L2 penalty, if weight_decay)
    buf = g at the first step, else momentum * buf + (1 - dampening) * g
    g = g + momentum * buf with Nesterov, else buf   (if momentum)
    p = p - lr * g
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import (
    Optimizer,
    ParamsT,
    check_number,
    check_options,
    decayed_gradient,
    hyper,
)
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), PyTorch's `torch.optim.SGD`.

    >>> import tensorgrad as tg
    >>> w = tg.tensor([1.0, -2.0], requires_grad=True)
    >>> (w * w).sum().backward()      # grad 2w = (2, -4)
    >>> SGD([w], lr=0.1).step()
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)

    State per parameter: `momentum_buffer` (when momentum is used). `lr` and `weight_decay` may
    be 1-element Tensors, as in PyTorch. `foreach` and `fused` are accepted at any value (one numpy
    path: the rule is the same); `differentiable=True` is refused.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float | Tensor = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("SGD", group, "lr", "momentum")
        check_number("SGD", "dampening", group["dampening"], low=-float("inf"))
        check_number("SGD", "weight_decay", group["weight_decay"], tensor=True)
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum > 0 and zero dampening, got "
                             f"momentum={group['momentum']}, dampening={group['dampening']}")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        momentum = group["momentum"]
        grad = decayed_gradient(param, grad, group)
        if momentum != 0:
            if "momentum_buffer" not in state:
                buf = np.copy(grad)  # an array even where grad is a 0-d result (a numpy scalar)
                state["momentum_buffer"] = new_leaf(buf)
            else:
                buf = state["momentum_buffer"].data
                buf *= momentum
                buf += (1 - group["dampening"]) * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        param -= hyper(group["lr"]) * grad
