"""Target kinds: what code generation must supply for a family of targets, and whether it does.

A `Target` names its kind (`Target.kind`). The kind says which Host implementation runs the entry
functions' host work (codegen/host.py HOSTS: buffers, threads, the status slot), which math
library scalar functions come from (llvm/mathfns.py) and which loop skeleton the kernels use. A
kind with `missing` set is one codegen cannot yet produce complete code for: resolve_target
(targets/foreign.py) rejects its triples with that text instead of emitting code that calls
functions nothing defines. Plain data: no llvmlite.
"""

from __future__ import annotations

from ir.records import record


@record(frozen=True)
class TargetKind:
    name: str
    math_library: str  # "libm": C names (sin, sinf); "libdevice": __nv_sin, __nv_sinf
    loop_skeleton: str  # "vector_rows": rows of SIMD vectors, one masked tail, [begin, end) per thread
    missing: str = ""  # what codegen lacks for this kind ("": complete)


TARGET_KINDS = {
    "cpu": TargetKind("cpu", "libm", "vector_rows"),
    # kernels compile to PTX (codegen/ptx.py: grid-stride entries over the CPU's range kernels,
    # libdevice linked in); what a library or a call needs beyond them is still missing
    "nvptx": TargetKind(
        "nvptx", "libdevice", "vector_rows",
        missing="a device Host that allocates device memory, launches the kernels through the CUDA "
        "driver and reads their status back (its kernels already compile to PTX: codegen.compile_ptx)",
    ),
}

# LLVM architectures of GPUs (no host side, no C library): not CPU targets
GPU_ARCHS = {"nvptx": "nvptx", "nvptx64": "nvptx", "amdgcn": "amdgpu", "r600": "amdgpu",
             "spirv": "spirv", "spirv32": "spirv", "spirv64": "spirv"}


def kind_of_arch(arch: str) -> str:
    """The target kind of an LLVM triple's architecture (GPU kinds not in TARGET_KINDS have no
    code generator at all)."""
    return GPU_ARCHS.get(arch, "cpu")
