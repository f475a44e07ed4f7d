"""tg.compile and tg.compiler: PyTorch's entry points, running the eager code unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad import nn

# torch.compile starts PyTorch's compiler even when it only builds the wrapper (see conftest.py).
pytestmark = pytest.mark.usefixtures("keep_pytorchs_distribution_checks")


def _model() -> nn.Module:
    tg.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_a_compiled_module_computes_and_trains_as_the_original():
    model, x, y = _model(), tg.randn(8, 3), tg.randint(0, 2, (8,))
    compiled = tg.compile(model)
    assert compiled._orig_mod is model and tg.compile(model[0]).weight is model[0].weight
    assert tg.equal(compiled(x), model(x))
    optimizer = tg.optim.SGD(compiled.parameters(), lr=0.5)
    before = model[0].weight.detach().clone()
    nn.functional.cross_entropy(compiled(x), y).backward()
    optimizer.step()
    assert model[0].weight.grad is not None and not tg.equal(model[0].weight, before)


def test_a_compiled_module_shares_state_and_mode_with_the_original():
    model = _model()
    compiled = tg.compile(model)
    compiled.eval()
    assert not model.training and not model[0].training
    compiled.note = "set through the compiled module"
    assert model.note == "set through the compiled module"
    assert [p is q for p, q in zip(compiled.parameters(), model.parameters(), strict=True)] == [True] * 4


def test_compiled_functions_keep_their_name_and_values():
    @tg.compile
    def double(x):
        """Twice x."""
        return 2 * x

    with_mode = tg.compile(mode="max-autotune", fullgraph=True)(lambda x: x + 1)
    assert double.__name__ == "double" and double.__doc__ == "Twice x."
    assert double(tg.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    assert with_mode(tg.tensor(1.0)).item() == 2.0
    plain = _model()
    assert tg.compile(plain, disable=True) is plain


def test_module_compile_works_in_place():
    model = _model()
    assert model.compile(mode="reduce-overhead") is None
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest"):
        model.compile(mode="fastest")


def test_compiler_queries():
    assert tg.compiler.is_compiling() is False and tg.compiler.is_dynamo_compiling() is False
    function = tg.compiler.disable(len)
    assert function is len and tg.compiler.disable()(len) is len
    assert tg.compiler.reset() is None
    assert "compile" in dir(tg) and "compiler" in dir(tg)


torch_cases = [
    {"mode": "fastest"},
    {"mode": "default", "options": {"trace.enabled": True}},
    {"backend": "no-such-backend"},
]


@pytest.mark.parametrize("kwargs", torch_cases, ids=["mode", "mode-and-options", "backend"])
def test_arguments_are_refused_as_pytorch_refuses_them(kwargs):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        torch.compile(lambda x: x, **kwargs)
    with pytest.raises(RuntimeError) as ours:
        tg.compile(lambda x: x, **kwargs)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(AssertionError, match="A callable function is expected"):
        tg.compile(3)


def test_state_dicts_of_compiled_modules_load_either_way():
    torch = pytest.importorskip("torch")
    ours = tg.compile(nn.Linear(3, 2))
    theirs = torch.compile(torch.nn.Linear(3, 2))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert repr(ours).splitlines() == repr(theirs).splitlines()
    assert torch.compiler.list_backends() == tg.compiler.list_backends()
