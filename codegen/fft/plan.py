"""FFT plans as data: factorisation, twiddle tables and the Bluestein choice (pocketfft's model).

A plan never needs new code: the generated kernels read the factor list and the twiddle table
from memory. `CPlan.header` is the int64 array the kernels read:

    [n, nfact, (radix, l1, ido, tw_offset, cs_offset) * nfact]

Offsets count complex elements of `CPlan.twiddles` (interleaved re/im of the plan's precision).
The twiddle of pass `f`, output leg `j` (1..radix-1) and inner index `i` (0..ido-1) is
w(j, i) = `exp(+2*pi*1j*j*l1*i/n)`; forward kernels use its conjugate. Most passes read it at
`tw_offset + (j-1)*ido + i`. Passes with a long ido (`two_level(radix, ido)`) keep pocketfft's
two-level table instead, with B = TWIDDLE_BLOCK: the fine part w(j, r) for r < B at
`tw_offset + (j-1)*B + r`, then the coarse part w(j, c*B) at `tw_offset + (radix-1)*B +
(j-1)*(ido/B) + c`, and the kernel multiplies w(j, i mod B) by w(j, (i div B)*B) (one rounding
more, as numpy's pocketfft has in its own tables): pass 1's full table is (radix-1)/radix of n
values, the two-level one about 2*sqrt of that, so a long transform's working set is its data
(c128 27648 on one thread 15-20% faster: tools/bench_fft_passes.py).
Radices without a hard-coded codelet also get `cs_offset`: `exp(+2*pi*1j*m/radix)`, m < radix.

Twiddles never come from a recurrence. Up to 2^14 they are exact to the last bit of double: angles
are reduced to |angle| <= pi/4 with integer arithmetic and evaluated in long double. Longer
lengths take the product of two short tables of roots, as the kernel module's planner makes them
(`roots_at`): a plan made here and one made at run time are the same bits.
"""
from __future__ import annotations

import functools
import math

import numpy as np

# radices with a generated codelet, in the order a factorisation extracts them
CODELET_RADICES = (2, 3, 4, 5, 7, 8, 9, 11, 13)
HEADER_FIELDS = 5
TWIDDLE_BLOCK = 64  # B of the two-level tables: a multiple of every VLEN, so a vector's fine part is one load
TWO_LEVEL_MIN_IDO = 1024  # shorter passes' full tables are small enough (and stay in cache)
_PI_LD = np.arctan(np.longdouble(1)) * 4  # long-double pi (np.pi is only a double)


class PlanError(ValueError):
    pass


def factorize(n: int) -> list[int]:
    """Odd factors first: a 3 when the power of 3 is odd, 9s (half the passes of 3s; 25s for 5s
    ran slower than 5s, their codelet spills), the other odd primes ascending; then the leftover 2
    or 4, then the 8s.

    pocketfft extracts 4s first and puts a 2 in front; here the powers of two go last because
    a pass runs VLEN-wide when its ido (the product of the later factors) is a multiple of VLEN,
    and the last pass (ido == 1) when l1 is: 1536 = [3, 8, 8, 8] keeps every pass wide, where
    [8, 8, 8, 3] leaves one pass scalar.
    """
    if n < 1:
        raise PlanError(f"FFT length must be >= 1, got {n}")
    eights = 0
    while n % 8 == 0:
        eights += 1
        n //= 8
    two = 1
    while n % 2 == 0:
        two *= 2
        n //= 2
    threes = 0
    while n % 3 == 0:
        threes += 1
        n //= 3
    facts = [3] * (threes % 2) + [9] * (threes // 2)
    p = 5
    while p * p <= n:
        while n % p == 0:
            facts.append(p)
            n //= p
        p += 2
    if n > 1:
        facts.append(n)
    if two > 1:
        facts.append(two)
    return facts + [8] * eights


def largest_prime_factor(n: int) -> int:
    return max((3 if f == 9 else f for f in factorize(n) if f not in (4, 8)), default=2 if n > 1 else 1)


def cost_guess(n: int) -> float:
    """pocketfft's operation-count model (factors above 5 get a 1.1 penalty)."""
    result, m = 0.0, n
    while m % 4 == 0:
        result += 2
        m //= 4
    while m % 2 == 0:
        result += 2
        m //= 2
    x = 3
    while x * x <= m:
        while m % x == 0:
            result += x if x <= 5 else 1.1 * x
            m //= x
        x += 2
    if m > 1:
        result += m if m <= 5 else 1.1 * m
    return result * n


def good_size(target: int) -> int:
    """Smallest 2^a 3^b 5^c 7^d >= target (a fast length for Bluestein's convolution)."""
    if target <= 6:
        return target
    best = 1 << (target - 1).bit_length()
    f7 = 1
    while f7 < best:
        f5 = f7
        while f5 < best:
            f3 = f5
            while f3 < best:
                f2 = f3
                while f2 < target:
                    f2 *= 2
                best = min(best, f2)
                f3 *= 3
            f5 *= 5
        f7 *= 7
    return best


BLUESTEIN_MULTIPLE = 8  # Bluestein's length: a multiple of 8, so that its passes run vector-wide


def bluestein_size(n: int) -> int:
    """The length of Bluestein's circular convolution for a transform of length n: the smallest
    2^a 3^b 5^c 7^d >= 2n - 1 that is a multiple of BLUESTEIN_MULTIPLE. pocketfft takes the
    smallest of all, such as 2025 for n = 1009, whose passes have no factor 2 and run scalar.
    tools/bench_fft_kernels.py, c128: 2025 -> 2048 9.1 -> 3.9 us, 210 -> 216 555 -> 252 ns,
    196 -> 200 304 -> 225 ns, 15876 -> 16000 55 -> 40 us, 131220 -> 131712 1.59 -> 1.05 ms."""
    m = BLUESTEIN_MULTIPLE
    return m * good_size(-(-(2 * n - 1) // m))


def native_bluestein(n: int, itemsize: int) -> bool:
    """Whether a Bluestein transform of length n runs the kernel module's plan (planner.py: a row
    at a time, its convolution in cache; 2.9x faster at n = 1009, 1.6x on a batch of 64) rather
    than its steps over the whole batch, whose long convolutions split like any long transform
    (from HALVES_MIN_BYTES: the same split as the eager path's). By size only, so that an eager
    call and a compiled graph take the same route (and bits) on any thread count."""
    return bluestein_size(n) * itemsize < HALVES_MIN_BYTES


def bluestein_kernel(n: int) -> np.ndarray:
    """The DFT of Bluestein's chirp kernel (the chirp at k and n2 - k, zero between), divided by
    n2 = bluestein_size(n): complex128 whatever the plan's precision, by numpy's transform, so that
    an eager plan and a compiled graph hold the same bits."""
    from numpy.fft import fft

    n2 = bluestein_size(n)
    b = bluestein_chirp(n)
    kernel = np.zeros(n2, np.complex128)
    kernel[:n] = b
    kernel[n2 - n + 1:] = b[1:][::-1]
    return fft(kernel) / n2


def bluestein_block(n: int, dtype) -> np.ndarray:
    """The kernel module's plan block of a Bluestein transform of length n (planner.py's layout,
    which its `exec` runs), with this module's values: plan.py's plan of bluestein_size(n), the
    conjugated chirp (bluestein_chirp, exact) and the chirp kernel's DFT / n2 in double (numpy's
    transform), rounded to `dtype`. An eager call and a compiled graph (a constant) run the same
    block, so the same bits; the planner's own Bluestein plans (symbolic lengths) are within an
    ulp of it. uint8, 64-byte aligned offsets (the caller aligns the start)."""
    dtype = np.dtype(dtype)
    n2 = bluestein_size(n)
    cp = make_cplan(n2, dtype)
    tables = [cp.header, cp.twiddles, np.conj(bluestein_chirp(n)).astype(dtype), bluestein_kernel(n).astype(dtype)]
    offsets, off = [], 128  # planner.META_BYTES: the eight words first
    for t in tables:
        offsets.append(off)
        off += -(-t.nbytes // 64) * 64
    block = np.zeros(off, np.uint8)
    block[:64] = np.array([n, 1, 1, n2, *offsets], np.int64).view(np.uint8)  # names.FIELD_* order
    for t, o in zip(tables, offsets):
        block[o:o + t.nbytes] = np.ascontiguousarray(t).view(np.uint8).ravel()
    block.setflags(write=False)
    return block


def use_bluestein(n: int) -> bool:
    """pocketfft's rule: Bluestein when a large prime factor makes it cheaper."""
    lpf = largest_prime_factor(n)
    if n < 50 or lpf * lpf <= n:
        return False
    return 2 * 1.5 * cost_guess(good_size(2 * n - 1)) < cost_guess(n)


def _quarter_turns(m: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (long double) of 2*pi*m/n, reduced exactly to |angle| <= pi/4."""
    a = 4 * (m % n)
    q = a // n
    r = a - q * n
    up = 2 * r > n  # round to the nearest quarter turn
    q = np.where(up, q + 1, q)
    r = np.where(up, r - n, r)
    # each |r| once (cos is even, sin odd, both exactly): 4m mod n repeats, so a table of all m < n
    # evaluates n/8 angles when 8 divides n (long double's cos and sin were 0.3 ms of a first fft)
    mag, inv = np.unique(np.abs(r), return_inverse=True)
    ang = (_PI_LD / 2) * (mag.astype(np.longdouble) / np.longdouble(n))
    c, s = np.cos(ang)[inv], np.sin(ang)[inv]
    s = np.where(r < 0, -s, s)
    q &= 3
    cos = np.select([q == 0, q == 1, q == 2], [c, -s, -c], s)
    sin = np.select([q == 0, q == 1, q == 2], [s, c, -s], -c)
    return cos, sin


def unit_roots(m: np.ndarray, n: int) -> np.ndarray:
    """exp(2*pi*1j*m/n) as complex128, correctly rounded from long double."""
    c, s = _quarter_turns(np.asarray(m, dtype=np.int64) % n, n)
    out = np.empty(c.shape, np.complex128)
    out.real, out.imag = c, s
    return out


_EXACT_TABLE = 1 << 14


def roots_at(m: np.ndarray, n: int) -> np.ndarray:
    """exp(2*pi*1j*m/n) for 0 <= m < n, complex128.

    Up to 2^14 every value is correctly rounded. Longer lengths take the product of two tables
    (pocketfft's scheme, one rounding more: <= ~1 ulp) computed exactly as the kernel module's
    planner computes them (codegen/fft/planner.py), so that a plan made here (baked into a
    compiled graph) and one the planner makes at run time (an eager call, a symbolic length) are
    the same bits, and a long plan costs two short tables, not n long-double evaluations."""
    m = np.asarray(m, dtype=np.int64)
    if n <= _EXACT_TABLE:
        return unit_roots(m, n)
    shift, lo, hi = _two_tables(n)
    i, j = m & ((1 << shift) - 1), m >> shift
    ar, ai, br, bi = lo[0][i], lo[1][i], hi[0][j], hi[1][j]
    out = np.empty(m.shape, np.complex128)
    out.real = ar * br - ai * bi  # each product rounded: no FMA, as the planner
    out.imag = ar * bi + ai * br
    return out


@functools.lru_cache(maxsize=8)
def _two_tables(n: int) -> tuple[int, np.ndarray, np.ndarray]:
    """(shift, lo, hi): exp(2 pi i m/n) = hi[m >> shift] * lo[m & (2^shift - 1)], each table as
    (re, im) float64 arrays, each root as the planner's `aot_fft_root` makes it: the angle reduced
    exactly to the nearest quarter turn, then libm's cos and sin of the double (pi/2) * (r/n)."""
    shift = ((n - 1).bit_length() + 1) >> 1
    lo_n = 1 << shift

    def table(ms) -> np.ndarray:
        t = np.array([_libm_root(k, n) for k in ms]).T.copy()
        t.setflags(write=False)
        return t

    return shift, table(k % n for k in range(lo_n)), table((k * lo_n) % n for k in range(-(-n // lo_n)))


def _libm_root(m: int, n: int) -> tuple[float, float]:
    a = 4 * m
    q, r = divmod(a, n)
    if 2 * r > n:  # the nearest quarter turn
        q, r = q + 1, r - n
    ang = (math.pi / 2) * (float(r) / float(n))
    c, s = math.cos(ang), math.sin(ang)  # libm's, as the planner's llvm.cos/llvm.sin calls
    return ((c, s), (-s, c), (-c, -s), (s, -c))[q & 3]


def roots_table(n: int) -> np.ndarray:
    """exp(2*pi*1j*m/n) for all m < n (roots_at)."""
    return roots_at(np.arange(n, dtype=np.int64), n)


class CPlan:
    """A complex transform of length n: factors, the kernel header (int64) and twiddles
    (complex64/complex128, 1-D), for one precision."""

    def __init__(self, n: int, factors: list[int], header: np.ndarray, twiddles: np.ndarray):
        self.n, self.factors, self.header, self.twiddles = n, factors, header, twiddles
        self.nbytes = header.nbytes + twiddles.nbytes

    def __repr__(self) -> str:
        return f"CPlan(n={self.n}, factors={self.factors})"


def two_level(radix: int, ido: int) -> bool:
    """Whether the pass (radix, ido) keeps a two-level twiddle table (the module docstring); the
    kernels test the same on the header's ido (passes.long_ido: codelet passes only, as here)."""
    return radix in CODELET_RADICES and ido >= TWO_LEVEL_MIN_IDO and ido % TWIDDLE_BLOCK == 0


def pass_rows(header: np.ndarray) -> np.ndarray:
    """A plan header's per-pass rows (radix, l1, ido, tw_offset, cs_offset), as a view."""
    return header[2: 2 + HEADER_FIELDS * int(header[1])].reshape(-1, HEADER_FIELDS)


def twiddle_count(radix: int, ido: int) -> int:
    """Values in the twiddle table of the pass (radix, ido)."""
    per_leg = TWIDDLE_BLOCK + ido // TWIDDLE_BLOCK if two_level(radix, ido) else ido
    return (radix - 1) * per_leg


def _twiddle_exponents(ip: int, l1: int, ido: int) -> np.ndarray:
    """The table of the pass as exponents m of exp(2*pi*1j*m/n), in table order."""
    j = np.arange(1, ip, dtype=np.int64)[:, None]
    if not two_level(ip, ido):
        return (j * l1 * np.arange(ido, dtype=np.int64)[None, :]).ravel()
    fine = j * l1 * np.arange(TWIDDLE_BLOCK, dtype=np.int64)[None, :]
    coarse = j * l1 * TWIDDLE_BLOCK * np.arange(ido // TWIDDLE_BLOCK, dtype=np.int64)[None, :]
    return np.concatenate([fine.ravel(), coarse.ravel()])


def _twiddle_table(n: int, factors: list[int]) -> tuple[np.ndarray, list[tuple[int, int, int, int, int]]]:
    chunks, rows, off, l1 = [], [], 0, 1
    for ip in factors:
        ido = n // (l1 * ip)
        chunks.append(_twiddle_exponents(ip, l1, ido))
        tw_off, off = off, off + twiddle_count(ip, ido)
        cs_off = -1
        if ip not in CODELET_RADICES:
            chunks.append(np.arange(ip, dtype=np.int64) * (n // ip))
            cs_off, off = off, off + ip
        rows.append((ip, l1, ido, tw_off, cs_off))
        l1 *= ip
    idx = np.concatenate(chunks) if chunks else np.zeros(0, np.int64)
    return roots_at(idx % n, n), rows


def make_cplan(n: int, dtype) -> CPlan:
    """The plan of a direct (non-Bluestein) complex transform of length n in `dtype`'s precision
    (twiddles computed in double or better, then rounded)."""
    factors = factorize(n) if n > 1 else []
    tw, rows = _twiddle_table(n, factors)
    header = np.array([n, len(factors)] + [v for r in rows for v in r], dtype=np.int64)
    tw = tw.astype(np.dtype(dtype), copy=False)
    header.setflags(write=False)
    tw.setflags(write=False)
    return CPlan(n, factors, header, tw)


def bluestein_chirp(n: int) -> np.ndarray:
    """exp(+1j*pi*k^2/n), k < n, with k^2 reduced modulo 2n exactly."""
    k = np.arange(n, dtype=np.int64)
    return unit_roots((k * k) % (2 * n), 2 * n)


# -- four-step: one long transform as passes of short ones ------------------------------------
# n = m1 * m2, x[j1*m2 + j2]: pass 1 transforms the m2 columns (length m1, neighbours: lane
# blocks) and writes y[k1, j2] * w^(j2*k1) (w = exp(-+2 pi i/n)); pass 2 transforms the m1 rows
# (length m2) and X[k1 + m1*k2] = z[k1, k2] is their transpose. A tall split (a few dozen columns)
# has pass 1 write a work array and pass 2 transform VLEN rows at a time and write them transposed
# (two passes over memory); a square one has pass 1 write the output, pass 2 run in place and a
# third pass transpose it in place (no third array). Each pass splits over threads with no barrier
# inside, where the radix passes of one long transform stream the array once per pass.
FOUR_STEP_MAX_M1 = 2048  # names.LANE_BLOCK_MAX_N: pass 1's columns gather in lane blocks
FOUR_STEP_MAX_M2 = 32768
_FOUR_STEP_PRIMES = (2, 3, 5, 7)


def four_step_split(n: int, vlen: int, lane_block: int, m1: int | None = None) -> tuple[int, int] | None:
    """(m1, n / m1) for a four-step transform of length n, or None; m1 None: the square split.
    n's primes have codelets, m1 <= FOUR_STEP_MAX_M1 and a multiple of VLEN (pass 2's rows go VLEN
    at a time), m2 <= FOUR_STEP_MAX_M2 and a multiple of lane_block * VLEN (every column of pass 1
    is in a lane block)."""
    r = n
    for p in _FOUR_STEP_PRIMES:
        while r % p == 0:
            r //= p
    m1 = math.isqrt(n) if m1 is None else m1
    m2 = n // m1
    ok = (r == 1 and m1 * m2 == n and m1 <= FOUR_STEP_MAX_M1 and m1 % vlen == 0 and m2 <= FOUR_STEP_MAX_M2
          and m2 % (lane_block * vlen) == 0)
    return (m1, m2) if ok else None


def four_step_tables(m1: int, m2: int, vlen: int) -> tuple[np.ndarray, np.ndarray]:
    """Pass 1's twiddles w^(j2*k1) = a[j2 // VLEN, k1] * b[k1, j2 % VLEN] for w = exp(+2 pi i/n),
    n = m1 * m2 (the forward kernel conjugates): `a` (complex128, (m2 / VLEN, m1)) and `b` in the
    lane layout (float64, (m1, 2, VLEN): re lanes, then im lanes). Both exact to the last bit of
    double; their product has one rounding more (pocketfft's two-level tables)."""
    n = m1 * m2
    k1 = np.arange(m1, dtype=np.int64)
    a = unit_roots(np.multiply.outer(np.arange(m2 // vlen, dtype=np.int64) * vlen, k1) % n, n)
    lanes = unit_roots(np.multiply.outer(k1, np.arange(vlen, dtype=np.int64)), n)
    b = np.stack([lanes.real, lanes.imag], axis=1)
    return a, b


# -- which split a long transform takes ------------------------------------------------------
# One long transform along a unit-stride axis may run split, by its size and the machine, never
# by the thread count in use (so the bits do not depend on it). From HALVES_MIN_BYTES to below
# HALVES_MAX_BYTES on a machine of two cores or more: as two halves, one a core, each in its core's
# caches. From FOUR_STEP_MIN_BYTES: in four steps when the length has a split, square lengths from
# FOUR_STEP_SQUARE_MIN_BYTES in place, the others with FOUR_STEP_TALL_M1 columns (doubled while the
# rows are too long) through a work array. tools/bench_fft_four_step.py, radix passes / the split
# on one and two threads: halves c64 2^16 0.93 / 1.59, c128 2^15 0.89 / 1.35; four steps c128
# 2^17 1.30 / 1.57, 2^18 1.11 / 1.19, 2^20 (square) 1.33 / 1.47, 2^21 0.93 / 1.32 (rows of 512 KB
# leave L2 eight at a time), c64 2^18 1.20 / 1.09, 2^20 1.46 / 1.44. The square split 0.98 / 1.00
# of the tall one at c128 2^20, 1.07-1.30 elsewhere. At 1 MB (c128 2^16, c64 2^17) halves take
# 0.79-0.88 of the tall split's time on two threads and 1.00-1.07 on one (the passes' two-level
# twiddles made them faster; they had lost 11-13% on one thread before); from 2 MB they lose to
# the tall split on two threads (c128 2^17: 1.08).
HALVES_MIN_BYTES, HALVES_MAX_BYTES = 1 << 19, 2 << 20
FOUR_STEP_MIN_BYTES, FOUR_STEP_SQUARE_MIN_BYTES = 1 << 20, 16 << 20
FOUR_STEP_TALL_M1 = {8: 32, 16: 64}  # by the complex item size: c64, c128


def machine_cores() -> int:
    """The cores this process may run on (not AOT_NUM_THREADS: a split must not follow it)."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def choose_split(n: int, itemsize: int, vlen: int, lane_block: int, cores: int) -> tuple | None:
    """("halves",), ("four", m1, m2, square) or None for one transform of length n of complex
    items of `itemsize` bytes (see HALVES_MIN_BYTES)."""
    nbytes = n * itemsize
    if HALVES_MIN_BYTES <= nbytes < HALVES_MAX_BYTES and n % (2 * vlen) == 0 and cores > 1:
        return ("halves",) if not use_bluestein(n // 2) else None
    if nbytes < FOUR_STEP_MIN_BYTES:
        return None
    split = four_step_split(n, vlen, lane_block) if nbytes >= FOUR_STEP_SQUARE_MIN_BYTES else None
    if split is not None:
        return ("four", *split, True)
    m1 = FOUR_STEP_TALL_M1[itemsize]  # the preferred column count, doubled while the rows are too long
    while split is None and m1 <= FOUR_STEP_MAX_M1 and n % m1 == 0:
        split = four_step_split(n, vlen, lane_block, m1)
        m1 *= 2
    return ("four", *split, False) if split else None


def halves_tables(n: int, vlen: int) -> tuple[int, np.ndarray, np.ndarray]:
    """(shift, lo, hi) of the radix-2 step of a two-halves transform of length n (fourstep.py's
    combine2): exp(+2 pi i k/n) = hi[k >> shift] * lo[k & (2^shift - 1)] for k < n/2, complex128,
    each exact to the last bit; 2^shift is a whole number of VLEN."""
    h = n // 2
    shift = max(vlen.bit_length() - 1, (h.bit_length() + 1) // 2)
    lo = unit_roots(np.arange(1 << shift, dtype=np.int64), n)
    hi = unit_roots(np.arange(-(-h >> shift), dtype=np.int64) << shift, n)
    return shift, lo, hi
