"""`LKJCholesky(dim, concentration)`: the LKJ distribution over Cholesky factors L of dim x dim
correlation matrices M = L L^T, with density proportional to det(M)**(concentration - 1)
(concentration 1: uniform over correlation matrices).

Draws use the onion method of Lewandowski, Kurowicka and Joe (2009, section 3.2), vectorized
over rows: row i of L (i >= 1) is sqrt(y_i) times a uniform direction in its first i entries,
y_i ~ Beta(i / 2, concentration + (dim - 2) / 2 - (i - 1) / 2), with the diagonal entry
sqrt(1 - |row|**2) making the row a unit vector. (PyTorch 2.13 draws y_i ~ Beta(i - 1/2, ...),
which agrees for i = 1 only: its draws for dim >= 3 do not follow its own log_prob. The
marginals of the correlations, 2 Beta(b, b) - 1 with b = concentration - 1 + dim / 2, check
which is right.)
"""

from __future__ import annotations

import math
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.beta import Beta
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.utils import broadcast_all, standard_normal
from tensorgrad.tensor import Tensor

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution for lower Cholesky factors of `dim` x `dim` correlation matrices, with
    `concentration` (eta) > 0 broadcast to the batch shape. No rsample: the Beta draws of the
    onion method are taken outside the graph, as PyTorch's."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = Size(self.concentration.shape)
        # row i >= 1 draws Beta(i / 2, eta + (dim - 2) / 2 - (i - 1) / 2); row 0 a dummy
        # Beta(1 / 2, eta + (dim - 2) / 2) whose draw is unused
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = tg.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = tg.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(0.5 * offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        """This distribution with concentration expanded to `batch_shape` (views, no checks)."""
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Draws of shape sample_shape + batch_shape + (dim, dim) by the onion method."""
        with tg.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = standard_normal(tuple(self._extended_shape(sample_shape)), dtype=y.dtype,
                                       device=y.device).tril(-1)
            # row 0 is all zeros (0 / 0 in the normalization): its direction is unused, make it 0
            norms = u_normal.norm(dim=-1, keepdim=True)
            u_hypersphere = u_normal / tg.where(norms == 0, tg.ones_like(norms), norms)
            w = tg.sqrt(y) * u_hypersphere
            # clamped so that rounding cannot take 1 - |row|**2 below zero
            diag_elems = tg.clamp(1 - tg.sum(w**2, dim=-1), min=tg.finfo(w.dtype).tiny).sqrt()
            return w + tg.diag_embed(diag_elems)

    def log_prob(self, value: Tensor) -> Tensor:
        """sum_{i >= 1} (2 (eta - 1) + dim - 1 - i) log(L_ii) minus the log normalizer
        ((dim - 1) log(pi) / 2 + mvlgamma(eta + (dim - 2) / 2, dim - 1) - (dim - 1)
        lgamma(eta + (dim - 1) / 2)).

        The density of M is proportional to det(M)**(eta - 1) = prod L_ii**(2 (eta - 1)), and the
        Jacobian of L -> L L^T contributes prod L_ii**(dim - 1 - i).
        """
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = tg.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = tg.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = tg.lgamma(alpha) * dm1
        numerator = tg.mvlgamma(alpha - 0.5, dm1)
        # mvlgamma's pi term is (D - 1)(D - 2)/4 log(pi), the paper's D (D - 1)/4 log(pi): add the rest
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
