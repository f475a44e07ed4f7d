"""Matrix multiplication through NumPy's BLAS (tutorial chapter 8).

`a @ b` follows `torch.matmul`: 1-D operands are vectors, 2-D are matrices, and more
dimensions are batches of matrices whose batch dimensions broadcast. The gradients are two
more matmuls, `grad @ b.T` and `a.T @ grad`, with the transposes passed to BLAS as views
(no copies), and broadcast batch dimensions summed back by `record`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from tensorgrad import checks, movement
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import CROSSED, record, summed
from tensorgrad.checks import ShapeError, UnsupportedDtypeError, user_stacklevel
from tensorgrad.device import namespace, refuse_mixed_devices
from tensorgrad.dtypes import float16, narrowed, promote_types
from tensorgrad.tensor import Tensor, _cast, new_leaf


def _check(a: Tensor, b: Tensor) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(
            f"matmul: both operands need at least 1 dimension, got shapes {a.shape} and {b.shape}"
        ) from None  # raised while handling numpy's less readable error
    inner_a = a.shape[-1]
    inner_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if inner_a != inner_b:
        which = "dimension -2" if b.ndim > 1 else "dimension 0"
        raise ShapeError(
            f"matmul: shapes {a.shape} and {b.shape} don't match: dimension -1 of the first "
            f"({inner_a}) must equal {which} of the second ({inner_b})"
        ) from None


def _swap(m: np.ndarray) -> np.ndarray:
    """The transpose of the last two dimensions, as a view."""
    return m.swapaxes(-1, -2)


def matmul_arrays(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """np.matmul(left, right). NumPy multiplies float16 matrices in a loop of its own, without
    BLAS: a (512, 512) product took 1.1 s, against 6 ms through float32's BLAS and one rounding
    back, which is also what PyTorch's CPU computes (both differ from it in about 1 element of
    600, by its last bit). So float16 NumPy arrays go through float32; CuPy's go to cuBLAS."""
    if left.dtype is float16 and type(left) is np.ndarray:
        return narrowed(np.matmul(left.astype(np.float32), right.astype(np.float32)), np.float16)
    return np.matmul(left, right)


def _product(left: np.ndarray, right: np.ndarray, like: np.ndarray) -> np.ndarray:
    """left @ right, laid out in memory like `like` (the operand whose gradient it is).

    For an operand that is a transposed view, such as `W.T` in `x @ W.T`, the product is
    computed transposed, `(right^T @ left^T)^T` (the same BLAS call), so that the gradient
    reaches W in W's own row-major layout: no transposing copy on the way to `W.grad`, and an
    optimizer's update then walks W and its gradient in the same order.
    """
    if left.ndim == right.ndim == 2 and like.flags.f_contiguous and not like.flags.c_contiguous:
        return matmul_arrays(right.T, left.T).T
    return matmul_arrays(left, right)


@autocast_op("matmul")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """a @ b. d/da = grad @ b^T, d/db = a^T @ grad (vectors treated as 1-row / 1-column matrices)."""
    a, b = input, other
    try:
        a_data, b_data = a._data, b._data
        same_dtype = a_data.dtype == b_data.dtype
    except AttributeError:  # not a tensor: checked only now, matmul being hot
        _check_tensors("matmul", (a, "input"), (b, "other"))
        raise
    if not same_dtype:
        raise RuntimeError(f"matmul: expected both operands to have the same dtype, got {a.dtype} "
                           f"(shape {a.shape}) and {b.dtype} (shape {b.shape})")
    try:
        out = matmul_arrays(a_data, b_data)
    except TypeError:
        refuse_mixed_devices("matmul", (a, "input"), (b, "other"))
        raise
    except ValueError:  # say which dimensions are wrong, in PyTorch's terms
        _check(a, b)
        raise ShapeError(
            f"matmul: the batch dimensions of shapes {a.shape} and {b.shape} can't be broadcast together"
        ) from None
    if a_data.ndim > 1 and b_data.ndim > 1:  # matrices (or batches of them): the common case
        return record(out, "@", (a, b),
                      lambda grad: _product(grad, _swap(b_data), like=a_data),
                      lambda grad: _product(_swap(a_data), grad, like=b_data), saved=CROSSED,
                      graph_vjp=_matmul_graph)
    return record(out, "@", (a, b), *_vector_vjps(a_data, b_data), saved=CROSSED, graph_vjp=_matmul_graph)


# PyTorch's mv, dot and vdot are kernels of their own, on no CPU autocast list: they multiply
# through matmul's body here, not through its autocast wrapper, so they keep their inputs' dtype.
_matmul_as_written = matmul.__wrapped__


def _matmul_graph(grad: Tensor, out: Tensor, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """matmul's gradients as tensor ops (a vector operand as a one-row or one-column matrix)."""
    if a.ndim == 1 and b.ndim == 1:
        return grad * b, grad * a
    if a.ndim == 1:  # (k,) @ (..., k, n) -> (..., n)
        return (b @ grad.unsqueeze(-1)).squeeze(-1), a.unsqueeze(-1) * grad.unsqueeze(-2)
    if b.ndim == 1:  # (..., m, k) @ (k,) -> (..., m)
        return grad.unsqueeze(-1) * b, (a.transpose(-1, -2) @ grad.unsqueeze(-1)).squeeze(-1)
    return grad @ b.transpose(-1, -2), a.transpose(-1, -2) @ grad


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
        ga = matmul_arrays(as_matrix(grad), _swap(b_matrix))
        return ga[..., 0, :] if a_vector else ga

    def vjp_b(grad: np.ndarray) -> np.ndarray:
        gb = matmul_arrays(_swap(a_matrix), as_matrix(grad))
        return gb[..., 0] if b_vector else gb

    return vjp_a, vjp_b


# --- matmul's fixed-rank forms: mm, bmm, mv, dot and outer ------------------------------------
# Each checks the ranks and sizes its name promises, with PyTorch's words, then is `matmul` (or,
# for outer, a broadcast product), so its gradient is matmul's.


@autocast_op("mm")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """The product of two matrices (2-D only; `matmul` broadcasts). Gradient: as matmul's."""
    a, b = input, mat2
    _require_ranks("mm", (a, "self", 2), (b, "mat2", 2))
    if a.shape[1] != b.shape[0]:
        raise ShapeError(f"mm: mat1 and mat2 shapes cannot be multiplied "
                         f"({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    return matmul(a, b)


@autocast_op("bmm")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix products of two 3-D tensors with one batch size (no broadcasting)."""
    a, b = input, mat2
    _check_tensors("bmm", (a, "input"), (b, "mat2"))
    _require_ranks("bmm", (a, "batch1", 3), (b, "batch2", 3))
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise ShapeError(f"bmm: expected size for first two dimensions of batch2 tensor to be: "
                         f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]")
    return matmul(a, b)


@autocast_op("mv")
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """A matrix times a vector: (n, m) @ (m,) gives (n,)."""
    a, v = input, vec
    _require_ranks("mv", (a, "self", 2), (v, "vec", 1))
    if a.shape[1] != v.shape[0]:
        raise ShapeError(f"mv: size mismatch, got mat ({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})")
    return _matmul_as_written(a, v)


@autocast_op("dot")
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The inner product of two 1-D tensors of one size and one dtype: a 0-d tensor."""
    _check_tensors("dot", (input, "input"), (tensor, "tensor"))
    return _vector_product(input, tensor, "dot")


@autocast_op("vdot")
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """sum(conj(a) * b) over two 1-D tensors of one size and one dtype: `dot` for real tensors."""
    _check_tensors("vdot", (input, "input"), (other, "other"))
    a, b = input, other
    if a.dtype.kind == "c":
        a = a.conj()
    return _vector_product(a, b, "vdot")


def _vector_product(a: Tensor, b: Tensor, op: str) -> Tensor:
    """a @ b for two 1-D tensors, after PyTorch's checks of their ranks, sizes and dtypes."""
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"{op}: 1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape != b.shape:
        raise ShapeError(f"{op}: inconsistent tensor size, expected tensors of the same number of "
                         f"elements, but got {a.shape[0]} and {b.shape[0]}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{op}: expected both vectors to have same dtype, but found {a.dtype} "
                           f"and {b.dtype}")
    return _matmul_as_written(a, b)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-D tensors: out[i, j] = a[i] * b[j], in their promoted dtype.
    Gradient: d/da = grad @ b, d/db = grad^T @ a (through the broadcast product)."""
    _require_ranks("outer", (input, "self", 1), (vec2, "vec2", 1))
    return input.unsqueeze(1) * vec2.unsqueeze(0)


def ger(input: Tensor, vec2: Tensor) -> Tensor:
    """PyTorch's older name for `outer`."""
    _check_tensors("ger", (input, "input"), (vec2, "vec2"))
    return outer(input, vec2)


def _check_tensors(op: str, *operands: tuple[Any, str]) -> None:
    """PyTorch's TypeError for the first (value, argument name) that is not a Tensor."""
    for position, (value, name) in enumerate(operands, 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")


def _require_ranks(op: str, *operands: tuple[Tensor, str, int]) -> None:
    """Raise PyTorch's RuntimeError unless each (tensor, name, rank) has that many dimensions."""
    words = {1: "a vector", 2: "a matrix", 3: "a 3D tensor"}
    _check_tensors(op, *((tensor, "input" if name == "self" else name) for tensor, name, _ in operands))
    for tensor, name, rank in operands:
        if tensor.ndim != rank:
            raise ShapeError(f"{op}: {name} must be {words[rank]}, got a tensor of shape {tensor.shape}")


# --- more products, composed of the ops above (so their gradients are those ops') -------------


@autocast_op("tensordot")
def tensordot(a: Tensor, b: Tensor, dims: int | Sequence[Any] = 2) -> Tensor:
    """The sum of products over the dimensions `dims` names: the last `dims` of a with the first
    `dims` of b for an int, or the pairs ([a's dims], [b's dims]). Computed as one matmul."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
        dims_a = [checks.dim(d, a.ndim, "tensordot") for d in dims_a]
        dims_b = [checks.dim(d, b.ndim, "tensordot") for d in dims_b]
    if len(dims_a) != len(dims_b):
        raise RuntimeError(f"tensordot: both dimension lists should have same length, got {dims_a} "
                           f"and {dims_b}")
    for da, db in zip(dims_a, dims_b, strict=True):
        # A size-1 dimension against a longer one broadcasts: the other side is summed over it first.
        if b.shape[db] == 1 and a.shape[da] != 1:
            a = a.sum(da, keepdim=True, dtype=a.dtype)
        elif a.shape[da] == 1 and b.shape[db] != 1:
            b = b.sum(db, keepdim=True, dtype=b.dtype)
        elif a.shape[da] != b.shape[db]:
            raise ShapeError(f"tensordot: contracted dimensions need to match, but first has size "
                             f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} in dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    inner = math.prod(a.shape[d] for d in dims_a)
    left = a.permute(*free_a, *dims_a).reshape(math.prod(a.shape[d] for d in free_a), inner)
    right = b.permute(*dims_b, *free_b).reshape(inner, math.prod(b.shape[d] for d in free_b))
    return matmul(left, right).reshape(*(a.shape[d] for d in free_a), *(b.shape[d] for d in free_b))


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of a times the whole of b, laid out block by block
    (the fewer dimensions are padded with leading 1s)."""
    _check_tensors("kron", (input, "input"), (other, "other"))
    a, b = input, other
    n = max(a.ndim, b.ndim)
    shape_a, shape_b = (1,) * (n - a.ndim) + a.shape, (1,) * (n - b.ndim) + b.shape
    # a's dimension k and b's dimension k become neighbours: (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...)
    spread_a = a.reshape(*(d for size in shape_a for d in (size, 1)))
    spread_b = b.reshape(*(d for size in shape_b for d in (1, size)))
    return (spread_a * spread_b).reshape(*(i * j for i, j in zip(shape_a, shape_b, strict=True)))


@autocast_op("cross")
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along `dim` (a and b broadcast together). Without a dim,
    the first dimension of size 3 (PyTorch's deprecated default; `linalg.cross` uses -1)."""
    _check_tensors("cross", (input, "input"), (other, "other"))
    a, b = input, other
    if a.ndim != b.ndim:  # (PyTorch broadcasts sizes, but not dimensions)
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions. Got shapes "
                           f"{a.shape} and {b.shape}")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ShapeError(f"cross: shapes {a.shape} and {b.shape} can't be broadcast together") from None
    if dim is None:
        dim = next((d for d, size in enumerate(shape) if size == 3), -1)
    dim = checks.dim(dim, len(shape), "cross")
    if a.shape[dim - len(shape) + a.ndim] != 3 or b.shape[dim - len(shape) + b.ndim] != 3:
        raise ShapeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                         f"{a.shape[dim - len(shape) + a.ndim]} and {b.shape[dim - len(shape) + b.ndim]}")
    a, b = a.expand(*shape), b.expand(*shape)
    a1, a2, a3 = a.unbind(dim)
    b1, b2, b3 = b.unbind(dim)
    return movement.stack([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1], dim)


@autocast_op("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M):
    (..., P, R), batch dimensions broadcast. Computed from the differences, not PyTorch's
    matmul shortcut (whatever `compute_mode` asks), so distances near 0 stay exact. Gradient: the
    norm's (0 at distance 0)."""
    _check_tensors("cdist", (x1, "x1"), (x2, "x2"))
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, "
                           f"X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                         f"X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, dim=-1)


_CDIST_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


@autocast_op("pdist")
def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002
    """The p-norm distance between each pair of rows i < j of an (N, M) input, in the order
    (0, 1), (0, 2), ..., (N - 2, N - 1): N (N - 1) / 2 distances. Gradient: `cdist`'s."""
    _check_tensors("pdist", (input, "input"))
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input.data.dtype.kind != "f":  # (complex ones too, as PyTorch's)
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype} (input of shape "
                           f"{input.shape})")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    rows, cols = np.triu_indices(input.shape[0], k=1)
    return cdist(input, input, p)[rows, cols]


@autocast_op("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y_o = x1 A_o x2 + b_o for each output o: weight (out, in1, in2), inputs (..., in1) and
    (..., in2). One einsum; its gradient is einsum's."""
    operands = {"input1": input1, "input2": input2, "weight": weight, "bias": bias}
    _check_tensors("bilinear", *((t, name) for name, t in operands.items() if t is not None))
    if len({t.dtype for t in operands.values() if t is not None}) > 1:
        named = ", ".join(f"{name}: {t.dtype}" for name, t in operands.items() if t is not None)
        raise RuntimeError(f"bilinear: all tensors must have the same dtype, got {named}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


@autocast_op("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2), input broadcast; with beta = 0 input is ignored (its
    nan and inf too), as in PyTorch."""
    _same_dtype("addmm", (input, "input"), (mat1, "mat1"), (mat2, "mat2"))
    return _added("addmm", input, mm(mat1, mat2), beta, alpha)


# --- the rest of the BLAS family: a product scaled and added to a tensor, and inner products --------
# Each is beta * input + alpha * product, composed of the products above (their gradients are
# those ops'): input broadcasts to the product's shape, never beyond it; with beta = 0 input's
# values are not read (nan and inf in it are ignored) and its gradient is 0, as in PyTorch.


@autocast_op("addmv")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat @ vec): a matrix (n, m) times a vector (m,), plus input (n,)."""
    _same_dtype("addmv", (input, "input"), (mat, "mat"), (vec, "vec"))
    return _added("addmv", input, mv(mat, vec), beta, alpha)


@autocast_op("addr")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * outer(vec1, vec2), in the three tensors' promoted dtype; for bool
    tensors, (beta and input) or (alpha and vec1[i] and vec2[j])."""
    _check_tensors("addr", (input, "input"), (vec1, "vec1"), (vec2, "vec2"))
    _require_ranks("addr", (vec1, "vec1", 1), (vec2, "vec2", 1))
    product = outer(vec1, vec2)
    dtype = promote_types(input.dtype, product.dtype)  # a 0-d input counts in full: PyTorch expands it
    product, input = _cast(product, dtype), _cast(input, dtype)
    if dtype.kind == "b":
        _check_fits("addr", input, product.shape)
        return product.logical_and(bool(alpha)).logical_or(input.logical_and(bool(beta)))
    if dtype.kind in "iu":  # an integer result takes no fraction
        for name, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, float):
                raise RuntimeError(f"addr: for integral input tensors, argument {name} must not be a "
                                   f"floating point number, got {value}")
    return _added("addr", input, product, beta, alpha)


@autocast_op("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,  # noqa: A002
            alpha: float = 1) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2): batched products (b, n, m) @ (b, m, p), plus input
    broadcast to (b, n, p)."""
    _same_dtype("baddbmm", (input, "input"), (batch1, "batch1"), (batch2, "batch2"))
    return _added("baddbmm", input, bmm(batch1, batch2), beta, alpha)


@autocast_op("addbmm")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,  # noqa: A002
           alpha: float = 1) -> Tensor:
    """beta * input + alpha * sum_b (batch1[b] @ batch2[b]): the batched products summed over the
    batch, plus input broadcast to (n, p)."""
    _same_dtype("addbmm", (input, "input"), (batch1, "batch1"), (batch2, "batch2"))
    if batch1.dtype == np.float16 and batch1.ndim == 3 and batch1.shape[0] > 0:
        return _addbmm_half(input, batch1, batch2, beta, alpha)
    # The batch sum keeps the operands' dtype (a plain sum would widen integers to int64).
    return _added("addbmm", input, bmm(batch1, batch2).sum(0, dtype=batch1.dtype), beta, alpha)


def _addbmm_half(input: Tensor, batch1: Tensor, batch2: Tensor, beta: float,  # noqa: A002
                 alpha: float) -> Tensor:
    """addbmm in float16 as PyTorch's CPU kernel: one addmm per batch into the float16 result, each
    step computed in float32 and rounded once (a float16 sum of the products would round more)."""
    products = bmm(batch1.float(), batch2.float())
    out = _added("addbmm", input.float(), products[0], beta, alpha).half()
    for k in range(1, products.shape[0]):
        out = (out.float() + (products[k] if alpha == 1 else products[k] * alpha)).half()
    return out


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """input = beta * input + alpha * (mat @ vec), in place (`Tensor.addmv_`)."""
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


def _same_dtype(op: str, *operands: tuple[Tensor, str]) -> None:
    """Raise PyTorch's errors unless the operands are Tensors of one dtype that BLAS multiplies."""
    _check_tensors(op, *operands)
    dtypes = [tensor.dtype for tensor, _ in operands]
    if len(set(dtypes)) > 1:
        named = ", ".join(f"{tensor.dtype} ({name})" for tensor, name in operands)
        raise RuntimeError(f"{op}: input tensors must have the same dtype, but got {named}")
    if dtypes[0].kind == "b":
        raise UnsupportedDtypeError(f"{op}: not implemented for bool tensors, as in PyTorch")


def _added(op: str, input: Tensor, product: Tensor, beta: float, alpha: float) -> Tensor:  # noqa: A002
    """beta * input + alpha * product, input broadcast to the product's shape (never beyond it)."""
    _check_fits(op, input, product.shape)
    if product.dtype.kind in "iu":  # PyTorch truncates the scalars for an integer product
        beta, alpha = int(beta), int(alpha)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return _ignoring(product, input)
    return product + (input if beta == 1 else input * beta)


def _check_fits(op: str, input: Tensor, shape: tuple[int, ...]) -> None:  # noqa: A002
    """Raise unless input broadcasts to `shape` (the product's) without growing it."""
    if not checks.broadcasts_to(input.shape, shape):
        raise ShapeError(f"{op}: input of shape {input.shape} can't be broadcast to the shape {shape} "
                         f"of the product")


def _ignoring(product: Tensor, input: Tensor) -> Tensor:  # noqa: A002
    """product, as `0 * input + product` without reading input (0 * nan would be nan). d/dproduct
    = 1, d/dinput = 0 (PyTorch gives input a zero gradient, not none)."""
    return record(product.data, "+", (product, input),
                  lambda grad: grad,
                  lambda grad: np.zeros_like(grad), saved=(), graph_vjp=_ignoring_graph)


def _ignoring_graph(grad: Tensor, out: Tensor, product: Tensor, input: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    return grad, new_leaf(np.zeros_like(grad.data))


def inner(input: Tensor, other: Tensor) -> Tensor:
    """sum over the last dimension of a[..., k] * b[..., k]: shape a.shape[:-1] + b.shape[:-1]; a
    product when either is 0-d. Gradient: tensordot's (or the product's)."""
    _check_tensors("inner", (input, "input"), (other, "other"))
    a, b = input, other
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.dtype != b.dtype:
        raise RuntimeError(f"inner: both inputs should have the same dtype, got {a.dtype} and {b.dtype}")
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"inner: the last dimension must match on both input tensors but got shapes "
                         f"{a.shape} and {b.shape}")
    return tensordot(a, b, ([-1], [-1]))


@autocast_op("chain_matmul")
def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of N 2-D tensors, in the cheapest order: PyTorch's deprecated form of
    `linalg.multi_dot` (which also takes vectors at the ends). Gradient: the products'."""
    from tensorgrad import linalg  # (linalg imports this module)

    warnings.warn("chain_matmul is deprecated; use linalg.multi_dot, which takes a list of two or more "
                  "tensors", UserWarning, stacklevel=user_stacklevel())
    if not matrices:
        raise RuntimeError("chain_matmul(): expected one or more matrices")
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"chain_matmul(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(m).__name__}")
        if m.ndim != 2:
            raise ShapeError(f"chain_matmul(): tensor {i} has {m.ndim} dimensions (shape {m.shape}), "
                             f"expected 2")
    if len(matrices) == 1:
        return matrices[0].clone()
    return linalg.multi_dot(matrices)


@autocast_op("addcmul")
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:  # noqa: A002
    """input + value * tensor1 * tensor2, broadcasting."""
    _check_tensors("addcmul", (input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2"))
    return input + value * tensor1 * tensor2


@autocast_op("addcdiv")
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:  # noqa: A002
    """input + value * tensor1 / tensor2, broadcasting (integer tensors refused, as in PyTorch)."""
    _check_tensors("addcdiv", (input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2"))
    if tensor1.dtype.kind in "iub" and tensor2.dtype.kind in "iub":
        raise RuntimeError("addcdiv: integer division with addcdiv is not supported; use "
                           "input + value * tensor1 // tensor2 or cast to float")
    return input + value * tensor1 / tensor2


@autocast_op("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias, as one node (PyTorch's `F.linear`; `nn.Linear` calls it).

    weight is (out_features, in_features), x is (..., in_features). d/dx = grad @ weight,
    d/dweight = grad^T @ x (over every row of the batch), d/dbias = grad summed over the batch.
    One node instead of `@` then `+` means one output array instead of two in the graph.
    """
    x = input
    try:
        x_data, w_data = x._data, weight._data
    except AttributeError:
        _check_tensors("linear", (x, "input"), (weight, "weight"))
        raise
    # Cheap tests first: the detailed ones run only to explain a failure, or to accept a bias of
    # another shape that broadcasts to the output's, as PyTorch does (a (1,) bias, a (rows, 1) one).
    if (w_data.ndim != 2 or x_data.dtype != w_data.dtype
            or bias is not None and (bias.data.shape != w_data.shape[:1] or bias.data.dtype != w_data.dtype)):
        if w_data.ndim == 1 and bias is None:  # PyTorch's 1-D weight: one output feature, dropped
            return matmul(x, weight)
        _check_linear(x, weight, bias)
    in_features = w_data.shape[-1]
    rows = math.prod(x_data.shape[:-1])  # (not -1 in the reshapes: a size-0 dimension is allowed)
    try:
        out = _rows_product(x_data, w_data.T, rows)  # a transposed view: BLAS reads it as it is
    except ValueError:
        _check_linear(x, weight, None)
    if bias is not None:
        out += bias.data  # out is fresh, so adding in place saves an array of the output's size

    def vjp_weight(grad: np.ndarray) -> np.ndarray:
        if x_data.ndim == 1:
            return np.outer(grad, x_data)
        # Every row of the batch (all dimensions but the last) adds its outer product.
        return matmul_arrays(grad.reshape(rows, grad.shape[-1]).T, x_data.reshape(rows, in_features))

    def vjp_bias(grad: np.ndarray) -> np.ndarray:
        if bias_shape != grad.shape[-1:]:  # a broadcast bias: `record` sums the gradient back to its shape
            return grad
        return summed_rows(grad.reshape(rows, grad.shape[-1]))

    vjps = (lambda grad: _rows_product(grad, w_data, rows), vjp_weight)
    if bias is None:
        return record(out, "linear", (x, weight), *vjps, graph_vjp=_linear_graph)
    bias_shape = bias.data.shape
    return record(out, "linear", (x, weight, bias), *vjps, vjp_bias, saved=(x, weight),
                  graph_vjp=_linear_graph)


def summed_rows(matrix: np.ndarray) -> np.ndarray:
    """A matrix summed over its rows: a bias's gradient over the rows of a batch.

    On a GPU, as the product of a row of ones with the matrix: CuPy reduces a row-major matrix
    over its rows in a slow pass (83 us for 8192 x 256 float32 on an H200: 40% of the GPU time of
    the 784-256-128-10 MLP's training step at that batch), where cuBLAS's product reads it once.
    NumPy's own reduction is the quick one on the CPU; float16 keeps `summed`'s float32 sum."""
    if type(matrix) is np.ndarray or matrix.dtype.kind != "f" or matrix.dtype is float16:
        return summed(matrix, 0)
    return namespace(matrix).ones(matrix.shape[0], matrix.dtype) @ matrix


def _rows_product(x: np.ndarray, matrix: np.ndarray, rows: int) -> np.ndarray:
    """x @ matrix for an x of any rank, as one matrix product over x's `rows` (all its dimensions
    but the last). numpy multiplies a 3-d x by a matrix one BLAS call per slice: a (32, 16, 32)
    sequence batch times a (32, 96) matrix took 109 us that way, 48 us as one (512, 32) product."""
    if x.ndim <= 2:
        return matmul_arrays(x, matrix)
    return matmul_arrays(x.reshape(rows, x.shape[-1]), matrix).reshape(*x.shape[:-1], matrix.shape[-1])


def _linear_graph(grad: Tensor, out: Tensor, x: Tensor, weight: Tensor,
                  bias: Tensor | None = None) -> tuple[Tensor, ...]:
    """linear's gradients as tensor ops: grad @ weight, grad^T @ x over the batch rows, grad summed
    (a bias of another shape gets the whole gradient, summed back to its shape by the caller)."""
    if x.ndim == 1:
        grad_weight = grad.unsqueeze(1) * x.unsqueeze(0)
    else:
        rows = grad.reshape(-1, grad.shape[-1])
        grad_weight = rows.transpose(0, 1) @ x.reshape(-1, x.shape[-1])
    grads = (grad @ weight, grad_weight)
    if bias is None:
        return grads
    return (*grads, grad.reshape(-1, grad.shape[-1]).sum(0) if bias.shape == grad.shape[-1:] else grad)


def _check_linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """Say which of `linear`'s operands has the wrong shape or dtype; return if none has (a bias
    whose shape is not (out_features,) but broadcasts to the output's)."""
    if weight.ndim != 2:
        raise ShapeError(f"linear: weight must be 2-D (out_features, in_features), or 1-D without a bias, "
                         f"got shape {weight.shape}")
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ShapeError(
            f"linear: input of shape {x.shape} has {x.shape[-1] if x.ndim else 'no'} features in its "
            f"last dimension, but weight of shape {weight.shape} expects {weight.shape[1]}"
        ) from None
    if x.dtype != weight.dtype or bias is not None and bias.dtype != weight.dtype:
        dtypes = ", ".join(str(t.dtype) for t in (x, weight, bias) if t is not None)
        raise UnsupportedDtypeError(f"linear: input, weight and bias must have one dtype, got {dtypes}")
    if bias is not None:
        out_shape = (*x.shape[:-1], weight.shape[0])
        try:
            fits = np.broadcast_shapes(out_shape, bias.shape) == out_shape
        except ValueError:
            fits = False
        if not fits:
            raise ShapeError(f"linear: bias must have shape ({weight.shape[0]},) to match weight "
                             f"{weight.shape}, or broadcast to the output's shape {out_shape}; "
                             f"got {bias.shape}")


# --- einsum ---------------------------------------------------------------------------------------


@autocast_op("einsum")
def einsum(equation: str, *operands: Tensor) -> Tensor:
    """Einstein summation, `tg.einsum("ij,jk->ik", a, b)`, through `einsum(optimize=True)`.

    The gradient of each operand is another einsum: the output's gradient times the other
    operands, summed down to that operand's subscripts. A letter only that operand has (summed
    away) gets the gradient broadcast back; a repeated letter (`"ii->i"`) puts it on the diagonal.
    """
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    inputs, output = _parse_einsum(equation, operands)
    xp = namespace(operands[0].data) if operands else np
    arrays = [t.data for t in operands]
    if arrays and arrays[0].dtype.kind in "biu" and _sums_alone(inputs, output):
        arrays = [x.astype(np.int64) for x in arrays]
    try:
        out = _einsum_array(xp, f"{','.join(inputs)}->{output}", arrays)
    except ValueError as error:
        shapes = ", ".join(str(t.shape) for t in operands)
        raise ShapeError(f"einsum('{equation}'): operands of shapes {shapes} don't fit: {error}") from None
    out = xp.asarray(out)  # numpy gives a scalar for a full contraction
    vjps = [_einsum_vjp(i, inputs, output, operands) for i in range(len(operands))]
    return record(out, "einsum", tuple(operands), *vjps, graph_vjp=partial(_einsum_graph, inputs, output))


def _einsum_array(xp: Any, spec: str, arrays: list[np.ndarray]) -> np.ndarray:
    """xp.einsum(spec, *arrays). Float16 operands are summed in float32 and the result rounded once,
    as PyTorch's (its contractions are products and sums that accumulate in float32; NumPy's
    float16 einsum adds in float16, where 5,000 numbers near 1 stop at 4096)."""
    if arrays and all(a.dtype is float16 for a in arrays):
        return narrowed(xp.einsum(spec, *arrays, optimize=True, dtype=np.float32), np.float16)
    return xp.einsum(spec, *arrays, optimize=True)


def _sums_alone(inputs: list[str], output: str) -> bool:
    """Whether some operand has a letter that no other operand and not the output has. PyTorch sums
    such a letter away first, with `sum`, which widens integers and bools to int64 (so "i->" or
    "ij,jk->" on int32 give int64, while "ij,jk->ik" or "i,i->", contracted as products, keep int32)."""
    for i, sub in enumerate(inputs):
        elsewhere = set(output).union(*(set(s) for j, s in enumerate(inputs) if j != i))
        if not set(sub) <= elsewhere:
            return True
    return False


def _einsum_graph(inputs: list[str], output: str, grad: Tensor, out: Tensor,
                  *operands: Tensor) -> tuple[Tensor, ...]:
    """Each operand's gradient, another einsum of grad and the other operands; a letter only that
    operand has is broadcast back, and a repeated letter puts it on the diagonal (`_on_diagonal`)."""
    grads = []
    for i, sub in enumerate(inputs):
        unique = "".join(dict.fromkeys(sub))
        others = [(s, t) for j, (s, t) in enumerate(zip(inputs, operands, strict=True)) if j != i]
        reachable = set(output).union(*(set(s) for s, _ in others))
        kept = "".join(c for c in unique if c in reachable)
        if others or output != kept:
            spec = ",".join([output] + [s for s, _ in others]) + "->" + kept
            g = einsum(spec, grad, *(t for _, t in others))
        else:  # (an einsum of grad alone, unchanged: "->" for a full sum, which einsum doesn't parse)
            g = grad
        sizes = dict(zip(sub, operands[i].shape, strict=True))
        if kept != unique:
            g = g.reshape([sizes[c] if c in kept else 1 for c in unique]).expand(*(sizes[c] for c in unique))
        grads.append(g if unique == sub else _on_diagonal(g, unique, sub, sizes))
    return tuple(grads)


def _on_diagonal(g: Tensor, unique: str, sub: str, sizes: dict[str, int]) -> Tensor:
    """g (subscripts `unique`) placed on the diagonal of an operand with subscripts `sub` ("i" into
    "ii"), zeros elsewhere: g spread over sub's dimensions, times the mask of the diagonal."""
    xp = namespace(g.data)
    first = {c: sub.index(c) for c in unique}
    spread = g.reshape([sizes[c] if first[c] == k else 1 for k, c in enumerate(sub)]).expand(
        *(sizes[c] for c in sub))
    mask = xp.ones([sizes[c] for c in sub], dtype=bool)
    for k, c in enumerate(sub):
        if first[c] != k:  # the k-th index equal to the letter's first
            shape = [1] * len(sub)
            shape[k] = shape[first[c]] = sizes[c]
            mask = mask & xp.eye(sizes[c], dtype=bool).reshape(shape)
    return spread * new_leaf(mask.astype(g.data.dtype))


def _parse_einsum(equation: str, operands: tuple[Tensor, ...]) -> tuple[list[str], str]:
    """The subscripts of each operand and of the output, with '...' spelled out as letters."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise RuntimeError(f"einsum('{equation}'): {len(inputs)} subscripts for {len(operands)} operands")
    free = iter(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in equation)
    ellipsis_dims = 0
    for sub, t in zip(inputs, operands, strict=True):
        if "..." in sub:
            ellipsis_dims = max(ellipsis_dims, t.ndim - (len(sub) - 3))
    letters = "".join(next(free) for _ in range(ellipsis_dims))
    spelled = []
    for sub, t in zip(inputs, operands, strict=True):
        if "..." in sub:
            n = t.ndim - (len(sub) - 3)
            sub = sub.replace("...", letters[ellipsis_dims - n:])
        if len(sub) != t.ndim or not sub.isalpha():
            raise RuntimeError(f"einsum('{equation}'): subscripts '{sub}' don't fit an operand of shape "
                               f"{t.shape}")
        spelled.append(sub)
    if arrow:
        output = rhs.replace("...", letters)
    else:  # implicit output: the ellipsis, then the letters used once, in alphabetical order
        used = "".join(spelled)
        once = sorted(c for c in set(used) if used.count(c) == 1 and c not in letters)
        output = letters + "".join(once)
    return spelled, output


def _einsum_vjp(i: int, inputs: list[str], output: str, operands: tuple[Tensor, ...]):
    sub = inputs[i]
    unique = "".join(dict.fromkeys(sub))
    others = [(s, t) for j, (s, t) in enumerate(zip(inputs, operands, strict=True)) if j != i]
    reachable = set(output).union(*(set(s) for s, _ in others)) if others else set(output)
    kept = "".join(c for c in unique if c in reachable)
    sizes = dict(zip(sub, operands[i].shape, strict=True))
    xp = namespace(operands[i].data)

    def vjp(grad: np.ndarray) -> np.ndarray:
        spec = ",".join([output] + [s for s, _ in others]) + "->" + kept
        g = _einsum_array(xp, spec, [grad, *(t.data for _, t in others)])
        # Letters only this operand had were summed away: every element there gets the gradient.
        g = g.reshape([sizes[c] if c in kept else 1 for c in unique])
        g = np.broadcast_to(g, [sizes[c] for c in unique])
        if unique == sub:
            return g
        # A repeated letter ("ii->i"): onto the diagonal, each subscript indexed by its letter's
        # position (an index, not a view, as a GPU's einsum may return a copy).
        full = xp.zeros(operands[i].shape, dtype=grad.dtype)
        full[tuple(xp.arange(sizes[c]).reshape([-1 if u == c else 1 for u in unique]) for c in sub)] = g
        return full

    return vjp
