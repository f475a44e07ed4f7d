"""Creating tensors: `tensor`, `from_numpy`, `zeros`, `ones`, `full`, `arange`, `eye`, `empty`,
`linspace`, `logspace`, the `*_like` forms, and randomness: `manual_seed` and the generator
behind it, `rand`, `randn`, `randint`, `randperm`, `multinomial`, `bernoulli`, the in-place
initialisers `normal_` and `uniform_`, and `Generator` for a stream of one's own (tutorial
chapter 6).

Every random function draws from the generator behind `tg.manual_seed` unless a
`generator=tg.Generator().manual_seed(n)` is passed, as in PyTorch. Sizes are checked once by
`tensorgrad.checks`. The results are leaves: they carry no history.

Devices: a tensor is made on the CPU and moved once to `device=` if that is elsewhere; the
`*_like` forms and the random functions that take a tensor follow its device. Random numbers are
always drawn on the CPU, by numpy's generator, and then moved: the same seed gives the same
numbers on either device, at the price of one copy to the GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scalargrad.engine import grad_mode
from tensorgrad import checks
from tensorgrad.autograd import bump_version
from tensorgrad.device import array_like, as_device, is_array, to_device, to_numpy, writeable
from tensorgrad.dtypes import bool_, float32, int64
from tensorgrad.tensor import Tensor, new_leaf

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "arange", "eye", "zeros_like",
    "ones_like", "full_like", "manual_seed", "rand", "randn", "rand_like", "randn_like",
    "Generator", "empty", "empty_like", "linspace", "logspace", "randint", "randperm", "multinomial",
    "bernoulli", "normal_", "uniform_",
]

def tensor(data: Any, dtype: Any = None, requires_grad: bool = False,
           device: Any = None) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers or an array).

    Python floats become float32 and ints int64; numpy arrays keep their dtype. A GPU array
    stays on its GPU (unless `device` says otherwise).
    """
    if type(data) is not np.ndarray and is_array(data):  # a GPU's array: copied through the host
        t = Tensor(to_numpy(data), dtype=dtype, requires_grad=requires_grad)
        return _placed(t, device, "tensor") if device is not None else _following(t, data)
    return _placed(Tensor(data, dtype=dtype, requires_grad=requires_grad), device, "tensor")


def as_tensor(data: Any, dtype: Any = None) -> Tensor:
    """`data` itself if it is already a Tensor (of that dtype), else a new tensor."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == np.dtype(dtype)):
        return data
    return tensor(data.data if isinstance(data, Tensor) else data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with `array` (a change to one shows in the other)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy needs a numpy.ndarray, got {type(array).__name__}")
    return new_leaf(array)


def _new(data: np.ndarray, requires_grad: bool, device: Any, op: str) -> Tensor:
    """A fresh leaf holding `data`, on `device`."""
    return _placed(new_leaf(data, requires_grad=requires_grad), device, op)


def _placed(t: Tensor, device: Any, op: str) -> Tensor:
    """t on `device` (checked; None is the CPU). Made on the CPU first: a fresh leaf, moved once."""
    if device is not None:
        target = as_device(device)
        if target.type != "cpu":
            t._data = to_device(t._data, target, op)
    return t


def _following(t: Tensor, like: Any) -> Tensor:
    """t (a fresh leaf made on the CPU) moved to where the array `like` lives, as its kind of array."""
    if type(like) is not np.ndarray:
        t._data = array_like(t._data, like)
    return t


def _creation_dtype(dtype: Any) -> np.dtype:
    return float32 if dtype is None else np.dtype(dtype)


def zeros(*size: int, dtype: Any = None, requires_grad: bool = False,
          device: Any = None) -> Tensor:
    """A tensor of zeros: `zeros(2, 3)` or `zeros((2, 3))`."""
    return _new(np.zeros(checks.sizes(size, "zeros"), _creation_dtype(dtype)), requires_grad, device, "zeros")


def ones(*size: int, dtype: Any = None, requires_grad: bool = False,
         device: Any = None) -> Tensor:
    """A tensor of ones: `ones(2, 3)` or `ones((2, 3))`."""
    return _new(np.ones(checks.sizes(size, "ones"), _creation_dtype(dtype)), requires_grad, device, "ones")


def full(size: Sequence[int], fill_value: float, dtype: Any = None, requires_grad: bool = False,
         device: Any = None) -> Tensor:
    """A tensor of shape `size` filled with `fill_value`."""
    if dtype is None and isinstance(fill_value, bool):
        dtype = bool_
    elif dtype is None and isinstance(fill_value, int):
        dtype = int64
    data = np.full(checks.sizes((size,), "full"), fill_value, _creation_dtype(dtype))
    return _new(data, requires_grad, device, "full")


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           requires_grad: bool = False,
           device: Any = None) -> Tensor:
    """Evenly spaced values in [start, end): int64 for integer arguments, else float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange(): upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    if dtype is None:
        integral = all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if integral else float32
    return _new(np.arange(start, end, step, dtype=np.dtype(dtype)), requires_grad, device, "arange")


def eye(n: int, m: int | None = None, dtype: Any = None, requires_grad: bool = False,
        device: Any = None) -> Tensor:
    """The identity matrix, n x m (m defaults to n)."""
    n, m = checks.sizes((n, n if m is None else m), "eye")
    return _new(np.eye(n, m, dtype=_creation_dtype(dtype)), requires_grad, device, "eye")


_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator behind `rand`, `randn` and their `_like` forms."""
    global _rng
    _rng = np.random.default_rng(seed)


def default_generator() -> np.random.Generator:
    """The generator behind `rand`, `randn`, dropout and `nn.Linear`'s initialisation."""
    return _rng


def rand(*size: int, dtype: Any = None, requires_grad: bool = False,
         device: Any = None) -> Tensor:
    """Uniform samples from [0, 1)."""
    data = _rng.random(checks.sizes(size, "rand"), dtype=np.float64).astype(_creation_dtype(dtype))
    return _new(data, requires_grad, device, "rand")


def randn(*size: int, dtype: Any = None, requires_grad: bool = False,
          device: Any = None) -> Tensor:
    """Samples from the standard normal distribution."""
    data = _rng.standard_normal(checks.sizes(size, "randn")).astype(_creation_dtype(dtype))
    return _new(data, requires_grad, device, "randn")


def _like(make: Any, t: Tensor, dtype: Any, requires_grad: bool, device: Any, name: str,
          *args: Any) -> Tensor:
    """`make(t.shape, *args, ...)` with t's dtype and device unless others are asked for."""
    out = make(t.shape, *args, dtype=t.dtype if dtype is None else dtype, requires_grad=requires_grad)
    return _following(out, t.data) if device is None else _placed(out, device, name)


def zeros_like(t: Tensor, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Zeros of `t`'s shape, dtype and device."""
    return _like(zeros, t, dtype, requires_grad, device, "zeros_like")


def ones_like(t: Tensor, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Ones of `t`'s shape, dtype and device."""
    return _like(ones, t, dtype, requires_grad, device, "ones_like")


def full_like(t: Tensor, fill_value: float, dtype: Any = None, requires_grad: bool = False,
              device: Any = None) -> Tensor:
    """`fill_value` in `t`'s shape, dtype and device."""
    return _like(full, t, dtype, requires_grad, device, "full_like", fill_value)


def rand_like(t: Tensor, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Uniform [0, 1) samples in `t`'s shape, dtype and device."""
    return _like(rand, t, dtype, requires_grad, device, "rand_like")


def randn_like(t: Tensor, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Standard normal samples in `t`'s shape, dtype and device."""
    return _like(randn, t, dtype, requires_grad, device, "randn_like")


class Generator:
    """A stream of random numbers of its own: `g = tg.Generator().manual_seed(0)`, then
    `tg.randint(10, (3,), generator=g)`. Independent of `tg.manual_seed`."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng()
        self._seed: Any = None

    def manual_seed(self, seed: Any) -> Generator:
        """Restart the stream from `seed`; returns the generator (PyTorch's chaining)."""
        self._seed = checks.as_int(seed, "manual_seed", "seed")
        self._rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> Any:
        """The seed last given to `manual_seed` (None if never seeded)."""
        return self._seed


def _stream(generator: Generator | None) -> np.random.Generator:
    if generator is None:
        return default_generator()
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a tg.Generator, got {type(generator).__name__}")
    return generator._rng


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False,
          device: Any = None) -> Tensor:
    """A tensor whose values are whatever the memory held (fill it before reading)."""
    return _new(np.empty(checks.sizes(size, "empty"), _creation_dtype(dtype)), requires_grad, device, "empty")


def empty_like(t: Tensor, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """`empty` in t's shape and dtype."""
    return _like(empty, t, dtype, requires_grad, device, "empty_like")


def linspace(start: float, end: float, steps: int, dtype: Any = None, requires_grad: bool = False,
             device: Any = None) -> Tensor:
    """`steps` evenly spaced values from start to end, both included (float32 by default)."""
    steps = _steps(steps, "linspace")
    values = np.linspace(start, end, steps, dtype=np.float64)
    return _new(_cast_truncating(values, _creation_dtype(dtype)), requires_grad, device, "linspace")


def logspace(start: float, end: float, steps: int, base: float = 10.0, dtype: Any = None,
             requires_grad: bool = False,
             device: Any = None) -> Tensor:
    """`steps` values base**x for x evenly spaced from start to end, both included."""
    steps = _steps(steps, "logspace")
    values = np.power(np.float64(base), np.linspace(start, end, steps, dtype=np.float64))
    return _new(_cast_truncating(values, _creation_dtype(dtype)), requires_grad, device, "logspace")


def _steps(steps: Any, op: str) -> int:
    steps = checks.as_int(steps, op, "steps")
    if steps < 0:
        raise RuntimeError(f"{op}(): number of steps must be non-negative, got {steps}")
    return steps


def _cast_truncating(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    # An integer dtype truncates toward zero, as PyTorch's linspace(dtype=torch.int64) does.
    return (np.trunc(values) if dtype.kind in "iu" else values).astype(dtype)


def randint(*args: Any, generator: Generator | None = None, dtype: Any = None,
            requires_grad: bool = False, device: Any = None) -> Tensor:
    """Uniform integers in [low, high): `randint(high, size)` or `randint(low, high, size)`; int64."""
    if len(args) == 2:
        low, (high, size) = 0, args
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError(f"randint() takes (high, size) or (low, high, size), got {len(args)} arguments")
    low, high = checks.as_int(low, "randint", "low"), checks.as_int(high, "randint", "high")
    if low >= high:
        raise RuntimeError(f"randint(): expects low < high, got low={low} >= high={high}")
    shape = checks.sizes((size,), "randint")
    data = _stream(generator).integers(low, high, size=shape, dtype=np.int64)
    return _new(data.astype(int64 if dtype is None else np.dtype(dtype)), requires_grad, device, "randint")


def randperm(n: int, generator: Generator | None = None, dtype: Any = None, device: Any = None) -> Tensor:
    """A random permutation of 0 .. n-1 (int64)."""
    n = checks.sizes((n,), "randperm")[0]
    return _new(_stream(generator).permutation(n).astype(int64 if dtype is None else np.dtype(dtype)), False,
                device, "randperm")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False,  # noqa: A002
                generator: Generator | None = None) -> Tensor:
    """Sample indices from each row's categorical distribution (weights need not sum to 1); int64.

    Without replacement this is the Gumbel-top-k construction: add independent Gumbel noise to the
    log-weights and keep the `num_samples` largest, which is distributed as drawing one category
    after another without putting it back, in one vectorised step.
    """
    weights = to_numpy(input.data)  # sampled on the host (the same draws on every device), moved back
    num_samples = checks.as_int(num_samples, "multinomial", "num_samples")
    if weights.ndim not in (1, 2) or weights.dtype.kind != "f":
        raise RuntimeError(f"multinomial(): expects a 1-D or 2-D float tensor of weights, got shape "
                           f"{input.shape} and dtype {input.dtype}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("multinomial(): probability tensor contains either `inf`, `nan` or element < 0")
    rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)
    if np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError("multinomial(): invalid distribution: a row of weights sums to 0")
    if num_samples <= 0 or (not replacement and num_samples > rows.shape[1]):
        raise RuntimeError(f"multinomial(): cannot sample {num_samples} samples from {rows.shape[1]} "
                           f"categories {'with' if replacement else 'without'} replacement")
    rng = _stream(generator)
    if replacement:
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows.shape[0], num_samples))
        samples = (u[:, :, None] >= cdf[:, None, :]).sum(axis=2)
        samples = np.minimum(samples, rows.shape[1] - 1)
    else:
        with np.errstate(divide="ignore"):
            keys = np.log(rows) + rng.gumbel(size=rows.shape)
        samples = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    out = samples.astype(int64)
    return _following(new_leaf(out.reshape(num_samples) if weights.ndim == 1 else out), input.data)


def bernoulli(input: Tensor, p: float | None = None, generator: Generator | None = None) -> Tensor:  # noqa: A002
    """1 with probability `input` (or `p`) elementwise, else 0, in input's dtype; no gradient."""
    probability = input.data if p is None else np.full_like(input.data, p)
    if np.any((probability < 0) | (probability > 1)):
        raise RuntimeError("bernoulli(): expects all probabilities to be in [0, 1]")
    draws = array_like(_stream(generator).random(input.shape), input.data) < probability
    return new_leaf(draws.astype(input.dtype if input.dtype.kind == "f" else float32))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill t in place with samples from N(mean, std**2); returns t."""
    if std < 0:
        raise RuntimeError(f"normal_(): expects std >= 0.0, got std={std}")
    return _fill_in_place(t, _stream(generator).normal(mean, std, t.shape), "normal_")


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill t in place with samples from U[a, b); returns t. (PyTorch's `from`, `to`.)"""
    if a > b:
        raise RuntimeError(f"uniform_(): expects from <= to, got from={a} > to={b}")
    return _fill_in_place(t, _stream(generator).uniform(a, b, t.shape), "uniform_")


def _fill_in_place(t: Tensor, values: np.ndarray, name: str) -> Tensor:
    if grad_mode.enabled and t.requires_grad and t.is_leaf:
        raise RuntimeError(f"{name}: a leaf tensor that requires grad can't be changed in place outside "
                           "no_grad(); wrap the update in `with tg.no_grad():`")
    if not writeable(t.data):
        raise RuntimeError(f"{name}: this tensor is read-only (an expand/broadcast_to view); clone() it")
    t.data[...] = array_like(values, t.data)  # drawn on the host, written where t lives
    bump_version(t)
    return t
