"""The scalar examples run and print what they promise (tutorial chapters 1 and 5)."""

import pytest


def test_expression_prints_micrograds_figures(capsys, load_example):
    load_example("expression").main([])
    assert capsys.readouterr().out.splitlines() == ["g = 24.7041", "a.grad = 138.8338", "b.grad = 645.5773"]


def test_expression_help_and_another_point(capsys, load_example):
    expression = load_example("expression")
    with pytest.raises(SystemExit) as done:
        expression.main(["--help"])
    assert done.value.code == 0
    assert "--a" in capsys.readouterr().out
    g = expression.main(["--a", "1", "--b", "1"])
    assert capsys.readouterr().out.splitlines() == ["g = 242.0207", "a.grad = 285.9756", "b.grad = 1055.9098"]
    assert g.data == pytest.approx(242.0207, abs=1e-4)


def test_expression_where_it_has_no_value_is_a_usage_error(capsys, load_example):
    with pytest.raises(SystemExit) as done:
        load_example("expression").main(["--a", "-0.75", "--b", "0"])  # e = 0; g holds 10 / e**2
    assert done.value.code == 2
    assert "no value at a=-0.75, b=0.0: Value division by zero: 10.0 / 0.0" in capsys.readouterr().err


def test_moons_learning_rate_follows_steps(load_example):
    rate = load_example("moons_scalar").learning_rate
    for steps in (1, 40, 100, 300, 1000):
        rates = [rate(k, steps) for k in range(steps)]
        assert rates[0] == 1.0
        assert all(r >= 0.1 for r in rates)  # never zero or negative: no gradient ascent
        assert all(a > b for a, b in zip(rates, rates[1:]))
    assert rate(99, 100) == pytest.approx(1.0 - 0.9 * 99 / 100)  # micrograd's own 100 steps


def test_moons_steps_must_be_positive(load_example):
    with pytest.raises(SystemExit):
        load_example("moons_scalar").main(["--steps", "0"])


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
    # With the default seed a 50-step run (its learning rate falling to 0.1 by the end) ends at 100%.
    accuracy = load_example("moons_scalar").main(["--steps", "50", "--output", str(output)])
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
