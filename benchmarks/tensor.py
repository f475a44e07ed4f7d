"""How fast and how lean tensorgrad is, next to hand-written numpy and PyTorch.

Four tables, every ratio measured in one run with the variants interleaved round by round:

1. An MLP 784-256-128-10 training step (ReLU, softmax cross-entropy on class indices, SGD with
   lr 0.1, float32) at several batch sizes: hand-written numpy (the baseline: forward, stable
   log-softmax, backward by hand, in-place update); tensorgrad written as a user would, with
   `nn.functional` (`F.linear`, `F.relu`, `F.cross_entropy`); the same step from tensorgrad's
   plain ops (`x @ W.T + b`, `log_softmax`, indexing: one node per op); and PyTorch when
   installed, running the very `nn.functional` code of the tensorgrad variant, with torch's
   thread count set to numpy's BLAS thread count. Before
   timing, one step of each is checked against numpy's: same loss, gradients and update.
   Each variant runs in a process of its own, so that it meets the allocator state its own
   training loop would; the table shows the page faults per step, which is where glibc giving
   memory back to the OS (and taking it again) shows.
2. Per-op overhead: `c = a*b + a; c.sum().backward()` on (1, 1) tensors.
3. Matmul forward and backward at the BLAS rate, against the three raw `np.matmul` calls.
4. Peak memory of 10 MLP steps: tracemalloc (numpy reports its buffers to it) and, per variant
   in a fresh process, the peak resident set size.

Run from the root of a checkout (installed or not):

    python benchmarks/tensor.py                  # the figures (a few minutes on 2 cores)
    python benchmarks/tensor.py --quick          # a smoke run (seconds)
    python benchmarks/tensor.py --batches 64,512 --repeats 50 --threads 1 --tables mlp,op
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import subprocess
import sys
import tracemalloc
from collections.abc import Callable

import _common  # puts the checkout on sys.path, so the imports below work uninstalled
import numpy as np
from _common import Worker, interleaved, paired_ratio, print_table, ratio

import tensorgrad as tg

# PyTorch, imported by `_import_torch` unless `--no-torch` says it is left out: importing it takes
# 1.8 s, and each variant runs in a process of its own (a smoke run's five spent 9 s there). With
# PyTorch in the run, every process imports it, as when the README's figures were measured.
torch = F = None


def _import_torch() -> bool:
    """Import PyTorch (and its `nn.functional` as `F`) into this module; False if not installed."""
    global torch, F
    try:
        import torch as module
        import torch.nn.functional as functional
    except ImportError:
        return False
    torch, F = module, functional
    return True

VARIANTS = ("numpy", "tensorgrad", "tensorgrad-ops", "torch")
TABLES = ("mlp", "op", "matmul", "memory")
SIZES = (784, 256, 128, 10)
LR = 0.1
Params = list[np.ndarray]


# --- the MLP training step, three ways ----------------------------------------------------------


def init_params(seed: int = 0) -> Params:
    """W1, b1, W2, b2, W3, b3 for 784-256-128-10, W shaped (out, in) as in nn.Linear, PyTorch's init."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:], strict=True):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return params


def make_batch(batch: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A batch of random float32 inputs and int64 class labels in [0, 10)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, SIZES[0])).astype(np.float32), rng.integers(0, 10, batch)


def numpy_loss_and_grads(x: np.ndarray, y: np.ndarray, params: Params) -> tuple[float, Params]:
    """The loss and its gradients by hand: the baseline, as a competent numpy user writes it."""
    W1, b1, W2, b2, W3, b3 = params
    rows = np.arange(len(y))
    h1 = np.maximum(x @ W1.T + b1, 0)
    h2 = np.maximum(h1 @ W2.T + b2, 0)
    z = h2 @ W3.T + b3
    z -= z.max(axis=1, keepdims=True)  # stable log-softmax
    e = np.exp(z)
    total = e.sum(axis=1, keepdims=True)
    loss = np.log(total).mean() - z[rows, y].mean()
    dz = e / total  # d loss / d logits = (softmax - onehot) / batch
    dz[rows, y] -= 1
    dz /= len(y)
    dh2 = (dz @ W3) * (h2 > 0)
    dh1 = (dh2 @ W2) * (h1 > 0)
    grads = [dh1.T @ x, dh1.sum(axis=0), dh2.T @ h1, dh2.sum(axis=0), dz.T @ h2, dz.sum(axis=0)]
    return float(loss), grads


def numpy_step(x: np.ndarray, y: np.ndarray, params: Params) -> float:
    """One SGD step in numpy, updating `params` in place."""
    loss, grads = numpy_loss_and_grads(x, y, params)
    for p, g in zip(params, grads, strict=True):
        p -= LR * g
    return loss


def functional_loss(F, x, y, params):  # noqa: N803 - F as in `import torch.nn.functional as F`
    """The MLP's mean cross-entropy with `nn.functional`: the same code for tensorgrad and torch."""
    W1, b1, W2, b2, W3, b3 = params
    h1 = F.relu(F.linear(x, W1, b1))
    h2 = F.relu(F.linear(h1, W2, b2))
    return F.cross_entropy(F.linear(h2, W3, b3), y)


def ops_loss(x: tg.Tensor, y: tg.Tensor, params: list[tg.Tensor]) -> tg.Tensor:
    """The same loss from tensorgrad's plain ops (`@`, `+`, `log_softmax`, indexing, `mean`)."""
    W1, b1, W2, b2, W3, b3 = params
    logits = ((x @ W1.T + b1).relu() @ W2.T + b2).relu() @ W3.T + b3
    return -logits.log_softmax(-1)[tg.arange(x.shape[0]), y].mean()


def loss_of(variant: str) -> Callable:
    """The loss function of an autograd variant: loss(x, y, params) -> a scalar tensor."""
    if variant == "tensorgrad":
        return lambda x, y, params: functional_loss(tg.nn.functional, x, y, params)
    if variant == "tensorgrad-ops":
        return ops_loss
    return lambda x, y, params: functional_loss(F, x, y, params)


def sgd_update(lib, params) -> None:
    """The SGD update as users write it in tensorgrad and PyTorch alike (`lib` is either)."""
    with lib.no_grad():
        for p in params:
            p -= LR * p.grad
            p.grad = None


def autograd_setup(variant: str, x: np.ndarray, y: np.ndarray):
    """The library, batch and fresh parameters (from the shared init) of an autograd variant."""
    lib = torch if variant == "torch" else tg
    params = [lib.tensor(p, requires_grad=True) for p in init_params()]
    return lib, lib.from_numpy(x), lib.from_numpy(y), params


def autograd_step(variant: str, x: np.ndarray, y: np.ndarray) -> Callable[[], object]:
    """A no-argument SGD step of an autograd variant: loss, backward, update under no_grad."""
    lib, tx, ty, params = autograd_setup(variant, x, y)
    loss_fn = loss_of(variant)

    def step():
        loss = loss_fn(tx, ty, params)
        loss.backward()
        sgd_update(lib, params)
        return loss

    return step


def mlp_steps(batch: int, variants: tuple[str, ...]) -> dict[str, Callable[[], object]]:
    """A no-argument step function per variant, each on its own copy of the same init and batch."""
    x, y = make_batch(batch)
    steps: dict[str, Callable[[], object]] = {}
    for variant in variants:
        if variant == "numpy":
            steps["numpy"] = functools.partial(numpy_step, x, y, init_params())
        else:
            steps[variant] = autograd_step(variant, x, y)
    return steps


def check_mlp(batch: int, variants: tuple[str, ...]) -> str:
    """Check that every autograd variant computes numpy's loss, gradients and update.

    So that no variant can look fast by doing less work. Raises AssertionError on a mismatch.
    """
    x, y = make_batch(batch)
    expected_loss, expected_grads = numpy_loss_and_grads(x, y, init_params())
    numpy_params = init_params()
    numpy_step(x, y, numpy_params)
    checked = [v for v in variants if v != "numpy"]
    for variant in checked:
        lib, tx, ty, params = autograd_setup(variant, x, y)
        loss = loss_of(variant)(tx, ty, params)
        loss.backward()
        np.testing.assert_allclose(loss.item(), expected_loss, rtol=1e-5, err_msg=f"{variant} loss")
        for i, (p, g) in enumerate(zip(params, expected_grads, strict=True)):
            grad = np.asarray(p.grad)
            assert grad.dtype == np.float32, f"{variant} grad {i} is {grad.dtype}"
            np.testing.assert_allclose(grad, g, rtol=1e-4, atol=1e-6, err_msg=f"{variant} grad {i}")
        sgd_update(lib, params)  # the update from the same init agrees too
        for i, (a, b) in enumerate(zip(params, numpy_params, strict=True)):
            np.testing.assert_allclose(a.detach().numpy(), b, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{variant} param {i}")
    return ", ".join(checked[:-1]) + " and " + checked[-1] if len(checked) > 1 else checked[0]


def bench_mlp(batches: list[int], repeats: int, variants: tuple[str, ...], threads: int | None) -> None:
    """Table 1: ms per training step, and the ratios to numpy.

    Each variant runs in a process of its own (so that its allocator state is the one a
    training loop of its own would see), and the processes take turns, round by round.
    """
    checked = [check_mlp(batch, variants) for batch in batches][0]
    rows = []
    for batch in batches:
        # About 30 ms of work per timed block, whatever the batch size.
        result = timed_in_workers({v: f"mlp:{v}:{batch}" for v in variants}, repeats,
                                  number=max(1, 8_000 // batch), threads=threads)
        tg_ratio = paired_ratio(result, "tensorgrad", "numpy")
        rows.append([batch] + [result[v]["seconds"] * 1e3 if v in result else None for v in VARIANTS]
                    + [ratio(paired_ratio(result, v, "numpy")) for v in VARIANTS[1:]]
                    + ["yes" if tg_ratio <= 1.15 else "NO",
                       " / ".join(f"{result[v]['spread'] * 100:.0f}%" for v in result),
                       " / ".join(f"{result[v]['faults']:.0f}" for v in result)])
    print_table("MLP 784-256-128-10 training step (ms per step, median)",
                ["batch", *VARIANTS, *(f"{v}/numpy" for v in VARIANTS[1:]), "tensorgrad <= 1.15x",
                 "spread", "faults/step"], rows,
                [f"Checked first, at every batch size: {checked} {'give' if ' and ' in checked else 'gives'} "
                 "numpy's loss, gradients and updated weights from the same initialisation.",
                 "tensorgrad and torch run the same code, written with nn.functional (F.linear, F.relu, "
                 "F.cross_entropy); tensorgrad-ops writes the same step with plain ops (x @ W.T + b, "
                 ".relu(), -log_softmax(logits)[rows, labels].mean()), one graph node per op.",
                 "Each variant runs in its own process; the processes take turns, a block of steps "
                 "each, round after round. Times are medians over the rounds; the ratios are medians "
                 "of the ratios within a round. spread: the interquartile range of the rounds over "
                 "the median; faults/step: minor page faults per step in steady state (memory that "
                 f"glibc gave back to the OS and the next step took again); each {' / '.join(variants)}."])


def timed_in_workers(specs: dict[str, str], repeats: int, number: int, threads: int | None,
                     pause: float = 0.2) -> dict[str, dict]:
    """Time each candidate (named by a `make_candidate` spec) in a process of its own.

    A process of its own gives each candidate the allocator state its own loop would have: in
    one shared process, one candidate's frees decide whether the next one's buffers come back
    from glibc's heap or from fresh pages. The processes take turns (see `interleaved`); the
    pause before each block lets the BLAS threads of the previous process stop spinning.
    """
    workers = {}
    try:
        for name, spec in specs.items():
            workers[name] = Worker([__file__, "--worker", spec, *_child_options(threads)])
        return interleaved(workers, repeats=repeats, number=number, warmup=3, pause=pause)
    finally:
        for worker in workers.values():
            worker.close()


def _child_options(threads: int | None) -> list[str]:
    """The options a worker or memory process gets from this one: its BLAS threads, and
    `--no-torch` where PyTorch is left out here (so that the child does not import it either)."""
    options = ["--threads", str(threads)] if threads is not None else []
    return options + (["--no-torch"] if torch is None else [])


def make_candidate(spec: str) -> Callable[[], object]:
    """The function a worker process times, from its spec `table:variant:size`."""
    table, variant, size = spec.split(":")
    if table == "mlp":
        return mlp_steps(int(size), (variant,))[variant]
    if table == "op":
        return per_op_candidate(variant)
    if table in ("matmul", "matmul.T"):
        return matmul_candidate(variant, int(size), transposed=table == "matmul.T")
    raise ValueError(f"unknown benchmark worker spec {spec!r}")


# --- per-op overhead ----------------------------------------------------------------------------


def per_op_candidate(variant: str) -> Callable[[], object]:
    """`c = a*b + a; c.sum().backward()` on (1, 1) float32 tensors, in one variant."""
    a = np.full((1, 1), 0.5, dtype=np.float32)
    b = np.full((1, 1), 2.0, dtype=np.float32)
    if variant == "numpy":
        def numpy_by_hand() -> tuple[np.ndarray, np.ndarray]:
            c = a * b + a
            c.sum()
            grad_c = np.ones_like(c)  # d sum / d c
            return grad_c * b + grad_c, grad_c * a  # d sum / d a, d sum / d b

        return numpy_by_hand
    lib = tg if variant == "tensorgrad" else torch  # the same three lines in both
    ta, tb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)

    def autograd_op() -> None:
        c = ta * tb + ta
        c.sum().backward()
        ta.grad = tb.grad = None

    return autograd_op


def bench_per_op(repeats: int, number: int, variants: tuple[str, ...], threads: int | None) -> None:
    """Table 2: microseconds per forward + backward of a three-op graph on (1, 1) tensors."""
    result = timed_in_workers({v: f"op:{v}:1" for v in variants}, repeats, number, threads, pause=0)
    rows = [[name, r["seconds"] * 1e6, ratio(paired_ratio(result, name, "numpy")),
             ratio(paired_ratio(result, name, "torch")), f"{r['spread'] * 100:.0f}%"]
            for name, r in result.items()]
    to_torch = paired_ratio(result, "tensorgrad", "torch")
    target = "-" if to_torch is None else ("yes" if to_torch <= 1 / 3 else "NO")
    print_table("Per-op overhead: c = a*b + a; c.sum().backward() on (1, 1) float32 (µs per iteration)",
                ["variant", "µs", "/ numpy", "/ torch", "spread"], rows,
                [f"Target tensorgrad <= 1/3 of torch: {target}. numpy is the same arithmetic, "
                 "forward and backward, written by hand; tensorgrad and torch also reset the "
                 "leaves' grads to None each iteration."])


# --- matmul at the BLAS rate --------------------------------------------------------------------


def matmul_candidate(variant: str, n: int, transposed: bool) -> Callable[[], object]:
    """tensorgrad's `a @ b` (or `a.T @ b`) forward + backward, or the 3 raw matmuls it needs."""
    rng = np.random.default_rng(2)
    a, b, g = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(3))
    if variant == "numpy" and transposed:
        # out = a.T @ b; d/da = b @ g.T, d/db = a @ g, transposes as views.
        return lambda: (np.matmul(a.T, b), np.matmul(b, g.T), np.matmul(a, g))
    if variant == "numpy":
        # out = a @ b; d/da = g @ b.T, d/db = a.T @ g, transposes as views.
        return lambda: (np.matmul(a, b), np.matmul(g, b.T), np.matmul(a.T, g))
    ta, tb = tg.from_numpy(a).requires_grad_(), tg.from_numpy(b).requires_grad_()
    tgrad = tg.from_numpy(g)

    def tensorgrad_mm() -> None:
        ((ta.T if transposed else ta) @ tb).backward(tgrad)
        ta.grad = tb.grad = None

    return tensorgrad_mm


def bench_matmul(n: int, repeats: int, threads: int | None) -> None:
    """Table 3: matmul forward + backward, tensorgrad against the three raw np.matmul calls."""
    rows = []
    flops = 3 * 2 * n**3
    for transposed in (False, True):
        table = "matmul.T" if transposed else "matmul"
        result = timed_in_workers({v: f"{table}:{v}:{n}" for v in ("numpy", "tensorgrad")}, repeats,
                                  number=1, threads=threads)
        numpy_s, tg_s = result["numpy"]["seconds"], result["tensorgrad"]["seconds"]
        rows.append([f"({n}x{n}){'.T' if transposed else ''} @ ({n}x{n})", numpy_s * 1e3, tg_s * 1e3,
                     ratio(paired_ratio(result, "tensorgrad", "numpy")), flops / numpy_s / 1e9,
                     flops / tg_s / 1e9,
                     f"{result['numpy']['spread'] * 100:.0f}% / {result['tensorgrad']['spread'] * 100:.0f}%",
                     f"{result['numpy']['faults']:.0f} / {result['tensorgrad']['faults']:.0f}"])
    print_table("Matmul forward + backward, float32 (ms; numpy = the three raw np.matmul calls)",
                ["op", "numpy", "tensorgrad", "tensorgrad/numpy", "numpy GFLOP/s",
                 "tensorgrad GFLOP/s", "spread", "faults/call"], rows,
                ["The backward is seeded with a random gradient of the output's shape; the raw "
                 "calls pass the transposes as views, as tensorgrad should. Each runs in its own "
                 "process, taking turns; spread and faults as in the MLP table, numpy / tensorgrad."])


# --- peak memory --------------------------------------------------------------------------------


def traced_peak(step: Callable[[], object], steps: int) -> int:
    """The tracemalloc peak above the starting point, in bytes, over `steps` calls of `step`."""
    step()  # warm up: lazy imports and caches are not part of a step
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for _ in range(steps):
        step()
    peak = tracemalloc.get_traced_memory()[1] - start
    tracemalloc.stop()
    return peak


def rss_child(variant: str, batch: int, steps: int) -> None:
    """In a fresh process: print the peak RSS above the RSS before `steps` steps, in bytes.

    A few steps at batch 2 come first, so that what a library sets up once (torch's autograd
    engine and thread pools) is not counted, while the big step's buffers are still new.
    """
    warmup = mlp_steps(2, (variant,))[variant]
    for _ in range(3):
        warmup()
    del warmup
    step = mlp_steps(batch, (variant,))[variant]
    gc.collect()
    base = _common.reset_peak_rss()
    for _ in range(steps):
        step()
    print(json.dumps(None if base is None else _common.peak_rss() - base))


def rss_in_subprocess(variant: str, batch: int, steps: int, threads: int | None) -> int | None:
    """Run `rss_child` for one variant in a fresh interpreter and return what it measured."""
    command = [sys.executable, __file__, "--rss-child", variant, "--batches", str(batch),
               "--memory-steps", str(steps), *_child_options(threads)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_memory(batch: int, steps: int, variants: tuple[str, ...], threads: int | None) -> None:
    """Table 4: peak memory of `steps` MLP steps, tracemalloc and RSS."""
    steps_by_variant = mlp_steps(batch, variants)
    traced = {v: traced_peak(steps_by_variant[v], steps) for v in variants if v != "torch"}
    x, y = make_batch(batch)
    resident = x.nbytes + y.nbytes + sum(p.nbytes for p in init_params())
    rows, rss = [], {}
    for variant in variants:
        rss[variant] = rss_in_subprocess(variant, batch, steps, threads)
        peak = traced.get(variant)
        rows.append([variant, _mib(peak), ratio(peak, traced["numpy"]),
                     _mib(None if peak is None else peak + resident),
                     ratio(None if peak is None else peak + resident, traced["numpy"] + resident),
                     _mib(rss[variant]), ratio(rss[variant], rss["numpy"])])

    def verdict(ours: float | None, baseline: float | None) -> str:
        return "-" if ours is None or baseline is None else ("yes" if ours <= 1.3 * baseline else "NO")

    targets = (f"peak RSS {verdict(rss.get('tensorgrad'), rss.get('numpy'))}, with weights and batch "
               f"{verdict(traced['tensorgrad'] + resident, traced['numpy'] + resident)}, step peak alone "
               f"{verdict(traced['tensorgrad'], traced['numpy'])}")
    print_table(f"Peak memory of {steps} MLP training steps at batch {batch} (MiB)",
                ["variant", "step peak", "/ numpy", "with weights and batch", "/ numpy",
                 "step peak RSS", "/ numpy"], rows,
                [f"Target tensorgrad <= 1.3x numpy: {targets}. step peak: the tracemalloc "
                 "peak above what was allocated before the steps (numpy reports its buffers to "
                 f"tracemalloc; torch does not); with weights and batch: plus the {_mib(resident):.1f} "
                 "MiB of weights and batch that every variant holds throughout; step peak RSS: the "
                 "same steps alone in a fresh process (after a few steps at batch 2 that set up each "
                 "library), peak resident set size above the RSS before the first step."])


def _mib(n: int | None) -> float | None:
    return None if n is None else n / 2**20


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    """Parse the options and print the four tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run with small sizes")
    parser.add_argument("--batches", default="32,256,1024", help="MLP batch sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed rounds per figure (default 30, or 3 with --quick)")
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS threads for numpy (and torch); default: numpy's own setting")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out even if installed")
    parser.add_argument("--tables", default=",".join(TABLES),
                        help=f"which tables to print, comma-separated (default: all of {','.join(TABLES)})")
    parser.add_argument("--memory-batch", type=int, default=None,
                        help="batch size of the memory table (default 1024, or 256 with --quick)")
    parser.add_argument("--memory-steps", type=int, default=10, help="MLP steps the memory table runs")
    parser.add_argument("--rss-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    use_torch = not args.no_torch and _import_torch()
    threads = _common.use_threads(args.threads, torch if use_torch else None)
    variants = ("numpy", "tensorgrad", "tensorgrad-ops") + (("torch",) if use_torch else ())
    batches = [int(b) for b in args.batches.split(",")]

    if args.rss_child:
        rss_child(args.rss_child, batches[0], args.memory_steps)
        return
    if args.worker:
        _common.serve_blocks(make_candidate(args.worker))
        return

    repeats = args.repeats or (3 if args.quick else 30)
    if args.quick:
        batches = [b for b in batches if b <= 256] or batches[:1]
    print(f"# tensorgrad benchmarks: {_common.cpu_summary()}, numpy {np.__version__} "
          f"(BLAS threads: {threads if threads is not None else 'unknown'}), "
          + (f"torch {torch.__version__} (threads: {torch.get_num_threads()})" if use_torch
             else "torch left out" if args.no_torch else "torch not installed")
          + f", Python {sys.version.split()[0]}")
    tables = args.tables.split(",")
    if unknown := set(tables) - set(TABLES):
        parser.error(f"unknown tables {sorted(unknown)}; choose from {', '.join(TABLES)}")
    if "mlp" in tables:
        bench_mlp(batches, repeats, variants, threads)
    if "op" in tables:
        per_op_variants = tuple(v for v in variants if v != "tensorgrad-ops")  # an MLP-only variant
        bench_per_op(repeats, 200 if args.quick else 2000, per_op_variants, threads)
    if "matmul" in tables:
        bench_matmul(256 if args.quick else 1024, repeats, threads)
    if "memory" in tables:
        bench_memory(args.memory_batch or (256 if args.quick else 1024), args.memory_steps, variants,
                     threads)


if __name__ == "__main__":
    main()
