"""`ASGD`: averaged stochastic gradient descent (Polyak and Juditsky), PyTorch's rule.

Per parameter, with step count t (eta starts at lr, mu at 1):

    g = grad + weight_decay * p
    p = p * (1 - lambd * eta) - eta * g
    ax = p if mu == 1, else ax + mu * (p - ax)           (the running average of the weights)
    eta = lr / (1 + lambd * lr * t)**alpha
    mu = 1 / max(1, t - t0)                              (averaging starts after step t0)

`eta` and `mu` are 0-d float32 tensors, as PyTorch keeps them, so the step uses their float32
values. The averaged weights `ax` are in the state; the parameters themselves are not averaged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import Optimizer, ParamsT, check_options, count_step, decayed_gradient, hyper
from tensorgrad.tensor import Tensor

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD, PyTorch's `torch.optim.ASGD` (which checks only `lr` and `weight_decay`).

    State per parameter: `step`, `eta` and `mu` (0-d float32 tensors) and `ax`. `lr` may be a
    1-element Tensor. `foreach` is accepted at any value (one numpy path: the rule is the same);
    `differentiable=True` and `capturable=True` are refused.
    """

    _host_scalars = frozenset({"step", "eta", "mu"})

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("ASGD", group, "lr", "weight_decay")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        lr, lambd = hyper(group["lr"]), group["lambd"]
        step = count_step(state, param, group, "ax", eta=lr, mu=1.0)
        grad = decayed_gradient(param, grad, group)
        eta, mu, ax = float(state["eta"].data), float(state["mu"].data), state["ax"].data
        param *= 1 - lambd * eta
        param -= eta * grad
        if mu != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        state["eta"].data[...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"].data[...] = 1 / max(1, step - group["t0"])
