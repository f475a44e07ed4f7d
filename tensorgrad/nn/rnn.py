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
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from tensorgrad import dtypes
from tensorgrad.autograd import record
from tensorgrad.checks import ArgumentValueError
from tensorgrad.device import array_like, namespace, to_numpy
from tensorgrad.elementwise import dropout, relu, sigmoid, tanh
from tensorgrad.higher_order import linear_graph
from tensorgrad.matmul import linear
from tensorgrad.movement import cat, stack
from tensorgrad.nn.modules import Module, Parameter, _place, _uniform
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "pad_sequence",
           "PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpack_sequence", "unpad_sequence", "invert_permutation"]


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Sequences of lengths L_i (each (L_i, *)) padded to the longest and stacked: (L, B, *), or
    (B, L, *) with `batch_first`, as `torch.nn.utils.rnn.pad_sequence` (`nn.utils.rnn` here too).
    The result has the first sequence's dtype, as PyTorch's. The gradient flows back to each
    sequence."""
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ArgumentValueError(f"pad_sequence: padding_side must be 'left' or 'right', "
                                 f"got {padding_side!r}")
    rests = {tuple(s.shape[1:]) for s in sequences}
    if len(rests) > 1 or any(s.ndim == 0 for s in sequences):
        shapes = ", ".join(str(s.shape) for s in sequences)
        raise RuntimeError(f"pad_sequence: the sequences must agree in every dimension after the first, "
                           f"got shapes {shapes}")
    longest = max(s.shape[0] for s in sequences)
    dtype = sequences[0].dtype  # PyTorch's: the first sequence's, the others cast to it (no promotion)
    if dtype.kind in "iu" and not np.iinfo(dtype).min <= padding_value <= np.iinfo(dtype).max:
        raise RuntimeError(f"pad_sequence: padding_value {padding_value} cannot be converted to type {dtype} "
                           "without overflow")
    padded = []
    for s in sequences:
        if s.dtype != dtype:
            s = s.to(dtype)
        if s.shape[0] == longest:
            padded.append(s)
            continue
        shape = (longest - s.shape[0], *s.shape[1:])
        filler = new_leaf(namespace(s.data).full(shape, padding_value, s.dtype))  # where s lives
        padded.append(cat([s, filler] if padding_side == "right" else [filler, s]))
    return stack(padded, 0 if batch_first else 1)


# --- packed sequences: a batch of different lengths, time step by time step ------------------------


class _PackedFields(NamedTuple):
    """PackedSequence's four fields (a base, so that PackedSequence can complete them on creation)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """A batch of sequences of different lengths packed time step by time step, as
    `torch.nn.utils.rnn.PackedSequence`: `data` (sum of lengths, *) holds step 0 of every
    sequence, then step 1 of those still running, and so on, longest first; `batch_sizes[t]` (an
    int64 CPU tensor) counts the sequences running at step t. `sorted_indices[j]` is the batch
    position of the j-th longest sequence (None when the batch came sorted) and
    `unsorted_indices` its inverse. Made by `pack_padded_sequence` and `pack_sequence`; the
    recurrent layers take and return it."""

    __slots__ = ()

    def __new__(cls, data: Tensor, batch_sizes: Tensor, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """`data` in another dtype and/or on another device (the indices follow it to the device;
        `batch_sizes` stays on the CPU). Self if nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = (None if i is None else i.to(device=data.device)
                   for i in (self.sorted_indices, self.unsorted_indices))
        return PackedSequence(data, self.batch_sizes, *indices)

    def cpu(self) -> PackedSequence:
        """The packed sequence with its data on the CPU."""
        return self.to(device="cpu")

    def cuda(self, device: Any = None) -> PackedSequence:
        """The packed sequence with its data on a GPU."""
        return self.to(device="cuda" if device is None else device)

    def float(self) -> PackedSequence:
        """`data` as float32."""
        return self.to(dtypes.float32)

    def double(self) -> PackedSequence:
        """`data` as float64."""
        return self.to(dtypes.float64)

    def long(self) -> PackedSequence:
        """`data` as int64."""
        return self.to(dtypes.int64)

    @property
    def is_cuda(self) -> bool:
        """Whether `data` lives on a GPU."""
        return self.data.is_cuda


def _rows_of(x: Tensor, dim: int, index: Any, op: str) -> Tensor:
    """x's slices along `dim` at `index`, positions that never repeat (a permutation, a packing).
    Gradient: each slice's gradient put back in its place, zeros elsewhere."""
    data = x.data
    xp = namespace(data)
    idx = array_like(index, data, dtype=dtypes.int64)
    where = (slice(None),) * dim + (idx,)

    def vjp(grad: np.ndarray) -> np.ndarray:
        full = xp.zeros(data.shape, dtype=grad.dtype)
        full[where] = grad
        return full

    return record(xp.take(data, idx, axis=dim), op, (x,), vjp, saved=(),
                  graph_vjp=linear_graph(op, vjp, partial(_rows_of, dim=dim, index=idx, op=op)))


def _rows_into(x: Tensor, index: Any, rows: int, fill: float, op: str) -> Tensor:
    """(rows, *x.shape[1:]) filled with `fill`, x's rows put at `index` (never repeating).
    Gradient: the output's gradient at `index`."""
    data = x.data
    idx = array_like(index, data, dtype=dtypes.int64)
    out = namespace(data).full((rows, *data.shape[1:]), fill, dtype=data.dtype)
    out[idx] = data
    vjp = partial(_taken, idx)
    return record(out, op, (x,), vjp, saved=(),
                  graph_vjp=linear_graph(op, vjp, partial(_rows_into, index=idx, rows=rows, fill=0.0, op=op)))


def _taken(idx: Any, grad: Any) -> Any:
    return grad[idx]


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation: out[permutation[i]] = i (None for None)."""
    if permutation is None:
        return None
    order = to_numpy(permutation.data).astype(np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return new_leaf(array_like(inverse, permutation.data))


def _host_lengths(lengths: Any, op: str) -> np.ndarray:
    """`lengths` (a list or a 1-D integer tensor) as an int64 numpy vector, checked."""
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1 or lengths.dtype.kind not in "iu":
            raise RuntimeError(f"{op}: 'lengths' argument should be a 1D int64 tensor, got a {lengths.ndim}D "
                               f"{lengths.dtype} tensor")
        return to_numpy(lengths.data).astype(np.int64)
    host = np.asarray(lengths)
    if host.ndim != 1 or host.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: 'lengths' argument should be a 1D list of integers, got shape "
                           f"{host.shape} and dtype {host.dtype}")
    return host.astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """A padded batch (T, B, *) (or (B, T, *) with `batch_first`) of sequences of `lengths` as a
    PackedSequence: the first lengths[b] steps of each sequence, time step by time step, longest
    first. `enforce_sorted=False` sorts the batch by length first (recorded in `sorted_indices`).
    Gradient: each packed row's gradient back to its place in `input`, zeros at the padding."""
    op = "pack_padded_sequence"
    host = _host_lengths(lengths, op)
    if input.ndim < 2:
        raise RuntimeError(f"{op}: expected input of at least 2 dimensions (time and batch), got shape "
                           f"{tuple(input.shape)}")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else (input.shape[0], input.shape[1])
    if host.size != batch:
        raise RuntimeError(f"{op}: Expected `len(lengths)` to be equal to batch_size, but got {host.size} "
                           f"(batch_size={batch})")
    if host.size and host.min() <= 0:
        raise RuntimeError(f"{op}: Length of all samples has to be greater than 0, but found an element in "
                           f"'lengths' that is <= 0")
    if host.size and host.max() > steps:
        raise RuntimeError(f"{op}: lengths {host.tolist()} exceed the {steps} time steps of input of shape "
                           f"{tuple(input.shape)}")
    if enforce_sorted:
        if np.any(host[1:] > host[:-1]):
            raise RuntimeError(f"{op}: `lengths` array must be sorted in decreasing order when "
                               f"`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                               f"pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
                               f"you do not need ONNX exportability.")
        order, sorted_indices = np.arange(batch), None
    else:
        order = np.argsort(-host, kind="stable")  # ties keep their batch order, as PyTorch's sort does
        sorted_indices = new_leaf(array_like(order, input.data, dtype=dtypes.int64))
    ranked = host[order]
    batch_sizes = (np.arange(ranked[0] if batch else 0)[:, None] < ranked[None, :]).sum(1)
    index = _packed_positions(batch_sizes, order, steps, batch_first)
    flat = input.reshape(steps * batch, *input.shape[2:])
    data = _rows_of(flat, 0, index, "pack_padded_sequence")
    return PackedSequence(data, new_leaf(batch_sizes.astype(np.int64)), sorted_indices,
                          invert_permutation(sorted_indices))


def _packed_positions(batch_sizes: np.ndarray, order: np.ndarray, steps: int,
                      batch_first: bool) -> np.ndarray:
    """Where each packed row sits in the padded batch flattened over (time, batch), or over
    (batch, time) with `batch_first`: step t of the j-th longest sequence, batch position order[j]."""
    t, j = np.nonzero(np.arange(order.size)[None, :] < batch_sizes[:, None])  # time-major: packed order
    b = order[j]
    return b * steps + t if batch_first else t * order.size + b


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of `pack_padded_sequence`: (padded (T, B, *) or (B, T, *) with `batch_first`,
    in the original batch order and padded with `padding_value` up to `total_length` steps if
    given, lengths as an int64 CPU tensor). Gradient: the padded gradient at the packed places."""
    data, batch_sizes = sequence.data, to_numpy(sequence.batch_sizes.data).astype(np.int64)
    steps = int(batch_sizes.size)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"pad_packed_sequence: Expected total_length to be at least the length of the "
                             f"longest sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = int(batch_sizes[0]) if batch_sizes.size else 0
    order = (np.arange(batch) if sequence.sorted_indices is None
             else to_numpy(sequence.sorted_indices.data).astype(np.int64))
    index = _packed_positions(batch_sizes, order, steps, batch_first)
    flat = _rows_into(data, index, steps * batch, padding_value, "pad_packed_sequence")
    padded = flat.reshape(*((batch, steps) if batch_first else (steps, batch)), *data.shape[1:])
    lengths = np.empty(batch, dtype=np.int64)
    lengths[order] = (batch_sizes[:, None] > np.arange(batch)[None, :]).sum(0)
    return padded, new_leaf(lengths)


def pack_sequence(sequences: Any, enforce_sorted: bool = True) -> PackedSequence:
    """Sequences of lengths L_i (each (L_i, *)) as one PackedSequence: `pad_sequence` then
    `pack_padded_sequence`. Gradient: back to each sequence."""
    sequences = list(sequences)
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length: a list of (lengths[b], *)
    tensors (views into `padded_sequences`)."""
    host = _host_lengths(lengths, "unpad_sequence")
    batch = padded_sequences.shape[0 if batch_first else 1]
    if host.size != batch:
        raise ValueError(f"unpad_sequence: got {host.size} lengths for a batch of {batch}, padded shape "
                         f"{tuple(padded_sequences.shape)}")
    if batch_first:
        return [padded_sequences[b, :int(n)] for b, n in enumerate(host)]
    return [padded_sequences[:int(n), b] for b, n in enumerate(host)]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The sequences of a PackedSequence, in the original batch order, as a list of (L_i, *)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# --- one step of each kind: the formulas -----------------------------------------------------------


def _rnn_step(x_part: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, nonlinearity: str) -> Tensor:
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh); `x_part` is the input's projection."""
    pre = x_part + linear(h, w_hh, b_hh)
    return tanh(pre) if nonlinearity == "tanh" else relu(pre)


def _lstm_step(x_part: Tensor, state: tuple[Tensor, Tensor], w_hh: Tensor,
               b_hh: Tensor | None, w_hr: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """i, f, g, o from the projections; c' = f c + i g; h' = o tanh(c') (then h' W_hr^T with a
    projection)."""
    h, c = state
    i, f, g, o = (x_part + linear(h, w_hh, b_hh)).chunk(4, -1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    return (h if w_hr is None else linear(h, w_hr)), c


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
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError(f"{name}: proj_size should be a positive integer or zero to disable "
                             f"projections, got {proj_size!r}")
        if proj_size >= hidden_size:
            raise ValueError(f"{name}: proj_size has to be smaller than hidden_size, got "
                             f"proj_size={proj_size} and hidden_size={hidden_size}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN or GRU")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        out_size = proj_size or hidden_size  # the width of h: the projection's, if there is one
        gates = _GATES[self.mode] * hidden_size
        dtype = dtypes.or_default(dtype)
        bound = 1 / math.sqrt(hidden_size)
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            width = input_size if layer == 0 else out_size * directions
            for suffix in ("", "_reverse")[:directions]:
                self.register_parameter(f"weight_ih_l{layer}{suffix}",
                                        Parameter(_uniform(bound, (gates, width), dtype)))
                self.register_parameter(f"weight_hh_l{layer}{suffix}",
                                        Parameter(_uniform(bound, (gates, out_size), dtype)))
                if bias:
                    for kind in ("ih", "hh"):
                        self.register_parameter(f"bias_{kind}_l{layer}{suffix}",
                                                Parameter(_uniform(bound, (gates,), dtype)))
                if proj_size:
                    self.register_parameter(f"weight_hr_l{layer}{suffix}",
                                            Parameter(_uniform(bound, (proj_size, hidden_size), dtype)))
        _place(self, device)

    def _weights(self, layer: int, suffix: str) -> tuple[Tensor | None, ...]:
        """(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr) of one layer and direction (biases and
        the projection may be None)."""
        return tuple(getattr(self, f"{kind}_l{layer}{suffix}", None)
                     for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, Any]:  # noqa: A002
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: expected input to be 2D or 3D, got {input.ndim}D "
                             f"tensor of shape {tuple(input.shape)}")
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)  # (L, N, features) inside
        states = self._initial_states(x, x.shape[1], hx, batched)
        x, finals = self._layers(x, states, self._run)
        return self._packed(x, finals, batched)

    def _layers(self, x: Tensor, states: tuple[Tensor, ...],
                run: Callable[..., tuple[Tensor, tuple[Tensor, ...]]]) -> tuple[Tensor, list]:
        """Every layer and direction over x, `run(x, state, *weights, reverse=)` doing one of them:
        (the last layer's output, each direction's final state, layer by layer)."""
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for d, suffix in enumerate(("", "_reverse")[:directions]):
                state = tuple(s[layer * directions + d] for s in states)
                out, last = run(x, state, *self._weights(layer, suffix), reverse=d == 1)
                outputs.append(out)
                finals.append(last)
            x = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = dropout(x, self.dropout)
        return x, finals

    def _forward_packed(self, input: PackedSequence, hx: Any) -> tuple[PackedSequence, Any]:  # noqa: A002
        """The layers over a PackedSequence: each step runs on the sequences still going (a prefix of
        the batch, as packing sorts it by length), so each keeps the state of its own last step."""
        sizes = [int(n) for n in to_numpy(input.batch_sizes.data)]
        order, unorder = input.sorted_indices, input.unsorted_indices
        if hx is not None and order is not None:  # the caller's batch order, to the packed one
            given = (hx,) if isinstance(hx, Tensor) else tuple(hx)
            hx = tuple(_rows_of(h, 1, order.data, "index_select") for h in given)
        states = self._initial_states(input.data, sizes[0] if sizes else 0, hx, True)
        x, finals = self._layers(input.data, states, partial(self._run_packed, sizes=sizes))
        hidden = [stack([state[k] for state in finals], 0) for k in range(len(finals[0]))]
        if unorder is not None:  # back to the caller's batch order
            hidden = [_rows_of(h, 1, unorder.data, "index_select") for h in hidden]
        output = PackedSequence(x, input.batch_sizes, order, unorder)
        return output, (hidden[0], hidden[1]) if self.mode == "LSTM" else hidden[0]

    def _run_packed(self, x: Tensor, state: tuple[Tensor, ...], w_ih: Tensor, w_hh: Tensor,
                    b_ih: Tensor | None, b_hh: Tensor | None, w_hr: Tensor | None, *, reverse: bool,
                    sizes: list[int]) -> tuple[Tensor, tuple[Tensor, ...]]:
        """One direction of one layer over packed rows: (outputs, packed as x, final state). Step t
        runs on the first sizes[t] sequences; forward, the others have ended and their states are
        set aside; in reverse, a sequence joins (from its initial state) at its own last step."""
        projected = linear(x, w_ih, b_ih)  # every step's input projection in one matmul
        starts = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        outputs: list[Tensor] = [None] * len(sizes)  # type: ignore[list-item]
        if not reverse:
            ended: list[tuple[Tensor, ...]] = []  # states of the sequences that stopped, last ones first
            for t, size in enumerate(sizes):
                if size < state[0].shape[0]:
                    ended.append(tuple(s[size:] for s in state))
                    state = tuple(s[:size] for s in state)
                state = self._step(projected[starts[t]:starts[t + 1]], state, w_hh, b_hh, w_hr)
                outputs[t] = state[0]
            if ended:
                parts = [state, *ended[::-1]]
                state = tuple(cat([part[k] for part in parts], 0) for k in range(len(state)))
            return cat(outputs, 0), state
        initial = state
        state = tuple(s[:sizes[-1]] for s in initial)
        for t in range(len(sizes) - 1, -1, -1):
            if sizes[t] > state[0].shape[0]:  # sequences whose last step is t start here
                state = tuple(cat([s, s0[s.shape[0]:sizes[t]]], 0)
                              for s, s0 in zip(state, initial, strict=True))
            state = self._step(projected[starts[t]:starts[t + 1]], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        return cat(outputs, 0), state

    def _initial_states(self, x: Tensor, batch: int, hx: Any, batched: bool) -> tuple[Tensor, ...]:
        """The initial hidden state(s), (layers * directions, batch, hidden) (h is proj_size wide
        with a projection): given, or zeros in x's dtype where x lives."""
        count = self.num_layers * (2 if self.bidirectional else 1)
        widths = (self.proj_size or self.hidden_size, self.hidden_size)[:2 if self.mode == "LSTM" else 1]
        given = (hx,) if isinstance(hx, Tensor) else hx
        if given is None:
            zeros = [_zeros(x, (count, batch, width)) for width in widths]
            return (zeros[0], zeros[0]) if len(widths) == 2 and widths[0] == widths[1] else tuple(zeros)
        for state, width in zip(given, widths, strict=False):
            expected = (count, batch, width) if batched else (count, width)
            if tuple(state.shape) != expected:
                raise RuntimeError(f"{type(self).__name__}: expected hidden size {expected}, got "
                                   f"{tuple(state.shape)}")
        return tuple(state if batched else state.unsqueeze(1) for state in given)

    def _run(self, x: Tensor, state: tuple[Tensor, ...], w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None, b_hh: Tensor | None, w_hr: Tensor | None,
             reverse: bool) -> tuple[Tensor, tuple[Tensor, ...]]:
        """One direction of one layer over the sequence: (outputs (L, N, hidden), final state)."""
        projected = linear(x, w_ih, b_ih)  # every step's input projection in one matmul
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outputs: list[Tensor] = [None] * x.shape[0]  # type: ignore[list-item]
        for t in steps:
            state = self._step(projected[t], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        return stack(outputs, 0), state

    def _step(self, x_part: Tensor, state: tuple[Tensor, ...], w_hh: Tensor,
              b_hh: Tensor | None, w_hr: Tensor | None) -> tuple[Tensor, ...]:
        if self.mode == "LSTM":
            return _lstm_step(x_part, (state[0], state[1]), w_hh, b_hh, w_hr)
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
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
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
                 bidirectional: bool = False, device: Any = None, dtype: Any = None,
                 proj_size: int = 0) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}; select from 'tanh' or 'relu'")
        # (proj_size is taken only to refuse it, as PyTorch does: it is LSTM's)
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, proj_size, device, dtype)
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
        text = f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")
        if getattr(self, "nonlinearity", "tanh") != "tanh":  # RNNCell's relu, as PyTorch shows it
            text += f", nonlinearity={self.nonlinearity}"
        return text


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
