"""`StudentT(df, loc=0., scale=1.)`: a normal whose variance is itself uncertain (heavier tails)."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.chi2 import Chi2
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all, standard_normal
from tensorgrad.tensor import Tensor

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t-distribution with `df` degrees of freedom, shifted by `loc`, scaled by `scale`."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Tensor | float, loc: Tensor | float = 0.0, scale: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        return expand_params(self, StudentT, batch_shape, _instance, ("df", "loc", "scale", "_chi2"))

    @property
    def mean(self) -> Tensor:
        """loc for df > 1, else NaN."""
        return tg.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def variance(self) -> Tensor:
        """scale**2 df / (df - 2) for df > 2; inf for 1 < df <= 2; NaN for df <= 1."""
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        return tg.where(self.df > 2, finite, tg.where(self.df > 1, math.inf, math.nan))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """loc + scale X / sqrt(Z / df), X ~ N(0, 1), Z ~ Chi2(df): differentiable in all three."""
        shape = self._extended_shape(sample_shape)
        x = standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * tg.rsqrt(z / self.df)

    def log_prob(self, value: Tensor) -> Tensor:
        """-(df + 1)/2 log(1 + y**2 / df) - log(scale sqrt(df pi) B(df/2, 1/2)), y = (value - loc)/scale."""
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + tg.lgamma(0.5 * self.df) - tg.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * tg.log1p(y**2.0 / self.df) - z

    def entropy(self) -> Tensor:
        """log(scale) + (df + 1)/2 (digamma((df + 1)/2) - digamma(df/2)) + log(df)/2 + log B(df/2, 1/2)."""
        lbeta = tg.lgamma(0.5 * self.df) + math.lgamma(0.5) - tg.lgamma(0.5 * (self.df + 1))
        half_df, half_df1 = 0.5 * self.df, 0.5 * (self.df + 1)
        return (self.scale.log() + half_df1 * (tg.digamma(half_df1) - tg.digamma(half_df))
                + 0.5 * self.df.log() + lbeta)
