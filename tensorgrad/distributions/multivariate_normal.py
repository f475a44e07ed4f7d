"""`MultivariateNormal`: the Gaussian over vectors, given by a mean and one of a covariance
matrix, a precision matrix or a lower-triangular scale (the covariance's Cholesky factor L,
covariance = L L^T). Everything is computed from L: draws are loc + L eps, and the log-density
needs only triangular solves and L's diagonal."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.utils import lazy_property, standard_normal
from tensorgrad.tensor import Tensor

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Matrix times vector, batched and broadcast: (..., n, n) @ (..., n) -> (..., n)."""
    return tg.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:  # noqa: N803 - L, as in the math
    """|L^-1 x|^2 for a batch of lower-triangular L (..., n, n) and vectors x (..., n), where x's
    batch shape may be larger (broadcast) than L's.

    x's batch dimensions are rearranged so that one triangular solve against each distinct L
    (flattened to b x n x n) handles every vector that shares it (as n x c right-hand sides).
    """
    n = bx.shape[-1]
    bx_batch_shape = tuple(bx.shape[:-1])
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = bL.dim() - 2  # noqa: N806
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    # x's shape (..., s1*t1, s2*t2, n) becomes (..., s1, t1, s2, t2, n) where t are L's batch sizes
    bx_new_shape = tuple(bx.shape[:outer_batch_dims])
    for s_l, s_x in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1], strict=True):
        bx_new_shape += (s_x // s_l, s_l)
    bx_new_shape += (n,)
    bx = bx.reshape(bx_new_shape)
    # then (..., s1, s2, t1, t2, n): L's batch dimensions last, next to n
    permute_dims = (list(range(outer_batch_dims)) + list(range(outer_batch_dims, new_batch_dims, 2))
                    + list(range(outer_batch_dims + 1, new_batch_dims, 2)) + [new_batch_dims])
    bx = bx.permute(permute_dims)
    flat_L = bL.reshape(-1, n, n)  # b x n x n  # noqa: N806
    flat_x = bx.reshape(-1, flat_L.shape[0], n)  # c x b x n
    flat_x_swap = flat_x.permute(1, 2, 0)  # b x n x c
    m_swap = tg.linalg.solve_triangular(flat_L, flat_x_swap, upper=False).pow(2).sum(-2)  # b x c
    m = m_swap.t()  # c x b
    permuted_m = m.reshape(tuple(bx.shape[:-1]))
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    return permuted_m.permute(permute_inv_dims).reshape(bx_batch_shape)


def _precision_to_scale_tril(P: Tensor) -> Tensor:  # noqa: N803
    """The lower Cholesky factor of P^-1 without inverting P: flipping both axes of the Cholesky
    factor of the flipped P gives an upper-triangular U with P = U U^T, so L = (U^T)^-1 is lower
    triangular and L L^T = P^-1."""
    Lf = tg.linalg.cholesky(tg.flip(P, (-2, -1)))  # noqa: N806
    L_inv = tg.transpose(tg.flip(Lf, (-2, -1)), -2, -1)  # noqa: N806
    eye = tg.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return tg.linalg.solve_triangular(L_inv, eye, upper=False)


def _matrix(value: Any, name: str) -> Tensor:
    if not isinstance(value, Tensor) or value.dim() < 2:
        raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
    return value


class MultivariateNormal(Distribution):
    """The multivariate normal N(loc, Sigma) over vectors of length n = loc.shape[-1] (the event
    shape). Give exactly one of `covariance_matrix` (Sigma), `precision_matrix` (Sigma^-1) or
    `scale_tril` (lower-triangular L with positive diagonal, Sigma = L L^T), each (..., n, n);
    the batch shape broadcasts loc's leading dimensions with the matrix's."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(loc, Tensor) or loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if sum(m is not None for m in (covariance_matrix, precision_matrix, scale_tril)) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                             "specified.")
        if scale_tril is not None:
            name, matrix = "scale_tril", _matrix(scale_tril, "scale_tril matrix")
        elif covariance_matrix is not None:
            name, matrix = "covariance_matrix", _matrix(covariance_matrix, "covariance_matrix")
        else:
            name, matrix = "precision_matrix", _matrix(precision_matrix, "precision_matrix")
        batch_shape = tg.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + tuple(matrix.shape[-2:])))
        self.loc = loc.expand(tuple(batch_shape) + (loc.shape[-1],))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tg.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        """This distribution with loc and its matrix expanded to `batch_shape` (views, no checks)."""
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        """L, the lower Cholesky factor of the covariance."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        """L L^T."""
        L = self._unbroadcasted_scale_tril  # noqa: N806
        return tg.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """(L L^T)^-1, from L."""
        return tg.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def variance(self) -> Tensor:
        """The covariance's diagonal: the row sums of L**2."""
        shape = tuple(self._batch_shape + self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """loc + L eps with eps ~ N(0, I): differentiable in loc and the matrix."""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        """log(det(Sigma)) / 2 = sum(log(diag(L)))."""
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        """-(n log(2 pi) + |L^-1 (value - loc)|^2) / 2 - log(det(L))."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        """n (1 + log(2 pi)) / 2 + log(det(L))."""
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))
