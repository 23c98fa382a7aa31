"""The real floating functions (rows whose ufunc has no complex loop: cbrt, hypot, logaddexp(2),
copysign, fmod, heaviside, nextafter, signbit, spacing, trunc, floor, arctan2, ...) on grids of IEEE
special values (+-0, +-inf, nan, subnormals, the extremes) against numpy, through the three paths:
eager (backend="eager"), compiled (aot.compile) and a library (aot.aot_compile + aot.aot_load).

The ops come from the registry, so a row added with a ufunc and real loops is tested here too.
Exact ops must match numpy to the bit (the sign of zero and nan positions included); transcendental
rows (their trait) within a few ulps of numpy's libm.
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot
import aot.ops
from ir import dtypes as D
from ir.opdef import OPDEFS, OpError

ULPS = 8  # libmvec is within 4 ulp of the exact value, numpy's float32 libm within a few more


def _ufunc(op: str) -> np.ufunc | None:
    us = [getattr(np, n, None) for n in OPDEFS[op].numpy_names]
    return next((u for u in us if isinstance(u, np.ufunc)), None)


def _accepts(op: str, dt) -> bool:
    try:
        OPDEFS[op].dtype_rule([dt] * OPDEFS[op].arity)
        return True
    except OpError:
        return False


# elementwise rows spelled by a ufunc, defined on reals and refusing complex operands
OPS = [op for op in aot.ops.ALL_OPS
       if OPDEFS[op].has("elementwise") and OPDEFS[op].arity in (1, 2) and _ufunc(op) is not None
       and _accepts(op, D.float64) and not _accepts(op, D.complex128)]
NEW = {"cbrt", "hypot", "logaddexp", "logaddexp2", "copysign", "fmod", "heaviside", "nextafter", "signbit",
       "spacing", "trunc"}

FLOAT_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, -1e-5, 100.0]
INT_SPECIALS = [0, 1, -1, 2, -7, 3, 100, -(2**31), 2**31 - 1]


def _grid(dtype):
    """(x, y): every pair of special values of `dtype` (with the dtype's extremes and subnormals)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        fi = np.finfo(dt)
        vals = np.array(FLOAT_SPECIALS + [fi.max, -fi.max, fi.tiny, fi.smallest_subnormal,
                                          -fi.smallest_subnormal], dt)
    else:
        vals = np.array(INT_SPECIALS, dt)
    return np.repeat(vals, len(vals)), np.tile(vals, len(vals))


def _ops_for(dtype) -> list[str]:
    dt = D.from_numpy(np.dtype(dtype))
    return [op for op in OPS if _accepts(op, dt)]


def _program(ops: list[str]):
    fns = [_ufunc(op) for op in ops]

    def fn(x, y):
        return tuple(u(x) if u.nin == 1 else u(x, y) for u in fns)

    return fn


def _check(op: str, got, want, where: str) -> None:
    assert got.dtype == want.dtype, f"{where} {op}: dtype {got.dtype}, numpy {want.dtype}"
    if want.dtype.kind in "bi":
        np.testing.assert_array_equal(got, want, err_msg=f"{where} {op}")
        return
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if OPDEFS[op].has("transcendental"):
        with np.errstate(all="ignore"):
            near = np.abs(got - want) <= ULPS * np.spacing(np.abs(want).astype(want.dtype))
        same |= near & np.isfinite(want)
    else:
        same &= (np.signbit(got) == np.signbit(want)) | np.isnan(want)  # exact ops keep the sign of zero
    assert same.all(), f"{where} {op}: at inputs {np.flatnonzero(~same)[:6]} got {got[~same][:6]}, " \
                       f"numpy {want[~same][:6]}"


DTYPES = ["float64", "float32", "int32"]


@pytest.fixture(scope="module")
def programs():
    out = {}
    for dtype in DTYPES:
        ops = _ops_for(dtype)
        x, y = _grid(dtype)
        with np.errstate(all="ignore"):
            want = _program(ops)(x, y)
        out[dtype] = (ops, (x, y), want)
    return out


def test_new_ops_are_rows():
    """The functions added as rows (no longer front-end decompositions) are all covered here."""
    assert NEW <= set(OPS)
    for op in NEW:
        assert _ufunc(op).__name__ == op


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_against_numpy(programs, dtype, backend):
    ops, args, want = programs[dtype]
    with np.errstate(all="ignore"):
        got = aot.compile(_program(ops), backend=backend)(*args)
    for op, g, w in zip(ops, got, want, strict=True):
        _check(op, g, w, f"{backend} {dtype}")


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_library(programs, dtype, tmp_path):
    ops, args, want = programs[dtype]
    path = aot.aot_compile(_program(ops), args, path=tmp_path / f"real_{dtype}.so")
    got = aot.aot_load(path)(*args)
    for op, g, w in zip(ops, got, want, strict=True):
        _check(op, g, w, f"library {dtype}")


def test_int_operands_compute_in_float64():
    """numpy's loops for ints are float64 ones (cbrt(int32) is float64, fmod(int32) stays int32)."""
    x = np.array([-8, 0, 27, 5], np.int32)
    f = aot.compile(lambda a: (np.cbrt(a), np.hypot(a, 3), np.fmod(a, 3), np.signbit(a), np.spacing(a)))
    for g, w in zip(f(x), (np.cbrt(x), np.hypot(x, 3), np.fmod(x, 3), np.signbit(x), np.spacing(x))):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-15)


def test_refused_where_numpy_refuses():
    """No complex loops (TypeError as numpy); bools reach float16 loops numpy answers in float16."""
    z = np.ones(3, complex)
    for u in (np.cbrt, np.spacing, np.signbit):
        with pytest.raises(TypeError):
            aot.compile(u)(z)
    for u in (np.hypot, np.logaddexp, np.copysign, np.fmod, np.nextafter, np.heaviside):
        with pytest.raises(TypeError):
            aot.compile(u)(z, z)
    b = np.array([True, False])
    np.testing.assert_array_equal(aot.compile(np.signbit)(b), np.signbit(b))  # a bool result: supported
    with pytest.raises(TypeError):
        aot.compile(np.cbrt)(b)  # numpy: float16
