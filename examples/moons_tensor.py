"""The moons demo on tensors: moons_scalar.py's 2-16-16-1 MLP, loss and SGD, one graph per step.

Tutorial chapter 9 points to it; chapter 5 builds the scalar version. The network starts from the
very same weights as `examples/moons_scalar.py` (copied from its seeded `scalargrad.nn.MLP`) and
trains on the same 100 points with the same max-margin loss and the same learning-rate schedule
(1.0 down to 0.1, here `optim.SGD` with a `LinearLR` schedule), so both follow the same path:
`--compare-scalar` trains the scalar version alongside, prints both losses and both step times,
and how much faster the tensors are. The learned decision boundary goes to a picture.

    python examples/moons_tensor.py --steps 100 --seed 0 --output moons_tensor.png --compare-scalar
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import tensorgrad as tg
from scalargrad.nn import MLP
from tensorgrad import nn, optim
from tensorgrad.optim import lr_scheduler

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the scalar demo is a script beside this one
import moons_scalar  # noqa: E402

ALPHA = 1e-4  # the L2 penalty of the scalar demo


def make_model(seed: int) -> nn.Sequential:
    """The 2-16-16-1 MLP of the scalar demo (relu, relu, linear), with its initial weights, float64."""
    scalar = MLP(2, [16, 16, 1], seed=seed)
    layers: list[nn.Module] = []
    for i, layer in enumerate(scalar.layers):
        linear = nn.Linear(len(layer.neurons[0].w), len(layer.neurons))
        # A neuron's weights are a row of the weight matrix; micrograd starts every bias at 0.
        weights = [[w.data for w in neuron.w] for neuron in layer.neurons]
        linear.weight = nn.Parameter(tg.tensor(weights, dtype=tg.float64))
        linear.bias = nn.Parameter(tg.tensor([neuron.b.data for neuron in layer.neurons], dtype=tg.float64))
        layers += [linear, nn.ReLU()] if i < len(scalar.layers) - 1 else [linear]
    return nn.Sequential(*layers)


def loss_and_accuracy(model: nn.Module, x: tg.Tensor, y: tg.Tensor) -> tuple[tg.Tensor, float]:
    """The scalar demo's loss, mean(relu(1 - y * score)) + alpha * sum(p * p), and the accuracy."""
    scores = model(x).reshape(-1)
    data_loss = (1 - y * scores).relu().mean()
    reg_loss = ALPHA * sum((p * p).sum() for p in model.parameters())
    accuracy = float(((y.data > 0) == (scores.data > 0)).mean())
    return data_loss + reg_loss, accuracy


def train(model: nn.Module, x: tg.Tensor, y: tg.Tensor, steps: int,
          progress: bool = True) -> tuple[list[float], float]:
    """Full-batch SGD, lr from 1.0 down to 0.1 over `steps`.

    Returns the loss before each step and the seconds per step.
    """
    optimizer = optim.SGD(model.parameters(), lr=1.0)
    schedule = lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=steps)
    bar = range(steps)
    if progress:
        from tqdm import tqdm

        bar = tqdm(bar, desc="tensorgrad")
    losses = []
    start = time.perf_counter()
    for _ in bar:
        loss, accuracy = loss_and_accuracy(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if progress:
            bar.set_postfix(loss=f"{losses[-1]:.4f}", acc=f"{accuracy:.0%}", refresh=False)
    return losses, (time.perf_counter() - start) / steps


def train_scalar(seed: int, x: np.ndarray, y: np.ndarray, steps: int) -> tuple[list[float], float]:
    """The scalar demo's training with the same schedule: the loss before each step, seconds per step."""
    from tqdm import tqdm

    model = MLP(2, [16, 16, 1], seed=seed)
    losses = []
    start = time.perf_counter()
    for k in tqdm(range(steps), desc="scalargrad"):
        loss, _ = moons_scalar.train_step(model, x, y, lr=moons_scalar.learning_rate(k, steps))
        losses.append(loss)
    return losses, (time.perf_counter() - start) / steps


def plot_decision_boundary(model: nn.Module, x: np.ndarray, y: np.ndarray, path: str) -> None:
    """Write the model's decision regions and the data points to `path` (png, svg, ...)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed: the picture goes to a file
    import matplotlib.pyplot as plt

    xx, yy = np.meshgrid(np.linspace(x[:, 0].min() - 1, x[:, 0].max() + 1, 300),
                         np.linspace(x[:, 1].min() - 1, x[:, 1].max() + 1, 300))
    with tg.no_grad():  # one batched forward pass over the 90,000 grid points
        scores = model(tg.from_numpy(np.c_[xx.ravel(), yy.ravel()])).numpy()
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.contourf(xx, yy, (scores > 0).reshape(xx.shape), cmap=plt.cm.Spectral, alpha=0.8)
    ax.scatter(x[:, 0], x[:, 1], c=y, s=40, cmap=plt.cm.Spectral, edgecolors="k")
    ax.set_title("tensorgrad MLP 2-16-16-1 on two moons")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    """Train, print the summary, write the picture; returns the figures of the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="SGD steps (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed for data and weights (default 0)")
    parser.add_argument("--output", default="moons_tensor.png", help="decision-boundary picture")
    parser.add_argument("--compare-scalar", action="store_true",
                        help="also train the scalar version of the same network; compare losses and speed")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")

    x_np, y_np = moons_scalar.make_moons(100, noise=0.1, seed=args.seed)
    x, y = tg.from_numpy(x_np), tg.from_numpy(y_np)
    model = make_model(args.seed)
    print(model)
    losses, tensor_seconds = train(model, x, y, args.steps)
    tensor_ms = tensor_seconds * 1e3
    with tg.no_grad():
        loss, accuracy = loss_and_accuracy(model, x, y)
    summary = {"loss": loss.item(), "accuracy": accuracy, "tensor_ms_per_step": tensor_ms}
    print(f"tensorgrad: final loss {loss.item():.4f}, accuracy {accuracy:.0%}, {tensor_ms:.2f} ms per step")
    if args.compare_scalar:
        scalar_losses, scalar_seconds = train_scalar(args.seed, x_np, y_np, args.steps)
        scalar_ms = scalar_seconds * 1e3
        gap = float(np.max(np.abs(np.array(losses) - np.array(scalar_losses))))
        summary.update(scalar_ms_per_step=scalar_ms, speedup=scalar_ms / tensor_ms, loss_gap=gap)
        print(f"scalargrad: loss before the last step {scalar_losses[-1]:.4f} (tensorgrad {losses[-1]:.4f}; "
              f"largest difference over the run {gap:.1e}), {scalar_ms:.1f} ms per step: "
              f"the tensors are {scalar_ms / tensor_ms:.0f}x faster")
    plot_decision_boundary(model, x_np, y_np, args.output)
    print(f"wrote {args.output}")
    return summary


if __name__ == "__main__":
    main()
