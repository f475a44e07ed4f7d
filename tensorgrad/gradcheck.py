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

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from scalargrad.engine import enable_grad, no_grad
from tensorgrad.device import array_like, to_numpy
from tensorgrad.tensor import Tensor, new_leaf


class GradcheckError(RuntimeError, AssertionError):
    """Backward's gradient and the finite-difference estimate disagree (PyTorch's RuntimeError; an
    AssertionError too, as a failed check)."""


# PyTorch's gradcheck options that change nothing here: tensorgrad's backward is deterministic
# (`nondet_tol`), the random directions are already PyTorch's `fast_mode`, and the other checks are
# of features tensorgrad has not (batched gradients, dtype-changing gradients, undefined gradients).
_ACCEPTED_OPTIONS = frozenset({
    "nondet_tol", "check_undefined_grad", "check_grad_dtypes", "check_batched_grad", "check_backward_ad",
    "fast_mode", "masked", "gen_non_contig_grad_outputs", "check_rev_over_rev",
})
# Forward-mode AD, which tensorgrad has not: asking for its check is an error, not a silent pass.
_FORWARD_OPTIONS = frozenset({"check_forward_ad", "check_batched_forward_grad", "check_fwd_over_rev"})


def _checked_options(caller: str, options: dict) -> None:
    for name, value in options.items():
        if name in _FORWARD_OPTIONS:
            if value:
                raise NotImplementedError(f"{caller}: {name}=True needs forward-mode AD, which tensorgrad "
                                          "does not have")
        elif name not in _ACCEPTED_OPTIONS:
            raise TypeError(f"{caller}() got an unexpected keyword argument '{name}'")


def _outputs(func: Callable[..., Any], inputs: list[Tensor]) -> list[Tensor]:
    """func's result as a list of tensors (PyTorch's gradcheck takes a tensor or a tuple of them)."""
    out = func(*inputs)
    return [out] if isinstance(out, Tensor) else [o for o in out if isinstance(o, Tensor)]


def gradcheck(func: Callable[..., Any], inputs: Sequence[Tensor] | Tensor, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-4, directions: int = 3, elementwise: bool = False,
              seed: int = 0, *, raise_exception: bool = True, **options: Any) -> bool:
    """Check func's gradients (func returns a tensor or a tuple of them) with respect to every input
    that requires grad.

    The inputs should be float64 (float32's rounding swamps eps; PyTorch warns about it too).
    Returns True, or raises `GradcheckError` naming the input and both numbers (returns False
    instead with `raise_exception=False`). PyTorch's other options are accepted; see
    `_ACCEPTED_OPTIONS`.

    >>> import tensorgrad as tg
    >>> x = tg.tensor([0.5, -1.5], dtype=tg.float64, requires_grad=True)
    >>> tg.gradcheck(lambda t: (t * t).tanh(), [x])
    True
    """
    _checked_options("gradcheck", options)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of "
                         "them have requires_grad=True.")
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad and t.dtype not in (np.float64, np.complex128):
            warnings.warn(f"gradcheck: input {i} requires gradient and is not a double precision floating "
                          f"point or complex ({t.dtype}): the check is likely to fail; use float64 inputs",
                          stacklevel=2)
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, directions, elementwise, seed)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func: Callable[..., Any], inputs: list[Tensor], eps: float, atol: float, rtol: float,
               directions: int, elementwise: bool, seed: int) -> bool:
    rng = np.random.default_rng(seed)
    weights, analytic = _backward_gradients(func, inputs, rng)

    def weighted_output() -> float:
        with no_grad():
            return float(sum(_real_dot(w, to_numpy(o.data))
                             for o, w in zip(_outputs(func, inputs), weights, strict=True)))

    for i, t in enumerate(inputs):
        if not (isinstance(t, Tensor) and t.requires_grad):
            continue
        probes = [_random(rng, t) for _ in range(directions)]
        if elementwise:
            probes += list(np.eye(t.data.size).reshape((t.data.size,) + t.shape))
        for direction in probes:
            numeric = _directional_derivative(weighted_output, t, direction, eps)
            expected = _real_dot(analytic[i], direction)
            if not abs(numeric - expected) <= atol + rtol * abs(numeric):
                raise GradcheckError(
                    f"gradcheck: input {i} (shape {t.shape}): backward gives {expected:.8g} along a "
                    f"direction where finite differences give {numeric:.8g}"
                )
    return True


def gradgradcheck(func: Callable[..., Tensor], inputs: Sequence[Tensor] | Tensor,
                  grad_outputs: Tensor | None = None, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, directions: int = 3, elementwise: bool = False, seed: int = 0, *,
                  raise_exception: bool = True, **options: Any) -> bool:
    """Check func's second derivatives: `gradcheck` of its gradient, computed with `create_graph=True`.

    The gradient is that of sum(func(*inputs) * grad_outputs) (random float64 weights unless
    given, complex128 for a complex output); it is checked with respect to the inputs and to
    grad_outputs, on which it depends linearly, as `torch.autograd.gradgradcheck` does. Complex
    inputs and gradients are checked as pairs of reals, as `gradcheck` does. An op's recorded
    gradient comes from formulas of its own (`graph_vjp`), so it is first compared with the usual
    pass's gradient: finite differences of a wrong first derivative would agree with its own
    derivative. Returns True or raises `GradcheckError` (returns False instead with
    `raise_exception=False`).

    >>> import tensorgrad as tg
    >>> x = tg.tensor([0.5, -1.5], dtype=tg.float64, requires_grad=True)
    >>> tg.gradgradcheck(lambda t: (t * t).tanh(), [x])
    True
    """
    from tensorgrad import autograd  # (autograd imports this module)

    _checked_options("gradgradcheck", options)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None:
        with no_grad():
            out = func(*inputs)
        grad_outputs = new_leaf(_random(np.random.default_rng(seed + 1), out))
    elif not isinstance(grad_outputs, Tensor):  # PyTorch's form: a tuple, one per output
        (grad_outputs,) = grad_outputs
    weights = grad_outputs.detach().requires_grad_()
    wanted = [i for i, t in enumerate(inputs) if t.requires_grad]

    def gradient(*args: Tensor) -> tuple[Tensor, ...]:
        *xs, u = args
        with enable_grad():  # (gradcheck's finite differences run under no_grad)
            out = func(*xs)
            return autograd.grad(out, [xs[i] for i in wanted], u, create_graph=True, allow_unused=True,
                                 materialize_grads=True)

    try:
        _same_first_derivative(gradient(*inputs, weights), func, inputs, wanted, weights, atol, rtol)
        return _gradcheck(gradient, [*inputs, weights], eps, atol, rtol, directions, elementwise, seed)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _same_first_derivative(recorded: tuple[Tensor, ...], func: Callable[..., Tensor], inputs: list[Tensor],
                           wanted: list[int], weights: Tensor, atol: float, rtol: float) -> None:
    """Raise unless the recorded gradients (one per wanted input) equal the usual pass's."""
    from tensorgrad import autograd  # (autograd imports this module)

    with enable_grad():
        plain = autograd.grad(func(*inputs), [inputs[i] for i in wanted], weights.detach(), allow_unused=True,
                              materialize_grads=True)
    for i, g, r in zip(wanted, plain, recorded, strict=True):
        expected = np.asarray(to_numpy(g.data), dtype=_float64_of(g)).reshape(-1)
        found = np.asarray(to_numpy(r.data), dtype=_float64_of(r)).reshape(-1)
        if not np.allclose(found, expected, atol=atol, rtol=rtol, equal_nan=True):
            worst = int(np.argmax(np.abs(found - expected)))
            raise GradcheckError(f"gradgradcheck: input {i} (shape {inputs[i].shape}): the gradient recorded "
                                 f"with create_graph=True gives {found[worst]:.8g} at element {worst}, where "
                                 f"backward gives {expected[worst]:.8g}")


def _backward_gradients(func: Callable[..., Any], inputs: list[Tensor],
                        rng: np.random.Generator) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """Run backward once with a random weighting of each output; return them and each input's gradient."""
    from tensorgrad import autograd  # (autograd imports this module)

    tensors = [t for t in inputs if isinstance(t, Tensor)]
    saved = [t._grad for t in tensors]  # (the slot: an inner input's .grad would warn)
    for t in tensors:
        t.grad = None
    outs = _outputs(func, inputs)
    weights = [_random(rng, o) for o in outs]
    roots = [(o, array_like(w, o.data)) for o, w in zip(outs, weights, strict=True) if o.requires_grad]
    if roots:
        autograd.backward([o for o, _ in roots], [w for _, w in roots])
    grads = [None if not isinstance(t, Tensor) else np.zeros(t.shape) if t._grad is None
             else np.asarray(to_numpy(t._grad), dtype=_float64_of(t)) for t in inputs]
    for t, g in zip(tensors, saved, strict=True):
        t.grad = g
    return weights, grads


# Complex numbers are checked as pairs of reals, in PyTorch's convention: an output's weight w
# stands for the real loss sum(Re(w) Re(out) + Im(w) Im(out)), and a complex input's gradient
# g = dL/dRe + i dL/dIm, so the slope along a direction d is Re(conj(g) d).


def _random(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    """Standard normal numbers of t's shape: complex for a complex t (both parts drawn)."""
    values = rng.standard_normal(t.shape)
    # (np.asarray: for a 0-d t, numpy's arithmetic would give a scalar, which can't be written into)
    return np.asarray(values + 1j * rng.standard_normal(t.shape)) if t.dtype.kind == "c" else values


def _float64_of(t: Tensor) -> type:
    """float64, or complex128 for a complex t: the precision the check computes in."""
    return np.complex128 if t.dtype.kind == "c" else np.float64


def _real_dot(a: Any, b: Any) -> float:
    """sum(Re(conj(a) b)): the real inner product of two arrays, each real or complex."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        return float(np.sum((np.conj(a) * b).real))
    return float(np.sum(np.asarray(a, dtype=np.float64) * b))


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
