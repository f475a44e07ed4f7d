"""Second derivatives (graph VJPs) of convolution, pooling, padding, resampling and the norms.

Each op is checked by `gradgradcheck` (finite differences in float64) and against PyTorch's
double backward: the gradient of <d <f(xs), v> / d xs, w> with respect to xs and to v. Then a
WGAN-GP gradient penalty through a small CNN critic, against PyTorch's.
"""

import numpy as np
import pytest
from second_derivatives import second_derivatives

import tensorgrad as tg

torch = pytest.importorskip("torch")



def _check(f, shapes, check=True, seed=0, reference=None):
    """gradgradcheck `f(tg)` on random float64 inputs of `shapes`, and its second derivatives against
    `f(torch)`'s (or `reference`'s, a torch function)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]

    def tensors(m):
        return [m.tensor(a, requires_grad=True) for a in arrays]

    xs = tensors(tg)
    if check:
        assert tg.gradgradcheck(f(tg), xs)
    ours = second_derivatives(tg, f(tg), xs)
    theirs = second_derivatives(torch, reference or f(torch), tensors(torch))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def _functional(name, **kw):
    return lambda m: lambda *xs: getattr(m.nn.functional, name)(*xs, **kw)


CONVOLUTIONS = {
    "conv2d stride padding": ("conv2d", dict(stride=2, padding=1), [(2, 4, 7, 6), (6, 4, 3, 3), (6,)]),
    "conv2d groups dilation": ("conv2d", dict(stride=(1, 2), padding=(2, 0), dilation=2, groups=2),
                               [(2, 4, 8, 9), (6, 2, 3, 2), (6,)]),
    "conv2d same unbatched": ("conv2d", dict(padding="same", dilation=2), [(4, 7, 6), (3, 4, 2, 3)]),
    "conv1d": ("conv1d", dict(stride=3, padding=1, groups=2), [(2, 4, 11), (4, 2, 3), (4,)]),
    "conv3d": ("conv3d", dict(stride=2, padding=1), [(1, 2, 5, 5, 4), (3, 2, 2, 3, 2), (3,)]),
    "conv_transpose2d": ("conv_transpose2d", dict(stride=2, padding=1, output_padding=1, groups=2),
                         [(2, 4, 4, 5), (4, 3, 3, 3), (6,)]),
    "conv_transpose1d dilation": ("conv_transpose1d", dict(stride=2, dilation=3, output_padding=2),
                                  [(2, 3, 5), (3, 2, 3), (2,)]),
    "conv_transpose3d unbatched": ("conv_transpose3d", dict(stride=2, padding=1),
                                   [(2, 3, 3, 2), (2, 3, 2, 3, 2)]),
}


@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_convolutions(name):
    op, kw, shapes = CONVOLUTIONS[name]
    _check(_functional(op, **kw), shapes, check=name in ("conv2d groups dilation", "conv_transpose2d"))


LINEAR = {
    "max_pool2d": (_functional("max_pool2d", kernel_size=3, stride=2, padding=1, ceil_mode=True),
                   (2, 3, 7, 6)),
    "max_pool1d dilation": (_functional("max_pool1d", kernel_size=2, dilation=2), (2, 3, 9)),
    "max_pool3d": (_functional("max_pool3d", kernel_size=2), (1, 2, 4, 4, 5)),
    "avg_pool2d": (_functional("avg_pool2d", kernel_size=3, stride=2, padding=1, count_include_pad=False,
                               ceil_mode=True), (2, 3, 7, 6)),
    "avg_pool3d": (_functional("avg_pool3d", kernel_size=2, divisor_override=3), (1, 2, 4, 4, 5)),
    "adaptive_avg_pool2d": (_functional("adaptive_avg_pool2d", output_size=(3, 2)), (2, 3, 7, 5)),
    "adaptive_max_pool2d": (_functional("adaptive_max_pool2d", output_size=(3, 2)), (2, 3, 7, 5)),
    "pad constant": (_functional("pad", pad=(1, 2, -1, 1), value=0.5), (2, 3, 4, 5)),
    "pad reflect": (_functional("pad", pad=(2, 1, 1, 3), mode="reflect"), (2, 3, 4, 5)),
    "pad replicate": (_functional("pad", pad=(2, 1, 1, 3), mode="replicate"), (2, 3, 4, 5)),
    "pad circular": (_functional("pad", pad=(2, 1, 1, 3), mode="circular"), (2, 3, 4, 5)),
    "interpolate nearest": (_functional("interpolate", scale_factor=(1.5, 2.5)), (2, 3, 4, 3)),
    "interpolate bilinear": (_functional("interpolate", size=(5, 7), mode="bilinear"), (2, 3, 4, 3)),
    "unfold": (_functional("unfold", kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=2),
               (2, 3, 6, 7)),
    "fold": (_functional("fold", output_size=(5, 6), kernel_size=(2, 3), padding=1, stride=(2, 1)),
             (2, 12, 18)),
}


@pytest.mark.parametrize("name", LINEAR)
def test_linear_ops(name):
    """Pooling, padding and resampling are linear in x (max pooling, given its winners): their
    gradient of a gradient is the op itself applied to the direction."""
    f, shape = LINEAR[name]
    _check(lambda m: lambda x: f(m)(x) ** 2, [shape])  # squared: a second derivative through the op


def test_max_unpool():
    winners = np.random.default_rng(2).standard_normal((2, 3, 4, 6))

    def f(m):
        _, indices = m.nn.functional.max_pool2d(m.tensor(winners), 2, return_indices=True)
        return lambda x: m.nn.functional.max_unpool2d(x, indices, 2) ** 2
    _check(f, [(2, 3, 2, 3)])


def _batch_norm_eval(m):
    mean, var = m.tensor([0.1, -0.2, 0.3], dtype=m.float64), m.tensor([1.5, 0.5, 2.0], dtype=m.float64)
    return lambda x, w, b: m.nn.functional.batch_norm(x, mean, var, w, b)


NORMS = {
    "layer_norm": (lambda m: lambda x, w, b: m.nn.functional.layer_norm(x, (3, 4), w, b),
                   [(2, 5, 3, 4), (3, 4), (3, 4)]),
    "layer_norm whole, no weight": (_functional("layer_norm", normalized_shape=(3, 4)), [(3, 4)]),
    "group_norm": (lambda m: lambda x, w, b: m.nn.functional.group_norm(x, 2, w, b),
                   [(2, 4, 3, 2), (4,), (4,)]),
    "batch_norm training": (lambda m: lambda x, w, b: m.nn.functional.batch_norm(x, None, None, w, b, True),
                            [(4, 3, 2, 2), (3,), (3,)]),
    "batch_norm eval": (_batch_norm_eval, [(4, 3, 5), (3,), (3,)]),
}


@pytest.mark.parametrize("name", NORMS)
def test_norms(name):
    f, shapes = NORMS[name]
    _check(lambda m: lambda *xs: f(m)(*xs) ** 2, shapes)


def test_gradient_penalty_through_cnn_critic():
    """WGAN-GP: d/dθ mean((|dD/dx| - 1)^2) through conv, group norm, leaky relu, pooling, linear."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) * 0.5 for s in [(3, 2, 8, 8), (4, 2, 3, 3), (4,), (4,), (4,),
                                                      (5, 4, 3, 3), (5,), (1, 20)]]

    def run(m):
        x, w1, b1, gw, gb, w2, b2, lw = [m.tensor(a, requires_grad=True) for a in arrays]
        F = m.nn.functional
        h = F.leaky_relu(F.group_norm(F.conv2d(x, w1, b1, padding=1), 2, gw, gb), 0.2)
        h = F.avg_pool2d(F.conv_transpose2d(F.max_pool2d(h, 2), w2.transpose(0, 1), b2, stride=2), 2)
        score = F.adaptive_avg_pool2d(h, 2).reshape(3, 20) @ lw.transpose(0, 1)
        (g,) = m.autograd.grad(score.sum(), x, create_graph=True)
        penalty = ((g.reshape(3, -1).norm(dim=1) - 1) ** 2).mean()
        params = [w1, b1, gw, gb, w2, b2, lw]
        grads = m.autograd.grad(penalty, params, allow_unused=True, materialize_grads=True)
        return [t.detach().numpy() if m is torch else t.data for t in grads]

    for a, b in zip(run(tg), run(torch), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


OTHERS = {
    "normalize": (_functional("normalize", dim=1), [(3, 4, 2)]),
    "cosine_similarity": (_functional("cosine_similarity", dim=-1), [(3, 4), (3, 4)]),
    "cosine_similarity broadcast": (_functional("cosine_similarity", dim=1), [(1, 5, 2), (3, 5, 2)]),
}


@pytest.mark.parametrize("name", OTHERS)
def test_others(name):
    f, shapes = OTHERS[name]
    _check(lambda m: lambda *xs: f(m)(*xs) ** 2, shapes)


_BAGS = [[1, 2, 4], [], [5, 4, 3], [2, 0]]


def _torch_bags(reduce):
    """embedding_bag composed of torch ops (PyTorch's own has no double backward)."""
    def bags(w):
        return torch.stack([reduce(w[bag]) if bag else w.new_zeros(w.shape[1]) for bag in _BAGS])
    return bags


@pytest.mark.parametrize("mode, reduce", [("sum", lambda rows: rows.sum(0)),
                                          ("mean", lambda rows: rows.mean(0)),
                                          ("max", lambda rows: rows.max(0).values)])
def test_embedding_bag(mode, reduce):
    index, offsets = tg.tensor(sum(_BAGS, [])), tg.tensor([0, 3, 3, 6])

    def f(m):
        return lambda w: tg.nn.functional.embedding_bag(index, w, offsets, mode=mode) ** 2
    _check(f, [(6, 3)], reference=lambda w: _torch_bags(reduce)(w) ** 2)
