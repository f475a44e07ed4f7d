"""Linear algebra at its edges, against PyTorch: empty matrices, integer inputs, mixed dtypes and
shapes that don't broadcast get PyTorch's answer or its exception type."""

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.checks import ShapeError

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(("shape", "p"), [((0, 3), None), ((3, 0), 2), ((2, 0, 3), None), ((0, 0), None),
                                          ((0, 0), "fro"), ((2, 0, 0), "nuc")])
def test_cond_of_an_empty_matrix_is_zero_per_batch(shape, p):
    ours = tg.linalg.cond(tg.zeros(shape, dtype=tg.float64), p=p)
    theirs = torch.linalg.cond(torch.zeros(shape, dtype=torch.float64), p=p)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("op", ["svdvals", "cond"])
def test_singular_value_functions_refuse_integer_matrices(op):
    with pytest.raises(RuntimeError, match=f"linalg.{op}.*floating"):
        getattr(tg.linalg, op)(tg.ones(3, 3, dtype=tg.int64))
    with pytest.raises(RuntimeError):
        getattr(torch.linalg, op)(torch.ones(3, 3, dtype=torch.int64))


def test_cholesky_ex_of_empty_matrices():
    for shape in [(0, 0), (2, 0, 0)]:
        L, info = tg.linalg.cholesky_ex(tg.zeros(shape))
        tL, tinfo = torch.linalg.cholesky_ex(torch.zeros(shape))
        assert L.shape == tuple(tL.shape) and info.shape == tuple(tinfo.shape)
        assert str(info.dtype) == "int32" and not info.numpy().any()


def test_cholesky_solve_checks_dtypes_as_pytorch():
    b, L = np.ones((3, 2)), np.eye(3)
    with pytest.raises(NotImplementedError, match="cholesky_solve.*int64"):
        tg.cholesky_solve(tg.tensor(b.astype(np.int64)), tg.tensor(L.astype(np.int64)))
    with pytest.raises(NotImplementedError):
        torch.cholesky_solve(torch.tensor(b.astype(np.int64)), torch.tensor(L.astype(np.int64)))
    with pytest.raises(RuntimeError, match="same dtype.*float64.*float32"):
        tg.cholesky_solve(tg.tensor(b), tg.tensor(L, dtype=tg.float32))
    with pytest.raises(RuntimeError):
        torch.cholesky_solve(torch.tensor(b), torch.tensor(L, dtype=torch.float32))


def test_cross_names_shapes_that_do_not_broadcast():
    with pytest.raises(ShapeError, match=r"cross: shapes \(2, 3\) and \(4, 3\)"):
        tg.linalg.cross(tg.ones(2, 3), tg.ones(4, 3))
    with pytest.raises(RuntimeError):
        torch.linalg.cross(torch.ones(2, 3), torch.ones(4, 3))
