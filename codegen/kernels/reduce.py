"""kernel.reduce -> one LLVM function; the parallel range is the flat index of the output elements.

For each output element the reduced dims run as nested loops (in their original order, so the
argmax/argmin counter is numpy's flat index). When the innermost iteration dim is reduced and
every input is contiguous (or broadcast) along it, that loop runs on vector accumulators and
finishes with one masked iteration; lanes are combined in a fixed order, so results do not depend
on the thread count. Accumulators live in stack slots that mem2reg promotes.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir as L

from ir.core import Block
from ir.dtypes import DType, int64
from ir.reductions import REDUCTIONS

from ..llvm import complexops as C
from ..llvm.cast import convert
from ..llvm.context import LowerCtx
from ..llvm.loops import (
    alloca,
    elem_ptr,
    for_range,
    i64,
    lane_mask,
    load_scalar,
    load_vector,
    segment_loop,
    splat_value,
    store_scalar,
    store_vector,
)
from ..targets.base import Target
from .common import ArgBlock, OperandInfo, emit_body, max_element_bits, new_kernel

# kinds whose lanes accumulate independently (the records' `vectorisable`)
_VECTOR_KINDS = frozenset(k for k, r in REDUCTIONS.items() if r.vectorisable)


def identity(ctx: LowerCtx, kind: str, dt: DType):
    """The accumulator's start value of `kind` (its record's `identity`) in `dt`."""
    which = REDUCTIONS[kind].identity
    low = which == "lowest"
    if dt.is_complex:
        rt = dt.real_dtype
        if which in ("lowest", "highest"):  # the ends of numpy's lexicographic order
            end = ctx.const(rt, float("-inf") if low else float("inf"))
            return (end, end)
        return (ctx.const(rt, 1.0 if which == "one" else 0.0), ctx.const(rt, 0.0))
    if which in ("zero", "one"):
        return ctx.const(dt, int(which == "one"))
    if dt.is_float:
        return ctx.const(dt, float("-inf") if low else float("inf"))
    if dt.is_bool:
        return ctx.const(dt, 0 if low else 1)
    return ctx.const(dt, -(2 ** (dt.bits - 1)) if low else 2 ** (dt.bits - 1) - 1)


def better(ctx: LowerCtx, kind: str, dt: DType, x, best):
    """i1: x replaces best (order ">": x > best or a first nan; numpy's nan-propagating order)."""
    f = ctx.builder
    strict = REDUCTIONS[kind].order
    if dt.is_complex:  # lexicographic (real, then imag); a nan in either part is a nan
        tie = f.and_(f.fcmp_ordered("==", x[0], best[0]), f.fcmp_ordered(strict, x[1], best[1]))
        cmp = f.or_(f.fcmp_ordered(strict, x[0], best[0]), tie)
        x_nan, best_nan = f.fcmp_unordered("uno", x[0], x[1]), f.fcmp_unordered("uno", best[0], best[1])
        return f.and_(f.not_(best_nan), f.or_(x_nan, cmp))
    if dt.is_float:
        cmp = f.fcmp_ordered(strict, x, best)
        first_nan = f.and_(f.fcmp_unordered("uno", x, x), f.fcmp_ordered("ord", best, best))
        return f.or_(cmp, first_nan)
    if dt.is_bool:
        return f.icmp_unsigned(strict, x, best)
    return f.icmp_signed(strict, x, best)


def _keep_better(kind: str):
    def comb(ctx: LowerCtx, dt: DType, acc, x):
        take = better(ctx, kind, dt, x, acc)
        return C.select(ctx, take, x, acc) if dt.is_complex else ctx.builder.select(take, x, acc)

    return comb


def _sum(ctx: LowerCtx, dt: DType, acc, x):
    f = ctx.builder
    return C.add(ctx, acc, x) if dt.is_complex else f.fadd(acc, x) if dt.is_float else f.add(acc, x)


def _prod(ctx: LowerCtx, dt: DType, acc, x):
    f = ctx.builder
    return C.mul(ctx, acc, x) if dt.is_complex else f.fmul(acc, x) if dt.is_float else f.mul(acc, x)


# kind -> fn(ctx, dt, acc, x): the LLVM combine of each non-index record of ir.reductions (index
# kinds track their position with `better` in the kernel; tests check the table covers the records)
COMBINE = {
    "sum": _sum,
    "prod": _prod,
    "any": lambda ctx, dt, acc, x: ctx.builder.or_(acc, x),
    "all": lambda ctx, dt, acc, x: ctx.builder.and_(acc, x),
    "max": _keep_better("max"),
    "min": _keep_better("min"),
}


def combine(ctx: LowerCtx, kind: str, dt: DType, acc, x):
    return COMBINE[kind](ctx, dt, acc, x)


class _Slot:
    """An accumulator in a stack slot (complex: two slots)."""

    def __init__(self, b: L.IRBuilder, entry_b: L.IRBuilder, value):
        self.b = b
        parts = value if isinstance(value, tuple) else (value,)
        self.ptrs = [alloca(entry_b, p.type) for p in parts]
        self.is_pair = isinstance(value, tuple)

    def get(self):
        vals = [self.b.load(p, typ=p.slot_type) for p in self.ptrs]
        return tuple(vals) if self.is_pair else vals[0]

    def set(self, value) -> None:
        for p, v in zip(self.ptrs, value if self.is_pair else (value,), strict=False):
            self.b.store(v, p)


@dataclass(frozen=True)
class ReduceSpec:
    """What one reduce kernel computes: over the iteration `shape`, `kind` (an ir.reductions
    record's name) of the scalar body `block` (one argument per input, one yielded value)
    accumulated in `acc_dtype` along `axes`, from `inputs` into `output` (the output's broadcast
    flags are True on the reduced dims). A dim may be `dynamic` (read from the argument block even
    when the graph's shape is static: split_reduce's chunks)."""

    shape: tuple
    axes: tuple
    kind: str
    acc_dtype: DType
    block: Block
    inputs: tuple[OperandInfo, ...]
    output: OperandInfo


def emit_reduce(module: L.Module, target: Target, name: str, spec: ReduceSpec, helpers: dict) -> L.Function:
    """`void name(args, begin, end)`: output elements [begin, end) of a kernel.reduce."""
    shape, axes, kind, acc_dtype, block = spec.shape, spec.axes, spec.kind, spec.acc_dtype, spec.block
    inputs, output = list(spec.inputs), spec.output
    if not shape:  # a 0-d reduction is a copy of its single element
        shape, axes = (1,), ()
        inputs = [OperandInfo(i.dtype, (True,)) for i in inputs]
        output = OperandInfo(output.dtype, (False,))
    r = len(shape)
    axes = tuple(sorted({a % r for a in axes}))
    fn, b = new_kernel(module, name)
    entry_b = L.IRBuilder(fn.entry_basic_block)
    args, begin, end = fn.args
    infos = inputs + [output]
    ab = ArgBlock(b, args, shape, infos)
    entry_b.position_at_start(fn.entry_basic_block)
    yield_dt = block.terminator.operands[0].type.dtype
    sctx = LowerCtx(module, b, target, 1, helpers)
    kept = [k for k in range(r) if k not in axes]

    vlen = target.vector_len(max_element_bits(block, [i.dtype for i in infos] + [acc_dtype]))

    def one_output(o):
        offs = [i64(0)] * len(infos)
        rest = o
        for k in reversed(kept):
            idx = b.srem(rest, ab.dims[k])
            rest = b.sdiv(rest, ab.dims[k])
            offs = [b.add(off, b.mul(idx, ab.strides[n][k])) for n, off in enumerate(offs)]
        is_arg = REDUCTIONS[kind].index
        val_dt = yield_dt if is_arg else acc_dtype
        acc = _Slot(b, entry_b, identity(sctx, kind, val_dt))
        acc.set(identity(sctx, kind, val_dt))
        counter = best_idx = None
        if is_arg:
            counter, best_idx = _Slot(b, entry_b, i64(0)), _Slot(b, entry_b, i64(0))
            counter.set(i64(0))
            best_idx.set(i64(0))

        def scalar_step(offsets):
            vals = [
                load_scalar(sctx, info.dtype, elem_ptr(b, info.dtype, ab.ptrs[n], offsets[n]))
                for n, info in enumerate(inputs)
            ]
            (x,) = emit_body(sctx, block, vals)
            if is_arg:
                take = better(sctx, kind, val_dt, x, acc.get())
                acc.set(C.select(sctx, take, x, acc.get()) if val_dt.is_complex
                        else b.select(take, x, acc.get()))
                best_idx.set(b.select(take, counter.get(), best_idx.get()))
                counter.set(b.add(counter.get(), i64(1)))
            else:
                acc.set(combine(sctx, kind, acc_dtype, acc.get(), convert(sctx, x, yield_dt, acc_dtype)))

        vectorise = (
            r - 1 in axes
            and kind in _VECTOR_KINDS
            and vlen > 1
            and not acc_dtype.is_complex
            and shape[-1] != 1
        )
        _reduced_loops(
            b,
            ab,
            axes,
            offs,
            scalar_step,
            inputs,
            entry_b,
            vectorise
            and (
                lambda row_offs, run: _vector_row(
                    LowerCtx(module, b, target, vlen, helpers),
                    block,
                    kind,
                    acc_dtype,
                    yield_dt,
                    inputs,
                    ab,
                    row_offs,
                    run,
                    acc,
                    entry_b,
                )
            ),
        )
        out_val = best_idx.get() if is_arg else acc.get()
        store_scalar(
            sctx,
            output.dtype,
            elem_ptr(b, output.dtype, ab.ptrs[-1], offs[-1]),
            convert(sctx, out_val, int64 if is_arg else acc_dtype, output.dtype),
        )

    if (
        axes
        and r - 1 not in axes
        and kind in _VECTOR_KINDS
        and vlen > 1
        and not acc_dtype.is_complex
        and shape[-1] != 1
    ):
        vctx = LowerCtx(module, b, target, vlen, helpers)
        _rows(vctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, begin, end, one_output)
    else:
        with for_range(b, begin, end, name="o") as o:
            one_output(o)
    b.ret_void()
    return fn


def _reduced_loops(b, ab, axes, offs, scalar_step, inputs, entry_b, vector_row) -> None:
    """Nested loops over the reduced dims; the innermost may take the vector path."""
    if not axes:
        scalar_step(offs)
        return
    ptr_offs = offs[: len(inputs)]

    def nest(level, cur):
        k = axes[level]
        if level == len(axes) - 1 and vector_row:
            contig = L.Constant(L.IntType(1), 1)
            for n, info in enumerate(inputs):
                if not info.bcast[k]:
                    contig = b.and_(contig, b.icmp_signed("==", ab.strides[n][k], i64(1)))
            with b.if_else(contig) as (then, otherwise):
                with then:
                    vector_row(cur, ab.dims[k])
                with otherwise:
                    _scalar_level(k, cur)
            return
        if level == len(axes) - 1:
            _scalar_level(k, cur)
            return
        with for_range(b, 0, ab.dims[k], name=f"r{k}") as idx:
            nest(level + 1, [b.add(o, b.mul(idx, ab.strides[n][k])) for n, o in enumerate(cur)])

    def _scalar_level(k, cur):
        with for_range(b, 0, ab.dims[k], name=f"r{k}") as idx:
            scalar_step([b.add(o, b.mul(idx, ab.strides[n][k])) for n, o in enumerate(cur)])

    nest(0, ptr_offs)


def _vector_row(ctx: LowerCtx, block, kind, acc_dtype, yield_dt, inputs, ab, offs, run, acc, entry_b) -> None:
    b, n = ctx.builder, ctx.vlen
    bases = [elem_ptr(b, info.dtype, ab.ptrs[i], offs[i]) for i, info in enumerate(inputs)]
    sctx = LowerCtx(ctx.module, b, ctx.target, 1, ctx._helpers)
    hoisted = {
        i: splat_value(ctx, load_scalar(sctx, info.dtype, bases[i]))
        for i, info in enumerate(inputs)
        if info.bcast[-1]
    }
    vacc = _Slot(b, entry_b, identity(ctx, kind, acc_dtype))
    vacc.set(identity(ctx, kind, acc_dtype))
    full = b.and_(run, i64(-n))

    def step(k, mask):
        vals = [
            hoisted[i]
            if i in hoisted
            else load_vector(ctx, info.dtype, elem_ptr(b, info.dtype, bases[i], k), mask)
            for i, info in enumerate(inputs)
        ]
        (x,) = emit_body(ctx, block, vals)
        x = convert(ctx, x, yield_dt, acc_dtype)
        if mask is not None:  # masked lanes contribute the identity
            x = b.select(mask, x, identity(ctx, kind, acc_dtype))
        vacc.set(combine(ctx, kind, acc_dtype, vacc.get(), x))

    with for_range(b, 0, full, n, name="rv") as k:
        step(k, None)
    with b.if_then(b.icmp_signed("<", full, run)):
        step(full, lane_mask(ctx, b.sub(run, full)))
    v = vacc.get()
    total = b.extract_element(v, L.Constant(L.IntType(32), 0))
    for lane in range(1, n):
        total = combine(sctx, kind, acc_dtype, total, b.extract_element(v, L.Constant(L.IntType(32), lane)))
    acc.set(combine(sctx, kind, acc_dtype, acc.get(), total))


__all__ = ["ReduceSpec", "combine", "emit_reduce", "identity"]


def _rows(
    ctx: LowerCtx,
    ab: ArgBlock,
    axes,
    kind,
    acc_dtype,
    yield_dt,
    block,
    inputs,
    output,
    begin,
    end,
    one_output,
) -> None:
    """Reductions that keep the innermost dim (e.g. sum over axis 0 of a C-contiguous matrix):
    VL adjacent outputs at a time, each a vector accumulator over the reduced dims, so every load
    is a contiguous vector. Falls back to one output at a time for other layouts. Each output
    still sums its elements in index order, so both paths give identical results."""
    b, n = ctx.builder, ctx.vlen
    r = len(ab.shape)
    kept = [k for k in range(r) if k not in axes]
    last = ab.dims[-1]
    contig = b.icmp_signed("==", ab.strides[-1][-1], i64(1))
    for i, info in enumerate(inputs):
        if not info.bcast[-1]:
            contig = b.and_(contig, b.icmp_signed("==", ab.strides[i][-1], i64(1)))
    with segment_loop(b, begin, end) as seg:
        i = seg.i
        j = b.srem(i, last)
        rest = b.sdiv(i, last)
        offs = [b.mul(j, ab.strides[m][-1]) for m in range(len(inputs) + 1)]
        for k in reversed(kept[:-1]):
            idx = b.srem(rest, ab.dims[k])
            rest = b.sdiv(rest, ab.dims[k])
            offs = [b.add(o, b.mul(idx, ab.strides[m][k])) for m, o in enumerate(offs)]
        run = b.sub(last, j)
        left = b.sub(end, i)
        run = b.select(b.icmp_signed("<", left, run), left, run)
        sctx = LowerCtx(ctx.module, b, ctx.target, 1, ctx._helpers)
        with b.if_else(contig) as (then, otherwise):
            with then:
                full = b.and_(run, i64(-n))
                with for_range(b, 0, full, n, name="col") as c:
                    _column_block(
                        ctx, sctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, offs, c, None
                    )
                with b.if_then(b.icmp_signed("<", full, run)):
                    mask = lane_mask(ctx, b.sub(run, full))
                    _column_block(
                        ctx, sctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, offs, full, mask
                    )
            with otherwise, for_range(b, 0, run, name="one") as k:
                one_output(b.add(i, k))
        seg.step = run


def _column_block(
    ctx, sctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, offs, col, mask
) -> None:
    """Outputs [col, col + VL) of one row segment: a vector accumulator over the reduced dims."""
    b = ctx.builder
    entry_b = L.IRBuilder(b.function.entry_basic_block)
    entry_b.position_at_start(b.function.entry_basic_block)
    acc = _Slot(b, entry_b, identity(ctx, kind, acc_dtype))
    acc.set(identity(ctx, kind, acc_dtype))

    def step(cur):
        vals = []
        for m, info in enumerate(inputs):
            if info.bcast[-1]:
                vals.append(
                    splat_value(
                        ctx, load_scalar(sctx, info.dtype, elem_ptr(b, info.dtype, ab.ptrs[m], cur[m]))
                    )
                )
            else:
                p = elem_ptr(b, info.dtype, ab.ptrs[m], b.add(cur[m], b.mul(col, ab.strides[m][-1])))
                vals.append(load_vector(ctx, info.dtype, p, mask))
        (x,) = emit_body(ctx, block, vals)
        acc.set(combine(ctx, kind, acc_dtype, acc.get(), convert(ctx, x, yield_dt, acc_dtype)))

    def nest(level, cur):
        if level == len(axes):
            step(cur)
            return
        k = axes[level]
        with for_range(b, 0, ab.dims[k], name=f"rr{k}") as idx:
            nest(level + 1, [b.add(o, b.mul(idx, ab.strides[m][k])) for m, o in enumerate(cur)])

    nest(0, offs[: len(inputs)])
    out = elem_ptr(b, output.dtype, ab.ptrs[-1], b.add(offs[-1], col))
    store_vector(ctx, output.dtype, out, convert(ctx, acc.get(), acc_dtype, output.dtype), mask)
