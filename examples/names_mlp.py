"""makemore's MLP on tensorgrad: a character-level model that learns to make up names.

The model of Bengio et al. (2003), as in Andrej Karpathy's makemore: the previous 3 characters
are looked up in an embedding table (27 characters -> 10 numbers each), their 30 numbers go
through a hidden tanh layer of 200 units (optionally with BatchNorm1d before the tanh), and a
Linear layer scores the 27 possible next characters; cross-entropy against the real next
character is the loss. Trained with SGD on mini-batches of 32 from the 32,033 names shipped
with tensorgrad (`tensorgrad.data.load_names`), split 80/10/10 by a fixed seed into train, dev
and test names. Then it makes up 20 new names, one character at a time.

    python examples/names_mlp.py                     # the full run: dev loss <= 2.20 in under 2 minutes
    python examples/names_mlp.py --batchnorm         # BatchNorm1d after the hidden Linear
    python examples/names_mlp.py --compare-torch     # the same network from the same weights in PyTorch
    python examples/names_mlp.py --device cuda       # on a GPU (with CuPy): the same code, the same batches
"""

from __future__ import annotations

import argparse
import contextlib
import random
import string
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn, optim
from tensorgrad.data import load_names

CHARACTERS = "." + string.ascii_lowercase  # '.' marks both the start and the end of a name
INDEX = {c: i for i, c in enumerate(CHARACTERS)}
SPLIT_SEED = 42  # makemore's: the same train/dev/test names every run


def split_names(seed: int = SPLIT_SEED) -> tuple[list[str], list[str], list[str]]:
    """The names shuffled with `seed`, cut 80/10/10 into train, dev and test."""
    names = load_names()
    random.Random(seed).shuffle(names)
    n1, n2 = int(0.8 * len(names)), int(0.9 * len(names))
    return names[:n1], names[n1:n2], names[n2:]


def build_dataset(names: list[str], context: int) -> tuple[tg.Tensor, tg.Tensor]:
    """Every (previous `context` characters, next character) pair of the names, as int64 tensors.

    "emma" with a context of 3 gives ... -> e, ..e -> m, .em -> m, emm -> a, mma -> .
    """
    inputs, targets = [], []
    for name in names:
        window = [0] * context
        for c in name + ".":
            inputs.append(window)
            targets.append(INDEX[c])
            window = window[1:] + [INDEX[c]]
    return tg.tensor(inputs), tg.tensor(targets)


def make_model(context: int, embedding: int, hidden: int, batchnorm: bool) -> nn.Sequential:
    """Embedding -> Flatten -> Linear -> (BatchNorm1d) -> Tanh -> Linear, initialised as makemore:
    a hidden layer scaled for tanh (Kaiming, gain 5/3) and a nearly silent output layer, so the
    first loss is log(27), not a confident wrong guess."""
    layers = [nn.Embedding(len(CHARACTERS), embedding), nn.Flatten(),
              nn.Linear(context * embedding, hidden, bias=not batchnorm)]
    if batchnorm:
        layers.append(nn.BatchNorm1d(hidden))
    layers += [nn.Tanh(), nn.Linear(hidden, len(CHARACTERS))]
    model = nn.Sequential(*layers)
    hidden_layer, output_layer = model[2], model[-1]
    nn.init.kaiming_normal_(hidden_layer.weight, nonlinearity="tanh")
    if hidden_layer.bias is not None:
        nn.init.normal_(hidden_layer.bias, std=0.01)
    nn.init.normal_(output_layer.weight, std=0.01)
    nn.init.zeros_(output_layer.bias)
    return model


def batch_indices(steps: int, batch_size: int, n: int) -> np.ndarray:
    """The rows of every mini-batch, drawn up front with tensorgrad's generator (tg.manual_seed)."""
    return (tg.rand(steps, batch_size, dtype=tg.float64) * n).long().numpy()


def learning_rate(step: int, steps: int, lr: float) -> float:
    """makemore's schedule: `lr` for the first half of the steps, a tenth of it after."""
    return lr if step < steps // 2 else lr / 10


def tensorgrad_step(model: nn.Module, x: tg.Tensor, y: tg.Tensor, lr: float,
                    steps: int) -> Callable[[int, np.ndarray], float]:
    """One SGD step of `model` on the rows given, as a function of (step number, rows) -> loss."""
    optimizer = optim.SGD(model.parameters(), lr=lr)
    model.train()

    def step(number: int, rows: np.ndarray) -> float:
        optimizer.param_groups[0]["lr"] = learning_rate(number, steps, lr)
        index = tg.from_numpy(rows).to(x.device)  # drawn on the host, used where the data lives
        loss = F.cross_entropy(model(x[index]), y[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def run(steppers: dict[str, Callable[[int, np.ndarray], float]], batches: np.ndarray,
        progress: bool = True, block: int = 500) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Give every stepper each batch; returns each one's losses and seconds per step.

    The steppers take turns every `block` steps (each runs its own loop over the block), so a
    busy machine slows them alike and the ratio of their step times is fair.
    """
    losses: dict[str, list[float]] = {name: [] for name in steppers}
    seconds = dict.fromkeys(steppers, 0.0)
    bar = _progress(len(batches), " and ".join(steppers), progress)
    for first in range(0, len(batches), block):
        for name, step in steppers.items():
            record = losses[name].append
            start = time.perf_counter()
            for number, rows in enumerate(batches[first:first + block], first):
                record(step(number, rows))
            seconds[name] += time.perf_counter() - start
        if bar is not None:
            bar.update(min(block, len(batches) - first))
            bar.set_postfix(loss=f"{np.mean(losses[next(iter(steppers))][-block:]):.3f}", refresh=False)
    if bar is not None:
        bar.close()
    return losses, {name: total / max(len(batches), 1) for name, total in seconds.items()}


def train(model: nn.Module, x: tg.Tensor, y: tg.Tensor, batches: np.ndarray, lr: float,
          progress: bool = True) -> tuple[list[float], float]:
    """SGD over the given mini-batches; returns the loss of every step and the seconds per step."""
    losses, seconds = run({"tensorgrad": tensorgrad_step(model, x, y, lr, len(batches))}, batches, progress)
    return losses["tensorgrad"], seconds["tensorgrad"]


def _progress(steps: int, label: str, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=steps, desc=label, unit="step", mininterval=0.5)


@tg.no_grad()
def evaluate(model: nn.Module, x: tg.Tensor, y: tg.Tensor, chunk: int = 50_000) -> float:
    """The mean cross-entropy over all of (x, y), in eval mode (BatchNorm's running statistics)."""
    model.eval()
    total = 0.0
    for start in range(0, len(y), chunk):
        rows = slice(start, start + chunk)
        total += F.cross_entropy(model(x[rows]), y[rows], reduction="sum").item()
    model.train()
    return total / len(y)


def pick(probs: tg.Tensor) -> int:
    """One index drawn with probabilities `probs` (1-D), from tensorgrad's generator (on the host)."""
    return int(tg.multinomial(probs.cpu(), num_samples=1).item())


@tg.no_grad()
def make_up_names(model: nn.Module, count: int, context: int) -> list[str]:
    """`count` new names, each character drawn from the model's softmax given the last `context`."""
    model.eval()
    device = next(model.parameters()).device
    names = []
    for _ in range(count):
        window, name = [0] * context, []
        while True:
            probs = F.softmax(model(tg.tensor([window], device=device)), dim=1)[0]
            index = pick(probs)
            if index == 0:
                break
            name.append(CHARACTERS[index])
            window = window[1:] + [index]
        names.append("".join(name))
    model.train()
    return names


def torch_twin(model: nn.Module, batchnorm: bool) -> Any:
    """The same network in PyTorch, holding `model`'s weights (and buffers)."""
    import torch

    embedding, hidden = model[0], model[2]
    layers = [torch.nn.Embedding(len(CHARACTERS), embedding.embedding_dim), torch.nn.Flatten(),
              torch.nn.Linear(hidden.in_features, hidden.out_features, bias=not batchnorm)]
    if batchnorm:
        layers.append(torch.nn.BatchNorm1d(hidden.out_features))
    layers += [torch.nn.Tanh(), torch.nn.Linear(hidden.out_features, len(CHARACTERS))]
    twin = torch.nn.Sequential(*layers)
    twin.load_state_dict({k: torch.from_numpy(v.cpu().numpy().copy()) for k, v in model.state_dict().items()})
    return twin


def torch_step(twin: Any, x: tg.Tensor, y: tg.Tensor, lr: float,
               steps: int) -> Callable[[int, np.ndarray], float]:
    """`tensorgrad_step` for the PyTorch twin, line for line."""
    import torch

    optimizer = torch.optim.SGD(twin.parameters(), lr=lr)
    xt, yt = torch.from_numpy(x.cpu().numpy()), torch.from_numpy(y.cpu().numpy())
    twin.train()

    def step(number: int, rows: np.ndarray) -> float:
        optimizer.param_groups[0]["lr"] = learning_rate(number, steps, lr)
        index = torch.from_numpy(rows)
        loss = torch.nn.functional.cross_entropy(twin(xt[index]), yt[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """PyTorch on one thread: at these sizes its thread pool only adds synchronisation (on a busy
    2-core machine, a lot of it), so this is its fastest setting here."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def train_torch(model: nn.Module, x: tg.Tensor, y: tg.Tensor, batches: np.ndarray, lr: float,
                batchnorm: bool, progress: bool = True) -> tuple[Any, list[float], float]:
    """The PyTorch twin of `model` trained over the same mini-batches: (twin, losses, seconds per step)."""
    twin = torch_twin(model, batchnorm)
    with one_torch_thread():
        losses, seconds = run({"PyTorch": torch_step(twin, x, y, lr, len(batches))}, batches, progress)
    return twin, losses["PyTorch"], seconds["PyTorch"]


def evaluate_torch(twin: Any, x: tg.Tensor, y: tg.Tensor) -> float:
    """`evaluate` for the PyTorch twin."""
    import torch

    twin.eval()
    with torch.no_grad():
        logits = twin(torch.from_numpy(x.cpu().numpy()))
        loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(y.cpu().numpy()))
    return loss.item()


def plot_losses(curves: dict[str, list[float]], path: str, every: int = 500,
                title: str = "makemore MLP on 32,033 names") -> None:
    """Write the training loss curves (log10 of the loss, averaged over `every` steps)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed: the picture goes to a file
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, losses in curves.items():
        usable = len(losses) // every * every
        if usable == 0:
            ax.plot(np.log10(losses), label=label)
            continue
        means = np.log10(np.asarray(losses[:usable]).reshape(-1, every).mean(axis=1))
        ax.plot(np.arange(len(means)) * every + every / 2, means, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel(f"log10 training loss (mean over {every} steps)")
    ax.set_title(title)
    ax.legend()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40_000, help="training steps (default 40000)")
    parser.add_argument("--batch-size", type=int, default=32, help="names' characters per step (default 32)")
    parser.add_argument("--lr", type=float, default=0.1,
                        help="learning rate (default 0.1), a tenth of it in the second half")
    parser.add_argument("--context", type=int, default=3, help="characters the model sees (default 3)")
    parser.add_argument("--embedding", type=int, default=10, help="numbers per character (default 10)")
    parser.add_argument("--hidden", type=int, default=200, help="hidden tanh units (default 200)")
    parser.add_argument("--batchnorm", action="store_true", help="BatchNorm1d before the tanh")
    add_run_arguments(parser, "names_mlp.png")
    return parser.parse_args(argv)


def add_run_arguments(parser: argparse.ArgumentParser, picture: str) -> None:
    """The options the names examples share: seed, samples, the PyTorch twin, picture, progress, device."""
    parser.add_argument("--seed", type=int, default=2147483647, help="seed of weights, batches, samples")
    parser.add_argument("--samples", type=int, default=20, help="names to make up (default 20)")
    parser.add_argument("--compare-torch", action="store_true",
                        help="train the same model from the same weights in PyTorch too")
    parser.add_argument("--output", default=picture, help="picture of the loss curve")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--device", default="cpu",
                        help="cpu (default) or cuda (a GPU, with CuPy); PyTorch's twin stays on the CPU")


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    """Train, report train/dev loss and step time, make up names, draw the loss curve."""
    args = parse_args(argv)
    progress = not args.no_progress
    tg.manual_seed(args.seed)
    train_names, dev_names, _ = split_names()
    x_train, y_train = build_dataset(train_names, args.context)
    x_dev, y_dev = build_dataset(dev_names, args.context)
    model = make_model(args.context, args.embedding, args.hidden, args.batchnorm)
    batches = batch_indices(args.steps, args.batch_size, len(y_train))
    # PyTorch's copy from the weights as made, on the CPU
    twin = torch_twin_if_asked(args.compare_torch, lambda: torch_twin(model, args.batchnorm))
    # Made on the CPU (the same weights and batches for a seed on any device), then moved once.
    model.to(args.device)
    x_train, y_train, x_dev, y_dev = (t.to(args.device) for t in (x_train, y_train, x_dev, y_dev))

    steppers = {"tensorgrad": tensorgrad_step(model, x_train, y_train, args.lr, args.steps)}
    if twin is not None:
        steppers["PyTorch"] = torch_step(twin, x_train, y_train, args.lr, args.steps)
    with one_torch_thread() if twin is not None else contextlib.nullcontext():
        curves, step_seconds = run(steppers, batches, progress)
    result = {"train": evaluate(model, x_train, y_train), "dev": evaluate(model, x_dev, y_dev),
              "step_ms": step_seconds["tensorgrad"] * 1e3, "seconds": step_seconds["tensorgrad"] * args.steps}
    print(model)
    print(f"tensorgrad: train loss {result['train']:.4f}, dev loss {result['dev']:.4f}, "
          f"{result['step_ms']:.3f} ms per step")
    print("made-up names:", ", ".join(make_up_names(model, args.samples, args.context)))
    if twin is not None:
        result.update(torch_train=evaluate_torch(twin, x_train, y_train),
                      torch_dev=evaluate_torch(twin, x_dev, y_dev),
                      torch_step_ms=step_seconds["PyTorch"] * 1e3)
        _print_side_by_side(result)
    plot_losses(curves, args.output)
    print_summary(args, result)
    return result


def print_summary(args: argparse.Namespace, result: dict[str, float]) -> None:
    """The run's one-line summary: steps, time, losses, PyTorch's where it ran, the picture."""
    print(f"summary: {args.steps} steps of batch {args.batch_size} in {result['seconds']:.1f} s, "
          f"train {result['train']:.4f}, dev {result['dev']:.4f}"
          + (f"; PyTorch dev {result['torch_dev']:.4f}, step time tensorgrad / PyTorch "
             f"{result['step_ms'] / result['torch_step_ms']:.2f}x" if "torch_dev" in result else "")
          + f"; wrote {args.output}")


def _print_side_by_side(result: dict[str, float]) -> None:
    print(f"{'':12} {'train loss':>10} {'dev loss':>9} {'ms/step':>8}")
    for label, prefix in (("tensorgrad", ""), ("PyTorch", "torch_")):
        print(f"{label:12} {result[prefix + 'train']:10.4f} {result[prefix + 'dev']:9.4f} "
              f"{result[prefix + 'step_ms']:8.3f}")


def torch_twin_if_asked(compare: bool, make_twin: Callable[[], Any]) -> Any:
    """With --compare-torch (`compare`) and PyTorch installed, `make_twin()`: PyTorch's copy."""
    if not compare:
        return None
    try:
        import torch  # noqa: F401
    except ImportError:
        print("--compare-torch: PyTorch is not installed; skipped")
        return None
    return make_twin()


if __name__ == "__main__":
    main()
