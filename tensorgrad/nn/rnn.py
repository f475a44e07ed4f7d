"""Recurrent layers: `RNN`, `LSTM`, `GRU` and their one-step cells, under PyTorch's names.

Each step is a few lines of the ops the tutorial builds (`linear`, `sigmoid`, `tanh`, `*`, `+`),
so backpropagation through time is the engine walking the unrolled graph; no step has a gradient
formula of its own. The input projection of a whole sequence is one matmul before the loop; only
the hidden-to-hidden product runs step by step.

The parameters have PyTorch's names, shapes, gate order and initialisation (uniform in
±1/sqrt(hidden_size)), so state dicts load either way: `weight_ih_l0` is (gates * hidden, input),
`weight_hh_l0` (gates * hidden, hidden), `bias_ih_l0` and `bias_hh_l0`, with `_reverse` for the
backward direction of a bidirectional layer. Gates: LSTM i, f, g, o; GRU r, z, n.
"""

from __future__ import annotations

import math
from typing import Any

from tensorgrad import dtypes
from tensorgrad.device import namespace
from tensorgrad.elementwise import dropout, relu, sigmoid, tanh
from tensorgrad.matmul import linear
from tensorgrad.movement import cat, stack
from tensorgrad.nn.modules import Module, Parameter, _place, _uniform
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "pad_sequence"]


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Sequences of lengths L_i (each (L_i, *)) padded to the longest and stacked: (L, B, *), or
    (B, L, *) with `batch_first`, as `torch.nn.utils.rnn.pad_sequence` (`nn.utils.rnn` here too).
    The gradient flows back to each sequence."""
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
    rests = {tuple(s.shape[1:]) for s in sequences}
    if len(rests) > 1 or any(s.ndim == 0 for s in sequences):
        shapes = ", ".join(str(s.shape) for s in sequences)
        raise RuntimeError(f"pad_sequence: the sequences must agree in every dimension after the first, "
                           f"got shapes {shapes}")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        if s.shape[0] == longest:
            padded.append(s)
            continue
        shape = (longest - s.shape[0], *s.shape[1:])
        filler = new_leaf(namespace(s.data).full(shape, padding_value, s.dtype))  # where s lives
        padded.append(cat([s, filler] if padding_side == "right" else [filler, s]))
    return stack(padded, 0 if batch_first else 1)

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# --- one step of each kind: the formulas -----------------------------------------------------------


def _rnn_step(x_part: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, nonlinearity: str) -> Tensor:
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh); `x_part` is the input's projection."""
    pre = x_part + linear(h, w_hh, b_hh)
    return tanh(pre) if nonlinearity == "tanh" else relu(pre)


def _lstm_step(x_part: Tensor, state: tuple[Tensor, Tensor], w_hh: Tensor,
               b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    """i, f, g, o from the projections; c' = f c + i g; h' = o tanh(c')."""
    h, c = state
    i, f, g, o = (x_part + linear(h, w_hh, b_hh)).chunk(4, -1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    return sigmoid(o) * tanh(c), c


def _gru_step(x_part: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    """r, z from both projections; n = tanh(x_n + r (h W_hn^T + b_hn)); h' = (1 - z) n + z h."""
    x_r, x_z, x_n = x_part.chunk(3, -1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, -1)
    r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
    n = tanh(x_n + r * h_n)
    return (1 - z) * n + z * h


def _zeros(like: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The default initial state: zeros in `like`'s dtype, where its data lives."""
    return new_leaf(namespace(like.data).zeros(shape, dtype=like.dtype))


# --- the layers ------------------------------------------------------------------------------------


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters, the unbatched and batch_first layouts, the
    layers stacked (with dropout between them) and the two directions. `mode` ('RNN_TANH',
    'RNN_RELU', 'LSTM' or 'GRU') picks the step, as PyTorch's base class takes it."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if mode not in _GATES:
            raise ValueError(f"{name}: Unrecognized RNN mode: {mode}")
        self.mode = mode
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"{name}: hidden_size must be a positive integer, got {hidden_size!r}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"{name}: num_layers must be a positive integer, got {num_layers!r}")
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(f"{name}: dropout should be a number in range [0, 1] representing the "
                             f"probability of an element being zeroed, got {dropout!r}")
        if proj_size:
            raise NotImplementedError(f"{name}: proj_size is not supported")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, 0
        gates = _GATES[self.mode] * hidden_size
        dtype = dtypes.or_default(dtype)
        bound = 1 / math.sqrt(hidden_size)
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size * directions
            for suffix in ("", "_reverse")[:directions]:
                self.register_parameter(f"weight_ih_l{layer}{suffix}",
                                        Parameter(_uniform(bound, (gates, width), dtype)))
                self.register_parameter(f"weight_hh_l{layer}{suffix}",
                                        Parameter(_uniform(bound, (gates, hidden_size), dtype)))
                if bias:
                    for kind in ("ih", "hh"):
                        self.register_parameter(f"bias_{kind}_l{layer}{suffix}",
                                                Parameter(_uniform(bound, (gates,), dtype)))
        _place(self, device)

    def _weights(self, layer: int, suffix: str) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """(weight_ih, weight_hh, bias_ih, bias_hh) of one layer and direction (biases may be None)."""
        return tuple(getattr(self, f"{kind}_l{layer}{suffix}", None)
                     for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Any]:  # noqa: A002
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: expected input to be 2D or 3D, got {input.ndim}D "
                             f"tensor of shape {tuple(input.shape)}")
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)  # (L, N, features) inside
        states = self._initial_states(x, hx, batched)
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for d, suffix in enumerate(("", "_reverse")[:directions]):
                state = tuple(s[layer * directions + d] for s in states)
                out, last = self._run(x, state, *self._weights(layer, suffix), reverse=d == 1)
                outputs.append(out)
                finals.append(last)
            x = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = dropout(x, self.dropout)
        return self._packed(x, finals, batched)

    def _initial_states(self, x: Tensor, hx: Any, batched: bool) -> tuple[Tensor, ...]:
        """The initial hidden state(s), (layers * directions, N, hidden): given, or zeros."""
        count = self.num_layers * (2 if self.bidirectional else 1)
        shape = (count, x.shape[1], self.hidden_size)
        given = (hx,) if isinstance(hx, Tensor) else hx
        if given is None:
            zeros = _zeros(x, shape)
            return (zeros, zeros) if self.mode == "LSTM" else (zeros,)
        expected = shape if batched else (count, self.hidden_size)
        for state in given:
            if tuple(state.shape) != expected:
                raise RuntimeError(f"{type(self).__name__}: expected hidden size {expected}, got "
                                   f"{tuple(state.shape)}")
        return tuple(state if batched else state.unsqueeze(1) for state in given)

    def _run(self, x: Tensor, state: tuple[Tensor, ...], w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None, b_hh: Tensor | None, reverse: bool) -> tuple[Tensor, tuple[Tensor, ...]]:
        """One direction of one layer over the sequence: (outputs (L, N, hidden), final state)."""
        projected = linear(x, w_ih, b_ih)  # every step's input projection in one matmul
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outputs: list[Tensor] = [None] * x.shape[0]  # type: ignore[list-item]
        for t in steps:
            state = self._step(projected[t], state, w_hh, b_hh)
            outputs[t] = state[0]
        return stack(outputs, 0), state

    def _step(self, x_part: Tensor, state: tuple[Tensor, ...], w_hh: Tensor,
              b_hh: Tensor | None) -> tuple[Tensor, ...]:
        if self.mode == "LSTM":
            return _lstm_step(x_part, (state[0], state[1]), w_hh, b_hh)
        if self.mode == "GRU":
            return (_gru_step(x_part, state[0], w_hh, b_hh),)
        return (_rnn_step(x_part, state[0], w_hh, b_hh, "tanh" if self.mode == "RNN_TANH" else "relu"),)

    def _packed(self, x: Tensor, finals: list[tuple[Tensor, ...]], batched: bool) -> tuple[Tensor, Any]:
        """(output, h_n) in the caller's layout (LSTM: (output, (h_n, c_n)))."""
        output = x.transpose(0, 1) if batched and self.batch_first else x
        h_n = stack([state[0] for state in finals], 0)
        if not batched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
        if self.mode != "LSTM":
            return output, h_n
        c_n = stack([state[1] for state in finals], 0)
        return output, (h_n, c_n if batched else c_n.squeeze(1))

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (`nonlinearity='relu'`
    for relu). `forward(input, h0=None)` gives (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}; select from 'tanh' or 'relu'")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o; c_t = f c_{t-1} + i g, h_t = o tanh(c_t).
    `forward(input, (h0, c0)=None)` gives (output, (h_n, c_n))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z and candidate n; h_t = (1 - z) n + z h_{t-1}.
    `forward(input, h0=None)` gives (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


# --- the cells: one step, for loops written by hand -------------------------------------------------


class RNNCellBase(Module):
    """A cell's parameters (`weight_ih`, `weight_hh`, `bias_ih`, `bias_hh`, PyTorch's shapes and
    initialisation, `num_chunks` gates stacked) and its input checks: (N, input_size) or
    unbatched (input_size,)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self._num_chunks = num_chunks
        dtype = dtypes.or_default(dtype)
        bound = 1 / math.sqrt(hidden_size)
        rows = num_chunks * hidden_size
        self.weight_ih = Parameter(_uniform(bound, (rows, input_size), dtype))
        self.weight_hh = Parameter(_uniform(bound, (rows, hidden_size), dtype))
        self.register_parameter("bias_ih", Parameter(_uniform(bound, (rows,), dtype)) if bias else None)
        self.register_parameter("bias_hh", Parameter(_uniform(bound, (rows,), dtype)) if bias else None)
        _place(self, device)

    def _prepared(self, input: Tensor, hx: Any) -> tuple[Tensor, tuple[Tensor, ...], bool]:  # noqa: A002
        """(batched input, batched states (zeros if none given), whether the input was batched)."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: expected input to be 1D or 2D, got {input.ndim}D "
                             f"tensor of shape {tuple(input.shape)}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            states = (_zeros(x, (x.shape[0], self.hidden_size)),) * (2 if self._num_chunks == 4 else 1)
        else:
            given = (hx,) if isinstance(hx, Tensor) else hx
            states = tuple(s if batched else s.unsqueeze(0) for s in given)
        return x, states, batched

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    """One Elman step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}; select from 'tanh' or 'relu'")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, (h,), batched = self._prepared(input, hx)
        out = _rnn_step(linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                        self.nonlinearity)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: `cell(x, (h, c))` gives (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:  # noqa: A002
        x, (h, c), batched = self._prepared(input, hx)
        h, c = _lstm_step(linear(x, self.weight_ih, self.bias_ih), (h, c), self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: `cell(x, h)` gives h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, (h,), batched = self._prepared(input, hx)
        out = _gru_step(linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)
