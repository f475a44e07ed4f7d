"""tensorgrad's PyTorch-style stack end to end: an MLP learns the shipped handwritten digits.

Tutorial chapter 9 walks through it: `tensorgrad.data.load_digits` (1,797 real 8 x 8 digits,
offline), a `DataLoader`, an `nn.Sequential` of `Linear`, `ReLU` and `Dropout`, `F.cross_entropy`,
`optim.Adam`, `model.eval()` for testing, and `tg.save` for the weights. It trains in a few
seconds and writes a picture of test digits with the model's guesses. `--device cuda` runs the
same code on a GPU (with CuPy): the data and the model move there once, and only the numbers
printed and drawn come back.

    python examples/digits_tensor.py --epochs 30 --seed 0 --output digits_tensor.png
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn, optim
from tensorgrad.data import DataLoader, load_digits

N_TEST = 360  # the last fifth of a seeded shuffle: never seen in training


def split_digits(seed: int) -> tuple[tuple[tg.Tensor, tg.Tensor], tuple[tg.Tensor, tg.Tensor]]:
    """The digits, shuffled with `seed`, as (train inputs, labels) and (test inputs, labels)."""
    x, y = load_digits()
    order = tg.tensor(np.random.default_rng(seed).permutation(len(y)))
    x, y = x[order], y[order]
    return (x[:-N_TEST], y[:-N_TEST]), (x[-N_TEST:], y[-N_TEST:])


def make_model() -> nn.Module:
    """64 pixels -> 128 -> 64 -> 10 class scores."""
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.2),
                         nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


@tg.no_grad()
def accuracy(model: nn.Module, x: tg.Tensor, y: tg.Tensor) -> float:
    """The fraction of `x` whose highest score is the right label, in eval mode."""
    model.eval()
    correct = (model(x).argmax(dim=1) == y).cpu().numpy().mean()
    model.train()
    return float(correct)


def train(epochs: int, seed: int, progress: bool = True,
          device: str = "cpu") -> tuple[nn.Module, float, float]:
    """Train with Adam on mini-batches of 64 on `device`; returns the model, its last loss and test
    accuracy."""
    tg.manual_seed(seed)
    (x_train, y_train), (x_test, y_test) = split_digits(seed)
    x_train, y_train, x_test, y_test = (t.to(device) for t in (x_train, y_train, x_test, y_test))
    model = make_model().to(device)  # made on the CPU (the same weights for a seed), then moved
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    loader = DataLoader((x_train, y_train), batch_size=64, shuffle=True, seed=seed)
    epochs_bar = range(epochs)
    if progress:
        from tqdm import tqdm

        epochs_bar = tqdm(epochs_bar, desc="training")
    loss = None
    for _ in epochs_bar:
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if progress:
            epochs_bar.set_postfix(loss=f"{loss.item():.3f}", test=f"{accuracy(model, x_test, y_test):.1%}")
    return model, loss.item(), accuracy(model, x_test, y_test)


def plot_predictions(model: nn.Module, seed: int, path: str, n: int = 24) -> None:
    """Write `n` test digits with the model's guess above each (red where it is wrong)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed: the picture goes to a file
    import matplotlib.pyplot as plt

    _, (x_test, y_test) = split_digits(seed)
    device = next(model.parameters()).device
    with tg.no_grad():
        guesses = model.eval()(x_test[:n].to(device)).argmax(dim=1).tolist()
    fig, axes = plt.subplots(3, n // 3, figsize=(n // 3 * 1.1, 3.6))
    for ax, pixels, guess, label in zip(axes.flat, x_test[:n].numpy(), guesses, y_test[:n].tolist(),
                                        strict=True):
        ax.imshow(pixels.reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
        ax.set_title(str(guess), color="black" if guess == label else "red")
        ax.axis("off")
    fig.suptitle("tensorgrad MLP 64-128-64-10 on held-out digits (its guess above each)")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> float:
    """Train, print the test accuracy, save the weights and the picture; returns the accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30, help="passes over the training set (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the split, weights and batches")
    parser.add_argument("--output", default="digits_tensor.png", help="picture of test predictions")
    parser.add_argument("--weights", default="digits_tensor.npz", help="where tg.save writes the weights")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda (a GPU, with CuPy)")
    args = parser.parse_args(argv)

    model, loss, test_accuracy = train(args.epochs, args.seed, device=args.device)
    print(model)
    print(f"final training loss {loss:.4f}, test accuracy {test_accuracy:.1%} on {N_TEST} held-out digits")
    tg.save(model.state_dict(), args.weights)
    plot_predictions(model, args.seed, args.output)
    print(f"wrote {args.weights} and {args.output}")
    return test_accuracy


if __name__ == "__main__":
    main()
