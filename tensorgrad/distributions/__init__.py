"""`tg.distributions`: probability distributions with PyTorch's `torch.distributions` interface.

A distribution object holds its parameters as tensors (`Normal(loc, scale)`) and answers
questions about the random variable they define: `log_prob(x)`, `mean`, `entropy()`,
`kl_divergence(p, q)`, all differentiable in the parameters. `sample()` draws values outside the
graph (from tensorgrad's generator, so `tg.manual_seed` makes them repeatable); `rsample()` draws
them as a differentiable function of the parameters (loc + scale * noise, the reparameterization
trick), so a loss on the draws trains the parameters.
"""

from tensorgrad.distributions import constraints
from tensorgrad.distributions.bernoulli import Bernoulli
from tensorgrad.distributions.categorical import Categorical
from tensorgrad.distributions.distribution import Distribution
from tensorgrad.distributions.exp_family import ExponentialFamily
from tensorgrad.distributions.exponential import Exponential
from tensorgrad.distributions.independent import Independent
from tensorgrad.distributions.kl import kl_divergence, register_kl
from tensorgrad.distributions.laplace import Laplace
from tensorgrad.distributions.multivariate_normal import MultivariateNormal
from tensorgrad.distributions.normal import Normal
from tensorgrad.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from tensorgrad.distributions.uniform import Uniform

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "Exponential", "ExponentialFamily", "Independent", "Laplace",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Uniform",
    "constraints", "kl_divergence", "register_kl",
]
