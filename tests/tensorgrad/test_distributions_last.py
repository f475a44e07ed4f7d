"""The last of tg.distributions against torch.distributions: Wishart, LKJCholesky and
GeneralizedPareto (values, gradients, samples, validation), Wishart's KL divergence, and the
constraint registry (`biject_to`, `transform_to`)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import distributions as D  # noqa: N812 - PyTorch's habit

torch = pytest.importorskip("torch")
from distribution_checks import assert_method_matches, assert_samples_fit, both_raise, finite_part  # noqa: E402 - after the skip

TD = torch.distributions

RNG = np.random.default_rng(7)


@pytest.fixture
def torch_float64() -> Iterator[None]:
    """PyTorch's GeneralizedPareto compares float64 parameters with a float32 0.0 (`isclose`
    then refuses the mix); with float64 as its default dtype its float64 answers exist."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def _make(lib: Any, params: dict[str, Any]) -> dict[str, Any]:
    make = tg.tensor if lib is tg else torch.tensor
    return {k: make(np.asarray(v, dtype=np.float64), dtype=lib.float64, requires_grad=True)
            for k, v in params.items()}


def _spd(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = RNG.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


COV = _spd(3, (2,))
CHOL = np.linalg.cholesky(_spd(3))


def _corr_cholesky(n: int, batch: tuple[int, ...]) -> np.ndarray:
    """Cholesky factors of random correlation matrices (rows of unit norm to float64 rounding)."""
    s = _spd(n, batch)
    d = 1 / np.sqrt(np.diagonal(s, axis1=-2, axis2=-1))
    return np.linalg.cholesky(s * d[..., :, None] * d[..., None, :])


LKJ_VALUE = _corr_cholesky(3, (2, 2))

# (class name, float64 parameters, fixed arguments, value for log_prob / cdf)
CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any], np.ndarray]] = {
    "wishart_cov": ("Wishart", {"df": np.array([3.5, 6.0]), "covariance_matrix": COV}, {}, _spd(3, (4, 2))),
    "wishart_precision": ("Wishart", {"df": np.array(5.0), "precision_matrix": COV}, {}, _spd(3, (2,))),
    "wishart_tril": ("Wishart", {"df": np.array([2.5, 4.0, 7.0]), "scale_tril": CHOL}, {}, _spd(3, (3,))),
    "wishart_number_df": ("Wishart", {"scale_tril": CHOL}, {"df": 4.0}, _spd(3)),
    "lkj": ("LKJCholesky", {"concentration": np.array([0.5, 1.0])}, {"dim": 3}, LKJ_VALUE),
    "lkj_2": ("LKJCholesky", {"concentration": np.array(2.5)}, {"dim": 2},
              np.array([[1.0, 0.0], [0.6, 0.8]])),
    "gpd": ("GeneralizedPareto", {"loc": np.array([0.0, 1.0, -0.5, 0.2, 0.0]),
                                  "scale": np.array([1.0, 2.0, 0.5, 1.5, 1.0]),
                                  "concentration": np.array([0.0, -0.5, 0.3, 0.7, -1.0])}, {},
            np.array([[0.5, 1.5, 0.1, 3.0, 0.3], [2.0, 4.5, 2.0, 0.2, 0.9]])),
}

METHODS = ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "mode"]


def _build(lib: Any, case: str) -> tuple[Any, dict[str, Any]]:
    name, params, fixed, _ = CASES[case]
    leaves = _make(lib, params)
    return getattr(D if lib is tg else TD, name)(**fixed, **leaves), leaves


@pytest.mark.usefixtures("torch_float64")
@pytest.mark.filterwarnings("ignore:Low df values detected")
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("method", METHODS)
def test_values_and_gradients_match_pytorch(case: str, method: str) -> None:
    ours, our_leaves = _build(tg, case)
    theirs, their_leaves = _build(torch, case)
    value = CASES[case][3]
    our_value, their_value = tg.tensor(value, dtype=tg.float64), torch.tensor(value, dtype=torch.float64)
    assert_method_matches(method, ours, our_leaves, our_value, theirs, their_leaves, their_value, RNG)


@pytest.mark.usefixtures("torch_float64")
@pytest.mark.parametrize("method", ["log_survival_function", "log_cdf"])
def test_generalized_pareto_tails_match_pytorch(method: str) -> None:
    ours, our_leaves = _build(tg, "gpd")
    theirs, their_leaves = _build(torch, "gpd")
    value = CASES["gpd"][3]
    got = getattr(ours, method)(tg.tensor(value))
    expected = getattr(theirs, method)(torch.tensor(value))
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-9, atol=1e-12)
    weights = RNG.normal(size=value.shape)
    finite_part(got, tg).mul(tg.tensor(weights)).sum().backward()
    finite_part(expected, torch).mul(torch.tensor(weights)).sum().backward()
    for key, leaf in our_leaves.items():
        np.testing.assert_allclose(leaf.grad, their_leaves[key].grad.numpy(), rtol=1e-7, atol=1e-10)


def test_generalized_pareto_float32_matches_pytorch() -> None:
    """In float32, PyTorch's own default, PyTorch's log_prob runs as is."""
    loc, scale, conc = [0.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, -0.5, 0.4]
    value = [0.5, 1.5, 3.0]
    ours = D.GeneralizedPareto(tg.tensor(loc), tg.tensor(scale), tg.tensor(conc))
    theirs = TD.GeneralizedPareto(torch.tensor(loc), torch.tensor(scale), torch.tensor(conc))
    for method in ("log_prob", "cdf"):
        got = getattr(ours, method)(tg.tensor(value))
        expected = getattr(theirs, method)(torch.tensor(value))
        assert got.dtype == tg.float32
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    assert ours.batch_shape == theirs.batch_shape
    assert D.GeneralizedPareto(0.0, 1.0, 0.5).batch_shape == ()


def test_generalized_pareto_support() -> None:
    dist = D.GeneralizedPareto(tg.tensor([0.0, 1.0]), tg.tensor([1.0, 2.0]), tg.tensor([0.2, -0.5]))
    support = dist.support
    assert isinstance(support, type(D.constraints.interval(0.0, 1.0)))
    np.testing.assert_array_equal(support.upper_bound.numpy(), [math.inf, 5.0])
    np.testing.assert_array_equal(support.check(tg.tensor([[3.0, 4.9], [-0.1, 5.1]])).numpy(),
                                  [[True, True], [False, False]])
    assert D.constraints.is_dependent(D.GeneralizedPareto.support)


# Sampling


def _samplers(dtype: Any) -> dict[str, Any]:
    cov = tg.tensor([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 1.5]], dtype=dtype)
    return {
        "wishart": D.Wishart(tg.tensor([4.0, 7.5], dtype=dtype), covariance_matrix=cov),
        "wishart_tril": D.Wishart(5.0, scale_tril=tg.linalg.cholesky(cov).expand(2, 3, 3)),
        "lkj": D.LKJCholesky(4, tg.tensor([0.5, 3.0], dtype=dtype)),
        "lkj_2": D.LKJCholesky(2, tg.tensor(1.0, dtype=dtype)),
        "gpd": D.GeneralizedPareto(tg.zeros(3, dtype=dtype), 2.0, tg.tensor([0.0, 0.3, -0.4], dtype=dtype)),
    }


@pytest.mark.parametrize("name", list(_samplers(tg.float32)))
@pytest.mark.parametrize("dtype", [tg.float32, tg.float64])
def test_sample_shapes_dtypes_and_supports(name: str, dtype: Any) -> None:
    dist = _samplers(dtype)[name]
    theirs = {"wishart": TD.Wishart, "wishart_tril": TD.Wishart, "lkj": TD.LKJCholesky,
              "lkj_2": TD.LKJCholesky, "gpd": TD.GeneralizedPareto}[name]
    assert dist.has_rsample == theirs.has_rsample and dist.has_enumerate_support is False
    assert_samples_fit(dist, dtype)


def test_wishart_sample_statistics() -> None:
    dist = _samplers(tg.float64)["wishart"]
    tg.manual_seed(0)
    n = 20_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # valid draws raise no "singular sample" warning
        draws = dist.sample((n,)).numpy()
    mean, variance = dist.mean.numpy(), dist.variance.numpy()
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * np.sqrt(variance / n)), (draws.mean(0), mean)
    np.testing.assert_allclose(draws.var(0), variance, rtol=0.1)
    np.testing.assert_allclose(draws, np.swapaxes(draws, -1, -2))


def test_lkj_sample_statistics() -> None:
    """An off-diagonal correlation of an LKJ(eta) d x d matrix is 2 Beta(b, b) - 1 with
    b = eta - 1 + d / 2: mean 0, variance 1 / (2 eta + d - 1)."""
    tg.manual_seed(0)
    eta, d, n = np.array([0.5, 3.0]), 4, 20_000
    L = _samplers(tg.float64)["lkj"].sample((n,)).numpy()  # noqa: N806
    corr = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-12)
    i, j = np.tril_indices(d, -1)
    off = corr[..., i, j]  # (n, 2, 6)
    expected_var = 1 / (2 * eta + d - 1)
    assert np.all(np.abs(off.mean(0)) < 5 * np.sqrt(expected_var[:, None] / n))
    np.testing.assert_allclose(off.var(0), np.broadcast_to(expected_var[:, None], (2, 6)), rtol=0.05)


def test_generalized_pareto_sample_statistics() -> None:
    dist = _samplers(tg.float64)["gpd"]
    tg.manual_seed(0)
    n = 40_000
    draws = dist.sample((n,)).numpy()
    mean, std = dist.mean.numpy(), dist.stddev.numpy()
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * std / math.sqrt(n)), (draws.mean(0), mean)
    np.testing.assert_allclose(draws.std(0), std, rtol=0.05)
    assert draws[:, 2].max() <= 2.0 / 0.4  # bounded above at loc - scale / xi
    tg.manual_seed(5)
    first = dist.sample((3,))
    tg.manual_seed(5)
    assert np.array_equal(dist.sample((3,)).numpy(), first.numpy())  # seeded by tg.manual_seed


def test_rsample_gradients_are_unbiased() -> None:
    """d/dtheta E[x], estimated from rsample, matches the gradient of the closed-form mean."""
    df = tg.tensor(4.5, dtype=tg.float64, requires_grad=True)
    tril = tg.tensor([[1.2, 0.0], [0.4, 0.8]], dtype=tg.float64, requires_grad=True)
    dist = D.Wishart(df, scale_tril=tril)
    tg.manual_seed(1)
    weights = tg.tensor([[1.0, 0.5], [0.5, -0.7]], dtype=tg.float64)
    got = tg.autograd.grad((dist.rsample((20_000,)).mean(0) * weights).sum(), [df, tril], retain_graph=True)
    expected = tg.autograd.grad((dist.mean * weights).sum(), [df, tril])
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=0.05, atol=0.02)
    params = [tg.tensor(v, dtype=tg.float64, requires_grad=True) for v in (0.5, 1.5, 0.2)]
    dist = D.GeneralizedPareto(*params)
    got = tg.autograd.grad(dist.rsample((20_000,)).mean(), params, retain_graph=True)
    expected = tg.autograd.grad(dist.mean, params)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=0.05, atol=0.02)


def test_wishart_redraws_singular_samples() -> None:
    dist = D.Wishart(4.0, covariance_matrix=tg.eye(2).expand(3, 2, 2))
    bartlett, calls = dist._bartlett_sampling, []

    def first_draw_singular(sample_shape: Any) -> tg.Tensor:
        x = bartlett(sample_shape)
        if not calls:  # batch entry 1 of the first draw is the zero matrix
            x = x * tg.tensor([1.0, 0.0, 1.0]).view(3, 1, 1)
        calls.append(sample_shape)
        return x

    dist._bartlett_sampling = first_draw_singular
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = dist.rsample((4,))
    assert len(calls) == 2 and x.shape == (4, 3, 2, 2) and bool(dist.support.check(x).all())
    calls.clear()
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = dist.rsample((4,), max_try_correction=0)  # no redraw: returned as drawn
    assert len(calls) == 1 and not bool(dist.support.check(x).all())
    calls.append(0)  # later draws are left as drawn: valid, so no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dist.rsample((4,))


def test_lkj_log_prob_is_a_density() -> None:
    """For d = 2, L = [[1, 0], [r, sqrt(1 - r**2)]] is fixed by r in (-1, 1), and the density
    over r integrates to 1."""
    r = np.linspace(-1, 1, 200_001)[1:-1]
    value = np.zeros((r.size, 2, 2))
    value[:, 0, 0], value[:, 1, 0], value[:, 1, 1] = 1.0, r, np.sqrt(1 - r**2)
    for eta in (0.7, 1.0, 4.0):
        # r is the only free entry of L, so log_prob is the density of r
        density = np.exp(D.LKJCholesky(2, eta).log_prob(tg.tensor(value)).numpy())
        np.testing.assert_allclose(np.trapezoid(density, r), 1.0, rtol=2e-3)


# KL divergences


@pytest.mark.filterwarnings("ignore:Low df values detected")
def test_wishart_kl_matches_pytorch() -> None:
    p_params = {"df": [4.0, 5.5], "covariance_matrix": COV}
    q_params = {"df": [3.0], "scale_tril": CHOL}
    p_leaves = _make(tg, p_params)
    q_leaves = _make(tg, q_params)
    p_ours, q_ours = D.Wishart(**p_leaves), D.Wishart(**q_leaves)
    p_tl, q_tl = _make(torch, p_params), _make(torch, q_params)
    expected = TD.kl_divergence(TD.Wishart(**p_tl), TD.Wishart(**q_tl))
    got = D.kl_divergence(p_ours, q_ours)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-9)
    weights = RNG.normal(size=tuple(expected.shape))
    got.mul(tg.tensor(weights)).sum().backward()
    expected.mul(torch.tensor(weights)).sum().backward()
    for ours, theirs in ((p_leaves, p_tl), (q_leaves, q_tl)):
        for key, leaf in ours.items():
            # PyTorch's Bregman form detaches p's natural parameters: p gets no gradient
            their_grad = np.zeros(leaf.shape) if theirs[key].grad is None else theirs[key].grad.numpy()
            our_grad = np.zeros(leaf.shape) if leaf.grad is None else leaf.grad
            np.testing.assert_allclose(our_grad, their_grad, rtol=1e-7, atol=1e-10, err_msg=key)


def test_no_kl_for_lkj_and_generalized_pareto() -> None:
    for dist in (D.LKJCholesky(3, 2.0), D.GeneralizedPareto(0.0, 1.0, 0.2)):
        with pytest.raises(NotImplementedError):
            D.kl_divergence(dist, dist)


# Validation and the rest of the interface


@pytest.mark.filterwarnings("ignore:Low df values detected")
def test_invalid_arguments_raise_like_pytorch() -> None:
    assert "greater than ndim - 1 = 2" in both_raise(lambda m, t: m.Wishart(t.tensor(2.0),
                                                                           covariance_matrix=t.eye(3)))
    assert "greater than ndim - 1" in both_raise(lambda m, t: m.Wishart(1.0, covariance_matrix=t.eye(2),
                                                                         validate_args=False))
    both_raise(lambda m, t: m.Wishart(4.0))
    both_raise(lambda m, t: m.Wishart(4.0, covariance_matrix=t.eye(2), scale_tril=t.eye(2)))
    assert "at least two-dimensional" in both_raise(lambda m, t: m.Wishart(4.0, covariance_matrix=t.ones(2)))
    assert "covariance_matrix" in both_raise(lambda m, t: m.Wishart(4.0, covariance_matrix=-t.eye(2)))
    assert "scale_tril" in both_raise(lambda m, t: m.Wishart(4.0, scale_tril=t.ones(2, 2)))
    both_raise(lambda m, t: m.Wishart(t.ones(3) * 4, covariance_matrix=t.eye(2).expand(2, 2, 2)))
    assert "Found dim=1" in both_raise(lambda m, t: m.LKJCholesky(1, 1.0))
    assert "concentration" in both_raise(lambda m, t: m.LKJCholesky(3, t.tensor([1.0, 0.0])))
    assert "Expected parameter scale" in both_raise(lambda m, t: m.GeneralizedPareto(0.0, -1.0, 0.5))
    both_raise(lambda m, t: m.GeneralizedPareto(t.tensor([0.0, math.nan]), 1.0, 0.5))


def test_low_df_warns_like_pytorch() -> None:
    with pytest.warns(UserWarning, match="Low df values detected"):
        TD.Wishart(torch.tensor(2.5), covariance_matrix=torch.eye(3))
    with pytest.warns(UserWarning, match="Low df values detected"):
        D.Wishart(tg.tensor(2.5), covariance_matrix=tg.eye(3))


def test_invalid_values_raise_like_pytorch() -> None:
    both_raise(lambda m, t: m.Wishart(4.0, covariance_matrix=t.eye(2)).log_prob(-t.eye(2)))
    both_raise(lambda m, t: m.Wishart(4.0, covariance_matrix=t.eye(2)).log_prob(t.eye(3)))
    both_raise(lambda m, t: m.LKJCholesky(2, 1.0).log_prob(t.tensor([[1.0, 0.0], [0.5, 0.5]])))
    both_raise(lambda m, t: m.LKJCholesky(2, 1.0).log_prob(t.tensor([[1.0, 0.1], [0.0, 1.0]])))
    both_raise(lambda m, t: m.GeneralizedPareto(1.0, 2.0, -0.5).log_prob(t.tensor(5.5)))
    both_raise(lambda m, t: m.GeneralizedPareto(1.0, 2.0, 0.5).log_prob(t.tensor(0.5)))


def _pairs() -> list[tuple[Any, Any]]:
    cov = [[2.0, 0.3], [0.3, 1.0]]
    return [(D.Wishart(tg.tensor([4.0, 5.0]), covariance_matrix=tg.tensor(cov)),
             TD.Wishart(torch.tensor([4.0, 5.0]), covariance_matrix=torch.tensor(cov))),
            (D.Wishart(3.0, precision_matrix=tg.tensor(cov)),
             TD.Wishart(3.0, precision_matrix=torch.tensor(cov))),
            (D.LKJCholesky(3, tg.tensor([0.5, 2.0])), TD.LKJCholesky(3, torch.tensor([0.5, 2.0]))),
            (D.LKJCholesky(2), TD.LKJCholesky(2)),
            (D.GeneralizedPareto(tg.tensor([0.0, 1.0]), 2.0, 0.3),
             TD.GeneralizedPareto(torch.tensor([0.0, 1.0]), 2.0, 0.3))]


@pytest.mark.filterwarnings("ignore:Singular sample detected")  # PyTorch's, on every Wishart draw
def test_flags_shapes_and_expand_match_pytorch() -> None:
    for ours, theirs in _pairs():
        assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape, type(ours)
        assert ours.has_rsample == theirs.has_rsample, type(ours)
        e, f = ours.expand((4,) + tuple(ours.batch_shape)), theirs.expand((4,) + tuple(theirs.batch_shape))
        assert type(e) is type(ours) and e.batch_shape == f.batch_shape and e.event_shape == f.event_shape
        assert e.sample().shape == tuple(f.sample().shape)
        value = f.sample()
        np.testing.assert_allclose(e.log_prob(tg.tensor(value.numpy())).numpy(), f.log_prob(value).numpy(),
                                   rtol=1e-5, atol=1e-5)


def test_wishart_matrices_match_pytorch() -> None:
    for name, matrix in (("covariance_matrix", COV), ("precision_matrix", COV), ("scale_tril", CHOL)):
        ours = D.Wishart(tg.tensor([4.0, 6.0], dtype=tg.float64), **{name: tg.tensor(matrix)})
        theirs = TD.Wishart(torch.tensor([4.0, 6.0], dtype=torch.float64), **{name: torch.tensor(matrix)})
        for attribute in ("covariance_matrix", "precision_matrix", "scale_tril"):
            got, expected = getattr(ours, attribute), getattr(theirs, attribute)
            assert tuple(got.shape) == tuple(expected.shape), attribute
            np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


# The constraint registry


def _constraints(lib: Any) -> dict[str, Any]:
    c = D.constraints if lib is tg else TD.constraints
    t = tg.tensor if lib is tg else torch.tensor
    return {
        "real": c.real, "real_vector": c.real_vector, "positive": c.positive, "nonnegative": c.nonnegative,
        "greater_than": c.greater_than(2.0), "greater_than_eq": c.greater_than_eq(-1.5),
        "greater_than_tensor": c.greater_than(t([0.0, 1.0, -1.0], dtype=lib.float64)),
        "less_than": c.less_than(3.0), "unit_interval": c.unit_interval, "interval": c.interval(-2.0, 5.0),
        "interval_tensor": c.interval(t([0.0, -1.0, 2.0], dtype=lib.float64),
                                      t([1.0, 0.0, 6.0], dtype=lib.float64)),
        "half_open_interval": c.half_open_interval(0.0, 1.0),
        "independent_positive": c.independent(c.positive, 1),
        "simplex": c.simplex, "lower_cholesky": c.lower_cholesky, "positive_definite": c.positive_definite,
        "positive_semidefinite": c.positive_semidefinite, "corr_cholesky": c.corr_cholesky,
        "cat": c.cat([c.positive, c.interval(0.0, 1.0)], dim=-1, lengths=[2, 1]),
        "stack": c.stack([c.real, c.positive, c.less_than(1.0)], dim=-1),
    }


INPUT_SHAPES = {name: (2, 3, 3) for name in ("lower_cholesky", "positive_definite", "positive_semidefinite")}


def _structure(transform: Any) -> Any:
    """A transform's class names, nested through compositions and wrappers."""
    if hasattr(transform, "parts"):
        return [type(transform).__name__, [_structure(p) for p in transform.parts]]
    if hasattr(transform, "base_transform"):
        return [type(transform).__name__, _structure(transform.base_transform)]
    if hasattr(transform, "transforms"):
        return [type(transform).__name__, [_structure(p) for p in transform.transforms]]
    return type(transform).__name__


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", list(_constraints(tg)))
def test_registry_matches_pytorch(registry: str, name: str) -> None:
    ours_c, theirs_c = _constraints(tg)[name], _constraints(torch)[name]
    try:
        theirs = getattr(TD, registry)(theirs_c)
    except NotImplementedError as error:
        with pytest.raises(NotImplementedError, match=str(error)):
            getattr(D, registry)(ours_c)
        return
    ours = getattr(D, registry)(ours_c)
    assert _structure(ours) == _structure(theirs)
    assert ours.bijective == theirs.bijective
    x = RNG.normal(size=INPUT_SHAPES.get(name, (2, 3))) * 2
    our_x = tg.tensor(x, requires_grad=True)
    their_x = torch.tensor(x, requires_grad=True)
    y, expected = ours(our_x), theirs(their_x)
    assert tuple(y.shape) == tuple(expected.shape)
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert bool(ours_c.check(y.detach()).all())  # lands in the constraint
    if registry == "biject_to":
        np.testing.assert_allclose(ours.inv(y).detach().numpy(), x, rtol=1e-6, atol=1e-6)
        ladj = ours.log_abs_det_jacobian(our_x, y)
        their_ladj = theirs.log_abs_det_jacobian(their_x, expected)
        np.testing.assert_allclose(ladj.detach().numpy(), their_ladj.detach().numpy(), rtol=1e-9, atol=1e-12)
    weights = RNG.normal(size=tuple(expected.shape))
    y.mul(tg.tensor(weights)).sum().backward()
    expected.mul(torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(our_x.grad, their_x.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_registry_errors_and_registration() -> None:
    for lib in (D, TD):
        with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
            lib.biject_to(lib.constraints.lower_cholesky)
        with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
            lib.transform_to(lib.constraints.boolean)
        with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass"):
            lib.constraint_registry.ConstraintRegistry().register(3, lambda c: None)
    registry = D.constraint_registry.ConstraintRegistry()

    class Negative(D.constraints.Constraint):
        def check(self, value: tg.Tensor) -> tg.Tensor:
            return value < 0

    @registry.register(Negative)
    def _negative(constraint: Any) -> Any:
        return D.transforms.ComposeTransform([D.ExpTransform(), D.AffineTransform(0.0, -1.0)])

    registry.register(D.constraints.positive, lambda c: D.ExpTransform())  # an instance stands for its class
    assert isinstance(registry(D.constraints.greater_than(4.0)), D.ExpTransform)
    y = registry(Negative())(tg.tensor([-3.0, 0.0, 2.0]))
    assert bool(Negative().check(y).all())
    assert D.biject_to(D.constraints.real) is D.identity_transform
    # transform_to the parameters of a distribution: optimize unconstrained values
    unconstrained = tg.zeros(3, requires_grad=True)
    scale = D.transform_to(D.Normal.arg_constraints["scale"])(unconstrained)
    assert np.allclose(scale.detach().numpy(), 1.0)
