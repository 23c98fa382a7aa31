"""Accuracy of the compiled real transcendentals against mpmath, in ulps.

Shared by test_accuracy.py and tools/ulp_report.py. Each function runs compiled (`aot.compile` of
its numpy spelling; `erf`, which has none, as a one-op kernel) on inputs of a length that is not a
multiple of the vector width, contiguous (libmvec vectors and the masked remainder) and with
stride 2 (the scalar libm loop); optionally also as one-op kernels built for other x86-64 levels
(their SSE and AVX2 libmvec variants). The reference is mpmath at 80 bits, kept as an unevaluated sum
hi + lo of float64s, so the error of a float64 or float32 result is measured in ulps of the exact
value (a correctly rounded result is within 0.5).
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np

from .helpers import ulp_distance

MP = mpmath.mp
PREC = 80  # bits: 27 guard bits over float64


@dataclass(frozen=True)
class Spec:
    numpy: Callable | None  # the spelling compiled through aot.compile (None: a one-op kernel)
    exact: Callable  # the function on mpmath numbers
    arity: int = 1
    domain: str = "any"  # how a range's samples are mapped into the function's domain
    edge: dict | None = None  # dtype -> signed intervals replacing the e^±700 magnitudes


def _sigmoid_np(x):
    import aot.nn.functional as F

    return F.sigmoid(x)


_EXP_EDGE = {np.float64: [(-745.2, -700.0), (700.0, 709.78)], np.float32: [(-103.97, -85.0), (85.0, 88.72)]}
SPECS: dict[str, Spec] = {
    "exp": Spec(np.exp, MP.exp, edge=_EXP_EDGE),
    "expm1": Spec(np.expm1, MP.expm1, edge=_EXP_EDGE),
    "exp2": Spec(np.exp2, lambda x: MP.power(2, x),
                 edge={np.float64: [(-1075.0, -1000.0), (1000.0, 1024.0)],
                       np.float32: [(-150.0, -120.0), (120.0, 128.0)]}),
    "log": Spec(np.log, MP.log, domain="positive"),
    "log1p": Spec(np.log1p, MP.log1p, domain="log1p"),
    "log2": Spec(np.log2, lambda x: MP.log(x, 2), domain="positive"),
    "log10": Spec(np.log10, MP.log10, domain="positive"),
    "sin": Spec(np.sin, MP.sin),
    "cos": Spec(np.cos, MP.cos),
    "tan": Spec(np.tan, MP.tan),
    "tanh": Spec(np.tanh, MP.tanh),
    "sinh": Spec(np.sinh, MP.sinh, edge={np.float64: [(-710.47, -700.0), (700.0, 710.47)],
                                          np.float32: [(-89.41, -85.0), (85.0, 89.41)]}),
    "cosh": Spec(np.cosh, MP.cosh, edge={np.float64: [(-710.47, -700.0), (700.0, 710.47)],
                                          np.float32: [(-89.41, -85.0), (85.0, 89.41)]}),
    "arcsin": Spec(np.arcsin, MP.asin, domain="unit"),
    "arccos": Spec(np.arccos, MP.acos, domain="unit"),
    "arctan": Spec(np.arctan, MP.atan),
    "arcsinh": Spec(np.arcsinh, MP.asinh),
    "arccosh": Spec(np.arccosh, MP.acosh, domain="acosh"),
    "arctanh": Spec(np.arctanh, MP.atanh, domain="unit"),
    "sqrt": Spec(np.sqrt, MP.sqrt, domain="positive"),
    "erf": Spec(None, MP.erf),
    "sigmoid": Spec(_sigmoid_np, lambda x: 1 / (1 + MP.exp(-x)),
                    edge={np.float64: [(-745.0, -700.0), (700.0, 745.0)],
                          np.float32: [(-103.0, -85.0), (85.0, 104.0)]}),
    "arctan2": Spec(np.arctan2, MP.atan2, arity=2),
    "power": Spec(np.power, MP.power, arity=2, domain="power"),
    "cbrt": Spec(np.cbrt, lambda x: MP.sign(x) * MP.cbrt(abs(x))),  # the real root (mpmath's is complex)
    "hypot": Spec(np.hypot, MP.hypot, arity=2),
    # logaddexp(2) are numpy's formula (max + log1p(exp(-|a-b|))), which cancels where a ~ -b: held
    # to numpy's results (tests/aot/compile/test_real_functions.py), not to the exact value
}
RANGES = ("|x|<=1", "|x|<=100", "1e3..1e5", "e^±700")  # e^±700: e^±(80..88.7) in float32
DTYPES = (np.float64, np.float32)
LAYOUTS = ("vector", "scalar")  # contiguous (libmvec) / stride 2 (scalar libm)
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 10.0, 100.0]


def applies(name: str, rng_name: str) -> bool:
    return SPECS[name].domain != "unit" or rng_name == "|x|<=1"


def _signed(rng, mag):
    return np.where(rng.random(mag.size) < 0.5, -mag, mag)


def _raw(rng_name: str, dt, n: int, rng) -> np.ndarray:
    """Signed samples of one range (float64). Log-uniform magnitudes get a random factor in
    [0.5, 1): exp(u) alone would put log(x) next to the float u, hiding log's rounding errors."""
    def logu(lo, hi, size):  # in [e^lo, e^hi)
        return np.exp(rng.uniform(lo + math.log(2), hi, size)) * rng.uniform(0.5, 1, size)

    if rng_name == "|x|<=1":  # uniform, log-uniform down to 2^-30, and within 2^-p..1/2 of +-1
        k = n // 4
        p = 52 if dt == np.float64 else 23
        mag = np.concatenate([rng.uniform(0, 1, n - 3 * k), logu(-30 * math.log(2), 0, 2 * k),
                              1 - 2.0 ** rng.uniform(-p, -1, k)])
        return _signed(rng, mag)
    if rng_name == "|x|<=100":
        return rng.uniform(-100, 100, n)
    if rng_name == "1e3..1e5":
        return _signed(rng, logu(math.log(1e3), math.log(1e5), n))
    lo, hi = (690.0, 709.7) if dt == np.float64 else (80.0, 88.7)
    return _signed(rng, logu(lo, hi, n) ** _signed(rng, np.ones(n)))


def _intervals(rng, parts, n):
    which = rng.integers(0, len(parts), n)
    lo, hi = np.array(parts).T
    return lo[which] + (hi[which] - lo[which]) * rng.random(n)


def inputs(name: str, dt, rng_name: str, n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """The operands of `name` over one range, in dtype `dt` (float64 samples rounded once)."""
    spec = SPECS[name]
    key = [seed, zlib.crc32(name.encode()), RANGES.index(rng_name), np.dtype(dt).itemsize]
    rng = np.random.default_rng(key)
    if rng_name == "e^±700" and spec.edge is not None:
        s = _intervals(rng, spec.edge[dt], n)
    else:
        s = _raw(rng_name, dt, n, rng)
    a = np.abs(s)
    big = 709.0 if dt == np.float64 else 88.0
    if spec.domain == "positive":
        xs = (a,)
    elif spec.domain == "log1p":
        xs = (s if rng_name == "|x|<=1" else a,)
    elif spec.domain == "acosh":  # [1, inf): 1 + |s| near 1, large magnitudes as they are
        xs = (1 + a if rng_name in ("|x|<=1", "|x|<=100") else np.maximum(a, 1 / a),)
    elif spec.domain == "power":  # y spans the exponents whose results stay in range; some x < 0
        with np.errstate(divide="ignore"):
            y = rng.uniform(-1, 1, n) * big / np.maximum(np.abs(np.log(a)), 1)
        neg = rng.random(n) < 0.25
        xs = (np.where(neg, -a, a), np.where(neg, np.round(y), y))
    elif spec.arity == 2:
        xs = (s, _raw(rng_name, dt, n, rng))
    else:
        xs = (s,)
    with np.errstate(over="ignore"):
        return tuple(x.astype(dt) for x in xs)


def special_inputs(name: str, dt) -> tuple[np.ndarray, ...]:
    info = np.finfo(dt)
    sp = np.array(SPECIALS + [float(info.smallest_subnormal), float(info.tiny), float(info.max),
                              -float(info.max), -float(info.smallest_subnormal)], dtype=dt)
    if SPECS[name].arity == 1:
        return (sp,)
    y, x = np.meshgrid(sp, sp)
    return (y.ravel(), x.ravel())


# --- reference ------------------------------------------------------------------------------------

def _exact_one(fn, args) -> mpmath.mpf:
    try:
        r = fn(*args)
    except (ZeroDivisionError, ValueError):
        return MP.nan
    if isinstance(r, mpmath.mpc):
        return r.real if r.imag == 0 else MP.nan
    return r


def reference(name: str, xs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo): float64 arrays with hi + lo the exact value to ~2^-80 relative (lo = 0 where hi
    is not finite)."""
    fn = SPECS[name].exact
    hi = np.empty(xs[0].size)
    lo = np.zeros(xs[0].size)
    cols = [x.astype(np.float64).tolist() for x in xs]
    with MP.workprec(PREC):
        for i, args in enumerate(zip(*cols)):
            r = _exact_one(fn, [MP.mpf(a) for a in args])
            h = float(r)
            hi[i] = h
            if math.isfinite(h):
                lo[i] = float(r - h)
    return hi, lo


_FMT = {np.float64: (53, -1021), np.float32: (24, -125)}


def ulp_error(got: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """|got - exact| in ulps of the exact value; where the exact value rounds to inf or nan, or got
    is not finite, the number of representable values between got and the rounded exact value
    (0 when equal, inf for a nan against a number)."""
    dt = got.dtype.type
    p, emin = _FMT[dt]
    with np.errstate(over="ignore", invalid="ignore"):
        ref = hi.astype(dt)
        _, e = np.frexp(hi)
        e = np.where(hi == 0, emin, np.maximum(e, emin))
        frac = np.abs((got.astype(np.float64) - hi) - lo) / np.ldexp(1.0, e - p)
    finite = np.isfinite(ref) & np.isfinite(got)
    return np.where(finite, frac, ulp_distance(got, ref))


# --- compiled functions -----------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _batch(dt) -> Callable:
    """One compiled function applying every numpy-spelled op to its own operands."""
    import aot

    names = [n for n, s in SPECS.items() if s.numpy is not None]

    def run(*flat):
        out, i = [], 0
        for n in names:
            k = SPECS[n].arity
            out.append(SPECS[n].numpy(*flat[i:i + k]))
            i += k
        return tuple(out)

    compiled = aot.compile(run, fullgraph=True)  # no numpy fallback: every op is compiled

    def call(per_name: dict) -> dict:
        flat = [x for n in names for x in per_name[n]]
        return dict(zip(names, compiled(*flat)))

    return call


@functools.lru_cache(maxsize=None)
def _kernels(dt, n: int, target: str | None = None, names: tuple = tuple(SPECS)) -> dict[str, Callable]:
    """One-op kernels of `names`, for the host or a named target (x86-64 levels)."""
    import ir
    from codegen.targets.foreign import resolve_target
    from ir.types import TensorType

    from .helpers import add_elementwise, jit

    m = ir.Module("accuracy")
    t = TensorType(ir.dtypes.from_numpy(dt), (n,))
    for name in names:
        add_elementwise(m, f"k_{name}", {"power": "pow"}.get(name, name), [t] * SPECS[name].arity)
    fns = jit(m, target=None if target is None else resolve_target(target))
    return {name: fns[f"k_{name}"] for name in names}  # prefixed: a kernel named `exp` would be libm's


# other x86-64 levels whose libmvec variants the host can run: SSE4 (b) and AVX2 (d) vectors
ISA_TARGETS = {"x86-64": "sse2", "x86-64-v3": "avx2"}


def runnable_isa_targets() -> list[str]:
    from codegen import host_target

    host = host_target()
    if not host.triple.startswith("x86_64") or host.vector_library != "libmvec":
        return []
    return [t for t, feat in ISA_TARGETS.items() if host.has_feature(feat)]


def _layout(x: np.ndarray, layout: str) -> np.ndarray:
    if layout == "vector":
        return np.ascontiguousarray(x)
    buf = np.empty(2 * x.size, x.dtype)[::2]
    buf[...] = x
    return buf


def run_compiled(dt, layout: str, per_name: dict[str, tuple]) -> dict[str, np.ndarray]:
    """Compiled results for {name: operands} (every name of SPECS; operands of one length)."""
    args = {n: tuple(_layout(x, layout) for x in xs) for n, xs in per_name.items()}
    with np.errstate(all="ignore"):
        out = _batch(dt)({n: a for n, a in args.items() if SPECS[n].numpy is not None})
        for n, a in args.items():
            if SPECS[n].numpy is None:
                out[n] = _kernels(dt, a[0].size, None, (n,))[n](*a)
    return {n: np.asarray(v) for n, v in out.items()}


def run_target(dt, target: str, per_name: dict[str, tuple]) -> dict[str, np.ndarray]:
    """Results of the one-op kernels built for `target` (contiguous: its vector variants)."""
    size = next(iter(per_name.values()))[0].size
    fns = _kernels(dt, size, target)
    with np.errstate(all="ignore"):
        return {n: np.asarray(fns[n](*xs)) for n, xs in per_name.items()}


# --- measurement --------------------------------------------------------------------------------------

@dataclass
class Measured:
    name: str
    dtype: type
    range: str
    layout: str
    max_ulp: float
    worst_input: tuple
    got: float
    want: float


def measure(n: int, seed: int = 0, dtypes=DTYPES, ranges=RANGES, names=None, targets=()) -> list[Measured]:
    """Max ulp error per (function, dtype, range, layout) over `n` samples per range; `targets`
    adds the vector paths of other x86-64 levels (layout "<target> vector")."""
    names = list(SPECS) if names is None else list(names)
    rows = []
    for dt in dtypes:
        for rng_name in ranges:
            per = {}
            for name in SPECS:  # every op runs in the batch; ranges that do not apply reuse |x|<=1
                per[name] = inputs(name, dt, rng_name if applies(name, rng_name) else "|x|<=1", n, seed)
            refs = {name: reference(name, per[name]) for name in names if applies(name, rng_name)}
            runs = [(layout, functools.partial(run_compiled, dt, layout)) for layout in LAYOUTS]
            runs += [(f"{t} vector", functools.partial(run_target, dt, t)) for t in targets]
            for layout, run in runs:
                got = run(per)
                for name, (hi, lo) in refs.items():
                    err = ulp_error(got[name], hi, lo)
                    w = int(np.argmax(err))
                    rows.append(Measured(name, dt, rng_name, layout, float(err[w]),
                                         tuple(float(x[w]) for x in per[name]), float(got[name][w]),
                                         float(hi[w])))
    return rows


def special_errors(dt, layout: str) -> dict[str, np.ndarray]:
    """ulp distance per special input between compiled results and numpy's (float64, rounded
    once for float32), with inf where they differ in nan-ness or in the sign of a zero."""
    from ir.opdef import OPDEFS

    per = {name: special_inputs(name, dt) for name in SPECS}
    size = max(xs[0].size for xs in per.values())
    padded = {name: tuple(np.resize(x, size) for x in xs) for name, xs in per.items()}
    got = run_compiled(dt, layout, padded)
    out = {}
    for name, xs in per.items():
        op = {"power": "pow"}.get(name, name)
        with np.errstate(all="ignore"):
            want = np.asarray(OPDEFS[op].reference(*(x.astype(np.float64) for x in xs))).astype(dt)
        g = got[name][: xs[0].size]
        d = ulp_distance(g, want)
        zero = (want == 0) & (g == 0)
        out[name] = np.where(zero & (np.signbit(g) != np.signbit(want)), np.inf, d)
    return out
