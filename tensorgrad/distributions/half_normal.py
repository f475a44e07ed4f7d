"""`HalfNormal(scale)`: |X| for X ~ Normal(0, scale)."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.normal import Normal
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import AbsTransform
from tensorgrad.tensor import Tensor

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    """The half-normal distribution on [0, inf): the absolute value of N(0, scale**2)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        """This distribution with scale expanded to `batch_shape`."""
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Tensor:
        """The scale of the underlying normal."""
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        """scale sqrt(2 / pi)."""
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        """0."""
        return tg.zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        """scale**2 (1 - 2 / pi)."""
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Tensor) -> Tensor:
        """The normal's log-density + log 2 for value >= 0, else -inf."""
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return tg.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        """2 Phi(value / scale) - 1."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        """The normal's icdf at (1 + prob) / 2."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        """The normal's entropy - log 2."""
        return self.base_dist.entropy() - math.log(2)
