"""Samplers, data-set combinators, streams and collation, against `torch.utils.data`.

What is deterministic (orders, batches, lengths, collated types and dtypes, the errors and their
types) must equal PyTorch's exactly. The random samplers draw from tensorgrad's generator, so
their streams differ from PyTorch's by design: they must have PyTorch's structure (a shuffle is
a permutation, several of them back to back when more samples are asked for than there are)
and statistics (weights give frequencies), and repeat under `tg.manual_seed` or a generator.
"""

from __future__ import annotations

from collections import Counter, namedtuple

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import data as tgdata
from tensorgrad.utils import data as ours

torch = pytest.importorskip("torch")
theirs = torch.utils.data


def _plain(batch):
    """A batch as nested Python values, whichever library made it (tensors become (dtype, list))."""
    if isinstance(batch, tg.Tensor | torch.Tensor):
        return str(batch.dtype).replace("torch.", ""), batch.tolist()
    if isinstance(batch, dict):
        return {key: _plain(value) for key, value in batch.items()}
    if isinstance(batch, tuple | list):
        return type(batch).__name__, [_plain(value) for value in batch]
    return batch


def test_the_torch_import_path_gives_the_same_objects():
    assert ours.DataLoader is tgdata.DataLoader and ours.TensorDataset is tgdata.TensorDataset
    assert ours.default_collate is tgdata.collate


def test_sequential_and_batch_samplers_give_pytorchs_indices():
    for n, size, drop_last in [(5, 2, False), (5, 2, True), (6, 3, False), (1, 4, False), (1, 4, True)]:
        mine = ours.BatchSampler(ours.SequentialSampler(range(n)), size, drop_last)
        reference = theirs.BatchSampler(theirs.SequentialSampler(range(n)), size, drop_last)
        assert list(mine) == list(reference)
        assert len(mine) == len(reference)


def test_a_loader_with_a_batch_sampler_takes_its_batches():
    rows = [[0, 4], [1], [3, 2, 5]]
    x = np.arange(12.0).reshape(6, 2)
    mine = ours.DataLoader(ours.TensorDataset(tg.tensor(x)), batch_sampler=rows)
    reference = theirs.DataLoader(theirs.TensorDataset(torch.tensor(x)), batch_sampler=rows)
    assert [_plain(b) for b in mine] == [_plain(b) for b in reference]
    assert len(mine) == len(reference) == 3
    assert mine.batch_size is None and reference.batch_size is None


@pytest.mark.parametrize("options", [dict(batch_size=2), dict(shuffle=True), dict(drop_last=True),
                                     dict(sampler=[0, 1])])
def test_a_batch_sampler_excludes_the_other_batching_options(options):
    with pytest.raises(ValueError, match="mutually exclusive"):
        ours.DataLoader(list(range(4)), batch_sampler=[[0]], **options)
    with pytest.raises(ValueError, match="mutually exclusive"):
        theirs.DataLoader(list(range(4)), batch_sampler=[[0]], **options)


@pytest.mark.parametrize("make", [
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda m: m.WeightedRandomSampler([1.0, 2.0], 0),
    lambda m: m.WeightedRandomSampler([1.0, 2.0], 2, replacement="yes"),
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), 2, 1),
    lambda m: m.ConcatDataset([]),
    lambda m: m.StackDataset(range(2), a=range(2)),
    lambda m: m.StackDataset(range(2), range(3)),
])
def test_bad_arguments_raise_pytorchs_exception_types(make):
    with pytest.raises(Exception) as reference:
        make(theirs)
    with pytest.raises(reference.type):
        make(ours)


def test_random_sampler_without_replacement_is_back_to_back_permutations():
    tg.manual_seed(0)
    drawn = list(ours.RandomSampler(range(4), num_samples=10))
    assert len(drawn) == 10
    assert sorted(drawn[:4]) == sorted(drawn[4:8]) == [0, 1, 2, 3]  # two whole shuffles, then a part
    assert len(set(drawn[8:])) == 2
    assert sorted(ours.RandomSampler(range(7))) == list(range(7))
    assert len(ours.RandomSampler(range(4), num_samples=10)) == 10
    assert len(theirs.RandomSampler(range(4), num_samples=10)) == 10


def test_random_samplers_repeat_under_a_seed_and_a_generator():
    def draws():
        return (list(ours.RandomSampler(range(50))), list(ours.RandomSampler(range(50), replacement=True)),
                list(ours.SubsetRandomSampler(list(range(10, 60)))))
    tg.manual_seed(3)
    first = draws()
    tg.manual_seed(3)
    assert draws() == first
    assert first[0] != list(range(50))  # a shuffle, not the identity
    assert sorted(first[2]) == list(range(10, 60))
    assert all(0 <= i < 50 for i in first[1]) and len(set(first[1])) < 50  # with replacement: repeats
    one, two = tg.Generator().manual_seed(7), tg.Generator().manual_seed(7)
    assert list(ours.RandomSampler(range(20), generator=one)) == list(ours.RandomSampler(range(20),
                                                                                        generator=two))


def test_weighted_sampler_draws_in_proportion_to_the_weights():
    tg.manual_seed(1)
    weights = [0.0, 1.0, 0.0, 3.0]
    counts = Counter(ours.WeightedRandomSampler(weights, 8000))
    assert set(counts) == {1, 3}
    assert abs(counts[3] / 8000 - 0.75) < 0.02  # 4.7 standard deviations
    without = list(ours.WeightedRandomSampler([1.0, 1.0, 1.0, 5.0], 4, replacement=False))
    assert sorted(without) == [0, 1, 2, 3]
    # More samples than non-zero weights: the zero-weight rows come last, as in PyTorch.
    assert list(ours.WeightedRandomSampler([0.0, 1.0], 2, replacement=False)) == [1, 0]
    assert list(theirs.WeightedRandomSampler([0.0, 1.0], 2, replacement=False)) == [1, 0]


def test_a_loader_batches_the_rows_a_weighted_sampler_draws():
    tg.manual_seed(2)
    x = tg.arange(6.0)[:, None] * 10
    sampler = ours.WeightedRandomSampler([0, 0, 1, 0, 0, 1], 5)
    batches = list(ours.DataLoader(ours.TensorDataset(x), sampler=sampler, batch_size=2))
    assert [b[0].shape for b in batches] == [(2, 1), (2, 1), (1, 1)]
    assert {v for b in batches for v in b[0].flatten().tolist()} <= {20.0, 50.0}


def test_concat_dataset_indexes_across_its_parts_as_pytorch():
    parts = [list(range(3)), list(range(10, 12)), [], list(range(20, 24))]
    mine, reference = ours.ConcatDataset(parts), theirs.ConcatDataset(parts)
    assert mine.cumulative_sizes == reference.cumulative_sizes
    assert len(mine) == len(reference) == 9
    assert [mine[i] for i in range(-9, 9)] == [reference[i] for i in range(-9, 9)]
    with pytest.raises(ValueError, match="should not exceed"):
        mine[-10]
    with pytest.raises(IndexError):
        mine[9]
    combined = ours.TensorDataset(tg.ones(2)) + ours.TensorDataset(tg.zeros(3))
    assert isinstance(combined, ours.ConcatDataset) and len(combined) == 5
    assert combined[4][0].item() == 0.0


def test_stack_dataset_gives_tuples_or_dicts():
    mine = ours.StackDataset(range(3), [5, 6, 7])
    assert mine[1] == theirs.StackDataset(range(3), [5, 6, 7])[1] == (1, 6) and len(mine) == 3
    assert ours.StackDataset(a=range(2), b=[5, 6])[1] == {"a": 1, "b": 6}


class _Count(ours.IterableDataset):
    def __init__(self, n, with_length=False):
        self.n, self.with_length = n, with_length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.with_length:
            raise TypeError(f"object of type {type(self).__name__!r} has no len()")
        return self.n


class _TheirCount(theirs.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


@pytest.mark.parametrize("options", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                     dict(batch_size=None), dict(batch_size=7), dict(batch_size=8)])
def test_a_loader_batches_a_stream_in_order(options):
    mine = list(ours.DataLoader(_Count(7), **options))
    reference = list(theirs.DataLoader(_TheirCount(7), **options))
    assert [_plain(b) for b in mine] == [_plain(b) for b in reference]


def test_a_stream_cannot_be_shuffled_or_sampled_and_has_a_length_only_if_it_says():
    for options in (dict(shuffle=True), dict(sampler=[0, 1]), dict(batch_sampler=[[0]])):
        with pytest.raises(ValueError, match="IterableDataset: expected unspecified"):
            ours.DataLoader(_Count(3), **options)
    with pytest.raises(TypeError):
        len(ours.DataLoader(_Count(7), batch_size=3))
    assert len(ours.DataLoader(_Count(7, with_length=True), batch_size=3)) == 3
    chained = _Count(2) + _Count(3)
    assert isinstance(chained, ours.ChainDataset) and list(chained) == [0, 1, 0, 1, 2]
    assert len(ours.ChainDataset([_Count(2, True), _Count(3, True)])) == 5
    with pytest.raises(AssertionError, match="IterableDataset"):
        list(ours.ChainDataset([[1, 2]]))
    with pytest.raises(AssertionError, match="IterableDataset"):
        ours.ConcatDataset([_Count(2)])


Point = namedtuple("Point", "x y")


@pytest.mark.parametrize("samples", [
    [1.5, 2.5],
    [(1, 2.0), (3, 4.0)],
    [{"a": np.ones(2, np.float32), "b": 3}, {"a": np.zeros(2, np.float32), "b": 4}],
    [Point(1, True), Point(2, False)],
    [["p", 1], ["q", 2]],
])
def test_default_collate_batches_as_pytorch(samples):
    assert _plain(ours.default_collate(samples)) == _plain(theirs.default_collate(samples))


@pytest.mark.parametrize("sample", [
    {"a": np.ones(2), "b": (np.float64(3), "x")},
    [np.arange(3), 7, "s"],
    Point(np.int64(2), np.zeros((1, 2), np.float32)),
    np.array(["a", "b"]),
])
def test_default_convert_makes_tensors_of_arrays_only(sample):
    mine, reference = ours.default_convert(sample), theirs.default_convert(sample)
    if isinstance(reference, np.ndarray):
        assert isinstance(mine, np.ndarray) and mine.tolist() == reference.tolist()
    else:
        assert _plain(mine) == _plain(reference)


def test_default_convert_shares_the_arrays_memory():
    array = np.zeros(3)
    ours.default_convert(array)[1] = 5.0
    assert array[1] == 5.0


def test_no_worker_info_in_the_loading_process():
    assert ours.get_worker_info() is None and theirs.get_worker_info() is None
