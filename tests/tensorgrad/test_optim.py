"""`tensorgrad.optim`: every optimizer follows PyTorch's update step for step, in groups, and
resumes bit for bit from its state dict (on the CPU, and on a GPU where there is one); bad
arguments are PyTorch's errors with clear words."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import optim
from tensorgrad.device import to_numpy

STEPS = 7


def quadratic_loss(lib, params, step):
    """A loss whose gradient changes from step to step, so momentum and the moments matter."""
    w, b, c = params
    x = lib.from_numpy(np.linspace(-1, 1, 12).reshape(4, 3) * (1 + step))
    if lib is tg:
        x = x.to(w.device)
    return ((x @ w + b) ** 2).sum() + (w * w * w).sum() + (c * c).sum() * 0.5


def initial_values():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal(4)]


def make_params(lib, values=None, device="cpu"):
    place = {"device": device} if lib is tg else {}  # tensorgrad's on `device`, PyTorch's on the CPU
    return [lib.tensor(v, requires_grad=True, **place) for v in (values or initial_values())]


def train(lib, opt, params, steps, start=0):
    for step in range(start, start + steps):
        opt.zero_grad()
        quadratic_loss(lib, params, step).backward()
        opt.step()
    return [np.array(to_numpy(p.data)) if lib is tg else p.detach().numpy().copy() for p in params]


def run(lib, make_optimizer, steps=STEPS, grouped=False, device="cpu"):
    params = make_params(lib, device=device)
    # Two groups: the bias and the extra vector train at their own rate.
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.02}] if grouped else params
    return train(lib, make_optimizer(lib.optim, groups), params, steps)


SETTINGS = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.01, momentum=0.5, weight_decay=0.1)),
    ("SGD", dict(lr=0.01, momentum=0.7, dampening=0.3, weight_decay=0.05)),
    ("SGD", dict(lr=0.01, momentum=0.9, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6)),
    ("Adam", dict(lr=0.05, weight_decay=0.2)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.05, betas=(0.3, 0.5))),  # beta1 < 0.5: the other branch of lerp
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.05, weight_decay=0.3)),
    ("AdamW", dict(lr=0.05, weight_decay=0.1, amsgrad=True, betas=(0.85, 0.9))),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6)),
    ("RMSprop", dict(lr=0.01, momentum=0.8)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01, alpha=0.3, centered=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
]
IDS = [f"{name}-{kwargs}" for name, kwargs in SETTINGS]


@pytest.mark.parametrize(("name", "kwargs"), SETTINGS, ids=IDS)
def test_matches_pytorch_step_for_step(name, kwargs, device):
    torch = pytest.importorskip("torch")
    ours = run(tg, lambda o, params: getattr(o, name)(params, **kwargs), device=device)
    theirs = run(torch, lambda o, params: getattr(o, name)(params, **kwargs))
    rtol = 1e-12 if device == "cpu" else 1e-9  # a GPU sums in another order
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)
    assert not np.allclose(ours[0], initial_values()[0])  # it did move


@pytest.mark.parametrize(("name", "kwargs"), SETTINGS, ids=IDS)
def test_parameter_groups_with_their_own_options_match_pytorch(name, kwargs):
    torch = pytest.importorskip("torch")
    ours = run(tg, lambda o, params: getattr(o, name)(params, **kwargs), grouped=True)
    theirs = run(torch, lambda o, params: getattr(o, name)(params, **kwargs), grouped=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("name", "kwargs"), SETTINGS, ids=IDS)
def test_resuming_from_a_state_dict_is_bit_identical(name, kwargs, device):
    straight = run(tg, lambda o, params: getattr(o, name)(params, **kwargs), steps=8, grouped=True,
                   device=device)

    params = make_params(tg, device=device)
    make = lambda params: getattr(optim, name)(  # noqa: E731
        [{"params": params[:1]}, {"params": params[1:], "lr": 0.02}], **kwargs)
    opt = make(params)
    halfway = train(tg, opt, params, steps=5)
    saved = opt.state_dict()
    del opt  # nothing of the first optimizer survives but its state dict

    resumed_params = make_params(tg, halfway, device=device)
    resumed = make(resumed_params)
    resumed.load_state_dict(saved)
    final = train(tg, resumed, resumed_params, steps=3, start=5)
    for a, b in zip(final, straight):
        np.testing.assert_array_equal(a, b)


def test_state_dict_has_pytorchs_layout():
    torch = pytest.importorskip("torch")
    layouts = []
    for lib in (tg, torch):
        params = make_params(lib)
        opt = lib.optim.Adam([{"params": params[:2]}, {"params": params[2:], "lr": 0.5}], amsgrad=True)
        train(lib, opt, params, steps=2)
        state = opt.state_dict()
        layouts.append((state, {i: sorted(s) for i, s in state["state"].items()},
                        [g["params"] for g in state["param_groups"]]))
    (ours, our_keys, our_indices), (theirs, their_keys, their_indices) = layouts
    assert our_indices == their_indices == [[0, 1], [2]]
    assert our_keys == their_keys  # state keyed by parameter index, same buffer names
    for group, their_group in zip(ours["param_groups"], theirs["param_groups"]):
        for key in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"):
            assert group[key] == their_group[key]
    for i, buffers in ours["state"].items():
        for key, value in buffers.items():
            assert isinstance(value, tg.Tensor)  # buffers as tensors
            np.testing.assert_allclose(value.data, theirs["state"][i][key].numpy(), rtol=1e-12)
    assert ours["state"][0]["step"].dtype == tg.float32 and ours["state"][0]["step"].item() == 2


def test_a_pytorch_state_dict_loads_and_training_continues_as_in_pytorch():
    torch = pytest.importorskip("torch")
    torch_params = make_params(torch)
    torch_opt = torch.optim.SGD(torch_params, lr=0.01, momentum=0.9)
    halfway = train(torch, torch_opt, torch_params, steps=3)
    ours = make_params(tg, halfway)
    opt = optim.SGD(ours, lr=0.5, momentum=0.1)  # the loaded options replace these
    opt.load_state_dict(torch_opt.state_dict())
    assert opt.param_groups[0]["lr"] == 0.01 and opt.param_groups[0]["momentum"] == 0.9
    ours = train(tg, opt, ours, steps=3, start=3)
    theirs = train(torch, torch_opt, torch_params, steps=3, start=3)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_load_state_dict_copies_and_casts_the_buffers():
    w = tg.tensor([1.0, 2.0], requires_grad=True)  # float32
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    buffer = tg.tensor([0.5, 0.25], dtype=tg.float64)
    opt.load_state_dict({"state": {0: {"momentum_buffer": buffer}},
                         "param_groups": [{"params": [0], "lr": 0.1, "momentum": 0.9}]})
    loaded = opt.state[w]["momentum_buffer"]
    assert loaded.dtype == tg.float32 and loaded.data is not buffer.data
    w.grad = np.ones(2, np.float32)
    opt.step()  # buf = 0.9 * (0.5, 0.25) + 1
    np.testing.assert_allclose(w.data, [1 - 0.1 * 1.45, 2 - 0.1 * 1.225], rtol=1e-6)
    np.testing.assert_array_equal(buffer.data, [0.5, 0.25])  # the saved dict is untouched
    assert opt.param_groups[0]["nesterov"] is False  # an option the dict left out: the default


def test_sgd_by_hand():
    w = tg.tensor([1.0, -2.0], dtype=tg.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.5)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()  # gradient 2w
        opt.step()
    # step 1: buf = 2w0 = (2, -4), w1 = w0 - 0.1 buf = (0.8, -1.6)
    # step 2: buf = 0.5 (2, -4) + 2 w1 = (2.6, -5.2), w2 = w1 - 0.1 buf = (0.54, -1.08)
    np.testing.assert_allclose(w.data, [0.54, -1.08])


def test_adam_first_step_moves_each_weight_by_lr():
    w = tg.tensor([3.0, -0.001, 50.0], dtype=tg.float64, requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()  # m / sqrt(v) = g / (|g| + eps) at the first step: about sign(g), whatever |g|
    grad = np.array([6.0, -0.002, 100.0])
    np.testing.assert_allclose(w.data, [3.0, -0.001, 50.0] - 0.1 * grad / (np.abs(grad) + 1e-8), rtol=1e-12)
    np.testing.assert_allclose(w.data, [2.9, 0.099, 49.9], rtol=1e-5)


def test_adamw_decays_the_weights_not_the_gradient():
    w = tg.tensor([2.0], dtype=tg.float64, requires_grad=True)
    opt = optim.AdamW([w], lr=0.1)
    assert opt.param_groups[0]["weight_decay"] == 0.01  # PyTorch's default
    w.grad = np.array([0.0])
    opt.step()  # zero gradient: only the decay moves it, by lr * weight_decay * w
    np.testing.assert_allclose(w.data, [2.0 * (1 - 0.1 * 0.01)], rtol=1e-15)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
@pytest.mark.parametrize("as_what", ["tensor", "array"])
def test_step_updates_whichever_way_grad_was_set(name, as_what):
    w = tg.zeros(3, requires_grad=True)
    opt = getattr(optim, name)([w], lr=1.0)
    grad = np.ones(3, np.float32)
    w.grad = tg.from_numpy(grad) if as_what == "tensor" else grad
    opt.step()
    assert (w.data < 0).all()  # moved against the gradient


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_a_gradient_of_the_wrong_shape_is_never_broadcast(name):
    w = tg.zeros(3, requires_grad=True)
    opt = getattr(optim, name)([w], lr=1.0)
    w.grad = np.ones(3, np.float32)
    w.grad.shape = (1, 3)  # the stored array reshaped in place, after the assignment checked it
    with pytest.raises(RuntimeError, match=r"shape \(3,\) has a .grad of shape \(1, 3\)"):
        opt.step()
    np.testing.assert_array_equal(w.data, [0, 0, 0])
    with pytest.raises((RuntimeError, ValueError)):  # refused when assigned, as PyTorch does
        w.grad = np.ones(1, np.float32)


def test_a_parameter_without_gradient_is_left_alone_and_zero_grad_drops_grads():
    a, b = tg.ones(2, requires_grad=True), tg.ones(2, requires_grad=True)
    opt = optim.Adam([a, b], lr=1.0)
    (a * 2).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.data, [1, 1])
    assert not np.allclose(a.data, 1)
    assert b not in opt.state  # no state for a parameter that never had a gradient
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_zero_grad_can_zero_in_place():
    w = tg.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    grad = w.grad
    optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)
    assert w.grad is grad and np.array_equal(tg.tensor(w.grad).numpy(), [0, 0])


def test_a_frozen_parameter_is_accepted_and_never_moves():
    # As in PyTorch: freezing a layer (requires_grad False) keeps model.parameters() usable.
    model = tg.nn.Linear(2, 1)
    model.weight.requires_grad_(False)
    before = model.weight.data.copy()
    opt = optim.SGD(model.parameters(), lr=0.1)
    model(tg.ones(3, 2)).sum().backward()
    opt.step()
    np.testing.assert_array_equal(model.weight.data, before)
    np.testing.assert_allclose(model.bias.data, model.bias.data)  # bias trained without error


def test_step_bumps_the_version_so_a_stale_graph_refuses_backward():
    w = tg.ones(2, requires_grad=True)
    loss = (w * w).sum()  # saves w for its gradient
    loss.backward(retain_graph=True)
    optim.SGD([w], lr=0.1).step()
    with pytest.raises(tg.InplaceModifiedError):
        loss.backward()


def test_step_records_no_graph_and_takes_a_closure():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with tg.no_grad():  # the closure still gets gradients
        loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_allclose(w.data, [0.8, 1.6], rtol=1e-6)
    assert w.is_leaf and w.grad_fn is None


def test_works_with_module_parameters_and_named_parameters():
    model = tg.nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.data.copy()
    model(tg.ones(2, 3)).sum().backward()
    opt.step()
    np.testing.assert_allclose(model.weight.data, before - 0.1 * 2)  # d/dW of the sum: 2 per weight
    named = optim.Adam(model.named_parameters())
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]


def test_add_param_group_fills_defaults_and_keeps_its_own_options():
    a, b = tg.ones(2, requires_grad=True), tg.ones(2, requires_grad=True)
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.9
    assert opt.param_groups[1]["params"] == [b]
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.Adam([{"params": [a, b]}, {"params": [b]}])
    with pytest.raises(TypeError, match="must be a dict"):
        opt.add_param_group([a])
    with pytest.raises(ValueError, match="learning rate lr = -0.5"):
        opt.add_param_group({"params": [tg.ones(1, requires_grad=True)], "lr": -0.5})
    assert len(opt.param_groups) == 2


def test_adagrad_initial_state_and_a_later_group():
    a = tg.ones(2, requires_grad=True)
    opt = optim.Adagrad([a], initial_accumulator_value=0.5)
    np.testing.assert_array_equal(opt.state_dict()["state"][0]["sum"].data, [0.5, 0.5])  # before any step
    b = tg.ones(2, requires_grad=True)
    opt.add_param_group({"params": [b]})
    b.grad = np.ones(2, np.float32)
    opt.step()
    np.testing.assert_allclose(opt.state[b]["sum"].data, [1.5, 1.5])


P = lambda: tg.ones(2, requires_grad=True)  # noqa: E731


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: optim.SGD(P(), lr=0.1), TypeError, r"single Tensor.*SGD\(\[w\]"),
    (lambda: optim.SGD(3, lr=0.1), TypeError, "iterable of Tensors or dicts, got int"),
    (lambda: optim.SGD([], lr=0.1), ValueError, "empty parameter list"),
    (lambda: optim.SGD({P()}, lr=0.1), TypeError, "not a set"),
    (lambda: optim.SGD([P(), 3.0], lr=0.1), TypeError, "parameter 1 is float"),
    (lambda: optim.SGD([P() * 2], lr=0.1), ValueError, "non-leaf Tensor"),
    (lambda: optim.SGD([P()], lr=-1), ValueError, "SGD: invalid learning rate lr = -1"),
    (lambda: optim.SGD([P()], lr="0.1"), TypeError, "lr must be a number, got str"),
    (lambda: optim.SGD([P()], lr=0.1, momentum=-0.5), ValueError, "momentum = -0.5"),
    (lambda: optim.SGD([P()], lr=0.1, nesterov=True), ValueError, "Nesterov"),
    (lambda: optim.SGD([P()], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), ValueError, "dampening"),
    (lambda: optim.Adam([P()], betas=(0.9, 1.0)), ValueError, r"betas\[1\] = 1.0"),
    (lambda: optim.Adam([P()], betas=(-0.1, 0.9)), ValueError, r"betas\[0\] = -0.1"),
    (lambda: optim.Adam([P()], betas=0.9), TypeError, "pair"),
    (lambda: optim.Adam([P()], eps=-1e-8), ValueError, "eps"),
    (lambda: optim.AdamW([P()], weight_decay=-0.01), ValueError, "weight_decay"),
    (lambda: optim.RMSprop([P()], alpha=-0.9), ValueError, "alpha"),
    (lambda: optim.Adagrad([P()], lr_decay=-1), ValueError, "lr_decay"),
    (lambda: optim.Adagrad([P()], lr=float("nan")), ValueError, "lr = nan"),
])
def test_bad_arguments_are_pytorchs_errors_with_clear_words(make, error, message):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize(("saved", "error", "message"), [
    ([1, 2], TypeError, "expects the dict that state_dict"),
    ({"state": {}}, TypeError, "'state' and 'param_groups'"),
    ({"state": {}, "param_groups": []}, ValueError, "0 parameter groups, this optimizer 1"),
    ({"state": {}, "param_groups": [{"params": [0, 1], "lr": 0.1}]}, ValueError, r"\[2\].*\[1\]"),
])
def test_load_state_dict_refuses_what_does_not_fit(saved, error, message):
    with pytest.raises(error, match=message):
        optim.SGD([P()], lr=0.1).load_state_dict(saved)


def test_an_optimizer_prints_its_groups():
    text = repr(optim.SGD([P()], lr=0.1, momentum=0.9))
    assert text.startswith("SGD (") and "Parameter Group 0" in text and "momentum: 0.9" in text
