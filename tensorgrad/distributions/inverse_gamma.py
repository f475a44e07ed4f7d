"""`InverseGamma(concentration, rate)`: 1 / X for X ~ Gamma(concentration, rate)."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.gamma import Gamma
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import PowerTransform
from tensorgrad.tensor import Tensor

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The inverse gamma distribution on (0, inf): density
    rate**c x**(-c - 1) exp(-rate / x) / Gamma(c), c = `concentration`."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        """This distribution with its parameters expanded to `batch_shape`."""
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self) -> Tensor:
        """The gamma's concentration."""
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        """The gamma's rate."""
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        """rate / (c - 1) (inf for c <= 1)."""
        result = self.rate / (self.concentration - 1)
        return tg.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self) -> Tensor:
        """rate / (c + 1)."""
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        """rate**2 / ((c - 1)**2 (c - 2)) (inf for c <= 2)."""
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return tg.where(self.concentration > 2, result, math.inf)

    def entropy(self) -> Tensor:
        """c + log(rate) + lgamma(c) - (1 + c) digamma(c)."""
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
