"""Selection of order statistics in one lane: the keys at some ranks of a lane without sorting it.

Elements become unsigned keys of the total order (`select_key`: numpy's order with -0.0 before
0.0 and every NaN last, as one all-ones key). `lane_function` finds the keys at m sorted distinct
ranks of a lane of n elements by narrowing brackets (Floyd and Rivest's sampling select):

    level: draw S keys of the current set at pseudo-random positions and sort them (sort keys,
           kernels/sorting.py); a rank r of the set maps to sample position j = r * S / cur, and
           the sample keys at j -/+ D (D = 2 sqrt(S), four standard deviations of the rank of a
           sample element) bracket its key; overlapping brackets merge (at most MAX_BRACKETS).
    pass:  one pass over the set counts, per bracket [lo, hi], the keys below lo and inside, and
           copies the keys inside (branch-free compaction) into the other buffer; it also tracks
           the set's least and greatest keys, which answer ranks 0 and cur - 1 directly.
    check: each rank must fall inside its bracket's counts; a bracket of one key (lo == hi)
           answers its ranks; the others continue with their ranks inside the copied keys.

A set of SMALL keys or fewer with at most QUICK_RANKS ranks left is finished by quickselect
(kernels/quickselect.py). At the first level, the ranks beyond MAX_BRACKETS brackets are deferred
to another round from the input (many quantiles: a few passes over the lane); later, more
brackets than that, a failed check (rare: the sample was unlucky), too little progress or too
many levels end in a sort of the current set, so the result never depends on luck, only the
time. The first pass reads the input lane (any stride; a
contiguous one `lanes` keys at a time, the copies compressed) and the later ones the previous
pass's keys, alternating between two buffers of n keys (scratch, see `lane_layout`); the pass is
written once per source and bracket count (`_pass_function`). A small lane is copied out as keys
once, which also answers its ranks 0 and n - 1.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.context import declare
from ..llvm.loops import alloca, for_range, i64
from ..llvm.types import F64, I1, I8, I64, PTR, VOID
from .quickselect import quickselect_function
from .sort_keys import Var, gep, int_type, key_bits, load_bits, new_function, seal
from .sorting import key_sort, n_bytes

SMALL = 2048  # sets this small are sorted
MAX_S = 16384  # the largest sample
MIN_S = 256
MAX_BRACKETS = 4
MAX_LEVELS = 8
QUICK_RANKS = 8  # small sets with at most this many ranks left are quickselected, not sorted
DONE, ACTIVE, DEFERRED = 0, 1, 2  # a rank's state
PASS_WIDTHS = (1, MAX_BRACKETS)  # pass functions are specialised for this many brackets
# the bracket block: lo[4], hi[4], copy[4] in; below[4], inside[4], least, greatest out
LO, HI, CP, BELOW, INSIDE, LEAST, GREATEST = 0, 4, 8, 12, 16, 20, 21
BLOCK_SLOTS = 22


# --- keys ------------------------------------------------------------------------------------------
def _const(t: L.Type, v: int):
    """An integer constant of scalar or vector type t (a splat)."""
    if isinstance(t, L.VectorType):
        return L.Constant(t, [v] * t.count)
    return L.Constant(t, v)


def _with_width(t: L.Type, bits: int) -> L.Type:
    it = L.IntType(bits)
    return L.VectorType(it, t.count) if isinstance(t, L.VectorType) else it


def select_key(b: L.IRBuilder, dt: DType, bits_val):
    """The total-order key of real elements given their bits (bool: their bytes), scalar or vector."""
    t = bits_val.type
    if dt.is_bool:
        return b.zext(b.icmp_unsigned("!=", bits_val, _const(t, 0)), t)
    n = dt.bits
    sign = _const(t, 1 << (n - 1))
    if dt.is_int:
        return b.xor(bits_val, sign)
    neg = b.icmp_signed("<", bits_val, _const(t, 0))
    key = b.select(neg, b.not_(bits_val), b.or_(bits_val, sign))
    inf = {32: 0x7F800000, 64: 0x7FF0000000000000}[n]
    nan = b.icmp_unsigned(">", b.and_(bits_val, _const(t, (1 << (n - 1)) - 1)), _const(t, inf))
    return b.select(nan, _const(t, -1), key)


def max_key(dt: DType) -> int:
    return (1 << key_bits(dt)) - 1


def widen(b: L.IRBuilder, v, bits: int):
    return b.zext(v, I64) if bits < 64 else v


def lane_layout(b: L.IRBuilder, n, m, dt: DType) -> tuple[list, L.Value]:
    """(byte offsets, total bytes) of a lane's scratch: key buffers K0, K1 (n keys each), the
    sample buffers S0, S1 (the first level's sample: the largest), then per rank its relative
    rank, bracket and state."""
    kb = key_bits(dt) // 8
    s, _ = _sample_size(b.module, b, n)
    s = b.select(b.icmp_signed(">", n, i64(SMALL)), s, i64(0))
    sizes = [n_bytes(b, n, kb)] * 2 + [n_bytes(b, s, kb)] * 2 + [n_bytes(b, m, 8)] * 3
    offs, total = [], i64(0)
    for size in sizes:
        offs.append(total)
        total = b.add(total, size)
    return offs, total


# --- the pass and the sample ------------------------------------------------------------------------
def _source_key(b: L.IRBuilder, dt: DType, from_input: bool, src, stride, j):
    """The key of element j of the source: the input lane (stride in elements) or a key buffer."""
    if from_input:
        return select_key(b, dt, load_bits(b, dt, src, b.mul(j, stride)))
    kt = int_type(key_bits(dt))
    return b.load(gep(b, kt, src, j), typ=kt)


def _intrinsic(module: L.Module, name: str, t: L.Type, ret: L.Type, args: list) -> L.Function:
    suffix = f"v{t.count}i{t.element.width}" if isinstance(t, L.VectorType) else f"i{t.width}"
    return declare(module, f"{name}.{suffix}", ret, args)


class _Pass:
    """The counters of one pass and the per-element (scalar or vector) step."""

    def __init__(self, module, entry, b, dt: DType, block, width: int):
        self.module, self.entry, self.b, self.dt, self.width = module, entry, b, dt, width
        self.bits = key_bits(dt)
        self.kt = int_type(self.bits)

        def slot(k):
            return gep(b, I64, block, i64(k))

        def key_slot(k):
            v = b.load(slot(k), typ=I64)
            return b.trunc(v, self.kt) if self.bits < 64 else v

        self.los = [key_slot(LO + k) for k in range(width)]
        self.spans = [b.sub(key_slot(HI + k), lo) for k, lo in enumerate(self.los)]
        self.copies = [b.icmp_signed("!=", b.load(slot(CP + k), typ=I64), i64(0)) for k in range(width)]
        self.below = [Var(entry, b, I64, i64(0)) for _ in range(width)]
        self.inside = [Var(entry, b, I64, i64(0)) for _ in range(width)]
        self.out = Var(entry, b, I64, i64(0))

    def _splat(self, v, t):
        if not isinstance(t, L.VectorType):
            return v
        b = self.b
        one = b.insert_element(L.Constant(t, L.Undefined), v, L.Constant(L.IntType(32), 0))
        return b.shuffle_vector(one, L.Constant(t, L.Undefined), L.Constant(L.VectorType(L.IntType(32), t.count),
                                                                          [0] * t.count))

    def _count(self, flags):
        """How many flags are set (i64)."""
        b = self.b
        if not isinstance(flags.type, L.VectorType):
            return b.zext(flags, I64)
        it = L.IntType(flags.type.count)
        c = b.call(_intrinsic(self.module, "llvm.ctpop", it, it, [it]), [b.bitcast(flags, it)])
        return b.zext(c, I64) if it.width < 64 else c

    def step(self, keys, dst) -> None:
        """Count keys (one or a vector) into the brackets and append the copied ones to dst."""
        b, t = self.b, keys.type
        keep = None
        for lo, span, cp, lt_var, in_var in zip(self.los, self.spans, self.copies, self.below, self.inside):
            lo, span, cp = self._splat(lo, t), self._splat(span, t), self._splat(cp, _with_width(t, 1))
            lt = b.icmp_unsigned("<", keys, lo)
            inb = b.icmp_unsigned("<=", b.sub(keys, lo), span)
            lt_var.set(b.add(lt_var.get(), self._count(lt)))
            in_var.set(b.add(in_var.get(), self._count(inb)))
            k = b.and_(inb, cp)
            keep = k if keep is None else b.or_(keep, k)
        w = self.out.get()
        at = gep(b, self.kt, dst, w)
        if isinstance(t, L.VectorType):
            packed = b.call(declare(self.module, f"llvm.experimental.vector.compress.v{t.count}i{self.bits}", t,
                                    [t, keep.type, t]), [keys, keep, L.Constant(t, L.Undefined)])
            b.store(packed, at, align=self.bits // 8)
        else:
            b.store(keys, at)
        self.out.set(b.add(w, self._count(keep)))


def _pass_function(module: L.Module, dt: DType, from_input: bool, width: int, lanes: int) -> L.Function:
    """`i64 pass(ptr src, i64 stride, i64 n, ptr dst, ptr block)`: counts and copies for `width`
    brackets of the block (see the module docstring); returns the keys copied. Contiguous sources
    go `lanes` keys at a time (the copies compressed), the rest one by one."""
    name = f"aot.select.pass_{dt.name}_{'in' if from_input else 'keys'}{width}x{lanes}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn, entry, b = new_function(module, name, I64, [PTR, I64, I64, PTR, PTR])
    fn.attributes.add("noinline")  # compile time: one copy, not one per call site
    src, stride, n, dst, block = fn.args
    ps = _Pass(module, entry, b, dt, block, width)
    kt, bits = ps.kt, ps.bits
    least = Var(entry, b, kt, L.Constant(kt, -1))
    greatest = Var(entry, b, kt, L.Constant(kt, 0))
    main = i64(0)
    if lanes > 1:
        vt = L.VectorType(kt, lanes)
        vmin = Var(entry, b, vt, _const(vt, -1))
        vmax = Var(entry, b, vt, _const(vt, 0))
        contiguous = b.icmp_signed("==", stride, i64(1)) if from_input else L.Constant(I1, 1)
        main = b.select(contiguous, b.sub(n, b.srem(n, i64(lanes))), i64(0))
        mem = L.VectorType(I8 if dt.is_bool else int_type(dt.bits), lanes)
        with for_range(b, i64(0), main, lanes, name="vpass") as j:
            v = b.load(gep(b, mem.element, src, j), typ=mem, align=mem.element.width // 8)
            keys = select_key(b, dt, v) if from_input else v
            vmin.set(b.call(_intrinsic(module, "llvm.umin", vt, vt, [vt, vt]), [vmin.get(), keys]))
            vmax.set(b.call(_intrinsic(module, "llvm.umax", vt, vt, [vt, vt]), [vmax.get(), keys]))
            ps.step(keys, dst)
        least.set(b.call(_intrinsic(module, "llvm.vector.reduce.umin", vt, kt, [vt]), [vmin.get()]))
        greatest.set(b.call(_intrinsic(module, "llvm.vector.reduce.umax", vt, kt, [vt]), [vmax.get()]))
    with for_range(b, main, n, name="pass") as j:
        k = _source_key(b, dt, from_input, src, stride, j)
        least.set(b.select(b.icmp_unsigned("<", k, least.get()), k, least.get()))
        greatest.set(b.select(b.icmp_unsigned(">", k, greatest.get()), k, greatest.get()))
        ps.step(k, dst)
    for k in range(width):
        b.store(ps.below[k].get(), gep(b, I64, block, i64(BELOW + k)))
        b.store(ps.inside[k].get(), gep(b, I64, block, i64(INSIDE + k)))
    b.store(widen(b, least.get(), bits), gep(b, I64, block, i64(LEAST)))
    b.store(widen(b, greatest.get(), bits), gep(b, I64, block, i64(GREATEST)))
    b.ret(ps.out.get())
    seal(entry, fn)
    return fn


def _copy_function(module: L.Module, dt: DType, lanes: int) -> L.Function:
    """`void copy(ptr x, i64 xs, i64 n, ptr dst, ptr block)`: the keys of the input lane into dst,
    its least and greatest keys into the block."""
    name = f"aot.select.copy_{dt.name}x{lanes}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn, entry, b = new_function(module, name, VOID, [PTR, I64, I64, PTR, PTR])
    x, xs, n, dst, block = fn.args
    bits = key_bits(dt)
    kt = int_type(bits)
    least = Var(entry, b, kt, L.Constant(kt, -1))
    greatest = Var(entry, b, kt, L.Constant(kt, 0))
    main = i64(0)
    if lanes > 1:
        vt = L.VectorType(kt, lanes)
        vmin, vmax = Var(entry, b, vt, _const(vt, -1)), Var(entry, b, vt, _const(vt, 0))
        main = b.select(b.icmp_signed("==", xs, i64(1)), b.sub(n, b.srem(n, i64(lanes))), i64(0))
        mem = L.VectorType(I8 if dt.is_bool else int_type(dt.bits), lanes)
        with for_range(b, i64(0), main, lanes, name="vcopy") as j:
            keys = select_key(b, dt, b.load(gep(b, mem.element, x, j), typ=mem, align=mem.element.width // 8))
            b.store(keys, gep(b, kt, dst, j), align=bits // 8)
            vmin.set(b.call(_intrinsic(module, "llvm.umin", vt, vt, [vt, vt]), [vmin.get(), keys]))
            vmax.set(b.call(_intrinsic(module, "llvm.umax", vt, vt, [vt, vt]), [vmax.get(), keys]))
        least.set(b.call(_intrinsic(module, "llvm.vector.reduce.umin", vt, kt, [vt]), [vmin.get()]))
        greatest.set(b.call(_intrinsic(module, "llvm.vector.reduce.umax", vt, kt, [vt]), [vmax.get()]))
    with for_range(b, main, n, name="copy") as j:
        k = _source_key(b, dt, True, x, xs, j)
        b.store(k, gep(b, kt, dst, j))
        least.set(b.select(b.icmp_unsigned("<", k, least.get()), k, least.get()))
        greatest.set(b.select(b.icmp_unsigned(">", k, greatest.get()), k, greatest.get()))
    b.store(widen(b, least.get(), bits), gep(b, I64, block, i64(LEAST)))
    b.store(widen(b, greatest.get(), bits), gep(b, I64, block, i64(GREATEST)))
    b.ret_void()
    seal(entry, fn)
    return fn


def _mix(b: L.IRBuilder, z):
    """splitmix64's finaliser: well-spread 64-bit values from a counter."""
    z = b.add(z, i64(0x9E3779B97F4A7C15 - (1 << 64)))
    z = b.mul(b.xor(z, b.lshr(z, i64(30))), i64(0xBF58476D1CE4E5B9 - (1 << 64)))
    z = b.mul(b.xor(z, b.lshr(z, i64(27))), i64(0x94D049BB133111EB - (1 << 64)))
    return b.xor(z, b.lshr(z, i64(31)))


def _below(b: L.IRBuilder, r, n):
    """floor(r * n / 2**64) for 64-bit r: a position in [0, n)."""
    i128 = L.IntType(128)
    p = b.mul(b.zext(r, i128), b.zext(n, i128))
    return b.trunc(b.lshr(p, L.Constant(i128, 64)), I64)


def _sample_function(module: L.Module, dt: DType, from_input: bool) -> L.Function:
    """`void sample(ptr src, i64 stride, i64 n, ptr out, i64 s, i64 seed)`: s keys of the source at
    pseudo-random positions."""
    name = f"aot.select.sample_{dt.name}_{'in' if from_input else 'keys'}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    kt = int_type(key_bits(dt))
    fn, entry, b = new_function(module, name, VOID, [PTR, I64, I64, PTR, I64, I64])
    src, stride, n, out, s, seed = fn.args
    with for_range(b, i64(0), s, name="draw") as t:
        pos = _below(b, _mix(b, b.add(seed, t)), n)
        b.store(_source_key(b, dt, from_input, src, stride, pos), gep(b, kt, out, t))
    b.ret_void()
    seal(entry, fn)
    return fn


def _sample_size(module: L.Module, b: L.IRBuilder, cur):
    """(S, D): S the power of two at most 8 sqrt(cur) within [MIN_S, MAX_S]; D = 2 sqrt(S) + 1."""
    sqrt = declare(module, "llvm.sqrt.f64", F64, [F64])
    ctlz = declare(module, "llvm.ctlz.i64", I64, [I64, I1])
    want = b.fptosi(b.fmul(b.call(sqrt, [b.sitofp(cur, F64)]), L.Constant(F64, 8.0)), I64)
    want = b.select(b.icmp_signed("<", want, i64(MIN_S)), i64(MIN_S), want)
    want = b.select(b.icmp_signed(">", want, i64(MAX_S)), i64(MAX_S), want)
    s = b.shl(i64(1), b.sub(i64(63), b.call(ctlz, [want, L.Constant(I1, 0)])))
    d = b.add(b.fptosi(b.fmul(b.call(sqrt, [b.sitofp(s, F64)]), L.Constant(F64, 2.0)), I64), i64(1))
    return s, d


# --- one lane ----------------------------------------------------------------------------------------
def lane_function(module: L.Module, dt: DType, lanes: int = 1) -> L.Function:
    """`void lane(ptr x, i64 xs, i64 n, ptr ranks, i64 m, ptr vals, ptr scratch)`: vals[i] (i64) =
    the key at ranks[i] of the lane x (n elements, stride xs); ranks sorted, distinct, in [0, n);
    scratch as `lane_layout`; the passes go `lanes` keys at a time."""
    name = f"aot.select.lane_{dt.name}x{lanes}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    bits = key_bits(dt)
    kt = int_type(bits)
    fn, entry, b = new_function(module, name, VOID, [PTR, I64, I64, PTR, I64, PTR, PTR])
    fn.attributes.add("noinline")  # compile time: one copy, not one per call site
    x, xs, n, ranks, m, vals, scr = fn.args
    offs, _ = lane_layout(b, n, m, dt)
    k0, k1, s0, s1, rel, bracket, active = (b.gep(scr, [o], source_etype=I8) for o in offs)
    block = alloca(entry, L.ArrayType(I64, BLOCK_SLOTS), name="block")
    st = _LaneState(entry, b, rel, bracket, active, vals, block)
    with for_range(b, i64(0), m, name="init") as i:
        st.store(rel, i, b.load(gep(b, I64, ranks, i), typ=I64))
        st.store(active, i, i64(1))
    cur = Var(entry, b, I64, n)
    level = Var(entry, b, I64, i64(0))
    src = Var(entry, b, PTR, k0)  # the current set's buffer from level 1 on
    stalled = Var(entry, b, I1, L.Constant(I1, 0))
    head, bracket_it, sort_it, done = (fn.append_basic_block(w) for w in ("head", "bracket", "sort", "done"))
    b.branch(head)

    b.position_at_end(head)
    small = b.icmp_signed("<=", cur.get(), i64(SMALL))
    stop = b.or_(b.or_(small, stalled.get()), b.icmp_signed(">=", level.get(), i64(MAX_LEVELS)))
    finished = b.icmp_signed("==", st.count_active(m), i64(0))
    more, round_done, restart = (fn.append_basic_block(w) for w in ("more", "round_done", "restart"))
    b.cbranch(finished, round_done, more)
    b.position_at_end(more)
    b.cbranch(stop, sort_it, bracket_it)
    b.position_at_end(round_done)  # ranks deferred by a full first level start again from the input
    b.cbranch(b.icmp_signed("==", st.count_active(m, DEFERRED), i64(0)), done, restart)
    b.position_at_end(restart)
    st.restart(m, ranks)
    cur.set(n)
    level.set(i64(0))
    stalled.set(L.Constant(I1, 0))
    b.branch(head)

    b.position_at_end(bracket_it)
    first = b.icmp_signed("==", level.get(), i64(0))
    dst = b.select(first, k0, b.select(b.icmp_unsigned("==", src.get(), k0), k1, k0))
    s, d = _sample_size(module, b, cur.get())
    seed = b.mul(level.get(), i64(MAX_S))
    _by_source(b, first, lambda inp: b.call(_sample_function(module, dt, inp),
                                            [x if inp else src.get(), xs, cur.get(), s0, s, seed]))
    flipped = b.call(key_sort(module, bits, False), [s0, s1, L.Constant(PTR, None), L.Constant(PTR, None), s])
    sample = b.select(flipped, s1, s0)
    nb, too_many = st.brackets(m, cur.get(), sample, s, d, kt, max_key(dt), first)
    ok_block, pass_block = fn.append_basic_block("brackets_ok"), fn.append_basic_block("passed")
    b.cbranch(too_many, sort_it, ok_block)
    b.position_at_end(ok_block)
    copied = _run_pass(module, entry, b, dt, lanes, first, x, xs, src.get(), cur.get(), dst, block, nb)
    b.branch(pass_block)
    b.position_at_end(pass_block)
    resolve = fn.append_basic_block("resolve")
    b.cbranch(st.check(m), resolve, sort_it)
    b.position_at_end(resolve)
    st.resolve(m, cur.get())
    stalled.set(b.icmp_signed(">", b.mul(copied, i64(8)), b.mul(cur.get(), i64(7))))
    cur.set(copied)
    src.set(dst)
    level.set(b.add(level.get(), i64(1)))
    b.branch(head)

    b.position_at_end(sort_it)  # the current set (copied out of the input at level 0) ...
    first = b.icmp_signed("==", level.get(), i64(0))
    with b.if_then(first):  # the copy finds the least and greatest keys: ranks 0 and n - 1
        b.call(_copy_function(module, dt, lanes), [x, xs, n, k0, block])
        st.resolve_extremes(m, n)
    a = b.select(first, k0, src.get())
    other = b.select(b.icmp_unsigned("==", a, k0), k1, k0)
    quick = b.and_(b.icmp_signed("<=", cur.get(), i64(SMALL)), b.icmp_signed("<=", st.count_active(m),
                                                                            i64(QUICK_RANKS)))
    with b.if_then(quick):  # ... selected in place when small, else sorted
        gave_up = b.call(quickselect_function(module, bits, lanes), [a, cur.get(), rel, active, vals, m])
        sort_block, selected = fn.append_basic_block("sort_after_all"), fn.append_basic_block("selected")
        b.cbranch(gave_up, sort_block, selected)
        b.position_at_end(selected)
        st.finish(m)
        b.branch(head)
        b.position_at_end(sort_block)
    flipped = b.call(key_sort(module, bits, False), [a, other, L.Constant(PTR, None), L.Constant(PTR, None),
                                                     cur.get()])
    sorted_keys = b.select(flipped, other, a)
    with for_range(b, i64(0), m, name="pick") as i, b.if_then(st.is_active(i)):
        k = b.load(gep(b, kt, sorted_keys, st.load(rel, i)), typ=kt)
        b.store(widen(b, k, bits), gep(b, I64, vals, i))
    st.finish(m)
    b.branch(head)

    b.position_at_end(done)
    b.ret_void()
    seal(entry, fn)
    return fn


def _by_source(b: L.IRBuilder, first, emit) -> None:
    """emit(True) when reading the input (level 0), else emit(False)."""
    with b.if_else(first) as (inp, keys):
        with inp:
            emit(True)
        with keys:
            emit(False)


def _run_pass(module, entry: L.IRBuilder, b: L.IRBuilder, dt: DType, lanes: int, first, x, xs, src, cur, dst,
              block, nb):
    """The pass for nb brackets (the narrowest specialisation holding them); returns the copied count."""
    result = Var(entry, b, I64)
    for width, cond in _width_conditions(b, nb):
        with b.if_then(cond):
            def emit(inp, width=width):
                fn = _pass_function(module, dt, inp, width, lanes)
                result.set(b.call(fn, [x if inp else src, xs if inp else i64(1), cur, dst, block]))

            _by_source(b, first, emit)
    return result.get()


def _width_conditions(b: L.IRBuilder, nb):
    lo = i64(0)
    out = []
    for width in PASS_WIDTHS:
        out.append((width, b.and_(b.icmp_signed(">", nb, lo) if width != PASS_WIDTHS[0] else L.Constant(I1, 1),
                                  b.icmp_signed("<=", nb, i64(width)))))
        lo = i64(width)
    return out


class _LaneState:
    """The per-rank arrays of a lane (relative rank, bracket, active flag) and the bracket block."""

    def __init__(self, entry, b, rel, bracket, active, vals, block):
        self.entry, self.b = entry, b
        self.rel, self.bracket, self.active, self.vals, self.block = rel, bracket, active, vals, block

    def load(self, arr, i):
        return self.b.load(gep(self.b, I64, arr, i), typ=I64)

    def store(self, arr, i, v) -> None:
        self.b.store(v, gep(self.b, I64, arr, i))

    def slot(self, k):
        return gep(self.b, I64, self.block, k if isinstance(k, L.Value) else i64(k))

    def is_active(self, i):
        return self.b.icmp_signed("==", self.load(self.active, i), i64(ACTIVE))

    def count_active(self, m, state: int = ACTIVE):
        """How many ranks are in `state`."""
        b = self.b
        total = Var(self.entry, b, I64, i64(0))
        with for_range(b, i64(0), m, name="nact") as i:
            hit = b.icmp_signed("==", self.load(self.active, i), i64(state))
            total.set(b.add(total.get(), b.zext(hit, I64)))
        return total.get()

    def finish(self, m) -> None:
        """The active ranks have their keys."""
        b = self.b
        with for_range(b, i64(0), m, name="fin") as i, b.if_then(self.is_active(i)):
            self.store(self.active, i, i64(DONE))

    def restart(self, m, ranks) -> None:
        """The deferred ranks become active again, at their ranks in the whole lane."""
        b = self.b
        with for_range(b, i64(0), m, name="again") as i:
            with b.if_then(b.icmp_signed("==", self.load(self.active, i), i64(DEFERRED))):
                self.store(self.active, i, i64(ACTIVE))
                self.store(self.rel, i, b.load(gep(b, I64, ranks, i), typ=I64))

    def brackets(self, m, cur, sample, s, d, kt, top: int, first):
        """Each active rank's bracket from the sorted sample (ranks 0 and cur - 1 take the pass's
        least and greatest keys: bracket -1); returns (brackets, i1 more than MAX_BRACKETS).
        At the first level (`first`: the whole lane) the ranks past MAX_BRACKETS brackets are
        deferred instead, to a later round from the input."""
        b = self.b
        bits = kt.width
        nb = Var(self.entry, b, I64, i64(0))
        with for_range(b, i64(0), m, name="brk") as i:
            r = self.load(self.rel, i)
            extreme = b.or_(b.icmp_signed("==", r, i64(0)), b.icmp_signed("==", r, b.sub(cur, i64(1))))
            with b.if_then(b.and_(self.is_active(i), b.not_(extreme))):
                j = b.sdiv(b.mul(r, s), cur)
                lo_j, hi_j = b.sub(j, d), b.add(j, d)
                lo = b.select(b.icmp_signed("<", lo_j, i64(0)), i64(0),
                              widen(b, b.load(gep(b, kt, sample, _clamp(b, lo_j, s)), typ=kt), bits))
                hi = b.select(b.icmp_signed(">=", hi_j, s), i64(top),
                              widen(b, b.load(gep(b, kt, sample, _clamp(b, hi_j, s)), typ=kt), bits))
                k = nb.get()
                last = b.sub(k, i64(1))
                merge = b.and_(b.icmp_signed(">", k, i64(0)),
                               b.icmp_unsigned("<=", lo, b.load(self.slot(b.add(i64(HI), _clamp(b, last, i64(
                                   MAX_BRACKETS)))), typ=I64)))
                with b.if_else(merge) as (join, new):
                    with join:
                        b.store(hi, self.slot(b.add(i64(HI), _clamp(b, last, i64(MAX_BRACKETS)))))
                        self.store(self.bracket, i, last)
                    with new:
                        full = b.and_(first, b.icmp_signed(">=", k, i64(MAX_BRACKETS)))
                        with b.if_else(full) as (defer, take):
                            with defer:
                                self.store(self.active, i, i64(DEFERRED))
                            with take:
                                slot = _clamp(b, k, i64(MAX_BRACKETS))
                                b.store(lo, self.slot(b.add(i64(LO), slot)))
                                b.store(hi, self.slot(b.add(i64(HI), slot)))
                                self.store(self.bracket, i, k)
                                nb.set(b.add(k, i64(1)))
            with b.if_then(extreme):
                self.store(self.bracket, i, i64(-1))
        count = nb.get()
        too_many = b.icmp_signed(">", count, i64(MAX_BRACKETS))
        for k in range(MAX_BRACKETS):  # unused brackets: the top key, never copied
            used = b.icmp_signed("<", i64(k), count)
            lo, hi = b.load(self.slot(LO + k), typ=I64), b.load(self.slot(HI + k), typ=I64)
            b.store(b.select(used, lo, i64(top)), self.slot(LO + k))
            b.store(b.select(used, hi, i64(top)), self.slot(HI + k))
            b.store(b.zext(b.and_(used, b.icmp_unsigned("!=", lo, hi)), I64), self.slot(CP + k))
        return count, too_many

    def _bracket_of(self, i):
        return _clamp(self.b, self.load(self.bracket, i), i64(MAX_BRACKETS))

    def check(self, m):
        """i1: every active rank lies inside its bracket's counts."""
        b = self.b
        ok = Var(self.entry, b, I1, L.Constant(I1, 1))
        with for_range(b, i64(0), m, name="chk") as i:
            k = self.load(self.bracket, i)
            with b.if_then(b.and_(self.is_active(i), b.icmp_signed(">=", k, i64(0)))):
                k = self._bracket_of(i)
                r = self.load(self.rel, i)
                lt = b.load(self.slot(b.add(i64(BELOW), k)), typ=I64)
                inn = b.load(self.slot(b.add(i64(INSIDE), k)), typ=I64)
                bad = b.or_(b.icmp_signed("<", r, lt), b.icmp_signed(">=", r, b.add(lt, inn)))
                ok.set(b.and_(ok.get(), b.not_(bad)))
        return ok.get()

    def resolve_extremes(self, m, cur) -> None:
        """Answer ranks 0 and cur - 1 from the block's least and greatest keys."""
        b = self.b
        least, greatest = b.load(self.slot(LEAST), typ=I64), b.load(self.slot(GREATEST), typ=I64)
        with for_range(b, i64(0), m, name="ends") as i:
            r = self.load(self.rel, i)
            low, high = b.icmp_signed("==", r, i64(0)), b.icmp_signed("==", r, b.sub(cur, i64(1)))
            with b.if_then(b.and_(self.is_active(i), b.or_(low, high))):
                self.store(self.vals, i, b.select(low, least, greatest))
                self.store(self.active, i, i64(0))

    def resolve(self, m, cur) -> None:
        """Answer the extreme ranks and the one-key brackets; the other ranks move into the
        copied keys (the brackets' keys in order)."""
        b = self.b
        before = []
        acc = i64(0)
        for k in range(MAX_BRACKETS):
            before.append(acc)
            cp = b.load(self.slot(CP + k), typ=I64)
            acc = b.add(acc, b.mul(cp, b.load(self.slot(INSIDE + k), typ=I64)))
        with for_range(b, i64(0), m, name="res") as i, b.if_then(self.is_active(i)):
            k = self.load(self.bracket, i)
            r = self.load(self.rel, i)
            with b.if_else(b.icmp_signed("<", k, i64(0))) as (ext, inner):
                with ext:
                    least = b.load(self.slot(LEAST), typ=I64)
                    greatest = b.load(self.slot(GREATEST), typ=I64)
                    self.store(self.vals, i, b.select(b.icmp_signed("==", r, i64(0)), least, greatest))
                    self.store(self.active, i, i64(0))
                with inner:
                    k = self._bracket_of(i)
                    cp = b.load(self.slot(b.add(i64(CP), k)), typ=I64)
                    with b.if_else(b.icmp_signed("==", cp, i64(0))) as (one_key, narrowed):
                        with one_key:
                            self.store(self.vals, i, b.load(self.slot(b.add(i64(LO), k)), typ=I64))
                            self.store(self.active, i, i64(0))
                        with narrowed:
                            lt = b.load(self.slot(b.add(i64(BELOW), k)), typ=I64)
                            start = _pick(b, before, k)
                            self.store(self.rel, i, b.add(b.sub(r, lt), start))


def _clamp(b: L.IRBuilder, v, n):
    """v within [0, n): the slot index of a value the control flow keeps in range anyway."""
    v = b.select(b.icmp_signed("<", v, i64(0)), i64(0), v)
    return b.select(b.icmp_signed(">=", v, n), b.sub(n, i64(1)), v)


def _pick(b: L.IRBuilder, values: list, k):
    out = values[0]
    for j, v in enumerate(values[1:], start=1):
        out = b.select(b.icmp_signed("==", k, i64(j)), v, out)
    return out
