"""`tg.set_default_device`, `tg.get_default_device` and `with tg.device(...)`: where the factories
create a tensor that is not given `device=`, per thread, as in PyTorch."""

import threading

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.device import cuda_available


@pytest.fixture(autouse=True)
def _reset_default_device():
    yield
    tg.set_default_device(None)


def test_the_cpu_by_default_with_pytorchs_names_and_repr():
    torch = pytest.importorskip("torch")
    assert tg.get_default_device() == tg.device("cpu")
    assert repr(tg.get_default_device()) == repr(torch.get_default_device())
    tg.set_default_device("cpu")
    assert tg.get_default_device() == tg.device("cpu") and tg.zeros(2).device == tg.device("cpu")
    tg.set_default_device(None)
    assert tg.get_default_device() == tg.device("cpu")


def test_with_device_sets_the_default_inside_the_block_and_restores_it():
    tg.set_default_device("cuda")
    with tg.device("cpu") as inside:
        assert inside == tg.device("cpu") and tg.get_default_device() == tg.device("cpu")
        with tg.device("cuda:1"):
            assert tg.get_default_device() == tg.device("cuda", 1)
        assert tg.get_default_device() == tg.device("cpu")
        assert tg.ones(3).device.type == "cpu"
    assert tg.get_default_device() == tg.device("cuda")


def test_the_default_is_per_thread():
    tg.set_default_device("cuda")
    seen = []
    worker = threading.Thread(target=lambda: seen.append(tg.get_default_device()))
    worker.start()
    worker.join()
    assert seen == [tg.device("cpu")] and tg.get_default_device() == tg.device("cuda")


def test_a_bad_device_is_refused_when_set():
    with pytest.raises(RuntimeError, match="expected one of cpu, cuda"):
        tg.set_default_device("tpu")
    assert tg.get_default_device() == tg.device("cpu")


@pytest.mark.skipif(cuda_available(), reason="checks the error where CuPy or a GPU is missing")
def test_factories_go_to_the_default_and_say_when_it_cannot_be_reached():
    cpu_tensor = tg.ones(2)
    tg.set_default_device("cuda")
    for make in (lambda: tg.zeros(2), lambda: tg.tensor([1.0]), lambda: tg.randn(3), lambda: tg.arange(3),
                 lambda: tg.as_tensor(np.ones(2)), lambda: tg.nn.Linear(2, 3)):
        with pytest.raises(RuntimeError, match="device 'cuda' needs CuPy"):
            make()
    # What shares memory or follows its inputs stays where its inputs are, as in PyTorch.
    assert tg.from_numpy(np.ones(2)).device.type == "cpu"
    assert tg.zeros_like(cpu_tensor).device.type == "cpu"
    assert (cpu_tensor * 2).device.type == "cpu"
    assert tg.as_tensor(cpu_tensor) is cpu_tensor


@pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU with CuPy here")
def test_factories_and_modules_create_on_the_default_gpu():
    tg.set_default_device("cuda")
    assert tg.zeros(2).device.type == "cuda" and tg.tensor([1.0, 2.0]).device.type == "cuda"
    layer = tg.nn.Linear(2, 3)
    assert all(p.device.type == "cuda" for p in layer.parameters())
    assert tg.from_numpy(np.ones(2)).device.type == "cpu"
