"""Helpers shared by the benchmark scripts: interleaved timing, tables, BLAS threads, memory.

Importing this module also puts the checkout's root on `sys.path`, so that
`python benchmarks/<name>.py` works from a fresh clone without installing the packages.

The timing follows one rule: every figure that is compared with another is measured in the
same run, interleaved with it round by round, so that a noisy machine (a shared 2-core box,
a CI runner) slows all of them alike; a figure is the median over the rounds.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# --- timing -------------------------------------------------------------------------------------


Block = Callable[[int], tuple[float, int]]
"""Runs its candidate `number` times; returns the seconds taken and the minor page faults."""


def local_block(call: Callable[[], object]) -> Block:
    """A `Block` that runs `call` in this process."""

    def block(number: int) -> tuple[float, int]:
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        for _ in range(number):
            call()
        elapsed = time.perf_counter() - start
        return elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults

    return block


def interleaved(candidates: dict[str, Block], repeats: int, number: int,
                warmup: int = 1, pause: float = 0.0) -> dict[str, dict[str, float]]:
    """Time each candidate `number` calls at a time, for `repeats` rounds, interleaved.

    Each round runs every candidate once, in an order that rotates from round to round, so
    that drift in the machine's load falls on all of them alike. Returns, per candidate,
    `seconds` (the median time of one call), `spread` (the interquartile range over the rounds,
    relative to the median), `faults` (minor page faults per call: memory that the allocator
    handed back to the OS and touched again, or touched for the first time) and `rounds` (the
    time of one call in each round, for `paired_ratio`). `pause` seconds of sleep before each
    block let the BLAS threads of the block before stop spinning.
    """
    names = list(candidates)
    for name in names:
        for _ in range(warmup):
            candidates[name](number)
    times: dict[str, list[float]] = {name: [] for name in names}
    faults = dict.fromkeys(names, 0)
    for round_ in range(repeats):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            if pause:
                time.sleep(pause)
            elapsed, block_faults = candidates[name](number)
            times[name].append(elapsed / number)
            faults[name] += block_faults
    result = {}
    for name in names:
        ordered = sorted(times[name])
        mid = median(ordered)
        q1, q3 = ordered[len(ordered) // 4], ordered[(3 * len(ordered)) // 4]
        result[name] = {"seconds": mid, "spread": (q3 - q1) / mid if mid else 0.0,
                        "faults": faults[name] / (repeats * number), "rounds": times[name]}
    return result


def paired_ratio(result: dict[str, dict], name: str, reference: str) -> float | None:
    """The median over the rounds of `name`'s time over `reference`'s time in the same round.

    Steadier than a ratio of medians on a loaded machine: the two blocks of a round ran
    seconds apart, under the same load.
    """
    if name not in result or reference not in result:
        return None
    pairs = zip(result[name]["rounds"], result[reference]["rounds"], strict=True)
    return median(a / b for a, b in pairs)


class Worker:
    """A `Block` that runs in a child process of its own, so it has an allocator of its own.

    The child is `command` (a Python script run with this interpreter) and speaks a line
    protocol: it reads a count `n`, runs its candidate `n` times and answers with one JSON line
    `{"seconds": ..., "faults": ...}`; an empty line ends it. `serve_blocks` is that child's side.
    """

    def __init__(self, command: Sequence[str]) -> None:
        self.process = subprocess.Popen([sys.executable, *command], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)

    def __call__(self, number: int) -> tuple[float, int]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{number}\n")
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"benchmark worker {self.process.args} exited with {self.process.wait()}")
        reply = json.loads(answer)
        return reply["seconds"], reply["faults"]

    def close(self) -> None:
        """End the child process (one that already died is just reaped)."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write("\n")
            self.process.stdin.close()
        except OSError:
            pass
        self.process.wait()


def serve_blocks(call: Callable[[], object]) -> None:
    """The child side of `Worker`: answer each count read from stdin with a timed block."""
    block = local_block(call)
    for line in sys.stdin:
        if not line.strip():
            break
        elapsed, faults = block(int(line))
        print(json.dumps({"seconds": elapsed, "faults": faults}), flush=True)


# --- tables -------------------------------------------------------------------------------------


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]],
                notes: Sequence[str] = ()) -> None:
    """Print a Markdown table (so it pastes into the README as it is), with notes under it."""
    cells = [[str(c) for c in headers]] + [[_cell(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    print(f"\n### {title}\n")
    print(line(cells[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        print(line(row))
    for note in notes:
        print(f"\n{note}")
    sys.stdout.flush()


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def ratio(value: float | None, reference: float | None = 1.0) -> str:
    """`value / reference` as `1.07x`, or `-` when either is missing."""
    if value is None or not reference:
        return "-"
    return f"{value / reference:.2f}x"


# --- BLAS threads -------------------------------------------------------------------------------


def _openblas() -> ctypes.CDLL | None:
    """The OpenBLAS library numpy has loaded, found through this process's memory map (Linux)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


_GET = ("openblas_get_num_threads", "openblas_get_num_threads64_", "scipy_openblas_get_num_threads64_")
_SET = ("openblas_set_num_threads", "openblas_set_num_threads64_", "scipy_openblas_set_num_threads64_")


def _blas_function(names: Sequence[str]) -> Callable | None:
    lib = _openblas()
    for name in names if lib is not None else ():
        if hasattr(lib, name):
            return getattr(lib, name)
    return None


def blas_threads() -> int | None:
    """How many threads numpy's BLAS uses (None when it can't be asked: not OpenBLAS)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        get = _blas_function(_GET)
        return int(get()) if get is not None else None
    counts = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    return counts[0] if counts else None


def set_blas_threads(n: int) -> bool:
    """Ask numpy's BLAS to use `n` threads; False if it can't be done from here."""
    set_ = _blas_function(_SET)
    if set_ is None:
        return False
    set_(ctypes.c_int(n))
    return True


def use_threads(requested: int | None, torch_module: object | None = None) -> int | None:
    """Set numpy's BLAS to `requested` threads (when given), and torch to the same count.

    Returns the count numpy's BLAS ends up with (None when it can't be asked); `torch_module`
    (torch, or None to leave it alone) is set to that count too, so both libraries run alike.
    """
    if requested is not None and not set_blas_threads(requested):
        print(f"warning: could not set numpy's BLAS threads to {requested}", file=sys.stderr)
    threads = blas_threads()
    if torch_module is not None and threads is not None:
        torch_module.set_num_threads(threads)
    return threads


# --- memory -------------------------------------------------------------------------------------


def reset_peak_rss() -> int | None:
    """Reset the kernel's peak-RSS mark to the current RSS and return that, in bytes (Linux)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    return _proc_status("VmRSS")


def peak_rss() -> int | None:
    """The peak RSS since the last `reset_peak_rss`, in bytes (Linux), else `ru_maxrss`."""
    peak = _proc_status("VmHWM")
    if peak is not None:
        return peak
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _proc_status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def cpu_summary() -> str:
    """The number of CPUs this process may use, for the header of a run."""
    try:
        return f"{len(os.sched_getaffinity(0))} CPUs"
    except AttributeError:
        return f"{os.cpu_count()} CPUs"


def against_torch_arguments(doc: str, what: str, argv: list[str] | None,
                            torch_module: object | None) -> tuple[argparse.Namespace, bool, int]:
    """The command line of a benchmark that times tensorgrad against PyTorch in one process
    (`--quick`, `--repeats`, `--threads`, `--no-torch`), with the threads set and the header line
    printed. Returns the arguments, whether PyTorch is timed, and the number of rounds."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run (few rounds, small sizes)")
    parser.add_argument("--repeats", type=int, default=None, help="timed rounds (default 20, 3 with --quick)")
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads for numpy and torch")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out even if installed")
    args = parser.parse_args(argv)
    use_torch = torch_module is not None and not args.no_torch
    threads = use_threads(args.threads, torch_module if use_torch else None)
    import numpy as np  # (here: the rest of this module needs no numpy)

    torch_part = (f"torch {torch_module.__version__} (threads: {torch_module.get_num_threads()})"
                  if use_torch else "no torch")
    print(f"# {what}: {cpu_summary()}, numpy {np.__version__} (BLAS threads: "
          f"{threads if threads is not None else 'unknown'}), {torch_part}, Python {sys.version.split()[0]}")
    return args, use_torch, args.repeats or (3 if args.quick else 20)
