"""`tg.backends.mkldnn`: oneDNN (MKL-DNN) kernels, which tensorgrad does not call (numpy's BLAS
does its matrix products; see `tg.backends`)."""

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether oneDNN kernels are used: never here."""
    return False
