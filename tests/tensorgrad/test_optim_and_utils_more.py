"""Adafactor, `optim.swa_utils`, the old `nn.init` spellings and `nn.utils`' fusion, `skip_init`
and `stateless`, each against PyTorch, and on the foreign-array stand-in for a GPU."""

from __future__ import annotations

import copy
import inspect
import warnings

import numpy as np
import pytest
from foreign_array import foreign, is_foreign
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg
from tensorgrad import nn, optim
from tensorgrad.device import to_numpy
from tensorgrad.optim import swa_utils

torch = pytest.importorskip("torch")


def _close(ours, theirs, rtol=1e-6, atol=1e-6):
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    ours = to_numpy(ours.data if isinstance(ours, tg.Tensor) else ours)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


def _same_signature(ours, theirs):
    def spec(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]
    assert spec(ours) == spec(theirs)


# --- Adafactor -----------------------------------------------------------------------------------

SHAPES = [(3, 4), (5,), (2, 3, 4), ()]


def _adafactor_runs(dtype, steps=4, shapes=SHAPES, **options):
    rng = np.random.default_rng(0)
    start = [rng.standard_normal(s).astype(dtype) for s in shapes]
    theirs = [torch.tensor(a, requires_grad=True) for a in start]
    ours = [tg.tensor(a, requires_grad=True) for a in start]
    t_opt, g_opt = torch.optim.Adafactor(theirs, **options), optim.Adafactor(ours, **options)
    for _ in range(steps):
        grads = [rng.standard_normal(s).astype(dtype) for s in shapes]
        for t, g, grad in zip(theirs, ours, grads, strict=True):
            t.grad, g.grad = torch.tensor(grad), grad.copy()
        t_opt.step()
        g_opt.step()
        for t, g in zip(theirs, ours, strict=True):  # step by step, not only at the end
            _close(g, t, rtol=2e-6, atol=1e-6)
    return t_opt, g_opt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", [{}, {"lr": 0.05, "weight_decay": 0.1, "maximize": True},
                                     {"eps": (1e-6, 1e-2), "d": 2.0, "beta2_decay": -0.5}])
def test_adafactor_follows_pytorch_step_by_step_with_its_state(dtype, options):
    t_opt, g_opt = _adafactor_runs(dtype, **options)
    t_state, g_state = t_opt.state_dict()["state"], g_opt.state_dict()["state"]
    # Factored (row_var, col_var) for >= 2-D parameters, a whole variance for the others.
    assert [list(g_state[i]) for i in g_state] == [list(t_state[i]) for i in t_state]
    assert list(g_state[0]) == ["step", "row_var", "col_var"] and g_state[0]["row_var"].shape == (3, 1)
    assert g_state[2]["col_var"].shape == (2, 1, 4) and list(g_state[1]) == ["step", "variance"]
    for i in t_state:
        for key in t_state[i]:
            _close(g_state[i][key], t_state[i][key], rtol=2e-6, atol=1e-6)
    assert g_opt.state_dict()["param_groups"] == t_opt.state_dict()["param_groups"]


def test_adafactor_signature_tensor_lr_and_bad_options():
    _same_signature(optim.Adafactor.__init__, torch.optim.Adafactor.__init__)
    w = tg.zeros(2, 2, requires_grad=True)
    for bad in ({"lr": -1.0}, {"beta2_decay": 0.5}, {"eps": (-1.0, 1e-3)}, {"eps": (None, -1.0)},
                {"d": 0.5}, {"weight_decay": -0.1}):
        with pytest.raises(ValueError):
            torch.optim.Adafactor([torch.zeros(2, 2, requires_grad=True)], **bad)
        with pytest.raises(ValueError, match="Adafactor"):
            optim.Adafactor([w], **bad)
    # A Tensor lr is read at each step, as a number would be.
    p = tg.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    q = tg.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    a, b = optim.Adafactor([p], lr=tg.tensor(0.005)), optim.Adafactor([q], lr=0.005)
    for opt, t in ((a, p), (b, q)):
        t.grad = np.array([[0.3, -0.1], [2.0, 0.7]], np.float32)
        opt.step()
    np.testing.assert_array_equal(p.data, q.data)
    assert not np.array_equal(p.data, [[1.0, -2.0], [0.5, 3.0]])


def test_adafactor_resumes_from_its_state_dict_exactly():
    t_opt, g_opt = _adafactor_runs(np.float32, steps=2)
    params = [tg.tensor(p.data.copy(), requires_grad=True) for p in g_opt.param_groups[0]["params"]]
    resumed = optim.Adafactor(params)
    resumed.load_state_dict(copy.deepcopy(g_opt.state_dict()))
    rng = np.random.default_rng(3)
    for p, q in zip(g_opt.param_groups[0]["params"], params, strict=True):
        p.grad = rng.standard_normal(p.shape).astype(np.float32)
        q.grad = p.grad.copy()
    g_opt.step()
    resumed.step()
    for p, q in zip(g_opt.param_groups[0]["params"], params, strict=True):
        np.testing.assert_array_equal(p.data, q.data)


def test_adafactor_keeps_foreign_arrays():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in SHAPES[:3]]
    grads = [rng.standard_normal(s) for s in SHAPES[:3]]
    runs = []
    for convert in (np.copy, foreign):
        params = [tg.from_numpy(convert(a)).requires_grad_() for a in arrays]
        opt = optim.Adafactor(params, weight_decay=0.1)
        for _ in range(2):
            for p, g in zip(params, grads, strict=True):
                p.grad = convert(g)
            opt.step()
        runs.append((params, opt.state))
    (plain, plain_state), (ours, state) = runs
    for p, q in zip(plain, ours, strict=True):
        assert is_foreign(q.data)
        np.testing.assert_allclose(to_numpy(q.data), p.data, rtol=1e-12)
        for key in ("row_var", "col_var", "variance"):
            if key in state[q]:
                assert is_foreign(state[q][key].data)
                np.testing.assert_allclose(to_numpy(state[q][key].data), plain_state[p][key].data, rtol=1e-12)


# --- swa_utils -----------------------------------------------------------------------------------


def _twin_models(seed=0):
    torch.manual_seed(seed)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    ours.load_state_dict({k: v.numpy().copy() for k, v in theirs.state_dict().items()})
    return theirs, ours


def _train_and_average(theirs, ours, t_avg, g_avg, updates=4, seed=1):
    rng = np.random.default_rng(seed)
    for _ in range(updates):
        x = rng.standard_normal((5, 3)).astype(np.float32)
        theirs(torch.tensor(x))
        ours(tg.tensor(x))  # BatchNorm's running statistics move too
        for p, q in zip(theirs.parameters(), ours.parameters(), strict=True):
            step = rng.standard_normal(tuple(p.shape)).astype(np.float32)
            with torch.no_grad():
                p.add_(torch.tensor(step))
            with tg.no_grad():
                q.add_(tg.tensor(step))
        t_avg.update_parameters(theirs)
        g_avg.update_parameters(ours)


AVERAGES = {
    "swa": lambda m: ({}, {}),
    "ema avg_fn": lambda m: ({"avg_fn": m.get_ema_avg_fn(0.9)}, {"avg_fn": swa_utils.get_ema_avg_fn(0.9)}),
    "ema multi_avg_fn": lambda m: ({"multi_avg_fn": m.get_ema_multi_avg_fn(0.8)},
                                   {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.8)}),
    "swa multi_avg_fn": lambda m: ({"multi_avg_fn": m.get_swa_multi_avg_fn()},
                                   {"multi_avg_fn": swa_utils.get_swa_multi_avg_fn()}),
    "swa avg_fn": lambda m: ({"avg_fn": m.get_swa_avg_fn()}, {"avg_fn": swa_utils.get_swa_avg_fn()}),
}


# (PyTorch's swa multi_avg_fn with use_buffers fails on the int64 num_batches_tracked buffer: its
# foreach addcdiv refuses integers; tensorgrad averages it and truncates, as its other paths do.)
@pytest.mark.parametrize("kind, use_buffers", [(kind, use_buffers) for kind in AVERAGES
                                               for use_buffers in (False, True)
                                               if (kind, use_buffers) != ("swa multi_avg_fn", True)])
def test_averaged_model_matches_pytorch(kind, use_buffers):
    theirs, ours = _twin_models()
    t_kwargs, g_kwargs = AVERAGES[kind](torch.optim.swa_utils)
    t_avg = torch.optim.swa_utils.AveragedModel(theirs, use_buffers=use_buffers, **t_kwargs)
    g_avg = swa_utils.AveragedModel(ours, use_buffers=use_buffers, **g_kwargs)
    assert g_avg.n_averaged.dtype == np.int64 and g_avg.n_averaged.item() == 0
    _train_and_average(theirs, ours, t_avg, g_avg)
    t_state, g_state = t_avg.state_dict(), g_avg.state_dict()
    assert list(g_state) == list(t_state)  # n_averaged first, then module.*
    assert list(g_state)[:2] == ["n_averaged", "module.0.weight"]
    for key in t_state:
        _close(g_state[key], t_state[key], rtol=1e-5, atol=1e-6)
    assert g_avg.n_averaged.item() == 4
    assert g_avg.module is not ours and g_avg.module[0].weight is not ours[0].weight
    x = np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)
    t_avg.eval()
    g_avg.eval()
    _close(g_avg(tg.tensor(x)), t_avg(torch.tensor(x)), rtol=1e-5)


def test_averaged_model_first_update_copies_and_swa_is_the_mean():
    model = nn.Linear(2, 1)
    avg = swa_utils.AveragedModel(model)
    seen = []
    for value in (1.0, 2.0, 6.0):
        with tg.no_grad():
            model.weight.fill_(value)
        avg.update_parameters(model)
        seen.append(avg.module.weight.data.copy())
    np.testing.assert_allclose(np.concatenate(seen).ravel(), [1, 1, 1.5, 1.5, 3, 3])
    with pytest.raises(AssertionError):
        swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    for maker in (swa_utils.get_ema_avg_fn, swa_utils.get_ema_multi_avg_fn):
        with pytest.raises(ValueError, match="decay"):
            maker(1.5)
    _same_signature(swa_utils.AveragedModel.__init__, torch.optim.swa_utils.AveragedModel.__init__)
    for name in ("update_bn", "get_ema_multi_avg_fn", "get_ema_avg_fn", "SWALR"):
        obj = getattr(swa_utils, name)
        _same_signature(obj.__init__ if name == "SWALR" else obj,
                        getattr(torch.optim.swa_utils, name).__init__ if name == "SWALR"
                        else getattr(torch.optim.swa_utils, name))


def test_averaged_model_keeps_foreign_arrays():
    results = []
    for convert in (np.copy, foreign):
        tg.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).double()
        for t in [*model.parameters(), *model.buffers()]:
            t.data = convert(t.data)
        averages = [swa_utils.AveragedModel(model), swa_utils.AveragedModel(model, use_buffers=True,
                    multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5)),
                    swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.5))]
        for k in range(3):
            with tg.no_grad():
                for p in model.parameters():
                    p.mul_(1.5).add_(0.25 * k)
            model(tg.from_numpy(convert(np.linspace(-1, 1, 6).reshape(2, 3) * (k + 1))))
            for avg in averages:
                avg.update_parameters(model)
        assert all(avg.n_averaged.item() == 3 for avg in averages)  # a count on the host, as in PyTorch
        results.append([t for avg in averages for key, t in avg.state_dict().items() if key != "n_averaged"])
    for plain, ours in zip(*results, strict=True):
        assert is_foreign(ours.data), type(ours.data)
        np.testing.assert_allclose(to_numpy(ours.data), plain.data, rtol=1e-12)


def test_update_bn_recomputes_running_statistics_as_pytorch():
    theirs, ours = _twin_models()
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((6, 3)).astype(np.float32) * 2 + 1 for _ in range(3)]
    theirs.eval()
    ours.eval()
    torch.optim.swa_utils.update_bn([(torch.tensor(b), 0) for b in batches], theirs)
    swa_utils.update_bn([(tg.tensor(b), 0) for b in batches], ours)
    assert not ours.training and ours[1].momentum == 0.1  # mode and momentum restored
    for name, value in theirs.state_dict().items():
        _close(ours.state_dict()[name], value, rtol=1e-5)
    assert ours[1].num_batches_tracked.item() == 3
    # A model without BatchNorm is left alone; an InstanceNorm is not a BatchNorm.
    inorm = nn.InstanceNorm1d(2, track_running_stats=True)
    inorm.running_mean.data[...] = 5.0
    swa_utils.update_bn([tg.ones(1, 2, 3)], inorm)
    np.testing.assert_array_equal(inorm.running_mean.data, [5.0, 5.0])


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3])
def test_swalr_rates_and_state_dict_match_pytorch(strategy, anneal_epochs):
    t_opt = torch.optim.SGD([{"params": [torch.zeros(2, requires_grad=True)]},
                             {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.3}], lr=0.1)
    g_opt = optim.SGD([{"params": [tg.zeros(2, requires_grad=True)]},
                       {"params": [tg.zeros(1, requires_grad=True)], "lr": 0.3}], lr=0.1)
    t_sched = torch.optim.swa_utils.SWALR(t_opt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                                          anneal_strategy=strategy)
    g_sched = swa_utils.SWALR(g_opt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                              anneal_strategy=strategy)
    t_rates, g_rates = [t_sched.get_last_lr()], [g_sched.get_last_lr()]
    for _ in range(5):
        t_opt.step()
        g_opt.step()
        t_sched.step()
        g_sched.step()
        t_rates.append(t_sched.get_last_lr())
        g_rates.append(g_sched.get_last_lr())
    assert g_rates == t_rates and g_rates[-1] == [0.05, 0.01]
    assert list(g_sched.state_dict()) == list(t_sched.state_dict())
    assert g_opt.param_groups[1]["swa_lr"] == 0.01
    restored = swa_utils.SWALR(optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1), swa_lr=0.5,
                               anneal_strategy="linear" if strategy == "cos" else "cos")
    restored.load_state_dict(g_sched.state_dict())
    assert restored.anneal_func(0.5) == g_sched.anneal_func(0.5)


def test_swalr_refuses_bad_options():
    opt = optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr"):
        swa_utils.SWALR(opt, swa_lr=[0.1, 0.2])


# --- nn.init's old spellings -----------------------------------------------------------------------

OLD_NAMES = {"uniform": (), "normal": (), "constant": (0.5,), "eye": (), "dirac": (), "xavier_uniform": (),
             "xavier_normal": (), "kaiming_uniform": (), "kaiming_normal": (), "orthogonal": (),
             "sparse": (0.5,)}


@pytest.mark.parametrize("name", list(OLD_NAMES))
def test_old_init_spellings_warn_and_fill_as_the_new(name):
    shape = (3, 2, 3) if name == "dirac" else (4, 3)
    old, new = getattr(nn.init, name), getattr(nn.init, name + "_")
    a, b = tg.zeros(*shape), tg.zeros(*shape)
    tg.manual_seed(4)
    warning = rf"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`"
    with pytest.warns(FutureWarning, match=warning):
        assert old(a, *OLD_NAMES[name]) is a
    tg.manual_seed(4)
    new(b, *OLD_NAMES[name])
    np.testing.assert_array_equal(a.data, b.data)
    assert a.data.any() and old.__name__ == name and old.__doc__
    with pytest.warns(FutureWarning):
        getattr(torch.nn.init, name)(torch.zeros(*shape), *OLD_NAMES[name])


# --- nn.utils: fusion, skip_init, stateless --------------------------------------------------------


def _eval_bn(torch_cls, ours_cls, channels, seed):
    torch.manual_seed(seed)
    t_bn = torch_cls(channels)
    with torch.no_grad():
        t_bn.weight.uniform_(0.5, 1.5)
        t_bn.bias.uniform_(-1, 1)
        t_bn.running_mean.uniform_(-1, 1)
        t_bn.running_var.uniform_(0.5, 2)
    g_bn = ours_cls(channels)
    g_bn.load_state_dict({k: v.numpy().copy() for k, v in t_bn.state_dict().items()})
    return t_bn.eval(), g_bn.eval()


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval_matches_pytorch_and_the_unfused_pair(transpose, bias):
    torch.manual_seed(0)
    if transpose:
        t_conv, g_conv = torch.nn.ConvTranspose2d(3, 4, 3, bias=bias), nn.ConvTranspose2d(3, 4, 3, bias=bias)
    else:
        t_conv, g_conv = torch.nn.Conv2d(3, 4, 3, bias=bias), nn.Conv2d(3, 4, 3, bias=bias)
    g_conv.load_state_dict({k: v.numpy().copy() for k, v in t_conv.state_dict().items()})
    t_bn, g_bn = _eval_bn(torch.nn.BatchNorm2d, nn.BatchNorm2d, 4, 1)
    t_conv.eval()
    g_conv.eval()
    t_fused = torch.nn.utils.fuse_conv_bn_eval(t_conv, t_bn, transpose=transpose)
    g_fused = nn.utils.fuse_conv_bn_eval(g_conv, g_bn, transpose=transpose)
    assert type(g_fused) is type(g_conv) and g_fused is not g_conv
    assert isinstance(g_fused.weight, nn.Parameter) and g_fused.weight.requires_grad
    _close(g_fused.weight, t_fused.weight)
    _close(g_fused.bias, t_fused.bias)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    _close(g_fused(tg.tensor(x)), g_bn(g_conv(tg.tensor(x))), rtol=1e-5, atol=1e-5)
    if not bias:
        assert g_conv.bias is None  # the original is untouched
    with pytest.raises(AssertionError, match="eval"):
        nn.utils.fuse_conv_bn_eval(g_conv.train(), g_bn)


def test_fuse_linear_bn_eval_matches_pytorch():
    torch.manual_seed(0)
    t_lin, g_lin = torch.nn.Linear(3, 4), nn.Linear(3, 4)
    g_lin.load_state_dict({k: v.numpy().copy() for k, v in t_lin.state_dict().items()})
    t_bn, g_bn = _eval_bn(torch.nn.BatchNorm1d, nn.BatchNorm1d, 4, 2)
    t_fused = torch.nn.utils.fuse_linear_bn_eval(t_lin.eval(), t_bn)
    g_fused = nn.utils.fuse_linear_bn_eval(g_lin.eval(), g_bn)
    _close(g_fused.weight, t_fused.weight)
    _close(g_fused.bias, t_fused.bias)
    x = tg.tensor(np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32))
    _close(g_fused(x), g_bn(g_lin(x)), rtol=1e-5, atol=1e-5)
    _, g_bn5 = _eval_bn(torch.nn.BatchNorm1d, nn.BatchNorm1d, 5, 2)
    with pytest.raises(AssertionError, match="out_features"):
        nn.utils.fuse_linear_bn_eval(g_lin, g_bn5)


def test_fuse_weights_dtypes_and_missing_pieces_as_pytorch():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 2, 3)).astype(np.float32)
    rm, rv = rng.standard_normal(4), rng.uniform(0.5, 2, 4)  # float64 statistics
    t_w, t_b = torch.nn.utils.fuse_conv_bn_weights(torch.tensor(w), None, torch.tensor(rm), torch.tensor(rv),
                                                    1e-3, None, None)
    g_w, g_b = nn.utils.fuse_conv_bn_weights(tg.tensor(w), None, tg.tensor(rm), tg.tensor(rv), 1e-3, None,
                                             None)
    _close(g_w, t_w)  # float32, the weight's dtype
    _close(g_b, t_b)  # float32 too: a missing bias takes the weight's dtype
    assert g_b.requires_grad == t_b.requires_grad and g_w.requires_grad == t_w.requires_grad
    lw = rng.standard_normal((4, 3))
    bw, bb = rng.standard_normal(4), rng.standard_normal(4)
    t_lw, t_lb = torch.nn.utils.fuse_linear_bn_weights(torch.tensor(lw, requires_grad=True), None,
                                                       torch.tensor(rm), torch.tensor(rv), 1e-5,
                                                       torch.tensor(bw), torch.tensor(bb))
    g_lw, g_lb = nn.utils.fuse_linear_bn_weights(tg.tensor(lw, requires_grad=True), None, tg.tensor(rm),
                                                 tg.tensor(rv), 1e-5, tg.tensor(bw), tg.tensor(bb))
    _close(g_lw, t_lw, rtol=1e-12)
    _close(g_lb, t_lb, rtol=1e-12)
    assert (g_lw.requires_grad, g_lb.requires_grad) == (t_lw.requires_grad, t_lb.requires_grad)
    assert (g_lw.requires_grad, g_lb.requires_grad) == (True, False)
    assert g_lw.is_leaf and g_lb.is_leaf
    for ours, theirs in (("fuse_conv_bn_eval", "fuse_conv_bn_eval"), ("fuse_conv_bn_weights", None),
                         ("fuse_linear_bn_weights", None), ("fuse_linear_bn_eval", None)):
        _same_signature(getattr(nn.utils, ours), getattr(torch.nn.utils, theirs or ours))


FUSIONS = [
    ("fuse_conv_bn_weights", [(4, 2, 3), (4,), (4,), (4,), (4,), (4,)],
     lambda m, w, b, rm, rv, bw, bb: m.nn.utils.fuse_conv_bn_weights(w, b, rm, rv.abs() + 0.5, 1e-5, bw, bb)),
    ("fuse_conv_bn_weights transposed", [(2, 4, 3), (4,), (4,), (4,), (4,), (4,)],
     lambda m, w, b, rm, rv, bw, bb: m.nn.utils.fuse_conv_bn_weights(w, b, rm, rv.abs() + 0.5, 1e-5, bw, bb,
                                                                     transpose=True)),
    ("fuse_linear_bn_weights", [(4, 3), (4,), (4,), (4,), (4,), (4,)],
     lambda m, w, b, rm, rv, bw, bb: m.nn.utils.fuse_linear_bn_weights(w, b, rm, rv.abs() + 0.5, 1e-5, bw,
                                                                       bb)),
]


@pytest.mark.parametrize("name, shapes, fn", FUSIONS, ids=[f[0] for f in FUSIONS])
def test_fusions_keep_foreign_arrays(name, shapes, fn):
    rng = np.random.default_rng(len(name))
    runs = run_twice(fn, [rng.standard_normal(s) for s in shapes])
    check_same(runs)
    assert all(out.is_leaf and out.requires_grad for out in runs[1][0])


def test_skip_init_builds_without_touching_the_generator():
    _same_signature(nn.utils.skip_init, torch.nn.utils.skip_init)
    tg.manual_seed(0)
    before = tg.rand(3)
    tg.manual_seed(0)
    layer = nn.utils.skip_init(nn.Linear, 5, out_features=2, bias=False)
    np.testing.assert_array_equal(tg.rand(3).data, before.data)  # no random numbers were drawn
    assert type(layer) is nn.Linear and layer.weight.shape == (2, 5) and layer.bias is None
    assert layer.weight.dtype == np.float32 and layer.weight.requires_grad
    double = nn.utils.skip_init(nn.Conv1d, 2, 3, 3, dtype=tg.float64, device="cpu")
    assert double.weight.shape == (3, 2, 3) and double.weight.dtype == np.float64
    with pytest.raises(RuntimeError, match="device"):
        nn.utils.skip_init(nn.ReLU)
    with pytest.raises(RuntimeError, match="Module"):
        nn.utils.skip_init(int)


def test_stateless_functional_call_is_func_functional_call_with_a_warning():
    _same_signature(nn.utils.stateless.functional_call, torch.nn.utils.stateless.functional_call)
    torch.manual_seed(0)
    t_lin = torch.nn.Linear(3, 2)
    g_lin = nn.Linear(3, 2)
    g_lin.load_state_dict({k: v.numpy().copy() for k, v in t_lin.state_dict().items()})
    w = np.random.default_rng(0).standard_normal((2, 3))
    x = np.random.default_rng(1).standard_normal((4, 3))
    t_w, g_w = torch.tensor(w, requires_grad=True), tg.tensor(w, requires_grad=True)
    with pytest.warns(FutureWarning, match="func.functional_call"):
        g_out = nn.utils.stateless.functional_call(g_lin, {"weight": g_w, "bias": g_lin.bias.double()},
                                                   (tg.tensor(x),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        t_out = torch.nn.utils.stateless.functional_call(t_lin, {"weight": t_w, "bias": t_lin.bias.double()},
                                                         (torch.tensor(x),))
    _close(g_out, t_out, rtol=1e-12)
    (g_out**2).sum().backward()
    (t_out**2).sum().backward()
    _close(g_w.grad, t_w.grad, rtol=1e-12)
    assert g_lin.weight.dtype == np.float32  # the module's own weight is back
    with pytest.warns(FutureWarning):
        assert tg.gradcheck(lambda v: nn.utils.stateless.functional_call(
            g_lin, {"weight": v, "bias": g_lin.bias.double()}, tg.tensor(x)).sum(), [g_w])
