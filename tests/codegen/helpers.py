"""Shared helpers for codegen tests: build ir functions by hand, JIT them, compare with numpy."""

from __future__ import annotations

import numpy as np

import aot.ops  # noqa: F401  (registers the op rows)
import codegen
import ir
import runtime
from codegen.entry import CodegenOptions
from codegen.trampolines import HELPERS
from ir.core import Block, Region
from ir.size_render import python_source
from ir.symbols import is_static
from ir.types import ScalarType, TensorType
from runtime.buffers import ArgSpec, Signature


def signature_of(func) -> Signature:
    def spec(t):
        return ArgSpec(t.dtype.numpy, tuple(d if is_static(d) else python_source(d) for d in t.shape))

    ret = func.return_op
    return Signature(
        tuple(spec(a.type) for a in func.args), tuple(spec(v.type) for v in ret.operands), func.name
    )


def jit(
    module: ir.Module, *, num_threads: int = 1, parallel_threshold: int = 65536, target=None
) -> dict[str, runtime.JitFunction]:
    """Lower, verify and JIT every function of `module`; returns name -> callable."""
    opts = CodegenOptions(num_threads=num_threads, parallel_threshold=parallel_threshold)
    llmod = codegen.lower_module(module, target, opts)
    text = str(llmod)
    import llvmlite.binding as llvm

    llvm.parse_assembly(text).verify()
    from runtime.jit import blocks_module, default_engine, shared_pool

    shared_pool(HELPERS)  # the thread pool the kernels run on, as llvm_backend loads it
    blocks_module(HELPERS)  # the buffer allocator the entries call (a test file run alone loads it here)
    engine = default_engine()
    names = engine.add(text, entries=list(module.funcs))
    return {
        name: runtime.JitFunction(engine.address(names[name]), signature_of(f), helpers=HELPERS)
        for name, f in module.funcs.items()
    }


def add_elementwise(
    module: ir.Module, name: str, op: str, in_types: list[TensorType], attrs=None, shape=None
) -> ir.Func:
    """func @name(...) { %r = kernel.elementwise(...) { op(args) } ; return %r }"""
    f, b = ir.new_func(module, name, in_types)
    blk = Block([ScalarType(t.dtype) for t in in_types])
    inner = ir.Builder(blk).create(op, list(blk.args), dict(attrs or {}))
    ir.Builder(blk).yield_(*inner.results)
    if shape is None:
        from ir.opdef import broadcast_shapes

        shape = broadcast_shapes(*[t.shape for t in in_types])
    k = b.create("kernel.elementwise", list(f.args), {"shape": tuple(shape)}, regions=[Region([blk])])
    b.ret(*k.results)
    return f


def add_tensor_op(module: ir.Module, name: str, op: str, in_types: list[TensorType], attrs=None) -> ir.Func:
    """func @name(...) { %r = op(...) ; return %r } with a tensor-level op (not fused)."""
    f, b = ir.new_func(module, name, in_types)
    r = b.create(op, list(f.args), dict(attrs or {}))
    b.ret(*r.results)
    return f


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between float arrays (0 where both are nan or equal, inf for nan vs number)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.dtype.kind == "f"
    it = np.int64 if a.dtype == np.float64 else np.int32
    ia = a.view(it).astype(np.int64)
    ib = b.view(it).astype(np.int64)
    mag = np.int64((1 << (8 * a.dtype.itemsize - 1)) - 1)
    # map sign-magnitude bit patterns to a monotone integer line (-0 and +0 coincide)
    ia = np.where(ia < 0, -(ia & mag), ia)
    ib = np.where(ib < 0, -(ib & mag), ib)
    d = np.abs(ia - ib).astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    one_nan = np.isnan(a) ^ np.isnan(b)
    return np.where(both_nan, 0.0, np.where(one_nan, np.inf, d))
