"""PyTorch's calling conventions: its keyword names (`tg.exp(input=t)`), and its TypeError for a
non-tensor where a tensor belongs (`tg.sum(2.0)`), each checked against torch side by side."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

X = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]])
M = np.array([[4.0, 1.0], [1.0, 3.0]])

# name: call(lib, t, m) with torch's keyword names; t a 2x3 float64 tensor, m a 2x2 SPD matrix
KEYWORD_CALLS = {
    "exp": lambda lib, t, m: lib.exp(input=t),
    "special.expit": lambda lib, t, m: lib.special.expit(input=t),
    "special.xlogy": lambda lib, t, m: lib.special.xlogy(input=t.abs(), other=t.abs()),
    "special.chebyshev_polynomial_t": lambda lib, t, m: lib.special.chebyshev_polynomial_t(x=t, n=3),
    "clamp": lambda lib, t, m: lib.clamp(input=t, min=-0.5, max=1.0),
    "add": lambda lib, t, m: lib.add(input=t, other=t, alpha=2),
    "mul": lambda lib, t, m: lib.mul(input=t, other=3.0),
    "lt": lambda lib, t, m: lib.lt(input=t, other=0.3),
    "maximum": lambda lib, t, m: lib.maximum(input=t, other=t.flip(1)),
    "pow": lambda lib, t, m: lib.pow(input=t, exponent=2),
    "lerp": lambda lib, t, m: lib.lerp(input=t, end=t * 2, weight=0.25),
    "where": lambda lib, t, m: lib.where(condition=t > 0, input=t, other=-t),
    "sum": lambda lib, t, m: lib.sum(input=t, dim=1, keepdim=True),
    "logsumexp": lambda lib, t, m: lib.logsumexp(input=t, dim=0),
    "cumsum": lambda lib, t, m: lib.cumsum(input=t, dim=1),
    "transpose": lambda lib, t, m: lib.transpose(input=t, dim0=0, dim1=1),
    "flatten": lambda lib, t, m: lib.flatten(input=t),
    "squeeze": lambda lib, t, m: lib.squeeze(input=t[None], dim=0),
    "cat": lambda lib, t, m: lib.cat(tensors=[t, t], dim=0),
    "masked_fill": lambda lib, t, m: lib.masked_fill(input=t, mask=t > 0, value=1.0),
    "gather": lambda lib, t, m: lib.gather(input=t, dim=1, index=lib.tensor([[0], [2]])),
    "linalg.cholesky": lambda lib, t, m: lib.linalg.cholesky(input=m),
    "linalg.matrix_norm": lambda lib, t, m: lib.linalg.matrix_norm(input=m),
    "linalg.det": lambda lib, t, m: lib.linalg.det(A=m),
    "matrix_power": lambda lib, t, m: lib.matrix_power(input=m, n=3),
    "cholesky_solve": lambda lib, t, m: lib.cholesky_solve(input=m, input2=lib.linalg.cholesky(m)),
    "method transpose": lambda lib, t, m: t.transpose(dim0=0, dim1=1),
    "method masked_fill": lambda lib, t, m: t.masked_fill(mask=t > 0, value=2.0),
}


@pytest.mark.parametrize("name", list(KEYWORD_CALLS))
def test_torch_keyword_names(name):
    call = KEYWORD_CALLS[name]
    theirs = call(torch, torch.tensor(X), torch.tensor(M))
    ours = call(tg, tg.tensor(X), tg.tensor(M))
    np.testing.assert_allclose(np.asarray(ours.data), theirs.numpy(), rtol=1e-12)
    assert str(ours.dtype).removeprefix("tensorgrad.") == str(theirs.dtype).removeprefix("torch.")


NOT_A_TENSOR = [
    ("sum", (2.0,)), ("exp", (0.3,)), ("reshape", ([1.0, 2.0], (2,))), ("flatten", (0.5,)), ("exp_", (1.0,)),
    ("relu_", (0.3,)), ("prod", (0.3,)), ("softmax", (0.3, 0)), ("sort", (0.3,)), ("nansum", (0.3,)),
    ("permute", (0.3, (0,))), ("squeeze", (0.3,)), ("tril", (0.3,)), ("diagonal", (0.3,)), ("t", (0.3,)),
    ("nonzero", (0.3,)), ("argwhere", (0.3,)), ("isposinf", (0.3,)), ("nan_to_num", (0.3,)),
    ("logical_not", (0.3,)), ("square", (0.3,)), ("deg2rad", (0.3,)), ("det", (0.3,)), ("linalg.inv", (0.3,)),
    ("cat", ([1.0, 2.0],)), ("stack", ([1.0, 2.0],)), ("hstack", ([1.0, 2.0],)), ("meshgrid", (0.3,)),
    ("linalg.norm", (0.3,)), ("linalg.svd", (0.3,)), ("linalg.eigh", (0.3,)),
    ("linalg.multi_dot", ([1.0, 2.0],)),
]


def _get(lib, name):
    for part in name.split("."):
        lib = getattr(lib, part)
    return lib


@pytest.mark.parametrize(("name", "args"), NOT_A_TENSOR, ids=[n for n, _ in NOT_A_TENSOR])
def test_not_a_tensor_is_a_type_error(name, args):
    with pytest.raises(TypeError):
        _get(torch, name)(*args)
    with pytest.raises(TypeError) as info:
        _get(tg, name)(*args)
    assert name.split(".")[-1] in str(info.value) or "multi_dot" in str(info.value)
