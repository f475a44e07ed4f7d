"""`Weibull(scale, concentration)`: scale * E**(1/concentration) for E ~ Exponential(1)."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.exponential import Exponential
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import AffineTransform, PowerTransform
from tensorgrad.distributions.utils import broadcast_all, euler_constant
from tensorgrad.tensor import Tensor

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution on (0, inf): density
    (k / lambda) (x / lambda)**(k - 1) exp(-(x / lambda)**k), lambda = `scale`, k = `concentration`."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(tg.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        """scale Gamma(1 + 1/k)."""
        return self.scale * tg.exp(tg.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        """scale ((k - 1) / k)**(1/k) (NaN for k < 1, as PyTorch's)."""
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self) -> Tensor:
        """scale**2 (Gamma(1 + 2/k) - Gamma(1 + 1/k)**2)."""
        return self.scale.pow(2) * (tg.exp(tg.lgamma(1 + 2 * self.concentration_reciprocal))
                                    - tg.exp(2 * tg.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self) -> Tensor:
        """gamma (1 - 1/k) + log(scale / k) + 1, gamma the Euler-Mascheroni constant."""
        return (euler_constant * (1 - self.concentration_reciprocal)
                + tg.log(self.scale * self.concentration_reciprocal) + 1)
