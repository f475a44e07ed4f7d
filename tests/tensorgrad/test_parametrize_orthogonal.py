"""nn.utils.parametrizations.orthogonal against PyTorch's (float64): the weight, the originals,
their gradients, orthogonality, assignment through right_inverse and optimizer steps."""

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.nn.utils.parametrizations import orthogonal

torch = pytest.importorskip("torch")
torth = torch.nn.utils.parametrizations.orthogonal

MAPS = ["matrix_exp", "cayley", "householder"]


class _Holder:
    """A module holding one weight of a given shape, in both libraries."""

    @staticmethod
    def make(lib, values):
        module = lib.nn.Module()
        module.weight = lib.nn.Parameter(lib.tensor(values))
        return module


def _pair(shape, orthogonal_map, use_trivialization, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    ours, theirs = _Holder.make(tg, values.copy()), _Holder.make(torch, values.copy())
    orthogonal(ours, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    torth(theirs, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    if use_trivialization and shape[-1] != shape[-2]:  # the base was completed with random columns
        ours.parametrizations.weight[0].base.data = \
            theirs.parametrizations.weight[0].base.detach().numpy().copy()
    return ours, theirs


def _close(ours, theirs, tol=1e-12):
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    np.testing.assert_allclose(np.asarray(ours.detach().numpy() if hasattr(ours, "detach") else ours),
                               theirs, rtol=1e-10, atol=tol)


def _assert_orthogonal(q):
    q = q.detach().numpy()
    if q.shape[-2] < q.shape[-1]:
        q = np.swapaxes(q, -1, -2)
    gram = np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), atol=1e-12)


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6), (2, 4, 3)])
def test_weight_and_gradients_match_torch(shape, orthogonal_map, use_trivialization):
    ours, theirs = _pair(shape, orthogonal_map, use_trivialization)
    assert ours.weight.shape == tuple(theirs.weight.shape) and ours.weight.dtype == tg.float64
    _close(ours.weight, theirs.weight)
    _close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)
    _assert_orthogonal(ours.weight)
    grad = np.random.default_rng(1).standard_normal(shape)
    (ours.weight * tg.tensor(grad)).sum().backward()
    (theirs.weight * torch.tensor(grad)).sum().backward()
    _close(ours.parametrizations.weight.original.grad, theirs.parametrizations.weight.original.grad.numpy(),
           tol=1e-10)
    assert hasattr(ours.parametrizations.weight[0], "base") == use_trivialization


@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_gradcheck(orthogonal_map):
    module = _Holder.make(tg, np.random.default_rng(3).standard_normal((4, 3)))
    orthogonal(module, orthogonal_map=orthogonal_map, use_trivialization=False)
    parametrization = module.parametrizations.weight[0]
    x = module.parametrizations.weight.original.detach().clone().requires_grad_()
    if orthogonal_map == "householder":  # the diagonal holds signs (+-1), cut through .int(): kept fixed
        fixed = x.detach() - x.detach().tril(-1)
        assert tg.autograd.gradcheck(lambda a: parametrization(a.tril(-1) + fixed), (x,))
    else:
        assert tg.autograd.gradcheck(parametrization, (x,))


def test_default_map_and_linear():
    torch.manual_seed(0)
    layer = tg.nn.Linear(3, 3, dtype=tg.float64)
    orthogonal(layer)
    assert layer.parametrizations.weight[0].orthogonal_map.name == "matrix_exp"
    assert type(layer).__name__ == "ParametrizedLinear"
    wide = orthogonal(tg.nn.Linear(5, 2, dtype=tg.float64))
    assert wide.parametrizations.weight[0].orthogonal_map.name == "householder"
    _assert_orthogonal(wide.weight)
    assert set(wide.state_dict()) == {"bias", "parametrizations.weight.original",
                                      "parametrizations.weight.0.base"}


def test_an_orthogonal_weight_is_kept():
    q = np.linalg.qr(np.random.default_rng(4).standard_normal((4, 4)))[0]
    module = _Holder.make(tg, q.copy())
    orthogonal(module)
    _close(module.weight, q)
    _close(module.parametrizations.weight.original, -np.eye(4))


@pytest.mark.parametrize("orthogonal_map,use_trivialization",
                         [(m, True) for m in MAPS] + [("householder", False)])
def test_assignment_through_right_inverse(orthogonal_map, use_trivialization):
    ours, theirs = _pair((5, 3), orthogonal_map, use_trivialization)
    target = np.linalg.qr(np.random.default_rng(5).standard_normal((5, 3)))[0]
    with tg.no_grad():
        ours.weight = tg.tensor(target)
    with torch.no_grad():
        theirs.weight = torch.tensor(target)
    _close(ours.weight, target if use_trivialization or orthogonal_map == "householder" else theirs.weight)
    _close(ours.weight, theirs.weight)
    _close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)


def test_optimizer_steps_keep_it_orthogonal_as_torch():
    ours, theirs = _pair((4, 4), "cayley", True)
    opt = tg.optim.SGD(ours.parameters(), lr=0.1)
    target = np.random.default_rng(6).standard_normal((4, 4))
    for _ in range(4):
        opt.zero_grad()
        ((ours.weight - tg.tensor(target)) ** 2).sum().backward()
        ((theirs.weight - torch.tensor(target)) ** 2).sum().backward()
        opt.step()
        with torch.no_grad():  # plain SGD by hand (importing torch.optim alone takes seconds)
            for param in theirs.parameters():
                param -= 0.1 * param.grad
                param.grad = None
        _assert_orthogonal(ours.weight)
        _close(ours.weight, theirs.weight, tol=1e-10)


@pytest.mark.parametrize("call,error", [
    (lambda lib, orth: orth(lib.nn.Linear(3, 3), name="nope"), ValueError),
    (lambda lib, orth: orth(_Holder.make(lib, np.ones(3))), ValueError),
    (lambda lib, orth: orth(lib.nn.Linear(3, 3), orthogonal_map="qr"), ValueError),
    (lambda lib, orth: setattr(orth(lib.nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False),
                               "weight", lib.eye(3)), NotImplementedError),
    (lambda lib, orth: setattr(orth(lib.nn.Linear(3, 3)), "weight", lib.eye(2)), ValueError),
])
def test_errors_as_torch(call, error):
    with pytest.raises(error):
        call(torch, torth)
    with pytest.raises(error):
        call(tg, orthogonal)
