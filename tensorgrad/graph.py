"""`t.grad_fn` as PyTorch's graph node object (`tg.autograd.graph`; in tutorial chapter 12's map).

A recorded tensor already holds its place in the graph: `t.op`, `t.parents` and `t._backward`,
a partial of `autograd._backward` whose arguments are the op's inputs and one edge per input that
wants a gradient (with the input's history when the op used it). A `Node` is made from those on
the first access of `t.grad_fn`, never by `record`, so the ops pay nothing for it:

    >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * 2).sum()
    >>> y.grad_fn
    <SumBackward0 object at 0x...>
    >>> y.grad_fn.next_functions
    ((<MulBackward0 object at 0x...>, 0),)
    >>> y.grad_fn.next_functions[0][0].next_functions
    ((<AccumulateGrad object at 0x...>, 0), (None, 0))

A tensor keeps its node while it lives (`y.grad_fn is y.grad_fn`, and `metadata` stays), in a
table keyed by the tensor's id with a weak reference, so the node holds no reference back to the
tensor and the graph stays free of cycles.

Hooks ride on the machinery that exists: a node's pre-hooks run as one gradient hook of its
tensor (after the tensor's own hooks, as in PyTorch); a node's post-hooks (`register_hook`) wrap
the node's edges while any is registered, so a backward pass through a graph without them runs
exactly as before; the `create_graph=True` pass (`higher_order`) runs them on its recorded
gradients. A custom Function's node keeps both kinds with its `FunctionBackward` (`FunctionHooks`),
which runs them around the user's `backward` in either pass.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from scalargrad import engine
from tensorgrad import autograd
from tensorgrad.function import FunctionBackward, _expandable, _hand_to_hub
from tensorgrad.higher_order import _conformed, _edges_of
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["Node", "AccumulateGrad", "node_of"]

# tensorgrad's op names whose node is PyTorch's node of the same op, by PyTorch's name.
_NAMES = {
    "*": "MulBackward0", "+": "AddBackward0", "-": "SubBackward0", "/": "DivBackward0",
    "**": "PowBackward1", "neg": "NegBackward0", "exp": "ExpBackward0", "log": "LogBackward0",
    "tanh": "TanhBackward0", "sigmoid": "SigmoidBackward0", "relu": "ReluBackward0",
    "sqrt": "SqrtBackward0", "rsqrt": "RsqrtBackward0", "abs": "AbsBackward0", "log1p": "Log1PBackward0",
    "expm1": "Expm1Backward0", "exp2": "Exp2Backward0", "reciprocal": "ReciprocalBackward0",
    "softmax": "SoftmaxBackward0", "log_softmax": "LogSoftmaxBackward0", "gelu": "GeluBackward0",
    "silu": "SiluBackward0", "softplus": "SoftplusBackward0", "clip": "ClampBackward1",
    "hardtanh": "HardtanhBackward0", "cat": "CatBackward0", "stack": "StackBackward0",
    "view": "ViewBackward0", "reshape": "ViewBackward0", "flatten": "ViewBackward0",
    "transpose": "TransposeBackward0", "permute": "PermuteBackward0", "expand": "ExpandBackward0",
    "unsqueeze": "UnsqueezeBackward0", "squeeze": "SqueezeBackward0", "clone": "CloneBackward0",
    "contiguous": "CloneBackward0", "index": "IndexBackward0", "gather": "GatherBackward0",
    "index_select": "IndexSelectBackward0", "masked_fill": "MaskedFillBackward0",
    "split": "SplitBackward0", "where": "WhereBackward0", "to": "ToCopyBackward0",
    "maximum": "MaximumBackward0", "minimum": "MinimumBackward0", "amax": "AmaxBackward0",
    "amin": "AminBackward0", "norm": "LinalgVectorNormBackward0", "var": "VarBackward0",
    "std": "StdBackward0", "prod": "ProdBackward0", "cumsum": "CumsumBackward0",
    "cumprod": "CumprodBackward0", "logsumexp": "LogsumexpBackward0", "pad": "ConstantPadNdBackward0",
    "T": "PermuteBackward0", "t": "TBackward0", "narrow": "SliceBackward0", "square": "PowBackward0",
    "layer_norm": "NativeLayerNormBackward0", "bce_with_logits": "BinaryCrossEntropyWithLogitsBackward0",
    "l1_loss": "AbsBackward0",  # (PyTorch's l1_loss is |input - target| then its reduction)
}


def _pascal(op: str) -> str:
    """PascalCase of an op name: "cross_entropy" -> "CrossEntropy" (the fallback node name)."""
    return "".join(word[:1].upper() + word[1:] for word in re.split(r"[^0-9A-Za-z]+", op)) or "Op"


def _matmul_name(ndims: tuple[int, ...]) -> str:
    """PyTorch's node for `a @ b` by the inputs' dimensions (torch.matmul picks the kernel by them)."""
    return {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0",
            (3, 3): "BmmBackward0"}.get(ndims, "MatmulBackward0")


def op_node_name(op: str, input_ndims: tuple[int, ...], out_ndim: int) -> str:
    """PyTorch's name for the node of tensorgrad op `op` (see `_NAMES`); where PyTorch picks among
    several by the arguments, tensorgrad picks by the shapes; other ops get f"{PascalCase}Backward0"."""
    if op in _NAMES:
        return _NAMES[op]
    full = out_ndim == 0 and input_ndims[:1] != (0,)  # a reduction over every dimension
    if op in ("sum", "mean"):  # sum() is SumBackward0, sum(dim) SumBackward1
        return f"{op.capitalize()}Backward{0 if full else 1}"
    if op in ("max", "min"):  # max() is MaxBackward1, max(dim) MaxBackward0
        return f"{op.capitalize()}Backward{1 if full else 0}"
    if op.startswith("**"):  # x ** 2: a number exponent
        return "PowBackward0"
    if op == "@":
        return _matmul_name(input_ndims)
    if op == "slice":  # an integer index drops a dimension
        return "SelectBackward0" if input_ndims[:1] and out_ndim < input_ndims[0] else "SliceBackward0"
    return f"{_pascal(op)}Backward0"


class Node:
    """A node of the backward graph, as PyTorch's `torch.autograd.graph.Node` (the class of every
    `grad_fn`, and of the `AccumulateGrad` nodes of leaves)."""

    __slots__ = ("_name", "_metadata", "__weakref__")

    def name(self) -> str:
        """The node's name, as PyTorch's: "MulBackward0", "torch::autograd::AccumulateGrad", ..."""
        return self._name

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """One `(node, output index)` pair per input of the op, in order: the input's `grad_fn`, an
        `AccumulateGrad` node for a leaf that requires grad, `(None, 0)` for an input that does not."""
        return ()

    @property
    def metadata(self) -> dict:
        """A dict kept with the node, for the user's notes (PyTorch's `grad_fn.metadata`)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_prehook(self, fn: Callable[[tuple], tuple | None]) -> autograd.RemovableHandle:
        """Call `fn(grad_outputs)` with the node's incoming gradient (a 1-tuple) before its backward
        runs; a tuple it returns replaces the gradient (None keeps it). Returns a handle whose
        `remove()` takes the hook off."""
        raise RuntimeError(f"{self._name}: this node takes no hooks")

    def register_hook(self, fn: Callable[[tuple, tuple], tuple | None]) -> autograd.RemovableHandle:
        """Call `fn(grad_inputs, grad_outputs)` after the node's backward has computed the gradients
        of its inputs (one entry per `next_functions` pair); a tuple it returns replaces them."""
        raise RuntimeError(f"{self._name}: this node takes no hooks")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"


def _node_class(name: str) -> type:
    """The class of nodes named `name`, so that `type(grad_fn).__name__` is PyTorch's too."""
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (OpNode,), {"__slots__": (), "__module__": __name__})
    return cls


_classes: dict[str, type] = {}


class OpNode(Node):
    """The node of a recorded op (or of a `Function`'s application): made from its output's history."""

    __slots__ = ("_history", "_tensor")

    def __init__(self, name: str, history: Any, tensor: Tensor) -> None:
        self._name, self._metadata, self._history = name, None, history
        self._tensor = weakref.ref(tensor)  # (for pre-hooks: the node must not keep its output alive)

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        history = self._history
        if _is_record(history):
            inputs, edges = history.args[1], history.args[3]
            by_input = {id(t): (t, h) for t, _, h, *_ in edges}
            return tuple(_edge(*by_input[id(t)]) if id(t) in by_input else (None, 0) for t in inputs)
        if type(history) is partial and history.func in (FunctionBackward.run_one, FunctionBackward.run_hub):
            fb = history.args[0]
            by_arg = {i: (t, h) for i, t, h, *_ in fb.edges}
            return tuple(_edge(*by_arg[i]) if i in by_arg else (None, 0)
                         for i, is_tensor in enumerate(fb.tensor_args) if is_tensor)
        return ()  # a freed graph's node, or a kind of node tensorgrad does not open

    def register_prehook(self, fn: Callable[[tuple], tuple | None]) -> autograd.RemovableHandle:
        function = _function_of(self._history)
        if function is not None:
            return _add_hook(_function_hooks(function).pre, fn)
        return _register_prehook(self, fn)

    def register_hook(self, fn: Callable[[tuple, tuple], tuple | None]) -> autograd.RemovableHandle:
        function = _function_of(self._history)
        if function is not None:
            return _add_hook(_function_hooks(function).post, fn)
        if not _is_record(self._history):
            raise NotImplementedError(f"{self._name}.register_hook: this node's graph was freed by a "
                                      "backward pass (tensorgrad keeps only its name), so no pass runs it "
                                      "again; keep the graph with retain_graph=True to hook it")
        return _register_post_hook(self, fn)


class AccumulateGrad(Node):
    """The node that adds a gradient to a leaf's `.grad` (`variable` is the leaf)."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        self._name, self._metadata, self.variable = "torch::autograd::AccumulateGrad", None, variable

    def register_prehook(self, fn: Callable[[tuple], tuple | None]) -> autograd.RemovableHandle:
        return _register_prehook(self, fn)


def _is_record(history: Any) -> bool:
    return type(history) is partial and history.func is autograd._backward


def _function_of(history: Any) -> FunctionBackward | None:
    """The application of a custom Function that `history` runs (None for any other node)."""
    if type(history) is partial and history.func in (FunctionBackward.run_one, FunctionBackward.run_hub):
        return history.args[0]
    return None


# --- one node per history: made on first access, kept while its tensor lives ---------------------

# id(tensor) -> (weak reference to it, the history the node is of, the node). Weak, and by id: a
# WeakKeyDictionary would compare tensors with their elementwise ==.
_nodes: dict[int, tuple[weakref.ref, Any, Node]] = {}
# The leaves' AccumulateGrad nodes, kept while something holds them (a node holds its leaf).
_accumulators: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def node_of(t: Tensor) -> Node | None:
    """`t.grad_fn`: None for a leaf, else t's node (the same object on each access)."""
    history = t._backward
    if history is None:
        return None
    if type(history) is partial and history.func is _hand_to_hub:  # one output of a Function's several
        hub = history.args[0]
        return _node_for(hub, hub._backward)
    return _node_for(t, history)


def _edge(t: Tensor, history: Any) -> tuple[Node, int]:
    """The `next_functions` pair of an input that got a gradient: its node when the op used it."""
    if history is None:
        return _accumulator(t), 0
    if type(history) is partial and history.func is _hand_to_hub:  # output k of a Function's several
        hub = history.args[0]
        return _node_for(hub, hub._backward), history.args[3]
    return _node_for(t, history), 0


def _accumulator(leaf: Tensor) -> AccumulateGrad:
    node = _accumulators.get(id(leaf))
    if node is None or node.variable is not leaf:
        node = _accumulators[id(leaf)] = AccumulateGrad(leaf)
    return node


def _node_for(t: Tensor, history: Any) -> Node:
    """The node of `history`, t's place in the graph (now, or when an op used t)."""
    entry = _nodes.get(id(t))
    if entry is not None and entry[0]() is t and (entry[1] is history or history is engine._graph_freed):
        return entry[2]
    known = getattr(history, "grad_fn", None) if type(history) is partial else None
    node = None if known is None else known()  # made before, for another tensor that held history
    current = t._backward
    if current is not history and current is not engine._graph_freed:  # t was changed in place since
        moved_to = getattr(history, "moved_to", None)
        holder = None if moved_to is None else moved_to()
        if holder is not None and holder is not t:
            return _node_for(holder, history)
        return node or _make(history, t)  # (no tensor holds that history as its own any more)
    if entry is not None and entry[0]() is t:
        _rehome(entry)
    node = node or _make(history, t)
    owner = id(t)
    _nodes[owner] = (weakref.ref(t, lambda _: _nodes.pop(owner, None)), history, node)
    return node


def _rehome(entry: tuple[weakref.ref, Any, Node]) -> None:
    """A tensor's node whose history an in-place op moved to another tensor: kept with that one."""
    moved_to = getattr(entry[1], "moved_to", None)
    holder = None if moved_to is None else moved_to()
    if holder is not None and holder._backward is entry[1] and id(holder) not in _nodes:
        owner = id(holder)
        _nodes[owner] = (weakref.ref(holder, lambda _: _nodes.pop(owner, None)), entry[1], entry[2])


def _make(history: Any, t: Tensor) -> OpNode:
    if _is_record(history):
        op, inputs = history.args[0], history.args[1]
        name = op_node_name(op, tuple(x._data.ndim for x in inputs), t._data.ndim)
    elif type(history) is partial and history.func in (FunctionBackward.run_one, FunctionBackward.run_hub):
        name = f"{history.args[0].name}Backward"  # PyTorch's name for a custom Function's node
    else:  # a graph freed by backward: the op's name is all that is left
        name = op_node_name(t.op, (), t._data.ndim)
    node = _node_class(name)(name, history, t)
    if type(history) is partial:  # (a weak reference: the history must not keep its node alive)
        history.grad_fn = weakref.ref(node)
    return node


# --- hooks -----------------------------------------------------------------------------------------

def _register_prehook(node: Node, fn: Callable[[tuple], tuple | None]) -> autograd.RemovableHandle:
    """A pre-hook as a gradient hook of the node's tensor: its incoming gradient is that tensor's."""
    if isinstance(node, AccumulateGrad):
        t = node.variable
    else:
        t = node._tensor()
        history = node._history
        if t is None or t._backward is not history:
            raise NotImplementedError(f"{node._name}.register_prehook: this node's gradient is no longer "
                                      "its tensor's (an in-place op moved its history, or the tensor is "
                                      "gone); register a hook on the tensor that holds it instead")
    hook = partial(_run_prehook, fn, node._name)
    hook.after_tensor_hooks = True  # (see autograd.register_hook)
    return autograd.register_hook(t, hook)


def _run_prehook(fn: Callable[[tuple], tuple | None], name: str, grad: Tensor) -> Tensor | None:
    result = fn((grad,))
    if result is None:
        return None
    if not isinstance(result, tuple) or len(result) != 1:
        raise RuntimeError(f"{name} pre-hook: expected a tuple of 1 gradient (or None), got "
                           f"{len(result) if isinstance(result, tuple) else type(result).__name__}")
    return result[0]


class _PostHooks:
    """A node's post-hooks, and the edges they wrap (put back when the last one is removed)."""

    def __init__(self, node: OpNode) -> None:
        self.hooks: dict[int, Callable[[tuple, tuple], tuple | None]] = {}
        self.name = node._name
        self.op, self.inputs, _, self.edges, *_ = node._history.args
        self.original = list(self.edges)
        self.results: list = []

    def wrap(self) -> None:
        # The edges list is the node's own (a partial's argument): edge 0 computes every input's
        # gradient and runs the hooks, the others hand out what it left (`_backward` runs them in order).
        self.edges[:] = [(t, partial(self.edge_gradient, k), *rest)
                         for k, (t, _, *rest) in enumerate(self.original)]

    def unwrap(self) -> None:
        self.edges[:] = self.original

    def edge_gradient(self, k: int, grad: Any) -> Any:
        if k == 0:
            self.results = self.run(grad)
        g = self.results[k]
        if k == len(self.results) - 1:
            self.results = []  # (the pass's arrays are not kept with the graph)
        return g

    def run(self, grad: Any) -> list:
        """Every edge's gradient, passed through the hooks as `(grad_inputs, grad_outputs)`."""
        position = {id(t): i for i, t in enumerate(self.inputs)}
        grads: list = [None] * len(self.inputs)
        for t, vjp, _, shape, dtype in self.original:
            i = position[id(t)]
            grads[i] = new_leaf(autograd._conform(autograd.edge_gradient(vjp, grad, dtype), shape, dtype,
                                                  self.op, i))
        grad_outputs = (new_leaf(grad),)
        for hook in list(self.hooks.values()):
            result = hook(tuple(grads), grad_outputs)
            if result is not None:
                grads = self.checked(result, grads)
        return [_array_of(grads[position[id(t)]], shape, dtype)
                for t, _, _, shape, dtype in self.original]

    def run_graph(self, grad: Tensor, inputs: tuple[Tensor, ...], results: Any) -> list:
        """`create_graph=True` (`higher_order`): the op's recorded gradients, one per input (None where
        none), passed through the hooks as in the usual pass."""
        grads: list = [None] * len(inputs)
        for i, (_, _, _, shape, dtype) in _edges_of(inputs, self.original, results):
            grads[i] = _conformed(results[i], shape, dtype, self.op, i)
        for hook in list(self.hooks.values()):
            result = hook(tuple(grads), (grad,))
            if result is not None:
                grads = self.checked(result, grads)
        return grads

    def checked(self, result: Any, grads: list) -> list:
        if not isinstance(result, tuple | list) or len(result) != len(grads):
            raise RuntimeError(f"{self.name} hook: expected a tuple of {len(grads)} gradients (one per "
                               f"input of the node), got {result!r:.60}")
        for i, (new, old) in enumerate(zip(result, grads, strict=True)):
            if new is not None and old is not None and tuple(new.shape) != tuple(old.shape):
                raise RuntimeError(f"{self.name} hook: the gradient of input {i} has shape "
                                   f"{tuple(new.shape)}, but the input has shape {tuple(old.shape)}")
        return list(result)


def _array_of(g: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """A hooked gradient as the array `_backward` adds (zeros where a hook returned None)."""
    if g is None:
        return np.zeros(shape, dtype)
    data = g.data if isinstance(g, Tensor) else np.asarray(g)
    return data if data.dtype == dtype else data.astype(dtype)


class _PostHookHandle(autograd.RemovableHandle):
    """`remove()` takes a node's post-hook off; the node's edges are put back with the last one."""

    def __init__(self, hooks: _PostHooks, key: int) -> None:
        self._state, self._key = hooks, key

    def remove(self) -> None:
        state = self._state
        state.hooks.pop(self._key, None)
        if not state.hooks:
            state.unwrap()


def _register_post_hook(node: OpNode, fn: Callable[[tuple, tuple], tuple | None]) -> autograd.RemovableHandle:
    history = node._history
    state = getattr(history, "post_hooks", None)  # kept on the history (a partial), as `moved_to` is
    if state is None:
        state = history.post_hooks = _PostHooks(node)
    if not state.hooks:
        state.wrap()
    key = next(autograd._hook_numbers)
    state.hooks[key] = fn
    return _PostHookHandle(state, key)


# --- a custom Function's node: its hooks run by its FunctionBackward ------------------------------

class FunctionHooks:
    """The hooks of a custom Function's node, kept as its `FunctionBackward.hooks` (None until one is
    registered), which runs them in both passes: the pre-hooks on the outputs' gradients before they
    are materialized and `backward` is called, the post-hooks on what `backward` returned."""

    def __init__(self, function: FunctionBackward) -> None:
        self.pre: dict[int, Callable[[tuple], tuple | None]] = {}
        self.post: dict[int, Callable[[tuple, tuple], tuple | None]] = {}
        self.name = f"{function.name}Backward"
        self.tensor_args = [i for i, is_tensor in enumerate(function.tensor_args) if is_tensor]
        self.shapes = {i: shape for i, _, _, shape, _ in function.edges}  # the inputs that want a gradient

    def before(self, grads: list) -> list:
        """The outputs' gradients (arrays, or tensors in the `create_graph` pass; None where an output
        got none) through the pre-hooks, given back in the same kind."""
        if not self.pre:
            return grads
        recording = any(isinstance(g, Tensor) for g in grads)
        current = tuple(g if g is None or isinstance(g, Tensor) else new_leaf(g) for g in grads)
        for hook in list(self.pre.values()):
            result = hook(current)
            if result is not None:
                current = self._checked(result, len(grads), "pre-hook", "outputs")
        if recording:
            return list(current)
        return [None if g is None else g.data if isinstance(g, Tensor) else g for g in current]

    def after(self, result: tuple, grad_outputs: list) -> tuple:
        """`backward`'s result (one per argument of forward) through the post-hooks, which see one
        gradient per tensor argument (summed to the input's shape where it was broadcast)."""
        if not self.post:
            return result
        grad_inputs = tuple(self._as_input_gradient(result[i], i) for i in self.tensor_args)
        for hook in list(self.post.values()):
            replaced = hook(grad_inputs, tuple(grad_outputs))
            if replaced is not None:
                grad_inputs = self._checked(replaced, len(grad_inputs), "hook", "inputs")
        hooked = list(result)
        for i, g in zip(self.tensor_args, grad_inputs, strict=True):
            hooked[i] = g
        return tuple(hooked)

    def _as_input_gradient(self, r: Any, i: int) -> Tensor | None:
        if r is None:
            return None
        g = r if isinstance(r, Tensor) else new_leaf(np.asarray(r))
        shape = self.shapes.get(i)
        if shape is not None and tuple(g.shape) != shape and _expandable(shape, tuple(g.shape)):
            g = g.sum_to_size(*shape) if shape else g.sum()  # (PyTorch's hooks see it so)
        return g

    def _checked(self, result: Any, n: int, kind: str, of: str) -> tuple:
        if not isinstance(result, tuple | list) or len(result) != n:
            raise RuntimeError(f"{self.name} {kind}: expected a tuple of {n} gradients (one per {of[:-1]} "
                               f"of the node's {of}), got {result!r:.60}")
        return tuple(result)


def _function_hooks(function: FunctionBackward) -> FunctionHooks:
    if function.hooks is None:
        function.hooks = FunctionHooks(function)
    return function.hooks


def _add_hook(hooks: dict, fn: Callable[..., Any]) -> autograd.RemovableHandle:
    """Add fn to one of a `FunctionHooks`' dicts; the handle's `remove()` takes it out."""
    key = next(autograd._hook_numbers)
    hooks[key] = fn
    return _DictHandle(hooks, key)


class _DictHandle(autograd.RemovableHandle):
    """`remove()` takes a custom Function node's hook off (an empty dict costs the pass one test)."""

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks, self._key = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)
