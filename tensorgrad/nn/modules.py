"""Layers with state: `Module`, `Parameter`, `Linear`, activations, `Dropout`, `Sequential`.

Tutorial chapter 9. A `Module` keeps two registries, filled by attribute assignment as in
PyTorch: `_parameters` (each `Parameter` assigned to it) and `_modules` (each sub-module). From
them come `parameters()`, `named_parameters()` with dotted names (`layers.0.weight`),
`state_dict()` and `load_state_dict()`, `zero_grad()`, and `train()` / `eval()`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorgrad.elementwise import dropout, relu, sigmoid, tanh
from tensorgrad.matmul import linear
from tensorgrad.tensor import Tensor, _generator, _init, _to_array

__all__ = ["Parameter", "Module", "Linear", "ReLU", "Tanh", "Sigmoid", "Dropout", "Sequential"]


class Parameter(Tensor):
    """A tensor that is a module's learnable state: it requires grad unless told otherwise.

    Assigning one to a `Module` attribute registers it. Ops on parameters give plain tensors.
    """

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        # Shares memory with a tensor or array handed in (as torch.nn.Parameter does).
        array = data.data if isinstance(data, Tensor) else _to_array(data)
        _init(self, array, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of layers and models: subclass it, assign parameters and layers, write forward.

    >>> class TwoLayer(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = Linear(2, 8)
    ...         self.out = Linear(8, 1)
    ...     def forward(self, x):
    ...         return self.out(self.hidden(x).relu())
    >>> [name for name, _ in TwoLayer().named_parameters()]
    ['hidden.weight', 'hidden.bias', 'out.weight', 'out.bias']
    """

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ reads these registries.
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; every subclass defines it (calling a module calls this)."""
        raise TypeError(f"{type(self).__name__} has no forward() method: a Module subclass defines "
                        "forward(self, ...) to say what calling it computes")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # --- registration -------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() call: call super().__init__() "
                f"first in {type(self).__name__}.__init__"
            )
        # Take the name out of every registry first, so that re-assigning it replaces the entry.
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        self.__dict__.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Called only when normal lookup fails: the registries, then a clear error for a typo.
        registries = self.__dict__.get("_parameters", {}), self.__dict__.get("_modules", {})
        for registry in registries:
            if name in registry:
                return registry[name]
        known = sorted([*registries[0], *registries[1]])
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r} (its parameters and "
                             f"modules: {', '.join(known) or 'none'})")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    # --- walking the tree ---------------------------------------------------------------------

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and every module under it, each once, with its dotted name ('' for self)."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{child}" if name else child, m) for child, m in module._modules.items()]
            stack.extend(reversed(children))  # reversed: yield in assignment order

    def modules(self) -> Iterator[Module]:
        """This module and every module under it."""
        return (module for _, module in self.named_modules())

    def children(self) -> Iterator[Module]:
        """The direct sub-modules, in assignment order."""
        return iter(self._modules.values())

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its dotted name ('0.weight', 'encoder.bias'), each once."""
        seen: set[int] = set()
        for module_name, module in self.named_modules(prefix):
            for name, param in module._parameters.items():
                if id(param) not in seen:  # a parameter shared by two layers counts once
                    seen.add(id(param))
                    yield (f"{module_name}.{name}" if module_name else name), param

    def parameters(self) -> Iterator[Parameter]:
        """Every parameter, each once, in registration order: what an optimizer takes."""
        return (param for _, param in self.named_parameters())

    def zero_grad(self) -> None:
        """Drop every parameter's gradient (set it to None, PyTorch's default)."""
        for param in self.parameters():
            param.grad = None

    def train(self, mode: bool = True) -> Module:
        """Training mode (Dropout drops) for this module and all under it; returns self."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Evaluation mode (Dropout passes values through); returns self."""
        return self.train(False)

    # --- state --------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Tensor]:
        """Every parameter by dotted name, detached (sharing the parameter's memory), as in PyTorch."""
        return {name: param.detach() for name, param in self.named_parameters()}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        """Copy values into the parameters of the same names (shapes must match).

        With `strict`, the keys must match exactly: missing and unexpected keys are an error.
        """
        params = dict(self.named_parameters())
        missing = [name for name in params if name not in state_dict]
        unexpected = [name for name in state_dict if name not in params]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for name, param in params.items():
            if name not in state_dict:
                continue
            value = np.asarray(state_dict[name].data if isinstance(state_dict[name], Tensor)
                               else state_dict[name])
            if value.shape != param.shape:
                raise ValueError(
                    f"load_state_dict: {name} has shape {param.shape} in the model but {value.shape} "
                    "in the state dict"
                )
            param.data[...] = value  # in place: optimizers holding the parameter see the new values
            param._versions[0] += 1

    def extra_repr(self) -> str:
        """The arguments shown in this module's repr line (override in subclasses)."""
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): " + repr(module).replace("\n", "\n  ") for name, module in self._modules.items()]
        if not lines:
            return f"{type(self).__name__}({self.extra_repr()})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class Linear(Module):
    """y = x @ weight.T + bias, weight (out_features, in_features).

    PyTorch's default initialisation: weight and bias uniform in ±1/sqrt(in_features), drawn from
    tensorgrad's generator (`tg.manual_seed`).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype: Any = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features) if in_features else 0.0
        dtype = np.dtype(np.float32 if dtype is None else dtype)
        self.weight = Parameter(_uniform(bound, (out_features, in_features), dtype))
        self.bias = Parameter(_uniform(bound, (out_features,), dtype)) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        has_bias = self.bias is not None
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={has_bias}"


def _uniform(bound: float, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return _generator().uniform(-bound, bound, shape).astype(dtype)


class ReLU(Module):
    """max(x, 0), as a layer."""

    def forward(self, x: Tensor) -> Tensor:
        return relu(x)


class Tanh(Module):
    """tanh(x), as a layer."""

    def forward(self, x: Tensor) -> Tensor:
        return tanh(x)


class Sigmoid(Module):
    """1 / (1 + e**-x), as a layer."""

    def forward(self, x: Tensor) -> Tensor:
        return sigmoid(x)


class Dropout(Module):
    """In training, zero each element with probability p and scale the rest by 1 / (1 - p).

    In eval mode it passes its input through unchanged.
    """

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be between 0 and 1, got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Sequential(Module):
    """Modules applied one after the other; they are registered as '0', '1', ..."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for i, module in enumerate(modules):
            if not isinstance(module, Module):
                raise TypeError(f"Sequential: argument {i} is a {type(module).__name__}, not a Module")
            setattr(self, str(i), module)

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x

    def __getitem__(self, index: int | slice) -> Module:
        modules = list(self._modules.values())
        return Sequential(*modules[index]) if isinstance(index, slice) else modules[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())
