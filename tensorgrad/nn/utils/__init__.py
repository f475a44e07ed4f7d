"""`tensorgrad.nn.utils`: gradient clipping and reparametrized weights, as `torch.nn.utils`.

Call between `loss.backward()` and `optimizer.step()`: `clip_grad_norm_` scales all gradients
together so that their joint norm is at most `max_norm` (the direction of the step is kept),
`clip_grad_value_` clamps each gradient element into [-clip_value, clip_value]. Both change the
`.grad` arrays in place.

`parametrize` computes a module's tensor from others (`register_parametrization`);
`parametrizations` holds weight and spectral normalisation built on it; `weight_norm` and
`spectral_norm` here are PyTorch's older, hook-based forms. `fuse_conv_bn_eval` and
`fuse_linear_bn_eval` fold an eval-mode BatchNorm into the layer before it; `skip_init` builds a
module without initialising it; `stateless.functional_call` is `tensorgrad.func.functional_call`
under its older name.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import numpy as np

from tensorgrad import dtypes
from tensorgrad.checks import ShapeError
from tensorgrad.device import namespace
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
           "parameters_to_vector", "vector_to_parameters", "parametrize", "parametrizations", "rnn",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "clip_grad_norm",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
           "skip_init", "stateless"]


class NotATensorError(TypeError, AttributeError):
    """A parameter that is not a Tensor: PyTorch fails reading its `.grad` (AttributeError), and
    Python's convention is TypeError; it is both, so code written for either catches it."""


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
            raise NotATensorError(f"{op}: parameters[{i}] is a {type(p).__name__}, not a Tensor")
    return [p.grad for p in parameters if p.grad is not None]


def _vector_norm(values: np.ndarray, norm_type: float) -> np.ndarray:
    """The p-norm of all of `values`: max |v| for inf, min |v| for -inf, the non-zero count for 0.

    A 0-d array where `values` live (on a GPU, no number comes back to the host here), in their
    dtype; half precision is summed in float32, as PyTorch does. The inf norms of an empty
    tensor are a RuntimeError (max and min have no identity), as in PyTorch.
    """
    if norm_type in (math.inf, -math.inf):
        if not values.size:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {norm_type} norm on an empty tensor "
                               "because the operation does not have an identity")
        magnitudes = np.abs(values)
        return magnitudes.max() if norm_type > 0 else magnitudes.min()
    if norm_type == 0:
        return (values != 0).sum().astype(values.dtype)
    wide = values.astype(np.float32) if values.dtype.itemsize < 4 else values
    return (np.sum(np.abs(wide)**norm_type) ** (1.0 / norm_type)).astype(values.dtype)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The `norm_type`-norm of all of `tensors` together (the norm of their norms), as a 0-d
    tensor: 0.0 for none. Pass the gradients (`[p.grad for p in params]`) to measure a step."""
    arrays = [t.data if isinstance(t, Tensor) else t for t in ([tensors] if isinstance(tensors, Tensor)
                                                                  else tensors) if t is not None]
    return _total_norm(arrays, float(norm_type), error_if_nonfinite, "get_total_norm")


def _total_norm(arrays: list[np.ndarray], norm_type: float, error_if_nonfinite: bool, op: str) -> Tensor:
    if not arrays:
        return new_leaf(np.asarray(0.0, dtypes.default_float))
    dtype = np.result_type(*(a.dtype for a in arrays))
    xp = namespace(arrays[0])
    per_tensor = xp.stack([_vector_norm(a, norm_type).astype(dtype) for a in arrays])
    total = xp.asarray(_vector_norm(per_tensor, norm_type).astype(dtype))
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"{op}: the total norm of order {norm_type} for gradients from `parameters` "
                           f"is non-finite ({total}), so it cannot be clipped. To disable this error "
                           "and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return new_leaf(total)


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Multiply every gradient in place by min(1, max_norm / (total_norm + 1e-6)), computed in
    the dtype of `total_norm` (a Tensor, as in PyTorch), as PyTorch computes it (a nan total
    gives nan gradients)."""
    grads = _gradients(parameters, "clip_grads_with_norm_")
    if grads and not isinstance(total_norm, Tensor):
        raise TypeError(f"clip_grads_with_norm_: total_norm must be a Tensor, got "
                        f"{type(total_norm).__name__}")
    _scale(grads, max_norm, total_norm)


def _scale(grads: list[np.ndarray], max_norm: float, total_norm: Tensor) -> None:
    if not grads:
        return
    # PyTorch's steps, each rounded to the total's dtype (half precision computes in float32 in
    # between, max_norm is not rounded to it): max_norm / t is t.reciprocal() * max_norm.
    total = total_norm.data
    dtype = total.dtype.type
    wide = np.float32 if total.dtype.itemsize < 4 else dtype
    denominator = (total.astype(wide) + wide(1e-6)).astype(dtype)
    reciprocal = (1 / denominator.astype(wide)).astype(dtype)
    coefficient = np.minimum((reciprocal.astype(wide) * wide(float(max_norm))).astype(dtype), 1.0)
    with np.errstate(invalid="ignore"):  # an inf gradient times 0 is nan, silently, as in PyTorch
        for g in grads:
            wide = np.float32 if g.dtype.itemsize < 4 else g.dtype
            np.multiply(g, coefficient.astype(wide), out=g, casting="unsafe")


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their total `norm_type`-norm is at most `max_norm`.

    `get_total_norm` of the gradients, then `clip_grads_with_norm_`: each gradient is multiplied
    by min(1, max_norm / (total + 1e-6)), as in PyTorch. Returns the total norm before clipping,
    as a 0-d tensor (0.0 if no parameter has a gradient). `foreach` is accepted for PyTorch
    compatibility; the work is the same.
    """
    grads = _gradients(parameters, "clip_grad_norm_")
    total = _total_norm(grads, float(norm_type), error_if_nonfinite, "clip_grad_norm_")
    _scale(grads, max_norm, total)
    return total


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and joined into one vector (differentiable: a `cat` of views)."""
    from tensorgrad.movement import cat

    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D `vec` into the parameters' data, in order (no graph)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    start = 0
    for p in parameters:
        count = p.numel()
        piece = vec.data[start:start + count]
        if piece.size != count:
            raise ShapeError(f"vector_to_parameters: vec of length {vec.numel()} is too short for the "
                             f"parameters (a parameter of shape {tuple(p.shape)} starts at {start})")
        p.data = piece.reshape(p.shape).copy()
        start += count


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    grads = _gradients(parameters, "clip_grad_value_")
    clip_value = float(clip_value)
    for g in grads:
        np.clip(g, -clip_value, clip_value, out=g)


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """`clip_grad_norm_` under its older name (deprecated in PyTorch, with a warning)."""
    warnings.warn("`nn.utils.clip_grad_norm` is now deprecated in favor of `nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


# isort: split
# The submodules PyTorch code reaches through `nn.utils` (after the functions they may use).
from tensorgrad.nn.utils import parametrizations, parametrize, rnn, stateless  # noqa: E402
from tensorgrad.nn.utils.fusion import (  # noqa: E402
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from tensorgrad.nn.utils.init import skip_init  # noqa: E402
from tensorgrad.nn.utils.legacy_norms import (  # noqa: E402
    remove_spectral_norm,
    remove_weight_norm,
    spectral_norm,
    weight_norm,
)
