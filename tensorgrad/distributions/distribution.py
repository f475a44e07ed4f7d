"""`Distribution`: the base class every distribution derives from, PyTorch's
`torch.distributions.Distribution`.

A distribution object holds parameters (tensors) and answers questions about the random
variable they describe: `sample`, `log_prob`, `mean`, `entropy`, ... Its `batch_shape` is the
shape of independent distributions held at once (`Normal(tg.zeros(3), 1.0)` is 3 normals) and
its `event_shape` the shape of one draw (2 for a 2-D `MultivariateNormal`).
"""

from __future__ import annotations

import warnings
from typing import Any

import tensorgrad as tg
from tensorgrad.compat import Size
from tensorgrad.distributions import constraints
from tensorgrad.distributions.utils import lazy_property
from tensorgrad.tensor import Tensor

__all__ = ["Distribution"]


def _all_true(valid: Any) -> bool:
    """Whether every entry of a constraint's answer is True."""
    return bool(valid.all()) if isinstance(valid, Tensor) else bool(valid)


class Distribution:
    """The abstract base class of probability distributions.

    `batch_shape` (the shape over which parameters are batched) and `event_shape` (the shape of
    one sample) are fixed at construction. With `validate_args` (by default on, as PyTorch's, and
    settable for all with `Distribution.set_default_validate_args`), parameters outside their
    `arg_constraints` and `log_prob` values outside the `support` raise ValueError.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made without `validate_args=`."""
        if value not in [True, False]:
            raise ValueError(f"set_default_validate_args(): expects True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        """Raise ValueError naming the first parameter that breaks its constraint."""
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with `validate_args=False` "
                          "to turn off validation.",
                          stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # a constraint that depends on other parameters cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # not given, so computed from a parameter that is checked
            value = getattr(self, param)
            if not _all_true(constraint.check(value)):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                 f"{tuple(value.shape)}) of distribution {self!r} "
                                 f"to satisfy the constraint {constraint!r}, "
                                 f"but found invalid values:\n{value}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A new distribution with its parameters expanded (as views) to `batch_shape`."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The constraint each parameter must satisfy, by name."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint describing the values the variable takes."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        """The mean of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        """The mode (most likely value) of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation: sqrt(variance)."""
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Draws of shape sample_shape + batch_shape + event_shape, outside the graph."""
        with tg.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Reparameterized draws: a differentiable function of the parameters and parameter-free
        noise, so gradients flow from the draws back to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """`sample((n,))` (deprecated in PyTorch)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning,
                      stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the probability density (or mass) at `value`."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at `value`."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at `value` (a probability)."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All values of a discrete distribution, along dimension 0: shape
        (cardinality,) + batch_shape + event_shape (batch dimensions of size 1 if not `expand`)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, of shape batch_shape."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return tg.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = ()) -> Size:
        """sample_shape + batch_shape + event_shape."""
        return Size(tuple(Size(sample_shape)) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Any) -> None:
        """Raise ValueError unless `value` is a tensor whose shape broadcasts with batch_shape +
        event_shape and whose entries lie in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = Size(value.shape)
        event_start = len(shape) - len(self._event_shape)
        if shape[event_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {shape} vs "
                             f"{self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(shape), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {shape} vs "
                                 f"{Size(expected)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
            return
        if not _all_true(support.check(value)):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support ({support!r}) "
                             f"of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        """The instance `expand` fills: `_instance`, or a bare one of this class."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines "
                                      "a custom __init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = [f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else Size(self.__dict__[p].shape)}"
                 for p in names]
        return f"{self.__class__.__name__}({', '.join(shown)})"
