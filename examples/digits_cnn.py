"""A small convolutional network learns the shipped 8 x 8 handwritten digits.

The same 1,797 digits and the same 360 held-out test digits as `digits_tensor.py` (its seeded
split), but the model sees each digit as an image: two 3 x 3 convolutions with ReLU and 2 x 2
max pooling, then a linear layer on the flattened feature maps. Training shifts each training
digit by up to one pixel at random (the convolutions don't mind where a stroke is; the data
should not either). Writes a picture of the first layer's learned filters and of the test
digits the model gets wrong. `--device cuda` trains on a GPU (with CuPy): the model lives there,
each shifted batch is copied over, and only the numbers printed and drawn come back.

    python examples/digits_cnn.py --epochs 25 --seed 0 --output digits_cnn.png
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn, optim

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the MLP demo is a script beside this one
import digits_tensor  # noqa: E402
from digits_tensor import N_TEST  # noqa: E402


def split_digits(seed: int) -> tuple[tuple[tg.Tensor, tg.Tensor], tuple[tg.Tensor, tg.Tensor]]:
    """digits_tensor.py's split (the same seeded shuffle), the pixels as (N, 1, 8, 8) images:
    (train images, labels) and (test images, labels)."""
    (x_train, y_train), (x_test, y_test) = digits_tensor.split_digits(seed)
    return (x_train.reshape(-1, 1, 8, 8), y_train), (x_test.reshape(-1, 1, 8, 8), y_test)


def make_model() -> nn.Module:
    """(1, 8, 8) -> 32 maps of 4 x 4 -> 64 maps of 2 x 2 -> 10 class scores."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 2 * 2, 10),
    )


def shift(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each image moved by -1, 0 or 1 pixel in each direction, filling with blank (zero) pixels."""
    n = len(images)
    padded = np.pad(images, ((0, 0), (0, 0), (1, 1), (1, 1)))
    dy, dx = rng.integers(0, 3, n), rng.integers(0, 3, n)
    rows = dy[:, None] + np.arange(8)  # (n, 8): the rows of the padded image each keeps
    cols = dx[:, None] + np.arange(8)
    return padded[np.arange(n)[:, None, None], 0, rows[:, :, None], cols[:, None, :]][:, None]


@tg.no_grad()
def predict(model: nn.Module, x: tg.Tensor) -> np.ndarray:
    """The class with the highest score for each image, in eval mode (a numpy array, on the host)."""
    model.eval()
    guesses = model(x.to(next(model.parameters()).device)).argmax(dim=1).cpu().numpy()
    model.train()
    return guesses


def accuracy(model: nn.Module, x: tg.Tensor, y: tg.Tensor) -> float:
    """The fraction of `x` the model labels right."""
    return float((predict(model, x) == y.numpy()).mean())


def train(epochs: int, seed: int, batch_size: int = 32, progress: bool = True,
          device: str = "cpu") -> tuple[nn.Module, float, float]:
    """Adam with a one-cycle learning rate (warm up, then anneal) on shifted mini-batches, on `device`.

    Returns the model, the seconds spent training and the last epoch's mean loss.
    """
    tg.manual_seed(seed)
    rng = np.random.default_rng(seed)
    (x_train, y_train), (x_test, y_test) = split_digits(seed)
    images, labels = x_train.numpy(), y_train.numpy()  # shifted on the host, batch by batch moved
    model = make_model().to(device)  # made on the CPU (the same weights for a seed), then moved
    steps_per_epoch = -(-len(labels) // batch_size)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    schedule = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, total_steps=epochs * steps_per_epoch)
    epochs_bar = range(epochs)
    if progress:
        from tqdm import tqdm

        epochs_bar = tqdm(epochs_bar, desc="training", unit="epoch")
    seconds, loss_sum = 0.0, 0.0
    for _ in epochs_bar:
        start = time.perf_counter()
        order, shifted, loss_sum = rng.permutation(len(labels)), shift(images, rng), 0.0
        for first in range(0, len(labels), batch_size):
            batch = order[first:first + batch_size]
            xb, yb = tg.from_numpy(shifted[batch]).to(device), tg.from_numpy(labels[batch]).to(device)
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            loss_sum += loss.item() * len(batch)
        seconds += time.perf_counter() - start
        if progress:
            epochs_bar.set_postfix(loss=f"{loss_sum / len(labels):.3f}",
                                   test=f"{accuracy(model, x_test, y_test):.1%}")
    return model, seconds, loss_sum / len(labels)


def plot(model: nn.Module, seed: int, path: str, max_mistakes: int = 16) -> int:
    """Write the first layer's filters and the misclassified test digits; returns how many there are."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed: the picture goes to a file
    import matplotlib.pyplot as plt

    _, (x_test, y_test) = split_digits(seed)
    guesses = predict(model, x_test)
    wrong = np.flatnonzero(guesses != y_test.numpy())
    filters = model[0].weight.detach().cpu().numpy()[:, 0]  # (32, 3, 3)
    columns = 16
    rows_of_mistakes = max(1, -(-min(len(wrong), max_mistakes) // columns))
    rows = 2 + rows_of_mistakes
    fig, axes = plt.subplots(rows, columns, figsize=(columns * 0.8, rows * 0.95))
    for ax in axes.flat:
        ax.axis("off")
    for ax, kernel in zip(axes[:2].flat, filters, strict=False):
        limit = np.abs(kernel).max()
        ax.imshow(kernel, cmap="RdBu_r", vmin=-limit, vmax=limit)
    for ax, i in zip(axes[2:].flat, wrong[:max_mistakes], strict=False):
        ax.imshow(x_test.numpy()[i, 0], cmap="gray_r", vmin=0, vmax=1)
        ax.set_title(f"{guesses[i]} ({y_test.numpy()[i]})", color="red", fontsize=9)
    shown = f"the {len(wrong)}" if len(wrong) <= max_mistakes else f"{max_mistakes} of the {len(wrong)}"
    fig.suptitle(f"Top: the 32 learned 3 x 3 filters of the first layer.  Below: {shown} misclassified "
                 f"test digits of {len(guesses)}, as guess (truth)", fontsize=10)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return len(wrong)


def main(argv: Sequence[str] | None = None) -> float:
    """Train, print the test accuracy and the training time, write the picture; returns the accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=25, help="passes over the training set (default 25)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the split, weights, shifts and batches")
    parser.add_argument("--batch-size", type=int, default=32, help="digits per step (default 32)")
    parser.add_argument("--output", default="digits_cnn.png", help="picture of filters and mistakes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda (a GPU, with CuPy)")
    args = parser.parse_args(argv)

    model, seconds, loss = train(args.epochs, args.seed, args.batch_size, progress=not args.no_progress,
                                 device=args.device)
    print(model)
    _, (x_test, y_test) = split_digits(args.seed)
    test_accuracy = accuracy(model, x_test, y_test)
    mistakes = plot(model, args.seed, args.output)
    print(f"digits_cnn: test accuracy {test_accuracy:.1%} ({N_TEST - mistakes}/{N_TEST} held-out digits) "
          f"after {args.epochs} epoch{'s' * (args.epochs != 1)} in {seconds:.1f} s of training; "
          f"final loss {loss:.4f}; "
          f"wrote {args.output}")
    return test_accuracy


if __name__ == "__main__":
    main()
