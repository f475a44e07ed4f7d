"""`tensorgrad.optim.lr_scheduler`'s ConstantLR, MultiplicativeLR, PolynomialLR,
CosineAnnealingWarmRestarts, CyclicLR, SequentialLR and ChainedScheduler: PyTorch's rates (and
CyclicLR's momenta) over 40 steps, its state-dict layout, resuming from a state dict, and its
exception types for bad arguments."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.optim import lr_scheduler

STEPS = 40


def make_optimizer(lib, name="SGD"):
    """Two parameter groups with different rates, so per-group schedules are checked too."""
    a = lib.tensor(np.ones(2), requires_grad=True)
    b = lib.tensor(np.ones(3), requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    defaults = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": dict(lr=0.1)}[name]
    return getattr(lib.optim, name)(groups, **defaults)


def momenta(opt):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def trace(lib, build, optimizer="SGD", steps=STEPS):
    """The rates and momenta the schedule sets at its start and after each step."""
    opt = make_optimizer(lib, optimizer)
    scheduler = build(lib.optim.lr_scheduler, opt)
    seen = []
    for _ in range(steps):
        seen.append((list(scheduler.get_last_lr()), [g["lr"] for g in opt.param_groups], momenta(opt),
                     getattr(scheduler, "last_epoch", None)))
        opt.step()  # no gradients: nothing moves, but the order is the one PyTorch asks for
        scheduler.step()
    return seen


def assert_traces_equal(ours, theirs):
    assert len(ours) == len(theirs)
    for step, ((our_last, our_lrs, our_momenta, our_epoch), (last, lrs, moms, epoch)) in enumerate(
            zip(ours, theirs)):
        assert our_epoch == epoch, step
        for a, b in ((our_last, last), (our_lrs, lrs), (our_momenta, moms)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=f"step {step}")


class Decay:
    """A callable object: its attributes are state, saved in the state dict."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, epoch):
        return self.rate ** (epoch % 4)


SETTINGS = {
    "ConstantLR-default": (lambda S, o: S.ConstantLR(o), "SGD"),
    "ConstantLR-half-10": (lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=10), "SGD"),
    "ConstantLR-0-iters": (lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=0), "Adam"),  # never undone
    "MultiplicativeLR": (lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95), "SGD"),
    "MultiplicativeLR-list": (lambda S, o: S.MultiplicativeLR(
        o, [lambda e: 0.8 if e % 5 == 0 else 1.0, Decay(0.97)]), "SGD"),
    "PolynomialLR-default": (lambda S, o: S.PolynomialLR(o), "SGD"),
    "PolynomialLR-30-squared": (lambda S, o: S.PolynomialLR(o, total_iters=30, power=2.0), "SGD"),
    "PolynomialLR-25-sqrt": (lambda S, o: S.PolynomialLR(o, total_iters=25, power=0.5), "Adam"),
    "WarmRestarts-10": (lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=10), "SGD"),
    "WarmRestarts-3-x2": (lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
                          "SGD"),
    "WarmRestarts-2-x3": (lambda S, o: S.CosineAnnealingWarmRestarts(o, 2, 3, 0.001), "Adam"),
    "CyclicLR-triangular": (lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5), "SGD"),
    "CyclicLR-triangular2": (lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3],
                                                     step_size_up=4, step_size_down=6, mode="triangular2"),
                             "SGD"),
    "CyclicLR-exp_range": (lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.97,
                                                   base_momentum=0.7, max_momentum=0.95), "SGD"),
    "CyclicLR-scale_fn-iterations": (lambda S, o: S.CyclicLR(
        o, 0.001, 0.01, step_size_up=7, step_size_down=2, scale_fn=lambda x: 1 / (1 + x / 10),
        scale_mode="iterations"), "SGD"),
    "CyclicLR-scale_fn-cycle": (lambda S, o: S.CyclicLR(o, 0.001, 0.01, step_size_up=3, scale_fn=Decay(0.5),
                                                        mode="anything"), "SGD"),
    "CyclicLR-no-momentum": (lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=5, cycle_momentum=False),
                             "SGD"),
    "CyclicLR-Adam-beta1": (lambda S, o: S.CyclicLR(o, 0.001, 0.006, step_size_up=4, base_momentum=0.8,
                                                    max_momentum=0.95), "Adam"),
    "SequentialLR-constant-exponential": (lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.1, total_iters=5), S.ExponentialLR(o, gamma=0.9)], milestones=[5]),
        "SGD"),
    "SequentialLR-linear-cosine": (lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=8), S.CosineAnnealingLR(o, T_max=20)], [10]), "SGD"),
    "SequentialLR-three": (lambda S, o: S.SequentialLR(
        o, [S.StepLR(o, step_size=3, gamma=0.5), S.MultiStepLR(o, [2, 4, 4]), S.PolynomialLR(o, 10, 2.0)],
        [8, 20]), "Adam"),
    "SequentialLR-exponential-multiplicative": (lambda S, o: S.SequentialLR(
        o, [S.ExponentialLR(o, 0.8), S.MultiplicativeLR(o, lambda e: 0.9)], [6]), "SGD"),
    "SequentialLR-constant-restarts": (lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, 0.5, 3), S.CosineAnnealingWarmRestarts(o, T_0=6, T_mult=2)], [4]), "SGD"),
    "ChainedScheduler-constant-exponential": (lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.1, total_iters=20), S.ExponentialLR(o, gamma=0.9)]), "SGD"),
    "ChainedScheduler-step-linear": (lambda S, o: S.ChainedScheduler(
        [S.StepLR(o, 3, 0.5), S.LinearLR(o, 0.2, 1.0, 12)], optimizer=o), "Adam"),
    "ChainedScheduler-cosine-polynomial": (lambda S, o: S.ChainedScheduler(
        [S.CosineAnnealingLR(o, T_max=9, eta_min=0.001), S.PolynomialLR(o, total_iters=35)]), "SGD"),
}
IDS = list(SETTINGS)


@pytest.mark.parametrize("key", IDS)
def test_schedule_equals_pytorchs_over_40_steps(key):
    torch = pytest.importorskip("torch")
    build, optimizer = SETTINGS[key]
    ours = trace(tg, build, optimizer)
    assert_traces_equal(ours, trace(torch, build, optimizer))
    assert len({tuple(lrs) for lrs, *_ in ours} | {(0.1, 0.05)}) > 1  # the schedule did change the rate
    if key.startswith("CyclicLR") and "no-momentum" not in key:
        assert len({tuple(m) for _, _, m, _ in ours}) > 1  # and the momentum


def plain(value):
    """The values a state dict holds, in comparable form (a callable's attributes, numbers...)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if k != "_get_lr_called_within_step"}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "most_common"):  # MultiStepLR's Counter
        return dict(value)
    return value


@pytest.mark.parametrize("key", IDS)
def test_state_dict_has_pytorchs_layout_and_values(key):
    torch = pytest.importorskip("torch")
    build, optimizer = SETTINGS[key]
    states = []
    for lib in (tg, torch):
        opt = make_optimizer(lib, optimizer)
        scheduler = build(lib.optim.lr_scheduler, opt)
        for _ in range(13):
            opt.step()
            scheduler.step()
        states.append(plain(scheduler.state_dict()))
    ours, theirs = states
    # PyTorch's only extra entry is `_get_lr_called_within_step`, the flag of a warning it gives.
    assert ours == theirs


@pytest.mark.parametrize("key", IDS)
def test_a_schedule_resumes_from_its_state_dict(key):
    build, optimizer = SETTINGS[key]
    straight = trace(tg, build, optimizer)

    opt = make_optimizer(tg, optimizer)
    scheduler = build(lr_scheduler, opt)
    for _ in range(15):
        opt.step()
        scheduler.step()
    saved_optimizer, saved_scheduler = opt.state_dict(), scheduler.state_dict()

    # PyTorch's order: build both, then load the scheduler, then the optimizer (whose saved
    # groups carry lr, initial_lr and momenta, undoing what building the scheduler set).
    resumed_opt = make_optimizer(tg, optimizer)
    resumed = build(lr_scheduler, resumed_opt)
    resumed.load_state_dict(saved_scheduler)
    resumed_opt.load_state_dict(saved_optimizer)
    assert resumed.get_last_lr() == straight[15][0]
    for step in range(15, STEPS):
        assert [g["lr"] for g in resumed_opt.param_groups] == straight[step][1]
        assert momenta(resumed_opt) == straight[step][2]
        resumed_opt.step()
        resumed.step()


def test_load_state_dict_leaves_the_given_dict_alone_and_keeps_callable_objects_state():
    fn = Decay(0.5)
    scheduler = lr_scheduler.CyclicLR(make_optimizer(tg), 0.01, 0.1, scale_fn=fn)
    state = scheduler.state_dict()
    assert state["_scale_fn_custom"] == {"rate": 0.5}
    assert lr_scheduler.CyclicLR(make_optimizer(tg), 0.01, 0.1, scale_fn=lambda x: 1.0
                                 ).state_dict()["_scale_fn_custom"] is None  # a function is code
    fn.rate = 0.9
    scheduler.load_state_dict(state)
    assert fn.rate == 0.5 and "_scale_fn_custom" in state

    opt = make_optimizer(tg)
    multiplicative = lr_scheduler.MultiplicativeLR(opt, [Decay(0.9), lambda e: 1.0])
    saved = multiplicative.state_dict()
    assert saved["lr_lambdas"] == [{"rate": 0.9}, None]
    chained = lr_scheduler.ChainedScheduler([multiplicative, lr_scheduler.ConstantLR(opt)])
    saved = chained.state_dict()
    assert [type(s) for s in saved["_schedulers"]] == [dict, dict] and "optimizer" not in saved
    chained.load_state_dict(saved)
    assert "_schedulers" in saved


def test_warm_restarts_step_to_any_epoch_as_pytorch_does():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (tg, torch):
        opt = make_optimizer(lib)
        scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2, eta_min=0.001)
        rates = []
        for epoch in range(12):
            for batch in range(5):
                opt.step()
                scheduler.step(epoch + batch / 5)  # per batch, a fractional epoch
                rates.append((scheduler.get_last_lr(), scheduler.last_epoch, scheduler.T_cur, scheduler.T_i))
        scheduler.step(26)
        scheduler.step()  # on from 26, not from the count of steps
        rates.append((scheduler.get_last_lr(), scheduler.last_epoch, scheduler.T_cur, scheduler.T_i))
        seen.append(rates)
    ours, theirs = seen
    for (our_lrs, *our_rest), (lrs, *rest) in zip(ours, theirs):
        np.testing.assert_allclose(our_lrs, lrs, rtol=1e-12, atol=0)
        assert our_rest == pytest.approx(rest, rel=1e-12, abs=0)


def test_cyclic_lr_by_hand():
    opt = make_optimizer(tg)
    scheduler = lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2, step_size_down=2,
                                      base_momentum=0.8, max_momentum=0.9)
    rates, moms = [], []
    for _ in range(9):
        rates.append(scheduler.get_last_lr()[0])
        moms.append(opt.param_groups[0]["momentum"])
        scheduler.step()
    np.testing.assert_allclose(rates, [0.1, 0.3, 0.5, 0.3, 0.1, 0.3, 0.5, 0.3, 0.1], rtol=1e-14)
    np.testing.assert_allclose(moms, [0.9, 0.85, 0.8, 0.85, 0.9, 0.85, 0.8, 0.85, 0.9], rtol=1e-14)
    assert scheduler.base_lrs == [0.1, 0.1]


def test_sequential_lr_switches_at_its_milestone():
    opt = make_optimizer(tg)
    warmup = lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=100)
    decay = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    scheduler = lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[3])
    rates = []
    for _ in range(6):
        rates.append(scheduler.get_last_lr()[0])
        scheduler.step()
    np.testing.assert_allclose(rates, [0.01, 0.01, 0.01, 0.1, 0.05, 0.025], rtol=1e-14)
    assert scheduler.last_epoch == 6 and decay.last_epoch == 3  # epoch 0 at the milestone


P = lambda lib: make_optimizer(lib)  # noqa: E731

BAD_ARGUMENTS = {
    "ConstantLR-factor-high": lambda L, S: S.ConstantLR(P(L), factor=1.5),
    "ConstantLR-factor-negative": lambda L, S: S.ConstantLR(P(L), factor=-0.1),
    "MultiplicativeLR-count": lambda L, S: S.MultiplicativeLR(P(L), [lambda e: 1.0]),
    "MultiplicativeLR-not-callable": lambda L, S: S.MultiplicativeLR(P(L), 0.5),
    "WarmRestarts-T_0-zero": lambda L, S: S.CosineAnnealingWarmRestarts(P(L), T_0=0),
    "WarmRestarts-T_0-float": lambda L, S: S.CosineAnnealingWarmRestarts(P(L), T_0=2.5),
    "WarmRestarts-T_0-str": lambda L, S: S.CosineAnnealingWarmRestarts(P(L), T_0="3"),
    "WarmRestarts-T_mult-zero": lambda L, S: S.CosineAnnealingWarmRestarts(P(L), T_0=3, T_mult=0),
    "WarmRestarts-T_mult-float": lambda L, S: S.CosineAnnealingWarmRestarts(P(L), T_0=3, T_mult=1.5),
    "WarmRestarts-eta_min-str": lambda L, S: S.CosineAnnealingWarmRestarts(P(L), T_0=3, eta_min="0"),
    "WarmRestarts-negative-epoch": lambda L, S: S.CosineAnnealingWarmRestarts(P(L), T_0=3).step(-1),
    "CyclicLR-mode": lambda L, S: S.CyclicLR(P(L), 0.01, 0.1, mode="linear"),
    "CyclicLR-base_lr-count": lambda L, S: S.CyclicLR(P(L), [0.01], 0.1),
    "CyclicLR-max_lr-count": lambda L, S: S.CyclicLR(P(L), 0.01, [0.1, 0.2, 0.3]),
    "CyclicLR-momentum-count": lambda L, S: S.CyclicLR(P(L), 0.01, 0.1, base_momentum=[0.8]),
    "CyclicLR-no-momentum": lambda L, S: S.CyclicLR(L.optim.Adagrad([L.ones(1, requires_grad=True)]), 0.01,
                                                    0.1),
    "CyclicLR-not-an-optimizer": lambda L, S: S.CyclicLR([1], 0.01, 0.1),
    "SequentialLR-empty": lambda L, S: S.SequentialLR(P(L), [], []),
    "SequentialLR-milestones": lambda L, S: (lambda o: S.SequentialLR(
        o, [S.StepLR(o, 2), S.StepLR(o, 3)], []))(P(L)),
    "SequentialLR-other-optimizer": lambda L, S: (lambda o: S.SequentialLR(o, [S.StepLR(P(L), 2)], []))(P(L)),
    "SequentialLR-plateau": lambda L, S: (lambda o: S.SequentialLR(o, [S.ReduceLROnPlateau(o)], []))(P(L)),
    "SequentialLR-not-a-scheduler": lambda L, S: S.SequentialLR(P(L), [object()], []),
    "ChainedScheduler-empty": lambda L, S: S.ChainedScheduler([]),
    "ChainedScheduler-other-optimizer": lambda L, S: S.ChainedScheduler(
        [S.StepLR(P(L), 2), S.StepLR(P(L), 3)]),
    "ChainedScheduler-plateau": lambda L, S: (lambda o: S.ChainedScheduler(
        [S.StepLR(o, 2), S.ReduceLROnPlateau(o)]))(P(L)),
}


@pytest.mark.parametrize("key", list(BAD_ARGUMENTS))
def test_bad_arguments_raise_pytorchs_exception_type(key):
    torch = pytest.importorskip("torch")
    make = BAD_ARGUMENTS[key]
    with pytest.raises(Exception) as theirs:
        make(torch, torch.optim.lr_scheduler)
    with pytest.raises(Exception) as ours:
        make(tg, lr_scheduler)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    if "count" not in key:  # those name the argument whose length is wrong
        assert key.split("-")[0][:8] in str(ours.value)  # names the scheduler


NEW = ["ConstantLR", "MultiplicativeLR", "PolynomialLR", "CosineAnnealingWarmRestarts", "CyclicLR",
       "SequentialLR", "ChainedScheduler"]


def parameters(function):
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("name", NEW)
def test_signature_and_defaults_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    ours = getattr(lr_scheduler, name)
    theirs = getattr(torch.optim.lr_scheduler, name)
    for method in ("__init__", "step"):
        assert parameters(getattr(ours, method)) == parameters(getattr(theirs, method)), method


@pytest.mark.parametrize("key", ["PolynomialLR-30-squared", "ConstantLR-half-10", "CyclicLR-exp_range",
                                 "MultiplicativeLR"])
def test_the_deprecated_step_to_an_epoch_is_pytorchs_and_warns(key):
    torch = pytest.importorskip("torch")
    build, optimizer = SETTINGS[key]
    seen = []
    for lib in (tg, torch):
        opt = make_optimizer(lib, optimizer)
        scheduler = build(lib.optim.lr_scheduler, opt)
        rates = []
        for epoch in (3, 4, 12, 7, 25, 26):
            opt.step()
            with pytest.warns(UserWarning, match="deprecated"):
                scheduler.step(epoch)
            rates.append(scheduler.get_last_lr() + momenta(opt) + [scheduler.last_epoch])
            scheduler.step()
            rates.append(scheduler.get_last_lr() + momenta(opt) + [scheduler.last_epoch])
        seen.append(rates)
    np.testing.assert_allclose(seen[0], seen[1], rtol=1e-12, atol=0)


def test_the_new_schedulers_are_exported():
    for name in NEW:
        assert name in lr_scheduler.__all__
        assert issubclass(getattr(lr_scheduler, name), lr_scheduler.LRScheduler)
    assert math.isclose(lr_scheduler.ConstantLR(make_optimizer(tg)).get_last_lr()[0], 0.1 / 3)
