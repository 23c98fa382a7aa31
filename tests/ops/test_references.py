"""Values of the references that numpy has no single function for (rsqrt, sigmoid, erf, complex,
cast) and of rows whose reference adapts attributes (slice, pad, fft)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import aot.ops  # noqa: F401  (registers the rows)
from ir import dtypes as D
from ir.opdef import OPDEFS

X = np.linspace(-3, 3, 13)


def ref(name, *args, **attrs):
    d = OPDEFS[name]
    return d.reference(*args, **d.full_attrs(attrs))


@pytest.mark.parametrize("dt, rtol", [(np.float32, 1e-6), (np.float64, 1e-15)])
def test_float_references(dt, rtol):
    x = X.astype(dt)
    np.testing.assert_allclose(ref("rsqrt", x + 4), 1 / np.sqrt(x + 4), rtol=rtol)
    np.testing.assert_allclose(ref("sigmoid", x), 1 / (1 + np.exp(-X)), rtol=10 * rtol)
    np.testing.assert_allclose(ref("erf", x), [math.erf(v) for v in x.astype(np.float64)], rtol=rtol)
    for name in ("rsqrt", "sigmoid", "erf"):
        assert ref(name, x + 4).dtype == dt


def test_sigmoid_saturates_without_warnings():
    with np.errstate(all="raise"):
        out = ref("sigmoid", np.array([-1000.0, 0.0, 1000.0]))
    np.testing.assert_array_equal(out, [0.0, 0.5, 1.0])


def test_complex_keeps_infinities():
    out = ref("complex", np.array([1.0, np.inf], np.float32), np.array([np.inf, 2.0], np.float32))
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(out.real, [1.0, np.inf])
    np.testing.assert_array_equal(out.imag, [np.inf, 2.0])


def test_cast_complex_to_real_keeps_real_part():
    out = ref("cast", np.array([1.5 + 2j]), dtype=D.int32)
    assert out.dtype == np.int32 and out[0] == 1


def test_slice_negative_steps_and_none():
    x = np.arange(10)
    np.testing.assert_array_equal(ref("slice", x, starts=(8,), stops=(None,), steps=(-3,)), x[8::-3])


def test_pad_and_fft_follow_numpy():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ref("pad", x, pad_width=((1, 0), (0, 2)), value=-1.0),
                                  np.pad(x, ((1, 0), (0, 2)), constant_values=-1.0))
    np.testing.assert_allclose(ref("fft", x, axis=1, inverse=True, norm="ortho"),
                               np.fft.ifft(x, axis=1, norm="ortho"))
    np.testing.assert_allclose(ref("irfft", np.fft.rfft(x, axis=0), axis=0, n=2), x)
