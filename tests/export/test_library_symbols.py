"""A library built by aot_compile keeps its kernels' readable names in its symbol table (it is not
stripped): `nm`, perf and gdb name each kernel after what it computes (codegen/host.py
Host.symbol), and runtime/elf.py's reader (the perf map's) finds the same functions."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from runtime.elf import read_function_symbols

needs_nm = pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm (binutils)")


def _local_code(path: str) -> dict[str, int]:
    """nm's local text symbols of a library: name -> size."""
    nm = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True, check=True)
    syms = {}
    for row in nm.stdout.splitlines():
        f = row.split()
        if len(f) == 4 and f[2] == "t":
            syms[f[3]] = int(f[1], 16)
    return syms


@needs_nm
@pytest.mark.parametrize("lib, computes", [
    ("elementwise_dyn", [r"ew\d+\.sin_neg_exp_mul_add_div"]),  # np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
    ("reduction", [r"(red|split)\d+\.sum", r"(red|split)\d+\.max"]),  # x.sum(axis=1), x.max(axis=0), ...
])
def test_kernels_have_readable_names(libs, lib, computes):
    path = libs[lib]
    local = _local_code(path)
    kernels = [n for n in local if n.startswith(f"{lib}__aot_entry.")]
    for what in computes:
        assert any(re.fullmatch(rf"{lib}__aot_entry\.{what}", k) for k in kernels), (what, sorted(local))
    functions = {s.name: s.size for s in read_function_symbols(Path(path).read_bytes())}
    assert {k: functions.get(k) for k in kernels} == {k: local[k] for k in kernels}
