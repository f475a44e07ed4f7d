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
from tensorgrad.creation import the_default_generator as default_generator
from tensorgrad.device import device, get_default_device, set_default_device
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
from tensorgrad.gradcheck import GradcheckError, gradcheck, gradgradcheck
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
from tensorgrad.storage import TypedStorage, UntypedStorage

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
    "Generator", "default_generator", "TypedStorage", "UntypedStorage",
    "empty", "empty_like", "linspace", "logspace", "randint", "randperm", "multinomial",
    "bernoulli",
    "gather", "index_select", "masked_fill", "masked_select", "nonzero", "scatter", "scatter_add",
    "scatter_reduce", "take", "einsum", "as_strided", "chunk", "diag", "diagonal", "flip", "meshgrid",
    "movedim", "narrow", "repeat_interleave", "roll", "split", "swapaxes", "tile", "tril", "triu",
    "unbind", "unflatten",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "record", "unbroadcast", "gradcheck", "gradgradcheck", "GradcheckError", "InplaceModifiedError",
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
    "selu", "celu", "layer_norm", "group_norm", "cosine_similarity", "device", "get_default_device",
    "set_default_device", "cuda",
    "absolute", "arctan2", "atan2", "clamp_max", "clamp_min", "deg2rad", "float_power", "fmax", "fmin",
    "hypot", "logaddexp2", "logit", "nan_to_num", "negative", "positive", "rad2deg", "sgn", "sinc",
    "true_divide", "xlogy", "bmm", "dot", "mm", "mv", "outer", "moveaxis", "ravel", "select",
    "swapdims", "t", "diff", "nanmean", "nansum", "trace",
    "erfc", "heaviside", "isneginf", "isposinf", "signbit", "argwhere", "index_add", "index_copy",
    "index_fill", "masked_scatter", "take_along_dim", "addcdiv", "addcmul", "addmm", "cdist", "cross", "kron",
    "tensordot", "fliplr", "flipud", "hsplit", "rot90", "split_with_sizes", "tensor_split", "vsplit",
    "aminmax", "kthvalue", "msort", "nanmedian", "nanquantile", "quantile", "linalg",
    "det", "inverse", "logdet", "matrix_power", "slogdet", "bincount", "histc", "mode", "unique",
    "unique_consecutive", "pdist", "svd", "qr", "pinverse", "matrix_exp", "vander", "pca_lowrank",
    "svd_lowrank",
]

from tensorgrad import cuda, data, linalg, nn, optim  # noqa: E402 - after the ops they are built from
from tensorgrad.linalg import legacy_det as det  # noqa: E402 - torch.det(input), linalg.det(A)
from tensorgrad.linalg import legacy_inverse as inverse
from tensorgrad.linalg import legacy_qr as qr  # torch.qr and torch.svd: the older forms (some=)
from tensorgrad.linalg import legacy_slogdet as slogdet
from tensorgrad.linalg import legacy_svd as svd
from tensorgrad.linalg import legacy_vander as vander  # torch.vander: decreasing powers of a 1-D x
from tensorgrad.linalg import logdet, matrix_exp, matrix_power, pca_lowrank, pinverse, svd_lowrank  # noqa: E402

# torch.selu, torch.layer_norm, ... exist beside torch.nn.functional's: the same functions here.
from tensorgrad.nn.activation import celu, selu  # noqa: E402
from tensorgrad.nn.normalization import cosine_similarity, group_norm, layer_norm  # noqa: E402

# isort: split
from tensorgrad.autocasting import (  # noqa: E402 - mixed precision, as torch.autocast
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

__all__ += ["autocast", "autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache",
            "get_autocast_cpu_dtype", "get_autocast_dtype", "get_autocast_gpu_dtype",
            "is_autocast_cache_enabled", "is_autocast_cpu_enabled", "is_autocast_enabled",
            "set_autocast_cache_enabled", "set_autocast_dtype", "set_autocast_enabled"]

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
from tensorgrad.special import igamma, igammac  # noqa: E402
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
    "igamma", "igammac",
]

# isort: split
# NumPy's names for elementwise ops, which PyTorch has too (torch.arccos, torch.divide, torch.less).
from tensorgrad.elementwise import (  # noqa: E402
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    divide,
    fix,
    greater,
    greater_equal,
    less,
    less_equal,
    multiply,
    not_equal,
    subtract,
)

__all__ += [
    "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "divide", "fix", "greater",
    "greater_equal", "less", "less_equal", "multiply", "not_equal", "subtract",
]

# isort: split
# torch-level functions: shape and dtype helpers, numerics and windows, and the `torch.X` spellings
# of nn.functional's ops (tensorgrad/nn/toplevel.py adapts those whose arguments differ from F's).
from tensorgrad.compat import can_cast, is_complex, is_floating_point, promote_types, result_type  # noqa: E402
from tensorgrad.creation import (  # noqa: E402
    bartlett_window,
    binomial,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
    poisson,
    scalar_tensor,
)
from tensorgrad.elementwise import rsub  # noqa: E402
from tensorgrad.matmul import bilinear  # noqa: E402
from tensorgrad.movement import (  # noqa: E402
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    unravel_index,
)
from tensorgrad.nn.activation import hardshrink, prelu, threshold  # noqa: E402
from tensorgrad.nn.conv import (  # noqa: E402
    adaptive_avg_pool1d,
    avg_pool1d,
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    pixel_shuffle,
    pixel_unshuffle,
)
from tensorgrad.nn.normalization import pairwise_distance, rms_norm  # noqa: E402
from tensorgrad.nn.toplevel import (  # noqa: E402
    adaptive_max_pool1d,
    alpha_dropout,
    batch_norm,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    dropout,
    embedding,
    feature_alpha_dropout,
    hinge_embedding_loss,
    instance_norm,
    kl_div,
    margin_ranking_loss,
    max_pool1d,
    max_pool2d,
    poisson_nll_loss,
    rrelu,
    triplet_margin_loss,
)
from tensorgrad.reduce import cumulative_trapezoid, histogram, histogramdd, isin, trapezoid, trapz  # noqa: E402

__all__ += [
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes", "broadcast_tensors",
    "unravel_index", "can_cast", "promote_types", "result_type", "is_floating_point", "is_complex", "isin",
    "scalar_tensor", "rsub", "trapezoid", "trapz", "cumulative_trapezoid", "histogram", "histogramdd",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "poisson",
    "binomial", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d",
    "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "batch_norm", "instance_norm", "embedding",
    "dropout", "alpha_dropout", "feature_alpha_dropout", "pixel_shuffle", "pixel_unshuffle", "prelu", "rrelu",
    "threshold", "hardshrink", "pairwise_distance", "cosine_embedding_loss", "hinge_embedding_loss",
    "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss", "kl_div",
    "binary_cross_entropy_with_logits", "bilinear", "rms_norm",
]

# isort: split
# Index writes: PyTorch's functions that write into a copy (and index_put_, resize_as_ in place).
from tensorgrad.indexing import (  # noqa: E402
    as_strided_scatter,
    diagonal_scatter,
    index_put_,
    index_reduce,
    put,
    select_scatter,
    slice_scatter,
)
from tensorgrad.inplace import resize_as_  # noqa: E402
from tensorgrad.movement import narrow_copy  # noqa: E402

__all__ += [
    "index_put_", "put", "index_reduce", "select_scatter", "slice_scatter", "diagonal_scatter",
    "as_strided_scatter", "narrow_copy", "resize_as_",
]

# isort: split
# More math: the rest of the BLAS family, number-theory and float-bit ops, covariance, diagonals
# built from values, conjugate transposes, and tensor queries.
from tensorgrad.compat import get_device, is_conj, is_inference, is_neg, is_nonzero, is_same_size, is_signed  # noqa: E402
from tensorgrad.elementwise import frexp, gcd, isreal, lcm, ldexp, nextafter  # noqa: E402
from tensorgrad.matmul import addbmm, addmv, addmv_, addr, baddbmm, chain_matmul, ger, inner, vdot  # noqa: E402
from tensorgrad.movement import adjoint, conj, diag_embed, diagflat, resolve_conj, resolve_neg  # noqa: E402
from tensorgrad.reduce import corrcoef, cov, renorm  # noqa: E402

__all__ += [
    "addbmm", "addmv", "addmv_", "addr", "baddbmm", "chain_matmul", "ger", "inner", "vdot",
    "frexp", "gcd", "isreal", "lcm", "ldexp", "nextafter", "corrcoef", "cov", "renorm",
    "adjoint", "conj", "diag_embed", "diagflat", "resolve_conj", "resolve_neg",
    "get_device", "is_conj", "is_inference", "is_neg", "is_nonzero", "is_same_size", "is_signed",
]

# isort: split
# Anomaly detection's switches, where PyTorch has them (`torch.is_anomaly_enabled`).
from tensorgrad.autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled  # noqa: E402

__all__ += ["is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]

# isort: split
# torch's older linear-algebra spellings (torch.cholesky, torch.lu, torch.lu_solve(b, LU, pivots), ...).
from tensorgrad.linalg import cholesky_inverse, cholesky_solve, lu_unpack, triangular_solve  # noqa: E402
from tensorgrad.linalg import legacy_cholesky as cholesky  # noqa: E402
from tensorgrad.linalg import legacy_eig as eig  # noqa: E402 - removed from PyTorch: eig and symeig raise
from tensorgrad.linalg import legacy_lu as lu  # noqa: E402
from tensorgrad.linalg import legacy_lu_solve as lu_solve  # noqa: E402
from tensorgrad.linalg import legacy_symeig as symeig  # noqa: E402

__all__ += ["cholesky", "cholesky_inverse", "cholesky_solve", "lu", "lu_solve", "lu_unpack",
            "triangular_solve", "eig", "symeig"]

# isort: split
# LAPACK's names for the compact QR form (torch.geqrf, torch.orgqr, torch.ormqr).
from tensorgrad.linalg import geqrf, orgqr, ormqr  # noqa: E402

__all__ += ["geqrf", "orgqr", "ormqr"]

# isort: split
# Interop (asarray, DLPack, buffers), the deterministic-algorithms switches, the last shape and
# complex-number spellings, torch.gradient, and torch's in-place functions (`tg.relu_(x)`).
from tensorgrad import utils  # noqa: E402
from tensorgrad.control_flow import cond, while_loop  # noqa: E402
from tensorgrad.inplace_functions import (  # noqa: E402
    abs_,
    acos_,
    acosh_,
    alpha_dropout_,
    arccos_,
    arccosh_,
    arcsin_,
    arcsinh_,
    arctan_,
    arctanh_,
    asin_,
    asinh_,
    atan_,
    atanh_,
    ceil_,
    celu_,
    clamp_,
    clamp_max_,
    clamp_min_,
    clip_,
    cos_,
    cosh_,
    deg2rad_,
    detach,
    detach_,
    dropout_,
    erf_,
    erfc_,
    exp2_,
    exp_,
    expm1_,
    feature_alpha_dropout_,
    fill_,
    fix_,
    floor_,
    frac_,
    gcd_,
    i0_,
    lcm_,
    ldexp_,
    log1p_,
    log2_,
    log10_,
    log_,
    logit_,
    nan_to_num_,
    neg_,
    negative_,
    rad2deg_,
    reciprocal_,
    relu_,
    round_,
    rrelu_,
    rsqrt_,
    selu_,
    sigmoid_,
    sin_,
    sinc_,
    sinh_,
    sqrt_,
    square_,
    tan_,
    tanh_,
    threshold_,
    trunc_,
    xlogy_,
    zero_,
)
from tensorgrad.interop import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    asarray,
    empty_permuted,
    empty_strided,
    from_dlpack,
    frombuffer,
    is_deterministic_algorithms_warn_only_enabled,
    to_dlpack,
    use_deterministic_algorithms,
)
from tensorgrad.movement import (  # noqa: E402, A004
    angle,
    complex,
    dsplit,
    imag,
    polar,
    real,
    unsafe_chunk,
    unsafe_split,
    unsafe_split_with_sizes,
    view_as_complex,
    view_as_real,
)
from tensorgrad.reduce import gradient  # noqa: E402

__all__ += ["complex", "polar", "view_as_complex", "view_as_real", "cond", "while_loop"]
__all__ += [
    "asarray", "from_dlpack", "to_dlpack", "frombuffer", "empty_strided", "empty_permuted",
    "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled", "dsplit",
    "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes", "real", "imag", "angle", "gradient",
    "utils", "abs_", "acos_", "acosh_", "alpha_dropout_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "celu_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach", "detach_", "dropout_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "feature_alpha_dropout_", "fill_", "fix_", "floor_",
    "frac_", "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rrelu_",
    "rsqrt_", "selu_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "threshold_", "trunc_", "xlogy_", "zero_",
]

# isort: split
# torch.func's transforms (grad, vjp, jacrev, functional_call, vmap) as tg.func.
from tensorgrad import func  # noqa: E402

__all__ += ["func"]

# Memory formats (`clone`, the `*_like` functions and `to` keep a dense input's layout by default).
from tensorgrad.creation import (  # noqa: E402
    channels_last,
    channels_last_3d,
    clone,  # noqa: F811 - with memory_format=, replaces movement's
    contiguous_format,
    memory_format,
    preserve_format,
)

__all__ += ["memory_format", "preserve_format", "contiguous_format", "channels_last", "channels_last_3d"]

# Channel shuffling, as torch.channel_shuffle and torch.native_channel_shuffle.
from tensorgrad.nn.conv import channel_shuffle  # noqa: E402
from tensorgrad.nn.conv import channel_shuffle as native_channel_shuffle  # noqa: E402

__all__ += ["channel_shuffle", "native_channel_shuffle"]

# More of torch's top-level names: torch.vmap, the 3-d convolutions, the native spellings of the
# RNN cells, norms, dropouts and pads (tensorgrad/nn/toplevel.py), the `*_copy` ops, torch.fill,
# torch.range and a few queries (tensorgrad/compat.py).
from tensorgrad.compat import (  # noqa: E402
    alias_copy,
    as_strided_,
    as_strided_copy,
    conj_physical,
    conj_physical_,
    detach_copy,
    diagonal_copy,
    expand_copy,
    fill,
    get_float32_matmul_precision,
    get_num_threads,
    is_storage,
    is_warn_always_enabled,
    nonzero_static,
    permute_copy,
    select_copy,
    set_float32_matmul_precision,
    set_num_threads,
    set_warn_always,
    slice_copy,
    split_copy,
    split_with_sizes_copy,
    squeeze_copy,
    t_copy,
    transpose_copy,
    typename,
    unbind_copy,
    unfold_copy,
    unsqueeze_copy,
    view_copy,
)
from tensorgrad.compat import legacy_range as range  # noqa: E402, A004 - torch.range: end included
from tensorgrad.func import vmap  # noqa: E402
from tensorgrad.nn.conv import conv3d, conv_transpose3d  # noqa: E402
from tensorgrad.nn.toplevel import (  # noqa: E402
    constant_pad_nd,
    convolution,
    ctc_loss,
    feature_dropout,
    feature_dropout_,
    frobenius_norm,
    gru_cell,
    lstm_cell,
    max_pool1d_with_indices,
    max_pool3d,
    native_batch_norm,
    native_dropout,
    native_group_norm,
    native_layer_norm,
    norm_except_dim,
    nuclear_norm,
    rnn_relu_cell,
    rnn_tanh_cell,
)

__all__ += [
    "vmap", "conv3d", "conv_transpose3d", "convolution", "max_pool3d", "max_pool1d_with_indices", "ctc_loss",
    "constant_pad_nd", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "native_layer_norm",
    "native_batch_norm", "native_group_norm", "native_dropout", "feature_dropout", "feature_dropout_",
    "frobenius_norm", "nuclear_norm", "norm_except_dim", "fill", "range", "conj_physical",
    "conj_physical_", "nonzero_static", "as_strided_", "alias_copy", "as_strided_copy", "detach_copy",
    "diagonal_copy", "expand_copy", "permute_copy", "select_copy", "slice_copy", "split_copy",
    "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy",
    "unsqueeze_copy", "view_copy", "typename", "is_storage", "set_warn_always", "is_warn_always_enabled",
    "get_float32_matmul_precision", "set_float32_matmul_precision", "get_num_threads", "set_num_threads",
]

# Complex dtypes, `tg.dtype` (the type of every dtype) and the math constants PyTorch re-exports,
# so `tg.pi`, `tg.inf` and `x[:, tg.newaxis]` read as they do with torch.
import math as _math  # noqa: E402

from tensorgrad.dtypes import cdouble, cfloat, complex64, complex128, dtype  # noqa: E402

e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None

__all__ += ["complex64", "complex128", "cfloat", "cdouble", "dtype", "e", "pi", "inf", "nan", "newaxis"]

# isort: split
# Fourier transforms: `tg.fft` holds torch.fft's functions; the short-time transforms are torch's.
from tensorgrad import fft  # noqa: E402
from tensorgrad.fft import istft, stft  # noqa: E402

__all__ += ["fft", "stft", "istft"]

# Layouts: every tensor is dense and strided (`t.layout`, a factory's `layout=`).
from tensorgrad.layouts import layout, strided  # noqa: E402

__all__ += ["layout", "strided"]

# Subpackages imported on first use (`tg.distributions.Normal`, `import tensorgrad.testing`): a
# program that never reaches them neither waits for them at import nor carries their objects,
# which every full garbage collection walks (importing them all at once cost 0.3% of the per-op
# instruction count, in collections).
# PyTorch's `out=` keyword on the ops that have one (tensorgrad/out.py says which rule each follows).
import sys as _sys  # noqa: E402

from tensorgrad import out as _out  # noqa: E402

_out.install({"": _sys.modules[__name__], "linalg.": linalg, "special.": special, "fft.": fft})

from tensorgrad.checks import ignore_floating_point_warnings as _ignore_floating_point_warnings  # noqa: E402

_ignore_floating_point_warnings()  # infs and nans come silently, as from PyTorch

_ON_FIRST_USE = ("amp", "backends", "compiler", "cpu", "distributions", "random", "signal", "testing")
_NAMES_ON_FIRST_USE = {"compile": "compiler"}  # a name and the module it comes from
__all__ += [*_ON_FIRST_USE, *_NAMES_ON_FIRST_USE]


def __getattr__(name: str) -> object:
    """`tg.amp`, `tg.backends`, `tg.compiler`, `tg.cpu`, `tg.distributions`, `tg.random`, `tg.signal`
    and `tg.testing` (and `tg.compile`), imported when first asked for: each import costs every
    program that does not use them time at start and in each garbage collection."""
    if name in _ON_FIRST_USE or name in _NAMES_ON_FIRST_USE:
        import importlib

        module = importlib.import_module(f"{__name__}.{_NAMES_ON_FIRST_USE.get(name, name)}")
        return module if name in _ON_FIRST_USE else getattr(module, name)  # (the import sets tg.<module>)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The names of the package, the subpackages imported on first use among them."""
    return sorted(set(globals()) | set(_ON_FIRST_USE) | set(_NAMES_ON_FIRST_USE))
