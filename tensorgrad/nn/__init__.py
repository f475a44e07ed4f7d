"""`tensorgrad.nn`: building blocks for networks, under PyTorch's names (tutorial chapter 9).

Layers with state (`Module`, `Parameter`, `Linear`, the containers, the loss modules) live in
`modules`; the stateless ops (activations, `linear`, `dropout`, the losses) in `functional`,
usually imported as `F`; weight initialisers in `init`; gradient clipping in `utils`.
"""

from tensorgrad.nn import functional, init, utils
from tensorgrad.nn.modules import (
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    L1Loss,
    Linear,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
    Unflatten,
)

__all__ = [
    "functional",
    "init",
    "utils",
    "Module",
    "Parameter",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Dropout",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "Identity",
    "Flatten",
    "Unflatten",
    "CrossEntropyLoss",
    "NLLLoss",
    "MSELoss",
    "L1Loss",
    "BCEWithLogitsLoss",
]

# Convolution and pooling layers (tensorgrad/nn/conv.py).
from tensorgrad.nn.conv import AdaptiveAvgPool2d, AvgPool2d, Conv1d, Conv2d, ConvTranspose2d, MaxPool2d  # noqa: E402

__all__ += ["Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]

# Activation, normalisation, embedding and attention layers (tensorgrad/nn/activation.py,
# normalization.py, sparse.py, attention.py).
from tensorgrad.nn.activation import (  # noqa: E402
    CELU,
    ELU,
    GELU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU6,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
)
from tensorgrad.nn.attention import MultiheadAttention  # noqa: E402
from tensorgrad.nn.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm  # noqa: E402
from tensorgrad.nn.sparse import Embedding  # noqa: E402

__all__ += ["GELU", "SiLU", "LeakyReLU", "ELU", "Softmax", "LogSoftmax", "Mish", "SELU", "CELU", "Hardtanh",
            "ReLU6", "Hardsigmoid", "Hardswish", "Softplus", "Softsign", "LogSigmoid", "Softmin",
            "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "MultiheadAttention"]
