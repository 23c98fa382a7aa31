"""One Cooley-Tukey pass per radix, as LLVM functions (pocketfft's `cfftp::passN`).

    void pass(i64 ido, i64 l1, ptr cc, ptr ch, ptr wa, i64 kn, i64 inn, i64 i0 [, ptr cs, i64 ip])

reads CC(i, j, k) = cc[i + ido*(j + ip*k)], applies the radix-`ip` DFT over j, multiplies leg
m >= 1 by the twiddle w(m, i0 + i) of the pass's table `wa` (plan.py: a full table, or a
two-level one when plan.two_level(ip, ido); its conjugate when forward) and writes
CH(i, k, m) = ch[i + ido*(k + l1*m)]. Passes with ido == 1 need no twiddles and take a shorter
loop; in the Wide layout that loop runs VLEN values of k at once. Wide passes handle any ido and
kn: what is left after the VLEN-wide steps runs on narrower vectors, then scalars.
The loops run k < kn and i < inn (the whole pass: kn = l1, inn = ido, i0 = 0), so that threads can
share one pass by offsetting cc and ch (by whole k, or by i0 values of i: the twiddles' index
stays absolute). Radices without a codelet use `passg`, an O(ip^2) loop over the plan's table
`cs` of ip-th roots of unity (plans send large primes to Bluestein instead).
"""
from __future__ import annotations

from llvmlite import ir as L

from ..llvm.builder import Builder
from .codelets import FLAGS, CArith, dft
from .layouts import I64, PTR, KPair, Layout, Split, Wide, for_range, i64, no_vectorize_md
from .names import SPLIT, WIDE
from .names import pass_name as _symbol
from .plan import TWIDDLE_BLOCK, TWO_LEVEL_MIN_IDO

_BLOCK_SHIFT = TWIDDLE_BLOCK.bit_length() - 1


def long_ido(b: L.IRBuilder, ido) -> L.Value:
    """plan.two_level's test of ido, as an i1 (a codelet pass's table is two-level when it holds;
    the native planner adds the radix test)."""
    return b.and_(b.icmp_signed(">=", ido, i64(TWO_LEVEL_MIN_IDO)),
                  b.icmp_signed("==", b.and_(ido, i64(TWIDDLE_BLOCK - 1)), i64(0)))


def pass_name(radix: int | str, forward: bool, layout: Layout, out: Layout | None = None) -> str:
    return _symbol(radix, forward, layout.name, None if out is None else out.name)


def _new_function(mod: L.Module, name: str, extra: tuple = ()) -> tuple[L.Function, L.IRBuilder]:
    fnty = L.FunctionType(L.VoidType(), [I64, I64, PTR, PTR, PTR, I64, I64, I64, *extra])
    fn = L.Function(mod, fnty, name=name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")  # keeps the plan interpreter small; a call per pass is cheap
    for a in fn.args[2:5]:
        a.add_attribute("noalias")
    return fn, Builder(fn.append_basic_block("entry"))


def emit_pass(mod: L.Module, radix: int, forward: bool, layout: Layout, out: Layout | None = None,
              part: str = "both") -> L.Function:
    """The pass reading `layout` and writing `out` (default: the same). part: "both" branches on
    ido at run time, "twiddled" is only the ido > 1 loop, "over_k" only the ido == 1 one."""
    fn, b = _new_function(mod, pass_name(radix, forward, layout, out))
    ido, l1, cc, ch, wa, kn, inn, i0 = fn.args
    sign = -1 if forward else 1
    md = no_vectorize_md(mod)

    def twiddle(lay, ca, m: int, i, two_level: bool):
        ii = b.add(i0, i)
        if not two_level:
            return lay.load_twiddle(b, wa, b.add(b.mul(i64(m - 1), ido), ii))
        fine = lay.load_twiddle(b, wa, b.add(i64((m - 1) * TWIDDLE_BLOCK), b.and_(ii, i64(TWIDDLE_BLOCK - 1))))
        blocks = b.lshr(ido, i64(_BLOCK_SHIFT))
        c = b.add(b.mul(i64(m - 1), blocks), b.lshr(ii, i64(_BLOCK_SHIFT)))
        coarse = Layout.load_twiddle(lay, b, wa, b.add(i64((radix - 1) * TWIDDLE_BLOCK), c))  # splat
        return ca.mul(fine, coarse)

    def butterfly(lay, dst, k, i, table: str | None):  # table: None (no twiddles), "full" or "two-level"
        ca = CArith(b, lay.ty)
        base_in = b.mul(k, i64(radix))
        xs = [lay.load(b, cc, b.add(i, b.mul(ido, b.add(base_in, i64(j))))) for j in range(radix)]
        ys = dft(ca, xs, sign)
        for m, y in enumerate(ys):
            if table and m > 0:
                y = ca.mul(y, twiddle(lay, ca, m, i, table == "two-level"), conj=forward)
            dst.store(b, ch, b.add(i, b.mul(ido, b.add(k, b.mul(l1, i64(m))))), y)

    def butterfly_over_k(lay, dst, k):  # ido == 1: lay.step consecutive k at once
        if lay.step == 1:
            return butterfly(lay, dst, k, i64(0), None)
        ys = dft(CArith(b, lay.ty), lay.load_strided(b, cc, b.mul(k, i64(radix)), radix), sign)
        for m, y in enumerate(ys):
            dst.store(b, ch, b.add(k, b.mul(l1, i64(m))), y)

    tiers = layout.tiers(out) if hasattr(layout, "tiers") else [(layout, out or layout)]

    def over_k():
        _tiered(b, tiers, kn, md, "k", butterfly_over_k)

    def over_i(start, tiers_used, table: str):
        with for_range(b, start, kn, name="k", loop_md=md) as k:
            _tiered(b, tiers_used, inn, md, "i", lambda lay, dst, i: butterfly(lay, dst, k, i, table))

    def twiddled():
        start = i64(0)
        if isinstance(layout, Wide) and (out is None or isinstance(out, Wide)):
            # ido == VLEN/2 (f32's radix-8 passes before the last): pairs of k fill the vectors
            pair = KPair(layout.ft, layout.vlen, b.mul(ido, i64(radix)))
            half = i64(layout.vlen // 2)
            fits = b.and_(b.icmp_signed("==", ido, half), b.icmp_signed("==", inn, half))
            start = b.select(fits, b.and_(kn, i64(-2)), i64(0))
            with for_range(b, 0, start, 2, name="kp", loop_md=md) as k:
                butterfly(pair, pair, k, i64(0), "full")
        with b.if_else(long_ido(b, ido)) as (two, full):
            with two:
                _two_level_loops(b, layout, tiers, i0, lambda used: over_i(start, used, "two-level"))
            with full:
                over_i(start, tiers, "full")

    if part == "both":
        with b.if_else(b.icmp_signed("==", ido, i64(1))) as (then, otherwise):
            with then:
                over_k()
            with otherwise:
                twiddled()
    else:
        over_k() if part == "over_k" else twiddled()
    b.ret_void()
    return fn


def _two_level_loops(b: L.IRBuilder, layout: Layout, tiers: list[tuple], i0, loop) -> None:
    """loop(tiers) for a two-level table: a vector's fine twiddles are one load when it starts at
    a multiple of its width, so an i0 that is not a multiple of VLEN (a thread's range that
    cuts a vector: module.py's pass entry allows any) takes scalars only. Split passes run
    whole transforms (i0 == 0). Their ido is a multiple of TWIDDLE_BLOCK, so ranges end on whole
    vectors but for odd pass-entry calls: VLEN-wide and scalar tiers suffice (less code)."""
    if isinstance(layout, Split) or len(tiers) == 1:
        loop(tiers)
        return
    aligned = b.icmp_signed("==", b.and_(i0, i64(layout.vlen - 1)), i64(0))
    with b.if_else(aligned) as (vectors, scalars):
        with vectors:
            loop([tiers[0], tiers[-1]])
        with scalars:
            loop([tiers[-1]])


def _tiered(b: L.IRBuilder, tiers: list[tuple], stop, md, name: str, body) -> None:
    """for x < stop: body(src, dst, x) with the widest (src, dst) layouts of `tiers` that still
    fit, each tier taking the whole multiples of its step that are left (steps are powers of two,
    widest first)."""
    start = i64(0)
    for t, (lay, dst) in enumerate(tiers):
        end = stop if t == len(tiers) - 1 else b.and_(stop, i64(-lay.step))
        with for_range(b, start, end, lay.step, name=f"{name}{lay.step}", loop_md=md) as x:
            body(lay, dst, x)
        start = end


def emit_keyed_pass(mod: L.Module, radix: int | str, forward: bool, src: str, dst: str, layouts: dict) -> L.Function:
    """The pass of names.pass_keys' key (radix, src, dst), `layouts` by name (layouts.layouts_of).
    Split passes: numpy layout to Split and Split to Split are only the ido > 1 loop (every pass
    but the last), Split back to the numpy layout only the ido == 1 one (the last)."""
    if radix == "g":
        return emit_generic_pass(mod, forward, layouts[src])
    if SPLIT not in (src, dst):
        return emit_pass(mod, radix, forward, layouts[src])
    part = "over_k" if dst == WIDE else "twiddled"
    return emit_pass(mod, radix, forward, layouts[src], layouts[dst], part=part)


def emit_generic_pass(mod: L.Module, forward: bool, layout: Layout) -> L.Function:
    """Any odd radix p by pocketfft's pairs: with t_q = x_q + x_{p-q}, u_q = x_q - x_{p-q},
    y_m = x_0 + sum_q cos(2 pi mq/p) t_q +- i sum_q sin(2 pi mq/p) u_q and y_{p-m} with -+ i;
    cos/sin come from the plan's table `cs` of exp(2 pi i m/p). O(p^2) per butterfly."""
    fn, b = _new_function(mod, pass_name("g", forward, layout), (PTR, I64))
    ido, l1, cc, ch, wa, kn, inn, i0, cs, ip = fn.args  # plans keep full tables for these (plan.two_level)
    ca = CArith(b, layout.ty)
    sign = -1 if forward else 1
    slots = {name: b.alloca(layout.ty, name=name) for name in ("a_re", "a_im", "b_re", "b_im")}
    rot = b.alloca(I64, name="rot")
    half = b.lshr(ip, i64(1))
    zero = ca.const(0.0)

    def get(*names):
        return tuple(b.load(slots[nm]) for nm in names)

    def put(names, vals):
        for nm, v in zip(names, vals):
            b.store(v, slots[nm])

    with for_range(b, 0, kn, name="k") as k, for_range(b, 0, inn, layout.step, name="i") as i:
        base = b.mul(k, ip)

        def x(q):
            return layout.load(b, cc, b.add(i, b.mul(ido, b.add(base, q))))

        def out(m, y):
            has_tw = b.and_(b.icmp_signed(">", m, i64(0)), b.icmp_signed(">", ido, i64(1)))
            put(("a_re", "a_im"), y)
            with b.if_then(has_tw):
                w = layout.load_twiddle(b, wa, b.add(b.mul(b.sub(m, i64(1)), ido), b.add(i0, i)))
                put(("a_re", "a_im"), ca.mul(y, w, conj=forward))
            layout.store(b, ch, b.add(i, b.mul(ido, b.add(k, b.mul(l1, m)))), get("a_re", "a_im"))

        x0 = x(i64(0))
        put(("b_re", "b_im"), x0)
        with for_range(b, 1, b.add(half, i64(1)), name="q0") as q:
            t = ca.add(x(q), x(b.sub(ip, q)))
            put(("b_re", "b_im"), ca.add(get("b_re", "b_im"), t))
        out(i64(0), get("b_re", "b_im"))
        with for_range(b, 1, b.add(half, i64(1)), name="m") as m:
            put(("a_re", "a_im"), x0)
            put(("b_re", "b_im"), (zero, zero))
            b.store(i64(0), rot)
            with for_range(b, 1, b.add(half, i64(1)), name="q") as q:
                r = b.add(b.load(rot), m)
                r = b.select(b.icmp_signed(">=", r, ip), b.sub(r, ip), r)
                b.store(r, rot)
                xq, xr = x(q), x(b.sub(ip, q))
                c, s = Layout.load_twiddle(layout, b, cs, r)  # one root, splat over lanes
                ta, tb = get("a_re", "a_im"), get("b_re", "b_im")
                t, u = ca.add(xq, xr), ca.sub(xq, xr)
                put(("a_re", "a_im"), (b.fadd(ta[0], b.fmul(c, t[0], flags=FLAGS), flags=FLAGS),
                                       b.fadd(ta[1], b.fmul(c, t[1], flags=FLAGS), flags=FLAGS)))
                put(("b_re", "b_im"), (b.fadd(tb[0], b.fmul(s, u[0], flags=FLAGS), flags=FLAGS),
                                       b.fadd(tb[1], b.fmul(s, u[1], flags=FLAGS), flags=FLAGS)))
            a, ib = get("a_re", "a_im"), ca.mul_i(get("b_re", "b_im"), sign)
            ym, ypm = ca.add(a, ib), ca.sub(a, ib)
            out(m, ym)
            out(b.sub(ip, m), ypm)
    b.ret_void()
    return fn
