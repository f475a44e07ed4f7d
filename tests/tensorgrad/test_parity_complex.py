"""Complex tensors against PyTorch: abs and sgn, complex and polar, view_as_real and
view_as_complex, Python complex numbers beside tensors, the reductions with real results (var,
std, norm), complex random draws, and the ops PyTorch refuses for complex numbers (no order).

Gradients follow PyTorch's convention (see test_complex_gradients.py): each case runs the same
expression in both libraries and compares every leaf's gradient.
"""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

Z = np.array([[1 + 2j, -0.5 + 0.3j, 2 - 1j], [0.3 - 1j, 0j, -1 + 1j]])
W = np.array([[0.3 - 0.7j, 1.1 + 0.2j, -0.4 + 1j], [0.8 + 0.1j, -0.6 - 1.2j, 0.9 + 0.3j]])
X = np.array([[0.5, -1.2, 2.0], [1.3, 0.4, -0.7]])
Y = np.array([[0.9, -0.3, 1.1], [-2.0, 0.6, 0.2]])


def _loss(m, out):
    """A real number that depends on every real and imaginary part of `out`."""
    weights = m.tensor((np.arange(out.numel()) * (0.3 + 0.7j) + (1 - 0.2j)).reshape(tuple(out.shape)))
    return (out * weights).real.sum() if out.is_complex() else (out * weights.real).sum()


def _run(expression, m):
    leaves = [m.tensor(a, requires_grad=True) for a in (Z, W, X, Y)]
    out = expression(m, *leaves)
    _loss(m, out).backward()
    grads = [None if t.grad is None else t.grad.resolve_conj().numpy(force=True) if m is torch
             else np.asarray(t.grad) for t in leaves]
    return out, grads


CASES = {
    "abs": lambda m, z, w, x, y: z.abs(),
    "absolute": lambda m, z, w, x, y: m.absolute(z * w),
    "sgn": lambda m, z, w, x, y: m.sgn(z),
    "sgn of a real tensor": lambda m, z, w, x, y: x.sgn() * w,
    "complex": lambda m, z, w, x, y: m.complex(x, y),
    "complex, broadcast": lambda m, z, w, x, y: m.complex(x, y[0]) * w,
    "polar": lambda m, z, w, x, y: m.polar(x, y),
    "view_as_real": lambda m, z, w, x, y: m.view_as_real(z * w),
    "view_as_complex": lambda m, z, w, x, y: m.view_as_complex(m.stack([x, y], -1)),
    "view_as_real of a transposed tensor": lambda m, z, w, x, y: m.view_as_real(z.t()).sum(-1).t(),
    "var": lambda m, z, w, x, y: m.var(z, dim=1, keepdim=True) * x,
    "std": lambda m, z, w, x, y: z.std(0),
    "var, all": lambda m, z, w, x, y: (w * z).var().reshape(1),
    "var_mean": lambda m, z, w, x, y: m.var_mean(z, 1)[0],
    "std_mean": lambda m, z, w, x, y: m.std_mean(w, 0, correction=0)[0],
    "norm": lambda m, z, w, x, y: z.norm(dim=1),
    "norm, p=3": lambda m, z, w, x, y: z.norm(p=3).reshape(1),
    "dist": lambda m, z, w, x, y: m.dist(z, w).reshape(1),
    "sigmoid": lambda m, z, w, x, y: m.sigmoid(z),
    "acosh": lambda m, z, w, x, y: m.acosh(w),
    "pow of a negative real base": lambda m, z, w, x, y: m.pow(x, w),
    "float_power": lambda m, z, w, x, y: m.float_power(z, x),
    "Python complex number": lambda m, z, w, x, y: (z + (1 + 2j)) * (0.5 - 1j) - (2j - z) / (1 + 1j),
    "Python complex number beside a real tensor": lambda m, z, w, x, y: x * (1 - 2j) + (3j - y),
    "Python complex exponent": lambda m, z, w, x, y: z ** (0.5 + 0.5j),
    "cumsum and cumprod (scans that need no order)": lambda m, z, w, x, y: z.cumsum(1) + w.cumprod(0),
}


@pytest.mark.parametrize("name", CASES)
def test_values_dtypes_and_gradients_match_pytorch(name):
    (theirs, their_grads), (ours, our_grads) = (_run(CASES[name], m) for m in (torch, tg))
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().resolve_conj().numpy(), rtol=1e-12,
                               atol=1e-14)
    for their, our in zip(their_grads, our_grads, strict=True):
        assert (their is None) == (our is None)
        if their is not None:
            assert our.dtype == their.dtype
            np.testing.assert_allclose(our, their, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_abs_is_real_in_the_matching_float_dtype(dtype):
    for m in (torch, tg):
        z = m.tensor(Z, dtype=getattr(m, dtype))
        real = {"complex64": "float32", "complex128": "float64"}[dtype]
        assert str(z.abs().dtype).removeprefix("torch.") == real
        assert str(z.var().dtype) == str(z.abs().dtype) and str(z.std(0).dtype) == str(z.abs().dtype)


def test_gradients_at_zero_are_zero_as_in_pytorch():
    for op in ("abs", "sgn"):
        grads = []
        for m in (torch, tg):
            z = m.tensor([0j, 1 + 1j], requires_grad=True)
            getattr(z, op)().real.sum().backward()
            grads.append(np.asarray(z.grad))
        np.testing.assert_allclose(grads[1], grads[0])
        assert grads[1][0] == 0


def test_complex_ops_pass_gradcheck():
    z = tg.tensor(Z[:, :2] + 0.1, requires_grad=True)
    x, y = (tg.tensor(a, requires_grad=True) for a in (X, Y))
    assert tg.autograd.gradcheck(lambda t: t.abs(), (z,))
    assert tg.autograd.gradcheck(lambda t: tg.view_as_real(t.sgn()), (z,))
    # (abs > 0: where abs < 0 PyTorch's gradient uses sgn(out), which is not the derivative there)
    assert tg.autograd.gradcheck(lambda a, b: tg.view_as_real(tg.polar(a.abs() + 0.1, b)), (x, y))
    assert tg.autograd.gradcheck(lambda a, b: tg.complex(a, b).abs(), (x, y))


def test_view_as_real_and_view_as_complex_share_memory():
    z = tg.tensor([1 + 2j, 3 - 1j])
    parts = tg.view_as_real(z)
    assert parts.shape == (2, 2) and tg.is_view(parts) if hasattr(tg, "is_view") else parts.shape == (2, 2)
    parts[0, 1] = 5.0
    assert z.tolist() == [1 + 5j, 3 - 1j]
    x = tg.zeros(3, 2, dtype=tg.float64)
    numbers = tg.view_as_complex(x)
    assert numbers.dtype == tg.complex128 and numbers.shape == (3,)
    numbers[1] = 1 - 1j
    assert x.tolist() == [[0, 0], [1, -1], [0, 0]]
    assert tg.view_as_real(tg.tensor(2 + 3j)).tolist() == [2.0, 3.0]


def test_the_views_share_the_version_counter_of_their_input():
    w = tg.tensor(W, requires_grad=True)
    z = w * 2
    parts = tg.view_as_real(z)
    loss = (parts ** 2).sum()
    with tg.no_grad():
        z.mul_(2)  # parts' values changed too: backward must refuse the stale ones
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(3, 2, dtype=m.int64),           # not float
    lambda m: m.zeros(3, 4),                          # last dim not 2
    lambda m: m.zeros(2, 3).t(),                      # last dim of stride != 1
    lambda m: m.zeros(5)[1:5].reshape(2, 2),          # odd storage offset
    lambda m: m.zeros(3, 3)[:, :2],                   # odd stride
    lambda m: m.zeros(()),                            # 0-d
])
def test_view_as_complex_refuses_what_pytorch_refuses(make):
    with pytest.raises(Exception) as theirs:
        torch.view_as_complex(make(torch))
    with pytest.raises(type(theirs.value)):
        tg.view_as_complex(make(tg))


def test_view_as_real_refuses_a_real_tensor():
    with pytest.raises(RuntimeError):
        torch.view_as_real(torch.zeros(2))
    with pytest.raises(RuntimeError, match="view_as_real"):
        tg.view_as_real(tg.zeros(2))


@pytest.mark.parametrize("op", ["complex", "polar"])
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int64", "int64"), ("float64", "float32")])
def test_complex_and_polar_take_two_float32_or_two_float64_tensors(op, dtypes):
    for m in (torch, tg):
        a, b = (m.ones(2, dtype=getattr(m, d)) for d in dtypes)
        with pytest.raises(RuntimeError):
            getattr(m, op)(a, b)
    for d in ("float32", "float64"):
        ours = getattr(tg, op)(tg.ones(2, dtype=getattr(tg, d)), tg.ones(2, dtype=getattr(tg, d)))
        theirs = getattr(torch, op)(*(torch.ones(2, dtype=getattr(torch, d)) for _ in "ab"))
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")


REFUSED = {
    "lt": lambda m, z: z < z, "gt": lambda m, z: z > 1, "le": lambda m, z: m.le(z, z),
    "ge": lambda m, z: z >= 0,
    "max": lambda m, z: z.max(), "max along a dim": lambda m, z: z.max(0), "min": lambda m, z: m.min(z),
    "amax": lambda m, z: m.amax(z, 0), "amin": lambda m, z: z.amin(), "aminmax": lambda m, z: m.aminmax(z),
    "argmax": lambda m, z: z.argmax(), "argmin": lambda m, z: m.argmin(z, 1),
    "maximum": lambda m, z: m.maximum(z, z), "minimum": lambda m, z: m.minimum(z, z),
    "clamp": lambda m, z: z.clamp(0, 1), "clamp min": lambda m, z: m.clamp(z, min=0),
    "relu": lambda m, z: m.relu(z), "F.relu": lambda m, z: m.nn.functional.relu(z),
    "sort": lambda m, z: z.sort(), "argsort": lambda m, z: m.argsort(z), "msort": lambda m, z: m.msort(z),
    "topk": lambda m, z: m.topk(z, 1), "kthvalue": lambda m, z: m.kthvalue(z, 1),
    "median": lambda m, z: z.median(), "median along a dim": lambda m, z: z.median(0),
    "nanmedian": lambda m, z: m.nanmedian(z), "mode": lambda m, z: m.mode(z),
    "unique": lambda m, z: m.unique(z), "cummax": lambda m, z: m.cummax(z, 0),
    "cummin": lambda m, z: m.cummin(z, 1), "nansum": lambda m, z: m.nansum(z),
    "nanmean": lambda m, z: z.nanmean(),
    "sign": lambda m, z: z.sign(), "signbit": lambda m, z: m.signbit(z), "floor": lambda m, z: z.floor(),
    "ceil": lambda m, z: m.ceil(z), "trunc": lambda m, z: z.trunc(), "round": lambda m, z: z.round(),
    "deg2rad": lambda m, z: m.deg2rad(z), "rad2deg": lambda m, z: z.rad2deg(),
    "isposinf": lambda m, z: m.isposinf(z), "isneginf": lambda m, z: m.isneginf(z),
    "heaviside": lambda m, z: m.heaviside(z, z),
}


@pytest.mark.parametrize("name", REFUSED)
def test_ops_that_need_an_order_are_refused_as_in_pytorch(name):
    with pytest.raises(Exception) as theirs:
        REFUSED[name](torch, torch.tensor(Z))
    with pytest.raises(type(theirs.value)):
        REFUSED[name](tg, tg.tensor(Z))


def test_equality_still_works_on_complex_tensors():
    z = tg.tensor(Z)
    assert (z == z).all().item() and not (z != z).any().item()
    assert (z == (1 + 2j)).tolist() == [[True, False, False], [False, False, False]]
    for op in ("logical_and", "logical_or", "logical_xor"):
        assert getattr(tg, op)(z, z).tolist() == getattr(torch, op)(torch.tensor(Z), torch.tensor(Z)).tolist()


@pytest.mark.parametrize("dtype, number", [("complex64", 1 + 2j), ("float32", 2j), ("float64", 2j),
                                           ("int64", 1 - 1j), ("complex128", 0.5), ("bool", 1j)])
def test_python_complex_numbers_follow_pytorchs_dtype_rules(dtype, number):
    for op in ("add", "mul", "div", "eq") + (("sub",) if dtype != "bool" else ()):
        theirs = getattr(torch, op)(torch.ones(2, dtype=getattr(torch, dtype)), number)
        ours = getattr(tg, op)(tg.ones(2, dtype=getattr(tg, dtype)), number)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), op
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_random_draws(dtype):
    tg.manual_seed(0)
    z = tg.randn(20000, dtype=getattr(tg, dtype))
    u = tg.rand(20000, dtype=getattr(tg, dtype))
    assert z.dtype == getattr(tg, dtype) and u.dtype == getattr(tg, dtype)
    # PyTorch's complex randn: real and imaginary parts each of variance 1/2, so E|z|^2 = 1.
    assert abs(z.real.var().item() - 0.5) < 0.03 and abs(z.imag.var().item() - 0.5) < 0.03
    assert abs((z.abs() ** 2).mean().item() - 1) < 0.05
    assert u.real.min().item() >= 0 and u.imag.max().item() < 1 and abs(u.imag.mean().item() - 0.5) < 0.02
    like = tg.randn_like(z[:3])
    assert like.dtype == z.dtype and (like.imag != 0).all().item()


def test_printing_item_and_tolist_match_pytorch():
    for values, dtype in ((Z, "complex64"), (Z[:, :2], "complex128"), ([1 + 2j, 3 - 1j], "complex64"),
                          (2 - 1j, "complex128"), ([[1e-5 + 1e5j]], "complex64")):
        theirs = torch.tensor(values, dtype=getattr(torch, dtype))
        ours = tg.tensor(values, dtype=getattr(tg, dtype))
        assert repr(ours) == repr(theirs).replace("torch.", "")
        assert ours.tolist() == theirs.tolist()
    assert tg.tensor(1 + 2j).item() == 1 + 2j and isinstance(tg.tensor([3j]).sum().item(), complex)
