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

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from scalargrad.engine import grad_mode
from tensorgrad import checks, dtypes
from tensorgrad.autograd import bump_version, record
from tensorgrad.checks import ShapeError, UnsupportedDtypeError
from tensorgrad.device import (
    CPU,
    array_like,
    as_device,
    default_device,
    device_of,
    is_array,
    namespace,
    to_device,
    to_numpy,
    writeable,
)
from tensorgrad.dtypes import bool_, int64
from tensorgrad.tensor import Tensor, new_leaf, to_array

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "arange", "eye", "zeros_like",
    "ones_like", "full_like", "manual_seed", "rand", "randn", "rand_like", "randn_like",
    "Generator", "empty", "empty_like", "linspace", "logspace", "randint", "randperm", "multinomial",
    "bernoulli", "normal_", "uniform_", "normal", "randint_like", "initial_seed", "seed", "get_rng_state",
    "set_rng_state", "exponential_", "random_", "tril_indices", "triu_indices", "scalar_tensor",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "poisson",
    "binomial",
]

def tensor(data: Any, dtype: Any = None, requires_grad: bool = False,
           device: Any = None) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers or an array).

    Python floats become the default float (float32) and ints int64; numpy arrays keep their dtype.
    A GPU array stays on its GPU (unless `device` says otherwise).
    """
    if type(data) is not np.ndarray and is_array(data):  # a GPU's array: copied through the host
        t = new_leaf(to_array(to_numpy(data), dtype), requires_grad)
        return _placed(t, device, "tensor") if device is not None else _following(t, data)
    return _placed(new_leaf(to_array(data, dtype), requires_grad), device, "tensor")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` itself if it is already a Tensor (of that dtype and device), a tensor sharing the
    memory of an array of that dtype (as `from_numpy`), else a new tensor."""
    same_dtype = dtype is None or getattr(data, "dtype", None) == np.dtype(dtype)
    if isinstance(data, Tensor) and same_dtype and (device is None or data.device == as_device(device)):
        return data
    if isinstance(data, Tensor):
        return _placed(data.detach().to(dtype=dtype), device, "as_tensor")
    target = device if device is not None else default_device()  # (an array goes to the default device)
    if is_array(data) and same_dtype and (target is None or as_device(target) == device_of(data)):
        return new_leaf(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with `array` (a change to one shows in the other)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy needs a numpy.ndarray, got {type(array).__name__}")
    return new_leaf(array)


def _new(data: np.ndarray, requires_grad: bool, device: Any, op: str) -> Tensor:
    """A fresh leaf holding `data`, on `device`."""
    return _placed(new_leaf(data, requires_grad=requires_grad), device, op)


def _placed(t: Tensor, device: Any, op: str) -> Tensor:
    """t on `device` (checked; None is the default device, the CPU unless set). Made on the CPU
    first: a fresh leaf, moved once."""
    if device is None:
        device = default_device()
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
    return dtypes.or_default(dtype)


def legacy(dtype: np.dtype, args: tuple, device: Any = None) -> Tensor:
    """PyTorch's legacy constructors (`tg.Tensor(...)`, `tg.FloatTensor(...)`): data converted to
    `dtype` (`Tensor([1, 2])` is float), sizes as an uninitialised tensor (`Tensor(2, 3)`), or
    nothing for an empty one."""
    if not args:
        return empty(0, dtype=dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], int | np.integer):
        data = args[0]
        if isinstance(data, Tensor):
            return data.detach().to(dtype=dtype)
        return tensor(data, dtype=dtype, device=device)
    return empty(*args, dtype=dtype, device=device)


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
    """Evenly spaced values in [start, end): int64 for integer arguments, else the default float."""
    if end is None:
        start, end = 0, start
    # 0-d tensors and numpy scalars count as the numbers they hold (`arange(t.size(0))`, `arange(n)`).
    start, end, step = (v.item() if isinstance(v, Tensor | np.generic) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange(): upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    if dtype is None:
        integral = all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if integral else dtypes.default_float
    return _new(np.arange(start, end, step, dtype=np.dtype(dtype)), requires_grad, device, "arange")


def eye(n: int, m: int | None = None, dtype: Any = None, requires_grad: bool = False,
        device: Any = None) -> Tensor:
    """The identity matrix, n x m (m defaults to n)."""
    n, m = checks.sizes((n, n if m is None else m), "eye")
    return _new(np.eye(n, m, dtype=_creation_dtype(dtype)), requires_grad, device, "eye")


_rng = np.random.default_rng()


_initial_seed: Any = None


def manual_seed(seed: int) -> Generator:
    """Seed the generator behind `rand`, `randn` and their `_like` forms; returns it (as a
    `Generator`, as PyTorch returns its default generator)."""
    global _rng, _initial_seed
    _initial_seed = checks.as_int(seed, "manual_seed", "seed")
    _rng = np.random.default_rng(_initial_seed)
    generator = Generator()
    generator._rng, generator._seed = _rng, _initial_seed
    return generator


def initial_seed() -> Any:
    """The seed last given to `manual_seed` (None before the first)."""
    return _initial_seed


def seed() -> int:
    """Seed the default generator with a fresh random seed; returns the seed."""
    fresh = int(np.random.SeedSequence().entropy % 2**63)
    manual_seed(fresh)
    return fresh


def get_rng_state() -> Tensor:
    """The default generator's state, as a uint8 tensor (its JSON text) for `set_rng_state`."""
    text = json.dumps(_rng.bit_generator.state).encode()
    return new_leaf(np.frombuffer(text, dtype=np.uint8).copy())


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from `get_rng_state()`."""
    if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
        raise TypeError("set_rng_state(): expects the uint8 tensor that get_rng_state() returns, got "
                        f"{type(new_state).__name__}")
    try:
        state = json.loads(to_numpy(new_state.data).tobytes())
        _rng.bit_generator.state = state
    except (ValueError, TypeError, KeyError) as error:
        raise RuntimeError(f"set_rng_state(): not a state from get_rng_state() ({error})") from None


def default_generator() -> np.random.Generator:
    """The generator behind `rand`, `randn`, dropout and `nn.Linear`'s initialisation."""
    return _rng


def rand(*size: int, generator: Generator | None = None, dtype: Any = None, requires_grad: bool = False,
         device: Any = None) -> Tensor:
    """Uniform samples from [0, 1)."""
    data = _stream(generator).random(checks.sizes(size, "rand"), dtype=np.float64)
    data = data.astype(_creation_dtype(dtype))
    return _new(data, requires_grad, device, "rand")


def randn(*size: int, generator: Generator | None = None, dtype: Any = None, requires_grad: bool = False,
          device: Any = None) -> Tensor:
    """Samples from the standard normal distribution."""
    data = _stream(generator).standard_normal(checks.sizes(size, "randn")).astype(_creation_dtype(dtype))
    return _new(data, requires_grad, device, "randn")


def _like(make: Any, t: Tensor, dtype: Any, requires_grad: bool, device: Any, name: str,
          *args: Any) -> Tensor:
    """`make(t.shape, *args, ...)` with t's dtype and device unless others are asked for."""
    out = make(t.shape, *args, dtype=t.dtype if dtype is None else dtype, requires_grad=requires_grad,
               device=CPU)  # (made on the host, then moved once: not to the default device)
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
    """`steps` evenly spaced values from start to end, both included (the default float unless `dtype`)."""
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


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None) -> Tensor:
    """The (2, N) row and column indices of the lower triangle of a row x col matrix (on and below
    diagonal `offset`), row by row, as `torch.tril_indices`."""
    return _triangle_indices(np.tril_indices, row, col, offset, dtype, device, "tril_indices")


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None) -> Tensor:
    """The (2, N) row and column indices of the upper triangle of a row x col matrix (on and above
    diagonal `offset`), row by row, as `torch.triu_indices`."""
    return _triangle_indices(np.triu_indices, row, col, offset, dtype, device, "triu_indices")


def _triangle_indices(indices: Any, row: int, col: int, offset: int, dtype: Any, device: Any,
                      op: str) -> Tensor:
    row, col = checks.sizes((row, col), op)
    offset = checks.as_int(offset, op, "offset")
    rows, cols = indices(row, k=offset, m=col)
    data = np.stack([rows, cols]).astype(int64 if dtype is None else np.dtype(dtype))
    return _new(data, False, device, op)


def _steps(steps: Any, op: str) -> int:
    steps = checks.as_int(steps, op, "steps")
    if steps < 0:
        raise RuntimeError(f"{op}(): number of steps must be non-negative, got {steps}")
    return steps


def _cast_truncating(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    # An integer dtype truncates toward zero, as PyTorch's linspace(dtype=torch.int64) does.
    return (np.trunc(values) if dtype.kind in "iu" else values).astype(dtype)


def randint(*args: Any, generator: Generator | None = None, dtype: Any = None,
            requires_grad: bool = False, device: Any = None, **named: Any) -> Tensor:
    """Uniform integers in [low, high): `randint(high, size)` or `randint(low, high, size)`; int64.

    The arguments may be named, as in PyTorch: `randint(low=0, high=10, size=(3,))`."""
    unknown = set(named) - {"low", "high", "size"}
    if unknown:
        raise TypeError(f"randint() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if named:
        names = ("low", "high", "size") if len(args) + len(named) == 3 else ("high", "size")
        given = dict(zip(names, args, strict=False))
        repeated = set(given) & set(named)
        if repeated:
            raise TypeError(f"randint() got multiple values for argument {sorted(repeated)[0]!r}")
        given.update(named)
        if set(given) != set(names):
            raise TypeError(f"randint() takes (high, size) or (low, high, size), got {sorted(given)}")
        args = tuple(given[name] for name in names)
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


def randint_like(t: Tensor, low: int = 0, high: int | None = None, *, dtype: Any = None,
                 requires_grad: bool = False, device: Any = None) -> Tensor:
    """Uniform integers in [low, high) in t's shape, dtype and device: `randint_like(t, high)` or
    `randint_like(t, low, high)`."""
    if high is None:
        low, high = 0, low
    out = randint(low, high, t.shape, dtype=t.dtype if dtype is None else dtype, requires_grad=requires_grad,
                  device=CPU)
    return _following(out, t.data) if device is None else _placed(out, device, "randint_like")


def normal(mean: Any = 0.0, std: Any = 1.0, size: Sequence[int] | None = None, *,
           generator: Generator | None = None, dtype: Any = None, requires_grad: bool = False,
           device: Any = None) -> Tensor:
    """Samples from N(mean, std**2): `normal(mean, std, size)` with numbers, or `normal(means, stds)`
    with tensors (elementwise, broadcast), as PyTorch's `torch.normal`."""
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal(): with a number mean and std, give the size: normal(mean, std, size)")
        if std < 0:
            raise RuntimeError(f"normal(): expects std >= 0.0, got std={std}")
        shape = checks.sizes((size,), "normal")
        data = _stream(generator).normal(mean, std, shape).astype(_creation_dtype(dtype))
        return _new(data, requires_grad, device, "normal")
    if size is not None:
        raise TypeError("normal(): size is taken from the tensor mean or std; don't give it")
    means, stds = (to_numpy(v.data) if isinstance(v, Tensor) else v for v in (mean, std))
    if np.any(np.asarray(stds) < 0):
        raise RuntimeError("normal(): expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(np.shape(means), np.shape(stds))
    out_dtype = np.result_type(*(t.dtype for t in tensors)) if dtype is None else np.dtype(dtype)
    data = (means + stds * _stream(generator).standard_normal(shape)).astype(out_dtype)
    out = new_leaf(data, requires_grad=requires_grad)
    return _following(out, tensors[0].data) if device is None else _placed(out, device, "normal")


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
    return new_leaf(draws.astype(input.dtype if input.dtype.kind == "f" else dtypes.default_float))


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


def exponential_(t: Tensor, lambd: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill t in place with samples from the exponential distribution of rate `lambd`; returns t."""
    if lambd <= 0:
        raise RuntimeError(f"exponential_(): expects lambd > 0.0, got lambd={lambd}")
    return _fill_in_place(t, _stream(generator).exponential(1.0 / lambd, t.shape), "exponential_")


def random_(t: Tensor, low: int = 0, high: int | None = None, generator: Generator | None = None) -> Tensor:
    """Fill t in place with integers uniform in [low, high): `random_(high)`, `random_(low, high)`;
    with neither, up to the largest integer t's dtype holds exactly. Returns t."""
    if high is None and low != 0:
        low, high = 0, low
    if high is None:
        high = 2 ** (np.finfo(t.dtype).nmant + 1) + 1 if t.dtype.kind == "f" else \
            (2 if t.dtype.kind == "b" else int(np.iinfo(t.dtype).max) + 1)
    low, high = checks.as_int(low, "random_", "from"), checks.as_int(high, "random_", "to")
    if low >= high:
        raise RuntimeError(f"random_(): expects 'from' < 'to', got from={low} >= to={high}")
    return _fill_in_place(t, _stream(generator).integers(low, high, t.shape), "random_")


def _fill_in_place(t: Tensor, values: np.ndarray, name: str) -> Tensor:
    if grad_mode.enabled and t.requires_grad and t.is_leaf:
        raise RuntimeError(f"{name}: a leaf tensor that requires grad can't be changed in place outside "
                           "no_grad(); wrap the update in `with tg.no_grad():`")
    if not writeable(t.data):
        raise RuntimeError(f"{name}: this tensor is read-only (an expand/broadcast_to view); clone() it")
    t.data[...] = array_like(values, t.data)  # drawn on the host, written where t lives
    bump_version(t)
    return t


# --- torch.scalar_tensor, window functions, and Poisson and binomial sampling ----------------------


def scalar_tensor(s: Any, *, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A 0-d tensor holding the number `s`, in the default float dtype unless `dtype` says
    otherwise (also for an int or bool `s`, as `torch.scalar_tensor`)."""
    if isinstance(s, Tensor | np.ndarray | np.generic) and np.ndim(s) == 0:
        s = s.item()
    if not isinstance(s, bool | int | float | complex):
        raise TypeError(f"scalar_tensor(): argument 's' must be a number, not {type(s).__name__}")
    if isinstance(s, complex) and _creation_dtype(dtype).kind != "c":
        raise RuntimeError(f"scalar_tensor(): the complex value {s} can't be converted to "
                           f"{_creation_dtype(dtype)}")
    return _new(np.asarray(s, _creation_dtype(dtype)), requires_grad, device, "scalar_tensor")


def _window(op: str, window_length: int, periodic: bool, dtype: Any, requires_grad: bool, device: Any,
            values: Any) -> Tensor:
    """A window of `window_length` samples: `values(k, m)` at k = 0 .. m-1 for a symmetric window of
    m points, where a periodic window (for spectral analysis) is the first n of n + 1 points."""
    n = checks.as_int(window_length, op, "window_length")
    if n < 0:
        raise RuntimeError(f"{op}(): requires non-negative window_length, got window_length={n}")
    dtype = _creation_dtype(dtype)
    if dtype.kind != "f":
        raise RuntimeError(f"{op}(): expects floating point dtypes, got {dtype}")
    if n <= 1:  # PyTorch's: an empty window, or the single point 1
        data = np.ones(n)
    else:
        m = n + 1 if periodic else n
        data = values(np.arange(m, dtype=np.float64), m)[:n]
    return _new(data.astype(dtype), requires_grad, device, op)


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, requires_grad: bool = False,
                device: Any = None) -> Tensor:
    """The Hann window: 0.5 - 0.5 cos(2 pi k / (m - 1)) for k = 0 .. m-1 (periodic: m = n + 1, the
    last point dropped)."""
    return _window("hann_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: 0.5 - 0.5 * np.cos(2 * np.pi * k / (m - 1)))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """The generalised Hamming window: alpha - beta cos(2 pi k / (m - 1)) for k = 0 .. m-1
    (periodic: m = n + 1, the last point dropped)."""
    return _window("hamming_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: alpha - beta * np.cos(2 * np.pi * k / (m - 1)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    requires_grad: bool = False, device: Any = None) -> Tensor:
    """The Blackman window: 0.42 - 0.5 cos(2 pi k / (m - 1)) + 0.08 cos(4 pi k / (m - 1)) for
    k = 0 .. m-1 (periodic: m = n + 1, the last point dropped)."""
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: 0.42 - 0.5 * np.cos(2 * np.pi * k / (m - 1))
                   + 0.08 * np.cos(4 * np.pi * k / (m - 1)))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    requires_grad: bool = False, device: Any = None) -> Tensor:
    """The Bartlett (triangular) window: 1 - |2k / (m - 1) - 1| for k = 0 .. m-1 (periodic:
    m = n + 1, the last point dropped)."""
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: 1 - np.abs(2 * k / (m - 1) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  requires_grad: bool = False, device: Any = None) -> Tensor:
    """The Kaiser window: I0(beta sqrt(1 - (2k / (m - 1) - 1)**2)) / I0(beta) for k = 0 .. m-1,
    I0 the modified Bessel function of order 0 (periodic: m = n + 1, the last point dropped)."""
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, device,
                   lambda k, m: np.i0(beta * np.sqrt(np.clip(1 - (2 * k / (m - 1) - 1) ** 2, 0, None)))
                   / np.i0(beta))


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:  # noqa: A002 - PyTorch's name
    """Samples from Poisson(rate) for each element of `input` (the rates), in input's dtype.
    Derivative: 0 (a sample does not vary smoothly with its rate), as PyTorch defines it."""
    if input.dtype.kind != "f":
        raise UnsupportedDtypeError(f"poisson(): the rates must be a floating tensor, got {input.dtype}")
    rates = to_numpy(input.data)  # drawn on the host (the same draws on every device), moved back
    if np.any(rates < 0) or np.any(np.isnan(rates)):
        raise RuntimeError("poisson(): invalid Poisson rate, expected rate to be non-negative")
    draws = _stream(generator).poisson(rates.astype(np.float64)).astype(input.dtype)
    return record(array_like(draws, input.data), "poisson", (input,),
                  lambda grad: namespace(grad).zeros_like(grad), saved=())


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from Binomial(count, prob) elementwise (broadcasting), in count's floating dtype:
    the number of successes in `count` trials that each succeed with probability `prob`. No
    gradient."""
    if count.dtype.kind != "f":
        raise ValueError(f"binomial(): only floating-point dtypes are supported for count, got {count.dtype}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"binomial(): count and prob must have one dtype, got {count.dtype} and "
                           f"{prob.dtype}")
    trials, chance = to_numpy(count.data), to_numpy(prob.data)  # drawn on the host, as `poisson`
    try:
        shape = np.broadcast_shapes(trials.shape, chance.shape)
    except ValueError:
        raise ShapeError(f"binomial(): count of shape {count.shape} and prob of shape {prob.shape} can't be "
                         "broadcast together") from None
    if not np.all((chance >= 0) & (chance <= 1)) or not np.all(trials >= 0):
        raise RuntimeError("binomial(): expects every prob in [0, 1] and every count >= 0")
    draws = _stream(generator).binomial(np.broadcast_to(trials, shape).astype(np.int64),
                                        np.broadcast_to(chance, shape))
    return _following(new_leaf(draws.astype(count.dtype)), count.data)
