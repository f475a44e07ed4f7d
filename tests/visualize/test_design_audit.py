"""Regressions found by auditing visualize against DESIGN.md's "visualize" section."""

from __future__ import annotations

import pytest

pytest.importorskip("graphviz")

from visualize_helpers import caption  # noqa: E402

from scalargrad import Value  # noqa: E402
from scalargrad.nn import MLP  # noqa: E402
from visualize import backprop_steps, draw_dot  # noqa: E402
from visualize.cli import main  # noqa: E402


def test_a_new_value_graph_over_parameters_with_old_gradients_says_not_computed_yet():
    # Training without zero_grad: the parameters hold the last graph's gradients, but the new
    # graph has had no backward, so its picture must say so rather than show stale numbers.
    model = MLP(2, [3, 1], seed=0)
    model([1.0, 2.0]).backward()
    loss = model([0.5, -1.0])
    assert any(p.grad != 0 for p in model.parameters())
    assert "not computed yet" in caption(draw_dot(loss, names=model).source)
    loss.backward()
    assert "not computed yet" not in caption(draw_dot(loss, names=model).source)


def test_division_by_zero_on_the_command_line_is_a_usage_error_not_a_traceback(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["1/a", "--values", "a=0", "--out", str(tmp_path / "g.svg")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "division by zero" in err and "Traceback" not in err
    assert not (tmp_path / "g.svg").exists()


def test_a_step_of_a_node_cut_from_the_picture_is_told_plainly():
    x = Value(0.5, label="x")
    y = x
    for _ in range(30):
        y = y * 0.9
    pictures = backprop_steps(y, max_nodes=10)
    assert len(pictures) == 31
    last = pictures[-1].caption
    assert "not shown" in last and "cut at max_nodes" in last
    assert last.count("a node not shown") == 1  # not "a node not shown = a node not shown * ..."
