"""Complex arithmetic on (re, im) pairs of real scalars or vectors, following numpy's npymath.

Division is Smith's algorithm (numpy's); exp/log/sqrt follow C99 cexp/clog/csqrt for the
special values numpy tests. Transcendentals call the real functions in mathfns, so they
vectorise through libmvec like real code.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from .context import LowerCtx
from .mathfns import libm
from .types import F64


def _c(ctx: LowerCtx, rt: DType, x: float):
    return ctx.const(rt, x)


def select(ctx: LowerCtx, cond, a, b):
    s = ctx.builder.select
    return (s(cond, a[0], b[0]), s(cond, a[1], b[1]))


def add(ctx, a, b):
    return (ctx.builder.fadd(a[0], b[0]), ctx.builder.fadd(a[1], b[1]))


def sub(ctx, a, b):
    return (ctx.builder.fsub(a[0], b[0]), ctx.builder.fsub(a[1], b[1]))


def mul(ctx, a, b):
    f = ctx.builder
    return (f.fsub(f.fmul(a[0], b[0]), f.fmul(a[1], b[1])), f.fadd(f.fmul(a[0], b[1]), f.fmul(a[1], b[0])))


def div(ctx: LowerCtx, rt: DType, a, b):
    """Smith's algorithm, as numpy's complex true_divide."""
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


def cabs(ctx, a):
    return libm(ctx, "hypot", a[0], a[1])


def exp(ctx: LowerCtx, rt: DType, a):
    f = ctx.builder
    e = libm(ctx, "exp", a[0])
    r = (f.fmul(e, libm(ctx, "cos", a[1])), f.fmul(e, libm(ctx, "sin", a[1])))
    # a purely real argument keeps an exact zero imaginary part (exp(inf) * sin(0) would be nan)
    return select(ctx, f.fcmp_ordered("==", a[1], _c(ctx, rt, 0.0)), (e, a[1]), r)


def log(ctx: LowerCtx, rt: DType, a):
    return (libm(ctx, "log", cabs(ctx, a)), libm(ctx, "atan2", a[1], a[0]))


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


def sin(ctx: LowerCtx, rt: DType, a):
    f = ctx.builder
    return (
        f.fmul(libm(ctx, "sin", a[0]), libm(ctx, "cosh", a[1])),
        f.fmul(libm(ctx, "cos", a[0]), libm(ctx, "sinh", a[1])),
    )


def cos(ctx: LowerCtx, rt: DType, a):
    f = ctx.builder
    return (
        f.fmul(libm(ctx, "cos", a[0]), libm(ctx, "cosh", a[1])),
        f.fneg(f.fmul(libm(ctx, "sin", a[0]), libm(ctx, "sinh", a[1]))),
    )


def pow(ctx: LowerCtx, rt: DType, a, b):
    """exp(b * log(a)); as numpy 2: a**0 == 1, and 0**b is 0 when real(b) > 0, nan otherwise."""
    f = ctx.builder
    zero, one, nan = _c(ctx, rt, 0.0), _c(ctx, rt, 1.0), _c(ctx, rt, float("nan"))
    r = exp(ctx, rt, mul(ctx, b, log(ctx, rt, a)))
    a0 = f.and_(f.fcmp_ordered("==", a[0], zero), f.fcmp_ordered("==", a[1], zero))
    r = select(ctx, a0, select(ctx, f.fcmp_ordered(">", b[0], zero), (zero, zero), (nan, nan)), r)
    b0 = f.and_(f.fcmp_ordered("==", b[0], zero), f.fcmp_ordered("==", b[1], zero))
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



def sinh(ctx: LowerCtx, rt: DType, a):
    f = ctx.builder
    return (
        f.fmul(libm(ctx, "sinh", a[0]), libm(ctx, "cos", a[1])),
        f.fmul(libm(ctx, "cosh", a[0]), libm(ctx, "sin", a[1])),
    )


def cosh(ctx: LowerCtx, rt: DType, a):
    f = ctx.builder
    return (
        f.fmul(libm(ctx, "cosh", a[0]), libm(ctx, "cos", a[1])),
        f.fmul(libm(ctx, "sinh", a[0]), libm(ctx, "sin", a[1])),
    )


def tanh(ctx: LowerCtx, rt: DType, a):
    """(sinh 2x + i sin 2y) / (cosh 2x + cos 2y); for large |x| the limit (sign x, 4 sin y cos y e^-2|x|)."""
    f = ctx.builder
    two = _c(ctx, rt, 2.0)
    x2, y2 = f.fmul(two, a[0]), f.fmul(two, a[1])
    den = f.fadd(libm(ctx, "cosh", x2), libm(ctx, "cos", y2))
    r = (f.fdiv(libm(ctx, "sinh", x2), den), f.fdiv(libm(ctx, "sin", y2), den))
    ax = ctx.intrinsic("fabs", [a[0]])
    big = f.fcmp_ordered(">", ax, _c(ctx, rt, 20.0 if rt.bits == 64 else 9.0))
    lim_im = f.fmul(
        f.fmul(_c(ctx, rt, 4.0), f.fmul(libm(ctx, "sin", a[1]), libm(ctx, "cos", a[1]))),
        libm(ctx, "exp", f.fmul(_c(ctx, rt, -2.0), ax)),
    )
    lim = (ctx.intrinsic("copysign", [_c(ctx, rt, 1.0), a[0]]), lim_im)
    return select(ctx, big, lim, r)


def tan(ctx: LowerCtx, rt: DType, a):
    """tan z = -i tanh(i z)."""
    f = ctx.builder
    t = tanh(ctx, rt, (f.fneg(a[1]), a[0]))
    return (t[1], f.fneg(t[0]))


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
