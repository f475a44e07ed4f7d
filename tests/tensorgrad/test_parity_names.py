"""PyTorch's import paths and names: nn.parameter, nn.grad, utils.data's submodules, optim.Muon,
the tensor attributes code checks (layout, is_sparse, ...), and normalize/batch_norm parity."""

import pickle

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


# --- nn.parameter -----------------------------------------------------------------------------


def test_nn_parameter_module_holds_the_same_classes():
    from tensorgrad.nn.parameter import (
        Buffer,
        Parameter,
        UninitializedBuffer,
        UninitializedParameter,
        is_lazy,
    )

    assert Parameter is tg.nn.Parameter and Buffer is tg.nn.Buffer
    assert UninitializedParameter is tg.nn.UninitializedParameter
    assert UninitializedBuffer is tg.nn.UninitializedBuffer
    assert is_lazy(tg.nn.LazyLinear(3).weight) and not is_lazy(tg.nn.Linear(2, 3).weight)
    assert not is_lazy(tg.ones(2))


# --- nn.grad ------------------------------------------------------------------------------------

CONV_CASES = [
    (1, (2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "dilation": 1, "groups": 2}),
    (1, (1, 3, 8), (2, 3, 2), {}),
    (2, (2, 4, 7, 6), (6, 2, 3, 2), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 2}),
    (2, (1, 2, 6, 6), (3, 2, 3, 3), {"stride": 2}),
    (3, (1, 2, 5, 4, 5), (4, 1, 2, 2, 3), {"stride": (1, 2, 1), "padding": 1, "groups": 2}),
]


@pytest.mark.parametrize(("dims", "x_shape", "w_shape", "kw"), CONV_CASES)
def test_conv_input_and_weight_gradients_match_pytorch(dims, x_shape, w_shape, kw):
    rng = np.random.default_rng(dims)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    conv = getattr(TF, f"conv{dims}d")
    go = rng.standard_normal(conv(torch.tensor(x), torch.tensor(w), **kw).shape)
    ours, theirs = F.grad, torch.nn.grad
    ours_input = getattr(ours, f"conv{dims}d_input")(x_shape, tg.tensor(w), tg.tensor(go), **kw)
    theirs_input = getattr(theirs, f"conv{dims}d_input")(x_shape, torch.tensor(w), torch.tensor(go), **kw)
    ours_weight = getattr(tg.nn.grad, f"conv{dims}d_weight")(tg.tensor(x), w_shape, tg.tensor(go), **kw)
    theirs_weight = getattr(theirs, f"conv{dims}d_weight")(torch.tensor(x), w_shape, torch.tensor(go), **kw)
    for ours, theirs in ((ours_input, theirs_input), (ours_weight, theirs_weight)):
        assert ours.shape == tuple(theirs.shape) and ours.dtype == tg.float64
        np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_conv_input_gradient_is_differentiable_and_float32_stays_float32():
    rng = np.random.default_rng(1)
    w0, go0 = rng.standard_normal((3, 2, 3)), rng.standard_normal((2, 3, 5))
    w, go = tg.tensor(w0, requires_grad=True), tg.tensor(go0, requires_grad=True)
    wt, got = torch.tensor(w0, requires_grad=True), torch.tensor(go0, requires_grad=True)
    ours = tg.nn.grad.conv1d_input((2, 2, 7), w, go)
    theirs = torch.nn.grad.conv1d_input((2, 2, 7), wt, got)
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    np.testing.assert_allclose(w.grad, wt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(go.grad, got.grad.numpy(), rtol=1e-12)
    assert tg.nn.grad.conv1d_input((2, 2, 7), tg.tensor(w0, dtype=tg.float32),
                                   tg.tensor(go0, dtype=tg.float32)).dtype == tg.float32


def test_conv_gradient_with_a_wrong_grad_output_shape_raises_like_pytorch():
    with pytest.raises(RuntimeError):
        torch.nn.grad.conv2d_input((1, 2, 5, 5), torch.ones(3, 2, 3, 3), torch.ones(1, 3, 4, 4))
    with pytest.raises(RuntimeError, match=r"conv2d_input.*\(1, 3, 4, 4\).*\(1, 3, 3, 3\)"):
        tg.nn.grad.conv2d_input((1, 2, 5, 5), tg.ones(3, 2, 3, 3), tg.ones(1, 3, 4, 4))


# --- utils.data submodules ----------------------------------------------------------------------


def test_utils_data_submodules_alias_the_existing_objects():
    import tensorgrad.data as data
    from tensorgrad.utils.data import _utils, dataloader, dataset, sampler
    from tensorgrad.utils.data._utils.collate import default_collate, default_convert

    for module, theirs in ((dataset, torch.utils.data.dataset), (sampler, torch.utils.data.sampler),
                           (dataloader, torch.utils.data.dataloader)):
        assert sorted(module.__all__) == sorted(theirs.__all__)
        for name in module.__all__:
            assert getattr(module, name) is getattr(data, name)
    assert default_collate is data.default_collate and default_convert is data.default_convert
    assert _utils.collate.default_collate is data.default_collate
    assert tg.utils.data.dataset.random_split is data.random_split


# --- optim.Muon -------------------------------------------------------------------------------------

MUON_CASES = [
    ((3, 5), {}),
    ((6, 4), {"nesterov": False, "adjust_lr_fn": "match_rms_adamw"}),
    ((4, 4), {"momentum": 0.5, "weight_decay": 0.0, "adjust_lr_fn": "original"}),
    ((7, 2), {"ns_steps": 3, "ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-5}),
]


def _muon_trajectories(shape, kw, dtype, steps=6):
    rng = np.random.default_rng(sum(shape))
    w0 = rng.standard_normal(shape)
    theirs = torch.tensor(w0, dtype=getattr(torch, dtype), requires_grad=True)
    ours = tg.tensor(w0, dtype=getattr(tg, dtype), requires_grad=True)
    their_opt, our_opt = torch.optim.Muon([theirs], lr=0.02, **kw), tg.optim.Muon([ours], lr=0.02, **kw)
    for _ in range(steps):
        target = rng.standard_normal(shape)
        their_opt.zero_grad()
        ((theirs - torch.tensor(target, dtype=theirs.dtype)) ** 3).sum().backward()
        their_opt.step()
        our_opt.zero_grad()
        ((ours - tg.tensor(target, dtype=ours.dtype)) ** 3).sum().backward()
        our_opt.step()
    return ours, theirs, our_opt, their_opt


@pytest.mark.parametrize(("shape", "kw"), MUON_CASES)
def test_muon_follows_pytorch_step_for_step(shape, kw):
    ours, theirs, our_opt, their_opt = _muon_trajectories(shape, kw, "float64")
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    buf, their_buf = (opt.state_dict()["state"][0]["momentum_buffer"] for opt in (our_opt, their_opt))
    np.testing.assert_allclose(buf.data, their_buf.numpy(), rtol=1e-12)
    ours_groups, theirs_groups = our_opt.state_dict()["param_groups"], their_opt.state_dict()["param_groups"]
    assert ours_groups[0].keys() == theirs_groups[0].keys()
    assert {k: v for k, v in ours_groups[0].items()} == dict(theirs_groups[0])


def test_muon_float32_and_defaults_match_pytorch():
    ours, theirs, *_ = _muon_trajectories((5, 3), {}, "float32", steps=4)
    assert ours.dtype == tg.float32
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-6, atol=1e-7)
    ours_defaults = tg.optim.Muon([tg.ones(2, 2, requires_grad=True)]).defaults
    assert ours_defaults == torch.optim.Muon([torch.ones(2, 2, requires_grad=True)]).defaults


def test_muon_state_dict_resumes_exactly():
    ours, _, our_opt, _ = _muon_trajectories((4, 3), {}, "float64", steps=2)
    copy = tg.tensor(ours.data.copy(), requires_grad=True)
    resumed = tg.optim.Muon([copy], lr=0.02)
    resumed.load_state_dict(our_opt.state_dict())
    for p, opt in ((ours, our_opt), (copy, resumed)):
        opt.zero_grad()
        (p ** 3).sum().backward()
        opt.step()
    np.testing.assert_array_equal(ours.data, copy.data)


def test_muon_errors_match_pytorch():
    for make in (lambda m: m.zeros(3, requires_grad=True), lambda m: m.zeros(2, 3, 4, requires_grad=True)):
        with pytest.raises(ValueError, match="only supports 2D parameters"):
            torch.optim.Muon([make(torch)])
        with pytest.raises(ValueError, match="only supports 2D parameters"):
            tg.optim.Muon([make(tg)])
    for bad in ({"adjust_lr_fn": "x"}, {"lr": -1.0}, {"momentum": -0.1}, {"weight_decay": -1.0}):
        with pytest.raises(ValueError):
            torch.optim.Muon([torch.zeros(2, 2, requires_grad=True)], **bad)
        with pytest.raises(ValueError):
            tg.optim.Muon([tg.zeros(2, 2, requires_grad=True)], **bad)
    for m in (torch, tg):
        w = m.zeros(2, 2, requires_grad=True)
        w.grad = m.ones(2, 2)
        with pytest.raises(ValueError, match="less than 100"):
            (torch.optim if m is torch else tg.optim).Muon([w], ns_steps=100).step()


# --- tensor attributes, tg.layout ---------------------------------------------------------------

FALSE_ATTRIBUTES = ["is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_mps", "is_nested", "is_xpu",
                    "is_mkldnn", "is_vulkan", "is_ipu", "is_mtia", "is_maia"]


def test_the_attributes_code_checks_match_a_dense_pytorch_tensor():
    ours, theirs = tg.ones(2, 3), torch.ones(2, 3)
    for name in FALSE_ATTRIBUTES:
        assert getattr(ours, name) is getattr(theirs, name) is False, name
    assert ours.layout is tg.strided and theirs.layout is torch.strided
    assert isinstance(tg.strided, tg.layout) and isinstance(torch.strided, torch.layout)
    assert repr(tg.strided) == "tensorgrad.strided"
    assert pickle.loads(pickle.dumps(tg.strided)) is tg.strided
    assert ours.is_pinned() is theirs.is_pinned() is False
    with pytest.raises(TypeError):
        torch.layout()
    with pytest.raises(TypeError):
        tg.layout("dense")


@pytest.mark.skipif(torch.cuda.is_available() or tg.cuda.is_available(), reason="pinning needs no GPU here")
def test_pin_memory_without_a_gpu_raises_like_pytorch():
    with pytest.raises(RuntimeError):
        torch.ones(2).pin_memory()
    with pytest.raises(RuntimeError, match="pin_memory"):
        tg.ones(2).pin_memory()
    with pytest.raises(RuntimeError):
        torch.zeros(2, pin_memory=True)
    with pytest.raises(RuntimeError, match="pin_memory"):
        tg.zeros(2, pin_memory=True)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_accept_layout_and_pin_memory(name):
    ours = getattr(tg, name)(2, 3, layout=tg.strided, pin_memory=False)
    theirs = getattr(torch, name)(2, 3, layout=torch.strided, pin_memory=False)
    assert ours.shape == tuple(theirs.shape) and ours.layout is tg.strided
    with pytest.raises(TypeError):
        getattr(torch, name)(2, layout="strided")
    with pytest.raises(TypeError, match="layout"):
        getattr(tg, name)(2, layout="strided")


# --- normalize and batch_norm ---------------------------------------------------------------------

NORM_INPUTS = [np.array([[1.0, 0.0, -2.0], [0.0, 0.0, 0.0], [3.0, -1.0, 0.5]]),
               np.array([[1.0, 0.3, -2.0], [0.7, -0.2, 1.5], [3.0, -1.0, 0.5]])]


@pytest.mark.parametrize("p", [0.0, -1.0, -2.5, float("inf"), -float("inf"), 3.0])
@pytest.mark.parametrize("x0", NORM_INPUTS, ids=["with_zeros", "nonzero"])
def test_normalize_any_p_matches_pytorch(p, x0):
    g = np.random.default_rng(3).standard_normal(x0.shape)
    xt = torch.tensor(x0, requires_grad=True)
    yt = TF.normalize(xt, p=p, dim=1)
    yt.backward(torch.tensor(g))
    x = tg.tensor(x0, requires_grad=True)
    y = F.normalize(x, p=p, dim=1)
    y.backward(tg.tensor(g))
    np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=1e-12)
    if p < 0 and (x0 == 0).any():
        return  # |0|**(p - 1) is infinite: not a gradient to compare
    np.testing.assert_allclose(x.grad, xt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [0.0, -float("inf"), -1.5])
def test_normalize_p_gradients_pass_gradcheck(p):
    x = tg.tensor(NORM_INPUTS[1], requires_grad=True)
    assert tg.autograd.gradcheck(lambda t: F.normalize(t, p=p, dim=1), (x,))
    assert tg.autograd.gradgradcheck(lambda t: F.normalize(t, p=p, dim=1), (x,))


def test_batch_norm_on_a_1d_input_raises_pytorchs_exceptions():
    for m, fn in ((torch, TF), (tg, F)):
        x = m.ones(5)
        with pytest.raises(RuntimeError):
            fn.batch_norm(x, m.zeros(5), m.ones(5), training=True)
        with pytest.raises(IndexError):
            fn.batch_norm(x, None, None, training=True)
        with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 1D input"):
            m.nn.BatchNorm1d(5)(x)


@pytest.mark.parametrize("training", [False, True])
def test_functional_batch_norm_refuses_momentum_none_like_pytorch(training):
    for m, fn in ((torch, TF), (tg, F)):
        with pytest.raises(TypeError, match="momentum"):
            fn.batch_norm(m.ones(4, 3), m.zeros(3), m.ones(3), training=training, momentum=None)


def test_batchnorm_module_momentum_none_is_a_cumulative_average_as_in_pytorch():
    rng = np.random.default_rng(5)
    ours, theirs = tg.nn.BatchNorm1d(3, momentum=None), torch.nn.BatchNorm1d(3, momentum=None)
    for _ in range(3):
        x = rng.standard_normal((4, 3)).astype(np.float32)
        ours(tg.tensor(x))
        theirs(torch.tensor(x))
    np.testing.assert_allclose(ours.running_mean.data, theirs.running_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.running_var.data, theirs.running_var.numpy(), rtol=1e-6)


def test_constants_complex_dtypes_and_the_dtype_type_are_pytorchs():
    for name in ("e", "pi", "inf", "nan", "newaxis"):
        ours, theirs = getattr(tg, name), getattr(torch, name)
        assert ours is theirs or ours == theirs or (ours != ours and theirs != theirs), name
    assert tg.ones(3)[:, tg.newaxis].shape == (3, 1)
    for ours, theirs in ((tg.complex64, torch.complex64), (tg.cfloat, torch.cfloat),
                         (tg.complex128, torch.complex128), (tg.cdouble, torch.cdouble)):
        made = tg.zeros(2, dtype=ours)
        assert str(made.dtype) == str(theirs).removeprefix("torch.")
        assert made.is_complex()
    assert all(isinstance(d, tg.dtype) for d in (tg.float32, tg.int64, tg.bool, tg.complex64))
    assert not isinstance("float32", tg.dtype)


def test_distributions_testing_and_signal_load_on_first_use():
    import subprocess
    import sys
    code = ("import sys, tensorgrad as tg\n"
            "names = ('distributions', 'random', 'signal', 'testing')\n"
            "print(any(f'tensorgrad.{n}' in sys.modules for n in names))\n"
            "print(tg.distributions.Normal(0.0, 1.0).mean.item(), callable(tg.testing.assert_close))\n"
            "print(all(n in dir(tg) for n in names), hasattr(tg, 'signal'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:3] == ["False", "0.0 True", "True True"]
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        tg.not_a_name  # noqa: B018
