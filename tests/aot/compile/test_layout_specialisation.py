"""Layout specialisation: an argument that is C-contiguous at the first call is read as such (a
guard on its layout), another layout recompiles once into an entry generic in it, and every call
path keeps the promise the code relies on (runtime.ArgSpec.contiguous)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import aot


def f(x, y):
    return np.sin(x) * y + x


def test_contiguous_arguments_are_guarded():
    c = aot.compile(f)
    x, y = np.linspace(0, 1, 24).reshape(4, 6), np.ones((4, 6))
    np.testing.assert_allclose(c(x, y), f(x, y))
    (entry,) = c.cache_info()["entries"]
    assert "L['x'].flags.c_contiguous" in entry["guards"] and "L['y'].flags.c_contiguous" in entry["guards"]
    assert c._entries[0].runner.signature.inputs[0].contiguous


def test_another_layout_recompiles_once_per_argument():
    c = aot.compile(f)
    x, y = np.linspace(0, 1, 24).reshape(4, 6), np.ones((4, 6))
    c(x, y)
    for xv in (x.T.copy().T, x[::-1], np.asfortranarray(x)):  # F order, reversed: not C-contiguous
        np.testing.assert_allclose(c(xv, y), f(xv, y))
    info = c.cache_info()
    assert info["compiles"] == 2 and info["guard_failures"] == 1
    generic = info["entries"][1]["guards"]
    assert "L['x'].flags.c_contiguous" not in generic and "L['y'].flags.c_contiguous" in generic
    np.testing.assert_allclose(c(x, y), f(x, y))  # the first entry still serves C order
    assert c.cache_info()["compiles"] == 2


def test_guard_failure_says_what_layout_came():
    c = aot.compile(f)
    x = np.ones((3, 5))
    c(x, x)
    why = c._entries[0].guards.why_failed([x[:, ::-1], x])
    assert "c_contiguous" in why and "strides" in why


def test_every_call_path_copies_a_strided_array_for_contiguous_code():
    """Called directly with another layout (not through the guards), the entry still gets a
    C-contiguous array: the native check refuses it, the general path copies it."""
    c = aot.compile(f)
    x = np.linspace(0, 1, 30).reshape(5, 6)
    c(x, x)
    runner = c._entries[0].runner
    assert runner.fast(x[:, ::2].copy(), x[:, ::2].copy()) is None  # other shapes: not this entry
    strided = np.linspace(0, 1, 60).reshape(5, 12)[:, ::2]
    assert runner.fast(strided, x) is None  # the native check: not C-contiguous
    (got,) = runner(strided, x)  # the general path: a C-contiguous copy
    np.testing.assert_allclose(got, f(strided, x))


def test_lifted_arrays_and_non_array_leaves():
    w = np.arange(12.0).reshape(3, 4)

    def g(x, k):
        return x @ w.T * k

    c = aot.compile(g)
    x = np.ones((2, 4))
    np.testing.assert_allclose(c(x, 2.0), g(x, 2.0))
    np.testing.assert_allclose(c(np.ones((4, 2)).T, 2.0), g(np.ones((4, 2)).T, 2.0))
    assert c.cache_info()["compiles"] == 2


@pytest.mark.parametrize("dynamic", [True, None])
def test_dynamic_entries_specialise_too(dynamic):
    c = aot.compile(lambda a: a * 2 + 1, dynamic=dynamic)
    for n in (5, 7, 9):
        a = np.arange(float(n))
        np.testing.assert_array_equal(c(a), a * 2 + 1)
    for n in (5, 8):
        a = np.arange(2.0 * n)[::2]
        np.testing.assert_array_equal(c(a), a * 2 + 1)
    assert c.cache_info()["compiles"] <= 3


def test_shipped_entries_keep_the_layout():
    c = aot.compile(f)
    x = np.ones((4, 4))
    c(x, x)
    c2 = pickle.loads(pickle.dumps(c))
    assert c2._entries[0].runner.signature.inputs[0].contiguous
    np.testing.assert_allclose(c2(x[::-1], x), f(x[::-1], x))
