"""Views share storage and copy nothing; strides, offsets and contiguity read as PyTorch's.

Each view op is checked three ways: it shares memory with its base (a write through either
shows in the other, and both see the same version counter), its `stride()`,
`storage_offset()` and `is_contiguous()` equal hard-coded values worked out by hand (and
PyTorch's, where installed), and what must copy (`contiguous()` of a non-contiguous tensor,
`reshape` that strides can't express, advanced indexing) does copy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgrad as tg

# (name, view of x = arange(24).reshape(2, 3, 4), shape, stride, storage_offset, is_contiguous)
STRIDES = [
    ("base", lambda x: x, (2, 3, 4), (12, 4, 1), 0, True),
    ("x[0].T", lambda x: x[0].T, (4, 3), (1, 4), 0, False),
    ("transpose(0,2)", lambda x: x.transpose(0, 2), (4, 3, 2), (1, 4, 12), 0, False),
    ("transpose(-1,-2)", lambda x: x.transpose(-1, -2), (2, 4, 3), (12, 1, 4), 0, False),
    ("permute(2,0,1)", lambda x: x.permute(2, 0, 1), (4, 2, 3), (1, 12, 4), 0, False),
    ("x[1]", lambda x: x[1], (3, 4), (4, 1), 12, True),
    ("x[1, 2]", lambda x: x[1, 2], (4,), (1,), 20, True),
    ("x[1, 2, 3]", lambda x: x[1, 2, 3], (), (), 23, True),
    ("x[:, 1:, 2]", lambda x: x[:, 1:, 2], (2, 2), (12, 4), 6, False),
    ("x[..., ::2]", lambda x: x[..., ::2], (2, 3, 2), (12, 4, 2), 0, False),
    ("x[1:, ::2, None, ...]", lambda x: x[1:, ::2, None, ...], (1, 2, 1, 4), (12, 8, 4, 1), 12, False),
    ("x[None]", lambda x: x[None], (1, 2, 3, 4), (24, 12, 4, 1), 0, True),
    ("x[:, None, 1]", lambda x: x[:, None, 1], (2, 1, 4), (12, 12, 1), 4, False),
    ("x[..., None]", lambda x: x[..., None], (2, 3, 4, 1), (12, 4, 1, 1), 0, True),
    ("x[1][1:][..., 2:]", lambda x: x[1][1:][..., 2:], (2, 2), (4, 1), 18, False),
    ("unsqueeze(1)", lambda x: x.unsqueeze(1), (2, 1, 3, 4), (12, 12, 4, 1), 0, True),
    ("unsqueeze(-1)", lambda x: x.unsqueeze(-1), (2, 3, 4, 1), (12, 4, 1, 1), 0, True),
    ("x[0].T.unsqueeze(0)", lambda x: x[0].T.unsqueeze(0), (1, 4, 3), (4, 1, 4), 0, False),
    ("x[:, :1].squeeze(1)", lambda x: x[:, :1].squeeze(1), (2, 4), (12, 1), 0, False),
    ("unsqueeze.squeeze", lambda x: x.unsqueeze(2).squeeze(), (2, 3, 4), (12, 4, 1), 0, True),
    ("x[0, :, :1].expand(3, 5)", lambda x: x[0, :, :1].expand(3, 5), (3, 5), (4, 0), 0, False),
    ("x[0, 1].expand(2, 4)", lambda x: x[0, 1].expand(2, 4), (2, 4), (0, 1), 4, False),
    ("x[:, :1].expand(2, 1, 4)", lambda x: x[:, :1].expand(2, 1, 4), (2, 1, 4), (12, 4, 1), 0, False),
    ("expand(1, 2, 3, 4)", lambda x: x.expand(1, 2, 3, 4), (1, 2, 3, 4), (24, 12, 4, 1), 0, True),
    ("broadcast_to((5, 2, 3, 4))", lambda x: x.broadcast_to((5, 2, 3, 4)),
     (5, 2, 3, 4), (0, 12, 4, 1), 0, False),
    ("x[1, :, 2:3].expand(-1, 6)", lambda x: x[1, :, 2:3].expand(-1, 6), (3, 6), (4, 0), 14, False),
    ("reshape(6, 4)", lambda x: x.reshape(6, 4), (6, 4), (4, 1), 0, True),
    ("view(4, 6)", lambda x: x.view(4, 6), (4, 6), (6, 1), 0, True),
    ("x[1].view(-1)", lambda x: x[1].view(-1), (12,), (1,), 12, True),
    ("flatten()", lambda x: x.flatten(), (24,), (1,), 0, True),
    ("flatten(0, 1)", lambda x: x.flatten(0, 1), (6, 4), (4, 1), 0, True),
    ("transpose(0,1).contiguous()", lambda x: x.transpose(0, 1).contiguous(), (3, 2, 4), (8, 4, 1), 0, True),
]
STRIDE_IDS = [row[0] for row in STRIDES]


def _x(dtype=np.float32) -> tg.Tensor:
    return tg.from_numpy(np.arange(24, dtype=dtype).reshape(2, 3, 4))


@pytest.mark.parametrize(("name", "fn", "shape", "stride", "offset", "contiguous"), STRIDES, ids=STRIDE_IDS)
def test_stride_offset_contiguity_by_hand(name, fn, shape, stride, offset, contiguous):
    for dtype in (np.float32, np.float64):  # strides count elements, not bytes
        v = fn(_x(dtype))
        assert v.shape == shape
        assert v.stride() == stride
        assert v.storage_offset() == offset
        assert v.is_contiguous() is contiguous
        if v.ndim:
            assert v.stride(0) == stride[0] and v.stride(-1) == stride[-1]


@pytest.mark.parametrize(("name", "fn", "shape", "stride", "offset", "contiguous"), STRIDES, ids=STRIDE_IDS)
def test_stride_offset_contiguity_match_torch(name, fn, shape, stride, offset, contiguous):
    torch = pytest.importorskip("torch")
    ours = fn(_x())
    theirs = fn(torch.arange(24, dtype=torch.float32).reshape(2, 3, 4))
    assert ours.shape == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.is_contiguous() == theirs.is_contiguous()
    np.testing.assert_array_equal(ours.data, theirs.numpy())


VIEWS = {
    "reshape": lambda x: x.reshape(6, 4),
    "view": lambda x: x.view(4, 6),
    "transpose": lambda x: x.transpose(0, 2),
    ".T": lambda x: x[1].T,
    "permute": lambda x: x.permute(1, 2, 0),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x[:, 1:2].squeeze(1),
    "flatten": lambda x: x.flatten(),
    "slice": lambda x: x[1:, ::2, None, ...],
    "int index": lambda x: x[1, 2],
    "0-d index": lambda x: x[1, 2, 3],
    "view of a view": lambda x: x.transpose(0, 1)[1:].permute(2, 0, 1)[::3],
    "contiguous (already)": lambda x: x.contiguous(),
}


@pytest.mark.parametrize("fn", list(VIEWS.values()), ids=list(VIEWS))
def test_writing_through_a_view_changes_the_base(fn):
    base = tg.tensor(np.arange(24.0).reshape(2, 3, 4))
    positions = fn(tg.tensor(np.arange(24).reshape(2, 3, 4))).data  # which elements the view holds
    v = fn(base)
    assert np.shares_memory(v.data, base.data)
    with tg.no_grad():
        v.mul_(-1.0)
    expected = np.arange(24.0)
    expected[np.unique(positions)] *= -1
    np.testing.assert_array_equal(base.data.ravel(), expected)
    # One storage, one version counter: backward would see the change through either.
    assert base._version == 1 and v._version == 1
    # And the other way round: a write to the base shows in the view.
    base.data[...] = 7.0
    np.testing.assert_array_equal(v.data, np.full(v.shape, 7.0))


def test_from_numpy_shares_memory_both_ways():
    array = np.zeros((2, 3), dtype=np.float32)
    t = tg.from_numpy(array)
    array[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    with tg.no_grad():
        t.add_(1.0)
    np.testing.assert_array_equal(array, [[1, 6, 1], [1, 1, 1]])
    assert t.numpy() is array or np.shares_memory(t.numpy(), array)
    assert t.dtype == tg.float32


def test_tensor_copies_its_input():
    array = np.zeros(3)
    t = tg.tensor(array)
    array[0] = 1.0
    assert t.data[0] == 0.0


def test_expand_is_stride_zero_and_shares_memory():
    base = tg.tensor([1.0, 2.0, 3.0])
    e = base.expand(4, 3)
    assert e.stride() == (0, 1)
    assert np.shares_memory(e.data, base.data)
    assert e.data.nbytes == 4 * 3 * 4  # nominal size; the buffer holds 3 floats
    base.data[1] = 9.0
    np.testing.assert_array_equal(e.data[:, 1], [9.0] * 4)


def test_views_of_a_view_keep_sharing_the_version_counter():
    x = tg.zeros(4, 5)
    v = x.T[1:].unsqueeze(0)
    with tg.no_grad():
        x.fill_(1.0)
    assert v._version == x._version == 1
    with tg.no_grad():
        v.add_(1.0)  # v covers rows 1..4 of x.T: columns 1..4 of x
    assert x._version == 2
    np.testing.assert_array_equal(x.data, [[1, 2, 2, 2, 2]] * 4)


def test_contiguous_returns_self_when_already_contiguous():
    x = tg.randn(3, 4, requires_grad=True)
    assert x.contiguous() is x
    s = x[1:]  # a contiguous slice
    assert s.contiguous() is s


def test_contiguous_copies_a_transposed_tensor_and_passes_the_gradient():
    x = tg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    t = x.T
    c = t.contiguous()
    assert not t.is_contiguous() and c.is_contiguous()
    assert not np.shares_memory(c.data, x.data)
    assert c.stride() == (3, 1)
    np.testing.assert_array_equal(c.data, np.arange(12.0).reshape(3, 4).T)
    weights = np.arange(12.0).reshape(4, 3)
    (c * tg.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad, weights.T)


def test_reshape_copies_only_when_strides_cannot_express_it():
    x = tg.tensor(np.arange(12.0).reshape(3, 4))
    assert np.shares_memory(x.reshape(4, 3).data, x.data)
    assert np.shares_memory(x.T.reshape(4, 1, 3).data, x.data)  # only a size-1 dimension added
    copied = x.T.reshape(12)
    assert not np.shares_memory(copied.data, x.data)
    np.testing.assert_array_equal(copied.data, np.arange(12.0).reshape(3, 4).T.ravel())


def test_view_refuses_what_would_need_a_copy():
    x = tg.tensor(np.arange(12.0).reshape(3, 4))
    with pytest.raises(RuntimeError, match="view"):
        x.T.view(12)
    with pytest.raises(ValueError, match=r"\(5, 3\)"):
        x.view(5, 3)


MASK = np.array([[True, False, True, False]] * 3)
ADVANCED = {  # name: (the key for numpy, the same key as tensorgrad takes it)
    "idx": ([0, 2, 0], [0, 2, 0]),
    "tensor idx": ([2, 2], tg.tensor([2, 2])),
    "rows,cols": (([0, 1], [3, 3]), ([0, 1], [3, 3])),
    ":,cols": ((slice(None), [1, 1]), (slice(None), [1, 1])),
    "mask": (MASK, tg.tensor(MASK)),
}


@pytest.mark.parametrize(("numpy_key", "key"), list(ADVANCED.values()), ids=list(ADVANCED))
def test_advanced_indexing_copies(numpy_key, key):
    x = tg.tensor(np.arange(12.0).reshape(3, 4))
    y = x[key]
    np.testing.assert_array_equal(y.data, np.arange(12.0).reshape(3, 4)[numpy_key])
    assert not np.shares_memory(y.data, x.data)
    with tg.no_grad():
        y.fill_(-1.0)
    np.testing.assert_array_equal(x.data, np.arange(12.0).reshape(3, 4))
    assert x._version == 0


def test_bool_mask_selects_like_numpy():
    x = tg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x[x > 2.5]
    np.testing.assert_array_equal(y.data, [3.0, 4.0, 5.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [[0, 0, 0], [1, 1, 1]])


# --- random chains of views against PyTorch ---------------------------------------------------


@st.composite
def view_chains(draw):
    """A starting shape and a few view steps, each valid for the shape it is applied to."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    steps, current = [], shape
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["unsqueeze", "transpose", "permute", "slice", "expand", "squeeze",
                                     "index", "none"]))
        nd = len(current)
        if kind == "unsqueeze":
            step = ("unsqueeze", draw(st.integers(-nd - 1, nd)))
        elif kind == "transpose" and nd >= 2:
            step = ("transpose", draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1)))
        elif kind == "permute" and nd >= 1:
            step = ("permute", tuple(draw(st.permutations(range(nd)))))
        elif kind == "slice" and nd >= 1:
            d = draw(st.integers(0, nd - 1))
            step = ("key", (slice(None),) * d + (slice(draw(st.integers(0, current[d] - 1)), None,
                                                       draw(st.integers(1, 3))),))
        elif kind == "expand" and nd >= 1:
            sizes = tuple(draw(st.sampled_from([1, 3])) if n == 1 else n for n in current)
            step = ("expand", (draw(st.sampled_from([(), (2,), (1,)])) + sizes))
        elif kind == "squeeze":
            step = ("squeeze",)
        elif kind == "index" and nd >= 1:
            d = draw(st.integers(0, nd - 1))
            step = ("key", (slice(None),) * d + (draw(st.integers(0, current[d] - 1)),))
        elif kind == "none":
            parts = []
            for n in current:
                if draw(st.booleans()):
                    parts.append(None)
                parts.append(draw(st.sampled_from([slice(None), slice(1, None), slice(None, None, 2), 0]))
                             if n > 1 else slice(None))
            if draw(st.booleans()):
                parts.insert(draw(st.integers(0, len(parts))), Ellipsis)
            step = ("key", tuple(parts) + (None,) * draw(st.integers(0, 1)))
        else:
            continue
        current = _apply(np.empty(current), step).shape
        steps.append(step)
    return shape, steps


def _apply(x, step):
    kind, *args = step
    if kind == "key":
        return x[args[0]]
    if isinstance(x, np.ndarray):  # only to follow the shape while drawing
        numpy_ops = {
            "unsqueeze": lambda a, d: np.expand_dims(a, d),
            "transpose": lambda a, d0, d1: np.swapaxes(a, d0, d1),
            "permute": lambda a, p: a.transpose(p),
            "expand": lambda a, s: np.broadcast_to(a, s),
            "squeeze": lambda a: np.squeeze(a),
        }
        return numpy_ops[kind](x, *args)
    if kind == "permute":
        return x.permute(*args[0])
    if kind == "expand":
        return x.expand(*args[0])
    return getattr(x, kind)(*args)


@settings(max_examples=150, deadline=None)
@given(view_chains())
def test_random_view_chains_match_torch_strides(chain):
    torch = pytest.importorskip("torch")
    shape, steps = chain
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    ours, theirs = tg.tensor(values), torch.from_numpy(values.copy())
    for step in steps:
        ours, theirs = _apply(ours, step), _apply(theirs, step)
        assert ours.shape == tuple(theirs.shape), step
        assert ours.stride() == theirs.stride(), step
        assert ours.storage_offset() == theirs.storage_offset(), step
        assert ours.is_contiguous() == theirs.is_contiguous(), step
        np.testing.assert_array_equal(ours.data, theirs.numpy())
