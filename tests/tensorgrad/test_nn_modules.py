"""`tensorgrad.nn` modules: registration, names, modes, state, devices, and the layers against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import placed_on

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn
from tensorgrad.device import to_numpy


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
    with pytest.raises(NotImplementedError, match="Module has no forward"):  # PyTorch's class
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


def test_a_model_matches_the_same_model_in_pytorch(device):
    torch = pytest.importorskip("torch")
    tg.manual_seed(1)
    ours = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 3),
                         nn.Sigmoid())
    ours.eval()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 6),
                                 torch.nn.Tanh(), torch.nn.Linear(6, 3), torch.nn.Sigmoid())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.to(device) is ours and all(p.device == placed_on(device) for p in ours.parameters())
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    out, expected = ours(tg.from_numpy(x).to(device)), theirs(torch.from_numpy(x))
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    labels = [0, 2, 1, 1, 0]  # a list: made where the logits live
    F.cross_entropy(out, labels).backward()
    torch.nn.functional.cross_entropy(expected, torch.tensor(labels)).backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), q.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


# Every layer that takes PyTorch's `device=` argument.
DEVICE_LAYERS = {
    "Linear": lambda **kw: nn.Linear(3, 4, **kw),
    "Conv1d": lambda **kw: nn.Conv1d(2, 3, 3, **kw),
    "Conv2d": lambda **kw: nn.Conv2d(2, 3, 3, padding_mode="reflect", **kw),
    "ConvTranspose2d": lambda **kw: nn.ConvTranspose2d(2, 3, 3, **kw),
    "BatchNorm1d": lambda **kw: nn.BatchNorm1d(3, **kw),
    "BatchNorm2d": lambda **kw: nn.BatchNorm2d(3, **kw),
    "LayerNorm": lambda **kw: nn.LayerNorm(3, **kw),
    "GroupNorm": lambda **kw: nn.GroupNorm(1, 3, **kw),
    "Embedding": lambda **kw: nn.Embedding(5, 3, padding_idx=0, **kw),
    "MultiheadAttention": lambda **kw: nn.MultiheadAttention(4, 2, add_bias_kv=True, **kw),
}


@pytest.mark.parametrize("name", DEVICE_LAYERS)
def test_a_layer_made_on_a_device_holds_the_values_the_seed_gives_on_the_cpu(name, device):
    tg.manual_seed(0)
    on_cpu = DEVICE_LAYERS[name]()
    tg.manual_seed(0)
    placed = DEVICE_LAYERS[name](device=tg.device(device))  # a string or a tg.device
    assert list(placed.state_dict()) == list(on_cpu.state_dict())
    for key, value in placed.state_dict().items():
        assert value.device == placed_on(device), key
        np.testing.assert_array_equal(to_numpy(value.data), on_cpu.state_dict()[key].data, err_msg=key)


@pytest.mark.skipif(tg.cuda.is_available(), reason="CuPy and a GPU are here: the layers are made there")
@pytest.mark.parametrize("name", DEVICE_LAYERS)
def test_a_layer_asked_for_cuda_without_cupy_is_a_clear_error(name):
    with pytest.raises(RuntimeError, match="CuPy"):
        DEVICE_LAYERS[name](device="cuda")


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
    ("a.b", tg.zeros(1), KeyError, "t contain"),  # PyTorch's two messages
    ("", tg.zeros(1), KeyError, "t be empty"),
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
    weight_array = weight.data
    assert model.to("cpu") is model and model.to(tg.device("cpu")) is model
    assert weight.data is weight_array  # already there: nothing moved or copied
    assert model.to("cpu", tg.float32).scale.dtype == np.float32
    with pytest.raises(TypeError, match="only accepts floating point dtypes"):
        model.to(tg.int64)


# --- walking the tree, containers and shape layers against PyTorch --------------------------------


def _tree(nn_module):
    """The same tree in either library: nesting, a container of each kind, a module reached twice."""
    model = nn_module.Sequential(
        nn_module.Linear(4, 6), nn_module.Tanh(),
        nn_module.ModuleList([nn_module.Linear(6, 6), nn_module.Identity()]),
        nn_module.ModuleDict({"head": nn_module.Linear(6, 2), "act": nn_module.Sigmoid()}),
    )
    model.add_module("tied", model[0])
    return model


def test_modules_children_parameters_and_state_dict_walk_the_tree_as_pytorch_does():
    torch = pytest.importorskip("torch")
    ours, theirs = _tree(nn), _tree(torch.nn)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())  # the tied module under both names
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert [n for n, _ in ours[2].named_parameters(prefix="blocks")] == ["blocks.0.weight", "blocks.0.bias"]
    assert [n for n, _ in ours.named_parameters(recurse=False)] == []
    assert repr(ours[3]) == repr(theirs[3]) and repr(ours[2]) == repr(theirs[2])


def test_a_tree_loads_pytorchs_state_dict_and_computes_the_same():
    torch = pytest.importorskip("torch")
    ours, theirs = _tree(nn), _tree(torch.nn)
    ours.double()
    theirs.double()
    ours.load_state_dict(theirs.state_dict())

    def run(model, x):
        h = model[2][1](model[2][0](model[1](model[0](x))))
        return model[3]["act"](model[3]["head"](h))

    x = np.random.default_rng(0).standard_normal((3, 4))
    out, expected = run(ours, tg.tensor(x)), run(theirs, torch.tensor(x))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad, q.grad.numpy(), rtol=1e-10, err_msg=name)


def test_apply_visits_children_before_their_parent():
    visited = []
    _tree(nn).apply(lambda m: visited.append(type(m).__name__))
    assert visited == ["Linear", "Tanh", "Linear", "Identity", "ModuleList", "Linear", "Sigmoid",
                       "ModuleDict", "Sequential"]


def test_requires_grad_freezes_and_train_takes_only_a_bool():
    model = _tree(nn)
    assert model.requires_grad_(False) is model
    assert not any(p.requires_grad for p in model.parameters())
    model[0].requires_grad_()
    assert [n for n, p in model.named_parameters() if p.requires_grad] == ["0.weight", "0.bias"]
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train("eval")
    assert not model.eval()[3]["act"].training and model.train()[2][1].training


def test_module_list_and_dict_behave_as_list_and_dict():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.Tanh())
    layers.insert(1, nn.ReLU())
    layers += [nn.Sigmoid()]
    assert [type(m).__name__ for m in layers] == ["Linear", "ReLU", "Linear", "Linear", "Tanh", "Sigmoid"]
    assert list(layers._modules) == ["0", "1", "2", "3", "4", "5"]
    del layers[1]
    assert type(layers[1]).__name__ == "Linear" and type(layers[-1]).__name__ == "Sigmoid"
    assert len(layers) == 5
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    assert len(list(layers.parameters())) == 6
    heads = nn.ModuleDict([("a", nn.Linear(2, 1)), ("b", nn.Tanh())])
    heads["c"] = nn.ReLU()
    assert list(heads) == ["a", "b", "c"] and "b" in heads and len(heads) == 3
    assert heads.pop("b").__class__ is nn.Tanh and list(heads.keys()) == ["a", "c"]
    heads.update({"a": nn.Identity()})
    assert isinstance(heads["a"], nn.Identity) and list(heads.state_dict()) == []
    seq = nn.Sequential(nn.Tanh(), nn.ReLU()).append(nn.Sigmoid())
    seq[0] = nn.Identity()
    del seq[1]
    assert [type(m).__name__ for m in seq] == ["Identity", "Sigmoid"] and list(seq._modules) == ["0", "1"]


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: nn.ModuleList([nn.Tanh(), 3]), TypeError, ["ModuleList", "int", "not a Module"]),
    (lambda: nn.ModuleList(nn.Tanh()), TypeError, ["iterable", "Tanh"]),
    (lambda: nn.ModuleDict({"a": 1}), TypeError, ["ModuleDict", "int"]),
    (lambda: nn.ModuleDict([("a", nn.Tanh(), 1)]), ValueError, ["element 0", "pair"]),
    (lambda: nn.ModuleList([nn.Tanh()])[3], IndexError, ["index 3", "1 modules"]),
    (lambda: nn.Sequential(nn.Tanh())[-2], IndexError, ["index -2"]),
    (lambda: nn.ModuleList([nn.Tanh()])["0"], TypeError, ["integers or slices"]),
    (lambda: nn.ModuleDict()["b"], KeyError, ["'b'"]),
    (lambda: nn.Module().register_parameter("x", tg.zeros(1)), TypeError, ["'Tensor'", "parameter 'x'"]),
    (lambda: setattr(nn.Linear(1, 1), "weight", tg.zeros(1, 1)), TypeError,
     ["'Tensor'", "parameter 'weight'"]),
    (lambda: nn.Module().add_module("a.b", nn.Tanh()), KeyError, ["a.b"]),
    (lambda: nn.Unflatten(1, (2, 2))(tg.zeros(2, 3)), RuntimeError, ["Unflatten", "(2, 2)", "3", "(2, 3)"]),
    (lambda: nn.Unflatten(3, (1, 2))(tg.zeros(2, 2)), IndexError, ["Unflatten", "dim 3", "(2, 2)"]),
    (lambda: nn.Unflatten(1, (2.0, 1)), TypeError, ["Unflatten", "ints"]),
    (lambda: nn.Flatten(1.5), TypeError, ["Flatten", "start_dim", "float"]),
    (lambda: nn.Dropout("0.5"), TypeError, ["Dropout", "str"]),
    (lambda: nn.Dropout(-0.1), ValueError, ["Dropout", "-0.1"]),
    (lambda: nn.Flatten(3)(tg.zeros(2, 2)), IndexError, ["flatten", "3"]),
    (lambda: nn.Linear(1, 1).to(tg.int64), TypeError, ["floating point"]),
], ids=lambda v: None)
def test_container_and_registration_mistakes_raise_as_pytorch_does(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(("layer", "shape"), [
    (lambda m: m.Flatten(), (2, 3, 4, 5)),
    (lambda m: m.Flatten(0, 2), (2, 3, 4, 5)),
    (lambda m: m.Flatten(-3, -2), (2, 3, 4, 5)),
    (lambda m: m.Unflatten(1, (3, 4)), (2, 12, 5)),
    (lambda m: m.Unflatten(-1, (2, -1)), (2, 12)),
    (lambda m: m.Identity(54, unused=True), (3, 2)),
], ids=["Flatten", "Flatten(0,2)", "Flatten(-3,-2)", "Unflatten", "Unflatten(-1)", "Identity"])
def test_shape_layers_match_pytorch_values_gradients_and_repr(layer, shape):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal(shape)
    ours, theirs = layer(nn), layer(torch.nn)
    a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = ours(a), theirs(b)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_array_equal(out.data, expected.detach().numpy())
    weights = np.arange(out.data.size, dtype=np.float64).reshape(out.shape)
    (out * tg.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(a.grad, b.grad.numpy())
    assert repr(ours) == repr(theirs)


# --- size and state-dict mistakes (issue 7's classes) -------------------------------------------


@pytest.mark.parametrize(("args", "error", "words"), [
    ((-1, 3), RuntimeError, ["Linear", "in_features", "-1"]),
    ((3, -2), RuntimeError, ["Linear", "out_features", "-2"]),
    ((2.5, 3), TypeError, ["Linear", "in_features", "float"]),
    ((3, "4"), TypeError, ["Linear", "out_features", "str"]),
    ((3, None), TypeError, ["Linear", "out_features", "NoneType"]),
])
def test_linear_sizes_are_checked_with_pytorchs_exception_types(args, error, words):
    torch = pytest.importorskip("torch")
    with pytest.raises(error):
        torch.nn.Linear(*args)
    with pytest.raises(error) as info:
        nn.Linear(*args)
    for word in words:
        assert word in str(info.value)


def test_zero_and_numpy_integer_sizes_are_fine():
    assert nn.Linear(0, 3).weight.shape == (3, 0)
    assert nn.Linear(np.int64(2), np.int32(3)).weight.shape == (3, 2)


@pytest.mark.parametrize(("state", "error", "words"), [
    ([1, 2], TypeError, ["dict-like", "list"]),
    (np.zeros(3), TypeError, ["dict-like", "ndarray"]),
    ({"weight": np.zeros((3, 3)), "bias": np.zeros(3)}, RuntimeError,
     ["size mismatch for weight", "(3, 3)", "(3, 2)"]),
    ({"weight": "abc", "bias": np.zeros(3)}, RuntimeError, ["weight", "str"]),
    ({"weight": [[1, 2]] * 3, "bias": np.zeros(3), "extra": 1}, RuntimeError,
     ["Unexpected key(s)", '"extra"']),
], ids=["list", "array", "shape", "text", "extra"])
def test_load_state_dict_mistakes_name_the_key_and_both_shapes(state, error, words):
    layer = nn.Linear(2, 3)
    before = layer.weight.data.copy()
    with pytest.raises(error) as info:
        layer.load_state_dict(state)
    for word in words:
        assert word in str(info.value)
    # As in PyTorch, what fits is loaded before the error is raised: a weight of the right shape
    fits = np.shape(state["weight"]) == (3, 2) if isinstance(state, dict) else False
    np.testing.assert_array_equal(layer.weight.data, np.asarray(state["weight"]) if fits else before)


def test_load_state_dict_reports_what_it_skipped_and_can_assign():
    layer = nn.Linear(2, 3)
    result = layer.load_state_dict({"weight": np.ones((3, 2))}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == [] and "bias" in repr(result)
    assert repr(layer.load_state_dict(layer.state_dict())) == "<All keys matched successfully>"
    layer.load_state_dict({"weight": np.ones((3, 2), np.float64), "bias": np.zeros(3)}, assign=True)
    assert layer.weight.dtype == np.float64  # assign takes the array as it is, as PyTorch's assign=True


@pytest.mark.skipif(tg.cuda.is_available(), reason="CuPy and a GPU are here: the move works")
def test_moving_a_module_to_cuda_without_cupy_is_a_clear_error():
    layer = nn.Linear(1, 1)
    with pytest.raises(RuntimeError, match="CuPy"):
        layer.to("cuda")
    assert isinstance(layer.weight.data, np.ndarray)


# --- forward hooks and lookups by path -----------------------------------------------------------


def _hooked_run(m):
    net = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU(), m.nn.Linear(3, 1))
    with m.no_grad():
        for p in net.parameters():
            p.copy_(m.arange(p.numel(), dtype=p.dtype).reshape(p.shape) * 0.1 - 0.2)
    seen = []
    first = net[0].register_forward_hook(lambda mod, args, out: seen.append(("out", out.tolist())))
    net[1].register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    net[2].register_forward_hook(lambda mod, args, out: out + 1)
    net[2].register_forward_pre_hook(lambda mod, args: seen.append(("in", args[0].tolist())), prepend=True)
    y1 = net(m.tensor([[1.0, -1.0]]))
    first.remove()
    y2 = net(m.tensor([[0.5, 2.0]]))
    return seen, y1.tolist(), y2.tolist()


def test_forward_hooks_see_and_replace_as_torchs():
    torch = pytest.importorskip("torch")
    ours, theirs = _hooked_run(tg), _hooked_run(torch)
    assert len(ours[0]) == len(theirs[0]) == 3
    for (kind, values), (their_kind, their_values) in zip(ours[0], theirs[0], strict=True):
        assert kind == their_kind
        np.testing.assert_allclose(values, their_values, rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


def test_forward_hooks_with_kwargs():
    layer = nn.Linear(2, 2)
    layer.register_forward_pre_hook(lambda mod, args, kwargs: (args, kwargs), with_kwargs=True)
    layer.register_forward_hook(lambda mod, args, kwargs, out: out * 0, with_kwargs=True)
    assert layer(tg.ones(1, 2)).tolist() == [[0.0, 0.0]]


def test_lookups_by_dotted_path_and_the_casts():
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    assert net.get_submodule("0") is net[0] and net.get_submodule("") is net
    assert net.get_parameter("0.weight") is net[0].weight
    assert net.get_buffer("1.running_mean") is net[1].running_mean
    for bad in (lambda: net.get_submodule("5"), lambda: net.get_parameter("0.nothing"),
                lambda: net.get_buffer("0.weight")):
        with pytest.raises(AttributeError):
            bad()
    assert net.half()[0].weight.dtype == tg.float16 and net.cpu() is net
