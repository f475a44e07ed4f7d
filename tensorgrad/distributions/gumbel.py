"""`Gumbel(loc, scale)`: the distribution of the maximum of many draws (extreme values)."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import AffineTransform, ExpTransform
from tensorgrad.distributions.uniform import Uniform
from tensorgrad.distributions.utils import broadcast_all, euler_constant
from tensorgrad.tensor import Tensor

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """The Gumbel distribution: loc - scale log(-log U) for U ~ Uniform(0, 1)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = tg.finfo(self.loc.dtype)
        base_dist = Uniform(tg.full_like(self.loc, finfo.tiny), tg.full_like(self.loc, 1 - finfo.eps),
                            validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-tg.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        """This distribution with loc and scale expanded to `batch_shape`."""
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: Tensor) -> Tensor:
        """z - exp(z) - log(scale), z = (loc - value) / scale (closed form, exact in the tails)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        """loc + scale * (Euler's constant)."""
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def stddev(self) -> Tensor:
        """scale pi / sqrt(6)."""
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        """stddev**2."""
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        """log(scale) + 1 + Euler's constant."""
        return self.scale.log() + (1 + euler_constant)
