"""Targets: host detection, named x86-64 levels, the vector library chosen from the Target (never
from the host), emitted assembly, logging, and the import layering of codegen/runtime."""

from __future__ import annotations

import ast
import logging
import pathlib
import subprocess
import sys

import pytest

import codegen
import ir
from codegen.targets import host_target, named_target
from ir import dtypes as D
from ir.types import TensorType

from .helpers import add_elementwise


def _sin_module(dt=D.float64):
    m = ir.Module("t")
    add_elementwise(m, "f", "sin", [TensorType(dt, (1024,))])
    return m


def test_host_target():
    t = host_target()
    assert t.triple.startswith(("x86_64", "aarch64"))
    assert t.vector_bits in (0, 128, 256, 512)
    if t.has_feature("avx512f"):
        assert t.vector_bits == 512 and t.vector_len(64) == 8 and t.vector_len(32) == 16


@pytest.mark.parametrize(
    "name, variant, reg",
    [
        ("x86-64", "_ZGVbN2v_sin", "xmm"),
        ("x86-64-v3", "_ZGVdN4v_sin", "ymm"),
        ("x86-64-v4", "_ZGVeN8v_sin", "zmm"),
    ],
)
def test_levels_pick_libmvec_variant(name, variant, reg):
    t = named_target(name)
    asm = codegen.compile_assembly(codegen.lower_module(_sin_module(), t), t)
    assert variant in asm
    assert reg in asm


def test_no_vector_library_calls_scalar_libm():
    t = named_target("x86-64-v4").replace(vector_library=None)
    text = str(codegen.lower_module(_sin_module(), t))
    assert "_ZGV" not in text and '@"sin"(' in text


def test_float32_variant_and_object_code():
    t = named_target("x86-64-v4")
    text = str(codegen.lower_module(_sin_module(D.float32), t))
    assert "_ZGVeN16v_sinf" in text
    assert codegen.compile_object(text, t)[:4] == b"\x7fELF"


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target"):
        named_target("pdp-11")


def test_llvm_and_asm_logging(caplog):
    with caplog.at_level(logging.INFO, logger="aot.llvm"), caplog.at_level(logging.INFO, logger="aot.asm"):
        codegen.optimize_ir(codegen.lower_module(_sin_module()))
    names = {r.name for r in caplog.records}
    assert {"aot.llvm", "aot.asm"} <= names


def _imports(package: str) -> set[str]:
    root = pathlib.Path(__import__(package).__file__).parent
    names = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
                names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_layering():
    """codegen imports ir and llvmlite, never aot/runtime; runtime never aot, codegen or llvmlite.ir."""
    cg = _imports("codegen")
    assert not {n for n in cg if n.split(".")[0] in ("aot", "runtime")}
    rt = _imports("runtime")
    assert not {n for n in rt if n.split(".")[0] in ("aot", "codegen")}
    assert not {n for n in rt if n.startswith("llvmlite.ir") or n == "llvmlite"}
    code = (
        "import sys, codegen, runtime, runtime.jit;"
        "print([m for m in sys.modules if m.split('.')[0] == 'aot'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
