"""tools/numpy_coverage.py reads its statuses from the front end's tables, and its data (the jax.numpy
names, the exclusions, the reasons) names things that exist."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aot.frontend import TRANSLATIONS
from aot.frontend.numpy_api import DECOMPOSITIONS, MODULES, ROW_FUNCTIONS
from aot.frontend.numpy_ufuncs import _DECOMPOSED, UFUNC_CORE

TRACE_TIME = {f for m in MODULES for f in getattr(m, "TRACE_TIME", ())}  # numpy computes them while tracing

TOOL = Path(__file__).resolve().parents[3] / "tools" / "numpy_coverage.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("numpy_coverage", TOOL)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def entries(tool):
    return tool.survey_namespaces(tool.FrontEnd()) + tool.survey_methods()


def _obj(name: str):
    obj = np
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_status_is_the_front_ends(entries):
    """compiled: one core op (ufunc table, row-keyed function); decomposed: a decomposition table;
    every translated public callable is listed as translated."""
    for e in entries:
        if e.kind == "method":
            continue
        func = _obj(e.name)
        one_op = func in UFUNC_CORE or func in ROW_FUNCTIONS
        decomposed = func in _DECOMPOSED or func in DECOMPOSITIONS or func in TRACE_TIME
        expected = "compiled" if one_op else "decomposed" if decomposed else "unsupported"
        assert e.status == expected, f"{e.name}: {e.status}, expected {expected}"
        assert (func in TRANSLATIONS or func in TRACE_TIME) == (e.status != "unsupported"), e.name
    listed = {_obj(e.name) for e in entries if e.kind != "method"}
    assert {f for f in TRANSLATIONS if f not in listed} == set(), "translated callables the survey misses"


def test_ufunc_methods_are_probed(entries, tool):
    """Every method numpy defines for a ufunc is listed once; the arrays' __array_ufunc__ decide."""
    methods = [e for e in entries if e.kind == "method"]
    ufuncs = {_obj(e.name) for e in entries if e.kind == "ufunc"}
    expected = {f"np.{u.__name__}.{m}" for u in ufuncs for m in tool.UFUNC_METHODS if tool._applies(u, m)}
    assert {e.name for e in methods} == expected and len(methods) == len(expected)
    assert "np.add.reduce" in expected and "np.sin.reduce" not in expected and "np.sin.at" in expected
    for e in methods:
        assert e.status in tool.STATUSES and e.detail, e


def test_data_names_exist(tool):
    """The exclusion and reason lists name numpy functions, once each; the jax lists are sorted names."""
    named = [n for names in (*tool.EXCLUDED.values(), *tool.REASONS.values()) for n in names]
    assert len(named) == len(set(named))
    assert [n for n in named if not callable(getattr(np, n, None))] == []
    for names in (tool.JAX_NUMPY, tool.JAX_NUMPY_LINALG, tool.JAX_NUMPY_FFT):
        assert names == sorted(set(names)) and all(n.isidentifier() for n in names)
    assert {"sum", "fft", "ifft"} <= set(tool.JAX_NUMPY) | set(tool.JAX_NUMPY_FFT)


def test_cli_prints_the_totals():
    out = subprocess.run([sys.executable, str(TOOL), "--unsupported", "--markdown"], capture_output=True,
                         text=True, check=True, timeout=120)
    assert out.stderr == ""
    assert out.stdout.startswith("| name | status |")
    assert "| compiled |" not in out.stdout and "| unsupported |" in out.stdout
    assert "ufuncs covered:" in out.stdout and "array functions covered" in out.stdout
