"""Layers with state: `Module`, `Parameter`, `Linear`, activations, containers and loss modules.

Tutorial chapter 9. A `Module` keeps three registries, filled by attribute assignment as in
PyTorch: `_parameters` (each `Parameter` assigned to it), `_buffers` (tensors registered with
`register_buffer`: state that is saved but not trained, such as BatchNorm's running statistics)
and `_modules` (each sub-module). From them come `parameters()`, `buffers()`, `modules()` and
their `named_` forms with dotted names (`layers.0.weight`), `state_dict()` and
`load_state_dict()`, `zero_grad()`, `train()` / `eval()`, `apply()` and the casts `to()`,
`float()`, `double()`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from tensorgrad import dtypes, loss
from tensorgrad.creation import check_memory_format, default_generator, in_format
from tensorgrad.device import as_device, default_device, is_array, namespace, to_device, to_numpy
from tensorgrad.device import device as Device  # noqa: N812 - PyTorch's lower-case class name
from tensorgrad.elementwise import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
    relu,
    sigmoid,
    tanh,
)
from tensorgrad.function import BackwardHook
from tensorgrad.matmul import bilinear, linear
from tensorgrad.nn.ctc import ctc_loss
from tensorgrad.tensor import Tensor, init_node, to_array

__all__ = [
    "Parameter",
    "Module",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Dropout",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "Identity",
    "Flatten",
    "Unflatten",
    "CrossEntropyLoss",
    "NLLLoss",
    "MSELoss",
    "L1Loss",
    "BCEWithLogitsLoss",
    "BCELoss",
    "KLDivLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "ParameterList",
    "ParameterDict",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "GaussianNLLLoss",
    "PoissonNLLLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "CosineEmbeddingLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "TripletMarginLoss",
    "Bilinear",
    "MultiMarginLoss",
    "MultiLabelMarginLoss",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
    "LazyModuleMixin",
    "LazyLinear",
    "CTCLoss",
    "TripletMarginWithDistanceLoss",
    "NLLLoss2d",
]


class Parameter(Tensor):
    """A tensor that is a module's learnable state: it requires grad unless told otherwise.

    Assigning one to a `Module` attribute registers it. Ops on parameters give plain tensors.
    """

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        # Shares memory with a tensor or array handed in (as torch.nn.Parameter does).
        if data is None:
            data = np.empty(0, dtypes.default_float)
        if isinstance(data, Tensor):
            array = data.data
        else:  # an array on a device is kept as it is; anything else is converted as tg.tensor does
            array = data if namespace(data) is not np else to_array(data)
        init_node(self, array, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


def check_size(op: str, argument: str, value: Any) -> int:
    """`value` as a size argument of `op`: a non-negative int, else PyTorch's exception.

    A float or any other non-int is a TypeError, a negative number a RuntimeError (as
    `torch.empty` raises for both); the message names the op, the argument and the value.
    """
    if isinstance(value, Tensor):
        value = value.__index__()
    if not isinstance(value, int | np.integer):
        raise TypeError(f"{op}: {argument} must be an int, got {type(value).__name__} {value!r}")
    if value < 0:
        raise RuntimeError(f"{op}: {argument} must be non-negative, got {value}")
    return int(value)


class _IncompatibleKeys(NamedTuple):
    """What `load_state_dict` returns: the keys it could not match (PyTorch's class name)."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


IncompatibleKeys = _IncompatibleKeys


class HookHandle:
    """What registering a hook returns: `handle.remove()` takes the hook off again."""

    _numbers = itertools.count()

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks, self._key = hooks, key
        self.id = key

    @classmethod
    def add(cls, hooks: dict, entry: Any, prepend: bool) -> HookHandle:
        """Put `entry` in `hooks` (first, with `prepend`; the dict's order is the call order)."""
        key = next(cls._numbers)
        if prepend:
            rest = dict(hooks)
            hooks.clear()
            hooks[key] = entry
            hooks.update(rest)
        else:
            hooks[key] = entry
        return cls(hooks, key)

    def remove(self) -> None:
        """Take the hook off (a second call does nothing)."""
        self._hooks.pop(self._key, None)

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()  # `with module.register_forward_hook(hook):` takes it off at the end


# Where a Module keeps what `__getattr__` finds: its parameters, buffers and sub-modules.
_REGISTRIES = ("_parameters", "_buffers", "_modules")


class Module:
    """Base class of layers and models: subclass it, assign parameters and layers, write forward.

    >>> class TwoLayer(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = Linear(2, 8)
    ...         self.out = Linear(8, 1)
    ...     def forward(self, x):
    ...         return self.out(self.hidden(x).relu())
    >>> [name for name, _ in TwoLayer().named_parameters()]
    ['hidden.weight', 'hidden.bias', 'out.weight', 'out.bias']
    """

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ reads these registries.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_pre_hooks", {})
        object.__setattr__(self, "_forward_hooks", {})
        # Full backward hooks and backward pre-hooks in one dict ((hook, is_pre) each), so that a
        # module without hooks pays one more check per call, not two.
        object.__setattr__(self, "_backward_hooks", {})
        # State dict hooks, PyTorch's four kinds, in one dict keyed by kind (most modules have none).
        object.__setattr__(self, "_state_dict_hooks", {})

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; every subclass defines it (calling a module calls this)."""
        raise NotImplementedError(f"{type(self).__name__} has no forward() method: a Module subclass "
                                  "defines forward(self, ...) to say what calling it computes")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    # --- forward hooks: look at (or change) what goes into and comes out of forward -----------

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> HookHandle:
        """Call `hook(module, args)` before each forward (`hook(module, args, kwargs)` with
        `with_kwargs`); what it returns, if not None, replaces the arguments (a single value is
        taken as the one argument; with_kwargs: an (args, kwargs) pair). Returns a handle whose
        `remove()` takes the hook off."""
        return HookHandle.add(self._forward_pre_hooks, (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False) -> HookHandle:
        """Call `hook(module, args, output)` after each forward (`hook(module, args, kwargs,
        output)` with `with_kwargs`); what it returns, if not None, replaces the output. Returns
        a handle whose `remove()` takes the hook off. With `always_call`, it is called even when
        the forward (or a hook before it) raises, and the exception then goes on."""
        return HookHandle.add(self._forward_hooks, (hook, with_kwargs, always_call), prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any], *, prepend: bool = False) -> HookHandle:
        """Call `hook(module, grad_input, grad_output)` once per backward pass through a call of
        this module: tuples of the gradients with respect to its positional inputs (None for one
        that is not a tensor, zeros for a tensor that gets none; all None where no input requires
        grad) and to its outputs (None for one that gets none). A tuple it returns replaces
        `grad_input`. Returns a handle whose `remove()` takes the hook off."""
        return HookHandle.add(self._backward_hooks, (hook, False), prepend)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], *,
                                        prepend: bool = False) -> HookHandle:
        """Call `hook(module, grad_output)` once per backward pass through a call of this module,
        before the gradients flow into it; a tuple it returns replaces `grad_output`. Returns a
        handle whose `remove()` takes the hook off."""
        return HookHandle.add(self._backward_hooks, (hook, True), prepend)

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        called: set[int] = set()  # the forward hooks already run (an always_call one runs once)
        try:
            for hook, with_kwargs in list(self._forward_pre_hooks.values()):
                result = hook(self, args, kwargs) if with_kwargs else hook(self, args)
                if result is not None:
                    if with_kwargs:
                        args, kwargs = result
                    else:
                        args = result if isinstance(result, tuple) else (result,)
            backward_hooks = None
            if self._backward_hooks:  # identity nodes around the inputs and outputs call them (PyTorch's way)
                entries = list(self._backward_hooks.values())
                backward_hooks = BackwardHook(self, [hook for hook, pre in entries if not pre],
                                              [hook for hook, pre in entries if pre])
                args = backward_hooks.setup_input_hook(args)
            output = self.forward(*args, **kwargs)
            for key, (hook, with_kwargs, _) in list(self._forward_hooks.items()):
                called.add(key)
                result = hook(self, args, kwargs, output) if with_kwargs else hook(self, args, output)
                if result is not None:
                    output = result
        except Exception:
            for key, (hook, with_kwargs, always_call) in list(self._forward_hooks.items()):
                if always_call and key not in called:  # PyTorch calls them with output None
                    hook(self, args, kwargs, None) if with_kwargs else hook(self, args, None)
            raise
        if backward_hooks is not None:
            output = backward_hooks.setup_output_hook(output)
        return output

    # --- registration -------------------------------------------------------------------------

    def _check_initialised(self, name: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() call: call super().__init__() "
                f"first in {type(self).__name__}.__init__"
            )

    def _check_new_name(self, kind: str, name: Any, registry: dict) -> None:
        """PyTorch's rules for a registered name: a non-empty str without dots, not taken."""
        self._check_initialised(str(name))
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if name not in registry and hasattr(self, name):
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add `param` (a Parameter, or None for an absent one such as `bias=False`) as `name`."""
        self._check_new_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(tensorgrad.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: a tensor that is state but not a parameter (BatchNorm's running mean).

        It is moved and cast with the module and, when `persistent`, saved in `state_dict()`.
        """
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a sub-module as `name` (what attribute assignment does, for computed names)."""
        self._check_new_name("module", name, self._modules)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:  # before Module.__init__: plain attributes only
            if isinstance(value, Parameter | Module | Buffer):
                self._check_initialised(name)
            return object.__setattr__(self, name, value)
        params, buffers, modules = self._parameters, self._buffers, self._modules
        if isinstance(value, Parameter):
            self._forget(name, keep=params)
            params[name] = value  # a name already there keeps its place, as in PyTorch
        elif name in params:  # (before the Module case: a module in a parameter's place is refused)
            self._check_slot_value(name, value, "parameter", "tensorgrad.nn.Parameter")
            params[name] = value
        elif isinstance(value, Module):
            self._forget(name, keep=modules)
            modules[name] = value
        elif name in modules:
            self._check_slot_value(name, value, "child module", "tensorgrad.nn.Module")
            modules[name] = value
        elif name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(Tensor or None expected)")
            buffers[name] = value
            if isinstance(value, Buffer):
                self.register_buffer(name, value, value.persistent)
        elif isinstance(value, Buffer):  # a tensor marked as a buffer registers itself (nn.Buffer)
            self._forget(name, keep=buffers)
            self.register_buffer(name, value, value.persistent)
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _check_slot_value(name: str, value: Any, kind: str, expected: str) -> None:
        # A registered name takes only its own kind or None (PyTorch raises the same way).
        if value is not None:
            raise TypeError(f"cannot assign '{type(value).__name__}' as {kind} '{name}' "
                            f"({expected} or None expected)")

    def _forget(self, name: str, keep: dict | None = None) -> None:
        """Take `name` out of every registry but `keep`, so that assigning it anew replaces it."""
        for registry in (self.__dict__, self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Called only when normal lookup fails (every `self.weight` in a forward): the registries,
        # looked up without building anything, then a clear error for a typo.
        attributes = self.__dict__
        for kind in _REGISTRIES:
            registry = attributes.get(kind)
            if registry is not None and name in registry:
                return registry[name]
        known = sorted(key for kind in _REGISTRIES for key in attributes.get(kind, {}))
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r} (its parameters, "
                             f"buffers and modules: {', '.join(known) or 'none'})")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters or name in self._buffers or name in self._modules:
            self._forget(name)
        else:
            object.__delattr__(self, name)

    def get_submodule(self, target: str) -> Module:
        """The sub-module at the dotted path `target` (`"encoder.layers.0"`; `""` is self)."""
        module: Module = self
        for name in target.split(".") if target else ():
            child = module._modules.get(name)
            if child is None:  # PyTorch's two messages: no such name, or not a module
                if not hasattr(module, name):
                    raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
                raise AttributeError(f"`{name}` is not an nn.Module")
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path `target` (`"encoder.linear1.weight"`)."""
        return self._registered(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path `target` (`"norm.running_mean"`)."""
        return self._registered(target, "_buffers", "a buffer")

    def _registered(self, target: str, registry: str, kind: str) -> Any:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in getattr(module, registry):
            if not hasattr(module, name):
                raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
            raise AttributeError(f"`{name}` is not {kind} of {type(module).__name__}")
        return getattr(module, registry)[name]

    def __dir__(self) -> list[str]:
        names = {*super().__dir__(), *self._parameters, *self._buffers, *self._modules}
        return sorted(name for name in names if not name[0].isdigit())  # a container's 0, 1, ... not

    # --- walking the tree ---------------------------------------------------------------------

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every module under it, depth first, each once, with its dotted name."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                child_prefix = f"{prefix}.{name}" if prefix else name
                yield from module.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every module under it, each once."""
        return (module for _, module in self.named_modules())

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct sub-modules with their names, each once, in assignment order."""
        seen: set[Module] = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct sub-modules, each once, in assignment order."""
        return (module for _, module in self.named_children())

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_name, module in modules:
            for name, member in getattr(module, registry).items():
                if member is None or (remove_duplicate and id(member) in seen):
                    continue  # a tensor shared by two layers counts once
                seen.add(id(member))
                yield (f"{module_name}.{name}" if module_name else name), member

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its dotted name ('0.weight', 'encoder.bias'), each once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter, each once, in registration order: what an optimizer takes."""
        return (param for _, param in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Every buffer (persistent or not) with its dotted name ('bn.running_mean'), each once."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer, each once, in registration order."""
        return (buffer for _, buffer in self.named_buffers(recurse=recurse))

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call `fn` on every sub-module (children first, then self); returns self.

        The usual use is initialisation: `model.apply(init_weights)`.
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- modes and gradients ------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient (None, PyTorch's default; zeros if not set_to_none)."""
        for param in self.parameters():
            if set_to_none or param.grad is None:
                param.grad = None
            else:
                param.grad = np.zeros_like(param.grad)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set `requires_grad` on every parameter (False freezes the module); returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def train(self, mode: bool = True) -> Module:
        """Training mode (Dropout drops, BatchNorm uses batch statistics) for this module and all
        under it; returns self."""
        if not isinstance(mode, bool):
            raise ValueError(f"train: training mode is expected to be boolean, got {type(mode).__name__}")
        object.__setattr__(self, "training", mode)
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode (Dropout passes values through); returns self."""
        return self.train(False)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's call in place, with `tg.compile`'s arguments (`torch.nn.Module.compile`).

        tensorgrad runs compiled code eagerly (see `tensorgrad.compiler`), so the module keeps
        computing what it did; unlike `tg.compile(module)`, its state_dict keys don't change.
        Arguments PyTorch refuses are refused the same way."""
        from tensorgrad.compiler import compile as compile_call  # (on first use, as tg.compile)

        compile_call(self.forward, *args, **kwargs)

    # --- casts --------------------------------------------------------------------------------

    def _apply_to_arrays(self, cast: Callable[[np.ndarray], np.ndarray], floats_only: bool = True) -> Module:
        """Replace the array of every parameter, gradient and buffer by `cast(array)`.

        The Parameter objects stay the same (an optimizer built before still holds them), as in
        PyTorch. With `floats_only` (dtype casts), integer buffers such as BatchNorm's
        `num_batches_tracked` keep their dtype; device moves take every tensor.
        """
        for module in self.modules():
            for tensor in [*module._parameters.values(), *module._buffers.values()]:
                if tensor is None or (floats_only and tensor.data.dtype.kind not in "fc"):
                    continue
                tensor.data = cast(tensor.data)
                if tensor.grad is not None:
                    tensor.grad = cast(tensor.grad)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move parameters and buffers to a device and/or cast the floating ones to a dtype, in
        place: `to("cuda")`, `to(tg.float64)`, `to("cpu", tg.float64)`, `to(dtype=...)`,
        `to(other_tensor)`, `to(memory_format=tg.channels_last)` (the 4-d and 5-d ones relaid, as
        PyTorch's). Returns self."""
        layout = kwargs.pop("memory_format", None)
        dtype, device = _dtype_and_device("Module.to", args, kwargs)
        if dtype is not None and dtype.kind not in "fc":
            raise TypeError(f"Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
        if device is not None:  # checked first: without CuPy, "cuda" is a clear error
            target = as_device(device)
            self._apply_to_arrays(lambda array: to_device(array, target, "Module.to"), floats_only=False)
        if dtype is not None:
            self._apply_to_arrays(lambda array: array.astype(dtype, copy=False))
        if layout is not None:
            layout = check_memory_format(layout, "Module.to")
            self._apply_to_arrays(lambda array: in_format(array, layout) if array.ndim in (4, 5) else array,
                                  floats_only=False)
        return self

    def float(self) -> Module:
        """Cast floating parameters and buffers to float32, in place; returns self."""
        return self.to(np.float32)

    def half(self) -> Module:
        """Cast floating parameters and buffers to float16, in place; returns self."""
        return self.to(np.float16)

    def cpu(self) -> Module:
        """Move parameters and buffers to the CPU, in place; returns self."""
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        """Move parameters and buffers to a GPU (`"cuda"`, or `"cuda:N"`), in place; returns self."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    def double(self) -> Module:
        """Cast floating parameters and buffers to float64, in place; returns self."""
        return self.to(np.float64)

    # --- state --------------------------------------------------------------------------------

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """Every parameter and persistent buffer by dotted name, in PyTorch's order and keys.

        Values are detached (sharing the module's memory) unless `keep_vars`. A module reached
        by two names appears under both, as in PyTorch.
        """
        destination = OrderedDict() if destination is None else destination
        hooks = self._state_dict_hooks
        for hook in hooks.get("pre", {}).values():
            hook(self, prefix, keep_vars)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination, prefix + name + ".", keep_vars)
        for hook in hooks.get("post", {}).values():
            if hook(self, destination, prefix, {}) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    # --- state dict hooks: PyTorch's four kinds -------------------------------------------------

    def _add_state_dict_hook(self, kind: str, hook: Callable[..., Any]) -> HookHandle:
        return HookHandle.add(self._state_dict_hooks.setdefault(kind, {}), hook, prepend=False)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, prefix, keep_vars)` before `state_dict()` saves this module."""
        return self._add_state_dict_hook("pre", hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, state_dict, prefix, local_metadata)` after `state_dict()` saved this
        module and those under it; it may change `state_dict` in place and must return None."""
        return self._add_state_dict_hook("post", hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` before `load_state_dict()` loads this module. `state_dict`
        is the loader's own copy of the whole dict (keys of this module start with `prefix`):
        renaming or converting entries there changes what is loaded."""
        return self._add_state_dict_hook("load_pre", hook)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, incompatible_keys)` after `load_state_dict()` loaded; it may clear
        `incompatible_keys.missing_keys` / `.unexpected_keys` in place (before the strict check)
        and must return None."""
        return self._add_state_dict_hook("load_post", hook)

    def _state_tensors(self) -> dict[str, Tensor]:
        """What `state_dict` would hold, as the module's own tensors (to copy into), without
        running its hooks."""
        own = {}
        for name, module in self.named_modules(remove_duplicate=False):
            prefix = name + "." if name else ""
            for key, tensor in [*module._parameters.items(), *module._buffers.items()]:
                if tensor is not None and key not in module._non_persistent_buffers_set:
                    own[prefix + key] = tensor
        return own

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy values into the parameters and buffers of the same names, in place.

        Values may be Tensors, numpy arrays or anything array-like with the right shape. With
        `strict`, missing and unexpected keys are an error; a value of the wrong shape always is.
        As in PyTorch, the values that fit are loaded first, then the load post-hooks run (they
        may clear the missing and unexpected keys in place), then the errors are raised. Returns
        the missing and unexpected keys.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"load_state_dict: expected state_dict to be dict-like, got "
                            f"{type(state_dict).__name__}")
        state_dict = OrderedDict(state_dict)  # the loader's own copy, which pre-hooks may change
        modules = list(self.named_modules(remove_duplicate=False))
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        for name, module in modules:
            prefix = name + "." if name else ""
            for hook in module._state_dict_hooks.get("load_pre", {}).values():
                hook(module, state_dict, prefix, {}, strict, missing, unexpected, errors)
            if isinstance(module, LazyModuleMixin):  # lazy layers first take the loaded shapes
                module._materialize_from(state_dict, prefix)
        own = self._state_tensors()
        missing += [key for key in own if key not in state_dict]
        unexpected += [key for key in state_dict if key not in own]
        values = {}
        for key, tensor in own.items():
            if key in state_dict:
                value, error = _state_value(key, state_dict[key], tensor)
                values[key] = value
                errors += [error] if error else []
        post_hooks = [(module, hook) for _, module in reversed(modules)  # children before parents
                      for hook in module._state_dict_hooks.get("load_post", {}).values()]
        for key, value in values.items():
            if value is not None:  # (a value that doesn't fit is reported below, and left out)
                _copy_into(own[key], value, assign)
        keys = _IncompatibleKeys(missing, unexpected)
        for module, hook in post_hooks:
            if hook(module, keys) is not None:
                raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` "
                                     "are not expected to return new values, if incompatible_keys "
                                     "need to be modified, it should be done inplace.")
        if strict:  # PyTorch's messages and order: missing, unexpected, then the values that failed
            errors = ([f"Missing key(s) in state_dict: {_quoted(missing)}. "] if missing else []) + (
                [f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. "] if unexpected else []) + errors
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # --- printing -----------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The arguments shown in this module's repr line (override in subclasses)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr().split("\n") if self.extra_repr() else []
        children = [f"({name}): " + repr(module).replace("\n", "\n  ")
                    for name, module in self._modules.items()]
        if len(extra) == 1 and not children:
            return f"{type(self).__name__}({extra[0]})"
        if not extra and not children:
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(\n  " + "\n  ".join(extra + children) + "\n)"


def _quoted(keys: list[str]) -> str:
    return ", ".join(f'"{key}"' for key in keys)


def _state_value(key: str, value: Any, tensor: Tensor) -> tuple[np.ndarray | None, str | None]:
    """The array to load into `tensor` from a state dict's `value`, or the error to report."""
    try:
        array = value.data if isinstance(value, Tensor) else value if is_array(value) else np.asarray(value)
    except (TypeError, RuntimeError) as error:  # e.g. a torch tensor that requires grad
        return None, f"While copying the parameter named \"{key}\", could not read its value: {error}"
    if array.dtype.kind not in "biufc":
        return None, (f"While copying the parameter named \"{key}\", expected a tensor or numeric "
                      f"array, got {type(value).__name__} of dtype {array.dtype}")
    if array.shape != tensor.shape:
        return None, (f"size mismatch for {key}: copying a param with shape {array.shape} from "
                      f"checkpoint, the shape in current model is {tensor.shape}.")
    return array, None


def _copy_into(tensor: Tensor, array: Any, assign: bool) -> None:
    """Load `array` into `tensor`: in place (optimizers holding it see the new values), across
    devices if need be, or, with `assign`, by taking a copy of the array on its own device, as
    PyTorch's `assign=True` does."""
    if assign:
        tensor.data = array.copy() if is_array(array) else np.array(array)
    else:
        own = namespace(tensor.data)
        if namespace(array) is not own:  # a CPU state dict into a model on the GPU, or back
            array = own.asarray(to_numpy(array))
        tensor.data[...] = array
    tensor._versions[0] += 1


def _dtype_and_device(op: str, args: tuple, kwargs: dict) -> tuple[np.dtype | None, Any]:
    """Read PyTorch's `to(...)` forms: a dtype, a device string, a tensor, or keywords."""
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"{op}: unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, str | Device):
            device = arg
        elif arg is not None:
            dtype = arg
    try:
        return (None if dtype is None else np.dtype(dtype)), device
    except TypeError as error:
        raise TypeError(f"{op}: {dtype!r} is not a dtype") from error


def _place(module: Module, device: Any) -> Module:
    """A layer's `device=` argument: the module, built on the CPU, moved there (None: to the
    default device, `tg.set_default_device`, which is the CPU unless set).

    Built on the CPU first, so its random initial values are the same numbers on either device
    (they come from tensorgrad's numpy generator, `tg.manual_seed`).
    """
    if device is None:
        device = default_device()
    return module if device is None else module.to(device)


# --- layers ---------------------------------------------------------------------------------------


class Linear(Module):
    """y = x @ weight.T + bias, weight (out_features, in_features).

    PyTorch's default initialisation: weight and bias uniform in ±1/sqrt(in_features), drawn from
    tensorgrad's generator (`tg.manual_seed`), the same numbers for any `device`.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = check_size("Linear", "in_features", in_features)
        self.out_features = check_size("Linear", "out_features", out_features)
        bound = 1 / math.sqrt(self.in_features) if self.in_features else 0.0
        dtype = dtypes.or_default(dtype)
        self.weight = Parameter(_uniform(bound, (self.out_features, self.in_features), dtype))
        bias_values = _uniform(bound, (self.out_features,), dtype) if bias else None
        self.register_parameter("bias", None if bias_values is None else Parameter(bias_values))
        _place(self, device)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        return linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        has_bias = self.bias is not None
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={has_bias}"


def _uniform(bound: float, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Uniform in [-bound, bound) from tensorgrad's generator (`tg.manual_seed`)."""
    return default_generator().uniform(-bound, bound, shape).astype(dtype)


class Bilinear(Module):
    """y = x1^T A x2 + b per output feature: weight (out, in1, in2), bias (out,), both uniform in
    ±1/sqrt(in1_features) as in PyTorch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        bound = 1 / math.sqrt(in1_features) if in1_features else 0.0
        dtype = dtypes.or_default(dtype)
        self.weight = Parameter(_uniform(bound, (out_features, in1_features, in2_features), dtype))
        self.register_parameter("bias", Parameter(_uniform(bound, (out_features,), dtype)) if bias else None)
        _place(self, device)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class ReLU(Module):
    """max(x, 0), as a layer (`inplace=True` writes into its input)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        return relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x), as a layer."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        return tanh(input)


class Sigmoid(Module):
    """1 / (1 + e**-x), as a layer."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        return sigmoid(input)


class Dropout1d(Module):
    """In training, zero whole channels with probability p (each (N, C) row of an (N, C, L) or
    each channel of a (C, L) input) and scale the rest by 1 / (1 - p)."""

    _function = staticmethod(dropout1d)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"{type(self).__name__}: dropout probability has to be between 0 and 1, "
                             f"but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._function(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout1d):
    """In training, zero whole feature maps with probability p (of (N, C, H, W) or (C, H, W) input)
    and scale the rest by 1 / (1 - p)."""

    _function = staticmethod(dropout2d)


class Dropout3d(Dropout1d):
    """In training, zero whole volumes with probability p (of (N, C, D, H, W) or (C, D, H, W)
    input) and scale the rest by 1 / (1 - p)."""

    _function = staticmethod(dropout3d)


class AlphaDropout(Dropout1d):
    """In training, alpha dropout (`F.alpha_dropout`): dropped elements take SELU's saturation value
    and all are scaled and shifted so zero mean and unit variance stay. Identity in eval mode.
    (`inplace` is stored but, as in PyTorch, not used.)"""

    _function = staticmethod(alpha_dropout)


class FeatureAlphaDropout(Dropout1d):
    """In training, alpha dropout of whole channels (`F.feature_alpha_dropout`). Identity in eval mode."""

    _function = staticmethod(feature_alpha_dropout)


class Dropout(Module):
    """In training, zero each element with probability p and scale the rest by 1 / (1 - p).

    In eval mode it passes its input through unchanged.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not isinstance(p, int | float | np.number) or isinstance(p, bool):
            raise TypeError(f"Dropout: p must be a number, got {type(p).__name__} {p!r}")
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored, as in PyTorch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        return input


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        for name, value in (("start_dim", start_dim), ("end_dim", end_dim)):
            if not isinstance(value, int | np.integer) or isinstance(value, bool):
                raise TypeError(f"Flatten: {name} must be an int, got {type(value).__name__} {value!r}")
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        ndim = input.ndim
        start = self.start_dim + ndim if self.start_dim < 0 else self.start_dim
        end = self.end_dim + ndim if self.end_dim < 0 else self.end_dim
        if not 0 <= start <= end < ndim:
            return input.flatten(self.start_dim, self.end_dim)  # the checks and errors of Tensor.flatten
        # The new shape computed here, with math.prod: this layer sits in every step of a CNN or
        # an embedding model, and Tensor.flatten's general path costs several times a reshape.
        shape = input.shape
        out = input.reshape(shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])
        out.op = "flatten"
        return out

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim `dim` into `unflattened_size`: Unflatten(1, (2, 5)) maps (N, 10) to (N, 2, 5).

    One entry of `unflattened_size` may be -1 (inferred), as in `reshape`.
    """

    def __init__(self, dim: int, unflattened_size: Iterable[int]) -> None:
        super().__init__()
        if not isinstance(dim, int | np.integer) or isinstance(dim, bool):
            raise TypeError(f"Unflatten: dim must be an int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, list | tuple):
            raise TypeError("Unflatten: unflattened_size must be a tuple or list of ints, got "
                            f"{type(unflattened_size).__name__}")
        for size in unflattened_size:
            if not isinstance(size, int | np.integer) or isinstance(size, bool):
                raise TypeError(f"Unflatten: unflattened_size must hold ints, got {unflattened_size!r}")
        self.dim, self.unflattened_size = int(dim), unflattened_size  # a list stays a list (repr)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        ndim = input.ndim
        if not -ndim <= self.dim < ndim:
            raise IndexError(f"Unflatten: dim {self.dim} is out of range for an input of shape "
                             f"{input.shape} (expected in [{-ndim}, {ndim - 1}])")
        dim = self.dim % ndim
        sizes = tuple(self.unflattened_size)
        shape = input.shape[:dim] + sizes + input.shape[dim + 1:]
        known = math.prod(size for size in self.unflattened_size if size != -1)
        if (-1 not in self.unflattened_size and known != input.shape[dim]) or \
                (-1 in self.unflattened_size and (known == 0 or input.shape[dim] % known)):
            raise RuntimeError(f"Unflatten: unflattened_size {self.unflattened_size} does not "
                               f"multiply to the size {input.shape[dim]} of dim {self.dim} of input "
                               f"shape {input.shape}")
        return input.reshape(shape)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# --- containers -----------------------------------------------------------------------------------


class Sequential(Module):
    """Modules applied one after the other; registered as '0', '1', ... (or by the names of an
    OrderedDict handed in alone)."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, _checked_module("Sequential", name, module))
            return
        for i, module in enumerate(modules):
            self.add_module(str(i), _checked_module("Sequential", i, module))

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, index: int | slice) -> Module:
        if isinstance(index, slice):
            return Sequential(OrderedDict(list(self._modules.items())[index]))
        return self._modules[_list_key("Sequential", self._modules, index)]

    def __setitem__(self, index: int, module: Module) -> None:
        key = _list_key("Sequential", self._modules, index)
        setattr(self, key, _checked_module("Sequential", index, module))

    def __delitem__(self, index: int | slice) -> None:
        keys = list(self._modules)
        doomed = keys[index] if isinstance(index, slice) else [_list_key("Sequential", self._modules, index)]
        for key in doomed:
            del self._modules[key]
        # Renumber as PyTorch does, so that the names stay 0, 1, 2, ...
        modules = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(modules):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), _checked_module("Sequential", len(self), module))
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        """Add each of `modules` at the end; returns self."""
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert `module` before position `index` (-len <= index <= len); returns self."""
        if not isinstance(module, Module):  # PyTorch asserts here
            raise AssertionError(f"Sequential.insert: module should be of type Module, got "
                                 f"{type(module).__name__}")
        if not -len(self) <= index <= len(self):
            raise IndexError(f"Sequential.insert: index out of range: {index} for {len(self)} modules")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self._modules.update((str(i), module) for i, module in enumerate(modules))
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove the module at position `key` and return it (the rest are renumbered)."""
        module = self[key]
        del self[key]
        return module

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, other: int) -> Sequential:
        """The modules repeated `other` times (the same module objects, as in PyTorch)."""
        if not isinstance(other, int) or isinstance(other, bool):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        repeated = self * other
        self._modules.clear()
        self._modules.update(repeated._modules)
        return self


class ModuleList(Module):
    """A list of modules, registered as '0', '1', ... so their parameters are the model's.

    Indexing, slicing (a ModuleList), `len`, iteration, `append`, `extend`, `insert`, `+`.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Module | ModuleList:
        if isinstance(index, slice):
            return ModuleList(list(self._modules.values())[index])
        return self._modules[_list_key("ModuleList", self._modules, index)]

    def __setitem__(self, index: int, module: Module) -> None:
        key = _list_key("ModuleList", self._modules, index)
        setattr(self, key, _checked_module("ModuleList", index, module))

    def __delitem__(self, index: int | slice) -> None:
        modules = list(self._modules.values())
        del modules[index if isinstance(index, slice) else int(_list_key("ModuleList", self._modules, index))]
        self._modules.clear()
        self.extend(modules)  # renumbered 0, 1, 2, ... as in PyTorch

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def append(self, module: Module) -> ModuleList:
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), _checked_module("ModuleList", len(self), module))
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each of `modules` at the end; returns self."""
        if not isinstance(modules, Iterable) or isinstance(modules, Module) and not isinstance(
                modules, ModuleList | Sequential):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert `module` before position `index`."""
        modules = list(self._modules.values())
        modules.insert(index, _checked_module("ModuleList", index, module))
        self._modules.clear()
        self.extend(modules)

    def pop(self, key: int | slice) -> Module:
        """Remove the module at position `key` and return it (the rest are renumbered)."""
        module = self[key]
        del self[key]
        return module

    def __repr__(self) -> str:
        # PyTorch's: runs of equal reprs in one line, "(0-2): 3 x Linear(...)".
        if not self._modules:
            return f"{type(self).__name__}()"
        runs: list[list[Any]] = []  # [first index, last index, repr]
        for i, module in enumerate(self._modules.values()):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = [(f"({first}): " if first == last else f"({first}-{last}): {last - first + 1} x ")
                 + text.replace("\n", "\n  ") for first, last, text in runs]
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered under their keys (insertion order kept).

    `d[key]`, `d[key] = module`, `del d[key]`, `len`, `in`, iteration over keys, `keys()`,
    `values()`, `items()`, `update()`, `pop()`, `clear()`.
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise KeyError(f"ModuleDict has no key {key!r} (keys: {', '.join(self._modules) or 'none'})")
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, _checked_module("ModuleDict", key, module))

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order."""
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        """The modules, in insertion order."""
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        """(key, module) pairs, in insertion order."""
        return self._modules.items()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add or replace modules from a mapping or from (key, module) pairs."""
        if isinstance(modules, Mapping | ModuleDict):
            pairs = list(modules.items())
        elif isinstance(modules, Iterable):
            pairs = [tuple(pair) for pair in modules]
            for i, pair in enumerate(pairs):
                if len(pair) != 2:
                    raise ValueError(f"ModuleDict.update: element {i} should be a (key, module) "
                                     f"pair, got {len(pair)} elements")
        else:
            raise TypeError("ModuleDict.update should be called with a mapping or an iterable of "
                            f"(key, module) pairs, got {type(modules).__name__}")
        for key, module in pairs:
            self[key] = module

    def pop(self, key: str) -> Module:
        """Remove the module under `key` and return it."""
        module = self[key]
        del self._modules[key]
        return module

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()


class ParameterList(Module):
    """A list of parameters, registered as '0', '1', ... so they are the model's; a tensor put in
    becomes a Parameter (sharing its memory), as in PyTorch.

    Indexing, slicing (a ParameterList), `len`, iteration, `append`, `extend`.
    """

    def __init__(self, values: Iterable[Tensor] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, index: int | slice) -> Parameter | ParameterList:
        if isinstance(index, slice):
            return ParameterList(list(self._parameters.values())[index])
        return self._parameters[_list_key("ParameterList", self._parameters, index, "parameters")]

    def __setitem__(self, index: int, value: Tensor) -> None:
        key = _list_key("ParameterList", self._parameters, index, "parameters")
        setattr(self, key, _as_parameter("ParameterList", index, value))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def append(self, value: Tensor) -> ParameterList:
        """Add `value` (a Parameter, or a tensor made one) at the end; returns self."""
        self.register_parameter(str(len(self)), _as_parameter("ParameterList", len(self), value))
        return self

    def extend(self, values: Iterable[Tensor]) -> ParameterList:
        """Add each of `values` at the end; returns self."""
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return _parameters_repr(self._parameters.items(), lambda p: p.dtype)

    def __iadd__(self, values: Iterable[Tensor]) -> ParameterList:
        return self.extend(values)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class _MissingKeyError(KeyError, AttributeError):
    """A key a ParameterDict lacks: a KeyError, and an AttributeError as PyTorch raises."""


class ParameterDict(Module):
    """A dict of parameters, registered under their keys (insertion order kept); a tensor put in
    becomes a Parameter. `d[key]`, `d[key] = tensor`, `del d[key]`, `len`, `in`, iteration over
    keys, `keys()`, `values()`, `items()`, `update()`."""

    def __init__(self, parameters: Mapping[str, Tensor] | Iterable[tuple[str, Tensor]] | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Parameter:
        if key not in self._parameters:
            raise _MissingKeyError(f"ParameterDict has no key {key!r} "
                                   f"(keys: {', '.join(self._parameters) or 'none'})")
        return self._parameters[key]

    def __setitem__(self, key: str, value: Tensor) -> None:
        setattr(self, key, _as_parameter("ParameterDict", key, value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order."""
        return self._parameters.keys()

    def values(self) -> Iterable[Parameter]:
        """The parameters, in insertion order."""
        return self._parameters.values()

    def items(self) -> Iterable[tuple[str, Parameter]]:
        """(key, parameter) pairs, in insertion order."""
        return self._parameters.items()

    def update(self, parameters: Mapping[str, Tensor] | Iterable[tuple[str, Tensor]]) -> None:
        """Add or replace parameters from a mapping or from (key, tensor) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value "
                            f"pairs, but got {type(parameters).__name__}")
        pairs = parameters.items() if isinstance(parameters, Mapping | ParameterDict) else parameters
        for key, value in pairs:
            self[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        """The parameter under `key`, or `default`."""
        return self._parameters.get(key, default)

    def pop(self, key: str) -> Parameter:
        """Remove the parameter under `key` and return it."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Parameter]:
        """Remove the last (key, parameter) pair and return it."""
        return self._parameters.popitem()

    def setdefault(self, key: str, default: Tensor | None = None) -> Parameter:
        """The parameter under `key`; if there is none, first put `default` there."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every parameter."""
        self._parameters.clear()

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(self.items())

    def fromkeys(self, keys: Iterable[str], default: Tensor | None = None) -> ParameterDict:
        """A new ParameterDict with `default` under each of `keys`."""
        return ParameterDict((key, default) for key in keys)

    def __or__(self, other: ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def extra_repr(self) -> str:
        return _parameters_repr(self._parameters.items(), lambda p: p.type())


def _parameters_repr(items: Iterable[tuple[str, Tensor]], kind: Callable[[Tensor], Any]) -> str:
    """The lines of ParameterList's and ParameterDict's reprs, as PyTorch writes them (its
    ParameterList names the dtype, its ParameterDict the tensor type)."""
    lines = []
    for key, p in items:
        device = f" ({p.device})" if p.device.type != "cpu" else ""
        lines.append(f"  ({key}): Parameter containing: [{kind(p)} of size {'x'.join(map(str, p.shape))}"
                     f"{device}]")
    return "\n".join(lines)


def _as_parameter(container: str, position: Any, value: Any) -> Parameter:
    """`value` as a Parameter: itself if it is one, a Parameter sharing a tensor's memory else."""
    if isinstance(value, Parameter):
        return value
    if not isinstance(value, Tensor):
        raise TypeError(f"{container}: entry {position} is a {type(value).__name__}, not a Tensor")
    return Parameter(value)


def _checked_module(container: str, position: Any, module: Any) -> Module:
    if not isinstance(module, Module):
        raise TypeError(f"{container}: argument {position} is a {type(module).__name__}, not a Module")
    return module


def _list_key(container: str, modules: dict, index: Any, noun: str = "modules") -> str:
    """The registry key of position `index` (negative counts from the end), checked."""
    if not isinstance(index, int | np.integer) or isinstance(index, bool):
        raise TypeError(f"{container} indices must be integers or slices, not {type(index).__name__}")
    if not -len(modules) <= index < len(modules):
        raise IndexError(f"{container}: index {index} is out of range for {len(modules)} {noun}")
    return list(modules)[index % len(modules)]


# --- loss modules ---------------------------------------------------------------------------------


class _Loss(Module):
    """A loss as a layer: holds the reduction (PyTorch's legacy `size_average`/`reduce` too)."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = loss._reduction(type(self).__name__, reduction, size_average, reduce)


class _WeightedLoss(_Loss):
    """A loss with weights (per class, or per element), kept as the buffer `weight` (so in the
    state dict)."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """`F.cross_entropy` as a layer: `criterion = CrossEntropyLoss(); criterion(logits, target)`."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                                  reduction=self.reduction, label_smoothing=self.label_smoothing)


@dataclasses.dataclass
class LinearCrossEntropyOptions:
    """PyTorch's settings for computing `linear_cross_entropy` in batch chunks, so the full logits
    are never held at once: a memory saving on a large vocabulary. tensorgrad computes the whole
    logits, so these settings are kept and change no number."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None


class LinearCrossEntropyLoss(_WeightedLoss):
    """A linear layer to `num_classes` logits (times `out_features` for a K-dimensional loss) and
    `F.cross_entropy` on them, as one criterion: `F.linear_cross_entropy` with its own `linear`."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (),
                 bias: bool = False, device: Any = None, dtype: Any = None, reduction: str = "mean",
                 weight: Tensor | None = None, ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if not 0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, out_features
        self.ignore_index, self.label_smoothing, self.options = ignore_index, label_smoothing, options
        # Linear holds 2-D weights: the logits of every (class, *out_features) come from one row.
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias,
                             device=device, dtype=dtype)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        from tensorgrad.nn.functional import linear_cross_entropy

        weight = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        bias = self.linear.bias
        bias = None if bias is None else bias.reshape((self.num_classes, *self.out_features))
        return linear_cross_entropy(input, weight, target, linear_bias=bias, weight=self.weight,
                                    reduction=self.reduction, ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


class NLLLoss(_WeightedLoss):
    """`F.nll_loss` as a layer (its input holds log-probabilities, as from `log_softmax`)."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                             reduction=self.reduction)


class MSELoss(_Loss):
    """`F.mse_loss` as a layer: (input - target) ** 2, reduced."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """`F.l1_loss` as a layer: |input - target|, reduced."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.l1_loss(input, target, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """`F.binary_cross_entropy_with_logits` as a layer; `weight` and `pos_weight` are buffers."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                     reduction=self.reduction, pos_weight=self.pos_weight)


class BCELoss(_WeightedLoss):
    """`F.binary_cross_entropy` as a layer: for probabilities in [0, 1] (see BCEWithLogitsLoss)."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class KLDivLoss(_Loss):
    """`F.kl_div` as a layer: input log-probabilities, target probabilities (or log ones)."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        batchmean = reduction == "batchmean" and size_average is None and reduce is None
        super().__init__(size_average, reduce, "mean" if batchmean else reduction)
        self.reduction = "batchmean" if batchmean else self.reduction  # kl_div's own reduction
        self.log_target = log_target

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SmoothL1Loss(_Loss):
    """`F.smooth_l1_loss` as a layer: squared below `beta`, absolute above."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """`F.huber_loss` as a layer: squared below `delta`, delta times absolute above."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return loss.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class GaussianNLLLoss(_Loss):
    """`F.gaussian_nll_loss` as a layer: `criterion(input, target, var)`."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Any, var: Any) -> Tensor:  # noqa: A002
        return loss.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class PoissonNLLLoss(_Loss):
    """`F.poisson_nll_loss` as a layer."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average: bool | None = None,
                 eps: float = 1e-8, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Any) -> Tensor:
        return loss.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                     reduction=self.reduction)


class _MarginLoss(_Loss):
    """A loss with a `margin` option."""

    def __init__(self, margin: float = 0.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """`F.margin_ranking_loss` as a layer: `criterion(input1, input2, target)`."""

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return loss.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """`F.hinge_embedding_loss` as a layer (margin 1 by default)."""

    def __init__(self, margin: float = 1.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return loss.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """`F.cosine_embedding_loss` as a layer: `criterion(input1, input2, target)`."""

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return loss.cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """`F.soft_margin_loss` as a layer."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return loss.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """`F.multilabel_soft_margin_loss` as a layer; `weight` (per class) is a buffer."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return loss.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_MarginLoss):
    """`F.triplet_margin_loss` as a layer: `criterion(anchor, positive, negative)`."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)
        self.p, self.eps, self.swap = p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return loss.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                        reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """`F.multi_margin_loss` as a layer: the multi-class hinge loss; `weight` (per class) is a buffer."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got p={p}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be 1-D (one per class), got shape "
                             f"{tuple(weight.shape)}")
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return loss.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                      reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """`F.multilabel_margin_loss` as a layer: the multi-label hinge loss."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return loss.multilabel_margin_loss(input, target, reduction=self.reduction)


# --- the last losses: connectionist temporal classification, triplets under any distance, the
# deprecated 2-D alias of NLLLoss ------------------------------------------------------------------


class CTCLoss(_Loss):
    """`F.ctc_loss` as a layer: `criterion(log_probs, targets, input_lengths, target_lengths)`."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)


class TripletMarginWithDistanceLoss(_Loss):
    """`F.triplet_margin_with_distance_loss` as a layer: `criterion(anchor, positive, negative)`.
    The default distance is a `PairwiseDistance()` sub-module (so it shows in the repr)."""

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> None:
        from tensorgrad.nn.normalization import PairwiseDistance  # (normalization imports this module)

        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.distance_function = PairwiseDistance() if distance_function is None else distance_function
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return loss.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                      distance_function=self.distance_function,
                                                      margin=self.margin, swap=self.swap,
                                                      reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """`NLLLoss` under its deprecated 2-D name (it warns, as PyTorch does)."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
                      "replacement.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


# --- buffers by assignment, and lazy modules: shapes inferred from the first input -----------------


class Buffer(Tensor):
    """A tensor marked as module state that is not a parameter: assigning one to a `Module`
    attribute registers it as a buffer (`persistent=False` keeps it out of `state_dict()`),
    as `torch.nn.Buffer`. Shares memory with the tensor or array it is made from."""

    __slots__ = ("persistent",)

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        if data is None:
            data = np.empty(0, dtypes.default_float)
        requires_grad = bool(isinstance(data, Tensor) and data.requires_grad)
        if isinstance(data, Tensor):
            array = data.data
        else:  # an array on a device is kept as it is, anything else converted as tg.tensor does
            array = data if namespace(data) is not np else to_array(data)
        init_node(self, array, requires_grad)
        self.persistent = persistent


class UninitializedParameter(Parameter):
    """A parameter of a lazy module whose shape is not known yet: empty until the module's first
    forward, which `materialize`s it into a `Parameter` of the inferred shape (the same object)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(np.empty(0, dtypes.or_default(dtype)), requires_grad)
        if device is not None:
            self.data = to_device(self.data, as_device(device), "UninitializedParameter")

    def materialize(self, data: Any) -> None:
        """Become a `cls_to_become` holding `data` (an array of the inferred shape), in place."""
        self.data = data
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedBuffer(Tensor):
    """A buffer of a lazy module whose shape is not known yet (BatchNorm's running statistics):
    `materialize`d into a plain tensor of the inferred shape by the module's first forward."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        array = np.empty(0, dtypes.or_default(dtype))
        if device is not None:
            array = to_device(array, as_device(device), "UninitializedBuffer")
        init_node(self, array, requires_grad)

    materialize = UninitializedParameter.materialize

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class LazyModuleMixin:
    """What a lazy module adds to its non-lazy class: uninitialised parameters and buffers until
    the first call, which reads the missing sizes from the input (`_inferred_sizes`), builds the
    non-lazy module of those sizes (`_built_for`), takes over its initial values and turns this
    module into that class (`cls_to_become`), so that its repr and state_dict keys are the
    non-lazy one's. `load_state_dict` before the first call gives them the loaded shapes.
    """

    cls_to_become: type = Module

    def _make_lazy(self, parameters: tuple[str, ...], buffers: tuple[str, ...], options: tuple) -> None:
        """Set the named parameters, and the named buffers that are present, to uninitialised
        ones; keep the constructor's `options` for `_built_for` (device and dtype last)."""
        device, dtype = options[-2:]
        self._lazy_options = options
        for name in parameters:
            self._forget(name, keep=self._parameters)  # (a `bias = None` may be a plain attribute)
            self._parameters[name] = UninitializedParameter(device=device, dtype=dtype)
        for name in buffers:
            if self._buffers.get(name) is not None:
                self._buffers[name] = UninitializedBuffer(device=device, dtype=dtype)
        self._lazy_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer still waits for the first input."""
        return any(isinstance(t, UninitializedParameter | UninitializedBuffer)
                   for t in [*self._parameters.values(), *self._buffers.values()])

    def _inferred_sizes(self, input: Tensor) -> dict[str, int]:  # noqa: A002
        """The sizes the first input decides (`in_features`, ...); each lazy class says which."""
        raise NotImplementedError(f"{type(self).__name__} must define _inferred_sizes")

    def _built_for(self, sizes: dict[str, int]) -> Module:
        """The non-lazy module of those sizes; each lazy class builds its own."""
        raise NotImplementedError(f"{type(self).__name__} must define _built_for")

    def initialize_parameters(self, input: Tensor) -> None:  # noqa: A002
        """Give every uninitialised parameter and buffer its shape and initial values from `input`."""
        sizes = self._inferred_sizes(input)
        if self.has_uninitialized_params():
            built = self._built_for(sizes)
            for mine, theirs in ((self._parameters, built._parameters), (self._buffers, built._buffers)):
                for name, value in mine.items():
                    if isinstance(value, UninitializedParameter | UninitializedBuffer):
                        # on the device and in the dtype the module was moved to since
                        array = namespace(value.data).asarray(theirs[name].data, dtype=value.data.dtype)
                        value.materialize(array)
        for name, size in sizes.items():
            setattr(self, name, size)

    def _materialize_from(self, state_dict: Mapping[str, Any], prefix: str) -> None:
        """Give the uninitialised tensors that `state_dict` holds values for the shapes of those
        values (uninitialised memory: `load_state_dict` then copies the values in)."""
        for registry in (self._parameters, self._buffers):
            for name, value in registry.items():
                lazy = isinstance(value, UninitializedParameter | UninitializedBuffer)
                if lazy and prefix + name in state_dict:
                    shape = np.shape(state_dict[prefix + name])
                    value.materialize(namespace(value.data).empty(shape, dtype=value.data.dtype))

    @staticmethod
    def _infer_parameters(module: Any, args: tuple) -> None:
        module.initialize_parameters(args[0])
        module._lazy_hook.remove()
        del module._lazy_hook, module._lazy_options
        module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """`Linear` whose `in_features` is read from the first input's last dimension; until then
    `weight` and `bias` are `UninitializedParameter`s. Then it is a `Linear`."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        # Built empty and without a bias: no random numbers drawn before the real ones.
        Linear.__init__(self, 0, 0, False, device, dtype)
        self.out_features = check_size("LazyLinear", "out_features", out_features)
        self._make_lazy(("weight", "bias") if bias else ("weight",), (), (bias, device, dtype))

    def _inferred_sizes(self, input: Tensor) -> dict[str, int]:  # noqa: A002
        return {"in_features": input.shape[-1]}

    def _built_for(self, sizes: dict[str, int]) -> Module:
        return Linear(sizes["in_features"], self.out_features, *self._lazy_options)
