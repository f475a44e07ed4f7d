"""`Tensor`: a strided numpy array that is a node of scalargrad's graph (tutorial chapter 6).

This module is the class alone: its attributes (`data` and `grad`, numpy arrays checked when
assigned), the autograd switches (`requires_grad`, `backward`, `detach`, `retain_grad`) and one
plain method per op, which calls the op in its module, so "jump to definition" lands on the op:

- `tensorgrad.autograd`: `record`, the one helper every op goes through, and the version
  counters and views;
- `tensorgrad.creation`: `tensor`, `zeros`, `randn`, ... and the generator;
- the ops, one file per kind: `elementwise`, `reduce`, `movement`, `matmul`, `indexing`, and
  `inplace` for the in-place forms.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorgrad import checks, dtypes, layouts, storage
from tensorgrad.autocasting import autocast_op
from tensorgrad.dtypes import bool_, float16, float32, float64, int8, int16, int32, int64, narrowed, uint8

__all__ = ["Tensor", "ensure_tensor", "new_leaf", "init_node", "to_array", "numpy_names", "AXIS_ALIASED"]

# --- the Tensor -------------------------------------------------------------------------------


# The roots that backward(retain_graph=True) ran from, by creation number (`_seq`), so that a
# picture of a kept graph (visualize.draw_dot) tells its gradients from a new graph's stale ones.
# Weak: an entry goes with its root; an in-place change renumbers the root, so it no longer counts.
backpropagated: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class Tensor:
    """An n-dimensional array with autograd, PyTorch-style.

    >>> x = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    array([[2., 4.],
           [6., 8.]], dtype=float32)

    Node protocol (shared with `scalargrad.Value`): `data`, `grad`, `parents`, `op`, `label`,
    `_backward`. An inner node's `grad` is released after backward unless `retain_grad()`.
    A view (`t[0]`, `t.T`, `t.view(...)`) keeps the tensor whose storage it shares in `_base`
    (None otherwise), as PyTorch's views do, so that an in-place change through the view is
    also recorded on that tensor.
    """

    __slots__ = (
        "_data",
        "_grad",
        "parents",
        "op",
        "label",
        "_backward",
        "_keeps_grad",
        "_requires_grad",
        "_versions",
        "_seq",
        "_base",
        "_view_version",
        "__weakref__",
    )

    _grad_init = None
    _backward_takes_node = False  # the engine calls a Tensor's backward as `_backward(grad)`
    _kept_grad_adds_up = True  # a retain_grad() gradient accumulates across passes, as in PyTorch
    # Make `ndarray + Tensor` call Tensor.__radd__ instead of numpy broadcasting over objects.
    __array_priority__ = 1000

    def __init__(self, *args: Any, device: Any = None) -> None:
        """PyTorch's legacy constructor: `tg.Tensor([1, 2])` holds the data in the default float
        dtype (float32), `tg.Tensor(2, 3)` is an uninitialised tensor of that shape, `tg.Tensor()`
        an empty one. `tg.tensor(data)` keeps the data's own dtype."""
        from tensorgrad import creation

        made = creation.legacy(dtypes.default_float, args, device)
        init_node(self, made._data, False)

    # --- data and grad: numpy arrays, checked when assigned -----------------------------------

    @property
    def data(self) -> np.ndarray:
        """The values: a numpy array (a strided view of a storage buffer)."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        # PyTorch's `p.data = t` swaps in t's values; a Tensor is stored as its array, so that
        # `data` is always an array.
        if isinstance(value, Tensor):
            value = value._data
        elif not device_module.is_array(value):
            raise TypeError(f"data: assigned value must be a Tensor or an array (numpy, or CuPy on a "
                            f"GPU), got {type(value).__name__}")
        autograd.note_dtype(value.dtype)
        self._data = value
        self._base = None  # new storage: no longer a view of another tensor's

    @property
    def grad(self) -> np.ndarray | None:
        """The gradient accumulated by backward: a numpy array of `data`'s shape and dtype, or None.
        None on an inner node that does not `retain_grad()`, with PyTorch's UserWarning."""
        grad = self._grad
        if grad is None and self._backward is not None and not self._keeps_grad:
            import warnings

            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                          ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                          "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                          "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you "
                          "access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            value = _checked_grad(self, value)
        self._grad = value

    # --- array attributes ---------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, a tuple."""
        return self._data.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the elements (`tg.float32` unless asked otherwise)."""
        return self._data.dtype

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the size of one dimension."""
        return self._data.shape if dim is None else self._data.shape[dim]

    def dim(self) -> int:
        """The number of dimensions (PyTorch's name)."""
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements."""
        return self._data.size

    def nelement(self) -> int:
        """The number of elements (PyTorch's older name for `numel`)."""
        return self._data.size

    def element_size(self) -> int:
        """The size of one element in bytes (4 for float32)."""
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating point one (float16, float32, float64)."""
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        """Whether the dtype is a complex one."""
        return self._data.dtype.kind == "c"

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Steps through storage per dimension, in elements (0 for a broadcast dimension)."""
        itemsize = self._data.itemsize
        strides = tuple(s // itemsize for s in self._data.strides)
        if not self._data.size and self._base is None:  # a new empty tensor: PyTorch's row-major
            # strides, sizes 0 counted as 1, or channels-last ones (an empty view keeps its base's)
            strides = creation.empty_strides(self.shape, strides)
        return strides if dim is None else strides[checks.dim(dim, self.ndim, "stride")]

    def storage_offset(self) -> int:
        """Where this view starts in its storage buffer, in elements."""
        start = device_module.data_address(self._data)
        return (start - device_module.data_address(storage.root_array(self._data))) // self._data.itemsize

    def untyped_storage(self) -> storage.UntypedStorage:
        """The bytes this tensor and its views share (`data_ptr()` tells whether two share memory)."""
        return storage.untyped_storage(self._data)

    def storage(self) -> storage.TypedStorage:
        """The elements under this tensor and its views, in its dtype (deprecated, as in PyTorch:
        prefer `untyped_storage()`)."""
        return storage.typed_storage(self._data)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the elements sit in storage in row-major order without gaps (or in the order of
        `memory_format=tg.channels_last` / `tg.channels_last_3d`; size-1 dimensions don't count)."""
        if memory_format is not None and creation.check_memory_format(memory_format, "is_contiguous").rank:
            return creation.is_channels_last_contiguous(self.shape, self.stride(), memory_format)
        return self._data.flags.c_contiguous

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a numpy array, sharing memory. Refuses a tensor that requires grad, unless
        `force` (then a copy on the host, as PyTorch's `numpy(force=True)`)."""
        if force:
            return device_module.to_numpy(self._data).copy()
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on a tensor that requires grad. Use tensor.detach().numpy()."
            )
        if type(self._data) is not np.ndarray and self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        return self._data

    def item(self) -> float | int | bool:
        """The one element of a one-element tensor, as a Python number."""
        if self._data.size != 1:
            raise checks.ShapeError(f"item() needs a tensor with one element, got shape {self.shape}")
        return self._data.item()

    def tolist(self) -> Any:
        """The data as (nested) Python lists of numbers."""
        return self._data.tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is not None and dtype != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    def __repr__(self) -> str:
        # PyTorch's layout, number for number (tensorgrad/printing.py): `tensor([1.0000, 2.5000])`.
        on_device = type(self._data) is not np.ndarray and self.device.type != "cpu"
        where = str(self.device) if on_device else None
        # PyTorch's `grad_fn=<MulBackward0>` (tensorgrad's own name for the op is `t.op`)
        autograd = (f"grad_fn=<{self.grad_fn.name()}>" if self._backward is not None
                    else "requires_grad=True" if self._requires_grad else None)
        values = device_module.to_numpy(self._data)
        default_complex = np.result_type(dtypes.default_float, np.complex64)  # complex64 beside float32
        return printing.tensor_repr(values, where, autograd,
                                    (dtypes.default_float, int64, bool_, default_complex))

    def __format__(self, format_spec: str) -> str:
        # As PyTorch: a 0-d tensor formats as its number (f"{loss:.3f}"), anything else as its repr.
        if self._data.ndim == 0 and type(self) is Tensor:
            return self._data.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"the truth value of a tensor with {self._data.size} elements is ambiguous")
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.item())  # int() of a (1,)-shaped array is an error in NumPy 2

    __hash__ = object.__hash__  # comparisons are elementwise, so identity hashing is explicit

    # --- autograd -----------------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor. Settable on leaves."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` on a leaf in place; returns the tensor."""
        if self._backward is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf tensors; use detach() for a "
                    "tensor cut from the graph"
                )
            return self
        if requires_grad:
            autograd.note_dtype(self._data.dtype)  # (a complex leaf: record conjugates its VJPs)
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only floating point tensors can require gradients, got dtype {self._data.dtype}"
            )
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors that no recorded op made (their `grad` is kept after backward)."""
        return self._backward is None

    @property
    def grad_fn(self) -> autograd.graph.Node | None:
        """The graph node of the op that made this tensor (`MulBackward0`, with `name()`,
        `next_functions`, `metadata` and hooks, as PyTorch's), or None for a leaf. `op` is the
        op's name in tensorgrad."""
        return None if self._backward is None else autograd.graph.node_of(self)

    @property
    def _version(self) -> int:
        """How many in-place changes the storage under this tensor has seen."""
        return self._versions[0]

    def retain_grad(self) -> None:
        """Keep `grad` on this inner node after backward (leaves always keep it)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on a tensor that does not require grad")
        self._keeps_grad = True

    @property
    def retains_grad(self) -> bool:
        """Whether this inner node keeps its `grad` after backward."""
        return self._backward is not None and self._keeps_grad

    def detach(self) -> Tensor:
        """The same data (shared memory and version counter), cut from the graph."""
        out = new_leaf(self._data)
        out._versions = self._versions
        return out

    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Any = None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's `grad` (times `gradient`, if given).

        A non-scalar tensor needs `gradient` (same shape as self). The graph is freed as the pass
        runs unless `retain_graph=True`; backward through a freed graph raises. With `inputs`
        (tensors), only their `grad` changes. `create_graph=True` is refused: `grad` is a numpy
        array here; `tg.autograd.grad(..., create_graph=True)` gives gradients with a graph.
        """
        if create_graph or inputs is not None:
            autograd.backward(self, gradient, retain_graph, create_graph, inputs)
            if retain_graph and self._seq is not None:
                backpropagated[self._seq] = self
            return
        if not self._requires_grad:
            raise RuntimeError(
                "backward() on a tensor that does not require grad: no input of the graph has "
                "requires_grad=True (or it was built under no_grad())"
            )
        seed = self._seed(gradient)
        if self._backward is None:
            seed = autograd.hooked_grad(self, seed.copy())
            self.grad = seed if self.grad is None else self.grad + seed
        else:
            autograd.run_backward(self, seed, retain_graph)
            if retain_graph:  # (a plain backward frees the graph, which says as much by itself)
                backpropagated[self._seq] = self

    def register_hook(self, hook: Any) -> Any:
        """Call `hook(grad)` each time a backward pass computes this tensor's gradient; a tensor
        it returns replaces the gradient. Returns a handle whose `remove()` takes it off."""
        return autograd.register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call `hook(self)` each time a backward pass has added this leaf's gradient to `.grad`
        (an optimizer step can run there, inside backward). Returns a handle with `remove()`."""
        return autograd.register_post_accumulate_grad_hook(self, hook)

    def _seed(self, gradient: Any) -> np.ndarray:
        if gradient is None:
            if self._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs: this tensor has shape "
                    f"{self.shape}; pass backward(gradient=...) of that shape"
                )
            data = self._data
            # d(loss)/d(loss) = 1 holds for a real loss only (the flag first: reading a dtype's
            # kind cost 0.4% of a small training step)
            if autograd._complex_values and data.dtype.kind == "c":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{data.dtype}; pass a gradient, or start from a real loss (.abs())")
            if type(data) is np.ndarray:  # (dtype positional: keyword parsing costs a sixth of the call)
                seed = np.array(1, data.dtype)
            else:
                seed = device_module.array_like(1, data, data.dtype)
            return seed if data.ndim == 0 else seed.reshape(data.shape)
        seed = gradient.data if isinstance(gradient, Tensor) else gradient
        # No copy where it is one already: a leaf copies a gradient it would share with anything else.
        seed = device_module.array_like(seed, self._data, self._data.dtype)
        if seed.shape != self.shape:
            raise RuntimeError(
                f"backward: gradient has shape {seed.shape} but the tensor has shape {self.shape}"
            )
        return seed

    # --- math (each method calls the op in its module: jump to definition lands on it) ---------

    def __add__(self, other: Any) -> Tensor:
        return elementwise.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return elementwise.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return elementwise.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return elementwise.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return elementwise.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return elementwise.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return elementwise.div(self, other)

    @autocast_op("__rtruediv__")
    def __rtruediv__(self, other: Any) -> Tensor:
        """other / self as PyTorch computes it, self.reciprocal() * other: the same bits (a true
        division rounds differently in a quarter of float32 values) and grad_fn (MulBackward0)."""
        return elementwise.mul(elementwise.reciprocal(self), other)

    def __rdiv__(self, other: Any) -> Tensor:
        """other / self: PyTorch's old name for `__rtruediv__`."""
        return self.__rtruediv__(other)

    def __pow__(self, exponent: Any) -> Tensor:
        return elementwise.pow(self, exponent)

    def __rpow__(self, base: Any) -> Tensor:
        return elementwise.pow(base, self)

    def __neg__(self) -> Tensor:
        return elementwise.neg(self)

    def __matmul__(self, other: Tensor) -> Tensor:
        return matmul.matmul(self, other if isinstance(other, Tensor) else new_leaf(to_array(other)))

    def __rmatmul__(self, other: Any) -> Tensor:
        return matmul.matmul(other if isinstance(other, Tensor) else new_leaf(to_array(other)), self)

    def __lt__(self, other: Any) -> Tensor:
        return elementwise.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return elementwise.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return elementwise.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return elementwise.ge(self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None or isinstance(other, str):  # `t == None` is False, as in PyTorch
            return False  # type: ignore[return-value]
        return elementwise.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None or isinstance(other, str):
            return True  # type: ignore[return-value]
        return elementwise.ne(self, other)

    def __contains__(self, element: Any) -> bool:
        """`element in t`: whether any element of t equals `element` (a number or a tensor), as PyTorch."""
        if not isinstance(element, Tensor | bool | int | float | complex):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element).__name__}")
        return bool((self == element).any().item())

    def eq(self, other: Any) -> Tensor:
        """self == other, elementwise: a bool tensor."""
        return elementwise.eq(self, other)

    def ne(self, other: Any) -> Tensor:
        """self != other, elementwise: a bool tensor."""
        return elementwise.ne(self, other)

    def lt(self, other: Any) -> Tensor:
        """self < other, elementwise: a bool tensor."""
        return elementwise.lt(self, other)

    def le(self, other: Any) -> Tensor:
        """self <= other, elementwise: a bool tensor."""
        return elementwise.le(self, other)

    def gt(self, other: Any) -> Tensor:
        """self > other, elementwise: a bool tensor."""
        return elementwise.gt(self, other)

    def ge(self, other: Any) -> Tensor:
        """self >= other, elementwise: a bool tensor."""
        return elementwise.ge(self, other)

    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """self + other (self + alpha * other), broadcasting."""
        return elementwise.add(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """self - other (self - alpha * other), broadcasting."""
        return elementwise.sub(self, other, alpha=alpha)

    def mul(self, other: Any) -> Tensor:
        """self * other, broadcasting."""
        return elementwise.mul(self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """self / other, broadcasting; `rounding_mode` 'trunc' or 'floor' rounds the quotient."""
        return elementwise.div(self, other, rounding_mode=rounding_mode)

    def pow(self, exponent: Any) -> Tensor:
        """self ** exponent."""
        return elementwise.pow(self, exponent)

    def matmul(self, other: Tensor) -> Tensor:
        """self @ other (see `tensorgrad.matmul.matmul`)."""
        return matmul.matmul(self, other)

    def exp(self) -> Tensor:
        """e ** self."""
        return elementwise.exp(self)

    def log(self) -> Tensor:
        """Natural log."""
        return elementwise.log(self)

    def sqrt(self) -> Tensor:
        """Square root."""
        return elementwise.sqrt(self)

    def abs(self) -> Tensor:
        """Absolute value."""
        return elementwise.abs(self)

    def tanh(self) -> Tensor:
        """Hyperbolic tangent."""
        return elementwise.tanh(self)

    def sigmoid(self) -> Tensor:
        """Logistic sigmoid."""
        return elementwise.sigmoid(self)

    def relu(self) -> Tensor:
        """max(self, 0)."""
        return elementwise.relu(self)

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        """self limited to [min, max]."""
        return elementwise.clamp(self, min, max)

    def maximum(self, other: Any) -> Tensor:
        """Elementwise max with other."""
        return elementwise.maximum(self, other)

    def minimum(self, other: Any) -> Tensor:
        """Elementwise min with other."""
        return elementwise.minimum(self, other)

    # sum and mean end most graphs, so they take NumPy's `axis`/`keepdims` as parameters of their
    # own rather than through `numpy_names`'s wrapper (a Python frame: +2% of a small op's step).
    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, axis: Any = None,
            keepdims: bool | None = None) -> Tensor:
        """Sum over `dim` (int, tuple or None for all), in `dtype` if given."""
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_dims("sum", dim, keepdim, axis, keepdims)
        if dtype is None:  # (no keyword to pass on the common path)
            return reduce.sum(self, dim, keepdim)
        return reduce.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, axis: Any = None,
             keepdims: bool | None = None) -> Tensor:
        """Mean over `dim` (int, tuple or None for all), in `dtype` if given."""
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_dims("mean", dim, keepdim, axis, keepdims)
        return reduce.mean(self, dim, keepdim, dtype=dtype)

    def max(self, dim: Any = None, keepdim: bool = False, *, other: Tensor | None = None) -> Any:
        """The largest element; with `dim`, the named tuple `(values, indices)` along it."""
        return reduce.max(self, dim if other is None else other, keepdim)

    def min(self, dim: Any = None, keepdim: bool = False, *, other: Tensor | None = None) -> Any:
        """The smallest element; with `dim`, the named tuple `(values, indices)` along it."""
        return reduce.min(self, dim if other is None else other, keepdim)

    def amax(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        """The largest values over `dim` (all dims by default); ties share the gradient evenly."""
        return reduce.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        """The smallest values over `dim` (all dims by default); ties share the gradient evenly."""
        return reduce.amin(self, dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """Index of the largest value."""
        return reduce.argmax(self, dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """Index of the smallest value."""
        return reduce.argmin(self, dim, keepdim)

    def logsumexp(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """log(sum(exp(self))) over `dim`, computed stably."""
        return reduce.logsumexp(self, dim, keepdim)

    def softmax(self, dim: int = -1, dtype: Any = None) -> Tensor:
        """Softmax over `dim` (in `dtype`, if given)."""
        return reduce.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int = -1, dtype: Any = None) -> Tensor:
        """Log-softmax over `dim`, computed stably (in `dtype`, if given)."""
        return reduce.log_softmax(self, dim, dtype=dtype)

    # --- more elementwise math (each calls its op in `tensorgrad.elementwise`) -------------------

    def sin(self) -> Tensor:
        """sin(self)."""
        return elementwise.sin(self)

    def cos(self) -> Tensor:
        """cos(self)."""
        return elementwise.cos(self)

    def tan(self) -> Tensor:
        """tan(self)."""
        return elementwise.tan(self)

    def asin(self) -> Tensor:
        """arcsin(self)."""
        return elementwise.asin(self)

    def acos(self) -> Tensor:
        """arccos(self)."""
        return elementwise.acos(self)

    def atan(self) -> Tensor:
        """arctan(self)."""
        return elementwise.atan(self)

    def sinh(self) -> Tensor:
        """sinh(self)."""
        return elementwise.sinh(self)

    def cosh(self) -> Tensor:
        """cosh(self)."""
        return elementwise.cosh(self)

    def asinh(self) -> Tensor:
        """arsinh(self)."""
        return elementwise.asinh(self)

    def acosh(self) -> Tensor:
        """arcosh(self)."""
        return elementwise.acosh(self)

    def atanh(self) -> Tensor:
        """artanh(self)."""
        return elementwise.atanh(self)

    def erf(self) -> Tensor:
        """The error function of self."""
        return elementwise.erf(self)

    def exp2(self) -> Tensor:
        """2 ** self."""
        return elementwise.exp2(self)

    def expm1(self) -> Tensor:
        """e ** self - 1."""
        return elementwise.expm1(self)

    def log2(self) -> Tensor:
        """Base-2 log."""
        return elementwise.log2(self)

    def log10(self) -> Tensor:
        """Base-10 log."""
        return elementwise.log10(self)

    def log1p(self) -> Tensor:
        """ln(1 + self)."""
        return elementwise.log1p(self)

    def rsqrt(self) -> Tensor:
        """1 / sqrt(self)."""
        return elementwise.rsqrt(self)

    def square(self) -> Tensor:
        """self ** 2."""
        return elementwise.square(self)

    def reciprocal(self) -> Tensor:
        """1 / self."""
        return elementwise.reciprocal(self)

    def neg(self) -> Tensor:
        """-self."""
        return elementwise.neg(self)

    def sign(self) -> Tensor:
        """-1, 0 or 1 by the sign of each element (zero gradient)."""
        return elementwise.sign(self)

    def floor(self) -> Tensor:
        """Rounded down (zero gradient)."""
        return elementwise.floor(self)

    def ceil(self) -> Tensor:
        """Rounded up (zero gradient)."""
        return elementwise.ceil(self)

    def round(self, *, decimals: int = 0) -> Tensor:
        """Rounded to `decimals` places, halves to even (zero gradient)."""
        return elementwise.round(self, decimals=decimals)

    def trunc(self) -> Tensor:
        """Rounded toward zero (zero gradient)."""
        return elementwise.trunc(self)

    def frac(self) -> Tensor:
        """self - trunc(self)."""
        return elementwise.frac(self)

    def fmod(self, other: Any) -> Tensor:
        """C's fmod: the remainder with the sign of self."""
        return elementwise.fmod(self, other)

    def remainder(self, other: Any) -> Tensor:
        """Python's %: the remainder with the sign of other."""
        return elementwise.remainder(self, other)

    def floor_divide(self, other: Any) -> Tensor:
        """self // other, rounded down."""
        return elementwise.floor_divide(self, other)

    def copysign(self, other: Any) -> Tensor:
        """|self| with the sign of other."""
        return elementwise.copysign(self, other)

    def logaddexp(self, other: Any) -> Tensor:
        """ln(e**self + e**other), computed stably."""
        return elementwise.logaddexp(self, other)

    def lerp(self, end: Tensor, weight: Any) -> Tensor:
        """self + weight * (end - self)."""
        return elementwise.lerp(self, end, weight)

    def atan2(self, other: Any) -> Tensor:
        """The angle of the point (other, self)."""
        return elementwise.atan2(self, other)

    arctan2 = atan2

    def hypot(self, other: Any) -> Tensor:
        """sqrt(self^2 + other^2), without overflow."""
        return elementwise.hypot(self, other)

    def fmax(self, other: Any) -> Tensor:
        """Elementwise max, ignoring nan."""
        return elementwise.fmax(self, other)

    def fmin(self, other: Any) -> Tensor:
        """Elementwise min, ignoring nan."""
        return elementwise.fmin(self, other)

    def xlogy(self, other: Any) -> Tensor:
        """self * log(other), 0 where self is 0."""
        return elementwise.xlogy(self, other)

    def logaddexp2(self, other: Any) -> Tensor:
        """log2(2**self + 2**other), computed stably."""
        return elementwise.logaddexp2(self, other)

    def float_power(self, exponent: Any) -> Tensor:
        """self ** exponent, in float64."""
        return elementwise.float_power(self, exponent)

    def true_divide(self, other: Any) -> Tensor:
        """self / other, in floating point."""
        return elementwise.true_divide(self, other)

    def sinc(self) -> Tensor:
        """sin(pi self) / (pi self), 1 at 0."""
        return elementwise.sinc(self)

    def logit(self, eps: float | None = None) -> Tensor:
        """log(self / (1 - self)), self clamped to [eps, 1 - eps] if eps is given."""
        return elementwise.logit(self, eps)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Tensor:
        """nan, +inf and -inf replaced by finite numbers."""
        return elementwise.nan_to_num(self, nan, posinf, neginf)

    def deg2rad(self) -> Tensor:
        """Degrees to radians."""
        return elementwise.deg2rad(self)

    def rad2deg(self) -> Tensor:
        """Radians to degrees."""
        return elementwise.rad2deg(self)

    def sgn(self) -> Tensor:
        """The sign of each element (`sign`, for real tensors)."""
        return elementwise.sgn(self)

    def negative(self) -> Tensor:
        """-self."""
        return elementwise.negative(self)

    def positive(self) -> Tensor:
        """self (unary +)."""
        return elementwise.positive(self)

    def absolute(self) -> Tensor:
        """|self|."""
        return elementwise.absolute(self)

    def clamp_min(self, min: Any) -> Tensor:  # noqa: A002
        """max(self, min)."""
        return elementwise.clamp_min(self, min)

    def clamp_max(self, max: Any) -> Tensor:  # noqa: A002
        """min(self, max)."""
        return elementwise.clamp_max(self, max)

    def erfc(self) -> Tensor:
        """1 - erf(self), accurate in the tails."""
        return elementwise.erfc(self)

    def heaviside(self, values: Any) -> Tensor:
        """0 below 0, 1 above, `values` at 0."""
        return elementwise.heaviside(self, values)

    def signbit(self) -> Tensor:
        """True where the sign bit is set (negatives and -0.0)."""
        return elementwise.signbit(self)

    def isposinf(self) -> Tensor:
        """True where +inf."""
        return elementwise.isposinf(self)

    def isneginf(self) -> Tensor:
        """True where -inf."""
        return elementwise.isneginf(self)

    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
        """self + value * tensor1 * tensor2."""
        return matmul.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
        """self + value * tensor1 / tensor2."""
        return matmul.addcdiv(self, tensor1, tensor2, value=value)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        """self limited to [min, max] (numbers or tensors)."""
        return elementwise.clip(self, min, max)

    def bitwise_and(self, other: Any) -> Tensor:
        """self & other (integer and bool tensors)."""
        return elementwise.bitwise_and(self, other)

    def bitwise_or(self, other: Any) -> Tensor:
        """self | other (integer and bool tensors)."""
        return elementwise.bitwise_or(self, other)

    def bitwise_xor(self, other: Any) -> Tensor:
        """self ^ other (integer and bool tensors)."""
        return elementwise.bitwise_xor(self, other)

    def bitwise_not(self) -> Tensor:
        """~self (integer and bool tensors)."""
        return elementwise.bitwise_not(self)

    def bitwise_left_shift(self, other: Any) -> Tensor:
        """self << other (integer tensors)."""
        return elementwise.bitwise_left_shift(self, other)

    def bitwise_right_shift(self, other: Any) -> Tensor:
        """self >> other (integer tensors)."""
        return elementwise.bitwise_right_shift(self, other)

    def logical_and(self, other: Any) -> Tensor:
        """self and other, elementwise (a bool tensor)."""
        return elementwise.logical_and(self, other)

    def logical_or(self, other: Any) -> Tensor:
        """self or other, elementwise (a bool tensor)."""
        return elementwise.logical_or(self, other)

    def logical_xor(self, other: Any) -> Tensor:
        """self xor other, elementwise (a bool tensor)."""
        return elementwise.logical_xor(self, other)

    def logical_not(self) -> Tensor:
        """not self, elementwise (a bool tensor)."""
        return elementwise.logical_not(self)

    def isnan(self) -> Tensor:
        """True where nan (a bool tensor)."""
        return elementwise.isnan(self)

    def isinf(self) -> Tensor:
        """True where +-inf (a bool tensor)."""
        return elementwise.isinf(self)

    def isfinite(self) -> Tensor:
        """True where neither inf nor nan (a bool tensor)."""
        return elementwise.isfinite(self)

    def isclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> Tensor:
        """|self - other| <= atol + rtol * |other|, elementwise (a bool tensor)."""
        return elementwise.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        """Whether every element is close to other's (a Python bool)."""
        return elementwise.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: Tensor) -> bool:
        """Whether other has the same shape and values (a Python bool)."""
        return elementwise.equal(self, other)

    def __floordiv__(self, other: Any) -> Tensor:
        return elementwise.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return elementwise.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return elementwise.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return elementwise.remainder(other, self)

    def __and__(self, other: Any) -> Tensor:
        return elementwise.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return elementwise.bitwise_and(other, self)

    def __or__(self, other: Any) -> Tensor:
        return elementwise.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return elementwise.bitwise_or(other, self)

    def __xor__(self, other: Any) -> Tensor:
        return elementwise.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return elementwise.bitwise_xor(other, self)

    def __lshift__(self, other: Any) -> Tensor:
        return elementwise.bitwise_left_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        return elementwise.bitwise_left_shift(other, self)

    def __rshift__(self, other: Any) -> Tensor:
        return elementwise.bitwise_right_shift(self, other)

    def __rrshift__(self, other: Any) -> Tensor:
        return elementwise.bitwise_right_shift(other, self)

    def __invert__(self) -> Tensor:
        return elementwise.bitwise_not(self)

    def __abs__(self) -> Tensor:
        return elementwise.abs(self)

    # In place, as PyTorch's `x //= 2`: views of x see the change (Python's fallback would rebind x).

    def clip_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        """self limited to [min, max], in place."""
        return inplace.apply_inplace(self, elementwise.clip, min, max, name="clip_")

    def __ifloordiv__(self, other: Any) -> Tensor:
        return inplace.apply_inplace(self, elementwise.floor_divide, other, name="floor_divide_")

    def __imod__(self, other: Any) -> Tensor:
        return inplace.apply_inplace(self, elementwise.remainder, other, name="remainder_")

    def __iand__(self, other: Any) -> Tensor:
        return inplace.apply_inplace(self, elementwise.bitwise_and, other, name="bitwise_and_")

    def __ior__(self, other: Any) -> Tensor:
        return inplace.apply_inplace(self, elementwise.bitwise_or, other, name="bitwise_or_")

    def __ixor__(self, other: Any) -> Tensor:
        return inplace.apply_inplace(self, elementwise.bitwise_xor, other, name="bitwise_xor_")

    def __ilshift__(self, other: Any) -> Tensor:
        return inplace.apply_inplace(self, elementwise.bitwise_left_shift, other, name="bitwise_left_shift_")

    def __irshift__(self, other: Any) -> Tensor:
        return inplace.apply_inplace(self, elementwise.bitwise_right_shift, other,
                                     name="bitwise_right_shift_")

    # --- more reductions and scans (each calls its op in `tensorgrad.reduce`) -------------------

    def nansum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        """Sum over `dim`, counting nan as 0."""
        return reduce.nansum(self if dtype is None else self.to(dtype), dim, keepdim)

    def nanmean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        """Mean over `dim` of the elements that are not nan."""
        return reduce.nanmean(self if dtype is None else self.to(dtype), dim, keepdim)

    def trace(self) -> Tensor:
        """The sum of a matrix's diagonal."""
        return reduce.trace(self)

    def diff(self, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
             append: Tensor | None = None) -> Tensor:
        """The n-th forward difference along `dim`."""
        return reduce.diff(self, n, dim, prepend, append)

    def aminmax(self, *, dim: int | None = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        """The named tuple (min, max), over `dim` or all."""
        return reduce.aminmax(self, dim=dim, keepdim=keepdim)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        """The k-th smallest along `dim`, as (values, indices)."""
        return reduce.kthvalue(self, k, dim, keepdim)

    def nanmedian(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """The median of the elements that are not nan."""
        return reduce.nanmedian(self, dim, keepdim)

    def quantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Tensor:
        """The q-th quantiles along `dim` (of all elements for None)."""
        return reduce.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> Tensor:
        """`quantile` ignoring nan."""
        return reduce.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def msort(self) -> Tensor:
        """Sorted along the first dimension."""
        return reduce.msort(self)

    def mode(self, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        """The most frequent value along `dim` and its last index, as (values, indices)."""
        return reduce.mode(self, dim, keepdim)

    def unique(self, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
               return_counts: bool = False, dim: int | None = None) -> Any:
        """The distinct values (with the inverse indices and the counts, if asked)."""
        return reduce.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        """Each run of equal consecutive values, kept once."""
        return reduce.unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
        """How often each non-negative integer occurs (or the sum of its weights)."""
        return reduce.bincount(self, weights, minlength)

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
        """A histogram of equal bins over [min, max]."""
        return reduce.histc(self, bins, min, max)

    def prod(self, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        """Product over `dim` (one int, or None for all); int64 for bool and integer tensors."""
        return reduce.prod(self, dim, keepdim, dtype=dtype)

    def var(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: float | None = None) -> Tensor:
        """Variance over `dim`, dividing by N - correction (1 by default)."""
        return reduce.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: float | None = None) -> Tensor:
        """Standard deviation over `dim`, dividing by N - correction (1 by default)."""
        return reduce.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
        """The p-norm over `dim` (p a number, inf, -inf, 0, 'fro' or 'nuc')."""
        return reduce.norm(self, p, dim, keepdim, dtype)

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """True where every element over `dim` is non-zero."""
        return reduce.all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """True where some element over `dim` is non-zero."""
        return reduce.any(self, dim, keepdim)

    def count_nonzero(self, dim: Any = None) -> Tensor:
        """The number of non-zero elements over `dim` (int64)."""
        return reduce.count_nonzero(self, dim)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        """Running sum along `dim`."""
        return reduce.cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: Any = None) -> Tensor:
        """Running product along `dim`."""
        return reduce.cumprod(self, dim, dtype=dtype)

    def cummax(self, dim: int) -> Any:
        """Running maximum along `dim`: the named tuple `(values, indices)`."""
        return reduce.cummax(self, dim)

    def cummin(self, dim: int) -> Any:
        """Running minimum along `dim`: the named tuple `(values, indices)`."""
        return reduce.cummin(self, dim)

    def logcumsumexp(self, dim: int) -> Tensor:
        """log(cumsum(exp(self))) along `dim`, computed stably."""
        return reduce.logcumsumexp(self, dim)

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        """Sorted along `dim`: the named tuple `(values, indices)`."""
        return reduce.sort(self, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
        """The indices that sort `self` along `dim`."""
        return reduce.argsort(self, dim, descending, stable=stable)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
        """The k largest (or smallest) along `dim`: the named tuple `(values, indices)`."""
        return reduce.topk(self, k, dim, largest, sorted)

    def median(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """The lower median; with `dim`, the named tuple `(values, indices)` along it."""
        return reduce.median(self, dim, keepdim)

    # --- movement -----------------------------------------------------------------------------

    def reshape(self, *sizes: Any, shape: Any = None) -> Tensor:
        """The same elements in a new shape; a view when the strides allow."""
        if shape is not None:  # `reshape(shape=(2, 3))`, PyTorch's keyword
            sizes = _one_shape(sizes, shape, "reshape", "shape")
        return movement.reshape(self, *sizes)

    def view(self, *shape: Any, dtype: Any = None, size: Any = None) -> Tensor:
        """A view with a new shape; raises when the strides don't allow one. Given a dtype
        (`view(tg.int32)`), the same bytes read as that dtype, with no gradient."""
        if size is not None:  # `view(size=(2, 3))`, PyTorch's keyword
            shape = _one_shape(shape, size, "view", "size")
        if dtype is not None or (len(shape) == 1 and movement.is_dtype(shape[0])):
            if dtype is not None and shape:
                raise TypeError(f"view(): takes a shape or a dtype, got both {shape} and dtype={dtype}")
            return movement.view_dtype(self, shape[0] if dtype is None else dtype)
        return movement.view(self, *shape)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions (a view)."""
        return movement.transpose(self, dim0, dim1)

    @property
    def T(self) -> Tensor:
        """All dimensions reversed (a view)."""
        return movement.T(self)

    def permute(self, *dims: int, **keyword: Sequence[int]) -> Tensor:
        """Reorder the dimensions (a view); `dims=` by keyword too."""
        return movement.permute(self, *dims, **keyword)

    def expand(self, *sizes: Any, size: Any = None, implicit: bool = False) -> Tensor:
        """Broadcast size-1 dimensions with stride 0 (a view)."""
        if size is not None:  # `expand(size=(2, 3))`, PyTorch's keyword
            sizes = _one_shape(sizes, size, "expand", "size")
        return movement.expand(self, *sizes)

    def expand_as(self, other: Tensor) -> Tensor:
        """`expand` to other's shape."""
        return movement.expand(self, other.shape)

    def view_as(self, other: Tensor) -> Tensor:
        """`view` to other's shape (a view)."""
        return movement.view(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        """`reshape` to other's shape (a view when strides allow)."""
        return movement.reshape(self, other.shape)

    def t(self) -> Tensor:
        """A matrix's transpose (a view); 0-d and 1-D tensors as they are."""
        return movement.t(self)

    @property
    def mT(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The last two dimensions swapped (a view)."""
        return movement.mT(self)

    def ravel(self) -> Tensor:
        """All elements in one dimension (a view when strides allow)."""
        return movement.ravel(self)

    def select(self, dim: int, index: int) -> Tensor:
        """The slice at `index` along `dim`, that dimension removed (a view)."""
        return movement.select(self, dim, index)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions (a view): `transpose`."""
        return movement.transpose(self, dim0, dim1)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        """Move dimensions to new positions (a view): `movedim`."""
        return movement.movedim(self, source, destination)

    def mm(self, mat2: Tensor) -> Tensor:
        """self @ mat2 for two matrices."""
        return matmul.mm(self, mat2)

    def bmm(self, mat2: Tensor) -> Tensor:
        """Batched matrix products of two 3-D tensors."""
        return matmul.bmm(self, mat2)

    def mv(self, vec: Tensor) -> Tensor:
        """A matrix times a vector."""
        return matmul.mv(self, vec)

    def dot(self, tensor: Tensor) -> Tensor:
        """The inner product of two 1-D tensors."""
        return matmul.dot(self, tensor)

    def outer(self, vec2: Tensor) -> Tensor:
        """The outer product of two 1-D tensors."""
        return matmul.outer(self, vec2)

    def inverse(self) -> Tensor:
        """The inverse of a square matrix (`tg.linalg.inv`)."""
        return linalg.inv(self)

    def det(self) -> Tensor:
        """The determinant (`tg.linalg.det`)."""
        return linalg.det(self)

    def logdet(self) -> Tensor:
        """log(det(self)): nan for a negative determinant."""
        return linalg.logdet(self)

    def slogdet(self) -> tuple[Tensor, Tensor]:
        """The named tuple (sign, logabsdet)."""
        return linalg.slogdet(self)

    def matrix_power(self, n: int) -> Tensor:
        """self multiplied by itself n times (negative n: the inverse's powers)."""
        return linalg.matrix_power(self, n)

    def svd(self, some: bool = True, compute_uv: bool = True) -> tuple[Tensor, Tensor, Tensor]:
        """The named tuple (U, S, V) with self = U diag(S) V^T (`tg.svd`; `tg.linalg.svd` gives Vh)."""
        return linalg.legacy_svd(self, some, compute_uv)

    def qr(self, some: bool = True) -> tuple[Tensor, Tensor]:
        """The named tuple (Q, R) with self = Q R (`tg.qr`)."""
        return linalg.legacy_qr(self, some)

    def pinverse(self, rcond: float = 1e-15) -> Tensor:
        """The pseudo-inverse (`tg.linalg.pinv` with rtol = rcond)."""
        return linalg.pinverse(self, rcond)

    def matrix_exp(self) -> Tensor:
        """The matrix exponential (`tg.linalg.matrix_exp`)."""
        return linalg.matrix_exp(self)

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """beta * self + alpha * (mat1 @ mat2)."""
        return matmul.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def kron(self, other: Tensor) -> Tensor:
        """The Kronecker product."""
        return matmul.kron(self, other)

    def cross(self, other: Tensor, dim: int | None = None) -> Tensor:
        """The cross product of 3-vectors along `dim`."""
        return matmul.cross(self, other, dim)

    def rot90(self, k: int = 1, dims: Any = (0, 1)) -> Tensor:
        """Rotated by 90 degrees k times in the plane of `dims`."""
        return movement.rot90(self, k, dims)

    def fliplr(self) -> Tensor:
        """Columns reversed."""
        return movement.fliplr(self)

    def flipud(self) -> Tensor:
        """Rows reversed."""
        return movement.flipud(self)

    def tensor_split(self, indices_or_sections: Any = None, dim: int = 0, *, sections: Any = None,
                     indices: Any = None, tensor_indices_or_sections: Any = None) -> tuple[Tensor, ...]:
        """Near-equal pieces, or the pieces between indices, along `dim` (views)."""
        split = _one_split("tensor_split", indices_or_sections, sections, indices, tensor_indices_or_sections)
        return movement.tensor_split(self, split, dim)

    def hsplit(self, indices_or_sections: Any = None, *, sections: Any = None,
               indices: Any = None) -> tuple[Tensor, ...]:
        """`tensor_split` along dimension 1 (0 for 1-D)."""
        return movement.hsplit(self, _one_split("hsplit", indices_or_sections, sections, indices))

    def vsplit(self, indices_or_sections: Any = None, *, sections: Any = None,
               indices: Any = None) -> tuple[Tensor, ...]:
        """`tensor_split` along dimension 0."""
        return movement.vsplit(self, _one_split("vsplit", indices_or_sections, sections, indices))

    def split_with_sizes(self, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """Pieces of the given sizes along `dim` (views)."""
        return movement.split_with_sizes(self, split_sizes, dim)

    def index_add(self, dim: int, index: Any, source: Tensor, *, alpha: float = 1) -> Tensor:
        """alpha * source added at `index` along `dim` (repeats add up)."""
        return indexing.index_add(self, dim, index, source, alpha=alpha)

    def index_copy(self, dim: int, index: Any, source: Tensor) -> Tensor:
        """source written at `index` along `dim`."""
        return indexing.index_copy(self, dim, index, source)

    def index_fill(self, dim: int, index: Any, value: Any) -> Tensor:
        """`value` written at `index` along `dim`."""
        return indexing.index_fill(self, dim, index, value)

    def masked_scatter(self, mask: Any, source: Tensor) -> Tensor:
        """source's first elements written where mask is True."""
        return indexing.masked_scatter(self, mask, source)

    def take_along_dim(self, indices: Any, dim: int | None = None) -> Tensor:
        """The elements at `indices` along `dim`."""
        return indexing.take_along_dim(self, indices, dim)

    def argwhere(self) -> Tensor:
        """The indices of the non-zero elements."""
        return indexing.argwhere(self)

    def broadcast_to(self, size: Any) -> Tensor:
        """Broadcast to `size` (a view)."""
        return movement.broadcast_to(self, size)

    def unsqueeze(self, dim: int) -> Tensor:
        """Insert a size-1 dimension (a view)."""
        return movement.unsqueeze(self, dim)

    def squeeze(self, dim: Any = None) -> Tensor:
        """Drop size-1 dimensions (a view)."""
        return movement.squeeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dimensions start_dim..end_dim."""
        return movement.flatten(self, start_dim, end_dim)

    def contiguous(self, *, memory_format: Any = None) -> Tensor:
        """self if laid out row-major already, else a row-major copy; with
        `memory_format=tg.channels_last` (4-d) or `tg.channels_last_3d` (5-d), the same in that order."""
        if memory_format is not None and creation.check_memory_format(memory_format, "contiguous").rank:
            if self.is_contiguous(memory_format=memory_format):
                return self
            return self.clone(memory_format=memory_format)
        if memory_format is not None and memory_format is not creation.contiguous_format \
                and not self._data.flags.c_contiguous:
            raise RuntimeError(f"contiguous(): memory_format={memory_format} is unsupported by the "
                               "contiguous operator; only tg.contiguous_format is")
        return movement.contiguous(self)

    def clone(self, *, memory_format: Any = None) -> Tensor:
        """A copy with its own storage, still in the graph; laid out in storage as self is (a
        transposed (3, 4) tensor's clone has strides (1, 3)) unless `memory_format=tg.contiguous_format`."""
        out = movement.clone(self)
        if memory_format is not None:
            creation.check_memory_format(memory_format, "clone")
        if not self._data.flags.c_contiguous or (memory_format is not None and memory_format.rank) or \
                1 in self._data.shape or not self._data.size:  # (size-1 dims' strides: see `laid_out`)
            out._data = creation.laid_out(out._data, self._data, memory_format or creation.preserve_format)
        return out

    def __deepcopy__(self, memo: dict) -> Tensor:
        """`copy.deepcopy`: a leaf's copy keeps its class, grad, dtype, layout and requires_grad; a
        tensor made by an op is refused, as PyTorch."""
        if self._backward is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                               "deepcopy protocol at the moment. For a copy of a tensor made by an op, use "
                               "t.detach().clone()")
        return creation.deep_copied(self, memo)

    def __reduce_ex__(self, protocol: Any) -> tuple:
        """`pickle.dumps(t)`: the values, the class and requires_grad, not the graph or grad (as
        PyTorch). `tg.save` writes files without pickle."""
        return creation.rebuild_tensor, (type(self), self._data, self._requires_grad)

    def __getitem__(self, key: Any) -> Tensor:
        return indexing.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(value, Tensor) and value._base is not None and inplace.is_part(self, key, value):
            return  # `t[key] += v` writes back the view it has just changed: the values are there
        if isinstance(value, Tensor) and value._data.dtype != self._data.dtype:
            indexing.check_put_dtype(self, key, value)
        inplace.setitem(self, key, _on_device_of(ensure_tensor(value, self), self))

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    @property
    def device(self) -> Any:
        """Where the data lives: `tg.device("cpu")` for a numpy array, `"cuda:N"` for a CuPy one."""
        return device_module.device_of(self._data)

    def to(self, *args: Any, dtype: Any = None, device: Any = None, non_blocking: bool = False,
           copy: bool = False, memory_format: Any = None) -> Tensor:
        """This tensor in another dtype and/or on another device: `to(tg.float64)`, `to("cuda")`,
        `to("cpu", tg.float64)`, `to(other)` (other's dtype and device). Self if nothing changes,
        unless `copy=True`; a new tensor keeps self's layout in storage, as `clone`. After the
        dtype, PyTorch's positional `non_blocking` and `copy` (booleans).

        Floating casts and moves keep the gradient flowing back; integer casts cut it.
        """
        flags = []
        for arg in args:
            if isinstance(arg, Tensor):
                dtype, device = arg.dtype, arg.device
            elif isinstance(arg, bool):
                flags.append(arg)  # non_blocking, then copy
            elif isinstance(arg, str | device_module.device):
                device = arg
            else:
                dtype = arg
        copy = flags[1] if len(flags) > 1 else copy
        layout = creation.check_memory_format(
            creation.preserve_format if memory_format is None else memory_format, "to")
        out = self if device is None else _move(self, device_module.as_device(device))
        out = out if dtype is None else _cast(out, np.dtype(dtype), layout)
        if layout is not creation.preserve_format and not (
                creation.suggested_format(out.shape, out.stride()) is layout if out is self
                else out.is_contiguous(memory_format=layout)):
            return out.clone(memory_format=layout)  # as PyTorch: self only where its strides suggest `layout`
        return out.clone(memory_format=layout) if copy and out is self else out

    def cpu(self) -> Tensor:
        """This tensor on the CPU (itself if it is there)."""
        return _move(self, device_module.CPU)

    def cuda(self, device: Any = None) -> Tensor:
        """This tensor on a GPU (`"cuda"`, or `"cuda:N"` for an index N)."""
        target = "cuda" if device is None else device if isinstance(device, str) else f"cuda:{device}"
        return _move(self, device_module.as_device(target))

    def float(self, memory_format: Any = None) -> Tensor:
        """A float32 copy (or self, if already float32)."""
        return _converted(self, float32, memory_format, "float")

    def double(self, memory_format: Any = None) -> Tensor:
        """A float64 copy (or self, if already float64)."""
        return _converted(self, float64, memory_format, "double")

    def cfloat(self, memory_format: Any = None) -> Tensor:
        """A complex64 copy (or self, if already complex64)."""
        return _converted(self, np.dtype(np.complex64), memory_format, "cfloat")

    def cdouble(self, memory_format: Any = None) -> Tensor:
        """A complex128 copy (or self, if already complex128)."""
        return _converted(self, np.dtype(np.complex128), memory_format, "cdouble")

    def half(self, memory_format: Any = None) -> Tensor:
        """A float16 copy (or self, if already float16)."""
        return _converted(self, float16, memory_format, "half")

    def long(self, memory_format: Any = None) -> Tensor:
        """An int64 copy, cut from the graph (or self, if already int64)."""
        return _converted(self, int64, memory_format, "long")

    def int(self, memory_format: Any = None) -> Tensor:
        """An int32 copy, cut from the graph (or self, if already int32); floats are truncated."""
        return _converted(self, int32, memory_format, "int")

    def short(self, memory_format: Any = None) -> Tensor:
        """An int16 copy, cut from the graph (or self, if already int16)."""
        return _converted(self, int16, memory_format, "short")

    def char(self, memory_format: Any = None) -> Tensor:
        """An int8 copy, cut from the graph (or self, if already int8)."""
        return _converted(self, int8, memory_format, "char")

    def byte(self, memory_format: Any = None) -> Tensor:
        """A uint8 copy, cut from the graph (or self, if already uint8)."""
        return _converted(self, uint8, memory_format, "byte")

    def bool(self, memory_format: Any = None) -> Tensor:
        """A bool copy (True where nonzero), cut from the graph (or self, if already bool)."""
        return _converted(self, bool_, memory_format, "bool")

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """With no argument, the type's name as PyTorch writes it ("torch.FloatTensor"); else this
        tensor in that dtype: a dtype, a legacy type (`tg.FloatTensor`) or its name."""
        if dtype is None:
            kind = compat.LEGACY_TYPES.get(self.dtype)
            name = kind.__name__ if kind is not None else f"{self.dtype.name}Tensor"
            return ("torch.cuda." if self.device.type == "cuda" else "torch.") + name
        device = "cuda" if isinstance(dtype, str) and ".cuda." in dtype else None
        return self.to(dtype=compat.legacy_type(dtype), device=device)

    @property
    def is_cuda(self) -> bool:
        """Whether the tensor lives on a GPU."""
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        """Whether the tensor lives on the CPU."""
        return self.device.type == "cpu"

    # What PyTorch code checks before it takes a fast path: tensorgrad has dense strided arrays on
    # the CPU or a CUDA GPU only, so each of these is False, as for a plain PyTorch tensor.
    is_sparse = is_sparse_csr = is_quantized = is_meta = is_mps = is_nested = is_xpu = is_mkldnn = \
        is_vulkan = is_ipu = is_mtia = is_maia = property(lambda self: False, doc="False: a dense tensor.")

    @property
    def layout(self) -> layouts.layout:
        """How the elements are organised: always `tg.strided` (a dense strided array)."""
        return layouts.strided

    def is_pinned(self, device: Any = None) -> bool:
        """Whether the tensor sits in page-locked host memory: never, in tensorgrad."""
        return False

    def pin_memory(self, device: Any = None) -> Tensor:
        """A copy in page-locked memory, for faster copies to a GPU. Without a GPU this is
        PyTorch's RuntimeError; with one, a plain copy (CuPy's transfers need no pinning)."""
        layouts.check_pin_memory(True, "pin_memory")
        if self.is_cuda:
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        return self.clone()

    def data_ptr(self) -> int:
        """The memory address of the first element (views of one storage share their base's)."""
        return device_module.data_address(self._data)

    def const_data_ptr(self) -> int:
        """`data_ptr()`, for reading only (tensorgrad has no copy-on-write storage to materialise)."""
        return device_module.data_address(self._data)

    def dim_order(self, *, ambiguity_check: bool | list = False) -> tuple[int, ...]:
        """The dimensions from the outermost in memory to the innermost (`(0, 2, 3, 1)` for a
        channels-last tensor); see `tensorgrad.layouts.dim_order` for `ambiguity_check`."""
        return layouts.dim_order(self, ambiguity_check)

    def to_dense(self, dtype: Any = None, *, masked_grad: bool = True) -> Tensor:
        """Self (a strided tensor is dense already), or a copy in `dtype` (recorded, as `to`).
        `masked_grad` is for sparse tensors, which tensorgrad has none of."""
        if dtype is not None and not movement.is_dtype(dtype):
            raise TypeError("to_dense(): argument 'dtype' (position 1) must be dtype, not "
                            f"{type(dtype).__name__}")
        return self if dtype is None or dtype == self._data.dtype else self.to(dtype)

    def as_subclass(self, cls: type) -> Tensor:
        """This tensor as an instance of `cls` (a Tensor subclass): the same memory, a view in the graph."""
        return creation.as_subclass(self, cls)

    def is_set_to(self, tensor: Tensor) -> bool:
        """Whether `tensor` views the same memory with the same offset, sizes and strides."""
        return layouts.is_set_to(self, tensor)

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place: it becomes a leaf that does not require grad."""
        if self._base is not None:
            raise RuntimeError("detach_(): can't detach views in-place; use detach() instead")
        self._backward = None
        self.parents = ()
        self.op = ""
        self._seq = None
        self._requires_grad = False
        return self

    def new(self, *args: Any, device: Any = None) -> Tensor:
        """PyTorch's legacy constructor in this tensor's dtype and on its device: `t.new(2, 3)` is
        uninitialised of that shape, `t.new(data)` holds data, `t.new()` is empty."""
        if len(args) == 1 and not isinstance(args[0], int | np.integer) and not (
                isinstance(args[0], tuple) and all(isinstance(v, int | np.integer) for v in args[0])):
            return self.new_tensor(args[0], device=device)
        return self.new_empty(*(args or (0,)), device=device)

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor in `other`'s dtype and on its device (self if it is both already)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as(): argument 'other' must be a Tensor, got {type(other).__name__}")
        return self.to(other)

    # --- new tensors in this one's dtype and on its device ---------------------------------------

    def new_tensor(self, data: Any, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
        """A copy of `data` (a new leaf), in this tensor's dtype and on its device unless given."""
        return creation.tensor(data.detach() if isinstance(data, Tensor) else data,
                               **self._new_options(dtype, device, requires_grad))

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **named: Any) -> Tensor:
        """Zeros of `size` (`new_zeros(2, 3)`, `new_zeros((2, 3))` or `new_zeros(size=(2, 3))`), in
        this tensor's dtype and on its device unless given."""
        return creation.zeros(*size, **self._new_options(dtype, device, requires_grad), **named)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False, **named: Any) -> Tensor:
        """Ones of `size` (as `new_zeros`), in this tensor's dtype and on its device unless given."""
        return creation.ones(*size, **self._new_options(dtype, device, requires_grad), **named)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **named: Any) -> Tensor:
        """An uninitialised tensor of `size` (as `new_zeros`), in this tensor's dtype and on its
        device unless given."""
        return creation.empty(*size, **self._new_options(dtype, device, requires_grad), **named)

    def new_full(self, size: Sequence[int], fill_value: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """`fill_value` in every element of `size`, in this tensor's dtype and on its device unless given."""
        return creation.full(size, fill_value, **self._new_options(dtype, device, requires_grad))

    def _new_options(self, dtype: Any, device: Any, requires_grad: bool) -> dict[str, Any]:
        """The new_* methods' keywords: this tensor's dtype and device where none is given."""
        return {"dtype": self.dtype if dtype is None else dtype,
                "device": self.device if device is None else device, "requires_grad": requires_grad}

    # --- more shape ops and indexing ops (views where PyTorch gives views) -----------------------

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        """`length` elements from `start` along `dim` (a view)."""
        return movement.narrow(self, dim, start, length)

    def split(self, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """Pieces of the given size, or sizes, along `dim` (views)."""
        return movement.split(self, split_size, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """At most `chunks` equal pieces along `dim` (views)."""
        return movement.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """Every slice along `dim`, that dimension removed (views)."""
        return movement.unbind(self, dim)

    def unflatten(self, dim: int, sizes: Any) -> Tensor:
        """Split dimension `dim` into `sizes` (a view)."""
        return movement.unflatten(self, dim, sizes)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        """Move dimensions to new positions (a view)."""
        return movement.movedim(self, source, destination)

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        """Swap two dimensions (a view)."""
        return movement.swapaxes(self, axis0, axis1)

    def flip(self, *axes: Any, dims: Any = None) -> Tensor:
        """Reversed along `dims` (a copy); `t.flip(0, 1)` or `t.flip((0, 1))`."""
        axes = axes if dims is None else _one_shape(axes, dims, "flip", "dims")
        return movement.flip(self, axes[0] if len(axes) == 1 else axes)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        """Shifted cyclically along `dims`."""
        return movement.roll(self, shifts, dims)

    def repeat(self, *sizes: Any, repeats: Any = None) -> Tensor:
        """Tiled `sizes` times along each dimension."""
        if repeats is not None:  # `repeat(repeats=(2, 1))`, PyTorch's keyword
            sizes = _one_shape(sizes, repeats, "repeat", "repeats")
        return movement.repeat(self, *sizes)

    def tile(self, *reps: Any, dims: Any = None) -> Tensor:
        """Tiled, fewer sizes than dims meaning 1 for the leading ones; `t.tile(2, 1)` or `t.tile((2, 1))`."""
        reps = reps if dims is None else _one_shape(reps, dims, "tile", "dims")
        return movement.tile(self, reps[0] if len(reps) == 1 else reps)

    def repeat_interleave(self, repeats: Any = None, dim: int | None = None, *,
                          output_size: int | None = None) -> Tensor:
        """Each element repeated `repeats` times along `dim`."""
        return movement.repeat_interleave(self, repeats, dim, output_size=output_size)

    def diag(self, diagonal: int = 0) -> Tensor:
        """A vector on a matrix's diagonal, or a matrix's diagonal as a vector."""
        return movement.diag(self, diagonal)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """The diagonal of the (dim1, dim2) planes (a view)."""
        return movement.diagonal(self, offset, dim1, dim2)

    def tril(self, diagonal: int = 0) -> Tensor:
        """The lower triangle, zeros above."""
        return movement.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        """The upper triangle, zeros below."""
        return movement.triu(self, diagonal)

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        """Sliding windows along `dimension` as a new last dimension (a view)."""
        return movement.unfold(self, dimension, size, step)

    def stft(self, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
             window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
             normalized: bool = False, onesided: bool | None = None, return_complex: bool | None = None,
             align_to_window: bool | None = None) -> Tensor:
        """The short-time Fourier transform (`tg.stft`)."""
        from tensorgrad import fft  # (fft is built on nn.functional, imported after this module)
        return fft.stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                        return_complex, align_to_window)

    def istft(self, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
              window: Tensor | None = None, center: bool = True, normalized: bool = False,
              onesided: bool | None = None, length: int | None = None,
              return_complex: bool = False) -> Tensor:
        """The inverse short-time Fourier transform (`tg.istft`)."""
        from tensorgrad import fft
        return fft.istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                         return_complex)

    def as_strided(self, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
        """A view with the given sizes and strides over this tensor's storage."""
        return movement.as_strided(self, size, stride, storage_offset)

    def as_strided_(self, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
        """self becomes the view `as_strided(size, stride, storage_offset)` of its storage; returns
        self. In the graph, as the out-of-place as_strided of self's old history (see `view_inplace`)."""
        return inplace.view_inplace(self, movement.as_strided, size, stride, storage_offset,
                                    name="as_strided_")

    def conj_physical(self) -> Tensor:
        """The complex conjugate, computed; a real tensor's values, as a new tensor."""
        from tensorgrad import compat

        return compat.conj_physical(self)

    def conj_physical_(self) -> Tensor:
        """The complex conjugate, in place (no change to a real tensor); returns self."""
        from tensorgrad import compat

        return compat.conj_physical_(self)

    def gather(self, dim: int, index: Any, *, sparse_grad: bool = False) -> Tensor:
        """Values picked along `dim` by `index`."""
        return indexing.gather(self, dim, index)

    def scatter(self, dim: int, index: Any, src: Any = None, value: Any = None,
                reduce: str | None = None) -> Tensor:
        """A copy with src (or value) written at `index` along `dim`."""
        return indexing.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: int, index: Any, src: Tensor) -> Tensor:
        """A copy with src added at `index` along `dim`."""
        return indexing.scatter_add(self, dim, index, src)

    def scatter_reduce(self, dim: int, index: Any, src: Tensor, reduce: str,
                       include_self: bool = True) -> Tensor:
        """A copy with src combined in at `index` by sum, prod, mean, amax or amin."""
        return indexing.scatter_reduce(self, dim, index, src, reduce, include_self)

    def index_select(self, dim: int, index: Any) -> Tensor:
        """The slices at `index` along `dim`."""
        return indexing.index_select(self, dim, index)

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """`value` where mask is True."""
        return indexing.masked_fill(self, mask, value)

    def masked_select(self, mask: Any) -> Tensor:
        """The elements where mask is True, as a 1-D tensor."""
        return indexing.masked_select(self, mask)

    def nonzero(self, as_tuple: bool = False) -> Any:
        """Indices of the non-zero elements."""
        return indexing.nonzero(self, as_tuple)

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Tensor:
        """`nonzero()` cut or padded (with rows of `fill_value`) to exactly `size` rows."""
        from tensorgrad import compat

        return compat.nonzero_static(self, size=size, fill_value=fill_value)

    def take(self, index: Any) -> Tensor:
        """Elements at `index` into the flattened tensor."""
        return indexing.take(self, index)

    def where(self, condition: Any, other: Any) -> Tensor:
        """self where condition is True, else other."""
        return elementwise.where(condition, self, other)

    # --- randomness (see `tensorgrad.creation`) -------------------------------------------------

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill in place with exponential samples of rate `lambd`; returns self."""
        return creation.exponential_(self, lambd, generator=generator)

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill in place with Cauchy samples of that median and scale; returns self."""
        from tensorgrad import inplace_functions

        return inplace_functions.cauchy_(self, median, sigma, generator)

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
        """Fill in place with exp(N(mean, std**2)) samples; returns self."""
        from tensorgrad import inplace_functions

        return inplace_functions.log_normal_(self, mean, std, generator)

    def geometric_(self, p: float, *, generator: Any = None) -> Tensor:
        """Fill in place with geometric samples (trials to the first success, 1, 2, ...); returns self."""
        from tensorgrad import inplace_functions

        return inplace_functions.geometric_(self, p, generator)

    def random_(self, low: int = 0, high: int | None = None, *, generator: Any = None,
                **bounds: int) -> Tensor:
        """Fill in place with integers uniform in [low, high) (`random_(high)` too); returns self."""
        low, high = _from_to("random_", low, high, bounds)
        return creation.random_(self, low, high, generator=generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        """Fill in place with 1 with probability `p` (a number or a tensor), else 0; returns self."""
        if isinstance(p, Tensor):
            if self._data.dtype.kind == "c":  # (the draws come from p: self's dtype is checked here)
                raise checks.UnsupportedDtypeError(f"bernoulli_(): not implemented for dtype {self.dtype} "
                                                   f"(self of shape {self.shape}), as in PyTorch")
            draws = creation.bernoulli(p.detach().expand(self.shape), generator=generator)
        else:
            draws = creation.bernoulli(self.detach(), p, generator=generator)
        return self.copy_(draws)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with samples from N(mean, std**2), in place."""
        return creation.normal_(self, mean, std, generator=generator)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None, **bounds: float) -> Tensor:
        """Fill with samples from U[a, b), in place."""
        a, b = _from_to("uniform_", a, b, bounds)
        return creation.uniform_(self, a, b, generator=generator)

    def bernoulli(self, p: float | None = None, *, generator: Any = None) -> Tensor:
        """1 with probability self (or p) elementwise, else 0."""
        return creation.bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator: Any = None) -> Tensor:
        """Indices sampled from each row's categorical distribution."""
        return creation.multinomial(self, num_samples, replacement, generator=generator)

    # --- in place: each bumps the storage's version counter -----------------------------------

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """self += other (alpha * other), in place."""
        if alpha != 1:
            other = elementwise.mul(other, alpha) if isinstance(other, Tensor) else other * alpha
        return inplace.arithmetic_inplace(self, np.add, elementwise.add, other, "add_")

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """self -= other (alpha * other), in place."""
        if alpha != 1:
            other = elementwise.mul(other, alpha) if isinstance(other, Tensor) else other * alpha
        return inplace.arithmetic_inplace(self, np.subtract, elementwise.sub, other, "sub_")

    def mul_(self, other: Any) -> Tensor:
        """self *= other, in place."""
        return inplace.arithmetic_inplace(self, np.multiply, elementwise.mul, other, "mul_")

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """self /= other, in place (rounded as `rounding_mode` says: 'trunc' or 'floor')."""
        if rounding_mode is not None:
            return inplace.apply_inplace(self, elementwise.div, other, name="div_",
                                         rounding_mode=rounding_mode)
        return inplace.arithmetic_inplace(self, np.true_divide, elementwise.div, other, "div_")

    def zero_(self) -> Tensor:
        """Set every element to 0, in place."""
        return inplace.apply_inplace(self, inplace.fill, 0, name="zero_")

    def fill_(self, value: float) -> Tensor:
        """Set every element to `value`, in place."""
        return inplace.apply_inplace(self, inplace.fill, value, name="fill_")

    def copy_(self, other: Any, non_blocking: bool = False) -> Tensor:
        """Copy other's values (broadcast to self's shape) into self, in place."""
        return inplace.apply_inplace(self, inplace.copy, _on_device_of(ensure_tensor(other, self), self),
                                     name="copy_")

    # --- index writes: index_put, put, index_reduce, the *_scatter family (each in `indexing`; the
    # in-place forms written back by `inplace.apply_inplace`), and the storage-level writes ------

    def index_put_(self, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
        """self[indices] = values (+= with `accumulate`), in place; `indices` a tuple of index tensors."""
        return inplace.apply_inplace(self, indexing.index_put, indices, values, accumulate, name="index_put_")

    def index_put(self, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
        """A copy with self[indices] = values (+= with `accumulate`): `tg.index_put`."""
        return indexing.index_put(self, indices, values, accumulate)

    def put_(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        """source's elements written (added, with `accumulate`) at `index` of the flattened self, in place."""
        return inplace.apply_inplace(self, indexing.put, index, source, accumulate, name="put_")

    def put(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        """A copy with source's elements at `index` of the flattened self: `tg.put`."""
        return indexing.put(self, index, source, accumulate)

    def index_reduce_(self, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                      include_self: bool = True) -> Tensor:
        """`index_reduce`, in place."""
        # (source among the arguments, not in a closure: apply_inplace records when it requires grad)
        op = functools.partial(indexing.index_reduce, include_self=include_self)
        return inplace.apply_inplace(self, op, dim, index, source, reduce, name="index_reduce_")

    def index_reduce(self, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
        """source's slices combined into self's at `index` along dim by prod, mean, amax or amin."""
        return indexing.index_reduce(self, dim, index, source, reduce, include_self=include_self)

    def select_scatter(self, src: Tensor, dim: int, index: int) -> Tensor:
        """A copy with src written at self.select(dim, index)."""
        return indexing.select_scatter(self, src, dim, index)

    def slice_scatter(self, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                      step: int = 1) -> Tensor:
        """A copy with src written at the slice start:end:step along dim."""
        return indexing.slice_scatter(self, src, dim, start, end, step)

    def diagonal_scatter(self, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """A copy with src written at self.diagonal(offset, dim1, dim2)."""
        return indexing.diagonal_scatter(self, src, offset, dim1, dim2)

    def as_strided_scatter(self, src: Tensor, size: Sequence[int], stride: Sequence[int],
                           storage_offset: int | None = None) -> Tensor:
        """A copy with src written where self.as_strided(size, stride, storage_offset) reads."""
        return indexing.as_strided_scatter(self, src, size, stride, storage_offset)

    def fill_diagonal_(self, fill_value: Any, wrap: bool = False) -> Tensor:
        """`fill_value` on the main diagonal (restarting down a tall matrix with `wrap`), in place."""
        return inplace.apply_inplace(self, indexing.fill_diagonal, fill_value, wrap, name="fill_diagonal_")

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        """A contiguous copy of self.narrow(dim, start, length)."""
        return movement.narrow_copy(self, dim, start, length)

    def resize_(self, *sizes: Any, size: Any = None) -> Tensor:
        """self in shape `sizes` over its storage's elements in memory order (grown with zeros if
        need be); not for a tensor that requires grad."""
        if size is not None:  # `resize_(size=(2, 3))`, PyTorch's keyword
            sizes = _one_shape(sizes, size, "resize_", "size")
        if not sizes:
            raise TypeError("resize_() missing 1 required positional argument: 'size'")
        return inplace.resize(self, checks.sizes(sizes, "resize_"))

    def resize_as_(self, the_template: Tensor) -> Tensor:
        """`resize_` to the_template's shape."""
        if not isinstance(the_template, Tensor):
            raise TypeError(f"resize_as_(): argument 'the_template' must be Tensor, not "
                            f"{type(the_template).__name__}")
        return inplace.resize(self, the_template.shape, "resize_as_")

    def apply_(self, callable: Any) -> Tensor:  # noqa: A002
        """Each element replaced by callable(element), a Python call per element (CPU only)."""
        return inplace.apply_function(self, callable, "apply_")

    def map_(self, tensor: Tensor, callable: Any) -> Tensor:  # noqa: A002
        """Each element replaced by callable(element, tensor's element), tensor broadcast (CPU only)."""
        return inplace.map_function(self, tensor, callable)

    def new_empty_strided(self, size: Sequence[int], stride: Sequence[int], dtype: Any = None,
                          device: Any = None, requires_grad: bool = False) -> Tensor:
        """An uninitialised tensor of `size` with strides `stride` (in elements), in this tensor's
        dtype and on its device unless given."""
        if not isinstance(size, Sequence) or not isinstance(stride, Sequence):
            raise TypeError(f"new_empty_strided(): size and stride must be tuples of ints, got "
                            f"{type(size).__name__} and {type(stride).__name__}")
        shape, steps, extent = checks.strided_layout(size, stride, "new_empty_strided()")
        options = self._new_options(dtype, device, False)
        if requires_grad and np.dtype(options["dtype"]).kind not in "fc":
            raise RuntimeError(f"new_empty_strided(): only tensors of floating point dtype can require "
                               f"gradients, got {np.dtype(options['dtype'])}")
        storage = creation.empty(extent, **options).data
        if device is None:  # this tensor's device, and its kind of array
            storage = device_module.array_like(storage, self._data)
        data = device_module.strided_view(storage, shape, [s * storage.itemsize for s in steps])
        return new_leaf(data, requires_grad)

    # Unary math and the other ops' in-place forms: the out-of-place op, written back (see
    # `inplace.apply_inplace`), as PyTorch derives them.

    def exp_(self) -> Tensor:
        """self = exp(self), in place."""
        return inplace.apply_inplace(self, elementwise.exp, name="exp_")

    def log_(self) -> Tensor:
        """self = log(self), in place."""
        return inplace.apply_inplace(self, elementwise.log, name="log_")

    def sqrt_(self) -> Tensor:
        """self = sqrt(self), in place."""
        return inplace.apply_inplace(self, elementwise.sqrt, name="sqrt_")

    def square_(self) -> Tensor:
        """self = self ** 2, in place."""
        return inplace.apply_inplace(self, elementwise.square, name="square_")

    def pow_(self, exponent: Any) -> Tensor:
        """self = self ** exponent, in place."""
        return inplace.apply_inplace(self, elementwise.pow, exponent, name="pow_")

    def abs_(self) -> Tensor:
        """self = |self|, in place."""
        return inplace.apply_inplace(self, elementwise.abs, name="abs_")

    def neg_(self) -> Tensor:
        """self = -self, in place."""
        return inplace.apply_inplace(self, elementwise.neg, name="neg_")

    def reciprocal_(self) -> Tensor:
        """self = 1 / self, in place."""
        return inplace.apply_inplace(self, elementwise.reciprocal, name="reciprocal_")

    def sin_(self) -> Tensor:
        """self = sin(self), in place."""
        return inplace.apply_inplace(self, elementwise.sin, name="sin_")

    def cos_(self) -> Tensor:
        """self = cos(self), in place."""
        return inplace.apply_inplace(self, elementwise.cos, name="cos_")

    def tanh_(self) -> Tensor:
        """self = tanh(self), in place."""
        return inplace.apply_inplace(self, elementwise.tanh, name="tanh_")

    def sigmoid_(self) -> Tensor:
        """self = sigmoid(self), in place."""
        return inplace.apply_inplace(self, elementwise.sigmoid, name="sigmoid_")

    def relu_(self) -> Tensor:
        """self = max(self, 0), in place."""
        return inplace.apply_inplace(self, elementwise.relu, name="relu_")

    def floor_(self) -> Tensor:
        """self rounded down, in place."""
        return inplace.apply_inplace(self, elementwise.floor, name="floor_")

    def ceil_(self) -> Tensor:
        """self rounded up, in place."""
        return inplace.apply_inplace(self, elementwise.ceil, name="ceil_")

    def round_(self, *, decimals: int = 0) -> Tensor:
        """self rounded half to even (to `decimals` places), in place."""
        return inplace.apply_inplace(self, lambda x: elementwise.round(x, decimals=decimals), name="round_")

    def trunc_(self) -> Tensor:
        """self rounded toward zero, in place."""
        return inplace.apply_inplace(self, elementwise.trunc, name="trunc_")

    def sign_(self) -> Tensor:
        """self = sign(self), in place."""
        return inplace.apply_inplace(self, elementwise.sign, name="sign_")

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        """self limited to [min, max], in place."""
        return inplace.apply_inplace(self, elementwise.clamp, min, max, name="clamp_")

    def clamp_min_(self, min: Any) -> Tensor:  # noqa: A002
        """self = max(self, min), in place."""
        return inplace.apply_inplace(self, elementwise.clamp_min, min, name="clamp_min_")

    def clamp_max_(self, max: Any) -> Tensor:  # noqa: A002
        """self = min(self, max), in place."""
        return inplace.apply_inplace(self, elementwise.clamp_max, max, name="clamp_max_")

    def fmod_(self, other: Any) -> Tensor:
        """self = fmod(self, other), in place."""
        return inplace.apply_inplace(self, elementwise.fmod, other, name="fmod_")

    # --- more in-place forms, and NumPy's alias names (arccos, divide, less, ...) ------------------
    # Each in-place form is its out-of-place op written back (`inplace.apply_inplace`); a result
    # that can't be stored in self's dtype (a float into an integer tensor) raises, as in PyTorch.

    def absolute_(self) -> Tensor:
        """self = |self|, in place (`abs_`)."""
        return inplace.apply_inplace(self, elementwise.abs, name="absolute_")

    def acos_(self) -> Tensor:
        """self = acos(self), in place."""
        return inplace.apply_inplace(self, elementwise.acos, name="acos_")

    def arccos_(self) -> Tensor:
        """self = acos(self), in place (`acos_`)."""
        return inplace.apply_inplace(self, elementwise.acos, name="arccos_")

    def acosh_(self) -> Tensor:
        """self = acosh(self), in place."""
        return inplace.apply_inplace(self, elementwise.acosh, name="acosh_")

    def arccosh_(self) -> Tensor:
        """self = acosh(self), in place (`acosh_`)."""
        return inplace.apply_inplace(self, elementwise.acosh, name="arccosh_")

    def asin_(self) -> Tensor:
        """self = asin(self), in place."""
        return inplace.apply_inplace(self, elementwise.asin, name="asin_")

    def arcsin_(self) -> Tensor:
        """self = asin(self), in place (`asin_`)."""
        return inplace.apply_inplace(self, elementwise.asin, name="arcsin_")

    def asinh_(self) -> Tensor:
        """self = asinh(self), in place."""
        return inplace.apply_inplace(self, elementwise.asinh, name="asinh_")

    def arcsinh_(self) -> Tensor:
        """self = asinh(self), in place (`asinh_`)."""
        return inplace.apply_inplace(self, elementwise.asinh, name="arcsinh_")

    def atan_(self) -> Tensor:
        """self = atan(self), in place."""
        return inplace.apply_inplace(self, elementwise.atan, name="atan_")

    def arctan_(self) -> Tensor:
        """self = atan(self), in place (`atan_`)."""
        return inplace.apply_inplace(self, elementwise.atan, name="arctan_")

    def atanh_(self) -> Tensor:
        """self = atanh(self), in place."""
        return inplace.apply_inplace(self, elementwise.atanh, name="atanh_")

    def arctanh_(self) -> Tensor:
        """self = atanh(self), in place (`atanh_`)."""
        return inplace.apply_inplace(self, elementwise.atanh, name="arctanh_")

    def cosh_(self) -> Tensor:
        """self = cosh(self), in place."""
        return inplace.apply_inplace(self, elementwise.cosh, name="cosh_")

    def sinh_(self) -> Tensor:
        """self = sinh(self), in place."""
        return inplace.apply_inplace(self, elementwise.sinh, name="sinh_")

    def tan_(self) -> Tensor:
        """self = tan(self), in place."""
        return inplace.apply_inplace(self, elementwise.tan, name="tan_")

    def deg2rad_(self) -> Tensor:
        """self = self * pi / 180, in place."""
        return inplace.apply_inplace(self, elementwise.deg2rad, name="deg2rad_")

    def rad2deg_(self) -> Tensor:
        """self = self * 180 / pi, in place."""
        return inplace.apply_inplace(self, elementwise.rad2deg, name="rad2deg_")

    def erf_(self) -> Tensor:
        """self = erf(self), in place."""
        return inplace.apply_inplace(self, elementwise.erf, name="erf_")

    def erfc_(self) -> Tensor:
        """self = 1 - erf(self), in place."""
        return inplace.apply_inplace(self, elementwise.erfc, name="erfc_")

    def exp2_(self) -> Tensor:
        """self = 2 ** self, in place."""
        return inplace.apply_inplace(self, elementwise.exp2, name="exp2_")

    def expm1_(self) -> Tensor:
        """self = e ** self - 1, in place."""
        return inplace.apply_inplace(self, elementwise.expm1, name="expm1_")

    def fix_(self) -> Tensor:
        """self rounded toward zero, in place (`trunc_`)."""
        return inplace.apply_inplace(self, elementwise.trunc, name="fix_")

    def frac_(self) -> Tensor:
        """self = self - trunc(self), in place."""
        return inplace.apply_inplace(self, elementwise.frac, name="frac_")

    def log10_(self) -> Tensor:
        """self = log10(self), in place."""
        return inplace.apply_inplace(self, elementwise.log10, name="log10_")

    def log1p_(self) -> Tensor:
        """self = ln(1 + self), in place."""
        return inplace.apply_inplace(self, elementwise.log1p, name="log1p_")

    def log2_(self) -> Tensor:
        """self = log2(self), in place."""
        return inplace.apply_inplace(self, elementwise.log2, name="log2_")

    def negative_(self) -> Tensor:
        """self = -self, in place (`neg_`)."""
        return inplace.apply_inplace(self, elementwise.neg, name="negative_")

    def rsqrt_(self) -> Tensor:
        """self = 1 / sqrt(self), in place."""
        return inplace.apply_inplace(self, elementwise.rsqrt, name="rsqrt_")

    def sgn_(self) -> Tensor:
        """self = sgn(self) (`sign` for real tensors), in place."""
        return inplace.apply_inplace(self, elementwise.sgn, name="sgn_")

    def sinc_(self) -> Tensor:
        """self = sin(pi self) / (pi self), 1 at 0, in place."""
        return inplace.apply_inplace(self, elementwise.sinc, name="sinc_")

    def logit_(self, eps: float | None = None) -> Tensor:
        """self = log(self / (1 - self)), self clamped to [eps, 1 - eps] first if eps is given, in place."""
        return inplace.apply_inplace(self, elementwise.logit, eps, name="logit_")

    def atan2_(self, other: Any) -> Tensor:
        """self = atan2(self, other), the angle of (other, self), in place."""
        other = inplace.require_tensor(other, "atan2_")
        return inplace.apply_inplace(self, elementwise.atan2, other, name="atan2_")

    def arctan2_(self, other: Any) -> Tensor:
        """self = atan2(self, other), in place (`atan2_`)."""
        other = inplace.require_tensor(other, "arctan2_")
        return inplace.apply_inplace(self, elementwise.atan2, other, name="arctan2_")

    def copysign_(self, other: Any) -> Tensor:
        """self = |self| with the sign of other, in place."""
        return inplace.apply_inplace(self, elementwise.copysign, other, name="copysign_")

    def floor_divide_(self, other: Any) -> Tensor:
        """self = self // other, rounded down, in place."""
        return inplace.apply_inplace(self, elementwise.floor_divide, other, name="floor_divide_")

    def heaviside_(self, values: Any) -> Tensor:
        """self = 0 below 0, 1 above 0, `values` at 0, in place."""
        values = inplace.require_tensor(values, "heaviside_", "values")
        return inplace.apply_inplace(self, elementwise.heaviside, values, name="heaviside_")

    def hypot_(self, other: Any) -> Tensor:
        """self = sqrt(self^2 + other^2), in place."""
        other = inplace.require_tensor(other, "hypot_")
        return inplace.apply_inplace(self, elementwise.hypot, other, name="hypot_")

    def xlogy_(self, other: Any) -> Tensor:
        """self = self * log(other) (0 where self is 0), in place."""
        return inplace.apply_inplace(self, elementwise.xlogy, other, name="xlogy_")

    def true_divide_(self, other: Any) -> Tensor:
        """self = self / other, in floating point, in place."""
        return inplace.apply_inplace(self, elementwise.div, other, name="true_divide_")

    def multiply_(self, other: Any) -> Tensor:
        """self = self * other, in place (`mul_`)."""
        return inplace.apply_inplace(self, elementwise.mul, other, name="multiply_")

    def float_power_(self, exponent: Any) -> Tensor:
        """self = self ** exponent computed in float64 (complex128 for complex operands), in place:
        self must have that dtype."""
        inplace.require_dtype(self, elementwise.float_power_dtype(self, exponent), "float_power_")
        return inplace.apply_inplace(self, elementwise.float_power, exponent, name="float_power_")

    def divide_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """self = self / other, in place; rounded toward zero or down by `rounding_mode`."""
        return inplace.apply_inplace(self, lambda x, y: elementwise.div(x, y, rounding_mode=rounding_mode),
                                     other, name="divide_")

    def subtract_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """self = self - alpha * other, in place (`sub_`)."""
        return inplace.apply_inplace(self, lambda x, y: elementwise.sub(x, y, alpha=alpha), other,
                                     name="subtract_")

    def cumsum_(self, dim: int, *, dtype: Any = None) -> Tensor:
        """self = its running sum along dim, in place (`dtype`, if given, must be self's)."""
        if dtype is not None:
            inplace.require_dtype(self, dtype, "cumsum_")
        return inplace.apply_inplace(self, reduce.cumsum, dim, name="cumsum_")

    def cumprod_(self, dim: int, *, dtype: Any = None) -> Tensor:
        """self = its running product along dim, in place (`dtype`, if given, must be self's)."""
        if dtype is not None:
            inplace.require_dtype(self, dtype, "cumprod_")
        return inplace.apply_inplace(self, reduce.cumprod, dim, name="cumprod_")

    def tril_(self, diagonal: int = 0) -> Tensor:
        """Zero the elements above `diagonal` of the last two dims, in place."""
        return inplace.apply_inplace(self, movement.tril, diagonal, name="tril_")

    def triu_(self, diagonal: int = 0) -> Tensor:
        """Zero the elements below `diagonal` of the last two dims, in place."""
        return inplace.apply_inplace(self, movement.triu, diagonal, name="triu_")

    def scatter_reduce_(self, dim: int, index: Any, src: Tensor, reduce: str, *,
                        include_self: bool = True) -> Tensor:
        """`scatter_reduce`, in place: src's elements combined into self at `index` along `dim`."""
        return inplace.apply_inplace(self, indexing.scatter_reduce, dim, index, src, reduce, include_self,
                                     name="scatter_reduce_")

    def logical_and_(self, other: Any) -> Tensor:
        """self = self and other (nonzero is true), as 0 and 1 in self's dtype, in place."""
        other = inplace.require_tensor(other, "logical_and_")
        return inplace.apply_inplace(self, inplace.truth, elementwise.logical_and, other, name="logical_and_")

    def logical_or_(self, other: Any) -> Tensor:
        """self = self or other (nonzero is true), as 0 and 1 in self's dtype, in place."""
        other = inplace.require_tensor(other, "logical_or_")
        return inplace.apply_inplace(self, inplace.truth, elementwise.logical_or, other, name="logical_or_")

    def logical_xor_(self, other: Any) -> Tensor:
        """self = self xor other (nonzero is true), as 0 and 1 in self's dtype, in place."""
        other = inplace.require_tensor(other, "logical_xor_")
        return inplace.apply_inplace(self, inplace.truth, elementwise.logical_xor, other, name="logical_xor_")

    def logical_not_(self) -> Tensor:
        """self = not self (nonzero is true), as 0 and 1 in self's dtype, in place."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.logical_not, name="logical_not_")

    def bitwise_and_(self, other: Any) -> Tensor:
        """self = self & other, bit by bit, in place (integer and bool tensors)."""
        return inplace.apply_inplace(self, elementwise.bitwise_and, other, name="bitwise_and_")

    def bitwise_or_(self, other: Any) -> Tensor:
        """self = self | other, bit by bit, in place (integer and bool tensors)."""
        return inplace.apply_inplace(self, elementwise.bitwise_or, other, name="bitwise_or_")

    def bitwise_xor_(self, other: Any) -> Tensor:
        """self = self ^ other, bit by bit, in place (integer and bool tensors)."""
        return inplace.apply_inplace(self, elementwise.bitwise_xor, other, name="bitwise_xor_")

    def bitwise_left_shift_(self, other: Any) -> Tensor:
        """self = self << other, bit by bit, in place (integer and bool tensors)."""
        return inplace.apply_inplace(self, elementwise.bitwise_left_shift, other, name="bitwise_left_shift_")

    def bitwise_right_shift_(self, other: Any) -> Tensor:
        """self = self >> other, bit by bit, in place (integer and bool tensors)."""
        return inplace.apply_inplace(self, elementwise.bitwise_right_shift, other,
                                     name="bitwise_right_shift_")

    def bitwise_not_(self) -> Tensor:
        """self = ~self, every bit flipped, in place (integer and bool tensors)."""
        return inplace.apply_inplace(self, elementwise.bitwise_not, name="bitwise_not_")

    def eq_(self, other: Any) -> Tensor:
        """self = (self == other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.eq, other, name="eq_")

    def ne_(self, other: Any) -> Tensor:
        """self = (self != other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.ne, other, name="ne_")

    def lt_(self, other: Any) -> Tensor:
        """self = (self < other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.lt, other, name="lt_")

    def le_(self, other: Any) -> Tensor:
        """self = (self <= other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.le, other, name="le_")

    def gt_(self, other: Any) -> Tensor:
        """self = (self > other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.gt, other, name="gt_")

    def ge_(self, other: Any) -> Tensor:
        """self = (self >= other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.ge, other, name="ge_")

    def greater_(self, other: Any) -> Tensor:
        """self = (self > other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.gt, other, name="greater_")

    def greater_equal_(self, other: Any) -> Tensor:
        """self = (self >= other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.ge, other, name="greater_equal_")

    def less_(self, other: Any) -> Tensor:
        """self = (self < other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.lt, other, name="less_")

    def less_equal_(self, other: Any) -> Tensor:
        """self = (self <= other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.le, other, name="less_equal_")

    def not_equal_(self, other: Any) -> Tensor:
        """self = (self != other) as 0 and 1 in self's dtype, in place (zero gradient)."""
        return inplace.apply_inplace(self, inplace.truth, elementwise.ne, other, name="not_equal_")

    def arccos(self) -> Tensor:
        """acos(self), by its NumPy name."""
        return elementwise.arccos(self)

    def arccosh(self) -> Tensor:
        """acosh(self), by its NumPy name."""
        return elementwise.arccosh(self)

    def arcsin(self) -> Tensor:
        """asin(self), by its NumPy name."""
        return elementwise.arcsin(self)

    def arcsinh(self) -> Tensor:
        """asinh(self), by its NumPy name."""
        return elementwise.arcsinh(self)

    def arctan(self) -> Tensor:
        """atan(self), by its NumPy name."""
        return elementwise.arctan(self)

    def arctanh(self) -> Tensor:
        """atanh(self), by its NumPy name."""
        return elementwise.arctanh(self)

    def fix(self) -> Tensor:
        """Rounded toward zero (`trunc`; zero gradient)."""
        return elementwise.fix(self)

    def divide(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """self / other (`div`), rounded toward zero or down with `rounding_mode` 'trunc' or 'floor'."""
        return elementwise.divide(self, other, rounding_mode=rounding_mode)

    def multiply(self, other: Any) -> Tensor:
        """self * other (`mul`)."""
        return elementwise.multiply(self, other)

    def subtract(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """self - alpha * other (`sub`)."""
        return elementwise.subtract(self, other, alpha=alpha)

    def greater(self, other: Any) -> Tensor:
        """self > other (`gt`): a bool tensor without gradient."""
        return elementwise.greater(self, other)

    def greater_equal(self, other: Any) -> Tensor:
        """self >= other (`ge`): a bool tensor without gradient."""
        return elementwise.greater_equal(self, other)

    def less(self, other: Any) -> Tensor:
        """self < other (`lt`): a bool tensor without gradient."""
        return elementwise.less(self, other)

    def less_equal(self, other: Any) -> Tensor:
        """self <= other (`le`): a bool tensor without gradient."""
        return elementwise.less_equal(self, other)

    def not_equal(self, other: Any) -> Tensor:
        """self != other (`ne`): a bool tensor without gradient."""
        return elementwise.not_equal(self, other)

    # --- incomplete gamma functions (each calls its op in `tensorgrad.special`) ---

    def igamma(self, other: Tensor) -> Tensor:
        """P(self, other), the regularized lower incomplete gamma function (`tg.special.gammainc`)."""
        from tensorgrad import special  # (it imports the op modules, built on this one)

        return special.gammainc(self, other)

    def igammac(self, other: Tensor) -> Tensor:
        """Q(self, other) = 1 - P(self, other), the regularized upper incomplete gamma function."""
        from tensorgrad import special  # (it imports the op modules, built on this one)

        return special.gammaincc(self, other)

    def igamma_(self, other: Tensor) -> Tensor:
        """self = igamma(self, other), in place."""
        from tensorgrad import special  # (it imports the op modules, built on this one)

        other = inplace.require_tensor(other, "igamma_")
        return inplace.apply_inplace(self, special.gammainc, other, name="igamma_")

    def igammac_(self, other: Tensor) -> Tensor:
        """self = igammac(self, other), in place."""
        from tensorgrad import special  # (it imports the op modules, built on this one)

        other = inplace.require_tensor(other, "igammac_")
        return inplace.apply_inplace(self, special.gammaincc, other, name="igammac_")

    # --- special functions (each calls its op in `tensorgrad.elementwise`; more in `tg.special`) ---

    def lgamma(self) -> Tensor:
        """ln|Gamma(self)|."""
        return elementwise.lgamma(self)

    def digamma(self) -> Tensor:
        """psi(self), the derivative of lgamma."""
        return elementwise.digamma(self)

    def polygamma(self, n: int) -> Tensor:
        """The n-th derivative of digamma at self."""
        return elementwise.polygamma(n, self)

    def mvlgamma(self, p: int) -> Tensor:
        """The multivariate log-gamma function of dimension p."""
        return elementwise.mvlgamma(self, p)

    def erfinv(self) -> Tensor:
        """The inverse error function of self."""
        return elementwise.erfinv(self)

    def i0(self) -> Tensor:
        """The modified Bessel function I0 of self."""
        return elementwise.i0(self)

    def lgamma_(self) -> Tensor:
        """self = lgamma(self), in place."""
        return inplace.apply_inplace(self, elementwise.lgamma, name="lgamma_")

    def digamma_(self) -> Tensor:
        """self = digamma(self), in place."""
        return inplace.apply_inplace(self, elementwise.digamma, name="digamma_")

    def polygamma_(self, n: int) -> Tensor:
        """self = polygamma(n, self), in place."""
        return inplace.apply_inplace(self, lambda x: elementwise.polygamma(n, x), name="polygamma_")

    def mvlgamma_(self, p: int) -> Tensor:
        """self = mvlgamma(self, p), in place."""
        return inplace.apply_inplace(self, elementwise.mvlgamma, p, name="mvlgamma_")

    def erfinv_(self) -> Tensor:
        """self = erfinv(self), in place."""
        return inplace.apply_inplace(self, elementwise.erfinv, name="erfinv_")

    def i0_(self) -> Tensor:
        """self = i0(self), in place."""
        return inplace.apply_inplace(self, elementwise.i0, name="i0_")

    # --- shape changes in place: the tensor becomes a view of its own storage ---------------------

    def squeeze_(self, dim: Any = None) -> Tensor:
        """Drop size-1 dimensions (all, or those in `dim`), in place."""
        return inplace.view_inplace(self, movement.squeeze, dim, name="squeeze_")

    def unsqueeze_(self, dim: int) -> Tensor:
        """Insert a size-1 dimension at `dim`, in place."""
        return inplace.view_inplace(self, movement.unsqueeze, dim, name="unsqueeze_")

    def t_(self) -> Tensor:
        """Transpose a matrix (0-d and 1-D tensors stay as they are), in place."""
        return inplace.view_inplace(self, movement.t, name="t_")

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions, in place."""
        return inplace.view_inplace(self, movement.transpose, dim0, dim1, name="transpose_")

    def swapdims_(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions, in place (`transpose_`)."""
        return inplace.view_inplace(self, movement.transpose, dim0, dim1, name="swapdims_")

    def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
        """Swap two dimensions, in place (`transpose_`)."""
        return inplace.view_inplace(self, movement.transpose, axis0, axis1, name="swapaxes_")

    def remainder_(self, other: Any) -> Tensor:
        """self = self % other, in place."""
        return inplace.apply_inplace(self, elementwise.remainder, other, name="remainder_")

    def lerp_(self, end: Tensor, weight: Any) -> Tensor:
        """self = self + weight * (end - self), in place."""
        return inplace.apply_inplace(self, elementwise.lerp, end, weight, name="lerp_")

    def nan_to_num_(self, nan: float = 0.0, posinf: float | None = None,
                    neginf: float | None = None) -> Tensor:
        """nan, +inf and -inf replaced by finite numbers, in place."""
        return inplace.apply_inplace(self, elementwise.nan_to_num, nan, posinf, neginf, name="nan_to_num_")

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        """`value` where mask is True, in place."""
        return inplace.apply_inplace(self, indexing.masked_fill, mask, value, name="masked_fill_")

    def scatter_(self, dim: int, index: Any, src: Any = None, value: Any = None,
                 reduce: str | None = None) -> Tensor:
        """`scatter`, in place."""
        return inplace.apply_inplace(self, indexing.scatter, dim, index, src, name="scatter_", value=value,
                                     reduce=reduce)

    def scatter_add_(self, dim: int, index: Any, src: Tensor) -> Tensor:
        """`scatter_add`, in place."""
        return inplace.apply_inplace(self, indexing.scatter_add, dim, index, src, name="scatter_add_")

    def index_add_(self, dim: int, index: Any, source: Tensor, *, alpha: float = 1) -> Tensor:
        """`index_add`, in place."""
        return inplace.apply_inplace(self, indexing.index_add, dim, index, source, name="index_add_",
                                     alpha=alpha)

    def index_copy_(self, dim: int, index: Any, source: Tensor) -> Tensor:
        """`index_copy`, in place."""
        return inplace.apply_inplace(self, indexing.index_copy, dim, index, source, name="index_copy_")

    def index_fill_(self, dim: int, index: Any, value: Any) -> Tensor:
        """`index_fill`, in place."""
        return inplace.apply_inplace(self, indexing.index_fill, dim, index, value, name="index_fill_")

    def masked_scatter_(self, mask: Any, source: Tensor) -> Tensor:
        """`masked_scatter`, in place."""
        return inplace.apply_inplace(self, indexing.masked_scatter, mask, source, name="masked_scatter_")

    def addcmul_(self, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
        """self += value * tensor1 * tensor2, in place (an optimizer's line)."""
        return inplace.apply_inplace(self, matmul.addcmul, tensor1, tensor2, name="addcmul_", value=value)

    def addcdiv_(self, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
        """self += value * tensor1 / tensor2, in place (an optimizer's line)."""
        return inplace.apply_inplace(self, matmul.addcdiv, tensor1, tensor2, name="addcdiv_", value=value)

    # --- more math: the BLAS family, number theory, norms of slices, covariance, and queries ----------

    def addmv(self, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """beta * self + alpha * (mat @ vec)."""
        return matmul.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addmv_(self, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """self = beta * self + alpha * (mat @ vec), in place."""
        return inplace.apply_inplace(self, matmul.addmv, mat, vec, name="addmv_", beta=beta, alpha=alpha)

    def addr(self, vec1: Tensor, vec2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """beta * self + alpha * outer(vec1, vec2)."""
        return matmul.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def addr_(self, vec1: Tensor, vec2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """self = beta * self + alpha * outer(vec1, vec2), in place."""
        return inplace.apply_inplace(self, matmul.addr, vec1, vec2, name="addr_", beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """beta * self + alpha * (batch1 @ batch2), batched."""
        return matmul.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def baddbmm_(self, batch1: Tensor, batch2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """self = beta * self + alpha * (batch1 @ batch2), batched, in place."""
        return inplace.apply_inplace(self, matmul.baddbmm, batch1, batch2, name="baddbmm_", beta=beta,
                                     alpha=alpha)

    def addbmm(self, batch1: Tensor, batch2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """beta * self + alpha * sum_b (batch1[b] @ batch2[b])."""
        return matmul.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm_(self, batch1: Tensor, batch2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """self = beta * self + alpha * sum_b (batch1[b] @ batch2[b]), in place."""
        return inplace.apply_inplace(self, matmul.addbmm, batch1, batch2, name="addbmm_", beta=beta,
                                     alpha=alpha)

    def addmm_(self, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
        """self = beta * self + alpha * (mat1 @ mat2), in place."""
        return inplace.apply_inplace(self, matmul.addmm, mat1, mat2, name="addmm_", beta=beta, alpha=alpha)

    def inner(self, other: Tensor) -> Tensor:
        """The sum of products over the last dimension of self and other."""
        return matmul.inner(self, other)

    def ger(self, vec2: Tensor) -> Tensor:
        """The outer product with vec2 (PyTorch's older name for `outer`)."""
        return matmul.ger(self, vec2)

    def vdot(self, other: Tensor) -> Tensor:
        """sum(conj(self) * other) of two 1-D tensors."""
        return matmul.vdot(self, other)

    def gcd(self, other: Tensor) -> Tensor:
        """The greatest common divisor with other, elementwise (integer tensors)."""
        return elementwise.gcd(self, other)

    def lcm(self, other: Tensor) -> Tensor:
        """The least common multiple with other, elementwise (integer tensors)."""
        return elementwise.lcm(self, other)

    def ldexp(self, other: Tensor) -> Tensor:
        """self * 2**other."""
        return elementwise.ldexp(self, other)

    def frexp(self) -> Any:
        """(mantissa, exponent) with self = mantissa * 2**exponent, 0.5 <= |mantissa| < 1."""
        return elementwise.frexp(self)

    def nextafter(self, other: Tensor) -> Tensor:
        """The next floating-point value after self toward other."""
        return elementwise.nextafter(self, other)

    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        """self where |self| > lambd, else 0."""
        from tensorgrad.nn import activation  # (tensorgrad.nn is built on this module)

        return activation.hardshrink(self, lambd)

    def prelu(self, weight: Tensor) -> Tensor:
        """self where self > 0, else weight * self (one slope per channel, or one for all)."""
        from tensorgrad.nn import activation  # (tensorgrad.nn is built on this module)

        return activation.prelu(self, weight)

    def dist(self, other: Tensor, p: float = 2) -> Tensor:
        """The p-norm of self - other."""
        return reduce.dist(self, other, p)

    def renorm(self, p: float, dim: int, maxnorm: float) -> Tensor:
        """Each slice along dim whose p-norm exceeds maxnorm scaled down to that norm."""
        return reduce.renorm(self, p, dim, maxnorm)

    def renorm_(self, p: float, dim: int, maxnorm: float) -> Tensor:
        """`renorm`, in place."""
        return inplace.apply_inplace(self, reduce.renorm, p, dim, maxnorm, name="renorm_")

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        """The last dimension put on a diagonal of new (dim1, dim2) planes of zeros."""
        return movement.diag_embed(self, offset, dim1, dim2)

    def diagflat(self, offset: int = 0) -> Tensor:
        """A square matrix with the flattened elements on its `offset` diagonal."""
        return movement.diagflat(self, offset)

    def sum_to_size(self, *sizes: Any, size: Any = None) -> Tensor:
        """Summed down to `size`, a shape that expands to this tensor's."""
        if size is not None:  # `sum_to_size(size=(1, 3))`, PyTorch's keyword
            sizes = _one_shape(sizes, size, "sum_to_size", "size")
        return reduce.sum_to_size(self, *sizes)

    def cov(self, *, correction: int = 1, fweights: Tensor | None = None,
            aweights: Tensor | None = None) -> Tensor:
        """The covariance matrix of the variables in the rows (observations in the columns)."""
        return reduce.cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self) -> Tensor:
        """Pearson's correlation coefficients of the variables in the rows."""
        return reduce.corrcoef(self)

    def is_signed(self) -> bool:
        """Whether the dtype holds negative numbers (not bool or uint8)."""
        return compat.is_signed(self)

    def is_nonzero(self) -> bool:
        """Whether the one element is not zero (any other size raises)."""
        return compat.is_nonzero(self)

    def is_same_size(self, other: Tensor) -> bool:
        """Whether other has the same shape."""
        return compat.is_same_size(self, other)

    @property
    def itemsize(self) -> int:
        """The size of one element in bytes (4 for float32)."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes the elements take: numel() * itemsize (a view counts its own elements)."""
        return self._data.size * self._data.itemsize

    def ndimension(self) -> int:
        """The number of dimensions (PyTorch's older name for `dim`)."""
        return self._data.ndim

    def get_device(self) -> int:
        """The index of the GPU holding the tensor, or -1 on the CPU."""
        return compat.get_device(self)

    @property
    def H(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of a matrix (a view for a real one)."""
        return movement.H(self)

    @property
    def mH(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of the last two dimensions (a view for a real tensor)."""
        return movement.mH(self)

    def adjoint(self) -> Tensor:
        """The conjugate transpose of the last two dimensions, as `mH`."""
        return movement.adjoint(self)

    def conj(self) -> Tensor:
        """The complex conjugate: the tensor itself when real."""
        return movement.conj(self)

    def resolve_conj(self) -> Tensor:
        """The tensor with a lazy conjugation applied: itself (conj is never lazy here)."""
        return movement.resolve_conj(self)

    def resolve_neg(self) -> Tensor:
        """The tensor with a lazy negation applied: itself (negation is never lazy here)."""
        return movement.resolve_neg(self)

    def is_conj(self) -> bool:
        """Whether a lazy conjugation is pending: never here."""
        return compat.is_conj(self)

    def is_neg(self) -> bool:
        """Whether a lazy negation is pending: never here."""
        return compat.is_neg(self)

    def isreal(self) -> Tensor:
        """Where the imaginary part is 0 (all True for a real tensor)."""
        return elementwise.isreal(self)

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: one made inside `tg.inference_mode()` (or a view of
        one), as PyTorch's."""
        return compat.is_inference(self)

    # --- torch-level functions that are also methods (each calls its op in `tensorgrad.reduce`) ----

    def histogram(self, bins: int | Tensor = 100, *, range: tuple[float, float] | None = None,  # noqa: A002
                  weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, Tensor]:
        """`(hist, bin_edges)`: counts of the elements in `bins` equal bins (or between given edges)."""
        return reduce.histogram(self, bins, range=range, weight=weight, density=density)

    # --- linear algebra under torch's Tensor names (each calls `tensorgrad.linalg`) ---------------

    def cholesky(self, upper: bool = False) -> Tensor:
        """The Cholesky factor L (A = L L^T), or U = L^T with `upper` (deprecated: `linalg.cholesky`)."""
        return linalg.legacy_cholesky(self, upper)

    def cholesky_solve(self, input2: Tensor, upper: bool = False) -> Tensor:
        """X with (L L^T) X = self, L = input2 the Cholesky factor (U^T U with `upper`)."""
        return linalg.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> Tensor:
        """(L L^T)^-1 from its Cholesky factor L = self (U^T U with `upper`)."""
        return linalg.cholesky_inverse(self, upper)

    def lu(self, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:
        """(LU, pivots), or (LU, pivots, infos) with `get_infos`: `linalg.lu_factor`'s packed LU."""
        return linalg.legacy_lu(self, pivot, get_infos)

    def lu_solve(self, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
        """X with A X = self, A given by its packed LU and pivots (`Tensor.lu`)."""
        return linalg.lu_solve(LU_data, LU_pivots, self)

    def triangular_solve(self, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: N803
                         unitriangular: bool = False) -> tuple[Tensor, Tensor]:
        """(solution, cloned_coefficient) of A X = self for a triangular A."""
        return linalg.triangular_solve(self, A, upper, transpose, unitriangular)

    def geqrf(self) -> tuple[Tensor, Tensor]:
        """The named tuple (a, tau): LAPACK's compact QR form of self (`tg.geqrf`)."""
        return linalg.geqrf(self)

    def orgqr(self, input2: Tensor) -> Tensor:
        """Q's first n columns from geqrf's compact form (self, tau = input2) (`tg.orgqr`)."""
        return linalg.orgqr(self, input2)

    def ormqr(self, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
        """Q C (or Q^H C, C Q, C Q^H) for Q given by geqrf's (self, tau = input2), C = input3 (`tg.ormqr`)."""
        return linalg.ormqr(self, input2, input3, left, transpose)

    # --- interop and torch's remaining spellings: DLPack export, real/imag/angle, dsplit, the
    # unsafe splits (the safe ones here), and the number-theory ops in place ----------------------

    def __dlpack__(self, *, stream: Any = -1, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """A DLPack capsule of this tensor's memory, shared (no copy), for another library's
        `from_dlpack`. A tensor that requires grad is refused (detach() it), as in PyTorch."""
        if self._requires_grad:
            raise BufferError("__dlpack__: Can't export tensors that require gradient, use tensor.detach()")
        options = {key: value for key, value in (("max_version", max_version), ("dl_device", dl_device),
                                                 ("copy", copy)) if value is not None}
        if self.device.type == "cpu":  # numpy takes no stream: host memory needs no synchronisation
            return self._data.__dlpack__(**options)
        return self._data.__dlpack__(stream=stream, **options)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, device index) of this tensor's memory: (1, 0) on the CPU."""
        return self._data.__dlpack_device__()

    @property
    def real(self) -> Tensor:
        """The real part: a view of a complex tensor's real parts, the tensor itself when real."""
        return movement.real(self)

    @property
    def imag(self) -> Tensor:
        """The imaginary part of a complex tensor (a view); a real tensor raises RuntimeError."""
        return movement.imag(self)

    def angle(self) -> Tensor:
        """The argument atan2(imag, real) of each element: 0 or pi for a real tensor (nan for nan)."""
        return movement.angle(self)

    def dsplit(self, indices_or_sections: Any = None, *, sections: Any = None,
               indices: Any = None) -> tuple[Tensor, ...]:
        """`tensor_split` along dimension 2 (views)."""
        return movement.dsplit(self, _one_split("dsplit", indices_or_sections, sections, indices))

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """`chunk` (views): tensorgrad's views need no unchecked form."""
        return movement.unsafe_chunk(self, chunks, dim)

    def unsafe_split(self, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """`split` (views): tensorgrad's views need no unchecked form."""
        return movement.unsafe_split(self, split_size, dim)

    def unsafe_split_with_sizes(self, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """`split_with_sizes` (views): tensorgrad's views need no unchecked form."""
        return movement.unsafe_split_with_sizes(self, split_sizes, dim)

    def gcd_(self, other: Tensor) -> Tensor:
        """self = gcd(self, other), in place (integer tensors)."""
        return inplace.apply_inplace(self, elementwise.gcd, other, name="gcd_")

    def lcm_(self, other: Tensor) -> Tensor:
        """self = lcm(self, other), in place (integer tensors)."""
        return inplace.apply_inplace(self, elementwise.lcm, other, name="lcm_")

    def ldexp_(self, other: Tensor) -> Tensor:
        """self = self * 2**other, in place."""
        return inplace.apply_inplace(self, elementwise.ldexp, other, name="ldexp_")

    def nextafter_(self, other: Tensor) -> Tensor:
        """self = the next floating-point value after self toward other, in place."""
        return inplace.apply_inplace(self, elementwise.nextafter, other, name="nextafter_")

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_


# --- construction -------------------------------------------------------------------------------

_new_tensor = object.__new__


# PyTorch's argument parser takes NumPy's names wherever an op has `dim` and `keepdim`:
# `x.sum(axis=0, keepdims=True)`. The reductions and scans take them here, renamed in this one place.
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}
AXIS_ALIASED = (
    "sum", "mean", "prod", "std", "var", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp",
    "softmax", "log_softmax", "all", "any", "cumsum", "cumprod", "cummax", "cummin", "median", "nanmean",
    "nansum", "count_nonzero", "std_mean", "var_mean", "sort", "argsort", "topk", "kthvalue", "mode",
    "quantile", "nanquantile", "aminmax", "logcumsumexp", "nanmedian",
)


def numpy_names(op: Any) -> Any:
    """`op`, also taking `axis` for `dim` and `keepdims` for `keepdim`, as PyTorch's ops do."""
    @functools.wraps(op)
    def with_numpy_names(*args: Any, **kwargs: Any) -> Any:
        if "axis" in kwargs or "keepdims" in kwargs:
            renamed = {}
            for key, value in kwargs.items():
                name = NUMPY_NAMES.get(key, key)
                if name in renamed or (name != key and name in kwargs):
                    raise TypeError(f"{op.__name__}() got multiple values for argument '{name}' "
                                    f"(once as '{key}', NumPy's name for it)")
                renamed[name] = value
            kwargs = renamed
        return op(*args, **kwargs)
    return with_numpy_names


def _numpy_dims(op: str, dim: Any, keepdim: bool, axis: Any, keepdims: bool | None) -> tuple[Any, bool]:
    """`dim` and `keepdim` from NumPy's `axis` and `keepdims`, refusing both names for one argument."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{op}() got multiple values for argument 'dim' (once as 'axis', NumPy's name "
                            "for it)")
        dim = axis
    return dim, keepdim if keepdims is None else keepdims


for _name in AXIS_ALIASED:
    if hasattr(Tensor, _name) and _name not in ("sum", "mean"):  # (those two take them themselves)
        setattr(Tensor, _name, numpy_names(getattr(Tensor, _name)))


def init_node(t: Tensor, data: np.ndarray, requires_grad: bool) -> None:
    """Give a new Tensor (or Parameter) its attributes: the one list of a node's slots."""
    t._data = data
    t._grad = None
    t.parents = ()
    t.op = ""
    t.label = ""
    t._backward = None
    t._keeps_grad = False
    t._requires_grad = False
    t._versions = [0]
    t._seq = None  # a leaf is not numbered: only `record`'s inner nodes are (see engine.creation_order)
    t._base = None
    t._view_version = 0
    if requires_grad:
        t.requires_grad_(True)


def new_leaf(data: np.ndarray, requires_grad: bool = False) -> Tensor:
    """A leaf holding `data` as it is, no copy (the fast path: no conversion, no checks).

    The one place a leaf is made; `record` makes the inner nodes (the same attributes, set inline
    there for speed; `tests/tensorgrad/test_autograd.py` checks that the two lists agree).
    """
    t = _new_tensor(Tensor)
    init_node(t, data, requires_grad)
    return t


def to_array(data: Any, dtype: Any = None) -> np.ndarray:
    """Convert user data to a fresh array: Python floats become the default float (float32), ints
    int64; a sequence of tensors or numpy numbers keeps their dtype."""
    if isinstance(data, Tensor):
        data = data.data
    if type(data) is not np.ndarray and device_module.is_array(data):  # a GPU's array: copied there
        return device_module.namespace(data).array(data, dtype=None if dtype is None else np.dtype(dtype))
    try:
        array = np.array(data) if dtype is None else np.array(data, dtype=np.dtype(dtype))
    except ValueError as error:  # a ragged nested list: numpy's message speaks of its own internals
        raise ValueError(f"tensor(): the nested sequences must have equal lengths at every depth "
                         f"(got a ragged {type(data).__name__}): {str(error).split('. ')[0]}") from None
    if dtype is not None:
        return array
    if array.dtype.kind == "f" and not isinstance(data, np.ndarray | np.floating) and not _typed(data):
        array = array.astype(dtypes.default_float)  # Python floats: PyTorch's default dtype
    elif array.dtype.kind in "OUSV":
        raise TypeError(f"can't make a tensor from {type(data).__name__} data (dtype {array.dtype})")
    return array


def _typed(data: Any) -> bool:
    """Whether a nested sequence holds tensors or numpy numbers (their dtype stands, as in
    `torch.tensor([t1, t2])`) rather than Python floats; its first element at each depth tells."""
    while isinstance(data, list | tuple) and data:
        data = data[0]
    return isinstance(data, Tensor | np.ndarray | np.generic) or device_module.is_array(data)


def _checked_grad(t: Tensor, value: Any) -> np.ndarray:
    """`value` as a gradient `t` can hold: an array of t's shape and dtype (a Tensor gives its array)."""
    if isinstance(value, Tensor):
        value = value._data
    elif isinstance(value, np.generic):  # what numpy gives for arithmetic on 0-d arrays
        value = np.asarray(value)
    elif not device_module.is_array(value):
        raise TypeError(f"grad: assigned grad must be a Tensor, a numpy array or None, got "
                        f"{type(value).__name__}")
    if value.shape != t._data.shape:
        raise RuntimeError(f"grad: assigned grad has shape {value.shape}, but the tensor has shape "
                           f"{t._data.shape}")
    if value.dtype != t._data.dtype:
        raise autograd.GradDtypeError(f"grad: assigned grad has dtype {value.dtype}, but the tensor has "
                                      f"dtype {t._data.dtype}")
    return value


def _one_shape(positional: tuple, named: Any, op: str, name: str) -> tuple:
    """The sizes given by PyTorch's keyword (`reshape(shape=(2, 3))`), as the positional tuple."""
    if positional:
        raise TypeError(f"{op}(): got sizes both as positional arguments and as '{name}='")
    return (named,)


def _from_to(op: str, low: Any, high: Any, named: dict) -> tuple[Any, Any]:
    """The bounds, given by position or by PyTorch's keywords `from=` and `to=` (`from` being a
    Python keyword, they arrive in `named`)."""
    low, high = named.pop("from", low), named.pop("to", high)
    if named:
        raise TypeError(f"{op}() got an unexpected keyword argument '{next(iter(named))}'")
    return low, high


def _one_split(op: str, *given: Any) -> Any:
    """The one split argument given, by position or by one of PyTorch's keywords (`sections=`,
    `indices=`, `tensor_indices_or_sections=`)."""
    chosen = [value for value in given if value is not None]
    if len(chosen) != 1:
        raise TypeError(f"{op}(): expected exactly one of indices_or_sections, sections or indices, "
                        f"got {len(chosen)}")
    return chosen[0]


def ensure_tensor(x: Any, like: Tensor) -> Tensor:
    """`x` as a Tensor; a Python number becomes a 0-d array of `like`'s dtype (no gradient)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, bool | int | float):
        kind = like._data.dtype.kind
        integral = not isinstance(x, float)
        # A Python number takes the tensor's dtype where it fits, so float32 stays float32.
        if kind == "f" or (kind in "iu" and integral) or (kind == "b" and isinstance(x, bool)):
            try:
                value = np.array(x, dtype=like._data.dtype)
            except OverflowError:  # -2 next to uint8: kept as int64, cast by the op as PyTorch does
                value = np.array(x)
        else:
            value = np.array(x, dtype=dtypes.default_float if isinstance(x, float) else int64)
        if type(like._data) is not np.ndarray:  # a GPU's kernels take no numpy array, not even 0-d
            value = device_module.array_like(value, like._data)
        return new_leaf(value)
    # An array of a tensor's kind (numpy's, or CuPy's beside a tensor on the GPU) is a constant
    # operand, as a numpy array is in PyTorch; an op refuses it beside a tensor on another device.
    array = device_module.is_array(x)
    if array or isinstance(x, np.generic | list | tuple):
        leaf = new_leaf(x if array else to_array(x))
        autograd.note_dtype(leaf._data.dtype)
        return leaf
    if isinstance(x, complex):
        return _complex_number(x, like)
    raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")


def _on_device_of(value: Tensor, target: Tensor) -> Tensor:
    """`value` on `target`'s device: itself if it is there, else moved by `to` (the gradient goes
    back), as PyTorch's `copy_` and `t[key] = value` move a value from another device."""
    if type(value._data) is type(target._data) or value.device == target.device:
        return value
    return value.to(target.device)


def _complex_number(x: complex, like: Tensor) -> Tensor:
    """A Python complex beside `like`, in PyTorch's result dtype: like's own if complex, complex128
    beside float64, else the default dtype's complex partner."""
    dtype = like._data.dtype
    if dtype.kind != "c":
        wide = dtype == np.float64 or (dtype.kind != "f" and dtypes.default_float == np.float64)
        dtype = np.dtype(np.complex128 if wide else np.complex64)
    autograd.note_dtype(dtype)
    value = np.array(x, dtype=dtype)
    if type(like._data) is not np.ndarray:
        value = device_module.array_like(value, like._data)
    return new_leaf(value)


def _move(x: Tensor, target: Any) -> Tensor:
    """x on `target`: itself if it is there, else a copy whose gradient goes back where x lives."""
    if x.device == target:
        return x
    source = x.device
    data = device_module.to_device(x._data, target, "to")
    return record(data, "to", (x,), lambda grad: device_module.to_device(grad, source, "to"), saved=(),
                  graph_vjp=_moved_back)


def _moved_back(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (_move(grad, x.device),)


def _converted(x: Tensor, dtype: np.dtype, memory_format: Any, op: str) -> Tensor:
    """`x.float()` and the other conversions: `_cast`; with a `memory_format` (checked for `op`),
    `x.to(dtype, memory_format=...)`, as PyTorch."""
    if memory_format is None:
        return _cast(x, dtype)
    return x.to(dtype, memory_format=creation.check_memory_format(memory_format, op))


def _cast(x: Tensor, dtype: np.dtype, layout: Any = None) -> Tensor:
    """x in another dtype, laid out as x unless `layout` is tg.contiguous_format; the gradient
    flows back (cast to x's dtype) between float types."""
    if x.data.dtype == dtype:
        return x
    data = narrowed(x.data, dtype)
    if not x.data.flags.c_contiguous or (layout is not None and layout.rank) or 1 in x.data.shape:
        data = creation.laid_out(data, x.data, layout or creation.preserve_format)
    autograd.note_dtype(dtype)
    if dtype.kind not in "fc" or x.data.dtype.kind not in "fc":
        return new_leaf(data)
    source = x.data.dtype
    # (np.real: a cast of a real x to complex sends back the gradient's real part, as PyTorch's; a
    # complex x, cast to another complex dtype, gets all of it)
    back = ((lambda grad: narrowed(grad, source)) if source.kind == "c"
            else lambda grad: narrowed(np.real(grad), source))
    return record(data, "to", (x,), back, saved=(), graph_vjp=_cast_back)


def _cast_back(grad: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    """The cast's gradient as a graph: cast back to x's dtype (the real part for a real x of a
    complex cast, as PyTorch takes it)."""
    if grad.dtype.kind == "c" and x.data.dtype.kind != "c":
        grad = grad.real
    return (_cast(grad, x.data.dtype),)


# The op modules import this one, so they are imported last.
from tensorgrad import (  # noqa: E402
    autograd,  # noqa: E402
    compat,
    creation,
    elementwise,
    indexing,
    inplace,
    linalg,
    matmul,
    movement,
    printing,
    reduce,
)
from tensorgrad import device as device_module  # noqa: E402
from tensorgrad.autograd import record  # noqa: E402
