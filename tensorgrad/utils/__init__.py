"""`tensorgrad.utils`: where PyTorch code looks for its utilities (`torch.utils.data`).

`from tensorgrad.utils.data import DataLoader, TensorDataset` works as `torch.utils.data` does;
the code lives in `tensorgrad.data`.
"""

from tensorgrad.utils import data, dlpack

__all__ = ["data", "dlpack"]
