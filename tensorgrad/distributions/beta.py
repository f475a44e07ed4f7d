"""`Beta(concentration1, concentration0)`: a random probability, the first coordinate of a
two-category Dirichlet."""

from __future__ import annotations

import numbers
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.dirichlet import Dirichlet
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """The beta distribution on [0, 1]: density x**(c1 - 1) (1 - x)**(c0 - 1) / B(c1, c0)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0, numbers.Real):
            both = tg.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = tg.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        """This distribution with its parameters expanded to `batch_shape`."""
        return expand_params(self, Beta, batch_shape, _instance, ("_dirichlet",))

    @property
    def concentration1(self) -> Tensor:
        """The exponent of x, plus 1."""
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        """The exponent of 1 - x, plus 1."""
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        """c1 / (c1 + c0)."""
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        """The Dirichlet's mode's first coordinate."""
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        """c1 c0 / ((c1 + c0)**2 (c1 + c0 + 1))."""
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """The first coordinate of a Dirichlet draw (differentiable in both concentrations)."""
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Tensor) -> Tensor:
        """The Dirichlet's log-density at (value, 1 - value)."""
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = tg.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> Tensor:
        """The Dirichlet's entropy."""
        return self._dirichlet.entropy()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return tg.lgamma(x) + tg.lgamma(y) - tg.lgamma(x + y)
