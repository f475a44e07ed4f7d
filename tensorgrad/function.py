"""`tg.autograd.Function`: a differentiable op written as a class, PyTorch's way to extend autograd.

Tutorial chapter 12 writes an op with `record`; this is the other form PyTorch users know, with
the forward and the backward as two static methods and a `ctx` between them::

    class Exp(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return grad_output * y

    y = Exp.apply(x)

`forward` runs with grad mode off on the arguments as given (tensors and anything else). Each
tensor it returns becomes a node of the graph whose parents are the tensor arguments that require
grad; `backward` is called once per backward pass with one gradient per output and returns one per
argument of `forward`.

How the nodes are laid out, so that `backward` runs once per pass even for several outputs: a
Function with one differentiable output makes that output the node (parents: the inputs). With
several, each output is a small node whose one parent is a *hub* node holding the inputs as its
parents. The hub is made first, so the engine (which runs nodes newest first) reaches it after
every output of the pass: each output hands its gradient to the hub and marks it reached, and the
hub calls `backward` once with all of them. Nothing a node holds refers back to it, so the graph
has no reference cycles, and a pass without `retain_graph` frees it (and `ctx`) as it goes.

`BackwardHook` builds `nn.Module`'s full backward hooks from the same machinery: an identity
Function around the module's inputs and another around its outputs, as PyTorch does.

The functional API (`tg.autograd.functional.jacobian`, `vjp`) sits at the end.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from scalargrad.engine import enable_grad, grad_mode, no_grad
from tensorgrad import autograd
from tensorgrad.autograd import InplaceModifiedError, bump_version, is_view, unbroadcast
from tensorgrad.device import device_of, is_array, namespace
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardHook", "BackwardHookFunction",
           "functional", "jacobian", "vjp"]


# --- ctx ------------------------------------------------------------------------------------------


class FunctionCtx:
    """The `ctx` that a Function's `forward` (or `setup_context`) fills and its `backward` reads.

    Besides its methods, `ctx` takes any attribute (`ctx.k = 3`): keep numbers and shapes there,
    and tensors in `save_for_backward`, which checks them for in-place changes (a tensor output
    kept as an attribute would also tie the graph into a cycle).
    """

    needs_input_grad: tuple[bool, ...]
    """One flag per argument of `forward`: whether it is a tensor that requires grad."""

    def __init__(self) -> None:
        self.needs_input_grad = ()
        self._to_save: tuple[Tensor | None, ...] = ()
        self._saved: tuple | None = None
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self._materialize = True
        self._name = "Function"

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (inputs, outputs or in-between values; None allowed) for `backward`.

        Call it once, in `forward` or `setup_context`. `backward` reads them as `saved_tensors`,
        which raises if one of them was changed in place since.
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save tensors (or None), but argument {i} "
                                f"is of type {type(t).__name__}; keep other values as attributes of ctx")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to `save_for_backward`, in order, checked for in-place changes."""
        if self._saved is None:  # (read inside forward: nothing is packed yet)
            return self._to_save
        for i, (t, versions, version) in enumerate(self._saved):
            if t is not None and versions[0] != version:
                raise InplaceModifiedError(
                    f"one of the tensors needed for the gradient of '{self._name}' has been modified by "
                    f"an in-place operation: saved tensor {i} (shape {tuple(t.shape)}) is at version "
                    f"{versions[0]}; expected version {version} instead. Clone it before changing it "
                    "in place, or change it after backward()")
        return tuple(t for t, _, _ in self._saved)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Say that `forward` changed these inputs in place; it must also return them.

        Each becomes the Function's output in the graph (the tensor object keeps its identity),
        and its version counter goes up, so a backward that saved its old values raises.
        """
        self._dirty = _tensors_only("mark_dirty", tensors)

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Say that these outputs get no gradient (indices, masks): they don't require grad, and
        `backward` still receives a gradient for each (zeros, or None without materializing)."""
        self._non_differentiable = _tensors_only("mark_non_differentiable", tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """With False, `backward` receives None (not zeros) for an output that got no gradient."""
        self._materialize = bool(value)


def _tensors_only(method: str, tensors: tuple) -> tuple[Tensor, ...]:
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{method} takes tensors only, but argument {i} is of type {type(t).__name__}")
    return tensors


def _same(t: Any, group: Sequence) -> bool:
    """Whether t is one of `group`, by identity (tensors compare elementwise)."""
    return any(t is u for u in group)


# --- Function -------------------------------------------------------------------------------------


class Function:
    """Base class of a differentiable op with its own forward and backward (`Function.apply`).

    Subclass it with two static methods, `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`,
    or the newer three: `forward(*args)` without ctx, `setup_context(ctx, inputs, output)` and
    `backward`. Call it as `MyFunction.apply(*args)`, never by making an instance. See the module
    docstring for an example, and `FunctionCtx` for what `ctx` offers.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # (as PyTorch: an instance is allowed but useless; calling it raises)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{type(self).__name__}: a Function is not called on an instance; use the "
                           f"class's static method: {type(self).__name__}.apply(...)")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """The computation on the arguments, with grad mode off: `forward(ctx, *args)`, or
        `forward(*args)` beside a `setup_context`. Returns a tensor or a tuple (non-tensors pass)."""
        raise NotImplementedError("You must implement the forward function for a custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        """Fill ctx from the inputs and the output of a `forward` that takes no ctx (optional)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        """The gradients of the forward's arguments (a tensor or None each) from the gradients of
        its outputs (one per output). Runs with grad mode off."""
        raise NotImplementedError("You must implement either the backward or the vjp method of a custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward  # PyTorch's alias: a Function defines one of the two

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run `forward` on `args` and record its tensor outputs in the graph (see the class)."""
        name = cls.__name__
        new_style = cls.setup_context is not Function.setup_context
        if kwargs or new_style:
            args = _bound_arguments(cls, args, kwargs, new_style)
        ctx = FunctionCtx()
        ctx._name = name
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        recording = grad_mode.enabled and any(ctx.needs_input_grad)
        with no_grad():
            if new_style:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        dirty = ctx._dirty
        for t in dirty:
            if not _same(t, args) or not _same(t, outputs):
                raise RuntimeError(f"{name}: every tensor given to mark_dirty must be an input of forward, "
                                   "changed in place, and returned as an output")
            if recording and t._requires_grad and t._backward is None:
                raise RuntimeError(f"{name}: a leaf tensor that requires grad is being used in an in-place "
                                   "operation (mark_dirty); clone it first, or work under no_grad()")
            if recording and t._requires_grad and is_view(t):
                raise RuntimeError(f"{name}: in-place change (mark_dirty) of a view ('{t.op}') of a tensor "
                                   "in the graph is not supported; clone() the view first")
            bump_version(t)
        # Packed after forward, as PyTorch packs saved tensors: the versions to hold them to.
        saved = ctx._to_save
        ctx._saved = tuple((_alias(t) if _same(t, dirty) else t, t._versions, t._versions[0])
                           if t is not None else (None, None, None) for t in saved)
        ctx._to_save = ()
        if not recording:
            return output
        outputs = _record(cls, ctx, args, outputs, saved)
        return outputs if is_tuple else outputs[0]


def _bound_arguments(cls: type, args: tuple, kwargs: dict, new_style: bool) -> tuple:
    """`apply`'s arguments as positional ones, bound by name to forward's signature (PyTorch 2
    does the same; a new-style forward also gets its defaults, as setup_context sees them)."""
    signature = inspect.signature(cls.forward)
    try:
        bound = signature.bind(*args, **kwargs) if new_style else signature.bind(None, *args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{cls.__name__}.apply: {error}") from None
    if new_style:
        bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{cls.__name__}.apply: forward's keyword-only arguments "
                        f"({', '.join(bound.kwargs)}) can't be inputs of a Function; make them positional")
    return tuple(bound.args) if new_style else tuple(bound.args[1:])


def _alias(t: Tensor) -> Tensor:
    """A leaf with t's data and version counter, cut from the graph (what `detach()` gives)."""
    out = new_leaf(t._data)
    out._versions = t._versions
    return out


def _view_base(o: Tensor, args: tuple) -> Tensor | None:
    """The tensor whose storage output `o` of forward shares, as PyTorch tracks it: an input
    returned as it is is a view of that input; a view made in forward, of its base."""
    if _same(o, args):
        return o if o._base is None else o._base
    return o._base


def _empty_like(data: Any) -> Any:
    """A 0-element array of data's kind, dtype and device: what a zero gradient is made like."""
    return np.empty_like(data, shape=(0,))


def _record(cls: type, ctx: FunctionCtx, args: tuple, outputs: tuple, saved: tuple) -> tuple:
    """The forward's outputs as graph nodes (see the module docstring for the layout); `saved`:
    what forward gave `save_for_backward`."""
    name = cls.__name__
    dirty, non_differentiable = ctx._dirty, ctx._non_differentiable
    metas, differentiable = [], []
    for k, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            metas.append(None)
            continue
        metas.append((o._data.shape, _empty_like(o._data)))
        if o._data.dtype.kind in "fc" and not _same(o, non_differentiable):
            differentiable.append(k)
    results = list(outputs)
    # A tensor output that gets no gradient but requires grad (an input passed through, marked
    # non-differentiable) is handed back detached: it is not this Function's to differentiate.
    for k, o in enumerate(outputs):
        if k not in differentiable and isinstance(o, Tensor) and o._requires_grad and not _same(o, dirty):
            results[k] = _alias(o)
    if not differentiable:
        return tuple(results)
    # The parents: the tensor arguments that require grad. A dirty one's history moves to a node
    # of its own (it is the Function's input), since the tensor itself becomes the output.
    moved: dict[int, Tensor] = {}
    parents, edges = [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and a._requires_grad:
            if _same(a, dirty):
                a = moved.setdefault(id(a), _with_history_of(a))
            parents.append(a)
            edges.append((i, a, a._backward, a._data.shape, a._data.dtype))
    parents = tuple(parents)
    node = FunctionBackward(name, ctx, _user_backward(cls), tuple(isinstance(a, Tensor) for a in args),
                            metas, parents, edges)
    if len(differentiable) == 1:  # the output is the node: no hub
        (k,) = differentiable
        backward = functools.partial(FunctionBackward.run_one, node, k)
        results[k] = _output_node(outputs[k], name, parents, backward, dirty, args)
        node.seq = results[k]._seq
        if saved:
            node.saved_outputs = _saved_outputs(saved, outputs, results, differentiable, dirty, args)
        return tuple(results)
    hub = new_leaf(metas[differentiable[0]][1])
    hub.parents, hub.op, hub._requires_grad = parents, name, True
    hub._seq = node.seq = next(autograd._creation_numbers)  # older than the outputs: it runs after them
    hub._backward = functools.partial(FunctionBackward.run_hub, node)
    for k in differentiable:
        backward = functools.partial(_hand_to_hub, hub, node.mailbox, len(metas), k)
        results[k] = _output_node(outputs[k], f"{name}[{k}]", (hub,), backward, dirty, args)
    if saved:
        node.saved_outputs = _saved_outputs(saved, outputs, results, differentiable, dirty, args)
    return tuple(results)


def _saved_outputs(saved: tuple, outputs: tuple, results: list, differentiable: list, dirty: tuple,
                   args: tuple) -> tuple:
    """(slot, output index, weak reference to the output node, its creation number) for each saved
    tensor that is a differentiable output of forward. A `create_graph=True` pass hands backward
    the output node there, as PyTorch unpacks a saved output with its grad_fn, so a backward that
    reads it (Exp's grad * y) is differentiable again. The reference is weak: ctx holding its own
    output would tie the graph into a cycle. An input returned as it is stays an input (it is
    saved as one); an in-between value of forward stays a constant, as in PyTorch."""
    found = []
    for slot, t in enumerate(saved):
        if t is None or (_same(t, args) and not _same(t, dirty)):
            continue
        k = next((k for k in differentiable if outputs[k] is t), None)
        if k is not None:
            found.append((slot, k, weakref.ref(results[k]), results[k]._seq))
    return tuple(found)


def _user_backward(cls: type) -> Callable[..., Any]:
    backward, vjp_ = cls.backward, cls.vjp
    if backward is not Function.backward and vjp_ is not Function.vjp and backward is not vjp_:
        raise RuntimeError(f"{cls.__name__}: implementing both 'backward' and 'vjp' for a custom Function "
                           "is not allowed; implement one of them")
    return vjp_ if backward is Function.backward else backward


def _with_history_of(t: Tensor) -> Tensor:
    """A node that takes t's place in the graph (its parents, backward, creation number): what a
    Function that changes t in place reads; t itself becomes the Function's output."""
    before = _alias(t)
    before.parents, before._backward, before.op, before._seq = t.parents, t._backward, t.op, t._seq
    before._requires_grad, before.label = True, t.label
    if t._backward is not None:  # ops that used t before get their gradient to t's old place
        autograd.history_moved(t._backward, before)
    return before


def _output_node(o: Tensor, op: str, parents: tuple, backward: Callable[[Any], None],
                 dirty: tuple, args: tuple) -> Tensor:
    """Output `o` of a Function as a graph node: a new tensor on o's data and version counter (an
    input returned as it is becomes a view of it), or o itself where forward changed it in place."""
    if _same(o, dirty):
        out = o
    else:
        out = _alias(o)
        out._base = _view_base(o, args)
        out._view_version = o._versions[0]
        if out._base is not None:
            # A view made by a Function has the Function's backward, not a view's, so it can't be
            # rebuilt from its base: the mark makes an in-place change of it, or a use after its
            # base changed, an error (as in PyTorch), never a gradient that skips the Function.
            backward.custom_function_view = True
    out.parents, out.op, out._backward, out._requires_grad, out._grad = parents, op, backward, True, None
    out._seq = next(autograd._creation_numbers)
    return out


def _hand_to_hub(hub: Tensor, mailbox: list, n: int, k: int, grad: Any) -> None:
    """The backward of output k (of n) of a Function with several: give its gradient to the hub.

    The gradients wait in `mailbox`, a one-element list shared with the hub's backward (not the
    hub's backward itself, which holds ctx: an output that outlives the pass must not keep the
    saved tensors alive).
    """
    if hub._grad is None:  # the first output of this pass: a fresh list, and the hub marked reached
        mailbox[0] = [None] * n
        hub._grad = hub._data  # (a 0-element array: the gradients themselves are in the mailbox)
    mailbox[0][k] = grad


class FunctionBackward:
    """One application of a Function, as its node's backward: holds ctx and the edges to the
    inputs (never the node itself), and calls the user's `backward` once per pass."""

    __slots__ = ("name", "ctx", "fn", "tensor_args", "metas", "parents", "edges", "mailbox", "seq", "hooks",
                 "saved_outputs")

    def __init__(self, name: str, ctx: FunctionCtx, fn: Callable[..., Any], tensor_args: tuple[bool, ...],
                 metas: list, parents: tuple[Tensor, ...], edges: list) -> None:
        self.name, self.ctx, self.fn, self.tensor_args = name, ctx, fn, tensor_args
        self.metas, self.parents, self.edges = metas, parents, edges
        self.mailbox: list = [None]  # the outputs' gradients of this pass (several outputs)
        self.seq = -1
        self.hooks: Any = None  # the node's pre- and post-hooks (`graph.FunctionHooks`) once it has any
        self.saved_outputs: tuple = ()  # the saved tensors that are outputs (`_saved_outputs`)

    def run_one(self, k: int, grad: Any) -> None:
        """The backward of a Function's only differentiable output, k: call `backward`."""
        grads = [None] * len(self.metas)
        grads[k] = grad
        self.call(grads)

    def run_hub(self, marker: Any) -> None:
        """The hub's backward: every output has handed in its gradient; call `backward` once."""
        grads, self.mailbox[0] = self.mailbox[0], None
        self.call(grads if grads is not None else [None] * len(self.metas))

    def call(self, grads: list) -> None:
        """Call the user's backward with one gradient per output; add its results to the inputs."""
        grad_outputs = [None if g is None else new_leaf(g) for g in self._materialized(grads)]
        with no_grad():
            result = self.user_results(grad_outputs)
        # Accumulated by autograd's one step for every node, each result as a "VJP" that gives it.
        edges = []
        for i, t, history, shape, dtype in self.edges:
            g = _checked_gradient(result[i], t, shape, dtype, self.name, i)
            if g is not None:
                if history is None:  # a leaf keeps it: its own copy (backward may return an array it shares)
                    g = autograd._leaf_grad(g, t._data)
                edges.append((t, functools.partial(_given, g), history, shape, dtype))
        autograd._backward(self.name, self.parents, [], edges, self.seq, None, None)  # (no graph_vjp, grad)

    def graph_results(self, grads: list, hub: Tensor | None = None) -> list[tuple[int, Tensor, Any, Tensor]]:
        """`create_graph=True`: the user's backward run under grad mode on the gradients as tensors
        (their graph kept), as PyTorch runs it, so that what it computes with tensor ops is
        recorded; a saved output is the output node itself there (`hub`: the Function's hub, if it
        has several outputs). One (argument index, input, its history then, gradient tensor) per result."""
        grad_outputs = [None if g is None else g if isinstance(g, Tensor) else new_leaf(g)
                        for g in self._materialized(grads)]
        ctx = self.ctx
        packed = ctx._saved
        if self.saved_outputs and packed is not None:
            ctx._saved = self._with_output_nodes(packed, hub)
        try:
            with enable_grad():
                result = self.user_results(grad_outputs)
        finally:
            ctx._saved = packed
        found = []
        for i, t, history, shape, dtype in self.edges:
            if _checked_gradient(result[i], t, shape, dtype, self.name, i) is not None:
                r = result[i]
                found.append((i, t, history, r if isinstance(r, Tensor) else new_leaf(np.asarray(r))))
        return found

    def _with_output_nodes(self, packed: tuple, hub: Tensor | None) -> tuple:
        """The packed saved tensors with each saved output replaced by its node (same data and
        version counter, so the in-place check still holds). An output node no longer alive (an
        unused output of a Function with several) is made again, as PyTorch unpacks one: a node
        on the output's data that hands its gradient to the hub."""
        slots = list(packed)
        for slot, k, ref, seq in self.saved_outputs:
            out = ref()
            t, versions, version = packed[slot]
            if out is None:
                if hub is None:  # (a one-output node is alive while a pass reaches it)
                    continue
                out = _alias(t)
                out.parents, out.op, out._requires_grad, out._seq = (hub,), f"{self.name}[{k}]", True, seq
                out._backward = functools.partial(_hand_to_hub, hub, self.mailbox, len(self.metas), k)
            slots[slot] = (out, versions, version)
        return tuple(slots)

    def _materialized(self, grads: list) -> list:
        """The outputs' gradients (after the node's pre-hooks, if any), zeros (arrays) for an output
        that got none where ctx asks for them."""
        if self.hooks is not None:
            grads = self.hooks.before(grads)
        if not self.ctx._materialize:
            return list(grads)
        return [np.zeros_like(meta[1], shape=meta[0]) if g is None and meta is not None else g
                for g, meta in zip(grads, self.metas, strict=True)]

    def user_results(self, grad_outputs: list) -> tuple:
        """The user's backward on the outputs' gradients: one result per argument of forward, checked."""
        name = self.name
        result = self.fn(self.ctx, *grad_outputs)
        result = result if isinstance(result, tuple) else (result,)
        n = len(self.tensor_args)
        if len(result) < n or any(r is not None for r in result[n:]):
            raise RuntimeError(f"function {name}.backward returned an incorrect number of gradients "
                               f"(expected {n}, one per argument of forward; got {len(result)})")
        for position, r in enumerate(result[:n]):
            if r is not None and not self.tensor_args[position]:
                raise RuntimeError(f"function {name}.backward returned a gradient different from None "
                                   f"for argument {position} of forward, which is not a tensor")
        return result[:n] if self.hooks is None else self.hooks.after(result[:n], grad_outputs)


def _given(g: Any, grad: Any) -> Any:
    return g


def _checked_gradient(r: Any, t: Tensor, shape: tuple, dtype: Any, name: str, i: int) -> Any:
    """What backward returned for argument i, as an array of t's shape and dtype (None: none)."""
    if r is None:
        return None
    g = r._data if isinstance(r, Tensor) else r
    if isinstance(g, np.generic):
        g = np.asarray(g)
    elif not is_array(g):
        raise RuntimeError(f"function {name}.backward returned a {type(r).__name__} for argument {i}; "
                           "expected a Tensor or None")
    data = t._data
    if namespace(g) is not namespace(data) or device_of(g) != device_of(data):
        raise RuntimeError(f"function {name}.backward returned a gradient for argument {i} on another "
                           f"device or array kind ({type(g).__name__} on {device_of(g)}) than the input's "
                           f"({type(data).__name__} on {device_of(data)})")
    if g.shape != shape:
        if not _expandable(shape, g.shape):
            raise RuntimeError(f"Function {name}.backward returned an invalid gradient at index {i} - got "
                               f"{list(g.shape)} but expected shape compatible with {list(shape)}")
        g = unbroadcast(g, shape)
    return g if g.dtype == dtype else g.astype(dtype)


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether `shape` broadcasts to `target` (so a gradient of `target`'s shape sums back to it)."""
    if len(shape) > len(target):
        return False
    return all(n == 1 or n == m for n, m in zip(shape[::-1], target[::-1], strict=False))


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a Function's `backward` as not differentiable itself: it runs with grad mode off, and
    under `create_graph=True` its results are nodes whose own backward raises, naming the Function,
    instead of gradients that would silently miss a term. (PyTorch marks them so where a gradient
    output requires grad; tensorgrad also where a saved tensor does, which is how a Hessian through
    the Function would reach it.)"""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        recording = grad_mode.enabled  # (the usual pass runs backward with grad mode off)
        with no_grad():
            result = fn(ctx, *args)
        if not recording:
            return result
        saved = [t for t, _, _ in ctx._saved or () if t is not None]
        sources = tuple(t for t in (*args, *saved) if isinstance(t, Tensor) and t._requires_grad)
        if not sources:
            return result
        from tensorgrad.higher_order import differentiable_once

        name = getattr(ctx, "_name", "Function")
        results = result if isinstance(result, tuple) else (result,)
        marked = tuple(differentiable_once(name, r._data, sources) if isinstance(r, Tensor) else r
                       for r in results)
        return marked if isinstance(result, tuple) else marked[0]

    return wrapper


# --- nn.Module's full backward hooks --------------------------------------------------------------


class BackwardHookFunction(Function):
    """The identity on tensors, whose backward hands the gradients to a callback first: what
    `BackwardHook` puts around a module's inputs and outputs (PyTorch's BackwardHookFunction)."""

    @staticmethod
    def forward(ctx: FunctionCtx, on_backward: Callable[..., tuple], materialize: bool,
                *tensors: Tensor) -> tuple[Tensor, ...]:
        """The tensors as they are; those that don't require grad stay out of the graph."""
        ctx.on_backward = on_backward
        ctx.set_materialize_grads(materialize)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        """The gradients, as the callback passes (or replaces) them."""
        return (None, None, *ctx.on_backward(grads))


def _pack_with_none(index: list[int], values: Sequence, size: int) -> tuple:
    packed: list[Any] = [None] * size
    for i, value in zip(index, values, strict=True):
        packed[i] = value
    return tuple(packed)


class BackwardHook:
    """The full backward hooks of one call of a module (PyTorch's `torch.utils.hooks.BackwardHook`).

    `setup_input_hook` wraps the module's tensor arguments in one `BackwardHookFunction` and
    `setup_output_hook` its tensor outputs in another. In a backward pass the outputs' node runs
    first: it keeps the gradients of the outputs (after the pre-hooks, which may replace them);
    then the inputs' node calls each hook as `hook(module, grad_input, grad_output)`, once, and a
    tuple a hook returns replaces `grad_input`. As in PyTorch, an argument that is not a tensor
    has None in `grad_input`, a tensor that gets no gradient (it does not require grad, or forward
    did not use it) has zeros, and where no argument requires grad every entry is None (the hooks
    then run at the outputs' node). An output that gets no gradient has None in `grad_output`.
    """

    def __init__(self, module: Any, hooks: list[Callable[..., Any]],
                 pre_hooks: list[Callable[..., Any]]) -> None:
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = self.n_outputs = 0
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    def setup_input_hook(self, args: tuple) -> tuple:
        """The module's arguments, its tensors passed through the inputs' identity node."""
        self.n_inputs = len(args)
        args, self.input_index = self._apply_on_tensors(args, self._input_backward, True)
        return args

    def setup_output_hook(self, output: Any) -> Any:
        """The module's output (a tensor or a tuple), its tensors passed through the outputs' node."""
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        self.n_outputs = len(outputs)
        outputs, self.output_index = self._apply_on_tensors(outputs, self._output_backward, False)
        if self.output_index is not None:
            # Not views of the forward's result, unlike PyTorch's: an in-place op right after the
            # module (`nn.ReLU(inplace=True)`) then rewires the output itself, whose old history,
            # this node, keeps receiving the gradient, so the hooks still run. (PyTorch refuses that
            # in-place op; as a view it would reach the base and bypass the hooks.) The result is
            # the module's own, and is not seen after this.
            for i in self.output_index:
                outputs[i]._base = None
        return outputs if is_tuple else outputs[0]

    @staticmethod
    def _apply_on_tensors(args: tuple, on_backward: Callable[..., tuple],
                          materialize: bool) -> tuple[tuple, list[int] | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (grad_mode.enabled and any(args[i]._requires_grad for i in index)):
            return args, None
        new = BackwardHookFunction.apply(on_backward, materialize, *[args[i] for i in index])
        replaced = list(args)
        for i, t in zip(index, new, strict=True):
            replaced[i] = t
        return tuple(replaced), index

    def _output_backward(self, grads: tuple) -> tuple:
        """The outputs' node: keep grad_output (pre-hooks first); call the hooks now if no input
        requires grad (no inputs' node will run)."""
        assert self.output_index is not None
        grad_outputs = _pack_with_none(self.output_index, grads, self.n_outputs)
        grad_outputs = _replaced_by_hooks(self.pre_hooks, lambda hook, g: hook(self.module, g), grad_outputs,
                                          "Backward pre hook", "grad_output")
        self.grad_outputs = grad_outputs
        if self.input_index is None:
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                result = hook(self.module, grad_inputs, grad_outputs)
                if result is not None and not (isinstance(result, tuple) and all(r is None for r in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                       "always return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_index)

    def _input_backward(self, grads: tuple) -> tuple:
        """The inputs' node: call the hooks with grad_input and the kept grad_output."""
        assert self.input_index is not None
        if self.grad_outputs is None:  # reached without passing through the module's outputs
            return grads
        grad_inputs = _pack_with_none(self.input_index, grads, self.n_inputs)
        grad_outputs = self.grad_outputs
        grad_inputs = _replaced_by_hooks(self.hooks, lambda hook, g: hook(self.module, g, grad_outputs),
                                         grad_inputs, "Backward hook", "grad_input")
        self.grad_outputs = None
        return tuple(grad_inputs[i] for i in self.input_index)


def _replaced_by_hooks(hooks: Any, call: Callable[[Any, tuple], Any], grads: tuple, who: str,
                       name: str) -> tuple:
    """`grads` after each hook in turn (`call(hook, grads)`): a result that is not None replaces
    them, and must have as many entries, as PyTorch checks."""
    for hook in hooks:
        result = call(hook, grads)
        if result is None:
            continue
        if len(result) != len(grads):
            raise RuntimeError(f"{who} returned an invalid number of {name}, got {len(result)}, but "
                               f"expected {len(grads)}")
        grads = tuple(result)
    return grads


# --- tg.autograd.functional: jacobian and vjp of a function ------------------------------------------


def _as_tuple(value: Any, what: str, caller: str) -> tuple[bool, tuple]:
    """(whether `value` was a tuple, value as a tuple), every element checked to be a Tensor (a list
    is not a tuple here: PyTorch refuses it)."""
    is_tuple = isinstance(value, tuple)
    values = tuple(value) if is_tuple else (value,)
    for v in values:
        if not isinstance(v, Tensor):
            raise TypeError(f"The {what} given to {caller} must be either a Tensor or a tuple of Tensors but "
                            f"the given {what} has type {type(v if is_tuple else value)}.")
    return is_tuple, values


def _prepared(inputs: Any, caller: str, create_graph: bool = False) -> tuple[bool, tuple[Tensor, ...]]:
    """The inputs as fresh leaves that require grad (the caller's own tensors are not touched).
    With `create_graph`, an input that requires grad stays in its graph (a view of it), so the
    results can be differentiated with respect to it, as in PyTorch."""
    is_tuple, inputs = _as_tuple(inputs, "inputs", caller)
    prepared = []
    for t in inputs:
        if create_graph and t._requires_grad:
            prepared.append(t.view_as(t))
            continue
        if t._data.dtype.kind not in "fc":
            raise RuntimeError(f"{caller}: only Tensors of floating point dtype can require gradients, got "
                               f"{t.dtype}")
        leaf = _alias(t)
        leaf._requires_grad = True
        prepared.append(leaf)
    return is_tuple, tuple(prepared)


def _outputs_of(func: Callable[..., Any], inputs: tuple[Tensor, ...], caller: str) -> tuple[bool, tuple]:
    with enable_grad():
        output = func(*inputs)
    return _as_tuple(output, "outputs of the user-provided function", caller)


def _gradients(outputs: Sequence[Tensor], seeds: Sequence[Any], inputs: tuple[Tensor, ...], strict: bool,
               caller: str, output_index: int | None = None, retain: bool = False,
               create_graph: bool = False) -> list[Tensor]:
    """d(sum of outputs times seeds)/d(each input), as tensors (with their graph if `create_graph`,
    detached otherwise); zeros for an input it does not reach (with `strict`, an error naming it)."""
    differentiable = [(out, seed) for out, seed in zip(outputs, seeds, strict=True) if out._requires_grad]
    grads: tuple = (None,) * len(inputs)
    wanted = [i for i, t in enumerate(inputs) if t._requires_grad]
    if differentiable and wanted:
        found = autograd.grad([out for out, _ in differentiable], [inputs[i] for i in wanted],
                              [seed for _, seed in differentiable], retain_graph=retain or create_graph,
                              create_graph=create_graph, allow_unused=True)
        grads = _pack_with_none(wanted, found, len(inputs))
    results = []
    for i, (t, g) in enumerate(zip(inputs, grads, strict=True)):
        if g is None:
            if strict:
                which = "" if output_index is None else f"Output {output_index} of "
                raise RuntimeError(f"{caller}: {which or 'The output of '}the user-provided function is "
                                   f"independent of input {i}. This is not allowed in strict mode.")
            results.append(new_leaf(np.zeros_like(t._data)))
        else:
            results.append(g if create_graph else new_leaf(g._data))
    return results


def _results(values: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """The function's outputs as the functional API returns them: detached, unless `create_graph`."""
    return values if create_graph else tuple(_alias(v) for v in values)


def _cotangents(v: Any, values: tuple[Tensor, ...], values_tuple: bool, caller: str,
                subject: str) -> list[Any]:
    """v checked against the values it weighs (one per value, of its shape; `subject` names them in
    errors). v may be None only for a single one-element value, which it then weighs by 1."""
    if v is None:
        if values_tuple or values[0].numel() != 1:
            raise RuntimeError(f"{caller}: The vector v can only be None if the {subject} is a single Tensor "
                               "with a single element.")
        return [np.ones_like(values[0]._data)]
    _, vs = _as_tuple(v, "v", caller)
    if len(vs) != len(values):
        raise RuntimeError(f"{caller}: v has {len(vs)} elements, but the {subject} has {len(values)}")
    for value, seed in zip(values, vs, strict=True):
        if seed.shape != value.shape:
            raise RuntimeError(f"{caller}: v has invalid size: should be {tuple(value.shape)} but got "
                               f"{tuple(seed.shape)}.")
    return list(vs)


def _check_strict_outputs(outputs: tuple[Tensor, ...], caller: str) -> None:
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(f"{caller}: Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable manner from "
                               "the input when running in strict mode.")


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(*inputs), v^T J): the vector-Jacobian product of `func` at `inputs`, as
    `torch.autograd.functional.vjp`. `v` has the outputs' structure and shapes (None for a
    function with one one-element output); the product has the inputs' structure. An input
    the outputs do not depend on gets zeros (an error with `strict`). With `create_graph`, the
    results can be differentiated again (with respect to the inputs and v)."""
    inputs_tuple, inputs = _prepared(inputs, "vjp", create_graph)
    outputs_tuple, outputs = _outputs_of(func, inputs, "vjp")
    seeds = _cotangents(v, outputs, outputs_tuple, "vjp", "output of the user-provided function")
    if strict:
        _check_strict_outputs(outputs, "vjp")
    grads = _gradients(outputs, seeds, inputs, strict, "vjp", create_graph=create_graph)
    results = _results(outputs, create_graph)
    return (results if outputs_tuple else results[0]), (tuple(grads) if inputs_tuple else grads[0])


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(*inputs), J v): the Jacobian-vector product, as `torch.autograd.functional.jvp`. `v` has
    the inputs' structure (None for one one-element input). Computed as PyTorch does, by the
    "double vjp": u^T J for a u that requires grad is linear in u, and its gradient with respect to
    u, weighted by v, is J v. So every op of func needs a graph gradient (`higher_order`)."""
    inputs_tuple, inputs = _prepared(inputs, "jvp", create_graph)
    seeds_in = _cotangents(v, inputs, inputs_tuple, "jvp", "input to the user-provided function")
    outputs_tuple, outputs = _outputs_of(func, inputs, "jvp")
    if strict:
        _check_strict_outputs(outputs, "jvp")
    dummies = [new_leaf(np.zeros_like(out._data)).requires_grad_() for out in outputs]
    with enable_grad():
        vjps = _gradients(outputs, dummies, inputs, strict, "jvp", create_graph=True)
    pairs = [(g, seed) for g, seed in zip(vjps, seeds_in, strict=True) if g._requires_grad]
    products = _gradients([g for g, _ in pairs], [seed for _, seed in pairs], tuple(dummies), False, "jvp",
                          create_graph=create_graph) if pairs else [new_leaf(np.zeros_like(d._data))
                                                                    for d in dummies]
    results = _results(outputs, create_graph)
    return (results if outputs_tuple else results[0]), (tuple(products) if outputs_tuple else products[0])


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(*inputs), v^T H): the vector-Hessian product of a function with one one-element output,
    as `torch.autograd.functional.vhp`: the gradient, computed with a graph, differentiated again
    with weights v (the inputs' structure)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(*inputs), H v): the Hessian-vector product, as `torch.autograd.functional.hvp`. The
    Hessian of a twice-differentiable function is symmetric, so H v is v^T H: one double pass."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool,
                     caller: str) -> tuple[Any, Any]:
    inputs_tuple, inputs = _prepared(inputs, caller, create_graph)
    seeds = _cotangents(v, inputs, inputs_tuple, caller, "input to the user-provided function")
    outputs_tuple, outputs = _outputs_of(func, inputs, caller)
    output = _single_element(outputs, outputs_tuple, caller)
    if strict:
        _check_strict_outputs(outputs, caller)
    with enable_grad():
        grads = _gradients([output], [None], inputs, strict, caller, create_graph=True)
    pairs = [(g, seed) for g, seed in zip(grads, seeds, strict=True) if g._requires_grad]
    if pairs:
        found = _gradients([g for g, _ in pairs], [seed for _, seed in pairs], inputs, strict, caller,
                           create_graph=create_graph)
    else:
        if strict:
            raise RuntimeError(f"{caller}: The jacobian of the user-provided function is independent of "
                               "input 0. This is not allowed in strict mode.")
        found = [new_leaf(np.zeros_like(t._data)) for t in inputs]
    (result,) = _results((output,), create_graph)
    return result, (tuple(found) if inputs_tuple else found[0])


def _single_element(outputs: tuple[Tensor, ...], outputs_tuple: bool, caller: str) -> Tensor:
    if outputs_tuple or outputs[0].numel() != 1:
        raise RuntimeError(f"{caller}: The function given to {caller} should return a single Tensor with a "
                           "single element")
    return outputs[0]


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a function with one one-element output, as `torch.autograd.functional.hessian`:
    the Jacobian of its gradient (computed with a graph). For one input a tensor of shape
    input.shape * 2; for a tuple of inputs a tuple of tuples, block (i, j) of shape
    inputs[i].shape + inputs[j].shape."""
    is_tuple, _ = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs: Tensor) -> Any:
        outputs_tuple, outputs = _outputs_of(func, xs, "hessian")
        output = _single_element(outputs, outputs_tuple, "hessian")
        if strict:
            _check_strict_outputs(outputs, "hessian")
        grads = _gradients([output], [None], xs, strict, "hessian", create_graph=True)
        return tuple(grads) if is_tuple else grads[0]

    return jacobian(gradient, inputs, create_graph, strict, vectorize, outer_jacobian_strategy)


class StrategyError(ValueError, AssertionError):
    """An unknown `strategy` for `jacobian` (PyTorch asserts: an AssertionError there)."""


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of `func` at `inputs`, as `torch.autograd.functional.jacobian`: for output i and
    input j a tensor of shape `outputs[i].shape + inputs[j].shape`; a tensor for one output and
    one input, a tuple over the inputs (or over the outputs) where one side is a tuple, and a tuple
    of tuples (outputs, then inputs) where both are. One backward pass per output element, reverse
    mode (`vectorize` only changes how PyTorch batches the passes, so it is accepted and ignored).
    `strategy="forward-mode"` gives the same Jacobian (here also in reverse mode) and, as in
    PyTorch, needs `vectorize=True`. With `create_graph`, the Jacobian can be differentiated
    again (`hessian` is built so)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise StrategyError(f'jacobian: expected strategy to be either "forward-mode" or "reverse-mode", '
                            f"got {strategy!r}")
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("jacobian: computing the Jacobian with strategy='forward-mode' is only "
                                  "implemented for vectorize=True (as in PyTorch)")
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    inputs_tuple, inputs = _prepared(inputs, "jacobian", create_graph)
    outputs_tuple, outputs = _outputs_of(func, inputs, "jacobian")
    rows = []
    for index, out in enumerate(outputs):
        if strict and not out._requires_grad:
            raise RuntimeError(f"jacobian: Output {index} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable manner from the "
                               "input when running in strict mode.")
        per_element: list[list[Tensor]] = [[] for _ in inputs]
        n = out.numel()
        if n == 0:  # (PyTorch stacks an empty list of rows)
            raise (IndexError if vectorize else RuntimeError)(
                f"jacobian: output {index} of the user-provided function has no elements: stack expects a "
                "non-empty TensorList")
        for j in range(n):
            seed = np.zeros_like(out._data, shape=(n,))
            seed[j] = 1
            seed = seed.reshape(out.shape)
            last = index == len(outputs) - 1 and j == n - 1  # (the outputs may share a graph)
            grads = _gradients([out], [seed], inputs, strict, "jacobian", index, retain=not last,
                               create_graph=create_graph)
            for column, g in zip(per_element, grads, strict=True):
                column.append(g)
        rows.append(_jacobian_row(out, inputs, per_element, inputs_tuple, create_graph))
    if strategy == "forward-mode" and inputs_tuple:  # (PyTorch's forward mode returns lists there)
        rows = [list(row) for row in rows]
        return rows if outputs_tuple else rows[0]
    return tuple(rows) if outputs_tuple else rows[0]


def _jacobian_row(out: Tensor, inputs: tuple[Tensor, ...], per_element: list[list[Tensor]],
                  inputs_tuple: bool, create_graph: bool) -> Any:
    """One output's blocks, of shape out.shape + input.shape: its elements' gradients stacked."""
    from tensorgrad.movement import stack  # (movement imports this module's package)

    row = []
    for t, column in zip(inputs, per_element, strict=True):
        shape = tuple(out.shape) + tuple(t.shape)
        if not column:  # an output with no elements
            row.append(new_leaf(np.zeros_like(t._data, shape=shape)))
        elif create_graph:
            row.append(stack(column).reshape(*shape))
        else:
            row.append(new_leaf(np.stack([g._data for g in column]).reshape(shape)))
    return tuple(row) if inputs_tuple else row[0]


functional = SimpleNamespace(jacobian=jacobian, vjp=vjp, jvp=jvp, hessian=hessian, hvp=hvp, vhp=vhp)
functional.__doc__ = ("`tg.autograd.functional`: `jacobian`, `hessian`, `vjp`, `jvp`, `vhp` and `hvp` of a "
                      "function, as `torch.autograd.functional`.")
