"""`tg.save` / `tg.load`: state dicts through `.npz` and `.safetensors` files, never pickle.

Round trips first (any key, every numeric dtype, views), then every file mistake a user can
make, each refused with the exception type and a message naming what was found, then the
round trip with PyTorch through safetensors, and tensors on a GPU (saved from host copies,
loaded onto the device `map_location` names).
"""

from __future__ import annotations

import io
import json
import pickle
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import placed_on
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad import nn
from tensorgrad.device import to_numpy

FORMATS = ["model.npz", "model.safetensors"]


def make_model():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def npy_bytes(array, allow_pickle=False):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def write_zip(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def safetensors_bytes(header, data=b""):
    """A safetensors file by hand: 8-byte little-endian header length, JSON header, data."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


class Marker:
    """Unpickling this creates a file: proof that a loader ran code from the file it read."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


# ---- round trips -------------------------------------------------------------------------------

@pytest.mark.parametrize("filename", ["model.pt", *FORMATS])
def test_a_model_survives_a_round_trip_through_a_file(tmp_path, filename):
    source, target = make_model(), make_model()
    path = tmp_path / filename  # any name: the file is written exactly there
    tg.save(source.state_dict(), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [filename]
    state = tg.load(path)
    assert sorted(state) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    assert state["0.weight"].dtype == tg.float32
    assert all(isinstance(t, tg.Tensor) and not t.requires_grad and t.is_leaf for t in state.values())
    target.load_state_dict(state)
    x = tg.randn(5, 3)
    np.testing.assert_array_equal(target(x).data, source(x).data)


def test_the_npz_file_is_plain_numpy_with_no_pickle(tmp_path):
    path = str(tmp_path / "weights.npz")
    tg.save({"w": tg.ones(2, 3), "step": 7, "mask": np.array([True, False]),
             "x64": tg.zeros(2, dtype=tg.float64)}, path)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["w.npy", "step.npy", "mask.npy", "x64.npy"]
    assert list(tg.load(path)) == ["w", "step", "mask", "x64"]  # the order it was saved in
    assert [t.dtype for t in tg.load(path).values()] == [tg.float32, tg.int64, tg.bool_, tg.float64]
    with np.load(path, allow_pickle=False) as arrays:
        np.testing.assert_array_equal(arrays["w"], np.ones((2, 3), np.float32))
        assert arrays["step"] == 7


@pytest.mark.parametrize("write", [np.savez, np.savez_compressed])
def test_npz_files_written_by_numpy_load(tmp_path, write):
    path = tmp_path / "numpy.npz"
    write(path, w=np.arange(6.0).reshape(2, 3).T, b=np.array([1, 2], np.int32))
    loaded = tg.load(path)
    assert list(loaded) == ["w", "b"] and loaded["b"].dtype == tg.int32
    np.testing.assert_array_equal(loaded["w"].data, np.arange(6.0).reshape(2, 3).T)


def test_keys_that_np_savez_mishandles_all_come_back(tmp_path):
    """The issue's case: np.savez(file, **arrays) swallows `allow_pickle` and crashes on `file`."""
    t, u, v = tg.tensor([1.0, 2.0]), tg.tensor([3.0]), tg.tensor([[4.0]])
    path = tmp_path / "p.npz"
    tg.save({"allow_pickle": t, "other": u, "file": v}, path)
    state = tg.load(path)
    assert list(state) == ["allow_pickle", "other", "file"]
    for loaded, saved in zip(state.values(), (t, u, v), strict=True):
        np.testing.assert_array_equal(loaded.data, saved.data)


ODD_KEYS = ["allow_pickle", "file", "fix_imports", "arr_0", "", "a/b/c", "x.npy", "../up", "/root",
            "with space", "ünïcödé ключ 名前", "tab\tnew\nline", "a\\b", "." * 3]


@pytest.mark.parametrize("filename", FORMATS)
def test_any_key_round_trips(tmp_path, filename):
    state = {key: tg.full((2,), float(i)) for i, key in enumerate(ODD_KEYS)}
    tg.save(state, tmp_path / filename)
    loaded = tg.load(tmp_path / filename)
    assert sorted(loaded) == sorted(ODD_KEYS)
    for i, key in enumerate(ODD_KEYS):
        np.testing.assert_array_equal(loaded[key].data, [float(i), float(i)])


keys = st.text(alphabet=st.characters(exclude_characters="\0", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(keys, min_size=1, max_size=5, unique=True),
       suffix=st.sampled_from([".npz", ".safetensors"]))
def test_generated_keys_round_trip(tmp_path, names, suffix):
    path = tmp_path / ("state" + suffix)
    tg.save({name: tg.tensor([float(i)]) for i, name in enumerate(names)}, path)
    loaded = tg.load(path)
    assert sorted(loaded) == sorted(names)
    assert all(loaded[name].item() == float(i) for i, name in enumerate(names))


NUMERIC_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                  np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.complex64]


@pytest.mark.parametrize("filename", FORMATS)
@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_numeric_dtype_round_trips(tmp_path, filename, dtype):
    array = (np.arange(-3, 3).reshape(2, 3) % 5).astype(dtype)
    tg.save({"a": array, "scalar": array[1, 2], "empty": np.zeros((0, 3), dtype)}, tmp_path / filename)
    loaded = tg.load(tmp_path / filename)
    expected_arrays = {"a": array, "scalar": np.asarray(array[1, 2]), "empty": np.zeros((0, 3), dtype)}
    for name, expected in expected_arrays.items():
        assert loaded[name].dtype == np.dtype(dtype) and loaded[name].shape == expected.shape
        np.testing.assert_array_equal(loaded[name].data, expected)


def test_complex128_and_big_endian_arrays_in_npz(tmp_path):
    big_endian = np.array([1.5, -2.0, 3.25], dtype=">f8")
    tg.save({"c": np.array([1 + 2j, -3j]), "be": big_endian}, tmp_path / "m.npz")
    loaded = tg.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded["c"].data, [1 + 2j, -3j])
    assert loaded["be"].dtype == tg.float64 and loaded["be"].dtype.isnative
    np.testing.assert_array_equal(loaded["be"].data, [1.5, -2.0, 3.25])


def test_python_numbers_keep_their_value(tmp_path):
    tg.save({"lr": 0.1, "step": 2**40, "flag": True}, tmp_path / "m.npz")
    loaded = tg.load(tmp_path / "m.npz")
    assert loaded["lr"].item() == 0.1 and loaded["lr"].dtype == tg.float64  # exact, not float32
    assert loaded["step"].item() == 2**40 and loaded["flag"].item() is True


def views():
    base = tg.arange(24.0).reshape(2, 3, 4)
    return {"transposed": base.transpose(0, 2), "strided": base[:, ::2, 1::2],
            "expanded": tg.tensor([[1.0], [2.0]]).expand(2, 5), "permuted": base.permute(2, 0, 1)}


@pytest.mark.parametrize("filename", FORMATS)
def test_views_save_their_values_not_their_storage(tmp_path, filename):
    state = views()
    assert not any(t.is_contiguous() for t in state.values())
    tg.save(state, tmp_path / filename)
    loaded = tg.load(tmp_path / filename)
    for name, view in state.items():
        assert loaded[name].shape == view.shape
        np.testing.assert_array_equal(loaded[name].data, view.data)


@pytest.mark.parametrize("filename", FORMATS)
def test_loaded_tensors_own_writable_memory(tmp_path, filename):
    tg.save({"w": tg.ones(3)}, tmp_path / filename)
    w = tg.load(tmp_path / filename)["w"]
    assert w.data.flags.writeable
    w.add_(1.0)
    np.testing.assert_array_equal(w.data, [2.0, 2.0, 2.0])


def test_file_objects_work_too(tmp_path):
    buffer = io.BytesIO()
    tg.save({"b": tg.tensor([1.0, 2.0])}, buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(tg.load(buffer)["b"].data, [1.0, 2.0])
    with open(tmp_path / "m.safetensors", "wb") as file:  # an open file's name picks the format
        tg.save({"b": tg.tensor([3.0])}, file)
    assert (tmp_path / "m.safetensors").read_bytes()[8:9] == b"{"
    with open(tmp_path / "m.safetensors", "rb") as file:
        np.testing.assert_array_equal(tg.load(file)["b"].data, [3.0])
    # A file object without a name may hold either format: its content decides.
    content = io.BytesIO((tmp_path / "m.safetensors").read_bytes())
    np.testing.assert_array_equal(tg.load(content)["b"].data, [3.0])


def test_a_file_object_left_at_its_end_is_explained():
    buffer = io.BytesIO()
    tg.save({"w": tg.ones(1)}, buffer)  # and no buffer.seek(0)
    with pytest.raises(ValueError, match=r"the file object .* but it is an empty file; .*seek\(0\)"):
        tg.load(buffer)


@pytest.mark.parametrize("filename", FORMATS)
def test_an_empty_state_dict_round_trips(tmp_path, filename):
    tg.save({}, tmp_path / filename)
    assert tg.load(tmp_path / filename) == {}


# ---- what save refuses -------------------------------------------------------------------------

# A safetensors file holds a flat state dict; an .npz archive holds checkpoints too (nested dicts,
# lists, strings, None: test_pytorch_habits.py round-trips them), but never a pickled object.
NOT_A_STATE_DICT = [
    ([tg.ones(2)], "state dict"),
    ({1: tg.ones(2)}, "keys must be strings, got int 1"),
    ({("a", 1): tg.ones(2)}, "keys must be strings"),
    ({"s": "text"}, "'s' is a str"),
    ({"opt": {"lr": 0.1}}, "'opt' is a dict"),
    ({"n": None}, "'n' is a NoneType"),
    ({"l": [1.0, 2.0]}, "'l' is a list"),
]
NEVER_STORED = [
    ({"f": lambda x: x}, "'f' is a function"),
    ({"o": np.array([1, "x"], dtype=object)}, r"'o' is not numeric \(dtype object\)"),
    ({"u": np.array(["a", "b"])}, "'u' is not numeric"),
    ({"d": np.array(["2020-01-01"], dtype="datetime64[D]")}, "'d' is not numeric"),
    ({"huge": 2**70}, "'huge' is not numeric"),
]
NEVER_STORED_IN_A_CHECKPOINT = [
    ({"model": {"w": tg.ones(2)}, "f": print}, "'f' is a builtin_function_or_method"),
    ({"model": {"w": np.array(["a"])}}, "'model.w' is not numeric"),
    ([tg.ones(2), {"s": {1, 2}}], "'1.s' is a set"),
]


@pytest.mark.parametrize(("obj", "message", "filename"),
                         [(*case, "model.safetensors") for case in NOT_A_STATE_DICT + NEVER_STORED]
                         + [(*case, "model.npz") for case in NEVER_STORED + NEVER_STORED_IN_A_CHECKPOINT])
def test_what_is_not_a_state_dict_is_refused(tmp_path, obj, message, filename):
    with pytest.raises(TypeError, match=message):
        tg.save(obj, tmp_path / filename)
    assert not (tmp_path / filename).exists()


def test_a_refused_save_leaves_the_old_file_untouched(tmp_path):
    path = tmp_path / "m.npz"
    tg.save({"w": tg.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        tg.save({"w": tg.zeros(2), "bad": print}, path)
    assert path.read_bytes() == before


def test_a_nul_in_a_key_is_refused_by_npz_and_kept_by_safetensors(tmp_path):
    with pytest.raises(ValueError, match="NUL"):
        tg.save({"a\0b": tg.ones(1)}, tmp_path / "m.npz")
    tg.save({"a\0b": tg.ones(1)}, tmp_path / "m.safetensors")
    assert list(tg.load(tmp_path / "m.safetensors")) == ["a\0b"]


def test_the_key_safetensors_reserves_is_refused_there_and_kept_in_npz(tmp_path):
    with pytest.raises(ValueError, match="'__metadata__' is reserved by the safetensors format"):
        tg.save({"__metadata__": tg.ones(1)}, tmp_path / "m.safetensors")
    assert not (tmp_path / "m.safetensors").exists()
    tg.save({"__metadata__": tg.ones(1)}, tmp_path / "m.npz")
    assert list(tg.load(tmp_path / "m.npz")) == ["__metadata__"]


def test_safetensors_refuses_a_dtype_it_cannot_hold(tmp_path):
    with pytest.raises(TypeError, match=r"'z' has dtype complex128.*\.safetensors"):
        tg.save({"z": np.zeros(2, np.complex128)}, tmp_path / "m.safetensors")


@pytest.mark.parametrize(("target", "error", "message"), [
    (b"bytes", TypeError, "path or a binary file object, got bytes"),
    (None, TypeError, "got NoneType"),
    (io.StringIO(), TypeError, "binary mode"),
])
def test_save_refuses_what_is_not_a_path_or_binary_file(target, error, message):
    with pytest.raises(error, match=message):
        tg.save({"w": tg.ones(1)}, target)


def test_save_to_a_directory_or_a_missing_folder_is_pythons_error(tmp_path):
    with pytest.raises((IsADirectoryError, PermissionError)):
        tg.save({"w": tg.ones(1)}, tmp_path)
    with pytest.raises(FileNotFoundError):
        tg.save({"w": tg.ones(1)}, tmp_path / "missing" / "m.npz")


# ---- what load refuses -------------------------------------------------------------------------

def test_a_zip_of_text_files_is_refused_not_wrapped_as_bytes(tmp_path):
    path = write_zip(tmp_path / "notes.npz", {"notes.txt": "hello", "more.txt": "world"})
    with pytest.raises(ValueError, match=r"'notes.txt' is not a .npy array"):
        tg.load(path)


def test_a_text_file_named_npy_inside_the_zip_is_refused(tmp_path):
    path = write_zip(tmp_path / "m.npz", {"w.npy": "1.0 2.0 3.0"})
    with pytest.raises(ValueError, match=r"array 'w.npy' is damaged or not a .npy array"):
        tg.load(path)


@pytest.mark.parametrize(("content", "found"), [
    (b"", "an empty file"),
    (b"w,b\n1.0,2.0\n", "a text file"),
    (npy_bytes(np.ones(3)), r"a single .npy array.*np.load.*tg.from_numpy"),
    (pickle.dumps({"w": [1.0, 2.0]}), r"a pickle.*never unpickles.*safetensors.torch.save_file"),
    (b"\x1f\x8b\x08\x00" + bytes(20), "gzip-compressed data"),
    (b"\x89HDF\r\n\x1a\n" + bytes(20), "an HDF5 file"),
    (bytes(range(1, 40)), r"data of an unknown format \(it begins b'\\x01\\x02"),
], ids=["empty", "text", "npy", "pickle", "gzip", "hdf5", "binary"])
@pytest.mark.parametrize("filename", ["m.npz", "m.pt", "m.safetensors"])
def test_a_file_that_is_not_a_state_dict_is_refused_naming_what_it_is(tmp_path, content, found, filename):
    path = tmp_path / filename
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"{filename}' should be .*, but it is {found}"):
        tg.load(path)


def test_a_pickle_is_never_run(tmp_path):
    marker = tmp_path / "code-ran"
    path = tmp_path / "evil.npz"
    path.write_bytes(pickle.dumps(Marker(marker)))
    pickle.loads(path.read_bytes())  # the test's own proof that unpickling runs the code
    assert marker.exists()
    marker.unlink()
    with pytest.raises(ValueError, match="pickle"):
        tg.load(path)
    assert not marker.exists()


def test_an_object_array_in_the_npz_is_refused_without_unpickling(tmp_path):
    marker = tmp_path / "code-ran"
    payload = np.array([Marker(marker), 1], dtype=object)
    path = write_zip(tmp_path / "m.npz", {"w.npy": npy_bytes(np.ones(2)), "o.npy": npy_bytes(payload, True)})
    with pytest.raises(ValueError, match=r"array 'o.npy' holds Python objects .*never unpickles"):
        tg.load(path)
    assert not marker.exists()


@pytest.mark.parametrize(("array", "words"), [
    (np.array(["a", "bc"]), "text"),
    (np.array([b"a"]), "bytes"),
    (np.zeros(2, dtype=[("x", "f4"), ("y", "i4")]), "structured records"),
    (np.zeros(2, dtype="V2"), "raw bytes"),  # e.g. bfloat16 saved from ml_dtypes
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "dates"),
])
def test_an_npz_of_non_numeric_arrays_is_refused(tmp_path, array, words):
    path = write_zip(tmp_path / "m.npz", {"a.npy": npy_bytes(array)})
    with pytest.raises(ValueError, match=rf"array 'a.npy' holds dtype .*\({words}"):
        tg.load(path)


def test_a_pytorch_checkpoint_is_refused_without_unpickling(tmp_path):
    marker = tmp_path / "code-ran"
    path = write_zip(tmp_path / "model.pt", {"model/data.pkl": pickle.dumps(Marker(marker)),
                                             "model/version": "3\n"})
    with pytest.raises(ValueError, match=r"PyTorch checkpoint .*'model/data.pkl'.*never unpickles"):
        tg.load(path)
    assert not marker.exists()


def test_a_real_torch_save_file_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save(torch.nn.Linear(2, 3).state_dict(), tmp_path / "linear.pt")
    with pytest.raises(ValueError, match="PyTorch checkpoint"):
        tg.load(tmp_path / "linear.pt")


def test_a_truncated_or_damaged_npz_is_refused(tmp_path):
    path = tmp_path / "m.npz"
    tg.save({"w": tg.ones(100), "b": tg.zeros(100)}, path)
    content = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(content[: len(content) // 2])
    with pytest.raises(ValueError, match="cut.npz' is a damaged or truncated zip archive"):
        tg.load(tmp_path / "cut.npz")
    flipped = bytearray(content)
    flipped[content.index(npy_bytes(np.ones(100, np.float32))[-8:])] ^= 0xFF  # inside w's data
    (tmp_path / "flipped.npz").write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match=r"array 'w.npy' is damaged .*CRC"):
        tg.load(tmp_path / "flipped.npz")


def test_a_header_that_promises_more_data_than_stored_is_refused_before_reading(tmp_path):
    header = npy_bytes(np.ones(4))[: -4 * 8]  # a header for 4 float64s ...
    path = write_zip(tmp_path / "m.npz", {"w.npy": header + bytes(8)})  # ... and 8 bytes of data
    with pytest.raises(ValueError, match=r"'w.npy' is truncated: shape \(4,\) of float64 needs 32 bytes"):
        tg.load(path)
    # A header claiming 80 TB: refused from the header, without numpy allocating the array first.
    huge_header = {**np.lib.format.header_data_from_array_1_0(np.ones(4)), "shape": (10**13,)}
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, huge_header)
    path = write_zip(tmp_path / "huge.npz", {"w.npy": buffer.getvalue() + bytes(8)})
    with pytest.raises(ValueError, match=r"shape \(10000000000000,\) of float64 needs 80000000000000 bytes"):
        tg.load(path)


def test_repeated_names_in_the_archive_are_refused(tmp_path):
    with pytest.warns(UserWarning, match="Duplicate name"):
        path = write_zip(tmp_path / "m.npz", {"w.npy": npy_bytes(np.ones(1))})
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr("w.npy", npy_bytes(np.zeros(1)))
    with pytest.raises(ValueError, match="more than one array named 'w'"):
        tg.load(path)


def test_folders_in_the_zip(tmp_path):
    """A zip made from a folder: members in sub-folders load under their path; a folder entry is refused."""
    path = write_zip(tmp_path / "m.npz", {"layer/w.npy": npy_bytes(np.ones(2)),
                                          "layer/deeper/b.npy": npy_bytes(np.zeros(1))})
    assert list(tg.load(path)) == ["layer/w", "layer/deeper/b"]
    with zipfile.ZipFile(path, "a") as archive:
        archive.mkdir("empty")
    with pytest.raises(ValueError, match="member 'empty/' is a folder"):
        tg.load(path)


def test_a_safetensors_file_with_another_name_is_refused_and_the_other_way_round(tmp_path):
    tg.save({"w": tg.ones(2)}, tmp_path / "m.safetensors")
    (tmp_path / "m.safetensors").rename(tmp_path / "m.npz")
    with pytest.raises(ValueError, match=r"m.npz' should be an .npz archive.*but it is a safetensors file; "
                                         r"give it a name ending in .safetensors"):
        tg.load(tmp_path / "m.npz")
    (tmp_path / "m.npz").rename(tmp_path / "m.bin")
    with pytest.raises(ValueError, match="m.bin' should be an .npz archive"):
        tg.load(tmp_path / "m.bin")
    tg.save({"w": tg.ones(2)}, tmp_path / "n.npz")
    (tmp_path / "n.npz").rename(tmp_path / "n.safetensors")
    with pytest.raises(ValueError, match=r"n.safetensors' should be a safetensors file, but it is a zip "
                                         r"archive; give it a name ending in .npz"):
        tg.load(tmp_path / "n.safetensors")


F32_PAIR = struct.pack("<2f", 1.0, 2.0)


@pytest.mark.parametrize(("content", "message"), [
    (safetensors_bytes(b"{not json}", F32_PAIR), "has a bad safetensors header"),
    (safetensors_bytes(b'{"w": 1, "w": 2}'), "has a bad safetensors header .*'w' appears more than once"),
    (safetensors_bytes({"w": {"shape": [2], "data_offsets": [0, 8]}}, F32_PAIR), "entry 'w' has no dtype"),
    (safetensors_bytes({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}, bytes(4)),
     r"tensor 'w' has dtype BF16, which numpy and tensorgrad have no dtype for"),
    (safetensors_bytes({"w": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}}, bytes(2)),
     "dtype F8_E4M3"),
    (safetensors_bytes({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, F32_PAIR),
     "is a damaged safetensors file"),
    (safetensors_bytes({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, F32_PAIR[:5]),
     "is a damaged safetensors file"),
    (safetensors_bytes({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, F32_PAIR)[:12],
     r"should be a safetensors file, but it is a truncated safetensors file \(its header alone needs"),
], ids=["bad-json", "repeated-name", "no-dtype", "bf16", "f8", "short-shape", "cut-data", "cut-header"])
def test_a_damaged_safetensors_file_is_refused(tmp_path, content, message):
    path = tmp_path / "m.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        tg.load(path)


def test_a_hand_written_safetensors_file_loads(tmp_path):
    """The counterpart of the damaged ones above: the same bytes, well formed, load."""
    path = tmp_path / "m.safetensors"
    path.write_bytes(safetensors_bytes({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                        "__metadata__": {"note": "kept aside"}}, F32_PAIR))
    loaded = tg.load(path)
    assert list(loaded) == ["w"]
    np.testing.assert_array_equal(loaded["w"].data, np.array([1.0, 2.0], np.float32))


def test_missing_file_and_directory_are_pythons_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        tg.load(tmp_path / "missing.npz")
    with pytest.raises((IsADirectoryError, PermissionError)):
        tg.load(tmp_path)


@pytest.mark.parametrize(("source", "message"), [
    (b"PK\x03\x04", r"got bytes \(wrap bytes in io.BytesIO\)"),
    (42, "got int"),
    (io.StringIO("text"), "binary mode"),
])
def test_load_refuses_what_is_not_a_path_or_binary_file(source, message):
    with pytest.raises(TypeError, match=message):
        tg.load(source)


def test_without_the_safetensors_package_the_error_says_how_to_get_it(tmp_path, monkeypatch):
    tg.save({"w": tg.ones(1)}, tmp_path / "m.safetensors")
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    for action in (lambda: tg.save({"w": tg.ones(1)}, tmp_path / "n.safetensors"),
                   lambda: tg.load(tmp_path / "m.safetensors")):
        with pytest.raises(ModuleNotFoundError, match=r"scalargrad\[safetensors\]"):
            action()
    tg.save({"w": tg.ones(1)}, tmp_path / "m.npz")  # .npz needs nothing but numpy
    assert list(tg.load(tmp_path / "m.npz")) == ["w"]


# ---- PyTorch reads what tensorgrad writes, and the other way round ----------------------------

@pytest.fixture
def torch_safetensors():
    torch = pytest.importorskip("torch")
    return torch, pytest.importorskip("safetensors.torch")


def _same_outputs(torch, layer, torch_layer, seed):
    """Our layer and PyTorch's give the same output for one random (4, 5) input."""
    x = np.random.default_rng(seed).standard_normal((4, 5)).astype(np.float32)
    with torch.no_grad():
        expected = torch_layer(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(layer(tg.tensor(x)).data, expected, rtol=1e-6, atol=1e-6)


def test_a_linear_state_dict_saved_here_loads_in_pytorch(tmp_path, torch_safetensors):
    torch, safetensors_torch = torch_safetensors
    from safetensors import safe_open
    tg.manual_seed(0)
    layer = nn.Linear(5, 3)
    tg.save(layer.state_dict(), tmp_path / "linear.safetensors")
    torch_layer = torch.nn.Linear(5, 3)
    torch_layer.load_state_dict(safetensors_torch.load_file(tmp_path / "linear.safetensors"))
    # Hugging Face's loaders open the file this way and ask for a PyTorch-format header.
    with safe_open(tmp_path / "linear.safetensors", framework="pt") as file:
        assert file.metadata() == {"format": "pt"} and sorted(file.keys()) == ["bias", "weight"]
    _same_outputs(torch, layer, torch_layer, seed=0)


def test_a_pytorch_linear_state_dict_loads_here(tmp_path, torch_safetensors):
    torch, safetensors_torch = torch_safetensors
    torch.manual_seed(0)
    torch_layer = torch.nn.Linear(5, 3)
    safetensors_torch.save_file(torch_layer.state_dict(), tmp_path / "linear.safetensors")
    layer = nn.Linear(5, 3)
    layer.load_state_dict(tg.load(tmp_path / "linear.safetensors"))
    np.testing.assert_array_equal(layer.weight.data, torch_layer.weight.detach().numpy())
    _same_outputs(torch, layer, torch_layer, seed=1)


def test_views_and_dtypes_reach_pytorch_intact(tmp_path, torch_safetensors):
    torch, safetensors_torch = torch_safetensors
    state = {**views(), "half": tg.tensor([0.5, -1.0], dtype=np.float16), "index": tg.tensor([3, 1]),
             "mask": tg.tensor([True, False])}
    tg.save(state, tmp_path / "m.safetensors")
    loaded = safetensors_torch.load_file(tmp_path / "m.safetensors")
    assert loaded["half"].dtype == torch.float16 and loaded["index"].dtype == torch.int64
    assert loaded["mask"].dtype == torch.bool
    for name, tensor in state.items():
        np.testing.assert_array_equal(loaded[name].numpy(), tensor.data)
    # ... and back: PyTorch's non-contiguous tensors, made contiguous by save_file, load here.
    torch_state = {"t": torch.arange(6.0).reshape(2, 3).T.contiguous(),
                   "h": torch.ones(2, dtype=torch.float16)}
    safetensors_torch.save_file(torch_state, tmp_path / "t.safetensors")
    back = tg.load(tmp_path / "t.safetensors")
    np.testing.assert_array_equal(back["t"].data, [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])
    assert back["h"].dtype == np.float16


def test_tied_weights_are_written_under_each_name(tmp_path, torch_safetensors):
    """One tensor under two names (tied embeddings): both names load, here and in PyTorch."""
    torch, safetensors_torch = torch_safetensors
    shared = tg.randn(3, 2)
    path = tmp_path / "tied.safetensors"
    tg.save({"embed.weight": shared, "head.weight": shared}, path)
    for state in (tg.load(path), safetensors_torch.load_file(path)):
        for name in ("embed.weight", "head.weight"):
            np.testing.assert_array_equal(np.asarray(state[name]), shared.data)


def test_bfloat16_from_pytorch_is_refused_with_the_way_out(tmp_path, torch_safetensors):
    torch, safetensors_torch = torch_safetensors
    safetensors_torch.save_file({"w": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "bf16.safetensors")
    with pytest.raises(ValueError, match=r"'w' has dtype BF16.*\.float\(\)"):
        tg.load(tmp_path / "bf16.safetensors")


# ---- devices -----------------------------------------------------------------------------------

@pytest.mark.parametrize("filename", FORMATS)
def test_tensors_on_a_device_save_host_copies_and_load_where_map_location_says(tmp_path, filename, device):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).to(device)
    path = tmp_path / filename
    tg.save(model.state_dict(), path)
    on_cpu, placed = tg.load(path), tg.load(path, map_location=tg.device(device))
    assert sorted(on_cpu) == sorted(placed) == sorted(model.state_dict())
    for key, value in model.state_dict().items():
        assert on_cpu[key].device == tg.device("cpu") and placed[key].device == placed_on(device)
        np.testing.assert_array_equal(on_cpu[key].data, to_numpy(value.data))
        np.testing.assert_array_equal(to_numpy(placed[key].data), to_numpy(value.data))
    assert tg.load(path, map_location="cpu")["0.weight"].device == tg.device("cpu")


def test_map_location_names_a_device(tmp_path):
    path = tmp_path / "model.npz"
    tg.save({"w": tg.ones(2)}, path)
    with pytest.raises(TypeError, match="map_location must be a device name"):
        tg.load(path, map_location={"cuda:0": "cpu"})
    with pytest.raises(RuntimeError, match="device"):
        tg.load(path, map_location="tpu")
    if not tg.cuda.is_available():
        with pytest.raises(RuntimeError, match="CuPy"):
            tg.load(path, map_location="cuda")
