"""Parametrizations (`nn.utils.parametrize`), weight and spectral normalisation, new and old forms,
against PyTorch: the module's class and repr, its state dict keys, the values it computes and the
gradients reaching the originals, the power iteration's buffers step by step, and the errors.

The random starting vectors of spectral normalisation come from each library's own generator,
so the tests load PyTorch's state dict into tensorgrad's module (the keys are the same) before
comparing steps.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import nn

torch = pytest.importorskip("torch")
# The hook form of weight_norm is deprecated in both libraries, with a FutureWarning saying so.
pytestmark = pytest.mark.filterwarnings("ignore:.*weight_norm. is deprecated:FutureWarning")
parametrize, P = nn.utils.parametrize, nn.utils.parametrizations
their_parametrize, TP = torch.nn.utils.parametrize, torch.nn.utils.parametrizations


def _pair(make_ours, make_theirs, seed=0):
    """The same layer in both libraries, with PyTorch's initial weights copied into ours."""
    torch.manual_seed(seed)
    theirs = make_theirs().double()
    ours = make_ours().double()
    ours.load_state_dict({key: value.numpy() for key, value in theirs.state_dict().items()})
    return ours, theirs


def _state(module):
    return {key: np.asarray(value.detach().numpy() if hasattr(value, "detach") else value)
            for key, value in module.state_dict().items()}


def _assert_same_state(ours, theirs, rtol=1e-12):
    mine, reference = _state(ours), _state(theirs)
    assert list(mine) == list(reference)
    for key in reference:
        np.testing.assert_allclose(mine[key], reference[key], rtol=rtol, atol=1e-14, err_msg=key)


def _forward_backward(module, m, x):
    out = module(m.tensor(x, dtype=m.float64))
    (out * out).sum().backward()
    return out.detach().numpy()


def _assert_same_grads(ours, theirs):
    mine = dict(ours.named_parameters())
    reference = dict(theirs.named_parameters())
    assert list(mine) == list(reference)
    for name, p in reference.items():
        np.testing.assert_allclose(np.asarray(mine[name].grad), p.grad.numpy(), rtol=1e-10, atol=1e-13,
                                   err_msg=name)


class Symmetric(nn.Module):
    def forward(self, X):  # noqa: N803 - PyTorch's tutorial's name
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):  # noqa: N803
        return A.triu()


class TheirSymmetric(torch.nn.Module):
    def forward(self, X):  # noqa: N803
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):  # noqa: N803
        return A.triu()


class Scale(nn.Module):
    def forward(self, X):  # noqa: N803
        return 2 * X


class TheirScale(torch.nn.Module):
    def forward(self, X):  # noqa: N803
        return 2 * X


X = np.random.default_rng(0).standard_normal((5, 3))


def test_a_registered_parametrization_computes_the_tensor_and_trains_the_original():
    ours, theirs = _pair(lambda: nn.Linear(3, 3), lambda: torch.nn.Linear(3, 3))
    weight = ours.weight
    parametrize.register_parametrization(ours, "weight", Symmetric())
    their_parametrize.register_parametrization(theirs, "weight", TheirSymmetric())
    parametrize.register_parametrization(ours, "weight", Scale())  # a second one applies after the first
    their_parametrize.register_parametrization(theirs, "weight", TheirScale())
    assert type(ours).__name__ == "ParametrizedLinear" and isinstance(ours, nn.Linear)
    assert repr(ours).replace("Symmetric", "S").replace("Scale", "C") == \
        repr(theirs).replace("TheirSymmetric", "S").replace("TheirScale", "C")
    assert ours.parametrizations.weight.original is weight  # the same object: an optimizer keeps it
    _assert_same_state(ours, theirs)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(_forward_backward(ours, tg, X), _forward_backward(theirs, torch, X),
                               rtol=1e-12)
    _assert_same_grads(ours, theirs)
    assert parametrize.is_parametrized(ours) and parametrize.is_parametrized(ours, "weight")
    assert not parametrize.is_parametrized(ours, "bias")
    assert parametrize.type_before_parametrizations(ours) is nn.Linear


def test_assigning_a_parametrized_tensor_goes_through_right_inverse():
    ours, theirs = _pair(lambda: nn.Linear(3, 3), lambda: torch.nn.Linear(3, 3))
    parametrize.register_parametrization(ours, "weight", Symmetric())
    their_parametrize.register_parametrization(theirs, "weight", TheirSymmetric())
    value = np.arange(9.0).reshape(3, 3)
    ours.weight = tg.tensor(value, dtype=tg.float64)
    theirs.weight = torch.tensor(value)
    _assert_same_state(ours, theirs)
    parametrize.register_parametrization(ours, "bias", Scale())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        ours.bias = tg.zeros(3, dtype=tg.float64)


def test_a_parametrization_may_not_change_shape_or_dtype_unless_unsafe():
    class First(nn.Module):
        def forward(self, X):  # noqa: N803
            return X[0]
    layer = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(layer, "weight", First())
    assert not parametrize.is_parametrized(layer) and type(layer) is nn.Linear
    parametrize.register_parametrization(layer, "weight", First(), unsafe=True)
    assert layer.weight.shape == (3,)
    with pytest.raises(ValueError, match="does not have a parameter"):
        parametrize.register_parametrization(nn.Linear(3, 2), "kernel", Scale())


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_removing_a_parametrization_gives_back_a_plain_module(leave_parametrized):
    ours, theirs = _pair(lambda: nn.Linear(3, 3), lambda: torch.nn.Linear(3, 3))
    weight = ours.weight
    for module, lib, sym in ((ours, parametrize, Symmetric), (theirs, their_parametrize, TheirSymmetric)):
        lib.register_parametrization(module, "weight", sym())
        lib.remove_parametrizations(module, "weight", leave_parametrized=leave_parametrized)
    assert type(ours) is nn.Linear and not hasattr(ours, "parametrizations")
    assert ours.weight is weight and isinstance(ours.weight, nn.Parameter)
    _assert_same_state(ours, theirs)
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(ours, "weight")


def test_cached_computes_a_parametrized_tensor_once_per_block():
    calls = []

    class Counted(nn.Module):
        def forward(self, X):  # noqa: N803
            calls.append(1)
            return X * 1

    layer = nn.Linear(3, 3)
    parametrize.register_parametrization(layer, "weight", Counted())
    calls.clear()
    with parametrize.cached():
        first, second = layer.weight, layer.weight
    assert len(calls) == 1 and first is second
    layer.weight, layer.weight  # noqa: B018 - two reads, two computations outside the block
    assert len(calls) == 3


@pytest.mark.parametrize("make, dim", [
    ((lambda m: m.nn.Linear(3, 4)), 0),
    ((lambda m: m.nn.Linear(3, 4)), 1),
    ((lambda m: m.nn.Linear(3, 4)), None),
    ((lambda m: m.nn.Conv1d(2, 3, 2)), 0),
])
@pytest.mark.parametrize("form", ["parametrization", "hook"])
def test_weight_norm_as_pytorch(make, dim, form):
    ours_fn = P.weight_norm if form == "parametrization" else nn.utils.weight_norm
    theirs_fn = TP.weight_norm if form == "parametrization" else torch.nn.utils.weight_norm
    torch.manual_seed(0)
    theirs = theirs_fn(make(torch).double(), dim=dim)
    ours = ours_fn(make(tg).double(), dim=dim)
    ours.load_state_dict({key: value.numpy() for key, value in theirs.state_dict().items()})
    _assert_same_state(ours, theirs)
    x = np.random.default_rng(1).standard_normal((4, 3) if isinstance(ours, nn.Linear) else (2, 2, 5))
    np.testing.assert_allclose(_forward_backward(ours, tg, x), _forward_backward(theirs, torch, x),
                               rtol=1e-12)
    _assert_same_grads(ours, theirs)


def test_weight_norm_keeps_the_weight_and_its_hook_form_is_removable():
    torch.manual_seed(0)
    theirs = torch.nn.Linear(3, 4).double()
    ours = nn.Linear(3, 4).double()
    ours.load_state_dict({key: value.numpy() for key, value in theirs.state_dict().items()})
    before = ours.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        nn.utils.weight_norm(ours)
    np.testing.assert_allclose(ours.weight.detach().numpy(), before, rtol=1e-14)
    assert [name for name, _ in ours.named_parameters()] == ["bias", "weight_g", "weight_v"]
    with pytest.raises(RuntimeError, match="two weight_norm hooks"):
        nn.utils.weight_norm(ours)
    nn.utils.remove_weight_norm(ours)
    assert [name for name, _ in ours.named_parameters()] == ["bias", "weight"]
    np.testing.assert_allclose(ours.weight.detach().numpy(), before, rtol=1e-14)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(ours)


@pytest.mark.parametrize("make", [
    lambda m: m.nn.Linear(3, 4),
    lambda m: m.nn.Conv2d(2, 3, 2),
    lambda m: m.nn.ConvTranspose2d(2, 3, 2),
])
@pytest.mark.parametrize("form", ["parametrization", "hook"])
def test_spectral_norm_follows_pytorchs_power_iteration(make, form):
    ours_fn = P.spectral_norm if form == "parametrization" else nn.utils.spectral_norm
    theirs_fn = TP.spectral_norm if form == "parametrization" else torch.nn.utils.spectral_norm
    torch.manual_seed(0)
    theirs = theirs_fn(make(torch).double())
    ours = ours_fn(make(tg).double())
    assert list(_state(ours)) == list(_state(theirs))
    ours.load_state_dict({key: value.numpy() for key, value in theirs.state_dict().items()})
    shape = (4, 3) if "Linear" in type(ours).__name__ else (1, 2, 4, 4)
    rng = np.random.default_rng(2)
    for step in range(3):  # training: one step of power iteration per forward
        x = rng.standard_normal(shape)
        for module in (ours, theirs):
            module.zero_grad()
        np.testing.assert_allclose(_forward_backward(ours, tg, x), _forward_backward(theirs, torch, x),
                                   rtol=1e-10, err_msg=f"step {step}")
        _assert_same_grads(ours, theirs)
        _assert_same_state(ours, theirs, rtol=1e-10)
    ours.eval(), theirs.eval()
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(ours(tg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10)
    _assert_same_state(ours, theirs, rtol=1e-10)  # eval: the vectors stay


def test_spectral_norm_makes_the_largest_singular_value_one():
    tg.manual_seed(0)
    layer = P.spectral_norm(nn.Linear(6, 5).double())
    for _ in range(20):
        layer(tg.ones(1, 6, dtype=tg.float64))
    assert np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-6)
    old = nn.utils.spectral_norm(nn.Linear(6, 5).double())
    for _ in range(30):
        old(tg.ones(1, 6, dtype=tg.float64))
    assert np.linalg.svd(old.weight.detach().numpy(), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-6)
    nn.utils.remove_spectral_norm(old)
    assert [name for name, _ in old.named_parameters()] == ["bias", "weight"]
    assert list(old.state_dict()) == ["bias", "weight"]


def test_spectral_norm_errors_as_pytorch():
    with pytest.raises(IndexError):
        P.spectral_norm(nn.Linear(3, 4), dim=2)
    with pytest.raises(ValueError, match="n_power_iterations"):
        P.spectral_norm(nn.Linear(3, 4), n_power_iterations=0)
    with pytest.raises(ValueError, match="no parameter or buffer"):
        P.spectral_norm(nn.Linear(3, 4), name="kernel")
    layer = nn.utils.spectral_norm(nn.Linear(3, 4))
    with pytest.raises(RuntimeError, match="two spectral_norm hooks"):
        nn.utils.spectral_norm(layer)


def test_weight_norm_gradient_against_finite_differences():
    layer = P.weight_norm(nn.Linear(3, 2).double())
    g, v = layer.parametrizations.weight.original0, layer.parametrizations.weight.original1
    x = tg.tensor(X, dtype=tg.float64)

    def f(g_, v_):
        return x @ (v_ * (g_ / (v_ * v_).sum(1, keepdim=True).sqrt())).T

    assert tg.gradcheck(f, (g.detach().requires_grad_(), v.detach().requires_grad_()))
    np.testing.assert_allclose(layer(x).detach().numpy() - layer.bias.detach().numpy(),
                               f(g, v).detach().numpy(), rtol=1e-13)
