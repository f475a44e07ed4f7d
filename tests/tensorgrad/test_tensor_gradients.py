"""Every op in `op_table.CASES`, forward and gradient, over broadcast pairings and layouts.

Oracle one, always: the forward value against a NumPy float64 reference, and the gradient of
every input against float64 finite differences (`tg.gradcheck`, a few random directions per
input). Oracle two, where PyTorch is installed: the same expression in torch float64, comparing
the output and every input's gradient. Each case runs on contiguous inputs, on non-contiguous
(transposed) leaves, and on stride-0 (expanded) views of smaller leaves; on the CPU, and again
on a GPU ("cuda") where CuPy sees one (skipped elsewhere, saying so).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DEVICES
from op_table import CASES, Case, applies, make_inputs, prepared

import tensorgrad as tg
from tensorgrad.device import device_of, to_numpy


def _on(device: str):
    """The module the table's expressions use (`m`): tensorgrad, with `m.tensor(...)` (the masks
    and indices of the table) made on `device`, as user code on a GPU makes them."""
    if device == "cpu":
        return tg

    class OnDevice:
        def __getattr__(self, name: str):
            return getattr(tg, name)

        @staticmethod
        def tensor(data, **kwargs):
            return tg.tensor(data, device=device, **kwargs)

    return OnDevice()


def _leaf(array: np.ndarray, device: str) -> tg.Tensor:
    """A leaf that requires grad, on `device`, holding `array` (the array itself on the CPU)."""
    return tg.from_numpy(array).to(device).requires_grad_()


def _weights(seed: int, shape: tuple[int, ...], device: str):
    """The output's gradient for backward: an array on the CPU, a tensor on the device elsewhere."""
    weights = np.random.default_rng(seed).standard_normal(shape)
    return weights if device == "cpu" else tg.from_numpy(weights).to(device)


# The CPU ids are the table's own ("add(3, 4)&(4,)-contiguous"); the other devices add theirs.
PARAMS = [pytest.param(case, layout, device.values[0],
                       id=f"{case.name}-{layout}" + ("" if device.id == "cpu" else f"-{device.id}"),
                       marks=device.marks)
          for device in DEVICES for case in CASES for layout in case.layouts if applies(case, layout)]


def _copy_layout(a: np.ndarray) -> np.ndarray:
    """A copy of `a` with the same strides (so that each framework gets its own storage)."""
    out = np.empty_like(a)  # keeps a transposed layout ("K" order)
    out[...] = a
    assert out.strides == a.strides
    return out


def test_table_has_every_layout():
    """The table covers non-contiguous and stride-0 inputs, not only contiguous ones."""
    layouts = [p.values[1] for p in PARAMS if p.values[2] == "cpu"]
    assert layouts.count("transposed") > 50
    assert layouts.count("expanded") > 50
    assert len(CASES) > 200


@pytest.mark.parametrize(("case", "layout", "device"), PARAMS)
def test_forward_and_finite_differences(case: Case, layout: str, device: str):
    leaf_arrays, preps = make_inputs(case, layout)
    leaves = [_leaf(a, device) for a in leaf_arrays]
    if layout == "transposed" and device == "cpu":
        assert any(not leaf.is_contiguous() for leaf in leaves)
    run = prepared(case.fn, preps)
    m = _on(device)

    out = run(m, *leaves)
    seen = [a if shape is None else np.broadcast_to(a, shape) for a, shape in zip(leaf_arrays, preps)]
    expected = np.asarray(case.ref(*seen))
    assert out.shape == expected.shape
    assert out.dtype == tg.float64
    assert out.device.type == device
    np.testing.assert_allclose(to_numpy(out.data), expected, rtol=1e-12, atol=1e-12)

    out.backward(_weights(1, out.shape, device))
    for leaf in leaves:
        assert leaf.grad is not None
        assert leaf.grad.shape == leaf.shape
        assert leaf.grad.dtype == np.float64
        assert device_of(leaf.grad) == device_of(leaf.data)
        leaf.grad = None

    assert tg.gradcheck(lambda *ts: run(m, *ts), leaves)


@pytest.mark.parametrize(("case", "layout", "device"), PARAMS)
def test_matches_torch(case: Case, layout: str, device: str):
    torch = pytest.importorskip("torch")
    leaf_arrays, preps = make_inputs(case, layout)
    ours = [_leaf(_copy_layout(a), device) for a in leaf_arrays]
    theirs = [torch.from_numpy(_copy_layout(a)).requires_grad_() for a in leaf_arrays]
    if device == "cpu":
        for a, b in zip(ours, theirs):
            assert a.stride() == b.stride()

    out = prepared(case.fn, preps)(_on(device), *ours)
    expected = prepared(case.torch_fn or case.fn, preps)(torch, *theirs)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-10, atol=1e-12)

    weights = np.random.default_rng(2).standard_normal(out.shape)
    out.backward(_weights(2, out.shape, device))
    expected.backward(torch.from_numpy(weights))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert b.grad is not None, f"input {i}"
        assert a.grad is not None, f"input {i} got no gradient"
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"input {i}")
