"""exp of float32 vectors inline on AVX-512, instead of a call to libmvec's `_ZGVeN16v_expf`.

libmvec's AVX-512 expf is accurate but costs a call per 16 lanes (~10 cycles a vector on a Xeon
of this project's CI: a row softmax spends most of its time there). Inline, LLVM schedules the
steps of neighbouring vectors together:

    x clamped to [-104, 89] (nan stays nan: beyond the ends the result is 0 or inf anyway)
    k = rint(x * log2(e))
    r = x - k ln2              Cody-Waite, ln2 in two parts, each step one FMA
    p = 1 + r q(r)             q of degree 6: a near-minimax fit of (e^r - 1) / r on
                               [-ln2/2, ln2/2] (2% wider), 0.02 ulp from e^r before rounding
    e^x = p * 2^k              vscalefps: one rounding, subnormal results included

exp(0) is exactly 1 (r = 0, p = 1); overflow gives inf, underflow 0 or the correctly scaled
subnormal. tests/codegen/test_accuracy.py holds it to the math contract of mathfns.py (measured
over every float32: at most 1 ulp, tests/codegen/test_expf.py).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import float32

from .context import LowerCtx
from .types import F32

LANES = 16
_RANGE = (-104.0, 89.0)  # e^-104 rounds to 0 and e^89 to inf in float32
_LOG2E = 1.4426950408889634
_LN2 = (0.693145751953125, 1.428606765330187e-06)  # float32 0x3f317200 (9 zero bits) + the rest
# q(r) = c0 + c1 r + ... + c6 r^6 (float32 values)
_Q = (1.0, 0.5, 0.166666641831398, 0.04166623577475548, 0.008333684876561165, 0.0013948341365903616,
      0.00019724195590242743)
_SCALEF = "llvm.x86.avx512.mask.scalef.ps.512"
_ROUND_CURRENT = 4  # the rounding argument of the AVX-512 intrinsics: MXCSR's (round to nearest)


def applies(ctx: LowerCtx, t: L.Type) -> bool:
    """Whether exp of values of type `t` lowers here: 16 x float32 on an x86 target with AVX-512F
    and FMA."""
    target = ctx.target
    return (isinstance(t, L.VectorType) and t.element == F32 and t.count == LANES
            and target.triple.startswith("x86_64") and target.has_feature("avx512f") and target.has_feature("fma"))


def exp(ctx: LowerCtx, x):
    """e^x of a <16 x float> (see the module docstring)."""
    b = ctx.builder

    def c(v):
        return ctx.const(float32, v)

    lo, hi = _RANGE
    x = b.select(b.fcmp_ordered("<", x, c(lo)), c(lo), x)  # ordered: a nan is kept
    x = b.select(b.fcmp_ordered(">", x, c(hi)), c(hi), x)
    k = ctx.intrinsic("rint", [b.fmul(x, c(_LOG2E))])
    minus_k = b.fneg(k)
    r = ctx.intrinsic("fma", [minus_k, c(_LN2[0]), x])
    r = ctx.intrinsic("fma", [minus_k, c(_LN2[1]), r])
    q = c(_Q[-1])
    for coeff in reversed(_Q[:-1]):
        q = ctx.intrinsic("fma", [q, r, c(coeff)])
    p = ctx.intrinsic("fma", [q, r, c(1.0)])
    vt = x.type
    scalef = ctx.function(_SCALEF, vt, [vt, vt, vt, L.IntType(16), L.IntType(32)])
    return b.call(scalef, [p, k, L.Constant(vt, L.Undefined), L.Constant(L.IntType(16), -1),
                           L.Constant(L.IntType(32), _ROUND_CURRENT)])
