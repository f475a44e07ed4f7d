"""`Bernoulli(probs=None, logits=None)`: a coin that shows 1 with probability probs."""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.params import ParamShapeMixin, ProbsLogitsMixin
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.nn.functional import binary_cross_entropy_with_logits
from tensorgrad.tensor import Tensor

__all__ = ["Bernoulli"]


class Bernoulli(ProbsLogitsMixin, ParamShapeMixin, ExponentialFamily):
    """The Bernoulli distribution on {0, 1}, given by exactly one of `probs` (P(1)) or `logits`
    (log-odds, log(p / (1 - p))); the other is computed on first use."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        """This distribution with its parameter expanded to `batch_shape` (a view, no checks)."""
        return self._expand_probs_logits(Bernoulli, batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        """probs."""
        return self.probs

    @property
    def mode(self) -> Tensor:
        """1 where probs > 1/2, 0 where below, NaN at exactly 1/2 (no single mode)."""
        mode = (self.probs >= 0.5).to(self.probs)
        return tg.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        """probs * (1 - probs)."""
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """0/1 draws (in the parameter's dtype) of shape sample_shape + batch_shape."""
        shape = self._extended_shape(sample_shape)
        with tg.no_grad():
            return tg.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        """value log(p) + (1 - value) log(1 - p), computed from the logits (binary cross-entropy)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        """-p log(p) - (1 - p) log(1 - p)."""
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """tensor([0., 1.]), shaped (2,) + batch_shape (or (2, 1, ..., 1) if not `expand`)."""
        values = tg.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (tg.logit(self.probs),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return tg.log1p(tg.exp(x))
