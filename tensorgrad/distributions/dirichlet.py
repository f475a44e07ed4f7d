"""`Dirichlet(concentration)`: a random point of the simplex (probabilities that sum to 1)."""

from __future__ import annotations

from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.gamma import _standard_gamma
from tensorgrad.tensor import Tensor

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over K probabilities, K the last dimension of `concentration`
    (the others are the batch shape): density prod(x_i ** (c_i - 1)) / B(c)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if not isinstance(concentration, Tensor):
            raise TypeError("Dirichlet(): `concentration` must be a Tensor, got "
                            f"{type(concentration).__name__}")
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        """This distribution with concentration expanded to `batch_shape` (a view, no checks)."""
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Gamma(c_i, 1) draws divided by their sum, differentiable in c through the gammas'
        implicit gradient (PyTorch differentiates the Dirichlet draw itself: the same expected
        gradient, a different estimator)."""
        shape = tuple(self._extended_shape(sample_shape))
        gammas = _standard_gamma(self.concentration.expand(shape))
        draws = gammas / gammas.sum(-1, keepdim=True)
        finfo = tg.finfo(draws.dtype)
        return draws.clamp(min=finfo.tiny, max=1 - finfo.eps)

    def log_prob(self, value: Tensor) -> Tensor:
        """sum((c - 1) log x) + lgamma(sum c) - sum lgamma(c)."""
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return tg.xlogy(c - 1.0, value).sum(-1) + tg.lgamma(c.sum(-1)) - tg.lgamma(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        """c / sum(c)."""
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        """max(c - 1, 0) normalized to sum 1; a vertex (the largest entry's) when every c < 1."""
        concm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concm1 / concm1.sum(-1, keepdim=True)
        vertex = tg.nn.functional.one_hot(mode.argmax(-1), concm1.shape[-1]).to(mode)
        all_below_one = (self.concentration < 1).all(-1, keepdim=True)
        return tg.where(all_below_one, vertex, mode)

    @property
    def variance(self) -> Tensor:
        """c (c0 - c) / (c0**2 (c0 + 1)), c0 = sum(c)."""
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Tensor:
        """log B(c) + (c0 - K) digamma(c0) - sum((c - 1) digamma(c))."""
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (tg.lgamma(c).sum(-1) - tg.lgamma(a0) - (k - a0) * tg.digamma(a0)
                - ((c - 1.0) * tg.digamma(c)).sum(-1))

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - tg.lgamma(x.sum(-1))
