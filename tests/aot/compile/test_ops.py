"""Every core op through aot.compile's native path, against numpy, for every dtype numpy accepts.

Cases come from the registry: each elementwise op's numpy spelling is its row's `numpy_names`
resolved in the front end's translation table; reductions, layout, creation and linalg ops get a
numpy call per row below, and `test_every_op_has_a_case` keeps the table complete. Each (op, dtype)
compiles once and is then called with C, Fortran, transposed, stepped, negative-stepped and stride-0
inputs (the same guards hold, so the native code sees those strides), plus one odd shape (0-size,
0-d or 1-size dims). Ops that numpy refuses for a dtype (or answers in a dtype outside the dialect)
must be refused by aot with a TypeError too.
"""
from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import aot
import aot.ops
import ir
from aot.compiler.llvm_backend import PIPELINE, load_module
from aot.frontend import TRANSLATIONS
from ir.opdef import OPDEFS, MissingRule, OpError
from ir.reductions import REDUCTIONS as RECORDS
from ir.passes import run_pipeline

from ._support import DTYPES, SUPPORTED, assert_same, layouts, make, reference, rtol_for

# a few ulps apart from numpy: transcendentals (libm/libmvec; the rows' trait), and ops whose rounding
# order differs (complex division, reciprocal and sqrt, sums and products, FFTs, matmul); the rest
# must match to the last bits
FEW_ULPS = ({n for n, d in OPDEFS.items() if d.traits & {"transcendental", "fft", "contraction"}}
            | {"sqrt", "rsqrt", "div", "reciprocal", "sum", "prod"})
# odd shapes (a 0-size dim, 0-d, 1-size dims) for the 1st, 2nd, 3rd operand, which broadcast
# against each other; one row per (op, dtype), rotated over the ops
ODD_SHAPES = (((0, 3), (3,), (1, 3)), ((), (2, 3), (3,)), ((1, 1, 5), (4, 1), (1, 5)))
MAIN = (4, 6)
# operand domains where numpy's integer answer would be an error or a division by zero
INT_DOMAINS = {"floordiv": ("any", "nonzero"), "mod": ("any", "nonzero"), "pow": ("any", "small"),
               "reciprocal": ("nonzero",)}
# elementwise rows without a numpy spelling (their marker says so): compiled from a one-op ir function
# against the row's reference
DIRECT = tuple(n for n in aot.ops.ALL_OPS
               if OPDEFS[n].has("elementwise") and "no_frontend_name" in OPDEFS[n].markers)


@dataclass(frozen=True)
class Case:
    op: str
    fn: Callable
    arity: int


def _numpy_callable(op: str) -> Callable | None:
    for name in OPDEFS[op].numpy_names:
        obj = np
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is not None and obj in TRANSLATIONS:
            return obj
    return None


def _elementwise_cases() -> list[Case]:
    out = []
    for op in aot.ops.ALL_OPS:
        d = OPDEFS[op]
        if "elementwise" not in d.traits or op in DIRECT or op == "cast":
            continue
        fn = _numpy_callable(op)
        assert fn is not None, f"elementwise op {op} has no numpy spelling in the translation table"
        out.append(Case(op, fn, d.arity))
    return out


ELEMENTWISE = _elementwise_cases()


# --- elementwise ---------------------------------------------------------------------------------
def _operands(case: Case, dtype: str, shapes: tuple, seed: int) -> list[np.ndarray]:
    """One array per operand; `shapes` holds one shape per operand (or one shape for all)."""
    if not shapes or not isinstance(shapes[0], tuple):
        shapes = (shapes,) * 3
    if case.op == "where":
        return [make("bool", shapes[0], seed), make(dtype, shapes[1], seed + 1), make(dtype, shapes[2], seed + 2)]
    if case.op == "clip":  # numpy's complex clip fails on nans (NameError inside numpy 2.x)
        x = make(dtype, shapes[0], seed, specials=np.dtype(dtype).kind != "c")
        lo = make(dtype, shapes[1], seed + 1, specials=False)
        hi = make(dtype, shapes[2], seed + 2, specials=False)
        return [x, np.asarray(np.minimum(lo, hi)), np.asarray(np.maximum(lo, hi))]
    doms = INT_DOMAINS.get(case.op, ("any",) * case.arity) if np.dtype(dtype).kind == "i" else ("any",) * 3
    return [make(dtype, shapes[k], seed + k, doms[k]) for k in range(case.arity)]


def _odd(i: int) -> tuple:
    return ODD_SHAPES[i % len(ODD_SHAPES)]


def _assert_refused(compiled: Callable, *args) -> None:
    """numpy refuses these dtypes: aot must too, with a TypeError from capture, not from codegen."""
    with pytest.raises(TypeError) as info:
        compiled(*args)
    assert not any("codegen" in str(entry.path) for entry in info.traceback), info.getrepr()


def _numpy_accepts(fn: Callable, args: list) -> bool:
    try:
        r = reference(fn, *args)
    except (TypeError, ValueError):
        return False
    return all(np.asarray(x).dtype in SUPPORTED for x in (r if isinstance(r, tuple) else (r,)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ELEMENTWISE, ids=lambda c: c.op)
def test_elementwise(case: Case, dtype: str):
    i = ELEMENTWISE.index(case)
    main = _operands(case, dtype, MAIN, seed=i)
    odd = _operands(case, dtype, _odd(i + DTYPES.index(dtype)), seed=i + 100)
    n = case.arity

    def fn(*a):
        return case.fn(*a[:n]), case.fn(*a[n:])

    compiled = aot.compile(fn)
    if not _numpy_accepts(case.fn, main):
        _assert_refused(compiled, *main, *odd)
        return
    rtol = rtol_for(reference(case.fn, *main).dtype, case.op in FEW_ULPS)
    views = [layouts(a) for a in main]
    for name in views[0]:
        args = [v[name] for v in views]
        got = compiled(*args, *odd)
        want = reference(fn, *args, *odd)
        assert_same(got[0], want[0], rtol, f"{case.op} {dtype} {name}")
        assert_same(got[1], want[1], rtol, f"{case.op} {dtype} shapes {[a.shape for a in odd]}")
    # the entry specialised on C-contiguous arguments, then one for the other layouts (their guards)
    assert compiled.cache_info()["compiles"] == 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_cast_to_every_dtype(dtype: str):
    x = make(dtype, MAIN, seed=3)
    if np.dtype(dtype).kind in "fc":  # finite values: casting nan/inf to ints is undefined in C and numpy
        x = np.where(np.isfinite(x), x, 1.5).astype(dtype)
    compiled = aot.compile(lambda a: tuple(a.astype(t) for t in DTYPES))
    for name, v in layouts(x).items():
        got = compiled(v)
        for t, g in zip(DTYPES, got):
            assert_same(g, reference(v.astype, t), rtol_for(t, False), f"cast {dtype}->{t} {name}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", DIRECT)
def test_ops_without_numpy_spelling(op: str, dtype: str):
    """Rows reached by decompositions (gelu, ...) or ir programs, not by a numpy call: compile a
    one-op ir function and compare with the row's numpy reference."""
    d = OPDEFS[op]
    args = [make(dtype, MAIN, seed=k) for k in range(d.arity)]
    types = [ir.TensorType(ir.dtypes.from_numpy(a.dtype), a.shape) for a in args]
    try:
        ir.opdef.infer_result_types(op, types, {})
    except OpError:
        return  # numpy has no loop in the dialect's dtypes here (e.g. sqrt of bool gives float16)
    m = ir.Module("t")
    f, b = ir.new_func(m, "main", types, [f"a{k}" for k in range(d.arity)])
    b.ret(b.create(op, list(f.args), {}).results[0])
    run_pipeline(m, ",".join(PIPELINE))
    native = load_module(m, {})
    for name in layouts(args[0]):
        views = [layouts(a)[name] for a in args]
        want = reference(d.reference, *views)
        assert_same(native(*views), want, rtol_for(want.dtype, True), f"{op} {dtype} {name}")


# --- reductions: one case per record of ir.reductions, through its numpy function --------------------
REDUCTIONS = {name: kind.numpy for name, kind in RECORDS.items() if not kind.index}
ARG_REDUCTIONS = {name: kind.numpy for name, kind in RECORDS.items() if kind.index}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", [*REDUCTIONS, *ARG_REDUCTIONS])
def test_reduction(op: str, dtype: str):
    red = REDUCTIONS.get(op) or ARG_REDUCTIONS[op]
    has_identity = RECORDS[op].has_identity  # max, min, argmax over an empty axis raise
    specials = op not in ARG_REDUCTIONS and op != "prod"

    def fn(a, a3, e):
        if op in ARG_REDUCTIONS:
            return red(a), red(a, axis=0), red(a3, axis=1, keepdims=True), red(e, axis=0)
        return red(a), red(a, axis=-1, keepdims=True), red(a3, axis=(0, 2)), red(e, axis=0)

    x, x3 = make(dtype, MAIN, seed=4, specials=specials), make(dtype, (2, 3, 4), seed=5, specials=specials)
    empty = make(dtype, (0, 3) if has_identity else (3, 0), seed=6)
    compiled = aot.compile(fn)
    rtol = rtol_for(reference(red, x).dtype, op in FEW_ULPS)
    for name, v in layouts(x).items():
        got, want = compiled(v, x3, empty), reference(fn, v, x3, empty)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, f"{op} {dtype} {name} result {k}")


# --- layout ----------------------------------------------------------------------------------------
LAYOUT_FNS: dict[str, Callable] = {
    "broadcast_to": lambda a, b: (np.broadcast_to(a, (2, 4, 6)), np.broadcast_to(b[:1], (3, 6))),
    "reshape": lambda a, b: (np.reshape(a, (3, 8)), b.reshape(-1), a.reshape(2, 2, 6)),
    "transpose": lambda a, b: (np.transpose(a), b.T, np.transpose(a[None], (2, 0, 1))),
    "expand_dims": lambda a, b: (np.expand_dims(a, 0), np.expand_dims(b, (1, -1))),
    "squeeze": lambda a, b: (np.squeeze(a[:1]), np.squeeze(b[:, None, :1], axis=1)),
    "flip": lambda a, b: (np.flip(a), np.flip(b, 1), np.flip(a, (0, 1))),
    "slice": lambda a, b: (a[1:3], b[::-2, 1::2], a[:, ::-1], a[3:1], b[-1:, -3:-1]),
    "concatenate": lambda a, b: (np.concatenate([a, b]), np.concatenate([a, b[::-1]], axis=1)),
    "stack": lambda a, b: (np.stack([a, b]), np.stack([a, b.T.T], axis=-1)),
    "pad": lambda a, b: (np.pad(a, 1), np.pad(b, ((0, 2), (1, 0)))),
    "take": lambda a, b: (np.take(a, np.array([3, 0, 0, 2]), axis=0), np.take(b, np.array([[5, 1], [0, 2]]),
                                                                              axis=1)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(LAYOUT_FNS))
def test_layout(op: str, dtype: str):
    fn = LAYOUT_FNS[op]
    a, b = make(dtype, MAIN, seed=7), make(dtype, MAIN, seed=8)
    compiled = aot.compile(fn)
    for name, v in layouts(a).items():
        got, want = compiled(v, b), fn(v, b)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, 0.0 if w.dtype.kind in "fc" else None, f"{op} {dtype} {name} result {k}")


# --- creation ------------------------------------------------------------------------------------
def _creation(a):
    """like=a routes numpy's creation functions to the tracer (as torch's factory functions)."""
    dt = a.dtype
    return (np.full((2, 3), 7, dtype=dt, like=a), np.full_like(a, 1), np.zeros_like(a), np.ones_like(a[:0]),
            a * 2, np.full((), True, dtype=dt, like=a))


def _iota(a):
    dt = a.dtype
    return (np.arange(7, dtype=dt, like=a), np.arange(2, 11, 3, dtype=dt, like=a),
            a + np.arange(6, dtype=dt, like=a), np.arange(0, dtype=dt, like=a))


@pytest.mark.parametrize("dtype", DTYPES)
def test_creation(dtype: str):
    """full, full_like, constant (and iota, for dtypes numpy can count in)."""
    a = make(dtype, MAIN, seed=9)
    fns = [_creation] + ([_iota] if dtype != "bool" else [])  # numpy counts in bools up to 2 only
    for fn in fns:
        compiled = aot.compile(fn)
        for name, v in layouts(a).items():
            got, want = compiled(v), reference(fn, v)
            for k, (g, w) in enumerate(zip(got, want)):
                assert_same(g, w, 0.0 if w.dtype.kind in "fc" else None, f"{fn.__name__} {dtype} {name} {k}")


# --- linalg and fft ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul(dtype: str):
    def fn(a, b, v, batch):
        return a @ b.T, np.matmul(v, a), np.matmul(batch, b.T), a[:, :0] @ b[:, :0].T

    a, b = make(dtype, MAIN, seed=10, specials=False), make(dtype, (5, 6), seed=11, specials=False)
    v, batch = make(dtype, (4,), seed=12, specials=False), make(dtype, (2, 3, 6), seed=13, specials=False)
    v6 = make(dtype, (6,), seed=14, specials=False)
    compiled = aot.compile(lambda a, b, v, v6, batch: fn(a, b, v, batch) + (a @ v6,))
    rtol = rtol_for(dtype, True)
    for name, x in layouts(a).items():
        got = compiled(x, b, v, v6, batch)
        want = fn(x, b, v, batch) + (x @ v6,)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol and 10 * rtol, f"matmul {dtype} {name} result {k}")


FFTS = {"fft": (np.fft.fft, np.fft.ifft), "rfft": (np.fft.rfft,), "irfft": (np.fft.irfft,)}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("op", list(FFTS))
def test_fft(op: str, dtype: str):
    x = make(dtype, (4, 8), seed=15, specials=False)

    def fn(a):
        return tuple(f(a, axis=ax, norm=norm) for f in FFTS[op] for ax, norm in ((-1, None), (0, "ortho")))

    if not _numpy_accepts(fn, [x]) or (op == "rfft" and dtype.startswith("complex")):
        return
    compiled = aot.compile(fn)
    try:
        compiled(x)
    except MissingRule:
        pytest.skip(f"{op} has no CPU lowering yet (codegen/fft lands it)")
    for name, v in layouts(x).items():
        got, want = compiled(v), fn(v)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, 50 * rtol_for(w.dtype, True), f"{op} {dtype} {name} result {k}")


# --- coverage ----------------------------------------------------------------------------------
def _graph_ops(fn: Callable, *args) -> set[str]:
    compiled = aot.compile(fn, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compiled(*args)
        except TypeError:
            return set()
    return {getattr(n.target, "name", None) for g in compiled.graphs for n in g.graph.nodes}


def _updated(a):  # scatter (in-place updates): tests/aot/compile/test_assignment.py
    b = a.copy()
    b[[0, 1]] = 1.0  # an index array: a scatter (basic keys are a where)
    return b


def test_every_op_has_a_case():
    """Every row of aot.ops.ALL_OPS appears in the graph of at least one case above."""
    reached: set[str] = set(DIRECT)
    x = make("float64", MAIN)
    for dtype in DTYPES:
        for case in ELEMENTWISE:
            reached |= _graph_ops(case.fn, *_operands(case, dtype, MAIN, 0))
        reached |= _graph_ops(lambda a: tuple(a.astype(t) for t in DTYPES), make(dtype, MAIN))
    for red in [*REDUCTIONS.values(), *ARG_REDUCTIONS.values()]:
        reached |= _graph_ops(functools.partial(red, axis=0), x)
    for fn in LAYOUT_FNS.values():
        reached |= _graph_ops(fn, x, x)
    reached |= _graph_ops(_creation, x) | _graph_ops(_iota, x) | _graph_ops(lambda a: a @ a.T, x)
    reached |= _graph_ops(lambda a: np.cumsum(a, axis=0), x)  # scan: tests/aot/compile/test_numpy_scans.py
    reached |= _graph_ops(lambda a: (np.bincount(a[0] > 0, minlength=2), np.convolve(a[0], a[1]), np.diagonal(a),
                                     np.nanargmax(a)), x)  # bincount, correlate1d, diagonal, require: test_numpy_everyday.py
    spd = 2 * np.eye(4) + 0.1  # sorting: test_numpy_sorting.py; linalg: test_numpy_linalg_kernels.py
    reached |= _graph_ops(lambda a: (np.sort(a[0]), np.argsort(a[0]), np.searchsorted(a[1], a[0]),
                                     np.take_along_axis(a, np.argsort(a, axis=1), axis=1)), x)
    reached |= _graph_ops(lambda a: (np.linalg.det(a), np.linalg.slogdet(a), np.linalg.inv(a), np.linalg.solve(a, a[0]),
                                     np.linalg.cholesky(a), np.linalg.qr(a), np.linalg.eigh(a), np.linalg.eigvalsh(a),
                                     np.linalg.svd(a), np.linalg.svd(a, compute_uv=False)), spd)
    reached |= _graph_ops(lambda a: (np.linalg.eig(a), np.linalg.eigvals(a)), spd)  # test_numpy_linalg_eig.py
    reached |= _graph_ops(_updated, x)
    reached |= _graph_ops(lambda a: np.flatnonzero(a[0] > 0, size=2), x)  # compact: test_numpy_sized.py
    reached |= _graph_ops(lambda a: (np.median(a[0]), np.partition(a[0], 1), np.argpartition(a[0], 1),
                                     np.histogram(a[0], bins=4, range=(0.0, 1.0))[0],
                                     np.histogram(a[0], bins=np.array([0.0, 0.5, 1.0]))[0]), x)  # test_numpy_select.py
    for fns in FFTS.values():
        for f in fns:
            reached |= _graph_ops(f, x if f is np.fft.rfft else x.astype(complex))
    missing = [op for op in aot.ops.ALL_OPS if op not in reached]
    assert not missing, f"core ops without a compiled-path case: {missing}"


# --- complex infinities (C99 Annex G) --------------------------------------------------------------
@pytest.mark.parametrize("case", [pytest.param(c, id=c.op) for c in ELEMENTWISE])
def test_complex_infinities(case: Case):
    """Complex operands with infinite parts (kept out of test_elementwise's inputs); the full grid of
    special values per op is in test_complex_annex_g.py."""
    args = [make("complex128", MAIN, seed=k, complex_inf=True) for k in range(case.arity)]
    if case.op == "where":
        args[0] = make("bool", MAIN)
    if not _numpy_accepts(case.fn, args):
        return
    got = aot.compile(case.fn)(*args)
    assert_same(got, reference(case.fn, *args), rtol_for("complex128", True), f"{case.op} complex128")
