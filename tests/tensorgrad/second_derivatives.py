"""The second-derivative oracle the double-backward tests share: the same expression in
tensorgrad and in PyTorch, differentiated twice with random weights, compared as arrays."""

from __future__ import annotations

import numpy as np


def second_derivatives(m, f, xs, seed: int = 1) -> list[np.ndarray]:
    """In module m (tensorgrad or torch): the gradients of <d <f(xs), v> / d xs, w> with respect to
    the xs that require grad and to v, for random v and w (zeros where there is none). They cover
    every second derivative: through the inputs, and through the output weights the first
    gradient is linear in."""
    rng = np.random.default_rng(seed)
    out = f(*xs)
    v = m.tensor(rng.standard_normal(tuple(out.shape)), dtype=m.float64, requires_grad=True)
    wanted = [x for x in xs if x.requires_grad]
    grads = m.autograd.grad((out * v).sum(), wanted, create_graph=True)
    total = sum((g * m.tensor(rng.standard_normal(tuple(g.shape)), dtype=m.float64)).sum() for g in grads)
    found = m.autograd.grad(total, [*wanted, v], allow_unused=True, materialize_grads=True)
    return [g.data if hasattr(g, "_data") else g.detach().numpy(force=True) for g in found]
