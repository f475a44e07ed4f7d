"""micrograd's classic demo on scalargrad: a 2-16-16-1 MLP learns the two-moons data set.

Tutorial chapter 5 ("a neuron, a layer, an MLP") builds up to it. Every number in the network
is a `Value`; each step builds the graph of the loss over all 100 points (about 8,000 nodes:
each neuron's w . x + b is one node), runs backward through it and takes an SGD step, with
micrograd's learning rate falling from 1.0 to 0.1 over the run. It reaches 100% training
accuracy and writes the learned decision boundary to a picture.

    python examples/moons_scalar.py --steps 100 --seed 0 --output moons_scalar.png
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from scalargrad import Value, no_grad
from scalargrad.nn import MLP


def make_moons(
    n_samples: int = 100, noise: float = 0.1, seed: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles: points `X` (n, 2) and labels `y` in {-1, +1}.

    The same construction as scikit-learn's `make_moons`, on a seeded numpy generator.
    """
    rng = np.random.default_rng(seed)
    n_outer = n_samples // 2
    n_inner = n_samples - n_outer
    outer = np.linspace(0, np.pi, n_outer)
    inner = np.linspace(0, np.pi, n_inner)
    X = np.concatenate(
        [
            np.stack([np.cos(outer), np.sin(outer)], axis=1),
            np.stack([1 - np.cos(inner), 1 - np.sin(inner) - 0.5], axis=1),
        ]
    )
    y = np.concatenate([-np.ones(n_outer), np.ones(n_inner)])
    order = rng.permutation(n_samples)
    X = X[order] + rng.normal(scale=noise, size=(n_samples, 2))
    return X, y[order]


def loss_and_accuracy(model: MLP, X: np.ndarray, y: np.ndarray, alpha: float = 1e-4) -> tuple[Value, float]:
    """The SVM max-margin loss mean(relu(1 - y * score)) plus alpha * sum(p * p), and accuracy."""
    rows = X.tolist()  # Python floats: a Value op on a numpy float64 would go through numpy
    labels = y.tolist()
    scores = [model(row) for row in rows]
    losses = [(1 - yi * score).relu() for yi, score in zip(labels, scores, strict=True)]
    data_loss = Value.sum(losses) * (1.0 / len(losses))
    reg_loss = alpha * Value.sum([p * p for p in model.parameters()])
    accuracy = sum((yi > 0) == (s.data > 0) for yi, s in zip(labels, scores, strict=True)) / len(labels)
    return data_loss + reg_loss, accuracy


def learning_rate(k: int, steps: int) -> float:
    """micrograd's schedule stretched over the run: 1.0 at step 0, falling linearly to 0.1.

    micrograd's demo writes `1.0 - 0.9 * k / 100` for its 100 steps; with `k / steps` a longer
    run never reaches a zero or negative rate (gradient ascent) and a shorter one still ends low.
    """
    return 1.0 - 0.9 * k / steps


def train_step(model: MLP, X: np.ndarray, y: np.ndarray, lr: float) -> tuple[float, float]:
    """One SGD step: forward over all points, loss, backward, p -= lr * p.grad.

    Returns the loss and accuracy as plain numbers, so the step's graph is freed when it
    returns: the next step's forward pass never shares memory (or the cycle collector's
    attention) with this one's graph.
    """
    loss, accuracy = loss_and_accuracy(model, X, y)
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data, accuracy


def plot_decision_boundary(model: MLP, X: np.ndarray, y: np.ndarray, path: str) -> None:
    """Write the model's decision regions and the data points to `path` (png, svg, ...)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed: the picture goes to a file
    import matplotlib.pyplot as plt

    h = 0.1  # grid step: 2,000 forward passes, a fraction of a second
    x_min, x_max = X[:, 0].min() - 1, X[:, 0].max() + 1
    y_min, y_max = X[:, 1].min() - 1, X[:, 1].max() + 1
    xx, yy = np.meshgrid(np.arange(x_min, x_max, h), np.arange(y_min, y_max, h))
    with no_grad():  # thousands of forward passes, none of which needs a graph
        scores = [model(point).data for point in np.c_[xx.ravel(), yy.ravel()].tolist()]
    zz = (np.array(scores) > 0).reshape(xx.shape)
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.contourf(xx, yy, zz, cmap=plt.cm.Spectral, alpha=0.8)
    ax.scatter(X[:, 0], X[:, 1], c=y, s=40, cmap=plt.cm.Spectral, edgecolors="k")
    ax.set_xlim(xx.min(), xx.max())
    ax.set_ylim(yy.min(), yy.max())
    ax.set_title("scalargrad MLP(2, [16, 16, 1]) on two moons")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def _positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> float:
    """Train, print the final loss and accuracy, write the picture; returns the accuracy."""
    from tqdm import tqdm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=_positive_int, default=100, help="SGD steps (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed for data and weights (default 0)")
    parser.add_argument("--output", default="moons_scalar.png", help="decision-boundary picture")
    args = parser.parse_args(argv)

    X, y = make_moons(100, noise=0.1, seed=args.seed)
    model = MLP(2, [16, 16, 1], seed=args.seed)
    print(model)
    print("number of parameters", len(model.parameters()))

    bar = tqdm(range(args.steps), desc="training")
    for k in bar:
        loss, accuracy = train_step(model, X, y, lr=learning_rate(k, args.steps))
        bar.set_postfix(loss=f"{loss:.4f}", acc=f"{accuracy:.0%}")

    with no_grad():
        loss, accuracy = loss_and_accuracy(model, X, y)
    print(f"final loss {loss.data:.4f}, accuracy {accuracy:.0%}")
    plot_decision_boundary(model, X, y, args.output)
    print(f"wrote {args.output}")
    return accuracy


if __name__ == "__main__":
    main()
