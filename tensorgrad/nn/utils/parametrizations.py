"""`tensorgrad.nn.utils.parametrizations`: weight and spectral normalisation and orthogonality as
parametrizations.

- `weight_norm(layer)`: w = g * v / ||v||, the length g and the direction v trained apart
  (Salimans and Kingma, 2016); originals `parametrizations.weight.original0` (g) and
  `original1` (v), as in PyTorch.
- `spectral_norm(layer)`: w = W / sigma(W), sigma the largest singular value, estimated by a
  step of power iteration per forward in training (Miyato et al., 2018): it keeps a GAN's
  discriminator 1-Lipschitz. The vectors of the iteration are buffers (`..._u`, `..._v`).
- `orthogonal(layer)`: the weight (or each matrix of a batch) has orthonormal columns (rows, if
  wide), as the image of an unconstrained tensor under the matrix exponential or the Cayley map
  of a skew-symmetric matrix, or a product of Householder reflections; with the dynamic
  trivialization (Lezcano-Casado, 2019) the result multiplies an orthogonal buffer `base`.
"""

from __future__ import annotations

from enum import Enum, auto

from scalargrad.engine import no_grad
from tensorgrad import checks, creation, dtypes, linalg
from tensorgrad.elementwise import allclose
from tensorgrad.movement import cat
from tensorgrad.nn import functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad.nn.modules import Module
from tensorgrad.nn.utils import parametrize
from tensorgrad.tensor import Tensor

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


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


def _is_orthogonal(q: Tensor) -> bool:
    """Whether q^H q is the identity, to PyTorch's tolerance (10 n eps)."""
    n, k = q.shape[-2], q.shape[-1]
    identity = creation.eye(k, dtype=q.dtype, device=q.device)
    return allclose(q.mH @ q, identity, atol=10.0 * n * dtypes.finfo(q.dtype).eps)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of a = QR (a tall) with diag(R) real and non-negative: LAPACK's Q (the product of the
    Householder reflections of geqrf, as PyTorch's) with its columns' signs set by R's diagonal."""
    q, r = linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Q from an unconstrained X: expm or Cayley of the skew-symmetric A = tril(X) - tril(X)^H
    (its first k columns for a tall X), or the product of the Householder reflections stored
    below X's diagonal; times `base` (an orthogonal buffer) with the trivialization."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        # Householder reflections of a complex matrix cannot reach every unitary matrix (PyTorch's
        # note [Householder complex]).
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:  # work on a tall matrix
            X, n, k = X.mT, k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()  # only n k - k (k - 1) / 2 parameters are used
            if n != k:  # embedded in a square matrix
                X = cat([X, X.new_zeros(*X.shape[:-2], n, n - k)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^-1
                identity = creation.eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(identity - 0.5 * A, identity + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # X's diagonal holds the signs (+-1) of Q's columns: read, not differentiated
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
        """An X the forward maps to Q (or to the orthogonal Q of Q's QR decomposition)."""
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803
        Q_init = Q  # noqa: N806
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q, n, k = Q.mT, k, n  # noqa: N806
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                # (no known inverse of these maps restricted to a rectangle: PyTorch's note)
                raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                          "or the Cayley parametrizations when use_trivialization=False.")
            # The reflectors of Q's QR decomposition, with the signs of diag(R) on the diagonal
            # (flipped where LAPACK skipped a reflection, tau == 0), so the forward gives Q's Q.
            A, tau = linalg.geqrf(Q.detach())  # noqa: N806 - (geqrf has no derivative)
            diagonal = A.diagonal(dim1=-2, dim2=-1)  # a view: written in place
            diagonal.sign_()
            diagonal.data[tau.data == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)  # noqa: N806
        else:  # completed to an n x n orthogonal matrix
            N = creation.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)  # noqa: N806
            Q = _make_orthogonal(cat([Q, N], dim=-1))  # noqa: N806
        self.base = Q
        # -I: the householder map sends zeros with a diagonal of -1s to the identity's columns
        neg_identity = creation.zeros_like(Q_init)
        neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_identity


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Reparametrize `module.<name>` (a matrix, or a batch of them: (..., m, n)) as orthogonal:
    Q^H Q = I for m >= n, Q Q^H = I otherwise. `orthogonal_map` is "matrix_exp", "cayley" or
    "householder" (default: "matrix_exp" for a square or complex matrix, else "householder").
    With `use_trivialization` (the default) an orthogonal buffer `base` is stored in
    `module.parametrizations.<name>[0]` and the map's image multiplies it. The initial Q is the
    weight if orthogonal, else the Q of its QR decomposition. Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:  # (the maps on the sphere would surprise more than they help: PyTorch's choice)
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
