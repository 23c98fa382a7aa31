"""A library built here loads on older glibc: its references are bound to the ABI's baseline
symbol versions (codegen/targets/glibc.py), leaving libmvec's 2.22 as the newest requirement
(vector functions that libmvec gained in 2.35, such as log1p or tanh, need that version)."""

import platform
from pathlib import Path

import numpy as np
import pytest

import aot
from codegen.targets.glibc import BASELINE, baseline_version, pin_symbol_versions
from runtime.elf import read_version_needs


def _version(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in tag.removeprefix("GLIBC_").split("."))


def threaded_transcendentals(x):
    return np.concatenate([np.exp(x) * np.log(x + 1.0) + np.power(x, 1.5) + np.sin(x), x[:5]])  # memcpy


def complex_magnitude(x):
    return np.abs(x[:1] + 1j * x[1:2]) + 1.0  # scalar hypot


@pytest.mark.skipif(platform.machine() not in BASELINE or platform.libc_ver()[0] != "glibc",
                    reason="glibc Linux only")
def test_library_needs_no_recent_glibc(tmp_path):
    x = np.random.default_rng(0).random(300_000)
    path = aot.aot_compile(threaded_transcendentals, (x,), path=tmp_path / "tr.so", options={"num_threads": 2})
    needs = read_version_needs(Path(path))
    glibc = [v for vs in needs.values() for v in vs if v.startswith("GLIBC_")]
    assert glibc and max(_version(v) for v in glibc) <= (2, 22), needs
    np.testing.assert_allclose(aot.aot_load(path)(x), threaded_transcendentals(x), rtol=1e-13)
    path = aot.aot_compile(complex_magnitude, (x[:8],), path=tmp_path / "hypot.so")
    libm = read_version_needs(Path(path)).get("libm.so.6", [])
    assert all(_version(v) <= (2, 22) for v in libm), libm


def test_pins_only_for_native_glibc_targets():
    native = f"{platform.machine()}-unknown-linux-gnu"
    assert baseline_version("riscv64-unknown-linux-gnu") is None
    assert baseline_version(f"{platform.machine()}-apple-darwin") is None
    if platform.machine() in BASELINE:
        text = pin_symbol_versions("; module", native)
        assert f'module asm ".symver pthread_create,pthread_create@{BASELINE[platform.machine()]}"' in text
    assert pin_symbol_versions("; module", "riscv64-unknown-linux-gnu") == "; module"
