"""aot.fft: torch.fft's functions with numpy.fft's semantics, on generated LLVM kernels.

Complex and real transforms in 1, 2 and N dimensions (`n`/`s`, `axis`/`axes` or torch's `dim`,
`norm`), frequency helpers and shifts. float32/complex64 stay single precision; everything else
computes in double. Kernels are compiled once per precision and host (cached on disk); plans
(factorisation and twiddles) are data, kept in an LRU cache: `plan_cache.clear()`,
`plan_cache.stats()`. Threads: AOT_NUM_THREADS (default: the usable cores).
"""
from __future__ import annotations

from ..fx._overrides import dispatchable
from . import _api

# dispatchable: traced calls (aot.fx, aot.compile) see one call of the public function
fft, ifft, rfft, irfft, hfft, ihfft = (dispatchable(getattr(_api, n))
                                       for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fft2, ifft2, rfft2, irfft2, hfft2, ihfft2 = (dispatchable(getattr(_api, n))
                                             for n in ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"))
fftn, ifftn, rfftn, irfftn, hfftn, ihfftn = (dispatchable(getattr(_api, n))
                                             for n in ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"))
from ._exec import PLANS as plan_cache
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "plan_cache", "rfft", "rfft2",
           "rfftfreq", "rfftn"]
