"""A new graph over parameters with old gradients says so; inline display without Graphviz's dot.

DESIGN.md: "a graph drawn before any backward says in its caption that the gradients are not
computed yet", also for a tensor graph whose leaves hold `.grad` from an earlier graph; and "in
Jupyter, the graph displays inline", also where only `graphviz-pure` is installed.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

graphviz = pytest.importorskip("graphviz")

from visualize_helpers import caption  # noqa: E402

import tensorgrad as tg  # noqa: E402
from tensorgrad import nn  # noqa: E402
from tensorgrad.nn.functional import cross_entropy  # noqa: E402
from visualize import backprop_player, backprop_steps, draw_dot  # noqa: E402
from visualize.dot import layout_program  # noqa: E402

NOT_YET = "not computed yet"


def mlp_loss(model: nn.Module, seed: int) -> tg.Tensor:
    tg.manual_seed(seed)
    return cross_entropy(model(tg.randn(4, 2)), tg.tensor([0, 1, 1, 0]))


def mlp() -> nn.Module:
    tg.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 2))


# --- gradients not computed yet, for tensor graphs ------------------------------------------------------


def test_a_new_tensor_graph_over_parameters_with_old_gradients_says_not_computed_yet():
    # Training without zero_grad: the parameters hold the last graph's gradients, but the new
    # graph has had no backward, so its picture must say so rather than show stale numbers.
    model = mlp()
    mlp_loss(model, 1).backward()
    loss = mlp_loss(model, 2)
    assert all(p.grad is not None and p.grad.any() for p in model.parameters())
    assert NOT_YET in caption(draw_dot(loss, names=model).source)
    loss.backward(retain_graph=True)
    words = caption(draw_dot(loss, names=model).source)
    assert NOT_YET not in words and "retain_grad()" in words


def test_a_second_kept_graph_stays_new_until_its_own_backward():
    w = tg.tensor([1.0, -2.0], requires_grad=True)
    first = (w * 3.0).sum()
    first.backward(retain_graph=True)
    second = (w * w).sum()
    assert NOT_YET not in caption(draw_dot(first).source)
    assert NOT_YET in caption(draw_dot(second).source)
    second.backward(retain_graph=True)
    assert NOT_YET not in caption(draw_dot(first).source)  # both graphs had their own pass
    assert NOT_YET not in caption(draw_dot(second).source)


def test_gradients_that_are_zero_after_backward_are_computed_not_missing():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    loss = (-w).relu().sum()  # relu is off everywhere: the true gradient is all zeros
    loss.backward(retain_graph=True)
    assert not w.grad.any()
    assert NOT_YET not in caption(draw_dot(loss).source)


def test_an_in_place_change_of_the_root_makes_a_new_graph():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * 2.0).sum()
    loss.backward(retain_graph=True)
    loss.mul_(3.0)  # the root is now a new node, which no backward ran from
    assert NOT_YET in caption(draw_dot(loss).source)


def test_an_inner_root_that_kept_its_gradient_shows_it_computed():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    hidden = (w * 2.0).tanh()
    hidden.retain_grad()
    (hidden * hidden).sum().backward(retain_graph=True)
    assert NOT_YET not in caption(draw_dot(hidden).source)
    fresh = (w * 5.0).tanh()  # same leaf, new inner root with no pass through it
    assert NOT_YET in caption(draw_dot(fresh).source)


def test_backward_through_autograd_backward_and_with_inputs_counts_too():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    v = tg.tensor([0.5, 0.5], requires_grad=True)
    loss = (w * v).sum()
    tg.autograd.backward([loss], retain_graph=True)
    assert NOT_YET not in caption(draw_dot(loss).source)
    other = (w * v * 2.0).sum()
    other.backward(inputs=[w], retain_graph=True)
    assert NOT_YET not in caption(draw_dot(other).source)


def test_a_graph_stepped_through_by_backprop_steps_is_computed_afterwards():
    w = tg.tensor([1.0, -1.0], requires_grad=True)
    (w * 4.0).sum().backward()  # stale gradients on w
    loss = (w * w).sum()
    assert NOT_YET in caption(draw_dot(loss).source)
    backprop_steps(loss)
    assert NOT_YET not in caption(draw_dot(loss).source)


def test_a_plain_backward_still_says_the_graph_was_freed():
    w = tg.ones(2, requires_grad=True)
    loss = (w * 2.0).sum()
    loss.backward()
    words = caption(draw_dot(loss).source)
    assert "freed" in words and NOT_YET not in words


def test_the_mark_does_not_keep_the_graph_alive():
    import gc
    import weakref

    from tensorgrad.tensor import backpropagated

    w = tg.ones(2, requires_grad=True)
    loss = (w * 2.0).sum()
    loss.backward(retain_graph=True)
    seq, gone = loss._seq, weakref.ref(loss)
    assert backpropagated.get(seq) is loss
    del loss
    gc.collect()
    assert gone() is None and seq not in backpropagated


# --- inline display in Jupyter without Graphviz's dot ------------------------------------------------------


@pytest.fixture
def only_graphviz_pure(tmp_path, monkeypatch):
    """A PATH on which `dot` is missing and `graphviz-pure` is found, as after a plain pip install."""
    pure = shutil.which("graphviz-pure") or str(Path(sys.executable).parent / "graphviz-pure")
    if not Path(pure).exists():
        pytest.skip("graphviz-pure is not installed")
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "graphviz-pure").symlink_to(pure)
    monkeypatch.setenv("PATH", str(folder))
    assert shutil.which("dot") is None and Path(layout_program()).name == "graphviz-pure"
    return folder


def loss_graph():
    w = tg.tensor([0.5, -1.5], requires_grad=True)
    loss = (w * w).tanh().sum()
    loss.backward(retain_graph=True)
    return loss


def test_graphviz_itself_cannot_display_without_dot(only_graphviz_pure):
    # What the fallback is for: graphviz's own Digraph needs the system program.
    with pytest.raises(graphviz.ExecutableNotFound):
        graphviz.Digraph(body=["a -> b"])._repr_mimebundle_()


def test_a_drawn_graph_displays_inline_without_dot(only_graphviz_pure):
    picture = draw_dot(loss_graph())
    bundle = picture._repr_mimebundle_()  # what IPython's display asks first
    assert list(bundle) == ["image/svg+xml"] and "<svg" in bundle["image/svg+xml"]
    assert "<svg" in picture._repr_svg_()
    assert picture._repr_image_svg_xml().lstrip().startswith("<?xml")  # graphviz's own hooks
    assert picture._repr_image_png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_inline_display_honours_include_exclude_and_the_jupyter_format(only_graphviz_pure):
    picture = draw_dot(loss_graph())
    both = picture._repr_mimebundle_(include=["image/png", "image/jpeg"])
    assert both["image/png"][:4] == b"\x89PNG" and both["image/jpeg"][:2] == b"\xff\xd8"
    assert picture._repr_mimebundle_(include=["image/svg+xml"], exclude=["image/svg+xml"]) == {}
    previous = graphviz.set_jupyter_format("png")
    try:
        assert list(draw_dot(loss_graph())._repr_mimebundle_()) == ["image/png"]
    finally:
        graphviz.set_jupyter_format(previous)


def test_a_backprop_frame_and_the_player_display_inline_without_dot(only_graphviz_pure):
    frames = backprop_steps(loss_graph())
    assert "<svg" in frames[1]._repr_mimebundle_()["image/svg+xml"]
    html = backprop_player(loss_graph())._repr_html_()
    assert html.startswith("<iframe srcdoc=") and html.count("&lt;svg") == len(frames)


def test_without_any_layout_program_display_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # nothing beside it either
    assert layout_program() is None
    with pytest.raises(RuntimeError, match="pip install graphviz-pure"):
        draw_dot(loss_graph())._repr_mimebundle_()
    assert os.environ["PATH"] == str(tmp_path)
