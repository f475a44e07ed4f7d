"""`tg.distributions`: probability distributions with PyTorch's `torch.distributions` interface.

A distribution object holds its parameters as tensors (`Normal(loc, scale)`) and answers
questions about the random variable they define: `log_prob(x)`, `mean`, `entropy()`,
`kl_divergence(p, q)`, all differentiable in the parameters. `sample()` draws values outside the
graph (from tensorgrad's generator, so `tg.manual_seed` makes them repeatable); `rsample()` draws
them as a differentiable function of the parameters (loc + scale * noise, the reparameterization
trick), so a loss on the draws trains the parameters.
"""

from tensorgrad.distributions import (  # noqa: F401 - kl_pairs and kl_rest register their pairs
    constraint_registry,
    constraints,
    kl_pairs,
    kl_rest,
    transforms,
)
from tensorgrad.distributions.bernoulli import Bernoulli
from tensorgrad.distributions.beta import Beta
from tensorgrad.distributions.binomial import Binomial
from tensorgrad.distributions.categorical import Categorical
from tensorgrad.distributions.cauchy import Cauchy
from tensorgrad.distributions.chi2 import Chi2
from tensorgrad.distributions.constraint_registry import biject_to, transform_to
from tensorgrad.distributions.continuous_bernoulli import ContinuousBernoulli
from tensorgrad.distributions.dirichlet import Dirichlet
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.exponential import Exponential
from tensorgrad.distributions.fishersnedecor import FisherSnedecor
from tensorgrad.distributions.gamma import Gamma
from tensorgrad.distributions.generalized_pareto import GeneralizedPareto
from tensorgrad.distributions.geometric import Geometric
from tensorgrad.distributions.gumbel import Gumbel
from tensorgrad.distributions.half_cauchy import HalfCauchy
from tensorgrad.distributions.half_normal import HalfNormal
from tensorgrad.distributions.independent import Independent
from tensorgrad.distributions.inverse_gamma import InverseGamma
from tensorgrad.distributions.kl import kl_divergence, register_kl
from tensorgrad.distributions.kumaraswamy import Kumaraswamy
from tensorgrad.distributions.laplace import Laplace
from tensorgrad.distributions.lkj_cholesky import LKJCholesky
from tensorgrad.distributions.log_normal import LogNormal
from tensorgrad.distributions.logistic_normal import LogisticNormal
from tensorgrad.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from tensorgrad.distributions.mixture_same_family import MixtureSameFamily
from tensorgrad.distributions.multinomial import Multinomial
from tensorgrad.distributions.multivariate_normal import MultivariateNormal
from tensorgrad.distributions.negative_binomial import NegativeBinomial
from tensorgrad.distributions.normal import Normal
from tensorgrad.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from tensorgrad.distributions.pareto import Pareto
from tensorgrad.distributions.poisson import Poisson
from tensorgrad.distributions.relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from tensorgrad.distributions.relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from tensorgrad.distributions.student_t import StudentT
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from tensorgrad.distributions.uniform import Uniform
from tensorgrad.distributions.von_mises import VonMises
from tensorgrad.distributions.weibull import Weibull
from tensorgrad.distributions.wishart import Wishart

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
    "ComposeTransform", "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential",
    "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfNormal", "Independent", "Laplace",
    "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "MixtureSameFamily", "MultivariateNormal",
    "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "PowerTransform",
    "RelaxedBernoulli", "RelaxedOneHotCategorical", "SigmoidTransform", "SoftmaxTransform",
    "StickBreakingTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
    "constraints", "kl_divergence", "register_kl", "transforms",
    "ContinuousBernoulli", "FisherSnedecor", "HalfCauchy", "InverseGamma", "Kumaraswamy",
    "LowRankMultivariateNormal", "Multinomial", "NegativeBinomial", "Pareto", "VonMises", "Weibull",
    "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform", "SoftplusTransform",
    "StackTransform",
    "GeneralizedPareto", "LKJCholesky", "Wishart", "biject_to", "constraint_registry", "identity_transform",
    "transform_to",
]
