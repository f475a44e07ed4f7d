"""`tensorgrad.nn`: building blocks for networks, under PyTorch's names (tutorial chapter 9).

Layers with state (`Module`, `Parameter`, `Linear`, the containers, the loss modules) live in
`modules`; the stateless ops (activations, `linear`, `dropout`, the losses) in `functional`,
usually imported as `F`; weight initialisers in `init`; gradient clipping in `utils`.
"""

from tensorgrad.nn import functional, init, utils
from tensorgrad.nn.modules import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Dropout1d,
    Dropout2d,
    Flatten,
    HuberLoss,
    Identity,
    KLDivLoss,
    L1Loss,
    Linear,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    Parameter,
    ParameterDict,
    ParameterList,
    ReLU,
    Sequential,
    Sigmoid,
    SmoothL1Loss,
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
    "BCELoss",
    "KLDivLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "Dropout1d",
    "Dropout2d",
    "ParameterList",
    "ParameterDict",
]

# Convolution and pooling layers (tensorgrad/nn/conv.py).
from tensorgrad.nn.conv import (  # noqa: E402
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    Conv1d,
    Conv2d,
    ConvTranspose1d,
    ConvTranspose2d,
    Fold,
    MaxPool1d,
    MaxPool2d,
    PixelShuffle,
    PixelUnshuffle,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    Unfold,
    Upsample,
    ZeroPad1d,
    ZeroPad2d,
)

__all__ += ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d", "AvgPool1d",
            "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Upsample", "Fold", "Unfold",
            "ConstantPad1d", "ConstantPad2d", "ZeroPad1d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
            "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d", "PixelShuffle",
            "PixelUnshuffle"]

# Activation, normalisation, embedding and attention layers (tensorgrad/nn/activation.py,
# normalization.py, sparse.py, attention.py).
from tensorgrad.nn.activation import (  # noqa: E402
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU6,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softsign,
    Tanhshrink,
    Threshold,
)
from tensorgrad.nn.attention import MultiheadAttention  # noqa: E402
from tensorgrad.nn.normalization import (  # noqa: E402
    BatchNorm1d,
    BatchNorm2d,
    CosineSimilarity,
    GroupNorm,
    LayerNorm,
    PairwiseDistance,
)
from tensorgrad.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell  # noqa: E402
from tensorgrad.nn.sparse import Embedding  # noqa: E402

__all__ += ["GELU", "SiLU", "LeakyReLU", "ELU", "Softmax", "LogSoftmax", "Mish", "SELU", "CELU", "Hardtanh",
            "ReLU6", "Hardsigmoid", "Hardswish", "Softplus", "Softsign", "LogSigmoid", "Softmin",
            "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "MultiheadAttention",
            "GLU", "PReLU", "Softmax2d", "Tanhshrink", "Threshold", "CosineSimilarity", "PairwiseDistance",
            "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]
