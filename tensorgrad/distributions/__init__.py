"""`tg.distributions`: probability distributions with PyTorch's `torch.distributions` interface.

A distribution object holds its parameters as tensors (`Normal(loc, scale)`) and answers
questions about the random variable they define: `log_prob(x)`, `mean`, `entropy()`,
`kl_divergence(p, q)`, all differentiable in the parameters. `sample()` draws values outside the
graph (from tensorgrad's generator, so `tg.manual_seed` makes them repeatable); `rsample()` draws
them as a differentiable function of the parameters (loc + scale * noise, the reparameterization
trick), so a loss on the draws trains the parameters.
"""

from tensorgrad.distributions import constraints, kl_pairs, transforms  # noqa: F401 - kl_pairs registers its pairs
from tensorgrad.distributions.bernoulli import Bernoulli
from tensorgrad.distributions.beta import Beta
from tensorgrad.distributions.binomial import Binomial
from tensorgrad.distributions.categorical import Categorical
from tensorgrad.distributions.cauchy import Cauchy
from tensorgrad.distributions.chi2 import Chi2
from tensorgrad.distributions.dirichlet import Dirichlet
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.exponential import Exponential
from tensorgrad.distributions.gamma import Gamma
from tensorgrad.distributions.geometric import Geometric
from tensorgrad.distributions.gumbel import Gumbel
from tensorgrad.distributions.half_normal import HalfNormal
from tensorgrad.distributions.independent import Independent
from tensorgrad.distributions.kl import kl_divergence, register_kl
from tensorgrad.distributions.laplace import Laplace
from tensorgrad.distributions.log_normal import LogNormal
from tensorgrad.distributions.logistic_normal import LogisticNormal
from tensorgrad.distributions.mixture_same_family import MixtureSameFamily
from tensorgrad.distributions.multivariate_normal import MultivariateNormal
from tensorgrad.distributions.normal import Normal
from tensorgrad.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from tensorgrad.distributions.poisson import Poisson
from tensorgrad.distributions.relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from tensorgrad.distributions.relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from tensorgrad.distributions.student_t import StudentT
from tensorgrad.distributions.transformed_distribution import TransformedDistribution
from tensorgrad.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
)
from tensorgrad.distributions.uniform import Uniform

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
    "ComposeTransform", "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential",
    "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfNormal", "Independent", "Laplace",
    "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "MixtureSameFamily", "MultivariateNormal",
    "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "PowerTransform",
    "RelaxedBernoulli", "RelaxedOneHotCategorical", "SigmoidTransform", "SoftmaxTransform",
    "StickBreakingTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
    "constraints", "kl_divergence", "register_kl", "transforms",
]
