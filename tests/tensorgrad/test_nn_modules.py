"""`tensorgrad.nn` modules: registration, names, modes, state, and the layers against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 5)
        self.out = nn.Linear(5, 2)
        self.scale = 2.0  # a plain attribute: not a parameter

    def forward(self, x):
        return self.out(self.hidden(x).relu()) * self.scale


def test_assignment_registers_parameters_and_modules_with_dotted_names():
    model = nn.Sequential(TwoLayer(), nn.Tanh(), nn.Linear(2, 1, bias=False))
    names = [name for name, _ in model.named_parameters()]
    assert names == ["0.hidden.weight", "0.hidden.bias", "0.out.weight", "0.out.bias", "2.weight"]
    assert [p.shape for p in model.parameters()] == [(5, 3), (5,), (2, 5), (2,), (1, 2)]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in model.parameters())
    assert model[0].scale == 2.0 and len(model) == 3
    assert [type(m).__name__ for m in model] == ["TwoLayer", "Tanh", "Linear"]
    head = model[:2]  # a slice is a Sequential of the same modules, as in PyTorch
    assert isinstance(head, nn.Sequential) and head[1] is model[1] and model[-1] is model[2]


def test_reassigning_a_name_replaces_it_and_a_shared_parameter_counts_once():
    model = TwoLayer()
    model.out = nn.Linear(5, 4)
    assert model.out.out_features == 4
    with pytest.raises(TypeError, match="cannot assign 'str' as child module 'hidden'"):
        model.hidden = "not a layer any more"  # PyTorch: a module name takes a Module or None
    model.hidden = None
    assert [name for name, _ in model.named_parameters()] == ["out.weight", "out.bias"]
    model.tied = model.out  # the same module twice: its parameters once
    model.extra = model.out.weight
    assert len(list(model.parameters())) == 2


def test_a_typo_is_an_attribute_error_that_lists_the_names():
    with pytest.raises(AttributeError, match=r"no attribute 'hiden'.*hidden, out"):
        TwoLayer().hiden


def test_assigning_before_init_says_to_call_super_init():
    class Forgetful(nn.Module):
        def __init__(self):
            self.layer = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Forgetful()


def test_a_module_without_forward_says_so():
    with pytest.raises(TypeError, match="Module has no forward"):
        nn.Module()(tg.ones(1))


def test_sequential_takes_modules_only():
    with pytest.raises(TypeError, match="argument 1 is a function"):
        nn.Sequential(nn.ReLU(), F.relu)


def test_zero_grad_train_and_eval_reach_every_submodule():
    model = nn.Sequential(TwoLayer(), nn.Dropout(0.3))
    model(tg.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_linear_uses_pytorchs_init_bounds_and_tensorgrads_seed():
    tg.manual_seed(3)
    a = nn.Linear(100, 50)
    tg.manual_seed(3)
    b = nn.Linear(100, 50)
    np.testing.assert_array_equal(a.weight.data, b.weight.data)
    assert a.weight.dtype == tg.float32 and a.bias.shape == (50,)
    bound = 1 / np.sqrt(100)
    for p in (a.weight, a.bias):
        assert np.abs(p.data).max() <= bound
        assert np.abs(p.data).max() > 0.9 * bound  # uniform over the whole range
    assert nn.Linear(2, 3, dtype=tg.float64).weight.dtype == tg.float64


def test_dropout_zeroes_about_p_keeps_the_mean_and_its_gradient_is_the_mask():
    tg.manual_seed(0)
    x = tg.ones(200, 100, requires_grad=True)
    out = nn.Dropout(0.25)(x)
    dropped = (out.data == 0).mean()
    assert 0.23 < dropped < 0.27
    np.testing.assert_allclose(out.data[out.data != 0], 1 / 0.75)
    out.backward(np.full(out.shape, 2.0, dtype=np.float32))
    np.testing.assert_allclose(x.grad, 2.0 * out.data)  # the mask, times the incoming gradient
    layer = nn.Dropout(0.25).eval()
    assert layer(x) is x
    assert F.dropout(x, 0.5, training=False) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).data, 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_state_dict_round_trip_and_strict_keys():
    source, target = TwoLayer(), TwoLayer()
    state = source.state_dict()
    assert list(state) == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert not state["out.bias"].requires_grad
    assert np.shares_memory(state["out.bias"].data, source.out.bias.data)
    weight_before = target.hidden.weight
    target.load_state_dict(state)
    assert target.hidden.weight is weight_before  # loaded in place: optimizers keep working
    x = tg.randn(4, 3)
    np.testing.assert_array_equal(target(x).data, source(x).data)
    target.load_state_dict({k: v.numpy() for k, v in state.items()})  # arrays are fine too
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "out.bias"'):
        target.load_state_dict({k: v for k, v in state.items() if k != "out.bias"})
    with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "extra"'):
        target.load_state_dict({**state, "extra": np.zeros(1)})
    result = target.load_state_dict({"out.bias": np.ones(2)}, strict=False)
    assert result.missing_keys == ["hidden.weight", "hidden.bias", "out.weight"]
    assert result.unexpected_keys == []
    np.testing.assert_array_equal(target.out.bias.data, [1, 1])
    with pytest.raises(RuntimeError, match=r"size mismatch for out.bias: .* shape \(3,\) .* \(2,\)"):
        target.load_state_dict({"out.bias": np.ones(3)}, strict=False)


def test_parameter_is_a_leaf_tensor_and_ops_on_it_give_plain_tensors():
    p = nn.Parameter(tg.tensor([1.0, 2.0]))
    assert p.requires_grad and p.is_leaf
    assert not nn.Parameter(tg.zeros(2), requires_grad=False).requires_grad
    out = 2.0 * p - 1.0 + p * p
    assert type(out) is tg.Tensor
    out.sum().backward()
    np.testing.assert_array_equal(p.grad, [4.0, 6.0])
    assert "Parameter containing" in repr(p)


def test_a_model_matches_the_same_model_in_pytorch():
    torch = pytest.importorskip("torch")
    tg.manual_seed(1)
    ours = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 3),
                         nn.Sigmoid())
    ours.eval()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 6),
                                 torch.nn.Tanh(), torch.nn.Linear(6, 3), torch.nn.Sigmoid())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    out, expected = ours(tg.from_numpy(x)), theirs(torch.from_numpy(x))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    labels = [0, 2, 1, 1, 0]
    F.cross_entropy(out, labels).backward()
    torch.nn.functional.cross_entropy(expected, torch.tensor(labels)).backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad, q.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


# --- buffers --------------------------------------------------------------------------------------


def _with_buffers(nn_module, tensor):
    """The same small tree in tensorgrad or PyTorch: a parameter, buffers of both kinds, a child."""

    class Normaliser(nn_module.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn_module.Parameter(tensor([1.0, 2.0]))
            self.register_buffer("running_mean", tensor([0.5, -0.5]))
            self.register_buffer("num_batches_tracked", tensor(3))
            self.register_buffer("scratch", tensor([9.0]), persistent=False)
            self.register_buffer("absent", None)
            self.inner = nn_module.Linear(2, 2)
            self.inner.register_buffer("mask", tensor([[1.0, 0.0], [0.0, 1.0]]))

    return Normaliser()


def test_buffers_are_named_saved_when_persistent_and_keyed_as_in_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _with_buffers(nn, tg.tensor), _with_buffers(torch.nn, torch.tensor)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_buffers(recurse=False)] == ["running_mean", "num_batches_tracked",
                                                                  "scratch"]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert ours.running_mean.dtype == np.float32 and ours.num_batches_tracked.dtype == np.int64
    assert len(list(ours.buffers())) == 4
    assert not ours.state_dict()["running_mean"].requires_grad


def test_buffers_load_in_place_either_way_with_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _with_buffers(nn, tg.tensor), _with_buffers(torch.nn, torch.tensor)
    with torch.no_grad():
        theirs.running_mean.fill_(7.0)
        theirs.num_batches_tracked.fill_(11)
        theirs.inner.mask.fill_(2.0)
    mean_before = ours.running_mean
    ours.load_state_dict(theirs.state_dict())
    assert ours.running_mean is mean_before  # the same tensor, new values
    np.testing.assert_array_equal(ours.running_mean.data, [7.0, 7.0])
    assert ours.num_batches_tracked.item() == 11 and ours.num_batches_tracked.dtype == np.int64
    np.testing.assert_array_equal(ours.scratch.data, [9.0])  # not persistent: untouched
    ours.running_mean.data[...] = 4.0
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    np.testing.assert_array_equal(theirs.running_mean.numpy(), [4.0, 4.0])
    with pytest.raises(RuntimeError, match='Missing key.*"running_mean"'):
        ours.load_state_dict({k: v for k, v in ours.state_dict().items() if k != "running_mean"})


def test_assigning_to_a_buffer_name_replaces_the_buffer():
    model = _with_buffers(nn, tg.tensor)
    model.running_mean = tg.zeros(2)
    assert "running_mean" in model.state_dict() and model.running_mean.sum().item() == 0
    with pytest.raises(TypeError, match="cannot assign 'list' as buffer 'running_mean'"):
        model.running_mean = [1.0, 2.0]
    model.running_mean = None  # allowed: the buffer is then absent from the state dict
    assert "running_mean" not in model.state_dict()
    del model.scratch
    assert "scratch" not in dict(model.named_buffers())


@pytest.mark.parametrize(("name", "value", "error", "match"), [
    ("a.b", tg.zeros(1), KeyError, "contain .* or be empty"),
    ("", tg.zeros(1), KeyError, "contain .* or be empty"),
    (3, tg.zeros(1), TypeError, "name should be a string"),
    ("weight", tg.zeros(1), KeyError, "attribute 'weight' already exists"),
    ("fresh", np.zeros(1), TypeError, "cannot assign 'ndarray' object to buffer 'fresh'"),
])
def test_register_buffer_refuses_what_pytorch_refuses(name, value, error, match):
    with pytest.raises(error, match=match):
        nn.Linear(1, 1).register_buffer(name, value)


def test_casts_move_floating_parameters_gradients_and_buffers_but_keep_integers():
    model = _with_buffers(nn, tg.tensor)
    weight = model.inner.weight
    weight.grad = np.ones((2, 2), np.float32)
    assert model.double() is model
    assert model.inner.weight is weight and weight.dtype == np.float64 and weight.grad.dtype == np.float64
    assert model.running_mean.dtype == np.float64 and model.scratch.dtype == np.float64
    assert model.num_batches_tracked.dtype == np.int64
    assert model.float().inner.mask.dtype == np.float32
    assert model.to(tg.float64).scale.dtype == np.float64
    assert model.to(dtype=tg.float32).scale.dtype == np.float32
    assert model.to(tg.zeros(1, dtype=tg.float64)).scale.dtype == np.float64
    assert model.to("cpu") is model
    with pytest.raises(TypeError, match="only accepts floating point dtypes"):
        model.to(tg.int64)
