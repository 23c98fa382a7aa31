"""Transcendental and power rules. Real code calls mathfns.libm (libmvec vectors or scalar libm)."""

from __future__ import annotations

import math

from llvmlite import ir as L

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import OPDEFS

from . import complexops as C
from .builder import Builder
from .cast import convert
from .context import LowerCtx
from .mathfns import libm
from .rule_table import LIBM_RULE, out_dtype, rule
from .rules_arith import as_dtype, raise_missing

# complex versions of rows lowered through libm (OpDef.libm), where numpy's formula is simple
_COMPLEX_UNARY = {
    "exp": C.exp,
    "log": C.log,
    "sin": C.sin,
    "cos": C.cos,
    "sqrt": C.sqrt,
    "sinh": C.sinh,
    "cosh": C.cosh,
    "tanh": C.tanh,
    "tan": C.tan,
    "expm1": C.expm1,
    "log1p": C.log1p,
    "arcsin": C.libm_complex("casin"),
    "arccos": C.libm_complex("cacos"),
    "arctan": C.libm_complex("catan"),
    "arcsinh": C.libm_complex("casinh"),
    "arccosh": C.libm_complex("cacosh"),
    "arctanh": C.libm_complex("catanh"),
    "exp2": C.exp2,
    "log2": C.log2,
    "log10": C.log10,
}


@rule(LIBM_RULE)
def _libm_row(ctx: LowerCtx, op, *args):
    """A row naming a C math function (`libm="asinh"`): that function on real floats, the complex
    formula of _COMPLEX_UNARY on complex values."""
    dt = out_dtype(op)
    args = as_dtype(ctx, op, list(args), dt)
    if dt.is_complex:
        fn = _COMPLEX_UNARY.get(op.name)
        if fn is None or len(args) != 1:
            raise_missing(op, dt)
        return in_float64(ctx, dt, args[0], fn)
    if not dt.is_float:
        raise_missing(op, dt)
    return libm(ctx, OPDEFS[op.name].libm, *args)


def in_float64(ctx: LowerCtx, dt: DType, a, fn):
    """complex64 transcendentals run in float64 (no spurious overflow of cosh/exp intermediates)."""
    if dt != D.complex64:
        return fn(ctx, dt.real_dtype, a)
    wide = convert(ctx, a, D.complex64, D.complex128)
    return convert(ctx, fn(ctx, D.float64, wide), D.complex128, D.complex64)


@rule("sqrt")
def _sqrt(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    if dt.is_complex:
        return C.sqrt(ctx, dt.real_dtype, a)
    return ctx.intrinsic("sqrt", [a])


@rule("rsqrt")
def _rsqrt(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    if dt.is_complex:
        one = (ctx.const(dt.real_dtype, 1.0), ctx.const(dt.real_dtype, 0.0))
        return C.div(ctx, dt.real_dtype, one, C.sqrt(ctx, dt.real_dtype, a))
    return ctx.builder.fdiv(ctx.const(dt, 1.0), ctx.intrinsic("sqrt", [a]))


@rule("sigmoid")
def _sigmoid(ctx: LowerCtx, op, a):
    """z = exp(-|x|); s = 1/(1+z); x >= 0 ? s : z*s -- no overflow, exact tails for large |x|."""
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    if dt.is_complex:
        return in_float64(ctx, dt, a, C.sigmoid)
    if not dt.is_float:
        raise_missing(op, dt)
    f = ctx.builder
    one = ctx.const(dt, 1.0)
    z = libm(ctx, "exp", f.fneg(ctx.intrinsic("fabs", [a])))
    s = f.fdiv(one, f.fadd(one, z))
    r = f.select(f.fcmp_ordered(">=", a, ctx.const(dt, 0.0)), s, f.fmul(z, s))
    return f.select(f.fcmp_unordered("uno", a, a), a, r)


@rule("logaddexp", "logaddexp2")
def _logaddexp(ctx: LowerCtx, op, a, b):
    """numpy's npy_logaddexp(2): max + log1p(exp(-|a-b|)) (in base 2: scaled by ln 2), equal
    operands (infinities included) give a + log(2), a nan gives nan."""
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    if not dt.is_float:
        raise_missing(op, dt)
    f = ctx.builder
    base2 = op.name == "logaddexp2"
    d = f.fsub(a, b)
    hi = f.select(f.fcmp_ordered(">", d, ctx.const(dt, 0.0)), a, b)
    neg = f.fneg(ctx.intrinsic("fabs", [d]))
    if base2:  # log2(1 + 2^-t) = log1p(exp2(-t)) / ln 2
        corr = f.fmul(libm(ctx, "log1p", libm(ctx, "exp2", neg)), ctx.const(dt, 1 / math.log(2)))
    else:
        corr = libm(ctx, "log1p", libm(ctx, "exp", neg))
    r = f.select(f.fcmp_unordered("uno", d, d), d, f.fadd(hi, corr))
    tie = f.fadd(a, ctx.const(dt, 1.0 if base2 else math.log(2)))
    return f.select(f.fcmp_ordered("==", a, b), tie, r)


@rule("spacing")
def _spacing(ctx: LowerCtx, op, a):
    """numpy's npy_spacing: the gap to the next value away from zero (+0 and -0: the smallest
    positive subnormal); nan for infinities and nans."""
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    if not dt.is_float:
        raise_missing(op, dt)
    f = ctx.builder
    inf = ctx.const(dt, math.inf)
    away = f.select(f.fcmp_ordered("==", a, ctx.const(dt, 0.0)), inf, ctx.intrinsic("copysign", [inf, a]))
    r = f.fsub(libm(ctx, "nextafter", a, away), a)
    return f.select(f.fcmp_ordered("==", ctx.intrinsic("fabs", [a]), inf), ctx.const(dt, math.nan), r)


@rule("pow")
def _pow(ctx: LowerCtx, op, a, b):
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    if dt.is_complex:
        # integer exponents in the dtype (npymath's products), the rest in float64
        return C.pow(ctx, dt.real_dtype, a, b)
    if dt.is_float:
        return libm(ctx, "pow", a, b)
    if dt.is_bool:
        return ctx.builder.or_(a, ctx.builder.xor(b, ctx.const(dt, 1)))  # numpy: x**0 == 1
    fn = ctx.helper(("ipow", dt.name), lambda c: _build_ipow(c, dt))
    if ctx.error_slot is not None:  # numpy raises for a negative integer exponent
        _report_if_any(ctx, ctx.builder.icmp_signed("<", b, ctx.const(dt, 0)))
    return ctx.per_lane(fn, [a, b])


def _report_if_any(ctx: LowerCtx, cond) -> None:
    """Set the kernel's error slot when `cond` (i1 or a vector of i1) holds in any lane."""
    f = ctx.builder
    if isinstance(cond.type, L.VectorType):
        if ctx.lane_mask is not None:
            cond = f.and_(cond, ctx.lane_mask)
        n = cond.type.count
        reduce_or = ctx.function(f"llvm.vector.reduce.or.v{n}i1", L.IntType(1), [cond.type])
        cond = f.call(reduce_or, [cond])
    with f.if_then(cond, likely=False):
        f.store(L.Constant(L.IntType(64), 1), ctx.error_slot)


def _build_ipow(ctx: LowerCtx, dt: DType) -> L.Function:
    """Integer power by squaring (wrapping); a negative exponent gives 0 here, and kernels that
    have an error slot report it (numpy raises; the front end rejects constant ones)."""
    t = L.IntType(dt.bits)
    fn = L.Function(ctx.module, L.FunctionType(t, [t, t]), name=f"aot.ipow.{dt.name}")
    fn.linkage = "internal"
    base, exp = fn.args
    entry, loop, done = (
        fn.append_basic_block("entry"),
        fn.append_basic_block("loop"),
        fn.append_basic_block("done"),
    )
    b = Builder(entry)
    zero, one = L.Constant(t, 0), L.Constant(t, 1)
    neg = b.icmp_signed("<", exp, zero)
    b.cbranch(neg, done, loop)
    b.position_at_end(loop)
    acc = b.phi(t)
    x = b.phi(t)
    e = b.phi(t)
    acc.add_incoming(one, entry)
    x.add_incoming(base, entry)
    e.add_incoming(exp, entry)
    odd = b.trunc(b.and_(e, one), L.IntType(1))
    acc2 = b.select(odd, b.mul(acc, x), acc)
    x2 = b.mul(x, x)
    e2 = b.ashr(e, one)
    acc.add_incoming(acc2, loop)
    x.add_incoming(x2, loop)
    e.add_incoming(e2, loop)
    b.cbranch(b.icmp_signed("==", e2, zero), done, loop)
    b.position_at_end(done)
    res = b.phi(t)
    res.add_incoming(zero, entry)
    res.add_incoming(acc2, loop)
    b.ret(res)
    return fn
