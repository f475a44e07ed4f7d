"""The tensor example trains, reaches the accuracy it promises, and saves what it says."""

import numpy as np
import pytest

import tensorgrad as tg


@pytest.mark.slow
def test_digits_learns_held_out_digits_and_saves_its_weights(tmp_path, capsys, load_example):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    digits = load_example("digits_tensor")
    output, weights = tmp_path / "digits.png", tmp_path / "weights.npz"
    accuracy = digits.main(["--epochs", "15", "--output", str(output), "--weights", str(weights)])
    assert accuracy > 0.95  # 360 digits the model never trained on
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "test accuracy" in capsys.readouterr().out
    # The saved weights rebuild the same model: same held-out accuracy.
    model = digits.make_model()
    model.load_state_dict(tg.load(weights))
    _, (x_test, y_test) = digits.split_digits(0)
    assert digits.accuracy(model, x_test, y_test) == accuracy


def test_the_split_keeps_test_digits_out_of_training(load_example):
    digits = load_example("digits_tensor")
    (x_train, y_train), (x_test, y_test) = digits.split_digits(0)
    assert len(y_train) + len(y_test) == 1797 and len(y_test) == digits.N_TEST
    train_rows = {row.tobytes() for row in x_train.numpy()}
    overlap = sum(row.tobytes() in train_rows for row in x_test.numpy())
    assert overlap == 0
    assert np.bincount(y_test.numpy(), minlength=10).min() > 20  # every digit is tested
