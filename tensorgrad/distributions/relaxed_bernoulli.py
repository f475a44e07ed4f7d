"""`RelaxedBernoulli(temperature, probs=None, logits=None)`: a continuous stand-in for a coin
flip on (0, 1) (the binary Concrete / Gumbel-softmax distribution), with reparameterized draws
that approach 0/1 as the temperature goes to 0."""

from __future__ import annotations

import math
import numbers
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import ParamShapeMixin, ProbsLogitsMixin, RelaxedParamsMixin
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import SigmoidTransform
from tensorgrad.distributions.utils import broadcast_all, clamp_probs
from tensorgrad.tensor import Tensor

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(ProbsLogitsMixin, ParamShapeMixin, Distribution):
    """The logit of a `RelaxedBernoulli` draw: (logits + logistic noise) / temperature, on the reals."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature: Tensor | float, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        self.temperature = temperature
        self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        """This distribution with its parameter expanded to `batch_shape` (a view, no checks)."""
        new = self._expand_probs_logits(LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """(logit(p) + logit(U)) / temperature, U ~ Uniform(0, 1): differentiable in p."""
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(tg.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        """log(t) + d - 2 log(1 + exp(d)), d = logits - t value."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return _log(self.temperature) + diff - 2 * diff.exp().log1p()


def _log(t: Tensor | float) -> Tensor | float:
    """log(t) for a tensor or a number temperature."""
    return math.log(t) if isinstance(t, numbers.Number) else t.log()


class RelaxedBernoulli(RelaxedParamsMixin, TransformedDistribution):
    """sigmoid of a `LogitRelaxedBernoulli` draw: a relaxed coin flip on (0, 1)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Tensor | float, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        """This distribution with its parameter expanded to `batch_shape`."""
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)
