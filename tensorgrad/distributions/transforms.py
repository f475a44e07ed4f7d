"""Transforms: invertible maps y = f(x) with their log |det J|, PyTorch's
`torch.distributions.transforms`.

A transform maps its `domain` into its `codomain` (both constraints) and knows its inverse
(`t.inv`, itself a transform) and `log_abs_det_jacobian(x, y)`, log |dy/dx| summed over the event:
exactly what `TransformedDistribution` needs to turn a base density into the density of f(x)
(`LogNormal` is `Normal` through `ExpTransform`). With `cache_size=1` a transform remembers its
last (x, y) pair, so inverting a value it just produced returns the original x exactly.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
import weakref
from collections.abc import Sequence
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.utils import broadcast_all, sum_rightmost
from tensorgrad.nn.functional import logsigmoid, pad, softplus
from tensorgrad.tensor import Tensor

__all__ = [
    "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform",
    "SigmoidTransform", "SoftmaxTransform", "StickBreakingTransform", "TanhTransform", "Transform",
    "identity_transform", "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform",
    "SoftplusTransform", "StackTransform",
]


def _clipped_sigmoid(x: Tensor) -> Tensor:
    """sigmoid(x) kept inside (0, 1) of x's dtype, so its log and the inverse stay finite."""
    finfo = tg.finfo(x.dtype)
    return tg.clamp(tg.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


class Transform:
    """The base class of invertible (or at least left-invertible) maps with computable
    log |det J|. Subclasses give `_call` (forward), `_inverse` and `log_abs_det_jacobian`."""

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size == 1:
            self._cached_x_y: tuple[Any, Any] = (None, None)
        elif cache_size != 0:
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_inv"] = None  # a weak reference cannot be pickled
        return state

    @property
    def event_dim(self) -> int:
        """The event dimension of domain and codomain, when they agree."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (held weakly, so the pair forms no reference cycle)."""
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self) -> Any:
        """+1 or -1 (or a tensor of them): whether the map increases or decreases, for bijective
        elementwise transforms."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size (itself when it already has it)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        """y = f(x) (the cached y when x is the cached x)."""
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        """x = f^-1(y) (the cached x when y is the cached y)."""
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |dy/dx| at the pair (x, y = f(x)), summed over the event."""
        raise NotImplementedError

    def forward_shape(self, shape: Any) -> Any:
        """The output shape for an input of `shape`."""
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        """The input shape for an output of `shape`."""
        return shape

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: swaps its forward and inverse, domain and codomain."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform  # a strong reference: the inverse keeps its forward alive

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        """The forward's codomain."""
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        """The forward's domain."""
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """The forward's."""
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        """The forward's."""
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        """The forward transform."""
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        """The inverse of the forward with this cache size."""
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x: Tensor) -> Tensor:
        """The forward's inverse (sharing its cache)."""
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """-(the forward's log |det J| at (y, x))."""
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        """The forward's inverse_shape."""
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        """The forward's forward_shape."""
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """`parts` applied in order (parts[0] first); `ComposeTransform([])` is the identity. Its
    event dimension is the largest any part needs, so lower-dimensional parts' log |det J| are
    summed over the extra dimensions."""

    def __init__(self, parts: Sequence[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        """The first part's domain, made independent up to the composition's event dimension."""
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim  # walk back to the input's event dimension
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        """The last part's codomain, made independent up to the composition's event dimension."""
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        """Whether every part is."""
        return all(part.bijective for part in self.parts)

    @property
    def sign(self) -> Any:
        """The product of the parts' signs."""
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self) -> Transform:
        """The inverted parts in reverse order."""
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([part.inv for part in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This composition with every part's cache size set."""
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Tensor) -> Tensor:
        """Each part in turn."""
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """The sum of the parts' terms, each summed up to the composition's event dimension."""
        if not self.parts:
            return tg.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, x_in, y_out in zip(self.parts, xs[:-1], xs[1:], strict=True):
            term = part.log_abs_det_jacobian(x_in, y_out)
            terms.append(sum_rightmost(term, event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape: Any) -> Any:
        """Each part's forward_shape in turn."""
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        """Each part's inverse_shape, last part first."""
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = "\n    ".join(repr(p) for p in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """y = exp(x), from the reals onto (0, inf)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """x (dy/dx = exp(x))."""
        return x


class PowerTransform(Transform):
    """y = x ** exponent on (0, inf)."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Tensor | float, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    @property
    def sign(self) -> Tensor:
        """sign(exponent)."""
        return self.exponent.sign()

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |exponent * y / x|."""
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Any) -> Any:
        """shape broadcast with the exponent's."""
        return Size(tg.broadcast_shapes(tuple(shape), tuple(self.exponent.shape)))

    def inverse_shape(self, shape: Any) -> Any:
        """shape broadcast with the exponent's."""
        return Size(tg.broadcast_shapes(tuple(shape), tuple(self.exponent.shape)))


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)), from the reals onto (0, 1) (clipped away from 0 and 1)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return _clipped_sigmoid(x)

    def _inverse(self, y: Tensor) -> Tensor:
        finfo = tg.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log sigmoid(x) + log sigmoid(-x) = -softplus(-x) - softplus(x)."""
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh(x), from the reals onto (-1, 1)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        # No clipping: an input of exactly +-1 gives +-inf, which the caller should see.
        return tg.atanh(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log(1 - tanh(x)**2), written as 2 (log 2 - x - softplus(-2x)) to stay accurate."""
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: its inverse picks the nonnegative root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class AffineTransform(Transform):
    """y = loc + scale * x; with `event_dim` > 0, log |det J| sums over that many rightmost
    dimensions."""

    bijective = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, event_dim: int = 0,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        """The number of rightmost dimensions in one event."""
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        """The reals, with `event_dim` event dimensions."""
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        """The reals, with `event_dim` event dimensions."""
        return self.domain

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, numbers.Number) and isinstance(theirs, numbers.Number):
                if mine != theirs:
                    return False
            elif not bool((mine == theirs).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self) -> Any:
        """sign(scale) (a number for a number scale)."""
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |scale|, broadcast to x's shape and summed over the event."""
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = tg.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:result.dim() - self.event_dim]) + (-1,)).sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        """shape broadcast with loc's and scale's."""
        return Size(tg.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                        tuple(getattr(self.scale, "shape", ()))))

    def inverse_shape(self, shape: Any) -> Any:
        """shape broadcast with loc's and scale's."""
        return self.forward_shape(shape)


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dimension: onto the simplex. Not bijective (x + c maps to
    the same y); the inverse returns log(y), one preimage. No log |det J|."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        """Unchanged (at least 1-D)."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        """Unchanged (at least 1-D)."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """A bijection from R^K onto the K-simplex in R^(K+1) by stick breaking: each sigmoid(x_i)
    (offset so that x = 0 maps to the uniform point) is the share taken of what is left."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _log_offset(x: Tensor, k: int) -> Tensor:
        """log(K + 1 - i) for i = 1..K: the shift that makes x = 0 break the stick evenly."""
        return (k + 1 - x.new_ones(k).cumsum(-1)).log()

    def _call(self, x: Tensor) -> Tensor:
        z = _clipped_sigmoid(x - self._log_offset(x, x.shape[-1]))
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, (0, 1), value=1.0) * pad(z_cumprod, (1, 0), value=1.0)

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        offset = (y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)).log()
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=tg.finfo(y.dtype).tiny)
        return y_crop.log() - remaining.log() + offset

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """sum_i (log sigmoid(z_i) - z_i + log y_i), z the offset input."""
        z = x - self._log_offset(x, x.shape[-1])
        return (-z + logsigmoid(z) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        """The last dimension one longer."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape: Any) -> Any:
        """The last dimension one shorter."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


# The structural transforms live in their own module, which needs `Transform` from this one.
from tensorgrad.distributions.structured_transforms import (  # noqa: E402
    CatTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    SoftplusTransform,
    StackTransform,
)
