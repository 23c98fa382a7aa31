"""ENTRY_LOWERINGS rows of the sorting family: sort, argsort, searchsorted, take_along_axis.

sort/argsort: the rows along the axis (every combination of the other dims) are sorted
independently by the kernel of kernels/sorting.py, run over scratch slots (one slot sorts a
contiguous run of rows in its own part of a scratch buffer the host allocates), so the host
threads over rows when there are several. A few long real rows (at most half as many as the
build-time threads, each of PARALLEL_MIN elements or more) are each sorted on all threads by the
parallel radix sort of kernels/sort_parallel.py, whose passes this rule drives. searchsorted runs
a binary search per value over the values' flat range; take_along_axis is the gather kernel of
`take` with the indices' strides on every dim.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir import status
from ir.dtypes import promote
from ir.types import TensorType

from .graph_base import Desc, EntryCtx, entry_rule
from .graph_ops import copy
from .kernels import sort_parallel as par
from .kernels.common import broadcast_flags
from .kernels.gather import emit_gather
from .kernels.search import emit_searchsorted
from .kernels.sort_keys import key_bits
from .kernels.sorting import BUCKETS, DIGIT, emit_sort_rows, n_bytes, slot_layout
from .llvm.builder import emit_if
from .llvm.loops import alloca, for_range, i64
from .llvm.types import I8, I64, PTR

SLOTS_PER_THREAD = 2  # scratch slots per build-time thread (rows are split evenly over the slots)
BLOCK_SHIFT = 16  # the parallel sort's blocks hold at least 2**16 elements
PARALLEL_MIN = 1 << 18  # rows this long sort on several threads when there are few of them
SEARCH_WORK = 16  # elements of work a binary search counts as (for the threading decision)


def _output(ectx: EntryCtx, op, out: list) -> Desc:
    return out[0] if out[0] is not None else ectx.alloc(op.results[0].type)


def _in_dtype(ectx: EntryCtx, d: Desc, dtype) -> Desc:
    """d itself, or a copy cast to `dtype`."""
    if d.dtype == dtype:
        return d
    tmp = ectx.alloc(TensorType(dtype, d.static_shape))
    copy(ectx, d, tmp)
    return tmp


@entry_rule("sort", "argsort")
def _sort(ectx: EntryCtx, op, x, out):
    o = _output(ectx, op, out)
    axis, argsort = op.attrs["axis"], op.name == "argsort"
    b = ectx.builder
    others = [k for k in range(x.rank) if k != axis]
    rows = ectx.numel([x.shape[k] for k in others])
    nt = max(1, ectx.host.split_ways())
    if nt == 1 or x.dtype.is_complex:
        _sort_rows(ectx, x, o, axis, argsort, rows)
        return [o]
    few = b.icmp_signed("<=", b.mul(rows, i64(2)), i64(nt))
    long = b.icmp_signed(">=", x.shape[axis], i64(PARALLEL_MIN))
    emit_if(b, b.and_(few, long), lambda: _sort_long_rows(ectx, x, o, axis, argsort, rows, nt),
            lambda: _sort_rows(ectx, x, o, axis, argsort, rows))
    return [o]


def _sort_rows(ectx: EntryCtx, x: Desc, o: Desc, axis: int, argsort: bool, rows) -> None:
    """Every row on one thread, rows in parallel (kernels/sorting.py)."""
    b, host = ectx.builder, ectx.host
    others = [k for k in range(x.rank) if k != axis]
    n = x.shape[axis]
    most = i64(max(1, host.split_ways()) * SLOTS_PER_THREAD)
    nslots = b.select(b.icmp_signed("<", rows, most), rows, most)
    _, slot_bytes = slot_layout(b, n, x.dtype, argsort)
    nbytes, overflow = ectx._checked_product([nslots, slot_bytes])
    mark = host.n_buffers()
    scratch, failed = host.alloc(nbytes, overflow)
    ectx.fail_if(failed, status.OUT_OF_MEMORY)
    name = ectx.kernel_name("sort_rows", "argsort" if argsort else "sort", x.dtype)
    kern = emit_sort_rows(ectx.module, name, x.dtype, x.rank, argsort)
    slots = [x.data, o.data, scratch, rows, nslots, n, slot_bytes, x.strides[axis], o.strides[axis]]
    slots += [x.shape[k] for k in others] + [x.strides[k] for k in others] + [o.strides[k] for k in others]
    ectx.call_kernel(kern, slots, nslots, 1, work=ectx.numel(x.shape))
    host.free(host.buffers_since(mark))


def _row_data(ectx: EntryCtx, d: Desc, axis: int, r, itemsize: int):
    """The address of row r (C order over the dims other than `axis`)."""
    b = ectx.builder
    off, rest = i64(0), r
    for k in range(d.rank - 1, -1, -1):
        if k == axis:
            continue
        off = b.add(off, b.mul(b.srem(rest, d.shape[k]), d.strides[k]))
        rest = b.sdiv(rest, d.shape[k])
    return b.gep(d.data, [b.mul(off, i64(itemsize))], source_etype=I8)


def _sort_long_rows(ectx: EntryCtx, x: Desc, o: Desc, axis: int, argsort: bool, rows, nt: int) -> None:
    """Few long rows: each sorted by the parallel radix sort of kernels/sort_parallel.py, its
    passes over T blocks driven from here (see that module)."""
    b, host, dt = ectx.builder, ectx.host, x.dtype
    n = x.shape[axis]
    bits = key_bits(dt)
    nblocks = b.lshr(n, i64(BLOCK_SHIFT))
    nblocks = b.select(b.icmp_signed("<", nblocks, i64(2 * nt)), nblocks, i64(2 * nt))
    sizes = [n_bytes(b, n, bits // 8)] * 2 + ([n_bytes(b, n, 8)] * 2 if argsort else [])
    sizes += [n_bytes(b, nblocks, 8 * BUCKETS), n_bytes(b, nblocks, 8 * len(par.STATS))]
    offs, total = [], i64(0)
    for size in sizes:
        offs.append(total)
        total = b.add(total, size)
    mark = host.n_buffers()
    buf, failed = host.alloc(total, b.icmp_signed("<", total, i64(0)))
    ectx.fail_if(failed, status.OUT_OF_MEMORY)
    part = [b.gep(buf, [off], source_etype=I8) for off in offs]
    k0, k1 = part[0], part[1]
    i0, i1 = (part[2], part[3]) if argsort else (L.Constant(PTR, None),) * 2
    hist, stats = part[-2], part[-1]
    mod, name = ectx.module, ectx.kernel_name
    kernels = {"keys": par.emit_keys(mod, name("sort_keys", dt), dt, argsort),
               "hist": par.emit_hist(mod, name("sort_hist", bits, "bits"), bits),
               "scatter": par.emit_scatter(mod, name("sort_scatter", bits, "bits"), bits, argsort),
               "out": par.emit_out(mod, name("sort_out", dt), dt, argsort)}
    fix = par.emit_fix(mod, name("sort_fix", dt), dt) if dt.is_float and not argsort else None
    src = [_var(ectx, PTR) for _ in range(4)]  # src keys, dst keys, src idx, dst idx
    osize = 8 if argsort else dt.itemsize
    with for_range(b, i64(0), rows, name="row") as r:
        xr, orow = _row_data(ectx, x, axis, r, dt.itemsize), _row_data(ectx, o, axis, r, osize)
        xs = x.strides[axis]
        ectx.call_kernel(kernels["keys"], [xr, xs, k0, i0, n, nblocks, stats], nblocks, 1, work=n)
        for v, p in zip(src, (k0, k1, i0, i1)):
            b.store(p, v)
        with for_range(b, i64(0), i64(bits // DIGIT), name="digit") as d:
            _radix_pass(ectx, kernels, src, n, nblocks, hist, b.mul(d, i64(DIGIT)))
        sk, si = b.load(src[0], typ=PTR), b.load(src[2], typ=PTR)
        ectx.call_kernel(kernels["out"], [sk, si, orow, o.strides[axis], n, nblocks], nblocks, 1, work=n)
        if fix is not None:
            ectx.call_kernel(fix, [xr, xs, orow, o.strides[axis], n, nblocks, stats], i64(1), 1)
    host.free(host.buffers_since(mark))


def _radix_pass(ectx: EntryCtx, kernels: dict, src: list, n, nblocks, hist, shift) -> None:
    """One digit: block histograms, the blocks' offsets (host), the stable scatter; skipped when
    every key has the same digit."""
    b = ectx.builder
    sk, dk, si, di = (b.load(v, typ=PTR) for v in src)
    ectx.call_kernel(kernels["hist"], [sk, n, nblocks, hist, shift], nblocks, 1, work=n)
    running, trivial = _var(ectx, I64), _var(ectx, L.IntType(1))
    b.store(i64(0), running)
    b.store(L.Constant(L.IntType(1), 0), trivial)
    with for_range(b, i64(0), i64(BUCKETS), name="bucket") as bk:
        before = b.load(running, typ=I64)
        with for_range(b, i64(0), nblocks, name="blk") as t:
            slot = b.gep(hist, [b.add(b.mul(t, i64(BUCKETS)), bk)], source_etype=I64)
            c = b.load(slot, typ=I64)
            at = b.load(running, typ=I64)
            b.store(at, slot)
            b.store(b.add(at, c), running)
        whole = b.icmp_signed("==", b.sub(b.load(running, typ=I64), before), n)
        b.store(b.or_(b.load(trivial, typ=L.IntType(1)), whole), trivial)
    with b.if_then(b.not_(b.load(trivial, typ=L.IntType(1)))):
        ectx.call_kernel(kernels["scatter"], [sk, dk, si, di, n, nblocks, hist, shift], nblocks, 1, work=n)
        for v, p in zip(src, (dk, sk, di, si)):
            b.store(p, v)


def _var(ectx: EntryCtx, typ):
    return alloca(ectx.alloca_builder, typ)


@entry_rule("searchsorted")
def _searchsorted(ectx: EntryCtx, op, a, v, out):
    o = _output(ectx, op, out)
    dt = promote(a.dtype, v.dtype)
    a, v = _in_dtype(ectx, a, dt), _in_dtype(ectx, v, dt)
    dims, v_str, o_str = (list(v.shape), list(v.strides), list(o.strides)) if v.rank else ([i64(1)], [i64(0)],
                                                                                         [i64(0)])
    name = ectx.kernel_name("searchsorted", op.attrs["side"], dt)
    kern = emit_searchsorted(ectx.module, name, dt, len(dims), op.attrs["side"])
    total = ectx.numel(dims)
    slots = [a.data, v.data, o.data, a.shape[0], a.strides[0], *dims, *v_str, *o_str]
    ectx.call_kernel(kern, slots, total, 1, work=ectx.builder.mul(total, i64(SEARCH_WORK)))
    return [o]


@entry_rule("take_along_axis")
def _take_along_axis(ectx: EntryCtx, op, x, idx, out):
    """out[..., j, ...] = x[..., idx[..., j, ...], ...]: the gather kernel with x's stride 0 along
    the axis (the index supplies it) and 0 on the dims an operand broadcasts along."""
    o = _output(ectx, op, out)
    axis, r = op.attrs["axis"], o.rank
    shape = o.static_shape
    xb, ib = broadcast_flags(x.static_shape, shape), broadcast_flags(idx.static_shape, shape)
    zero = i64(0)
    name = ectx.kernel_name("take_along", x.dtype, "by", idx.dtype)
    kern = emit_gather(ectx.module, ectx.target, name, r, x.dtype, idx.dtype,
                       ectx.helpers)
    slots = [x.data, idx.data, o.data] + list(o.shape)
    for k in range(r):
        xs = zero if k == axis or xb[k] else x.strides[k]
        slots += [xs, zero if ib[k] else idx.strides[k], o.strides[k]]
    slots += [x.strides[axis], x.shape[axis], zero]
    launch = ectx.call_kernel(kern, slots, ectx.numel(o.shape), 1)
    ectx.fail_on_flag(launch, len(slots) - 1, status.INDEX_OUT_OF_RANGE)
    return [o]
