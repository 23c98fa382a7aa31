"""x[key] against numpy: ints, slices with any step, None, Ellipsis, one integer array; errors."""
from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import EagerEmitter, FrontendError, UnsupportedError, getitem, setitem
from aot.frontend.selection import MaskedSelection

from ._support import DTYPES, assert_same, make

KEYS = [
    0, -1, (1, 2), (slice(None), 1), slice(1, None), slice(None, None, -1), slice(-1, 0, -2),
    slice(5, -7, -3), (slice(None), slice(None, None, 2), slice(3, 0, -1)), (Ellipsis, 0), (0, Ellipsis, -1),
    None, (None, 1, None), (slice(None), None, Ellipsis, None), Ellipsis, (), slice(10, 20),
    slice(-100, 100, 3), (1, slice(None), -2), [0, 2], (slice(None), [3, 0, -1]), ([1, 0], 2),
    (0, slice(None), [1, 2]), (slice(None), 0, [1, 2]), (None, slice(None), [[0, 1], [2, 0]]),
    np.array([2, 1]), (Ellipsis, np.array([0, 0])), (1, None, slice(None), np.array([1])),
    (slice(None, None, -1), [0, 2], 1),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem_matches_numpy(key):
    x = make("float64", (3, 4, 5))
    assert_same(getitem(EagerEmitter(), x, key), x[key])


@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem_dtypes(dtype):
    x = make(dtype, (4, 3))
    for key in [(slice(None, None, -1), 1), (None, [2, 0])]:
        assert_same(getitem(EagerEmitter(), x, key), x[key])


def test_integer_value_index():
    x = make("float64", (4, 3))
    idx = np.array([3, 0, 3])
    assert_same(getitem(EagerEmitter(), x, (slice(None), idx[:2] - 1)), x[:, idx[:2] - 1])
    assert_same(getitem(EagerEmitter(), x, np.int64(2)), x[np.int64(2)])


def test_empty_dims():
    x = make("float64", (0, 3))
    for key in [(slice(None), 1), (slice(None, None, -1),), (Ellipsis, None)]:
        assert_same(getitem(EagerEmitter(), x, key), x[key])


def test_errors():
    x = make("float64", (3, 4))
    em = EagerEmitter()
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        getitem(em, x, 3)
    with pytest.raises(IndexError, match="array is 2-dimensional, but 3 were indexed"):
        getitem(em, x, (0, 0, 0))
    with pytest.raises(IndexError, match="single ellipsis"):
        getitem(em, x, (Ellipsis, Ellipsis))
    with pytest.raises(UnsupportedError, match="boolean mask"):
        getitem(em, x, (x[:, 0] > 0, 0))  # a mask inside a tuple key
    with pytest.raises(IndexError, match="boolean index did not match"):
        getitem(em, x, [True, False])


def test_boolean_masks():
    x = make("float64", (3, 4))
    em = EagerEmitter()
    assert_same(getitem(em, x, [True, False, True]), x[[True, False, True]])  # a known mask: a take
    sel = getitem(em, x, x > 0)  # a value mask: a selection, whose reductions are masked ones
    assert isinstance(sel, MaskedSelection)
    np.testing.assert_allclose(sel.sum(), x[x > 0].sum())
    with pytest.raises(UnsupportedError, match="data-dependent"):
        len(sel)
    assert_same(getitem(em, x, ([0, 1], [1, 2])), x[[0, 1], [1, 2]])  # two arrays: a flat take
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        getitem(em, x, ([0, 1], [1, 4]))
    with pytest.raises(IndexError, match="only integers, slices"):
        getitem(em, x, 1.5)
    want = x.copy()
    want[0] = 1.0
    setitem(em, x, 0, 1.0)  # the eager emitter updates numpy arrays in place
    assert_same(x, want)
