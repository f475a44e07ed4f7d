"""`NegativeBinomial(total_count, probs=None, logits=None)`: successes before total_count failures."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.gamma import Gamma
from tensorgrad.distributions.params import ParamShapeMixin, ProbsLogitsMixin
from tensorgrad.distributions.utils import lazy_property
from tensorgrad.nn.functional import logsigmoid
from tensorgrad.tensor import Tensor

__all__ = ["NegativeBinomial"]


class NegativeBinomial(ProbsLogitsMixin, ParamShapeMixin, Distribution):
    """The number of successes in independent Bernoulli trials of success probability `probs`
    (or log-odds `logits`; give exactly one) before `total_count` failures. `total_count` may be
    any nonnegative real (the gamma-Poisson mixture)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Tensor | float, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        return self._expand_probs_logits(NegativeBinomial, batch_shape, _instance, ("total_count",))

    @property
    def mean(self) -> Tensor:
        """total_count p / (1 - p) = total_count exp(logits)."""
        return self.total_count * tg.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        """floor((total_count - 1) exp(logits)), at least 0."""
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        """mean / (1 - p)."""
        return self.mean / tg.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Gamma:
        # not validated: total_count may be 0
        return Gamma(concentration=self.total_count, rate=tg.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Poisson(rate) draws for rate ~ Gamma(total_count, (1 - p) / p), in the parameter's dtype."""
        with tg.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return tg.poisson(rate)

    def log_prob(self, value: Tensor) -> Tensor:
        """lgamma(r + k) - lgamma(k + 1) - lgamma(r) + r log(1 - p) + k log(p) (0 at r = k = 0)."""
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * logsigmoid(-self.logits)
                                 + value * logsigmoid(self.logits))
        log_normalization = (-tg.lgamma(self.total_count + value) + tg.lgamma(1.0 + value)
                             + tg.lgamma(self.total_count))
        # r = k = 0 has probability 1, but lgamma(0) is infinite there
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
