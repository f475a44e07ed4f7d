"""Connectionist temporal classification: `F.ctc_loss`, under PyTorch's name (tutorial chapter 9).

CTC scores an unsegmented label sequence against per-frame class log-probabilities: the loss
is -log of the summed probability of every frame-by-frame path (labels with blanks and
repeats in between) that collapses to the target. The sum runs over the extended target
l' = (blank, l1, blank, l2, ..., blank) of length 2S + 1 with the forward (alpha) recursion

    alpha_t(s) = lp[t, l'_s] + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2)),

the last term only where l'_s is a label that differs from l'_{s-2}. It is vectorised over the
batch and the extended positions; only time is a Python loop. The backward runs the mirror
(beta) recursion and gives, as PyTorch does, for t before the input length,

    grad[t, c] = exp(lp[t, c]) - exp(logsumexp_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + loss - lp[t, c]),

which is the gradient of the loss with respect to the logits behind a `log_softmax` (the
usual producer of `log_probs`): the second term alone is d loss / d lp, and the first is the
part `log_softmax`'s backward then removes again, since each frame's terms sum to zero.
That gradient is differentiable once (no `graph_vjp`), as PyTorch's: its `_ctc_loss_backward`
has no derivative either.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record
from tensorgrad.checks import UnsupportedDtypeError
from tensorgrad.device import array_like, namespace, to_numpy
from tensorgrad.loss import REDUCTIONS
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["ctc_loss"]


@autocast_op("ctc_loss")
def ctc_loss(log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """-log p(target | log_probs), summed over the alignments that collapse to the target.

    log_probs (T, N, C) (or (T, C) unbatched) holds log-probabilities, as from `log_softmax`;
    targets are padded (N, S) or concatenated 1-D (sum of target_lengths); the lengths are
    tensors or sequences of ints. `reduction='mean'` divides each loss by its target length
    (at least 1), then averages over the batch; `zero_infinity` turns impossible alignments'
    infinite losses (and their gradients) into zeros. Gradient: see the module docstring.
    """
    op = "ctc_loss"
    if not isinstance(log_probs, Tensor):
        raise TypeError(f"{op}: argument 'log_probs' must be a Tensor, got {type(log_probs).__name__}")
    if log_probs.dtype.kind != "f":
        raise UnsupportedDtypeError(f"{op}: log_probs must be floating point, got dtype {log_probs.dtype}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: {reduction} is not a valid value for reduction")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"{op}: expected log_probs of shape (T, N, C) or (T, C), got shape "
                           f"{tuple(log_probs.shape)}")
    unbatched = log_probs.ndim == 2
    steps, batch, classes = log_probs.shape[0], 1 if unbatched else log_probs.shape[1], log_probs.shape[-1]
    if not 0 <= blank < classes:
        raise RuntimeError(f"{op}: blank must be in label range [0, {classes}), got blank={blank}")
    in_lens = _lengths(input_lengths, batch, "input_lengths", op)
    tgt_lens = _lengths(target_lengths, batch, "target_lengths", op)
    if in_lens.size and in_lens.max() > steps:
        raise RuntimeError(f"{op}: Expected input_lengths to have value at most {steps}, but got value "
                           f"{in_lens.max()} (log_probs of shape {tuple(log_probs.shape)})")
    labels = _padded_targets(targets, tgt_lens, unbatched, blank, op)
    data = log_probs.data if not unbatched else log_probs.data[:, None]
    nll, vjp = _ctc(data, labels, in_lens, tgt_lens, blank, zero_infinity)
    losses = record(nll[0] if unbatched else nll, op, (log_probs,),
                    lambda grad: vjp(grad).reshape(log_probs.shape))
    if reduction == "sum":
        return losses.sum()
    if reduction == "none":
        return losses
    divisor = array_like(np.maximum(tgt_lens, 1), losses.data, losses.dtype)
    return (losses / new_leaf(divisor[0] if unbatched else divisor)).mean()


def _lengths(lengths: Any, batch: int, name: str, op: str) -> np.ndarray:
    """Lengths (a tensor, or a sequence or number of ints) as a host int64 array of `batch`."""
    values = to_numpy(lengths.data) if isinstance(lengths, Tensor) else np.asarray(lengths)
    if values.dtype.kind not in "iu" and not (values.dtype.kind == "f" and (values == values.round()).all()):
        raise RuntimeError(f"{op}: {name} must hold integers, got {lengths!r}")
    values = values.astype(np.int64).reshape(-1)
    if values.size != batch:
        raise RuntimeError(f"{op}: {name} must be of size batch_size ({batch}), got {values.size} values")
    if values.size and values.min() < 0:
        raise RuntimeError(f"{op}: {name} must be non-negative, got {values.tolist()}")
    return values


def _padded_targets(targets: Any, tgt_lens: np.ndarray, unbatched: bool, blank: int, op: str) -> np.ndarray:
    """The targets as a host (N, S) int64 array, S the longest target; blank past each end."""
    values = to_numpy(targets.data) if isinstance(targets, Tensor) else np.asarray(targets)
    values = values.astype(np.int64)
    longest = int(tgt_lens.max()) if tgt_lens.size else 0
    if unbatched and values.ndim == 2:
        values = values.reshape(-1)[:longest]
    if values.ndim == 1:  # concatenated (and an unbatched target): each target follows the last
        if tgt_lens.sum() != values.size:
            raise RuntimeError(f"{op}: Expected tensor to have size {int(tgt_lens.sum())} at dimension 0, "
                               f"but got size {values.size} for argument #2 'targets' (the concatenated "
                               f"targets, target_lengths {tgt_lens.tolist()})")
        starts = np.concatenate(([0], np.cumsum(tgt_lens)[:-1]))
        columns = np.arange(longest)
        inside = columns < tgt_lens[:, None]
        values = np.where(inside, values[np.where(inside, starts[:, None] + columns, 0)], blank)
    elif values.ndim != 2 or values.shape[0] != tgt_lens.size:
        raise RuntimeError(f"{op}: expected targets of shape (N, S) or concatenated 1-D, got shape "
                           f"{values.shape} for a batch of {tgt_lens.size}")
    elif values.shape[1] < longest:
        raise RuntimeError(f"{op}: Expected tensor to have size at least {longest} at dimension 1, but "
                           f"got size {values.shape[1]} for argument #2 'targets'")
    values = values[:, :longest]
    return np.where(np.arange(longest) < tgt_lens[:, None], values, blank)


def _logsumexp3(a: Any, b: Any, c: Any) -> Any:
    """log(exp(a) + exp(b) + exp(c)) elementwise, -inf where all three are."""
    xp = namespace(a)
    top = xp.maximum(xp.maximum(a, b), c)
    top = xp.where(xp.isinf(top), 0, top)
    with np.errstate(divide="ignore"):
        return top + xp.log(xp.exp(a - top) + xp.exp(b - top) + xp.exp(c - top))


def _ctc(data: Any, labels: np.ndarray, in_lens: np.ndarray, tgt_lens: np.ndarray, blank: int,
         zero_infinity: bool) -> tuple[Any, Any]:
    """The per-sample losses of log-probabilities `data` (T, N, C), and the VJP for them."""
    xp = namespace(data)
    steps, batch, classes = data.shape
    width = 2 * labels.shape[1] + 1
    extended = np.full((batch, width), blank, dtype=np.int64)
    extended[:, 1::2] = labels
    skip = np.zeros((batch, width), dtype=bool)  # alpha_t(s) may come from s - 2
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    rows = np.arange(batch)
    ends = 2 * tgt_lens  # the last blank; the last label sits just before it
    has_label = tgt_lens > 0
    extended_d, skip_d = array_like(extended, data), array_like(skip, data)
    # lp[t, n, l'_s]: each frame's log-probability of each extended position
    picked = xp.take_along_axis(data, xp.broadcast_to(extended_d, (steps, batch, width)), axis=2)
    minus_inf = xp.full((batch, 1), -np.inf, dtype=data.dtype)

    alpha = xp.full((steps, batch, width), -np.inf, dtype=data.dtype)
    if steps:
        alpha[0, :, 0] = picked[0, :, 0]
        if width > 1:
            alpha[0, :, 1] = xp.where(array_like(has_label, data), picked[0, :, 1], -np.inf)
    for t in range(1, steps):
        prev = alpha[t - 1]
        one_back = xp.concatenate((minus_inf, prev[:, :-1]), axis=1)
        two_back = xp.where(skip_d, xp.concatenate((minus_inf, minus_inf, prev[:, :-2]), axis=1), -np.inf)
        alpha[t] = picked[t] + _logsumexp3(prev, one_back, two_back)

    last = array_like(np.maximum(in_lens - 1, 0), data)
    rows_d, ends_d = array_like(rows, data), array_like(ends, data)
    label_at, labelled = array_like(np.maximum(ends - 1, 0), data), array_like(has_label, data)
    final_blank = alpha[last, rows_d, ends_d]
    final_label = xp.where(labelled, alpha[last, rows_d, label_at], -np.inf)
    with np.errstate(divide="ignore"):
        nll = -xp.logaddexp(final_blank, final_label)
    # an empty input: only an empty target has an alignment
    nll = xp.where(array_like(in_lens == 0, data), xp.where(labelled, np.inf, 0.0), nll)
    nll = nll.astype(data.dtype)
    infinite = xp.isinf(nll) if zero_infinity else None
    if zero_infinity:
        nll = xp.where(infinite, 0, nll)

    def vjp(grad: Any) -> Any:
        beta = xp.full((steps, batch, width), -np.inf, dtype=data.dtype)
        starts = array_like(in_lens - 1, data)
        skip_ahead = xp.concatenate((skip_d[:, 2:], xp.zeros((batch, 2), dtype=bool)), axis=1)
        for t in range(steps - 1, -1, -1):
            if t < steps - 1:
                after = beta[t + 1]
                one_on = xp.concatenate((after[:, 1:], minus_inf), axis=1)
                two_on = xp.where(skip_ahead, xp.concatenate((after[:, 2:], minus_inf, minus_inf), axis=1),
                                  -np.inf)
                beta[t] = picked[t] + _logsumexp3(after, one_on, two_on)
            # each sample's recursion starts at its own last frame, from its last label or blank
            start = xp.full((batch, width), -np.inf, dtype=data.dtype)
            start[rows_d, ends_d] = picked[t, rows_d, ends_d]
            start[rows_d, label_at] = xp.where(labelled, picked[t, rows_d, label_at], start[rows_d, label_at])
            beta[t] = xp.where((starts == t)[:, None], start, beta[t])
        frames = array_like(np.arange(steps)[:, None] < in_lens[None, :], data)  # (T, N)
        both = xp.where(frames[:, :, None], alpha + beta, -np.inf)
        top = both.max(axis=2, keepdims=True) if width else xp.zeros((steps, batch, 1), data.dtype)
        top = xp.where(xp.isinf(top), 0, top)
        # summed per class: (N, T, S') @ one-hot (N, S', C)
        onehot = (extended_d[:, :, None] == xp.arange(classes)[None, None, :]).astype(data.dtype)
        per_class = (xp.exp(both - top).transpose(1, 0, 2) @ onehot).transpose(1, 0, 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_class = xp.log(per_class) + top
            out = xp.exp(data) - xp.exp(log_class + nll[None, :, None] - data)
        keep = frames[:, :, None]
        if zero_infinity:
            keep = keep & ~infinite[None, :, None]
        return xp.where(keep, out * grad.reshape(1, batch, 1), 0).astype(data.dtype)

    return nll, vjp

