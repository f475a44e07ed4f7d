"""`Gamma(concentration, rate)` and its reparameterized sampler.

A gamma draw is not loc + scale * noise, yet it still has a pathwise gradient: holding the
draw's quantile u = P(alpha, x) fixed (P the regularized incomplete gamma function, the CDF),
implicit differentiation gives dx/dalpha = -(dP/dalpha) / (dP/dx), with dP/dx the density. This
is how PyTorch differentiates `_standard_gamma`; here dP/dalpha is computed to about 1e-10
relative accuracy by Richardson-extrapolated central differences of log P (or log Q = log(1 - P)
where P is above 1/2) in alpha, from tensorgrad's incomplete gamma function.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tensorgrad as tg
from tensorgrad.autograd import record
from tensorgrad.creation import default_generator
from tensorgrad.device import array_like, to_numpy
from tensorgrad.distributions import constraints
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.special import _incomplete_gamma_arrays
from tensorgrad.tensor import Tensor

__all__ = ["Gamma"]


def _lgamma(a: np.ndarray) -> np.ndarray:
    """log Gamma(a) elementwise, in float64."""
    return np.vectorize(math.lgamma, otypes=[np.float64])(a)


def _log_tail(a: np.ndarray, x: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """log Q(a, x) where `upper`, else log P(a, x)."""
    p, q = _incomplete_gamma_arrays(a, x)
    return np.log(np.where(upper, q, p))


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dalpha for x ~ Gamma(alpha, 1) at fixed quantile: -(dP/dalpha) / density, float64.

    The same quantity as PyTorch's `_standard_gamma_grad(alpha, x)` (which approximates it with
    series and rational fits); NaN (x = 0, say) becomes 0, as there.
    """
    alpha, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        p, _ = _incomplete_gamma_arrays(alpha, x)
        upper = p > 0.5  # differentiate the smaller tail: its log keeps full relative accuracy
        h = 1e-3 * alpha
        def central(step: np.ndarray) -> np.ndarray:
            return (_log_tail(alpha + step, x, upper) - _log_tail(alpha - step, x, upper)) / (2 * step)
        dlog_tail = (4 * central(h) - central(2 * h)) / 3  # Richardson: the h**2 error cancels
        log_tail = _log_tail(alpha, x, upper)
        log_density = (alpha - 1) * np.log(x) - x - _lgamma(alpha)
        dtail = np.exp(log_tail - log_density) * dlog_tail  # d(tail)/dalpha / density
        result = np.where(upper, dtail, -dtail)  # dP/dalpha = -dQ/dalpha
    return np.where(np.isnan(result), 0.0, result)


def _standard_gamma(concentration: Tensor) -> Tensor:
    """Draws x ~ Gamma(concentration, 1) from tensorgrad's generator (at least the dtype's
    smallest normal number). Derivative: the implicit reparameterization gradient dx/dalpha."""
    alpha = to_numpy(concentration.data).astype(np.float64)
    draws = default_generator().standard_gamma(alpha)
    draws = np.maximum(draws, np.finfo(concentration.dtype).tiny).astype(concentration.dtype)

    def vjp(grad: Any) -> Any:
        slope = standard_gamma_grad(alpha, draws.astype(np.float64)).astype(draws.dtype)
        return grad * array_like(slope, grad)

    return record(array_like(draws, concentration.data), "_standard_gamma", (concentration,), vjp, saved=())


class Gamma(ExponentialFamily):
    """The gamma distribution with shape `concentration` and inverse scale `rate`: density
    rate**c x**(c - 1) exp(-rate x) / Gamma(c) on [0, inf)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        return expand_params(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> Tensor:
        """concentration / rate."""
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        """(concentration - 1) / rate, or 0 when concentration < 1."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        """concentration / rate**2."""
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Gamma(concentration, 1) draws / rate: differentiable in both (implicitly in the first)."""
        shape = tuple(self._extended_shape(sample_shape))
        return _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value: Tensor) -> Tensor:
        """c log(rate) + (c - 1) log(value) - rate value - lgamma(c)."""
        value = tg.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (tg.xlogy(self.concentration, self.rate) + tg.xlogy(self.concentration - 1, value)
                - self.rate * value - tg.lgamma(self.concentration))

    def entropy(self) -> Tensor:
        """c - log(rate) + lgamma(c) + (1 - c) digamma(c)."""
        c = self.concentration
        return c - tg.log(self.rate) + tg.lgamma(c) + (1.0 - c) * tg.digamma(c)

    def cdf(self, value: Tensor) -> Tensor:
        """P(concentration, rate * value), the regularized lower incomplete gamma function."""
        if self._validate_args:
            self._validate_sample(value)
        return tg.special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return tg.lgamma(x + 1) + (x + 1) * tg.log(-y.reciprocal())
