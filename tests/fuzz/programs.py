"""Random numpy programs for differential testing of compiled code against numpy itself.

A program is a few steps over a pool of values (its inputs first): unary and binary ufuncs
(integer bitwise ops and shifts included), Python scalars (weak promotion; out-of-range ints in
comparisons), where/clip/isclose, reductions (axis, keepdims), layout ops (transposes, flips,
stepped slices, reshape, expand_dims, broadcast_to, take, concatenate) and several outputs. Inputs
have random dtypes and broadcast-compatible shapes with 0- and 1-sized dims, hold edge values
(signed zeros, infinities, nan, values on the complex branch cuts, integer extremes), and arrive
with random layouts: C, Fortran, reversed, stepped, big-endian and unaligned.

Steps are built by running numpy eagerly, seeded by one integer, so a program is reproduced by its
seed alone. A step numpy refuses (TypeError, or a dtype outside the dialect) is dropped; a step that
raises an error numpy raises at run time (an index out of bounds, a negative integer power, an
out-of-range Python int in arithmetic) ends the program, which then expects that error, and some
programs keep such a raising value dead (unused by the outputs): the error must still be raised.
"""
from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field

import numpy as np

DTYPES = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
SUPPORTED = frozenset(np.dtype(d) for d in DTYPES)
RAISED = (IndexError, ValueError, OverflowError)  # errors numpy raises for data or sizes

UNARY = tuple(getattr(np, n) for n in (
    "negative", "positive", "absolute", "sign", "square", "reciprocal", "conjugate", "real", "imag",
    "sin", "cos", "tan", "exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "tanh", "sinh",
    "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "rint", "trunc",
    "isnan", "isinf", "isfinite", "logical_not", "invert"))
BINARY = tuple(getattr(np, n) for n in (
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power", "maximum",
    "minimum", "fmax", "fmin", "arctan2", "hypot", "logaddexp", "logaddexp2", "heaviside", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"))
REDUCE = ("sum", "prod", "max", "min", "any", "all", "mean", "argmax", "argmin", "var", "std")
LAYOUT = ("T", "flip", "step", "reverse", "reshape", "expand", "broadcast", "take", "concat")
SCALARS = (2, -1, 3, 0, 1.5, -0.0, float("inf"), float("nan"), True, 0.5j, complex(0, -0.0),
           2**40, -2**40, 2**63, 31, 64)
LAYOUTS = ("C", "C", "F", "reversed", "stepped", "big-endian", "unaligned")

# edge values of each kind: the C99 Annex G special cases and branch cuts, integer extremes
FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 1e-310, 1e300, -1e300, 3.0)
# complex parts: no huge finite values, whose products overflow to results that depend on whether
# numpy's build contracted a*a - b*b into an FMA (-inf there, nan without)
COMPLEX_PART_EDGES = (0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 3.0)
INT_EDGES = {"int32": (0, -1, 1, 2**31 - 1, -2**31, 7, -8, 31, 32), "int64": (0, -1, 1, 2**63 - 1, -2**63, 63, 64)}


@dataclass(frozen=True)
class Program:
    seed: int
    inputs: tuple
    steps: tuple
    outputs: tuple  # pool indices returned (the last value first)
    expect_error: type | None = None  # the error numpy raises (then the program has no outputs)
    layouts: tuple = field(default=())
    scales: tuple = field(default=())  # per output: magnitudes a sum behind it cancelled (see mismatch)

    def __repr__(self) -> str:
        ins = ", ".join(f"{a.dtype.str}{list(a.shape)}:{lay}" for a, lay in zip(self.inputs, self.layouts))
        raises = f" raises {self.expect_error.__name__}" if self.expect_error else ""
        return f"Program(seed={self.seed}, ({ins}) -> {list(self.steps)} outputs {list(self.outputs)}{raises})"

    def __call__(self, *inputs, arrays: bool = False):
        """The program on `inputs`; `arrays`: every value a 0-d array where numpy would make a
        scalar (the reference: numpy's scalars compare complex values without the ufuncs' nan
        checks, so (inf+nanj) > 0 is True for a scalar and False for an array; aot computes 0-d
        values as arrays)."""
        pool = list(inputs)
        for step in self.steps:
            out = apply(step, pool)
            pool.append(np.asarray(out) if arrays else out)
        return tuple(pool[i] for i in self.outputs)


def apply(step: tuple, pool: list):
    kind, name, args = step[0], step[1], step[2:]
    x = pool[args[0]]
    if kind == "unary":
        return getattr(np, name)(x)
    if kind == "binary":
        return getattr(np, name)(x, pool[args[1]])
    if kind == "scalar":
        s, reflected = args[1], args[2]
        fn = getattr(np, name)
        return fn(s, x) if reflected else fn(x, s)
    if kind == "where":
        return np.where(x > 0, pool[args[1]], pool[args[2]])
    if kind == "clip":
        return np.clip(x, args[1], args[2])
    if kind == "isclose":
        return np.isclose(x, pool[args[1]], equal_nan=args[2])
    if kind == "reduce":
        axis, keepdims = args[1], args[2]
        fn = getattr(np, name)
        if name in ("argmax", "argmin"):
            return fn(x, axis=axis, keepdims=keepdims)
        return fn(x, axis=axis, keepdims=keepdims)
    return _layout(name, x, args[1])


def _layout(name: str, x, p):
    nd = np.ndim(x)
    if name == "T":
        return np.transpose(x)
    if name == "flip":
        return np.flip(x, p % nd) if nd else x
    if name == "step":
        return x[(slice(None),) * (p % nd) + (slice(p % 2, None, 2),)] if nd else x
    if name == "reverse":
        return x[(slice(None),) * (p % nd) + (slice(None, None, -1 - p % 2),)] if nd else x
    if name == "reshape":
        return np.reshape(x, (-1,))
    if name == "expand":
        return np.expand_dims(x, p % (nd + 1))
    if name == "take":
        return np.take(x, list(p), axis=-1) if nd else x
    if name == "concat":
        return np.concatenate((x, x[::-1]), axis=p % nd) if nd else x
    return np.broadcast_to(x, (2,) + np.shape(x))


def reference(fn, *args):
    """fn on numpy arrays with numpy's floating-point warnings silenced (nan/inf are data here)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


# --- generation --------------------------------------------------------------------------------------

def _with_edges(gen: np.random.Generator, a: np.ndarray, pool: tuple, edges: bool) -> np.ndarray:
    """`a` with some elements (up to half) replaced by values drawn from `pool`."""
    if edges and a.size:
        flat = a.reshape(-1)
        k = gen.integers(1, max(2, flat.size // 2 + 1))
        flat[gen.choice(flat.size, k, replace=False)] = gen.choice(np.array(pool, dtype=flat.dtype), k)
    return a


def _values(rng: random.Random, dtype: np.dtype, shape: tuple, edges: bool) -> np.ndarray:
    gen = np.random.default_rng(rng.getrandbits(32))
    if dtype.kind == "b":
        return np.asarray(gen.random(shape) < 0.5)  # a 0-d array, not a numpy scalar (a constant)
    if dtype.kind == "i":
        return _with_edges(gen, gen.integers(-8, 9, shape).astype(dtype), INT_EDGES[dtype.name], edges)
    if dtype.kind == "c":  # set the parts: inf * 1j would make nans
        out = np.empty(shape, dtype)
        out.real = _with_edges(gen, gen.uniform(-3, 3, shape), COMPLEX_PART_EDGES, edges)
        out.imag = _with_edges(gen, gen.uniform(-3, 3, shape), COMPLEX_PART_EDGES, edges)
        return out
    with np.errstate(over="ignore"):  # 1e300 in float32 is inf: an edge value too
        return _with_edges(gen, gen.uniform(-3, 3, shape), FLOAT_EDGES, edges).astype(dtype)


def with_layout(a: np.ndarray, how: str) -> np.ndarray:
    """`a` itself, or an equal array with another memory layout (strides, byte order, alignment)."""
    if how == "F" or (a.ndim == 0 and how in ("reversed", "stepped")):
        return np.asfortranarray(a)
    if how == "reversed":
        return np.ascontiguousarray(a[::-1])[::-1]
    if how == "stepped":
        return np.repeat(a, 2, axis=-1)[..., ::2]
    if how == "big-endian":
        return a.astype(a.dtype.newbyteorder(">"))
    if how == "unaligned" and a.dtype.itemsize > 1:
        buf = np.zeros(a.nbytes + 1, np.uint8)
        out = np.frombuffer(buf.data, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
        out[...] = a
        return out
    return a


def _shape_like(rng: random.Random, base: tuple) -> tuple:
    """A shape that broadcasts with `base`: some dims 1, maybe fewer leading dims."""
    drop = rng.randint(0, len(base))
    return tuple(1 if rng.random() < 0.25 else d for d in base[drop:])


def _step(rng: random.Random, pool: list) -> tuple:
    n = len(pool)
    i = rng.randrange(n)
    kind = rng.choice(("unary", "unary", "binary", "binary", "binary", "scalar", "where", "clip", "isclose",
                       "reduce", "layout", "layout"))
    if kind == "unary":
        return ("unary", rng.choice(UNARY).__name__, i)
    if kind == "binary":
        return ("binary", rng.choice(BINARY).__name__, i, rng.randrange(n))
    if kind == "scalar":
        return ("scalar", rng.choice(BINARY).__name__, i, rng.choice(SCALARS), rng.random() < 0.5)
    if kind == "where":
        return ("where", "where", i, rng.randrange(n), rng.randrange(n))
    if kind == "clip":
        lo = rng.choice((-1, 0, 0.5, -0.0))
        return ("clip", "clip", i, lo, rng.choice((lo, 1, 2.5, float("inf"))))
    if kind == "isclose":
        return ("isclose", "isclose", i, rng.randrange(n), rng.random() < 0.5)
    if kind == "reduce":
        nd = np.ndim(pool[i])
        axis = None if not nd or rng.random() < 0.4 else rng.randint(-nd, nd - 1)
        return ("reduce", rng.choice(REDUCE), i, axis, rng.random() < 0.3)
    name = rng.choice(LAYOUT)
    if name == "take":
        length = np.shape(pool[i])[-1] if np.ndim(pool[i]) else 1
        idx = tuple(rng.randint(-length - 1, length) for _ in range(rng.randint(1, 3)))  # some out of bounds
        return ("layout", "take", i, idx)
    return ("layout", name, i, rng.randint(0, 5))


def generate(seed: int, max_steps: int = 6) -> Program:
    """The program of `seed` (deterministic)."""
    rng = random.Random(seed)
    dims = (0, 1, 1, 2, 3, 5, 8, 17, 33)  # sizes around vector widths: full vectors and tails
    base = tuple(rng.choice(dims) for _ in range(rng.choice((0, 1, 1, 2, 2, 3))))
    inputs, layouts = [], []
    for _ in range(rng.randint(1, 3)):
        dt = np.dtype(rng.choice(DTYPES))
        a = _values(rng, dt, _shape_like(rng, base), edges=rng.random() < 0.7)
        how = rng.choice(LAYOUTS)
        inputs.append(with_layout(a, how))
        layouts.append(how)
    pool, steps, error = list(inputs), [], None
    cancel = [0.0] * len(pool)
    for _ in range(rng.randint(1, max_steps)):
        step = _step(rng, pool)
        try:
            out = np.asarray(reference(apply, step, pool))
        except TypeError:
            continue  # numpy refuses this step: not a valid program
        except RAISED as e:
            if "broadcast" in str(e) or rng.random() < 0.6:  # shapes that never fit: not a program
                continue
            steps.append(step)
            error = type(e)  # the program ends in numpy's error; maybe its value stays dead
            break
        if out.dtype not in SUPPORTED or _ill_conditioned(step, pool, len(inputs), out):
            continue
        steps.append(step)
        cancel.append(_cancellation(step, pool, cancel))
        pool.append(out)
    if not steps:
        steps.append(("layout", "T", 0, 0))
        pool.append(np.transpose(pool[0]))
        cancel.append(cancel[0])
    n_in = len(inputs)
    computed = list(range(n_in, len(pool)))
    if error is not None:
        outputs = (computed[-1],) if computed else (0,)  # the raising step is not an output: it is dead
    else:
        extra = rng.sample(computed[:-1], min(len(computed) - 1, rng.randint(0, 2)))
        outputs = (computed[-1], *extra)
    return Program(seed, tuple(inputs), tuple(steps), outputs, error, tuple(layouts),
                   tuple(cancel[i] for i in outputs))


def _ill_conditioned(step: tuple, pool: list, n_inputs: int, out: np.ndarray) -> bool:
    """Whether a last-bit difference in the values the step reads may change its result entirely:
    a valid implementation (FMA contraction where numpy's loop for that memory layout has none)
    would then disagree with numpy by more than any tolerance.

    - argmax/argmin of computed inexact values with a (near) tie for the extreme: the index
      follows the rounding (numpy's contiguous complex multiply fuses an FMA, its strided loop
      does not, so x * x[::-1] ties exactly in numpy and not in aot);
    - a complex power exp(e log(b)) whose |e| |log b| times the precision's epsilon exceeds a
      tenth of the comparison's tolerance: the angle of the result is that uncertain (beyond
      2^52 the sign of an infinite part is rounding noise)."""
    kind, name = step[0], step[1]
    if kind == "reduce" and name in ("argmax", "argmin"):
        return step[2] >= n_inputs and _near_tie(np.asarray(pool[step[2]]), step[3], name)
    if name == "power" and kind in ("binary", "scalar"):
        base = np.asarray(pool[step[2]])
        expo = np.asarray(pool[step[3]]) if kind == "binary" else np.asarray(step[3])
        if kind == "scalar" and step[4]:
            base, expo = expo, base
        if out.dtype.kind != "c":
            return False
        with np.errstate(all="ignore"):
            spread = np.abs(expo.astype(np.complex128)) * np.abs(np.log(base.astype(np.complex128)))
        noisy = np.isfinite(spread) & (spread * np.finfo(out.dtype).eps > RTOL[out.dtype.name] / 10)
        return bool(np.any(noisy))  # (infinite bases and exponents: C99's special values, exact)
    return False


def _near_tie(x: np.ndarray, axis, name: str) -> bool:
    """Whether an extreme of x along `axis` (None: all) has another element within rounding of it
    (complex: of its real part, which orders first)."""
    if x.dtype.kind not in "fc" or x.size < 2 or x.ndim == 0:
        return False
    v = x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1)
    key = v.real.astype(np.float64)
    key = np.where(np.isfinite(key), key, np.nan)  # nan and inf extremes are exact: the finite ones
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # lanes without a finite value
        ext = np.nanmax(key, axis=-1, keepdims=True) if name == "argmax" else np.nanmin(key, axis=-1, keepdims=True)
    close = np.abs(key - ext) <= 1e-6 * (np.abs(ext) + 1e-300)  # wider than any step's rounding
    return bool(np.any(close.sum(axis=-1) > 1))


SUMMING = ("sum", "mean", "var", "std")  # their order of additions is the implementation's


def _cancellation(step: tuple, pool: list, cancel: list) -> float:
    """The largest magnitude a sum behind this value may have cancelled: a summation order other
    than numpy's pairwise one (a compiled, vectorised or threaded sum) is as exact, but after
    cancellation the two agree only to rounding of that magnitude (int64 extremes summed in
    float64 by np.mean, say)."""
    n = {"unary": 1, "binary": 2, "scalar": 1, "where": 3, "clip": 1, "isclose": 2, "reduce": 1, "layout": 1}
    args = [a for a in step[2:2 + n[step[0]]] if isinstance(a, int) and not isinstance(a, bool)]
    scale = max((cancel[a] for a in args), default=0.0)
    if step[0] == "reduce" and step[1] in SUMMING:
        x = np.abs(np.asarray(pool[step[2]], dtype=np.complex128))
        finite = x[np.isfinite(x)]
        scale = max(scale, float(finite.max()) if finite.size else 0.0)
    return scale


# --- comparison -------------------------------------------------------------------------------------

RTOL = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-9, "complex128": 1e-9}


def rtol_of(values) -> float:
    """Of the least precise inexact value a program computes (an f32 step rounds an f64 result)."""
    return max((RTOL[np.dtype(v.dtype).name] for v in values if np.dtype(v.dtype).name in RTOL),
               default=RTOL["float64"])


def mismatch(got, want, rtol: float, cancelled: float = 0.0) -> str | None:
    """Why `got` is not numpy's `want` (None when it is): type, dtype, shape, exact ints and bools,
    nan and infinity positions, and inexact values within `rtol` of the largest finite magnitude."""
    want = np.asarray(want)
    if not isinstance(got, (np.ndarray, np.generic)):
        return f"got {type(got).__name__}, not an ndarray"
    got = np.asarray(got)  # 0-d results: numpy scalars and 0-d arrays alike
    if got.dtype != want.dtype.newbyteorder("="):
        return f"dtype {got.dtype} != numpy's {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != numpy's {want.shape}"
    if want.dtype.kind in "bi":
        return None if np.array_equal(got, want) else "values differ"
    g, w = got.astype(np.complex128), want.astype(np.complex128)  # real values have zero imaginary parts
    nan_g, nan_w = np.isnan(g), np.isnan(w)  # a complex nan is nan in either part; which is not specified
    if not np.array_equal(nan_g, nan_w):
        return "nan positions differ"
    g, w = g[~nan_w], w[~nan_w]
    inf = np.isinf(g) | np.isinf(w)
    for gp, wp in ((g.real[inf], w.real[inf]), (g.imag[inf], w.imag[inf])):  # exact infinite parts,
        part_inf = np.isinf(gp) | np.isinf(wp)  # the finite part beside one within rtol
        close = np.abs(gp - wp) <= rtol * np.abs(wp) + 1e-300
        if not (np.array_equal(gp[part_inf], wp[part_inf], equal_nan=True) and np.all(close[~part_inf])):
            return f"infinities differ ({g[inf][:4]} vs numpy's {w[inf][:4]})"
    g, w = g[~inf], w[~inf]
    if w.size:  # errors relative to each element's magnitude (complex: as a whole), cancellation allowed
        err, mag = np.abs(g - w), np.abs(w)
        bound = rtol * (mag + 1e-3 * mag.max() + cancelled + 1e-300)
        if not np.all(err <= bound):
            k = int(np.argmax(err - bound))
            return f"values differ (e.g. {g[k]!r} vs numpy's {w[k]!r})"
    return None
