"""The NVIDIA target without a GPU: its tables, PTX of every kernel family assembled by ptxas for
sm_80 and sm_90 (several dtypes, symbolic shapes), golden PTX of two small kernels, and the
driver loader's errors where there is no driver.

Set AOT_UPDATE_GOLDEN=1 to rewrite tests/golden/ptx/ after a deliberate change of the code
generator or of LLVM."""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

import aot
import ir
from codegen.ptx import compile_ptx
from codegen.targets import nvptx
from codegen.targets.cuda_tools import assemble, find_libdevice, find_ptxas
from ir import dtypes as D
from ir.types import TensorType

from .helpers import add_elementwise

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "ptx"
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas on PATH, under CUDA_HOME or in a wheel")
needs_libdevice = pytest.mark.skipif(find_libdevice() is None, reason="no libdevice.10.bc found")


# --- the tables -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, sm", [("cuda", "sm_80"), ("cuda:sm_90", "sm_90"), ("sm_86", "sm_86"),
                                      ("nvptx64-nvidia-cuda:sm_90a", "sm_90a"), (" cuda:sm_75 ", "sm_75")])
def test_names(name, sm):
    assert nvptx.parse_sm(name) == sm


@pytest.mark.parametrize("name, match", [("cuda:sm_70", "older than sm_75"), ("cuda:sm_99", "unknown architecture"),
                                         ("cuda:gfx90a", "expected 'cuda'"), ("cuda:sm_", "expected")])
def test_bad_names(name, match):
    with pytest.raises(ValueError, match=match):
        nvptx.parse_sm(name)


def test_tables():
    assert nvptx.MIN_ISA_OF_SM["sm_80"] == (7, 0) and nvptx.MIN_ISA_OF_SM["sm_90"] == (7, 8)
    assert nvptx.MIN_ISA_OF_SM["sm_90a"] == (8, 0) and nvptx.MAX_ISA_OF_CUDA[(13, 0)] == (9, 0)
    assert nvptx.cuda_release_for((7, 8)) == (11, 8) and nvptx.cuda_release_for((7, 0)) == (11, 0)
    assert nvptx.isa_feature((7, 8)) == "+ptx78"
    isas = [nvptx.MAX_ISA_OF_CUDA[k] for k in sorted(nvptx.MAX_ISA_OF_CUDA)]
    assert isas == sorted(isas)  # newer releases never accept less
    for sm, isa in nvptx.MIN_ISA_OF_SM.items():
        nvptx.check_pair(sm, isa)
    with pytest.raises(ValueError, match="cannot target sm_90a"):
        nvptx.check_pair("sm_90a", (7, 8))  # LLVM would abort the process on this pair


def test_target():
    t = nvptx.cuda_target("cuda:sm_90")
    assert (t.triple, t.cpu, t.features, t.kind, t.math_library, t.vector_bits) == (
        "nvptx64-nvidia-cuda", "sm_90", "+ptx78", "nvptx", "libdevice", 0)
    assert nvptx.isa_of(t) == (7, 8) and nvptx.cuda_target().cpu == "sm_80"


# --- PTX of every kernel family -------------------------------------------------------------------
F32 = np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8)
F64 = np.linspace(0, 1, 64).reshape(8, 8)
I32 = np.arange(64, dtype=np.int32).reshape(8, 8)
C64 = (F32 + 1j * F32).astype(np.complex64)
N, M = aot.Dim("N", min=2, max=1 << 20), aot.Dim("M", min=1, max=1 << 16)


def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


FAMILIES = {
    "elementwise_f32": (chain, (F32, F32), None),
    "elementwise_f64": (chain, (F64, F64), None),
    "integer_ops": (lambda a, b: np.where(a > b, (a & b) + (a >> 2), a * b), (I32, I32.T.copy()), None),
    "comparisons": (lambda x, y: (x > y) | np.isnan(x), (F64, F64), None),
    "complex64": (lambda x, y: x * y + np.conj(x) * np.exp(x), (C64, C64), None),
    "cast": (lambda a: a.astype(np.float32) * 0.5, (I32,), None),
    "broadcast": (lambda x, y: np.tanh(x[:, None] + y[None, :]), (F64[0], F64[1]), None),
    "transposed_input": (lambda x: x.T + 1.0, (F64,), None),
    "symbolic_elementwise": (lambda x: np.tanh(x) * 2 + 1, (F64.ravel(),), {"x": {0: N}}),
    "symbolic_reduction": (lambda x, y: (x * y[None, :]).sum(axis=1), (np.ones((8, 16)), np.ones(16)),
                           {"x": {0: M, 1: N}, "y": {0: N}}),
    "reduce_axis": (lambda x: x.sum(axis=1), (F64,), None),
    "reduce_axis0_max": (lambda x: x.max(axis=0), (F32,), None),
    "reduce_full": (lambda x: x.sum(), (F64,), None),
    "argmax": (lambda x: np.argmax(x, axis=1), (F64,), None),
    "softmax": (softmax, (F32,), None),
    "scan": (lambda x: np.cumsum(x, axis=1), (F64,), None),
    "sort": (lambda x: np.sort(x, axis=1), (F32,), None),
    "median": (lambda x: np.median(x, axis=0), (F64,), None),
    "matmul_f32": (lambda a, b: a @ b, (F32, F32), None),
    "matmul_f64": (lambda a, b: a @ b, (F64, F64), None),
}


@needs_ptxas
@needs_libdevice
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_assembles(family):
    fn, args, dyn = FAMILIES[family]
    module = aot.export(fn, args, dynamic_shapes=dyn).ir_module()
    for sm, version in (("sm_80", "7.0"), ("sm_90", "7.8")):
        program = compile_ptx(module, f"cuda:{sm}")
        assert program.kernels and program.isa == version
        text = program.text
        assert f".version {version}" in text and f".target {sm}" in text
        for k in program.kernels:
            assert re.search(rf"\.visible \.entry {k.name}\(", text), k.name  # a launchable entry
        assert "__nv_" not in text  # libdevice linked in, not left as calls
        assert assemble(text, sm)[:4] == b"\x7fELF"


@pytest.mark.slow  # ~35 s: 600 kernels through LLVM and ptxas (the families above run in the suite)
@needs_ptxas
@needs_libdevice
def test_every_elementwise_op_assembles():
    """One module with a kernel per elementwise op and dtype of the CPU's op tests."""
    from ir.opdef import MissingRule

    from .test_elementwise_ops import CASES, samples

    def complex_inverse(name, combo):  # the CPU calls C's cacos & co; libdevice has no complex math
        return name in COMPLEX_GAPS and combo[0].is_complex

    m = ir.Module("ops")
    cases = [c for c in CASES if not complex_inverse(c[0], c[1])]
    for i, (name, combo, attrs) in enumerate(cases):
        add_elementwise(m, f"case{i}", name, [TensorType(c, (samples.N,)) for c in combo], attrs)
    program = compile_ptx(m, "cuda:sm_80")
    assert len(program.kernels) == len(cases) and len(CASES) - len(cases) == 2 * len(COMPLEX_GAPS)
    assemble(program.text, "sm_80")
    for name in sorted(COMPLEX_GAPS):  # the documented gap: a MissingRule naming the op and the target
        gap = ir.Module("gap")
        add_elementwise(gap, "f", name, [TensorType(D.complex64, (4,))])
        with pytest.raises(MissingRule, match="nvptx64-nvidia-cuda"):
            compile_ptx(gap, "cuda:sm_80")


# complex functions without an NVIDIA rule yet (the CPU's come from the C library)
COMPLEX_GAPS = {"arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh"}


def test_unsupported_kernels_say_so():
    module = aot.export(lambda x: np.fft.fft(x), (np.linspace(1, 0, 64),)).ir_module()
    with pytest.raises(NotImplementedError, match="NVIDIA target.*not built for the GPU yet"):
        compile_ptx(module, "cuda:sm_80")


# --- golden PTX -------------------------------------------------------------------------------------
def _golden_modules() -> dict[str, ir.Module]:
    sin = ir.Module("sin")
    add_elementwise(sin, "f", "sin", [TensorType(D.float32, (1024,))])
    add = ir.Module("add")
    add_elementwise(add, "g", "add", [TensorType(D.float64, (4, 8)), TensorType(D.float64, (8,))])
    return {"sin_f32_sm80": sin, "broadcast_add_f64_sm80": add}


@needs_libdevice
@pytest.mark.parametrize("name", sorted(_golden_modules()))
def test_golden_ptx(name):
    import llvmlite

    text = compile_ptx(_golden_modules()[name], "cuda:sm_80").text
    path, made_with = GOLDEN / f"{name}.ptx", GOLDEN / "LLVMLITE_VERSION"
    if os.environ.get("AOT_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        made_with.write_text(llvmlite.__version__ + "\n")
    if made_with.read_text().strip() != llvmlite.__version__:  # another LLVM writes other (valid) PTX
        pytest.skip(f"the golden PTX was written by llvmlite {made_with.read_text().strip()}, "
                    f"this is {llvmlite.__version__} (AOT_UPDATE_GOLDEN=1 rewrites it)")
    assert text == path.read_text(), f"PTX of {name} changed (AOT_UPDATE_GOLDEN=1 rewrites {path})"


# --- the driver ---------------------------------------------------------------------------------------
def test_no_driver_is_a_clear_error(monkeypatch):
    from runtime import cuda_driver

    monkeypatch.setenv(cuda_driver.ENV_VAR, "/nonexistent/libcuda.so.1")
    with pytest.raises(cuda_driver.CudaUnavailable, match=r"no NVIDIA driver: /nonexistent/libcuda.so.1 .*"
                                                         r"needs the NVIDIA driver.*AOT_CUDA_DRIVER"):
        cuda_driver.driver()
    assert aot.cuda.is_available() is False and aot.cuda.device_count() == 0


def test_resolve_target_names_what_is_missing():
    from codegen.targets.foreign import UnsupportedTarget, resolve_target

    with pytest.raises(UnsupportedTarget, match="already compile to PTX"):
        resolve_target("cuda:sm_90")


@needs_ptxas
@needs_libdevice
def test_identical_kernels_keep_their_entries():
    """Kernels merged as duplicates (targets/base.py merge_duplicates) still have one launchable
    entry per launch: a kernel entry may not become a call of another."""
    from aot._pytree import tree_flatten
    from aot.compiler import llvm_backend
    from aot.compiler.capture import capture

    from .test_merge_functions import relax

    args = (np.linspace(0, 1, 64),)
    leaves, spec = tree_flatten(args)
    module = llvm_backend.build_ir(capture(relax, args, {}, leaves, spec, module=None, dynamic=False).gm)
    program = compile_ptx(module, "cuda:sm_80")
    assert len(program.kernels) >= 24
    assert program.text.count(".visible .entry") == len(program.kernels)
    assemble(program.text, "sm_80")
