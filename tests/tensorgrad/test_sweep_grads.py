"""Complex and 0-d gradients compared with PyTorch: cases where an op's gradient was right for
real numbers and wrong for complex ones, found by running PyTorch's own samples through both."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

X, SOURCE, WEIGHT = np.array(1 + 2j), np.array(3 - 1j), np.array(0.3 - 0.7j)

# Writes into a 0-d complex tensor: the written element's gradient goes to the source, none to x.
WRITES = {
    "index_copy": lambda m, x, s: x.index_copy(0, m.tensor([0]), s),
    "put": lambda m, x, s: x.put(m.tensor(0), s),
    "masked_scatter": lambda m, x, s: x.masked_scatter(m.tensor(True), s),
    "masked_fill": lambda m, x, s: x.masked_fill(m.tensor(True), s),
    "scatter": lambda m, x, s: x.scatter(0, m.tensor(0), s),
    "index_add": lambda m, x, s: x.index_add(0, m.tensor([0]), s, alpha=2),
    "where": lambda m, x, s: m.where(m.tensor(True), s, x),
}


def _gradients(m, write, x_value, source_value, weight):
    x, source = m.tensor(x_value, requires_grad=True), m.tensor(source_value, requires_grad=True)
    out = write(m, x, source)
    loss = (out * m.tensor(weight)).real.sum() if np.iscomplexobj(weight) else (out * m.tensor(weight)).sum()
    return [np.asarray(g.numpy()) for g in m.autograd.grad(loss, (x, source))]


@pytest.mark.parametrize("name", sorted(WRITES))
@pytest.mark.parametrize("dtype", ["complex128", "float64"])
def test_writes_into_a_0d_tensor_route_the_gradient_as_pytorch(name, dtype):
    values = [np.asarray(v if dtype == "complex128" else v.real) for v in (X, SOURCE, WEIGHT)]
    ours = _gradients(tg, WRITES[name], *values)
    theirs = _gradients(torch, WRITES[name], *values)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape == () and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_0d_complex_gradient_reaches_the_vjp_as_an_array():
    """numpy's conj of a 0-d array is a scalar; the complex convention must hand the op an array,
    or a VJP that writes into a copy of its gradient (index_copy's) writes into a temporary."""
    x = tg.tensor(X, requires_grad=True)
    out = x.index_copy(0, tg.tensor([0]), tg.tensor(SOURCE))
    (grad,) = tg.autograd.grad((out * tg.tensor(WEIGHT)).real.sum(), x)
    assert grad.item() == 0


@pytest.mark.parametrize("size, layout", [((), ()), ((0, 3), (0, 1)), ((2, 3, 4), (2, 0, 1))])
def test_empty_permuted_takes_every_size(size, layout):
    ours, theirs = tg.empty_permuted(size, layout), torch.empty_permuted(size, layout)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()


VIEWS = {"whole": lambda t: t, "slice": lambda t: t[2:], "transposed view": lambda t: t.view(4, 4).t()}


def _restrided(m, make_view, size, stride, offset):
    base = m.tensor(np.arange(1.0, 17.0), requires_grad=True)
    y = make_view(base * 1)
    assert y.as_strided_(size, stride, offset) is y
    (y * m.tensor(np.random.default_rng(0).standard_normal(size))).sum().backward()
    return y.detach().numpy(), np.asarray(base.grad), y.stride(), y.storage_offset()


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("size, stride, offset", [((2, 2), (1, 2), None), ((3,), (2,), 1),
                                                  ((2, 2), (0, 1), 3)])
def test_as_strided_in_place_in_the_graph_as_pytorch(view, size, stride, offset):
    """as_strided_ on a tensor with history: it becomes the view, its gradient goes to the storage's
    elements it reads (PyTorch's AsStridedBackward), for a view of a view too."""
    ours = _restrided(tg, VIEWS[view], size, stride, offset)
    theirs = _restrided(torch, VIEWS[view], size, stride, offset)
    for a, b in zip(ours[:2], theirs[:2], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert ours[2:] == theirs[2:]
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        tg.ones(4, requires_grad=True).as_strided_((2,), (1,))
