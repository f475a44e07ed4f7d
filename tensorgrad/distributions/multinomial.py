"""`Multinomial(total_count, probs=None, logits=None)`: category counts over total_count draws."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.binomial import Binomial
from tensorgrad.distributions.categorical import CategoricalParamsMixin
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["Multinomial"]


class Multinomial(CategoricalParamsMixin, Distribution):
    """The counts of each of K categories (the last dimension of `probs` or `logits`, which are
    normalized) over `total_count` independent draws. `sample` needs the single int
    `total_count`; `log_prob` takes counts of any total."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    def __init__(self, total_count: int = 1, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        batch_shape, event_shape = self._hold_categorical(probs, logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        new = expand_params(self, Multinomial, batch_shape, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        """total_count probs."""
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        """total_count probs (1 - probs)."""
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        """Nonnegative integer vectors summing to at most total_count."""
        return constraints.multinomial(self.total_count)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Counts (in the parameters' dtype) of shape sample_shape + batch_shape + (K,)."""
        sample_shape = Size(sample_shape)
        with tg.no_grad():
            samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            # (total_count, sample_shape, batch_shape) -> (sample_shape, batch_shape, total_count)
            samples = samples.permute(*range(1, samples.dim()), 0)
            counts = tg.zeros(tuple(self._extended_shape(sample_shape)), dtype=samples.dtype,
                              device=samples.device)
            counts.scatter_add_(-1, samples, tg.ones_like(samples))
            return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        """n H(categorical) - lgamma(n + 1) + sum_i E[lgamma(x_i + 1)], x_i ~ Binomial(n, p_i)."""
        n = tg.tensor(self.total_count)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - tg.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = tg.exp(self._binomial.log_prob(support))
        weights = tg.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        """lgamma(sum x + 1) - sum lgamma(x_i + 1) + sum x_i logits_i (0 * -inf counted as 0)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = tg.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_factorial_n = tg.lgamma(value.sum(-1) + 1)
        log_factorial_xs = tg.lgamma(value + 1).sum(-1)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
