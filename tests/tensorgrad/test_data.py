"""`tensorgrad.data`: the toy data sets, the shipped digits, and the DataLoader."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.data import DataLoader, load_digits, make_moons, make_spirals


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
