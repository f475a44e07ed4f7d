"""`tensorgrad.utils.data.dataset`: PyTorch's import path for the data sets and `random_split`
(the objects of `tensorgrad.data`, not copies)."""

from tensorgrad.data import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split"]
