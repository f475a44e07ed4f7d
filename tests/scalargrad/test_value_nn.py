"""scalargrad.nn: micrograd's Module, Neuron, Layer and MLP (tutorial chapter 5)."""

import gc
import random
import weakref

import numpy as np
import pytest

from scalargrad import Value
from scalargrad.engine import topological_order
from scalargrad.nn import MLP, Layer, Module, Neuron


def test_mlp_shapes_and_parameter_count():
    model = MLP(2, [16, 16, 1], seed=0)
    assert len(model.parameters()) == (2 * 16 + 16) + (16 * 16 + 16) + (16 + 1)
    out = model([0.5, -1.0])
    assert isinstance(out, Value)
    outs = MLP(3, [4, 2], seed=0)([1.0, 2.0, 3.0])
    assert isinstance(outs, list) and len(outs) == 2
    assert all(isinstance(o, Value) for o in outs)


def test_hidden_layers_relu_last_layer_linear():
    model = MLP(2, [3, 3, 2], seed=0)
    assert [[n.nonlin for n in layer.neurons] for layer in model.layers] == [
        [True] * 3,
        [True] * 3,
        [False] * 2,
    ]


def test_one_neuron_hidden_layer_works():
    model = MLP(2, [16, 1, 1], seed=1)
    out = model([0.3, -0.2])
    assert isinstance(out, Value)
    out.backward()
    assert any(p.grad != 0.0 for p in model.layers[2].parameters())
    # a one-neuron layer hands on a bare Value, which the next layer takes as one input
    hidden = model.layers[1]([0.0] * 16)
    assert isinstance(hidden, Value)


def test_parameters_in_micrograds_order():
    model = MLP(2, [3, 2], seed=0)
    expected = [p for layer in model.layers for n in layer.neurons for p in [*n.w, n.b]]
    assert all(a is b for a, b in zip(model.parameters(), expected, strict=True))
    neuron = model.layers[0].neurons[0]
    assert neuron.parameters()[-1] is neuron.b


def test_seeded_initialisation_is_reproducible_and_leaves_global_random_alone():
    random.seed(123)
    before = random.random()
    random.seed(123)
    a = [p.data for p in MLP(2, [4, 1], seed=7).parameters()]
    after = random.random()
    b = [p.data for p in MLP(2, [4, 1], seed=7).parameters()]
    c = [p.data for p in MLP(2, [4, 1], seed=8).parameters()]
    assert before == after
    assert a == b
    assert a != c


def test_initialisation_like_micrograd():
    model = MLP(4, [32, 1], seed=3)
    for layer in model.layers:
        for n in layer.neurons:
            assert n.b.data == 0.0
            assert all(-1.0 <= w.data <= 1.0 for w in n.w)
    weights = [w.data for n in model.layers[0].neurons for w in n.w]
    assert min(weights) < -0.5 and max(weights) > 0.5


def test_neuron_output():
    n = Neuron(2, rng=random.Random(0))
    n.w[0].data, n.w[1].data, n.b.data = 2.0, -1.0, 0.5
    assert n([1.0, 3.0]).data == 0.0  # relu(2 - 3 + 0.5)
    assert n([3.0, 1.0]).data == 5.5
    linear = Neuron(2, nonlin=False)
    linear.w[0].data, linear.w[1].data = 2.0, -1.0
    assert linear([1.0, 3.0]).data == -1.0
    with pytest.raises(ValueError):
        n([1.0, 2.0, 3.0])  # micrograd would drop the third input silently


def test_inputs_may_be_values_and_get_gradients():
    x = [Value(0.5), Value(-1.5)]
    out = MLP(2, [4, 1], seed=2)(x)
    out.backward()
    assert any(v.grad != 0.0 for v in x)


def test_zero_grad():
    model = MLP(2, [4, 1], seed=0)
    model([1.0, 2.0]).backward()
    assert any(p.grad != 0.0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())
    assert Module().parameters() == []


def test_reprs_like_micrograd():
    assert repr(Neuron(3)) == "ReLUNeuron(3)"
    assert repr(Neuron(3, nonlin=False)) == "LinearNeuron(3)"
    assert repr(Layer(2, 2)) == "Layer of [ReLUNeuron(2), ReLUNeuron(2)]"
    assert (
        repr(MLP(2, [2, 1])) == "MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2)], Layer of [LinearNeuron(2)]]"
    )


def test_neuron_weighted_sum_is_one_node():
    n = Neuron(16, rng=random.Random(0))
    x = [Value(0.1 * i) for i in range(16)]
    out = n(x)
    weighted = out.parents[0]  # under the relu
    assert weighted.op == "dot"
    assert weighted.parents == (*n.w, *x, n.b)  # the weights, the inputs, the bias
    assert weighted.data == sum((w.data * xi.data for w, xi in zip(n.w, x)), n.b.data)
    assert len(topological_order(out)) == 16 + 16 + 1 + 2  # leaves, the dot and the relu


def test_forward_graph_is_freed_without_the_cycle_collector():
    model = MLP(2, [8, 8, 1], seed=0)
    gc.collect()
    gc.disable()
    try:
        loss = model([0.5, -0.5]) ** 2
        loss.backward()
        params = set(model.parameters())
        refs = [weakref.ref(n) for n in topological_order(loss) if n not in params]
        del loss
        assert all(r() is None for r in refs)
    finally:
        gc.enable()


def test_same_loss_and_gradients_as_micrograd():
    micrograd_nn = pytest.importorskip("micrograd.nn")
    from micrograd.engine import Value as MicrogradValue

    ours = MLP(2, [8, 8, 1], seed=0)
    theirs = micrograd_nn.MLP(2, [8, 8, 1])
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        q.data = p.data
    points = [[0.5, -1.0], [1.5, 0.25], [-0.75, 0.5]]
    labels = [1.0, -1.0, 1.0]
    loss = Value.sum([(1 - y * ours(x)).relu() for x, y in zip(points, labels)]) * (1 / 3)
    loss.backward()
    theirs_scores = [theirs(list(map(MicrogradValue, x))) for x in points]
    theirs_loss = sum((1 + -y * s).relu() for y, s in zip(labels, theirs_scores)) * (1 / 3)
    theirs_loss.backward()
    assert loss.data == pytest.approx(theirs_loss.data, rel=1e-12)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert p.grad == pytest.approx(q.grad, rel=1e-9, abs=1e-15)


def test_numpy_rows_and_single_numbers_are_inputs():

    model = MLP(2, [4, 1], seed=0)
    assert model(np.array([0.5, -1.0])).data == model([0.5, -1.0]).data
    single = MLP(1, [3, 1], seed=0)
    assert single(0.5).data == single([0.5]).data
