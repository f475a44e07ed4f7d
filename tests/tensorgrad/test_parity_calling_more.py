"""PyTorch's calling conventions, continued: the keyword names of the matrix products, the
`*_like` creators and the Tensor methods (`t.reshape(shape=...)`, `t.mm(mat2=...)`), and the
TypeError naming the op for a non-tensor where a tensor belongs, each checked against torch."""

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as TF

torch = pytest.importorskip("torch")
F = torch.nn.functional

_rng = np.random.default_rng(0)
ARRAYS = {"M": _rng.standard_normal((3, 3)), "B": _rng.standard_normal((2, 3, 3)),
          "V": _rng.standard_normal(3), "X": _rng.standard_normal((2, 3))}

# name: call(lib, functional, t) with torch's keyword names; t("M") a float64 tensor of ARRAYS["M"]
KEYWORD_CALLS = {
    "mm": lambda lib, f, t: lib.mm(input=t("M"), mat2=t("M")),
    "bmm": lambda lib, f, t: lib.bmm(input=t("B"), mat2=t("B")),
    "mv": lambda lib, f, t: lib.mv(input=t("M"), vec=t("V")),
    "dot": lambda lib, f, t: lib.dot(input=t("V"), tensor=t("V") * 2),
    "outer": lambda lib, f, t: lib.outer(input=t("V"), vec2=t("V") + 1),
    "ger": lambda lib, f, t: lib.ger(input=t("V"), vec2=t("V") + 1),
    "matmul": lambda lib, f, t: lib.matmul(input=t("M"), other=t("V")),
    "cross": lambda lib, f, t: lib.cross(input=t("M"), other=t("M").flip(0), dim=0),
    "inner": lambda lib, f, t: lib.inner(input=t("M"), other=t("X")),
    "kron": lambda lib, f, t: lib.kron(input=t("X"), other=t("M")),
    "vdot": lambda lib, f, t: lib.vdot(input=t("V"), other=t("V") - 1),
    "addbmm": lambda lib, f, t: lib.addbmm(input=t("M"), batch1=t("B"), batch2=t("B"), beta=2, alpha=3),
    "addr": lambda lib, f, t: lib.addr(input=t("M"), vec1=t("V"), vec2=t("V"), beta=2, alpha=3),
    "addcdiv": lambda lib, f, t: lib.addcdiv(input=t("M"), tensor1=t("M"), tensor2=t("M") + 5, value=2),
    "cdist": lambda lib, f, t: lib.cdist(x1=t("M"), x2=t("X"), p=1.0,
                                         compute_mode="donot_use_mm_for_euclid_dist"),
    "pdist": lambda lib, f, t: lib.pdist(input=t("M"), p=1.0),
    "tensordot": lambda lib, f, t: lib.tensordot(a=t("M"), b=t("M"), dims=1),
    "zeros_like": lambda lib, f, t: lib.zeros_like(input=t("X")),
    "ones_like": lambda lib, f, t: lib.ones_like(input=t("X"), dtype=lib.int32),
    "full_like": lambda lib, f, t: lib.full_like(input=t("X"), fill_value=2.5),
    "randint_like": lambda lib, f, t: lib.randint_like(input=t("X"), low=3, high=4),
    "empty_like": lambda lib, f, t: lib.empty_like(input=t("X")).fill_(1.0),
    "rand_like": lambda lib, f, t: lib.rand_like(input=t("X")) * 0,
    "linear kw": lambda lib, f, t: f.linear(input=t("X"), weight=t("M"), bias=t("V")),
    "linear 1-D weight": lambda lib, f, t: f.linear(t("V"), t("V")),
    "linear 2-D input 1-D weight": lambda lib, f, t: f.linear(t("X"), t("V")),
    "reshape(shape=)": lambda lib, f, t: t("X").reshape(shape=(3, 2)),
    "reshape positional": lambda lib, f, t: t("X").reshape(3, -1),
    "view(size=)": lambda lib, f, t: t("X").view(size=(3, 2)),
    "view positional": lambda lib, f, t: t("X").view(6),
    "expand(size=)": lambda lib, f, t: t("V").expand(size=(2, 3)),
    "expand implicit": lambda lib, f, t: t("V").expand(2, -1, implicit=True),
    "flip(dims=)": lambda lib, f, t: t("X").flip(dims=(0, 1)),
    "flip positional": lambda lib, f, t: t("X").flip(1),
    "tile(dims=)": lambda lib, f, t: t("X").tile(dims=(2,)),
    "repeat(repeats=)": lambda lib, f, t: t("X").repeat(repeats=(2, 1)),
    "repeat positional": lambda lib, f, t: t("X").repeat(1, 2),
    "method mm": lambda lib, f, t: t("M").mm(mat2=t("M")),
    "method bmm": lambda lib, f, t: t("B").bmm(mat2=t("B")),
    "method dot": lambda lib, f, t: t("V").dot(tensor=t("V")),
    "method outer": lambda lib, f, t: t("V").outer(vec2=t("V")),
    "max(other=)": lambda lib, f, t: t("X").max(other=-t("X")),
    "min(other=)": lambda lib, f, t: t("X").min(other=-t("X")),
    "nanmean(dtype=)": lambda lib, f, t: t("X").float().nanmean(dtype=lib.float64),
    "nansum(dtype=)": lambda lib, f, t: t("X").int().nansum(dtype=lib.float32),
    "broadcast_to(size=)": lambda lib, f, t: t("V").broadcast_to(size=(2, 3)),
    "tensor_split(sections=)": lambda lib, f, t: t("X").tensor_split(sections=3, dim=1)[2],
    "tensor_split(indices=)": lambda lib, f, t: t("X").tensor_split(indices=[1], dim=1)[1],
    "hsplit(sections=)": lambda lib, f, t: t("X").hsplit(sections=3)[1],
    "vsplit(indices=)": lambda lib, f, t: t("X").vsplit(indices=[1])[1],
    "swapdims": lambda lib, f, t: t("X").swapdims(dim0=0, dim1=1),
    "sum_to_size(size=)": lambda lib, f, t: t("X").sum_to_size(size=(1, 3)),
    "resize_(size=)": lambda lib, f, t: t("X").resize_(size=(3, 2)),
    "resize_as_": lambda lib, f, t: t("X").resize_as_(the_template=t("M")[:, :2]),
    "copy_(other=)": lambda lib, f, t: t("X").copy_(other=t("V")),
    "div_ rounding_mode": lambda lib, f, t: t("X").div_(0.3, rounding_mode="floor"),
    "uniform_(from, to)": lambda lib, f, t: t("X").uniform_(**{"from": 2.0, "to": 2.0}),
    "random_(from, to)": lambda lib, f, t: t("X").random_(**{"from": 4, "to": 5}),
}


@pytest.mark.parametrize("name", list(KEYWORD_CALLS))
def test_torch_keyword_names(name):
    theirs = KEYWORD_CALLS[name](torch, F, lambda key: torch.tensor(ARRAYS[key]))
    ours = KEYWORD_CALLS[name](tg, TF, lambda key: tg.tensor(ARRAYS[key]))
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype).removeprefix("tensorgrad.") == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(np.asarray(ours.data, dtype=float), theirs.double().numpy(), rtol=1e-6)


NOT_A_TENSOR = [
    ("mm", (0.3, "M")), ("mm", ("M", 0.3)), ("bmm", (0.3, "B")), ("mv", (0.3, "V")), ("dot", ("V", 0.3)),
    ("outer", (0.3, "V")), ("ger", ([1.0], "V")), ("matmul", (0.3, "M")), ("matmul", ("M", 0.3)),
    ("cross", (0.3, "M")), ("inner", ("M", 0.3)), ("kron", (0.3, "M")), ("vdot", (0.3, "V")),
    ("addmm", ("M", 0.3, "M")), ("addbmm", (0.3, "B", "B")), ("addmv", (0.3, "M", "V")),
    ("addr", (0.3, "V", "V")),
    ("addcdiv", (0.3, "M", "M")), ("addcmul", ("M", 0.3, "M")), ("cdist", (0.3, "M")), ("pdist", (0.3,)),
    ("chain_matmul", (0.3, "M")), ("zeros_like", (0.3,)), ("full_like", (0.3, 1.0)), ("rand_like", ([1.0],)),
    ("randint_like", (0.3, 3)), ("clone", (0.3,)), ("bernoulli", (0.3,)), ("poisson", (0.3,)),
    ("nn.functional.linear", (0.3, "M")), ("nn.functional.bilinear", (0.3, "M", "B")),
]


def _get(lib, name):
    for part in name.split("."):
        lib = getattr(lib, part)
    return lib


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("name", "args"), NOT_A_TENSOR,
                         ids=[f"{n}{i}" for i, (n, _) in enumerate(NOT_A_TENSOR)])
def test_not_a_tensor_is_a_type_error(name, args):
    def call(lib):
        _get(lib, name)(*(lib.tensor(ARRAYS[a]) if isinstance(a, str) else a for a in args))

    with pytest.raises(TypeError):
        call(torch)
    with pytest.raises(TypeError) as info:
        call(tg)
    assert name.split(".")[-1] in str(info.value)


@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_bilinear_mixed_dtypes_are_refused(which):
    def call(lib, f):
        operands = [lib.ones(2, 3), lib.ones(2, 3), lib.ones(4, 3, 3), lib.ones(4)]
        operands[which] = operands[which].double()
        return f.bilinear(*operands)

    with pytest.raises(RuntimeError):
        call(torch, F)
    with pytest.raises(RuntimeError, match="bilinear"):
        call(tg, TF)


def test_linear_1d_weight_with_bias_is_refused_and_gradient_matches():
    with pytest.raises(RuntimeError):
        F.linear(torch.ones(2, 3), torch.ones(3), torch.ones(()))
    with pytest.raises(RuntimeError):
        TF.linear(tg.ones(2, 3), tg.ones(3), tg.ones(()))
    x, w = ARRAYS["X"], ARRAYS["V"]
    grads = []
    for lib, f in ((torch, F), (tg, TF)):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        (f.linear(xt, wt) * lib.tensor([1.0, -2.0])).sum().backward()
        grads.append([np.asarray(g.grad if lib is tg else g.grad.numpy()) for g in (xt, wt)])
    for ours, theirs in zip(grads[1], grads[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_sizes_given_twice_are_refused():
    with pytest.raises(TypeError, match="reshape"):
        tg.ones(2, 3).reshape(3, 2, shape=(3, 2))
    with pytest.raises(TypeError, match="tensor_split"):
        tg.ones(2, 3).tensor_split(2, sections=2)
