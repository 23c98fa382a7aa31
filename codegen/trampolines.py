"""runtime's native helpers as LLVM IR, built with llvmlite's IRBuilder from ir/abi_slots.py.

- `aot_call_checked` / `aot_call_strided` (ir.abi_slots.CHECKED_CALL / STRIDED_CALL): the hot path
  of a compiled function, as Python builtins (METH_FASTCALL: the interpreter hands over the array
  objects themselves, with no argument conversion); the helper checks the arrays' type, dtype,
  rank, alignment (and, checked, dims and strides) against its context block and calls the entry
  with their data pointers, releasing the GIL around large work.
- `aot_fft_thunk_{kind}_{precision}` (ir.abi_slots.FFT_THUNK): aot.fft's eager fast path, the
  kernel call and its real pre/post pass from one prepared block and two arrays.

runtime (which may not import codegen) gets them through `HELPERS`, handed to it by the aot layer:
`HELPERS.ir(name, params)` is the module's text, `HELPERS.digest` part of the key under which
runtime caches the object code on disk, so a warm process loads the objects without importing
llvmlite.ir (the builders import it on first use).
"""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from ir import abi_slots as S


def array_call_ir(offsets: dict[str, int], strided: bool = False) -> str:
    """The module of aot_call_checked (or, `strided`, aot_call_strided) for an array struct whose
    fields (ir.abi_slots.ARRAY_FIELDS) are at `offsets` bytes: a METH_FASTCALL builtin's function."""
    from llvmlite import ir as L

    from .kernels.parallel import as_callee
    from .llvm.loops import alloca
    from .llvm.types import I1, I32, I64, PTR

    table = S.STRIDED_CALL if strided else S.CHECKED_CALL
    mod = L.Module(name=table.symbol)
    fn = L.Function(mod, L.FunctionType(PTR, [PTR, PTR, I64]), name=table.symbol)
    this, objs, nargs = fn.args
    this.name, objs.name, nargs.name = "self", "args", "nargs"
    blocks = {n: fn.append_basic_block(n) for n in
              ("entry", "setup", "head", "body", "check", "fields", "dims", "khead", "kbody", "knext", "kdone",
               "store", "next", "bad", "call", "release", "hold", "done")}
    b = L.IRBuilder(blocks["entry"])

    def c(v: int):
        return L.Constant(I64, v)

    def field(o, name, typ):  # the array struct's field, at its probed offset
        return b.load(b.gep(o, [c(offsets[name])], source_etype=L.IntType(8)), typ=typ, name=name)

    ctx = field(this, "data", PTR)  # self: the int64 ndarray holding the context block

    def slot(index, typ=I64, name=""):  # ctx[index]
        return b.load(b.gep(ctx, [index if isinstance(index, L.Value) else c(index)], source_etype=I64), typ=typ,
                      name=name)

    def result(rc):  # PyLong_FromLong(rc): the builtin's return value
        return b.call(as_callee(slot(H.py_long, PTR), L.FunctionType(PTR, [I64])), [rc], name="result")

    H, F = table.header, table.fields
    n = slot(H.n_objects, name="n")
    b.cbranch(b.icmp_signed("==", nargs, n), blocks["setup"], blocks["bad"])

    b.position_at_end(blocks["setup"])
    entry = slot(H.entry, PTR, "fn")
    n_meta = slot(H.n_meta, name="n_meta") if strided else None
    data = alloca(b, PTR, n, name="data")
    meta = alloca(b, I64, n_meta, name="meta") if strided else slot(H.meta, PTR, "meta")
    ndarray_type, n_in = slot(H.ndarray_type, name="type"), slot(H.n_inputs, name="nin")
    b.branch(blocks["head"])

    b.position_at_end(blocks["head"])
    i, pos, work = b.phi(I64, "i"), b.phi(I64, "pos"), b.phi(I64, "work")  # work: the largest size so far
    i.add_incoming(c(0), blocks["setup"])
    pos.add_incoming(c(len(H)), blocks["setup"])
    work.add_incoming(c(0), blocks["setup"])
    if strided:
        mpos = b.phi(I64, "mpos")
        mpos.add_incoming(c(0), blocks["setup"])
    b.cbranch(b.icmp_signed("<", i, n), blocks["body"], blocks["call"])

    b.position_at_end(blocks["body"])
    o = b.load(b.gep(objs, [i], source_etype=PTR), typ=PTR, name="o")
    is_input = b.icmp_signed("<", i, n_in)
    if strided:  # every object is checked
        b.branch(blocks["check"])
    else:  # outputs (allocated by the caller) only give their data pointer
        b.cbranch(is_input, blocks["check"], blocks["store"])

    b.position_at_end(blocks["check"])
    type_ok = b.icmp_signed("==", field(o, "type", I64), ndarray_type)
    want_descr = slot(b.add(pos, c(F.descr)), name="wdesc")
    want_rank = slot(b.add(pos, c(F.rank)), name="wnd")
    itemsize = slot(b.add(pos, c(F.itemsize)), name="isz") if strided else None
    b.cbranch(type_ok, blocks["fields"], blocks["bad"])

    b.position_at_end(blocks["fields"])
    descr_ok = b.icmp_signed("==", field(o, "descr", I64), want_descr)
    if strided:  # outputs: any descr (their records hold 0)
        descr_ok = b.select(is_input, descr_ok, L.Constant(I1, 1))
    nd = b.sext(field(o, "nd", I32), I64, name="nd")
    aligned = b.icmp_signed("!=", b.and_(field(o, "flags", I32), L.Constant(I32, S.NPY_ARRAY_ALIGNED)),
                            L.Constant(I32, 0))
    ok = b.and_(b.and_(descr_ok, b.icmp_signed("==", nd, want_rank)), aligned)
    b.cbranch(ok, blocks["dims"], blocks["bad"])

    b.position_at_end(blocks["dims"])
    dims, strides = field(o, "dims", PTR), field(o, "strides", PTR)
    base = None if strided else b.add(pos, c(len(F)), name="base")  # the record's dims, then strides
    b.branch(blocks["khead"])

    b.position_at_end(blocks["khead"])
    k, size = b.phi(I64, "k"), b.phi(I64, "size")
    k.add_incoming(c(0), blocks["dims"])
    size.add_incoming(c(1), blocks["dims"])
    b.cbranch(b.icmp_signed("<", k, nd), blocks["kbody"], blocks["kdone"])

    b.position_at_end(blocks["kbody"])
    dk = b.load(b.gep(dims, [k], source_etype=I64), typ=I64, name="dk")
    sk = b.load(b.gep(strides, [k], source_etype=I64), typ=I64, name="sk")
    if strided:  # meta: dims, then strides in elements
        b.store(dk, b.gep(meta, [b.add(mpos, k)], source_etype=I64))
        q, r = b.sdiv(sk, itemsize), b.srem(sk, itemsize)
        b.cbranch(b.icmp_signed("==", r, c(0)), blocks["knext"], blocks["bad"])
        b.position_at_end(blocks["knext"])
        b.store(q, b.gep(meta, [b.add(b.add(mpos, nd), k)], source_etype=I64))
    else:  # dims and byte strides equal the record's
        ik = b.add(base, k)
        same = b.and_(b.icmp_signed("==", dk, slot(ik, name="wk")),
                      b.icmp_signed("==", sk, slot(b.add(ik, nd), name="ws")))
        b.cbranch(same, blocks["knext"], blocks["bad"])
        b.position_at_end(blocks["knext"])
    k.add_incoming(b.add(k, c(1), name="k1"), blocks["knext"])
    size.add_incoming(b.mul(size, dk, name="size1"), blocks["knext"])
    b.branch(blocks["khead"])

    b.position_at_end(blocks["kdone"])
    larger = b.select(b.icmp_signed(">", size, work), size, work, name="larger")
    if strided:
        b.branch(blocks["store"])
        b.position_at_end(blocks["store"])
        next_pos, next_work = b.add(pos, c(len(F))), larger
        mpos.add_incoming(b.add(mpos, b.mul(nd, c(2))), blocks["next"])
    else:
        after = b.add(base, b.mul(nd, c(2)), name="posc")
        b.branch(blocks["store"])
        b.position_at_end(blocks["store"])
        next_pos, next_work = b.phi(I64, "pos1"), b.phi(I64, "work1")
        next_pos.add_incoming(pos, blocks["body"])
        next_pos.add_incoming(after, blocks["kdone"])
        next_work.add_incoming(work, blocks["body"])
        next_work.add_incoming(larger, blocks["kdone"])
    b.store(field(o, "data", PTR), b.gep(data, [i], source_etype=PTR))
    b.branch(blocks["next"])

    b.position_at_end(blocks["next"])
    i.add_incoming(b.add(i, c(1), name="i1"), blocks["next"])
    pos.add_incoming(next_pos, blocks["next"])
    work.add_incoming(next_work, blocks["next"])
    b.branch(blocks["head"])

    b.position_at_end(blocks["bad"])
    b.ret(result(c(-1)))

    # the entry, with the GIL released when the work is large enough to let other threads run
    b.position_at_end(blocks["call"])
    entry_type = L.FunctionType(I32, [PTR, PTR])
    save = slot(H.save_thread, PTR, "save")
    big = b.icmp_signed(">=", work, slot(H.gil_elements, name="gil_elements"))
    release = b.and_(b.icmp_unsigned("!=", save, L.Constant(PTR, None)), big)
    b.cbranch(release, blocks["release"], blocks["hold"])
    b.position_at_end(blocks["release"])
    state = b.call(as_callee(save, L.FunctionType(PTR, [])), [], name="state")
    rc_free = b.call(as_callee(entry, entry_type), [data, meta], name="rc_free")
    b.call(as_callee(slot(H.restore_thread, PTR), L.FunctionType(L.VoidType(), [PTR])), [state])
    b.branch(blocks["done"])
    b.position_at_end(blocks["hold"])
    rc_held = b.call(as_callee(entry, entry_type), [data, meta], name="rc_held")
    b.branch(blocks["done"])
    b.position_at_end(blocks["done"])
    rc = b.phi(I32, "rc")
    rc.add_incoming(rc_free, blocks["release"])
    rc.add_incoming(rc_held, blocks["hold"])
    b.ret(result(b.sext(rc, I64)))
    return str(mod)


def fft_thunks_ir(precision: str, data_offset: int) -> str:
    """The module of aot_fft_thunk_{c2c,r2c,c2r}_{precision} (ir.abi_slots.FFT_THUNK) for arrays
    whose data pointer is at `data_offset` bytes."""
    from llvmlite import ir as L

    from .kernels.parallel import as_callee
    from .llvm.types import F32, F64, I8, I32, I64, PTR, VOID

    T = {"f32": F32, "f64": F64}[precision]
    B = S.FFT_THUNK
    mod = L.Module(name=f"aot_fft_thunks_{precision}")
    c2c_type = L.FunctionType(VOID, [PTR, PTR, PTR, PTR, I64, I64, I64, I64, I64, I32, T, PTR])
    post_type = L.FunctionType(VOID, [PTR, I64, I64, I64, PTR, T])  # r2c: (dst, h, rows, odist, roots, scale)
    # c2r: (src, idist, dst, h, h, rows, roots)
    pre_type = L.FunctionType(VOID, [PTR, I64, PTR, I64, I64, I64, PTR])

    for kind in S.FFT_THUNK_KINDS:
        fn = L.Function(mod, L.FunctionType(VOID, [PTR, PTR, PTR]), name=f"aot_fft_thunk_{kind}_{precision}")
        blk, so, do = fn.args
        b = L.IRBuilder(fn.append_basic_block("entry"))

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
        if kind == "c2c":
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
    return str(mod)


class Helpers:
    """What runtime.jit builds its native helpers from (runtime cannot import codegen): `ir(name,
    params)` is the LLVM IR of helper `name` ("array_call": array_call_ir, "fft_thunks":
    fft_thunks_ir) with keyword `params`; `digest` changes with the sources that generate it."""

    _BUILDERS = {"array_call": array_call_ir, "fft_thunks": fft_thunks_ir}

    def ir(self, name: str, params: dict) -> str:
        return self._BUILDERS[name](**params)

    @functools.cached_property
    def digest(self) -> str:
        h = hashlib.sha256()
        for path in (Path(__file__), Path(S.__file__)):
            h.update(path.read_bytes())
        return h.hexdigest()[:32]


HELPERS = Helpers()
