"""runtime's native helpers as LLVM IR, built with llvmlite's IRBuilder from ir/abi_slots.py.

- `aot_call_strided` (ir.abi_slots.STRIDED_CALL): the hot path of every compiled function, static
  or dynamic, as a Python builtin (METH_FASTCALL: the interpreter hands over the array objects
  themselves, with no argument conversion); it checks the arrays' type, dtype, rank, alignment,
  strides and the simple size guards (static dims, equal dims, bounds) against its context block,
  makes the outputs (numpy's PyArray_New), calls the entry with the data pointers, releasing the
  GIL around large work, and returns the outputs, so a warm call runs no Python of its own.
- `aot_fft_thunk_{kind}_{precision}` (ir.abi_slots.FFT_THUNK): aot.fft's eager fast path, the
  kernel call and its real pre/post pass from one prepared block and two arrays.
- `aot_jit_parallel_for` (ir.abi_slots.SHARED_PARALLEL_FOR): the JIT process's thread pool, which
  every compiled graph's kernels run on (codegen/kernels/parallel.py).
- the blocks module (ir.abi_slots.BLOCKS_MODULE, codegen/block_cache.py): the large-block cache's
  numpy memory handler and compiled graphs' buffer allocator (runtime/blocks.py).

runtime (which may not import codegen) gets them through `HELPERS`, handed to it by the aot layer:
`HELPERS.ir(name, params)` is the module's text, `HELPERS.digest` part of the key under which
runtime caches the object code on disk, so a warm process loads the objects without importing
llvmlite.ir (the builders import it on first use).
"""
from __future__ import annotations

import functools
import os

from ir import abi_slots as S
from ir.digest import sha256


def array_call_ir(offsets: dict[str, int]) -> str:
    """The module of aot_call_strided for an array struct whose fields (ir.abi_slots.ARRAY_FIELDS)
    are at `offsets` bytes: a METH_FASTCALL builtin's function."""
    return _strided_call_ir(offsets)


def _builtin(table):
    """The module and METH_FASTCALL function `table.symbol(self, args, nargs)` of a trampoline."""
    from llvmlite import ir as L

    from .llvm.types import I64, PTR

    mod = L.Module(name=table.symbol)
    fn = L.Function(mod, L.FunctionType(PTR, [PTR, PTR, I64]), name=table.symbol)
    for arg, name in zip(fn.args, ("self", "args", "nargs"), strict=True):
        arg.name = name
    return mod, fn


def _accessors(b, offsets: dict[str, int], this):
    """(c, field, slot, ctx) for a trampoline built with `b`: an i64 constant, an array struct's
    field at its probed offset, ctx[index], and ctx itself (self: the int64 ndarray holding the
    context block)."""
    from llvmlite import ir as L

    from .llvm.types import I64, PTR

    def c(v: int):
        return L.Constant(I64, v)

    def field(o, name, typ):
        return b.load(b.gep(o, [c(offsets[name])], source_etype=L.IntType(8)), typ=typ, name=name)

    ctx = field(this, "data", PTR)

    def slot(index, typ=I64, name=""):
        index = index if isinstance(index, L.Value) else c(index)
        return b.load(b.gep(ctx, [index], source_etype=I64), typ=typ, name=name)

    return c, field, slot, ctx


def _aligned(b, flags):
    from llvmlite import ir as L

    from .llvm.types import I32

    return b.icmp_signed("!=", b.and_(flags, L.Constant(I32, S.NPY_ARRAY_ALIGNED)), L.Constant(I32, 0))


def _c_contiguous(b, flags):
    from llvmlite import ir as L

    from .llvm.types import I32

    return b.icmp_signed("!=", b.and_(flags, L.Constant(I32, S.NPY_ARRAY_C_CONTIGUOUS)), L.Constant(I32, 0))


def _call_entry(b, fn, slot, H, entry, data, meta, work):
    """entry(data, meta), with the GIL released when the work is large enough to let other threads
    run; returns the i32 status (the builder ends after the call)."""
    from llvmlite import ir as L

    from .kernels.parallel import as_callee
    from .llvm.types import I32, PTR

    entry_type = L.FunctionType(I32, [PTR, PTR])
    release, hold, done = (fn.append_basic_block(n) for n in ("release", "hold", "called"))
    save = slot(H.save_thread, PTR, "save")
    big = b.icmp_signed(">=", work, slot(H.gil_elements, name="gil_elements"))
    b.cbranch(b.and_(b.icmp_unsigned("!=", save, L.Constant(PTR, None)), big), release, hold)
    b.position_at_end(release)
    state = b.call(as_callee(save, L.FunctionType(PTR, [])), [], name="state")
    rc_free = b.call(as_callee(entry, entry_type), [data, meta], name="rc_free")
    b.call(as_callee(slot(H.restore_thread, PTR), L.FunctionType(L.VoidType(), [PTR])), [state])
    b.branch(done)
    b.position_at_end(hold)
    rc_held = b.call(as_callee(entry, entry_type), [data, meta], name="rc_held")
    b.branch(done)
    b.position_at_end(done)
    rc = b.phi(I32, "rc")
    rc.add_incoming(rc_free, release)
    rc.add_incoming(rc_held, hold)
    return rc


def _strided_call_ir(offsets: dict[str, int]) -> str:
    """aot_call_strided (ir.abi_slots.STRIDED_CALL and its plan): inputs checked against their
    records and dim rows, outputs made (or taken), the entry called, the outputs returned."""
    from llvmlite import ir as L

    from .block_cache import new_array as new_array_call
    from .kernels.parallel import as_callee
    from .llvm.builder import Builder, module_text
    from .llvm.loops import alloca, for_range
    from .llvm.types import I32, I64, PTR

    table, P, D = S.STRIDED_CALL, S.STRIDED_PLAN, S.STRIDED_DIM
    H, F = table.header, table.fields
    mod, fn = _builtin(table)
    this, objs, nargs = fn.args
    b = Builder(fn.append_basic_block("entry"))
    none_block = fn.append_basic_block("none")  # not ours: return None (the caller's general path)
    null = L.Constant(PTR, None)
    c, field, slot, _ = _accessors(b, offsets, this)

    def at(p, index, typ=I64):  # &p[index] of an i64 / ptr array
        return b.gep(p, [index], source_etype=typ)

    def load(p, typ=I64):
        return b.load(p, typ=typ)

    n, n_in = slot(H.n_objects, name="n"), slot(H.n_inputs, name="nin")
    plan = b.add(c(len(H)), b.mul(n, c(len(F))), name="plan")  # after the records

    def capi(name, ret, args, values, var_arg=False):  # a C API function of the plan
        ftype = L.FunctionType(ret, args, var_arg=var_arg)
        return b.call(as_callee(slot(b.add(plan, c(getattr(P, name))), PTR), ftype), values)

    def release(lo, hi):  # Py_DecRef(outs[lo:hi])
        with for_range(b, lo, hi, name="drop") as j:
            capi("decref", L.VoidType(), [PTR], [load(at(outs, j, PTR), PTR)])

    def require(cond):  # continue when cond holds, else return None
        ok = fn.append_basic_block("ok")
        b.cbranch(cond, ok, none_block)
        b.position_at_end(ok)

    alloc = b.icmp_signed("!=", slot(b.add(plan, c(P.alloc))), c(0), name="alloc")
    data, outs = alloca(b, PTR, n, name="data"), alloca(b, PTR, n, name="outs")
    meta = alloca(b, I64, slot(H.n_meta), name="meta")
    rows, mpos, work, size, made = (alloca(b, I64, name=x) for x in ("rows", "mpos", "work", "size", "made"))
    b.store(b.add(plan, c(len(P))), rows)  # the current object's plan row: typenum, then its dims' rows
    b.store(c(0), mpos)  # the current object's dims in meta
    b.store(c(0), work)  # the largest object so far (elements)
    b.store(n_in, made)  # outputs made so far (released when a later one fails)
    b.store(c(0), at(meta, c(0)))  # read (and ignored) by `earlier` for dims without an earlier equal
    require(b.icmp_signed("==", nargs, b.select(alloc, n_in, n)))
    ndarray_type = slot(H.ndarray_type, name="type")

    def finish_object(i, o, nd, rec, read_dims: bool):
        """meta: the object's dims (when `read_dims`) and strides in elements (not a multiple of the
        itemsize: None); its data pointer; the work, meta and plan positions move on."""
        base, itemsize = load(mpos), slot(b.add(rec, c(F.itemsize)))
        dims, strides = field(o, "dims", PTR), field(o, "strides", PTR)
        b.store(c(1), size)
        with for_range(b, c(0), nd, name="s") as k:
            dk, sk = load(at(dims, k)), load(at(strides, k))
            require(b.icmp_signed("==", b.srem(sk, itemsize), c(0)))
            if read_dims:
                b.store(dk, at(meta, b.add(base, k)))
            b.store(b.sdiv(sk, itemsize), at(meta, b.add(b.add(base, nd), k)))
            b.store(b.mul(load(size), dk), size)
        total, w = load(size), load(work)
        b.store(b.select(b.icmp_signed(">", total, w), total, w), work)
        b.store(b.add(base, b.mul(nd, c(2))), mpos)
        b.store(b.add(load(rows), b.add(c(1), b.mul(nd, c(len(D))))), rows)
        b.store(field(o, "data", PTR), at(data, i, PTR))

    def dim_row(k, name):  # the plan's `name` slot for dim k of the current object
        return slot(b.add(b.add(load(rows), c(1)), b.add(b.mul(k, c(len(D))), c(getattr(D, name)))))

    def earlier(same):  # meta[same] (meta[0] when same < 0: a value that is then unused)
        return load(at(meta, b.select(b.icmp_signed("<", same, c(0)), c(0), same)))

    # inputs: type, descr, rank, alignment, each dim against its row, strides
    with for_range(b, c(0), n_in, name="in") as i:
        o = load(at(objs, i, PTR), PTR)
        rec = b.add(c(len(H)), b.mul(i, c(len(F))))
        require(b.icmp_signed("==", field(o, "type", I64), ndarray_type))
        nd = b.sext(field(o, "nd", I32), I64, name="nd")
        flags = field(o, "flags", I32)
        require(b.and_(b.and_(b.icmp_signed("==", field(o, "descr", I64), slot(b.add(rec, c(F.descr)))),
                              b.icmp_signed("==", nd, slot(b.add(rec, c(F.rank))))),
                       _aligned(b, flags)))
        require(b.or_(b.icmp_signed("==", slot(b.add(rec, c(F.contiguous))), c(0)), _c_contiguous(b, flags)))
        dims, base = field(o, "dims", PTR), load(mpos)
        with for_range(b, c(0), nd, name="d") as k:
            dk, same = load(at(dims, k)), dim_row(k, "same")
            lo, hi = dim_row(k, "lo"), dim_row(k, "hi")
            bounded = b.and_(b.icmp_signed("<=", lo, dk), b.icmp_signed("<=", dk, hi))
            equal = b.or_(b.icmp_signed("<", same, c(0)), b.icmp_signed("==", earlier(same), dk))
            require(b.and_(bounded, equal))
            b.store(dk, at(meta, b.add(base, k)))
        finish_object(i, o, nd, rec, read_dims=False)

    # outputs: made here from their rows (alloc), or the caller's arrays after the inputs
    new_array = [PTR, I32, PTR, I32, PTR, PTR, I32, I32, PTR]  # numpy's PyArray_New
    with for_range(b, n_in, n, name="out") as j:
        rec = b.add(c(len(H)), b.mul(j, c(len(F))))
        nd = slot(b.add(rec, c(F.rank)), name="ond")
        given, make, ready = (fn.append_basic_block(x) for x in ("given", "make", "ready"))
        b.cbranch(alloc, make, given)
        b.position_at_end(make)
        base = load(mpos)
        b.store(slot(b.add(rec, c(F.itemsize))), size)  # the output's bytes
        with for_range(b, c(0), nd, name="od") as k:
            same = dim_row(k, "same")
            dk = b.select(b.icmp_signed("<", same, c(0)), dim_row(k, "lo"), earlier(same))
            b.store(dk, at(meta, b.add(base, k)))
            b.store(b.mul(load(size), dk), size)
        typenum = b.trunc(slot(load(rows)), I32)
        zero = L.Constant(I32, 0)
        made_o = new_array_call(
            b, fn, as_callee(slot(b.add(plan, c(P.new_array)), PTR), L.FunctionType(PTR, new_array)),
            [b.inttoptr(ndarray_type, PTR), b.trunc(nd, I32), at(meta, base), typenum, null, null, zero, zero, null],
            load(size), *(slot(b.add(plan, c(getattr(P, x))), *t) for x, *t in
                          (("set_handler", PTR), ("handler",), ("handler_bytes",), ("decref", PTR))))
        failed, fine = fn.append_basic_block("alloc_failed"), fn.append_basic_block("made")
        b.cbranch(b.icmp_unsigned("==", made_o, null), failed, fine)
        b.position_at_end(failed)  # numpy raised (MemoryError): drop the outputs made so far, raise it
        release(n_in, load(made))
        b.ret(null)
        b.position_at_end(fine)
        b.store(b.add(j, c(1)), made)
        b.branch(ready)
        b.position_at_end(given)
        given_o = load(at(objs, j, PTR), PTR)
        b.branch(ready)
        b.position_at_end(ready)
        o = b.phi(PTR, "out_obj")
        o.add_incoming(made_o, fine)
        o.add_incoming(given_o, given)
        b.store(o, at(outs, j, PTR))
        finish_object(j, o, nd, rec, read_dims=True)  # (a made output's strides always divide)

    rc = _call_entry(b, fn, slot, H, slot(H.entry, PTR, "fn"), data, meta, load(work))
    failed, succeeded = fn.append_basic_block("failed"), fn.append_basic_block("succeeded")
    b.cbranch(b.icmp_signed("!=", rc, L.Constant(I32, 0)), failed, succeeded)

    b.position_at_end(failed)  # fail(rc) raises the status' exception: NULL, which the builtin returns
    with b.if_then(alloc):
        release(n_in, n)
    code = b.call(as_callee(slot(H.py_long, PTR), L.FunctionType(PTR, [I64])), [b.sext(rc, I64)])
    raised = capi("call_fail", PTR, [PTR], [slot(b.add(plan, c(P.fail)), PTR), code, null], var_arg=True)
    capi("decref", L.VoidType(), [PTR], [code])
    b.ret(raised)

    b.position_at_end(succeeded)
    with b.if_then(b.not_(alloc)):  # the caller's outputs are returned too: one more reference each
        with for_range(b, n_in, n, name="ref") as j:
            capi("incref", L.VoidType(), [PTR], [load(at(outs, j, PTR), PTR)])
    one, many = fn.append_basic_block("one"), fn.append_basic_block("many")
    b.cbranch(b.icmp_signed("!=", slot(b.add(plan, c(P.unwrap))), c(0)), one, many)
    b.position_at_end(one)
    b.ret(load(at(outs, n_in, PTR), PTR))
    b.position_at_end(many)
    tup = capi("tuple_new", PTR, [I64], [b.sub(n, n_in)])
    with b.if_then(b.icmp_unsigned("==", tup, null)):
        release(n_in, n)
        b.ret(null)
    with for_range(b, n_in, n, name="t") as j:  # PyTuple_SetItem steals the reference
        capi("tuple_set", I32, [PTR, I64, PTR], [tup, b.sub(j, n_in), load(at(outs, j, PTR), PTR)])
    b.ret(tup)

    b.position_at_end(none_block)
    none = slot(b.add(plan, c(P.none)), PTR)
    capi("incref", L.VoidType(), [PTR], [none])
    b.ret(none)
    return module_text(mod)


def fft_thunks_ir(precision: str, offsets: dict[str, int]) -> str:
    """The module of aot_fft_thunk_{c2c,r2c,c2r,job}_{precision} (ir.abi_slots.FFT_THUNK) and of
    aot_fft_call_{precision} (ir.abi_slots.FFT_CALL_HEADER) for an array struct whose fields
    (ir.abi_slots.ARRAY_FIELDS) are at `offsets` bytes."""
    from llvmlite import ir as L

    from .block_cache import add_block_functions
    from .kernels.parallel import as_callee
    from .llvm.builder import Builder, module_text
    from .llvm.types import F32, F64, I8, I32, I64, PTR, VOID

    T = {"f32": F32, "f64": F64}[precision]
    B = S.FFT_THUNK
    data_offset = offsets["data"]
    mod = L.Module(name=f"aot_fft_thunks_{precision}")
    c2c_type = L.FunctionType(VOID, [PTR, PTR, PTR, PTR, I64, I64, I64, I64, I64, I32, T, PTR])
    post_type = L.FunctionType(VOID, [PTR, I64, I64, I64, PTR, T])  # r2c: (dst, h, rows, odist, roots, scale)
    # c2r: (src, idist, dst, h, h, rows, roots)
    pre_type = L.FunctionType(VOID, [PTR, I64, PTR, I64, I64, I64, PTR])

    for kind in S.FFT_THUNK_KINDS:
        fn = L.Function(mod, L.FunctionType(VOID, [PTR, PTR, PTR]), name=f"aot_fft_thunk_{kind}_{precision}")
        blk, so, do = fn.args
        b = Builder(fn.append_basic_block("entry"))

        def slot(index, typ=I64, b=b, blk=blk):
            return b.load(b.gep(blk, [L.Constant(I64, index)], source_etype=I64), typ=typ)

        def scale(index, b=b, slot=slot):
            v = slot(index, F64)
            return v if T is F64 else b.fptrunc(v, T)

        def pointer(obj, base, offset, b=b, slot=slot):  # the array's data (or the block's base) + offset
            own = b.load(b.gep(obj, [L.Constant(I64, data_offset)], source_etype=I8), typ=PTR)
            given = slot(base, PTR)
            p = b.select(b.icmp_unsigned("==", given, L.Constant(PTR, None)), own, given)
            return b.gep(p, [slot(offset)], source_etype=I8)

        def c2c(src, dst, b=b, slot=slot, scale=scale):
            args = [slot(B.plan, PTR), slot(B.twiddles, PTR), src, dst,
                    *[slot(x) for x in (B.howmany, B.istride, B.idist, B.ostride, B.odist)],
                    b.trunc(slot(B.flags), I32), scale(B.scale), slot(B.scratch, PTR)]
            b.call(as_callee(slot(B.c2c, PTR), c2c_type), args)

        src, dst = pointer(so, B.src_base, B.src_offset), pointer(do, B.dst_base, B.dst_offset)
        if kind == "job":
            job = slot(B.job, PTR)
            for index, p in ((B.job_src, src), (B.job_dst, dst)):
                b.store(p, b.gep(job, [slot(index)], source_etype=I64))
            b.call(as_callee(slot(B.c2c, PTR), L.FunctionType(VOID, [PTR])), [job])
        elif kind == "c2c":
            c2c(src, dst)
        elif kind == "r2c":
            c2c(src, dst)
            b.call(as_callee(slot(B.real_pass, PTR), post_type),
                   [dst, slot(B.h), slot(B.howmany), slot(B.odist), slot(B.roots, PTR), scale(B.real_arg)])
        else:
            h = slot(B.h)
            b.call(as_callee(slot(B.real_pass, PTR), pre_type),
                   [src, slot(B.real_arg), dst, h, h, slot(B.howmany), slot(B.roots, PTR)])
            c2c(dst, dst)
        b.ret_void()
    _fft_call(mod, precision, offsets)
    add_block_functions(mod, f"aot_fft_call_{precision}")  # for runtime/blocks.py (the general path's arrays)
    return module_text(mod)


def _fft_call(mod, precision: str, offsets: dict[str, int]) -> None:
    """aot_fft_call_{precision} in `mod`: find the entry of the one argument (descr, rank, dims,
    strides), make its output, run its thunk calls, return the output; None when no entry fits."""
    from llvmlite import ir as L

    from .kernels.parallel import as_callee
    from .llvm.builder import Builder
    from .llvm.types import I32, I64, PTR

    H, R = S.FFT_CALL_HEADER, S.FFT_CALL_RECORD
    nd_max, dims_at = S.FFT_CALL_DIMS, len(R)
    strides_at, out_at, calls_at = dims_at + nd_max, dims_at + 2 * nd_max, dims_at + 3 * nd_max
    fn = L.Function(mod, L.FunctionType(PTR, [PTR, PTR, I64]), name=f"aot_fft_call_{precision}")
    this, objs, nargs = fn.args
    blocks = {n: fn.append_basic_block(n) for n in (
        "entry", "array", "scan", "record", "dims", "dim", "next", "hit", "made", "call", "nomem", "none")}
    b = Builder(blocks["entry"])
    c, field, slot, ctx = _accessors(b, offsets, this)
    null = L.Constant(PTR, None)

    def at(p, index):
        return b.gep(p, [index if isinstance(index, L.Value) else c(index)], source_etype=I64)

    def load(p, index, typ=I64):
        return b.load(at(p, index), typ=typ)

    b.cbranch(b.icmp_signed("==", nargs, c(1)), blocks["array"], blocks["none"])
    b.position_at_end(blocks["array"])
    a = b.load(objs, typ=PTR, name="a")
    fits = b.and_(b.icmp_signed("==", field(a, "type", I64), slot(H.ndarray_type)),
                  _aligned(b, field(a, "flags", I32)))
    nd = b.sext(field(a, "nd", I32), I64, name="nd")
    descr, dims, strides = field(a, "descr", I64), field(a, "dims", PTR), field(a, "strides", PTR)
    n_entries = slot(H.n_entries, name="n_entries")
    b.cbranch(fits, blocks["scan"], blocks["none"])

    b.position_at_end(blocks["scan"])  # entry e: the first whose descr, rank, dims and strides match
    e = b.phi(I64, "e")
    e.add_incoming(c(0), blocks["array"])
    rec = at(ctx, b.add(c(len(H)), b.mul(e, c(S.FFT_CALL_ROW))))
    same = b.and_(b.icmp_signed("==", load(rec, R.descr), descr), b.icmp_signed("==", load(rec, R.nd), nd))
    b.cbranch(b.and_(b.icmp_signed("<", e, n_entries), same), blocks["record"], blocks["next"])
    b.position_at_end(blocks["record"])
    b.branch(blocks["dims"])
    b.position_at_end(blocks["dims"])
    k = b.phi(I64, "k")
    k.add_incoming(c(0), blocks["record"])
    b.cbranch(b.icmp_signed("<", k, nd), blocks["dim"], blocks["hit"])
    b.position_at_end(blocks["dim"])
    equal = b.and_(b.icmp_signed("==", load(dims, k), load(rec, b.add(k, c(dims_at)))),
                   b.icmp_signed("==", load(strides, k), load(rec, b.add(k, c(strides_at)))))
    k.add_incoming(b.add(k, c(1)), blocks["dim"])
    b.cbranch(equal, blocks["dims"], blocks["next"])
    b.position_at_end(blocks["next"])
    e_next = b.add(e, c(1))
    e.add_incoming(e_next, blocks["next"])
    b.cbranch(b.icmp_signed("<", e_next, n_entries), blocks["scan"], blocks["none"])

    b.position_at_end(blocks["hit"])
    b.store(b.add(slot(H.hits), c(1)), at(ctx, H.hits))
    zero = L.Constant(I32, 0)
    new_array = L.FunctionType(PTR, [PTR, I32, PTR, I32, PTR, PTR, I32, I32, PTR])  # numpy's PyArray_New
    res = b.call(as_callee(slot(H.new_array, PTR), new_array),
                 [b.inttoptr(slot(H.ndarray_type), PTR), b.trunc(load(rec, R.out_nd), I32), at(rec, out_at),
                  b.trunc(load(rec, R.typenum), I32), null, null, zero, zero, null], name="res")
    n_calls = load(rec, R.n_calls)
    b.cbranch(b.icmp_unsigned("==", res, null), blocks["nomem"], blocks["made"])
    b.position_at_end(blocks["made"])
    _widen(b, fn, load(rec, R.convert), load(rec, R.size), field(a, "data", PTR), field(res, "data", PTR))
    widened = b.block
    b.branch(blocks["call"])
    b.position_at_end(blocks["call"])  # the thunk calls, in order: thunk(block, input or output, output)
    j = b.phi(I64, "j")
    j.add_incoming(c(0), widened)
    row = b.add(c(calls_at), b.mul(j, c(3)))
    src = b.select(b.icmp_signed("!=", load(rec, b.add(row, c(2))), c(0)), a, res)
    thunk = L.FunctionType(L.VoidType(), [PTR, PTR, PTR])
    b.call(as_callee(load(rec, row, PTR), thunk), [load(rec, b.add(row, c(1)), PTR), src, res])
    j_next = b.add(j, c(1))
    j.add_incoming(j_next, blocks["call"])
    done = fn.append_basic_block("done")
    b.cbranch(b.icmp_signed("<", j_next, n_calls), blocks["call"], done)
    b.position_at_end(done)
    b.ret(res)

    b.position_at_end(blocks["nomem"])  # numpy set MemoryError
    b.ret(null)
    b.position_at_end(blocks["none"])  # not an entry's array: None (the caller's general path)
    none = slot(H.none, PTR)
    b.call(as_callee(slot(H.incref, PTR), L.FunctionType(L.VoidType(), [PTR])), [none])
    b.ret(none)


def _widen(b, fn, itemsize, size, src, dst) -> None:
    """dst[k] = complex(src[k], 0) for k < size when itemsize is 4 (float32 -> complex64) or 8
    (float64 -> complex128); nothing when it is 0. The builder ends after the loops."""
    from llvmlite import ir as L

    from .llvm.loops import for_range
    from .llvm.types import F32, F64, I64

    done = fn.append_basic_block("widened")
    cases = {4: F32, 8: F64}
    blocks = {w: fn.append_basic_block(f"widen{w}") for w in cases}
    switch = b.switch(itemsize, done)
    for w, block in blocks.items():
        switch.add_case(L.Constant(I64, w), block)
    for w, typ in cases.items():
        b.position_at_end(blocks[w])
        with for_range(b, L.Constant(I64, 0), size, name=f"w{w}") as k:
            v = b.load(b.gep(src, [k], source_etype=typ), typ=typ)
            out = b.gep(dst, [b.mul(k, L.Constant(I64, 2))], source_etype=typ)
            b.store(v, out)
            b.store(L.Constant(typ, 0.0), b.gep(out, [L.Constant(I64, 1)], source_etype=typ))
        b.branch(done)
    b.position_at_end(done)


_HERE = os.path.dirname(os.path.abspath(__file__))  # (os.path: pathlib costs a cold start ~3 ms of imports)
_POOL_SOURCE = os.path.join(_HERE, "kernels", "parallel.py")


def blocks_ir() -> str:
    """The process's blocks module (ir.abi_slots.BLOCKS_MODULE; imports llvmlite.ir: only when its
    object is not cached)."""
    from .block_cache import blocks_ir as build

    return build()


def parallel_pool_ir() -> str:
    """The JIT process's thread pool (imports llvmlite.ir: only when its object is not cached)."""
    from .kernels.parallel import shared_pool_ir

    return shared_pool_ir()


class Helpers:
    """What runtime.jit builds its native helpers from (runtime cannot import codegen): `ir(name,
    params)` is the LLVM IR of helper `name` ("array_call": array_call_ir, "fft_thunks":
    fft_thunks_ir) with keyword `params`; `digest` changes with the sources that generate it."""

    _BUILDERS = {"array_call": array_call_ir, "fft_thunks": fft_thunks_ir, "parallel_pool": parallel_pool_ir,
                 "blocks": blocks_ir}

    def ir(self, name: str, params: dict) -> str:
        return self._BUILDERS[name](**params)

    @functools.cached_property
    def digest(self) -> str:
        h = sha256()
        for path in (__file__, S.__file__, _POOL_SOURCE, os.path.join(_HERE, "block_cache.py")):
            with open(path, "rb") as f:
                h.update(f.read())
        return h.hexdigest()[:32]


HELPERS = Helpers()
