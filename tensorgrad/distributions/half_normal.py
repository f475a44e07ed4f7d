"""`HalfNormal(scale)`: |X| for X ~ Normal(0, scale)."""

from __future__ import annotations

import math

from tensorgrad.distributions.folded import FoldedAtZero
from tensorgrad.distributions.normal import Normal
from tensorgrad.tensor import Tensor

__all__ = ["HalfNormal"]


class HalfNormal(FoldedAtZero):
    """The half-normal distribution on [0, inf): the absolute value of N(0, scale**2)."""

    folded = Normal

    @property
    def mean(self) -> Tensor:
        """scale sqrt(2 / pi)."""
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        """scale**2 (1 - 2 / pi)."""
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Tensor) -> Tensor:
        """The normal's log-density + log 2 for value >= 0, else -inf."""
        if self._validate_args:
            self._validate_sample(value)
        return self._folded_log_prob(value)
