"""Constraints: the sets a distribution's parameters and values must lie in, PyTorch's
`torch.distributions.constraints`.

A constraint's `check(value)` returns a bool tensor: one entry per event, True where `value` is
in the set (`positive.check(t)` is `t > 0`). `event_dim` is how many rightmost dimensions make
one event (1 for `simplex`, 2 for `positive_definite`); `is_discrete` says whether the set is
countable. Distributions validate their parameters with `arg_constraints` and the values given
to `log_prob` with `support`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorgrad as tg
from tensorgrad.tensor import Tensor

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
    "greater_than_eq",
    "independent", "integer_interval", "interval", "half_open_interval", "is_dependent", "less_than",
    "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer", "one_hot",
    "positive", "positive_semidefinite", "positive_definite", "positive_integer", "real", "real_vector",
    "simplex", "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    """The base class: a region of values; `check(value)` says, per event, whether it is inside."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A bool tensor of shape `value.shape[:value.dim() - event_dim]`: True where satisfied."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters; it cannot be checked."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Whether the set is countable, when it was declared."""
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The number of rightmost dimensions of one event, when it was declared."""
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> _Dependent:
        """A dependent constraint with `is_discrete` and `event_dim` declared."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x: Tensor) -> Tensor:
        """Always an error: a dependent constraint has no set of its own to check against."""
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether `constraint` is a `dependent` placeholder (validation skips those)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: `Uniform.support` is the class's
    placeholder and each instance's `interval(low, high)`."""

    def __init__(self, fn: Callable[..., Any] | None = None, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn: Callable[..., Any]) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """`base_constraint` with its `reinterpreted_batch_ndims` rightmost batch dimensions made part
    of the event: an event is valid when all its entries are."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent(): base_constraint must be a Constraint, got "
                            f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"independent(): reinterpreted_batch_ndims must be an int >= 0, got "
                             f"{reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """The base constraint's."""
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The base constraint's plus the reinterpreted dimensions."""
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        """The base check, then all() over the reinterpreted dimensions."""
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        kept = result.dim() - self.reinterpreted_batch_ndims
        return result.reshape(tuple(result.shape[:kept]) + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    """{0, 1}."""

    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        """value == 0 or value == 1."""
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """Vectors of zeros with a single one."""

    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        """Every entry 0 or 1, and the entries sum to 1."""
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Bounds(Constraint):
    """A constraint with bounds, shown in its repr as PyTorch shows them."""

    def __init__(self, lower_bound: Any = None, upper_bound: Any = None) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def __repr__(self) -> str:
        bounds = [f"{name}={getattr(self, name)}" for name in ("lower_bound", "upper_bound")
                  if name in self._shown]
        return f"{self.__class__.__name__[1:]}({', '.join(bounds)})"

    _shown: tuple[str, ...] = ("lower_bound", "upper_bound")


class _IntegerInterval(_Bounds):
    """Integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        """An integer value between the bounds, both included."""
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerLessThan(_Bounds):
    """Integers <= upper_bound."""

    is_discrete = True
    _shown = ("upper_bound",)

    def __init__(self, upper_bound: Any) -> None:
        super().__init__(upper_bound=upper_bound)

    def check(self, value: Tensor) -> Tensor:
        """An integer value at most upper_bound."""
        return (value % 1 == 0) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Bounds):
    """Integers >= lower_bound."""

    is_discrete = True
    _shown = ("lower_bound",)

    def __init__(self, lower_bound: Any) -> None:
        super().__init__(lower_bound=lower_bound)

    def check(self, value: Tensor) -> Tensor:
        """An integer value at least lower_bound."""
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    """The extended real line: anything but NaN."""

    def check(self, value: Tensor) -> Tensor:
        """value == value (False only for NaN)."""
        return value == value


class _GreaterThan(_Bounds):
    """(lower_bound, inf)."""

    _shown = ("lower_bound",)

    def __init__(self, lower_bound: Any) -> None:
        super().__init__(lower_bound=lower_bound)

    def check(self, value: Tensor) -> Tensor:
        """lower_bound < value."""
        return self.lower_bound < value


class _GreaterThanEq(_GreaterThan):
    """[lower_bound, inf)."""

    def check(self, value: Tensor) -> Tensor:
        """lower_bound <= value."""
        return self.lower_bound <= value


class _LessThan(_Bounds):
    """(-inf, upper_bound)."""

    _shown = ("upper_bound",)

    def __init__(self, upper_bound: Any) -> None:
        super().__init__(upper_bound=upper_bound)

    def check(self, value: Tensor) -> Tensor:
        """value < upper_bound."""
        return value < self.upper_bound


class _Interval(_Bounds):
    """[lower_bound, upper_bound]."""

    def check(self, value: Tensor) -> Tensor:
        """lower_bound <= value <= upper_bound."""
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Bounds):
    """[lower_bound, upper_bound)."""

    def check(self, value: Tensor) -> Tensor:
        """lower_bound <= value < upper_bound."""
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Vectors of nonnegative entries summing to 1 (within 1e-6)."""

    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        """All entries >= 0 and |sum - 1| < 1e-6."""
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative integer count vectors summing to at most upper_bound."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Tensor) -> Tensor:
        """All counts >= 0 and their sum <= upper_bound."""
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


def _all_matrix(values: Tensor) -> Tensor:
    """all() over the last two dimensions of a bool tensor."""
    return values.reshape(tuple(values.shape[:-2]) + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        """Nothing above the diagonal."""
        return _all_matrix(value.tril() == value)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal (Cholesky factors)."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        """Lower-triangular, and every diagonal entry > 0."""
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _all_matrix(value.tril() == value) & positive_diagonal


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower triangular, positive diagonal, unit rows."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        """A lower Cholesky factor whose rows have Euclidean norm 1 (within 10 n eps)."""
        tol = tg.finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = tg.linalg.norm(value.detach(), dim=-1)
        unit_row_norm = ((row_norm - 1.0).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        """The last two sizes are equal."""
        return tg.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=tg.bool,
                       device=value.device)


class _Symmetric(_Square):
    """Symmetric matrices (within an absolute 1e-6)."""

    def check(self, value: Tensor) -> Tensor:
        """Square, and close to its transpose."""
        square = super().check(value)
        if not bool(square.all()):
            return square
        return tg.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with nonnegative eigenvalues."""

    def check(self, value: Tensor) -> Tensor:
        """Symmetric, and every eigenvalue >= 0."""
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return (tg.linalg.eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric positive-definite matrices."""

    def check(self, value: Tensor) -> Tensor:
        """Symmetric, and its Cholesky factorisation succeeds."""
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return tg.linalg.cholesky_ex(value).info == 0


class _Cat(Constraint):
    """Constraints applied to consecutive slices of `dim` (`lengths` entries each), as `tg.cat`."""

    def __init__(self, cseq: Sequence[Constraint], dim: int = 0,
                 lengths: Sequence[int] | None = None) -> None:
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat(): {len(self.lengths)} lengths for {len(self.cseq)} constraints")
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Whether any part is discrete."""
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The largest event_dim of the parts."""
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        """Each part's check on its slice, concatenated along dim."""
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths, strict=True):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start = start + length
        return tg.cat(checks, self.dim)


class _Stack(Constraint):
    """One constraint per index of `dim`, as `tg.stack`."""

    def __init__(self, cseq: Sequence[Constraint], dim: int = 0) -> None:
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        """Whether any part is discrete."""
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        """The largest event_dim of the parts (one more when dim counts from the event's end)."""
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value: Tensor) -> Tensor:
        """Each part's check on its index, stacked along dim."""
        parts = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return tg.stack([c.check(v) for v, c in zip(parts, self.cseq, strict=False)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
