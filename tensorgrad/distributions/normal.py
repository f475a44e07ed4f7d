"""`Normal(loc, scale)`: the Gaussian with mean loc and standard deviation scale."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all, standard_normal
from tensorgrad.tensor import Tensor

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """The normal distribution N(loc, scale**2); `loc` and `scale` broadcast to the batch shape.

    >>> import tensorgrad as tg
    >>> tg.distributions.Normal(0.0, 1.0).log_prob(tg.tensor(0.0))  # -log(sqrt(2 pi))
    tensor(-0.9189)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        """This distribution with loc and scale expanded to `batch_shape` (views, no checks)."""
        return expand_params(self, Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def stddev(self) -> Tensor:
        """scale."""
        return self.scale

    @property
    def variance(self) -> Tensor:
        """scale**2."""
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """loc + eps * scale with eps ~ N(0, 1): differentiable in loc and scale."""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        """-(value - loc)**2 / (2 scale**2) - log(scale) - log(sqrt(2 pi))."""
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        """(1 + erf((value - loc) / (scale sqrt(2)))) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + tg.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        """loc + scale sqrt(2) erfinv(2 value - 1)."""
        return self.loc + self.scale * tg.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        """1/2 + log(2 pi)/2 + log(scale)."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + tg.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * tg.log(-math.pi / y)
