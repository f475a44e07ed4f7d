"""scalargrad: a micrograd-style autograd engine over scalars, and THE graph engine.

`Value` holds one float; `scalargrad.engine` orders any graph and runs backprop (the tensors of
`tensorgrad` run on it too); `scalargrad.nn` has micrograd's `Neuron`, `Layer` and `MLP`.
"""

from scalargrad.engine import enable_grad, is_grad_enabled, no_grad
from scalargrad.value import Value

__all__ = ["Value", "no_grad", "enable_grad", "is_grad_enabled"]
