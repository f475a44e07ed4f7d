"""`tensorgrad.nn.utils.parametrizations`: weight and spectral normalisation as parametrizations.

- `weight_norm(layer)`: w = g * v / ||v||, the length g and the direction v trained apart
  (Salimans and Kingma, 2016); originals `parametrizations.weight.original0` (g) and
  `original1` (v), as in PyTorch.
- `spectral_norm(layer)`: w = W / sigma(W), sigma the largest singular value, estimated by a
  step of power iteration per forward in training (Miyato et al., 2018): it keeps a GAN's
  discriminator 1-Lipschitz. The vectors of the iteration are buffers (`..._u`, `..._v`).
"""

from __future__ import annotations

from scalargrad.engine import no_grad
from tensorgrad import checks
from tensorgrad.nn import functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad.nn.modules import Module
from tensorgrad.nn.utils import parametrize
from tensorgrad.tensor import Tensor

__all__ = ["weight_norm", "spectral_norm"]


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of v over every dimension but `dim`, kept as size-1 dimensions (dim -1: the
    norm of all of v, 0-d), PyTorch's `norm_except_dim`."""
    if dim == -1:
        return v.norm()
    dim = checks.dim(dim, v.ndim, "weight_norm")
    return (v * v).sum(tuple(d for d in range(v.ndim) if d != dim), keepdim=True).sqrt()


class _WeightNorm(Module):
    """w = g * v / norm_except_dim(v, dim); its `right_inverse` splits a weight into (g, v)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize `module.<name>` as g * v / ||v||: the norm taken over every dimension but
    `dim` (each output unit of a Linear or Conv has its own g), or over all of it for
    dim=None. Returns the module."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    """w = W / sigma, sigma = u . (W v) from power iteration on W seen as a matrix (dim `dim`
    first). u and v are buffers, refined in training mode at each forward."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"spectral_norm: Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            with no_grad():
                matrix = self._as_matrix(weight)
                u = matrix.new_empty(matrix.shape[0]).normal_(0, 1)
                v = matrix.new_empty(matrix.shape[1]).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            self._power_method(matrix, 15)  # a good estimate from the start

    def _as_matrix(self, weight: Tensor) -> Tensor:
        """The weight as a matrix with dimension `dim` as its rows."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, matrix: Tensor, iterations: int) -> None:
        """Refine u and v (in place: they are the buffers the state dict holds)."""
        with no_grad():
            for _ in range(iterations):
                self._u.copy_(F.normalize(matrix @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(matrix.T @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._as_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u @ (matrix @ v)
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value  # any weight is its own preimage: its spectral norm is taken at the next read


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Reparametrize `module.<name>` as W / sigma(W), sigma its largest singular value (W seen as
    a matrix with `dim` as rows: 0, or 1 for a transposed convolution). Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{type(module).__name__}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") else 0
    parametrization = _SpectralNorm(weight, n_power_iterations, dim, eps)
    return parametrize.register_parametrization(module, name, parametrization)
