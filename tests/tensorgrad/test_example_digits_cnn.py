"""The CNN example trains on the digits, keeps the MLP example's held-out split, and draws its picture."""

import numpy as np
import pytest


@pytest.mark.slow
def test_a_short_run_learns_and_writes_its_picture_and_summary(tmp_path, capsys, load_example):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    cnn = load_example("digits_cnn")
    picture = tmp_path / "cnn.png"
    accuracy = cnn.main(["--epochs", "2", "--output", str(picture)])
    assert accuracy > 0.85  # 360 digits it never trained on, after two passes
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.startswith("digits_cnn: test accuracy") and "held-out digits" in summary


def test_the_held_out_digits_are_the_mlp_examples(load_example):
    cnn, mlp = load_example("digits_cnn"), load_example("digits_tensor")
    (x_train, y_train), (x_test, y_test) = cnn.split_digits(0)
    (_, _), (mlp_x_test, mlp_y_test) = mlp.split_digits(0)
    assert x_test.shape == (360, 1, 8, 8) and x_train.shape == (1797 - 360, 1, 8, 8)
    np.testing.assert_array_equal(x_test.numpy().reshape(360, 64), mlp_x_test.numpy())
    np.testing.assert_array_equal(y_test.numpy(), mlp_y_test.numpy())


def test_shifting_moves_each_digit_by_at_most_one_pixel(load_example):
    cnn = load_example("digits_cnn")
    images = np.zeros((50, 1, 8, 8), dtype=np.float32)
    images[:, 0, 3:5, 3:5] = 1  # a 2 x 2 blob in the middle
    moved = cnn.shift(images, np.random.default_rng(0))
    assert moved.shape == images.shape and (moved.sum(axis=(1, 2, 3)) == 4).all()  # nothing falls off
    rows = np.argwhere(moved[:, 0].any(axis=2))[:, 1].reshape(50, 2)[:, 0]
    assert set(rows) == {2, 3, 4}  # the blob's top row, moved up, kept or moved down
