"""`Laplace(loc, scale)`: the double exponential, with density exp(-|x - loc| / scale) / (2 scale)."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.params import expand_params
from tensorgrad.distributions.utils import broadcast_all
from tensorgrad.tensor import Tensor

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace distribution centred at `loc` with `scale`; they broadcast to the batch shape."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        """This distribution with loc and scale expanded to `batch_shape` (views, no checks)."""
        return expand_params(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def variance(self) -> Tensor:
        """2 scale**2."""
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        """sqrt(2) scale."""
        return (2**0.5) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """loc - scale sign(u) log(1 - |u|) with u ~ U(eps - 1, 1): the inverse cdf, differentiable
        in loc and scale (eps keeps |u| below 1, so the log stays finite)."""
        shape = self._extended_shape(sample_shape)
        eps = tg.finfo(self.loc.dtype).eps
        u = tg.empty(tuple(shape), dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * tg.log1p(-u.abs())

    def log_prob(self, value: Tensor) -> Tensor:
        """-log(2 scale) - |value - loc| / scale."""
        if self._validate_args:
            self._validate_sample(value)
        return -tg.log(2 * self.scale) - tg.abs(value - self.loc) / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        """1/2 - sign(value - loc) expm1(-|value - loc| / scale) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * tg.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value: Tensor) -> Tensor:
        """loc - scale sign(value - 1/2) log(1 - 2 |value - 1/2|)."""
        term = value - 0.5
        return self.loc - self.scale * term.sign() * tg.log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        """1 + log(2 scale)."""
        return 1 + tg.log(2 * self.scale)
