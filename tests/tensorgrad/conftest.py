"""Fixtures shared by tensorgrad's tests: the devices a test runs on.

`DEVICES` holds `"cpu"` and `"cuda"` as pytest parameters; `"cuda"` is skipped, with its reason,
where CuPy sees no GPU, so a CPU-only run reports it rather than hiding it. Tests take the
`device` fixture, or parametrize with `DEVICES` next to their other parameters
(`from conftest import DEVICES`).
"""

from __future__ import annotations

import pytest

import tensorgrad as tg

NO_GPU = "no CUDA GPU with CuPy here"

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(not tg.cuda.is_available(), reason=NO_GPU)),
]


def placed_on(device: str) -> tg.device:
    """The device a tensor made with `device=device` reports, as PyTorch's does: "cuda" places it
    on the current GPU, so it reports `cuda:0`, and `tg.device("cuda") != tg.device("cuda:0")`."""
    return tg.device("cuda", tg.cuda.current_device()) if device == "cuda" else tg.device(device)


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    """The device a test runs on: "cpu", then "cuda" (skipped without a GPU)."""
    return request.param


@pytest.fixture
def keep_pytorchs_distribution_checks():
    """Starting PyTorch's compiler (torch.compile, torch.cond, torch.while_loop) switches off its
    distributions' argument checks for the whole process; the other tests compare with those, so
    a test that starts it puts the setting back."""
    torch = pytest.importorskip("torch")
    validating = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(validating)
