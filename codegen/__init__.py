"""codegen: ir -> LLVM IR (llvmlite) -> object code or assembly.

`lower_module(module, target, options)` returns an llvmlite `ir.Module` with one graph entry
function per ir function (ABI in codegen/entry.py); `compile_object(llmod, target)` optimises it
for the target and returns object code (what runtime.jit loads). Submodules load on first use, so
importing one kernel family (e.g. codegen.fft) does not pull in the graph code generator.

Layers (modules import downward only; tests/test_layout.py checks there is no import cycle):
targets/ (Target, TARGET_KINDS) and options.py; llvm/ (types, loops, the scalar/vector op rules:
rule_table.py <- rules_* <- lowering.py); kernels/ (one LLVM function per kernel over a flat range);
host.py (the host work of entry functions, chosen by the target's kind); the graph layer:
graph_base.py (Desc, EntryCtx, ENTRY_LOWERINGS) <- graph_ops.py, split_reduce.py, graph_fft_common.py,
graph_fft_dynamic.py, graph_fft.py, graph_fft_fused.py (the rules) <- entry.py (the driver).
"""

from __future__ import annotations

import importlib

from ir.logger import INFO, PROGRESS, get_logger

llvm_log = get_logger("aot.llvm")

__all__ = [
    "CodegenOptions",
    "Target",
    "compile_assembly",
    "compile_object",
    "host_target",
    "jit_target",
    "lower_module",
    "named_target",
    "optimize_ir",
]

_LAZY = {
    "CodegenOptions": "codegen.options",
    "Target": "codegen.targets",
    "host_target": "codegen.targets",
    "jit_target": "codegen.targets",
    "named_target": "codegen.targets",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'codegen' has no attribute {name!r}")


def lower_module(module, target=None, options=None):
    """Emit every function of an ir Module as a graph entry function (an llvmlite ir.Module)."""
    from llvmlite import ir as L

    from .entry import CodegenOptions, emit_entry
    from .llvm.builder import prune_module
    from .targets import host_target
    from .targets.base import data_layout_of

    target = target or host_target()
    options = options or CodegenOptions()
    llmod = L.Module(name=module.name)
    llmod.triple = target.triple
    llmod.data_layout = data_layout_of(target)  # before parsing: alignments of plain loads/stores
    for func in module.funcs.values():
        emit_entry(llmod, target, func, options)
    prune_module(llmod)  # the code generator's folded branches leave blocks no edge reaches
    if llvm_log.isEnabledFor(INFO):
        llvm_log.info("%s", llmod)
    return llmod


def optimize_ir(llmod, target=None) -> str:
    """Verify, then optimise at the target's level; returns the optimised LLVM IR text (and logs
    its assembly on "aot.asm" when that logger is enabled)."""
    from .llvm.builder import module_text
    from .targets import emit_assembly, host_target, optimize
    from .targets.base import is_lean, parse

    target = target or host_target()
    ref = optimize(parse(module_text(llmod)), target, lean=is_lean(llmod))
    if get_logger("aot.asm").isEnabledFor(INFO):
        emit_assembly(ref, target)
    return str(ref)


def compile_object(llmod, target=None, *, portable: bool = False) -> bytes:
    """Object code of an llvmlite module. `portable`: for shared libraries, bind glibc references
    to the target ABI's oldest symbol versions (targets/glibc.py)."""
    from .llvm.builder import module_text
    from .targets import emit_object, host_target, optimize
    from .targets.base import is_lean, parse
    from .targets.glibc import pin_symbol_versions

    target = target or host_target()
    _announce_large(llmod)
    text = module_text(llmod)
    if portable:
        text = pin_symbol_versions(text, target.triple)
    return emit_object(optimize(parse(text), target, lean=is_lean(llmod)), target)


# LLVM's O3 and code generation take ~70-80 us per instruction of the unoptimised module (measured
# on the examples: 7.4k -> 0.5 s, 12k -> 1.0 s, 21k -> 1.0 s on a 2-core EPYC): from here on the
# first compile is a noticeable wait, which is announced (ir.logger.PROGRESS) before it starts
LARGE_MODULE_INSTRUCTIONS = 10_000


def _announce_large(llmod) -> None:
    progress = get_logger(PROGRESS)
    if not progress.isEnabledFor(INFO):
        return
    if isinstance(llmod, str):  # LLVM IR text: its instructions are its indented lines
        lines = llmod.splitlines()
        n, nf = sum(ln.startswith("  ") for ln in lines), sum(ln.startswith("define ") for ln in lines)
        entries = "(text)"
    else:
        fns = [f for f in llmod.functions if f.blocks]
        n, nf = sum(len(b.instructions) for f in fns for b in f.blocks), len(fns)
        entries = ", ".join(f.name for f in fns if f.linkage in ("", "external")) or llmod.name
    if n >= LARGE_MODULE_INSTRUCTIONS:
        progress.info("compiling a large module (%d LLVM instructions in %d functions, entry %s): about a "
                      "second or more of LLVM; its object code is cached on disk", n, nf, entries)


def compile_assembly(llmod, target=None) -> str:
    from .llvm.builder import module_text
    from .targets import emit_assembly, host_target, optimize
    from .targets.base import is_lean, parse

    target = target or host_target()
    _announce_large(llmod)
    return emit_assembly(optimize(parse(module_text(llmod)), target, lean=is_lean(llmod)), target)
