"""micrograd's classic expression, forward and backward (tutorial chapter 3, "Backward").

Builds the expression from micrograd's README at `a` and `b`, runs backward from g and prints g
and the derivatives of g with respect to the two inputs. At micrograd's point (the defaults):

    python examples/expression.py
    g = 24.7041
    a.grad = 138.8338
    b.grad = 645.5773

`--a` and `--b` move the point; `--output graph.svg` also draws the graph with its gradients
(through the `visualize` package).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from scalargrad import Value


def expression(a_value: float = -4.0, b_value: float = 2.0) -> tuple[Value, Value, Value]:
    """Build micrograd's example expression at (a, b); returns (g, a, b) after g.backward()."""
    a = Value(a_value, label="a")
    b = Value(b_value, label="b")
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.label = "g"
    g.backward()
    return g, a, b


def main(argv: Sequence[str] | None = None) -> Value:
    """Print g and dg/da, dg/db to four decimals (and draw the graph if asked); returns g."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=float, default=-4.0, help="the value of a (default -4.0)")
    parser.add_argument("--b", type=float, default=2.0, help="the value of b (default 2.0)")
    parser.add_argument("--output", help="also draw the graph to this .svg or .png file")
    args = parser.parse_args(argv)

    try:
        g, a, b = expression(args.a, args.b)
    except ZeroDivisionError as error:  # f = 0 where e = 0, and g has a 10 / f term
        parser.error(f"the expression has no value at a={args.a}, b={args.b}: {error}")
    print(f"g = {g.data:.4f}")  # the outcome of this forward pass
    print(f"a.grad = {a.grad:.4f}")  # the numerical value of dg/da
    print(f"b.grad = {b.grad:.4f}")  # the numerical value of dg/db
    if args.output:
        from visualize import render

        render(g, args.output)
        print(f"wrote {args.output}")
    return g


if __name__ == "__main__":
    main()
