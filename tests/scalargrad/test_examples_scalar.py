"""The scalar examples run and print what they promise (tutorial chapters 2 and 3)."""

import pytest


def test_expression_prints_micrograds_figures(capsys, load_example):
    load_example("expression").main()
    assert capsys.readouterr().out.splitlines() == ["g = 24.7041", "a.grad = 138.8338", "b.grad = 645.5773"]


def test_make_moons_shape_labels_and_seed(load_example):
    moons = load_example("moons_scalar")
    X, y = moons.make_moons(100, noise=0.1, seed=0)
    assert X.shape == (100, 2)
    assert sorted(set(y.tolist())) == [-1.0, 1.0]
    assert (y == 1).sum() == 50
    X2, _ = moons.make_moons(100, noise=0.1, seed=0)
    X3, _ = moons.make_moons(100, noise=0.1, seed=1)
    assert (X == X2).all()
    assert not (X == X3).all()


@pytest.mark.slow
def test_moons_reaches_full_accuracy_and_writes_the_picture(tmp_path, capsys, load_example):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    output = tmp_path / "moons.png"
    # With the default seed the demo passes 100% training accuracy by step 30 of 100.
    accuracy = load_example("moons_scalar").main(["--steps", "40", "--output", str(output)])
    assert accuracy == 1.0
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "accuracy 100%" in capsys.readouterr().out


@pytest.mark.slow
def test_scalar_benchmark_smoke_run(run_benchmark):
    printed = run_benchmark("scalar", "--quick")
    assert "| scalargrad, example loss " in printed
    assert "| scalargrad, micrograd's demo loss " in printed
    assert "losses equal" in printed  # the variants were checked to train alike
    assert "bytes per node" in printed
