"""The command line: draw an expression of named scalars, and its backprop player.

    python -m visualize "tanh(a*b + c)" --values a=2,b=-3,c=10 --out graph.svg --backprop page.html

The expression is read with `visualize.expression` (Python's syntax cut down to arithmetic and
five functions; never `eval`), built as a `Value` graph, backpropagated, and drawn.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from scalargrad import Value
from scalargrad.engine import topological_order
from visualize import expression
from visualize.dot import RANKDIRS, render
from visualize.player import save_backprop_html
from visualize.style import number

__all__ = ["main"]

DESCRIPTION = """\
Draw the graph of a scalar expression after backward(): every node with its data and gradient.

EXPR is a Python expression over named scalars: names, numbers, + - * / ** (a power such as
x**2), unary -, parentheses, and calls of relu, tanh, exp, log and sigmoid with one argument.
Nothing else is accepted (no attribute access, no other calls), and it is never run by eval.
Give every name a value with --values. Quote EXPR for the shell.
"""

EXAMPLES = """\
examples:
  python -m visualize "a*b + c" --values a=2,b=-3,c=10 --out graph.svg
  python -m visualize "tanh(x1*w1 + x2*w2 + b)" --values x1=2,x2=0,w1=-3,w2=1,b=6.88 --out neuron.png
  python -m visualize "relu(a*b + b**3 - a) + tanh(a*b + b**3)" --values a=-4,b=2 --backprop steps.html
"""


def parser() -> argparse.ArgumentParser:
    """The argument parser (its --help is the command's manual)."""
    p = argparse.ArgumentParser(prog="python -m visualize", description=DESCRIPTION, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("expr", metavar="EXPR", help="the expression, e.g. 'tanh(a*b + c)'")
    p.add_argument("--values", default="", metavar="NAME=NUMBER,...",
                   help="a value for every name in EXPR, e.g. a=2,b=-3,c=10")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="where to write the picture, .svg or .png (default: graph.svg, or none when "
                        "only --backprop is given)")
    p.add_argument("--backprop", default=None, metavar="PAGE.html",
                   help="also write a page that plays the backward pass step by step")
    p.add_argument("--rankdir", default="LR", choices=RANKDIRS,
                   help="LR: inputs on the left (default); TB: inputs on top")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse exits with 2 on bad input)."""
    p = parser()
    args = p.parse_args(argv)
    out = args.out if args.out is not None or args.backprop else "graph.svg"
    if out is not None and not out.lower().endswith((".svg", ".png")):
        p.error(f"--out must end in .svg or .png, got {out!r}")
    try:
        root = expression.build(args.expr, expression.parse_values(args.values))
    except expression.ExpressionError as error:
        p.error(str(error))
    except ZeroDivisionError as error:  # 1/a with a=0: Python's floats raise, so does Value
        p.error(f"{error} (in {args.expr!r}): give the divisor a non-zero value")
    if not root.label:
        root.label = "out"
    if args.backprop:
        save_backprop_html(root, args.backprop, rankdir=args.rankdir)  # runs the backward pass
    else:
        root.backward()
    if out is not None:
        render(root, out, rankdir=args.rankdir)
    _report(root, [out, args.backprop])
    return 0


def _report(root: Value, written: list[str | None]) -> None:
    """What the command computed and wrote, for the terminal."""
    print(f"{root.label} = {number(root.data)}")
    inputs = {node.label: node for node in topological_order(root) if not node.op and node.label}
    for label, node in sorted(inputs.items()):
        print(f"d{root.label}/d{label} = {number(node.grad)}")
    for path in filter(None, written):
        print(f"wrote {path}")
