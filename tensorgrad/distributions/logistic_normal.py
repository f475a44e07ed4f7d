"""`LogisticNormal(loc, scale)`: a point of the simplex, stick-breaking of a diagonal normal."""

from __future__ import annotations

from typing import Any

from tensorgrad.distributions import constraints
from tensorgrad.distributions.normal import Normal
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import StickBreakingTransform
from tensorgrad.tensor import Tensor

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform()(X) for X ~ Normal(loc, scale) over the last dimension: draws of
    K + 1 probabilities from K-dimensional loc and scale."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        """This distribution with loc and scale expanded to `batch_shape`."""
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        """The normal's loc."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        """The normal's scale."""
        return self.base_dist.base_dist.scale
