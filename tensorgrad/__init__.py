"""tensorgrad: PyTorch-style tensors on scalargrad's engine (`import tensorgrad as tg`).

A `Tensor` is a strided numpy array and a node of the same graph as `scalargrad.Value`:
views share memory, broadcasting is stride 0, matmul is BLAS, and `backward()` is scalargrad's
engine. Write your own differentiable op with `record` (see its docstring and the tutorial),
and check it with `gradcheck`.
"""

from scalargrad.engine import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from tensorgrad.elementwise import (
    abs,
    add,
    clamp,
    div,
    eq,
    exp,
    ge,
    gt,
    le,
    log,
    lt,
    maximum,
    minimum,
    mul,
    ne,
    neg,
    pow,
    relu,
    sigmoid,
    sqrt,
    sub,
    tanh,
    where,
)
from tensorgrad.gradcheck import GradcheckError, gradcheck
from tensorgrad.indexing import index_put
from tensorgrad.matmul import matmul
from tensorgrad.movement import (
    broadcast_to,
    cat,
    clone,
    expand,
    flatten,
    permute,
    reshape,
    squeeze,
    stack,
    transpose,
    unsqueeze,
)
from tensorgrad.reduce import argmax, argmin, log_softmax, logsumexp, max, mean, min, softmax, sum
from tensorgrad.serialization import load, save
from tensorgrad.tensor import (
    InplaceModifiedError,
    Tensor,
    arange,
    as_tensor,
    bool_,
    eye,
    float32,
    float64,
    from_numpy,
    full,
    full_like,
    int32,
    int64,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    record,
    tensor,
    unbroadcast,
    zeros,
    zeros_like,
)

__version__ = "0.1.0"  # the same as scalargrad.__version__: one distribution
__all__ = [
    "Tensor", "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "arange", "eye", "rand",
    "randn", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "manual_seed",
    "float32", "float64", "int32", "int64", "bool_",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "record", "unbroadcast", "gradcheck", "GradcheckError", "InplaceModifiedError",
    "add", "sub", "mul", "div", "neg", "pow", "exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu",
    "clamp", "maximum", "minimum", "where", "lt", "le", "gt", "ge", "eq", "ne",
    "sum", "mean", "max", "min", "argmax", "argmin", "logsumexp", "softmax", "log_softmax",
    "matmul", "cat", "stack", "reshape", "transpose", "permute", "expand", "broadcast_to", "unsqueeze",
    "squeeze", "flatten", "clone", "index_put", "nn", "optim", "data", "save", "load",
]

from tensorgrad import data, nn, optim  # noqa: E402 - after the ops they are built from
