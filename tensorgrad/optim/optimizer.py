"""`Optimizer`: what every optimizer shares, in PyTorch's layout (tutorial chapter 9).

- `param_groups`: a list of dicts, each with its own `params` and options (`lr`, ...); options a
  group leaves out come from the optimizer's `defaults`. A scheduler changes `group["lr"]`.
- `state`: per parameter (keyed by the tensor), the buffers the rule keeps (momentum, moments,
  step count), as tensors; the step count (and the other scalars PyTorch keeps as tensors) is a 0-d
  tensor of PyTorch's scalar dtype: float32, or float64 while the default dtype is float64.
- The options PyTorch has for choosing among its own kernels (`foreach`, `fused`) are accepted at
  any value and kept in the groups as PyTorch keeps them: tensorgrad has one numpy path, and the
  rule is the same. `differentiable=True` and `capturable=True` are refused (NotImplementedError).
- `lr` may be a 1-element Tensor, as in PyTorch: the update reads its value at each step, and a
  scheduler writes the new rate into it in place.
- `state_dict()` / `load_state_dict()`: the same two entries with each parameter replaced by its
  index, as PyTorch writes them, so training resumes exactly where it stopped.
- `step()`: read each parameter's gradient as an array, whichever way `.grad` was set, check its
  shape, and hand it to the subclass's `_update`, which writes into the parameter's array in
  place. No graph is recorded (the arrays are changed directly) and each changed parameter's
  version counter is bumped, so a graph that saved the old value refuses a stale backward.
"""

from __future__ import annotations

import copy
import numbers
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from scalargrad.engine import enable_grad
from tensorgrad.autograd import bump_version
from tensorgrad.device import is_array, namespace, to_numpy
from tensorgrad.dtypes import get_default_dtype
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["Optimizer"]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]


class Optimizer:
    """Base class: parameter groups, per-parameter state, `step`, `zero_grad` and state dicts.

    A subclass passes its `defaults` (every option and its value) and implements
    `_update(param, grad, state, group)`, the rule for one parameter, and may override
    `_check_group(group)` to validate a group's options (`check_implementation_options` runs after
    it for every optimizer).
    """

    # The state entries kept as 0-d scalars on the host, of `scalar_dtype` (PyTorch's `step`; a
    # subclass adds its own, as NAdam's `mu_product`): a state dict loads them as saved, neither cast
    # nor moved, so a resumed run is bit-identical (PyTorch's load casts all but `step` to the
    # parameter's dtype).
    _host_scalars: frozenset[str] = frozenset({"step"})

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(
                f"{name}: params should be an iterable of Tensors or dicts (e.g. model.parameters() "
                f"or [w, b]), but got a single Tensor; wrap it in a list: {name}([w], ...)"
            )
        if not isinstance(params, Iterable) or isinstance(params, str | bytes | dict):
            raise TypeError(
                f"{name}: params should be an iterable of Tensors or dicts, got {type(params).__name__}"
            )
        if isinstance(params, set):
            raise TypeError(f"{name}: parameters must come in an ordered collection (a list), not a set, "
                            "whose order changes between runs")
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError(f"{name}: optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"

    # --- parameter groups -------------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (those it leaves out take the defaults).

        Useful to train a layer with its own learning rate, or to add layers while training. A
        parameter may belong to one group only. As in PyTorch, the dict given becomes the group
        (filled in with the defaults), so changing it later changes the optimizer's options.
        """
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}.add_param_group: param_group must be a dict, got "
                            f"{type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError(f"{name}.add_param_group: the group has no 'params' entry")
        group = param_group
        group["params"], names = _parameter_list(group["params"], name)
        if names is not None:
            group["param_names"] = names
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self._check_group(group)
        check_implementation_options(name, group)
        if len({id(p) for p in group["params"]}) != len(group["params"]):
            warnings.warn(f"{name}: a parameter group lists the same parameter twice", stacklevel=2)
        for other in self.param_groups:
            if ("param_names" in other) != ("param_names" in group):
                raise ValueError(f"{name}: all parameter groups should be with names or all without")
        taken = {id(p) for other in self.param_groups for p in other["params"]}
        if any(id(p) in taken for p in group["params"]):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Raise if one of the group's options is out of range (each optimizer says which)."""

    # --- the update ---------------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient: set it to None (PyTorch's default), or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    _array(p.grad)[...] = 0

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns `closure()`'s loss if given one.

        `closure` re-evaluates the model and returns the loss (it runs with gradients on).
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        name = type(self).__name__
        for group in self.param_groups:
            for p in group["params"]:
                grad = _gradient(p, name)
                if grad is None:
                    continue
                if group.get("maximize", False):
                    grad = -grad
                state = self.state[p]
                self._update(p.data, grad, state, group)
                if not state:  # a rule that keeps nothing (SGD without momentum) leaves no entry
                    del self.state[p]
                bump_version(p)  # an in-place change: graphs that saved p must not reuse it
        return loss

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        """Change `param` in place given its gradient, its state and its group's options."""
        raise NotImplementedError(f"{type(self).__name__} does not define its update rule")

    # --- state dicts --------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state in PyTorch's layout: `{"state": ..., "param_groups": ...}`.

        `state` maps each parameter's index (counting through the groups in order) to its
        buffers, as tensors; `param_groups` holds each group's options and its `params` as
        indices. The buffers are the optimizer's own (not copies), as in PyTorch.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: value for p, value in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state from `state_dict()`: buffers copied, cast to each parameter's dtype.

        The groups must match this optimizer's in number and size; parameters are matched by
        position, as in PyTorch. Options saved in the groups (the learning rate a scheduler
        reached, ...) replace the current ones. A state dict saved by PyTorch loads too, with its
        tensors as they are or converted to numpy arrays (an option saved as a tensor, such as a
        Tensor `lr`, becomes a tensorgrad Tensor).
        """
        name = type(self).__name__
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= state_dict.keys():
            raise TypeError(f"{name}.load_state_dict expects the dict that state_dict() returns, with "
                            f"'state' and 'param_groups', got {_describe(state_dict)}")
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: the saved state has {len(saved_groups)} "
                             f"parameter groups, this optimizer {len(self.param_groups)}")
        saved_sizes = [len(g["params"]) for g in saved_groups]
        sizes = [len(g["params"]) for g in self.param_groups]
        if saved_sizes != sizes:
            raise ValueError(f"{name}.load_state_dict: the saved parameter groups have {saved_sizes} "
                             f"parameters, this optimizer's {sizes}")
        by_index = {i: (p, scalar_dtype(saved))
                    for saved, group in zip(saved_groups, self.param_groups, strict=True)
                    for i, p in zip(saved["params"], group["params"], strict=True)}
        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for i, buffers in state_dict["state"].items():
            if i in by_index:
                param, dtype = by_index[i]
                state[param] = {key: _copy_buffer(value, param, key, self._host_scalars, dtype)
                                for key, value in buffers.items()}
        for saved, group in zip(saved_groups, self.param_groups, strict=True):
            for key, value in saved.items():
                if key != "params":
                    saved[key] = _option_value(value)
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            for key, value in self.defaults.items():
                saved.setdefault(key, value)
            self._check_group(saved)
            check_implementation_options(name, saved)
        self.state, self.param_groups = state, saved_groups


# --- helpers -----------------------------------------------------------------------------------


def _parameter_list(params: Any, optimizer: str) -> tuple[list[Tensor], list[str] | None]:
    """A group's parameters as a list (and their names, for `named_parameters()` input), checked."""
    if isinstance(params, Tensor):
        params = [params]
    elif isinstance(params, set):
        raise TypeError(f"{optimizer}: parameters must come in an ordered collection (a list), not a "
                        "set, whose order changes between runs")
    elif not isinstance(params, Iterable):
        raise TypeError(f"{optimizer}: a group's 'params' must be an iterable of Tensors, got "
                        f"{type(params).__name__}")
    params = list(params)
    named = [isinstance(p, tuple) for p in params]
    names = None
    if any(named):
        if not all(named):
            raise ValueError(f"{optimizer}: all parameters should be given with names or all without")
        names, params = [n for n, _ in params], [p for _, p in params]
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"{optimizer} can only optimize Tensors, but parameter {i} is "
                            f"{type(p).__name__}")
        if not p.is_leaf:
            raise ValueError(
                f"{optimizer}: can't optimize a non-leaf Tensor (parameter {i}, made by "
                f"{p.op!r}); optimize the leaf it was computed from, or a detached copy"
            )
    return params, names


def _array(value: Any) -> Any:
    """The array behind a tensor, or the value itself (an array)."""
    return value.data if isinstance(value, Tensor) else value


def _gradient(p: Tensor, optimizer: str) -> Any:
    """`p.grad` as an array (it may have been set to a Tensor), None if absent; shape checked."""
    grad = p.grad
    if grad is None:
        return None
    if isinstance(grad, Tensor):
        grad = grad.data
    param = p.data
    shape = getattr(grad, "shape", None)
    if shape != param.shape:
        if shape is None:
            raise TypeError(f"{optimizer}.step: a parameter's .grad must be an array or a Tensor, got "
                            f"{type(grad).__name__}")
        # Never broadcast: a wrong-shaped gradient is a bug upstream, not something to spread out.
        raise RuntimeError(f"{optimizer}.step: a parameter of shape {param.shape} has a .grad of shape "
                           f"{shape}; they must match")
    if grad.dtype != param.dtype:
        if grad.dtype.kind not in "fc":
            raise TypeError(f"{optimizer}.step: a parameter's .grad must be floating point, got {grad.dtype}")
        grad = grad.astype(param.dtype)  # the buffers keep the parameter's dtype
    return grad


def _copy_buffer(value: Any, param: Tensor, key: Any, host_scalars: frozenset[str] = frozenset({"step"}),
                 scalar: np.dtype | None = None) -> Any:
    """A saved buffer as a fresh tensor on the parameter's device, in its float dtype (`step`, and
    the other `host_scalars`, stay as saved, on the CPU, where PyTorch keeps the step count too; one
    saved as a plain number becomes a 0-d tensor of dtype `scalar`, float32 if not given).

    Anything array-like is accepted, so a state saved by PyTorch (its tensors) loads too.
    """
    if isinstance(value, dict):
        return {k: _copy_buffer(v, param, k, host_scalars, scalar) for k, v in value.items()}
    host = key in host_scalars
    if host and isinstance(value, numbers.Real):
        return new_leaf(np.array(value, dtype=scalar or np.float32))  # PyTorch keeps the step as a tensor
    if isinstance(value, Tensor) or is_array(value) or hasattr(value, "__array__"):
        array = value.data if isinstance(value, Tensor) else value if is_array(value) else np.asarray(value)
        own = np if host else namespace(param.data)
        # A buffer saved on another device comes through the host.
        array = array.copy() if namespace(array) is own else own.asarray(np.array(to_numpy(array)))
        if not host and param.dtype.kind == "f" and array.dtype.kind == "f":
            array = array.astype(param.dtype, copy=False)
        return new_leaf(array)
    return copy.deepcopy(value)


def _option_value(value: Any) -> Any:
    """A saved group option as the optimizer keeps it: a tensor or array (PyTorch's Tensor `lr`,
    saved as it is or converted to numpy) becomes a tensorgrad Tensor, inside tuples and lists too;
    anything else stays."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, tuple | list):
        return type(value)(_option_value(v) for v in value)
    if is_array(value) or hasattr(value, "__array__"):
        return new_leaf(np.array(to_numpy(value) if is_array(value) else np.asarray(value)))
    return value


def lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """start += weight * (end - start), in place, rounded as PyTorch's `lerp_` rounds it."""
    if weight < 0.5:
        start += weight * (end - start)
    else:  # from the other end: exact at weight 1
        start[...] = end - (end - start) * (1 - weight)


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return f"a dict with keys {sorted(map(str, value))}"
    return type(value).__name__


# --- option checks shared by the optimizers -----------------------------------------------------


# How the messages name an option, where PyTorch's words differ from the key.
_OPTION_WORDS = {"lr": "learning rate lr", "eps": "epsilon eps"}


# The options PyTorch lets be a 1-element Tensor in every optimizer (SGD's weight_decay and Adam's
# betas too: those check themselves with `tensor=True`).
_TENSOR_OPTIONS = frozenset({"lr"})


def check_options(optimizer: str, group: dict[str, Any], *keys: str) -> None:
    """`check_number` (at least 0, no upper bound) for each of the group's options `keys`, in order."""
    for key in keys:
        check_number(optimizer, _OPTION_WORDS.get(key, key), group[key], tensor=key in _TENSOR_OPTIONS)


def check_pair(optimizer: str, group: dict[str, Any], key: str, low: float = 0.0, high: float | None = None,
               high_inclusive: bool = True, tensor: bool = False) -> None:
    """Check that the group's option `key` is a pair (a tuple or a list, kept as given, as PyTorch
    keeps it) of numbers, each as `check_number` says (TypeError for anything but a pair)."""
    pair = group[key]
    if not isinstance(pair, tuple | list) or len(pair) != 2:
        raise TypeError(f"{optimizer}: {key} must be a pair of numbers, got {pair!r}")
    for i, value in enumerate(pair):
        check_number(optimizer, f"{key}[{i}]", value, low, high, high_inclusive, tensor)


def check_implementation_options(optimizer: str, group: dict[str, Any]) -> None:
    """Check the group's options that choose among PyTorch's implementations, as PyTorch does.

    `foreach` and `fused` pick one of PyTorch's kernels for the same rule: tensorgrad has one numpy
    path, so any value is accepted (and kept in the group, as PyTorch keeps it); only the pairs
    PyTorch refuses are refused, with its RuntimeError. `differentiable=True` (record the step in
    the graph) and `capturable=True` (CUDA-graph capture) cannot be honoured: the update writes the
    arrays in place, outside the graph, so they raise NotImplementedError.
    """
    if group.get("fused") and group.get("foreach"):
        raise RuntimeError(f"{optimizer}: `fused` and `foreach` cannot be `True` together.")
    if group.get("fused") and group.get("differentiable"):
        raise RuntimeError(f"{optimizer}: `fused` does not support `differentiable`")
    for key, why in (("differentiable", "the update changes the arrays in place, outside the graph"),
                     ("capturable", "there is no CUDA-graph capture")):
        value = group.get(key)
        if value:
            raise NotImplementedError(f"{optimizer}: {key}={value!r} is not supported ({why}); leave "
                                      f"{key} at False")


def check_number(optimizer: str, name: str, value: Any, low: float = 0.0, high: float | None = None,
                 high_inclusive: bool = True, tensor: bool = False) -> None:
    """Raise TypeError if `value` is not a real number, ValueError if it is outside [low, high].

    With `tensor`, a 1-element Tensor is a number too (ValueError for any other Tensor), as PyTorch
    allows for `lr`.
    """
    if tensor and isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"{optimizer}: Tensor {name} must be 1-element, got shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{optimizer}: {name} must be a number, got {type(value).__name__}")
    too_high = high is not None and (value > high if high_inclusive else value >= high)
    if not value >= low or too_high:  # `not >=` also catches nan
        bound = "" if high is None else f" and {'<=' if high_inclusive else '<'} {high}"
        raise ValueError(f"{optimizer}: invalid {name} = {value}: it must be >= {low}{bound}")


def hyper(value: Any) -> Any:
    """An option as the update uses it: the number itself, or the value of a 1-element Tensor
    (PyTorch's Tensor `lr`, which a scheduler changes in place), read at each step as a numpy
    scalar of the tensor's dtype, so the arithmetic rounds where PyTorch's does (lr / (1 - beta1**t)
    stays float32 for a float32 lr; a 0-d value never widens the parameter's dtype)."""
    if isinstance(value, Tensor):
        return np.asarray(to_numpy(value.data)).reshape(())[()]
    return value


def scalar_dtype(group: dict[str, Any]) -> np.dtype:
    """The dtype of the state's scalars (`step`, ...), PyTorch's `_get_scalar_dtype`: float64 while
    the default dtype is float64, else float32; always float32 with `fused`."""
    if not group.get("fused") and get_default_dtype() == np.float64:
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def check_adam_options(optimizer: str, group: dict[str, Any], *more: str, tensor_betas: bool = False) -> None:
    """The checks of the Adam family: lr and eps, betas a pair in [0, 1) (of numbers, or with
    `tensor_betas` of 1-element Tensors too, as Adam and AdamW allow), weight_decay and `more`."""
    check_options(optimizer, group, "lr", "eps")
    check_pair(optimizer, group, "betas", high=1.0, high_inclusive=False, tensor=tensor_betas)
    check_options(optimizer, group, "weight_decay", *more)


def decayed_gradient(param: np.ndarray, grad: np.ndarray, group: dict[str, Any]) -> np.ndarray:
    """Weight decay, both ways PyTorch has it: with the group's `decoupled_weight_decay`, the
    weights shrink in place by lr * weight_decay (AdamW's rule) and the gradient is as it was;
    else the L2 penalty's gradient weight_decay * param is added to it."""
    weight_decay = hyper(group["weight_decay"])
    if weight_decay == 0:
        return grad
    if group.get("decoupled_weight_decay", False):
        param *= 1 - hyper(group["lr"]) * weight_decay
        return grad
    return grad + weight_decay * param


def count_step(state: dict[str, Any], param: np.ndarray, group: dict[str, Any], *buffers: str,
               **scalars: float) -> float:
    """Add one to the state's step count and return it. On the first step, make the count (a 0-d
    tensor on the host, of `scalar_dtype`, as PyTorch keeps it), then each of `scalars` the same
    way, then a zero buffer like `param` per name in `buffers`: PyTorch's order of the entries."""
    if not state:
        dtype = scalar_dtype(group)
        state["step"] = new_leaf(np.zeros((), dtype))
        for name, value in scalars.items():
            state[name] = new_leaf(np.array(value, dtype))
        for name in buffers:
            state[name] = new_leaf(np.zeros_like(param))
    state["step"].data += 1
    return float(state["step"].data)
