"""np.fft inside aot.compile'd functions: the fft/rfft/irfft ops lowered onto the generated kernels,
checked against numpy (values within the dtype's tolerance, result dtypes equal to numpy's)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aot

RNG = np.random.default_rng(1234)
NORMS = (None, "backward", "ortho", "forward")


def _data(shape, dtype):
    dtype = np.dtype(dtype)
    x = RNG.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _check(got, want, single: bool = False) -> None:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    scale = max(float(np.abs(want).max(initial=0.0)), 1.0)
    tol = 2e-6 if single or want.dtype in (np.complex64, np.float32) else 1e-13
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale * np.log2(max(want.size, 2)))


def _same(fn, *args):
    _check(aot.compile(fn)(*args), fn(*args))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_c2c_norms(norm, inverse, dtype):
    f = np.fft.ifft if inverse else np.fft.fft
    _same(lambda a: f(a, norm=norm), _data((3, 24), dtype))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 45, 71, 97, 128, 1009])
def test_c2c_lengths(n):
    """Small, odd, prime and Bluestein lengths (71, 97, 1009 take the chirp-z path)."""
    x = _data((2, n), np.complex128)
    _same(lambda a: np.fft.fft(a), x)
    _same(lambda a: np.fft.ifft(a, norm="ortho"), x.astype(np.complex64))


@pytest.mark.parametrize("n", [5, 8, 13])
@pytest.mark.parametrize("axis", [0, -1, -2])
def test_c2c_padding_truncation_axes(n, axis):
    x = _data((6, 8, 10), np.complex128)
    _same(lambda a: np.fft.fft(a, n=n, axis=axis), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_c2c_of_real_input(dtype):
    x = (_data((4, 10), np.float64) * 10).astype(dtype)
    _same(lambda a: np.fft.fft(a), x)


def test_strided_inputs():
    """Column steps, offsets, Fortran order and negative strides (one shape: no recompile)."""
    base = _data((8, 30), np.complex128)
    f = aot.compile(lambda a: np.fft.fft(a, axis=0))
    for x in (base[:, ::3][:, :7], base[:, 2:9], np.asfortranarray(base[:, :7]), base[::-1, 20:6:-2]):
        _check(f(x), np.fft.fft(x, axis=0))


def test_strided_output():
    """A transposed result: the kernel's rows are copied out through the output's strides."""
    x = _data((5, 12), np.float64)
    _same(lambda a: np.fft.rfft(a, axis=0).T, x)
    _same(lambda a: np.fft.fft(a, axis=0).T, x.astype(np.complex64))


def test_broadcast_input():
    """Rows that share memory (batch stride 0) read straight by the kernel."""
    _same(lambda a: np.fft.ifft(np.broadcast_to(a, (9, 16)), norm="ortho"), _data((16,), np.complex128))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [None, 1, 7, 16, 97, 142])  # 142: a Bluestein half length
@pytest.mark.parametrize("norm", [None, "forward"])
def test_rfft_irfft(dtype, n, norm):
    x = _data((3, 10), dtype)
    _same(lambda a: np.fft.rfft(a, n=n, norm=norm), x)
    spec = np.fft.rfft(x, axis=0)
    if n != 1:
        _same(lambda a: np.fft.irfft(a, n=n, axis=0, norm=norm), spec)


def test_irfft_ignores_imaginary_dc_and_nyquist():
    spec = _data((2, 9), np.complex128)  # imaginary parts everywhere, numpy drops those of X_0, X_{n/2}
    _same(lambda a: np.fft.irfft(a), spec)
    _same(lambda a: np.fft.irfft(a, n=17), spec)


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_nd_forms(norm):
    x = _data((6, 5, 8), np.complex128)
    _same(lambda a: np.fft.fft2(a, norm=norm), x)
    _same(lambda a: np.fft.ifftn(a, s=(4, 6), axes=(0, 2), norm=norm), x)
    xr = _data((6, 5, 8), np.float32)
    _same(lambda a: np.fft.rfftn(a, norm=norm), xr)
    _same(lambda a: np.fft.irfft2(a, norm=norm), np.fft.rfft2(xr.astype(np.float64)))


def test_window_and_power_spectrum():
    """Elementwise work fused before and after the transform kernel."""
    x = _data((4, 64), np.float64)
    w = np.hanning(64)
    _same(lambda a: np.abs(np.fft.rfft(a * w)) ** 2, x)
    _same(lambda a: np.abs(np.fft.fft(a * w.astype(np.float32))) ** 2, x.astype(np.float32))


@pytest.mark.parametrize("n", [64, 97])
def test_convolution_by_rfft(n):
    x = _data((3, n), np.float64)
    h = np.exp(-np.arange(n // 2 + 1) / 5.0)
    _same(lambda a: np.fft.irfft(np.fft.rfft(a) * h, n=n), x)


def test_new_lengths_recompile():
    """The default transform length is guarded to its value (plans are baked): each new length
    compiles once, while the batch dims may stay symbolic."""
    f = aot.compile(lambda a: np.abs(np.fft.rfft(a)) ** 2)
    for shape in ((3, 16), (3, 32), (5, 32), (7, 32), (9, 32)):
        x = _data(shape, np.float64)
        _check(f(x), np.abs(np.fft.rfft(x)) ** 2)
    assert f.cache_info()["compiles"] == 3  # 16; 32; then 32 with a symbolic batch


def test_symbolic_batch_dims():
    """Only the transform axis must be static: the batch may vary at run time."""
    f = aot.compile(lambda a: np.fft.rfft(a, n=16, axis=1))
    for rows in (3, 5, 0):
        x = _data((rows, 12), np.float64)
        _check(f(x), np.fft.rfft(x, n=16, axis=1))


def test_shared_library_links_the_kernels(tmp_path):
    """aot_compile links the single-precision kernel object into the .so."""
    def spectrum(a):
        return np.fft.irfft(np.fft.rfft(a * np.float32(0.5)) * np.float32(2.0), n=24)

    x = _data((3, 24), np.float32)
    lib = aot.aot_load(aot.aot_compile(spectrum, (x,), path=tmp_path / "spectrum.so"))
    _check(lib(x), spectrum(x))


@pytest.mark.parametrize("kind", ["fft", "rfft", "irfft"])
@pytest.mark.parametrize("n", [12, 15])
def test_symbolic_input_length_with_static_n(kind, n):
    """A static n over an input axis of run-time length: truncated or zero-padded as it comes."""
    fn = getattr(np.fft, kind)
    f = aot.compile(lambda a: fn(a, n=n, norm="ortho"), dynamic=True)
    for m in (3, n // 2 + 1, n, 2 * n + 1):
        x = _data((2, m), np.float64 if kind == "rfft" else np.complex128)
        _check(f(x), fn(x, n=n, norm="ortho"))



def test_aot_fft_calls_are_captured_with_torch_keywords():
    import warnings

    import aot

    def spectrum(x):
        return np.abs(aot.fft.rfft(x, dim=0)) ** 2, aot.fft.fft2(x, norm="ortho")

    f = aot.compile(spectrum)
    x = np.random.default_rng(3).random((8, 16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # captured: no eager fallback
        power, x2 = f(x)
    np.testing.assert_allclose(power, np.abs(np.fft.rfft(x, axis=0)) ** 2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x2, np.fft.fft2(x, norm="ortho"), rtol=1e-12, atol=1e-12)
    assert f.cache_info()["eager_fallbacks"] == 0


def test_cached_scratch_under_concurrent_calls():
    """Kernel scratch is a cached buffer per call site (codegen/host.py CpuHost.scratch): the call
    holding it reuses it, calls running at the same time allocate their own."""
    from concurrent.futures import ThreadPoolExecutor

    f = aot.compile(lambda x: np.fft.fft(x, axis=0))
    xs = [_data((4096, 6), np.complex128) for _ in range(4)]  # strided columns: lane-block scratch
    want = [np.fft.fft(x, axis=0) for x in xs]
    for x, w in zip(xs, want):
        _check(f(x), w)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: [f(xs[i % 4]) for _ in range(5)], range(8)))
    for i, rs in enumerate(got):
        for r in rs:
            _check(r, want[i % 4])


def test_scratch_too_big_to_keep(monkeypatch):
    import codegen.host

    monkeypatch.setattr(codegen.host, "SCRATCH_CACHE_MAX_BYTES", 0)  # every call site: malloc and free
    f = aot.compile(lambda x: np.fft.ifft(x, axis=0), options={"disk_cache": False})
    x = _data((2048, 5), np.complex128)
    for _ in range(3):
        _check(f(x), np.fft.ifft(x, axis=0))


@pytest.mark.parametrize("n, dtype", [(1 << 15, np.complex128), (1 << 16, np.complex64), (1 << 16, np.complex128),
                                      (3 << 16, np.complex128), (1 << 21, np.complex128)])  # (rows of 2^15)
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_long_rows_split_as_eager(n, dtype, norm):
    """One long transform of a compiled graph runs the eager path's split (halves or four steps,
    codegen/graph_fft_split.py): numpy's values, the eager call's bits."""
    import aot.fft as afft

    x = _data((n,), dtype)
    for fwd in (True, False):
        np_fn, aot_fn = (np.fft.fft, afft.fft) if fwd else (np.fft.ifft, afft.ifft)
        got = aot.compile(lambda x, f=np_fn: f(x, norm=norm))(x)
        _check(got, np_fn(x, norm=norm))
        assert np.array_equal(got, aot_fn(x, norm=norm))


@pytest.mark.parametrize("shape, axis, dtype", [((40000,), -1, np.complex128), ((3, 5**7), -1, np.complex64),
                                                 ((2, 32776), -1, np.complex128), ((1009, 2), 0, np.complex64),
                                                 ((97, 3), 0, np.complex128)])
def test_unsplit_transforms_give_the_eager_bits(shape, axis, dtype):
    """Direct plans from 2^15 (40000, 5^7) and Bluestein's (32776, 1009, 97): the eager call's
    plans come from the native planner at run time, the compiled graph's from plan.py at compile
    time, and both are the same bits (plan.roots_at); Bluestein's kernel is numpy's transform on
    both sides, and its products numpy's contiguous loop (an FMA where the CPU has one)."""
    import aot.fft as afft

    x = _data(shape, dtype)
    for np_fn, aot_fn in ((np.fft.fft, afft.fft), (np.fft.ifft, afft.ifft)):
        got = aot.compile(lambda x, f=np_fn: f(x, axis=axis))(x)
        _check(got, np_fn(x, axis=axis))
        assert np.array_equal(got, aot_fn(x, axis=axis))


def test_shared_library_bluestein_gives_the_eager_bits(tmp_path):
    """A library bakes a short Bluestein length's plan block in (and runs the linked planner's exec
    on it) and a long one's chirp kernel: the eager call's bits for both."""
    import aot.fft as afft

    def spectrum(a, b):
        return np.fft.fft(a, norm="ortho"), np.fft.ifft(b, axis=0)

    a, b = _data((3, 1009), np.complex128), _data((40009, 2), np.complex128)
    lib = aot.aot_load(aot.aot_compile(spectrum, (a, b), path=tmp_path / "bluestein.so"))
    got_a, got_b = lib(a, b)
    assert np.array_equal(got_a, afft.fft(a, norm="ortho"))
    assert np.array_equal(got_b, afft.ifft(b, axis=0))


@pytest.mark.parametrize("shape, dtype", [((3, 1 << 16), np.complex128), ((2, 3, 1 << 16), np.complex64)])
def test_batches_of_long_rows_split_as_eager(shape, dtype):
    """Each long row of a batch in the eager path's split, one after another; a copy into the
    graph's work array transforms in place, halves from a copy of each row, as eagerly."""
    import aot.fft as afft

    x = _data(shape, dtype)
    got = aot.compile(lambda x: np.fft.ifft(x, norm="forward"))(x)
    _check(got, np.fft.ifft(x, norm="forward"))
    assert np.array_equal(got, afft.ifft(x, norm="forward"))


def test_shared_library_splits_long_rows(tmp_path):
    """A library links the whole kernel module, four-step and halves drivers included: unit-stride
    rows take the eager split (its bits), other strides the radix passes (checked at run time)."""
    import aot.fft as afft

    def spectrum(a):
        return np.fft.fft(a, norm="ortho")

    x = _data((1 << 16,), np.complex128)
    lib = aot.aot_load(aot.aot_compile(spectrum, (x,), path=tmp_path / "long_rows.so"))
    assert np.array_equal(lib(x), afft.fft(x, norm="ortho"))
    wide = _data((1 << 17,), np.complex128)
    _check(lib(wide[::2]), np.fft.fft(wide[::2], norm="ortho"))


@pytest.mark.parametrize("kind, n", [("rfft", 1 << 17), ("irfft", (1 << 16) + 1), ("rfft", 1 << 16)])
def test_real_transforms_split_as_eager(kind, n):
    """rfft and irfft run their half-length transform in the eager path's split."""
    import aot.fft as afft

    x = _data((n,), np.float64 if kind == "rfft" else np.complex128)
    got = aot.compile(lambda x: getattr(np.fft, kind)(x))(x)
    _check(got, getattr(np.fft, kind)(x))
    assert np.array_equal(got, getattr(afft, kind)(x))


_FIRST_GRAPH = """
import numpy as np, aot
x = np.random.default_rng(0).random((3, 10)).astype(np.float32)
got = aot.compile(lambda a: np.fft.rfft(a))(x)
assert np.allclose(got, np.fft.rfft(x), rtol=1e-5, atol=1e-5), (got, np.fft.rfft(x))
print("ok")
"""


@pytest.mark.parametrize("prebuilt", ["1", "0"])
def test_transform_as_first_compiled_graph_of_a_process(tmp_path, prebuilt):
    """A process whose first compiled graph is an rfft: its object frees a buffer through the
    blocks module's allocator without allocating one there, and loading it before that module
    aborted the process (LLVM: symbol not found: aot_buffer_free)."""
    env = {**os.environ, "AOT_CACHE_DIR": str(tmp_path), "AOT_PREBUILT": prebuilt}
    r = subprocess.run([sys.executable, "-c", _FIRST_GRAPH], env=env, cwd=Path(__file__).resolve().parents[2],
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]
