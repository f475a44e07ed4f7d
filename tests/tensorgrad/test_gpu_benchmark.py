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
