"""How fast tensorgrad trains on a GPU (`device="cuda"`, through CuPy), next to PyTorch on the same GPU.

Three training steps, float32, each the same code in both libraries:

1. The MLP 784-256-128-10 step of `benchmarks/tensor.py` (`F.linear`, `F.relu`, `F.cross_entropy`;
   here `optim.SGD` with lr 0.1 updates the weights) at batches 1024 and 8192. Goal: tensorgrad within 1.5x of
   PyTorch at batch 8192, where the arrays are big enough for the GPU's own speed to show
   (at small batches, Python's per-op bookkeeping is what is timed).
2. One convolution, forward and backward: a batch of 64 images of 16 x 32 x 32 through 32 3 x 3
   filters, padding 1 (`benchmarks/conv.py`'s largest size).
3. The `examples/digits_cnn.py` network (two 3 x 3 convolutions with ReLU and max pooling, a
   linear layer), one SGD step on a batch of 1024 8 x 8 images.
4. The MLP step of 1. at the largest batch in mixed precision: the loss under
   `autocast("cuda", dtype=float16)` (float16 products on the GPU's tensor cores), scaled by a
   `GradScaler`, as PyTorch users train (its losses checked to float16's precision).

Each timed step ends with `tg.cuda.synchronize()` (`torch.cuda.synchronize()`): the GPU runs
asynchronously, and a step is done when its work is. Before timing, each step's losses over
three steps are checked (the convolution's: the sum of its output): tensorgrad's against
PyTorch's on the GPU (and, for the MLP, against the numpy step of `benchmarks/tensor.py` on the
CPU). PyTorch runs without TF32, as CuPy does.
Each library runs in a process of its own; the processes take turns, round by round, and the
ratios are medians of the ratios within a round (see `_common.interleaved`).

    python benchmarks/gpu.py               # the figures (about a minute, most of it starting CUDA)
    python benchmarks/gpu.py --quick       # a smoke run: batch 1024 and the convolution, 3 rounds

Without a GPU (or without CuPy) it prints one line saying so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import _common  # puts the checkout on sys.path, so the imports below work uninstalled
import numpy as np
import tensor as cpu_bench  # benchmarks/tensor.py: the MLP, its init, batch and numpy step
from _common import Worker, interleaved, paired_ratio, print_table, ratio

import tensorgrad as tg

try:
    import torch
except ImportError:
    torch = None

LIBRARIES = ("tensorgrad", "torch")
GOAL = 1.5  # tensorgrad / PyTorch at the largest MLP batch
CONV_SHAPE, CONV_FILTERS = (64, 16, 32, 32), 32
CNN_BATCH = 1024
TOLERANCES = {"cnn": 1e-3, "mlp_amp": 1e-2}  # losses' agreement; float16's steps are 1e-3 apart
STEPS_PER_ROUND = 25  # in a row, as a training loop runs them (see the README's "On a GPU")


def torch_cuda() -> bool:
    """Whether PyTorch is installed and sees the GPU."""
    return torch is not None and torch.cuda.is_available()


def library(name: str):
    """tensorgrad or torch, and its `synchronize`."""
    if name == "tensorgrad":
        return tg, tg.cuda.synchronize
    torch.backends.cuda.matmul.allow_tf32 = False  # CuPy's matmuls and convolutions are plain float32
    torch.backends.cudnn.allow_tf32 = False
    return torch, torch.cuda.synchronize


def on_gpu(lib, array: np.ndarray, requires_grad: bool = False):
    """`array` as a tensor on the GPU: the same call in both libraries."""
    return lib.tensor(array, requires_grad=requires_grad, device="cuda")


# --- the steps: each a function of nothing, as the timing wants ---------------------------------


def mlp_step(name: str, batch: int) -> Callable[[], object]:
    """One SGD step of the MLP on the GPU, synchronised; returns the loss tensor."""
    lib, loss_of, optimizer, synchronize = mlp_on_gpu(name, batch)
    return training_step(loss_of, optimizer, synchronize)


def mlp_amp_step(name: str, batch: int) -> Callable[[], object]:
    """The MLP's SGD step in mixed precision on the GPU (autocast float16 and a GradScaler)."""
    lib, loss_of, optimizer, synchronize = mlp_on_gpu(name, batch)
    return mixed_precision_step(lib, "cuda", loss_of, optimizer, synchronize)


def mlp_on_gpu(name: str, batch: int) -> tuple:
    """The MLP's batch and weights on the GPU: the library, its loss (a function of nothing), an
    SGD optimizer and the library's `synchronize`."""
    lib, synchronize = library(name)
    x, y = cpu_bench.make_batch(batch)
    tx, ty = on_gpu(lib, x), on_gpu(lib, y)
    params = [on_gpu(lib, p, requires_grad=True) for p in cpu_bench.init_params()]
    optimizer = lib.optim.SGD(params, lr=cpu_bench.LR)
    return lib, lambda: cpu_bench.functional_loss(lib.nn.functional, tx, ty, params), optimizer, synchronize


def mixed_precision_step(lib, device: str, loss_of: Callable[[], object], optimizer,
                         synchronize: Callable[[], None]) -> Callable[[], object]:
    """A step as PyTorch's mixed-precision recipe has it: the loss under autocast, then the scaled
    backward, the scaler's step (skipped if a gradient overflowed) and its update; returns the loss."""
    scaler = lib.amp.GradScaler(device)

    def step():
        with lib.autocast(device, dtype=lib.float16):
            loss = loss_of()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        synchronize()
        return loss

    return step


def training_step(loss_of: Callable[[], object], optimizer,
                  synchronize: Callable[[], None]) -> Callable[[], object]:
    """A step: the loss, its gradients, the update, then a wait for the GPU; returns the loss."""

    def step():
        loss = loss_of()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        synchronize()
        return loss

    return step


def conv_step(name: str, batch: int) -> Callable[[], object]:
    """conv2d forward and backward (x, weight and bias gradients) on the GPU, synchronised."""
    lib, synchronize = library(name)
    rng = np.random.default_rng(0)
    n, c, h, w = (batch, *CONV_SHAPE[1:])
    x = on_gpu(lib, rng.standard_normal((n, c, h, w), dtype=np.float32), requires_grad=True)
    weight = on_gpu(lib, (rng.standard_normal((CONV_FILTERS, c, 3, 3)) / np.sqrt(c * 9)).astype(np.float32),
                    requires_grad=True)
    bias = on_gpu(lib, rng.standard_normal(CONV_FILTERS, dtype=np.float32), requires_grad=True)
    grad = on_gpu(lib, rng.standard_normal((n, CONV_FILTERS, h, w), dtype=np.float32))

    def step():
        for t in (x, weight, bias):
            t.grad = None
        out = lib.nn.functional.conv2d(x, weight, bias, padding=1)
        out.backward(grad)
        synchronize()
        return out

    return step


def cnn_model(lib):
    """The digits_cnn network, in `lib`."""
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 2 * 2, 10))


def cnn_step(name: str, batch: int) -> Callable[[], object]:
    """One SGD step of the digits CNN on the GPU, synchronised: both libraries from tensorgrad's
    initial weights (seed 0)."""
    lib, synchronize = library(name)
    tg.manual_seed(0)
    weights = {k: v.numpy() for k, v in cnn_model(tg).state_dict().items()}  # made on the CPU
    model = cnn_model(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    model.to("cuda")
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    x = on_gpu(lib, rng.random((batch, 1, 8, 8), dtype=np.float32))
    y = on_gpu(lib, rng.integers(0, 10, batch))
    return training_step(lambda: lib.nn.functional.cross_entropy(model(x), y), optimizer, synchronize)


STEPS = {"mlp": mlp_step, "conv": conv_step, "cnn": cnn_step, "mlp_amp": mlp_amp_step}


def make_candidate(spec: str) -> Callable[[], object]:
    """The step a worker process times, from its spec `kind:library:batch`."""
    kind, name, batch = spec.split(":")
    return STEPS[kind](name, int(batch))


# --- checks and timing -------------------------------------------------------------------------


def losses(step: Callable[[], object], steps: int = 3) -> list[float]:
    """What each of `steps` calls returns, summed to a number on the host (a loss is one already)."""
    return [float(step().sum().item()) for _ in range(steps)]


def check(kind: str, batch: int, libraries: tuple[str, ...]) -> str:
    """Three steps' losses agree across the libraries (and, for the MLP, with numpy's on the CPU)."""
    found = {name: losses(make_candidate(f"{kind}:{name}:{batch}")) for name in libraries}
    if kind == "mlp":
        x, y = cpu_bench.make_batch(batch)
        params = cpu_bench.init_params()
        found["numpy (CPU)"] = [cpu_bench.numpy_step(x, y, params) for _ in range(3)]
    reference = found["tensorgrad"]
    for name, values in found.items():
        np.testing.assert_allclose(values, reference, rtol=TOLERANCES.get(kind, 2e-4),
                                   err_msg=f"{kind} at batch {batch}: {name}'s losses against tensorgrad's")
    return ", ".join(found)


def timed(kind: str, batch: int, libraries: tuple[str, ...], repeats: int, number: int) -> dict:
    """Each library's step in a process of its own, taking turns (see `_common.interleaved`)."""
    workers = {}
    try:
        for name in libraries:
            workers[name] = Worker([__file__, "--worker", f"{kind}:{name}:{batch}"])
        return interleaved(workers, repeats=repeats, number=number, warmup=3)
    finally:
        for worker in workers.values():
            worker.close()


def main(argv: list[str] | None = None) -> None:
    """Check, time and print one table; or, without a GPU, say so in one line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: batch 1024, 3 rounds")
    parser.add_argument("--batches", default="1024,8192", help="MLP batch sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=None, help="timed rounds (default 10, 3 with --quick)")
    parser.add_argument("--steps-per-round", type=int, default=STEPS_PER_ROUND,
                        help=f"steps timed in a row in each round (default {STEPS_PER_ROUND})")
    parser.add_argument("--cases", default="mlp,conv,cnn,mlp_amp", help="which steps, comma-separated")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out even if it sees the GPU")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if not tg.cuda.is_available():
        print("benchmarks/gpu.py: nothing to time: tensorgrad sees no CUDA GPU here "
              "(tg.cuda.is_available() is False: it needs CuPy and an NVIDIA GPU)")
        return
    if args.worker:
        _common.serve_blocks(make_candidate(args.worker))
        return
    libraries = ("tensorgrad",) + (("torch",) if torch_cuda() and not args.no_torch else ())
    repeats = args.repeats or (3 if args.quick else 10)
    batches = [int(b) for b in args.batches.split(",")]
    batches = batches[:1] if args.quick else batches
    gpu = torch.cuda.get_device_name(0) if torch_cuda() else "a CUDA GPU"
    print(f"# tensorgrad on the GPU: {gpu}, numpy {np.__version__}, "
          + (f"torch {torch.__version__}" if "torch" in libraries else "PyTorch not timed (no CUDA torch)")
          + f", Python {sys.version.split()[0]}")

    cases = [("mlp", batch, f"MLP 784-256-128-10 SGD step, batch {batch}") for batch in batches]
    cases.append(("conv", CONV_SHAPE[0], f"conv2d fwd + bwd, {CONV_SHAPE} -> {CONV_FILTERS}, 3 x 3"))
    if not args.quick:
        cases.append(("cnn", CNN_BATCH, f"digits_cnn SGD step, batch {CNN_BATCH}"))
        cases.append(("mlp_amp", max(batches), f"MLP step in mixed precision (autocast float16, GradScaler), "
                                               f"batch {max(batches)}"))
    cases = [case for case in cases if case[0] in args.cases.split(",")]
    rows, checked = [], []
    for kind, batch, label in cases:
        checked.append(f"{label}: {check(kind, batch, libraries)}")
        result = timed(kind, batch, libraries, repeats, number=args.steps_per_round)
        ms = {name: r["seconds"] * 1e3 for name, r in result.items()}
        to_torch = paired_ratio(result, "tensorgrad", "torch")
        goal = "-" if kind != "mlp" or batch != max(batches) or to_torch is None else \
            ("yes" if to_torch <= GOAL else "NO")
        rows.append([label, ms["tensorgrad"], ms.get("torch"), ratio(to_torch), goal,
                     " / ".join(f"{r['spread']:.0%}" for r in result.values())])
    print_table("Training steps on the GPU, float32 unless said (ms per step, median)",
                ["step", "tensorgrad", "torch", "tensorgrad / torch", f"<= {GOAL}x", "spread"], rows,
                notes=[f"Median of {repeats} interleaved rounds of {args.steps_per_round} steps, each step "
                       "synchronised; the "
                       "ratio is the median of the per-round ratios. Goal: tensorgrad within "
                       f"{GOAL}x of PyTorch at MLP batch {max(batches)}. spread: interquartile range of "
                       "the rounds over the median, " + " / ".join(libraries) + ".",
                       "Checked first, three steps' losses agreeing: " + "; ".join(checked) + "."])


if __name__ == "__main__":
    main()
