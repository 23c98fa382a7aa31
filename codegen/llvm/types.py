"""ir dtypes -> llvmlite types.

In registers a bool is `i1`, in memory `i8`. A complex number is carried as a Python pair
(re, im) of real scalars or real vectors, so complex arithmetic vectorises like real arithmetic;
in memory it is `{T, T}` (numpy's layout).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir import dtypes as D
from ir.dtypes import DType

I1 = L.IntType(1)
I8 = L.IntType(8)
I32 = L.IntType(32)
I64 = L.IntType(64)
F32 = L.FloatType()
F64 = L.DoubleType()
PTR = L.PointerType()
VOID = L.VoidType()

# register type of the real scalar of each dtype (complex: its component)
TYPE_CONVERTERS: dict[str, L.Type] = {
    "bool": I1,
    "i32": I32,
    "i64": I64,
    "f32": F32,
    "f64": F64,
    "c64": F32,
    "c128": F64,
}
MEMORY_TYPES: dict[str, L.Type] = {
    "bool": I8,
    "i32": I32,
    "i64": I64,
    "f32": F32,
    "f64": F64,
    "c64": L.LiteralStructType([F32, F32]),
    "c128": L.LiteralStructType([F64, F64]),
}


def scalar_type(dt: DType) -> L.Type:
    """Register type of one element (of one component for complex)."""
    return TYPE_CONVERTERS[dt.name]


def value_type(dt: DType, vlen: int) -> L.Type:
    """Register type of `vlen` lanes of `dt` (scalar when vlen == 1; complex: one component)."""
    t = scalar_type(dt)
    return t if vlen == 1 else L.VectorType(t, vlen)


def memory_type(dt: DType) -> L.Type:
    return MEMORY_TYPES[dt.name]


def element_bits(dt: DType) -> int:
    """Bits of the real component (what decides the vector length)."""
    # c64 counts as 64: its transcendentals are evaluated in float64
    return {"bool": 8, "c64": 64, "c128": 64}.get(dt.name, dt.bits)


def is_vector(v) -> bool:
    t = v[0].type if isinstance(v, tuple) else v.type
    return isinstance(t, L.VectorType)


def lanes(v) -> int:
    t = v[0].type if isinstance(v, tuple) else v.type
    return t.count if isinstance(t, L.VectorType) else 1


__all__ = [
    "D",
    "F32",
    "F64",
    "I1",
    "I8",
    "I32",
    "I64",
    "PTR",
    "VOID",
    "element_bits",
    "memory_type",
    "scalar_type",
    "value_type",
]
