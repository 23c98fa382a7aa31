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

    def tiers(self, out: Layout | None = None) -> list[tuple[Layout, Layout]]:
        """(source, destination) layouts of a Wide pass, widest first: VLEN, VLEN/2, ... down to
        128-bit vectors, then Scalar for what is left (ido or l1 not a multiple of VLEN). Into
        the Split layout only VLEN-wide steps (its passes have ido % VLEN == 0)."""
        if isinstance(out, Split):
            return [(self, out)]
        lays: list[Layout] = [self]
        w = self.vlen // 2
        while w >= 2 and w * (32 if isinstance(self.ft, L.FloatType) else 64) >= 128:
            lays.append(Wide(self.ft, w))
            w //= 2
        return [(lay, lay) for lay in lays] + [(Scalar(self.ft), Scalar(self.ft))]

    def load_strided(self, b, base, first, stride: int) -> list:
        """Elements first + j + stride*l (lane l < VLEN) for j < stride: the `stride * VLEN`
        neighbours, read as VLEN rows of 2*stride values and transposed in registers (ido == 1
        passes, over k). Rows that are whole vectors take log2(VLEN) stages of two-input
        shuffles per VLEN x VLEN block; other shapes one wide load and a shuffle per output."""
        vl, width = self.vlen, 2 * stride
        p = self._gep(b, base, b.shl(first, i64(1)))
        if width % vl:
            return self._load_strided_shuffled(b, p, stride)
        cols = []
        for q in range(width // vl):
            rows = [b.load(self._gep(b, p, i64(lane * width + q * vl)), typ=self.ty, align=self.align)
                    for lane in range(vl)]
            cols += self._transpose(b, rows)
        return [(cols[2 * j], cols[2 * j + 1]) for j in range(stride)]

    def _transpose(self, b, rows: list) -> list:
        """VLEN x VLEN transpose: stage d swaps bit d of the row and of the column index."""
        vl, d = self.vlen, 1
        mask_ty = L.VectorType(I32, vl)
        while d < vl:
            lo = L.Constant(mask_ty, [(vl if c & d else 0) + (c & ~d) for c in range(vl)])
            hi = L.Constant(mask_ty, [(vl if c & d else 0) + (c | d) for c in range(vl)])
            new = list(rows)
            for a in range(vl):
                if not a & d:
                    new[a] = b.shuffle_vector(rows[a], rows[a + d], lo)
                    new[a + d] = b.shuffle_vector(rows[a], rows[a + d], hi)
            rows, d = new, 2 * d
        return rows

    def _load_strided_shuffled(self, b, p, stride: int) -> list:
        big = b.load(p, typ=L.VectorType(self.ft, 2 * stride * self.vlen), align=self.align)
        undef = L.Constant(big.type, L.Undefined)
        out = []
        for j in range(stride):
            lanes = [2 * (j + stride * lane) for lane in range(self.vlen)]
            mask_re = L.Constant(L.VectorType(I32, self.vlen), lanes)
            mask_im = L.Constant(L.VectorType(I32, self.vlen), [v + 1 for v in lanes])
            out.append((b.shuffle_vector(big, undef, mask_re), b.shuffle_vector(big, undef, mask_im)))
        return out


class KPair(Wide):
    """Two neighbouring k of a pass with ido == VLEN/2, one in each half of the vectors: the
    element at e and its partner at e + kstride (the next k's input) load as one VLEN-wide
    value; outputs of k and k + 1 are neighbours, so stores are plain Wide stores, and both
    halves share their twiddles."""

    def __init__(self, ft: L.Type, vlen: int, kstride):
        super().__init__(ft, vlen)
        self.kstride = kstride
        half = vlen // 2
        self.tw_re = L.Constant(L.VectorType(I32, vlen), [2 * (c % half) for c in range(vlen)])
        self.tw_im = L.Constant(L.VectorType(I32, vlen), [2 * (c % half) + 1 for c in range(vlen)])

    def load(self, b, base, e):
        lo = b.load(self._gep(b, base, b.shl(e, i64(1))), typ=self.ty, align=self.align)
        hi = b.load(self._gep(b, base, b.shl(b.add(e, self.kstride), i64(1))), typ=self.ty, align=self.align)
        return b.shuffle_vector(lo, hi, self.even), b.shuffle_vector(lo, hi, self.odd)

    def load_twiddle(self, b, wa, t):
        w = b.load(self._gep(b, wa, b.shl(t, i64(1))), typ=self.ty, align=self.align)
        return b.shuffle_vector(w, w, self.tw_re), b.shuffle_vector(w, w, self.tw_im)


class Split(Layout):
    """Blocks of VLEN consecutive elements stored as a re vector then an im vector: the work
    buffers between the first and the last pass of one long transform, so that the passes in
    between load and store without (de-)interleaving shuffles. Element e (e % VLEN == 0 for
    vector access) starts at value 2e, as in the numpy layout."""

    name = "p"

    def __init__(self, ft: L.Type, vlen: int):
        super().__init__(ft, vlen)
        self.step = vlen
        self.wide = Wide(ft, vlen)

    def load(self, b, base, e):
        p = self._gep(b, base, b.shl(e, i64(1)))
        return (b.load(p, typ=self.ty, align=self.align),
                b.load(self._gep(b, p, i64(self.vlen)), typ=self.ty, align=self.align))

    def store(self, b, base, e, v) -> None:
        p = self._gep(b, base, b.shl(e, i64(1)))
        b.store(v[0], p, align=self.align)
        b.store(v[1], self._gep(b, p, i64(self.vlen)), align=self.align)

    def load_twiddle(self, b, wa, t):
        return self.wide.load(b, wa, t)  # the plan's table is in numpy layout

    def load_strided(self, b, base, first, stride: int) -> list:
        """As Wide.load_strided for stride = s * VLEN: element j + stride*l is lane j % VLEN of
        block s*l + j // VLEN, so the re (and the im) vectors of the blocks s*l + h, l < VLEN,
        transpose into elements j = h*VLEN + c."""
        vl = self.vlen
        if stride % vl:
            raise ValueError(f"Split.load_strided: stride must be a multiple of VLEN={vl}, got {stride}")
        p = self._gep(b, base, b.shl(first, i64(1)))
        s = stride // vl
        out = []
        for h in range(s):
            re, im = ([b.load(self._gep(b, p, i64(2 * vl * (s * lane + h) + part * vl)), typ=self.ty, align=self.align)
                       for lane in range(vl)] for part in (0, 1))
            out += zip(self.wide._transpose(b, re), self.wide._transpose(b, im))
        return out

    def tiers(self, out: Layout | None = None) -> list[tuple[Layout, Layout]]:
        """Split to Split: VLEN-wide only. Split to Wide (the last pass, ido == 1): VLEN values
        of k at once, then single elements."""
        if isinstance(out, Wide):
            return [(self, out), (SplitScalar(self.ft, self.vlen), Scalar(self.ft))]
        return [(self, self)]


class SplitScalar(Scalar):
    """Single elements of the Split layout (tails)."""

    def __init__(self, ft: L.Type, vlen: int):
        super().__init__(ft)
        self.block = vlen

    def load(self, b, base, e):
        p = self._elem(b, base, e)
        return (b.load(p, typ=self.ft, align=self.align),
                b.load(self._gep(b, p, i64(self.block)), typ=self.ft, align=self.align))

    def store(self, b, base, e, v) -> None:
        p = self._elem(b, base, e)
        b.store(v[0], p, align=self.align)
        b.store(v[1], self._gep(b, p, i64(self.block)), align=self.align)

    def _elem(self, b, base, e):
        lane = b.and_(e, i64(self.block - 1))
        return self._gep(b, base, b.add(b.shl(b.sub(e, lane), i64(1)), lane))


def layouts_of(ft: L.Type, vlen: int) -> dict[str, Layout]:
    """The layouts of the kernel module by name (names.SCALAR, WIDE, LANES, SPLIT)."""
    return {lay.name: lay for lay in (Scalar(ft), Wide(ft, vlen), Lanes(ft, vlen), Split(ft, vlen))}
