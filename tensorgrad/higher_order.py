"""Gradients of gradients: the backward pass that records a graph (`create_graph=True`).

The usual pass (`autograd.record`'s `_backward`, run by the engine) computes each gradient with
numpy: fast, and final. To differentiate a gradient again (a gradient penalty, a Hessian-vector
product, `tg.func.hessian`) the gradient must itself be a graph node. This pass walks the same
graph in the same order, but hands each node its gradient as a tensor and calls the op's
`graph_vjp(grad, out, *inputs)`: its gradient formulas written with tensor ops, so every
multiplication of the chain rule is recorded like any forward op. It is PyTorch's double backward,
where each derivatives.yaml formula is itself built from differentiable ops.

An op without a `graph_vjp` is differentiable once, as a PyTorch Function marked
`once_differentiable`: the pass computes its gradient with the numpy formula, and a backward pass
that reaches that gradient later raises, naming the op, instead of silently missing a term.

Only `autograd.grad` (and what builds on it: `autograd.functional`, `tg.func`) takes
`create_graph=True`: a leaf's `.grad` is a numpy array in tensorgrad, so it can't carry a graph.
"""

from __future__ import annotations

from functools import partial
from operator import attrgetter
from typing import Any

import numpy as np

from scalargrad import engine
from scalargrad.engine import enable_grad
from tensorgrad import autograd
from tensorgrad.tensor import Tensor, new_leaf


def graph_gradients(outputs: list[Tensor], seeds: list[Tensor], retain_graph: bool,
                    after_hooks: set[int] = frozenset()) -> dict[int, Tensor]:
    """The gradient of sum(output * seed) with respect to every node under the outputs, as tensors
    that carry their own graph, keyed by the node's id (a node with no path to the outputs is
    absent). Tensor hooks run on what each inner node passes on, as in the usual pass; the
    gradient kept for an inner node is the one before them, or, for the ids in `after_hooks`, the
    one after them (PyTorch's autograd.grad returns each, by `autograd._leads_to_another`)."""
    grads: dict[int, Tensor] = {}
    for out, seed in zip(outputs, seeds, strict=True):
        _accumulate(grads, out, seed)
    inner = {id(node): node for out in outputs for node in engine.creation_order(out)}
    order = sorted(inner.values(), key=attrgetter("_seq"))  # (see engine.creation_order)
    with enable_grad():
        while order:
            node = order.pop()  # the newest first: every node after all the ops that used it
            grad = grads.get(id(node))
            if type(grad) is _Mail:  # a Function's hub: its outputs' gradients
                _step(node, grad, grads)
            elif grad is not None:
                hooked = _hooked(node, grad)
                if id(node) in after_hooks:  # (no op adds to a node after its own step)
                    grads[id(node)] = hooked
                _step(node, hooked, grads)
            if not retain_graph:
                node._backward = engine._graph_freed
                node.parents = ()
    return grads


def leaf_gradient(t: Tensor, grads: dict[int, Tensor]) -> Tensor | None:
    """A node's gradient from `graph_gradients`: a leaf's through its hooks, an inner node's as kept."""
    grad = grads.get(id(t))
    return grad if grad is None or t._backward is not None else _hooked(t, grad)


def _step(node: Tensor, grad: Tensor, grads: dict[int, Tensor]) -> None:
    """One node's chain rule, recorded: the op's gradient for each input, added to what it has."""
    history = node._backward
    if type(history) is not partial or history.func is not autograd._backward:
        _function_step(node, history, grad, grads)
        return
    op, inputs, checks, edges, seq, graph_vjp = history.args
    for versions, version in checks:
        if versions[0] != version:
            autograd._raise_modified(op, version, versions[0])
    post_hooks = getattr(history, "post_hooks", None)  # (`graph`'s, once the node had a post-hook)
    if post_hooks is not None and post_hooks.hooks:
        edges = post_hooks.original  # (the usual pass's edges are wrapped to run the hooks there)
    if graph_vjp is None:
        results = _once_differentiable(op, inputs, edges, grad)
    else:
        results = graph_vjp(grad, node, *inputs)
    if post_hooks is not None and post_hooks.hooks:
        results = post_hooks.run_graph(grad, inputs, results)
    for i, (t, _, history_then, shape, dtype) in _edges_of(inputs, edges, results):
        if t._backward is not history_then:  # t was changed in place since op used it
            t = autograd._holder_of(history_then, t, op, seq)
        g = _conformed(results[i], shape, dtype, op, i)
        if autograd._checking_nan:
            _check_nan(op, i, g, grad)
        _accumulate(grads, t, g)


# The graph VJPs that hold for complex numbers when conjugated (`conjugated_graph`), each checked
# against PyTorch's second derivatives with complex inputs (tests/tensorgrad/test_complex_double_backward.py).
# Most graph VJPs were written for real numbers, and the formula of a holomorphic op (exp, *, @) is
# right for complex ones as it stands; but an op whose numpy VJP treats complex numbers apart
# (PyTorch's formula stated directly, a branch cut, a conjugate transpose) needs a graph VJP of the
# same form first (the decompositions': `linalg._pytorch_graph`). Until it is listed here, such an
# op stays differentiable once with complex numbers.
COMPLEX_READY_GRAPHS = frozenset(f"tensorgrad.{name}" for name in (
    *(f"elementwise._{op}_graph" for op in (
        "add", "sub", "mul", "div", "neg", "pow", "pow_scalar", "reciprocal", "square", "sqrt", "rsqrt",
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
        "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "where", "complex_abs",
        "sgn")),
    *(f"movement._{op}" for op in (
        "as_is", "reshaped_back", "T_graph", "transpose_graph", "permute_graph", "flip_graph", "roll_graph",
        "repeat_graph", "cat_graph", "stack_graph", "triangle_graph", "conj_graph", "real_graph",
        "imag_graph", "view_as_real_graph", "view_as_complex_graph", "complex_graph", "polar_graph",
        "complex_angle_graph")),
    "indexing._linear_back", "indexing._masked_fill_graph", "indexing._scatter_graph",
    *(f"indexing._{op}_graph" for op in (
        "index_put", "index_add", "index_copy", "masked_scatter", "put", "written_part",
        "as_strided_scatter")),
    "movement._rot90_graph", "movement._block_diag_graph",
    "inplace._as_strided_graph", "inplace._written_graph", "inplace._inside_graph", "inplace._outside_graph",
    "inplace._flat_graph", "inplace._copy_graph",
    "matmul._matmul_graph", "matmul._einsum_graph", "matmul._linear_graph",
    "reduce._spread_graph", "reduce._sum_all_graph", "reduce._prod_graph", "reduce._cumprod_graph",
    "reduce._logsumexp_graph", "reduce._norm_graph", "reduce._extreme_norm_graph",
    "reduce._nuclear_norm_graph", "reduce._var_graph", "reduce._std_graph",
    "reduce._complex_logcumsumexp_graph",
    "linalg._inv_graph", "linalg._det_graph", "linalg._logdet_graph", "linalg._solve_graph",
    "linalg._matrix_exp_graph", "linalg._pinv_graph", "linalg._solve_triangular_graph",
    "linalg._complex_sign_graph", "linalg._lstsq_graph", "linalg._residuals_graph", "linalg._lu_factor_graph",
    "linalg._zero_graph",
    *(f"linalg._{op}_graph" for op in (
        "cholesky", "cholesky_solve", "cholesky_inverse", "qr_q", "qr_r", "svd_u", "svd_s", "svd_vh",
        "eigenvalues", "eigenvectors", "eig_values", "eig_vectors")),
    "tensor._cast_back",
    "fft._c2c_graph", "fft._r2c_graph", "fft._c2r_graph",
    # linear ops (real coefficients, the same conjugated or not) and constants
    "higher_order._linear_graph", "higher_order._forward_graph", "higher_order._zero_graph",
))


def complex_graph(graph_vjp: Any) -> Any:
    """`graph_vjp` for an op where complex numbers are involved: in PyTorch's convention
    (`conjugated_graph`) where it is listed in COMPLEX_READY_GRAPHS, else None (the op is then
    differentiable once, its second pass raising with the op's name)."""
    function = getattr(graph_vjp, "func", graph_vjp)  # (a partial's function)
    name = f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', '')}"
    return partial(conjugated_graph, graph_vjp) if name in COMPLEX_READY_GRAPHS else None


def conjugated_graph(graph_vjp: Any, grad: Tensor, out: Tensor, *inputs: Tensor) -> tuple:
    """An op's `graph_vjp` in PyTorch's convention for complex numbers, with tensor ops: what
    `autograd._conjugated` and `autograd._into_real` do to its numpy VJPs (see the comment above
    `autograd.note_dtype`), recorded, so the gradient of a complex op can be differentiated again.

    A complex input gets conj(graph_vjp(conj(grad))). A real input gets the real part of the same
    where that is complex, and graph_vjp(grad) as it stands where it is real (an op that splits a
    complex gradient into real numbers itself, like view_as_complex)."""
    if grad.dtype.kind != "c":  # a real output: conj(grad) is grad
        return tuple(_in_convention(r, x) for r, x in zip(graph_vjp(grad, out, *inputs), inputs, strict=True))
    results = list(graph_vjp(grad.conj(), out, *inputs))
    plain = None
    for i, (r, x) in enumerate(zip(results, inputs, strict=True)):
        if r is not None and r.dtype.kind != "c" and x.dtype.kind != "c":
            if plain is None:  # (the op's formulas recorded a second time, for these inputs only)
                plain = graph_vjp(grad, out, *inputs)
            results[i] = plain[i]
        else:
            results[i] = _in_convention(r, x)
    return tuple(results)


def _in_convention(r: Tensor | None, x: Tensor) -> Tensor | None:
    """A graph VJP's result r for input x, as `conjugated_graph` says: conj(r) into a complex x, its
    real part into a real one."""
    if r is None or r.dtype.kind != "c":
        return r
    return r.conj() if x.dtype.kind == "c" else r.real


def _edges_of(inputs: tuple[Tensor, ...], edges: list, results: list | tuple | None = None) -> Any:
    """(input index, edge) for each input that has an edge (and a result, when `results` are
    given). The edges are the inputs that wanted a gradient, in order: both lists walked together."""
    k = 0
    for i, t in enumerate(inputs):
        if k < len(edges) and edges[k][0] is t and (results is None or results[i] is not None):
            yield i, edges[k]
            k += 1


def _check_nan(op: str, i: int, g: Tensor, grad: Tensor) -> None:
    """Anomaly detection in the recording pass: the first op whose gradient made a nan, named."""
    if autograd._has_nan(g._data) and not autograd._has_nan(grad._data):
        raise RuntimeError(f"Function '{op}' returned nan values in its {i}th output: the gradient it sent "
                           f"to its input {i} (of shape {tuple(g.shape)}) holds nan, recorded with "
                           "create_graph=True; its incoming gradient has no nan")


class _Mail(list):
    """The gradients of a multi-output Function's outputs, gathered for its hub (one per output)."""


def _function_step(node: Tensor, history: Any, grad: Any, grads: dict[int, Any]) -> None:
    """The step of a custom `autograd.Function`'s node: its user backward, run under grad mode (see
    `FunctionBackward.graph_results`). An output of a Function with several hands its gradient to
    the Function's hub, which runs the backward once for all of them."""
    from tensorgrad.function import FunctionBackward, _hand_to_hub  # (imported late: it imports the ops)

    if history.func is _hand_to_hub:
        hub, _, n, k = history.args
        mail = grads.setdefault(id(hub), _Mail([None] * n))
        mail[k] = grad if mail[k] is None else mail[k] + grad
        return
    if history.func is FunctionBackward.run_one:
        function, k = history.args
        outputs = [None] * len(function.metas)
        outputs[k] = grad
    elif history.func is FunctionBackward.run_hub:
        (function,) = history.args
        outputs = list(grad)
    else:
        raise NotImplementedError(f"create_graph=True: the node '{node.op}' has a backward function that "
                                  "can't be recorded as a graph")
    hub = node if history.func is FunctionBackward.run_hub else None
    for i, t, history_then, r in function.graph_results(outputs, hub):
        if t._backward is not history_then:  # t was changed in place since the Function used it
            t = autograd._holder_of(history_then, t, function.name, function.seq)
        _accumulate(grads, t, _conformed(r, t.shape, t.dtype, function.name, i))


def _conformed(g: Any, shape: tuple[int, ...], dtype: Any, op: str, index: int) -> Tensor:
    """A graph VJP's result as input `index`'s gradient: summed back to its shape, in its dtype."""
    if not isinstance(g, Tensor):
        raise TypeError(f"the graph gradient function of '{op}' for input {index} returned "
                        f"{type(g).__name__}; it must return a Tensor")
    if g.shape != shape:
        g = g.sum_to_size(*shape) if shape else g.sum()
    return g if g.dtype == dtype else g.to(dtype)


def _accumulate(grads: dict[int, Tensor], t: Tensor, g: Tensor) -> None:
    before = grads.get(id(t))
    grads[id(t)] = g if before is None else before + g


def _once_differentiable(op: str, inputs: tuple[Tensor, ...], edges: list,
                         grad: Tensor) -> list[Tensor | None]:
    """The gradients of an op that has no graph VJP: the numpy formulas' values, as nodes whose own
    gradient raises (they depend on the incoming gradient and the op's inputs, through formulas
    tensorgrad can't differentiate)."""
    results: list[Tensor | None] = [None] * len(inputs)
    refuse = partial(_refuse_second_pass, op)  # (one for all the inputs)
    for i, (_, vjp, _, shape, dtype) in _edges_of(inputs, edges):
        value = autograd._conform(autograd.edge_gradient(vjp, grad._data, dtype), shape, dtype, op, i)
        results[i] = differentiable_once(op, value, (grad, *inputs), refuse)
    return results


def differentiable_once(op: str, value: Any, sources: tuple[Tensor, ...],
                        refuse: Any = None) -> Tensor:
    """`value`, a gradient computed from `sources` by a formula that is not recorded, as a node of
    them whose own backward raises, naming `op` (PyTorch's `once_differentiable`)."""
    refuse = refuse or partial(_refuse_second_pass, op)
    return autograd.record(value, f"{op} backward", sources, *[refuse] * len(sources))


def _refuse_second_pass(op: str, grad: Any) -> None:
    raise RuntimeError(f"the gradient of '{op}' can't be differentiated: tensorgrad computes it with a "
                       "formula that is not recorded as a graph (an op without graph_vjp, or a Function "
                       "whose backward is marked once_differentiable), so create_graph=True goes through "
                       "it once only")


def _hooked(t: Tensor, grad: Tensor) -> Tensor:
    """grad through t's tensor hooks, in the order they were registered."""
    hooks = autograd._hooks_of(t)
    if not hooks:
        return grad
    for hook in list(hooks.values()):
        out = hook(grad)
        if out is None:
            continue
        if not isinstance(out, Tensor) or out.shape != grad.shape:
            raise RuntimeError(f"hook: a gradient hook must return a tensor of the gradient's shape "
                               f"{grad.shape} or None, got {getattr(out, 'shape', type(out).__name__)}")
        grad = out
    return grad


def linear_graph(op: str, vjp: Any, forward: Any) -> Any:
    """The `graph_vjp` of a linear op of one input (slicing, indexing, padding, flipping...), from its
    numpy `vjp` and its `forward` as a tensor function.

    The gradient of a linear map L is the transposed map applied to the incoming gradient, L^T g:
    `vjp(g)`. Recorded as an op of g, its own gradient is L h, the op itself applied to h: the
    forward. So the pair (vjp, forward) differentiates to any order without a formula of its own.
    """
    return partial(_linear_graph, op, vjp, forward)


def _linear_graph(op: str, vjp: Any, forward: Any, grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (autograd.record(vjp(grad._data), f"{op} backward", (grad,),
                            lambda h: forward(new_leaf(h))._data, saved=(),
                            graph_vjp=partial(_forward_graph, forward)),)


def _forward_graph(forward: Any, grad: Tensor, out: Tensor, g: Tensor) -> tuple[Tensor]:
    return (forward(grad),)


def held_constant(x: Tensor, value: Any) -> Tensor:
    """`value`, an array computed from x's data (a mask, a sign, a slope), as a tensor of x whose
    gradient is zero. A piecewise-linear op's gradient reads such a value (relu's mask, abs's sign);
    PyTorch's formulas read it from x too, so a second derivative through it is zeros rather than
    missing, and `autograd.grad` with respect to x finds x in the gradient's graph."""
    return autograd.record(value, "constant", (x,), partial(_zero_gradient, x._data), saved=(),
                           graph_vjp=_zero_graph)


def _zero_gradient(like: Any, grad: Any) -> Any:
    return np.zeros_like(like)  # (numpy dispatches: zeros where the data lives)


def _zero_graph(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (held_constant(x, np.zeros_like(x._data)),)
