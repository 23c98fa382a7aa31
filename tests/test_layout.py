"""The four import packages resolve inside this repository, dependencies point one way, and no
package's modules import each other in a circle."""
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


# --- import cycles inside a package -----------------------------------------------------------------
def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_statements(tree: ast.Module):
    """(statement, in_function) for every import; those under `if TYPE_CHECKING:` are skipped."""
    out = []

    def visit(stmts, in_function: bool):
        for st in stmts:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                out.append((st, in_function))
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(st.body, True)
            elif isinstance(st, ast.If) and _is_type_checking(st.test):
                visit(st.orelse, in_function)
            else:
                for name in ("body", "orelse", "finalbody"):
                    visit(getattr(st, name, []) or [], in_function)
                for h in getattr(st, "handlers", []) or []:
                    visit(h.body, in_function)
                for case in getattr(st, "cases", []) or []:
                    visit(case.body, in_function)

    visit(tree.body, False)
    return out


def _targets(st, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ours that running import statement `st` in `module` imports: the named
    module (or, for `from M import x`, M.x when it is a module), and the packages above it that
    are not packages above `module` itself (those are initialised already)."""
    if isinstance(st, ast.Import):
        names = [a.name for a in st.names]
    else:
        if st.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(base[: len(base) - (st.level - 1)] + ([st.module] if st.module else []))
        else:
            base = st.module or ""
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in st.names]
    own = module if is_package else module.rpartition(".")[0]
    above = {".".join(own.split(".")[:k]) for k in range(1, own.count(".") + 2)}
    out = set()
    for name in names:
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            t = ".".join(parts[:k])
            if t in known and t != module and (t == name or t not in above):
                out.add(t)
    return out


def _import_graph(package: str):
    """module -> the package's modules it imports at module level; and module -> [(module, line)]
    of its function-local imports."""
    files = {_module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}
    known = set(files)
    top: dict[str, set[str]] = {}
    local: dict[str, list] = {}
    for mod, path in files.items():
        top[mod], local[mod] = set(), []
        for st, in_function in _import_statements(ast.parse(path.read_text(), filename=str(path))):
            targets = _targets(st, mod, path.name == "__init__.py", known)
            if in_function:
                local[mod] += [(t, st.lineno) for t in sorted(targets)]
            else:
                top[mod] |= targets
    return top, local


def _path(graph: dict, src: str, dst: str) -> list[str] | None:
    """A shortest chain of module-level imports from src to dst (None: dst is not reached)."""
    prev, todo = {src: None}, [src]
    while todo:
        nxt = []
        for m in todo:
            for t in sorted(graph.get(m, ())):
                if t == dst:
                    chain = [t, m]
                    while prev[m] is not None:
                        m = prev[m]
                        chain.append(m)
                    return chain[::-1]
                if t not in prev:
                    prev[t] = m
                    nxt.append(t)
        todo = nxt
    return None


# modules in import cycles when this check was added (aot.fx/aot.nn: the package __init__ re-exports
# names its submodules import back; ir.passes: the pass registry and the passes it imports). Owned
# elsewhere; the list only shrinks: a listed module that is no longer in a cycle fails the test too.
KNOWN_CYCLES: dict[str, set[str]] = {}  # none left; a new cycle fails, so does a stale entry


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package):
    """Module-level imports among one package's modules form no cycle (imports under `if
    TYPE_CHECKING:` do not count): a table module and the rule modules that fill it are split into
    a base the rules import and a driver that imports the rules."""
    top, _ = _import_graph(package)
    cyclic = {m for m in top if _path(top, m, m)}
    known = KNOWN_CYCLES.get(package, set())
    new = sorted(cyclic - known)
    assert not new, "import cycles:\n" + "\n".join(" -> ".join(_path(top, m, m)) for m in new)
    stale = sorted(known - cyclic)
    assert not stale, f"no longer in an import cycle (remove from KNOWN_CYCLES): {stale}"


@pytest.mark.parametrize("package", ["codegen", "runtime"])
def test_no_function_local_import_hides_a_cycle(package):
    """A function-local import of a module that imports the current one (directly or through
    others, at module level or in functions) is a cycle moved into a function: make the modules
    import one way instead. (Function-local imports for start-up latency, of modules that do not
    import back, are fine; say so in a comment.)"""
    top, local = _import_graph(package)
    every = {m: top[m] | {t for t, _ in local[m]} for m in top}
    bad = []
    for mod, imports in sorted(local.items()):
        for target, line in imports:
            chain = _path(every, target, mod)
            if chain:
                bad.append(f"{mod}:{line} imports {target} in a function; {' -> '.join(chain)}")
    assert not bad, "function-local imports that dodge a cycle:\n" + "\n".join(bad)
