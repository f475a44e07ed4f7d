"""The tensor benchmark still runs, and its step gives numpy's loss, gradients and weights.

The benchmark checks that before timing anything (it raises otherwise), so a smoke run guards
the figures in the README against a step that got fast by doing less work.
"""

import pytest


@pytest.mark.slow
def test_tensor_benchmark_smoke_run(run_benchmark):
    # One timed round: the run checks the step's numbers before timing, which is what this guards
    # (three rounds took 8 s more of the suite's budget and checked nothing more).
    printed = run_benchmark("tensor", "--quick", "--tables", "mlp,op", "--batches", "32", "--no-torch",
                            "--repeats", "1")
    assert "tensorgrad and tensorgrad-ops give numpy's loss, gradients and updated weights" in printed
    assert "| tensorgrad |" in printed
