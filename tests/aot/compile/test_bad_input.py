"""Bad and unusual inputs to compiled functions: a clear Python exception or numpy's answer, never a
crash. Covers unsupported dtypes, non-arrays, mismatched shapes, extreme integer values, and the
layouts numpy arrays may have at the native boundary (misaligned, read-only, Fortran, negative
strides, 0-d, numpy scalars)."""
from __future__ import annotations

import numpy as np
import pytest

import aot
import ir
from aot.compiler.llvm_backend import PIPELINE, load_module
from ir.passes import run_pipeline

from ._support import assert_same, reference


def chain(x):
    return np.sin(x) * 2 + x


RTOL = 5e-15


# --- arguments aot cannot take --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.uint8, np.int8, np.int16, np.uint32, np.uint64,
                                   np.longdouble, object, "U3", "S3", "M8[s]", "m8[s]"])
def test_unsupported_dtype_names_the_argument(dtype):
    f = aot.compile(lambda values, k: values + k)
    with pytest.raises(TypeError, match=r"values.*dtype .* is not supported; expected one of"):
        f(np.zeros(3, dtype), 1)


@pytest.mark.parametrize("arg", [None, "abc", object()])
def test_non_array_arguments_raise_like_numpy(arg):
    with pytest.raises(TypeError):
        chain(arg)  # numpy's own answer ...
    with pytest.raises(TypeError):
        aot.compile(chain)(arg)  # ... is aot's


def test_python_lists_are_pytrees_of_scalars():
    f = aot.compile(lambda x, y: np.asarray(x) * y)
    y = np.arange(3.0)
    assert_same(f([1.0, 2.0, 3.0], y), np.asarray([1.0, 2.0, 3.0]) * y, RTOL)
    assert_same(f([[1, 2, 3]], y), np.asarray([[1, 2, 3]]) * y, RTOL)
    assert_same(f([1.0, 2.0, 3.0], y + 1), np.asarray([1.0, 2.0, 3.0]) * (y + 1), RTOL)


def test_mismatched_shapes_raise_value_error():
    f = aot.compile(lambda x, y: x + y)
    with pytest.raises(ValueError, match=r"\(3\).*\(4\).*broadcast|broadcast.*3.*4"):
        f(np.ones(3), np.ones(4))
    g = aot.compile(lambda a, b: a @ b)
    with pytest.raises(ValueError, match="matmul"):
        g(np.ones((2, 3)), np.ones((4, 2)))


def test_shape_error_names_the_source_line():
    f = aot.compile(lambda x, y: x + y)
    with pytest.raises(ValueError, match="test_bad_input.py"):
        f(np.ones(3), np.ones(4))


def test_other_rank_recompiles_rather_than_fails():
    f = aot.compile(chain)
    for x in (np.arange(6.0), np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(1, 2, 3), np.float64(2.0)):
        x = np.asarray(x)
        assert_same(f(x), reference(chain, x), RTOL)


def test_wrong_argument_count_is_a_type_error():
    f = aot.compile(lambda x, y: x + y)
    with pytest.raises(TypeError):
        f(np.ones(3))
    with pytest.raises(TypeError):
        f(np.ones(3), np.ones(3), np.ones(3))


# --- extreme values -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_division_edge_cases_match_numpy(dtype):
    """x // 0 and x % 0 give 0 and INT_MIN // -1 wraps, as numpy (no SIGFPE from a native idiv)."""
    lo = np.iinfo(dtype).min
    x = np.array([lo, lo, 7, -7, 0, lo], dtype)
    y = np.array([-1, 0, 0, 0, 0, 1], dtype)
    f = aot.compile(lambda a, b: (a // b, a % b, np.reciprocal(b)))
    for got, want in zip(f(x, y), reference(lambda a, b: (a // b, a % b, np.reciprocal(b)), x, y)):
        assert_same(got, want)


def test_integer_to_negative_constant_power_raises_like_numpy():
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(ValueError, match="negative integer powers"):
        x ** -1  # numpy refuses ...
    with pytest.raises(ValueError, match="negative integer powers"):
        aot.compile(lambda a: a ** -1)(x)
    assert_same(aot.compile(lambda a: (-2) ** a)(x), (-2) ** x)
    # an exponent beyond the dtype's range: numpy converts it first (NEP 50), OverflowError (fuzz seed 1026916)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        x ** -2**40
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        aot.compile(lambda a: a ** -2**40)(x)


@pytest.mark.parametrize("fn", [
    lambda a, b: a ** b + 1,  # an elementwise kernel
    lambda a, b: (a ** b).sum(),  # the power stays out of the reduction's body
    lambda a, b: (a ** b * 2).max(axis=0),
], ids=["elementwise", "sum", "max"])
def test_integer_to_negative_runtime_power_raises_like_numpy(fn):
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    b = np.arange(12, dtype=np.int64).reshape(3, 4) % 3
    f = aot.compile(fn)
    assert_same(f(a, b), fn(a, b))
    b[2, 1] = -1
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        fn(a, b)
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        f(a, b)


def test_negative_runtime_power_on_threads_and_in_a_library(tmp_path):
    n = 1 << 20
    a, b = np.arange(n) % 5, np.ones(n, np.int64)
    b[n - 3] = -2
    f = aot.compile(lambda a, b: a ** b)
    with pytest.raises(ValueError, match="negative integer powers"):
        f(a, b)
    lib = aot.aot_load(aot.aot_compile(lambda a, b: a ** b, (a[:8], b[:8]), path=tmp_path / "ipow.so"))
    np.testing.assert_array_equal(lib(a[:8], np.abs(b[:8])), a[:8] ** np.abs(b[:8]))
    with pytest.raises(ValueError, match="negative integer powers"):
        lib(a[n - 8:], b[n - 8:])


def test_integer_overflow_wraps_like_numpy():
    x = np.array([2**62, -2**63, 2**63 - 1, 3], np.int64)
    f = aot.compile(lambda a: (a * a + 1, a - 1, -a, np.abs(a), a.sum(), a.prod()))
    for got, want in zip(f(x), reference(lambda a: (a * a + 1, a - 1, -a, np.abs(a), a.sum(), a.prod()), x)):
        assert_same(got, want)


def test_out_of_domain_floats_give_numpy_nans_and_infs():
    x = np.array([-1.0, 0.0, -0.0, 1e308, -1e308, np.inf, -np.inf, np.nan])
    fn = lambda a: (np.sqrt(a), np.log(a), a * 10, 1 / a, np.exp(a), np.arcsin(a))
    for got, want in zip(aot.compile(fn)(x), reference(fn, x)):
        assert_same(got, want, RTOL)


# --- layouts at the native boundary -----------------------------------------------------------------
def test_misaligned_inputs():
    """Views at an odd byte offset (np.frombuffer(..., offset=1)): numpy allows them, so must aot."""
    for dt, n in ((np.float64, 1000), (np.float32, 1001), (np.complex128, 257), (np.int32, 999)):
        data = np.arange(n).astype(dt)
        x = np.frombuffer(b"\0" + data.tobytes(), dtype=dt, offset=1)
        assert not x.flags.aligned
        fn = lambda a: (a * 2 + a, a.sum(), a[::-3] + 1)
        for got, want in zip(aot.compile(fn)(x), reference(fn, x)):
            assert_same(got, want, 1e-5 if dt == np.float32 else 1e-12)


def test_read_only_fortran_negative_strides_and_broadcast():
    base = np.arange(24.0).reshape(4, 6)
    ro = base.copy()
    ro.flags.writeable = False
    views = {"read-only": ro, "fortran": np.asfortranarray(base), "negative": base[::-1, ::-1].copy()[::-1, ::-1],
             "neg-view": base[::-1], "broadcast": np.broadcast_to(base[:1], (4, 6)), "column": base[:, 2:3]}
    f = aot.compile(lambda a: (np.exp(a / 24) * a, a.sum(axis=0), a.T))
    for name, v in views.items():
        for k, (got, want) in enumerate(zip(f(v), reference(lambda a: (np.exp(a / 24) * a, a.sum(axis=0), a.T), v))):
            assert_same(got, want, RTOL, f"{name} result {k}")
    assert ro.flags.writeable is False and np.array_equal(ro, base)


def test_zero_d_arrays():
    x, y = np.array(2.5), np.array(3, np.int32)
    fn = lambda a, b: (a * b, np.sin(a), a + np.ones(3), b.sum())
    for got, want in zip(aot.compile(fn)(x, y), reference(fn, x, y)):
        assert_same(got, want, RTOL)


def test_numpy_scalar_argument_first_call():
    f = aot.compile(chain)
    assert_same(np.asarray(f(np.float64(3.0))), chain(np.float64(3.0)), RTOL)


def test_numpy_scalar_arguments_repeat():
    f = aot.compile(chain)
    for v in (np.float64(3.0), np.float64(3.0), np.float32(2.0), np.int64(4), np.complex128(1j)):
        assert_same(np.asarray(f(v)), np.asarray(chain(v)), 1e-6)


# --- the native callable checks its own arguments -------------------------------------------------
@pytest.fixture(scope="module")
def native():
    """A JIT-compiled f64[4, 3] x f64[3] -> f64[4, 3] entry, called directly (no guards in front)."""
    m = ir.Module("t")
    f, b = ir.new_func(m, "main", [ir.TensorType(ir.dtypes.float64, (4, 3)), ir.TensorType(ir.dtypes.float64, (3,))],
                       ["x", "y"])
    b.ret(b.create("add", list(f.args), {}).results[0])
    run_pipeline(m, ",".join(PIPELINE))
    return load_module(m, {})


@pytest.mark.parametrize("args, error", [
    ((np.ones((4, 3), np.float32), np.ones(3)), TypeError),
    ((np.ones((4, 3)), np.ones(3, np.int64)), TypeError),
    ((np.ones((4, 3)), [1.0, 2.0, 3.0]), TypeError),
    ((np.ones((4, 3)), None), TypeError),
    ((np.ones((4, 3)),), TypeError),
    ((np.ones((4, 2)), np.ones(3)), ValueError),
    ((np.ones(12), np.ones(3)), ValueError),
    ((np.ones((4, 3)), np.ones(4)), ValueError),
])
def test_native_entry_rejects_bad_arguments(native, args, error):
    with pytest.raises(error):
        native(*args)


def test_native_entry_accepts_any_strides(native):
    x = np.arange(12.0).reshape(3, 4).T
    y = np.arange(6.0)[::-2]
    assert_same(native(x, y), x + y, RTOL)
