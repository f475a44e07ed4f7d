"""The older, hook-based `weight_norm` and `spectral_norm` of `torch.nn.utils` (and their removal).

They keep PyTorch's names and state dict keys: weight normalisation trains `weight_g` and
`weight_v`, spectral normalisation trains `weight_orig` and keeps the power iteration's vectors
as the buffers `weight_u` and `weight_v`. A forward pre-hook recomputes `module.weight` (a plain
tensor attribute then, not a parameter) before each call. `nn.utils.parametrizations` has the
newer forms, which PyTorch recommends.
"""

from __future__ import annotations

import warnings
from typing import Any

from scalargrad.engine import no_grad
from tensorgrad.nn import functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad.nn.modules import Module, Parameter
from tensorgrad.nn.utils.parametrizations import norm_except_dim
from tensorgrad.tensor import Tensor

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


class WeightNorm:
    """The forward pre-hook of `weight_norm`: name = g * v / norm_except_dim(v, dim)."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module) -> Tensor:
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, self.dim))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _hook_of(module: Module, kind: type, name: str) -> tuple[Any, Any]:
    """(handle key, hook) of the `kind` pre-hook for `name`, or a ValueError as PyTorch's."""
    for key, (hook, _) in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return key, hook
    what = "weight_norm" if kind is WeightNorm else "spectral_norm"
    raise ValueError(f"{what} of '{name}' not found in {type(module).__name__}")


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split `module.<name>` into a length `<name>_g` (one per slice along `dim`; of all of it
    for dim=None) and a direction `<name>_v`, trained apart; the weight is recomputed before
    each forward. Returns the module."""
    warnings.warn("`nn.utils.weight_norm` is deprecated in favor of `nn.utils.parametrizations.weight_norm`.",
                  FutureWarning, stacklevel=2)
    for hook, _ in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    hook = WeightNorm(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    if not isinstance(weight, Parameter):
        raise TypeError(f"weight_norm: {type(module).__name__}.{name} must be a Parameter")
    del module._parameters[name]
    with no_grad():
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, hook.dim)))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo `weight_norm`: `module.<name>` is one parameter again, with the current value."""
    key, hook = _hook_of(module, WeightNorm, name)
    weight = hook.compute_weight(module)
    del module._forward_pre_hooks[key]
    delattr(module, name)
    del module._parameters[name + "_g"], module._parameters[name + "_v"]
    setattr(module, name, Parameter(weight.detach()))
    return module


class SpectralNormDimError(IndexError, RuntimeError):
    """A `dim` that is not a dimension of the weight: PyTorch's hook fails in `permute` with a
    RuntimeError, and Python's convention for an index out of range is IndexError; it is both."""


class SpectralNorm:
    """The forward pre-hook of `spectral_norm`: name = name_orig / sigma, with one step of power
    iteration on the buffers name_u and name_v per forward in training mode."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def as_matrix(self, weight: Tensor) -> Tensor:
        """The weight as a matrix with dimension `dim` as its rows."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = self.as_matrix(weight)
        if do_power_iteration:
            with no_grad():  # v first, then u: PyTorch's order in this older form
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(matrix.T @ u, dim=0, eps=self.eps))
                    u.copy_(F.normalize(matrix @ v, dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()  # the graph must not see the next step's in-place update
        sigma = u @ (matrix @ v)
        return weight / sigma

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide `module.<name>` by its largest singular value before each forward (power iteration
    on the weight seen as a matrix with `dim` as rows: 0, or 1 for a transposed convolution).
    The trained parameter becomes `<name>_orig`. Returns the module."""
    for hook, _ in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        dim = 1 if type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") else 0
    hook = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    if not 0 <= dim < weight.ndim:  # PyTorch's older form takes no negative dim either
        raise SpectralNormDimError(f"spectral_norm: dim {dim} is not a dimension of {name} (expected 0 to "
                                   f"{weight.ndim - 1} for a tensor of shape {tuple(weight.shape)})")
    with no_grad():
        matrix = hook.as_matrix(weight)
        u = F.normalize(matrix.new_empty(matrix.shape[0]).normal_(0, 1), dim=0, eps=eps)
        v = F.normalize(matrix.new_empty(matrix.shape[1]).normal_(0, 1), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())  # the raw weight until the first forward, as in PyTorch
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo `spectral_norm`: `module.<name>` is one parameter again, the normalised weight."""
    key, hook = _hook_of(module, SpectralNorm, name)
    with no_grad():
        weight = hook.compute_weight(module, do_power_iteration=False)
    del module._forward_pre_hooks[key]
    delattr(module, name)
    del module._parameters[name + "_orig"]
    del module._buffers[name + "_u"], module._buffers[name + "_v"]
    setattr(module, name, Parameter(weight.detach()))
    return module
