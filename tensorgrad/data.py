"""Small data sets and a `DataLoader` (tutorial chapter 10).

- `make_moons` and `make_spirals`: 2-D toy problems drawn on the spot, seeded.
- `load_digits`: 1,797 real 8 x 8 handwritten digits, shipped with the package, so it works
  offline (see `_data/README.md` for the source and licence).
- `load_names`: 32,033 first names, shipped too: the data of the character-level language model.
- `DataLoader`: mini-batches of one or more tensors, shuffled each epoch if asked.

Data sets come back as tensors: float32 inputs and int64 class labels, as PyTorch code expects.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from importlib import resources
from typing import Any

import numpy as np

from tensorgrad.tensor import Tensor, _generator, _wrap, float32, int64

__all__ = ["make_moons", "make_spirals", "load_digits", "load_names", "DataLoader"]


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
    return _wrap(points.astype(float32)), _wrap(labels[order].astype(int64))


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
    return (_wrap(np.concatenate(points)[order].astype(float32)),
            _wrap(np.concatenate(labels)[order].astype(int64)))


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
    return _wrap(pixels), _wrap(labels.astype(int64))


def load_names() -> list[str]:
    """32,033 lowercase first names, as a list of str, in the file's order (with repeats).

    makemore's data set (the most common US baby names of 2018); it ships with tensorgrad, so
    no download is needed. See `_data/README.md` for the source and licence.
    """
    source = resources.files("tensorgrad") / "_data" / "names.txt"
    return source.read_text(encoding="ascii").split()


class DataLoader:
    """Mini-batches from a data set, in order or shuffled anew each epoch.

    `dataset` is a tensor, a tuple of tensors (or arrays) with the same first dimension, such as
    `(inputs, labels)`, or any object with `__len__` and `__getitem__` whose items are tuples.
    Each batch is a tuple of tensors (a tensor for a tensor data set). With `seed`, the loader
    shuffles from its own generator; without, from tensorgrad's (`tg.manual_seed`).

    >>> x, y = make_moons(100, noise=0.1, seed=0)
    >>> loader = DataLoader((x, y), batch_size=32, shuffle=True, seed=0)
    >>> [tuple(xb.shape) for xb, yb in loader], len(loader)
    ([(32, 2), (32, 2), (32, 2), (4, 2)], 4)
    """

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 seed: int | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be at least 1, got {batch_size}")
        self.dataset = dataset
        self.batch_size, self.shuffle, self.drop_last = batch_size, shuffle, drop_last
        self._rng = None if seed is None else np.random.default_rng(seed)
        self._columns = _columns(dataset)

    def __len__(self) -> int:
        n = len(self._columns[0]) if self._columns is not None else len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        n = len(self._columns[0]) if self._columns is not None else len(self.dataset)
        if self.shuffle:
            order = (self._rng if self._rng is not None else _generator()).permutation(n)
        else:
            order = np.arange(n)
        stop = n - n % self.batch_size if self.drop_last else n
        for start in range(0, stop, self.batch_size):
            yield self._batch(order[start:start + self.batch_size])

    def _batch(self, rows: np.ndarray) -> Any:
        if self._columns is None:  # a general data set: gather the items, stack each field
            items = [self.dataset[int(i)] for i in rows]
            if not isinstance(items[0], tuple):
                return _stack(items)
            return tuple(_stack(field) for field in zip(*items, strict=True))
        batch = tuple(_wrap(column[rows]) for column in self._columns)  # one gather per tensor
        return batch[0] if isinstance(self.dataset, Tensor | np.ndarray) else batch


def _array(value: Any) -> Any:
    return value.data if isinstance(value, Tensor) else value


def _stack(values: Sequence[Any]) -> Tensor:
    """Items of one field (tensors, arrays or numbers) stacked along a new first dimension."""
    return _wrap(np.stack([np.asarray(_array(v)) for v in values]))


def _columns(dataset: Any) -> list[np.ndarray] | None:
    """The arrays of a tensor (or tuple of tensors) data set, checked; None for other data sets."""
    if isinstance(dataset, Tensor | np.ndarray):
        return [np.asarray(_array(dataset))]
    if isinstance(dataset, Sequence) and dataset and all(isinstance(c, Tensor | np.ndarray) for c in dataset):
        columns = [np.asarray(_array(c)) for c in dataset]
        lengths = {len(c) for c in columns}
        if len(lengths) != 1:
            shapes = ", ".join(str(c.shape) for c in columns)
            raise ValueError(f"DataLoader: the tensors must have the same first dimension, got {shapes}")
        return columns
    if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
        raise TypeError(
            f"DataLoader needs a tensor, a tuple of tensors or a data set with __len__ and "
            f"__getitem__, got {type(dataset).__name__}"
        )
    return None
