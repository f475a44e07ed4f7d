"""`tg.backends.mps`: Apple's Metal GPUs, which tensorgrad does not run on (see `tg.backends`)."""

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether tensors can be put on "mps": never here (the devices are "cpu" and "cuda")."""
    return False


def is_built() -> bool:
    """Whether MPS support is built in: it is not."""
    return False
