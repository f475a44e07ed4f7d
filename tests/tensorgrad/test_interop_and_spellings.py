"""Interop and PyTorch's remaining spellings, against PyTorch.

`asarray`, DLPack both ways (memory shared with torch), `frombuffer`, `empty_strided`; `dsplit` and
the unsafe splits; `real`, `imag`, `angle`; the deterministic-algorithms switches; torch's in-place
functions (`tg.relu_(x)`) and the in-place number-theory methods; `gradient`. Values, dtypes,
gradients and error types are PyTorch's; gradients of float64 inputs are also checked against
finite differences, and every differentiable op runs on the GPU stand-in (`ForeignArray`).
"""

from __future__ import annotations

import numpy as np
import pytest
from foreign_array import is_foreign
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _torch(t: tg.Tensor, requires_grad: bool = False):
    """A torch copy of a tensorgrad tensor."""
    return torch.tensor(np.array(t.data), requires_grad=requires_grad)


def _same(tg_tensor: tg.Tensor, torch_tensor, atol: float = 1e-6) -> None:
    theirs = torch_tensor.detach().numpy()
    assert tg_tensor.dtype == theirs.dtype, (tg_tensor.dtype, torch_tensor.dtype)
    assert tuple(tg_tensor.shape) == tuple(torch_tensor.shape)
    np.testing.assert_allclose(np.asarray(tg_tensor.data), theirs, rtol=1e-6, atol=atol)


# --- asarray --------------------------------------------------------------------------------------


def test_asarray_shares_a_numpy_array_and_copies_when_the_dtype_changes():
    a = np.arange(4.0)
    shared, reference = tg.asarray(a), torch.asarray(a)
    assert shared.dtype == np.float64 and np.shares_memory(shared.data, a)
    a[0] = 9.0
    assert shared.data[0] == 9.0 == reference[0].item()
    converted = tg.asarray(a, dtype=tg.float32)
    assert converted.dtype == np.float32 and not np.shares_memory(converted.data, a)
    assert not np.shares_memory(tg.asarray(a, copy=True).data, a)
    strided = tg.asarray(a[::2])
    assert strided.stride() == torch.asarray(a[::2]).stride() and np.shares_memory(strided.data, a)
    for call in (torch.asarray, tg.asarray):
        with pytest.raises(ValueError):
            call(a, dtype=torch.float32 if call is torch.asarray else tg.float32, copy=False)
    leaf = tg.asarray(a, requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and np.shares_memory(leaf.data, a)


@pytest.mark.parametrize("obj", [[1, 2], [1.0, 2.5], 3.0, True, [True, False], (1.5, True), [[1, 2], [3, 4]],
                                 np.float64(2.0), np.int32(2)], ids=repr)
def test_asarray_of_numbers_and_sequences_has_torchs_dtype(obj):
    _same(tg.asarray(obj), torch.asarray(obj))


def test_asarray_of_a_sequence_refuses_copy_false_and_ragged_lists():
    with pytest.raises(ValueError):
        torch.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="asarray"):
        tg.asarray([1, 2], copy=False)
    with pytest.raises(ValueError):
        tg.asarray([[1, 2], [3]])
    rows = [[1, 2], [3, 4]]
    _same(tg.asarray(rows, dtype=tg.float64), torch.asarray(rows, dtype=torch.float64))


@pytest.mark.filterwarnings("ignore:torch.asarray")
@pytest.mark.parametrize("options", [{}, {"requires_grad": False}, {"requires_grad": True},
                                     {"dtype": "float64"}, {"dtype": "float64", "requires_grad": True},
                                     {"copy": True}, {"copy": True, "requires_grad": False}], ids=str)
@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "inner"])
def test_asarray_of_a_tensor_follows_torch(options, leaf):
    def run(lib):
        base = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = base if leaf else base * 2
        kwargs = {k: getattr(lib, v) if k == "dtype" else v for k, v in options.items()}
        out = lib.asarray(x, **kwargs)
        if out.requires_grad and out is not base:
            (out * out).sum().backward()
        return base, x, out

    base, x, out = run(tg)
    tbase, tx, tout = run(torch)
    assert (out is x) == (tout is tx)
    assert out.requires_grad == tout.requires_grad and x.requires_grad == tx.requires_grad
    assert (out.op != "") == (tout.grad_fn is not None)
    assert np.shares_memory(out.data, x.data) == (tout.data_ptr() == tx.data_ptr())
    _same(out, tout)
    if tbase.grad is None:
        assert base.grad is None
    else:
        np.testing.assert_allclose(base.grad, tbase.grad.numpy())


def test_asarray_refuses_what_it_cant_alias_and_what_cant_require_grad():
    x = tg.ones(2)
    assert tg.asarray(x, copy=False) is x and tg.asarray(x, dtype=tg.float32, copy=False) is x
    with pytest.raises(ValueError, match="float32.*float64"):
        tg.asarray(x, dtype=tg.float64, copy=False)
    with pytest.raises(RuntimeError):
        torch.asarray(torch.tensor([1, 2]), requires_grad=True)
    with pytest.raises(RuntimeError):
        tg.asarray(tg.tensor([1, 2]), requires_grad=True)


def test_asarray_reads_a_buffer_as_frombuffer_and_shares_a_torch_tensors_memory():
    raw = bytearray(np.arange(3, dtype=np.float32).tobytes())
    _same(tg.asarray(raw), torch.asarray(raw))
    two = b"\x01\x02"
    _same(tg.asarray(bytearray(two), dtype=tg.uint8), torch.asarray(bytearray(two), dtype=torch.uint8))
    with pytest.raises(ValueError):
        tg.asarray(bytearray(b"\x01\x02"))  # two bytes are no float32
    source = torch.arange(4.0)
    shared = tg.asarray(source)
    source[1] = 7.0
    assert shared.data[1] == 7.0 and shared.dtype == np.float32


# --- DLPack ---------------------------------------------------------------------------------------


def test_dlpack_shares_memory_both_ways_with_torch():
    source = torch.arange(6.0).reshape(2, 3)
    mine = tg.from_dlpack(source)
    assert mine.shape == (2, 3) and mine.dtype == np.float32
    mine.data[0, 0] = 42.0
    assert source[0, 0].item() == 42.0
    source[1, 2] = -1.0
    assert mine.data[1, 2] == -1.0

    x = tg.arange(6, dtype=tg.float64).reshape(2, 3)
    theirs = torch.from_dlpack(x)
    assert theirs.dtype == torch.float64 and theirs.data_ptr() == x.data_ptr()
    theirs[0, 1] = 5.0
    assert x.data[0, 1] == 5.0
    transposed = torch.from_dlpack(x.T)  # a strided view travels with its strides
    assert transposed.stride() == x.T.stride() and transposed.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(transposed.numpy(), x.T.data)
    assert x.__dlpack_device__() == torch.ones(1).__dlpack_device__() == (1, 0)


def test_dlpack_takes_numpy_arrays_and_capsules_and_refuses_tensors_that_require_grad():
    a = np.arange(3.0)
    mine = tg.from_dlpack(a)
    a[2] = 8.0
    assert mine.data[2] == 8.0
    capsule = tg.utils.dlpack.to_dlpack(tg.from_numpy(a))
    back = tg.utils.dlpack.from_dlpack(capsule)
    assert np.shares_memory(back.data, a)
    from_torch = tg.from_dlpack(torch.utils.dlpack.to_dlpack(torch.tensor([1, 2, 3], dtype=torch.int32)))
    assert from_torch.dtype == np.int32 and from_torch.tolist() == [1, 2, 3]
    assert torch.utils.dlpack.from_dlpack(tg.utils.dlpack.to_dlpack(tg.tensor([4.0]))).tolist() == [4.0]
    assert torch.from_dlpack(tg.to_dlpack(tg.tensor([5.0]))).tolist() == [5.0]  # torch.to_dlpack's spelling
    assert not np.shares_memory(tg.from_dlpack(a, copy=True).data, a)
    with pytest.raises(BufferError):
        torch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError, match="require"):
        torch.from_dlpack(tg.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="from_dlpack"):
        tg.from_dlpack([1, 2])


# --- frombuffer and empty_strided -----------------------------------------------------------------


def test_frombuffer_shares_the_buffer_as_torch():
    raw = bytearray(np.arange(6, dtype=np.float32).tobytes())
    mine = tg.frombuffer(raw, dtype=tg.float32, count=2, offset=8)
    theirs = torch.frombuffer(bytearray(raw), dtype=torch.float32, count=2, offset=8)
    _same(mine, theirs)
    mine.data[0] = 100.0
    assert np.frombuffer(raw, np.float32)[2] == 100.0
    _same(tg.frombuffer(raw, dtype=tg.int16), torch.frombuffer(bytearray(raw), dtype=torch.int16))
    _same(tg.frombuffer(raw, dtype=tg.float32, count=-2),
          torch.frombuffer(bytearray(raw), dtype=torch.float32, count=-2))
    assert tg.frombuffer(raw, dtype=tg.float64, requires_grad=True).requires_grad


@pytest.mark.parametrize("options", [{"count": 0}, {"count": 10}, {"offset": -1}, {"offset": 24},
                                     {"offset": 2}], ids=str)
def test_frombuffer_refuses_bad_counts_and_offsets_with_torchs_error(options):
    raw = bytearray(24)
    with pytest.raises(ValueError):
        torch.frombuffer(raw, dtype=torch.float32, **options)
    with pytest.raises(ValueError, match="frombuffer"):
        tg.frombuffer(raw, dtype=tg.float32, **options)


def test_frombuffer_needs_a_buffer_and_a_dtype():
    with pytest.raises(ValueError, match="buffer protocol"):
        tg.frombuffer([1, 2], dtype=tg.float32)
    with pytest.raises(ValueError, match="must not be 0"):
        tg.frombuffer(bytearray(), dtype=tg.float32)
    with pytest.raises(TypeError):
        tg.frombuffer(bytearray(4))


@pytest.mark.parametrize(("size", "stride"), [((2, 3), (1, 2)), ((2, 3), (0, 1)), ((2, 3, 4), (12, 1, 3)),
                                              ((), ()), ((0, 3), (3, 1))])
def test_empty_strided_has_torchs_shape_strides_and_storage(size, stride):
    mine, theirs = tg.empty_strided(size, stride, dtype=tg.float64), torch.empty_strided(size, stride,
                                                                                          dtype=torch.float64)
    assert mine.shape == tuple(theirs.shape) and mine.stride() == theirs.stride() and mine.dtype == np.float64
    assert mine.is_contiguous() == theirs.is_contiguous()
    made = tg.empty_strided(size, stride, requires_grad=True)
    assert made.requires_grad and made.dtype == np.float32


@pytest.mark.parametrize(("size", "stride"), [((2, 3), (1,)), ((2, -3), (1, 2)), ((2, 3), (-1, 2))])
def test_empty_strided_refuses_what_torch_refuses(size, stride):
    with pytest.raises(RuntimeError):
        torch.empty_strided(size, stride)
    with pytest.raises(RuntimeError, match="empty_strided"):
        tg.empty_strided(size, stride)


# --- dsplit and the unsafe splits -----------------------------------------------------------------


SPLITS = [
    ("dsplit 2", lambda m, t: m.dsplit(t, 2)),
    ("dsplit indices", lambda m, t: m.dsplit(t, [1, 3])),
    ("Tensor.dsplit", lambda m, t: t.dsplit(4)),
    ("unsafe_split", lambda m, t: m.unsafe_split(t, 2, 1)),
    ("Tensor.unsafe_split", lambda m, t: t.unsafe_split(3, dim=-1)),
    ("unsafe_chunk", lambda m, t: m.unsafe_chunk(t, 3, 2)),
    ("Tensor.unsafe_chunk", lambda m, t: t.unsafe_chunk(2)),
    ("unsafe_split_with_sizes", lambda m, t: m.unsafe_split_with_sizes(t, [1, 2], 1)),
    ("Tensor.unsafe_split_with_sizes", lambda m, t: t.unsafe_split_with_sizes([3, 1], dim=2)),
]


@pytest.mark.parametrize(("name", "split"), SPLITS, ids=[s[0] for s in SPLITS])
def test_splits_match_torch_in_values_views_and_gradient(name, split):
    data = np.random.default_rng(0).standard_normal((2, 3, 4))
    x = tg.tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    pieces, theirs = split(tg, x), split(torch, tx)
    assert len(pieces) == len(theirs)
    for i, (piece, their) in enumerate(zip(pieces, theirs, strict=True)):
        _same(piece, their)
        assert np.shares_memory(piece.data, x.data)
        (piece * (i + 1.5)).sum().backward()
        (their * (i + 1.5)).sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy())
    assert tg.gradcheck(lambda t: tg.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(split(tg, t))]), [x])


def test_dsplit_refuses_what_torch_refuses():
    for call in (lambda m: m.dsplit(m.ones(2, 2), 2), lambda m: m.dsplit(m.ones(2, 3, 4), 3)):
        with pytest.raises(RuntimeError):
            call(torch)
        with pytest.raises(RuntimeError, match="dsplit"):
            call(tg)


# --- real, imag, angle ----------------------------------------------------------------------------

COMPLEX = np.array([1 + 2j, -3 - 1j, 0j, -0.5 + 0.25j])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["real", "imag", "angle"])
def test_parts_of_a_complex_tensor_match_torch_with_gradients(name, dtype):
    z = tg.tensor(COMPLEX.astype(dtype), requires_grad=True)
    tz = torch.tensor(COMPLEX.astype(dtype), requires_grad=True)
    out = getattr(tg, name)(z)
    theirs = getattr(torch, name)(tz)
    _same(out, theirs)
    weights = np.array([1.0, 2.0, 3.0, -1.5], dtype=out.dtype)
    (out * tg.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    assert z.grad.dtype == np.dtype(dtype)
    np.testing.assert_allclose(z.grad, tz.grad.numpy(), rtol=1e-6, atol=1e-7)
    if name != "angle":
        method = getattr(z, name)
        assert np.shares_memory(method.data, z.data) and method.stride() == getattr(tz, name).stride()


def test_real_and_imag_are_views_of_the_complex_tensor():
    z = tg.tensor(COMPLEX.copy())
    z.real.data[0] = 5.0
    z.imag.data[1] = 7.0
    assert z.data[0] == 5 + 2j and z.data[1] == -3 + 7j
    assert z.real._base is z and z.imag._base is z
    z.real.mul_(3.0)  # in place through the view: its base sees it, and counts the change
    z.imag.add_(1.0)
    assert z.data[0] == 15 + 3j and z.data[1] == -9 + 8j and z._versions[0] == 2


NOT_COMPLEX = "imag is not implemented for tensors with non-complex dtypes."


def test_real_of_a_real_tensor_is_itself_and_imag_raises():
    for x in (tg.tensor([1.0, 2.0]), tg.tensor([1, 2])):
        assert x.real is x and tg.real(x) is x
        with pytest.raises(RuntimeError, match=NOT_COMPLEX):
            x.imag
        with pytest.raises(RuntimeError, match="imag is not implemented"):
            tg.imag(x)
    with pytest.raises(RuntimeError, match=NOT_COMPLEX):
        torch.tensor([1.0]).imag


@pytest.mark.parametrize("values", [[-2.0, -0.0, 0.0, 3.0, float("nan"), float("inf"), -float("inf")],
                                    [-1, 0, 2], [True, False]], ids=["float", "int", "bool"])
def test_angle_of_a_real_tensor_is_0_or_pi_with_gradient_0(values):
    x, tx = tg.tensor(values), torch.tensor(values)
    _same(x.angle(), torch.angle(tx))
    _same(tg.angle(tg.tensor(values, dtype=tg.float64)),
          torch.angle(torch.tensor(values, dtype=torch.float64)))
    if x.dtype.kind == "f":
        x.requires_grad_()
        tx.requires_grad_()
        tg.angle(x).sum().backward()
        torch.angle(tx).sum().backward()
        np.testing.assert_array_equal(x.grad, tx.grad.numpy())
        assert not x.grad.any()


def test_angle_gradcheck_on_a_real_float64_tensor():
    x = tg.tensor([-1.5, 0.5, 2.0], dtype=tg.float64, requires_grad=True)
    assert tg.gradcheck(tg.angle, [x])


# --- deterministic algorithms ---------------------------------------------------------------------


def _flags() -> tuple[bool, bool]:
    return tg.are_deterministic_algorithms_enabled(), tg.is_deterministic_algorithms_warn_only_enabled()


def test_deterministic_algorithms_flags_are_kept_and_reported():
    assert _flags() == (False, False)
    try:
        tg.use_deterministic_algorithms(True)
        assert _flags() == (True, False)
        tg.use_deterministic_algorithms(True, warn_only=True)
        assert _flags() == (True, True)
        tg.use_deterministic_algorithms(False)
        assert _flags() == (False, False)
        with pytest.raises(TypeError):  # as PyTorch's
            tg.use_deterministic_algorithms("yes")
    finally:
        tg.use_deterministic_algorithms(False)


# --- torch's in-place functions ---------------------------------------------------------------------

# (name, extra arguments, domain of the input)
UNARY_INPLACE = [
    ("relu_", "real"), ("sigmoid_", "real"), ("tanh_", "real"), ("exp_", "real"), ("log_", "positive"),
    ("sqrt_", "positive"), ("ceil_", "real"), ("floor_", "real"), ("trunc_", "real"), ("fix_", "real"),
    ("frac_", "real"), ("neg_", "real"), ("negative_", "real"), ("reciprocal_", "positive"),
    ("rsqrt_", "positive"), ("square_", "real"), ("abs_", "real"), ("sin_", "real"), ("cos_", "real"),
    ("tan_", "unit"), ("sinh_", "real"), ("cosh_", "real"), ("asin_", "unit"), ("acos_", "unit"),
    ("atan_", "real"), ("asinh_", "real"), ("acosh_", "above1"), ("atanh_", "unit"), ("arcsin_", "unit"),
    ("arccos_", "unit"), ("arctan_", "real"), ("arcsinh_", "real"), ("arccosh_", "above1"),
    ("arctanh_", "unit"), ("erf_", "real"), ("erfc_", "real"), ("exp2_", "real"), ("expm1_", "real"),
    ("log10_", "positive"), ("log1p_", "positive"), ("log2_", "positive"), ("deg2rad_", "real"),
    ("rad2deg_", "real"), ("sinc_", "real"), ("i0_", "real"), ("selu_", "real"), ("zero_", "real"),
    ("detach_", "real"),
]

WITH_ARGUMENTS = [
    ("fill_", (2.5,), {}), ("clamp_", (-0.3, 0.4), {}), ("clamp_", (), {"min": 0.1}),
    ("clip_", (None, 0.2), {}), ("clamp_min_", (0.1,), {}), ("clamp_max_", (-0.1,), {}),
    ("round_", (), {}), ("round_", (), {"decimals": 1}), ("logit_", (), {}), ("logit_", (0.2,), {}),
    ("nan_to_num_", (), {}), ("nan_to_num_", (1.0, 2.0, -2.0), {}), ("xlogy_", (2.0,), {}),
    ("celu_", (), {}), ("celu_", (0.5,), {}), ("threshold_", (0.1, -2.0), {}), ("rrelu_", (), {}),
    ("rrelu_", (0.1, 0.3, False), {}), ("dropout_", (0.5, False), {}), ("alpha_dropout_", (0.5, False), {}),
    ("feature_alpha_dropout_", (0.5, False), {}),
]


def _input(domain: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    low, high = {"real": (-2.0, 2.0), "positive": (0.2, 2.0), "unit": (-0.9, 0.9), "above1": (1.2, 3.0),
                 "probability": (0.05, 0.95)}[domain]
    values = rng.uniform(low, high, (2, 3))
    if domain == "real":
        values[0, 0] = -0.75  # a negative number for relu_, frac_, fix_ and friends
    return values


# PyTorch has no derivative for these in place ("not implemented"); tensorgrad has, so its gradient
# is compared with that of PyTorch's out-of-place op.
NO_TORCH_INPLACE_GRADIENT = {"asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_"}


def _run_inplace(lib, name: str, data: np.ndarray, args: tuple, kwargs: dict):
    leaf = lib.tensor(data, requires_grad=True)
    x = leaf * 1.0
    if lib is torch and name in NO_TORCH_INPLACE_GRADIENT:
        with torch.no_grad():
            assert getattr(torch, name)(x.detach().clone()).allclose(getattr(torch, name[:-1])(x))
        return getattr(torch, name[:-1])(x), _backward_from(torch, getattr(torch, name[:-1])(x), leaf)
    out = getattr(lib, name)(x, *args, **kwargs)
    assert out is x
    return out, _backward_from(lib, out, leaf)


def _backward_from(lib, out, leaf):
    """`leaf`, after a backward pass from `out` weighted by fixed numbers (if out requires grad)."""
    if out.requires_grad:
        (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum().backward()
    return leaf


@pytest.mark.parametrize(("name", "args", "kwargs"),
                         [(n, (), {}) for n, _ in UNARY_INPLACE] + WITH_ARGUMENTS,
                         ids=[n for n, _ in UNARY_INPLACE] + [f"{n}{a}{k}" for n, a, k in WITH_ARGUMENTS])
def test_inplace_functions_match_torch_and_write_into_their_input(name, args, kwargs):
    domain = dict(UNARY_INPLACE).get(name, "probability" if name == "logit_" else "real")
    data = _input(domain)
    if name == "nan_to_num_":
        data[0, :3] = [np.nan, np.inf, -np.inf]
    out, leaf = _run_inplace(tg, name, data, args, kwargs)
    theirs, their_leaf = _run_inplace(torch, name, data, args, kwargs)
    _same(out, theirs)
    assert out.requires_grad == theirs.requires_grad
    if their_leaf.grad is None:
        assert leaf.grad is None
    else:
        np.testing.assert_allclose(leaf.grad, their_leaf.grad.numpy(), rtol=1e-6, atol=1e-9)


def test_inplace_functions_on_integer_tensors_and_detach():
    for name in ("gcd_", "lcm_"):
        a, ta = tg.tensor([12, 18, -4, 0]), torch.tensor([12, 18, -4, 0])
        assert getattr(tg, name)(a, tg.tensor([8, 4, 6, 5])) is a
        getattr(torch, name)(ta, torch.tensor([8, 4, 6, 5]))
        _same(a, ta)
    x = tg.ones(2, requires_grad=True) * 2
    detached = tg.detach(x)
    assert detached is not x and not detached.requires_grad and np.shares_memory(detached.data, x.data)
    assert tg.detach_(x) is x and not x.requires_grad and x.is_leaf
    with pytest.raises(RuntimeError):
        tg.relu_(tg.ones(2, requires_grad=True))  # a leaf that requires grad, as PyTorch refuses
    with pytest.raises(RuntimeError):
        torch.relu_(torch.ones(2, requires_grad=True))


def test_rrelu_and_dropout_in_training_draw_from_the_generator():
    data = np.linspace(-2.0, 2.0, 8)
    generator = tg.Generator().manual_seed(5)
    first = tg.rrelu_(tg.tensor(data), 0.1, 0.3, True, generator)
    second = tg.rrelu_(tg.tensor(data), 0.1, 0.3, True, tg.Generator().manual_seed(5))
    np.testing.assert_array_equal(first.data, second.data)
    slopes = first.data[data < 0] / data[data < 0]
    assert ((slopes >= 0.1) & (slopes <= 0.3)).all() and len(set(slopes.tolist())) > 1
    np.testing.assert_array_equal(first.data[data > 0], data[data > 0])
    tg.manual_seed(0)
    x = tg.ones(1000, dtype=tg.float64)
    assert tg.dropout_(x, 0.5, True) is x
    assert set(np.unique(x.data).tolist()) == {0.0, 2.0} and 400 < (x.data == 0).sum() < 600


@pytest.mark.parametrize("name", ["gcd_", "lcm_", "ldexp_", "nextafter_"])
def test_inplace_number_theory_methods_match_torch(name):
    if name in ("gcd_", "lcm_"):
        a, b = [12, 18, -4, 0], [8, 4, 6, 5]
    else:
        a, b = [1.0, 3.0, -2.0, 0.5], [2.0, -1.0, 0.0, 3.0] if name == "nextafter_" else [2, 3, -1, 0]
    x, tx = tg.tensor(a), torch.tensor(a)
    assert getattr(x, name)(tg.tensor(b)) is x
    getattr(tx, name)(torch.tensor(b))
    _same(x, tx)
    if name in ("ldexp_", "nextafter_"):
        leaf, tleaf = tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        y, ty = leaf * 1.0, tleaf * 1.0
        getattr(y, name)(tg.tensor(b, dtype=tg.float32))
        getattr(ty, name)(torch.tensor(b, dtype=torch.float32))
        (y * tg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        (ty * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        np.testing.assert_allclose(leaf.grad, tleaf.grad.numpy())
    for bad in ([1.5, 2.5],) if name in ("gcd_", "lcm_") else ():
        with pytest.raises((NotImplementedError, TypeError, RuntimeError)):
            getattr(torch.tensor(bad), name)(torch.tensor(bad))
        with pytest.raises((NotImplementedError, TypeError, RuntimeError)):
            getattr(tg.tensor(bad), name)(tg.tensor(bad))
    if name == "ldexp_":
        with pytest.raises(RuntimeError):
            torch.tensor([1, 3]).ldexp_(torch.tensor([2, 3]))
        with pytest.raises(RuntimeError, match="ldexp_"):
            tg.tensor([1, 3]).ldexp_(tg.tensor([2, 3]))


# --- gradient --------------------------------------------------------------------------------------

COORDS = [0.0, 1.0, 1.5, 3.5, 4.0, 6.0]

GRADIENT_CASES = [
    ("default", (6,), {}),
    ("scalar spacing", (6,), {"spacing": 2.0}),
    ("edge_order 2", (6,), {"edge_order": 2}),
    ("coordinates", (6,), {"spacing": "coords"}),
    ("coordinates edge_order 2", (6,), {"spacing": "coords", "edge_order": 2}),
    ("2-D, every dim", (3, 4), {}),
    ("2-D, dim=1", (3, 4), {"dim": 1}),
    ("2-D, dims [1, 0]", (3, 4), {"dim": [1, 0]}),
    ("2-D, spacing per dim", (3, 4), {"spacing": [1.0, 2.0], "edge_order": 2}),
    ("2-D, spacing list for dim", (3, 4), {"spacing": [2.0], "dim": -1}),
    ("3-D, coordinates on dim 1", (2, 6, 3), {"spacing": "coords", "dim": 1, "edge_order": 2}),
    ("two points", (2,), {}),
    ("three points edge_order 2", (3,), {"edge_order": 2}),
]


def _gradient_kwargs(lib, kwargs: dict, dtype) -> dict:
    out = dict(kwargs)
    if out.get("spacing") == "coords":
        out["spacing"] = (lib.tensor(COORDS, dtype=dtype),)
    return out


@pytest.mark.parametrize(("name", "shape", "kwargs"), GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_gradient_matches_torch_in_values_and_backward(name, shape, kwargs):
    data = np.random.default_rng(1).standard_normal(shape)
    x, tx = tg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    outs = tg.gradient(x, **_gradient_kwargs(tg, kwargs, tg.float64))
    theirs = torch.gradient(tx, **_gradient_kwargs(torch, kwargs, torch.float64))
    assert isinstance(outs, tuple) and len(outs) == len(theirs)
    for i, (out, their) in enumerate(zip(outs, theirs, strict=True)):
        _same(out, their, atol=1e-9)
        (out * (i + 1.0)).sum().backward()
        (their * (i + 1.0)).sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), atol=1e-12)
    assert tg.gradcheck(lambda t: tg.stack(tg.gradient(t, **_gradient_kwargs(tg, kwargs, tg.float64))), [x])


def test_gradient_flows_to_the_coordinates_too():
    data = np.array([1.0, 4.0, 9.0, 16.0, 25.0, 36.0])
    coords = tg.tensor(COORDS, dtype=tg.float64, requires_grad=True)
    tcoords = torch.tensor(COORDS, dtype=torch.float64, requires_grad=True)
    (tg.gradient(tg.tensor(data), spacing=(coords,), edge_order=2)[0] * tg.tensor(data)).sum().backward()
    theirs = torch.gradient(torch.tensor(data), spacing=(tcoords,), edge_order=2)[0]
    (theirs * torch.tensor(data)).sum().backward()
    np.testing.assert_allclose(coords.grad, tcoords.grad.numpy())
    assert tg.gradcheck(lambda c: tg.gradient(tg.tensor(data), spacing=(c,))[0], [coords])


@pytest.mark.parametrize("values", [[1, 4, 9, 16], [1.0, 4.0, 9.0, 16.0]], ids=["int", "float32"])
@pytest.mark.parametrize("spacing", [1, 2, 2.5, "int coords", "float64 coords"])
def test_gradient_dtypes_follow_torch(values, spacing):
    def kwargs(lib):
        if spacing == "int coords":
            return {"spacing": [lib.tensor([0, 1, 3, 4])]}
        if spacing == "float64 coords":
            return {"spacing": (lib.tensor([0.0, 1.0, 3.0, 4.0], dtype=lib.float64),)}
        return {"spacing": spacing}

    _same(tg.gradient(tg.tensor(values), **kwargs(tg))[0],
          torch.gradient(torch.tensor(values), **kwargs(torch))[0])
    _same(tg.gradient(tg.tensor(values), spacing=torch.tensor(2.0).item())[0],
          torch.gradient(torch.tensor(values), spacing=torch.tensor(2.0))[0])


def test_gradient_of_a_0d_tensor_is_an_empty_tuple():
    assert tg.gradient(tg.tensor(1.0)) == () == torch.gradient(torch.tensor(1.0))


@pytest.mark.parametrize("call", [
    lambda m: m.gradient(m.ones(3, 4), edge_order=3),
    lambda m: m.gradient(m.ones(3, 4), spacing=[1.0, 2.0, 3.0]),
    lambda m: m.gradient(m.ones(3, 4), dim=(0, 0)),
    lambda m: m.gradient(m.ones(1)),
    lambda m: m.gradient(m.ones(2), edge_order=2),
    lambda m: m.gradient(m.ones(3, 1)),
    lambda m: m.gradient(m.tensor([True, False, True])),
    lambda m: m.gradient(m.ones(3), spacing=[m.tensor([[0.0, 1.0, 2.0]])]),
], ids=["edge_order 3", "spacing too long", "repeated dim", "one point", "two points order 2", "size-1 dim",
        "bool", "2-D coordinates"])
def test_gradient_refuses_what_torch_refuses(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError, match="gradient"):
        call(tg)
    with pytest.raises(IndexError):
        torch.gradient(torch.ones(3), dim=1)
    with pytest.raises(IndexError):
        tg.gradient(tg.ones(3), dim=1)


# --- on the GPU stand-in: every differentiable op keeps ForeignArrays -----------------------------

FOREIGN = [
    ("dsplit", [(2, 3, 4)], lambda m, a: m.dsplit(a, 2)),
    ("unsafe_split", [(4, 3)], lambda m, a: m.unsafe_split(a, 3, 0)),
    ("unsafe_chunk", [(4, 3)], lambda m, a: a.unsafe_chunk(2, 1)),
    ("unsafe_split_with_sizes", [(4, 3)], lambda m, a: m.unsafe_split_with_sizes(a, [1, 3])),
    ("angle", [(3, 4)], lambda m, a: m.angle(a)),
    ("gradient", [(3, 5)], lambda m, a: m.gradient(a, edge_order=2)),
    ("gradient coordinates", [(5,), (5,)], lambda m, a, c: m.gradient(a, spacing=(c.cumsum(0) + c * c,))),
    ("gradient coordinates order 2", [(4, 5), (5,)],
     lambda m, a, c: m.gradient(a, spacing=[c.cumsum(0) + c * c], dim=1, edge_order=2)),
    ("in-place functions", [(3, 4)],
     lambda m, a: m.ldexp_(m.celu_(m.clamp_(m.exp_(a * 1.0), 0.5, 2.0), 0.5),
                           m.tensor([1.0, 2.0, 0.0, 3.0]))),
    ("in-place activations", [(3, 4)], lambda m, a: m.threshold_(m.selu_(m.rrelu_(a * 1.0)), 0.1, -1.0)),
    ("in-place rounding", [(3, 4)],
     lambda m, a: m.nan_to_num_(m.logit_(m.sigmoid_(a * 1.0), 0.1)) + m.frac_(a * 1.0)),
]


@pytest.mark.parametrize(("name", "shapes", "fn"), FOREIGN, ids=[c[0] for c in FOREIGN])
def test_ops_keep_foreign_arrays(name, shapes, fn):
    rng = np.random.default_rng(11)
    arrays = [rng.uniform(0.2, 1.5, shape) for shape in shapes]
    runs = run_twice(fn, arrays)
    check_same(runs)
    assert all(is_foreign(out.data) for out in runs[1][0])


def test_real_and_imag_keep_foreign_arrays():
    from foreign_array import foreign

    z = tg.from_numpy(foreign(COMPLEX)).requires_grad_()
    parts = (tg.real(z), tg.imag(z), tg.angle(z))
    assert all(is_foreign(p.data) for p in parts)
    (parts[0] * 2.0 + parts[1] * 3.0 + parts[2]).sum().backward()
    assert is_foreign(z.grad)
    plain = tg.tensor(COMPLEX, requires_grad=True)
    (tg.real(plain) * 2.0 + tg.imag(plain) * 3.0 + tg.angle(plain)).sum().backward()
    np.testing.assert_allclose(np.asarray(z.grad), plain.grad)
