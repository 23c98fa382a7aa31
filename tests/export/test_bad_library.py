"""aot_load on files that are not complete libraries for this machine: a clear InvalidLibraryError
(an OSError naming the path and what is wrong), never a crash in the system loader (a truncated
segment used to end the process with SIGBUS)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aot
from runtime.elf import ElfError, check_shared_object, host_header
from runtime.shared_lib import InvalidLibraryError

from . import funcs

REPO = Path(__file__).resolve().parents[2]


def _program_headers(data: bytes) -> list[tuple]:
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    return [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize) for i in range(phnum)]


def _patched(data: bytes, offset: int, value: bytes) -> bytes:
    return data[:offset] + value + data[offset + len(value):]


def _bad_files(data: bytes) -> dict[str, tuple[bytes, str]]:
    """name -> (file contents, the start of what the error must say)."""
    phoff, phnum = struct.unpack_from("<Q", data, 0x20)[0], struct.unpack_from("<H", data, 0x38)[0]
    seg = max((p for p in _program_headers(data) if p[0] == 1 and p[5] > 1), key=lambda p: p[2])
    other = 183 if host_header().machine_code != 183 else 62  # aarch64, or x86-64 on aarch64
    rng = np.random.default_rng(0)
    return {
        "empty": (b"", "not an ELF file"),
        "header": (data[:40], "ELF header truncated"),
        "program_headers": (data[: phoff + 56 * phnum // 2], "the program header table"),
        "segment": (data[: seg[2] + seg[5] // 2], "segment"),
        "last_byte": (data[:-1], "the section header table"),
        "random": (rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(), "not an ELF file"),
        "random_elf": (b"\x7fELF\x02\x01\x01" + rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(), ""),
        "machine": (_patched(data, 18, struct.pack("<H", other)), "built for"),
        "class32": (_patched(data, 4, b"\x01"), "a 32-bit ELF file"),
        "object": (_patched(data, 16, struct.pack("<H", 1)), "an ELF relocatable, not a shared object"),
    }


@pytest.fixture(scope="module")
def good(libs) -> bytes:
    if host_header() is None or not host_header().little_endian:
        pytest.skip("the cases are written for a little-endian host whose ELF header is readable")
    return Path(libs["elementwise_static"]).read_bytes()


def test_the_built_library_passes(good):
    check_shared_object(good)


@pytest.mark.parametrize("case", ["empty", "header", "program_headers", "segment", "last_byte", "random",
                                  "random_elf", "machine", "class32", "object"])
def test_bad_bytes_are_named(good, case):
    data, want = _bad_files(good)[case]
    with pytest.raises(ElfError) as info:
        check_shared_object(data)
    assert str(info.value).startswith(want), str(info.value)


_LOAD_ALL = r"""
import json, sys
import aot
from runtime.shared_lib import InvalidLibraryError
for path in json.loads(sys.argv[1]):
    try:
        aot.aot_load(path)
    except InvalidLibraryError as e:
        assert isinstance(e, OSError) and path in str(e), e
        print("refused", path)
    else:
        print("LOADED", path)
"""


def test_aot_load_refuses_them_in_a_fresh_process(good, tmp_path):
    """In a subprocess: a regression would crash it (SIGBUS), not the test run."""
    paths = []
    for name, (data, _) in _bad_files(good).items():
        path = tmp_path / name / "elementwise_static.so"  # the library's own name: only the bytes are wrong
        path.parent.mkdir()
        path.write_bytes(data)
        paths.append(str(path))
    r = subprocess.run([sys.executable, "-c", _LOAD_ALL, json.dumps(paths)], capture_output=True, text=True,
                       cwd=REPO, timeout=120, check=False)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert r.stdout.split("\n")[:-1] == [f"refused {p}" for p in paths]


def test_error_names_the_path_and_the_problem(good, tmp_path):
    path = tmp_path / "elementwise_static.so"
    path.write_bytes(good[:-1])
    with pytest.raises(OSError, match=r"aot_load: .*elementwise_static.so is not a loadable library: the "
                                      r"section header table .* runs past the end of the file"):
        aot.aot_load(path)
    path.write_bytes(good)  # and the intact file, under the same name, loads and runs
    x, y = funcs.elementwise_inputs(5, np.float32)
    np.testing.assert_allclose(aot.aot_load(path)(x, y), funcs.elementwise(x, y), rtol=1e-5)


def test_invalid_library_error_is_an_os_error():
    assert issubclass(InvalidLibraryError, OSError)
