"""`Uniform(low, high)`: equally likely values in the half-open interval [low, high)."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["Uniform"]


class Uniform(Distribution):
    """The uniform distribution on [low, high); `low` and `high` broadcast to the batch shape."""

    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """low < high."""
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low: Tensor | float, high: Tensor | float, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        """This distribution with low and high expanded to `batch_shape` (views, no checks)."""
        return expand_params(self, Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        """interval(low, high)."""
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        """(low + high) / 2."""
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        """NaN: every value is equally likely."""
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        """(high - low) / sqrt(12)."""
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        """(high - low)**2 / 12."""
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """low + u * (high - low) with u ~ U[0, 1): differentiable in low and high."""
        shape = self._extended_shape(sample_shape)
        u = tg.rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        """-log(high - low) inside [low, high), -inf outside."""
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return tg.log(lb.mul(ub)) - tg.log(self.high - self.low)

    def cdf(self, value: Tensor) -> Tensor:
        """(value - low) / (high - low), clamped to [0, 1]."""
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        """low + value * (high - low)."""
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        """log(high - low)."""
        return tg.log(self.high - self.low)
