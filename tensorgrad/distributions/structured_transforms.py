"""The transforms that act on an event's structure rather than elementwise, PyTorch's
`IndependentTransform`, `ReshapeTransform`, `CatTransform`, `StackTransform`,
`CorrCholeskyTransform`, `LowerCholeskyTransform` and `PositiveDefiniteTransform`, with
`SoftplusTransform` and `CumulativeDistributionTransform`. `tg.distributions.transforms`
exports them with the rest."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.transforms import Transform
from tensorgrad.distributions.utils import sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix
from tensorgrad.nn.functional import pad, softplus
from tensorgrad.tensor import Tensor

__all__ = [
    "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform", "SoftplusTransform",
    "StackTransform",
]


class IndependentTransform(Transform):
    """`base_transform` with `reinterpreted_batch_ndims` more rightmost dimensions in each event:
    the same map, with log |det J| summed over those dimensions."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        """The base's domain with the extra event dimensions."""
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        """The base's codomain with the extra event dimensions."""
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """The base's."""
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        """The base's."""
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """The base's, summed over the reinterpreted dimensions."""
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape: Any) -> Any:
        """The base's."""
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        """The base's."""
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost `in_shape` of a tensor to `out_shape` (same number of elements);
    log |det J| = 0."""

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        """The reals with len(in_shape) event dimensions."""
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        """The reals with len(out_shape) event dimensions."""
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: Tensor) -> Tensor:
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y: Tensor) -> Tensor:
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """Zeros of the batch shape."""
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    @staticmethod
    def _swap(shape: Any, old: Size, new: Size) -> Size:
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if Size(shape[cut:]) != old:
            raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {old}")
        return Size(tuple(shape[:cut]) + tuple(new))

    def forward_shape(self, shape: Any) -> Any:
        """shape with its rightmost in_shape replaced by out_shape."""
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        """shape with its rightmost out_shape replaced by in_shape."""
        return self._swap(shape, self.out_shape, self.in_shape)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)), from the reals onto (0, inf) (linear above x = 20)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log sigmoid(x) = -softplus(-x)."""
        return -softplus(-x)


class CorrCholeskyTransform(Transform):
    """Maps a real vector of length D (D - 1) / 2 onto the Cholesky factor of a D x D correlation
    matrix (lower triangular, positive diagonal, unit-norm rows): the vector fills the strict
    lower triangle row by row, tanh maps it into (-1, 1), and each row is completed by a signed
    stick-breaking so that its norm is 1."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        x = tg.tanh(x)
        eps = tg.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # y_ij = r_ij sqrt(prod_{k < j} (1 - r_ik**2)), the share of the row's unit norm left
        z1m_cumprod_sqrt = (1 - r**2).sqrt().cumprod(-1)
        r = r + tg.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * pad(z1m_cumprod_sqrt[..., :-1], (1, 0), value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_cumsum = 1 - tg.cumsum(y * y, dim=-1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], (1, 0), value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor, intermediates: Any = None) -> Tensor:
        """The stick-breaking part, (1/2) sum log(1 - cumsum(y**2)) below the subdiagonal, plus
        the tanh part, sum log(1 - tanh(x)**2)."""
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape: Any) -> Any:
        """(..., N) -> (..., D, D) with N = D (D - 1) / 2."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape: Any) -> Any:
        """(..., D, D) -> (..., D (D - 1) / 2)."""
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


class LowerCholeskyTransform(Transform):
    """Maps any square matrix onto a lower-triangular one with positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Maps any square matrix onto a positive-definite one: L L^T with L its
    `LowerCholeskyTransform`."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(tg.linalg.cholesky(y))


def _check_slices(name: str, t: Tensor, dim: int, size: int, what: str) -> None:
    """AssertionError (PyTorch's) unless `t` has dimension `dim` of length `size`."""
    if not -t.dim() <= dim < t.dim():
        raise AssertionError(f"dim {dim} out of range for {name} with {t.dim()} dimensions")
    if t.shape[dim] != size:
        raise AssertionError(f"{name}.size({dim}) = {t.shape[dim]} must equal {what} {size}")


def _check_transforms(tseq: Sequence[Transform]) -> None:
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")


class CatTransform(Transform):
    """Applies `tseq[i]` to the i-th slice of `dim` (of length `lengths[i]`, default 1), as
    `tg.cat` joins them."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None,
                 cache_size: int = 0) -> None:
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        """The largest event dimension of the parts."""
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        """The total length along `dim`."""
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, t: Tensor, name: str, inverse: bool) -> Tensor:
        _check_slices(name, t, self.dim, self.length, "length")
        slices, start = [], 0
        for transform, length in zip(self.transforms, self.lengths, strict=True):
            part = t.narrow(self.dim, start, length)
            slices.append(transform.inv(part) if inverse else transform(part))
            start += length
        return tg.cat(slices, dim=self.dim)

    def _call(self, x: Tensor) -> Tensor:
        return self._map(x, "x", inverse=False)

    def _inverse(self, y: Tensor) -> Tensor:
        return self._map(y, "y", inverse=True)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """The parts' terms (summed up to the common event dimension), joined along `dim`, or
        added when `dim` lies inside the event."""
        _check_slices("x", x, self.dim, self.length, "length")
        _check_slices("y", y, self.dim, self.length, "length")
        terms, start = [], 0
        for transform, length in zip(self.transforms, self.lengths, strict=True):
            term = transform.log_abs_det_jacobian(x.narrow(self.dim, start, length),
                                                  y.narrow(self.dim, start, length))
            if transform.event_dim < self.event_dim:
                term = sum_rightmost(term, self.event_dim - transform.event_dim)
            terms.append(term)
            start += length
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return tg.cat(terms, dim=dim)
        return sum(terms)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """Whether every part is."""
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        """The parts' domains, joined with `constraints.cat`."""
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        """The parts' codomains, joined with `constraints.cat`."""
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies `tseq[i]` to the i-th entry along `dim`, as `tg.stack` joins them."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0) -> None:
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z: Tensor) -> list[Tensor]:
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x: Tensor) -> Tensor:
        _check_slices("x", x, self.dim, len(self.transforms), "len(transforms)")
        return tg.stack([t(part) for part, t in zip(self._slice(x), self.transforms, strict=True)],
                        dim=self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        _check_slices("y", y, self.dim, len(self.transforms), "len(transforms)")
        return tg.stack([t.inv(part) for part, t in zip(self._slice(y), self.transforms, strict=True)],
                        dim=self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """The parts' terms, stacked along `dim`."""
        _check_slices("x", x, self.dim, len(self.transforms), "len(transforms)")
        _check_slices("y", y, self.dim, len(self.transforms), "len(transforms)")
        terms = [t.log_abs_det_jacobian(xs, ys)
                 for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms, strict=True)]
        return tg.stack(terms, dim=self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """Whether every part is."""
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        """The parts' domains, joined with `constraints.stack`."""
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        """The parts' codomains, joined with `constraints.stack`."""
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x), from the distribution's support onto [0, 1] (a copula's
    marginal); log |det J| is the distribution's log-density."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        """The distribution's support."""
        return self.distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log p(x)."""
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
