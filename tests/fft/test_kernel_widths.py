"""The FFT kernel module built for SIMD widths other than the host's (AVX2 and SSE hosts get
them): every pass layout (Wide tiers, k pairs, Split work buffers, lanes) against numpy."""
from __future__ import annotations

import functools

import cffi
import numpy as np
import pytest

from codegen.fft import FLAG_FORWARD, FLAG_LANES, emit_module, entry_name, make_cplan
from codegen.targets import emit_object, host_target, optimize
from codegen.targets.base import parse
from runtime.jit import JitEngine

ffi = cffi.FFI()
_SIG = ("void(*)(const int64_t *, const {T} *, const {T} *, {T} *, int64_t, int64_t, int64_t, int64_t, "
        "int64_t, int32_t, {T}, {T} *)")
_TYPES = {"f64": ("double", np.float64, np.complex128, 1e-14), "f32": ("float", np.float32, np.complex64, 2e-6)}
# odd and even radix mixes, ido == VLEN/2 passes, last radices below VLEN, generic radices (11, 13)
SIZES = [2, 3, 6, 8, 12, 16, 20, 24, 32, 48, 64, 96, 100, 128, 250, 256, 1000, 1024, 1536, 4096, 176, 832]


@functools.cache
def _entry(precision: str, vlen: int):
    target = host_target()
    engine = JitEngine()
    engine.add_object(emit_object(optimize(parse(str(emit_module(precision, vlen, target.triple))), target), target))
    ctype = _TYPES[precision][0]
    return engine, ffi.cast(_SIG.format(T=ctype), engine.address(entry_name(precision)))


@pytest.mark.parametrize("precision, vlen", [("f64", 2), ("f64", 4), ("f32", 8)])
def test_widths_against_numpy(precision, vlen):
    ctype, real, cdtype, tol = _TYPES[precision]
    _, c2c = _entry(precision, vlen)
    rng = np.random.default_rng(1)
    ptr = functools.partial(ffi.cast, ctype + " *")
    for n in SIZES:
        plan = make_cplan(n, cdtype)
        for howmany, lanes in ((1, 0), (3, 0), (2 * vlen + 1, FLAG_LANES)):
            x = (rng.standard_normal((howmany, n)) + 1j * rng.standard_normal((howmany, n))).astype(cdtype)
            for forward in (True, False):
                y = np.empty_like(x)
                scratch = np.empty(4 * n * vlen, real)
                c2c(ffi.cast("int64_t *", plan.header.ctypes.data), ptr(plan.twiddles.ctypes.data),
                    ptr(x.ctypes.data), ptr(y.ctypes.data), howmany, 1, n, 1, n,
                    (FLAG_FORWARD if forward else 0) | lanes, 1.0, ptr(scratch.ctypes.data))
                x128 = x.astype(np.complex128)
                want = np.fft.fft(x128, axis=-1) if forward else np.fft.ifft(x128, axis=-1) * n
                err = np.abs(y - want).max() / np.abs(want).max()
                assert err < tol, (n, howmany, lanes, forward, err)
