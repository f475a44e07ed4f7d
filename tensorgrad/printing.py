"""How a tensor prints: PyTorch's layout, number for number (`tensor([1.0000, 2.5000])`).

PyTorch picks one format for all of a tensor's elements and pads them to one width:

- floats whose nonzero finite values are all whole print as `1.` (`int mode`);
- otherwise fixed point with `precision` (4) decimals, `0.1000`;
- scientific notation, `1.0000e-08`, where the largest and smallest nonzero magnitudes are more
  than 1000 apart, the largest exceeds 1e8 or (not in int mode) the smallest is below 1e-4;
- integers and bools as Python writes them.

Lines wrap at `linewidth` (80) characters; a tensor of more than `threshold` (1000) elements is
summarised with `edgeitems` (3) at each end of each dimension and `...` between. Change these
with `tg.set_printoptions`, as `torch.set_printoptions`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["set_printoptions", "tensor_repr"]


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision: int | None = None, threshold: int | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """PyTorch's print options: `precision` decimals, summarise past `threshold` elements showing
    `edgeitems` at each end, wrap at `linewidth`; `profile` is "default", "short" or "full";
    `sci_mode` True or False forces scientific notation on or off (None: chosen per tensor)."""
    if profile is not None:
        profiles = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}
        if profile not in profiles:
            raise ValueError(f"set_printoptions(): profile must be one of {sorted(profiles)}, "
                             f"got {profile!r}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = profiles[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    """One format for every element of `values` (a host array): PyTorch's `_Formatter`."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind in "fc"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        precision = PRINT_OPTS.precision
        flat = values.reshape(-1)
        if not self.floating:
            self.max_width = max((len(str(v)) for v in flat.tolist()), default=1)
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if finite.size:
                magnitude = np.abs(finite)
                low, high = magnitude.min(), magnitude.max()
                self.int_mode = bool(np.all(finite == np.ceil(finite)))
                self.sci_mode = (high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
                                 if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
                if self.sci_mode:
                    widths = (len(f"{v:.{precision}e}") for v in finite.tolist())
                elif self.int_mode:
                    widths = (len(f"{v:.0f}") + 1 for v in finite.tolist())
                else:
                    widths = (len(f"{v:.{precision}f}") for v in finite.tolist())
                self.max_width = max(widths)

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


class _ComplexFormatter:
    """A complex tensor's format, PyTorch's: one `_Formatter` for the real parts and one for the
    imaginary parts, written `real+imagj` (`1.0000+2.0000j`, `-3.5000-0.2500j`)."""

    def __init__(self, values: np.ndarray) -> None:
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # the "j"

    def format(self, value: complex) -> str:
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + (imag if imag[0] in "+-" else "+" + imag)


def _summarized(values: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows: `edgeitems` at each end of every dimension."""
    edge = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * edge:
        values = np.concatenate((values[:edge], values[-edge:]))
    if values.ndim == 1:
        return values
    return np.stack([_summarized(row) for row in values])


def _vector(values: np.ndarray, indent: int, summarize: bool, formatter: Any) -> str:
    element_length = formatter.max_width + 2
    per_line = max(1, (PRINT_OPTS.linewidth - indent) // element_length)
    edge = PRINT_OPTS.edgeitems
    if summarize and values.shape[0] > 2 * edge:
        data = ([formatter.format(v) for v in values[:edge].tolist()] + [" ..."]
                + [formatter.format(v) for v in values[-edge:].tolist()])
    else:
        data = [formatter.format(v) for v in values.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: np.ndarray, indent: int, summarize: bool, formatter: Any) -> str:
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, formatter)
    edge, n = PRINT_OPTS.edgeitems, values.shape[0]
    if summarize and n > 2 * edge:
        rows = ([_nested(values[i], indent + 1, summarize, formatter) for i in range(edge)] + ["..."]
                + [_nested(values[i], indent + 1, summarize, formatter) for i in range(n - edge, n)])
    else:
        rows = [_nested(row, indent + 1, summarize, formatter) for row in values]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _body(values: np.ndarray, indent: int) -> str:
    if values.dtype == np.float16:
        values = values.astype(np.float32)
    summarize = values.size > PRINT_OPTS.threshold
    shown = _summarized(values) if summarize else values
    formatter = _ComplexFormatter(shown) if values.dtype.kind == "c" else _Formatter(shown)
    return _nested(values, indent, summarize, formatter)


_TORCH_PREFIX = len("torch.")  # what PyTorch writes before a dtype's name and this repr does not


def tensor_repr(values: np.ndarray, device: str | None, autograd: str | None,
                default_dtypes: tuple[np.dtype, ...], prefix: str = "tensor(") -> str:
    """`prefix` + the elements of `values` (a host array) + the suffixes PyTorch adds, in its
    order and wrapped as it wraps them: `device` (where not the CPU), the size of an empty tensor
    that is not 1-d, the dtype unless one of `default_dtypes` (the first is the default float),
    and `autograd` (`requires_grad=True` or the op that made it)."""
    indent = len(prefix)
    suffixes = [] if device is None else [f"device='{device}'"]
    if values.size == 0:
        body = "[]"
        if values.ndim != 1:
            suffixes.append("size=" + str(tuple(values.shape)))
        if values.dtype != default_dtypes[0]:
            suffixes.append(f"dtype={values.dtype}")
    else:
        body = _body(values, indent)
        if values.dtype not in default_dtypes:
            suffixes.append(f"dtype={values.dtype}")
    if autograd is not None:
        suffixes.append(autograd)
    text = [prefix + body]
    last_line = len(text[0]) - text[0].rfind("\n") + 1
    for suffix in suffixes:
        # PyTorch wraps by the length of its own "dtype=torch.float64": the same lines as its repr
        width = len(suffix) + _TORCH_PREFIX * suffix.startswith("dtype=")
        if last_line + width + 2 > PRINT_OPTS.linewidth:
            text.append(",\n" + " " * indent + suffix)
            last_line = indent + width
        else:
            text.append(", " + suffix)
            last_line += width + 2
    return "".join(text) + ")"
