"""`tg.linalg`: linear algebra under `torch.linalg`'s names, batched over leading dimensions.

Each op is NumPy's LAPACK call for the forward and the matrix-calculus formula of PyTorch's
derivatives table for the backward, side by side:

- inv: d/dA = -A^-T G A^-T
- det: d/dA = G adj(A)^T, from the SVD, so singular matrices get a gradient too
- slogdet / logdet: d/dA = G A^-T (the sign has none)
- solve (A X = B): d/dB = A^-T G, d/dA = -d/dB X^T
- cholesky (A = L L^T): d/dA = L^-T Phi(L^T G) L^-1, Phi keeping the lower triangle, the
  diagonal halved, then made symmetric
- svdvals: d/dA = U diag(G) V^T

The norms (`vector_norm`, `matrix_norm`, `norm`), `matrix_power` and `cross` are composed of
ops with gradients of their own. Failures raise `LinAlgError` (a RuntimeError, as PyTorch's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorgrad import checks, return_types
from tensorgrad.autograd import record
from tensorgrad.checks import ShapeError
from tensorgrad.device import namespace
from tensorgrad.matmul import _swap, matmul  # (_swap: the last two dimensions, as a view)
from tensorgrad.matmul import cross as _cross  # (`tensorgrad.matmul` is also the function's name)
from tensorgrad.reduce import _product_of_others, amax, amin
from tensorgrad.reduce import norm as _norm
from tensorgrad.reduce import sum as _sum
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["LinAlgError", "inv", "det", "slogdet", "logdet", "solve", "cholesky", "svdvals", "vector_norm",
           "matrix_norm", "norm", "matrix_power", "cross"]


class LinAlgError(RuntimeError):
    """A matrix that the operation cannot handle: singular for inv or solve, not positive-definite
    for cholesky (PyTorch's `torch.linalg.LinAlgError`, also a RuntimeError)."""


def _square(a: Tensor, op: str) -> None:
    """Raise unless a is a floating (batch of) square matrix."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"linalg.{op}: A must be batches of square matrices, but they are "
                         f"{' by '.join(map(str, a.shape[-2:])) if a.ndim >= 2 else 'not matrices'} "
                         f"(shape {a.shape})")
    if a.data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.{op}: Expected a floating point or complex tensor as input. "
                           f"Got {a.dtype}")


def _inverse(data: np.ndarray, op: str) -> np.ndarray:
    try:
        return np.linalg.inv(data)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.{op}: the input matrix is singular, so it has no inverse") from None


def inv(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The inverse of a square matrix (or of each in a batch). d/dA = -A^-T G A^-T."""
    _square(A, "inv")
    out = _inverse(A.data, "inv")
    return record(out, "inv", (A,), lambda grad: -(_swap(out) @ grad @ _swap(out)), saved=())


def det(A: Tensor) -> Tensor:  # noqa: N803
    """The determinant. d/dA = G adj(A)^T, computed from the SVD A = U S V^T as
    det(U) det(V) U diag(prod of the other singular values) V^T: defined for singular A too."""
    _square(A, "det")
    out = np.linalg.det(A.data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        u, s, vh = np.linalg.svd(A.data)
        signs = np.linalg.det(u) * np.linalg.det(vh)
        others = _product_of_others(s, s.ndim - 1) if s.shape[-1] else s
        return (grad * signs)[..., None, None] * (u * others[..., None, :]) @ vh

    return record(namespace(A.data).asarray(out), "det", (A,), vjp, saved=())


def slogdet(A: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (sign, logabsdet) with det = sign * exp(logabsdet). d(logabsdet)/dA = G A^-T;
    the sign's gradient is 0."""
    _square(A, "slogdet")
    sign, logabsdet = np.linalg.slogdet(A.data)
    xp = namespace(A.data)
    value = record(xp.asarray(logabsdet), "slogdet", (A,),
                   lambda grad: grad[..., None, None] * _swap(_inverse(A.data, "slogdet")), saved=())
    # The sign of a real determinant is piecewise constant: in the graph, as PyTorch's, with gradient 0.
    sign = record(xp.asarray(sign), "slogdet", (A,), lambda grad: xp.zeros(A.shape, A.dtype), saved=())
    return return_types.slogdet(sign, value)


def logdet(A: Tensor) -> Tensor:  # noqa: N803
    """log(det(A)): nan where the determinant is negative, -inf where it is 0. d/dA = G A^-T."""
    _square(A, "logdet")
    sign, logabsdet = np.linalg.slogdet(A.data)
    out = np.where(sign < 0, np.nan, logabsdet)
    return record(namespace(A.data).asarray(out), "logdet", (A,),
                  lambda grad: grad[..., None, None] * _swap(_inverse(A.data, "logdet")), saved=())


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """X with A X = B (or X A = B with left=False); B a (batch of) matrix, or of vectors when it
    has one dimension fewer than A. d/dB = A^-T G, d/dA = -d/dB X^T."""
    _square(A, "solve")
    if not left:
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    b = B.data[..., None] if vector else B.data
    if b.shape[-2] != A.shape[-1]:
        raise ShapeError(f"linalg.solve: incompatible shapes of A and B for the equation AX = B "
                         f"({'x'.join(map(str, A.shape[-2:]))} and {'x'.join(map(str, B.shape[-2:]))})")
    try:
        x = np.linalg.solve(A.data, b)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.solve: the solver failed because the input matrix is singular") from None

    def vjp_b(grad: np.ndarray) -> np.ndarray:
        g = np.linalg.solve(_swap(A.data), grad[..., None] if vector else grad)
        return g[..., 0] if vector else g

    def vjp_a(grad: np.ndarray) -> np.ndarray:
        g = np.linalg.solve(_swap(A.data), grad[..., None] if vector else grad)
        return -(g @ _swap(x))

    return record(x[..., 0] if vector else x, "solve", (A, B), vjp_a, vjp_b, saved=())


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """L, lower triangular with A = L L^T, for a symmetric positive-definite A (only its lower
    triangle is read); L^T with `upper`. d/dA = L^-T Phi(L^T G) L^-1, made symmetric."""
    _square(A, "cholesky")
    try:
        lower = np.linalg.cholesky(A.data)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is "
                          "not positive-definite") from None

    def vjp(grad: np.ndarray) -> np.ndarray:
        g = _swap(grad) if upper else grad
        phi = np.tril(_swap(lower) @ g)
        phi = 0.5 * (phi + _swap(np.tril(phi, -1)))  # the diagonal once, the strict lower twice
        # L^-T phi L^-1, by two solves: L^T Y = phi, then Z L = Y, that is L^T Z^T = Y^T
        y = np.linalg.solve(_swap(lower), phi)
        return _swap(np.linalg.solve(_swap(lower), _swap(y)))

    return record(_swap(lower).copy() if upper else lower, "cholesky", (A,), vjp, saved=())


def svdvals(A: Tensor) -> Tensor:  # noqa: N803
    """The singular values, largest first. d/dA = U diag(G) V^T (for distinct singular values)."""
    if A.ndim < 2:
        raise ShapeError(f"linalg.svdvals: The input tensor A must have at least 2 dimensions, "
                         f"got {A.shape}")
    u, s, vh = np.linalg.svd(A.data, full_matrices=False)
    return record(s, "svdvals", (A,), lambda grad: (u * grad[..., None, :]) @ vh, saved=())


def vector_norm(x: Tensor, ord: float = 2, dim: int | Sequence[int] | None = None,  # noqa: A002
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The ord-norm of x's elements over `dim` (all of them, as one vector, for None)."""
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return _norm(x, float(ord), dim, keepdim, dtype)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def matrix_norm(A: Tensor, ord: float | str = "fro", dim: tuple[int, int] = (-2, -1),  # noqa: A002, N803
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """A matrix norm over the two dims: 'fro', 'nuc', 1 / -1 (largest / smallest column sum of
    |a|), inf / -inf (row sums), 2 / -2 (largest / smallest singular value)."""
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions, "
                           f"got {A.shape}")
    rows, cols = (checks.dim(d, A.ndim, "matrix_norm") for d in dim)
    if dtype is not None:
        A = A.to(dtype)
    if ord in ("fro", "nuc"):
        return _norm(A, ord, (rows, cols), keepdim)
    if ord in (2, -2):
        values = svdvals(A.movedim((rows, cols), (-2, -1)))
        out = amax(values, -1) if ord == 2 else amin(values, -1)
        return _kept(out, A.ndim, (rows, cols)) if keepdim else out
    summed, across = (rows, cols) if ord in (1, -1) else (cols, rows)  # columns for 1, rows for inf
    sums = _sum(A.abs(), summed, keepdim=True)
    out = amax(sums, across, keepdim=True) if ord > 0 else amin(sums, across, keepdim=True)
    return out if keepdim else out.squeeze((rows, cols))


def _kept(out: Tensor, ndim: int, dims: tuple[int, int]) -> Tensor:
    """A reduction over two dims with those dims put back as size 1."""
    for d in sorted(dims):
        out = out.unsqueeze(d)
    return out


def norm(A: Tensor, ord: float | str | None = None, dim: Any = None, keepdim: bool = False,  # noqa: A002, N803
         *, dtype: Any = None) -> Tensor:
    """`vector_norm` or `matrix_norm` as PyTorch picks: by dim (one dim: a vector norm, two: a
    matrix norm), else by A's dimensions when ord is given; the 2-norm of all elements otherwise."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                       f"{A.ndim}D.")


def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """A multiplied by itself n times (the identity for 0, powers of the inverse for n < 0), by
    repeated squaring; the gradient is the products'."""
    _square(A, "matrix_power")
    n = checks.as_int(n, "matrix_power", "n")
    if n < 0:
        A, n = inv(A), -n
    result, square = None, A
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    if result is None:  # n = 0: the identity, in A's batch shape, dtype and place
        eye = namespace(A.data).broadcast_to(namespace(A.data).eye(A.shape[-1], dtype=A.dtype), A.shape)
        return new_leaf(namespace(A.data).array(eye))
    return result


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002 - PyTorch's name
    """The cross product of 3-vectors along `dim` (-1 by default, unlike `tg.cross`)."""
    return _cross(input, other, dim)
