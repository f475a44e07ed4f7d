"""Devices: `device=` on every factory, `t.device`, `t.to(...)`, `cpu()`, `cuda()`, `tg.cuda`.

Without CuPy (CI, this machine) `"cuda"` is a clear error and everything stays on the CPU; the
GPU tests at the end run only where CuPy sees a GPU and say why they skip elsewhere.
"""

import numpy as np
import pytest

import tensorgrad as tg

FACTORIES = [
    lambda device: tg.tensor([1.0, 2.0], device=device),
    lambda device: tg.zeros(2, 3, device=device),
    lambda device: tg.ones((2,), device=device),
    lambda device: tg.full((2,), 3.0, device=device),
    lambda device: tg.arange(4, device=device),
    lambda device: tg.eye(2, device=device),
    lambda device: tg.rand(2, device=device),
    lambda device: tg.randn(2, device=device),
    lambda device: tg.empty(2, device=device),
    lambda device: tg.linspace(0, 1, 3, device=device),
    lambda device: tg.logspace(0, 1, 3, device=device),
    lambda device: tg.zeros_like(tg.ones(2), device=device),
    lambda device: tg.randn_like(tg.ones(2), device=device),
    lambda device: tg.randint(5, (3,), device=device),
    lambda device: tg.randperm(4, device=device),
]


@pytest.mark.parametrize("make", FACTORIES)
def test_every_factory_takes_a_cpu_device(make):
    for device in (None, "cpu", tg.device("cpu"), "cpu:0"):
        t = make(device)
        assert t.device == tg.device("cpu") and str(t.device) == "cpu"
        assert isinstance(t.data, np.ndarray)


@pytest.mark.skipif(tg.cuda.is_available(), reason="this machine has a GPU: 'cuda' works here")
@pytest.mark.parametrize("make", FACTORIES)
def test_cuda_without_cupy_is_a_clear_error(make):
    with pytest.raises(RuntimeError, match="CuPy"):
        make("cuda")


def test_devices_read_like_torchs():
    torch = pytest.importorskip("torch")
    for spec in ("cpu", "cuda", "cuda:1"):
        ours, theirs = tg.device(spec), torch.device(spec)
        assert (str(ours), ours.type, ours.index) == (str(theirs), theirs.type, theirs.index)
    assert tg.device("cuda", 2) == tg.device("cuda:2") and tg.device("cpu") != tg.device("cuda")
    for bad in ("gpu", "cuda:x", "cuda:1:2"):
        with pytest.raises(RuntimeError):
            torch.device(bad)
        with pytest.raises(RuntimeError, match="device"):
            tg.device(bad)
    with pytest.raises(TypeError):
        tg.device(3.5)


def test_to_changes_dtype_and_device_and_keeps_the_gradient():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    assert x.to("cpu") is x and x.cpu() is x and x.to(tg.float32) is x
    y = x.to("cpu", tg.float64)
    assert y.dtype == tg.float64 and y.device == x.device
    z = x.to(dtype=tg.float64, device="cpu")
    assert z.dtype == tg.float64
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype == np.float32
    assert x.to(tg.zeros(1, dtype=tg.float64)).dtype == tg.float64
    assert x.to(tg.int64).dtype == tg.int64 and not x.to(tg.int64).requires_grad


def test_cuda_module_answers_without_a_gpu():
    if tg.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert tg.cuda.is_available() is False and tg.cuda.device_count() == 0
    tg.cuda.synchronize()  # nothing to wait for
    with pytest.raises(RuntimeError, match="CuPy"):
        tg.ones(2).cuda()


@pytest.mark.skipif(not tg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU")
def test_a_graph_on_the_gpu_gives_the_cpus_gradients():
    a = tg.tensor([[0.5, -1.0]], dtype=tg.float64, requires_grad=True)
    b = tg.tensor([[2.0], [3.0]], dtype=tg.float64, requires_grad=True)
    ga, gb = a.cuda().detach().requires_grad_(), b.cuda().detach().requires_grad_()
    ((a @ b).tanh() * a.sum()).sum().backward()
    ((ga @ gb).tanh() * ga.sum()).sum().backward()
    assert str(ga.device).startswith("cuda")
    np.testing.assert_allclose(ga.grad.get(), a.grad)
    np.testing.assert_allclose(gb.grad.get(), b.grad)


def _mixed_calls() -> dict:
    """Calls that meet a tensor on the GPU with one on the CPU, by the op their error names."""
    F = tg.nn.functional
    gpu, cpu = tg.ones(2, 3, device="cuda"), tg.ones(2, 3)
    return {
        "+ (add)": lambda: gpu + cpu,
        "matmul": lambda: gpu @ cpu.T,
        "linear": lambda: tg.nn.Linear(3, 2).cuda()(cpu),  # the model moved, the batch not
        "conv2d": lambda: tg.nn.Conv2d(1, 1, 3).cuda()(tg.ones(1, 1, 4, 4)),
        "cat": lambda: tg.cat([gpu, cpu]),
        "lerp": lambda: tg.lerp(gpu, cpu, 0.5),
        "sub_": lambda: gpu.clone().sub_(cpu),
        "mse_loss": lambda: F.mse_loss(gpu, cpu),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(gpu.sigmoid(), cpu),
        "cross_entropy": lambda: F.cross_entropy(cpu, tg.tensor([0, 1], device="cuda")),
        "nll_loss": lambda: F.nll_loss(gpu, tg.tensor([0, 1])),
        "embedding": lambda: F.embedding(tg.tensor([0, 1], device="cuda"), cpu),
        "layer_norm": lambda: F.layer_norm(gpu, (3,), cpu[0], cpu[0]),
    }


@pytest.mark.skipif(not tg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("op", ["+ (add)", "matmul", "linear", "conv2d", "cat", "lerp", "sub_", "mse_loss",
                                "binary_cross_entropy", "cross_entropy", "nll_loss", "embedding",
                                "layer_norm"])
def test_an_op_on_cuda_and_cpu_tensors_is_pytorchs_error_naming_both(op):
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device") as error:
        _mixed_calls()[op]()
    message = str(error.value)
    assert message.startswith(f"{op}: ") and "cuda:0" in message and "cpu" in message


@pytest.mark.skipif(not tg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU")
def test_copy_and_setitem_bring_a_value_from_the_cpu_to_cuda_as_pytorchs_do():
    source = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    copied = tg.zeros(3, device="cuda").copy_(source)
    (copied * tg.tensor([2.0, 3.0, 4.0], device="cuda")).sum().backward()
    assert copied.device.type == "cuda" and copied.tolist() == [1.0, 2.0, 3.0]
    assert type(source.grad) is np.ndarray and source.grad.tolist() == [2.0, 3.0, 4.0]
    board = tg.zeros(2, 3, device="cuda")
    board[1] = tg.tensor([4.0, 5.0, 6.0])
    assert board.tolist() == [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        tg.ones(3)[tg.tensor([0, 1], device="cuda")]
