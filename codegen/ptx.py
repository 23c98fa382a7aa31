"""PTX for NVIDIA GPUs from the same kernels as the CPU: `compile_ptx(ir_module, "cuda:sm_90")`.

The graph layer lowers an ir function exactly as for the CPU, with the NVIDIA target (scalar
code, libdevice math: `__nv_sin`, from the one rule table). Its kernels are the CPU's
`void k(ptr args, i64 begin, i64 end)`, which walk any sub-range of their flat index space. Each
kernel the entry launches gets a `ptx_kernel` entry, `void NAME(ptr addrspace(1) args, i64 total)`,
a grid-stride loop that runs the kernel on one index per iteration (consecutive threads take
consecutive indices: coalesced). The host side of the entry (buffers, launch order, status) is
discarded here; the kernels' argument blocks are laid out as the CPU host lays them out
(`Launch` slots of i64), in device memory.

Then libdevice is linked in, everything but the kernel entries is internalised and dead code is
removed (before O3: optimising all of libdevice costs ~800 ms), and LLVM's NVPTX back end writes
the PTX at the lowest ISA the architecture allows (targets/nvptx.py).

Not yet on the GPU: kernels that take scratch memory per chunk or build FFT plans, and reductions
split across threads (a full reduction runs on one thread; an axis reduction on one thread per
output).
"""
from __future__ import annotations

from llvmlite import ir as L

from ir.logger import INFO, get_logger
from ir.records import record

from .llvm.builder import Builder, module_text
from .llvm.context import declare
from .llvm.loops import i64
from .llvm.types import I32, I64, PTR, VOID
from .options import CodegenOptions
from .targets.base import Target

ptx_log = get_logger("aot.ptx")

GLOBAL_PTR = L.PointerType(addrspace=1)


@record(frozen=True)
class KernelEntry:
    """A `ptx_kernel` of the PTX: launch it with (args block in device memory, total) over
    `total` indices; `slots` i64 words of argument block."""

    name: str
    slots: int


@record(frozen=True)
class PtxProgram:
    text: str
    target: Target
    kernels: tuple[KernelEntry, ...]

    @property
    def isa(self) -> str:
        from .targets.nvptx import isa_of

        major, minor = isa_of(self.target)
        return f"{major}.{minor}"


def _sreg(module: L.Module, b: L.IRBuilder, name: str) -> L.Value:
    return b.zext(b.call(declare(module, f"llvm.nvvm.read.ptx.sreg.{name}", I32, []), []), I64)


def _grid_entry(module: L.Module, kern: L.Function, name: str) -> L.Function:
    """`ptx_kernel void name(ptr addrspace(1) args, i64 total)`: kern(args, i, i + 1) for
    i = thread index, + grid size, ... < total."""
    fn = L.Function(module, L.FunctionType(VOID, [GLOBAL_PTR, I64]), name=name)
    fn.calling_convention = "ptx_kernel"
    args, total = fn.args
    args.add_attribute("noalias")
    entry, loop, body, done = (fn.append_basic_block(n) for n in ("entry", "loop", "body", "done"))
    b = Builder(entry)
    block, threads = _sreg(module, b, "ctaid.x"), _sreg(module, b, "ntid.x")
    first = b.add(b.mul(block, threads), _sreg(module, b, "tid.x"))
    stride = b.mul(_sreg(module, b, "nctaid.x"), threads)
    generic = b.addrspacecast(args, PTR)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(first, entry)
    b.cbranch(b.icmp_signed("<", i, total), body, done)
    b.position_at_end(body)
    b.call(kern, [generic, i, b.add(i, i64(1))])
    nxt = b.add(i, stride)
    i.add_incoming(nxt, body)
    b.branch(loop)
    b.position_at_end(done)
    b.ret_void()
    return fn


def lower_kernels(module, target: Target, options: CodegenOptions | None = None) -> tuple[L.Module, list]:
    """The llvmlite module of `module`'s functions for `target`, with a grid entry per kernel
    launch; returns (module, [KernelEntry])."""
    from . import lower_module

    llmod = lower_module(module, target, options or CodegenOptions(num_threads=1))
    entries = []
    for k, (kern, slots) in enumerate(llmod.__dict__.get("aot_gpu_kernels", [])):
        name = f"aot_kernel{k}"
        _grid_entry(llmod, kern, name)
        entries.append(KernelEntry(name, slots))
    return llmod, entries


def compile_ptx(module, target: Target | str = "cuda", options: CodegenOptions | None = None) -> PtxProgram:
    """PTX text of every kernel of an ir Module's functions, for an NVIDIA target (a Target or
    its name, "cuda:sm_90")."""
    from .targets.foreign import _init_all
    from .targets.nvptx import cuda_target

    _init_all()
    if isinstance(target, str):
        target = cuda_target(target)
    llmod, entries = lower_kernels(module, target, options)
    text = finish_ptx(module_text(llmod), target, [e.name for e in entries])
    return PtxProgram(text, target, tuple(entries))


def finish_ptx(llvm_ir: str, target: Target, keep: list[str]) -> str:
    """LLVM IR text -> PTX: link libdevice when the code calls it, internalise all but `keep`,
    drop dead code, optimise, emit."""
    import llvmlite.binding as llvm

    from .targets import emit_assembly, optimize
    from .targets.base import run_module_passes, thread_target_machine
    from .targets.cuda_tools import libdevice_bitcode

    ctx = llvm.create_context()
    mod = llvm.parse_assembly(llvm_ir, context=ctx)
    mod.verify()
    if any(f.is_declaration and f.name.startswith("__nv_") for f in mod.functions):
        lib = llvm.parse_bitcode(libdevice_bitcode(), context=ctx)
        lib.triple, lib.data_layout = mod.triple, mod.data_layout
        mod.link_in(lib)
    keep = set(keep)
    for f in mod.functions:
        if not f.is_declaration and f.name not in keep:
            f.linkage = "internal"
    for g in mod.global_variables:
        if not g.is_declaration and g.linkage not in (llvm.Linkage.internal, llvm.Linkage.private):
            g.linkage = "internal"
    run_module_passes(mod, thread_target_machine(target), "add_global_dead_code_eliminate_pass")  # libdevice's rest
    text = emit_assembly(optimize(mod, target), target)
    if ptx_log.isEnabledFor(INFO):
        ptx_log.info("%s", text)
    return text

