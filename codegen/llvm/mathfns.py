"""Real transcendental functions on scalars and vectors.

Vectors call glibc's libmvec variants (`_ZGVeN8v_sin`: AVX-512, 8 x f64; `_ZGVdN8v_sinf`: AVX2,
8 x f32; ...) when the Target names "libmvec" as its vector library, otherwise each lane calls
the scalar function; exp of full AVX-512 vectors (16 x f32, 8 x f64) is inline instead
(inline_exp.py: a libmvec call per vector made exp 1.7x slower than torch's). Scalars call the Target's math
library (`Target.math_library`: "libm", C's names; MATH_LIBRARIES). The choice is made from the
Target, never from the host. glibc >= 2.35 exports every name in LIBMVEC_FUNCS for the b/c/d/e
ISA variants (`nm -D libmvec.so.1`).

Accuracy contract: every real transcendental (exp, expm1, exp2, log, log1p, log2, log10, the
trigonometric and hyperbolic functions and their inverses, arctan2, pow, erf, sigmoid, cbrt,
hypot) is within 4 ulp of the exact value in float64 and float32, on the vector and the scalar
path, and exact where the exact value is representable at the points users compare with ==
(exp2 of integers, log2 of powers of 2, log10 of powers of 10, exp(0), sqrt of squares, ...).
tests/codegen/test_accuracy.py checks it against mpmath; tools/ulp_report.py prints the measured
maxima.
"""

from __future__ import annotations

from llvmlite import ir as L

from . import inline_exp
from .context import LowerCtx
from .types import F32, F64

# libm name -> number of arguments; all exist in libmvec (glibc >= 2.35)
LIBMVEC_FUNCS = {
    "exp": 1,
    "expm1": 1,
    "exp2": 1,
    "log": 1,
    "log1p": 1,
    "log2": 1,
    "log10": 1,
    "sin": 1,
    "cos": 1,
    "tan": 1,
    "tanh": 1,
    "sinh": 1,
    "cosh": 1,
    "asin": 1,
    "acos": 1,
    "atan": 1,
    "asinh": 1,
    "acosh": 1,
    "atanh": 1,
    "atan2": 2,
    "pow": 2,
    "erf": 1,
    "hypot": 2,
    "cbrt": 1,
}


def _isa_letter(ctx: LowerCtx, total_bits: int) -> str | None:
    """Vector-ABI ISA letter of glibc's x86-64 vector functions for a vector of `total_bits`."""
    t = ctx.target
    if total_bits > t.vector_bits:
        return None
    if total_bits == 128:
        return "b"
    if total_bits == 256:
        return "d" if t.vector_bits >= 512 or t.has_feature("avx2") or t.cpu != "x86-64" else "c"
    if total_bits == 512:
        return "e"
    return None


# libmvec variants that miss the contract's exact points: the AVX2 and SSE log10 give
# log10(1e7) = 7 + 1 ulp (measured on an AMD EPYC, znver3; the AVX-512 one is exact): their lanes
# call libm's log10, which is exact there
INEXACT_VARIANTS = {("log10", "b"), ("log10", "c"), ("log10", "d")}


def libmvec_name(ctx: LowerCtx, name: str, elem: L.Type, lanes: int) -> str | None:
    if ctx.target.vector_library != "libmvec" or name not in LIBMVEC_FUNCS:
        return None
    bits = 32 if elem == F32 else 64
    isa = _isa_letter(ctx, bits * lanes)
    if isa is None or (name, isa) in INEXACT_VARIANTS:
        return None
    suffix = "f" if elem == F32 else ""
    return f"_ZGV{isa}N{lanes}{'v' * LIBMVEC_FUNCS[name]}_{name}{suffix}"


# Target.math_library -> the name of scalar function `name` (C's, e.g. "sin") in float32 / float64
MATH_LIBRARIES = {
    "libm": lambda name, f32: name + ("f" if f32 else ""),
    "libdevice": lambda name, f32: f"__nv_{name}" + ("f" if f32 else ""),  # the NVIDIA target (not built yet)
}


def scalar_math_name(ctx: LowerCtx, name: str, elem: L.Type) -> str:
    """The symbol of C math function `name` on `elem` scalars in the target's math library."""
    try:
        naming = MATH_LIBRARIES[ctx.target.math_library]
    except KeyError:
        raise NotImplementedError(
            f"target {ctx.target.name!r}: unknown math library {ctx.target.math_library!r} "
            f"(known: {sorted(MATH_LIBRARIES)})"
        ) from None
    return naming(name, elem == F32)


# float32 functions computed in float64 and rounded once: libmvec's log10f misses exact results
# (log10f(100) = 2.0000002, as numpy's), the float64 one does not
F32_IN_F64 = {"log10"}


def libm(ctx: LowerCtx, name: str, *args):
    """Call libm's `name` (f64) / `namef` (f32) on scalars or vectors of one float type."""
    t = args[0].type
    elem = t.element if isinstance(t, L.VectorType) else t
    if elem == F32 and name in F32_IN_F64:
        wide_t = L.VectorType(F64, t.count) if isinstance(t, L.VectorType) else F64
        wide = [ctx.builder.fpext(a, wide_t) for a in args]
        return ctx.builder.fptrunc(_libm_f64(ctx, name, wide), t)
    if name == "exp" and inline_exp.applies(ctx, t):
        return inline_exp.exp(ctx, args[0])
    scalar_name = scalar_math_name(ctx, name, elem)
    if isinstance(t, L.VectorType):
        vname = libmvec_name(ctx, name, elem, t.count)
        if vname is not None:
            fn = ctx.function(vname, t, [t] * len(args))
            return ctx.builder.call(fn, list(args))
        fn = ctx.function(scalar_name, elem, [elem] * len(args))
        return ctx.per_lane(fn, list(args))
    fn = ctx.function(scalar_name, elem, [elem] * len(args))
    return ctx.builder.call(fn, list(args))


def _libm_f64(ctx: LowerCtx, name: str, args: list):
    """`libm` on float64 values, a vector wider than libmvec's split in halves."""
    t = args[0].type
    n = t.count if isinstance(t, L.VectorType) else 1
    if n == 1 or n % 2 or ctx.target.vector_library != "libmvec" or libmvec_name(ctx, name, F64, n):
        return libm(ctx, name, *args)
    b = ctx.builder
    half = [[b.shuffle_vector(a, L.Constant(t, L.Undefined), L.Constant(L.VectorType(L.IntType(32), n // 2),
                                                                            list(range(k, k + n // 2))))
             for a in args] for k in (0, n // 2)]
    lo, hi = (_libm_f64(ctx, name, h) for h in half)
    return b.shuffle_vector(lo, hi, L.Constant(L.VectorType(L.IntType(32), n), list(range(n))))
