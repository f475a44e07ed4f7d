"""`untyped_storage()` and `storage()`: the memory a tensor shares with its views, as PyTorch shows it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _views(m):
    base = m.arange(24, dtype=m.float32).reshape(4, 6)
    return base, [base[1:], base.t(), base[:, 2], base.reshape(6, 4), base.as_strided((2, 2), (1, 2), 3),
                  base.view(m.int32), base.unsqueeze(0).expand(3, 4, 6)]


def test_views_share_the_storage_of_their_base():
    for m in (torch, tg):
        base, views = _views(m)
        pointer = base.untyped_storage().data_ptr()
        assert pointer == base.data_ptr()
        assert all(view.untyped_storage().data_ptr() == pointer for view in views)
        assert all(view.untyped_storage().nbytes() == 96 for view in views)
        assert base.clone().untyped_storage().data_ptr() != pointer       # a copy has memory of its own


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "complex64"])
def test_sizes_and_elements_match_pytorch(dtype):
    values = np.arange(6).reshape(2, 3).astype(dtype)
    ours_t, theirs_t = tg.tensor(values)[1:], torch.tensor(values)[1:]
    ours, theirs = ours_t.untyped_storage(), theirs_t.untyped_storage()
    assert (ours.nbytes(), ours.size(), len(ours), ours.element_size()) == \
        (theirs.nbytes(), theirs.size(), len(theirs), theirs.element_size())
    assert ours.tolist() == theirs.tolist() and ours[3] == theirs[3] and str(ours.device) == "cpu"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        typed, typed_torch = ours_t.storage(), theirs_t.storage()
    assert "TypedStorage is deprecated" in str(caught[0].message)
    assert (typed.size(), len(typed), typed.element_size(), typed.nbytes()) == \
        (typed_torch.size(), len(typed_torch), typed_torch.element_size(), typed_torch.nbytes())
    assert typed.tolist() == typed_torch.tolist() and typed[4] == typed_torch[4]
    assert str(typed.dtype) == dtype and typed.untyped().data_ptr() == ours.data_ptr()


def test_storage_offset_counts_from_the_storage():
    for m in (torch, tg):
        base, views = _views(m)
        assert [view.storage_offset() for view in views] == [6, 0, 2, 0, 3, 0, 0]


def test_repr_lists_the_bytes():
    assert repr(tg.tensor([1, 2], dtype=tg.uint8).untyped_storage()) == \
        " 1\n 2\n[tensorgrad.UntypedStorage(device=cpu) of size 2]"
    assert isinstance(tg.zeros(2).untyped_storage(), tg.UntypedStorage)
