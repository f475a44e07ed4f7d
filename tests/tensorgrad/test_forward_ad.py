"""`tg.autograd.forward_ad` (dual tensors) against `torch.autograd.forward_ad`: tangents in float64,
the errors, levels, and finite differences."""

import numpy as np
import pytest
import tensorgrad.autograd.forward_ad as fwAD

import tensorgrad as tg

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad


def _arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _both_tangents(f, primals, tangents, params=()):
    """(tensorgrad's (primal, tangent), PyTorch's) of f(*duals, *params) as numpy arrays."""
    results = []
    for lib, fw in ((tg, fwAD), (torch, tfw)):
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(p), lib.tensor(t))
                     for p, t in zip(primals, tangents, strict=True)]
            p, t = fw.unpack_dual(f(lib, *duals, *[lib.tensor(p) for p in params]))
            results.append((p.detach().numpy(), None if t is None else t.detach().numpy()))
    return results


def _mlp(lib, x, w1, b1, w2):
    return lib.tanh(x @ w1 + b1) @ w2


FUNCTIONS = {
    "sin": (lambda lib, x: lib.sin(x), [(3, 4)]),
    "exp_log": (lambda lib, x: lib.exp(x) * lib.log(x * x + 1), [(5,)]),
    "product_quotient": (lambda lib, x, y: x * y / (y * y + 2), [(3, 4), (3, 4)]),
    "broadcast": (lambda lib, x, y: x + y * x, [(3, 4), (4,)]),
    "matmul": (lambda lib, x, y: x @ y, [(3, 4), (4, 2)]),
    "sum_mean": (lambda lib, x: x.sum(0) * x.mean(), [(3, 4)]),
    "max_softmax": (lambda lib, x: lib.softmax(x, dim=1) * x.amax(1, keepdim=True), [(3, 4)]),
    "relu_sigmoid": (lambda lib, x: lib.relu(x) + lib.sigmoid(x), [(6,)]),
    "reshape_index": (lambda lib, x: x.reshape(4, 3)[1:, ::2].t() ** 3, [(3, 4)]),
    "scalar": (lambda lib, x: (x ** 2).sum(), [()]),
    "norm": (lambda lib, x: lib.linalg.norm(x), [(7,)]),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_tangent_matches_pytorch(name):
    f, shapes = FUNCTIONS[name]
    primals = _arrays(*shapes)
    tangents = _arrays(*shapes, seed=1)
    (p, t), (tp, tt) = _both_tangents(f, primals, tangents)
    np.testing.assert_allclose(p, tp, rtol=1e-12, atol=1e-12)
    assert t.shape == tt.shape
    np.testing.assert_allclose(t, tt, rtol=1e-10, atol=1e-12)


def test_mlp_with_one_dual_input_and_parameters():
    x, w1, b1, w2 = _arrays((5, 3), (3, 8), (8,), (8, 2))
    (v,) = _arrays((5, 3), seed=3)
    (p, t), (tp, tt) = _both_tangents(_mlp, [x], [v], params=[w1, b1, w2])
    np.testing.assert_allclose(p, tp, rtol=1e-12)
    np.testing.assert_allclose(t, tt, rtol=1e-10, atol=1e-12)


def test_mlp_with_every_input_dual():
    shapes = [(5, 3), (3, 8), (8,), (8, 2)]
    (p, t), (tp, tt) = _both_tangents(_mlp, _arrays(*shapes), _arrays(*shapes, seed=4))
    np.testing.assert_allclose(t, tt, rtol=1e-10, atol=1e-12)


def test_tangent_matches_finite_differences():
    x, v = _arrays((4, 3), (4, 3))
    w = _arrays((3, 3), seed=2)[0]

    def f(a):
        return tg.tanh(a @ tg.tensor(w)).exp().sum(0)

    with fwAD.dual_level():
        _, t = fwAD.unpack_dual(f(fwAD.make_dual(tg.tensor(x), tg.tensor(v))))
    eps = 1e-6
    central = (f(tg.tensor(x + eps * v)).numpy() - f(tg.tensor(x - eps * v)).numpy()) / (2 * eps)
    np.testing.assert_allclose(t.numpy(), central, rtol=1e-7, atol=1e-8)


def test_agrees_with_func_jvp():
    x, v = _arrays((6,), (6,))
    with fwAD.dual_level():
        _, t = fwAD.unpack_dual(tg.sin(fwAD.make_dual(tg.tensor(x), tg.tensor(v))) ** 2)
    _, jv = tg.func.jvp(lambda a: tg.sin(a) ** 2, (tg.tensor(x),), (tg.tensor(v),))
    np.testing.assert_allclose(t.numpy(), jv.numpy(), rtol=1e-12)


def test_importable_both_ways_and_named_tuple():
    import tensorgrad.autograd

    assert tensorgrad.autograd.forward_ad is fwAD
    assert fwAD.UnpackedDualTensor._fields == ("primal", "tangent")
    x = tg.tensor([1.0, 2.0], dtype=tg.float64)
    result = fwAD.unpack_dual(x)
    assert isinstance(result, fwAD.UnpackedDualTensor) and result.primal is x and result.tangent is None


def test_dual_tensor_unpacks_to_its_primal_and_tangent():
    x = tg.tensor([1.0, -2.0, 3.0], dtype=tg.float64)
    v = tg.tensor([0.5, 0.25, -1.0], dtype=tg.float64)
    with fwAD.dual_level() as level:
        assert level == 0
        dual = fwAD.make_dual(x, v)
        primal, tangent = fwAD.unpack_dual(dual)
        assert tangent is v  # as-is, as PyTorch's
        assert not primal.requires_grad and np.shares_memory(primal.data, x.data)
        assert np.array_equal(primal.numpy(), x.numpy())
        assert fwAD.unpack_dual(primal).tangent is None  # a primal carries no tangent
        assert fwAD.unpack_dual(primal * 2).tangent is None
        assert fwAD.unpack_dual(dual, level=0).tangent is v
        assert fwAD.unpack_dual(dual.detach()).tangent is None
        assert fwAD.unpack_dual(x * 2).tangent is None  # no dual in its graph
        assert fwAD.unpack_dual(dual > 0).tangent is None  # not differentiable


def test_outputs_not_depending_on_a_dual_and_constant_functions():
    with fwAD.dual_level():
        a = fwAD.make_dual(tg.tensor([1.0, 2.0], dtype=tg.float64), tg.tensor([1.0, 1.0], dtype=tg.float64))
        b = fwAD.make_dual(tg.tensor([3.0], dtype=tg.float64), tg.tensor([2.0], dtype=tg.float64))
        np.testing.assert_array_equal(fwAD.unpack_dual(a * 2).tangent.numpy(), [2.0, 2.0])  # b not used
        np.testing.assert_array_equal(fwAD.unpack_dual(a * 0).tangent.numpy(), [0.0, 0.0])  # zero, not None
        np.testing.assert_array_equal(fwAD.unpack_dual(a * b).tangent.numpy(), [5.0, 7.0])  # v b + a w


def test_level_ends_tangents():
    x = tg.tensor([1.0, 2.0], dtype=tg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, tg.ones(2, dtype=tg.float64))
        out = dual * 3
    assert fwAD._current_level == -1
    assert fwAD.unpack_dual(dual).tangent is None and fwAD.unpack_dual(out).tangent is None
    assert out.requires_grad  # (PyTorch's does not: see the module's notes) and backward still runs
    (out * tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)).sum().backward()
    assert fwAD.enter_dual_level() == 0  # levels count from 0 again
    fwAD.exit_dual_level()


def test_decorator_enters_a_level():
    @fwAD.dual_level()
    def tangent_of_square(x, v):
        return fwAD.unpack_dual(fwAD.make_dual(x, v) ** 2).tangent

    t = tangent_of_square(tg.tensor([3.0], dtype=tg.float64), tg.tensor([1.0], dtype=tg.float64))
    np.testing.assert_array_equal(t.numpy(), [6.0])
    assert fwAD._current_level == -1


def _error(fw, lib, action):
    """(exception class, message) that action(fw, lib) raises."""
    with pytest.raises(Exception) as info:
        action(fw, lib)
    return type(info.value), str(info.value)


def _in_level(action):
    def run(fw, lib):
        with fw.dual_level():
            action(fw, lib)
    return run


def _f64(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


def _dual(fw, lib):
    return fw.make_dual(_f64(lib, 3), _f64(lib, 3))


ERRORS = {
    "make_dual_outside_level": lambda fw, lib: fw.make_dual(_f64(lib, 3), _f64(lib, 3)),
    "exit_without_level": lambda fw, lib: fw.exit_dual_level(),
    "exit_level_0_without_level": lambda fw, lib: fw.exit_dual_level(level=0),
    "make_dual_unknown_level": lambda fw, lib: fw.make_dual(_f64(lib, 3), _f64(lib, 3), level=0),
    "integer_primal": _in_level(lambda fw, lib: fw.make_dual(lib.arange(3), _f64(lib, 3))),
    "integer_tangent": _in_level(lambda fw, lib: fw.make_dual(_f64(lib, 3), lib.arange(3))),
    "shape_mismatch": _in_level(lambda fw, lib: fw.make_dual(_f64(lib, 3), _f64(lib, 4))),
    "wrong_level": _in_level(lambda fw, lib: fw.make_dual(_f64(lib, 3), _f64(lib, 3), level=5)),
    "dual_of_dual": _in_level(lambda fw, lib: fw.make_dual(_dual(fw, lib), _f64(lib, 3))),
    "dual_of_result": _in_level(lambda fw, lib: fw.make_dual(_dual(fw, lib) * 2, _f64(lib, 3))),
    "nested_level": _in_level(lambda fw, lib: fw.enter_dual_level()),
    "exit_other_level": _in_level(lambda fw, lib: fw.exit_dual_level(level=5)),
    "unpack_wrong_level": _in_level(lambda fw, lib: fw.unpack_dual(_dual(fw, lib) * 2, level=3)),
    "unpack_not_tensor": _in_level(lambda fw, lib: fw.unpack_dual(3)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_pytorch(name):
    kind, message = _error(fwAD, tg, ERRORS[name])
    torch_kind, torch_message = _error(tfw, torch, ERRORS[name])
    assert issubclass(kind, torch_kind)
    assert message.replace("torch.", "").replace("tensorgrad.", "") == torch_message.replace("torch.", "")
    assert fwAD._current_level == tfw._current_level == -1  # a failed call leaves no level open


def test_failed_nested_enter_keeps_the_outer_level():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested"):
            fwAD.enter_dual_level()
        assert fwAD._current_level == 0
        dual = fwAD.make_dual(tg.tensor([2.0], dtype=tg.float64), tg.tensor([1.0], dtype=tg.float64))
        np.testing.assert_array_equal(fwAD.unpack_dual(dual ** 2).tangent.numpy(), [4.0])


def test_unpack_outside_a_level_gives_no_tangent():
    x = tg.tensor([1.0], dtype=tg.float64)
    assert fwAD.unpack_dual(x) == (x, None)
    assert fwAD.unpack_dual(3) == (3, None)
    assert fwAD.unpack_dual(x, level=0).tangent is None  # (PyTorch: no level, no tangent)
    with fwAD.dual_level():
        assert fwAD.unpack_dual(x, level=3).tangent is None  # (no tangent: the level is not checked)


def test_tangent_takes_the_primal_dtype():
    x, v = _arrays((3,), (3,))
    results = []
    for lib, fw in ((tg, fwAD), (torch, tfw)):
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(x), lib.tensor(v, dtype=lib.float32))
            results.append((fw.unpack_dual(dual).tangent, fw.unpack_dual(lib.sin(dual)).tangent))
    for ours, theirs in zip(results[0], results[1], strict=True):
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_float32_tangents():
    x, v = _arrays((4,), (4,))
    (_, t), (_, tt) = _both_tangents(lambda lib, a: lib.tanh(a) * a,
                                     [x.astype(np.float32)], [v.astype(np.float32)])
    assert t.dtype == tt.dtype == np.float32
    np.testing.assert_allclose(t, tt, rtol=1e-5)


def test_complex_tangents():
    rng = np.random.default_rng(5)
    z, w = (rng.standard_normal(4) + 1j * rng.standard_normal(4) for _ in range(2))
    for f in (lambda lib, a: a * a, lambda lib, a: a.conj() * a, lambda lib, a: lib.exp(a).abs()):
        (_, t), (_, tt) = _both_tangents(f, [z], [w])
        np.testing.assert_allclose(t, tt, rtol=1e-10, atol=1e-12)


def test_in_place_changes_are_followed():
    x, v = _arrays((3,), (3,))
    results = []
    for lib, fw in ((tg, fwAD), (torch, tfw)):
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(x), lib.tensor(v))
            copy = dual.clone()
            before = fw.unpack_dual(copy).tangent.numpy().copy()
            copy.mul_(3)
            plain = lib.zeros(3, dtype=lib.float64)
            plain.add_(dual.exp())
            dual.mul_(3)  # the dual itself changed in place
            after = [fw.unpack_dual(t).tangent.numpy() for t in (copy, plain, dual)]
            results.append([before, *after])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_tangent_is_cached_until_changed():
    with fwAD.dual_level():
        dual = fwAD.make_dual(tg.tensor([1.0, 2.0], dtype=tg.float64), tg.ones(2, dtype=tg.float64))
        out = dual * 2
        first = fwAD.unpack_dual(out).tangent
        assert fwAD.unpack_dual(out).tangent is first
        out.add_(dual)
        np.testing.assert_array_equal(fwAD.unpack_dual(out).tangent.numpy(), [3.0, 3.0])
        (out ** 2).sum().backward()  # the graph stays usable for reverse mode after the tangent pass


def test_primal_that_requires_grad_gives_differentiable_primal_and_tangent():
    x, v = _arrays((4,), (4,))
    grads = []
    for lib, fw in ((tg, fwAD), (torch, tfw)):
        xr = lib.tensor(x, requires_grad=True)
        with fw.dual_level():
            dual = fw.make_dual(xr, lib.tensor(v))
            assert dual.requires_grad
            primal, tangent = fw.unpack_dual(lib.exp(dual).sum() * dual[0])
            assert primal.requires_grad and tangent.requires_grad
            assert fw.unpack_dual(primal).tangent is None
            grads.append([g.numpy() for g in lib.autograd.grad(primal, xr, retain_graph=True)]
                         + [g.numpy() for g in lib.autograd.grad(tangent, xr)])
        assert dual.requires_grad  # still a view of xr after the level
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_tangent_differentiable_with_respect_to_parameters():
    x, v, w = _arrays((3, 4), (3, 4), (4, 2))
    grads = []
    for lib, fw in ((tg, fwAD), (torch, tfw)):
        weight = lib.tensor(w, requires_grad=True)
        with fw.dual_level():
            _, tangent = fw.unpack_dual(lib.tanh(fw.make_dual(lib.tensor(x), lib.tensor(v)) @ weight))
            assert tangent.requires_grad
            (tangent ** 2).sum().backward()
        grads.append(np.asarray(weight.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_no_grad_refuses_instead_of_a_wrong_tangent():
    x = tg.tensor([1.0, 2.0], dtype=tg.float64)
    v = tg.ones(2, dtype=tg.float64)
    with fwAD.dual_level():
        with tg.no_grad(), pytest.raises(RuntimeError, match="no_grad"):
            fwAD.make_dual(x, v)
        dual = fwAD.make_dual(x, v)
        out = dual.sin()
        with tg.no_grad():
            inside = dual.sin()
            with pytest.raises(RuntimeError, match="grad mode"):
                fwAD.unpack_dual(inside)
            # a tensor computed with grad mode on still has its tangent
            np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.numpy(), np.cos(x.numpy()))


def test_unpacked_primal_carries_no_tangent_beside_the_dual():
    x, v = _arrays((3,), (3,))
    results = []
    for lib, fw in ((tg, fwAD), (torch, tfw)):
        xr = lib.tensor(x, requires_grad=True)  # (the primal is then a graph node: no tangent may pass it)
        with fw.dual_level():
            dual = fw.make_dual(xr, lib.tensor(v))
            primal = fw.unpack_dual(lib.sin(dual)).primal
            results.append(fw.unpack_dual(primal * dual).tangent.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_level_exits_on_an_exception():
    with pytest.raises(ZeroDivisionError), fwAD.dual_level():
        fwAD.make_dual(tg.ones(2, dtype=tg.float64), tg.ones(2, dtype=tg.float64))
        raise ZeroDivisionError
    assert fwAD._current_level == -1


def test_freed_graph_raises_instead_of_no_tangent():
    with fwAD.dual_level():
        dual = fwAD.make_dual(tg.ones(2, dtype=tg.float64), tg.ones(2, dtype=tg.float64))
        kept = (dual * 3).sum()
        np.testing.assert_array_equal(fwAD.unpack_dual(kept).tangent.numpy(), 6.0)
        out = (dual * dual).sum()
        out.backward()
        np.testing.assert_array_equal(fwAD.unpack_dual(kept).tangent.numpy(), 6.0)  # (cached before)
        with pytest.raises(RuntimeError, match="freed"):
            fwAD.unpack_dual(out)


def test_a_long_level_keeps_no_result_alive():
    import gc
    import weakref

    with fwAD.dual_level():
        dual = fwAD.make_dual(tg.ones(3, dtype=tg.float64), tg.ones(3, dtype=tg.float64))
        w = tg.ones(3, dtype=tg.float64, requires_grad=True)
        out = (dual * w).sum()
        primal, _ = fwAD.unpack_dual(out)
        refs = [weakref.ref(out), weakref.ref(primal)]
        del out, primal
        gc.collect()
        assert all(r() is None for r in refs)
        assert not fwAD._level.cache.keys() - {id(dual)} and not fwAD._level.primals
