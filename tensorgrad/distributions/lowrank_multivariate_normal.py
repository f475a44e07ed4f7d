"""`LowRankMultivariateNormal(loc, cov_factor, cov_diag)`: the Gaussian whose covariance is
W W^T + diag(D), W of shape (n, m) with small rank m.

Its log-density never forms the n x n covariance: the Woodbury identity and the matrix
determinant lemma reduce the inverse and the determinant to the m x m "capacitance" matrix
C = I + W^T D^-1 W, of which only the Cholesky factor is kept.
"""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.multivariate_normal import _batch_mahalanobis, _batch_mv
from tensorgrad.distributions.utils import lazy_property, standard_normal
from tensorgrad.tensor import Tensor

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(W: Tensor, D: Tensor) -> Tensor:  # noqa: N803 - the math's names
    """The Cholesky factor of I + W^T D^-1 W, batched over W (..., n, m) and D (..., n)."""
    m = W.shape[-1]
    Wt_Dinv = W.mT / D.unsqueeze(-2)  # noqa: N806
    K = tg.matmul(Wt_Dinv, W) + tg.eye(m, dtype=W.dtype, device=W.device)  # noqa: N806
    return tg.linalg.cholesky(K)


def _batch_lowrank_logdet(W: Tensor, D: Tensor, capacitance_tril: Tensor) -> Tensor:  # noqa: N803
    """log det(W W^T + D) = log det(C) + log det(D) (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor,  # noqa: N803
                               capacitance_tril: Tensor) -> Tensor:
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2 (the Woodbury identity)."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)  # noqa: N806
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)  # noqa: N806
    mahalanobis_term1 = (x.pow(2) / D).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal with mean `loc` (..., n) and covariance
    `cov_factor @ cov_factor.mT + diag(cov_diag)`, `cov_factor` (..., n, m), `cov_diag` (..., n)
    positive; the three broadcast to the batch shape."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = Size(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if Size(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if Size(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = tg.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                    cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {Size(loc.shape)}, cov_factor "
                             f"{Size(cov_factor.shape)}, cov_diag {Size(cov_diag.shape)}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + Size(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        """The covariance's diagonal: row sums of W**2 plus D."""
        variance = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return variance.expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        """The covariance's Cholesky factor, as D^1/2 chol(I + D^-1/2 W W^T D^-1/2): that matrix's
        eigenvalues are at least 1, so its factorization is well conditioned."""
        n = self._event_shape[0]
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze  # noqa: N806
        K = tg.matmul(Dinvsqrt_W, Dinvsqrt_W.mT) + tg.eye(n, dtype=Dinvsqrt_W.dtype, device=Dinvsqrt_W.device)  # noqa: N806
        return (cov_diag_sqrt_unsqueeze * tg.linalg.cholesky(K)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        """W W^T + diag(D)."""
        W = self._unbroadcasted_cov_factor  # noqa: N806
        return (tg.matmul(W, W.mT) + tg.diag_embed(self._unbroadcasted_cov_diag)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """D^-1 - A^T A with A = L_C^-1 W^T D^-1 (the Woodbury identity)."""
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)  # noqa: N806
        A = tg.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)  # noqa: N806
        precision_matrix = tg.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return precision_matrix.expand(self._matrix_shape())

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """loc + W eps_W + sqrt(D) eps_D with independent standard normal eps: differentiable."""
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = standard_normal(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self) -> Tensor:
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                     self._capacitance_tril)

    def log_prob(self, value: Tensor) -> Tensor:
        """-(n log(2 pi) + log det(Sigma) + (x - loc)^T Sigma^-1 (x - loc)) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self) -> Tensor:
        """(n (1 + log(2 pi)) + log det(Sigma)) / 2."""
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))
