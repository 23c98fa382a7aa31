"""The four import packages resolve inside this repository, and dependencies point one way."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("aot", "ir", "codegen", "runtime")

# package -> packages of ours it must never import (DESIGN.md: aot -> ir, codegen, runtime; codegen -> ir)
FORBIDDEN = {
    "ir": {"aot", "codegen", "runtime", "llvmlite"},
    "codegen": {"aot", "runtime"},
    "runtime": {"aot", "codegen"},
}


@pytest.mark.parametrize("name", PACKAGES)
def test_package_resolves_inside_repo(name):
    mod = importlib.import_module(name)
    assert Path(mod.__file__).resolve().is_relative_to(ROOT / name), mod.__file__


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layer_direction(package):
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        hits = _imported_roots(path) & FORBIDDEN[package]
        if package == "runtime" and "llvmlite" in _imported_roots(path):
            text = path.read_text()
            if "llvmlite.ir" in text or "from llvmlite import ir" in text:
                hits.add("llvmlite.ir")
        if hits:
            bad.append(f"{path.relative_to(ROOT)} imports {sorted(hits)}")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_import_aot_is_light():
    """`import aot` must not pull in sympy (200+ ms) or llvmlite."""
    code = "import sys, aot, aot.ops; print(sorted(m for m in ('sympy', 'llvmlite') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
