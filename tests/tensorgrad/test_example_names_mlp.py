"""The makemore MLP example: its data, a short training run, and its PyTorch twin step for step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from example_checks import check_a_names_run

import tensorgrad as tg


def test_the_dataset_is_every_context_and_next_character(load_example):
    names_mlp = load_example("names_mlp")
    x, y = names_mlp.build_dataset(["emma"], context=3)
    as_text = ["".join(names_mlp.CHARACTERS[i] for i in row) for row in x.tolist()]
    assert as_text == ["...", "..e", ".em", "emm", "mma"]
    assert "".join(names_mlp.CHARACTERS[i] for i in y.tolist()) == "emma."
    train, dev, test = names_mlp.split_names()
    assert (len(train), len(dev), len(test)) == (25626, 3203, 3204)  # makemore's 80/10/10
    assert sorted(train + dev + test) == sorted(names_mlp.load_names())
    assert names_mlp.split_names()[1] == dev  # the split is fixed


@pytest.mark.slow
def test_a_short_run_learns_and_makes_up_names(load_example, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    names_mlp = load_example("names_mlp")
    output = tmp_path / "loss.png"
    result = names_mlp.main(["--steps", "400", "--samples", "5", "--no-progress", "--output", str(output)])
    assert result["dev"] < 2.75 < math.log(27)  # from log(27) = 3.30 towards the full run's 2.2
    assert abs(result["train"] - result["dev"]) < 0.1
    check_a_names_run(capsys.readouterr().out, output, steps=400, samples=5)


@pytest.mark.slow
@pytest.mark.parametrize("batchnorm", [False, True], ids=["tanh", "batchnorm"])
def test_pytorch_from_the_same_weights_on_the_same_batches_gives_the_same_losses(load_example, batchnorm):
    pytest.importorskip("torch")
    names_mlp = load_example("names_mlp")
    tg.manual_seed(1)
    train_names, dev_names, _ = names_mlp.split_names()
    x, y = names_mlp.build_dataset(train_names[:2000], 3)
    model = names_mlp.make_model(3, 10, 64, batchnorm)
    start = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    batches = names_mlp.batch_indices(60, 32, len(y))
    twin_start = names_mlp.make_model(3, 10, 64, batchnorm)
    twin_start.load_state_dict(start)
    twin, torch_losses, _ = names_mlp.train_torch(twin_start, x, y, batches, 0.1, batchnorm, progress=False)
    losses, _ = names_mlp.train(model, x, y, batches, 0.1, progress=False)
    np.testing.assert_allclose(losses, torch_losses, rtol=2e-4)
    assert names_mlp.evaluate(model, x, y) == pytest.approx(names_mlp.evaluate_torch(twin, x, y), rel=1e-4)
