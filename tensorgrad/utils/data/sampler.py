"""`tensorgrad.utils.data.sampler`: PyTorch's import path for the samplers (the objects of
`tensorgrad.data`, not copies)."""

from tensorgrad.data import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]
