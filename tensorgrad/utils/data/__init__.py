"""`tensorgrad.utils.data`: PyTorch's import path for the data sets, samplers and `DataLoader`
of `tensorgrad.data` (the same objects, not copies).

PyTorch's submodules are here too, so code that imports from them runs unchanged:
`dataset` (the data sets and `random_split`), `sampler`, `dataloader` (`DataLoader`,
`default_collate`, `default_convert`, `get_worker_info`) and `_utils.collate`.
"""

from tensorgrad.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)
from tensorgrad.utils.data import _utils, dataloader, dataset, sampler  # noqa: F401 - _utils: PyTorch's path

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info",
           "random_split", "dataset", "sampler", "dataloader"]
