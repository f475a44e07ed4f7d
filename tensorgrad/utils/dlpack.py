"""`tensorgrad.utils.dlpack`: where PyTorch code looks for DLPack (`torch.utils.dlpack`).

`to_dlpack(t)` gives a capsule of a tensor's memory and `from_dlpack(x)` takes a capsule or any
object with `__dlpack__`; the code lives in `tensorgrad.interop`.
"""

from tensorgrad.interop import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
