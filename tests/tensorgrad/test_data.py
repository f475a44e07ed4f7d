"""`tensorgrad.data`: the toy data sets, the shipped digits, and the DataLoader (on a GPU too)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import placed_on

import tensorgrad as tg
from tensorgrad.data import (
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    load_digits,
    make_moons,
    make_spirals,
    random_split,
)
from tensorgrad.device import to_numpy


def test_make_moons_is_two_half_circles_seeded():
    x, y = make_moons(100, seed=0)
    assert x.shape == (100, 2) and x.dtype == tg.float32 and y.dtype == tg.int64
    assert np.bincount(y.data).tolist() == [50, 50]
    upper, lower = x.data[y.data == 0], x.data[y.data == 1]
    np.testing.assert_allclose(np.hypot(*upper.T), 1, rtol=1e-6)  # unit circle around (0, 0)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1, rtol=1e-6)  # around (1, .5)
    assert (upper[:, 1] >= 0).all() and (lower[:, 1] <= 0.5).all()
    again, _ = make_moons(100, seed=0)
    np.testing.assert_array_equal(again.data, x.data)
    noisy, _ = make_moons(100, noise=0.1, seed=1)
    assert not np.allclose(np.hypot(*noisy.data[:5].T), 1)
    assert np.bincount(make_moons(7)[1].data).tolist() == [3, 4]


def test_make_spirals_splits_classes_evenly_and_winds_outwards():
    x, y = make_spirals(302, n_classes=4, noise=0.0, seed=0)
    assert x.shape == (302, 2) and np.bincount(y.data).tolist() == [76, 76, 75, 75]
    radius = np.hypot(*x.data.T)
    assert radius.max() <= 1 + 1e-6 and radius.min() == 0
    with pytest.raises(ValueError, match="n_classes"):
        make_spirals(10, n_classes=0)


def test_load_digits_is_the_real_data_set_offline():
    x, y = load_digits()
    assert x.shape == (1797, 64) and x.dtype == tg.float32
    assert y.shape == (1797,) and y.dtype == tg.int64
    assert np.bincount(y.data).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert x.data.min() == 0 and x.data.max() == 1
    np.testing.assert_array_equal(x.data * 16, np.round(x.data * 16))  # 17 levels of ink
    images, _ = load_digits(images=True)
    assert images.shape == (1797, 8, 8)
    np.testing.assert_array_equal(images.data.reshape(1797, 64), x.data)
    # A "0" has ink around a hollow centre: its mean image is darker at the ring than the middle.
    zeros = images.data[y.data == 0].mean(axis=0)
    assert zeros[1:7, 2].mean() > 2 * zeros[3:5, 3:5].mean()


def test_dataloader_batches_every_row_once_per_epoch():
    x = tg.arange(10.0).reshape(10, 1)
    y = tg.arange(10)
    loader = DataLoader((x, y), batch_size=4, shuffle=True, seed=0)
    assert len(loader) == 3
    epochs = []
    for _ in range(2):
        batches = list(loader)
        assert [len(xb) for xb, _ in batches] == [4, 4, 2]
        for xb, yb in batches:
            np.testing.assert_array_equal(xb.data[:, 0], yb.data)  # rows stay paired
        epochs.append(np.concatenate([yb.data for _, yb in batches]))
    assert sorted(epochs[0]) == list(range(10)) and sorted(epochs[1]) == list(range(10))
    assert epochs[0].tolist() != epochs[1].tolist()  # reshuffled each epoch
    again = np.concatenate([yb.data for _, yb in DataLoader((x, y), batch_size=4, shuffle=True, seed=0)])
    np.testing.assert_array_equal(again, epochs[0])  # the seed fixes the sequence


def test_dataloader_options_and_data_set_kinds():
    x = tg.arange(10.0)
    in_order = list(DataLoader(x, batch_size=3))
    assert [b.tolist() for b in in_order] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert len(DataLoader(x, batch_size=3, drop_last=True)) == 3
    assert [len(b) for b in DataLoader(x, batch_size=3, drop_last=True)] == [3, 3, 3]

    class Squares:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.array([i, i]), i * i

    xb, yb = next(iter(DataLoader(Squares(), batch_size=5)))
    assert xb.shape == (5, 2) and yb.tolist() == [0, 1, 4, 9, 16]
    tg.manual_seed(4)
    first = [b.tolist() for b in DataLoader(x, batch_size=10, shuffle=True)]
    tg.manual_seed(4)
    assert [b.tolist() for b in DataLoader(x, batch_size=10, shuffle=True)] == first  # tg's generator


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: DataLoader(tg.ones(3), batch_size=0), ValueError, "batch_size"),
    (lambda: DataLoader(tg.ones(3), batch_size=2.5), ValueError, "positive integer value.*batch_size=2.5"),
    (lambda: DataLoader(tg.ones(3), batch_size=True), ValueError, "batch_size=True"),
    (lambda: DataLoader(tg.ones(3), batch_size="4"), ValueError, "batch_size='4'"),
    (lambda: DataLoader(tg.ones(3), drop_last="yes"), ValueError, "drop_last should be a boolean value"),
    (lambda: DataLoader(tg.ones(3), batch_size=None, drop_last=True), ValueError, "drop_last"),
    (lambda: DataLoader(tg.ones(3), seed=0, generator=np.random.default_rng(0)), ValueError, "not both"),
    (lambda: DataLoader(tg.ones(3), generator=7), TypeError, "generator must be a tg.Generator, got int"),
    (lambda: DataLoader((tg.ones(3), tg.ones(4))), ValueError, r"same first dimension, got \(3,\), \(4,\)"),
    (lambda: DataLoader(42), TypeError, "got int"),
])
def test_dataloader_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_load_names_is_makemores_data_set_shipped():
    names = tg.data.load_names()
    assert isinstance(names, list) and len(names) == 32033
    assert all(type(name) is str for name in names)
    assert names[:3] == ["emma", "olivia", "ava"] and names[-1] == "zzyzx"
    assert len(set(names)) == 29494  # a few names repeat, as in the file
    assert "".join(sorted(set("".join(names)))) == "abcdefghijklmnopqrstuvwxyz"
    assert min(map(len, names)) == 2 and max(map(len, names)) == 15


def test_batch_size_errors_are_pytorchs():
    torch = pytest.importorskip("torch")
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            torch.utils.data.DataLoader(torch.ones(3), batch_size=bad)
        with pytest.raises(ValueError):
            DataLoader(tg.ones(3), batch_size=bad)


def test_tensor_dataset_rows_and_size_check():
    x, y = tg.arange(12.0).reshape(6, 2), tg.arange(6)
    data = TensorDataset(x, y)
    assert len(data) == 6 and isinstance(data, Dataset)
    xi, yi = data[4]
    assert xi.tolist() == [8.0, 9.0] and yi.item() == 4
    xs, ys = data[1:3]
    assert xs.shape == (2, 2) and ys.tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"size mismatch.*\(6, 2\), \(5,\)"):
        TensorDataset(x, tg.arange(5))
    with pytest.raises(AssertionError):  # PyTorch's type for it, too
        TensorDataset(x, tg.arange(5))
    with pytest.raises(TypeError, match="argument 1 must be a Tensor, got list"):
        TensorDataset(x, [1, 2, 3, 4, 5, 6])
    with pytest.raises(IndexError, match="no tensors"):  # PyTorch builds it; len() is the IndexError
        len(TensorDataset())


def test_dataset_base_says_what_to_define():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    with pytest.raises(TypeError, match="has no len"):  # as PyTorch's: no __len__, so list() works on streams
        len(Dataset())


def test_random_split_counts_are_disjoint_and_cover_the_data_set():
    data = TensorDataset(tg.arange(10))
    tg.manual_seed(0)
    parts = random_split(data, [3, 7])
    assert [len(p) for p in parts] == [3, 7] and all(isinstance(p, Subset) for p in parts)
    seen = sorted(int(p[i][0].item()) for p in parts for i in range(len(p)))
    assert seen == list(range(10))
    tg.manual_seed(0)
    again = random_split(data, [3, 7])
    assert again[0].indices == parts[0].indices  # seeded by tg.manual_seed
    tg.manual_seed(1)
    assert random_split(data, [3, 7])[0].indices != parts[0].indices
    fixed = random_split(data, [5, 5], generator=tg.Generator().manual_seed(3))
    assert fixed[1].indices == random_split(data, [5, 5], generator=tg.Generator().manual_seed(3))[1].indices
    tg.manual_seed(3)
    assert random_split(data, [5, 5])[1].indices == fixed[1].indices  # the same stream as tg.manual_seed's
    numpy_fixed = random_split(data, [5, 5], generator=np.random.default_rng(3))
    assert numpy_fixed[0].indices == random_split(data, [5, 5], generator=np.random.default_rng(3))[0].indices
    with pytest.raises(TypeError, match="generator"):
        random_split(data, [5, 5], generator=3)


FRACTIONS = [(10, [0.3, 0.3, 0.4]), (32033, [0.8, 0.1, 0.1]), (7, [0.5, 0.5]), (11, [0.25, 0.25, 0.25, 0.25]),
             (5, [0.1, 0.9]), (3, [0, 1])]


@pytest.mark.filterwarnings("ignore:.*is 0")  # the last case has an empty part: both libraries warn
@pytest.mark.parametrize(("n", "fractions"), FRACTIONS)
def test_random_split_fractions_give_pytorchs_lengths(n, fractions):
    torch = pytest.importorskip("torch")
    theirs = [len(s) for s in torch.utils.data.random_split(range(n), fractions)]
    ours = [len(s) for s in random_split(range(n), fractions)]
    assert ours == theirs
    if n == 32033:
        assert ours == [25627, 3203, 3203]


def test_random_split_of_the_names_dataset_8_1_1():
    names = tg.data.load_names()
    tg.manual_seed(42)
    train, dev, test = random_split(names, [0.8, 0.1, 0.1])
    assert (len(train), len(dev), len(test)) == (25627, 3203, 3203)
    assert isinstance(train[0], str)
    assert not set(train.indices) & set(dev.indices)


@pytest.mark.parametrize(("lengths", "error", "message"), [
    ([3, 3], ValueError, "sum to 6, but the dataset has 10"),
    ([0.5, 0.6], ValueError, "neither counts nor fractions"),
    ([1.2, -0.2], ValueError, "fraction at index 0 is not between 0 and 1"),
    ([12, -2], ValueError, "must not be negative"),
    (["5", 5], TypeError, "got str at index 0"),
])
def test_random_split_errors(lengths, error, message):
    with pytest.raises(error, match=message):
        random_split(range(10), lengths)


def test_random_split_warns_of_an_empty_part():
    with pytest.warns(UserWarning, match="index 2 is 0"):
        random_split(range(3), [0.5, 0.5, 0.0])


def test_dataloader_takes_datasets_and_subsets():
    x, y = tg.arange(20.0).reshape(10, 2), tg.arange(10)
    data = TensorDataset(x, y)
    batches = list(DataLoader(data, batch_size=4))
    assert [tuple(xb.shape) for xb, _ in batches] == [(4, 2), (4, 2), (2, 2)]
    assert batches[2][1].tolist() == [8, 9] and batches[2][0].dtype == tg.float32
    subset = Subset(data, [9, 0, 5])
    (xb, yb), = list(DataLoader(subset, batch_size=3))
    assert yb.tolist() == [9, 0, 5] and xb[0].tolist() == [18.0, 19.0]
    assert Subset(data, [9, 0, 5])[[0, 2]][1].tolist() == [9, 5]
    shuffled = [yb.tolist() for _, yb in DataLoader(data, batch_size=3, shuffle=True, seed=1)]
    g = tg.Generator().manual_seed(5)
    first = [yb.tolist() for _, yb in DataLoader(data, batch_size=10, shuffle=True, generator=g)]
    again = [yb.tolist() for _, yb in DataLoader(data, batch_size=10, shuffle=True,
                                                  generator=tg.Generator().manual_seed(5))]
    assert first == again
    assert sorted(sum(shuffled, [])) == list(range(10)) and sum(shuffled, []) != list(range(10))
    one_by_one = list(DataLoader(data, batch_size=None))
    assert len(one_by_one) == 10 and one_by_one[3][1].item() == 3 and one_by_one[3][0].shape == (2,)


def test_dataloader_collates_like_pytorch():
    class Records(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return {"x": np.full(2, i, np.float32), "label": i, "name": f"n{i}"}, [i * 0.5, i]

    record, pair = next(iter(DataLoader(Records(), batch_size=4)))
    assert record["x"].shape == (4, 2) and record["x"].dtype == tg.float32
    assert record["label"].tolist() == [0, 1, 2, 3] and record["label"].dtype == tg.int64
    assert record["name"] == ["n0", "n1", "n2", "n3"]
    assert isinstance(pair, list) and pair[0].dtype == tg.float64 and pair[1].tolist() == [0, 1, 2, 3]

    class Ragged(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.zeros(i + 1)

    with pytest.raises(RuntimeError, match=r"equal shapes.*\(1,\), \(2,\)"):
        next(iter(DataLoader(Ragged(), batch_size=2)))


def test_dataloader_collate_fn_gets_the_list_of_samples():
    names = ["ab", "c", "def", "gh"]
    lengths = DataLoader(names, batch_size=3, collate_fn=lambda batch: [len(n) for n in batch])
    assert list(lengths) == [[2, 1, 3], [2]]
    pairs = DataLoader(TensorDataset(tg.arange(4), tg.arange(4) * 10), batch_size=2,
                       collate_fn=lambda batch: [(int(a), int(b)) for a, b in batch])
    assert list(pairs) == [[(0, 0), (1, 10)], [(2, 20), (3, 30)]]
    assert [b.tolist() for b in DataLoader(tg.arange(3), batch_size=2, collate_fn=tg.stack)] == [[0, 1], [2]]
    with pytest.raises(TypeError, match="collate_fn must be callable"):
        DataLoader(names, collate_fn=3)


def test_dataloader_batches_live_where_the_data_set_lives(device):
    x, y = tg.arange(20.0).reshape(10, 2), tg.arange(10)
    on_cpu = list(DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True, seed=0))
    placed = TensorDataset(x.to(device), y.to(device))
    for loader in (DataLoader(placed, batch_size=4, shuffle=True, seed=0),
                   DataLoader((x.to(device), y.to(device)), batch_size=4, shuffle=True, seed=0)):
        batches = list(loader)  # the same shuffle, drawn on the host, on either device
        assert len(batches) == len(on_cpu) == 3
        for (xb, yb), (xc, yc) in zip(batches, on_cpu, strict=True):
            assert xb.device == yb.device == placed_on(device)
            np.testing.assert_array_equal(to_numpy(xb.data), xc.data)
            np.testing.assert_array_equal(to_numpy(yb.data), yc.data)
    xb, yb = on_cpu[0]
    assert xb.to(device).device == placed_on(device)  # a CPU batch goes over as the user moves it
    samples = list(DataLoader(placed, batch_size=None))  # unbatched: one row at a time
    assert samples[3][0].device == placed_on(device) and samples[3][1].item() == 3
