"""The conv2d benchmark runs, and checks tensorgrad's conv2d against PyTorch's before timing it."""

import pytest


@pytest.mark.slow
def test_conv_benchmark_smoke_run(run_benchmark):
    pytest.importorskip("torch")
    printed = run_benchmark("conv", "--quick", "--threads", "1")
    assert "Checked before timing: tensorgrad's conv2d output and gradients equal PyTorch's." in printed
    assert "| digits_cnn conv2 " in printed and "tensorgrad / torch" in printed


@pytest.mark.slow
def test_conv_benchmark_runs_without_torch(run_benchmark):
    printed = run_benchmark("conv", "--quick", "--no-torch", "--repeats", "1", "--threads", "1")
    assert "PyTorch not timed" in printed and "| digits_cnn conv1 " in printed
