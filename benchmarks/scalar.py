"""Speed, memory and depth of scalargrad's Value, next to micrograd's, measured in one run.

The benchmark of tutorial chapter 3 ("a neural net from Values"). It times the training step of
the moons demo (`examples/moons_scalar.py`: forward over 100 points, SVM loss with L2, backward,
SGD update), split into its phases, for scalargrad and, when it is installed, for micrograd's
own `Value` and `MLP` starting from the same weights, interleaved round by round:

- with Python's garbage collector on, as users run them. micrograd's closures refer to their
  own node, so its graphs are cycles that only the collector frees, during later steps;
- with the collector off during the step (and a collection between steps, not timed): the
  pure computing time.

Then bytes per node (tracemalloc, while one step's graph is alive), and backward through a chain
of a million nodes (micrograd's recursive walk stops near 1,000).

Run from the root of a checkout (installed or not):

    python benchmarks/scalar.py             # about a minute with micrograd installed
    python benchmarks/scalar.py --quick     # a smoke run (seconds)
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from types import ModuleType

# Importing _common puts the checkout on sys.path, so the imports below work uninstalled.
from _common import ROOT, cpu_summary, interleaved, print_table, ratio

from scalargrad import Value
from scalargrad.engine import topological_order
from scalargrad.nn import MLP


def _load_example(name: str) -> ModuleType:
    """A script from examples/ (a folder of scripts, not a package) as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


moons = _load_example("moons_scalar")


class Demo:
    """One implementation of the moons demo: its model, its loss and how to count its nodes."""

    def __init__(self, model, loss_fn: Callable, count_nodes: Callable) -> None:
        self.model = model
        self.loss_fn = loss_fn
        self.count_nodes = count_nodes
        self.k = 0  # the step number, for the learning-rate schedule

    def step(self) -> tuple[float, float, float]:
        """One training step; returns the seconds of forward, backward and update.

        The update phase also drops the step's graph: scalargrad frees it there, micrograd
        leaves it to the garbage collector, as the demo does.
        """
        t0 = time.perf_counter()
        loss = self.loss_fn()
        t1 = time.perf_counter()
        self.model.zero_grad()
        loss.backward()
        t2 = time.perf_counter()
        lr = 1.0 - 0.9 * min(self.k, 99) / 100
        for p in self.model.parameters():
            p.data -= lr * p.grad
        del loss
        t3 = time.perf_counter()
        self.k += 1
        return t1 - t0, t2 - t1, t3 - t2


def scalargrad_demo(X, y, seed: int) -> Demo:
    """The demo as examples/moons_scalar.py runs it."""
    model = MLP(2, [16, 16, 1], seed=seed)
    return Demo(
        model,
        lambda: moons.loss_and_accuracy(model, X, y)[0],
        lambda root: len(topological_order(root)),
    )


def micrograd_demo(X, y, weights: list[float]) -> Demo | None:
    """micrograd's demo loss, as in its notebook, on its own engine; None if not installed."""
    try:
        from micrograd import nn as micrograd_nn
        from micrograd.engine import Value as MicrogradValue
    except ImportError:
        return None
    model = micrograd_nn.MLP(2, [16, 16, 1])
    for p, w in zip(model.parameters(), weights, strict=True):
        p.data = w
    rows, labels = X.tolist(), y.tolist()

    def loss_fn():
        inputs = [list(map(MicrogradValue, row)) for row in rows]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * score).relu() for yi, score in zip(labels, scores, strict=True)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = 1e-4 * sum(p * p for p in model.parameters())
        return data_loss + reg_loss

    def count_nodes(root) -> int:
        seen, stack = {root}, [root]
        while stack:
            for child in stack.pop()._prev:
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return len(seen)

    return Demo(model, loss_fn, count_nodes)


def step_block(demo: Demo, gc_on: bool, phases: list) -> Callable[[int], tuple[float, int]]:
    """A block for `interleaved`: `number` timed steps, each step's phases added to `phases`.

    Every block starts from a collected heap, so no candidate pays for another's garbage. With
    the collector on, one untimed step first leaves the garbage a step finds in a training
    loop (micrograd's previous graph, waiting for the collector).
    """

    def block(number: int) -> tuple[float, int]:
        gc.collect()
        if gc_on:
            demo.step()
        elapsed = 0.0
        for _ in range(number):
            if not gc_on:
                gc.collect()
                gc.disable()
            try:
                step_phases = demo.step()
            finally:
                gc.enable()
            phases.append(step_phases)
            elapsed += sum(step_phases)
        return elapsed, 0

    return block


def bytes_per_node(demo: Demo) -> float:
    """Memory held by one step's graph (tracemalloc), divided by its number of nodes."""
    gc.collect()
    gc.disable()  # micrograd's graph would otherwise be collected while it is measured
    try:
        tracemalloc.start()
        loss = demo.loss_fn()
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return held / demo.count_nodes(loss)
    finally:
        gc.enable()


def chain(n: int) -> tuple[float, float]:
    """Build x -> relu -> relu ... (n nodes), then backward; seconds of each, collector on."""
    gc.collect()
    t0 = time.perf_counter()
    x = Value(0.5)
    y = x
    for _ in range(n):
        y = y.relu()
    t1 = time.perf_counter()
    y.backward()
    t2 = time.perf_counter()
    assert x.grad == 1.0
    return t1 - t0, t2 - t1


def micrograd_chain(n: int = 1000) -> str:
    """What micrograd's backward does on a chain of `n` nodes."""
    try:
        from micrograd.engine import Value as MicrogradValue
    except ImportError:
        return "micrograd not installed"
    y = MicrogradValue(0.5)
    for _ in range(n):
        y = y.relu()
    try:
        y.backward()
    except RecursionError:
        return f"micrograd: RecursionError on a chain of {n:,} nodes"
    return f"micrograd: a chain of {n:,} nodes works"


def main(argv: list[str] | None = None) -> None:
    """Run the three measurements and print them as Markdown tables."""
    parser = argparse.ArgumentParser(description="scalargrad vs micrograd: the moons demo's training step")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--number", type=int, default=2, help="timed steps per round (default 2)")
    parser.add_argument("--chain", type=int, default=1_000_000, help="nodes in the depth check (default 1e6)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 round, a short chain")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.number, args.chain = 1, 1, 10_000

    X, y = moons.make_moons(100, noise=0.1, seed=args.seed)
    demos = {"scalargrad": scalargrad_demo(X, y, args.seed)}
    theirs = micrograd_demo(X, y, [p.data for p in demos["scalargrad"].model.parameters()])
    if theirs is not None:
        demos["micrograd"] = theirs

    phases: dict[str, list] = {}
    candidates = {}
    for name, demo in demos.items():
        for gc_on in (True, False):
            label = f"{name}, GC {'on' if gc_on else 'off'}"
            phases[label] = []
            candidates[label] = step_block(demo, gc_on, phases[label])
    result = interleaved(candidates, repeats=args.repeats, number=args.number, warmup=0)

    nodes = {name: demo.count_nodes(demo.loss_fn()) for name, demo in demos.items()}
    reference = result.get("micrograd, GC on", {}).get("seconds")
    rows = []
    for label, timing in result.items():
        forward, backward, update = (statistics.median(p) * 1e3 for p in zip(*phases[label], strict=True))
        n = nodes[label.split(",")[0]]
        rows.append(
            [
                label,
                forward,
                backward,
                update,
                timing["seconds"] * 1e3,
                f"{timing['spread']:.0%}",
                f"{n:,}",
                f"{n / timing['seconds'] / 1e6:.2f} M",
                ratio(reference, timing["seconds"]),
            ]
        )
    notes = [
        f"Python {sys.version.split()[0]}, {cpu_summary()}; median of {args.repeats} interleaved rounds of "
        f"{args.number} steps. Update includes dropping the step's graph."
    ]
    if reference is not None:
        notes.append(
            "scalargrad with the collector on vs micrograd with it off: "
            + ratio(result["micrograd, GC off"]["seconds"], result["scalargrad, GC on"]["seconds"])
        )
    print_table(
        "moons training step, MLP(2, [16, 16, 1]), 100 points (ms)",
        ["engine", "forward", "backward", "update", "step", "spread", "graph nodes", "nodes/s", "speed-up"],
        rows,
        notes,
    )

    memory = [["scalargrad", f"{bytes_per_node(demos['scalargrad']):.0f}"]]
    if theirs is not None:
        memory.append(["micrograd", f"{bytes_per_node(theirs):.0f}"])
    print_table("Memory of a step's graph (tracemalloc)", ["engine", "bytes per node"], memory)

    build, back = chain(args.chain)
    print_table(
        f"Depth: a chain of {args.chain:,} relu nodes (collector on)",
        ["engine", "build (s)", "backward (s)"],
        [["scalargrad", build, back]],
        [micrograd_chain()],
    )


if __name__ == "__main__":
    main()
