"""`tg.save` / `tg.load`: state dicts through `.npz` files, without pickle."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import nn


def make_model():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_a_model_survives_a_round_trip_through_a_file(tmp_path):
    source, target = make_model(), make_model()
    path = tmp_path / "model.pt"  # any name: the file is written exactly there
    tg.save(source.state_dict(), path)
    assert path.exists() and not (tmp_path / "model.pt.npz").exists()
    state = tg.load(path)
    assert list(state) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert state["0.weight"].dtype == tg.float32
    assert all(isinstance(t, tg.Tensor) and not t.requires_grad for t in state.values())
    target.load_state_dict(state)
    x = tg.randn(5, 3)
    np.testing.assert_array_equal(target(x).data, source(x).data)


def test_the_file_is_a_plain_npz_with_no_pickle(tmp_path):
    path = str(tmp_path / "weights.npz")
    tg.save({"w": tg.ones(2, 3), "step": 7, "mask": np.array([True, False]),
             "x64": tg.zeros(2, dtype=tg.float64)}, path)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["w.npy", "step.npy", "mask.npy", "x64.npy"]
    assert [t.dtype for t in tg.load(path).values()] == [tg.float32, tg.int64, tg.bool_, tg.float64]
    with np.load(path, allow_pickle=False) as arrays:
        np.testing.assert_array_equal(arrays["w"], np.ones((2, 3), np.float32))
        assert arrays["step"] == 7


def test_file_objects_work_too():
    buffer = io.BytesIO()
    tg.save({"b": tg.tensor([1.0, 2.0])}, buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(tg.load(buffer)["b"].data, [1.0, 2.0])


@pytest.mark.parametrize(("obj", "message"), [
    ([tg.ones(2)], "state dict"),
    ({1: tg.ones(2)}, "keys must be strings"),
    ({"f": lambda x: x}, "not numeric"),
    ({"s": "text"}, "not numeric"),
])
def test_what_is_not_a_state_dict_is_refused(obj, message):
    with pytest.raises(TypeError, match=message):
        tg.save(obj, io.BytesIO())
