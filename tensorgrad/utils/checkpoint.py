"""`tensorgrad.utils.checkpoint`: gradient checkpointing, as `torch.utils.checkpoint`.

Backpropagation needs the values a forward pass computed: `relu`'s backward reads its output,
`x @ W`'s reads `x`. So a deep network keeps every layer's activations alive from its forward
until its backward, and for long chains that memory, not the weights, is what runs out.

Checkpointing trades compute for memory. `y = checkpoint(f, x, use_reentrant=False)` runs `f`,
keeps only its inputs and its outputs, and lets everything `f` computed in between go. When the
backward pass reaches `y`, it runs `f` again on the same inputs (with the random generator reset
to where it was, so dropout draws the same mask), this time keeping the graph, and backpropagates
through that recomputation. Split a network of n layers into segments of about sqrt(n) layers
(`checkpoint_sequential`) and the activations held at once drop from n layers' to about 2 sqrt(n),
for the price of running the forward pass twice::

    model = tg.nn.Sequential(*[tg.nn.Linear(64, 64) for _ in range(16)])
    y = checkpoint_sequential(model, 4, x, use_reentrant=False)  # 4 segments of 4 layers
    y.sum().backward()                                            # each segment runs again here

The two variants of PyTorch:

- `use_reentrant=False` (recommended): runs `f` with grad mode as it is, then finds what the
  result depends on from outside `f`: the inputs and also the tensors `f` reads without taking
  them as arguments (a module's weights). The result becomes one graph node (a `Function`) whose
  parents are those tensors, so `tg.autograd.grad`, `.backward()` and `create_graph=True` all
  reach the weights. Keyword arguments go to `f`. While `f` runs, its own graph exists (the
  recomputation in backward holds the same); it is dropped when `checkpoint` returns.
- `use_reentrant=True` (PyTorch's old default): runs `f` under `no_grad`, and in backward runs a
  backward pass of its own through the recomputation, which writes the weights' `.grad` directly.
  So only `.backward()` works through it (not `tg.autograd.grad`), and if no input requires grad
  the weights get no gradient, as in PyTorch.

Calling `checkpoint` without `use_reentrant` warns, as PyTorch 2.13 does, and takes the
reentrant variant.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from scalargrad import engine
from scalargrad.engine import enable_grad, grad_mode
from tensorgrad import autograd
from tensorgrad.autograd import record
from tensorgrad.creation import get_rng_state, set_rng_state
from tensorgrad.function import Function, FunctionCtx
from tensorgrad.tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn"]


class CheckpointError(RuntimeError):
    """The recomputation in backward did not give what the forward pass gave (shapes, dtypes)."""


def noop_context_fn() -> tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]:
    """The default `context_fn`: no context around the forward pass nor around the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """The tensors of `inputs` detached (keeping `requires_grad`), other items as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for item in inputs:
        if isinstance(item, Tensor):
            x = item.detach()
            x.requires_grad = item.requires_grad
            item = x
        out.append(item)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor of `inputs` requires grad: a reentrant checkpoint then gives no gradient."""
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


# --- the random generator, rewound for the recomputation -----------------------------------------


@contextlib.contextmanager
def _rng_as_in_forward(state: Tensor | None) -> Iterator[None]:
    """Run the block with the generator as it was before the forward pass (dropout draws the same
    mask again), then put back the state it had: the recomputation draws nothing for the caller."""
    if state is None:
        yield
        return
    outer = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(outer)


# --- checkpoint ----------------------------------------------------------------------------------


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)` without keeping its intermediate values: backward recomputes them.

    As `torch.utils.checkpoint.checkpoint` (see the module docstring for the two variants).
    `preserve_rng_state` rewinds the random generator for the recomputation, so random ops
    (dropout) draw the same numbers. With `use_reentrant=False`: keyword arguments go to
    `function`; `context_fn()` returns two context managers, entered around the forward pass and
    around the recomputation; `determinism_check="default"` checks that the recomputation gives
    outputs of the same shapes and dtypes (`CheckpointError` otherwise), `"none"` skips that.
    `debug` and `early_stop` are accepted (tensorgrad always recomputes the whole function and has
    no operator log to print).
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
            "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
            "use_reentrant=False is recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
            "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if not grad_mode.enabled:  # nothing is recorded, so nothing is kept: a plain call (as PyTorch)
        return function(*args, **kwargs)
    return _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn,
                                         determinism_check == "default")


def checkpoint_sequential(functions: Any, segments: int, input: Tensor, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Tensor:
    """Run `functions` (an `nn.Sequential` or a list of modules or functions) one after another on
    `input`, checkpointing all but the last of `segments` chunks, as
    `torch.utils.checkpoint.checkpoint_sequential`. The last chunk runs plainly: its activations
    are needed at once by the backward pass. Takes `preserve_rng_state=` as `checkpoint` does."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
            "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from tensorgrad.nn import Sequential  # (nn imports tensorgrad, which imports this package)

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(_run_segment(functions, start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _run_segment(functions, end + 1, len(functions) - 1)(input)


def _run_segment(functions: list, start: int, end: int) -> Callable[[Any], Any]:
    """The functions start..end (inclusive) applied in order: one checkpointed segment."""
    def forward(x: Any) -> Any:
        for j in range(start, end + 1):
            x = functions[j](x)
        return x
    return forward


# --- use_reentrant=True: PyTorch's CheckpointFunction --------------------------------------------


_REENTRANT_WITH_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
    "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
    ".backward() without passing the `inputs` argument.")


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward under no_grad; backward recomputes on detached inputs and
    runs `.backward()` through the recomputation, which accumulates into the weights' `.grad`."""

    @staticmethod
    def forward(ctx: FunctionCtx, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:
        """Run `run_function(*args)` (grad mode is off here), keeping the inputs and the RNG state."""
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> tuple:
        """Recompute, backpropagate `grad_outputs` through the recomputation, return the inputs' grads."""
        # A pass of tg.autograd.grad (create_graph or not) must not see .grad change: this can't run there.
        if grad_mode.enabled or not autograd._accumulating.on:
            raise RuntimeError(_REENTRANT_WITH_GRAD)
        tensors = iter(ctx.saved_tensors)
        inputs = tuple(next(tensors) if a is None else a for a in ctx.inputs)
        with _rng_as_in_forward(ctx.rng_state):
            detached = detach_variable(inputs)
            with enable_grad():
                outputs = ctx.run_function(*detached)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(out, g) for out, g in zip(outputs, grad_outputs, strict=False)
                 if isinstance(out, Tensor) and out.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd.backward([out for out, _ in pairs], [g for _, g in pairs])
        return (None, None, *(x.grad if isinstance(x, Tensor) else None for x in detached))


# --- use_reentrant=False -------------------------------------------------------------------------


def _checkpoint_without_reentrant(function: Callable[..., Any], args: tuple, kwargs: dict, preserve: bool,
                                  context_fn: Callable[[], tuple[Any, Any]], check: bool) -> Any:
    """Run `function` with its graph, find the tensors from outside it that the outputs depend on,
    and hand back the outputs as one node over those (`Checkpoint`), the graph between dropped."""
    forward_context, recompute_context = context_fn()
    rng_state = get_rng_state() if preserve else None
    start = next(autograd._creation_numbers)  # every node function makes is numbered from here on
    completed = False
    with forward_context:
        output = function(*args, **kwargs)
        completed = True
    if not completed:
        raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn suppressed "
                           "an exception raised during the checkpointed forward. This is not supported "
                           "because checkpoint cannot return a value for a failed forward.")
    outputs = _tensors_in(output)
    inputs = _inputs_from_outside(outputs, start)
    if not inputs:  # nothing from outside requires grad: there is no graph to keep
        return output
    run = _Recomputation(function, args, kwargs, rng_state, recompute_context, inputs, outputs, check)
    del outputs
    results = iter(Checkpoint.apply(run, *inputs))
    return _replaced(output, results)


def _tensors_in(output: Any) -> list[Tensor]:
    """The tensors of a function's output, in order: the output itself, or those in its tuples,
    lists and dicts (at any depth)."""
    if isinstance(output, Tensor):
        return [output]
    if isinstance(output, tuple | list):
        return [t for item in output for t in _tensors_in(item)]
    if isinstance(output, dict):
        return [t for item in output.values() for t in _tensors_in(item)]
    return []


def _replaced(output: Any, tensors: Iterator[Tensor]) -> Any:
    """`output` with its tensors replaced, in `_tensors_in`'s order, by the next ones of `tensors`."""
    if isinstance(output, Tensor):
        return next(tensors)
    if isinstance(output, tuple) and hasattr(output, "_fields"):  # a named tuple
        return type(output)(*(_replaced(item, tensors) for item in output))
    if isinstance(output, tuple | list):
        return type(output)(_replaced(item, tensors) for item in output)
    if isinstance(output, dict):
        return type(output)((key, _replaced(item, tensors)) for key, item in output.items())
    return output


def _inputs_from_outside(outputs: list[Tensor], start: int) -> list[Tensor]:
    """The tensors the outputs' graph reaches that were not made by the checkpointed function: its
    inputs, and the weights and other tensors it read from elsewhere. Nodes made by the function
    are numbered `start` or later; leaves have no number."""
    found: dict[int, Tensor] = {}
    seen: set[int] = set()
    stack = [out for out in reversed(outputs) if out._requires_grad]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if t._backward is None or t._seq < start:
            found[id(t)] = t
        else:
            stack.extend(p for p in reversed(t.parents) if p._requires_grad)
    return list(found.values())


def _meta(t: Tensor) -> tuple:
    return tuple(t.shape), t.dtype, str(t.device)


class _Recomputation:
    """What the backward of a checkpointed call needs to run it again: the function, its arguments,
    the RNG state, the tensors from outside (`inputs`) and what the outputs were like."""

    def __init__(self, function: Callable[..., Any], args: tuple, kwargs: dict, rng_state: Tensor | None,
                 context: Any, inputs: list[Tensor], outputs: list[Tensor], check: bool) -> None:
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state, self.context, self.inputs, self.check = rng_state, context, inputs, check
        self.metas = [_meta(o) for o in outputs]
        self.differentiable = [o._requires_grad for o in outputs]
        self.pending: list[Tensor] | None = [o.detach() for o in outputs]  # taken by the Function's forward

    def rerun(self) -> list[Tensor]:
        """The function run again with grad mode on, as in the forward pass; its output tensors."""
        with _rng_as_in_forward(self.rng_state), enable_grad(), self.context:
            outputs = _tensors_in(self.function(*self.args, **self.kwargs))
        if self.check:
            self._check(outputs)
        return outputs

    def _check(self, outputs: list[Tensor]) -> None:
        metas = [_meta(o) for o in outputs]
        if len(metas) != len(self.metas):
            raise CheckpointError(f"torch.utils.checkpoint: the recomputation returned {len(metas)} tensors, "
                                  f"the original forward {len(self.metas)}")
        different = "".join(f"tensor at position {i}:\nsaved metadata: {before}\nrecomputed metadata: {now}\n"
                            for i, (before, now) in enumerate(zip(self.metas, metas, strict=True))
                            if before != now)
        if different:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  f"different metadata than during the forward pass.\n{different}")

    def gradients(self, grads: tuple) -> list[Any]:
        """The gradients of the inputs (arrays or None), from the outputs' (`None`: got none)."""
        # Inputs from outside are made leaves for the length of the recomputation and its backward
        # pass, so the pass stops at them, adds into nothing of the outer graph and runs no hooks of
        # theirs (the outer pass does, once). The outer pass holds the engine's lock meanwhile.
        kept = [(t, t._backward, t.parents, t._grad) for t in self.inputs]
        try:
            for t in self.inputs:
                t._backward, t.parents, t._grad = None, (), None
            outputs = self.rerun()
            pairs = [(o, g) for o, g in zip(outputs, grads, strict=True)
                     if g is not None and o._requires_grad]
            if pairs:
                _backward_from(pairs)
            return [t._grad for t in self.inputs]
        finally:
            for t, history, parents, grad in kept:
                t._backward, t.parents, t._grad = history, parents, grad

    def graph_gradients(self, grads: tuple) -> tuple:
        """`create_graph=True`: the inputs' gradients as tensors with a graph over the recomputation
        (so through the real inputs, whose graph that pass walks too)."""
        outputs = self.rerun()
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=True) if g is not None and o._requires_grad]
        if not pairs:
            return (None,) * len(self.inputs)
        return autograd.grad([o for o, _ in pairs], self.inputs, [g for _, g in pairs], create_graph=True,
                             allow_unused=True)


def _backward_from(pairs: list[tuple[Tensor, Tensor]]) -> None:
    """One backward pass from several outputs, each with its gradient: through a node whose parents
    are the outputs and whose gradient for each is the given one, so the shared graph runs once."""
    def given(g: Any) -> Callable[[Any], Any]:
        return lambda grad: g
    outputs = tuple(o for o, _ in pairs)
    first = outputs[0]._data
    with enable_grad():  # (a Function's backward runs with grad mode off)
        root = record(np.zeros_like(first, shape=()), "checkpoint", outputs,
                      *(given(g._data if isinstance(g, Tensor) else g) for _, g in pairs), saved=())
    engine.backward(root, np.zeros_like(first, shape=()), retain_graph=False)


class Checkpoint(Function):
    """The outputs of a non-reentrant checkpoint as one node over the tensors from outside."""

    @staticmethod
    def forward(ctx: FunctionCtx, run: _Recomputation, *inputs: Tensor) -> tuple:
        """Hand out the outputs the checkpointed function computed (detached): nothing to compute."""
        ctx.run = run
        ctx.set_materialize_grads(False)
        # The arguments, so that backward raises if one was changed in place since (as PyTorch).
        ctx.save_for_backward(*[a for a in run.args if isinstance(a, Tensor)])
        outputs, run.pending = tuple(run.pending), None
        ctx.mark_non_differentiable(*[o for o, d in zip(outputs, run.differentiable, strict=True) if not d])
        return outputs

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> tuple:
        """Recompute, and backpropagate `grads` through the recomputation into the inputs."""
        ctx.saved_tensors  # noqa: B018 - raises if an argument was changed in place since the forward
        run = ctx.run
        if grad_mode.enabled:  # a pass with create_graph=True runs backward with grad mode on
            return (None, *run.graph_gradients(grads))
        return (None, *run.gradients(grads))
