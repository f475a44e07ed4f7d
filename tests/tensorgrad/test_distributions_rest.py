"""The rest of tg.distributions against torch.distributions: NegativeBinomial, Multinomial,
LowRankMultivariateNormal, Weibull, Pareto, Kumaraswamy, HalfCauchy, InverseGamma,
FisherSnedecor, ContinuousBernoulli and VonMises (values, gradients, samples, validation), the
remaining transforms, and the KL pairs PyTorch registers for them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import distributions as D  # noqa: N812 - PyTorch's habit

torch = pytest.importorskip("torch")
from distribution_checks import assert_kl_matches, assert_method_matches, assert_samples_fit, both_raise  # noqa: E402 - after the skip

TD = torch.distributions

RNG = np.random.default_rng(3)


def _make(lib: Any, params: dict[str, Any]) -> dict[str, Any]:
    make = tg.tensor if lib is tg else torch.tensor
    return {k: make(np.asarray(v, dtype=np.float64), dtype=lib.float64, requires_grad=True)
            for k, v in params.items()}


def _spd_factor(n: int, m: int) -> np.ndarray:
    return RNG.normal(size=(n, m)) * 0.7


# (class name, float64 parameters, fixed arguments, value for log_prob / cdf)
CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any], np.ndarray]] = {
    "negative_binomial": ("NegativeBinomial", {"total_count": RNG.uniform(0.5, 5, 3),
                                               "probs": RNG.uniform(0.1, 0.9, 3)}, {},
                          np.array([[0.0, 2, 5], [1, 4, 3]])),
    "negative_binomial_logits": ("NegativeBinomial", {"logits": RNG.normal(size=3)}, {"total_count": 3.0},
                                 np.array([0.0, 2, 7])),
    "multinomial": ("Multinomial", {"probs": RNG.dirichlet(np.ones(4), 2)}, {"total_count": 5},
                    np.array([[1.0, 2, 0, 2], [0, 0, 5, 0]])),
    "multinomial_logits": ("Multinomial", {"logits": RNG.normal(size=(2, 3))}, {"total_count": 4},
                           np.array([[1.0, 2, 1], [4, 0, 0]])),
    "lowrank_mvn": ("LowRankMultivariateNormal", {"loc": RNG.normal(size=(2, 3)),
                                                  "cov_factor": _spd_factor(3, 2),
                                                  "cov_diag": RNG.uniform(0.5, 2, 3)}, {},
                    RNG.normal(size=(4, 2, 3))),
    "weibull": ("Weibull", {"scale": RNG.uniform(0.5, 2, 3), "concentration": np.array([0.7, 1.5, 3.0])}, {},
                RNG.uniform(0.1, 3, (2, 3))),
    "pareto": ("Pareto", {"scale": RNG.uniform(0.5, 1, 3), "alpha": np.array([0.8, 1.5, 3.0])}, {},
               RNG.uniform(1.0, 4, (2, 3))),
    "kumaraswamy": ("Kumaraswamy", {"concentration1": np.array([0.7, 1.5, 3.0]),
                                    "concentration0": np.array([2.0, 0.8, 1.5])}, {},
                    RNG.uniform(0.05, 0.95, (2, 3))),
    "half_cauchy": ("HalfCauchy", {"scale": RNG.uniform(0.5, 2, 3)}, {}, RNG.uniform(0.0, 3, (2, 3))),
    "inverse_gamma": ("InverseGamma", {"concentration": np.array([0.7, 1.5, 3.0]),
                                       "rate": RNG.uniform(0.5, 2, 3)}, {}, RNG.uniform(0.1, 3, (2, 3))),
    "fisher_snedecor": ("FisherSnedecor", {"df1": np.array([1.5, 3.0, 6.0]),
                                           "df2": np.array([1.5, 3.0, 7.0])}, {},
                        RNG.uniform(0.1, 3, (2, 3))),
    "continuous_bernoulli": ("ContinuousBernoulli", {"probs": np.array([0.2, 0.4995, 0.7, 0.9])}, {},
                             RNG.uniform(0.0, 1, (2, 4))),
    "continuous_bernoulli_logits": ("ContinuousBernoulli", {"logits": np.array([-2.0, 0.001, 1.0])}, {},
                                    RNG.uniform(0.0, 1, (2, 3))),
    "von_mises": ("VonMises", {"loc": RNG.normal(size=3), "concentration": np.array([0.5, 3.0, 10.0])}, {},
                  RNG.uniform(-4, 4, (2, 3))),
}

METHODS = ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "mode"]


def _build(lib: Any, case: str) -> tuple[Any, dict[str, Any]]:
    name, params, fixed, _ = CASES[case]
    leaves = _make(lib, params)
    return getattr(D if lib is tg else TD, name)(**fixed, **leaves), leaves


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("method", METHODS)
def test_values_and_gradients_match_pytorch(case: str, method: str) -> None:
    ours, our_leaves = _build(tg, case)
    theirs, their_leaves = _build(torch, case)
    value = CASES[case][3]
    our_value, their_value = tg.tensor(value, dtype=tg.float64), torch.tensor(value, dtype=torch.float64)
    assert_method_matches(method, ours, our_leaves, our_value, theirs, their_leaves, their_value, RNG)


# Sampling


def _samplers(dtype: Any) -> dict[str, Any]:
    z = tg.zeros(2, 3, dtype=dtype)
    factor = tg.tensor([[1.0], [0.5], [-0.3]], dtype=dtype)
    return {
        "negative_binomial": D.NegativeBinomial(z + 3, z + 0.4),
        "multinomial": D.Multinomial(6, z + 1),
        "lowrank_mvn": D.LowRankMultivariateNormal(z, factor, z[0] + 0.5),
        "weibull": D.Weibull(z + 1.5, 2.0), "pareto": D.Pareto(z + 1, 3.5),
        "kumaraswamy": D.Kumaraswamy(z + 2, 3.0),
        "half_cauchy": D.HalfCauchy(z + 1), "inverse_gamma": D.InverseGamma(z + 4, 2.0),
        "fisher_snedecor": D.FisherSnedecor(z + 5, 10.0),
        "continuous_bernoulli": D.ContinuousBernoulli(z + 0.3),
        "continuous_bernoulli_half": D.ContinuousBernoulli(z + 0.5), "von_mises": D.VonMises(z + 2.5, 4.0),
    }


@pytest.mark.parametrize("name", list(_samplers(tg.float32)))
@pytest.mark.parametrize("dtype", [tg.float32, tg.float64])
def test_sample_shapes_dtypes_and_supports(name: str, dtype: Any) -> None:
    dist = _samplers(dtype)[name]
    assert_samples_fit(dist, dtype)


@pytest.mark.parametrize("name", ["negative_binomial", "multinomial", "lowrank_mvn", "weibull", "pareto",
                                  "kumaraswamy", "inverse_gamma", "fisher_snedecor", "continuous_bernoulli",
                                  "continuous_bernoulli_half"])
def test_sample_statistics(name: str) -> None:
    dist = _samplers(tg.float64)[name]
    tg.manual_seed(0)
    n = 20_000
    draws = dist.sample((n,)).numpy()
    mean, std = dist.mean.numpy(), dist.stddev.numpy()
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * std / math.sqrt(n)), (draws.mean(0), mean)
    assert np.all(np.abs(draws.std(0) / std - 1) < 0.1), (draws.std(0), std)


def test_sample_statistics_of_the_rest() -> None:
    tg.manual_seed(0)
    draws = D.HalfCauchy(tg.tensor(2.0, dtype=tg.float64)).sample((20_000,)).numpy()
    assert abs(np.median(draws) - 2.0) < 0.1  # the median of |Cauchy(0, s)| is s
    loc, kappa = np.array([2.5, -3.0, 0.0]), np.array([4.0, 0.5, 1e-6])
    dist = D.VonMises(tg.tensor(loc), tg.tensor(kappa))
    angles = dist.sample((20_000,)).numpy()
    assert np.all((angles >= -math.pi) & (angles < math.pi))
    resultant = np.exp(1j * angles).mean(0)  # E[exp(i x)] = exp(i loc) I1(kappa) / I0(kappa)
    np.testing.assert_allclose(np.abs(resultant), 1 - dist.variance.numpy(), atol=0.02)
    np.testing.assert_allclose(np.angle(resultant[:2]), loc[:2], atol=0.05)
    tg.manual_seed(5)
    first = dist.sample((3,))
    tg.manual_seed(5)
    assert np.array_equal(dist.sample((3,)).numpy(), first.numpy())  # seeded by tg.manual_seed


def test_multinomial_counts_and_total() -> None:
    tg.manual_seed(0)
    probs = tg.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], dtype=tg.float64)
    counts = D.Multinomial(10, probs).sample((500,))
    assert np.all(counts.numpy().sum(-1) == 10) and np.all(counts.numpy()[:, 1, 2] == 0)
    assert counts.dtype == tg.float64


@pytest.mark.parametrize("name", ["lowrank_mvn", "weibull", "pareto", "kumaraswamy", "half_cauchy",
                                  "inverse_gamma", "fisher_snedecor", "continuous_bernoulli"])
def test_rsample_gradients_are_unbiased(name: str) -> None:
    """d/dtheta E[x] estimated from rsample matches the gradient of the closed-form mean."""
    leaf = tg.tensor(1.3, dtype=tg.float64, requires_grad=True)
    make = {
        "lowrank_mvn": lambda t: D.LowRankMultivariateNormal(t * tg.ones(2, dtype=tg.float64),
                                                             tg.ones(2, 1, dtype=tg.float64), t.expand(2)),
        "weibull": lambda t: D.Weibull(t, 2.0), "pareto": lambda t: D.Pareto(t, 3.0 + t),
        "kumaraswamy": lambda t: D.Kumaraswamy(t, 2.0), "half_cauchy": lambda t: D.HalfCauchy(t),
        "inverse_gamma": lambda t: D.InverseGamma(t + 2, t),
        "fisher_snedecor": lambda t: D.FisherSnedecor(4.0, t + 5),
        "continuous_bernoulli": lambda t: D.ContinuousBernoulli(t / 2),
    }[name]
    dist = make(leaf)
    tg.manual_seed(1)
    if name == "half_cauchy":  # no mean: use the median, icdf(1/2)
        sample = dist.rsample((40_000,))
        (expected,) = tg.autograd.grad(dist.icdf(tg.tensor(0.5, dtype=tg.float64)), [leaf], retain_graph=True)
        (got,) = tg.autograd.grad(sample.median(), [leaf], retain_graph=True)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=0.05)
        return
    (got,) = tg.autograd.grad(dist.rsample((40_000,)).mean(), [leaf], retain_graph=True)
    (expected,) = tg.autograd.grad(dist.mean.sum() / dist.mean.numel(), [leaf])
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=0.05, atol=0.01)


# KL divergences


def _dist(lib: Any, name: str, params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    fixed = {k: v for k, v in params.items() if k == "total_count"}
    leaves = _make(lib, {k: v for k, v in params.items() if k != "total_count"})
    return getattr(D if lib is tg else TD, name)(**fixed, **leaves), leaves


CB_P, CB_Q = {"probs": [0.2, 0.4995, 0.8]}, {"probs": [0.6, 0.3, 0.5002]}
PARETO_P = {"scale": [1.0, 2.0, 0.5], "alpha": [0.8, 2.5, 4.0]}
PARETO_Q = {"scale": [1.5, 1.0, 0.4], "alpha": [2.0, 1.0, 3.0]}
LOC_SCALE = {"loc": [0.3, -1.0, 0.5], "scale": [1.0, 2.0, 0.7]}
BETA = {"concentration1": [0.5, 3.0, 1.2], "concentration0": [1.0, 2.0, 0.6]}
GAMMA = {"concentration": [0.5, 3.0, 1.2], "rate": [1.0, 2.0, 0.6]}
EXPONENTIAL = {"rate": [0.5, 3.0, 1.0]}
UNIFORM_IN = {"low": [0.1, 0.0, 0.2], "high": [0.5, 0.9, 1.0]}
UNIFORM_WIDE = {"low": [-0.1, 0.05, 1.5], "high": [1.5, 2.0, 3.0]}
LOWRANK_P = {"loc": [[0.3, -1.0, 0.5]], "cov_factor": [[1.0, 0.2], [0.5, -0.4], [-0.3, 0.8]],
             "cov_diag": [0.5, 1.2, 0.8]}
LOWRANK_Q = {"loc": [[0.0, 0.5, -0.2], [1.0, 0.0, 0.0]], "cov_factor": [[0.4], [-0.7], [0.2]],
             "cov_diag": [1.0, 0.6, 1.5]}
MVN = {"loc": [0.1, 0.2, -0.3], "scale_tril": [[1.0, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.2, 0.4, 1.3]]}

KL_PAIRS = [
    ("ContinuousBernoulli", CB_P, "ContinuousBernoulli", CB_Q),
    ("ContinuousBernoulli", {"logits": [-1.0, 0.5, 2.0]}, "ContinuousBernoulli", CB_Q),
    ("Beta", BETA, "ContinuousBernoulli", CB_Q),
    ("ContinuousBernoulli", CB_P, "Exponential", EXPONENTIAL),
    ("ContinuousBernoulli", CB_P, "Normal", LOC_SCALE),
    ("ContinuousBernoulli", CB_P, "Uniform", UNIFORM_WIDE),
    ("Uniform", UNIFORM_IN, "ContinuousBernoulli", CB_Q),
    ("Pareto", PARETO_P, "Pareto", PARETO_Q),
    ("Pareto", PARETO_P, "Exponential", EXPONENTIAL),
    ("Pareto", PARETO_P, "Gamma", GAMMA),
    ("Pareto", PARETO_P, "Normal", LOC_SCALE),
    ("Uniform", UNIFORM_WIDE, "Pareto", PARETO_Q),
    ("Beta", BETA, "Pareto", PARETO_Q), ("ContinuousBernoulli", CB_P, "Pareto", PARETO_Q),
    ("Exponential", EXPONENTIAL, "ContinuousBernoulli", CB_Q),
    ("Exponential", EXPONENTIAL, "Pareto", PARETO_Q),
    ("Gamma", GAMMA, "ContinuousBernoulli", CB_Q), ("Gamma", GAMMA, "Pareto", PARETO_Q),
    ("Gumbel", LOC_SCALE, "ContinuousBernoulli", CB_Q), ("Gumbel", LOC_SCALE, "Pareto", PARETO_Q),
    ("Laplace", LOC_SCALE, "ContinuousBernoulli", CB_Q), ("Laplace", LOC_SCALE, "Pareto", PARETO_Q),
    ("Normal", LOC_SCALE, "ContinuousBernoulli", CB_Q), ("Normal", LOC_SCALE, "Pareto", PARETO_Q),
    ("Pareto", PARETO_P, "Beta", BETA), ("Pareto", PARETO_P, "ContinuousBernoulli", CB_Q),
    ("Pareto", PARETO_P, "Uniform", UNIFORM_WIDE),
    ("LowRankMultivariateNormal", LOWRANK_P, "LowRankMultivariateNormal", LOWRANK_Q),
    ("MultivariateNormal", MVN, "LowRankMultivariateNormal", LOWRANK_Q),
    ("LowRankMultivariateNormal", LOWRANK_Q, "MultivariateNormal", MVN),
    ("Weibull", {"scale": [1.0, 2.0], "concentration": [1.5, 0.7]}, "Weibull",
     {"scale": [1.0, 2.0], "concentration": [1.5, 0.7]}),
    ("InverseGamma", GAMMA, "InverseGamma", {"concentration": [2.0, 1.0, 0.7], "rate": [0.5, 1.5, 1.0]}),
    ("HalfCauchy", {"scale": [1.0, 2.0]}, "HalfCauchy", {"scale": [0.5, 3.0]}),
]


@pytest.mark.parametrize("p_name, p_params, q_name, q_params", KL_PAIRS,
                         ids=[f"{p[0]}-{p[2]}" for p in KL_PAIRS])
def test_kl_divergence_matches_pytorch(p_name: str, p_params: dict, q_name: str, q_params: dict) -> None:
    (p_ours, p_leaves), (q_ours, q_leaves) = _dist(tg, p_name, p_params), _dist(tg, q_name, q_params)
    (p_theirs, p_tl), (q_theirs, q_tl) = _dist(torch, p_name, p_params), _dist(torch, q_name, q_params)
    try:
        expected = TD.kl_divergence(p_theirs, q_theirs)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            D.kl_divergence(p_ours, q_ours)
        return
    got = D.kl_divergence(p_ours, q_ours)
    assert_kl_matches(got, expected, [(p_leaves, p_tl), (q_leaves, q_tl)], RNG)


def test_kl_errors() -> None:
    p = D.LowRankMultivariateNormal(tg.zeros(2), tg.ones(2, 1), tg.ones(2))
    q = D.LowRankMultivariateNormal(tg.zeros(3), tg.ones(3, 1), tg.ones(3))
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(p, q)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(D.MultivariateNormal(tg.zeros(3), tg.eye(3)), p)


# Validation and the rest of the interface


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_invalid_arguments_raise_like_pytorch() -> None:
    assert "Expected parameter total_count" in both_raise(
        lambda m, t: m.NegativeBinomial(t.tensor([-1.0]), t.tensor([0.5])))
    both_raise(lambda m, t: m.NegativeBinomial(3.0, t.tensor([1.0])))
    both_raise(lambda m, t: m.NegativeBinomial(3.0))
    both_raise(lambda m, t: m.Multinomial(t.tensor(3), t.tensor([0.5, 0.5])))
    both_raise(lambda m, t: m.Multinomial(3, t.tensor([0.5, -0.5])))
    both_raise(lambda m, t: m.Multinomial(3))
    both_raise(lambda m, t: m.LowRankMultivariateNormal(t.tensor(0.0), t.ones(1, 1), t.ones(1)))
    both_raise(lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(2), t.ones(2)))
    both_raise(lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(3, 1), t.ones(2)))
    both_raise(lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.ones(3)))
    both_raise(lambda m, t: m.LowRankMultivariateNormal(t.zeros(3, 2), t.ones(2, 2, 1), t.ones(2)))
    both_raise(lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.tensor([1.0, 0.0])))
    both_raise(lambda m, t: m.Weibull(t.tensor([1.0]), t.tensor([-1.0])))
    both_raise(lambda m, t: m.Pareto(t.tensor([0.0]), t.tensor([1.0])))
    both_raise(lambda m, t: m.Kumaraswamy(t.tensor([1.0]), t.tensor([0.0])))
    both_raise(lambda m, t: m.HalfCauchy(t.tensor([-1.0])))
    both_raise(lambda m, t: m.InverseGamma(t.tensor([-1.0]), 1.0))
    both_raise(lambda m, t: m.FisherSnedecor(t.tensor([1.0]), t.tensor([-1.0])))
    assert both_raise(lambda m, t: m.ContinuousBernoulli(t.tensor([1.5]), validate_args=False)) == (
        "The parameter probs has invalid values")
    # without validate_args the probs are clamped into (0, 1) before the check, which passes
    clamped = TD.ContinuousBernoulli(torch.tensor([1.5])).probs
    assert D.ContinuousBernoulli(tg.tensor([1.5])).probs.item() == clamped.item()
    both_raise(lambda m, t: m.ContinuousBernoulli())
    both_raise(lambda m, t: m.VonMises(t.tensor([0.0]), t.tensor([0.0])))


def test_invalid_values_raise_like_pytorch() -> None:
    both_raise(lambda m, t: m.NegativeBinomial(3.0, t.tensor(0.5)).log_prob(t.tensor(1.5)))
    both_raise(lambda m, t: m.Multinomial(3, t.ones(2)).log_prob(t.tensor([2.0, 2.0])))
    both_raise(lambda m, t: m.Multinomial(3, t.ones(2)).log_prob(t.tensor([2.0, 2.0, 0.0])))
    both_raise(lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.ones(2))
                .log_prob(t.zeros(3)))
    both_raise(lambda m, t: m.Weibull(1.0, 1.0).log_prob(t.tensor(-1.0)))
    both_raise(lambda m, t: m.Pareto(1.0, 1.0).log_prob(t.tensor(0.5)))
    both_raise(lambda m, t: m.Kumaraswamy(1.0, 1.0).log_prob(t.tensor(1.5)))
    both_raise(lambda m, t: m.HalfCauchy(1.0).log_prob(t.tensor(-1.0)))
    both_raise(lambda m, t: m.InverseGamma(1.0, 1.0).log_prob(t.tensor(-1.0)))
    both_raise(lambda m, t: m.FisherSnedecor(1.0, 1.0).log_prob(t.tensor(-1.0)))
    both_raise(lambda m, t: m.ContinuousBernoulli(0.3).log_prob(t.tensor(1.5)))
    both_raise(lambda m, t: m.VonMises(0.0, 1.0).log_prob(t.zeros(2, 1)).sum() + m.VonMises(
        t.zeros(3), 1.0).log_prob(t.zeros(2)))


def _pairs() -> list[tuple[Any, Any]]:
    def both(name: str, *args: Any) -> tuple[Any, Any]:
        ours = getattr(D, name)(*[tg.tensor(a) if isinstance(a, list) else a for a in args])
        theirs = getattr(TD, name)(*[torch.tensor(a) if isinstance(a, list) else a for a in args])
        return ours, theirs
    return [both("NegativeBinomial", 3.0, [0.5, 0.2]), both("Multinomial", 4, [[0.5, 0.5], [0.2, 0.8]]),
            both("LowRankMultivariateNormal", [0.0, 1.0], [[1.0], [0.5]], [1.0, 2.0]),
            both("Weibull", 1.0, 2.0), both("Pareto", [1.0, 2.0], 3.0), both("Kumaraswamy", 1.0, [2.0]),
            both("HalfCauchy", [1.0]), both("InverseGamma", 2.0, 1.0), both("FisherSnedecor", 2.0, [3.0]),
            both("ContinuousBernoulli", [0.3]), both("ContinuousBernoulli", 0.3),
            both("VonMises", [0.0], 1.0)]


def test_flags_supports_shapes_and_expand_match_pytorch() -> None:
    for ours, theirs in _pairs():
        assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape, type(ours)
        assert repr(ours.support) == repr(theirs.support), type(ours)
        assert ours.has_rsample == theirs.has_rsample, type(ours)
        assert ours.has_enumerate_support == theirs.has_enumerate_support
        e, f = ours.expand((4,) + tuple(ours.batch_shape)), theirs.expand((4,) + tuple(theirs.batch_shape))
        assert type(e) is type(ours) and e.batch_shape == f.batch_shape and e.event_shape == f.event_shape
        assert e.sample().shape == tuple(f.sample().shape)
        value = f.sample()
        np.testing.assert_allclose(e.log_prob(tg.tensor(value.numpy())).numpy(), f.log_prob(value).numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_lowrank_matrices_match_pytorch() -> None:
    loc, factor, diag = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 2)), RNG.uniform(0.5, 2, 3)
    ours = D.LowRankMultivariateNormal(tg.tensor(loc), tg.tensor(factor, requires_grad=True), tg.tensor(diag))
    theirs = TD.LowRankMultivariateNormal(torch.tensor(loc), torch.tensor(factor), torch.tensor(diag))
    for name in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        got, expected = getattr(ours, name), getattr(theirs, name)
        assert tuple(got.shape) == tuple(expected.shape), name
        np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    tg.manual_seed(0)
    draws = ours.sample((40_000,)).numpy()
    np.testing.assert_allclose(np.cov(draws[:, 0].T), ours.covariance_matrix[0].detach().numpy(), atol=0.1)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # lgamma(0) - lgamma(0)
def test_negative_binomial_and_multinomial_details() -> None:
    # total_count 0 puts all mass on 0
    ours = D.NegativeBinomial(tg.tensor([0.0, 2.0]), tg.tensor([0.3, 0.3])).log_prob(tg.tensor([0.0, 0.0]))
    theirs = TD.NegativeBinomial(torch.tensor([0.0, 2.0]), torch.tensor([0.3, 0.3])).log_prob(torch.zeros(2))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    # a zero probability with a zero count contributes nothing
    probs = [[0.0, 0.4, 0.6]]
    ours = D.Multinomial(3, tg.tensor(probs, dtype=tg.float64)).log_prob(tg.tensor([[0.0, 1.0, 2.0]]))
    theirs = TD.Multinomial(3, torch.tensor(probs, dtype=torch.float64))
    theirs = theirs.log_prob(torch.tensor([[0.0, 1.0, 2.0]]))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    assert D.Multinomial(3, tg.ones(2)).param_shape == (2,)
    assert D.NegativeBinomial(2.0, logits=tg.zeros(3)).param_shape == (3,)


# Transforms


def _transforms(lib: Any) -> dict[str, tuple[Any, np.ndarray]]:
    T = D.transforms if lib is tg else TD.transforms  # noqa: N806
    module = D if lib is tg else TD
    make = tg.tensor if lib is tg else torch.tensor
    x23 = RNG.uniform(0.2, 1.5, (2, 3))
    return {
        "independent": (T.IndependentTransform(T.ExpTransform(), 1), x23),
        "reshape": (T.ReshapeTransform((2, 3), (3, 2)), x23),
        "softplus": (T.SoftplusTransform(), np.array([[-3.0, 0.5, 25.0], [0.1, 2.0, -0.7]])),
        "cat": (T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=1, lengths=[2, 1]), x23),
        "cat_event": (T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1),
                                      T.AffineTransform(0.5, 2.0, event_dim=1)], dim=0), x23),
        "cat_in_event": (T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1), T.SoftplusTransform()],
                                        dim=-1, lengths=[2, 1]), x23),
        "stack": (T.StackTransform([T.ExpTransform(), T.SigmoidTransform(), T.SoftplusTransform()], dim=1),
                  x23),
        "cdf": (T.CumulativeDistributionTransform(module.Normal(make(0.3, dtype=lib.float64),
                                                                make(1.5, dtype=lib.float64))), x23),
        "corr_cholesky": (T.CorrCholeskyTransform(), RNG.normal(size=(2, 6))),
        "lower_cholesky": (T.LowerCholeskyTransform(), RNG.normal(size=(2, 3, 3))),
        "positive_definite": (T.PositiveDefiniteTransform(), RNG.normal(size=(2, 3, 3))),
    }


@pytest.mark.parametrize("name", list(_transforms(tg)))
def test_transforms_match_pytorch(name: str) -> None:
    (ours, x), (theirs, _) = _transforms(tg)[name], _transforms(torch)[name]
    our_x, their_x = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, expected = ours(our_x), theirs(their_x)
    assert tuple(y.shape) == tuple(expected.shape)
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours.inv(y).detach().numpy(), theirs.inv(expected).detach().numpy(), rtol=1e-9,
                               atol=1e-12)
    assert repr(ours.domain) == repr(theirs.domain) and repr(ours.codomain) == repr(theirs.codomain)
    assert ours.bijective == theirs.bijective
    assert tuple(ours.forward_shape(tuple(x.shape))) == tuple(theirs.forward_shape(torch.Size(x.shape)))
    assert tuple(ours.inverse_shape(tuple(y.shape))) == tuple(theirs.inverse_shape(expected.shape))
    try:
        assert bool(theirs.codomain.check(expected.detach()).all())
    except RuntimeError:  # the parts' checks have different shapes: cat cannot join them
        with pytest.raises(RuntimeError):
            ours.codomain.check(y.detach())
    else:
        assert bool(ours.codomain.check(y.detach()).all())
    try:
        their_ladj = theirs.log_abs_det_jacobian(their_x, expected)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(our_x, y)
        their_ladj = None
    weights = RNG.normal(size=tuple(expected.shape))
    our_loss, their_loss = (y * tg.tensor(weights)).sum(), (expected * torch.tensor(weights)).sum()
    if their_ladj is not None:
        ladj = ours.log_abs_det_jacobian(our_x, y)
        assert tuple(ladj.shape) == tuple(their_ladj.shape)
        np.testing.assert_allclose(ladj.detach().numpy(), their_ladj.detach().numpy(), rtol=1e-9, atol=1e-12)
        our_loss, their_loss = our_loss + ladj.sum(), their_loss + their_ladj.sum()
    our_loss.backward()
    their_loss.backward()
    np.testing.assert_allclose(our_x.grad, their_x.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_corr_cholesky_log_det_is_the_jacobian() -> None:
    """log |det J| of CorrCholeskyTransform against the Jacobian of x -> strict lower triangle."""
    t = D.transforms.CorrCholeskyTransform()
    x = RNG.normal(size=6)

    def strict_lower(v: np.ndarray) -> np.ndarray:
        y = t(tg.tensor(v)).numpy()
        return y[np.tril_indices(4, -1)]

    h = 1e-6
    jacobian = np.stack([(strict_lower(x + h * e) - strict_lower(x - h * e)) / (2 * h) for e in np.eye(6)], 1)
    y = t(tg.tensor(x))
    np.testing.assert_allclose(t.log_abs_det_jacobian(tg.tensor(x), y).item(),
                               np.log(abs(np.linalg.det(jacobian))), rtol=1e-6)


def test_structured_transform_errors_and_details() -> None:
    T = D.transforms  # noqa: N806
    with pytest.raises(ValueError, match="different numbers of elements"):
        T.ReshapeTransform((2, 3), (4,))
    with pytest.raises(ValueError, match="Shape mismatch"):
        T.ReshapeTransform((2, 3), (6,)).forward_shape((2, 2))
    with pytest.raises(ValueError, match="flattened lower-diagonal"):
        T.CorrCholeskyTransform().forward_shape((4,))
    with pytest.raises(ValueError, match="not square"):
        T.CorrCholeskyTransform().inverse_shape((3, 4))
    with pytest.raises(AssertionError, match="must match transforms"):
        T.CatTransform([T.ExpTransform()], lengths=[1, 2])
    with pytest.raises(AssertionError, match="must equal length"):
        T.CatTransform([T.ExpTransform(), T.ExpTransform()], dim=0)(tg.ones(3))
    with pytest.raises(AssertionError, match="Transform instances"):
        T.StackTransform([T.ExpTransform(), "exp"])
    with pytest.raises(AssertionError, match="len\\(transforms\\)"):
        T.StackTransform([T.ExpTransform()], dim=0)(tg.ones(3))
    with pytest.raises(ValueError, match="Too few dimensions"):
        T.IndependentTransform(T.ExpTransform(), 2)(tg.ones(3))
    assert T.SoftplusTransform() == T.SoftplusTransform() and T.SoftplusTransform().sign == 1
    assert T.IndependentTransform(T.AffineTransform(0.0, -1.0), 1).sign == -1
    assert repr(T.IndependentTransform(T.ExpTransform(), 1)) == "IndependentTransform(ExpTransform(), 1)"
    cached = T.IndependentTransform(T.ExpTransform(), 1).with_cache(1)
    x = tg.ones(2, 3)
    assert cached.inv(cached(x)) is x
    assert D.constraints.corr_cholesky.check(tg.eye(3)).item()
    assert not D.constraints.corr_cholesky.check(2 * tg.eye(3)).item()
    # a copula: the standard normal's cdf applied to a correlated normal gives uniform marginals
    tg.manual_seed(0)
    base = D.MultivariateNormal(tg.zeros(2, dtype=tg.float64),
                                tg.tensor([[1.0, 0.8], [0.8, 1.0]], dtype=tg.float64))
    copula = D.TransformedDistribution(base, [T.CumulativeDistributionTransform(D.Normal(0.0, 1.0))])
    u = copula.sample((20_000,)).numpy()
    np.testing.assert_allclose(u.mean(0), 0.5, atol=0.01)
    np.testing.assert_allclose(u.var(0), 1 / 12, atol=0.003)


def test_tril_vector_conversions_match_pytorch() -> None:
    from torch.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix

    from tensorgrad.distributions import utils
    m = RNG.normal(size=(2, 4, 4))
    for diag in (0, -1, -2):
        vec = utils.tril_matrix_to_vec(tg.tensor(m), diag)
        np.testing.assert_array_equal(vec.numpy(), tril_matrix_to_vec(torch.tensor(m), diag).numpy())
        np.testing.assert_array_equal(utils.vec_to_tril_matrix(vec, diag).numpy(),
                                      vec_to_tril_matrix(torch.tensor(vec.numpy()), diag).numpy())
    with pytest.raises(ValueError, match="outside"):
        utils.tril_matrix_to_vec(tg.tensor(m), 4)
    with pytest.raises(ValueError, match="lower triangular part"):
        utils.vec_to_tril_matrix(tg.ones(5))
