"""runtime: JIT a hand-written entry (no codegen involved), call it with numpy arrays through the
fast (static, contiguous) and general (strided, symbolic) paths, and report errors."""

from __future__ import annotations

import ctypes.util

import numpy as np
import pytest

import runtime
from runtime.buffers import ArgSpec, Signature

# out[i] = 2 * in[i * stride]; returns 97 (no status of ir/status.py) when n == 13 (to test error reporting)
DOUBLE_IR = r"""
define i32 @double_it(ptr %data, ptr %meta) {
entry:
  %in = load ptr, ptr %data
  %outp = getelementptr ptr, ptr %data, i64 1
  %out = load ptr, ptr %outp
  %n = load i64, ptr %meta
  %sp = getelementptr i64, ptr %meta, i64 1
  %stride = load i64, ptr %sp
  %bad = icmp eq i64 %n, 13
  br i1 %bad, label %fail, label %head
fail:
  ret i32 97
head:
  %i = phi i64 [0, %entry], [%i1, %body]
  %c = icmp slt i64 %i, %n
  br i1 %c, label %body, label %done
body:
  %off = mul i64 %i, %stride
  %p = getelementptr double, ptr %in, i64 %off
  %x = load double, ptr %p
  %y = fmul double %x, 2.0
  %q = getelementptr double, ptr %out, i64 %i
  store double %y, ptr %q
  %i1 = add i64 %i, 1
  br label %head
done:
  ret i32 0
}
"""


def _load(shape_in, shape_out):
    sig = Signature((ArgSpec(np.float64, shape_in),), (ArgSpec(np.float64, shape_out),), "double_it")
    return runtime.load(DOUBLE_IR, "double_it", sig)


def test_static_fast_path():
    f = _load((5,), (5,))
    x = np.arange(5.0)
    np.testing.assert_array_equal(f(x), 2 * x)
    np.testing.assert_array_equal(f(np.arange(10.0)[::2]), 2 * np.arange(10.0)[::2])  # general path


def test_symbolic_shapes_and_errors():
    f = _load(("n",), ("n",))
    for n in (0, 1, 9):
        np.testing.assert_array_equal(f(np.ones(n)), np.full(n, 2.0))
    with pytest.raises(runtime.NativeError, match="code 97"):
        f(np.ones(13))
    with pytest.raises(TypeError, match="dtype float32, expected float64"):
        f(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="2 dims, expected 1"):
        f(np.ones((3, 1)))


def test_output_shape_expressions():
    sig = Signature(
        (ArgSpec(np.float64, ("n",)),), (ArgSpec(np.float64, ("2*n + floor(n/2)",)),), "double_it"
    )
    f = runtime.load(DOUBLE_IR, "double_it", sig)
    out = f(np.arange(8.0))  # the entry writes the first n elements
    assert out.shape == (20,)
    np.testing.assert_array_equal(out[:8], 2 * np.arange(8.0))


def test_num_threads_env(monkeypatch):
    monkeypatch.setenv("AOT_NUM_THREADS", "3")
    assert runtime.default_num_threads() == 3
    monkeypatch.setenv("AOT_NUM_THREADS", "zero")
    with pytest.raises(ValueError, match="AOT_NUM_THREADS"):
        runtime.default_num_threads()
    monkeypatch.delenv("AOT_NUM_THREADS")
    assert runtime.default_num_threads() >= 1


@pytest.mark.skipif(ctypes.util.find_library("mvec") is None, reason="no libmvec")
def test_libmvec_is_loaded():
    import llvmlite.binding as llvm

    from runtime.jit import JitEngine

    JitEngine()
    assert llvm.address_of_symbol("_ZGVbN2v_sin")


def test_bad_ir_is_reported():
    with pytest.raises(RuntimeError):
        runtime.load("define i32 @f( {", "f", Signature((), (), "f"))
