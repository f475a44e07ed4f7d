"""`Exponential(rate)`: waiting times of a Poisson process, with density rate * exp(-rate x)."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution with `rate` (the inverse of its mean) on [0, inf)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        """This distribution with rate expanded to `batch_shape` (a view, no checks)."""
        return expand_params(self, Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> Tensor:
        """1 / rate."""
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        """0."""
        return tg.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        """1 / rate."""
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        """1 / rate**2."""
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """e / rate with e ~ Exponential(1): differentiable in rate."""
        shape = self._extended_shape(sample_shape)
        e = tg.empty(tuple(shape), dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return e / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        """log(rate) - rate * value."""
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        """1 - exp(-rate * value)."""
        if self._validate_args:
            self._validate_sample(value)
        return 1 - tg.exp(-self.rate * value)

    def icdf(self, value: Tensor) -> Tensor:
        """-log(1 - value) / rate."""
        return -tg.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        """1 - log(rate)."""
        return 1.0 - tg.log(self.rate)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return -tg.log(-x)
