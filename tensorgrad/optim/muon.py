"""`Muon`: momentum, orthogonalised by Newton-Schulz, for 2-D weights (tutorial chapter 9).

PyTorch's rule, step for step, per (2-D) parameter with gradient g:

    buf = lerp(buf, g, 1 - momentum)                         (starts at zero)
    u = lerp(g, buf, momentum) with Nesterov, else buf
    O = NS(u): u / max(|u|, eps), then ns_steps times X = a X + (b G + c G G) X with G = X X^T
    p = p * (1 - lr * weight_decay)
    p = p - adjust(lr, p.shape) * O

As in PyTorch, the Newton-Schulz iteration runs in bfloat16 (each product accumulated in float32,
then rounded to bfloat16's 8-bit mantissa): numpy has no bfloat16, so the rounding is done here on
float32 bit patterns, which gives PyTorch's numbers on the CPU.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorgrad.optim.optimizer import Optimizer, ParamsT, check_number, hyper, lerp_
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["Muon"]

# Keller Jordan's coefficients and epsilon, PyTorch's defaults.
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


class Muon(Optimizer):
    """Muon (MomentUm Orthogonalized by Newton-Schulz), PyTorch's `torch.optim.Muon`.

    Only 2-D parameters (the weights of hidden layers): train biases and embeddings with another
    optimizer such as AdamW. `adjust_lr_fn` scales the rate per matrix of shape (A, B):
    "original" (or None) by sqrt(max(1, A / B)), "match_rms_adamw" by 0.2 * sqrt(max(A, B)).
    State per parameter: `momentum_buffer`. `lr` may be a 1-element Tensor.

    >>> import tensorgrad as tg
    >>> w = tg.ones(2, 2, dtype=tg.float64, requires_grad=True)
    >>> (w * tg.eye(2, dtype=tg.float64)).sum().backward()
    >>> Muon([w], lr=0.1, weight_decay=0.0).step()
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a parameter with "
                                     f"size: {p.size()}")

    def _check_group(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Muon: Tensor lr must be 1-element")
        check_number("Muon", "learning rate lr", lr, tensor=True)
        check_number("Muon", "momentum", group["momentum"])
        check_number("Muon", "weight_decay", group["weight_decay"])
        if group["adjust_lr_fn"] not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {group['adjust_lr_fn']} is not supported")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        if param.dtype.kind == "c":
            raise RuntimeError("Muon does not support complex parameters")
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = new_leaf(np.zeros_like(grad))
        lr = hyper(group["lr"])
        update = _momentum(grad, state["momentum_buffer"].data, group["momentum"], group["nesterov"])
        ortho = zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        adjusted_lr = adjust_lr(lr, group["adjust_lr_fn"], param.shape)
        param *= 1 - lr * group["weight_decay"]
        param += -adjusted_lr * ortho.astype(param.dtype)


def _momentum(grad: np.ndarray, buf: np.ndarray, momentum: float, nesterov: bool) -> np.ndarray:
    """The direction to orthogonalise: `buf` moved toward `grad` (in place), then with Nesterov
    the gradient moved toward the new `buf`, as PyTorch's `grad.lerp(buf, momentum)`."""
    lerp_(buf, grad, 1 - momentum)
    if not nesterov:
        return buf
    update = grad.copy()
    lerp_(update, buf, momentum)
    return update


def adjust_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    """The rate for a matrix of shape (A, B): lr * sqrt(max(1, A / B)) ("original", None),
    lr * 0.2 * sqrt(max(A, B)) ("match_rms_adamw"), else lr."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


def zeropower_via_newtonschulz(grad: np.ndarray, ns_coefficients: tuple[float, float, float], ns_steps: int,
                               eps: float) -> np.ndarray:
    """The quintic Newton-Schulz iteration that maps `grad` near to U V^T (its SVD's U S V^T), in
    bfloat16 as PyTorch runs it; returns float32 arrays holding bfloat16 values.

    Each step is X = a X + (b G + c G G) X with G = X X^T, on the wide orientation of the matrix.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bfloat16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bfloat16(np.sqrt(np.sum(np.square(x, dtype=np.float64))))
    # the clamp's eps is rounded to bfloat16 too; a Python float mixes with a NumPy or CuPy norm
    x = _bfloat16(x / np.maximum(norm, float(_bfloat16(np.float32(eps)))))
    for _ in range(ns_steps):
        gram = _bfloat16(_matmul(x, x.T))
        gram_update = _addmm(gram, gram, gram, beta=b, alpha=c)
        x = _addmm(x, gram_update, x, beta=a, alpha=1.0)
    return x.T if tall else x


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b accumulated exactly enough (float64), rounded to float32 as a float32 accumulator ends."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def _addmm(c: np.ndarray, a: np.ndarray, b: np.ndarray, beta: float, alpha: float) -> np.ndarray:
    """PyTorch's bfloat16 `addmm` on the CPU: alpha * (a @ b) rounded to float32, then beta * c added
    to it with one rounding (a fused multiply-add), then rounded to bfloat16."""
    scaled = (np.float32(alpha) * _matmul(a, b)).astype(np.float64)
    return _bfloat16((np.float64(np.float32(beta)) * c.astype(np.float64) + scaled).astype(np.float32))


def _bfloat16(values: np.ndarray) -> np.ndarray:
    """`values` (an array or a NumPy scalar) rounded to bfloat16, returned as float32.

    bfloat16 is float32's top 16 bits, so rounding to it is integer arithmetic on float32's bit
    pattern: add just under half of the dropped part (0x7FFF), plus the kept part's lowest bit
    so that a tie goes to the even neighbour, then clear the low 16 bits. This is PyTorch's
    conversion (to nearest, ties to even; float64 goes through float32 first).
    """
    single = values.astype(np.float32)
    bits = single.view(np.uint32).astype(np.uint64)  # uint64: the addition may carry past 32 bits
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    rounded = bits.astype(np.uint32).view(np.float32)
    # nan keeps its bits (rounding could carry it into infinity)
    return np.where(np.isnan(single), single, rounded)
