"""How fast tensorgrad's conv2d is, forward and backward, next to PyTorch's in the same run.

tensorgrad computes a convolution as im2col (a strided window view, copied once into a
matrix) and one BLAS matmul; its backward is two more matmuls and a fold (kh*kw strided adds).
PyTorch calls a tuned convolution library (oneDNN). For each size below, one timed call is
`conv2d(x, w, b, padding=1)` then `backward` of a fixed output gradient (the gradients of x, w
and b), float32. Also timed, as a floor: the three bare BLAS matmuls of the same shapes
(forward, weight gradient, input gradient) on ready-made matrices. Before timing, both
libraries' outputs and gradients are checked against each other. Last column: tensorgrad's
peak memory over one forward + backward, as a multiple of the im2col matrix it must build.

Sizes: the two convolutions of `examples/digits_cnn.py` at its batch of 32, and a batch of
64 images of 16 x 32 x 32 through 32 3 x 3 filters.

    python benchmarks/conv.py                 # the figures (about a minute on 2 cores)
    python benchmarks/conv.py --quick         # a smoke run (seconds; the digits sizes only)
    python benchmarks/conv.py --repeats 40 --threads 1
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import _common  # puts the checkout on sys.path, so the imports below work uninstalled
import numpy as np
from _common import interleaved, local_block, paired_ratio, print_table, ratio

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling

try:
    import torch
    import torch.nn.functional as torch_F  # noqa: N812
except ImportError:
    torch = None

# (name, input shape N C H W, output channels); every kernel is 3 x 3 with padding 1.
SIZES = (
    ("digits_cnn conv1", (32, 1, 8, 8), 32),
    ("digits_cnn conv2", (32, 32, 4, 4), 64),
    ("64 x 16 x 32 x 32", (64, 16, 32, 32), 32),
)


def make_arrays(shape: tuple[int, ...], out_channels: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Input, weight, bias and output gradient, float32."""
    rng = np.random.default_rng(seed)
    n, c, h, w = shape
    return {"x": rng.standard_normal(shape, dtype=np.float32),
            "w": (rng.standard_normal((out_channels, c, 3, 3)) / np.sqrt(c * 9)).astype(np.float32),
            "b": rng.standard_normal(out_channels, dtype=np.float32),
            "grad": rng.standard_normal((n, out_channels, h, w), dtype=np.float32)}


def conv_call(lib, functional, arrays: dict[str, np.ndarray]) -> tuple[Callable[[], object], list]:
    """A no-argument forward + backward of `lib` (tensorgrad or torch), and its leaf tensors."""
    x, w, b = (lib.tensor(arrays[k], requires_grad=True) for k in ("x", "w", "b"))
    grad = lib.tensor(arrays["grad"])

    def call():
        for t in (x, w, b):
            t.grad = None
        out = functional.conv2d(x, w, b, padding=1)
        out.backward(grad)
        return out

    return call, [x, w, b]


def blas_floor(arrays: dict[str, np.ndarray]) -> Callable[[], object]:
    """The three matmuls of a convolution's forward and backward, on ready-made matrices."""
    n, c, h, w = arrays["x"].shape
    o = arrays["w"].shape[0]
    cols = np.ascontiguousarray(np.broadcast_to(arrays["x"].reshape(c, 1, n * h * w), (c, 9, n * h * w)))
    cols = cols.reshape(c * 9, n * h * w)
    weight = arrays["w"].reshape(o, c * 9)
    grad = np.ascontiguousarray(arrays["grad"].transpose(1, 0, 2, 3)).reshape(o, n * h * w)

    def call():
        weight @ cols
        grad @ cols.T
        return weight.T @ grad

    return call


def peak_megabytes(call: Callable[[], object]) -> float:
    """The most memory (MB) numpy held at once during `call`, beyond what was held before it."""
    call()  # warm: first-call allocations are not the steady state
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def im2col_megabytes(shape: tuple[int, ...]) -> float:
    """The size of a 3 x 3, padding 1 convolution's im2col matrix, float32, in MB."""
    n, c, h, w = shape
    return n * c * 9 * h * w * 4 / 2**20


def check(arrays: dict[str, np.ndarray]) -> None:
    """tensorgrad's output and three gradients equal PyTorch's (float32 rounding apart)."""
    ours, our_leaves = conv_call(tg, F, arrays)
    theirs, their_leaves = conv_call(torch, torch_F, arrays)
    out, expected = ours(), theirs()
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-4, atol=1e-4)
    for name, a, b in zip("xwb", our_leaves, their_leaves, strict=True):
        # A weight gradient sums N*H*W float32 products: compare on the scale of the largest.
        scale = np.abs(b.grad.numpy()).max()
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=f"grad of {name}")


def main(argv: list[str] | None = None) -> None:
    """Time every size and print one table."""
    args, use_torch, repeats = _common.against_torch_arguments(__doc__, "conv2d forward + backward", argv,
                                                               torch)

    rows = []
    for name, shape, out_channels in SIZES[:2] if args.quick else SIZES:
        arrays = make_arrays(shape, out_channels)
        candidates = {"tensorgrad": local_block(conv_call(tg, F, arrays)[0]),
                      "BLAS floor": local_block(blas_floor(arrays))}
        if use_torch:
            check(arrays)
            candidates["torch"] = local_block(conv_call(torch, torch_F, arrays)[0])
        number = 1 if args.quick else max(1, int(2e7 // (np.prod(shape) * out_channels * 9)))  # ~10 ms
        result = interleaved(candidates, repeats=repeats, number=number)
        ms = {k: v["seconds"] * 1e3 for k, v in result.items()}
        peak = peak_megabytes(conv_call(tg, F, arrays)[0])
        rows.append([name, f"{shape} -> {out_channels}", ms["tensorgrad"], ms.get("torch"),
                     ratio(paired_ratio(result, "tensorgrad", "torch")), ms["BLAS floor"],
                     f"{result['tensorgrad']['spread']:.0%}", f"{peak / im2col_megabytes(shape):.2f}x"])
    print_table("conv2d forward + backward, float32, 3 x 3 kernel, padding 1 (ms per call)",
                ["size", "input -> filters", "tensorgrad", "torch", "tensorgrad / torch", "BLAS floor",
                 "spread", "peak memory / im2col"], rows,
                notes=[f"Median of {repeats} interleaved rounds; the ratio is the median of the per-round "
                       "ratios. BLAS floor: the three bare matmuls, no im2col and no fold. Spread: "
                       "interquartile range of tensorgrad's rounds over its median. Peak memory: the most "
                       "that tensorgrad's forward + backward holds at once (tracemalloc), over the size of "
                       "its im2col matrix (C*9 x N*H*W floats)."
                       + ("" if use_torch else " PyTorch not timed.")])
    if use_torch:
        print("\nChecked before timing: tensorgrad's conv2d output and gradients equal PyTorch's.")


if __name__ == "__main__":
    main()
