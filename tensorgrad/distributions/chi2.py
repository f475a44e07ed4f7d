"""`Chi2(df)`: the sum of df squared standard normals, Gamma(df / 2, 1 / 2)."""

from __future__ import annotations

from typing import Any

from tensorgrad.distributions import constraints
from tensorgrad.distributions.gamma import Gamma
from tensorgrad.tensor import Tensor

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with `df` degrees of freedom: Gamma(0.5 df, 0.5)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        """This distribution with df expanded to `batch_shape`."""
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        """The degrees of freedom: 2 concentration."""
        return self.concentration * 2
