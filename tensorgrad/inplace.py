"""In-place ops: `add_`, `mul_`, `zero_`, `fill_`, `copy_`, `t[key] = value`, `+=` and friends.

Tutorial chapter 6. Out of the graph (under `no_grad()`, the optimizer's `p -= lr * p.grad`) an
in-place op is one numpy call writing into the tensor's own memory. In the graph, the tensor
becomes the output of the out-of-place op (`apply_inplace`): its old values move to a copy that
keeps its place in the graph, and the version counter goes up, so a backward pass that saved the
old values raises instead of using the new ones. As in PyTorch's derivatives table, no in-place
op has a gradient formula of its own: each is its out-of-place op, written back.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from scalargrad.engine import grad_mode, no_grad
from tensorgrad import checks, indexing
from tensorgrad.autograd import bump_version, history_moved, is_custom_function_view, record, refresh_view
from tensorgrad.checks import ShapeError
from tensorgrad.creation import checked_scalar
from tensorgrad.device import (
    array_like,
    data_address,
    namespace,
    refuse_mixed_devices,
    strided_view,
    to_numpy,
    writeable,
)
from tensorgrad.dtypes import bool_
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["arithmetic_inplace", "apply_inplace", "view_inplace", "require_dtype", "require_tensor", "fill",
           "copy", "truth"]


def arithmetic_inplace(x: Tensor, ufunc: np.ufunc, op: Callable[..., Tensor], other: Any,
                       name: str) -> Tensor:
    """x = op(x, other) in place; outside the graph, one numpy call that writes into x itself.

    An optimizer's `p -= lr * p.grad` takes this path under `no_grad()`: no temporary array, no
    copy. Inside the graph it is `apply_inplace`.
    """
    if grad_mode.enabled and (x._requires_grad or (isinstance(other, Tensor) and other._requires_grad)
                              or (x._base is not None and x._base._requires_grad)):
        return apply_inplace(x, op, other, name=name)
    data = x.data
    # (numpy's flag read inline: an optimizer runs this once per parameter per step)
    if not (data.flags.writeable if type(data) is np.ndarray else writeable(data)):
        _raise_read_only(name)
    values = other.data if isinstance(other, Tensor) else other
    if ufunc is np.subtract and (isinstance(values, bool) or getattr(values, "dtype", None) == bool_):
        op(x, other)  # raises, as PyTorch: `x -= True` is usually `x -= mask`, a mask inverted by mistake
    try:
        ufunc(data, values, out=data, casting="same_kind")
    except ValueError:
        raise ShapeError(
            f"{name}: an operand of shape {np.shape(values)} can't be broadcast to the shape {x.shape} "
            "of the tensor changed in place"
        ) from None
    except TypeError:
        if isinstance(other, Tensor):
            refuse_mixed_devices(name, (x, "self"), (other, "other"))
        if ufunc is np.subtract and data.dtype.kind == "b":
            op(x, other)  # raises PyTorch's error for a bool tensor in a subtraction
        raise RuntimeError(
            f"{name}: a result of dtype {np.result_type(x.data, values)} can't be stored in a "
            f"{x.dtype} tensor"
        ) from None
    bump_version(x)
    return x


# In-place ops whose result is real for a complex tensor: PyTorch refuses them on complex tensors.
_REAL_ONLY = frozenset(("abs_", "absolute_"))


def apply_inplace(x: Tensor, op: Callable[..., Tensor], *args: Any, name: str, **options: Any) -> Tensor:
    """Write `op(x, *args, **options)` into x's storage and make x the output of that op in the graph.

    Tensors go in `args` (positionally), so that one requiring grad makes the change recorded
    even when x does not require grad (`zeros.index_add_(0, i, w)`); `options` are the op's
    other keywords (alpha, value, ...). The storage's version counter goes up, so a backward
    pass that saved the old values raises instead of using the new ones. Outside `no_grad`, a
    leaf that requires grad can't be changed in place: its gradient would no longer describe the
    values it holds. A view (`y[0]`, `y.T`) changes its base's values too, so the base is rewired
    as well (`_apply_to_view`).
    """
    if name in _REAL_ONLY and x.data.dtype.kind == "c":
        raise RuntimeError(f"In-place abs is not supported for complex tensors ({name} of a {x.dtype} tensor "
                           f"of shape {x.shape}): its result is real; use abs()")
    if options:
        op = partial(op, **options)
    base = x._base
    recording = grad_mode.enabled and (
        x._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args)
        or (base is not None and base._requires_grad)
    )
    if not recording:
        _write(x, op(x, *args).data, name)
        return x
    if base is not None:
        return _apply_to_view(x, base, op, args, name)
    if x._requires_grad and x._backward is None:
        _refuse_leaf(name)
    before = _detached_copy_with_history(x, x.data.copy())
    result = op(before, *args)
    _write(x, result.data, name)
    _take_history(x, result, name)
    return x


def setitem(x: Tensor, key: Any, value: Tensor) -> None:
    """`x[key] = value`, written into x's own memory: only the selection is written, where the
    general path (`apply_inplace`) would compute a whole new copy of x and copy it back. In the
    graph, x becomes index_put(x's old self, value), whose gradients read no values, so the node
    that keeps x's old place holds no copy of its old values (it shares x's memory), as PyTorch
    keeps none: a buffer filled row by row in the graph costs one row per step, not one buffer.
    A view goes through `apply_inplace`, which records the change on its base.

    Filling a (200, 64, 64) float32 buffer row by row (`buf[t] = h * 1.0`, best of 5): in the graph
    0.11 ms a row and a 3.7 MB peak, against 1.05 ms and 662 MB through `apply_inplace`; outside
    it 0.035 ms against 0.28 ms.
    """
    if x._base is not None:
        apply_inplace(x, indexing.set_index, key, value, name="setitem")
        return
    recording = grad_mode.enabled and (x._requires_grad or value._requires_grad)
    if recording and x._requires_grad and x._backward is None:
        _refuse_leaf("setitem")
    if not writeable(x.data):
        _raise_read_only("setitem")
    before = _detached_copy_with_history(x, x.data) if recording else None
    node = indexing.set_index_(x, before, key, value)
    bump_version(x)
    if node is not None:
        _take_history(x, node, "setitem")


def require_dtype(x: Tensor, dtype: Any, name: str) -> None:
    """Refuse, with a RuntimeError naming both dtypes, an in-place op whose result must be `dtype`
    when x has another dtype: `float_power_` computes in float64 and `cumsum_(dim, dtype=)` in
    `dtype`, and PyTorch writes neither back into a tensor of another dtype."""
    if x.data.dtype != np.dtype(dtype):
        raise RuntimeError(f"{name}: the result has dtype {np.dtype(dtype)} but the tensor changed in "
                           f"place (shape {x.shape}) has dtype {x.dtype}; in-place ops can't change a "
                           "tensor's dtype")


def require_tensor(value: Any, name: str, argument: str = "other") -> Tensor:
    """`value` itself if it is a Tensor; a number is a TypeError, as PyTorch's `atan2_(2)` is."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' must be a Tensor, not {type(value).__name__}")
    return value


def _refuse_leaf(name: str) -> None:
    raise RuntimeError(
        f"{name}: a leaf tensor that requires grad can't be changed in place outside "
        "no_grad(); wrap the update in `with tg.no_grad():`"
    )


def view_inplace(x: Tensor, view: Callable[..., Tensor], *args: Any, name: str) -> Tensor:
    """Make x the view `view(x, *args)` of its own storage: `squeeze_`, `unsqueeze_`, `t_`,
    `transpose_`, `as_strided_`. Its shape and strides change, its elements stay where they are (no copy).

    As in PyTorch it counts as an in-place change (the version counter goes up, so a backward pass
    that saved x refuses it), and a leaf that requires grad, or a view of one, can't be changed
    so outside no_grad(). In the graph x takes the history of the view op applied to its old
    history (PyTorch's SqueezeBackward on top of x's grad_fn); a view stays a view of its base.
    """
    base = x._base
    if grad_mode.enabled and (x._requires_grad or (base is not None and base._requires_grad)):
        if x._requires_grad and x._backward is None:
            raise RuntimeError(f"{name}: a leaf tensor that requires grad can't be changed in place "
                               "outside no_grad(); wrap it in `with tg.no_grad():`, or use the "
                               f"out-of-place {name.rstrip('_')}()")
        if base is not None and base._requires_grad and base._backward is None:
            raise RuntimeError(f"{name}: a view of a leaf tensor that requires grad can't be changed in "
                               f"place outside no_grad(); use the out-of-place {name.rstrip('_')}()")
        if base is not None and x._view_version != x._versions[0]:
            refresh_view(x)  # its base changed in place since: first the view of the base as it is
        before = _detached_copy_with_history(x, x.data)
        result = view(before, *args)
        _take_history(x, result, name)
    else:
        result = view(x, *args)
    x._data = result.data
    bump_version(x)
    x._view_version = x._versions[0]
    return x


def _apply_to_view(x: Tensor, base: Tensor, op: Callable[..., Tensor], args: tuple, name: str) -> Tensor:
    """An in-place op through a view: PyTorch's CopySlices. The base's new values are its old ones
    with the view's part replaced by `op(part, *args)`.

    Both the base and the view get a new history: the base becomes that "old values outside the
    part, op's result inside" node, and the view becomes a view of the new base. The op reads the
    part from a copy of the base's old values, not from the view's own history, so a view made
    before an earlier in-place change of the base (`a, b = y.chunk(2); a.mul_(2); b.add_(1)`)
    still gets the right gradient.
    """
    if base._requires_grad and base._backward is None:
        raise RuntimeError(
            f"{name}: a view of a leaf tensor that requires grad can't be changed in place outside "
            "no_grad(): the leaf's gradient would no longer describe its values; change it inside "
            "`with tg.no_grad():`, or clone() the leaf first"
        )
    if not x._requires_grad and base._requires_grad:
        raise RuntimeError(
            f"{name}: this view was made under no_grad() from a tensor that requires grad, and is "
            "changed in place with grad mode on; make the view and the change both inside "
            "no_grad() (not recorded) or both outside it (recorded)"
        )
    if is_custom_function_view(x):
        raise RuntimeError(
            f"{name}: output '{x.op}' of a custom Function is a view of one of its inputs and is being "
            "changed in place, which would skip the Function's backward (PyTorch refuses it too); "
            "return a clone() from forward, or change a clone() of the output"
        )
    window = window_of(base.data, x.data, name)
    old_values, old_part = window.copy_of_base(base.data)
    base_before = _detached_copy_with_history(base, old_values)
    part_before = record(old_part, "as_strided", (base_before,), window.scatter_vjp, saved=(),
                         view_of=base_before, graph_vjp=partial(_as_strided_graph, window))
    result = op(part_before, *args)
    _write(x, result.data, name)
    _take_history(base, record(base.data, name, (base_before, result), window.outside, window.inside_vjp,
                               saved=(), graph_vjp=partial(_written_graph, window)), name)
    view_of_base(x, name, window)
    return x


def view_of_base(view: Tensor, name: str, window: Window | None = None) -> None:
    """Give `view` a new history: the view of its base's current one (op "as_strided", as
    PyTorch's AsStridedBackward). `name` is the op that asks, for errors.

    Ops that used the view before keep reaching its old history, which moves to a node of its
    own, listed as a parent that takes no gradient so that the backward pass still visits it
    (autograd's `_holder_of` routes those ops' gradients there).
    """
    base = view._base
    window = window or window_of(base.data, view.data, name)
    parents, vjps = (base,), (window.scatter_vjp,)
    if view._backward is not None:
        parents, vjps = (base, _detached_copy_with_history(view, view.data)), (window.scatter_vjp, None)
    _take_history(view, record(view.data, "as_strided", parents, *vjps, saved=(), view_of=base,
                               graph_vjp=partial(_as_strided_graph, window)), "as_strided")
    view._view_version = view._versions[0]


# The graph VJPs of the view writes: each is linear, so its gradient is a window op of the gradient,
# recorded as a tensor op whose own gradient is the transposed window op.


def _as_strided_graph(window: Window, grad: Tensor, out: Tensor, base: Tensor,
                      *holder: Tensor) -> tuple[Tensor | None, ...]:
    """The view's gradient scattered into the base (an old history's holder, if any, gets none)."""
    return (_scattered(window, grad), *(None,) * len(holder))


def _written_graph(window: Window, grad: Tensor, out: Tensor, base: Tensor,
                   part: Tensor) -> tuple[Tensor, Tensor]:
    return _outside(window, grad), _inside(window, grad)


def _scattered(window: Window, t: Tensor) -> Tensor:
    """t (of the view's shape) laid into zeros of the base's shape."""
    return record(window.scatter(t.data), "as_strided backward", (t,), window.inside, saved=(),
                  graph_vjp=partial(_inside_graph, window))


def _inside(window: Window, t: Tensor) -> Tensor:
    """The view's elements of t (of the base's shape)."""
    return record(window.inside(t.data), "as_strided", (t,), window.scatter, saved=(),
                  graph_vjp=partial(_as_strided_graph, window))


def _outside(window: Window, t: Tensor) -> Tensor:
    """t (of the base's shape) with the view's elements zeroed."""
    return record(window.outside(t.data), "as_strided outside", (t,), window.outside, saved=(),
                  graph_vjp=partial(_outside_graph, window))


def _inside_graph(window: Window, grad: Tensor, out: Tensor, t: Tensor) -> tuple[Tensor]:
    return (_inside(window, grad),)


def _outside_graph(window: Window, grad: Tensor, out: Tensor, t: Tensor) -> tuple[Tensor]:
    return (_outside(window, grad),)


def is_part(x: Tensor, key: Any, view: Tensor) -> bool:
    """Whether `view` is x[key] itself (the same elements of the same storage), as in `x[key] += 1`,
    which Python runs as `v = x[key]; v += 1; x[key] = v`."""
    with no_grad():
        part = x[key].data
    return (data_address(part) == data_address(view.data) and part.shape == view.data.shape
            and part.strides == view.data.strides and part.dtype == view.data.dtype)


def _take_history(x: Tensor, node: Tensor, name: str) -> None:
    """Make x the node `node` in the graph (x keeps its own storage, which holds node's values)."""
    x.parents, x._backward, x._requires_grad = node.parents, node._backward, node._requires_grad
    x._seq = node._seq  # x is now the newest node: it comes after what it was made from
    x.op, x.grad = name, None


def _detached_copy_with_history(x: Tensor, values: Any) -> Tensor:
    """A node that holds `values` (a copy of x's) and x's place in the graph."""
    before = new_leaf(values)
    before.parents, before._backward, before.op, before._seq = x.parents, x._backward, x.op, x._seq
    before._requires_grad, before.label = x._requires_grad, x.label
    if x._backward is not None:
        history_moved(x._backward, before)
    return before


class Window:
    """Where a view's elements sit among its base's: PyTorch's as_strided geometry, in elements.

    An array of the base's shape (a gradient, or a copy of the base's values) is laid into a
    scratch buffer with the base's own strides; the view's elements are then found in that
    buffer at the view's offset and strides, whatever chain of views made it.
    """

    def __init__(self, base: Any, view: Any, name: str) -> None:
        item = base.itemsize
        self.base_shape, self.view_shape = base.shape, view.shape
        self.base_steps = tuple(s // item for s in base.strides)
        self.view_steps = tuple(s // item for s in view.strides)
        low, high = _extent(self.base_shape, self.base_steps)
        self.start = -low  # where the base's first element sits in the buffer
        self.size = high - low + 1
        self.offset = self.start + (data_address(view) - data_address(base)) // item
        view_low, view_high = _extent(self.view_shape, self.view_steps)
        if view.size and not 0 <= self.offset + view_low <= self.offset + view_high < self.size:
            raise RuntimeError(f"{name}: this view reaches outside its base tensor's elements, so an "
                               "in-place change through it can't be recorded; clone() it first")

    def _buffer(self, like: Any) -> Any:
        return namespace(like).zeros(self.size, dtype=like.dtype)

    def _whole(self, buffer: Any) -> Any:
        steps = tuple(s * buffer.itemsize for s in self.base_steps)
        return strided_view(buffer[self.start:], self.base_shape, steps)

    def _part(self, buffer: Any) -> Any:
        steps = tuple(s * buffer.itemsize for s in self.view_steps)
        return strided_view(buffer[self.offset:], self.view_shape, steps)

    def copy_of_base(self, values: Any) -> tuple[Any, Any]:
        """A copy of the base's values in the base's own layout, and the view's elements in it."""
        buffer = self._buffer(values)
        self._whole(buffer)[...] = values
        return self._whole(buffer), self._part(buffer)

    def scatter(self, grad: Any) -> Any:
        """The view's gradient as the base's: zero outside the view's elements."""
        buffer = self._buffer(grad)
        self._part(buffer)[...] = grad
        return self._whole(buffer)

    def inside(self, grad: Any) -> Any:
        """The base's gradient at the view's elements."""
        buffer = self._buffer(grad)
        self._whole(buffer)[...] = grad
        return self._part(buffer)

    def outside(self, grad: Any) -> Any:
        """The base's gradient with the view's elements zeroed (they were overwritten)."""
        buffer = self._buffer(grad)
        self._whole(buffer)[...] = grad
        self._part(buffer)[...] = 0
        return self._whole(buffer)

    # The VJPs `record` gets (`MixedWindow` has its own): the same maps where the dtypes agree.
    scatter_vjp = scatter
    inside_vjp = inside


def window_of(base: Any, view: Any, name: str) -> Window:
    """The `Window` of `view` in `base`; a `MixedWindow` where their dtypes differ (`z.real`,
    `view_as_real(z)`, `view_as_complex(r)`)."""
    if base.dtype == view.dtype:
        return Window(base, view, name)
    return MixedWindow(base, view, name)


class MixedWindow(Window):
    """A `Window` between a complex array and a real view of it (`z.real`, `view_as_real(z)[..., 0]`)
    or a complex view of a real one (`view_as_complex(r)`): the geometry is counted in real
    elements, the complex side read as (real, imaginary) pairs, as `view_as_real` lays them out.

    A gradient crosses over the same way: PyTorch's gradient of z is dL/d(re z) + i dL/d(im z), so
    its pairs are the gradients of the real view's elements. Where a real gradient becomes a
    complex one, `record` would conjugate it (the convention for complex inputs, see
    `autograd.note_dtype`), so the `*_vjp` maps conjugate it first.
    """

    def __init__(self, base: Any, view: Any, name: str) -> None:
        self.complex_base = base.dtype.kind == "c"
        self.complex_dtype = base.dtype if self.complex_base else view.dtype
        self.real_dtype = np.finfo(self.complex_dtype).dtype
        if self.complex_base:
            super().__init__(_pairs(base), view, name)
        else:
            super().__init__(base, _pairs(view), name)
        # The complex side's first element at an even place, so that the buffer read as complex
        # numbers (two real elements each) holds it; an even size, for the same reading.
        shift = (self.start if self.complex_base else self.offset) % 2
        self.start, self.offset, self.size = self.start + shift, self.offset + shift, self.size + shift
        self.size += self.size % 2

    def _buffer(self, like: Any) -> Any:
        return namespace(like).zeros(self.size, dtype=self.real_dtype)

    def _complex(self, buffer: Any, first: int, shape: tuple[int, ...], steps: tuple[int, ...]) -> Any:
        """The buffer read as complex numbers from real element `first`, with pairs' `shape` and
        `steps` (in real elements; the pairs' own last axis left out)."""
        strides = tuple(s * buffer.itemsize for s in steps[:-1])
        return strided_view(buffer.view(self.complex_dtype)[first // 2:], shape[:-1], strides)

    def _base_in(self, buffer: Any) -> Any:
        if self.complex_base:
            return self._complex(buffer, self.start, self.base_shape, self.base_steps)
        return self._whole(buffer)

    def _view_in(self, buffer: Any) -> Any:
        if self.complex_base:
            return self._part(buffer)
        return self._complex(buffer, self.offset, self.view_shape, self.view_steps)

    def _base_pairs(self, values: Any) -> Any:
        return _pairs(values) if self.complex_base else values

    def _view_pairs(self, values: Any) -> Any:
        return values if self.complex_base else _pairs(values)

    def copy_of_base(self, values: Any) -> tuple[Any, Any]:
        buffer = self._buffer(values)
        self._whole(buffer)[...] = self._base_pairs(values)
        return self._base_in(buffer), self._view_in(buffer)

    def scatter(self, grad: Any) -> Any:
        buffer = self._buffer(grad)
        self._part(buffer)[...] = self._view_pairs(grad)
        return self._base_in(buffer)

    def inside(self, grad: Any) -> Any:
        buffer = self._buffer(grad)
        self._whole(buffer)[...] = self._base_pairs(grad)
        return self._view_in(buffer)

    def outside(self, grad: Any) -> Any:
        buffer = self._buffer(grad)
        self._whole(buffer)[...] = self._base_pairs(grad)
        self._part(buffer)[...] = 0
        return self._base_in(buffer)

    def scatter_vjp(self, grad: Any) -> Any:
        """`scatter` as a VJP: into a complex base, conjugated ahead of `record`'s conjugation."""
        out = self.scatter(grad)
        return namespace(out).conj(out) if self.complex_base else out

    def inside_vjp(self, grad: Any) -> Any:
        """`inside` as a VJP: into a complex view, conjugated ahead of `record`'s conjugation."""
        out = self.inside(grad)
        return out if self.complex_base else namespace(out).conj(out)


def _pairs(array: Any) -> Any:
    """A complex array read as real (real, imaginary) pairs along a new last axis, as
    `view_as_real` lays them out (read only: a view of the same memory)."""
    array = namespace(array).asarray(array)
    real = array.real
    return strided_view(real, (*array.shape, 2), (*array.strides, real.itemsize), read_only=True)


def _extent(shape: tuple[int, ...], steps: tuple[int, ...]) -> tuple[int, int]:
    """The lowest and highest element an array reaches, relative to its first element."""
    low = sum(min(0, (n - 1) * s) for n, s in zip(shape, steps, strict=True) if n)
    high = sum(max(0, (n - 1) * s) for n, s in zip(shape, steps, strict=True) if n)
    return low, high


def _write(x: Tensor, values: np.ndarray, name: str) -> None:
    if not writeable(x.data):
        _raise_read_only(name)
    if values.shape != x.data.shape:
        raise ShapeError(
            f"{name}: the result has shape {values.shape} but the tensor changed in place has "
            f"shape {x.shape}; in-place ops can't change a tensor's shape"
        )
    if not _can_store(values.dtype, x.data.dtype):
        raise RuntimeError(
            f"{name}: a result of dtype {values.dtype} can't be stored in a {x.dtype} tensor"
        )
    np.copyto(x.data, values, casting="unsafe")
    bump_version(x)


def _can_store(result: np.dtype, target: np.dtype) -> bool:
    """PyTorch's rule for writing a result into a tensor in place (its `canCast`): no float into an
    integer tensor, nothing but bool into a bool one; narrowing within a kind (float64 into
    float32, int64 into uint8) is allowed, where numpy's "same_kind" refuses int64 into uint8
    and lets int64 into bool."""
    if target.kind == "b":
        return result.kind == "b"
    if target.kind in "iu":
        return result.kind in "biu"
    return target.kind == "c" or result.kind != "c"


def _raise_read_only(name: str) -> None:
    raise RuntimeError(
        f"{name}: this tensor is read-only: an expand/broadcast_to view, whose elements share "
        "memory, or a read-only numpy array; clone() it before changing it in place"
    )


# --- outside the graph: resize_, and Python functions applied per element ------------------------


def resize(x: Tensor, shape: tuple[int, ...], name: str = "resize_") -> Tensor:
    """`x.resize_(*shape)`: x takes `shape` with row-major strides over its storage's elements in
    memory order, from its own first one. Where the storage is too small, x moves to a new one:
    those elements first, then zeros (PyTorch leaves them uninitialised). An unchanged shape
    keeps x as it is. Never in the graph: a tensor that requires grad can't be resized (PyTorch's rule)."""
    from tensorgrad.movement import _storage_of

    if x._requires_grad:
        raise RuntimeError(f"{name}(): cannot resize variables that require grad (a tensor of shape "
                           f"{x.shape}); resize a detach()ed tensor")
    data = x.data
    if shape == data.shape:
        return x  # (PyTorch counts no change either)
    storage = _storage_of(data)
    n = int(np.prod(shape, dtype=np.int64))
    if storage.flags.c_contiguous:
        # The storage's elements from x's first one on, as an array of x's own kind.
        start = (data_address(data) - data_address(storage)) // data.itemsize
        rest = storage.size - start
        tail = (storage.reshape(-1)[start:] if type(storage) is type(data)  # (writable, even from an expand)
                else strided_view(data, (rest,), (data.itemsize,)))
    else:  # (a buffer not laid out in one piece: x's elements, copied in memory order)
        rest, tail = data.size, None
    if tail is not None and n <= rest:
        x._data = tail[:n].reshape(shape)
    else:
        grown = namespace(data).zeros(n, dtype=data.dtype)
        keep = min(n, rest)
        grown[:keep] = (tail if tail is not None else data.ravel(order="K"))[:keep]
        x._data = grown.reshape(shape)
        x._base, x._versions = None, [x._versions[0]]  # a storage of its own from now on
    bump_version(x)
    x._view_version = x._versions[0]
    return x


def resize_as_(input: Tensor, the_template: Tensor) -> Tensor:  # noqa: A002
    """input resized in place to the_template's shape: `input.resize_as_(the_template)`."""
    return input.resize_as_(the_template)


def apply_function(x: Tensor, fn: Callable[..., Any], name: str, *others: Tensor) -> Tensor:
    """`x.apply_(fn)` and `x.map_(other, fn)`: each element of x replaced by fn(element) or
    fn(element, other's element), other broadcast to x's shape; fn gets and returns Python
    numbers (float, int or bool, by x's dtype). A Python loop on the host, so as PyTorch: CPU
    tensors only, and none that requires grad."""
    tensors = (x, *others)
    if any(t.device.type != "cpu" for t in tensors):
        raise TypeError(f"{name} is only implemented on CPU tensors (got a tensor on {x.device})")
    if any(t._requires_grad for t in tensors):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                           "instead.")
    if not callable(fn):
        raise TypeError(f"{name}(): argument 'callable' must be callable, got {type(fn).__name__}")
    if not writeable(x.data):
        _raise_read_only(name)
    number = {"f": float, "b": bool}.get(x.dtype.kind, int)
    columns = [np.broadcast_to(to_numpy(t.data), x.shape).reshape(-1).tolist() for t in tensors]
    results = []
    for args in zip(*columns, strict=True):
        value = fn(*args)
        if not isinstance(value, numbers.Real):
            raise TypeError(f"{name}(): the function must return a real number, got "
                            f"{type(value).__name__}")
        results.append(number(value))
    x.data[...] = array_like(results, x.data, x.dtype).reshape(x.shape)
    bump_version(x)
    return x


def map_function(x: Tensor, other: Tensor, fn: Callable[[Any, Any], Any]) -> Tensor:
    """`x.map_(other, fn)`: x's elements replaced by fn(x's, other's), other (of x's dtype)
    broadcast to x's shape; see `apply_function`."""
    if not isinstance(other, Tensor):
        raise TypeError(f"map_(): argument 'other' must be Tensor, not {type(other).__name__}")
    if other.dtype != x.dtype:
        raise TypeError(f"map_(): expected a {x.dtype} tensor for 'other' (got {other.dtype})")
    if not checks.broadcasts_to(other.shape, x.shape):
        raise RuntimeError(f"map_(): other of shape {other.shape} can't be broadcast to the shape {x.shape} "
                           "of the tensor changed in place")
    return apply_function(x, fn, "map_", other)


def fill(x: Tensor, value: float) -> Tensor:
    """A tensor like x, every element `value` (checked to fit x's dtype, as PyTorch checks it:
    -1 wraps to 255 in uint8, 300 does not fit). Derivative: 0."""
    if isinstance(value, bool | int | float | complex):
        value = checked_scalar(value, x.dtype, "fill_")
    return record(np.full_like(x.data, value), "fill", (x,),
                  lambda grad: np.zeros_like(grad), saved=(), graph_vjp=_flat_graph)


def raise_lost_imaginary(value: complex, dtype: np.dtype, op: str) -> None:
    """PyTorch's RuntimeError for a complex number with an imaginary part written into a real tensor."""
    raise RuntimeError(f"{op}(): value {value} cannot be converted to type {dtype} without overflow "
                       "(its imaginary part would be lost)")


def copy(x: Tensor, src: Tensor) -> Tensor:
    """`src` broadcast to x's shape, in x's dtype. d/dx = 0, d/dsrc = 1 (summed over broadcast)."""
    try:
        out = np.broadcast_to(src.data, x.data.shape).astype(x.data.dtype)
    except ValueError:
        raise ShapeError(f"copy_: source of shape {src.shape} can't be broadcast to {x.shape}") from None
    return record(out, "copy", (x, src),
                  lambda grad: np.zeros_like(grad),
                  lambda grad: grad, saved=(), graph_vjp=_copy_graph)


def _copy_graph(grad: Tensor, out: Tensor, x: Tensor, src: Tensor) -> tuple[Tensor, Tensor]:
    return new_leaf(namespace(grad.data).zeros_like(grad.data)), grad


def truth(x: Tensor, op: Callable[..., Tensor], *others: Any) -> Tensor:
    """op(x, *others), a comparison or logical op, as 0 and 1 in x's dtype: what `x.lt_(other)`
    writes. Derivative: 0 for every tensor input, as PyTorch's `LtBackward1` (a step is flat).

    A float tensor that requires grad keeps requiring it after `y.lt_(0)`, as in PyTorch.
    """
    values = op(x, *others).data.astype(x.data.dtype)
    if x.data.dtype.kind not in "fc":  # an integer or bool result carries no gradient
        return new_leaf(values)
    inputs = (x, *(other for other in others if isinstance(other, Tensor)))
    return record(values, op.__name__, inputs, *(_flat,) * len(inputs), saved=(), graph_vjp=_flat_graph)


def _flat(grad: Any) -> Any:
    return np.zeros_like(grad)


def _flat_graph(grad: Tensor, out: Tensor, *inputs: Tensor) -> tuple[Tensor, ...]:
    """Zero for every input (a constant, or a step)."""
    return tuple(new_leaf(namespace(grad.data).zeros_like(grad.data)) for _ in inputs)
