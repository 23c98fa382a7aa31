"""Straight-line DFT codelets on complex values held as (re, im) pairs of scalars or vectors.

`dft(ca, xs, sign)` returns the DFT of the list `xs` (y_m = sum_j x_j exp(sign*2*pi*i*j*m/r)):
powers of two by radix-2 decimation in time with constant twiddles (multiplications by 1, +-i and
the eighth roots are open-coded), odd primes by pocketfft's symmetric pairs (x_k +- x_{r-k}),
which halves the multiplications. The same code emits scalar and `<VLEN x T>` arithmetic.
"""
from __future__ import annotations

import functools
import math

from llvmlite import ir as L

from .plan import unit_roots

FLAGS = ("contract",)  # let LLVM fuse a*b+c into FMAs; no other fast-math liberties


@functools.cache
def root(k: int, n: int) -> tuple[float, float]:
    """cos and sin of 2*pi*k/n, correctly rounded (math.cos(2*math.pi/3) is not -0.5)."""
    w = complex(unit_roots([k], n)[0])
    return w.real, w.imag


class CArith:
    """Complex arithmetic on (re, im) pairs of one LLVM value type."""

    def __init__(self, b: L.IRBuilder, ty: L.Type):
        self.b, self.ty = b, ty

    def const(self, v: float):
        if isinstance(self.ty, L.VectorType):
            return L.Constant(self.ty, [L.Constant(self.ty.element, v)] * self.ty.count)
        return L.Constant(self.ty, v)

    def add(self, x, y):
        return self.b.fadd(x[0], y[0], flags=FLAGS), self.b.fadd(x[1], y[1], flags=FLAGS)

    def sub(self, x, y):
        return self.b.fsub(x[0], y[0], flags=FLAGS), self.b.fsub(x[1], y[1], flags=FLAGS)

    def neg(self, x):
        return self.b.fneg(x[0]), self.b.fneg(x[1])

    def mul_i(self, x, s: int):
        """x * (s*i) for s = +-1, without arithmetic."""
        return (self.b.fneg(x[1]), x[0]) if s > 0 else (x[1], self.b.fneg(x[0]))

    def scale(self, x, c: float):
        k = self.const(c)
        return self.b.fmul(x[0], k, flags=FLAGS), self.b.fmul(x[1], k, flags=FLAGS)

    def mul(self, x, w, conj: bool = False):
        """x * w, or x * conj(w)."""
        b = self.b
        xr, xi = x
        wr, wi = w
        if conj:
            re = b.fadd(b.fmul(xr, wr, flags=FLAGS), b.fmul(xi, wi, flags=FLAGS), flags=FLAGS)
            im = b.fsub(b.fmul(xi, wr, flags=FLAGS), b.fmul(xr, wi, flags=FLAGS), flags=FLAGS)
        else:
            re = b.fsub(b.fmul(xr, wr, flags=FLAGS), b.fmul(xi, wi, flags=FLAGS), flags=FLAGS)
            im = b.fadd(b.fmul(xr, wi, flags=FLAGS), b.fmul(xi, wr, flags=FLAGS), flags=FLAGS)
        return re, im

    def mul_root(self, x, k: int, n: int, sign: int):
        """x * exp(sign*2*pi*i*k/n), open-coding multiples of pi/4."""
        k %= n
        if (8 * k) % n == 0:
            octant = (8 * k // n) if sign > 0 else (-8 * k // n) % 8
            quarter, odd = divmod(octant, 2)
            y = x
            for _ in range(quarter):
                y = self.mul_i(y, +1)
            if odd:  # * (1 + i)/sqrt(2)
                b = self.b
                h = self.const(math.sqrt(0.5))
                y = (b.fmul(b.fsub(y[0], y[1], flags=FLAGS), h, flags=FLAGS),
                     b.fmul(b.fadd(y[0], y[1], flags=FLAGS), h, flags=FLAGS))
            return y
        c, s = root(k, n)
        return self.mul(x, (self.const(c), self.const(sign * s)))


def dft(ca: CArith, xs: list, sign: int) -> list:
    r = len(xs)
    if r == 1:
        return list(xs)
    if r == 2:
        return [ca.add(xs[0], xs[1]), ca.sub(xs[0], xs[1])]
    if r % 2 == 0:
        ev = dft(ca, xs[0::2], sign)
        od = dft(ca, xs[1::2], sign)
        half = r // 2
        tw = [ca.mul_root(od[k], k, r, sign) for k in range(half)]
        return [ca.add(ev[k], tw[k]) for k in range(half)] + [ca.sub(ev[k], tw[k]) for k in range(half)]
    p = next((d for d in range(3, math.isqrt(r) + 1, 2) if r % d == 0), r)
    return _dft_odd(ca, xs, sign) if p == r else _dft_split(ca, xs, sign, p)


def _dft_split(ca: CArith, xs: list, sign: int, p: int) -> list:
    """An odd composite r = p * q by decimation in time: p DFTs of q strided inputs, their
    outputs times constant twiddles, then q DFTs of p (9 = 3 * 3: 40 real multiplications where
    the symmetric pairs take 64; 25 = 5 * 5: 3 times fewer)."""
    r = len(xs)
    q = r // p
    subs = [dft(ca, xs[j::p], sign) for j in range(p)]
    ys = [None] * r
    for k in range(q):
        col = dft(ca, [subs[0][k]] + [ca.mul_root(subs[j][k], j * k, r, sign) for j in range(1, p)], sign)
        for s_ in range(p):
            ys[k + q * s_] = col[s_]
    return ys


def _dft_odd(ca: CArith, xs: list, sign: int) -> list:
    r = len(xs)
    h = r // 2
    t = [ca.add(xs[k], xs[r - k]) for k in range(1, h + 1)]
    u = [ca.sub(xs[k], xs[r - k]) for k in range(1, h + 1)]
    y0 = xs[0]
    for tk in t:
        y0 = ca.add(y0, tk)
    ys = [y0] + [None] * (r - 1)
    for m in range(1, h + 1):
        a, bsum = xs[0], None
        for k in range(1, h + 1):
            c, s = root((m * k) % r, r)
            a = ca.add(a, ca.scale(t[k - 1], c))
            term = ca.scale(u[k - 1], s)
            bsum = term if bsum is None else ca.add(bsum, term)
        ib = ca.mul_i(bsum, sign)
        ys[m] = ca.add(a, ib)
        ys[r - m] = ca.sub(a, ib)
    return ys
