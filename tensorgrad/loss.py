"""Loss functions: cross-entropy, mean squared error, binary cross-entropy (tutorial chapter 9).

`tensorgrad.nn.functional` exports them under PyTorch's names. Each takes `reduction`:
`"mean"` (the default), `"sum"` or `"none"` (one loss per element or row).

`cross_entropy` is one node, not the chain log_softmax, index, mean: its gradient has a closed
form, `(softmax(logits) - onehot(target)) / N`, cheaper to compute than the chain's and with
no intermediate arrays kept for backward.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorgrad.elementwise import sigmoid_array
from tensorgrad.tensor import Tensor, ensure_tensor, record

REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    """The elementwise losses, reduced as `reduction` asks."""
    if reduction == "mean":
        return losses.mean()
    return losses.sum() if reduction == "sum" else losses


def cross_entropy(logits: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Softmax cross-entropy against class indices: -log(softmax(logits)[target]).

    `logits` is (N, C) (or (C,) for one sample), `target` holds N class indices in [0, C) (an
    integer tensor or array). Computed stably through the log-sum-exp, so logits of 1e4 are
    fine. Derivative: softmax(logits) - onehot(target), per row (divided by N for the mean).
    """
    _check_reduction(reduction, "cross_entropy")
    labels = _class_indices(logits, target)
    if logits.ndim == 1:  # one sample: a batch of one, then drop the batch dimension again
        loss = _batched_cross_entropy(logits.unsqueeze(0), labels.reshape(1), reduction)
        return loss.squeeze(0) if reduction == "none" else loss
    return _batched_cross_entropy(logits, labels, reduction)


def _batched_cross_entropy(logits: Tensor, labels: np.ndarray, reduction: str) -> Tensor:
    """`cross_entropy` of (N, C) logits and N checked labels: the forward and its gradient."""
    rows = np.arange(len(labels))
    z = logits.data - logits.data.max(axis=1, keepdims=True)
    probs = np.exp(z)
    total = probs.sum(axis=1, keepdims=True)
    losses = np.log(total[:, 0]) - z[rows, labels]  # logsumexp(logits) - logits[target], per row
    probs /= total  # kept for backward: the softmax, from which the gradient follows
    out = losses
    if reduction != "none":
        out = np.add.reduce(losses)  # ndarray.sum and .mean add a Python wrapper around this
        if reduction == "mean":
            out = out / len(labels)

    def vjp(grad: np.ndarray) -> np.ndarray:
        g = probs.copy()
        g[rows, labels] -= 1
        if reduction == "none":
            g *= grad[:, None]
        else:
            g *= grad / len(labels) if reduction == "mean" else grad
        return g

    return record(out, "cross_entropy", (logits,), vjp, saved=())


def _class_indices(logits: Tensor, target: Any) -> np.ndarray:
    """`target` as an integer array of class indices, checked against the logits' shape."""
    labels = target.data if isinstance(target, Tensor) else np.asarray(target)
    if logits.ndim not in (1, 2):
        raise ValueError(f"cross_entropy: logits must be (N, C) or (C,), got shape {logits.shape}")
    if logits.dtype.kind != "f":
        raise TypeError(f"cross_entropy: logits must be floating point, got dtype {logits.dtype}")
    if labels.dtype.kind not in "iu":
        raise TypeError(
            f"cross_entropy: target must hold class indices (an integer tensor), got dtype {labels.dtype}"
        )
    if labels.shape != logits.shape[:-1]:
        raise ValueError(
            f"cross_entropy: target of shape {labels.shape} doesn't match logits of shape "
            f"{logits.shape}: expected {logits.shape[:-1]}, one class index per row"
        )
    classes = logits.shape[-1]
    if labels.size and (np.minimum.reduce(labels) < 0 or np.maximum.reduce(labels) >= classes):
        bad = labels[(labels < 0) | (labels >= classes)].flat[0]
        raise IndexError(f"cross_entropy: target {bad} is out of range for {classes} classes")
    return labels


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean squared error: (input - target) ** 2, reduced. Both may carry a gradient.

    Shapes broadcast as in `-`. Derivative: 2 (input - target), divided by the count for "mean".
    """
    _check_reduction(reduction, "mse_loss")
    diff = input - ensure_tensor(target, input)
    return _reduce(diff * diff, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Any,  # noqa: A002
                                     reduction: str = "mean") -> Tensor:
    """-(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), from logits x and targets t in [0, 1].

    Computed as max(x, 0) - x t + log(1 + e^-|x|), which stays finite for any x. Derivatives:
    sigmoid(x) - t for x, -x for t.
    """
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    target = ensure_tensor(target, input)
    if target.shape != input.shape:
        raise ValueError(
            f"binary_cross_entropy_with_logits: target shape {target.shape} must equal input shape "
            f"{input.shape}"
        )
    x, t = input.data, target.data
    losses = np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))
    elementwise = record(losses.astype(x.dtype, copy=False), "bce_with_logits", (input, target),
                         lambda grad: grad * (sigmoid_array(x) - t),
                         lambda grad: grad * -x)
    return _reduce(elementwise, reduction)

