"""`Module.register_full_backward_hook` and `register_full_backward_pre_hook`, against PyTorch.

The same model is built in both libraries with the same weights; each hook records what it sees
(`grad_input`, `grad_output`, in call order), and the records, the call counts and the leaves'
gradients must agree, in float64. Then the rules that a wrong implementation gets wrong: None for
arguments that are not tensors (and for every input where none requires grad), zeros for a
tensor input without grad, None for an output without gradient, a returned tuple replacing the gradients,
removable handles, one call per backward pass, and no hooks (and no identity nodes) where none
are registered.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import nn

torch = pytest.importorskip("torch")

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])
Y = np.array([[0.5, -0.3, 0.8], [1.1, 0.2, -0.9]])


def linear_pair(nin: int, nout: int, seed: int = 0):
    ours = nn.Linear(nin, nout).double()
    theirs = torch.nn.Linear(nin, nout).double()
    rng = np.random.default_rng(seed)
    weight, bias = rng.standard_normal((nout, nin)), rng.standard_normal(nout)
    ours.weight.data[...] = weight
    ours.bias.data[...] = bias
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(weight))
        theirs.bias.copy_(torch.tensor(bias))
    return ours, theirs


def as_numpy(value):
    """A hook's gradient tuple as numpy arrays (None kept), from either library."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(as_numpy(v) for v in value)
    # (a copy: PyTorch adds a later pass's gradient into the tensor a hook saw, in place)
    return value.detach().numpy().copy() if isinstance(value, torch.Tensor) else np.array(value.data)


def assert_same_records(ours: list, theirs: list) -> None:
    assert len(ours) == len(theirs)
    for (name, *grads), (tname, *tgrads) in zip(ours, theirs, strict=True):
        assert name == tname
        for g, tg_ in zip(grads, tgrads, strict=True):
            assert len(g) == len(tg_)
            for a, b in zip(g, tg_, strict=True):
                assert (a is None) == (b is None), (name, g, tg_)
                if a is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def recorder(records: list, name: str, pre: bool = False):
    if pre:
        return lambda module, grad_output: records.append((name, as_numpy(grad_output)))
    return lambda module, grad_input, grad_output: records.append(
        (name, as_numpy(grad_input), as_numpy(grad_output)))


def test_linear_hooks_see_what_torchs_see():
    for x_requires_grad in (True, False):
        ours, theirs = linear_pair(3, 4)
        records, trecords = [], []
        for model, rec in ((ours, records), (theirs, trecords)):
            model.register_full_backward_pre_hook(recorder(rec, "pre", pre=True))
            model.register_full_backward_hook(recorder(rec, "hook"))
        x = tg.tensor(X, dtype=tg.float64, requires_grad=x_requires_grad)
        tx = torch.tensor(X, dtype=torch.float64, requires_grad=x_requires_grad)
        weights = np.arange(8.0).reshape(2, 4)
        (ours(x) * tg.tensor(weights)).sum().backward()
        (theirs(tx) * torch.tensor(weights)).sum().backward()
        assert [r[0] for r in records] == ["pre", "hook"]
        assert_same_records(records, trecords)
        if x_requires_grad:
            np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12)
        else:
            assert records[1][1] == (None,)  # an input that doesn't require grad gets None
        np.testing.assert_allclose(ours.weight.grad, theirs.weight.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_sequential_hooks_run_in_torchs_order_once_per_pass():
    ours_layers = [linear_pair(3, 5, 1), linear_pair(5, 2, 2)]
    ours = nn.Sequential(ours_layers[0][0], nn.Tanh(), ours_layers[1][0])
    theirs = torch.nn.Sequential(ours_layers[0][1], torch.nn.Tanh(), ours_layers[1][1])
    records, trecords = [], []
    for model, rec in ((ours, records), (theirs, trecords)):
        model.register_full_backward_hook(recorder(rec, "seq"))
        for i, layer in enumerate(model):
            layer.register_full_backward_hook(recorder(rec, f"layer{i}"))
            layer.register_full_backward_pre_hook(recorder(rec, f"pre{i}", pre=True))
    x = tg.tensor(X, dtype=tg.float64, requires_grad=True)
    tx = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    out, tout = ours(x), theirs(tx)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
    loss, tloss = (out * out).sum() + out.sum(), (tout * tout).sum() + tout.sum()  # the output used twice
    loss.backward(retain_graph=True)
    tloss.backward(retain_graph=True)
    assert_same_records(records, trecords)
    assert [r[0] for r in records] == [r[0] for r in trecords]
    assert len(records) == 7
    loss.backward()  # a second pass through the kept graph calls every hook again
    tloss.backward()
    assert_same_records(records, trecords)
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12)


class TwoInputs(nn.Module):
    """out = (a * w) @ b.T + scale (a non-tensor argument): two tensor inputs and a number."""

    def __init__(self, lib) -> None:
        super().__init__()
        self.lib = lib
        self.w = (nn.Parameter if lib is tg else torch.nn.Parameter)(lib.tensor(Y[0], dtype=lib.float64))

    def forward(self, a, scale, b):
        return (a * self.w) @ b.T + scale, (a - b).sum()


class TorchTwoInputs(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(Y[0], dtype=torch.float64))

    def forward(self, a, scale, b):
        return (a * self.w) @ b.T + scale, (a - b).sum()


def test_a_module_with_two_inputs_and_two_outputs():
    ours, theirs = TwoInputs(tg), TorchTwoInputs()
    for b_requires_grad in (True, False):
        records, trecords = [], []
        handles = [model.register_full_backward_hook(recorder(rec, "hook"))
                   for model, rec in ((ours, records), (theirs, trecords))]
        handles += [model.register_full_backward_pre_hook(recorder(rec, "pre", pre=True))
                    for model, rec in ((ours, records), (theirs, trecords))]
        a, b = tg.tensor(X, dtype=tg.float64, requires_grad=True), tg.tensor(Y, dtype=tg.float64,
                                                                               requires_grad=b_requires_grad)
        ta = torch.tensor(X, dtype=torch.float64, requires_grad=True)
        tb = torch.tensor(Y, dtype=torch.float64, requires_grad=b_requires_grad)
        out, total = ours(a, 0.5, b)
        tout, ttotal = theirs(ta, 0.5, tb)
        out.sum().backward()  # `total` gets no gradient: None in grad_output
        tout.sum().backward()
        assert_same_records(records, trecords)
        assert records[0][1][1] is None and records[1][1][1] is None  # the number's place: None
        if not b_requires_grad:  # a tensor input without grad: zeros, as PyTorch gives
            np.testing.assert_array_equal(records[1][1][2], np.zeros((2, 3)))
        np.testing.assert_allclose(a.grad, ta.grad.numpy(), rtol=1e-12)
        for handle in handles:
            handle.remove()


def test_a_hook_that_returns_a_tuple_replaces_grad_input():
    def double_first(module, grad_input, grad_output):
        return (grad_input[0] * 2, *grad_input[1:])

    ours, theirs = linear_pair(3, 2)
    ours.register_full_backward_hook(double_first)
    theirs.register_full_backward_hook(double_first)
    seen, tseen = [], []
    ours.register_full_backward_hook(recorder(seen, "after"))  # the next hook sees the replaced one
    theirs.register_full_backward_hook(recorder(tseen, "after"))
    x = tg.tensor(X, dtype=tg.float64, requires_grad=True)
    tx = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    y, ty = x * 3, tx * 3
    ours(y).pow(2).sum().backward()
    theirs(ty).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12)
    assert_same_records(seen, tseen)
    unhooked, _ = linear_pair(3, 2)
    x2 = tg.tensor(X, dtype=tg.float64, requires_grad=True)
    unhooked(x2 * 3).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad, 2 * x2.grad, rtol=1e-12)  # the hook's change reached x


def test_a_pre_hook_that_returns_a_tuple_replaces_grad_output():
    ours, theirs = linear_pair(3, 2)
    for model in (ours, theirs):
        model.register_full_backward_pre_hook(lambda module, grad_output: (grad_output[0] * -0.5,))
    x = tg.tensor(X, dtype=tg.float64, requires_grad=True)
    tx = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    ours(x).exp().sum().backward()
    theirs(tx).exp().sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.weight.grad, theirs.weight.grad.numpy(), rtol=1e-12)


def test_removed_hooks_are_not_called_and_hookless_modules_add_no_nodes():
    model, _ = linear_pair(3, 2)
    calls = []
    handle = model.register_full_backward_hook(lambda *args: calls.append("hook"))
    pre = model.register_full_backward_pre_hook(lambda *args: calls.append("pre"))
    x = tg.tensor(X, dtype=tg.float64, requires_grad=True)
    out = model(x)
    assert out.op == "BackwardHookFunction"
    out.sum().backward()
    assert calls == ["pre", "hook"]
    handle.remove()
    pre.remove()
    handle.remove()  # twice: nothing
    out = model(x)
    assert out.op != "BackwardHookFunction" and not model._backward_hooks
    out.sum().backward()
    assert calls == ["pre", "hook"]
    with tg.no_grad():  # no graph: no hooks, no identity nodes
        model.register_full_backward_hook(lambda *args: calls.append("hook"))
        assert model(x).is_leaf


def test_wrong_number_of_gradients_from_a_hook_raises_as_torch():
    for register, hook, message in (
            ("register_full_backward_hook", lambda m, gi, go: (gi[0], gi[0]),
             "Backward hook returned an invalid number of grad_input, got 2, but expected 1"),
            ("register_full_backward_pre_hook", lambda m, go: (go[0], go[0]),
             "Backward pre hook returned an invalid number of grad_output, got 2, but expected 1")):
        for model, lib in ((linear_pair(3, 2)[0], tg), (linear_pair(3, 2)[1], torch)):
            getattr(model, register)(hook)
            x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
            with pytest.raises(RuntimeError, match=message):
                model(x).sum().backward()


def test_no_input_requires_grad_hooks_still_run_with_none_and_must_return_none():
    ours, theirs = linear_pair(3, 2)
    records, trecords = [], []
    ours.register_full_backward_hook(recorder(records, "hook"))
    theirs.register_full_backward_hook(recorder(trecords, "hook"))
    ours(tg.tensor(X, dtype=tg.float64)).sum().backward()
    theirs(torch.tensor(X, dtype=torch.float64)).sum().backward()
    assert_same_records(records, trecords)
    assert records[0][1] == (None,)
    for model, lib in ((ours, tg), (theirs, torch)):
        model.register_full_backward_hook(lambda m, gi, go: (lib.ones(2, 3, dtype=lib.float64),))
        with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
            model(lib.tensor(X, dtype=lib.float64)).sum().backward()


def test_an_in_place_op_after_a_hooked_module_keeps_its_hooks():
    """PyTorch refuses `ReLU(inplace=True)` on a hooked module's output; here it works, and the
    hooks and gradients equal PyTorch's with the out-of-place ReLU."""
    ours_linear, theirs_linear = linear_pair(3, 4)
    ours = nn.Sequential(ours_linear, nn.ReLU(inplace=True))
    theirs = torch.nn.Sequential(theirs_linear, torch.nn.ReLU())
    records, trecords = [], []
    for layer, rec in ((ours_linear, records), (theirs_linear, trecords)):
        layer.register_full_backward_hook(recorder(rec, "hook"))
        layer.register_full_backward_pre_hook(recorder(rec, "pre", pre=True))
    x = tg.tensor(X, dtype=tg.float64, requires_grad=True)
    tx = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    (ours(x) ** 2).sum().backward()
    (theirs(tx) ** 2).sum().backward()
    assert_same_records(records, trecords)
    assert len(records) == 2
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours_linear.weight.grad, theirs_linear.weight.grad.numpy(),
                               rtol=1e-12, atol=1e-12)
