"""Double backward of the decompositions (qr, the lu family), grid_sample, normalize with p != 2
and einsum with a repeated letter: each gradient recorded with `create_graph=True` differentiates
again, checked by `tg.gradgradcheck` and against PyTorch's double backward in float64."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg


def _second(m, fn, arrays, seed=3):
    """The first gradients of sum(fn(*xs) * w), and the gradient of their weighted sum, in module m."""
    rng = np.random.default_rng(seed)
    leaves = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
    out = fn(m, *leaves)
    outs = out if isinstance(out, tuple) else (out,)
    total = sum((o * m.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs)
    firsts = m.autograd.grad(total, leaves, create_graph=True)
    inner = sum((g * m.tensor(rng.standard_normal(tuple(g.shape)))).sum() for g in firsts)
    return firsts, m.autograd.grad(inner, leaves, allow_unused=True)


def _compare(fn, arrays, torch_fn=None):
    torch = pytest.importorskip("torch")
    ours = _second(tg, fn, arrays)
    theirs = _second(torch, torch_fn or fn, arrays)
    for kind, a_list, b_list in zip(("first", "second"), ours, theirs, strict=True):
        for i, (a, b) in enumerate(zip(a_list, b_list, strict=True)):
            if b is None:
                assert a is None or not np.any(a.data), f"{kind} {i}"
                continue
            np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-9, atol=1e-10,
                                       err_msg=f"{kind} {i}")


def _joined(out):
    """One tensor of an op's outputs (gradgradcheck takes one)."""
    return tg.cat([o.reshape(-1) for o in out]) if isinstance(out, tuple) else out


def _check(fn, arrays, torch_fn=None):
    leaves = [tg.tensor(a, dtype=tg.float64, requires_grad=True) for a in arrays]
    assert tg.gradgradcheck(lambda *ts: _joined(fn(tg, *ts)), leaves)
    _compare(fn, arrays, torch_fn)


def _matrix(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# --- qr and the lu family ----------------------------------------------------------------------------


def _qr(mode):
    def fn(m, a):
        q, r = m.linalg.qr(a, mode=mode)
        return q, r
    return fn


def _lu_factor(m, a):
    return m.linalg.lu_factor(a).LU


def _lu(m, a):
    _, lower, upper = m.linalg.lu(a)
    return lower, upper


def _lu_solve(m, a, b):
    lu, pivots = m.linalg.lu_factor(a)
    return m.linalg.lu_solve(lu, pivots, b)


DECOMPOSITIONS = [
    ("qr tall", _qr("reduced"), [(4, 3)]),
    ("qr square batch", _qr("reduced"), [(2, 3, 3)]),
    ("qr wide", _qr("reduced"), [(3, 5)]),
    ("qr complete square", _qr("complete"), [(3, 3)]),
    ("qr complete wide", _qr("complete"), [(2, 4)]),
    ("lu_factor square", _lu_factor, [(2, 4, 4)]),
    ("lu_factor tall", _lu_factor, [(5, 3)]),
    ("lu_factor wide", _lu_factor, [(3, 5)]),
    ("lu", _lu, [(4, 4)]),
    ("lu_solve", _lu_solve, [(3, 3), (3, 2)]),
]


@pytest.mark.parametrize(("fn", "shapes"),
                         [c[1:] for c in DECOMPOSITIONS], ids=[c[0] for c in DECOMPOSITIONS])
def test_decompositions(fn, shapes):
    _check(fn, [_matrix(*shape, seed=i) for i, shape in enumerate(shapes)])


# --- einsum with a repeated letter, normalize with p != 2 ---------------------------------------------


EINSUMS = [("ii->i", [(3, 3)]), ("ii->", [(4, 4)]), ("bii->bi", [(2, 3, 3)]), ("iji->j", [(3, 2, 3)]),
           ("ii,ij->j", [(3, 3), (3, 2)]), ("ij,kk->ik", [(2, 3), (4, 4)]), ("iij,j->i", [(3, 3, 2), (2,)])]


@pytest.mark.parametrize(("equation", "shapes"), EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_repeated_letter(equation, shapes):
    # (squared: a single operand's einsum is linear, its gradient then constant)
    arrays = [_matrix(*shape, seed=i) for i, shape in enumerate(shapes)]
    _check(lambda m, *ts: m.einsum(equation, *ts) ** 2, arrays)


@pytest.mark.parametrize("p", [1.0, 1.5, 3.0, float("inf")])
@pytest.mark.parametrize("dim", [0, 1])
def test_normalize(p, dim):
    rng = np.random.default_rng(5)
    x = rng.uniform(0.3, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))  # away from 0 and from ties
    _check(lambda m, t: m.nn.functional.normalize(t, p=p, dim=dim), [x])


# --- grid_sample ---------------------------------------------------------------------------------------


def _away_from_pixels(grid, size, align_corners):
    """grid places nudged off pixel centres and half-pixels (the kinks of the blend and of 'nearest')."""
    pixel = (grid + 1) / 2 * (size - 1) if align_corners else ((grid + 1) * size - 1) / 2
    frac = pixel * 2 - np.floor(pixel * 2)
    return grid + np.where(np.abs(frac - 0.5) > 0.35, 0.3 / size, 0)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode, padding_mode, align_corners):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 2, 4, 5))
    grid = _away_from_pixels(rng.uniform(-1.3, 1.3, (2, 3, 3, 2)), 4.5, align_corners)

    def fn(m, x, grid):
        out = m.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding_mode,
                                          align_corners=align_corners)
        return out * out  # (grid_sample is linear in x: squared, its input gradient depends on x)
    _check(fn, [x, grid])


def test_grid_sample_3d():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 2, 3, 4, 3))
    grid = _away_from_pixels(rng.uniform(-1.1, 1.1, (1, 2, 2, 2, 3)), 3.5, False)
    _check(lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False) ** 2, [x, grid])
