"""`RelaxedOneHotCategorical(temperature, probs=None, logits=None)`: the Gumbel-softmax (Concrete)
distribution, a point of the simplex that approaches a one-hot vector as the temperature goes
to 0, with reparameterized draws softmax((logits + Gumbel noise) / temperature)."""

from __future__ import annotations

import numbers
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.categorical import CategoricalParamsMixin
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import RelaxedParamsMixin, expand_params
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import ExpTransform
from tensorgrad.distributions.utils import broadcast_all, clamp_probs
from tensorgrad.tensor import Tensor

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(CategoricalParamsMixin, Distribution):
    """The log of a `RelaxedOneHotCategorical` draw: log_softmax((logits + G) / temperature), G
    standard Gumbel noise; on real vectors."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Tensor | float, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        batch_shape, event_shape = self._hold_categorical(probs, logits)
        self.temperature = temperature
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        """This distribution with its parameter expanded to `batch_shape` (a view, no checks)."""
        new = expand_params(self, ExpRelaxedCategorical, batch_shape, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """log_softmax((logits - log(-log U)) / temperature): differentiable in the logits."""
        shape = tuple(self._extended_shape(sample_shape))
        logits = self.logits
        uniforms = clamp_probs(tg.rand(shape, dtype=logits.dtype, device=logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        """The Concrete log-density of the log-probabilities `value`."""
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = self.temperature
        if isinstance(temperature, numbers.Number):
            temperature = tg.as_tensor(temperature, dtype=logits.dtype, device=logits.device)
        log_scale = tg.full_like(temperature, float(k)).lgamma() - temperature.log().mul(-(k - 1))
        score = logits - value.mul(temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(RelaxedParamsMixin, TransformedDistribution):
    """exp of an `ExpRelaxedCategorical` draw: a relaxed one-hot vector on the simplex."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Tensor | float, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        """This distribution with its parameter expanded to `batch_shape`."""
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
