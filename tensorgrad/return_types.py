"""Named tuples that ops return, as `torch.return_types`: `values, indices = t.max(dim=1)`.

Each is a plain `namedtuple` named after its op, so it unpacks, indexes (`out[1]`) and reads by
name (`out.indices`) as PyTorch's do, and prints as `max(values=..., indices=...)`.
"""

from __future__ import annotations

from collections import namedtuple

__all__ = ["max", "min", "sort", "topk", "cummax", "cummin", "median", "nanmedian", "kthvalue", "aminmax",
           "slogdet", "mode", "std_mean", "var_mean", "histogram", "histogramdd", "frexp", "geqrf",
           "linalg_ldl_factor", "linalg_ldl_factor_ex"]

max = namedtuple("max", ["values", "indices"])  # noqa: A001 - PyTorch's name, torch.return_types.max
min = namedtuple("min", ["values", "indices"])  # noqa: A001
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
cummax = namedtuple("cummax", ["values", "indices"])
cummin = namedtuple("cummin", ["values", "indices"])
median = namedtuple("median", ["values", "indices"])
nanmedian = namedtuple("nanmedian", ["values", "indices"])
kthvalue = namedtuple("kthvalue", ["values", "indices"])
aminmax = namedtuple("aminmax", ["min", "max"])
slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
mode = namedtuple("mode", ["values", "indices"])
frexp = namedtuple("frexp", ["mantissa", "exponent"])
histogram = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd = namedtuple("histogramdd", ["hist", "bin_edges"])
geqrf = namedtuple("geqrf", ["a", "tau"])
linalg_ldl_factor = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
# PyTorch returns a plain tuple for these two; a named tuple unpacks the same and reads by name.
std_mean = namedtuple("std_mean", ["std", "mean"])
var_mean = namedtuple("var_mean", ["var", "mean"])
