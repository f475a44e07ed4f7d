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

# isort: split
from tensorgrad.creation import (
    Generator,
    bernoulli,
    empty,
    empty_like,
    linspace,
    logspace,
    multinomial,
    randint,
    randperm,
)
from tensorgrad.device import device
from tensorgrad.dtypes import bool, double, float, float16, half, int, int8, int16, long, short, uint8
from tensorgrad.elementwise import (  # the elementwise breadth of PyTorch
    acos,
    acosh,
    allclose,
    asin,
    asinh,
    atan,
    atanh,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    clip,
    copysign,
    cos,
    cosh,
    equal,
    erf,
    exp2,
    expm1,
    floor,
    floor_divide,
    fmod,
    frac,
    isclose,
    isfinite,
    isinf,
    isnan,
    lerp,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    reciprocal,
    remainder,
    round,
    rsqrt,
    sign,
    sin,
    sinh,
    square,
    tan,
    trunc,
)
from tensorgrad.gradcheck import GradcheckError, gradcheck
from tensorgrad.indexing import (
    gather,
    index_put,
    index_select,
    masked_fill,
    masked_select,
    nonzero,
    scatter,
    scatter_add,
    scatter_reduce,
    take,
)
from tensorgrad.matmul import einsum, matmul
from tensorgrad.movement import (
    as_strided,
    broadcast_to,
    cat,
    chunk,
    clone,
    diag,
    diagonal,
    expand,
    flatten,
    flip,
    meshgrid,
    movedim,
    narrow,
    permute,
    repeat_interleave,
    reshape,
    roll,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    tril,
    triu,
    unbind,
    unflatten,
    unsqueeze,
)
from tensorgrad.reduce import amax, amin, argmax, argmin, log_softmax, logsumexp, max, mean, min, softmax, sum

# isort: split
from tensorgrad.autograd import InplaceModifiedError, record, unbroadcast
from tensorgrad.creation import (
    arange,
    as_tensor,
    eye,
    from_numpy,
    full,
    full_like,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from tensorgrad.dtypes import bool_, float32, float64, int32, int64
from tensorgrad.elementwise import (  # more of PyTorch's elementwise names
    absolute,
    arctan2,
    atan2,
    clamp_max,
    clamp_min,
    deg2rad,
    erfc,
    float_power,
    fmax,
    fmin,
    heaviside,
    hypot,
    isneginf,
    isposinf,
    logaddexp2,
    logit,
    nan_to_num,
    negative,
    positive,
    rad2deg,
    sgn,
    signbit,
    sinc,
    true_divide,
    xlogy,
)
from tensorgrad.indexing import argwhere, index_add, index_copy, index_fill, masked_scatter, take_along_dim
from tensorgrad.matmul import (
    addcdiv,
    addcmul,
    addmm,
    bmm,
    cdist,
    cross,
    dot,
    kron,
    mm,
    mv,
    outer,
    pdist,
    tensordot,
)
from tensorgrad.movement import (
    fliplr,
    flipud,
    hsplit,
    moveaxis,
    ravel,
    rot90,
    select,
    split_with_sizes,
    swapdims,
    t,
    tensor_split,
    vsplit,
)
from tensorgrad.reduce import (  # the reductions and scans of PyTorch
    all,
    aminmax,
    any,
    argsort,
    bincount,
    count_nonzero,
    cummax,
    cummin,
    cumprod,
    cumsum,
    diff,
    histc,
    kthvalue,
    logcumsumexp,
    median,
    mode,
    msort,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    norm,
    prod,
    quantile,
    sort,
    std,
    std_mean,
    topk,
    trace,
    unique,
    unique_consecutive,
    var,
    var_mean,
)
from tensorgrad.serialization import load, save
from tensorgrad.tensor import Tensor

__version__ = "0.1.0"  # the same as scalargrad.__version__: one distribution
__all__ = [
    "Tensor", "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "arange", "eye", "rand",
    "randn", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "manual_seed",
    "float32", "float64", "int32", "int64", "bool_",
    "float", "double", "half", "float16", "long", "int", "short", "int16", "int8", "uint8", "bool",
    "Generator", "empty", "empty_like", "linspace", "logspace", "randint", "randperm", "multinomial",
    "bernoulli",
    "gather", "index_select", "masked_fill", "masked_select", "nonzero", "scatter", "scatter_add",
    "scatter_reduce", "take", "einsum", "as_strided", "chunk", "diag", "diagonal", "flip", "meshgrid",
    "movedim", "narrow", "repeat_interleave", "roll", "split", "swapaxes", "tile", "tril", "triu",
    "unbind", "unflatten",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "record", "unbroadcast", "gradcheck", "GradcheckError", "InplaceModifiedError",
    "add", "sub", "mul", "div", "neg", "pow", "exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu",
    "clamp", "maximum", "minimum", "where", "lt", "le", "gt", "ge", "eq", "ne",
    "acos", "acosh", "allclose", "asin", "asinh", "atan", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil",
    "clip", "copysign", "cos", "cosh", "equal", "erf", "exp2", "expm1", "floor",
    "floor_divide", "fmod", "frac", "isclose", "isfinite", "isinf", "isnan", "lerp", "log1p",
    "log2", "log10", "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor",
    "reciprocal", "remainder", "round", "rsqrt", "sign", "sin", "sinh", "square", "tan", "trunc",
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp", "softmax", "log_softmax",
    "prod", "std", "var", "std_mean", "var_mean", "norm", "all", "any", "count_nonzero", "cumsum",
    "cumprod", "cummax", "cummin", "logcumsumexp", "sort", "argsort", "topk", "median",
    "matmul", "cat", "stack", "reshape", "transpose", "permute", "expand", "broadcast_to", "unsqueeze",
    "squeeze", "flatten", "clone", "index_put", "nn", "optim", "data", "save", "load",
    "selu", "celu", "layer_norm", "group_norm", "cosine_similarity", "device", "cuda",
    "absolute", "arctan2", "atan2", "clamp_max", "clamp_min", "deg2rad", "float_power", "fmax", "fmin",
    "hypot", "logaddexp2", "logit", "nan_to_num", "negative", "positive", "rad2deg", "sgn", "sinc",
    "true_divide", "xlogy", "bmm", "dot", "mm", "mv", "outer", "moveaxis", "ravel", "select",
    "swapdims", "t", "diff", "nanmean", "nansum", "trace",
    "erfc", "heaviside", "isneginf", "isposinf", "signbit", "argwhere", "index_add", "index_copy",
    "index_fill", "masked_scatter", "take_along_dim", "addcdiv", "addcmul", "addmm", "cdist", "cross", "kron",
    "tensordot", "fliplr", "flipud", "hsplit", "rot90", "split_with_sizes", "tensor_split", "vsplit",
    "aminmax", "kthvalue", "msort", "nanmedian", "nanquantile", "quantile", "linalg",
    "det", "inverse", "logdet", "matrix_power", "slogdet", "bincount", "histc", "mode", "unique",
    "unique_consecutive", "pdist", "svd", "qr", "pinverse", "matrix_exp", "vander",
]

from tensorgrad import cuda, data, linalg, nn, optim  # noqa: E402 - after the ops they are built from
from tensorgrad.linalg import det, logdet, matrix_exp, matrix_power, pinverse, slogdet  # noqa: E402
from tensorgrad.linalg import inv as inverse
from tensorgrad.linalg import legacy_qr as qr  # torch.qr and torch.svd: the older forms (some=)
from tensorgrad.linalg import legacy_svd as svd
from tensorgrad.linalg import legacy_vander as vander  # torch.vander: decreasing powers of a 1-D x

# torch.selu, torch.layer_norm, ... exist beside torch.nn.functional's: the same functions here.
from tensorgrad.nn.activation import celu, selu  # noqa: E402
from tensorgrad.nn.normalization import cosine_similarity, group_norm, layer_norm  # noqa: E402

# isort: split
# What PyTorch user code reaches for beyond the ops: torch.Size, torch.is_tensor, the legacy typed
# constructors, the RNG's state, dtype limits, print options and the stack family.
from tensorgrad.compat import (  # noqa: E402
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    Size,
    inference_mode,
    is_inference_mode_enabled,
    is_tensor,
    numel,
)
from tensorgrad.creation import (  # noqa: E402
    get_rng_state,
    initial_seed,
    normal,
    randint_like,
    seed,
    set_rng_state,
    tril_indices,
    triu_indices,
)
from tensorgrad.dtypes import finfo, get_default_dtype, iinfo, set_default_dtype  # noqa: E402
from tensorgrad.movement import (  # noqa: E402
    cartesian_prod,
    column_stack,
    combinations,
    concat,
    concatenate,
    dstack,
    hstack,
    row_stack,
    vstack,
)
from tensorgrad.printing import set_printoptions  # noqa: E402
from tensorgrad.reduce import bucketize, dist, searchsorted  # noqa: E402

# isort: split
# Special functions (`tg.special` holds them all under torch.special's names), and NumPy's `axis`
# and `keepdims` for the reductions, as PyTorch's argument parser takes them.
from tensorgrad import special  # noqa: E402
from tensorgrad.elementwise import digamma, erfinv, i0, lgamma, mvlgamma, polygamma  # noqa: E402
from tensorgrad.tensor import AXIS_ALIASED, numpy_names  # noqa: E402

for _name in AXIS_ALIASED:
    if _name in globals():
        globals()[_name] = numpy_names(globals()[_name])
del _name

__all__ += [
    "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor",
    "LongTensor", "ShortTensor", "Size", "inference_mode", "is_inference_mode_enabled", "is_tensor", "numel",
    "get_rng_state", "initial_seed", "normal", "randint_like", "seed", "set_rng_state",
    "finfo", "get_default_dtype", "set_default_dtype", "iinfo", "column_stack", "concat", "concatenate",
    "dstack", "hstack",
    "row_stack", "vstack", "set_printoptions", "tril_indices", "triu_indices", "cartesian_prod",
    "combinations", "bucketize", "dist", "searchsorted",
    "special", "lgamma", "digamma", "polygamma", "mvlgamma", "erfinv", "i0",
]
