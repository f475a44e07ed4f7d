"""`FisherSnedecor(df1, df2)`: the F distribution, the ratio of two scaled chi-squared variables."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.gamma import Gamma
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution with `df1` and `df2` degrees of freedom, on (0, inf).
    Draws are X1 / X2 with X1 ~ Gamma(df1 / 2, df1) and X2 ~ Gamma(df2 / 2, df2), so `rsample`
    is differentiable through the gammas' implicit reparameterization."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Tensor | float, df2: Tensor | float, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        return expand_params(self, FisherSnedecor, batch_shape, _instance,
                             ("df1", "df2", "_gamma1", "_gamma2"))

    @property
    def mean(self) -> Tensor:
        """df2 / (df2 - 2), NaN for df2 <= 2."""
        df2 = tg.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        """(df1 - 2) / df1 * df2 / (df2 + 2), NaN for df1 <= 2."""
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return tg.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        """2 df2**2 (df1 + df2 - 2) / (df1 (df2 - 2)**2 (df2 - 4)), NaN for df2 <= 4."""
        df2 = tg.where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """X1 / X2 from the two gammas (both clamped to the dtype's tiny, as PyTorch's)."""
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = tg.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        """log of Gamma((d1 + d2)/2) (d1/d2)**(d1/2) x**(d1/2 - 1) / (Gamma(d1/2) Gamma(d2/2)
        (1 + d1 x / d2)**((d1 + d2)/2))."""
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * tg.log(value)
        t3 = (ct1 + ct2) * tg.log1p(ct3 * value)
        return t1 + t2 - t3
