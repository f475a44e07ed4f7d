"""`Poisson(rate)`: the number of events in a unit of time at `rate` events per unit."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution: P(k) = rate**k exp(-rate) / k! on the nonnegative integers."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        """This distribution with rate expanded to `batch_shape` (a view, no checks)."""
        return expand_params(self, Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> Tensor:
        """rate."""
        return self.rate

    @property
    def mode(self) -> Tensor:
        """floor(rate)."""
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        """rate."""
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Counts (in rate's dtype) of shape sample_shape + batch_shape."""
        shape = tuple(self._extended_shape(sample_shape))
        with tg.no_grad():
            return tg.poisson(self.rate.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        """value log(rate) - rate - lgamma(value + 1)."""
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return tg.xlogy(value, rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (tg.log(self.rate),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return tg.exp(x)
