"""Spatial transformers: sampling grids from affine maps, and an image read at a grid (tutorial chapter 10).

`affine_grid(theta, size)` maps every output pixel's normalised coordinates (-1 at one edge, 1
at the other) through a batch of affine matrices; `grid_sample(input, grid)` reads the input at
those fractional places, blending the four pixels around each ('bilinear') or taking the
nearest one. Together they are PyTorch's spatial transformer: both are differentiable, so the
matrices that make the grid can be learned. grid_sample's gradient reaches the input (each
output's gradient scatter-added onto the pixels it blended, by the same weights) and the grid
(the slope of the blend between neighbouring pixels). For 'bilinear' and 'nearest' both are
also written with tensor ops, so they differentiate again ('bicubic': differentiable once).

On a GPU the same lines run on CuPy arrays: the base grid of `affine_grid` is made on the host
and copied to theta's device; every other array comes from the input's and the grid's.
"""

from __future__ import annotations

import functools
import itertools
import operator
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record
from tensorgrad.checks import user_stacklevel
from tensorgrad.device import namespace, ufunc_at
from tensorgrad.matmul import matmul
from tensorgrad.movement import stack
from tensorgrad.nn.conv import _CUBIC_A, _keys_cubic
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                          "align_corners=False since 1.3.0 (as in PyTorch). Please specify "
                          "align_corners=True if the old behavior is desired.")


def _linspace(steps: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """The normalised coordinates of `steps` pixels: -1 .. 1 at their centres with align_corners,
    else scaled by (steps - 1) / steps so that -1 and 1 are the image's outer edges; 0 for one pixel."""
    if steps <= 1:
        return np.zeros(steps, dtype=dtype)
    line = np.linspace(-1, 1, steps, dtype=dtype)
    return line if align_corners else line * dtype.type(steps - 1) / dtype.type(steps)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """grid[n, y, x] = theta[n] @ (x', y', 1): each output pixel's normalised coordinates (x', y')
    mapped by its batch entry's affine matrix; theta (N, 2, 3) for size (N, C, H, W) gives a grid
    (N, H, W, 2), theta (N, 3, 4) for (N, C, D, H, W) a grid (N, D, H, W, 3), coordinates in
    (x, y[, z]) order. Gradient: to theta, through one matmul with the fixed base grid.
    """
    op = "affine_grid"
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=user_stacklevel())
        align_corners = False
    if theta.dtype.kind != "f":
        raise ValueError(f"{op}: expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"{op} only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {list(size)}.")
    rows = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (rows, rows + 1):
        raise ValueError(f"{op}: expected a batch of {rows}D affine matrices of shape Nx{rows}x{rows + 1} "
                         f"for size {list(size)}. Got {tuple(theta.shape)}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(f"{op}: since version 1.3.0 of PyTorch, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case.",
                      stacklevel=user_stacklevel())
    elif min(size) <= 0:
        raise ValueError(f"{op}: expected non-zero, positive output size. Got {list(size)}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"{op}: theta of shape {tuple(theta.shape)} has {theta.shape[0]} matrices, but "
                           f"size {list(size)} asks for a batch of {size[0]}")
    # The base grid (x', y'[, z'], 1) of every output pixel, x' varying fastest (PyTorch's layout).
    lines = [_linspace(s, align_corners, theta.dtype) for s in spatial]  # z', y', x' (or y', x')
    mesh = np.meshgrid(*lines, indexing="ij")
    base = np.stack([*mesh[::-1], np.ones(spatial, dtype=theta.dtype)], axis=-1).reshape(-1, rows + 1)
    base = new_leaf(namespace(theta.data).asarray(base))  # made on the host, used where theta lives
    return matmul(base, theta.transpose(1, 2)).reshape(size[0], *spatial, rows)


# --- grid_sample ----------------------------------------------------------------------------------


_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")


def _unnormalize(coord: np.ndarray, size: int, align_corners: bool) -> tuple[np.ndarray, float]:
    """The pixel coordinate that normalised `coord` names along a dimension of `size` pixels, and
    d pixel / d coord: -1 and 1 are the centres of the end pixels with align_corners, else the
    outer edges of the image."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _reflect(pixel: np.ndarray, twice_low: int, twice_high: int) -> tuple[np.ndarray, np.ndarray]:
    """pixel folded into [twice_low / 2, twice_high / 2] by reflecting off its ends, and the
    derivative of the fold (1 or -1: each reflection flips the direction)."""
    if twice_low == twice_high:  # a single pixel with align_corners: everything lands on it
        return np.zeros_like(pixel), np.zeros_like(pixel)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = pixel - low
    one = np.ones_like(pixel)
    sign = np.where(shifted < 0, -one, one)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    even = np.floor(shifted / span) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _padded(pixel: np.ndarray, size: int, padding_mode: str,
            align_corners: bool) -> tuple[np.ndarray, np.ndarray | float]:
    """pixel moved into the image by the padding mode ('zeros' leaves it; 'border' clips it;
    'reflection' reflects, then clips), and the derivative of the move. The clip's derivative is
    0 at and beyond the edges: PyTorch counts the edges as outside."""
    if padding_mode == "zeros":
        return pixel, 1.0
    flip = 1.0
    if padding_mode == "reflection":
        ends = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)  # twice the reflecting ends
        pixel, flip = _reflect(pixel, *ends)
    return np.clip(pixel, 0, size - 1), flip * ((pixel > 0) & (pixel < size - 1))


def _taps(pixel: np.ndarray, size: int, mode: str, padding_mode: str,
          align_corners: bool) -> tuple[list[tuple[np.ndarray, np.ndarray, Any]], Any]:
    """Along one dimension: the pixels an output reads, each as (position, weight, d weight / d pixel),
    and d pixel / d place where the padding mode moved the place (1 if not).

    'nearest': the nearest pixel (halves to even), weight 1. 'bilinear': the two pixels around,
    weights 1 - t and t. 'bicubic': four pixels around, Keys' cubic weights (a = -0.75); there
    the padding mode moves each pixel read rather than the place, as PyTorch does.
    """
    if mode == "bicubic":
        low = np.floor(pixel)
        t = pixel - low
        taps = []
        for k, (distance, side) in enumerate(((t + 1, 1), (t, 1), (1 - t, -1), (2 - t, -1))):
            position, _ = _padded(low - 1 + k, size, padding_mode, align_corners)
            taps.append((position, _keys_cubic(distance), side * _keys_cubic_slope(distance)))
        return taps, 1.0
    pixel, slope = _padded(pixel, size, padding_mode, align_corners)
    if mode == "nearest":
        return [(np.rint(pixel), np.ones_like(pixel), 0.0)], slope
    low = np.floor(pixel)
    return [(low, low + 1 - pixel, -1.0), (low + 1, pixel - low, 1.0)], slope


def _keys_cubic_slope(distance: np.ndarray) -> np.ndarray:
    """The derivative of `_keys_cubic` (the cubic convolution kernel) at 0 <= distance <= 2."""
    a = distance.dtype.type(_CUBIC_A)
    inside = (3 * (a + 2) * distance - 2 * (a + 3)) * distance
    outside = (3 * a * distance - 10 * a) * distance + 8 * a
    return np.where(distance <= 1, inside, outside)


def _read(channels_last: np.ndarray, batch: np.ndarray,
          positions: list[np.ndarray]) -> tuple[np.ndarray, tuple[np.ndarray, ...], np.ndarray]:
    """The pixels at integer-valued positions (one array per spatial dimension) as (N, *out, C),
    0 outside the image; also the index that reads them and the inside mask, for the scatter back."""
    sizes = channels_last.shape[1:-1]
    within = [(p >= 0) & (p < size) for p, size in zip(positions, sizes, strict=True)]
    inside = functools.reduce(np.logical_and, within)
    index = (batch, *(np.where(inside, p, 0).astype(np.int64) for p in positions))  # nan: outside, too
    return np.where(inside[..., None], channels_last[index], 0), index, inside


@autocast_op("grid_sample")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:
    """out[n, :, i, j] = input[n] read at the place grid[n, i, j] = (x, y), in normalised
    coordinates: -1 .. 1 across the width and the height (see `_unnormalize`).

    input (N, C, H, W) with grid (N, Ho, Wo, 2), or input (N, C, D, H, W) with grid (N, Do, Ho,
    Wo, 3) holding (x, y, z); out (N, C, *grid's middle). 'bilinear' blends the 2 (per dimension)
    pixels around the place with weights 1 - t and t (trilinearly for 5-D input); 'nearest'
    takes the nearest pixel; 'bicubic' (4-D input) blends 4 x 4 pixels with Keys' cubic.
    padding_mode 'zeros' reads 0 outside the image, 'border' the nearest edge pixel, 'reflection'
    the image mirrored at its edges. Gradients: to input, each output's gradient times the blend
    weights, scatter-added onto the pixels read; to grid, the blend's slope along each dimension
    times the coordinate map's (0 for 'nearest').
    """
    op = "grid_sample"
    if mode not in _MODES:
        raise ValueError(f"nn.functional.{op}(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"nn.functional.{op}(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=user_stacklevel())
        align_corners = False
    _check_sample_inputs(input, grid, mode, op)
    if input.dtype == np.float16:  # in float32: past 256, float16 places a pixel to a quarter only
        return grid_sample(input.float(), grid.float(), mode, padding_mode, align_corners).half()
    x, g = input.data, grid.data
    n, c, sizes = x.shape[0], x.shape[1], x.shape[2:]
    dims = len(sizes)
    # Per spatial dimension of the input (D, H, W order): the grid lists the places as (x, y[, z]).
    per_dim = []
    for k, size in enumerate(sizes):
        pixel, scale = _unnormalize(g[..., dims - 1 - k], size, align_corners)
        taps, slope = _taps(pixel, size, mode, padding_mode, align_corners)
        per_dim.append((taps, slope * scale))
    channels_last = np.moveaxis(x, 1, -1)  # (N, *S, C): a pixel's channels read together
    batch = namespace(x).arange(n).reshape(n, *(1,) * dims)
    reads = []  # per combination of one tap in each dimension: its pixels, their weight, its taps
    for combination in itertools.product(*(taps for taps, _ in per_dim)):
        value, index, inside = _read(channels_last, batch, [position for position, _, _ in combination])
        weight = functools.reduce(operator.mul, [w for _, w, _ in combination])
        reads.append((value, index, inside, weight, combination))
    out = sum(value * weight[..., None] for value, _, _, weight, _ in reads)
    out = namespace(x).ascontiguousarray(np.moveaxis(out, -1, 1))

    def vjp_input(grad: np.ndarray) -> np.ndarray:
        grad_last = np.moveaxis(grad, 1, -1)
        grad_input = namespace(grad).zeros((n, *sizes, c), dtype=grad.dtype)
        for _, index, inside, weight, _ in reads:
            ufunc_at(np.add, grad_input, index, grad_last * (weight * inside)[..., None])
        return np.moveaxis(grad_input, -1, 1)

    def vjp_grid(grad: np.ndarray) -> np.ndarray:
        if mode == "nearest":
            return np.zeros_like(g)
        grad_last = np.moveaxis(grad, 1, -1)
        along = [np.zeros_like(g[..., 0]) for _ in range(dims)]  # d loss / d pixel, per dimension
        for value, _, _, _, combination in reads:
            seen = (value * grad_last).sum(-1)
            for k in range(dims):  # this tap's weight differentiated in dimension k, the others as they are
                factors = [slope if j == k else w for j, (_, w, slope) in enumerate(combination)]
                along[k] = along[k] + seen * functools.reduce(operator.mul, factors)
        return np.stack([along[k] * per_dim[k][1] for k in reversed(range(dims))], axis=-1)

    graph = None if mode == "bicubic" else partial(_grid_sample_graph, mode, padding_mode, align_corners)
    return record(out, op, (input, grid), vjp_input, vjp_grid, graph_vjp=graph)


def _grid_sample_graph(mode: str, padding_mode: str, align_corners: bool, grad: Tensor, out: Tensor,
                       input: Tensor, grid: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    """grid_sample's VJPs with tensor ops ('bilinear', 'nearest'). The taps are found again from the
    grid's values; each weight is written as a tensor of the grid, its value plus its slope times
    (grid - the grid's value), so that it has the same value and the same piecewise-linear
    derivatives. The pixels read are an indexing of the input, the input's gradient an index_put
    that adds up, both with gradients of their own."""
    x, g = input.data, grid.data
    n, sizes = x.shape[0], x.shape[2:]
    dims = len(sizes)
    per_dim = []  # per spatial dimension (D, H, W): [(position, weight tensor, its slope)], d pixel / d place
    for k, size in enumerate(sizes):
        pixel, scale = _unnormalize(g[..., dims - 1 - k], size, align_corners)
        taps, slope = _taps(pixel, size, mode, padding_mode, align_corners)
        moved = (grid[..., dims - 1 - k] - new_leaf(g[..., dims - 1 - k])) * new_leaf(
            namespace(g).asarray(slope * scale, dtype=g.dtype))  # 0, with the pixel's derivative
        if mode == "bilinear":
            taps = [(position, new_leaf(w) + w_slope * moved, w_slope) for position, w, w_slope in taps]
        else:  # 'nearest': weight 1, whatever the grid
            taps = [(position, new_leaf(w), w_slope) for position, w, w_slope in taps]
        per_dim.append((taps, slope * scale))
    channels_last, grad_last = input.movedim(1, -1), grad.movedim(1, -1)
    grad_input = new_leaf(namespace(x).zeros(channels_last.shape, dtype=grad.dtype))
    batch = namespace(x).arange(n).reshape(n, *(1,) * dims)
    along: list[Any] = [0] * dims  # d loss / d pixel, per dimension
    for combination in itertools.product(*(taps for taps, _ in per_dim)):
        _, index, inside = _read(np.moveaxis(x, 1, -1), batch, [p for p, _, _ in combination])
        inside = new_leaf(inside.astype(g.dtype))
        weight = functools.reduce(operator.mul, [w for _, w, _ in combination])
        grad_input = grad_input.index_put(tuple(new_leaf(i) for i in index),
                                          grad_last * (weight * inside).unsqueeze(-1), accumulate=True)
        if mode == "bilinear":
            seen = (channels_last[index] * grad_last).sum(-1) * inside
            for k in range(dims):  # this tap's weight differentiated in dimension k
                factors = [slope if j == k else w for j, (_, w, slope) in enumerate(combination)]
                along[k] = along[k] + seen * functools.reduce(operator.mul, factors)
    if mode == "nearest":
        grad_grid = new_leaf(namespace(g).zeros_like(g))
    else:
        scales = [new_leaf(namespace(g).asarray(scale, dtype=g.dtype)) for _, scale in per_dim]
        grad_grid = stack([along[k] * scales[k] for k in reversed(range(dims))], -1)
    return grad_input.movedim(-1, 1), grad_grid


def _check_sample_inputs(input: Tensor, grid: Tensor, mode: str, op: str) -> None:  # noqa: A002
    """PyTorch's checks on grid_sample's shapes and dtypes, with its exception type."""
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"{op}: expected 4D or 5D input and grid with same number of dimensions, but got "
                           f"input of shape {tuple(input.shape)} and grid of shape {tuple(grid.shape)}")
    if mode == "bicubic" and input.ndim == 5:
        raise RuntimeError(f"{op}: bicubic interpolation only supports 4D input, got input of shape "
                           f"{tuple(input.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"{op}: expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid of shape {tuple(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"{op}: expected grid and input to have same batch size, but got input of shape "
                           f"{tuple(input.shape)} and grid of shape {tuple(grid.shape)}")
    if input.dtype.kind != "f" or input.dtype != grid.dtype:
        raise RuntimeError(f"{op}: expected input and grid to have the same floating dtype, but got input "
                           f"{input.dtype} and grid {grid.dtype}")
    if 0 in input.shape[2:]:
        raise RuntimeError(f"{op}: expected input to have non-empty spatial dimensions, but got input of "
                           f"shape {tuple(input.shape)}")
