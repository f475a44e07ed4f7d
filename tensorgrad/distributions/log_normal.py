"""`LogNormal(loc, scale)`: exp(X) for X ~ Normal(loc, scale)."""

from __future__ import annotations

from typing import Any

from tensorgrad.distributions import constraints
from tensorgrad.distributions.normal import Normal
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import ExpTransform
from tensorgrad.tensor import Tensor

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """The log-normal distribution on (0, inf): its log is Normal(loc, scale)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogNormal:
        """This distribution with loc and scale expanded to `batch_shape`."""
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        """The mean of log(X)."""
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        """The standard deviation of log(X)."""
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        """exp(loc + scale**2 / 2)."""
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        """exp(loc - scale**2)."""
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        """(exp(scale**2) - 1) exp(2 loc + scale**2)."""
        scale2 = self.scale.pow(2)
        return scale2.expm1() * (2 * self.loc + scale2).exp()

    def entropy(self) -> Tensor:
        """The normal's entropy + loc."""
        return self.base_dist.entropy() + self.loc
