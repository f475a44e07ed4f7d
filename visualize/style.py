"""How pictures look: node kinds and their colours, the key, and how numbers are written.

Kept apart from the drawing code so the look is chosen in one place (tutorial chapter 4 shows
the pictures this produces). Every number in a picture goes through `number`, which writes
significant digits (a gradient of 7.26e-4 never prints as 0.0007, nor 1e-6 as 0.0000) with
ASCII digits and '-' only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

FONT = "Helvetica"
FONT_SIZE = 12
SIGNIFICANT = 4  # digits of a scalar; a tensor preview uses one fewer to stay short

# Each kind of node: (fill, border, what the key calls it). Light fills keep black text readable;
# the borders carry the colour for readers who print in grey.
KINDS: dict[str, tuple[str, str, str]] = {
    "input": ("#dbeafe", "#1d4ed8", "input (leaf)"),
    "parameter": ("#dcfce7", "#15803d", "parameter (leaf)"),
    "constant": ("#f3f4f6", "#6b7280", "constant (leaf)"),
    "inner": ("#ffffff", "#374151", "inner node"),
    "root": ("#fef3c7", "#b45309", "root"),
}
OP_FILL = "#e5e7eb"
OP_BORDER = "#6b7280"
NOTE_COLOUR = "#b91c1c"  # notes that change how to read the picture (freed graph, nodes cut)

# Backprop frames: the node being processed, the gradient flowing on this step, earlier flows.
ACTIVE_FILL = "#fee2e2"
ACTIVE_BORDER = "#dc2626"
FLOW_COLOUR = "#dc2626"
RECEIVED_FILL = "#fde68a"
PAST_COLOUR = "#9ca3af"
HIDDEN = "#00000000"  # fully transparent: text that keeps its room in the layout, unseen


def number(x: float, digits: int = SIGNIFICANT) -> str:
    """`x` with `digits` significant digits, as a learner reads it: 3.0, -0.000726, 1.5e-06.

    A whole number keeps a '.0' so it reads as a float, like Python's own repr.
    """
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)  # 'nan', 'inf', '-inf'
    text = f"{x:.{digits}g}"
    if x == 0:
        return "0.0"  # also -0.0: the sign of a zero gradient only confuses
    if not any(mark in text for mark in ".e"):
        text += ".0"
    return text


def preview(array: Any, count: int) -> str:
    """Up to `count` values of `array`, flattened, with '...' when there are more."""
    array = host(array)
    floating = array.dtype.kind in "fc"
    if array.ndim == 0:  # a 0-d tensor (a loss) reads as the number it is
        return number(array.item(), SIGNIFICANT - 1) if floating else str(array.item())
    flat = array.reshape(-1)
    shown = [number(v, SIGNIFICANT - 1) if floating else str(v) for v in flat[:count].tolist()]
    return "[" + " ".join(shown) + (" ...]" if flat.size > count else "]")


def host(array: Any) -> np.ndarray:
    """`array` as a numpy array: a tensor's array on a GPU (CuPy's) is copied to the host.

    Through `tensorgrad.device.to_numpy`, which knows every kind of array a tensor may hold
    (CuPy refuses `np.asarray`, which would copy silently); imported only when such an array
    comes, so drawing scalargrad's graphs never imports tensorgrad.
    """
    if type(array) is np.ndarray or isinstance(array, float | int | np.generic):
        return np.asarray(array)
    from tensorgrad.device import to_numpy

    return to_numpy(array)


def value_text(value: Any, count: int) -> str:
    """A node's data or gradient as text: a float as a number, an array as a short preview."""
    if value is None:
        return "None"
    if isinstance(value, float | int):
        return number(value)
    return preview(value, count)


def is_zero(grad: Any) -> bool:
    """Whether a gradient is absent or zero everywhere (what a node holds before backward)."""
    if grad is None:
        return True
    if isinstance(grad, float | int):
        return grad == 0
    return not bool(np.any(grad))


def html_escape(text: str) -> str:
    """Text safe inside a graphviz HTML-like label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def key_row() -> str:
    """The colour key, one HTML table row of swatches, for a picture's caption."""
    cells = "".join(
        f'<td bgcolor="{fill}" color="{border}" border="1"> {html_escape(words)} </td>'
        for fill, border, words in KINDS.values()
    )
    return f"<tr>{cells}</tr>"
