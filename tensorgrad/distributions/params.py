"""Parameter handling the distributions share: `expand` for distributions that hold their
parameters as tensors, and the probs/logits pair (give exactly one, the other computed on first
use) of the Bernoulli family and of `Categorical`."""

from __future__ import annotations

from typing import Any

from tensorgrad.compat import Size
from tensorgrad.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits
from tensorgrad.tensor import Tensor

__all__ = ["expand_params", "ProbsLogitsMixin", "ParamShapeMixin", "RelaxedParamsMixin"]


def expand_params(dist: Any, cls: type, batch_shape: Any, _instance: Any = None,
                  names: tuple[str, ...] = ()) -> Any:
    """The common body of `cls.expand`: a bare `cls` instance (or `_instance`) whose attributes
    `names` (tensors, or distributions it is built on) are `dist`'s expanded to `batch_shape`
    (tensors as views, keeping their dimensions right of the batch, such as a categorical's K),
    initialized unchecked with `dist`'s event shape and validation flag."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    batch_dims = len(dist.batch_shape)
    for name in names:
        param = getattr(dist, name)
        shape = batch_shape + Size(param.shape[batch_dims:]) if isinstance(param, Tensor) else batch_shape
        setattr(new, name, param.expand(shape))
    super(cls, new).__init__(batch_shape, dist.event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


class ProbsLogitsMixin:
    """A distribution given by exactly one of `probs` or `logits`, the other computed (once) when
    first read. `_binary` picks the link: sigmoid / log-odds for a binary event, else softmax /
    log over the last dimension."""

    _binary = True

    def _set_probs_or_logits(self, probs: Any, logits: Any, *others: Any) -> tuple[Tensor, ...]:
        """Stores the one given of `probs`/`logits` (and as `_param`) broadcast with `others`,
        and returns `others` broadcast."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        *others, param = broadcast_all(*others, given)
        setattr(self, name, param)
        self._param = param
        return tuple(others)

    def _expand_probs_logits(self, cls: type, batch_shape: Any, _instance: Any,
                             names: tuple[str, ...] = ()) -> Any:
        """`expand_params` over `names` and whichever of probs/logits this one holds."""
        # only the given (or already computed) one of probs/logits: the other stays lazy
        held = tuple(name for name in ("probs", "logits") if name in self.__dict__)
        new = expand_params(self, cls, batch_shape, _instance, names + held)
        # as PyTorch's: the logits when both are held
        new._param = new.logits if "logits" in new.__dict__ else new.probs
        return new

    @lazy_property
    def logits(self) -> Tensor:
        """The log-odds log(p) - log(1 - p) (binary) or log(probs), with probs clamped into
        [eps, 1 - eps]."""
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self) -> Tensor:
        """sigmoid(logits) (binary) or softmax(logits) over the last dimension."""
        return logits_to_probs(self.logits, is_binary=self._binary)


class ParamShapeMixin:
    """`param_shape`: the shape of the parameter given (held as `_param`)."""

    _param: Tensor

    @property
    def param_shape(self) -> Size:
        """The shape of the parameter given."""
        return Size(self._param.shape)


class RelaxedParamsMixin:
    """`temperature`, `probs` and `logits` of the base distribution of a relaxed (transformed)
    distribution."""

    base_dist: Any

    @property
    def temperature(self) -> Tensor | float:
        """The relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        """The base's logits."""
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        """The base's probs."""
        return self.base_dist.probs
