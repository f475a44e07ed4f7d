"""`tensorgrad.nn.init`: fill a parameter with starting values, as `torch.nn.init` does.

Each function writes into the tensor in place, without recording a graph (a parameter that
requires grad can be re-initialised at any time), and returns the same tensor, so
`model.apply(init_fn)` and `nn.init.zeros_(layer.bias)` read as in PyTorch. Random values come
from tensorgrad's generator (`tg.manual_seed`) unless a numpy `Generator` is given as
`generator=`; they are drawn on the host and copied to the tensor's device, so a seed gives the
same numbers on the CPU and on a GPU. The old spellings without the underscore (`uniform`,
`xavier_normal`, ...) still work, with PyTorch's FutureWarning.

The scaled initialisers keep the variance of activations (Xavier/Glorot) or of gradients
(Kaiming/He) the same from layer to layer: their spread is gain / sqrt(fan), where the fans are
the number of inputs and outputs each unit sees (`in_features` and `out_features` of a Linear;
times the kernel size for a convolution) and the gain undoes the shrinking of the
nonlinearity that follows (`calculate_gain`).
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from scalargrad.engine import no_grad
from tensorgrad.creation import default_generator
from tensorgrad.device import namespace
from tensorgrad.tensor import Tensor, new_leaf

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "ones_",
    "zeros_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "trunc_normal_",
    "eye_",
    "dirac_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]

_LINEAR_LIKE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain that keeps activations' spread through `nonlinearity`, as in PyTorch:
    1 for linear, convolutions and sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 +
    slope**2)) for leaky_relu (slope `param`, default 0.01), 3/4 for selu."""
    if nonlinearity in _LINEAR_LIKE:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _fill(tensor: Tensor, values: np.ndarray | float, op: str) -> Tensor:
    """Write `values` (made on the host) into `tensor` in place, outside the graph; returns the tensor."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(tensor).__name__}")
    with no_grad():
        tensor.copy_(new_leaf(namespace(tensor.data).asarray(values, dtype=tensor.dtype)))
    return tensor


def _rng(generator: np.random.Generator | None) -> np.random.Generator:
    return default_generator() if generator is None else generator


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: np.random.Generator | None = None) -> Tensor:
    """Fill with samples from the uniform distribution U(a, b)."""
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape), "uniform_")


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: np.random.Generator | None = None) -> Tensor:
    """Fill with samples from the normal distribution N(mean, std**2)."""
    return _fill(tensor, _rng(generator).normal(mean, std, tensor.shape), "normal_")


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with the value `val`."""
    return _fill(tensor, val, "constant_")


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return _fill(tensor, 1.0, "ones_")


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return _fill(tensor, 0.0, "zeros_")


def _fans(tensor: Tensor, op: str) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight laid out (out, in, *kernel), as PyTorch computes them."""
    if tensor.ndim < 2:
        raise ValueError(f"{op}: fan in and fan out can not be computed for a tensor with fewer than "
                         f"2 dimensions, got shape {tensor.shape}")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: np.random.Generator | None = None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: np.random.Generator | None = None) -> Tensor:
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str, op: str) -> float | None:
    """gain / sqrt(fan) for the Kaiming initialisers; None for a tensor with no elements."""
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode {mode!r} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor, op)
    if 0 in tensor.shape:
        warnings.warn(f"{op}: initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: np.random.Generator | None = None) -> Tensor:
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan), fan picked by `mode`.

    `a` is the negative slope of the leaky_relu after this layer (used by its gain). PyTorch's
    `nn.Linear` initialises its weight as `kaiming_uniform_(w, a=math.sqrt(5))`.
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: np.random.Generator | None = None) -> Tensor:
    """He normal: N(0, std**2) with std = gain / sqrt(fan), fan picked by `mode`."""
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: np.random.Generator | None = None) -> Tensor:
    """Fill with samples of N(mean, std**2) truncated to [a, b] (a and b are absolute bounds, as
    in PyTorch), drawn by inverting the normal's distribution function on the uniform samples
    between the bounds' probabilities: no rejection loop, so any interval works."""
    from tensorgrad.elementwise import _erf_array  # the library's double-precision erf

    def cdf(x: float) -> float:
        return float((1.0 + _erf_array(np.array((x - mean) / std / math.sqrt(2.0)))) / 2.0)

    low, high = cdf(a), cdf(b)
    uniform = _rng(generator).uniform(2 * low - 1, 2 * high - 1, tensor.shape)
    values = mean + std * math.sqrt(2.0) * _erfinv(uniform)
    return _fill(tensor, np.clip(values, a, b), "trunc_normal_")


def _erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse of erf on (-1, 1): Giles' single-precision approximation, then two Newton
    steps on erf (whose derivative is 2/sqrt(pi) e**(-x**2)) for double precision."""
    from tensorgrad.elementwise import _erf_array

    w = -np.log((1.0 - y) * (1.0 + y))
    central = w - 2.5
    p_central = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p_central = p_central * central + c
    tail = np.sqrt(np.maximum(w, 5.0)) - 3.0
    p_tail = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p_tail = p_tail * tail + c
    x = np.where(w < 5.0, p_central, p_tail) * y
    for _ in range(2):
        x = x - (_erf_array(x) - y) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    return x


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal of a rectangle too)."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only tensors with 2 dimensions are supported, got shape {tensor.shape}")
    return _fill(tensor, np.eye(*tensor.shape), "eye_")


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: each of the first output
    channels of every group passes its input channel through unchanged."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: only tensors with 3, 4, or 5 dimensions are supported, got shape "
                         f"{tensor.shape}")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups:
        raise ValueError(f"dirac_: dim 0 ({tensor.shape[0]}) must be divisible by groups ({groups})")
    values = np.zeros(tensor.shape)
    centre = tuple(size // 2 for size in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, tensor.shape[1])):
            values[(g * out_per_group + d, d) + centre] = 1.0
    return _fill(tensor, values, "dirac_")


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: np.random.Generator | None = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix, the trailing dimensions flattened: the Q of the QR
    decomposition of a normal sample, signs fixed by R's diagonal so Q is uniformly distributed;
    times `gain`."""
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape "
                         f"{tensor.shape}")
    if tensor.numel() == 0:
        return tensor
    rows, cols = tensor.shape[0], tensor.numel() // tensor.shape[0]
    flat = _rng(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape), "orthogonal_")


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: np.random.Generator | None = None) -> Tensor:
    """Fill a 2-D tensor with N(0, std**2) samples, then zero ceil(sparsity * rows) entries of
    every column, at random rows."""
    if tensor.ndim != 2:
        raise ValueError(f"sparse_: only tensors with 2 dimensions are supported, got shape {tensor.shape}")
    rng = _rng(generator)
    rows, cols = tensor.shape
    values = rng.normal(0.0, std, (rows, cols))
    zeros = math.ceil(sparsity * rows)
    for column in range(cols):
        values[rng.permutation(rows)[:zeros], column] = 0.0
    return _fill(tensor, values, "sparse_")


# --- the old spellings ------------------------------------------------------------------------------


def _deprecated(method: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """`method` under its old name without the trailing underscore, warning as PyTorch's does."""
    new_name = method.__name__
    old_name = new_name[:-1]

    @functools.wraps(method)
    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return method(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"`{new_name}` under its old name (deprecated in PyTorch, with a warning)."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
