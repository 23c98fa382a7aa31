"""Prebuilt FFT kernels (aot/fft/_prebuilt.py, aot/fft/prebuild.py): a first transform in a fresh
process with an empty disk cache loads them without LLVM, copies them into the cache, and builds
instead whenever they cannot be trusted: other sources, a damaged library, another CPU, a directory
others can write, or turned off."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aot.fft import _prebuilt
from aot.fft._native import _thunks_group
from aot.fft.prebuild import build, up_to_date
from codegen.fft.names import group_name
from codegen.targets import named_target
from codegen.targets.base import parse, with_tuning
from runtime import prebuilt

ROOT = Path(__file__).resolve().parents[2]
_GROUPS = ["core", "radix_8_1", "radix_8_0", group_name(_thunks_group())]  # what fft and ifft of 64 points load
_CHILD = """
import json, logging, sys
import numpy as np
x = np.random.default_rng(0).random(64) + 1j
import aot.fft
from aot.fft import _native
y, z = aot.fft.fft(x), aot.fft.ifft(x)
print(json.dumps({
    "ok": bool(np.allclose(y, np.fft.fft(x), atol=1e-12) and np.allclose(z, np.fft.ifft(x), atol=1e-12)),
    "groups": sorted(_native.group_name(g) for g in _native.loaded("f64")._groups.libs),
    "llvm": "llvmlite.binding" in sys.modules,
}))
"""


def _run(cache: Path, root: str, log: bool = False) -> dict:
    env = {**os.environ, "AOT_CACHE_DIR": str(cache), prebuilt.ENV: root}
    if log:
        env["AOT_LOGS"] = "fft"
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=ROOT, capture_output=True, text=True,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["ok"], "the transforms differ from numpy's"
    out["log"] = r.stderr
    return out


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> Path:
    """A prebuilt directory (its fft/) of this CPU's f64 groups that 64-point transforms use."""
    root = tmp_path_factory.mktemp("prebuilt") / "prebuilt"
    r = build(_prebuilt.directory(str(root)), ["host"], precisions=("f64",), only=_GROUPS)
    assert r["groups"] == len(_GROUPS) and not r["skipped"]
    return root


def _copy(kernels: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(kernels, tmp_path / "prebuilt"))


def _edit_manifest(root: Path, edit) -> None:
    path = root / "fft" / _prebuilt.MANIFEST
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))


def test_first_transform_loads_prebuilt_kernels_without_llvm(kernels, tmp_path):
    cache = tmp_path / "cache"
    first = _run(cache, str(kernels), log=True)
    assert not first["llvm"]  # nothing compiled
    assert first["groups"] == sorted(_GROUPS)
    assert "core loaded prebuilt (host)" in first["log"] and "radix_8_1 loaded prebuilt (host)" in first["log"]
    # a later process finds the copies in its disk cache, without the prebuilt directory
    second = _run(cache, "0", log=True)
    assert not second["llvm"] and "prebuilt" not in second["log"]
    assert "core loaded from the disk cache" in second["log"]


def test_kernels_of_other_sources_are_not_used(kernels, tmp_path):
    root = _copy(kernels, tmp_path)
    _edit_manifest(root, lambda m: m.update(sources="0" * 64))
    assert not up_to_date(_prebuilt.directory(str(root)), ["host"], ("f64",))
    out = _run(tmp_path / "cache", str(root), log=True)
    assert out["llvm"] and "built from other sources" in out["log"] and "loaded prebuilt" not in out["log"]


def test_a_damaged_library_is_built_instead(kernels, tmp_path):
    root = _copy(kernels, tmp_path)
    lib = root / "fft" / "host" / "f64" / "radix_8_1.so"
    data = bytearray(lib.read_bytes())
    data[len(data) // 2] ^= 0xFF
    lib.write_bytes(bytes(data))
    out = _run(tmp_path / "cache", str(root), log=True)
    assert "does not match its manifest" in out["log"]
    assert "core loaded prebuilt" in out["log"] and "radix_8_1 compiled" in out["log"]


def test_kernels_of_another_cpu_are_not_used(kernels, tmp_path):
    root = _copy(kernels, tmp_path)
    _edit_manifest(root, lambda m: m["targets"]["host"].update(requires={"cpu": "another CPU"}))
    out = _run(tmp_path / "cache", str(root), log=True)
    assert out["llvm"] and "none for this CPU" in out["log"]


def test_turned_off(kernels, tmp_path):
    out = _run(tmp_path / "cache", "0", log=True)
    assert out["llvm"] and "prebuilt" not in out["log"]


def test_a_directory_others_can_write_is_not_used(kernels, tmp_path):
    root = _copy(kernels, tmp_path)
    (root / "fft").chmod(0o777)
    out = _run(tmp_path / "cache", str(root), log=True)
    assert out["llvm"] and "others could write it" in out["log"] and "loaded prebuilt" not in out["log"]


def test_up_to_date_and_the_manifest(kernels):
    fft = kernels / "fft"
    assert up_to_date(str(fft), ["host"], ("f64",))
    assert not up_to_date(str(fft), ["host"], ("f32", "f64"))  # f32 was not built
    manifest = json.loads((fft / _prebuilt.MANIFEST).read_text())
    groups = manifest["targets"]["host"]["groups"]["f64"]
    assert sorted(groups) == sorted(_GROUPS)
    for name, digest in groups.items():
        path = fft / "host" / "f64" / f"{name}.so"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
        assert path.stat().st_mode & 0o777 == 0o644  # whatever the umask: see runtime.prebuilt.trusted


def test_x86_levels(monkeypatch):
    v2, v3, v4 = (set(_prebuilt.LEVEL_FLAGS[f"x86-64-v{i}"]) for i in (2, 3, 4))
    assert v2 < v3 < v4
    monkeypatch.setattr(_prebuilt, "_host_flags", lambda: v3 | {"sse2"})
    assert _prebuilt.host_level() == "x86-64-v3"
    assert _prebuilt._runs_here({"flags": sorted(v3)}) and not _prebuilt._runs_here({"flags": sorted(v4)})
    monkeypatch.setattr(_prebuilt, "_host_flags", lambda: None)  # not x86-64, or no /proc/cpuinfo
    assert _prebuilt.host_level() is None and not _prebuilt._runs_here({"flags": []})


@pytest.mark.skipif(_prebuilt.host_level() not in ("x86-64-v3", "x86-64-v4"), reason="needs an x86-64-v3 CPU")
def test_a_level_build_serves_this_cpu(tmp_path):
    """x86-64-v3 kernels (256-bit vectors, tuned for this CPU) run here; their lanes are the core's."""
    root = tmp_path / "prebuilt"
    build(_prebuilt.directory(str(root)), ["x86-64-v3"], precisions=("f64",), only=_GROUPS)
    manifest = json.loads((root / "fft" / _prebuilt.MANIFEST).read_text())
    assert manifest["targets"]["x86-64-v3"]["vlen"]["f64"] == 4
    out = _run(tmp_path / "cache", str(root), log=True)
    assert "core loaded prebuilt (x86-64-v3)" in out["log"]


def test_unknown_target_is_refused(tmp_path):
    with pytest.raises(ValueError, match="target must be 'host' or one of"):
        build(str(tmp_path / "k"), ["x86-64-v9"])
    assert not (tmp_path / "k").exists()


def test_tuning_attribute_is_on_every_definition():
    target = named_target("x86-64-v4").replace(tune_cpu="skylake-avx512")
    text = ('define void @"f"(i64 %".1") noinline\n{\nentry:\n  ret void\n}\n'
            'define i64 @"g"() {\nentry:\n  ret i64 0\n}\ndeclare void @"h"()\n')
    tuned = with_tuning(text, target)
    assert tuned.count('"tune-cpu"="skylake-avx512"') == 2
    parse(tuned)  # valid IR
    assert with_tuning(text, named_target("x86-64-v4")) == text

