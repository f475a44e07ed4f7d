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
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from scalargrad.engine import no_grad
from tensorgrad.checks import ArgumentValueError, UnsupportedDtypeError
from tensorgrad.creation import Generator, default_generator
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
    1 (an int, as PyTorch returns it) for linear, convolutions and sigmoid, 5/3 for tanh, sqrt(2)
    for relu, sqrt(2 / (1 + slope**2)) for leaky_relu (slope `param`: an int or a float, default
    0.01), 3/4 for selu."""
    if nonlinearity in _LINEAR_LIKE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, int | float) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number (an int or a "
                             "float)")
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


def _rng(generator: Generator | np.random.Generator | None) -> np.random.Generator:
    """The numpy stream to draw from: tensorgrad's default one, a `tg.Generator`'s, or the numpy
    `Generator` given."""
    if generator is None:
        return default_generator()
    if isinstance(generator, Generator):
        return generator._rng
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"argument 'generator' must be a tg.Generator or a numpy Generator, not "
                        f"{type(generator).__name__}")
    return generator


def _check_floating(tensor: Tensor, op: str) -> None:
    """Random values are drawn only into floating tensors: PyTorch's NotImplementedError otherwise."""
    if isinstance(tensor, Tensor) and tensor.data.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"{op}: not implemented for dtype {tensor.dtype}: it draws floating "
                                    "values")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | np.random.Generator | None = None) -> Tensor:
    """Fill with samples from the uniform distribution U(a, b); a > b, or a bound that is not a
    finite number of the tensor's dtype, is a RuntimeError, as in PyTorch."""
    _check_floating(tensor, "uniform_")
    if isinstance(tensor, Tensor):
        largest = float(np.finfo(tensor.data.dtype).max)
        for name, bound in (("a", a), ("b", b)):
            if not -largest <= bound <= largest:
                raise ArgumentValueError(f"uniform_: {name}={bound} is out of bounds for {tensor.dtype}")
    if a > b:
        raise ArgumentValueError(f"uniform_: expects to return a [a, b) range, but found a={a} > b={b}")
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape), "uniform_")


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | np.random.Generator | None = None) -> Tensor:
    """Fill with samples from the normal distribution N(mean, std**2) (std >= 0)."""
    if isinstance(tensor, Tensor) and tensor.numel():
        _check_floating(tensor, "normal_")
    if not std >= 0:
        raise ArgumentValueError(f"normal_: expects std >= 0.0, but found std={std}")
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
                    generator: Generator | np.random.Generator | None = None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | np.random.Generator | None = None) -> Tensor:
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str, op: str) -> float | None:
    """gain / sqrt(fan) for the Kaiming initialisers; None for a tensor with no elements (of any
    shape, checked first, as PyTorch does). `mode` is matched without regard to case."""
    if 0 in tensor.shape:
        warnings.warn(f"{op}: initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return None
    if not isinstance(mode, str) or mode.lower() not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode {mode!r} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _fans(tensor, op)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode.lower() == "fan_in" else fan_out)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Generator | np.random.Generator | None = None) -> Tensor:
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
                    generator: Generator | np.random.Generator | None = None) -> Tensor:
    """He normal: N(0, std**2) with std = gain / sqrt(fan), fan picked by `mode`."""
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Generator | np.random.Generator | None = None) -> Tensor:
    """Fill with samples of N(mean, std**2) truncated to [a, b] (a and b are absolute bounds, as
    in PyTorch), by PyTorch's rejection sampling: normal samples outside [a, b] are drawn again
    when the interval holds more than 30% of the mass; otherwise uniform samples on [a, b] are
    kept with probability density / peak density, so a far tail works too (no NaN)."""
    if isinstance(tensor, Tensor) and tensor.numel():
        _check_floating(tensor, "trunc_normal_")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
                      "values may be incorrect.", UserWarning, stacklevel=2)
    if a > b:
        raise ArgumentValueError(f"trunc_normal_: expects a <= b, but found a={a} > b={b}")

    def cdf(x: float) -> float:
        return (1.0 + math.erf((x - mean) / std / math.sqrt(2.0))) / 2.0

    rng = _rng(generator)
    values = np.empty(tensor.shape)
    pending = np.ones(tensor.shape, dtype=bool)
    if cdf(b) - cdf(a) > 0.3:
        while pending.any():
            values[pending] = rng.normal(mean, std, int(pending.sum()))
            pending = (values < a) | (values > b)
    else:
        log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2  # the density's highest point
        while pending.any():
            candidates = rng.uniform(a, b, int(pending.sum()))
            values[pending] = candidates
            log_density = -0.5 * ((candidates - mean) / std) ** 2 - log_peak
            pending[pending] = np.log(rng.uniform(size=candidates.size)) > log_density
    return _fill(tensor, values, "trunc_normal_")


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


def orthogonal_(tensor: Tensor, gain: float = 1.0,
                generator: Generator | np.random.Generator | None = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix, the trailing dimensions flattened: the Q of the QR
    decomposition of a normal sample, signs fixed by R's diagonal so Q is uniformly distributed;
    times `gain`."""
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape "
                         f"{tensor.shape}")
    if tensor.numel() == 0:
        return tensor
    _check_floating(tensor, "orthogonal_")
    if tensor.data.dtype == np.float16:  # PyTorch's QR (geqrf) has no half-precision kernel
        raise UnsupportedDtypeError("orthogonal_: the QR decomposition is not implemented for float16")
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
            generator: Generator | np.random.Generator | None = None) -> Tensor:
    """Fill a 2-D tensor with N(0, std**2) samples, then zero ceil(sparsity * rows) entries of
    every column, at random rows."""
    if tensor.ndim != 2:
        raise ValueError(f"sparse_: only tensors with 2 dimensions are supported, got shape {tensor.shape}")
    rng = _rng(generator)
    rows, cols = tensor.shape
    if rows * cols:
        _check_floating(tensor, "sparse_")
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
