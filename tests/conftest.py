"""Fixtures shared by the test folders."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def load_example():
    """A function that imports `examples/<name>.py` as a module (examples are scripts, not a package)."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def run_benchmark():
    """A function that runs `benchmarks/<name>.py` with arguments and returns what it printed."""

    def run(name: str, *args: str) -> str:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), *args],
                              capture_output=True, text=True, timeout=300, check=True)
        return done.stdout

    return run
