"""`tg.func`: PyTorch's function transforms (`torch.func`) on tensorgrad's engine.

- `grad(f)` is a function that returns the gradient of f's scalar output with respect to its
  arguments (`argnums`), computed by one backward pass that touches no `.grad`: the same numbers
  as `loss.backward()`, without the state. `grad_and_value` returns the value too.
- `vjp(f, *primals)` returns f's output and a function that maps a cotangent to the
  vector-Jacobian product (callable several times); `jvp` and `linearize` give Jacobian-vector
  products, by the "double vjp" (reverse mode twice, as `autograd.functional.jvp`); `jacrev`
  and `jacfwd` build the Jacobian (both by reverse mode here: the same numbers as PyTorch's
  forward mode).
- Arguments and outputs may be pytrees, as in PyTorch: tuples, lists and dicts of tensors
  (nested); gradients and Jacobians come back in the same structure.
- `functional_call(module, params, args)` calls a module with the given tensors in place of its
  parameters and buffers; `stack_module_state(models)` stacks the parameters of identical models.
- `vmap(f)` maps f over a dimension of its inputs. tensorgrad runs it as a loop over that
  dimension, stacking the results: the same values and gradients as PyTorch's batched rules,
  without their speed. `randomness` works as PyTorch's: "error" refuses random ops (noticed
  by the default generator having moved), "same" draws the same numbers for every slice.

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
from tensorgrad import autograd, creation
from tensorgrad.checks import ArgumentValueError
from tensorgrad.movement import stack
from tensorgrad.tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "functional_call", "stack_module_state", "vmap"]


# --- pytrees: nested tuples, lists and dicts, and their leaves ----------------------------------------


def _flatten(tree: Any) -> tuple[list[Any], Any]:
    """(leaves, spec): the leaves of `tree` in order and what `_unflatten` needs to rebuild it.
    Tuples, lists and dicts are containers, as in `torch.utils._pytree`; anything else a leaf."""
    if isinstance(tree, tuple | list):
        parts = [_flatten(child) for child in tree]
        leaves = [leaf for child_leaves, _ in parts for leaf in child_leaves]
        return leaves, (type(tree), None, [spec for _, spec in parts])
    if isinstance(tree, dict):
        parts = [_flatten(child) for child in tree.values()]
        return ([leaf for leaves, _ in parts for leaf in leaves],
                (type(tree), list(tree), [spec for _, spec in parts]))
    return [tree], None


def _unflatten(leaves: Sequence[Any], spec: Any) -> Any:
    """The tree of structure `spec` (from `_flatten`) holding `leaves`."""
    leaves = iter(leaves)

    def build(spec: Any) -> Any:
        if spec is None:
            return next(leaves)
        kind, keys, children = spec
        values = [build(child) for child in children]
        if keys is not None:
            return kind(zip(keys, values, strict=True))
        return kind(*values) if hasattr(kind, "_fields") else kind(values)

    return build(spec)


def _tensor_leaves(tree: Any, what: str) -> tuple[list[Tensor], Any]:
    """The leaves of `tree`, each checked to be a tensor (PyTorch's error otherwise)."""
    leaves, spec = _flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{what}: expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(leaf)}")
    return leaves, spec


# --- gradients as functions -------------------------------------------------------------------------


def _argnums(argnums: int | Sequence[int], count: int, caller: str) -> tuple[tuple[int, ...], bool]:
    """The positions to differentiate (checked), and whether a tuple was asked for."""
    as_tuple = isinstance(argnums, tuple)
    positions = argnums if as_tuple else (argnums,)
    if as_tuple and not positions:
        raise RuntimeError(f"{caller}: argnums must be non-empty")
    for p in positions:
        if not isinstance(p, int) or isinstance(p, bool):
            raise RuntimeError(f"{caller}: argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -count <= p < count:
            raise RuntimeError(f"{caller}: Got argnums={p}, but only {count} positional inputs")
    return tuple(p % count for p in positions), as_tuple


def _fresh_leaf(x: Any, caller: str) -> Tensor:
    """x as a tensor to differentiate with respect to, sharing x's memory (x itself is not changed):
    a new leaf, or, if x requires grad (an outer transform's argument), a view of x that keeps the
    result differentiable with respect to x."""
    if not isinstance(x, Tensor):
        raise ValueError(f"{caller}: Thing passed to transform API must be Tensor, got {type(x)}")
    if x.data.dtype.kind not in "fc":
        raise ArgumentValueError(f"{caller}: only Tensors of floating point dtype can require gradients, got "
                                 f"{x.dtype}")
    return x.view_as(x) if x.requires_grad else x.detach().requires_grad_()


def _fresh_tree(tree: Any, caller: str) -> tuple[Any, list[Tensor], bool]:
    """(tree with every leaf a fresh leaf, those leaves, whether any input already required grad:
    the results must then carry a graph)."""
    leaves, spec = _flatten(tree)
    nested = any(isinstance(leaf, Tensor) and leaf.requires_grad for leaf in leaves)
    fresh = [_fresh_leaf(leaf, caller) for leaf in leaves]
    return _unflatten(fresh, spec), fresh, nested


def _gradients(outputs: Sequence[Tensor], seeds: Sequence[Any], inputs: Sequence[Tensor],
               create_graph: bool, retain_graph: bool = False) -> tuple[Tensor, ...]:
    """d(sum of outputs times seeds)/d(each input), zeros for an input the outputs do not reach."""
    pairs = [(out, seed) for out, seed in zip(outputs, seeds, strict=True) if out.requires_grad]
    if not pairs:
        return tuple(t.detach() * 0 for t in inputs)
    return autograd.grad([out for out, _ in pairs], list(inputs), [seed for _, seed in pairs],
                         retain_graph=retain_graph or create_graph, create_graph=create_graph,
                         allow_unused=True, materialize_grads=True)


def grad_and_value(func: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning (gradient, value) of `func`, whose output must be a 0-d tensor (with
    `has_aux`, func returns (output, aux) and the value is (output, aux)). The gradient is with
    respect to the argument at `argnums`, or a tuple of them for a tuple of positions; an argument
    that is a pytree (tuple, list, dict of tensors) gets a gradient of the same structure."""

    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        positions, as_tuple = _argnums(argnums, len(args), "grad_and_value")
        args = list(args)
        chosen, nested = [], False
        for p in positions:
            args[p], leaves, outer = _fresh_tree(args[p], "grad_and_value")
            chosen.append((leaves, _flatten(args[p])[1]))
            nested = nested or outer
        with enable_grad():
            result = func(*args, **kwargs)
        output, aux = _split_aux(result, has_aux, "grad_and_value(f)(*args)")
        if not isinstance(output, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                               f"{type(output)}")
        if output.ndim != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                               f"tensor with {output.ndim} dims. Maybe you wanted to use the vjp or jacrev "
                               "APIs instead?")
        inputs = [leaf for leaves, _ in chosen for leaf in leaves]
        grads = iter(_gradients([output], [None], inputs, nested))
        trees = tuple(_unflatten([next(grads) for _ in leaves], spec) for leaves, spec in chosen)
        value = output if nested else output.detach()
        return (trees if as_tuple else trees[0]), ((value, aux) if has_aux else value)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """A function returning the gradient of `func` (a 0-d output) with respect to its argument(s)
    at `argnums`: `tg.func.grad(loss_fn)(w, x, y)` is d loss / d w. With `has_aux`, func returns
    (output, aux) and the result is (gradient, aux)."""
    with_value = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradient, value = with_value(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def _split_aux(result: Any, has_aux: bool, caller: str) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not isinstance(result, tuple) or len(result) != 2:
        raise RuntimeError(f"{caller}: output of function f should be a tuple: (output, aux) if has_aux is "
                           f"True, got {type(result).__name__}")
    return result


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), vjp_fn) (and aux with `has_aux`): vjp_fn(cotangents) returns the tuple of
    vector-Jacobian products, one per primal, each of its primal's structure; cotangents have the
    output's structure. vjp_fn may be called several times (the graph is kept)."""
    fresh, leaves, nested = _fresh_tree(primals, "vjp")
    with enable_grad():
        result = func(*fresh)
    output, aux = _split_aux(result, has_aux, "vjp(f, *primals)")
    outputs, out_spec = _tensor_leaves(output, "vjp(f, *primals)")

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        seeds, seed_spec = _flatten(cotangents)
        if seed_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure "
                               f"of outputs to the function. cotangents: {seed_spec}, primal output: "
                               f"{out_spec}")
        for i, (out, seed) in enumerate(zip(outputs, seeds, strict=True)):
            if tuple(seed.shape) != tuple(out.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(seed.shape)} "
                                   f"and output[{i}] has a shape of {tuple(out.shape)}.")
        grads = _gradients(outputs, seeds, leaves, nested, retain_graph=True)
        return _unflatten(grads, _flatten(fresh)[1])

    value = output if nested else _unflatten([o.detach() for o in outputs], out_spec)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def _forward_products(func: Callable[..., Any], primals: tuple, caller: str,
                      has_aux: bool = False) -> tuple[Any, Callable[[list[Tensor]], Any], Any, Any]:
    """(output, product, aux, primals' spec): product(tangent leaves) is J v, in the output's
    structure. By the "double vjp": g(u) = u^T J, for a u that requires grad, is linear in u, and
    its gradient with respect to u, weighted by v, is J v."""
    fresh, leaves, nested = _fresh_tree(primals, caller)
    with enable_grad():
        result = func(*fresh)
        output, aux = _split_aux(result, has_aux, caller)
        outputs, out_spec = _tensor_leaves(output, caller)
        dummies = [out.detach() * 0 for out in outputs]
        for u in dummies:
            u.requires_grad_()
        vjps = _gradients(outputs, dummies, leaves, create_graph=True)

    def product(tangents: list[Tensor]) -> Any:
        for leaf, tangent in zip(leaves, tangents, strict=True):
            if tuple(tangent.shape) != tuple(leaf.shape):
                raise RuntimeError(f"{caller}: Trying to set a forward gradient that has a different size "
                                   "than that of the original Tensor, this is not supported. Tensor is of "
                                   f"size {list(leaf.shape)} while the given forward gradient is of size "
                                   f"{list(tangent.shape)}.")
        jv = _gradients(vjps, tangents, dummies, nested, retain_graph=True)
        return _unflatten(jv, out_spec)

    value = output if nested else _unflatten([o.detach() for o in outputs], out_spec)
    return value, product, aux, _flatten(primals)[1]


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), J tangents) (and aux with `has_aux`), as `torch.func.jvp`: `primals` and
    `tangents` are tuples of the same structure, the product has the output's structure."""
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected {name} to be a tuple. E.g. it should be "
                               "valid to call f(*primals).")
    output, product, aux, spec = _forward_products(func, primals, "jvp(f, primals, tangents)", has_aux)
    leaves, tangent_spec = _flatten(tangents)
    if tangent_spec != spec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same "
                           "python structure. For example, if primals is a tuple of 3 tensors, tangents also "
                           f"must be. Got primals with structure {spec} and tangents with structure "
                           f"{tangent_spec}")
    result = product(leaves)
    return (output, result, aux) if has_aux else (output, result)


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """(func(*primals), jvp_fn), as `torch.func.linearize`: jvp_fn(*tangents) is the
    Jacobian-vector product at `primals`, without running func again (callable several times)."""
    output, product, _, spec = _forward_products(func, primals, "linearize")

    def jvp_fn(*tangents: Any) -> Any:
        leaves, tangent_spec = _flatten(tangents)
        if tangent_spec != spec:
            raise RuntimeError(f"linearize: Expected the tangents to have the structure of the primals, "
                               f"{spec}, got {tangent_spec}")
        return product(leaves)

    return output, jvp_fn


def jacrev(func: Callable[..., Any], argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """A function returning the Jacobian of `func` with respect to the argument(s) at `argnums`:
    block shape output.shape + input.shape, by reverse mode (one backward pass per output
    element). Outputs and arguments may be pytrees: the result has the output's structure, each
    leaf a block, or a tuple over `argnums` when it is a tuple, each of its argument's structure.
    `chunk_size` only changes how PyTorch batches the passes."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian_function(func, argnums, has_aux, "vjp(f, *primals)")


def jacfwd(func: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           *, randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian as `jacrev` gives it: PyTorch builds it by forward mode, one pass per input
    element; tensorgrad has reverse mode only, which gives the same numbers."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    return _jacobian_function(func, argnums, has_aux, "jvp(f, primals, tangents)")


def _jacobian_function(func: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
                       caller: str) -> Callable[..., Any]:
    def wrapper(*args: Any) -> Any:  # (no keyword arguments, as in PyTorch)
        positions, as_tuple = _argnums(argnums, len(args), caller)
        args = list(args)
        chosen, nested = [], False
        for p in positions:
            args[p], leaves, outer = _fresh_tree(args[p], caller)
            chosen.append((leaves, _flatten(args[p])[1]))
            nested = nested or outer
        with enable_grad():
            result = func(*args)
        output, aux = _split_aux(result, has_aux, caller)
        outputs, out_spec = _tensor_leaves(output, caller)
        inputs = [leaf for leaves, _ in chosen for leaf in leaves]
        blocks = [_jacobian_blocks(out, inputs, nested, last=k == len(outputs) - 1)
                  for k, out in enumerate(outputs)]

        def arranged(row: list[Tensor]) -> Any:
            row = iter(row)
            trees = tuple(_unflatten([next(row) for _ in leaves], spec) for leaves, spec in chosen)
            return trees if as_tuple else trees[0]

        jac = _unflatten([arranged(row) for row in blocks], out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def _jacobian_blocks(out: Tensor, inputs: list[Tensor], create_graph: bool, last: bool) -> list[Tensor]:
    """d out / d input for each input, of shape out.shape + input.shape: one pass per element."""
    n = out.numel()
    rows: list[tuple[Tensor, ...]] = []
    for j in range(n):
        seed = out.detach().reshape(-1) * 0
        seed.data[j] = 1
        rows.append(_gradients([out], [seed.reshape(out.shape)], inputs, create_graph,
                               retain_graph=not (last and j == n - 1)))
    blocks = []
    for i, t in enumerate(inputs):
        shape = (*out.shape, *t.shape)
        blocks.append(stack([row[i] for row in rows]).reshape(shape) if rows
                      else t.detach().new_zeros(shape))
    return blocks


def hessian(func: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """A function returning the Hessian of `func` (a 0-d output) with respect to the argument(s)
    at `argnums`: `jacfwd(jacrev(func))`, as in PyTorch, here the Jacobian of a gradient computed
    with its graph."""
    return jacfwd(jacrev(func, argnums), argnums)


# --- modules as functions -----------------------------------------------------------------------------


def functional_call(module: Any, parameter_and_buffer_dicts: Mapping[str, Any] | Sequence[Mapping[str, Any]],
                    args: Any = None, kwargs: Mapping[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """module(*args, **kwargs) with the tensors of `parameter_and_buffer_dicts` (dotted names, as
    `named_parameters()` gives them) in place of its own parameters and buffers, which are put back
    afterwards. Gradients flow to the given tensors: the way to treat a model as a function of its
    weights (meta-learning, ensembles with `vmap`). With `tie_weights`, replacing a parameter that
    several names share (tied weights) replaces it under all of them. With `strict`, every
    parameter and buffer must be given and no other name; otherwise a name the module does not
    have is set as an attribute for the call, as in PyTorch."""
    dicts = [parameter_and_buffer_dicts] if isinstance(parameter_and_buffer_dicts, Mapping) \
        else list(parameter_and_buffer_dicts)
    given: dict[str, Any] = {}
    for d in dicts:
        for name, value in d.items():
            if name in given:
                raise ValueError(f"functional_call: {name} appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
            given[name] = value
    if tie_weights:
        given = _with_tied_names(module, given)
    known = {name for name, _ in module.named_parameters(remove_duplicate=False)} | \
        {name for name, _ in module.named_buffers(remove_duplicate=False)}
    if strict:
        missing, unexpected = sorted(known - given.keys()), sorted(given.keys() - known)
        if missing or unexpected:
            raise RuntimeError(f"functional_call: Error(s) in reparametrizing for {type(module).__name__}: "
                               f"missing keys {missing}, unexpected keys {unexpected}")
    swapped = []
    try:
        for name, value in given.items():
            swapped.append(_swap_in(module, name, value))
        args = () if args is None else args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for undo in reversed(swapped):
            undo()


def _with_tied_names(module: Any, given: dict[str, Any]) -> dict[str, Any]:
    """`given` with each tensor also under the other names of the parameter or buffer it replaces
    (tied weights); different tensors for names that are tied are an error, as in PyTorch."""
    names_of: dict[int, list[str]] = {}
    for name, t in [*module.named_parameters(remove_duplicate=False),
                    *module.named_buffers(remove_duplicate=False)]:
        names_of.setdefault(id(t), []).append(name)
    result = dict(given)
    for names in names_of.values():
        chosen = [name for name in names if name in given]
        if len(names) < 2 or not chosen:
            continue
        if len({id(given[name]) for name in chosen}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {chosen}, which are tied. "
                             "Consider using tie_weights=False")
        result.update(dict.fromkeys(names, given[chosen[0]]))
    return result


def _swap_in(module: Any, name: str, value: Any) -> Callable[[], None]:
    """Put `value` where the parameter or buffer `name` (dotted) is (a name the module does not have:
    a plain attribute); returns how to undo it."""
    *path, key = name.split(".")
    owner = module
    for part in path:
        if part not in owner._modules:
            raise AttributeError(f"{type(owner).__name__} has no attribute `{part}`")
        owner = owner._modules[part]
    for registry in (owner._parameters, owner._buffers):
        if key in registry:
            old = registry[key]
            registry[key] = value

            def undo(registry: dict = registry, old: Any = old) -> None:
                registry[key] = old
            return undo
    had, old = key in owner.__dict__, owner.__dict__.get(key)
    owner.__dict__[key] = value
    return lambda: owner.__dict__.__setitem__(key, old) if had else owner.__dict__.pop(key)


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
    """`func` mapped over dimension `in_dims` of its inputs (an int for all, or a tuple with one
    entry per argument: an int, None for an argument passed whole, or, for a pytree argument,
    a pytree of those), its outputs (tensors, or pytrees of them) stacked along `out_dims`.
    Keyword arguments are passed whole. Run as a loop over the mapped dimension: each call sees
    one slice, as PyTorch's batching rules promise it does. `randomness`: "error" (the default)
    refuses random ops, "different" draws anew for each slice, "same" draws the same numbers for
    every slice. `chunk_size` is checked and changes nothing."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", repr(func))

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not isinstance(in_dims, int | tuple):
            raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple "
                             f"matching the structure of inputs, got: {type(in_dims)}.")
        if not args:
            raise ValueError(f"{where}: got no inputs. Maybe you forgot to add inputs, or you are trying to "
                             "vmap over a function with no inputs. The latter is unsupported.")
        leaves, spec = _flatten(args)
        dims = _broadcast(in_dims, args, where, "in_dims", "inputs")
        size = _batch_size(leaves, dims, where)
        state = creation.default_generator().bit_generator.state
        results = []
        for i in range(max(size, 1)):  # (an empty batch: one call on zeros, for the outputs' shapes)
            if randomness == "same":
                creation.default_generator().bit_generator.state = state
            sliced = [_slice(leaf, d, i, size) for leaf, d in zip(leaves, dims, strict=True)]
            results.append(func(*_unflatten(sliced, spec), **kwargs))
            if randomness == "error" and creation.default_generator().bit_generator.state != state:
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please "
                                   "either use the 'same' or 'different' randomness flags on vmap or perform "
                                   "the randomness operation out of vmap")
        return _stacked(results, out_dims, size, name)

    return wrapper


def _slice(leaf: Any, dim: int | None, i: int, size: int) -> Any:
    """Slice i of `leaf` along `dim`: an unmapped leaf whole; for an empty batch, zeros of a slice's
    shape."""
    if dim is None:
        return leaf
    if size:
        return leaf.select(dim, i)
    return leaf.new_zeros(tuple(s for k, s in enumerate(leaf.shape) if k != dim % leaf.ndim))


def _broadcast(dims: Any, tree: Any, where: str, what: str, of: str) -> list[Any]:
    """`dims` (a prefix of `tree`'s structure: an int or None applies to everything below it)
    as one entry per leaf of `tree`."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_flatten(tree)[0])
    if type(dims) is not type(tree) and not (isinstance(dims, tuple | list) and isinstance(tree, tuple | list)
                                             and what == "out_dims"):
        raise ValueError(f"{where}: {what} is not compatible with the structure of `{of}`. {what} has "
                         f"structure {_flatten(dims)[1]} but {of} has structure {_flatten(tree)[1]}.")
    if isinstance(dims, dict):
        if set(dims) != set(tree):
            raise ValueError(f"{where}: {what} is not compatible with the structure of `{of}`: keys "
                             f"{sorted(dims)} for keys {sorted(tree)}.")
        return [d for key in tree for d in _broadcast(dims[key], tree[key], where, what, of)]
    if isinstance(dims, tuple | list) and len(dims) == len(tree):
        return [d for dim, child in zip(dims, tree, strict=True)
                for d in _broadcast(dim, child, where, what, of)]
    if isinstance(dims, tuple | list):
        raise ValueError(f"{where}: {what} is not compatible with the structure of `{of}`. {what} has "
                         f"structure {_flatten(dims)[1]} but {of} has structure {_flatten(tree)[1]}.")
    raise ValueError(f"{where}: expected `{what}` to be int or a (potentially nested) tuple matching the "
                     f"structure of {of}, got: {type(dims)}.")


def _batch_size(leaves: list[Any], dims: list[Any], where: str) -> int:
    """The size of the mapped dimension, the same for every mapped input (checked)."""
    sizes = []
    for leaf, d in zip(leaves, dims, strict=True):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple "
                             f"matching the structure of inputs, got an entry of type {type(d)}.")
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(leaf)}. "
                             "We cannot vmap over non-Tensor arguments, please use None as the respective "
                             "in_dim")
        if not -leaf.ndim <= d < leaf.ndim:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                             f"dimensionality {leaf.ndim} so expected in_dim to satisfy -{leaf.ndim} <= "
                             f"in_dim < {leaf.ndim}.")
        sizes.append(leaf.shape[d])
    if not sizes:
        raise ValueError(f"{where}: at least one input must be mapped over (got in_dims with every entry "
                         "None or no Tensor inputs)")
    if len(set(sizes)) != 1:
        raise ValueError(f"{where}: Expected all tensors to have the same size in the mapped dimension, got "
                         f"sizes {sizes} for the mapped dimension")
    return sizes[0]


def _stacked(results: list[Any], out_dims: Any, size: int, name: str) -> Any:
    """The per-slice results stacked along their `out_dims` (an empty batch: along a 0-size one)."""
    where = f"vmap({name}, ..., out_dims={out_dims})(<inputs>)"
    flat = [_flatten(r) for r in results]
    leaves, spec = flat[0]
    if not isinstance(out_dims, int | tuple | list) and out_dims is not None:
        raise ValueError(f"{where}: `out_dims` must be an int, None or a python collection of ints "
                         "representing where in the outputs the vmapped dimension should appear.")
    if isinstance(out_dims, tuple | list) and len(out_dims) == 1 and spec is None:
        out_dims = out_dims[0]  # (PyTorch's special case: one out_dim in a tuple for one output)
    dims = _broadcast(out_dims, results[0], where, "out_dims", "outputs")
    stacked = []
    for k, d in enumerate(dims):
        column = [r_leaves[k] for r_leaves, _ in flat]
        if d is None:
            if isinstance(column[0], Tensor) and any(not column[0].equal(c) for c in column[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim "
                                 "is None")
            stacked.append(column[0])
            continue
        if not isinstance(column[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(column[0])}. Did you mean to set out_dims= to None for output?")
        if not isinstance(d, int):
            raise ValueError(f"{where}: `out_dims` must be an int, None or a python collection of ints "
                             "representing where in the outputs the vmapped dimension should appear.")
        out = stack(column, dim=d)
        stacked.append(out if size else out.narrow(d, 0, 0))
    return _unflatten(stacked, spec)
