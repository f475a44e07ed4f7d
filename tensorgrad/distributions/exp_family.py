"""`ExponentialFamily`: distributions whose density is exp(<t(x), theta> - F(theta) + k(x)).

For these, the entropy and the KL divergence between two members follow from the log-normalizer
F alone (its gradient is the mean of t(x)): tensorgrad's autograd computes them from
`_natural_params` and `_log_normalizer`, as PyTorch's `ExponentialFamily` does.
"""

from __future__ import annotations

import tensorgrad as tg
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.tensor import Tensor

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base class of exponential-family distributions (`Normal`, `Exponential`, `Bernoulli`).

    Subclasses give `_natural_params` (theta), `_log_normalizer(*theta)` (F) and
    `_mean_carrier_measure` (E[k(x)]).
    """

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy by Bregman divergence: F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = tg.autograd.grad(log_normalizer.sum(), params, create_graph=True)
        result = log_normalizer - self._mean_carrier_measure
        for param, gradient in zip(params, gradients, strict=True):
            result = result - (param * gradient).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
