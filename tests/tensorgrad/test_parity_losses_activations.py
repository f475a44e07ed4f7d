"""Losses, activations and norms side by side with PyTorch: values, dtypes, gradients and errors
at the cases where they once differed (nan inputs, mixed dtypes, refused weights, odd shapes)."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.standard_normal((3, 4))
P = R.random((3, 4))
# PyTorch's gradient at nan depends on whether its vectorized loop or the scalar tail meets it;
# only the values are compared there (`grads` empty), and threshold's gradient, the same in both.
NANS = np.array([-100.0, -3.0, -0.5, 0.0, 0.5, 3.0, 6.0, np.nan])

# (name, call(m, F, *tensors), arrays, indices of arrays that require grad)
CASES = [
    ("elu nan", lambda m, F, x: F.elu(x), [NANS], ()),
    ("selu nan", lambda m, F, x: F.selu(x), [NANS], ()),
    ("celu nan", lambda m, F, x: F.celu(x, 2.0), [NANS], ()),
    ("hardtanh nan", lambda m, F, x: F.hardtanh(x, -2.0, 0.5), [NANS], ()),
    ("relu6 nan", lambda m, F, x: F.relu6(x), [NANS], ()),
    ("hardshrink nan", lambda m, F, x: F.hardshrink(x, 1.0), [NANS], ()),
    ("softshrink nan", lambda m, F, x: F.softshrink(x), [NANS], ()),
    ("threshold nan", lambda m, F, x: F.threshold(x, 0.5, -2.0), [NANS], (0,)),
    ("threshold int", lambda m, F, x: F.threshold(x, 0.5, -2.5), [np.array([-2, 0, 1, 3])], ()),
    ("tanhshrink int", lambda m, F, x: F.tanhshrink(x), [np.array([-2, 0, 1, 3])], ()),
    ("hardtanh bool", lambda m, F, x: F.hardtanh(x), [np.array([True, False])], ()),
    ("softsign bool", lambda m, F, x: F.softsign(x), [np.array([True, False])], ()),
    ("prelu 0-d input", lambda m, F, x, w: F.prelu(x, w), [np.array(-1.5), np.array([0.3])], (0, 1)),
    ("prelu mixed dtypes", lambda m, F, x, w: F.prelu(x, w), [X.astype(np.float32), np.ones(4)], ()),
    ("cross_entropy 0-d input", lambda m, F, x, y: F.cross_entropy(x, y), [np.array(1.0), np.array(0)], ()),
    ("cross_entropy weight requires grad", lambda m, F, x, y, w: F.cross_entropy(x, y, w),
     [X, np.array([0, 3, 1]), np.ones(4)], (0, 2)),
    ("nll_loss weight of another dtype", lambda m, F, x, y, w: F.nll_loss(x, y, w),
     [X.astype(np.float32), np.array([0, 3, 1]), np.ones(4)], ()),
    ("multi_margin weight of another dtype", lambda m, F, x, y, w: F.multi_margin_loss(x, y, weight=w),
     [X.astype(np.float32), np.array([0, 3, 1]), np.ones(4)], ()),
    ("bce nan input", lambda m, F, x, y: F.binary_cross_entropy(x, y),
     [np.array([np.nan, 0.5]), np.ones(2)], ()),
    ("bce float64 target", lambda m, F, x, y: F.binary_cross_entropy(x, y), [P.astype(np.float32), P], ()),
    ("bce weight that doesn't broadcast", lambda m, F, x, y, w: F.binary_cross_entropy(x, y, w),
     [P, P, np.ones(3)], ()),
    ("bce weighted", lambda m, F, x, y, w: F.binary_cross_entropy(x, y, w, reduction="sum"),
     [P, P[::-1].copy(), np.arange(4.0)], (0, 1)),
    ("bce_with_logits int target", lambda m, F, x, y: F.binary_cross_entropy_with_logits(x, y),
     [X, np.ones((3, 4), np.int64)], ()),
    ("bce_with_logits target dtype wins", lambda m, F, x, y: F.binary_cross_entropy_with_logits(x, y),
     [X, P.astype(np.float32)], ()),
    ("bce_with_logits pos_weight bad",
     lambda m, F, x, y, p: F.binary_cross_entropy_with_logits(x, y, pos_weight=p),
     [X, P, np.ones(3)], ()),
    ("bce_with_logits pos_weight", lambda m, F, x, y, p, w: F.binary_cross_entropy_with_logits(
        x, y, w, pos_weight=p), [X * 30, P, np.arange(1.0, 5.0), np.ones((3, 1)) * 2], (0, 1)),
    ("huber keeps input dtype", lambda m, F, x, y: F.huber_loss(x, y, delta=0.5),
     [X.astype(np.float32), P], ()),
    ("mse bool target", lambda m, F, x, y: F.mse_loss(x, y), [X, P > 0.5], (0,)),
    ("soft_margin keeps input dtype", lambda m, F, x, y: F.soft_margin_loss(x, y),
     [X.astype(np.float32), P], ()),
    ("soft_margin target grows input", lambda m, F, x, y: F.soft_margin_loss(x, y), [X[:, :1], P[0]], ()),
    ("soft_margin target requires grad", lambda m, F, x, y: F.soft_margin_loss(x, y),
     [X, np.sign(P - 0.5)], (0, 1)),
    ("gaussian_nll float var", lambda m, F, x, y: F.gaussian_nll_loss(x, y, 0.5), [X, P], (0, 1)),
    ("gaussian_nll var shared along dim 1", lambda m, F, x, y, v: F.gaussian_nll_loss(x, y, v),
     [R.standard_normal((2, 3, 4)), R.standard_normal((2, 3, 4)), R.random((2, 1, 4)) + 0.1], (0, 1, 2)),
    ("cosine_embedding 1-d target, 1-d inputs", lambda m, F, a, b, y: F.cosine_embedding_loss(a, b, y),
     [X[0], P[0], np.array([1])], ()),
    ("cosine_embedding 3-d inputs", lambda m, F, a, b, y: F.cosine_embedding_loss(a, b, y),
     [X.reshape(3, 2, 2), P.reshape(3, 2, 2), np.array([1, -1, 1])], ()),
    ("triplet negative margin", lambda m, F, a, p, n: F.triplet_margin_loss(a, p, n, margin=-1.0),
     [X, P, X * 2], ()),
    ("layer_norm empty batch", lambda m, F, x: F.layer_norm(x, (4,)), [np.zeros((0, 4))], ()),
    ("layer_norm int input", lambda m, F, x: F.layer_norm(x, (4,)), [np.ones((2, 4), np.int64)], ()),
    ("batch_norm stats of another dtype", lambda m, F, x, rm, rv: F.batch_norm(x, rm, rv, training=True),
     [X.astype(np.float32), np.zeros(4), np.ones(4)], ()),
    # a spread of the family, values and gradients
    ("cross_entropy smoothing, weight, ignore", lambda m, F, x, y, w: F.cross_entropy(
        x, y, w, ignore_index=2, label_smoothing=0.2), [X, np.array([1, 2, 3]), np.arange(1.0, 5.0)], (0,)),
    ("cross_entropy probabilities", lambda m, F, x, y: F.cross_entropy(x, y, label_smoothing=0.1),
     [X, P / P.sum(1, keepdims=True)], (0, 1)),
    ("kl_div batchmean log_target", lambda m, F, x, y: F.kl_div(x, y, reduction="batchmean", log_target=True),
     [X, -P], (0, 1)),
    ("softplus large", lambda m, F, x: F.softplus(x, beta=2, threshold=5),
     [np.array([-1e4, -5.0, 2.4, 2.5, 2.6, 1e4])], (0,)),
    ("logsigmoid large", lambda m, F, x: F.logsigmoid(x), [np.array([-1e4, -30.0, 0.0, 30.0, 1e4])], (0,)),
    ("softmin implicit dim", lambda m, F, x: F.softmin(x), [X.reshape(1, 3, 4)], (0,)),
    ("gelu tanh", lambda m, F, x: F.gelu(x, approximate="tanh"), [X], (0,)),
    ("normalize p=1", lambda m, F, x: F.normalize(x, p=1.0, dim=0), [X], (0,)),
    ("sdpa bool mask, causal",
     lambda m, F, q, k, v, b: F.scaled_dot_product_attention(q, k, v, b, is_causal=True),
     [X.reshape(1, 3, 4), P.reshape(1, 3, 4), X.reshape(1, 3, 4)[..., ::-1].copy(),
      np.tril(np.ones((3, 3), bool))],
     (0, 1, 2)),
]


def _run(m, F, call, arrays, grads):
    tensors = []
    for i, a in enumerate(arrays):
        t = (torch.from_numpy if m is torch else tg.from_numpy)(np.array(a, copy=True))
        tensors.append(t.requires_grad_() if i in grads else t)
    try:
        out = call(m, F, *tensors)
    except Exception as error:  # noqa: BLE001 - the exception type is what is compared
        return error, None
    if grads:
        weights = np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape))
        (out.double() * (torch.from_numpy(weights) if m is torch else tg.tensor(weights))).sum().backward()
    got = [np.asarray(t.grad.numpy() if m is torch else t.grad) for i, t in enumerate(tensors) if i in grads]
    return out, got


@pytest.mark.filterwarnings("ignore:Implicit dimension choice")
@pytest.mark.parametrize(("name", "call", "arrays", "grads"), CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, call, arrays, grads):
    theirs, their_grads = _run(torch, torch.nn.functional, call, arrays, grads)
    ours, our_grads = _run(tg, tg.nn.functional, call, arrays, grads)
    if isinstance(theirs, Exception):
        kind = next(c for c in type(theirs).__mro__ if c.__module__ == "builtins")
        assert isinstance(ours, kind), f"{name}: torch raised {theirs!r}, we gave {ours!r}"
        return
    assert not isinstance(ours, Exception), f"{name}: we raised {ours!r}"
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(ours.data, np.float64), theirs.detach().double().numpy(),
                               rtol=1e-5, atol=1e-6)
    for mine, torchs in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(mine, torchs, rtol=1e-6, atol=1e-9)


def test_shrink_modules_print_as_torch():
    assert repr(tg.nn.Hardshrink(0.3)) == repr(torch.nn.Hardshrink(0.3)) == "Hardshrink(0.3)"
    assert repr(tg.nn.Softshrink()) == repr(torch.nn.Softshrink())
