"""Object code is checked before MCJIT reads it (a truncated object crashed the process there):
runtime.elf.check_object, JitEngine.add_object, and disk-cache entries that fail the check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runtime.disk_cache import DiskCache, cache_key
from runtime.elf import ElfError, check_object, host_header

REPO = Path(__file__).resolve().parents[2]

def emit_object() -> bytes:
    """The object code of a one-function module, as MCJIT's target machine writes it."""
    import llvmlite.binding as llvm

    from runtime.jit import default_engine

    mod = llvm.parse_assembly("define i32 @seven() { ret i32 7 }")
    mod.triple = llvm.get_process_triple()
    return default_engine().tm.emit_object(mod)


@pytest.fixture(scope="module")
def obj() -> bytes:
    return emit_object()


def test_emitted_object_passes(obj):
    assert host_header() is not None
    check_object(obj)


@pytest.mark.parametrize("cut", [0, 3, 40, 200, -1])
def test_truncated_objects_are_refused(obj, cut):
    with pytest.raises(ElfError):
        check_object(obj[:cut] if cut >= 0 else obj[:-1])


def test_a_shared_object_is_not_an_object(obj):
    with pytest.raises(ElfError, match="an ELF shared object, not a relocatable"):
        check_object(obj[:16] + (3).to_bytes(2, "little") + obj[18:])


def test_add_object_refuses_truncated_code_in_a_fresh_process():
    """MCJIT segfaulted on these; in a subprocess so that a regression cannot end the test run."""
    code = """
import ctypes
from runtime.elf import ElfError
from runtime.jit import default_engine
from tests.runtime.test_object_checks import emit_object
obj, eng = emit_object(), default_engine()
for cut in (10, len(obj) // 2, len(obj) - 1):
    try:
        eng.add_object(obj[:cut])
    except ElfError:
        print("refused", cut)
eng.add_object(obj)
print(ctypes.CFUNCTYPE(ctypes.c_int32)(eng.address("seven"))())
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                       check=False)
    assert r.returncode == 0, (r.returncode, r.stderr)
    lines = r.stdout.split()
    assert lines.count("refused") == 3 and lines[-1] == "7"


def test_disk_cache_discards_entries_failing_the_check(tmp_path, obj):
    c = DiskCache(tmp_path)
    k = cache_key("object")
    c.put(k, obj)
    assert c.get(k, check=check_object) == obj
    p = Path(c.put(k, obj[: len(obj) // 2]))  # hash-valid but truncated: as if written so by a bug
    assert c.get(k) == obj[: len(obj) // 2]  # no check: the bytes as stored
    assert c.get(k, check=check_object) is None
    assert not p.exists()
