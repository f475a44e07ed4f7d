"""Leftover differences from PyTorch found by earlier parity sweeps, each checked side by side with
torch: inference tensors, `-` with a bool in place, `F.linear`'s bias and dtypes, `pad_sequence`'s
dtype and errors, the non-leaf `.grad` warning, `deepcopy` of a tensor with its views, and integer
`linspace`."""

import copy
import warnings

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.nn.utils.rnn import pad_sequence, unpad_sequence

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.data)


# --- inference mode ------------------------------------------------------------------------------


def test_inference_tensors_are_marked_as_pytorch_marks_them():
    def states(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            made, product, view_of_normal = lib.ones(2), x * 2, x[1:]
            inside = lib.is_inference_mode_enabled()
            with lib.inference_mode(False):
                nested = (lib.ones(1).is_inference(), lib.is_inference_mode_enabled())
        with lib.no_grad():
            no_grad = (lib.ones(1).is_inference(), lib.is_inference_mode_enabled())

        @lib.inference_mode()
        def decorated():
            return lib.ones(1)

        return (made.is_inference(), product.is_inference(), view_of_normal.is_inference(),
                made[0].is_inference(), (made + 1).is_inference(), x.is_inference(), inside, nested,
                no_grad, decorated().is_inference(), lib.is_inference_mode_enabled(), lib.is_inference(made))

    assert states(tg) == states(torch) == (True, True, False, True, False, False, True, (False, False),
                                           (False, False), True, False, True)


# --- `-` with a bool, in place -------------------------------------------------------------------


@pytest.mark.parametrize("case", ["sub_ True", "isub True", "sub_ False", "sub_ bool tensor", "bool sub_ 1",
                                  "bool isub bool", "rsub True"])
def test_subtracting_a_bool_in_place_raises_as_pytorch(case):
    for lib in (torch, tg):
        x = lib.ones(3)
        mask = lib.ones(3, dtype=lib.bool)
        call = {"sub_ True": lambda: x.sub_(True), "isub True": lambda: x.__isub__(True),
                "sub_ False": lambda: x.sub_(False), "sub_ bool tensor": lambda: x.sub_(mask),
                "bool sub_ 1": lambda: mask.sub_(1), "bool isub bool": lambda: mask.__isub__(mask),
                "rsub True": lambda: lib.rsub(x, True)}[case]
        with pytest.raises(RuntimeError, match="(?i)subtraction"):
            call()
        assert _np(x).tolist() == [1.0, 1.0, 1.0]  # unchanged


def test_subtracting_numbers_in_place_still_works():
    for value in (2, 0.5, np.float64(1.5), tg.tensor([1.0, 2.0, 3.0])):
        x, t = tg.ones(3), torch.ones(3)
        x -= value
        t -= torch.tensor(value.data) if isinstance(value, tg.Tensor) else value
        assert np.array_equal(_np(x), _np(t))


# --- F.linear: a bias that broadcasts, dtype errors ------------------------------------------------


@pytest.mark.parametrize("x_shape, bias_shape", [((2, 3), (1,)), ((2, 3), (2, 1)), ((2, 3), (1, 4)),
                                                 ((2, 3), ()), ((3,), (1,)), ((3,), ()), ((5, 2, 3), (1, 4)),
                                                 ((2, 2, 2, 3), (2, 1, 4)), ((0, 3), (1,)), ((2, 3), (4,))])
def test_linear_broadcasts_the_bias_with_its_gradient(x_shape, bias_shape):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in (x_shape, (4, x_shape[-1]), bias_shape)]
    results = []
    for lib, functional in ((torch, TF), (tg, F)):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = functional.linear(x, w, b)
        weights = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))
        (out * weights).sum().backward()
        results.append([_np(out)] + [np.asarray(t.grad) for t in (x, w, b)])
    for ours, theirs in zip(results[1], results[0], strict=True):
        assert ours.shape == theirs.shape and np.allclose(ours, theirs)


@pytest.mark.parametrize("x_shape, bias_shape", [((2, 3), (3,)), ((2, 3), (5, 2, 4)), ((3,), (2, 4))])
def test_linear_refuses_a_bias_that_would_grow_the_output(x_shape, bias_shape):
    for lib, functional in ((torch, TF), (tg, F)):
        with pytest.raises(RuntimeError):
            functional.linear(lib.ones(*x_shape), lib.ones(4, x_shape[-1]), lib.ones(bias_shape))


@pytest.mark.parametrize("dtypes", [("float32", "float64", None), ("float64", "float32", None),
                                    ("float32", "float32", "float64")])
def test_linear_dtype_mismatch_is_a_runtime_error(dtypes):
    for lib, functional in ((torch, TF), (tg, F)):
        x, w = lib.ones(2, 3, dtype=getattr(lib, dtypes[0])), lib.ones(4, 3, dtype=getattr(lib, dtypes[1]))
        b = None if dtypes[2] is None else lib.ones(4, dtype=getattr(lib, dtypes[2]))
        with pytest.raises(RuntimeError):
            functional.linear(x, w, b)
    with pytest.raises(TypeError):  # Python's convention, kept
        F.linear(tg.ones(2, 3), tg.ones(4, 3, dtype=tg.float64))


# --- pad_sequence ----------------------------------------------------------------------------------


def test_pad_sequence_bad_side_is_runtime_and_value_error():
    with pytest.raises(RuntimeError):
        torch.nn.utils.rnn.pad_sequence([torch.ones(2)], padding_side="bad")
    with pytest.raises(RuntimeError, match="padding_side"):
        pad_sequence([tg.ones(2)], padding_side="bad")
    with pytest.raises(ValueError):
        pad_sequence([tg.ones(2)], padding_side="bad")


@pytest.mark.parametrize("values", [([2, 3, 4], [1.7, -1.7]), ([1.5, 2.5], [1, 2, 3]), ([True], [0.0, 2.0]),
                                    ([1, 2], [-1, 300]), ([0.25, 0.5], [1.0, 2.0, 3.0])])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_keeps_the_first_sequence_dtype(values, side):
    dtypes = {(2, 3, 4): "int64", (1, 2): "uint8", (0.25, 0.5): "float64"}  # (else the data's)
    padding = 7.5 if tuple(values[0]) == (1, 2) else -1.5
    results = []
    for lib, pad in ((torch, torch.nn.utils.rnn.pad_sequence), (tg, pad_sequence)):
        seqs = [lib.tensor(v, dtype=getattr(lib, dtypes[tuple(v)], None) if tuple(v) in dtypes else None)
                for v in values]
        results.append(pad(seqs, padding_value=padding, padding_side=side))
        if str(seqs[0].dtype).endswith("uint8"):  # a padding value out of the dtype's range: refused
            with pytest.raises(RuntimeError, match="overflow"):
                pad(seqs, padding_value=-0.5)
    theirs, ours = results
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    assert np.array_equal(_np(ours), _np(theirs))


def test_pad_sequence_of_mixed_floats_sends_gradients_back_in_each_dtype():
    grads = []
    for lib, pad in ((torch, torch.nn.utils.rnn.pad_sequence), (tg, pad_sequence)):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        out = pad([a, b], batch_first=True, padding_side="left")
        assert str(out.dtype).endswith("float32")
        (out * lib.arange(6.0).reshape(2, 3)).sum().backward()
        grads.append((np.asarray(a.grad), np.asarray(b.grad)))
    for ours, theirs in zip(grads[1], grads[0], strict=True):
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)


def test_unpad_sequence_takes_a_list_of_lengths_too():
    # (PyTorch needs a tensor of lengths there, and raises AttributeError for a list: this is lenient)
    padded = pad_sequence([tg.arange(2.0), tg.arange(3.0)], batch_first=True)
    pieces = unpad_sequence(padded, [2, 3], batch_first=True)
    assert [s.tolist() for s in pieces] == [[0.0, 1.0], [0.0, 1.0, 2.0]]


# --- .grad of a non-leaf warns ---------------------------------------------------------------------


def test_grad_of_a_non_leaf_warns_as_pytorch():
    for lib in (torch, tg):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        with pytest.warns(UserWarning, match="not a leaf Tensor"):
            assert y.grad is None
        kept = x * 3
        kept.retain_grad()
        (y.sum() + kept.sum()).backward()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert kept.grad is not None and x.grad is not None and lib.ones(1).grad is None


def test_drawing_a_tensor_graph_never_warns():
    visualize = pytest.importorskip("visualize")
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 3).tanh().sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        visualize.draw_dot(loss).source  # noqa: B018 - builds the picture's text
        loss.backward(retain_graph=True)
        visualize.draw_dot(loss).source  # noqa: B018
        assert visualize.backprop_steps((x * x).sum())


# --- deepcopy of a tensor and its views ----------------------------------------------------------


def test_deepcopy_keeps_views_sharing_the_copied_storage():
    results = []
    for lib in (torch, tg):
        b = lib.arange(6.0).reshape(2, 3)
        copies = copy.deepcopy([b[:, 1:], b, b[0], b.t(), b[:, ::2]])
        copies[1].add_(100)
        results.append([_np(c).tolist() for c in copies] + [_np(b).tolist()])
        assert copies[0].stride() == b[:, 1:].stride() and copies[3].stride() == b.t().stride()
    assert results[0] == results[1]
    alone = copy.deepcopy(tg.arange(6.0).reshape(2, 3)[:, 1:])
    assert alone.tolist() == [[1.0, 2.0], [4.0, 5.0]] and alone._base is None
    layer = tg.nn.Linear(2, 3)
    twin = copy.deepcopy(layer)
    assert not np.shares_memory(twin.weight.data, layer.weight.data)
    assert np.array_equal(twin.weight.data, layer.weight.data)


# --- integer linspace --------------------------------------------------------------------------


def test_integer_linspace_rounds_each_value_once_as_pytorch():
    assert tg.linspace(-3.28, 1.0, 7, dtype=tg.int16).tolist() == [-3, -2, -1, 0, 0, 0, 1]
    rng = np.random.default_rng(3)
    for _ in range(300):
        start, end = rng.uniform(-60, 60, 2) if rng.random() < 0.5 else rng.integers(-900, 900, 2) * 1.0
        steps = int(rng.integers(0, 40))
        for name in ("int64", "int16"):
            theirs = torch.linspace(float(start), float(end), steps, dtype=getattr(torch, name))
            ours = tg.linspace(float(start), float(end), steps, dtype=getattr(tg, name))
            assert np.array_equal(_np(ours), _np(theirs)), (start, end, steps, name)
