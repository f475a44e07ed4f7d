"""Attention: `scaled_dot_product_attention` and `MultiheadAttention` (tutorial chapter 11).

Attention is three existing ops, so it is written as their composition and autograd does the
rest: scores = q @ k^T * scale (a batched matmul), weights = softmax(scores + mask) over the
keys, out = weights @ v (another batched matmul). A mask adds -inf to the scores it hides,
so softmax gives them weight 0.

The two APIs read boolean masks the opposite way round, as in PyTorch:
`scaled_dot_product_attention` keeps positions where its mask is True; `MultiheadAttention`
hides positions where `attn_mask` or `key_padding_mask` is True. Float masks are added to the
scores in both (and receive a gradient, like any floating input).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorgrad import dtypes
from tensorgrad.autocasting import autocast_op
from tensorgrad.device import namespace
from tensorgrad.elementwise import dropout, where
from tensorgrad.matmul import linear
from tensorgrad.movement import cat
from tensorgrad.nn import init
from tensorgrad.nn.modules import Linear, Module, Parameter, _place
from tensorgrad.reduce import softmax
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["scaled_dot_product_attention", "MultiheadAttention", "multi_head_attention_forward"]


def _check_qkv(query: Tensor, key: Tensor, value: Tensor) -> None:
    op = "scaled_dot_product_attention"
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(t).__name__}")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"{op}: expected query, key and value to be at least 2-dimensional, got shapes "
                           f"{query.shape}, {key.shape} and {value.shape}")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"{op}: the last dimension of query {query.shape} and key {key.shape} must match")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"{op}: key {key.shape} and value {value.shape} must have the same number of "
                           "positions (dimension -2)")


def _repeat_heads(t: Tensor, heads: int, op: str) -> Tensor:
    """Grouped-query attention: each of t's heads (dimension -3) serves heads / t's heads queries."""
    if t.ndim < 3 or heads % t.shape[-3]:
        raise RuntimeError(f"{op}: with enable_gqa, the query's {heads} heads must be a multiple of the "
                           f"heads (dimension -3) of the key and value, got shape {t.shape}")
    xp = namespace(t.data)
    return t[..., new_leaf(xp.repeat(xp.arange(t.shape[-3]), heads // t.shape[-3])), :, :]


def _masked_softmax(scores: Tensor, safe: bool) -> Tensor:
    """softmax over the keys; with `safe`, a query whose keys are all hidden gets weights 0, not nan."""
    if not safe:
        return softmax(scores, -1)
    dead = np.isneginf(scores.data).all(axis=-1, keepdims=True)
    if not dead.any():
        return softmax(scores, -1)
    # Softmax of a row of 0s instead of -infs (finite, so no nan reaches the gradient), then 0.
    weights = softmax(where(new_leaf(dead), 0.0, scores), -1)
    return where(new_leaf(dead), 0.0, weights)


def _attend(q_scaled: Tensor, key: Tensor, value: Tensor, bias: Tensor | None, dropout_p: float,
            safe: bool) -> tuple[Tensor, Tensor]:
    """softmax(q_scaled @ key^T + bias) @ value, and the attention weights (after dropout)."""
    scores = q_scaled @ key.transpose(-2, -1)
    if bias is not None:
        scores = scores + bias
    weights = _masked_softmax(scores, safe)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return weights @ value, weights


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value, scale = 1 / sqrt(query.size(-1)) by default.

    query (..., L, E), key (..., S, E), value (..., S, Ev) give (..., L, Ev). A bool `attn_mask`
    keeps the positions where it is True; a float one is added to the scores; `is_causal` lets
    query i see keys 0..i only. `dropout_p` drops attention weights (always: it has no training
    flag, as in PyTorch). A query that can see no key gets 0, as in PyTorch. The gradient is
    the composition's: two batched matmuls and a softmax.
    """
    _check_qkv(query, key, value)
    op = "scaled_dot_product_attention"
    if not 0 <= dropout_p <= 1:
        raise ValueError(f"{op}: dropout_p must be between 0 and 1, got {dropout_p}")
    if enable_gqa:
        key, value = _repeat_heads(key, query.shape[-3], op), _repeat_heads(value, query.shape[-3], op)
    length, source = query.shape[-2], key.shape[-2]
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(f"{op}: an explicit attn_mask should not be set when is_causal=True")
        attn_mask = new_leaf(np.tril(namespace(query.data).ones((length, source), dtype=bool)))
    bias = None if attn_mask is None else _additive_mask(attn_mask, query, op, hide_where=False)
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    half = query.dtype == np.float16
    if half:  # PyTorch's CPU kernels compute float16 in float32 (their opmath) and round once
        query, key, value = query.to(np.float32), key.to(np.float32), value.to(np.float32)
        bias = None if bias is None else bias.to(np.float32)
    out = _attend(query * scale, key, value, bias, dropout_p, safe=True)[0]
    return out.to(np.float16) if half else out


def _additive_mask(mask: Any, query: Tensor, op: str, hide_where: bool) -> Tensor:
    """A mask as a float tensor to add to the scores: -inf where hidden, 0 where seen.

    A bool mask hides the positions where it equals `hide_where`; a float mask is added as it is.
    """
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}: a mask must be a Tensor, got {type(mask).__name__}")
    if mask.dtype == np.bool_:
        hidden = mask.data == hide_where
        return new_leaf(np.where(hidden, -np.inf, 0).astype(query.dtype))
    if mask.dtype.kind != "f":
        raise RuntimeError(f"{op}: expected a mask of dtype bool or float, got {mask.dtype}")
    return mask


# --- MultiheadAttention ---------------------------------------------------------------------------


class NonDynamicallyQuantizableLinear(Linear):
    """`Linear` under the name PyTorch gives MultiheadAttention's output projection (same repr)."""


class MultiheadAttention(Module):
    """Attention with `num_heads` heads over `embed_dim` features, PyTorch's layer and parameters.

    Parameters, under PyTorch's names so state dicts load either way: `in_proj_weight` (3E, E)
    packing the query, key and value projections (or `q_proj_weight`, `k_proj_weight`,
    `v_proj_weight` when kdim or vdim differ from E), `in_proj_bias` (3E), `out_proj` (a Linear),
    and with `add_bias_kv` the extra key and value `bias_k`, `bias_v`.

    forward(query, key, value) takes (L, N, E) inputs ((N, L, E) with batch_first, or unbatched
    (L, E)) and returns (attn_output, attn_weights): the weights averaged over heads, (N, L, S),
    or per head (N, H, L, S) with average_attn_weights=False, or None with need_weights=False.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.dropout, self.batch_first = dropout, batch_first
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError(f"embed_dim must be divisible by num_heads, got {embed_dim} and {num_heads}")
        dtype = dtypes.or_default(dtype)
        self._make_parameters(bias, add_bias_kv, dtype)
        self.add_zero_attn = add_zero_attn
        _place(self, device)

    def _make_parameters(self, bias: bool, add_bias_kv: bool, dtype: np.dtype) -> None:
        """PyTorch's parameters, under its names (an absent one registered as None)."""
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(np.empty((3 * e, e), dtype))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(np.empty((e, e), dtype))
            self.k_proj_weight = Parameter(np.empty((e, self.kdim), dtype))
            self.v_proj_weight = Parameter(np.empty((e, self.vdim), dtype))
            self.register_parameter("in_proj_weight", None)
        self.register_parameter("in_proj_bias", Parameter(np.empty(3 * e, dtype)) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(e, e, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(np.empty((1, 1, e), dtype))
            self.bias_v = Parameter(np.empty((1, 1, e), dtype))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's initialisation: Glorot-uniform projections, zero biases, Glorot-normal bias_k/v."""
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight"):
            if self._parameters[name] is not None:
                init.xavier_uniform_(self._parameters[name])
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = self._check_shapes(query, key, value, key_padding_mask, attn_mask)
        if is_causal and attn_mask is None:
            raise RuntimeError("MultiheadAttention: is_causal is a hint that attn_mask is causal; pass the "
                               "causal attn_mask too")
        if not batched:  # one sequence: a batch of one, in the (L, N, E) layout
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        out, weights = self._attention(query, key, value, key_padding_mask, attn_mask, need_weights)
        if weights is not None and average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out = out.squeeze(1)
            weights = None if weights is None else weights.squeeze(0)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _check_shapes(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                      attn_mask: Tensor | None) -> bool:
        """Whether the input is batched, after PyTorch's checks on the inputs' and masks' shapes."""
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise AssertionError(f"MultiheadAttention: expected query, key and value all 3-D (batched) or "
                                 f"all 2-D (unbatched), got shapes {query.shape}, {key.shape} and "
                                 f"{value.shape}")
        if query.shape[-1] != self.embed_dim:
            raise AssertionError(f"MultiheadAttention: was expecting embedding dimension of "
                                 f"{self.embed_dim}, but got query of shape {query.shape}")
        if key.shape[:-1] != value.shape[:-1]:
            raise AssertionError(f"MultiheadAttention: key {key.shape} and value {value.shape} must match in "
                                 "their sequence and batch dimensions")
        if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
            raise AssertionError(f"MultiheadAttention: expected key_padding_mask to be {query.ndim - 1}-D, "
                                 f"got shape {key_padding_mask.shape}")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"MultiheadAttention: expected attn_mask to be 2-D or 3-D, got shape "
                                 f"{attn_mask.shape}")
        return query.ndim == 3

    def _projections(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """query, key and value through their input projections (rows of the packed weight)."""
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            weights = [self.in_proj_weight[i * e:(i + 1) * e] for i in range(3)]
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        packed_bias = self.in_proj_bias
        biases = [None] * 3 if packed_bias is None else [packed_bias[i * e:(i + 1) * e] for i in range(3)]
        return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases, strict=True))

    def _attention(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                   attn_mask: Tensor | None, need_weights: bool) -> tuple[Tensor, Tensor | None]:
        """The (L, N, E) computation: project, split heads, attend, merge heads, project out."""
        length, batch, e = query.shape
        heads, head_dim = self.num_heads, self.head_dim
        q, k, v = self._projections(query, key, value)
        if self.bias_k is not None:  # one extra learned key and value, seen by every query
            k = cat([k, self.bias_k.expand(1, batch, e)])
            v = cat([v, self.bias_v.expand(1, batch, e)])

        def split_heads(x: Tensor) -> Tensor:  # (S, N, E) -> (N, H, S, head_dim)
            return x.permute(1, 0, 2).reshape(batch, x.shape[0], heads, head_dim).transpose(1, 2)

        q, k, v = split_heads(q), split_heads(k), split_heads(v)
        if self.add_zero_attn:  # one extra all-zero key and value
            zeros = new_leaf(namespace(k.data).zeros((batch, heads, 1, head_dim), dtype=k.dtype))
            k, v = cat([k, zeros], dim=2), cat([v, zeros], dim=2)
        bias = self._score_bias(query, key_padding_mask, attn_mask, length, k.shape[2], batch)
        dropout_p = self.dropout if self.training else 0.0
        # PyTorch's two paths differ where a query sees no key: with need_weights its plain
        # softmax gives nan there, without it its attention kernel gives 0. Both are kept.
        out, weights = _attend(q * math.sqrt(1.0 / head_dim), k, v, bias, dropout_p, safe=not need_weights)
        out = out.transpose(1, 2).reshape(batch, length, e).permute(1, 0, 2)  # merge heads: (L, N, E)
        return self.out_proj(out), (weights if need_weights else None)

    def _score_bias(self, query: Tensor, key_padding_mask: Tensor | None, attn_mask: Tensor | None,
                    length: int, source: int, batch: int) -> Tensor | None:
        """attn_mask and key_padding_mask as one float tensor to add to the (N, H, L, S) scores."""
        op, bias = "MultiheadAttention", None
        extra = int(self.bias_k is not None) + int(self.add_zero_attn)  # keys added after the masks were made
        if attn_mask is not None:
            expected = (length, source - extra) if attn_mask.ndim == 2 else (batch * self.num_heads, length,
                                                                                source - extra)
            if tuple(attn_mask.shape) != expected:
                raise RuntimeError(f"{op}: the shape of the {attn_mask.ndim}D attn_mask is "
                                   f"{attn_mask.shape}, but should be {expected}")
            bias = _additive_mask(attn_mask, query, op, hide_where=True)
            if attn_mask.ndim == 3:
                bias = bias.reshape(batch, self.num_heads, length, source - extra)
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (batch, source - extra):
                raise AssertionError(f"{op}: expected key_padding_mask of shape {(batch, source - extra)}, "
                                     f"got {key_padding_mask.shape}")
            padding = _additive_mask(key_padding_mask, query, op, hide_where=True).reshape(batch, 1, 1, -1)
            bias = padding if bias is None else bias + padding
        if bias is not None and extra:  # the added keys are never hidden
            zeros = new_leaf(namespace(bias.data).zeros(bias.shape[:-1] + (extra,), dtype=bias.dtype))
            bias = cat([bias, zeros], dim=-1)
        return bias

    def extra_repr(self) -> str:
        return ""


# --- the functional form: MultiheadAttention's computation over given parameters ------------------


class _GivenParameters:
    """MultiheadAttention's forward pass run over parameters passed in, not owned by a Module."""

    forward = MultiheadAttention.forward
    _check_shapes = MultiheadAttention._check_shapes
    _projections = MultiheadAttention._projections
    _attention = MultiheadAttention._attention
    _score_bias = MultiheadAttention._score_bias
    batch_first = False


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight: Tensor | None, in_proj_bias: Tensor | None,
                                 bias_k: Tensor | None, bias_v: Tensor | None, add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
                                 training: bool = True, key_padding_mask: Tensor | None = None,
                                 need_weights: bool = True, attn_mask: Tensor | None = None,
                                 use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
                                 k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None,
                                 static_k: Tensor | None = None, static_v: Tensor | None = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """`MultiheadAttention.forward` with its parameters as arguments, in PyTorch's order:
    (L, N, E) or unbatched (L, E) inputs; returns (attn_output, attn_weights or None).

    The packed `in_proj_weight` (3E, E), or with `use_separate_proj_weight` the three
    `q/k/v_proj_weight`; `dropout_p` applies only while `training`. The gradient is the
    composition's, as in the layer. `static_k`/`static_v` (precomputed per-head keys) are not
    supported.
    """
    op = "multi_head_attention_forward"
    if static_k is not None or static_v is not None:
        raise NotImplementedError(f"{op}: static_k and static_v are not supported")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError(f"{op}: bias_k and bias_v must be given together")
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError(f"{op}: use_separate_proj_weight is True but q_proj_weight, k_proj_weight "
                                 "or v_proj_weight is None")
    elif in_proj_weight is None:
        raise AssertionError(f"{op}: use_separate_proj_weight is False but in_proj_weight is None")
    if num_heads <= 0 or embed_dim_to_check % num_heads:
        raise AssertionError(f"{op}: embed_dim {embed_dim_to_check} not divisible by num_heads {num_heads}")
    heads = _GivenParameters()
    heads.embed_dim, heads.num_heads = embed_dim_to_check, num_heads
    heads.head_dim = embed_dim_to_check // num_heads
    heads._qkv_same_embed_dim = not use_separate_proj_weight
    heads.in_proj_weight, heads.in_proj_bias = in_proj_weight, in_proj_bias
    heads.q_proj_weight, heads.k_proj_weight = q_proj_weight, k_proj_weight
    heads.v_proj_weight = v_proj_weight
    heads.bias_k, heads.bias_v, heads.add_zero_attn = bias_k, bias_v, add_zero_attn
    heads.dropout, heads.training = dropout_p, training
    heads.out_proj = lambda x: linear(x, out_proj_weight, out_proj_bias)
    return heads.forward(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights,
                         is_causal)
