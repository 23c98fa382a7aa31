"""Target description and the LLVM back-end steps shared by all targets (optimise, emit).

A `Target` is plain data (frozen, hashable, part of cache keys); the llvmlite TargetMachine is
built from it on demand and cached. Stage outputs are str/bytes.

Thread safety: compiles may run on worker threads (aot/compiler/watchdog.py), one of them possibly
stuck. Each parsed module gets its own LLVMContext and each thread its own TargetMachine (LLVM's
threading contract), and the two long calls (the pass pipeline, code emission) run outside
llvmlite's process-wide lock, so one long compile does not stall every other llvmlite call.
"""

from __future__ import annotations

import ctypes
import functools
import threading

import llvmlite.binding as llvm
from llvmlite.binding import ffi

from ir.logger import INFO, get_logger
from ir.records import field, record

log = get_logger(__name__)
asm_log = get_logger("aot.asm")


@record(frozen=True)
class Target:
    """What code generation needs to know about the machine code will run on.

    vector_bits: SIMD register width used for explicit vector loops (128/256/512; 0: scalar only).
    vector_library: "libmvec" when glibc's vector math variants may be called, else None.
    kind: the target kind (targets/kinds.py TARGET_KINDS): which Host runs the entry functions'
        host work (codegen/host.py: allocation, threads, status), and the defaults below.
    math_library: where scalar math functions come from (llvm/mathfns.py): "libm" (sin, sinf),
        "libdevice" (__nv_sin) for the NVIDIA target.
    loop_skeleton: how kernels walk their flat range: "vector_rows" (rows of vectors with one
        masked tail, on a range [begin, end) a thread pool splits: CPU).
    data_layout: the LLVM data layout string, when known ("" : from the TargetMachine, see
        `data_layout_of`).
    code_model, relocation: LLVM's code model and relocation model: "small" and "pic" for shared
        libraries (32-bit PC-relative references: the system loader maps a library in one piece);
        "large" and "static" for object code the in-process JIT loads (64-bit absolute ones: see
        cpu.jit_target).
    """

    name: str
    triple: str
    cpu: str
    features: str
    vector_bits: int
    vector_library: str | None = None
    opt_level: int = 3
    data_layout: str = field(default="", compare=False)
    kind: str = "cpu"
    math_library: str = "libm"
    loop_skeleton: str = "vector_rows"
    code_model: str = "small"
    relocation: str = "pic"
    tune_cpu: str = ""  # LLVM's "tune-cpu" for every function (scheduling only, not the ISA): see with_tuning

    def vector_len(self, bits: int) -> int:
        """Lanes of a vector of `bits`-wide elements (1 when vectors are off)."""
        return max(1, self.vector_bits // bits) if self.vector_bits else 1

    def has_feature(self, feat: str) -> bool:
        return f"+{feat}" in self.features.split(",")

    @property
    def streaming_stores(self) -> bool:
        """Whether kernels may store with non-temporal hints (x86's MOVNT, ordered by an SFENCE
        before the kernel returns): CPU code for x86-64."""
        return self.kind == "cpu" and self.triple.startswith("x86_64") and self.vector_bits >= 128


_initialized = False
_init_lock = threading.Lock()
_local = threading.local()  # per-thread TargetMachines


def init_llvm() -> None:
    global _initialized
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()  # module-level asm (glibc.py's .symver pins)
            _initialized = True


@functools.lru_cache(maxsize=16)
def create_target_machine(target: Target) -> llvm.TargetMachine:
    """The process-wide TargetMachine of `target`: for its data layout and one-thread uses."""
    return _new_target_machine(target)


@functools.lru_cache(maxsize=16)
def data_layout_of(target: Target) -> str:
    """The target's LLVM data layout: set on every llvmlite module when it is created, so that the
    parser gives loads and stores without an explicit alignment the target's ABI alignment."""
    return target.data_layout or str(create_target_machine(target).target_data)


def _new_target_machine(target: Target) -> llvm.TargetMachine:
    init_llvm()
    t = llvm.Target.from_triple(target.triple)
    return t.create_target_machine(
        cpu=target.cpu,
        features=target.features,
        opt=target.opt_level,
        reloc=target.relocation,
        codemodel=target.code_model,
        jit=False,
    )


def thread_target_machine(target: Target) -> llvm.TargetMachine:
    """This thread's TargetMachine of `target` (a TargetMachine is not safe to share between
    threads that optimise or emit at the same time; making one costs ~0.5 ms)."""
    machines = getattr(_local, "machines", None)
    if machines is None:
        machines = _local.machines = {}
    tm = machines.get(target)
    if tm is None:
        tm = machines[target] = _new_target_machine(target)
    return tm


def with_tuning(llvm_ir: str, target: Target) -> str:
    """`llvm_ir` with `target.tune_cpu` as every defined function's "tune-cpu" attribute (as
    clang's -mtune: code for a whole x86-64 level, scheduled for the CPU it is built on)."""
    if not target.tune_cpu:
        return llvm_ir
    attr = f' "tune-cpu"="{target.tune_cpu}"'
    return "\n".join(_with_attribute(line, attr) for line in llvm_ir.split("\n"))


def _with_attribute(line: str, attr: str) -> str:
    if not line.startswith("define "):
        return line
    if line.endswith("{"):  # the body opens on the define's line
        return line[:-1].rstrip() + attr + " {"
    return line + attr


def parse(llvm_ir: str) -> llvm.ModuleRef:
    """Parse and verify, into a fresh LLVMContext (the global one is not thread-safe)."""
    init_llvm()
    mod = llvm.parse_assembly(llvm_ir, context=llvm.create_context())
    mod.verify()
    return mod


def pipeline_options(target: Target) -> llvm.PipelineTuningOptions:
    """The tuning of the O`opt_level` pipeline (see optimize)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=target.opt_level)
    pto.loop_vectorization = False
    pto.slp_vectorization = target.opt_level >= 2
    pto.loop_unrolling = target.opt_level >= 2
    return pto


# the pipeline of a lean module at O1 (is_lean): inline what must be, promote stack slots to
# registers, fold, simplify the control flow, drop dead code; code generation then runs LLVM's
# usual machine passes (strength reduction, scheduling, register allocation)
LEAN_PASSES = ("add_always_inliner_pass", "add_sroa_pass", "add_instruction_combine_pass",
               "add_simplify_cfg_pass", "add_aggressive_dce_pass")


def is_lean(llmod) -> bool:
    """Whether every function an llvmlite module defines was emitted lean (kernels.common.new_kernel):
    explicit vector loops with their own accumulators and unrolling, and host code. At O1 such a
    module takes LEAN_PASSES instead of LLVM's O1 pipeline: the same machine code speed on every
    case of tools/bench_opt_levels.py made only of them, 0.5-0.6x of O1's compile time (LLVM's loop
    passes cost ~2 ms per loop on a 2-core VM). Other kernels (gathers, histograms, selection,
    sorting, linear algebra: scalar loops that LLVM's loop and scalar passes speed up 1.1-1.3x) keep
    the full pipeline."""
    return not isinstance(llmod, str) and all(getattr(f, "aot_lean", False) for f in llmod.functions if f.blocks)


def optimize(mod: llvm.ModuleRef, target: Target, lean: bool = False) -> llvm.ModuleRef:
    """Run the new-pass-manager pipeline at the target's level, SLP vectoriser on, loop vectoriser
    off. Our code generator emits its loops as explicit `<N x T>` vector code already, so LLVM's
    loop vectoriser gains nothing on the benchmarks (their machine code is identical without it),
    and at O3 it can take unbounded time: after non-trivial unswitching and full unrolling of
    small constant-trip loops, a full reduction's outer loop (whose body does not depend on its
    index) holds a long chain of NaN-propagating min/max steps that each use the previous value
    three times, all loop-invariant, and VPlan's recursive `vputils::isSingleScalar` walks every
    path of that DAG: 3**28 paths for np.min of the (4, 7) array of issue 11 (days). Measured on
    random programs with tools/fuzz_compile_time.py and tests/aot/compile/test_compile_time.py.

    Identical functions are merged first (`merge_duplicates`). `lean` (is_lean) at O1: LEAN_PASSES."""
    tm = thread_target_machine(target)
    mod.triple = target.triple
    mod.data_layout = str(tm.target_data)
    merge_duplicates(mod, tm)
    if lean and target.opt_level == 1:
        run_module_passes(mod, tm, *LEAN_PASSES)
        return mod
    pb = llvm.create_pass_builder(tm, pipeline_options(target))
    mpm = pb.getModulePassManager()
    _unlocked(ffi.lib.LLVMPY_RunNewModulePassManager)(mpm, mod, pb)
    return mod


def merge_duplicates(mod: llvm.ModuleRef, tm: llvm.TargetMachine) -> None:
    """LLVM's MergeFunctions: a function identical to another becomes a call of it. A traced loop
    (a time-stepping solver updating arrays in place) launches the same kernel once per step, each
    a function of its own; merged before O3, the pipeline and code emission see one body: 20 steps
    of examples/inplace_updates.py's heat solver went from 10 s of LLVM to 1.9 s, 333 KB of object
    code to 121 KB."""
    run_module_passes(mod, tm, "add_merge_functions_pass")


def run_module_passes(mod: llvm.ModuleRef, tm: llvm.TargetMachine, *passes: str) -> None:
    """Run the named module passes (ModulePassManager.add_... methods) alone, in order, outside
    llvmlite's lock (the module is this thread's)."""
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=0))
    mpm = llvm.create_new_module_pass_manager()
    for name in passes:
        getattr(mpm, name)()
    _unlocked(ffi.lib.LLVMPY_RunNewModulePassManager)(mpm, mod, pb)


def emit_object(mod: llvm.ModuleRef, target: Target) -> bytes:
    return _emit(mod, target, use_object=True)


def emit_assembly(mod: llvm.ModuleRef, target: Target) -> str:
    text = _emit(mod, target, use_object=False).decode()
    if asm_log.isEnabledFor(INFO):
        asm_log.info("%s", text)
    return text


def _emit(mod: llvm.ModuleRef, target: Target, use_object: bool) -> bytes:
    """TargetMachine.emit_object/emit_assembly, with this thread's machine and without the lock."""
    tm = thread_target_machine(target)
    with ffi.OutputString() as err:
        buf = _unlocked(ffi.lib.LLVMPY_TargetMachineEmitToMemory)(tm, mod, int(use_object), err)
        if not buf:
            raise RuntimeError(str(err))
    try:
        return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buf), ffi.lib.LLVMPY_GetBufferSize(buf))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(buf)


def _unlocked(fn):
    """The raw ctypes function behind an llvmlite binding, which otherwise holds llvmlite's
    process-wide lock for the whole call. Only for calls on objects private to this thread (the
    module's own context, this thread's TargetMachine)."""
    return getattr(fn, "_cfn", fn)
