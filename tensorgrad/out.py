"""`out=`: PyTorch's keyword for writing an op's result into a tensor the caller already has,
`tg.add(a, b, out=c)`. The op computes its result as usual, then it is written into `out`, which
is resized to the result's shape (with PyTorch's warning when it had elements) and returned.

What `out`'s dtype may be depends on the op, as in PyTorch; four rules cover them:

- "cast": the elementwise ops, and reductions and joins built on them, cast their result to out's
  dtype, unless that loses a kind (complex to real, floating to integer, anything to bool):
  `tg.add(int_a, int_b, out=float_c)` is fine, `tg.add(x, y, out=long_c)` is a RuntimeError
  (a TypeError for the joins, `cat` and its kin).
- "exact": out must already have the result's dtype (matmul, the norms, sort's values, ...).
- "dtype": the ops that take `dtype=` compute in out's dtype when none is given (`arange`,
  `zeros`, `cumsum`, ...), then out must match it.
- "floating": the Fourier transforms with a real result take any floating out.

An `out=` result is not recorded: with gradients on, an input (or out) that requires grad is
PyTorch's RuntimeError. Ops with several results take a tuple of tensors and return the named
tuple of them.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from scalargrad.engine import is_grad_enabled
from tensorgrad import autocasting
from tensorgrad.autograd import bump_version
from tensorgrad.device import namespace
from tensorgrad.tensor import Tensor

# PyTorch's names for the dtypes in its messages ("result type Float can't be cast to ...").
_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char", "int16": "Short",
               "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
               "complex128": "ComplexDouble"}
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_CLONE_FIRST = "Please clone() the tensor before performing the operation."


def can_cast(source: np.dtype, target: np.dtype) -> bool:
    """PyTorch's `can_cast`: no complex to real, no floating to integer, nothing but bool to bool."""
    return _KIND_ORDER[source.kind] <= _KIND_ORDER[target.kind]


def check_no_grad(op: str, out: Any, inputs: tuple[Any, ...]) -> None:
    """out must be a Tensor, and with gradients on nothing may require grad: `out=` isn't recorded."""
    outs = out if isinstance(out, tuple | list) else (out,)
    for tensor in outs:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(tensor).__name__}")
    if is_grad_enabled() and any(t.requires_grad for t in _tensors((*outs, *inputs))):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")


def _tensors(values: Any) -> list[Tensor]:
    """The Tensors among values, looking inside lists and tuples (cat's and stack's sequences)."""
    found: list[Tensor] = []
    for value in values:
        if isinstance(value, Tensor):
            found.append(value)
        elif isinstance(value, list | tuple):
            found.extend(_tensors(value))
    return found


# The joins refuse an impossible cast as a TypeError that names cat (they are built on it).
_JOINS = {"cat", "stack", "hstack", "vstack", "dstack", "column_stack"}


def write(op: str, out: Tensor, result: Tensor, rule: str, inputs: tuple[Any, ...] = (),
          dtype_error: str | None = None, separate: bool = False) -> Tensor:
    """`result` written into `out` as the op's rule says (see the module's docstring); returns out.
    `dtype_error` is the op's own message for an out of another dtype, where PyTorch has one;
    `separate`: out may not share memory with the inputs (the indexing ops' rule in PyTorch; the
    result is computed whole before it is written, so elsewhere an overlap is harmless)."""
    source, target = result.dtype, out.dtype
    source_name, target_name = _TYPE_NAMES.get(str(source), source), _TYPE_NAMES.get(str(target), target)
    if rule == "cast" and not can_cast(source, target):
        if op in _JOINS:
            raise TypeError(f"cat(): input types can't be cast to the desired output type {target_name}")
        raise RuntimeError(f"result type {source_name} can't be cast to the desired output type "
                           f"{target_name}")
    if rule == "floating" and target.kind != "f":
        raise RuntimeError(f"{op.rpartition('.')[2]} expects a floating point output tensor, but got "
                           f"{target_name}")
    if rule in ("exact", "dtype") and source != target:
        raise RuntimeError(dtype_error or f"{op}(): Expected out tensor to have dtype {source}, but got "
                           f"{target} instead")
    if op in _OVERLAP_BEFORE_RESIZE:
        _refuse_internal_overlap(out.data)
    _resize(op, out, tuple(result.shape))
    data = out.data
    _refuse_internal_overlap(data)
    xp = namespace(data)
    if separate and any(xp.may_share_memory(data, t.data) for t in _tensors(inputs)):
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to "
                           f"tensor refer to a single memory location. {_CLONE_FIRST}")
    data[...] = result.data
    bump_version(out)
    return out


def _refuse_internal_overlap(data: Any) -> None:
    """PyTorch's error for an out in which several elements are one (a stride 0 of an expand)."""
    if any(stride == 0 and n > 1 for stride, n in zip(data.strides, data.shape, strict=True)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers "
                           f"to a single memory location. {_CLONE_FIRST}")


# The ops that refuse an out whose elements share memory before resizing it, where the others
# resize first: PyTorch's TensorIterator kernels (the elementwise ones and the scatters) and
# index_select, probed on PyTorch 2.13 with an expanded out of another shape.
_OVERLAP_BEFORE_RESIZE = frozenset((
    "index_select",
    "abs", "acos", "acosh", "add", "addcdiv", "addcmul", "addr", "angle", "asin", "asinh", "atan",
    "atan2", "atanh", "ceil", "clamp", "clamp_max", "clamp_min", "complex", "conj_physical", "copysign",
    "cos", "cosh", "deg2rad", "digamma", "div", "eq", "erf", "erfc", "erfinv", "exp", "exp2", "expm1",
    "fft.ifft", "fft.ihfft", "float_power", "floor", "floor_divide", "fmax", "fmin", "fmod", "frac", "ge",
    "gt", "heaviside", "hypot", "i0", "igamma", "igammac", "isneginf", "isposinf", "ldexp", "le", "lerp",
    "lgamma", "log", "log10", "log1p", "log2", "logaddexp", "logaddexp2", "logical_and", "logical_not",
    "logical_or", "logical_xor", "logit", "lt", "maximum", "minimum", "mul", "nan_to_num", "ne", "neg",
    "nextafter", "outer", "polar", "pow", "rad2deg", "reciprocal", "remainder", "round", "rsqrt",
    "scatter", "scatter_add", "sgn", "sigmoid", "sign", "signbit", "sin", "sinc", "sinh", "sqrt",
    "square", "sub", "tan", "tanh", "true_divide", "trunc", "where", "xlogy",
    *(f"special.{name}" for name in (
        "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
        "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "entr", "erfcx",
        "hermite_polynomial_h", "hermite_polynomial_he", "i0e", "i1", "i1e", "laguerre_polynomial_l",
        "legendre_polynomial_p", "log_ndtr", "modified_bessel_i0", "modified_bessel_i1",
        "modified_bessel_k0", "modified_bessel_k1", "ndtri", "polygamma", "scaled_modified_bessel_k0",
        "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "spherical_bessel_j0", "xlog1py", "zeta")),
))

# PyTorch's sum and prod take out= only with a dim (their full reductions have no out overload).
_OUT_NEEDS_DIM = frozenset(("sum", "prod"))

# The factories resize an out of another shape without a word, as PyTorch's do.
_RESIZED_QUIETLY = {"empty", "eye", "full", "linspace", "logspace", "ones", "rand", "randn", "zeros"}


def _resize(op: str, out: Tensor, shape: tuple[int, ...]) -> None:
    """out takes the result's shape; PyTorch warns when it resizes an out that had elements."""
    from tensorgrad import inplace  # (inplace is imported after this module)

    if tuple(out.shape) == shape:
        return
    if op in ("arange", "range") and out.numel():
        warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {out.numel()} "
                      f"which does not match the computed number of elements {math.prod(shape)}. Note that "
                      "this may occur as a result of rounding error. The out tensor will be resized to a "
                      f"tensor of shape {shape}.", UserWarning, stacklevel=4)
    elif out.numel() and op not in _RESIZED_QUIETLY:
        warnings.warn("An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape {list(shape)}. "
                      "This behavior is deprecated, and in a future PyTorch release outputs will not be "
                      "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
                      "resizing it, inplace, to zero elements with t.resize_(0).", UserWarning, stacklevel=4)
    inplace.resize(out, shape)


def _check_where_operands(args: tuple, kwargs: dict) -> None:
    """`where` takes `out=` in its all-tensor form only, as PyTorch's (whose overloads with a
    number, or with the condition alone, have no `out`)."""
    names = ("condition", "input", "other")
    given = dict(zip(names, args, strict=False)) | kwargs
    if "input" not in given and "other" not in given:
        raise TypeError("where() received an invalid combination of arguments - got (Tensor, out=Tensor), "
                        "but expected one of: (Tensor condition) or (Tensor condition, Tensor input, Tensor "
                        "other, *, Tensor out=None)")
    for position, name in enumerate(names, start=1):
        value = given.get(name)
        if not isinstance(value, Tensor):
            where = f" (position {position})" if position <= len(args) else ""
            raise TypeError(f"where(): argument '{name}'{where} must be Tensor, not {type(value).__name__}")


def with_out(function: Callable[..., Any], op: str, rule: str) -> Callable[..., Any]:
    """`function` with PyTorch's `out=` keyword added, written as `rule` says."""
    takes_dtype = "dtype" in inspect.signature(function).parameters

    @functools.wraps(function)
    def op_with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return function(*args, **kwargs)
        if op in _OUT_NEEDS_DIM and len(args) < 2 and kwargs.get("dim") is None:
            raise TypeError(f"{op}() received an invalid combination of arguments - got (Tensor, "
                            "out=Tensor), but expected one of: (Tensor input, *, dtype=None) or (Tensor "
                            f"input, dim, keepdim=False, *, dtype=None, Tensor out=None): a full {op} "
                            "takes no out=")
        if op == "where":
            _check_where_operands(args, kwargs)
        inputs = (*args, *kwargs.values())
        check_no_grad(op, out, inputs)
        if rule == "dtype" and takes_dtype and kwargs.get("dtype") is None and isinstance(out, Tensor):
            kwargs["dtype"] = out.dtype  # (the dtype out has is the one to compute in)
        with autocasting.suspended():  # (PyTorch does not autocast a call with out=)
            result = function(*args, **kwargs)
        if isinstance(out, tuple | list):
            return _write_several(op, out, result, inputs)
        if isinstance(result, tuple):
            if op == "nonzero":
                raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
            raise TypeError(f"{op}(): out must be a tuple of {len(result)} tensors, got a Tensor")
        return write(op, out, result, _clamp_rule(args, kwargs) if op == "clamp" else rule, inputs)

    op_with_out.__signature__ = _signature_with_out(function)  # type: ignore[attr-defined]
    return op_with_out


def _write_several(op: str, outs: tuple | list, result: Any, inputs: tuple[Any, ...]) -> tuple:
    """An op's several results written into the tensors of `outs`, each of its result's dtype;
    returned as the op's named tuple (`values`, `indices`, ...) of those tensors."""
    if not isinstance(result, tuple) or len(outs) != len(result):
        count = len(result) if isinstance(result, tuple) else 1
        raise RuntimeError(f"{op}(): expected out to be a tuple of {count} tensors, got {len(outs)}")
    written = [write(op, o, r, "exact", inputs) for o, r in zip(outs, result, strict=True)]
    return type(result)(*written) if hasattr(result, "_fields") else tuple(written)


def _signature_with_out(function: Callable[..., Any]) -> inspect.Signature:
    """function's signature with a keyword-only `out=None` (before any **kwargs), as help() shows it."""
    signature = inspect.signature(function)
    if "out" in signature.parameters:
        return signature
    extra = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    parameters = list(signature.parameters.values())
    position = next((i for i, p in enumerate(parameters) if p.kind is inspect.Parameter.VAR_KEYWORD),
                    len(parameters))
    return signature.replace(parameters=[*parameters[:position], extra, *parameters[position:]])


def _clamp_rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """clamp casts into out when a bound is a tensor (an elementwise op of three), else not."""
    bounds = (*args[1:], kwargs.get("min"), kwargs.get("max"))
    return "cast" if any(isinstance(bound, Tensor) for bound in bounds) else "exact"


# Which rule each op's out follows, as PyTorch 2.13 answers (probed with its own op samples).
RULES: dict[str, tuple[str, ...]] = {
    "cast": (
        "acos", "acosh", "add", "addcdiv", "addcmul", "addr", "angle", "asin", "asinh", "atan", "atan2",
        "atanh", "bernoulli", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
        "bitwise_right_shift", "bitwise_xor", "cat", "cholesky", "cholesky_inverse", "cholesky_solve",
        "clamp_max", "clamp_min", "column_stack", "copysign", "cos", "cosh", "deg2rad", "digamma", "div",
        "dstack", "eq", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "floor_divide", "fmax", "fmin",
        "fmod", "gcd", "ge", "gt", "hstack", "hypot", "i0", "igamma", "igammac", "kron", "lcm", "ldexp", "le",
        "lerp", "lgamma", "linalg.cond", "linalg.householder_product", "linalg.matrix_rank", "linalg.pinv",
        "linalg.tensorinv", "linalg.tensorsolve", "log", "log10", "log1p", "log2", "logaddexp", "logaddexp2",
        "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "logsumexp", "lt", "maximum",
        "minimum", "mul", "ne", "nextafter", "outer", "pow", "rad2deg", "reciprocal", "remainder", "rsqrt",
        "sigmoid", "sin", "sinc", "sinh", "sqrt", "square", "stack", "std", "sub", "tan", "tanh",
        "true_divide", "var", "vstack", "xlogy",
        *(f"special.{name}" for name in (
            "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
            "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr",
            "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
            "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
            "laguerre_polynomial_l", "legendre_polynomial_p", "log_ndtr", "logit", "modified_bessel_i0",
            "modified_bessel_i1",
            "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
            "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
            "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
            "shifted_chebyshev_polynomial_w", "sinc", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta")),
    ),
    "exact": (
        "abs", "addbmm", "addmm", "addmv", "alias_copy", "all", "amax", "amin", "any", "argmax", "argmin",
        "as_strided_copy", "baddbmm", "bmm", "bucketize", "ceil", "clamp", "complex", "conj_physical",
        "cross", "diag", "diagonal_copy", "diff", "dot", "expand_copy", "float_power", "floor", "frac",
        "heaviside", "histc", "index_add", "index_copy", "inner", "isin", "isneginf", "isposinf",
        "log_softmax", "logcumsumexp", "lu_solve", "matmul", "mm", "msort", "multinomial", "mv", "nan_to_num",
        "nanquantile", "narrow_copy", "neg", "nonzero", "norm", "ormqr", "permute_copy", "polar", "quantile",
        "renorm", "round", "scatter", "scatter_add", "searchsorted", "sgn", "sign", "signbit",
        "slice_scatter", "softmax", "squeeze_copy", "t_copy", "take_along_dim", "tensordot", "transpose_copy",
        "tril", "triu", "trunc", "unfold_copy", "unsqueeze_copy", "vdot", "view_copy", "where",
        *(f"linalg.{name}" for name in (
            "cholesky", "cross", "det", "eigvals", "eigvalsh", "inv", "ldl_solve", "lu_solve", "matrix_norm",
            "matrix_power", "multi_dot", "norm", "solve", "solve_triangular", "svdvals",
            "vecdot", "vector_norm")),
        *(f"fft.{name}" for name in (
            "fft", "fft2", "fftn", "ifft", "ifft2", "ifftn", "ihfft", "ihfft2", "ihfftn", "rfft", "rfft2",
            "rfftn")),
        # several results: each must have its own dtype
        "aminmax", "cummax", "cummin", "frexp", "kthvalue", "max", "min", "mode", "sort", "std_mean", "topk",
        "var_mean", "linalg.cholesky_ex", "linalg.eig", "linalg.eigh", "linalg.inv_ex", "linalg.ldl_factor",
        "linalg.ldl_factor_ex", "linalg.lu", "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.qr",
        "linalg.slogdet", "linalg.solve_ex", "linalg.svd",
    ),
    # the real transforms of complex input: any floating out
    "floating": ("fft.hfft", "fft.hfft2", "fft.hfftn", "fft.irfft", "fft.irfft2", "fft.irfftn"),
    "dtype": (
        "arange", "cumprod", "cumsum", "empty", "eye", "full", "linspace", "logspace", "mean",
        "nanmean", "nansum", "ones", "prod", "rand", "randn", "range", "sum", "zeros",
    ),
}


def install(modules: dict[str, Any]) -> None:
    """Give every op in `RULES` its `out=`, in place of the plain function in its module: `modules`
    maps a prefix ("" for tensorgrad itself, "linalg.", ...) to that module. An op that has an
    `out` of its own already keeps it. One function under several names (`tg.digamma`,
    `tg.special.digamma`, `tg.special.psi`) stays one function."""
    wrapped: dict[int, Callable[..., Any]] = {}
    for rule, names in RULES.items():
        for full_name in names:
            prefix, _, name = full_name.rpartition(".")
            function = getattr(modules[prefix + "." if prefix else ""], name, None)
            if function is not None and id(function) not in wrapped and \
                    "out" not in inspect.signature(function).parameters:
                wrapped[id(function)] = with_out(function, full_name, rule)
    for module in modules.values():
        for name, value in list(vars(module).items()):
            if callable(value) and id(value) in wrapped:
                setattr(module, name, wrapped[id(value)])
