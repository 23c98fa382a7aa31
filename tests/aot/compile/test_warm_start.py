"""Warm start (aot/compiler/warm_start.py): a fresh process loads an earlier one's native code
without tracing or LLVM, and every stale-cache trap numba users report gives a recompile, not a
wrong answer: a callee edited in another module, a changed global constant, another numpy
version, another CPU, a corrupted or truncated entry, a cache directory others can write to.

Each case runs small programs in fresh processes that report their result's correctness, their
cache_info and which compiler packages they imported.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import aot

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="warm start loads via memfd")

HELPERS = """
FACTOR = {factor}


def scaled(x):
    return x * FACTOR + {offset}
"""

MAIN = """
import json, sys
import numpy as np
{prelude}
before = set(sys.modules)  # what the interpreter's site or numpy imported is not aot's doing
import aot
import helpers
from helpers import scaled

SHIFT = {shift}


def chain(x, y):
    return np.sin(scaled(x)) * np.exp(-y) + helpers.FACTOR * y + SHIFT


f = aot.compile(chain)
x, y = np.linspace(0, 1, 257), np.linspace(1, 2, 257)
expect = np.sin(x * helpers.FACTOR + helpers.OFFSET) * np.exp(-y) + helpers.FACTOR * y + SHIFT
ok = bool(np.allclose(f(x, y), expect, rtol=1e-14, atol=0))
heavy = sorted(m for m in ("llvmlite", "sympy", "codegen", "aot.compiler.capture", "aot.frontend",
                          "aot.compiler.watchdog", "aot.futures", "threading", "_cffi_backend")
               if m in sys.modules and m not in before)
info = f.cache_info()
print(json.dumps({{"ok": ok, "warm": info["warm_starts"], "compiles": info["compiles"], "heavy": heavy}}))
"""


class Program:
    """A two-module program in its own directory, with its own disk cache."""

    def __init__(self, root: Path):
        self.root = root
        self.cache = root / "cache"
        root.mkdir(exist_ok=True)
        self.write()

    def write(self, *, factor: float = 2.0, offset: float = 0.5, shift: float = 1.0, prelude: str = "") -> None:
        """`prelude`: one line run before aot is imported (one line: `chain` keeps its line numbers)."""
        assert "\n" not in prelude
        helpers = HELPERS.format(factor=factor, offset=offset) + f"\nOFFSET = {offset}\n"
        self._put("helpers.py", helpers)
        self._put("main.py", MAIN.format(shift=shift, prelude=prelude))

    def _put(self, name: str, text: str) -> None:
        path = self.root / name
        old = path.read_text() if path.exists() else None
        if old != text:
            path.write_text(text)
            st = path.stat()  # a new mtime even within the filesystem's timestamp granularity
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))

    def run(self, **env) -> dict:
        full = {**os.environ, "AOT_CACHE_DIR": str(self.cache), "AOT_WARM_START": "1", **env}
        full.pop("AOT_LOGS", None)
        out = subprocess.run([sys.executable, "main.py"], cwd=self.root, env=full, capture_output=True,
                             text=True, timeout=180, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def program(tmp_path):
    return Program(tmp_path / "prog")


COLD = {"ok": True, "warm": 0, "compiles": 1}
WARM = {"ok": True, "warm": 1, "compiles": 0}


def _summary(r: dict) -> dict:
    return {k: r[k] for k in ("ok", "warm", "compiles")}


def test_second_process_starts_warm_without_the_compiler(program):
    cold = program.run()
    assert _summary(cold) == COLD and "llvmlite" in cold["heavy"]
    warm = program.run()
    assert _summary(warm) == WARM
    assert warm["heavy"] == []  # no tracer, code generator, sympy, llvmlite, compile pool, threading or cffi


def test_callee_edited_in_another_module(program):
    assert _summary(program.run()) == COLD
    program.write(factor=2.0, offset=0.75, shift=1.0)  # `scaled`'s code changes, main.py does not
    assert _summary(program.run()) == COLD
    assert _summary(program.run()) == WARM


def test_module_attribute_read_through_the_module(program):
    assert _summary(program.run()) == COLD
    program.write(factor=3.0, offset=0.5, shift=1.0)  # helpers.FACTOR, read as a module attribute
    assert _summary(program.run()) == COLD


def test_changed_global_constant(program):
    assert _summary(program.run()) == COLD
    assert _summary(program.run()) == WARM
    program.write(factor=2.0, offset=0.5, shift=2.5)
    assert _summary(program.run()) == COLD
    program.write(factor=2.0, offset=0.5, shift=1.0)  # back: the first entry is still valid
    assert _summary(program.run()) == WARM


def test_other_numpy_version(program):
    assert _summary(program.run()) == COLD
    program.write(prelude="np.__version__ = np.__version__ + '.post-test'")
    assert _summary(program.run()) == COLD
    program.write()
    assert _summary(program.run()) == WARM


def test_other_cpu_features(program):
    assert _summary(program.run()) == COLD
    program.write(prelude="import aot.compiler.fingerprint as fp; fp._cpu_features = lambda: 'another cpu'")
    assert _summary(program.run()) == COLD
    program.write(prelude="import aot.compiler.fingerprint as fp; fp._cpu_features = lambda: None")
    assert _summary(program.run()) == COLD  # features unknown: no warm start at all
    assert _summary(program.run()) == COLD
    program.write()
    assert _summary(program.run()) == WARM


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_corrupted_entries_are_rebuilt(program, damage):
    assert _summary(program.run()) == COLD
    entries = sorted(program.cache.glob("*/*.bin"))
    assert entries
    for path in entries:
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "flip":
            path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
        else:
            path.write_bytes(b"")
    assert _summary(program.run()) == COLD  # every entry damaged: the object code is rebuilt too
    assert _summary(program.run()) == WARM


def test_cache_directory_writable_by_others_is_refused(program):
    assert _summary(program.run()) == COLD
    os.chmod(program.cache, 0o777)
    try:
        assert _summary(program.run()) == COLD  # refused (with a warning), compiled in memory
    finally:
        os.chmod(program.cache, 0o700)
    assert _summary(program.run()) == WARM


def test_disabled_by_environment(program):
    assert _summary(program.run(AOT_WARM_START="0")) == COLD
    assert _summary(program.run(AOT_WARM_START="0")) == COLD


def test_in_process_guards_after_a_warm_start(tmp_path, monkeypatch):
    """A warm-started entry keeps the traced entry's guards: other shapes and a changed global
    scalar compile a new entry."""
    prog = tmp_path / "guards.py"
    prog.write_text(textwrap.dedent("""
        import json
        import numpy as np
        import aot

        K = 2.0

        def f(x):
            return np.cos(x) * K

        g = aot.compile(f)
        a = np.linspace(0, 1, 64)
        r1 = g(a)
        b = np.linspace(0, 1, 65)
        r2 = g(b)
        K = 3.0
        r3 = g(a)
        ok = (np.allclose(r1, np.cos(a) * 2) and np.allclose(r2, np.cos(b) * 2)
              and np.allclose(r3, np.cos(a) * 3))
        info = g.cache_info()
        print(json.dumps({"ok": bool(ok), "warm": info["warm_starts"], "compiles": info["compiles"]}))
    """))
    env = {**os.environ, "AOT_CACHE_DIR": str(tmp_path / "cache"), "AOT_WARM_START": "1"}

    def run():
        out = subprocess.run([sys.executable, str(prog)], env=env, capture_output=True, text=True,
                             timeout=180, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run() == {"ok": True, "warm": 0, "compiles": 3}
    # the 64-element entry (K=2.0) starts warm; 65 elements and K=3.0 (keyed separately) too now
    assert run() == {"ok": True, "warm": 1, "compiles": 2}


def test_what_the_key_cannot_describe_is_not_warm_started():
    """Calls the key cannot describe compile as usual: a global array, a Python scalar argument,
    keyword arguments, an object of a user class."""
    from aot.compiler.fingerprint import function_key

    table = np.arange(5.0)

    class Box:
        k = 2.0

    box = Box()

    def uses_global(x):
        return x + table

    def with_scalar(x, s):
        return x * s

    def uses_object(x):
        return x * box.k

    def plain(x):
        return x * 2.0

    x = np.ones(5)
    assert function_key(uses_global, (x,), {}, "") is None
    assert function_key(with_scalar, (x, 2.0), {}, "") is None
    assert function_key(with_scalar, (x,), {"s": 2.0}, "") is None
    assert function_key(uses_object, (x,), {}, "") is None
    key = function_key(plain, (x,), {}, "")
    assert key is not None and key == function_key(plain, (x,), {}, "")
    assert function_key(plain, (np.ones(6),), {}, "") != key
    assert function_key(plain, (x.astype(np.float32),), {}, "") != key
    assert function_key(plain, (x,), {}, "other settings") != key
    for f, args in ((uses_global, (x,)), (with_scalar, (x, 2.0)), (uses_object, (x,))):
        assert np.array_equal(aot.compile(f)(*args), f(*args))


def test_two_functions_start_warm_in_one_process(tmp_path):
    """Each warm start loads its own library (glibc knows a library by its path: memory files
    that were closed and reused would hand the second function the first one's code)."""
    prog = tmp_path / "two.py"
    prog.write_text(textwrap.dedent("""
        import json
        import numpy as np
        import aot

        f = aot.compile(lambda x: np.sin(x) + 1.0)
        g = aot.compile(lambda x: np.cos(x) * 2.0)
        a = np.linspace(0, 1, 50)
        ok = np.allclose(f(a), np.sin(a) + 1.0) and np.allclose(g(a), np.cos(a) * 2.0)
        warm = f.cache_info()["warm_starts"] + g.cache_info()["warm_starts"]
        print(json.dumps({"ok": bool(ok), "warm": warm}))
    """))
    env = {**os.environ, "AOT_CACHE_DIR": str(tmp_path / "cache"), "AOT_WARM_START": "1"}

    def run():
        out = subprocess.run([sys.executable, str(prog)], env=env, capture_output=True, text=True,
                             timeout=180, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run() == {"ok": True, "warm": 0}
    assert run() == {"ok": True, "warm": 2}


DYNAMIC = """
import json, sys
import numpy as np
before = set(sys.modules)
import aot


def joined(x, y):
    return np.concatenate([x * 2.0, np.sin(y)]) + 1.0


f = aot.compile(joined{options})
rng = np.random.default_rng(0)
ok = []
for n, m in {sizes}:
    x, y = rng.random(n), rng.random(m)
    ok.append(bool(np.allclose(f(x, y), joined(x, y), rtol=1e-14, atol=0)))
info = f.cache_info()
heavy = sorted(m for m in ("llvmlite", "sympy", "aot.compiler.capture") if m in sys.modules and m not in before)
print(json.dumps({{"ok": ok, "warm": info["warm_starts"], "compiles": info["compiles"], "heavy": heavy}}))
"""


@pytest.mark.parametrize("dynamic", [None, True])
def test_symbolic_compile_starts_warm_and_its_guards_decide(tmp_path, dynamic):
    """A symbolic compile (the dims that changed, or dynamic=True) is stored with its guards: a
    fresh process whose sizes satisfy them loads it without sympy or the tracer; sizes that break
    one of its relations (x and y of equal length, a duck-sized dim) compile an entry for them,
    which is stored in its place."""
    prog = tmp_path / "dyn.py"
    env = {**os.environ, "AOT_CACHE_DIR": str(tmp_path / "cache"), "AOT_WARM_START": "1"}
    env.pop("AOT_LOGS", None)
    options = "" if dynamic is None else ", dynamic=True"
    first = 0 if dynamic else 1  # automatic dynamic: a static entry first, then the symbolic one

    def run(sizes):
        prog.write_text(DYNAMIC.format(options=options, sizes=sizes))
        out = subprocess.run([sys.executable, str(prog)], env=env, capture_output=True, text=True,
                             timeout=180, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    equal = [(10, 10), (11, 11), (40, 40)][1 - first:]
    cold = run(equal)
    assert cold["ok"] == [True] * len(equal) and cold["compiles"] == 1 + first and cold["warm"] == 0
    warm = run(equal)
    assert warm == {"ok": [True] * len(equal), "warm": 1 + first, "compiles": 0, "heavy": []}
    unequal = [(10, 10), (12, 15), (7, 9)][1 - first:]
    broke = run(unequal)  # the stored entry's x-and-y-equal relation fails: one compile
    assert broke["ok"] == [True] * len(unequal) and broke["compiles"] == 1 and broke["warm"] == first
    again = run(unequal + [(5, 5)])
    assert again == {"ok": [True] * (len(unequal) + 1), "warm": 1 + first, "compiles": 0, "heavy": []}


def test_damaged_stored_guards_compile_instead(monkeypatch, tmp_path):
    """A symbolic record whose guard texts do not compile (a damaged or foreign cache) is not
    used: the call compiles and gives numpy's answer, with a warning, never an exception."""
    from aot.compiler import warm_start

    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path))
    bad = {"texts": ["L[0].shape[0] =="], "sizes": [], "static_dims": {0: {}}, "ranks": {0: 1},
           "contiguous": [0]}
    monkeypatch.setattr(warm_start, "lookup", lambda key, args: (lambda *a: None, None, 1, [0], bad))
    f = aot.compile(lambda x: x * 3.0 + 1.0, dynamic=True)
    x = np.arange(7.0)
    assert f._warm_entry("key", (x,), [x]) is None
    np.testing.assert_array_equal(f(x), x * 3.0 + 1.0)
    assert f.cache_info()["compiles"] == 1 and f.cache_info()["warm_starts"] == 0
    assert not warm_start._guards_ok({**bad, "texts": [3]})
