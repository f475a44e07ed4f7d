"""`OneHotCategorical`: a `Categorical` whose draws are one-hot vectors instead of indices."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.categorical import CategoricalParamsMixin
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import expand_params
from tensorgrad.nn.functional import one_hot
from tensorgrad.tensor import Tensor

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(CategoricalParamsMixin, Distribution):
    """One of K categories as a one-hot vector of length K (the event shape); `probs` or `logits`
    as for `Categorical`."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        batch_shape, event_shape = self._hold_categorical(probs, logits)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        """This distribution with its parameter expanded to `batch_shape` (a view, no checks)."""
        new = expand_params(self, OneHotCategorical, batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def mean(self) -> Tensor:
        """probs."""
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        """The one-hot vector of the most likely category."""
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self) -> Tensor:
        """probs * (1 - probs)."""
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """One-hot draws (in the parameter's dtype) of shape sample_shape + batch_shape + (K,)."""
        indices = self._categorical.sample(Size(sample_shape))
        return one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value: Tensor) -> Tensor:
        """The log-probability of the category where `value` is 1."""
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self) -> Tensor:
        """The categorical entropy."""
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """The K one-hot vectors (rows of eye(K)), shaped (K,) + batch_shape + (K,)."""
        n = self.event_shape[0]
        values = tg.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """`OneHotCategorical` whose `rsample` passes gradients straight through: the forward value
    is a one-hot draw, the gradient that of `probs` (Bengio et al., 2013)."""

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """sample + (probs - probs.detach()): the draw, differentiable as if it were probs."""
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
