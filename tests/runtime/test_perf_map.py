"""The perf map (runtime/perf_map.py): with AOT_PERF_MAP=1 every generated function loaded into a
process has a line `START SIZE aot:FUNC:SYMBOL` in /tmp/perf-PID.map, inside the process's
executable memory, named after the Python function and the kernel's computation.

Programs run in fresh processes with AOT_PERF_MAP=1 and an empty disk cache: the first compiles
a function of several kernels (object code into MCJIT), runs an eager FFT (kernel groups linked
and loaded as shared libraries) and JIT-compiles hand-written IR; the second starts warm (the
function's shared library, loaded from a memory file). Each records the bytes of every object
and library it loaded and its /proc/self/maps; the map must name exactly the FUNC symbols readelf
lists for those bytes. A last test profiles a sin kernel with `perf record` (-m slow).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from runtime import perf_map
from runtime.elf import ElfError, read_function_symbols

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="perf maps are Linux's")

REPO = Path(__file__).resolve().parents[2]
LINE = re.compile(r"([0-9a-f]+) ([0-9a-f]+) aot:([^:\s]+):(\S+)\Z")

PROGRAM = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path

    import numpy as np

    import runtime
    import runtime.jit
    import runtime.native_lib

    out = Path(sys.argv[2])
    loaded = []  # what native code entered the process, recorded beside the code under test


    def _keep(kind, data):
        path = out / f"{sys.argv[1]}-{len(loaded)}.{kind}"
        path.write_bytes(data)
        loaded.append(str(path))


    add_object, load_library = runtime.jit.JitEngine.add_object, runtime.native_lib.load_library


    def keeping_add_object(self, obj, *args, **kwargs):
        _keep("o", obj)
        return add_object(self, obj, *args, **kwargs)


    def keeping_load_library(data, *args, **kwargs):
        _keep("so", data)
        return load_library(data, *args, **kwargs)


    runtime.jit.JitEngine.add_object = keeping_add_object
    runtime.native_lib.load_library = keeping_load_library  # callers import it when they load

    import aot


    def chain(x, y):
        return np.sin(x) * np.exp(-y) + x * y / (1 + y * y), x.sum(), (x * 2.0).max(axis=0)


    f = aot.compile(chain)
    x, y = np.linspace(0, 1, 400 * 400).reshape(400, 400), np.linspace(1, 2, 400 * 400).reshape(400, 400)
    got, want = f(x, y), chain(x, y)
    ok = all(np.allclose(g, w, rtol=1e-12) for g, w in zip(got, want))
    if sys.argv[1] == "cold":
        z = np.linspace(0, 1, 64)
        ok = ok and np.allclose(aot.fft.fft(z), np.fft.fft(z))
        from runtime.buffers import ArgSpec, Signature
        from tests.runtime.test_jit import DOUBLE_IR

        sig = Signature((ArgSpec(np.float64, (5,)),), (ArgSpec(np.float64, (5,)),), "double_it")
        ok = ok and (runtime.load(DOUBLE_IR, "double_it", sig)(np.arange(5.0)) == 2 * np.arange(5.0)).all()
        from aot.compiler import warm_start

        warm_start.wait()  # the shared library the second process starts from
    print(json.dumps({"ok": bool(ok), "pid": os.getpid(), "warm": f.cache_info()["warm_starts"],
                      "loaded": loaded, "maps": Path("/proc/self/maps").read_text()}))
""")


def _run(phase: str, tmp: Path) -> dict:
    env = {**os.environ, "AOT_PERF_MAP": "1", "AOT_CACHE_DIR": str(tmp / "cache"), "AOT_WARM_START": "1",
           "PYTHONPATH": str(REPO)}
    env.pop("AOT_LOGS", None)
    r = subprocess.run([sys.executable, str(tmp / "program.py"), phase, str(tmp)], env=env,
                       capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    info = json.loads(r.stdout.strip().splitlines()[-1])
    map_file = Path(perf_map.path(info["pid"]))
    info["lines"] = map_file.read_text().splitlines() if map_file.exists() else []
    map_file.unlink(missing_ok=True)
    return info


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The cold and the warm process's reports (their map lines included)."""
    tmp = tmp_path_factory.mktemp("perf_map")
    (tmp / "cache").mkdir(mode=0o700)
    (tmp / "program.py").write_text(PROGRAM)
    cold = _run("cold", tmp)
    return {"cold": cold, "warm": _run("warm", tmp)}


def _parsed(lines: list[str]) -> list[tuple[int, int, str, str]]:
    out = []
    for line in lines:
        m = LINE.match(line)
        assert m, f"malformed perf map line {line!r}"
        out.append((int(m[1], 16), int(m[2], 16), m[3], m[4]))
    return out


def _readelf_functions(path: str) -> Counter:
    """(name, size) of the defined functions with a size in a file's symbol table, as readelf says."""
    text = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True, check=True).stdout
    tables = re.split(r"\nSymbol table '([^']+)'", text)
    table = dict(zip(tables[1::2], tables[2::2]))
    rows = table.get(".symtab", table.get(".dynsym", ""))
    out = Counter()
    for row in rows.splitlines():
        f = row.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] not in ("UND", "ABS"):
            size = int(f[2], 0)
            if size:
                out[(f[7], size)] += 1
    return out


def _executable(maps: str) -> list[tuple[int, int]]:
    spans = []
    for row in maps.splitlines():
        span, perms = row.split()[:2]
        if "x" in perms:
            lo, hi = span.split("-")
            spans.append((int(lo, 16), int(hi, 16)))
    return spans


@pytest.mark.parametrize("phase", ["cold", "warm"])
def test_lines_are_well_formed_and_in_executable_memory(runs, phase):
    run = runs[phase]
    assert run["ok"] and run["lines"], run.get("lines")
    spans = _executable(run["maps"])
    for start, size, _func, name in _parsed(run["lines"]):
        assert size > 0
        assert any(lo <= start and start + size <= hi for lo, hi in spans), \
            f"{name} [{start:#x}, {start + size:#x}) lies outside the process's executable mappings"


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf (binutils)")
@pytest.mark.parametrize("phase", ["cold", "warm"])
def test_one_line_per_loaded_function(runs, phase):
    """Exactly the functions of the objects and libraries the process loaded (and of the IR it
    JIT-compiled: `double_it`), each once, with its size."""
    run = runs[phase]
    lines = _parsed(run["lines"])
    mapped = Counter((name, size) for _s, size, func, name in lines if func != "double_it")
    want = sum((_readelf_functions(p) for p in run["loaded"]), Counter())
    assert mapped == want
    if phase == "cold":
        jitted = [(func, name) for _s, _z, func, name in lines if func == "double_it"]
        assert jitted == [("double_it", "double_it")]


@pytest.mark.parametrize("phase", ["cold", "warm"])
def test_names_say_whose_code_and_what_it_computes(runs, phase):
    run = runs[phase]
    lines = _parsed(run["lines"])
    owners = {name: func for _s, _z, func, name in lines}
    entry = next(n for n in owners if re.fullmatch(r"aot_[0-9a-f]{24}", n))
    assert owners[entry] == "chain"
    kernels = [n.removeprefix(entry) for n in owners if n.startswith(entry + ".")]
    assert {owners[entry + k] for k in kernels} == {"chain"}
    for computes in (r"ew\d+\.sin_neg_exp_mul_add_div", r"(red|split)\d+\.sum", r"red\d+\.max_of_mul"):
        assert any(re.fullmatch(r"\." + computes, k) for k in kernels), (computes, kernels)
    assert owners["aot_call_strided"] == "trampoline"
    if phase == "cold":
        fft = [func for name, func in owners.items() if name.startswith("aot_fft_")]
        assert "aot_fft_c2c_f64" in owners and set(fft) == {"fft"}
    else:
        assert run["warm"] == 1 and any(p.endswith(".so") for p in run["loaded"])  # from the memory file


def test_nothing_is_written_when_off():
    """Without AOT_PERF_MAP (this process), loading code writes no map."""
    import numpy as np

    import runtime
    from runtime.buffers import ArgSpec, Signature

    from .test_jit import DOUBLE_IR

    if perf_map.ENABLED:
        pytest.skip("this test process runs with AOT_PERF_MAP set")
    sig = Signature((ArgSpec(np.float64, (3,)),), (ArgSpec(np.float64, (3,)),), "double_it")
    runtime.load(DOUBLE_IR, "double_it", sig)(np.ones(3))
    assert not Path(perf_map.path()).exists()


def _section_header(data: bytes, k: int) -> int:
    """Offset of section header k of a 64-bit little-endian ELF file."""
    return struct.unpack_from("<Q", data, 0x28)[0] + 64 * k


def _symtab_header(data: bytes) -> int:
    (shnum,) = struct.unpack_from("<H", data, 0x3C)
    return next(_section_header(data, k) for k in range(shnum)
                if struct.unpack_from("<I", data, _section_header(data, k) + 4)[0] == 2)  # SHT_SYMTAB


def test_function_symbols_are_bounds_checked(runs):
    """The warm library's functions are read; a symbol table past the end of the file, or a
    name past the end of its string table: ElfError, not garbage."""
    data = Path(next(p for p in runs["warm"]["loaded"] if p.endswith(".so"))).read_bytes()
    names = {s.name for s in read_function_symbols(data)}
    assert "aot_call_strided" in names and any(".ew" in n for n in names)
    hdr = _symtab_header(data)
    long_table = bytearray(data)
    struct.pack_into("<Q", long_table, hdr + 0x20, len(data))  # sh_size
    with pytest.raises(ElfError, match="symbol table .* runs past the end"):
        read_function_symbols(bytes(long_table))
    off, size, link = struct.unpack_from("<QQI", data, hdr + 0x18)
    (strtab_size,) = struct.unpack_from("<Q", data, _section_header(data, link) + 0x20)
    bad_name = bytearray(data)
    for k in range(off, off + size, 24):
        if bad_name[k + 4] & 0xF == 2 and struct.unpack_from("<Q", bad_name, k + 16)[0]:  # a sized FUNC
            struct.pack_into("<I", bad_name, k, strtab_size + 5)
    with pytest.raises(ElfError, match="does not end inside its"):
        read_function_symbols(bytes(bad_name))


# --- perf itself --------------------------------------------------------------------------------
PROFILED = textwrap.dedent("""
    import os, time
    import numpy as np
    import aot

    f = aot.compile(lambda x: np.sin(x))
    x = np.linspace(0, 1, 1 << 16)
    end = time.perf_counter() + 1.0
    while time.perf_counter() < end:
        f(x)
    print(os.getpid())
""")


def _perf_can_record(tmp: Path) -> bool:
    if shutil.which("perf") is None:
        return False
    probe = ["perf", "record", "-q", "-e", "cpu-clock", "-o", str(tmp / "probe.data"), "--", "true"]
    r = subprocess.run(probe, capture_output=True, text=True, check=False)
    return r.returncode == 0


@pytest.mark.slow
def test_perf_attributes_samples_to_kernels(tmp_path):
    if not _perf_can_record(tmp_path):
        pytest.skip("perf is missing or perf_event_open is refused (kernel.perf_event_paranoid)")
    (tmp_path / "prog.py").write_text(PROFILED)
    data = tmp_path / "perf.data"
    env = {**os.environ, "AOT_PERF_MAP": "1", "PYTHONPATH": str(REPO)}
    record = ["perf", "record", "-q", "-e", "cpu-clock", "-o", str(data), "--", sys.executable,
              str(tmp_path / "prog.py")]
    r = subprocess.run(record, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    map_file = Path(perf_map.path(int(r.stdout.split()[-1])))
    try:
        report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--sort", "sym"],
                                capture_output=True, text=True, timeout=300, check=True).stdout
    finally:
        map_file.unlink(missing_ok=True)
    samples = [line for line in report.splitlines() if re.search(r"aot:<lambda>:aot_\w+\.ew\d+\.sin\b", line)]
    assert samples, report[:3000]
