"""`tensorgrad.autograd`: the node `record` makes, the version counters, views as an autograd fact."""

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.autograd import InplaceModifiedError, bump_version, is_view, record
from tensorgrad.tensor import Tensor, new_leaf


def _set_slots(t):
    return {name for name in Tensor.__slots__ if name != "__weakref__" and hasattr(t, name)}


def test_record_and_the_leaf_constructor_set_the_same_attributes():
    """`record` sets a node's attributes inline for speed; they must be the leaf's list."""
    x = tg.ones(2, requires_grad=True)
    inner = record(x.data * 2, "double", (x,), lambda grad: grad * 2)
    no_grad_leaf = record(x.data * 2, "double", (tg.ones(2),), lambda grad: grad * 2)
    assert _set_slots(inner) == _set_slots(new_leaf(np.ones(2))) == _set_slots(no_grad_leaf)
    assert _set_slots(inner) == set(Tensor.__slots__) - {"__weakref__"}


def test_views_share_the_version_counter_and_say_so():
    x = tg.zeros(2, 3, requires_grad=True) * 1
    view, copy = x.T, x.clone()
    assert is_view(view) and not is_view(copy) and not is_view(x)
    assert view._versions is x._versions
    bump_version(x)
    assert view._version == x._version == 1 and copy._version == 0


def test_an_in_place_change_after_use_is_refused_at_backward():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b * b
    with tg.no_grad():
        b.data[0] = 5.0
    bump_version(b)
    with pytest.raises(InplaceModifiedError, match="version 0 became 1"):
        c.sum().backward()


def test_creation_order_is_a_topological_order_of_the_walks_nodes():
    from scalargrad.engine import creation_order, topological_order

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, -1.0], requires_grad=True)
    a = x * w
    b = a.exp()
    c = (a + b) * x  # a is reached along two paths
    root = (c - a.tanh()).sum()
    order = creation_order(root)
    assert set(order) == set(topological_order(root, leaves=False))
    assert all(n._seq is not None for n in order) and x._seq is None
    position = {node: i for i, node in enumerate(order)}
    for node in order:  # every inner parent runs after its child in the pass (comes first here)
        assert all(position[p] < position[node] for p in node.parents if p in position)
    root.backward()
    a_, w_, x_ = np.array([3.0, -2.0]), w.data, x.data
    expected = (a_ + np.exp(a_)) + x_ * w_ * (1 + np.exp(a_)) - w_ * (1 - np.tanh(a_) ** 2)
    np.testing.assert_allclose(x.grad, expected, rtol=1e-6)


def test_a_view_older_than_its_bases_in_place_change_follows_the_base_in_either_pass():
    # PyTorch's rule: a view used after its base changed in place is a view of the base as it is
    # now (its grad_fn is regenerated); an op that used it before keeps the old history.
    for retain in (False, True):
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1.0
        v = y[0]
        before = v * 1.0  # used before the change: d/dx = 1
        y.mul_(2.0)  # y is renumbered after v, which still holds y's old history
        (v * 1.0 + before).backward(retain_graph=retain)  # v used after: d/dx = 2
        np.testing.assert_array_equal(x.grad, [3.0, 0.0])
