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
- svd, qr, eigh / eigvalsh: PyTorch's svd_backward, linalg_qr_backward and the symmetric case
  of linalg_eig_backward (in each function's docstring); one node per output that carries a
  gradient, since a decomposition's VJP is linear in its outputs' gradients
- pinv: PyTorch's pinv_backward; lstsq: the gradient of pinv(A) @ B (and of the residuals)
- matrix_exp (Higham's scaling and squaring with a Pade approximant, not LAPACK): exp of the
  block matrix [[A^T, G], [0, A^T]], its top-right block

The norms (`vector_norm`, `matrix_norm`, `norm`), `matrix_power`, `cross`, `multi_dot` and
`vander` are composed of ops with gradients of their own; `matrix_rank` has none. The
decompositions take real matrices (float32, float64). Failures raise `LinAlgError` (a
RuntimeError, as PyTorch's).
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from scalargrad.engine import grad_mode
from tensorgrad import checks, return_types
from tensorgrad.autograd import record
from tensorgrad.checks import ArgumentValueError, ShapeError, UnsupportedDtypeError
from tensorgrad.device import namespace
from tensorgrad.matmul import _swap, matmul  # (_swap: the last two dimensions, as a view)
from tensorgrad.matmul import cross as _cross  # (`tensorgrad.matmul` is also the function's name)
from tensorgrad.movement import cat as _cat
from tensorgrad.reduce import _product_of_others, amax, amin
from tensorgrad.reduce import norm as _norm
from tensorgrad.reduce import sum as _sum
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["LinAlgError", "inv", "det", "slogdet", "logdet", "solve", "cholesky", "svdvals", "vector_norm",
           "matrix_norm", "norm", "matrix_power", "cross", "svd", "qr", "eigh", "eigvalsh", "pinv", "lstsq",
           "matrix_rank", "matrix_exp", "multi_dot", "vander", "diagonal"]


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


# --- decompositions -------------------------------------------------------------------------------
# Each output that carries a gradient is its own node with A as parent; the VJP of a
# decomposition is linear in the outputs' gradients, so the gradients the nodes send back add up
# to PyTorch's formula. The formulas are for real matrices (a transpose where PyTorch conjugates).

# The named tuples, as torch.return_types names them (`U, S, Vh = svd(A)`, or `svd(A).S`).
_SVD = namedtuple("linalg_svd", ["U", "S", "Vh"])
_LEGACY_SVD = namedtuple("svd", ["U", "S", "V"])
_QR = namedtuple("linalg_qr", ["Q", "R"])
_LEGACY_QR = namedtuple("qr", ["Q", "R"])
_EIGH = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
_LSTSQ = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def _matrices(a: Tensor, op: str, name: str = "A") -> None:
    """Raise unless a is a real floating (batch of) matrix."""
    if a.ndim < 2:
        raise ShapeError(f"linalg.{op}: The input tensor {name} must have at least 2 dimensions, "
                         f"got shape {a.shape}")
    _real(a, op, name)


def _real(a: Tensor, op: str, name: str = "A") -> None:
    kind = a.data.dtype.kind
    if kind == "c":
        raise UnsupportedDtypeError(f"linalg.{op}: complex {name} is not supported (dtype {a.dtype}, "
                                    f"shape {a.shape}); only float32 and float64")
    if kind != "f":
        raise RuntimeError(f"linalg.{op}: Expected a floating point tensor as {name}, got dtype {a.dtype} "
                           f"(shape {a.shape})")


def _skew(x: np.ndarray) -> np.ndarray:
    return x - _swap(x)


def _gaps(values: np.ndarray) -> np.ndarray:
    """E[..., j, k] = values[k] - values[j] off the diagonal and 1 on it (the divisor of the
    off-diagonal terms, whose numerators are 0 on the diagonal)."""
    return values[..., None, :] - values[..., :, None] + namespace(values).eye(values.shape[-1],
                                                                             dtype=values.dtype)


def svd(A: Tensor, full_matrices: bool = True) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """The named tuple (U, S, Vh) with A = U diag(S) Vh, singular values largest first.

    For k = min(m, n) distinct, non-zero singular values (PyTorch's svd_backward, real case), with
    E[j, k] = S_k^2 - S_j^2 (1 on the diagonal) and skew(X) = X - X^T:
    d/dA = U [(skew(U^T gU) / E) S + S (skew(Vh gVh^T) / E) + diag(gS)] Vh
           + (I - U U^T) gU S^-1 Vh  (m > k)  + U S^-1 gVh (I - Vh^T Vh)  (n > k).
    With full_matrices the columns of U (rows of Vh) past k are any basis of a subspace, and
    their gradients are ignored, as PyTorch does. The signs of each singular pair are LAPACK's
    choice: only a loss that does not depend on them has a meaningful gradient.
    """
    _matrices(A, "svd")
    u, s, vh = np.linalg.svd(A.data, full_matrices=full_matrices)
    m, n, k = A.shape[-2], A.shape[-1], s.shape[-1]
    u_k, vh_k = u[..., :, :k], vh[..., :k, :]  # (views; all of u and vh without full_matrices)
    gaps = _gaps(s * s)

    def vjp_u(grad: np.ndarray) -> np.ndarray:
        g = grad[..., :, :k]
        inner = _skew(_swap(u_k) @ g) / gaps * s[..., None, :]
        if m > k:  # the part of gU outside U's columns
            g_scaled = g / s[..., None, :]
            return (u_k @ inner + g_scaled - u_k @ (_swap(u_k) @ g_scaled)) @ vh_k
        return u_k @ inner @ vh_k

    def vjp_s(grad: np.ndarray) -> np.ndarray:
        return (u_k * grad[..., None, :]) @ vh_k

    def vjp_vh(grad: np.ndarray) -> np.ndarray:
        g = grad[..., :k, :]
        inner = s[..., :, None] * (_skew(vh_k @ _swap(g)) / gaps)
        if n > k:  # the part of gVh outside Vh's rows
            g_scaled = g / s[..., :, None]
            return u_k @ (inner @ vh_k + g_scaled - (g_scaled @ _swap(vh_k)) @ vh_k)
        return u_k @ inner @ vh_k

    return _SVD(record(u, "svd", (A,), vjp_u, saved=(), saves_output=True),
                record(s, "svd", (A,), vjp_s, saved=(), saves_output=True),
                record(vh, "svd", (A,), vjp_vh, saved=(), saves_output=True))


def legacy_svd(A: Tensor, some: bool = True,  # noqa: N803
               compute_uv: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """`torch.svd`: the named tuple (U, S, V) with A = U diag(S) V^T (V, not Vh); `some=False`
    gives the full U and V. Without `compute_uv`, U and V are zeros of shapes (m, m) and (n, n),
    and only S is computed (and differentiable). Gradients as `svd`'s."""
    if A.ndim < 2:
        raise ShapeError(f"svd: input should have at least 2 dimensions, but has {A.ndim} dimensions "
                         f"instead (shape {A.shape})")
    _real(A, "svd")
    if not compute_uv:
        xp, (m, n) = namespace(A.data), A.shape[-2:]
        values = svdvals(A)
        return _LEGACY_SVD(new_leaf(xp.zeros(A.shape[:-2] + (m, m), A.dtype)), values,
                           new_leaf(xp.zeros(A.shape[:-2] + (n, n), A.dtype)))
    u, s, vh = svd(A, full_matrices=not some)
    return _LEGACY_SVD(u, s, vh.mT)


_QR_NOT_DIFFERENTIABLE = {
    "r": "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
         "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
    "complete": "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.",
}


def qr(A: Tensor, mode: str = "reduced") -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (Q, R) with A = Q R, Q with orthonormal columns and R upper triangular.

    mode 'reduced': Q (m, k), R (k, n) for k = min(m, n); 'complete': Q (m, m), R (m, n); 'r':
    only R (Q is an empty tensor). PyTorch's linalg_qr_backward, with M = gR R^T - Q^T gQ:
    for m >= n, d/dA = (gQ + Q (triu(M) + triu(M)^T, the diagonal once)) R^-T; for m < n, with
    R = [R1 | R2] (R1 square), d/dA = [Q tril(M^T - M) R1^-T | 0] + Q gR. As in PyTorch, mode
    'r', and mode 'complete' with m > n, are not differentiable: backward through them raises.
    """
    _matrices(A, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise ArgumentValueError(f"linalg.qr: qr received unrecognized mode {mode!r} but expected one of "
                                 "'reduced' (default), 'r', or 'complete'")
    m, n = A.shape[-2:]
    if mode == "r":
        r = np.linalg.qr(A.data, mode="r")
        return _QR(new_leaf(namespace(A.data).zeros((0,), A.dtype)),
                   record(r, "qr", (A,), _refuse_qr("r"), saved=()))
    q, r = np.linalg.qr(A.data, mode=mode)
    if mode == "complete" and m > n:
        return _QR(record(q, "qr", (A,), _refuse_qr("complete"), saved=()),
                   record(r, "qr", (A,), _refuse_qr("complete"), saved=()))

    def through_m(m_part: np.ndarray, g_q: np.ndarray | None) -> np.ndarray:
        """The gradient given M (the gQ or gR part of it) and gQ (None for the R part)."""
        if m >= n:
            upper = np.triu(m_part)
            b = q @ (upper + _swap(np.triu(m_part, 1)))  # triu(M) + triu(M)^T, the diagonal once
            if g_q is not None:
                b = b + g_q
            return _swap(np.linalg.solve(r, _swap(b)))  # b R^-T
        lower = np.tril(_swap(m_part) - m_part)
        head = _swap(np.linalg.solve(r[..., :, :m], _swap(q @ lower)))  # (Q lower) R1^-T
        return np.concatenate((head, np.zeros_like(head, shape=head.shape[:-1] + (n - m,))), axis=-1)

    def vjp_q(grad: np.ndarray) -> np.ndarray:
        return through_m(-(_swap(q) @ grad), grad)

    def vjp_r(grad: np.ndarray) -> np.ndarray:
        g = through_m(grad @ _swap(r), None)
        return g if m >= n else g + q @ grad

    return _QR(record(q, "qr", (A,), vjp_q, saved=(), saves_output=True),
               record(r, "qr", (A,), vjp_r, saved=(), saves_output=True))


def _refuse_qr(mode: str) -> Any:
    """A VJP that raises PyTorch's error for a QR mode without a derivative."""
    def vjp(grad: np.ndarray) -> np.ndarray:
        raise RuntimeError(f"linalg.qr: {_QR_NOT_DIFFERENTIABLE[mode]}")
    return vjp


def legacy_qr(A: Tensor, some: bool = True) -> tuple[Tensor, Tensor]:  # noqa: N803
    """`torch.qr`: `linalg.qr` with mode 'reduced' (some=True) or 'complete' (some=False)."""
    q, r = qr(A, "reduced" if some else "complete")
    return _LEGACY_QR(q, r)


def _hermitian(A: Tensor, op: str, uplo: str) -> None:  # noqa: N803
    """Raise unless A is a real floating (batch of) square matrix and uplo names a triangle
    (an integer A is NotImplementedError, as PyTorch's "not implemented for 'Long'")."""
    if A.data.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"linalg.{op}: not implemented for dtype {A.dtype} (A of shape "
                                    f"{A.shape}); use a floating point tensor")
    _square(A, op)
    _real(A, op)
    if uplo not in ("L", "U"):
        raise ArgumentValueError(f"linalg.{op}: Expected UPLO argument to be 'L' or 'U', but got {uplo!r}")


def eigh(A: Tensor, UPLO: str = "L") -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (eigenvalues, eigenvectors) of a symmetric matrix, the eigenvalues ascending,
    A = V diag(L) V^T. Only the triangle UPLO ('L' lower, 'U' upper) of A is read.

    d/dA = V (diag(gL) + (skew(V^T gV) / 2) / E) V^T with E[i, j] = L_j - L_i (distinct
    eigenvalues). As PyTorch's, the gradient is symmetric: the triangle that was not read gets
    the same gradient as the one that was (a change of A along a symmetric direction is what the
    gradient answers). Each eigenvector's sign is LAPACK's choice.
    """
    _hermitian(A, "eigh", UPLO)
    values, vectors = np.linalg.eigh(A.data, UPLO=UPLO)
    gaps = _gaps(values)

    def vjp_vectors(grad: np.ndarray) -> np.ndarray:
        inner = 0.5 * _skew(_swap(vectors) @ grad) / gaps
        return vectors @ inner @ _swap(vectors)

    return _EIGH(
        record(values, "eigh", (A,), lambda grad: (vectors * grad[..., None, :]) @ _swap(vectors),
               saved=(), saves_output=True),
        record(vectors, "eigh", (A,), vjp_vectors, saved=(), saves_output=True))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues of a symmetric matrix, ascending (only the UPLO triangle is read).
    d/dA = V diag(G) V^T."""
    _hermitian(A, "eigvalsh", UPLO)
    if not (grad_mode.enabled and A.requires_grad):  # no gradient: no eigenvectors
        return new_leaf(np.linalg.eigvalsh(A.data, UPLO=UPLO))
    values, vectors = np.linalg.eigh(A.data, UPLO=UPLO)
    return record(values, "eigvalsh", (A,), lambda grad: (vectors * grad[..., None, :]) @ _swap(vectors),
                  saved=())


def _tolerance(largest: np.ndarray, A: Tensor, atol: Any, rtol: Any) -> Any:  # noqa: N803
    """max(atol, rtol * largest), PyTorch's rule: rtol defaults to eps * max(m, n), or to 0 where
    atol is given and positive. A tolerance may be a number or a tensor (one per matrix)."""
    default = float(np.finfo(A.data.dtype).eps) * max(A.shape[-2:])
    atol_value = 0.0 if atol is None else _number_or_array(atol)
    if rtol is None:
        if atol is None:
            rtol = default
        elif isinstance(atol_value, float):
            rtol = 0.0 if atol_value > 0 else default
        else:
            rtol = np.where(atol_value > 0, 0.0, default)
    else:
        rtol = _number_or_array(rtol)
    return np.maximum(atol_value, rtol * largest)


def _number_or_array(value: Any) -> Any:
    """A tolerance as a float, or as an array with a trailing dimension to meet the values'."""
    if isinstance(value, Tensor):
        return value.data[..., None]
    return float(value)


def _largest(values: np.ndarray) -> np.ndarray:
    """The largest of each row of values, keeping the dimension (empty for empty rows)."""
    return values.max(axis=-1, keepdims=True) if values.shape[-1] else values


def _reciprocal(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """1 / values where keep, else 0 (without dividing by the zeros)."""
    return np.where(keep, 1 / np.where(keep, values, 1), 0).astype(values.dtype, copy=False)


def pinv(A: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,  # noqa: N803
         rtol: Any = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, from the SVD (from eigh with `hermitian`, reading the
    lower triangle): singular values at or below max(atol, rtol * the largest) count as 0.
    `rcond` is the older name of rtol (with atol 0). PyTorch's pinv_backward (for a constant
    rank), with P = pinv(A): d/dA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A).
    """
    _matrices(A, "pinv")
    if rcond is not None:
        atol, rtol = 0.0, rcond
    if hermitian:
        _square(A, "pinv")
        values, vectors = np.linalg.eigh(A.data)
        keep = np.abs(values) > _tolerance(_largest(np.abs(values)), A, atol, rtol)
        out = (vectors * _reciprocal(values, keep)[..., None, :]) @ _swap(vectors)
    else:
        u, s, vh = np.linalg.svd(A.data, full_matrices=False)
        keep = s > _tolerance(s[..., :1], A, atol, rtol)
        out = (_swap(vh) * _reciprocal(s, keep)[..., None, :]) @ _swap(u)
    return record(out, "pinv", (A,), lambda grad: _pinv_vjp(grad, out, A.data), saved=(),
                  saves_output=True)


def _pinv_vjp(grad: np.ndarray, p: np.ndarray, a: np.ndarray) -> np.ndarray:
    """pinv's backward (PyTorch's pinv_backward), ordered so the products stay small."""
    m, n = a.shape[-2:]
    grad_t = _swap(grad)
    if m <= n:
        k = grad_t @ p
        k_pt = k @ _swap(p)
        return -_swap(p @ k) + k_pt - (a @ p) @ k_pt + (_swap(p) @ p) @ (grad_t - k @ a)
    k = p @ grad_t
    pt_k = _swap(p) @ k
    return -_swap(k @ p) + (grad_t - a @ k) @ p @ _swap(p) + pt_k - pt_k @ p @ a


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002 - PyTorch's name
    """`torch.pinverse`: `linalg.pinv` with rtol = rcond."""
    return pinv(input, rcond)


def matrix_rank(A: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,  # noqa: N803
                rtol: Any = None) -> Tensor:
    """The number of singular values above max(atol, rtol * the largest) (eigenvalues in absolute
    value with `hermitian`), as int64, one per matrix; `tol` is the older name of atol (with rtol
    0). Not differentiable."""
    _matrices(A, "matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    if hermitian:
        _square(A, "matrix_rank")
        values = np.abs(np.linalg.eigvalsh(A.data))
        largest = _largest(values)
    else:
        values = np.linalg.svd(A.data, compute_uv=False)
        largest = values[..., :1]
    rank = (values > _tolerance(largest, A, atol, rtol)).sum(axis=-1)
    return new_leaf(namespace(A.data).asarray(rank, dtype=np.int64))


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None  # noqa: N803
          ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The least-squares solution X of A X = B (the one of smallest norm if A is rank deficient),
    as the named tuple (solution, residuals, rank, singular_values). B is a (batch of) matrix, or
    of vectors when it has one dimension fewer than A; batch dimensions broadcast.

    From the SVD: singular values at or below rcond * the largest (rcond defaults to eps *
    max(m, n)) count as 0. What else is filled depends on `driver`, as in PyTorch ('gelsy' by
    default on the CPU, 'gels' on a GPU): `rank` (int64, one per matrix of A) for all but 'gels';
    `singular_values` for 'gelsd' and 'gelss'; `residuals`, the squared residual norm of each
    column, ||A X - B||^2, when m > n, for 'gels', and for 'gelsd' / 'gelss' when every matrix
    has full rank. The fields not filled are empty tensors.

    Gradients as PyTorch's linalg_lstsq_backward: the solution's are those of pinv(A) @ B
    (d/dB = P^T G, d/dA = pinv_backward(G B^T)); the residuals' d/dA = 2 (A X - B) diag(G) X^T,
    d/dB = -2 (A X - B) diag(G).
    """
    if A.ndim < 2:
        raise ShapeError(f"linalg.lstsq: input must have at least 2 dimensions, got shape {A.shape}")
    if not 0 <= A.ndim - B.ndim <= 1:
        raise ShapeError(f"linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                         f"(input.dim() - other.dim()) <= 1, got shapes {A.shape} and {B.shape}")
    _real(A, "lstsq", "input")
    _real(B, "lstsq", "other")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A.dtype} (shape {A.shape}) and other's dtype {B.dtype} "
                           f"(shape {B.shape})")
    vector = B.ndim == A.ndim - 1
    b = B.data[..., None] if vector else B.data
    m, n = A.shape[-2:]
    if b.shape[-2] != m:
        raise ShapeError(f"linalg.lstsq: input.size(-2) should match other.size(-2), got shapes "
                         f"{A.shape} and {B.shape}")
    if driver is None:
        driver = "gelsy" if type(A.data) is np.ndarray else "gels"
    if driver not in _DRIVERS:
        raise ArgumentValueError(f"linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, "
                                 f"gelss), got {driver!r}")
    xp = namespace(A.data)
    u, s, vh = np.linalg.svd(A.data, full_matrices=False)
    default = float(np.finfo(A.data.dtype).eps) * max(m, n)
    keep = s > (default if rcond is None else rcond) * s[..., :1]
    x = _swap(vh) @ (_reciprocal(s, keep)[..., None] * (_swap(u) @ b))
    rank = xp.asarray(keep.sum(axis=-1), dtype=np.int64)
    # The gradient is that of pinv(A) @ B, with pinv's default tolerance (as PyTorch's backward).
    p = (_swap(vh) * _reciprocal(s, s > default * s[..., :1])[..., None, :]) @ _swap(u)

    def vjp_a(grad: np.ndarray) -> np.ndarray:
        g = grad[..., None] if vector else grad
        return _pinv_vjp(g @ _swap(b), p, A.data)

    def vjp_b(grad: np.ndarray) -> np.ndarray:
        g = _swap(p) @ (grad[..., None] if vector else grad)
        return g[..., 0] if vector else g

    solution = record(x[..., 0] if vector else x, "lstsq", (A, B), vjp_a, vjp_b, saved=())
    empty = xp.zeros((0,), A.dtype)
    full_rank = driver == "gels" or (driver in ("gelsd", "gelss") and bool((rank == n).all()))
    if m > n and full_rank:
        residual = A.data @ x - b
        residuals = record((residual * residual).sum(axis=-2), "lstsq", (A, B),
                           lambda grad: 2 * (grad[..., None, :] * residual) @ _swap(x),
                           lambda grad: (-2 * grad[..., None, :] * residual)[..., 0] if vector
                           else -2 * grad[..., None, :] * residual, saved=())
    else:
        residuals = new_leaf(empty)
    return _LSTSQ(solution, residuals, new_leaf(xp.zeros((0,), np.int64) if driver == "gels" else rank),
                  new_leaf(s if driver in ("gelsd", "gelss") else empty))


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


# --- functions of matrices, products, structured matrices -----------------------------------------

# Higham's scaling and squaring with the [13/13] Pade approximant (SIAM J. Matrix Anal. Appl. 26,
# 2005): the Pade coefficients, and the 1-norm up to which the approximant is exact to double
# precision without squaring.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm(a: np.ndarray) -> np.ndarray:
    """exp of each matrix in a: A scaled by 2^-s to a 1-norm below theta_13, the Pade
    approximant, then squared s times (s chosen per matrix; a matrix done squaring is kept)."""
    if a.size == 0:
        return a.copy()
    xp, b = namespace(a), _PADE13
    norm = np.abs(a).sum(axis=-2).max(axis=-1)  # the 1-norm: the largest column sum
    with np.errstate(divide="ignore", invalid="ignore"):
        squarings = np.maximum(np.ceil(np.log2(norm / _THETA13)), 0)
    squarings = np.where(np.isfinite(squarings), squarings, 0)  # inf or nan in A: no squaring helps
    x = a * np.exp2(-squarings).astype(a.dtype)[..., None, None]
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    odd = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    even = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    out = np.linalg.solve(even - odd, even + odd)
    for i in range(int(squarings.max())):  # (on a GPU, the one wait for the device)
        out = np.where((squarings > i)[..., None, None], out @ out, out)
    return out


def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """The matrix exponential, sum of A^k / k!. PyTorch's backward: d/dA is the top-right block
    of exp([[A^T, G], [0, A^T]]) (the adjoint of the Frechet derivative, by Mathias's block
    matrix)."""
    _matrices(A, "matrix_exp")
    _square(A, "matrix_exp")

    def vjp(grad: np.ndarray) -> np.ndarray:
        n, a_t = A.shape[-1], _swap(A.data)
        block = np.concatenate((np.concatenate((a_t, grad), axis=-1),
                                np.concatenate((np.zeros_like(a_t), a_t), axis=-1)), axis=-2)
        return _expm(block)[..., :n, n:]

    return record(_expm(A.data), "matrix_exp", (A,), vjp)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices, multiplied in the order that costs fewest scalar
    multiplications; the first may be a row vector and the last a column vector (1-D). The
    gradient is the products'."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"linalg.multi_dot: expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            where = "first" if i == 0 else "last" if i == len(tensors) - 1 else f"tensor {i}"
            raise ShapeError(f"linalg.multi_dot: the {where} tensor must be "
                             f"{' or '.join(f'{d}D' for d in allowed)} but got {t.ndim}D (shape {t.shape})")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"linalg.multi_dot: all tensors must have the same dtype but tensor 0 is "
                               f"{tensors[0].dtype} and tensor {i} is {t.dtype}")
    row, column = tensors[0].ndim == 1, tensors[-1].ndim == 1
    matrices = [t.unsqueeze(0) if i == 0 and row else t for i, t in enumerate(tensors)]
    if column:
        matrices[-1] = matrices[-1].unsqueeze(1)
    for i in range(len(matrices) - 1):
        if matrices[i].shape[1] != matrices[i + 1].shape[0]:
            raise ShapeError(f"linalg.multi_dot: tensors {i} and {i + 1} with shapes {tensors[i].shape} and "
                             f"{tensors[i + 1].shape} cannot be multiplied")
    sizes = [t.shape[0] for t in matrices] + [matrices[-1].shape[1]]
    out = _chain(matrices, _chain_order(sizes), 0, len(matrices) - 1)
    if row:
        out = out.squeeze(0)
    return out.squeeze(-1) if column else out


def _chain_order(sizes: list[int]) -> list[list[int]]:
    """split[i][j]: where the best bracketing of matrices i..j splits (the textbook dynamic
    program over chain lengths; matrix i is sizes[i] by sizes[i + 1])."""
    count = len(sizes) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            options = [(cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1], k)
                       for k in range(i, j)]
            cost[i][j], split[i][j] = min(options)
    return split


def _chain(matrices: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return matrices[i]
    k = split[i][j]
    return matmul(_chain(matrices, split, i, k), _chain(matrices, split, k + 1, j))


def vander(x: Tensor, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of the last dimension: out[..., i, j] = x[..., i] ** j for j < N
    (N defaults to x's last size and must be at least 2). Composed as PyTorch's: a column of
    ones, then the running products of x, so the gradient is cumprod's."""
    if x.data.dtype.kind not in "iuf":
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{x.dtype} (x of shape {x.shape})")
    if x.ndim == 0:
        x = x.unsqueeze(0)
    N = x.shape[-1] if N is None else checks.as_int(N, "linalg.vander", "N")  # noqa: N806
    if N < 2:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {N} (x of shape {x.shape})")
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1).cumprod(-1)
    ones = new_leaf(np.ones_like(powers.data, shape=x.shape + (1,)))
    return _cat((ones, powers), -1)


def legacy_vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """`torch.vander`: the columns x^(N-1), ..., x, 1 of a 1-D x (x^0 first with `increasing`);
    integer and bool x give int64."""
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be a one-dimensional tensor, got shape {x.shape}")
    n = x.shape[0] if N is None else checks.as_int(N, "vander", "N")
    if n < 0:
        raise RuntimeError(f"vander: N must be non-negative, got {n}")
    if x.data.dtype.kind in "biu":
        x = x.to(np.int64)
    out = vander(x, n) if n > 1 else new_leaf(np.ones_like(x.data, shape=(x.shape[0], n)))
    return out if increasing else out.flip(-1)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The diagonal of each matrix (a view): `Tensor.diagonal` over the last two dimensions by
    default."""
    return A.diagonal(offset, dim1, dim2)
