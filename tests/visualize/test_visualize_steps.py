"""backprop_steps: one picture per step of the engine's own pass, checked in the DOT source."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("graphviz")

from visualize_helpers import caption, classic, tables, texts  # noqa: E402

import tensorgrad as tg  # noqa: E402 - after the skip: visualize needs graphviz
from scalargrad import Value, engine  # noqa: E402
from scalargrad.engine import topological_order  # noqa: E402
from tensorgrad import nn  # noqa: E402
from visualize import backprop_steps, draw_dot, style  # noqa: E402
from visualize import steps as steps_module  # noqa: E402


def active_ops(source: str) -> list[str]:
    """Ids of the nodes whose op is highlighted as running."""
    return re.findall(rf'^\s*(n\d+)_op \[.*fillcolor="{style.ACTIVE_BORDER}"', source, flags=re.M)


def visible_grads(source: str) -> dict[str, bool]:
    """{node id: whether its gradient is shown} (a hidden one is transparent text)."""
    return {uid: f'<font color="{style.HIDDEN}">' not in html for uid, html in tables(source).items()}


def uid_of(scene_nodes, node) -> str:
    return next(shown.uid for shown in scene_nodes if shown.node is node)


def test_one_picture_per_inner_node_plus_one_before_the_first_step():
    _, _, d = classic()
    inner = topological_order(d, leaves=False)
    frames = backprop_steps(d)
    assert len(frames) == len(inner) + 1


def test_the_leaves_end_with_the_gradients_of_a_plain_backward():
    a, b, d = classic()
    a2, b2, d2 = classic()
    d2.backward()
    backprop_steps(d)
    assert (a.grad, b.grad) == (a2.grad, b2.grad) == (3.0, 16.0)
    for mine, theirs in zip(topological_order(d), topological_order(d2), strict=True):
        assert mine.grad == theirs.grad


def test_it_runs_the_engines_backward_once_with_the_step_hook(monkeypatch):
    calls = []
    real = engine.backward

    def spy(root, seed, retain_graph=True, on_step=None):
        calls.append(on_step)
        return real(root, seed, retain_graph=retain_graph, on_step=on_step)

    monkeypatch.setattr(steps_module.engine, "backward", spy)
    _, _, d = classic()
    backprop_steps(d)
    assert len(calls) == 1 and callable(calls[0])


def test_each_step_highlights_the_node_the_pass_runs_in_the_engines_order():
    _, _, d = classic()
    scene = steps_module.make_scene(d)
    order = list(reversed(topological_order(d, leaves=False)))  # the engine pops from the end
    frames = backprop_steps(d)
    assert active_ops(frames[0].source) == []
    for node, frame in zip(order, frames[1:], strict=True):
        assert active_ops(frame.source) == [uid_of(scene.nodes, node)]
        fills = re.findall(r'bgcolor="(#\w+)" color', tables(frame.source)[uid_of(scene.nodes, node)])
        assert fills == [style.ACTIVE_FILL]


def test_only_the_gradients_known_so_far_are_shown():
    a, b, d = classic()
    scene = steps_module.make_scene(d)
    frames = backprop_steps(d)
    first = visible_grads(frames[0].source)
    assert [uid for uid, shown in first.items() if shown] == [uid_of(scene.nodes, d)]  # the seed alone
    assert "not known yet" in frames[0].caption and "d.grad = 1.0" in frames[0].caption
    last = visible_grads(frames[-1].source)
    assert all(last.values())  # every node of a Value graph has a gradient by the end
    shown = {text.split(" grad")[0]: text for text in texts(frames[-1].source).values()}
    assert shown["a data -4.0"].endswith("grad 3.0") and shown["b data 2.0"].endswith("grad 16.0")
    for earlier, later in zip(frames, frames[1:], strict=False):  # a known gradient stays shown
        assert all(later_shown for uid, later_shown in visible_grads(later.source).items()
                   if visible_grads(earlier.source)[uid])


def test_a_node_used_twice_shows_its_gradient_adding_up():
    _, _, d = classic()
    scene = steps_module.make_scene(d)
    c = next(shown.node for shown in scene.nodes if shown.name == "c")
    frames = backprop_steps(d)
    received = [i for i, frame in enumerate(frames)
                if style.RECEIVED_FILL in tables(frame.source)[uid_of(scene.nodes, c)]]
    assert len(received) == 2  # from tanh(c), then from c - a
    first, second = (texts(frames[i].source)[uid_of(scene.nodes, c)] for i in received)
    assert first.endswith("grad 1.0") and second.endswith("grad 2.0")
    assert "c.grad += 1.0 x 1.0 (now 1.0 + 1.0 = 2.0)" in frames[received[1]].caption


def test_the_flowing_gradient_is_on_the_edges_of_the_step():
    _, _, d = classic()
    frames = backprop_steps(d)
    edge = re.compile(r'^\s*(n\d+) -> (n\d+)_op \[(.*)\]$', re.M)
    red = [(op, re.search(r'label="([^"]+)"', attrs).group(1))
           for _, op, attrs in edge.findall(frames[1].source)
           if f'color="{style.FLOW_COLOUR}"' in attrs and f'fontcolor="{style.FLOW_COLOUR}"' in attrs]
    assert sorted(label for _, label in red) == ["+= 1.0", "+= 1.0"]
    assert {op for op, _ in red} == set(active_ops(frames[1].source))
    for frame in frames:  # the labels are in every frame, seen only on their own step
        visible = [attrs for _, _, attrs in edge.findall(frame.source) if "label=" in attrs
                   and style.HIDDEN not in attrs]
        running = active_ops(frame.source)
        assert len(visible) == sum(1 for _, op, _ in edge.findall(frame.source) if op in running)


def test_captions_explain_the_step_with_the_local_derivative():
    c, e = Value(3.0, label="c"), Value(-2.0, label="e")
    d = c * e
    d.label = "d"
    frames = backprop_steps(d)
    assert len(frames) == 2
    assert "d = c * e" in frames[1].caption
    assert "dd/dc = e = -2.0, so c.grad += -2.0 x 1.0" in frames[1].caption
    assert "dd/de = c = 3.0, so e.grad += 3.0 x 1.0" in frames[1].caption
    assert "d = c * e" in caption(frames[1].source)  # written into the picture too
    quiet = backprop_steps(c * e, caption_in_picture=False)
    assert "dn1/dc" in quiet[1].caption and "dn1/dc" not in caption(quiet[1].source)


def test_every_frame_has_the_same_layout():
    _, _, d = classic()
    frames = backprop_steps(d, caption_in_picture=False)

    def geometry(source: str) -> list:
        sizes = re.findall(r'width="\d+" height="\d+" fixedsize', source)
        words = [re.sub(r"<[^>]+>", "", html) for html in tables(source).values()]
        return [sizes, words, re.findall(r"^\s*(n\d+(?:_op)?) -> (n\d+(?:_op)?)", source, flags=re.M)]

    first = geometry(frames[0].source)
    assert first[0]  # gradient cells have a fixed size
    for frame in frames[1:]:
        assert geometry(frame.source)[0] == first[0] and geometry(frame.source)[2] == first[2]


def test_a_tensor_graph_steps_through_with_names_and_ends_like_backward():
    def model_and_loss():
        tg.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        x = tg.randn(4, 2)
        return model, (model(x) ** 2).mean()

    model, loss = model_and_loss()
    plain_model, plain_loss = model_and_loss()
    plain_loss.backward()
    frames = backprop_steps(loss, names=model)
    assert len(frames) == len(topological_order(loss, leaves=False)) + 1
    for (name, p), (_, q) in zip(model.named_parameters(), plain_model.named_parameters(), strict=True):
        np.testing.assert_array_equal(p.grad, q.grad, err_msg=name)
    assert "0.weight" in " ".join(texts(frames[-1].source).values())
    assert "freed" not in caption(draw_dot(loss).source)  # kept by default, so it can be drawn


def test_retain_graph_false_frees_the_graph_as_backward_does():
    w = tg.ones(3, requires_grad=True)
    loss = (w * 2.0).sum()
    frames = backprop_steps(loss, retain_graph=False)
    assert len(frames) == 3
    np.testing.assert_array_equal(w.grad, [2.0, 2.0, 2.0])
    assert "freed" in caption(draw_dot(loss).source)


def test_bad_roots_are_clear_errors():
    with pytest.raises(RuntimeError, match="scalar outputs"):
        backprop_steps(tg.ones(3, requires_grad=True) * 2.0)
    with pytest.raises(RuntimeError, match="does not require grad"):
        backprop_steps(tg.ones(3).sum())
    x = Value(1.0)
    for _ in range(30):
        x = x * 1.0
    with pytest.raises(ValueError, match="max_steps"):
        backprop_steps(x, max_steps=10)
    with pytest.raises(ValueError, match="rankdir"):
        backprop_steps(x, rankdir="XY")
