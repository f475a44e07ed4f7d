"""Reading the graphviz source that `visualize` writes, without any renderer (imported after the
test modules' skip without graphviz), and the mark for the tests that lay a picture out."""

from __future__ import annotations

import re
from html import unescape

import pytest

from scalargrad import Value
from visualize.dot import layout_program

needs_layout = pytest.mark.skipif(
    layout_program() is None, reason="neither Graphviz's dot nor graphviz-pure is installed"
)

NODE = re.compile(r"^\s*(n\d+) \[label=<(.*)>\]$", re.M)
OP = re.compile(r"^\s*(n\d+)_op \[label=\"?([^\" ]+)\"? (.*)\]$", re.M)
EDGE = re.compile(r"^\s*(n\d+(?:_op)?) -> (n\d+(?:_op)?)(?: \[(.*)\])?$", re.M)


def text_of(html: str) -> str:
    """The visible words of an HTML-like label, tags dropped, spaces collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def tables(source: str) -> dict[str, str]:
    """{node id: its HTML-like label} for every graph node (not the ops)."""
    return dict(NODE.findall(source))


def texts(source: str) -> dict[str, str]:
    """{node id: its visible text} for every graph node."""
    return {uid: text_of(html) for uid, html in tables(source).items()}


def ops(source: str) -> dict[str, str]:
    """{id of the node an op made: the op's label}."""
    return {uid: label for uid, label, _ in OP.findall(source)}


def caption(source: str) -> str:
    """The visible text of the graph's caption (its label)."""
    match = re.search(r"graph \[.*?label=<(.*?)> labeljust", source, re.S)
    assert match, "the graph has no caption"
    return text_of(match.group(1))


def classic():
    """micrograd's README expression, before backward: (a, b, d)."""
    a, b = Value(-4.0, label="a"), Value(2.0, label="b")
    c = a * b + b**3
    c.label = "c"
    d = (c - a).relu() + c.tanh()
    d.label = "d"
    return a, b, d
