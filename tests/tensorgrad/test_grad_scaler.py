"""`tg.amp.GradScaler`: the scale, the skipped steps and the weights, step for step as PyTorch's
CPU GradScaler; its checks and errors; its state."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

WEIGHT = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def train(lib, steps: int = 14, clip: bool = False, **scaler_options):
    """A float16 linear layer trained by SGD through a GradScaler; step 5's input overflows float16's
    gradients, so that step is skipped and the scale backs off."""
    weight = lib.tensor(WEIGHT.copy(), requires_grad=True)
    optimizer = lib.optim.SGD([weight], lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", **scaler_options)
    scales, growth = [], []
    for step in range(steps):
        optimizer.zero_grad()
        x = lib.tensor(np.full((4, 2), 3e3 if step == 5 else 1.0 + step / 10, np.float32))
        with lib.autocast("cpu", dtype=lib.float16):
            loss = ((x @ weight).float() ** 2).mean()
        scaler.scale(loss).backward()
        if clip:
            scaler.unscale_(optimizer)
            lib.nn.utils.clip_grad_norm_([weight], 0.5)
        scaler.step(optimizer)
        scaler.update()
        scales.append(scaler.get_scale())
        growth.append(scaler._get_growth_tracker())
    return scales, growth, weight.detach().numpy(), scaler.state_dict()


@pytest.mark.parametrize("clip", [False, True])
def test_scales_skipped_steps_and_weights_are_pytorchs(clip):
    options = {"init_scale": 2.0**14, "growth_interval": 3}
    ours, theirs = train(tg, clip=clip, **options), train(torch, clip=clip, **options)
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    changes = [later / earlier for earlier, later in zip(ours[0], ours[0][1:], strict=False)]
    assert changes.count(0.5) >= 1 and changes.count(2.0) >= 2  # back-offs at overflows, and growth
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    assert ours[3] == theirs[3]


def test_a_step_with_inf_is_skipped_and_the_scale_halves():
    weight = tg.tensor(WEIGHT.copy(), requires_grad=True)
    optimizer = tg.optim.SGD([weight], lr=1.0)
    scaler = tg.amp.GradScaler("cpu")
    loss = (weight * tg.tensor(np.inf)).sum()
    scaler.scale(loss).backward()
    assert scaler.step(optimizer) is None
    np.testing.assert_array_equal(weight.detach().numpy(), WEIGHT)
    assert scaler._found_inf_per_device(optimizer)[tg.device("cpu")].item() == 1.0
    scaler.update()
    assert scaler.get_scale() == 2.0**15


def test_the_gradients_are_unscaled_in_place_in_their_dtype():
    weight = tg.tensor(WEIGHT.copy(), requires_grad=True)
    optimizer = tg.optim.SGD([weight], lr=1.0)
    scaler = tg.amp.GradScaler("cpu", init_scale=1024.0)
    scaled = scaler.scale((weight * 3).sum())
    assert scaled.item() == pytest.approx(1024 * 3 * WEIGHT.sum())
    scaled.backward()
    np.testing.assert_array_equal(weight.grad, np.full((2, 3), 3072.0, np.float32))
    scaler.unscale_(optimizer)
    np.testing.assert_array_equal(weight.grad, np.full((2, 3), 3.0, np.float32))
    assert weight.grad.dtype == np.float32


def test_misuse_fails_with_pytorchs_errors():
    weight = tg.tensor(WEIGHT.copy(), requires_grad=True)
    optimizer = tg.optim.SGD([weight], lr=1.0)
    scaler = tg.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="did not use scaler.scale"):
        scaler.step(optimizer)
    scaler.scale(weight.sum()).backward()
    scaler.unscale_(optimizer)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(optimizer)
    scaler.step(optimizer)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(optimizer)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        scaler.unscale_(optimizer)
    with pytest.raises(AssertionError, match="only be pickled"):
        pickle.dumps(scaler)
    scaler.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(optimizer, closure=lambda: 0)
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        tg.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable"):
        scaler.scale(3.0)


def test_float16_gradients_are_refused_as_pytorch_refuses_them():
    weight = tg.tensor(WEIGHT.copy()).half().requires_grad_()
    optimizer = tg.optim.SGD([weight], lr=1.0)
    scaler = tg.amp.GradScaler("cpu")
    scaler.scale(weight.float().sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        scaler.step(optimizer)


def test_lists_of_outputs_are_scaled_each():
    scaler = tg.amp.GradScaler("cpu", init_scale=4.0)
    a, b = tg.ones(2), tg.full((3,), 2.0)
    scaled = scaler.scale([a, (b,)])
    assert isinstance(scaled, list) and isinstance(scaled[1], tuple)
    np.testing.assert_array_equal(scaled[1][0].numpy(), np.full(3, 8.0, np.float32))


def test_disabled_scaler_passes_everything_through():
    weight = tg.tensor(WEIGHT.copy(), requires_grad=True)
    optimizer = tg.optim.SGD([weight], lr=1.0)
    scaler = tg.amp.GradScaler("cpu", enabled=False)
    loss = weight.sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(optimizer)
    scaler.update()
    np.testing.assert_allclose(weight.detach().numpy(), WEIGHT - 1)
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()


@pytest.mark.skipif(tg.cuda.is_available(), reason="checks the answer without a GPU")
def test_a_cuda_scaler_without_a_gpu_warns_and_disables_itself():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        assert not tg.amp.GradScaler().is_enabled()


def test_state_dict_and_pickle_carry_the_scale_and_the_growth_tracker():
    scaler = tg.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
    weight = tg.tensor(WEIGHT.copy(), requires_grad=True)
    optimizer = tg.optim.SGD([weight], lr=0.01)
    for _ in range(2):
        scaler.scale(weight.sum()).backward()
        scaler.step(optimizer)
        scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 5,
                     "_growth_tracker": 2}
    reloaded = tg.amp.GradScaler("cpu")
    reloaded.load_state_dict(state)
    assert reloaded.state_dict() == state
    assert pickle.loads(pickle.dumps(scaler)).state_dict() == state
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        reloaded.load_state_dict({})
    twin = torch.amp.GradScaler("cpu")
    twin.load_state_dict(state)
    assert twin.state_dict() == state


@pytest.mark.skipif(not tg.cuda.is_available(), reason="no CUDA GPU with CuPy here")
def test_a_cuda_scaler_scales_and_steps_as_the_cpu_one():
    def run(device):
        weight = tg.tensor(WEIGHT.copy(), requires_grad=True, device=device)
        optimizer = tg.optim.SGD([weight], lr=0.1)
        scaler = tg.amp.GradScaler(device, init_scale=2.0**14, growth_interval=2)
        scales = []
        for step in range(6):
            optimizer.zero_grad()
            x = tg.full((4, 2), 3e3 if step == 3 else 1.0, device=device)
            with tg.autocast(device, dtype=tg.float16):
                loss = ((x @ weight).float() ** 2).mean()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scales.append(scaler.get_scale())
        return scales, weight.detach().cpu().numpy()

    (cpu_scales, cpu_weight), (gpu_scales, gpu_weight) = run("cpu"), run("cuda")
    assert cpu_scales == gpu_scales
    np.testing.assert_allclose(gpu_weight, cpu_weight, rtol=1e-3)
