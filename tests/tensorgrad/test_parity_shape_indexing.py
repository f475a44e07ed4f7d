"""Shape, movement and indexing ops side by side with PyTorch: results, dtypes, views, errors, gradients.

Each case runs the same call through tensorgrad and torch on the same float64 inputs; where torch
raises, tensorgrad must raise an instance of torch's exception class, and where it succeeds, the
results (shape, dtype, values), whether the result shares the input's memory, and the gradients
of a weighted sum must agree.
"""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.standard_normal((2, 3, 4))
M = R.standard_normal((3, 4))
V = R.standard_normal(5)
S = np.array(2.5)
IDX = np.array([[0, 2, 1, 0], [2, 2, 0, 1]])


def _t(lib, a):
    return torch.tensor(a) if lib is torch else tg.tensor(a)


CASES = [
    # movement: 0-d tensors, -1 sizes, argument forms
    ("transpose 0-d", lambda L, x: x.transpose(0, -1), [S]),
    ("mT 0-d", lambda L, x: x.mT, [S]),
    ("mH 0-d", lambda L, x: x.mH, [S]),
    ("mT 1-d", lambda L, x: x.mT, [V]),
    ("flatten start after end", lambda L, x: x.flatten(2, 1), [X]),
    ("flatten", lambda L, x: x.flatten(1, 2), [X]),
    ("view of a transposed", lambda L, x: x.transpose(0, 1).view(-1), [X]),
    ("view -1", lambda L, x: x.view(4, -1, 2), [X]),
    ("permute dims=", lambda L, x: L.permute(x, dims=[1, 0, 2]), [X]),
    ("permute repeated", lambda L, x: x.permute(0, 0, 1), [X]),
    ("broadcast_to -1", lambda L, x: L.broadcast_to(x, (2, 3, -1)), [V]),
    ("broadcast_to leading -1", lambda L, x: L.broadcast_to(x, (-1, 5)), [V]),
    ("expand list", lambda L, x: x.expand([2, 5]), [V]),
    ("squeeze dims", lambda L, x: x.squeeze((0, 2)), [R.standard_normal((1, 3, 1, 2))]),
    ("unsqueeze out of range", lambda L, x: x.unsqueeze(4), [X]),
    ("movedim", lambda L, x: L.movedim(x, (0, 1), (2, 0)), [X]),
    # joining and splitting
    ("cat with an empty 1-d", lambda L, a, b, c: L.cat((a, b, c), 1), [M, np.zeros(0), M[:, :1]]),
    ("cat mismatched", lambda L, a, b: L.cat((a, b)), [M, R.standard_normal((2, 5))]),
    ("cat of a tensor", lambda L, a: L.cat(a), [M]),
    ("cat promotes", lambda L, a, b: L.cat((a, b)), [V, np.arange(3)]),
    ("concatenate axis=", lambda L, a, b: L.concatenate((a, b), axis=1), [M, M]),
    ("stack", lambda L, a, b: L.stack((a, b), -1), [M, M]),
    ("chunk of an empty dim", lambda L, x: x.chunk(3), [np.zeros((0, 2))]),
    ("split 0-d", lambda L, x: x.split(1), [S]),
    ("split sizes", lambda L, x: x.split([1, 4], 1), [R.standard_normal((2, 5))]),
    ("tensor_split 0-d tensor", lambda L, x, i: L.tensor_split(x, i), [V, np.array(2)]),
    ("tensor_split float tensor", lambda L, x, i: L.tensor_split(x, i), [V, np.array([1.0])]),
    ("narrow 0-d", lambda L, x: x.narrow(0, 0, 1), [S]),
    ("unbind", lambda L, x: x.unbind(1), [M]),
    # repeating, flipping, windows
    ("flip(0, 1)", lambda L, x: x.flip(0, 1), [X]),
    ("tile(2, 1)", lambda L, x: x.tile(2, 1), [M]),
    ("repeat() without sizes", lambda L, x: x.repeat(), [M]),
    ("repeat_interleave output_size", lambda L, x, r: x.repeat_interleave(r, dim=1, output_size=3),
     [R.standard_normal((2, 3)), np.array([1, 0, 2])]),
    ("repeat_interleave wrong output_size", lambda L, x, r: x.repeat_interleave(r, dim=1, output_size=4),
     [R.standard_normal((2, 3)), np.array([1, 0, 2])]),
    ("repeat_interleave counts only", lambda L, r: L.repeat_interleave(r), [np.array([1, 0, 2])]),
    ("repeat_interleave float counts", lambda L, x, r: x.repeat_interleave(r),
     [V[:3], np.array([1.0, 0, 2])]),
    ("repeat_interleave wrong count", lambda L, x, r: x.repeat_interleave(r, dim=1),
     [R.standard_normal((2, 3)), np.array([1, 2])]),
    ("roll", lambda L, x: x.roll((1, -1), (0, 2)), [X]),
    ("rot90", lambda L, x: L.rot90(x, 3, [1, 2]), [X]),
    ("unfold 0-d", lambda L, x: x.unfold(0, 1, 1), [S]),
    ("unfold", lambda L, x: x.unfold(2, 2, 1), [X]),
    ("as_strided negative stride", lambda L, x: x.as_strided((2,), (-1,)), [M]),
    ("diagonal", lambda L, x: L.diagonal(x, 1, 2, 0), [X]),
    ("diag_embed", lambda L, x: L.diag_embed(x, 1, 0, 2), [M]),
    ("tril", lambda L, x: x.tril(-1), [X]),
    # gathers and scatters
    ("gather negative index", lambda L, x, i: x.gather(1, i), [M, np.array([[-1]])]),
    ("gather out of range", lambda L, x, i: x.gather(1, i), [M, np.array([[4]])]),
    ("gather float index", lambda L, x, i: x.gather(1, i), [M, np.array([[1.0]])]),
    ("gather 0-d", lambda L, x, i: x.gather(0, i), [S, np.array(0)]),
    ("gather sparse_grad=", lambda L, x, i: L.gather(x, 1, i, sparse_grad=False), [M, np.array([[1], [1]])]),
    ("scatter src of another dtype", lambda L, x, i, s: x.scatter(0, i, s),
     [M, IDX, M[:2].astype(np.float32)]),
    ("scatter duplicates", lambda L, x, i, s: x.scatter_add(1, i, s), [M[:2, :3], np.array([[0, 0], [1, 1]]),
                                                                   M[:2, :2]]),
    ("scatter_reduce 'max'", lambda L, x, i, s: x.scatter_reduce(0, i, s, "max"),  # (float32: torch has no
     [M.astype(np.float32), IDX, M[:2].astype(np.float32)]),  # backward for 'max')
    ("scatter_reduce int amax", lambda L, x, i, s: x.scatter_reduce(0, i, s, "amax", include_self=False),
     [np.arange(12).reshape(3, 4), IDX, -np.arange(8).reshape(2, 4)]),
    ("scatter_reduce mean", lambda L, x, i, s: x.scatter_reduce(0, i, s, "mean", include_self=False),
     [M, IDX, M[:2]]),
    ("index_select -1", lambda L, x, i: x.index_select(1, i), [M, np.array([-1])]),
    ("index_select 0-d", lambda L, x, i: x.index_select(0, i), [S, np.array([0])]),
    ("index_select duplicates", lambda L, x, i: x.index_select(1, i), [M, np.array([0, 2, 2])]),
    ("index_add -1", lambda L, x, i, s: x.index_add(1, i, s), [M, np.array([-1]), M[:, :1]]),
    ("index_copy int32 index", lambda L, x, i, s: x.index_copy(1, i, s),
     [M, np.array([1], np.int32), M[:, :1]]),
    ("index_fill int32 index", lambda L, x, i: x.index_fill(1, i, 1.0), [M, np.array([1], np.int32)]),
    ("index_fill -1", lambda L, x, i: x.index_fill(1, i, 1.0), [M, np.array([-1])]),
    ("take int32 index", lambda L, x, i: L.take(x, i), [M, np.array([1], np.int32)]),
    ("take", lambda L, x, i: L.take(x, i), [M, np.array([[0, -1], [3, 3]])]),
    ("masked_select broadcast", lambda L, x, m: L.masked_select(x, m), [V[:4], M > 0]),
    ("nonzero as_tuple", lambda L, x: L.nonzero(x, as_tuple=True), [M > 0]),
    # Python indexing
    ("t[0-d tensor] is a select", lambda L, x: x[L.tensor(1)], [X]),
    ("t[0-d tensor, :, idx]", lambda L, x: x[L.tensor(1), :, L.tensor([0, 2])], [X]),
    ("t[uint8 mask]", lambda L, x: x[L.tensor([1, 0], dtype=L.uint8)], [X]),
    ("t[list of lists]", lambda L, x: x[[[1, 0], [0, 1]]], [X]),
    ("t[idx, :, idx2]", lambda L, x: x[L.tensor([0, 1]), :, L.tensor([2, 3])], [X]),
    ("t[idx, int, idx2]", lambda L, x: x[L.tensor([0, 1]), 1, L.tensor([2, 3])], [X]),
    ("t[::-1]", lambda L, x: x[::-1], [X]),
    ("t[2]", lambda L, x: x[2], [X]),
]


def _setitem(key, value):
    def f(L, x, *values):
        y = x.clone()
        y[key(L)] = value(L, *values)
        return y
    return f


CASES += [
    ("t[idx] = float32 tensor", _setitem(lambda L: L.tensor([0, 1]), lambda L, v: v),
     [X, M[0].astype(np.float32)]),
    ("t[mask] = one float32 element", _setitem(lambda L: L.tensor([True, False]), lambda L, v: v),
     [X, np.array([1.5], np.float32)]),
    ("t[0-d tensor] = int64 tensor", _setitem(lambda L: L.tensor(1), lambda L, v: v), [X, np.arange(4)]),
    ("t[0] = float32 tensor", _setitem(lambda L: 0, lambda L, v: v), [X, M.astype(np.float32)]),
    ("t[mask] = wrong shape", _setitem(lambda L: L.tensor([True, False]), lambda L, v: v), [X, V]),
    ("t[idx] = grad-carrying value, duplicates", _setitem(lambda L: L.tensor([1, 1, 0]), lambda L, v: v * 2),
     [V, V[:3]]),
]


def _run(lib, fn, arrays):
    inputs = [_t(lib, a) for a in arrays]
    for t in inputs:
        if str(t.dtype).endswith("float64"):
            t.requires_grad_(True)
    return inputs, fn(lib, *inputs)


def _flat(r):
    return [x for part in r for x in _flat(part)] if isinstance(r, tuple | list) else [r]


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(name, fn, arrays):
    try:
        t_inputs, t_out = _run(torch, fn, arrays)
    except Exception as error:  # noqa: BLE001 - torch's exception class is what is compared
        with pytest.raises(type(error)):
            _run(tg, fn, arrays)
        return
    g_inputs, g_out = _run(tg, fn, arrays)
    t_parts, g_parts = _flat(t_out), _flat(g_out)
    assert type(g_out).__name__ == type(t_out).__name__ and len(g_parts) == len(t_parts)
    for a, b in zip(t_parts, g_parts, strict=True):
        assert tuple(b.shape) == tuple(a.shape) and str(b.dtype) == str(a.dtype).removeprefix("torch.")
        np.testing.assert_allclose(np.asarray(b.data), a.detach().numpy(), rtol=1e-12)
        shares = a.untyped_storage().data_ptr() == t_inputs[0].untyped_storage().data_ptr()
        if a.numel() and shares:
            assert np.shares_memory(np.asarray(b.data), np.asarray(g_inputs[0].data)), "a view in PyTorch"
    t_diff = [a for a in t_parts if a.requires_grad]
    if not t_diff:
        return
    g_diff = [b for a, b in zip(t_parts, g_parts, strict=True) if a.requires_grad]
    weights = [np.cos(np.arange(a.numel())).reshape(tuple(a.shape)) for a in t_diff]
    sum((a * torch.tensor(w)).sum() for a, w in zip(t_diff, weights, strict=True)).backward()
    sum((b * tg.tensor(w)).sum() for b, w in zip(g_diff, weights, strict=True)).backward()
    for a, b in zip(t_inputs, g_inputs, strict=True):
        if a.requires_grad:
            assert (b.grad is None) == (a.grad is None)
            if a.grad is not None:
                np.testing.assert_allclose(b.grad, a.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_expand_keeps_every_size_given_as_minus_one():
    for shape, sizes in (((1, 2, 1), (3, -1, -1)), ((1, 2, 1), (4, 3, -1, 5)), ((2, 1), (-1, -1))):
        ours = tg.ones(*shape).expand(*sizes)
        theirs = torch.ones(*shape).expand(*sizes)
        assert ours.shape == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert tg.broadcast_to(tg.ones(1, 2, 1), (-1, 2, 5)).shape == (1, 2, 5)
    with pytest.raises(RuntimeError):  # -1 for a new leading dimension has no size to keep
        tg.ones(2).expand(-1, 2)
