"""Property tests (hypothesis): random basic indices, broadcast shapes and reduction axes vs numpy."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from aot.frontend import EagerEmitter, getitem, translate

from ._support import assert_same, check

SETTINGS = settings(max_examples=100, deadline=None)
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)


@SETTINGS
@given(data=st.data(), shape=shapes)
def test_basic_indexing(data, shape):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    assert_same(getitem(EagerEmitter(), x, key), x[key])


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
def test_integer_array_index_on_one_axis(data, shape):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx = data.draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                               elements=st.integers(-n, n - 1)))
    prefix = data.draw(st.lists(st.sampled_from([slice(None), 0, -1]), max_size=axis, min_size=axis))
    key = tuple(prefix) + (idx,)
    where = data.draw(st.integers(0, len(key)))
    key = key[:where] + (None,) + key[where:]  # numpy moves the index dims first when split by None
    assert_same(getitem(EagerEmitter(), x, key), x[key])


dtypes = st.sampled_from(["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"])


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       a_dt=dtypes, b_dt=dtypes,
       op=st.sampled_from([np.add, np.multiply, np.maximum, np.not_equal, np.logical_or]))
def test_broadcasting_binary(shapes, a_dt, b_dt, op):
    a = np.ones(shapes.input_shapes[0], a_dt)
    b = np.full(shapes.input_shapes[1], 2, b_dt)
    check(op, a, b)


@SETTINGS
@given(shape=shapes, data=st.data(), keepdims=st.booleans(),
       f=st.sampled_from([np.sum, np.prod, np.mean, np.any, np.all, np.var]))
def test_reduction_axes(shape, data, keepdims, f):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 7
    axis = None
    if shape:
        axes = st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a: a % len(shape),
                        max_size=len(shape))
        axis = data.draw(st.none() | axes.map(tuple))
    check(f, x, axis=axis, keepdims=keepdims)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), data=st.data())
def test_reshape_transpose(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    check(np.transpose, x, perm)
    new = list(data.draw(st.permutations(shape)))
    new[data.draw(st.integers(0, len(new) - 1))] = -1
    assert_same(translate(EagerEmitter(), np.reshape, x, tuple(new)), np.reshape(x, tuple(new)))
