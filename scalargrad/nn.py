"""micrograd's neural network on `Value`s: `Module`, `Neuron`, `Layer`, `MLP`.

Tutorial chapter 5 ("a neuron, a layer, an MLP") introduces it. The classes have micrograd's
names, shapes and order of parameters, so micrograd code runs unchanged; two things differ:

- Initialisation is seedable: `MLP(2, [16, 16, 1], seed=0)` draws every weight from its own
  `random.Random(0)`, never from the global `random` state, so two nets built with the same
  seed are identical whatever else the program does with `random`.
- A neuron's weighted sum is one n-ary `Value.sum` node instead of a chain of `n` binary
  additions: half the nodes, and much faster forward and backward passes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from numbers import Real

from scalargrad.value import Value

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
        rng = random.Random() if rng is None else rng
        self.w = [Value(rng.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0.0)
        self.nonlin = nonlin

    def __call__(self, x: Input) -> Value:
        """The neuron's output for the inputs `x` (floats or Values, `nin` of them)."""
        if isinstance(x, (Value, Real)):
            x = (x,)  # a one-neuron layer hands on a single Value, not a list
        # One sum node over the products and the bias: micrograd's sum(..., self.b) made n nodes.
        act = Value.sum([wi * xi for wi, xi in zip(self.w, x, strict=True)], self.b)
        return act.relu() if self.nonlin else act

    def parameters(self) -> list[Value]:
        """The weights, then the bias."""
        return self.w + [self.b]

    def __repr__(self) -> str:
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    """`nout` neurons that all read the same inputs. Keyword arguments go to each `Neuron`."""

    def __init__(self, nin: int, nout: int, **kw) -> None:
        self.neurons = [Neuron(nin, **kw) for _ in range(nout)]

    def __call__(self, x: Input) -> Value | list[Value]:
        """Each neuron's output: a list, or a single Value when the layer has one neuron."""
        if isinstance(x, (Value, Real)):
            x = (x,)  # the previous layer had one neuron and handed on a single Value
        # Make each number a Value once here, not once per neuron: the graph gets one node per input.
        x = [xi if isinstance(xi, Value) else Value(xi) for xi in x]
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        """Neuron by neuron, each neuron's weights then its bias."""
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """A multi-layer perceptron: `nin` inputs, then one layer per entry of `nouts`.

    Hidden layers use relu; the last layer is linear. `seed` seeds the weights' own
    `random.Random`; `None` draws an unseeded one. An MLP whose last layer has one neuron
    returns a Value, else a list of Values.
    """

    def __init__(self, nin: int, nouts: Sequence[int], seed: int | None = None) -> None:
        rng = random.Random(seed)
        sz = [nin, *nouts]
        self.layers = [
            Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1, rng=rng) for i in range(len(nouts))
        ]

    def __call__(self, x: Input) -> Value | list[Value]:
        """The network's output for one input vector `x`."""
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self) -> list[Value]:
        """Layer by layer, neuron by neuron, weights then bias: micrograd's order."""
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"
