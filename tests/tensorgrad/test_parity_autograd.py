"""The autograd API side by side with PyTorch: each case runs the same code on `tg` and on `torch`
and compares the outcome (the values returned, or the exception's type)."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _t(m, values, requires_grad=True):
    return m.tensor(values, dtype=m.float64, requires_grad=requires_grad)


def _np(x):
    if isinstance(x, tuple | list):
        return [_np(v) for v in x]
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, tg.Tensor):
        return np.asarray(x.data)
    return x


def _plain_generator(m):
    @m.no_grad()
    def steps(x):
        yield (x * 2).requires_grad
        yield m.is_grad_enabled()

    seen = []
    for value in steps(_t(m, [1.0])):
        seen += [value, m.is_grad_enabled()]  # the caller's code runs with grad mode on
    return seen


def _set_grad_enabled_call(m):
    m.set_grad_enabled(False)
    off = m.is_grad_enabled()
    m.set_grad_enabled(True)
    return [off, m.is_grad_enabled()]


def _set_grad_enabled_decorator(m):
    @m.set_grad_enabled(False)
    def inside():
        return m.is_grad_enabled()

    return [m.is_grad_enabled(), inside(), m.is_grad_enabled()]


def _inner_hook_capture(m, order, create_graph=False):
    x = _t(m, [1.0, 2.0])
    h = x * 1
    h.register_hook(lambda g: g * 2)
    inputs = [h, x] if order else [h]
    return [g.detach() for g in m.autograd.grad((h * h).sum(), inputs, create_graph=create_graph)]


def _bad_function(m, grads):
    def forward(ctx, x):
        return x * 2

    def backward(ctx, g):
        return grads(g)

    return type("Twice", (m.autograd.Function,), {"forward": staticmethod(forward),
                                                  "backward": staticmethod(backward)})


def _function_gradient(m, grads):
    x = _t(m, [1.0, 2.0])
    _bad_function(m, grads).apply(x).sum().backward()
    return x.grad


def _gradcheck_wrong(m, **kwargs):
    return m.autograd.gradcheck(_bad_function(m, lambda g: g * 3).apply, (_t(m, [1.0, 2.0]),), **kwargs)


def _with_grad(m):
    return _t(m, [1.0, 2.0])


def _hooked(m, hook):
    x = _with_grad(m)
    x.register_hook(hook)
    (x * x).sum().backward()
    return x.grad


def _grad_of_unused(m, **kwargs):
    x, z = _with_grad(m), _t(m, [5.0])
    return m.autograd.grad((x * x).sum(), [x, z], **kwargs)


CASES = {
    # autograd.grad
    "grad_empty_inputs": lambda m: m.autograd.grad((_with_grad(m) * 2).sum(), []),
    "grad_materialize_refuses_allow_unused_false": lambda m: m.autograd.grad(
        (_with_grad(m) * 2).sum(), [_t(m, [1.0])], allow_unused=False, materialize_grads=True),
    "grad_materialize": lambda m: _grad_of_unused(m, materialize_grads=True),
    "grad_unused": _grad_of_unused,
    "grad_unused_allowed": lambda m: _grad_of_unused(m, allow_unused=True),
    "grad_batched": lambda m: (lambda x: m.autograd.grad(x * x * x, x, grad_outputs=m.tensor(
        [[1.0, 0.0], [0.0, 1.0], [2.0, 3.0]], dtype=m.float64), is_grads_batched=True))(_t(m, [1.0, 2.0])),
    "grad_batched_two_inputs": lambda m: (lambda x, y: m.autograd.grad(x * y, (x, y), grad_outputs=m.eye(
        2, dtype=m.float64), is_grads_batched=True))(_t(m, [1.0, 2.0]), _t(m, [3.0, 4.0])),
    "grad_inner_hook_alone": lambda m: _inner_hook_capture(m, order=False),
    "grad_inner_hook_with_its_input": lambda m: _inner_hook_capture(m, order=True),
    "grad_inner_hook_alone_recorded": lambda m: _inner_hook_capture(m, order=False, create_graph=True),
    "grad_inner_hook_with_its_input_recorded":
        lambda m: _inner_hook_capture(m, order=True, create_graph=True),
    # grad mode
    "no_grad_generator": _plain_generator,
    "set_grad_enabled_call": _set_grad_enabled_call,
    "set_grad_enabled_decorator": _set_grad_enabled_decorator,
    "set_grad_enabled_not_bool": lambda m: m.set_grad_enabled(1),
    # hooks
    "hook_changes_dtype": lambda m: _hooked(m, lambda g: g.float()),
    "hook_returns_a_number": lambda m: _hooked(m, lambda g: 3),
    "hook_changes_shape": lambda m: _hooked(m, lambda g: g.sum()),
    "hook_doubles": lambda m: _hooked(m, lambda g: g * 2),
    # .grad, detach_
    "grad_of_another_dtype": lambda m: setattr(_t(m, [1.0, 2.0]), "grad", m.ones(2, dtype=m.float32)),
    "grad_of_another_shape": lambda m: setattr(_t(m, [1.0, 2.0]), "grad", m.ones(3, dtype=m.float64)),
    "detach__of_a_view": lambda m: _t(m, [1.0, 2.0])[:1].detach_(),
    "detach__of_an_inner_tensor": lambda m: (lambda h: (h.detach_(), h.is_leaf, h.requires_grad)[1:])(
        _t(m, [1.0]) * 2),
    # Function's returned gradients
    "function_too_few": lambda m: _function_gradient(m, lambda g: ()),
    "function_too_many": lambda m: _function_gradient(m, lambda g: (g, g)),
    "function_extra_none": lambda m: _function_gradient(m, lambda g: (g * 3, None)),
    "function_wrong_shape": lambda m: _function_gradient(m, lambda g: g.sum()),
    # functional
    "jacobian_forward_mode": lambda m: m.autograd.functional.jacobian(
        lambda x: x.exp() * x, m.tensor([1.0, 2.0], dtype=m.float64), vectorize=True,
        strategy="forward-mode"),
    "jacobian_forward_mode_unvectorized": lambda m: m.autograd.functional.jacobian(
        lambda x: x.exp(), m.tensor([1.0, 2.0], dtype=m.float64), strategy="forward-mode"),
    "jacobian_unknown_strategy": lambda m: m.autograd.functional.jacobian(
        lambda x: x.exp(), m.tensor([1.0, 2.0], dtype=m.float64), strategy="sideways"),
    "hessian_forward_outer": lambda m: m.autograd.functional.hessian(
        lambda x: (x ** 3).prod(), m.tensor([1.0, 2.0], dtype=m.float64), vectorize=True,
        outer_jacobian_strategy="forward-mode"),
    # gradcheck
    "gradcheck_one_tensor": lambda m: m.autograd.gradcheck(lambda x: (x ** 2).sum(), _t(m, [1.0, 2.0])),
    "gradcheck_tuple_output": lambda m: m.autograd.gradcheck(lambda x: (x.exp(), x * 2), (_with_grad(m),)),
    "gradcheck_options": lambda m: m.autograd.gradcheck(lambda x: x.exp(), (_t(m, [1.0, 2.0]),), eps=1e-6,
                                                        atol=1e-5, rtol=1e-3, nondet_tol=0.0, fast_mode=True,
                                                        check_undefined_grad=True, check_batched_grad=False),
    "gradcheck_nothing_requires_grad": lambda m: m.autograd.gradcheck(lambda x: x.exp(),
                                                                      (_t(m, [1.0], requires_grad=False),)),
    "gradcheck_wrong_raises": _gradcheck_wrong,
    "gradcheck_wrong_returns_false": lambda m: _gradcheck_wrong(m, raise_exception=False),
    "gradgradcheck_returns_false": lambda m: m.autograd.gradgradcheck(
        _bad_function(m, lambda g: g.detach() * 3).apply, (_t(m, [1.0, 2.0]),), raise_exception=False),
}


@pytest.mark.parametrize("name", CASES)
def test_autograd_api_matches_torch(name):
    case = CASES[name]
    try:
        expected = _np(case(torch))
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        expected_error = type(error)
        if expected_error.__name__ == "GradcheckError":
            expected_error = RuntimeError  # (torch's own class, a RuntimeError)
        with pytest.raises(expected_error):
            case(tg)
        return
    ours = _np(case(tg))
    if isinstance(expected, list):
        assert isinstance(ours, list) and len(ours) == len(expected)
        for a, b in zip(ours, expected, strict=True):
            if isinstance(b, np.ndarray):
                assert a.shape == b.shape and a.dtype == b.dtype
                np.testing.assert_allclose(a, b, rtol=1e-6)
            else:
                assert a == b
    elif isinstance(expected, np.ndarray):
        assert ours.shape == expected.shape and ours.dtype == expected.dtype
        np.testing.assert_allclose(ours, expected, rtol=1e-6)
    else:
        assert ours == expected


def test_gradcheck_error_is_runtime_and_assertion_error():
    with pytest.raises(RuntimeError):
        _gradcheck_wrong(tg)
    with pytest.raises(AssertionError):
        _gradcheck_wrong(tg)
