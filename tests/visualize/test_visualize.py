"""visualize: one drawing function for both kinds of graph, and rendering without a system Graphviz."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("graphviz")

import tensorgrad as tg  # noqa: E402 - after the skip: visualize needs graphviz
from scalargrad import Value  # noqa: E402
from scalargrad.engine import topological_order  # noqa: E402
from visualize import dot as dot_module  # noqa: E402
from visualize import draw_dot, render  # noqa: E402


def value_graph():
    a, b = Value(-4.0, label="a"), Value(2.0, label="b")
    c = a * b + b**3
    c.label = "c"
    d = (c - a).relu() + c.tanh()
    d.label = "d"
    d.backward()
    return d


def records(source: str) -> list[str]:
    return re.findall(r'label="(\{.*?\})" shape=record', source)


def test_a_value_graph_has_a_record_per_node_and_an_oval_per_op():
    d = value_graph()
    source = draw_dot(d).source
    nodes = [line for line in source.splitlines() if "shape=record" in line]
    ops = [line for line in source.splitlines() if "label=" in line and "shape=record" not in line]
    order = topological_order(d)
    assert len(nodes) == len(order)
    assert len(ops) == sum(1 for n in order if n.op)
    assert source.count("->") == sum(len(n.parents) + 1 for n in order if n.op)
    assert "{ a | data -4.0000 | grad 3.0000 }" in records(source)  # micrograd's figures
    assert "{ b | data 2.0000 | grad 16.0000 }" in records(source)
    assert "{ d | data 4.0000 | grad 1.0000 }" in records(source)
    assert "rankdir=LR" in source and "rankdir=TB" in draw_dot(d, rankdir="TB").source


def test_a_tensor_graph_shows_shape_dtype_and_a_preview():
    x = tg.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
    x.label = "x"
    h = (x * 2.0).relu()
    h.retain_grad()
    loss = h.sum()
    loss.backward(retain_graph=True)
    fields = records(draw_dot(loss, preview=4).source)
    assert "{ x | (2, 3) float32 | data [1 -2 3 4 ...] | grad [2 0 2 2 ...] }" in fields
    assert "{ (2, 3) float32 | data [2 0 6 8 ...] | grad [1 1 1 1 ...] }" in fields  # the retained h
    assert "{ () float32 | data [26] | grad None }" in fields  # the root's grad is not retained
    labels = re.findall(r'\[label="?([^"\]]+)"?\]', draw_dot(loss).source)
    assert {"*", "relu", "sum"} <= set(labels)


def test_record_syntax_in_labels_is_escaped():
    v = Value(1.0, label="a|b {c} <d>")
    source = draw_dot(v * 2).source
    assert r"a\|b \{c\} \<d\>" in source


def test_render_writes_svg_and_png(tmp_path):
    if dot_module.layout_program() is None:
        pytest.skip("neither Graphviz's dot nor graphviz-pure is installed")
    svg = render(value_graph(), tmp_path / "graph.svg")
    assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()
    png = render(draw_dot(tg.ones(2, requires_grad=True).sum()), tmp_path / "graph.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_notebook_display_is_an_svg():
    if dot_module.layout_program() is None:
        pytest.skip("neither Graphviz's dot nor graphviz-pure is installed")
    bundle = draw_dot(value_graph())._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]


def test_without_any_graphviz_program_the_error_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.setattr(dot_module, "layout_program", lambda: None)
    with pytest.raises(RuntimeError, match="pip install graphviz-pure"):
        render(value_graph(), tmp_path / "graph.svg")


def test_bad_arguments_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"\.svg or \.png"):
        render(value_graph(), tmp_path / "graph.jpg")
    with pytest.raises(ValueError, match="rankdir"):
        draw_dot(value_graph(), rankdir="XY")


def test_a_deep_graph_draws_without_recursion():
    x = Value(0.5)
    for _ in range(3000):
        x = x * 1.0
    assert np.isclose(x.data, 0.5)
    assert len(records(draw_dot(x).source)) == 3001 + 3000  # each * adds the constant 1.0
