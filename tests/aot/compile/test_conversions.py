"""np.asarray / np.array / np.asanyarray / np.ascontiguousarray of traced arrays (numpy does not
dispatch them; the tracer substitutes them while it traces)."""
from __future__ import annotations

import numpy as np
import pytest

import aot

X = np.arange(6.0).reshape(2, 3)

CASES = {
    "asarray": lambda x: np.asarray(x) * 2,
    "asarray_dtype": lambda x: np.asarray(x, dtype=np.float32) + 1,
    "asarray_int": lambda x: np.asarray(x, dtype=np.int32),
    "asanyarray": lambda x: np.asanyarray(x).sum(),
    "array_copy": lambda x: np.array(x, copy=True) - x,
    "array_ndmin": lambda x: np.array(x[0], ndmin=3),
    "array_of_list": lambda x: np.array([x, 2 * x]).sum(axis=0),
    "array_nested_scalars": lambda x: np.array([[x[0, 0], 1.0], [2, x[1, 1]]]),
    "array_scalars_promote": lambda x: np.array([x[0, 0].astype(np.float32), 1.5]),
    "ascontiguousarray": lambda x: np.ascontiguousarray(x.T) + 0,
    "ascontiguousarray_0d": lambda x: np.ascontiguousarray(x.sum()),
}


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy(name, backend):
    fn = CASES[name]
    got, want = aot.compile(fn, backend=backend, fullgraph=True)(X), fn(X)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_numpy_is_restored_and_plain_calls_pass_through():
    original = np.asarray
    seen = []

    def fn(x):
        seen.append(np.asarray is original)
        return np.asarray(x) + np.asarray([1.0, 2.0, 3.0])  # a plain list: numpy's own result

    np.testing.assert_array_equal(aot.compile(fn, fullgraph=True)(X), X + [1.0, 2.0, 3.0])
    assert seen == [False] and np.asarray is original


def test_dynamic_shapes():
    f = aot.compile(lambda x: np.asarray(x, dtype=np.float32).mean(), dynamic=True)
    for n in (4, 9):
        x = np.arange(float(n))
        assert f(x) == np.float32(x.astype(np.float32).mean())


def test_bad_order():
    with pytest.raises(ValueError, match="order"):
        aot.compile(lambda x: np.asarray(x, order="Z"), fullgraph=True)(X)
