"""draw_dot and render: one drawing for both kinds of graph, readable by default, no system Graphviz."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("graphviz")

from visualize_helpers import caption, classic, needs_layout, ops, tables, texts  # noqa: E402

import tensorgrad as tg  # noqa: E402 - after the skip: visualize needs graphviz
from scalargrad import Value  # noqa: E402
from scalargrad.engine import topological_order  # noqa: E402
from scalargrad.nn import MLP  # noqa: E402
from tensorgrad import nn  # noqa: E402
from tensorgrad.device import register_namespace  # noqa: E402
from visualize import dot as dot_module  # noqa: E402
from visualize import draw_dot, render, style  # noqa: E402


def test_a_value_graph_has_a_table_per_node_and_an_oval_per_op():
    a, b, d = classic()
    d.backward()
    source = draw_dot(d).source
    order = topological_order(d)
    assert len(tables(source)) == len(order)
    assert len(ops(source)) == sum(1 for n in order if n.op)
    assert source.count("->") == sum(len(n.parents) + 1 for n in order if n.op)
    shown = set(texts(source).values())
    assert "a data -4.0 grad 3.0" in shown  # micrograd's figures
    assert "b data 2.0 grad 16.0" in shown
    assert "d data 4.0 grad 1.0" in shown
    assert "rankdir=LR" in source and "rankdir=TB" in draw_dot(d, rankdir="TB").source


def test_every_drawn_node_is_a_graph_node_or_an_op_and_the_key_is_in_the_caption():
    _, _, d = classic()
    d.backward()
    source = draw_dot(d).source
    declared = re.findall(r"^\s*(\w+) \[", source, flags=re.M)
    declared = [uid for uid in declared if uid not in ("graph", "node", "edge")]  # defaults
    assert declared and all(re.fullmatch(r"n\d+(_op)?", uid) for uid in declared)
    key = caption(source)
    for words in ("input (leaf)", "parameter (leaf)", "constant (leaf)", "inner node", "root"):
        assert words in key


def test_leaves_parameters_constants_inner_nodes_and_the_root_have_their_own_colours():
    x, w = Value(0.5, label="x"), Value(-3.0, label="w")
    out = (x * w + 2.0).tanh()  # 2.0 becomes an unlabelled constant leaf
    out.backward()
    source = draw_dot(out, names={"w": w}).source
    fill = {text.split(" grad")[0]: re.search(r'bgcolor="(#\w+)"', html).group(1)
            for text, html in zip(texts(source).values(), tables(source).values(), strict=True)}
    assert fill["x data 0.5"] == style.KINDS["input"][0]
    assert fill["w data -3.0"] == style.KINDS["parameter"][0]
    assert fill["data 2.0"] == style.KINDS["constant"][0]
    kinds = [shown.kind for shown in dot_module.make_scene(out, {"w": w}).nodes]
    assert kinds.count("constant") == 1 and kinds.count("parameter") == 1 and kinds.count("input") == 1
    assert kinds[-1] == "root" and kinds.count("inner") == len(kinds) - 4
    colours = {style.KINDS[kind][0] for kind in style.KINDS}
    assert len(colours) == 5  # five kinds, five fills


def test_a_tensor_leaf_that_requires_grad_is_a_parameter_and_data_is_an_input():
    x = tg.ones(3)
    w = tg.ones(3, requires_grad=True)
    scene = dot_module.make_scene((x * w).sum())
    assert [shown.kind for shown in scene.nodes] == ["input", "parameter", "inner", "root"]


def test_gradients_are_written_with_significant_digits_in_ascii():
    assert style.number(7.26e-4) == "0.000726"
    assert style.number(1e-6) == "1e-06"
    assert style.number(-0.0) == "0.0" and style.number(3.0) == "3.0"
    assert style.number(-12345.678) == "-1.235e+04"
    x = Value(1e-3, label="x")
    y = x**2
    y.backward()
    source = draw_dot(y).source
    assert "x data 0.001 grad 0.002" in texts(source).values()
    assert all(ord(char) < 128 for char in source)  # no Unicode minus or digits anywhere


def test_a_device_array_is_previewed_from_its_host_copy():
    class DeviceArray:  # what a CuPy array offers: no implicit conversion; its module copies to the host
        def __init__(self, values):
            self.values = np.asarray(values)

        def __array__(self, *args, **kwargs):
            raise TypeError("implicit conversion to a NumPy array is not allowed")

    register_namespace(DeviceArray, SimpleNamespace(asnumpy=lambda array: array.values))
    assert style.preview(DeviceArray([1.0, -2.5, 3e-5, 4.0]), 3) == "[1.0 -2.5 3e-05 ...]"


def test_a_tensor_shows_shape_dtype_the_op_that_made_it_and_a_preview():
    x = tg.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
    x.label = "x"
    h = (x * 2.0).relu()
    h.retain_grad()
    loss = h.sum()
    loss.backward(retain_graph=True)
    shown = list(texts(draw_dot(loss, preview=4).source).values())
    assert "x (2, 3) float32 data [1.0 -2.0 3.0 4.0 ...] grad [2.0 0.0 2.0 2.0 ...]" in shown
    assert "(2, 3) float32 from relu data [2.0 0.0 6.0 8.0 ...] grad [1.0 1.0 1.0 1.0 ...]" in shown
    assert "() float32 from sum data 26.0 grad None" in shown  # the root's grad is not retained
    assert {"*", "relu", "sum"} <= set(ops(draw_dot(loss).source).values())


def test_names_label_parameters_with_their_dotted_names():
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    loss = model(tg.randn(4, 2)).sum()
    shown = " | ".join(texts(draw_dot(loss, names=model).source).values())
    for name in ("0.weight (3, 2) float32", "0.bias (3,) float32", "2.weight (1, 3) float32", "2.bias (1,)"):
        assert name in shown
    assert "0.weight" in " ".join(texts(draw_dot(loss, names=dict(model.named_parameters())).source).values())
    by_node = {p: name for name, p in model.named_parameters()}  # the other way round works too
    assert "2.bias" in " ".join(texts(draw_dot(loss, names=by_node).source).values())


def test_names_of_a_scalargrad_model_follow_its_attributes():
    model = MLP(2, [2, 1], seed=0)
    out = model([1.0, -1.0])
    names = dot_module.parameter_names(model)
    assert len(names) == len(model.parameters())
    assert names[id(model.layers[0].neurons[1].w[0])] == "layers.0.neurons.1.w.0"
    assert names[id(model.layers[1].neurons[0].b)] == "layers.1.neurons.0.b"
    assert "layers.0.neurons.0.b" in " ".join(texts(draw_dot(out, names=model).source).values())


def test_a_big_graph_is_cut_at_the_node_budget_with_the_number_hidden():
    x = Value(0.5, label="x")
    for _ in range(500):
        x = x * 1.0  # two nodes per step: the product and its constant
    total = len(topological_order(x))
    source = draw_dot(x, max_nodes=40).source
    assert len(tables(source)) == 40
    assert f"{total - 40} nodes not shown" in caption(source)
    assert 100 <= dot_module.MAX_NODES <= 1000
    assert len(tables(draw_dot(x).source)) == dot_module.MAX_NODES
    whole = draw_dot(x, max_nodes=total).source
    assert len(tables(whole)) == total and "not shown" not in caption(whole)


def test_the_budget_keeps_the_nodes_nearest_the_root():
    a, b, d = classic()
    scene = dot_module.make_scene(d, max_nodes=3)
    assert scene.nodes[-1].node is d
    assert {shown.node for shown in scene.nodes} == {d, *d.parents}


def test_a_graph_freed_by_backward_is_drawn_with_a_note_saying_how_to_keep_it():
    w = tg.ones(3, requires_grad=True)
    loss = (w * 2.0).sum()
    loss.backward()
    note = caption(draw_dot(loss).source)
    assert "freed" in note and "retain_graph=True" in note
    kept = (w * 2.0).sum()
    kept.backward(retain_graph=True)
    assert "freed" not in caption(draw_dot(kept).source)


def test_before_backward_the_caption_says_the_gradients_are_not_computed_yet():
    a, b, d = classic()
    assert "not computed yet" in caption(draw_dot(d).source)
    d.backward()
    assert "not computed yet" not in caption(draw_dot(d).source)
    w = tg.ones(2, requires_grad=True)
    loss = (w * 3.0).sum()
    assert "not computed yet" in caption(draw_dot(loss).source)
    loss.backward(retain_graph=True)
    words = caption(draw_dot(loss).source)
    assert "not computed yet" not in words and "retain_grad()" in words  # why inner grads are None


def test_label_text_is_escaped():
    v = Value(1.0, label='a<b> & "c"')
    source = draw_dot(v * 2).source
    assert "a&lt;b&gt; &amp; &quot;c&quot;" in source


@needs_layout
def test_render_writes_svg_and_png(tmp_path):
    a, b, d = classic()
    d.backward()
    svg = render(d, tmp_path / "graph.svg")
    assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()
    png = render(draw_dot(tg.ones(2, requires_grad=True).sum()), tmp_path / "graph.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert render(d, tmp_path / "tb.svg", rankdir="TB").exists()


@needs_layout
def test_the_pictures_own_render_and_pipe_need_no_system_graphviz(tmp_path, monkeypatch):
    real_which = dot_module.shutil.which
    monkeypatch.setattr(dot_module.shutil, "which", lambda name: None if name == "dot" else real_which(name))
    _, _, d = classic()
    picture = draw_dot(d)
    assert b"<svg" in picture.pipe()
    assert picture.pipe(format="png")[:4] == b"\x89PNG"
    assert "<svg" in picture.pipe(encoding="utf-8")
    written = picture.render(tmp_path / "expr", format="png")
    assert written.endswith("expr.png") and Path(written).read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "expr").read_text() == picture.source
    out = picture.render(outfile=tmp_path / "out.svg", cleanup=True)
    assert "<svg" in Path(out).read_text() and not (tmp_path / "out.gv").exists()


@needs_layout
def test_the_notebook_display_is_an_svg():
    _, _, d = classic()
    bundle = draw_dot(d)._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]


def test_without_any_graphviz_program_the_error_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.setattr(dot_module, "layout_program", lambda: None)
    _, _, d = classic()
    with pytest.raises(RuntimeError, match="pip install graphviz-pure"):
        render(d, tmp_path / "graph.svg")
    with pytest.raises(RuntimeError, match="pip install graphviz-pure"):
        draw_dot(d).pipe()


def test_bad_arguments_are_clear_errors(tmp_path):
    _, _, d = classic()
    with pytest.raises(ValueError, match=r"\.svg or \.png"):
        render(d, tmp_path / "graph.jpg")
    with pytest.raises(ValueError, match="rankdir"):
        draw_dot(d, rankdir="XY")
    with pytest.raises(ValueError, match="max_nodes"):
        draw_dot(d, max_nodes=0)
    with pytest.raises(TypeError, match="names"):
        draw_dot(d, names=42)


def test_a_deep_graph_draws_without_recursion():
    x = Value(0.5)
    for _ in range(3000):
        x = x * 1.0
    assert np.isclose(x.data, 0.5)
    assert len(tables(draw_dot(x, max_nodes=10_000).source)) == 3001 + 3000  # each * adds the constant 1.0
