"""The transformer's layers, under PyTorch's names: `TransformerEncoderLayer`, `TransformerEncoder`,
`TransformerDecoderLayer`, `TransformerDecoder`.

Each layer is the blocks of "Attention Is All You Need" written with the library's own modules
(`MultiheadAttention`, `Linear`, `LayerNorm`, `Dropout`), so its gradient is theirs and its state
dict has PyTorch's keys (`self_attn.in_proj_weight`, `linear1.weight`, `norm1.bias`, ...).
Post-norm by default, `x = norm(x + block(x))`; pre-norm with `norm_first=True`,
`x = x + block(norm(x))`, the form GPT-2 uses.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorgrad import creation, dtypes
from tensorgrad.elementwise import relu
from tensorgrad.nn.activation import gelu
from tensorgrad.nn.attention import MultiheadAttention
from tensorgrad.nn.init import xavier_uniform_
from tensorgrad.nn.modules import Dropout, Linear, Module, ModuleList
from tensorgrad.nn.normalization import LayerNorm
from tensorgrad.tensor import Tensor

__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer", "TransformerDecoder",
           "Transformer"]

_ACTIVATIONS = {"relu": relu, "gelu": gelu}


def _activation(activation: str | Callable[[Tensor], Tensor], name: str) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation not in _ACTIVATIONS:
        raise RuntimeError(f"{name}: activation should be relu/gelu, not {activation}")
    return _ACTIVATIONS[activation]


class _Block(Module):
    """What the encoder and decoder layers share: the feed-forward block and its options."""

    def _feed_forward_parts(self, d_model: int, dim_feedforward: int, dropout: float, activation: Any,
                            layer_norm_eps: float, bias: bool, norm_first: bool, kwargs: dict,
                            blocks: int = 2) -> None:
        # PyTorch's registration order (so repr and state_dict order match): every norm, then
        # every dropout, one pair per residual block (2 in the encoder layer, 3 in the decoder's).
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kwargs)
        self.norm_first = norm_first
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation, type(self).__name__)

    def _feed_forward(self, x: Tensor, dropout: Dropout) -> Tensor:
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_Block):
    """Self-attention, then a feed-forward network, each with dropout, a residual connection and
    a LayerNorm. `forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)`."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kwargs = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kwargs)
        self._feed_forward_parts(d_model, dim_feedforward, dropout, activation, layer_norm_eps, bias,
                                 norm_first, kwargs)

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._feed_forward(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._self_attention(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._feed_forward(x, self.dropout2))

    def _self_attention(self, x: Tensor, mask: Tensor | None, padding: Tensor | None,
                        is_causal: bool) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                             is_causal=is_causal and mask is not None)[0]
        return self.dropout1(out)


class TransformerDecoderLayer(_Block):
    """Self-attention over the target, attention to the encoder's output (`memory`), then a
    feed-forward network, each with dropout, a residual connection and a LayerNorm.
    `forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)`."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kwargs = {"device": device, "dtype": dtype}
        options = {"dropout": dropout, "bias": bias, "batch_first": batch_first, **kwargs}
        self.self_attn = MultiheadAttention(d_model, nhead, **options)
        self.multihead_attn = MultiheadAttention(d_model, nhead, **options)
        self._feed_forward_parts(d_model, dim_feedforward, dropout, activation, layer_norm_eps, bias,
                                 norm_first, kwargs, blocks=3)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._attend(self.self_attn, self.norm1(x), None, tgt_mask, tgt_key_padding_mask,
                                 tgt_is_causal, self.dropout1)
            x = x + self._attend(self.multihead_attn, self.norm2(x), memory, memory_mask,
                                 memory_key_padding_mask, memory_is_causal, self.dropout2)
            return x + self._feed_forward(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._attend(self.self_attn, x, None, tgt_mask, tgt_key_padding_mask,
                                        tgt_is_causal, self.dropout1))
        x = self.norm2(x + self._attend(self.multihead_attn, x, memory, memory_mask,
                                        memory_key_padding_mask, memory_is_causal, self.dropout2))
        return self.norm3(x + self._feed_forward(x, self.dropout3))

    @staticmethod
    def _attend(attention: MultiheadAttention, x: Tensor, memory: Tensor | None, mask: Tensor | None,
                padding: Tensor | None, is_causal: bool, dropout: Dropout) -> Tensor:
        """Attention from x to itself (memory None) or to memory, then dropout."""
        source = x if memory is None else memory
        out = attention(x, source, source, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                        is_causal=is_causal and mask is not None)[0]
        return dropout(out)


class TransformerEncoder(Module):
    """`num_layers` copies of an encoder layer (independent parameters, `layers.0`, `layers.1`,
    ...), then an optional final `norm`."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """`num_layers` copies of a decoder layer, then an optional final `norm`."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                      bool(tgt_is_causal), memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """The encoder-decoder transformer of "Attention Is All You Need": `num_encoder_layers` encoder
    layers and `num_decoder_layers` decoder layers, each stack closed by a LayerNorm, every weight
    matrix initialised with `xavier_uniform_` as PyTorch's. `forward(src, tgt, ...masks)`."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        options = {"dim_feedforward": dim_feedforward, "dropout": dropout, "activation": activation,
                   "layer_norm_eps": layer_norm_eps, "batch_first": batch_first, "norm_first": norm_first,
                   "bias": bias, "device": device, "dtype": dtype}
        norm = {"eps": layer_norm_eps, "bias": bias, "device": device, "dtype": dtype}
        if custom_encoder is None:
            custom_encoder = TransformerEncoder(TransformerEncoderLayer(d_model, nhead, **options),
                                                num_encoder_layers, LayerNorm(d_model, **norm))
        if custom_decoder is None:
            custom_decoder = TransformerDecoder(TransformerDecoderLayer(d_model, nhead, **options),
                                                num_decoder_layers, LayerNorm(d_model, **norm))
        self.encoder, self.decoder = custom_encoder, custom_decoder
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("Transformer: the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("Transformer: the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                            memory_key_padding_mask, tgt_is_causal, memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask of size (sz, sz): 0 on and below the diagonal, -inf above (a position
        may attend to itself and to earlier ones only)."""
        dtype = dtypes.or_default(dtype)
        mask = np.triu(np.full((sz, sz), -np.inf, dtype=dtype), 1)
        return creation.tensor(mask, device=device)
