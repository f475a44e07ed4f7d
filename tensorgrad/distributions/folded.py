"""What HalfNormal and HalfCauchy share: |X| for X of a distribution centred at 0, whose density
is twice X's on [0, inf), so its cdf, icdf and entropy follow from X's."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import AbsTransform
from tensorgrad.tensor import Tensor

__all__ = ["FoldedAtZero"]


class FoldedAtZero(TransformedDistribution):
    """|X| for X ~ `folded(0, scale)` (a subclass names the class in `folded`)."""

    folded: type
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = self.folded(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FoldedAtZero:
        """This distribution with scale expanded to `batch_shape`."""
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Tensor:
        """The scale of the distribution folded at 0."""
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        """0."""
        return tg.zeros_like(self.scale)

    def _folded_log_prob(self, value: Tensor) -> Tensor:
        """The folded distribution's log-density + log 2 for value >= 0, else -inf."""
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return tg.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        """2 F(value) - 1, F the folded distribution's cdf."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        """The folded distribution's icdf at (prob + 1) / 2."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        """The folded distribution's entropy - log 2."""
        return self.base_dist.entropy() - math.log(2)
