"""Transcendental and power rules. Real code calls mathfns.libm (libmvec vectors or scalar libm)."""

from __future__ import annotations

from llvmlite import ir as L

from ir import dtypes as D
from ir.dtypes import DType

from . import complexops as C
from .cast import convert
from .context import LowerCtx
from .lowering import out_dtype, rule
from .mathfns import libm
from .rules_arith import as_dtype, raise_missing

# op name -> libm name; complex versions in complexops where numpy's formula is simple
_UNARY = {
    "exp": "exp",
    "expm1": "expm1",
    "log": "log",
    "log1p": "log1p",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "tanh": "tanh",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "erf": "erf",
}
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
}


@rule(*_UNARY)
def _unary(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    if dt.is_complex:
        fn = _COMPLEX_UNARY.get(op.name)
        if fn is None:
            raise_missing(op, dt)
        return in_float64(ctx, dt, a, fn)
    if not dt.is_float:
        raise_missing(op, dt)
    return libm(ctx, _UNARY[op.name], a)


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


@rule("arctan2")
def _arctan2(ctx: LowerCtx, op, y, x):
    dt = out_dtype(op)
    y, x = as_dtype(ctx, op, [y, x], dt)
    if not dt.is_float:
        raise_missing(op, dt)
    return libm(ctx, "atan2", y, x)


@rule("pow")
def _pow(ctx: LowerCtx, op, a, b):
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    if dt.is_complex:
        if dt == D.complex64:  # in float64, like the other complex64 transcendentals
            wa, wb = (convert(ctx, v, dt, D.complex128) for v in (a, b))
            return convert(ctx, C.pow(ctx, D.float64, wa, wb), D.complex128, dt)
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
    b = L.IRBuilder(entry)
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
