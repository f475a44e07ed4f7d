"""The engine's `on_step` hook: one call per inner node, in the order the pass runs them.

`visualize.backprop_steps` draws one picture per call, so the count, the order and what the
nodes hold at each call are what these check.
"""

import pytest

from scalargrad import Value
from scalargrad.engine import backward, topological_order


def expression():
    """micrograd's small expression, with `c` used twice so a gradient adds up."""
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    c = a * b
    d = c + c.tanh()
    e = d * c
    return a, b, c, e


def test_steps_follow_reverse_topological_order_once_per_inner_node():
    a, b, c, e = expression()
    steps = []
    backward(e, 1.0, on_step=lambda node, grad: steps.append(node))
    inner = topological_order(e, leaves=False)
    assert steps == inner[::-1]
    assert len(steps) == len([n for n in topological_order(e) if n.parents])
    assert steps[0] is e


def test_each_step_sees_the_gradients_just_accumulated():
    a, b, c, e = expression()
    seen = []

    def record(node, grad):
        seen.append((node, grad, [p.grad for p in node.parents]))

    backward(e, 1.0, on_step=record)
    node, grad, parent_grads = seen[0]
    assert node is e and grad == 1.0
    d = e.parents[0]
    # e = d * c: after e's step, d.grad = c and c.grad = d (c's other paths have not run yet).
    assert parent_grads == [c.data, d.data]
    # c's own step comes last among the nodes above the leaves, with every path added up.
    c_step = next(step for step in seen if step[0] is c)
    assert c_step[1] == pytest.approx(c.grad)
    assert c_step[2] == [b.data * c.grad, a.data * c.grad]


def test_hook_gives_the_same_gradients_as_a_plain_pass():
    a, b, c, e = expression()
    backward(e, 1.0)
    plain = (a.grad, b.grad, c.grad)
    a2, b2, c2, e2 = expression()
    backward(e2, 1.0, on_step=lambda node, grad: None)
    assert (a2.grad, b2.grad, c2.grad) == plain


def test_hook_runs_before_the_graph_is_freed():
    a, b, c, e = expression()
    parents_seen = []
    backward(e, 1.0, retain_graph=False, on_step=lambda node, grad: parents_seen.append(node.parents))
    assert all(parents for parents in parents_seen)
    assert e.parents == ()


def test_hook_on_a_tensor_graph_sees_grads_before_they_are_dropped():
    tg = pytest.importorskip("tensorgrad")
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y.tanh()
    out = (z * y).sum()
    steps = []

    def record(node, grad):
        steps.append((node, grad.copy(), node.grad is not None))

    backward(out, out.data * 0 + 1, retain_graph=True, on_step=record)
    assert [node for node, _, _ in steps] == topological_order(out, leaves=False)[::-1]
    assert len(steps) == 4  # sum, *, tanh, *: the leaf x has no step
    assert all(still_held for _, _, still_held in steps)
    assert y.grad is None  # dropped after its step, as PyTorch does for a non-retained node
    assert x.grad is not None
