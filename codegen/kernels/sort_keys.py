"""Order-preserving integer keys of numpy's sort order, and the small loop helpers the sort and
search kernels share.

A real element becomes one unsigned key whose integer order is numpy's order: bools as 0/1, ints
with the sign bit flipped, floats by the IEEE bit trick (negatives inverted, positives with the
sign bit set) with -0.0 mapped to +0.0's key (they compare equal, so a stable sort keeps their
order) and every NaN to the all-ones key (after +inf: NaNs sort to the end, in their order).
A complex element becomes three 64-bit words, most significant first: its NaN class (numpy's
R+Rj < R+nanj < nan+Rj < nan+nanj), then the key of the part that orders within the class (the
real part; the imaginary one when the real part is NaN), then the imaginary key (class 0 only).
Keys are computed from the elements' bits (integer ops only), so NaN payloads never matter.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.builder import Builder
from ..llvm.loops import alloca, for_range, i64
from ..llvm.types import I1, I8, I64, PTR

COMPLEX_WORDS = 3


def key_bits(dt: DType) -> int:
    """Width of one key word: 8 for bool, the element's width for ints and floats, 64 for complex."""
    if dt.is_bool:
        return 8
    return 64 if dt.is_complex else dt.bits


def key_words(dt: DType) -> int:
    return COMPLEX_WORDS if dt.is_complex else 1


def int_type(bits: int) -> L.IntType:
    return L.IntType(bits)


def _sign(bits: int) -> L.Constant:
    return L.Constant(int_type(bits), 1 << (bits - 1))


def _inf_bits(bits: int) -> L.Constant:
    """The bit pattern of +inf (a magnitude above it is a NaN)."""
    return L.Constant(int_type(bits), {32: 0x7F800000, 64: 0x7FF0000000000000}[bits])


def _magnitude(b: L.IRBuilder, bits_val, bits: int):
    return b.and_(bits_val, L.Constant(int_type(bits), (1 << (bits - 1)) - 1))


def is_nan_bits(b: L.IRBuilder, bits_val, bits: int):
    return b.icmp_unsigned(">", _magnitude(b, bits_val, bits), _inf_bits(bits))


def is_zero_bits(b: L.IRBuilder, bits_val, bits: int):
    return b.icmp_unsigned("==", _magnitude(b, bits_val, bits), L.Constant(int_type(bits), 0))


def load_bits(b: L.IRBuilder, dt: DType, ptr, index):
    """The raw bits of element `index` of a real array (bool: its byte); for complex use the real
    dtype (component `index`)."""
    t = I8 if dt.is_bool else int_type(dt.bits)
    return b.load(b.gep(ptr, [index], source_etype=t), typ=t)


def real_key(b: L.IRBuilder, dt: DType, bits_val):
    """The key of a real element given its bits (bool: its byte, 0 or 1)."""
    if dt.is_bool:
        return b.zext(b.icmp_unsigned("!=", bits_val, L.Constant(I8, 0)), I8)
    n = dt.bits
    if dt.is_int:
        return b.xor(bits_val, _sign(n))
    neg = b.icmp_signed("<", bits_val, L.Constant(int_type(n), 0))
    key = b.select(neg, b.not_(bits_val), b.or_(bits_val, _sign(n)))
    key = b.select(is_zero_bits(b, bits_val, n), _sign(n), key)
    return b.select(is_nan_bits(b, bits_val, n), L.Constant(int_type(n), -1), key)


def decode_key(b: L.IRBuilder, dt: DType, key):
    """The element bits of a real key (NaNs come back as one NaN, zeros as +0.0: the sort kernel
    restores those from the input)."""
    if dt.is_bool:
        return key
    n = dt.bits
    if dt.is_int:
        return b.xor(key, _sign(n))
    top = b.icmp_signed("<", key, L.Constant(int_type(n), 0))
    return b.select(top, b.xor(key, _sign(n)), b.not_(key))


def complex_keys(b: L.IRBuilder, dt: DType, re_bits, im_bits) -> list:
    """The three i64 words of a complex element (most significant first) from its parts' bits."""
    rt = dt.real_dtype
    n = rt.bits
    kr, ki = (b.zext(real_key(b, rt, v), I64) if n < 64 else real_key(b, rt, v) for v in (re_bits, im_bits))
    rn, inn = is_nan_bits(b, re_bits, n), is_nan_bits(b, im_bits, n)
    cls = b.add(b.shl(b.zext(rn, I64), i64(1)), b.zext(inn, I64))
    mid = b.select(rn, b.select(inn, i64(0), ki), kr)
    low = b.select(b.or_(rn, inn), i64(0), ki)
    return [cls, mid, low]


def keys_less(b: L.IRBuilder, xs: list, ys: list):
    """Lexicographic unsigned xs < ys over key words (most significant first)."""
    less = b.icmp_unsigned("<", xs[-1], ys[-1])
    for x, y in zip(reversed(xs[:-1]), reversed(ys[:-1])):
        less = b.or_(b.icmp_unsigned("<", x, y), b.and_(b.icmp_unsigned("==", x, y), less))
    return less


def element_keys(b: L.IRBuilder, dt: DType, ptr, index) -> list:
    """The key words of element `index` of an array of `dt` (index in elements)."""
    if dt.is_complex:
        rt = dt.real_dtype
        re = load_bits(b, rt, ptr, b.mul(index, i64(2)))
        im = load_bits(b, rt, ptr, b.add(b.mul(index, i64(2)), i64(1)))
        return complex_keys(b, dt, re, im)
    return [real_key(b, dt, load_bits(b, dt, ptr, index))]


# --- loop helpers -----------------------------------------------------------------------------------
class Var:
    """A stack variable (mem2reg promotes it): `.get()`, `.set(v)`."""

    def __init__(self, entry: L.IRBuilder, b: L.IRBuilder, typ: L.Type, init=None, name: str = ""):
        self.b, self.typ = b, typ
        self.slot = alloca(entry, typ, name=name)
        if init is not None:
            b.store(init, self.slot)

    def get(self):
        return self.b.load(self.slot, typ=self.typ)

    def set(self, v) -> None:
        self.b.store(v, self.slot)


def gep(b: L.IRBuilder, typ: L.Type, ptr, index):
    return b.gep(ptr, [index], source_etype=typ)


def new_function(module: L.Module, name: str, ret: L.Type, args: list) -> tuple[L.Function, L.IRBuilder,
                                                                               L.IRBuilder]:
    """An internal function with an entry block for stack slots and a body block; returns
    (fn, entry builder, body builder). The caller branches entry -> body at the end (`seal`)."""
    fn = L.Function(module, L.FunctionType(ret, args), name=name)
    fn.linkage = "internal"
    entry = Builder(fn.append_basic_block("entry"))
    b = Builder(fn.append_basic_block("body"))
    return fn, entry, b


def seal(entry: L.IRBuilder, fn: L.Function) -> None:
    entry.branch(fn.blocks[1])


def memset0(module: L.Module, b: L.IRBuilder, ptr, nbytes) -> None:
    fn = module.globals.get("llvm.memset.p0.i64")
    if fn is None:
        fn = L.Function(module, L.FunctionType(L.VoidType(), [PTR, I8, I64, I1]), name="llvm.memset.p0.i64")
    b.call(fn, [ptr, L.Constant(I8, 0), nbytes, L.Constant(I1, 0)])
