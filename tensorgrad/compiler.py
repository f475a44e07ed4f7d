"""`tg.compile` and `tg.compiler`: PyTorch's compiler entry points, run eagerly.

PyTorch's `torch.compile` traces a function or module into a graph and generates fused kernels;
the result computes the same values as the eager code, only faster. tensorgrad has no code
generator (numpy does the array work), so compiling here keeps the eager code: the values,
gradients and errors are those of the uncompiled model, and code written for PyTorch
(`model = torch.compile(model)`, `@torch.compile`, `model.compile()`) runs unchanged.

What PyTorch users can observe is kept: the arguments are checked as PyTorch checks them (an
unknown `mode` or backend, `mode` with `options`); a compiled module is an `OptimizedModule`
that holds the original as its `_orig_mod` child, so its `state_dict` keys start with
`_orig_mod.` as PyTorch's do; a compiled function keeps its name (`functools.wraps`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tensorgrad.nn.modules import Module

__all__ = ["compile", "OptimizedModule", "is_compiling", "is_dynamo_compiling", "is_exporting", "disable",
           "reset", "list_backends"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# PyTorch's registered backends; the debugging ones are listed only on request, as there.
_BACKENDS = ("cudagraphs", "inductor", "openxla", "tvm")
_DEBUG_BACKENDS = ("aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner", "aot_ts",
                   "eager", "eager_debug", "eager_noexcept", "openxla_eval", "pre_dispatch_eager", "ts")


class OptimizedModule(Module):
    """A compiled module: `module` itself as the child `_orig_mod`, called through it.

    As in PyTorch, attributes are read from (and, other than its own, written to) the original
    module, so `compiled.weight is module.weight`, and `state_dict()` keys carry the
    `_orig_mod.` prefix of the child.
    """

    def __init__(self, module: Module) -> None:
        super().__init__()
        self._orig_mod = module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The original module's call (its hooks included)."""
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":
            return super().__getattr__(name)
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("_orig_mod", "training") or "_orig_mod" not in self.__dict__.get("_modules", {}):
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)


def compile(model: Callable[..., Any] | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable[..., Any] | None = "inductor",
            mode: str | None = None, options: dict[str, Any] | None = None, disable: bool = False,
            **kwargs: Any) -> Any:
    """`model` (a function or a `nn.Module`) ready to call, as `torch.compile` returns it.

    tensorgrad runs it eagerly (see the module's docstring): the result computes exactly what
    `model` does. A module comes back as an `OptimizedModule` around it, a function as a wrapper
    with its name. Without `model`, a decorator (`@tg.compile(mode="max-autotune")`). With
    `disable=True`, `model` itself. `fullgraph`, `dynamic` and `options` change nothing here;
    a `mode` or backend PyTorch does not know raises RuntimeError, as there.
    """
    _check_arguments(backend, mode, options)
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable, **kwargs)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        return model(*args, **kwargs)

    return compiled


def _check_arguments(backend: Any, mode: str | None, options: dict[str, Any] | None) -> None:
    """PyTorch's checks of compile's arguments, with its messages."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same "
                           "time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS + _DEBUG_BACKENDS:
        raise RuntimeError(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` for available "
                           "backends.")
    if backend is not None and not isinstance(backend, str) and not callable(backend):
        raise TypeError(f"compile(): backend must be a name or a callable, not {type(backend).__name__}")


def is_compiling() -> bool:
    """Whether the code runs inside a compiler's trace: never here (compiled code runs eagerly)."""
    return False


def is_dynamo_compiling() -> bool:
    """Whether the code runs inside a Dynamo trace: never here."""
    return False


def is_exporting() -> bool:
    """Whether the code runs inside `torch.export`'s trace: never here."""
    return False


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """Keep `fn` out of compilation: `fn` itself (it runs eagerly anyway); without `fn`, a decorator."""
    if fn is None:
        return lambda f: f
    return fn


def reset() -> None:
    """Clear the compilation caches: there are none, as nothing is compiled."""


def list_backends(exclude_tags: tuple[str, ...] | None = ("debug", "experimental")) -> list[str]:
    """The backend names `compile` accepts, as `torch.compiler.list_backends` lists them."""
    names = _BACKENDS if exclude_tags and "debug" in exclude_tags else _BACKENDS + _DEBUG_BACKENDS
    return sorted(names)
