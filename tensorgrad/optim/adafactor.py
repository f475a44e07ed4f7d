"""`Adafactor`: Adam's second moment in sublinear memory, PyTorch's rule (tutorial chapter 9).

Per parameter, with step count t (a matrix's second moment is kept as a row and a column
factor, the means of g**2 over its last and second-to-last dimensions; a vector keeps it whole):

    beta2_hat = 1 - t**beta2_decay
    rho = min(lr, 1 / sqrt(t));  alpha = max(eps2, RMS(p)) * rho
    p = p * (1 - lr * weight_decay)
    row = lerp(row, mean(g**2, dim=-1), 1 - beta2_hat);  col = lerp(col, mean(g**2, dim=-2), ...)
    v = row @ col / max(mean(row, dim=-2), eps1)          (a vector: v = lerp(v, g**2, ...))
    u = g / max(sqrt(v), eps1);  p = p - alpha * u / max(1, RMS(u) / d)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import (
    Optimizer,
    ParamsT,
    check_number,
    hyper,
    lerp_,
    scalar_dtype,
)
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern), PyTorch's `torch.optim.Adafactor`.

    State per parameter: `step` (a 0-d float32 tensor), and `row_var` and `col_var` (the second
    moment's factors, shaped as the gradient with its last, or second-to-last, dimension 1) for a
    parameter of 2 or more dimensions, else `variance`. `eps` is (eps1, eps2): eps1 None means the
    machine epsilon of the parameter's dtype. `lr` may be a 1-element Tensor; `foreach` is
    accepted at any value (one numpy path: the rule is the same).
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0,
                 *, foreach: bool | None = None, maximize: bool = False) -> None:
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_number("Adafactor", "learning rate lr", group["lr"], tensor=True)
        beta2_decay = group["beta2_decay"]
        check_number("Adafactor", "beta2_decay", beta2_decay, low=-math.inf)
        if not beta2_decay <= 0:
            raise ValueError(f"Adafactor: beta2_decay should be <= 0 but is: {beta2_decay}")
        eps = group["eps"]
        if not isinstance(eps, tuple | list) or len(eps) != 2:
            raise TypeError(f"Adafactor: eps must be a pair (eps1 or None, eps2), got {eps!r}")
        if eps[0] is not None:
            check_number("Adafactor", "epsilon1 eps[0]", eps[0])
        check_number("Adafactor", "epsilon2 eps[1]", eps[1])
        check_number("Adafactor", "clipping threshold d", group["d"], low=1.0)
        check_number("Adafactor", "weight_decay", group["weight_decay"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        if param.dtype.kind == "c":
            raise RuntimeError("Adafactor does not support complex parameters")
        if not state:
            state["step"] = new_leaf(np.zeros((), scalar_dtype(group)))
            if grad.ndim > 1:
                state["row_var"] = new_leaf(np.zeros_like(grad[..., :1]))
                state["col_var"] = new_leaf(np.zeros_like(grad[..., :1, :]))
            else:
                state["variance"] = new_leaf(np.zeros_like(grad))
        state["step"].data += 1
        step = float(state["step"].data)
        lr = hyper(group["lr"])  # a Tensor lr keeps its dtype: alpha rounds as in PyTorch
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = float(np.finfo(param.dtype).eps)
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / step**0.5)
        alpha = max(eps2, _norm(param) / param.size**0.5) * rho
        if group["weight_decay"] != 0:
            param *= 1 - lr * group["weight_decay"]
        if grad.ndim > 1:
            row_var, col_var = state["row_var"].data, state["col_var"].data
            # mean(g**2) over a dimension, as PyTorch computes it: the norm squared over the size.
            lerp_(row_var, np.square(np.sqrt(np.sum(grad * grad, axis=-1, keepdims=True))) / grad.shape[-1],
                  one_minus_beta2)
            lerp_(col_var, np.square(np.sqrt(np.sum(grad * grad, axis=-2, keepdims=True))) / grad.shape[-2],
                  one_minus_beta2)
            estimate = (row_var @ col_var) / np.maximum(row_var.mean(axis=-2, keepdims=True), eps1)
        else:
            variance = state["variance"].data
            lerp_(variance, grad * grad, one_minus_beta2)
            estimate = variance
        update = np.reciprocal(np.sqrt(np.maximum(estimate, eps1 * eps1))) * grad
        denom = max(1.0, _norm(update) / (update.size**0.5 * group["d"]))
        param -= (alpha / denom) * update


def _norm(values: np.ndarray) -> float:
    """The 2-norm of all of `values`, as a Python float (PyTorch's `norm(2).item()`)."""
    return float(np.sqrt(np.sum(values * values)))
