"""Optimizers and learning-rate schedules side by side with PyTorch: the same gradients give the
same parameters, state (PyTorch's keys, dtypes and values) and option groups; the same schedule
gives the same learning rates. Parameters of every rank, 0-d included."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (4,), ()]  # a 0-d parameter: numpy's ops on it give scalars, not arrays

OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    ("SGD", {"lr_t": 0.1, "momentum": 0.9}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "maximize": True, "weight_decay": 0.1}),
    ("Adam", {"lr_t": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.3}),
    ("Adamax", {"lr_t": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr_t": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.5, "weight_decay": 0.1}),
    ("Adadelta", {"lr_t": 1.0, "rho": 0.5, "maximize": True}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-3, "alpha": 0.5, "t0": 5, "weight_decay": 0.1}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 1), "maximize": True}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (None, 1e-3), "weight_decay": 0.1}),
    ("Adafactor", {"lr_t": 0.05, "maximize": True}),  # a float32 Tensor lr: alpha rounds in float32
]


def _optimizer(lib, name, options, params):
    options = dict(options)
    if "lr_t" in options:
        options["lr"] = lib.tensor(options.pop("lr_t"))
    return getattr(lib.optim, name)(params, **options)


def _numpy(value):
    return value.numpy() if isinstance(value, torch.Tensor) else np.asarray(value.data)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("name", "options"), OPTIMIZERS)
def test_optimizer_matches_torch(name, options, dtype):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    ours = [tg.tensor(a, requires_grad=True) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    opt, ref = _optimizer(tg, name, options, ours), _optimizer(torch, name, options, theirs)
    for step in range(20):
        for i, s in enumerate(SHAPES):
            grad = rng.standard_normal(s).astype(dtype)
            skip = i == 1 and step % 3 == 0  # a parameter without a gradient is left alone
            ours[i].grad = None if skip else grad
            theirs[i].grad = None if skip else torch.tensor(grad)
        opt.step()
        ref.step()
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for mine, want in zip(ours, theirs, strict=True):
        assert mine.data.dtype == dtype and mine.data.shape == tuple(want.shape)
        np.testing.assert_allclose(mine.data, want.detach().numpy(), rtol=tol, atol=tol)
    got, expected = opt.state_dict(), ref.state_dict()
    assert sorted(got["state"]) == sorted(expected["state"])
    for index, buffers in expected["state"].items():
        assert list(got["state"][index]) == list(buffers)
        for key, value in buffers.items():
            mine = _numpy(got["state"][index][key])
            assert str(mine.dtype) == str(value.dtype).removeprefix("torch.")
            assert mine.shape == tuple(value.shape)
            np.testing.assert_allclose(mine, value.numpy(), rtol=tol, atol=tol)
    for mine, want in zip(got["param_groups"], expected["param_groups"], strict=True):
        assert list(mine) == list(want)
        assert {k: v for k, v in mine.items() if k != "lr"} == {k: v for k, v in want.items() if k != "lr"}


def _to_numpy(value):
    """A PyTorch state dict with every tensor as a numpy array."""
    if isinstance(value, torch.Tensor):
        return value.numpy().copy()
    if isinstance(value, dict):
        return {k: _to_numpy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_to_numpy(v) for v in value)
    return value


@pytest.mark.parametrize(("name", "options"), [("Adam", {"amsgrad": True}), ("NAdam", {}), ("Adagrad", {}),
                                                ("RMSprop", {"centered": True}), ("Rprop", {}),
                                                ("SGD", {"lr": 0.1, "momentum": 0.9})])
def test_resume_from_torch_state_dict(name, options):
    """A state saved by PyTorch, as numpy, resumes where PyTorch goes on (0-d parameter too)."""
    rng = np.random.default_rng(1)
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(12)]
    theirs = [torch.tensor(rng.standard_normal(s), requires_grad=True) for s in SHAPES]
    ref = getattr(torch.optim, name)(theirs, **options)
    for step, grad in enumerate(grads):
        if step == 6:
            ours = [tg.tensor(p.detach().numpy().copy(), requires_grad=True) for p in theirs]
            opt = getattr(tg.optim, name)(ours, **options)
            opt.load_state_dict(_to_numpy(ref.state_dict()))
        for i, g in enumerate(grad):
            theirs[i].grad = torch.tensor(g)
            if step >= 6:
                ours[i].grad = g.copy()
        ref.step()
        if step >= 6:
            opt.step()
    for mine, want in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine.data, want.detach().numpy(), rtol=1e-13, atol=1e-15)


def _schedule(lib, build, steps=60, metrics=None):
    params = [lib.zeros(2, requires_grad=True) for _ in range(2)]
    opt = lib.optim.SGD([{"params": [params[0]], "lr": 0.1}, {"params": [params[1]], "lr": 0.05}],
                        momentum=0.9)
    sched = build(lib.optim.lr_scheduler, opt)
    rows = []
    for i in range(steps):
        opt.step()
        sched.step(*([metrics[i]] if metrics is not None else []))
        rows.append([g["lr"] for g in opt.param_groups] + [g["momentum"] for g in opt.param_groups]
                    + [float(lr) for lr in sched.get_last_lr()])
    return np.array(rows), sched.state_dict()


SCHEDULES = {
    "step": lambda S, o: S.StepLR(o, 3, gamma=0.3),
    "multistep": lambda S, o: S.MultiStepLR(o, milestones=[30, 5, 10, 10], gamma=0.5),
    "cosine": lambda S, o: S.CosineAnnealingLR(o, T_max=17, eta_min=0.01),
    "warm_restarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=1e-3),
    "lambda": lambda S, o: S.LambdaLR(o, [lambda e: 0.9**e, lambda e: e % 3 + 1]),
    "multiplicative": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "linear": lambda S, o: S.LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=13),
    "polynomial": lambda S, o: S.PolynomialLR(o, total_iters=13, power=0.5),
    "one_cycle": lambda S, o: S.OneCycleLR(o, max_lr=[0.1, 0.2], epochs=6, steps_per_epoch=10,
                                           anneal_strategy="linear"),
    "one_cycle_3": lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=60, three_phase=True, pct_start=0.2),
    "cyclic": lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=5, step_size_down=3,
                                      mode="triangular2"),
    "cyclic_exp": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="exp_range", gamma=0.97),
    "sequential": lambda S, o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                                                  S.ExponentialLR(o, 0.9), S.StepLR(o, 7, 0.5)],
                                              milestones=[5, 20]),
    "chained": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=4),
                                                S.ExponentialLR(o, 0.95), S.CosineAnnealingLR(o, 13)]),
}


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
def test_schedule_matches_torch(kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, got_state = _schedule(tg, SCHEDULES[kind])
        want, want_state = _schedule(torch, SCHEDULES[kind])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert set(got_state) == set(want_state)
    assert got_state.get("last_epoch") == want_state.get("last_epoch")


def test_reduce_on_plateau_matches_torch():
    rng = np.random.default_rng(0)
    metrics = list(np.concatenate([np.linspace(1, 0.5, 10), np.full(30, 0.5), np.linspace(0.5, 0.49, 20)])
                   + rng.standard_normal(60) * 1e-4)

    def build(S, o):
        return S.ReduceLROnPlateau(o, patience=3, factor=0.5, threshold=1e-3, threshold_mode="abs",
                                   cooldown=2, min_lr=[0.01, 0.02], eps=1e-3)

    got, _ = _schedule(tg, build, metrics=metrics)
    want, _ = _schedule(torch, build, metrics=metrics)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
