"""Threaded full argmax/argmin: the chunks' best indices, then the best of them by value.

split_reduce cuts the outermost axis into the host's chunks (64, whatever the thread count) and
each chunk's ordinary reduce kernel writes the flat index of its best element, counted within the
chunk, to its row of an int64 partials buffer. The combine (one call) turns each non-empty
chunk's index into the global flat index, evaluates the reduction's body there (the value that
chunk's kernel compared: each input loaded at that element) and keeps, in chunk order, only a
strictly `better` value (which also keeps the first nan): numpy's first occurrence, the result
one thread gives, for any thread count. Full reductions only (one output), bodies that report no
errors.
"""
from __future__ import annotations

from llvmlite import ir as L

from .graph_base import Desc, EntryCtx
from .kernels.common import emit_body, new_kernel, reports_errors
from .kernels.reduce import ReduceSpec, _Slot, better, identity
from .llvm import complexops as C
from .llvm.context import LowerCtx
from .llvm.loops import alloca, elem_ptr, for_range, i64, load_scalar, store_scalar
from .llvm.types import I64
from .split_reduce import chunk_length, chunks_allowed, split_reduce

ARG_KINDS = ("argmax", "argmin")


def arg_splittable(ectx: EntryCtx, kind: str, axes: tuple, rank: int, block) -> bool:
    return kind in ARG_KINDS and len(axes) == rank > 0 and not reports_errors(block) and chunks_allowed(ectx)


def split_arg(ectx: EntryCtx, spec: ReduceSpec, slots: list, out: Desc) -> None:
    """The chunked pass of full argmax/argmin `spec` (`slots`: its ordinary argument block), then
    the combine into `out`."""
    part = split_reduce(ectx, spec, slots, [])
    n_in, r = len(spec.inputs), len(spec.shape)
    kern = _combine_kernel(ectx, spec)
    args = list(slots[:n_in]) + [part.data, out.data] + list(slots[n_in + 1: n_in + 1 + r])
    args += list(slots[n_in + 1 + r: n_in + 1 + r + n_in * r])
    ectx.call_kernel(kern, args, i64(1), 1)


def _combine_kernel(ectx: EntryCtx, spec: ReduceSpec) -> L.Function:
    """kernel(args, 0, 1): args = input pointers, partials, output, dims, input strides."""
    n_in, r, nt = len(spec.inputs), len(spec.shape), ectx.host.reduce_chunks()
    fn, b = new_kernel(ectx.module, ectx.kernel_name("argcomb", spec.kind), lean=True)
    args = fn.args[0]
    ctx = LowerCtx(ectx.module, b, ectx.target, 1, ectx.helpers)

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    ptrs = [b.inttoptr(slot(i), L.PointerType()) for i in range(n_in)]
    part, outp = (b.inttoptr(slot(n_in + k), L.PointerType()) for k in range(2))
    dims = [slot(n_in + 2 + k) for k in range(r)]
    strides = [[slot(n_in + 2 + r + i * r + k) for k in range(r)] for i in range(n_in)]
    inner = i64(1)
    for d in dims[1:]:
        inner = b.mul(inner, d)
    chunk = chunk_length(b, dims[0], nt)
    yield_dt = spec.block.terminator.operands[0].type.dtype
    best_v = _Slot(b, b, identity(ctx, spec.kind, yield_dt))
    best_v.set(identity(ctx, spec.kind, yield_dt))
    best_i = alloca(b, I64, name="best_i")
    b.store(i64(-1), best_i)
    with for_range(b, 0, nt, name="t", unroll=False) as t:
        lo = b.mul(t, chunk)
        with b.if_then(b.icmp_signed("<", lo, dims[0])):  # trailing chunks may be empty
            g = b.add(b.mul(lo, inner), b.load(b.gep(part, [t], source_etype=I64), typ=I64))
            offs, rest = [i64(0)] * n_in, g
            for k in range(r - 1, -1, -1):
                idx = b.srem(rest, dims[k]) if k else rest
                rest = b.sdiv(rest, dims[k]) if k else None
                offs = [b.add(o, b.mul(idx, strides[i][k])) for i, o in enumerate(offs)]
            vals = [load_scalar(ctx, info.dtype, elem_ptr(b, info.dtype, ptrs[i], offs[i]))
                    for i, info in enumerate(spec.inputs)]
            (v,) = emit_body(ctx, spec.block, vals)
            first = b.icmp_signed("<", b.load(best_i, typ=I64), i64(0))
            take = b.or_(first, better(ctx, spec.kind, yield_dt, v, best_v.get()))
            best_v.set(C.select(ctx, take, v, best_v.get()) if yield_dt.is_complex
                       else b.select(take, v, best_v.get()))
            b.store(b.select(take, g, b.load(best_i, typ=I64)), best_i)
    store_scalar(ctx, spec.output.dtype, outp, b.load(best_i, typ=I64))
    b.ret_void()
    return fn

