"""Differential checks of `tg.func` and `tg.autograd.functional` against `torch.func` and
`torch.autograd.functional`: values (float64), the nesting of returns (tensor, tuple, list, dict)
and the exception types, over the cases a parity sweep found different."""

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.func

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A, B, D = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((2, 3, 4))


class Lib:
    """One namespace for both libraries: `lib.func`, `lib.AF`, `lib.t(array)`."""

    def __init__(self, m):
        self.m, self.torch = m, m is torch
        self.func = torch.func if self.torch else tg.func
        self.AF = torch.autograd.functional if self.torch else tg.autograd.functional

    def t(self, a):
        return self.m.tensor(np.array(a, dtype=np.float64))


def _norm(x):
    if isinstance(x, torch.Tensor | tg.Tensor):
        data = x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x.detach().data)
        return ("T", tuple(x.shape), str(x.dtype).replace("torch.", ""), np.array(data))
    if isinstance(x, tuple | list):
        return (type(x).__name__, [_norm(v) for v in x])
    if isinstance(x, dict):
        return ("dict", {k: _norm(v) for k, v in x.items()})
    return ("py", x)


def _same(ours, theirs):
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "T":
        assert ours[1:3] == theirs[1:3]
        np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-10, atol=1e-10)
    elif ours[0] in ("tuple", "list"):
        assert len(ours[1]) == len(theirs[1])
        for a, b in zip(ours[1], theirs[1], strict=True):
            _same(a, b)
    elif ours[0] == "dict":
        assert ours[1].keys() == theirs[1].keys()
        for k in ours[1]:
            _same(ours[1][k], theirs[1][k])
    else:
        assert ours == theirs


def _vmap_same_rows(L):
    r = L.func.vmap(lambda x: x * 0 + L.m.rand(4), randomness="same")(L.t(A))
    return bool((r[0] == r[1]).all() and (r[1] == r[2]).all())


def _first_grad(L):
    return L.func.grad(lambda x: (x.sin() * x).sum())(L.t(A))


CASES = {
    # vmap: pytrees, dims, out_dims, empty batches, randomness
    "vmap_neg_in_dim": lambda L: L.func.vmap(lambda x: x * 1, in_dims=-2)(L.t(D)),
    "vmap_out_dims_neg": lambda L: L.func.vmap(lambda x: x * 2, out_dims=-1)(L.t(D)),
    "vmap_multi_out_dims": lambda L: L.func.vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(L.t(A)),
    "vmap_list_out": lambda L: L.func.vmap(lambda x: [x.sum(), x * 2])(L.t(A)),
    "vmap_dict_out": lambda L: L.func.vmap(lambda x: {"a": x.sum(), "b": (x, x.exp())})(L.t(A)),
    "vmap_dict_in_dims": lambda L: L.func.vmap(lambda d: d["a"] + d["b"], in_dims=({"a": 0, "b": None},))(
        {"a": L.t(A), "b": L.t(B)}
    ),
    "vmap_list_in_dims": lambda L: L.func.vmap(lambda p: p[0] * p[1], in_dims=([0, 1],))([L.t(A), L.t(A.T)]),
    "vmap_kwargs_unmapped": lambda L: L.func.vmap(lambda x, s=1.0: x * s)(L.t(A), s=L.t(B)),
    "vmap_nested": lambda L: L.func.vmap(
        L.func.vmap(lambda a, b: (a * b).sum(), in_dims=(None, 0)), in_dims=(0, None)
    )(L.t(A), L.t(A)),
    "vmap_out_dims_1_tuple": lambda L: L.func.vmap(lambda x: x, out_dims=(0,))(L.t(A)),
    "vmap_empty_batch": lambda L: L.func.vmap(lambda x: x.sum(0))(L.t(np.zeros((0, 3, 2)))),
    "vmap_chunk_size": lambda L: L.func.vmap(lambda x: x.exp(), chunk_size=2)(L.t(A)),
    "vmap_randomness_same": _vmap_same_rows,
    "vmap_random_different_shape": lambda L: tuple(
        L.func.vmap(lambda x: x + L.m.rand(4), randomness="different")(L.t(A)).shape
    ),
    "vmap_err_random": lambda L: L.func.vmap(lambda x: x + L.m.rand(4))(L.t(A)),
    "vmap_err_dim_range": lambda L: L.func.vmap(lambda x: x, in_dims=2)(L.t(A)),
    "vmap_err_in_dims_list": lambda L: L.func.vmap(lambda x, y: x + y, in_dims=[0, 0])(L.t(A), L.t(A)),
    "vmap_err_in_dims_float": lambda L: L.func.vmap(lambda x: x, in_dims=0.5)(L.t(A)),
    "vmap_err_out_dims_float": lambda L: L.func.vmap(lambda x: x, out_dims=0.5)(L.t(A)),
    "vmap_err_out_dims_structure": lambda L: L.func.vmap(lambda x: (x, x), out_dims=(0,))(L.t(A)),
    "vmap_err_in_dims_structure": lambda L: L.func.vmap(lambda p: p[0], in_dims=((0, 0, 0),))(
        (L.t(A), L.t(A))
    ),
    "vmap_err_out_none_batched": lambda L: L.func.vmap(lambda x: x * 2, out_dims=None)(L.t(A)),
    "vmap_err_chunk0": lambda L: L.func.vmap(lambda x: x, chunk_size=0)(L.t(A)),
    "vmap_err_sizes": lambda L: L.func.vmap(lambda x, y: x + y)(L.t(A), L.t(D)),
    "vmap_err_nontensor": lambda L: L.func.vmap(lambda x, y: x * y)(L.t(A), 2.0),
    "vmap_err_returns_float": lambda L: L.func.vmap(lambda x: 1.0)(L.t(A)),
    # grad, vjp, jvp, linearize
    "grad_pytree_arg": lambda L: L.func.grad(lambda p: (p["w"] * p["b"].exp()).sum())(
        {"w": L.t(B), "b": L.t(B)}
    ),
    "grad_tuple_arg": lambda L: L.func.grad(lambda p: (p[0] * p[1]).sum())((L.t(B), L.t(B))),
    "grad_and_value_argnums": lambda L: L.func.grad_and_value(
        lambda x, y: (x * y.exp()).sum(), argnums=(0, 1)
    )(L.t(B), L.t(B)),
    "grad_vmap": lambda L: L.func.vmap(L.func.grad(lambda x: (x.sin() * x).sum()))(L.t(A)),
    "grad_err_argnums_list": lambda L: L.func.grad(lambda x, y: (x * y).sum(), argnums=[0, 1])(
        L.t(B), L.t(B)
    ),
    "grad_err_one_element_2d": lambda L: L.func.grad(lambda x: x.sum().reshape(1, 1))(L.t(A)),
    "grad_err_not_tensor": lambda L: L.func.grad(lambda x: 1.0)(L.t(A)),
    "grad_err_float_arg": lambda L: L.func.grad(lambda x: x * 2)(2.0),
    "vjp_dict_out": lambda L: (lambda o, fn: (o, fn({"a": L.t(B)})))(
        *L.func.vjp(lambda x: {"a": x.sin()}, L.t(B))
    ),
    "vjp_list_out": lambda L: (lambda o, fn: (o, fn([L.t(B), L.t(B)])))(
        *L.func.vjp(lambda x: [x.sin(), x.cos()], L.t(B))
    ),
    "vjp_pytree_primal": lambda L: L.func.vjp(lambda p: p["a"] * p["b"], {"a": L.t(B), "b": L.t(B)})[1](
        L.t(B)
    ),
    "vjp_called_twice": lambda L: (lambda o, fn: (fn(L.t(B)), fn(L.t(B * 2))))(
        *L.func.vjp(lambda x: x.sin(), L.t(B))
    ),
    "vjp_err_structure": lambda L: L.func.vjp(lambda x: x.sin(), L.t(B))[1]((L.t(B), L.t(B))),
    "vjp_err_shape": lambda L: L.func.vjp(lambda x: x.sin(), L.t(B))[1](L.t(A)),
    "vjp_err_not_tensor": lambda L: L.func.vjp(lambda x: 3.0, L.t(B)),
    "jvp": lambda L: L.func.jvp(
        lambda x, y: (x * y, (x.exp() + y).sum()), (L.t(B), L.t(B)), (L.t(B), L.t(B))
    ),
    "jvp_has_aux": lambda L: L.func.jvp(lambda x: (x.sin(), x * 2), (L.t(B),), (L.t(B),), has_aux=True),
    "jvp_err_not_tuple": lambda L: L.func.jvp(lambda x: x.sin(), L.t(B), L.t(B)),
    "jvp_err_structure": lambda L: L.func.jvp(lambda x: x.sin(), (L.t(B),), (L.t(B), L.t(B))),
    "jvp_err_shape": lambda L: L.func.jvp(lambda x: x.sin(), (L.t(B),), (L.t(A),)),
    # jacrev, jacfwd, hessian
    "jacrev_dict_out": lambda L: L.func.jacrev(lambda x: {"a": x.sin(), "b": x.sum()})(L.t(B)),
    "jacfwd_list_out": lambda L: L.func.jacfwd(lambda x: [x.sin(), x.sum()])(L.t(B)),
    "jacrev_dict_in": lambda L: L.func.jacrev(lambda p: p["a"] * p["b"])({"a": L.t(B), "b": L.t(B)}),
    "jacrev_tuple_out_argnums": lambda L: L.func.jacrev(
        lambda x, y: (x.sin(), (x * y).sum()), argnums=(0, 1)
    )(L.t(B), L.t(B)),
    "jacrev_has_aux": lambda L: L.func.jacrev(lambda x: (x.sin(), x.cos()), has_aux=True)(L.t(B)),
    "jacrev_chunk_size": lambda L: L.func.jacrev(lambda x: x.sin() * x.sum(), chunk_size=2)(L.t(B)),
    "hessian_argnums": lambda L: L.func.hessian(lambda x, y: (x.sin() * y.exp()).sum(), argnums=(0, 1))(
        L.t(B), L.t(B)
    ),
    "jacrev_err_chunk0": lambda L: L.func.jacrev(lambda x: x.sin(), chunk_size=0)(L.t(B)),
    "jacfwd_err_randomness": lambda L: L.func.jacfwd(lambda x: x.sin(), randomness="bad")(L.t(B)),
    "jacrev_err_int": lambda L: L.func.jacrev(lambda x: x * 2)(L.m.arange(3)),
    "jacfwd_err_int": lambda L: L.func.jacfwd(lambda x: x * 2)(L.m.arange(3)),
    "jacrev_err_not_tensor": lambda L: L.func.jacrev(lambda x: 3.0)(L.t(B)),
    "jacrev_err_kwargs": lambda L: L.func.jacrev(lambda x, s=None: x * s)(L.t(B), s=L.t(B)),
    # autograd.functional: structures and refusals
    "af_jacobian_tuple": lambda L: L.AF.jacobian(lambda x, y: (x * y, (x + y).sum()), (L.t(B), L.t(B))),
    "af_jacobian_forward": lambda L: L.AF.jacobian(
        lambda x, y: (x * y, x.sum()), (L.t(B), L.t(B)), vectorize=True, strategy="forward-mode"
    ),
    "af_hessian_forward": lambda L: L.AF.hessian(
        lambda x, y: (x * y.exp()).sum(),
        (L.t(B), L.t(B)),
        vectorize=True,
        outer_jacobian_strategy="forward-mode",
    ),
    "af_hvp_tuple": lambda L: L.AF.hvp(
        lambda x, y: (x.sin() * y.exp()).sum(), (L.t(B), L.t(B)), (L.t(B), L.t(B))
    ),
    "af_err_list_inputs": lambda L: L.AF.jacobian(lambda x, y: x * y, [L.t(B), L.t(B)]),
    "af_err_list_outputs": lambda L: L.AF.jacobian(lambda x: [x.sin(), x.sum()], L.t(B)),
    "af_err_strict_vectorize": lambda L: L.AF.jacobian(lambda x: x * 2, L.t(B), strict=True, vectorize=True),
    "af_err_empty_output": lambda L: L.AF.jacobian(lambda x: x[:0], L.t(B)),
    "af_err_int_input": lambda L: L.AF.hvp(lambda x: (x * 2).sum(), L.m.arange(3), L.m.arange(3)),
}


def _run(case, lib):
    try:
        return True, case(Lib(lib))
    except Exception as error:  # noqa: BLE001 (the comparison is the test)
        return False, error


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    torch.set_default_dtype(torch.float64)
    try:
        theirs_ok, theirs = _run(CASES[name], torch)
        ours_ok, ours = _run(CASES[name], tg)
    finally:
        torch.set_default_dtype(torch.float32)
    if not theirs_ok:
        assert not ours_ok, f"torch raised {theirs!r}, tensorgrad returned {ours!r}"
        assert isinstance(ours, type(theirs)), f"torch raised {theirs!r}, tensorgrad {ours!r}"
        return
    assert ours_ok, f"tensorgrad raised {ours!r}"
    _same(_norm(ours), _norm(theirs))


def _modules(nn, m):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2 = nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)
            self.l2.weight = self.l1.weight
            with m.no_grad():
                self.l1.weight.copy_(m.eye(3) * 0.5)

        def forward(self, x):
            return self.l2(self.l1(x)) + getattr(self, "extra", 0)

    return Tied()


@pytest.mark.parametrize(
    "given",
    [
        ("l1.weight",),
        ("l2.weight",),
        ("l1.weight", "l2.weight"),
        ("extra",),
        ("q.extra",),
        ("l1.weight", "l2.weight", "different"),
    ],
)
@pytest.mark.parametrize("tie_weights", [True, False])
def test_functional_call_tied_and_unknown_names(given, tie_weights):
    w, w2, x = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3)), RNG.standard_normal((5, 3))
    results = []
    for m, nn, func in ((torch, torch.nn, torch.func), (tg, tg.nn, tg.func)):
        module = _modules(nn, m).double()
        tensors = {name: m.tensor(w) for name in given if name != "different"}
        if "different" in given:
            tensors["l2.weight"] = m.tensor(w2)
        elif "l2.weight" in tensors:
            tensors["l2.weight"] = tensors.get("l1.weight", tensors["l2.weight"])
        try:
            out = func.functional_call(module, tensors, (m.tensor(x),), tie_weights=tie_weights)
            results.append(np.asarray(out.detach().numpy() if m is torch else out.data))
        except Exception as error:  # noqa: BLE001
            results.append(type(error))
        assert not hasattr(module, "extra")
    ours, theirs = results[1], results[0]
    if isinstance(theirs, type):
        assert isinstance(ours, type) and issubclass(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_linearize_matches_torch_jvp():
    out, jvp_fn = tg.func.linearize(lambda x: x.sin() * x, tg.tensor(B))
    for v in (B, 2 * B):
        _, theirs = torch.func.jvp(lambda x: x.sin() * x, (torch.tensor(B),), (torch.tensor(v),))
        np.testing.assert_allclose(jvp_fn(tg.tensor(v)).data, theirs.numpy(), rtol=1e-10)
    np.testing.assert_allclose(out.data, np.sin(B) * B, rtol=1e-12)
