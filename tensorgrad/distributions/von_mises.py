"""`VonMises(loc, concentration)`: the circular normal distribution of an angle.

Its density exp(kappa cos(x - loc)) / (2 pi I0(kappa)) needs the modified Bessel function I0,
computed (with I1 for the variance) from the same polynomial fits as PyTorch's (Abramowitz and
Stegun 9.8.1-9.8.4), so the values agree to rounding. Draws come from Best and Fisher's
rejection sampler, run in float64; there is no reparameterized sampler, as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import tensorgrad as tg
from tensorgrad.distributions import constraints
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.utils import broadcast_all, lazy_property
from tensorgrad.tensor import Tensor

__all__ = ["VonMises"]

_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1,
                  0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1,
                  -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y: Tensor, coef: Sequence[float]) -> Tensor:
    """sum_i coef[i] y**i by Horner's rule."""
    coef = list(coef)
    result: Any = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """log I_order(x) for x > 0 and order 0 or 1 (a series below 3.75, an asymptotic fit above)."""
    if order not in (0, 1):
        raise ValueError(f"_log_modified_bessel_fn(): order must be 0 or 1, got {order}")
    y = x / 3.75
    small = _eval_poly(y * y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return tg.where(x < 3.75, small, large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor, x: Tensor) -> Tensor:
    """Best and Fisher's (1979) sampler: wrapped-Cauchy proposals until every entry is accepted,
    then shifted by loc and wrapped into [-pi, pi)."""
    done = tg.zeros(tuple(x.shape), dtype=tg.bool, device=loc.device)
    while not bool(done.all()):
        u = tg.rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u.unbind()
        z = tg.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = tg.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution of an angle (radians) with mean direction `loc` and
    concentration kappa > 0. `loc` and values may be any real numbers: they are read modulo 2 pi."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        """kappa cos(value - loc) - log(2 pi) - log I0(kappa)."""
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * tg.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(tg.float64)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(tg.float64)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        """The wrapped-Cauchy proposal's parameter (a Taylor form for tiny kappa)."""
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        return tg.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Angles in [-pi, pi) of shape sample_shape + batch_shape, outside the graph. Drawn in
        float64 whatever the dtype (float32 can loop for a long time at tiny concentrations)."""
        shape = tuple(self._extended_shape(sample_shape))
        with tg.no_grad():
            x = tg.empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        """A new VonMises with loc and concentration expanded to `batch_shape`."""
        validate_args = self.__dict__.get("_validate_args")
        loc = self.loc.expand(batch_shape)
        concentration = self.concentration.expand(batch_shape)
        return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """loc (the circular mean)."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
