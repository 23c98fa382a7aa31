#!/usr/bin/env python3
"""numpy coverage of the aot front end: every public callable of `np`, `np.linalg` and `np.fft`, and
the methods (reduce, accumulate, reduceat, outer, at) of every ufunc, with its status in traced code.

    .venv/bin/python tools/numpy_coverage.py                # every name, then the totals
    .venv/bin/python tools/numpy_coverage.py --unsupported  # only what does not translate
    .venv/bin/python tools/numpy_coverage.py --markdown     # a markdown table

Statuses, read from the front end itself (nothing here lists what is supported):
  compiled     translated to one core op: a ufunc of aot.frontend.numpy_ufuncs.UFUNC_CORE (built from
               the op rows' numpy names), or a function registered against its op row
               (aot.frontend.registry.translates)
  decomposed   translated by a decomposition into core ops: numpy_ufuncs._DECOMPOSED, or a module's
               DECOMPOSITIONS table (aot.frontend.numpy_api.DECOMPOSITIONS)
  unsupported  no translation, with the reason
A ufunc method is probed: it is called on a StagedArray (aot/frontend/staged.py) and on a capture
TracedArray (aot/compiler/capture.py), whose __array_ufunc__ decide which methods they dispatch; the
core ops it emits tell compiled (one) from decomposed. Methods numpy does not define for a ufunc
(reduce of a unary ufunc, at of a two-output one, any method of a gufunc) are not listed.

The totals the coverage issue tracks: ufuncs covered out of all of numpy's ufuncs, and array functions
covered out of those jax.numpy also implements (JAX_* below), leaving out classes and the
non-numeric functions of EXCLUDED (I/O, printing, datetime, type queries, ...).
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections import Counter
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from aot.frontend.refusals import REFUSED  # noqa: E402  (plain data: what traced code refuses, and why)

# --- data: jax.numpy's public names --------------------------------------------------------------------
# Taken from jax-ml/jax at commit cec06d116c05 (main, 2026-08-08; jax/version.py _version "0.11.1"):
# the names jax/numpy/__init__.py, jax/numpy/linalg.py and jax/numpy/fft.py import or define (the
# `import x as x` re-exports), without the submodules and the helper the package deletes.
JAX_SOURCE = "jax-ml/jax@cec06d116c05 (jax 0.11.1)"
JAX_NUMPY = """
ComplexWarning abs absolute acos acosh add all allclose amax amin angle any append
apply_along_axis apply_over_axes arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh
argmax argmin argpartition argsort argwhere around array array_equal array_equiv array_repr
array_split array_str asarray asin asinh astype atan atan2 atanh atleast_1d atleast_2d
atleast_3d average bartlett bfloat16 bincount bitwise_and bitwise_count bitwise_invert
bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor blackman block bool
bool_ broadcast_arrays broadcast_shapes broadcast_to c_ can_cast cbrt cdouble ceil character
choose clip column_stack complex128 complex64 complex_ complexfloating compress concat
concatenate conj conjugate convolve copy copysign corrcoef correlate cos cosh count_nonzero cov
cross csingle cumprod cumsum cumulative_prod cumulative_sum deg2rad degrees delete diag
diag_indices diag_indices_from diagflat diagonal diff digitize divide divmod dot double dsplit
dstack dtype e ediff1d einsum einsum_path empty empty_like equal euler_gamma exp exp2
expand_dims expm1 extract eye fabs fill_diagonal finfo flatnonzero flexible flip fliplr flipud
float16 float32 float4_e2m1fn float64 float6_e2m3fn float6_e3m2fn float8_e3m4 float8_e4m3
float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu
float_ float_power floating floor floor_divide fmax fmin fmod frexp from_dlpack frombuffer
fromfile fromfunction fromiter frompyfunc fromstring full full_like gcd generic geomspace
get_printoptions gradient greater greater_equal hamming hanning heaviside histogram histogram2d
histogram_bin_edges histogramdd hsplit hstack hypot i0 identity iinfo imag index_exp indices
inexact inf inner insert int1 int16 int2 int32 int4 int64 int8 int_ integer interp intersect1d
invert isclose iscomplex iscomplexobj isdtype isfinite isin isinf isnan isneginf isposinf isreal
isrealobj isscalar issubdtype iterable ix_ kaiser kron lcm ldexp left_shift less less_equal
lexsort linspace load log log10 log1p log2 logaddexp logaddexp2 logical_and logical_not
logical_or logical_xor logspace mask_indices matmul matrix_transpose matvec max maximum mean
median meshgrid mgrid min minimum mod modf moveaxis multiply nan nan_to_num nanargmax nanargmin
nancumprod nancumsum nanmax nanmean nanmedian nanmin nanpercentile nanprod nanquantile nanstd
nansum nanvar ndarray ndim negative newaxis nextafter nonzero not_equal number object_ ogrid
ones ones_like outer packbits pad partition percentile permute_dims pi piecewise place poly
polyadd polyder polydiv polyfit polyint polymul polysub polyval positive pow power printoptions
prod promote_types ptp put put_along_axis quantile r_ rad2deg radians ravel ravel_multi_index
real reciprocal remainder repeat reshape resize result_type right_shift rint roll rollaxis roots
rot90 round s_ save savez searchsorted select set_printoptions setdiff1d setxor1d shape sign
signbit signedinteger sin sinc single sinh size sort sort_complex spacing split sqrt square
squeeze stack std subtract sum swapaxes take take_along_axis tan tanh tensordot tile top_k trace
transpose trapezoid tri tril tril_indices tril_indices_from trim_zeros triu triu_indices
triu_indices_from true_divide trunc ufunc uint uint1 uint16 uint2 uint32 uint4 uint64 uint8
union1d unique unique_all unique_counts unique_inverse unique_values unpackbits unravel_index
unsignedinteger unstack unwrap vander var vdot vecdot vecmat vectorize vsplit vstack where zeros
zeros_like
""".split()
JAX_NUMPY_LINALG = """
cholesky cond cross det diagonal eig eigh eigvals eigvalsh inv lstsq matmul matrix_norm
matrix_power matrix_rank matrix_transpose multi_dot norm outer pinv qr slogdet solve svd svdvals
tensordot tensorinv tensorsolve trace vecdot vector_norm
""".split()
JAX_NUMPY_FFT = """
fft fft2 fftfreq fftn fftshift hfft ifft ifft2 ifftn ifftshift ihfft irfft irfft2 irfftn rfft
rfft2 rfftfreq rfftn
""".split()

# --- data: functions outside the comparison (they make or read no array values) ----------------------
# Classes and scalar types (np.float32, np.ndarray, np.errstate, ...) are left out as well, found by
# isinstance(obj, type). numpy 2's string and char functions live in np.strings and np.char, which are
# not surveyed; its main namespace has none.
EXCLUDED: dict[str, tuple[str, ...]] = {
    "I/O": ("load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt", "fromfile",
            "fromregex", "fromstring", "frombuffer"),
    "printing and formatting": ("array2string", "array_repr", "array_str", "set_printoptions",
                                "get_printoptions", "printoptions", "format_float_positional",
                                "format_float_scientific", "base_repr", "binary_repr", "info"),
    "datetime": ("busday_count", "busday_offset", "is_busday", "datetime_as_string", "datetime_data",
                 "isnat"),  # isnat is a ufunc: it still counts among all ufuncs
    "dtype and type queries": ("can_cast", "common_type", "isdtype", "issubdtype", "min_scalar_type",
                               "mintypecode", "promote_types", "result_type", "typename", "iscomplexobj",
                               "isrealobj", "isscalar", "iterable", "isfortran"),
    "queries without an array result": ("shares_memory", "may_share_memory", "einsum_path"),
    "configuration and environment": ("seterr", "geterr", "seterrcall", "geterrcall", "setbufsize",
                                      "getbufsize", "show_config", "show_runtime", "get_include", "test"),
    "Python-object machinery": ("frompyfunc", "fromiter", "nested_iters"),
}
_EXCLUDED_BY_NAME = {n: cat for cat, names in EXCLUDED.items() for n in names}

# why a numeric function without a translation has none yet (a reason only: status comes from the
# front end's tables)
REASONS: dict[str, tuple[str, ...]] = {
    **{why: tuple(n for n, (w, _) in REFUSED.items() if w == why) for why, _ in REFUSED.values()},
}
_REASON_BY_NAME = {n: why for why, names in REASONS.items() for n in names}

NAMESPACES = (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft))
UFUNC_METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")
STATUSES = ("compiled", "decomposed", "unsupported")


@dataclass(frozen=True)
class Entry:
    namespace: str  # np, np.linalg, np.fft, ufunc methods
    name: str  # as the user spells it: np.sum, np.fft.rfft, np.add.reduce
    kind: str  # ufunc, function, class, method
    status: str
    detail: str  # the op, the decomposition table, or why not
    in_jax: bool | None  # whether jax.numpy has the name (None: ufunc methods, not compared)
    excluded: str | None  # the EXCLUDED category (or "class") leaving a function out of the comparison


# --- the front end's tables ----------------------------------------------------------------------------

class FrontEnd:
    """What aot.frontend translates, read from its tables."""

    def __init__(self) -> None:
        from aot.frontend import numpy_api, numpy_ufuncs, registry

        self.api, self.registry = numpy_api, registry
        self.ufunc_core = numpy_ufuncs.UFUNC_CORE
        self.ufunc_decomposed = numpy_ufuncs._DECOMPOSED
        self.decomposed_in = {f: m.__name__.rsplit(".", 1)[-1] for m in numpy_api.MODULES
                              for f in m.DECOMPOSITIONS}
        self.trace_time = {f for m in numpy_api.MODULES for f in getattr(m, "TRACE_TIME", ())}
        self.sized = {f: m.__name__.rsplit(".", 1)[-1] for m in numpy_api.MODULES
                      for f in getattr(m, "SIZED", ())}  # covered when a size= call compiles (probe_sized)

    def status(self, func) -> tuple[str, str] | None:
        """(status, detail) of a translated callable; None when the front end has no translation."""
        try:
            hash(func)
        except TypeError:
            return None
        if func in self.ufunc_core:
            return "compiled", f"op {self.ufunc_core[func]}"
        if func in self.api.ROW_FUNCTIONS:
            op, _ = self.registry.row_of(func)
            return "compiled", f"op {op}"
        if func in self.ufunc_decomposed:
            return "decomposed", "numpy_ufuncs._DECOMPOSED"
        if func in self.sized:  # data-dependent without size=: covered when a size= call compiles
            return probe_sized(func, self.sized[func])
        if func in self.decomposed_in:
            return "decomposed", f"{self.decomposed_in[func]}.DECOMPOSITIONS"
        if func in self.trace_time:
            return "decomposed", "computed by numpy while tracing (no array arguments): a constant"
        if func in self.api.TRANSLATIONS:  # the tables above make up TRANSLATIONS (tests/ops/)
            raise AssertionError(f"{func} is translated but in none of the front end's tables")
        return None


def _ufunc_reason(u: np.ufunc) -> str:
    if u.signature is not None:
        return f"generalised ufunc {u.signature}: no op row names it"
    if u.nout > 1:
        return f"{u.nout} outputs: no op row names it"
    return "no op row names it and it has no decomposition"


def _function_reason(name: str) -> str:
    return _REASON_BY_NAME.get(name, "no translation")


def public_callables(mod) -> list[tuple[str, object]]:
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    out = []
    for n in sorted(set(names)):
        obj = getattr(mod, n, None)
        if n.startswith("_") or obj is None or not callable(obj) or isinstance(obj, type(np)):
            continue
        out.append((n, obj))
    return out


def survey_namespaces(fe: FrontEnd) -> list[Entry]:
    jax = {"np": set(JAX_NUMPY), "np.linalg": set(JAX_NUMPY_LINALG), "np.fft": set(JAX_NUMPY_FFT)}
    entries = []
    for ns, mod in NAMESPACES:
        for name, obj in public_callables(mod):
            if isinstance(obj, np.ufunc):
                kind = "ufunc"
            elif isinstance(obj, type):
                kind = "class"
            else:
                kind = "function"
            excluded = "class" if kind == "class" else (
                _EXCLUDED_BY_NAME.get(name) if ns == "np" and kind == "function" else None)
            found = fe.status(obj)
            if found is not None:
                status, detail = found
            elif excluded or name in _EXCLUDED_BY_NAME:
                status, detail = "unsupported", f"out of scope: {excluded or _EXCLUDED_BY_NAME[name]}"
            elif kind == "ufunc":
                status, detail = "unsupported", _ufunc_reason(obj)
            else:
                status, detail = "unsupported", _function_reason(name)
            entries.append(Entry(ns, f"{ns}.{name}", kind, status, detail, name in jax[ns], excluded))
    return entries


# --- ufunc methods: probed through the arrays' __array_ufunc__ -----------------------------------------

def _applies(u: np.ufunc, method: str) -> bool:
    """Whether numpy defines `method` for `u`."""
    if u.signature is not None:
        return False
    if method in ("reduce", "accumulate", "reduceat"):
        return u.nin == 2 and u.nout == 1
    if method == "outer":
        return u.nin == 2
    return u.nout == 1  # at


def _loop_dtype(u: np.ufunc) -> np.dtype:
    """A dtype of one of u's loops whose inputs share it (float64 first)."""
    for prefer in "d", "l", "?", None:
        for t in u.types:
            ins = t.split("->")[0]
            if len(set(ins)) == 1 and (ins[0] == prefer or (prefer is None and ins[0] not in "OMm")):
                return np.dtype(ins[0])
    return np.dtype(np.float64)


def _method_args(u: np.ufunc, method: str, x, dt: np.dtype) -> tuple:
    if method == "reduceat":
        return x, [0, 2]
    if method == "outer":
        return x, x
    if method == "at":
        return (x, [0], np.ones(1, dt)) if u.nin == 2 else (x, [0])
    return (x,)


class _Counting:
    """An EagerEmitter that records the core ops emitted through it."""

    def __init__(self) -> None:
        from aot.frontend import EagerEmitter

        self.inner, self.ops = EagerEmitter(), []

    def is_value(self, x) -> bool:
        return self.inner.is_value(x)

    def emit(self, op, operands, attrs):
        self.ops.append(op)
        return self.inner.emit(op, operands, attrs)

    def assign(self, target, new) -> None:  # in-place updates (np.put, ufunc.at)
        self.ops.append("scatter")
        self.inner.assign(target, new)


def _first_line(e: BaseException) -> str:
    """The error's first clause, without the source location or advice."""
    return str(e).split("\n")[0].split(" (at ")[0].split("; ")[0]


def probe_method(u: np.ufunc, method: str) -> tuple[str, str]:
    from aot.compiler.capture import CaptureTracer, GraphBreak, ValMeta
    from aot.frontend import FrontendError, StagedArray
    from ir import dtypes as D

    dt = _loop_dtype(u)
    em = _Counting()
    staged = StagedArray(np.ones(4, dt), em)
    try:
        with np.errstate(all="ignore"):  # the eager probe computes (arctanh.at of ones divides by zero)
            getattr(u, method)(*_method_args(u, method, staged, dt))
    except (FrontendError, NotImplementedError, GraphBreak) as e:
        return "unsupported", _first_line(e)
    except Exception as e:  # noqa: BLE001  (numpy's own error for these operands: report it)
        return "unsupported", f"{type(e).__name__}: {_first_line(e)}"
    tracer = CaptureTracer()
    traced = tracer.placeholder("x", ValMeta(D.from_numpy(dt), (4,)))
    try:
        getattr(u, method)(*_method_args(u, method, traced, dt))
    except (FrontendError, NotImplementedError, GraphBreak) as e:
        return "unsupported", f"compiled code: {_first_line(e)}"
    ops = [op for op in em.ops if op != "constant"]
    return ("compiled", f"op {ops[0]}") if len(ops) == 1 else ("decomposed", f"{len(ops)} core ops")


# --- functions with jax's size=: probed by compiling a size= call ----------------------------------------

_PROBE_X = np.array([3.0, 0.0, 1.0, 3.0, -2.0, 0.0, 5.0])
_PROBE_Y = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0])  # also a condition (np.extract, np.compress)


def _padded(a: np.ndarray, size: int, fill) -> np.ndarray:
    pad = np.full((size - len(a),) + a.shape[1:], fill, a.dtype)
    return np.concatenate([a, pad])


def probe_sized(func, module: str) -> tuple[str, str]:
    """Compile `func(..., size=n + 1, fill_value=7)` (n: the length of numpy's result) and compare it
    with numpy's result padded with 7; a result of several named parts (unique_all) takes size=n."""
    import aot

    args = (_PROBE_X, _PROBE_Y)[:len([p for p in _signature(func) if p.default is p.empty])]
    want = func(*args)
    parts = want if isinstance(want, tuple) else (want,)
    named = hasattr(type(want), "_fields")
    size = len(parts[0]) + (0 if named else 1)
    kwargs = {"size": size} if named else {"size": size, "fill_value": 7}
    name = func.__name__  # looked up when called, as user code does (numpy's own takes no size=)
    fn = (lambda a: getattr(np, name)(a, **kwargs)) if len(args) == 1 else \
        (lambda a, b: getattr(np, name)(a, b, **kwargs))
    try:
        got = aot.compile(fn, fullgraph=True)(*args)
    except Exception as e:  # noqa: BLE001  (why the size= form does not compile: report it)
        return "unsupported", f"size= probe: {type(e).__name__}: {_first_line(e)}"
    got = got if isinstance(got, tuple) else (got,)
    want = parts if named else tuple(_padded(np.asarray(p), size, 7) for p in parts)
    same = len(got) == len(want) and all(
        g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w, equal_nan=w.dtype.kind in "fc")
        for g, w in zip(got, want))
    if not same:
        return "unsupported", f"size= probe: differs from numpy ({got} vs {want})"
    return "decomposed", f"{module}.DECOMPOSITIONS with size=/fill_value= (probed: compiles, matches numpy)"


def _signature(func) -> list:
    return [p for p in inspect.signature(func).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def survey_methods() -> list[Entry]:
    ufuncs = sorted({obj for _, obj in public_callables(np) if isinstance(obj, np.ufunc)},
                    key=lambda u: u.__name__)
    entries = []
    for u in ufuncs:
        for method in UFUNC_METHODS:
            if _applies(u, method):
                status, detail = probe_method(u, method)
                entries.append(Entry("ufunc methods", f"np.{u.__name__}.{method}", "method", status, detail,
                                     None, None))
    return entries


# --- output --------------------------------------------------------------------------------------------

def _covered(entries: list[Entry]) -> int:
    return sum(e.status != "unsupported" for e in entries)


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "0/0"


def totals(entries: list[Entry]) -> list[str]:
    lines = ["", "Totals per namespace (compiled / decomposed / unsupported / all):"]
    for ns in [n for n, _ in NAMESPACES] + ["ufunc methods"]:
        c = Counter(e.status for e in entries if e.namespace == ns)
        lines.append(f"  {ns:<14} {c['compiled']:>4} {c['decomposed']:>4} {c['unsupported']:>4} "
                     f"{sum(c.values()):>5}")
    ufuncs = [e for e in entries if e.kind == "ufunc"]
    distinct = {getattr(np, e.name[3:]) for e in ufuncs}
    covered_distinct = {getattr(np, e.name[3:]) for e in ufuncs if e.status != "unsupported"}
    methods = [e for e in entries if e.kind == "method"]
    compared = [e for e in entries if e.kind == "function" and e.in_jax and not e.excluded]
    lines += ["", "Coverage:",
              f"  ufuncs covered: {_pct(_covered(ufuncs), len(ufuncs))} names "
              f"({len(covered_distinct)}/{len(distinct)} distinct ufuncs)",
              f"  array functions covered, of those jax.numpy also implements: "
              f"{_pct(_covered(compared), len(compared))}"]
    for ns, _ in NAMESPACES:
        part = [e for e in compared if e.namespace == ns]
        lines.append(f"    {ns:<12} {_pct(_covered(part), len(part))}")
    left_out = Counter(e.excluded for e in entries if e.kind in ("function", "class") and e.excluded)
    not_jax = sum(e.kind == "function" and not e.excluded and not e.in_jax for e in entries)
    lines += [f"  ufunc methods covered: {_pct(_covered(methods), len(methods))}",
              f"  (left out of the array-function count: {not_jax} numeric functions jax.numpy lacks; "
              + ", ".join(f"{n} {cat}" for cat, n in sorted(left_out.items(), key=lambda kv: -kv[1]))
              + f"; jax names from {JAX_SOURCE})"]
    return lines


def _jax_cell(e: Entry) -> str:
    return "" if e.in_jax is None else ("yes" if e.in_jax else "no")


def render_text(entries: list[Entry]) -> list[str]:
    w = max((len(e.name) for e in entries), default=10)
    lines = [f"{'name':<{w}}  {'status':<11}  jax  detail"]
    lines += [f"{e.name:<{w}}  {e.status:<11}  {_jax_cell(e):<3}  {e.detail}" for e in entries]
    return lines


def render_markdown(entries: list[Entry]) -> list[str]:
    lines = ["| name | status | in jax.numpy | detail |", "| --- | --- | --- | --- |"]
    lines += [f"| `{e.name}` | {e.status} | {_jax_cell(e)} | {e.detail.replace('|', '/')} |" for e in entries]
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="List the public callables of np, np.linalg and np.fft and "
                                            "the ufunc methods with their status in aot's front end.")
    p.add_argument("--markdown", action="store_true", help="print the list as a markdown table")
    p.add_argument("--unsupported", action="store_true", help="list only the unsupported callables")
    args = p.parse_args(argv)
    entries = survey_namespaces(FrontEnd()) + survey_methods()
    shown = [e for e in entries if e.status == "unsupported"] if args.unsupported else entries
    lines = (render_markdown if args.markdown else render_text)(shown)
    print("\n".join(lines + totals(entries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
