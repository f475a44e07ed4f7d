"""micrograd's classic expression, forward and backward (tutorial chapter 2, "backpropagation").

Builds the expression from micrograd's README, runs backward from g and prints g and the
derivatives of g with respect to the two inputs:

    g = 24.7041
    a.grad = 138.8338
    b.grad = 645.5773
"""

from __future__ import annotations

from scalargrad import Value


def expression() -> tuple[Value, Value, Value]:
    """Build micrograd's example expression; returns (g, a, b) after g.backward()."""
    a = Value(-4.0, label="a")
    b = Value(2.0, label="b")
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
    g.backward()
    return g, a, b


def main() -> None:
    """Print g and dg/da, dg/db to four decimals."""
    g, a, b = expression()
    print(f"g = {g.data:.4f}")  # the outcome of this forward pass
    print(f"a.grad = {a.grad:.4f}")  # the numerical value of dg/da
    print(f"b.grad = {b.grad:.4f}")  # the numerical value of dg/db


if __name__ == "__main__":
    main()
