"""`Categorical(probs=None, logits=None)`: one of K categories, drawn by their weights."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import ParamShapeMixin, ProbsLogitsMixin
from tensorgrad.tensor import Tensor

__all__ = ["Categorical", "CategoricalParamsMixin"]


def _at_least_1d(param: Any, name: str) -> None:
    if not isinstance(param, Tensor):
        raise TypeError(f"Categorical(): `{name}` must be a Tensor, got {type(param).__name__}")
    if param.dim() < 1:
        raise ValueError(f"`{name}` parameter must be at least one-dimensional.")


class Categorical(ProbsLogitsMixin, ParamShapeMixin, Distribution):
    """A distribution over the integers 0, ..., K-1, where K is the last dimension of `probs` or
    `logits` (the others are the batch shape). `probs` need not sum to 1: they are divided by their
    sum; `logits` are normalized so that logsumexp(logits) is 0."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _binary = False

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            _at_least_1d(probs, "probs")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            _at_least_1d(logits, "logits")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        """This distribution with its parameter expanded to `batch_shape` (a view, no checks)."""
        new = self._expand_probs_logits(Categorical, batch_shape, _instance)
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        """integer_interval(0, K - 1)."""
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> Tensor:
        """NaN: categories have no order to average over."""
        return self._nan()

    @property
    def mode(self) -> Tensor:
        """The most likely category (int64)."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        """NaN, as the mean."""
        return self._nan()

    def _nan(self) -> Tensor:
        probs = self.probs
        return tg.full(tuple(self._extended_shape()), math.nan, dtype=probs.dtype, device=probs.device)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Category indices (int64) of shape sample_shape + batch_shape."""
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = tg.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        """logits[value]: the normalized log-probability of each category index."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = tg.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        """-sum(probs * logits), with logits clamped above the dtype's lowest value (0 * -inf is 0)."""
        min_real = tg.finfo(self.logits.dtype).min
        logits = tg.clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """arange(K) (int64), shaped (K,) + batch_shape (or (K, 1, ..., 1) if not `expand`)."""
        values = tg.arange(self._num_events, dtype=tg.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class CategoricalParamsMixin:
    """`probs`, `logits` and `param_shape` of the `Categorical` held as `_categorical`, for the
    distributions built on one (their events are its K categories)."""

    _categorical: Any

    def _hold_categorical(self, probs: Tensor | None, logits: Tensor | None) -> tuple[Size, Size]:
        """Holds `Categorical(probs, logits)`; returns the batch shape and the event shape (K,)."""
        self._categorical = Categorical(probs, logits)
        return self._categorical.batch_shape, self._categorical.param_shape[-1:]

    @property
    def probs(self) -> Tensor:
        """The normalized probabilities."""
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        """The normalized logits."""
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        """batch_shape + (K,)."""
        return self._categorical.param_shape

