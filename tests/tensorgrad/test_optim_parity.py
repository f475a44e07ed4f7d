"""`tensorgrad.optim` against PyTorch 2.13 in what user code and checkpoints touch: constructor
signatures, the keys (in order) and default values of the parameter groups, the keys and kinds of
the per-parameter state, `lr` as a Tensor, PyTorch's implementation options (`foreach`, `fused`,
`differentiable`, `capturable`), state dicts loaded both ways, and the schedulers' state dicts."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import optim
from tensorgrad.optim import lr_scheduler

torch = pytest.importorskip("torch")

OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta", "Rprop",
              "ASGD"]
FUSED = ["SGD", "Adam", "AdamW", "Adagrad"]  # the ones PyTorch gives a `fused` option
SCHEDULERS = lr_scheduler.__all__

# Options that make each optimizer keep every state entry it can (build() adds a second group).
OPTIONS = {
    "SGD": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": dict(lr=0.01, amsgrad=True, weight_decay=0.1, betas=(0.8, 0.9)),
    "AdamW": dict(lr=0.01, amsgrad=True, maximize=True),
    "RMSprop": dict(lr=0.01, momentum=0.5, centered=True, alpha=0.9),
    "Adagrad": dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
    "Adamax": dict(lr=0.01, betas=[0.8, 0.9], weight_decay=0.1),
    "NAdam": dict(lr=0.01, momentum_decay=0.01, decoupled_weight_decay=True, weight_decay=0.1),
    "RAdam": dict(lr=0.01, betas=(0.8, 0.7), weight_decay=0.1),
    "Adadelta": dict(lr=0.5, rho=0.8),
    "Rprop": dict(lr=0.01, etas=[0.4, 1.5], step_sizes=(1e-4, 1.0)),
    "ASGD": dict(lr=0.01, lambd=0.01, t0=1),
}


# --- helpers -------------------------------------------------------------------------------------


def params(lib, values=None):
    values = values or [np.random.default_rng(0).standard_normal((2, 3)), np.linspace(-1, 1, 3)]
    return [lib.tensor(v, requires_grad=True) for v in values]


def build(lib, name, kwargs, ps):
    """Two groups, the second with its own rate (`lr`'s kind: a number or a 0-d Tensor)."""
    second = lib.tensor(0.05) if isinstance(kwargs.get("lr"), lib.Tensor) else 0.05
    return getattr(lib.optim, name)([{"params": ps[:1]}, {"params": ps[1:], "lr": second}], **kwargs)


def set_grads(lib, ps, step):
    rng = np.random.default_rng(100 + step)
    for p in ps:
        g = rng.standard_normal(tuple(p.shape))
        p.grad = torch.tensor(g) if lib is torch else g


def train(lib, opt, ps, steps, start=0):
    for step in range(start, start + steps):
        set_grads(lib, ps, step)
        opt.step()
    return [arr(p) for p in ps]


def arr(value):
    """A tensor of either library (or an array) as a numpy array."""
    if isinstance(value, torch.Tensor):
        return value.detach().numpy().copy()
    return np.array(value.data if isinstance(value, tg.Tensor) else value)


def convert(value, to):
    """A state dict with every tensor converted: `to` is "numpy" (what `.numpy()` gives), or
    "torch" (tensorgrad's tensors as PyTorch's)."""
    if isinstance(value, dict):
        return {k: convert(v, to) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(convert(v, to) for v in value)
    if isinstance(value, torch.Tensor) and to == "numpy":
        return value.numpy().copy()
    if isinstance(value, tg.Tensor) and to == "torch":
        return torch.from_numpy(np.array(value.data))
    return value


def kind(value):
    """What a state-dict entry is, comparable across the libraries: a tensor's dtype, shape and
    values, a number's type and value, a pair's type and kinds."""
    if isinstance(value, tg.Tensor | torch.Tensor):
        return ("tensor", str(value.dtype).removeprefix("torch."), tuple(value.shape), arr(value).tolist())
    if isinstance(value, list | tuple):
        return (type(value).__name__, [kind(v) for v in value])
    return (type(value).__name__, value)


@pytest.fixture
def float64_default():
    """Both libraries' default dtype set to float64 for the test, then put back."""
    if not hasattr(tg, "set_default_dtype"):
        pytest.skip("this tensorgrad has no set_default_dtype")
    ours, theirs = tg.get_default_dtype(), torch.get_default_dtype()
    tg.set_default_dtype(tg.float64)
    torch.set_default_dtype(torch.float64)
    yield
    tg.set_default_dtype(ours)
    torch.set_default_dtype(theirs)


# --- signatures ----------------------------------------------------------------------------------


def signature(obj):
    return [(p.name, p.kind, p.default) for p in inspect.signature(obj).parameters.values()]


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_signature_is_pytorchs(name):
    """Every name, its kind (positional or keyword-only) and its default, foreach & co included."""
    assert signature(getattr(optim, name)) == signature(getattr(torch.optim, name))


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_signature_is_pytorchs(name):
    ours, theirs = getattr(lr_scheduler, name), getattr(torch.optim.lr_scheduler, name)
    assert signature(ours) == signature(theirs)
    assert signature(ours.step) == signature(theirs.step)


# --- parameter groups and state ------------------------------------------------------------------

LAYOUT_CASES = ([(name, {}) for name in OPTIMIZERS] + list(OPTIONS.items())
                + [(name, dict(foreach=True)) for name in OPTIMIZERS]
                + [(name, dict(fused=True)) for name in FUSED]
                + [(name, dict(lr="tensor")) for name in OPTIMIZERS])
LAYOUT_IDS = [f"{name}-{kwargs}" for name, kwargs in LAYOUT_CASES]


def layouts(name, kwargs):
    """Both libraries' state dicts after two steps with the same arguments."""
    out = []
    for lib in (tg, torch):
        given = dict(kwargs, lr=lib.tensor(0.01)) if kwargs.get("lr") == "tensor" else kwargs
        ps = params(lib)
        opt = build(lib, name, given, ps)
        train(lib, opt, ps, steps=2)
        out.append(opt.state_dict())
    return out


@pytest.mark.parametrize(("name", "kwargs"), LAYOUT_CASES, ids=LAYOUT_IDS)
def test_param_groups_have_pytorchs_keys_order_and_values(name, kwargs):
    ours, theirs = layouts(name, kwargs)
    for group, their_group in zip(ours["param_groups"], theirs["param_groups"], strict=True):
        assert list(group) == list(their_group)  # the same keys, in the same order
        assert [kind(v) for v in group.values()] == [kind(v) for v in their_group.values()]


@pytest.mark.parametrize(("name", "kwargs"), LAYOUT_CASES, ids=LAYOUT_IDS)
def test_state_has_pytorchs_keys_and_kinds(name, kwargs):
    ours, theirs = layouts(name, kwargs)
    assert list(ours["state"]) == list(theirs["state"])
    for i, buffers in ours["state"].items():
        their_buffers = theirs["state"][i]
        assert list(buffers) == list(their_buffers)  # the same entries, made in the same order
        for key, value in buffers.items():
            ours_kind, their_kind = kind(value), kind(their_buffers[key])
            assert ours_kind[:3] == their_kind[:3], key  # a tensor, its dtype, its shape
            np.testing.assert_allclose(ours_kind[3], their_kind[3], rtol=1e-6, err_msg=key)


def test_the_dict_given_becomes_the_group_as_in_pytorch():
    for lib in (tg, torch):
        group = {"params": params(lib)[:1]}
        opt = lib.optim.SGD([group], lr=0.1)
        assert opt.param_groups[0] is group and group["lr"] == 0.1  # filled in with the defaults
        extra = {"params": params(lib)[1:], "lr": 0.5}
        opt.add_param_group(extra)
        extra["lr"] = 0.25  # changing it later changes the optimizer's option
        assert opt.param_groups[1]["lr"] == 0.25


def test_sgd_without_momentum_keeps_no_state_entry():
    ps = params(tg)
    opt = optim.SGD(ps, lr=0.1)
    train(tg, opt, ps, steps=1)
    assert len(opt.state) == 0 and opt.state_dict()["state"] == {}  # PyTorch's: nothing at all


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_scalar_state_follows_the_default_dtype_as_pytorchs(name, float64_default):
    """PyTorch keeps `step` (and NAdam's mu_product, ASGD's eta and mu) in float64 while the
    default dtype is float64."""
    ours, theirs = layouts(name, OPTIONS[name])
    for i, buffers in ours["state"].items():
        assert [kind(v)[1] for v in buffers.values()] == [kind(v)[1] for v in theirs["state"][i].values()]
    if "step" in ours["state"].get(0, {}):
        assert ours["state"][0]["step"].dtype == tg.float64


def test_fused_keeps_the_step_in_float32_as_pytorch(float64_default):
    ours, theirs = layouts("Adam", dict(fused=True))
    assert ours["state"][0]["step"].dtype == tg.float32
    assert theirs["state"][0]["step"].dtype == torch.float32


# --- implementation options ----------------------------------------------------------------------


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_foreach_and_fused_are_accepted_and_change_nothing(name):
    """They pick one of PyTorch's kernels for the same rule; tensorgrad has one numpy path."""
    ps = params(tg)
    straight = train(tg, build(tg, name, OPTIONS[name], ps), ps, steps=4)
    choices = [dict(foreach=True), dict(foreach=False)] + ([dict(fused=True)] if name in FUSED else [])
    for choice in choices:
        ps = params(tg)
        opt = build(tg, name, dict(OPTIONS[name], **choice), ps)
        for a, b in zip(train(tg, opt, ps, steps=4), straight, strict=True):
            np.testing.assert_array_equal(a, b)
        (key, value), = choice.items()
        assert all(group[key] is value for group in opt.param_groups)


@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("options", [dict(fused=True, foreach=True), dict(fused=True, differentiable=True)])
def test_fused_with_foreach_or_differentiable_is_pytorchs_runtime_error(name, options):
    with pytest.raises(RuntimeError):
        getattr(torch.optim, name)(params(torch), **options)
    with pytest.raises(RuntimeError, match="fused"):
        getattr(optim, name)(params(tg), **options)


GRAPH_OPTIONS = [(name, option) for name in OPTIMIZERS for option in ("differentiable", "capturable")
                 if option in inspect.signature(getattr(torch.optim, name)).parameters]


@pytest.mark.parametrize(("name", "option"), GRAPH_OPTIONS, ids=[f"{n}-{o}" for n, o in GRAPH_OPTIONS])
def test_differentiable_and_capturable_are_refused_clearly(name, option):
    assert getattr(optim, name)(params(tg), **{option: False}).param_groups[0][option] is False
    with pytest.raises(NotImplementedError, match=f"{name}: {option}=True is not supported"):
        getattr(optim, name)(params(tg), **{option: True})


# --- lr as a Tensor ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_tensor_lr_matches_pytorch_and_stays_the_groups(name):
    """A float32 0-d lr: PyTorch's arithmetic with it rounds to float32 where the tensor enters
    (Adam's lr / (1 - beta1**t)); the parameters (float64) agree to 1e-12."""
    results = []
    for lib in (tg, torch):
        lr = lib.tensor(0.03)
        ps = params(lib)
        opt = build(lib, name, dict(OPTIONS[name], lr=lr), ps)
        assert opt.param_groups[0]["lr"] is lr
        results.append(train(lib, opt, ps, steps=5))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_tensor_lr_must_have_one_element(name):
    getattr(optim, name)(params(tg), lr=tg.tensor([0.01]))  # one element: fine, as in PyTorch
    with pytest.raises(ValueError):
        getattr(torch.optim, name)(params(torch), lr=torch.tensor([0.01, 0.02]))
    with pytest.raises(ValueError, match="1-element"):
        getattr(optim, name)(params(tg), lr=tg.tensor([0.01, 0.02]))
    with pytest.raises(ValueError):
        getattr(optim, name)(params(tg), lr=tg.tensor(-0.01))


def test_adam_takes_tensor_betas_both_or_neither():
    """float32 betas make the bias corrections float32, as in PyTorch, whose float32 pow can differ
    from numpy's by an ulp (0.999**3): the parameters agree to 1e-7."""
    results = []
    for lib in (tg, torch):
        ps = params(lib)
        opt = lib.optim.Adam(ps, lr=0.01, betas=(lib.tensor([0.8]), lib.tensor(0.9)))
        assert opt.param_groups[0]["betas"][0].shape == ()  # squeezed, as PyTorch's _to_scalar does
        results.append(train(lib, opt, ps, steps=4))
        with pytest.raises(ValueError):
            lib.optim.Adam(params(lib), betas=(lib.tensor(0.8), 0.9))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-7)


@pytest.mark.parametrize("schedule", ["StepLR", "CosineAnnealingLR", "OneCycleLR", "ReduceLROnPlateau"])
def test_a_scheduler_writes_into_a_tensor_lr_in_place(schedule):
    build_schedule = {
        "StepLR": lambda S, o: S.StepLR(o, step_size=2, gamma=0.5),
        "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=5),
        "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=12),
        "ReduceLROnPlateau": lambda S, o: S.ReduceLROnPlateau(o, patience=0),
    }[schedule]
    rates = []
    for lib in (tg, torch):
        lr = lib.tensor(0.02)
        opt = lib.optim.Adam(params(lib), lr=lr)
        scheduler = build_schedule(lib.optim.lr_scheduler, opt)
        seen = []
        for _ in range(10):
            opt.step()
            scheduler.step(1.0) if schedule == "ReduceLROnPlateau" else scheduler.step()
            assert opt.param_groups[0]["lr"] is lr  # the same tensor, changed in place
            seen.append([float(lr), float(scheduler.get_last_lr()[0])])
        assert scheduler.get_last_lr()[0] is not lr  # a copy, as PyTorch's
        rates.append(seen)
    assert rates[0] == rates[1]  # float32 arithmetic on the tensor, as PyTorch's: to the bit
    assert len({r for r, _ in rates[0]}) > 1


# --- state dicts both ways -----------------------------------------------------------------------

RESUME_CASES = ([(name, OPTIONS[name], "numbers") for name in OPTIMIZERS]
                + [(name, OPTIONS[name], "torch tensors") for name in OPTIMIZERS]
                + [(name, dict(OPTIONS[name], lr="tensor"), "numbers") for name in OPTIMIZERS])
RESUME_IDS = [f"{name}-{form}-{kwargs.get('lr')}" for name, kwargs, form in RESUME_CASES]


def given(lib, kwargs):
    return dict(kwargs, lr=lib.tensor(0.02)) if kwargs.get("lr") == "tensor" else kwargs


@pytest.mark.parametrize(("name", "kwargs", "form"), RESUME_CASES, ids=RESUME_IDS)
def test_training_resumes_from_pytorchs_state_dict(name, kwargs, form):
    """PyTorch trains 3 steps; its state dict (as saved, or converted with .numpy()) loads into an
    optimizer built with the defaults; both go on 3 steps and agree."""
    torch_ps = params(torch)
    torch_opt = build(torch, name, given(torch, kwargs), torch_ps)
    halfway = train(torch, torch_opt, torch_ps, steps=3)
    saved = torch_opt.state_dict()
    ps = params(tg, halfway)
    opt = build(tg, name, {}, ps)
    opt.load_state_dict(convert(saved, "numpy") if form == "numbers" else saved)
    assert [list(g) for g in opt.state_dict()["param_groups"]] == [list(g) for g in saved["param_groups"]]
    if kwargs.get("lr") == "tensor":
        assert isinstance(opt.param_groups[0]["lr"], tg.Tensor)
    ours, theirs = train(tg, opt, ps, 3, start=3), train(torch, torch_opt, torch_ps, 3, start=3)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("tensor_lr", [False, True], ids=["lr", "tensor-lr"])
def test_pytorch_resumes_from_tensorgrads_state_dict(name, tensor_lr):
    kwargs = dict(OPTIONS[name], lr="tensor") if tensor_lr else OPTIONS[name]
    ps = params(tg)
    opt = build(tg, name, given(tg, kwargs), ps)
    halfway = train(tg, opt, ps, steps=3)
    torch_ps = params(torch, halfway)
    torch_opt = build(torch, name, {}, torch_ps)
    torch_opt.load_state_dict(convert(opt.state_dict(), "torch"))
    ours, theirs = train(tg, opt, ps, 3, start=3), train(torch, torch_opt, torch_ps, 3, start=3)
    # PyTorch's load casts NAdam's mu_product and ASGD's eta and mu (float32 scalars) to the
    # parameters' float64 and goes on in float64: its own resumed run leaves its straight one in
    # the 8th digit. tensorgrad keeps them as saved, so its resumed run is bit-identical.
    rtol = 1e-7 if name in ("NAdam", "ASGD") else 1e-10
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_resuming_with_a_tensor_lr_is_bit_identical(name):
    kwargs = dict(OPTIONS[name], lr="tensor")
    ps = params(tg)
    straight = train(tg, build(tg, name, given(tg, kwargs), ps), ps, steps=6)
    ps = params(tg)
    opt = build(tg, name, given(tg, kwargs), ps)
    halfway = train(tg, opt, ps, steps=3)
    saved = opt.state_dict()
    resumed_ps = params(tg, halfway)
    resumed = build(tg, name, given(tg, kwargs), resumed_ps)
    resumed.load_state_dict(saved)
    for a, b in zip(train(tg, resumed, resumed_ps, 3, start=3), straight, strict=True):
        np.testing.assert_array_equal(a, b)


# --- schedulers ----------------------------------------------------------------------------------


class Decay:
    """A callable object: its attributes are state."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, epoch):
        return self.rate ** (epoch % 4)


SCHEDULES = {
    "StepLR": lambda S, o: S.StepLR(o, 3, 0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, [2, 5, 5], 0.5),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, 0.9),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, 7, 0.001),
    "LambdaLR": lambda S, o: S.LambdaLR(o, [lambda e: 0.9**e, Decay(0.7)]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, Decay(0.9)),
    "LinearLR": lambda S, o: S.LinearLR(o, 0.2, 1.0, 8),
    "ConstantLR": lambda S, o: S.ConstantLR(o, 0.5, 4),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, 10, 2.0),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, [0.5, 0.2], epochs=3, steps_per_epoch=10, three_phase=True),
    "ReduceLROnPlateau": lambda S, o: S.ReduceLROnPlateau(o, patience=1, cooldown=1),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, 3, 2, 0.01),
    "CyclicLR": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=Decay(0.5)),
    "SequentialLR": lambda S, o: S.SequentialLR(o, [S.ConstantLR(o, 0.1, 5), S.ExponentialLR(o, 0.9)], [5]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler([S.StepLR(o, 3, 0.5), S.LinearLR(o, 0.2, 1.0, 12)]),
}


def scheduled(lib, key, steps):
    """An SGD with two groups and the schedule `key`, both stepped `steps` times."""
    ps = params(lib)
    opt = lib.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}], lr=0.1, momentum=0.9)
    scheduler = SCHEDULES[key](lib.optim.lr_scheduler, opt)
    advance(opt, scheduler, key, range(steps))
    return opt, scheduler


def advance(opt, scheduler, key, steps):
    rates = []
    for i in steps:
        opt.step()
        scheduler.step(1.0 / (i + 1)) if key == "ReduceLROnPlateau" else scheduler.step()
        rates.append([g["lr"] for g in opt.param_groups])
    return rates


def comparable(state):
    """A scheduler state dict with its values as plain data (Counters as dicts), keys in order."""
    if isinstance(state, dict):
        return [(k, comparable(v)) for k, v in state.items()]
    if isinstance(state, list | tuple):
        return [comparable(v) for v in state]
    return state


@pytest.mark.parametrize("key", list(SCHEDULES))
def test_scheduler_state_dict_has_pytorchs_keys_in_order_and_values(key):
    """`_get_lr_called_within_step`, `_is_initial`, `_step_count`... exactly as PyTorch writes them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's warning about stepping before the optimizer
        ours, theirs = (scheduled(lib, key, 7)[1].state_dict() for lib in (tg, torch))
    assert comparable(ours) == comparable(theirs)
    if key not in ("ReduceLROnPlateau", "SequentialLR", "ChainedScheduler"):  # those have neither
        assert ours["_get_lr_called_within_step"] is False and ours["_is_initial"] is False


@pytest.mark.parametrize("key", list(SCHEDULES))
@pytest.mark.parametrize("direction", ["from PyTorch", "to PyTorch"])
def test_schedules_resume_from_the_other_librarys_state_dict(key, direction):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source, target = (torch, tg) if direction == "from PyTorch" else (tg, torch)
        opt, scheduler = scheduled(source, key, 7)
        resumed_opt, resumed = scheduled(target, key, 0)
        resumed.load_state_dict(scheduler.state_dict())  # PyTorch's order: the scheduler first
        saved = opt.state_dict()
        resumed_opt.load_state_dict(convert(saved, "torch") if target is torch else saved)
        assert advance(resumed_opt, resumed, key, range(7, 20)) == advance(opt, scheduler, key, range(7, 20))


@pytest.mark.parametrize("key", [k for k in SCHEDULES if k not in ("ReduceLROnPlateau", "SequentialLR",
                                                                    "ChainedScheduler")])
def test_get_lr_outside_step_warns_as_pytorch(key):
    for lib in (tg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, scheduler = scheduled(lib, key, 2)
        with pytest.warns(UserWarning, match="get_last_lr"):
            scheduler.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # but not from step() itself
        opt, scheduler = scheduled(tg, key, 3)


def test_reduce_on_plateau_takes_pytorchs_deprecated_epoch():
    for lib in (tg, torch):
        _, scheduler = scheduled(lib, "ReduceLROnPlateau", 0)
        with pytest.warns(UserWarning):
            scheduler.step(1.0, epoch=5)
        assert scheduler.last_epoch == 5
