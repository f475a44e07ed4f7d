"""`tg.signal.windows`: window functions with `torch.signal.windows`' names and signatures.

A window is M weights that taper a frame of a signal to 0 (or near it) at both ends, so that its
Fourier transform doesn't see the jump where the frame is cut out. Each is a formula over M
evenly spaced points, here built from differentiable tensor ops exactly as PyTorch builds it (a
`linspace` grid, then `exp`, `cos`, `i0`, ...), so `requires_grad=True` gives a result that
carries a graph, as PyTorch's does.

`sym=True` (the default) gives a symmetric window, for filter design; `sym=False` a periodic
one, for spectral analysis: the first M points of the symmetric window of M + 1.
`tg.hann_window(M, periodic)` and the other `*_window` factories compute the same shapes with
`periodic = not sym`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from tensorgrad.creation import arange, empty, linspace, ones, tensor
from tensorgrad.dtypes import get_default_dtype
from tensorgrad.elementwise import minimum
from tensorgrad.layouts import strided
from tensorgrad.tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checked_dtype(name: str, M: int, dtype: Any, layout: Any) -> Any:  # noqa: N803 - PyTorch's name
    """The dtype to build in (the default float if None), after PyTorch's checks of the arguments."""
    dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _grid(start: Any, end: Any, M: int, options: dict[str, Any]) -> Tensor:  # noqa: N803
    """M evenly spaced points from start to end, made with the factory options."""
    return linspace(start, end, M, **options)


def _short(M: int, options: dict[str, Any]) -> Tensor | None:  # noqa: N803
    """The window of 0 points (empty) or 1 point (the single value 1); None for a longer one."""
    if M > 1:
        return None
    return empty((0,), **options) if M == 0 else ones((1,), **options)


def _options(dtype: Any, layout: Any, device: Any, requires_grad: bool) -> dict[str, Any]:
    return {"dtype": dtype, "layout": layout, "device": device, "requires_grad": requires_grad}


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,  # noqa: N803
                dtype: Any = None, layout: Any = strided, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """The exponential (Poisson) window: exp(-|n - center| / tau) for n = 0 .. M-1, centred on
    the middle unless `center` is given (only for a periodic window)."""
    options = _options(_checked_dtype("exponential", M, dtype, layout), layout, device, requires_grad)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return empty((0,), **options)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / tau
    k = _grid(-center * scale, (-center + (M - 1)) * scale, M, options)
    return (-k.abs()).exp()


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided,  # noqa: N803
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """The cosine (sine) window: sin(pi (n + 1/2) / M) for n = 0 .. M-1 (periodic: M + 1)."""
    options = _options(_checked_dtype("cosine", M, dtype, layout), layout, device, requires_grad)
    if M == 0:
        return empty((0,), **options)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _grid(0.5 * step, (0.5 + (M - 1)) * step, M, options).sin()


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None,  # noqa: N803
             layout: Any = strided, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Gaussian window: exp(-(n - (M-1)/2)**2 / (2 std**2)) for n = 0 .. M-1 (periodic:
    centred as for M + 1 points)."""
    options = _options(_checked_dtype("gaussian", M, dtype, layout), layout, device, requires_grad)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return empty((0,), **options)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _grid(start * scale, (start + (M - 1)) * scale, M, options)
    return (-(k**2)).exp()


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None,  # noqa: N803
           layout: Any = strided, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window: I0(sqrt(beta**2 - k**2)) / I0(beta) for k evenly spaced from -beta to
    beta (periodic: the first M of M + 1), I0 the modified Bessel function of order 0."""
    options = _options(_checked_dtype("kaiser", M, dtype, layout), layout, device, requires_grad)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if (short := _short(M, options)) is not None:
        return short
    # In the window's dtype, so the last point can't pass beta by a rounding (sqrt of < 0 is nan)
    beta = tensor(beta, dtype=options["dtype"], device=device)
    step = 2.0 * beta / (M if not sym else M - 1)
    k = _grid(-beta, minimum(beta, -beta + (M - 1) * step), M, options)
    return (beta * beta - k.pow(2)).sqrt().i0() / beta.i0()


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided,  # noqa: N803
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Hamming window: 0.54 - 0.46 cos(2 pi n / (M - 1)) for n = 0 .. M-1."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided,  # noqa: N803
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Hann window: 0.5 - 0.5 cos(2 pi n / (M - 1)) for n = 0 .. M-1."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided,  # noqa: N803
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    dtype = _checked_dtype("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided,  # noqa: N803
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window: 1 - |2n / (M - 1) - 1| for n = 0 .. M-1."""
    options = _options(_checked_dtype("bartlett", M, dtype, layout), layout, device, requires_grad)
    if (short := _short(M, options)) is not None:
        return short
    step = 2 / (M if not sym else M - 1)
    return 1 - _grid(-1, -1 + (M - 1) * step, M, options).abs()


def general_cosine(M: int, *, a: Iterable[float], sym: bool = True, dtype: Any = None,  # noqa: N803
                   layout: Any = strided, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The generalised cosine window: sum over i of (-1)**i a[i] cos(2 pi i n / (M - 1)) for
    n = 0 .. M-1 (periodic: M in place of M - 1)."""
    options = _options(_checked_dtype("general_cosine", M, dtype, layout), layout, device, requires_grad)
    if (short := _short(M, options)) is not None:
        return short
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = _grid(0, (M - 1) * step, M, options)
    signed = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=options["dtype"], device=device,
                    requires_grad=requires_grad)
    i = arange(signed.shape[0], dtype=signed.dtype, device=device, requires_grad=requires_grad)
    # One row per term: coefficient i times cos(i k), summed over the terms
    return (signed.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None,  # noqa: N803
                    layout: Any = strided, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The generalised Hamming window: alpha - (1 - alpha) cos(2 pi n / (M - 1)) for n = 0 .. M-1."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided,  # noqa: N803
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall: a general cosine window with
    a = (0.3635819, 0.4891775, 0.1365995, 0.0106411)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad)
