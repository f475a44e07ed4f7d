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
- solve_triangular: solve's formulas, the gradient of A kept to the triangle that was read
- lu_factor (partial pivoting, written out in numpy as LAPACK's getrf, batched): PyTorch's
  linalg_lu_backward, for square, tall and wide matrices (in `_lu_vjp`); lu, lu_unpack and
  lu_solve are composed from it and solve_triangular
- cholesky_solve / cholesky_inverse: PyTorch's formulas, which read L as a full matrix
- LAPACK's own names: geqrf (numpy's QR in "raw" mode), orgqr and ormqr (Householder products,
  composed of tensor ops, so differentiable), ldl_factor (Bunch-Kaufman, LAPACK's sytf2 written
  out in numpy, on the host) and ldl_solve (sytrs); geqrf and the LDL ops have no derivative in
  PyTorch, so backward through them raises

Each formula is also written with tensor ops (`_<op>_graph`, beside its op), so gradients
differentiate again (`create_graph=True`); det at a singular matrix is differentiable once.

The norms (`vector_norm`, `matrix_norm`, `norm`), `matrix_power`, `cross`, `multi_dot`,
`vander`, `cond`, `vecdot`, `tensorinv`, `tensorsolve` and `householder_product` are composed
of ops with gradients of their own, as are the randomized `svd_lowrank` and `pca_lowrank`
(PyTorch's `torch.svd_lowrank` / `torch.pca_lowrank`, exported as `tg.svd_lowrank` and
`tg.pca_lowrank`); the `*_ex` forms report failures in `info` instead of raising; `matrix_rank`
has none. Failures raise `LinAlgError` (a RuntimeError, as PyTorch's).

Complex matrices (complex64, complex128) are taken throughout, with PyTorch's conjugate
transposes; `eig` / `eigvals` (always complex) have PyTorch's linalg_eig_backward. The graph VJPs
are written in the same form as the VJPs (see "complex matrices" below), so a complex input's
gradient differentiates again too.
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from scalargrad.engine import grad_mode
from tensorgrad import checks, return_types
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record
from tensorgrad.checks import (
    ArgumentValueError,
    ShapeError,
    UnsupportedDtypeError,
    not_a_tensor,
    user_stacklevel,
)
from tensorgrad.creation import randn
from tensorgrad.device import namespace, to_numpy
from tensorgrad.higher_order import differentiable_once
from tensorgrad.matmul import _swap, matmul  # (_swap: the last two dimensions, as a view)
from tensorgrad.matmul import cross as _cross  # (`tensorgrad.matmul` is also the function's name)
from tensorgrad.movement import cat as _cat
from tensorgrad.reduce import _product_of_others, amax, amin
from tensorgrad.reduce import norm as _norm
from tensorgrad.reduce import sum as _sum
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["LinAlgError", "inv", "det", "slogdet", "logdet", "solve", "cholesky", "svdvals", "vector_norm",
           "matrix_norm", "norm", "matrix_power", "cross", "svd", "qr", "eigh", "eigvalsh", "pinv", "lstsq",
           "matrix_rank", "matrix_exp", "multi_dot", "vander", "diagonal", "solve_triangular", "lu_factor",
           "lu_factor_ex", "lu", "lu_solve", "lu_unpack", "inv_ex", "solve_ex", "cholesky_ex", "cond",
           "vecdot", "tensorinv", "tensorsolve", "householder_product", "eig", "eigvals", "ldl_factor",
           "ldl_factor_ex", "ldl_solve"]


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


@autocast_op("linalg.inv")
def inv(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The inverse of a square matrix (or of each in a batch). d/dA = -A^-T G A^-T."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "inv")
    _square(A, "inv")
    out = _inverse(A.data, "inv")
    return record(out, "inv", (A,), lambda grad: -(_swap(out) @ grad @ _swap(out)), saved=(),
                  graph_vjp=_inv_graph)


def _inv_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    return (-(out.mT @ grad @ out.mT),)


def det(A: Tensor) -> Tensor:  # noqa: N803
    """The determinant. d/dA = G adj(A)^T, computed from the SVD A = U S V^T as
    det(U) det(V) U diag(prod of the other singular values) V^T: defined for singular A too."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "det")
    _square(A, "det")
    out = np.linalg.det(A.data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        return grad[..., None, None] * _cofactors(A.data)

    return record(namespace(A.data).asarray(out), "det", (A,), vjp, saved=(), graph_vjp=_det_graph)


def _cofactors(a: np.ndarray) -> np.ndarray:
    """The cofactor matrix adj(a)^T, from the SVD a = U S V^T: det(U) det(V) U diag(prod of the
    other singular values) V^T."""
    u, s, vh = np.linalg.svd(a)
    signs = np.linalg.det(u) * np.linalg.det(vh)
    others = _product_of_others(s, s.ndim - 1) if s.shape[-1] else s
    if a.dtype.kind == "c":  # A^-T = conj(U) S^-1 conj(Vh) for unitary U and Vh
        u, vh = np.conj(u), np.conj(vh)
    return signs[..., None, None] * (u * others[..., None, :]) @ vh


def _det_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    """G det(A) A^-T, as PyTorch's; for a singular A the cofactors from the SVD, differentiable once."""
    try:
        inverse = inv(A)
    except LinAlgError:
        cofactors = differentiable_once("det", _cofactors(A.data), (A,))
        return (grad[..., None, None] * cofactors,)
    return ((grad * out)[..., None, None] * inverse.mT,)


def slogdet(A: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (sign, logabsdet) with det = sign * exp(logabsdet). d(logabsdet)/dA = G A^-T;
    the sign's gradient is 0."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "slogdet")
    _square(A, "slogdet")
    sign, logabsdet = np.linalg.slogdet(A.data)
    xp = namespace(A.data)
    value = record(xp.asarray(logabsdet), "slogdet", (A,),
                   lambda grad: grad[..., None, None] * _swap(_inverse(A.data, "slogdet")), saved=(),
                   graph_vjp=_logdet_graph)
    # The sign of a real determinant is piecewise constant: in the graph, as PyTorch's, with gradient 0.
    # A complex one is exp(i Im(log det A)): PyTorch's slogdet_backward, i Im(conj(sign) gS) A^-H.
    if A.data.dtype.kind == "c":
        sign = xp.asarray(sign)

        def vjp_sign(grad: np.ndarray) -> np.ndarray:
            phase = xp.asarray(1j * (np.conj(sign) * grad).imag)
            return phase[..., None, None] * _h(_inverse(A.data, "slogdet"))

        return return_types.slogdet(record(xp.asarray(sign), "slogdet", (A,), _pytorch_vjp(vjp_sign, A),
                                           saved=(), graph_vjp=_complex_sign_graph), value)
    sign = record(xp.asarray(sign), "slogdet", (A,), lambda grad: xp.zeros(A.shape, A.dtype), saved=(),
                  graph_vjp=_sign_graph)
    return return_types.slogdet(sign, value)


def legacy_det(input: Tensor) -> Tensor:
    """`torch.det`: `linalg.det`, with PyTorch's argument name `input` where linalg's is `A`."""
    return det(input)


@autocast_op("torch.inverse")
def legacy_inverse(input: Tensor) -> Tensor:
    """`torch.inverse`: `linalg.inv`, with PyTorch's argument name `input`."""
    return inv(input)


def legacy_slogdet(input: Tensor) -> tuple[Tensor, Tensor]:
    """`torch.slogdet`: `linalg.slogdet`, with PyTorch's argument name `input`."""
    return slogdet(input)


def logdet(input: Tensor) -> Tensor:  # noqa: N803
    """log(det(A)): nan where the determinant is negative, -inf where it is 0; for complex A the
    complex logarithm, log|det| + i angle(det). d/dA = G A^-T."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "logdet")
    _square(input, "logdet")
    sign, logabsdet = np.linalg.slogdet(input.data)
    if input.data.dtype.kind == "c":
        out = logabsdet + 1j * np.angle(sign)
    else:
        out = np.where(sign < 0, np.nan, logabsdet)
    return record(namespace(input.data).asarray(out), "logdet", (input,),
                  lambda grad: grad[..., None, None] * _swap(_inverse(input.data, "logdet")), saved=(),
                  graph_vjp=_logdet_graph)


def _logdet_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    return (grad[..., None, None] * inv(A).mT,)


def _sign_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    return (new_leaf(namespace(A.data).zeros(A.shape, A.dtype)),)


def _complex_sign_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    """The gradient of a complex determinant's sign s, i Im(grad s) A^-T, recorded:
    `higher_order.conjugated_graph` turns it into PyTorch's -i Im(conj(grad) s) A^-H."""
    phase = (grad * out).imag * 1j
    return (phase[..., None, None] * inv(A).mT,)


@autocast_op("linalg.solve")
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

    return record(x[..., 0] if vector else x, "solve", (A, B), vjp_a, vjp_b, saved=(),
                  graph_vjp=partial(_solve_graph, vector))


def _solve_graph(vector: bool, grad: Tensor, out: Tensor, A: Tensor, B: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    if vector:
        g = solve(A.mT, grad.unsqueeze(-1))
        return -(g @ out.unsqueeze(-2)), g.squeeze(-1)
    g = solve(A.mT, grad)
    return -(g @ out.mT), g


@autocast_op("linalg.cholesky")
def cholesky(input: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """L, lower triangular with A = L L^T, for a symmetric positive-definite A (only its lower
    triangle is read); U = L^T with `upper` (then its upper triangle is read, as PyTorch's).
    d/dA = L^-T Phi(L^T G) L^-1, made symmetric."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "cholesky")
    _square(input, "cholesky")
    try:
        lower = np.linalg.cholesky(_h(input.data) if upper else input.data)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is "
                          "not positive-definite") from None

    def vjp(grad: np.ndarray) -> np.ndarray:
        g = _h(grad) if upper else grad
        phi = np.tril(_h(lower) @ g)
        phi = 0.5 * (phi + _h(np.tril(phi, -1)))  # the diagonal once, the strict lower twice
        # L^-H phi L^-1, by two solves: L^H Y = phi, then Z L = Y, that is L^H Z^H = Y^H
        y = np.linalg.solve(_h(lower), phi)
        return _h(np.linalg.solve(_h(lower), _h(y)))

    return record(_h(lower).copy() if upper else lower, "cholesky", (input,), _pytorch_vjp(vjp, input),
                  saved=(), graph_vjp=partial(_cholesky_graph, upper))


def _cholesky_graph(upper: bool, grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    def formula(grad: Tensor) -> tuple[Tensor]:
        lower, g = (out.mH, grad.mH) if upper else (out, grad)
        phi = (lower.mH @ g).tril()
        phi = 0.5 * (phi + phi.tril(-1).mH)
        y = solve_triangular(lower.mH, phi, upper=True)
        return (solve_triangular(lower, y, upper=False, left=False),)

    return _pytorch_graph(formula, grad, A)


@autocast_op("linalg.svdvals")
def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:  # noqa: N803
    """The singular values, largest first. d/dA = U diag(G) V^T (for distinct singular values).
    `driver` picks a cuSOLVER routine in PyTorch: None, or on a GPU array one of its names."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "svdvals")
    _matrices(A, "svdvals")
    _svd_driver(A, driver)
    u, s, vh = np.linalg.svd(A.data, full_matrices=False)
    return record(s, "svdvals", (A,), _pytorch_vjp(lambda grad: (u * grad[..., None, :]) @ vh, A), saved=(),
                  graph_vjp=_svd_s_graph)


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
    """Raise unless a is a floating or complex (batch of) matrix."""
    if a.ndim < 2:
        raise ShapeError(f"linalg.{op}: The input tensor {name} must have at least 2 dimensions, "
                         f"got shape {a.shape}")
    _inexact(a, op, name)


def _inexact(a: Tensor, op: str, name: str = "A") -> None:
    """Raise unless a is floating or complex."""
    if a.data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.{op}: Expected a floating point tensor as {name}, got dtype {a.dtype} "
                           f"(shape {a.shape})")


def _skew(x: np.ndarray) -> np.ndarray:
    """x - x^H (x - x^T for real x)."""
    return x - _h(x)


def _gaps(values: np.ndarray) -> np.ndarray:
    """E[..., j, k] = values[k] - values[j] off the diagonal and 1 on it (the divisor of the
    off-diagonal terms, whose numerators are 0 on the diagonal)."""
    return values[..., None, :] - values[..., :, None] + namespace(values).eye(values.shape[-1],
                                                                             dtype=values.dtype)


def _svd_driver(A: Tensor, driver: str | None) -> None:  # noqa: N803
    """Check svd's `driver=` as PyTorch does: only on CUDA inputs, one of cuSOLVER's routines (which
    CuPy picks itself, so the name is checked and not used)."""
    if driver is None:
        return
    if type(A.data) is np.ndarray:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
                           "with cuSOLVER backend.")
    if driver not in ("gesvd", "gesvdj", "gesvda"):
        raise RuntimeError(f"torch.linalg.svd: unknown svd driver {driver} in svd_cusolver computation. "
                           f"Available options are: gesvd, gesvdj, gesvda")


@autocast_op("linalg.svd")
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None  # noqa: N803
        ) -> tuple[Tensor, Tensor, Tensor]:
    """The named tuple (U, S, Vh) with A = U diag(S) Vh, singular values largest first.

    For k = min(m, n) distinct, non-zero singular values (PyTorch's svd_backward, real case), with
    E[j, k] = S_k^2 - S_j^2 (1 on the diagonal) and skew(X) = X - X^T:
    d/dA = U [(skew(U^T gU) / E) S + S (skew(Vh gVh^T) / E) + diag(gS)] Vh
           + (I - U U^T) gU S^-1 Vh  (m > k)  + U S^-1 gVh (I - Vh^T Vh)  (n > k).
    With full_matrices the columns of U (rows of Vh) past k are any basis of a subspace, and
    their gradients are ignored, as PyTorch does. The signs of each singular pair are LAPACK's
    choice: only a loss that does not depend on them has a meaningful gradient. `driver` as
    `svdvals`'s.
    """
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "svd")
    _matrices(A, "svd")
    _svd_driver(A, driver)
    u, s, vh = np.linalg.svd(A.data, full_matrices=full_matrices)
    m, n, k = A.shape[-2], A.shape[-1], s.shape[-1]
    u_k, vh_k = u[..., :, :k], vh[..., :k, :]  # (views; all of u and vh without full_matrices)
    gaps = _gaps(s * s)

    def vjp_u(grad: np.ndarray) -> np.ndarray:
        g = grad[..., :, :k]
        skew = _skew(_h(u_k) @ g)
        inner = skew / gaps * s[..., None, :]
        if skew.dtype.kind == "c":  # and the phase: i Im(diag(U^H gU)) / S
            inner = inner + _diag_embed(np.diagonal(skew, 0, -2, -1) / (2 * s))
        if m > k:  # the part of gU outside U's columns
            g_scaled = g / s[..., None, :]
            return (u_k @ inner + g_scaled - u_k @ (_h(u_k) @ g_scaled)) @ vh_k
        return u_k @ inner @ vh_k

    def vjp_s(grad: np.ndarray) -> np.ndarray:
        return (u_k * grad[..., None, :]) @ vh_k

    def vjp_vh(grad: np.ndarray) -> np.ndarray:
        g = grad[..., :k, :]
        inner = s[..., :, None] * (_skew(vh_k @ _h(g)) / gaps)
        if n > k:  # the part of gVh outside Vh's rows
            g_scaled = g / s[..., :, None]
            return u_k @ (inner @ vh_k + g_scaled - (g_scaled @ _h(vh_k)) @ vh_k)
        return u_k @ inner @ vh_k

    return _SVD(record(u, "svd", (A,), _pytorch_vjp(vjp_u, A), saved=(), saves_output=True,
                       graph_vjp=_svd_u_graph),
                record(s, "svd", (A,), _pytorch_vjp(vjp_s, A), saved=(), saves_output=True,
                       graph_vjp=_svd_s_graph),
                record(vh, "svd", (A,), _pytorch_vjp(vjp_vh, A), saved=(), saves_output=True,
                       graph_vjp=_svd_vh_graph))


def _diag_embed(values: np.ndarray) -> np.ndarray:
    """Matrices with `values` on their diagonals."""
    return values[..., :, None] * np.eye(values.shape[-1], dtype=values.real.dtype, like=values)


# The graph VJPs of svd and eigh: the formulas above, with the factors from a reduced decomposition
# of A recorded again (nodes with graph VJPs of their own, so the gradient differentiates again).


def _gaps_of(values: Tensor) -> Tensor:
    eye = new_leaf(namespace(values.data).eye(values.shape[-1], dtype=values.dtype))
    return values.unsqueeze(-2) - values.unsqueeze(-1) + eye


def _svd_u_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    u, s, vh = svd(A, full_matrices=False)
    k = s.shape[-1]

    def formula(grad: Tensor) -> tuple[Tensor]:
        g = grad[..., :, :k]
        uh_g = u.mH @ g
        skew = uh_g - uh_g.mH
        inner = skew / _gaps_of(s * s) * s.unsqueeze(-2)
        if skew.is_complex():  # and the phase: i Im(diag(U^H gU)) / S
            inner = inner + (skew.diagonal(0, -2, -1) / (2 * s)).diag_embed()
        if A.shape[-2] > k:  # the part of gU outside U's columns
            g_scaled = g / s.unsqueeze(-2)
            return ((u @ inner + g_scaled - u @ (u.mH @ g_scaled)) @ vh,)
        return (u @ inner @ vh,)

    return _pytorch_graph(formula, grad, A)


def _svd_s_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    u, _, vh = svd(A, full_matrices=False)
    return _pytorch_graph(lambda grad: ((u * grad.unsqueeze(-2)) @ vh,), grad, A)


def _svd_vh_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    u, s, vh = svd(A, full_matrices=False)
    k = s.shape[-1]

    def formula(grad: Tensor) -> tuple[Tensor]:
        g = grad[..., :k, :]
        vh_gh = vh @ g.mH
        inner = s.unsqueeze(-1) * ((vh_gh - vh_gh.mH) / _gaps_of(s * s))
        if A.shape[-1] > k:  # the part of gVh outside Vh's rows
            g_scaled = g / s.unsqueeze(-1)
            return (u @ (inner @ vh + g_scaled - (g_scaled @ vh.mH) @ vh),)
        return (u @ inner @ vh,)

    return _pytorch_graph(formula, grad, A)


@autocast_op("torch.svd")
def legacy_svd(input: Tensor, some: bool = True,  # noqa: N803
               compute_uv: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """`torch.svd`: the named tuple (U, S, V) with A = U diag(S) V^T (V, not Vh); `some=False`
    gives the full U and V. Without `compute_uv`, U and V are zeros of shapes (m, m) and (n, n),
    and only S is computed (and differentiable). Gradients as `svd`'s."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "legacy_svd")
    if input.ndim < 2:
        raise ShapeError(f"svd: input should have at least 2 dimensions, but has {input.ndim} dimensions "
                         f"instead (shape {input.shape})")
    _inexact(input, "svd")
    if not compute_uv:
        xp, (m, n) = namespace(input.data), input.shape[-2:]
        values = svdvals(input)
        return _LEGACY_SVD(new_leaf(xp.zeros(input.shape[:-2] + (m, m), input.dtype)), values,
                           new_leaf(xp.zeros(input.shape[:-2] + (n, n), input.dtype)))
    u, s, vh = svd(input, full_matrices=not some)
    return _LEGACY_SVD(u, s, vh.mT)


_QR_NOT_DIFFERENTIABLE = {
    "r": "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
         "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
    "complete": "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.",
}


@autocast_op("linalg.qr")
def qr(A: Tensor, mode: str = "reduced") -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (Q, R) with A = Q R, Q with orthonormal columns and R upper triangular.

    mode 'reduced': Q (m, k), R (k, n) for k = min(m, n); 'complete': Q (m, m), R (m, n); 'r':
    only R (Q is an empty tensor). PyTorch's linalg_qr_backward, with M = gR R^T - Q^T gQ:
    for m >= n, d/dA = (gQ + Q (triu(M) + triu(M)^T, the diagonal once)) R^-T; for m < n, with
    R = [R1 | R2] (R1 square), d/dA = [Q tril(M^T - M) R1^-T | 0] + Q gR. As in PyTorch, mode
    'r', and mode 'complete' with m > n, are not differentiable: backward through them raises.
    """
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "qr")
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
            diagonal = np.diagonal(m_part, 0, -2, -1)
            diagonal = diagonal.real if diagonal.dtype.kind == "c" else diagonal
            # triu(M) + triu(M)^H with the real part of M's diagonal once
            upper = np.triu(m_part, 1) + _diag_embed(diagonal)
            b = q @ (upper + _h(np.triu(m_part, 1)))
            if g_q is not None:
                b = b + g_q
            return _h(np.linalg.solve(r, _h(b)))  # b R^-H
        lower = np.tril(_h(m_part) - m_part)
        if lower.dtype.kind == "c":  # the imaginary part of the diagonal halved
            lower = lower - 0.5j * _diag_embed(np.diagonal(lower, 0, -2, -1).imag)
        head = _h(np.linalg.solve(r[..., :, :m], _h(q @ lower)))  # (Q lower) R1^-H
        return np.concatenate((head, np.zeros_like(head, shape=head.shape[:-1] + (n - m,))), axis=-1)

    def vjp_q(grad: np.ndarray) -> np.ndarray:
        return through_m(-(_h(q) @ grad), grad)

    def vjp_r(grad: np.ndarray) -> np.ndarray:
        g = through_m(grad @ _h(r), None)
        return g if m >= n else g + q @ grad

    return _QR(record(q, "qr", (A,), _pytorch_vjp(vjp_q, A), saved=(), saves_output=True,
                      graph_vjp=_qr_q_graph),
               record(r, "qr", (A,), _pytorch_vjp(vjp_r, A), saved=(), saves_output=True,
                      graph_vjp=_qr_r_graph))


# qr's graph VJPs: `through_m` above with Q and R of A recorded again (mode 'reduced', the same
# factors as 'complete' where that is differentiable).


def _qr_through_m(q: Tensor, r: Tensor, m_part: Tensor, g_q: Tensor | None) -> Tensor:
    m, n = q.shape[-2], r.shape[-1]
    if m >= n:
        if m_part.is_complex():  # triu(M) + triu(M)^H with the real part of M's diagonal once
            upper = m_part.triu(1) + m_part.diagonal(0, -2, -1).real.diag_embed()
        else:
            upper = m_part.triu()
        b = q @ (upper + m_part.triu(1).mH)
        if g_q is not None:
            b = b + g_q
        return solve_triangular(r.mH, b, upper=False, left=False)  # b R^-H
    lower = (m_part.mH - m_part).tril()
    if lower.is_complex():  # the imaginary part of the diagonal halved
        lower = lower - 0.5j * lower.diagonal(0, -2, -1).imag.diag_embed()
    head = solve_triangular(r[..., :, :m].mH, q @ lower, upper=False, left=False)
    zeros = new_leaf(namespace(head.data).zeros(head.shape[:-1] + (n - m,), dtype=head.dtype))
    return _cat([head, zeros], -1)


def _qr_q_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    q, r = qr(A)
    return _pytorch_graph(lambda grad: (_qr_through_m(q, r, -(q.mH @ grad), grad),), grad, A)


def _qr_r_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    q, r = qr(A)

    def formula(grad: Tensor) -> tuple[Tensor]:
        g = _qr_through_m(q, r, grad @ r.mH, None)
        return (g if A.shape[-2] >= A.shape[-1] else g + q @ grad,)

    return _pytorch_graph(formula, grad, A)


def _refuse_qr(mode: str) -> Any:
    """A VJP that raises PyTorch's error for a QR mode without a derivative."""
    def vjp(grad: np.ndarray) -> np.ndarray:
        raise RuntimeError(f"linalg.qr: {_QR_NOT_DIFFERENTIABLE[mode]}")
    return vjp


@autocast_op("torch.qr")
def legacy_qr(input: Tensor, some: bool = True) -> tuple[Tensor, Tensor]:  # noqa: N803
    """`torch.qr`: `linalg.qr` with mode 'reduced' (some=True) or 'complete' (some=False)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "legacy_qr")
    q, r = qr(input, "reduced" if some else "complete")
    return _LEGACY_QR(q, r)


def _hermitian(A: Tensor, op: str, uplo: str) -> None:  # noqa: N803
    """Raise unless A is a floating or complex (batch of) square matrix and uplo names a triangle
    (an integer A is NotImplementedError, as PyTorch's "not implemented for 'Long'")."""
    if A.data.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"linalg.{op}: not implemented for dtype {A.dtype} (A of shape "
                                    f"{A.shape}); use a floating point tensor")
    _square(A, op)
    if uplo not in ("L", "U"):
        raise ArgumentValueError(f"linalg.{op}: Expected UPLO argument to be 'L' or 'U', but got {uplo!r}")


@autocast_op("linalg.eigh")
def eigh(input: Tensor, UPLO: str = "L") -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (eigenvalues, eigenvectors) of a symmetric matrix, the eigenvalues ascending,
    A = V diag(L) V^T. Only the triangle UPLO ('L' lower, 'U' upper) of A is read.

    d/dA = V (diag(gL) + (skew(V^T gV) / 2) / E) V^T with E[i, j] = L_j - L_i (distinct
    eigenvalues). As PyTorch's, the gradient is symmetric: the triangle that was not read gets
    the same gradient as the one that was (a change of A along a symmetric direction is what the
    gradient answers). Each eigenvector's sign is LAPACK's choice.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "eigh")
    _hermitian(input, "eigh", UPLO)
    values, vectors = np.linalg.eigh(input.data, UPLO=UPLO)
    gaps = _gaps(values)

    def vjp_vectors(grad: np.ndarray) -> np.ndarray:
        inner = _h(vectors) @ grad
        if inner.dtype.kind == "c":
            _check_phase(np.diagonal(inner, 0, -2, -1), "linalg_eig_backward", "eigenvectors")
        return vectors @ (0.5 * _skew(inner) / gaps) @ _h(vectors)

    return _EIGH(
        record(values, "eigh", (input,),
               _pytorch_vjp(partial(_hermitian_values_backward, vectors=vectors), input),
               saved=(), saves_output=True, graph_vjp=partial(_eigenvalues_graph, UPLO)),
        record(vectors, "eigh", (input,), _pytorch_vjp(vjp_vectors, input), saved=(), saves_output=True,
               graph_vjp=partial(_eigenvectors_graph, UPLO)))


def _hermitian_values_backward(grad: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """V diag(gL) V^H: the gradient of eigh's eigenvalues."""
    return (vectors * grad[..., None, :]) @ _h(vectors)


def _check_phase(diagonal: np.ndarray, op: str, what: str) -> None:
    """Refuse a loss that depends on the phase of complex singular or eigen vectors: Im diag(V^H gV)
    must be 0 (to PyTorch's tolerance, 1e-2)."""
    if bool((np.abs(diagonal.imag) > 1e-2).any()):
        raise RuntimeError(f"{op}: The {what} in the complex case are specified up to multiplication by "
                           "e^{i phi}. The specified loss function depends on this quantity, so it is "
                           "ill-defined.")


def _eigenvalues_graph(uplo: str, grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    _, vectors = eigh(A, uplo)
    return _pytorch_graph(lambda grad: ((vectors * grad.unsqueeze(-2)) @ vectors.mH,), grad, A)


def _eigenvectors_graph(uplo: str, grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    # The eigenvectors are this node's own output: a gradient that reaches them through this formula
    # and through the loss adds up there, to a sum that does not depend on their phases, which is
    # what backward checks for complex ones (the formula's part alone does).
    values, vectors = eigh(A, uplo)[0], out

    def formula(grad: Tensor) -> tuple[Tensor]:
        vh_g = vectors.mH @ grad
        return (vectors @ (0.5 * (vh_g - vh_g.mH) / _gaps_of(values)) @ vectors.mH,)

    return _pytorch_graph(formula, grad, A)


@autocast_op("linalg.eigvalsh")
def eigvalsh(input: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues of a symmetric matrix, ascending (only the UPLO triangle is read).
    d/dA = V diag(G) V^T."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "eigvalsh")
    _hermitian(input, "eigvalsh", UPLO)
    if not (grad_mode.enabled and input.requires_grad):  # no gradient: no eigenvectors
        return new_leaf(np.linalg.eigvalsh(input.data, UPLO=UPLO))
    values, vectors = np.linalg.eigh(input.data, UPLO=UPLO)
    return record(values, "eigvalsh", (input,),
                  _pytorch_vjp(partial(_hermitian_values_backward, vectors=vectors), input),
                  saved=(), graph_vjp=partial(_eigenvalues_graph, UPLO))


# --- complex matrices ------------------------------------------------------------------------------
# A decomposition of a complex matrix is not complex-differentiable (it reads conj(A) too), so
# its VJP is PyTorch's backward formula G itself: autograd runs conj(vjp(conj(grad))) into a
# complex input (see tensorgrad.autograd), so vjp(g) = conj(G(conj(g))) gives it G(grad), and a
# real input takes the real part of G(grad), as PyTorch does. The formulas are written with the
# conjugate transpose (`_h`), which is the transpose for real matrices.


def _h(x: np.ndarray) -> np.ndarray:
    """The conjugate transpose of the last two dimensions (a view for real arrays)."""
    return np.conj(_swap(x)) if x.dtype.kind == "c" else _swap(x)


def _pytorch_vjp(formula: Any, A: Tensor) -> Any:  # noqa: N803
    """The VJP into A that makes autograd give PyTorch's backward formula G(grad) (see above)."""
    if A.data.dtype.kind != "c":
        return lambda grad: formula(grad).real
    return lambda grad: np.conj(formula(np.conj(grad)))


def _pytorch_graph(formula: Any, grad: Tensor, *inputs: Tensor) -> tuple:
    """A graph VJP in the form `higher_order.conjugated_graph` turns into PyTorch's backward
    formulas `formula(grad)` (a tuple, one per input, written with conjugate transposes), as
    `_pytorch_vjp` is for the numpy VJPs: conj(formula(conj(grad))) where complex numbers are
    involved, formula(grad) itself for real ones."""
    if grad.is_complex() or any(x.is_complex() for x in inputs):
        return tuple(None if g is None else g.conj() for g in formula(grad.conj()))
    return formula(grad)


_EIG = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])


def _eig(A: Tensor, op: str) -> tuple[np.ndarray, np.ndarray]:  # noqa: N803
    """LAPACK geev's eigenvalues and eigenvectors of A, always complex (complex64 for float32)."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, op)
    if A.ndim < 2:
        raise ShapeError(f"linalg.{op}: The input tensor A must have at least 2 dimensions (shape "
                         f"{A.shape}).")
    _square(A, op)
    kind = A.data.dtype
    if kind not in (np.float32, np.float64, np.complex64, np.complex128):
        raise UnsupportedDtypeError(f"linalg.{op}: not implemented for {A.dtype} (A of shape {A.shape}); "
                                    "it takes float32, float64, complex64 or complex128")
    dtype = np.result_type(kind, np.complex64)
    xp = namespace(A.data)
    values, vectors = np.linalg.eig(to_numpy(A.data))  # (no general eigensolver on a GPU: LAPACK's)
    return xp.asarray(values.astype(dtype, copy=False)), xp.asarray(vectors.astype(dtype, copy=False))


def _eigenvalues_backward(grad: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """G(gL) = V^-H diag(gL) V^H (PyTorch's linalg_eig_backward without gV)."""
    return np.linalg.solve(_h(vectors), grad[..., :, None] * _h(vectors))


def _eigenvectors_backward(grad: np.ndarray, values: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """G(gV) of PyTorch's linalg_eig_backward: V^-H ((V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H,
    E[i, j] = L_j - L_i, the diagonal 0 (the eigenvalues' part). Each eigenvector is defined up to
    a phase, so a loss whose value depends on it (Im diag(V^H gV) not 0) is refused, as PyTorch does."""
    inner = _h(vectors) @ grad
    diagonal = np.diagonal(inner, 0, -2, -1)
    _check_phase(diagonal, "linalg_eig_backward", "eigenvectors")
    inner = inner - _h(vectors) @ (vectors * diagonal.real[..., None, :])
    conj_values = np.conj(values)
    inner = inner / _gaps(conj_values)
    inner = inner * (1 - np.eye(values.shape[-1], dtype=inner.real.dtype, like=inner))
    return np.linalg.solve(_h(vectors), inner @ _h(vectors))


@autocast_op("linalg.eig")
def eig(A: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (eigenvalues, eigenvectors) of a square matrix (or of each in a batch), with
    A V = V diag(L): always complex (complex64 for float32 and complex64 A, complex128 for the
    double precisions), as LAPACK's geev gives them: each eigenvector of unit norm with its largest
    component real, in geev's order. (geev builds differ: float32 eigenvectors may come out with
    another sign than PyTorch's build gives.)

    Gradients as PyTorch's linalg_eig_backward (in `_eigenvalues_backward` and
    `_eigenvectors_backward`); a real A gets their real part. Only a loss that does not depend on
    each eigenvector's phase has a gradient (backward raises otherwise), and the eigenvalues must
    be distinct.
    """
    values, vectors = _eig(A, "eig")

    def vjp_values(grad: np.ndarray) -> np.ndarray:
        return _eigenvalues_backward(grad, vectors)

    def vjp_vectors(grad: np.ndarray) -> np.ndarray:
        return _eigenvectors_backward(grad, values, vectors)

    return _EIG(record(values, "eig", (A,), _pytorch_vjp(vjp_values, A), saved=(),
                       graph_vjp=_eig_values_graph),
                record(vectors, "eig", (A,), _pytorch_vjp(vjp_vectors, A), saved=(), saves_output=True,
                       graph_vjp=_eig_vectors_graph))


# eig's graph VJPs: `_eigenvalues_backward` and `_eigenvectors_backward` with tensor ops.


def _eig_values_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    _, vectors = eig(A)
    return _pytorch_graph(lambda grad: (solve(vectors.mH, grad.unsqueeze(-1) * vectors.mH),), grad, A)


def _eig_vectors_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    values, vectors = eig(A)[0], out  # (this node's own eigenvectors: see `_eigenvectors_graph`)
    off_diagonal = new_leaf(1 - namespace(out.data).eye(out.shape[-1], dtype=out.data.real.dtype))

    def formula(grad: Tensor) -> tuple[Tensor]:
        inner = vectors.mH @ grad
        inner = inner - vectors.mH @ (vectors * inner.diagonal(0, -2, -1).real.unsqueeze(-2))
        inner = inner / _gaps_of(values.conj()) * off_diagonal
        return (solve(vectors.mH, inner @ vectors.mH),)

    return _pytorch_graph(formula, grad, A)


@autocast_op("linalg.eigvals")
def eigvals(A: Tensor) -> Tensor:  # noqa: N803
    """The eigenvalues of a square matrix, as `eig` gives them (complex). d/dA as eig's:
    V^-H diag(G) V^H, its real part for a real A."""
    values, vectors = _eig(A, "eigvals")
    return record(values, "eigvals", (A,), _pytorch_vjp(partial(_eigenvalues_backward, vectors=vectors), A),
                  saved=(), graph_vjp=_eig_values_graph)


_REMOVED = ("This function was deprecated since version 1.9 and is now removed. {why}\n\n{old_values} "
            "should be replaced with:\n{new_values}\n\nand\n\n{old_vectors} should be replaced "
            "with:\n{new_vectors}")


def legacy_eig(input: Tensor, eigenvectors: bool = False) -> tuple[Tensor, Tensor]:  # noqa: A002
    """`torch.eig`, removed from PyTorch: raises its RuntimeError, which names the replacements."""
    raise RuntimeError(_REMOVED.format(
        why="`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
            "tensors mimicking complex tensors.",
        old_values="L, _ = torch.eig(A)", new_values="L_complex = torch.linalg.eigvals(A)",
        old_vectors="L, V = torch.eig(A, eigenvectors=True)",
        new_vectors="L_complex, V_complex = torch.linalg.eig(A)"))


def legacy_symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True  # noqa: A002
                  ) -> tuple[Tensor, Tensor]:
    """`torch.symeig`, removed from PyTorch: raises its RuntimeError, which names the replacements."""
    raise RuntimeError(_REMOVED.format(
        why="The default behavior has changed from using the upper triangular portion of the matrix by "
            "default to using the lower triangular portion.",
        old_values="L, _ = torch.symeig(A, upper=upper)",
        new_values="L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')",
        old_vectors="L, V = torch.symeig(A, eigenvectors=True)",
        new_vectors="L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"))


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


def pinv(input: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,  # noqa: N803
         rtol: Any = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, from the SVD (from eigh with `hermitian`, reading the
    lower triangle): singular values at or below max(atol, rtol * the largest) count as 0.
    `rcond` is the older name of rtol (with atol 0). PyTorch's pinv_backward (for a constant
    rank), with P = pinv(A): d/dA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A).
    """
    _matrices(input, "pinv")
    if rcond is not None:
        atol, rtol = 0.0, rcond
    if hermitian:
        _square(input, "pinv")
        values, vectors = np.linalg.eigh(input.data)
        keep = np.abs(values) > _tolerance(_largest(np.abs(values)), input, atol, rtol)
        out = (vectors * _reciprocal(values, keep)[..., None, :]) @ _h(vectors)
    else:
        u, s, vh = np.linalg.svd(input.data, full_matrices=False)
        keep = s > _tolerance(s[..., :1], input, atol, rtol)
        out = (_h(vh) * _reciprocal(s, keep)[..., None, :]) @ _h(u)
    vjp = _pytorch_vjp(lambda grad: _pinv_vjp(grad, out, input.data, _h), input)
    return record(out, "pinv", (input,), vjp, saved=(), saves_output=True, graph_vjp=_pinv_graph)


def _pinv_vjp(grad: Any, p: Any, a: Any, swap: Any = _swap) -> Any:
    """pinv's backward (PyTorch's pinv_backward), ordered so the products stay small (arrays, or
    tensors with `swap` a tensor transpose; `_h` for complex arrays)."""
    m, n = a.shape[-2:]
    grad_t = swap(grad)
    if m <= n:
        k = grad_t @ p
        k_pt = k @ swap(p)
        return -swap(p @ k) + k_pt - (a @ p) @ k_pt + (swap(p) @ p) @ (grad_t - k @ a)
    k = p @ grad_t
    pt_k = swap(p) @ k
    return -swap(k @ p) + (grad_t - a @ k) @ p @ swap(p) + pt_k - pt_k @ p @ a


def _transposed(t: Tensor) -> Tensor:
    return t.mT


def _pinv_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    return (_pinv_vjp(grad, out, A, _transposed),)


@autocast_op("pinverse")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002 - PyTorch's name
    """`torch.pinverse`: `linalg.pinv` with rtol = rcond."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "pinverse")
    return pinv(input, rcond)


@autocast_op("linalg.matrix_rank")
def matrix_rank(input: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,  # noqa: N803
                rtol: Any = None) -> Tensor:
    """The number of singular values above max(atol, rtol * the largest) (eigenvalues in absolute
    value with `hermitian`), as int64, one per matrix; `tol` is the older name of atol (with rtol
    0). Not differentiable."""
    _matrices(input, "matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    if hermitian:
        _square(input, "matrix_rank")
        values = np.abs(np.linalg.eigvalsh(input.data))
        largest = _largest(values)
    else:
        values = np.linalg.svd(input.data, compute_uv=False)
        largest = values[..., :1]
    rank = (values > _tolerance(largest, input, atol, rtol)).sum(axis=-1)
    return new_leaf(namespace(input.data).asarray(rank, dtype=np.int64))


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@autocast_op("linalg.lstsq")
def lstsq(input: Tensor, b: Tensor, rcond: float | None = None, *, driver: str | None = None
          ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The least-squares solution X of A X = B, A and B given as PyTorch's `input` and `b` (the
    one of smallest norm if A is rank deficient), as the named tuple (solution, residuals, rank,
    singular_values). B is a (batch of) matrix, or of vectors when it has one dimension fewer
    than A; batch dimensions broadcast.

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
    A, B = input, b  # noqa: N806 - the math's names
    if A.ndim < 2:
        raise ShapeError(f"linalg.lstsq: input must have at least 2 dimensions, got shape {A.shape}")
    if not 0 <= A.ndim - B.ndim <= 1:
        raise ShapeError(f"linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                         f"(input.dim() - other.dim()) <= 1, got shapes {A.shape} and {B.shape}")
    _inexact(A, "lstsq", "input")
    _inexact(B, "lstsq", "other")
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
    x = _h(vh) @ (_reciprocal(s, keep)[..., None] * (_h(u) @ b))
    rank = xp.asarray(keep.sum(axis=-1), dtype=np.int64)
    # The gradient is that of pinv(A) @ B, with pinv's default tolerance (as PyTorch's backward).
    p = (_h(vh) * _reciprocal(s, s > default * s[..., :1])[..., None, :]) @ _h(u)

    def vjp_a(grad: np.ndarray) -> np.ndarray:
        g = grad[..., None] if vector else grad
        return _pinv_vjp(g @ _h(b), p, A.data, _h)

    def vjp_b(grad: np.ndarray) -> np.ndarray:
        g = _h(p) @ (grad[..., None] if vector else grad)
        return g[..., 0] if vector else g

    solution = record(x[..., 0] if vector else x, "lstsq", (A, B), _pytorch_vjp(vjp_a, A),
                      _pytorch_vjp(vjp_b, B), saved=(), graph_vjp=partial(_lstsq_graph, vector))
    empty = xp.zeros((0,), s.dtype)  # real, as the residuals and singular values are
    full_rank = driver == "gels" or (driver in ("gelsd", "gelss") and bool((rank == n).all()))
    if m > n and full_rank:
        residual = A.data @ x - b
        squares = (residual * np.conj(residual)).real if residual.dtype.kind == "c" else residual * residual
        residuals = record(squares.sum(axis=-2), "lstsq", (A, B),
                           _pytorch_vjp(lambda grad: 2 * (grad[..., None, :] * residual) @ _h(x), A),
                           _pytorch_vjp(lambda grad: (-2 * grad[..., None, :] * residual)[..., 0] if vector
                                        else -2 * grad[..., None, :] * residual, B), saved=(),
                           graph_vjp=partial(_residuals_graph, vector, solution))
    else:  # none, but still an output of the op in the graph, as in PyTorch (its gradient is 0)
        residuals = _constant_of(empty, "lstsq", A, B)
    return _LSTSQ(solution, residuals, new_leaf(xp.zeros((0,), np.int64) if driver == "gels" else rank),
                  new_leaf(s if driver in ("gelsd", "gelss") else empty))


def _lstsq_graph(vector: bool, grad: Tensor, out: Tensor, A: Tensor,  # noqa: N803
                 B: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The gradients of pinv(A) @ B, pinv with its default tolerance (PyTorch's lstsq backward)."""
    p = pinv(A)
    g, b = (grad.unsqueeze(-1), B.unsqueeze(-1)) if vector else (grad, B)
    grad_b = p.mT @ g
    return _pinv_vjp(g @ b.mT, p, A, _transposed), grad_b.squeeze(-1) if vector else grad_b


def _residuals_graph(vector: bool, solution: Tensor, grad: Tensor, out: Tensor, A: Tensor,  # noqa: N803
                     B: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The gradients of sum(|A x - B|**2) (x the solution, at which the gradient through x is 0):
    2 grad (A x - B) x^T and -2 grad (A x - B); conj(A x - B) for complex numbers, which
    `higher_order.conjugated_graph` turns into PyTorch's 2 grad (A x - B) x^H and -2 grad (A x - B)."""
    x, b = (solution.unsqueeze(-1), B.unsqueeze(-1)) if vector else (solution, B)
    weighted = 2 * grad.unsqueeze(-2) * (A @ x - b).conj()  # (a real tensor's conj is itself)
    return weighted @ x.mT, -weighted.squeeze(-1) if vector else -weighted


@autocast_op("linalg.vector_norm")
def vector_norm(x: Tensor | None = None, ord: float = 2, dim: int | Sequence[int] | None = None,  # noqa: A002
                keepdim: bool = False, *, dtype: Any = None, input: Tensor | None = None) -> Tensor:  # noqa: A002
    """The ord-norm of x's elements over `dim` (all of them, as one vector, for None); of |x| for a
    complex x, a real result. The tensor may also be passed as `input=` (PyTorch accepts both names)."""
    if (x is None) == (input is None):
        raise TypeError("linalg.vector_norm() takes the tensor once, as x or as input "
                        f"(got {'both' if x is not None else 'neither'})")
    x = x if input is None else input
    if not isinstance(x, Tensor):
        raise not_a_tensor(x, "vector_norm")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return _norm(x, float(ord), dim, keepdim, dtype)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


@autocast_op("linalg.matrix_norm")
def matrix_norm(input: Tensor, ord: float | str = "fro", dim: tuple[int, int] = (-2, -1),  # noqa: A002, N803
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """A matrix norm over the two dims: 'fro', 'nuc', 1 / -1 (largest / smallest column sum of
    |a|), inf / -inf (row sums), 2 / -2 (largest / smallest singular value)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "matrix_norm")
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if input.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions, "
                           f"got {input.shape}")
    rows, cols = (checks.dim(d, input.ndim, "matrix_norm") for d in dim)
    if dtype is not None:
        input = input.to(dtype)
    if ord == "nuc" and input.is_complex():  # the sum of the singular values, real
        out = _sum(svdvals(input.movedim((rows, cols), (-2, -1))), -1)
        return _kept(out, input.ndim, (rows, cols)) if keepdim else out
    if ord in ("fro", "nuc"):
        return _norm(input, ord, (rows, cols), keepdim)
    summed, across = (rows, cols) if ord in (1, -1) else (cols, rows)  # columns for 1, rows for inf
    nothing = input.shape[rows] * input.shape[cols] == 0 if ord == 2 else input.shape[across] == 0
    if ord in (1, 2, math.inf) and nothing:  # the largest of no values
        return _empty_max(input, (rows, cols), keepdim)
    if ord in (2, -2):
        values = svdvals(input.movedim((rows, cols), (-2, -1)))
        out = amax(values, -1) if ord == 2 else amin(values, -1)
        return _kept(out, input.ndim, (rows, cols)) if keepdim else out
    sums = _sum(input.abs(), summed, keepdim=True)
    out = amax(sums, across, keepdim=True) if ord > 0 else amin(sums, across, keepdim=True)
    return out if keepdim else out.squeeze((rows, cols))


def _empty_max(input: Tensor, dims: tuple[int, int], keepdim: bool) -> Tensor:  # noqa: A002
    """The 1, 2 or inf norm of empty matrices: the largest of no sums (or singular values) is 0 in
    PyTorch, a constant (no gradient), where the smallest (the negative orders) raises."""
    shape = [1 if d in dims else size for d, size in enumerate(input.shape) if keepdim or d not in dims]
    real = input.data.real.dtype if input.is_complex() else input.data.dtype
    return new_leaf(np.zeros_like(input.data, shape=shape, dtype=real))


def _kept(out: Tensor, ndim: int, dims: tuple[int, int]) -> Tensor:
    """A reduction over two dims with those dims put back as size 1."""
    for d in sorted(dims):
        out = out.unsqueeze(d)
    return out


def norm(input: Tensor, ord: float | str | None = None, dim: Any = None, keepdim: bool = False,  # noqa: A002, N803
         *, dtype: Any = None) -> Tensor:
    """`vector_norm` or `matrix_norm` as PyTorch picks: by dim (one dim: a vector norm, two: a
    matrix norm), else by A's dimensions when ord is given; the 2-norm of all elements otherwise."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "norm")
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(input, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(input, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(input, 2, None, keepdim, dtype=dtype)
    if input.ndim == 2:
        return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype)
    if input.ndim == 1:
        return vector_norm(input, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                       f"{input.ndim}D.")


def matrix_power(input: Tensor, n: int) -> Tensor:  # noqa: N803
    """A multiplied by itself n times (the identity for 0, powers of the inverse for n < 0), by
    repeated squaring; the gradient is the products'."""
    _square(input, "matrix_power")
    n = checks.as_int(n, "matrix_power", "n")
    if n < 0:
        input, n = inv(input), -n
    result, square = None, input
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    if result is None:  # n = 0: the identity, in A's batch shape, dtype and place
        xp = namespace(input.data)
        eye = xp.array(xp.broadcast_to(xp.eye(input.shape[-1], dtype=input.dtype), input.shape))
        return _constant_of(eye, "matrix_power", input)
    return result


def _constant_of(data: Any, op: str, *inputs: Tensor) -> Tensor:
    """A result that does not depend on the inputs but is still recorded as their op's output, as
    PyTorch records it: it requires grad when an input does, and the inputs' gradients are zero."""
    return record(data, op, inputs, *(partial(_zeros_of, x) for x in inputs), saved=(),
                  graph_vjp=_zero_graph)


def _zeros_of(x: Tensor, grad: Any) -> Any:
    """A zero gradient for x (`_constant_of`'s VJPs)."""
    return np.zeros_like(x.data)


def _zero_graph(grad: Tensor, out: Tensor, *inputs: Tensor) -> tuple[Tensor, ...]:
    """Zero gradients for each input (`_constant_of`'s graph VJP)."""
    return tuple(new_leaf(namespace(x.data).zeros_like(x.data)) for x in inputs)


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
    if a.dtype == np.float16:  # LAPACK has no half precision: computed in float32, then rounded
        return _expm(a.astype(np.float32)).astype(np.float16)
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


def matrix_exp(input: Tensor) -> Tensor:  # noqa: N803
    """The matrix exponential, sum of A^k / k!. PyTorch's backward: d/dA is the top-right block
    of exp([[A^T, G], [0, A^T]]) (the adjoint of the Frechet derivative, by Mathias's block
    matrix)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "matrix_exp")
    _matrices(input, "matrix_exp")
    _square(input, "matrix_exp")

    def vjp(grad: np.ndarray) -> np.ndarray:
        n, a_t = input.shape[-1], _swap(input.data)
        block = np.concatenate((np.concatenate((a_t, grad), axis=-1),
                                np.concatenate((np.zeros_like(a_t), a_t), axis=-1)), axis=-2)
        return _expm(block)[..., :n, n:]

    return record(_expm(input.data), "matrix_exp", (input,), vjp, graph_vjp=_matrix_exp_graph)


def _matrix_exp_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    n, a_t = A.shape[-1], A.mT
    zeros = new_leaf(namespace(A.data).zeros(A.shape, A.dtype))
    block = _cat((_cat((a_t, grad), -1), _cat((zeros, a_t), -1)), -2)
    return (matrix_exp(block)[..., :n, n:],)


@autocast_op("linalg.multi_dot")
def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices, multiplied in the order that costs fewest scalar
    multiplications; the first may be a row vector and the last a column vector (1-D). The
    gradient is the products'."""
    tensors = list(tensors)
    if not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"linalg.multi_dot(): expected a sequence of Tensors, got {tensors!r}")
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
    if not isinstance(x, Tensor):
        raise not_a_tensor(x, "vander")
    if x.data.dtype.kind not in "iufc":
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
    if not isinstance(x, Tensor):
        raise not_a_tensor(x, "legacy_vander")
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
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "diagonal")
    return A.diagonal(offset, dim1, dim2)


# --- triangular systems, LU, and the *_ex forms ---------------------------------------------------

_LU_FACTOR = namedtuple("linalg_lu_factor", ["LU", "pivots"])
_LU_FACTOR_EX = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_LU = namedtuple("linalg_lu", ["P", "L", "U"])
_LU_UNPACK = namedtuple("lu_unpack", ["P", "L", "U"])
_INV_EX = namedtuple("linalg_inv_ex", ["inverse", "info"])
_CHOLESKY_EX = namedtuple("linalg_cholesky_ex", ["L", "info"])
_SOLVE_EX = namedtuple("linalg_solve_ex", ["result", "info"])
_TRIANGULAR_SOLVE = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def _triangle(a: np.ndarray, upper: bool, unitriangular: bool) -> np.ndarray:
    """The triangle of `a` that a triangular solve reads (the other one is ignored, as LAPACK's
    trtrs ignores it), with ones on the diagonal when `unitriangular`."""
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t - np.triu(np.tril(t)) + np.eye(a.shape[-1], dtype=a.dtype, like=a)
    return t


def solve_triangular(input: Tensor, B: Tensor, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (X A = B with left=False) for a triangular A: its upper triangle with
    `upper`, else its lower (the other is not read), its diagonal taken as ones with
    `unitriangular`. d/dB = A^-T G; d/dA = -(d/dB) X^T, kept to the triangle that was read."""
    _square(input, "solve_triangular")
    if B.ndim < 2:
        raise ShapeError(f"linalg.solve_triangular: The input tensor B must have at least 2 dimensions, "
                         f"got shape {B.shape}")
    if not left:  # X A = B is A^T X^T = B^T, with the other triangle
        return solve_triangular(input.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    if B.shape[-2] != input.shape[-1]:
        raise ShapeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                         f"({'x'.join(map(str, input.shape[-2:]))} and {'x'.join(map(str, B.shape[-2:]))})")
    if input.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found "
                           f"A of type {input.dtype} and B of type {B.dtype} instead")
    a = _triangle(input.data, upper, unitriangular)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = _solve_quietly(a, B.data)

    def vjp_b(grad: np.ndarray) -> np.ndarray:
        return _solve_quietly(_swap(a), grad)

    def vjp_a(grad: np.ndarray) -> np.ndarray:
        g = -(_solve_quietly(_swap(a), grad) @ _swap(x))
        g = np.triu(g) if upper else np.tril(g)
        return g - np.triu(np.tril(g)) if unitriangular else g

    return record(x, "solve_triangular", (input, B), vjp_a, vjp_b, saved=(),
                  graph_vjp=partial(_solve_triangular_graph, upper, unitriangular))


def _solve_triangular_graph(upper: bool, unitriangular: bool, grad: Tensor, out: Tensor, A: Tensor,  # noqa: N803
                            B: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    grad_b = solve_triangular(A.mT, grad, upper=not upper, unitriangular=unitriangular)
    grad_a = -(grad_b @ out.mT)
    grad_a = grad_a.triu(int(unitriangular)) if upper else grad_a.tril(-int(unitriangular))
    return grad_a, grad_b


def _solve_quietly(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a^-1 b for a (batch of) triangular a: inf and nan for a singular one, as LAPACK's
    trtrs gives them, rather than numpy's error."""
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.linalg.pinv(a) @ b * np.nan


def _lu_packed(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's getrf in numpy, batched: (LU packed in one matrix, the 1-based row swaps as int32,
    info: 1 + the first zero pivot's index, 0 if none). Partial pivoting: each column's largest
    magnitude (|re| + |im| for complex, the first of ties) becomes the pivot; a zero pivot column is
    left unscaled."""
    xp = namespace(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = a.reshape((math.prod(batch), m, n)).astype(a.dtype, copy=True)  # (not -1: A may be empty)
    rows = xp.arange(lu.shape[0])
    pivots = xp.zeros((lu.shape[0], k), dtype=np.int32)
    info = xp.zeros(lu.shape[0], dtype=np.int32)
    for j in range(k):
        column = lu[:, j:, j]
        # LAPACK's izamax: the largest |re| + |im| for complex numbers, not the modulus
        size = abs(column.real) + abs(column.imag) if column.dtype.kind == "c" else abs(column)
        p = xp.argmax(size, axis=1) + j
        pivots[:, j] = p + 1
        swapped = lu[rows, p].copy()
        lu[rows, p] = lu[:, j]
        lu[:, j] = swapped
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = xp.where((info == 0) & zero, j + 1, info)
        scale = xp.where(zero, 1, pivot)
        lu[:, j + 1:, j] /= scale[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return lu.reshape(a.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def _permutation(pivots: np.ndarray, m: int) -> np.ndarray:
    """The permutation matrix P with A = P L U from getrf's row swaps (batched)."""
    xp = namespace(pivots)
    swaps = to_numpy(pivots).reshape(math.prod(pivots.shape[:-1]), pivots.shape[-1]) - 1
    order = np.tile(np.arange(m), (swaps.shape[0], 1))
    rows = np.arange(swaps.shape[0])
    for j in range(swaps.shape[1]):
        p = swaps[:, j]
        order[rows, j], order[rows, p] = order[rows, p], order[rows, j].copy()
    eye = np.eye(m)
    # Row i of P^T A is row order[i] of A: P[order[i], i] = 1.
    perm = np.swapaxes(eye[order], -1, -2)
    return xp.asarray(perm.reshape(pivots.shape[:-1] + (m, m)))


def _lu_vjp(grad_lu: np.ndarray, lu: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    """d/dA of the packed LU, A = P L U (m x n, k = min(m, n)), PyTorch's linalg_lu_backward:

    with gL = tril(G, -1) and gU = triu(G), for a tall A (L = [L1; L2], U square)
        M = tril(L1^T gL1, -1) + triu(gU U^T - L2^T gL2),  d/dA = P [L1^-T M U^-T; gL2 U^-T]
    and for a wide A (L square, U = [U1 U2])
        M = tril(L^T gL - gU2 U2^T, -1) + triu(gU1 U1^T),  d/dA = P [L^-T M U1^-T, L^-T gU2].
    """
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype, like=lu)
    upper = np.triu(lu[..., :k, :])
    g_lower, g_upper = np.tril(grad_lu[..., :, :k], -1), np.triu(grad_lu[..., :k, :])
    l1, u1 = lower[..., :k, :], upper[..., :, :k]
    if m >= n:
        l2, gl1, gl2 = lower[..., k:, :], g_lower[..., :k, :], g_lower[..., k:, :]
        phi = np.tril(_swap(l1) @ gl1, -1) + np.triu(g_upper @ _swap(u1) - _swap(l2) @ gl2)
    else:
        u2, gu1, gu2 = upper[..., :, k:], g_upper[..., :, :k], g_upper[..., :, k:]
        phi = np.tril(_swap(l1) @ g_lower - gu2 @ _swap(u2), -1) + np.triu(gu1 @ _swap(u1))
    # L1^-T phi U1^-T by two triangular solves (general solves: the same numbers, LAPACK's gesv)
    top = _swap(np.linalg.solve(u1, _swap(np.linalg.solve(_swap(l1), phi))))
    if m > n:
        rest = _swap(np.linalg.solve(u1, _swap(gl2)))
        grad_a = np.concatenate([top, rest], axis=-2)
    elif m < n:
        rest = np.linalg.solve(_swap(l1), gu2)
        grad_a = np.concatenate([top, rest], axis=-1)
    else:
        grad_a = top
    return _permutation(pivots, m) @ grad_a


def _lu_factor(A: Tensor, pivot: bool, check_errors: bool, op: str) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """(LU, pivots, info) of A, the LU differentiable (see `_lu_vjp`)."""
    if A.ndim < 2:
        raise ShapeError(f"linalg.{op}: Expected tensor with 2 or more dimensions. Got size: {A.shape} "
                         "instead")
    _inexact(A, op)
    if not pivot:
        raise RuntimeError(f"linalg.{op}: LU without pivoting is not implemented on the CPU")
    lu, pivots, info = _lu_packed(A.data)
    if check_errors and bool((info > 0).any()):
        first = _first_failure(info)
        raise LinAlgError(f"linalg.{op}: U[{first},{first}] is zero and using it on lu_solve would result "
                          f"in a division by zero. If you still want to perform the factorization, consider "
                          f"calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    out = record(lu, "lu_factor", (A,), lambda grad: _lu_vjp(grad, lu, pivots), saved=(),
                 graph_vjp=_lu_factor_graph)
    return out, new_leaf(pivots), new_leaf(info)


def _lu_factor_graph(grad: Tensor, out: Tensor, A: Tensor) -> tuple[Tensor]:  # noqa: N803
    """`_lu_vjp` with tensor ops, L and U cut from A's LU recorded again."""
    packed, pivots, _ = _lu_factor(A, True, False, "lu_factor")
    m, n = A.shape[-2:]
    k = min(m, n)
    eye = new_leaf(np.eye(m, k, dtype=A.data.dtype, like=A.data))
    lower, upper = packed[..., :, :k].tril(-1) + eye, packed[..., :k, :].triu()
    g_lower, g_upper = grad[..., :, :k].tril(-1), grad[..., :k, :].triu()
    l1, u1 = lower[..., :k, :], upper[..., :, :k]
    if m >= n:
        l2, gl1, gl2 = lower[..., k:, :], g_lower[..., :k, :], g_lower[..., k:, :]
        phi = (l1.mT @ gl1).tril(-1) + (g_upper @ u1.mT - l2.mT @ gl2).triu()
    else:
        u2, gu1, gu2 = upper[..., :, k:], g_upper[..., :, :k], g_upper[..., :, k:]
        phi = (l1.mT @ g_lower - gu2 @ u2.mT).tril(-1) + (gu1 @ u1.mT).triu()
    top = solve_triangular(l1.mT, phi, upper=True, unitriangular=True)  # L1^-T phi U1^-T
    top = solve_triangular(u1.mT, top, upper=False, left=False)
    if m > n:
        grad_a = _cat([top, solve_triangular(u1.mT, gl2, upper=False, left=False)], -2)
    elif m < n:
        grad_a = _cat([top, solve_triangular(l1.mT, gu2, upper=True, unitriangular=True)], -1)
    else:
        grad_a = top
    return (new_leaf(_permutation(pivots.data, m).astype(A.data.dtype)) @ grad_a,)


def lu_factor_ex(A: Tensor, *, pivot: bool = True,  # noqa: N803
                 check_errors: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    """The named tuple (LU, pivots, info) of `lu_factor`, with info = 1 + the index of the first
    zero pivot (0 for none) instead of an error."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "lu_factor_ex")
    return _LU_FACTOR_EX(*_lu_factor(A, pivot, check_errors, "lu_factor_ex"))


def lu_factor(A: Tensor, *, pivot: bool = True) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (LU, pivots) of A = P L U with partial pivoting, packed as LAPACK's getrf:
    L's strict lower triangle (its diagonal is ones) and U in one matrix, and `pivots` (int32,
    1-based) the row swaps. Differentiable with respect to A."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "lu_factor")
    LU, pivots, _ = _lu_factor(A, pivot, check_errors=True, op="lu_factor")  # noqa: N806
    return _LU_FACTOR(LU, pivots)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True) -> tuple[Any, Any, Any]:
    """The named tuple (P, L, U) of a packed LU: P from the row swaps, L (ones on its diagonal)
    and U cut from LU (differentiable). A part not asked for is an empty tensor, as in PyTorch."""
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = new_leaf(np.zeros_like(LU_data.data, shape=(0,)))
    if unpack_data:
        eye = new_leaf(np.eye(m, k, dtype=LU_data.data.dtype, like=LU_data.data))
        lower = LU_data[..., :, :k].tril(-1) + eye
        upper = LU_data[..., :k, :].triu()
    else:
        lower = upper = empty
    perm = new_leaf(_permutation(LU_pivots.data, m).astype(LU_data.data.dtype)) if unpack_pivots else empty
    return _LU_UNPACK(perm, lower, upper)


def lu(A: Tensor, *, pivot: bool = True) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """The named tuple (P, L, U) with A = P L U: P a permutation matrix, L lower triangular with
    ones on its diagonal (m x k), U upper triangular (k x n), k = min(m, n). Differentiable."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "lu")
    LU, pivots, _ = _lu_factor(A, pivot, check_errors=False, op="lu")  # noqa: N806
    return _LU(*lu_unpack(LU, pivots))


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
             adjoint: bool = False) -> Tensor:
    """X with A X = B for A given by `lu_factor` (A^H X = B with `adjoint`, X A = B with
    left=False): two triangular solves and the row swaps, so the gradient reaches LU and B."""
    P, L, U = lu_unpack(LU, pivots)  # noqa: N806
    if not left:  # X A = B is A^H X^H = B^H
        return _adjoint(lu_solve(LU, pivots, _adjoint(B), adjoint=not adjoint))
    if adjoint:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        y = solve_triangular(_adjoint(U), B, upper=False)
        return P @ solve_triangular(_adjoint(L), y, upper=True, unitriangular=True)
    y = solve_triangular(L, P.mT @ B, upper=False, unitriangular=True)
    return solve_triangular(U, y, upper=True)


def _adjoint(t: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (the transpose for real tensors)."""
    return t.mH if t.is_complex() else t.mT


@autocast_op("torch.lu_solve")
def legacy_lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """`torch.lu_solve(b, LU_data, LU_pivots)`: `linalg.lu_solve` with b first (deprecated)."""
    _deprecated("lu_solve", "linalg.lu_solve (whose arguments are reversed: LU, pivots, B)")
    return lu_solve(LU_data, LU_pivots, input)


def _deprecated(old: str, new: str) -> None:
    """PyTorch's warning for its older linear-algebra spellings."""
    warnings.warn(f"{old} is deprecated in favor of {new} and will be removed in a future release.",
                  UserWarning, stacklevel=user_stacklevel())


def _first_failure(info: Any) -> int:
    """The info of the first matrix of a batch that failed."""
    flat = to_numpy(info).reshape(-1)
    return int(flat[flat > 0][0])


def _raise_singular(op: str, info: Any) -> None:
    if bool((info > 0).any()):
        raise LinAlgError(f"linalg.{op}: The diagonal element {_first_failure(info)} is zero, the inversion "
                          "could not be completed because the input matrix is singular.")


@autocast_op("linalg.inv_ex")
def inv_ex(A: Tensor, *, check_errors: bool = False) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (inverse, info): info (int32) is 0 for an invertible matrix, else 1 + the
    index of the first zero pivot of its LU, and its inverse is then nan."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "inv_ex")
    _square(A, "inv_ex")
    _, _, info = _lu_packed(A.data)
    if check_errors:
        _raise_singular("inv_ex", info)
    if not bool((info > 0).any()):
        return _INV_EX(inv(A), new_leaf(info))
    out = np.where((info > 0)[..., None, None], np.nan, np.linalg.pinv(A.data))
    return _INV_EX(new_leaf(out), new_leaf(info))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
             check_errors: bool = False) -> tuple[Tensor, Tensor]:
    """The named tuple (result, info) of `solve`, info as `inv_ex`'s (result nan where singular)."""
    _square(A, "solve_ex")
    _, _, info = _lu_packed(A.data)
    if check_errors:
        _raise_singular("solve_ex", info)
    if not bool((info > 0).any()):
        return _SOLVE_EX(solve(A, B, left=left), new_leaf(info))
    result = inv_ex(A).inverse @ B if left else B @ inv_ex(A).inverse
    return _SOLVE_EX(result, new_leaf(info))


def _cholesky_info(a: np.ndarray) -> np.ndarray:
    """LAPACK potrf's info (int32): 1 + the order of the first leading minor that is not positive
    definite (its pivot <= 0 or nan), 0 for a positive-definite matrix. Column by column."""
    xp = namespace(a)
    work = np.tril(a).reshape((math.prod(a.shape[:-2]),) + a.shape[-2:]).astype(a.dtype, copy=True)
    info = xp.zeros(work.shape[0], dtype=np.int32)
    for j in range(a.shape[-1]):
        pivot = work[:, j, j] - (work[:, j, :j] ** 2).sum(-1)
        bad = (info == 0) & ~(pivot > 0)
        info = xp.where(bad, j + 1, info)
        root = xp.sqrt(xp.where(pivot > 0, pivot, 1))
        work[:, j, j] = root
        done = (work[:, j + 1:, :j] @ work[:, j, :j, None])[..., 0]  # the columns before j's part
        work[:, j + 1:, j] = (work[:, j + 1:, j] - done) / root[:, None]
    return info.reshape(a.shape[:-2])


@autocast_op("linalg.cholesky_ex")
def cholesky_ex(input: Tensor, *, upper: bool = False,  # noqa: N803
                check_errors: bool = False) -> tuple[Tensor, Tensor]:
    """The named tuple (L, info) of `cholesky`: info (int32) is 0 for a positive-definite matrix,
    else the order of the first leading minor that is not, and L is then not the factor."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "cholesky_ex")
    _square(input, "cholesky_ex")
    info = _cholesky_info(input.data)
    if check_errors and bool((info > 0).any()):
        raise LinAlgError(f"linalg.cholesky_ex: The factorization could not be completed because the input "
                          f"is not positive-definite (the leading minor of order {_first_failure(info)} is "
                          f"not positive-definite).")
    if not bool((info > 0).any()):
        return _CHOLESKY_EX(cholesky(input, upper=upper), new_leaf(info))
    return _CHOLESKY_EX(new_leaf(np.full_like(input.data, np.nan)), new_leaf(info))


@autocast_op("linalg.cond")
def cond(input: Tensor, p: Any = None) -> Tensor:  # noqa: N803
    """The condition number of A in the norm `p`: the ratio of the largest to the smallest singular
    value for p = None or 2 (its inverse for -2), else norm(A, p) * norm(inv(A), p) ('fro',
    'nuc', inf, -inf, 1, -1; square A). inf for a singular matrix."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "cond")
    _matrices(input, "cond")
    if input.numel() == 0:  # an empty matrix is perfectly conditioned: 0, as PyTorch gives it
        return _sum(input.detach(), (-2, -1))
    if p is None or p in (2, -2):
        s = svdvals(input)
        largest, smallest = s[..., 0], s[..., -1]
        with np.errstate(divide="ignore"):
            return smallest / largest if p == -2 else largest / smallest
    if p not in ("fro", "nuc", math.inf, -math.inf, 1, -1):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    _square(input, "cond")
    inverse, info = inv_ex(input)
    singular = info.data > 0
    if not bool(singular.any()):
        return matrix_norm(input, p) * matrix_norm(inverse, p)
    # A singular matrix's condition number is inf, as PyTorch gives it (its nan inverse set aside).
    inverse = inverse.masked_fill(new_leaf(singular[..., None, None]), 0)
    return (matrix_norm(input, p) * matrix_norm(inverse, p)).masked_fill(new_leaf(singular), math.inf)


@autocast_op("linalg.vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of x and y along `dim`, broadcasting the other dimensions: sum(conj(x) * y, dim)
    (x conjugated when complex, as PyTorch's)."""
    return ((x.conj() if x.is_complex() else x) * y).sum(dim)


@autocast_op("linalg.tensorinv")
def tensorinv(input: Tensor, ind: int = 2) -> Tensor:  # noqa: N803
    """The tensor X with tensordot(X, A, ind) the identity: A's first `ind` dimensions flattened
    against the others into a square matrix, inverted, and reshaped to shape[ind:] + shape[:ind]."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "tensorinv")
    if ind <= 0:
        raise ArgumentValueError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but "
                                 f"got {ind}")
    rows, cols = input.shape[:ind], input.shape[ind:]
    if math.prod(rows) != math.prod(cols):
        raise ShapeError(f"linalg.tensorinv: Expected self to satisfy the requirement "
                         f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {math.prod(cols)} != "
                         f"{math.prod(rows)} (A of shape {input.shape}, ind={ind})")
    return inv(input.reshape(math.prod(rows), math.prod(cols))).reshape(*cols, *rows)


@autocast_op("linalg.tensorsolve")
def tensorsolve(input: Tensor, other: Tensor, dims: Sequence[int] | None = None) -> Tensor:  # noqa: N803
    """X with tensordot(A, X, X.ndim) = B: A's dimensions `dims` (if given) moved to the end,
    then A seen as a matrix of B.numel() rows, solved, and X shaped as A's last dimensions."""
    if dims is not None:
        dims = [d % input.ndim for d in dims]
        input = input.permute(*[d for d in range(input.ndim) if d not in dims], *dims)  # noqa: N806
    result_shape = input.shape[other.ndim:]
    rows = math.prod(other.shape)
    # Only the sizes' products must agree (as in PyTorch): B is read in A's row order.
    if math.prod(result_shape) != rows:
        raise ShapeError(f"linalg.tensorsolve: Expected self to satisfy the requirement "
                         f"prod(self.shape[other.ndim:]) == prod(other.shape), but got "
                         f"{math.prod(result_shape)} != {rows} (A of shape {input.shape}, B of shape "
                         f"{other.shape})")
    return solve(input.reshape(rows, rows), other.reshape(rows)).reshape(*result_shape)


@autocast_op("linalg.householder_product")
def householder_product(input: Tensor, tau: Tensor) -> Tensor:  # noqa: N803
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, v_i the i-th column of A
    below the diagonal with a 1 on it (LAPACK's orgqr). Composed of matrix products, so both A
    and tau get gradients."""
    op = "linalg.householder_product"
    _householder_checks(input, tau, op)
    m, n = input.shape[-2:]
    k = tau.shape[-1]
    if m < n:
        raise ShapeError(f"torch.{op}: input.shape[-2] must be greater than or equal to input.shape[-1] "
                         f"(input of shape {input.shape})")
    if n < k:
        raise ShapeError(f"torch.{op}: input.shape[-1] must be greater than or equal to tau.shape[-1] "
                         f"(input of shape {input.shape}, tau of shape {tau.shape})")
    if tau.dtype != input.dtype:
        raise RuntimeError(f"torch.{op}: tau dtype {tau.dtype} does not match input dtype {input.dtype}")
    _lapack_dtype(input, f"torch.{op}", "input")
    eye = new_leaf(np.eye(m, dtype=input.data.dtype, like=input.data))
    if k == 0:  # no reflectors: the identity's first n columns, still the op's output (as PyTorch's)
        return _constant_of(eye.expand(*input.shape[:-2], m, m).data[..., :n].copy(),
                            "householder_product", input, tau)
    columns = _reflectors(input, k)  # v_i as columns
    q = eye.expand(*input.shape[:-2], m, m)
    for i in range(k):
        v = columns[..., :, i:i + 1]
        q = q - (q @ v) * tau[..., i, None, None] @ _adjoint(v)
    return q[..., :, :n]


def _cholesky_solve(b: np.ndarray, factor: np.ndarray, upper: bool) -> np.ndarray:
    """(L L^H)^-1 b from the triangle of `factor` (U^H U with `upper`): LAPACK's potrs."""
    lower = _h(np.triu(factor)) if upper else np.tril(factor)
    return _solve_quietly(_h(lower), _solve_quietly(lower, b))


@autocast_op("cholesky_solve")
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """X with (L L^T) X = B (U^T U X = B with `upper`), L the Cholesky factor (its triangle read).
    d/dB = cholesky_solve(G, L); with C = d/dB X^T + X d/dB^T, d/dL = -C L (-U C with `upper`),
    PyTorch's formula, which treats L as a full matrix."""
    if (input2.ndim < 2 or input2.shape[-1] != input2.shape[-2] or input.ndim < 2
            or input.shape[-2] != input2.shape[-1]):
        raise ShapeError(f"cholesky_solve: Incompatible matrix sizes: B of shape {input.shape} and L of "
                         f"shape "
                         f"{input2.shape} (L must be a square matrix with as many rows as B)")
    if input2.data.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"cholesky_solve: not implemented for {input2.dtype} tensors (L of shape "
                                    f"{input2.shape}); it takes float32 or float64, as in PyTorch")
    if input.dtype != input2.dtype:
        raise RuntimeError(f"cholesky_solve: Expected B and L to have the same dtype, but found B of dtype "
                           f"{input.dtype} and L of dtype {input2.dtype}")
    x = _cholesky_solve(input.data, input2.data, upper)

    def vjp_b(grad: np.ndarray) -> np.ndarray:
        return _cholesky_solve(grad, input2.data, upper)

    def vjp_l(grad: np.ndarray) -> np.ndarray:
        common = _cholesky_solve(grad, input2.data, upper) @ _h(x)
        common = common + _h(common)
        return -(input2.data @ common) if upper else -(common @ input2.data)

    return record(x, "cholesky_solve", (input, input2), _pytorch_vjp(vjp_b, input),
                  _pytorch_vjp(vjp_l, input2), saved=(), graph_vjp=partial(_cholesky_solve_graph, upper))


def _cholesky_solve_graph(upper: bool, grad: Tensor, out: Tensor, B: Tensor,  # noqa: N803
                          L: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    def formula(grad: Tensor) -> tuple[Tensor, Tensor]:
        grad_b = cholesky_solve(grad, L, upper)
        common = grad_b @ out.mH
        common = common + common.mH
        return grad_b, -(L @ common) if upper else -(common @ L)

    return _pytorch_graph(formula, grad, B, L)


@autocast_op("cholesky_inverse")
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """(L L^T)^-1 (or (U^T U)^-1 with `upper`) from its Cholesky factor. With C = X (G + G^T) X,
    d/dL = -C L (-U C with `upper`), PyTorch's formula."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "cholesky_inverse")
    _square(input, "cholesky_inverse")
    eye = np.broadcast_to(np.eye(input.shape[-1], dtype=input.data.dtype, like=input.data), input.shape)
    if input.data.dtype.kind == "c":
        out = _potri(eye, input.data, upper)
    else:
        out = _cholesky_solve(eye, input.data, upper)

    def vjp(grad: np.ndarray) -> np.ndarray:
        common = out @ (grad + _h(grad)) @ out
        return -(input.data @ common) if upper else -(common @ input.data)

    return record(out, "cholesky_inverse", (input,), _pytorch_vjp(vjp, input), saved=(),
                  graph_vjp=partial(_cholesky_inverse_graph, upper))


def _potri(eye: np.ndarray, factor: np.ndarray, upper: bool) -> np.ndarray:
    """(L L^H)^-1 from a complex factor's triangle as LAPACK's potri (and so PyTorch) computes it.

    potri inverts the triangle M = L^-1, then forms M^H M (M M^H with `upper`) reading the real
    part of M's diagonal in the left factor (the right one with `upper`) and keeping the real part of
    the result's diagonal but for its last element. For a Cholesky factor (a real diagonal) this is
    the inverse itself; PyTorch returns potri's numbers for any other input too, and so does this
    (those of its unblocked algorithm: LAPACK's blocked one, for matrices past its block size of 64,
    rounds such a diagonal differently again).
    """
    m = _solve_quietly(_triangle(factor, upper, False), eye)
    diagonal = np.diagonal(m, 0, -2, -1)
    m_real = m - 1j * _diag_embed(diagonal.imag)  # (M with the real part of its diagonal)
    product = m @ _h(m_real) if upper else _h(m_real) @ m
    side = np.tril(product, -1) if not upper else _h(np.triu(product, 1))  # the strict lower triangle
    diagonal = np.diagonal(product, 0, -2, -1).copy()
    diagonal[..., :-1] = diagonal[..., :-1].real
    return side + _h(side) + _diag_embed(diagonal)


def _cholesky_inverse_graph(upper: bool, grad: Tensor, out: Tensor, L: Tensor) -> tuple[Tensor]:  # noqa: N803
    def formula(grad: Tensor) -> tuple[Tensor]:
        common = out @ (grad + grad.mH) @ out
        return (-(L @ common) if upper else -(common @ L),)

    return _pytorch_graph(formula, grad, L)


@autocast_op("triangular_solve")
def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False) -> tuple[Tensor, Tensor]:
    """`torch.triangular_solve`: the named tuple (solution, cloned_coefficient) of A X = b (A^T X =
    b with `transpose`), upper triangular by default."""
    _deprecated("triangular_solve", "linalg.solve_triangular")
    a = A.mT if transpose else A
    solution = solve_triangular(a, input, upper=upper != transpose, unitriangular=unitriangular)
    return _TRIANGULAR_SOLVE(solution, A.clone())


@autocast_op("torch.lu")
def legacy_lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:  # noqa: N803
    """`torch.lu`: (LU, pivots) as `lu_factor` gives them (a singular matrix too), and info as a
    third with `get_infos`."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "legacy_lu")
    _deprecated("lu", "linalg.lu_factor / linalg.lu_factor_ex")
    LU, pivots, info = _lu_factor(A, pivot, check_errors=False, op="lu")  # noqa: N806
    return (LU, pivots, info) if get_infos else (LU, pivots)


@autocast_op("torch.cholesky")
def legacy_cholesky(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """`torch.cholesky` (deprecated for `linalg.cholesky`): L, or U = L^T with `upper`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "legacy_cholesky")
    _deprecated("cholesky", "linalg.cholesky")
    return cholesky(input, upper=upper)


# --- LAPACK's own names: geqrf, orgqr, ormqr, and the LDL^T factorization -------------------------

_LAPACK_DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _lapack_dtype(t: Tensor, op: str, name: str) -> None:
    """Raise PyTorch's NotImplementedError for a dtype its LAPACK kernels lack (all but float32,
    float64, complex64 and complex128)."""
    if t.data.dtype not in _LAPACK_DTYPES:
        raise UnsupportedDtypeError(f"{op}: not implemented for {t.dtype} ({name} of shape {t.shape}); "
                                    "it takes float32, float64, complex64 or complex128")


def _no_derivative(op: str, error: type[Exception] = RuntimeError) -> Any:
    """A VJP that refuses: the op is recorded (its output requires grad, as PyTorch's does), but
    PyTorch has no derivative for it, so backward through it raises."""
    def vjp(grad: np.ndarray) -> np.ndarray:
        raise error(f"the derivative for '{op}' is not implemented (as in PyTorch)")
    return vjp


@autocast_op("geqrf")
def geqrf(input: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002 - PyTorch's name
    """LAPACK's geqrf: the named tuple (a, tau) of the QR decomposition in compact form, R on and
    above a's diagonal, the Householder vectors v_i below it (their leading 1 implicit) and tau
    their scales, Q = H_1 ... H_k with H_i = I - tau_i v_i v_i^H (k = min(m, n); `orgqr` and
    `ormqr` read this form). Batched; no derivative (backward raises NotImplementedError, as
    PyTorch's)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, "geqrf")
    if input.ndim < 2:
        raise ShapeError(f"torch.geqrf: input must have at least 2 dimensions, got shape {input.shape}")
    _lapack_dtype(input, "torch.geqrf", "input")
    # numpy's mode="raw" is geqrf's output as LAPACK leaves it: column-major, so transposed here
    reflectors, tau = namespace(input.data).linalg.qr(input.data, mode="raw")
    a = reflectors.swapaxes(-1, -2).copy()
    refuse = _no_derivative("geqrf", NotImplementedError)
    return return_types.geqrf(record(a, "geqrf", (input,), refuse, saved=()),
                              record(tau, "geqrf", (input,), refuse, saved=()))


def _householder_checks(input: Tensor, tau: Tensor, op: str) -> None:  # noqa: A002
    """PyTorch's checks on the (input, tau) pair of geqrf's compact form."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(input, op)
    if input.ndim < 2:
        raise ShapeError(f"torch.{op}: input must have at least 2 dimensions, got shape {input.shape}")
    if input.ndim - tau.ndim != 1:
        raise ShapeError(f"torch.{op}: Expected tau to have one dimension less than input, but got tau.ndim "
                         f"equal to {tau.ndim} and input.ndim is equal to {input.ndim}")
    if tau.shape[:-1] != input.shape[:-2]:
        raise ShapeError(f"torch.{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
                         f"got {list(tau.shape[:-1])} (input of shape {input.shape})")


def _same_dtype(input: Tensor, other: Tensor, op: str, name: str) -> None:  # noqa: A002
    if input.dtype != other.dtype:
        raise RuntimeError(f"torch.{op}: Expected input and {name} to have the same dtype, but input has "
                           f"dtype {input.dtype} and {name} has dtype {other.dtype}")


@autocast_op("orgqr")
def orgqr(input: Tensor, tau: Tensor) -> Tensor:  # noqa: A002
    """`torch.orgqr`: the first n columns of Q = H_1 ... H_k from geqrf's (a, tau), LAPACK's
    orgqr under its own name (`householder_product`). Differentiable in input and tau."""
    return householder_product(input, tau)


def _reflectors(input: Tensor, k: int) -> Tensor:  # noqa: A002
    """The Householder vectors v_1 ... v_k of geqrf's compact form as columns: input's first k
    columns below the diagonal, 1 on it, 0 above (so the gradient reaches only what is read)."""
    m = input.shape[-2]
    below = new_leaf(np.tri(m, k, -1, dtype=bool, like=input.data))
    unit = new_leaf(np.eye(m, k, dtype=input.data.dtype, like=input.data))
    return input[..., :, :k].masked_fill(~below, 0) + unit


@autocast_op("ormqr")
def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,  # noqa: A002
          transpose: bool = False) -> Tensor:
    """LAPACK's ormqr: Q C (Q^H C with `transpose`, C Q or C Q^H with left=False) for Q = H_1 ...
    H_k the m x m product of geqrf's reflectors (input m x n, k = min(m, n) = tau.shape[-1]) and
    C = other, without forming Q: each H_i = I - tau_i v_i v_i^H is applied to C in turn.
    Composed of tensor ops, so input (below its diagonal), tau and other get gradients."""
    _householder_checks(input, tau, "ormqr")
    if other.ndim < 2:
        raise ShapeError(f"torch.ormqr: other must have at least 2 dimensions, got shape {other.shape}")
    side = -2 if left else -1
    m, n = input.shape[-2:]
    if other.shape[side] != m:
        raise ShapeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2] (other of shape "
                         f"{other.shape}, input of shape {input.shape})")
    if tau.shape[-1] != min(m, n):
        raise ShapeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], "
                         f"input.shape[-1]) (tau of shape {tau.shape}, input of shape {input.shape})")
    if other.ndim != input.ndim:
        raise ShapeError(f"torch.ormqr: Expected other to have the same number of dimensions as input, but "
                         f"got other.ndim equal to {other.ndim} and input.ndim is equal to {input.ndim}")
    if other.shape[:-2] != input.shape[:-2]:
        raise ShapeError(f"torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], "
                         f"but got {list(other.shape[:-2])} (input of shape {input.shape})")
    _same_dtype(input, tau, "ormqr", "tau")
    _same_dtype(input, other, "ormqr", "other")
    _lapack_dtype(input, "torch.ormqr", "input")
    k = tau.shape[-1]
    columns = _reflectors(input, k)
    scales = tau.conj() if transpose and tau.is_complex() else tau
    # Q C = H_1 (H_2 (... H_k C)) and C Q^H = C H_k^H ... H_1^H start from the last reflector
    order = range(k - 1, -1, -1) if left != transpose else range(k)
    out = other.clone()
    for i in order:
        v = columns[..., :, i:i + 1]
        s = scales[..., i, None, None]
        out = out - v @ (s * (_adjoint(v) @ out)) if left else out - ((out @ v) * s) @ _adjoint(v)
    return out


_ALPHA = (1 + math.sqrt(17)) / 8  # Bunch and Kaufman's pivoting threshold, as LAPACK's sytf2


def _size(x: Any) -> Any:
    """LAPACK's magnitude for pivot searches: |re| + |im| for complex numbers (cabs1)."""
    return abs(x.real) + abs(x.imag) if np.iscomplexobj(x) else abs(x)


def _iamax(x: np.ndarray) -> int:
    """LAPACK's i?amax: the first index of the largest `_size` (a NaN never wins, unless first)."""
    size = _size(x)
    if size.size == 0 or np.isnan(size[0]):
        return 0
    return int(np.argmax(np.where(np.isnan(size), -np.inf, size)))


def _bunch_kaufman_pivot(a: np.ndarray, k: int, hermitian: bool) -> tuple[int, int, bool]:
    """(kp, step, singular) for column k of sytf2: step 1 or 2 (the size of D's block), kp the row
    and column to swap in (k's for step 1, k + 1's for step 2), and whether the column is zero."""
    n = a.shape[0]
    absakk = abs(a[k, k].real) if hermitian else _size(a[k, k])
    imax = k + 1 + _iamax(a[k + 1:, k]) if k < n - 1 else k
    colmax = _size(a[imax, k]) if k < n - 1 else 0.0
    if np.fmax(absakk, colmax) == 0:  # (the fmax of MKL's sytrf: a NaN diagonal is not "zero")
        return k, 1, True
    if absakk >= _ALPHA * colmax:
        return k, 1, False
    # the largest off-diagonal magnitude in row (and column) imax
    rowmax = _size(a[imax, k + _iamax(a[imax, k:imax])])
    if imax < n - 1:
        rowmax = max(rowmax, _size(a[imax + 1 + _iamax(a[imax + 1:, imax]), imax]))
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1, False
    diagonal = abs(a[imax, imax].real) if hermitian else _size(a[imax, imax])
    return (imax, 1, False) if diagonal >= _ALPHA * rowmax else (imax, 2, False)


def _ldl_swap(a: np.ndarray, k: int, kk: int, kp: int, step: int, hermitian: bool) -> None:
    """Swap rows and columns kk and kp of the trailing lower triangle (sytf2's interchange)."""
    flip = np.conj if hermitian else (lambda x: x)
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    middle = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = flip(a[kp, kk + 1:kp])
    a[kp, kk + 1:kp] = flip(middle)
    a[kp, kk] = flip(a[kp, kk])
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if step == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _ldl_update(a: np.ndarray, k: int, step: int, hermitian: bool) -> None:
    """Eliminate the pivot block at k: the trailing lower triangle minus W D^-1 W^H, then W D^-1
    (columns of L) stored in its place, with sytf2's (hetf2's) formulas."""
    conj = np.conj if hermitian else (lambda x: x)
    if step == 1:
        if hermitian:
            a[k, k] = a[k, k].real
        r1 = 1 / (a[k, k].real if hermitian else a[k, k])
        w = a[k + 1:, k]
        a[k + 1:, k + 1:] += np.tril(np.multiply.outer(w, -r1 * conj(w)))
        a[k + 1:, k] = w * r1
    else:
        if hermitian:
            d = abs(a[k + 1, k])
            d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
            d21 = a[k + 1, k] / d
            d = (1 / (d11 * d22 - 1)) / d
            wk = d * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
            wkp1 = d * (d22 * a[k + 2:, k + 1] - np.conj(d21) * a[k + 2:, k])
        else:
            d21 = a[k + 1, k]
            d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
            d21 = (1 / (d11 * d22 - 1)) / d21
            wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
            wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
        block = a[k + 2:, k + 2:]
        block[...] = block - np.tril(np.multiply.outer(a[k + 2:, k], conj(wk))) \
            - np.tril(np.multiply.outer(a[k + 2:, k + 1], conj(wkp1)))
        a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
    if hermitian:  # (the diagonal of a Hermitian matrix stays real)
        rest = np.arange(k, a.shape[0])
        a[rest, rest] = a[rest, rest].real


def _sytf2(a: np.ndarray, hermitian: bool) -> tuple[np.ndarray, int]:
    """LAPACK's unblocked Bunch-Kaufman factorization (sytf2, hetf2 when `hermitian`) of the lower
    triangle of one matrix, in place: returns (pivots, info). The blocked sytrf gives the same
    factors for n up to its block size (64), and sytf2's steps for every n."""
    n = a.shape[0]
    pivots = np.zeros(n, dtype=np.int32)
    info, k = 0, 0
    while k < n:
        kp, step, singular = _bunch_kaufman_pivot(a, k, hermitian)
        if singular:
            info = info or k + 1
            if hermitian:
                a[k, k] = a[k, k].real
        else:
            if kp != k + step - 1:
                _ldl_swap(a, k, k + step - 1, kp, step, hermitian)
            _ldl_update(a, k, step, hermitian)
        pivots[k:k + step] = kp + 1 if step == 1 else -(kp + 1)
        k += step
    return pivots, info


def _ldl_checks(A: Tensor, op: str) -> None:  # noqa: N803
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, op)
    if A.ndim < 2:
        raise ShapeError(f"torch.linalg.{op}: The input tensor A must have at least 2 dimensions, got shape "
                         f"{A.shape}")
    if A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"torch.linalg.{op}: A must be batches of square matrices, but they are "
                         f"{A.shape[-2]} by {A.shape[-1]} matrices (shape {A.shape})")
    if A.data.dtype.kind not in "fc":
        raise RuntimeError(f"torch.linalg.{op}: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype}")
    _lapack_dtype(A, f"torch.linalg.{op}", "A")


def _ldl_factor(A: Tensor, hermitian: bool, check_errors: bool, op: str) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """(LD, pivots, info) of sytf2 on each matrix of A, computed on the host (there is no GPU
    sytrf in CuPy) and moved back to A's device."""
    _ldl_checks(A, op)
    xp = namespace(A.data)
    n = A.shape[-1]
    ld = np.tril(to_numpy(A.data)).reshape(math.prod(A.shape[:-2]), n, n)  # (the upper triangle: not read)
    pivots = np.zeros(ld.shape[:2], dtype=np.int32)
    info = np.zeros(ld.shape[0], dtype=np.int32)
    for b in range(ld.shape[0]):
        pivots[b], info[b] = _sytf2(ld[b], hermitian and ld.dtype.kind == "c")
    if check_errors and bool((info > 0).any()):
        first = _first_failure(info)
        raise LinAlgError(f"torch.linalg.{op}: The factorization could not be completed because the input is "
                          f"singular: D[{first - 1}, {first - 1}] is a zero pivot (info = {first}, A of "
                          f"shape {A.shape}). Use linalg.ldl_factor_ex to get the factors anyway")
    LD = record(xp.asarray(ld.reshape(A.shape)), "ldl_factor", (A,),  # noqa: N806
                _no_derivative("linalg_ldl_factor_ex"), saved=())
    pivots, info = pivots.reshape(A.shape[:-1]), info.reshape(A.shape[:-2])
    return LD, new_leaf(xp.asarray(pivots)), new_leaf(xp.asarray(info))


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False,  # noqa: N803
                  check_errors: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    """The named tuple (LD, pivots, info) of `ldl_factor`, with info (int32, per matrix) = 1 + the
    index of the first zero pivot of D (0 for none) instead of an error."""
    return return_types.linalg_ldl_factor_ex(*_ldl_factor(A, hermitian, check_errors, "ldl_factor_ex"))


def ldl_factor(A: Tensor, *, hermitian: bool = False) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The named tuple (LD, pivots) of A = L D L^T (L D L^H with `hermitian`, for complex A) of a
    symmetric matrix, from its lower triangle, with Bunch-Kaufman pivoting: LAPACK's sytrf (hetrf),
    packed as it leaves them. D is block diagonal with 1x1 and 2x2 blocks, stored with L's
    multipliers in LD's lower triangle (the upper one zero); pivots (int32, 1-based) are the row
    and column swaps, negative in pairs for a 2x2 block. A singular D raises LinAlgError. Batched;
    no derivative (backward raises, as PyTorch's)."""
    LD, pivots, _ = _ldl_factor(A, hermitian, True, "ldl_factor")  # noqa: N806
    return return_types.linalg_ldl_factor(LD, pivots)


def _sytrs(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray, hermitian: bool) -> None:
    """LAPACK's sytrs (hetrs) for the lower triangle, in place on b: X = A^-1 B for A = L D L^T
    (L D L^H) from sytrf's LD and pivots."""
    n = ld.shape[0]
    conj = np.conj if hermitian else (lambda x: x)
    k = 0
    while k < n:  # L D Y = B: the swaps and L's columns forward, then D's blocks
        second = k if pivots[k] > 0 else k + 1
        kp = abs(int(pivots[k])) - 1
        b[[second, kp]] = b[[kp, second]]
        for j in range(k, second + 1):
            b[second + 1:] -= np.multiply.outer(ld[second + 1:, j], b[j])
        if second == k:
            b[k] /= ld[k, k].real if hermitian else ld[k, k]
        else:
            akm1k = ld[k + 1, k]
            akm1, ak = ld[k, k] / conj(akm1k), ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / conj(akm1k), b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
        k = second + 1
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H X = Y): backward, undoing the swaps
        first = k if pivots[k] > 0 else k - 1
        for j in range(first, k + 1):
            b[j] -= conj(ld[k + 1:, j]) @ b[k + 1:]
        kp = abs(int(pivots[k])) - 1
        b[[k, kp]] = b[[kp, k]]
        k = first - 1


def _ldl_solve_checks(LD: Tensor, pivots: Tensor, B: Tensor) -> None:  # noqa: N803
    _ldl_checks(LD, "ldl_solve")
    if not isinstance(B, Tensor):
        raise not_a_tensor(B, "ldl_solve")
    if B.dtype != LD.dtype:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected b and A to have the same dtype, but found b of "
                           f"type {B.dtype} and A of type {LD.dtype} instead.")
    if B.ndim < 2:
        raise IndexError(f"torch.linalg.ldl_solve: B must have at least 2 dimensions (Dimension out of "
                         f"range), got shape {B.shape}")
    if B.shape[-2] != LD.shape[-1]:
        raise ShapeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is "
                         f"{LD.shape[-1]} by {LD.shape[-1]} but each b matrix is {B.shape[-2]} by "
                         f"{B.shape[-1]}")
    if pivots.shape != LD.shape[:-1]:
        raise ShapeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, "
                         f"but got pivots with shape {list(pivots.shape)} instead (LD of shape {LD.shape})")
    if pivots.data.dtype.kind not in "iu":
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got {pivots.dtype}")


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:  # noqa: N803
    """X with A X = B for A given by `ldl_factor`'s (LD, pivots) (LAPACK's sytrs, hetrs with
    `hermitian`), the batch dimensions of LD and B broadcast. Computed on the host; no derivative
    (backward raises, as PyTorch's)."""
    _ldl_solve_checks(LD, pivots, B)
    n = LD.shape[-1]
    piv = to_numpy(pivots.data).astype(np.int64)
    if piv.size and (abs(piv).min() < 1 or abs(piv).max() > n):
        bound = ">= 1" if abs(piv).min() < 1 else "<= LD.size(-2)"
        raise RuntimeError(f"Pivots given to ldl_solve must all satisfy |pivot| {bound} (LD of shape "
                           f"{LD.shape}). Did you properly pass the result of ldl_factor?")
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    count = math.prod(batch)
    ld = np.broadcast_to(to_numpy(LD.data), batch + (n, n)).reshape(count, n, n)
    piv = np.broadcast_to(piv, batch + (n,)).reshape(count, n)
    x = np.array(np.broadcast_to(to_numpy(B.data), batch + B.shape[-2:])).reshape(count, *B.shape[-2:])
    for i in range(x.shape[0]):
        _sytrs(ld[i], piv[i], x[i], hermitian and x.dtype.kind == "c")
    refuse = _no_derivative("linalg_ldl_solve")
    return record(namespace(B.data).asarray(x.reshape(batch + B.shape[-2:])), "ldl_solve", (LD, B),
                  refuse, refuse, saved=())


# --- randomized low-rank decompositions (torch.svd_lowrank, torch.pca_lowrank) ----------------------


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:  # noqa: N803
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M (Halko, Martinsson
    and Tropp 2009, algorithm 4.4): a random projection, then `niter` subspace iterations, each
    re-orthonormalized by a QR. The projection is drawn through tg's default generator."""
    dtype = A.dtype if A.data.dtype.kind in "fc" else np.float32
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)  # noqa: N806

    def times(x: Tensor, adjoint: bool) -> Tensor:  # (A - M) x or (A - M)^H x, without forming A - M
        product = (_adjoint(A) if adjoint else A) @ x
        return product if M is None else product - (_adjoint(M) if adjoint else M) @ x

    Q = qr(times(R, False)).Q  # noqa: N806
    for _ in range(niter):
        Q = qr(times(Q, True)).Q  # noqa: N806
        Q = qr(times(Q, False)).Q  # noqa: N806
    return Q


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,  # noqa: N803 - PyTorch's names
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """(U, S, V), a randomized rank-q SVD: A - M (A alone without M; M broadcasts to A) is close to
    U diag(S) V^H, U (m, q), S (q,), V (n, q), by Halko et al.'s algorithm 5.1: an orthonormal basis
    Q of A's range from random projections (`niter` subspace iterations), then the exact SVD of the
    small Q^H A. Random: seed tg's generator for repeatable results. Differentiable (it is made of
    matmul, qr and svd)."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "svd_lowrank")
    q, niter = 6 if q is None else q, 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)  # noqa: N806
    if m < n:  # the algorithm wants a tall matrix: that of A^H, with U and V swapped at the end
        A, M = _adjoint(A), None if M is None else _adjoint(M)  # noqa: N806
    Q = _approximate_basis(A, q, niter, M)  # noqa: N806
    B = _adjoint(Q) @ A  # noqa: N806
    if M is not None:
        B = B - _adjoint(Q) @ M  # noqa: N806
    U, S, Vh = svd(B, full_matrices=False)  # noqa: N806
    U, V = Q @ U, _adjoint(Vh)  # noqa: N806
    return (V, S, U) if m < n else (U, S, V)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,  # noqa: N803 - PyTorch's name
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V) of `svd_lowrank` for A less its column means (A's rows the samples, its columns the
    features; `center=False` takes A as centered): V's columns are the principal directions and
    S^2 / (m - 1) the variances along them. q defaults to min(6, m, n)."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(A, "pca_lowrank")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter)
