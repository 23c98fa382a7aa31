"""Conversions between dtypes with numpy's semantics (x86-64 numpy builds).

float -> int: values that do not truncate into the integer range (and nan) give the integer
minimum, as numpy's C casts do on x86-64 (cvttsd2si); never an LLVM poison value.
complex -> real drops the imaginary part (numpy's ComplexWarning case); x -> bool is x != 0.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from ir.dtypes import DType

from .context import LowerCtx


def convert(ctx: LowerCtx, v, src: DType, dst: DType):
    if src == dst:
        return v
    if dst.is_complex:
        rt = dst.real_dtype
        if src.is_complex:
            return (convert(ctx, v[0], src.real_dtype, rt), convert(ctx, v[1], src.real_dtype, rt))
        return (convert(ctx, v, src, rt), ctx.const(rt, 0.0))
    if src.is_complex:
        if dst.is_bool:
            b = ctx.builder
            zero = ctx.const(src.real_dtype, 0.0)
            return b.or_(b.fcmp_unordered("!=", v[0], zero), b.fcmp_unordered("!=", v[1], zero))
        return convert(ctx, v[0], src.real_dtype, dst)
    return _real(ctx, v, src, dst)


def _real(ctx: LowerCtx, v, src: DType, dst: DType):
    b = ctx.builder
    t = ctx.ty(dst)
    if dst.is_bool:
        if src.is_float:
            return b.fcmp_unordered("!=", v, ctx.const(src, 0.0))
        return b.icmp_signed("!=", v, ctx.const(src, 0))
    if src.is_bool:
        return b.zext(v, t) if dst.is_int else b.uitofp(v, t)
    if src.is_int and dst.is_int:
        return b.sext(v, t) if dst.bits > src.bits else b.trunc(v, t)
    if src.is_int:
        return b.sitofp(v, t)
    if dst.is_float:
        return b.fpext(v, t) if dst.bits > src.bits else b.fptrunc(v, t)
    return float_to_int(ctx, v, src, dst)


def float_to_int(ctx: LowerCtx, v, src: DType, dst: DType):
    b = ctx.builder
    n = dst.bits
    lo, hi = -(2 ** (n - 1)), 2 ** (n - 1)
    ftype = np.float32 if src.bits == 32 else np.float64
    if int(ftype(lo - 1)) == lo - 1:
        ok_lo = b.fcmp_ordered(">", v, ctx.const(src, float(lo - 1)))
    else:
        ok_lo = b.fcmp_ordered(">=", v, ctx.const(src, float(lo)))
    ok = b.and_(ok_lo, b.fcmp_ordered("<", v, ctx.const(src, float(hi))))
    safe = b.select(ok, v, ctx.const(src, 0.0))
    return b.select(ok, b.fptosi(safe, ctx.ty(dst)), ctx.const(dst, lo))


def load_fixup(ctx: LowerCtx, v, dt: DType):
    """Memory -> register form: bool i8 -> i1."""
    if dt.is_bool:
        return ctx.builder.icmp_unsigned("!=", v, L.Constant(v.type, None))
    return v


def store_fixup(ctx: LowerCtx, v, dt: DType):
    """Register -> memory form: bool i1 -> i8."""
    if dt.is_bool:
        t = L.IntType(8) if not isinstance(v.type, L.VectorType) else L.VectorType(L.IntType(8), v.type.count)
        return ctx.builder.zext(v, t)
    return v
