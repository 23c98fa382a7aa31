"""Prebuilt runtime helpers (runtime/prebuilt.py, aot/prebuild.py): a first compile in a fresh
process with an empty disk cache loads the call trampoline and the blocks module instead of
generating them, copies them into the cache, and generates them when an entry is damaged or the
directory is writable by others; a rebuild removes entries of other keys."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runtime import prebuilt

ROOT = Path(__file__).resolve().parents[2]

_COMPILE = """
import json
import numpy as np
import aot
from codegen import trampolines
built, ir = [], type(trampolines.HELPERS).ir
def recorded(self, name, params):
    built.append(name)
    return ir(self, name, params)
type(trampolines.HELPERS).ir = recorded
f = aot.compile(lambda x, y: x * y + 1)
x = np.arange(10.0)
assert np.array_equal(f(x, x), x * x + 1)
print(json.dumps(built))
"""


def _compile(cache: Path, root: str) -> tuple[list, str]:
    env = {**os.environ, "AOT_CACHE_DIR": str(cache), prebuilt.ENV: root, "AOT_WARM_START": "0"}
    r = subprocess.run([sys.executable, "-c", _COMPILE], env=env, cwd=ROOT, capture_output=True, text=True,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1]), r.stderr


@pytest.fixture(scope="module")
def helpers(tmp_path_factory) -> Path:
    from aot.prebuild import build_helpers

    root = tmp_path_factory.mktemp("helpers") / "prebuilt"
    assert build_helpers(str(root)) == 3
    assert build_helpers(str(root)) == 0  # up to date
    return root


def test_first_compile_loads_prebuilt_helpers(helpers, tmp_path):
    cache = tmp_path / "cache"
    built, _ = _compile(cache, str(helpers))
    assert "array_call" not in built and "blocks" not in built  # loaded, not generated
    built, _ = _compile(cache, "0")  # copied into the cache: found there without them
    assert "array_call" not in built and "blocks" not in built
    built, _ = _compile(tmp_path / "other", "0")
    assert "array_call" in built and "blocks" in built


def test_damaged_or_exposed_helpers_are_built_instead(helpers, tmp_path):
    root = Path(shutil.copytree(helpers, tmp_path / "prebuilt"))
    for path in (root / "helpers").iterdir():
        data = bytearray(path.read_bytes())
        data[-10] ^= 0xFF
        path.write_bytes(bytes(data))
    built, log = _compile(tmp_path / "c1", str(root))
    assert "array_call" in built and "not using prebuilt helper" in log
    shutil.rmtree(root)
    root = Path(shutil.copytree(helpers, tmp_path / "prebuilt"))
    (root / "helpers").chmod(0o777)
    built, log = _compile(tmp_path / "c2", str(root))
    assert "array_call" in built and "others could write it" in log


def test_stale_helpers_are_removed(helpers, tmp_path):
    from aot.prebuild import build_helpers

    root = Path(shutil.copytree(helpers, tmp_path / "prebuilt"))
    stale = root / "helpers" / ("0" * 64 + ".bin")
    stale.write_bytes(b"old")
    assert build_helpers(str(root)) == 0 and not stale.exists()
    assert len(list((root / "helpers").iterdir())) == 3
