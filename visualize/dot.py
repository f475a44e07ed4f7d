"""Drawing a graph as graphviz source, and rendering it to a file or a notebook.

Each node is a record, micrograd-style: its label (if any), its data and its gradient, and for
a tensor its shape and dtype with a short preview of the values. Each operation is an oval
between the nodes it read and the node it made.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from scalargrad.engine import topological_order

try:
    import graphviz
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError(
        "visualize needs the graphviz package: pip install graphviz graphviz-pure "
        "(or the project's 'viz' extra)"
    ) from None

__all__ = ["draw_dot", "render"]

FORMATS = ("svg", "png")


class Picture(graphviz.Digraph):
    """A `graphviz.Digraph` that shows itself in Jupyter through `render`'s program search.

    graphviz's own inline display needs the `dot` program; this one falls back on
    `graphviz-pure`, so a plain `pip install` is enough to see pictures in a notebook.
    """

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **_: Any) -> dict[str, str]:
        return {"image/svg+xml": run_layout(self.source, "svg").decode("utf-8")}


def draw_dot(root: Any, rankdir: str = "LR", preview: int = 6) -> Picture:
    """The graph under `root` (a `Value` or a `Tensor`) as a `graphviz.Digraph`.

    `rankdir` is "LR" (inputs on the left) or "TB" (inputs on top); `preview` is how many values
    of a tensor its record shows. Draw after `backward()` to see the gradients (for a tensor
    graph, call `backward(retain_graph=True)` and `retain_grad()` on the inner tensors whose
    gradients you want to see: by default backward frees the graph and drops inner gradients).
    """
    if rankdir not in ("LR", "TB", "RL", "BT"):
        raise ValueError(f"draw_dot: rankdir must be 'LR', 'TB', 'RL' or 'BT', got {rankdir!r}")
    picture = Picture(format="svg", graph_attr={"rankdir": rankdir})
    for node in topological_order(root):
        uid = str(id(node))
        picture.node(uid, label=_record(node, preview), shape="record")
        if node.op:
            picture.node(uid + node.op, label=node.op)
            picture.edge(uid + node.op, uid)
            for parent in node.parents:
                picture.edge(str(id(parent)), uid + node.op)
    return picture


def _record(node: Any, preview: int) -> str:
    """The record label of one node: `{ label | data ... | grad ... }`, fields escaped."""
    fields = [node.label] if node.label else []
    if isinstance(node.data, np.ndarray):
        fields.append(f"{tuple(node.data.shape)} {node.data.dtype}")
        fields.append("data " + _preview(node.data, preview))
        fields.append("grad " + ("None" if node.grad is None else _preview(np.asarray(node.grad), preview)))
    else:
        fields.append(f"data {node.data:.4f}")
        fields.append(f"grad {node.grad:.4f}")
    return "{ " + " | ".join(_escape(field) for field in fields) + " }"


def _preview(array: np.ndarray, count: int) -> str:
    """Up to `count` values of `array`, flattened, with '...' when there are more."""
    flat = array.reshape(-1)
    shown = " ".join(f"{v:.4g}" if array.dtype.kind == "f" else str(v) for v in flat[:count].tolist())
    return "[" + shown + (" ...]" if flat.size > count else "]")


def _escape(text: str) -> str:
    """Text safe inside a graphviz record field (braces, bars and angle brackets are syntax)."""
    for char in "\\{}|<>":
        text = text.replace(char, "\\" + char)
    return text.replace("\n", " ")


def render(root_or_graph: Any, path: str | Path) -> Path:
    """Write the picture of a graph (or an already drawn `Digraph`) to `path`, `.svg` or `.png`.

    Uses Graphviz's `dot` if it is on the PATH, else `graphviz-pure` (from PyPI). Returns the path.
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"render: the file must end in .svg or .png, got {path.name!r}")
    drawn = isinstance(root_or_graph, graphviz.Graph | graphviz.Digraph)
    graph = root_or_graph if drawn else draw_dot(root_or_graph)
    path.write_bytes(run_layout(graph.source, fmt))
    return path


def layout_program() -> str | None:
    """Graphviz's `dot` if it is on the PATH, else `graphviz-pure` (PATH or beside this Python)."""
    found = shutil.which("dot") or shutil.which("graphviz-pure")
    if found:
        return found
    beside = Path(sys.executable).parent / "graphviz-pure"  # a venv used without activating it
    return str(beside) if beside.exists() else None


def run_layout(source: str, fmt: str) -> bytes:
    """Lay out graphviz `source` and return the picture in `fmt` ("svg" or "png")."""
    program = layout_program()
    if program is None:
        raise RuntimeError(
            "render: no Graphviz program found. Install one: `pip install graphviz-pure` "
            "(pure, no system package), or Graphviz itself, whose `dot` is then used"
        )
    done = subprocess.run([program, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        raise RuntimeError(f"render: {Path(program).name} failed: {message}")
    return done.stdout
