"""`tensorgrad.nn.utils.parametrize`: a module's tensor computed from other tensors, as PyTorch does it.

`register_parametrization(layer, "weight", P())` keeps the layer's weight as an *original*
tensor and makes `layer.weight` read as `P()(original)`, recomputed at each access, so the
gradient flows through P into the original, which the optimizer trains:

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).T       # layer.weight is symmetric, always

Where it lives, as in PyTorch: the original goes to `layer.parametrizations.weight.original`
(`original0`, `original1`, ... when P's `right_inverse` splits it in several tensors, as weight
normalisation does), and `layer`'s class becomes a subclass (`ParametrizedLinear`) with a
property `weight`; the state dict's keys follow (`parametrizations.weight.original`).
Assigning `layer.weight = W` sets the originals through the `right_inverse`s. `cached()`
computes each parametrized tensor once inside its block (a recurrent net reading its weight at
every time step).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from scalargrad.engine import no_grad
from tensorgrad.nn.modules import Module, ModuleDict, ModuleList, Parameter
from tensorgrad.tensor import Tensor

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList", "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache: dict[tuple[int, str], Tensor] = {}
_cache_depth = 0


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside this block each parametrized tensor is computed once, at its first access."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _register(module: Module, name: str, value: Tensor) -> None:
    """`value` under `name` as a parameter if it is one, else as a buffer."""
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_values(original: Tensor, value: Tensor) -> None:
    """Give `original` the values (and shape) of `value`, keeping the object the optimizer holds."""
    original.data = value.data


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s) they read.

    Made by `register_parametrization`, not by hand: `original` (or `original0`, `original1`, ...
    when the first parametrization's `right_inverse` returns several tensors) holds what the
    optimizer trains; calling the list computes the parametrized tensor.
    """

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    with contextlib.suppress(NotImplementedError):
                        new = module.right_inverse(new)
        if not isinstance(new, Tensor | Sequence):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                             f"tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {dtype}\nright_inverse(original).dtype: {new.dtype}")
            if new is not original:
                _set_values(original, new)
            _register(self, "original", original)
        else:
            for i, piece in enumerate(new):
                if not isinstance(piece, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors "
                                     f"(list, tuple...). Got element {i} of the sequence with type "
                                     f"{type(piece).__name__}.")
                piece = piece.detach()
                if isinstance(original, Parameter):
                    piece = Parameter(piece, requires_grad=original.requires_grad)
                _register(self, f"original{i}", piece)
        if not unsafe:
            _check_unchanged(self(), shape, dtype, "Registering a parametrization")

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) so that the list computes `value`: each parametrization's
        `right_inverse`, last one first."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement "
                                       "right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set_values(self.original, value)
                return
            if not isinstance(value, Sequence) or len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of {self.ntensors} tensors, got "
                                 f"{value!r}")
            for i, piece in enumerate(value):
                original = getattr(self, f"original{i}")
                if piece.dtype != original.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {piece.dtype} while "
                                     f"`original{i}` has dtype {original.dtype}")
                _set_values(original, piece)

    def forward(self) -> Tensor:
        """The parametrized tensor: the first parametrization on the original(s), then the rest."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _check_unchanged(value: Any, shape: tuple[int, ...], dtype: Any, what: str) -> None:
    """A parametrization (without `unsafe`) returns a tensor of the original's shape and dtype."""
    if not isinstance(value, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
    if value.dtype != dtype:
        raise ValueError(f"{what} may not change the dtype of the tensor, unless `unsafe` flag is enabled.\n"
                         f"unparametrized dtype: {dtype}\nparametrized dtype: {value.dtype}")
    if value.shape != shape:
        raise ValueError(f"{what} may not change the shape of the tensor, unless `unsafe` flag is enabled.\n"
                         f"unparametrized shape: {shape}\nparametrized shape: {value.shape}")


def _parametrized_class(module: Module) -> None:
    """Give `module` a class of its own, `Parametrized<Class>`, to carry the properties."""
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})


def _add_property(module: Module, tensor_name: str) -> None:
    """`module.<tensor_name>` computed by its parametrizations; assigning it sets the originals."""

    def compute(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_depth:
            return parametrization()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def assign(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(compute, assign))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make `module.<tensor_name>` read as `parametrization(original)`; returns the module.

    The parameter or buffer `tensor_name` becomes the original (the same object, so an optimizer
    built before keeps training it). If `parametrization` has `right_inverse(X)`, the original
    is set to `right_inverse(current value)` (several tensors if it returns a sequence). A second
    parametrization of the same tensor applies after the first. Unless `unsafe`, the result must
    keep the tensor's shape and dtype.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            _check_unchanged(parametrization(current), current.shape, current.dtype,
                             "Registering a parametrization")
            if hasattr(parametrization, "right_inverse"):
                with contextlib.suppress(NotImplementedError):
                    inverse = parametrization.right_inverse(current)
                    _check_unchanged(inverse, current.shape, current.dtype,
                                     "The tensor returned by parametrization.right_inverse")
        parametrizations = module.parametrizations[tensor_name]
        parametrizations.append(parametrization)
        parametrizations.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{type(module).__name__}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _parametrized_class(module)
        module.parametrizations = ModuleDict()
    _add_property(module, tensor_name)
    module.parametrizations[tensor_name] = parametrizations
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrized tensor (named `tensor_name`, if given)."""
    parametrizations = module._modules.get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Make `module.<tensor_name>` a plain parameter (or buffer) again; returns the module.

    With `leave_parametrized`, it keeps the parametrized value (in the original's object, when
    there is a single original); otherwise it goes back to the original's value.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {type(module).__name__} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                if not isinstance(value, Tensor):
                    raise TypeError(f"remove_parametrizations: the parametrized {tensor_name} is a "
                                    f"{type(value).__name__}, not a Tensor")
                if value.dtype != original.dtype:  # PyTorch's `set_` refuses to change the dtype
                    raise RuntimeError(f"remove_parametrizations: the parametrized {tensor_name} has dtype "
                                       f"{value.dtype} and the original {original.dtype}; it cannot be left "
                                       "parametrized in the original's place (use leave_parametrized=False)")
                _set_values(original, value)
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value.detach()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                         "parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization (its own class if it has none)."""
    return module.__class__.__bases__[0] if is_parametrized(module) else module.__class__


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Give `to_module` the parametrizations of `from_module` (of `tensor_name`, or all) and their
    originals (the same tensors); returns `to_module`."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations.keys())
    for name in names:
        source = from_module.parametrizations[name]
        if not is_parametrized(to_module, name):
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
            for parametrization in source:
                register_parametrization(to_module, name, parametrization, unsafe=source.unsafe)
        target = to_module.parametrizations[name]
        originals = ["original"] if source.is_tensor else [f"original{i}" for i in range(source.ntensors)]
        for original in originals:
            setattr(target, original, getattr(source, original))
    return to_module
