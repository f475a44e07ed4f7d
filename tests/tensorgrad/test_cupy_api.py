"""Every numpy function tensorgrad calls has a CuPy counterpart that takes the same keywords.

On a GPU, `np.exp(a)` on a CuPy array runs `cupy.exp`, and `namespace(a).zeros(...)` is
`cupy.zeros`: numpy hands the call over by name. A name CuPy lacks, or a keyword its version
does not take, fails only there. This test reads tensorgrad's source, collects each call spelled
`np.NAME(...)` or through an array module (`xp`, `arrays`, `namespace(x)`), and looks each one up
in CuPy. CuPy imports without a GPU, so it runs wherever CuPy is installed; elsewhere it skips.
Ufunc methods CuPy has only in part (`ufunc.at`, `ufunc.accumulate`) go through
`device.ufunc_at` and `device.accumulate`, which `test_device_fallbacks.py` covers.
"""

from __future__ import annotations

import ast
import inspect
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import tensorgrad

cupy = pytest.importorskip("cupy", reason="CuPy is not installed")

SOURCE = Path(tensorgrad.__file__).parent
MODULE_NAMES = {"np", "xp", "arrays", "own"}  # how the source names numpy or an array's module
HOST_ONLY = {"lib.format"}  # save/load read and write numpy's file format on the host


def _dotted(node: ast.AST) -> str | None:
    """`lib.stride_tricks.as_strided` for `np.lib.stride_tricks.as_strided` (or `xp.`,
    `namespace(x).`), None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    rooted = (isinstance(node, ast.Name) and node.id in MODULE_NAMES) or (
        isinstance(node, ast.Call) and getattr(node.func, "id", None) == "namespace")
    return ".".join(reversed(parts)) if rooted and parts else None


def _calls() -> dict[str, dict[str, set[str]]]:
    """{dotted name: {keyword: {where}}} for every call of a numpy function in the source."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and (name := _dotted(node.func)) is not None:
                where = f"{path.relative_to(SOURCE)}:{node.lineno}"
                found[name][""].add(where)
                for keyword in node.keywords:
                    if keyword.arg is not None:
                        found[name][keyword.arg].add(where)
    return found


def _lookup(module: object, dotted: str) -> object | None:
    for part in dotted.split("."):
        module = getattr(module, part, None)
    return module


def _numpy_functions() -> dict[str, dict[str, set[str]]]:
    """The calls that name a numpy function (not a dtype, a constant or a host-only module)."""
    return {name: keywords for name, keywords in _calls().items()
            if callable(_lookup(np, name)) and not isinstance(_lookup(np, name), type)
            and not any(name.startswith(prefix) for prefix in HOST_ONLY)}


def test_the_source_is_read():
    names = _numpy_functions()
    assert {"exp", "zeros", "einsum", "lib.stride_tricks.as_strided"} <= set(names)


def test_cupy_has_every_function_tensorgrad_calls():
    missing = {name: sorted(keywords[""])[:3] for name, keywords in _numpy_functions().items()
               if _lookup(cupy, name) is None}
    assert not missing, f"CuPy {cupy.__version__} lacks: {missing}"


def test_cupy_takes_every_keyword_tensorgrad_passes():
    refused = {}
    for name, keywords in _numpy_functions().items():
        function = _lookup(cupy, name)
        if function is None or isinstance(function, cupy.ufunc):
            continue  # missing: the test above; a ufunc's call takes out, dtype, casting, where
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            continue  # a compiled function without a signature to read
        if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            continue
        for keyword, where in keywords.items():
            if keyword and keyword not in parameters and keyword != "like":  # numpy consumes like=
                refused[f"{name}({keyword}=)"] = sorted(where)[:3]
    assert not refused, f"CuPy {cupy.__version__} does not take: {refused}"
