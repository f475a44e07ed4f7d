"""micrograd's neural network on `Value`s: `Module`, `Neuron`, `Layer`, `MLP`.

Tutorial chapter 5 ("a neuron, a layer, an MLP") introduces it. The classes have micrograd's
names, shapes and order of parameters, so micrograd code runs unchanged; two things differ:

- Initialisation is seedable: `MLP(2, [16, 16, 1], seed=0)` draws every weight from its own
  `random.Random(0)`, never from the global `random` state, so two nets built with the same
  seed are identical whatever else the program does with `random`.
- A neuron's `w . x + b` is one node, `Value.dot`, instead of `n` products and a chain of `n`
  additions: a fifth of micrograd's nodes, with the same value (micrograd's order of additions)
  and the same gradients.

Wrong arguments get a clear error at the edge: a size that is not an int is a TypeError, a
negative one a ValueError; calling a module with the wrong number of inputs is a ValueError
that names both numbers, and an input that is not a number or a Value is a TypeError.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from numbers import Integral

from scalargrad.value import Value, _is_number

__all__ = ["Module", "Neuron", "Layer", "MLP"]

Input = Sequence[Value | float] | Value | float


class Module:
    """Base class: something with parameters (`Value`s) whose gradients can be zeroed."""

    def zero_grad(self) -> None:
        """Set every parameter's `.grad` to 0.0 (gradients accumulate across backward calls)."""
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> list[Value]:
        """Every parameter, in a fixed order; none for the base class."""
        return []


class Neuron(Module):
    """relu(w . x + b), or w . x + b when `nonlin` is False.

    `nin` weights drawn uniformly from [-1, 1) and a bias of 0, as in micrograd. `rng` is the
    `random.Random` the weights are drawn from; `None` means a fresh, unseeded one.
    """

    def __init__(self, nin: int, nonlin: bool = True, rng: random.Random | None = None) -> None:
        nin = _size(nin, "nin", "Neuron")
        rng = random.Random() if rng is None else rng
        self.w = [Value(rng.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0.0)
        self.nonlin = nonlin

    def __call__(self, x: Input) -> Value:
        """The neuron's output for the inputs `x` (floats or Values, `nin` of them)."""
        return self._forward(_inputs(x, len(self.w), self))

    def _forward(self, x: list[Value]) -> Value:
        """The output for inputs already checked and made Values."""
        # One node for w . x + b: micrograd's sum(..., self.b) made n products and n sums.
        act = Value.dot(self.w, x, self.b)
        return act.relu() if self.nonlin else act

    def parameters(self) -> list[Value]:
        """The weights, then the bias."""
        return self.w + [self.b]

    def __repr__(self) -> str:
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"

    def _signature(self) -> str:
        return f"Neuron({len(self.w)})"


class Layer(Module):
    """`nout` neurons that all read the same inputs. Keyword arguments go to each `Neuron`."""

    def __init__(self, nin: int, nout: int, **kw) -> None:
        self.nin = _size(nin, "nin", "Layer")
        self.neurons = [Neuron(nin, **kw) for _ in range(_size(nout, "nout", "Layer"))]

    def __call__(self, x: Input) -> Value | list[Value]:
        """Each neuron's output: a list, or a single Value when the layer has one neuron."""
        return self._forward(_inputs(x, self.nin, self))

    def _forward(self, x: list[Value]) -> Value | list[Value]:
        """The outputs for inputs already checked and made Values (once, for all the neurons)."""
        out = [n._forward(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        """Neuron by neuron, each neuron's weights then its bias."""
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"

    def _signature(self) -> str:
        return f"Layer({self.nin}, {len(self.neurons)})"


class MLP(Module):
    """A multi-layer perceptron: `nin` inputs, then one layer per entry of `nouts`.

    Hidden layers use relu; the last layer is linear. `seed` seeds the weights' own
    `random.Random`; `None` draws an unseeded one. An MLP whose last layer has one neuron
    returns a Value, else a list of Values.
    """

    def __init__(self, nin: int, nouts: Sequence[int], seed: int | None = None) -> None:
        if isinstance(nouts, (str, bytes)) or not isinstance(nouts, Sequence):
            raise TypeError(f"MLP: nouts must be a list of layer sizes such as [16, 16, 1], "
                            f"got {type(nouts).__name__} ({nouts!r})")
        self.nin = _size(nin, "nin", "MLP")
        nouts = [_size(n, f"nouts[{i}]", "MLP") for i, n in enumerate(nouts)]
        rng = random.Random(seed)
        sz = [nin, *nouts]
        self.layers = [
            Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1, rng=rng) for i in range(len(nouts))
        ]

    def __call__(self, x: Input) -> Value | list[Value]:
        """The network's output for one input vector `x` (`nin` floats or Values)."""
        x = _inputs(x, self.nin, self)
        for layer in self.layers:
            x = layer._forward(x if isinstance(x, list) else [x])  # a one-neuron layer gave a Value
        return x

    def parameters(self) -> list[Value]:
        """Layer by layer, neuron by neuron, weights then bias: micrograd's order."""
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"

    def _signature(self) -> str:
        return f"MLP({self.nin}, {[len(layer.neurons) for layer in self.layers]})"


def _size(n: int, name: str, who: str) -> int:
    """A layer size: an int >= 0 (TypeError for a float or bool, ValueError below 0)."""
    if not isinstance(n, Integral) or isinstance(n, bool):
        raise TypeError(f"{who}: {name} must be an int, got {type(n).__name__} ({n!r})")
    if n < 0:
        raise ValueError(f"{who}: {name} must be >= 0, got {n}")
    return int(n)


def _inputs(x: Input, nin: int, module: Neuron | Layer | MLP) -> list[Value]:
    """`x` as a list of `nin` Values (numbers become constant leaves), or an error naming the module."""
    if isinstance(x, Value) or _is_number(x):
        x = [x]  # a single number for a one-input module (or a one-neuron layer's output)
    elif isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise TypeError(f"{module._signature()}: inputs must be a list of numbers or Values, "
                        f"got {type(x).__name__} ({x!r})")
    else:
        x = list(x)
    if len(x) != nin:
        raise ValueError(f"{module._signature()} takes {nin} inputs, got {len(x)}")
    for i, xi in enumerate(x):
        if not isinstance(xi, Value):
            if not _is_number(xi):
                raise TypeError(f"{module._signature()}: input {i} is a {type(xi).__name__} ({xi!r}), "
                                "not a number or Value")
            x[i] = Value(xi)
    return x
