"""Every op in `op_table.CASES`, differentiated twice: the gradient recorded with
`create_graph=True` is itself differentiable, and its derivatives are right.

Oracle one, always: `tg.gradgradcheck` (the recorded gradient equals backward's, and its own
gradient, with respect to the inputs and to the output weights, agrees with finite differences).
Oracle two, where PyTorch is installed: the gradient of a weighted sum of the first gradients,
compared with PyTorch's double backward. Contiguous inputs only: the layouts are the first-order
table's subject (`test_tensor_gradients.py`), and the recording pass shares its bookkeeping.
Oracle three, the GPU stand-in (`foreign_array.py`): the same second derivatives from
ForeignArray leaves are ForeignArrays, equal to the numpy run's (no graph gradient makes a host
array where a GPU's would be needed).
"""

from __future__ import annotations

import numpy as np
import pytest
from foreign_array import foreign, is_foreign
from op_table import CASES, Case, make_inputs, prepared

import tensorgrad as tg


def _second_derivatives(m, run, leaves, weights, directions):
    """d/d(leaves) of sum_i <d(sum out * weights)/d leaf_i, directions_i>, in module m."""
    out = run(m, *leaves)
    firsts = m.autograd.grad(out, leaves, m.tensor(weights), create_graph=True)
    total = sum((g * m.tensor(d)).sum() for g, d in zip(firsts, directions, strict=True))
    if not total.requires_grad:  # a linear op's gradient does not depend on its inputs
        return firsts, [None] * len(leaves)
    return firsts, m.autograd.grad(total, leaves, allow_unused=True)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_gradgradcheck(case: Case):
    arrays, preps = make_inputs(case, "contiguous")
    leaves = [tg.tensor(a, requires_grad=True) for a in arrays]
    assert tg.gradgradcheck(lambda *ts: prepared(case.fn, preps)(tg, *ts), leaves, directions=2)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_matches_torch(case: Case):
    torch = pytest.importorskip("torch")
    arrays, preps = make_inputs(case, "contiguous")
    results = []
    for m, fn in ((tg, case.fn), (torch, case.torch_fn or case.fn)):
        leaves = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
        run = prepared(fn, preps)
        shape = tuple(run(m, *leaves).shape)
        weights = np.random.default_rng(2).standard_normal(shape)
        directions = [np.random.default_rng(4 + i).standard_normal(a.shape) for i, a in enumerate(arrays)]
        results.append(_second_derivatives(m, run, leaves, weights, directions))
    (ours_first, ours_second), (their_first, their_second) = results
    for i, (a, b) in enumerate(zip(ours_first, their_first, strict=True)):
        np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=f"first {i}")
    for i, (a, b) in enumerate(zip(ours_second, their_second, strict=True)):
        if b is None:  # an input the first gradients don't depend on (a linear op's)
            assert a is None or not np.any(a.data), f"second {i}"
            continue
        assert a is not None, f"second {i}: PyTorch has a second derivative, tensorgrad none"
        np.testing.assert_allclose(a.data, b.numpy(force=True), rtol=1e-9, atol=1e-11, err_msg=f"second {i}")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_on_the_gpu_stand_in(case: Case):
    from test_foreign_arrays import ON_FOREIGN

    arrays, preps = make_inputs(case, "contiguous")
    results = []
    for m, convert in ((tg, np.array), (ON_FOREIGN, foreign)):
        leaves = [tg.from_numpy(convert(a)).requires_grad_() for a in arrays]
        run = prepared(case.fn, preps)
        shape = tuple(run(m, *leaves).shape)
        weights = np.random.default_rng(2).standard_normal(shape)
        directions = [np.random.default_rng(4 + i).standard_normal(a.shape) for i, a in enumerate(arrays)]
        results.append(_second_derivatives(m, run, leaves, weights, directions))
    (plain_first, plain_second), (foreign_first, foreign_second) = results
    for plain, found in zip([*plain_first, *plain_second], [*foreign_first, *foreign_second], strict=True):
        assert (plain is None) == (found is None)
        if found is not None:
            assert is_foreign(found.data), f"{type(found.data).__name__} where a ForeignArray was expected"
            np.testing.assert_allclose(np.asarray(found.data), plain.data, rtol=1e-12, atol=1e-12)
