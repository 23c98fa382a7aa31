"""aot.nn.functional translations (vs numpy formulas) and the CoreOp namespace."""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from aot.frontend import CoreOp, EagerEmitter, Emitter, IRBuilderEmitter, UnsupportedError, abstract_of, ops
from aot.frontend import nn_functional as F
from ir import dtypes as irdt
from ir.builder import Builder

from ._support import assert_same, make

em = EagerEmitter()


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activations(dtype):
    x = make(dtype, (3, 5)) * 4
    assert_same(F.relu(em, x), np.maximum(x, 0))
    with np.errstate(over="ignore"):
        assert_same(F.sigmoid(em, x), 1 / (1 + np.exp(-x)))
    assert_same(F.tanh(em, x), np.tanh(x))
    assert_same(F.softmax(em, x, axis=0), _softmax(x, 0), decomposed=True)
    assert_same(F.softmax(em, x, dim=-1), _softmax(x, -1), decomposed=True)
    assert_same(F.log_softmax(em, x, 1), np.log(_softmax(x, 1)), decomposed=True)
    erf = np.vectorize(math.erf)(x.astype(np.float64) / math.sqrt(2)).astype(dtype)
    assert_same(F.gelu(em, x), x * np.asarray(0.5, dtype) * (1 + erf), decomposed=True)
    c = np.asarray(math.sqrt(2 / math.pi), dtype)
    tanh = x * np.asarray(0.5, dtype) * (1 + np.tanh(c * (x + np.asarray(0.044715, dtype) * x ** 3)))
    assert_same(F.gelu(em, x, approximate="tanh"), tanh, decomposed=True)


def test_softmax_is_stable_and_ints_compute_in_float64():
    x = np.array([1000.0, 1001.0, 1002.0])
    assert_same(F.softmax(em, x), _softmax(x, -1))
    assert_same(F.softmax(em, np.arange(4, dtype=np.int32)), _softmax(np.arange(4.0), -1))
    assert F.softmax(em, make("float32", (2,)), dtype=np.float64).dtype == np.float64


def test_linear_and_dropout():
    x, w, bias = make("float32", (4, 3), 1), make("float32", (5, 3), 2), make("float32", (5,), 3)
    assert_same(F.linear(em, x, w, bias), x @ w.T + bias)
    assert_same(F.linear(em, x, w), x @ w.T)
    assert_same(F.dropout(em, x, 0.3, training=False), x)
    assert_same(F.dropout(em, x, 0.0), x)
    with pytest.raises(UnsupportedError, match="training=False"):
        F.dropout(em, x, 0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(em, x, 1.5, training=False)
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(em, x, approximate="erf")


def test_core_op_namespace():
    x = make("float64", (2, 3))
    assert repr(ops.add) == "ops.add" and ops.add.__name__ == "add"
    assert ops.add is ops["add"] and ops.add == CoreOp("add")
    assert pickle.loads(pickle.dumps(ops.sum)) == ops.sum
    assert_same(ops.add(x, x), x + x)
    assert_same(ops.sum(x, axes=(1,), keepdims=True), x.sum(axis=1, keepdims=True))
    assert_same(ops.cast(x, dtype=irdt.int32), x.astype(np.int32))
    assert "matmul" in dir(ops)
    with pytest.raises(AttributeError, match="no core op named 'nope'"):
        _ = ops.nope


def test_emitters_satisfy_the_protocol_and_abstract_of():
    assert isinstance(EagerEmitter(), Emitter)
    assert isinstance(IRBuilderEmitter(Builder()), Emitter)
    a = abstract_of(np.zeros((2, 3), np.float32))
    assert (a.dtype, a.shape, a.ndim) == (irdt.float32, (2, 3), 2)

    class Fake:
        dtype, shape = np.dtype("complex64"), (4,)

    assert abstract_of(Fake()).dtype == irdt.complex64
    with pytest.raises(TypeError, match="expected an array-like"):
        abstract_of(3)
