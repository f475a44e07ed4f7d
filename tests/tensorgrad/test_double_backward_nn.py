"""Second derivatives (graph VJPs) of the nn ops: activations, losses, linear layers.

Each op is checked by `gradgradcheck` (finite differences in float64) and against PyTorch's
double backward: the gradient of <grad f(x) . w> with respect to every input.
"""

import numpy as np
import pytest
from second_derivatives import second_derivatives

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.nn import activation as A

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _arrays(shapes, seed=0, away=None):
    rng = np.random.default_rng(seed)
    out = []
    for shape in shapes:
        a = rng.standard_normal(shape) * 2
        if away is not None:  # move points off the kinks
            for kink in away:
                a = np.where(np.abs(a - kink) < 0.1, a + 0.3, a)
        out.append(a)
    return out



def _check(tg_f, torch_f, arrays, tol=1e-10, numeric=True):
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    if numeric:
        assert tg.gradgradcheck(tg_f, xs)
    ours = second_derivatives(tg, tg_f, xs)
    theirs = second_derivatives(torch, torch_f, [torch.tensor(a, requires_grad=True) for a in arrays])
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


ACTIVATIONS = [
    ("gelu", lambda m: (A.gelu if m is tg else TF.gelu), ()),
    ("gelu_tanh", lambda m: lambda x: (A.gelu if m is tg else TF.gelu)(x, approximate="tanh"), ()),
    ("silu", lambda m: A.silu if m is tg else TF.silu, ()),
    ("mish", lambda m: A.mish if m is tg else TF.mish, ()),
    ("softplus", lambda m: lambda x: (A.softplus if m is tg else TF.softplus)(x, beta=2.0, threshold=3.0),
     (1.5,)),
    ("logsigmoid", lambda m: A.logsigmoid if m is tg else TF.logsigmoid, ()),
    ("softsign", lambda m: A.softsign if m is tg else TF.softsign, (0.0,)),
    ("elu", lambda m: lambda x: (A.elu if m is tg else TF.elu)(x, alpha=0.7), (0.0,)),
    ("selu", lambda m: A.selu if m is tg else TF.selu, (0.0,)),
    ("celu", lambda m: lambda x: (A.celu if m is tg else TF.celu)(x, alpha=0.5), (0.0,)),  # 1 / alpha exact
    ("leaky_relu", lambda m: lambda x: (A.leaky_relu if m is tg else TF.leaky_relu)(x, 0.2), (0.0,)),
    ("hardtanh", lambda m: lambda x: (A.hardtanh if m is tg else TF.hardtanh)(x, -1.5, 2.0), (-1.5, 2.0)),
    ("relu6", lambda m: A.relu6 if m is tg else TF.relu6, (0.0, 6.0)),
    # (torch has no double backward for hardsigmoid: its composition instead)
    ("hardsigmoid", lambda m: A.hardsigmoid if m is tg else lambda x: TF.relu6(x + 3) / 6, (-3.0, 3.0)),
    ("hardswish", lambda m: A.hardswish if m is tg else TF.hardswish, (-3.0, 3.0)),
    ("threshold", lambda m: lambda x: (A.threshold if m is tg else TF.threshold)(x, 0.5, -2.0), (0.5,)),
    ("hardshrink", lambda m: A.hardshrink if m is tg else TF.hardshrink, (-0.5, 0.5)),
    ("softshrink", lambda m: A.softshrink if m is tg else TF.softshrink, (-0.5, 0.5)),
    ("tanhshrink", lambda m: A.tanhshrink if m is tg else TF.tanhshrink, ()),
    ("glu", lambda m: A.glu if m is tg else TF.glu, ()),
    ("rrelu_eval", lambda m: A.rrelu if m is tg else TF.rrelu, (0.0,)),
]


@pytest.mark.parametrize(("name", "make", "kinks"), ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation(name, make, kinks):
    (a,) = _arrays([(3, 4)], away=kinks)
    _check(make(tg), make(torch), [a])


def test_activation_composed_in_mlp():
    """A gradient penalty through an MLP: the gradient of |dD/dx|^2 with respect to D's weights."""
    w1, b1, w2, x = _arrays([(5, 3), (5,), (1, 5), (4, 3)], seed=3)

    def penalty(m, act):
        params = [m.tensor(a, requires_grad=True) for a in (w1, b1, w2)]
        xs = m.tensor(x, requires_grad=True)
        lin = F.linear if m is tg else TF.linear
        out = lin(act(lin(xs, params[0], params[1])), params[2])
        (g,) = m.autograd.grad(out.sum(), xs, create_graph=True)
        grads = m.autograd.grad((g * g).sum(), params, allow_unused=True, materialize_grads=True)
        return [t.detach().numpy() if m is torch else t.data for t in grads]

    for act_tg, act_torch in [(A.gelu, TF.gelu), (A.silu, TF.silu), (A.leaky_relu, TF.leaky_relu)]:
        for a, b in zip(penalty(tg, act_tg), penalty(torch, act_torch), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


# --- losses --------------------------------------------------------------------------------------

LABELS = np.array([0, 2, 1, 2])
CLASS_WEIGHT = np.array([0.5, 2.0, 1.5])


def _labels(m):
    return m.tensor(LABELS)


def _loss(name):
    return lambda m: getattr(F if m is tg else TF, name)


def _with(name, **options):
    return lambda m: lambda *xs: _loss(name)(m)(*xs, **options)


def _classes(name, **options):
    """A class-index loss of the logits alone (the labels are fixed)."""
    def make(m):
        def f(x):
            if "weight" in options:
                return _loss(name)(m)(x, _labels(m), **{**options, "weight": m.tensor(options["weight"])})
            return _loss(name)(m)(x, _labels(m), **options)
        return f
    return make


def _probabilities(m):
    return lambda x, t: (F if m is tg else TF).cross_entropy(x, (F if m is tg else TF).softmax(t, 1))


def _bce(m, **options):
    loss = (F if m is tg else TF).binary_cross_entropy
    return lambda x, t: loss(x.sigmoid(), t.sigmoid(), **options)


LOSSES = [  # name, make(m) -> f(*inputs), input shapes
    ("cross_entropy_mean", _classes("cross_entropy"), [(4, 3)]),
    ("cross_entropy_sum", _classes("cross_entropy", reduction="sum"), [(4, 3)]),
    ("cross_entropy_none", _classes("cross_entropy", reduction="none"), [(4, 3)]),
    ("nll_loss_mean", _classes("nll_loss"), [(4, 3)]),
    ("nll_loss_weight_ignore", _classes("nll_loss", weight=CLASS_WEIGHT, ignore_index=1), [(4, 3)]),
    ("nll_loss_none", _classes("nll_loss", reduction="none", weight=CLASS_WEIGHT), [(4, 3)]),
    ("mse_loss", _loss("mse_loss"), [(4, 3), (4, 3)]),
    ("l1_loss", _loss("l1_loss"), [(4, 3), (4, 3)]),
    ("smooth_l1_loss", _with("smooth_l1_loss", beta=1.5), [(4, 3), (4, 3)]),
    ("smooth_l1_beta0", _with("smooth_l1_loss", beta=0.0, reduction="sum"), [(4, 3), (4, 3)]),
    ("huber_loss", _with("huber_loss", delta=0.8, reduction="none"), [(4, 3), (4, 3)]),
    ("bce", lambda m: _bce(m), [(4, 3), (4, 3)]),
    ("bce_weight", lambda m: _bce(m, weight=m.tensor(np.linspace(0.5, 2, 3)), reduction="sum"),
     [(4, 3), (4, 3)]),
    ("bce_with_logits", _loss("binary_cross_entropy_with_logits"), [(4, 3), (4, 3)]),
    ("bce_with_logits_pos_weight", lambda m: lambda x, t: _loss("binary_cross_entropy_with_logits")(m)(
        x, t, weight=m.tensor(np.linspace(0.5, 2, 3)), pos_weight=m.tensor([1.5, 0.5, 3.0])),
     [(4, 3), (4, 3)]),
    ("kl_div", lambda m: lambda x, t: (F if m is tg else TF).kl_div(x, t.exp(), reduction="batchmean"),
     [(4, 3), (4, 3)]),
    # through log_softmax (tensorgrad/reduce.py)
    ("cross_entropy_weight", _classes("cross_entropy", weight=CLASS_WEIGHT), [(4, 3)]),
    ("cross_entropy_ignore", _classes("cross_entropy", ignore_index=2), [(4, 3)]),
    ("cross_entropy_smoothing", _classes("cross_entropy", label_smoothing=0.2), [(4, 3)]),
    ("cross_entropy_probabilities", _probabilities, [(4, 3), (4, 3)]),
]


@pytest.mark.parametrize(("name", "make", "shapes"), LOSSES, ids=[c[0] for c in LOSSES])
def test_loss(name, make, shapes):
    _check(make(tg), make(torch), _arrays(shapes, seed=2, away=(0.0,)))


# --- linear layers and lookups ---------------------------------------------------------------------

def _einsum(equation):
    return lambda m: lambda *xs: m.einsum(equation, *xs)


EMBED_INDEX = np.array([[0, 3, 1], [3, 3, 2]])


def _embedding(**options):
    lin = {tg: F, torch: TF}
    return lambda m: lambda w: lin[m].embedding(m.tensor(EMBED_INDEX), w, **options) ** 2


LAYERS = [
    ("linear", lambda m: (F if m is tg else TF).linear, [(2, 4, 3), (5, 3)]),
    ("linear_bias", lambda m: (F if m is tg else TF).linear, [(4, 3), (5, 3), (5,)]),
    ("linear_vector", lambda m: (F if m is tg else TF).linear, [(3,), (5, 3), (5,)]),
    ("einsum_matmul", _einsum("bij,jk->bik"), [(2, 3, 4), (4, 5)]),
    ("einsum_three", _einsum("i,oij,j->o"), [(3,), (2, 3, 4), (4,)]),
    ("einsum_summed_letter", _einsum("ij,k->i"), [(3, 4), (2,)]),
    ("addmm_beta0", lambda m: lambda c, a, b: m.addmm(c, a, b, beta=0, alpha=2.0), [(3, 5), (3, 4), (4, 5)]),
    ("embedding", _embedding(), [(4, 2)]),
    ("embedding_padding_freq", _embedding(padding_idx=1, scale_grad_by_freq=True), [(4, 2)]),
]


@pytest.mark.parametrize(("name", "make", "shapes"), LAYERS, ids=[c[0] for c in LAYERS])
def test_layer(name, make, shapes):
    # padding_idx and scale_grad_by_freq change the gradient away from the derivative, so finite
    # differences can't check the second one: PyTorch's values only.
    _check(make(tg), make(torch), _arrays(shapes, seed=4), numeric=name != "embedding_padding_freq")
