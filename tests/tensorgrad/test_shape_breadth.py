"""Shape and indexing ops beyond the basics, each against PyTorch and finite differences.

Every row is written once for both libraries (`m` is `tensorgrad` or `torch`, `x` a float64
input): values and the gradient of a weighted sum of the output must match PyTorch's, the
gradient must match float64 finite differences, and the ops PyTorch returns as views must share
the input's memory with PyTorch's strides.
"""

import numpy as np
import pytest

import tensorgrad as tg

SHAPE = (3, 4, 5)


# name -> (function of (m, x), input shape, is a view in PyTorch)
CASES = {
    "narrow": (lambda m, x: x.narrow(1, 1, 2), SHAPE, True),
    "narrow negative start": (lambda m, x: m.narrow(x, -1, -3, 2), SHAPE, True),
    "split int": (lambda m, x: x.split(2, dim=1)[1], SHAPE, True),
    "split sizes": (lambda m, x: m.split(x, [1, 3, 1], dim=-1)[1], SHAPE, True),
    "chunk": (lambda m, x: x.chunk(3, dim=2)[2], SHAPE, True),
    "chunk uneven": (lambda m, x: m.chunk(x, 3, 1)[1], SHAPE, True),
    "unbind": (lambda m, x: x.unbind(1)[2], SHAPE, True),
    "unflatten": (lambda m, x: x.unflatten(2, (5, 1)), SHAPE, True),
    "unflatten -1": (lambda m, x: m.unflatten(x, 1, (2, -1)), SHAPE, True),
    "movedim": (lambda m, x: x.movedim(0, -1), SHAPE, True),
    "movedim pairs": (lambda m, x: m.movedim(x, (0, 1), (2, 0)), SHAPE, True),
    "swapaxes": (lambda m, x: x.swapaxes(0, 2), SHAPE, True),
    "diagonal": (lambda m, x: x.diagonal(), SHAPE, True),
    "diagonal offset": (lambda m, x: x.diagonal(1, 1, 2), SHAPE, True),
    "diagonal negative offset": (lambda m, x: m.diagonal(x, -1, 2, 0), SHAPE, True),
    "unfold": (lambda m, x: x.unfold(2, 2, 1), SHAPE, True),
    "unfold step": (lambda m, x: x.unfold(1, 2, 2), SHAPE, True),
    "as_strided": (lambda m, x: x.as_strided((3, 2), (20, 1)), SHAPE, True),
    "as_strided overlapping": (lambda m, x: m.as_strided(x, (4, 3), (1, 1), 2), SHAPE, True),
    "flip": (lambda m, x: x.flip(0), SHAPE, False),
    "flip dims": (lambda m, x: m.flip(x, (0, 2)), SHAPE, False),
    "roll": (lambda m, x: x.roll(2, 1), SHAPE, False),
    "roll dims": (lambda m, x: m.roll(x, (1, -2), (0, 2)), SHAPE, False),
    "roll flat": (lambda m, x: x.roll(3), SHAPE, False),
    "repeat": (lambda m, x: x.repeat(2, 1, 3), SHAPE, False),
    "repeat more dims": (lambda m, x: x.repeat(2, 1, 1, 2), SHAPE, False),
    "tile": (lambda m, x: x.tile((2,)), SHAPE, False),
    "repeat_interleave": (lambda m, x: x.repeat_interleave(2, dim=1), SHAPE, False),
    "repeat_interleave counts":
        (lambda m, x: m.repeat_interleave(x, m.tensor([1, 0, 3]), dim=0), SHAPE, False),
    "repeat_interleave flat": (lambda m, x: x.repeat_interleave(2), (2, 3), False),
    "diag of a matrix": (lambda m, x: x.diag(), (4, 5), False),
    "diag offset": (lambda m, x: m.diag(x, -1), (4, 5), False),
    "diag of a vector": (lambda m, x: x.diag(1), (4,), False),
    "tril": (lambda m, x: x.tril(), SHAPE, False),
    "triu": (lambda m, x: m.triu(x, 1), SHAPE, False),
    "gather": (lambda m, x: x.gather(1, m.tensor([[[0, 3, 1, 1, 2]], [[3, 3, 0, 1, 2]],
                                                  [[1, 2, 3, 0, 0]]])), SHAPE, False),
    "gather smaller index": (lambda m, x: m.gather(x, 2, m.tensor([[[4, 4]], [[0, 1]]])), SHAPE, False),
    "index_select": (lambda m, x: x.index_select(1, m.tensor([3, 0, 3])), SHAPE, False),
    "masked_fill": (lambda m, x: x.masked_fill(x > 0.505, -1.0), SHAPE, False),
    "masked_select": (lambda m, x: x.masked_select(x > 0.305), SHAPE, False),
    "take": (lambda m, x: x.take(m.tensor([[0, 59], [7, 7]])), SHAPE, False),
    "where method": (lambda m, x: x.where(x > 0.505, x * 2), SHAPE, False),
    "where scalar": (lambda m, x: m.where(x > 0.505, x, 0.0), SHAPE, False),
    "scatter src": (lambda m, x: m.zeros(3, 4, 5, dtype=m.float64).scatter(
        0, m.tensor([[[1, 2, 0, 0, 1]]]), x[:1, :1]), SHAPE, False),
    "scatter into x":
        (lambda m, x: x.scatter(2, m.tensor([[[0, 4]], [[1, 1]], [[2, 3]]]), 7.0), SHAPE, False),
    "scatter_add":
        (lambda m, x: x.scatter_add(1, m.tensor([[[0, 0, 1, 3, 3]]]), x[:1, :1] * 3), SHAPE, False),
    "scatter_reduce sum": (lambda m, x: x.scatter_reduce(
        0, m.tensor([[[0, 1, 2, 2, 0]], [[0, 0, 0, 1, 1]]]), x[:2, :1] * 2, "sum"), SHAPE, False),
    "scatter_reduce mean": (lambda m, x: x.scatter_reduce(
        0, m.tensor([[[0, 1, 2, 2, 0]], [[0, 0, 0, 1, 1]]]), x[:2, :1] * 2, "mean"), SHAPE, False),
    "scatter_reduce amax": (lambda m, x: x.scatter_reduce(
        0, m.tensor([[[0, 1, 2, 2, 0]], [[0, 0, 0, 1, 1]]]), x[:2, :1] * 2, "amax"), SHAPE, False),
    "scatter_reduce amin no self": (lambda m, x: x.scatter_reduce(
        0, m.tensor([[[0, 1, 2, 2, 0]], [[0, 0, 0, 1, 1]]]), x[:2, :1] * 2, "amin", include_self=False),
        SHAPE, False),
    "scatter_reduce prod": (lambda m, x: x.scatter_reduce(
        0, m.tensor([[[0, 1, 2, 2, 0]], [[0, 0, 0, 1, 1]]]), x[:2, :1] * 2, "prod"), SHAPE, False),
    "einsum matmul": (lambda m, x: m.einsum("ijk,ilk->ijl", x, x), SHAPE, False),
    "einsum trace": (lambda m, x: m.einsum("ii->", x), (4, 4), False),
    "einsum diagonal": (lambda m, x: m.einsum("jii->ji", x), (3, 4, 4), False),
    "einsum implicit": (lambda m, x: m.einsum("ijk,j", x, x[0, :, 0]), SHAPE, False),
    "einsum ellipsis": (lambda m, x: m.einsum("...k,...k->...", x, x), SHAPE, False),
    "einsum sum out": (lambda m, x: m.einsum("ijk->j", x), SHAPE, False),
    "einsum outer": (lambda m, x: m.einsum("i,j->ij", x[0, 0], x[1, :, 2]), SHAPE, False),
    "meshgrid ij": (lambda m, x: m.meshgrid(x[0, 0], x[1, :, 1], indexing="ij")[1], SHAPE, True),
    "meshgrid xy": (lambda m, x: m.meshgrid(x[0, 0], x[1, :, 1], indexing="xy")[0], SHAPE, True),
    # PyTorch's everyday names around these ops
    "t": (lambda m, x: x.t(), (4, 5), True),
    "t of a vector": (lambda m, x: m.t(x), (4,), True),
    "mT": (lambda m, x: x.mT, SHAPE, True),
    "ravel": (lambda m, x: m.ravel(x), SHAPE, True),
    "select": (lambda m, x: x.select(1, -1), SHAPE, True),
    "select function": (lambda m, x: m.select(x, 2, 3), SHAPE, True),
    "swapdims": (lambda m, x: x.swapdims(0, 2), SHAPE, True),
    "moveaxis": (lambda m, x: m.moveaxis(x, 0, -1), SHAPE, True),
    "view_as": (lambda m, x: x.view_as(m.zeros(3, 4, 5, 1)), SHAPE, True),
    "reshape_as": (lambda m, x: x.reshape_as(m.zeros(5, 12)), SHAPE, False),
    "mm": (lambda m, x: m.mm(x[0], x[1].T), SHAPE, False),
    "bmm": (lambda m, x: x.bmm(x.transpose(1, 2)), SHAPE, False),
    "mv": (lambda m, x: m.mv(x[0], x[1, 0]), SHAPE, False),
    "dot": (lambda m, x: x[0, 0].dot(x[1, 1]), SHAPE, False),
    "outer": (lambda m, x: m.outer(x[0, 0], x[2, :, 1]), SHAPE, False),
    "trace": (lambda m, x: m.trace(x), (4, 5), False),
    "diff": (lambda m, x: x.diff(), SHAPE, False),
    "diff twice, prepend": (lambda m, x: m.diff(x, 2, 0, prepend=x[:1] * 2), SHAPE, False),
    "diff append": (lambda m, x: x.diff(dim=1, append=x[:, :1] ** 2), SHAPE, False),
    "nansum": (lambda m, x: m.nansum(x.masked_fill(x > 0.705, float("nan")), 1), SHAPE, False),
    "nanmean": (lambda m, x: x.masked_fill(x > 0.705, float("nan")).nanmean((0, 2)), SHAPE, False),
}


def _input(shape, layout):
    values = np.random.default_rng(7).permutation(int(np.prod(shape))).reshape(shape) / np.prod(shape)
    if layout == "transposed":  # the same values, a non-contiguous layout
        values = np.ascontiguousarray(values.T).T
    return values


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_and_finite_differences(name, layout):
    build, shape, _ = CASES[name]
    values = _input(shape, layout)
    x = tg.from_numpy(values.copy() if layout == "contiguous" else values).requires_grad_()
    out = build(tg, x)
    weights = np.random.default_rng(1).standard_normal(out.shape)
    (out * tg.from_numpy(weights)).sum().backward()
    assert tg.gradcheck(lambda t: build(tg, t), [tg.from_numpy(values.copy()).requires_grad_()])
    torch = pytest.importorskip("torch")
    tx = torch.tensor(values, requires_grad=True)
    tout = build(torch, tx)
    (tout * torch.from_numpy(weights)).sum().backward()
    assert out.shape == tuple(tout.shape)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", [n for n, (_, _, view) in CASES.items() if view])
def test_views_share_memory_and_have_pytorchs_strides(name):
    torch = pytest.importorskip("torch")
    build, shape, _ = CASES[name]
    values = _input(shape, "contiguous")
    x = tg.from_numpy(values.copy())
    out = build(tg, x)
    assert np.shares_memory(out.data, x.data)
    assert out.stride() == build(torch, torch.tensor(values)).stride()
    assert out._version == x._version and out._versions is x._versions


def test_writing_through_a_diagonal_view_changes_the_tensor():
    x = tg.zeros(3, 3)
    x.diagonal().fill_(2.0)
    assert x.tolist() == [[2, 0, 0], [0, 2, 0], [0, 0, 2]]


def test_nonzero_and_where_of_a_condition_match_pytorch():
    torch = pytest.importorskip("torch")
    values = [[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]
    ours, theirs = tg.tensor(values), torch.tensor(values)
    assert ours.nonzero().tolist() == theirs.nonzero().tolist() and ours.nonzero().dtype == tg.int64
    assert [t.tolist() for t in tg.where(ours != 0)] == [t.tolist() for t in torch.where(theirs != 0)]
    pairs = zip(ours.nonzero(as_tuple=True), theirs.nonzero(as_tuple=True), strict=True)
    assert all(a.tolist() == b.tolist() for a, b in pairs)


@pytest.mark.parametrize("build, error", [
    (lambda m, x: x.narrow(1, 3, 2), (IndexError, RuntimeError)),
    (lambda m, x: x.split([1, 1], dim=1), RuntimeError),
    (lambda m, x: x.chunk(0), RuntimeError),
    (lambda m, x: x.unflatten(1, (3, 2)), RuntimeError),
    (lambda m, x: x.movedim((0, 0), (1, 2)), RuntimeError),
    (lambda m, x: x.diagonal(0, 1, 1), RuntimeError),
    (lambda m, x: x.unfold(1, 9, 1), RuntimeError),
    (lambda m, x: x.unfold(1, 2, 0), RuntimeError),
    (lambda m, x: x.repeat(2, 2), RuntimeError),
    (lambda m, x: x.gather(1, m.tensor([[[9]]])), (IndexError, RuntimeError)),
    (lambda m, x: x.gather(1, m.tensor([[0.5]])), RuntimeError),
    (lambda m, x: x.index_select(0, m.tensor([3])), IndexError),
    (lambda m, x: x.masked_fill(m.ones(3, 4, 5), 0.0), RuntimeError),
    (lambda m, x: x.scatter_reduce(0, m.tensor([[[0]]]), x, "median"), RuntimeError),
    (lambda m, x: m.einsum("ij,jk->ik", x, x), RuntimeError),
    (lambda m, x: x.tril().diag(), RuntimeError),
    (lambda m, x: x.flip(3), IndexError),
    (lambda m, x: x.t(), RuntimeError),
    (lambda m, x: x[0, 0].mT, RuntimeError),
    (lambda m, x: x.select(1, 4), IndexError),
    (lambda m, x: x.select(3, 0), IndexError),
    (lambda m, x: x[0, 0, 0].select(0, 0), IndexError),
    (lambda m, x: m.mm(x, x), RuntimeError),
    (lambda m, x: m.mm(x[0], x[0]), RuntimeError),
    (lambda m, x: m.bmm(x[0], x[0]), RuntimeError),
    (lambda m, x: m.bmm(x, x), RuntimeError),
    (lambda m, x: m.mv(x[0], x[0, :, 0]), RuntimeError),
    (lambda m, x: m.dot(x[0], x[0, 0]), RuntimeError),
    (lambda m, x: m.dot(x[0, 0], x[0, 0, :4]), RuntimeError),
    (lambda m, x: m.dot(x[0, 0], x[0, 0].double()), RuntimeError),
    (lambda m, x: m.outer(x[0], x[0, 0]), RuntimeError),
    (lambda m, x: m.trace(x), RuntimeError),
    (lambda m, x: x.diff(-1), RuntimeError),
    (lambda m, x: x.long().nanmean(), RuntimeError),
])
def test_bad_arguments_raise_pytorchs_error(build, error):
    torch = pytest.importorskip("torch")
    with pytest.raises(error):
        build(torch, torch.zeros(SHAPE))
    with pytest.raises(error):
        build(tg, tg.zeros(SHAPE))
