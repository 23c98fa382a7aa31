"""Arithmetic, comparison, logical, selection and conversion rules (numpy semantics).

Integer arithmetic wraps (no nsw/nuw flags); integer division and remainder by zero give 0 (numpy
returns 0 and warns) and never execute an LLVM `sdiv` that could trap.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType, bool_, int32, int64, promote
from ir.opdef import MissingRule

from . import complexops as C
from . import division
from .cast import convert
from .context import LowerCtx
from .rule_table import in_dtypes, out_dtype, rule


def as_dtype(ctx: LowerCtx, op, vals, dt: DType) -> list:
    return [convert(ctx, v, s, dt) for v, s in zip(vals, in_dtypes(op), strict=False)]


def _kind(dt: DType) -> str:
    return "c" if dt.is_complex else "f" if dt.is_float else "i"


# --- + - * -------------------------------------------------------------------------------------
def _binary(int_fn, float_fn, complex_fn):
    def lower(ctx: LowerCtx, op, a, b):
        dt = out_dtype(op)
        a, b = as_dtype(ctx, op, [a, b], dt)
        f = ctx.builder
        if dt.is_complex:
            return complex_fn(ctx, a, b)
        if dt.is_bool:  # numpy: add -> or, mul -> and on bools
            return int_fn(f, a, b, bool_=True)
        return (float_fn if dt.is_float else int_fn)(f, a, b)

    return lower


rule("add")(
    _binary(
        lambda f, a, b, bool_=False: f.or_(a, b) if bool_ else f.add(a, b),
        lambda f, a, b: f.fadd(a, b),
        C.add,
    )
)
rule("sub")(
    _binary(
        lambda f, a, b, bool_=False: f.xor(a, b) if bool_ else f.sub(a, b),
        lambda f, a, b: f.fsub(a, b),
        C.sub,
    )
)
rule("mul")(
    _binary(
        lambda f, a, b, bool_=False: f.and_(a, b) if bool_ else f.mul(a, b),
        lambda f, a, b: f.fmul(a, b),
        C.mul_ufunc,
    )
)


@rule("div")
def _div(ctx: LowerCtx, op, a, b):
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    if dt.is_complex:
        return C.div(ctx, dt.real_dtype, a, b)
    if division.applies(ctx, b):  # a row's divisor: a reciprocal and two FMAs, the same quotient
        return division.divide(ctx, a, b)
    return ctx.builder.fdiv(a, b)


# --- integer floor division and remainder -----------------------------------------------------
def _safe_divisor(ctx: LowerCtx, dt: DType, a, b):
    """(divisor with 0 and the MIN/-1 overflow replaced by 1, b == 0 mask, overflow mask)."""
    f = ctx.builder
    zero, one = ctx.const(dt, 0), ctx.const(dt, 1)
    bz = f.icmp_signed("==", b, zero)
    ovf = f.and_(
        f.icmp_signed("==", a, ctx.const(dt, -(2 ** (dt.bits - 1)))),
        f.icmp_signed("==", b, ctx.const(dt, -1)),
    )
    return f.select(f.or_(bz, ovf), one, b), bz, ovf


def int_floordiv(ctx: LowerCtx, dt: DType, a, b):
    f = ctx.builder
    d, bz, ovf = _safe_divisor(ctx, dt, a, b)
    q = f.sdiv(a, d)
    r = f.srem(a, d)
    zero = ctx.const(dt, 0)
    adjust = f.and_(f.icmp_signed("!=", r, zero), f.icmp_signed("<", f.xor(r, b), zero))
    q = f.sub(q, f.zext(adjust, q.type))
    q = f.select(ovf, a, q)  # MIN // -1 wraps to MIN, as numpy
    return f.select(bz, zero, q)


def int_mod(ctx: LowerCtx, dt: DType, a, b):
    f = ctx.builder
    d, bz, ovf = _safe_divisor(ctx, dt, a, b)
    r = f.srem(a, d)
    zero = ctx.const(dt, 0)
    adjust = f.and_(f.icmp_signed("!=", r, zero), f.icmp_signed("<", f.xor(r, b), zero))
    r = f.select(adjust, f.add(r, b), r)
    return f.select(f.or_(bz, ovf), zero, r)


def float_divmod(ctx: LowerCtx, dt: DType, a, b):
    """numpy's npy_divmod: (floordiv, mod), including its b == 0 and signed-zero cases."""
    f = ctx.builder
    zero, one, half = ctx.const(dt, 0.0), ctx.const(dt, 1.0), ctx.const(dt, 0.5)
    mod = f.frem(a, b)
    div = f.fdiv(f.fsub(a, mod), b)
    mod_nz = f.fcmp_unordered("!=", mod, zero)
    flip = f.and_(mod_nz, f.xor(f.fcmp_ordered("<", b, zero), f.fcmp_ordered("<", mod, zero)))
    mod = f.select(flip, f.fadd(mod, b), mod)
    div = f.select(flip, f.fsub(div, one), div)
    mod = f.select(mod_nz, mod, ctx.intrinsic("copysign", [zero, b]))
    fl = ctx.intrinsic("floor", [div])
    fl = f.select(f.fcmp_ordered(">", f.fsub(div, fl), half), f.fadd(fl, one), fl)
    adiv = f.fdiv(a, b)
    fl = f.select(f.fcmp_unordered("!=", div, zero), fl, ctx.intrinsic("copysign", [zero, adiv]))
    b0 = f.fcmp_ordered("==", b, zero)
    return f.select(b0, adiv, fl), f.select(b0, f.frem(a, b), mod)


@rule("floordiv")
def _floordiv(ctx: LowerCtx, op, a, b):
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    if dt.is_float:
        return float_divmod(ctx, dt, a, b)[0]
    return int_floordiv(ctx, dt, a, b)


@rule("mod")
def _mod(ctx: LowerCtx, op, a, b):
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    if dt.is_float:
        return float_divmod(ctx, dt, a, b)[1]
    return int_mod(ctx, dt, a, b)


@rule("fmod")
def _fmod(ctx: LowerCtx, op, a, b):
    """C's fmod (LLVM's frem); integers truncate, and x % 0 and MIN % -1 give 0, as numpy."""
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    f = ctx.builder
    if dt.is_float:
        return f.frem(a, b)
    d, bz, ovf = _safe_divisor(ctx, dt, a, b)
    return f.select(f.or_(bz, ovf), ctx.const(dt, 0), f.srem(a, d))


@rule("copysign")
def _copysign(ctx: LowerCtx, op, a, b):
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    return ctx.intrinsic("copysign", [a, b])


@rule("heaviside")
def _heaviside(ctx: LowerCtx, op, x, h):
    """numpy's: 0 below zero, h at (either) zero, 1 above, nan for nan."""
    dt = out_dtype(op)
    x, h = as_dtype(ctx, op, [x, h], dt)
    f = ctx.builder
    zero = ctx.const(dt, 0.0)
    r = f.select(f.fcmp_ordered("<", x, zero), zero, ctx.const(dt, 1.0))
    r = f.select(f.fcmp_ordered("==", x, zero), h, r)
    return f.select(f.fcmp_unordered("uno", x, x), x, r)


# --- unary arithmetic ---------------------------------------------------------------------------
@rule("neg")
def _neg(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    f = ctx.builder
    if dt.is_complex:
        return (f.fneg(a[0]), f.fneg(a[1]))
    if dt.is_bool:
        return f.xor(a, ctx.const(dt, 1))
    return f.fneg(a) if dt.is_float else f.sub(ctx.const(dt, 0), a)


@rule("abs")
def _abs(ctx: LowerCtx, op, a):
    src, dt = in_dtypes(op)[0], out_dtype(op)
    f = ctx.builder
    if src.is_complex:
        return convert(ctx, C.cabs(ctx, a), src.real_dtype, dt)
    (a,) = as_dtype(ctx, op, [a], dt)
    if dt.is_float:
        return ctx.intrinsic("fabs", [a])
    if dt.is_bool:
        return a
    return f.select(f.icmp_signed("<", a, ctx.const(dt, 0)), f.sub(ctx.const(dt, 0), a), a)


@rule("sign")
def _sign(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    f = ctx.builder
    if dt.is_complex:
        return C.sign(ctx, dt.real_dtype, a)
    if dt.is_bool:
        return a
    zero, one, m1 = ctx.const(dt, 0), ctx.const(dt, 1), ctx.const(dt, -1)
    if dt.is_int:
        return f.select(f.icmp_signed(">", a, zero), one, f.select(f.icmp_signed("<", a, zero), m1, zero))
    # numpy: sign(+-0) is +0, sign(nan) is nan
    rest = f.select(f.fcmp_unordered("uno", a, a), a, zero)
    return f.select(f.fcmp_ordered(">", a, zero), one, f.select(f.fcmp_ordered("<", a, zero), m1, rest))


@rule("square")
def _square(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    f = ctx.builder
    if dt.is_complex:
        return C.mul_ufunc(ctx, a, a)
    if dt.is_bool:
        return a
    return f.fmul(a, a) if dt.is_float else f.mul(a, a)


@rule("reciprocal")
def _reciprocal(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    if dt.is_complex:
        return C.reciprocal(ctx, dt.real_dtype, a)
    if dt.is_float:
        return ctx.builder.fdiv(ctx.const(dt, 1.0), a)
    if dt.is_bool:
        return a
    # numpy: C's truncating 1 / x, and the integer minimum for x == 0
    f = ctx.builder
    zero = f.icmp_signed("==", a, ctx.const(dt, 0))
    q = f.sdiv(ctx.const(dt, 1), f.select(zero, ctx.const(dt, 1), a))
    return f.select(zero, ctx.const(dt, -(2 ** (dt.bits - 1))), q)


# --- min / max / clip / where ---------------------------------------------------------------------
def _max(ctx: LowerCtx, dt: DType, a, b, greater: bool):
    """numpy's maximum/minimum: nan propagates; on ties real floats give b (np.maximum(0.0, -0.0)
    is -0.0: `(a > b || isnan(a)) ? a : b`), complex ones a (its loop tests a >= b)."""
    f = ctx.builder
    if dt.is_complex:
        a_nan = f.fcmp_unordered("uno", a[0], a[1])
        keep = f.or_(a_nan, _complex_compare(ctx, "ge" if greater else "le", a, b))
        return C.select(ctx, keep, a, b)
    if dt.is_float:
        keep = f.or_(f.fcmp_ordered(">" if greater else "<", a, b), f.fcmp_unordered("uno", a, a))
    elif dt.is_bool:
        keep = f.icmp_unsigned(">=" if greater else "<=", a, b)
    else:
        keep = f.icmp_signed(">=" if greater else "<=", a, b)
    return f.select(keep, a, b)


@rule("maximum", "minimum")
def _maximum(ctx: LowerCtx, op, a, b):
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    return _max(ctx, dt, a, b, op.name == "maximum")


@rule("clip")
def _clip(ctx: LowerCtx, op, x, lo, hi):
    """numpy's clip: x, or the bound it crosses; a nan (in x or a bound) propagates. Real ties keep
    x, unlike maximum/minimum (clip(-0.0, 0.0, 1.0) is -0.0, clip(0.0, -0.0, 1.0) is +0.0); complex
    ties give the bound (its loop keeps x only when x > lo, x < hi: clip(-0-0j, 0, 1) is 0+0j)."""
    dt = out_dtype(op)
    x, lo, hi = as_dtype(ctx, op, [x, lo, hi], dt)
    if dt.is_complex:
        return _complex_clip_bound(ctx, _complex_clip_bound(ctx, x, lo, True), hi, False)
    return _clip_bound(ctx, dt, _clip_bound(ctx, dt, x, lo, True), hi, False)


def _complex_clip_bound(ctx: LowerCtx, a, b, lower: bool):
    """a where it is nan or strictly inside the bound b, else b; the order is numpy's plain CGT/CLT
    (the imaginary parts decide only between equal real parts: 1+0j > nanj)."""
    f = ctx.builder
    pred = ">" if lower else "<"
    inside = f.select(f.fcmp_ordered("==", a[0], b[0]), f.fcmp_ordered(pred, a[1], b[1]),
                      f.fcmp_ordered(pred, a[0], b[0]))
    return C.select(ctx, f.or_(f.fcmp_unordered("uno", a[0], a[1]), inside), a, b)


def _clip_bound(ctx: LowerCtx, dt: DType, a, b, lower: bool):
    """a clipped at the bound b from below (lower) or above: b where a crosses it or b is nan."""
    f = ctx.builder
    pred = "<" if lower else ">"
    if dt.is_float:
        cross = f.or_(f.fcmp_ordered(pred, a, b), f.fcmp_unordered("uno", b, b))
    elif dt.is_bool:
        cross = f.icmp_unsigned(pred, a, b)
    else:
        cross = f.icmp_signed(pred, a, b)
    return f.select(cross, b, a)


@rule("where")
def _where(ctx: LowerCtx, op, c, x, y):
    dt = out_dtype(op)
    c = convert(ctx, c, in_dtypes(op)[0], bool_)
    x, y = (convert(ctx, v, s, dt) for v, s in zip((x, y), in_dtypes(op)[1:], strict=False))
    if dt.is_complex:
        return C.select(ctx, c, x, y)
    return ctx.builder.select(c, x, y)


def _bool() -> DType:
    return bool_


# --- comparisons ---------------------------------------------------------------------------------
_FCMP = {
    "eq": ("==", True),
    "ne": ("!=", False),
    "lt": ("<", True),
    "le": ("<=", True),
    "gt": (">", True),
    "ge": (">=", True),
}


@rule(*_FCMP)
def _compare(ctx: LowerCtx, op, a, b):
    dt = promote(*in_dtypes(op))
    a, b = as_dtype(ctx, op, [a, b], dt)
    f = ctx.builder
    pred, ordered = _FCMP[op.name]
    if dt.is_complex:
        return _complex_compare(ctx, op.name, a, b)
    if dt.is_float:
        return f.fcmp_ordered(pred, a, b) if ordered else f.fcmp_unordered(pred, a, b)
    if dt.is_bool:
        return f.icmp_unsigned(pred, a, b)
    return f.icmp_signed(pred, a, b)


def _complex_compare(ctx: LowerCtx, name: str, a, b):
    """numpy's lexicographic complex order (its CGT/CGE/CLT/CLE macros, nan-aware)."""
    f = ctx.builder
    eq_re = f.fcmp_ordered("==", a[0], b[0])
    if name in ("eq", "ne"):
        eq = f.and_(eq_re, f.fcmp_ordered("==", a[1], b[1]))
        return eq if name == "eq" else f.not_(eq)
    strict = {"lt": "<", "le": "<", "gt": ">", "ge": ">"}[name]
    tie = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}[name]
    ims_ordered = f.fcmp_ordered("ord", a[1], b[1])
    first = f.and_(f.fcmp_ordered(strict, a[0], b[0]), ims_ordered)
    return f.or_(first, f.and_(eq_re, f.fcmp_ordered(tie, a[1], b[1])))


# --- logical ----------------------------------------------------------------------------------------
def _as_bools(ctx: LowerCtx, op, vals):
    return [convert(ctx, v, s, _bool()) for v, s in zip(vals, in_dtypes(op), strict=False)]


@rule("logical_and", "logical_or", "logical_xor")
def _logical(ctx: LowerCtx, op, a, b):
    a, b = _as_bools(ctx, op, [a, b])
    f = ctx.builder
    return {"logical_and": f.and_, "logical_or": f.or_, "logical_xor": f.xor}[op.name](a, b)


@rule("logical_not")
def _logical_not(ctx: LowerCtx, op, a):
    (a,) = _as_bools(ctx, op, [a])
    return ctx.builder.xor(a, ctx.const(_bool(), 1))


# --- bitwise ----------------------------------------------------------------------------------------
_BITWISE = {"bitwise_and": "and_", "bitwise_or": "or_", "bitwise_xor": "xor"}


@rule(*_BITWISE)
def _bitwise(ctx: LowerCtx, op, a, b):
    a, b = as_dtype(ctx, op, [a, b], out_dtype(op))
    return getattr(ctx.builder, _BITWISE[op.name])(a, b)


@rule("invert")
def _invert(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    return ctx.builder.xor(a, ctx.const(dt, 1 if dt.is_bool else -1))  # all ones (an i1 bool: true)


@rule("left_shift", "right_shift")
def _shift(ctx: LowerCtx, op, a, b):
    """numpy's npy_lshift/npy_rshift: a count that is not below the width, compared unsigned (so
    negative counts too), gives 0, or the sign fill for right shifts; for LLVM it would be poison."""
    dt = out_dtype(op)
    a, b = as_dtype(ctx, op, [a, b], dt)
    f = ctx.builder
    top = ctx.const(dt, dt.bits - 1)
    in_range = f.icmp_unsigned("<=", b, top)
    if op.name == "left_shift":
        return f.select(in_range, f.shl(a, b), ctx.const(dt, 0))  # the poison lane is not selected
    return f.ashr(a, f.select(in_range, b, top))


@rule("signbit")
def _signbit(ctx: LowerCtx, op, a):
    """The sign bit (set for -0.0 and negative nans); integers: x < 0; bools: never."""
    src = in_dtypes(op)[0]
    f = ctx.builder
    if src.is_bool:
        return ctx.const(bool_, False)
    if src.is_int:
        return f.icmp_signed("<", a, ctx.const(src, 0))
    it = int64 if src.bits == 64 else int32
    bits_t = L.IntType(src.bits)
    if isinstance(a.type, L.VectorType):
        bits_t = L.VectorType(bits_t, a.type.count)
    return f.icmp_signed("<", f.bitcast(a, bits_t), ctx.const(it, 0))


@rule("isnan", "isinf", "isfinite")
def _isclass(ctx: LowerCtx, op, a):
    src = in_dtypes(op)[0]
    if not src.is_inexact:
        return ctx.const(_bool(), op.name == "isfinite")
    parts = a if src.is_complex else (a,)
    rt = src.real_dtype
    f = ctx.builder
    inf = ctx.const(rt, float("inf"))
    if op.name == "isnan":
        tests = [f.fcmp_unordered("uno", p, p) for p in parts]
        return tests[0] if len(tests) == 1 else f.or_(*tests)
    if op.name == "isinf":
        tests = [f.fcmp_ordered("==", ctx.intrinsic("fabs", [p]), inf) for p in parts]
        return tests[0] if len(tests) == 1 else f.or_(*tests)
    tests = [f.fcmp_ordered("<", ctx.intrinsic("fabs", [p]), inf) for p in parts]
    return tests[0] if len(tests) == 1 else f.and_(*tests)


# --- rounding -------------------------------------------------------------------------------------
_ROUND = {"floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "roundeven"}


@rule(*_ROUND)
def _round(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    decimals = int(op.attrs.get("decimals", 0))
    if dt.is_complex:
        if op.name != "round":
            raise_missing(op, dt)
        return tuple(_round_float(ctx, dt.real_dtype, p, decimals) for p in a)
    if dt.is_float:
        if op.name == "round":
            return _round_float(ctx, dt, a, decimals)
        return ctx.intrinsic(_ROUND[op.name], [a])
    if decimals < 0:
        raise_missing(op, dt)
    return a  # integers and bools are already integral


def _round_float(ctx: LowerCtx, dt: DType, a, decimals: int):
    """numpy's round: rint(x * 10**d) / 10**d (d < 0: rint(x / 10**-d) * 10**-d), half to even."""
    if decimals == 0:
        return ctx.intrinsic("roundeven", [a])
    f = ctx.builder
    scale = ctx.const(dt, 10.0 ** abs(decimals))
    if decimals > 0:
        return f.fdiv(ctx.intrinsic("roundeven", [f.fmul(a, scale)]), scale)
    return f.fmul(ctx.intrinsic("roundeven", [f.fdiv(a, scale)]), scale)


def raise_missing(op, dt: DType):
    raise MissingRule("llvm", f"{op.name} on {dt}")


# --- conversions and complex parts -----------------------------------------------------------------
@rule("cast")
def _cast(ctx: LowerCtx, op, a):
    return convert(ctx, a, in_dtypes(op)[0], out_dtype(op))


@rule("real", "imag")
def _real_imag(ctx: LowerCtx, op, a):
    src, dt = in_dtypes(op)[0], out_dtype(op)
    if src.is_complex:
        return convert(ctx, a[0] if op.name == "real" else a[1], src.real_dtype, dt)
    return convert(ctx, a, src, dt) if op.name == "real" else ctx.const(dt, 0)


@rule("conj")
def _conj(ctx: LowerCtx, op, a):
    dt = out_dtype(op)
    (a,) = as_dtype(ctx, op, [a], dt)
    return (a[0], ctx.builder.fneg(a[1])) if dt.is_complex else a


@rule("complex")
def _complex(ctx: LowerCtx, op, re, im):
    rt = out_dtype(op).real_dtype
    re, im = as_dtype(ctx, op, [re, im], rt)
    return (re, im)


@rule("constant", "full")
def _constant(ctx: LowerCtx, op):
    """A scalar constant inside a kernel body (tensor constants are lowered by the graph entry)."""
    dt = out_dtype(op)
    value = op.attrs["value"]
    if hasattr(value, "shape") and getattr(value, "size", 1) != 1:
        raise ValueError(
            f"{op.name}: a constant inside a kernel body must be a scalar, got shape {value.shape}"
        )
    value = (
        complex(value.item() if hasattr(value, "item") else value)
        if dt.is_complex
        else (value.item() if hasattr(value, "item") else value)
    )
    if dt.is_complex:
        return (ctx.const(dt.real_dtype, value.real), ctx.const(dt.real_dtype, value.imag))
    if dt.is_float:
        return ctx.const(dt, float(value))
    return ctx.const(dt, int(value))
