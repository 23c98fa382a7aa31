"""Real transcendental functions on scalars and vectors.

Vectors call glibc's libmvec variants (`_ZGVeN8v_sin`: AVX-512, 8 x f64; `_ZGVdN8v_sinf`: AVX2,
8 x f32; ...) when the Target names "libmvec" as its vector library, otherwise each lane calls
scalar libm. Scalars call libm. The choice is made from the Target, never from the host.
glibc >= 2.35 exports every name in LIBMVEC_FUNCS for the b/c/d/e ISA variants (`nm -D libmvec.so.1`).
"""

from __future__ import annotations

from llvmlite import ir as L

from .context import LowerCtx
from .types import F32

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


def libmvec_name(ctx: LowerCtx, name: str, elem: L.Type, lanes: int) -> str | None:
    if ctx.target.vector_library != "libmvec" or name not in LIBMVEC_FUNCS:
        return None
    bits = 32 if elem == F32 else 64
    isa = _isa_letter(ctx, bits * lanes)
    if isa is None:
        return None
    suffix = "f" if elem == F32 else ""
    return f"_ZGV{isa}N{lanes}{'v' * LIBMVEC_FUNCS[name]}_{name}{suffix}"


def libm(ctx: LowerCtx, name: str, *args):
    """Call libm's `name` (f64) / `namef` (f32) on scalars or vectors of one float type."""
    t = args[0].type
    elem = t.element if isinstance(t, L.VectorType) else t
    scalar_name = name + ("f" if elem == F32 else "")
    if isinstance(t, L.VectorType):
        vname = libmvec_name(ctx, name, elem, t.count)
        if vname is not None:
            fn = ctx.function(vname, t, [t] * len(args))
            return ctx.builder.call(fn, list(args))
        fn = ctx.function(scalar_name, elem, [elem] * len(args))
        return ctx.per_lane(fn, list(args))
    fn = ctx.function(scalar_name, elem, [elem] * len(args))
    return ctx.builder.call(fn, list(args))
