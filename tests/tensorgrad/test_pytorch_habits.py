"""A PyTorch user's habits, checked against PyTorch: the idioms of its tutorials, written once.

Each row of a table is the same code for both libraries (`m` is `tensorgrad` or `torch`, `F` its
`nn.functional`): the answers must agree in value, dtype, shape and kind (a tensor, a list, a
Python number), and where PyTorch raises, so must we, with an exception PyTorch's type catches.
These are the places a habit broke: a keyword PyTorch takes (`sum(dtype=)`, `add(alpha=)`,
`F.relu(inplace=)`), a name it has (`tg.Size`, `x.type()`, `tg.hstack`), a dtype it promotes to
(`cat` of int64 and float32), how it prints (`tensor([1.0000, 2.5000])`), how its DataLoader
batches, and what `save` / `load` keep (a whole training checkpoint).
"""

from __future__ import annotations

import io
import math
from collections import OrderedDict

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as TGF
from tensorgrad import nn, optim
from tensorgrad.data import DataLoader, Dataset, TensorDataset

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _functional(m):
    return TGF if m is tg else TF


def _plain(value):
    """A library's answer in comparable form: tensors as (dtype name, array), containers walked."""
    if isinstance(value, tg.Tensor | torch.Tensor):
        array = value.detach().numpy() if isinstance(value, torch.Tensor) else tg.tensor(value.data).numpy()
        return ("tensor", str(value.dtype).removeprefix("torch."), array)
    if isinstance(value, np.ndarray):
        return ("tensor", str(value.dtype), value)
    if isinstance(value, torch.dtype | np.dtype):
        return ("dtype", str(value).removeprefix("torch."))
    if isinstance(value, tuple):  # torch.Size too  # a named tuple (values, indices) compares as a tuple
        return ("tuple", tuple(_plain(v) for v in value))
    if isinstance(value, list):
        return ("list", [_plain(v) for v in value])
    if isinstance(value, dict):
        return ("dict", {k: _plain(v) for k, v in value.items()})
    return (type(value).__name__, value)


def assert_same(ours, theirs, where=""):
    """Equal answers: the same kinds, dtypes, shapes and (to float32's precision) values."""
    _check(_plain(ours), _plain(theirs), where)


def _check(a, b, where):
    assert a[0] == b[0], f"{where}: {a} vs {b}"
    if a[0] == "tensor":
        assert a[1] == b[1], f"{where}: dtype {a[1]} vs {b[1]}"
        assert a[2].shape == b[2].shape, f"{where}: shape {a[2].shape} vs {b[2].shape}"
        np.testing.assert_allclose(a[2].astype(np.float64), b[2].astype(np.float64), rtol=1e-5, atol=1e-6,
                                   err_msg=where)
    elif a[0] in ("tuple", "list"):
        assert len(a[1]) == len(b[1]), f"{where}: {a} vs {b}"
        for i, (x, y) in enumerate(zip(a[1], b[1], strict=True)):
            _check(x, y, f"{where}[{i}]")
    elif a[0] == "dict":
        assert list(a[1]) == list(b[1]), where
        for key in a[1]:
            _check(a[1][key], b[1][key], f"{where}[{key!r}]")
    elif a[0] == "float":
        assert a[1] == pytest.approx(b[1], rel=1e-6, nan_ok=True), where
    else:
        assert a == b, f"{where}: {a} vs {b}"


# --- the same answer, written once for both libraries ------------------------------------------------

ANSWERS = {
    # creation
    "arange of a 0-d int tensor is int64": lambda m: m.arange(m.tensor(4)),
    "arange of a numpy int is int64": lambda m: m.arange(np.int64(3)),
    "arange(t.size(0)) after .float()": lambda m: m.arange(m.ones(3, 2).size(0)).float(),
    "normal with number arguments": lambda m: m.normal(0.0, 1.0, size=(2, 3)).shape,
    "normal with tensor arguments": lambda m: m.normal(m.zeros(4), m.ones(4)).dtype,
    "randint with named arguments": lambda m: m.randint(low=0, high=5, size=(2, 2)).dtype,
    "randint with high and named size": lambda m: m.randint(3, size=(4,)).shape,
    "randint_like keeps the dtype": lambda m: m.randint_like(m.ones(2, 3), 5).dtype,
    "randint_like with low and high": lambda m: m.randint_like(m.ones(2, dtype=m.long), 2, 3),
    "randn with a generator": lambda m: m.randn(2, 3, generator=m.Generator().manual_seed(0)).shape,
    "rand with a generator": lambda m: m.rand(4, generator=m.Generator().manual_seed(0)).dtype,
    "manual_seed returns a Generator": lambda m: type(m.manual_seed(3)).__name__,
    "initial_seed after manual_seed": lambda m: (m.manual_seed(7), m.initial_seed())[1],
    "legacy FloatTensor from data": lambda m: m.FloatTensor([1, 2]),
    "legacy LongTensor from data": lambda m: m.LongTensor([1, 2]),
    "legacy FloatTensor of a shape": lambda m: m.FloatTensor(2, 3).shape,
    "legacy type isinstance": lambda m: (isinstance(m.ones(2), m.FloatTensor),
                                         isinstance(m.ones(2), m.LongTensor)),
    "is_tensor": lambda m: (m.is_tensor(m.ones(1)), m.is_tensor([1.0])),
    "numel function": lambda m: m.numel(m.ones(2, 3)),
    "Size equals a tuple": lambda m: (m.Size([2, 3]) == (2, 3), m.ones(2, 3).shape == m.Size([2, 3])),
    "view by a Size": lambda m: m.arange(6).view(m.Size([2, 3])),
    "Size numel": lambda m: m.Size([2, 3, 4]).numel(),
    "get_default_dtype": lambda m: m.get_default_dtype(),
    "finfo eps of float32": lambda m: m.finfo(m.float32).eps,
    "finfo of float16": lambda m: (m.finfo(m.float16).max, m.finfo(m.float16).min, m.finfo(m.float16).bits),
    "finfo of the default dtype": lambda m: m.finfo().tiny,
    "iinfo of int64": lambda m: (m.iinfo(m.int64).max, m.iinfo(m.int32).min, m.iinfo(m.uint8).bits),
    "as_tensor shares a numpy array's memory": lambda m: _shares(m),
    "as_tensor of a list with a dtype": lambda m: m.as_tensor([1, 2], dtype=m.float32),
    # tensor methods
    "type() names the legacy type": lambda m: (m.arange(3).type(), m.ones(3).type(),
                                               m.ones(1, dtype=m.float64).type(), m.ones(1).bool().type()),
    "type(dtype) converts": lambda m: m.arange(3).type(m.float64),
    "type(legacy type) converts": lambda m: m.arange(3).type(m.FloatTensor),
    "type('torch.FloatTensor') converts": lambda m: m.arange(3).type("torch.FloatTensor"),
    "is_cuda on the CPU": lambda m: (m.ones(1).is_cuda, m.ones(1).is_cpu),
    "data_ptr of a view is its base's": lambda m: _same_pointer(m),
    "detach_ makes a leaf": lambda m: _detached_in_place(m),
    "legacy new(sizes)": lambda m: m.ones(2, dtype=m.float64).new(2, 3).shape,
    "legacy new(data)": lambda m: m.ones(2, dtype=m.float64).new([1, 2]),
    "legacy new()": lambda m: m.ones(2, dtype=m.int32).new().shape,
    "bernoulli_ with p 0 and 1": lambda m: (m.ones(3).bernoulli_(0.0), m.zeros(3).bernoulli_(1.0)),
    "bernoulli_ with tensor p": lambda m: m.zeros(2, 3).bernoulli_(m.tensor([0.0, 1.0, 1.0])),
    "exponential_ keeps shape and dtype": lambda m: m.empty(3, dtype=m.float64).exponential_().shape,
    "exponential_ is positive": lambda m: bool((m.empty(100).exponential_(2.0) > 0).all()),
    "random_ within bounds": lambda m: _within(m.empty(50).random_(2, 5), 2, 5),
    "random_ with one bound": lambda m: bool((m.zeros(50, dtype=m.long).random_(3) < 3).all()),
    # keywords PyTorch takes
    "sum(dtype=)": lambda m: m.tensor([1, 2]).sum(dtype=m.float32),
    "sum(dim, dtype=) of bool": lambda m: m.tensor([[True, False], [True, True]]).sum(1, dtype=m.int32),
    "mean(dtype=) of an int tensor": lambda m: m.tensor([1, 2]).mean(dtype=m.float64),
    "tg.sum(dtype=)": lambda m: m.sum(m.tensor([1.5, 2.25]), dtype=m.float64),
    "softmax(dtype=)": lambda m: m.softmax(m.tensor([1.0, 2.0]), dim=0, dtype=m.float64),
    "F.softmax(dtype=)": lambda m: _functional(m).softmax(m.tensor([[1.0, 2.0]]), dim=-1, dtype=m.float64),
    "F.log_softmax(dtype=)": lambda m: _functional(m).log_softmax(m.tensor([[1.0, 2.0]]), 1, dtype=m.float64),
    "method log_softmax(dtype=)": lambda m: m.tensor([1.0, 2.0]).log_softmax(0, dtype=m.float64),
    "add(alpha=)": lambda m: m.add(m.ones(2), m.ones(2), alpha=2),
    "add(alpha=) with a number": lambda m: m.add(m.ones(2), 3, alpha=2),
    "sub(alpha=) method": lambda m: m.ones(2).sub(m.tensor([1.0, 2.0]), alpha=3),
    "add_(alpha=)": lambda m: m.zeros(2).add_(m.ones(2), alpha=-0.5),
    "sub_(alpha=)": lambda m: m.zeros(2).sub_(m.ones(2), alpha=2),
    "F.relu(inplace=True) writes into x": lambda m: _relu_in_place(m),
    "nn.ReLU(inplace=True) writes into x": lambda m: _relu_module_in_place(m),
    "F.dropout(inplace=True) outside training": lambda m: _functional(m).dropout(m.ones(3), 0.5, False, True),
    "nn.Dropout(p, inplace=False)": lambda m: m.nn.Dropout(0.1, inplace=False).p,
    "module reprs": lambda m: [repr(m.nn.Dropout(0.3)), repr(m.nn.ReLU()), repr(m.nn.ReLU(inplace=True)),
                               repr(m.nn.Sequential(m.nn.Linear(2, 2), m.nn.ReLU(), m.nn.Dropout()))],
    # dtypes and shapes
    "cat of int64 and float32 is float32": lambda m: m.cat([m.ones(2, dtype=m.long), m.zeros(2)]),
    "cat of int32 and int64 is int64": lambda m: m.cat([m.ones(2, dtype=m.int32), m.zeros(2, dtype=m.long)]),
    "cat of bool and int64": lambda m: m.cat([m.tensor([True]), m.tensor([3])]),
    "cat with an empty 1-d tensor first": lambda m: m.cat([m.tensor([]), m.ones(2, 3)]),
    "cat growing from an empty tensor":
        lambda m: m.cat([m.cat([m.tensor([]), m.ones(1, 2)]), m.zeros(1, 2)], dim=0),
    "concat": lambda m: m.concat([m.ones(2), m.zeros(3)]),
    "concatenate along a dim": lambda m: m.concatenate([m.ones(2, 1), m.zeros(2, 2)], dim=1),
    "hstack of vectors": lambda m: m.hstack([m.ones(2), m.zeros(3)]),
    "hstack of matrices": lambda m: m.hstack([m.ones(2, 1), m.arange(4.0).view(2, 2)]),
    "vstack of vectors": lambda m: m.vstack([m.ones(2), m.zeros(2)]),
    "vstack of a 0-d and a vector": lambda m: m.vstack([m.tensor([5.0]), m.tensor(6.0)]),
    "row_stack": lambda m: m.row_stack((m.arange(3), m.arange(3))),
    "dstack": lambda m: m.dstack([m.ones(2), m.zeros(2)]),
    "dstack of matrices": lambda m: m.dstack([m.ones(2, 3), m.zeros(2, 3)]).shape,
    "column_stack": lambda m: m.column_stack([m.ones(2), m.zeros(2, 2), m.arange(2.0)]),
    # names PyTorch has
    "dist": lambda m: m.dist(m.tensor([0.0, 0.0]), m.tensor([3.0, 4.0])),
    "dist with p=1, broadcast": lambda m: m.dist(m.tensor([[1.0, 2.0]]), m.tensor([4.0, 6.0]), 1),
    "searchsorted 1-d": lambda m: m.searchsorted(m.tensor([1, 3, 5]), m.tensor([2, 6, 3])),
    "searchsorted right, of a number": lambda m: m.searchsorted(m.tensor([1, 3, 5]), 3, right=True),
    "searchsorted batched rows": lambda m: m.searchsorted(m.tensor([[1.0, 3, 5, 7], [2, 4, 6, 8]]),
                                                          m.tensor([[3.0, 6, 9], [3, 6, 9]]), side="right"),
    "bucketize": lambda m: m.bucketize(m.tensor([[1, 5], [6, 9]]), m.tensor([1, 5, 9])),
    "bucketize right, int32": lambda m: m.bucketize(m.tensor([1, 5, 6]), m.tensor([1, 5, 9]), right=True,
                                                    out_int32=True),
    "tril_indices": lambda m: m.tril_indices(3, 3),
    "tril_indices with an offset": lambda m: m.tril_indices(3, 4, -1),
    "triu_indices int32": lambda m: m.triu_indices(2, 3, 1, dtype=m.int32),
    "cartesian_prod": lambda m: m.cartesian_prod(m.tensor([1, 2]), m.tensor([3, 4]), m.tensor([5])),
    "combinations": lambda m: m.combinations(m.tensor([1.0, 2.0, 3.0])),
    "combinations with replacement": lambda m: m.combinations(m.tensor([1, 2, 3]), 2, with_replacement=True),
    "nn.utils.rnn.pad_sequence":
        lambda m: m.nn.utils.rnn.pad_sequence([m.ones(2), m.ones(3)], batch_first=True),
    "pad_sequence with a padding value": lambda m: m.nn.utils.rnn.pad_sequence(
        [m.tensor([[1, 2], [3, 4]]), m.tensor([[5, 6]])], padding_value=-1),
    # reading .data, an array here
    "max(out.data, 1) as in the CIFAR tutorial":
        lambda m: m.max(m.tensor([[1.0, 3.0], [4.0, 2.0]]).data, 1)[1],
    "min(x.data) of an array": lambda m: m.min(m.tensor([[1.0, 3.0], [4.0, 2.0]]).data),
    "argmax(x.data, dim)": lambda m: m.argmax(m.tensor([[1.0, 3.0], [4.0, 2.0]]).data, dim=1),
    # formatting a 0-d tensor as its number
    "f-string with a spec": lambda m: f"{m.tensor(2.5):.2f} {m.tensor(3):03d} {m.tensor(0.25)}",
    "format of an integer tensor": lambda m: format(m.tensor(7), "d"),
}


def _within(t, low, high):
    return ((t >= low) & (t < high)).all().item()


def _shares(m):
    array = np.zeros(3)
    t = m.as_tensor(array)
    array[0] = 5
    return t


def _same_pointer(m):
    x = m.ones(2, 3)
    return (x.data_ptr() == x.view(-1).data_ptr(), x.data_ptr() == x[1].data_ptr())


def _detached_in_place(m):
    x = m.ones(2, requires_grad=True)
    y = x * 2
    y.detach_()
    return (y.requires_grad, y.is_leaf, y.grad_fn is None, y)


def _relu_in_place(m):
    x = m.tensor([-1.0, 2.0])
    out = _functional(m).relu(x, inplace=True)
    return (x, out is x)


def _relu_module_in_place(m):
    x = m.tensor([-1.0, 2.0])
    out = m.nn.ReLU(inplace=True)(x)
    return (x, out is x)


@pytest.mark.parametrize("name", list(ANSWERS))
def test_the_same_answer_as_pytorch(name):
    ours, theirs = ANSWERS[name](tg), ANSWERS[name](torch)
    assert_same(ours, theirs, name)


# --- where PyTorch refuses, so do we --------------------------------------------------------------

ERRORS = {
    "argmax of a bool tensor": lambda m: m.tensor([False, True]).argmax(),
    "argmin of a bool tensor along a dim": lambda m: m.tensor([[False, True]]).argmin(1),
    "max of a list": lambda m: m.max([1.0, 2.0]),
    "set_rng_state of something else": lambda m: m.set_rng_state(m.ones(3)),
    "finfo of an integer dtype": lambda m: m.finfo(m.int64),
    "iinfo of a float dtype": lambda m: m.iinfo(m.float32),
    "type() of a name that is not a type": lambda m: m.ones(1).type("torch.NoSuchTensor"),
    "normal with a negative std": lambda m: m.normal(0.0, -1.0, size=(2,)),
    "randint with an unknown keyword": lambda m: m.randint(0, 5, (2,), hgh=3),
    "DataLoader with sampler and shuffle": lambda m: _loader(m)(m.arange(4), sampler=[0, 1], shuffle=True),
    "DataLoader with negative num_workers": lambda m: _loader(m)(m.arange(4), num_workers=-1),
}


def _loader(m):
    return DataLoader if m is tg else torch.utils.data.DataLoader


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_pytorch_raises(name):
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - whatever PyTorch raises, we raise as well
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)):
        ERRORS[name](tg)


def test_pad_sequence_and_combinations_pass_the_gradient_back():
    grads = []
    for m in (tg, torch):
        a, b = m.tensor([1.0, 2.0], requires_grad=True), m.tensor([3.0], requires_grad=True)
        padded = m.nn.utils.rnn.pad_sequence([a, b], padding_side="left")
        (padded * m.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        c = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (m.combinations(c, 2) ** 2).sum().backward()
        grads.append([a.grad, b.grad, c.grad])
    ours, theirs = grads
    for mine, pytorchs in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, pytorchs.numpy())


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match=r"argmax\(\).*bool"):
        tg.tensor([True]).argmax()
    with pytest.raises(TypeError, match=r"max\(\): argument 'input' must be a Tensor, got list"):
        tg.max([1.0, 2.0])
    with pytest.raises(TypeError, match="randint.*'hgh'"):
        tg.randint(0, 5, (2,), hgh=3)
    with pytest.raises(TypeError, match="randint.*multiple values for argument 'high'"):
        tg.randint(0, 5, high=3)


# --- printing: PyTorch's layout, number for number ------------------------------------------------

REPRS = {
    "floats": lambda m: m.tensor([1.0, 2.5, -3.0]),
    "a 0-d float": lambda m: m.tensor(3.5),
    "one tenth": lambda m: m.tensor([0.1]),
    "0.1 + 0.2": lambda m: m.tensor(0.1 + 0.2),
    "whole floats": lambda m: m.tensor([1.0, 2.0, 3.0]),
    "small values in scientific notation": lambda m: m.tensor([0.0001, 1.0]),
    "tiny values": lambda m: m.tensor([1e-8, 1.0]),
    "a wide range": lambda m: m.tensor([1e6, 1.0]),
    "mixed widths": lambda m: m.tensor([1.2345678, 100.5]),
    "nan and inf": lambda m: m.tensor([float("nan"), float("inf"), 1.0]),
    "negative zero": lambda m: m.tensor([-0.0, 0.0]),
    "ints": lambda m: m.tensor([1, -20, 300]),
    "bools": lambda m: m.tensor([True, False]),
    "a matrix": lambda m: m.arange(6.0).view(2, 3) / 7,
    "a 3-d tensor": lambda m: m.arange(8).view(2, 2, 2),
    "a long vector, summarised": lambda m: m.arange(2000.0),
    "a long int matrix, wrapped": lambda m: m.arange(1000).view(10, 100),
    "a big matrix, summarised": lambda m: m.arange(40 * 40).view(40, 40) * 0.5,
    "requires_grad": lambda m: m.ones(2, requires_grad=True),
    "float16": lambda m: m.tensor([1.5], dtype=m.float16),
    "float64 with requires_grad": lambda m: m.ones(2, dtype=m.float64, requires_grad=True),
    "an empty vector": lambda m: m.tensor([]),
    "an empty matrix": lambda m: m.zeros(0, 3),
    "an empty int matrix": lambda m: m.zeros(2, 0, dtype=m.long),
    "a Parameter": lambda m: m.nn.Parameter(m.tensor([1.0, 2.0])),
}


@pytest.mark.parametrize("name", list(REPRS))
def test_tensors_print_as_in_pytorch(name):
    # (PyTorch writes dtypes as torch.float64; tensorgrad's are numpy's, written float64)
    assert repr(REPRS[name](tg)) == repr(REPRS[name](torch)).replace("torch.", "")


def test_random_tensors_print_as_in_pytorch():
    rs = np.random.RandomState(0)
    for shape in [(), (1,), (5,), (3, 4), (2, 3, 4), (7, 13), (3, 500), (1001,), (12, 12, 12)]:
        for scale in [1.0, 1e-6, 1e9, 1e3]:
            values = np.asarray(rs.randn(*shape) * scale, dtype=np.float32)
            assert repr(tg.from_numpy(values.copy())) == repr(torch.from_numpy(values.copy())), (shape, scale)
            whole = np.asarray(np.round(values))
            assert repr(tg.from_numpy(whole.copy())) == repr(torch.from_numpy(whole.copy())), (shape, scale)


def test_print_options_as_in_pytorch():
    try:
        for options in [{"precision": 2}, {"threshold": 5, "edgeitems": 1}, {"sci_mode": True},
                        {"linewidth": 30}, {"profile": "short"}]:
            tg.set_printoptions(**options)
            torch.set_printoptions(**options)
            for make in (lambda m: m.arange(10.0) / 3, lambda m: m.arange(12.0).view(3, 4) * 1.5):
                assert repr(make(tg)) == repr(make(torch)), options
            tg.set_printoptions(profile="default")
            torch.set_printoptions(profile="default")
    finally:
        tg.set_printoptions(profile="default", sci_mode=None)
        torch.set_printoptions(profile="default", sci_mode=None)


@pytest.mark.parametrize("make", [
    lambda m, x: x * 2, lambda m, x: (x * 2).sum(), lambda m, x: x.T, lambda m, x: x[0],
    lambda m, x: m.nn.functional.mse_loss(x, x.detach() * 0), lambda m, x: 1 / x,
])
def test_a_graph_node_prints_its_grad_fn_as_pytorchs(make):
    ours = make(tg, tg.ones(2, 2, requires_grad=True))
    theirs = make(torch, torch.ones(2, 2, requires_grad=True))
    assert repr(ours) == repr(theirs)
    assert ours.op in ("*", "sum", "T", "index", "select", "slice", "mse_loss")  # tensorgrad's own name


# --- the random generator's state -----------------------------------------------------------------

def test_rng_state_round_trips_as_in_pytorch():
    tg.manual_seed(1)
    state = tg.get_rng_state()
    assert state.dtype == tg.uint8 and state.ndim == 1
    first = tg.rand(3)
    tg.set_rng_state(state)
    assert tg.equal(first, tg.rand(3))
    assert isinstance(tg.seed(), int)


def test_inference_mode_records_no_graph():
    x = tg.ones(2, requires_grad=True)
    with tg.inference_mode():
        assert not (x * 2).requires_grad and tg.is_inference_mode_enabled()
    with tg.inference_mode(False):
        assert (x * 2).requires_grad

    @tg.inference_mode()
    def called(t):
        return t * 2

    @tg.inference_mode
    def bare(t):
        return t * 2

    assert not called(x).requires_grad and not bare(x).requires_grad and (x * 2).requires_grad


# --- DataLoader batches as PyTorch's --------------------------------------------------------------

def _batches(m, make_dataset, **options):
    loader = (DataLoader if m is tg else torch.utils.data.DataLoader)(make_dataset(m), **options)
    return list(loader)


class _Pairs:
    """A map-style data set of (tensor, int) samples, in either library."""

    def __init__(self, m):
        self.x = m.arange(10.0)

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return self.x[i], int(i) % 2


LOADERS = {
    "a TensorDataset batches into a list": (
        lambda m: (TensorDataset if m is tg else torch.utils.data.TensorDataset)(m.arange(6.0).view(3, 2),
                                                                              m.arange(3)),
        {"batch_size": 2}),
    "a Dataset of (tensor, int) pairs": (_Pairs, {"batch_size": 4}),
    "a list of numpy arrays is a list of samples": (
        lambda m: [np.ones(2, dtype=np.float32), np.zeros(2, dtype=np.float32)], {"batch_size": 2}),
    "a list of (tensor, label) samples": (lambda m: [(m.ones(2), 1), (m.zeros(2), 0)], {"batch_size": 2}),
    "a list of dicts": (lambda m: [{"x": m.ones(2), "y": 1}, {"x": m.zeros(2), "y": 0}], {"batch_size": 2}),
    "a list of floats": (lambda m: [1.0, 2.0, 3.0], {"batch_size": 2}),
    "batch_size=None over a list of tensors": (lambda m: [m.tensor(1), m.tensor(2)], {"batch_size": None}),
    "num_workers and pin_memory are accepted": (
        lambda m: [m.tensor(1), m.tensor(2), m.tensor(3)],
        {"batch_size": 2, "num_workers": 0, "pin_memory": False}),
    "a sampler picks the order": (
        lambda m: [m.tensor(i) for i in range(5)], {"batch_size": 2, "sampler": [4, 0, 2]}),
}


@pytest.mark.parametrize("name", list(LOADERS))
def test_dataloader_batches_as_pytorch(name):
    make, options = LOADERS[name]
    assert_same(_batches(tg, make, **options), _batches(torch, make, **options), name)


def test_dataloader_with_a_sampler_has_its_length_and_workers_change_nothing():
    assert len(DataLoader(list(range(10)), batch_size=4, sampler=[1, 2, 3])) == 1
    batches = DataLoader(tg.arange(5), batch_size=2, num_workers=2)
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4]]


def test_a_tutorial_training_loop_runs_as_in_pytorch():
    """The CIFAR tutorial's loop: DataLoader, `running_loss += loss.item()`, `torch.max(outputs.data, 1)`."""
    rs = np.random.RandomState(0)
    x, y = rs.randn(20, 4).astype(np.float32), rs.randint(0, 3, 20)
    weights = [rs.randn(8, 4).astype(np.float32) * 0.3, np.zeros(8, np.float32),
               rs.randn(3, 8).astype(np.float32) * 0.3, np.zeros(3, np.float32)]

    def run(m, loader_class, dataset_class):
        model = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 3))
        with m.no_grad():
            for p, w in zip(model.parameters(), weights, strict=True):
                p.copy_(m.tensor(w))
        loader = loader_class(dataset_class(m.tensor(x), m.tensor(y)), batch_size=5)
        criterion = m.nn.CrossEntropyLoss()
        optimizer = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(2):
            running = 0.0
            for inputs, labels in loader:
                optimizer.zero_grad()
                loss = criterion(model(inputs), labels)
                loss.backward()
                optimizer.step()
                running += loss.item() * inputs.size(0)
            losses.append(running / len(loader.dataset))
        correct = total = 0
        with m.no_grad():
            for inputs, labels in loader:
                outputs = model(inputs)
                _, predicted = m.max(outputs.data, 1)
                total += labels.size(0)
                correct += (predicted == labels).sum().item()
        return losses, correct, total

    ours = run(tg, DataLoader, TensorDataset)
    theirs = run(torch, torch.utils.data.DataLoader, torch.utils.data.TensorDataset)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-5) and ours[1:] == theirs[1:]


# --- save and load: a training checkpoint, as in PyTorch's tutorial --------------------------------

def _model_and_optimizer(m, seed=0):
    rs = np.random.RandomState(seed)
    model = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.ReLU(), m.nn.Linear(4, 2))
    with m.no_grad():
        for p in model.parameters():
            p.copy_(m.tensor(rs.randn(*p.shape).astype(np.float32)))
    return model, m.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)


def _train(m, model, optimizer, steps, seed=1):
    rs = np.random.RandomState(seed)
    for _ in range(steps):
        x = m.tensor(rs.randn(6, 3).astype(np.float32))
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()


@pytest.mark.parametrize("target", ["path", "file object"])
def test_a_checkpoint_saves_and_resumes_bit_exactly(tmp_path, target):
    model, optimizer = _model_and_optimizer(tg)
    _train(tg, model, optimizer, 2)
    checkpoint = {"epoch": 3, "model_state_dict": model.state_dict(),
                  "optimizer_state_dict": optimizer.state_dict(), "loss": 0.25, "note": "adam", "best": None}
    where = tmp_path / "checkpoint.pt" if target == "path" else io.BytesIO()
    tg.save(checkpoint, where)
    if target != "path":
        where.seek(0)
    loaded = tg.load(where, weights_only=True)
    assert sorted(loaded) == sorted(checkpoint)
    assert (loaded["epoch"], loaded["loss"], loaded["note"], loaded["best"]) == (3, 0.25, "adam", None)
    assert type(loaded["epoch"]) is int and type(loaded["model_state_dict"]) is OrderedDict
    assert list(loaded["optimizer_state_dict"]["state"]) == [0, 1, 2, 3, 4, 5]  # int keys stay ints
    assert loaded["optimizer_state_dict"]["param_groups"][0]["betas"] == (0.9, 0.999)

    resumed, resumed_optimizer = _model_and_optimizer(tg, seed=5)
    resumed.load_state_dict(loaded["model_state_dict"])
    resumed_optimizer.load_state_dict(loaded["optimizer_state_dict"])
    _train(tg, model, optimizer, 3, seed=2)
    _train(tg, resumed, resumed_optimizer, 3, seed=2)
    for (name, ours), theirs in zip(resumed.state_dict().items(), model.state_dict().values(), strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=name)


def test_what_a_checkpoint_holds_comes_back_as_pytorchs_does(tmp_path):
    parameter = nn.Parameter(tg.tensor([1.0, 2.0]))
    saved = {1: tg.arange(3), (2, "b"): [tg.ones(2, requires_grad=True), parameter],
             "t": (1.5, True, "s", None, 2**70, float("inf")), "a": np.arange(3, dtype=np.int16),
             "scalar": np.float32(0.5), "z": 1 + 2j, "empty": {}, "nested": {"deep": [{"x": tg.zeros(1, 1)}]}}
    tg.save(saved, tmp_path / "c.pt")
    loaded = tg.load(tmp_path / "c.pt")
    assert list(loaded) == list(saved)
    assert loaded[1].tolist() == [0, 1, 2] and loaded[1].dtype == tg.int64
    grad_tensor, param = loaded[(2, "b")]
    assert grad_tensor.requires_grad and isinstance(param, nn.Parameter) and param.requires_grad
    assert loaded["t"][:5] == (1.5, True, "s", None, 2**70) and math.isinf(loaded["t"][5])
    assert isinstance(loaded["a"], np.ndarray) and loaded["a"].dtype == np.int16
    assert isinstance(loaded["scalar"], np.float32) and loaded["scalar"] == 0.5
    assert loaded["z"] == 1 + 2j and loaded["empty"] == {}
    assert loaded["nested"]["deep"][0]["x"].shape == (1, 1)


def test_a_tensor_and_a_list_of_tensors_round_trip(tmp_path):
    tg.save(tg.arange(3.0), tmp_path / "t.pt")
    assert_same(tg.load(tmp_path / "t.pt"), torch.arange(3.0))
    tg.save([tg.arange(3.0), tg.ones(2, dtype=tg.int32)], tmp_path / "l.pt")
    assert_same(tg.load(tmp_path / "l.pt"), [torch.arange(3.0), torch.ones(2, dtype=torch.int32)])


def test_a_checkpoint_archive_is_still_plain_numpy(tmp_path):
    tg.save({"model": {"w": tg.ones(2)}, "epoch": 1}, tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz", allow_pickle=False) as archive:
        assert sorted(archive.files) == ["__tensorgrad_structure__", "model.w"]


def test_a_flat_state_dict_keeps_its_plain_layout(tmp_path):
    tg.save({"w": tg.ones(2), "step": 3}, tmp_path / "s.npz")
    with np.load(tmp_path / "s.npz") as archive:
        assert sorted(archive.files) == ["step", "w"]
    assert list(tg.load(tmp_path / "s.npz", map_location="cpu", weights_only=False)) == ["w", "step"]


def test_a_checkpoint_needs_npz_not_safetensors(tmp_path):
    with pytest.raises(TypeError, match="'opt' is a dict"):
        tg.save({"opt": {"lr": 0.1}}, tmp_path / "c.safetensors")


def test_a_damaged_structure_is_refused(tmp_path):
    tg.save({"a": [tg.ones(1)]}, tmp_path / "c.npz")
    state = dict(np.load(tmp_path / "c.npz"))
    state["__tensorgrad_structure__"] = np.frombuffer(b'{"list": [{"tensor": "gone"}]}', np.uint8)
    np.savez(tmp_path / "bad.npz", **state)
    with pytest.raises(ValueError, match="damaged structure.*'gone'"):
        tg.load(tmp_path / "bad.npz")


def test_the_checkpoint_of_pytorchs_tutorial_written_for_both():
    """PyTorch's "saving and loading a general checkpoint" recipe, the same code for both."""
    def recipe(m):
        model, optimizer = _model_and_optimizer(m)
        _train(m, model, optimizer, 1)
        buffer = io.BytesIO()
        m.save({"epoch": 5, "model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict(), "loss": 0.5}, buffer)
        buffer.seek(0)
        checkpoint = m.load(buffer, weights_only=True)
        model.load_state_dict(checkpoint["model_state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
        model.eval()
        return (checkpoint["epoch"], checkpoint["loss"], sorted(checkpoint),
                list(checkpoint["model_state_dict"]))

    assert recipe(tg) == recipe(torch)


def test_dataset_subclass_of_tensorgrad_batches():
    class Squares(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return tg.tensor(float(i)), i * i

    xb, yb = next(iter(DataLoader(Squares(), batch_size=3)))
    assert xb.tolist() == [0.0, 1.0, 2.0] and yb.tolist() == [0, 1, 4] and yb.dtype == tg.int64


def test_optim_module_is_importable_as_a_name():
    assert optim.SGD is tg.optim.SGD


# --- the new array-making code keeps a GPU's arrays (the CPU stand-in for CuPy's) ---------------------

def test_new_functions_keep_gpu_arrays():
    from foreign_array import foreign, is_foreign

    x = tg.tensor(foreign(np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], np.float32)))
    ints = tg.tensor(foreign(np.array([2, 5], np.int64)))
    results = {
        "searchsorted": tg.searchsorted(x, x * 0 + 3),
        "searchsorted 1-d": tg.searchsorted(x[0], ints),
        "bucketize": tg.bucketize(ints, x[0]),
        "dist": tg.dist(x, x * 2),
        "combinations": tg.combinations(x[0]),
        "cartesian_prod": tg.cartesian_prod(x[0], x[1]),
        "cat promoted": tg.cat([x, ints.reshape(1, 2).float().expand(2, 2)], 1),
        "hstack": tg.hstack([x, x]),
        "pad_sequence": nn.utils.rnn.pad_sequence([x, x[:1]]),
        "as_tensor": tg.as_tensor(x.data),
        "sum(dtype=)": x.sum(1, dtype=tg.float64),
        "max of .data": tg.max(x.data, 1)[1],
        "bernoulli_": x.clone().bernoulli_(0.5),
        "randint_like": tg.randint_like(x, 3),
        "normal of tensors": tg.normal(x, x * 0 + 1),
    }
    for name, out in results.items():
        assert is_foreign(out.data), name
    assert repr(x).startswith("tensor([[1., 3., 5.],")
    assert f"{x.sum():.1f}" == "21.0"


# --- indexing with a range, and a 0-d leaf's gradient summed over several uses ---------------------

def test_a_range_indexes_as_a_list_of_positions():
    torch = pytest.importorskip("torch")
    values = np.arange(12.0).reshape(3, 4)
    for key in (range(2), range(0, 3, 2), (range(2), slice(None)), (slice(None), range(3, 0, -1))):
        ours, theirs = tg.tensor(values)[key], torch.tensor(values)[key]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    t = tg.zeros(4)
    t[range(1, 3)] = 5.0
    assert t.tolist() == [0.0, 5.0, 5.0, 0.0]


def test_a_0d_leaf_keeps_an_array_gradient_when_several_uses_add_up():
    x = tg.tensor(2.0, requires_grad=True)
    (x ** 2 + 3 * x).backward()  # two uses: the second gradient is added to the first
    assert type(x.grad) is np.ndarray and x.grad.shape == () and x.grad == 7.0
    x.register_hook(lambda g: g)  # the hooked path adds the pass's gradient to the old one
    (x * 1).backward()
    assert type(x.grad) is np.ndarray and x.grad == 8.0
