"""Infs and nans come silently, as from PyTorch: NumPy's floating-point warnings raised inside the
library are filtered at import, while the user's own NumPy code keeps warning."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np

import tensorgrad as tg
from tensorgrad.checks import ignore_floating_point_warnings


def overflowing_step() -> tuple[tg.Tensor, tg.Tensor]:
    w = tg.tensor([[1e30, -1e30], [3.0, 0.0]], requires_grad=True)
    x = tg.tensor([[1e10, 2.0]])
    loss = (x @ w).exp().sum() + (w * 1e10).sum() + (w - w).log().sum()
    loss.backward()
    return loss, w


def test_an_overflowing_training_step_warns_nothing():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # (placed before the library's filter: NumPy's warnings pass)
        overflowing_step()
    assert any("overflow encountered" in str(c.message) for c in caught)  # what the filter is for
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ignore_floating_point_warnings()  # (pytest may have restored the filters since the import)
        loss, w = overflowing_step()
    assert [str(c.message) for c in caught] == []
    assert np.isnan(loss.item()) and np.isnan(w.grad).all()


def test_the_users_own_numpy_still_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ignore_floating_point_warnings()
        np.float32(1e38) * np.float32(10)
    assert any("overflow encountered" in str(c.message) for c in caught)


def test_other_library_warnings_still_reach_the_user():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ignore_floating_point_warnings()
        tg.nn.functional.mse_loss(tg.ones(3, 1), tg.ones(3))  # broadcasting target: PyTorch's warning
    assert any("target size" in str(c.message) for c in caught)


def test_a_script_sees_no_numpy_warning_from_the_import_on():
    """In a fresh process, as users run: the filter is set by `import tensorgrad` alone."""
    script = textwrap.dedent("""
        import tensorgrad as tg
        x = tg.tensor([1e38, 0.0, -1.0], requires_grad=True)
        y = (x * 10).sum() + x.exp().sum() + (x - x).log().sum()
        y.backward()
        print(y.item(), x.grad.tolist())
    """)
    run = subprocess.run([sys.executable, "-W", "always", "-c", script], capture_output=True, text=True,
                         check=True)
    assert run.stderr == ""
    assert run.stdout.split()[0] == "nan"
