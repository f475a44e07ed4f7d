"""`ContinuousBernoulli(probs=None, logits=None)`: the density on [0, 1] proportional to
p**x (1 - p)**(1 - x) (Loaiza-Ganem and Cunningham, 2019).

Its normalizing constant 2 atanh(1 - 2p) / (1 - 2p) is 0 / 0 at p = 1/2, so inside `lims`
(0.499, 0.501 by default) the formulas switch to Taylor expansions around 1/2, as PyTorch's.
"""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.params import ParamShapeMixin, ProbsLogitsMixin
from tensorgrad.distributions.utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs
from tensorgrad.nn.functional import binary_cross_entropy_with_logits
from tensorgrad.tensor import Tensor

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ProbsLogitsMixin, ParamShapeMixin, ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1], given by exactly one of `probs` (in
    (0, 1)) or `logits` (whose sigmoid is probs). Unlike the Bernoulli's, probs is no
    probability; it is the parameter p of the density C(p) p**x (1 - p)**(1 - x)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 lims: tuple[float, float] = (0.499, 0.501), validate_args: bool | None = None) -> None:
        self._set_probs_or_logits(probs, logits)
        if probs is not None:
            # checked before clamping (the clamped values would always pass); as PyTorch's, only
            # when validate_args is given, whatever its value
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        """This distribution with its parameter expanded to `batch_shape` (a view, no checks)."""
        new = self._expand_probs_logits(ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        """probs, with the values near 1/2 replaced by lims[0] (the exact formulas' inputs)."""
        return tg.where(self._outside_unstable_region(), self.probs, self._lims[0] * tg.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """log C(p): log |log1p(-p) - log p| - log |1 - 2p|, or its Taylor series near p = 1/2."""
        cut_probs = self._cut_probs()
        below_half = tg.where(cut_probs <= 0.5, cut_probs, tg.zeros_like(cut_probs))
        above_half = tg.where(cut_probs >= 0.5, cut_probs, tg.ones_like(cut_probs))
        log_norm = (tg.log(tg.abs(tg.log1p(-cut_probs) - tg.log(cut_probs)))
                    - tg.where(cut_probs <= 0.5, tg.log1p(-2.0 * below_half), tg.log(2.0 * above_half - 1.0)))
        x = tg.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tg.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        """p / (2p - 1) + 1 / (log1p(-p) - log p) (a Taylor series near p = 1/2)."""
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (tg.log1p(-cut_probs) - tg.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * tg.pow(x, 2)) * x
        return tg.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        """sqrt(variance)."""
        return tg.sqrt(self.variance)

    @property
    def variance(self) -> Tensor:
        """p (p - 1) / (1 - 2p)**2 + 1 / (log1p(-p) - log p)**2 (a Taylor series near p = 1/2)."""
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / tg.pow(1.0 - 2.0 * cut_probs, 2)
                     + 1.0 / tg.pow(tg.log1p(-cut_probs) - tg.log(cut_probs), 2))
        x = tg.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return tg.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def probs(self) -> Tensor:
        """sigmoid(logits), clamped into [eps, 1 - eps]."""
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """icdf(U) for U ~ Uniform(0, 1), outside the graph."""
        shape = tuple(self._extended_shape(sample_shape))
        u = tg.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with tg.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """icdf(U) for U ~ Uniform(0, 1): differentiable in the parameter."""
        shape = tuple(self._extended_shape(sample_shape))
        u = tg.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        """x logits - softplus(logits) + log C(p) (minus a binary cross-entropy)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        """(p**x (1 - p)**(1 - x) + p - 1) / (2p - 1) on [0, 1] (x itself near p = 1/2)."""
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((tg.pow(cut_probs, value) * tg.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = tg.where(self._outside_unstable_region(), cdfs, value)
        return tg.where(value <= 0.0, tg.zeros_like(value),
                        tg.where(value >= 1.0, tg.ones_like(value), unbounded_cdfs))

    def icdf(self, value: Tensor) -> Tensor:
        """(log1p(-p + u (2p - 1)) - log1p(-p)) / (log p - log1p(-p)) (u itself near p = 1/2)."""
        cut_probs = self._cut_probs()
        exact = ((tg.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - tg.log1p(-cut_probs))
                 / (tg.log(cut_probs) - tg.log1p(-cut_probs)))
        return tg.where(self._outside_unstable_region(), exact, value)

    def entropy(self) -> Tensor:
        """mean (log(1 - p) - log p) - log C(p) - log(1 - p)."""
        log_probs0 = tg.log1p(-self.probs)
        log_probs1 = tg.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        """log((exp(x) - 1) / x) of the natural parameter x, a Taylor series near 0."""
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = tg.where(out_unst_reg, x, (self._lims[0] - 0.5) * tg.ones_like(x))
        log_norm = tg.log(tg.abs(tg.special.expm1(cut_nat_params))) - tg.log(tg.abs(cut_nat_params))
        taylor = 0.5 * x + tg.pow(x, 2) / 24.0 - tg.pow(x, 4) / 2880.0
        return tg.where(out_unst_reg, log_norm, taylor)
