"""`tensorgrad.nn`: building blocks for networks (tutorial chapter 9).

`functional` holds the stateless ops under PyTorch's names: activations, `linear` and the
losses.
"""

from tensorgrad.nn import functional

__all__ = ["functional"]
