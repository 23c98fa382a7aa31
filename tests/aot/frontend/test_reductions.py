"""Reductions and their decompositions (mean/var/std) against numpy: dtypes, axes, keepdims, ddof."""
from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import EagerEmitter, UnsupportedError, translate

from ._support import DTYPES, NUMERIC, check, make

AXES = [None, -1, (0, 2), (), (-3, -1, 1)]  # hypothesis (test_properties) draws many more
SHAPES = [(2, 3, 4), (2, 0, 3), (1, 1, 1)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [np.sum, np.prod, np.any, np.all, np.mean], ids=lambda f: f.__name__)
def test_identity_reductions(f, dtype, axis, keepdims):
    for shape in SHAPES:
        check(f, make(dtype, shape), axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [np.max, np.amin, np.ptp], ids=lambda f: f.__name__)
def test_extrema(f, dtype, axis, keepdims):
    if f is np.ptp and dtype == "bool":
        with pytest.raises(TypeError):
            translate(EagerEmitter(), f, make(dtype, (2, 3, 4)), axis=axis)
        return
    check(f, make(dtype, (2, 3, 4)), axis=axis, keepdims=keepdims)


def test_extrema_of_empty_raise_like_numpy():
    x = np.zeros((2, 0))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        translate(EagerEmitter(), np.max, x, axis=1)
    check(np.max, x, axis=0)
    check(np.min, x, axis=1, initial=3.0)
    check(np.max, make("int32", (3, 4)), axis=0, initial=2)
    check(np.sum, make("float32", (3, 4)), axis=1, initial=1.5)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [np.argmax, np.argmin], ids=lambda f: f.__name__)
def test_arg_reductions(f, dtype, axis, keepdims):
    x = make(dtype, (3, 5))
    check(f, x, axis=axis, keepdims=keepdims)


def test_arg_reduction_of_empty():
    with pytest.raises(ValueError, match="argmax of an empty sequence"):
        translate(EagerEmitter(), np.argmax, np.zeros((0, 3)))
    with pytest.raises(ValueError, match="argmin of an empty sequence"):
        translate(EagerEmitter(), np.argmin, np.zeros((0, 3)), axis=0)


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("axis", [None, 0, (1, 2), -1], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [np.var, np.std], ids=lambda f: f.__name__)
def test_var_std(f, dtype, axis, ddof):
    check(f, make(dtype, (3, 4, 5)), axis=axis, ddof=ddof)
    check(f, make(dtype, (3, 4, 5)), axis=axis, ddof=ddof, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
def test_dtype_keyword(dtype):
    x = make("int32", (3, 4))
    check(np.sum, x, axis=0, dtype=dtype)
    check(np.prod, x, dtype=dtype)
    check(np.mean, make("float32", (3, 4)), axis=1, dtype=dtype)
    if dtype != "int32":
        check(np.var, make("float32", (3, 4)), axis=1, dtype=dtype)


def test_var_correction_alias():
    x = make("float64", (4, 5))
    check(np.var, x, axis=0, correction=1)
    with pytest.raises(ValueError, match="ddof and correction"):
        translate(EagerEmitter(), np.var, x, ddof=1, correction=1)


def test_count_nonzero():
    x = make("int32", (4, 5), domain="small")
    check(np.count_nonzero, x, axis=0)
    check(np.count_nonzero, x, axis=(0, 1), keepdims=True)


@pytest.mark.parametrize("f", [np.sum, np.max, np.mean, np.any, np.argmax], ids=lambda f: f.__name__)
def test_errors_name_the_argument(f):
    x = make("float64", (2, 3))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        translate(EagerEmitter(), f, x, axis=2)
    with pytest.raises(UnsupportedError, match="`out`"):
        translate(EagerEmitter(), f, x, axis=0, out=np.empty(3))


def test_duplicate_axis_and_where():
    x = make("float64", (2, 3))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        translate(EagerEmitter(), np.sum, x, axis=(0, -2))
    np.testing.assert_allclose(translate(EagerEmitter(), np.sum, x, where=x > 0), np.sum(x, where=x > 0))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_python_scalar_reduction_input(dtype):
    check(np.sum, [1, 2, 3])
    check(np.mean, 4.0)
