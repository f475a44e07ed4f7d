"""How fast a step through a gradient is: WGAN-GP's gradient penalty, next to PyTorch's in the same run.

One step is what training a critic on the penalty costs: the critic's forward, the slope of its
output with respect to the points (`autograd.grad(..., create_graph=True)`, the pass that records
the gradient), the penalty mean((|slope| - 1)^2), and its backward to the weights, through the
recorded gradient. The critic is an MLP (2 -> hidden -> hidden -> 1, tanh), float32, with the same
weights in both libraries; before timing, the penalties and the weights' gradients are checked
against each other.

    python benchmarks/gradient_penalty.py             # the figures (a few seconds)
    python benchmarks/gradient_penalty.py --quick     # a smoke run (seconds)
    python benchmarks/gradient_penalty.py --threads 1
"""

from __future__ import annotations

from collections.abc import Callable

import _common  # puts the checkout on sys.path, so the imports below work uninstalled
import numpy as np
from _common import interleaved, local_block, paired_ratio, print_table, ratio

import tensorgrad as tg

try:
    import torch
except ImportError:
    torch = None

# (batch of points, hidden width)
SIZES = ((64, 32), (256, 64), (1024, 256))


def make_arrays(batch: int, hidden: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The points and the critic's weights (PyTorch's layout: out x in), float32."""
    rng = np.random.default_rng(seed)

    def layer(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
        bound = 1 / np.sqrt(n_in)
        return (rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32),
                rng.uniform(-bound, bound, n_out).astype(np.float32))

    arrays = {"points": rng.standard_normal((batch, 2), dtype=np.float32)}
    for i, (n_in, n_out) in enumerate(((2, hidden), (hidden, hidden), (hidden, 1))):
        arrays[f"w{i}"], arrays[f"b{i}"] = layer(n_in, n_out)
    return arrays


def penalty_step(lib, arrays: dict[str, np.ndarray]) -> tuple[Callable[[], object], list]:
    """A no-argument penalty step of `lib` (tensorgrad or torch), and the critic's weights."""
    weights = [lib.tensor(arrays[k], requires_grad=True) for k in ("w0", "b0", "w1", "b1", "w2", "b2")]
    points = lib.tensor(arrays["points"])
    linear = lib.nn.functional.linear

    def critic(x):
        h = linear(x, weights[0], weights[1]).tanh()
        h = linear(h, weights[2], weights[3]).tanh()
        return linear(h, weights[4], weights[5])

    def step():
        for w in weights:
            w.grad = None
        x = points.detach().requires_grad_()
        (slope,) = lib.autograd.grad(critic(x).sum(), x, create_graph=True)
        penalty = ((slope.pow(2).sum(dim=1).sqrt() - 1) ** 2).mean()
        penalty.backward()
        return penalty

    return step, weights


def check(arrays: dict[str, np.ndarray]) -> None:
    """tensorgrad's penalty and weight gradients equal PyTorch's (float32 rounding apart)."""
    ours, our_weights = penalty_step(tg, arrays)
    theirs, their_weights = penalty_step(torch, arrays)
    np.testing.assert_allclose(ours().item(), theirs().item(), rtol=1e-4)
    for i, (a, b) in enumerate(zip(our_weights, their_weights, strict=True)):
        if b.grad is None:  # the last bias: the slope does not depend on it
            assert a.grad is None or not np.any(a.grad), f"gradient of weight {i}"
            continue
        scale = np.abs(b.grad.numpy()).max()
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=1e-3, atol=1e-4 * scale,
                                   err_msg=f"gradient of weight {i}")


def main(argv: list[str] | None = None) -> None:
    """Time every size and print one table."""
    args, use_torch, repeats = _common.against_torch_arguments(__doc__, "gradient penalty step", argv, torch)

    rows = []
    for batch, hidden in SIZES[:1] if args.quick else SIZES:
        arrays = make_arrays(batch, hidden)
        candidates = {"tensorgrad": local_block(penalty_step(tg, arrays)[0])}
        if use_torch:
            check(arrays)
            candidates["torch"] = local_block(penalty_step(torch, arrays)[0])
        number = 2 if args.quick else max(2, int(2e6 // (batch * hidden * hidden)))  # ~10 ms a block
        result = interleaved(candidates, repeats=repeats, number=number)
        ms = {k: v["seconds"] * 1e3 for k, v in result.items()}
        rows.append([f"{batch} points, 2-{hidden}-{hidden}-1", ms["tensorgrad"], ms.get("torch"),
                     ratio(paired_ratio(result, "tensorgrad", "torch")),
                     f"{result['tensorgrad']['spread']:.0%}"])
    print_table("WGAN-GP gradient penalty step, float32: forward, recorded slope, penalty, backward (ms)",
                ["critic", "tensorgrad", "torch", "tensorgrad / torch", "spread"], rows,
                notes=[f"Median of {repeats} interleaved rounds; the ratio is the median of the per-round "
                       "ratios. Spread: interquartile range of tensorgrad's rounds over its median."
                       + ("" if use_torch else " PyTorch not timed.")])
    if use_torch:
        print("\nChecked before timing: tensorgrad's penalty and weight gradients equal PyTorch's.")


if __name__ == "__main__":
    main()
