"""`tensorgrad.nn.functional`: what the op table does not cover.

The op table checks every function's forward and gradient (finite differences and torch);
here: float32 in gives float32 out, losses stay finite at extreme logits (on a GPU too, where
there is one), the fused ops keep one node (and one array) where the chain of plain ops keeps
several, and gradients reach leaves in the leaves' own memory layout.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from scalargrad.engine import topological_order
from tensorgrad.device import to_numpy


def test_linear_is_x_at_weight_transposed_plus_bias():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    w = tg.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], requires_grad=True)
    b = tg.tensor([0.5, -0.5, 0.0], requires_grad=True)
    out = F.linear(x, w, b)
    np.testing.assert_allclose(out.data, [[1.5, 1.5, 3], [3.5, 3.5, 7], [5.5, 5.5, 11]])
    out.sum().backward()
    np.testing.assert_allclose(w.grad, [[9, 12], [9, 12], [9, 12]])  # column sums of x, per row
    np.testing.assert_allclose(b.grad, [3, 3, 3])  # one per sample


@pytest.mark.parametrize("loss", [
    lambda z, y, t: F.cross_entropy(z, y),
    lambda z, y, t: F.cross_entropy(z, y, reduction="none").sum(),
    lambda z, y, t: F.mse_loss(z, t),
    lambda z, y, t: F.binary_cross_entropy_with_logits(z, t),
    lambda z, y, t: F.linear(z, t).sum(),
], ids=["cross_entropy", "cross_entropy(none)", "mse_loss", "bce_with_logits", "linear"])
def test_float32_stays_float32(loss):
    z = tg.randn(4, 4, requires_grad=True)
    t = tg.rand(4, 4, requires_grad=True)
    out = loss(z, tg.tensor([0, 1, 2, 3]), t)
    assert out.dtype == tg.float32
    out.backward()
    assert z.grad.dtype == np.float32
    assert t.grad is None or t.grad.dtype == np.float32


def test_cross_entropy_is_finite_for_huge_logits_and_matches_the_exact_value(device):
    z = tg.tensor([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4]], dtype=tg.float64, requires_grad=True, device=device)
    loss = F.cross_entropy(z, [1, 2], reduction="none")
    # Row 0: logsumexp = 1e4, so the loss is 1e4 - 0; row 1: logsumexp = 1e4 + log 2.
    np.testing.assert_allclose(to_numpy(loss.data), [1e4, np.log(2)])
    loss.sum().backward()
    np.testing.assert_allclose(to_numpy(z.grad), [[1, -1, 0], [0, 0.5, -0.5]], atol=1e-12)


def test_bce_with_logits_is_finite_for_huge_logits(device):
    x = tg.tensor([1e4, -1e4, 1e4], dtype=tg.float64, requires_grad=True, device=device)
    loss = F.binary_cross_entropy_with_logits(x, [0.0, 0.0, 1.0], reduction="none")
    np.testing.assert_allclose(to_numpy(loss.data), [1e4, 0, 0])
    loss.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [1, 0, 0])


def test_cross_entropy_takes_labels_as_tensor_array_or_list(device):
    z = tg.randn(3, 4, device=device)
    expected = F.cross_entropy(z, tg.tensor([1, 0, 3], device=device)).item()
    assert F.cross_entropy(z, np.array([1, 0, 3], dtype=np.int32)).item() == expected
    assert F.cross_entropy(z, [1, 0, 3]).item() == expected


def test_cross_entropy_matches_the_chain_of_plain_ops():
    z = tg.randn(5, 7, dtype=tg.float64, requires_grad=True)
    labels = [6, 0, 3, 3, 1]
    fused = F.cross_entropy(z, labels)
    fused.backward()
    fused_grad, z.grad = z.grad, None
    chain = -z.log_softmax(-1)[tg.arange(5), tg.tensor(labels)].mean()
    chain.backward()
    np.testing.assert_allclose(fused.item(), chain.item(), rtol=1e-12)
    np.testing.assert_allclose(fused_grad, z.grad, rtol=1e-12, atol=1e-15)


def test_the_fused_mlp_graph_has_one_node_per_layer_and_one_for_the_loss():
    x = tg.randn(8, 5)
    params = [tg.randn(4, 5, requires_grad=True), tg.randn(4, requires_grad=True),
              tg.randn(3, 4, requires_grad=True), tg.randn(3, requires_grad=True)]
    w1, b1, w2, b2 = params
    loss = F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), [0, 1, 2, 0, 1, 2, 0, 1])
    ops = [node.op for node in topological_order(loss, leaves=False)]
    assert ops == ["linear", "relu", "linear", "cross_entropy"]
    # Plain ops: a transpose, a matmul and an add per layer, and the output of each `@` stays
    # alive as the parent of its `+`.
    plain = ((x @ w1.T + b1).relu() @ w2.T + b2).sum()
    plain_ops = [node.op for node in topological_order(plain, leaves=False)]
    assert plain_ops == ["T", "@", "+", "relu", "T", "@", "+", "sum"]


def test_the_gradient_of_a_transposed_weight_reaches_it_in_its_own_layout():
    x = tg.randn(6, 5)
    w = tg.randn(3, 5, requires_grad=True)  # row-major, used as w.T
    (x @ w.T).sum().backward()
    assert w.grad.flags.c_contiguous
    np.testing.assert_allclose(w.grad, np.ones((6, 3), np.float32).T @ x.data, rtol=1e-6)
    # A column-major leaf gets a column-major gradient (PyTorch's layout rule).
    v = tg.from_numpy(np.asfortranarray(np.random.default_rng(0).standard_normal((5, 3)))).requires_grad_()
    (x.double() @ v).sum().backward()
    assert v.grad.flags.f_contiguous and not v.grad.flags.c_contiguous
    assert v.grad.strides == v.data.strides


def test_leaves_never_share_a_gradient_array():
    a = tg.randn(3, 4, requires_grad=True)
    b = tg.randn(3, 4, requires_grad=True)
    (a.T + b.T).sum().backward()  # both gradients are views of the same incoming array
    assert not np.shares_memory(a.grad, b.grad)
    a.grad += 1  # an in-place change to one gradient leaves the other alone
    np.testing.assert_array_equal(b.grad, np.ones((3, 4)))
