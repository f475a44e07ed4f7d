"""Drawing a graph as graphviz source, and rendering it to a file or a notebook.

Each node is a small table, micrograd-style: its name (a label, or a parameter's dotted name),
its data and its gradient, and for a tensor its shape, dtype and the op that made it with a
short preview of the values. Each operation is an oval between the nodes it read and the node
it made. Colours tell leaves, parameters, constants, inner nodes and the root apart; the key
and any note (gradients not computed yet, a freed graph, nodes cut at the budget) sit in the
caption, so every node of the picture is a graph node or an op.

The drawing is done in two stages so `visualize.steps` can reuse it: `Scene` is what to draw
(which nodes, their kinds and names), `emit` turns a scene and one moment's gradients into
graphviz source.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalargrad.engine import topological_order
from visualize import style

try:
    import graphviz
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError(
        "visualize needs the graphviz package: pip install graphviz graphviz-pure "
        "(or the project's 'viz' extra)"
    ) from None

__all__ = ["Picture", "draw_dot", "render", "MAX_NODES"]

FORMATS = ("svg", "png")
SVG = "image/svg+xml"
JUPYTER_FORMATS = {SVG: "svg", "image/png": "png", "image/jpeg": "jpeg"}  # MIME type: layout format
RANKDIRS = ("LR", "TB", "RL", "BT")
MAX_NODES = 300  # enough for every picture in the tutorial; a bigger graph is a hairball anyway
# A picture wider than a page (8.5 inches, about 800 pixels) is scaled down to fit it; a tall
# one is not (1000 inches), since a page scrolls.
PAGE_SIZE = "8.5,1000"

NOT_COMPUTED = "Gradients not computed yet: call backward() on the root to fill them in."
NOT_KEPT = "Inner tensors keep no gradient (grad None) unless retain_grad() was called before backward()."
FREED = (
    "backward() freed this graph, so only its last node is left to draw. "
    "To draw it after backward, call backward(retain_graph=True)."
)


class Picture(graphviz.Digraph):
    """A `graphviz.Digraph` that lays itself out with `dot` or, without it, `graphviz-pure`.

    graphviz's own `render`, `pipe` and notebook display need the system `dot` program; these
    use `run_layout`'s search, so a plain `pip install` is enough to save or see a picture.
    `caption` is the picture's caption in words (a backprop step's explanation).
    """

    caption: str = ""

    def pipe(self, format: str | None = None, *args: Any, encoding: str | None = None, **kwargs: Any) -> Any:  # noqa: A002
        """The laid-out picture in `format` (default: this graph's), as bytes or as text."""
        data = run_layout(self.source, format or self.format)
        return data.decode(encoding) if encoding else data

    def render(  # type: ignore[override]
        self,
        filename: str | Path | None = None,
        directory: str | Path | None = None,
        view: bool = False,
        cleanup: bool = False,
        format: str | None = None,  # noqa: A002
        *args: Any,
        outfile: str | Path | None = None,
        **kwargs: Any,
    ) -> str:
        """Save the source and write the picture beside it, as `graphviz.Digraph.render` does.

        Returns the picture's path. `outfile` names the picture directly (its suffix is the
        format); `cleanup=True` removes the source afterwards; `view=True` opens the picture.
        """
        if outfile is not None:
            picture_path = Path(outfile)
            fmt = format or picture_path.suffix.lstrip(".") or self.format
            source_path = picture_path.with_suffix(".gv")
            source_path.parent.mkdir(parents=True, exist_ok=True)
            source_path.write_text(self.source, encoding="utf-8")
        else:  # graphviz's save writes the source, making its folder
            fmt = format or self.format
            source_path = Path(self.save(filename, directory=directory))
            picture_path = source_path.with_name(f"{source_path.name}.{fmt}")
        picture_path.write_bytes(run_layout(self.source, fmt))
        if cleanup:
            source_path.unlink()
        if view:
            graphviz.view(picture_path)
        return str(picture_path)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **_: Any) -> dict[str, str | bytes]:
        """The picture as IPython shows it inline: SVG (or the format `graphviz.set_jupyter_format`
        chose), or the MIME types in `include` less those in `exclude`."""
        wanted = set(include) if include is not None else {getattr(self, "_jupyter_mimetype", SVG)}
        wanted -= set(exclude or ())
        return {mime: self._repr_svg_() if mime == SVG else self.pipe(fmt)
                for mime, fmt in JUPYTER_FORMATS.items() if mime in wanted}

    def _repr_svg_(self) -> str:
        """The picture as SVG text (IPython's older display hook, also used by other front ends)."""
        return self.pipe("svg", encoding="utf-8")


# --- what to draw ---------------------------------------------------------------------------------


@dataclass
class Shown:
    """One node as a picture shows it."""

    node: Any
    uid: str
    kind: str  # a key of style.KINDS
    name: str  # its label or dotted parameter name, "" if it has none
    parents: list[str | None]  # uids; None for a parent cut away
    freed: bool  # made by an op, but backward released its parents


@dataclass
class Scene:
    """The nodes a picture shows (parents before children) and how many it leaves out."""

    nodes: list[Shown]
    hidden: int

    @property
    def freed(self) -> bool:
        """Whether backward freed the graph (a node made by an op has lost its parents)."""
        return any(shown.freed for shown in self.nodes)


def make_scene(root: Any, names: Any = None, max_nodes: int = MAX_NODES) -> Scene:
    """Choose the nodes to draw: the `max_nodes` nearest the root, named and classified."""
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"draw_dot: max_nodes must be a positive int, got {max_nodes!r}")
    order = topological_order(root)
    kept = _nearest(root, max_nodes) if len(order) > max_nodes else None
    dotted = parameter_names(names)
    nodes, uid = [], {}
    for node in order:
        if kept is not None and node not in kept:
            continue
        uid[node] = f"n{len(nodes)}"
        nodes.append(Shown(node, uid[node], _kind(node, root, dotted), dotted.get(id(node)) or node.label,
                           parents=[uid.get(parent) for parent in node.parents],
                           freed=bool(node.op) and not node.parents))
    return Scene(nodes, hidden=len(order) - len(nodes))


def _nearest(root: Any, count: int) -> set:
    """The `count` nodes closest to `root` (breadth first over parents): what a cut keeps."""
    kept = {root}
    queue = deque([root])
    while queue and len(kept) < count:
        for parent in queue.popleft().parents:
            if parent not in kept:
                kept.add(parent)
                queue.append(parent)
                if len(kept) == count:
                    break
    return kept


def _kind(node: Any, root: Any, dotted: dict[int, str]) -> str:
    """Root, inner node, parameter, input or constant (the key's five colours)."""
    if node is root:
        return "root"
    if node.op:
        return "inner"
    if id(node) in dotted or getattr(node, "requires_grad", False):
        return "parameter"
    if node.label:
        return "input"
    return "constant" if getattr(node.data, "ndim", 0) == 0 else "input"


def parameter_names(names: Any) -> dict[int, str]:
    """`names=` as {id(node): dotted name}: a dict of name to node (or node to name), or a model.

    A tensorgrad `Module` gives `named_parameters()` ('0.weight'); any other model (such as a
    scalargrad `MLP`) is walked through its attributes, lists numbered ('layers.0.neurons.1.w.0').
    """
    if names is None:
        return {}
    if isinstance(names, Mapping):
        pairs = names.items()
    elif hasattr(names, "named_parameters"):
        pairs = names.named_parameters()
    elif hasattr(names, "parameters"):
        pairs = _walk(names, "")
    else:
        raise TypeError(
            f"draw_dot: names must be a model or a dict of name to node, got {type(names).__name__}"
        )
    found = {}
    for first, second in pairs:
        # A dict may also map node to name ({w: "w"}): whichever side is the string is the name.
        name, node = (first, second) if isinstance(first, str) else (second, first)
        found[id(node)] = str(name)
    return found


def _walk(obj: Any, prefix: str) -> list[tuple[str, Any]]:
    """(dotted name, node) for every node held by `obj`'s attributes, lists and sub-models."""
    if hasattr(obj, "parents") and hasattr(obj, "data"):
        return [(prefix, obj)]
    if isinstance(obj, list | tuple):
        items = [(str(index), item) for index, item in enumerate(obj)]
    elif hasattr(obj, "parameters") and hasattr(obj, "__dict__"):
        items = list(vars(obj).items())
    else:
        return []
    found = []
    for name, item in items:
        found += _walk(item, f"{prefix}.{name}" if prefix else name)
    return found


# --- how it looks at one moment ---------------------------------------------------------------------


@dataclass
class Look:
    """What one node shows at one moment: its gradient text and how it stands out."""

    grad: str
    visible: bool = True  # False: the gradient is not known yet (drawn blank, room kept)
    received: bool = False  # a gradient flowed into it on this step
    active: bool = False  # the node whose backward runs on this step
    grad_width: int | None = None  # fixed width of the gradient cell in characters (frames)


def emit(
    scene: Scene,
    looks: list[Look],
    rankdir: str = "LR",
    preview: int = 3,
    notes: list[str] | None = None,
    story: str = "",
    flowing: set[tuple[int, int]] | None = None,
    edge_labels: dict[tuple[int, int], str] | None = None,
    titles: list[str] | None = None,
) -> Picture:
    """Graphviz source for `scene` with each node looking as `looks` says.

    `notes` are red caption lines, `story` a black one above them (a backprop step in words);
    `flowing` holds the (node index, parent position) edges that carry a gradient back on
    this step, drawn red; `edge_labels` gives an edge its label ('+= 2.0'), shown in red while
    the edge is flowing and transparent otherwise, so every frame keeps the same layout;
    `titles` names the unnamed inner nodes (frames name every node so their captions can
    refer to it).
    """
    picture = Picture(
        format="svg",
        graph_attr={"rankdir": rankdir, "size": PAGE_SIZE, "nodesep": "0.25", "ranksep": "0.2",
                    "labelloc": "t", "labeljust": "l", "fontname": style.FONT,
                    "fontsize": str(style.FONT_SIZE), "label": _caption(scene, notes or [], story)},
        node_attr={"shape": "plaintext", "fontname": style.FONT, "fontsize": str(style.FONT_SIZE),
                   "margin": "0"},
        edge_attr={"arrowsize": "0.7"},
    )
    flowing = flowing or set()
    edge_labels = edge_labels or {}
    for index, (shown, look) in enumerate(zip(scene.nodes, looks, strict=True)):
        title = shown.name or (titles[index] if titles and shown.kind != "constant" else "")
        picture.node(shown.uid, label=_table(shown, look, title, preview))
        if shown.node.op:
            _op(picture, shown, look, index, flowing, edge_labels)
    return picture


def _op(picture: Picture, shown: Shown, look: Look, index: int, flowing: set, edge_labels: dict) -> None:
    """The op oval of `shown`, its edge to `shown` and the edges from the parents drawn."""
    op_uid = shown.uid + "_op"
    cut = shown.freed or None in shown.parents
    picture.node(
        op_uid, label=shown.node.op, shape="ellipse", style="filled,dashed" if cut else "filled",
        fillcolor=style.ACTIVE_BORDER if look.active else style.OP_FILL,
        fontcolor="white" if look.active else "black", color=style.OP_BORDER,
        margin="0.05,0.02", height="0.3", width="0.3",
        tooltip="some inputs are not shown" if cut else shown.node.op,
    )
    picture.edge(op_uid, shown.uid)
    for position, parent_uid in enumerate(shown.parents):
        if parent_uid is None:
            continue
        edge = (index, position)
        attributes = {}
        if edge in edge_labels:
            attributes.update(label=edge_labels[edge], fontname=style.FONT, fontsize=str(style.FONT_SIZE),
                              fontcolor=style.FLOW_COLOUR if edge in flowing else style.HIDDEN)
        if edge in flowing:  # the gradient goes back along this edge now
            attributes.update(color=style.FLOW_COLOUR, penwidth="2.5", dir="back")
        picture.edge(parent_uid, op_uid, **attributes)


def _table(shown: Shown, look: Look, title: str, preview: int) -> str:
    """The HTML-like label of one node: name, (tensor: shape and dtype), data, grad."""
    fill, border, _ = style.KINDS[shown.kind]
    if look.active:
        fill, border = style.ACTIVE_FILL, style.ACTIVE_BORDER
    rows = []
    if title:
        weight = ("<b>", "</b>") if shown.name else ("<i>", "</i>")
        rows.append(f'<tr><td colspan="2">{weight[0]}{style.html_escape(title)}{weight[1]}</td></tr>')
    data = shown.node.data
    if hasattr(data, "shape"):
        made_by = f" from {shown.node.op}" if shown.node.op else ""
        rows.append(f'<tr><td colspan="2"><font color="#4b5563">{tuple(data.shape)} {data.dtype}'
                    f"{style.html_escape(made_by)}</font></td></tr>")
    rows.append(_row("data", style.value_text(data, preview)))
    rows.append(_grad_row(look))
    return (f'<<table border="1" cellborder="0" cellspacing="0" cellpadding="2" bgcolor="{fill}" '
            f'color="{border}">{"".join(rows)}</table>>')


def _row(name: str, text: str) -> str:
    return (f'<tr><td align="left"><font color="#4b5563">{name}</font></td>'
            f'<td align="right">{style.html_escape(text)}</td></tr>')


def _grad_row(look: Look) -> str:
    colour = "black" if look.visible else style.HIDDEN
    fill = f' bgcolor="{style.RECEIVED_FILL}"' if look.received else ""
    size = ""
    if look.grad_width is not None:  # frames: the cell keeps one size while its text changes
        size = f' width="{look.grad_width * 7 + 4}" height="18" fixedsize="true"'
    text = style.html_escape(look.grad)
    return (f'<tr><td align="left"><font color="#4b5563">grad</font></td>'
            f'<td align="right"{fill}{size}><font color="{colour}">{text}</font></td></tr>')


def _caption(scene: Scene, notes: list[str], story: str = "") -> str:
    """The caption: the story, the notes (red: they change how to read the picture), the key."""
    lines = list(notes)
    if scene.freed:
        lines.insert(0, FREED)
    if scene.hidden:
        lines.append(f"{scene.hidden} nodes not shown: only the {len(scene.nodes)} nearest the root "
                     f"are drawn (max_nodes={len(scene.nodes)}); dashed ops have inputs not shown.")
    rows = f'<tr><td align="left">{_wrap(story, 88)}</td></tr>' if story else ""
    rows += "".join(
        f'<tr><td align="left"><font color="{style.NOTE_COLOUR}">{_wrap(line)}</font></td></tr>'
        for line in lines
    )
    key = f'<table border="0" cellspacing="3" cellpadding="2" align="left">{style.key_row()}</table>'
    key_line = f'<tr><td align="left">{key}</td></tr>'
    return f'<<table border="0" cellspacing="0" cellpadding="1">{rows}{key_line}</table>>'


def _wrap(line: str, width: int = 80) -> str:
    """`line` escaped and broken into left-aligned lines of at most `width` characters.

    "x.grad += 2.0" stays on one line: a break before '+=' reads as a new statement.
    """
    glued = line.replace(" += ", "\0+=\0")  # textwrap does not break at NUL; spaces again below
    return "".join(style.html_escape(text.replace("\0", " ")) + '<br align="left"/>'
                   for text in textwrap.wrap(glued, width))


# --- the public drawing function ------------------------------------------------------------------------


def draw_dot(
    root: Any, rankdir: str = "LR", names: Any = None, max_nodes: int = MAX_NODES, preview: int = 3
) -> Picture:
    """The graph under `root` (a `Value` or a `Tensor`) as a `graphviz.Digraph`.

    `rankdir` is "LR" (inputs on the left) or "TB" (inputs on top); `names` is a model (or a
    dict of name to node) whose parameters are labelled with their dotted names ('0.weight');
    at most `max_nodes` nodes are drawn, those nearest the root, and the caption says how many
    are not; `preview` is how many values of a tensor its table shows.

    Draw after `backward()` to see the gradients. A tensor graph is freed by a plain backward:
    call `backward(retain_graph=True)` to draw it afterwards, and `retain_grad()` on the inner
    tensors whose gradients you want to see.
    """
    check_rankdir(rankdir, "draw_dot")
    scene = make_scene(root, names, max_nodes)
    looks = [Look(style.value_text(shown.node._grad, preview)) for shown in scene.nodes]
    return emit(scene, looks, rankdir, preview, notes=_grad_notes(scene, root))


def check_rankdir(rankdir: str, caller: str) -> None:
    """A ValueError, naming `caller`, unless `rankdir` is one of RANKDIRS."""
    if rankdir not in RANKDIRS:
        raise ValueError(f"{caller}: rankdir must be 'LR', 'TB', 'RL' or 'BT', got {rankdir!r}")


def _grad_notes(scene: Scene, root: Any) -> list[str]:
    """What the caption says about the gradients: not computed yet, or not kept by inner tensors."""
    if scene.freed:
        return []
    if _not_computed(scene, root):
        return [NOT_COMPUTED]
    if any(shown.node.op and shown.node._grad is None for shown in scene.nodes):
        return [NOT_KEPT]
    return []


def _not_computed(scene: Scene, root: Any) -> bool:
    """Whether no backward has run from `root` yet, whatever gradients its leaves hold."""
    if _is_tensor_graph(root):
        return not _backpropagated(root)
    return all(style.is_zero(shown.node._grad) for shown in scene.nodes) or _fresh_value_graph(scene)


def _fresh_value_graph(scene: Scene) -> bool:
    """A Value graph not backpropagated yet, though its leaves hold grads from an earlier graph.

    A Value's backward seeds the root with 1.0 and inner nodes keep their grads, so inner nodes
    that all hold 0.0 mean no pass ran here: the leaves' grads (say, parameters not zeroed after
    the last training step) are stale, not this graph's.
    """
    inner = [shown.node for shown in scene.nodes if shown.node.op]
    return bool(inner) and all(type(node._grad) is float and node._grad == 0 for node in inner)


def _is_tensor_graph(root: Any) -> bool:
    """Whether `root` is a Tensor made by an op (numbered, `_seq`), not a Value or a lone leaf."""
    return getattr(root, "_seq", None) is not None and bool(root.op)


def _backpropagated(root: Any) -> bool:
    """Whether a backward pass ran from (or through) the tensor `root`.

    A plain backward frees the graph (the picture then says so), so a graph still whole either
    had `backward(retain_graph=True)`, which `tensorgrad.tensor.backpropagated` remembers, or no
    backward yet: the leaves' grads may be an earlier graph's. An inner root that keeps its
    gradient (`retain_grad()`) and holds one had a pass through it from further on.
    """
    from tensorgrad.tensor import backpropagated  # the root is a Tensor: tensorgrad is loaded

    return backpropagated.get(root._seq) is root or root._grad is not None


def mark_backpropagated(root: Any) -> None:
    """Remember that a pass ran from the tensor `root` and kept its graph, as `Tensor.backward` does."""
    if _is_tensor_graph(root):
        from tensorgrad.tensor import backpropagated

        backpropagated[root._seq] = root


# --- laying out and writing -----------------------------------------------------------------------------


def render(root_or_graph: Any, path: str | Path, **draw_options: Any) -> Path:
    """Write the picture of a graph (or an already drawn `Digraph`) to `path`, `.svg` or `.png`.

    Uses Graphviz's `dot` if it is on the PATH, else `graphviz-pure` (from PyPI). Options such
    as `names=` or `rankdir=` go to `draw_dot`. Returns the path.
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"render: the file must end in .svg or .png, got {path.name!r}")
    drawn = isinstance(root_or_graph, graphviz.Graph | graphviz.Digraph)
    graph = root_or_graph if drawn else draw_dot(root_or_graph, **draw_options)
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
    """Lay out graphviz `source` and return the picture in `fmt` ("svg", "png", ...)."""
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
