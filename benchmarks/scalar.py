"""The moons training step as users run it: scalargrad next to micrograd, collector on.

The benchmark of tutorial chapter 5 ("a neuron, a layer, an MLP"). It trains micrograd's demo
network, `MLP(2, [16, 16, 1])` on 100 moons points (forward over all points, SVM loss with L2,
`zero_grad`, backward, SGD update), the way a user's training loop does: step after step in a
fresh process, Python's garbage collector on, no `gc.collect()` between steps. The collector's
thresholds then fill as they do in real training, so its cost shows; every collection during the
timed steps is counted and timed through `gc.callbacks`.

Variants, each in a process of its own, the processes alternating round by round:

- micrograd as-is: micrograd's `Value` and `MLP` with its notebook's loss code, verbatim;
- micrograd with the collector off during each step (and a collection after it, not timed):
  its pure computing time;
- scalargrad running that same notebook code (numpy float64 rows, numpy int labels, Python's
  built-in `sum`), with micrograd's initial weights;
- scalargrad running its own example's loss (`examples/moons_scalar.py`), and that again with
  the collector off during the step.

Then what a step's graph is made of (nodes, container objects per node, bytes per node with
tracemalloc) and the backward pass through a chain of a million nodes (micrograd's recursive
walk stops near 1,000).

Run from the root of a checkout (installed or not):

    python benchmarks/scalar.py             # about two minutes with micrograd installed
    python benchmarks/scalar.py --quick     # a smoke run (seconds)
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from types import ModuleType

import numpy as np

# Importing _common puts the checkout on sys.path, so the imports below work uninstalled.
from _common import ROOT, cpu_summary, print_table

VARIANTS = {
    "micrograd": "micrograd as-is",
    "micrograd-gc-off": "micrograd, collector off during the step",
    "scalargrad-demo": "scalargrad, micrograd's demo loss",
    "scalargrad": "scalargrad, example loss",
    "scalargrad-gc-off": "scalargrad, example loss, collector off during the step",
}
SEED = 1337  # micrograd's notebook seeds `random` and numpy with it


def micrograd_notebook_loss(Value, model, X, y):  # noqa: N803 - the notebook's names
    """micrograd's demo notebook's `loss`, verbatim, over the engine whose `Value` is given."""

    def loss(batch_size=None):

        # inline DataLoader :)
        if batch_size is None:
            Xb, yb = X, y
        else:
            ri = np.random.permutation(X.shape[0])[:batch_size]
            Xb, yb = X[ri], y[ri]
        inputs = [list(map(Value, xrow)) for xrow in Xb]

        # forward the model to get scores
        scores = list(map(model, inputs))

        # svm "max-margin" loss
        losses = [(1 + -yi*scorei).relu() for yi, scorei in zip(yb, scores)]  # noqa: B905
        data_loss = sum(losses) * (1.0 / len(losses))
        # L2 regularization
        alpha = 1e-4
        reg_loss = alpha * sum((p*p for p in model.parameters()))  # noqa: UP034
        total_loss = data_loss + reg_loss

        # also get accuracy
        accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]  # noqa: B905
        return total_loss, sum(accuracy) / len(accuracy)

    return loss


def _load_example(name: str) -> ModuleType:
    """A script from examples/ (a folder of scripts, not a package) as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def has_micrograd() -> bool:
    """Whether micrograd is importable here."""
    return importlib.util.find_spec("micrograd") is not None


class Demo:
    """One variant's model, its loss function and how to walk its graph."""

    def __init__(self, model, loss: Callable[[], tuple], nodes: Callable[[object], list]) -> None:
        self.model = model
        self.loss = loss
        self.nodes = nodes


def build_demo(variant: str) -> Demo:
    """The model (micrograd's initial weights where micrograd is installed) and loss of a variant."""
    moons = _load_example("moons_scalar")
    X, y = moons.make_moons(100, noise=0.1, seed=0)
    y = y.astype(int)  # scikit-learn's make_moons, as the notebook uses it, gives int labels
    weights = None
    if has_micrograd():
        from micrograd import nn as micrograd_nn
        from micrograd.engine import Value as MicrogradValue

        random.seed(SEED)
        theirs = micrograd_nn.MLP(2, [16, 16, 1])
        if variant.startswith("micrograd"):
            return Demo(theirs, micrograd_notebook_loss(MicrogradValue, theirs, X, y), _micrograd_nodes)
        weights = [p.data for p in theirs.parameters()]
    from scalargrad import Value
    from scalargrad.engine import topological_order
    from scalargrad.nn import MLP

    model = MLP(2, [16, 16, 1], seed=SEED)
    if weights is not None:
        for p, w in zip(model.parameters(), weights, strict=True):
            p.data = float(w)
    if variant == "scalargrad-demo":
        loss = micrograd_notebook_loss(Value, model, X, y)
    else:
        loss = lambda: moons.loss_and_accuracy(model, X, y)  # noqa: E731
    return Demo(model, loss, topological_order)


def _micrograd_nodes(root) -> list:
    seen, stack = {root}, [root]
    while stack:
        for child in stack.pop()._prev:
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return list(seen)


def train_step(demo: Demo, k: int) -> float:
    """The notebook's training step: forward, zero_grad, backward, SGD update; returns the loss."""
    total_loss, acc = demo.loss()
    demo.model.zero_grad()
    total_loss.backward()
    learning_rate = 1.0 - 0.9 * k / 100
    for p in demo.model.parameters():
        p.data -= learning_rate * p.grad
    return total_loss.data


class CollectorLog:
    """Counts and times the collections that start while `on` is set (through gc.callbacks)."""

    def __init__(self) -> None:
        self.on = False
        self.count = [0, 0, 0]
        self.seconds = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        elif self.on:
            self.count[info["generation"]] += 1
            self.seconds += time.perf_counter() - self._start


def time_steps(variant: str, warmup: int, steps: int, seconds: float) -> dict:
    """In this (fresh) process: train, and time at least `steps` steps and `seconds` seconds.

    The learning-rate schedule is the notebook's over 100 steps, restarted every 100 steps so
    that a long run never ascends.
    """
    demo = build_demo(variant)
    gc_off = variant.endswith("gc-off")
    log = CollectorLog()
    gc.callbacks.append(log)
    times, losses = [], []
    k = 0
    for _ in range(warmup):
        losses.append(train_step(demo, k % 100))
        k += 1
    while len(times) < steps or sum(times) < seconds:
        if gc_off:
            gc.disable()
        log.on = True
        start = time.perf_counter()
        loss = train_step(demo, k % 100)
        times.append(time.perf_counter() - start)
        losses.append(loss)
        log.on = False
        if gc_off:
            gc.enable()
            gc.collect()  # the garbage of the step goes here, outside the timed step
        k += 1
    gc.callbacks.remove(log)
    n = len(times)
    return {"ms": 1e3 * sum(times) / n, "steps": n, "collections": [c / n for c in log.count],
            "collector_ms": 1e3 * log.seconds / n, "first_losses": [float(x) for x in losses[:3]]}


def check_same_training(runs: dict[str, list[dict]]) -> str:
    """Raise unless every variant's first steps give the same losses (a fast step must not do less)."""
    reference_variant = next(iter(runs))
    reference = runs[reference_variant][0]["first_losses"]
    for variant, results in runs.items():
        for result in results:
            got = result["first_losses"]
            if len(got) != len(reference) or any(
                    abs(a - b) > 1e-9 * abs(b) for a, b in zip(got, reference, strict=True)):
                raise AssertionError(f"{variant} trains differently from {reference_variant}: losses {got} "
                                     f"where {reference}")
    return (f"Every variant's first {len(reference)} losses equal {VARIANTS[reference_variant]}'s to 1e-9: "
            + ", ".join(f"{x:.12g}" for x in reference))


def graph_figures(variant: str) -> dict:
    """Nodes, container objects and bytes of one step's graph, built with the collector off."""
    demo = build_demo(variant)
    train_step(demo, 0)  # a first step, so that nothing is created lazily in the measured one
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        total_loss, _ = demo.loss()
        containers = len(gc.get_objects()) - before - 1  # less the list get_objects returned
        nodes = len(demo.nodes(total_loss))
        del total_loss
        gc.collect()
        tracemalloc.start()
        total_loss, _ = demo.loss()
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        gc.enable()
    return {"nodes": nodes, "containers_per_node": containers / nodes, "bytes_per_node": held / nodes}


def chain(n: int) -> dict:
    """Build x -> relu -> relu ... (n nodes), then backward; seconds of each, collector on."""
    from scalargrad import Value

    start = time.perf_counter()
    x = Value(0.5)
    y = x
    for _ in range(n):
        y = y.relu()
    built = time.perf_counter()
    y.backward()
    done = time.perf_counter()
    assert x.grad == 1.0
    return {"build": built - start, "backward": done - built}


def micrograd_chain(n: int = 1000) -> str:
    """What micrograd's backward does on a chain of `n` nodes."""
    if not has_micrograd():
        return "micrograd not installed"
    from micrograd.engine import Value as MicrogradValue

    y = MicrogradValue(0.5)
    for _ in range(n):
        y = y.relu()
    try:
        y.backward()
    except RecursionError:
        return f"micrograd: RecursionError on a chain of {n:,} nodes"
    return f"micrograd: a chain of {n:,} nodes works"


def in_fresh_process(*args: str) -> dict:
    """Run this script with `--worker ...` in a new interpreter; its one JSON line, parsed."""
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def worker(args: argparse.Namespace) -> None:
    """The child's side: one measurement, printed as a JSON line."""
    kind, _, variant = args.worker.partition(":")
    if kind == "steps":
        result = time_steps(variant, args.warmup, args.steps, args.seconds)
    elif kind == "graph":
        result = graph_figures(variant)
    else:
        result = chain(args.chain)
    print(json.dumps(result))


def span(values: list[float], digits: str = ".0f") -> str:
    """`low - high` of a list of figures (one figure when they are all equal)."""
    low, high = (f"{value:{digits}}" for value in (min(values), max(values)))
    return low if low == high else f"{low} - {high}"


def step_table(runs: dict[str, list[dict]], rounds: int) -> None:
    """ms per step, ratios to micrograd (paired by round), collections and their time."""
    reference, unplugged = runs.get("micrograd"), runs.get("micrograd-gc-off")
    rows = []
    for variant, results in runs.items():
        ms = [r["ms"] for r in results]
        speedup = "-" if reference is None else span(
            [a["ms"] / r["ms"] for a, r in zip(reference, results, strict=True)], ".1f") + "x"
        against_off = "-" if unplugged is None else span(
            [a["ms"] / r["ms"] for a, r in zip(unplugged, results, strict=True)], ".2f") + "x"
        collections = [statistics.mean(r["collections"][g] for r in results) for g in range(3)]
        rows.append([VARIANTS[variant], span(ms, ".1f"), speedup, against_off,
                     " / ".join(f"{c:.3g}" for c in collections),
                     span([r["collector_ms"] for r in results], ".1f"),
                     round(statistics.mean(r["steps"] for r in results))])
    print_table(
        "moons training step, MLP(2, [16, 16, 1]), 100 points, collector on unless said (ms per step)",
        ["variant", "ms per step", "vs micrograd", "vs micrograd, collector off",
         "collections per step (gen 0 / 1 / 2)", "collector ms per step", "steps timed"],
        rows,
        [f"Python {sys.version.split()[0]}, {cpu_summary()}. Each figure is the mean step of one fresh "
         f"process; ranges are over {rounds} rounds, the processes alternating. Ratios pair the runs of "
         "one round. The step is forward, zero_grad, backward and the SGD update."],
    )


def main(argv: list[str] | None = None) -> None:
    """Run every variant in fresh processes, alternating, and print Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3,
                        help="processes per variant, alternating (default 3)")
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed steps first in each process (default 2)")
    parser.add_argument("--steps", type=int, default=5, help="at least this many timed steps (default 5)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="and at least this many seconds of timed steps (default 3)")
    parser.add_argument("--chain", type=int, default=1_000_000, help="nodes in the depth check (default 1e6)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1 round, 1 step, a short chain, no micrograd as-is")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.warmup, args.steps, args.seconds, args.chain = 1, 0, 1, 0.0, 10_000
    if args.worker:
        worker(args)
        return

    variants = [v for v in VARIANTS if has_micrograd() or not v.startswith("micrograd")]
    if args.quick:  # micrograd as-is takes seconds a step
        variants = [v for v in variants if v != "micrograd"]
    options = ["--warmup", str(args.warmup), "--steps", str(args.steps), "--seconds", str(args.seconds)]
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    for round_ in range(args.rounds):
        shift = round_ % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            runs[variant].append(in_fresh_process("--worker", f"steps:{variant}", *options))
    step_table(runs, args.rounds)
    print("\n" + check_same_training(runs))

    graphs = {v: in_fresh_process("--worker", f"graph:{v}") for v in variants if not v.endswith("gc-off")}
    print_table(
        "What one step's graph is made of",
        ["variant", "nodes per step", "container objects per node", "bytes per node"],
        [[VARIANTS[v], f"{g['nodes']:,}", f"{g['containers_per_node']:.2f}", f"{g['bytes_per_node']:.0f}"]
         for v, g in graphs.items()],
        ["Containers: objects the cycle collector tracks (gc.get_objects), created by one step's "
         "loss. Bytes: tracemalloc, while the graph is alive."],
    )

    chains = [in_fresh_process("--worker", "chain", "--chain", str(args.chain)) for _ in range(args.rounds)]
    print_table(
        f"Depth: a chain of {args.chain:,} relu nodes (collector on)",
        ["engine", "build (s)", "backward (s)"],
        [["scalargrad", span([c["build"] for c in chains], ".2f"),
          span([c["backward"] for c in chains], ".2f")]],
        [micrograd_chain()],
    )


if __name__ == "__main__":
    main()
