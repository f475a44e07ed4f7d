"""Optimizers: `SGD` (with momentum, weight decay, Nesterov) and `Adam` (tutorial chapter 10).

Both follow PyTorch's update rules exactly, so a model trained with either library from the same
initial weights follows the same path (up to float rounding). An update writes into each
parameter's array in place, outside the graph, and bumps its version counter, as PyTorch's
`step()` does under `no_grad`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np

from tensorgrad.tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam"]


class Optimizer(ABC):
    """What SGD and Adam share: the parameter list, `zero_grad()`, and the in-place write."""

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        for i, p in enumerate(self.params):
            if not isinstance(p, Tensor) or not p.is_leaf or not p.requires_grad:
                raise ValueError(
                    f"{type(self).__name__}: parameter {i} must be a leaf tensor that requires grad "
                    "(a model's parameters(), or a tensor made with requires_grad=True)"
                )
        if lr < 0:
            raise ValueError(f"{type(self).__name__}: invalid learning rate {lr}")
        self.lr = lr

    def zero_grad(self) -> None:
        """Drop every parameter's gradient (set it to None, PyTorch's default)."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """Update every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is not None:
                self._update(i, p.data, p.grad)
                p._versions[0] += 1  # an in-place change: graphs that saved p must not reuse it

    @abstractmethod
    def _update(self, i: int, param: np.ndarray, grad: np.ndarray) -> None:
        """Change parameter `i`'s array in place, given its gradient: the optimizer's rule."""


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's rule.

    g = grad + weight_decay * p; with momentum, buf = momentum * buf + g (buf = g at the first
    step) and g = buf, or g + momentum * buf with Nesterov; then p -= lr * g.
    """

    def __init__(self, params: Iterable[Tensor], lr: float, momentum: float = 0, weight_decay: float = 0,
                 nesterov: bool = False) -> None:
        super().__init__(params, lr)
        if momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: momentum and weight_decay must be >= 0, got {momentum}, {weight_decay}")
        if nesterov and momentum <= 0:
            raise ValueError("SGD: Nesterov momentum needs a momentum > 0")
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
        self.buffers: list[np.ndarray | None] = [None] * len(self.params)

    def _update(self, i: int, param: np.ndarray, grad: np.ndarray) -> None:
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        if self.momentum:
            buf = self.buffers[i]
            if buf is None:
                buf = self.buffers[i] = grad.copy()
            else:
                buf *= self.momentum
                buf += grad
            grad = grad + self.momentum * buf if self.nesterov else buf
        param -= self.lr * grad


class Adam(Optimizer):
    """Adam (Kingma and Ba), PyTorch's rule, with L2 weight decay added to the gradient.

    m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps).
    """

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0) -> None:
        super().__init__(params, lr)
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"Adam: betas must be in [0, 1), got {betas}")
        if eps < 0 or weight_decay < 0:
            raise ValueError(f"Adam: eps and weight_decay must be >= 0, got {eps}, {weight_decay}")
        self.betas, self.eps, self.weight_decay = betas, eps, weight_decay
        self.steps = [0] * len(self.params)
        self.exp_avg: list[np.ndarray | None] = [None] * len(self.params)
        self.exp_avg_sq: list[np.ndarray | None] = [None] * len(self.params)

    def _update(self, i: int, param: np.ndarray, grad: np.ndarray) -> None:
        beta1, beta2 = self.betas
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        if self.exp_avg[i] is None:
            self.exp_avg[i], self.exp_avg_sq[i] = np.zeros_like(param), np.zeros_like(param)
        m, v = self.exp_avg[i], self.exp_avg_sq[i]
        self.steps[i] += 1
        t = self.steps[i]
        m += (1 - beta1) * (grad - m)  # = beta1 m + (1 - beta1) g, as PyTorch's lerp
        v *= beta2
        v += (1 - beta2) * grad * grad
        step_size = self.lr / (1 - beta1**t)
        denom = np.sqrt(v) / math.sqrt(1 - beta2**t) + self.eps
        param -= step_size * m / denom
