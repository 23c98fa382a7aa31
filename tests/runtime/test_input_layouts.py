"""aot.compile'd functions on inputs laid out in every way numpy allows: numpy's values through the
general path when the native fast paths cannot take them, or a TypeError for ndarray subclasses
whose meaning the compiled code would drop."""

from __future__ import annotations

import numpy as np
import pytest

import aot
from runtime.buffers import ARRAY_LAYOUT


def _unaligned(a: np.ndarray, offset: int = 1) -> np.ndarray:
    """A copy of `a` at `offset` bytes past an aligned address (numpy's aligned flag clear)."""
    buf = np.zeros(a.nbytes + 64, np.uint8)
    start = -buf.ctypes.data % 64 + offset
    out = np.frombuffer(buf.data, a.dtype, a.size, offset=start).reshape(a.shape)
    out[...] = a
    return out


def _warm(f, *args):
    f(*args)
    f(*args)  # the second call finds the cache entry and its fast path
    return f._entries[0]


def test_layout_probe_reads_the_aligned_flag():
    assert ARRAY_LAYOUT is not None and dict(ARRAY_LAYOUT)["flags"] == 64


def test_static_fast_path_declines_unaligned_arrays():
    f = aot.compile(lambda x, y: x * y + 1.0)
    x, y = np.arange(16.0), np.linspace(0, 1, 16)
    entry = _warm(f, x, y)
    u = _unaligned(x)
    assert entry.fast(x, y) is not None and entry.fast(u, y) is None
    np.testing.assert_array_equal(f(u, y), x * y + 1.0)
    np.testing.assert_array_equal(f(x, _unaligned(y, 3)), x * y + 1.0)


def test_dynamic_fast_path_declines_unaligned_arrays():
    f = aot.compile(lambda x: np.sin(x) * 2.0, dynamic=True)
    x = np.linspace(0, 3, 40)
    f(x[:20])
    for n in (21, 33, 40):
        np.testing.assert_allclose(f(_unaligned(x[:n], 5)), np.sin(x[:n]) * 2.0, rtol=1e-15)


@pytest.mark.parametrize("dtype", [">f8", ">i8", ">c16", ">f4", "<c8"])
def test_non_native_byte_order(dtype):
    f = aot.compile(lambda x: x * 3 - 1)
    x = (np.arange(12) - 5).astype(np.dtype(dtype).newbyteorder("="))
    _warm(f, x)
    v = x.astype(dtype)
    got = f(v)
    assert got.dtype == (v * 3 - 1).dtype
    np.testing.assert_array_equal(got, v * 3 - 1)


def test_read_only_negative_zero_strides_and_empty():
    f = aot.compile(lambda x, y: x - 2 * y)
    x, y = np.arange(12.0).reshape(4, 3), np.ones((4, 3))
    _warm(f, x, y)
    ro = x.copy()
    ro.flags.writeable = False
    for a, b in [(ro, y), (x[::-1, ::-1], y), (np.broadcast_to(x[1], (4, 3)), y), (x[:0], y[:0])]:
        np.testing.assert_array_equal(f(a, b), a - 2 * b)


def test_strides_that_are_not_whole_elements():
    f = aot.compile(lambda x: x + 1.0)
    rec = np.zeros(6, dtype=[("tag", "i1"), ("x", "f8")])  # packed: x at offset 1, stride 9
    rec["x"] = np.arange(6.0)
    np.testing.assert_array_equal(f(rec["x"]), np.arange(6.0) + 1)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_matrix_and_masked_inputs_are_refused():
    """numpy gives matrix products for `*` of np.matrix and keeps masks; the compiled code has
    ndarray semantics and no masks, so these raise instead of returning other numbers."""
    f = aot.compile(lambda x, y: x * y)
    a = np.arange(4.0).reshape(2, 2)
    _warm(f, a, a)
    with pytest.raises(TypeError, match=r"argument #0 is a np.matrix"):
        f(np.matrix(a), a)
    with pytest.raises(TypeError, match=r"argument #1 is a masked array"):
        f(a, np.ma.masked_array(a, mask=a > 1))
