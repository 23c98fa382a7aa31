"""runtime's native helpers (codegen/trampolines.py, handed to runtime as `helpers`): the call
trampolines against the Python checks they replace, their slot layouts, and their disk cache."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import runtime
from codegen.trampolines import HELPERS
from ir.abi_slots import ARRAY_FIELDS, FFT_THUNK, STRIDED_CALL, STRIDED_PLAN, Slots
from runtime.buffers import ARRAY_LAYOUT, ArgSpec, Signature

from .test_jit import DOUBLE_IR

ROOT = Path(__file__).resolve().parents[2]


def _load(shape, helpers):
    sig = Signature((ArgSpec(np.float64, shape),), (ArgSpec(np.float64, shape),), "double_it")
    return runtime.load(DOUBLE_IR, "double_it", sig, helpers=helpers)


@pytest.mark.parametrize("native", [False, True])
def test_static_fast_path_with_and_without_helpers(native):
    f = _load((6,), HELPERS if native else None)
    assert (f._trampoline is not None) == native
    assert (type(f.fast).__name__ == "builtin_function_or_method") == native  # no Python frame
    x = np.arange(6.0)
    np.testing.assert_array_equal(f.fast(x), 2 * x)
    step = np.arange(12.0)[::2]
    if native:  # any strides, natively; in Python only C-contiguous arrays
        np.testing.assert_array_equal(f.fast(step), 2 * step)
    else:
        assert f.fast(step) is None
    unaligned = np.frombuffer(bytearray(49), np.float64, 6, offset=1)
    swapped = x.astype(">f8")
    others = (x.astype(np.float32), np.arange(7.0), x.reshape(2, 3), unaligned, swapped, [1.0] * 6)
    for other in others:
        assert f.fast(other) is None  # the general path's case, natively or in Python
    assert f.fast(x, x) is None and f.fast() is None
    np.testing.assert_array_equal(f(swapped), 2 * x)


def test_strided_fast_path_needs_helpers():
    assert _load(("n",), None).fast_function(unwrap=True, guard=lambda A: True) is None
    fast = _load(("n",), HELPERS).fast_function(unwrap=True, guard=lambda A: len(A) == 1)
    for x in (np.arange(9.0), np.arange(20.0)[::3], np.arange(10.0)[::-1], np.ones(0)):
        np.testing.assert_array_equal(fast(x), 2 * x)
    assert fast(np.arange(9.0, dtype=np.float32)) is None
    assert fast(np.frombuffer(bytearray(49), np.float64, 6, offset=1)) is None  # unaligned


def test_layouts():
    s = Slots(("a", "b", "c"))
    assert (s.a, s.c, len(s)) == (0, 2, 3) and s.pack(c=3, a=1, b=2) == [1, 2, 3]
    with pytest.raises(AttributeError):
        s.d  # noqa: B018
    py = {"py_long": 11, "save_thread": 12, "restore_thread": 13, "gil_elements": 14}
    assert STRIDED_CALL.pack([{"descr": 0, "rank": 1, "itemsize": 8, "contiguous": 1}], entry=1, n_objects=1,
                             n_meta=2, ndarray_type=6, n_inputs=0, **py) == [1, 1, 2, 6, 0, 11, 12, 13, 14, 0, 1, 8, 1]
    assert len(FFT_THUNK) == 22 and FFT_THUNK.src_base == 17 and FFT_THUNK.job_dst == 21
    assert tuple(name for name, _ in ARRAY_LAYOUT) == ARRAY_FIELDS  # the probe reads what the helpers need


def test_helper_objects_come_from_the_disk_cache_without_ir(tmp_path, monkeypatch):
    from runtime.jit import default_engine, helper_object

    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path))
    params = {"offsets": dict(ARRAY_LAYOUT)}
    obj = helper_object(default_engine(), HELPERS, "array_call", params)

    class NoIR:
        digest = HELPERS.digest

        def ir(self, name, params):
            raise AssertionError("IR built on a disk-cache hit")

    assert helper_object(default_engine(), NoIR(), "array_call", params) == obj


_WARM = """
import sys, numpy as np, aot
f = aot.compile(lambda x, y: x * y + 1.0)
x = np.ones(16)
f(x, x); f(x, x)
assert f.cache_info()["warm_starts"] == int(sys.argv[1])
assert type(f._entries[0].fast).__name__ == "builtin_function_or_method"  # the linked aot_call_strided
if int(sys.argv[1]):  # a warm start makes no dataclass and logs nothing
    assert not {"logging", "dataclasses"} & set(sys.modules), sorted({"logging", "dataclasses"} & set(sys.modules))
assert f._entries[0].fast(x, x[::-1]) is None  # the code reads x as C-contiguous: the native check refuses
assert (f(x, x[::-1]) == 2.0).all()  # a guard failure: a second entry for any layout
print(sorted(m for m in ("codegen.entry", "codegen.llvm.loops", "codegen.kernels.parallel") if m in sys.modules))
"""


def test_warm_process_loads_helpers_without_the_code_generator(tmp_path):
    env = {"AOT_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-c", _WARM]
    subprocess.run([*run, "0"], env=env, cwd=ROOT, check=True, capture_output=True)
    out = subprocess.run([*run, "1"], env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# An entry that writes, into its output's first element, whether the calling thread holds the GIL.
_GIL_IR = r"""
define i32 @gil_held(ptr %data, ptr %meta) {
entry:
  %outp = getelementptr ptr, ptr %data, i64 1
  %out = load ptr, ptr %outp
  %check = inttoptr i64 ADDRESS to ptr
  %held = call i32 %check()
  %v = sitofp i32 %held to double
  store double %v, ptr %out
  ret i32 0
}
"""


def _gil_probe(shape):
    import ctypes

    address = ctypes.cast(ctypes.pythonapi.PyGILState_Check, ctypes.c_void_p).value
    sig = Signature((ArgSpec(np.float64, shape),), (ArgSpec(np.float64, shape),), "gil_held")
    return runtime.load(_GIL_IR.replace("ADDRESS", str(address)), "gil_held", sig, helpers=HELPERS)


@pytest.mark.parametrize("n, held", [(16, 1.0), (1 << 20, 0.0)])
def test_trampolines_release_the_gil_around_large_work(n, held):
    """Small calls keep the GIL (releasing costs more than they take); large ones let other
    Python threads run, as numpy's loops do."""
    static = _gil_probe((n,))
    assert static.fast(np.zeros(n))[0] == held
    strided = _gil_probe(("n",)).fast_function(unwrap=True, guard=lambda A: True)
    assert strided(np.zeros(n))[0] == held
    assert strided(np.zeros(2 * n)[::2])[0] == held  # the strided helper counts elements, not bytes


def test_trampolines_refuse_a_wrong_argument_count():
    f = _load((6,), HELPERS)
    x = np.arange(6.0)
    assert f.fast(x, np.empty(6)) is None and f.fast() is None  # the outputs are made natively
    before = sys.getrefcount(x)
    for _ in range(100):
        out = f.fast(x)
    assert sys.getrefcount(x) == before and sys.getrefcount(out) == 2


def test_static_status_raises_through_fail():
    f = _load((13,), HELPERS)  # DOUBLE_IR returns 97 for 13 elements
    x = np.arange(13.0)
    with pytest.raises(runtime.NativeError, match="97"):
        f.fast(x)
    with pytest.raises(runtime.NativeError, match="97"):
        f(x[::-1])
    assert sys.getrefcount(x) == 2


def test_static_plan_rows_are_fixed_dims():
    from runtime.buffers import ArgPacker, _DimPlan

    sig = Signature((ArgSpec(np.float64, (3, 4)),), (ArgSpec(np.int32, (4,)), ArgSpec(np.float64, ())), "f")
    plan = _DimPlan(ArgPacker(sig), ([], {}))
    assert plan.alloc and not plan.leftover
    f64, i32 = np.dtype(np.float64).num, np.dtype(np.int32).num
    assert plan.rows() == [f64, 3, 3, -1, 4, 4, -1, i32, 4, 4, -1, f64]
    ctx = plan.context(1, print, unwrap=True)
    start = len(STRIDED_CALL.header) + 3 * len(STRIDED_CALL.fields)
    assert ctx[start + STRIDED_PLAN.unwrap] == 0  # two outputs: a tuple
