"""The selection kernels (aot/ops/selection_ops.py, codegen/kernels/select*.py, quickselect.py)
against numpy: np.partition / np.argpartition (numpy's guarantees: the kth elements are the sorted
ones, nothing before is greater, nothing after is smaller; an argpartition is a permutation) and
the order statistics of np.median / percentile / quantile and their nan forms (equal to numpy's).

Lanes of up to 2048 elements take the quickselect, longer ones the sampled brackets (vector passes
when the lane is contiguous, scalar ones when strided), with the fallbacks (a sort) forced by a
tight bracket and by many brackets. Partitions are also compared to the bit with the rows'
reference (a stable three-way partition), which the eager backend runs.
"""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from llvmlite import ir as L

import aot
import codegen.kernels.select as select_kernel
from aot.ops.selection_ops import partition_order

REAL = ["bool", "int32", "int64", "float32", "float64"]
NO_DISK = {"disk_cache": False}  # kernels built with a patched generator must not come from the cache


def _data(dtype: str, shape: tuple, seed: int = 0, kind: str = "any") -> np.ndarray:
    """Random values; `ties`: few distinct ones; floats get NaNs (a negative one and a payload),
    infinities and both zeros."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.4
    if dtype.startswith("int"):
        hi = 4 if kind == "ties" else 10**6
        return rng.integers(-hi, hi, shape).astype(dtype)
    x = (rng.integers(-4, 4, shape) * 0.5 if kind == "ties" else rng.standard_normal(shape)).astype(dtype)
    flat = x.reshape(-1)
    if flat.size >= 16:
        specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], dtype)
        payload = np.array([0x7FF8000000000123], np.int64).view(np.float64).astype(dtype)
        where = rng.choice(flat.size, 7, replace=False)
        flat[where] = np.concatenate([specials, payload])
    return x


def _order_key(a: np.ndarray) -> np.ndarray:
    """numpy's sort order as a float64 key (NaNs largest), for the partition property checks."""
    a = np.asarray(a).astype(np.float64)
    return np.where(np.isnan(a), np.inf, a), np.isnan(a)


def _check_partition(x, got, kth, axis, arg: bool, what: str) -> None:
    """numpy's partition contract along `axis` (argpartition: through the indices)."""
    xm, gm = np.moveaxis(x, axis, -1), np.moveaxis(np.asarray(got), axis, -1)
    vals = np.take_along_axis(xm, gm, axis=-1) if arg else gm
    if arg:
        assert got.dtype == np.int64, what
        np.testing.assert_array_equal(np.sort(gm, axis=-1), np.broadcast_to(np.arange(xm.shape[-1]), gm.shape),
                                      err_msg=f"{what}: not a permutation")
    else:
        assert got.dtype == x.dtype, what
    s = np.sort(xm, axis=-1)
    np.testing.assert_array_equal(np.sort(vals, axis=-1), s, err_msg=f"{what}: not a rearrangement")
    n = xm.shape[-1]
    kv, kn = _order_key(vals)
    for k in kth:
        k = k % n
        np.testing.assert_array_equal(vals[..., k], s[..., k], err_msg=f"{what}: kth {k}")
        here = kv[..., k:k + 1]
        assert np.all(kv[..., :k] <= here) and np.all(kv[..., k + 1:] >= here), f"{what}: kth {k} not a partition"
        if x.dtype.kind == "f":  # NaNs last
            assert not np.any(kn[..., :k] & ~kn[..., k:k + 1]), f"{what}: a NaN before kth {k}"


def _stable_partition(x, kth, axis, arg=False):
    order = partition_order(x, tuple(kth), axis % x.ndim)
    return order if arg else np.take_along_axis(x, order, axis=axis)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


# --- partition / argpartition ------------------------------------------------------------------------
def _partitions(x, y):
    return (np.partition(x, 3), np.partition(x, (0, -1, 7), axis=1), np.argpartition(x, 2, axis=0),
            np.argpartition(x, [-2, 1]), np.partition(y, y.shape[0] // 2, axis=0), np.argpartition(y, (5, -5), axis=0),
            np.partition(x, 4, axis=None))


@pytest.mark.parametrize("dtype", REAL)
def test_partition_contract_and_bits(dtype):
    """Rows of 40 (quickselect) and a strided lane of 3001 (sampled brackets, scalar passes)."""
    x, y = _data(dtype, (6, 40), 1), _data(dtype, (3001, 2), 2)
    got = aot.compile(_partitions)(x, y)
    cases = [(x, (3,), -1, False), (x, (0, -1, 7), 1, False), (x, (2,), 0, True), (x, (-2, 1), -1, True),
             (y, (y.shape[0] // 2,), 0, False), (y, (5, -5), 0, True), (x.reshape(-1), (4,), 0, False)]
    for k, (g, (a, kth, axis, arg)) in enumerate(zip(got, cases, strict=True)):
        _check_partition(a, g, kth, axis, arg, f"{dtype} output {k}")
        np.testing.assert_array_equal(_bits(g), _bits(_stable_partition(a, kth, axis, arg)), err_msg=f"{dtype} {k}")


@pytest.mark.parametrize("kind", ["any", "ties"])
def test_partition_long_lanes(kind):
    """Contiguous lanes past the quickselect's limit (vector passes), with ties and NaNs."""
    x = _data("float64", (2, 70_001), 3, kind)
    xi = _data("int32", (50_000,), 4, kind)
    f = aot.compile(lambda a, b: (np.partition(a, (10, 35_000, -3)), np.argpartition(a, 0), np.partition(b, -1)))
    for k, (g, (a, kth, arg)) in enumerate(zip(f(x, xi), [(x, (10, 35_000, -3), False), (x, (0,), True),
                                                          (xi, (-1,), False)], strict=True)):
        _check_partition(a, g, kth, -1, arg, f"{kind} output {k}")
        np.testing.assert_array_equal(_bits(g), _bits(_stable_partition(a, kth, -1, arg)))


def test_partition_nan_and_zero_order():
    """NaNs go last with their payloads (input order), -0.0 before 0.0 (a refinement of numpy's tie)."""
    nan_a = np.array([0x7FF8000000000001], np.int64).view(np.float64)[0]
    base = np.array([nan_a, 0.0, -0.0, 1.0, -np.inf, -np.nan, -0.0, np.inf, 0.0, -1.0, np.nan])
    f = aot.compile(lambda a: (np.partition(a, 2), np.partition(a, -1), np.argpartition(a, 8)))
    p2, plast, a8 = f(base)
    np.testing.assert_array_equal(_bits(p2[:3]), _bits(np.array([-np.inf, -1.0, -0.0])))
    assert np.isnan(plast[-3:]).all() and _bits(plast[-3:]).tolist() == _bits(base[np.isnan(base)]).tolist()
    assert np.isnan(base[a8[8]])
    _check_partition(base, a8, (8,), 0, True, "argpartition")


def test_partition_complex_and_edge_shapes():
    """Complex lanes take the sort (a valid partition; a complex median gathers from it); empty
    axes, one element, 0-d argpartition."""
    z = np.empty((2, 30), complex)
    z.real, z.imag = _data("float64", (2, 30), 5), _data("float64", (2, 30), 6)
    e = np.zeros((3, 0))

    def fn(z, e, one, s):
        return (np.partition(z, 4), np.argpartition(z, 4), np.partition(e, 0, axis=0), np.partition(one, 0),
                np.argpartition(one, 0), np.argpartition(s, 0), np.median(z.real + 1j, axis=1), np.median(one))

    one, s = np.array([2.5]), np.array(7.0)
    got = aot.compile(fn)(z, e, one, s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = (np.sort(z, kind="stable"), np.argsort(z, kind="stable"), np.partition(e, 0, axis=0), one,
                np.array([0]), np.argpartition(s, 0), np.median(z.real + 1j, axis=1), np.median(one))
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype and g.shape == w.shape, k
        np.testing.assert_array_equal(g, w)


# --- order statistics -----------------------------------------------------------------------------
def _stats(a):
    return (np.median(a), np.median(a, axis=1, keepdims=True), np.percentile(a, [0, 10, 50, 90, 100], axis=1),
            np.quantile(a, 0.3, axis=0, method="nearest"), np.nanmedian(a, axis=1),
            np.nanquantile(a, [0.1, 0.9], axis=0))


def _check_stats(fn, args, what, backend="llvm"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = fn(*args)
        got = aot.compile(fn, backend=backend)(*args)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{what} output {k}: {g.dtype} {g.shape}"
        np.testing.assert_array_equal(g, w, err_msg=f"{what} output {k}")


def test_order_statistics_equal_numpy():
    """int32, float64 with an all-NaN lane, bool (the forms numpy allows); int64 in
    test_order_statistics_ties, float32 and every method in test_numpy_sorting.py."""
    xs = [_data(dt, (5, 37), 7) for dt in ("int32", "float64")]
    xs[1][2] = np.nan  # NaN from the plain forms and from the nan forms

    def fn(i32, f64, b):
        return (*_stats(i32), *_stats(f64), np.median(b, axis=1), np.quantile(b, 0.5, method="lower"),
                np.nanmedian(b, axis=0))

    _check_stats(fn, (*xs, _data("bool", (4, 9), 8)), "dtypes")


def test_order_statistics_ties():
    """Few distinct values: brackets of one key answer their ranks at once."""
    def fn(a, b):
        return (np.median(a, axis=0), np.quantile(a, [0.25, 0.75], axis=1, method="midpoint"), np.median(b),
                np.quantile(b, [0.1, 0.5, 0.95]))

    _check_stats(fn, (_data("float64", (3, 64), 9, "ties"), _data("int64", (9000,), 9, "ties")), "ties")


def test_order_statistics_long_lanes():
    """The sampled brackets: one lane per row (axis=1), many quantiles (more brackets than a pass
    holds: the sort), the lane's extremes (ranks 0 and n - 1) and NaN lanes."""
    n = 40_000
    x = _data("float64", (2, n), 10)
    x[1, ::97] = np.nan

    def fn(a):
        return (np.median(a, axis=1), np.quantile(a, np.linspace(0, 1, 11), axis=1), np.nanmedian(a, axis=1),
                np.percentile(a[0], [0, 100]), np.median(a[:, ::3], axis=1))

    _check_stats(fn, (x,), f"n={n}")


def test_fallback_when_the_brackets_fail(monkeypatch):
    """A bracket of one sample position misses its rank almost always: the lane is sorted instead,
    with the same results (kernels built without the disk cache, whose key ignores the patch)."""
    original = select_kernel._sample_size

    def tight(module, b, cur):
        s, _ = original(module, b, cur)
        return s, L.Constant(L.IntType(64), 1)

    monkeypatch.setattr(select_kernel, "_sample_size", tight)
    x = _data("float64", (60_000,), 11)
    xt = _data("int64", (30_000,), 12, "ties")

    def fn(a, b):
        return np.median(a), np.quantile(a, [0.01, 0.5, 0.99]), np.partition(b, 15_000), np.median(b)

    got = aot.compile(fn, options=NO_DISK)(x, xt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = fn(x, xt)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    _check_partition(xt, got[2], (15_000,), 0, False, "partition")
    np.testing.assert_array_equal(got[3], want[3])


def test_non_contiguous_lanes():
    """A stepped, reversed and transposed view: lanes along both axes, negative strides."""
    v = _data("float64", (120, 300), 13)[::3, ::-2].T

    def fn(a):
        return np.median(a, axis=0), np.median(a, axis=1), np.partition(a, 5, axis=0), np.quantile(a, 0.9, axis=1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got, want = aot.compile(fn)(v), fn(v)
    for k in (0, 1, 3):
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"output {k}")
    _check_partition(v, got[2], (5,), 0, False, "partition")


def test_dynamic_shapes_and_eager():
    def fn(a):
        return np.median(a, axis=1), np.partition(a, 1, axis=1), np.nanpercentile(a, [20, 80], axis=1)

    f = aot.compile(fn, dynamic=True)
    eager = aot.compile(fn, backend="eager", dynamic=True)
    rng = np.random.default_rng(14)
    for n in (3, 8, 33, 2500):
        x = np.round(rng.standard_normal((3, n)), 2)
        x[0, :2] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(x)
            for backend, got in (("llvm", f(x)), ("eager", eager(x))):
                np.testing.assert_array_equal(got[0], want[0], err_msg=f"{backend} n={n}")
                np.testing.assert_array_equal(got[2], want[2], err_msg=f"{backend} n={n}")
                _check_partition(x, got[1], (1,), 1, False, f"{backend} n={n}")
                np.testing.assert_array_equal(_bits(got[1]), _bits(_stable_partition(x, (1,), 1)))
    assert f.cache_info()["compiles"] <= 2


def test_kth_errors_match_numpy():
    x = np.arange(12.0).reshape(3, 4)
    for fn, exc in ((lambda a: np.partition(a, 4), ValueError), (lambda a: np.argpartition(a, -5), ValueError),
                    (lambda a: np.partition(a, 1.5), TypeError), (lambda a: np.partition(a, [[1]]), ValueError)):
        with pytest.raises(exc):
            fn(x)
        with pytest.raises(exc):
            aot.compile(fn)(x)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(x, v):
        return np.median(x, axis=1), np.partition(x, (0, 3), axis=1), np.argpartition(v, 2), \
            np.nanquantile(x, [0.2, 0.8], axis=1)

    x, v = _data("float64", (3, 50), 15), _data("int32", (9,), 16)
    path = aot.aot_compile(fn, (x, v), dynamic_shapes={"x": {1: aot.Dim("N", min=4, max=8192)}},
                           path=tmp_path / "select.so")
    lib = aot.aot_load(path)
    for n in (50, 4, 3000):
        x = _data("float64", (3, n), n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(x, v)
        got = lib(x, v)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[3], want[3])
        _check_partition(x, got[1], (0, 3), 1, False, f"library n={n}")
        _check_partition(v, got[2], (2,), 0, True, "library argpartition")


def test_select_kth_row_positions_and_bounds():
    """The select_kth row on its own (jitted ir): positions shared by the lanes or per lane,
    negative ones from the end, equal to the row's reference; one out of range is IndexError."""
    import ir
    from ir import dtypes as D
    from ir.opdef import OPDEFS
    from ir.types import TensorType
    from tests.codegen.helpers import add_tensor_op, jit

    m = ir.Module("select")
    add_tensor_op(m, "shared", "select_kth", [TensorType(D.float64, (3, 40)), TensorType(D.int64, (4,))], {"axis": 1})
    add_tensor_op(m, "per_lane", "select_kth", [TensorType(D.int32, (5, 3)), TensorType(D.int64, (2, 3))], {"axis": 0})
    fns = jit(m)
    x, xi = _data("float64", (3, 40), 17), _data("int32", (5, 3), 18)
    idx, per = np.array([0, -1, 39, 7]), np.array([[4, -5, 2], [-1, 0, 3]])
    ref = OPDEFS["select_kth"].reference
    np.testing.assert_array_equal(_bits(fns["shared"](x, idx)), _bits(ref(x, idx, axis=1)))
    np.testing.assert_array_equal(fns["per_lane"](xi, per), ref(xi, per, axis=0))
    for bad in (np.array([0, 40, 1, 2]), np.array([-41, 0, 0, 0])):
        with pytest.raises(IndexError):
            fns["shared"](x, bad)
        with pytest.raises(IndexError):
            ref(x, bad, axis=1)
