"""The graph engine shared by `scalargrad.Value` and `tensorgrad.Tensor`.

Tutorial chapter 3 ("Backward") introduces it. A graph is made of *nodes*; both kinds of
node follow the `Node` protocol below, so one engine orders and differentiates both, and
`visualize` draws both.

The engine does three things and nothing else:

1. `topological_order(root)`: every node under `root`, parents before children, without
   recursion (so a chain of a million nodes is fine).
2. `backward(root, seed)`: seed the root's gradient and run each inner node's backward
   function in reverse topological order; it accumulates into the parents' `.grad`. Passes
   are serialised by one lock, so threads may run them at once, also on shared graphs, and
   an `on_step` hook reports each step (`visualize.backprop_steps` draws them).
3. Grad mode: `no_grad()` / `enable_grad()` / `is_grad_enabled()`, per thread. While grad mode
   is off, ops record no graph.

A node's backward function must not refer to the node itself (it receives the gradient, and
for `Value` the node, as arguments instead), so a graph holds no reference cycles and is freed
by reference counting the moment the last reference to its root is dropped.
"""

from __future__ import annotations

import functools
import inspect
import operator
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

__all__ = [
    "Node",
    "topological_order",
    "creation_order",
    "backward",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "GraphFreedError",
    "is_freed",
    "grad_mode",
]


class Node(Protocol):
    """What the engine (and `visualize`) needs of a graph node: everything the engine touches.

    - `data`: the payload (a float for `Value`, a numpy array for `Tensor`).
    - `grad`: the gradient of the root with respect to `data`, accumulated by backward.
    - `_grad`: the same gradient, as the engine reads and writes it. For `Value` it is the very
      slot `grad` names; `Tensor`'s public `grad` is a property that checks what a user assigns
      (shape, dtype), and the engine, which only stores gradients the ops computed, goes to the
      slot behind it without paying for the check.
    - `parents`: the nodes this one was computed from, in argument order (a tuple).
    - `op`: the name of the op that made the node, `""` for a leaf.
    - `label`: an optional name, shown in pictures.
    - `_backward`: `None` for a leaf, else the function that adds the node's gradient, times
      the op's local derivatives, into the parents' `.grad`. The engine calls it as
      `node._backward(grad)`, or as `node._backward(node, grad)` when the node's class sets
      `_backward_takes_node`. A backward pass with `retain_graph=False` replaces it with a
      function that raises `GraphFreedError`, and empties `parents`.
    - `_backward_takes_node` (optional, False when absent): True for `Value`, whose backward is
      one function per op shared by all of the op's nodes (a graph of tens of thousands of
      scalars must not carry a function object per node for the cycle collector to walk);
      `Tensor` installs one per node, with what it needs bound to it (`functools.partial`).
    - `_grad_init`: what an inner node's `grad` is reset to before a backward pass
      (`0.0` for `Value`, so `+=` works; `None` for `Tensor`, "no gradient yet", so an array
      is only made for a node that receives one).
    - `_keeps_grad`: whether an inner node keeps its gradient after the pass (True for `Value`,
      so pictures show every gradient; False for `Tensor` unless `retain_grad()` was called,
      as in PyTorch, so the arrays go back at once).
    - `_kept_grad_adds_up`: whether a kept inner gradient adds up across passes, like a leaf's
      (True for `Tensor`, as PyTorch's `retain_grad`), or is this pass's alone (False for
      `Value`, whose pictures show the last pass).
    - `_seq`: the node's creation number, or None. Nodes numbered as they are made (every inner
      Tensor) are put in order by number (`creation_order`); a root whose `_seq` is None has its
      graph put in order by the walk (`topological_order`): a Value graph of thousands of scalars
      must not carry a number each.

    `_backward_takes_node`, `_grad_init`, `_kept_grad_adds_up` and `_seq`'s None-ness are read
    once per pass, from the root (a graph holds one kind of node); `_keeps_grad` from each node.
    The engine never reads `data`, `op` or `label`: they are for the ops and for pictures.
    """

    data: Any
    grad: Any
    _grad: Any
    parents: tuple
    op: str
    label: str
    _backward: Callable[..., None] | None
    _grad_init: Any
    _keeps_grad: bool
    _kept_grad_adds_up: bool
    _seq: int | None


class GraphFreedError(RuntimeError):
    """Raised by a backward pass that reaches a node whose graph an earlier pass released."""


def _graph_freed(*node_and_grad: Any) -> None:
    """The backward function of a node whose graph was freed: called either way, it raises."""
    raise GraphFreedError(
        "Trying to backward through the graph a second time: the first backward freed it. "
        "Pass retain_graph=True to the first backward() to keep it."
    )


def is_freed(node: Node) -> bool:
    """Whether an earlier backward pass released this node's graph (`retain_graph=False`)."""
    return node._backward is _graph_freed


def topological_order(root: Node, leaves: bool = True) -> list:
    """Every node under `root`, each once, every node after all of its parents.

    It is the iterative form of the recursive walk a learner writes first::

        def build(node):
            if node not in visited:
                visited.add(node)
                for parent in node.parents:
                    build(parent)
                order.append(node)

    The explicit stack replaces Python's call stack, which overflows near depth 1,000. Parents
    are visited in argument order, so the order (and every picture) is deterministic.

    With `leaves=False` the leaves are left out: the backward pass runs only nodes that have a
    backward function, and in a small tensor graph the leaves are half of the nodes.
    """
    if not leaves and root._backward is None:
        return []
    order = []
    visited = {root}
    # Each entry is (node, iterator over its parents): the state of one pending call of build().
    stack = [(root, iter(root.parents))]
    while stack:
        node, pending = stack[-1]
        for parent in pending:
            if parent not in visited:
                visited.add(parent)
                if not leaves and parent._backward is None:
                    continue  # a leaf: seen (so the check below counts it as done), not listed
                if visited.issuperset(parent.parents):
                    # Its parents are all done (a leaf has none): build(parent) would append it
                    # at once, so do that here without a stack entry. Most nodes end here.
                    order.append(parent)
                else:
                    stack.append((parent, iter(parent.parents)))
                    break
        else:  # every parent is done: this node is too
            stack.pop()
            order.append(node)
    return order


def creation_order(root: Node) -> list:
    """The inner nodes under `root` (those with a backward function), oldest first.

    For nodes numbered as they are made (`_seq`, as every Tensor op numbers its result), this is
    a topological order without a depth-first walk: a node is made after its parents, so its
    number is larger. Collecting the nodes and sorting them by number costs half as much as
    `topological_order`'s walk, which on a small tensor graph is a tenth of the whole step.
    """
    if root._backward is None:
        return []
    nodes = [root]
    seen = {root}
    for node in nodes:  # (the list grows as the loop runs: a breadth-first collection)
        for parent in node.parents:
            if parent._backward is not None and parent not in seen:
                seen.add(parent)
                nodes.append(parent)
    nodes.sort(key=_creation_number)  # (attrgetter: a key function in C, not a Python call per node)
    return nodes


_creation_number = operator.attrgetter("_seq")


# One pass at a time, process-wide. A pass writes gradients into the nodes themselves (it resets
# the inner nodes' grads, then adds into them and into the leaves), so two passes over graphs that
# share a node would mix their sums, and even `leaf.grad += g` is a read, an add and a write that
# another thread can interleave. Reentrant, so a backward function or an `on_step` callback may
# run a backward pass of its own. Taken once per pass, not per node: it costs well under a
# microsecond per pass.
_backward_lock = threading.RLock()


def backward(root: Node, seed: Any, retain_graph: bool = True,
             on_step: Callable[[Any, Any], None] | None = None,
             on_grad: Callable[[Any, Any], Any] | None = None) -> None:
    """Backpropagate from `root`: set `root.grad = seed`, then run every `_backward`.

    Inner nodes' gradients are reset first, so a second pass starts from a clean slate; leaves
    keep accumulating across passes until zeroed, as in PyTorch, and so do the inner nodes that
    keep their gradient and say it adds up (a Tensor after `retain_grad()`). A node whose
    gradient is still `None` when its turn comes received no gradient (it does not lead to the
    root through a differentiable path) and is skipped.

    With `retain_graph=False` every inner node drops its backward function (and the arrays
    that function saved) and its parents as soon as it has run, so the graph's memory goes
    back while the pass is still going; a later pass through it raises `GraphFreedError`.

    `on_grad(node, grad)`, when given, is called with each inner node's complete gradient just
    before its backward function runs; what it returns replaces that gradient (a tensor's
    `register_hook` hooks run here).

    `on_step(node, grad)`, when given, is called right after `node._backward(grad)` has run,
    once for each inner node the pass runs, in the order it runs them (reverse topological
    order: the root first). It is called before the pass drops that node's gradient or frees
    its graph, so `node.parents[i].grad` show what has been accumulated so far, this step
    included. `visualize.backprop_steps` draws one picture per call.

    Passes are serialised by a process-wide lock, so `backward` may be called from several
    threads at once, also on graphs that share nodes: each pass sees only its own gradients.
    """
    with _backward_lock:
        # Nodes numbered as they are made (Tensor) are ordered by number; others (Value, whose
        # graphs of thousands of scalars must not carry a number each) by the walk.
        inner = topological_order(root, leaves=False) if root._seq is None else creation_order(root)
        # Kept gradients of earlier passes that this one adds to. A graph holds one kind of
        # node, so the root says whether to look: a Value graph (thousands of nodes) skips it.
        earlier = {}
        adds_up = root._kept_grad_adds_up
        grad_init = root._grad_init
        for node in inner:
            if adds_up and node._keeps_grad and node._grad is not None:
                earlier[node] = node._grad
            node._grad = grad_init
        root._grad = seed
        # A graph holds one kind of node: the root's class says how their backward is called.
        takes_node = getattr(root, "_backward_takes_node", False)
        # The pass itself, written out here rather than in a helper: the call measured about 1%
        # of a small tensor graph's step.
        while inner:
            # pop, not a loop over the list: the list must not keep a node (and its data) alive
            # once its gradient has gone to its parents.
            node = inner.pop()
            grad = node._grad
            if grad is not None:
                if on_grad is not None:
                    grad = node._grad = on_grad(node, grad)
                if takes_node:
                    node._backward(node, grad)
                else:
                    node._backward(grad)
                if on_step is not None:
                    on_step(node, grad)
            if not node._keeps_grad:
                node._grad = None
            elif earlier and node in earlier:
                node._grad = earlier[node] if grad is None else earlier[node] + grad
            if not retain_graph:
                node._backward = _graph_freed
                node.parents = ()


# --- grad mode --------------------------------------------------------------------------------

class _ThreadModes(threading.local):
    """Each thread's grad mode; a thread starts with the class default, enabled."""

    enabled = True


_thread_modes = _ThreadModes()


class _GradMode:
    """`grad_mode.enabled`: whether this thread records graphs. Every op asks, so it must be cheap.

    Reading a thread-local costs several hundred instructions, a tenth of a small op. While no
    thread has grad mode off, which is nearly always, the answer is True in every thread, and
    `grad_mode` is an instance of this class, whose `enabled` is a slot that holds True (the
    fastest attribute read there is). While some thread has it off, `grad_mode` becomes a
    `_PerThreadGradMode`, which asks the thread-local.
    """

    __slots__ = ("enabled",)

    def __init__(self) -> None:
        self.enabled = True


class _PerThreadGradMode(_GradMode):
    """`grad_mode` while some thread has grad mode off: each thread reads its own."""

    __slots__ = ()

    @property
    def enabled(self) -> bool:  # type: ignore[override]
        return _thread_modes.enabled


# Ops read `grad_mode.enabled` directly: one attribute lookup and no call.
grad_mode = _GradMode()
_threads_without_grad = 0  # (a thread that ends inside no_grad leaves the per-thread path on)
_mode_lock = threading.Lock()


def _set_thread_mode(enabled: bool) -> None:
    """Set this thread's grad mode, and choose the cheap or the per-thread `grad_mode`."""
    global _threads_without_grad
    with _mode_lock:
        if _thread_modes.enabled == enabled:
            return
        _thread_modes.enabled = enabled
        _threads_without_grad += -1 if enabled else 1
        grad_mode.__class__ = _PerThreadGradMode if _threads_without_grad else _GradMode


def is_grad_enabled() -> bool:
    """Whether ops record a graph in this thread (True unless inside `no_grad`)."""
    return _thread_modes.enabled


F = TypeVar("F", bound=Callable[..., Any])


class set_grad_enabled:  # noqa: N801 (PyTorch's lower-case names)
    """Turn graph recording on or off in this thread: a call, a context manager and a decorator.

    As in PyTorch, a plain call `set_grad_enabled(False)` switches the mode at once; a `with` block
    restores the mode from before it. `no_grad()` and `enable_grad()` are this class with the flag
    fixed, switching only when entered. On exit the previous mode comes back, so the managers nest.
    A decorated generator function runs its body (not the code it yields to) in the mode.
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):  # (PyTorch refuses 0 and 1 too)
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.mode = mode
        self._previous: list[bool] = []
        self._switched = type(self) is set_grad_enabled  # a plain call switches now; no_grad() waits
        if self._switched:
            self._previous.append(_thread_modes.enabled)
            _set_thread_mode(mode)

    def __enter__(self) -> None:
        if self._switched:  # the call switched already, and saved the mode to come back to
            self._switched = False
            return
        self._previous.append(_thread_modes.enabled)
        _set_thread_mode(self.mode)

    def __exit__(self, *exc_info: object) -> None:
        _set_thread_mode(self._previous.pop())

    def __call__(self, func: F) -> F:
        if self._switched:  # `@set_grad_enabled(False)`: the decoration itself changes nothing
            self._switched = False
            _set_thread_mode(self._previous.pop())
        mode = self.mode
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                step, value = gen.send, None
                try:
                    while True:
                        with _Mode(mode):
                            value = step(value)
                        try:
                            value, step = (yield value), gen.send
                        except GeneratorExit:
                            with _Mode(mode):
                                gen.close()
                            raise
                        except BaseException as error:  # thrown in: into the body, in the mode
                            value, step = error, gen.throw
                except StopIteration as stop:
                    return stop.value

            return generator  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _Mode(mode):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class _FixedMode(set_grad_enabled):
    """`set_grad_enabled` with the mode fixed by the subclass, usable bare as a decorator too."""

    _fixed_mode: bool

    def __new__(cls, func: Callable | None = None):  # type: ignore[misc]
        self = super().__new__(cls)
        if callable(func):  # used as a bare decorator: @no_grad
            self.__init__()
            return self(func)
        return self

    def __init__(self, func: Callable | None = None) -> None:
        super().__init__(self._fixed_mode)


class _Mode(_FixedMode):
    """The manager a decorated function runs in: `mode` set on entry, not before."""

    def __init__(self, mode: bool) -> None:
        set_grad_enabled.__init__(self, mode)


class no_grad(_FixedMode):  # noqa: N801
    """Record no graph: `with no_grad(): ...` or `@no_grad()` (also bare `@no_grad`)."""

    _fixed_mode = False


class enable_grad(_FixedMode):  # noqa: N801
    """Record the graph again, inside a `no_grad` block: a context manager and a decorator."""

    _fixed_mode = True
