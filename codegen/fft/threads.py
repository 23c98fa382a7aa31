"""One long transform's passes, and the real pass of one long row, shared by the threads of a pool
(group ("threads",)):

    void aot_fft_shared_{p}(const int64_t *plan, const T *tw, const T *src, T *dst, T *buf,
                            int32_t flags, int64_t nthreads)

runs pass f of the plan for every f, each split over `nthreads` with kernels/parallel.py's
parallel_for (its own pool: the group is a shared library), whose return is the barrier before
the next pass. A pass runs over k (l1 > 1) or over i, as the pass entry (module.py) allows, in
chunks of VLEN: its wide passes vectorise from the start of a range, so every element is computed
by the same code whichever chunk holds it and the result does not depend on nthreads, bit for
bit. Passes alternate between the two halves of `buf` (4n reals); the first reads src, the last
writes dst.

    void aot_fft_r2c_post_shared_{p}(T *x, int64_t h, const T *w, T scale, int64_t nthreads)
    void aot_fft_c2r_pre_shared_{p}(const T *x, T *z, int64_t h, const T *w, int64_t nthreads)

    void aot_fft_c2c_split_{p}(const int64_t *job)

runs the c2c entry (module.py) on batches split over the pool's threads; job is names.C2C_JOB's
int64 words (the scale's bits in `scale`): `tasks` batches, batch t of `howmany` transforms at
src + t*tsrc and dst + t*tdst (complex elements). With at least as many batches as threads each
thread takes whole batches, else each batch is split over the threads in chunks of whole lane
groups (a multiple of VLEN: no transform changes code path, so results do not depend on the thread
count). Chunk i uses scratch + i*scratch_values.

    void aot_fft_four_step_{p}(const int64_t *job)

one transform of length m1 * m2 in four steps (plan.py's four_step_split; job: names.FOUR_STEP_JOB;
hdr1/tw1 and hdr2/tw2: the plans of lengths m1 and m2): fourstep.py's twiddled columns from src
into `work` (n complex), split over the threads in whole lane blocks; then fourstep.py's rows_t
from work into dst, times `scale`, in whole VLEN rows. Without a work array (work == 0; m1 == m2)
the columns go into dst, the c2c entry transforms its rows in place (times `scale`) and
fourstep.py's transpose finishes in place. The pool's join between passes; chunk i of a pass uses
scratch + i*region values. With nthreads <= 1 everything runs here.

    void aot_fft_halves_{p}(const int64_t *job)

one transform of length 2h as two of length h (job: names.HALVES_JOB; hdr/tw: the plan of h):
fourstep.py's unzip2 moves src's even and odd elements into dst's halves, the c2c entry transforms
each half in place, one a thread (half t uses scratch + t*region values), and fourstep.py's
combine2 finishes in place; the unzipping and the combining split over the threads in whole VLEN.
Each half fits the caches where the whole transform's passes would not. src must not be dst.

    void aot_fft_planes_{p}(const int64_t *job)

the last two axes of an n-D transform plane by plane (job: names.PLANES_JOB): plane t of src (at
src + t*sdist, n1 rows of n2 contiguous elements) transforms along its rows into dst's plane t
(dst + t*ddist), then along its columns in place, both with the c2c entry, while the plane is in
the caches: one pass over memory for two axes. Whole planes a thread (chunk i uses scratch +
i*region values); each row and column runs the code the axis-by-axis passes run, so the bits are
theirs.

    void aot_fft_r2c_post_shared_{p}(...), aot_fft_c2r_pre_shared_{p}(...)

run real.py's pass on one row (of h + 1 complex values: r2c in place, c2r from x into z) split
over nthreads in parts of VLEN pairs (real.py's *_part functions), again bit for bit the result of
the whole row's loop.
"""
from __future__ import annotations

from llvmlite import ir as L

from ..kernels.common import new_kernel
from ..kernels.parallel import parallel_for
from ..llvm.builder import Builder
from ..llvm.loops import alloca
from .layouts import I32, I64, PTR, for_range, i64
from .names import (
    C2C_JOB,
    FOUR_STEP_JOB,
    HALVES_JOB,
    LANE_BLOCK,
    PLANES_JOB,
    four_step_name,
    halves_name,
    planes_name,
    shared_name,
    split_name,
)
from .plan import HEADER_FIELDS
from .real import emit_c2r_pre_part, emit_r2c_post_part

# module.py's emit_pass_entry: (plan, tw, f, src, dst, lo, hi, flags)
PASS_ENTRY_TYPE = L.FunctionType(L.VoidType(), [PTR, PTR, I64, PTR, PTR, I64, I64, I32])
_ARGS = ("hdr", "tw", "f", "src", "dst", "flags")  # the chunk kernel's argument block (i64 slots)
_SPLIT = C2C_JOB + ("chunk", "by_task", "task")  # the job, then the chunk kernel's own words


def _job_driver(mod: L.Module, name: str, job_fields: tuple, fields: tuple):
    """void name(const int64_t *job): (fn, builder, args, slots) with the job's words copied into
    `args`, the chunk kernels' block of `fields` (the job's, then their own)."""
    fn = L.Function(mod, L.FunctionType(L.VoidType(), [PTR]), name=name)
    (job,) = fn.args
    b = Builder(fn.append_basic_block("entry"))
    args = alloca(b, I64, len(fields), name="args")
    slot = {f: b.gep(args, [i64(i)], source_etype=I64) for i, f in enumerate(fields)}
    for i, f in enumerate(job_fields):
        b.store(b.load(b.gep(job, [i64(i)], source_etype=I64), typ=I64), slot[f])
    return fn, b, args, slot


class _Words:
    """A chunk kernel's view of its argument block: the i64 words of `fields` by name, as integers,
    pointers (moved by `values` of T) or the scale doubles' bits as T."""

    def __init__(self, b, args, fields: tuple, ft: L.Type):
        self.b, self.args, self.fields, self.ft = b, args, fields, ft

    def get(self, name: str):
        return self.b.load(self.b.gep(self.args, [i64(self.fields.index(name))], source_etype=I64), typ=I64)

    def ptr(self, name: str, values=None):
        p = self.b.inttoptr(self.get(name), PTR)
        return p if values is None else self.b.gep(p, [values], source_etype=self.ft)

    def scale(self, name: str = "scale"):
        v = self.b.bitcast(self.get(name), L.DoubleType())
        return v if isinstance(self.ft, L.DoubleType) else self.b.fptrunc(v, self.ft)


def _over_threads(b, pfor, kern, args, total, nthreads, unit: int, chunk_slot=None) -> None:
    """kern(args, lo, hi) over [0, total): on parallel_for's pool in chunks of ceil(total /
    nthreads) whole `unit`s (stored in chunk_slot, where chunk kernels find their scratch region
    as lo / chunk) when nthreads > 1, else here in one call."""
    nthreads = b.select(b.icmp_signed("<", nthreads, i64(1)), i64(1), nthreads)
    chunk = b.sdiv(b.sub(b.add(total, nthreads), i64(1)), nthreads)
    chunk = b.mul(b.sdiv(b.add(chunk, i64(unit - 1)), i64(unit)), i64(unit))
    if chunk_slot is not None:
        b.store(chunk, chunk_slot)
    with b.if_else(b.icmp_signed(">", nthreads, i64(1))) as (pool, here):
        with pool:  # the chunk as the alignment: parallel_for cuts the same chunks
            b.call(pfor, [kern, args, total, nthreads, chunk])
        with here:
            b.call(kern, [args, i64(0), total])


def emit_c2c_split(mod: L.Module, precision: str, vlen: int, c2c: L.Function) -> L.Function:
    ft = L.FloatType() if precision == "f32" else L.DoubleType()
    pfor = parallel_for(mod, join_at_unload=True, delegates=False)
    kern = _split_chunk(mod, precision, ft, c2c)
    fn, b, args, slot = _job_driver(mod, split_name(precision), C2C_JOB, _SPLIT)
    get = {name: b.load(slot[name], typ=I64) for name in ("howmany", "tasks", "nthreads")}
    nthreads = b.select(b.icmp_signed("<", get["nthreads"], i64(1)), i64(1), get["nthreads"])
    by_task = b.icmp_signed(">=", get["tasks"], nthreads)
    b.store(b.zext(by_task, I64), slot["by_task"])
    with b.if_else(by_task) as (tasks, rows):
        with tasks:  # whole batches a thread: chunk ceil(tasks / nthreads)
            chunk = b.sdiv(b.sub(b.add(get["tasks"], nthreads), i64(1)), nthreads)
            b.store(chunk, slot["chunk"])
            b.call(pfor, [kern, args, get["tasks"], nthreads, chunk])
        with rows:  # each batch over the threads: chunk ceil(howmany / nthreads) in whole lane groups
            chunk = b.sdiv(b.sub(b.add(get["howmany"], nthreads), i64(1)), nthreads)
            chunk = b.mul(b.sdiv(b.add(chunk, i64(vlen - 1)), i64(vlen)), i64(vlen))
            b.store(chunk, slot["chunk"])
            with for_range(b, 0, get["tasks"], name="t", unroll=False) as t:
                b.store(t, slot["task"])
                b.call(pfor, [kern, args, get["howmany"], nthreads, chunk])
    b.ret_void()
    return fn


def _split_chunk(mod: L.Module, precision: str, ft: L.Type, c2c: L.Function) -> L.Function:
    """kernel(args, lo, hi): batches lo..hi (by_task), or transforms lo..hi of batch `task`."""
    fn, b = new_kernel(mod, f"aot_fft_c2c_split_chunk_{precision}")
    args, lo, hi = fn.args

    def get(name):
        return b.load(b.gep(args, [i64(_SPLIT.index(name))], source_etype=I64), typ=I64)

    def at(name, elements):  # a complex array's pointer moved by `elements`
        return b.gep(b.inttoptr(get(name), PTR), [b.shl(elements, i64(1))], source_etype=ft)

    scale = b.bitcast(get("scale"), L.DoubleType())
    scale = scale if precision == "f64" else b.fptrunc(scale, ft)
    region = b.mul(b.sdiv(lo, get("chunk")), get("scratch_values"))
    scratch = b.gep(b.inttoptr(get("scratch"), PTR), [region], source_etype=ft)
    fixed = [b.inttoptr(get("hdr"), PTR), b.inttoptr(get("tw"), PTR)]
    strides = [get(name) for name in ("istride", "idist", "ostride", "odist")]
    flags = b.trunc(get("flags"), I32)
    with b.if_else(b.icmp_signed("!=", get("by_task"), i64(0))) as (tasks, rows):
        with tasks, for_range(b, lo, hi, name="t", unroll=False) as t:
            b.call(c2c, fixed + [at("src", b.mul(t, get("tsrc"))), at("dst", b.mul(t, get("tdst"))), get("howmany"),
                                 *strides, flags, scale, scratch])
        with rows:
            task = get("task")
            src = at("src", b.add(b.mul(task, get("tsrc")), b.mul(lo, strides[1])))
            dst = at("dst", b.add(b.mul(task, get("tdst")), b.mul(lo, strides[3])))
            b.call(c2c, fixed + [src, dst, b.sub(hi, lo), *strides, flags, scale, scratch])
    b.ret_void()
    return fn


def emit_shared(mod: L.Module, precision: str, vlen: int, pass_entry: L.Function) -> L.Function:
    pfor = parallel_for(mod, join_at_unload=True, delegates=False)
    chunk = _chunk_kernel(mod, precision, pass_entry)
    real = L.FloatType() if precision == "f32" else L.DoubleType()
    fnty = L.FunctionType(L.VoidType(), [PTR, PTR, PTR, PTR, PTR, I32, I64])
    fn = L.Function(mod, fnty, name=shared_name(precision))
    hdr, tw, src, dst, buf, flags, nthreads = fn.args
    b = Builder(fn.append_basic_block("entry"))
    args = alloca(b, I64, len(_ARGS), name="args")

    def put(name, value):
        v = b.ptrtoint(value, I64) if value.type == PTR else value
        b.store(v, b.gep(args, [i64(_ARGS.index(name))], source_etype=I64))

    n = b.load(hdr, typ=I64)
    nf = b.load(b.gep(hdr, [i64(1)], source_etype=I64), typ=I64)
    halves = (buf, b.gep(buf, [b.mul(n, i64(2))], source_etype=real))
    put("hdr", hdr)
    put("tw", tw)
    put("flags", b.sext(flags, I64))
    cur = alloca(b, PTR, name="cur")
    b.store(src, cur)
    with for_range(b, 0, nf, name="f", unroll=False) as f:
        row = b.gep(hdr, [b.add(i64(2), b.mul(f, i64(HEADER_FIELDS)))], source_etype=I64)
        l1 = b.load(b.gep(row, [i64(1)], source_etype=I64), typ=I64)
        ido = b.load(b.gep(row, [i64(2)], source_etype=I64), typ=I64)
        last = b.icmp_signed("==", f, b.sub(nf, i64(1)))
        even = b.icmp_signed("==", b.and_(f, i64(1)), i64(0))
        out = b.select(last, dst, b.select(even, halves[0], halves[1]))
        total = b.select(b.icmp_signed(">", l1, i64(1)), l1, ido)
        put("f", f)
        put("src", b.load(cur, typ=PTR))
        put("dst", out)
        b.call(pfor, [chunk, args, total, nthreads, i64(vlen)])
        b.store(out, cur)
    b.ret_void()
    return fn


def _chunk_kernel(mod: L.Module, precision: str, pass_entry: L.Function) -> L.Function:
    """kernel(args, lo, hi): pass args.f over [lo, hi)."""
    fn, b = new_kernel(mod, f"aot_fft_shared_chunk_{precision}")
    args, lo, hi = fn.args

    def get(name, typ=I64):
        v = b.load(b.gep(args, [i64(_ARGS.index(name))], source_etype=I64), typ=I64)
        return b.inttoptr(v, PTR) if typ == PTR else v

    b.call(pass_entry, [get("hdr", PTR), get("tw", PTR), get("f"), get("src", PTR), get("dst", PTR), lo, hi,
                        b.trunc(get("flags"), I32)])
    b.ret_void()
    return fn


_REAL_ARGS = ("x", "z", "h", "w", "scale")  # the real chunk kernels' argument block


def emit_real_shared(mod: L.Module, precision: str, vlen: int) -> None:
    ft = L.FloatType() if precision == "f32" else L.DoubleType()
    pfor = parallel_for(mod, join_at_unload=True, delegates=False)
    post, pre = emit_r2c_post_part(mod, precision, ft, vlen), emit_c2r_pre_part(mod, precision, ft, vlen)

    def chunk(name, call):
        fn, b = new_kernel(mod, f"{name}.chunk")
        args, lo, hi = fn.args

        def get(field, typ=I64):
            v = b.load(b.gep(args, [i64(_REAL_ARGS.index(field))], source_etype=I64), typ=I64)
            return b.inttoptr(v, PTR) if typ == PTR else b.bitcast(v, L.DoubleType()) if typ == "f64" else v

        call(b, get, lo, hi)
        b.ret_void()
        return fn

    def scale_of(b, get):
        s = get("scale", "f64")
        return s if precision == "f64" else b.fptrunc(s, ft)

    post_chunk = chunk("r2c", lambda b, get, lo, hi: b.call(
        post, [get("x", PTR), get("h"), lo, hi, get("w", PTR), scale_of(b, get)]))
    pre_chunk = chunk("c2r", lambda b, get, lo, hi: b.call(
        pre, [get("x", PTR), get("z", PTR), get("h"), lo, hi, get("w", PTR)]))

    def driver(name, params, kernel, fields, total_of):
        """The function `name`: its arguments `fields` (in order; the last is nthreads) into the
        chunk kernel's block, then parallel_for over total_of(h)."""
        fn = L.Function(mod, L.FunctionType(L.VoidType(), params), name=f"{name}_{precision}")
        b = Builder(fn.append_basic_block("entry"))
        args = alloca(b, I64, len(_REAL_ARGS), name="args")
        given = dict(zip(fields, fn.args))
        for field, v in given.items():
            if field == "nthreads":
                continue
            if v.type == PTR:
                v = b.ptrtoint(v, I64)
            elif v.type == ft:
                v = b.bitcast(v if precision == "f64" else b.fpext(v, L.DoubleType()), I64)
            b.store(v, b.gep(args, [i64(_REAL_ARGS.index(field))], source_etype=I64))
        b.call(pfor, [kernel, args, total_of(b, given["h"]), given["nthreads"], i64(vlen)])
        b.ret_void()

    driver("aot_fft_r2c_post_shared", [PTR, I64, PTR, ft, I64], post_chunk,
           ("x", "h", "w", "scale", "nthreads"), lambda b, h: b.sdiv(h, i64(2)))
    driver("aot_fft_c2r_pre_shared", [PTR, PTR, I64, PTR, I64], pre_chunk,
           ("x", "z", "h", "w", "nthreads"), lambda b, h: b.sub(h, i64(1)))


_FOUR = FOUR_STEP_JOB + ("chunk1", "chunk2", "chunk3", "chunk4")  # the job, then the kernels' own words


def emit_four_step(mod: L.Module, precision: str, vlen: int, callees: dict) -> L.Function:
    """`callees`: the core's "columns", "c2c", "rows_t" and "transpose" functions (import stubs)."""
    ft = L.FloatType() if precision == "f32" else L.DoubleType()
    pfor = parallel_for(mod, join_at_unload=True, delegates=False)
    kernels = _four_step_chunks(mod, precision, ft, callees)
    fn, b, args, slot = _job_driver(mod, four_step_name(precision), FOUR_STEP_JOB, _FOUR)
    m1, m2, nthreads = (b.load(slot[name], typ=I64) for name in ("m1", "m2", "nthreads"))

    def run(k: int, total, unit: int):
        _over_threads(b, pfor, kernels[k], args, total, nthreads, unit, slot[f"chunk{k}"])

    run(1, m2, LANE_BLOCK * vlen)  # the columns, in lane blocks
    work = b.load(slot["work"], typ=I64)
    with b.if_else(b.icmp_signed("!=", work, i64(0))) as (two, three):
        with two:  # rows of the work array, transposed into dst
            run(2, m1, vlen)
        with three:  # rows of dst in place, then pairs of block rows of the square transpose
            run(3, m1, 1)
            run(4, b.sdiv(b.add(b.sdiv(m1, i64(vlen)), i64(1)), i64(2)), 1)
    b.ret_void()
    return fn


def _four_step_chunks(mod: L.Module, precision: str, ft: L.Type, callees: dict) -> dict:
    """kernel(args, lo, hi) of each pass: 1 the columns lo..hi (src into work, or into dst when
    there is no work array), 2 the rows lo..hi of work into dst, 3 the rows lo..hi of dst in place,
    4 the block-row pairs lo..hi of dst's transpose."""

    def kernel(k: int):
        fn, b = new_kernel(mod, f"aot_fft_four_step_pass{k}_{precision}")
        args, lo, hi = fn.args
        words = _Words(b, args, _FOUR, ft)
        get, ptr = words.get, words.ptr
        m1, m2, flags = get("m1"), get("m2"), b.trunc(get("flags"), I32)
        scratch = ptr("scratch", b.mul(b.sdiv(lo, get(f"chunk{k}")), get("region")))
        scale = words.scale()
        if k == 1:
            out = b.select(b.icmp_signed("!=", get("work"), i64(0)), ptr("work"), ptr("dst"))
            b.call(callees["columns"], [ptr("hdr1"), ptr("tw1"), ptr("src"), out, lo, hi, m2, flags, ptr("wa"),
                                        ptr("wb"), scratch])
        elif k == 2:
            b.call(callees["rows_t"], [ptr("hdr2"), ptr("tw2"), ptr("work"), ptr("dst"), lo, hi, m1, flags, scale,
                                       scratch])
        elif k == 3:
            rows = b.gep(ptr("dst"), [b.shl(b.mul(lo, m2), i64(1))], source_etype=ft)
            b.call(callees["c2c"], [ptr("hdr2"), ptr("tw2"), rows, rows, b.sub(hi, lo), i64(1), m2, i64(1), m2,
                                    flags, scale, scratch])
        else:
            b.call(callees["transpose"], [ptr("dst"), m1, lo, hi])
        b.ret_void()
        return fn

    return {k: kernel(k) for k in (1, 2, 3, 4)}


def emit_halves(mod: L.Module, precision: str, vlen: int, callees: dict) -> L.Function:
    """`callees`: the core's "c2c", "unzip" and "combine" functions (import stubs)."""
    ft = L.FloatType() if precision == "f32" else L.DoubleType()
    pfor = parallel_for(mod, join_at_unload=True, delegates=False)
    fn, b, args, slot = _job_driver(mod, halves_name(precision), HALVES_JOB, HALVES_JOB)
    kernels = _halves_chunks(mod, precision, ft, callees)
    h, nthreads = (b.load(slot[name], typ=I64) for name in ("h", "nthreads"))
    for kern, total, unit in zip(kernels, (h, i64(2), h), (vlen, 1, vlen)):
        _over_threads(b, pfor, kern, args, total, nthreads, unit)
    b.ret_void()
    return fn


def _halves_chunks(mod: L.Module, precision: str, ft: L.Type, callees: dict) -> tuple:
    """kernel(args, lo, hi) of the unzipping over k in lo..hi, of the halves lo..hi (in place in
    dst), and of the combining step over k in lo..hi."""

    def kernel(k: int):
        fn, b = new_kernel(mod, f"aot_fft_halves_pass{k}_{precision}")
        args, lo, hi = fn.args
        words = _Words(b, args, HALVES_JOB, ft)
        get, ptr = words.get, words.ptr
        h, flags = get("h"), b.trunc(get("flags"), I32)
        scale = words.scale()
        if k == 1:
            b.call(callees["unzip"], [ptr("src"), ptr("dst"), h, lo, hi])
        elif k == 2:
            with for_range(b, lo, hi, name="t", unroll=False) as t:
                half = ptr("dst", b.shl(b.mul(t, h), i64(1)))
                b.call(callees["c2c"], [ptr("hdr"), ptr("tw"), half, half, i64(1), i64(1), i64(0), i64(1), i64(0),
                                        flags, L.Constant(ft, 1.0), ptr("scratch", b.mul(t, get("region")))])
        else:
            b.call(callees["combine"], [ptr("dst"), h, ptr("lo"), ptr("hi"), get("shift"), flags, scale, lo, hi])
        b.ret_void()
        return fn

    return kernel(1), kernel(2), kernel(3)


def emit_planes(mod: L.Module, precision: str, c2c: L.Function) -> L.Function:
    ft = L.FloatType() if precision == "f32" else L.DoubleType()
    pfor = parallel_for(mod, join_at_unload=True, delegates=False)
    fields = PLANES_JOB + ("chunk",)
    fn, b, args, slot = _job_driver(mod, planes_name(precision), PLANES_JOB, fields)
    kern, kb = new_kernel(mod, f"aot_fft_planes_chunk_{precision}")
    kargs, lo, hi = kern.args
    words = _Words(kb, kargs, fields, ft)
    get, ptr, scale = words.get, words.ptr, words.scale
    scratch = ptr("scratch", kb.mul(kb.sdiv(lo, get("chunk")), get("region")))
    n1, n2 = get("n1"), get("n2")
    with for_range(kb, lo, hi, name="t", unroll=False) as t:  # complex elements: two values each
        src = ptr("src", kb.shl(kb.mul(t, get("sdist")), i64(1)))
        dst = ptr("dst", kb.shl(kb.mul(t, get("ddist")), i64(1)))
        kb.call(c2c, [ptr("hdr_rows"), ptr("tw_rows"), src, dst, n1, i64(1), n2, i64(1), n2,
                      kb.trunc(get("flags_rows"), I32), scale("scale_rows"), scratch])
        kb.call(c2c, [ptr("hdr_cols"), ptr("tw_cols"), dst, dst, n2, n2, i64(1), n2, i64(1),
                      kb.trunc(get("flags_cols"), I32), scale("scale_cols"), scratch])
    kb.ret_void()
    planes, nthreads = (b.load(slot[name], typ=I64) for name in ("planes", "nthreads"))
    _over_threads(b, pfor, kern, args, planes, nthreads, 1, slot["chunk"])
    b.ret_void()
    return fn
