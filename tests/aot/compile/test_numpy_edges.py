"""numpy's answers at the edges that fuzzing found compiled code missing (issue 11, items 3, 4, 8, 9):
comparisons against Python ints the dtype cannot hold, isclose against infinities, errors of dead
ops, per-element checks on empty arrays, and the axis a 0-d array accepts."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import aot

COMPARE = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge)
BIG = (2**40, -2**40, 2**31, -2**31 - 1, 2**63, -2**63 - 1, 2**100)


def _fits(value: int, dtype) -> bool:
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("cmp", COMPARE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", BIG)
@pytest.mark.parametrize("reflected", [False, True])
def test_compare_with_out_of_range_python_int(dtype, cmp, value, reflected):
    """NEP 50 exempts comparisons from the out-of-bounds error: numpy answers them."""
    x = np.array([-5, 0, 7, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)

    def f(x):
        return cmp(value, x) if reflected else cmp(x, value)

    out = aot.compile(f)(x)
    expect = f(x)
    assert out.dtype == expect.dtype == np.bool_
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("ufunc", [np.equal, np.not_equal, np.less, np.greater_equal], ids=lambda u: u.__name__)
def test_compare_ufunc_with_out_of_range_python_int(ufunc):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    f = aot.compile(lambda x: ufunc(x, 2**40))
    np.testing.assert_array_equal(f(x), ufunc(x, 2**40))
    assert f(x).shape == (2, 3)


@pytest.mark.parametrize("value", [2**40, 2**31])
def test_arithmetic_with_out_of_range_python_int_still_raises(value):
    x = np.arange(3, dtype=np.int32)
    with pytest.raises(OverflowError):
        x + value  # numpy's behaviour, the reference
    with pytest.raises(OverflowError):
        aot.compile(lambda x: x + value)(x)


@pytest.mark.parametrize("b", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_against_non_finite(b, equal_nan):
    a = np.array([1.0, 1e300, np.inf, -np.inf, np.nan, 0.0])
    f = aot.compile(lambda a: np.isclose(a, b, equal_nan=equal_nan))
    np.testing.assert_array_equal(f(a), np.isclose(a, b, equal_nan=equal_nan))


def test_isclose_arrays_with_infinities():
    a = np.array([1.0, np.inf, np.inf, -np.inf, 2.0, np.nan])
    b = np.array([np.inf, np.inf, -np.inf, -np.inf, 2.0 + 1e-9, np.nan])
    for equal_nan in (False, True):
        f = aot.compile(lambda a, b: np.isclose(a, b, equal_nan=equal_nan))
        np.testing.assert_array_equal(f(a, b), np.isclose(a, b, equal_nan=equal_nan))
        np.testing.assert_array_equal(f(b, a), np.isclose(b, a, equal_nan=equal_nan))


def _dead_take(a):
    np.take(a, [4], axis=0)  # the result is unused; numpy still raises for short arrays
    return a * 2


def test_dead_take_still_raises_after_recompiles():
    f = aot.compile(_dead_take)
    for n in (6, 7, 8):  # static, then the automatic dynamic entry
        np.testing.assert_array_equal(f(np.ones(n)), np.full(n, 2.0))
    with pytest.raises(IndexError):
        _dead_take(np.ones(3))
    with pytest.raises(IndexError):
        f(np.ones(3))
    np.testing.assert_array_equal(f(np.ones(9)), np.full(9, 2.0))  # the entry still serves good input


def test_dead_take_dynamic_from_the_start():
    f = aot.compile(_dead_take, dynamic=True)
    np.testing.assert_array_equal(f(np.ones(5)), np.full(5, 2.0))
    with pytest.raises(IndexError):
        f(np.ones(4))


def test_dead_integer_power_still_raises():
    def g(x, y):
        x ** y  # unused; numpy raises for a negative integer exponent
        return x + 1

    f = aot.compile(g)
    x = np.arange(4, dtype=np.int64)
    np.testing.assert_array_equal(f(x, np.arange(4, dtype=np.int64)), x + 1)
    with pytest.raises(ValueError, match="negative integer powers"):
        f(x, np.array([1, -1, 2, 3], dtype=np.int64))


DEAD_OPS = """module @m {
  sym s0 : range [2, inf) hint 8
  func @main(%x: f64[s0], %i: i64[s0], %c: f64[8]) -> (f64[s0]) {
    %k0 = "constant"() {value = 1, dtype = i64} : () -> i64[]
    %k1 = "constant"() {value = 9, dtype = i64} : () -> i64[]
    %a = "take"(%x, %i) {axis = 0} : (f64[s0], i64[s0]) -> f64[s0]
    %b = "take"(%x, %k0) {axis = 0} : (f64[s0], i64[]) -> f64[]
    %c1 = "take"(%c, %k0) {axis = 0} : (f64[8], i64[]) -> f64[]
    %c9 = "take"(%c, %k1) {axis = 0} : (f64[8], i64[]) -> f64[]
    %p = "pow"(%i, %i) : (i64[s0], i64[s0]) -> i64[s0]
    %q = "pow"(%i, %k0) : (i64[s0], i64[]) -> i64[s0]
    %f = "pow"(%x, %x) : (f64[s0], f64[s0]) -> f64[s0]
    return %x : f64[s0]
  }
}
"""


def test_dce_keeps_exactly_the_dead_ops_that_can_raise():
    from ir.parser import parse_module as parse
    from ir.passes import run_pipeline

    import aot.ops  # noqa: F401  (the rows)

    module = parse(DEAD_OPS)
    run_pipeline(module, "dce")
    kept = [(op.name, [o.type for o in op.operands]) for op in module.funcs["main"].body.ops]
    names = [n for n, _ in kept]
    # run-time indices, a constant index into a symbolic axis, an out-of-bounds constant index,
    # and an integer power with a run-time exponent may raise; the rest is removed
    assert names.count("take") == 3 and names.count("pow") == 1, kept


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_negative_integer_power_of_empty_array(dtype):
    x = np.array([], dtype)
    for g in (lambda x: np.power(x, -1), lambda x: x ** -2):
        out = aot.compile(g)(x)
        assert out.dtype == g(x).dtype and out.shape == (0,)
    with pytest.raises(ValueError, match="negative integer powers"):
        aot.compile(lambda x: x ** -1)(np.array([1, 2], dtype))


def test_negative_integer_power_dynamic_length():
    f = aot.compile(lambda x: x ** -1, dynamic=True)
    assert f(np.array([], np.int64)).shape == (0,)
    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.array([1, 2, 3], np.int64))


@pytest.mark.parametrize("n", [2, 3, 7, 9, 17, 33])
def test_integer_power_ignores_masked_off_lanes(n):
    """A vector row's masked tail computes made-up lanes (a masked load's zero, whose integer
    reciprocal is the dtype's minimum): their negative exponents are not the program's (fuzz
    seed 1114715), the real ones still raise, also in a scan's masked group."""
    x = np.tile(np.array([7, -2, 63, 64, -2, 1]), 6)[:n]
    f = aot.compile(lambda x: np.power(2, np.reciprocal(x)))
    np.testing.assert_array_equal(f(x), np.power(2, np.reciprocal(x)))
    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.where(np.arange(n) == n - 1, -1, x))  # reciprocal(-1) = -1: the last lane's own
    rows = np.stack([x, 3 * x, x])
    g = aot.compile(lambda r: np.cumsum(np.power(2, np.reciprocal(r)), axis=0))
    np.testing.assert_array_equal(g(rows), np.cumsum(np.power(2, np.reciprocal(rows)), axis=0))


ZERO_D_REDUCTIONS = [np.sum, np.prod, np.max, np.min, np.any, np.all, np.argmax, np.argmin]


@pytest.mark.parametrize("fn", ZERO_D_REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_zero_d_reduction_accepts_axis_zero(fn, axis, keepdims):
    a = np.array(3.0)

    def g(x):
        return fn(x, axis=axis, keepdims=keepdims)

    out, expect = aot.compile(g)(a), g(a)
    assert np.asarray(out).dtype == np.asarray(expect).dtype
    assert np.shape(out) == np.shape(expect)
    assert out == expect


@pytest.mark.parametrize("fn", ZERO_D_REDUCTIONS + [np.mean], ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [(0,), 1])
def test_zero_d_reduction_rejects_other_axes_as_numpy(fn, axis):
    a = np.array(3.0)
    with pytest.raises(Exception) as expected:
        fn(a, axis=axis)
    with pytest.raises(type(expected.value)):
        aot.compile(lambda x: fn(x, axis=axis))(a)


def test_zero_d_mean_rejects_axis_zero_as_numpy():
    with pytest.raises(np.exceptions.AxisError):
        np.mean(np.array(3.0), axis=0)
    with pytest.raises(np.exceptions.AxisError):
        aot.compile(lambda x: np.mean(x, axis=0))(np.array(3.0))


@pytest.mark.parametrize("dtype", ["f8", "i4", "c8"])
def test_byte_swapped_inputs_share_the_native_entry(dtype):
    x = (np.arange(6) - 2).astype(dtype)
    f = aot.compile(lambda x: x * 3 + 1)
    for a in (x, x.astype(x.dtype.newbyteorder(">")), x.astype(x.dtype.newbyteorder(">"))[::-2], x[::2]):
        out = f(a)
        np.testing.assert_array_equal(out, a * 3 + 1)
        assert out.dtype == (a * 3 + 1).dtype.newbyteorder("=")
    assert f.cache_info()["compiles"] == 2  # the contiguous length-6 entry, then the strided length 3


def test_size_as_a_bool_operand():
    """A symbolic size where numpy's loop wants a bool: the size compared with zero at run time."""
    f = aot.compile(lambda b, x: np.logical_and(b, x.shape[0] - 3), dynamic=True)
    b = np.array([True, False, True])
    for n in (3, 5, 3):
        np.testing.assert_array_equal(f(b, np.ones(n)), np.logical_and(b, n - 3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 9, 33])
def test_clip_ties_keep_x_and_nans_propagate(dtype, n):
    cases = [(0.0, -0.0, 1.0), (-0.0, 0.0, 1.0), (0.0, -1.0, -0.0), (-0.0, -1.0, 0.0), (0.5, np.nan, 1.0),
             (0.5, 0.0, np.nan), (np.nan, 0.0, 1.0), (2.0, 0.0, 1.0), (-2.0, 0.0, 1.0)]
    for x, lo, hi in cases:
        a = np.full(n, x, dtype)
        f = aot.compile(lambda a: np.clip(a, dtype(lo), dtype(hi)))
        got, want = f(a), np.clip(a, dtype(lo), dtype(hi))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"clip({x}, {lo}, {hi})")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_clip_ties_give_the_bound(dtype):
    """numpy's complex clip keeps x only strictly inside a bound (its plain CGT/CLT: the imaginary
    parts decide only between equal real parts), so a tie gives the bound: clip(-0-0j, 0, 1) is 0+0j
    (fuzz seed 1245175); every pair of signed zeros, ones, infinities and nans as x and as bounds."""
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, np.nan]
    x = np.array([complex(a, b) for a in vals for b in vals], dtype)  # 36: vector rows and a masked tail
    bounds = [complex(a, b) for a in (0.0, -0.0, 1.0, np.nan) for b in (0.0, -0.0, np.nan)]
    f = aot.compile(lambda x, lo, hi: np.clip(x, lo, hi))
    for lo in bounds:
        for hi in bounds[::5]:
            with np.errstate(all="ignore"):
                want = np.clip(x, np.array(lo, dtype), np.array(hi, dtype))
            got = f(x, np.array(lo, dtype), np.array(hi, dtype))
            for part in (np.real, np.imag):
                np.testing.assert_array_equal(part(got), part(want), err_msg=f"clip(x, {lo}, {hi})")
                np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(want)),
                                              err_msg=f"clip(x, {lo}, {hi})")


def test_complex_log10_and_log2_scale_by_numpys_constants():
    """numpy's clog10 is clog(z) * NPY_LOG10E, correctly rounded; 1 / math.log(10) is one ulp below
    it, which made log10(3+1j).real 0.49999999999999994 instead of 0.5 (fuzz seed 1266521)."""
    z = np.random.default_rng(5).normal(size=37) * 10 + 1j * np.random.default_rng(6).normal(size=37)
    z[:3] = [3 + 1j, 1 + 3j, 100j]
    log, log10, log2 = (aot.compile(lambda a, fn=fn: fn(a))(z) for fn in (np.log, np.log10, np.log2))
    for got, k in ((log10, 0.4342944819032518), (log2, 1.4426950408889634)):
        np.testing.assert_array_equal(got.real, log.real * k)
        np.testing.assert_array_equal(got.imag, log.imag * k)
    assert log10[0].real == 0.5 or log[0].real != np.log(np.sqrt(10.0))  # exact where log is


@pytest.mark.parametrize("fn", [np.nanmax, np.nanmin], ids=lambda f: f.__name__)
def test_complex_all_nan_slice_gives_its_first_element(fn):
    """numpy's fmax.reduce keeps the first of two NaNs: an all-NaN complex slice gives its first
    element (nan-infj), not a plain nan+0j; slices with a number give the extremum as before."""
    x = np.array([[complex(np.nan, -np.inf), complex(np.nan, 3), 2 + 1j],
                  [complex(np.nan, 1), complex(1, np.nan), 1 + 1j]])
    for axis in (None, 0, 1, (0, 1)):
        for keepdims in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want = fn(x[:, :2], axis=axis, keepdims=keepdims)
            got = aot.compile(lambda a: fn(a[:, :2], axis=axis, keepdims=keepdims))(x)
            np.testing.assert_array_equal(np.real(got), np.real(want))
            np.testing.assert_array_equal(np.imag(got), np.imag(want), err_msg=f"axis={axis}")


def _special_class(v: np.ndarray) -> np.ndarray:
    """Per part: nan, +-inf, +-0 or the sign of a finite value (what Annex G and numpy fix)."""
    parts = []
    for p in (np.real(v), np.imag(v)):
        zero = np.where(np.signbit(p), -0.5, 0.5)
        parts.append(np.where(np.isnan(p), 9, np.where(np.isinf(p), 3 * np.sign(p), np.where(p == 0, zero, np.sign(p)))))
    return np.stack(parts)


COMPLEX_UNARY = ["sqrt", "exp", "exp2", "expm1", "log", "log10", "log2", "log1p", "sin", "cos", "tan", "sinh",
                 "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "square",
                 "reciprocal", "negative", "conjugate", "sign"]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_special_values_as_numpy(name, dtype):
    """Every pair of zeros, ones, infinities, nans, a subnormal and a huge value: the same nans,
    infinities and signed zeros as numpy (csin(inf + inf j) is nan + inf j and ctanh(1e300 + inf j)
    nan + nan j, as glibc and numpy give them, found by this sweep)."""
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, np.inf, -np.inf, np.nan, 1e-310, 1e300]
    with np.errstate(all="ignore"):
        z = np.array([complex(a, b) for a in vals for b in vals], dtype)
        want = getattr(np, name)(z)
    got = aot.compile(lambda a: getattr(np, name)(a))(z)
    bad = (_special_class(got) != _special_class(want)).any(axis=0)
    assert not bad.any(), f"{name}: {list(zip(z[bad][:4], want[bad][:4], got[bad][:4]))}"


@pytest.mark.parametrize("fn", [np.sum, np.prod, np.mean], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array(-0.0), np.array(-0.0, np.float32), np.array(complex(np.inf, -1))])
def test_reduction_over_no_axes_combines_the_identity(fn, x):
    """0 + (-0.0) is +0.0 and 1 * (inf-1j) is inf+nanj in numpy's reductions of 0-d arrays."""
    with np.errstate(all="ignore"):
        want = fn(x)
    got = aot.compile(fn)(x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(np.real(got)), np.signbit(np.real(want)))


@pytest.mark.parametrize("exponent", [2, 2.0, -1, -1.0, 0.5, 1, 3, np.int64(2)], ids=repr)
def test_complex_power_operator_takes_numpy_fast_paths(exponent):
    """`z ** 2` is np.square(z) and `z ** 0.5` np.sqrt(z) in numpy (ndarray.__pow__), which differ
    from np.power at complex special values."""
    z = np.array([1e300 + 1e300j, -np.inf + 0j, complex(1, np.inf), complex(-np.inf, np.nan), 2 - 1j, 0j] * 3)
    with np.errstate(all="ignore"):
        want = z ** exponent
        got = aot.compile(lambda z: z ** exponent)(z)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-15)
