"""scalargrad: a micrograd-style autograd engine over scalars, and THE graph engine.

Tutorial chapter 1 starts here. `Value` holds one float; `scalargrad.engine` orders any graph
and runs backprop (the tensors of `tensorgrad` run on it too); `scalargrad.nn` has micrograd's
`Neuron`, `Layer` and `MLP`; `gradcheck` compares backward with finite differences.
"""

from scalargrad.engine import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from scalargrad.gradcheck import GradcheckError, gradcheck
from scalargrad.value import Value

__version__ = "0.1.0"  # the distribution's version: pyproject.toml reads it from here
__all__ = [
    "Value",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "gradcheck",
    "GradcheckError",
]
