"""The kernels build and load a group at a time (aot/fft/_native.py, codegen/fft/groups.py): a
first transform builds only its plan's groups, a disk-cache hit needs neither llvmlite nor the
code generator, and a damaged cache entry is rebuilt."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.fft.names import imports_of, pass_keys

ROOT = Path(__file__).resolve().parents[2]
_CHILD = """
import json, sys
import numpy as np
x = np.random.default_rng(0).random(64) + 1j
import aot.fft
from aot.fft import _native
batches, build_all = [], _native._build_all
def recorded(cache, precision, groups, vlen):
    batches.append(sorted(_native.group_name(g) for g in groups))
    return build_all(cache, precision, groups, vlen)
_native._build_all = recorded
y = aot.fft.fft(x)
print(json.dumps({
    "ok": bool(np.allclose(y, np.fft.fft(x), atol=1e-12)),
    "groups": sorted(_native.group_name(g) for g in _native.loaded("f64")._groups.libs),
    "all": len(_native.all_groups(_native.loaded("f64").vlen)),
    "built": [b for b in batches if b],
    "modules": sorted(m for m in sys.modules if m.startswith(("llvmlite", "codegen.fft.module", "codegen.targets",
                                                              "codegen.fft.groups", "codegen.trampolines"))),
}))
"""


def _child(cache: Path, code: str = _CHILD) -> subprocess.CompletedProcess:
    env = {**os.environ, "AOT_CACHE_DIR": str(cache), "AOT_PREBUILT": "0"}  # the build path, not prebuilt kernels
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)


def _report(cache: Path) -> dict:
    r = _child(cache)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> tuple[Path, dict]:
    """A cache filled by one process's fft of length 64 (radix 8 only), and that process's report."""
    cache = tmp_path_factory.mktemp("fft-cache")
    return cache, _report(cache)


def test_first_use_builds_only_what_the_plan_needs(warm_cache):
    _, first = warm_cache
    assert first["ok"]
    # the core, the forward radix-8 passes (64 = 8 * 8) and the call thunks; not the planner,
    # no other radix, no backward passes
    assert [g for g in first["groups"] if not g.startswith("thunks")] == ["core", "radix_8_1"]
    assert len(first["groups"]) == 3 < first["all"]
    assert "llvmlite.binding" in first["modules"]  # it did compile
    assert first["built"] == [first["groups"]]  # in one batch, side by side: not the core first


def test_cache_hit_imports_no_code_generator(warm_cache):
    cache, first = warm_cache
    again = _report(cache)
    assert again["ok"] and again["groups"] == first["groups"] and again["built"] == []
    assert again["modules"] == []  # no llvmlite, codegen.targets, emitters or trampolines


def test_corrupted_cache_entries_are_rebuilt(warm_cache, tmp_path):
    cache, first = warm_cache
    damaged = tmp_path / "cache"
    damaged.mkdir(mode=0o700)
    entries = sorted(cache.glob("*/*.bin"))
    assert entries
    for p in entries:  # a copy with every entry's payload damaged (the header's digest no longer matches)
        (damaged / p.parent.name).mkdir(mode=0o700, exist_ok=True)
        data = bytearray(p.read_bytes())
        data[-100] ^= 0xFF
        (damaged / p.parent.name / p.name).write_bytes(bytes(data))
    rebuilt = _report(damaged)
    assert rebuilt["ok"] and rebuilt["groups"] == first["groups"]
    assert "llvmlite.binding" in rebuilt["modules"]  # discarded and compiled again
    assert _report(damaged)["modules"] == []  # and stored: the next process loads it


def test_a_pass_group_that_is_not_loaded_traps(warm_cache):
    """The core calls passes through its import table; an empty slot stops the process with a
    trap instruction (SIGILL), never a jump to address 0."""
    cache, _ = warm_cache
    code = """
import numpy as np
from aot.fft import _native
from aot.fft._plans import DirectPlan
k = _native.loaded("f64")
plan = DirectPlan(64, np.dtype(np.complex128))
x = np.ones(64, np.complex128); y = np.empty_like(x); s = np.empty(4 * 64, np.float64)
p = lambda a: _native.ffi.cast(k.cptr, a.ctypes.data)
hdr, tw = _native.ffi.cast("int64_t *", plan.header.ctypes.data), p(plan.twiddles)
k.c2c(hdr, tw, p(x), p(y), 1, 1, 64, 1, 64, 0, 1.0, p(s))  # backward: its passes were never loaded
"""
    r = _child(cache, code)
    assert r.returncode == -signal.SIGILL, (r.returncode, r.stderr[-2000:])


def test_core_imports_every_pass_the_interpreter_calls():
    """names.imports_of lists each pass once, and the group it names defines it (groups.py emits
    the core's stubs and the groups' passes from the same keys)."""
    from codegen.fft.groups import emit_group

    for vlen in (2, 4, 8):
        imports = imports_of(("core",), "f64", vlen)
        symbols = [s for s, _ in imports]
        assert len(set(symbols)) == len(symbols) == sum(len(pass_keys(fw, vlen)) for fw in (True, False))
        assert f"[{len(symbols)} x ptr] zeroinitializer" in str(emit_group("f64", vlen, ("core",)))
    imports = imports_of(("core",), "f64", 4)
    for group in dict.fromkeys(g for _, g in imports):
        text = str(emit_group("f64", 4, group))
        for symbol in (s for s, g in imports if g == group):
            assert f'define external void @"{symbol}"' in text, (group, symbol)
