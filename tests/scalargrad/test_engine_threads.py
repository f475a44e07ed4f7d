"""backward() from several threads at once, on one shared graph: every gradient exact.

A pass resets the inner nodes' grads and adds into them and into the leaves; two passes
interleaved by thread switches would mix their sums (and `leaf.grad += g` itself can lose an
update). The switch interval is made tiny so that the threads switch inside the passes.
"""

import sys
import threading

import pytest

from scalargrad import Value

PASSES = 500


@pytest.fixture
def frequent_switches():
    """Make the interpreter switch threads every 10 microseconds during the test."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def run_in_threads(*works):
    """Run each function in a thread of its own, all at once; re-raise the first error."""
    errors = []
    start = threading.Barrier(len(works))

    def target(work):
        start.wait()
        try:
            work()
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            errors.append(error)

    workers = [threading.Thread(target=target, args=(work,)) for work in works]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]


def backward_passes(root, **kwargs):
    """A function that runs `root.backward(**kwargs)` PASSES times."""

    def work():
        for _ in range(PASSES):
            root.backward(**kwargs)

    return work


def test_value_graph_shared_by_two_threads(frequent_switches):
    x = Value(1.0)
    # Inner nodes shared by several paths: d out/dx = 20 * (2 * 3 + 2) = 160.
    y = x * 2
    out = Value.sum([term for _ in range(20) for term in (y * 3, y, x * 0.0, y.relu() * 0.0)])

    run_in_threads(backward_passes(out), backward_passes(out))
    assert x.grad == 2 * PASSES * 160.0
    # The inner nodes hold one pass's gradient, not a mixture of two.
    assert y.grad == 80.0


def test_value_graphs_sharing_a_subgraph(frequent_switches):
    x = Value(1.0)
    shared = Value.sum([(x * k).tanh() for k in range(1, 30)]) * 2
    roots = [Value.sum([shared * k for k in range(10)]) + x, shared * -1 + x * 2]
    expected = []
    for root in roots:
        root.backward()
        expected.append(x.grad)
        x.grad = 0.0

    run_in_threads(*(backward_passes(root) for root in roots))
    assert x.grad == pytest.approx(PASSES * sum(expected), rel=1e-12)


def test_tensor_graph_shared_by_two_threads(frequent_switches):
    tg = pytest.importorskip("tensorgrad")
    x = tg.tensor([1.0], requires_grad=True)
    z = x * 2 + x
    y = sum((z * k for k in range(1, 6)), start=x).sum()  # dy/dx = 1 + 3 * (1 + ... + 5) = 46

    run_in_threads(backward_passes(y, retain_graph=True), backward_passes(y, retain_graph=True))
    assert x.grad.tolist() == [2 * PASSES * 46.0]
