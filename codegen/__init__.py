"""codegen: ir -> LLVM IR (llvmlite) -> object code or assembly.

`lower_module(module, target, options)` returns an llvmlite `ir.Module` with one graph entry
function per ir function (ABI in codegen/entry.py); `compile_llvm(llvm_ir, target)` optimises it
for the target and returns the optimised LLVM IR text (what runtime.jit consumes).
"""

from __future__ import annotations

import logging

from llvmlite import ir as L

from .entry import CodegenOptions, emit_entry
from .targets import Target, emit_assembly, emit_object, host_target, named_target, optimize
from .targets.base import parse

llvm_log = logging.getLogger("aot.llvm")

__all__ = [
    "CodegenOptions",
    "Target",
    "compile_object",
    "host_target",
    "lower_module",
    "named_target",
    "optimize_ir",
]


def lower_module(module, target: Target | None = None, options: CodegenOptions | None = None) -> L.Module:
    """Emit every function of an ir Module as a graph entry function."""
    target = target or host_target()
    options = options or CodegenOptions()
    llmod = L.Module(name=module.name)
    llmod.triple = target.triple
    for func in module.funcs.values():
        emit_entry(llmod, target, func, options)
    if llvm_log.isEnabledFor(logging.INFO):
        llvm_log.info("%s", llmod)
    return llmod


def optimize_ir(llmod: L.Module | str, target: Target | None = None) -> str:
    """Verify, then optimise at the target's level; returns the optimised LLVM IR text (and logs
    its assembly on "aot.asm" when that logger is enabled)."""
    target = target or host_target()
    ref = optimize(parse(str(llmod)), target)
    if logging.getLogger("aot.asm").isEnabledFor(logging.INFO):
        emit_assembly(ref, target)
    return str(ref)


def compile_object(llmod: L.Module | str, target: Target | None = None) -> bytes:
    target = target or host_target()
    return emit_object(optimize(parse(str(llmod)), target), target)


def compile_assembly(llmod: L.Module | str, target: Target | None = None) -> str:
    target = target or host_target()
    return emit_assembly(optimize(parse(str(llmod)), target), target)
