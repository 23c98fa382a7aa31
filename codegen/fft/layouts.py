"""How a pass sees complex data in memory, and small IR helpers shared by the FFT emitters.

Three layouts, one codelet source:
  S  scalar: element e is (re, im) at [2e, 2e+1] (numpy's complex layout);
  V  lanes:  VLEN independent transforms, element e is a re vector at [2e*VLEN] followed by an
             im vector (pocketfft's multi-transform `vtype` layout: batches across SIMD lanes);
  W  wide:   numpy layout read VLEN consecutive elements at a time and de-interleaved in
             registers (vectorisation inside one long transform).
"""
from __future__ import annotations

from llvmlite import ir as L

from ..llvm.loops import for_range  # noqa: F401  (re-exported for the FFT passes)

I32 = L.IntType(32)
I64 = L.IntType(64)
PTR = L.PointerType()


def i64(v: int) -> L.Constant:
    return L.Constant(I64, v)


def no_vectorize_md(mod: L.Module):
    """`llvm.loop` metadata that keeps the loop vectoriser off loops already written in vectors
    (or in complex scalars that the Wide layout covers): it gains nothing there and costs seconds."""
    md = getattr(mod, "_aot_no_vectorize", None)
    if md is None:
        md = mod.add_metadata([])
        opt = mod.add_metadata([L.MetaDataString(mod, "llvm.loop.vectorize.enable"), L.Constant(L.IntType(1), 0)])
        md.operands = (md, opt)
        mod._aot_no_vectorize = md
    return md


class Layout:
    """Loads and stores of complex elements `(re, im)` for one layout."""

    step = 1  # elements handled per loop iteration

    def __init__(self, ft: L.Type, vlen: int):
        self.ft, self.vlen = ft, vlen
        self.ty = ft if vlen == 1 else L.VectorType(ft, vlen)
        self.align = 4 if isinstance(ft, L.FloatType) else 8

    def _gep(self, b, base, idx):
        return b.gep(base, [idx], source_etype=self.ft)

    def load(self, b, base, e):
        raise NotImplementedError

    def store(self, b, base, e, v) -> None:
        raise NotImplementedError

    def splat(self, b, x):
        if self.vlen == 1:
            return x
        undef = L.Constant(self.ty, L.Undefined)
        v = b.insert_element(undef, x, L.Constant(I32, 0))
        return b.shuffle_vector(v, undef, L.Constant(L.VectorType(I32, self.vlen), [0] * self.vlen))

    def load_twiddle(self, b, wa, t):
        """Twiddle t of a table in numpy layout, as this layout's value type."""
        p = self._gep(b, wa, b.shl(t, i64(1)))
        re = b.load(p, typ=self.ft, align=self.align)
        im = b.load(self._gep(b, p, i64(1)), typ=self.ft, align=self.align)
        return self.splat(b, re), self.splat(b, im)


class Scalar(Layout):
    name = "s"

    def __init__(self, ft: L.Type):
        super().__init__(ft, 1)

    def load(self, b, base, e):
        p = self._gep(b, base, b.shl(e, i64(1)))
        return (b.load(p, typ=self.ft, align=self.align),
                b.load(self._gep(b, p, i64(1)), typ=self.ft, align=self.align))

    def store(self, b, base, e, v) -> None:
        p = self._gep(b, base, b.shl(e, i64(1)))
        b.store(v[0], p, align=self.align)
        b.store(v[1], self._gep(b, p, i64(1)), align=self.align)


class Lanes(Layout):
    name = "v"

    def load(self, b, base, e):
        p = self._gep(b, base, b.mul(e, i64(2 * self.vlen)))
        return (b.load(p, typ=self.ty, align=self.align),
                b.load(self._gep(b, p, i64(self.vlen)), typ=self.ty, align=self.align))

    def store(self, b, base, e, v) -> None:
        p = self._gep(b, base, b.mul(e, i64(2 * self.vlen)))
        b.store(v[0], p, align=self.align)
        b.store(v[1], self._gep(b, p, i64(self.vlen)), align=self.align)


class Wide(Layout):
    name = "w"

    def __init__(self, ft: L.Type, vlen: int):
        super().__init__(ft, vlen)
        self.step = vlen
        self.wide = L.VectorType(ft, 2 * vlen)
        self.even = L.Constant(L.VectorType(I32, vlen), list(range(0, 2 * vlen, 2)))
        self.odd = L.Constant(L.VectorType(I32, vlen), list(range(1, 2 * vlen, 2)))
        self.zip = L.Constant(L.VectorType(I32, 2 * vlen), [k // 2 + (k % 2) * vlen for k in range(2 * vlen)])

    def deinterleave(self, b, w):
        return b.shuffle_vector(w, w, self.even), b.shuffle_vector(w, w, self.odd)

    def interleave(self, b, v):
        return b.shuffle_vector(v[0], v[1], self.zip)

    def load(self, b, base, e):
        w = b.load(self._gep(b, base, b.shl(e, i64(1))), typ=self.wide, align=self.align)
        return self.deinterleave(b, w)

    def store(self, b, base, e, v) -> None:
        b.store(self.interleave(b, v), self._gep(b, base, b.shl(e, i64(1))), align=self.align)

    def load_twiddle(self, b, wa, t):
        return self.load(b, wa, t)

    def load_strided(self, b, base, first, stride: int) -> list:
        """Elements first + j + stride*l (lane l < VLEN) for j < stride: the `stride * VLEN`
        neighbours are one wide load, transposed in registers (ido == 1 passes, over k)."""
        width = 2 * stride * self.vlen
        big = b.load(self._gep(b, base, b.shl(first, i64(1))), typ=L.VectorType(self.ft, width), align=self.align)
        undef = L.Constant(big.type, L.Undefined)
        out = []
        for j in range(stride):
            lanes = [2 * (j + stride * lane) for lane in range(self.vlen)]
            mask_re = L.Constant(L.VectorType(I32, self.vlen), lanes)
            mask_im = L.Constant(L.VectorType(I32, self.vlen), [v + 1 for v in lanes])
            out.append((b.shuffle_vector(big, undef, mask_re), b.shuffle_vector(big, undef, mask_im)))
        return out
