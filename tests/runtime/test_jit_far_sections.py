"""The JIT's object code works wherever MCJIT maps its sections (codegen.jit_target: the large code
model with static relocation). In a long-lived process an object's code and its constants can be
mapped gigabytes apart; object code with 32-bit PC-relative references then aborted the process in
RuntimeDyld (`isInt<32>(RealOffset)`), as a CI run of the suite did. far_sections_child.py builds
that layout on purpose; the shared-library target (32-bit references) shows the layout bites."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from runtime import elf

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() != "x86_64", reason="Linux x86-64 address-space layout"
)
# x86-64 relocation types that hold a full 64-bit address or offset
R_X86_64_64, R_X86_64_PC64 = 1, 24


def _child(which: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(Path(__file__).with_name("far_sections_child.py")), which],
                          capture_output=True, text=True, timeout=120, env=env, check=False)


def test_code_and_constants_gigabytes_apart():
    control = _child("library")
    if control.returncode == 0 and control.stdout.strip() == "same":
        pytest.skip("this machine's kernel did not place the code and its constants apart")
    r = _child("jit")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "same"


def test_graph_objects_hold_only_64_bit_references():
    """Every relocation of a compiled graph's object (constants, calls to the allocator, the
    thread pool's kernels) is a 64-bit one."""
    import numpy as np

    import aot
    from aot.compiler import llvm_backend

    seen = []
    real = llvm_backend._install
    llvm_backend._install = lambda key, name, obj: (seen.append(obj), real(key, name, obj))[1]
    try:
        x = np.linspace(0.0, 1.0, 1 << 16).reshape(256, 256)
        f = aot.compile(lambda a: (np.exp(a * 1.25 - 0.5).sum(axis=1), np.argmax(a, axis=0)))
        got = f(x)
    finally:
        llvm_backend._install = real
    np.testing.assert_allclose(got[0], np.exp(x * 1.25 - 0.5).sum(axis=1), rtol=1e-13)
    assert seen, "the graph was not compiled in this process"
    types = {t for obj in seen for t in elf.relocation_types(obj)}
    assert types and types <= {R_X86_64_64, R_X86_64_PC64}, types


def test_compiled_functions_share_one_thread_pool():
    """Every JIT-compiled graph runs its kernels on the process's one pool (ir.abi_slots
    SHARED_PARALLEL_FOR): compiling many functions does not add a pool of workers each."""
    import numpy as np

    import aot

    x = np.linspace(0.0, 1.0, 1 << 18)
    before = len(os.listdir("/proc/self/task"))
    for k in range(12):
        f = aot.compile(lambda a, k=float(k): (np.sin(a) * k).sum(), options={"num_threads": 2})
        np.testing.assert_allclose(f(x), (np.sin(x) * k).sum(), rtol=1e-12)
    assert len(os.listdir("/proc/self/task")) <= before + 2  # the pool's worker (and the compile thread)
