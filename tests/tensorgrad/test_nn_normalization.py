"""`tensorgrad.nn.normalization`: the norms, normalize and cosine_similarity against PyTorch.

One table of calls drives the functional checks: finite differences in float64 for every input
that takes a gradient, and PyTorch's values and gradients for the same call. The modules are
checked by loading PyTorch's state dict into ours (and back) and stepping both in train and
eval mode: outputs, gradients and running statistics must agree at every step. The comparisons
with PyTorch run on the CPU, and on a GPU where there is one.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from conftest import placed_on

import tensorgrad as tg
from tensorgrad.device import to_numpy
from tensorgrad.nn import normalization as N

# (id, input shapes, call(F, *inputs), indices of inputs that must be positive, indices without grad)
TABLE = [
    ("layer_norm", [(4, 5), (5,), (5,)], lambda F, x, w, b: F.layer_norm(x, (5,), w, b), (), ()),
    ("layer_norm_2d_shape", [(2, 3, 4), (3, 4), (3, 4)],
     lambda F, x, w, b: F.layer_norm(x, [3, 4], w, b, eps=1e-3), (), ()),
    ("layer_norm_no_affine", [(3, 6)], lambda F, x: F.layer_norm(x, (6,)), (), ()),
    ("batch_norm_train_2d", [(6, 3), (3,), (3,)],
     lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), (), ()),
    ("batch_norm_train_3d", [(4, 3, 5), (3,), (3,)],
     lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=1e-3), (), ()),
    ("batch_norm_train_4d_no_affine", [(2, 3, 4, 4)],
     lambda F, x: F.batch_norm(x, None, None, training=True), (), ()),
    ("batch_norm_eval", [(5, 3, 2), (3,), (3,), (3,), (3,)],
     lambda F, x, w, b, mean, var: F.batch_norm(x, mean, var, w, b, training=False), (4,), (3, 4)),
    ("group_norm", [(2, 6, 5), (6,), (6,)], lambda F, x, w, b: F.group_norm(x, 3, w, b), (), ()),
    ("group_norm_4d", [(2, 4, 3, 3), (4,), (4,)],
     lambda F, x, w, b: F.group_norm(x, 2, w, b, eps=1e-3), (), ()),
    ("group_norm_one_group_no_affine", [(3, 4, 2)], lambda F, x: F.group_norm(x, 1), (), ()),
    ("group_norm_group_per_channel", [(3, 4, 5), (4,), (4,)], lambda F, x, w, b: F.group_norm(x, 4, w, b),
     (), ()),
    ("normalize", [(4, 5)], lambda F, x: F.normalize(x), (), ()),
    ("normalize_p1_dim0", [(4, 5)], lambda F, x: F.normalize(x, p=1, dim=0), (), ()),
    ("normalize_p3_last", [(2, 3, 4)], lambda F, x: F.normalize(x, p=3.0, dim=-1), (), ()),
    ("normalize_inf", [(4, 5)], lambda F, x: F.normalize(x, p=float("inf"), dim=1), (), ()),
    ("cosine_similarity", [(4, 5), (4, 5)], lambda F, a, b: F.cosine_similarity(a, b), (), ()),
    ("cosine_similarity_broadcast", [(3, 1, 4), (1, 5, 4)],
     lambda F, a, b: F.cosine_similarity(a, b, dim=-1), (), ()),
    ("cosine_similarity_dim0_1d", [(6,), (6,)], lambda F, a, b: F.cosine_similarity(a, b, dim=0, eps=1e-6),
     (), ()),
]
IDS = [row[0] for row in TABLE]


def _arrays(shapes, positive, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape) for shape in shapes]
    for i in positive:
        arrays[i] = np.abs(arrays[i]) + 0.5
    return arrays


@pytest.mark.parametrize(("name", "shapes", "call", "positive", "constant"), TABLE, ids=IDS)
def test_gradients_match_finite_differences(name, shapes, call, positive, constant):
    inputs = [tg.tensor(a, dtype=tg.float64, requires_grad=i not in constant)
              for i, a in enumerate(_arrays(shapes, positive, 0))]
    assert tg.gradcheck(lambda *t: call(N, *t), inputs)


@pytest.mark.parametrize(("name", "shapes", "call", "positive", "constant"), TABLE, ids=IDS)
def test_values_and_gradients_match_torch(name, shapes, call, positive, constant, device):
    torch = pytest.importorskip("torch")
    arrays = _arrays(shapes, positive, 1)
    ours = [tg.tensor(a, dtype=tg.float64, requires_grad=i not in constant, device=device)
            for i, a in enumerate(arrays)]
    theirs = [torch.tensor(a, requires_grad=i not in constant) for i, a in enumerate(arrays)]
    out, expected = call(N, *ours), call(torch.nn.functional, *theirs)
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = np.random.default_rng(2).standard_normal(out.shape)
    out.backward(tg.tensor(weights, device=device))
    expected.backward(torch.tensor(weights))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if i not in constant:
            np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-11,
                                       err_msg=f"input {i}")


def test_batch_norm_training_updates_the_running_statistics_in_place():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((5, 3, 4)) * 2 + 1
    mean, var = tg.zeros(3, dtype=tg.float64), tg.ones(3, dtype=tg.float64)
    mean_t, var_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    arrays = mean.data, var.data
    N.batch_norm(tg.tensor(x), mean, var, training=True, momentum=0.3)
    torch.nn.functional.batch_norm(torch.tensor(x), mean_t, var_t, training=True, momentum=0.3)
    assert mean.data is arrays[0] and var.data is arrays[1]  # the same memory, written in place
    np.testing.assert_allclose(mean.data, mean_t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(var.data, var_t.numpy(), rtol=1e-12)  # unbiased batch variance
    np.testing.assert_allclose(var.data, 0.7 + 0.3 * x.var(axis=(0, 2), ddof=1))


def test_float32_stays_float32():
    x = tg.randn(4, 6, requires_grad=True)
    for out in (N.layer_norm(x, (6,), tg.ones(6), tg.zeros(6)), N.batch_norm(x, None, None, training=True),
                N.group_norm(x, 2), N.normalize(x), N.cosine_similarity(x, tg.randn(4, 6))):
        assert out.dtype == tg.float32
        x.grad = None
        out.sum().backward()
        assert x.grad.dtype == np.float32


def test_normalize_at_a_zero_vector_is_zero_with_pytorchs_gradient():
    torch = pytest.importorskip("torch")
    values = np.array([[0.0, 0.0], [1e-13, 0.0], [3.0, 4.0]])
    weights = np.array([[1.0, 2.0]] * 3)
    x, xt = tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, expected = N.normalize(x), torch.nn.functional.normalize(xt)
    (out * tg.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(out.data, expected.detach().numpy())
    np.testing.assert_allclose(x.grad, xt.grad.numpy(), rtol=1e-12)


def test_cosine_similarity_of_tiny_vectors_matches_pytorch():
    torch = pytest.importorskip("torch")
    a = np.array([[1e-10, 0.0], [3.0, 4.0], [0.0, 0.0]])
    b = np.array([[1.0, 1.0], [1e-9, 0.0], [1.0, 2.0]])
    ours = [tg.tensor(v, requires_grad=True) for v in (a, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
    out, expected = N.cosine_similarity(*ours), torch.nn.functional.cosine_similarity(*theirs)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12)
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad, reference.grad.numpy(), rtol=1e-9)


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: N.layer_norm(tg.randn(2, 3), (4,)), RuntimeError, r"normalized_shape=\[4\].*\[2, 3\]"),
    (lambda: N.layer_norm(tg.randn(2, 3), (3,), tg.ones(4)), RuntimeError, r"weight.*\(3,\).*\(4,\)"),
    (lambda: N.layer_norm(tg.randn(2, 3), 3), TypeError, "tuple of ints"),
    (lambda: N.batch_norm(tg.randn(1, 3), None, None, training=True), ValueError,
     r"more than 1 value.*\(1, 3\)"),
    (lambda: N.batch_norm(tg.randn(4, 3), None, None), RuntimeError, "running_mean"),
    (lambda: N.batch_norm(tg.randn(4, 3), tg.zeros(2), tg.ones(3)), RuntimeError, r"running_mean.*\(3,\)"),
    (lambda: N.batch_norm(tg.randn(4, 3), tg.zeros(3), tg.ones(3, requires_grad=True)), RuntimeError,
     "not differentiable with respect to running_var"),
    (lambda: N.group_norm(tg.randn(2, 6), 4), RuntimeError, r"divisible.*\(2, 6\).*num_groups=4"),
    (lambda: N.GroupNorm(4, 6), ValueError, "divisible"),
    (lambda: N.normalize(tg.randn(2, 3), dim=2), IndexError, "dimension 2"),
    (lambda: N.cosine_similarity(tg.randn(3, 4), tg.randn(2, 4)), RuntimeError, r"\(3, 4\).*\(2, 4\)"),
    (lambda: N.BatchNorm1d(3)(tg.randn(2, 3, 4, 4)), ValueError, "2D or 3D input"),
    (lambda: N.BatchNorm2d(3)(tg.randn(2, 3, 4)), ValueError, "4D input"),
    (lambda: N.layer_norm(tg.tensor([[1, 2]]), (2,)), RuntimeError, "floating point"),
], ids=["layer_norm shape", "layer_norm weight", "layer_norm int shape", "batch of one",
        "eval without stats", "stats shape", "stats with grad", "groups", "GroupNorm groups", "normalize dim",
        "cosine shapes", "BatchNorm1d dims", "BatchNorm2d dims", "integer input"])
def test_bad_arguments_raise_pytorchs_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


# --- modules --------------------------------------------------------------------------------------


def _pair(torch, name, *args, device="cpu", **kwargs):
    """Our module (on `device`) and PyTorch's, built with the same arguments, ours loaded from
    PyTorch's state. A keyword this PyTorch's module lacks (2.11's BatchNorm and GroupNorm
    take no `bias=`) skips the test: there is nothing to compare with."""
    known = inspect.signature(getattr(torch.nn, name)).parameters
    if any(key not in known for key in kwargs):
        pytest.skip(f"torch {torch.__version__}'s {name} takes none of {sorted(set(kwargs) - set(known))}")
    theirs = getattr(torch.nn, name)(*args, **kwargs, dtype=torch.float64)
    with torch.no_grad():  # non-default parameters, so that a missed weight or bias shows
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, dtype=torch.float64))
    ours = getattr(N, name)(*args, **kwargs, dtype=tg.float64, device=device)
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _step_both(torch, ours, theirs, x, device="cpu"):
    """One forward and backward through both; compare output, input and parameter gradients, state."""
    a, b = tg.tensor(x, requires_grad=True, device=device), torch.tensor(x, requires_grad=True)
    out, expected = ours(a), theirs(b)
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = np.cos(np.arange(out.data.size)).reshape(out.shape)
    out.backward(tg.tensor(weights, device=device))
    expected.backward(torch.tensor(weights))
    np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-11)
    for (name, p), (name_t, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == name_t
        np.testing.assert_allclose(to_numpy(p.grad), pt.grad.numpy(), rtol=1e-9, atol=1e-11, err_msg=name)
    state, state_t = ours.state_dict(), theirs.state_dict()
    assert list(state) == list(state_t)
    for key in state:
        assert state[key].device == placed_on(device), key
        np.testing.assert_allclose(to_numpy(state[key].data), state_t[key].numpy(), rtol=1e-12, err_msg=key)


@pytest.mark.parametrize(("name", "shape", "options"), [
    ("BatchNorm1d", (6, 3), {}),
    ("BatchNorm1d", (4, 3, 5), {"momentum": None}),
    ("BatchNorm1d", (6, 3), {"affine": False, "momentum": 0.5}),
    ("BatchNorm1d", (6, 3), {"track_running_stats": False}),
    ("BatchNorm2d", (2, 3, 4, 4), {"eps": 1e-3}),
    ("BatchNorm2d", (2, 3, 2, 2), {"affine": False, "track_running_stats": False}),
    ("BatchNorm2d", (2, 3, 2, 2), {"bias": False}),
], ids=["1d", "1d cumulative", "1d no affine", "1d no running stats", "2d", "2d bare", "2d no bias"])
def test_batchnorm_trains_and_evaluates_as_pytorchs(name, shape, options, device):
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(torch, name, 3, device=device, **options)
    rng = np.random.default_rng(4)
    for _ in range(3):
        _step_both(torch, ours, theirs, rng.standard_normal(shape) * 3 + 2, device)
    ours.eval(), theirs.eval()
    _step_both(torch, ours, theirs, rng.standard_normal(shape), device)


@pytest.mark.parametrize(("name", "args", "options", "shape"), [
    ("LayerNorm", (5,), {}, (3, 5)),
    ("LayerNorm", ((3, 4),), {"eps": 1e-3, "bias": False}, (2, 3, 4)),
    ("LayerNorm", (4,), {"elementwise_affine": False}, (2, 4)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)),
    ("GroupNorm", (3, 6), {"affine": False}, (2, 6, 2, 2)),
    ("GroupNorm", (3, 6), {"bias": False}, (2, 6, 3)),
], ids=["LayerNorm", "LayerNorm 2d no bias", "LayerNorm bare", "GroupNorm", "GroupNorm bare",
        "GroupNorm no bias"])
def test_layer_and_group_norm_modules_match_pytorchs(name, args, options, shape, device):
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(torch, name, *args, device=device, **options)
    _step_both(torch, ours, theirs, np.random.default_rng(5).standard_normal(shape), device)


@pytest.mark.parametrize(("name", "args"), [("BatchNorm1d", (3,)), ("BatchNorm2d", (4,)),
                                            ("LayerNorm", ((2, 3),)), ("GroupNorm", (2, 4))])
def test_state_dict_loads_into_pytorch_and_back(name, args):
    torch = pytest.importorskip("torch")
    ours = getattr(N, name)(*args)
    theirs = getattr(torch.nn, name)(*args)
    for p in ours.parameters():
        p.data[...] = np.random.default_rng(6).standard_normal(p.shape)
    for buffer in ours.buffers():
        buffer.data[...] = 7
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.data)) for k, v in ours.state_dict().items()})
    assert list(theirs.state_dict()) == list(ours.state_dict())
    back = getattr(N, name)(*args)
    back.load_state_dict(theirs.state_dict())
    for key, value in ours.state_dict().items():
        np.testing.assert_array_equal(back.state_dict()[key].data, value.data)
        assert back.state_dict()[key].dtype == value.dtype


def test_module_defaults_and_reprs_match_pytorchs():
    torch = pytest.importorskip("torch")
    pairs = [(N.BatchNorm1d(3), torch.nn.BatchNorm1d(3)),
             (N.BatchNorm2d(2, momentum=None, affine=False),
              torch.nn.BatchNorm2d(2, momentum=None, affine=False)),
             (N.BatchNorm1d(2, bias=False), torch.nn.BatchNorm1d(2, bias=False)),
             (N.LayerNorm(3, bias=False), torch.nn.LayerNorm(3, bias=False)),
             (N.LayerNorm([2, 3]), torch.nn.LayerNorm([2, 3])), (N.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4))]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        for key, value in theirs.state_dict().items():
            np.testing.assert_array_equal(ours.state_dict()[key].data, value.numpy())
            assert ours.state_dict()[key].dtype == value.numpy().dtype


def test_batchnorm_eval_uses_running_statistics_and_train_resumes_counting():
    bn = N.BatchNorm1d(2, dtype=tg.float64)
    bn.running_mean.data[...] = [1.0, -1.0]
    bn.running_var.data[...] = [4.0, 0.25]
    bn.eval()
    out = bn(tg.tensor([[3.0, 0.0]], dtype=tg.float64))  # one sample is fine in eval mode
    np.testing.assert_allclose(out.data, [[2 / np.sqrt(4 + 1e-5), 1 / np.sqrt(0.25 + 1e-5)]])
    assert bn.num_batches_tracked.item() == 0
    bn.train()
    bn(tg.randn(4, 2, dtype=tg.float64))
    assert bn.num_batches_tracked.item() == 1 and bn.num_batches_tracked.dtype == tg.int64


def test_normalize_writes_into_out_without_a_graph():
    x, out = tg.randn(3, 4), tg.zeros(3, 4)
    assert N.normalize(x, dim=0, out=out) is out
    np.testing.assert_allclose(out.data, N.normalize(x, dim=0).data)
    with pytest.raises(RuntimeError, match="out=.*requires grad"):
        N.normalize(tg.randn(3, 4, requires_grad=True), out=out)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_normalize_out_follows_pytorch_div_out(dtype):
    """PyTorch's normalize ends in div(out=): a wider out is cast into, another shape is resized with
    div's warning, an integer out is refused."""
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(3).standard_normal((2, 3)).astype(dtype)
    wide = "complex128" if dtype == "complex64" else "float64"
    for lib in (torch, tg):
        x, normalize = lib.tensor(values), N.normalize if lib is tg else torch.nn.functional.normalize
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            resized = normalize(x, out=lib.empty(5, dtype=getattr(lib, wide)))
        assert tuple(resized.shape) == (2, 3) and str(resized.dtype).endswith(wide)
        np.testing.assert_allclose(np.asarray(resized.numpy()),
                                   values / np.linalg.norm(values, axis=1, keepdims=True), rtol=1e-6)
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            normalize(x, out=lib.empty(2, 3, dtype=lib.int64))


@pytest.mark.parametrize("make", [lambda: N.BatchNorm1d(3), lambda: N.LayerNorm(3), lambda: N.GroupNorm(1, 3),
                                  lambda: N.BatchNorm2d(3, affine=False)], ids=["bn1d", "ln", "gn", "bn2d"])
def test_reset_parameters_restores_weight_one_and_bias_zero(make):
    layer = make()
    for p in layer.parameters():
        p.data[...] = 5
    for b in layer.buffers():
        b.data[...] = 5
    layer.reset_parameters()
    if layer.weight is not None:
        np.testing.assert_array_equal(layer.weight.data, 1)
        np.testing.assert_array_equal(layer.bias.data, 0)
    if "running_mean" in dict(layer.named_buffers()):
        np.testing.assert_array_equal(layer.running_mean.data, 0)
        np.testing.assert_array_equal(layer.running_var.data, 1)
        assert layer.num_batches_tracked.item() == 0
