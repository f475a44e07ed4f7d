"""`tg.func` against `torch.func`: grad, grad_and_value, vjp, jacrev/jacfwd, functional_call,
stack_module_state and vmap, the same functions written once for either library."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import nn

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)


def _close(a, b, rtol=1e-12):
    if isinstance(b, tuple | list):
        assert isinstance(a, tuple | list) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _close(x, y, rtol)
        return
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=rtol, atol=1e-14)


def _both(*arrays):
    return [tg.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def loss_fn(w, x, y):
    return ((x @ w).tanh() - y).pow(2).mean()


def test_grad_with_argnums_and_aux_as_torch():
    arrays = RNG.standard_normal((3,)), RNG.standard_normal((5, 3)), RNG.standard_normal(5)
    ours, theirs = _both(*arrays)
    _close(tg.func.grad(loss_fn)(*ours), torch.func.grad(loss_fn)(*theirs))
    _close(tg.func.grad(loss_fn, argnums=(0, 1))(*ours), torch.func.grad(loss_fn, argnums=(0, 1))(*theirs))
    _close(tg.func.grad(loss_fn, argnums=-1)(*ours), torch.func.grad(loss_fn, argnums=-1)(*theirs))

    def with_aux(w, x, y):
        return loss_fn(w, x, y), x.sum()
    g, aux = tg.func.grad(with_aux, has_aux=True)(*ours)
    g_ref, aux_ref = torch.func.grad(with_aux, has_aux=True)(*theirs)
    _close(g, g_ref)
    _close(aux, aux_ref)
    (g, value) = tg.func.grad_and_value(loss_fn)(*ours)
    (g_ref, value_ref) = torch.func.grad_and_value(loss_fn)(*theirs)
    _close((g, value), (g_ref, value_ref))
    assert ours[0].grad is None and not ours[0].requires_grad  # the caller's tensors are not touched


def test_grad_refuses_what_torch_refuses():
    w = tg.randn(3)
    with pytest.raises(RuntimeError, match="scalar"):
        tg.func.grad(lambda w: w * 2)(w)
    with pytest.raises(RuntimeError, match="argnums"):
        tg.func.grad(lambda w: w.sum(), argnums=1)(w)
    with pytest.raises(RuntimeError, match="floating point"):
        tg.func.grad(lambda w: w.sum())(tg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="has_aux"):
        tg.func.grad(lambda w: w.sum(), has_aux=True)(w)
    assert np.array_equal(tg.func.grad(lambda w: tg.ones(()))(w).numpy(), np.zeros(3))


def test_vjp_can_be_called_several_times():
    x = RNG.standard_normal((4, 3))
    (ours,), (theirs,) = _both(x)[0][:1], _both(x)[1][:1]

    def f(a):
        return a.sin() * a.sum(0), a.exp().sum()
    out, fn = tg.func.vjp(f, ours)
    out_ref, fn_ref = torch.func.vjp(f, theirs)
    _close(out, out_ref)
    for _ in range(2):
        seed = RNG.standard_normal((4, 3))
        _close(fn((tg.tensor(seed), tg.tensor(2.0, dtype=tg.float64))),
               fn_ref((torch.tensor(seed), torch.tensor(2.0, dtype=torch.float64))))


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_as_torch(transform):
    arrays = RNG.standard_normal((3,)), RNG.standard_normal((2, 3))

    def f(a, b):
        return (b @ a.exp()).sin()
    ours, theirs = _both(*arrays)
    _close(getattr(tg.func, transform)(f)(*ours), getattr(torch.func, transform)(f)(*theirs))
    _close(getattr(tg.func, transform)(f, argnums=(0, 1))(*ours),
           getattr(torch.func, transform)(f, argnums=(0, 1))(*theirs))


def test_functional_call_uses_the_given_weights_and_puts_its_own_back():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Tanh(),
                                 torch.nn.Linear(4, 2)).double()
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 2)).double()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    own = {name: p.detach().numpy().copy() for name, p in ours.named_parameters()}
    new = {name: RNG.standard_normal(p.shape) for name, p in theirs.named_parameters()}
    x = RNG.standard_normal((5, 3))
    mine = {name: tg.tensor(v, requires_grad=True) for name, v in new.items()}
    reference = {name: torch.tensor(v, requires_grad=True) for name, v in new.items()}
    out = tg.func.functional_call(ours, mine, (tg.tensor(x),))
    out_ref = torch.func.functional_call(theirs, reference, (torch.tensor(x),))
    _close(out, out_ref)
    out.pow(2).sum().backward()
    out_ref.pow(2).sum().backward()
    for name in new:
        np.testing.assert_allclose(mine[name].grad, reference[name].grad.numpy(), rtol=1e-11, atol=1e-14)
    for name, p in ours.named_parameters():  # the module's own weights are back, untouched
        assert np.array_equal(p.detach().numpy(), own[name]) and p.grad is None
    with pytest.raises(RuntimeError, match="missing keys"):
        tg.func.functional_call(ours, {"0.weight": mine["0.weight"]}, (tg.tensor(x),), strict=True)


def test_an_ensemble_through_stack_module_state_and_vmap():
    tg.manual_seed(0)
    models = [nn.Linear(3, 2).double() for _ in range(4)]
    params, buffers = tg.func.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].requires_grad and not buffers
    x = tg.tensor(RNG.standard_normal((6, 3)))

    def one_model(p, b, data):
        return tg.func.functional_call(models[0], (p, b), (data,))
    out = tg.func.vmap(one_model, in_dims=(0, 0, None))(params, buffers, x)
    assert out.shape == (4, 6, 2)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(params["bias"].grad, np.full((4, 2), 6.0))


@pytest.mark.parametrize("in_dims, out_dims", [(0, 0), (1, 0), ((0, None), (1, 0)), ((None, 1), 0)])
def test_vmap_as_torch(in_dims, out_dims):
    a, b = RNG.standard_normal((4, 4)), RNG.standard_normal((4, 4))

    def f(x, y):
        return (x * y.sum()).exp(), x.max()
    ours, theirs = _both(a, b)
    for t in ours:
        t.requires_grad_()
    for t in theirs:
        t.requires_grad_()
    out = tg.func.vmap(f, in_dims, out_dims)(*ours)
    out_ref = torch.func.vmap(f, in_dims, out_dims)(*theirs)
    _close(out, out_ref)
    (out[0].sum() + out[1].sum()).backward()
    (out_ref[0].sum() + out_ref[1].sum()).backward()
    for t, r in zip(ours, theirs, strict=True):
        if r.grad is not None:
            np.testing.assert_allclose(t.grad, r.grad.numpy(), rtol=1e-12)


def test_vmap_of_grad_gives_per_sample_gradients():
    w = RNG.standard_normal(3)
    xs, ys = RNG.standard_normal((8, 1, 3)), RNG.standard_normal((8, 1))
    ours = tg.func.vmap(tg.func.grad(loss_fn), in_dims=(None, 0, 0))(tg.tensor(w), tg.tensor(xs),
                                                                     tg.tensor(ys))
    theirs = torch.func.vmap(torch.func.grad(loss_fn), in_dims=(None, 0, 0))(
        torch.tensor(w), torch.tensor(xs), torch.tensor(ys))
    _close(ours, theirs)
    assert ours.shape == (8, 3)


def test_vmap_errors():
    with pytest.raises(ValueError, match="same size"):
        tg.func.vmap(lambda a, b: a + b)(tg.ones(2), tg.ones(3))
    with pytest.raises(ValueError, match="in_dims"):  # (PyTorch: in_dims must be an int or a tuple)
        tg.func.vmap(lambda a: a, in_dims=None)(tg.ones(2))
    with pytest.raises(ValueError):
        tg.func.vmap(lambda a: a)(tg.ones(()))
