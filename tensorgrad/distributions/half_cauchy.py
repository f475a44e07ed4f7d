"""`HalfCauchy(scale)`: |X| for X ~ Cauchy(0, scale)."""

from __future__ import annotations

import math

import tensorgrad as tg
from tensorgrad.distributions.cauchy import Cauchy
from tensorgrad.distributions.folded import FoldedAtZero
from tensorgrad.tensor import Tensor

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    """The half-Cauchy distribution on [0, inf): density 2 / (pi scale (1 + (x / scale)**2))."""

    folded = Cauchy

    @property
    def mean(self) -> Tensor:
        """inf."""
        scale = self.scale
        return tg.full(tuple(self._extended_shape()), math.inf, dtype=scale.dtype, device=scale.device)

    @property
    def variance(self) -> Tensor:
        """The Cauchy's (inf)."""
        return self.base_dist.variance

    def log_prob(self, value: Tensor) -> Tensor:
        """The Cauchy's log-density + log 2 on [0, inf), -inf below."""
        if self._validate_args:
            self._validate_sample(value)
        value = tg.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        return self._folded_log_prob(value)
