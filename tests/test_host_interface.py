"""The graph layer's host work goes through codegen/host.py's `Host`: every buffer, table, scratch
allocation, run-time plan slot, planner call and thread-pool dispatch of an entry module is
emitted inside a Host method, so that a target kind with its own Host (a GPU: device memory,
kernel launches) gets all of them while the kernels' bodies stay as they are."""

from __future__ import annotations

import ast
import pathlib
import re

import numpy as np
import pytest
from llvmlite import ir as L

import codegen
import ir
from aot.fft._native import kernels
from codegen import host as host_mod
from codegen.options import CodegenOptions
from codegen.targets import host_target
from tests.codegen.helpers import jit

CODEGEN = pathlib.Path(codegen.__file__).parent
GRAPH_LAYER = sorted(CODEGEN.glob("graph_*.py")) + [CODEGEN / "split_reduce.py", CODEGEN / "entry.py"]
ALLOCATORS = {"aligned_alloc", "malloc", "calloc", "posix_memalign", "free"}
# the planner's host-side entries (its `exec` runs a transform: a kernel body calls it)
PLANNER = re.compile(r"aot_fft_plan_(get|release|roots|make)_f(32|64)\Z")
POOL = r"(aot\.parallel_for|aot_jit_parallel_for)"  # a library's own pool, the JIT process's shared one
HOST_CALLS = re.compile(rf"(aligned_alloc|malloc|calloc|posix_memalign|free|{POOL}|pthread_\w+)\Z")

STATIC = """module @s {
  func @blue(%arg0: c128[101]) -> (c128[101]) {
    %0 = fft %arg0 {axis = 0, n = none, norm = "backward", inverse = false} : c128[101]
    return %0 : c128[101]
  }
  func @real(%arg0: f64[4096,64]) -> (c128[4096,33]) {
    %0 = "rfft"(%arg0) {axis = 1, n = none, norm = "backward"} : (f64[4096,64]) -> c128[4096,33]
    return %0 : c128[4096,33]
  }
  func @blue_long(%arg0: c128[40009]) -> (c128[40009]) {
    %0 = fft %arg0 {axis = 0, n = none, norm = "backward", inverse = false} : c128[40009]
    return %0 : c128[40009]
  }
}
"""
DYNAMIC = """module @d {
  sym s0 : range [2, inf) hint 16
  sym s1 : range [2, inf) hint 16

  func @cdyn(%arg0: c128[s0]) -> (c128[s0]) {
    %0 = fft %arg0 {axis = 0, n = none, norm = "backward", inverse = false} : c128[s0]
    return %0 : c128[s0]
  }
  func @rdyn(%arg0: f64[3,s1]) -> (c128[3,floor(s1/2)+1]) {
    %0 = "rfft"(%arg0) {axis = 1, n = none, norm = "backward"} : (f64[3,s1]) -> c128[3,floor(s1/2)+1]
    return %0 : c128[3,floor(s1/2)+1]
  }
}
"""
SUM = """module @r {
  func @total(%arg0: f64[1048576]) -> (f64[]) {
    %0 = "kernel.reduce"(%arg0) {shape = [1048576], axes = [0], kind = "sum", keepdims = false, dtype = f64} \
: (f64[1048576]) -> f64[] {
    ^bb0(%1: f64):
      yield %1 : f64
    }
    return %0 : f64[]
  }
}
"""


# --- a host that remembers what its methods emitted -------------------------------------------------
def _emitted(module: L.Module) -> set[int]:
    """ids of the module's globals and instructions (alive while the module is)."""
    seen = {id(g) for g in module.global_values}
    for fn in module.functions:
        for blk in fn.blocks:
            seen |= {id(i) for i in blk.instructions}
    return seen


def _recording(name: str):
    def method(self, *args, **kw):
        module = args[0] if name == "__init__" else self.module
        before = _emitted(module)
        out = getattr(host_mod.CpuHost, name)(self, *args, **kw)
        module.__dict__.setdefault("host_made", set()).update(_emitted(module) - before)
        return out

    return method


HOST_METHODS = ["__init__"] + [n for n, v in vars(host_mod.Host).items()
                               if callable(v) and not n.startswith("_")]
RecordingHost = type("RecordingHost", (host_mod.CpuHost,), {n: _recording(n) for n in HOST_METHODS})


@pytest.fixture
def recording_target(monkeypatch):
    monkeypatch.setitem(host_mod.HOSTS, "recording", RecordingHost)
    return host_target().replace(kind="recording")


def _lower(text: str, target, **options) -> L.Module:
    return codegen.lower_module(ir.parse_module(text), target, CodegenOptions(**options))


def _call_sites(llmod: L.Module):
    """(function, call instruction, callee name) of every direct call in the module."""
    for fn in llmod.functions:
        for blk in fn.blocks:
            for ins in blk.instructions:
                if isinstance(ins, L.CallInstr):
                    yield fn.name, ins, getattr(ins.callee, "name", "")


def _calls(llmod: L.Module, pattern: re.Pattern) -> list[tuple[str, str]]:
    """(function, callee) of every call to a symbol matching `pattern`."""
    return [(fn, callee) for fn, _, callee in _call_sites(llmod) if pattern.match(callee)]


def _not_the_hosts(llmod: L.Module) -> list[str]:
    """The module's global variables and host calls (allocator, planner, thread pool) that no Host
    method emitted."""
    made = llmod.__dict__.get("host_made", set())
    bad = [f"global {g.name}" for g in llmod.global_values
           if isinstance(g, L.GlobalVariable) and id(g) not in made]
    bad += [f"{fn}: call {callee}" for fn, ins, callee in _call_sites(llmod)
            if (HOST_CALLS.match(callee) or PLANNER.match(callee)) and id(ins) not in made]
    return bad


@pytest.mark.parametrize("library", ["", "libt"])
def test_static_fft_host_work_is_the_hosts(recording_target, library):
    """Plans, twiddles, Bluestein blocks (a short length), chirps and kernels (a long one) and root
    tables, the chunks' scratch, the buffers and the thread pool of static-length transforms: all
    emitted by the Host."""
    llmod = _lower(STATIC, recording_target, num_threads=4, library=library)
    assert _not_the_hosts(llmod) == []
    tables = [g.name for g in llmod.global_values if isinstance(g, L.GlobalVariable) and g.global_constant]
    assert {re.sub(r"\d+$", "", t.split(".")[-1]) for t in tables} >= {"fft_plan", "fft_tw", "fft_blue",
                                                                         "fft_chirp", "fft_bkern", "fft_rw"}
    kernel_allocs = [f for f, _ in _calls(llmod, re.compile(r"aligned_alloc\Z"))
                     if f not in ("blue", "real", "blue_long")]
    assert kernel_allocs, "the chunk kernels' scratch"
    assert _calls(llmod, re.compile(rf"{POOL}\Z"))


@pytest.mark.parametrize("library", ["", "libt"])
def test_runtime_plans_are_the_hosts(recording_target, library):
    """Plan slots (and, in a library, their release at unload) and the planner's get / release /
    roots calls of run-time lengths: emitted by the Host."""
    llmod = _lower(DYNAMIC, recording_target, num_threads=4, library=library)
    assert _not_the_hosts(llmod) == []
    planner = {callee.rsplit("_", 2)[1] for _, callee in _calls(llmod, PLANNER)}
    assert planner == {"get", "release", "roots"}
    slots = [g for g in llmod.global_values if isinstance(g, L.GlobalVariable) and "fft_plan_slot" in g.name]
    assert len(slots) >= 2
    assert ("aot.unload" in {f.name for f in llmod.functions}) == bool(library)


def test_split_count_is_the_hosts(monkeypatch):
    """A split reduction cuts its axis into the Host's `reduce_chunks` chunks, not the thread count."""
    three = type("ThreeWays", (host_mod.CpuHost,), {"reduce_chunks": lambda self: 3})
    one = type("OneWay", (host_mod.CpuHost,), {"reduce_chunks": lambda self: 1})
    monkeypatch.setitem(host_mod.HOSTS, "three", three)
    monkeypatch.setitem(host_mod.HOSTS, "one", one)
    t3 = host_target().replace(kind="three")
    text = str(_lower(SUM, t3, num_threads=4))
    # the chunked pass: 3 chunks (its range) on the pool's 4 threads
    assert re.search(rf'@"?{POOL}"?\(.*@"total\.split\d+\.sum", ptr %"[.\w]+", i64 3, i64 4, i64 1\)', text)
    assert ".split" not in str(_lower(SUM, host_target().replace(kind="one"), num_threads=4))
    x = np.random.default_rng(0).random(1 << 20)
    total = jit(ir.parse_module(SUM), num_threads=4, target=t3)["total"]
    np.testing.assert_allclose(total(x), x.sum(), rtol=1e-12)


def test_fft_runs_through_a_hosts_subclass(recording_target):
    """The code a Host subclass emits runs: Bluestein and run-time plans through the recording host."""
    kernels("f64")  # registers the kernel module's entries (aot's JIT does this before loading a graph)
    rng = np.random.default_rng(1)
    fns = {**jit(ir.parse_module(STATIC), target=recording_target),
           **jit(ir.parse_module(DYNAMIC), target=recording_target)}
    x = rng.random(101) + 1j * rng.random(101)
    np.testing.assert_allclose(fns["blue"](x), np.fft.fft(x), atol=1e-10)
    for n in (30, 31, 64):
        y = rng.random(n) + 1j * rng.random(n)
        np.testing.assert_allclose(fns["cdyn"](y), np.fft.fft(y), atol=1e-10)
        z = rng.random((3, n))
        np.testing.assert_allclose(fns["rdyn"](z), np.fft.rfft(z), atol=1e-10)


# --- and no graph module does it by itself ------------------------------------------------------------
def _direct_host_work(path: pathlib.Path) -> list[str]:
    """Host actions written out in a graph-layer module instead of asked of the Host."""
    tree = ast.parse(path.read_text())
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def in_host_call(node) -> bool:  # an argument of `<...>.host.method(...)`
        while node in parent:
            node = parent[node]
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "host":
                return True
        return False

    bad = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call):
            fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if fname == "GlobalVariable":
                bad.append(f"{where} defines a module global")
            if fname in ("on_unload", "parallel_for"):
                bad.append(f"{where} calls {fname}")
            if fname == "declare" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                    and node.args[1].value in ALLOCATORS:
                bad.append(f"{where} declares {node.args[1].value}")
        if isinstance(node, ast.Attribute) and node.attr in ("num_threads", "library") \
                and isinstance(node.value, ast.Attribute) and node.value.attr == "options":
            bad.append(f"{where} reads options.{node.attr} (the host's choice)")
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and node.slice.value in ("get", "release", "roots", "make") and not in_host_call(node):
            bad.append(f"{where} uses the planner's {node.slice.value!r} outside a Host call")
    return bad


def test_graph_modules_leave_host_work_to_the_host():
    assert len(GRAPH_LAYER) >= 8
    bad = [b for path in GRAPH_LAYER for b in _direct_host_work(path)]
    assert bad == [], "\n".join(bad)
