"""More of PyTorch's ops, each against PyTorch and float64 finite differences.

Every row is written once for both libraries (`m` is `tensorgrad` or `torch`, the other arguments
float64 inputs): the output's values, dtype and shape, and every input's gradient of a weighted
sum of the output, must match PyTorch's, and the gradient must match finite differences
(`tg.gradcheck`). Ops that return several tensors (`tensor_split`, `aminmax`, `kthvalue`, ...)
are compared piece by piece. The splits PyTorch returns as views must share the input's memory
with PyTorch's strides; the movements PyTorch copies (`rot90`, `fliplr`, `flipud`) must not write
through to the input. Ops without a gradient (`heaviside`, `signbit`, `isposinf`, `isneginf`,
`argwhere`) and integer or float32 inputs are compared on values and dtypes alone, and bad
arguments must raise the exception PyTorch raises.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

SHAPE = (3, 4, 5)
INF, NAN = float("inf"), float("nan")
INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]


def _q(m):
    """Quantiles that put no position half-way between two elements along a dim of 4 or 5."""
    return m.tensor([0.2, 0.55, 0.9], dtype=m.float64)


def _with_nans(x):
    """x with its 11 largest of 60 entries made nan; no slice along any dim is all nan."""
    return x.masked_fill(x > 0.805, NAN)


# name -> (function of (m, *inputs), the inputs' shapes, is a view in PyTorch)
CASES = {
    # elementwise
    "erfc": (lambda m, x: m.erfc(x * 8 - 3), (SHAPE,), False),
    "erfc method": (lambda m, x: (x * 4).erfc(), ((4, 5),), False),
    # movement
    "rot90": (lambda m, x: m.rot90(x), (SHAPE,), False),
    "rot90 k=-1": (lambda m, x: m.rot90(x, -1), (SHAPE,), False),
    "rot90 k=0": (lambda m, x: x.rot90(0), (SHAPE,), False),
    "rot90 k=1": (lambda m, x: m.rot90(x, k=1, dims=(0, 1)), (SHAPE,), False),
    "rot90 k=2": (lambda m, x: m.rot90(x, 2, (0, 1)), (SHAPE,), False),
    "rot90 k=3": (lambda m, x: x.rot90(3), (SHAPE,), False),
    "rot90 k=5": (lambda m, x: m.rot90(x, 5), (SHAPE,), False),
    "rot90 dims (1, 2)": (lambda m, x: m.rot90(x, 1, (1, 2)), (SHAPE,), False),
    "rot90 dims (1, 2) k=2": (lambda m, x: x.rot90(2, [1, 2]), (SHAPE,), False),
    "rot90 dims (1, 2) k=3": (lambda m, x: x.rot90(3, [1, 2]), (SHAPE,), False),
    "rot90 dims (2, 0) k=-1": (lambda m, x: m.rot90(x, -1, (2, 0)), (SHAPE,), False),
    "rot90 negative dims": (lambda m, x: m.rot90(x, 1, (-1, -2)), (SHAPE,), False),
    "fliplr": (lambda m, x: m.fliplr(x), (SHAPE,), False),
    "fliplr method": (lambda m, x: x.fliplr(), ((4, 5),), False),
    "fliplr one column": (lambda m, x: m.fliplr(x), ((4, 1),), False),
    "flipud": (lambda m, x: m.flipud(x), (SHAPE,), False),
    "flipud 1-D method": (lambda m, x: x.flipud(), ((5,),), False),
    "flipud one row": (lambda m, x: x.flipud(), ((1, 5),), False),
    "tensor_split sections": (lambda m, x: m.tensor_split(x, 3, dim=1), ((2, 7, 3),), True),
    "tensor_split sections default dim": (lambda m, x: x.tensor_split(2), (SHAPE,), True),
    "tensor_split more sections than elements": (lambda m, x: m.tensor_split(x, 5), (SHAPE,), True),
    "tensor_split indices": (lambda m, x: m.tensor_split(x, [1, 4], dim=1), ((2, 7, 3),), True),
    "tensor_split indices negative dim": (lambda m, x: x.tensor_split([1, 4], -1), (SHAPE,), True),
    "tensor_split indices past the end": (lambda m, x: x.tensor_split((2, 9), dim=1), ((2, 7, 3),), True),
    "tensor_split decreasing indices": (lambda m, x: m.tensor_split(x, [3, 1], dim=2), (SHAPE,), True),
    "hsplit sections": (lambda m, x: m.hsplit(x, 2), (SHAPE,), True),
    "hsplit indices": (lambda m, x: x.hsplit([1, 3]), (SHAPE,), True),
    "hsplit 1-D": (lambda m, x: m.hsplit(x, 5), ((10,),), True),
    "vsplit sections": (lambda m, x: m.vsplit(x, 3), (SHAPE,), True),
    "vsplit indices": (lambda m, x: x.vsplit([2]), (SHAPE,), True),
    "split_with_sizes": (lambda m, x: m.split_with_sizes(x, [1, 3, 1], dim=-1), (SHAPE,), True),
    "split_with_sizes method": (lambda m, x: x.split_with_sizes([2, 1]), (SHAPE,), True),
    # products
    "tensordot dims=2": (lambda m, x, y: m.tensordot(x, y, dims=2), (SHAPE, (4, 5, 2)), False),
    "tensordot default dims": (lambda m, x, y: m.tensordot(x, y), ((2, 3, 4), (3, 4)), False),
    "tensordot dims lists":
        (lambda m, x, y: m.tensordot(x, y, dims=([1, 0], [0, 1])), (SHAPE, (4, 3, 2)), False),
    "tensordot dims=0": (lambda m, x, y: m.tensordot(x, y, dims=0), ((2, 3), (4,)), False),
    "tensordot dims=1": (lambda m, x, y: m.tensordot(x, y, 1), ((3, 4), (4, 2, 2)), False),
    "kron 2-D": (lambda m, x, y: m.kron(x, y), ((2, 3), (3, 2)), False),
    "kron 1-D and 2-D": (lambda m, x, y: m.kron(x, y), ((3,), (2, 4)), False),
    "kron 2-D and 1-D method": (lambda m, x, y: x.kron(y), ((2, 4), (3,)), False),
    "kron 3-D and 2-D": (lambda m, x, y: m.kron(x, y), ((2, 1, 3), (2, 2)), False),
    "cross": (lambda m, x, y: m.cross(x, y, dim=-1), ((4, 3), (4, 3)), False),
    "cross dim 0 method": (lambda m, x, y: x.cross(y, dim=0), ((3, 4), (3, 4)), False),
    "linalg.cross": (lambda m, x, y: m.linalg.cross(x, y), ((4, 3), (4, 3)), False),
    "linalg.cross broadcast": (lambda m, x, y: m.linalg.cross(x, y), ((2, 4, 3), (1, 4, 3)), False),
    "linalg.cross dim": (lambda m, x, y: m.linalg.cross(x, y, dim=0), ((3, 2), (3, 2)), False),
    "addmm broadcast input": (lambda m, z, x, y: m.addmm(z, x, y, beta=0.5, alpha=2.0),
                              ((4,), (3, 5), (5, 4)), False),
    "addmm method": (lambda m, z, x, y: z.addmm(x, y), ((3, 4), (3, 5), (5, 4)), False),
    "addmm column input": (lambda m, z, x, y: m.addmm(z, x, y, alpha=-1.5), ((3, 1), (3, 5), (5, 4)), False),
    "addcmul": (lambda m, x, y, z: m.addcmul(x, y, z, value=0.3), ((3, 4), (3, 4), (3, 4)), False),
    "addcmul default value": (lambda m, x, y, z: m.addcmul(x, y, z), ((3, 4), (3, 4), (3, 4)), False),
    "addcmul broadcast method":
        (lambda m, x, y, z: x.addcmul(y, z, value=0.3), ((3, 4), (3, 1), (4,)), False),
    "addcdiv": (lambda m, x, y, z: m.addcdiv(x, y, z + 0.5, value=-2.0), ((3, 4), (3, 4), (3, 4)), False),
    "addcdiv broadcast method":
        (lambda m, x, y, z: x.addcdiv(y, z + 0.5, value=-2.0), ((4,), (3, 4), (3, 1)), False),
    # reductions
    "aminmax": (lambda m, x: m.aminmax(x), (SHAPE,), False),
    "aminmax dim keepdim": (lambda m, x: m.aminmax(x, dim=1, keepdim=True), (SHAPE,), False),
    "aminmax .max": (lambda m, x: x.aminmax(dim=-1).max, (SHAPE,), False),
    "aminmax .min": (lambda m, x: m.aminmax(x, dim=0).min, (SHAPE,), False),
    "kthvalue": (lambda m, x: m.kthvalue(x, 2, dim=-1, keepdim=False), (SHAPE,), False),
    "kthvalue keepdim method": (lambda m, x: x.kthvalue(3, 1, True), (SHAPE,), False),
    "kthvalue default dim": (lambda m, x: x.kthvalue(1), (SHAPE,), False),
    "kthvalue .values": (lambda m, x: m.kthvalue(x, 3, dim=0).values, (SHAPE,), False),
    "quantile q float": (lambda m, x: m.quantile(x, 0.3), (SHAPE,), False),
    "quantile q float keepdim": (lambda m, x: m.quantile(x, 0.7, keepdim=True), (SHAPE,), False),
    "quantile q float dim": (lambda m, x: m.quantile(x, 0.3, dim=1), (SHAPE,), False),
    "quantile q float dim keepdim": (lambda m, x: x.quantile(0.3, dim=1, keepdim=True), (SHAPE,), False),
    "quantile q tensor": (lambda m, x: m.quantile(x, _q(m)), (SHAPE,), False),
    "quantile q tensor dim": (lambda m, x: m.quantile(x, _q(m), dim=1), (SHAPE,), False),
    "quantile q tensor keepdim": (lambda m, x: x.quantile(_q(m), dim=-1, keepdim=True), (SHAPE,), False),
    "quantile q 0 and 1": (lambda m, x: m.quantile(x, m.tensor([1.0, 0.0], dtype=m.float64), dim=0),
                           (SHAPE,), False),
    **{f"quantile {how}": (lambda m, x, how=how: m.quantile(x, _q(m), dim=1, keepdim=True, interpolation=how),
                           (SHAPE,), False) for how in INTERPOLATIONS},
    **{f"quantile {how} q float": (lambda m, x, how=how: x.quantile(0.3, dim=2, interpolation=how),
                                   (SHAPE,), False) for how in INTERPOLATIONS},
    "nanquantile": (lambda m, x: m.nanquantile(_with_nans(x), 0.4, dim=1), (SHAPE,), False),
    "nanquantile flat": (lambda m, x: m.nanquantile(_with_nans(x), _q(m)), (SHAPE,), False),
    "nanquantile without nans": (lambda m, x: x.nanquantile(0.3, dim=0, keepdim=True), (SHAPE,), False),
    **{f"nanquantile {how}": (lambda m, x, how=how: _with_nans(x).nanquantile(
        _q(m), dim=2, keepdim=True, interpolation=how), (SHAPE,), False) for how in INTERPOLATIONS},
    "nanmedian": (lambda m, x: m.nanmedian(_with_nans(x)), (SHAPE,), False),
    "nanmedian without nans": (lambda m, x: x.nanmedian(), (SHAPE,), False),
    "nanmedian dim 0": (lambda m, x: m.nanmedian(_with_nans(x), dim=0), (SHAPE,), False),
    "nanmedian dim keepdim method": (lambda m, x: _with_nans(x).nanmedian(2, keepdim=True), (SHAPE,), False),
    "nanmedian .values": (lambda m, x: m.nanmedian(_with_nans(x), dim=1).values, (SHAPE,), False),
    "msort": (lambda m, x: m.msort(x), (SHAPE,), False),
    "msort method": (lambda m, x: x.msort(), ((5, 4),), False),
    **{f"cdist p={p}": (lambda m, x, y, p=p: m.cdist(x, y, p=p), ((5, 3), (4, 3)), False)
       for p in (1.0, 2.0, 3.0)},
    **{f"cdist batched p={p}": (lambda m, x, y, p=p: m.cdist(x, y, p), ((2, 5, 3), (2, 4, 3)), False)
       for p in (1.0, 2.0, 3.0)},
    "cdist default p": (lambda m, x, y: m.cdist(x, y), ((5, 3), (4, 3)), False),
    "cdist broadcast batch": (lambda m, x, y: m.cdist(x, y, p=3.0), ((5, 3), (2, 4, 3)), False),
    # indexing
    "index_add repeated index":
        (lambda m, x, y: m.index_add(x, 1, m.tensor([0, 2, 0]), y, alpha=2.0), (SHAPE, (3, 3, 5)), False),
    "index_add method dim 0":
        (lambda m, x, y: x.index_add(0, m.tensor([2, 2]), y, alpha=2.0), (SHAPE, (2, 4, 5)), False),
    "index_add default alpha":
        (lambda m, x, y: m.index_add(x, -1, m.tensor([4, 1, 4, 4]), y), (SHAPE, (3, 4, 4)), False),
    "index_copy": (lambda m, x, y: m.index_copy(x, 2, m.tensor([4, 0]), y), (SHAPE, (3, 4, 2)), False),
    "index_copy method": (lambda m, x, y: x.index_copy(0, m.tensor([1]), y), (SHAPE, (1, 4, 5)), False),
    "index_fill": (lambda m, x: m.index_fill(x, 1, m.tensor([0, 3]), -1.5), (SHAPE,), False),
    "index_fill method repeated": (lambda m, x: x.index_fill(-1, m.tensor([2, 2, 0]), 0.25), (SHAPE,), False),
    "masked_scatter": (lambda m, x, y: m.masked_scatter(x, x > 0.61, y), (SHAPE, (6, 7)), False),
    "masked_scatter broadcast mask method":
        (lambda m, x, y: x.masked_scatter(x[0] > 0.51, y), (SHAPE, (6, 7)), False),
    "take_along_dim": (lambda m, x: m.take_along_dim(x, x.argsort(dim=1), dim=1), (SHAPE,), False),
    "take_along_dim broadcast index":
        (lambda m, x: m.take_along_dim(x, m.tensor([[[3], [0], [3]]]), dim=1), (SHAPE,), False),
    "take_along_dim flat": (lambda m, x: m.take_along_dim(x, m.tensor([0, 59, 7, 7])), (SHAPE,), False),
    "take_along_dim method": (lambda m, x: x.take_along_dim(m.tensor([[[4, 0]]]), dim=-1), (SHAPE,), False),
}

COPIES = [name for name in CASES if name.startswith(("rot90", "fliplr", "flipud"))]


def _input(shape, i, layout):
    """Distinct values in [0, 1); input i is offset by 0.37 i / size so no two inputs share a value."""
    size = int(np.prod(shape))
    values = (np.random.default_rng(7 + i).permutation(size).reshape(shape) + 0.37 * i) / size
    if layout == "transposed":  # the same values, a non-contiguous layout
        values = np.ascontiguousarray(values.T).T
    return values


def _pieces(out):
    """The tensors an op returned: the tuple's items, or the one tensor."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _dtype_name(dtype):
    return str(dtype).removeprefix("torch.") if "torch" in str(dtype) else np.dtype(dtype).name


def _is_float(piece):
    return _dtype_name(piece.dtype).startswith("float")


def _joined(out):
    """One tensor of every floating piece, for gradcheck."""
    pieces = [p.reshape(-1) for p in _pieces(out) if _is_float(p)]
    return pieces[0] if len(pieces) == 1 else tg.cat(pieces)


def _compare(ours, theirs, rtol=1e-12):
    """Same kind of result, number of pieces, and each piece's shape, dtype and values."""
    assert isinstance(ours, (tuple, list)) == isinstance(theirs, (tuple, list))
    ours, theirs = _pieces(ours), _pieces(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == tuple(b.shape)
        assert _dtype_name(a.dtype) == _dtype_name(b.dtype)
        expected = b.detach().numpy()
        if _is_float(b):
            np.testing.assert_allclose(a.data, expected, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(a.data, expected)


def _weights(out):
    rng = np.random.default_rng(1)
    return [np.asarray(rng.standard_normal(p.shape)) for p in _pieces(out)]


def _weighted_sum(out, weights, wrap):
    return sum((p * wrap(w)).sum() for p, w in zip(_pieces(out), weights, strict=True) if _is_float(p))


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_and_finite_differences(name, layout):
    build, shapes, _ = CASES[name]
    values = [_input(shape, i, layout) for i, shape in enumerate(shapes)]
    xs = [tg.from_numpy(v.copy() if layout == "contiguous" else v).requires_grad_() for v in values]
    # PyTorch keeps numpy's strides, and its kron fails on some non-contiguous inputs: give it copies
    txs = [torch.tensor(np.ascontiguousarray(v), requires_grad=True) for v in values]
    out, tout = build(tg, *xs), build(torch, *txs)
    _compare(out, tout)
    weights = _weights(tout)
    _weighted_sum(out, weights, tg.from_numpy).backward()
    _weighted_sum(tout, weights, torch.from_numpy).backward()
    for x, tx in zip(xs, txs, strict=True):
        grad = np.zeros(x.shape) if x.grad is None else x.grad
        expected = np.zeros(x.shape) if tx.grad is None else tx.grad.numpy()
        np.testing.assert_allclose(grad, expected, rtol=1e-10, atol=1e-12)
    leaves = [tg.tensor(v.copy(), requires_grad=True) for v in values]
    assert tg.gradcheck(lambda *ts: _joined(build(tg, *ts)), leaves)


@pytest.mark.parametrize("name", [n for n, (_, _, view) in CASES.items() if view])
def test_splits_are_views_with_pytorchs_strides(name):
    build, shapes, _ = CASES[name]
    values = _input(shapes[0], 0, "contiguous")
    x = tg.from_numpy(values.copy())
    pieces, theirs = _pieces(build(tg, x)), _pieces(build(torch, torch.tensor(values)))
    assert len(pieces) == len(theirs)
    for piece, their in zip(pieces, theirs, strict=True):
        if piece.numel():
            assert np.shares_memory(piece.data, x.data)
        assert piece.stride() == their.stride()
        assert piece._version == x._version and piece._versions is x._versions


@pytest.mark.parametrize("name", COPIES)
def test_rotations_and_flips_copy_as_in_pytorch(name):
    build, shapes, _ = CASES[name]
    values = _input(shapes[0], 0, "contiguous")
    for m, x in ((torch, torch.tensor(values)), (tg, tg.from_numpy(values.copy()))):
        build(m, x).add_(1.0)
        np.testing.assert_array_equal(x.numpy(), values)


# name -> function of m; no gradients: values, dtypes and shapes only
VALUE_CASES = {
    "heaviside": lambda m: m.heaviside(m.tensor([-1.5, 0.0, -0.0, 2.0, 0.0, INF, -INF]),
                                       m.tensor([0.5, 0.25, 0.75, 0.1, 1.0, 0.3, 0.6])),
    "heaviside broadcast method":
        lambda m: m.tensor([[-1.0, 0.0], [0.0, 3.0]]).heaviside(m.tensor([0.5, 7.0])),
    "heaviside float64 0-d values":
        lambda m: m.heaviside(m.tensor([0.0, 1.0, -2.0], dtype=m.float64), m.tensor(0.5, dtype=m.float64)),
    "heaviside int": lambda m: m.heaviside(m.tensor([-2, 0, 3]), m.tensor([5])),
    "signbit": lambda m: m.signbit(m.tensor([-0.0, 0.0, -1.5, 2.0, -INF, INF, -1e-300])),
    "signbit float64": lambda m: m.tensor([-0.0, 3.0, -2.0], dtype=m.float64).signbit(),
    "signbit int method": lambda m: m.tensor([-3, 0, 4]).signbit(),
    "isposinf": lambda m: m.isposinf(m.tensor([INF, -INF, NAN, 1.0, 0.0, 3e38])),
    "isposinf method float64": lambda m: m.tensor([[INF, -INF], [NAN, 1e308]], dtype=m.float64).isposinf(),
    "isposinf int": lambda m: m.isposinf(m.tensor([1, -2])),
    "isneginf": lambda m: m.isneginf(m.tensor([INF, -INF, NAN, -1.0, -0.0, -3e38])),
    "isneginf method float64": lambda m: m.tensor([[INF, -INF], [NAN, -1e308]], dtype=m.float64).isneginf(),
    "isneginf int": lambda m: m.isneginf(m.tensor([-1, 2])),
    "argwhere": lambda m: m.argwhere(m.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])),
    "argwhere 3-D bool method": lambda m: (m.arange(24).reshape(2, 3, 4) % 5 == 0).argwhere(),
    "argwhere 1-D": lambda m: m.tensor([0, 3, 0, 2]).argwhere(),
    "argwhere nothing": lambda m: m.argwhere(m.zeros(2, 3)),
    "argwhere 0-d": lambda m: m.argwhere(m.tensor(3.0)),
    "argwhere nan counts": lambda m: m.argwhere(m.tensor([NAN, 0.0, -0.0, 1.0])),
    "erfc int": lambda m: m.erfc(m.tensor([0, 1, 3])),
    "erfc float32": lambda m: m.tensor([-1.0, 0.5, 4.0]).erfc(),
    "erfc infinities": lambda m: m.erfc(m.tensor([INF, -INF, NAN], dtype=m.float64)),
    "rot90 int": lambda m: m.arange(6).reshape(2, 3).rot90(),
    "tensor_split int": lambda m: m.tensor_split(m.arange(7), 3),
    "kron int": lambda m: m.kron(m.tensor([[1, 2]]), m.tensor([[0, 1], [1, 0]])),
    "cross int": lambda m: m.cross(m.tensor([[1, 0, 0], [1, 2, 3]]), m.tensor([[0, 1, 0], [4, 5, 6]]), dim=1),
    "tensordot float32": lambda m: m.tensordot(m.ones(2, 3), m.ones(3), dims=1),
    "aminmax int": lambda m: m.aminmax(m.tensor([[3, -1], [7, 2]]), dim=0),
    "aminmax .min .max": lambda m: (m.aminmax(m.tensor([4.0, -2.0, 9.0])).min,
                                    m.aminmax(m.tensor([4.0, -2.0, 9.0])).max),
    "kthvalue .indices":
        lambda m: m.kthvalue(m.tensor([[3.0, 1.0, 2.0], [0.5, 9.0, -1.0]]), 2, dim=1).indices,
    "kthvalue int": lambda m: m.tensor([[5, 1, 3], [0, 8, 6]]).kthvalue(2),
    "quantile nearest ties to even": lambda m: (
        m.quantile(m.tensor([0.0, 1.0, 2.0, 3.0]), 0.5, interpolation="nearest"),
        m.quantile(m.arange(6.0), 0.5, interpolation="nearest")),
    "quantile float32": lambda m: m.quantile(m.tensor([[1.0, 4.0, 2.0]]), m.tensor([0.25, 0.5]), dim=1),
    "quantile 0-d q tensor": lambda m: m.quantile(m.tensor([1.0, 4.0, 2.0]), m.tensor(0.75)),
    "quantile nan propagates": lambda m: m.quantile(m.tensor([[1.0, NAN, 3.0], [1.0, 2.0, 3.0]]), 0.5, dim=1),
    "nanquantile all-nan row": lambda m: m.nanquantile(m.tensor([[NAN, NAN], [1.0, 2.0]]), 0.5, dim=1),
    "nanmedian all nan": lambda m: m.nanmedian(m.tensor([NAN, NAN])),
    "nanmedian lower middle and indices":
        lambda m: m.nanmedian(m.tensor([[NAN, 2.0, 1.0, 5.0, 3.0], [4.0, NAN, NAN, NAN, NAN]]), dim=1),
    "msort int": lambda m: m.msort(m.tensor([[3, 1], [1, 2], [2, 0]])),
    "cdist float32": lambda m: m.cdist(m.tensor([[0.0, 0.0], [1.0, 1.0]]), m.tensor([[3.0, 4.0]])),
    "cdist p=0":
        lambda m: m.cdist(m.tensor([[0.0, 1.0, 2.0]]), m.tensor([[0.0, 2.0, 3.0], [0.0, 1.0, 2.0]]), p=0),
    "cdist p=inf": lambda m: m.cdist(m.tensor([[0.0, 1.0, 2.0]]), m.tensor([[0.5, 3.0, 1.0]]), p=INF),
    "index_add int":
        lambda m: m.zeros(3, dtype=m.int64).index_add(0, m.tensor([0, 0, 2]), m.tensor([1, 2, 3])),
    "index_fill int": lambda m: m.tensor([[1, 2], [3, 4]]).index_fill(1, m.tensor([0]), -7),
    "index_copy int": lambda m: m.zeros(2, 3, dtype=m.int64).index_copy(1, m.tensor([2, 0]),
                                                                        m.tensor([[1, 2], [3, 4]])),
    "masked_scatter values": lambda m: m.zeros(2, 3).masked_scatter(
        m.tensor([[True, False, True], [False, True, False]]), m.tensor([1.0, 2.0, 3.0, 4.0])),
    "take_along_dim int": lambda m: m.take_along_dim(m.tensor([[10, 20, 30]]), m.tensor([[2, 0]]), dim=1),
    "addcmul int": lambda m: m.addcmul(m.tensor([1, 2]), m.tensor([3, 4]), m.tensor([5, 6]), value=2),
    "addmm float32": lambda m: m.addmm(m.ones(2), m.ones(3, 4), m.ones(4, 2), beta=0.5, alpha=2.0),
}


@pytest.mark.parametrize("name", list(VALUE_CASES))
def test_values_and_dtypes_match_pytorch(name):
    ours, theirs = VALUE_CASES[name](tg), VALUE_CASES[name](torch)
    _compare(ours, theirs, rtol=1e-6)


def test_signbit_of_negative_zero_is_true():
    assert tg.signbit(tg.tensor([-0.0, 0.0])).tolist() == [True, False]


def test_heaviside_picks_values_where_x_is_zero():
    out = tg.heaviside(tg.tensor([0.0, -0.0, 0.0, 3.0, -3.0]), tg.tensor([0.25, 0.5, 0.75, 0.1, 0.9]))
    assert out.tolist() == [0.25, 0.5, 0.75, 1.0, 0.0]


def test_erfc_keeps_relative_precision_far_in_the_tail():
    values = np.array([5.0, 10.0, 15.0, 20.0, 26.0, -4.0, 0.25])
    x, tx = tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, tout = tg.erfc(x), torch.erfc(tx)
    assert (out.data[:5] > 0).all()  # 1 - erf(x) is exactly 0 from x = 6 on
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12, atol=0)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12, atol=0)


def test_named_tuples_read_by_name_and_unpack():
    x = tg.tensor([[3.0, 1.0, 2.0], [0.5, 9.0, -1.0]])
    low, high = tg.aminmax(x, dim=1)
    assert low.tolist() == [1.0, -1.0] and high.tolist() == [3.0, 9.0]
    result = x.aminmax()
    assert result.min.item() == -1.0 and result.max.item() == 9.0
    kth = x.kthvalue(2, dim=1)
    assert kth.values.tolist() == [2.0, 0.5] and kth.indices.tolist() == [2, 0]
    values, indices = kth
    assert values.tolist() == kth[0].tolist() and indices.tolist() == kth[1].tolist()
    median = tg.nanmedian(tg.tensor([[NAN, 2.0, 1.0]]), dim=1)
    assert median.values.tolist() == [1.0] and median.indices.tolist() == [2]


# name -> (function of m, the exception PyTorch raises)
BAD_ARGUMENTS = {
    "cross dim of size 4": (lambda m: m.cross(m.zeros(4, 3), m.zeros(4, 3), dim=0), RuntimeError),
    "linalg.cross last dim of size 4": (lambda m: m.linalg.cross(m.zeros(3, 4), m.zeros(3, 4)), RuntimeError),
    "kthvalue k past the end": (lambda m: m.zeros(3, 4).kthvalue(5, 1), RuntimeError),
    "kthvalue k=0": (lambda m: m.kthvalue(m.zeros(3, 4), 0), RuntimeError),
    "quantile q above 1": (lambda m: m.quantile(m.zeros(3, 4), 1.5), RuntimeError),
    "quantile q tensor below 0":
        (lambda m: m.zeros(3, 4).quantile(m.tensor([-0.1, 0.5]), dim=1), RuntimeError),
    "nanquantile q below 0": (lambda m: m.nanquantile(m.zeros(3, 4), -0.5), RuntimeError),
    "quantile unknown interpolation":
        (lambda m: m.zeros(3, 4).quantile(0.5, interpolation="cubic"), RuntimeError),
    "index_add source of the wrong shape":
        (lambda m: m.zeros(3, 4).index_add(0, m.tensor([0, 1]), m.zeros(2, 5)), RuntimeError),
    "index_add fewer indices than source rows":
        (lambda m: m.zeros(3, 4).index_add(0, m.tensor([0, 1]), m.zeros(3, 4)), RuntimeError),
    "tensordot contracted sizes differ":
        (lambda m: m.tensordot(m.zeros(3, 4), m.zeros(5, 2), dims=1), RuntimeError),
    "tensordot dims lists, contracted sizes differ":
        (lambda m: m.tensordot(m.zeros(3, 4), m.zeros(4, 3), dims=([0, 1], [0, 1])), RuntimeError),
    "rot90 equal dims": (lambda m: m.zeros(3, 4).rot90(1, (0, 0)), RuntimeError),
    "rot90 equal dims, one negative": (lambda m: m.rot90(m.zeros(3, 4), 1, (0, -2)), RuntimeError),
    "rot90 of 1-D": (lambda m: m.zeros(4).rot90(), RuntimeError),
    "tensor_split 0 sections": (lambda m: m.zeros(3, 4).tensor_split(0), RuntimeError),
    "hsplit not divisible": (lambda m: m.zeros(3, 4).hsplit(3), RuntimeError),
    "vsplit of 1-D": (lambda m: m.vsplit(m.zeros(4), 2), RuntimeError),
    "fliplr of 1-D": (lambda m: m.zeros(4).fliplr(), RuntimeError),
    "flipud of 0-d": (lambda m: m.flipud(m.zeros(())), RuntimeError),
    "split_with_sizes not summing to the size":
        (lambda m: m.zeros(3, 4).split_with_sizes([1, 2], 1), RuntimeError),
    "masked_scatter source too small":
        (lambda m: m.zeros(3, 4).masked_scatter(m.ones(3, 4, dtype=m.bool), m.zeros(5)), RuntimeError),
    "cdist columns differ": (lambda m: m.cdist(m.zeros(3, 4), m.zeros(2, 3)), RuntimeError),
    "cdist of 1-D": (lambda m: m.cdist(m.zeros(3), m.zeros(3)), RuntimeError),
    "addmm shapes differ": (lambda m: m.addmm(m.zeros(4), m.zeros(3, 5), m.zeros(4, 4)), RuntimeError),
    "index_copy fewer indices than source rows":
        (lambda m: m.zeros(3, 4).index_copy(0, m.tensor([0, 1]), m.zeros(3, 4)), IndexError),
    "index_fill index out of range": (lambda m: m.zeros(3, 4).index_fill(0, m.tensor([3]), 1.0), IndexError),
    "aminmax of an empty tensor": (lambda m: m.zeros(3, 0).aminmax(), RuntimeError),
    "aminmax dim out of range": (lambda m: m.zeros(3, 4).aminmax(dim=2), IndexError),
    "heaviside dtypes differ": (lambda m: m.heaviside(m.zeros(3), m.zeros(3, dtype=m.int64)), RuntimeError),
}


@pytest.mark.parametrize("name", list(BAD_ARGUMENTS))
def test_bad_arguments_raise_pytorchs_error(name):
    build, error = BAD_ARGUMENTS[name]
    with pytest.raises(error):
        build(torch)
    with pytest.raises(error):
        build(tg)
