"""Double backward of the elementwise ops (`graph_vjp` in tensorgrad.elementwise and tensorgrad.special):
float64 finite differences (`tg.gradgradcheck`), and PyTorch's second derivatives where installed."""

import numpy as np
import pytest

import tensorgrad as tg


def _torch():
    return pytest.importorskip("torch")


# name: (tensorgrad op, PyTorch op by name, input range away from kinks and poles)
UNARY = {
    "sin": (tg.sin, "sin", (-3, 3)),
    "cos": (tg.cos, "cos", (-3, 3)),
    "tan": (tg.tan, "tan", (-1.2, 1.2)),
    "sinh": (tg.sinh, "sinh", (-2, 2)),
    "cosh": (tg.cosh, "cosh", (-2, 2)),
    "asin": (tg.asin, "asin", (-0.9, 0.9)),
    "acos": (tg.acos, "acos", (-0.9, 0.9)),
    "atan": (tg.atan, "atan", (-3, 3)),
    "asinh": (tg.asinh, "asinh", (-3, 3)),
    "acosh": (tg.acosh, "acosh", (1.2, 3)),
    "atanh": (tg.atanh, "atanh", (-0.9, 0.9)),
    "log1p": (tg.log1p, "log1p", (-0.5, 2)),
    "expm1": (tg.expm1, "expm1", (-2, 2)),
    "log2": (tg.log2, "log2", (0.3, 3)),
    "log10": (tg.log10, "log10", (0.3, 3)),
    "exp2": (tg.exp2, "exp2", (-2, 2)),
    "rsqrt": (tg.rsqrt, "rsqrt", (0.3, 3)),
    "reciprocal": (tg.reciprocal, "reciprocal", (0.5, 2)),
    "square": (tg.square, "square", (-2, 2)),
    "erf": (tg.erf, "erf", (-2, 2)),
    "erfc": (tg.erfc, "erfc", (-2, 2)),
    "erfinv": (tg.erfinv, "erfinv", (-0.9, 0.9)),
    "sinc": (tg.sinc, "sinc", (0.2, 2)),
    "logit": (tg.logit, "logit", (0.1, 0.9)),
    "logit_eps": (lambda x: tg.logit(x, eps=0.2), lambda x: _torch().logit(x, eps=0.2), (0.05, 0.95)),
    "nan_to_num": (tg.nan_to_num, "nan_to_num", (-2, 2)),
    "i0": (tg.i0, "i0", (-3, 3)),
    "i0e": (tg.special.i0e, "special.i0e", (-3, 3)),
    "i1": (tg.special.i1, "special.i1", (-3, 3)),
    "i1e": (tg.special.i1e, "special.i1e", (-3, 3)),
    "lgamma": (tg.lgamma, "lgamma", (0.5, 4)),
    "digamma": (tg.digamma, "digamma", (0.5, 4)),
    "polygamma2": (lambda x: tg.polygamma(2, x), lambda x: _torch().polygamma(2, x), (0.5, 4)),
    "mvlgamma": (lambda x: tg.mvlgamma(x, 3), lambda x: _torch().mvlgamma(x, 3), (1.5, 4)),
    "erfcx": (tg.special.erfcx, "special.erfcx", (-2, 2)),
    "ndtr": (tg.special.ndtr, "special.ndtr", (-2, 2)),
    "ndtri": (tg.special.ndtri, "special.ndtri", (0.1, 0.9)),
    "log_ndtr": (tg.special.log_ndtr, "special.log_ndtr", (-3, 2)),
    "entr": (tg.special.entr, "special.entr", (0.2, 2)),
    "frexp": (lambda x: tg.frexp(x)[0], lambda x: _torch().frexp(x)[0], (-3, 3)),
}

# name: (tensorgrad op, PyTorch op by name, range of a, range of b)
BINARY = {
    "atan2": (tg.atan2, "atan2", (-2, 2), (-2, 2)),
    "hypot": (tg.hypot, "hypot", (-2, 2), (-2, 2)),
    "logaddexp": (tg.logaddexp, "logaddexp", (-2, 2), (-2, 2)),
    "logaddexp2": (tg.logaddexp2, "logaddexp2", (-2, 2), (-2, 2)),
    "maximum": (tg.maximum, "maximum", (-2, 2), (-2, 2)),
    "minimum": (tg.minimum, "minimum", (-2, 2), (-2, 2)),
    "fmax": (tg.fmax, "fmax", (-2, 2), (-2, 2)),
    "fmin": (tg.fmin, "fmin", (-2, 2), (-2, 2)),
    "copysign": (tg.copysign, "copysign", (-2, 2), (-2, 2)),
    "xlogy": (tg.xlogy, "xlogy", (-2, 2), (0.5, 2)),
    "xlog1py": (tg.special.xlog1py, "special.xlog1py", (-2, 2), (-0.5, 2)),
    "fmod": (tg.fmod, "fmod", (-3, 3), (0.7, 1.3)),
    "remainder": (tg.remainder, "remainder", (-3, 3), (0.7, 1.3)),
    "ldexp": (tg.ldexp, "ldexp", (-2, 2), (-2, 2)),
    "nextafter": (tg.nextafter, "nextafter", (-2, 2), (-2, 2)),
    "float_power": (tg.float_power, "float_power", (0.5, 2), (-2, 2)),
    "true_divide": (tg.true_divide, "true_divide", (-2, 2), (0.5, 2)),
    "lerp": (lambda a, b: tg.lerp(a, b, 0.3), lambda a, b: _torch().lerp(a, b, 0.3), (-2, 2), (-2, 2)),
    "clamp": (lambda a, b: tg.clamp(a, min=b), lambda a, b: _torch().clamp(a, min=b), (-2, 2), (-2, 2)),
}

# ops whose gradient is 0 (or 1, frac) everywhere: a second pass through them must work
STEPS = {
    "sign": (tg.sign, "sign"),
    "floor": (tg.floor, "floor"),
    "ceil": (tg.ceil, "ceil"),
    "trunc": (tg.trunc, "trunc"),
    "round": (tg.round, "round"),
    "round_decimals": (lambda x: tg.round(x, decimals=1), lambda x: _torch().round(x, decimals=1)),
    "frac": (tg.frac, "frac"),
    "div_floor": (lambda x: tg.div(x, 0.7, rounding_mode="floor"),
                  lambda x: _torch().div(x, 0.7, rounding_mode="floor")),
}

SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3))]


def _uniform(rng, bounds, shape):
    return rng.uniform(*bounds, size=shape)


def _torch_op(op):
    torch = pytest.importorskip("torch")
    if callable(op):
        return op
    module = torch
    for part in op.split("."):
        module = getattr(module, part)
    return module


def _values(m, ts, xs):
    return [np.zeros(x.shape) if t is None else np.asarray(t.data if m is tg else t.detach().numpy())
            for x, t in zip(xs, ts, strict=True)]


def second(m, f, xs, w, v):
    """The gradients g_i of sum(w * f(xs)) recorded as a graph (with `m`, tg or torch), then the
    gradient of sum(v_i * g_i) with respect to xs (zeros where unused): both lists of arrays."""
    gs = m.autograd.grad((f(*xs) * w).sum(), xs, create_graph=True, allow_unused=True)
    total = sum((g * vi).sum() for g, vi in zip(gs, v, strict=True) if g is not None)
    # a gradient linear in w only (nan_to_num's, frac's) has no graph back to xs: its derivative is 0
    hs = m.autograd.grad(total, xs, allow_unused=True) if total.requires_grad else [None] * len(xs)
    return _values(m, gs, xs) + _values(m, hs, xs)


def _compare(f_tg, f_torch, arrays, seed=0, rtol=1e-10):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    with tg.no_grad():
        shape = f_tg(*[tg.tensor(a) for a in arrays]).shape
    w = rng.standard_normal(shape)
    v = [rng.standard_normal(np.shape(a)) for a in arrays]
    got = second(tg, f_tg, [tg.tensor(a, requires_grad=True) for a in arrays], tg.tensor(w),
                 [tg.tensor(x) for x in v])
    want = second(torch, f_torch, [torch.tensor(a, requires_grad=True) for a in arrays], torch.tensor(w),
                  [torch.tensor(x) for x in v])
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name", UNARY)
def test_unary_gradgradcheck(name):
    op, _, bounds = UNARY[name]
    x = tg.tensor(_uniform(np.random.default_rng(1), bounds, (2, 3)), requires_grad=True)
    assert tg.gradgradcheck(op, [x])


@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch(name):
    op, torch_op, bounds = UNARY[name]
    # PyTorch's trigamma (lgamma's second derivative) stops its series early, about 5e-10 off
    rtol = 1e-8 if name in ("lgamma", "mvlgamma") else 1e-10
    _compare(op, _torch_op(torch_op), [_uniform(np.random.default_rng(2), bounds, (2, 3))], rtol=rtol)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_gradgradcheck(name, shapes):
    op, _, bounds_a, bounds_b = BINARY[name]
    rng = np.random.default_rng(3)
    a = tg.tensor(_uniform(rng, bounds_a, shapes[0]), requires_grad=True)
    b = tg.tensor(_uniform(rng, bounds_b, shapes[1]), requires_grad=True)
    assert tg.gradgradcheck(op, [a, b])


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_torch(name, shapes):
    op, torch_op, bounds_a, bounds_b = BINARY[name]
    rng = np.random.default_rng(4)
    arrays = [_uniform(rng, bounds_a, shapes[0]), _uniform(rng, bounds_b, shapes[1])]
    _compare(op, _torch_op(torch_op), arrays)


@pytest.mark.parametrize("name", STEPS)
def test_steps_differentiate_twice(name):
    op, torch_op = STEPS[name]
    x = _uniform(np.random.default_rng(5), (-3, 3), (2, 3))
    _compare(lambda t: op(t) * t * t, lambda t: _torch_op(torch_op)(t) * t * t, [x])


def test_maximum_ties_and_clamp_at_bounds_match_torch():
    a = np.array([0.0, 1.0, -1.0, 2.0])
    b = np.array([0.0, 0.5, -1.0, 3.0])
    _compare(lambda x, y: tg.maximum(x, y) ** 2, lambda x, y: _torch().maximum(x, y) ** 2, [a, b])
    _compare(lambda x, y: tg.minimum(x, y) ** 2, lambda x, y: _torch().minimum(x, y) ** 2, [a, b])
    _compare(lambda x, lo, hi: tg.clamp(x, lo, hi) ** 3,
             lambda x, lo, hi: _torch().clamp(x, lo, hi) ** 3,
             [a, np.array([0.0, 0.7, -2.0, 1.0]), np.array([1.0, 0.6, -1.0, 4.0])])


def test_clamp_with_numbers_and_both_bounds():
    x = tg.tensor(_uniform(np.random.default_rng(6), (-2, 2), (3, 4)), requires_grad=True)
    assert tg.gradgradcheck(lambda t: tg.clamp(t * t, -1.0, 1.5) * t, [x])
    _compare(lambda t: tg.clamp(t * t, max=1.5) * t, lambda t: _torch().clamp(t * t, max=1.5) * t,
             [x.data])


def test_lerp_with_a_weight_tensor():
    rng = np.random.default_rng(7)
    arrays = [_uniform(rng, (-2, 2), (3, 4)), _uniform(rng, (-2, 2), (4,)), _uniform(rng, (0, 1), (3, 1))]
    assert tg.gradgradcheck(tg.lerp, [tg.tensor(a, requires_grad=True) for a in arrays])
    _compare(tg.lerp, _torch_op("lerp"), arrays)


def test_second_arguments_of_zeta_and_incomplete_gamma():
    rng = np.random.default_rng(8)
    a = tg.tensor(_uniform(rng, (1.5, 3), (2, 3)))
    x = tg.tensor(_uniform(rng, (0.5, 3), (2, 3)), requires_grad=True)
    for op, name in ((tg.special.zeta, "special.zeta"), (tg.special.gammainc, "special.gammainc"),
                     (tg.special.gammaincc, "special.gammaincc")):
        assert tg.gradgradcheck(lambda t, op=op: op(a, t), [x])
        torch_op = _torch_op(name)
        torch = pytest.importorskip("torch")
        _compare(lambda t, op=op: op(a, t), lambda t, f=torch_op: f(torch.tensor(a.data), t), [x.data])


def test_dropout_second_derivative_is_its_mask_squared():
    tg.manual_seed(0)
    x = tg.tensor(_uniform(np.random.default_rng(9), (0.5, 2), (4, 5)), requires_grad=True)
    out = tg.nn.functional.dropout(x, p=0.5) ** 2
    (g,) = tg.autograd.grad(out.sum(), x, create_graph=True)
    (h,) = tg.autograd.grad(g.sum(), x)
    scale = (out.data ** 0.5) / x.data
    np.testing.assert_allclose(h.data, 2 * scale * scale, rtol=1e-12)
