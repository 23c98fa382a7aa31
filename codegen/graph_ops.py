"""ENTRY_LOWERINGS rows: how each top-level op of an ir function becomes kernel calls or views.

Elementwise and reduction ops that fusion left alone become one-op kernels; view ops
(broadcast_to, transpose, expand_dims, squeeze, slice, flip, and reshape of contiguous data) are
descriptor arithmetic with no copy; concatenate/stack/pad are copies into views of the output.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from ir import status
from ir.core import Block, Operation
from ir.dtypes import DType, float64, int64
from ir.opdef import MissingRule
from ir.records import record
from ir.reductions import REDUCTIONS
from ir.symbols import exact_ratio, is_static, size_is_int
from ir.types import ScalarType, TensorType

from .graph_base import (
    Desc,
    EntryCtx,
    body_summary,
    contiguous_strides,
    emit_sym_expr,
    entry_rule,
    reduction_summary,
)
from .kernels import matmul as mm
from .kernels.common import OperandInfo, broadcast_flags, max_element_bits, operand_info, reports_errors
from .kernels.elementwise import emit_elementwise
from .kernels.gather import emit_gather
from .kernels.reduce import ReduceSpec, emit_reduce
from .llvm.builder import const_int, emit_if
from .llvm.cast import convert
from .llvm.context import LowerCtx
from .llvm.loops import alloca, elem_ptr, for_range, i64, store_scalar
from .llvm.types import PTR
from .split_arg import arg_splittable, split_arg
from .split_reduce import SPLIT_KINDS, split_reduce, splittable


# --- kernels -------------------------------------------------------------------------------------
def run_elementwise(ectx: EntryCtx, shape: tuple, block, ins: list[Desc], outs: list[Desc]) -> None:
    """Emit the kernel for `block` over `shape` and call it on these descriptors (its dims
    coalesced where every operand's strides allow: `coalesce`)."""
    shape = tuple(shape)
    rank0 = not shape
    kshape = (1,) if rank0 else shape
    infos, strides = [], []
    for d, is_out in [(d, False) for d in ins] + [(d, True) for d in outs]:
        bcast = (not is_out,) if rank0 else (False,) * len(kshape) if is_out \
            else broadcast_flags(d.static_shape, shape)
        lead = len(kshape) - (0 if rank0 else d.rank)
        st = [i64(0) if bcast[k] or rank0 else d.strides[k - lead] for k in range(len(kshape))]
        infos.append(operand_info(d.dtype, bcast, st))
        strides.append(st)
    kshape, infos, strides = coalesce(kshape, infos, strides)
    in_infos, out_infos = infos[: len(ins)], infos[len(ins):]
    name = ectx.kernel_name("ew", body_summary(block))
    dims = [ectx.dim(d) for d in kshape]
    total, vlen = ectx.numel(dims), kern_vlen(ectx, block, ins + outs)
    kern = emit_elementwise(ectx.module, ectx.target, name, kshape, block, in_infos, out_infos, ectx.helpers,
                            whole=ectx.host.one_call(total, vlen),
                            # a row group's next kernel reads the block back from cache
                            streaming=ectx.options.streaming_stores and not ectx.in_row_group)
    slots = [d.data for d in ins + outs] + dims
    for st in strides:
        slots += st
    if not reports_errors(block):
        ectx.call_kernel(kern, slots, total, vlen)
        return
    launch = ectx.call_kernel(kern, slots + [i64(0)], total, vlen)
    ectx.fail_on_flag(launch, len(slots), status.NEGATIVE_POWER)


def coalesce(shape: tuple, infos: list[OperandInfo], strides: list[list]):
    """The iteration space with adjacent dims merged where every operand walks them as one dim
    (numpy's nditer coalescing): static size-1 dims are dropped, and dims k, k+1 (k+1 static) merge
    when each operand's strides are known and s[k] == s[k+1] * n[k+1]. The flat iteration order is
    unchanged (a kernel's [begin, end) and a row group's blocks of rows mean the same elements), and
    contiguous operands leave one dim: a kernel of one vector loop. Returns (shape, infos, strides)."""
    keep = [k for k, d in enumerate(shape) if not (is_static(d) and d == 1)] or [len(shape) - 1]
    groups = [[keep[0]]]
    for k in keep[1:]:
        inner = groups[-1][-1]
        if is_static(shape[k]) and all(
                i.known_stride(inner) is not None and i.known_stride(k) is not None
                and i.known_stride(inner) == i.known_stride(k) * shape[k] for i in infos):
            groups[-1].append(k)
        else:
            groups.append([k])
    if len(groups) == len(shape):
        return shape, infos, strides
    new_shape = tuple(_product([shape[k] for k in g]) for g in groups)
    new_infos, new_strides = [], []
    for info, st in zip(infos, strides, strict=True):
        bcast = tuple(info.bcast[g[-1]] for g in groups)
        known = tuple(info.known_stride(g[-1]) for g in groups)
        new_infos.append(OperandInfo(info.dtype, bcast, known if any(x is not None for x in known) else None))
        new_strides.append([st[g[-1]] for g in groups])
    return new_shape, new_infos, new_strides


def _product(dims: list):
    out = 1
    for d in dims:
        out = out * d
    return out


def kern_vlen(ectx: EntryCtx, block, descs) -> int:
    return ectx.target.vector_len(max_element_bits(block, [d.dtype for d in descs]))


def _outputs(ectx: EntryCtx, op, out: list) -> list[Desc]:
    return [o if o is not None else ectx.alloc(r.type) for r, o in zip(op.results, out, strict=False)]


@entry_rule("kernel.elementwise")
def _kernel_elementwise(ectx: EntryCtx, op, *ins, out):
    outs = _outputs(ectx, op, out)
    run_elementwise(ectx, op.attrs["shape"], op.regions[0].block, list(ins), outs)
    return outs


def single_op_body(op) -> Block:
    """A kernel body applying `op` to scalars (for elementwise ops that were not fused)."""
    block = Block([ScalarType(v.type.dtype) for v in op.operands])
    inner = Operation(
        op.name, list(block.args), [ScalarType(r.type.dtype) for r in op.results], dict(op.attrs)
    )
    block.append(inner)
    block.append(Operation("yield", list(inner.results), []))
    return block


@entry_rule("@elementwise")
def _lone_elementwise(ectx: EntryCtx, op, *ins, out):
    outs = _outputs(ectx, op, out)
    run_elementwise(ectx, op.results[0].type.shape, single_op_body(op), list(ins), outs)
    return outs


def identity_body(src, dst) -> Block:
    block = Block([ScalarType(src)])
    if src == dst:
        block.append(Operation("yield", [block.args[0]], []))
        return block
    cast = Operation("cast", [block.args[0]], [ScalarType(dst)], {"dtype": dst})
    block.append(cast)
    block.append(Operation("yield", [cast.results[0]], []))
    return block


@entry_rule("@copy")
def copy(ectx: EntryCtx, src: Desc, dst: Desc) -> None:
    """dst[...] = src (broadcast to dst's shape, cast to dst's dtype)."""
    run_elementwise(ectx, dst.static_shape, identity_body(src.dtype, dst.dtype), [src], [dst])


# --- reductions ----------------------------------------------------------------------------------
@record(frozen=True)
class Reduction:
    """A reduction at the graph level: `kind` (an ir.reductions record's name) of the scalar body
    `block` over the iteration `shape`, along `axes`, accumulated in `dtype`; `keepdims`: the
    output keeps the reduced dims (as size 1)."""

    shape: tuple
    axes: tuple
    kind: str
    dtype: DType
    keepdims: bool
    block: Block


def run_reduce(ectx: EntryCtx, red: Reduction, ins: list[Desc], out: Desc, allow_split: bool = True) -> None:
    """Emit the kernel of `red` and call it from `ins` into `out` (split over threads when the
    outputs are few and the work is large: split_reduce.py; a full argmax/argmin: split_arg.py)."""
    shape = tuple(red.shape)
    r = len(shape)
    axes = tuple(sorted({a % r for a in red.axes})) if r else ()
    in_infos = [operand_info(d.dtype, broadcast_flags(d.static_shape, shape), d.strides) for d in ins]
    out_bcast = tuple(k in axes for k in range(r))
    out_info = operand_info(out.dtype, out_bcast, _out_strides(out, r, axes, red.keepdims))
    spec = ReduceSpec(shape, axes, red.kind, red.dtype, red.block, tuple(in_infos), out_info)
    name = ectx.kernel_name("red", reduction_summary(red.kind, red.block))
    kern = emit_reduce(ectx.module, ectx.target, name, spec, ectx.helpers)
    if not r:
        slots = [d.data for d in ins] + [out.data, i64(1)] + [i64(0)] * (len(ins) + 1)
        ectx.call_kernel(kern, slots, i64(1), 1)
        return
    dims = [ectx.dim(d) for d in shape]
    slots = [d.data for d in ins] + [out.data] + dims
    for d, info in zip(ins, in_infos, strict=False):
        lead = r - d.rank
        slots += [i64(0) if info.bcast[k] else d.strides[k - lead] for k in range(r)]
    kept = [k for k in range(r) if k not in axes]
    for k in range(r):
        if k in axes:
            slots.append(i64(0))
        else:
            slots.append(out.strides[k if red.keepdims else kept.index(k)])
    total = ectx.numel([dims[k] for k in kept])
    work = ectx.numel(dims)
    arg = allow_split and arg_splittable(ectx, red.kind, axes, r, red.block)
    if not (arg or (allow_split and splittable(ectx, red.kind, axes))):
        ectx.call_kernel(kern, slots, total, 1, work=work)
        return
    b = ectx.builder
    nt = ectx.host.reduce_chunks()
    few = b.icmp_signed("<", total, i64(nt))
    big = b.icmp_signed(">=", work, i64(max(ectx.options.parallel_threshold, 1)))
    long_axis = b.icmp_signed(">=", dims[axes[0]], i64(2 * nt))

    def split():
        if arg:
            split_arg(ectx, spec, slots, out)
        else:
            _split_partials(ectx, red, spec, slots, [dims[k] for k in kept], kept, out)

    emit_if(b, b.and_(few, b.and_(big, long_axis)), split,
            lambda: ectx.call_kernel(kern, slots, total, 1, work=work))


def _out_strides(out: Desc, r: int, axes: tuple, keepdims: bool) -> list:
    """The output's strides per iteration dim (reduced dims: 0, broadcast anyway)."""
    if keepdims:
        return [i64(0) if k in axes else out.strides[k] for k in range(r)]
    kept = iter(out.strides)
    return [i64(0) if k in axes else next(kept) for k in range(r)]


def _split_partials(ectx: EntryCtx, red, spec, slots, kept_dims, kept, out: Desc) -> None:
    """split_reduce's partials, then their reduction over the chunks into `out`."""
    part = split_reduce(ectx, spec, slots, kept_dims)
    view = Desc(  # the output without its reduced dims
        out.dtype,
        out.data,
        [out.shape[k] for k in kept] if red.keepdims else list(out.shape),
        [out.strides[k] for k in kept] if red.keepdims else list(out.strides),
        tuple(out.static_shape[k] for k in kept) if red.keepdims else tuple(out.static_shape),
    )
    partials = Reduction(part.static_shape, (0,), SPLIT_KINDS[red.kind], red.dtype, False,
                         identity_body(red.dtype, red.dtype))
    run_reduce(ectx, partials, [part], view, allow_split=False)


@entry_rule("kernel.reduce")
def _kernel_reduce(ectx: EntryCtx, op, *ins, out):
    (o,) = _outputs(ectx, op, out)
    a = op.attrs
    red = Reduction(tuple(a["shape"]), tuple(a["axes"]), a["kind"], a["dtype"], bool(a["keepdims"]),
                    op.regions[0].block)
    run_reduce(ectx, red, list(ins), o)
    return [o]


@entry_rule("@reduction")
def _lone_reduction(ectx: EntryCtx, op, x, out):
    (o,) = _outputs(ectx, op, out)
    a = op.attrs
    axes = a["axes"] if "axes" in a else (a["axis"],)
    shape = x.static_shape
    acc = int64 if REDUCTIONS[op.name].index else op.results[0].type.dtype
    red = Reduction(shape, tuple(axes), op.name, acc, bool(a.get("keepdims", False)),
                    identity_body(x.dtype, x.dtype))
    run_reduce(ectx, red, [x], o)
    return [o]


# --- views ---------------------------------------------------------------------------------------
def _view(op, x: Desc, data, shape, strides) -> list[Desc]:
    return [Desc(x.dtype, data, list(shape), list(strides), tuple(op.results[0].type.shape))]


@entry_rule("broadcast_to")
def _broadcast_to(ectx: EntryCtx, op, x, out):
    new = op.results[0].type.shape
    lead = len(new) - x.rank
    flags = broadcast_flags(x.static_shape, new)
    strides = [i64(0) if flags[k] else x.strides[k - lead] for k in range(len(new))]
    return _view(op, x, x.data, [ectx.dim(d) for d in new], strides)


@entry_rule("transpose")
def _transpose(ectx: EntryCtx, op, x, out):
    perm = [p % x.rank for p in op.attrs["perm"]]
    return _view(op, x, x.data, [x.shape[p] for p in perm], [x.strides[p] for p in perm])


@entry_rule("expand_dims")
def _expand_dims(ectx: EntryCtx, op, x, out):
    n = len(op.results[0].type.shape)
    axes = {a % n for a in op.attrs["axes"]}
    shape, strides, src = [], [], 0
    for k in range(n):
        if k in axes:
            shape.append(i64(1))
            strides.append(i64(0))
        else:
            shape.append(x.shape[src])
            strides.append(x.strides[src])
            src += 1
    return _view(op, x, x.data, shape, strides)


@entry_rule("squeeze")
def _squeeze(ectx: EntryCtx, op, x, out):
    axes = op.attrs["axes"]
    axes = (
        {a % x.rank for a in axes}
        if axes is not None
        else {k for k, d in enumerate(x.static_shape) if d == 1}
    )
    keep = [k for k in range(x.rank) if k not in axes]
    return _view(op, x, x.data, [x.shape[k] for k in keep], [x.strides[k] for k in keep])


@entry_rule("flip")
def _flip(ectx: EntryCtx, op, x, out):
    axes = op.attrs["axes"]
    axes = {a % x.rank for a in axes} if axes is not None else set(range(x.rank))
    b = ectx.builder
    off = i64(0)
    strides = list(x.strides)
    for k in axes:
        off = b.add(off, b.mul(b.sub(x.shape[k], i64(1)), x.strides[k]))
        strides[k] = b.sub(i64(0), x.strides[k])
    return _view(op, x, elem_ptr(b, x.dtype, x.data, off), x.shape, strides)


@entry_rule("slice")
def _slice(ectx: EntryCtx, op, x, out):
    b = ectx.builder
    a = op.attrs
    res_shape = op.results[0].type.shape
    off = i64(0)
    strides = []
    # the stop bounds are already in the result type's dims
    for k, (start, step) in enumerate(zip(a["starts"], a["steps"], strict=True)):
        n = x.static_shape[k]
        first = _slice_start(ectx, n, start, step, x.shape[k])
        off = b.add(off, b.mul(first, x.strides[k]))
        strides.append(b.mul(x.strides[k], i64(int(step))))
    return _view(op, x, elem_ptr(b, x.dtype, x.data, off), [ectx.dim(d) for d in res_shape], strides)


def _slice_start(ectx: EntryCtx, n, start, step: int, n_val):
    """Index of the first element a Python slice selects (only used when the slice is non-empty)."""
    if is_static(n) and (start is None or is_static(start)):
        return i64(slice(None if start is None else int(start), None, int(step)).indices(n)[0])
    b = ectx.builder
    if start is None:
        return i64(0) if step > 0 else b.sub(n_val, i64(1))
    s = ectx.dim(start)
    s = b.select(b.icmp_signed("<", s, i64(0)), b.add(s, n_val), s)
    lo = i64(0) if step > 0 else i64(-1)
    hi = n_val if step > 0 else b.sub(n_val, i64(1))
    s = b.select(b.icmp_signed("<", s, lo), lo, s)
    return b.select(b.icmp_signed(">", s, hi), hi, s)


@entry_rule("reshape")
def _reshape(ectx: EntryCtx, op, x, out):
    """A view when the data is C-contiguous (checked at run time), else a contiguous copy first."""
    b = ectx.builder
    rt = op.results[0].type
    shape = [ectx.dim(d) for d in rt.shape]
    ok = L.Constant(L.IntType(1), 1)
    expect = i64(1)
    for k in range(x.rank - 1, -1, -1):
        good = b.or_(b.icmp_signed("==", x.shape[k], i64(1)), b.icmp_signed("==", x.strides[k], expect))
        ok = b.and_(ok, good)
        expect = b.mul(expect, x.shape[k])
    if const_int(ok) == 1:  # known contiguous: the view itself
        return [Desc(x.dtype, x.data, shape, contiguous_strides(b, shape), tuple(rt.shape))]
    slot = alloca(ectx.alloca_builder, PTR)

    def copied():
        tmp = ectx.alloc(TensorType(x.dtype, x.static_shape))
        copy(ectx, x, tmp)
        b.store(tmp.data, slot)

    emit_if(b, ok, lambda: b.store(x.data, slot), copied)
    data = b.load(slot, typ=PTR)
    return [Desc(x.dtype, data, shape, contiguous_strides(b, shape), tuple(rt.shape))]


# --- copies into views -----------------------------------------------------------------------------
def _axis_slice(ectx: EntryCtx, d: Desc, axis: int, start, length, static_len) -> Desc:
    b = ectx.builder
    shape = list(d.shape)
    shape[axis] = length
    sshape = list(d.static_shape)
    sshape[axis] = static_len
    return Desc(
        d.dtype,
        elem_ptr(b, d.dtype, d.data, b.mul(start, d.strides[axis])),
        shape,
        list(d.strides),
        tuple(sshape),
    )


@entry_rule("concatenate")
def _concatenate(ectx: EntryCtx, op, *ins, out):
    (o,) = _outputs(ectx, op, out)
    axis = op.attrs["axis"] % o.rank
    off = i64(0)
    for x in ins:
        copy(ectx, x, _axis_slice(ectx, o, axis, off, x.shape[axis], x.static_shape[axis]))
        off = ectx.builder.add(off, x.shape[axis])
    return [o]


@entry_rule("stack")
def _stack(ectx: EntryCtx, op, *ins, out):
    (o,) = _outputs(ectx, op, out)
    axis = op.attrs["axis"] % o.rank
    for i, x in enumerate(ins):
        view = _axis_slice(ectx, o, axis, i64(i), i64(1), 1)
        shape = view.shape[:axis] + view.shape[axis + 1 :]
        strides = view.strides[:axis] + view.strides[axis + 1 :]
        sshape = view.static_shape[:axis] + view.static_shape[axis + 1 :]
        copy(ectx, x, Desc(o.dtype, view.data, shape, strides, sshape))
    return [o]


def fill(ectx: EntryCtx, d: Desc, value) -> None:
    block = Block([])
    c = Operation("constant", [], [ScalarType(d.dtype)], {"value": value, "dtype": d.dtype})
    block.append(c)
    block.append(Operation("yield", list(c.results), []))
    run_elementwise(ectx, d.static_shape, block, [], [d])


@entry_rule("pad")
def _pad(ectx: EntryCtx, op, x, out):
    (o,) = _outputs(ectx, op, out)
    fill(ectx, o, op.attrs["value"])
    b = ectx.builder
    off = i64(0)
    for k, (lo, _) in enumerate(op.attrs["pad_width"]):
        off = b.add(off, b.mul(ectx.dim(lo), o.strides[k]))
    inner = Desc(o.dtype, elem_ptr(b, o.dtype, o.data, off), list(x.shape), list(o.strides), x.static_shape)
    copy(ectx, x, inner)
    return [o]


@entry_rule("full", "full_like")
def _full(ectx: EntryCtx, op, *ins, out):
    (o,) = _outputs(ectx, op, out)
    value = op.attrs["value"]
    if hasattr(value, "free_symbols"):  # a size expression, e.g. the count of a symbolic mean
        _fill_size(ectx, o, value)
    else:
        fill(ectx, o, value)
    return [o]


def _fill_size(ectx: EntryCtx, o: Desc, expr) -> None:
    """Store the run-time value of a size expression into a 0-d tensor: an integer one, or the
    true quotient of two (one rounding, as Python's int / int; a zero divisor fails the entry
    with status ZERO_DIVISION, as Python raises ZeroDivisionError)."""
    if o.rank != 0:
        raise MissingRule("llvm", f"full with the symbolic value {expr} and rank {o.rank} (only 0-d)")
    b = ectx.builder
    ctx = LowerCtx(ectx.module, b, ectx.target, 1, ectx.helpers)
    if size_is_int(expr):
        store_scalar(ctx, o.dtype, o.data, convert(ctx, emit_sym_expr(ectx, expr), int64, o.dtype))
        return
    ratio = exact_ratio(expr)
    if ratio is None:
        raise MissingRule("llvm", f"full with the non-rational size value {expr}")
    num, den = (emit_sym_expr(ectx, e) for e in ratio)
    ectx.fail_if(b.icmp_signed("==", den, i64(0)), status.ZERO_DIVISION)
    q = b.fdiv(b.sitofp(num, L.DoubleType()), b.sitofp(den, L.DoubleType()))
    store_scalar(ctx, o.dtype, o.data, convert(ctx, q, float64, o.dtype))


@entry_rule("iota")
def _iota(ectx: EntryCtx, op, out):
    (o,) = _outputs(ectx, op, out)
    b = ectx.builder
    ctx = LowerCtx(ectx.module, b, ectx.target, 1, ectx.helpers)
    with for_range(b, 0, o.shape[0], name="iota") as i:
        store_scalar(
            ctx,
            o.dtype,
            elem_ptr(b, o.dtype, o.data, b.mul(i, o.strides[0])),
            convert(ctx, i, int64, o.dtype),
        )
    return [o]


@entry_rule("constant")
def _constant(ectx: EntryCtx, op, out):
    rt = op.results[0].type
    g = ectx.host.constant("const", np.asarray(op.attrs["value"], dtype=rt.dtype.numpy))
    shape = [i64(d) for d in rt.shape]
    return [Desc(rt.dtype, g, shape, contiguous_strides(ectx.builder, shape), tuple(rt.shape))]


# --- matmul ---------------------------------------------------------------------------------------
def _insert_dim(d: Desc, k: int) -> Desc:
    """A view with a new size-1 dim (stride 0) at position k."""
    return Desc(
        d.dtype,
        d.data,
        d.shape[:k] + [i64(1)] + d.shape[k:],
        d.strides[:k] + [i64(0)] + d.strides[k:],
        d.static_shape[:k] + (1,) + d.static_shape[k:],
    )


@entry_rule("matmul")
def _matmul(ectx: EntryCtx, op, a, b, out):
    """numpy matmul. 2-D f32/f64 matrices take the blocked kernel (kernels/matmul.py) when the
    result is contiguous along N and K > 0 (checked at run time; K == 0 must write zeros);
    everything else (1-D operands, batch dims, other dtypes and layouts) is a reduction over K of
    the iteration space (batch..., M, N, K)."""
    (o,) = _outputs(ectx, op, out)
    dt = op.results[0].type.dtype
    if a.rank == 2 and b.rank == 2 and mm.supported(ectx.target, a.dtype, b.dtype, dt):
        bld = ectx.builder

        def blocked():
            m, k, n = a.shape[0], a.shape[1], b.shape[1]
            slots = [a.data, b.data, o.data, m, n, k, *a.strides, *b.strides, o.strides[0]]
            ectx.call_kernel(_matmul_kernel(ectx, dt), slots, mm.tiles(bld, m), 1, work=ectx.numel([m, n, k]))

        if _known(o.strides[1]) == 1 and (_known(a.shape[1]) or 0) > 0:  # decided now: no fallback code
            blocked()
            return [o]
        ok = bld.and_(bld.icmp_signed("==", o.strides[1], i64(1)), bld.icmp_signed(">", a.shape[1], i64(0)))
        emit_if(bld, ok, blocked, lambda: _matmul_reduce(ectx, op, a, b, o, dt))
        return [o]
    _matmul_reduce(ectx, op, a, b, o, dt)
    return [o]


def _known(v):
    """The value of an LLVM integer constant (a static size or stride), else None."""
    return getattr(v, "constant", None) if isinstance(v, L.Constant) and isinstance(v.type, L.IntType) else None


def _matmul_kernel(ectx: EntryCtx, dt):
    """The blocked kernel of dtype dt, one per module: its sizes and strides are run-time slots, so
    every matmul of a graph (a backward has several) calls the same code, compiled once."""
    key = ("matmul", dt)
    kern = ectx.helpers.get(key)
    if kern is None:
        name = ectx.kernel_name("mm", "matmul", dt)
        kern = ectx.helpers[key] = mm.emit_matmul(ectx.module, ectx.target, name, dt,
                                                  ectx.helpers)
    return kern


def _matmul_reduce(ectx: EntryCtx, op, a: Desc, b: Desc, o: Desc, dt) -> None:
    """matmul as a reduction over K (correct for every layout and dtype; vectorised along K only
    when both operands are contiguous along K)."""
    a2 = _insert_dim(a, 0) if a.rank == 1 else a  # (..., M, K)
    b2 = _insert_dim(b, 1) if b.rank == 1 else b  # (..., K, N)
    o2 = _insert_dim(o, o.rank) if b.rank == 1 else o
    o2 = _insert_dim(o2, o2.rank - 1) if a.rank == 1 else o2  # (..., M, N)
    a3 = _insert_dim(a2, a2.rank - 1)  # (..., M, 1, K)
    bt = Desc(
        b2.dtype,
        b2.data,
        b2.shape[:-2] + [b2.shape[-1], b2.shape[-2]],
        b2.strides[:-2] + [b2.strides[-1], b2.strides[-2]],
        b2.static_shape[:-2] + (b2.static_shape[-1], b2.static_shape[-2]),
    )
    b3 = _insert_dim(bt, bt.rank - 2)  # (..., 1, N, K)
    shape = tuple(o2.static_shape) + (a2.static_shape[-1],)
    block = Block([ScalarType(a.dtype), ScalarType(b.dtype)])
    xs = []
    for arg in block.args:
        if arg.type.dtype != dt:
            c = Operation("cast", [arg], [ScalarType(dt)], {"dtype": dt})
            block.append(c)
            arg = c.results[0]
        xs.append(arg)
    prod = Operation("mul", xs, [ScalarType(dt)])
    block.append(prod)
    block.append(Operation("yield", list(prod.results), []))
    kind = "any" if dt.is_bool else "sum"
    run_reduce(ectx, Reduction(shape, (len(shape) - 1,), kind, dt, False, block), [a3, b3], o2)


# --- take ------------------------------------------------------------------------------------------
@entry_rule("take")
def _take(ectx: EntryCtx, op, x, idx, out):
    (o,) = _outputs(ectx, op, out)
    axis = op.attrs["axis"] % x.rank
    r, ri = o.rank, idx.rank
    name = ectx.kernel_name("take", x.dtype, "by", idx.dtype)
    kern = emit_gather(ectx.module, ectx.target, name, r, x.dtype, idx.dtype, ectx.helpers)
    zero = i64(0)
    xs = x.strides[:axis] + [zero] * ri + x.strides[axis + 1 :]
    ids = [zero] * axis + idx.strides + [zero] * (x.rank - axis - 1)
    slots = [x.data, idx.data, o.data] + o.shape
    for k in range(r):
        slots += [xs[k], ids[k], o.strides[k]]
    slots += [x.strides[axis], x.shape[axis], zero]
    err_index = len(slots) - 1
    launch = ectx.call_kernel(kern, slots, ectx.numel(o.shape), 1)
    ectx.fail_on_flag(launch, err_index, status.INDEX_OUT_OF_RANGE)
    return [o]
