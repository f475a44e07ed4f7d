"""`tensorgrad.optim`'s Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD: PyTorch's update step for
step (parameters and every state buffer), its signatures, defaults, state-dict layout and errors;
training resumes bit for bit from a state dict."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import optim
from tensorgrad.device import to_numpy

STEPS = 6
NAMES = ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"]


def loss_of(params):
    p0, p1 = params
    return ((p0 @ p1) ** 2).sum() + p1.sin().sum()


def initial_values():
    rng = np.random.default_rng(3)
    return [rng.standard_normal((3, 4)) * 0.5, rng.standard_normal(4) * 0.5]


def make_params(lib, values=None, device="cpu"):
    place = {"device": device} if lib is tg else {}  # tensorgrad's on `device`, PyTorch's on the CPU
    return [lib.tensor(v, requires_grad=True, **place) for v in (values or initial_values())]


def numpy_of(value):
    return np.array(to_numpy(value.data)) if isinstance(value, tg.Tensor) else value.detach().numpy().copy()


def train(opt, params, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss_of(params).backward()
        opt.step()
    return [numpy_of(p) for p in params]


def build(lib, name, kwargs, params, grouped=False):
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.03}] if grouped else params
    return getattr(lib.optim, name)(groups, **kwargs)


def run(lib, name, kwargs, steps=STEPS, grouped=False, device="cpu"):
    """The parameters after `steps` steps, and the optimizer."""
    params = make_params(lib, device=device)
    opt = build(lib, name, kwargs, params, grouped)
    return train(opt, params, steps), opt


SETTINGS = [
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.05, betas=(0.3, 0.5))),  # beta1 < 0.5: the other branch of lerp
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.05, momentum_decay=0.05, betas=(0.85, 0.9))),
    ("NAdam", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("NAdam", dict(lr=0.05, betas=(0.3, 0.5), eps=1e-4)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.7))),  # rho_t > 5 from the third step: rectified
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.7), weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.05, betas=(0.3, 0.7), weight_decay=0.2, decoupled_weight_decay=True, eps=1e-4)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5)),
    ("Adadelta", dict(weight_decay=0.1, maximize=True)),
    ("Adadelta", dict(lr=0.1, rho=0.0)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.08))),
    ("Rprop", dict(lr=0.02, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2)),  # averaging starts at the third step
    ("ASGD", dict(lr=0.03, lambd=0.1, t0=0, weight_decay=0.1, maximize=True)),
]
IDS = [f"{name}-{kwargs}" for name, kwargs in SETTINGS]


def assert_states_match(ours, theirs, rtol):
    """Every buffer of every parameter, as PyTorch holds it (same names, dtypes and values)."""
    our_state, their_state = ours.state_dict()["state"], theirs.state_dict()["state"]
    assert our_state.keys() == their_state.keys()
    for i, buffers in our_state.items():
        assert list(buffers) == list(their_state[i])  # same names, made in the same order
        for key, value in buffers.items():
            theirs_value = their_state[i][key]
            assert str(value.dtype) == str(theirs_value.dtype).removeprefix("torch."), key
            np.testing.assert_allclose(numpy_of(value), theirs_value.numpy(), rtol=rtol, atol=1e-14)


@pytest.mark.parametrize(("name", "kwargs"), SETTINGS, ids=IDS)
def test_matches_pytorch_step_for_step(name, kwargs, device):
    torch = pytest.importorskip("torch")
    ours, our_opt = run(tg, name, kwargs, device=device)
    theirs, their_opt = run(torch, name, kwargs)
    rtol = 1e-10 if device == "cpu" else 1e-9  # a GPU sums in another order
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)
    assert_states_match(our_opt, their_opt, rtol)
    assert not np.allclose(ours[0], initial_values()[0])  # it did move


@pytest.mark.parametrize(("name", "kwargs"), SETTINGS, ids=IDS)
def test_parameter_groups_with_their_own_options_match_pytorch(name, kwargs):
    torch = pytest.importorskip("torch")
    ours, _ = run(tg, name, kwargs, grouped=True)
    theirs, _ = run(torch, name, kwargs, grouped=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.9, 0.95)])
def test_radam_over_many_steps_crosses_into_the_rectified_rule(betas):
    torch = pytest.importorskip("torch")
    # With beta2 = 0.999, rho_t passes 5 at the sixth step; 0.95 at the sixth as well: run past it.
    ours, _ = run(tg, "RAdam", dict(lr=0.01, betas=betas), steps=15)
    theirs, _ = run(torch, "RAdam", dict(lr=0.01, betas=betas), steps=15)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(("name", "kwargs"), SETTINGS, ids=IDS)
def test_resuming_from_a_state_dict_is_bit_identical(name, kwargs, device):
    straight, _ = run(tg, name, kwargs, steps=8, grouped=True, device=device)

    params = make_params(tg, device=device)
    opt = build(tg, name, kwargs, params, grouped=True)
    halfway = train(opt, params, steps=5)
    saved = opt.state_dict()
    del opt  # nothing of the first optimizer survives but its state dict

    resumed_params = make_params(tg, halfway, device=device)
    resumed = build(tg, name, kwargs, resumed_params, grouped=True)
    resumed.load_state_dict(saved)
    for a, b in zip(train(resumed, resumed_params, steps=3), straight):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("name", "kwargs"), SETTINGS, ids=IDS)
def test_a_pytorch_state_dict_loads_and_training_continues_as_in_pytorch(name, kwargs):
    torch = pytest.importorskip("torch")
    torch_params = make_params(torch)
    torch_opt = build(torch, name, kwargs, torch_params)
    halfway = train(torch_opt, torch_params, steps=3)
    ours = make_params(tg, halfway)
    opt = build(tg, name, {}, ours)  # the loaded options replace the defaults
    opt.load_state_dict(torch_opt.state_dict())
    assert opt.param_groups[0]["lr"] == torch_opt.param_groups[0]["lr"]
    for a, b in zip(train(opt, ours, steps=3), train(torch_opt, torch_params, steps=3)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_has_pytorchs_layout(name):
    torch = pytest.importorskip("torch")
    layouts = []
    for lib in (tg, torch):
        params = make_params(lib)
        opt = getattr(lib.optim, name)([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}])
        train(opt, params, steps=2)
        layouts.append(opt.state_dict())
    ours, theirs = layouts
    assert ours.keys() == theirs.keys() == {"state", "param_groups"}
    assert [g["params"] for g in ours["param_groups"]] == [g["params"] for g in theirs["param_groups"]]
    for group, their_group in zip(ours["param_groups"], theirs["param_groups"]):
        assert group.keys() == their_group.keys()  # every option PyTorch keeps, foreach & co included
        assert {k: v for k, v in group.items() if k != "params"} == {
            k: tuple(v) if isinstance(v, tuple) else v for k, v in their_group.items() if k != "params"}
    for i, buffers in ours["state"].items():
        assert isinstance(buffers["step"], tg.Tensor) and buffers["step"].dtype == tg.float32
        assert buffers["step"].item() == theirs["state"][i]["step"].item() == 2
        assert all(isinstance(value, tg.Tensor) for value in buffers.values())  # buffers as tensors
    assert ours["state"].keys() == theirs["state"].keys() == {0, 1}


@pytest.mark.parametrize("name", NAMES)
def test_signature_and_defaults_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    ours = inspect.signature(getattr(optim, name)).parameters
    theirs = inspect.signature(getattr(torch.optim, name)).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()]


P = lambda: [tg.ones(2, requires_grad=True)]  # noqa: E731

BAD_ARGUMENTS = [
    ("Adamax", dict(lr=-0.1)),
    ("Adamax", dict(eps=-1e-8)),
    ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))),
    ("Adamax", dict(weight_decay=-1)),
    ("NAdam", dict(lr=-1e-3)),
    ("NAdam", dict(betas=(0.9, 1.0))),
    ("NAdam", dict(momentum_decay=-0.1)),
    ("NAdam", dict(weight_decay=-0.1)),
    ("NAdam", dict(eps=-1.0)),
    ("RAdam", dict(lr=-1.0)),
    ("RAdam", dict(betas=(-0.5, 0.9))),
    ("RAdam", dict(weight_decay=-0.1)),
    ("Adadelta", dict(lr=-1.0)),
    ("Adadelta", dict(rho=1.5)),
    ("Adadelta", dict(rho=-0.1)),
    ("Adadelta", dict(eps=-1.0)),
    ("Adadelta", dict(weight_decay=-1.0)),
    ("Rprop", dict(lr=-1.0)),
    ("Rprop", dict(etas=(1.2, 0.5))),
    ("Rprop", dict(etas=(0.0, 1.2))),
    ("Rprop", dict(etas=(0.5, 1.0))),
    ("ASGD", dict(lr=-0.01)),
    ("ASGD", dict(weight_decay=-0.01)),
    ("Adamax", dict(lr=float("nan"))),
    ("NAdam", dict(lr="0.1")),
]


@pytest.mark.parametrize(("name", "kwargs"), BAD_ARGUMENTS, ids=[f"{n}-{k}" for n, k in BAD_ARGUMENTS])
def test_bad_arguments_raise_pytorchs_exception_type(name, kwargs):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        getattr(torch.optim, name)([torch.ones(2, requires_grad=True)], **kwargs)
    with pytest.raises(Exception) as ours:
        getattr(optim, name)(P(), **kwargs)
    assert type(ours.value) is type(theirs.value)
    assert name in str(ours.value)  # says which optimizer refused what


def test_a_bad_option_in_a_later_group_is_refused_too():
    opt = optim.Rprop(P())
    with pytest.raises(ValueError, match="etaminus"):
        opt.add_param_group({"params": P(), "etas": (0.5, 0.9)})
    with pytest.raises(TypeError, match="betas must be a pair"):
        optim.NAdam(P(), betas=0.9)
    assert len(opt.param_groups) == 1


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("option", ["capturable", "differentiable"])
def test_pytorch_graph_options_are_accepted_only_at_their_defaults(name, option):
    opt = getattr(optim, name)(P(), **{option: False})
    assert opt.param_groups[0][option] is False
    with pytest.raises(NotImplementedError, match=f"{name}: {option}=True is not supported"):
        getattr(optim, name)(P(), **{option: True})
    with pytest.raises(NotImplementedError, match=option):
        opt.add_param_group({"params": P(), option: True})


@pytest.mark.parametrize("name", NAMES)
def test_foreach_is_accepted_at_any_value_and_kept(name):
    # foreach picks one of PyTorch's kernels for the same rule: tensorgrad has one path.
    for value in (None, False, True):
        assert getattr(optim, name)(P(), foreach=value).param_groups[0]["foreach"] is value


def test_options_pytorch_does_not_have_are_refused():
    with pytest.raises(TypeError):
        optim.Rprop(P(), weight_decay=0.1)  # Rprop has no weight decay in PyTorch either
    with pytest.raises(TypeError):
        optim.Adamax(P(), fused=True)


@pytest.mark.parametrize("name", NAMES)
def test_float32_parameters_keep_their_dtype_and_a_parameter_without_grad_is_left_alone(name):
    a, b = tg.ones(3, requires_grad=True), tg.ones(2, requires_grad=True)
    opt = getattr(optim, name)([a, b], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (a * a * 2).sum().backward()
        opt.step()
    assert a.dtype == tg.float32 and not np.allclose(a.data, 1)
    np.testing.assert_array_equal(b.data, [1, 1])
    assert b not in opt.state
    for key, value in opt.state[a].items():
        expected = np.float32 if key in ("step", "mu_product", "eta", "mu") else a.data.dtype
        assert value.data.dtype == expected, key


def test_rprop_steps_ignore_the_gradients_size():
    w = tg.tensor([1.0, -1.0], dtype=tg.float64, requires_grad=True)
    opt = optim.Rprop([w], lr=0.1, etas=(0.5, 2.0))
    moves = []
    for scale in (1.0, 100.0, -1e-3):
        before = w.data.copy()
        w.grad = np.array([scale, scale])
        opt.step()
        moves.append(w.data - before)
    # step 1: lr against the sign; step 2: same sign, step size doubles; step 3: sign flipped,
    # step size halves and the step is skipped
    np.testing.assert_allclose(moves, [[-0.1, -0.1], [-0.2, -0.2], [0.0, 0.0]])
    np.testing.assert_allclose(opt.state[w]["step_size"].data, [0.1, 0.1])
    np.testing.assert_array_equal(opt.state[w]["prev"].data, [0, 0])


def test_asgd_averages_the_weights_in_its_state_after_t0():
    w = tg.tensor([4.0], dtype=tg.float64, requires_grad=True)
    opt = optim.ASGD([w], lr=0.1, lambd=0.0, t0=1)
    seen = []
    for _ in range(4):
        w.grad = np.array([1.0])
        opt.step()
        seen.append(float(w.data[0]))
    # mu = 1 / max(1, t - t0) after step t: steps 1 to 3 copy the weights, step 4 averages (mu = 1/2).
    np.testing.assert_allclose(opt.state[w]["ax"].data, [(seen[2] + seen[3]) / 2], rtol=1e-12)
    assert opt.state[w]["mu"].item() == np.float32(1 / 3)  # a float32, as PyTorch keeps it
    np.testing.assert_allclose(seen, [3.9, 3.8, 3.7, 3.6], rtol=1e-6)  # eta stays lr: lambd = 0
