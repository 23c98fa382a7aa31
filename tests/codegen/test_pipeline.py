"""The LLVM pipeline (codegen/targets/base.py): its tuning, and that compiles on several threads
are safe and do not serialise on llvmlite's process-wide lock."""
from __future__ import annotations

import threading

import numpy as np

import codegen
import ir
from codegen import host_target
from codegen.targets import base
from ir import dtypes as D
from ir.types import TensorType

from .helpers import add_elementwise


def _sin_module():
    m = ir.Module("t")
    add_elementwise(m, "f", "sin", [TensorType(D.float64, (1024,))])
    return m


def test_loop_vectoriser_off_slp_and_unrolling_on():
    pto = base.pipeline_options(host_target())
    assert not pto.loop_vectorization  # unbounded compile times at O3; our loops are vector code
    assert pto.slp_vectorization and pto.loop_unrolling


def _locked_during_long_calls(monkeypatch) -> list[bool]:
    """Compile a module; for each long LLVM call (base._unlocked), whether llvmlite's lock was
    taken during it (its public lock callbacks report every acquisition)."""
    from llvmlite.binding import ffi

    inside, seen = threading.local(), []
    real = base._unlocked

    def spy(fn):
        raw = real(fn)

        def call(*args):
            inside.flag, inside.locked = True, False
            try:
                return raw(*args)
            finally:
                inside.flag = False
                seen.append(inside.locked)

        return call

    def acquired():
        if getattr(inside, "flag", False):
            inside.locked = True

    def released():
        pass

    monkeypatch.setattr(base, "_unlocked", spy)
    ffi.register_lock_callback(acquired, released)
    try:
        target = host_target()
        assert codegen.compile_object(codegen.lower_module(_sin_module(), target), target)
    finally:
        ffi.unregister_lock_callback(acquired, released)
    return seen


def test_long_llvm_calls_run_outside_llvmlites_lock(monkeypatch):
    """Merging duplicates, the pass pipeline and code emission do not hold llvmlite's process-wide
    lock (a stuck compile on a watchdog thread would stall every other llvmlite call of the process)."""
    assert _locked_during_long_calls(monkeypatch) == [False, False, False]


def test_the_lock_check_sees_a_locked_call(monkeypatch):
    monkeypatch.setattr(base, "_unlocked", lambda fn: fn)  # called as llvmlite calls them
    assert _locked_during_long_calls(monkeypatch) == [True, True, True]


def test_distinct_functions_compile_on_many_threads():
    import aot

    x = np.linspace(0, 1, 101)
    results, errors = {}, []
    barrier = threading.Barrier(4)

    def work(k):
        try:
            f = aot.compile(lambda a: np.exp(a) * (k + 0.125) + np.sin(a) / (k + 1),
                            options={"disk_cache": False})
            barrier.wait(60)
            results[k] = f(x)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    for k in range(4):
        np.testing.assert_allclose(results[k], np.exp(x) * (k + 0.125) + np.sin(x) / (k + 1), rtol=1e-13)
