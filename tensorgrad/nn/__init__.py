"""`tensorgrad.nn`: building blocks for networks, under PyTorch's names (tutorial chapter 9).

Layers with state (`Module`, `Parameter`, `Linear`, the containers, the loss modules) live in
`modules`; the stateless ops (activations, `linear`, `dropout`, the losses) in `functional`,
usually imported as `F`; weight initialisers in `init`; gradient clipping in `utils`.
"""

from tensorgrad.nn import functional, grad, init, parameter, utils
from tensorgrad.nn.modules import (
    AlphaDropout,
    BCELoss,
    BCEWithLogitsLoss,
    Bilinear,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    Dropout,
    Dropout1d,
    Dropout2d,
    FeatureAlphaDropout,
    Flatten,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    Identity,
    KLDivLoss,
    L1Loss,
    Linear,
    LinearCrossEntropyLoss,
    LinearCrossEntropyOptions,
    MarginRankingLoss,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    MultiLabelSoftMarginLoss,
    NLLLoss,
    Parameter,
    ParameterDict,
    ParameterList,
    PoissonNLLLoss,
    ReLU,
    Sequential,
    Sigmoid,
    SmoothL1Loss,
    SoftMarginLoss,
    Tanh,
    TripletMarginLoss,
    Unflatten,
)

__all__ = [
    "functional",
    "grad",
    "init",
    "parameter",
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
    "LinearCrossEntropyLoss",
    "LinearCrossEntropyOptions",
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
    "AlphaDropout",
    "FeatureAlphaDropout",
    "ParameterList",
    "ParameterDict",
    "GaussianNLLLoss",
    "PoissonNLLLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "CosineEmbeddingLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "TripletMarginLoss",
    "Bilinear",
]

# Convolution and pooling layers (tensorgrad/nn/conv.py).
from tensorgrad.nn.conv import (  # noqa: E402
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
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
            "PixelUnshuffle", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]

# Activation, normalisation, embedding and attention layers (tensorgrad/nn/activation.py,
# normalization.py, sparse.py, attention.py).
from tensorgrad.nn.activation import (  # noqa: E402
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU6,
    RReLU,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
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
    InstanceNorm1d,
    InstanceNorm2d,
    LayerNorm,
    PairwiseDistance,
    RMSNorm,
)
from tensorgrad.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell  # noqa: E402
from tensorgrad.nn.sparse import Embedding  # noqa: E402
from tensorgrad.nn.transformer import (  # noqa: E402
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ += ["GELU", "SiLU", "LeakyReLU", "ELU", "Softmax", "LogSoftmax", "Mish", "SELU", "CELU", "Hardtanh",
            "ReLU6", "Hardsigmoid", "Hardswish", "Softplus", "Softsign", "LogSigmoid", "Softmin",
            "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "MultiheadAttention",
            "GLU", "PReLU", "Softmax2d", "Tanhshrink", "Threshold", "CosineSimilarity", "PairwiseDistance",
            "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "Hardshrink", "Softshrink", "RMSNorm",
            "InstanceNorm1d", "InstanceNorm2d", "TransformerEncoderLayer", "TransformerEncoder", "RReLU",
            "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]

# Local response norm, power-average pooling, unpooling, multi-class margin losses, bags of
# embeddings, channel shuffle, fixed-mode upsampling, buffers by assignment and lazy layers.
from tensorgrad.nn.conv import (  # noqa: E402
    ChannelShuffle,
    LazyConv1d,
    LazyConv2d,
    LPPool1d,
    LPPool2d,
    MaxUnpool1d,
    MaxUnpool2d,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from tensorgrad.nn.modules import (  # noqa: E402
    Buffer,
    LazyLinear,
    LazyModuleMixin,
    MultiLabelMarginLoss,
    MultiMarginLoss,
    UninitializedBuffer,
    UninitializedParameter,
)
from tensorgrad.nn.normalization import (  # noqa: E402
    CrossMapLRN2d,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LocalResponseNorm,
)
from tensorgrad.nn.sparse import EmbeddingBag  # noqa: E402

__all__ += ["LocalResponseNorm", "CrossMapLRN2d", "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d",
            "MultiMarginLoss", "MultiLabelMarginLoss", "EmbeddingBag", "ChannelShuffle",
            "UpsamplingNearest2d", "UpsamplingBilinear2d", "Buffer", "UninitializedParameter",
            "UninitializedBuffer", "LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d",
            "LazyBatchNorm1d", "LazyBatchNorm2d"]

# 3-D convolution, pooling, padding, normalisation and channel dropout layers (tensorgrad/nn/conv.py,
# normalization.py, modules.py).
from tensorgrad.nn.conv import (  # noqa: E402
    AdaptiveAvgPool3d,
    AdaptiveMaxPool3d,
    AvgPool3d,
    CircularPad3d,
    ConstantPad3d,
    Conv3d,
    ConvTranspose3d,
    MaxPool3d,
    ReflectionPad3d,
    ReplicationPad3d,
    ZeroPad3d,
)
from tensorgrad.nn.modules import Dropout3d  # noqa: E402
from tensorgrad.nn.normalization import BatchNorm3d, InstanceNorm3d  # noqa: E402

__all__ += ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
            "ConstantPad3d", "ZeroPad3d", "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d",
            "BatchNorm3d", "InstanceNorm3d", "Dropout3d"]

# The remaining layers: CTC and triplet-with-distance losses, the adaptive softmax, fractional max
# pooling, the rest of the 3-D pools, lazy 3-D and transposed convolutions, lazy norms, and the
# recurrent base classes (tensorgrad/nn/modules.py, adaptive.py, conv.py, normalization.py, rnn.py).
from tensorgrad.nn.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from tensorgrad.nn.conv import (  # noqa: E402
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LPPool3d,
    MaxUnpool3d,
)
from tensorgrad.nn.modules import CTCLoss, NLLLoss2d, TripletMarginWithDistanceLoss  # noqa: E402
from tensorgrad.nn.normalization import (  # noqa: E402
    LazyBatchNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)
from tensorgrad.nn.rnn import RNNBase, RNNCellBase  # noqa: E402

__all__ += ["CTCLoss", "TripletMarginWithDistanceLoss", "NLLLoss2d", "AdaptiveLogSoftmaxWithLoss",
            "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool3d", "MaxUnpool3d", "LazyConv3d",
            "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm3d",
            "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "RNNBase", "RNNCellBase"]
