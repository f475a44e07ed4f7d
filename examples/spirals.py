"""Three interleaved spiral arms: an MLP learns a boundary no straight line can draw.

The classic non-linear problem (CS231n's spiral data) with the tools of a PyTorch training
loop: `tensorgrad.data.make_spirals`, a `TensorDataset` split 80/20 by `random_split`, a
shuffling `DataLoader`, a 2-64-64-3 `nn.Sequential`, `F.cross_entropy`, `optim.AdamW` and a
`OneCycleLR` schedule. It reports the training loss and the accuracy on the held-out fifth, and
draws the three decision regions with the points.

    python examples/spirals.py --epochs 150 --seed 0 --output spirals.png
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn, optim
from tensorgrad.data import DataLoader, Subset, TensorDataset, make_spirals, random_split
from tensorgrad.optim import lr_scheduler

N_POINTS, N_CLASSES, BATCH = 600, 3, 32


def split_spirals(seed: int) -> tuple[Subset, Subset]:
    """The spirals as training and held-out subsets (80/20), both fixed by `seed`."""
    x, y = make_spirals(N_POINTS, n_classes=N_CLASSES, noise=0.2, seed=seed)
    return tuple(random_split(TensorDataset(x, y), [0.8, 0.2], generator=tg.Generator().manual_seed(seed)))


def make_model() -> nn.Sequential:
    """2 coordinates -> 64 -> 64 -> 3 class scores."""
    return nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, N_CLASSES))


def tensors_of(subset: Subset) -> tuple[tg.Tensor, tg.Tensor]:
    """All of a subset's points and labels, as two tensors."""
    return subset[list(range(len(subset)))]


@tg.no_grad()
def accuracy(model: nn.Module, subset: Subset) -> float:
    """The fraction of the subset's points whose highest score is the right arm."""
    x, y = tensors_of(subset)
    return float((model(x).argmax(dim=1) == y).numpy().mean())


def train(epochs: int, seed: int, lr: float = 0.01, progress: bool = True) -> tuple[nn.Module, float, float]:
    """Train with AdamW and a one-cycle schedule; returns the model, last epoch's loss and test accuracy."""
    tg.manual_seed(seed)
    train_set, test_set = split_spirals(seed)
    model = make_model()
    loader = DataLoader(train_set, batch_size=BATCH, shuffle=True, seed=seed)
    optimizer = optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    schedule = lr_scheduler.OneCycleLR(optimizer, max_lr=lr, epochs=epochs, steps_per_epoch=len(loader))
    bar = range(epochs)
    if progress:
        from tqdm import tqdm

        bar = tqdm(bar, desc="training")
    epoch_loss = float("nan")
    for _ in bar:
        total = 0.0
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total += loss.item() * len(yb)
        epoch_loss = total / len(train_set)
        if progress:
            bar.set_postfix(loss=f"{epoch_loss:.3f}", lr=f"{schedule.get_last_lr()[0]:.4f}")
    return model, epoch_loss, accuracy(model, test_set)


def plot_decision_regions(model: nn.Module, seed: int, path: str) -> None:
    """Write the three decision regions with the training (dots) and held-out (crosses) points."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed: the picture goes to a file
    import matplotlib.pyplot as plt

    xx, yy = np.meshgrid(np.linspace(-1.2, 1.2, 300), np.linspace(-1.2, 1.2, 300))
    grid = tg.from_numpy(np.c_[xx.ravel(), yy.ravel()].astype(np.float32))
    with tg.no_grad():  # one batched forward pass over the 90,000 grid points
        regions = model(grid).argmax(dim=1).numpy().reshape(xx.shape)
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.contourf(xx, yy, regions, levels=np.arange(N_CLASSES + 1) - 0.5, cmap=plt.cm.Spectral, alpha=0.7)
    for subset, marker in zip(split_spirals(seed), ("o", "X"), strict=True):
        x, y = tensors_of(subset)
        ax.scatter(*x.numpy().T, c=y.numpy(), marker=marker, s=30, cmap=plt.cm.Spectral, vmin=0,
                   vmax=N_CLASSES - 1, edgecolors="k")
    ax.set_title("tensorgrad MLP 2-64-64-3 on three spirals (crosses: held out)")
    ax.set_aspect("equal")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> float:
    """Train, print the summary, write the picture; returns the held-out accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=150,
                        help="passes over the training points (default 150)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the data, split, weights and batches")
    parser.add_argument("--lr", type=float, default=0.01, help="peak learning rate of the one cycle")
    parser.add_argument("--output", default="spirals.png", help="decision-region picture")
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error(f"--epochs must be at least 1, got {args.epochs}")
    if not args.lr > 0:
        parser.error(f"--lr must be positive, got {args.lr}")

    start = time.perf_counter()
    model, loss, test_accuracy = train(args.epochs, args.seed, args.lr)
    seconds = time.perf_counter() - start
    print(model)
    print(f"final training loss {loss:.4f}, test accuracy {test_accuracy:.1%} on {N_POINTS // 5} held-out "
          f"points, {seconds:.1f} s of training")
    plot_decision_regions(model, args.seed, args.output)
    print(f"wrote {args.output}")
    return test_accuracy


if __name__ == "__main__":
    main()
