"""`HalfCauchy(scale)`: |X| for X ~ Cauchy(0, scale)."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.cauchy import Cauchy
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import AbsTransform
from tensorgrad.tensor import Tensor

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """The half-Cauchy distribution on [0, inf): density 2 / (pi scale (1 + (x / scale)**2))."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        """This distribution with scale expanded to `batch_shape`."""
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Tensor:
        """The scale of the full Cauchy distribution."""
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        """inf."""
        scale = self.scale
        return tg.full(tuple(self._extended_shape()), math.inf, dtype=scale.dtype, device=scale.device)

    @property
    def mode(self) -> Tensor:
        """0."""
        return tg.zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        """The Cauchy's (inf)."""
        return self.base_dist.variance

    def log_prob(self, value: Tensor) -> Tensor:
        """The Cauchy's log-density + log 2 on [0, inf), -inf below."""
        if self._validate_args:
            self._validate_sample(value)
        value = tg.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return tg.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        """2 F(value) - 1, F the Cauchy's cdf."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        """The Cauchy's icdf at (prob + 1) / 2."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        """The Cauchy's entropy - log 2."""
        return self.base_dist.entropy() - math.log(2)
