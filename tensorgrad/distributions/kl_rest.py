"""The closed-form KL divergences PyTorch registers for the continuous Bernoulli, Pareto and
low-rank multivariate normal distributions: imported by `tg.distributions`, which registers them
with `kl_divergence`."""

from __future__ import annotations

import math

import tensorgrad as tg
from tensorgrad.distributions.beta import Beta
from tensorgrad.distributions.continuous_bernoulli import ContinuousBernoulli
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.exponential import Exponential
from tensorgrad.distributions.gamma import Gamma
from tensorgrad.distributions.gumbel import Gumbel
from tensorgrad.distributions.kl import _batch_trace_XXT, _infinite_like, register_kl
from tensorgrad.distributions.laplace import Laplace
from tensorgrad.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from tensorgrad.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from tensorgrad.distributions.normal import Normal
from tensorgrad.distributions.pareto import Pareto
from tensorgrad.distributions.uniform import Uniform
from tensorgrad.tensor import Tensor

__all__: list[str] = []


def _x_log_x(t: Tensor) -> Tensor:
    """x log x."""
    return t * t.log()


def _inf_where(condition: Tensor, result: Tensor) -> Tensor:
    """result, with inf where `condition` holds (the supports make the divergence infinite)."""
    return tg.where(condition, math.inf, result)


# Continuous Bernoulli

@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + tg.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - tg.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() - p.mean * q.logits - tg.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() - tg.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + tg.square(q.loc / q.scale)) + tg.log(q.scale)
    t3 = (p.variance + tg.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * tg.square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    """inf unless the uniform strictly covers [0, 1] (PyTorch's test, kept as written)."""
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound), result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    """inf unless the uniform lies strictly inside [0, 1] (PyTorch's test, kept as written)."""
    result = -p.entropy() - p.mean * q.logits - tg.log1p(-q.probs) - q._cont_bern_log_norm()
    return _inf_where((p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound), result)


# Pareto

@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    return _inf_where(p.support.lower_bound < q.support.lower_bound, t1 + t2 + alpha_ratio - 1)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 - t2 + t3 - 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return _inf_where(p.alpha <= 2, t1 - t2 + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Uniform, q: Pareto) -> Tensor:
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    return _inf_where(p.low < q.support.lower_bound, t2 * (q.alpha + 1) - t1)


# p puts mass where q has none: infinite

@register_kl(Beta, Pareto)
@register_kl(ContinuousBernoulli, Pareto)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Pareto)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Pareto)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Pareto)
@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_infinity(p: Distribution, q: Distribution) -> Tensor:
    first = {Beta: "concentration1", ContinuousBernoulli: "probs", Exponential: "rate",
             Gamma: "concentration", Pareto: "scale"}
    name = next((v for k, v in first.items() if isinstance(p, k)), "loc")
    return _infinite_like(getattr(p, name))


# Low-rank multivariate normal

def _check_event_shapes(p: Distribution, q: Distribution, kinds: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {kinds} with different event shapes cannot be computed")


def _lowrank_logdet(d: LowRankMultivariateNormal) -> Tensor:
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril)


def _lowrank_mahalanobis(q: LowRankMultivariateNormal, diff: Tensor) -> Tensor:
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, diff,
                                      q._capacitance_tril)


def _woodbury_factor(q: LowRankMultivariateNormal) -> Tensor:
    """A = L_C^-1 W^T D^-1, so that Sigma_q^-1 = D^-1 - A^T A."""
    qWt_qDinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)  # noqa: N806
    return tg.linalg.solve_triangular(q._capacitance_tril, qWt_qDinv, upper=False)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p: LowRankMultivariateNormal,
                                                            q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # trace(Sigma_q^-1 Sigma_p) = trace((D_q^-1 - A^T A)(D_p + W_p W_p^T))
    A = _woodbury_factor(q)  # noqa: N806
    term21 = (p._unbroadcasted_cov_diag / q._unbroadcasted_cov_diag).sum(-1)
    term22 = _batch_trace_XXT(p._unbroadcasted_cov_factor * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_XXT(A * p._unbroadcasted_cov_diag.sqrt().unsqueeze(-2))
    term24 = _batch_trace_XXT(A.matmul(p._unbroadcasted_cov_factor))
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p: MultivariateNormal,
                                                     q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    p_tril = p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(q) - 2 * p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # trace(Sigma_q^-1 Sigma_p) = trace((D_q^-1 - A^T A) L_p L_p^T)
    A = _woodbury_factor(q)  # noqa: N806
    term21 = _batch_trace_XXT(p_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_XXT(A.matmul(p_tril))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p: LowRankMultivariateNormal,
                                                     q: MultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    q_tril = q._unbroadcasted_scale_tril
    term1 = 2 * q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    # trace(Sigma_q^-1 Sigma_p) = |L_q^-1 W_p|^2 + |L_q^-1 D_p^1/2|^2
    p_factor = p._unbroadcasted_cov_factor
    batch = tuple(tg.broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p_factor.shape[:-2])))
    n = p.event_shape[0]
    q_scale_tril = q_tril.expand(batch + (n, n))
    p_cov_factor = p_factor.expand(batch + (n, p.cov_factor.shape[-1]))
    p_cov_diag = tg.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_XXT(tg.linalg.solve_triangular(q_scale_tril, p_cov_factor, upper=False))
    term22 = _batch_trace_XXT(tg.linalg.solve_triangular(q_scale_tril, p_cov_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
