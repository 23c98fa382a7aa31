"""aot_load on inputs laid out in every way numpy allows: each gives numpy's values or a clear error,
never a misread (byte order, alignment, strides, empty dims, subclasses, Python sequences)."""

from __future__ import annotations

import numpy as np
import pytest

import aot


def mixed(a, z, w, x, e):
    return a * 3 - 1, z * z, w * 2, x.sum(axis=1) + e.sum(axis=1)


def _inputs(n: int):
    rng = np.random.default_rng(n)
    z = rng.random(n) + 1j * rng.random(n)
    w = (rng.random(n) - 1j * rng.random(n)).astype(np.complex64)
    return rng.integers(-1000, 1000, n), z, w, rng.random((n, 3)), np.ones((n, 0))


@pytest.fixture(scope="module")
def lib(tmp_path_factory, libs):  # `libs`: skips without a C compiler
    N = aot.Dim("N", max=4096)
    path = aot.aot_compile(mixed, _inputs(4), dynamic_shapes=({0: N},) * 5,
                           path=tmp_path_factory.mktemp("layouts") / "mixed.so")
    return aot.aot_load(path)


def _check(lib, args):
    for got, want in zip(lib(*args), mixed(*map(np.asarray, args)), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _unaligned(a: np.ndarray, offset: int = 1) -> np.ndarray:
    """A copy of `a` at `offset` bytes past an aligned address (numpy's aligned flag clear)."""
    buf = np.zeros(a.nbytes + 64, np.uint8)
    start = -buf.ctypes.data % 64 + offset
    out = np.frombuffer(buf.data, a.dtype, a.size, offset=start).reshape(a.shape)
    out[...] = a
    return out


def test_signature(lib):
    want = "(i64[N], c128[N], c64[N], f64[N,3], f64[N,0]) -> (i64[N], c128[N], c64[N], f64[N])"
    assert lib.signature == want


@pytest.mark.parametrize("order", [">", "<", "="])
def test_any_byte_order_gives_numpys_values(lib, order):
    args = [a.astype(a.dtype.newbyteorder(order)) for a in _inputs(7)]
    _check(lib, args)


def test_unaligned_inputs_are_copied(lib):
    a, z, w, x, e = _inputs(9)
    args = [_unaligned(a), _unaligned(z, 4), _unaligned(w, 2), _unaligned(x, 3), e]
    assert not any(v.flags.aligned for v in args[:4])
    _check(lib, args)


def test_complex64_needs_only_its_parts_alignment(lib):
    a, z, w, x, e = _inputs(5)
    w4 = _unaligned(w, 4)  # 4-byte aligned: numpy's alignment of complex64, and the code's
    assert w4.flags.aligned and w4.ctypes.data % 8 == 4
    _check(lib, (a, z, w4, x, e))


def test_library_rejects_a_misaligned_pointer(lib):
    """The C ABI's own check (callers other than aot_load): INVALID_ARGUMENT naming the input."""
    a, z, w, x, e = _inputs(5)
    args = [a, z, w, _unaligned(x), e]
    outs = [np.empty(s, d) for s, d in zip(lib.output_shapes(*args), lib.out_dtypes, strict=True)]
    ins, _keep = lib._describe(args)
    od, _keep_out = lib._describe(outs)
    msg = r"input 3 \(x\): data \(0x[0-9a-f]+\) \+ byte_offset \(0\) is not aligned to 8 bytes"
    with pytest.raises(ValueError, match=msg):
        lib._check(lib._fn(ins, len(args), od, len(outs)))


def test_read_only_negative_and_zero_strides(lib):
    a, z, w, x, e = _inputs(6)
    ro = [v.copy() for v in (a, z, w, x)]
    for v in ro:
        v.flags.writeable = False
    _check(lib, (*ro, e))
    _check(lib, (a[::-1], z[::-1], w[::-1], x[::-1, ::-1], e))
    bc = np.broadcast_to
    _check(lib, (bc(a[:1], (6,)), z, bc(w[2], (6,)), bc(x[0], (6, 3)), e))


def test_strides_that_are_not_whole_elements(lib):
    rec = np.zeros(5, dtype=[("tag", "i1"), ("x", "f8", (3,))])  # packed: x at offset 1, stride 25
    rec["x"] = np.arange(15.0).reshape(5, 3)
    a, z, w, _x, e = _inputs(5)
    _check(lib, (a, z, w, rec["x"], e))


def test_empty_dims(lib):
    _check(lib, _inputs(1))
    a, z, w, x, e = _inputs(3)
    assert e.size == 0
    _check(lib, (a, z, w, x, np.empty((3, 0))[::-1]))


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_subclasses(lib):
    a, z, w, x, e = _inputs(4)
    got = lib(a, z, w, np.matrix(x), e)[3]  # a matrix is its data here: the library's op is fixed
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, x.sum(axis=1))
    masked = np.ma.masked_array(x, mask=x > 0.5)
    with pytest.raises(TypeError, match="input 3 is a masked array"):
        lib(a, z, w, masked, e)


def test_python_sequences_and_scalars(lib):
    a, z, w, x, e = _inputs(3)
    _check(lib, (a.tolist(), z.tolist(), w, x.tolist(), e))
    got = lib([1, 2, 3], z, w, x, e)
    np.testing.assert_array_equal(got[0], [2, 5, 8])
    np.testing.assert_allclose(lib(a, z, w, [[1, 2, 3]] * 3, e)[3], [6.0] * 3)  # ints for floats: same_kind
    with pytest.raises(TypeError, match=r"input 0: a list of float64 values does not convert to int64"):
        lib([1.5, 2.0, 3.0], z, w, x, e)
    with pytest.raises(TypeError, match=r"input 3: a list of complex128 values does not convert to float64"):
        lib(a, z, w, [[1j, 0, 0]] * 3, e)


def test_wrong_dtype_arrays_still_refused(lib):
    a, z, w, x, e = _inputs(3)
    with pytest.raises(TypeError, match=r"input 0 \(a\): expected dtype code 0 bits 64"):
        lib(a.astype(">i4"), z, w, x, e)
