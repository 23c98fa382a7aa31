"""Libraries from aot_load pickle by value: the .so bytes travel with their SHA-256, and unpickling
checks the digest and then the ELF file (runtime/shared_lib.py, rebuild_library) before mapping."""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aot
from runtime.shared_lib import InvalidLibraryError, rebuild_library

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")

REPO = Path(__file__).resolve().parents[2]


def mixed(x, k):
    return np.sin(x) * 2.0 + x, k * 3 + 1


def _inputs(n: int, m: int):
    rng = np.random.default_rng(n)
    return rng.random((n, 2)), rng.integers(-1000, 1000, m).astype(np.int32)


@pytest.fixture(scope="module")
def so(tmp_path_factory) -> Path:
    """A library with a float64 and an int32 input (dynamic lengths)."""
    N, M = aot.Dim("N", min=1), aot.Dim("M", min=1)
    path = tmp_path_factory.mktemp("pickle") / "mixed.so"
    return Path(aot.aot_compile(mixed, _inputs(3, 4), dynamic_shapes={"x": {0: N}, "k": {0: M}}, path=path))


def _copy(so: Path, tmp_path: Path) -> Path:
    """A file of its own (same name: NAME comes from it), so a test may delete or replace it."""
    tmp_path.mkdir(exist_ok=True)
    dst = tmp_path / so.name
    shutil.copyfile(so, dst)
    return dst


def test_round_trip_in_process(so):
    lib = aot.aot_load(so)
    back = pickle.loads(pickle.dumps(lib))
    assert back is not lib and back.path != lib.path
    for attr in ("signature", "name", "target", "abi_version"):
        assert getattr(back, attr) == getattr(lib, attr), attr
    for n, m in ((1, 1), (7, 3), (1000, 513)):
        x, k = _inputs(n, m)
        assert back.output_shapes(x, k) == lib.output_shapes(x, k)
        (gx, gk), (wx, wk) = back(x, k), lib(x, k)
        assert (gx.dtype, gk.dtype) == (np.float64, np.int32)
        np.testing.assert_array_equal(gx, wx)
        np.testing.assert_array_equal(gk, wk)
    assert pickle.loads(pickle.dumps(lib)) is back  # same bytes: loaded once
    assert pickle.loads(pickle.dumps(back)) is back  # and an unpickled library pickles again


_CHILD = r"""
import pickle, sys
import numpy as np
lib = pickle.loads(open(sys.argv[1], "rb").read())
rng = np.random.default_rng(3)
for n, m in ((1, 1), (5, 9), (2000, 300)):
    x, k = rng.random((n, 2)), rng.integers(-1000, 1000, m).astype(np.int32)
    gx, gk = lib(x, k)
    np.testing.assert_allclose(gx, np.sin(x) * 2.0 + x, rtol=1e-13)
    assert gk.dtype == np.int32
    np.testing.assert_array_equal(gk, k * 3 + 1)
assert "llvmlite" not in sys.modules, "unpickling must not need the compiler"
print(lib.path)
print(lib.name, lib.signature)
"""


def test_round_trip_fresh_process_without_the_file(so, tmp_path):
    path = _copy(so, tmp_path / "lib")
    lib = aot.aot_load(path)
    blob = tmp_path / "lib.pickle"
    blob.write_bytes(pickle.dumps(lib))
    path.unlink()  # the pickle alone must be enough
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", _CHILD, str(blob)], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=120, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    mapped, described = r.stdout.splitlines()
    assert described == f"{lib.name} {lib.signature}"
    assert Path(mapped).name == path.name and not Path(mapped).parent.exists()  # removed at exit


def test_tampered_bytes_fail_the_digest(so):
    data = so.read_bytes()
    blob = bytearray(pickle.dumps(aot.aot_load(so)))
    start = bytes(blob).find(data[:256])
    assert start >= 0
    blob[start + len(data) // 2] ^= 0xFF
    digests = r"SHA-256 mismatch \(expected [0-9a-f]{64}, got [0-9a-f]{64}\)"
    with pytest.raises(InvalidLibraryError, match=digests):
        pickle.loads(bytes(blob))


def test_truncated_bytes_fail_the_elf_check(so):
    data = so.read_bytes()[: so.stat().st_size // 2]
    with pytest.raises(InvalidLibraryError, match="is not a loadable library"):
        rebuild_library(data, so.name, hashlib.sha256(data).hexdigest())
    with pytest.raises(InvalidLibraryError, match="bad file name"):
        rebuild_library(data, "../mixed.so", hashlib.sha256(data).hexdigest())


def test_replaced_file_does_not_pickle(so, tmp_path):
    path = _copy(so, tmp_path)
    lib = aot.aot_load(path)
    other = tmp_path / "other"
    shutil.copyfile(so, other)
    os.replace(other, path)  # a rebuild: another file under the name, which dlopen did not map
    with pytest.raises(pickle.PicklingError, match="no longer holds what was loaded"):
        pickle.dumps(lib)
