"""`t.grad_fn` as PyTorch's node object (tensorgrad/graph.py), compared with PyTorch's.

The graph of a small MLP's loss is walked in both libraries at once (names, next_functions'
None / AccumulateGrad / node pattern, which leaf each AccumulateGrad holds); then the names of
the common ops, identity, metadata, pre- and post-hooks changing gradients as PyTorch's do, and
the repr.
"""

from __future__ import annotations

import gc
import re

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.random((3, 4)) + 0.5
B = RNG.random((4, 5))
V = RNG.random(4)
C3 = RNG.random((2, 3, 4))
D3 = RNG.random((2, 4, 5))


def leaves(*arrays: np.ndarray) -> tuple[list, list]:
    """The same float64 leaves that require grad, in tensorgrad and in PyTorch."""
    return ([tg.tensor(a, dtype=tg.float64, requires_grad=True) for a in arrays],
            [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays])


def mlp_loss(lib, F, x, y, W1, b1, W2, b2):
    """A two-layer MLP's mean squared error, written with the ops both graphs hold alike."""
    h = lib.tanh(x @ W1 + b1)
    out = F.relu(h @ W2 + b2)
    return ((out - y) ** 2).mean()


def walk_both(ours, theirs, leaf_pairs: dict, seen: set) -> int:
    """Compare two graphs node by node from their roots; returns how many nodes were compared."""
    assert type(ours).__name__ == type(theirs).__name__ and ours.name() == theirs.name()
    if theirs.name() == "torch::autograd::AccumulateGrad":
        assert leaf_pairs[id(theirs.variable)] is ours.variable
        return 1
    if id(ours) in seen:
        return 0
    seen.add(id(ours))
    assert len(ours.next_functions) == len(theirs.next_functions), ours.name()
    count = 1
    for (a, i), (b, j) in zip(ours.next_functions, theirs.next_functions, strict=True):
        assert i == j and (a is None) == (b is None)
        if a is not None:
            count += walk_both(a, b, leaf_pairs, seen)
    return count


def test_mlp_graph_matches_pytorch():
    (W1, b1, W2, b2), params_t = leaves(RNG.random((4, 6)), RNG.random(6), RNG.random((6, 2)), RNG.random(2))
    x, y = RNG.random((5, 4)), RNG.random((5, 2))
    loss = mlp_loss(tg, tg.nn.functional, tg.tensor(x), tg.tensor(y), W1, b1, W2, b2)
    loss_t = mlp_loss(torch, torch.nn.functional, torch.tensor(x), torch.tensor(y), *params_t)
    pairs = {id(t): o for t, o in zip(params_t, (W1, b1, W2, b2), strict=True)}
    assert walk_both(loss.grad_fn, loss_t.grad_fn, pairs, set()) == 13
    assert loss.grad_fn.name() == "MeanBackward0"
    # The tutorial's walk: loss.grad_fn.next_functions[0][0] is the op under it.
    under, under_t = loss.grad_fn.next_functions[0][0], loss_t.grad_fn.next_functions[0][0]
    assert under.name() == under_t.name() == "PowBackward0"


NAMED = [
    ("mul", lambda m, F, a, b: a * b, (A, A)), ("mul scalar", lambda m, F, a: a * 2, (A,)),
    ("add", lambda m, F, a, b: a + b, (A, A)), ("sub", lambda m, F, a, b: a - b, (A, A)),
    ("div", lambda m, F, a, b: a / b, (A, A)), ("pow int", lambda m, F, a: a ** 2, (A,)),
    ("pow tensor", lambda m, F, a, b: a ** b, (A, A)), ("sum", lambda m, F, a: a.sum(), (A,)),
    ("sum dim", lambda m, F, a: a.sum(0), (A,)), ("mean", lambda m, F, a: a.mean(), (A,)),
    ("mean dim", lambda m, F, a: a.mean(1), (A,)), ("exp", lambda m, F, a: a.exp(), (A,)),
    ("log", lambda m, F, a: a.log(), (A,)), ("tanh", lambda m, F, a: a.tanh(), (A,)),
    ("sigmoid", lambda m, F, a: a.sigmoid(), (A,)), ("relu", lambda m, F, a: F.relu(a), (A,)),
    ("mm", lambda m, F, a, b: a @ b, (A, B)), ("mv", lambda m, F, a, v: a @ v, (A, V)),
    ("dot", lambda m, F, u, v: u @ v, (V, V)), ("bmm", lambda m, F, a, b: m.bmm(a, b), (C3, D3)),
    ("t", lambda m, F, a: a.t(), (A,)), ("view", lambda m, F, a: a.view(12), (A,)),
    ("reshape", lambda m, F, a: a.reshape(4, 3), (A,)), ("select", lambda m, F, a: a[0], (A,)),
    ("slice", lambda m, F, a: a[0:2], (A,)), ("index", lambda m, F, a: a[[0, 2]], (A,)),
    ("neg", lambda m, F, a: -a, (A,)), ("sqrt", lambda m, F, a: a.sqrt(), (A,)),
    ("max", lambda m, F, a: a.max(), (A,)), ("max dim", lambda m, F, a: a.max(0)[0], (A,)),
    ("softmax", lambda m, F, a: F.softmax(a, dim=1), (A,)),
    ("log_softmax", lambda m, F, a: F.log_softmax(a, dim=1), (A,)),
    ("cat", lambda m, F, a: m.cat([a, a]), (A,)), ("stack", lambda m, F, a: m.stack([a, a]), (A,)),
    ("transpose", lambda m, F, a: a.transpose(0, 1), (A,)),
    ("permute", lambda m, F, a: a.permute(1, 0), (A,)),
    ("unsqueeze", lambda m, F, a: a.unsqueeze(0), (A,)), ("expand", lambda m, F, a: a.expand(2, 3, 4), (A,)),
    ("clone", lambda m, F, a: a.clone(), (A,)), ("clamp", lambda m, F, a: a.clamp(0.6, 1.0), (A,)),
    ("where", lambda m, F, a: m.where(a > 1.0, a, 0.0), (A,)),
    ("maximum", lambda m, F, a, b: m.maximum(a, b), (A, A)),
    ("to", lambda m, F, a: a.float(), (A,)), ("gelu", lambda m, F, a: F.gelu(a), (A,)),
    ("T", lambda m, F, a: a.T, (A,)), ("narrow", lambda m, F, a: a.narrow(1, 1, 2), (A,)),
    ("square", lambda m, F, a: a.square(), (A,)), ("number over", lambda m, F, a: 2.0 / a, (A,)),
    ("layer_norm", lambda m, F, a, w, b: F.layer_norm(a, (4,), w, b), (A, V, V)),
    ("mse_loss", lambda m, F, a, b: F.mse_loss(a, b), (A, A)),
    ("mse_loss none", lambda m, F, a, b: F.mse_loss(a, b, reduction="none"), (A, A)),
]


@pytest.mark.parametrize(("label", "f", "arrays"), NAMED, ids=[n[0] for n in NAMED])
def test_names_of_common_ops(label, f, arrays):
    ours, theirs = leaves(*arrays)
    out, out_t = f(tg, tg.nn.functional, *ours), f(torch, torch.nn.functional, *theirs)
    assert out.grad_fn.name() == out_t.grad_fn.name() == type(out.grad_fn).__name__
    if label != "clamp":  # (tensorgrad's clip records its bounds as inputs: three next_functions)
        assert len(out.grad_fn.next_functions) == len(out_t.grad_fn.next_functions)


def test_fallback_name_and_leaves():
    (x,), _ = leaves(A)
    assert x.grad_fn is None and tg.tensor(A).exp().grad_fn is None
    with tg.no_grad():
        assert (x * 2).grad_fn is None
    loss = tg.nn.functional.cross_entropy(x, tg.tensor([0, 1, 2]))
    assert loss.grad_fn.name() == "CrossEntropyBackward0" and loss.op == "cross_entropy"


def test_identity():
    (x,), (xt,) = leaves(A)
    h, h_t = x * 2, xt * 2
    y, y_t = h.exp(), h_t.exp()
    assert y.grad_fn is y.grad_fn and y_t.grad_fn is y_t.grad_fn
    assert (x * 2).grad_fn is not h.grad_fn
    assert y.grad_fn.next_functions[0][0] is h.grad_fn
    assert y_t.grad_fn.next_functions[0][0] is h_t.grad_fn
    acc = h.grad_fn.next_functions[0][0]
    assert acc is (x + 1).grad_fn.next_functions[0][0] and acc.variable is x
    assert isinstance(acc, tg.autograd.graph.Node) and isinstance(y.grad_fn, tg.autograd.graph.Node)
    assert acc.next_functions == () == h_t.grad_fn.next_functions[0][0].next_functions


def test_node_outlives_backward_and_changes_with_inplace():
    (x,), (xt,) = leaves(A)
    y, y_t = (x * 2).sum(), (xt * 2).sum()
    node, node_t = y.grad_fn, y_t.grad_fn
    y.backward()
    y_t.backward()
    assert y.grad_fn is node and y_t.grad_fn is node_t and node.name() == node_t.name() == "SumBackward0"
    assert node.next_functions[0][0].name() == "MulBackward0"
    assert (x * 2).sum().grad_fn.name() == "SumBackward0"  # a node first asked for after backward
    z, z_t = x * 1, xt * 1
    before, before_t = z.grad_fn, z_t.grad_fn
    z.add_(1)
    z_t.add_(1)
    assert z.grad_fn is not before and z.grad_fn.name() == z_t.grad_fn.name() == "AddBackward0"
    assert z.grad_fn.next_functions[0][0] is before
    assert z_t.grad_fn.next_functions[0][0] is before_t


def test_metadata_is_kept():
    (x,), (xt,) = leaves(A)
    y, y_t = x.exp(), xt.exp()
    assert y.grad_fn.metadata == {} == y_t.grad_fn.metadata
    y.grad_fn.metadata["step"] = 3
    y_t.grad_fn.metadata["step"] = 3
    gc.collect()
    assert y.grad_fn.metadata == {"step": 3} == y_t.grad_fn.metadata
    assert (x * 1).grad_fn.metadata == {}


def test_repr():
    (x,), _ = leaves(A)
    node = (x * 2).grad_fn
    assert re.fullmatch(r"<MulBackward0 object at 0x[0-9a-f]+>", repr(node))
    assert re.fullmatch(r"<AccumulateGrad object at 0x[0-9a-f]+>", repr(node.next_functions[0][0]))
    assert repr(node.next_functions) == f"(({node.next_functions[0][0]!r}, 0), (None, 0))"


def run_both(register):
    """y = sum(exp(x * 3)); `register(lib, node of x * 3)` before backward; x's gradients."""
    grads = []
    for lib, leaf in zip((tg, torch), leaves(A), strict=True):
        x = leaf[0]
        h = x * 3
        y = h.exp().sum()
        handles = register(lib, h, y)
        y.backward()
        for handle in handles or ():
            handle.remove()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
    return grads[0]


def test_prehook_replaces_gradient():
    seen = []

    def register(lib, h, y):
        def prehook(grad_outputs):
            seen.append(tuple(grad_outputs[0].shape))
            return (grad_outputs[0] * 2,)
        return [h.grad_fn.register_prehook(prehook)]

    doubled = run_both(register)
    assert seen == [(3, 4), (3, 4)]
    np.testing.assert_allclose(doubled, 6 * np.exp(3 * A), rtol=1e-12)


def test_prehook_runs_after_tensor_hooks_and_returns_none():
    def register(lib, h, y):
        node_hook = h.grad_fn.register_prehook(lambda g: (g[0] * 10,))
        keep = h.grad_fn.register_prehook(lambda g: None)
        tensor_hook = h.register_hook(lambda g: g + 1)  # registered later, but runs first
        return [node_hook, keep, tensor_hook]

    run_both(register)


def test_prehook_removed_and_on_accumulate_grad():
    def register(lib, h, y):
        h.grad_fn.register_prehook(lambda g: (g[0] * 0,)).remove()
        acc = h.grad_fn.next_functions[0][0]
        return [acc.register_prehook(lambda g: (g[0] - 1,))]

    run_both(register)


def test_post_hook_sees_and_replaces_grad_inputs():
    seen = []

    def register(lib, h, y):
        def hook(grad_inputs, grad_outputs):
            seen.append((len(grad_inputs), grad_inputs[1] is None, tuple(grad_outputs[0].shape)))
            return (grad_inputs[0] * 0.5, None)
        return [h.grad_fn.register_hook(hook)]

    halved = run_both(register)
    assert seen == [(2, True, (3, 4))] * 2
    np.testing.assert_allclose(halved, 1.5 * np.exp(3 * A), rtol=1e-12)


def test_post_hook_removed_leaves_backward_as_before():
    (x,), _ = leaves(A)
    h = x * 3
    edges = h._backward.args[3]
    before = list(edges)
    h.grad_fn.register_hook(lambda gi, go: None).remove()
    assert edges == before
    h.exp().sum().backward()
    np.testing.assert_allclose(x.grad, 3 * np.exp(3 * A), rtol=1e-12)


def test_hook_wrong_count_raises():
    (x,), _ = leaves(A)
    h = x * 3
    h.grad_fn.register_prehook(lambda g: (g[0], g[0]))
    with pytest.raises(RuntimeError, match="MulBackward0"):
        h.sum().backward()
    (x,), _ = leaves(A)
    h = x * 3
    h.grad_fn.register_hook(lambda gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="MulBackward0"):
        h.sum().backward()


def test_hooked_gradients_against_finite_differences():
    def f(x):
        h = x * 3
        if h.grad_fn is not None:  # (gradcheck's finite differences run under no_grad)
            h.grad_fn.register_hook(lambda gi, go: None)  # the edges wrapped, the values unchanged
        return h.tanh()

    (x,), _ = leaves(A)
    assert tg.autograd.gradcheck(f, [x])


class TgExp(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, other):
        return x.exp() * k

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


class TorchExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, other):
        return x.exp() * k

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


def test_custom_function_node():
    (x,), (xt,) = leaves(A)
    y, y_t = TgExp.apply(x, 2.0, tg.tensor(A)), TorchExp.apply(xt, 2.0, torch.tensor(A))
    assert y.grad_fn.name() == "TgExpBackward" and y_t.grad_fn.name() == "TorchExpBackward"
    pattern = [(type(n).__name__ if n is not None else None, i) for n, i in y.grad_fn.next_functions]
    pattern_t = [(type(n).__name__ if n is not None else None, i) for n, i in y_t.grad_fn.next_functions]
    assert pattern == pattern_t == [("AccumulateGrad", 0), (None, 0)]
    assert y.grad_fn.next_functions[0][0].variable is x


class TgTwo(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 2 + gb * 3


class TorchTwo(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 2 + gb * 3


def test_function_with_two_outputs_is_one_node():
    (x,), (xt,) = leaves(A)
    (a, b), (a_t, b_t) = TgTwo.apply(x), TorchTwo.apply(xt)
    assert a.grad_fn is b.grad_fn and a_t.grad_fn is b_t.grad_fn
    s, s_t = a + b, a_t + b_t
    assert [i for _, i in s.grad_fn.next_functions] == [i for _, i in s_t.grad_fn.next_functions] == [0, 1]
    assert s.grad_fn.next_functions[1][0] is a.grad_fn


def test_the_graph_module_imports_by_pytorchs_dotted_path():
    import importlib

    module = importlib.import_module("tensorgrad.autograd.graph")
    assert module is tg.autograd.graph
    assert isinstance((tg.ones(2, requires_grad=True) * 2).grad_fn, module.Node)


P = RNG.uniform(0.1, 0.9, (3, 4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                                  "smooth_l1_loss", "huber_loss"])
def test_a_loss_is_one_node_named_as_pytorchs(loss, reduction):
    """PyTorch's loss kernels are one node each, the reduction inside (MseLossBackward0, not a
    MeanBackward0 over a PowBackward0): so are these, with the same name and gradients."""
    (x, target), (x_t, target_t) = leaves(P, A * 0.2)
    ours = getattr(tg.nn.functional, loss)(x, target.detach(), reduction=reduction)
    theirs = getattr(torch.nn.functional, loss)(x_t, target_t.detach(), reduction=reduction)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(x.grad, x_t.grad.numpy(), rtol=1e-12)


def test_l1_loss_walks_as_pytorchs_composite():
    """PyTorch's l1_loss is |input - target| and then its mean: three nodes, here too."""
    (x, target), (x_t, target_t) = leaves(P, A)
    node = tg.nn.functional.l1_loss(x, target).grad_fn
    node_t = torch.nn.functional.l1_loss(x_t, target_t).grad_fn
    for _ in range(3):
        assert node.name() == node_t.name()
        node, node_t = node.next_functions[0][0], node_t.next_functions[0][0]
