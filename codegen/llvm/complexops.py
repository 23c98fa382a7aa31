"""Complex arithmetic on (re, im) pairs of real scalars or vectors, following numpy.

numpy's complex ufuncs call glibc's C99 functions (cexp, clog, csinh, ccosh, ctanh, csin, ccos,
ctan, cpow: Annex G special values) or npymath's own code (expm1, log1p, the integer exponents of
power, the multiply, divide and reciprocal loops). The functions here compute the same results
inline, so they vectorise through libmvec like real code: the common path is glibc's formula for
finite parts, and the special values (infinite or nan parts, zero parts, real parts so large that
exp overflows in an intermediate) are patched in by selects, case by case as glibc 2.36 and
npymath handle them, in a block that runs only when some lane has one (_patch: the common path
pays one vector test). tests/aot/compile/test_complex_annex_g.py compares them with numpy.
"""

from __future__ import annotations

import math

from llvmlite import ir as L

from ir import dtypes as D
from ir.dtypes import DType

from .context import LowerCtx
from .mathfns import libm
from .types import F64

# glibc's t = (int) ((MAX_EXP - 1) * ln 2): past it cexp/csinh/ccosh take exp in steps of exp(t)
_T = {64: 709, 32: 88}
# (largest finite / 2, smallest normal, mantissa digits) per width, for clog's rescaling
_LIMITS = {64: (1.7976931348623157e308 / 2, 2.2250738585072014e-308, 53),
           32: (3.4028234663852886e38 / 2, 1.1754943508222875e-38, 24)}


def _c(ctx: LowerCtx, rt: DType, x: float):
    return ctx.const(rt, x)


def select(ctx: LowerCtx, cond, a, b):
    s = ctx.builder.select
    return (s(cond, a[0], b[0]), s(cond, a[1], b[1]))


def _abs(ctx: LowerCtx, v):
    return ctx.intrinsic("fabs", [v])


def _copysign(ctx: LowerCtx, mag, sign):
    return ctx.intrinsic("copysign", [mag, sign])


def _isnan(ctx: LowerCtx, v):
    return ctx.builder.fcmp_unordered("uno", v, v)


def _isinf(ctx: LowerCtx, rt: DType, v):
    return ctx.builder.fcmp_ordered("==", _abs(ctx, v), _c(ctx, rt, math.inf))


def _nonfinite(ctx: LowerCtx, rt: DType, v):
    """inf or nan"""
    return ctx.builder.fcmp_unordered(">=", _abs(ctx, v), _c(ctx, rt, math.inf))


def _is0(ctx: LowerCtx, rt: DType, v):
    return ctx.builder.fcmp_ordered("==", v, _c(ctx, rt, 0.0))


def _all(ctx: LowerCtx, *conds):
    out = conds[0]
    for c in conds[1:]:
        out = ctx.builder.and_(out, c)
    return out


def _any(ctx: LowerCtx, *conds):
    out = conds[0]
    for c in conds[1:]:
        out = ctx.builder.or_(out, c)
    return out


def _patch(ctx: LowerCtx, cond, fast, slow):
    """`fast`, with the lanes where `cond` holds replaced by `slow()`, which runs (in a block of its
    own) only when some lane needs it: the special values cost a test on the common path."""
    f = ctx.builder
    test = cond
    if isinstance(cond.type, L.VectorType):
        n = cond.type.count
        reduce_or = ctx.function(f"llvm.vector.reduce.or.v{n}i1", L.IntType(1), [cond.type])
        test = f.call(reduce_or, [cond])
    before = f.block
    with f.if_then(test, likely=False):
        patched = select(ctx, cond, slow(), fast)
        after = f.block
    out = []
    for p, q in zip(patched, fast, strict=True):
        phi = f.phi(p.type)
        phi.add_incoming(p, after)
        phi.add_incoming(q, before)
        out.append(phi)
    return tuple(out)


def add(ctx, a, b):
    return (ctx.builder.fadd(a[0], b[0]), ctx.builder.fadd(a[1], b[1]))


def sub(ctx, a, b):
    return (ctx.builder.fsub(a[0], b[0]), ctx.builder.fsub(a[1], b[1]))


def mul(ctx, a, b):
    """(ar br - ai bi) + i (ar bi + ai br), rounded after each product: npymath's cmul (power's
    integer exponents) and glibc's inline complex product."""
    f = ctx.builder
    return (f.fsub(f.fmul(a[0], b[0]), f.fmul(a[1], b[1])), f.fadd(f.fmul(a[0], b[1]), f.fmul(a[1], b[0])))


def has_fma(ctx: LowerCtx) -> bool:
    """Whether the target has fused multiply-add: x86-64 with FMA3 (where numpy's AVX2/AVX-512
    loops fuse npyv_muladdsub in simd_cmul) and aarch64 (NEON vfma)."""
    t = ctx.target
    if t.triple.startswith(("aarch64", "arm64")):
        return True
    return t.triple.startswith("x86_64") and (t.has_feature("fma") or t.cpu in ("x86-64-v3", "x86-64-v4"))


def mul_ufunc(ctx: LowerCtx, a, b):
    """numpy's multiply and square loops: with FMA, re = fma(ar, br, -(ai bi)), im = fma(ar, bi,
    ai br), so a product that overflows in one term keeps numpy's infinities (1e300+infj squared
    is -inf+infj, not nan+infj); the plain product otherwise."""
    if not has_fma(ctx):
        return mul(ctx, a, b)
    f = ctx.builder
    return (ctx.intrinsic("fma", [a[0], b[0], f.fneg(f.fmul(a[1], b[1]))]),
            ctx.intrinsic("fma", [a[0], b[1], f.fmul(a[1], b[0])]))


def _mul_c99(ctx: LowerCtx, rt: DType, a, b):
    """C's complex product as gcc compiles it (glibc's cpow): the plain product, and where both
    parts are nan (a branch), __muldc3's recovery of the infinities (Annex G.5.1)."""
    f = ctx.builder
    zero, one, inf = _c(ctx, rt, 0.0), _c(ctx, rt, 1.0), _c(ctx, rt, math.inf)
    ac, bd, ad, bc = f.fmul(a[0], b[0]), f.fmul(a[1], b[1]), f.fmul(a[0], b[1]), f.fmul(a[1], b[0])
    r = (f.fsub(ac, bd), f.fadd(ad, bc))

    def recover():
        ar, ai = a
        br, bi = b

        def box(v):  # an infinite factor becomes a unit in its direction, its other part a signed 0
            return _copysign(ctx, f.select(_isinf(ctx, rt, v), one, zero), v)

        def unnan(v):
            return f.select(_isnan(ctx, v), _copysign(ctx, zero, v), v)

        a_inf = f.or_(_isinf(ctx, rt, ar), _isinf(ctx, rt, ai))
        b_inf = f.or_(_isinf(ctx, rt, br), _isinf(ctx, rt, bi))
        ar, ai = f.select(a_inf, box(ar), ar), f.select(a_inf, box(ai), ai)
        br, bi = f.select(a_inf, unnan(br), br), f.select(a_inf, unnan(bi), bi)
        br, bi = f.select(b_inf, box(br), br), f.select(b_inf, box(bi), bi)
        ar, ai = f.select(b_inf, unnan(ar), ar), f.select(b_inf, unnan(ai), ai)
        overflow = _any(ctx, *(_isinf(ctx, rt, v) for v in (ac, bd, ad, bc)))
        overflow = f.and_(overflow, f.xor(f.or_(a_inf, b_inf), ctx.const(D.bool_, True)))
        ar, ai, br, bi = (f.select(overflow, unnan(v), v) for v in (ar, ai, br, bi))
        again = (f.fmul(inf, f.fsub(f.fmul(ar, br), f.fmul(ai, bi))),
                 f.fmul(inf, f.fadd(f.fmul(ar, bi), f.fmul(ai, br))))
        return select(ctx, _any(ctx, a_inf, b_inf, overflow), again, r)

    return _patch(ctx, f.and_(_isnan(ctx, r[0]), _isnan(ctx, r[1])), r, recover)


def div(ctx: LowerCtx, rt: DType, a, b):
    """Smith's algorithm, as numpy's complex true_divide (and npymath's cdiv)."""
    f = ctx.builder
    ar, ai = a
    br, bi = b
    abr = ctx.intrinsic("fabs", [br])
    abi = ctx.intrinsic("fabs", [bi])
    # |br| >= |bi|
    rat1 = f.fdiv(bi, br)
    scl1 = f.fdiv(_c(ctx, rt, 1.0), f.fadd(br, f.fmul(bi, rat1)))
    r1 = (f.fmul(f.fadd(ar, f.fmul(ai, rat1)), scl1), f.fmul(f.fsub(ai, f.fmul(ar, rat1)), scl1))
    # both zero: complex inf or nan
    r0 = (f.fdiv(ar, abr), f.fdiv(ai, abr))
    # |br| < |bi|
    rat2 = f.fdiv(br, bi)
    scl2 = f.fdiv(_c(ctx, rt, 1.0), f.fadd(bi, f.fmul(br, rat2)))
    r2 = (f.fmul(f.fadd(f.fmul(ar, rat2), ai), scl2), f.fmul(f.fsub(f.fmul(ai, rat2), ar), scl2))
    zero = _c(ctx, rt, 0.0)
    both0 = f.and_(f.fcmp_ordered("==", abr, zero), f.fcmp_ordered("==", abi, zero))
    first = select(ctx, both0, r0, r1)
    return select(ctx, f.fcmp_ordered(">=", abr, abi), first, r2)


def reciprocal(ctx: LowerCtx, rt: DType, a):
    """numpy's complex reciprocal loop: |y| <= |x| ? (1/d, -r/d) with r = y/x, d = x + y r
    : (r/d, -1/d) with r = x/y, d = x r + y (so 1/(2+0j) is 0.5-0j, and 1/0 is nan+nanj)."""
    f = ctx.builder
    x, y = a
    one = _c(ctx, rt, 1.0)
    r1 = f.fdiv(y, x)
    d1 = f.fadd(x, f.fmul(y, r1))
    r2 = f.fdiv(x, y)
    d2 = f.fadd(f.fmul(x, r2), y)
    first = f.fcmp_ordered("<=", _abs(ctx, y), _abs(ctx, x))
    return select(ctx, first, (f.fdiv(one, d1), f.fdiv(f.fneg(r1), d1)), (f.fdiv(r2, d2), f.fdiv(f.fneg(one), d2)))


def cabs(ctx, a):
    return libm(ctx, "hypot", a[0], a[1])


def _rescale(ctx: LowerCtx, rt: DType, x, parts, first: float):
    """glibc's cexp/csinh/ccosh for a real part x > t: the factors `parts` times exp(t) (`first`
    the first time: exp(t) or exp(t)/2), up to twice while x stays above t, and the reduced x."""
    f = ctx.builder
    t = _c(ctx, rt, float(_T[rt.bits]))
    for k in (first, math.exp(_T[rt.bits])):
        big = f.fcmp_ordered(">", x, t)
        x = f.select(big, f.fsub(x, t), x)
        kc = _c(ctx, rt, k)
        parts = [f.select(big, f.fmul(p, kc), p) for p in parts]
    return x, parts


def exp(ctx: LowerCtx, rt: DType, a):
    """glibc's cexp: exp(x) (cos y + i sin y). Where |x| > 709 or x is nan (a branch): exp(x)
    taken in steps (the finite parts of exp(710 + 1e-300j) stay finite), a zero y kept, and x =
    +-inf with y inf or nan giving inf+nanj for +inf and 0 (+-0 as y) for -inf."""
    f = ctx.builder
    x, y = a
    zero, inf = _c(ctx, rt, 0.0), _c(ctx, rt, math.inf)
    t = _c(ctx, rt, float(_T[rt.bits]))
    c, s = libm(ctx, "cos", y), libm(ctx, "sin", y)
    e = libm(ctx, "exp", x)
    fast = (f.fmul(e, c), f.fmul(e, s))  # a zero y stays (e is finite here)

    def slow():
        xr, (cs, ss) = _rescale(ctx, rt, x, [c, s], math.exp(_T[rt.bits]))
        er = libm(ctx, "exp", xr)
        r = (f.fmul(er, cs), f.fmul(er, ss))
        r = select(ctx, _is0(ctx, rt, y), (r[0], y), r)
        edge = select(ctx, f.fcmp_ordered(">", x, zero), (inf, f.fsub(y, y)), (zero, _copysign(ctx, zero, y)))
        return select(ctx, f.and_(_isinf(ctx, rt, x), _nonfinite(ctx, rt, y)), edge, r)

    return _patch(ctx, f.fcmp_unordered(">", _abs(ctx, x), t), fast, slow)


def _x2y2m1(ctx: LowerCtx, rt: DType, a, b):
    """a^2 + b^2 - 1 without cancellation error (glibc's __x2y2m1, for 0.5 <= a < 2, b <= a): the
    squares split exactly (by an FMA, or Dekker's splitting without one) and summed with their
    rounding errors."""
    f = ctx.builder
    split = _c(ctx, rt, 2.0 ** ((_LIMITS[rt.bits][2] + 1) // 2) + 1)
    fused = has_fma(ctx)

    def square(v):
        p = f.fmul(v, v)
        if fused:  # the rounding error of v*v is exactly fma(v, v, -p)
            return p, ctx.intrinsic("fma", [v, v, f.fneg(p)])
        t = f.fmul(v, split)
        hi = f.fsub(t, f.fsub(t, v))
        lo = f.fsub(v, hi)
        e = f.fadd(f.fadd(f.fsub(f.fmul(hi, hi), p), f.fmul(f.fmul(hi, lo), _c(ctx, rt, 2.0))), f.fmul(lo, lo))
        return p, e

    def two_sum(u, v):
        s = f.fadd(u, v)
        w = f.fsub(s, u)
        return s, f.fadd(f.fsub(u, f.fsub(s, w)), f.fsub(v, w))

    pa, ea = square(a)
    pb, eb = square(b)
    t, e0 = two_sum(pa, _c(ctx, rt, -1.0))
    s, e1 = two_sum(t, pb)
    return f.fadd(s, f.fadd(f.fadd(e0, e1), f.fadd(ea, eb)))


def log(ctx: LowerCtx, rt: DType, a):
    """glibc's clog: log|z| + i atan2(y, x). With h = max(|x|, |y|) and l = min: near |z| = 1 (h ==
    1, or 0.5 <= h < 2 and l < 1) log1p(h^2 + l^2 - 1) / 2, the sum exact as glibc's __x2y2m1
    (log(1+1e-20j) keeps its 5e-41); elsewhere log(hypot(x, y)), the parts scaled by 1/2 (huge)
    or 2^53 (subnormal) first (a branch)."""
    f = ctx.builder
    x, y = a
    half_max, min_normal, digits = _LIMITS[rt.bits]
    one, zero, half = _c(ctx, rt, 1.0), _c(ctx, rt, 0.0), _c(ctx, rt, 0.5)
    ax, ay = _abs(ctx, x), _abs(ctx, y)
    ge = f.fcmp_ordered(">=", ax, ay)
    hi, lo = f.select(ge, ax, ay), f.select(ge, ay, ax)  # a nan lands in lo or hi: never `near`
    # glibc's regions (h == 1; 1 < h < 2, l < 1; 0.5 <= h < 1 with l < eps/2 or h^2 + l^2 >= 0.5),
    # the last widened to all of 0.5 <= h < 1, l < 1: fewer tests, as accurate
    near = f.or_(f.fcmp_ordered("==", hi, one),
                 _all(ctx, f.fcmp_ordered(">=", hi, half), f.fcmp_ordered("<", hi, _c(ctx, rt, 2.0)),
                      f.fcmp_ordered("<", lo, one)))
    d = _x2y2m1(ctx, rt, hi, lo)

    def real_part(k=None, off=None):
        h = libm(ctx, "hypot", *((x, y) if k is None else (f.fmul(x, k), f.fmul(y, k))))
        far = libm(ctx, "log", h)
        return f.select(near, f.fmul(libm(ctx, "log1p", d), half), far if off is None else f.fadd(far, off))

    def scaled():  # huge or subnormal (or zero) parts: glibc's scaling by 1/2 or 2^53 first
        big = f.fcmp_ordered(">", hi, _c(ctx, rt, half_max))
        k = f.select(big, half, _c(ctx, rt, 2.0**digits))
        off = f.select(big, _c(ctx, rt, math.log(2)), _c(ctx, rt, -digits * math.log(2)))
        return (real_part(k, off), zero)

    rare = f.or_(f.fcmp_ordered(">", hi, _c(ctx, rt, half_max)), f.fcmp_ordered("<", hi, _c(ctx, rt, min_normal)))
    re = _patch(ctx, rare, (real_part(), zero), scaled)[0]
    return (re, libm(ctx, "atan2", y, x))


def scale(ctx: LowerCtx, rt: DType, a, k: float):
    """a * k for a real k: both parts scaled, so infinite or zero parts stay as they are (a
    complex constant k + 0j would add inf * 0 = nan)."""
    c = _c(ctx, rt, k)
    return (ctx.builder.fmul(a[0], c), ctx.builder.fmul(a[1], c))


# numpy's NPY_LOG2E and NPY_LOG10E, correctly rounded (1 / math.log(10) is one ulp below: log10(3+1j)
# had a real part of 0.49999999999999994 where numpy's is 0.5)
LOG2E = 1.4426950408889634
LOG10E = 0.4342944819032518


def log2(ctx: LowerCtx, rt: DType, a):
    return scale(ctx, rt, log(ctx, rt, a), LOG2E)  # numpy: clog(z) * LOG2E


def log10(ctx: LowerCtx, rt: DType, a):
    return scale(ctx, rt, log(ctx, rt, a), LOG10E)  # numpy: clog(z) * LOG10E


def exp2(ctx: LowerCtx, rt: DType, a):
    return exp(ctx, rt, scale(ctx, rt, a, math.log(2)))  # numpy: cexp(z * LOGE2)


def sqrt(ctx: LowerCtx, rt: DType, a):
    """csqrt: t = sqrt((|re| + |z|) / 2); branch cut on the negative real axis."""
    f = ctx.builder
    re, im = a
    zero, half, two = _c(ctx, rt, 0.0), _c(ctx, rt, 0.5), _c(ctx, rt, 2.0)
    t = ctx.intrinsic("sqrt", [f.fmul(f.fadd(ctx.intrinsic("fabs", [re]), cabs(ctx, a)), half)])
    pos = (t, f.fdiv(im, f.fmul(two, t)))
    neg = (f.fdiv(ctx.intrinsic("fabs", [im]), f.fmul(two, t)), ctx.intrinsic("copysign", [t, im]))
    r = select(ctx, f.fcmp_ordered(">=", re, zero), pos, neg)
    is0 = f.and_(f.fcmp_ordered("==", re, zero), f.fcmp_ordered("==", im, zero))
    r = select(ctx, is0, (zero, im), r)
    inf = _c(ctx, rt, float("inf"))
    im_inf = f.fcmp_ordered("==", ctx.intrinsic("fabs", [im]), inf)
    return select(ctx, im_inf, (inf, im), r)


def _sinh_cosh(ctx: LowerCtx, rt: DType, a, cosh: bool):
    """glibc's csinh (cosh False) and ccosh: (sinh x cos y, cosh x sin y) and (cosh x cos y, sinh x
    sin y); where |x| > 709, x is nan or y is not finite (a branch): exp(|x|)/2 in steps (as
    _rescale), and Annex G's special values."""
    f = ctx.builder
    x, y = a
    zero, one, inf = _c(ctx, rt, 0.0), _c(ctx, rt, 1.0), _c(ctx, rt, math.inf)
    t = _c(ctx, rt, float(_T[rt.bits]))
    c, s = libm(ctx, "cos", y), libm(ctx, "sin", y)
    sh, ch = libm(ctx, "sinh", x), libm(ctx, "cosh", x)
    fast = (f.fmul(ch, c), f.fmul(sh, s)) if cosh else (f.fmul(sh, c), f.fmul(ch, s))

    def slow():
        ax = _abs(ctx, x)
        neg = f.fcmp_ordered("<", x, zero)
        big = f.fcmp_ordered(">", ax, t)
        # the odd part takes x's sign: cos y in sinh's real part, sin y in cosh's imaginary part
        parts = [c, f.select(neg, f.fneg(s), s)] if cosh else [f.select(neg, f.fneg(c), c), s]
        rx, (pc, ps) = _rescale(ctx, rt, ax, parts, math.exp(_T[rt.bits]) / 2)
        ev = f.fadd(libm(ctx, "sinh", rx), libm(ctx, "cosh", rx))  # exp(rx) where big (rx >= 0)
        r = select(ctx, big, (f.fmul(ev, pc), f.fmul(ev, ps)), fast)
        y0 = _is0(ctx, rt, y)
        y_bad = _nonfinite(ctx, rt, y)
        nan_y = f.fsub(y, y)  # inf - inf or the nan itself
        if cosh:
            im0 = f.select(_isnan(ctx, x), y, f.fmul(_copysign(ctx, one, x), y))  # 0 signed as x * y
            r = select(ctx, y0, (r[0], im0), r)
            r = select(ctx, f.and_(_is0(ctx, rt, x), y_bad), (nan_y, zero), r)
        else:
            r = select(ctx, y0, (r[0], y), r)
            r = select(ctx, f.and_(_is0(ctx, rt, x), y_bad), (x, nan_y), r)
        return select(ctx, f.and_(_isinf(ctx, rt, x), y_bad), (inf, nan_y), r)

    rare = f.or_(f.fcmp_unordered(">", _abs(ctx, x), t), _nonfinite(ctx, rt, y))
    return _patch(ctx, rare, fast, slow)


def sinh(ctx: LowerCtx, rt: DType, a):
    return _sinh_cosh(ctx, rt, a, cosh=False)


def cosh(ctx: LowerCtx, rt: DType, a):
    return _sinh_cosh(ctx, rt, a, cosh=True)


def sin(ctx: LowerCtx, rt: DType, a):
    """csin z = -i csinh(i z), but glibc's csin for an infinite imaginary part and a real part inf
    or nan: (nan, +inf) whatever the signs (csinh's sign rules gave -inf for some)."""
    f = ctx.builder
    x, y = a
    t = sinh(ctx, rt, (f.fneg(y), x))
    odd = f.and_(_nonfinite(ctx, rt, x), _isinf(ctx, rt, y))
    return select(ctx, odd, (f.fsub(x, x), _c(ctx, rt, math.inf)), (t[1], f.fneg(t[0])))


def cos(ctx: LowerCtx, rt: DType, a):
    """ccos z = ccosh(i z)."""
    return cosh(ctx, rt, (ctx.builder.fneg(a[1]), a[0]))


def tanh(ctx: LowerCtx, rt: DType, a):
    """glibc's ctanh: (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y). Where |x| > 20, x is
    nan or y is not finite (a branch): the limit (sign x, sin y cos y / sinh^2 x), x = +-inf giving
    (sign x, +-0), y inf or nan giving nan + nan i for finite x (before the limit, as numpy's:
    tanh(1e300 + inf j) is not 1 + nan j) but x == 0 kept, a zero y kept."""
    f = ctx.builder
    x, y = a
    zero, one = _c(ctx, rt, 0.0), _c(ctx, rt, 1.0)
    s, c = libm(ctx, "sin", y), libm(ctx, "cos", y)
    sh, ch = libm(ctx, "sinh", x), libm(ctx, "cosh", x)
    sc = f.fmul(s, c)
    den = f.fadd(f.fmul(sh, sh), f.fmul(c, c))
    fast = (f.fdiv(f.fmul(sh, ch), den), f.fdiv(sc, den))
    limit = _c(ctx, rt, 20.0 if rt.bits == 64 else 9.0)

    def slow():
        big = f.fcmp_ordered(">", _abs(ctx, x), limit)
        sign_x = _copysign(ctx, one, x)
        r = select(ctx, big, (sign_x, f.fdiv(f.fdiv(sc, sh), sh)), fast)
        r = select(ctx, _is0(ctx, rt, y), (r[0], y), r)
        y_bad = _nonfinite(ctx, rt, y)
        nan_y = f.fsub(y, y)
        r = select(ctx, f.and_(f.not_(_nonfinite(ctx, rt, x)), y_bad), (nan_y, nan_y), r)
        r = select(ctx, f.and_(_is0(ctx, rt, x), y_bad), (x, _c(ctx, rt, math.nan)), r)
        return select(ctx, f.and_(_isinf(ctx, rt, x), y_bad), (sign_x, _copysign(ctx, zero, y)), r)

    rare = f.or_(f.fcmp_unordered(">", _abs(ctx, x), limit), _nonfinite(ctx, rt, y))
    return _patch(ctx, rare, fast, slow)


def tan(ctx: LowerCtx, rt: DType, a):
    """tan z = -i tanh(i z)."""
    f = ctx.builder
    t = tanh(ctx, rt, (f.fneg(a[1]), a[0]))
    return (t[1], f.fneg(t[0]))


def _widen(ctx: LowerCtx, rt: DType, a):
    if rt == D.float64:
        return a
    t = ctx.ty(D.float64)
    return tuple(ctx.builder.fpext(v, t) for v in a)


def _narrow(ctx: LowerCtx, rt: DType, a):
    if rt == D.float64:
        return a
    t = ctx.ty(rt)
    return tuple(ctx.builder.fptrunc(v, t) for v in a)


def pow(ctx: LowerCtx, rt: DType, a, b):
    """numpy's npy_cpow: a**0 == 1; 0**b is 0 for real(b) > 0, nan otherwise; an integer exponent
    |n| < 100 by npymath's products in the dtype (a, a*a, a*(a*a), binary powers, 1/p for n < 0);
    otherwise glibc's cpow, cexp(b * clog(a)) with C's complex product, in float64. Each of the two
    paths runs (a branch) only when some lane takes it; a constant exponent folds to one."""
    f = ctx.builder
    ar, ai = a
    br, bi = b
    zero, one, nan = _c(ctx, rt, 0.0), _c(ctx, rt, 1.0), _c(ctx, rt, math.nan)
    true = ctx.const(D.bool_, True)
    a0 = f.and_(_is0(ctx, rt, ar), _is0(ctx, rt, ai))
    b0 = f.and_(_is0(ctx, rt, br), _is0(ctx, rt, bi))
    is_int = _all(ctx, _is0(ctx, rt, bi), f.fcmp_ordered(">", br, _c(ctx, rt, -100.0)),
                  f.fcmp_ordered("<", br, _c(ctx, rt, 100.0)),
                  f.fcmp_ordered("==", ctx.intrinsic("trunc", [br]), br))
    rest = f.xor(f.or_(a0, b0), true)

    def general():
        wa, wb = _widen(ctx, rt, a), _widen(ctx, rt, b)
        return _narrow(ctx, rt, exp(ctx, D.float64, _mul_c99(ctx, D.float64, wb, log(ctx, D.float64, wa))))

    def integer():
        it = L.VectorType(L.IntType(32), ctx.vlen) if ctx.vlen > 1 else L.IntType(32)

        def ic(v):
            return L.Constant(it, [L.Constant(L.IntType(32), v)] * ctx.vlen) if ctx.vlen > 1 else L.Constant(it, v)

        n = f.fptosi(f.select(is_int, br, zero), it)
        absn = f.fptosi(f.select(is_int, _abs(ctx, br), zero), it)
        sq = mul(ctx, a, a)
        acc, p = (one, zero), a
        for k in range(7):  # |n| < 128: npymath's loop, p squared after each bit
            bit = f.icmp_signed("!=", f.and_(absn, ic(1 << k)), ic(0))
            acc = select(ctx, bit, mul(ctx, acc, p), acc)
            p = mul(ctx, p, p)
        acc = select(ctx, f.fcmp_ordered("<", br, zero), div(ctx, rt, (one, zero), acc), acc)
        r = select(ctx, f.icmp_signed("==", n, ic(3)), mul(ctx, a, sq), acc)
        r = select(ctx, f.icmp_signed("==", n, ic(2)), sq, r)
        return select(ctx, f.icmp_signed("==", n, ic(1)), a, r)

    r = _patch(ctx, f.and_(rest, f.xor(is_int, true)), (nan, nan), general)
    r = _patch(ctx, f.and_(rest, is_int), r, integer)
    r = select(ctx, a0, select(ctx, f.fcmp_ordered(">", br, zero), (zero, zero), (nan, nan)), r)
    return select(ctx, b0, (one, zero), r)


def sign(ctx: LowerCtx, rt: DType, a):
    """numpy 2: z / |z|, and 0 for 0; one infinite part gives its unit direction (nan if both are)."""
    f = ctx.builder
    m = cabs(ctx, a)
    zero, inf = _c(ctx, rt, 0.0), _c(ctx, rt, float("inf"))
    r = (f.fdiv(a[0], m), f.fdiv(a[1], m))
    r = select(ctx, f.fcmp_ordered("==", m, zero), (zero, zero), r)
    re_inf, im_inf = (f.fcmp_ordered("==", ctx.intrinsic("fabs", [v]), inf) for v in a)

    def unit(v):
        return f.select(f.fcmp_ordered(">", v, zero), _c(ctx, rt, 1.0), _c(ctx, rt, -1.0))

    r = select(ctx, re_inf, (unit(a[0]), zero), r)
    r = select(ctx, im_inf, (zero, unit(a[1])), r)
    nan = _c(ctx, rt, float("nan"))
    return select(ctx, f.and_(re_inf, im_inf), (nan, nan), r)


def expm1(ctx: LowerCtx, rt: DType, a):
    """numpy's nc_expm1: (expm1(x) cos y - 2 sin^2(y/2), exp(x) sin y)."""
    f = ctx.builder
    s = libm(ctx, "sin", f.fmul(a[1], _c(ctx, rt, 0.5)))
    re = f.fsub(
        f.fmul(libm(ctx, "expm1", a[0]), libm(ctx, "cos", a[1])), f.fmul(_c(ctx, rt, 2.0), f.fmul(s, s))
    )
    return (re, f.fmul(libm(ctx, "exp", a[0]), libm(ctx, "sin", a[1])))


def log1p(ctx: LowerCtx, rt: DType, a):
    """numpy's nc_log1p: log|1 + z| + i arg(1 + z)."""
    f = ctx.builder
    re1 = f.fadd(a[0], _c(ctx, rt, 1.0))
    return (libm(ctx, "log", libm(ctx, "hypot", re1, a[1])), libm(ctx, "atan2", a[1], re1))


def sigmoid(ctx: LowerCtx, rt: DType, a):
    f = ctx.builder
    one, zero = _c(ctx, rt, 1.0), _c(ctx, rt, 0.0)
    e = exp(ctx, rt, (f.fneg(a[0]), f.fneg(a[1])))
    return div(ctx, rt, (one, zero), (f.fadd(one, e[0]), e[1]))


def libm_complex(name: str):
    """A complex function of glibc's libm (`casin`, ...) called lane by lane on float64 parts.

    Used where numpy's own algorithm (which calls the same C99 functions) is long; x86-64 only,
    where clang lowers `double complex f(double complex)` to `{double, double} f(double, double)`."""

    def lower(ctx: LowerCtx, rt: DType, a):
        from ir.opdef import MissingRule

        if not ctx.target.triple.startswith("x86_64"):
            raise MissingRule("llvm", f"complex {name} on {ctx.target.triple}")
        b = ctx.builder
        pair = L.LiteralStructType([F64, F64])
        fn = ctx.function(name, pair, [F64, F64])
        if not isinstance(a[0].type, L.VectorType):
            r = b.call(fn, [a[0], a[1]])
            return (b.extract_value(r, 0), b.extract_value(r, 1))
        n = a[0].type.count
        out = [L.Constant(a[0].type, L.Undefined)] * 2
        for i in range(n):
            k = L.Constant(L.IntType(32), i)
            r = b.call(fn, [b.extract_element(a[0], k), b.extract_element(a[1], k)])
            out = [b.insert_element(out[j], b.extract_value(r, j), k) for j in range(2)]
        return tuple(out)

    return lower
