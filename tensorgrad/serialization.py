"""`tg.save` and `tg.load`: state dicts to and from files, never pickle (tutorial chapter 9).

A state dict (`model.state_dict()`) maps names to tensors. Two formats hold one:

- `.npz` (any file name not ending in `.safetensors`): a zip archive with one numpy `.npy`
  array per name, written here with `zipfile` and `np.lib.format`, so any name works (numpy's
  `np.savez` takes names as keyword arguments and trips over `file` or `allow_pickle`).
  `np.load(path)` reads it too.
- `.safetensors` (the name ends in `.safetensors`): the format of Hugging Face's `safetensors`
  package, which PyTorch users load with `safetensors.torch.load_file`. Needs that package
  (`pip install "scalargrad[safetensors]"`).

A tensor on the GPU is saved from a host copy; `load` gives CPU tensors, or tensors on the
device named by `map_location` (`tg.load(path, map_location="cuda")`, as `torch.load` takes it).

A checkpoint (`{"epoch": 3, "model": model.state_dict(), "optimizer": opt.state_dict()}`), a
tensor, or any nesting of dicts, lists and tuples of tensors, arrays, numbers, strings and None
goes to an `.npz` archive too: each array under its dotted path (`model.fc.weight`), and the
shape of the object as JSON text (a uint8 array named `__tensorgrad_structure__`), from which
`load` builds it back: the same keys and kinds, numbers as numbers, tensors as tensors (a
`Parameter` as one, `requires_grad` kept). A `.safetensors` file holds a flat state dict only.

Nothing is ever unpickled, so loading a file cannot run code from it. `load` accepts only
arrays of numbers and booleans and refuses anything else (a pickle, a PyTorch checkpoint, a
single `.npy`, text, object or string arrays, a damaged file) with a message that names what
it found. Errors follow one rule: a wrong Python argument (not a mapping, a key that is not a
string, a value that is not numeric, a text-mode file) is a `TypeError`; a file whose content
is not what its name says, or is damaged, is a `ValueError`; a missing file or a directory is
the `OSError` Python gives.
"""

from __future__ import annotations

import io
import json
import math
import os
import struct
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any

import numpy as np

from tensorgrad.device import as_device, device, is_array, to_device, to_numpy
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["save", "load"]

PathOrFile = str | os.PathLike | IO[bytes]

NUMERIC_KINDS = "biufc"  # numpy dtype kinds: bool, signed and unsigned int, float, complex
SAFETENSORS_SUFFIX = ".safetensors"
ZIP = "a zip archive"
SAFETENSORS = "a safetensors file"
EMPTY = "an empty file"
STRUCTURE_KEY = "__tensorgrad_structure__"  # the JSON shape of a saved checkpoint, as uint8 text
HEAD_BYTES = 200  # what load reads first to tell the format (and, for text, to quote it)
# What load expects, in words, by the format the name (or, for a file object without one, the content) says.
EXPECTED = {ZIP: f"an .npz archive (a zip of .npy arrays: any name not ending in {SAFETENSORS_SUFFIX})",
            SAFETENSORS: SAFETENSORS, None: "an .npz archive or a safetensors file"}
SAFETENSORS_MAX_HEADER = 100_000_000  # the safetensors package's own limit on the JSON header
# The dtypes safetensors' numpy API reads and writes; PyTorch's bfloat16 and float8 have no numpy dtype.
SAFETENSORS_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
                      "I32": np.int32, "I16": np.int16, "I8": np.int8, "U64": np.uint64, "U32": np.uint32,
                      "U16": np.uint16, "U8": np.uint8, "BOOL": np.bool_, "C64": np.complex64}


# ---- save ---------------------------------------------------------------------------------------

def save(obj: Any, path: PathOrFile, pickle_module: Any = None, pickle_protocol: Any = None,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write a state dict (names to tensors, numpy arrays or numbers) to `path`; in an `.npz`
    archive, also a checkpoint, a tensor, or any nesting of dicts, lists and tuples of them.

    `.safetensors` when the name ends so, otherwise an `.npz` archive written exactly at `path`
    (numpy would add `.npz` to a name without it). `path` may be a binary file object; its
    `name`, if it has one, picks the format the same way. Every value is checked before the
    file is opened, so a refused state dict leaves an existing file untouched. (PyTorch's
    pickle arguments are accepted and unused: nothing is pickled.)
    """
    name = _name_of(path, "tg.save", needs="write")
    if (name is not None and name.lower().endswith(SAFETENSORS_SUFFIX)) or _is_state_dict(obj):
        arrays = _state_arrays(obj)
    else:
        arrays = _packed(obj)
    if name is not None and name.lower().endswith(SAFETENSORS_SUFFIX):
        content = _safetensors_bytes(arrays)
        write = lambda file: file.write(content)
    else:
        _check_npz_keys(arrays)
        write = lambda file: _write_npz(arrays, file)
    if isinstance(path, str | os.PathLike):
        with open(path, "wb") as file:
            write(file)
    else:
        write(path)


def _is_state_dict(obj: Any) -> bool:
    """Whether obj is a flat state dict: string keys, each value a tensor, an array or a number."""
    return (isinstance(obj, Mapping) and STRUCTURE_KEY not in obj
            and all(isinstance(key, str) and _is_numeric(value) for key, value in obj.items()))


def _is_numeric(value: Any) -> bool:
    return isinstance(value, Tensor | np.generic | bool | int | float | complex) or is_array(value)


def _packed(obj: Any) -> dict[str, np.ndarray]:
    """Any nesting of containers, tensors and plain values as arrays: one per tensor, array or
    numpy scalar, under its dotted path, and the nesting as JSON text under STRUCTURE_KEY."""
    arrays: dict[str, np.ndarray] = {}

    def stored(value: Any, path: list[str]) -> str:
        name = ".".join(path).replace("\0", "?") or "tensor"
        unique, n = name, 1
        while unique in arrays or unique == STRUCTURE_KEY:
            unique, n = f"{name}#{n}", n + 1
        arrays[unique] = _numeric_array(".".join(path) or "the object", value)
        return unique

    def encode(value: Any, path: list[str], is_key: bool = False) -> dict[str, Any]:
        if isinstance(value, Tensor) and not is_key:
            node: dict[str, Any] = {"tensor": stored(value, path)}
            if value.requires_grad:
                node["requires_grad"] = True
            if type(value).__name__ == "Parameter":
                node["parameter"] = True
            return node
        if is_array(value) and not is_key:
            return {"array": stored(value, path)}
        if isinstance(value, np.generic) and not is_key:
            return {"scalar": stored(value, path)}
        if value is None or isinstance(value, bool | int | float | str):
            return {"value": value}
        if isinstance(value, complex):
            return {"complex": [value.real, value.imag]}
        if isinstance(value, tuple):
            return {"tuple": [encode(v, [*path, str(i)], is_key) for i, v in enumerate(value)]}
        if isinstance(value, list) and not is_key:
            return {"list": [encode(v, [*path, str(i)]) for i, v in enumerate(value)]}
        if isinstance(value, Mapping) and not is_key:
            kind = "odict" if isinstance(value, OrderedDict) else "dict"
            return {kind: [[encode(k, path, is_key=True), encode(v, [*path, str(k)])]
                           for k, v in value.items()]}
        where = ".".join(path) or "the object"
        what = f"a key of {where!r}" if is_key else repr(where)
        raise TypeError(f"tg.save: {what} is a {type(value).__name__}, which is not a tensor, an array, a "
                        "number, a string, None or a dict, list or tuple of them (tensorgrad never pickles)")

    skeleton = encode(obj, [])
    text = json.dumps(skeleton).encode()
    arrays[STRUCTURE_KEY] = np.frombuffer(text, dtype=np.uint8).copy()
    return arrays


def _unpacked(node: Any, state: dict[str, Tensor], label: str) -> Any:
    """The object `_packed` wrote: its JSON skeleton `node`, with the arrays of `state` put back."""
    if not isinstance(node, dict) or not node:
        raise ValueError(f"tg.load: {label} has a damaged structure (node {node!r})")
    kind = next(iter(node))  # the node's kind comes first, then its options (requires_grad)
    content = node[kind]
    if kind == "value":
        return content
    if kind == "complex":
        return complex(*content)
    if kind in ("tensor", "array", "scalar"):
        if content not in state:
            raise ValueError(f"tg.load: {label} has a damaged structure (no array named {content!r})")
        tensor = state[content]
        if kind == "array":
            return tensor.data
        if kind == "scalar":
            return tensor.data[()]
        if node.get("parameter"):
            from tensorgrad.nn import Parameter

            return Parameter(tensor, requires_grad=bool(node.get("requires_grad")))
        return tensor.requires_grad_(True) if node.get("requires_grad") else tensor
    if kind in ("list", "tuple"):
        items = [_unpacked(item, state, label) for item in content]
        return items if kind == "list" else tuple(items)
    if kind in ("dict", "odict"):
        pairs = ((_unpacked(k, state, label), _unpacked(v, state, label)) for k, v in content)
        return OrderedDict(pairs) if kind == "odict" else dict(pairs)
    raise ValueError(f"tg.load: {label} has a damaged structure (unknown kind {kind!r})")


def _state_arrays(obj: Any) -> dict[str, np.ndarray]:
    """The state dict's values as numeric arrays, or a TypeError naming the first bad entry."""
    if not isinstance(obj, Mapping):
        raise TypeError(
            f"tg.save stores a state dict (a mapping of names to tensors), got {type(obj).__name__}"
        )
    arrays = {}
    for name, value in obj.items():
        if not isinstance(name, str):
            raise TypeError(f"tg.save: keys must be strings, got {type(name).__name__} {name!r}")
        arrays[name] = _numeric_array(name, value)
    return arrays


def _numeric_array(name: str, value: Any) -> np.ndarray:
    """A state dict's value as a numeric numpy array (a GPU array's host copy)."""
    if isinstance(value, Tensor) or is_array(value):
        array = to_numpy(value.data if isinstance(value, Tensor) else value)
    elif isinstance(value, np.generic | bool | int | float | complex):
        array = np.asarray(value)  # a Python float stays float64: its value is kept exactly
    else:
        raise TypeError(f"tg.save: {name!r} is a {type(value).__name__}, which is not numeric; a state "
                        "dict maps names to tensors, numpy arrays or numbers (never pickled objects)")
    if array.dtype.kind not in NUMERIC_KINDS:
        raise TypeError(f"tg.save: {name!r} is not numeric (dtype {array.dtype}); only tensors, "
                        "numpy arrays and numbers are stored, never pickled objects")
    return array


def _check_npz_keys(arrays: dict[str, np.ndarray]) -> None:
    for name in arrays:
        if "\0" in name:  # zipfile cuts a member name at NUL: the key would not come back
            raise ValueError(f"tg.save: the key {name!r} holds a NUL character, which an .npz "
                             "archive cannot store (a .safetensors file can)")


def _write_npz(arrays: dict[str, np.ndarray], file: IO[bytes]) -> None:
    """An uncompressed zip with one `NAME.npy` per array, as `np.savez` writes it."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _safetensors_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    numpy_api = _safetensors_numpy()
    if "__metadata__" in arrays:
        raise ValueError("tg.save: the key '__metadata__' is reserved by the safetensors format for its "
                         "header's notes (an .npz archive can store it)")
    for name, array in arrays.items():
        if array.dtype.type not in SAFETENSORS_DTYPES.values():
            raise TypeError(f"tg.save: {name!r} has dtype {array.dtype}, which a .safetensors file "
                            "cannot hold (an .npz archive can)")
    # safetensors copies raw memory from each array's data pointer: a view must be made
    # contiguous first, or a transposed tensor would be saved in its storage order.
    # (np.ascontiguousarray would also turn a 0-d array into shape (1,).)
    contiguous = {name: array if array.flags.c_contiguous else array.copy(order="C")
                  for name, array in arrays.items()}
    # "format": "pt" is what Hugging Face's loaders ask of a PyTorch-layout state dict.
    return numpy_api.save(contiguous, metadata={"format": "pt"})


def _safetensors_numpy() -> Any:
    try:
        import safetensors.numpy
    except ImportError:
        raise ModuleNotFoundError(
            "reading or writing .safetensors files needs the safetensors package: "
            'pip install "scalargrad[safetensors]"'
        ) from None
    return safetensors.numpy


# ---- load ---------------------------------------------------------------------------------------

def load(path: PathOrFile, map_location: str | device | None = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read a state dict from an `.npz` archive or a `.safetensors` file: names to tensors (or
    the checkpoint, tensor or nesting that `save` wrote to the archive).

    The name decides the format, as in `save`: `.safetensors` for a name ending so, an `.npz`
    archive for any other name; a file object without a name may be either. The tensors come
    in the order the file lists them, on the CPU or on the device `map_location` names ("cpu",
    "cuda", "cuda:1" or a `tg.device`), and do not require grad. Anything else (a pickle, a
    PyTorch checkpoint, a single `.npy`, text, arrays of objects or strings, a damaged file)
    raises a ValueError naming what was found; nothing is ever unpickled. (PyTorch's
    `weights_only`, `mmap` and pickle arguments are accepted: loading here is always weights only.)
    """
    if map_location is not None and not isinstance(map_location, str | device):
        raise TypeError(f"tg.load: map_location must be a device name such as 'cpu' or 'cuda', or a "
                        f"tg.device, got {type(map_location).__name__}")
    target = as_device(map_location)  # checked before the file is read
    state = _read_state(path)
    structure = state.pop(STRUCTURE_KEY, None)
    if target.type != "cpu":
        for value in state.values():
            value.data = to_device(value.data, target, "tg.load")
    if structure is None:
        return state
    label = repr(os.fspath(path)) if isinstance(path, str | os.PathLike) else "the file object"
    try:
        skeleton = json.loads(to_numpy(structure.data).tobytes())
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"tg.load: {label} has a damaged structure ({error})") from None
    return _unpacked(skeleton, state, label)


def _read_state(path: PathOrFile) -> dict[str, Tensor]:
    """The state dict in the file at `path` (or in a file object), as CPU tensors."""
    name = _name_of(path, "tg.load", needs="read")
    label = repr(name) if name is not None else "the file object"
    with _seekable(path) as file:
        head, size = file.read(HEAD_BYTES), file.seek(0, os.SEEK_END)
        file.seek(0)
        found = _identify(head, size)
        expected = _expected_format(name, found)
        if found != expected:
            hint = _hint(found, is_path=isinstance(path, str | os.PathLike))
            raise ValueError(f"tg.load: {label} should be {EXPECTED[expected]}, but it is {found}{hint}")
        if found == SAFETENSORS:
            return _load_safetensors(file.read(), label)
        return _load_npz(file, label)


def _expected_format(name: str | None, found: str) -> str | None:
    if name is None:  # a file object without a name: either format, as its content says
        return found if found in (ZIP, SAFETENSORS) else None
    return SAFETENSORS if name.lower().endswith(SAFETENSORS_SUFFIX) else ZIP


def _name_of(path: Any, caller: str, needs: str) -> str | None:
    """The file name that decides the format (None for a file object without one)."""
    if isinstance(path, str | os.PathLike):
        return os.fspath(path)
    if isinstance(path, io.TextIOBase):
        raise TypeError(f"{caller} needs a file opened in binary mode ('rb' or 'wb'), got a text file")
    if not hasattr(path, needs):
        is_bytes = needs == "read" and isinstance(path, bytes | bytearray)
        hint = " (wrap bytes in io.BytesIO)" if is_bytes else ""
        raise TypeError(f"{caller} takes a path or a binary file object, got {type(path).__name__}{hint}")
    name = getattr(path, "name", None)
    return name if isinstance(name, str) else None


@contextmanager
def _seekable(path: PathOrFile) -> Iterator[IO[bytes]]:
    """The file at `path`, or the rest of a file object (which may not seek) as an in-memory file."""
    if isinstance(path, str | os.PathLike):
        with open(path, "rb") as file:  # a missing file or a directory: Python's own OSError
            yield file
        return
    content = path.read()
    if not isinstance(content, bytes):
        kind = type(content).__name__
        raise TypeError(f"tg.load needs a file opened in binary mode, its read() gave {kind}")
    yield io.BytesIO(content)


# What a file's first bytes say it is, for the formats a user is likely to hand over by mistake.
SIGNATURES = [
    (b"PK\x03\x04", ZIP),
    (b"PK\x05\x06", ZIP),  # an empty zip archive: an empty state dict
    (b"\x93NUMPY", "a single .npy array (np.save)"),
    (b"\x80", "a pickle (pickle.dump or an old torch.save)"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"\x89HDF", "an HDF5 file"),
]


def _identify(head: bytes, size: int) -> str:
    """What a file of `size` bytes that begins with `head` is: one of the two formats, or what instead."""
    if not head:
        return EMPTY
    # safetensors first: its 8-byte header length may begin with any byte, 0x80 (pickle's) too.
    if len(head) > 8 and head[8:9] == b"{":
        (header_length,) = struct.unpack("<Q", head[:8])
        if 8 + header_length <= size:
            return SAFETENSORS
        if header_length <= SAFETENSORS_MAX_HEADER:
            return (f"a truncated safetensors file (its header alone needs {8 + header_length} bytes, "
                    f"the file has {size})")
    for signature, description in SIGNATURES:
        if head.startswith(signature):
            return description
    text = head.decode("utf-8", errors="ignore")
    if b"\0" not in head and text and all(c.isprintable() or c.isspace() for c in text):
        return f"a text file (it begins {text[:40]!r})"
    return f"data of an unknown format (it begins {head[:8]!r})"


def _hint(found: str, is_path: bool) -> str:
    """What to do instead, where the mistake is a common one."""
    if found == EMPTY and not is_path:
        return "; a file object is read from where it stands: seek(0) after writing to it"
    if found == SAFETENSORS:
        return f"; give it a name ending in {SAFETENSORS_SUFFIX} to load it"
    if found == ZIP:
        return "; give it a name ending in .npz to load it"
    if found.startswith("a single .npy"):
        return ", which holds one unnamed array: read it with np.load and wrap it with tg.from_numpy"
    if found.startswith("a pickle"):
        return ("; tensorgrad never unpickles (it could run code): in PyTorch, write the state dict "
                "with safetensors.torch.save_file")
    return ""


def _load_npz(file: IO[bytes], label: str) -> dict[str, Tensor]:
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise ValueError(f"tg.load: {label} is a damaged or truncated zip archive ({error})") from None
    with archive:
        members = archive.infolist()
        names = [_array_name(member, label) for member in members]
        repeated = _first_repeated(names)
        if repeated is not None:
            raise ValueError(f"tg.load: {label} holds more than one array named {repeated!r}")
        return {name: new_leaf(_read_member(archive, member, label))
                for name, member in zip(names, members, strict=True)}


def _array_name(member: zipfile.ZipInfo, label: str) -> str:
    """The state-dict key of an archive member `KEY.npy`, or a ValueError for any other member."""
    if member.filename.endswith(".npy") and not member.is_dir():
        return member.filename[: -len(".npy")]
    if member.filename.endswith(".pkl"):
        raise ValueError(f"tg.load: {label} is a PyTorch checkpoint (torch.save; it holds "
                         f"{member.filename!r}, a pickle), which tensorgrad never unpickles; in PyTorch, "
                         "write the state dict with safetensors.torch.save_file and load that")
    kind = "a folder" if member.is_dir() else "not a .npy array"
    raise ValueError(f"tg.load: {label} is a zip archive but not an .npz of arrays: its member "
                     f"{member.filename!r} is {kind}")


# What reading a damaged archive member can raise, from zipfile, zlib and np.lib.format.
READ_ERRORS = (ValueError, EOFError, OSError, RuntimeError, NotImplementedError, zipfile.BadZipFile)


@contextmanager
def _reading(where: str) -> Iterator[None]:
    try:
        yield
    except READ_ERRORS as error:
        raise ValueError(f"{where} is damaged or not a .npy array ({error})") from None


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo, label: str) -> np.ndarray:
    """One `.npy` member as a native-byte-order array, its header checked before its data is read."""
    where = f"tg.load: {label}, array {member.filename!r}"
    with _reading(where), archive.open(member) as file:
        shape, dtype = _npy_header(file)
        stored_bytes = member.file_size - file.tell()
    _check_member(where, shape, dtype, stored_bytes)
    with _reading(where), archive.open(member) as file:
        array = np.lib.format.read_array(file, allow_pickle=False)
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


def _npy_header(file: IO[bytes]) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(file)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(file)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(file)
    else:  # version 3.0 exists only for structured dtypes with non-ASCII field names
        raise ValueError(f".npy format version {version}, which holds no plain numeric array")
    return shape, dtype


def _check_member(where: str, shape: tuple[int, ...], dtype: np.dtype, stored_bytes: int) -> None:
    """Refuse non-numeric dtypes before reading, and a header that promises more than is stored."""
    if dtype.hasobject:
        raise ValueError(f"{where} holds Python objects (dtype {dtype}), stored as a pickle, which "
                         "tensorgrad never unpickles")
    if dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"{where} holds dtype {dtype} ({_kind_words(dtype)}), not numbers")
    needed = math.prod(shape) * dtype.itemsize
    if needed > stored_bytes:
        raise ValueError(f"{where} is truncated: shape {shape} of {dtype} needs {needed} bytes, "
                         f"the archive holds {stored_bytes}")


def _kind_words(dtype: np.dtype) -> str:
    if dtype.names:
        return "structured records"
    words = {"U": "text", "S": "bytes", "V": "raw bytes", "M": "dates", "m": "time spans"}
    return words.get(dtype.kind, "not numbers")


def _load_safetensors(content: bytes, label: str) -> dict[str, Tensor]:
    names = _safetensors_names(content, label)
    numpy_api = _safetensors_numpy()
    from safetensors import SafetensorError

    try:
        arrays = numpy_api.load(content)
    except SafetensorError as error:
        raise ValueError(f"tg.load: {label} is a damaged safetensors file ({error})") from None
    # safetensors gives each tensor a buffer of its own; copy only where one comes back read-only.
    return {name: new_leaf(np.require(arrays[name], requirements="W")) for name in names}


def _safetensors_names(content: bytes, label: str) -> list[str]:
    """The tensor names in the file's JSON header, in order, after checking each entry's dtype."""
    (header_length,) = struct.unpack("<Q", content[:8])
    try:
        header = json.loads(content[8 : 8 + header_length], object_pairs_hook=_refuse_repeated_keys)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"tg.load: {label} has a bad safetensors header ({error})") from None
    if not isinstance(header, dict):
        raise ValueError(f"tg.load: {label} has a bad safetensors header (a JSON {type(header).__name__}, "
                         "not an object)")
    names = [name for name in header if name != "__metadata__"]
    for name in names:
        entry = header[name]
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        if not isinstance(dtype, str):
            raise ValueError(f"tg.load: {label} has a bad safetensors header (entry {name!r} has no dtype)")
        if dtype not in SAFETENSORS_DTYPES:
            raise ValueError(f"tg.load: {label}, tensor {name!r} has dtype {dtype}, which numpy and "
                             "tensorgrad have no dtype for; in PyTorch, convert it first (e.g. .float())")
    return names


def _refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    repeated = _first_repeated([key for key, _ in pairs])
    if repeated is not None:
        raise ValueError(f"the name {repeated!r} appears more than once")
    return dict(pairs)


def _first_repeated(names: list[str]) -> str | None:
    """The smallest name that `names` holds more than once, or None."""
    return min((name for name, count in Counter(names).items() if count > 1), default=None)
