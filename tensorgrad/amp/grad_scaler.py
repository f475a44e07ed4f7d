"""`GradScaler`: loss scaling for float16 training, PyTorch's algorithm.

A float16 gradient smaller than 6e-8 rounds to zero. Multiplying the loss by a large scale S
(65536 at first) multiplies every gradient by S, lifting them into float16's range; before the
optimizer's step the gradients are divided by S again. If any gradient came out inf or nan, the
scale was too large: the step is skipped and S halves. After `growth_interval` steps in a row
without one, S doubles, so it stays near the largest scale that does not overflow.

    scaler = tg.amp.GradScaler("cuda")
    with tg.autocast("cuda"):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)   # unscales, and steps unless a gradient overflowed
    scaler.update()          # the next scale
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable
from enum import Enum
from typing import Any

import numpy as np

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimizer is in the current iteration: nothing done, gradients unscaled, stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale the loss, unscale the gradients, skip the steps that overflowed, adapt the scale.

    `device` is where the scale lives ("cuda" or "cpu"); `init_scale` the first scale;
    after `growth_interval` steps without inf or nan the scale is multiplied by `growth_factor`,
    and at each step with one, by `backoff_factor`. With `enabled=False` every method passes
    through (`scale` returns its argument, `step` just steps), so one script serves both ways.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from tensorgrad.device import cuda_available

            if not cuda_available():
                warnings.warn("tensorgrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                              "Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: Any = None  # a 0-d float32 tensor on the outputs' device, made by the first `scale`
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = 0  # steps in a row without inf or nan
        self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(_fresh_optimizer_state)
        if self._enabled:
            from tensorgrad.autograd import quiet_floating_point_errors

            quiet_floating_point_errors()  # (the scaler's overflows are expected: no NumPy warnings)

    # --- scaling and unscaling -------------------------------------------------------------------

    def scale(self, outputs: Any) -> Any:
        """outputs * scale: a tensor, or each tensor of a list, tuple or other iterable."""
        from tensorgrad.tensor import Tensor

        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_on(outputs.device)
        if isinstance(outputs, Iterable):
            scaled = map(self.scale, outputs)
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _scale_on(self, device: Any) -> Any:
        import tensorgrad as tg

        if self._scale is None:
            self._scale = tg.full((), self._init_scale, dtype=tg.float32, device=device)
        return self._scale.to(device)

    def _require_scale(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate your script "
                                 "did not use scaler.scale(loss or outputs) earlier in the iteration.")

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of `optimizer`'s parameters by the scale, in place, and note whether
        any is inf or nan. Call it before clipping gradients; `step` then does not unscale again."""
        if not self._enabled:
            return
        self._require_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last "
                               "update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / float(self._scale.item()))  # the reciprocal in double, as PyTorch
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, allow_fp16=False)
        state["stage"] = OptState.UNSCALED

    def _unscale_grads_(self, optimizer: Any, inv_scale: np.float32, allow_fp16: bool) -> dict[Any, Any]:
        """Multiply each gradient (an array) by inv_scale in place; per device, a 0-d float32 tensor,
        1.0 if a gradient there had inf or nan."""
        import tensorgrad as tg
        from tensorgrad.device import device_of, namespace

        found: dict[Any, bool] = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if not allow_fp16 and grad.dtype == np.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                device = device_of(grad)
                found[device] = found.get(device, False) or not bool(namespace(grad).isfinite(grad).all())
                if inv_scale != 1:
                    grad *= inv_scale.astype(grad.dtype)
        return {device: tg.tensor(float(overflowed), dtype=tg.float32, device=device)
                for device, overflowed in found.items()}

    # --- the step and the next scale -------------------------------------------------------------

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale the gradients (unless `unscale_` did) and call `optimizer.step(*args, **kwargs)`,
        unless a gradient is inf or nan: then the step is skipped. Returns what the step returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._require_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(found.item() for found in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale: float | Any = None) -> None:
        """The next scale: `new_scale` if given (a float or a one-element tensor); else the scale
        times backoff_factor if any step of this iteration found inf or nan, times growth_factor
        after growth_interval clean steps in a row, unchanged otherwise."""
        if not self._enabled:
            return
        self._require_scale("update")
        if new_scale is not None:
            self._set_scale(new_scale)
        else:
            found_infs = [found.item() for state in self._per_optimizer_states.values()
                          for found in state["found_inf_per_device"].values()]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._next_scale(found_inf=sum(found_infs) > 0)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def _set_scale(self, new_scale: Any) -> None:
        from tensorgrad.tensor import Tensor

        if isinstance(new_scale, float):
            self._scale.fill_(new_scale)
            return
        reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                  "torch.FloatTensor with requires_grad=False.")
        if (not isinstance(new_scale, Tensor) or new_scale.device.type != self._device
                or new_scale.numel() != 1 or new_scale.requires_grad):
            raise AssertionError(reason)
        self._scale.copy_(new_scale.reshape(()))

    def _next_scale(self, found_inf: bool) -> None:
        """PyTorch's `_amp_update_scale_`: back off on inf or nan; grow after an interval of clean steps
        if the grown scale is finite."""
        scale = float(self._scale.item())
        if found_inf:
            scale, self._growth_tracker = float(np.float32(scale * self._backoff_factor)), 0
        elif self._growth_tracker + 1 == self._growth_interval:
            grown = np.float32(scale * self._growth_factor)
            scale = float(grown) if np.isfinite(grown) else scale
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
        self._scale.fill_(scale)

    # --- queries, settings and state -------------------------------------------------------------

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        """The factor the scale grows by after growth_interval clean steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale grows by."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by at a step with inf or nan."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale shrinks by."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many clean steps in a row make the scale grow."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set how many clean steps in a row make the scale grow."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        return self._growth_tracker if self._enabled else 0

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False when made with enabled=False, or for CUDA without a GPU)."""
        return self._enabled

    def _found_inf_per_device(self, optimizer: Any) -> dict[Any, Any]:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def state_dict(self) -> dict[str, Any]:
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the scale and settings of a `state_dict()`."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = self._init_growth_tracker = state_dict["_growth_tracker"]

    def __getstate__(self) -> dict[str, Any]:
        if self._enabled and self._per_optimizer_states:
            raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                 "of an iteration, or at the end after scaler.update().")
        state = self.__dict__.copy()
        state["_init_scale"], state["_scale"] = self.get_scale(), None
        state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)
