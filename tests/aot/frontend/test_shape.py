"""Layout functions against numpy: reshape/transpose family, joining, flips, pad, take, roll."""
from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import EagerEmitter, UnsupportedError, translate

from ._support import DTYPES, check, make


def em_call(f, *args, **kwargs):
    return translate(EagerEmitter(), f, *args, **kwargs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layout_functions_every_dtype(dtype):
    x = make(dtype, (2, 3, 4))
    check(np.reshape, x, (4, -1))
    check(np.reshape, x, shape=(24,))
    check(np.ravel, x)
    check(np.transpose, x)
    check(np.transpose, x, (1, -1, 0))
    check(np.moveaxis, x, 0, -1)
    check(np.moveaxis, x, (0, 1), (2, 0))
    check(np.swapaxes, x, 0, 2)
    check(np.matrix_transpose, x)
    check(np.expand_dims, x, 1)
    check(np.expand_dims, x, (0, -1))
    check(np.squeeze, make(dtype, (1, 3, 1)))
    check(np.squeeze, make(dtype, (1, 3, 1)), axis=-1)
    check(np.broadcast_to, make(dtype, (3, 1)), (2, 3, 4))
    check(np.flip, x)
    check(np.flip, x, (0, -1))
    check(np.fliplr, x)
    check(np.flipud, x)
    check(np.pad, x, 1)
    check(np.pad, x, ((0, 1), (2, 0), (1, 1)), constant_values=1)
    check(np.take, x, [0, -1, 1], axis=1)
    check(np.take, x, np.array([[0, 3], [2, 1]]), axis=-1)
    check(np.take, x, 5)
    check(np.roll, x, 2)
    check(np.roll, x, (1, -1), axis=(0, 2))


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (3,), ()], ids=str)
def test_degenerate_shapes(shape):
    x = make("float64", shape)
    check(np.reshape, x, (-1,))
    check(np.transpose, x)
    check(np.expand_dims, x, 0)
    check(np.squeeze, x)
    check(np.flip, x)
    check(np.atleast_1d, x)
    check(np.atleast_2d, x)
    check(np.atleast_3d, x)


@pytest.mark.parametrize("b_dtype", DTYPES)
@pytest.mark.parametrize("a_dtype", ["bool", "int32", "float32", "complex128"])
def test_joining_promotes(a_dtype, b_dtype):
    a, b = make(a_dtype, (2, 3), 1), make(b_dtype, (2, 3), 2)
    check(np.concatenate, (a, b))
    check(np.concatenate, [a, b], axis=-1)
    check(np.concatenate, [a, b], axis=None)
    check(np.stack, [a, b])
    check(np.stack, [a, b], axis=-1)
    check(np.hstack, [a, b])
    check(np.vstack, [a, b])
    check(np.column_stack, [a, b])
    check(np.hstack, [a[0], b[0]])
    check(np.vstack, [a[0], b[0]])


def test_concatenate_dtype_and_lists():
    a = make("int32", (2, 2))
    check(np.concatenate, [a, [[1, 2]]])
    check(np.concatenate, [a, a], dtype=np.float32)
    check(np.broadcast_arrays, make("float64", (3, 1)), make("float64", (4,)))


def test_errors_match_numpy():
    x = make("float64", (2, 3))
    with pytest.raises(ValueError, match="cannot reshape array of size 6 into shape"):
        em_call(np.reshape, x, (4, -1))
    with pytest.raises(ValueError, match="can only specify one unknown dimension"):
        em_call(np.reshape, x, (-1, -1))
    with pytest.raises(ValueError, match="axes don't match array"):
        em_call(np.transpose, x, (0,))
    with pytest.raises(ValueError, match="repeated axis in transpose"):
        em_call(np.transpose, x, (0, 0))
    with pytest.raises(np.exceptions.AxisError, match="source"):
        em_call(np.moveaxis, x, 3, 0)
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        em_call(np.squeeze, x, axis=0)
    with pytest.raises(ValueError, match="could not be broadcast"):
        em_call(np.broadcast_to, x, (3, 3))
    with pytest.raises(ValueError, match="along dimension 1, the array at index 0 has size 3"):
        em_call(np.concatenate, [x, np.ones((2, 2))])
    with pytest.raises(ValueError, match="same number of dimensions"):
        em_call(np.concatenate, [x, np.ones(3)])
    with pytest.raises(ValueError, match="zero-dimensional arrays cannot be concatenated"):
        em_call(np.concatenate, [np.float64(1), np.float64(2)])
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        em_call(np.stack, [x, x.T])
    with pytest.raises(UnsupportedError, match="mode='constant'"):
        em_call(np.pad, x, 1, mode="reflect")
    with pytest.raises(IndexError, match="out of bounds"):
        em_call(np.take, x, [7], axis=1)
    with pytest.raises(UnsupportedError, match="`out`"):
        em_call(np.concatenate, [x, x], out=np.empty((4, 3)))
    with pytest.raises(UnsupportedError, match="order"):
        em_call(np.reshape, x, (3, 2), order="F")


def test_take_modes():
    x = make("float64", (5,))
    idx = np.array([-7, 0, 4, 9])
    check(np.take, x, idx, mode="wrap")
    check(np.take, x, idx, mode="clip")
