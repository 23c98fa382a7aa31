"""The FFT kernel module built for SIMD widths other than the host's (AVX2 and SSE hosts get
them): every pass layout (Wide tiers, k pairs, Split work buffers, lanes) against numpy."""
from __future__ import annotations

import functools

import cffi
import numpy as np
import pytest

from codegen.fft import FLAG_FORWARD, FLAG_LANES, emit_module, entry_name, make_cplan
from codegen.fft.names import FLAG_BLOCK, LANE_BLOCK, LANE_BLOCK_MAX_N, scratch_values
from codegen.targets import emit_object, host_target, optimize
from codegen.targets.base import parse
from runtime.jit import JitEngine

ffi = cffi.FFI()
_SIG = ("void(*)(const int64_t *, const {T} *, const {T} *, {T} *, int64_t, int64_t, int64_t, int64_t, "
        "int64_t, int32_t, {T}, {T} *)")
_TYPES = {"f64": ("double", np.float64, np.complex128, 1e-14), "f32": ("float", np.float32, np.complex64, 2e-6)}
# odd and even radix mixes, ido == VLEN/2 passes, last radices below VLEN, the codelets of 9, 11 and
# 13, generic radices (17, 19, 23)
SIZES = [2, 3, 6, 8, 12, 16, 20, 24, 32, 48, 64, 96, 100, 128, 250, 256, 1000, 1024, 1536, 4096, 176, 832, 1001,
         144, 216, 243, 272, 608, 23 * 8]


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


@pytest.mark.parametrize("precision, vlen", [("f64", 2), ("f64", 4), ("f32", 8)])
def test_lane_blocks_of_columns(precision, vlen):
    """FLAG_BLOCK: neighbouring transforms (columns, idist == 1) gathered LANE_BLOCK lane groups at
    a time, then the remaining groups and single columns; scaled, into wider columns, into rows
(odist != 1: scattered a lane group at a time) and in place."""
    ctype, real, cdtype, tol = _TYPES[precision]
    _, c2c = _entry(precision, vlen)
    rng = np.random.default_rng(2)
    ptr = functools.partial(ffi.cast, ctype + " *")
    cols = 2 * LANE_BLOCK * vlen + 3 * vlen + 1
    flags = FLAG_LANES | FLAG_BLOCK
    for n in (2, 12, 64, 100, 128, 1000, LANE_BLOCK_MAX_N, 2 * LANE_BLOCK_MAX_N):
        plan = make_cplan(n, cdtype)
        x = (rng.standard_normal((n, cols)) + 1j * rng.standard_normal((n, cols))).astype(cdtype)
        want = np.fft.fft(x.astype(np.complex128), axis=0)
        for forward, out in ((True, "columns"), (False, "columns"), (True, "in place"), (False, "rows")):
            y = {"in place": x.copy(), "columns": np.zeros((n, cols + 5), cdtype),
                 "rows": np.zeros((cols, n + 3), cdtype)[:, :n].T}[out]
            ostride, odist = (s // x.itemsize for s in y.strides)
            scratch = np.full(scratch_values(n, vlen, 1, flags), np.nan, real)
            c2c(ffi.cast("int64_t *", plan.header.ctypes.data), ptr(plan.twiddles.ctypes.data),
                ptr(y.ctypes.data if out == "in place" else x.ctypes.data), ptr(y.ctypes.data), cols,
                cols, 1, ostride, odist, flags | (FLAG_FORWARD if forward else 0), 0.5, ptr(scratch.ctypes.data))
            expect = 0.5 * (want if forward else np.conj(np.fft.fft(np.conj(x.astype(np.complex128)), axis=0)))
            err = np.abs(y[:, :cols] - expect).max() / np.abs(expect).max()
            assert err < tol, (n, forward, out, err)
            if out != "in place":
                assert not (y[:, cols:] if out == "columns" else y.base[:, n:]).any(), "wrote past the transforms"
