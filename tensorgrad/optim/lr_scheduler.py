"""Learning-rate schedules: PyTorch's `torch.optim.lr_scheduler` (tutorial chapter 9).

A scheduler changes `group["lr"]` of each of an optimizer's parameter groups. Build it after
the optimizer (it remembers each group's starting rate as `group["initial_lr"]`, the schedule's
`base_lrs`) and call `scheduler.step()` once per epoch (or per batch), after `optimizer.step()`:

    optimizer = optim.SGD(model.parameters(), lr=0.1)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    for epoch in range(30):
        train_one_epoch(model, optimizer)
        scheduler.step()

Building a scheduler takes its step 0 (`last_epoch == 0`). Each class computes the next rate
from the current one, in PyTorch's formulas, so the rates it produces are PyTorch's to the last
bit, and schedules stack as PyTorch's do. `ReduceLROnPlateau.step(metric)` instead lowers the
rate when a watched metric stops improving. `SequentialLR` runs schedules one after another
(switching at milestones), `ChainedScheduler` steps several at once, their effects multiplied.

A group whose `lr` is a Tensor keeps it: the new rate is written into it in place, as PyTorch
does. `state_dict()` holds what PyTorch's holds, under the same keys in the same order, so a
state dict saved by either library loads into the other.
"""

from __future__ import annotations

import math
import numbers
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tensorgrad.optim.optimizer import Optimizer, hyper
from tensorgrad.tensor import Tensor

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR",
           "LinearLR", "OneCycleLR", "ReduceLROnPlateau", "ConstantLR", "MultiplicativeLR", "PolynomialLR",
           "CosineAnnealingWarmRestarts", "CyclicLR", "SequentialLR", "ChainedScheduler"]


class LRScheduler:
    """Base class: `step()`, `get_last_lr()`, `last_epoch`, `base_lrs` and state dicts.

    A subclass implements `get_lr()`: the rates for `self.last_epoch`, usually from the current
    ones (`group["lr"]`), and sets its options before calling `super().__init__`. One that can
    also give the rates at any epoch from `base_lrs` defines `_get_closed_form_lr()`, which
    `SequentialLR` uses to restart it at a milestone, as PyTorch does.
    """

    # PyTorch's flags, in every state dict: inside `step` (`get_lr` warns when called outside
    # it), and inside the constructor's step.
    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: {type(optimizer).__name__} is not an Optimizer")
        _check_int(type(self).__name__, "last_epoch", last_epoch, low=-1)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", _copy(group["lr"]))
            elif "initial_lr" not in group:
                raise KeyError(
                    f"{type(self).__name__}: param 'initial_lr' is not specified in param_groups[{i}] "
                    "when resuming with last_epoch >= 0 (load the optimizer's state dict first)"
                )
        self.base_lrs: list[Any] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """Take the step the constructor takes (SequentialLR retakes it), counting steps from 0."""
        self._step_count = 0
        self._is_initial = True  # some schedules keep the rate at this step
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rate of each group for `self.last_epoch` (called by `step`)."""
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr")

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one step (epoch) and write the new rates into the optimizer.

        `epoch` (deprecated in PyTorch, which warns as here) jumps to that epoch instead, by the
        closed form where the schedule has one.
        """
        self._step_count += 1
        if epoch is not None:
            warnings.warn(f"{type(self).__name__}.step(epoch) is deprecated (as in PyTorch): call step() "
                          "without it; with an epoch the closed form is used where there is one", UserWarning,
                          stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        """Go to the next epoch, or to `epoch` (there by `_get_closed_form_lr` where the schedule has
        one, else by `get_lr`), and write the rates into the optimizer."""
        with _within_step(self):
            if epoch is None:
                self.last_epoch += 1
                lrs = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                lrs = closed_form() if closed_form is not None else self.get_lr()
        self._set_lrs(lrs)

    def get_last_lr(self) -> list[Any]:
        """The learning rates the last `step()` set, one per parameter group (copies, where a
        group's `lr` is a Tensor)."""
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        """Everything the scheduler holds except the optimizer (PyTorch's layout)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state from `state_dict()`."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"{type(self).__name__}.load_state_dict expects a dict, got "
                            f"{type(state_dict).__name__}")
        self.__dict__.update(state_dict)

    def _current_lrs(self) -> list[Any]:
        """Each group's current rate (a copy, where it is a Tensor)."""
        return _group_values(self.optimizer, "lr")

    def _set_lrs(self, lrs: Iterable[Any]) -> None:
        """Write the rates into the groups (into a Tensor `lr` in place) and remember them."""
        for group, lr in zip(self.optimizer.param_groups, lrs, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = self._current_lrs()


class _LambdaScheduler(LRScheduler):
    """What LambdaLR and MultiplicativeLR share: `lr_lambdas`, one function per parameter group,
    and state dicts that keep the attributes of callable objects but not plain functions."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        name = type(self).__name__
        if isinstance(lr_lambda, list | tuple):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"{name}: expected {len(optimizer.param_groups)} lr_lambdas (one per "
                                 f"parameter group), but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"{name}: lr_lambda must be callable, got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The state without the functions (a plain function is code, not state); the attributes
        of callable objects are kept, as PyTorch does."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state from `state_dict()` (this scheduler's functions stay)."""
        state = dict(state_dict)
        saved_lambdas = state.pop("lr_lambdas", [None] * len(self.lr_lambdas))
        super().load_state_dict(state)
        for fn, attributes in zip(self.lr_lambdas, saved_lambdas, strict=True):
            if attributes is not None:
                fn.__dict__.update(attributes)


class LambdaLR(_LambdaScheduler):
    """lr = base_lr * lr_lambda(epoch); one function, or a list with one per group."""

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs,
                                                                      strict=True)]


class MultiplicativeLR(_LambdaScheduler):
    """Multiply the rate by lr_lambda(epoch) at each step (not at the constructor's step 0)."""

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        if self._is_initial:
            return self._current_lrs()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._current_lrs(), strict=True)]


class StepLR(LRScheduler):
    """Multiply the rate by `gamma` every `step_size` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        _check_int("StepLR", "step_size", step_size, low=1)
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by `gamma` at each epoch listed in `milestones`."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if not isinstance(milestones, Iterable):
            raise TypeError(f"MultiStepLR: milestones must be a list of epochs, got "
                            f"{type(milestones).__name__}")
        milestones = list(milestones)
        for milestone in milestones:
            _check_int("MultiStepLR", "each milestone", milestone, low=0)
        self.milestones = Counter(milestones)  # a milestone listed twice applies gamma twice
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma**passed for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by `gamma` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from base_lr down to `eta_min` over `T_max` epochs (then back up, and so on).

    lr(t) = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2, computed step by step
    from the current rate as PyTorch does (SGDR without restarts).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if isinstance(T_max, bool) or not isinstance(T_max, numbers.Real) or not T_max > 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive number of epochs, got {T_max!r}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        t, T_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and t > 0:  # resumed: start from the closed form
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(t * math.pi / T_max)) / 2
                    for base_lr in self.base_lrs]
        if (t - 1 - T_max) % (2 * T_max) == 0:  # at the bottom: the recursion would divide by 0
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / T_max)) / 2
                    for base_lr, lr in zip(self.base_lrs, self._current_lrs(), strict=True)]
        return [(1 + math.cos(math.pi * t / T_max)) / (1 + math.cos(math.pi * (t - 1) / T_max))
                * (lr - eta_min) + eta_min for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        t, T_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        return [eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * t / T_max)) / 2
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the rate linearly from `start_factor` to `end_factor` times base_lr over `total_iters`."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        _check_int("LinearLR", "total_iters", total_iters, low=0)
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        t, start, end = self.last_epoch, self.start_factor, self.end_factor
        if t == 0:
            return [lr * start for lr in self._current_lrs()]
        if self._is_initial or t > self.total_iters:
            return self._current_lrs()
        # The ratio of factor(t) to factor(t - 1), factor(t) = start + (end - start) * t / total.
        ratio = 1.0 + (end - start) / (self.total_iters * start + (t - 1) * (end - start))
        return [lr * ratio for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        start, end, total = self.start_factor, self.end_factor, self.total_iters
        return [base_lr * (start + (end - start) * min(total, self.last_epoch) / total)
                for base_lr in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith): warm up to `max_lr`, then anneal far below the start.

    The rate goes from max_lr / div_factor up to max_lr over the first `pct_start` of
    `total_steps`, then down to initial_lr / final_div_factor (with `three_phase`, back to the
    initial rate first), by half cosines (`anneal_strategy="cos"`) or straight lines ("linear").
    With `cycle_momentum`, the momentum (SGD's `momentum`, Adam's beta1) moves the opposite
    way between `max_momentum` and `base_momentum`. Step it once per batch.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85, max_momentum: float | list[float] = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"OneCycleLR: {type(optimizer).__name__} is not an Optimizer")
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if isinstance(pct_start, bool) or not isinstance(pct_start, numbers.Real) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: expected pct_start a float between 0 and 1, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self._schedule_phases = _one_cycle_phases(float(pct_start), self.total_steps, three_phase)
        self._anneal_func_type = anneal_strategy
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group, top in zip(groups, _per_group("max_lr", max_lr, groups), strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("OneCycleLR: optimizer must support momentum or beta1 with the "
                                 "cycle_momentum option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                tops = _per_group("max_momentum", max_momentum, groups)
                bases = _per_group("base_momentum", base_momentum, groups)
                for group, top, base in zip(groups, tops, bases, strict=True):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = top, base
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; the schedule has total_steps "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                if step <= phase["end_step"] or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (phase["end_step"] - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        start, end = group[phase["start_momentum"]], group[phase["end_momentum"]]
                        _set_momentum(group, self._anneal(start, end, pct), self.use_beta1)
                    break
                start_step = phase["end_step"]
        return lrs


class ConstantLR(LRScheduler):
    """Multiply the rate by `factor` for the first `total_iters` epochs, then give it back."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError(f"ConstantLR: the constant multiplicative factor must be between 0 and 1, got "
                             f"{factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        factor = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base_lr * factor for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the rate as base_lr * (1 - epoch / total_iters)**power, reaching 0 at `total_iters`."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        t, total = self.last_epoch, self.total_iters
        if self._is_initial or t > total:
            return self._current_lrs()
        decay = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [lr * decay for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        total = self.total_iters
        return [base_lr * (1.0 - min(total, self.last_epoch) / total) ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: half a cosine from base_lr down to `eta_min` over T_i epochs, then back to base_lr.

    lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, with T_cur the epochs
    since the last restart; the first period is `T_0` epochs, each next one `T_mult` times longer.
    `step(epoch)` may jump to any (fractional) epoch, e.g. `epoch + batch / batches` per batch.
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        name = "CosineAnnealingWarmRestarts"
        for option, value in (("T_0", T_0), ("T_mult", T_mult)):
            if not isinstance(value, numbers.Real):
                raise TypeError(f"{name}: {option} must be an int, got {type(value).__name__}")
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: expected an integer {option} >= 1, got {value!r}")
        if not isinstance(eta_min, float | int):
            raise ValueError(f"{name}: expected a float or int eta_min, got {eta_min!r} of type "
                             f"{type(eta_min).__name__}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Go to the next epoch, or to `epoch` (a float is fine), restarting where a period ends."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        else:
            self._jump_to(epoch)
        self.last_epoch = math.floor(epoch)
        with _within_step(self):
            lrs = self.get_lr()
        self._set_lrs(lrs)

    def _jump_to(self, epoch: float) -> None:
        """Set T_cur and T_i for `epoch` counted from the start."""
        if epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: expected a non-negative epoch, got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:  # the periods so far: T_0 (1 + T_mult + ... + T_mult**(n-1)) epochs in all
            n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult**n


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith): the rate goes up from `base_lr` to `max_lr` over
    `step_size_up` steps and back down over `step_size_down` (default: the same), again and again.

    The amplitude is scaled by `scale_fn` of the cycle number (`scale_mode="cycle"`) or of the
    step (`"iterations"`); the modes give `"triangular"` (no scaling), `"triangular2"` (halved
    each cycle) and `"exp_range"` (gamma**step). With `cycle_momentum`, the momentum (SGD's
    `momentum`, Adam's beta1) moves the opposite way between `max_momentum` and `base_momentum`.
    Step it once per batch. Building it sets each group's rate to its `base_lr`.
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float], max_lr: float | list[float],
                 step_size_up: int = 2000, step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.8, max_momentum: float | list[float] = 0.9,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"CyclicLR: {type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", base_lr, optimizer.param_groups)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", max_lr, optimizer.param_groups)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' when no "
                             f"scale_fn is given, got {mode!r}")
        self.mode, self.gamma, self.scale_mode = mode, gamma, scale_mode
        self._scale_fn_custom = scale_fn
        self._init_scale_mode()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._init_momentum(base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs  # PyTorch's initial step used the groups' initial_lr

    def _init_scale_mode(self) -> None:
        """The modes' own scale modes: per cycle for the triangles, per step for exp_range."""
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def _init_momentum(self, base_momentum: float | list[float], max_momentum: float | list[float],
                       last_epoch: int) -> None:
        """Check the optimizer has a momentum to cycle; start each group's at `max_momentum`."""
        optimizer = self.optimizer
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError("CyclicLR: optimizer must support momentum or beta1 with the cycle_momentum "
                             "option enabled")
        self.use_beta1 = "betas" in optimizer.defaults
        self.base_momentums = _per_group("base_momentum", base_momentum, optimizer.param_groups)
        self.max_momentums = _per_group("max_momentum", max_momentum, optimizer.param_groups)
        if last_epoch == -1:
            for top, base, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups,
                                        strict=True):
                _set_momentum(group, top, self.use_beta1)
                group["max_momentum"], group["base_momentum"] = top, base

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) `x`: the given `scale_fn`, else the mode's."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        _warn_outside_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # how far into the cycle, in [0, 1)
        height = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * height * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            momenta = [top - (top - base) * height * scale
                       for base, top in zip(self.base_momentums, self.max_momentums, strict=True)]
            for group, momentum in zip(self.optimizer.param_groups, momenta, strict=True):
                _set_momentum(group, momentum, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The state, with a custom `scale_fn` kept as its attributes if it is a callable object
        (a plain function is code, not state), as PyTorch does."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        keep = fn is not None and not isinstance(fn, types.FunctionType)
        state["_scale_fn_custom"] = dict(fn.__dict__) if keep else None
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state from `state_dict()` (this scheduler's `scale_fn` stays)."""
        state = dict(state_dict)
        attributes = state.pop("_scale_fn_custom", None)
        super().load_state_dict(state)
        if attributes is not None:
            self._scale_fn_custom.__dict__.update(attributes)
        self._init_scale_mode()


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by `factor` when a metric has not improved for `patience` epochs.

    `step(metric)` once per epoch with, e.g., the validation loss (`mode="min"`) or accuracy
    (`mode="max"`). Improvement means beating the best value by `threshold` (relative, or
    absolute with `threshold_mode="abs"`); after a cut, `cooldown` epochs pass before counting
    again; the rate never goes below `min_lr`, and a cut smaller than `eps` is skipped.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | list[float] = 0, eps: float = 1e-8) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"ReduceLROnPlateau: {type(optimizer).__name__} is not an Optimizer")
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor should be < 1.0, got {factor}")
        _check_int("ReduceLROnPlateau", "patience", patience, low=0)
        _check_int("ReduceLROnPlateau", "cooldown", cooldown, low=0)
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        # Set in PyTorch's order, which its state dict keeps.
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, list | tuple):
            self.default_min_lr = None
            self.min_lrs = _per_group("min_lr", list(min_lr), optimizer.param_groups)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = self._current_lrs()
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting out `cooldown` epochs after a cut."""
        return self.cooldown_counter > 0

    def is_better(self, current: float, best: float) -> bool:
        """Whether `current` beats `best` by the threshold, in the scheduler's mode."""
        if self.threshold_mode == "rel":
            scale = 1.0 - self.threshold if self.mode == "min" else 1.0 + self.threshold
            return current < best * scale if self.mode == "min" else current > best * scale
        if self.mode == "min":
            return current < best - self.threshold
        return current > best + self.threshold

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's metric; cut the rates if it has not improved for `patience` epochs.

        `epoch` (deprecated in PyTorch, which warns as here) sets `last_epoch` instead of counting.
        """
        current = float(metrics)
        if epoch is not None:
            warnings.warn("ReduceLROnPlateau.step(metrics, epoch) is deprecated (as in PyTorch): call "
                          "step(metrics)", UserWarning, stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"ReduceLROnPlateau: the optimizer has {len(groups)} parameter groups "
                                   f"but min_lr lists {len(self.min_lrs)}; set min_lrs to match")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs, strict=True):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)


class _ComposedScheduler(LRScheduler):
    """What SequentialLR and ChainedScheduler share: the schedulers they drive, checked, and state
    dicts that hold each one's state dict."""

    def _check_schedulers(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got none")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name}: the scheduler at index {i} should have `optimizer` as its "
                                "attribute")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{name} does not support ReduceLROnPlateau (at index {i}): its step "
                                 "needs a metric")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but the "
                                 f"{type(scheduler).__name__} at index {i} has another one")

    def state_dict(self) -> dict[str, Any]:
        """The state, with each driven scheduler's state dict in `_schedulers` (PyTorch's layout)."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state from `state_dict()`, each driven scheduler's too."""
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        super().load_state_dict(state)
        for scheduler, scheduler_state in zip(self._schedulers, saved, strict=True):
            scheduler.load_state_dict(scheduler_state)


class SequentialLR(_ComposedScheduler):
    """Run `schedulers` one after another: the i-th takes over at epoch `milestones[i - 1]`.

    Building it resets the rates to the groups' initial_lr, undoes the first step each scheduler
    took when built, and retakes it for the first one. At a milestone the next scheduler starts
    at its epoch 0 (from its closed form where it has one), as in PyTorch.
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int],
                 last_epoch: int = -1) -> None:
        self._check_schedulers(schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR expects one milestone fewer than schedulers, but got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: LRScheduler | None = None) -> None:
        """Take back one epoch of each scheduler (inside composed ones too): the step it took when built."""
        scheduler = self if sched is None else sched
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self.recursive_undo(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self) -> None:
        """Step the scheduler whose turn it is (restarting it at epoch 0 at its milestone)."""
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_ComposedScheduler):
    """Step all of `schedulers` at each step, in order, so their changes to the rate compound."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler, but got none")
        optimizer = optimizer or schedulers[0].optimizer
        self._check_schedulers(schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """Step each scheduler in turn."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")


# --- helpers -----------------------------------------------------------------------------------


def _copy(value: Any) -> Any:
    """A Tensor's copy (a rate or momentum kept apart from the group's), else the value itself."""
    return value.clone() if isinstance(value, Tensor) else value


def _group_values(optimizer: Optimizer, key: str) -> list[Any]:
    """Each group's `key`, Tensors copied so that nobody changes a group's through the list
    (PyTorch's `_param_groups_val_list`)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group: dict[str, Any], key: str, value: Any) -> None:
    """Set a group's option: into its Tensor in place where it is one (whoever holds that tensor,
    as a captured step does in PyTorch, sees the new value), else by replacing it."""
    if isinstance(group[key], Tensor):
        group[key].fill_(float(hyper(value)))
    else:
        group[key] = value


@contextmanager
def _within_step(scheduler: LRScheduler) -> Iterator[None]:
    """Mark `get_lr` calls as the scheduler's own (PyTorch's `_enable_get_lr_call`)."""
    scheduler._get_lr_called_within_step = True
    try:
        yield
    finally:
        scheduler._get_lr_called_within_step = False


def _warn_outside_step(scheduler: LRScheduler) -> None:
    """PyTorch's warning for a `get_lr()` called by the user rather than by `step()`."""
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning, stacklevel=3)


def _check_int(scheduler: str, name: str, value: Any, low: int) -> None:
    """Raise TypeError for a non-integer (2.5 epochs), ValueError below `low`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{scheduler}: {name} must be an int, got {type(value).__name__} {value!r}")
    if value < low:
        raise ValueError(f"{scheduler}: {name} must be >= {low}, got {value}")


def _per_group(name: str, value: Any, groups: Sequence[dict[str, Any]]) -> list[Any]:
    """One value per parameter group: a list of that length, or one value for every group (Tensors
    copied, as PyTorch's `_format_param` does)."""
    if isinstance(value, list | tuple):
        if len(value) != len(groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups: {name} has "
                             f"{len(value)} values, param_groups has {len(groups)}")
        return [_copy(v) for v in value]
    return [_copy(value) for _ in groups]


def _set_momentum(group: dict[str, Any], momentum: float, use_beta1: bool) -> None:
    """Set a group's momentum: Adam's beta1, or SGD's (and RMSprop's) `momentum`."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _total_steps(total_steps: int | None, epochs: int | None, steps_per_epoch: int | None) -> int:
    """OneCycleLR's length: `total_steps`, or `epochs * steps_per_epoch`."""
    if total_steps is not None:
        if not isinstance(total_steps, int) or isinstance(total_steps, bool) or total_steps <= 0:
            raise ValueError(f"OneCycleLR: expected a positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("OneCycleLR: define either total_steps or (epochs and steps_per_epoch)")
    for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"OneCycleLR: expected a positive integer {name}, but got {value}")
    return epochs * steps_per_epoch


def _one_cycle_phases(pct_start: float, total_steps: int, three_phase: bool) -> list[dict[str, Any]]:
    """The phases of the cycle: where each ends, and the group keys it anneals between."""
    warm_up_end = float(pct_start * total_steps) - 1
    if three_phase:
        return [
            {"end_step": warm_up_end, "start_lr": "initial_lr", "end_lr": "max_lr",
             "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
            {"end_step": float(2 * pct_start * total_steps) - 2, "start_lr": "max_lr", "end_lr": "initial_lr",
             "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
            {"end_step": total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
             "start_momentum": "max_momentum", "end_momentum": "max_momentum"},
        ]
    return [
        {"end_step": warm_up_end, "start_lr": "initial_lr", "end_lr": "max_lr",
         "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
        {"end_step": total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
         "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
    ]
