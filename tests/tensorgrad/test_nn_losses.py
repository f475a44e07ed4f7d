"""Loss functions and loss modules against PyTorch, in float64, over the options that change the math.

Each case builds its inputs once; floating ones (logits, probabilities, targets) require grad,
while class indices and class weights are constants. Values and the gradient of every floating
input are compared with `torch.nn.functional` (on the CPU, and on a GPU where there is one), and
finite differences check the same gradients.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F  # noqa: N812 - PyTorch's spelling
from tensorgrad import nn
from tensorgrad.device import to_numpy

RNG = np.random.default_rng(12)


def logits(*shape):
    return RNG.standard_normal(shape)


def probabilities(*shape):
    return RNG.uniform(0.05, 0.95, shape)


def distribution(*shape, dim=1):
    p = RNG.uniform(0.1, 1.0, shape)
    return p / p.sum(axis=dim, keepdims=True)


def labels(high, *shape, ignore=None, at=()):
    out = RNG.integers(0, high, shape)
    for index in at:
        out[index] = ignore
    return out


@dataclass
class Case:
    name: str
    call: Callable[..., Any]  # call(F, **inputs) -> loss
    floats: dict[str, np.ndarray]  # differentiated
    constants: dict[str, np.ndarray]  # class indices and weights


CASES = [
    *[
        Case(
            f"cross_entropy {r}",
            lambda F, x, y, r=r: F.cross_entropy(x, y, reduction=r),
            {"x": logits(5, 4)},
            {"y": labels(4, 5)},
        )
        for r in ("mean", "sum", "none")
    ],
    Case("cross_entropy (C,)", lambda F, x, y: F.cross_entropy(x, y), {"x": logits(6)}, {"y": np.array(3)}),
    Case(
        "cross_entropy (N,C,d1,d2)",
        lambda F, x, y: F.cross_entropy(x, y),
        {"x": logits(2, 3, 4, 2)},
        {"y": labels(3, 2, 4, 2)},
    ),
    *[
        Case(
            f"cross_entropy weight {r}",
            lambda F, x, y, w, r=r: F.cross_entropy(x, y, weight=w, reduction=r),
            {"x": logits(6, 4)},
            {"y": labels(4, 6), "w": RNG.uniform(0.2, 2, 4)},
        )
        for r in ("mean", "sum", "none")
    ],
    Case(
        "cross_entropy ignore_index -100",
        lambda F, x, y, w: F.cross_entropy(x, y, weight=w),
        {"x": logits(6, 4)},
        {"y": labels(4, 6, ignore=-100, at=(1, 4)), "w": RNG.uniform(0.2, 2, 4)},
    ),
    Case(
        "cross_entropy ignore_index 2 none",
        lambda F, x, y: F.cross_entropy(x, y, ignore_index=2, reduction="none"),
        {"x": logits(6, 4)},
        {"y": np.array([0, 2, 1, 2, 3, 1])},
    ),
    *[
        Case(
            f"cross_entropy label_smoothing {r}",
            lambda F, x, y, w, r=r: F.cross_entropy(
                x, y, weight=w, ignore_index=0, reduction=r, label_smoothing=0.2
            ),
            {"x": logits(7, 5)},
            {"y": np.array([0, 1, 2, 3, 4, 0, 2]), "w": RNG.uniform(0.2, 2, 5)},
        )
        for r in ("mean", "sum", "none")
    ],
    Case(
        "cross_entropy label_smoothing (N,C,d)",
        lambda F, x, y: F.cross_entropy(x, y, label_smoothing=0.3),
        {"x": logits(3, 4, 5)},
        {"y": labels(4, 3, 5)},
    ),
    *[
        Case(
            f"cross_entropy probabilities {r}",
            lambda F, x, t, r=r: F.cross_entropy(x, t, reduction=r),
            {"x": logits(5, 4), "t": distribution(5, 4)},
            {},
        )
        for r in ("mean", "sum", "none")
    ],
    Case(
        "cross_entropy probabilities weight smoothing",
        lambda F, x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.1),
        {"x": logits(5, 4), "t": distribution(5, 4)},
        {"w": RNG.uniform(0.2, 2, 4)},
    ),
    Case(
        "cross_entropy probabilities (N,C,d)",
        lambda F, x, t: F.cross_entropy(x, t),
        {"x": logits(2, 3, 4), "t": distribution(2, 3, 4)},
        {},
    ),
    Case(
        "cross_entropy probabilities (C,)",
        lambda F, x, t: F.cross_entropy(x, t, reduction="none"),
        {"x": logits(5), "t": distribution(5, dim=0)},
        {},
    ),
    Case(
        "cross_entropy size_average=False",
        lambda F, x, y: F.cross_entropy(x, y, size_average=False),
        {"x": logits(4, 3)},
        {"y": labels(3, 4)},
    ),
    Case(
        "cross_entropy reduce=False",
        lambda F, x, y: F.cross_entropy(x, y, reduce=False),
        {"x": logits(4, 3)},
        {"y": labels(3, 4)},
    ),
    *[
        Case(
            f"nll_loss {r}",
            lambda F, x, y, w, r=r: F.nll_loss(x, y, weight=w, ignore_index=1, reduction=r),
            {"x": logits(6, 4)},
            {"y": np.array([0, 1, 2, 3, 3, 1]), "w": RNG.uniform(0.2, 2, 4)},
        )
        for r in ("mean", "sum", "none")
    ],
    Case(
        "nll_loss (N,C,d)", lambda F, x, y: F.nll_loss(x, y), {"x": logits(2, 3, 5)}, {"y": labels(3, 2, 5)}
    ),
    Case("nll_loss (C,)", lambda F, x, y: F.nll_loss(x, y), {"x": logits(4)}, {"y": np.array(2)}),
    *[
        Case(
            f"binary_cross_entropy {r}",
            lambda F, x, t, r=r: F.binary_cross_entropy(x, t, reduction=r),
            {"x": probabilities(4, 3), "t": probabilities(4, 3)},
            {},
        )
        for r in ("mean", "sum", "none")
    ],
    Case(
        "binary_cross_entropy weight",
        lambda F, x, t, w: F.binary_cross_entropy(x, t, weight=w),
        {"x": probabilities(4, 3), "t": probabilities(4, 3)},
        {"w": RNG.uniform(0.2, 2, (4, 3))},
    ),
    Case(
        "binary_cross_entropy_with_logits weight pos_weight",
        lambda F, x, t, w, p: F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=p),
        {"x": logits(4, 3), "t": probabilities(4, 3)},
        {"w": RNG.uniform(0.2, 2, 3), "p": RNG.uniform(0.2, 3, 3)},
    ),
    Case(
        "binary_cross_entropy_with_logits sum",
        lambda F, x, t: F.binary_cross_entropy_with_logits(x, t, reduction="sum"),
        {"x": logits(4, 3), "t": probabilities(4, 3)},
        {},
    ),
    *[
        Case(
            f"{name} {r}",
            lambda F, x, t, name=name, r=r: getattr(F, name)(x, t, reduction=r),
            {"x": logits(4, 3), "t": logits(4, 3)},
            {},
        )
        for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
        for r in ("mean", "sum", "none")
    ],
    *[
        Case(
            f"{name} weight {r}",
            lambda F, x, t, w, name=name, r=r: getattr(F, name)(x, t, reduction=r, weight=w),
            {"x": logits(4, 3), "t": logits(4, 3), "w": RNG.uniform(0.2, 2, (4, 3))},
            {},
        )
        for name in ("mse_loss", "l1_loss", "huber_loss")
        for r in ("mean", "sum")
    ],
    Case(
        "smooth_l1_loss beta=0.5",
        lambda F, x, t: F.smooth_l1_loss(x, t, beta=0.5),
        {"x": logits(5, 3), "t": logits(5, 3)},
        {},
    ),
    Case(
        "smooth_l1_loss beta=0",
        lambda F, x, t: F.smooth_l1_loss(x, t, beta=0.0),
        {"x": logits(5, 3), "t": logits(5, 3)},
        {},
    ),
    Case(
        "huber_loss delta=0.7",
        lambda F, x, t: F.huber_loss(x, t, delta=0.7),
        {"x": logits(5, 3), "t": logits(5, 3)},
        {},
    ),
    Case(
        "mse_loss broadcast target", lambda F, x, t: F.mse_loss(x, t), {"x": logits(4, 3), "t": logits(3)}, {}
    ),
    *[
        Case(
            f"kl_div {r}",
            lambda F, x, t, r=r: F.kl_div(x, t, reduction=r),
            {"x": np.log(distribution(4, 3)), "t": distribution(4, 3)},
            {},
        )
        for r in ("batchmean", "mean", "sum", "none")
    ],
    Case(
        "kl_div log_target",
        lambda F, x, t: F.kl_div(x, t, reduction="batchmean", log_target=True),
        {"x": np.log(distribution(4, 3)), "t": np.log(distribution(4, 3))},
        {},
    ),
]


def _run(case: Case, lib: Any, functional: Any, as_tensor: Callable) -> tuple[np.ndarray, dict]:
    floats = {k: as_tensor(v, True) for k, v in case.floats.items()}
    constants = {k: as_tensor(v, False) for k, v in case.constants.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # broadcast targets and kl_div's 'mean'
        loss = case.call(functional, **floats, **constants)
    (loss * as_tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)), False)).sum().backward()
    grads = {
        k: (t.grad.numpy() if hasattr(t.grad, "numpy") else to_numpy(t.grad)) for k, t in floats.items()
    }
    return np.asarray(loss.detach().cpu().numpy()), grads


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_loss_values_and_gradients_match_pytorch(case, device):
    torch = pytest.importorskip("torch")
    ours, our_grads = _run(case, tg, F, lambda a, g: tg.tensor(a, requires_grad=g and a.dtype.kind == "f",
                                                               device=device))
    theirs, their_grads = _run(
        case,
        torch,
        torch.nn.functional,
        lambda a, g: torch.tensor(a, requires_grad=g and a.dtype.kind == "f"),
    )
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for name in case.floats:
        np.testing.assert_allclose(our_grads[name], their_grads[name], rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_loss_gradients_match_finite_differences(case):
    floats = [tg.tensor(v, requires_grad=True) for v in case.floats.values()]
    constants = {k: tg.tensor(v) for k, v in case.constants.items()}

    def loss(*tensors):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return case.call(F, **dict(zip(case.floats, tensors)), **constants)

    assert tg.gradcheck(loss, floats)


def test_the_common_cross_entropy_stays_one_float32_node():
    x = tg.randn(8, 5, requires_grad=True)
    loss = F.cross_entropy(x, tg.tensor([0, 1, 2, 3, 4, 0, 1, 2]))
    assert loss.op == "cross_entropy" and loss.parents == (x,) and loss.dtype == np.float32
    for options in ({"weight": tg.ones(5)}, {"label_smoothing": 0.1}, {"ignore_index": 1}):
        assert F.cross_entropy(x, tg.tensor([0, 1, 2, 3, 4, 0, 1, 2]), **options).dtype == np.float32


def test_all_samples_ignored_gives_nan_for_the_mean_and_zero_for_the_sum():
    x = tg.randn(3, 4, dtype=tg.float64, requires_grad=True)
    y = tg.tensor([-100, -100, -100])
    assert np.isnan(F.cross_entropy(x, y).item()) and np.isnan(F.nll_loss(x, y).item())
    empty = (tg.zeros(0, 4), tg.zeros(0, dtype=tg.int64))
    assert np.isnan(F.cross_entropy(*empty).item()) and F.cross_entropy(*empty, reduction="sum").item() == 0
    loss = F.cross_entropy(x, y, reduction="sum")
    loss.backward()
    assert loss.item() == 0 and not x.grad.any()


@pytest.mark.parametrize("options", [{}, {"label_smoothing": 0.3}, {"weight": [1.0, 2.0, 3.0, 4.0]},
                                     {"weight": [1.0, 2.0, 3.0, 4.0], "label_smoothing": 0.1}])
def test_all_samples_ignored_gives_nan_and_a_zero_gradient_as_pytorch(options):
    torch = pytest.importorskip("torch")
    values = np.array([[0.3, -1.2, 0.5, 0.1], [1.0, 0.0, -0.5, 2.0]])
    results = []
    for m in (tg, torch):
        x = m.tensor(values, requires_grad=True)
        kwargs = {k: m.tensor(np.array(v)) if k == "weight" else v for k, v in options.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no numpy warning reaches the user
            loss = m.nn.functional.cross_entropy(x, m.tensor([1, 1]), ignore_index=1, **kwargs)
            loss.backward()
        results.append((loss.item(), np.asarray(x.grad if m is tg else x.grad.numpy())))
    (ours, our_grad), (theirs, their_grad) = results
    assert np.isnan(ours) and np.isnan(theirs)
    np.testing.assert_array_equal(our_grad, their_grad)
    assert not our_grad.any()


def test_probability_targets_give_a_learned_class_weight_its_gradient():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    logits, targets = rng.standard_normal((3, 5)), rng.dirichlet(np.ones(5), 3)
    weight = rng.uniform(0.5, 1.5, 5)
    grads = []
    for m in (tg, torch):
        w = m.tensor(weight, requires_grad=True)
        loss = m.nn.functional.cross_entropy(m.tensor(logits), m.tensor(targets), weight=w,
                                             label_smoothing=0.2)
        loss.backward()
        grads.append(np.asarray(w.grad if m is tg else w.grad.numpy()))
    np.testing.assert_allclose(*grads, rtol=1e-12)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (
            lambda: F.cross_entropy(tg.ones(2, 3), tg.ones(2)),
            RuntimeError,
            ["cross_entropy", "class indices", "float32"],
        ),
        (
            lambda: F.cross_entropy(tg.ones(2, 3), tg.tensor([0, 1, 2])),
            ValueError,
            ["cross_entropy", "(3,)", "(2, 3)"],
        ),
        (
            lambda: F.cross_entropy(tg.ones(2, 3, 4), tg.zeros(2, 3, dtype=tg.int64)),
            RuntimeError,
            ["cross_entropy", "(2, 3)", "(2, 4)"],
        ),
        (
            lambda: F.cross_entropy(tg.ones(2, 3), tg.tensor([0, 3])),
            IndexError,
            ["cross_entropy", "3 classes"],
        ),
        (lambda: F.cross_entropy(tg.ones(2, 3), tg.tensor([0, -1])), IndexError, ["cross_entropy", "-1"]),
        (
            lambda: F.cross_entropy(tg.ones(2, 3), tg.tensor([0, 1]), weight=tg.ones(4)),
            RuntimeError,
            ["cross_entropy", "weight", "(4,)", "3 classes"],
        ),
        (
            lambda: F.cross_entropy(tg.ones(2, 3), tg.tensor([0, 1]), label_smoothing=1.5),
            RuntimeError,
            ["label_smoothing", "1.5"],
        ),
        (
            lambda: F.cross_entropy(tg.ones(2, 3), tg.rand(2, 3), ignore_index=1),
            RuntimeError,
            ["ignore_index"],
        ),
        (
            lambda: F.cross_entropy(tg.ones(2, 3), tg.tensor([0, 1]), reduction="avg"),
            ValueError,
            ["'avg'", "reduction"],
        ),
        (
            lambda: F.cross_entropy(tg.tensor([[1, 2]]), tg.tensor([0])),
            NotImplementedError,
            ["cross_entropy", "int64"],
        ),
        (lambda: F.nll_loss(tg.ones(2, 3), tg.tensor([0.5, 1.0])), RuntimeError, ["nll_loss", "float32"]),
        (
            lambda: F.binary_cross_entropy(tg.tensor([1.5]), tg.tensor([1.0])),
            RuntimeError,
            ["between 0 and 1"],
        ),
        (lambda: F.binary_cross_entropy(tg.rand(3), tg.rand(2)), ValueError, ["(2,)", "(3,)"]),
        (lambda: F.binary_cross_entropy_with_logits(tg.rand(3), tg.rand(2)), ValueError, ["(2,)", "(3,)"]),
        (
            lambda: F.smooth_l1_loss(tg.rand(3), tg.rand(3), beta=-1.0),
            RuntimeError,
            ["smooth_l1_loss", "beta"],
        ),
        (lambda: F.huber_loss(tg.rand(3), tg.rand(3), delta=0.0), RuntimeError, ["huber_loss", "delta"]),
        (lambda: F.kl_div(tg.rand(3), tg.tensor([1, 0, 0])), NotImplementedError, ["kl_div", "int64"]),
        (
            lambda: F.mse_loss(tg.rand(3), tg.rand(3), weight=tg.rand(2)),
            ValueError,
            ["mse_loss", "(2,)", "(3,)"],
        ),
        (lambda: F.l1_loss(tg.rand(3), tg.rand(2)), ValueError, ["(3,)", "(2,)"]),
    ],
    ids=lambda v: None,
)
def test_bad_arguments_raise_pytorchs_exception_naming_op_and_shapes(call, error, words):
    with pytest.raises(error) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        call()
    for word in words:
        assert word in str(info.value)


def test_broadcast_targets_and_kl_div_mean_warn_as_pytorch_does():
    with pytest.warns(UserWarning, match="target size"):
        F.mse_loss(tg.rand(3, 2), tg.rand(2))
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(tg.rand(3).log(), tg.rand(3))


# --- loss modules ---------------------------------------------------------------------------------


MODULE_CASES = [
    (
        "CrossEntropyLoss",
        {"weight": np.array([0.5, 1.0, 2.0]), "ignore_index": 1, "label_smoothing": 0.1},
        logits(5, 3),
        np.array([0, 1, 2, 2, 0]),
    ),
    ("CrossEntropyLoss", {"reduction": "sum"}, logits(5, 3), distribution(5, 3)),
    (
        "NLLLoss",
        {"weight": np.array([0.5, 1.0, 2.0]), "reduction": "none"},
        logits(4, 3),
        np.array([0, 1, 2, 2]),
    ),
    ("MSELoss", {"reduction": "sum"}, logits(4, 3), logits(4, 3)),
    ("L1Loss", {}, logits(4, 3), logits(4, 3)),
    (
        "BCEWithLogitsLoss",
        {"weight": RNG.uniform(0.5, 2, 3), "pos_weight": RNG.uniform(0.5, 2, 3)},
        logits(4, 3),
        probabilities(4, 3),
    ),
]


@pytest.mark.parametrize(
    ("name", "options", "x", "target"), MODULE_CASES, ids=lambda v: v if isinstance(v, str) else ""
)
def test_loss_modules_match_pytorch_with_their_state_dict(name, options, x, target, device):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, name)(
        **{k: tg.tensor(v, device=device) if isinstance(v, np.ndarray) else v for k, v in options.items()}
    )
    theirs = getattr(torch.nn, name)(
        **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()}
    )
    assert list(ours.state_dict()) == list(theirs.state_dict())  # class weights are buffers
    x_ours, x_theirs = tg.tensor(x, requires_grad=True, device=device), torch.tensor(x, requires_grad=True)
    out, expected = ours(x_ours, tg.tensor(target, device=device)), theirs(x_theirs, torch.tensor(target))
    np.testing.assert_allclose(to_numpy(out.data), expected.detach().numpy(), rtol=1e-10)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(to_numpy(x_ours.grad), x_theirs.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert name in repr(ours)
    ours.double()  # the weight buffers cast with the module
    ours.load_state_dict(theirs.state_dict())


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8", "int64"])
def test_class_index_tensors_must_be_long_or_byte_as_in_pytorch(loss, dtype):
    torch = pytest.importorskip("torch")
    logits = np.random.default_rng(0).standard_normal((3, 4))
    labels = np.array([0, 3, 2])
    def ours():
        return getattr(F, loss)(tg.tensor(logits), tg.tensor(labels, dtype=getattr(tg, dtype)))

    def theirs():
        return getattr(torch.nn.functional, loss)(torch.tensor(logits),
                                                  torch.tensor(labels, dtype=getattr(torch, dtype)))

    if dtype in ("int32", "int16"):
        with pytest.raises(RuntimeError, match=rf"{loss}: .*int64 \(long\) or uint8, got {dtype}"):
            ours()
        with pytest.raises(RuntimeError, match="Long or Byte"):
            theirs()
    else:
        np.testing.assert_allclose(ours().item(), theirs().item(), rtol=1e-12)


def test_mse_loss_is_one_node_in_the_dtype_of_its_broadcast_operands_as_pytorchs():
    """PyTorch's F.mse_loss broadcasts input and target first, so a 0-d float64 target makes a
    float64 loss, and the loss is one MseLossBackward0 node whose next functions are the two."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tg, torch):
        x = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
        target = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the size warning, the same in both)
            loss = lib.nn.functional.mse_loss(x, target)
        node = (loss.grad_fn.name(), len(loss.grad_fn.next_functions))
        loss.backward()
        results.append((str(loss.dtype), loss.item(), *node, to_numpy(x.grad).tolist(), float(target.grad),
                        str(x.grad.dtype)))
    ours, theirs = results
    assert ours[0] == theirs[0].replace("torch.", "") == "float64"
    assert ours[2:4] == theirs[2:4] == ("MseLossBackward0", 2)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-6)
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-12)
    assert ours[6] == theirs[6].replace("torch.", "") == "float32"
