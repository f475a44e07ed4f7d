"""`Kumaraswamy(concentration1, concentration0)`: a Beta-like distribution on (0, 1) with a
closed-form CDF, (1 - U**(1/b))**(1/a) for U ~ Uniform(0, 1)."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import AffineTransform, PowerTransform
from tensorgrad.distributions.uniform import Uniform
from tensorgrad.distributions.utils import broadcast_all, euler_constant
from tensorgrad.tensor import Tensor

__all__ = ["Kumaraswamy"]


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E[X**n] = b B(1 + n/a, b), through lgamma."""
    arg1 = 1 + n / a
    log_value = tg.lgamma(arg1) + tg.lgamma(b) - tg.lgamma(arg1 + b)
    return b * tg.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on (0, 1): density a b x**(a - 1) (1 - x**a)**(b - 1), with
    a = `concentration1` and b = `concentration0`."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(tg.full_like(self.concentration0, 0), tg.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        """b B(1 + 1/a, b)."""
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        """((a - 1) / (a b - 1))**(1/a), NaN where a < 1 or b < 1 (computed in log space)."""
        a, b = self.concentration1, self.concentration0
        # PyTorch's formula, kept as is: (1/b) log1p(-b) - log1p(-a b) (NaN off the valid region)
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return tg.where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self) -> Tensor:
        """E[X**2] - E[X]**2."""
        return _moments(self.concentration1, self.concentration0, 2) - tg.pow(self.mean, 2)

    def entropy(self) -> Tensor:
        """(1 - 1/b) + (1 - 1/a) H_b - log(a b), H_b = digamma(b + 1) + gamma the harmonic number."""
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        harmonic = tg.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * harmonic - tg.log(self.concentration1) - tg.log(self.concentration0)
