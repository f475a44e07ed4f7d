"""`tg.signal`: signal processing under `torch.signal`'s names; `tg.signal.windows` holds the
window functions (Hann, Hamming, Kaiser, ...) that taper a frame before a Fourier transform."""

from tensorgrad.signal import windows

__all__ = ["windows"]
