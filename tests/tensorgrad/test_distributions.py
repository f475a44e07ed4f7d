"""tg.distributions against torch.distributions: values, gradients, shapes, KL, validation, sampling."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import distributions as D  # noqa: N812 - PyTorch's habit: `import torch.distributions as D`

torch = pytest.importorskip("torch")
from distribution_checks import assert_method_matches, finite_part  # noqa: E402 - after the skip

TD = torch.distributions

RNG = np.random.default_rng(0)


def _spd(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    b = RNG.normal(size=batch + (n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


def _lower(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    return np.tril(RNG.normal(size=batch + (n, n)), -1) + np.diag(RNG.uniform(0.5, 2.0, n))


def _probs(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.uniform(0.1, 1.0, shape)  # unnormalized: Categorical divides by the sum


# Each case: (class name, parameters as float64 arrays, keyword arguments built from them, value)
CASES: dict[str, tuple[str, dict[str, np.ndarray], Any]] = {
    "normal": ("Normal", {"loc": RNG.normal(size=3), "scale": RNG.uniform(0.5, 2, (2, 1))},
               RNG.normal(size=(2, 3))),
    "uniform": ("Uniform", {"low": np.array([-1.0, 0.0, 2.0]), "high": np.array([1.0, 0.5, 4.0])},
                np.array([[0.3, 0.1, 2.5], [-0.9, 0.4, 3.9]])),
    "exponential": ("Exponential", {"rate": RNG.uniform(0.5, 2, (2, 3))}, RNG.uniform(0.1, 3, (2, 3))),
    "laplace": ("Laplace", {"loc": RNG.normal(size=(2, 3)), "scale": RNG.uniform(0.5, 2, 3)},
                RNG.normal(size=(2, 3))),
    "bernoulli_probs": ("Bernoulli", {"probs": RNG.uniform(0.1, 0.9, (2, 3))},
                        np.array([[0.0, 1, 1], [1, 0, 1]])),
    "bernoulli_logits": ("Bernoulli", {"logits": RNG.normal(size=(2, 3))},
                         np.array([[0.0, 1, 0], [1, 1, 0]])),
    "categorical_probs": ("Categorical", {"probs": _probs((2, 4))}, np.array([[0.0, 3], [2, 1], [1, 1]])),
    "categorical_logits": ("Categorical", {"logits": RNG.normal(size=(2, 4))}, np.array([[0.0, 3], [2, 1]])),
    "one_hot": ("OneHotCategorical", {"probs": _probs((2, 3))}, np.eye(3)[[[0, 2], [1, 1]]]),
    "mvn_cov": ("MultivariateNormal", {"loc": RNG.normal(size=(2, 3)), "covariance_matrix": _spd(3)},
                RNG.normal(size=(4, 2, 3))),
    "mvn_precision": ("MultivariateNormal", {"loc": RNG.normal(size=3), "precision_matrix": _spd(3, (2,))},
                      RNG.normal(size=(2, 3))),
    "mvn_tril": ("MultivariateNormal", {"loc": RNG.normal(size=(2, 3)), "scale_tril": _lower(3)},
                 RNG.normal(size=(5, 1, 3))),
}

METHODS = ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "mode", "perplexity",
           "probs", "logits", "covariance_matrix", "precision_matrix", "scale_tril"]


def _build(lib: Any, name: str, params: dict[str, np.ndarray]) -> tuple[Any, dict[str, Any]]:
    """The distribution in `lib` (tg or torch) with float64 leaves as parameters."""
    make = tg.tensor if lib is tg else torch.tensor
    leaves = {k: make(v, dtype=lib.float64, requires_grad=True) for k, v in params.items()}
    args = dict(leaves)
    for key in ("covariance_matrix", "precision_matrix"):  # symmetric in the leaf's gradient too
        if key in args:
            args[key] = (args[key] + args[key].mT) / 2
    if "scale_tril" in args:
        args["scale_tril"] = args["scale_tril"].tril()
    module = D if lib is tg else TD
    return getattr(module, name)(**args), leaves


def _as_value(lib: Any, case: str, value: np.ndarray) -> Any:
    make = tg.tensor if lib is tg else torch.tensor
    if case.startswith("categorical"):
        return make(value, dtype=lib.int64)
    return make(value, dtype=lib.float64)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("method", METHODS)
def test_values_and_gradients_match_pytorch(case: str, method: str) -> None:
    name, params, value = CASES[case]
    ours, our_leaves = _build(tg, name, params)
    theirs, their_leaves = _build(torch, name, params)
    our_value, their_value = _as_value(tg, case, value), _as_value(torch, case, value)
    if method == "icdf" and case.startswith(("categorical", "bernoulli", "one_hot", "mvn")):
        pytest.skip("PyTorch defines no icdf for this distribution")
    assert_method_matches(method, ours, our_leaves, our_value, theirs, their_leaves, their_value, RNG)


def test_independent_matches_pytorch() -> None:
    loc, scale, value = RNG.normal(size=(2, 3)), RNG.uniform(0.5, 2, (2, 3)), RNG.normal(size=(4, 2, 3))
    our_loc, their_loc = tg.tensor(loc, requires_grad=True), torch.tensor(loc, requires_grad=True)
    ours = D.Independent(D.Normal(our_loc, tg.tensor(scale)), 1)
    theirs = TD.Independent(TD.Normal(their_loc, torch.tensor(scale)), 1)
    assert ours.batch_shape == theirs.batch_shape == (2,) and ours.event_shape == theirs.event_shape == (3,)
    for got, expected in ((ours.log_prob(tg.tensor(value)), theirs.log_prob(torch.tensor(value))),
                          (ours.entropy(), theirs.entropy()), (ours.mean, theirs.mean)):
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    ours.log_prob(tg.tensor(value)).sum().backward()
    theirs.log_prob(torch.tensor(value)).sum().backward()
    np.testing.assert_allclose(our_loc.grad, their_loc.grad.numpy(), rtol=1e-12)
    assert ours.has_rsample and not ours.has_enumerate_support
    assert repr(ours.support) == repr(theirs.support) == "IndependentConstraint(Real(), 1)"
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(tg.zeros(3), 1.0), 2)


# Shapes and dtypes of draws


def _distributions(dtype: Any = None) -> dict[str, Callable[[], Any]]:
    z = tg.zeros(2, 3, dtype=dtype)
    return {
        "normal": lambda: D.Normal(z, 1.0),
        "uniform": lambda: D.Uniform(z, 1.0),
        "exponential": lambda: D.Exponential(z + 1),
        "laplace": lambda: D.Laplace(z, 2.0),
        "bernoulli": lambda: D.Bernoulli(z + 0.3),
        "categorical": lambda: D.Categorical(logits=z),
        "one_hot": lambda: D.OneHotCategorical(logits=z),
        "mvn": lambda: D.MultivariateNormal(z, scale_tril=tg.eye(3, dtype=dtype)),
        "independent": lambda: D.Independent(D.Normal(z, 1.0), 1),
    }


@pytest.mark.parametrize("name", list(_distributions()))
@pytest.mark.parametrize("sample_shape", [(), (5,), (4, 1)])
@pytest.mark.parametrize("dtype", [tg.float32, tg.float64])
def test_sample_shapes_and_dtypes(name: str, sample_shape: tuple[int, ...], dtype: Any) -> None:
    dist = _distributions(dtype)[name]()
    shape = sample_shape + tuple(dist.batch_shape) + tuple(dist.event_shape)
    sample = dist.sample(sample_shape)
    assert sample.shape == shape and not sample.requires_grad
    assert sample.dtype == (tg.int64 if name == "categorical" else dtype)
    if dist.has_rsample:
        assert dist.rsample(sample_shape).shape == shape
    else:
        with pytest.raises(NotImplementedError):
            dist.rsample(sample_shape)
    assert dist.log_prob(sample).shape == sample_shape + tuple(dist.batch_shape)


def test_shapes_match_pytorch_for_scalar_and_broadcast_parameters() -> None:
    pairs = [(D.Normal(0.0, 1.0), TD.Normal(0.0, 1.0)),
             (D.Normal(tg.zeros(3), tg.ones(2, 1)), TD.Normal(torch.zeros(3), torch.ones(2, 1))),
             (D.Bernoulli(0.3), TD.Bernoulli(0.3)),
             (D.Categorical(tg.ones(3)), TD.Categorical(torch.ones(3))),
             (D.MultivariateNormal(tg.zeros(4, 1, 2), tg.eye(2).expand(3, 2, 2)),
              TD.MultivariateNormal(torch.zeros(4, 1, 2), torch.eye(2).expand(3, 2, 2)))]
    for ours, theirs in pairs:
        assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
        assert isinstance(ours.batch_shape, tg.Size)
        assert ours.sample((2,)).shape == theirs.sample((2,)).shape
    assert D.Normal(0.0, 1.0).loc.dtype == tg.float32  # numbers take the default dtype
    assert D.Normal(tg.zeros(2, dtype=tg.float64), 1.0).scale.dtype == tg.float64


def test_expand() -> None:
    pairs = [(D.Normal(0.0, 1.0), TD.Normal(0.0, 1.0)),
             (D.Categorical(logits=tg.zeros(3)), TD.Categorical(logits=torch.zeros(3))),
             (D.Bernoulli(logits=tg.zeros(1)), TD.Bernoulli(logits=torch.zeros(1))),
             (D.MultivariateNormal(tg.zeros(2), tg.eye(2)),
              TD.MultivariateNormal(torch.zeros(2), torch.eye(2))),
             (D.Independent(D.Uniform(tg.zeros(2), 1.0), 1),
              TD.Independent(TD.Uniform(torch.zeros(2), 1.0), 1))]
    for ours, theirs in pairs:
        shape = (4, 1) if ours.batch_shape == (1,) else (4, 2)
        e, f = ours.expand(shape), theirs.expand(shape)
        assert e.batch_shape == f.batch_shape and e.event_shape == f.event_shape
        assert type(e) is type(ours) and e.sample().shape == tuple(f.sample().shape)
        np.testing.assert_allclose(e.entropy().numpy(), f.entropy().numpy(), rtol=1e-6)


# Reparameterized draws carry gradients to the parameters


def _reseeded(make: Callable[..., Any]) -> Callable[..., Any]:
    def draw(*params: Any) -> Any:
        tg.manual_seed(3)
        return make(*params).rsample((4,))
    return draw


RSAMPLE = {
    "normal": (lambda loc, scale: D.Normal(loc, scale), [RNG.normal(size=3), RNG.uniform(0.5, 2, 3)]),
    "uniform": (lambda low, high: D.Uniform(low, high), [np.array([-1.0, 0.0]), np.array([1.0, 2.5])]),
    "exponential": (lambda rate: D.Exponential(rate), [RNG.uniform(0.5, 2, 3)]),
    "laplace": (lambda loc, scale: D.Laplace(loc, scale), [RNG.normal(size=3), RNG.uniform(0.5, 2, 3)]),
    "mvn": (lambda loc, b: D.MultivariateNormal(loc, scale_tril=b.tril()), [RNG.normal(size=3), _lower(3)]),
    "mvn_cov": (lambda loc, b: D.MultivariateNormal(loc, b @ b.mT + tg.eye(3, dtype=b.dtype)),
                [RNG.normal(size=3), RNG.normal(size=(3, 3))]),
    "independent": (lambda loc, scale: D.Independent(D.Normal(loc, scale), 1),
                    [RNG.normal(size=3), np.ones(3)]),
}


@pytest.mark.parametrize("name", list(RSAMPLE))
def test_rsample_is_differentiable(name: str) -> None:
    make, values = RSAMPLE[name]
    params = [tg.tensor(v, dtype=tg.float64, requires_grad=True) for v in values]
    assert tg.autograd.gradcheck(_reseeded(make), tuple(params))


def test_rsample_gradients_are_the_reparameterization() -> None:
    loc = tg.tensor([0.5, -1.0], dtype=tg.float64, requires_grad=True)
    scale = tg.tensor([2.0, 0.5], dtype=tg.float64, requires_grad=True)
    x = D.Normal(loc, scale).rsample((1000,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad, [1000, 1000])
    np.testing.assert_allclose(scale.grad, ((x.detach() - loc.detach()) / scale.detach()).sum(0).numpy())
    with tg.no_grad():
        assert not D.Normal(loc, scale).rsample().requires_grad
    assert not D.Normal(loc, scale).sample().requires_grad


# Sampling statistics with a fixed seed


N_DRAWS = 20_000


def _within(draws: np.ndarray, mean: np.ndarray, std: np.ndarray, k: float = 4.5) -> None:
    standard_error = np.asarray(std) / math.sqrt(draws.shape[0])
    assert np.all(np.abs(draws.mean(0) - mean) < k * standard_error), (draws.mean(0), mean)


@pytest.mark.parametrize("dist", [
    D.Normal(tg.tensor([1.5, -2.0]), tg.tensor([2.0, 0.1])),
    D.Uniform(-1.0, 3.0), D.Exponential(tg.tensor([2.0, 0.5])), D.Laplace(0.5, 1.5),
    D.Bernoulli(tg.tensor([0.3, 0.9])), D.OneHotCategorical(tg.tensor([0.2, 0.5, 0.3])),
    D.MultivariateNormal(tg.tensor([1.0, -1.0]), tg.tensor([[2.0, 0.6], [0.6, 1.0]])),
], ids=lambda d: type(d).__name__)
def test_sample_statistics(dist: Any) -> None:
    tg.manual_seed(0)
    draws = dist.sample((N_DRAWS,)).numpy().astype(np.float64)
    _within(draws, dist.mean.numpy(), dist.stddev.numpy())
    # the variance estimate's standard error: sqrt((m4 - s^4) / N)
    centred = draws - dist.mean.numpy()
    fourth = (centred**4).mean(0)
    variance = dist.variance.numpy()
    variance_error = np.sqrt((fourth - variance**2) / N_DRAWS + 1e-12)
    assert np.all(np.abs((centred**2).mean(0) - variance) < 4.5 * variance_error)


def test_categorical_frequencies_and_covariance() -> None:
    tg.manual_seed(0)
    probs = np.array([[0.2, 0.5, 0.3], [0.7, 0.1, 0.2]])
    draws = D.Categorical(tg.tensor(probs)).sample((N_DRAWS,)).numpy()
    assert draws.shape == (N_DRAWS, 2) and draws.dtype == np.int64
    for row in range(2):
        frequencies = np.bincount(draws[:, row], minlength=3) / N_DRAWS
        standard_error = np.sqrt(probs[row] * (1 - probs[row]) / N_DRAWS)
        assert np.all(np.abs(frequencies - probs[row]) < 4.5 * standard_error)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    mvn = D.MultivariateNormal(tg.zeros(2, dtype=tg.float64), precision_matrix=tg.tensor(np.linalg.inv(cov)))
    x = mvn.sample((N_DRAWS,))
    np.testing.assert_allclose(np.cov(x.numpy().T), cov, atol=0.08)


def test_manual_seed_makes_draws_repeatable() -> None:
    dist = D.Normal(tg.zeros(3), 1.0)
    tg.manual_seed(7)
    first = dist.sample((4,)).numpy()
    tg.manual_seed(7)
    np.testing.assert_array_equal(first, dist.sample((4,)).numpy())
    tg.manual_seed(7)
    np.testing.assert_array_equal(first, dist.rsample((4,)).detach().numpy())


# KL divergences


KL_PAIRS = [
    ("Normal", {"loc": [0.3, -1.0], "scale": [1.2, 0.5]}, "Normal", {"loc": [0.0, 1.0], "scale": [0.7, 2.0]}),
    ("Uniform", {"low": [0.0, -1.0, 0.0], "high": [1.0, 1.0, 2.0]}, "Uniform",
     {"low": [-1.0, -2.0, 0.5], "high": [2.0, 3.0, 3.0]}),
    ("Bernoulli", {"probs": [0.3, 0.0, 1.0, 0.5]}, "Bernoulli", {"probs": [0.6, 0.2, 0.4, 0.0]}),
    ("Bernoulli", {"logits": [0.3, -2.0]}, "Bernoulli", {"logits": [1.0, 0.5]}),
    ("Categorical", {"probs": [[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]]}, "Categorical",
     {"probs": [[0.5, 0.25, 0.25], [0.3, 0.3, 0.4]]}),
    ("Categorical", {"probs": [0.2, 0.3, 0.5]}, "Categorical", {"probs": [0.5, 0.5, 0.0]}),
    ("OneHotCategorical", {"logits": [0.2, 0.3, -0.5]}, "OneHotCategorical", {"logits": [1.0, 0.0, 0.0]}),
    ("Exponential", {"rate": [0.5, 2.0]}, "Exponential", {"rate": [1.5, 1.0]}),
    ("Laplace", {"loc": [0.5, -1.0], "scale": [1.0, 0.3]}, "Laplace", {"loc": [0.0, 0.0], "scale": [2.0, 1]}),
    ("Exponential", {"rate": [0.5, 2.0]}, "Normal", {"loc": [1.0, -1.0], "scale": [1.5, 0.5]}),
    ("Laplace", {"loc": [0.5, -1.0], "scale": [1.0, 0.3]}, "Normal", {"loc": [0.0, 2.0], "scale": [2.0, 1]}),
    ("Normal", {"loc": [0.5, -1.0], "scale": [1.0, 0.3]}, "Laplace", {"loc": [0.0, 2.0], "scale": [2.0, 1]}),
    ("Uniform", {"low": [0.0, -1.0], "high": [1.0, 2.0]}, "Normal", {"loc": [0.0, 2.0], "scale": [2.0, 1.0]}),
    ("Uniform", {"low": [0.5, -1.0], "high": [1.0, 2.0]}, "Exponential", {"rate": [2.0, 1.0]}),
    ("Normal", {"loc": [0.5], "scale": [1.0]}, "Uniform", {"low": [0.0], "high": [1.0]}),
    ("Normal", {"loc": [0.5], "scale": [1.0]}, "Exponential", {"rate": [1.0]}),
    ("Exponential", {"rate": [0.5]}, "Uniform", {"low": [0.0], "high": [1.0]}),
    ("Laplace", {"loc": [0.5], "scale": [1.0]}, "Exponential", {"rate": [1.0]}),
    ("Laplace", {"loc": [0.5], "scale": [1.0]}, "Uniform", {"low": [0.0], "high": [1.0]}),
    ("MultivariateNormal", {"loc": RNG.normal(size=(2, 3)).tolist(), "scale_tril": _lower(3).tolist()},
     "MultivariateNormal", {"loc": RNG.normal(size=3).tolist(), "covariance_matrix": _spd(3, (2,)).tolist()}),
]


@pytest.mark.parametrize("p_name, p_params, q_name, q_params", KL_PAIRS,
                         ids=[f"{p[0]}-{p[2]}" for p in KL_PAIRS])
def test_kl_divergence_matches_pytorch(p_name: str, p_params: dict, q_name: str, q_params: dict) -> None:
    p_ours, p_leaves = _build(tg, p_name, {k: np.array(v) for k, v in p_params.items()})
    q_ours, q_leaves = _build(tg, q_name, {k: np.array(v) for k, v in q_params.items()})
    p_theirs, p_their_leaves = _build(torch, p_name, {k: np.array(v) for k, v in p_params.items()})
    q_theirs, q_their_leaves = _build(torch, q_name, {k: np.array(v) for k, v in q_params.items()})
    got, expected = D.kl_divergence(p_ours, q_ours), TD.kl_divergence(p_theirs, q_theirs)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-9, atol=1e-12)
    finite = np.isfinite(expected.detach().numpy())
    if not expected.requires_grad:
        return
    weights = np.where(finite, RNG.normal(size=tuple(expected.shape)), 0.0)
    finite_part(got, tg).mul(tg.tensor(weights)).sum().backward()
    finite_part(expected, torch).mul(torch.tensor(weights)).sum().backward()
    for ours, theirs in ((p_leaves, p_their_leaves), (q_leaves, q_their_leaves)):
        for key, leaf in ours.items():
            their_grad = theirs[key].grad
            our_grad = np.zeros(leaf.shape) if leaf.grad is None else leaf.grad
            their_grad = np.zeros(leaf.shape) if their_grad is None else their_grad.numpy()
            np.testing.assert_allclose(our_grad, their_grad, rtol=1e-7, atol=1e-10, err_msg=key)


def test_kl_independent_and_exponential_family() -> None:
    p = D.Independent(D.Normal(tg.tensor([[0.0, 1.0]]), tg.tensor([[1.0, 2.0]])), 1)
    q = D.Independent(D.Normal(tg.zeros(1, 2), tg.ones(1, 2)), 1)
    p_torch = TD.Independent(TD.Normal(torch.tensor([[0.0, 1.0]]), torch.tensor([[1.0, 2.0]])), 1)
    expected = TD.kl_divergence(p_torch, TD.Independent(TD.Normal(torch.zeros(1, 2), torch.ones(1, 2)), 1))
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), expected.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(p, D.Independent(D.Normal(tg.zeros(1, 2), 1.0), 2))
    # The generic exponential-family formulas (through autograd) agree with the closed forms.
    from tensorgrad.distributions.kl import _kl_expfamily_expfamily
    def f64(*values: float) -> Any:
        return tg.tensor(values, dtype=tg.float64)

    for a, b in ((D.Normal(f64(0.3, 1.0), 1.5), D.Normal(0.0, f64(1.0, 0.4))),
                 (D.Exponential(f64(0.5, 3.0)), D.Exponential(f64(1.0, 1.0))),
                 (D.Bernoulli(f64(0.2, 0.7)), D.Bernoulli(f64(0.5, 0.4)))):
        generic, closed = _kl_expfamily_expfamily(a, b), D.kl_divergence(a, b)
        np.testing.assert_allclose(generic.detach().numpy(), closed.numpy(), rtol=1e-9)
        generic = D.ExponentialFamily.entropy(a)
        np.testing.assert_allclose(generic.detach().numpy(), a.entropy().numpy(), rtol=1e-9)


def test_register_kl_dispatch() -> None:
    class MyNormal(D.Normal):
        pass

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == pytest.approx(0.5)

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p: Any, q: Any) -> Any:
        return tg.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == pytest.approx(0.5)
    with pytest.raises(NotImplementedError, match="p type Bernoulli and q type Uniform"):
        D.kl_divergence(D.Bernoulli(0.5), D.Uniform(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="different exponential families"):  # as PyTorch: both are
        D.kl_divergence(D.Bernoulli(0.5), D.Normal(0.0, 1.0))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# Validation


def _both_raise(make: Callable[[Any, Any], Any]) -> str:
    """Run make(module, lib) with tg and torch: both raise the same exception class; tg's message."""
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class is PyTorch's answer
        make(TD, torch)
    with pytest.raises(theirs.type) as ours:
        make(D, tg)
    return str(ours.value)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # printing a NaN parameter
def test_invalid_parameters_raise_like_pytorch() -> None:
    message = _both_raise(lambda m, t: m.Normal(t.zeros(2), t.tensor([1.0, -1.0])))
    assert message.startswith("Expected parameter scale (Tensor of shape (2,)) of distribution Normal(")
    assert "to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values" in message
    _both_raise(lambda m, t: m.Uniform(t.ones(2), t.zeros(2)))
    _both_raise(lambda m, t: m.Bernoulli(t.tensor([1.5])))
    _both_raise(lambda m, t: m.Bernoulli(probs=t.tensor([0.5]), logits=t.tensor([0.0])))
    _both_raise(lambda m, t: m.Bernoulli())
    _both_raise(lambda m, t: m.Categorical(t.tensor(1.0)))
    _both_raise(lambda m, t: m.Categorical(t.tensor([0.5, -0.5])))
    _both_raise(lambda m, t: m.Exponential(t.tensor([0.0])))
    _both_raise(lambda m, t: m.Laplace(0.0, t.tensor([float("nan")])))
    _both_raise(lambda m, t: m.MultivariateNormal(t.zeros(2), t.tensor([[1.0, 2.0], [2.0, 1.0]])))
    _both_raise(lambda m, t: m.MultivariateNormal(t.zeros(2), scale_tril=t.tensor([[1.0, 1.0], [0.0, 1.0]])))
    _both_raise(lambda m, t: m.MultivariateNormal(t.zeros(2), t.eye(2), scale_tril=t.eye(2)))
    _both_raise(lambda m, t: m.MultivariateNormal(t.zeros(2), t.ones(2)))
    _both_raise(lambda m, t: m.MultivariateNormal(t.tensor(0.0), t.eye(2)))
    _both_raise(lambda m, t: m.Normal("a", 1.0))


def test_invalid_values_raise_like_pytorch() -> None:
    message = _both_raise(lambda m, t: m.Exponential(t.ones(2)).log_prob(t.tensor([1.0, -1.0])))
    assert message.startswith("Expected value argument (Tensor of shape (2,)) to be within the support "
                              "(GreaterThanEq(lower_bound=0.0)) of the distribution Exponential(")
    assert "must be a Tensor" in _both_raise(lambda m, t: m.Normal(0.0, 1.0).log_prob(0.5))
    _both_raise(lambda m, t: m.Normal(t.zeros(3), 1.0).log_prob(t.zeros(2)))
    _both_raise(lambda m, t: m.Bernoulli(0.5).log_prob(t.tensor(0.5)))
    _both_raise(lambda m, t: m.Categorical(t.ones(3)).log_prob(t.tensor(3)))
    _both_raise(lambda m, t: m.Uniform(0.0, 1.0).cdf(t.tensor(2.0)))
    _both_raise(lambda m, t: m.MultivariateNormal(t.zeros(2), t.eye(2)).log_prob(t.zeros(3)))
    _both_raise(lambda m, t: m.OneHotCategorical(t.ones(3)).log_prob(t.tensor([1.0, 1.0, 0.0])))


def test_validation_can_be_turned_off() -> None:
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    assert D.Uniform(0.0, 1.0, validate_args=False).log_prob(tg.tensor(2.0)).item() == -math.inf
    D.Distribution.set_default_validate_args(False)
    try:
        assert not D.Normal(0.0, -1.0)._validate_args
        assert D.Exponential(1.0).log_prob(tg.tensor(-1.0)).item() == 1.0  # log(1) - 1 * (-1)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


# The rest of the interface


@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support_matches_pytorch(expand: bool) -> None:
    for ours, theirs in ((D.Bernoulli(tg.full((2, 3), 0.3)), TD.Bernoulli(torch.full((2, 3), 0.3))),
                         (D.Categorical(tg.ones(2, 4)), TD.Categorical(torch.ones(2, 4))),
                         (D.OneHotCategorical(tg.ones(2, 3)), TD.OneHotCategorical(torch.ones(2, 3)))):
        got, expected = ours.enumerate_support(expand), theirs.enumerate_support(expand)
        assert got.shape == tuple(expected.shape)
        assert str(got.dtype) == str(expected.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
        assert ours.has_enumerate_support
    with pytest.raises(NotImplementedError):
        D.Normal(0.0, 1.0).enumerate_support()


def test_flags_supports_and_reprs_match_pytorch() -> None:
    for name in ("Normal", "Uniform", "Exponential", "Laplace", "Bernoulli", "Categorical",
                 "OneHotCategorical", "MultivariateNormal", "Independent"):
        ours, theirs = getattr(D, name), getattr(TD, name)
        for flag in ("has_rsample", "has_enumerate_support"):
            if not isinstance(getattr(theirs, flag), property):
                assert getattr(ours, flag) == getattr(theirs, flag), (name, flag)
    pairs = [(D.Normal(0.0, 1.0), TD.Normal(0.0, 1.0)), (D.Exponential(2.0), TD.Exponential(2.0)),
             (D.Bernoulli(logits=0.0), TD.Bernoulli(logits=0.0)),
             (D.Categorical(tg.ones(3)), TD.Categorical(torch.ones(3))),
             (D.OneHotCategorical(tg.ones(3)), TD.OneHotCategorical(torch.ones(3))),
             (D.MultivariateNormal(tg.zeros(2), tg.eye(2)),
              TD.MultivariateNormal(torch.zeros(2), torch.eye(2))),
             (D.Uniform(0.0, 1.0), TD.Uniform(0.0, 1.0)), (D.Laplace(0.0, 1.0), TD.Laplace(0.0, 1.0))]
    for ours, theirs in pairs:
        assert repr(ours.support) == repr(theirs.support)
        assert ours.support.event_dim == theirs.support.event_dim
        assert ours.support.is_discrete == theirs.support.is_discrete
    assert repr(D.Normal(0.0, 1.0)) == repr(TD.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Uniform(0.0, 2.0).support).startswith("Interval(lower_bound=")
    assert set(D.Bernoulli(0.3).arg_constraints) == {"probs", "logits"}


def test_constraints_match_pytorch() -> None:
    C, TC = D.constraints, TD.constraints  # noqa: N806
    values = [np.array([[-1.0, 0.0, 0.5, 1.0, 2.0, np.nan]]), np.eye(3) * 2,
              np.array([[1.0, 2.0], [2.0, 1.0]]),
              np.array([[0.2, 0.8], [0.5, 0.6]]), np.array([[1.0, 0.0], [3.0, 2.0]]), np.array([[0.0, 1.0]])]
    names = ["real", "positive", "nonnegative", "unit_interval", "boolean", "simplex", "real_vector",
             "lower_cholesky", "lower_triangular", "positive_definite", "positive_semidefinite", "symmetric",
             "square", "one_hot", "nonnegative_integer", "positive_integer"]
    made = [("greater_than", (0.5,)), ("less_than", (0.5,)), ("interval", (0.0, 1.0)),
            ("half_open_interval", (0.0, 1.0)), ("integer_interval", (0, 1)), ("greater_than_eq", (1.0,))]
    constraints = [(getattr(C, n), getattr(TC, n)) for n in names]
    constraints += [(getattr(C, n)(*a), getattr(TC, n)(*a)) for n, a in made]
    constraints.append((C.independent(C.positive, 1), TC.independent(TC.positive, 1)))
    for ours, theirs in constraints:
        assert repr(ours) == repr(theirs) and ours.event_dim == theirs.event_dim
        for value in values:
            if value.ndim < ours.event_dim or (ours.event_dim == 2 and value.shape[-1] != value.shape[-2]
                                               and "Square" not in repr(ours)):
                continue
            got, expected = ours.check(tg.tensor(value)), theirs.check(torch.tensor(value))
            np.testing.assert_array_equal(np.asarray(got.numpy()), expected.numpy(), err_msg=repr(ours))
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError):
        C.dependent.check(tg.zeros(1))


def test_lazy_parameters_and_no_grad() -> None:
    logits = tg.tensor([0.5, -1.0], dtype=tg.float64, requires_grad=True)
    dist = D.Bernoulli(logits=logits)
    assert "probs" not in dist.__dict__
    with tg.no_grad():
        probs = dist.probs  # computed with gradients on, as PyTorch's lazy_property
    assert probs.requires_grad and "probs" in dist.__dict__
    probs.sum().backward()
    np.testing.assert_allclose(logits.grad, (probs * (1 - probs)).detach().numpy())
    assert D.Categorical(logits=tg.tensor([1.0, 1.0])).probs.tolist() == [0.5, 0.5]
    assert D.Normal(0.0, 1.0).sample_n is not None


def test_straight_through_and_perplexity() -> None:
    logits = tg.tensor([0.1, 0.4, -0.3], dtype=tg.float64, requires_grad=True)
    dist = D.OneHotCategoricalStraightThrough(logits=logits)
    tg.manual_seed(0)
    x = dist.rsample((3,))
    assert x.shape == (3, 3) and np.all(x.detach().numpy().sum(-1) == 1)
    (x * tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64)).sum().backward()
    assert logits.grad is not None and np.any(logits.grad)
    np.testing.assert_allclose(D.Categorical(tg.ones(4)).perplexity().item(), 4.0, rtol=1e-6)


def test_distributions_on_device(device: str) -> None:
    loc = tg.zeros(3, device=device, requires_grad=True)
    dist = D.Normal(loc, 2.0)
    tg.manual_seed(0)
    x = dist.rsample((5,))
    assert x.device == loc.device and dist.scale.device == loc.device
    dist.log_prob(x.detach()).sum().backward()
    assert loc.grad is not None
    mvn = D.MultivariateNormal(tg.zeros(2, device=device), tg.eye(2, device=device))
    assert mvn.log_prob(mvn.sample((4,))).shape == (4,)
    assert D.Categorical(tg.ones(2, 3, device=device)).sample((4,)).shape == (4, 2)
