"""`Binomial(total_count, probs=None, logits=None)`: successes in total_count coin flips."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import ParamShapeMixin, ProbsLogitsMixin
from tensorgrad.tensor import Tensor

__all__ = ["Binomial"]


def _clamp_by_zero(x: Tensor) -> Tensor:
    """max(x, 0), with gradient 1/2 at 0 (as PyTorch's: keeps log_prob's gradient symmetric)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(ProbsLogitsMixin, ParamShapeMixin, Distribution):
    """The binomial distribution: the number of successes in `total_count` independent trials of
    success probability `probs` (or log-odds `logits`; give exactly one)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Tensor | int = 1, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        return self._expand_probs_logits(Binomial, batch_shape, _instance, ("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        """integer_interval(0, total_count)."""
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        """total_count * probs."""
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        """floor((total_count + 1) probs), at most total_count."""
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        """total_count probs (1 - probs)."""
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Counts (in the parameter's dtype) of shape sample_shape + batch_shape."""
        shape = tuple(self._extended_shape(sample_shape))
        with tg.no_grad():
            return tg.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        """log C(n, k) + k logits - n log(1 + exp(logits)), the last term written stably."""
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = tg.lgamma(n + 1)
        log_factorial_k = tg.lgamma(value + 1)
        log_factorial_nmk = tg.lgamma(n - value + 1)
        # n log(1 + exp(logits)) = n max(logits, 0) + n log1p(exp(-|logits|))
        normalize_term = (n * _clamp_by_zero(self.logits) + n * tg.log1p(tg.exp(-tg.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous_count(self, op: str) -> int:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{op}`.")
        return total_count

    def entropy(self) -> Tensor:
        """-sum_k P(k) log P(k) (for a single total_count across the batch)."""
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(tg.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """0, 1, ..., total_count along dimension 0 (for a single total_count)."""
        total_count = self._homogeneous_count("enumerate_support")
        values = tg.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
