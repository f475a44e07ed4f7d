"""`tg.utils.checkpoint`: gradient checkpointing, against `torch.utils.checkpoint`.

The same float64 network is built in both libraries (tensorgrad's weights copied into PyTorch's),
run checkpointed and not, and the outputs and every gradient (inputs and the weights the function
closes over) compared; then dropout's mask under a rewound generator, several and non-tensor
outputs, `tg.autograd.grad`, second derivatives, the warnings and errors, and a count of the
tensors a checkpointed forward pass leaves alive.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.utils import checkpoint as cp

torch = pytest.importorskip("torch")
tcp = pytest.importorskip("torch.utils.checkpoint")

VARIANTS = [False, True]  # use_reentrant


def mlp(sizes: list[int], seed: int = 0, dropout: float = 0.0):
    """The same Linear/Tanh (/Dropout) network in tensorgrad and in PyTorch, float64."""
    tg.manual_seed(seed)
    ours, theirs = [], []
    for nin, nout in zip(sizes[:-1], sizes[1:], strict=True):
        layer = tg.nn.Linear(nin, nout).double()
        twin = torch.nn.Linear(nin, nout).double()
        with torch.no_grad():
            twin.weight.copy_(torch.from_numpy(layer.weight.data.copy()))
            twin.bias.copy_(torch.from_numpy(layer.bias.data.copy()))
        ours += [layer, tg.nn.Tanh()]
        theirs += [twin, torch.nn.Tanh()]
        if dropout:
            ours.append(tg.nn.Dropout(dropout))
    return tg.nn.Sequential(*ours), torch.nn.Sequential(*theirs)


def inputs(shape: tuple[int, ...], seed: int = 1):
    a = np.random.default_rng(seed).standard_normal(shape)
    return tg.tensor(a, dtype=tg.float64, requires_grad=True), torch.tensor(a, requires_grad=True)


def close(ours, theirs) -> None:
    ours = ours.data if isinstance(ours, tg.Tensor) else ours
    np.testing.assert_allclose(np.asarray(ours), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


def same_grads(model, twin, x, tx) -> None:
    close(x.grad, tx.grad)
    for (name, p), (_, q) in zip(model.named_parameters(), twin.named_parameters(), strict=True):
        assert p.grad is not None, name
        close(p.grad, q.grad)


# --- gradients equal to PyTorch's and to the plain run's -------------------------------------------


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_module_outputs_and_all_gradients_match_torch(use_reentrant):
    model, twin = mlp([4, 6, 5, 3])
    x, tx = inputs((2, 4))
    y = cp.checkpoint(model, x, use_reentrant=use_reentrant)
    ty = tcp.checkpoint(twin, tx, use_reentrant=use_reentrant)
    close(y, ty)
    assert y.requires_grad and y.dtype == tg.float64
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    same_grads(model, twin, x, tx)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_gradients_equal_the_plain_run(use_reentrant):
    model, _ = mlp([3, 8, 8, 2])
    x, _ = inputs((5, 3))
    model(x).pow(2).sum().backward()
    plain = [x.grad.copy()] + [p.grad.copy() for p in model.parameters()]
    model.zero_grad()
    x.grad = None
    cp.checkpoint(model, x, use_reentrant=use_reentrant).pow(2).sum().backward()
    for a, b in zip(plain, [x.grad] + [p.grad for p in model.parameters()], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
@pytest.mark.parametrize("segments", [1, 2, 3, 6])
def test_checkpoint_sequential_matches_torch(use_reentrant, segments):
    model, twin = mlp([3, 5, 5, 4, 4, 2, 2])
    x, tx = inputs((4, 3))
    y = cp.checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant)
    ty = tcp.checkpoint_sequential(twin, segments, tx, use_reentrant=use_reentrant)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    same_grads(model, twin, x, tx)


def test_checkpoint_sequential_takes_a_list_of_functions():
    x, tx = inputs((3,))
    y = cp.checkpoint_sequential([lambda t: t.sin(), lambda t: t * 3, lambda t: t.exp()], 2, x,
                                 use_reentrant=False)
    ty = tcp.checkpoint_sequential([lambda t: t.sin(), lambda t: t * 3, lambda t: t.exp()], 2, tx,
                                   use_reentrant=False)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad)


def test_gradcheck_through_checkpoint():
    w = tg.tensor(np.random.default_rng(2).standard_normal((3, 3)), dtype=tg.float64, requires_grad=True)
    x, _ = inputs((2, 3))

    def f(x, w):  # w as an input here; the closed-over case is checked against PyTorch above
        return cp.checkpoint(lambda a: (a @ w).tanh() * a, x, use_reentrant=False)

    assert tg.autograd.gradcheck(f, (x, w))


# --- dropout and the random generator ------------------------------------------------------------


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_dropout_recomputes_the_same_mask(use_reentrant):
    model, _ = mlp([6, 16, 16, 4], dropout=0.5)
    x, _ = inputs((8, 6))
    tg.manual_seed(7)
    plain_y = model(x)
    plain_y.sum().backward()
    plain = [x.grad.copy()] + [p.grad.copy() for p in model.parameters()]
    model.zero_grad()
    x.grad = None
    tg.manual_seed(7)
    y = cp.checkpoint(model, x, use_reentrant=use_reentrant)
    close_y = np.array_equal(y.data, plain_y.data)
    state = tg.get_rng_state()
    y.sum().backward()
    assert close_y
    assert tg.equal(tg.get_rng_state(), state)  # the recomputation left the caller's generator alone
    for a, b in zip(plain, [x.grad] + [p.grad for p in model.parameters()], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)


def test_without_preserve_rng_state_the_mask_differs():
    model, _ = mlp([6, 16, 4], dropout=0.5)
    x, _ = inputs((8, 6))
    tg.manual_seed(7)
    model(x).sum().backward()
    plain = x.grad.copy()
    x.grad = None
    tg.manual_seed(7)
    cp.checkpoint(model, x, use_reentrant=False, preserve_rng_state=False).sum().backward()
    assert not np.allclose(plain, x.grad)


def test_checkpoint_sequential_preserves_rng_state_too():
    model, _ = mlp([6, 16, 16, 16, 4], dropout=0.3)
    x, _ = inputs((8, 6))
    tg.manual_seed(3)
    model(x).sum().backward()
    plain = x.grad.copy()
    x.grad = None
    tg.manual_seed(3)
    cp.checkpoint_sequential(model, 3, x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(plain, x.grad, rtol=1e-13)


# --- outputs: several, non-tensor, nested ----------------------------------------------------------


def both(x, lib):
    return (x.sin(), 3, x.argmax(), x.detach() * 2, (x * x).sum())


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_several_and_non_tensor_outputs(use_reentrant):
    x, tx = inputs((2, 3))
    out = cp.checkpoint(both, x, tg, use_reentrant=use_reentrant)
    tout = tcp.checkpoint(both, tx, torch, use_reentrant=use_reentrant)
    assert out[1] == tout[1] == 3
    assert [o.requires_grad for o in out if isinstance(o, tg.Tensor)] == \
        [o.requires_grad for o in tout if isinstance(o, torch.Tensor)]
    assert out[2].dtype == tg.int64 and out[2].item() == tout[2].item()
    for o, t in zip(out, tout, strict=True):
        if isinstance(o, tg.Tensor):
            close(o, t)
    (out[0].sum() * out[4]).backward()
    (tout[0].sum() * tout[4]).backward()
    close(x.grad, tx.grad)


def test_one_output_unused_in_the_loss():
    x, tx = inputs((4,))
    a, b = cp.checkpoint(lambda t: (t.exp(), t.cos()), x, use_reentrant=False)
    ta, tb = tcp.checkpoint(lambda t: (t.exp(), t.cos()), tx, use_reentrant=False)
    b.sum().backward()
    tb.sum().backward()
    close(x.grad, tx.grad)


def test_nested_outputs_keep_their_structure():
    x, tx = inputs((2, 2))

    def f(t):
        return {"a": t.sum(), "b": [t * 2, "label"], "c": (t.tanh(),)}

    out = cp.checkpoint(f, x, use_reentrant=False)
    tout = tcp.checkpoint(f, tx, use_reentrant=False)
    assert set(out) == {"a", "b", "c"} and out["b"][1] == "label" and isinstance(out["c"], tuple)
    (out["a"] + out["b"][0].sum() + out["c"][0].pow(3).sum()).backward()
    (tout["a"] + tout["b"][0].sum() + tout["c"][0].pow(3).sum()).backward()
    close(x.grad, tx.grad)


# --- tg.autograd.grad, create_graph, closed-over tensors -------------------------------------------


def test_autograd_grad_reaches_the_closed_over_weights():
    model, twin = mlp([3, 4, 2])
    x, tx = inputs((5, 3))
    y = cp.checkpoint(model, x, use_reentrant=False).sum()
    ty = tcp.checkpoint(twin, tx, use_reentrant=False).sum()
    grads = tg.autograd.grad(y, [x, *model.parameters()])
    tgrads = torch.autograd.grad(ty, [tx, *twin.parameters()])
    for g, t in zip(grads, tgrads, strict=True):
        close(g, t)
    assert x.grad is None and all(p.grad is None for p in model.parameters())


def test_reentrant_refuses_autograd_grad_as_torch_does():
    x, tx = inputs((3,))
    y = cp.checkpoint(lambda t: t.exp(), x, use_reentrant=True).sum()
    ty = tcp.checkpoint(lambda t: t.exp(), tx, use_reentrant=True).sum()
    with pytest.raises(RuntimeError, match="incompatible with .grad()"):
        torch.autograd.grad(ty, tx)
    with pytest.raises(RuntimeError, match="incompatible with .grad()"):
        tg.autograd.grad(y, x)


def test_second_derivatives_match_torch():
    model, twin = mlp([3, 4, 2])
    x, tx = inputs((2, 3))
    y = cp.checkpoint(model, x, use_reentrant=False).pow(2).sum()
    ty = tcp.checkpoint(twin, tx, use_reentrant=False).pow(2).sum()
    (g,) = tg.autograd.grad(y, x, create_graph=True)
    (tg_,) = torch.autograd.grad(ty, tx, create_graph=True)
    close(g, tg_)
    penalty, tpenalty = g.pow(2).sum(), tg_.pow(2).sum()
    grads = tg.autograd.grad(penalty, [x, *model.parameters()])
    tgrads = torch.autograd.grad(tpenalty, [tx, *twin.parameters()])
    for a, b in zip(grads, tgrads, strict=True):
        np.testing.assert_allclose(a.data, b.numpy(), rtol=1e-11, atol=1e-12)


def test_gradgradcheck_through_checkpoint():
    x, _ = inputs((2, 3))
    assert tg.autograd.gradgradcheck(
        lambda t: cp.checkpoint(lambda a: (a.sin() * a).sum(0), t, use_reentrant=False), (x,))


def test_closed_over_inner_tensor_and_its_other_uses():
    """A tensor computed before the call (not a leaf) read by the function, and used elsewhere too:
    its gradient adds both, and the outer graph is left intact."""
    w0 = np.random.default_rng(3).standard_normal((3, 3))
    results = []
    for lib, leaf, ckpt in ((tg, lambda a: tg.tensor(a, requires_grad=True), cp.checkpoint),
                            (torch, lambda a: torch.tensor(a, requires_grad=True), tcp.checkpoint)):
        w = leaf(w0)
        h = w * 2 + 1  # inner node
        x = leaf(np.arange(6.0).reshape(2, 3) / 7)
        y = ckpt(lambda t: (t @ h).tanh(), x, use_reentrant=False)
        loss = y.sum() + (h * h).sum()
        loss.backward()
        results.append((w.grad, x.grad))
    (ours_w, ours_x), (theirs_w, theirs_x) = results
    close(ours_w, theirs_w)
    close(ours_x, theirs_x)


def test_weight_hooks_run_once():
    for lib, ckpt in ((tg, cp.checkpoint), (torch, tcp.checkpoint)):
        w = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        calls = []
        w.register_hook(lambda g: calls.append(1))
        x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        ckpt(lambda t: (t @ w).tanh(), x, use_reentrant=False).sum().backward()
        assert len(calls) == 1, lib.__name__


def test_weights_get_gradients_when_the_input_needs_none():
    """Non-reentrant: the weights still get theirs. Reentrant: PyTorch warns and gives none."""
    model, twin = mlp([3, 2])
    x = tg.ones(4, 3, dtype=tg.float64)
    tx = torch.ones(4, 3, dtype=torch.float64)
    cp.checkpoint(model, x, use_reentrant=False).sum().backward()
    tcp.checkpoint(twin, tx, use_reentrant=False).sum().backward()
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        close(p.grad, q.grad)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = cp.checkpoint(model, x, use_reentrant=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        ty = tcp.checkpoint(twin, tx, use_reentrant=True)
    assert y.requires_grad is ty.requires_grad is False


def test_nothing_requires_grad_or_grad_mode_off():
    x = tg.ones(3, dtype=tg.float64)
    assert not cp.checkpoint(lambda t: t * 2, x, use_reentrant=False).requires_grad
    y = tg.ones(3, dtype=tg.float64, requires_grad=True)
    with tg.no_grad():
        assert not cp.checkpoint(lambda t: t * 2, y, use_reentrant=False).requires_grad


def test_keyword_arguments_with_use_reentrant_false():
    x, tx = inputs((3,))
    y = cp.checkpoint(lambda t, scale=1.0: t.exp() * scale, x, use_reentrant=False, scale=3.0)
    ty = tcp.checkpoint(lambda t, scale=1.0: t.exp() * scale, tx, use_reentrant=False, scale=3.0)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_retain_graph_allows_a_second_backward(use_reentrant):
    x, tx = inputs((3,))
    y = cp.checkpoint(lambda t: t.sin() * t, x, use_reentrant=use_reentrant).sum()
    ty = tcp.checkpoint(lambda t: t.sin() * t, tx, use_reentrant=use_reentrant).sum()
    y.backward(retain_graph=True)
    y.backward()
    ty.backward(retain_graph=True)
    ty.backward()
    close(x.grad, tx.grad)


def test_nested_checkpoints():
    x, tx = inputs((2, 3))

    def outer(ckpt):
        return lambda t: ckpt(lambda u: u.tanh() * 2, t.sin(), use_reentrant=False).exp()

    y = cp.checkpoint(outer(cp.checkpoint), x, use_reentrant=False)
    ty = tcp.checkpoint(outer(tcp.checkpoint), tx, use_reentrant=False)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad)


# --- warnings and errors ----------------------------------------------------------------------------


def test_use_reentrant_not_passed_warns_as_torch_does():
    x, tx = inputs((3,))
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        tcp.checkpoint(lambda t: t * 2, tx)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        y = cp.checkpoint(lambda t: t * 2, x)
    assert y.op == "CheckpointFunction"  # the default is still the reentrant variant
    with pytest.warns(UserWarning, match="use_reentrant"):
        cp.checkpoint_sequential([lambda t: t * 2, lambda t: t + 1], 2, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cp.checkpoint(lambda t: t * 2, x, use_reentrant=False)


def test_errors_match_torch():
    x, tx = inputs((3,))
    cases = [
        dict(use_reentrant=True, scale=2.0),  # keyword arguments need use_reentrant=False
        dict(use_reentrant=True, debug=True),
        dict(use_reentrant=True, context_fn=lambda: (None, None)),
        dict(use_reentrant=False, determinism_check="sometimes"),
    ]
    for kwargs in cases:
        with pytest.raises(ValueError) as theirs:
            tcp.checkpoint(lambda t, scale=1.0: t * scale, tx, **kwargs)
        with pytest.raises(ValueError) as ours:
            cp.checkpoint(lambda t, scale=1.0: t * scale, x, **kwargs)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        cp.checkpoint_sequential([lambda t: t], 1, x, use_reentrant=False, scale=2.0)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_input_changed_in_place_before_backward_raises(use_reentrant):
    base = tg.ones(3, dtype=tg.float64, requires_grad=True)
    x = base * 1
    y = cp.checkpoint(lambda t: (t * t).sum(), x, use_reentrant=use_reentrant)
    with tg.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError, match="in-place"):
        y.backward()


def test_recomputation_that_differs_is_a_checkpoint_error():
    calls = []

    def f(t):
        calls.append(1)
        return t[: len(calls)].exp()  # a different shape each call

    x = tg.ones(3, dtype=tg.float64, requires_grad=True)
    y = cp.checkpoint(f, x, use_reentrant=False)
    with pytest.raises(cp.CheckpointError, match="different metadata"):
        y.sum().backward()
    assert issubclass(cp.CheckpointError, RuntimeError)


def test_context_fn_wraps_forward_and_recomputation():
    seen = []

    class Mark:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            seen.append(self.name)

        def __exit__(self, *exc):
            return False

    x, _ = inputs((3,))
    y = cp.checkpoint(lambda t: t.exp(), x, use_reentrant=False, context_fn=lambda: (Mark("fwd"), Mark("re")))
    assert seen == ["fwd"]
    y.sum().backward()
    assert seen == ["fwd", "re"]
    np.testing.assert_allclose(x.grad, np.exp(x.data))


# --- what checkpointing is for: the intermediates are gone ----------------------------------------


def recording(module, arrays: list):
    """module, keeping a weak reference to the array of each output it makes."""
    def run(x):
        out = module(x)
        arrays.append(weakref.ref(out.data))
        return out
    return run


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_checkpointed_forward_frees_the_intermediates(use_reentrant):
    tg.manual_seed(0)
    layers = []
    for _ in range(16):
        layers += [tg.nn.Linear(32, 32), tg.nn.ReLU()]
    x = tg.randn(8, 32, requires_grad=True)
    plain_arrays, arrays = [], []
    y = x
    for f in [recording(m, plain_arrays) for m in layers]:
        y = f(y)
    plain = sum(ref() is not None for ref in plain_arrays)
    del y
    functions = [recording(m, arrays) for m in layers]
    y = cp.checkpoint_sequential(functions, 4, x, use_reentrant=use_reentrant)
    checkpointed = sum(ref() is not None for ref in arrays)
    # Plain: every module's output stays alive for backward (2 per layer, 16 layers). Four segments
    # of 8 modules: only the 3 checkpointed segments' outputs and the 8 of the last one, run plainly.
    assert len(plain_arrays) == len(arrays) == 32
    assert plain == 32
    assert checkpointed == 3 + 8
    y.sum().backward()
    assert len(arrays) == 32 + 24  # backward ran the 3 checkpointed segments again
    del y
    assert sum(ref() is not None for ref in arrays) == 0
    assert all(p.grad is not None for layer in layers for p in layer.parameters())
