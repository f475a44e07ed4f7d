"""Helpers the distributions share: broadcasting their parameters, probabilities <-> logits,
properties computed on first use, and summing a log-density over its rightmost dimensions."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import tensorgrad as tg
from tensorgrad.tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property",
           "euler_constant", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_all(*values: Tensor | float) -> tuple[Tensor, ...]:
    """The values as tensors broadcast to one shape; Python numbers become tensors of the first
    tensor's dtype and device (of the default dtype when all are numbers), as PyTorch's."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number or tensorgrad.Tensor, got "
                         f"{[type(v).__name__ for v in values]}")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = tg.get_default_dtype() if first is None else first.dtype
    device = None if first is None else first.device
    tensors = [v if isinstance(v, Tensor) else tg.as_tensor(v, dtype=dtype, device=device) for v in values]
    return tuple(tg.broadcast_tensors(*tensors))


def standard_normal(shape: Sequence[int], dtype: Any, device: Any) -> Tensor:
    """Draws from N(0, 1) in `shape`, from tensorgrad's generator (seeded by `tg.manual_seed`)."""
    return tg.randn(tuple(shape), dtype=dtype, device=device)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """`value` summed over its `dim` rightmost dimensions (an event's log-density from its parts)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid(logits) for a binary variable, else softmax over the last dimension."""
    if is_binary:
        return tg.sigmoid(logits)
    return tg.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """`probs` clamped into [eps, 1 - eps] of its dtype, so their logs stay finite."""
    eps = tg.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log(p) - log(1 - p) for a binary variable, else log(p) (logits up to a constant per row)."""
    clamped = clamp_probs(probs)
    if is_binary:
        return tg.log(clamped) - tg.log1p(-clamped)
    return tg.log(clamped)


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first access and then stored on the instance (so `probs` made from
    `logits` is computed once). Computed with gradients on, so it stays differentiable even when
    first read inside `tg.no_grad()`."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        with tg.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n: int, diag: int, device: Any) -> Tensor:
    """The (n, n) bool mask of the entries on or below diagonal `diag`."""
    arange = tg.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of `mat` (..., n, n) on or below diagonal `diag`, row by row, as (..., k)."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The (..., n, n) matrix, zero above diagonal `diag`, filled row by row from `vec` (..., k)."""
    # k = n (n + 1) / 2 + n diag for diag <= 0 (fewer entries below the main diagonal): solve for n
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > tg.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
