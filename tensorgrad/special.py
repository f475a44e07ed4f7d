"""`tg.special`: PyTorch's `torch.special` namespace (`import tensorgrad.special`, or `tg.special`).

The ops themselves live with the other elementwise ops in `tensorgrad.elementwise` (each its
forward kernel and its derivative, side by side); this module gives them the names
`torch.special` uses, so `tg.special.gammaln(x)` reads as `torch.special.gammaln(x)`:
`gammaln` is `lgamma`, `psi` is `digamma`, `multigammaln` is `mvlgamma`, `expit` is `sigmoid`.
`softmax`, `log_softmax` and `logsumexp` are the reductions, with `dim` required as here in PyTorch.
"""

from __future__ import annotations

from typing import Any

from tensorgrad import reduce
from tensorgrad.elementwise import (
    digamma,
    entr,
    erf,
    erfc,
    erfcx,
    erfinv,
    exp2,
    expm1,
    i0,
    i0e,
    i1,
    i1e,
    log1p,
    log_ndtr,
    logit,
    ndtr,
    ndtri,
    polygamma,
    round,
    sinc,
    xlog1py,
    xlogy,
    zeta,
)
from tensorgrad.elementwise import lgamma as gammaln
from tensorgrad.elementwise import mvlgamma as multigammaln
from tensorgrad.elementwise import sigmoid as expit
from tensorgrad.tensor import Tensor, numpy_names

__all__ = [
    "digamma", "psi", "polygamma", "gammaln", "multigammaln", "erf", "erfc", "erfcx", "erfinv",
    "exp2", "expm1", "log1p", "expit", "logit", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr",
    "entr", "sinc", "round", "xlogy", "xlog1py", "zeta", "softmax", "log_softmax", "logsumexp",
]

psi = digamma


@numpy_names
def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002 - PyTorch's name
    """exp(x) / sum(exp(x)) over `dim` (in `dtype`, if given): `tg.softmax` with `dim` required."""
    return reduce.softmax(input, dim, dtype=dtype)


@numpy_names
def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """x - logsumexp(x) over `dim` (in `dtype`, if given): `tg.log_softmax` with `dim` required."""
    return reduce.log_softmax(input, dim, dtype=dtype)


@numpy_names
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """log(sum(exp(x))) over `dim`, computed stably: `tg.logsumexp` with `dim` required."""
    return reduce.logsumexp(input, dim, keepdim)
