"""The tiny-GPT example: its sequences, a short training run, and its PyTorch twin step for step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from example_checks import check_a_names_run

import tensorgrad as tg


def test_a_name_is_read_from_its_start_and_every_next_character_is_a_target(load_example):
    names_gpt = load_example("names_gpt")
    x, y = names_gpt.encode(["emma", "bo"], context=7)
    assert x.tolist() == [[0, 5, 13, 13, 1, 0, 0], [0, 2, 15, 0, 0, 0, 0]]
    assert y.tolist() == [[5, 13, 13, 1, 0, -1, -1], [2, 15, 0, -1, -1, -1, -1]]  # -1: not scored


def test_a_later_character_never_changes_an_earlier_prediction(load_example):
    names_gpt = load_example("names_gpt")
    args = names_gpt.parse_args(["--width", "16", "--heads", "2", "--layers", "1"])
    tg.manual_seed(0)
    model = names_gpt.make_model(args, context=8).double()  # (float32 rounds rows of a batch apart)
    x, _ = names_gpt.encode(["anna", "anne"], context=8)  # the same up to the 4th character
    with tg.no_grad():
        logits = model(x)
    np.testing.assert_allclose(logits[0, :4].numpy(), logits[1, :4].numpy(), rtol=1e-10)
    assert not np.allclose(logits[0, 4].numpy(), logits[1, 4].numpy())


@pytest.mark.slow
def test_a_short_run_learns_and_makes_up_names(load_example, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    names_gpt = load_example("names_gpt")
    output = tmp_path / "loss.png"
    result = names_gpt.main(["--steps", "150", "--width", "32", "--samples", "5", "--no-progress",
                             "--output", str(output)])
    assert result["dev"] < 2.6 < math.log(27)
    check_a_names_run(capsys.readouterr().out, output, steps=150, samples=5)


def side_by_side(load_example, steps: int, amp: bool = False):
    """A small GPT and PyTorch's twin from the same weights, trained `steps` steps on the same
    batches of 500 names: the module, (x, y), both models and each step's two losses."""
    torch = pytest.importorskip("torch")
    names_gpt = load_example("names_gpt")
    args = names_gpt.parse_args(["--width", "32", "--heads", "4", "--layers", "2"] + ["--amp"] * amp)
    tg.manual_seed(1)
    train_names, _, _ = names_gpt.split_names()
    x, y = names_gpt.encode(train_names[:500], 16)
    model = names_gpt.make_model(args, 16)
    twin = names_gpt.torch_twin(model, args, 16)
    batches = names_gpt.batch_indices(steps, 32, len(x))
    ours = names_gpt.adamw_stepper(tg, model, x, y, 5e-3, steps, amp=args.amp)
    theirs = names_gpt.adamw_stepper(torch, twin, torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy()),
                                     5e-3, steps, amp=args.amp)
    losses = [(ours(n, rows), theirs(n, rows)) for n, rows in enumerate(batches)]
    return names_gpt, (x, y), (model, twin), losses


@pytest.mark.slow
def test_pytorch_from_the_same_definition_and_weights_gives_the_same_losses(load_example):
    names_gpt, (x, y), (model, twin), losses = side_by_side(load_example, steps=20)
    np.testing.assert_allclose(*zip(*losses, strict=True), rtol=1e-4)
    assert names_gpt.evaluate(model, x, y) == pytest.approx(names_gpt.evaluate_torch(twin, x, y), rel=1e-4)


def test_mixed_precision_training_gives_pytorchs_losses(load_example):
    """`--amp`: autocast to float16 and a GradScaler, in both libraries from the same weights: the
    losses agree to float16's precision, and the weights stay float32."""
    _, _, (model, _), losses = side_by_side(load_example, steps=10, amp=True)
    np.testing.assert_allclose(*zip(*losses, strict=True), rtol=5e-3)
    assert losses[-1][0] < losses[0][0]
    assert all(p.dtype == tg.float32 for p in model.parameters())
