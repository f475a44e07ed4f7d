"""More of tg.distributions against torch.distributions: transforms, transformed distributions,
the gamma family with implicit reparameterization, discrete and heavy-tailed distributions,
mixtures, and their KL divergences."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import distributions as D  # noqa: N812 - PyTorch's habit
from tensorgrad.distributions.gamma import standard_gamma_grad
from tensorgrad.special import _incomplete_gamma_arrays

torch = pytest.importorskip("torch")
from distribution_checks import assert_kl_matches, assert_method_matches, assert_samples_fit, both_raise  # noqa: E402 - after the skip

TD = torch.distributions

RNG = np.random.default_rng(1)


def _make(lib: Any, params: dict[str, Any]) -> dict[str, Any]:
    make = tg.tensor if lib is tg else torch.tensor
    return {k: make(np.asarray(v, dtype=np.float64), dtype=lib.float64, requires_grad=True)
            for k, v in params.items()}


# (class name, float64 parameters, fixed arguments, value for log_prob / cdf)
CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any], np.ndarray]] = {
    "lognormal": ("LogNormal", {"loc": RNG.normal(size=3), "scale": RNG.uniform(0.5, 2, (2, 1))}, {},
                  RNG.uniform(0.2, 3, (2, 3))),
    "halfnormal": ("HalfNormal", {"scale": RNG.uniform(0.5, 2, 3)}, {}, RNG.uniform(0.1, 2, (2, 3))),
    "gumbel": ("Gumbel", {"loc": RNG.normal(size=3), "scale": RNG.uniform(0.5, 2, 3)}, {},
               RNG.normal(size=(2, 3))),
    "logistic_normal": ("LogisticNormal", {"loc": RNG.normal(size=(2, 3)), "scale": RNG.uniform(0.5, 2, 3)},
                        {},
                        RNG.dirichlet(np.ones(4), 2)),
    "gamma": ("Gamma", {"concentration": RNG.uniform(0.5, 3, 3), "rate": RNG.uniform(0.5, 2, (2, 1))}, {},
              RNG.uniform(0.1, 3, (2, 3))),
    "chi2": ("Chi2", {"df": RNG.uniform(1, 5, 3)}, {}, RNG.uniform(0.1, 3, (2, 3))),
    "beta": ("Beta", {"concentration1": RNG.uniform(0.5, 3, 3), "concentration0": RNG.uniform(0.5, 3, 3)}, {},
             RNG.uniform(0.05, 0.95, (2, 3))),
    "dirichlet": ("Dirichlet", {"concentration": RNG.uniform(0.5, 3, (2, 4))}, {},
                  RNG.dirichlet(np.ones(4), 2)),
    "dirichlet_sparse": ("Dirichlet", {"concentration": RNG.uniform(0.2, 0.9, (2, 3))}, {},
                         RNG.dirichlet(np.ones(3), 2)),
    "poisson": ("Poisson", {"rate": RNG.uniform(0.5, 4, 3)}, {}, np.array([[0.0, 2, 5], [1, 0, 3]])),
    "binomial": ("Binomial", {"probs": RNG.uniform(0.1, 0.9, 3)}, {"total_count": 5},
                 np.array([[0.0, 2, 5], [1, 4, 3]])),
    "binomial_logits": ("Binomial", {"logits": RNG.normal(size=3)}, {"total_count": 4},
                        np.array([0.0, 2, 4])),
    "geometric": ("Geometric", {"probs": RNG.uniform(0.1, 0.9, 3)}, {}, np.array([[0.0, 2, 5], [1, 4, 3]])),
    "geometric_logits": ("Geometric", {"logits": RNG.normal(size=3)}, {}, np.array([0.0, 2, 5])),
    "cauchy": ("Cauchy", {"loc": RNG.normal(size=3), "scale": RNG.uniform(0.5, 2, 3)}, {},
               RNG.normal(size=(2, 3))),
    "student_t": ("StudentT", {"df": np.array([0.8, 1.5, 4.0]), "loc": RNG.normal(size=3),
                               "scale": RNG.uniform(0.5, 2, 3)}, {}, RNG.normal(size=(2, 3))),
    "relaxed_bernoulli": ("RelaxedBernoulli", {"probs": RNG.uniform(0.1, 0.9, 3)}, {"temperature": 0.7},
                          RNG.uniform(0.05, 0.95, (2, 3))),
    "relaxed_one_hot": ("RelaxedOneHotCategorical", {"logits": RNG.normal(size=(2, 3))}, {"temperature": 0.5},
                        RNG.dirichlet(np.ones(3), 2)),
}

METHODS = ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "mode"]


def _build(lib: Any, case: str) -> tuple[Any, dict[str, Any]]:
    name, params, fixed, _ = CASES[case]
    leaves = _make(lib, params)
    fixed = dict(fixed)
    if "temperature" in fixed:
        fixed["temperature"] = (tg if lib is tg else torch).tensor(fixed["temperature"], dtype=lib.float64)
    module = D if lib is tg else TD
    return getattr(module, name)(**fixed, **leaves), leaves


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("method", METHODS)
def test_values_and_gradients_match_pytorch(case: str, method: str) -> None:
    ours, our_leaves = _build(tg, case)
    theirs, their_leaves = _build(torch, case)
    value = CASES[case][3]
    our_value, their_value = tg.tensor(value, dtype=tg.float64), torch.tensor(value, dtype=torch.float64)
    assert_method_matches(method, ours, our_leaves, our_value, theirs, their_leaves, their_value, RNG)


# Transforms


def _transforms(lib: Any) -> dict[str, Any]:
    T = D.transforms if lib is tg else TD.transforms  # noqa: N806
    make = tg.tensor if lib is tg else torch.tensor
    return {
        "exp": T.ExpTransform(), "sigmoid": T.SigmoidTransform(), "tanh": T.TanhTransform(),
        "power": T.PowerTransform(make([0.5, 2.0, -1.5], dtype=lib.float64)),
        "affine": T.AffineTransform(make([1.0, -2.0, 0.5], dtype=lib.float64), make([2.0, -0.5, 3.0],
                                                                                   dtype=lib.float64)),
        "affine_event": T.AffineTransform(0.5, -2.0, event_dim=1),
        "stick": T.StickBreakingTransform(),
        "compose": T.ComposeTransform([T.AffineTransform(0.0, 2.0), T.SigmoidTransform()]),
        "compose_event": T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0, event_dim=1)]),
        "inverse": T.ExpTransform().inv,
    }


@pytest.mark.parametrize("name", list(_transforms(tg)))
def test_transforms_match_pytorch(name: str) -> None:
    ours, theirs = _transforms(tg)[name], _transforms(torch)[name]
    x = RNG.uniform(0.2, 1.5, (2, 3))
    our_x = tg.tensor(x, requires_grad=True)
    their_x = torch.tensor(x, requires_grad=True)
    y, expected = ours(our_x), theirs(their_x)
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.inv(y).detach().numpy(), theirs.inv(expected).detach().numpy(), rtol=1e-9)
    ladj, their_ladj = ours.log_abs_det_jacobian(our_x, y), theirs.log_abs_det_jacobian(their_x, expected)
    assert tuple(ladj.shape) == tuple(their_ladj.shape)
    np.testing.assert_allclose(ladj.detach().numpy(), their_ladj.detach().numpy(), rtol=1e-9, atol=1e-12)
    (y.sum() + ladj.sum()).backward()
    (expected.sum() + their_ladj.sum()).backward()
    np.testing.assert_allclose(our_x.grad, their_x.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert repr(ours.domain) == repr(theirs.domain) and repr(ours.codomain) == repr(theirs.codomain)
    assert ours.bijective == theirs.bijective
    assert ours.forward_shape((2, 3)) == tuple(theirs.forward_shape(torch.Size((2, 3))))


def test_transform_details() -> None:
    T = D.transforms  # noqa: N806
    with pytest.raises(ValueError, match="cache_size"):
        T.ExpTransform(cache_size=2)
    cached = T.ExpTransform(cache_size=1)
    x = tg.tensor([1.0, 2.0])
    assert cached.inv(cached(x)) is x  # the cache returns the very input
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform().inv == T.ExpTransform().inv
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.identity_transform(x) is x and T.ComposeTransform([]).bijective
    assert T.AffineTransform(0.0, -2.0).sign == -1
    assert T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, -1.0)]).sign == -1
    softmax = T.SoftmaxTransform()
    np.testing.assert_allclose(softmax(tg.tensor([0.0, math.log(3.0)])).numpy(), [0.25, 0.75])
    with pytest.raises(NotImplementedError):
        softmax.log_abs_det_jacobian(x, x)
    with pytest.raises(ValueError, match="Too few dimensions"):
        T.StickBreakingTransform().forward_shape(())
    y = T.StickBreakingTransform()(tg.zeros(3))
    np.testing.assert_allclose(y.numpy(), [0.25] * 4, rtol=1e-6)  # x = 0 breaks the stick evenly


def test_transformed_distribution_matches_pytorch() -> None:
    loc, scale = RNG.normal(size=3), RNG.uniform(0.5, 2, 3)
    value = RNG.uniform(0.1, 0.9, (4, 3))

    def build(lib: Any) -> tuple[Any, Any]:
        module, make = (D, tg.tensor) if lib is tg else (TD, torch.tensor)
        leaf = make(loc, requires_grad=True)
        base = module.Normal(leaf, make(scale))
        transforms = [module.transforms.AffineTransform(0.5, -2.0), module.transforms.SigmoidTransform()]
        return module.TransformedDistribution(base, transforms), leaf

    (ours, our_loc), (theirs, their_loc) = build(tg), build(torch)
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    assert repr(ours.support) == repr(theirs.support) and ours.has_rsample
    for method in ("log_prob", "cdf"):
        got = getattr(ours, method)(tg.tensor(value))
        expected = getattr(theirs, method)(torch.tensor(value))
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10)
    got, expected = ours.icdf(tg.tensor(value)), theirs.icdf(torch.tensor(value))
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10)
    ours.log_prob(tg.tensor(value)).sum().backward()
    theirs.log_prob(torch.tensor(value)).sum().backward()
    np.testing.assert_allclose(our_loc.grad, their_loc.grad.numpy(), rtol=1e-10)
    expanded = ours.expand((5, 3))
    assert expanded.batch_shape == (5, 3) and expanded.sample().shape == (5, 3)
    with pytest.raises(ValueError, match="transforms must be"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")
    with pytest.raises(ValueError, match="at least 1"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), D.transforms.StickBreakingTransform())


# The implicit reparameterization gradient of gamma draws


def test_standard_gamma_grad_matches_pytorch_and_the_exact_derivative() -> None:
    alpha = np.concatenate([RNG.uniform(0.05, 3, 300), RNG.uniform(3, 200, 100), [0.3, 1000.0]])
    x = RNG.standard_gamma(alpha)
    ours = standard_gamma_grad(alpha, x)
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=5e-4)  # PyTorch's is a fitted approximation
    # The exact derivative of the quantile function x(alpha) at fixed P(alpha, x), by bisection
    a, xi = np.array([0.3, 2.5, 40.0]), np.array([0.05, 1.7, 43.0])
    with np.errstate(all="ignore"):  # lgamma's reflection branch, evaluated and discarded
        target = _incomplete_gamma_arrays(a, xi)[0]

    def quantile(shape: np.ndarray) -> np.ndarray:
        lo, hi = np.zeros(3), xi * 4 + 10
        for _ in range(100):
            mid = (lo + hi) / 2
            with np.errstate(all="ignore"):  # the first midpoints can sit at 0
                below = _incomplete_gamma_arrays(shape, mid)[0] < target
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return (lo + hi) / 2

    step = 1e-5 * a
    numeric = (quantile(a + step) - quantile(a - step)) / (2 * step)
    np.testing.assert_allclose(standard_gamma_grad(a, xi), numeric, rtol=1e-6)


def test_gamma_rsample_gradients() -> None:
    concentration = tg.tensor([0.5, 2.0, 10.0], dtype=tg.float64, requires_grad=True)
    rate = tg.tensor([1.0, 0.5, 3.0], dtype=tg.float64, requires_grad=True)
    tg.manual_seed(0)
    x = D.Gamma(concentration, rate).rsample((7,))
    x.sum().backward()
    draws = (x * rate).detach().numpy()  # the Gamma(c, 1) draws
    expected = (standard_gamma_grad(concentration.detach().numpy(), draws) / rate.detach().numpy()).sum(0)
    np.testing.assert_allclose(concentration.grad, expected, rtol=1e-10)
    np.testing.assert_allclose(rate.grad, -(x.detach() / rate.detach()).sum(0).numpy(), rtol=1e-10)
    # The pathwise gradient of E[x] = c / rate is unbiased: average it over many draws
    c = tg.tensor([0.7, 3.0], dtype=tg.float64, requires_grad=True)
    tg.manual_seed(1)
    D.Gamma(c, 2.0).rsample((5_000,)).mean(0).sum().backward()
    np.testing.assert_allclose(c.grad, [0.5, 0.5], rtol=0.06)
    for make in (lambda a: D.Dirichlet(a), lambda a: D.Beta(a[0], a[1]), lambda a: D.Chi2(a),
                 lambda a: D.StudentT(a)):
        a = tg.tensor([1.5, 0.8], dtype=tg.float64, requires_grad=True)
        make(a).rsample((3,)).pow(2).sum().backward()
        assert a.grad is not None and np.all(np.isfinite(a.grad)) and np.any(a.grad)


def test_dirichlet_rsample_gradient_is_unbiased() -> None:
    concentration = tg.tensor([0.5, 1.5, 3.0], dtype=tg.float64, requires_grad=True)
    tg.manual_seed(2)
    D.Dirichlet(concentration).rsample((5_000,))[:, 0].mean().backward()
    c = concentration.detach().numpy()
    total = c.sum()  # d/dc_j of E[x_0] = c_0 / total
    expected = np.array([1 / total - c[0] / total**2, -c[0] / total**2, -c[0] / total**2])
    np.testing.assert_allclose(concentration.grad, expected, atol=0.02)


# Sampling


def _samplers(dtype: Any) -> dict[str, Any]:
    z = tg.zeros(2, 3, dtype=dtype)
    return {
        "lognormal": D.LogNormal(z, 1.0), "halfnormal": D.HalfNormal(z + 1), "gumbel": D.Gumbel(z, 2.0),
        "logistic_normal": D.LogisticNormal(z, 1.0), "gamma": D.Gamma(z + 2, 1.0), "chi2": D.Chi2(z + 3),
        "beta": D.Beta(z + 2, 3.0), "dirichlet": D.Dirichlet(z + 1), "poisson": D.Poisson(z + 2),
        "binomial": D.Binomial(4, z + 0.3), "geometric": D.Geometric(z + 0.3), "cauchy": D.Cauchy(z, 1.0),
        "student_t": D.StudentT(z + 3), "relaxed_bernoulli": D.RelaxedBernoulli(tg.tensor(0.5, dtype=dtype),
                                                                                z + 0.3),
        "relaxed_one_hot": D.RelaxedOneHotCategorical(tg.tensor(0.5, dtype=dtype), logits=z),
        "mixture": D.MixtureSameFamily(D.Categorical(logits=z), D.Normal(z, 1.0)),
    }


@pytest.mark.parametrize("name", list(_samplers(tg.float32)))
@pytest.mark.parametrize("dtype", [tg.float32, tg.float64])
def test_sample_shapes_dtypes_and_supports(name: str, dtype: Any) -> None:
    dist = _samplers(dtype)[name]
    assert_samples_fit(dist, dtype)


@pytest.mark.parametrize("name", ["lognormal", "halfnormal", "gumbel", "gamma", "chi2", "beta", "poisson",
                                  "binomial", "geometric", "student_t", "mixture"])
def test_sample_statistics(name: str) -> None:
    dist = _samplers(tg.float64)[name]
    tg.manual_seed(0)
    n = 20_000
    draws = dist.sample((n,)).numpy()
    mean, std = dist.mean.numpy(), dist.stddev.numpy()
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * std / math.sqrt(n)), (draws.mean(0), mean)


def test_dirichlet_and_relaxed_statistics() -> None:
    tg.manual_seed(0)
    concentration = np.array([0.5, 1.0, 3.0])
    draws = D.Dirichlet(tg.tensor(concentration)).sample((20_000,)).numpy()
    np.testing.assert_allclose(draws.mean(0), concentration / concentration.sum(), atol=0.01)
    np.testing.assert_allclose(draws.sum(-1), 1.0, rtol=1e-12)
    # A cold relaxed one-hot is nearly one-hot, and picks each category about as often as its probability
    probs = np.array([0.2, 0.5, 0.3])
    draws = D.RelaxedOneHotCategorical(tg.tensor(0.05), tg.tensor(probs)).sample((20_000,)).numpy()
    assert np.mean(draws.max(-1) > 0.9) > 0.9
    np.testing.assert_allclose(np.bincount(draws.argmax(-1), minlength=3) / 20_000, probs, atol=0.015)


def test_relaxed_rsample_gradients() -> None:
    logits = tg.tensor([0.3, -0.5, 1.0], dtype=tg.float64, requires_grad=True)

    def draw(leaf: Any) -> Any:
        tg.manual_seed(4)
        return D.RelaxedOneHotCategorical(tg.tensor(0.7, dtype=tg.float64), logits=leaf).rsample((2,))

    assert tg.autograd.gradcheck(draw, (logits,))
    probs = tg.tensor([0.3, 0.6], dtype=tg.float64, requires_grad=True)

    def draw_binary(leaf: Any) -> Any:
        tg.manual_seed(5)
        return D.RelaxedBernoulli(tg.tensor(0.7, dtype=tg.float64), leaf).rsample((3,))

    assert tg.autograd.gradcheck(draw_binary, (probs,))


# Mixtures


def test_mixture_same_family_matches_pytorch() -> None:
    logits, loc, scale = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3, 2)), RNG.uniform(0.5, 2, (2, 3, 2))
    value = RNG.normal(size=(4, 2, 2))

    def build(lib: Any) -> tuple[Any, dict[str, Any]]:
        module = D if lib is tg else TD
        leaves = _make(lib, {"logits": logits, "loc": loc, "scale": scale})
        component = module.Independent(module.Normal(leaves["loc"], leaves["scale"]), 1)
        return module.MixtureSameFamily(module.Categorical(logits=leaves["logits"]), component), leaves

    (ours, our_leaves), (theirs, their_leaves) = build(tg), build(torch)
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    for got, expected in ((ours.log_prob(tg.tensor(value)), theirs.log_prob(torch.tensor(value))),
                          (ours.mean, theirs.mean), (ours.variance, theirs.variance)):
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10)
    ours.log_prob(tg.tensor(value)).sum().backward()
    theirs.log_prob(torch.tensor(value)).sum().backward()
    for key, leaf in our_leaves.items():
        np.testing.assert_allclose(leaf.grad, their_leaves[key].grad.numpy(), rtol=1e-9, err_msg=key)
    mix = D.MixtureSameFamily(D.Categorical(tg.ones(3)), D.Normal(tg.zeros(3), 1.0))
    np.testing.assert_allclose(mix.cdf(tg.tensor([0.0])).numpy(), [0.5])
    assert mix.expand((4,)).sample((2,)).shape == (2, 4)


# KL divergences


def _dist(lib: Any, name: str, params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    fixed = {k: v for k, v in params.items() if k == "total_count"}
    leaves = _make(lib, {k: v for k, v in params.items() if k != "total_count"})
    return getattr(D if lib is tg else TD, name)(**fixed, **leaves), leaves


GAMMA_P = {"concentration": [0.5, 3.0], "rate": [1.0, 2.0]}
GAMMA_Q = {"concentration": [2.0, 1.0], "rate": [0.5, 1.5]}
BETA_P = {"concentration1": [0.5, 3.0], "concentration0": [1.0, 2.0]}
BETA_Q = {"concentration1": [2.0, 1.0], "concentration0": [0.5, 1.5]}
LOC_SCALE_P = {"loc": [0.3, -1.0], "scale": [1.0, 2.0]}
LOC_SCALE_Q = {"loc": [0.0, 1.0], "scale": [0.5, 1.5]}

KL_PAIRS = [
    ("Gamma", GAMMA_P, "Gamma", GAMMA_Q),
    ("Beta", BETA_P,
     "Beta", BETA_Q),
    ("Dirichlet", {"concentration": [[0.5, 3.0, 1.0]]}, "Dirichlet", {"concentration": [[2.0, 1.0, 0.7]]}),
    ("Poisson", {"rate": [0.5, 3.0]}, "Poisson", {"rate": [2.0, 1.0]}),
    ("Binomial", {"total_count": 5, "probs": [0.3, 0.6]}, "Binomial",
     {"total_count": 5, "probs": [0.5, 0.2]}),
    ("Geometric", {"probs": [0.3, 0.6]}, "Geometric", {"probs": [0.5, 0.2]}),
    ("Gumbel", LOC_SCALE_P, "Gumbel", LOC_SCALE_Q),
    ("HalfNormal", {"scale": [1.0, 2.0]}, "HalfNormal", {"scale": [0.5, 1.5]}),
    ("Cauchy", LOC_SCALE_P, "Cauchy", LOC_SCALE_Q),
    ("LogNormal", LOC_SCALE_P, "LogNormal", LOC_SCALE_Q),
    ("Bernoulli", {"probs": [0.3, 0.6]}, "Poisson", {"rate": [2.0, 1.0]}),
    ("Beta", BETA_P, "Exponential", {"rate": [2.0, 1.0]}),
    ("Beta", BETA_P,
     "Gamma", GAMMA_Q),
    ("Beta", BETA_P, "Normal", LOC_SCALE_Q),
    ("Beta", BETA_P, "Uniform", {"low": [0.0, 0.1], "high": [1.0, 2.0]}),
    ("Exponential", {"rate": [0.5, 3.0]}, "Gamma", GAMMA_Q),
    ("Exponential", {"rate": [0.5, 3.0]}, "Gumbel", LOC_SCALE_Q),
    ("Gamma", GAMMA_P, "Exponential", {"rate": [2.0, 1.0]}),
    ("Gamma", GAMMA_P, "Gumbel", LOC_SCALE_Q),
    ("Gamma", GAMMA_P, "Normal", LOC_SCALE_Q),
    ("Gumbel", LOC_SCALE_P, "Normal", LOC_SCALE_Q),
    ("Normal", LOC_SCALE_P, "Gumbel", LOC_SCALE_Q),
    ("Uniform", {"low": [0.1, 0.2], "high": [0.5, 0.9]}, "Beta", BETA_Q),
    ("Uniform", {"low": [0.1, -0.2], "high": [0.5, 0.9]}, "Gamma", GAMMA_Q),
    ("Uniform", {"low": [0.1, -0.2], "high": [0.5, 0.9]}, "Gumbel", LOC_SCALE_Q),
    ("Normal", {"loc": [0.3], "scale": [1.0]}, "Gamma", {"concentration": [2.0], "rate": [0.5]}),
    ("Gumbel", {"loc": [0.3], "scale": [1.0]}, "Exponential", {"rate": [2.0]}),
    ("Gamma", {"concentration": [0.5], "rate": [1.0]}, "Uniform", {"low": [0.0], "high": [1.0]}),
    ("Poisson", {"rate": [0.5]}, "Bernoulli", {"probs": [0.2]}),
]


@pytest.mark.parametrize("p_name, p_params, q_name, q_params", KL_PAIRS,
                         ids=[f"{p[0]}-{p[2]}" for p in KL_PAIRS])
def test_kl_divergence_matches_pytorch(p_name: str, p_params: dict, q_name: str, q_params: dict) -> None:
    (p_ours, p_leaves), (q_ours, q_leaves) = _dist(tg, p_name, p_params), _dist(tg, q_name, q_params)
    (p_theirs, p_tl), (q_theirs, q_tl) = _dist(torch, p_name, p_params), _dist(torch, q_name, q_params)
    got, expected = D.kl_divergence(p_ours, q_ours), TD.kl_divergence(p_theirs, q_theirs)
    assert_kl_matches(got, expected, [(p_leaves, p_tl), (q_leaves, q_tl)], RNG)


def test_kl_errors() -> None:
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Binomial(3, tg.tensor([0.5])), D.Binomial(5, tg.tensor([0.5])))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.LogNormal(0.0, 1.0), D.Gumbel(0.0, 1.0).expand(()))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Cauchy(0.0, 1.0), D.Normal(0.0, 1.0))


# Validation and the rest of the interface


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_invalid_arguments_raise_like_pytorch() -> None:
    message = both_raise(lambda m, t: m.Gamma(t.tensor([1.0, -1.0]), 1.0))
    assert message.startswith("Expected parameter concentration (Tensor of shape (2,)) of distribution "
                              "Gamma(")
    assert "Expected parameter df" in both_raise(lambda m, t: m.Chi2(t.tensor([-1.0])))
    both_raise(lambda m, t: m.Beta(t.tensor([1.0]), t.tensor([0.0])))
    both_raise(lambda m, t: m.Dirichlet(t.tensor(1.0)))
    both_raise(lambda m, t: m.Dirichlet(t.tensor([1.0, -1.0])))
    both_raise(lambda m, t: m.Poisson(t.tensor([-1.0])))
    both_raise(lambda m, t: m.Binomial(t.tensor([2.5]), t.tensor([0.5])))
    both_raise(lambda m, t: m.Binomial(3, t.tensor([0.5]), t.tensor([0.0])))
    assert "to be positive" in both_raise(lambda m, t: m.Geometric(t.tensor([0.0, 0.5])))
    both_raise(lambda m, t: m.Cauchy(0.0, t.tensor([0.0])))
    both_raise(lambda m, t: m.StudentT(t.tensor([-1.0])))
    both_raise(lambda m, t: m.LogNormal(0.0, t.tensor([-1.0])))
    both_raise(lambda m, t: m.HalfNormal(t.tensor([-1.0])))
    both_raise(lambda m, t: m.Gumbel(0.0, t.tensor([-1.0])))
    both_raise(lambda m, t: m.RelaxedBernoulli(t.tensor(0.5), t.tensor([1.5])))
    both_raise(lambda m, t: m.MixtureSameFamily(m.Normal(0.0, 1.0), m.Normal(t.zeros(2), 1.0)))
    both_raise(lambda m, t: m.MixtureSameFamily(m.Categorical(t.ones(3)), m.Normal(t.zeros(2), 1.0)))
    both_raise(lambda m, t: m.Binomial(t.tensor([2.0, 3.0]), t.tensor([0.5, 0.5])).entropy())


def test_invalid_values_raise_like_pytorch() -> None:
    both_raise(lambda m, t: m.Gamma(1.0, 1.0).log_prob(t.tensor(-1.0)))
    both_raise(lambda m, t: m.Beta(1.0, 1.0).log_prob(t.tensor(1.5)))
    both_raise(lambda m, t: m.Dirichlet(t.ones(3)).log_prob(t.tensor([0.5, 0.6, 0.1])))
    both_raise(lambda m, t: m.Poisson(1.0).log_prob(t.tensor(1.5)))
    both_raise(lambda m, t: m.Binomial(3, t.tensor(0.5)).log_prob(t.tensor(4.0)))
    both_raise(lambda m, t: m.LogNormal(0.0, 1.0).log_prob(t.tensor(-1.0)))
    both_raise(lambda m, t: m.HalfNormal(1.0).log_prob(t.tensor(-1.0)))
    both_raise(lambda m, t: m.LogisticNormal(t.zeros(2), 1.0).log_prob(t.tensor([0.5, 0.6, 0.1])))


def test_flags_supports_and_enumerate_support_match_pytorch() -> None:
    pairs = [(D.Gamma(1.0, 1.0), TD.Gamma(1.0, 1.0)), (D.Beta(1.0, 2.0), TD.Beta(1.0, 2.0)),
             (D.Dirichlet(tg.ones(3)), TD.Dirichlet(torch.ones(3))), (D.Poisson(1.0), TD.Poisson(1.0)),
             (D.Geometric(0.5), TD.Geometric(0.5)), (D.Cauchy(0.0, 1.0), TD.Cauchy(0.0, 1.0)),
             (D.StudentT(2.0), TD.StudentT(2.0)), (D.LogNormal(0.0, 1.0), TD.LogNormal(0.0, 1.0)),
             (D.HalfNormal(1.0), TD.HalfNormal(1.0)), (D.Gumbel(0.0, 1.0), TD.Gumbel(0.0, 1.0)),
             (D.LogisticNormal(tg.zeros(2), 1.0), TD.LogisticNormal(torch.zeros(2), 1.0)),
             (D.RelaxedBernoulli(tg.tensor(0.5), 0.3), TD.RelaxedBernoulli(torch.tensor(0.5), 0.3)),
             (D.Chi2(3.0), TD.Chi2(3.0))]
    for ours, theirs in pairs:
        assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
        assert repr(ours.support) == repr(theirs.support), type(ours)
        assert ours.has_rsample == theirs.has_rsample
        assert ours.has_enumerate_support == theirs.has_enumerate_support
        e, f = ours.expand((4,) + tuple(ours.batch_shape)), theirs.expand((4,) + tuple(theirs.batch_shape))
        assert type(e) is type(ours) and e.batch_shape == f.batch_shape
        assert e.sample().shape == tuple(f.sample().shape)
    for expand in (True, False):
        ours = D.Binomial(3, tg.full((2,), 0.3, dtype=tg.float64)).enumerate_support(expand)
        theirs = TD.Binomial(3, torch.full((2,), 0.3, dtype=torch.float64)).enumerate_support(expand)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert repr(D.Binomial(3, tg.tensor([0.5])).support) == repr(TD.Binomial(3, torch.tensor([0.5])).support)
