"""python -m visualize: --help, one expression drawn with its player, and everything else refused."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

pytest.importorskip("graphviz")

from visualize_helpers import needs_layout, texts  # noqa: E402

from scalargrad import Value  # noqa: E402
from scalargrad.engine import topological_order  # noqa: E402
from visualize import dot as dot_module  # noqa: E402
from visualize.cli import main  # noqa: E402
from visualize.expression import ExpressionError, build, parse_values  # noqa: E402


def test_help_explains_the_expression_and_the_options():
    done = subprocess.run([sys.executable, "-m", "visualize", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    for words in ("EXPR", "--values", "--out", "--backprop", "relu, tanh, exp, log and sigmoid", "eval"):
        assert words in done.stdout


@needs_layout
def test_one_expression_is_drawn_with_its_gradients_and_its_player(tmp_path, capsys):
    svg, page = tmp_path / "graph.svg", tmp_path / "page.html"
    argv = ["tanh(a*b + c) * a", "--values", "a=2,b=-3,c=10", "--out", str(svg), "--backprop", str(page)]
    status = main(argv)
    assert status == 0
    a, b, c = Value(2.0, label="a"), Value(-3.0, label="b"), Value(10.0, label="c")
    out = (a * b + c).tanh() * a
    out.backward()
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"out = {out.data:.4g}"
    assert f"dout/da = {a.grad:.4g}" in printed and f"dout/dc = {c.grad:.4g}" in printed
    assert "<svg" in svg.read_text()
    assert page.read_text().count('<div class="frame"') == 4 + 1  # *, +, tanh, * and the start


def test_the_graph_is_built_from_the_expression_without_eval():
    values = parse_values("a=2, b=-3,c=1e-3")
    assert values == {"a": 2.0, "b": -3.0, "c": 0.001}
    root = build("relu(a) + sigmoid(b) ** 2 - log(c) / exp(-a) + 2 * a", values)
    expected = max(2.0, 0) + (1 / (1 + math.exp(3.0))) ** 2 - math.log(0.001) / math.exp(-2.0) + 4.0
    assert math.isclose(root.data, expected)
    root.backward()
    a_grad = 1 + (-math.log(0.001)) * math.exp(2.0) + 2  # relu', d/da of -log(c) * exp(a), 2
    shown = texts(dot_module.draw_dot(root).source).values()
    assert any(text.startswith("a data 2.0") for text in shown)
    a = next(node for node in _leaves(root) if node.label == "a")
    assert math.isclose(a.grad, a_grad)


def _leaves(root):
    return [node for node in topological_order(root) if not node.op]


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("a.__class__", "attribute access"),
        ("a.tanh()", "attribute access"),
        ("__import__('os').system('touch pwned')", "only calls of"),
        ("print(a)", "only calls of"),
        ("(lambda: a)()", "only calls of"),
        ("lambda: a", "lambda"),
        ("a[0]", "indexing"),
        ("[x for x in a]", "ListComp"),
        ("'text'", "only numbers"),
        ("True + a", "only numbers"),
        ("tanh(a, a)", "exactly one argument"),
        ("tanh(x=a)", "exactly one argument"),
        ("a if a else a", "if-else"),
        ("a < 1", "comparison"),
        ("a @ a", "@"),
        ("a % 2", "%"),
        ("q + a", "q has no value"),
        ("a +", "not a Python expression"),
    ],
)
def test_anything_else_is_refused_with_a_clear_error(expr, says, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main([expr, "--values", "a=1"])
    assert exit_info.value.code == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "graph.svg").exists()


def test_bad_values_and_outputs_are_refused(capsys):
    with pytest.raises(ExpressionError, match="name=number"):
        parse_values("a2")
    with pytest.raises(ExpressionError, match="must be a number"):
        parse_values("a=two")
    with pytest.raises(SystemExit):
        main(["a", "--values", "a=1", "--out", "graph.jpg"])
    assert ".svg or .png" in capsys.readouterr().err
