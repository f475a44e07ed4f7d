"""`tensorgrad.utils`: where PyTorch code looks for its utilities (`torch.utils.data`).

`from tensorgrad.utils.data import DataLoader, TensorDataset` works as `torch.utils.data` does;
the code lives in `tensorgrad.data`. `tensorgrad.utils.checkpoint` is gradient checkpointing, as
`torch.utils.checkpoint`.
"""

from tensorgrad.utils import checkpoint, data, dlpack

__all__ = ["checkpoint", "data", "dlpack"]
