"""The moons (tensor) and spirals demos: short runs that learn, agree with the scalar demo, and
write their pictures into the current folder by default."""

import numpy as np
import pytest

import tensorgrad as tg

PNG = b"\x89PNG\r\n\x1a\n"


def test_moons_tensor_follows_the_scalar_demo_and_is_faster(tmp_path, monkeypatch, capsys, load_example):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    monkeypatch.chdir(tmp_path)  # the picture goes to the current folder by default
    moons = load_example("moons_tensor")
    summary = moons.main(["--steps", "4", "--compare-scalar"])
    # Same weights, data, loss and schedule: the tensor run is the scalar run, to rounding.
    assert summary["loss_gap"] < 1e-12
    assert summary["speedup"] > 3  # one graph of a few dozen tensors against ~40,000 Values
    assert (tmp_path / "moons_tensor.png").read_bytes()[:8] == PNG
    out = capsys.readouterr().out
    assert "tensorgrad: final loss" in out and "faster" in out


def test_moons_tensor_model_is_the_scalar_mlp(load_example):
    moons = load_example("moons_tensor")
    from scalargrad.nn import MLP

    model, scalar = moons.make_model(3), MLP(2, [16, 16, 1], seed=3)
    point = [0.3, -1.2]
    with tg.no_grad():
        ours = model(tg.tensor([point], dtype=tg.float64)).item()
    assert ours == pytest.approx(scalar(point).data, rel=1e-12)
    assert sum(p.numel() for p in model.parameters()) == len(scalar.parameters()) == 337


def test_moons_tensor_full_run_separates_the_moons(tmp_path, load_example):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    summary = load_example("moons_tensor").main(["--output", str(tmp_path / "m.png")])
    assert summary["accuracy"] == 1.0 and summary["loss"] < 0.05


def test_spirals_learns_the_held_out_points(tmp_path, monkeypatch, capsys, load_example):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    monkeypatch.chdir(tmp_path)
    spirals = load_example("spirals")
    accuracy = spirals.main(["--epochs", "25"])
    assert accuracy > 0.9  # a linear model gets about a third of three interleaved arms
    assert (tmp_path / "spirals.png").read_bytes()[:8] == PNG
    assert "test accuracy" in capsys.readouterr().out


def test_spirals_split_is_fixed_and_disjoint(load_example):
    spirals = load_example("spirals")
    train, test = spirals.split_spirals(0)
    assert (len(train), len(test)) == (480, 120)
    assert not set(train.indices) & set(test.indices)
    assert spirals.split_spirals(0)[1].indices == test.indices
    x, y = spirals.tensors_of(test)
    assert x.shape == (120, 2) and np.bincount(y.numpy(), minlength=3).min() > 20
