"""Loss functions, under PyTorch's names and signatures (tutorial chapter 9).

`tensorgrad.nn.functional` exports them. Each takes `reduction`: `"mean"` (the default), `"sum"`
or `"none"` (one loss per element or sample); PyTorch's deprecated `size_average` and `reduce`
arguments are honoured too. Gradients reach every floating input, targets included, as in
PyTorch; class `weight`s are constants (PyTorch does not differentiate them either), except in
the losses where PyTorch composes them from plain ops (probability-target `cross_entropy`,
`mse_loss`, `l1_loss`, `huber_loss`).

`cross_entropy` on (N, C) logits and class indices, without weights, smoothing or ignored
samples, is one node, not the chain log_softmax, index, mean: its gradient has a closed form,
`(softmax(logits) - onehot(target)) / N`, cheaper to compute than the chain's and with no
intermediate arrays kept for backward. Every other case is `log_softmax` followed by
`nll_loss` (itself one node), plus the label-smoothing term.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import numpy as np

from scalargrad.engine import is_grad_enabled
from tensorgrad.autocasting import autocast_op
from tensorgrad.autograd import record, summed
from tensorgrad.checks import ShapeError, UnsupportedDtypeError, broadcasts_to, user_stacklevel
from tensorgrad.device import namespace, to_numpy
from tensorgrad.dtypes import promote_types
from tensorgrad.elementwise import sigmoid_array, where
from tensorgrad.higher_order import held_constant
from tensorgrad.reduce import log_softmax, softmax
from tensorgrad.tensor import Tensor, ensure_tensor, new_leaf

__all__ = [
    "multi_margin_loss",
    "multilabel_margin_loss",
    "cross_entropy",
    "nll_loss",
    "gaussian_nll_loss",
    "poisson_nll_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
]

REDUCTIONS = ("mean", "sum", "none")


# --- reductions ---------------------------------------------------------------------------------


def _reduction(op: str, reduction: str, size_average: bool | None = None,
               reduce: bool | None = None) -> str:
    """The reduction to apply: PyTorch's legacy `size_average` / `reduce` win when given."""
    if size_average is None and reduce is None and reduction in REDUCTIONS:
        return reduction  # the usual case, first
    if size_average is not None or reduce is not None:
        if reduce is False:
            return "none"
        return "sum" if size_average is False else "mean"
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction: expected 'mean', "
                         "'sum' or 'none'")
    return reduction


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    """The elementwise losses, reduced as `reduction` asks."""
    if reduction == "mean":
        return losses.mean()
    return losses.sum() if reduction == "sum" else losses


def _loss_node(op: str, losses: np.ndarray, reduction: str, inputs: tuple[Tensor, ...], *vjps: Any,
               graph_vjp: Any) -> Tensor:
    """One graph node for elementwise `losses` and their reduction, as PyTorch's loss kernels are
    (MseLossBackward0, BinaryCrossEntropyBackward0, ...: not a loss node, then a MeanBackward0).

    `vjps` and `graph_vjp` are the elementwise losses' gradient formulas; the reduction's gradient
    (each element's share, 1/n of a mean) is folded in here.
    """
    if reduction == "none":
        return record(losses, op, inputs, *vjps, graph_vjp=graph_vjp)
    share = 1 / max(losses.size, 1) if reduction == "mean" else 1.0
    return record(_summed_or_mean(losses, reduction), op, inputs,
                  *(partial(_shared_vjp, vjp, share) for vjp in vjps),
                  graph_vjp=partial(_shared_graph, graph_vjp, share))


def _shared_vjp(vjp: Any, share: float, grad: np.ndarray) -> np.ndarray:
    return vjp(grad * share if share != 1 else grad)  # (a 0-d grad: the formula broadcasts it)


def _shared_graph(graph_vjp: Any, share: float, grad: Tensor, out: Tensor, *inputs: Tensor) -> tuple:
    return graph_vjp(grad * share if share != 1 else grad, out, *inputs)


def _summed_or_mean(losses: np.ndarray, reduction: str) -> np.ndarray:
    """The sum of the losses ("sum"), or their mean ("mean"; nan for none, as PyTorch's); float16
    adds in float32 (`autograd.summed`)."""
    total = summed(losses, None)
    if reduction == "sum":
        return total
    with np.errstate(invalid="ignore"):  # the mean of nothing is nan
        return total / losses.dtype.type(losses.size) if losses.size else total * np.nan


def _floating(x: Any, op: str, argument: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: argument '{argument}' must be a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise UnsupportedDtypeError(f"{op}: {argument} must be floating point, got dtype {x.dtype}")
    return x


def _constant(weight: Any, input: Tensor, op: str = "",  # noqa: A002
              argument: str = "weight") -> np.ndarray | None:
    """A class weight as an array (no gradient flows to it), or None; a list or a numpy array
    is copied to `input`'s device. A weight that requires grad is refused, as PyTorch does where
    the op is one kernel (`op` names it)."""
    if weight is None:
        return None
    if op and isinstance(weight, Tensor) and weight.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument "
                           f"'{argument}'. This input cannot have requires_grad True.")
    return weight.data if isinstance(weight, Tensor) else namespace(input.data).asarray(weight)


CLASS_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.uint8))


def _labels(op: str, target: Any, input: Tensor) -> np.ndarray:  # noqa: A002
    """The array of a target: a tensor's own, or a list or numpy array on `input`'s device.

    A tensor of class indices must be int64 or uint8, as PyTorch requires (an int32 tensor is
    refused, not cast); a list or numpy array, which PyTorch does not take at all, may hold any
    integer type."""
    if not isinstance(target, Tensor):
        return namespace(input.data).asarray(target)
    labels = target.data
    if labels.dtype.kind in "iu" and labels.dtype not in CLASS_INDEX_DTYPES:
        raise UnsupportedDtypeError(f"{op}: expected target dtype to be int64 (long) or uint8, got "
                                    f"{labels.dtype}; convert the labels with .long()")
    return labels


def _operand(value: Any, like: Tensor) -> Tensor:
    """`value` as a tensor (`ensure_tensor`'s rules) on `like`'s device: a number, list or numpy
    array given for a target or a weight is host data, copied over where `like` lives."""
    t = ensure_tensor(value, like)
    if t is not value and type(t.data) is not type(like.data):
        t = new_leaf(namespace(like.data).asarray(t.data))
    return t


def _extremes(a: np.ndarray) -> tuple[Any, Any]:
    """The smallest and the largest element of a non-empty array.

    numpy's ufunc reductions are its quickest; CuPy's ufuncs reduce with add and multiply only,
    and its two 0-d results come to the host together: one wait for the GPU, not two.
    """
    if type(a) is np.ndarray:
        return np.minimum.reduce(a, axis=None), np.maximum.reduce(a, axis=None)
    low, high = to_numpy(namespace(a).stack((a.min(), a.max())))
    return low, high


# --- cross-entropy and negative log-likelihood --------------------------------------------------


@autocast_op("cross_entropy")
def cross_entropy(input: Tensor, target: Any, weight: Any = None,  # noqa: A002 - PyTorch's name
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy: -sum_c target_c log(softmax(input)_c), per sample, reduced.

    `input` is (N, C), (C,) or (N, C, d1, ...) logits; `target` holds class indices ((N,), (),
    (N, d1, ...)) or class probabilities (the shape of `input`, floating). `weight` (C,) scales
    each class; samples whose index is `ignore_index` count for nothing; `label_smoothing` mixes
    the target with the uniform distribution. The mean over class indices divides by the summed
    weights of the counted samples, as in PyTorch. Computed through the log-sum-exp, so logits of
    1e4 are fine. Derivative: softmax(input) - target (one-hot for indices), weighted.
    """
    op = "cross_entropy"
    reduction = _reduction(op, reduction, size_average, reduce)
    _floating(input, op)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"{op}: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    ndim = input.ndim
    if ndim == 0:
        raise ShapeError(f"{op}: input must have a class dimension, got a 0-d tensor")
    labels = _labels(op, target, input)
    if labels.dtype.kind == "f" and labels.shape == input.shape:  # class probabilities
        if ignore_index >= 0:
            raise RuntimeError(f"{op}: ignore_index is not supported for probability targets "
                               "(floating point target)")
        weights = _class_weight(op, weight, input)
        if isinstance(weight, Tensor) and weight.requires_grad:
            weights = weight  # composed of plain ops: a learned weight gets its gradient, as in PyTorch
        return _cross_entropy_probabilities(input, _operand(target, input), weights, reduction,
                                            label_smoothing)
    labels, ignored = _class_targets(op, input, labels, ignore_index)
    weights = None if weight is None else _class_weight(op, weight, input, "nll_loss")
    if weights is None and not label_smoothing and ignored is None and ndim <= 2:
        if ndim == 1:  # one sample: a batch of one, then drop the batch dimension again
            loss = _batched_cross_entropy(input.unsqueeze(0), labels.reshape(1), reduction)
            return loss.squeeze(0) if reduction == "none" else loss
        return _batched_cross_entropy(input, labels, reduction)
    class_dim = 0 if input.ndim == 1 else 1
    log_probs = log_softmax(input, class_dim)
    nll = _nll(op, log_probs, labels, ignored, weights, reduction)
    if label_smoothing == 0:
        return nll
    smooth = _smoothing_term(log_probs, labels, ignored, weights, reduction, class_dim)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / input.shape[class_dim])


def _batched_cross_entropy(logits: Tensor, labels: np.ndarray, reduction: str) -> Tensor:
    """`cross_entropy` of (N, C) logits and N checked labels: the forward and its gradient."""
    rows = namespace(labels).arange(len(labels))
    z = logits.data - logits.data.max(axis=1, keepdims=True)
    probs = np.exp(z)
    total = probs.sum(axis=1, keepdims=True)
    losses = np.log(total[:, 0]) - z[rows, labels]  # logsumexp(logits) - logits[target], per row
    probs /= total  # kept for backward: the softmax, from which the gradient follows
    out = losses
    if reduction != "none":
        out = np.add.reduce(losses)  # ndarray.sum and .mean add a Python wrapper around this
        if reduction == "mean":  # no samples: nan, as in PyTorch (and no np.errstate: it is slow)
            out = out / len(labels) if len(labels) else out * np.nan

    def vjp(grad: np.ndarray) -> np.ndarray:
        g = probs.copy()
        g[rows, labels] -= 1
        if reduction == "none":
            g *= grad[:, None]
        else:
            g *= grad / len(labels) if reduction == "mean" else grad
        return g

    return record(out, "cross_entropy", (logits,), vjp, saved=(),
                  graph_vjp=partial(_batched_cross_entropy_graph, labels, reduction))


def _batched_cross_entropy_graph(labels: np.ndarray, reduction: str, grad: Tensor, out: Tensor,
                                 logits: Tensor) -> tuple[Tensor]:
    one_hot = namespace(labels).zeros(logits.shape, logits.dtype)
    one_hot[namespace(labels).arange(len(labels)), labels] = 1
    g = softmax(logits, 1) - new_leaf(one_hot)
    if reduction == "none":
        return (g * grad.unsqueeze(1),)
    return (g * (grad / len(labels)) if reduction == "mean" else g * grad,)


def _cross_entropy_probabilities(input: Tensor, target: Tensor, weight: np.ndarray | Tensor | None,  # noqa: A002
                                 reduction: str, label_smoothing: float) -> Tensor:
    """-sum_c w_c target_c log_softmax(input)_c: composed of plain ops, so the target gets its
    gradient too. The mean divides by the number of samples (elements over classes)."""
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    products = log_softmax(input, class_dim) * target
    if weight is not None:
        products = products * _along_classes(weight, input.ndim, class_dim)
    if reduction == "none":
        return -products.sum(class_dim)
    total = -products.sum()
    if reduction == "sum":
        return total
    samples = input.data.size // classes if classes else 0
    return total / samples if samples else total * np.nan


def _along_classes(values: np.ndarray | Tensor, ndim: int, class_dim: int) -> np.ndarray | Tensor:
    """A (C,) array (or tensor) shaped to broadcast along the class dimension of an ndim-d input."""
    shape = [1] * ndim
    shape[class_dim] = values.shape[0]
    return values.reshape(tuple(shape))


def _class_weight(op: str, weight: Any, input: Tensor, kernel: str = "") -> np.ndarray | None:  # noqa: A002
    """A (C,) class weight as an array; a tensor of another dtype than `input` is refused where
    PyTorch's one-kernel losses (`kernel`) refuse it."""
    weights = _constant(weight, input, kernel)
    if weights is None:
        return None
    if kernel and isinstance(weight, Tensor) and weight.dtype != input.dtype:
        raise RuntimeError(f"{op}: expected scalar type {input.dtype} but found {weight.dtype} for weight")
    classes = input.shape[0 if input.ndim == 1 else 1]
    if weights.shape != (classes,):
        raise RuntimeError(f"{op}: weight should hold one value for each of the {classes} classes "
                           f"of input of shape {input.shape}, got weight of shape {weights.shape}")
    return weights.astype(input.dtype, copy=False)


def _class_targets(op: str, input: Tensor, labels: np.ndarray,  # noqa: A002
                   ignore_index: int) -> tuple[np.ndarray, np.ndarray | None]:
    """`labels` checked as class indices, and the mask of ignored ones (None if there are none)."""
    if labels.dtype.kind not in "iu":
        raise UnsupportedDtypeError(f"{op}: target must hold class indices (an integer tensor) or "
                                    f"class probabilities of the input's shape {input.shape}, got dtype "
                                    f"{labels.dtype} and shape {labels.shape}")
    shape = input.shape
    if labels.shape != (shape[:1] + shape[2:] if len(shape) > 1 else ()):
        _raise_target_shape(op, input, labels)
    classes = shape[0 if len(shape) == 1 else 1]
    if labels.size == 0:
        return labels, None
    flat = labels if labels.ndim == 1 else labels.reshape(-1)
    low, high = _extremes(flat)
    # The common case, checked with plain Python comparisons first: no index can be ignored.
    if (ignore_index < 0 or ignore_index >= classes) and low >= 0 and high < classes:
        return labels, None
    ignored = labels == ignore_index
    bad = ~ignored & ((labels < 0) | (labels >= classes))
    if bad.any():
        raise IndexError(f"{op}: target {labels[bad].flat[0]} is out of bounds for {classes} "
                         f"classes (input of shape {input.shape})")
    return labels, (ignored if ignored.any() else None)


def _raise_target_shape(op: str, input: Tensor, labels: np.ndarray) -> None:  # noqa: A002
    """Class indices are the input's shape without the class dim: (N, d1, ...), or () for (C,)."""
    expected = () if input.ndim == 1 else (input.shape[0], *input.shape[2:])
    raise ShapeError(f"{op}: target of shape {labels.shape} doesn't fit input of shape "
                     f"{input.shape}: expected target shape {expected}, one class index per sample")


@autocast_op("nll_loss")
def nll_loss(input: Tensor, target: Any, weight: Any = None,  # noqa: A002 - PyTorch's name
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood: -weight[target] * input[target], per sample, reduced.

    `input` holds log-probabilities, (N, C), (C,) or (N, C, d1, ...); `target` the class indices.
    Samples whose index is `ignore_index` count for nothing; the mean divides by the summed
    weights of the counted samples. Derivative: -weight[target] at the target's class, else 0.
    """
    op = "nll_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    _floating(input, op)
    if input.ndim == 0:
        raise ValueError(f"{op}: input must have a class dimension, got a 0-d tensor")
    labels, ignored = _class_targets(op, input, _labels(op, target, input), ignore_index)
    return _nll(op, input, labels, ignored, _class_weight(op, weight, input, "nll_loss"), reduction)


def _nll(op: str, log_probs: Tensor, labels: np.ndarray, ignored: np.ndarray | None,
         weights: np.ndarray | None, reduction: str) -> Tensor:
    """The nll_loss node: pick each sample's log-probability along the class dim; its gradient
    puts -weight there (scaled for the mean) and zero elsewhere."""
    x = log_probs.data
    class_dim = 0 if x.ndim == 1 else 1
    safe, sample_weights = _sample_weights(labels, ignored, weights, x.dtype)
    index = np.expand_dims(safe, class_dim)
    picked = np.take_along_axis(x, index, class_dim).squeeze(class_dim)
    losses = -picked * sample_weights
    if reduction == "none":
        out, scale = losses, sample_weights
    elif reduction == "sum":
        out, scale = np.add.reduce(losses, axis=None), sample_weights
    else:
        total = np.add.reduce(sample_weights, axis=None)
        with np.errstate(invalid="ignore", divide="ignore"):  # nothing counted: nan, as in PyTorch
            out, scale = np.add.reduce(losses, axis=None) / total, sample_weights / total
        if ignored is not None:  # an ignored sample gets no gradient, even when nothing is counted
            scale = np.where(ignored, 0, scale)

    def vjp(grad: np.ndarray) -> np.ndarray:
        g = np.zeros_like(x)
        np.put_along_axis(g, index, np.expand_dims(-scale * grad, class_dim), class_dim)
        return g

    return record(namespace(x).asarray(out, x.dtype), op, (log_probs,), vjp, saved=(),
                  graph_vjp=partial(_nll_graph, index, scale, class_dim, reduction))


def _nll_graph(index: np.ndarray, scale: np.ndarray, class_dim: int, reduction: str,
               grad: Tensor, out: Tensor, log_probs: Tensor) -> tuple[Tensor]:
    """-scale * grad at each sample's class, 0 elsewhere: linear in grad, constant in log_probs."""
    picks = np.zeros_like(log_probs.data)
    np.put_along_axis(picks, index, np.expand_dims(-scale, class_dim), class_dim)
    return (new_leaf(picks) * (grad.unsqueeze(class_dim) if reduction == "none" else grad),)


def _sample_weights(labels: np.ndarray, ignored: np.ndarray | None, weights: np.ndarray | None,
                    dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's weight (its class's, 0 if ignored), and labels safe to index with."""
    safe = labels if ignored is None else np.where(ignored, 0, labels)  # ignored: any valid index
    sample_weights = namespace(labels).ones(labels.shape, dtype) if weights is None else weights[safe]
    if ignored is not None:
        sample_weights = sample_weights * ~ignored
    return safe, sample_weights


def _smoothing_term(log_probs: Tensor, labels: np.ndarray, ignored: np.ndarray | None,
                    weights: np.ndarray | None, reduction: str, class_dim: int) -> Tensor:
    """-sum_c w_c log_probs_c per sample (0 for ignored ones), reduced as PyTorch's label
    smoothing does: the mean divides by the same summed weights as the nll term."""
    if weights is not None:
        log_probs = log_probs * _along_classes(weights, log_probs.ndim, class_dim)
    smooth = -log_probs.sum(class_dim)
    if ignored is not None:  # a selection, not a product: no gradient there, even times 1 / 0
        smooth = where(new_leaf(ignored), 0.0, smooth)
    if reduction == "none":
        return smooth
    if reduction == "sum":
        return smooth.sum()
    _, sample_weights = _sample_weights(labels, ignored, weights, log_probs.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):  # nothing counted: nan, as in PyTorch
        scale = 1 / np.add.reduce(sample_weights, axis=None)
        return smooth.sum() * new_leaf(namespace(sample_weights).asarray(scale, log_probs.dtype))


# --- regression losses --------------------------------------------------------------------------


def _difference(op: str, input: Tensor, target: Any, keep_dtype: bool = False) -> Tensor:  # noqa: A002
    """input - target, warning as PyTorch does when the shapes differ and so broadcast (see
    `_regression_target`)."""
    return input - _regression_target(op, input, target, keep_dtype)


def _regression_target(op: str, input: Tensor, target: Any, keep_dtype: bool = False) -> Tensor:  # noqa: A002
    """The target of a loss on input - target, checked: a warning, as PyTorch's, when the shapes
    differ and so broadcast.

    A bool target counts as 0 and 1 (except in l1_loss, which PyTorch refuses it); with
    `keep_dtype` the target is cast to the input's dtype first (huber_loss: the result has the
    input's dtype, as PyTorch's). l1_loss also takes complex input."""
    if not (op == "l1_loss" and isinstance(input, Tensor) and input.dtype.kind == "c"):
        _floating(input, op)
    target = _operand(target, input)
    if (keep_dtype or target.dtype == np.bool_ and op != "l1_loss") and target.dtype != input.dtype:
        target = target.to(input.dtype)
    if target.shape != input.shape:
        warnings.warn(f"{op}: using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}); this will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=user_stacklevel())
    return target


def _weighted_reduce(op: str, losses: Tensor, weight: Any, reduction: str, mean_by_weight: bool) -> Tensor:
    """Reduce elementwise losses, scaled by `weight` (of the losses' shape) when given.

    PyTorch's weighted mean divides by the summed weights for mse_loss and l1_loss, by the
    element count for huber_loss (`mean_by_weight` says which).
    """
    if weight is None:
        return _reduce(losses, reduction)
    weight = _operand(weight, losses)
    if weight.shape != losses.shape:
        raise ValueError(f"{op}: weights and input must have the same size: weight of shape "
                         f"{weight.shape}, losses of shape {losses.shape}")
    weighted = losses * weight
    if reduction == "mean" and mean_by_weight:
        return weighted.sum() / weight.sum()
    return _reduce(weighted, reduction)


@autocast_op("mse_loss")
def mse_loss(input: Tensor, target: Any, size_average: bool | None = None,  # noqa: A002
             reduce: bool | None = None, reduction: str = "mean", weight: Any = None) -> Tensor:
    """Mean squared error: (input - target) ** 2, reduced. Both may carry a gradient.

    Shapes broadcast as in `-` (with PyTorch's warning). Derivative: 2 (input - target), divided
    by the count for "mean".
    """
    reduction = _reduction("mse_loss", reduction, size_average, reduce)
    if weight is not None:
        diff = _difference("mse_loss", input, target)
        return _weighted_reduce("mse_loss", diff * diff, weight, reduction, mean_by_weight=True)
    target = _regression_target("mse_loss", input, target)
    diff = _difference_array(input, target)
    return _loss_node("mse_loss", diff * diff, reduction, (input, target),
                      lambda grad: 2 * diff * grad, lambda grad: -2 * diff * grad, graph_vjp=_mse_loss_graph)


def _mse_loss_graph(grad: Tensor, out: Tensor, input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    return 2 * (input - target) * grad, 2 * (target - input) * grad


def _difference_array(input: Tensor, target: Tensor) -> np.ndarray:  # noqa: A002
    """input - target as an array, in the dtype of both: PyTorch's regression losses broadcast the
    two first, so a 0-d float64 target makes a float64 loss."""
    dtype = promote_types(input.data.dtype, target.data.dtype)
    return input.data.astype(dtype, copy=False) - target.data.astype(dtype, copy=False)


@autocast_op("l1_loss")
def l1_loss(input: Tensor, target: Any, size_average: bool | None = None,  # noqa: A002
            reduce: bool | None = None, reduction: str = "mean", weight: Any = None) -> Tensor:
    """Mean absolute error: |input - target|, reduced. Derivative: sign(input - target) (0 at 0).
    Complex input gives the real |input - target|, as PyTorch's (its derivative: through abs)."""
    reduction = _reduction("l1_loss", reduction, size_average, reduce)
    d = _difference("l1_loss", input, target)
    if d.dtype.kind == "c":
        return _weighted_reduce("l1_loss", d.abs(), weight, reduction, mean_by_weight=True)
    losses = record(np.abs(d.data), "l1_loss", (d,), lambda grad: grad * np.sign(d.data), graph_vjp=_l1_graph)
    return _weighted_reduce("l1_loss", losses, weight, reduction, mean_by_weight=True)


def _l1_graph(grad: Tensor, out: Tensor, d: Tensor) -> tuple[Tensor]:
    return (grad * held_constant(d, np.sign(d.data)),)


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Any, size_average: bool | None = None,  # noqa: A002
                   reduce: bool | None = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta, for d = input - target.

    beta = 0 is the L1 loss. Derivative: d / beta inside, sign(d) outside.
    """
    op = "smooth_l1_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError(f"{op}: beta must be non-negative, got {beta}")
    target = _regression_target(op, input, target)
    x = _difference_array(input, target)
    inside = np.abs(x) < beta
    with np.errstate(invalid="ignore", divide="ignore"):  # beta = 0: the inside is empty
        losses = np.where(inside, 0.5 * x * x / beta, np.abs(x) - 0.5 * beta)
        slope = np.where(inside, x / beta, np.sign(x))
    return _loss_node(op, losses.astype(x.dtype, copy=False), reduction, (input, target),
                      lambda grad: grad * slope, lambda grad: grad * -slope,
                      graph_vjp=partial(_piecewise_quadratic_graph, inside, 1 / beta if beta else 0.0, 1.0))


def _piecewise_quadratic_graph(inside: np.ndarray, curvature: float, outer: float, grad: Tensor,
                               out: Tensor, input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    """The gradient of smooth_l1 and huber in d = input - target: curvature * d inside, outer *
    sign(d) outside (and its negative for the target)."""
    d = input - target
    outside = new_leaf((outer * np.sign(d.data)).astype(d.dtype, copy=False))
    if not inside.any():  # (beta = 0: no inside, and no 1 / 0 in the graph)
        return grad * outside, -(grad * outside)
    along = grad * where(new_leaf(inside), d * curvature, outside)
    return along, -along


@autocast_op("huber_loss")
def huber_loss(input: Tensor, target: Any, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Any = None) -> Tensor:
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta), for d = input - target.

    Derivative: d inside, delta sign(d) outside.
    """
    op = "huber_loss"
    reduction = _reduction(op, reduction)
    if delta <= 0:
        raise RuntimeError(f"{op}: delta must be positive, got {delta}")
    target = _regression_target(op, input, target, keep_dtype=True)
    x = _difference_array(input, target)
    inside = np.abs(x) < delta
    losses = np.where(inside, 0.5 * x * x, delta * (np.abs(x) - 0.5 * delta)).astype(x.dtype, copy=False)
    slope = np.where(inside, x, delta * np.sign(x))
    graph_vjp = partial(_piecewise_quadratic_graph, inside, 1.0, delta)
    if weight is not None:
        losses = record(losses, op, (input, target), lambda grad: grad * slope, lambda grad: grad * -slope,
                        graph_vjp=graph_vjp)
        return _weighted_reduce(op, losses, weight, reduction, mean_by_weight=False)
    return _loss_node(op, losses, reduction, (input, target), lambda grad: grad * slope,
                      lambda grad: grad * -slope, graph_vjp=graph_vjp)


# --- binary cross-entropy and KL divergence -----------------------------------------------------


def _binary_target(op: str, input: Tensor, target: Any) -> Tensor:  # noqa: A002
    """`target` as a tensor of `input`'s shape, `input` checked to be floating point."""
    _floating(input, op)
    target = _operand(target, input)
    if target.shape != input.shape:
        raise ValueError(f"{op}: target shape {target.shape} must equal input shape {input.shape}")
    return target


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """-weight (t log(x) + (1 - t) log(1 - x)) for probabilities x in [0, 1], targets t.

    Each log is clamped at -100, as in PyTorch, so x = 0 or 1 gives a finite loss. Derivatives:
    (x - t) / max(x (1 - x), 1e-12) for x, log(1 - x) - log(x) for t.
    """
    op = "binary_cross_entropy"
    reduction = _reduction(op, reduction, size_average, reduce)
    target = _binary_target(op, input, target)
    x, t = input.data, target.data
    if t.dtype != x.dtype:
        raise RuntimeError(f"{op}: expected target of the input's dtype {x.dtype}, found dtype {t.dtype}")
    low, high = _extremes(x) if x.size else (0, 1)
    if not (low >= 0 and high <= 1):  # (a nan fails both)
        raise RuntimeError(f"{op}: all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore"):
        log_x, log_1mx = np.maximum(np.log(x), -100), np.maximum(np.log1p(-x), -100)
        logit = np.log(x) - np.log1p(-x)
    losses = -(t * log_x + (1 - t) * log_1mx)
    scale = 1 if weight is None else _broadcast_weight(op, "weight", weight, input)
    return _loss_node(op, (losses * scale).astype(x.dtype, copy=False), reduction, (input, target),
                      lambda grad: grad * scale * (x - t) / np.maximum(x * (1 - x), 1e-12),
                      lambda grad: grad * scale * -logit,
                      graph_vjp=partial(_binary_cross_entropy_graph, scale))


def _broadcast_weight(op: str, argument: str, weight: Any, input: Tensor) -> np.ndarray:  # noqa: A002
    """`weight` (or `pos_weight`) as a constant array that broadcasts to `input`'s shape."""
    w = _constant(weight, input, op, argument)
    if not broadcasts_to(w.shape, input.shape):
        raise ShapeError(f"{op}: {argument} of shape {tuple(w.shape)} does not broadcast to the input's "
                         f"shape {tuple(input.shape)}")
    return w


def _binary_cross_entropy_graph(scale: Any, grad: Tensor, out: Tensor, input: Tensor,  # noqa: A002
                                target: Tensor) -> tuple[Tensor, Tensor]:
    grad = grad * (new_leaf(scale) if isinstance(scale, np.ndarray) else scale)
    variance = input * (1 - input)
    with np.errstate(divide="ignore", invalid="ignore"):
        grad_input = grad * (input - target) / where(new_leaf(variance.data >= 1e-12), variance, 1e-12)
        return grad_input, grad * ((1 - input).log() - input.log())


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Tensor:
    """-weight (p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), from logits x, targets t.

    `pos_weight` p (broadcast along the last dim) weighs the positive term. Computed as
    (1 - t) x + (1 + (p - 1) t) softplus(-x), finite for any x. Derivatives: (1 - t) -
    (1 + (p - 1) t) sigmoid(-x) for x (sigmoid(x) - t when p = 1), -x + (p - 1) softplus(-x) for t.
    """
    op = "binary_cross_entropy_with_logits"
    reduction = _reduction(op, reduction, size_average, reduce)
    target = _binary_target(op, input, target)
    x, t = input.data, target.data
    if t.dtype.kind != "f":
        raise RuntimeError(f"{op}: result type {x.dtype} can't be cast to the desired output type {t.dtype} "
                           "(the target must be floating point)")
    softplus_neg = np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))  # log(1 + e^-x), stably
    scale = 1 if weight is None else _broadcast_weight(op, "weight", weight, input)
    if pos_weight is None:
        losses = (1 - t) * x + softplus_neg
        vjp_x = lambda grad: grad * scale * (sigmoid_array(x) - t)
        vjp_t = lambda grad: grad * scale * -x
    else:
        p = _broadcast_weight(op, "pos_weight", pos_weight, input)
        log_weight = 1 + (p - 1) * t
        losses = (1 - t) * x + log_weight * softplus_neg
        vjp_x = lambda grad: grad * scale * ((1 - t) - log_weight * sigmoid_array(-x))
        vjp_t = lambda grad: grad * scale * (-x + (p - 1) * softplus_neg)
    out = (losses * scale).astype(t.dtype, copy=False)  # the target's dtype, as PyTorch's
    graph_vjp = partial(_bce_with_logits_graph, scale, None if pos_weight is None else p)
    return _loss_node("bce_with_logits", out, reduction, (input, target), vjp_x, vjp_t, graph_vjp=graph_vjp)


def _bce_with_logits_graph(scale: Any, p: Any, grad: Tensor, out: Tensor, input: Tensor,  # noqa: A002
                           target: Tensor) -> tuple[Tensor, Tensor]:
    grad = grad * (new_leaf(scale) if isinstance(scale, np.ndarray) else scale)
    if p is None:
        return grad * (input.sigmoid() - target), grad * -input
    p = new_leaf(p) if isinstance(p, np.ndarray) else p
    softplus_neg = -input.sigmoid().log()  # log(1 + e^-x)
    return (grad * ((1 - target) - (1 + (p - 1) * target) * (-input).sigmoid()),
            grad * (-input + (p - 1) * softplus_neg))


@autocast_op("kl_div")
def kl_div(input: Tensor, target: Any, size_average: bool | None = None,  # noqa: A002
           reduce: bool | None = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence t (log t - x) per element, for log-probabilities x.

    With `log_target` the target is given as log-probabilities too: e^t (t - x). `reduction=
    "batchmean"` divides the sum by the batch size (the mathematically right KL); "mean"
    divides by the element count, as PyTorch does (with its warning). Derivatives: -t for x
    (-e^t with log_target); log t + 1 - x for t (e^t (t - x + 1) with log_target).
    """
    op = "kl_div"
    if reduction != "batchmean":
        reduction = _reduction(op, reduction, size_average, reduce)
    elif size_average is not None or reduce is not None:
        reduction = _reduction(op, "mean", size_average, reduce)
    _floating(input, op)
    target = _floating(_operand(target, input), op, "target")
    if reduction == "mean":
        warnings.warn("kl_div: reduction 'mean' divides the total loss by both the batch size and the "
                      "support size; 'batchmean' divides only by the batch size, and matches the "
                      "math definition of KL divergence", UserWarning, stacklevel=user_stacklevel())
    losses = (target.exp() * (target - input)) if log_target else (_xlogy_self(target) - target * input)
    if reduction == "batchmean":
        return losses.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(losses, reduction)


def _xlogy_self(t: Tensor) -> Tensor:
    """t log t, 0 where t = 0. Derivative: log t + t / t (nan at 0, as PyTorch's xlogy gives)."""
    x = t.data
    positive = x != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_x = np.where(positive, np.log(np.where(positive, x, 1)), 0)
        return record(x * log_x, "xlogy", (t,), lambda grad: grad * (log_x + x / x),
                      graph_vjp=_xlogy_self_graph)


def _xlogy_self_graph(grad: Tensor, out: Tensor, t: Tensor) -> tuple[Tensor]:
    positive = new_leaf(t.data != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (grad * (where(positive, where(positive, t, 1.0).log(), 0.0) + t / t),)


# --- likelihood, ranking and embedding losses: composed of tensor ops, so every input that is a
# floating tensor gets its gradient from theirs --------------------------------------------------


def gaussian_nll_loss(input: Tensor, target: Any, var: Any, full: bool = False,  # noqa: A002
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 (log(var) + (input - target)**2 / var), plus 0.5 log(2 pi) with `full`; var is
    clamped at eps for the value only (its gradient passes as if unclamped, as PyTorch's). var
    has input's shape, or one dimension fewer, or a 1 in one dimension (shared along it); a
    Python float is one variance for every element."""
    op = "gaussian_nll_loss"
    reduction = _reduction(op, reduction)
    _floating(input, op)
    if isinstance(var, float):
        var = new_leaf(namespace(input.data).full_like(input.data, var))
    target, var = _operand(target, input), _operand(var, input)
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (var.ndim == input.ndim
                  and sum(v for i, v in zip(input.shape, var.shape, strict=True) if i != v) == 1):
            raise ValueError(f"{op}: var is of incorrect size {var.shape} for input of shape "
                             f"{input.shape}")
    if (var.data < 0).any():
        raise ValueError(f"{op}: var has negative entry/entries")
    clamped = var + new_leaf(np.maximum(var.data, eps) - var.data)  # the clamp outside the graph
    losses = 0.5 * (clamped.log() + (input - target) ** 2 / clamped)
    if full:
        losses = losses + 0.5 * float(np.log(2 * np.pi))
    return _reduce(losses, reduction)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Any, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input), or input - target * log(input + eps); `full`
    adds Stirling's term target log target - target + 0.5 log(2 pi target) where target > 1.
    Integer input and target go through the same ops as PyTorch's (so the result is float32)."""
    op = "poisson_nll_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: argument 'input' must be a Tensor, got {type(input).__name__}")
    target = _operand(target, input)
    losses = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:  # (a target that requires grad gets the term's gradient too, as in PyTorch)
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = target * target.log() - target + 0.5 * (2 * np.pi * target).log()
        losses = losses + stirling.masked_fill(new_leaf(target.data <= 1), 0.0)
    return _reduce(losses, reduction)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target (input1 - input2) + margin): target 1 wants input1 ranked higher, -1 lower."""
    reduction = _reduction("margin_ranking_loss", reduction, size_average, reduce)
    target = _operand(target, input1)
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Any, margin: float = 1.0,  # noqa: A002
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1 (a distance, pulled in for
    similar pairs and pushed past the margin for dissimilar ones)."""
    reduction = _reduction("hinge_embedding_loss", reduction, size_average, reduce)
    t = _operand(target, input).data
    zeros = new_leaf(namespace(input.data).zeros_like(input.data))  # (0 * input would be nan at inf)
    losses = (where(new_leaf(t != 1), (margin - input).clamp_min(0), zeros)
              + where(new_leaf(t != -1), input, zeros))
    return _reduce(losses, reduction)


@autocast_op("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Any, size_average: bool | None = None,  # noqa: A002
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)): the logistic loss of targets 1 and -1."""
    op = "soft_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    _floating(input, op)
    target = _operand(target, input)
    _constant(target, input, op, "target")  # PyTorch's kernel gives the target no gradient
    if not broadcasts_to(target.shape, input.shape):
        raise ShapeError(f"{op}: target of shape {target.shape} does not broadcast to the input's shape "
                         f"{input.shape}")
    return _reduce((1 + (-target.to(input.dtype) * input).exp()).log(), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """-(t log sigmoid(x) + (1 - t) log sigmoid(-x)), weighted per class and averaged over the
    classes (the last dimension), then reduced over the samples."""
    reduction = _reduction("multilabel_soft_margin_loss", reduction, size_average, reduce)
    target = _operand(target, input)
    from tensorgrad.nn.activation import logsigmoid  # (nn imports this module)

    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        losses = losses * _operand(weight, input)
    return _reduce(losses.mean(-1), reduction)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1; the cosine
    over the last dimension, with PyTorch's 1e-12 added to each squared norm."""
    op = "cosine_embedding_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    t = _operand(target, input1).data
    if t.ndim > 1 or (input1.ndim, input2.ndim) != (t.ndim + 1,) * 2:
        raise ShapeError(f"{op}: a {t.ndim}-D target expects {t.ndim + 1}-D inputs (0-D or 1-D targets "
                         f"only), but got inputs of shapes {input1.shape} and {input2.shape}")
    dim = input1.ndim - 1
    product = (input1 * input2).sum(dim)
    norms = (((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)).sqrt()
    cos = product / norms
    zeros = 0.0 * cos
    losses = (where(new_leaf(t == 1), 1 - cos, zeros)
              + where(new_leaf(t == -1), (cos - margin).clamp_min(0), zeros))
    return _reduce(losses, reduction)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the p-norm distance of
    `pairwise_distance`; `swap` uses the closer of d(anchor, negative) and d(positive, negative)."""
    from tensorgrad.nn.normalization import pairwise_distance  # (nn imports this module)

    reduction = _reduction("triplet_margin_loss", reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"triplet_margin_loss: the anchor, positive, and negative tensors are expected "
                           f"to have the same number of dimensions, but got: anchor {anchor.ndim}D, "
                           f"positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    to_positive = pairwise_distance(anchor, positive, p, eps)
    to_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        to_negative = to_negative.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + to_positive - to_negative).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) for any distance function d
    (default `pairwise_distance`, the Euclidean one); `swap` uses the closer of d(anchor,
    negative) and d(positive, negative). Gradient: through d and those ops."""
    from tensorgrad.nn.normalization import pairwise_distance  # (nn imports this module)

    if reduction not in REDUCTIONS:
        raise ValueError(f"triplet_margin_with_distance_loss: {reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"triplet_margin_with_distance_loss: the anchor, positive, and negative tensors "
                           f"are expected to have the same number of dimensions, but got: anchor "
                           f"{anchor.ndim}D, positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    to_positive = distance(anchor, positive)
    to_negative = distance(anchor, negative)
    if swap:
        to_negative = to_negative.minimum(distance(positive, negative))
    return _reduce((margin + to_positive - to_negative).clamp_min(0), reduction)


# --- multi-class margin losses ------------------------------------------------------------------


def _class_index_target(op: str, input: Tensor, target: Any) -> np.ndarray:  # noqa: A002
    """The int64 array of a class-index target (PyTorch refuses other dtypes)."""
    labels = _labels(op, target, input)
    if labels.dtype != np.int64:
        raise RuntimeError(f"{op}: expected scalar type Long but found {labels.dtype} for target "
                           f"(convert with .long())")
    return labels


@autocast_op("multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Any, p: int = 1, margin: float = 1.0,  # noqa: A002
                      weight: Any = None, size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """sum over classes j != y of w[y] * max(0, margin - x[y] + x[j]) ** p, divided by the number
    of classes, per sample (y its target class). Gradient: through gather, relu and the power;
    the class `weight` is a constant."""
    op = "multi_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 supported, got p={p}")
    if isinstance(weight, Tensor) and weight.ndim != 1:  # checked first, as PyTorch does
        raise ValueError(f"{op}: weight must be one-dimensional, got shape {tuple(weight.shape)}")
    x = _floating(input, op)
    labels = _class_index_target(op, x, target)
    if x.ndim > 2:
        raise RuntimeError(f"{op}: expected a 1-D or 2-D input (N, C), got shape {tuple(x.shape)}")
    rows = x if x.ndim == 2 else x.reshape(1, -1)
    n, classes = rows.shape
    if labels.size != n or labels.ndim > 1:
        raise RuntimeError(f"{op}: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got "
                           f"{list(labels.shape)}. Input shape {tuple(x.shape)}")
    flat = labels.reshape(n, 1)
    if n and (int(flat.min()) < 0 or int(flat.max()) >= classes):
        raise RuntimeError(f"{op}: target out of range: class indices must be in [0, {classes}), got "
                           f"{int(flat.min())} to {int(flat.max())}")
    z = (margin - rows.gather(1, new_leaf(flat))) + rows
    terms = z.relu() if p == 1 else z.relu() ** 2
    others = namespace(x.data).arange(classes) != flat  # the target class itself is left out
    scale = others.astype(x.dtype) / x.dtype.type(classes)
    weights = _constant(weight, x, op)
    if weights is not None:
        if isinstance(weight, Tensor) and weight.dtype != x.dtype:
            raise RuntimeError(f"{op}: expected scalar type {x.dtype} but found {weight.dtype} for weight")
        if weights.size != classes:
            raise RuntimeError(f"{op}: inconsistent weight size, expected {classes} but got "
                               f"{list(weights.shape)}")
        scale = scale * weights.reshape(-1)[flat].astype(x.dtype)
    losses = (terms * new_leaf(scale)).sum(1)
    return _reduce(losses.reshape(labels.shape), reduction)


@autocast_op("multilabel_margin_loss")
def multilabel_margin_loss(input: Tensor, target: Any, size_average: bool | None = None,  # noqa: A002
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """sum over target classes j and non-target classes k of max(0, 1 - (x[j] - x[k])), divided
    by the number of classes, per sample. The targets of a sample are its target row up to the
    first -1. Gradient: through gather and relu."""
    op = "multilabel_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    x = _floating(input, op)
    labels = _class_index_target(op, x, target)
    if x.ndim > 2 or labels.shape != tuple(x.shape):
        raise RuntimeError(f"{op}: inconsistent target size: {list(labels.shape)} for input of size: "
                           f"{list(x.shape)}")
    rows = x if x.ndim == 2 else x.reshape(1, -1)
    n, classes = rows.shape
    flat = labels.reshape(n, classes)
    if flat.size and (int(flat.min()) < -1 or int(flat.max()) >= classes):
        raise RuntimeError(f"{op}: argument #2 'target' is out of range: values must be in [-1, {classes}), "
                           f"got {int(flat.min())} to {int(flat.max())}")
    xp = namespace(x.data)
    listed = xp.cumprod(flat != -1, axis=1).astype(bool)  # the slots before the first -1
    chosen = xp.where(listed, flat, 0)
    is_target = ((chosen[:, :, None] == xp.arange(classes)) & listed[:, :, None]).any(axis=1)
    pairs = listed[:, :, None] & ~is_target[:, None, :]  # (target slot, non-target class)
    gaps = 1 - rows.gather(1, new_leaf(chosen)).unsqueeze(2) + rows.unsqueeze(1)
    scale = pairs.astype(x.dtype) / x.dtype.type(classes)
    losses = (gaps.relu() * new_leaf(scale)).sum((1, 2))
    return _reduce(losses if x.ndim == 2 else losses.reshape(()), reduction)
