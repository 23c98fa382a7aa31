"""Cross-target object emission and named x86-64 levels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aot
from runtime.elf import read_header

from . import funcs


def test_aarch64_object(tmp_path):
    N = aot.Dim("N", min=1)
    path = aot.aot_compile(
        funcs.elementwise,
        funcs.elementwise_inputs(4),
        dynamic_shapes={"x": {0: N}, "y": {0: N}},
        path=tmp_path / "ew.so",
        target="aarch64-unknown-linux-gnu",
    )
    obj = Path(path)
    assert obj.suffix == ".o" and not (tmp_path / "ew.so").exists()
    hdr = read_header(obj.read_bytes())
    assert (hdr.bits, hdr.little_endian, hdr.type, hdr.machine) == (64, True, "relocatable", "aarch64")
    assert (tmp_path / "ew.h").is_file() and (tmp_path / "ew_abi.c").is_file()
    assert "aarch64" in (tmp_path / "ew.h").read_text()


def test_unknown_target(tmp_path):
    with pytest.raises(ValueError, match="target"):
        aot.aot_compile(
            funcs.matmul, (np.ones((2, 2)), np.ones((2, 2))), path=tmp_path / "m.so", target="nonsense"
        )


@pytest.mark.parametrize("level", ["x86-64", "x86-64-v3"])
def test_x86_levels(level, tmp_path):
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("x86-64 host needed")
    if level == "x86-64-v3" and "avx2" not in Path("/proc/cpuinfo").read_text():
        pytest.skip("host lacks AVX2")
    path = aot.aot_compile(
        funcs.reduction, (np.ones((3, 4)),), path=tmp_path / f"r{level[-1]}.so", target=level
    )
    lib = aot.aot_load(path)
    x = np.random.default_rng(0).random((3, 4))
    for g, w in zip(lib(x), funcs.reduction(x), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert level in lib.target or "x86-64" in lib.target


def test_cli_inspects_foreign_object(tmp_path, capsys):
    from aot.cli import main

    path = aot.aot_compile(
        funcs.matmul,
        (np.ones((2, 3)), np.ones((3, 4))),
        path=tmp_path / "mm.so",
        target="aarch64-unknown-linux-gnu",
    )
    assert main(["inspect", path]) == 0
    out = capsys.readouterr().out
    assert "relocatable, aarch64" in out and "(f64[2,3], f64[3,4]) -> (f64[2,4])" in out
