"""`tg.backends`: PyTorch's backend switches and queries, for training scripts that set them.

tensorgrad's arrays are numpy's (CuPy's on a GPU); it calls no cuDNN, MPS or oneDNN kernels of
its own. So `tg.backends.mps.is_available()` and `tg.backends.cudnn.is_available()` are False,
and the switches (`cudnn.benchmark`, `cudnn.deterministic`, `cuda.matmul.allow_tf32`, ...) are
kept, checked and reported as PyTorch's are, without changing a result: a script that writes

    device = "cuda" if tg.cuda.is_available() else "mps" if tg.backends.mps.is_available() else "cpu"
    tg.backends.cudnn.benchmark = True

runs unchanged. `cuda.matmul.allow_tf32` is the same setting as `tg.set_float32_matmul_precision`
("high" allows TF32), as in PyTorch.
"""

from tensorgrad.backends import cuda, cudnn, mkldnn, mps

__all__ = ["cuda", "cudnn", "mkldnn", "mps"]
