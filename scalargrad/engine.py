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
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

__all__ = [
    "Node",
    "topological_order",
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
      `Tensor` installs a closure per node that has captured what it needs.
    - `_grad_init`: what an inner node's `grad` is reset to before a backward pass
      (`0.0` for `Value`, so `+=` works; `None` for `Tensor`, "no gradient yet", so an array
      is only made for a node that receives one).
    - `_keeps_grad`: whether an inner node keeps its gradient after the pass (True for `Value`,
      so pictures show every gradient; False for `Tensor` unless `retain_grad()` was called,
      as in PyTorch, so the arrays go back at once).
    - `_kept_grad_adds_up`: whether a kept inner gradient adds up across passes, like a leaf's
      (True for `Tensor`, as PyTorch's `retain_grad`), or is this pass's alone (False for
      `Value`, whose pictures show the last pass).

    `_backward_takes_node` and `_kept_grad_adds_up` are read once per pass, from the root (a
    graph holds one kind of node); `_grad_init` and `_keeps_grad` from each node. The engine
    never reads `data`, `op` or `label`: they are for the ops and for pictures.
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


# One pass at a time, process-wide. A pass writes gradients into the nodes themselves (it resets
# the inner nodes' grads, then adds into them and into the leaves), so two passes over graphs that
# share a node would mix their sums, and even `leaf.grad += g` is a read, an add and a write that
# another thread can interleave. Reentrant, so a backward function or an `on_step` callback may
# run a backward pass of its own. Taken once per pass, not per node: it costs well under a
# microsecond per pass.
_backward_lock = threading.RLock()


# Whether a class's nodes take the node as their backward's first argument, by class.
_takes_node: dict[type, bool] = {}


def backward(root: Node, seed: Any, retain_graph: bool = True,
             on_step: Callable[[Any, Any], None] | None = None) -> None:
    """Backpropagate from `root`: set `root.grad = seed`, then run every `_backward`.

    Inner nodes' gradients are reset first, so a second pass starts from a clean slate; leaves
    keep accumulating across passes until zeroed, as in PyTorch, and so do the inner nodes that
    keep their gradient and say it adds up (a Tensor after `retain_grad()`). A node whose
    gradient is still `None` when its turn comes received no gradient (it does not lead to the
    root through a differentiable path) and is skipped.

    With `retain_graph=False` every inner node drops its backward function (and the arrays
    that function saved) and its parents as soon as it has run, so the graph's memory goes
    back while the pass is still going; a later pass through it raises `GraphFreedError`.

    `on_step(node, grad)`, when given, is called right after `node._backward(grad)` has run,
    once for each inner node the pass runs, in the order it runs them (reverse topological
    order: the root first). It is called before the pass drops that node's gradient or frees
    its graph, so `node.parents[i].grad` show what has been accumulated so far, this step
    included. `visualize.backprop_steps` draws one picture per call.

    Passes are serialised by a process-wide lock, so `backward` may be called from several
    threads at once, also on graphs that share nodes: each pass sees only its own gradients.
    """
    with _backward_lock:
        inner = topological_order(root, leaves=False)
        # Kept gradients of earlier passes that this one adds to. A graph holds one kind of
        # node, so the root says whether to look: a Value graph (thousands of nodes) skips it.
        earlier = {}
        adds_up = root._kept_grad_adds_up
        for node in inner:
            if adds_up and node._keeps_grad and node._grad is not None:
                earlier[node] = node._grad
            node._grad = node._grad_init
        root._grad = seed
        # A graph holds one kind of node: the root's class says how their backward is called.
        takes_node = _takes_node.get(type(root))
        if takes_node is None:  # a getattr that misses costs a caught exception: ask once per class
            takes_node = _takes_node[type(root)] = getattr(type(root), "_backward_takes_node", False)
        _run(inner, earlier, retain_graph, takes_node, on_step)


def _run(inner: list, earlier: dict, retain_graph: bool, takes_node: bool,
         on_step: Callable[[Any, Any], None] | None) -> None:
    """The pass itself: each node's `_backward`, from the root down."""
    while inner:
        # pop, not a loop over the list: the list must not keep a node (and its data) alive
        # once its gradient has gone to its parents.
        node = inner.pop()
        grad = node._grad
        if grad is not None:
            if takes_node:
                node._backward(node, grad)
            else:
                node._backward(grad)
            if on_step is not None:
                on_step(node, grad)
        # Written out, not a helper: a call per node costs a tenth of the pass.
        if not node._keeps_grad:
            node._grad = None
        elif earlier and node in earlier:
            node._grad = earlier[node] if grad is None else earlier[node] + grad
        if not retain_graph:
            node._backward = _graph_freed
            node.parents = ()


# --- grad mode --------------------------------------------------------------------------------

class _GradMode(threading.local):
    """The grad mode of each thread; a thread starts with the class default, enabled."""

    enabled = True


# Ops read `grad_mode.enabled` directly: one attribute lookup, no call and (thanks to the class
# default) no AttributeError to catch in threads that never set it, as every op asks.
grad_mode = _GradMode()


def is_grad_enabled() -> bool:
    """Whether ops record a graph in this thread (True unless inside `no_grad`)."""
    return grad_mode.enabled


F = TypeVar("F", bound=Callable[..., Any])


class set_grad_enabled:  # noqa: N801 (PyTorch's lower-case names)
    """Turn graph recording on or off in this thread: a context manager and a decorator.

    `no_grad()` and `enable_grad()` are this class with the flag fixed. On exit the previous
    mode comes back, so the managers nest.
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(is_grad_enabled())
        grad_mode.enabled = self.mode

    def __exit__(self, *exc_info: object) -> None:
        grad_mode.enabled = self._previous.pop()

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(self.mode):
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


class no_grad(_FixedMode):  # noqa: N801
    """Record no graph: `with no_grad(): ...` or `@no_grad()` (also bare `@no_grad`)."""

    _fixed_mode = False


class enable_grad(_FixedMode):  # noqa: N801
    """Record the graph again, inside a `no_grad` block: a context manager and a decorator."""

    _fixed_mode = True
