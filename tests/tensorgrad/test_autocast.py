"""`tg.autocast`: which ops run in which dtype, checked against PyTorch's CPU autocast; the state
it keeps (per thread, nested, as a decorator); gradients through its casts; and its CUDA lists,
on a GPU."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from conftest import NO_GPU

import tensorgrad as tg
from tensorgrad import autocasting

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)


def arr(*shape: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return R.uniform(low, high, shape).astype(np.float32)


def positive_definite(n: int) -> np.ndarray:
    a = arr(n, n)
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


A33, B33, V3 = arr(3, 3), arr(3, 3), arr(3)
BATCH = arr(2, 3, 3)
IMAGE, KERNEL = arr(1, 2, 6, 6), arr(3, 2, 3, 3)
VOLUME = arr(1, 1, 4, 4, 4)
PROBS, TARGET01 = arr(4, 3, low=0.1, high=0.9), (arr(4, 3) > 0).astype(np.float32)
LOGITS, CLASSES = arr(4, 5), np.array([0, 3, 1, 4])
SPD = positive_definite(3)


def call(lib, name: str):
    """What op `name` computes, written once for either library."""
    F = lib.nn.functional
    t = lib.tensor
    calls = {
        # lower precision (float16) on the CPU
        "mm": lambda: lib.mm(t(A33), t(B33)),
        "matmul": lambda: t(A33) @ t(B33),
        "bmm": lambda: lib.bmm(t(BATCH), t(BATCH)),
        "addmm": lambda: lib.addmm(t(V3), t(A33), t(B33)),
        "baddbmm": lambda: lib.baddbmm(t(BATCH), t(BATCH), t(BATCH)),
        "addbmm": lambda: lib.addbmm(t(A33), t(BATCH), t(BATCH)),
        "linear": lambda: F.linear(t(A33), t(B33), t(V3)),
        "conv2d": lambda: F.conv2d(t(IMAGE), t(KERNEL)),
        "conv1d": lambda: F.conv1d(t(IMAGE[0]), t(KERNEL[:, :, 0])),
        "conv_transpose2d": lambda: F.conv_transpose2d(t(IMAGE), t(KERNEL.transpose(1, 0, 2, 3).copy())),
        "prelu": lambda: F.prelu(t(A33), t(np.array([0.25], np.float32))),
        "sdpa": lambda: F.scaled_dot_product_attention(t(BATCH), t(BATCH), t(BATCH)),
        "vecdot": lambda: lib.linalg.vecdot(t(A33), t(B33)),
        # float32 on the CPU
        "mse_loss": lambda: F.mse_loss(t(A33), t(B33)),
        "l1_loss": lambda: F.l1_loss(t(A33), t(B33)),
        "huber_loss": lambda: F.huber_loss(t(A33), t(B33)),
        "cross_entropy": lambda: F.cross_entropy(t(LOGITS), t(CLASSES)),
        "nll_loss": lambda: F.nll_loss(t(LOGITS), t(CLASSES)),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(t(PROBS), t(TARGET01)),
        "bce_with_logits": lambda: F.binary_cross_entropy_with_logits(t(A33), t(TARGET01[:3])),
        "kl_div": lambda: F.kl_div(t(A33), t(PROBS[:3]), reduction="batchmean"),
        "prod": lambda: lib.prod(t(A33) + 2),
        "cdist": lambda: lib.cdist(t(A33), t(B33)),
        "trace": lambda: lib.trace(t(A33)),
        "quantile": lambda: lib.quantile(t(V3), 0.5),
        "pad_reflect": lambda: F.pad(t(IMAGE), (1, 1, 1, 1), mode="reflect"),
        "pad_replicate_3d": lambda: F.pad(t(VOLUME), (1, 1, 1, 1, 1, 1), mode="replicate"),
        "max_pool3d": lambda: F.max_pool3d(t(VOLUME), 2),
        "avg_pool3d": lambda: F.avg_pool3d(t(VOLUME), 2),
        "linalg_inv": lambda: lib.linalg.inv(t(SPD)),
        "linalg_cholesky": lambda: lib.linalg.cholesky(t(SPD)),
        "rfft": lambda: lib.fft.rfft(t(V3)),
        # not listed on the CPU: the input's dtype
        "sum": lambda: lib.sum(t(A33)),
        "exp": lambda: lib.exp(t(A33)),
        "softmax": lambda: lib.softmax(t(A33), 0),
        "layer_norm": lambda: F.layer_norm(t(A33), (3,)),
        "relu": lambda: F.relu(t(A33)),
        "pad_constant": lambda: F.pad(t(IMAGE), (1, 1)),
        "pad_reflect_3d": lambda: F.pad(t(VOLUME), (1, 1, 1, 1, 1, 1), mode="reflect"),
        "mv": lambda: lib.mv(t(A33), t(V3)),  # (kernels of their own in PyTorch, unlisted)
        "dot": lambda: lib.dot(t(V3), t(V3)),
        # composites: the dtype their inner listed op gives
        "inner": lambda: lib.inner(t(A33), t(B33)),
        "tensordot": lambda: lib.tensordot(t(BATCH), t(BATCH), dims=([2], [2])),
        "cov": lambda: lib.cov(t(A33)),
        "rnn": lambda: lib.nn.RNN(3, 4, batch_first=True)(t(BATCH))[0],
        "gru": lambda: lib.nn.GRU(3, 4, batch_first=True)(t(BATCH))[0],
        "multihead_attention": lambda: lib.nn.MultiheadAttention(3, 1, batch_first=True)(
            t(BATCH), t(BATCH), t(BATCH)),
        "encoder_layer": lambda: lib.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)(t(arr(2, 3, 4))),
        "bilinear": lambda: lib.nn.Bilinear(3, 3, 2)(t(A33), t(B33)),
        "batch_norm": lambda: lib.nn.BatchNorm1d(3)(t(A33)),
        "cosine_similarity": lambda: F.cosine_similarity(t(A33), t(B33)),
        "interpolate": lambda: F.interpolate(t(BATCH), scale_factor=2),
        # promote: the widest floating input
        "cat": lambda: lib.cat([t(A33), t(B33)]),
        "stack": lambda: lib.stack([t(A33), t(B33)]),
        "index_copy": lambda: t(A33).index_copy(0, t(np.array([0, 2])), t(B33[:2])),
    }
    return calls[name]


def _in(lib, dtype):
    """Make `lib.tensor` build floating tensors in dtype (the test's inputs, in float16 or float32)."""
    original = lib.tensor

    def tensor(data, *args, **kwargs):
        made = original(data, *args, **kwargs)
        return made.to(getattr(lib, dtype)) if made.is_floating_point() else made

    return tensor


class _TensorsIn:
    """Inside the block, `lib.tensor` makes floating tensors in `dtype`."""

    def __init__(self, lib, dtype: str) -> None:
        self.lib, self.dtype = lib, dtype

    def __enter__(self):
        self.original = self.lib.tensor
        self.lib.tensor = _in(self.lib, self.dtype)

    def __exit__(self, *exc):
        self.lib.tensor = self.original


def run(lib, name: str, input_dtype: str, autocasting: bool):
    with _TensorsIn(lib, input_dtype):
        op = call(lib, name)
        if not autocasting:
            return op()
        with lib.autocast("cpu", dtype=lib.float16):
            return op()


def dtype_name(out) -> str:
    out = out[0] if isinstance(out, tuple) else out
    return str(out.dtype).replace("torch.", "")


NAMES = ["mm", "matmul", "bmm", "addmm", "baddbmm", "addbmm", "linear", "conv2d", "conv1d",
         "conv_transpose2d", "prelu", "sdpa", "vecdot", "mse_loss", "l1_loss", "huber_loss",
         "cross_entropy", "nll_loss", "binary_cross_entropy", "bce_with_logits", "kl_div", "prod",
         "cdist", "trace", "quantile", "pad_reflect", "pad_replicate_3d", "max_pool3d", "avg_pool3d",
         "linalg_inv", "linalg_cholesky", "rfft", "sum", "exp", "softmax", "layer_norm", "relu",
         "pad_constant", "pad_reflect_3d", "cat", "stack", "index_copy",
         "mv", "dot", "inner", "tensordot", "cov", "rnn", "gru", "multihead_attention", "encoder_layer",
         "bilinear", "batch_norm", "cosine_similarity", "interpolate"]


@pytest.mark.parametrize("name", NAMES)
def test_the_dtype_each_op_runs_in_is_pytorchs(name):
    for input_dtype in ("float32", "float16"):
        try:
            expected = dtype_name(run(torch, name, input_dtype, autocasting=True))
        except RuntimeError:  # PyTorch's CPU has no float16 kernel for this op outside autocast's cast
            continue
        got = run(tg, name, input_dtype, autocasting=True)
        assert dtype_name(got) == expected, (name, input_dtype)


@pytest.mark.parametrize("name", ["mm", "linear", "conv2d", "mse_loss", "cross_entropy", "cat", "prod"])
def test_the_values_under_autocast_are_pytorchs(name):
    got = run(tg, name, "float32", autocasting=True)
    expected = run(torch, name, "float32", autocasting=True)
    np.testing.assert_allclose(got.numpy().astype(np.float64), expected.detach().numpy().astype(np.float64),
                               rtol=2e-3, atol=2e-3)


def test_mixed_float16_and_float32_inputs_promote_in_cat_as_pytorch():
    a16, b32 = tg.tensor(A33).half(), tg.tensor(B33)
    with tg.autocast("cpu", dtype=tg.float16):
        assert tg.cat([a16, b32]).dtype == tg.float32
        assert tg.cat([a16, a16]).dtype == tg.float16
        assert tg.cat([a16, b32.double()]).dtype == tg.float64  # float64 is never cast


def test_float64_integer_out_and_explicit_dtype_calls_are_not_cast():
    a64 = tg.tensor(A33).double()
    out = tg.empty(3, 3)
    with tg.autocast("cpu", dtype=tg.float16):
        assert (a64 @ a64).dtype == tg.float64
        assert tg.mm(tg.tensor(A33), tg.tensor(B33), out=out).dtype == tg.float32
        assert tg.prod(tg.ones(3, dtype=tg.int64)).dtype == tg.int64
        assert tg.prod(tg.tensor(A33).half(), dtype=tg.float16).dtype == tg.float16


def test_gradients_reach_float32_parameters_in_float32_and_equal_pytorchs():
    results = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(A33[:2]))
            layer.bias.copy_(lib.tensor(V3[:2]))
        with lib.autocast("cpu", dtype=lib.float16):
            out = layer(lib.tensor(B33))
            loss = lib.nn.functional.mse_loss(out, lib.zeros(3, 2))
        assert str(out.dtype).endswith("float16") and str(loss.dtype).endswith("float32")
        loss.backward()
        grad = layer.weight.grad
        results.append(np.asarray(grad if isinstance(grad, np.ndarray) else grad.numpy()))
    assert results[0].dtype == np.float32
    np.testing.assert_allclose(results[0], results[1], rtol=2e-3, atol=1e-4)


def test_a_parameter_is_cast_once_per_block_and_the_cache_ends_with_it():
    layer = tg.nn.Linear(3, 3)
    with tg.autocast("cpu", dtype=tg.float16):
        first = autocasting._cached_cast(layer.weight, np.dtype(np.float16))
        assert autocasting._cached_cast(layer.weight, np.dtype(np.float16)) is first
        y = layer(tg.tensor(A33)) + layer(tg.tensor(A33))
        with tg.autocast("cpu", dtype=tg.float16):  # a nested block keeps the outer block's cache
            assert autocasting._cached_cast(layer.weight, np.dtype(np.float16)) is first
        assert autocasting._state.cache
    assert not autocasting._state.cache
    y.sum().backward()
    np.testing.assert_allclose(layer.weight.grad, 2 * np.ones((3, 1)) * A33.sum(0),
                               atol=2e-3)  # two uses, float16's precision


def test_the_state_inside_and_outside_and_nested_blocks_is_pytorchs():
    for lib in (tg, torch):
        assert not lib.is_autocast_enabled("cpu")
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled()  # no argument: CUDA's
            assert lib.get_autocast_dtype("cpu") == lib.float16
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
                assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.float32
            assert lib.is_autocast_enabled("cpu")
        assert not lib.is_autocast_enabled("cpu")
    assert tg.get_autocast_dtype("cuda") == tg.float16
    assert tg.get_autocast_dtype("cpu") == tg.float16  # no bfloat16 here: PyTorch's CPU default is bfloat16


def test_autocast_as_a_decorator_and_on_the_calling_thread_only():
    @tg.autocast("cpu", dtype=tg.float16)
    def product(a, b):
        seen_elsewhere = []
        worker = threading.Thread(target=lambda: seen_elsewhere.append((a @ b).dtype))
        worker.start()
        worker.join()
        return (a @ b).dtype, seen_elsewhere[0]

    here, elsewhere = product(tg.ones(2, 2), tg.ones(2, 2))
    assert here == tg.float16 and elsewhere == tg.float32
    assert not tg.is_autocast_enabled("cpu") and not autocasting.switch.on


def test_bad_arguments_fail_or_warn_as_pytorchs():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        tg.autocast(tg.device("cpu"))
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'meta'"):
        tg.autocast("meta")
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
        block = tg.autocast("cpu", dtype=tg.float32)
    with block:
        assert not tg.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match="requires a callable"):
        tg.autocast("cpu")(3)
    assert tg.amp.is_autocast_available("cpu") and not tg.amp.is_autocast_available("meta")


@pytest.mark.skipif(tg.cuda.is_available(), reason="checks the answer without a GPU")
def test_cuda_autocast_without_a_gpu_warns_and_stays_off():
    with pytest.warns(UserWarning, match="CUDA is not available"), tg.autocast("cuda"):
        assert not tg.is_autocast_enabled("cuda")


def test_the_deprecated_spellings_warn_and_work():
    with pytest.warns(FutureWarning, match=r"tensorgrad.cpu.amp.autocast\(args...\)` is deprecated"):
        block = tg.cpu.amp.autocast()
    with block:
        assert tg.is_autocast_enabled("cpu") and (tg.ones(2, 2) @ tg.ones(2, 2)).dtype == tg.float16
    with pytest.warns(DeprecationWarning, match="is_autocast_cpu_enabled"):
        assert not tg.is_autocast_cpu_enabled()
    with pytest.warns(FutureWarning, match="GradScaler"):
        assert tg.cpu.amp.GradScaler().is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tg.cuda.amp.GradScaler().is_enabled() == tg.cuda.is_available()


def test_every_listed_name_is_an_op_that_casts():
    """The lists name functions of this library: each name has one decorated function."""
    import importlib
    import pkgutil

    decorated = set()
    for module_info in pkgutil.walk_packages(tg.__path__, "tensorgrad."):
        module = importlib.import_module(module_info.name)
        for value in list(vars(module).values()) + [getattr(tg.Tensor, "__rtruediv__")]:
            if callable(value) and hasattr(value, "autocast_name"):
                decorated.add(value.autocast_name)
    listed = {name for table in autocasting._POLICIES.values() for names in table.values()
              for name in names.split()}
    assert listed == decorated


def test_custom_function_forward_casts_its_inputs_and_backward_keeps_the_state():
    seen = {}

    class Square(tg.autograd.Function):
        @staticmethod
        @tg.amp.custom_fwd(device_type="cpu", cast_inputs=tg.float32)
        def forward(ctx, x):
            seen["forward"] = (x.dtype, tg.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @tg.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            seen["backward"] = tg.is_autocast_enabled("cpu")
            return 2 * x * grad

    x = tg.tensor(V3).half().requires_grad_()
    with tg.autocast("cpu", dtype=tg.float16):
        y = Square.apply(x)
    y.sum().backward()
    assert seen == {"forward": (tg.float32, False), "backward": False}
    assert y.dtype == tg.float32 and x.grad.dtype == np.float16
    np.testing.assert_allclose(x.grad, 2 * V3.astype(np.float16), rtol=1e-3)


cuda_only = pytest.mark.skipif(not tg.cuda.is_available(), reason=NO_GPU)


@cuda_only
def test_cuda_lists_run_exp_sum_softmax_and_norms_in_float32_and_products_in_float16():
    a = tg.tensor(A33, device="cuda").half()
    F = tg.nn.functional
    with tg.autocast("cuda"):
        assert (a @ a).dtype == tg.float16 and F.linear(a.float(), a.float()).dtype == tg.float16
        for out in (a.exp(), a.sum(), a.softmax(0), F.layer_norm(a, (3,)), a.log1p(), a**2, 1 / a, a.norm()):
            assert out.dtype == tg.float32
        assert tg.cat([a, a.float()]).dtype == tg.float32
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(a.sigmoid(), a.sigmoid())


def test_a_warning_inside_a_listed_op_names_the_users_line():
    """The autocast wrapper is one frame more between the user and the op: warnings still point
    at the user's call, in and out of autocast."""
    def warned_line(call):
        with pytest.warns(UserWarning) as caught:
            call()
        return caught[0].filename, caught[0].lineno

    here = __file__
    mse = lambda: tg.nn.functional.mse_loss(tg.ones(2), tg.ones(1))  # noqa: E731
    assert warned_line(mse) == (here, mse.__code__.co_firstlineno)
    with tg.autocast("cpu", dtype=tg.float16):
        assert warned_line(mse) == (here, mse.__code__.co_firstlineno)
    stft = lambda: tg.stft(tg.ones(64), 16, return_complex=True)  # noqa: E731
    assert warned_line(stft) == (here, stft.__code__.co_firstlineno)


@pytest.mark.parametrize("input_dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("param_dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("norm", ["layer_norm", "group_norm"])
def test_norms_mix_dtypes_as_pytorchs_cpu_kernels(norm, input_dtype, param_dtype):
    """A float32 model under CPU autocast normalises float16 activations with float32 weights: the
    output stays float16, the weight's gradient float32; other mixtures are PyTorch's errors."""
    results = []
    for lib in (tg, torch):
        x = lib.tensor(A33, dtype=getattr(lib, input_dtype), requires_grad=True)
        weight = lib.tensor(V3 + 1, dtype=getattr(lib, param_dtype), requires_grad=True)
        try:
            shape = (3,) if norm == "layer_norm" else 1
            out = getattr(lib.nn.functional, norm)(x, shape, weight, weight * 0)
        except RuntimeError as error:
            results.append(str(error))
            continue
        (out * out).sum().backward()
        results.append((dtype_name(out), str(x.grad.dtype).replace("torch.", ""),
                        str(weight.grad.dtype).replace("torch.", "")))
    assert results[0] == results[1]
