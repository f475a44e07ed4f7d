"""`tg.func`: PyTorch's function transforms (`torch.func`) on tensorgrad's engine.

- `grad(f)` is a function that returns the gradient of f's scalar output with respect to its
  arguments (`argnums`), computed by one backward pass that touches no `.grad`: the same numbers
  as `loss.backward()`, without the state. `grad_and_value` returns the value too.
- `vjp(f, *primals)` returns f's output and a function that maps a cotangent to the
  vector-Jacobian product (callable several times); `jacrev` and `jacfwd` build the Jacobian
  (both by reverse mode here: the same numbers as PyTorch's forward mode).
- `functional_call(module, params, args)` calls a module with the given tensors in place of its
  parameters and buffers; `stack_module_state(models)` stacks the parameters of identical models.
- `vmap(f)` maps f over a dimension of its inputs. tensorgrad runs it as a loop over that
  dimension, stacking the results: the same values and gradients as PyTorch's batched rules,
  without their speed.

The transforms compose with each other and with autograd: given a tensor that requires grad (an
argument of an outer transform, or a parameter), a transform's result stays differentiable with
respect to it, by a backward pass that records its graph (`create_graph=True`). So
`grad(grad(f))`, `jacrev(jacrev(f))` and `hessian(f)` work for every op with a graph gradient
(`tensorgrad.higher_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scalargrad.engine import enable_grad
from tensorgrad import autograd
from tensorgrad.function import jacobian
from tensorgrad.movement import stack
from tensorgrad.tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state", "vmap"]


# --- gradients as functions -------------------------------------------------------------------------


def _argnums(argnums: int | Sequence[int], count: int, caller: str) -> tuple[tuple[int, ...], bool]:
    """The positions to differentiate (checked), and whether a tuple was asked for."""
    as_tuple = isinstance(argnums, tuple | list)
    positions = tuple(argnums) if as_tuple else (argnums,)
    if as_tuple and not positions:
        raise RuntimeError(f"{caller}: argnums must be non-empty")
    for p in positions:
        if not isinstance(p, int) or isinstance(p, bool):
            raise RuntimeError(f"{caller}: argnums must be int or Tuple[int, ...], got {type(p).__name__}")
        if not -count <= p < count:
            raise RuntimeError(f"{caller}: Got argnums={p}, but only {count} positional inputs")
    return tuple(p % count for p in positions), as_tuple


def _fresh_leaf(x: Any, position: int, caller: str) -> Tensor:
    """x as a tensor to differentiate with respect to, sharing x's memory (x itself is not changed):
    a new leaf, or, if x requires grad (an outer transform's argument), a view of x that keeps the
    result differentiable with respect to x."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"{caller}: Expected the argument at position {position} to be a Tensor, got "
                           f"{type(x).__name__}")
    if x.data.dtype.kind not in "fc":
        raise RuntimeError(f"{caller}: only Tensors of floating point dtype can require gradients, got "
                           f"{x.dtype} at position {position}")
    return x.view_as(x) if x.requires_grad else x.detach().requires_grad_()


def _nested(args: Sequence[Any], positions: Sequence[int]) -> bool:
    """Whether an argument to differentiate requires grad already: the result must then carry a graph."""
    return any(isinstance(args[p], Tensor) and args[p].requires_grad for p in positions)


def grad_and_value(func: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning (gradient, value) of `func`, whose output must be a one-element tensor
    (with `has_aux`, func returns (output, aux) and the value is (output, aux)). The gradient is
    with respect to the argument at `argnums`, or a tuple of them for a tuple of positions."""

    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        positions, as_tuple = _argnums(argnums, len(args), "grad_and_value")
        nested = _nested(args, positions)
        args = list(args)
        for p in positions:
            args[p] = _fresh_leaf(args[p], p, "grad_and_value")
        with enable_grad():
            result = func(*args, **kwargs)
        output, aux = _split_aux(result, has_aux, "grad_and_value")
        if not isinstance(output, Tensor) or output.numel() != 1:
            raise RuntimeError(f"grad_and_value: Expected f(*args) to return a scalar Tensor, got "
                               f"{_describe(output)}")
        inputs = [args[p] for p in positions]
        if output.requires_grad:
            grads = autograd.grad(output, inputs, create_graph=nested, allow_unused=True,
                                  materialize_grads=True)
        else:  # the output does not depend on the inputs at all
            grads = tuple(t.detach() * 0 for t in inputs)
        gradient = tuple(grads) if as_tuple else grads[0]
        value = output if nested else output.detach()
        return gradient, ((value, aux) if has_aux else value)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """A function returning the gradient of `func` (a one-element output) with respect to its
    argument(s) at `argnums`: `tg.func.grad(loss_fn)(w, x, y)` is d loss / d w. With `has_aux`, func
    returns (output, aux) and the result is (gradient, aux)."""
    with_value = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradient, value = with_value(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def _split_aux(result: Any, has_aux: bool, caller: str) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not isinstance(result, tuple) or len(result) != 2:
        raise RuntimeError(f"{caller}(f, *args): output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True, got {_describe(result)}")
    return result


def _describe(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"a Tensor of shape {tuple(value.shape)}"
    return type(value).__name__


def vjp(func: Callable[..., Any], *primals: Tensor, has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), vjp_fn) (and aux with `has_aux`): vjp_fn(cotangents) returns the tuple of
    vector-Jacobian products, one per primal; cotangents have the output's structure. vjp_fn may
    be called several times (the graph is kept)."""
    nested = _nested(primals, range(len(primals)))
    leaves = [_fresh_leaf(p, i, "vjp") for i, p in enumerate(primals)]
    with enable_grad():
        result = func(*leaves)
    output, aux = _split_aux(result, has_aux, "vjp")
    outputs = output if isinstance(output, tuple) else (output,)

    def vjp_fn(cotangents: Any) -> tuple[Tensor, ...]:
        seeds = cotangents if isinstance(cotangents, tuple) else (cotangents,)
        if len(seeds) != len(outputs):
            raise RuntimeError(f"vjp_fn: expected {len(outputs)} cotangents (the structure of the output), "
                               f"got {len(seeds)}")
        for out, seed in zip(outputs, seeds, strict=True):
            if tuple(seed.shape) != tuple(out.shape):
                raise RuntimeError(f"vjp_fn: a cotangent of shape {tuple(seed.shape)} for an output of shape "
                                   f"{tuple(out.shape)}; they must match")
        pairs = [(out, seed) for out, seed in zip(outputs, seeds, strict=True) if out.requires_grad]
        if not pairs:
            return tuple(leaf.detach() * 0 for leaf in leaves)
        return autograd.grad([out for out, _ in pairs], leaves, [seed for _, seed in pairs],
                             retain_graph=True, create_graph=nested, allow_unused=True,
                             materialize_grads=True)

    detached = outputs if nested else tuple(o.detach() for o in outputs)
    value = detached if isinstance(output, tuple) else detached[0]
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jacrev(func: Callable[..., Any], argnums: int | Sequence[int] = 0, *,
           has_aux: bool = False) -> Callable[..., Any]:
    """A function returning the Jacobian of `func` with respect to the argument(s) at `argnums`:
    shape output.shape + input.shape, by reverse mode (one backward pass per output element)."""

    def wrapper(*args: Any) -> Any:
        positions, as_tuple = _argnums(argnums, len(args), "jacrev")
        aux_box: list[Any] = []

        def of_chosen(*chosen: Tensor) -> Any:
            full = list(args)
            for p, t in zip(positions, chosen, strict=True):
                full[p] = t
            output, aux = _split_aux(func(*full), has_aux, "jacrev")
            aux_box.append(aux)
            return output

        jac = jacobian(of_chosen, tuple(args[p] for p in positions), create_graph=_nested(args, positions))
        if isinstance(jac, tuple) and not as_tuple:
            jac = jac[0] if not isinstance(jac[0], tuple) else tuple(row[0] for row in jac)
        return (jac, aux_box[0]) if has_aux else jac

    return wrapper


def jacfwd(func: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           *, randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian as `jacrev` gives it: PyTorch builds it by forward mode, one pass per input
    element; tensorgrad has reverse mode only, which gives the same numbers."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """A function returning the Hessian of `func` (a one-element output) with respect to the
    argument(s) at `argnums`: `jacfwd(jacrev(func))`, as in PyTorch, here the Jacobian of a
    gradient computed with its graph."""
    return jacfwd(jacrev(func, argnums), argnums)


# --- modules as functions -----------------------------------------------------------------------------


def functional_call(module: Any, parameter_and_buffer_dicts: Mapping[str, Any] | Sequence[Mapping[str, Any]],
                    args: Any = None, kwargs: Mapping[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """module(*args, **kwargs) with the tensors of `parameter_and_buffer_dicts` (dotted names, as
    `named_parameters()` gives them) in place of its own parameters and buffers, which are put back
    afterwards. Gradients flow to the given tensors: the way to treat a model as a function of its
    weights (meta-learning, ensembles with `vmap`). With `strict`, every parameter and buffer must
    be given and no other name."""
    dicts = [parameter_and_buffer_dicts] if isinstance(parameter_and_buffer_dicts, Mapping) \
        else list(parameter_and_buffer_dicts)
    given: dict[str, Any] = {}
    for d in dicts:
        for name, value in d.items():
            if name in given:
                raise ValueError(f"functional_call: {name} appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
            given[name] = value
    known = {name for name, _ in module.named_parameters()} | {name for name, _ in module.named_buffers()}
    if strict:
        missing, unexpected = sorted(known - given.keys()), sorted(given.keys() - known)
        if missing or unexpected:
            raise RuntimeError(f"functional_call: Error(s) in reparametrizing for {type(module).__name__}: "
                               f"missing keys {missing}, unexpected keys {unexpected}")
    swapped = [_swap_in(module, name, value) for name, value in given.items()]
    try:
        args = () if args is None else args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for registry, key, old in reversed(swapped):
            registry[key] = old


def _swap_in(module: Any, name: str, value: Any) -> tuple[dict, str, Any]:
    """Put `value` where the parameter or buffer `name` (dotted) is; returns how to undo it."""
    *path, key = name.split(".")
    owner = module
    for part in path:
        owner = owner._modules[part]
    for registry in (owner._parameters, owner._buffers):
        if key in registry:
            old = registry[key]
            registry[key] = value
            return registry, key, old
    raise AttributeError(f"functional_call: {type(module).__name__} has no parameter or buffer named "
                         f"{name!r}")


def stack_module_state(models: Iterable[Any]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(params, buffers) of identical `models`, each name's tensors stacked along a new first
    dimension (the parameters as new leaves that require grad): an ensemble in one set of tensors,
    for `vmap(functional_call)`."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {name: stack([dict(m.named_parameters())[name].detach() for m in models]).requires_grad_()
              for name, _ in models[0].named_parameters()}
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers


# --- vmap -------------------------------------------------------------------------------------------


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """`func` mapped over dimension `in_dims` of its inputs (an int for all, or one entry per
    argument: an int, or None for an argument passed whole; dicts and tuples of tensors follow
    their structure), its outputs stacked along `out_dims`. Run as a loop over the mapped
    dimension: each call sees one slice, as PyTorch's batching rules promise it does. Random ops
    inside draw anew for each slice (PyTorch's randomness="different"; its default, "error",
    refuses them); `chunk_size` is accepted and changes nothing."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"vmap: randomness must be 'error', 'different' or 'same', got {randomness!r}")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims is not compatible with the structure of inputs: {len(dims)} "
                             f"entries for {len(args)} positional arguments")
        sizes = {size for arg, dim in zip(args, dims, strict=True) for size in _mapped_sizes(arg, dim)}
        if not sizes:
            raise ValueError("vmap: at least one input must be mapped (an in_dim that is not None) over a "
                             "Tensor")
        if len(sizes) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                             f"sizes {sorted(sizes)} for the mapped dimension")
        size = sizes.pop()
        results = [func(*(_slice(arg, dim, i) for arg, dim in zip(args, dims, strict=True)), **kwargs)
                   for i in range(size)]
        return _stacked(results, out_dims)

    return wrapper


def _mapped_sizes(arg: Any, dim: Any) -> list[int]:
    if dim is None:
        return []
    if isinstance(arg, Tensor):
        if arg.ndim == 0:
            raise ValueError(f"vmap: Tried to map over dim {dim} of a 0-d tensor: a scalar has no dimension "
                             "to map over (pass in_dims=None for it)")
        return [arg.shape[dim % arg.ndim]]
    if isinstance(arg, Mapping):
        return [s for key, value in arg.items() for s in _mapped_sizes(value, _entry(dim, key))]
    if isinstance(arg, tuple | list):
        return [s for i, value in enumerate(arg) for s in _mapped_sizes(value, _entry(dim, i))]
    raise ValueError(f"vmap: Got in_dim={dim} for an input of type {type(arg).__name__}, but only Tensor "
                     "inputs can be mapped over")


def _entry(dim: Any, key: Any) -> Any:
    """The in_dim of one element of a structured argument (an int applies to all of them)."""
    if isinstance(dim, Mapping | tuple | list):
        return dim[key]
    return dim


def _slice(arg: Any, dim: Any, i: int) -> Any:
    if dim is None:
        return arg
    if isinstance(arg, Tensor):
        return arg.select(dim, i)
    if isinstance(arg, Mapping):
        return type(arg)({key: _slice(value, _entry(dim, key), i) for key, value in arg.items()})
    return type(arg)(_slice(value, _entry(dim, k), i) for k, value in enumerate(arg))


def _stacked(results: list[Any], out_dims: Any) -> Any:
    first = results[0]
    if isinstance(first, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(first)
        return tuple(_stacked([r[k] for r in results], dims[k]) for k in range(len(first)))
    if not isinstance(first, Tensor):
        raise ValueError(f"vmap: `func` must only return Tensors (or tuples of them), got "
                         f"{type(first).__name__}")
    if out_dims is None:
        return first
    return stack(results, dim=out_dims)
