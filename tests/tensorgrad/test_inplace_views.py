"""In-place changes through views (`y[0] += 1`, `y[:, 1].mul_(w)`, `y.T[2].zero_()`), as PyTorch records them.

A view shares its base's memory, so changing it in place changes the base: the base's history
becomes "old values outside the view's elements, the op's result inside" (PyTorch's CopySlices)
and the view becomes a view of that. A view made before the base changed is, when used after,
a view of the base as it is then; an op that used a tensor before an in-place change keeps
getting its gradient along the old history. Each case is checked against PyTorch (values and
every gradient) and, without PyTorch, against finite differences.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from conftest import DEVICES

import tensorgrad as tg
from tensorgrad.autograd import InplaceModifiedError, is_view
from tensorgrad.device import to_numpy

WEIGHTS = np.arange(1.0, 13.0).reshape(3, 4)  # so that every element's gradient differs

# Each case changes y = 2 * x (3 x 4) through views, with w3 (3,) and w4 (4,), and leaves `L`,
# a tensor of y's shape or a scalar; the loss is (L * WEIGHTS).sum().
CASES = [
    "y[0].mul_(3)",
    "y[:, 1].add_(w3)",
    "y.T[1].zero_()",
    "y[0] += 1",
    "y[:, 1] *= w3",
    "y[0][1] = 5.0",
    "y[1:, ::2].exp_()",
    "y.view(-1)[3:7].copy_(w4)",
    "y.reshape(12)[::5].fill_(2.0)",
    "y.transpose(0, 1)[2].clamp_(min=0)",
    "y.diagonal().mul_(w3)",
    "y.narrow(1, 1, 2).sigmoid_()",
    "y.select(0, 1).relu_()",
    "y.unsqueeze(0)[0, 2].neg_()",
    "y.permute(1, 0)[1:3, 0].add_(1)",
    "y[None][:, 1].mul_(2)",
    "y[..., 0].tanh_()",
    "y[1][w4 > 0] = 7.0",
    "v = y[0]; v[1:3] = w4[:2]",
    "y[:, 0] = w3",
    "y[0] = y[1]",
    "y[0].copy_(y[1])",
    "y.t()[0].div_(w3)",
    "y.mT[3] -= w3",
    "y.flatten()[::3].pow_(2)",
    "y[1].add_(y[2])",
    "v = y[:2]; v[0].mul_(3); v[1].add_(1)",
    "y.squeeze()[0].add_(w4)",
    "y[-1, -1] += w3[0]",
    "y[0] += 1; y[0] += w4; y[:, 1] -= w3",
    "v = y[1:]; v[0][2] = 5.0; y = y * v.sum()",
    "v = y.T; v[1:3].mul_(w3); y = y * y + (v ** 3).T",
    "v = y[0]; v.mul_(2); v.add_(w4); y.mul_(3); y = v * y[2]",
    "y[y > 0] = 0.0; y[0] *= 2",
    "y[[0, 2]] += w4",
    "y[:, [1, 3]] = w3[:, None] * 1.0",
    # a view made before its base changed, used after: a view of the base as it is now
    "v = y[0:2]; y.mul_(3); y = v.sum() * w4",
    "a = y[0]; b = y[1]; a.mul_(2); y = (a + b) * w4",
    # ops that used a tensor before it changed keep the old history
    "v = y[0:2]; s = v.sum(); y.mul_(3); y = s + y",
    "s = y.sum(); y.mul_(3); y = s + y * 2",
    "z = y.exp(); y.add_(1); y = z + y",
    "z = y * 2; y[0] = z[1]",
    "v = y[0]; y[1] = v * 2",
    "y[0] = y[1] * 2",
    "a = y[0]; b = y[1]; c = b * 3; a.mul_(2); y = c * a",
    # a buffer that needs no gradient, filled with tensors that do
    "buf = m.zeros(3, 4, dtype=x.dtype, device=x.device); buf[0] += w4;"
    " buf[1:, 1] = w3[:2]; y = buf * buf + y",
    "buf = m.zeros(3, 4, dtype=x.dtype, device=x.device); buf[0].copy_(w4);"
    " buf.T[2].add_(w3); y = buf ** 3 + y",
    "v = y.view(12); v[::2].mul_(w4.repeat(3)[:6]); y[1] *= 2; y = v.view(3, 4) * y",
]


def run(m, case, arrays, device="cpu"):
    """`case` on y = 2x in library `m` (tensorgrad or torch): y's values and the gradients."""
    x, w3, w4 = (m.tensor(a, requires_grad=True, **({"device": device} if m is tg else {})) for a in arrays)
    scope = {"y": x * 2, "x": x, "w3": w3, "w4": w4, "m": m}
    exec(case, {}, scope)
    y = scope["y"]
    (y * m.tensor(WEIGHTS, dtype=x.dtype, **({"device": device} if m is tg else {}))).sum().backward()
    grads = [None if t.grad is None else to_numpy(t.grad) if m is tg else t.grad.numpy()
             for t in (x, w3, w4)]
    values = to_numpy(y.data) if m is tg else y.detach().numpy()
    return values, grads


def arrays(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal(4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES)
def test_in_place_through_views_as_pytorch(case, device):
    torch = pytest.importorskip("torch")
    expected_values, expected_grads = run(torch, case, arrays())
    values, grads = run(tg, case, arrays(), device)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-12)
    for got, want in zip(grads, expected_grads, strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def numerical_gradients(case, start, eps=1e-6):
    """Central differences of the case's loss with respect to x, w3 and w4 (float64)."""
    def loss(values):
        with tg.no_grad():
            return float(run_forward(case, values))
    grads = []
    for i, a in enumerate(start):
        g = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            plus = [b.copy() for b in start]
            minus = [b.copy() for b in start]
            plus[i][j] += eps
            minus[i][j] -= eps
            g[j] = (loss(plus) - loss(minus)) / (2 * eps)
        grads.append(g)
    return grads


def run_forward(case, values):
    x, w3, w4 = (tg.tensor(a) for a in values)
    scope = {"y": x * 2, "x": x, "w3": w3, "w4": w4, "m": tg}
    exec(case, {}, scope)
    return (scope["y"] * tg.tensor(WEIGHTS)).sum().item()


# Beyond PyTorch: it refuses an in-place change of one output of a function that returns several
# views (unbind, split, chunk) and of a tensor whose saved output another op changed; tensorgrad
# keeps the values its backward needs, so it gives the right gradient, checked here numerically.
LENIENT = [
    "y.unbind(0)[1].mul_(w4)",
    "a, b = y.chunk(2, 1); a.mul_(2); b.add_(w3[:, None])",
    "y.split(1)[2].masked_fill_(w4 > 0, 0.0)",
    "y.relu_(); y[0].mul_(2); y = y * y",
]


@pytest.mark.parametrize("case", CASES + LENIENT)
def test_in_place_through_views_against_finite_differences(case):
    start = arrays(1)
    _, grads = run(tg, case, start)
    for got, want in zip(grads, numerical_gradients(case, start), strict=True):
        np.testing.assert_allclose(0.0 if got is None else got, want, rtol=1e-6, atol=1e-6)


def test_a_view_knows_its_base():
    x = tg.randn(3, 4, requires_grad=True)
    y = x * 2
    assert y[0]._base is y and y[0][1:]._base is y and y.T[1:]._base is y
    assert y._base is None and y.detach()._base is None and (y + 1)._base is None
    assert is_view(y[0]) and not is_view(y)
    with tg.no_grad():
        assert y[0]._base is y  # a view without a graph is still a view
    v = y[0]
    v.data = np.zeros(4, dtype=np.float32)  # new storage: no longer a view
    assert v._base is None


def test_the_base_records_the_change_and_the_view_follows_it():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1.0
    row = y[0]
    row.mul_(10.0)
    assert y.tolist() == [[10.0, 20.0], [3.0, 4.0]] and row.tolist() == [10.0, 20.0]
    assert y.op == "mul_" and not y.is_leaf and row._base is y
    (row.sum() + y.sum()).backward()
    np.testing.assert_array_equal(x.grad, [[20.0, 20.0], [1.0, 1.0]])


def test_a_buffer_filled_through_views_joins_the_graph():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    buf = tg.zeros(2, 2)
    assert buf.is_leaf and not buf.requires_grad
    buf[1] += w * 3
    assert buf.requires_grad and not buf.is_leaf
    (buf * tg.tensor([[5.0, 6.0], [7.0, 8.0]])).sum().backward()
    np.testing.assert_array_equal(w.grad, [21.0, 24.0])


def test_backward_twice_with_retain_graph_accumulates():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[1:].mul_(x[:2])
    loss = y.sum()
    loss.backward(retain_graph=True)
    loss.backward()
    # y = [2x0, 2x1 * x0, 2x2 * x1]: d/dx = [2 + 2x1, 2x0 + 2x2, 2x1], twice
    np.testing.assert_array_equal(x.grad, 2 * np.array([2 + 4.0, 2 + 6.0, 4.0]))


def test_a_view_of_a_leaf_that_requires_grad_is_refused_as_in_pytorch():
    w = tg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
        w[0].mul_(2)
    with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
        w[1:] += 1
    with tg.no_grad():  # the optimizer's way: allowed, not recorded
        w[0].mul_(2)
    assert w.tolist() == [2.0, 1.0, 1.0] and w.is_leaf


def test_a_view_made_under_no_grad_changed_with_grad_on_is_refused_as_in_pytorch():
    y = tg.ones(3, requires_grad=True) * 1.0
    with tg.no_grad():
        v = y[:2]
    with pytest.raises(RuntimeError, match="made under no_grad"):
        v.mul_(2)


def test_saved_values_changed_through_a_view_still_raise():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = y * y  # saves y
    y[0].mul_(2)
    with pytest.raises(InplaceModifiedError, match="in-place"):
        z.sum().backward()


def test_an_expanded_view_is_still_read_only():
    y = tg.ones(1, 3, requires_grad=True) * 1.0
    with pytest.raises(RuntimeError, match="read-only"):
        y.expand(2, 3).mul_(2)


def test_no_reference_cycles_after_in_place_changes_through_views():
    gc.disable()
    try:
        x = tg.randn(3, 4, requires_grad=True)
        y = x * 2
        y[0] += 1
        y[:, 1].mul_(x[:, 0])
        view = y.T
        view[2].zero_()
        loss = (y * y).sum()
        alive = [weakref.ref(t) for t in (y, view, loss)]
        del y, view, loss
        assert all(ref() is None for ref in alive)
    finally:
        gc.enable()


class ViewOfInput(tg.autograd.Function):
    """A custom Function whose output is a view of its input, with a backward of its own (x10)."""

    @staticmethod
    def forward(ctx, x):
        return x[0:2]

    @staticmethod
    def backward(ctx, grad):
        out = tg.zeros(3, dtype=grad.dtype)
        out[0:2] = grad * 10
        return out


def test_a_custom_functions_view_output_keeps_its_backward_and_refuses_in_place_changes():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    (ViewOfInput.apply(y) * 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [10.0, 10.0, 0.0])  # the Function's backward ran
    with pytest.raises(RuntimeError, match="custom Function"):
        ViewOfInput.apply(y).mul_(2)  # as in PyTorch: it would skip the Function's backward
    out = ViewOfInput.apply(y)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="custom Function"):
        out * 1.0  # its base changed: its gradient can't be rebuilt from the base


@pytest.mark.parametrize("case", ["y[0].mul_(w)", "y[:, 1] += w[:3]", "y.T.reshape(-1)[::3].zero_()",
                                  "y[1:3, ::2].mul_(3)", "y[:, 0] = w[1:]", "y.t()[1:3].sub_(1); y[0] *= w"])
def test_a_base_laid_out_column_major(case):
    # y = x.T * 2 keeps x.T's layout (strides (1, 3)): the view's elements are found by address
    torch = pytest.importorskip("torch")
    x_values, w_values = np.random.default_rng(3).standard_normal((4, 3)), np.arange(1.0, 5.0)
    results = []
    for m in (torch, tg):
        x, w = m.tensor(x_values, requires_grad=True), m.tensor(w_values, requires_grad=True)
        scope = {"y": x.T * 2, "w": w}
        exec(case, {}, scope)
        y = scope["y"]
        (y * y * m.tensor(WEIGHTS)).sum().backward()
        grads = [None if g is None else np.asarray(g) for g in (x.grad, w.grad)]
        results.append([np.asarray(y.detach() if m is torch else y.data), *grads])
    assert tg.tensor(x_values).T.mul(2).stride() == (1, 3)
    for got, want in zip(results[1], results[0], strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_buffer_filled_row_by_row_keeps_no_copy_per_row():
    # x[key] = value writes only the selection, and the graph keeps none of the buffer's old
    # values (index_put's gradients read none): memory grows by rows, not by buffers, as in PyTorch.
    import tracemalloc

    h = tg.randn(16, 16, requires_grad=True)
    buf = tg.zeros(64, 16, 16)  # 64 KB
    tracemalloc.start()
    for t in range(64):
        buf[t] = h * float(t)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # The rows (h * t) and the graph's nodes take a few buffers' worth; a copy per row would be 64.
    assert peak < 8 * buf.data.nbytes
    (buf * buf).sum().backward()
    np.testing.assert_allclose(h.grad, 2 * h.data * sum(t * t for t in range(64)), rtol=1e-5)
    with tg.no_grad():
        tracemalloc.start()
        buf[3] = h
        assert tracemalloc.get_traced_memory()[1] < buf.data.nbytes // 8  # outside the graph: no copy
        tracemalloc.stop()
