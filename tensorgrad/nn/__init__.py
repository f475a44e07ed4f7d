"""`tensorgrad.nn`: building blocks for networks, under PyTorch's names (tutorial chapter 9).

Layers with state (`Module`, `Parameter`, `Linear`, `ReLU`, `Tanh`, `Sigmoid`, `Dropout`,
`Sequential`) live in `modules`; the stateless ops (activations, `linear`, `dropout`, the
losses) in `functional`, usually imported as `F`.
"""

from tensorgrad.nn import functional
from tensorgrad.nn.modules import Dropout, Linear, Module, Parameter, ReLU, Sequential, Sigmoid, Tanh

__all__ = ["functional", "Module", "Parameter", "Linear", "ReLU", "Tanh", "Sigmoid", "Dropout", "Sequential"]
