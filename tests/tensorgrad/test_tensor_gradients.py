"""Every op in `op_table.CASES`, forward and gradient, over broadcast pairings and layouts.

Oracle one, always: the forward value against a NumPy float64 reference, and the gradient of
every input against float64 finite differences (`tg.gradcheck`, a few random directions per
input). Oracle two, where PyTorch is installed: the same expression in torch float64, comparing
the output and every input's gradient. Each case runs on contiguous inputs, on non-contiguous
(transposed) leaves, and on stride-0 (expanded) views of smaller leaves.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from op_table import CASES, Case, sample

import tensorgrad as tg


def make_inputs(case: Case, layout: str) -> tuple[list[np.ndarray], list]:
    """Leaf arrays (float64, laid out as `layout` asks) and, per input, what the expression sees.

    The second list holds, for each input, a function of the leaf (`expand` to the case's shape
    for the stride-0 layout, else the leaf itself). Deterministic per case and layout.
    """
    rng = np.random.default_rng(zlib.crc32(f"{case.name}|{layout}".encode()))
    leaves, preps = [], []
    for i, shape in enumerate(case.shapes):
        domain = case.domain(i)
        if layout == "transposed" and len(shape) >= 2:
            values = sample(rng, shape, domain)
            leaves.append(np.swapaxes(np.ascontiguousarray(np.swapaxes(values, -1, -2)), -1, -2))
            preps.append(None)
        elif layout == "expanded" and len(shape) >= 1 and shape[0] > 1:
            leaves.append(sample(rng, (1,) + shape[1:], domain))
            preps.append(shape)
        else:
            leaves.append(sample(rng, shape, domain))
            preps.append(None)
    return leaves, preps


def _applies(case: Case, layout: str) -> bool:
    """Whether `layout` changes anything for this case (else it would repeat "contiguous")."""
    if layout == "contiguous":
        return True
    leaves, preps = make_inputs(case, layout)
    if layout == "transposed":
        return any(not a.flags.c_contiguous for a in leaves)
    return any(p is not None for p in preps)


PARAMS = [pytest.param(case, layout, id=f"{case.name}-{layout}")
          for case in CASES for layout in case.layouts if _applies(case, layout)]


def _prepared(fn, preps):
    """`fn` applied to the inputs as the expression sees them (expanded where asked)."""
    def run(m, *leaves):
        seen = [leaf if shape is None else leaf.expand(*shape) for leaf, shape in zip(leaves, preps)]
        return fn(m, *seen)
    return run


def _copy_layout(a: np.ndarray) -> np.ndarray:
    """A copy of `a` with the same strides (so that each framework gets its own storage)."""
    out = np.empty_like(a)  # keeps a transposed layout ("K" order)
    out[...] = a
    assert out.strides == a.strides
    return out


def test_table_has_every_layout():
    """The table covers non-contiguous and stride-0 inputs, not only contiguous ones."""
    layouts = [p.values[1] for p in PARAMS]
    assert layouts.count("transposed") > 50
    assert layouts.count("expanded") > 50
    assert len(CASES) > 200


@pytest.mark.parametrize(("case", "layout"), PARAMS)
def test_forward_and_finite_differences(case: Case, layout: str):
    leaf_arrays, preps = make_inputs(case, layout)
    leaves = [tg.from_numpy(a).requires_grad_() for a in leaf_arrays]
    if layout == "transposed":
        assert any(not leaf.is_contiguous() for leaf in leaves)
    run = _prepared(case.fn, preps)

    out = run(tg, *leaves)
    seen = [a if shape is None else np.broadcast_to(a, shape) for a, shape in zip(leaf_arrays, preps)]
    expected = np.asarray(case.ref(*seen))
    assert out.shape == expected.shape
    assert out.dtype == tg.float64
    np.testing.assert_allclose(out.data, expected, rtol=1e-12, atol=1e-12)

    out.backward(np.random.default_rng(1).standard_normal(out.shape))
    for leaf in leaves:
        assert leaf.grad is not None
        assert leaf.grad.shape == leaf.shape
        assert leaf.grad.dtype == np.float64
        leaf.grad = None

    assert tg.gradcheck(lambda *ts: run(tg, *ts), leaves)


@pytest.mark.parametrize(("case", "layout"), PARAMS)
def test_matches_torch(case: Case, layout: str):
    torch = pytest.importorskip("torch")
    leaf_arrays, preps = make_inputs(case, layout)
    ours = [tg.from_numpy(_copy_layout(a)).requires_grad_() for a in leaf_arrays]
    theirs = [torch.from_numpy(_copy_layout(a)).requires_grad_() for a in leaf_arrays]
    for a, b in zip(ours, theirs):
        assert a.stride() == b.stride()

    out = _prepared(case.fn, preps)(tg, *ours)
    expected = _prepared(case.torch_fn or case.fn, preps)(torch, *theirs)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-10, atol=1e-12)

    weights = np.random.default_rng(2).standard_normal(out.shape)
    out.backward(weights)
    expected.backward(torch.from_numpy(weights))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert b.grad is not None, f"input {i}"
        assert a.grad is not None, f"input {i} got no gradient"
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"input {i}")
