"""Weight averaging: PyTorch's `torch.optim.swa_utils` (tutorial chapter 9).

Stochastic Weight Averaging (SWA) trains as usual, then averages the weights the model passes
through late in training; an exponential moving average (EMA) of the weights is its cousin.
Both often generalise better than the last weights alone.

    swa_model = swa_utils.AveragedModel(model)          # a copy that holds the average
    swa_scheduler = swa_utils.SWALR(optimizer, swa_lr=0.05)
    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        if epoch >= swa_start:
            swa_model.update_parameters(model)          # fold the current weights in
            swa_scheduler.step()
    swa_utils.update_bn(loader, swa_model)              # BatchNorm statistics for the averaged weights

`AveragedModel(model, avg_fn=get_ema_avg_fn(0.999))` (or `multi_avg_fn=get_ema_multi_avg_fn()`)
keeps an EMA instead of the equal-weight average.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np

from scalargrad.engine import no_grad
from tensorgrad.creation import tensor
from tensorgrad.device import array_like
from tensorgrad.nn.modules import Module
from tensorgrad.nn.normalization import _BatchNorm, _InstanceNorm
from tensorgrad.optim.lr_scheduler import LRScheduler, _per_group, _warn_outside_step
from tensorgrad.optim.optimizer import Optimizer, lerp_
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]

AvgFn = Callable[[Tensor, Tensor, Tensor | int], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], Tensor | int], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """A function that updates averaged tensors in place, ema = decay * ema + (1 - decay) * current,
    for a list of them at once (for `AveragedModel(multi_avg_fn=...)`)."""
    _check_decay(decay)

    def ema_update(ema_param_list: Sequence[Tensor], current_param_list: Sequence[Tensor], _: Any) -> None:
        with no_grad():
            for ema, current in zip(ema_param_list, current_param_list, strict=True):
                if ema.dtype.kind in "fc":
                    lerp_(ema.data, current.data, 1 - decay)
                else:  # an integer buffer: the mix, truncated back into it (PyTorch's copy_)
                    ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """A function that updates averaged tensors in place with the running mean,
    avg = avg + (current - avg) / (num_averaged + 1), for a list of them at once."""

    def swa_update(averaged_param_list: Sequence[Tensor], current_param_list: Sequence[Tensor],
                   num_averaged: Tensor | int) -> None:
        count = num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged
        with no_grad():
            for averaged, current in zip(averaged_param_list, current_param_list, strict=True):
                if averaged.dtype.kind in "fc":
                    lerp_(averaged.data, current.data, 1 / (count + 1))
                else:
                    averaged.copy_(averaged + (current - averaged) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """A function of (ema, current, num_averaged) returning decay * ema + (1 - decay) * current
    (for `AveragedModel(avg_fn=...)`)."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """A function of (averaged, current, num_averaged) returning the running mean
    averaged + (current - averaged) / (num_averaged + 1)."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters hold an average of `model`'s over the
    `update_parameters` calls: equal weights by default (SWA), or as `avg_fn` (one tensor at a
    time, returning the new average) or `multi_avg_fn` (lists of tensors, in place) says.

    Calling it runs the copy. `n_averaged` (an int64 buffer) counts the models averaged; the
    first update copies the weights. With `use_buffers`, the buffers (BatchNorm's running
    statistics) are averaged too; without, they are copied from `model` at each update. Its
    state dict holds `n_averaged` and the copy's entries under `module.`, as PyTorch's.
    """

    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=np.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's output."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current parameters (and buffers, with `use_buffers`) into the average."""
        if self.use_buffers:
            own = [*self.module.parameters(), *self.module.buffers()]
            theirs = [*model.parameters(), *model.buffers()]
        else:
            own, theirs = list(self.parameters()), list(model.parameters())
        pairs = [(mine, other.detach().to(mine.device)) for mine, other in zip(own, theirs, strict=False)]
        with no_grad():
            if self.n_averaged.item() == 0:
                for mine, other in pairs:
                    mine.copy_(other)
            elif self.avg_fn is not None and self.multi_avg_fn is None:
                for mine, other in pairs:
                    mine.copy_(self.avg_fn(mine.detach(), other, self._count_on(mine)))
            else:
                # PyTorch hands the tensors over in groups of one device and dtype.
                groups: dict[tuple[str, str], tuple[list[Tensor], list[Tensor]]] = {}
                for mine, other in pairs:
                    group = groups.setdefault((str(mine.device), str(mine.dtype)), ([], []))
                    group[0].append(mine.detach())
                    group[1].append(other)
                for averaged, current in groups.values():
                    count = self._count_on(averaged[0])
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(averaged, current, count)
                    else:  # PyTorch's rule off its foreach devices, the one it uses on the CPU
                        swa = get_swa_avg_fn()
                        for mine, other in zip(averaged, current, strict=True):
                            mine.copy_(swa(mine, other, count))
            if not self.use_buffers:  # the buffers follow the model's
                for mine, other in zip(self.module.buffers(), model.buffers(), strict=True):
                    mine.copy_(other.detach().to(mine.device))
            self.n_averaged += 1

    def _count_on(self, like: Tensor) -> Tensor:
        """`n_averaged` where `like` lives (PyTorch's `n_averaged.to(device)`)."""
        return new_leaf(array_like(self.n_averaged.data, like.data))


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running mean and variance of every BatchNorm layer of `model` with one pass
    over `loader` (its batches tensors, or lists or tuples whose first element is the input),
    as a cumulative average (momentum None), without recording a graph. `model`'s training mode
    and the layers' momenta are restored afterwards."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, list | tuple):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate from where it is to `swa_lr` (one value, or a list with one per
    group) over `anneal_epochs` steps, by a half cosine (`"cos"`) or a straight line
    (`"linear"`), then hold it there: the schedule of the SWA phase."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _per_group("swa_lr", swa_lr, optimizer.param_groups)
        for value, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        """Each group's rate at this step: the fraction `anneal_func(t)` of the way from the rate
        the annealing started at (recovered from the current one) to `swa_lr`."""
        _warn_outside_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(lr, group["swa_lr"], prev_alpha)
                    for group, lr in zip(groups, self._current_lrs(), strict=True)]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Everything the scheduler holds but the optimizer and the annealing function."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state from `state_dict()` (the annealing function from its strategy's name)."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
