"""`Wishart(df, covariance_matrix)`: the distribution of a sample scatter matrix, sum_i x_i x_i^T
over df draws x_i ~ N(0, Sigma), with df generalized to any real > p - 1 (p the matrix size).

Draws use the Bartlett decomposition: with Sigma = L L^T, W = (L A)(L A)^T where A is lower
triangular with sqrt(chi2(df - i)) on its diagonal (row i, from 0) and N(0, 1) below it. The chi2
draws come from the gamma sampler, whose implicit gradient makes the draws differentiable in df
as well as in L.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.chi2 import Chi2
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.multivariate_normal import _precision_to_scale_tril
from tensorgrad.distributions.utils import lazy_property, standard_normal, vec_to_tril_matrix
from tensorgrad.tensor import Tensor

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma function: sum_{i < p} digamma(x - i / 2), the derivative of
    mvlgamma(x, p)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = tg.arange(p, dtype=x.dtype, device=x.device).div(2)
    return tg.digamma(x.unsqueeze(-1) - halves.expand(tuple(x.shape) + (-1,))).sum(-1)


def _clamp_above_eps(x: Tensor) -> Tensor:
    """x (assumed >= 0) raised to at least the dtype's machine epsilon."""
    return x.clamp(min=tg.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """The Wishart distribution over p x p positive-definite matrices, with degrees of freedom
    `df` > p - 1 and a scale given by exactly one of `covariance_matrix` (Sigma),
    `precision_matrix` (Sigma^-1) or `scale_tril` (L, Sigma = L L^T), each (..., p, p). Everything
    is computed from L. Its mean is df Sigma."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The matrices' constraints, and df > p - 1."""
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(self, df: Tensor | float, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix), ("scale_tril", scale_tril))
                 if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        name, param = given[0]
        if not isinstance(param, Tensor) or param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch "
                             "dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tg.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(tg.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(tuple(batch_shape))
        event_shape = Size(param.shape[-2:])
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tg.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape: Size) -> Chi2:
        """Chi2(df - i) for the diagonal rows i = 0 .. p - 1, batch_shape + (p,)."""
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        offsets = tg.arange(p, dtype=tril.dtype, device=tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        """This distribution with df and its matrices expanded to `batch_shape` (views, no checks)."""
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        """L, the lower Cholesky factor of the covariance."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        """Sigma = L L^T."""
        L = self._unbroadcasted_scale_tril  # noqa: N806
        return tg.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """Sigma^-1, by a Cholesky solve against the identity."""
        eye = tg.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype,
                     device=self._unbroadcasted_scale_tril.device)
        return tg.cholesky_solve(eye, self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    def _df_matrix(self, factor: Tensor) -> Tensor:
        """A batch_shape tensor shaped to multiply batch_shape + (p, p) matrices."""
        return factor.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        """df Sigma."""
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        """(df - p - 1) Sigma, NaN where df <= p + 1 (no mode inside the support)."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = tg.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        """Var(W_ij) = df (Sigma_ij**2 + Sigma_ii Sigma_jj)."""
        V = self.covariance_matrix  # noqa: N806
        diag_v = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Size) -> Tensor:
        """(L A)(L A)^T with A the Bartlett factor: sqrt(chi2(df - i)) on the diagonal, N(0, 1)
        below."""
        p = self._event_shape[-1]
        diagonal = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        below = standard_normal(tuple(sample_shape + self._batch_shape) + (p * (p - 1) // 2,),
                                dtype=diagonal.dtype, device=diagonal.device)
        chol = tg.matmul(self._unbroadcasted_scale_tril, diagonal + vec_to_tril_matrix(below, diag=-1))
        return tg.matmul(chol, chol.mT)

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None) -> Tensor:
        """Draws of shape sample_shape + batch_shape + (p, p), differentiable in df and the scale.

        A draw that fails the positive-definite check (possible for df close to p - 1, or in
        rounding) is drawn again, up to `max_try_correction` (10) times, with a warning; a draw
        still singular after that is returned as is (its log_prob may be -inf).
        """
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._singular(sample)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                # redraw every position and keep the new draws only where the old were singular
                where = is_singular.view(tuple(is_singular.shape) + (1,) * (len(self._batch_shape) + 2))
                sample = tg.where(where, self._bartlett_sampling(sample_shape), sample)
                is_singular = self._singular(sample)
                if not bool(is_singular.any()):
                    break
        return sample

    def _singular(self, sample: Tensor) -> Tensor:
        """Per entry of sample_shape: whether any draw in its batch is not positive definite."""
        is_singular = ~self.support.check(sample.detach())
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        return is_singular

    def log_prob(self, value: Tensor) -> Tensor:
        """-df (p log 2 / 2 + log det L) - mvlgamma(df / 2, p) + (df - p - 1) / 2 log det(value)
        - tr(Sigma^-1 value) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        solved = tg.cholesky_solve(value, self._unbroadcasted_scale_tril)
        trace = solved.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_l) - tg.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * tg.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self) -> Tensor:
        """(p + 1) (p log 2 / 2 + log det L) + mvlgamma(df / 2, p) - (df - p - 1) / 2
        mvdigamma(df / 2, p) + df p / 2."""
        nu = self.df
        p = self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_l) + tg.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-tg.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + tg.mvlgamma(y + (p + 1) / 2, p=p))
