"""`tensorgrad.optim.lr_scheduler`: every schedule gives PyTorch's learning rates (and OneCycle's
momenta) over 30 steps, resumes from its state dict, and refuses bad arguments clearly."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.optim import lr_scheduler

STEPS = 30


def make_optimizer(lib, name="SGD", **kwargs):
    """Two parameter groups with different rates, so per-group schedules are checked too."""
    a = lib.tensor(np.ones(2), requires_grad=True)
    b = lib.tensor(np.ones(3), requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    defaults = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": dict(lr=0.1)}[name]
    return getattr(lib.optim, name)(groups, **{**defaults, **kwargs})


def trace(lib, scheduler_name, kwargs, optimizer="SGD", metrics=None):
    """The rates (and momenta) the schedule sets at its start and after each of 30 steps."""
    opt = make_optimizer(lib, optimizer)
    scheduler = getattr(lib.optim.lr_scheduler, scheduler_name)(opt, **kwargs)
    seen = []
    for step in range(STEPS):
        momenta = [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]
        seen.append((list(scheduler.get_last_lr()), [g["lr"] for g in opt.param_groups], momenta,
                     scheduler.last_epoch))
        opt.step()  # no gradients: nothing moves, but the order is the one PyTorch asks for
        if metrics is None:
            scheduler.step()
        else:
            scheduler.step(metrics[step])
    return seen


PLATEAU_METRICS = [1.0, 0.9, 0.9, 0.95, 0.9, 0.89999, 0.85, 0.86, 0.87, 0.88, 0.88, 0.88, 0.7, 0.7,
                   0.71, 0.72, 0.73, 0.74, 0.75, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
SETTINGS = [
    ("StepLR", dict(step_size=7), "SGD"),
    ("StepLR", dict(step_size=3, gamma=0.5), "SGD"),
    ("MultiStepLR", dict(milestones=[3, 10, 10, 25]), "SGD"),
    ("MultiStepLR", dict(milestones=[20, 5], gamma=0.3), "SGD"),
    ("ExponentialLR", dict(gamma=0.9), "SGD"),
    ("ExponentialLR", dict(gamma=1.05), "Adam"),
    ("CosineAnnealingLR", dict(T_max=10), "SGD"),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01), "SGD"),
    ("CosineAnnealingLR", dict(T_max=30, eta_min=0.001), "Adam"),
    ("CosineAnnealingLR", dict(T_max=7.5), "SGD"),
    ("LambdaLR", dict(lr_lambda=lambda epoch: 0.95**epoch), "SGD"),
    ("LambdaLR", dict(lr_lambda=[lambda epoch: 1 / (epoch + 1), lambda epoch: math.cos(epoch / 10)]), "SGD"),
    ("LinearLR", dict(), "SGD"),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.9, total_iters=12), "SGD"),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.0, total_iters=30), "Adam"),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=30), "SGD"),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], total_steps=31, anneal_strategy="linear"), "SGD"),
    ("OneCycleLR", dict(max_lr=0.3, epochs=3, steps_per_epoch=10, pct_start=0.4, base_momentum=0.8,
                        max_momentum=0.9, div_factor=10.0, final_div_factor=100.0), "Adam"),
    ("OneCycleLR", dict(max_lr=0.3, total_steps=30, anneal_strategy="linear", three_phase=True), "Adam"),
    ("OneCycleLR", dict(max_lr=0.3, total_steps=30, cycle_momentum=False), "SGD"),
    ("ReduceLROnPlateau", dict(patience=2), "SGD"),
    ("ReduceLROnPlateau", dict(mode="max", factor=0.5, patience=1, threshold=0.01, threshold_mode="abs",
                               cooldown=2, min_lr=[0.01, 0.02]), "SGD"),
    ("ReduceLROnPlateau", dict(factor=0.5, patience=0, cooldown=1, min_lr=0.004), "Adam"),
]


def _readable(value):
    """A setting's value as its id shows it: a function by its name, not by its address (which
    differs from process to process, so that pytest-xdist's workers would not agree)."""
    if isinstance(value, list):
        return [_readable(v) for v in value]
    return value.__name__ if callable(value) else value


IDS = [f"{name}-{ {k: _readable(v) for k, v in kwargs.items()} }-{opt}" for name, kwargs, opt in SETTINGS]


@pytest.mark.parametrize(("name", "kwargs", "optimizer"), SETTINGS, ids=IDS)
def test_schedule_equals_pytorchs_over_30_steps(name, kwargs, optimizer):
    torch = pytest.importorskip("torch")
    metrics = PLATEAU_METRICS if name == "ReduceLROnPlateau" else None
    ours = trace(tg, name, kwargs, optimizer, metrics)
    theirs = trace(torch, name, kwargs, optimizer, metrics)
    assert ours == theirs  # rates, momenta and last_epoch: the same floats, step by step
    assert len({tuple(lrs) for lrs, *_ in ours}) > 1  # the schedule did change the rate


def test_step_lr_by_hand():
    opt = make_optimizer(tg)
    scheduler = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    assert scheduler.last_epoch == 0 and scheduler.base_lrs == [0.1, 0.05]
    rates = []
    for _ in range(5):
        rates.append(scheduler.get_last_lr()[0])
        scheduler.step()
    assert rates == [0.1, 0.1, 0.05, 0.05, 0.025]
    assert opt.param_groups[1]["initial_lr"] == 0.05


def test_one_cycle_warms_up_then_anneals_far_below_the_start():
    opt = make_optimizer(tg)
    scheduler = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=100)
    rates = []
    for _ in range(100):
        rates.append(scheduler.get_last_lr()[0])
        scheduler.step()
    assert rates[0] == pytest.approx(1.0 / 25)
    assert max(rates) == pytest.approx(1.0) and int(np.argmax(rates)) == 29
    assert rates[-1] == pytest.approx(1.0 / 25 / 1e4)
    with pytest.raises(ValueError, match="tried to step 101 times"):
        scheduler.step()


EPOCH_SETTINGS = [s for s in SETTINGS if s[0] != "ReduceLROnPlateau"]


@pytest.mark.parametrize(("name", "kwargs", "optimizer"), EPOCH_SETTINGS,
                         ids=[i for s, i in zip(SETTINGS, IDS) if s[0] != "ReduceLROnPlateau"])
def test_a_schedule_resumes_from_its_state_dict(name, kwargs, optimizer):
    straight = trace(tg, name, kwargs, optimizer)

    opt = make_optimizer(tg, optimizer)
    scheduler = getattr(lr_scheduler, name)(opt, **kwargs)
    for _ in range(12):
        opt.step()
        scheduler.step()
    saved_optimizer, saved_scheduler = opt.state_dict(), scheduler.state_dict()

    # PyTorch's order: build both, then load the scheduler, then the optimizer (whose saved
    # groups carry lr, initial_lr and momenta, undoing what building the scheduler set).
    resumed_opt = make_optimizer(tg, optimizer)
    resumed = getattr(lr_scheduler, name)(resumed_opt, **kwargs)
    resumed.load_state_dict(saved_scheduler)
    resumed_opt.load_state_dict(saved_optimizer)
    assert resumed.last_epoch == 12 and resumed.get_last_lr() == straight[12][0]
    for step in range(12, STEPS):
        assert [g["lr"] for g in resumed_opt.param_groups] == straight[step][1]
        resumed_opt.step()
        resumed.step()


def test_reduce_on_plateau_resumes_from_its_state_dict():
    straight = trace(tg, "ReduceLROnPlateau", dict(patience=1), metrics=PLATEAU_METRICS)
    opt = make_optimizer(tg)
    scheduler = lr_scheduler.ReduceLROnPlateau(opt, patience=1)
    for step in range(10):
        scheduler.step(PLATEAU_METRICS[step])
    resumed_opt = make_optimizer(tg)
    resumed_opt.load_state_dict(opt.state_dict())
    resumed = lr_scheduler.ReduceLROnPlateau(resumed_opt, patience=5)
    resumed.load_state_dict(scheduler.state_dict())  # patience too
    for step in range(10, STEPS):
        assert resumed.get_last_lr() == straight[step][0]
        resumed.step(tg.tensor(PLATEAU_METRICS[step]))  # a 0-d tensor works as the metric


def test_lambda_state_dict_keeps_callable_objects_state_not_functions():
    class Warmup:
        def __init__(self):
            self.length = 3

        def __call__(self, epoch):
            return min(1.0, (epoch + 1) / self.length)

    fn = Warmup()
    scheduler = lr_scheduler.LambdaLR(make_optimizer(tg), [fn, lambda epoch: 1.0])
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"length": 3}, None]
    fn.length = 10
    scheduler.load_state_dict(state)
    assert fn.length == 3


P = lambda: make_optimizer(tg)  # noqa: E731


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: lr_scheduler.StepLR([1], step_size=2), TypeError, "list is not an Optimizer"),
    (lambda: lr_scheduler.StepLR(P(), step_size=2.5), TypeError, "step_size must be an int, got float"),
    (lambda: lr_scheduler.StepLR(P(), step_size=0), ValueError, "step_size must be >= 1"),
    (lambda: lr_scheduler.StepLR(P(), step_size=2, last_epoch=3), KeyError, "initial_lr"),
    (lambda: lr_scheduler.MultiStepLR(P(), milestones=[2.5]), TypeError, "milestone"),
    (lambda: lr_scheduler.CosineAnnealingLR(P(), T_max=0), ValueError, "T_max"),
    (lambda: lr_scheduler.LambdaLR(P(), [lambda e: 1.0]), ValueError, "expected 2 lr_lambdas"),
    (lambda: lr_scheduler.LambdaLR(P(), 0.5), TypeError, "callable"),
    (lambda: lr_scheduler.LinearLR(P(), start_factor=0), ValueError, "start_factor"),
    (lambda: lr_scheduler.LinearLR(P(), end_factor=1.5), ValueError, "end_factor"),
    (lambda: lr_scheduler.OneCycleLR(P(), max_lr=0.1), ValueError, "total_steps or"),
    (lambda: lr_scheduler.OneCycleLR(P(), max_lr=0.1, total_steps=0), ValueError, "total_steps"),
    (lambda: lr_scheduler.OneCycleLR(P(), max_lr=[0.1], total_steps=5), ValueError, "same length"),
    (lambda: lr_scheduler.OneCycleLR(P(), max_lr=0.1, total_steps=5, anneal_strategy="exp"), ValueError,
     "anneal_strategy"),
    (lambda: lr_scheduler.OneCycleLR(P(), max_lr=0.1, total_steps=5, pct_start=1.5), ValueError, "pct_start"),
    (lambda: lr_scheduler.OneCycleLR(tg.optim.Adagrad([tg.ones(1, requires_grad=True)]), max_lr=0.1,
                                     total_steps=5), ValueError, "momentum or beta1"),
    (lambda: lr_scheduler.ReduceLROnPlateau(P(), factor=1.0), ValueError, "factor"),
    (lambda: lr_scheduler.ReduceLROnPlateau(P(), mode="low"), ValueError, "mode"),
    (lambda: lr_scheduler.ReduceLROnPlateau(P(), min_lr=[0.1]), ValueError, "min_lr"),
    (lambda: lr_scheduler.ReduceLROnPlateau(P(), patience=1.5), TypeError, "patience"),
])
def test_bad_arguments_are_clear_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()
