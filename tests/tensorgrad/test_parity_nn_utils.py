"""`nn.init` and `nn.utils` side by side with PyTorch: return types, errors, dtypes and values."""

import math
import warnings

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as gnn
from tensorgrad.nn import init as ginit
from tensorgrad.nn import utils as gutils
from tensorgrad.nn.utils import parametrizations as gpz
from tensorgrad.nn.utils import parametrize as gp

torch = pytest.importorskip("torch")
tinit = torch.nn.init
tutils = torch.nn.utils


def _outcome(fn):
    try:
        return fn(), None
    except Exception as error:  # noqa: BLE001 - compared with PyTorch's below
        return None, error


def _same_failure(torch_fn, tg_fn):
    """Both fail, ours with an instance of PyTorch's exception class (or both succeed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, torch_error = _outcome(torch_fn)
        _, tg_error = _outcome(tg_fn)
    assert (torch_error is None) == (tg_error is None), (torch_error, tg_error)
    if torch_error is not None:
        assert isinstance(tg_error, type(torch_error)), (torch_error, tg_error)


# --- nn.init ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("nonlinearity", ["linear", "conv1d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                                          "leaky_relu", "selu", "bad"])
@pytest.mark.parametrize("param", [None, 0.2, 1, True, "x", np.float32(0.2)])
def test_calculate_gain(nonlinearity, param):
    expected, error = _outcome(lambda: tinit.calculate_gain(nonlinearity, param))
    if error is not None:
        with pytest.raises(type(error)):
            ginit.calculate_gain(nonlinearity, param)
        return
    got = ginit.calculate_gain(nonlinearity, param)
    assert type(got) is type(expected) and got == pytest.approx(expected)


@pytest.mark.parametrize("name, args", [("uniform_", ()), ("normal_", ()), ("trunc_normal_", ()),
                                        ("xavier_uniform_", ()), ("xavier_normal_", ()),
                                        ("kaiming_uniform_", ()), ("kaiming_normal_", ()),
                                        ("orthogonal_", ()), ("sparse_", (0.5,)), ("constant_", (2,)),
                                        ("eye_", ()), ("zeros_", ())])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float16", "float64"])
@pytest.mark.parametrize("shape", [(3, 4), (0, 3), (0,)])
def test_init_dtypes_and_shapes(name, args, dtype, shape):
    def run_torch():
        t = torch.zeros(shape, dtype=getattr(torch, dtype))
        return getattr(tinit, name)(t, *args) is t

    def run_tg():
        t = tg.zeros(shape, dtype=getattr(tg, dtype))
        return getattr(ginit, name)(t, *args) is t

    _same_failure(run_torch, run_tg)


@pytest.mark.parametrize("call", [
    lambda m, t: m.kaiming_uniform_(t(3, 4), mode="bad"),
    lambda m, t: m.kaiming_normal_(t(3, 4), nonlinearity="bad"),
    lambda m, t: m.kaiming_uniform_(t(3, 4), mode="FAN_OUT"),
    lambda m, t: m.kaiming_uniform_(t(0, 4), mode="bad"),
    lambda m, t: m.xavier_uniform_(t(3)),
    lambda m, t: m.kaiming_normal_(t()),
    lambda m, t: m.uniform_(t(3), 1.0, 0.0),
    lambda m, t: m.uniform_(t(3), -math.inf, 0.0),
    lambda m, t: m.normal_(t(3), 0.0, -1.0),
    lambda m, t: m.normal_(t(3), 0.0, math.nan),
    lambda m, t: m.trunc_normal_(t(3), a=1.0, b=0.0),
    lambda m, t: m.dirac_(t(4, 2, 3), groups=3),
    lambda m, t: m.eye_(t(3, 2, 1)),
])
def test_init_errors(call):
    _same_failure(lambda: call(tinit, torch.empty), lambda: call(ginit, tg.empty))


def test_init_distributions_follow_pytorchs_formulas():
    w = tg.empty(200, 300, 3, requires_grad=True)
    assert ginit.kaiming_uniform_(w, a=math.sqrt(5)) is w and w.is_leaf and w.grad_fn is None
    bound = math.sqrt(3) * math.sqrt(2 / (1 + 5)) / math.sqrt(900)  # Linear's default: 1/sqrt(fan_in)
    assert np.abs(w.data).max() <= bound and np.abs(w.data).max() > 0.99 * bound
    ginit.kaiming_normal_(w, a=0.2, mode="fan_out", nonlinearity="leaky_relu")
    assert w.data.std() == pytest.approx(math.sqrt(2 / 1.04) / math.sqrt(600), rel=0.02)
    ginit.xavier_normal_(w, gain=2.0)
    assert w.data.std() == pytest.approx(2 * math.sqrt(2 / 1500), rel=0.02)
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        ginit.trunc_normal_(w, mean=10.0)
    with pytest.warns(UserWarning, match="zero-element"):
        assert ginit.kaiming_uniform_(tg.empty(0)).shape == (0,)


def test_init_generator():
    a = ginit.xavier_uniform_(tg.empty(4, 5), generator=tg.Generator().manual_seed(3))
    b = ginit.xavier_uniform_(tg.empty(4, 5), generator=tg.Generator().manual_seed(3))
    c = ginit.orthogonal_(tg.empty(4, 5), generator=np.random.default_rng(3))
    assert np.array_equal(a.data, b.data) and np.allclose(c.data @ c.data.T, np.eye(4), atol=1e-6)
    with pytest.raises(TypeError):
        ginit.normal_(tg.empty(3), generator=3)


# --- clipping -----------------------------------------------------------------------------------------


def _params(lib, dtype, grads):
    made = []
    for g in grads:
        p = lib.zeros(np.shape(g), dtype=getattr(lib, dtype), requires_grad=True)
        if lib is torch:
            p.grad = torch.tensor(g, dtype=p.dtype)
        else:
            p.grad = np.array(g, dtype=dtype)
        made.append(p)
    return made


GRADS = [np.linspace(-3, 2, 12).reshape(3, 4), np.array([0.7, -1.9, 2.4]), np.array(0.3)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("norm_type", [2.0, 1, 0.5, 3, 0, math.inf, -math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.1, 1.0, 100.0])
def test_clip_grad_norm(dtype, norm_type, max_norm):
    tp, gp_ = _params(torch, dtype, GRADS), _params(tg, dtype, GRADS)
    expected = tutils.clip_grad_norm_(tp, max_norm, norm_type, foreach=True)
    got = gutils.clip_grad_norm_(gp_, max_norm, norm_type, foreach=True)
    assert isinstance(got, tg.Tensor) and got.shape == () and str(got.dtype) == dtype
    np.testing.assert_allclose(got.data, expected.numpy(), rtol=1e-6)
    for t, g in zip(tp, gp_, strict=True):
        np.testing.assert_allclose(g.grad, t.grad.numpy(), rtol=1e-6)


def test_clip_grad_edge_cases():
    empty = [np.zeros((0, 2))]
    for norm_type in (math.inf, -math.inf):  # max and min of an empty gradient have no identity
        _same_failure(lambda n=norm_type: tutils.clip_grad_norm_(_params(torch, "float32", empty), 1, n),
                      lambda n=norm_type: gutils.clip_grad_norm_(_params(tg, "float32", empty), 1, n))
    _same_failure(lambda: tutils.clip_grad_norm_(["x"], 1.0), lambda: gutils.clip_grad_norm_(["x"], 1.0))
    _same_failure(lambda: tutils.clip_grad_value_([1.0], 1.0), lambda: gutils.clip_grad_value_([1.0], 1.0))
    _same_failure(lambda: tutils.clip_grads_with_norm_(_params(torch, "float32", GRADS), 1.0, 3.0),
                  lambda: gutils.clip_grads_with_norm_(_params(tg, "float32", GRADS), 1.0, 3.0))
    nan = [[np.nan]]
    _same_failure(lambda: tutils.clip_grad_norm_(_params(torch, "float32", nan), 1, error_if_nonfinite=True),
                  lambda: gutils.clip_grad_norm_(_params(tg, "float32", nan), 1, error_if_nonfinite=True))
    # a float16 gradient scaled by a float32 total, in float32 and rounded once, as PyTorch does
    tp, gp_ = _params(torch, "float16", GRADS), _params(tg, "float16", GRADS)
    tutils.clip_grads_with_norm_(tp, 1.0, torch.tensor(10.0))
    gutils.clip_grads_with_norm_(gp_, 1.0, tg.tensor(10.0))
    assert all(np.array_equal(g.grad, t.grad.numpy()) for t, g in zip(tp, gp_, strict=True))
    zero = gutils.clip_grad_norm_(_params(tg, "float32", [np.zeros(3)]), 0.0)
    assert zero.item() == 0.0


def test_vector_to_parameters_length():
    for n in (11, 12, 13):  # 12 elements are needed: too short is an error, too long is not
        _same_failure(lambda k=n: tutils.vector_to_parameters(torch.arange(k * 1.0), [torch.zeros(2, 3)] * 2),
                      lambda k=n: gutils.vector_to_parameters(tg.arange(k * 1.0), [tg.zeros(2, 3)] * 2))


# --- normalisations and parametrizations ---------------------------------------------------------------


def _linear_pair():
    t = torch.nn.Linear(4, 3).double()
    g = gnn.Linear(4, 3).double()
    g.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, g


@pytest.mark.parametrize("dim", [0, 1, -1, None, 2])
def test_weight_norm_dims(dim):
    for torch_fn, tg_fn in ((tutils.weight_norm, gutils.weight_norm),
                            (tutils.parametrizations.weight_norm, gpz.weight_norm)):
        t, g = _linear_pair()
        _same_failure(lambda f=torch_fn, m=t: f(m, dim=dim), lambda f=tg_fn, m=g: f(m, dim=dim))
        if dim != 2:
            assert sorted(t.state_dict()) == sorted(g.state_dict())
            assert np.allclose(t.weight.detach().numpy(), g.weight.data)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, 4])
def test_spectral_norm_structure_and_values(dim):
    t, g = _linear_pair()
    _same_failure(lambda: tutils.spectral_norm(t, dim=dim), lambda: gutils.spectral_norm(g, dim=dim))
    if dim not in (None, 0, 1):
        return
    assert sorted(t.state_dict()) == sorted(g.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    g.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.linspace(-1, 1, 8).reshape(2, 4)
    for mode in ("train", "eval"):
        getattr(t, mode)(), getattr(g, mode)()
        assert np.allclose(t(torch.tensor(x)).detach().numpy(), g(tg.tensor(x)).data)
        assert np.allclose(t.weight_u.numpy(), g.weight_u.data)


def test_parametrize_state_and_removal():
    t, g = _linear_pair()

    def to_double(lib):
        class ToFloat(lib.nn.Module):
            def forward(self, x):
                return x.float()
        return ToFloat()

    torch.nn.utils.parametrize.register_parametrization(t, "weight", to_double(torch), unsafe=True)
    gp.register_parametrization(g, "weight", to_double(tg), unsafe=True)
    assert sorted(t.state_dict()) == sorted(g.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert type(t).__name__ == type(g).__name__ == "ParametrizedLinear"
    assert gp.is_parametrized(g, "weight") and not gp.is_parametrized(g, "bias")
    _same_failure(lambda: torch.nn.utils.parametrize.remove_parametrizations(t, "weight"),
                  lambda: gp.remove_parametrizations(g, "weight"))  # set_ cannot change the dtype
    _same_failure(lambda: torch.nn.utils.parametrize.remove_parametrizations(t, "bias"),
                  lambda: gp.remove_parametrizations(g, "bias"))
