"""aot.fft: torch.fft's functions with numpy.fft's semantics, on generated LLVM kernels.

Complex and real transforms in 1, 2 and N dimensions (`n`/`s`, `axis`/`axes` or torch's `dim`,
`norm`), frequency helpers and shifts. float32/complex64 stay single precision; everything else
computes in double. Kernels are compiled once per precision and host (cached on disk); plans
(factorisation and twiddles) are data, kept in an LRU cache: `plan_cache.clear()`,
`plan_cache.stats()`. Threads: AOT_NUM_THREADS (default: the usable cores). An eager call whose
key (shape, strides, dtype, n, axis, norm) was seen before is one allocation and one native call
(_fast, _public).
"""
from __future__ import annotations

from . import _public
from ._public import fft, fft2, fftn, ifft, ifft2, ifftn, irfft, irfft2, irfftn, rfft, rfft2, rfftn

# (every public transform comes from _public: its eager fast path, and for traced calls (aot.fx,
# aot.compile) one call of the public function, which dispatches itself)
hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn = (_public.hfft, _public.ihfft, _public.hfft2, _public.ihfft2, _public.hfftn,
                                             _public.ihfftn)
from ._exec import PLANS as plan_cache
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "plan_cache", "rfft", "rfft2",
           "rfftfreq", "rfftn"]
