"""The op table that drives tensorgrad's gradient tests (`test_tensor_gradients.py`).

Each `Case` is one expression, written once against a module `m` that is either `tensorgrad`
or `torch` (`m.maximum`, `m.cat`, `m.float64`, methods on the tensors), so the very same
expression runs in both. `ref` is a NumPy float64 reference for the forward values, used
whether or not PyTorch is installed. `domains` says how to sample each input so that the
points sit away from kinks (relu, abs, clamp, ties of max/maximum) and domain edges (log,
sqrt, division), where finite differences and gradients legitimately disagree.

Layouts: every case runs on contiguous inputs, and where an input has two or more dimensions
also with that input stored transposed (a non-contiguous leaf), and where an input's first
dimension is larger than one also as a stride-0 view (the leaf has size 1 there and the
expression sees `leaf.expand(shape)`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Case:
    """One expression of the table: its name, inputs' shapes, the expression and its references."""

    name: str
    shapes: tuple[tuple[int, ...], ...]
    fn: Callable  # fn(m, *inputs), m is tensorgrad or torch
    ref: Callable  # ref(*float64 arrays) -> the expected forward value
    domains: tuple[str, ...] = ()  # one per input; "real" when left out
    torch_fn: Callable | None = None  # only where torch spells the op differently
    layouts: tuple[str, ...] = ("contiguous", "transposed", "expanded")

    def domain(self, i: int) -> str:
        return self.domains[i] if i < len(self.domains) else "real"


def sample(rng: np.random.Generator, shape: tuple[int, ...], domain: str) -> np.ndarray:
    """Float64 values of `shape` drawn from `domain` (a fresh, writable array, also for shape ())."""
    return np.array(_draw(rng, shape, domain), dtype=np.float64)


def _draw(rng: np.random.Generator, shape: tuple[int, ...], domain: str):
    if domain == "real":
        return rng.standard_normal(shape)
    if domain == "positive":  # log, sqrt, the base of a ** b, a denominator
        return rng.uniform(0.5, 2.0, shape)
    if domain == "nonzero":  # at least 0.2 away from the kink of abs and relu
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 1.5, shape)
    if domain == "grid":  # odd multiples of 0.05: never 0, +-0.5 or a value of "grid0"
        return rng.integers(-15, 15, shape) * 0.1 + 0.05
    if domain == "grid0":  # multiples of 0.1: at least 0.05 from every "grid" value
        return rng.integers(-15, 15, shape) * 0.1
    if domain == "unit":  # probabilities, away from 0 and 1 (targets of a binary cross-entropy)
        return rng.uniform(0.1, 0.9, shape)
    if domain == "distinct":  # no two elements, nor their absolute values, within 0.06; none near 0
        n = int(np.prod(shape))
        return ((rng.permutation(n) - n // 2 + 0.3) * 0.1).reshape(shape)
    raise ValueError(domain)


# Fixed conditions, masks and indices: the same arrays go to tensorgrad and to torch.
COND_34 = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
COND_4 = np.array([True, False, False, True])
LABELS_5 = np.array([3, 0, 4, 4, 1])  # class indices for (5, C) logits, C >= 5
MASK_34 = np.array([[True, False, True, False], [False, False, True, True], [True, False, False, True]])


def _binary_cases() -> list[Case]:
    pairings = [((3, 4), (4,)), ((4,), (3, 4)), ((2, 1, 4), (3, 1)), ((1,), (5, 5)),
                ((2, 3, 4), (2, 1, 1)), ((), (3, 4)), ((3, 4), ()), ((), ())]
    ops = [
        ("add", lambda m, a, b: a + b, np.add, ()),
        ("sub", lambda m, a, b: a - b, np.subtract, ()),
        ("mul", lambda m, a, b: a * b, np.multiply, ()),
        ("div", lambda m, a, b: a / b, np.divide, ("real", "nonzero")),
        ("pow", lambda m, a, b: a ** b, np.power, ("positive", "real")),
        ("maximum", lambda m, a, b: m.maximum(a, b), np.maximum, ("grid", "grid0")),
        ("minimum", lambda m, a, b: m.minimum(a, b), np.minimum, ("grid0", "grid")),
        ("method_add", lambda m, a, b: a.add(b).mul(b).sub(a).div(b * b + 1.0),
         lambda a, b: ((a + b) * b - a) / (b * b + 1.0), ()),
    ]
    cases = []
    for name, fn, ref, domains in ops:
        for sa, sb in pairings:
            cases.append(Case(f"{name}{sa}&{sb}", (sa, sb), fn, ref, domains))
    return cases


def _scalar_cases() -> list[Case]:
    """Python numbers on either side, and unary minus."""
    s = ((3, 4),)
    return [
        Case("t+2.5", s, lambda m, a: a + 2.5, lambda a: a + 2.5),
        Case("2.5+t", s, lambda m, a: 2.5 + a, lambda a: 2.5 + a),
        Case("t-2.5", s, lambda m, a: a - 2.5, lambda a: a - 2.5),
        Case("2.5-t", s, lambda m, a: 2.5 - a, lambda a: 2.5 - a),
        Case("t*-1.5", s, lambda m, a: a * -1.5, lambda a: a * -1.5),
        Case("3*t", s, lambda m, a: 3 * a, lambda a: 3 * a),
        Case("t/1.5", s, lambda m, a: a / 1.5, lambda a: a / 1.5),
        Case("1.5/t", s, lambda m, a: 1.5 / a, lambda a: 1.5 / a, ("nonzero",)),
        Case("t**2", s, lambda m, a: a ** 2, lambda a: a ** 2),
        Case("t**3", s, lambda m, a: a ** 3, lambda a: a ** 3),
        Case("t**0.5", s, lambda m, a: a ** 0.5, np.sqrt, ("positive",)),
        Case("t**-1.5", s, lambda m, a: a ** -1.5, lambda a: a ** -1.5, ("positive",)),
        Case("2**t", s, lambda m, a: 2.0 ** a, lambda a: 2.0 ** a),
        Case("-t", s, lambda m, a: -a, np.negative),
        Case("0-d**t", ((), (3, 4)), lambda m, a, b: a ** b, np.power, ("positive",)),
        Case("maximum(t,0.3)", s, lambda m, a: m.maximum(a, 0.3), lambda a: np.maximum(a, 0.3),
             ("grid",), torch_fn=lambda torch, a: torch.maximum(a, torch.tensor(0.3, dtype=a.dtype))),
        Case("minimum(-0.3,t)", s, lambda m, a: m.minimum(-0.3, a), lambda a: np.minimum(-0.3, a),
             ("grid",), torch_fn=lambda torch, a: torch.minimum(torch.tensor(-0.3, dtype=a.dtype), a)),
        Case("where(c,t,0.0)", s, lambda m, a: m.where(m.tensor(COND_34), a, 0.0),
             lambda a: np.where(COND_34, a, 0.0)),
        Case("where(c,1.0,t)", s, lambda m, a: m.where(m.tensor(COND_34), 1.0, a),
             lambda a: np.where(COND_34, 1.0, a)),
    ]


def _where_cases() -> list[Case]:
    def fn(m, a, b):
        return m.where(m.tensor(COND_4), a, b)

    def ref(a, b):
        return np.where(COND_4, a, b)

    return [Case(f"where{sa}&{sb}", (sa, sb), fn, ref)
            for sa, sb in [((3, 4), (4,)), ((4,), (3, 4)), ((2, 3, 1), (3, 4)), ((), (4,))]]


def _unary_cases() -> list[Case]:
    ops = [
        ("exp", lambda m, a: a.exp(), np.exp, "real"),
        ("log", lambda m, a: a.log(), np.log, "positive"),
        ("sqrt", lambda m, a: a.sqrt(), np.sqrt, "positive"),
        ("abs", lambda m, a: a.abs(), np.abs, "nonzero"),
        ("tanh", lambda m, a: a.tanh(), np.tanh, "real"),
        ("sigmoid", lambda m, a: a.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), "real"),
        ("relu", lambda m, a: a.relu(), lambda a: np.maximum(a, 0), "nonzero"),
        ("clamp", lambda m, a: a.clamp(min=-0.5, max=0.5), lambda a: np.clip(a, -0.5, 0.5), "grid"),
        ("clamp_min", lambda m, a: a.clamp(min=-0.5), lambda a: np.maximum(a, -0.5), "grid"),
        ("clamp_max", lambda m, a: a.clamp(max=0.5), lambda a: np.minimum(a, 0.5), "grid"),
        ("m.exp", lambda m, a: m.exp(a), np.exp, "real"),
        ("m.log", lambda m, a: m.log(a), np.log, "positive"),
        ("m.abs", lambda m, a: m.abs(a), np.abs, "nonzero"),
        ("m.relu", lambda m, a: m.relu(a), lambda a: np.maximum(a, 0), "nonzero"),
        ("m.sigmoid", lambda m, a: m.sigmoid(a), lambda a: 1 / (1 + np.exp(-a)), "real"),
    ]
    cases = []
    for name, fn, ref, domain in ops:
        for shape in [(3, 4), (2, 3, 4), ()]:
            cases.append(Case(f"{name}{shape}", (shape,), fn, ref, (domain,)))
    return cases


def _matmul_cases() -> list[Case]:
    pairs = [((4,), (4,)), ((4,), (4, 3)), ((3, 4), (4,)), ((3, 4), (4, 2)), ((2, 3, 4), (2, 4, 5)),
             ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((3, 4), (2, 4, 5))]
    cases = [Case(f"matmul{sa}@{sb}", (sa, sb), lambda m, a, b: a @ b, np.matmul) for sa, sb in pairs]
    cases.append(Case("m.matmul(3,4)@(4,2)", ((3, 4), (4, 2)), lambda m, a, b: m.matmul(a, b), np.matmul))
    cases.append(Case("method_matmul(3,4)@(4,2)", ((3, 4), (4, 2)), lambda m, a, b: a.matmul(b), np.matmul))
    cases.append(Case("(a.T@b).tanh()", ((4, 3), (4, 2)), lambda m, a, b: (a.T @ b).tanh(),
                      lambda a, b: np.tanh(a.T @ b)))
    return cases


def _reduction_cases() -> list[Case]:
    shape = (2, 3, 4)
    dims = [None, 1, -1, (0, 2), (-1, 0)]
    cases = []
    def all_dims(d, ndim):  # torch's amax/logsumexp spell "every dimension" differently
        return tuple(range(ndim)) if d is None else d

    for d in dims:
        for k in (False, True):
            tag = f"(dim={d},keepdim={k})"
            cases += [
                Case("sum" + tag, (shape,), lambda m, a, d=d, k=k: a.sum(dim=d, keepdim=k),
                     lambda a, d=d, k=k: a.sum(axis=d, keepdims=k)),
                Case("mean" + tag, (shape,), lambda m, a, d=d, k=k: a.mean(dim=d, keepdim=k),
                     lambda a, d=d, k=k: a.mean(axis=d, keepdims=k)),
                Case("amax" + tag, (shape,),
                     lambda m, a, d=d, k=k: a.amax(dim=all_dims(d, a.ndim), keepdim=k),
                     lambda a, d=d, k=k: a.max(axis=d, keepdims=k), ("distinct",)),
                Case("amin" + tag, (shape,),
                     lambda m, a, d=d, k=k: a.amin(dim=all_dims(d, a.ndim), keepdim=k),
                     lambda a, d=d, k=k: a.min(axis=d, keepdims=k), ("distinct",)),
                Case("logsumexp" + tag, (shape,), lambda m, a, d=d, k=k: a.logsumexp(dim=d, keepdim=k),
                     lambda a, d=d, k=k: np.log(np.exp(a).sum(axis=d, keepdims=k)),
                     torch_fn=lambda torch, a, d=d, k=k: a.logsumexp(dim=all_dims(d, a.ndim), keepdim=k)),
            ]
    for d in (0, 1, -1):
        for k in (False, True):
            tag = f"(dim={d},keepdim={k})"
            cases += [  # one dim: the named tuple (values, indices); the gradient goes to indices
                Case("max.values" + tag, (shape,), lambda m, a, d=d, k=k: a.max(dim=d, keepdim=k).values,
                     lambda a, d=d, k=k: a.max(axis=d, keepdims=k), ("distinct",)),
                Case("min[0]" + tag, (shape,), lambda m, a, d=d, k=k: a.min(d, k)[0],
                     lambda a, d=d, k=k: a.min(axis=d, keepdims=k), ("distinct",)),
            ]
    cases += [
        Case("sum()", ((),), lambda m, a: a.sum(), np.sum),
        Case("m.sum(dim=0)", ((3, 4),), lambda m, a: m.sum(a, dim=0), lambda a: a.sum(axis=0)),
        Case("m.mean", ((3, 4),), lambda m, a: m.mean(a), np.mean),
        Case("max(0-d)", ((),), lambda m, a: a.max(), np.max, torch_fn=lambda torch, a: a.amax()),
    ]
    for dim in (0, 1, -1):
        def sm_ref(a, d=dim):
            e = np.exp(a - a.max(axis=d, keepdims=True))
            return e / e.sum(axis=d, keepdims=True)

        cases += [
            Case(f"softmax(dim={dim})", ((3, 4),), lambda m, a, d=dim: a.softmax(d), sm_ref),
            Case(f"log_softmax(dim={dim})", ((3, 4),), lambda m, a, d=dim: a.log_softmax(d),
                 lambda a, f=sm_ref: np.log(f(a))),
            Case(f"softmax3d(dim={dim})", ((2, 3, 4),), lambda m, a, d=dim: a.softmax(d), sm_ref),
        ]
    cases.append(Case("m.softmax", ((3, 4),), lambda m, a: m.softmax(a, dim=-1),
                      lambda a: np.exp(a) / np.exp(a).sum(-1, keepdims=True)))
    cases.append(Case("m.log_softmax", ((3, 4),), lambda m, a: m.log_softmax(a, dim=0),
                      lambda a: a - np.log(np.exp(a).sum(0, keepdims=True))))
    cases.append(Case("m.logsumexp", ((3, 4),), lambda m, a: m.logsumexp(a, dim=1),
                      lambda a: np.log(np.exp(a).sum(1))))
    return cases


def _join_cases() -> list[Case]:
    return [
        Case("cat(dim=1)", ((2, 3), (2, 4)), lambda m, a, b: m.cat([a, b], dim=1),
             lambda a, b: np.concatenate([a, b], axis=1), layouts=("contiguous", "transposed")),
        Case("cat(dim=0,3 inputs)", ((2, 3), (1, 3), (3, 3)), lambda m, a, b, c: m.cat([a, b, c]),
             lambda a, b, c: np.concatenate([a, b, c])),
        Case("cat(dim=-1)", ((2, 3, 1), (2, 3, 2)), lambda m, a, b: m.cat((a, b), dim=-1),
             lambda a, b: np.concatenate([a, b], axis=-1)),
        Case("cat(same input twice)", ((2, 3),), lambda m, a: m.cat([a, a * 2.0], dim=0),
             lambda a: np.concatenate([a, a * 2.0])),
        Case("stack(dim=0)", ((3, 4), (3, 4)), lambda m, a, b: m.stack([a, b]),
             lambda a, b: np.stack([a, b])),
        Case("stack(dim=-1)", ((3, 4), (3, 4), (3, 4)), lambda m, a, b, c: m.stack([a, b, c], dim=-1),
             lambda a, b, c: np.stack([a, b, c], axis=-1)),
        Case("stack(0-d)", ((), ()), lambda m, a, b: m.stack([a, b], dim=0),
             lambda a, b: np.stack([a, b])),
    ]


def _movement_cases() -> list[Case]:
    s = ((3, 4),)
    s3 = ((2, 3, 4),)
    idx = [0, 2, 0, 2, 1]
    rows, cols = [0, 2, 2, 1], [3, 0, 0, 1]
    return [
        Case("reshape(4,3)", s, lambda m, a: a.reshape(4, 3) * 1.0, lambda a: a.reshape(4, 3)),
        Case("reshape((-1,))", s, lambda m, a: a.reshape((-1,)), lambda a: a.reshape(-1)),
        Case("reshape(2,-1,2)", s3, lambda m, a: a.reshape(2, -1, 2), lambda a: a.reshape(2, -1, 2)),
        Case("view(12)", s, lambda m, a: a.view(12), lambda a: a.reshape(12), layouts=("contiguous",)),
        Case("view(6,2)", s3, lambda m, a: a.view(6, 4), lambda a: a.reshape(6, 4), layouts=("contiguous",)),
        Case("transpose(0,1)", s, lambda m, a: a.transpose(0, 1), lambda a: a.T),
        Case("transpose(-1,0)", s3, lambda m, a: a.transpose(-1, 0), lambda a: a.swapaxes(-1, 0)),
        Case(".T", s, lambda m, a: a.T, lambda a: a.T),
        Case("permute(2,0,1)", s3, lambda m, a: a.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
        Case("expand(2,3,4)", ((3, 1),), lambda m, a: a.expand(2, 3, 4),
             lambda a: np.broadcast_to(a, (2, 3, 4))),
        Case("expand(-1,5)", ((3, 1),), lambda m, a: a.expand(-1, 5), lambda a: np.broadcast_to(a, (3, 5))),
        Case("broadcast_to", ((1, 4),), lambda m, a: a.broadcast_to((2, 3, 4)),
             lambda a: np.broadcast_to(a, (2, 3, 4))),
        Case("m.broadcast_to", ((4,),), lambda m, a: m.broadcast_to(a, (3, 4)),
             lambda a: np.broadcast_to(a, (3, 4))),
        Case("unsqueeze(1)", s, lambda m, a: a.unsqueeze(1), lambda a: a[:, None]),
        Case("unsqueeze(-1)", s, lambda m, a: a.unsqueeze(-1), lambda a: a[..., None]),
        Case("squeeze()", ((3, 1, 4, 1),), lambda m, a: a.squeeze(), np.squeeze),
        Case("squeeze(1)", ((3, 1, 4),), lambda m, a: a.squeeze(1), lambda a: a[:, 0]),
        Case("flatten()", s3, lambda m, a: a.flatten(), lambda a: a.reshape(-1)),
        Case("flatten(1)", s3, lambda m, a: a.flatten(1), lambda a: a.reshape(2, 12)),
        Case("t[1:,::2,None,...]", s3, lambda m, a: a[1:, ::2, None, ...], lambda a: a[1:, ::2, None, ...]),
        Case("t[0]", s3, lambda m, a: a[0], lambda a: a[0]),
        Case("t[...,-1]", s3, lambda m, a: a[..., -1], lambda a: a[..., -1]),
        Case("t[:,1:3]", s, lambda m, a: a[:, 1:3], lambda a: a[:, 1:3]),
        Case("t[1,2]", s, lambda m, a: a[1, 2], lambda a: a[1, 2]),
        Case("t[idx] repeated", s, lambda m, a: a[idx], lambda a: a[idx]),
        Case("t[tensor idx]", s, lambda m, a: a[m.tensor(idx)], lambda a: a[idx]),
        Case("t[rows,cols]", s, lambda m, a: a[rows, cols], lambda a: a[rows, cols]),
        Case("t[:,cols]", s, lambda m, a: a[:, cols], lambda a: a[:, cols]),
        Case("t[mask]", s, lambda m, a: a[m.tensor(MASK_34)], lambda a: a[MASK_34]),
        Case("contiguous", s, lambda m, a: a.contiguous(), lambda a: a),
        Case("T.contiguous", s, lambda m, a: a.T.contiguous() * 1.0, lambda a: a.T),
        Case("clone", s, lambda m, a: a.clone(), lambda a: a),
        Case("to(float64)", s, lambda m, a: a.to(m.float64) * 2.0, lambda a: a * 2.0),
        Case("view chain", s3, lambda m, a: a.permute(1, 2, 0).reshape(3, 8)[1:].sum(0).unsqueeze(0) ** 2,
             lambda a: a.transpose(1, 2, 0).reshape(3, 8)[1:].sum(0)[None] ** 2),
    ]


def _composite_cases() -> list[Case]:
    """Expressions that combine ops, so a gradient flows through several VJPs and reused inputs."""
    return [
        Case("mlp", ((5, 3), (3, 4), (4,)), lambda m, x, w, b: (x @ w + b).relu().sum(1).mean(),
             lambda x, w, b: np.maximum(x @ w + b, 0).sum(1).mean(), ("real", "real", "grid")),
        Case("x*x+x", ((3, 4),), lambda m, a: a * a + a, lambda a: a * a + a),
        Case("cross entropy", ((4, 5),), lambda m, a: -a.log_softmax(1)[[0, 1, 2, 3], [4, 0, 2, 2]].mean(),
             lambda a: -(a - np.log(np.exp(a).sum(1, keepdims=True)))[[0, 1, 2, 3], [4, 0, 2, 2]].mean()),
        Case("norm", ((3, 4),), lambda m, a: (a * a).sum(-1, keepdim=True).sqrt() / (a.abs().max() + 1.0),
             lambda a: np.sqrt((a * a).sum(-1, keepdims=True)) / (np.abs(a).max() + 1.0), ("distinct",)),
    ]


def _functional_cases() -> list[Case]:
    """`nn.functional`: `linear` and the losses, each one node with its own gradient formulas."""
    def F(m):  # noqa: N802 - F as in `import torch.nn.functional as F`
        return m.nn.functional

    def ce_ref(z, labels, reduction):
        losses = np.log(np.exp(z).sum(-1)) - np.take_along_axis(z, labels[..., None], -1)[..., 0]
        return losses.mean() if reduction == "mean" else losses.sum() if reduction == "sum" else losses

    def bce_ref(x, t):
        return -(t * np.log(1 / (1 + np.exp(-x))) + (1 - t) * np.log(1 - 1 / (1 + np.exp(-x))))

    cases = [
        Case("linear(5,4)x(3,4)+(3,)", ((5, 4), (3, 4), (3,)), lambda m, x, w, b: F(m).linear(x, w, b),
             lambda x, w, b: x @ w.T + b),
        Case("linear no bias", ((5, 4), (3, 4)), lambda m, x, w: F(m).linear(x, w),
             lambda x, w: x @ w.T),
        Case("linear(4,)", ((4,), (3, 4), (3,)), lambda m, x, w, b: F(m).linear(x, w, b),
             lambda x, w, b: x @ w.T + b),
        Case("linear(2,5,4)", ((2, 5, 4), (3, 4), (3,)), lambda m, x, w, b: F(m).linear(x, w, b),
             lambda x, w, b: x @ w.T + b),
        Case("linear(w.T)", ((5, 4), (4, 3)), lambda m, x, w: F(m).linear(x, w.T).tanh(),
             lambda x, w: np.tanh(x @ w)),
        Case("mlp(F)", ((5, 4), (3, 4), (3,), (6, 3), (6,)),
             lambda m, x, w1, b1, w2, b2: F(m).cross_entropy(
                 F(m).linear(F(m).relu(F(m).linear(x, w1, b1)), w2, b2), m.tensor(LABELS_5)),
             lambda x, w1, b1, w2, b2: ce_ref(np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, LABELS_5, "mean"),
             ("real", "real", "grid", "real", "real")),
        Case("cross_entropy(1-D)", ((6,),), lambda m, z: F(m).cross_entropy(z, m.tensor(2)),
             lambda z: ce_ref(z, np.array(2), "mean")),
        Case("cross_entropy(1-D,none)", ((6,),),
             lambda m, z: F(m).cross_entropy(z, m.tensor(5), reduction="none"),
             lambda z: ce_ref(z, np.array(5), "none")),
        Case("mse_loss broadcast", ((3, 4), (4,)), lambda m, a, b: F(m).mse_loss(a, b.expand(3, 4)),
             lambda a, b: ((a - b) ** 2).mean()),
        Case("relu/tanh/sigmoid", ((3, 4),),
             lambda m, a: F(m).relu(a) + F(m).tanh(a) * F(m).sigmoid(a), lambda a: (
                 np.maximum(a, 0) + np.tanh(a) / (1 + np.exp(-a))), ("nonzero",)),
        Case("softmax/log_softmax", ((3, 4),),
             lambda m, a: F(m).softmax(a, dim=1) + F(m).log_softmax(a, dim=0),
             lambda a: np.exp(a) / np.exp(a).sum(1, keepdims=True) + a - np.log(np.exp(a).sum(0))),
    ]
    for reduction in ("mean", "sum", "none"):
        cases += [
            Case(f"cross_entropy({reduction})", ((5, 6),),
                 lambda m, z, r=reduction: F(m).cross_entropy(z, m.tensor(LABELS_5), reduction=r),
                 lambda z, r=reduction: ce_ref(z, LABELS_5, r)),
            Case(f"mse_loss({reduction})", ((3, 4), (3, 4)),
                 lambda m, a, b, r=reduction: F(m).mse_loss(a, b, reduction=r),
                 lambda a, b, r=reduction: (lambda e: e.mean() if r == "mean" else e.sum() if r == "sum"
                                            else e)((a - b) ** 2)),
            Case(f"bce_with_logits({reduction})", ((3, 4), (3, 4)),
                 lambda m, x, t, r=reduction: F(m).binary_cross_entropy_with_logits(x, t, reduction=r),
                 lambda x, t, r=reduction: (lambda e: e.mean() if r == "mean" else e.sum() if r == "sum"
                                            else e)(bce_ref(x, t)), ("real", "unit")),
        ]
    return cases


CASES: list[Case] = (_binary_cases() + _scalar_cases() + _where_cases() + _unary_cases()
                     + _matmul_cases() + _reduction_cases() + _join_cases() + _movement_cases()
                     + _composite_cases() + _functional_cases())


# --- layouts: how a case's inputs are laid out in memory ---------------------------------------------


def make_inputs(case: Case, layout: str) -> tuple[list[np.ndarray], list]:
    """Leaf arrays (float64, laid out as `layout` asks) and, per input, what the expression sees.

    The second list holds, for each input, the shape to `expand` the leaf to for the stride-0
    layout, else None (the expression sees the leaf itself). Deterministic per case and layout.
    """
    rng = np.random.default_rng(zlib.crc32(f"{case.name}|{layout}".encode()))
    leaves, preps = [], []
    for i, shape in enumerate(case.shapes):
        domain = case.domain(i)
        if layout == "transposed" and len(shape) >= 2:
            values = sample(rng, shape, domain)
            leaves.append(np.swapaxes(np.ascontiguousarray(np.swapaxes(values, -1, -2)), -1, -2))
            preps.append(None)
        elif layout == "expanded" and len(shape) >= 1 and shape[0] > 1:
            leaves.append(sample(rng, (1,) + shape[1:], domain))
            preps.append(shape)
        else:
            leaves.append(sample(rng, shape, domain))
            preps.append(None)
    return leaves, preps


def applies(case: Case, layout: str) -> bool:
    """Whether `layout` changes anything for this case (else it would repeat "contiguous")."""
    if layout == "contiguous":
        return True
    leaves, preps = make_inputs(case, layout)
    if layout == "transposed":
        return any(not a.flags.c_contiguous for a in leaves)
    return any(p is not None for p in preps)


def prepared(fn: Callable, preps: list) -> Callable:
    """`fn` applied to the inputs as the expression sees them (expanded where asked)."""
    def run(m, *leaves):
        seen = [leaf if shape is None else leaf.expand(*shape) for leaf, shape in zip(leaves, preps)]
        return fn(m, *seen)
    return run
