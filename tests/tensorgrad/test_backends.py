"""tg.backends and tg.cuda's torch.cuda basics: the switches and queries training scripts use."""

from __future__ import annotations

import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

GPU = pytest.mark.skipif(not tg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU")
NO_GPU = pytest.mark.skipif(tg.cuda.is_available(), reason="this machine has a GPU")


@pytest.fixture
def restore_switches():
    """Put every switch the tests touch back for the tests after."""
    cudnn, precision = tg.backends.cudnn, tg.get_float32_matmul_precision()
    saved = {name: getattr(cudnn, name) for name in ("enabled", "benchmark", "deterministic", "allow_tf32")}
    theirs = {name: getattr(torch.backends.cudnn, name) for name in saved}
    torch_precision = torch.get_float32_matmul_precision()
    yield
    for name, value in saved.items():
        setattr(cudnn, name, value)
        setattr(torch.backends.cudnn, name, theirs[name])
    tg.set_float32_matmul_precision(precision)
    torch.set_float32_matmul_precision(torch_precision)


def test_the_device_choice_idiom_runs():
    device = "cuda" if tg.cuda.is_available() else "mps" if tg.backends.mps.is_available() else "cpu"
    assert tg.zeros(2, device=device).device.type == device
    assert tg.backends.mps.is_built() is False and tg.backends.mkldnn.is_available() is False
    assert tg.backends.cudnn.is_available() is False and tg.backends.cudnn.version() is None


@pytest.mark.parametrize("name", ["enabled", "benchmark", "deterministic", "allow_tf32"])
def test_cudnn_switches_take_bools_as_pytorchs(name, restore_switches):
    import tensorgrad.backends.cudnn as cudnn  # the spelling `import torch.backends.cudnn as cudnn`

    for lib_cudnn in (torch.backends.cudnn, cudnn):
        setattr(lib_cudnn, name, not getattr(lib_cudnn, name))
    assert getattr(cudnn, name) == getattr(torch.backends.cudnn, name)
    with pytest.raises(RuntimeError) as theirs:
        setattr(torch.backends.cudnn, name, 1)
    with pytest.raises(RuntimeError) as ours:
        setattr(cudnn, name, 1)
    assert str(ours.value) == str(theirs.value)


def test_cudnn_flags_sets_and_restores(restore_switches):
    tg.backends.cudnn.benchmark = True
    with tg.backends.cudnn.flags(enabled=False, deterministic=True):
        assert (tg.backends.cudnn.enabled, tg.backends.cudnn.benchmark, tg.backends.cudnn.deterministic) \
            == (False, False, True)
    assert (tg.backends.cudnn.enabled, tg.backends.cudnn.benchmark, tg.backends.cudnn.deterministic) \
        == (True, True, False)


def test_allow_tf32_is_the_float32_matmul_precision(restore_switches):
    for lib in (torch, tg):
        lib.backends.cuda.matmul.allow_tf32 = True
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision("medium")
        assert lib.backends.cuda.matmul.allow_tf32 is True
        lib.set_float32_matmul_precision("highest")
        assert lib.backends.cuda.matmul.allow_tf32 is False
        assert lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction is True
        with pytest.raises(RuntimeError, match="set_allow_tf32_cublas expects a bool, but got int"):
            lib.backends.cuda.matmul.allow_tf32 = 1
        with pytest.raises(TypeError, match="expects a bool or a tuple/list of bools"):
            lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = "yes"
        with pytest.raises(AttributeError, match="Unknown attribute allow_tf33"):
            lib.backends.cuda.matmul.allow_tf33 = True


@NO_GPU
def test_cuda_seeding_without_a_gpu_is_ignored_as_in_pytorch():
    for lib in (torch, tg):
        lib.manual_seed(0)
        lib.cuda.manual_seed_all(1)
        lib.cuda.manual_seed(2)
        lib.cuda.seed_all()
        drawn = lib.randn(3)
        lib.manual_seed(0)
        assert lib.equal(drawn, lib.randn(3))
    assert tg.cuda.memory_allocated() == tg.cuda.memory_reserved() == 0 and tg.cuda.empty_cache() is None
    for query in ("initial_seed", "current_device", "get_device_name"):
        with pytest.raises(AssertionError, match="CUDA is not available"):
            getattr(tg.cuda, query)()


@GPU
def test_cuda_seeding_makes_gpu_draws_repeat():
    tg.cuda.manual_seed_all(5)
    first = tg.randn(4, device="cuda")
    tg.cuda.manual_seed(5)
    assert tg.equal(first, tg.randn(4, device="cuda")) and tg.cuda.initial_seed() == 5


@pytest.mark.parametrize(("spec", "index"), [(2, 2), ("cuda:1", 1), (tg.device("cuda", 3), 3)])
def test_cuda_queries_read_the_index_of_each_spelling_of_a_device(spec, index):
    from tensorgrad.cuda import _device_index

    assert _device_index(spec) == index  # "cuda:1" once read str.index, a method, as the index


@GPU
def test_cuda_queries_report_the_gpu():
    assert tg.cuda.current_device() == 0 and isinstance(tg.cuda.get_device_name(), str)
    assert tg.cuda.get_device_name("cuda:0") == tg.cuda.get_device_name(0)
    held = tg.zeros(1 << 20, device="cuda")
    assert tg.cuda.memory_allocated() >= held.numel() * 4
    assert tg.cuda.memory_reserved() >= tg.cuda.memory_allocated()
    del held
    tg.cuda.empty_cache()
    tg.cuda.synchronize()


def test_set_num_threads_limits_numpys_blas_as_pytorchs_limits_its_own():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = tg.get_num_threads()
    try:
        tg.set_num_threads(1)
        assert tg.get_num_threads() == 1
        blas = [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]
        assert blas and all(lib["num_threads"] == 1 for lib in blas)
    finally:
        tg.set_num_threads(before)
    assert tg.get_num_threads() == before
    for bad in (0, -2, 2.5, True, "2"):
        with pytest.raises(RuntimeError) as theirs:
            torch.set_num_threads(bad)
        with pytest.raises(RuntimeError) as ours:
            tg.set_num_threads(bad)
        assert str(ours.value) == str(theirs.value)
