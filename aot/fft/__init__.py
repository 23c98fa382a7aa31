"""aot.fft: torch.fft's functions with numpy.fft's semantics, on generated LLVM kernels.

Complex and real transforms in 1, 2 and N dimensions (`n`/`s`, `axis`/`axes` or torch's `dim`,
`norm`), frequency helpers and shifts. float32/complex64 stay single precision; everything else
computes in double. Kernels are compiled once per precision and host (cached on disk); plans
(factorisation and twiddles) are data, kept in an LRU cache: `plan_cache.clear()`,
`plan_cache.stats()`. Threads: AOT_NUM_THREADS (default: the usable cores).
"""
from __future__ import annotations

from ._api import (
                   fft,
                   fft2,
                   fftn,
                   hfft,
                   hfft2,
                   hfftn,
                   ifft,
                   ifft2,
                   ifftn,
                   ihfft,
                   ihfft2,
                   ihfftn,
                   irfft,
                   irfft2,
                   irfftn,
                   rfft,
                   rfft2,
                   rfftn,
)
from ._exec import PLANS as plan_cache
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "plan_cache", "rfft", "rfft2",
           "rfftfreq", "rfftn"]
