"""Every op on a stand-in for GPU arrays: what must hold for `device="cuda"` to work, checked on a CPU.

On a GPU a tensor's data and gradient are CuPy arrays, and CuPy refuses to mix them with numpy
arrays. An op that makes an array from a shape or from Python data with plain numpy
(`np.zeros(shape)`, `np.array(list)`, `np.add.at` into a numpy target), or converts through
`np.asarray`, runs fine on the CPU and fails on a GPU. Most test machines have no GPU, so the
tests use a stand-in: `ForeignArray` (`foreign_array.py`), a thin subclass of numpy's array that
refuses plain numpy operands exactly as CuPy does, with its own namespace registered in
`tensorgrad.device` as CuPy's is. numpy still computes every number, so a CPU-only run fails
precisely where an op would not survive on a GPU.

Each case runs twice from the same numbers, on plain numpy arrays and on ForeignArrays: the
second run's output data and every input's gradient must be ForeignArrays (a type check: a
subclass of numpy's array is not enough) and equal the first run's. First the op table
(`op_table.CASES`, sampled over its layouts to stay fast), then a compact table of the breadth
ops of the movement, indexing, reduction and matmul modules, then in-place changes, creation
`*_like` forms and randomness on a foreign tensor.
"""

from __future__ import annotations

import copy
import importlib
import zlib

import numpy as np
import pytest
from foreign_array import ForeignArray, foreign, is_foreign
from op_table import CASES, Case, applies, make_inputs, prepared, sample

import tensorgrad as tg
from tensorgrad.device import namespace, to_numpy


class OnForeign:
    """tensorgrad as the expressions see it (`m`) in the foreign run: `m.tensor(...)` (masks and
    indices) makes ForeignArray tensors, as user code on a GPU makes them with `device="cuda"`."""

    def __getattr__(self, name: str):
        return getattr(tg, name)

    @staticmethod
    def tensor(data, **kwargs) -> tg.Tensor:
        return tg.from_numpy(foreign(tg.tensor(data, **kwargs).data))


ON_FOREIGN = OnForeign()


def _copy_layout(a: np.ndarray) -> np.ndarray:
    """A copy of `a` with its strides (transposed stays transposed)."""
    out = np.empty_like(a)
    out[...] = a
    return out


def run_twice(fn, arrays: list[np.ndarray]):
    """`fn(m, *leaves)` on numpy leaves and on ForeignArray leaves (all requiring grad); backward
    through each output that requires grad, weighted by the same random numbers. Returns both
    runs' outputs and leaves."""
    runs = []
    for m, convert in ((tg, _copy_layout), (ON_FOREIGN, foreign)):
        leaves = [tg.from_numpy(convert(a)).requires_grad_() for a in arrays]
        outs = fn(m, *leaves)
        outs = tuple(outs) if isinstance(outs, tuple | list) else (outs,)
        rng = np.random.default_rng(7)
        for out in outs:
            weights = rng.standard_normal(out.shape)
            if out.requires_grad:
                out.backward(weights if m is tg else tg.from_numpy(foreign(weights)), retain_graph=True)
        runs.append((outs, leaves))
    return runs


def check_same(runs) -> None:
    """The foreign run kept every output and gradient a ForeignArray, and agrees with numpy's."""
    (plain_outs, plain_leaves), (outs, leaves) = runs
    for i, (plain, out) in enumerate(zip(plain_outs, outs, strict=True)):
        assert is_foreign(out.data), f"output {i} is {type(out.data).__name__}"
        assert out.dtype == plain.dtype and out.shape == plain.shape
        np.testing.assert_allclose(to_numpy(out.data), plain.data, rtol=1e-12, atol=1e-12)
    for i, (plain, leaf) in enumerate(zip(plain_leaves, leaves, strict=True)):
        if plain.grad is None:
            assert leaf.grad is None, f"input {i}"
            continue
        assert is_foreign(leaf.grad), f"the gradient of input {i} is {type(leaf.grad).__name__}"
        np.testing.assert_allclose(to_numpy(leaf.grad), plain.grad, rtol=1e-12, atol=1e-12)


# --- the stand-in itself ---------------------------------------------------------------------------


def test_the_stand_in_refuses_numpy_operands_as_cupy_does():
    a = foreign(np.arange(6.0).reshape(2, 3))
    assert namespace(a).zeros(3).__class__ is ForeignArray and is_foreign(a.T[1:]) and is_foreign(a.sum())
    for mix in (lambda: a + np.ones(3), lambda: np.where(np.ones((2, 3), bool), a, 0),
                lambda: np.add.at(a, [0], np.ones(3)), lambda: a.__setitem__(0, np.ones(3)),
                lambda: a - np.array(1.0)):  # CuPy refuses a 0-d numpy array too
        with pytest.raises(TypeError, match="plain numpy array"):
            mix()
    assert is_foreign(a + 1.0) and is_foreign(a * np.float64(2))
    assert type(to_numpy(a)) is np.ndarray and not np.shares_memory(to_numpy(a), a.view(np.ndarray))


# --- the op table ----------------------------------------------------------------------------------


def _sampled(case: Case, layout: str) -> bool:
    """Every case on contiguous inputs; each other layout on about a third of the cases."""
    return layout == "contiguous" or zlib.crc32(f"{case.name}|{layout}".encode()) % 3 == 0


TABLE = [pytest.param(case, layout, id=f"{case.name}-{layout}")
         for case in CASES for layout in case.layouts if applies(case, layout) and _sampled(case, layout)]


@pytest.mark.parametrize(("case", "layout"), TABLE)
def test_op_table_keeps_foreign_arrays(case: Case, layout: str):
    arrays, preps = make_inputs(case, layout)
    check_same(run_twice(prepared(case.fn, preps), arrays))


# --- the breadth ops of movement, indexing, reduce and matmul ------------------------------------------

IDX = [[2, 0, 1, 2], [1, 1, 0, 0], [0, 2, 2, 1]]  # an index along dim 0 of a (3, 4) tensor
MASK = [[True, False, True, False], [False, False, True, True], [True, True, False, True]]

# (name, input shapes and domains, expression). Index and mask tensors are made by `m.tensor`.
BREADTH = [
    ("gather", [(3, 4)], lambda m, a: a.gather(0, m.tensor(IDX))),
    ("scatter(src)", [(3, 4), (3, 4)], lambda m, a, b: a.scatter(1, m.tensor([[0, 1], [2, 3], [1, 0]]), b)),
    ("scatter(value)", [(3, 4)], lambda m, a: a.scatter(1, m.tensor([[0, 1], [2, 3], [1, 0]]), 0.5)),
    ("scatter(reduce=add)", [(3, 4), (3, 4)],
     lambda m, a, b: a.scatter(0, m.tensor(IDX), b, reduce="add")),
    ("scatter(reduce=multiply)", [(3, 4), (3, 4)],
     lambda m, a, b: a.scatter(0, m.tensor(IDX), b, reduce="multiply")),
    ("scatter_add", [(3, 4), (3, 4)], lambda m, a, b: a.scatter_add(0, m.tensor(IDX), b)),
    *[(f"scatter_reduce({r},{s})", [(3, 4), (3, 4)],
       lambda m, a, b, r=r, s=s: a.scatter_reduce(0, m.tensor(IDX), b, r, include_self=s))
      for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)],
    ("index_select", [(3, 4)], lambda m, a: a.index_select(1, m.tensor([3, 0, 3]))),
    ("masked_fill(number)", [(3, 4)], lambda m, a: a.masked_fill(m.tensor(MASK), -1.0)),
    ("masked_fill(0-d tensor)", [(3, 4), ()], lambda m, a, v: a.masked_fill(m.tensor(MASK), v)),
    ("masked_select", [(3, 4)], lambda m, a: a.masked_select(m.tensor(MASK))),
    ("masked_select(broadcast)", [(3, 4)], lambda m, a: a.masked_select(m.tensor(MASK[0]))),
    ("take", [(3, 4)], lambda m, a: a.take(m.tensor([[0, 11], [5, 5]]))),
    ("nonzero", [(3, 4)], lambda m, a: ((a > 0).nonzero(), *(a > 0).nonzero(as_tuple=True))),
    ("where(cond)", [(3, 4)], lambda m, a: m.where(a > 0)),
    ("index t[idx]", [(3, 4)], lambda m, a: a[m.tensor([2, 0, 2])]),
    ("index t[mask]", [(3, 4)], lambda m, a: a[m.tensor(MASK)]),
    ("index t[0,:,idx]", [(2, 3, 4)], lambda m, a: a[0, :, m.tensor([3, 1, 3])]),
    ("index t[rows,cols]", [(3, 4)], lambda m, a: a[m.tensor([0, 2, 2]), m.tensor([1, 3, 1])]),
    ("index t[list]", [(3, 4)], lambda m, a: a[[1, 1, 0]]),
    ("tril", [(3, 4)], lambda m, a: a.tril(1)),
    ("triu", [(2, 3, 4)], lambda m, a: a.triu(-1)),
    ("diag(1-D)", [(3,)], lambda m, a: a.diag(1)),
    ("diag(2-D)", [(3, 4)], lambda m, a: a.diag(-1)),
    ("diagonal", [(2, 3, 4)], lambda m, a: a.diagonal(1, 2, 0)),
    ("unfold", [(3, 7)], lambda m, a: a.unfold(1, 3, 2)),
    ("as_strided", [(3, 4)], lambda m, a: a.as_strided((2, 3), (1, 2), 1)),
    ("flip", [(3, 4)], lambda m, a: a.flip((0, 1))),
    ("roll(dims)", [(3, 4)], lambda m, a: a.roll((1, -1), (0, 1))),
    ("roll(flat)", [(3, 4)], lambda m, a: a.roll(5)),
    ("repeat", [(3, 4)], lambda m, a: a.repeat(2, 1, 2)),
    ("tile", [(3, 4)], lambda m, a: a.tile((2,))),
    ("repeat_interleave(int)", [(3, 4)], lambda m, a: a.repeat_interleave(2, dim=1)),
    ("repeat_interleave(tensor)", [(3, 4)], lambda m, a: a.repeat_interleave(m.tensor([1, 0, 3]), dim=0)),
    ("repeat_interleave(flat)", [(3, 4)], lambda m, a: a.repeat_interleave(2)),
    ("narrow/split/chunk/unbind", [(4, 6)], lambda m, a: (a.narrow(1, 1, 3), *a.split([1, 3], 0),
                                                           *a.chunk(4, 1), *a.unbind(0))),
    ("unflatten/movedim/swapaxes", [(4, 6)],
     lambda m, a: a.unflatten(1, (2, 3)).movedim(0, 2).swapaxes(0, 1)),
    ("meshgrid", [(3,), (4,)], lambda m, a, b: m.meshgrid(a, b, indexing="xy")),
    ("einsum(ij,jk->ik)", [(3, 4), (4, 2)], lambda m, a, b: m.einsum("ij,jk->ik", a, b)),
    ("einsum(ii->i)", [(3, 3)], lambda m, a: m.einsum("ii->i", a)),
    ("einsum(...j,j)", [(2, 3, 4), (4,)], lambda m, a, b: m.einsum("...j,j", a, b)),
    ("einsum(ij->)", [(3, 4)], lambda m, a: m.einsum("ij->", a)),
    ("sort", [(3, 4)], lambda m, a: a.sort(1, descending=True)),
    ("argsort", [(3, 4)], lambda m, a: a.argsort(0)),
    ("topk", [(3, 4)], lambda m, a: a.topk(2, 1)),
    ("median(dim)", [(3, 5)], lambda m, a: a.median(1)),
    ("median()", [(3, 5)], lambda m, a: a.median()),
    ("cumsum", [(3, 4)], lambda m, a: a.cumsum(1)),
    ("cumprod", [(3, 4)], lambda m, a: a.cumprod(0)),
    ("cummax", [(3, 4)], lambda m, a: a.cummax(1)),
    ("cummin", [(3, 4)], lambda m, a: a.cummin(0)),
    ("logcumsumexp", [(3, 4)], lambda m, a: a.logcumsumexp(1)),
    ("max(dim)/min(dim)", [(3, 4)], lambda m, a: (*a.max(1), *a.min(0, keepdim=True))),
    ("argmax/argmin", [(3, 4)], lambda m, a: (a.argmax(), a.argmin(1), a.argmax(0, keepdim=True))),
    ("prod", [(3, 4)], lambda m, a: (a.prod(), a.prod(1))),
    ("var/std", [(3, 4)], lambda m, a: (a.var(1), a.std(), a.std(0, correction=0))),
    ("var_mean/std_mean", [(3, 4)], lambda m, a: (*m.var_mean(a, 1), *m.std_mean(a))),
    ("norm", [(3, 4)], lambda m, a: (a.norm(), a.norm(1, 1), a.norm(float("inf"), 0), a.norm(3, 1),
                                     a.norm(0, 1))),
    ("norm(nuc)", [(3, 4)], lambda m, a: a.norm("nuc")),
    ("all/any/count_nonzero", [(3, 4)], lambda m, a: ((a > 0).all(1), (a > 0).any(), a.count_nonzero(0))),
    ("amax/amin ties", [(3, 4)], lambda m, a: (a.round().amax(1), a.round().amin())),
    ("cat/stack", [(3, 4), (3, 4)], lambda m, a, b: (m.cat([a, b], 1), m.stack([a, b], -1))),
    ("contiguous/clone", [(3, 4)], lambda m, a: (a.T.contiguous(), a.clone())),
    ("to(float32)/double", [(3, 4)], lambda m, a: a.float().double() * 2.0),
    ("linear", [(5, 4), (3, 4), (3,)], lambda m, x, w, b: m.nn.functional.linear(x, w, b)),
    ("matmul(vector)", [(4,), (4, 3)], lambda m, a, b: a @ b),
    ("atan2/hypot/xlogy", [(3, 4), (3, 4)],
     lambda m, a, b: (m.atan2(a, b), m.hypot(a, b), m.xlogy(a, b.abs()))),
    ("fmax/fmin/logaddexp2", [(3, 4), (4,)], lambda m, a, b: (m.fmax(a, b), a.fmin(b), m.logaddexp2(a, b))),
    ("sinc/logit/nan_to_num", [(3, 4)], lambda m, a: (m.sinc(a), a.sigmoid().logit(eps=0.4),
                                                     m.nan_to_num(a.log()))),
    ("nansum/nanmean", [(3, 4)], lambda m, a: (m.nansum(a.log(), 1), a.log().nanmean())),
    ("diff/trace", [(3, 4)], lambda m, a: (a.diff(), m.diff(a, 2, 0, prepend=a[:1]), a.trace())),
    ("mm/mv/dot/outer", [(3, 4), (4,)], lambda m, a, b: (m.mm(a, a.T), a.mv(b), b.dot(b), m.outer(b, b))),
    ("t/select/ravel", [(3, 4)], lambda m, a: (a.t() * 2, a.select(1, 2), a.T.ravel())),
    ("erfc/heaviside/signbit", [(3, 4)], lambda m, a: (
        m.erfc(a * 3), m.heaviside(a.detach().round(), a[0].detach()), a.signbit())),
    ("quantile/nanquantile", [(3, 4)], lambda m, a: (m.quantile(a, m.tensor([0.2, 0.5]), dim=1),
                                                    a.log().nanquantile(0.7, interpolation="midpoint"))),
    ("kthvalue/nanmedian/aminmax", [(3, 4)], lambda m, a: (*a.kthvalue(2, 1), *a.log().nanmedian(0),
                                                          *a.aminmax(dim=0))),
    ("index_add/copy/fill", [(3, 4), (2, 4)], lambda m, a, b: (
        a.index_add(0, m.tensor([2, 2]), b, alpha=2.0), a.index_copy(0, m.tensor([2, 0]), b),
        a.index_fill(1, m.tensor([1, 3]), -1.0))),
    ("masked_scatter/take_along_dim", [(3, 4), (12,)], lambda m, a, b: (
        a.masked_scatter(a > 0, b), a.take_along_dim(m.tensor([[0], [3], [1]]), 1))),
    ("cdist/kron/tensordot/cross", [(3, 4), (2, 4)], lambda m, a, b: (
        m.cdist(a, b), m.kron(a[:2, :2], b[:, :3]), m.tensordot(a, b, ([1], [1])),
        m.cross(a[:, :3], a[:, 1:]))),
    ("mode/unique/bincount/histc", [(3, 4)], lambda m, a: (
        *a.round().mode(1), *m.unique(a.round(), return_inverse=True, return_counts=True),
        m.bincount((a.abs() * 3).long().reshape(-1)), m.histc(a, bins=5),
        *a.round().reshape(-1).unique_consecutive(return_inverse=True, return_counts=True))),
    ("pdist/bilinear", [(4, 3), (5, 3, 2)], lambda m, a, w: (
        m.pdist(a), m.nn.functional.bilinear(a, a[:, :2], w))),
    ("linalg", [(3, 3), (3, 2)], lambda m, a, b: (
        m.linalg.inv(a), m.linalg.det(a), m.linalg.slogdet(a).logabsdet, m.linalg.solve(a, b),
        m.linalg.cholesky(a @ a.mT + 3 * m.tensor(np.eye(3))), m.linalg.svdvals(b),
        m.linalg.matrix_norm(a, 2), m.linalg.matrix_power(a, 0) + a)),
    ("linalg svd/qr/eigh", [(4, 3), (3, 4), (3, 3)], lambda m, a, w, s: (
        *m.linalg.svd(a), *m.linalg.svd(w, full_matrices=False), *m.svd(a, compute_uv=False),
        *m.linalg.qr(a), *m.linalg.qr(w, mode="complete"), *(t.detach() for t in m.linalg.qr(a, mode="r")),
        *m.linalg.eigh(s + s.mT), m.linalg.eigvalsh(s + s.mT, UPLO="U"))),
    ("linalg pinv/lstsq/matrix_rank", [(4, 3), (4, 2), (3, 3)], lambda m, a, b, s: (
        m.linalg.pinv(a), m.linalg.pinv(s + s.mT, hermitian=True), m.linalg.pinv(a, atol=m.tensor(0.1)),
        *m.linalg.lstsq(a, b, driver="gelsd"), *m.linalg.lstsq(a, b[:, 0], driver="gelsy"),
        m.linalg.matrix_rank(a), m.linalg.matrix_rank(s + s.mT, hermitian=True, rtol=0.3))),
    ("linalg matrix_exp/multi_dot/vander", [(3, 3), (3, 4), (4,)], lambda m, a, b, x: (
        m.linalg.matrix_exp(a), m.linalg.matrix_exp(4 * a), m.linalg.multi_dot([a, b, x]),
        m.linalg.vander(x), m.vander(x, 3), m.linalg.diagonal(b, offset=1))),
    ("rot90/tensor_split/addmm", [(3, 4), (4, 4)], lambda m, a, b: (
        a.rot90(1, (0, 1)), *a.tensor_split(3, 1), m.addmm(a[:, 0:1], a, b, beta=0.5, alpha=2.0))),
    ("lgamma/digamma/polygamma/mvlgamma", [(3, 4)], lambda m, a: (
        m.lgamma(a), m.digamma(a), m.polygamma(1, a), m.polygamma(3, a), m.mvlgamma(a.abs() + 2, 3))),
    ("erfinv/erfcx/ndtr/ndtri/log_ndtr", [(3, 4)], lambda m, a: (
        m.erfinv(a.tanh()), m.special.erfcx(a * 9), m.special.ndtr(a * 9), m.special.ndtri(a.sigmoid()),
        m.special.log_ndtr(a * 9))),
    ("i0/i0e/i1/i1e/entr/xlog1py/zeta", [(3, 4), (3, 4)], lambda m, a, b: (
        m.i0(a * 20), m.special.i0e(a), m.special.i1(a * 20), m.special.i1e(a), m.special.entr(b.abs()),
        m.special.xlog1py(a, b.abs()), m.special.zeta(3.0, b.abs() + 0.5))),
    ("alpha_dropout/rrelu/view(dtype)/squeeze_/t_", [(3, 4)], lambda m, a: (
        *_seeded_dropout(m, a), a.detach().view(m.int32), _reshaped_in_place(a * 1.0))),
]


def _seeded_dropout(m, x):
    m.manual_seed(0)  # the same draws in both runs
    functional = m.nn.functional
    return (functional.alpha_dropout(x, 0.3, True), functional.feature_alpha_dropout(x[None], 0.3, True),
            functional.rrelu(x, training=True), functional.rrelu(x))


def _reshaped_in_place(y):
    y.unsqueeze_(0).squeeze_(0).t_().transpose_(0, 1).swapaxes_(0, 1)
    return y * 2.0



@pytest.mark.parametrize(("name", "shapes", "fn"), [
    pytest.param(*case, id=case[0])
    for case in BREADTH])
def test_breadth_keeps_foreign_arrays(name, shapes, fn):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arrays = [sample(rng, shape, "distinct") for shape in shapes]
    check_same(run_twice(fn, arrays))


# --- in place, and __setitem__ ---------------------------------------------------------------------

INPLACE = [
    ("add_/mul_/sub_/div_", lambda m, a, b: a.clone().add_(b).mul_(b).sub_(2.0).div_(b)),
    ("+= and *=", lambda m, a, b: _iadd_imul(a.clone(), b)),
    ("zero_/fill_", lambda m, a, b: (a.clone().zero_() + b, a.clone().fill_(1.5) * b)),
    ("copy_", lambda m, a, b: a.clone().copy_(b[0]) * a),
    ("setitem(tensor)", lambda m, a, b: _setitem(a.clone(), (slice(None), 1), b[:, 0])),
    ("setitem(number)", lambda m, a, b: _setitem(a * b, (0, slice(1, 3)), 2.5)),
    ("setitem(index tensor)", lambda m, a, b: _setitem(a * 1.0, m.tensor([2, 0]), b[:2])),
    ("setitem(mask)", lambda m, a, b: _setitem(a * 1.0, m.tensor(MASK), 0.0)),
    ("clip_", lambda m, a, b: (a * b).clip_(-0.5, 0.5)),
    ("in place through views", lambda m, a, b: _through_views(a * 1.0, b)),
]


def _through_views(y, other):
    y[0] += other[0]
    y[:, 1].mul_(other[:, 2])
    y.T[2].zero_()
    y.view(12)[::5].fill_(1.5)
    return y


def _iadd_imul(t, other):
    t += other
    t *= other
    return t


def _setitem(t, key, value):
    t[key] = value
    return t


@pytest.mark.parametrize(("name", "fn"), INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_keeps_foreign_arrays(name, fn):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    check_same(run_twice(fn, [sample(rng, (3, 4), "positive"), sample(rng, (3, 4), "positive")]))


def test_inplace_without_grad_keeps_foreign_arrays():
    t = tg.from_numpy(foreign(np.ones((3, 4))))
    other = tg.from_numpy(foreign(np.full((3, 4), 2.0)))
    with tg.no_grad():
        t.add_(other).mul_(3.0).sub_(other).div_(2.0)
        t[0] = other[1]
        t[:, 1] = 7.0
        t[tg.from_numpy(foreign(np.array([2])))] = 0.5
        t.zero_()
        t.fill_(4.0)
        t.copy_(other)
    assert is_foreign(t.data) and (to_numpy(t.data) == 2.0).all()


def test_views_and_their_errors_on_foreign_arrays():
    t = tg.from_numpy(foreign(np.arange(12.0).reshape(3, 4)))
    assert is_foreign(t.view(4, 3).data) and is_foreign(t[:1].expand(3, 4).data)
    with pytest.raises(RuntimeError, match="not compatible"):
        t.T.view(12)
    with pytest.raises(RuntimeError, match="read-only"):
        t[:1].expand(3, 4).add_(1.0)


# --- creation and randomness on a foreign tensor -----------------------------------------------------


def test_like_forms_and_randomness_follow_a_foreign_tensor():
    t = tg.from_numpy(foreign(np.full((2, 3), 0.5)))
    made = [tg.zeros_like(t), tg.ones_like(t), tg.full_like(t, 2.0), tg.empty_like(t), tg.rand_like(t),
            tg.randn_like(t), tg.bernoulli(t), t.bernoulli(0.3), tg.multinomial(t, 2),
            tg.multinomial(t[0], 5, replacement=True), t.clone().normal_(), t.clone().uniform_(-1, 1),
            tg.tensor(foreign(np.arange(3.0))), tg.tensor(t.data, dtype=tg.float32)]
    for i, out in enumerate(made):
        assert is_foreign(out.data), f"result {i} is {type(out.data).__name__}"
    assert tg.zeros_like(t).dtype == tg.float64 and tg.full_like(t, 2.0).data.sum() == 12.0
    assert tg.zeros_like(t, device="cpu").data.__class__ is np.ndarray  # asked for the CPU: numpy


def test_random_numbers_are_the_same_on_either_kind_of_array():
    """Random numbers are drawn on the host, then moved: the same seed gives the same numbers."""
    draws = []
    for convert in (np.asarray, foreign):
        t = tg.from_numpy(convert(np.full((2, 3), 0.5)))
        tg.manual_seed(3)
        draws.append([to_numpy(x.data) for x in (tg.randn_like(t), tg.bernoulli(t), t.clone().normal_(),
                                                 tg.multinomial(t, 2))])
    for a, b in zip(*draws, strict=True):
        np.testing.assert_array_equal(a, b)


def test_gradcheck_runs_on_foreign_tensors():
    x = tg.from_numpy(foreign(np.array([[0.5, -1.5, 2.0], [1.0, 0.3, -0.7]]))).requires_grad_()
    assert tg.gradcheck(lambda t: (t.softmax(1) * t).cumsum(1).flip(0)[:, 1:], [x], elementwise=True)


def test_deepcopy_keeps_the_array_type_of_a_tensor_and_its_view():
    base = tg.tensor(np.arange(6.0).reshape(2, 3))
    base.data = foreign(base.data)
    view = base[0]
    copied_base, copied_view = copy.deepcopy([base, view])
    assert is_foreign(copied_base.data) and is_foreign(copied_view.data)
    np.testing.assert_array_equal(to_numpy(copied_view.data), [0.0, 1.0, 2.0])


def _mixes(gpu: tg.Tensor, cpu: tg.Tensor) -> dict:
    """Calls that put a tensor of each device into one op, by the op's name in the error."""
    image = tg.from_numpy(foreign(np.ones((1, 1, 4, 4))))
    return {
        "+ (add)": lambda: gpu + cpu,
        "* (multiply)": lambda: cpu * gpu,
        "matmul": lambda: gpu @ cpu.T,
        "linear": lambda: tg.nn.functional.linear(cpu, gpu),
        "cat": lambda: tg.cat([gpu, cpu]),
        "stack": lambda: tg.stack([cpu, gpu]),
        "where": lambda: tg.where(tg.ones(2, 3, dtype=tg.bool), cpu, gpu),
        "conv2d": lambda: tg.nn.functional.conv2d(image, tg.ones(1, 1, 3, 3, dtype=tg.float64)),
    }


@pytest.mark.parametrize("op", list(_mixes(tg.ones(1), tg.ones(1))))
def test_an_op_on_tensors_of_two_devices_names_both(op, monkeypatch):
    """A ForeignArray tensor reports "cuda:0" here: mixing it with a CPU tensor gives PyTorch's
    RuntimeError, naming the op, each argument, its device and its shape, not the array
    library's TypeError."""
    device_module = importlib.import_module("tensorgrad.device")  # (tg.device is the class)
    host = device_module.device_of
    monkeypatch.setattr(device_module, "device_of",
                        lambda array: tg.device("cuda", 0) if is_foreign(array) else host(array))
    gpu = tg.from_numpy(foreign(np.ones((2, 3))))
    cpu = tg.ones(2, 3, dtype=tg.float64)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device") as error:
        _mixes(gpu, cpu)[op]()
    message = str(error.value)
    assert message.startswith(f"{op}: ") and "cuda:0" in message and " on cpu with shape (" in message
