"""`GeneralizedPareto(loc, scale, concentration)`: the family of tail distributions of extreme
value theory. With z = (x - loc) / scale and concentration xi, its survival function is
(1 + xi z)**(-1 / xi), and exp(-z) at xi = 0; xi < 0 bounds the support above at
loc - scale / xi. Special cases: the exponential (loc = 0, xi = 0), the Pareto (xi > 0,
loc = scale / xi) and the uniform (xi = -1)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with location `loc`, scale `scale` > 0 and shape
    `concentration` (xi), all broadcast to the batch shape. Where xi is within 1e-8 of zero the
    xi = 0 limit (a shifted exponential) is used."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers_only = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if numbers_only else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        """This distribution with its parameters expanded to `batch_shape` (views, no checks)."""
        return expand_params(self, GeneralizedPareto, batch_shape, _instance,
                             ("loc", "scale", "concentration"))

    def _safe_concentration(self) -> tuple[Tensor, Tensor]:
        """(xi == 0 within 1e-8, xi with those entries replaced by 1): the xi != 0 branch is
        computed everywhere and must stay finite (and its gradient too) where it is not taken."""
        eq_zero = tg.isclose(self.concentration, tg.zeros_like(self.concentration))
        return eq_zero, tg.where(eq_zero, tg.ones_like(self.concentration), self.concentration)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        """interval(loc, loc - scale / xi) for xi < 0, else interval(loc, inf)."""
        upper = tg.where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)

    @property
    def mean(self) -> Tensor:
        """loc + scale / (1 - xi) for xi < 1, else NaN."""
        valid = self.concentration < 1
        safe = tg.where(valid, self.concentration, 0.5)
        return tg.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def variance(self) -> Tensor:
        """scale**2 / ((1 - xi)**2 (1 - 2 xi)) for xi < 1/2, else NaN."""
        valid = self.concentration < 0.5
        safe = tg.where(valid, self.concentration, 0.25)
        return tg.where(valid, self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """icdf(u) with u ~ U[0, 1): differentiable in all three parameters."""
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(tg.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value: Tensor) -> Tensor:
        """-log(scale) - (1 / xi + 1) log1p(xi z), and -log(scale) - z at xi = 0."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + tg.ones_like(z)
        # at xi = -1 (the uniform) y is 0 and log1p(xi z) may be -inf at the upper end: 0, not NaN
        where_nonzero = tg.where(y == 0, y, y * tg.log1p(safe * z))
        return -self.scale.log() - tg.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """log P(X > value): -log1p(xi z) / xi, and -z at xi = 0."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        return tg.where(eq_zero, -z, -tg.log1p(safe * z) / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        """log P(X <= value) = log1p(-exp(log_survival_function(value)))."""
        return tg.log1p(-tg.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        """exp(log_cdf(value))."""
        return tg.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        """loc + scale expm1(-xi log1p(-value)) / xi, and loc - scale log1p(-value) at xi = 0."""
        eq_zero, safe = self._safe_concentration()
        logu = tg.log1p(-value)
        where_nonzero = self.loc + self.scale / safe * tg.expm1(-safe * logu)
        return tg.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def entropy(self) -> Tensor:
        """log(scale) + xi + 1."""
        return tg.broadcast_to(tg.log(self.scale) + self.concentration + 1, tuple(self._batch_shape))
