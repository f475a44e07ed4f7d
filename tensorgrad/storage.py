"""Storages: the memory that a tensor and all its views share, as PyTorch's
`t.untyped_storage()` (bytes) and `t.storage()` (elements of the tensor's dtype) show it.

The memory is the array at the root of the data's chain of numpy (or CuPy) views; a storage holds
that root, so two tensors share memory exactly when their storages' `data_ptr()` agree."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tensorgrad import device as device_module


def root_array(data: Any) -> Any:
    """The array that owns `data`'s memory: up the chain of views (through as_strided's holder)."""
    root = data
    while hasattr(root.base, "__array_interface__") or device_module.is_array(root.base):
        root = root.base
    return root


def _flat_bytes(root: Any) -> Any:
    """The root's memory as a flat uint8 array (a view: the root owns contiguous memory)."""
    array = root if device_module.is_array(root) else np.asarray(root)  # as_strided's holder
    return array.ravel(order="K").view(device_module.namespace(array).uint8)


class UntypedStorage:
    """The bytes under a tensor and its views (`t.untyped_storage()`)."""

    def __init__(self, root: Any) -> None:
        self._bytes = _flat_bytes(root)

    def data_ptr(self) -> int:
        """The address of the first byte: equal for tensors that share memory."""
        return device_module.data_address(self._bytes)

    def nbytes(self) -> int:
        """How many bytes the storage holds."""
        return int(self._bytes.size)

    def size(self) -> int:
        """How many bytes the storage holds (PyTorch's name)."""
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        """One byte per element."""
        return 1

    @property
    def device(self) -> Any:
        """The device of the memory."""
        return device_module.device_of(self._bytes)

    def __getitem__(self, index: int) -> int:
        return int(self._bytes[index])

    def tolist(self) -> list[int]:
        """The bytes, as Python ints."""
        return [int(byte) for byte in device_module.to_numpy(self._bytes)]

    def __repr__(self) -> str:
        lines = "".join(f" {byte}\n" for byte in self.tolist())
        return f"{lines}[tensorgrad.UntypedStorage(device={self.device}) of size {self.nbytes()}]"


class TypedStorage:
    """The elements under a tensor and its views, in the tensor's dtype (`t.storage()`,
    which PyTorch deprecates in favour of `untyped_storage()`)."""

    def __init__(self, root: Any, dtype: Any) -> None:
        self._untyped = UntypedStorage(root)
        self.dtype = dtype
        self._elements = self._untyped._bytes.view(dtype)

    def untyped(self) -> UntypedStorage:
        """The same memory as bytes."""
        return self._untyped

    def data_ptr(self) -> int:
        """The address of the first element."""
        return self._untyped.data_ptr()

    def size(self) -> int:
        """How many elements of `dtype` the storage holds."""
        return int(self._elements.size)

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        """The bytes of one element."""
        return int(self._elements.itemsize)

    def nbytes(self) -> int:
        """How many bytes the storage holds."""
        return self._untyped.nbytes()

    @property
    def device(self) -> Any:
        """The device of the memory."""
        return self._untyped.device

    def __getitem__(self, index: int) -> Any:
        return self._elements[index].item()

    def tolist(self) -> list[Any]:
        """The elements, as Python numbers."""
        return device_module.to_numpy(self._elements).tolist()

    def __repr__(self) -> str:
        lines = "".join(f" {value}\n" for value in self.tolist())
        return (f"{lines}[tensorgrad.TypedStorage(dtype=tensorgrad.{self.dtype}, device={self.device}) "
                f"of size {self.size()}]")


def untyped_storage(data: Any) -> UntypedStorage:
    """The bytes under the array `data` and every view of the same memory."""
    return UntypedStorage(root_array(data))


def typed_storage(data: Any) -> TypedStorage:
    """The elements under `data`, with PyTorch's deprecation warning for `storage()`."""
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
                  "be the only storage class. This should only matter to you if you are using storages "
                  "directly. To access UntypedStorage directly, use tensor.untyped_storage() instead of "
                  "tensor.storage()", UserWarning, stacklevel=3)
    return TypedStorage(root_array(data), data.dtype)
