"""Every translated ufunc against numpy, over dtypes, shapes (incl. 0- and 1-size dims, broadcasting)
and Python scalars of each kind (NEP 50 weak promotion)."""
from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import EagerEmitter, UnsupportedError, translate
from aot.frontend.numpy_ufuncs import _DECOMPOSED, ALL_UFUNCS

from ._support import DTYPES, assert_same, check, make

SHAPES = [(), (0,), (1,), (3, 4), (2, 1, 3)]

# input domain per ufunc, so results are finite and comparable
DOMAIN = {np.log: "positive", np.log2: "positive", np.log10: "positive", np.log1p: "positive",
          np.sqrt: "positive", np.arcsin: "unit", np.arccos: "unit", np.arctanh: "unit",
          np.reciprocal: "nonzero", np.arccosh: "positive"}
# ufuncs the front end decomposes (compared with a decomposition's tolerance); the rest are rows
DECOMPOSED = set(_DECOMPOSED)
UNARY = [u for u in ALL_UFUNCS if u.nin == 1]
BINARY = [u for u in ALL_UFUNCS if u.nin == 2]


def _numpy_error(u, *args) -> type[Exception] | None:
    """The error numpy raises for these inputs (TypeError for result dtypes outside the dialect)."""
    try:
        with np.errstate(all="ignore"):
            out = u(*args)
    except (TypeError, ValueError) as e:
        return type(e)
    outs = out if isinstance(out, tuple) else (out,)  # np.frexp, np.modf, np.divmod: two outputs
    return None if all(np.asarray(o).dtype.name in DTYPES for o in outs) else TypeError


def _run_or_match_error(u, *args, decomposed=False):
    if (error := _numpy_error(u, *args)) is None:
        check(u, *args, decomposed=decomposed)
    else:
        with pytest.raises(error):
            translate(EagerEmitter(), u, *args)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("u", UNARY, ids=lambda u: u.__name__)
def test_unary(u, dtype):
    domain = DOMAIN.get(u, "any")
    if u is np.arccosh:
        x = make(dtype, (3, 4), domain="positive") + (np.ones((), dtype) if dtype != "bool" else False)
    else:
        x = make(dtype, (3, 4), domain=domain)
    _run_or_match_error(u, x, decomposed=u in DECOMPOSED)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("u", [np.sin, np.negative, np.absolute, np.isnan, np.square],
                         ids=lambda u: u.__name__)
def test_unary_shapes(u, shape):
    check(u, make("float64", shape))


@pytest.mark.parametrize("b_dtype", DTYPES)
@pytest.mark.parametrize("a_dtype", DTYPES)
@pytest.mark.parametrize("u", [np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.less,
                               np.arctan2, np.logical_xor], ids=lambda u: u.__name__)
def test_binary_promotion(u, a_dtype, b_dtype):
    a = make(a_dtype, (2, 3), seed=1)
    b = make(b_dtype, (3,), seed=2, domain="nonzero")
    _run_or_match_error(u, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("u", BINARY, ids=lambda u: u.__name__)
def test_binary(u, dtype):
    domain = "small" if u in (np.power, np.float_power) else "nonzero"
    a = make(dtype, (3, 1, 4), seed=3, domain="positive" if u in (np.power, np.float_power) else "any")
    b = make(dtype, (2, 4), seed=4, domain=domain)
    _run_or_match_error(u, a, b, decomposed=u in DECOMPOSED)


SCALARS = [True, 2, -3, 2.5, 1e300, 1.5 - 2j]


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("u", [np.add, np.multiply, np.subtract, np.true_divide, np.power, np.greater,
                               np.maximum], ids=lambda u: u.__name__)
def test_weak_python_scalars(u, dtype, scalar):
    x = make(dtype, (2, 3), domain="positive")
    for args in ((x, scalar), (scalar, x)):
        _run_or_match_error(u, *args)


def test_python_int_out_of_range_is_overflow_error():
    x = np.ones(3, np.int32)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        translate(EagerEmitter(), np.add, x, 2**40)
    with pytest.raises(OverflowError):
        np.add(x, 2**40)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_dtype_keyword(dtype):
    x = make("float64", (4,))
    check(np.add, x, x, dtype=dtype)
    check(np.sin, make("int32", (4,)), dtype="float32")


def test_bool_arithmetic_follows_numpy():
    a, b = make("bool", (5,), 1), make("bool", (5,), 2)
    check(np.add, a, b)  # logical or
    check(np.multiply, a, b)  # logical and
    check(np.maximum, a, b)
    check(np.bitwise_and, a, b)
    check(np.invert, a)
    with pytest.raises(TypeError, match="boolean negative"):
        translate(EagerEmitter(), np.negative, a)
    with pytest.raises(TypeError):
        translate(EagerEmitter(), np.subtract, a, b)


def test_bitwise_on_ints_and_weak_scalars():
    x = np.arange(-4, 4, dtype=np.int32)
    check(np.bitwise_and, x, 3)
    check(np.left_shift, x, 2)  # a Python int stays weak: int32
    check(np.bitwise_xor, True, x)
    with pytest.raises(OverflowError):
        translate(EagerEmitter(), np.bitwise_or, x, 2**40)
    with pytest.raises(TypeError):  # bool << bool is int8 in numpy: outside the dialect
        translate(EagerEmitter(), np.left_shift, x > 0, x > 1)


def test_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e-300])
    for u in (np.hypot, np.logaddexp, np.logaddexp2, np.copysign, np.nextafter, np.heaviside, np.fmod):
        check(u, x[:, None], x[None, :])
    for u in (np.fmax, np.fmin):
        check(u, x[:, None], x[None, :], decomposed=True)
    for u in (np.trunc, np.isnan, np.isinf, np.isfinite, np.sign, np.signbit, np.cbrt, np.spacing):
        check(u, x)


@pytest.mark.parametrize("kw", [{"out": np.empty(3)}, {"where": np.ones(3, bool)}])
def test_out_and_where_are_rejected_by_name(kw):
    name = next(iter(kw))
    with pytest.raises(UnsupportedError, match=f"`{name}`"):
        translate(EagerEmitter(), np.add, np.ones(3), 1.0, **kw)


def test_functions_where_clip_real_imag_angle_sinc_isclose():
    x, y = make("float32", (3, 4), 1), make("int32", (4,), 2)
    c = make("complex64", (3, 4), 3)
    check(np.where, x > 0, x, y)
    check(np.where, x > 0, x, 2.5)
    check(np.where, y, 1, 0)
    for lo, hi in [(-1, 1), (None, 0.5), (-0.5, None), (np.float64(-1), 2)]:
        check(np.clip, x, lo, hi)
        check(np.clip, y, lo, hi)
    check(np.clip, x, min=-1, max=1)
    for f in (np.real, np.imag, np.angle):
        check(f, c)
        check(f, x)
    check(np.angle, c, deg=True)
    check(np.sinc, np.array([0.0, 0.5, -1.5, 3.0]))
    check(np.isclose, x, x + 1e-7)
    check(np.isclose, np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), equal_nan=True)


def test_where_one_argument_is_unsupported():
    with pytest.raises(UnsupportedError, match="data-dependent"):
        translate(EagerEmitter(), np.where, np.ones(3) > 0)


def test_constants_only_are_folded_by_numpy():
    got = translate(EagerEmitter(), np.add, 1, 2.5)
    assert_same(got, np.asarray(np.add(1, 2.5)))


def test_unknown_function_is_named():
    with pytest.raises(UnsupportedError, match="np.bitwise_count"):  # its uint8 result is outside the dialect
        translate(EagerEmitter(), np.bitwise_count, np.ones(2, np.int64))
    with pytest.raises(UnsupportedError, match="unique"):
        translate(EagerEmitter(), np.unique, np.ones(3))
