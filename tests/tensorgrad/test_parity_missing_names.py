"""Names torch 2.13 has that tensorgrad lacked: each checked against torch (values, dtype, grads)."""

import warnings

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as tF  # noqa: N812

torch = pytest.importorskip("torch")


def _pair(*shapes, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return ([tg.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _close(ours, theirs, atol=1e-6):
    if isinstance(theirs, tuple | list):
        assert type(ours) in (tuple, list) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            _close(o, t, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(np.asarray(ours.detach().numpy(), np.float64),
                               theirs.detach().double().numpy(), atol=atol, rtol=1e-6)


def _check(fn_tg, fn_torch, shapes, grad=True):
    """Run both, compare outputs, then the grads of a weighted sum of every float output."""
    ours_in, theirs_in = _pair(*shapes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = fn_tg(*ours_in), fn_torch(*theirs_in)
    _close(ours, theirs)
    if not grad:
        return
    outs_o = list(ours) if isinstance(ours, tuple | list) else [ours]
    outs_t = list(theirs) if isinstance(theirs, tuple | list) else [theirs]
    total_o, total_t = 0, 0
    for k, (o, t) in enumerate(zip(outs_o, outs_t, strict=True)):
        if t.dtype.is_floating_point and t.requires_grad and t.numel():
            w = np.linspace(-1, 2, t.numel()).reshape(tuple(t.shape)) * (k + 1)
            total_o = total_o + (o * tg.tensor(w)).sum()
            total_t = total_t + (t * torch.tensor(w)).sum()
    if not (isinstance(total_t, torch.Tensor) and total_t.requires_grad):
        assert not (isinstance(total_o, tg.Tensor) and total_o.requires_grad)
        return
    total_o.backward()
    total_t.backward()
    for a, b in zip(ours_in, theirs_in, strict=True):
        if b.grad is None:
            assert a.grad is None or not np.any(a.grad)
        else:
            np.testing.assert_allclose(a.grad, b.grad.numpy(), atol=1e-6)


CASES = {
    "constant_pad_nd": (lambda m, x: m.constant_pad_nd(x, [1, 2, -1, 1], 0.5), [(3, 4)]),
    "max_pool1d_with_indices": (lambda m, x: m.max_pool1d_with_indices(x, 2), [(2, 3, 7)]),
    "max_pool3d": (lambda m, x: m.max_pool3d(x, 2), [(1, 2, 4, 4, 5)]),
    "conv3d": (lambda m, x, w: m.conv3d(x, w, None, 1, 1), [(1, 2, 4, 4, 4), (3, 2, 3, 3, 3)]),
    "conv_transpose3d": (lambda m, x, w: m.conv_transpose3d(x, w, stride=2),
                         [(1, 2, 3, 3, 3), (2, 3, 2, 2, 2)]),
    "convolution": (lambda m, x, w, b: m.convolution(x, w, b, [2], [1], [1], False, [0], 1),
                    [(2, 3, 9), (4, 3, 3), (4,)]),
    "convolution_t": (lambda m, x, w, b: m.convolution(x, w, b, [2, 1], [1, 0], [1, 1], True, [1, 0], 1),
                      [(1, 3, 4, 5), (3, 2, 3, 3), (2,)]),
    "rnn_tanh_cell": (lambda m, x, h, a, b, c, d: m.rnn_tanh_cell(x, h, a, b, c, d),
                      [(2, 3), (2, 4), (4, 3), (4, 4), (4,), (4,)]),
    "rnn_relu_cell": (lambda m, x, h, a, b: m.rnn_relu_cell(x, h, a, b), [(2, 3), (2, 4), (4, 3), (4, 4)]),
    "lstm_cell": (lambda m, x, h, c, a, b, d, e: m.lstm_cell(x, [h, c], a, b, d, e),
                  [(2, 3), (2, 4), (2, 4), (16, 3), (16, 4), (16,), (16,)]),
    "gru_cell": (lambda m, x, h, a, b, d, e: m.gru_cell(x, h, a, b, d, e),
                 [(2, 3), (2, 4), (12, 3), (12, 4), (12,), (12,)]),
    "native_layer_norm": (lambda m, x, w, b: m.native_layer_norm(x, [3, 4], w, b, 1e-5),
                          [(2, 3, 4), (3, 4), (3, 4)]),
    "native_batch_norm": (lambda m, x, w, b: m.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
                          [(4, 3, 5), (3,), (3,)]),
    "native_group_norm": (lambda m, x, w, b: m.native_group_norm(x, w, b, 2, 6, 5, 3, 1e-5),
                          [(2, 6, 5), (6,), (6,)]),
    "frobenius_norm": (lambda m, x: m.frobenius_norm(x, [0, 2], True), [(3, 2, 4)]),
    "nuclear_norm": (lambda m, x: m.nuclear_norm(x), [(4, 3)]),
    "nuclear_norm_dim": (lambda m, x: m.nuclear_norm(x, (0, 2), True), [(4, 2, 3)]),
    "norm_except_dim": (lambda m, x: m.norm_except_dim(x, 3, 1), [(3, 4, 2)]),
    "norm_except_dim_all": (lambda m, x: m.norm_except_dim(x, 2, -1), [(3, 4)]),
    "fill_tensor": (lambda m, x, v: m.fill(x, v.sum()), [(2, 3), (2,)]),
    "conj_physical": (lambda m, x: m.conj_physical(x), [(2, 3)]),
    "diagonal_copy": (lambda m, x: m.diagonal_copy(x, 1, 0, 2), [(3, 2, 4)]),
    "expand_copy": (lambda m, x: m.expand_copy(x, (2, 3, 4)), [(3, 1)]),
    "permute_copy": (lambda m, x: m.permute_copy(x, (2, 0, 1)), [(2, 3, 4)]),
    "select_copy": (lambda m, x: m.select_copy(x, 1, -1), [(2, 3, 4)]),
    "slice_copy": (lambda m, x: m.slice_copy(x, 1, 1, None, 2), [(2, 5)]),
    "split_copy": (lambda m, x: m.split_copy(x, 2, 1), [(2, 5)]),
    "split_with_sizes_copy": (lambda m, x: m.split_with_sizes_copy(x, [1, 4], 1), [(2, 5)]),
    "squeeze_copy": (lambda m, x: m.squeeze_copy(x, 1), [(2, 1, 3)]),
    "t_copy": (lambda m, x: m.t_copy(x), [(2, 3)]),
    "transpose_copy": (lambda m, x: m.transpose_copy(x, 0, -1), [(2, 3, 4)]),
    "unbind_copy": (lambda m, x: m.unbind_copy(x, 1), [(2, 3)]),
    "unfold_copy": (lambda m, x: m.unfold_copy(x, 1, 2, 2), [(2, 5)]),
    "unsqueeze_copy": (lambda m, x: m.unsqueeze_copy(x, -1), [(2, 3)]),
    "view_copy": (lambda m, x: m.view_copy(x, (3, 2)), [(2, 3)]),
    "alias_copy": (lambda m, x: m.alias_copy(x), [(2, 3)]),
    "detach_copy": (lambda m, x: m.detach_copy(x), [(2, 3)]),
    "as_strided_copy": (lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2), 1), [(2, 3)]),
    "ctc_loss": (lambda m, x: m.ctc_loss(x.log_softmax(2), m.tensor([[1, 2], [1, 1]]), [5, 4], [2, 2], 0, 2),
                 [(5, 2, 4)]),
    "ctc_loss_none": (lambda m, x: m.ctc_loss(x.log_softmax(2), m.tensor([[1, 2], [3, 1]]), [5, 5], [2, 1]),
                      [(5, 2, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    fn, shapes = CASES[name]
    # (torch's detach_copy says requires_grad=True with no usable grad_fn: ours is detached)
    _check(lambda *a: fn(tg, *a), lambda *a: fn(torch, *a), shapes, grad=name != "detach_copy")


def test_linear_cross_entropy():
    fn = (lambda m, F, x, w, b: F.linear_cross_entropy(x, w, m.tensor([1, 0, 2, -100]), linear_bias=b,
                                                       label_smoothing=0.1))
    _check(lambda *a: fn(tg, tF, *a), lambda *a: fn(torch, torch.nn.functional, *a), [(4, 5), (3, 5), (3,)])


def test_fill_number_casts_to_the_input_dtype():
    assert tg.fill(tg.arange(3), 2.7).tolist() == torch.fill(torch.arange(3), 2.7).tolist() == [2, 2, 2]
    out = tg.fill(tg.ones(2, dtype=tg.float32), 5)
    assert out.dtype == tg.float32 and out.tolist() == [5.0, 5.0]
    with pytest.raises(RuntimeError):
        tg.fill(tg.ones(2), tg.ones(2))


def test_range_includes_the_end_in_the_default_float():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [((0, 3), {}), ((1, 2, 0.25), {}), ((5, 0, -2), {}), ((0, 4), {"dtype": tg.int64})]
        for args, kwargs in cases:
            theirs = torch.range(*args, **{k: torch.int64 for k in kwargs})
            ours = tg.range(*args, **kwargs)
            assert ours.tolist() == theirs.tolist() and str(ours.dtype) == str(theirs.dtype)[6:]
        with pytest.raises(RuntimeError):
            tg.range(0, 3, -1)


def test_native_dropout_and_feature_dropout():
    x = tg.randn(200, 30, requires_grad=True)
    out, mask = tg.native_dropout(x, 0.25, True)
    assert mask.dtype == tg.bool and abs(mask.float().mean().item() - 0.75) < 0.03
    np.testing.assert_allclose(out.detach().numpy(), np.where(mask.numpy(), x.detach().numpy() / 0.75, 0),
                               rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad, mask.numpy() / 0.75, rtol=1e-6)
    same, ones = tg.native_dropout(x, 0.25, False)
    assert ones.all().item() and np.array_equal(same.detach().numpy(), x.detach().numpy())
    y = tg.ones(50, 40, 3)
    dropped = tg.feature_dropout(y, 0.5, True).numpy()
    assert (dropped == dropped[:, :, :1]).all() and set(np.unique(dropped)) <= {0.0, 2.0}
    assert tg.feature_dropout(y, 0.5, False) is y
    z = tg.ones(20, 20, 2)
    assert tg.feature_dropout_(z, 0.5, True) is z and set(np.unique(z.numpy())) <= {0.0, 2.0}
    with pytest.raises(RuntimeError):
        tg.feature_dropout(tg.ones(5), 0.5, True)


def test_native_batch_norm_eval_returns_empty_statistics():
    x = torch.randn(2, 3, 4)
    theirs = torch.native_batch_norm(x, None, None, torch.zeros(3), torch.ones(3), False, 0.1, 1e-5)
    ours = tg.native_batch_norm(tg.tensor(x.numpy()), None, None, tg.zeros(3), tg.ones(3), False, 0.1, 1e-5)
    _close(ours, theirs, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_random_fills_keep_dtype_and_match_the_distribution(dtype):
    g = tg.Generator().manual_seed(0)
    t = tg.zeros(60_000, dtype=getattr(tg, dtype))
    assert t.cauchy_(2.0, 3.0, generator=g) is t and t.dtype == getattr(tg, dtype)
    assert abs(np.median(t.numpy().astype(np.float64)) - 2.0) < 0.15
    q25, q75 = np.quantile(t.numpy().astype(np.float64), [0.25, 0.75])
    assert abs((q75 - q25) / 2 - 3.0) < 0.15  # a Cauchy's half interquartile range is its scale
    t.log_normal_(0.5, 0.4, generator=g)
    logs = np.log(t.numpy().astype(np.float64))
    assert abs(logs.mean() - 0.5) < 0.02 and abs(logs.std() - 0.4) < 0.02
    t.geometric_(0.3, generator=g)
    assert t.numpy().min() == 1 and abs(t.numpy().astype(np.float64).mean() - 1 / 0.3) < 0.1


def test_random_fills_generator_dtype_and_errors():
    a = tg.zeros(5).cauchy_(generator=tg.Generator().manual_seed(3))
    b = tg.zeros(5).cauchy_(generator=tg.Generator().manual_seed(3))
    assert np.array_equal(a.numpy(), b.numpy())
    ints = tg.zeros(1000, dtype=tg.int64).geometric_(0.5)
    assert ints.dtype == tg.int64 and ints.min().item() >= 1
    for call, error in [(lambda: tg.zeros(3, dtype=tg.int64).cauchy_(), RuntimeError),
                        (lambda: tg.zeros(3, dtype=tg.int64).log_normal_(), NotImplementedError),
                        (lambda: tg.zeros(3, dtype=tg.bool).geometric_(0.5), NotImplementedError),
                        (lambda: tg.zeros(3).geometric_(1), RuntimeError),
                        (lambda: tg.zeros(3).cauchy_(0, 0), RuntimeError),
                        (lambda: tg.zeros(3).log_normal_(1, -1), RuntimeError),
                        (lambda: tg.zeros(3, requires_grad=True).cauchy_(), RuntimeError)]:
        with pytest.raises(error):
            call()


def test_nonzero_static_and_as_strided_():
    for values, size, fill in [([[1, 0], [0, 1]], 3, -1), ([1, 0, 1], 1, 5), ([0, 0], 2, -1), (3, 2, 7)]:
        theirs = torch.nonzero_static(torch.tensor(values), size=size, fill_value=fill)
        ours = tg.tensor(values).nonzero_static(size=size, fill_value=fill)
        assert ours.tolist() == theirs.tolist() and tuple(ours.shape) == tuple(theirs.shape)
        assert tg.nonzero_static(tg.tensor(values), size=size, fill_value=fill).dtype == tg.int64
    with pytest.raises(RuntimeError):
        tg.nonzero_static(tg.tensor([1]), size=-1)
    x, y = tg.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    assert x.as_strided_((3, 2), (1, 3)) is x and x.tolist() == y.as_strided_((3, 2), (1, 3)).tolist()
    assert tg.as_strided_(tg.arange(6.0), (2,), (2,), 1).tolist() == [1.0, 3.0]


def test_small_queries_and_aliases():
    assert tg.vmap is tg.func.vmap
    assert tg.typename(tg.ones(2)) == "torch.FloatTensor" == torch.typename(torch.ones(2))
    assert tg.typename(tg.ones(2, dtype=tg.int64)) == torch.typename(torch.ones(2, dtype=torch.int64))
    assert tg.typename(3) == torch.typename(3) == "int"
    assert tg.is_storage(tg.ones(2)) is False
    assert tg.is_warn_always_enabled() is False
    tg.set_warn_always(True)
    assert tg.is_warn_always_enabled() is True
    tg.set_warn_always(False)
    assert tg.get_float32_matmul_precision() == "highest"
    tg.set_float32_matmul_precision("high")
    assert tg.get_float32_matmul_precision() == "high"
    tg.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError):
        tg.set_float32_matmul_precision("fast")
    x = tg.ones(2)
    assert tg.conj_physical_(x) is x and x.conj_physical() is not x


def test_variable_as_old_pytorch_tutorials_write_it():
    for m in (torch, tg):
        t = m.ones(2)
        v = m.autograd.Variable(t, requires_grad=True)
        assert v is not t and v.requires_grad and v.is_leaf and isinstance(t, m.autograd.Variable)
        v.sum().backward()
        assert v.grad.tolist() == [1.0, 1.0] and t.grad is None
        inner = m.autograd.Variable(m.ones(2, requires_grad=True) * 2)
        assert inner.is_leaf and not inner.requires_grad
        with pytest.raises(TypeError, match="Variable data has to be a tensor"):
            m.autograd.Variable([1.0, 2.0])
