"""Integer bitwise ops (& | ^ ~ << >> and their ufuncs, numpy 2 aliases included) against numpy:
values and dtypes for bool/int32/int64 operands, mixed dtypes and weak Python scalars (with numpy's
OverflowError for ints the dtype cannot hold), numpy's shift semantics (a count outside [0, bits),
negative counts included, gives 0 or the sign fill), strided and broadcast inputs, through the eager
and native backends, fx proxies and a C-ABI library; plus fusion, canonicalisation, folding and the
interpreter on the ops."""
from __future__ import annotations

import operator
import shutil

import numpy as np
import pytest

import aot
import ir
from aot.compiler.llvm_backend import PIPELINE, load_module
from aot.frontend.staged import lower_numpy
from ir import dtypes as D
from ir.interp import run_func
from ir.passes import run_pipeline
from ir.passes.constants import constant_value
from ir.types import TensorType

from ._support import SUPPORTED, assert_same, layouts, reference

BACKENDS = ("eager", "llvm")
COUNTS = (-1, 0, 1, 31, 32, 63, 64, 100)
# op -> (ufunc, Python operator)
BINARY = {
    "bitwise_and": (np.bitwise_and, operator.and_),
    "bitwise_or": (np.bitwise_or, operator.or_),
    "bitwise_xor": (np.bitwise_xor, operator.xor),
    "left_shift": (np.left_shift, operator.lshift),
    "right_shift": (np.right_shift, operator.rshift),
}
SHIFTS = ("left_shift", "right_shift")
PAIRS = (("bool", "bool"), ("int32", "int32"), ("int64", "int64"), ("int32", "int64"), ("bool", "int32"),
         ("int64", "bool"))
SCALARS = (True, False, 0, 1, 3, -1, *COUNTS, 2**31 - 1, -2**31, 2**40, -2**40, 2**63 - 1, 2**63)
SHAPE = (4, 8)


def data(dtype: str, seed: int, counts: bool = False) -> np.ndarray:
    """Values with every bit pattern of interest (0, -1, the extremes); shift counts from COUNTS."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(SHAPE) < 0.5
    if counts:
        return rng.choice(np.array([*COUNTS, 2, 5, 7, 30, -2, -33]), SHAPE).astype(dt)
    info = np.iinfo(dt)
    x = rng.integers(-1000, 1000, SHAPE).astype(dt)
    x.flat[:7] = [0, 1, -1, info.min, info.max, 0x5555, -8]
    return x


def _check(compiled, fn, *args, what: str = ""):
    got, want = compiled(*args), reference(fn, *args)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_same(g, np.asarray(w), None, f"{what} result {k}")


# --- arrays of every dtype pair, in every layout ----------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_arrays(op, pair, backend):
    ufunc, pyop = BINARY[op]

    def fn(x, y, row):
        return ufunc(x, y), pyop(x, y), pyop(y, x), ufunc(x, row), pyop(row, x)

    x, y = data(pair[0], 1), data(pair[1], 2, counts=op in SHIFTS)
    row = data(pair[1], 3, counts=op in SHIFTS)[0]  # broadcast along the rows
    compiled = aot.compile(fn, backend=backend)
    if _numpy_error(fn, x, y, row) is not None:  # bool << bool is int8 in numpy, outside the dialect
        with pytest.raises(TypeError):
            compiled(x, y, row)
        return
    for name, v in layouts(x).items():
        _check(compiled, fn, v, layouts(y)["negative"], row, what=f"{op} {pair} {name}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("op", SHIFTS)
def test_every_shift_count(op, dtype, backend):
    """Each count in COUNTS against each value, as arrays and as Python ints (weak: the dtype is
    kept); a numpy scalar operand is strong (int64 promotes an int32 array)."""
    ufunc, pyop = BINARY[op]
    x = data(dtype, 4)[0]
    counts = np.array(COUNTS, dtype)

    def fn(x, c):
        return (ufunc(x[:, None], c), *(pyop(x, k) for k in COUNTS), pyop(np.int64(-8), c),
                pyop(x, np.int64(40)))

    _check(aot.compile(fn, backend=backend), fn, x, counts, what=f"{op} {dtype}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
@pytest.mark.parametrize("op", list(BINARY))
def test_python_scalars(op, dtype, backend):
    """x op s and s op x for weak Python scalars; numpy's errors (OverflowError for an int the
    dtype cannot hold, TypeError for results outside the dialect) are raised when tracing."""
    ufunc, pyop = BINARY[op]
    x = data(dtype, 5)
    forms = [(s, side) for s in SCALARS for side in ("left", "right")]

    def one(s, side):
        return (lambda a: pyop(a, s)) if side == "left" else (lambda a: pyop(s, a))

    ok = [f for f in forms if _numpy_error(one(*f), x) is None]
    for s, side in (f for f in forms if f not in ok):
        with pytest.raises(_numpy_error(one(s, side), x)):
            aot.compile(one(s, side), backend=backend)(x)

    def fn(a):
        return tuple(one(s, side)(a) for s, side in ok)

    _check(aot.compile(fn, backend=backend), fn, x, what=f"{op} {dtype} scalars")


def _numpy_error(fn, *args) -> type[Exception] | None:
    """What numpy raises (OverflowError, TypeError), TypeError for a result dtype outside the dialect."""
    try:
        r = reference(fn, *args)
    except (TypeError, OverflowError) as e:
        return type(e)
    outs = r if isinstance(r, tuple) else (r,)
    return None if all(np.asarray(o).dtype in SUPPORTED for o in outs) else TypeError


# --- invert and the numpy 2 aliases --------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
def test_invert_spellings(dtype, backend):
    def fn(x):
        return ~x, np.invert(x), np.bitwise_not(x), np.bitwise_invert(x), x.__invert__(), ~~x, ~x[::-2]

    compiled = aot.compile(fn, backend=backend)
    for name, v in layouts(data(dtype, 6)).items():
        _check(compiled, fn, v, what=f"invert {dtype} {name}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_shift_aliases_and_mixed_chains(backend):
    def fn(x, y, b):
        return (np.bitwise_left_shift(x, 3), np.bitwise_right_shift(y, x & 7), ((x << 2) ^ (y >> 1)) | ~x,
                (b & x) | (True ^ b), (x > 0) & b, np.bitwise_and(b, 1), x ^ b)

    x, y, b = data("int32", 7), data("int64", 8), data("bool", 9)
    _check(aot.compile(fn, backend=backend), fn, x, y, b, what="chains")


def test_fx_proxies_record_and_compile():
    def fn(x, y):
        return (x & y) | (x << 1) ^ (8 >> (y & 3)), ~x, 1 << (y & 7), x.__rand__(y), x.__rlshift__(2)

    gm = aot.fx.symbolic_trace(fn)
    x, y = data("int32", 10), data("int32", 11)
    for got, want in zip(gm(x, y), fn(x, y), strict=True):
        assert_same(got, want)
    compiled = aot.compile(gm)
    for got, want in zip(compiled(x, y), fn(x, y), strict=True):
        assert_same(got, want)


# --- fusion, the passes and the interpreter --------------------------------------------------------
def _lowered(fn, *dtypes, shape=SHAPE):
    return lower_numpy(fn, [TensorType(D.from_numpy(d), shape) for d in dtypes])


def _kernels(f):
    return [op for op in f.body.ops if op.name.startswith("kernel.")]


def _body_ops(k) -> set[str]:
    return {op.name for op in k.regions[0].block.ops}


def test_fusion_reduction_and_elementwise_kernels():
    """np.sum(x & 3) is one reduction kernel; the shift/xor/or/invert chain one elementwise kernel;
    the interpreter and native code agree with numpy before and after fusion."""
    def fn(x, y):
        return np.sum(x & 3), ((x << 2) ^ (y >> 1)) | ~x

    x, y = data("int32", 12), data("int32", 13, counts=True)
    m, f = _lowered(fn, "int32", "int32")
    want = fn(x, y)
    for got, w in zip(run_func(f, x, y), want, strict=True):
        assert_same(got, np.asarray(w))
    run_pipeline(m, ",".join(PIPELINE), verify_each=True)
    ks = _kernels(f)
    assert sorted(k.name for k in ks) == ["kernel.elementwise", "kernel.reduce"], f.body.ops
    red, ew = sorted(ks, key=lambda k: k.name, reverse=True)
    assert "bitwise_and" in _body_ops(red)
    assert {"left_shift", "right_shift", "bitwise_xor", "bitwise_or", "invert"} <= _body_ops(ew)
    assert not {op.name for op in f.body.ops} & {"bitwise_and", "left_shift", "invert"}
    for got, w in zip(run_func(f, x, y), want, strict=True):
        assert_same(got, np.asarray(w))
    native = load_module(m, {})
    for got, w in zip(native(x, y), want, strict=True):
        assert_same(got, np.asarray(w))


def test_canonical_identities():
    def fn(x):
        return x | 0, x ^ 0, x << 0, x >> 0, x & -1, ~~x, x & 0, x | -1

    m, f = _lowered(fn, "int32")
    run_pipeline(m, "canonicalize,dce", verify_each=True)
    ret = f.body.ops[-1]
    assert all(v is f.args[0] for v in ret.operands[:6])
    assert not {op.name for op in f.body.ops} & {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                                                   "right_shift", "invert"}
    x = data("int32", 14)
    for got, w in zip(run_func(f, x), fn(x), strict=True):
        assert_same(got, w)


def test_constants_fold_through_the_references():
    m = ir.Module("t")
    f, b = ir.new_func(m, "f", [])
    c = lambda v, dt: b.constant(value=np.asarray(v, dt.numpy), dtype=dt)  # noqa: E731
    a, s = c([1, -8, 5, 7], D.int32), c([40, 40, -1, 2], D.int32)
    outs = (b.left_shift(a, s), b.right_shift(a, s), b.invert(a), b.bitwise_xor(a, c(3, D.int64)),
            b.bitwise_and(c([True, False], D.bool_), c(True, D.bool_)))
    b.ret(*outs)
    run_pipeline(m, "fold,dce", verify_each=True)
    assert [op.name for op in f.body.ops] == ["constant"] * len(outs) + ["return"]
    av, sv = np.array([1, -8, 5, 7], np.int32), np.array([40, 40, -1, 2], np.int32)
    wants = (av << sv, av >> sv, ~av, av ^ np.int64(3), np.array([True, False]))
    for v, w in zip(f.body.ops[-1].operands, wants, strict=True):
        got = constant_value(v)
        assert got.dtype == w.dtype
        np.testing.assert_array_equal(got, w)


# --- the C-ABI library ---------------------------------------------------------------------------------
def _library_fn(x, y, b):
    return (x & y, x | 3, x ^ y, ~x, x << (y & 63), y >> x, np.left_shift(x, 40), np.right_shift(x, -1),
            ~b, b & (y > 0), np.sum(x & 255))


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    x, y, b = data("int64", 15), data("int32", 16, counts=True), data("bool", 17)
    lib = aot.aot_load(aot.aot_compile(_library_fn, (x, y, b), path=tmp_path / "bitwise.so"))
    for got, want in zip(lib(x, y, b), _library_fn(x, y, b), strict=True):
        assert_same(np.asarray(got), np.asarray(want))
