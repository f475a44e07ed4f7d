"""`tensorgrad.nn.utils`: gradient clipping, as `torch.nn.utils` does it.

Call between `loss.backward()` and `optimizer.step()`: `clip_grad_norm_` scales all gradients
together so that their joint norm is at most `max_norm` (the direction of the step is kept),
`clip_grad_value_` clamps each gradient element into [-clip_value, clip_value]. Both change the
`.grad` arrays in place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from tensorgrad.device import namespace
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _gradients(parameters: Tensor | Iterable[Tensor], op: str) -> list[np.ndarray]:
    """The `.grad` arrays of `parameters` (one tensor or an iterable of them) that have one."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    elif not isinstance(parameters, Iterable):
        raise TypeError(f"{op}: parameters must be a Tensor or an iterable of Tensors, got "
                        f"{type(parameters).__name__}")
    parameters = list(parameters)
    for i, p in enumerate(parameters):
        if not isinstance(p, Tensor):
            raise TypeError(f"{op}: parameters[{i}] is a {type(p).__name__}, not a Tensor")
    return [p.grad for p in parameters if p.grad is not None]


def _vector_norm(values: np.ndarray, norm_type: float) -> np.ndarray:
    """The p-norm of all of `values`: max |v| for inf, min |v| for -inf, the non-zero count for 0.

    A 0-d array where `values` live (on a GPU, no number comes back to the host here).
    """
    magnitudes = np.abs(values)
    if norm_type in (math.inf, -math.inf):
        if not values.size:  # the max of nothing is 0, the min infinity, as in PyTorch
            return namespace(values).asarray(0.0 if norm_type > 0 else math.inf, values.dtype)
        return magnitudes.max() if norm_type > 0 else magnitudes.min()
    if norm_type == 0:
        return (values != 0).sum().astype(values.dtype)
    return np.sum(magnitudes**norm_type) ** (1.0 / norm_type)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their total `norm_type`-norm is at most `max_norm`.

    The total norm is the norm of the per-parameter norms (that is, of all gradients
    concatenated). Each gradient is multiplied by min(1, max_norm / (total + 1e-6)), as in
    PyTorch. Returns the total norm before clipping, as a 0-d tensor (0.0 if no parameter has
    a gradient). `foreach` is accepted for PyTorch compatibility; the work is the same.
    """
    op = "clip_grad_norm_"
    grads = _gradients(parameters, op)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return Tensor(np.asarray(0.0, np.float32))
    dtype = np.result_type(*(g.dtype for g in grads))
    xp = namespace(grads[0])
    per_parameter = xp.stack([_vector_norm(g, norm_type).astype(dtype) for g in grads])
    total = xp.asarray(_vector_norm(per_parameter, norm_type).astype(dtype))
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"{op}: the total norm of order {norm_type} for gradients from `parameters` "
                           f"is non-finite ({total}), so it cannot be clipped. To disable this error "
                           "and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    # In the gradients' dtype, as PyTorch computes it (a nan total gives nan gradients).
    coefficient = np.minimum(dtype.type(max_norm) / (total + dtype.type(1e-6)), dtype.type(1.0))
    for g in grads:
        g *= coefficient.astype(g.dtype)
    return new_leaf(total)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    grads = _gradients(parameters, "clip_grad_value_")
    clip_value = float(clip_value)
    for g in grads:
        np.clip(g, -clip_value, clip_value, out=g)
