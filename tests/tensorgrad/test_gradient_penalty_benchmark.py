"""The gradient-penalty benchmark runs, and checks tensorgrad's step against PyTorch's before timing it."""

import pytest


@pytest.mark.slow
def test_gradient_penalty_benchmark_smoke_run(run_benchmark):
    pytest.importorskip("torch")
    printed = run_benchmark("gradient_penalty", "--quick", "--threads", "1")
    assert "Checked before timing: tensorgrad's penalty and weight gradients equal PyTorch's." in printed
    assert "| 64 points, 2-32-32-1 " in printed and "tensorgrad / torch" in printed
