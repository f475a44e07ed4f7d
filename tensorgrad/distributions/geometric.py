"""`Geometric(probs=None, logits=None)`: the number of failures before the first success."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import ProbsLogitsMixin
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.nn.functional import binary_cross_entropy_with_logits
from tensorgrad.tensor import Tensor

__all__ = ["Geometric"]


class Geometric(ProbsLogitsMixin, Distribution):
    """The geometric distribution on {0, 1, 2, ...}: P(k) = (1 - p)**k p, for success probability
    p = `probs` in (0, 1] (or log-odds `logits`; give exactly one)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            value = self.probs
            raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) "
                             f"of distribution {self!r} to be positive but found invalid values:\n"
                             f"{value[~(value > 0)]}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        """This distribution with its parameter expanded to `batch_shape` (a view, no checks)."""
        return self._expand_probs_logits(Geometric, batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        """1 / p - 1."""
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        """0."""
        return tg.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        """(1 / p - 1) / p."""
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """floor(log(U) / log(1 - p)) for U ~ Uniform(0, 1): failures before the first success."""
        shape = tuple(self._extended_shape(sample_shape))
        probs = self.probs
        with tg.no_grad():
            u = tg.rand(shape, dtype=probs.dtype, device=probs.device).clamp(min=tg.finfo(probs.dtype).tiny)
            return (u.log() / (-probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        """value log(1 - p) + log(p) (0 log 0 counted as 0 at p = 1, value = 0)."""
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = tg.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        """(binary entropy of p) / p."""
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
