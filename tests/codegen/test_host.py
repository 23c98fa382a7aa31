"""The target seam of codegen: the Host interface (host work of entry functions), the Target's math
library and loop skeleton, targets it cannot generate complete code for, and the data layout set
on modules when they are created."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import codegen
import ir
from codegen import host as host_mod
from codegen.fft import emit_module
from codegen.targets import host_target, named_target
from codegen.targets.base import create_target_machine, data_layout_of
from codegen.targets.foreign import UnsupportedTarget, resolve_target
from codegen.targets.kinds import TARGET_KINDS
from ir import dtypes as D
from ir import status
from ir.types import TensorType

from .helpers import add_elementwise, add_tensor_op, jit


def _sin_module(dt=D.float64, n=1024):
    m = ir.Module("t")
    add_elementwise(m, "f", "sin", [TensorType(dt, (n,))])
    return m


# --- targets codegen cannot generate complete code for ------------------------------------------------
@pytest.mark.parametrize("name", ["nvptx64-nvidia-cuda", "nvptx-nvidia-cuda"])
def test_nvptx_triple_rejected(name):
    with pytest.raises(UnsupportedTarget) as info:
        resolve_target(name)
    msg = str(info.value)
    assert name in msg and "driver" in msg and "Host" in msg and "cuda:sm_XX" in msg and "compile_ptx" in msg
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, ValueError)


def test_cuda_spelling_not_built_yet():
    with pytest.raises(NotImplementedError, match=r"'cuda:sm_80'.*libraries for the NVIDIA target.*not built yet"):
        resolve_target("cuda:sm_80")
    with pytest.raises(ValueError, match="sm_70.*older than sm_75"):
        resolve_target("cuda:sm_70")


@pytest.mark.parametrize("name", ["wasm32-unknown-unknown", "aarch64-unknown-none", "x86_64-pc-windows-msvc"])
def test_triples_without_a_hosted_os_rejected(name):
    with pytest.raises(UnsupportedTarget, match=rf"{name}.*aligned_alloc.*pthreads"):
        resolve_target(name)


def test_amdgpu_rejected():
    with pytest.raises(UnsupportedTarget, match="amdgcn-amd-amdhsa.*GPU"):
        resolve_target("amdgcn-amd-amdhsa")


@pytest.mark.parametrize("name", ["aarch64-unknown-linux-gnu", "x86_64-pc-linux-gnu",
                                  "riscv64-unknown-linux-gnu", "aarch64-unknown-linux-gnu:neoverse-v1"])
def test_cpu_triples_accepted(name):
    t = resolve_target(name)
    assert t.kind == "cpu" and t.math_library == "libm" and t.loop_skeleton == "vector_rows"
    assert codegen.compile_object(codegen.lower_module(_sin_module(), t), t)[:4] == b"\x7fELF"


def test_target_kinds():
    assert not TARGET_KINDS["cpu"].missing
    assert TARGET_KINDS["nvptx"].missing and TARGET_KINDS["nvptx"].math_library == "libdevice"
    t = host_target()
    assert (t.kind, t.math_library, t.loop_skeleton) == ("cpu", "libm", "vector_rows")


# --- the math library comes from the Target ------------------------------------------------------------
def test_math_library_names_scalar_functions():
    t = named_target("x86-64-v4").replace(vector_library=None, math_library="libdevice")
    text = str(codegen.lower_module(_sin_module(), t))
    assert '@"__nv_sin"(' in text and '@"sin"(' not in text
    text32 = str(codegen.lower_module(_sin_module(D.float32), t))
    assert '@"__nv_sinf"(' in text32


def test_unknown_math_library():
    t = host_target().replace(vector_library=None, math_library="nope")
    with pytest.raises(NotImplementedError, match="math library 'nope'"):
        codegen.lower_module(_sin_module(), t)


# --- the Host: chosen by the target's kind -----------------------------------------------------------------
def test_host_class_by_kind():
    assert host_mod.host_class(host_target()) is host_mod.CpuHost
    assert host_mod.host_class(host_target().replace(kind="nvptx")) is host_mod.KernelsHost
    with pytest.raises(NotImplementedError, match="target kind 'tpu'"):
        host_mod.host_class(host_target().replace(kind="tpu"))
    with pytest.raises(NotImplementedError, match="grid_stride"):
        host_mod.host_class(host_target().replace(loop_skeleton="grid_stride"))


class _CountingHost(host_mod.CpuHost):
    """The CPU host, counting what the graph layer asks of it."""

    calls: dict = {}

    def alloc(self, nbytes, overflow):
        _CountingHost.calls["alloc"] = _CountingHost.calls.get("alloc", 0) + 1
        return super().alloc(nbytes, overflow)

    def launch(self, kern, slots, total, align, work=None):
        _CountingHost.calls["launch"] = _CountingHost.calls.get("launch", 0) + 1
        return super().launch(kern, slots, total, align, work)

    def set_status(self, code):
        _CountingHost.calls.setdefault("status", set()).add(code)
        super().set_status(code)


def test_entry_host_work_goes_through_the_host(monkeypatch):
    """Every allocation, kernel launch and status of an entry function is the Host's: a target
    kind with its own Host gets all of them (here a CPU host that counts), and the code runs."""
    monkeypatch.setitem(host_mod.HOSTS, "counting", _CountingHost)
    _CountingHost.calls = {}
    target = host_target().replace(kind="counting")
    m = ir.Module("h")
    f, b = ir.new_func(m, "f", [TensorType(D.float64, (64, 32))])
    e = b.create("exp", [f.args[0]])
    s = b.create("sum", [e.results[0]], {"axes": (1,), "keepdims": False})
    b.ret(*s.results)
    fn = jit(m, target=target)["f"]
    x = np.random.default_rng(0).random((64, 32))
    np.testing.assert_allclose(fn(x), np.exp(x).sum(axis=1), rtol=1e-12)
    assert _CountingHost.calls["alloc"] >= 1 and _CountingHost.calls["launch"] >= 2
    assert status.OUT_OF_MEMORY in _CountingHost.calls["status"]


def test_status_codes_come_from_the_table():
    """codegen leaves entries with named codes of ir/status.py, never with literal numbers."""
    root = pathlib.Path(codegen.__file__).parent
    bad = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("fail_if", "fail_on_flag", "set_status")
                    and node.args and isinstance(node.args[-1], ast.Constant)):  # the code: last argument
                bad.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not bad, bad


# --- data layout and triple on creation ------------------------------------------------------------------
def test_modules_carry_the_data_layout_when_created():
    t = host_target()
    text = str(codegen.lower_module(_sin_module(), t))
    layout = str(create_target_machine(t).target_data)
    assert f'target triple = "{t.triple}"' in text
    assert f'target datalayout = "{layout}"' in text and data_layout_of(t) == layout
    fft = str(emit_module("f64", 4, t.triple, data_layout_of(t)))
    assert f'target datalayout = "{layout}"' in fft


def test_foreign_module_gets_its_own_data_layout():
    t = resolve_target("aarch64-unknown-linux-gnu")
    text = str(codegen.lower_module(_sin_module(), t))
    assert f'target datalayout = "{create_target_machine(t).target_data}"' in text
    assert 'target triple = "aarch64-unknown-linux-gnu"' in text


def test_take_index_error_still_raises():
    m = ir.Module("tk")
    add_tensor_op(m, "f", "take", [TensorType(D.float64, (5,)), TensorType(D.int64, (3,))], {"axis": 0})
    fn = jit(m)["f"]
    with pytest.raises(IndexError):
        fn(np.arange(5.0), np.array([0, 7, 1]))
