"""`tensorgrad.nn.utils.rnn`, as `torch.nn.utils.rnn`: padding and packed sequences for the
recurrent layers (defined beside them, in `tensorgrad.nn.rnn`), importable by PyTorch's path:
`from tensorgrad.nn.utils.rnn import pad_sequence`."""

from tensorgrad.nn.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]
