"""n-D transforms over the array's last two axes plane by plane (aot.fft._exec.run_planes,
codegen/fft/threads.py's aot_fft_planes): numpy's results, the same bits for any thread count, and
those of the axis-by-axis passes where these take the same code paths (a cube's planes)."""
from __future__ import annotations

import numpy as np
import pytest

import aot.fft as afft
from aot.fft import _exec

from ._eager import close, data


@pytest.fixture
def axis_by_axis(monkeypatch):
    def run(fn, *args, **kw):
        with monkeypatch.context() as m:
            m.setattr(_exec, "PLANE_MAX_BYTES", 0)
            return fn(*args, **kw)
    return run


@pytest.fixture
def threads():
    old = _exec.num_threads()
    yield _exec.set_num_threads
    _exec.set_num_threads(old)


@pytest.mark.parametrize("kind, shape, dtype, kw", [
    ("fftn", (40, 64, 48), np.complex128, {}), ("ifftn", (9, 96, 100), np.complex64, {"norm": "ortho"}),
    ("fft2", (4, 5, 64, 64), np.complex128, {}), ("fftn", (20, 64, 64), np.float64, {"axes": (0, 1, 2)}),
    ("ifft2", (33, 128, 24), np.complex64, {"norm": "forward"}),
])
def test_planes_match_numpy_for_any_thread_count(threads, kind, shape, dtype, kw, monkeypatch):
    k = _exec.kernels("f32" if np.dtype(dtype) in (np.complex64, np.float32) else "f64")
    calls = []
    monkeypatch.setattr(k, "planes", _counting(calls, k.planes))
    x = data(shape, dtype)
    results = []
    for t in (1, 2, 3):
        threads(t)
        results.append(getattr(afft, kind)(x, **kw))
    assert len(calls) == 3, "the plane-by-plane path did not run"
    close(results[0], getattr(np.fft, kind)(x, **kw))
    assert all(np.array_equal(r, results[0]) for r in results[1:])


def test_a_cube_has_the_bits_of_the_axis_passes(axis_by_axis):
    x = data((64, 64, 64), np.complex128)
    assert np.array_equal(afft.fftn(x), axis_by_axis(afft.fftn, x))


def _counting(calls, fn):
    def call(*args):
        calls.append(1)
        return fn(*args)
    return call


def test_out_and_other_layouts(axis_by_axis):
    x = data((16, 64, 64), np.complex128)
    out = np.empty_like(x)
    assert afft.fftn(x, out=out) is out
    assert np.array_equal(out, axis_by_axis(afft.fftn, x))
    strided = data((16, 64, 128), np.complex128)[:, :, ::2]  # not C-contiguous: axis passes
    close(afft.fftn(strided), np.fft.fftn(strided))
    close(afft.fftn(x, axes=(2, 1)), np.fft.fftn(x, axes=(2, 1)))  # the columns first
    close(afft.fftn(x, s=(16, 64, 40), axes=(0, 1, 2)), np.fft.fftn(x, s=(16, 64, 40), axes=(0, 1, 2)))  # cropped rows
