"""The tensor benchmark still runs, and its step gives numpy's loss, gradients and weights.

The benchmark checks that before timing anything (it raises otherwise), so a smoke run guards
the figures in the README against a step that got fast by doing less work.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_tensor_benchmark_smoke_run():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "tensor.py"), "--quick", "--tables", "mlp,op",
         "--batches", "32", "--no-torch"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "tensorgrad and tensorgrad-ops give numpy's loss, gradients and updated weights" in done.stdout
    assert "| tensorgrad |" in done.stdout
