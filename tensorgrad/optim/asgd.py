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

from tensorgrad.optim.optimizer import Optimizer, ParamsT, check_options, check_unsupported
from tensorgrad.tensor import new_leaf

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD, PyTorch's `torch.optim.ASGD` (which checks only `lr` and `weight_decay`).

    State per parameter: `step`, `eta` and `mu` (0-d float32 tensors) and `ax`. `foreach`,
    `differentiable` and `capturable` are accepted only at their defaults.
    """

    _host_scalars = frozenset({"step", "eta", "mu"})

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("ASGD", group, "lr", "weight_decay")
        check_unsupported("ASGD", group, "foreach", "differentiable", "capturable")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state["step"] = new_leaf(np.zeros((), np.float32))
            state["eta"] = new_leaf(np.array(lr, np.float32))
            state["mu"] = new_leaf(np.ones((), np.float32))
            state["ax"] = new_leaf(np.zeros_like(param))
        state["step"].data += 1
        step = float(state["step"].data)
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        eta, mu, ax = float(state["eta"].data), float(state["mu"].data), state["ax"].data
        param *= 1 - lambd * eta
        param -= eta * grad
        if mu != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        state["eta"].data[...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"].data[...] = 1 / max(1, step - group["t0"])
