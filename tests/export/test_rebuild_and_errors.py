"""Libraries rebuilt in place load anew, and library errors have numpy's exception classes."""
from __future__ import annotations

import numpy as np
import pytest

import aot


def test_library_rebuilt_at_the_same_path_is_loaded_anew(tmp_path):
    path = tmp_path / "f.so"
    x = np.arange(3.0)
    aot.aot_compile(lambda a: a + 1, (x,), path=path)
    first = aot.aot_load(path)
    aot.aot_compile(lambda a: a * 10, (x,), path=path)  # dlopen would hand back the first one
    second = aot.aot_load(path)
    np.testing.assert_array_equal(first(x), x + 1)
    np.testing.assert_array_equal(second(x), x * 10)
    np.testing.assert_array_equal(aot.aot_load(path)(x), x * 10)


def test_library_index_error_is_an_index_error(tmp_path):
    path = tmp_path / "g.so"

    def g(a, i):
        return np.take(a, i)

    aot.aot_compile(g, (np.arange(5.0), np.array([0, 1])), path=path)
    lib = aot.aot_load(path)
    np.testing.assert_array_equal(lib(np.arange(5.0), np.array([4, 0])), [4.0, 0.0])
    with pytest.raises(IndexError):
        np.take(np.arange(5.0), np.array([5, 0]))
    with pytest.raises(IndexError):
        lib(np.arange(5.0), np.array([5, 0]))
