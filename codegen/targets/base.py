"""Target description and the LLVM back-end steps shared by all targets (optimise, emit).

A `Target` is plain data (frozen, hashable, part of cache keys); the llvmlite TargetMachine is
built from it on demand and cached. Stage outputs are str/bytes.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field

import llvmlite.binding as llvm

log = logging.getLogger(__name__)
asm_log = logging.getLogger("aot.asm")


@dataclass(frozen=True)
class Target:
    """What code generation needs to know about the machine code will run on.

    vector_bits: SIMD register width used for explicit vector loops (128/256/512; 0: scalar only).
    vector_library: "libmvec" when glibc's vector math variants may be called, else None.
    """

    name: str
    triple: str
    cpu: str
    features: str
    vector_bits: int
    vector_library: str | None = None
    opt_level: int = 3
    data_layout: str = field(default="", compare=False)

    def vector_len(self, bits: int) -> int:
        """Lanes of a vector of `bits`-wide elements (1 when vectors are off)."""
        return max(1, self.vector_bits // bits) if self.vector_bits else 1

    def has_feature(self, feat: str) -> bool:
        return f"+{feat}" in self.features.split(",")


_initialized = False


def init_llvm() -> None:
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()  # module-level asm (glibc.py's .symver pins)
        _initialized = True


@functools.lru_cache(maxsize=16)
def create_target_machine(target: Target) -> llvm.TargetMachine:
    init_llvm()
    t = llvm.Target.from_triple(target.triple)
    return t.create_target_machine(
        cpu=target.cpu,
        features=target.features,
        opt=target.opt_level,
        reloc="pic",
        codemodel="default",
        jit=False,
    )


def parse(llvm_ir: str) -> llvm.ModuleRef:
    init_llvm()
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    return mod


def optimize(mod: llvm.ModuleRef, target: Target) -> llvm.ModuleRef:
    """Run the new-pass-manager pipeline at the target's level (loop and SLP vectorisers on)."""
    tm = create_target_machine(target)
    mod.triple = target.triple
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=target.opt_level)
    pto.loop_vectorization = target.opt_level >= 2
    pto.slp_vectorization = target.opt_level >= 2
    pto.loop_unrolling = target.opt_level >= 2
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(mod, pb)
    return mod


def emit_object(mod: llvm.ModuleRef, target: Target) -> bytes:
    return create_target_machine(target).emit_object(mod)


def emit_assembly(mod: llvm.ModuleRef, target: Target) -> str:
    text = create_target_machine(target).emit_assembly(mod)
    if asm_log.isEnabledFor(logging.INFO):
        asm_log.info("%s", text)
    return text
