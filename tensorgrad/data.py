"""Small data sets and a `DataLoader` (tutorial chapter 9).

- `make_moons` and `make_spirals`: 2-D toy problems drawn on the spot, seeded.
- `load_digits`: 1,797 real 8 x 8 handwritten digits, shipped with the package, so it works
  offline (see `_data/README.md` for the source and licence).
- `load_names`: 32,033 first names, shipped too: the data of the character-level language model.
- `Dataset`, `TensorDataset`, `Subset` and `random_split`: PyTorch's data-set protocol (an
  object with `__len__` and `__getitem__`) and the usual ways to build and split one; also
  `ConcatDataset`, `StackDataset`, and streams (`IterableDataset`, `ChainDataset`).
- The samplers (`RandomSampler`, `WeightedRandomSampler`, `BatchSampler`, ...): which rows a
  loader takes, in which order.
- `DataLoader`: mini-batches of a data set (or of tensors), shuffled each epoch if asked.

Data sets come back as tensors: float32 inputs and int64 class labels, as PyTorch code expects.
A batch lives where its data set's tensors live: a data set on the GPU gives GPU batches (the
shuffle is drawn on the host, from the same generator), and a batch of a CPU data set goes to
the GPU with `.to("cuda")`.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import resources
from typing import Any

import numpy as np

from tensorgrad.creation import Generator, as_tensor, from_numpy, multinomial, randint, randperm, tensor
from tensorgrad.device import is_array, namespace
from tensorgrad.dtypes import float32, float64, int64, promote_types
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["make_moons", "make_spirals", "load_digits", "load_names", "Dataset", "TensorDataset", "Subset",
           "IterableDataset", "ConcatDataset", "ChainDataset", "StackDataset", "random_split", "DataLoader",
           "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler", "collate", "default_collate", "default_convert", "get_worker_info"]


def make_moons(n_samples: int = 100, noise: float = 0.0, seed: int | None = None) -> tuple[Tensor, Tensor]:
    """Two interleaving half circles: points (n, 2) float32 and labels (n,) int64 in {0, 1}.

    The construction of scikit-learn's `make_moons`: the upper moon is label 0, the lower one
    label 1; the points are shuffled and get Gaussian noise of standard deviation `noise`.
    """
    rng = np.random.default_rng(seed)
    n_upper = n_samples // 2
    n_lower = n_samples - n_upper
    upper = np.linspace(0, np.pi, n_upper)
    lower = np.linspace(0, np.pi, n_lower)
    points = np.concatenate([np.stack([np.cos(upper), np.sin(upper)], axis=1),
                             np.stack([1 - np.cos(lower), 0.5 - np.sin(lower)], axis=1)])
    labels = np.repeat([0, 1], [n_upper, n_lower])
    order = rng.permutation(n_samples)
    points = points[order] + rng.normal(scale=noise, size=(n_samples, 2))
    return new_leaf(points.astype(float32)), new_leaf(labels[order].astype(int64))


def make_spirals(n_samples: int = 300, n_classes: int = 3, noise: float = 0.2,
                 seed: int | None = None) -> tuple[Tensor, Tensor]:
    """Interleaved spiral arms, one per class: points (n, 2) float32 and labels (n,) int64.

    The classic example of a problem no linear model solves (CS231n's spiral data): arm k
    winds from the centre outwards, its angle spread by Gaussian noise of `noise` radians.
    Samples are split as evenly as possible among the classes, then shuffled.
    """
    if n_classes < 1:
        raise ValueError(f"make_spirals: n_classes must be at least 1, got {n_classes}")
    rng = np.random.default_rng(seed)
    sizes = [n_samples // n_classes + (k < n_samples % n_classes) for k in range(n_classes)]
    points, labels = [], []
    for k, size in enumerate(sizes):
        radius = np.linspace(0.0, 1.0, size)
        angle = np.linspace(k * 4.0, (k + 1) * 4.0, size) + rng.normal(scale=noise, size=size)
        points.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        labels.append(np.full(size, k))
    order = rng.permutation(n_samples)
    return (new_leaf(np.concatenate(points)[order].astype(float32)),
            new_leaf(np.concatenate(labels)[order].astype(int64)))


def load_digits(images: bool = False) -> tuple[Tensor, Tensor]:
    """1,797 handwritten digits: pixels float32 in [0, 1] and labels (1797,) int64 in 0..9.

    The pixels come flat, (1797, 64), for an MLP; `images=True` keeps them (1797, 8, 8). The
    data ships with tensorgrad, so no download is needed.
    """
    source = resources.files("tensorgrad") / "_data" / "digits.npz"
    with resources.as_file(source) as path, np.load(path, allow_pickle=False) as arrays:
        pixels, labels = arrays["images"], arrays["labels"]
    pixels = pixels.astype(float32) / 16  # the raw values count ink in 4 x 4 blocks: 0..16
    if not images:
        pixels = pixels.reshape(len(pixels), -1)
    return new_leaf(pixels), new_leaf(labels.astype(int64))


def load_names() -> list[str]:
    """32,033 lowercase first names, as a list of str, in the file's order (with repeats).

    makemore's data set (the most common US baby names of 2018); it ships with tensorgrad, so
    no download is needed. See `_data/README.md` for the source and licence.
    """
    source = resources.files("tensorgrad") / "_data" / "names.txt"
    return source.read_text(encoding="ascii").split()


class Dataset:
    """A data set: `dataset[i]` is sample i and `len(dataset)` counts them (PyTorch's protocol).

    Subclass it and define `__getitem__` and `__len__`; a `DataLoader` batches any such object.
    As in PyTorch, the base class has no `__len__` (`len()` of a subclass without one is a
    TypeError, which `list()` and friends expect of an object of unknown length).
    """

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: Any) -> ConcatDataset:
        """`a + b`: the samples of a, then those of b (a `ConcatDataset`)."""
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A data set read as a stream: subclass it and define `__iter__` (PyTorch's protocol).

    A `DataLoader` batches its samples in the order the stream gives them; it cannot shuffle or
    sample a stream, and knows its length only where the subclass defines `__len__`.
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other: Any) -> ChainDataset:
        """`a + b`: the stream of a, then that of b (a `ChainDataset`)."""
        return ChainDataset([self, other])


class SizeMismatchError(ValueError, AssertionError):
    """Tensors of one data set differ in their first dimension (PyTorch raises AssertionError;
    this is also the ValueError the rest of tensorgrad raises for bad values)."""


class NoRowsError(IndexError, ValueError):
    """A 0-d tensor given as a data set's column: it has no first dimension (PyTorch's
    IndexError; also the ValueError of a bad argument)."""


class TensorDataset(Dataset):
    """Samples are rows of tensors: `dataset[i] == (x[i], y[i])` for `TensorDataset(x, y)`.

    Every tensor must have the same first dimension (the number of samples). As in PyTorch,
    `TensorDataset()` with no tensor is allowed, and its `len()` is an IndexError.
    """

    def __init__(self, *tensors: Tensor) -> None:
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: argument {i} must be a Tensor, got {type(t).__name__}")
            if t.ndim == 0:
                raise NoRowsError(f"TensorDataset: argument {i} is a 0-d tensor; samples are rows of the "
                                 "first dimension")
        if len({t.shape[0] for t in tensors}) > 1:
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise SizeMismatchError(f"TensorDataset: size mismatch between tensors: the first dimensions "
                                    f"must match, got shapes {shapes}")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        if not self.tensors:
            raise IndexError("TensorDataset: no tensors, so no samples to count")
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order: `subset[i] == dataset[indices[i]]`."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Data sets one after the other: sample i is found in the data set whose range holds i.

    `cumulative_sizes[k]` is the number of samples in the first k + 1 data sets, as in PyTorch.
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("ConcatDataset: absolute value of index should not exceed dataset length")
            index += len(self)
        k = bisect.bisect_right(self.cumulative_sizes, index)
        if k == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {index} is out of range for {len(self)} samples")
        start = self.cumulative_sizes[k - 1] if k > 0 else 0
        return self.datasets[k][index - start]


class ChainDataset(IterableDataset):
    """Streams one after the other (the `ConcatDataset` of `IterableDataset`s)."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
        return sum(len(d) for d in self.datasets)


class StackDataset(Dataset):
    """Data sets side by side: sample i is the tuple (or, by keyword, the dict) of their sample i.

    `StackDataset(images, labels)[i] == (images[i], labels[i])`;
    `StackDataset(x=images, y=labels)[i] == {"x": images[i], "y": labels[i]}`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("StackDataset: give the data sets by position (samples are tuples) or by "
                             "keyword (samples are dicts), not both")
        self.datasets: tuple[Any, ...] | dict[str, Any] = args if args else kwargs
        sizes = [len(d) for d in (args or kwargs.values())]
        if not sizes:
            raise ValueError("StackDataset: at least one data set should be passed")
        if len(set(sizes)) != 1:
            raise ValueError(f"StackDataset: size mismatch between datasets, got lengths {sizes}")
        self._length = sizes[0]

    def __getitem__(self, index: int) -> tuple[Any, ...] | dict[str, Any]:
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: Generator | np.random.Generator | None = None) -> list[Subset]:
    """Split `dataset` at random into `Subset`s of the given `lengths`, without overlap.

    `lengths` are counts summing to `len(dataset)`, or fractions summing to 1: then each part
    gets floor(n * fraction) samples and the remainder is dealt one by one to the parts in
    turn, as PyTorch does (`[0.8, 0.1, 0.1]` of 32,033 names: 25,627, 3,203, 3,203). The
    shuffle comes from `generator` (a `tg.Generator`, or a numpy one) or else from tensorgrad's
    default generator, seeded by `tg.manual_seed`.
    """
    n = len(dataset)
    lengths = _split_lengths(list(lengths), n)
    order = _permutation(n, generator).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets


def _split_lengths(lengths: list[Any], n: int) -> list[int]:
    """Counts from `random_split`'s lengths (counts, or fractions summing to 1), checked."""
    for i, length in enumerate(lengths):
        if not isinstance(length, numbers.Real):  # a bool counts as an int, as in PyTorch
            raise TypeError(f"random_split: lengths must be ints or fractions, got {type(length).__name__} "
                            f"at index {i}")
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:  # fractions (PyTorch's test, even for [0, 1])
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1: {fraction}")
        sizes = [math.floor(n * fraction) for fraction in lengths]
        for i in range(n - sum(sizes)):  # the remainder, dealt round-robin
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0; this results in an "
                              "empty dataset", stacklevel=3)
        return sizes
    if any(length < 0 for length in lengths):
        raise ValueError(f"random_split: lengths must not be negative, got {lengths}")
    counts = all(isinstance(length, numbers.Integral) for length in lengths)
    if sum(lengths) != n:
        hint = "" if counts else f"; lengths {lengths} are neither counts nor fractions summing to 1"
        raise ValueError(f"random_split: the lengths sum to {sum(lengths)}, but the dataset has {n} "
                         f"samples{hint}")
    if not counts:  # floats summing to n: PyTorch's randperm raises TypeError
        raise TypeError(f"random_split: lengths {lengths} are neither counts nor fractions summing to 1")
    return [int(length) for length in lengths]


# --- samplers: which rows a DataLoader takes, in which order ---------------------------------------


class Sampler:
    """An iterable of data set indices (PyTorch's protocol): a `DataLoader(sampler=...)` takes
    its rows in the order a sampler gives them. Subclass it and define `__iter__` (and
    `__len__` where the count is known)."""

    def __init__(self, data_source: Any = None) -> None:
        pass  # PyTorch's signature; a sampler keeps what it needs itself

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1, in order."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices of `data_source` shuffled (`replacement=False`), or `num_samples` indices drawn
    uniformly with replacement. Without replacement, `num_samples` larger than the data set
    goes through several shuffles, one after the other. Draws from `generator` (a
    `tg.Generator`) or else from tensorgrad's default generator, anew at each iteration."""

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement should be a boolean value, but got "
                            f"replacement={replacement!r}")
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        _check_positive("RandomSampler", "num_samples", self.num_samples, bool_ok=True)

    @property
    def num_samples(self) -> int:
        """How many indices one iteration gives (the data set's length unless set)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            return iter(randint(n, (self.num_samples,), generator=self.generator, device="cpu").tolist())
        shuffles = [randperm(n, generator=self.generator, device="cpu").tolist()
                    for _ in range(-(-self.num_samples // n))]
        return iter(list(itertools.chain.from_iterable(shuffles))[:self.num_samples])

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given `indices` in a new random order at each iteration."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator, device="cpu").tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights` (one weight per
    sample; they need not sum to 1), with replacement unless asked: the usual cure for
    imbalanced classes."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        _check_positive("WeightedRandomSampler", "num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement should be a boolean value, but got "
                             f"replacement={replacement!r}")
        self.weights = as_tensor(weights.data if isinstance(weights, Tensor) else weights, dtype=float64,
                                 device="cpu")
        if self.weights.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1d sequence but given weights "
                             f"have shape {tuple(self.weights.shape)}")
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        if self.weights.shape[0] == 0:
            raise RuntimeError("WeightedRandomSampler: cannot draw from an empty weights sequence")
        drawn = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler` (the last one shorter unless `drop_last`): a
    `DataLoader(batch_sampler=...)` takes each list as one batch."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        _check_positive("BatchSampler", "batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last should be a boolean value, but got "
                             f"drop_last={drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def _check_positive(op: str, name: str, value: Any, bool_ok: bool = False) -> None:
    """A positive int (not a bool, unless `bool_ok`: RandomSampler takes True as 1, as in PyTorch),
    or PyTorch's ValueError naming the argument."""
    if (isinstance(value, bool) and not bool_ok) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{op}: {name} should be a positive integer value, but got {name}={value!r}")


def get_worker_info() -> None:
    """Information about the loading worker process: None, as in PyTorch's main process (a
    DataLoader here makes every batch in the calling process)."""
    return None


# --- the loader ------------------------------------------------------------------------------------


class DataLoader:
    """Mini-batches from a data set, in order or shuffled anew each epoch.

    `dataset` is a `Dataset` (any object with `__len__` and `__getitem__`, such as a
    `TensorDataset` or a `Subset`), a tensor, or a tuple of tensors (or arrays) with the same
    first dimension, such as `(inputs, labels)`. Samples are collated as PyTorch's default
    does: tensors, arrays and numbers are stacked into a tensor with a new first dimension,
    and tuples, lists and dicts of them batch field by field. `batch_size=None` yields the
    samples one by one, unbatched, through `default_convert` (arrays become tensors, tuples
    lists); `collate_fn` replaces the default collation (it gets the list of a batch's samples,
    or each sample when unbatched). With `generator` (a `tg.Generator` or a numpy one) or `seed`,
    the loader shuffles from its own generator; without, from tensorgrad's (`tg.manual_seed`).
    Batches live on the device of the data set's tensors. `sampler` (an iterable of indices) or
    `batch_sampler` (an iterable of lists of indices, one per batch) choose the rows instead of
    `shuffle`; an `IterableDataset` is batched in the order it streams its samples.

    >>> x, y = make_moons(100, noise=0.1, seed=0)
    >>> loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, seed=0)
    >>> [tuple(xb.shape) for xb, yb in loader], len(loader)
    ([(32, 2), (32, 2), (32, 2), (4, 2)], 4)
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Iterable[Sequence[int]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context: Any = None,
                 generator: Generator | np.random.Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True, seed: int | None = None) -> None:
        # PyTorch's worker and memory options are checked as PyTorch does and change nothing: batches
        # are made in this process (num_workers > 0 gives the same batches, made serially).
        if isinstance(num_workers, bool) or not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError("DataLoader: num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout option should be non-negative, got timeout={timeout!r}")
        if prefetch_factor is not None and (num_workers == 0 or prefetch_factor < 0):
            raise ValueError(f"DataLoader: prefetch_factor={prefetch_factor!r} needs num_workers > 0 (it "
                             "could only be specified in multiprocessing) and must be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
        if isinstance(dataset, IterableDataset):
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (False, None):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, "
                                     f"but got {name}={value!r}")
        shuffle = bool(shuffle)  # PyTorch takes any truth value (None, its default, is False)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False  # the batch sampler decides each batch's size, as in PyTorch
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None (no batching) is incompatible with drop_last")
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.pin_memory = num_workers, pin_memory
        _check_batch_size(batch_size)
        if batch_size is not None and not isinstance(drop_last, bool):  # PyTorch's BatchSampler check
            raise ValueError(f"DataLoader: drop_last should be a boolean value, but got "
                             f"drop_last={drop_last!r}")
        if seed is not None and generator is not None:
            raise ValueError("DataLoader: give seed or generator, not both")
        if generator is not None and not isinstance(generator, Generator | np.random.Generator):
            raise TypeError(f"DataLoader: generator must be a tg.Generator, got {type(generator).__name__}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be callable, got {type(collate_fn).__name__}")
        self.collate_fn = collate_fn
        self.dataset = dataset
        self.batch_size, self.shuffle, self.drop_last = batch_size, shuffle, drop_last
        self._rng = generator if generator is not None else (
            None if seed is None else np.random.default_rng(seed))
        self._columns = None if isinstance(dataset, IterableDataset) else _columns(dataset)

    def _size(self) -> int:
        return len(self._columns[0]) if self._columns is not None else len(self.dataset)

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = self._size() if self.sampler is None else len(self.sampler)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self.dataset, IterableDataset):
            yield from self._stream_batches()
            return
        if self.batch_sampler is not None:
            for rows in self.batch_sampler:
                yield self._batch(np.fromiter((int(i) for i in rows), dtype=np.int64))
            return
        n = self._size()
        if self.sampler is not None:  # any iterable of indices, drawn anew each epoch
            order = np.fromiter((int(i) for i in self.sampler), dtype=np.int64)
            n = len(order)
        else:
            order = _permutation(n, self._rng) if self.shuffle else np.arange(n)
        if self.batch_size is None:
            convert = self.collate_fn or default_convert
            for i in order.tolist():
                yield convert(self._sample(i))
            return
        stop = n - n % self.batch_size if self.drop_last else n
        for start in range(0, stop, self.batch_size):
            yield self._batch(order[start:start + self.batch_size])

    def _stream_batches(self) -> Iterator[Any]:
        """An `IterableDataset`'s samples in the order it gives them, `batch_size` at a time."""
        samples = iter(self.dataset)
        if self.batch_size is None:
            yield from map(self.collate_fn or default_convert, samples)
            return
        while batch := list(itertools.islice(samples, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield (self.collate_fn or collate)(batch)

    def _batch(self, rows: np.ndarray) -> Any:
        if self.collate_fn is not None:
            return self.collate_fn([self._sample(int(i)) for i in rows])
        if self._columns is None:
            return _fetch(self.dataset, rows)
        return self._from_columns(rows)  # one gather per tensor

    def _sample(self, i: int) -> Any:
        """Sample `i` on its own: what `collate_fn` receives a list of."""
        if self._columns is None:
            return self.dataset[i]
        return self._from_columns(i)

    def _from_columns(self, index: int | np.ndarray) -> Any:
        """The tensor data set's rows at `index`: one tensor, or one per column (a tuple for one
        sample, a list for a batch, as PyTorch's TensorDataset and default collation give them)."""
        picked = [new_leaf(_gather(column, index)) for column in self._columns]
        if isinstance(self.dataset, Tensor | np.ndarray):
            return picked[0]
        return tuple(picked) if isinstance(index, int) else picked


def _permutation(n: int, generator: Generator | np.random.Generator | None) -> np.ndarray:
    """A shuffle of range(n) from `generator`, or from tensorgrad's default generator."""
    if isinstance(generator, np.random.Generator):
        return generator.permutation(n)
    return randperm(n, generator=generator, device="cpu").numpy()


def _gather(array: np.ndarray, rows: int | np.ndarray) -> np.ndarray:
    """array[rows]: the rows (chosen on the host) picked where the array lives."""
    if type(array) is np.ndarray or isinstance(rows, int):
        return array[rows]
    return array[namespace(array).asarray(rows)]


def _check_batch_size(batch_size: Any) -> None:
    """A positive int, or None; PyTorch raises ValueError for anything else (2.5 included)."""
    if batch_size is None:
        return
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size <= 0:
        raise ValueError(f"DataLoader: batch_size should be a positive integer value (or None), but got "
                         f"batch_size={batch_size!r}")


def _fetch(dataset: Any, rows: np.ndarray) -> Any:
    """The samples at `rows`, collated: one gather per tensor for tensor data sets."""
    if isinstance(dataset, TensorDataset):
        return [new_leaf(_gather(t.data, rows)) for t in dataset.tensors]
    if isinstance(dataset, Subset):
        return _fetch(dataset.dataset, np.asarray(dataset.indices)[rows])
    return collate([dataset[int(i)] for i in rows])


def collate(samples: Sequence[Any]) -> Any:
    """PyTorch's default collation: a list of samples into a batch, field by field.

    Tensors, arrays and numbers are stacked into a tensor with a new first dimension; tuples,
    lists and dicts are collated per field (a tuple, as in PyTorch, into a list; a named tuple
    and a dict keep their kind); strings stay as they come (the list of a batch, or a field's
    tuple). The first sample decides, as in PyTorch: Python floats give a float64 tensor, Python
    ints (and bools) the dtype `tg.tensor` infers for the whole batch (`[1, 2.5]` is float32);
    tensors of several dtypes stack to their promoted dtype. Anything else is a TypeError.
    """
    first = samples[0]
    if isinstance(first, Mapping):
        return {key: collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, str | bytes):
        return samples  # as given: a list at the top, a tuple within a field, as in PyTorch
    if isinstance(first, Sequence):
        if any(len(sample) != len(first) for sample in samples):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        fields = [collate(field) for field in zip(*samples, strict=True)]
        if isinstance(first, tuple) and hasattr(first, "_fields"):  # a named tuple keeps its kind
            return type(first)(*fields)
        return fields  # a tuple (or range) of fields batches into a list, as PyTorch's default_collate
    if isinstance(first, Tensor | np.generic) or is_array(first):
        if getattr(first, "dtype", None) is not None and first.dtype.kind in "OSUV":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                            f"lists; found {first.dtype}")
        return _stack(samples)
    if isinstance(first, float):
        return tensor(samples, dtype=float64)
    if isinstance(first, int):
        return tensor(samples)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(first)}")


default_collate = collate  # PyTorch's name for the default collation


def default_convert(data: Any) -> Any:
    """Each numpy array (and numpy number) in `data` as a tensor, field by field, without
    batching: what `DataLoader(batch_size=None)` does to samples in PyTorch. Arrays become tensors
    sharing their memory; Python numbers, strings and other values stay as they are; dicts and
    named tuples keep their kind, other tuples and lists become lists."""
    if isinstance(data, np.ndarray | np.generic):
        if data.dtype.kind in "OSUV":  # strings and objects have no tensor form
            return data
        return from_numpy(np.asarray(data))
    if isinstance(data, Mapping):
        return type(data)({key: default_convert(value) for key, value in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(value) for value in data))
    if isinstance(data, Sequence) and not isinstance(data, str | bytes):
        return [default_convert(value) for value in data]  # a tuple or range too, as in PyTorch
    return data


def _array(value: Any) -> Any:
    return value.data if isinstance(value, Tensor) else value


def _as_array(value: Any) -> np.ndarray:
    """A tensor's array, an array as it is (on its device), anything else as a numpy array."""
    value = _array(value)
    return value if is_array(value) else np.asarray(value)


def _stack(values: Sequence[Any]) -> Tensor:
    """Items of one field (tensors, arrays or numbers) stacked along a new first dimension."""
    arrays = [_as_array(v) for v in values]
    if len({a.shape for a in arrays}) != 1:
        shapes = sorted({str(a.shape) for a in arrays})
        raise RuntimeError(f"DataLoader: the samples of a batch must have equal shapes to be stacked, got "
                           f"{', '.join(shapes)}")
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) > 1:  # PyTorch's stack promotes (int32 with float32 is float32, where numpy says float64)
        dtype = functools.reduce(promote_types, dtypes)
        arrays = [a.astype(dtype, copy=False) for a in arrays]
    return new_leaf(namespace(arrays[0]).stack(arrays))


def _columns(dataset: Any) -> list[np.ndarray] | None:
    """The arrays of a tensor (or tuple of tensors) data set, checked; None for other data sets."""
    if isinstance(dataset, Tensor | np.ndarray):
        return [_as_array(dataset)]
    # A tuple of tensors is tensorgrad's shorthand for their TensorDataset; a list is a list of samples,
    # as in PyTorch (`DataLoader([np.ones(2), np.zeros(2)], batch_size=2)` stacks them).
    if isinstance(dataset, tuple) and dataset and all(isinstance(c, Tensor | np.ndarray) for c in dataset):
        columns = [_as_array(c) for c in dataset]
        lengths = {len(c) for c in columns}
        if len(lengths) != 1:
            shapes = ", ".join(str(c.shape) for c in columns)
            raise ValueError(f"DataLoader: the tensors must have the same first dimension, got {shapes}")
        return columns
    if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
        raise TypeError(
            f"DataLoader needs a Dataset (an object with __len__ and __getitem__), a tensor or a tuple "
            f"of tensors, got {type(dataset).__name__}"
        )
    return None
