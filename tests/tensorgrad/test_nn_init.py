"""`nn.init` against PyTorch: gains, fans, the spread of each initialiser, and the contract
(in place, no graph, the same tensor back, seeded by `tg.manual_seed` or `generator=`, the same
numbers on the CPU and on a GPU)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import placed_on

import tensorgrad as tg
from tensorgrad import nn
from tensorgrad.device import to_numpy

init = nn.init


@pytest.mark.parametrize(
    ("nonlinearity", "param"),
    [
        ("linear", None),
        ("conv2d", None),
        ("conv_transpose1d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("leaky_relu", math.sqrt(5)),
        ("leaky_relu", 3),
        ("selu", None),
    ],
)
def test_calculate_gain_matches_pytorch(nonlinearity, param):
    torch = pytest.importorskip("torch")
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(
        torch.nn.init.calculate_gain(nonlinearity, param), rel=1e-15
    )


# (initialiser, keyword arguments, shape, the bound of a uniform / the std of a normal, by PyTorch's formula)
SPREADS = [
    ("uniform_", {"a": -0.3, "b": 0.5}, (200, 100), None),
    ("normal_", {"mean": 0.5, "std": 0.2}, (200, 100), 0.2),
    ("xavier_uniform_", {}, (200, 100), math.sqrt(6 / 300)),
    ("xavier_uniform_", {"gain": 2.0}, (16, 8, 3, 3), 2 * math.sqrt(6 / (72 + 144))),
    ("xavier_normal_", {"gain": 0.5}, (200, 100), 0.5 * math.sqrt(2 / 300)),
    ("kaiming_uniform_", {}, (200, 100), math.sqrt(2) * math.sqrt(3 / 100)),  # a=0: slope 0
    ("kaiming_uniform_", {"a": math.sqrt(5)}, (200, 100), 1 / math.sqrt(100)),  # nn.Linear's
    (
        "kaiming_uniform_",
        {"mode": "fan_out", "nonlinearity": "relu"},
        (16, 8, 3, 3),
        math.sqrt(2) * math.sqrt(3 / 144),
    ),
    ("kaiming_normal_", {"nonlinearity": "tanh"}, (200, 100), 5 / 3 / math.sqrt(100)),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}, (64, 100), math.sqrt(2 / 64)),
]


@pytest.mark.parametrize(
    ("name", "kwargs", "shape", "spread"), SPREADS, ids=[f"{s[0]}{s[1]}" for s in SPREADS]
)
def test_each_initialiser_has_pytorchs_spread(name, kwargs, shape, spread):
    torch = pytest.importorskip("torch")
    tg.manual_seed(0)
    torch.manual_seed(0)
    ours = getattr(init, name)(tg.zeros(*shape, dtype=tg.float64), **kwargs).data
    theirs = getattr(torch.nn.init, name)(torch.zeros(*shape, dtype=torch.float64), **kwargs).numpy()
    if name.endswith("uniform_"):
        low, high = (kwargs["a"], kwargs["b"]) if name == "uniform_" else (-spread, spread)
        for values in (ours, theirs):
            assert (
                low <= values.min() < low + 0.01 * (high - low)
                and high - 0.01 * (high - low) < values.max() <= high
            )
    else:
        for values in (ours, theirs):
            assert values.std() == pytest.approx(spread, rel=0.03)
            assert values.mean() == pytest.approx(kwargs.get("mean", 0.0), abs=0.03 * spread)
    assert ours.std() == pytest.approx(theirs.std(), rel=0.03)


def test_initialisers_write_in_place_without_a_graph_and_return_the_tensor():
    layer = nn.Linear(5, 3)
    weight, version = layer.weight, layer.weight._version
    for fill in (
        lambda w: init.kaiming_normal_(w),
        lambda w: init.constant_(w, 0.25),
        init.ones_,
        init.zeros_,
    ):
        out = fill(weight)
        assert out is weight and weight.is_leaf and weight.requires_grad and weight.grad_fn is None
        assert weight._version > version
        version = weight._version
    assert not weight.data.any()
    np.testing.assert_array_equal(init.constant_(tg.zeros(2, dtype=tg.float64), 0.25).data, [0.25, 0.25])
    assert init.ones_(tg.zeros(3)).dtype == np.float32  # the tensor keeps its dtype


def test_the_seed_and_a_generator_make_initialisation_repeatable(device):
    tg.manual_seed(3)
    first = init.xavier_uniform_(tg.zeros(4, 6)).data.copy()  # on the CPU
    tg.manual_seed(3)
    again = init.xavier_uniform_(tg.zeros(4, 6, device=device))
    assert again.device == placed_on(device)
    np.testing.assert_array_equal(to_numpy(again.data), first)  # the same numbers on either device
    a = to_numpy(init.normal_(tg.zeros(5, device=device), generator=np.random.default_rng(7)).data)
    b = to_numpy(init.normal_(tg.zeros(5, device=device), generator=np.random.default_rng(7)).data)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, to_numpy(init.normal_(tg.zeros(5, device=device)).data))


def test_apply_initialises_every_linear_of_a_model():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))

    def init_weights(module):
        if isinstance(module, nn.Linear):
            init.xavier_uniform_(module.weight, gain=init.calculate_gain("tanh"))
            init.zeros_(module.bias)

    assert model.apply(init_weights) is model
    assert not model[0].bias.data.any() and not model[2].bias.data.any()
    assert np.abs(model[2].weight.data).max() <= 5 / 3 * math.sqrt(6 / 10)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: init.xavier_uniform_(tg.zeros(5)), ValueError, ["fewer than 2 dimensions", "(5,)"]),
        (lambda: init.kaiming_uniform_(tg.zeros(2, 2), mode="fan_avg"), ValueError, ["'fan_avg'", "fan_in"]),
        (lambda: init.kaiming_normal_(tg.zeros(2, 2), nonlinearity="swish"), ValueError, ["'swish'"]),
        (lambda: init.calculate_gain("leaky_relu", True), ValueError, ["negative_slope"]),
        (lambda: init.zeros_(np.zeros(3)), TypeError, ["zeros_", "ndarray"]),
    ],
)
def test_bad_arguments_raise_as_pytorch_does(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)


def test_a_zero_element_tensor_is_left_alone_with_a_warning():
    with pytest.warns(UserWarning, match="zero-element"):
        assert init.kaiming_uniform_(tg.zeros(0, 3)).shape == (0, 3)


# --- trunc_normal_, eye_, dirac_, orthogonal_, sparse_ ------------------------------------------


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments():
    t = tg.empty(200_000, dtype=tg.float64)
    nn.init.trunc_normal_(t, mean=1.0, std=2.0, a=-1.0, b=4.0, generator=np.random.default_rng(0))
    assert t.data.min() >= -1.0 and t.data.max() <= 4.0
    # The truncated normal's mean: mean + std (phi(alpha) - phi(beta)) / (Phi(beta) - Phi(alpha)).
    alpha, beta = (-1.0 - 1.0) / 2.0, (4.0 - 1.0) / 2.0
    phi = lambda z: np.exp(-z * z / 2) / np.sqrt(2 * np.pi)  # noqa: E731
    big_phi = lambda z: 0.5 * (1 + math.erf(z / np.sqrt(2)))  # noqa: E731
    expected = 1.0 + 2.0 * (phi(alpha) - phi(beta)) / (big_phi(beta) - big_phi(alpha))
    assert abs(t.data.mean() - expected) < 0.01


def test_trunc_normal_in_a_far_tail_does_not_collapse_to_the_bound():
    t = nn.init.trunc_normal_(tg.empty(10_000, dtype=tg.float64), a=5.0, b=6.0)
    assert t.data.min() >= 5.0 and t.data.max() <= 6.0 and 5.1 < t.data.mean() < 5.3


def test_eye_and_dirac_match_torch():
    torch = pytest.importorskip("torch")
    for shape in ((3, 5), (4, 2)):
        ours, theirs = nn.init.eye_(tg.empty(*shape)), torch.nn.init.eye_(torch.empty(*shape))
        np.testing.assert_array_equal(ours.data, theirs.numpy())
    for shape, groups in (((4, 2, 3, 3), 2), ((3, 5, 3), 1), ((6, 2, 3, 1, 3), 3)):
        ours = nn.init.dirac_(tg.empty(*shape), groups)
        theirs = torch.nn.init.dirac_(torch.empty(*shape), groups)
        np.testing.assert_array_equal(ours.data, theirs.numpy())


@pytest.mark.parametrize("shape", [(5, 8), (8, 5), (4, 2, 3)])
def test_orthogonal_gives_orthonormal_rows_or_columns_times_gain(shape):
    w = nn.init.orthogonal_(tg.empty(*shape, dtype=tg.float64), gain=2.0)
    flat = w.data.reshape(shape[0], -1)
    small = min(flat.shape)
    gram = flat @ flat.T if flat.shape[0] == small else flat.T @ flat
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-12)


def test_sparse_zeroes_a_fraction_of_each_column():
    w = nn.init.sparse_(tg.empty(10, 6), sparsity=0.25, std=0.5)
    assert ((w.data == 0).sum(axis=0) == 3).all()  # ceil(0.25 * 10) per column


def test_the_new_initialisers_refuse_what_torch_refuses():
    torch = pytest.importorskip("torch")
    for call in (lambda m: m.nn.init.eye_(m.empty(2, 2, 2)), lambda m: m.nn.init.dirac_(m.empty(2, 2)),
                 lambda m: m.nn.init.orthogonal_(m.empty(3)), lambda m: m.nn.init.sparse_(m.empty(3), 0.1)):
        with pytest.raises(ValueError):
            call(torch)
        with pytest.raises(ValueError):
            call(tg)
