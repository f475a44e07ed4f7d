"""Matrix multiplication through NumPy's BLAS (tutorial chapter 8).

`a @ b` follows `torch.matmul`: 1-D operands are vectors, 2-D are matrices, and more
dimensions are batches of matrices whose batch dimensions broadcast. The gradients are two
more matmuls, `grad @ b.T` and `a.T @ grad`, with the transposes passed to BLAS as views
(no copies), and broadcast batch dimensions summed back by `record`.
"""

from __future__ import annotations

import numpy as np

from tensorgrad.tensor import Tensor, float32, float64, record


def _check(a: Tensor, b: Tensor) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: both operands need at least 1 dimension, got shapes {a.shape} and {b.shape}"
        ) from None  # raised while handling numpy's less readable error
    inner_a = a.shape[-1]
    inner_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if inner_a != inner_b:
        which = "dimension -2" if b.ndim > 1 else "dimension 0"
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} don't match: dimension -1 of the first "
            f"({inner_a}) must equal {which} of the second ({inner_b})"
        ) from None


def _swap(m: np.ndarray) -> np.ndarray:
    """The transpose of the last two dimensions, as a view."""
    return m.swapaxes(-1, -2)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """a @ b. d/da = grad @ b^T, d/db = a^T @ grad (vectors treated as 1-row / 1-column matrices)."""
    a_data, b_data = a.data, b.data
    try:
        out = np.matmul(a_data, b_data)
    except ValueError:  # say which dimensions are wrong, in PyTorch's terms
        _check(a, b)
        raise ValueError(
            f"matmul: the batch dimensions of shapes {a.shape} and {b.shape} can't be broadcast together"
        ) from None
    if out.dtype == float64 and a_data.dtype != float64 and b_data.dtype != float64:
        out = out.astype(float32)
    if a_data.ndim > 1 and b_data.ndim > 1:  # matrices (or batches of them): the common case
        return record(out, "@", (a, b),
                      lambda grad: grad @ _swap(b_data),
                      lambda grad: _swap(a_data) @ grad)
    return record(out, "@", (a, b), *_vector_vjps(a_data, b_data))


def _vector_vjps(a_data: np.ndarray, b_data: np.ndarray):
    """matmul's VJPs when an operand is a vector: treat it as a matrix, then drop the extra dim."""
    # As matrices: a vector a is one row (1, k), a vector b is one column (k, 1).
    a_vector, b_vector = a_data.ndim == 1, b_data.ndim == 1
    a_matrix = a_data[None, :] if a_vector else a_data
    b_matrix = b_data[:, None] if b_vector else b_data

    def as_matrix(grad: np.ndarray) -> np.ndarray:
        """The output's gradient with the dimensions that vector operands dropped put back."""
        if b_vector:
            grad = grad[..., None]
        if a_vector:
            grad = grad[..., None, :]
        return grad

    def vjp_a(grad: np.ndarray) -> np.ndarray:
        ga = as_matrix(grad) @ _swap(b_matrix)
        return ga[..., 0, :] if a_vector else ga

    def vjp_b(grad: np.ndarray) -> np.ndarray:
        gb = _swap(a_matrix) @ as_matrix(grad)
        return gb[..., 0] if b_vector else gb

    return vjp_a, vjp_b
