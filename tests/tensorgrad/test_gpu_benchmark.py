"""The GPU benchmark: where tensorgrad sees no GPU, it says so in one line and exits 0.

On a machine with a GPU and CuPy it times for real (`benchmarks/gpu_check.sh` runs it there).
"""

import pytest

import tensorgrad as tg


@pytest.mark.slow
def test_gpu_benchmark_says_in_one_line_why_it_cannot_run(run_benchmark):
    if tg.cuda.is_available():
        pytest.skip("a GPU is here: benchmarks/gpu.py times for real (see benchmarks/gpu_check.sh)")
    printed = run_benchmark("gpu")  # fails unless the exit status is 0
    assert printed.count("\n") == 1 and "no CUDA GPU" in printed and "CuPy" in printed


def test_the_mixed_precision_step_trains_as_pytorchs_on_the_cpu():
    """benchmarks/gpu.py's mixed-precision step, run on the CPU for both libraries: the same losses
    to float16's precision (on a GPU the benchmark checks and times it on "cuda")."""
    import importlib.util
    from pathlib import Path

    import numpy as np

    torch = pytest.importorskip("torch")
    folder = Path(__file__).resolve().parents[2] / "benchmarks"
    import sys

    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location("gpu_benchmark", folder / "gpu.py")
        gpu = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gpu)
    finally:
        sys.path.remove(str(folder))
    x, y = gpu.cpu_bench.make_batch(64)
    found = []
    for lib in (tg, torch):
        tx, ty = lib.tensor(x), lib.tensor(y)
        params = [lib.tensor(p, requires_grad=True) for p in gpu.cpu_bench.init_params()]
        optimizer = lib.optim.SGD(params, lr=gpu.cpu_bench.LR)
        step = gpu.mixed_precision_step(lib, "cpu", lambda: gpu.cpu_bench.functional_loss(
            lib.nn.functional, tx, ty, params), optimizer, lambda: None)
        losses = [step().item() for _ in range(3)]
        assert losses[-1] < losses[0]
        found.append(losses)
    np.testing.assert_allclose(found[0], found[1], rtol=gpu.TOLERANCES["mlp_amp"])
