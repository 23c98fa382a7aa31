"""Rules of the integer and float-exponent rows (aot/ops/number_theory.py, aot/ops/exponents.py):
gcd and lcm as numpy's npy_gcd/npy_lcm (Euclid on the absolute values as unsigned integers, in a
per-lane helper), ldexp through LLVM's ldexp intrinsic (numpy clamps an int64 exponent to int32),
and the frexp exponent from the float's bits (subnormals scaled into the normal range first)."""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType, float64, int32

from .builder import Builder
from .cast import convert
from .context import LowerCtx
from .rule_table import in_dtypes, out_dtype, rule
from .rules_arith import as_dtype, raise_missing


# --- gcd / lcm -------------------------------------------------------------------------------------
def _build_gcd(ctx: LowerCtx, dt: DType, lcm: bool) -> L.Function:
    """`T aot.{gcd,lcm}.T(T a, T b)`: on |a| and |b| as unsigned (npy_gcdu: while a != 0 { c = a;
    a = b % a; b = c }); lcm is a / gcd * b (0 when the gcd is 0)."""
    t = L.IntType(dt.bits)
    fn = L.Function(ctx.module, L.FunctionType(t, [t, t]), name=f"aot.{'lcm' if lcm else 'gcd'}.{dt.name}")
    fn.linkage = "internal"
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = Builder(entry)
    zero = L.Constant(t, 0)
    ua, ub = (b.select(b.icmp_signed("<", v, zero), b.neg(v), v) for v in fn.args)
    b.cbranch(b.icmp_unsigned("==", ua, zero), done, loop)
    b.position_at_end(loop)
    x, y = b.phi(t), b.phi(t)
    x.add_incoming(ua, entry)
    y.add_incoming(ub, entry)
    r = b.urem(y, x)
    x.add_incoming(r, loop)
    y.add_incoming(x, loop)
    b.cbranch(b.icmp_unsigned("==", r, zero), done, loop)
    b.position_at_end(done)
    g = b.phi(t)
    g.add_incoming(ub, entry)
    g.add_incoming(x, loop)
    if not lcm:
        b.ret(g)
        return fn
    safe = b.select(b.icmp_unsigned("==", g, zero), L.Constant(t, 1), g)
    b.ret(b.select(b.icmp_unsigned("==", g, zero), zero, b.mul(b.udiv(ua, safe), ub)))
    return fn


@rule("gcd", "lcm")
def _gcd(ctx: LowerCtx, op, a, b):
    dt = out_dtype(op)
    if not dt.is_int:
        raise_missing(op, dt)
    a, b = as_dtype(ctx, op, [a, b], dt)
    lcm = op.name == "lcm"
    fn = ctx.helper((op.name, dt.name), lambda c: _build_gcd(c, dt, lcm))
    return ctx.per_lane(fn, [a, b])


# --- ldexp -----------------------------------------------------------------------------------------
def _vector_of(t: L.Type, like) -> L.Type:
    return L.VectorType(t, like.type.count) if isinstance(like.type, L.VectorType) else t


def _suffix(t: L.Type) -> str:
    if isinstance(t, L.VectorType):
        return f"v{t.count}{_suffix(t.element)}"
    return f"i{t.width}" if isinstance(t, L.IntType) else {"float": "f32", "double": "f64"}[str(t)]


@rule("ldexp")
def _ldexp(ctx: LowerCtx, op, x, n):
    dt = out_dtype(op)
    if not dt.is_float:
        raise_missing(op, dt)
    x = convert(ctx, x, in_dtypes(op)[0], dt)
    ndt = in_dtypes(op)[1]
    f = ctx.builder
    if ndt.bits > 32:  # numpy's int64 loop: an exponent outside int32 saturates
        lo, hi = ctx.const(ndt, -(2**31)), ctx.const(ndt, 2**31 - 1)
        n = f.select(f.icmp_signed("<", n, lo), lo, f.select(f.icmp_signed(">", n, hi), hi, n))
    n = convert(ctx, n, ndt, int32)
    fn = ctx.function(f"llvm.ldexp.{_suffix(x.type)}.{_suffix(n.type)}", x.type, [x.type, n.type])
    return f.call(fn, [x, n])


# --- frexp's exponent ------------------------------------------------------------------------------
_BITS = {  # float dtype -> (int bits, mantissa bits, exponent mask, bias - 1, subnormal scale 2**s)
    "f64": (64, 52, 0x7FF, 1022, 54),
    "f32": (32, 23, 0xFF, 126, 25),
}


@rule("frexp_exponent")
def _frexp_exponent(ctx: LowerCtx, op, x):
    """e with x = m * 2**e, 0.5 <= |m| < 1 (0 for zeros, infinities and nans), as C's frexp."""
    src = in_dtypes(op)[0]
    dt = src if src.is_float else float64
    x = convert(ctx, x, src, dt)
    bits, mant, mask, bias, scale = _BITS["f64" if dt == float64 else "f32"]
    f = ctx.builder
    it = _vector_of(L.IntType(bits), x)
    a = ctx.intrinsic("fabs", [x])
    sub = f.fcmp_ordered("<", a, ctx.const(dt, float.fromhex("0x1p-1022") if dt == float64
                                            else float.fromhex("0x1p-126")))
    y = f.select(sub, f.fmul(a, ctx.const(dt, 2.0 ** scale)), a)
    ibits = L.IntType(bits)

    def c(v):
        k = L.Constant(ibits, v)
        return L.Constant(it, [k] * it.count) if isinstance(it, L.VectorType) else k

    e = f.and_(f.lshr(f.bitcast(y, it), c(mant)), c(mask))
    e = f.sub(f.sub(e, c(bias)), f.select(sub, c(scale), c(0)))
    special = f.or_(f.fcmp_ordered("==", x, ctx.const(dt, 0.0)),
                    f.fcmp_unordered("uno", f.fsub(x, x), f.fsub(x, x)))  # inf - inf and nan are nan
    e = f.select(special, c(0), e)
    return e if bits == 32 else f.trunc(e, _vector_of(L.IntType(32), x))

