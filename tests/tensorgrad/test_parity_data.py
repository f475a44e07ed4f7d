"""tensorgrad.data against torch.utils.data, side by side: structure, dtypes, values and errors."""

import collections

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.data as G

torch = pytest.importorskip("torch")
T = torch.utils.data
P = collections.namedtuple("P", "a b")


def _norm(x):
    """A comparable picture of a result: container kinds, tensor shapes, dtypes and values."""
    if isinstance(x, torch.Tensor | tg.Tensor):
        return ("T", tuple(x.shape), str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, np.ndarray):
        return ("A", x.shape, str(x.dtype), x.tolist())
    if isinstance(x, tuple | list):
        return (type(x).__name__, *map(_norm, x))
    if isinstance(x, dict):
        return ("dict", *((k, _norm(v)) for k, v in x.items()))
    return (type(x).__name__, x)


def _outcome(make, module):
    try:
        return "ok", _norm(make(module))
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return "err", type(error)


def _ten(m, x):
    return (torch.tensor if m is T else tg.tensor)(np.asarray(x))


def _td(m):
    return m.TensorDataset(_ten(m, np.arange(12, dtype=np.float32).reshape(6, 2)), _ten(m, np.arange(6)))


def _stream(m, n=5):
    return type("Stream", (m.IterableDataset,), {"__iter__": lambda self: iter(range(n))})()


CASES = {
    # data sets
    "td 0-d": lambda m: m.TensorDataset(_ten(m, 3.0)),
    "td empty len": lambda m: len(m.TensorDataset()),
    "td row": lambda m: _td(m)[-1],
    "td mismatch": lambda m: m.TensorDataset(_ten(m, [1, 2]), _ten(m, [1])),
    "base len": lambda m: len(m.Dataset()),
    "concat[-8]": lambda m: m.ConcatDataset([[0, 1, 2], [], [10, 11, 12, 13]])[-8],
    "concat[-7]": lambda m: m.ConcatDataset([[0, 1, 2], [], [10, 11, 12, 13]])[-7],
    "concat[3]": lambda m: m.ConcatDataset([[0, 1, 2], [], [10, 11, 12, 13]])[3],
    "concat[7]": lambda m: m.ConcatDataset([[0, 1, 2], [], [10, 11, 12, 13]])[7],
    "concat cumulative": lambda m: m.ConcatDataset([[0, 1, 2], [], [5]]).cumulative_sizes,
    "stack dict": lambda m: list(m.DataLoader(m.StackDataset(a=[1, 2, 3], b=[1.5, 2.0, 3.0]), batch_size=2)),
    # random_split
    "split 11 halves": lambda m: [len(p) for p in m.random_split(range(11), [0.5, 0.5])],
    "split 7 tenths": lambda m: [len(p) for p in m.random_split(range(7), [0.1] * 10)],
    "split float counts": lambda m: m.random_split(range(10), [3.0, 7.0]),
    "split bad sum": lambda m: m.random_split(range(10), [3, 6]),
    "split bool count": lambda m: [len(p) for p in m.random_split(range(10), [True, 9])],
    "split cover": lambda m: sorted(sum(map(list, m.random_split(range(9), [0.3, 0.7])), [])),
    # default_collate: the first sample decides
    "collate floats": lambda m: m.default_collate([1.0, 2.5]),
    "collate int then float": lambda m: m.default_collate([1, 2.5]),
    "collate bools": lambda m: m.default_collate([True, False]),
    "collate none": lambda m: m.default_collate([None, None]),
    "collate complex": lambda m: m.default_collate([1j, 2j]),
    "collate str array": lambda m: m.default_collate([np.array(["a"])] * 2),
    "collate ragged": lambda m: m.default_collate([[1, 2], [3]]),
    "collate range": lambda m: m.default_collate([range(2), range(2)]),
    "collate nested": lambda m: m.default_collate([((1, [2.0]), {"k": ("s",)}), ((4, [5.0]), {"k": ("t",)})]),
    "collate namedtuple": lambda m: m.default_collate([P(1, np.float32(2)), P(3, np.float32(4))]),
    "collate mixed tensors": lambda m: m.default_collate([_ten(m, np.int32([1])), _ten(m, np.float32([3]))]),
    "convert range": lambda m: m.default_convert(range(2)),
    "convert tuple": lambda m: m.default_convert((np.ones(1, np.float32), 2)),
    # DataLoader
    "dl unbatched td": lambda m: list(m.DataLoader(_td(m), batch_size=None))[:2],
    "dl unbatched dicts": lambda m: list(m.DataLoader([{"a": 0, "b": np.ones(2)}], batch_size=None)),
    "dl unbatched collate_fn": lambda m: list(m.DataLoader([0, 1], None, collate_fn=lambda s: [s])),
    "dl sampler unbatched": lambda m: list(m.DataLoader([(0, 0.0), (1, 1.0)], None, sampler=[1, 0])),
    "dl positional sampler": lambda m: list(m.DataLoader(list(range(5)), 2, False, [4, 0])),
    "dl positional drop_last": lambda m: list(m.DataLoader([0, 1, 2], 2, 0, None, None, 0, None, 0, True)),
    "dl shuffle None": lambda m: list(m.DataLoader(list(range(3)), shuffle=None)),
    "dl shuffle truthy": lambda m: len(m.DataLoader(list(range(5)), batch_size=2, shuffle=1)),
    "dl drop_last str": lambda m: m.DataLoader(list(range(5)), drop_last="yes"),
    "dl drop_last 0 unbatched": lambda m: list(m.DataLoader([1, 2], batch_size=None, drop_last=0)),
    "dl drop_last unbatched": lambda m: m.DataLoader([1, 2], batch_size=None, drop_last=True),
    "dl timeout": lambda m: m.DataLoader([1, 2], timeout=-1),
    "dl prefetch": lambda m: m.DataLoader([1, 2], prefetch_factor=2),
    "dl persistent": lambda m: m.DataLoader([1, 2], persistent_workers=True),
    "dl bogus": lambda m: m.DataLoader([1, 2], bogus=1),
    "dl batch_sampler size": lambda m: m.DataLoader([1, 2], batch_sampler=[[0]], batch_size=2),
    "dl sampler shuffle": lambda m: m.DataLoader([1, 2], sampler=[0], shuffle=True),
    "dl drop_last len": lambda m: [len(m.DataLoader(_td(m), 4, drop_last=d)) for d in (False, True)],
    "dl batches": lambda m: list(m.DataLoader(_td(m), batch_size=4, drop_last=False)),
    "dl tuples": lambda m: list(m.DataLoader([(i, float(i), "s") for i in range(3)], batch_size=2)),
    "dl stream": lambda m: list(m.DataLoader(_stream(m), batch_size=2)),
    "dl stream unbatched": lambda m: list(m.DataLoader(_stream(m, 2), batch_size=None)),
    "dl stream shuffle None": lambda m: list(m.DataLoader(_stream(m, 2), shuffle=None)),
    "dl stream len": lambda m: len(m.DataLoader(_stream(m))),
    # samplers
    "random num_samples True": lambda m: len(m.RandomSampler(range(5), num_samples=True)),
    "random num_samples 0": lambda m: m.RandomSampler(range(5), num_samples=0),
    "random multi perm": lambda m: sorted(m.RandomSampler(range(3), num_samples=6)),
    "weighted empty": lambda m: list(m.WeightedRandomSampler([], 1)),
    "weighted no replacement": lambda m: list(m.WeightedRandomSampler([1, 1], 3, replacement=False)),
    "weighted zeros excluded": lambda m: sorted(set(m.WeightedRandomSampler([0, 1, 0, 1], 50))),
    "batch sampler": lambda m: [list(m.BatchSampler(range(7), 3, d)) for d in (False, True)],
    "batch sampler bool size": lambda m: m.BatchSampler(range(7), True, False),
}


@pytest.mark.filterwarnings("ignore:.*length of split")
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    theirs, ours = _outcome(CASES[name], T), _outcome(CASES[name], G)
    if theirs[0] == "err":
        assert ours[0] == "err", f"torch raised {theirs[1].__name__}, tensorgrad gave {ours[1]}"
        assert issubclass(ours[1], theirs[1]), (ours[1], theirs[1])
    else:
        assert ours == theirs


def test_seeded_generators_reproduce_and_epochs_differ():
    def orders(generator):
        loader = G.DataLoader(list(range(20)), batch_size=20, shuffle=True, generator=generator)
        return [next(iter(loader)).tolist() for _ in range(2)]
    first, second = orders(tg.Generator().manual_seed(5)), orders(tg.Generator().manual_seed(5))
    assert first == second and first[0] != first[1] and sorted(first[0]) == list(range(20))
