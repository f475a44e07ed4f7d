"""`tensorgrad.utils.data._utils`: PyTorch's (private, but widely imported) path to the default
collation functions, in `collate`."""

from tensorgrad.utils.data._utils import collate

__all__ = ["collate"]
