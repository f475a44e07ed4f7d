"""Scalar expressions typed on the command line, turned into a `Value` graph without `eval`.

`python -m visualize "(a*b + c).tanh()"` is not accepted: attribute access could reach any
object. The grammar is Python's, cut down to arithmetic: names, numbers, `+ - * / **`, unary
`-` and `+`, parentheses, and calls of `relu tanh exp log sigmoid` with one argument, as in
`tanh(a*b + c)`. The expression is parsed with `ast` and walked node by node; anything else
(attribute access, other calls, lambdas, subscripts, strings, ...) is refused with an error
that names it.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

from scalargrad import Value

__all__ = ["FUNCTIONS", "ExpressionError", "parse_values", "build"]

FUNCTIONS: dict[str, Callable[[Value], Value]] = {
    "relu": Value.relu,
    "tanh": Value.tanh,
    "exp": Value.exp,
    "log": Value.log,
    "sigmoid": Value.sigmoid,
}
BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.Pow: operator.pow}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_LENGTH = 2000  # a longer line is not something to draw; it also keeps the parser shallow


class ExpressionError(ValueError):
    """An expression or a list of values that the command line does not accept."""


def parse_values(text: str) -> dict[str, float]:
    """'a=2,b=-3,c=10' as {'a': 2.0, 'b': -3.0, 'c': 10.0}."""
    values: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, equals, number = (part.strip() for part in item.partition("="))
        if not equals or not name.isidentifier():
            raise ExpressionError(f"--values: expected name=number, got {item!r}")
        try:
            values[name] = float(number)
        except ValueError:
            raise ExpressionError(f"--values: {name} must be a number, got {number!r}") from None
    return values


def build(expression: str, values: dict[str, float]) -> Value:
    """The `Value` graph of `expression`, one labelled leaf per name, read from `values`."""
    if len(expression) > MAX_LENGTH:
        raise ExpressionError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError) as error:
        kind = error.__class__.__name__
        raise ExpressionError(f"not a Python expression: {expression!r} ({kind})") from None
    leaves = {name: Value(number, label=name) for name, number in values.items()}
    result = _Builder(leaves, expression).visit(tree.body)
    return result if isinstance(result, Value) else Value(result)


class _Builder:
    """Walks the syntax tree of an expression, allowing only what the module docstring lists."""

    def __init__(self, leaves: dict[str, Value], expression: str) -> None:
        self.leaves = leaves
        self.expression = expression

    def visit(self, node: ast.AST) -> Value | float:
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is None:
            raise ExpressionError(f"{_describe(node)} is not allowed in {self.expression!r}: only names, "
                                  f"numbers, + - * / **, parentheses and calls of {', '.join(FUNCTIONS)}")
        return handler(node)

    def _Constant(self, node: ast.Constant) -> float:
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExpressionError(f"only numbers are allowed as constants, got {node.value!r}")
        return float(node.value)

    def _Name(self, node: ast.Name) -> Value:
        if node.id not in self.leaves:
            hint = " (a function: call it, as in tanh(x))" if node.id in FUNCTIONS else ""
            raise ExpressionError(f"{node.id} has no value{hint}: give it one with --values {node.id}=...")
        return self.leaves[node.id]

    def _BinOp(self, node: ast.BinOp) -> Value:
        op = BINARY.get(type(node.op))
        if op is None:
            raise ExpressionError(f"the operator {_describe(node.op)} is not allowed: only + - * / **")
        left, right = self.visit(node.left), self.visit(node.right)
        if not isinstance(left, Value):
            left = Value(left)  # a constant leaf; also gives number op number Value's rules (no overflow)
        return op(left, right)

    def _UnaryOp(self, node: ast.UnaryOp) -> Value | float:
        op = UNARY.get(type(node.op))
        if op is None:
            raise ExpressionError(f"the operator {_describe(node.op)} is not allowed: only - and +")
        operand = self.visit(node.operand)
        return operand if op is operator.pos else op(operand)

    def _Call(self, node: ast.Call) -> Value:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS:
            raise ExpressionError(f"only calls of {', '.join(FUNCTIONS)} are allowed, got a call of "
                                  f"{_describe(node.func)}")
        if len(node.args) != 1 or node.keywords:
            raise ExpressionError(f"{name}() takes exactly one argument, as in {name}(x)")
        argument = self.visit(node.args[0])
        return FUNCTIONS[name](argument if isinstance(argument, Value) else Value(argument))


def _describe(node: ast.AST) -> str:
    """How an error names a piece of syntax: 'attribute access (x.y)', 'lambda', ..."""
    words = {
        ast.Attribute: "attribute access (x.y)", ast.Lambda: "lambda", ast.Subscript: "indexing (x[i])",
        ast.Compare: "comparison", ast.BoolOp: "and/or", ast.IfExp: "if-else", ast.NamedExpr: ":=",
        ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
        ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.Invert: "~", ast.Not: "not",
    }
    if isinstance(node, ast.Name):
        return node.id
    return words.get(type(node), type(node).__name__)
