"""Bad input gets a clear error, never a wrong answer (DESIGN.md), and never numpy's traceback.

Each error's type and message are pinned: shapes that don't broadcast name the op and both
shapes; a matmul mismatch names both shapes and the mismatched dimensions; a dtype that can't
carry a gradient says so. The error is raised from tensorgrad's own frame, with numpy's
exception suppressed (`raise ... from None`), so the user reads one message, not two
tracebacks.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling


def assert_clear(info: pytest.ExceptionInfo, *parts: str) -> None:
    """The message holds every part; no chained numpy exception; raised outside numpy."""
    message = str(info.value)
    for part in parts:
        assert part in message, (part, message)
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__
    assert "numpy" not in str(info.traceback[-1].path), info.traceback[-1].path


BROADCAST = [
    ("+", lambda a, b: a + b),
    ("-", lambda a, b: a - b),
    ("*", lambda a, b: a * b),
    ("/", lambda a, b: a / b),
    ("**", lambda a, b: a ** b),
    ("maximum", tg.maximum),
    ("minimum", tg.minimum),
    ("<", lambda a, b: a < b),
    ("==", lambda a, b: a == b),
    ("where", lambda a, b: tg.where(a > 0, a, b)),
]


@pytest.mark.parametrize(("op", "fn"), BROADCAST, ids=[name for name, _ in BROADCAST])
@pytest.mark.parametrize(("shape_a", "shape_b"), [((3,), (4,)), ((2, 3), (3, 2)), ((4, 1, 3), (2, 2))])
def test_shapes_that_do_not_broadcast_name_the_op_and_both_shapes(op, fn, shape_a, shape_b):
    a, b = tg.ones(shape_a, requires_grad=True), tg.ones(shape_b)
    with pytest.raises(ValueError) as info:
        fn(a, b)
    assert_clear(info, op, str(shape_a), str(shape_b))


@pytest.mark.parametrize(("shape_a", "shape_b", "parts"), [
    ((3, 4), (5, 2), ["(3, 4)", "(5, 2)", "dimension -1", "(4)", "dimension -2", "(5)"]),
    ((3,), (4,), ["(3,)", "(4,)", "(3)", "(4)"]),
    ((3, 4), (5,), ["(3, 4)", "(5,)", "(4)", "(5)"]),
    ((2,), (3, 2), ["(2,)", "(3, 2)", "(2)", "(3)"]),
    ((2, 3, 4), (2, 5, 6), ["(2, 3, 4)", "(2, 5, 6)", "(4)", "(5)"]),
])
def test_matmul_mismatch_names_both_shapes_and_the_dimension(shape_a, shape_b, parts):
    with pytest.raises(ValueError) as info:
        tg.ones(shape_a) @ tg.ones(shape_b)
    assert_clear(info, "matmul", *parts)


def test_matmul_batch_dimensions_that_do_not_broadcast():
    with pytest.raises(ValueError) as info:
        tg.ones(2, 3, 4) @ tg.ones(3, 4, 5)
    assert_clear(info, "matmul", "(2, 3, 4)", "(3, 4, 5)", "batch")


def test_matmul_of_a_0d_tensor():
    with pytest.raises(ValueError) as info:
        tg.tensor(2.0) @ tg.ones(2)
    assert_clear(info, "matmul", "()", "(2,)")


@pytest.mark.parametrize("dtype", [tg.int64, tg.int32, tg.bool_])
def test_a_dtype_that_cannot_carry_a_gradient_says_so(dtype):
    with pytest.raises(RuntimeError) as info:
        tg.zeros(3, dtype=dtype).requires_grad_()
    assert_clear(info, "floating point", str(np.dtype(dtype)))


ERRORS = [
    ("cat", lambda: tg.cat([tg.ones(2, 3), tg.ones(3, 2)], dim=1), ValueError, ["cat", "(2, 3)", "(3, 2)"]),
    ("cat empty", lambda: tg.cat([]), ValueError, ["cat"]),
    ("stack", lambda: tg.stack([tg.ones(2), tg.ones(3)]), ValueError, ["stack", "(2,)", "(3,)"]),
    ("reshape", lambda: tg.ones(2, 3).reshape(4, 2), ValueError, ["reshape", "(4, 2)", "(2, 3)"]),
    ("view size", lambda: tg.ones(2, 3).view(4, 2), ValueError, ["view", "(4, 2)", "(2, 3)"]),
    ("view strides", lambda: tg.ones(2, 3).T.view(6), RuntimeError, ["view", "contiguous"]),
    ("permute", lambda: tg.ones(2, 3).permute(0, 0), ValueError, ["permute", "(2, 3)"]),
    ("expand", lambda: tg.ones(2, 3).expand(4, 3), ValueError, ["expand", "(2, 3)", "(4, 3)"]),
    ("expand fewer dims", lambda: tg.ones(2, 3).expand(3), ValueError, ["expand", "(2, 3)"]),
    ("index", lambda: tg.ones(2, 3)[2], IndexError, ["(2, 3)"]),
    ("advanced index", lambda: tg.ones(2, 3)[[0, 5]], IndexError, ["(2, 3)"]),
    ("sum dim", lambda: tg.ones(2, 3).sum(dim=2), IndexError, ["sum", "2"]),
    ("softmax dim", lambda: tg.ones(3).softmax(1), IndexError, ["softmax"]),
    ("transpose dim", lambda: tg.ones(3).transpose(0, 1), IndexError, ["transpose"]),
    ("item", lambda: tg.ones(2, 3).item(), ValueError, ["item", "(2, 3)"]),
    ("string data", lambda: tg.tensor("abc"), TypeError, ["str"]),
    ("where condition", lambda: tg.where(tg.ones(2), tg.ones(2), tg.ones(2)), RuntimeError,
     ["where", "bool"]),
    ("setitem", lambda: tg.ones(2, 3).__setitem__(0, tg.ones(4)), ValueError, ["(4,)", "(3,)"]),
    ("numpy of graph tensor", lambda: tg.ones(2, requires_grad=True).numpy(), RuntimeError, ["detach"]),
    ("in-place shape change", lambda: tg.ones(3).add_(tg.ones(2, 3)), ValueError, ["add_", "(2, 3)", "(3,)"]),
    ("in-place dtype", lambda: tg.ones(2, dtype=tg.int64).add_(0.5), RuntimeError, ["add_", "int64"]),
    ("negative step", lambda: tg.ones(3)[::-1], ValueError, ["step must be greater than zero", "flip"]),
    ("negative step, setitem", lambda: tg.ones(3).__setitem__(slice(None, None, -2), 0.0), ValueError,
     ["step must be greater than zero"]),
    ("in-place on expand", lambda: tg.ones(3).expand(2, 3).add_(1.0), RuntimeError, ["add_", "clone"]),
    ("copy_", lambda: tg.ones(2).copy_(tg.ones(3)), ValueError, ["copy_", "(3,)", "(2,)"]),
    ("mean of ints", lambda: tg.tensor([1, 2]).mean(), RuntimeError, ["mean", "int64"]),
    ("number and string", lambda: tg.ones(2) + "a", TypeError, ["str"]),
    ("from_numpy list", lambda: tg.from_numpy([1.0]), TypeError, ["from_numpy", "list"]),
    ("clamp without bounds", lambda: tg.ones(2).clamp(), ValueError, ["clamp"]),
    ("bool of many", lambda: bool(tg.ones(2)), RuntimeError, ["ambiguous"]),
    # nn.functional
    ("linear 3-D weight", lambda: F.linear(tg.ones(2, 3), tg.ones(1, 4, 3)), ValueError,
     ["linear", "2-D", "(1, 4, 3)"]),
    ("linear features", lambda: F.linear(tg.ones(2, 5), tg.ones(4, 3)), ValueError,
     ["linear", "(2, 5)", "(4, 3)", "5", "3"]),
    ("linear 0-d input", lambda: F.linear(tg.tensor(1.0), tg.ones(4, 3)), ValueError, ["linear", "()"]),
    ("linear bias", lambda: F.linear(tg.ones(2, 3), tg.ones(4, 3), tg.ones(3)), ValueError,
     ["linear", "bias", "(4,)", "(3,)"]),
    ("linear dtypes", lambda: F.linear(tg.ones(2, 3), tg.ones(4, 3, dtype=tg.float64)), TypeError,
     ["linear", "float32", "float64"]),
    ("cross_entropy float target", lambda: F.cross_entropy(tg.ones(2, 3), tg.ones(2)), TypeError,
     ["cross_entropy", "class indices", "float32"]),
    ("cross_entropy target shape", lambda: F.cross_entropy(tg.ones(2, 3), tg.tensor([0, 1, 2])), ValueError,
     ["cross_entropy", "(3,)", "(2, 3)"]),
    ("cross_entropy label too big", lambda: F.cross_entropy(tg.ones(2, 3), tg.tensor([0, 3])), IndexError,
     ["cross_entropy", "3", "3 classes"]),
    ("cross_entropy negative label", lambda: F.cross_entropy(tg.ones(2, 3), [0, -1]), IndexError,
     ["cross_entropy", "-1", "3 classes"]),
    ("cross_entropy 3-D", lambda: F.cross_entropy(tg.ones(2, 3, 4), tg.zeros(2, 3, dtype=tg.int64)),
     ValueError, ["cross_entropy", "(2, 3, 4)"]),
    ("cross_entropy int logits", lambda: F.cross_entropy(tg.tensor([[1, 2]]), [0]), TypeError,
     ["cross_entropy", "int64"]),
    ("cross_entropy reduction", lambda: F.cross_entropy(tg.ones(2, 3), [0, 1], reduction="avg"), ValueError,
     ["cross_entropy", "'avg'", "'mean'"]),
    ("mse_loss reduction", lambda: F.mse_loss(tg.ones(2), tg.ones(2), reduction="max"), ValueError,
     ["mse_loss", "'max'"]),
    ("mse_loss shapes", lambda: F.mse_loss(tg.ones(2), tg.ones(3)), ValueError, ["(2,)", "(3,)"]),
    ("bce shapes", lambda: F.binary_cross_entropy_with_logits(tg.ones(2, 3), tg.ones(3)), ValueError,
     ["binary_cross_entropy_with_logits", "(3,)", "(2, 3)"]),
]


@pytest.mark.parametrize(("fn", "kind", "parts"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_input_gets_a_clear_error(fn, kind, parts):
    with pytest.raises(kind) as info:
        fn()
    assert_clear(info, *parts)


def test_a_failed_op_leaves_its_inputs_untouched():
    x = tg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        x.add_(tg.ones(2))
    np.testing.assert_array_equal(x.data, [1.0, 2.0, 3.0])
    assert x._version == 0
