"""`gradcheck`: compare backward's gradients with finite differences (tutorial chapter 12).

For a function f of tensors, backward computes the vector-Jacobian product u^T J for an output
weighting u. Finite differences give J v for any direction v, at the price of two forward
passes: (f(x + eps v) - f(x - eps v)) / (2 eps). Both sides of u^T J v must agree. Checking a
few random directions per input catches a wrong formula in any element, cheaply; for small
inputs, `elementwise=True` also checks every element on its own, which names the bad one.

The inputs may live on a GPU: the probes and weights are drawn on the host and moved there, and
the numbers compared come back to the host.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from scalargrad.engine import enable_grad, no_grad
from tensorgrad.device import array_like, to_numpy
from tensorgrad.movement import cat
from tensorgrad.tensor import Tensor, new_leaf


class GradcheckError(AssertionError):
    """Backward's gradient and the finite-difference estimate disagree."""


def gradcheck(func: Callable[..., Tensor], inputs: Sequence[Tensor], eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-4, directions: int = 3, elementwise: bool = False,
              seed: int = 0) -> bool:
    """Check func's gradients with respect to every input that requires grad.

    The inputs should be float64 (float32's rounding swamps eps). Returns True, or raises
    `GradcheckError` naming the input and both numbers.

    >>> import tensorgrad as tg
    >>> x = tg.tensor([0.5, -1.5], dtype=tg.float64, requires_grad=True)
    >>> tg.gradcheck(lambda t: (t * t).tanh(), [x])
    True
    """
    inputs = list(inputs)
    for i, t in enumerate(inputs):
        if t.requires_grad and t.dtype != np.float64:
            raise TypeError(f"gradcheck: input {i} has dtype {t.dtype}; use float64 inputs")
    rng = np.random.default_rng(seed)
    weights, analytic = _backward_gradients(func, inputs, rng)

    def weighted_output() -> float:
        with no_grad():
            return float(np.sum(np.asarray(to_numpy(func(*inputs).data), dtype=np.float64) * weights))

    for i, t in enumerate(inputs):
        if not t.requires_grad:
            continue
        probes = [rng.standard_normal(t.shape) for _ in range(directions)]
        if elementwise:
            probes += list(np.eye(t.data.size).reshape((t.data.size,) + t.shape))
        for direction in probes:
            numeric = _directional_derivative(weighted_output, t, direction, eps)
            expected = float(np.sum(analytic[i] * direction))
            if not abs(numeric - expected) <= atol + rtol * abs(numeric):
                raise GradcheckError(
                    f"gradcheck: input {i} (shape {t.shape}): backward gives {expected:.8g} along a "
                    f"direction where finite differences give {numeric:.8g}"
                )
    return True


def gradgradcheck(func: Callable[..., Tensor], inputs: Sequence[Tensor], grad_outputs: Tensor | None = None,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, directions: int = 3,
                  elementwise: bool = False, seed: int = 0) -> bool:
    """Check func's second derivatives: `gradcheck` of its gradient, computed with `create_graph=True`.

    The gradient is that of sum(func(*inputs) * grad_outputs) (random float64 weights unless
    given); it is checked with respect to the inputs and to grad_outputs, on which it depends
    linearly, as `torch.autograd.gradgradcheck` does. An op's recorded gradient comes from
    formulas of its own (`graph_vjp`), so it is first compared with the usual pass's gradient:
    finite differences of a wrong first derivative would agree with its own derivative. Returns
    True or raises `GradcheckError`.

    >>> import tensorgrad as tg
    >>> x = tg.tensor([0.5, -1.5], dtype=tg.float64, requires_grad=True)
    >>> tg.gradgradcheck(lambda t: (t * t).tanh(), [x])
    True
    """
    from tensorgrad import autograd  # (autograd imports this module)

    inputs = list(inputs)
    with no_grad():
        shape = func(*inputs).shape
    if grad_outputs is None:
        grad_outputs = new_leaf(np.random.default_rng(seed + 1).standard_normal(shape))
    weights = grad_outputs.detach().requires_grad_()
    wanted = [i for i, t in enumerate(inputs) if t.requires_grad]

    def gradient(*args: Tensor) -> Tensor:
        *xs, u = args
        with enable_grad():  # (gradcheck's finite differences run under no_grad)
            out = func(*xs)
            grads = autograd.grad(out, [xs[i] for i in wanted], u, create_graph=True, allow_unused=True,
                                  materialize_grads=True)
        return cat([g.reshape(-1) for g in grads])

    _same_first_derivative(gradient(*inputs, weights), func, inputs, wanted, weights, atol, rtol)
    return gradcheck(gradient, [*inputs, weights], eps, atol, rtol, directions, elementwise, seed)


def _same_first_derivative(recorded: Tensor, func: Callable[..., Tensor], inputs: list[Tensor],
                           wanted: list[int], weights: Tensor, atol: float, rtol: float) -> None:
    """Raise unless the recorded gradient (flattened, inputs in order) equals the usual pass's."""
    from tensorgrad import autograd  # (autograd imports this module)

    with enable_grad():
        plain = autograd.grad(func(*inputs), [inputs[i] for i in wanted], weights.detach(), allow_unused=True,
                              materialize_grads=True)
    start = 0
    for i, g in zip(wanted, plain, strict=True):
        expected = np.asarray(to_numpy(g.data), dtype=np.float64).reshape(-1)
        found = np.asarray(to_numpy(recorded.data[start:start + expected.size]), dtype=np.float64)
        start += expected.size
        if not np.allclose(found, expected, atol=atol, rtol=rtol, equal_nan=True):
            worst = int(np.argmax(np.abs(found - expected)))
            raise GradcheckError(f"gradgradcheck: input {i} (shape {inputs[i].shape}): the gradient recorded "
                                 f"with create_graph=True gives {found[worst]:.8g} at element {worst}, where "
                                 f"backward gives {expected[worst]:.8g}")


def _backward_gradients(func: Callable[..., Tensor], inputs: list[Tensor],
                        rng: np.random.Generator) -> tuple[np.ndarray, list[np.ndarray]]:
    """Run backward once with a random output weighting; return it and each input's gradient."""
    saved = [t.grad for t in inputs]
    for t in inputs:
        t.grad = None
    out = func(*inputs)
    weights = rng.standard_normal(out.shape)
    if out.requires_grad:
        out.backward(array_like(weights, out.data))
    grads = [np.zeros(t.shape) if t.grad is None else np.asarray(to_numpy(t.grad), dtype=np.float64)
             for t in inputs]
    for t, g in zip(inputs, saved, strict=True):
        t.grad = g
    return weights, grads


def _directional_derivative(f: Callable[[], float], t: Tensor, direction: np.ndarray, eps: float) -> float:
    """(f(t + eps d) - f(t - eps d)) / (2 eps), changing t's data in place and restoring it."""
    original = t.data.copy()
    step = eps * array_like(direction, original)
    try:
        t.data[...] = original + step
        plus = f()
        t.data[...] = original - step
        minus = f()
    finally:
        t.data[...] = original
    return (plus - minus) / (2 * eps)
