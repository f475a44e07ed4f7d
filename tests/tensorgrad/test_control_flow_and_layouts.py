"""`tg.cond`, `tg.while_loop` (PyTorch's structured control flow, eagerly) and `tg.empty_permuted`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


# torch.cond and torch.while_loop start PyTorch's compiler (see the fixture in conftest.py).
pytestmark = pytest.mark.usefixtures("keep_pytorchs_distribution_checks")


@pytest.mark.parametrize("pred", [True, False, 0, 2.5, "tensor-true", "tensor-false"])
def test_cond_runs_the_branch_pred_picks_as_pytorch(pred):
    for m in (torch, tg):
        value = {"tensor-true": m.tensor([True]), "tensor-false": m.tensor(0.0)}.get(pred, pred)
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        out = m.cond(value, lambda x: (x * 3).sum(), lambda x: (x ** 2).sum(), (x,))
        out.backward()
        expected_grad = [3.0, 3.0] if pred in (True, 2.5, "tensor-true") else [2.0, 4.0]
        assert np.asarray(x.grad).tolist() == expected_grad


def test_cond_refuses_a_predicate_of_several_elements():
    for m in (torch, tg):
        with pytest.raises(RuntimeError, match="single-element tensor"):
            m.cond(m.tensor([True, False]), lambda x: x, lambda x: -x, (m.ones(2),))


def test_while_loop_carries_its_values_as_pytorch():
    results = []
    for m in (torch, tg):
        out = m.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s * 2), (m.tensor(0), m.tensor(1.0)))
        assert isinstance(out, tuple)
        results.append([t.item() for t in out])
    assert results[0] == results[1] == [5, 32.0]
    with pytest.raises(RuntimeError, match="tuple or list"):
        tg.while_loop(lambda i: i < 3, lambda i: i + 1, tg.tensor(0))
    with pytest.raises(RuntimeError, match="as many"):
        tg.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1,), (tg.tensor(0), tg.tensor(1.0)))


@pytest.mark.parametrize("layout", list(itertools.permutations(range(4))))
def test_empty_permuted_has_pytorchs_strides(layout):
    ours, theirs = tg.empty_permuted((2, 3, 4, 5), layout), torch.empty_permuted((2, 3, 4, 5), layout)
    assert ours.shape == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.is_leaf and ours.dtype == tg.float32
    grad = tg.empty_permuted((2, 3), (1, 0), dtype=tg.float64, requires_grad=True)
    assert grad.requires_grad and grad.is_leaf and grad.stride() == (1, 2)
    with pytest.raises(RuntimeError, match="permutation"):
        tg.empty_permuted((2, 3), (0, 0))
