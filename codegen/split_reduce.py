"""Threaded reductions with few outputs (e.g. a full sum): split the outermost reduced axis.

When the outputs are few (fewer than T) but the work is large, each of T chunks (the host's
`reduce_chunks`: 64 on the CPU, whatever the thread count) of the outermost reduced axis is
reduced into its own row of a (T, kept...) partials buffer (by a wrapper that patches the argument
block per chunk and calls the ordinary reduce kernel; the chunks run on any threads, serially on
one), then the partials are reduced over their first axis in order (by the caller,
graph_ops.run_reduce, with SPLIT_KINDS[kind]). Whether a reduction splits and where its chunks
start depend on its shape only, so its result is the same, bit for bit, for any thread count,
and for a JIT entry and a library whatever their threads; float sums differ from the serial
order by reassociation only.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.reductions import REDUCTIONS
from ir.types import TensorType

from .graph_base import Desc, EntryCtx, reduction_summary
from .kernels.common import KERNEL_TYPE, arg_block_size, new_kernel, operand_info
from .kernels.reduce import ReduceSpec, emit_reduce
from .llvm.loops import alloca, for_range, i64
from .llvm.types import I64

# kind -> the kind that combines its partials: the records' `splittable` kinds combine with themselves
SPLIT_KINDS = {k: k for k, r in REDUCTIONS.items() if r.splittable}


class _Dynamic:
    """A dim the kernel must read at run time (each chunk has its own length)."""

    def __repr__(self) -> str:
        return "dynamic"


def chunks_allowed(ectx: EntryCtx) -> bool:
    # not in a row group: its kernels run on blocks of whole rows, every output in one piece
    return ectx.host.reduce_chunks() > 1 and not ectx.in_row_group


def chunk_length(b, n0, nt: int):
    """The length of each of the nt chunks of an axis of n0 (the last ones may be shorter or empty)."""
    return b.sdiv(b.add(n0, i64(nt - 1)), i64(nt))


def splittable(ectx: EntryCtx, kind: str, axes: tuple) -> bool:
    return kind in SPLIT_KINDS and bool(axes) and chunks_allowed(ectx)


def split_reduce(ectx: EntryCtx, spec: ReduceSpec, slots: list, kept_dims: list,
                 chunks: int | None = None) -> Desc:
    """Emit the chunked pass of reduction `spec` (whose ordinary argument block is `slots`: its
    output part is replaced) and return the (T, kept...) partials, for the caller to reduce over
    their first axis with SPLIT_KINDS[spec.kind]; T: `chunks`, else the host's reduce_chunks()."""
    b = ectx.builder
    shape, axes = spec.shape, spec.axes
    r, a0 = len(shape), axes[0]
    nt = chunks or ectx.host.reduce_chunks()
    kept = [k for k in range(r) if k not in axes]
    kshape = list(shape)
    kshape[a0] = _Dynamic()
    part = ectx.alloc(TensorType(spec.acc_dtype, (nt,) + tuple(shape[k] for k in kept)))
    part_strides = [i64(0) if k in axes else part.strides[1 + kept.index(k)] for k in range(r)]
    # the chunks' kernel writes the partials, not the reduction's output
    out_info = operand_info(spec.output.dtype, spec.output.bcast, part_strides)
    kspec = spec.replace(shape=tuple(kshape), output=out_info)
    name = ectx.kernel_name("redpart", reduction_summary(spec.kind, spec.block))
    kern = emit_reduce(ectx.module, ectx.target, name, kspec, ectx.helpers)
    n_in = len(spec.inputs)
    base = list(slots[:n_in]) + [part.data] + list(slots[n_in + 1 : n_in + 1 + r])
    base += list(slots[n_in + 1 + r : n_in + 1 + r + n_in * r])
    base += part_strides
    n0 = slots[n_in + 1 + a0]
    chunk = chunk_length(b, n0, nt)
    kept_total = ectx.numel(kept_dims)
    itemsizes = [ectx.itemsize(info.dtype) for info in spec.inputs]
    out_item = ectx.itemsize(spec.acc_dtype)
    extra = [n0, chunk, kept_total, i64(out_item)] + [i64(s) for s in itemsizes]
    wrapper = _wrapper(ectx, kern, n_in, r, a0)
    # `total` is the chunk count; the work that decides threading is every element reduced
    work = ectx.numel(list(slots[n_in + 1 : n_in + 1 + r]))
    ectx.call_kernel(wrapper, base + extra, i64(nt), 1, work=work)
    return part


def _wrapper(ectx: EntryCtx, kern: L.Function, n_in: int, r: int, a0: int) -> L.Function:
    """`void w(args, tb, te)`: for each chunk t, copy the block, point the inputs and the output at
    chunk t, set the a0 length, and run the reduce kernel over all kept outputs."""
    fn, b = new_kernel(ectx.module, ectx.kernel_name("split", ectx.description(kern)), lean=True)
    args, tb, te = fn.args
    n = arg_block_size(n_in + 1, r)
    local = alloca(b, I64, size=n)

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    n0, chunk, kept_total, out_item = (slot(n + k) for k in range(4))
    items = [slot(n + 4 + i) for i in range(n_in)]
    with for_range(b, tb, te, name="t", unroll=False) as t:
        for i in range(n):
            b.store(slot(i), b.gep(local, [i64(i)], source_etype=I64))
        lo = b.mul(t, chunk)
        length = b.sub(n0, lo)
        length = b.select(b.icmp_signed("<", chunk, length), chunk, length)
        length = b.select(b.icmp_signed("<", length, i64(0)), i64(0), length)
        for i in range(n_in):
            stride = slot(n_in + 1 + r + i * r + a0)
            off = b.mul(b.mul(lo, stride), items[i])
            b.store(b.add(slot(i), off), b.gep(local, [i64(i)], source_etype=I64))
        b.store(
            b.add(slot(n_in), b.mul(b.mul(t, kept_total), out_item)),
            b.gep(local, [i64(n_in)], source_etype=I64),
        )
        b.store(length, b.gep(local, [i64(n_in + 1 + a0)], source_etype=I64))
        b.call(kern, [local, i64(0), kept_total])
    b.ret_void()
    assert kern.function_type == KERNEL_TYPE
    return fn
