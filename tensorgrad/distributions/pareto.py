"""`Pareto(scale, alpha)`: the Pareto type I distribution, scale * exp(E) for E ~ Exponential(alpha)."""

from __future__ import annotations

from typing import Any

from tensorgrad.distributions import constraints
from tensorgrad.distributions.exponential import Exponential
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import AffineTransform, ExpTransform
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """The Pareto distribution on [scale, inf): density alpha scale**alpha / x**(alpha + 1)."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale: Tensor | float, alpha: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        """alpha scale / (alpha - 1) (inf for alpha <= 1)."""
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        """scale."""
        return self.scale

    @property
    def variance(self) -> Tensor:
        """scale**2 alpha / ((alpha - 1)**2 (alpha - 2)) (inf for alpha <= 2)."""
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        """[scale, inf)."""
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        """log(scale / alpha) + 1 + 1/alpha."""
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
