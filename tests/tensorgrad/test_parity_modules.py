"""The nn.Module API and the layer modules side by side with PyTorch: each case runs the same
code with `torch` / `torch.nn` and with `tensorgrad` / `tensorgrad.nn` and compares what comes
back (reprs, names, keys, shapes, values) or, where PyTorch raises, the exception's class."""

import collections

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn

torch = pytest.importorskip("torch")
tnn = torch.nn


def _plain(value):
    """Something comparable across the two libraries: tensors as (shape, dtype, rounded values),
    modules as their reprs, dtype names without 'torch.'."""
    if isinstance(value, str):
        return value.replace("torch.", "")
    if isinstance(value, list | tuple):
        return type(value).__name__, [_plain(item) for item in value]
    if isinstance(value, tg.Tensor | torch.Tensor):
        array = np.asarray(value.detach().numpy() if isinstance(value, torch.Tensor) else value.detach().data)
        return tuple(array.shape), str(array.dtype), np.round(array.astype(np.float64), 5).tolist()
    if isinstance(value, tnn.Module | nn.Module):
        return repr(value)
    return value


def _seq(L):
    return L.Sequential(L.Linear(1, 2), L.ReLU(), L.Tanh(), L.Sigmoid())


def _module(lib, L):
    m = L.Module()
    m.w = L.Parameter(lib.ones(2))
    m.sub = L.Linear(2, 2)
    m.register_buffer("b", lib.zeros(3))
    return m


def _names(modules):
    return [type(m).__name__ for m in modules]


def _hooked(lib, L, setup):
    log, layer = [], L.Linear(2, 2)
    setup(layer, log)
    try:
        layer(lib.ones(3))  # the wrong width: forward raises
    except RuntimeError:
        log.append("raised")
    return log


def _state_hooks(lib, L):
    log, layer = [], L.Linear(2, 2)
    layer.register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre", prefix)))
    layer.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.__setitem__(prefix + "extra", 1))
    keys = list(layer.state_dict(prefix="p."))
    layer.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, strict, missing, unexpected, errors: sd.pop("extra", None))
    layer.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
    result = layer.load_state_dict({"weight": lib.full((2, 2), 3.0), "extra": 1})  # bias "missing"
    return log, keys, repr(result), layer.weight.detach().sum().item()


def _load_error(lib, L):
    state = {"bias": lib.zeros(3), "extra": lib.ones(1)}
    try:
        L.Linear(2, 3).load_state_dict(state)
    except RuntimeError as error:
        return str(error).replace("torch.", "")


CASES = {
    # reprs: repeated modules compressed in ModuleList, PyTorch's ParameterList/Dict lines
    "modulelist repr": lambda lib, L: repr(L.ModuleList([L.ReLU(), L.ReLU(), L.ReLU(), L.Tanh(), L.ReLU()])),
    "nested repr": lambda lib, L: repr(L.Sequential(L.ModuleList([L.Linear(2, 2)] * 2), L.Flatten())),
    "parameterlist repr": lambda lib, L: repr(L.ParameterList([L.Parameter(lib.zeros(2, 3))])),
    "parameterdict repr": lambda lib, L: repr(L.ParameterDict({"a": L.Parameter(lib.zeros(2, 3))})),
    "rnncell relu repr": lambda lib, L: repr(L.RNNCell(3, 4, nonlinearity="relu")),
    "unflatten list repr": lambda lib, L: repr(L.Unflatten(1, [2, 2])),
    "decoder layer repr": lambda lib, L: repr(L.TransformerDecoderLayer(4, 2, 8)),
    "avgpool1d repr": lambda lib, L: repr(L.AvgPool1d(3, padding=1)) + repr(L.AvgPool1d((2,), 1)),
    "cosine similarity repr": lambda lib, L: repr(L.CosineSimilarity(dim=0, eps=1e-3)),
    # a state dict saved before num_batches_tracked existed: the module keeps its own count
    "batchnorm old state dict": lambda lib, L: _without_count(L.Sequential(L.Linear(2, 3), L.BatchNorm1d(3))),
    # Sequential and ModuleList as lists
    "sequential insert": lambda lib, L: (lambda s: (s.insert(-1, L.GELU()) is s, _names(s),
                                                    list(s._modules)))(_seq(L)),
    "sequential extend": lambda lib, L: (lambda s: (s.extend([L.GELU()]) is s, list(s._modules)))(_seq(L)),
    "sequential pop": lambda lib, L: (lambda s: (type(s.pop(1)).__name__, _names(s),
                                                 list(s._modules)))(_seq(L)),
    "sequential add": lambda lib, L: list((_seq(L) + _seq(L))._modules),
    "sequential iadd": lambda lib, L: (lambda s: (s.__iadd__(_seq(L)) is s, len(s)))(_seq(L)),
    "sequential mul": lambda lib, L: (_names(_seq(L) * 2), _names(2 * _seq(L))),
    "sequential forward input=": lambda lib, L: _seq(L)[1:](input=lib.tensor([-1.0, 2.0])),
    "sequential dir": lambda lib, L: "0" in dir(_seq(L)),
    "modulelist pop": lambda lib, L: (lambda m: (type(m.pop(0)).__name__, list(m._modules)))(
        L.ModuleList([L.ReLU(), L.Tanh()])),
    # ParameterDict and ParameterList as containers
    "parameterdict methods": lambda lib, L: (lambda d: (
        tuple(d.pop("a").shape), d.get("z"), tuple(d.setdefault("c", lib.ones(4)).shape), list(d),
        list(d.copy()), list(d | L.ParameterDict({"z": lib.ones(1)})), d.popitem()[0], list(d)))(
        L.ParameterDict({"a": lib.ones(2), "b": lib.zeros(3)})),
    "parameterlist iadd": lambda lib, L: (lambda p: (p.__iadd__([lib.ones(1)]) is p, len(p)))(
        L.ParameterList([lib.ones(2)])),
    # registration by assignment
    "none for a parameter": lambda lib, L: (lambda m: (setattr(m, "w", None), list(m.state_dict()), m.w))(
        _module(lib, L))[1:],
    "plain attribute before __init__": lambda lib, L: type(
        "X", (L.Module,), {"__init__": lambda self: setattr(self, "p", 1)})().p,
    # hooks and calls with keywords
    "forward hooks see input=": lambda lib, L: (lambda log, m: (
        m.register_forward_pre_hook(lambda mod, a, k: log.append(("pre", sorted(k))), with_kwargs=True),
        m.register_forward_hook(lambda mod, a, k, out: log.append(tuple(out.shape)), with_kwargs=True),
        m(input=lib.ones(2)), log)[3])([], L.Linear(2, 3)),
    "always_call hook": lambda lib, L: _hooked(lib, L, lambda m, log: (
        m.register_forward_hook(lambda *a: log.append("always"), always_call=True),
        m.register_forward_hook(lambda *a: log.append("normal")))),
    "hook handle as context": lambda lib, L: (lambda m: (
        [m.register_forward_hook(lambda *a: None).__enter__().__exit__(None, None, None)],
        len(m._forward_hooks))[1])(L.Linear(1, 1)),
    "state dict hooks": _state_hooks,
    # load_state_dict: PyTorch's names and message
    "load error message": _load_error,
    "incompatible keys repr": lambda lib, L: repr(L.Linear(2, 3).load_state_dict({"extra": lib.ones(1)},
                                                                                 strict=False)),
    "get_submodule of a parameter": lambda lib, L: _error_text(lambda: _seq(L).get_submodule("0.weight")),
    "get_parameter of a module": lambda lib, L: _error_text(lambda: _seq(L).get_parameter("0")),
    "get_buffer missing": lambda lib, L: _error_text(lambda: _seq(L).get_buffer("0.zz")),
    # recurrent and transformer layers with PyTorch's weights
    "lstm proj bidirectional": lambda lib, L: _with_torch_weights(
        lib, L, lambda L: L.LSTM(3, 4, 2, batch_first=True, bidirectional=True, proj_size=2), (2, 5, 3)),
    "gru unbatched": lambda lib, L: _with_torch_weights(lib, L, lambda L: L.GRU(3, 4, bias=False), (5, 3)),
    "rnn relu": lambda lib, L: _with_torch_weights(
        lib, L, lambda L: L.RNN(3, 4, nonlinearity="relu"), (5, 2, 3)),
    "decoder layer": lambda lib, L: _with_torch_weights(
        lib, L, lambda L: L.TransformerDecoderLayer(4, 2, 8, dropout=0.0, norm_first=True), (5, 2, 4),
        memory=True),
}


def _error_text(call):
    try:
        call()
    except AttributeError as error:
        return str(error).split(" of ")[0]  # (ours may name the module after " of ")


_TORCH_STATE = {}


def _with_torch_weights(lib, L, build, shape, memory=False):
    """The layer's output for fixed inputs, tensorgrad's run with the weights of PyTorch's."""
    module = build(L).double().eval()
    if lib is torch:
        _TORCH_STATE["last"] = {key: value.numpy() for key, value in module.state_dict().items()}
    else:  # (each case runs PyTorch's side just before ours)
        module.load_state_dict(_TORCH_STATE["last"])
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(shape))
    out = module(x, lib.tensor(rng.standard_normal((3, 2, 4)))) if memory else module(x)
    return out


def _without_count(model) -> tuple:
    """Load a state dict that lacks BatchNorm's num_batches_tracked (as saved before it existed)."""
    model[1].num_batches_tracked += 4
    state = {key: value for key, value in model.state_dict().items() if "num_batches" not in key}
    return repr(model.load_state_dict(state)), int(model[1].num_batches_tracked)


@pytest.mark.parametrize("name", list(CASES))
def test_module_api_matches_pytorch(name):
    case = CASES[name]
    theirs = case(torch, tnn)  # (first: _with_torch_weights keeps PyTorch's weights for ours)
    assert _plain(case(tg, nn)) == _plain(theirs)


RAISES = {
    "module in a parameter's place": lambda lib, L: setattr(_module(lib, L), "w", L.ReLU()),
    "tensor in a parameter's place": lambda lib, L: setattr(_module(lib, L), "w", lib.ones(2)),
    "no forward": lambda lib, L: L.ModuleList([L.ReLU()])(lib.ones(1)),
    "parameterlist called": lambda lib, L: L.ParameterList()(lib.ones(1)),
    "parameterdict missing key": lambda lib, L: L.ParameterDict()["z"],
    "sequential insert out of range": lambda lib, L: _seq(L).insert(9, L.ReLU()),
    "sequential + list": lambda lib, L: _seq(L) + [L.ReLU()],
    "sequential * 0": lambda lib, L: _seq(L) * 0,
    "buffer name with a dot": lambda lib, L: _module(lib, L).register_buffer("a.b", lib.ones(1)),
    "empty module name": lambda lib, L: _module(lib, L).add_module("", L.ReLU()),
    "rnn proj_size": lambda lib, L: L.RNN(3, 4, proj_size=2),
    "strict load, unexpected": lambda lib, L: L.Linear(1, 1).load_state_dict(
        {**L.Linear(1, 1).state_dict(), "extra": lib.ones(1)}),
    "load post-hook returning": lambda lib, L: (lambda m: (
        m.register_load_state_dict_post_hook(lambda mod, keys: 1), m.load_state_dict(m.state_dict())))(
        L.Linear(1, 1)),
}


@pytest.mark.parametrize("name", list(RAISES))
def test_module_api_raises_like_pytorch(name):
    case = RAISES[name]
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - whatever PyTorch raises
        case(torch, tnn)
    with pytest.raises(theirs.type):
        case(tg, nn)


def test_nn_utils_rnn_imports_by_pytorchs_path():
    from tensorgrad.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    gru, theirs = nn.GRU(2, 3).double(), tnn.GRU(2, 3).double()
    gru.load_state_dict({key: value.numpy() for key, value in theirs.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((4, 3, 2))
    out, h = gru(pack_padded_sequence(tg.tensor(x), [4, 2, 1]))
    their_out, their_h = theirs(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), [4, 2, 1]))
    np.testing.assert_allclose(h.data, their_h.detach().numpy(), atol=1e-10)
    their_padded = torch.nn.utils.rnn.pad_packed_sequence(their_out)[0].detach().numpy()
    np.testing.assert_allclose(pad_packed_sequence(out)[0].data, their_padded, atol=1e-10)


def test_state_dict_keys_and_repr_of_sequential_from_ordered_dict():
    layers = collections.OrderedDict([("enc", "Linear"), ("act", "ReLU")])

    def build(L):
        return L.Sequential(collections.OrderedDict(
            (name, L.Linear(2, 2) if kind == "Linear" else L.ReLU()) for name, kind in layers.items()))

    assert list(build(nn).state_dict()) == list(build(tnn).state_dict())
    assert repr(build(nn)) == repr(build(tnn))


def test_a_failed_strict_load_keeps_what_fitted_as_pytorch():
    def load(lib, L):
        layer = L.Linear(2, 3)
        with lib.no_grad():
            layer.weight.zero_()
            layer.bias.zero_()
        with pytest.raises(RuntimeError, match="size mismatch for bias"):
            layer.load_state_dict({"weight": lib.ones(3, 2), "bias": lib.ones(4), "extra": lib.ones(1)})
        return _plain(layer.weight), _plain(layer.bias)

    assert load(tg, nn) == load(torch, tnn)
