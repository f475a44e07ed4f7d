"""`tensorgrad.nn.functional`: the stateless half of `nn`, under PyTorch's names.

`import tensorgrad.nn.functional as F`, then `F.relu(F.linear(x, w, b))` and
`F.cross_entropy(logits, labels)`, exactly as with `torch.nn.functional`. Each name is the op
itself (defined in its op module), so "jump to definition" lands on the forward and backward.
"""

from __future__ import annotations

from tensorgrad.elementwise import dropout, relu, sigmoid, tanh
from tensorgrad.loss import binary_cross_entropy_with_logits, cross_entropy, mse_loss
from tensorgrad.matmul import linear
from tensorgrad.reduce import log_softmax, softmax

__all__ = [
    "relu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "dropout",
    "linear",
    "cross_entropy",
    "mse_loss",
    "binary_cross_entropy_with_logits",
]
