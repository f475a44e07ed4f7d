"""More of PyTorch's math, against PyTorch: the rest of the BLAS family (addmv, addr, baddbmm,
addbmm and their in-place forms, addmm_, inner, ger, vdot, chain_matmul), number-theory and
floating-point bit ops (gcd, lcm, ldexp, frexp, nextafter), hardshrink, prelu, dist, renorm,
diag_embed, diagflat, sum_to_size, cov, corrcoef, and the small queries and views (is_signed,
is_nonzero, itemsize, H, mH, adjoint, conj, ...).

Every differentiable op runs from one table three ways: against PyTorch (values, dtype, shape
and every input's gradient, in float32 and float64), against finite differences in float64, and
on ForeignArrays (a stand-in for CuPy's arrays) to show it creates no plain numpy array.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from foreign_array import is_foreign
from op_table import sample
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _name(dtype) -> str:
    """A dtype's name, the same for numpy's and torch's (`float32`, `int64`, `bool`)."""
    return str(dtype).removeprefix("torch.")


def assert_like_torch(out, expected, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """out (a tg.Tensor) has the values, dtype and shape of expected (a torch.Tensor)."""
    assert _name(out.dtype) == _name(expected.dtype), (out.dtype, expected.dtype)
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=rtol, atol=atol)


def _quietly(fn):
    """fn with chain_matmul's deprecation warning (PyTorch's and ours) silenced."""
    def quiet(m, *xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(m, *xs)
    return quiet


# --- one table of differentiable cases: fn(m, *inputs) with m = tensorgrad or torch -------------------
# (name, input shapes, fn, sampling domains). In-place forms start from `x * 1.0`: a leaf that
# requires grad can't change in place.

CASES = [
    ("addmv", [(3,), (3, 4), (4,)], lambda m, i, a, v: m.addmv(i, a, v, beta=0.5, alpha=2.0), ()),
    ("addmv broadcast input", [(1,), (3, 4), (4,)], lambda m, i, a, v: i.addmv(a, v), ()),
    ("addmv beta=0", [(3,), (3, 4), (4,)], lambda m, i, a, v: i.addmv(a, v, beta=0), ()),
    ("addmv_", [(3,), (3, 4), (4,)], lambda m, i, a, v: (i * 1.0).addmv_(a, v, beta=2, alpha=-1), ()),
    ("tg.addmv_", [(3,), (3, 4), (4,)], lambda m, i, a, v: m.addmv_(i * 1.0, a, v, alpha=0.5), ()),
    ("addr", [(3, 4), (3,), (4,)], lambda m, i, a, b: m.addr(i, a, b, beta=2.0, alpha=-1.5), ()),
    ("addr broadcast input", [(4,), (3,), (4,)], lambda m, i, a, b: i.addr(a, b), ()),
    ("addr_", [(3, 4), (3,), (4,)], lambda m, i, a, b: (i * 1.0).addr_(a, b, alpha=3), ()),
    ("baddbmm", [(3, 5), (2, 3, 4), (2, 4, 5)],
     lambda m, i, a, b: m.baddbmm(i, a, b, beta=0.5, alpha=1.5), ()),
    ("baddbmm_", [(2, 3, 5), (2, 3, 4), (2, 4, 5)], lambda m, i, a, b: (i * 1.0).baddbmm_(a, b, beta=-1), ()),
    ("addbmm", [(5,), (2, 3, 4), (2, 4, 5)], lambda m, i, a, b: m.addbmm(i, a, b, alpha=0.25), ()),
    ("addbmm_", [(3, 5), (2, 3, 4), (2, 4, 5)], lambda m, i, a, b: (i * 1.0).addbmm_(a, b, beta=3), ()),
    ("addmm_", [(3, 5), (3, 4), (4, 5)], lambda m, i, a, b: (i * 1.0).addmm_(a, b, beta=0.5, alpha=2), ()),
    ("addmm broadcast input", [(1, 5), (3, 4), (4, 5)], lambda m, i, a, b: m.addmm(i, a, b, beta=2), ()),
    ("inner matrices", [(2, 3), (4, 3)], lambda m, a, b: m.inner(a, b), ()),
    ("inner vectors", [(3,), (3,)], lambda m, a, b: a.inner(b), ()),
    ("inner batch and vector", [(2, 3, 4), (4,)], lambda m, a, b: m.inner(a, b), ()),
    ("inner with a 0-d tensor", [(), (2, 3)], lambda m, a, b: m.inner(a, b), ()),
    ("ger", [(3,), (4,)], lambda m, a, b: a.ger(b) + m.ger(b, a).T, ()),
    ("vdot", [(5,), (5,)], lambda m, a, b: m.vdot(a, b) + a.vdot(b), ()),
    ("chain_matmul", [(2, 3), (3, 4), (4, 5)], _quietly(lambda m, a, b, c: m.chain_matmul(a, b, c)), ()),
    ("chain_matmul of one", [(2, 3)], _quietly(lambda m, a: m.chain_matmul(a)), ()),
    ("ldexp", [(3, 4), (4,)], lambda m, x, e: m.ldexp(x, e) + x.ldexp(e * 2.0), ()),
    ("frexp", [(3, 4)], lambda m, x: m.frexp(x).mantissa * 2.0 + x.frexp()[0], ("distinct",)),
    ("nextafter", [(3, 4), (4,)], lambda m, x, y: m.nextafter(x, y) + x.nextafter(y * 0.5), ("distinct",)),
    ("hardshrink", [(3, 4)], lambda m, x: x.hardshrink(0.3) + x.hardshrink() * 2.0, ("distinct",)),
    ("tg.hardshrink", [(3, 4)], lambda m, x: m.hardshrink(x, 0.45), ("distinct",)),
    ("prelu per channel", [(2, 3, 4), (3,)], lambda m, x, w: x.prelu(w), ("distinct",)),
    ("prelu one slope", [(2, 3), (1,)], lambda m, x, w: m.prelu(x, w), ("distinct",)),
    ("dist", [(3, 4), (4,)], lambda m, x, y: x.dist(y) + m.dist(x, y, 3) + x.dist(y, p=1), ()),
    ("renorm rows p=2", [(4, 3)], lambda m, x: x.renorm(2, 0, 0.5), ("distinct",)),
    ("renorm dim 1 p=1", [(2, 3, 4)], lambda m, x: m.renorm(x, 1, 1, 1.5), ("distinct",)),
    ("renorm p=inf", [(4, 3)], lambda m, x: x.renorm(float("inf"), -1, 0.35), ("distinct",)),
    ("renorm_", [(4, 3)], lambda m, x: (x * 1.0).renorm_(3, 0, 0.4), ("distinct",)),
    ("diag_embed", [(2, 3)], lambda m, x: x.diag_embed(), ()),
    ("diag_embed offset dims", [(2, 3)], lambda m, x: m.diag_embed(x, -1, 2, 0), ()),
    ("diagflat", [(2, 3)], lambda m, x: x.diagflat(1) + m.diagflat(x.T, 1), ()),
    ("sum_to_size", [(2, 3, 4)], lambda m, x: x.sum_to_size(3, 1) + x.sum_to_size((1, 3, 1))[0], ()),
    ("cov", [(3, 6)], lambda m, x: x.cov() + m.cov(x, correction=0), ()),
    ("cov of one variable", [(6,)], lambda m, x: m.cov(x), ()),
    ("cov with weights", [(3, 5), (5,)],
     lambda m, x, w: x.cov(fweights=m.tensor([1, 2, 1, 3, 1]), aweights=w.abs() + 0.1), ()),
    ("cov with aweights, correction 2", [(3, 5), (5,)],
     lambda m, x, w: m.cov(x, correction=2, aweights=w * w + 0.5), ()),
    ("corrcoef", [(3, 6)], lambda m, x: x.corrcoef() + m.corrcoef(x[:2]).sum(), ()),
    ("H, mH, adjoint", [(3, 4)], lambda m, x: x.H * 2.0 + x.mH + x.adjoint() + m.adjoint(x), ()),
    ("mH of a batch", [(2, 3, 4)], lambda m, x: x.mH * x.adjoint(), ()),
    ("conj and resolve", [(3, 4)],
     lambda m, x: x.conj() * m.conj(x) + x.resolve_conj() + m.resolve_neg(x) * 2.0, ()),
]

IDS = [case[0] for case in CASES]


def _arrays(shapes, domains, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [sample(rng, shape, domains[i] if i < len(domains) else "real") for i, shape in enumerate(shapes)]


def _run(lib, fn, arrays, dtype):
    """fn's output and every leaf's gradient, in `lib` (tensorgrad or torch), from `arrays`."""
    if lib is tg:
        leaves = [tg.tensor(a, dtype=getattr(tg, dtype), requires_grad=True) for a in arrays]
    else:
        leaves = [torch.tensor(a, dtype=getattr(torch, _name(dtype)), requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    weights = np.random.default_rng(1).standard_normal(out.shape)
    out.backward(weights.astype(dtype) if lib is tg else torch.tensor(weights, dtype=out.dtype))
    return out, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "shapes", "fn", "domains"), CASES, ids=IDS)
def test_values_dtypes_and_gradients_match_pytorch(name, shapes, fn, domains, dtype):
    arrays = _arrays(shapes, domains)
    out, grads = _run(tg, fn, arrays, dtype)
    expected, expected_grads = _run(torch, fn, arrays, dtype)
    rtol, atol = (1e-4, 1e-5) if dtype == "float32" else (1e-9, 1e-12)
    assert_like_torch(out, expected, rtol, atol)
    for i, (g, e) in enumerate(zip(grads, expected_grads, strict=True)):
        assert (g is None) == (e is None), f"input {i}"
        if g is not None:
            assert _name(g.dtype) == dtype and g.shape == tuple(e.shape), f"input {i}"
            np.testing.assert_allclose(g, e.numpy(), rtol=rtol, atol=atol, err_msg=f"input {i}")


@pytest.mark.parametrize(("name", "shapes", "fn", "domains"), CASES, ids=IDS)
def test_gradients_match_finite_differences(name, shapes, fn, domains):
    leaves = [tg.tensor(a, requires_grad=True) for a in _arrays(shapes, domains, seed=2)]
    assert tg.gradcheck(lambda *xs: fn(tg, *xs), leaves)


@pytest.mark.parametrize(("name", "shapes", "fn", "domains"), CASES, ids=IDS)
def test_ops_keep_foreign_arrays(name, shapes, fn, domains):
    runs = run_twice(fn, _arrays(shapes, domains, seed=3))
    check_same(runs)
    (_, _), (outs, leaves) = runs
    assert all(is_foreign(out.data) for out in outs)
    assert all(is_foreign(leaf.grad) for leaf in leaves if leaf.grad is not None)


# --- the BLAS family: dtypes, integer scalars, beta = 0, errors -----------------------------------------


def _pair(shape_values):
    """The same data as a (tg, torch) pair of tensors."""
    array = np.asarray(shape_values)
    return tg.tensor(array), torch.tensor(array)


def test_beta_zero_ignores_nan_and_inf_in_input_and_gives_it_a_zero_gradient():
    rng = np.random.default_rng(4)
    mat, vec = rng.standard_normal((3, 4)), rng.standard_normal(4)
    for lib in (tg, torch):
        bad = lib.tensor([np.nan, np.inf, -np.inf], dtype=lib.float64, requires_grad=True)
        out = lib.addmv(bad, lib.tensor(mat), lib.tensor(vec), beta=0, alpha=2)
        np.testing.assert_allclose(out.detach().numpy() if lib is torch else out.data, 2 * mat @ vec)
        out.sum().backward()
        np.testing.assert_array_equal(np.asarray(bad.grad), np.zeros(3))
    nan_input = np.full((3, 4), np.nan)
    out = tg.addr(tg.tensor(nan_input), tg.tensor(mat[:, 0]), tg.tensor(vec), beta=0)
    np.testing.assert_allclose(out.data, np.outer(mat[:, 0], vec))


@pytest.mark.parametrize("op", ["addmm", "addmv", "baddbmm", "addbmm"])
def test_integer_products_truncate_beta_and_alpha_as_pytorch(op):
    shapes = {"addmm": [(3, 5), (3, 4), (4, 5)], "addmv": [(3,), (3, 4), (4,)],
              "baddbmm": [(3, 5), (2, 3, 4), (2, 4, 5)], "addbmm": [(3, 5), (2, 3, 4), (2, 4, 5)]}[op]
    rng = np.random.default_rng(5)
    arrays = [rng.integers(-5, 6, shape) for shape in shapes]
    for beta, alpha in ((1.7, 2.5), (0.5, 0.5), (3, -2)):
        out = getattr(tg, op)(*(tg.tensor(a) for a in arrays), beta=beta, alpha=alpha)
        expected = getattr(torch, op)(*(torch.tensor(a) for a in arrays), beta=beta, alpha=alpha)
        assert_like_torch(out, expected)


def test_addr_promotes_dtypes_and_refuses_fractional_scalars_for_integers():
    cases = [(np.float64, np.float32, np.float32), (np.int64, np.float32, np.int64),
             (np.int32, np.int64, np.int64), (np.float32, np.int64, np.int64)]
    for input_dtype, vec1_dtype, vec2_dtype in cases:
        arrays = (np.arange(12).reshape(3, 4).astype(input_dtype), np.arange(3).astype(vec1_dtype),
                  np.arange(1, 5).astype(vec2_dtype))
        out = tg.addr(*(tg.tensor(a) for a in arrays), beta=2, alpha=3)
        assert_like_torch(out, torch.addr(*(torch.tensor(a) for a in arrays), beta=2, alpha=3))
    # The input counts as dimensioned even when 0-d (PyTorch expands it first); a float input
    # keeps fractional scalars with integer vectors, in its own dtype.
    for input_value, vec_dtype, scalars in [(np.array(1.0), np.float32, {}), (np.array(1), np.int8, {}),
                                            (np.array(1.0, np.float32), np.int8, {"alpha": 2.5}),
                                            (np.ones((2, 3), np.float16), np.int64, {"alpha": 2.5})]:
        vectors = (np.arange(1, 3).astype(vec_dtype), np.arange(3).astype(vec_dtype))
        out = tg.addr(tg.tensor(input_value), *(tg.tensor(v) for v in vectors), **scalars)
        assert_like_torch(out, torch.addr(torch.tensor(input_value), *(torch.tensor(v) for v in vectors),
                                          **scalars), rtol=1e-3)
    # The gradient reaches each input in its own dtype (PyTorch's autograd refuses mixed dtypes
    # here, so its reference runs in float64).
    values = (np.ones((2, 3)), np.array([1.0, 2.0]), np.array([3.0, -1.0, 0.5]))
    leaves = [tg.tensor(v, dtype=d, requires_grad=True) for v, d in zip(values, (tg.float32, tg.float64,
                                                                                 tg.float32), strict=True)]
    expected = [torch.tensor(v, requires_grad=True) for v in values]
    for lib, xs in ((tg, leaves), (torch, expected)):
        (lib.addr(*xs, beta=0.5, alpha=2) ** 2).sum().backward()
    for leaf, e in zip(leaves, expected, strict=True):
        assert leaf.grad.dtype == leaf.dtype
        np.testing.assert_allclose(leaf.grad, e.grad.numpy(), rtol=1e-6)
    ints = [tg.ones(3, 4, dtype=tg.int64), tg.ones(3, dtype=tg.int64), tg.ones(4, dtype=tg.int64)]
    with pytest.raises(RuntimeError, match="addr.*beta"):
        tg.addr(*ints, beta=0.5)
    with pytest.raises(RuntimeError, match="addr.*alpha"):
        ints[0].addr(ints[1], ints[2], alpha=2.5)


def test_addr_on_bool_tensors_is_logical_as_pytorch():
    rng = np.random.default_rng(6)
    arrays = (rng.random((3, 4)) > 0.5, rng.random(3) > 0.5, rng.random(4) > 0.5)
    for beta, alpha in ((1, 1), (0, 1), (1, 0), (True, False)):
        out = tg.addr(*(tg.tensor(a) for a in arrays), beta=beta, alpha=alpha)
        assert_like_torch(out, torch.addr(*(torch.tensor(a) for a in arrays), beta=beta, alpha=alpha))


@pytest.mark.parametrize("op", ["addmm", "addmv", "baddbmm", "addbmm"])
def test_mixed_dtypes_and_bool_raise_as_pytorch(op):
    shapes = {"addmm": [(3, 5), (3, 4), (4, 5)], "addmv": [(3,), (3, 4), (4,)],
              "baddbmm": [(3, 5), (2, 3, 4), (2, 4, 5)], "addbmm": [(3, 5), (2, 3, 4), (2, 4, 5)]}[op]
    for position in range(3):
        arrays = [np.ones(shape, np.float32) for shape in shapes]
        arrays[position] = arrays[position].astype(np.float64)
        with pytest.raises(RuntimeError, match=f"{op}.*same dtype"):
            getattr(tg, op)(*(tg.tensor(a) for a in arrays))
        with pytest.raises(RuntimeError):
            getattr(torch, op)(*(torch.tensor(a) for a in arrays))
    bools = [np.ones(shape, bool) for shape in shapes]
    with pytest.raises(NotImplementedError, match=op):
        getattr(tg, op)(*(tg.tensor(a) for a in bools))
    with pytest.raises(NotImplementedError):
        getattr(torch, op)(*(torch.tensor(a) for a in bools))


def test_shapes_that_do_not_fit_raise_as_pytorch():
    bad = [
        lambda m: m.addmv(m.ones(2, 3), m.ones(3, 4), m.ones(4)),  # input bigger than the product
        lambda m: m.addmv(m.ones(3), m.ones(3, 4), m.ones(5)),
        lambda m: m.addmv(m.ones(3), m.ones(4), m.ones(4)),
        lambda m: m.addr(m.ones(3, 4), m.ones(3, 4), m.ones(4)),
        lambda m: m.addr(m.ones(2, 2), m.ones(3), m.ones(2)),
        lambda m: m.baddbmm(m.ones(3, 5), m.ones(2, 3, 4), m.ones(3, 4, 5)),
        lambda m: m.addbmm(m.ones(1, 3, 5), m.ones(2, 3, 4), m.ones(2, 4, 5)),
        lambda m: m.ones(1).addmv_(m.ones(3, 4), m.ones(4)),  # in place: no broadcasting of self
        lambda m: m.ones(5).addmm_(m.ones(3, 4), m.ones(4, 5)),
        lambda m: m.ones(3, 5).baddbmm_(m.ones(2, 3, 4), m.ones(2, 4, 5)),
        lambda m: m.inner(m.ones(2, 3), m.ones(4)),
        lambda m: m.vdot(m.ones(3), m.ones(4)),
        lambda m: m.vdot(m.ones(2, 3), m.ones(2, 3)),
        lambda m: m.ger(m.ones(2, 3), m.ones(2)),
    ]
    for make in bad:
        with pytest.raises(RuntimeError):
            make(torch)
        with pytest.raises(RuntimeError):
            make(tg)
    # (PyTorch's baddbmm raises IndexError for 2-D batches, from indexing dimension 2 before its
    # check; bmm's rank check here says what is wrong, as a RuntimeError.)
    with pytest.raises(RuntimeError, match="bmm: batch1 must be a 3D tensor"):
        tg.baddbmm(tg.ones(3, 5), tg.ones(3, 4), tg.ones(4, 5))
    with pytest.raises(RuntimeError, match="addmv.*input of shape \\(2, 3\\)"):
        bad[0](tg)
    with pytest.raises(RuntimeError, match="inner.*\\(2, 3\\).*\\(4,\\)"):
        bad[10](tg)
    with pytest.raises(RuntimeError, match="vdot"):
        bad[11](tg)


def test_inner_and_vdot_dtypes_as_pytorch():
    for a, b in [(np.arange(3), np.arange(3)), (np.ones((2, 3), np.float64), np.ones(3, np.float64))]:
        assert_like_torch(tg.inner(tg.tensor(a), tg.tensor(b)), torch.inner(torch.tensor(a), torch.tensor(b)))
    # A 0-d operand is a product, with the 0-d dtype rules.
    for a, b in [(np.array(2), np.array(3.0)), (np.array(2.0, np.float32), np.array(3.0))]:
        assert_like_torch(tg.inner(tg.tensor(a), tg.tensor(b)), torch.inner(torch.tensor(a), torch.tensor(b)))
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="same dtype"):
            lib.inner(lib.ones(3), lib.ones(3, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="same dtype"):
            lib.vdot(lib.ones(3), lib.ones(3, dtype=lib.float64))
    assert_like_torch(tg.vdot(tg.tensor([1, 2, 3]), tg.tensor([4, 5, 6])),
                      torch.vdot(torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])))
    assert_like_torch(tg.ger(tg.ones(2), tg.ones(3, dtype=tg.float64)),
                      torch.ger(torch.ones(2), torch.ones(3, dtype=torch.float64)))


def test_chain_matmul_warns_copies_one_matrix_and_checks_its_operands():
    a = tg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    with pytest.warns(UserWarning, match="multi_dot"):
        single = tg.chain_matmul(a)
    assert single is not a and np.shares_memory(single.data, a.data) is False
    np.testing.assert_array_equal(single.data, a.data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for lib in (tg, torch):
            with pytest.raises(RuntimeError, match="chain_matmul"):
                lib.chain_matmul()
            with pytest.raises(RuntimeError):
                lib.chain_matmul(lib.ones(2, 3), lib.ones(3))
            with pytest.raises(RuntimeError):
                lib.chain_matmul(lib.ones(2, 3), lib.ones(2, 3))
            with pytest.raises(RuntimeError, match="dtype"):
                lib.chain_matmul(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64))


def test_beta_and_alpha_are_keyword_only_as_in_pytorch():
    for lib in (tg, torch):
        with pytest.raises(TypeError):
            lib.addmv(lib.ones(3), lib.ones(3, 4), lib.ones(4), 0.5)
        with pytest.raises(TypeError):
            lib.ones(3, 4).addr(lib.ones(3), lib.ones(4), 2)


def test_in_place_forms_write_into_self_and_bump_its_version():
    x = tg.zeros(3, 5)
    before = x._version
    same = x.addmm_(tg.ones(3, 4), tg.ones(4, 5), beta=0, alpha=2)
    assert same is x and x._version > before
    np.testing.assert_array_equal(x.data, np.full((3, 5), 8.0))
    y = tg.ones(3)
    assert y.addmv_(tg.ones(3, 2), tg.ones(2)) is y and tg.addmv_(y, tg.ones(3, 2), tg.ones(2)) is y
    np.testing.assert_array_equal(y.data, [5.0, 5.0, 5.0])
    leaf = tg.ones(3, 5, requires_grad=True)
    with pytest.raises(RuntimeError, match="addbmm_"):
        leaf.addbmm_(tg.ones(2, 3, 4), tg.ones(2, 4, 5))


# --- gcd, lcm, ldexp, frexp, nextafter ---------------------------------------------------------------

INTS = np.array([12, -18, 0, 7, 0, 100, -9])
OTHERS = np.array([8, 12, 5, -3, 0, -75, 6])


@pytest.mark.parametrize("op", ["gcd", "lcm"])
def test_gcd_and_lcm_values_and_dtypes_as_pytorch(op):
    for a_dtype, b_dtype in [(np.int64, np.int64), (np.int32, np.int64), (np.uint8, np.uint8),
                             (np.int8, np.int16), (np.int16, np.int16)]:
        a, b = INTS.astype(a_dtype), OTHERS.astype(b_dtype)
        assert_like_torch(getattr(tg, op)(tg.tensor(a), tg.tensor(b)),
                          getattr(torch, op)(torch.tensor(a), torch.tensor(b)))
        assert_like_torch(getattr(tg.tensor(a), op)(tg.tensor(b)),
                          getattr(torch.tensor(a), op)(torch.tensor(b)))
    # broadcasting, and a 0-d int8 operand keeping the dimensioned one's dtype
    six = np.array(6, np.int8)
    assert_like_torch(getattr(tg, op)(tg.tensor(INTS.reshape(7, 1)), tg.tensor(six)),
                      getattr(torch, op)(torch.tensor(INTS.reshape(7, 1)), torch.tensor(six)))
    assert_like_torch(getattr(tg, op)(tg.tensor(INTS[:, None]), tg.tensor(OTHERS[None])),
                      getattr(torch, op)(torch.tensor(INTS[:, None]), torch.tensor(OTHERS[None])))


def test_lcm_overflow_wraps_as_pytorch():
    a, b = np.array([2 ** 40, -(2 ** 35)]), np.array([3 ** 20, 3 ** 21])
    assert_like_torch(tg.lcm(tg.tensor(a), tg.tensor(b)), torch.lcm(torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("op", ["gcd", "lcm"])
def test_gcd_and_lcm_refuse_floats_bools_and_numbers_as_pytorch(op):
    for lib in (tg, torch):
        fn = getattr(lib, op)
        with pytest.raises(NotImplementedError):
            fn(lib.tensor([1.0, 2.0]), lib.tensor([2.0, 4.0]))
        with pytest.raises(NotImplementedError):
            fn(lib.tensor([True]), lib.tensor([False]))
        with pytest.raises(NotImplementedError):
            fn(lib.tensor([4]), lib.tensor([2.0]))
        with pytest.raises(TypeError):
            fn(lib.tensor([4, 6]), 2)
    with pytest.raises(NotImplementedError, match=f"{op}.*float32"):
        getattr(tg, op)(tg.tensor([1.0]), tg.tensor([2.0]))


def test_ldexp_dtypes_as_pytorch():
    x, e = np.array([1.0, -2.5, 3.0]), np.array([1, 2, -3])
    cases = [(x.astype(np.float32), e), (e, e), (x, e), (x.astype(np.float32), e.astype(np.float32)),
             (x.astype(np.float16), e), (x.astype(np.float32), np.array(2.0)), (x > 0, e > 0),
             (x.astype(np.float32), x)]
    for a, b in cases:
        assert_like_torch(tg.ldexp(tg.tensor(a), tg.tensor(b)), torch.ldexp(torch.tensor(a), torch.tensor(b)),
                          rtol=1e-3)
    for lib in (tg, torch):
        with pytest.raises(TypeError):
            lib.ldexp(lib.tensor([1.0]), 2)
    with pytest.raises(RuntimeError, match="ldexp.*\\(2,\\).*\\(3,\\)"):
        tg.ldexp(tg.ones(2), tg.ones(3))


def test_frexp_returns_pytorchs_named_tuple_and_special_values():
    values = np.array([0.0, 1.0, -3.5, np.inf, -np.inf, np.nan, 1e-40, 6e4, -0.0])
    for dtype in (np.float32, np.float64):
        data = values.astype(dtype)
        out, expected = tg.frexp(tg.tensor(data)), torch.frexp(torch.tensor(data))
        assert type(out).__name__ == "frexp" and out._fields == ("mantissa", "exponent")
        mantissa, exponent = out
        assert_like_torch(mantissa, expected.mantissa)
        assert_like_torch(exponent, expected.exponent)
        assert out.exponent.dtype == tg.int32 and not out.exponent.requires_grad
    half = tg.tensor(np.array([1.5, -0.1], np.float16)).frexp()
    assert half.mantissa.dtype == tg.float16 and half.exponent.dtype == tg.int32
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="frexp"):
            lib.frexp(lib.tensor([1, 2]))


def test_nextafter_steps_one_ulp_and_follows_pytorchs_dtypes():
    x = np.array([1.0, -2.5, 0.0, 3.0, 2.0])
    y = np.array([2.0, 0.0, -1.0, 3.0, np.inf])
    for a, b in [(x.astype(np.float32), y.astype(np.float32)), (x, y), (x.astype(np.float32), y),
                 (x.astype(np.float32), np.array(1.0))]:
        out = tg.nextafter(tg.tensor(a), tg.tensor(b))
        expected = torch.nextafter(torch.tensor(a), torch.tensor(b))
        assert _name(out.dtype) == _name(expected.dtype)
        np.testing.assert_array_equal(out.data, expected.numpy())  # bit for bit: an ulp is the point
    assert tg.nextafter(tg.tensor([1.0]), tg.tensor([2.0])).item() > 1.0
    for lib in (tg, torch):
        with pytest.raises(NotImplementedError):
            lib.nextafter(lib.tensor([1, 2]), lib.tensor([2, 3]))
        with pytest.raises(TypeError):
            lib.nextafter(lib.tensor([1.0]), 1)


def test_nextafters_gradient_stops_where_the_two_are_equal_as_pytorchs():
    """nextafter(x, y) is y where x == y, so PyTorch passes no gradient to x there (nan passes)."""
    x = [np.inf, -np.inf, 1.0, 0.0, np.nan, 65504.0, 1e-8, 2.0]
    y = [np.inf, -np.inf, 2.0, 0.0, 1.0, np.inf, 0.0, 2.0]
    for dtype in ("float16", "float32"):
        grads = []
        for lib in (tg, torch):
            a = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            b = lib.tensor(y, dtype=getattr(lib, dtype), requires_grad=True)
            lib.nextafter(a, b).backward(lib.arange(1.0, 9.0, dtype=getattr(lib, dtype)))
            grads.append((np.asarray(a.grad.numpy() if lib is torch else a.grad),
                          np.asarray(b.grad.numpy() if lib is torch else b.grad)))
        np.testing.assert_array_equal(grads[0][0], grads[1][0])  # 1e-8 is 0 in float16: no gradient
        np.testing.assert_array_equal(grads[0][1], grads[1][1])


# --- hardshrink, prelu, dist, renorm: dtypes and errors ---------------------------------------------


def test_hardshrink_prelu_and_dist_refuse_what_pytorch_refuses():
    for lib in (tg, torch):
        with pytest.raises(NotImplementedError):
            lib.ones(3, dtype=lib.int64).hardshrink()
        with pytest.raises(RuntimeError):
            lib.ones(3).prelu(lib.tensor([0.25, 0.3, 0.1]))  # a 1-D input has one channel
        with pytest.raises(RuntimeError):
            lib.ones(3, dtype=lib.int64).dist(lib.ones(3, dtype=lib.int64))
    assert_like_torch(tg.ones(3).dist(tg.zeros(3, dtype=tg.float64), p=0),
                      torch.ones(3).dist(torch.zeros(3, dtype=torch.float64), p=0))
    assert_like_torch(tg.tensor([1.0, -4.0]).dist(tg.zeros(2), float("inf")),
                      torch.tensor([1.0, -4.0]).dist(torch.zeros(2), float("inf")))


def test_renorm_scales_only_the_slices_over_maxnorm():
    a = np.array([[1.0, 2, 3], [4, 5, 6], [0.1, 0.1, 0.1]])
    for p, dim, maxnorm in [(2, 0, 5), (1, 1, 3), (float("inf"), 0, 2), (0.5, 0, 2), (2, 0, 0)]:
        assert_like_torch(tg.tensor(a).renorm(p, dim, maxnorm), torch.tensor(a).renorm(p, dim, maxnorm))
    out = tg.tensor(a).renorm(2, 0, 5).data
    np.testing.assert_array_equal(out[[0, 2]], a[[0, 2]])  # norms 3.74 and 0.17: untouched
    np.testing.assert_allclose(np.linalg.norm(out[1]), 5, rtol=1e-6)
    x = tg.tensor(a)
    assert x.renorm_(2, 0, 5) is x
    np.testing.assert_allclose(x.data, out)


def test_renorm_errors_as_pytorch():
    bad = [lambda m: m.ones(3).renorm(2, 0, 1), lambda m: m.ones(2, 3).renorm(0, 0, 1),
           lambda m: m.ones(2, 3).renorm(-1, 0, 1), lambda m: m.ones(2, 3).renorm(2, 0, -1),
           lambda m: m.ones(2, 3, dtype=m.int64).renorm(2, 0, 1)]
    for make in bad:
        for lib in (tg, torch):
            with pytest.raises(RuntimeError):
                make(lib)
    for lib in (tg, torch):
        with pytest.raises(IndexError):
            lib.ones(2, 3).renorm(2, 2, 1)
        with pytest.raises(TypeError):
            lib.ones(2, 3).renorm(2, 0.0, 1)


# --- diag_embed, diagflat, sum_to_size ------------------------------------------------------------------


def test_diag_embed_and_diagflat_shapes_and_errors_as_pytorch():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    for args in [(), (1,), (-2, 0, 2), (0, -1, 0), (2, 2, 1), (-1, 1, 0)]:
        assert_like_torch(tg.tensor(x).diag_embed(*args), torch.tensor(x).diag_embed(*args))
    assert_like_torch(tg.tensor([1, 2]).diag_embed(1), torch.tensor([1, 2]).diag_embed(1))
    for args in [(), (-1,), (2,)]:
        assert_like_torch(tg.tensor(x).diagflat(*args), torch.tensor(x).diagflat(*args))
    assert_like_torch(tg.tensor(2.0).diagflat(1), torch.tensor(2.0).diagflat(1))
    assert_like_torch(tg.ones(0).diagflat(2), torch.ones(0).diagflat(2))
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="diag"):
            lib.ones(2, 3).diag_embed(0, 1, 1)
        with pytest.raises(IndexError):
            lib.ones(2, 3).diag_embed(0, 0, 3)
        with pytest.raises(IndexError):
            lib.tensor(1.0).diag_embed()


def test_sum_to_size_as_pytorch():
    x = np.random.default_rng(7).standard_normal((2, 3, 4))
    for size in [(3, 1), ((3, 1),), ([1, 3, 1],), (4,), (1, 1), (2, 1, 4)]:
        assert_like_torch(tg.tensor(x).sum_to_size(*size), torch.tensor(x).sum_to_size(*size))
    for dtype in (np.int8, np.int32, bool):
        ints = (x > 0).astype(dtype)
        assert_like_torch(tg.tensor(ints).sum_to_size(1, 4), torch.tensor(ints).sum_to_size(1, 4))
    t = tg.tensor(x)
    assert t.sum_to_size(2, 3, 4) is t
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="expandable"):
            lib.tensor(x).sum_to_size(2, 1)
        with pytest.raises(RuntimeError, match="expandable"):
            lib.tensor(x).sum_to_size(1, 2, 3, 4)
        with pytest.raises(TypeError):
            lib.tensor(x).sum_to_size()
        with pytest.raises(TypeError):
            lib.tensor(x).sum_to_size(3.0)


# --- cov and corrcoef -------------------------------------------------------------------------------------


def test_cov_and_corrcoef_dtypes_and_special_inputs_as_pytorch():
    x = np.random.default_rng(8).standard_normal((3, 5))
    aweights = np.array([0.5, 1, 2, 1, 0.1])
    cases = [
        lambda m: m.tensor(x).cov(),
        lambda m: m.tensor(x[0]).cov(),
        lambda m: m.tensor(x.astype(np.float32)).cov(aweights=m.tensor(aweights)),
        lambda m: m.tensor(x).cov(aweights=m.tensor(aweights.astype(np.float32))),
        lambda m: m.tensor(np.arange(15).reshape(3, 5)).cov(fweights=m.tensor([1, 0, 2, 1, 1],
                                                                                dtype=m.int32)),
        lambda m: m.tensor(np.arange(15, dtype=np.int32).reshape(3, 5)).cov(aweights=m.tensor(aweights)),
        lambda m: m.tensor(x).cov(correction=3),
        lambda m: m.tensor(x).corrcoef(),
        lambda m: m.tensor(np.arange(15).reshape(3, 5) ** 2).corrcoef(),
        lambda m: m.tensor(x[0]).corrcoef(),
        lambda m: m.tensor([[1.0, 2, 3], [3, 1, 2]]).corrcoef(),
        lambda m: m.tensor([[1.0, 1, 1], [3, 1, 2]]).corrcoef(),  # a constant row: nan, as PyTorch
    ]
    for make in cases:
        assert_like_torch(make(tg), make(torch), rtol=1e-5)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        out = tg.tensor(2.0).cov()
    assert out.shape == () and np.isnan(out.item())
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert np.isinf(tg.tensor(x).cov(correction=5).data).all()


def test_cov_refuses_what_pytorch_refuses():
    x = np.ones((3, 5))
    weights = np.array([1, 2, 1, 3, 1])
    bad = [
        lambda m: m.ones(2, 3, 4).cov(),
        lambda m: m.ones(3, 5, dtype=m.bool).cov(),
        lambda m: m.tensor(x).cov(fweights=m.tensor(weights * 1.0)),
        lambda m: m.tensor(x).cov(aweights=m.tensor(weights)),
        lambda m: m.tensor(x).cov(fweights=-m.tensor(weights)),
        lambda m: m.tensor(x).cov(aweights=-m.tensor(weights * 1.0)),
        lambda m: m.tensor(x).cov(fweights=m.tensor(weights[:3])),
        lambda m: m.tensor(x).cov(fweights=m.tensor(weights[None])),
        lambda m: m.tensor(x).cov(aweights=m.zeros(5, dtype=m.float64)),
        lambda m: m.ones(2, 3, 4).corrcoef(),
    ]
    for make in bad:
        for lib in (tg, torch):
            with pytest.raises(RuntimeError):
                make(lib)
    with pytest.raises(RuntimeError, match="fweights.*integral"):
        bad[2](tg)
    with pytest.raises(RuntimeError, match="weights sum to zero"):
        bad[8](tg)
    for lib in (tg, torch):
        with pytest.raises(TypeError):
            lib.tensor(x).cov(correction=0.5)
        with pytest.raises(TypeError):
            lib.tensor(x).cov(1)  # correction is keyword-only


# --- queries, attributes and conjugate views ---------------------------------------------------------------

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_queries_and_sizes_as_pytorch(dtype):
    x, t = tg.ones(2, 3, dtype=getattr(tg, dtype)), torch.ones(2, 3, dtype=getattr(torch, dtype))
    assert x.is_signed() == t.is_signed() == tg.is_signed(x)
    assert x.is_floating_point() == tg.is_floating_point(x) == t.is_floating_point()
    assert x.is_complex() == tg.is_complex(x) is False
    assert x.itemsize == t.itemsize and x.nbytes == t.nbytes
    assert x[:, ::2].nbytes == t[:, ::2].nbytes and x.expand(4, 2, 3).nbytes == t.expand(4, 2, 3).nbytes
    assert_like_torch(x.isreal(), t.isreal())
    assert_like_torch(tg.isreal(x), torch.isreal(t))


def test_is_nonzero_as_pytorch():
    for value in [[0.0], [1.0], [[3]], 0, float("nan"), True, False, [-0.0]]:
        expected = torch.tensor(value).is_nonzero()
        assert tg.tensor(value).is_nonzero() == expected == tg.is_nonzero(tg.tensor(value))
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="more than one value"):
            lib.tensor([1.0, 2.0]).is_nonzero()
        with pytest.raises(RuntimeError, match="no values"):
            lib.tensor([]).is_nonzero()
        with pytest.raises(TypeError):
            lib.is_nonzero(1.0)


def test_sizes_devices_and_lazy_flags():
    x, t = tg.ones(2, 3), torch.ones(2, 3)
    assert x.is_same_size(tg.zeros(2, 3)) and not x.is_same_size(tg.zeros(3, 2))
    assert tg.is_same_size(x, x) == torch.is_same_size(t, t)
    for lib, y in ((tg, x), (torch, t)):
        with pytest.raises(TypeError):
            y.is_same_size([1])
    assert x.ndimension() == t.ndimension() == 2 and tg.tensor(1.0).ndimension() == 0
    assert x.get_device() == t.get_device() == tg.get_device(x) == -1
    for name in ("is_conj", "is_neg", "is_inference"):
        assert getattr(x, name)() is getattr(t, name)() is getattr(tg, name)(x) is False
    with tg.inference_mode():
        assert tg.ones(2).is_inference() and not x.is_inference()  # as torch.inference_mode


def test_conj_transposes_are_views_and_real_conj_is_the_tensor_itself():
    x = tg.tensor(np.arange(6.0).reshape(2, 3))
    for view in (x.H, x.mH, x.adjoint(), tg.adjoint(x)):
        assert view.shape == (3, 2) and np.shares_memory(view.data, x.data) and view._base is x
    batch = tg.ones(4, 2, 3)
    assert batch.mH.shape == (4, 3, 2) and np.shares_memory(batch.mH.data, batch.data)
    assert x.conj() is x and tg.conj(x) is x and x.resolve_conj() is x and tg.resolve_neg(x) is x
    scalar = tg.tensor(2.0)
    assert scalar.H is scalar
    x.H[0, 1] = 10.0  # writes through the view, as PyTorch's
    assert x.data[1, 0] == 10.0
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="H is only supported on matrices"):
            lib.ones(3).H
        with pytest.raises(RuntimeError, match="mH"):
            lib.ones(2, 3, 4).H
        with pytest.raises(RuntimeError, match="mH is only supported"):
            lib.ones(3).mH
        with pytest.raises(RuntimeError, match="adjoint"):
            lib.ones(3).adjoint()
