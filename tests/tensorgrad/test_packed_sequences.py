"""Packed sequences (`nn.utils.rnn`) and the recurrent layers run over them, against PyTorch.

Packing is a gather of the padded batch's valid steps, padding its inverse scatter: both are
checked for values, dtypes and gradients (PyTorch and finite differences). The layers take a
PackedSequence and must give PyTorch's packed output and final states (each sequence's state at
its own last step, in the caller's batch order) and gradients, for every kind, layers,
directions and LSTM's projection, with the batch sorted or not, to 1e-10 in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from foreign_array import is_foreign
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg
from tensorgrad import nn
from tensorgrad.func import functional_call
from tensorgrad.nn.utils import rnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

LENGTHS = {True: [4, 3, 3, 1], False: [2, 4, 1, 3, 4]}  # by enforce_sorted


def _pair(array: np.ndarray, requires_grad: bool = True):
    return tg.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


def _close(ours, theirs, tol: float = 1e-10) -> None:
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else theirs
    ours = ours.data if isinstance(ours, tg.Tensor) else ours
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


# --- packing and padding ---------------------------------------------------------------------------


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_pad_match_torch(batch_first, enforce_sorted):
    lengths = LENGTHS[enforce_sorted]
    shape = (len(lengths), 5, 2) if batch_first else (5, len(lengths), 2)
    x, tx = _pair(np.random.default_rng(0).standard_normal(shape))
    packed = rnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    expected = trnn.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    _close(packed.data, expected.data)
    assert packed.batch_sizes.dtype == tg.int64 and packed.batch_sizes.device == tg.device("cpu")
    assert packed.batch_sizes.tolist() == expected.batch_sizes.tolist()
    for ours, theirs in ((packed.sorted_indices, expected.sorted_indices),
                         (packed.unsorted_indices, expected.unsorted_indices)):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.dtype == tg.int64 and ours.tolist() == theirs.tolist()
    padded, lens = rnn.pad_packed_sequence(packed, batch_first=batch_first, padding_value=-2.5,
                                           total_length=6)
    tpadded, tlens = trnn.pad_packed_sequence(expected, batch_first=batch_first, padding_value=-2.5,
                                              total_length=6)
    _close(padded, tpadded)
    assert lens.dtype == tg.int64 and lens.tolist() == tlens.tolist() == lengths
    weights = np.random.default_rng(1).standard_normal(padded.shape)
    (padded * tg.tensor(weights)).sum().backward()
    (tpadded * torch.tensor(weights)).sum().backward()
    _close(x.grad, tx.grad)
    assert x.grad[(slice(None), 3) if batch_first else (3,)].any()  # packed steps carry gradient
    tg.gradcheck(lambda t: rnn.pad_packed_sequence(
        rnn.pack_padded_sequence(t, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted),
        batch_first=batch_first, padding_value=1.0)[0], [x])


def test_pack_sequence_unpack_and_unpad():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((n, 3)) for n in (2, 5, 1, 5)]
    ours = [tg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    packed = rnn.pack_sequence(ours, enforce_sorted=False)
    expected = trnn.pack_sequence(theirs, enforce_sorted=False)
    _close(packed.data, expected.data)
    assert packed.sorted_indices.tolist() == expected.sorted_indices.tolist() == [1, 3, 0, 2]  # stable ties
    unpacked = rnn.unpack_sequence(packed)
    for u, a in zip(unpacked, arrays, strict=True):
        _close(u, a, 0)
    sum((u * (i + 1)).sum() for i, u in enumerate(unpacked)).backward()
    for i, t in enumerate(ours):
        np.testing.assert_array_equal(t.grad, np.full(t.shape, i + 1.0))
    padded, tpadded = rnn.pad_sequence(ours), trnn.pad_sequence(theirs)
    lengths = [2, 5, 1, 5]
    for u, v in zip(rnn.unpad_sequence(padded, tg.tensor(lengths)), trnn.unpad_sequence(tpadded.clone(),
                                                                                           torch.tensor(lengths)),
                    strict=True):
        _close(u, v)
    first = rnn.unpad_sequence(padded.transpose(0, 1), lengths, batch_first=True)
    assert [tuple(u.shape) for u in first] == [(2, 3), (5, 3), (1, 3), (5, 3)]
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn.pack_sequence(ours)
    ints = rnn.pack_sequence([tg.tensor([1, 2]), tg.tensor([3])])
    assert ints.data.dtype == tg.int64 and ints.data.tolist() == [1, 3, 2]


def test_invert_permutation_and_packed_sequence_methods():
    perm = tg.tensor([2, 0, 3, 1])
    expected = trnn.invert_permutation(torch.tensor([2, 0, 3, 1]))
    assert rnn.invert_permutation(perm).tolist() == expected.tolist() == [1, 3, 0, 2]
    assert rnn.invert_permutation(None) is None
    packed = rnn.pack_padded_sequence(tg.randn(3, 2, 4), [3, 1])
    assert isinstance(packed, tuple) and packed._fields == trnn.PackedSequence._fields
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert batch_sizes.tolist() == [2, 1, 1] and sorted_indices is None and unsorted_indices is None
    assert not packed.is_cuda and packed.float() is packed
    double = packed.double()
    assert double.data.dtype == tg.float64 and double.batch_sizes is packed.batch_sizes
    assert packed.to(tg.float64).data.dtype == tg.float64 and packed.cpu() is packed
    made = rnn.PackedSequence(data, batch_sizes, tg.tensor([1, 2, 0]))
    assert made.unsorted_indices.tolist() == [2, 0, 1]  # completed from sorted_indices, as in PyTorch


def test_packing_errors_match_torch():
    x = tg.randn(4, 3, 2)
    for lengths, message in (([2, 3, 1], "sorted in decreasing order"), ([3, 2, 0], "greater than 0"),
                             ([3, 2], r"to be equal to batch_size, but got 2 \(batch_size=3\)")):
        with pytest.raises(RuntimeError, match=message):
            rnn.pack_padded_sequence(x, lengths)
        with pytest.raises(RuntimeError, match=message):
            trnn.pack_padded_sequence(torch.randn(4, 3, 2), lengths)
    with pytest.raises(RuntimeError, match="exceed the 4 time steps"):
        rnn.pack_padded_sequence(x, [5, 2, 1])
    with pytest.raises(RuntimeError, match="lengths"):
        rnn.pack_padded_sequence(x, tg.tensor([3.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        rnn.pad_packed_sequence(rnn.pack_padded_sequence(x, [3, 2, 1]), total_length=2)
    with pytest.raises(RuntimeError, match="empty list"):
        rnn.pack_sequence([])


# --- the recurrent layers over packed input --------------------------------------------------------


def _layers(kind: str, **options):
    theirs = getattr(torch.nn, kind)(3, 5, dtype=torch.float64, **options)
    ours = getattr(nn, kind)(3, 5, dtype=tg.float64, **options)
    ours.load_state_dict({k: tg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _states(result, kind):
    return list(result) if kind == "LSTM" else [result]


CONFIGS = [("RNN", {}), ("GRU", {}), ("LSTM", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
           ("GRU", {"num_layers": 2, "bidirectional": True}),
           ("LSTM", {"num_layers": 2, "bidirectional": True}),
           ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True})]


@pytest.mark.parametrize("kind,options", CONFIGS)
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_layers_on_packed_input_match_torch(kind, options, enforce_sorted):
    lengths = LENGTHS[enforce_sorted]
    ours, theirs = _layers(kind, **options)
    rng = np.random.default_rng(3)
    x, tx = _pair(rng.standard_normal((max(lengths), len(lengths), 3)))
    count = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    widths = [options.get("proj_size") or 5] + ([5] if kind == "LSTM" else [])
    h0 = [_pair(rng.standard_normal((count, len(lengths), w))) for w in widths]
    for given in (False, True):
        hx = None if not given else tuple(h for h, _ in h0) if kind == "LSTM" else h0[0][0]
        thx = None if not given else tuple(h for _, h in h0) if kind == "LSTM" else h0[0][1]
        out, hidden = ours(rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted), hx)
        tout, thidden = theirs(trnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted), thx)
        assert isinstance(out, rnn.PackedSequence) and out.batch_sizes is not None
        assert out.batch_sizes.tolist() == tout.batch_sizes.tolist()
        _close(out.data, tout.data)
        hidden, thidden = _states(hidden, kind), _states(thidden, kind)
        loss = (out.data * tg.tensor(np.cos(np.arange(out.data.numel())).reshape(out.data.shape))).sum()
        tloss = (tout.data * torch.tensor(np.cos(np.arange(out.data.numel())).reshape(out.data.shape))).sum()
        for i, (h, th) in enumerate(zip(hidden, thidden, strict=True)):
            _close(h, th)
            weights = np.sin(np.arange(h.numel()) * (i + 2.0)).reshape(h.shape)
            loss, tloss = loss + (h * tg.tensor(weights)).sum(), tloss + (th * torch.tensor(weights)).sum()
        loss.backward()
        tloss.backward()
        _close(x.grad, tx.grad)
        expected = dict(theirs.named_parameters())
        for name, p in ours.named_parameters():
            _close(p.grad, expected[name].grad)
        if given:
            for h, th in h0:
                _close(h.grad, th.grad)
        for p in (x, *ours.parameters(), *(h for h, _ in h0)):
            p.grad = None
        theirs.zero_grad()
        tx.grad = None


def test_packed_final_state_is_each_sequences_own_last_step():
    ours, _ = _layers("GRU", bidirectional=True)
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((n, 3)) for n in (2, 4, 1)]
    _, h_n = ours(rnn.pack_sequence([tg.tensor(a) for a in arrays], enforce_sorted=False))
    for b, a in enumerate(arrays):  # each sequence alone, unpadded, gives the same states
        _, alone = ours(tg.tensor(a))
        _close(h_n[:, b], alone.data, 1e-12)


def test_layer_gradcheck_on_packed_input():
    ours, _ = _layers("LSTM", bidirectional=True, proj_size=2)
    x = tg.tensor(np.random.default_rng(5).standard_normal((3, 3, 3)), requires_grad=True)

    def run(t):
        out, (h, c) = ours(rnn.pack_padded_sequence(t, [2, 3, 1], enforce_sorted=False))
        return out.data.sum() + (h * h).sum() + c.sum()

    tg.gradcheck(run, [x])


def test_proj_size_on_padded_input_matches_torch():
    ours, theirs = _layers("LSTM", proj_size=3, num_layers=2, batch_first=True)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    x, tx = _pair(np.random.default_rng(6).standard_normal((2, 4, 3)))
    out, (h, c) = ours(x)
    tout, (th, tc) = theirs(tx)
    for a, b in ((out, tout), (h, th), (c, tc)):
        _close(a, b)
    assert h.shape == (2, 2, 3) and c.shape == (2, 2, 5)
    (out.sum() + (c * c).sum()).backward()
    (tout.sum() + (tc * tc).sum()).backward()
    _close(x.grad, tx.grad)
    _close(ours.weight_hr_l1.grad, theirs.weight_hr_l1.grad)
    unbatched, (uh, _) = ours(x[0])
    _close(unbatched, out[0])
    _close(uh, h[:, 0])


def test_proj_size_errors_match_torch():
    for make, error in ((lambda m: m.LSTM(3, 4, proj_size=4), "smaller than hidden_size"),
                        (lambda m: m.LSTM(3, 4, proj_size=-1), "positive integer or zero"),
                        (lambda m: m.GRU(3, 4, proj_size=2), "only supported for LSTM")):
        with pytest.raises(ValueError, match=error):
            make(nn)
        with pytest.raises(ValueError, match=error):
            make(torch.nn)
    lstm = nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(RuntimeError, match=r"expected hidden size \(1, 2, 2\)"):
        lstm(tg.randn(5, 2, 3), (tg.zeros(1, 2, 4), tg.zeros(1, 2, 4)))


# --- on arrays that refuse numpy operands, as a GPU's do -------------------------------------------


def _pack_pad(m, x):
    packed = rnn.pack_padded_sequence(x, m.tensor([2, 4, 1]), enforce_sorted=False)
    padded, _ = rnn.pad_packed_sequence(packed, padding_value=0.5, total_length=5)
    return packed.data, padded


@pytest.mark.parametrize("kind,options", [("GRU", {"bidirectional": True}),
                                          ("LSTM", {"proj_size": 2, "num_layers": 2})])
def test_foreign_arrays(kind, options):
    check_same(run_twice(_pack_pad, [np.random.default_rng(7).standard_normal((4, 3, 2))]))
    layer = getattr(nn, kind)(3, 5, dtype=tg.float64, **options)
    names = [n for n, _ in layer.named_parameters()]
    arrays = [np.random.default_rng(8).standard_normal((4, 3, 3))] + [p.data for p in layer.parameters()]

    def run(m, x, *weights):
        packed = rnn.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        out, hidden = functional_call(layer, dict(zip(names, weights, strict=True)), (packed,))
        return (out.data, *_states(hidden, kind))

    runs = run_twice(run, arrays)
    check_same(runs)
    assert is_foreign(runs[1][0][0].data)
