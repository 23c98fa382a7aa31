"""The same translations through IRBuilderEmitter: the built function verifies, its inferred result
types equal numpy's dtype/shape, and ir.interp runs it to numpy's values."""
from __future__ import annotations

import numpy as np
import pytest

import ir
from aot.frontend import build_func, getitem, translate, translate_method, translate_operator
from aot.frontend import nn_functional as F
from aot.frontend.shapes import SymbolicShapeError
from ir import dtypes as irdt
from ir.interp import run_func
from ir.symbols import size_symbol
from ir.types import TensorType

from ._support import assert_same, make

x32, x64 = make("float32", (3, 4), 1), make("float64", (3, 4), 2)
i32, c64 = make("int32", (4,), 3), make("complex64", (3, 4), 4)
b = make("bool", (3, 4), 5)

def _sin_plus_2(em, x):
    return translate_operator(em, "__add__", translate(em, np.sin, x), 2)


def _plus_arange(em, x):
    return translate_operator(em, "__add__", x, translate(em, np.arange, 4, dtype=np.float32))


# (name, numpy function, args, kwargs); ndarrays (also inside lists) become function arguments, the
# rest stays Python constants. PROGRAMS gives the translation of the composite (lambda) cases.
CASES = [
    ("sin+weak", lambda x: np.sin(x) + 2, [x32], {}),
    ("int*float", np.multiply, [i32, 2.5], {}),
    ("promote", np.add, [x32, i32], {}),
    ("divide", np.true_divide, [i32, i32 + 10], {}),
    ("compare", np.less_equal, [x64, 0.5], {}),
    ("where", np.where, [b, x32, -1], {}),
    ("clip", np.clip, [x64, -0.5, 0.5], {}),
    ("hypot", np.hypot, [x32, x32], {}),
    ("logaddexp", np.logaddexp, [x64, x64[::-1]], {}),
    ("sum", np.sum, [i32], {}),
    ("mean", np.mean, [x32], {"axis": -1, "keepdims": True}),
    ("var", np.var, [c64], {"axis": 0, "ddof": 1}),
    ("std", np.std, [i32], {}),
    ("argmax", np.argmax, [x64], {"axis": None, "keepdims": True}),
    ("max", np.max, [b], {"axis": 1}),
    ("reshape", np.reshape, [x64], {"shape": (2, -1)}),
    ("moveaxis", np.moveaxis, [make("float64", (2, 3, 4))], {"source": 0, "destination": -1}),
    ("concatenate", np.concatenate, [[x32, x64]], {"axis": 1}),
    ("stack", np.stack, [[x32, x32]], {"axis": -1}),
    ("pad", np.pad, [x32, ((1, 0), (0, 2))], {"constant_values": 3}),
    ("einsum", np.einsum, ["ij,kj->ik", x64, x64], {}),
    ("matmul", np.matmul, [x32, x64.T], {}),
    ("outer", np.outer, [i32, i32], {}),
    ("fft", np.fft.fft, [x32], {"axis": 0}),
    ("rfft2", np.fft.rfft2, [x64], {"norm": "ortho"}),
    ("irfftn", np.fft.irfftn, [c64], {}),
    ("arange", lambda x: x + np.arange(4, dtype=np.float32), [x32], {}),
    ("zeros_like", np.zeros_like, [c64], {}),
    ("take", np.take, [x64, [2, 0]], {"axis": 1}),
    ("roll", np.roll, [x64, 1], {"axis": 0}),
]


PROGRAMS = {CASES[0][1]: _sin_plus_2, CASES[26][1]: _plus_arange}


def _lower(fn, args, kwargs):
    flat, slots = [], []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            slots.append((i, None))
            flat.append(a)
        elif isinstance(a, list) and all(isinstance(e, np.ndarray) for e in a):
            for k, e in enumerate(a):
                slots.append((i, k))
                flat.append(e)
    types = [TensorType(irdt.from_numpy(a.dtype), a.shape) for a in flat]

    def body(em, *vals):
        full = [list(a) if isinstance(a, list) else a for a in args]
        for (i, k), v in zip(slots, vals):
            if k is None:
                full[i] = v
            else:
                full[i][k] = v
        if fn in PROGRAMS:
            return PROGRAMS[fn](em, *full)
        return translate(em, fn, *full, **kwargs)

    module, func = build_func(body, types)
    ir.verify(module)
    return module, func, flat


@pytest.mark.parametrize("name,fn,args,kwargs", CASES, ids=[c[0] for c in CASES])
def test_ir_types_and_interpretation(name, fn, args, kwargs):
    with np.errstate(all="ignore"):
        want = np.asarray(fn(*args, **kwargs))
    module, func, flat = _lower(fn, args, kwargs)
    assert func.result_types == [TensorType(irdt.from_numpy(want.dtype), want.shape)]
    (got,) = run_func(func, *flat)
    assert_same(got, want, decomposed=True)
    text = ir.print_module(module)
    assert ir.print_module(ir.parse_module(text)) == text


def test_methods_indexing_and_nn_through_ir():
    x = make("float32", (2, 3, 4))

    def body(em, v):
        y = getitem(em, v, (slice(None, None, -1), None, 1, [3, 0]))
        z = translate_method(em, y, "sum", axis=-1)
        return F.softmax(em, v, axis=1), z, translate_method(em, v, "T")

    module, func = build_func(body, [TensorType(irdt.float32, x.shape)])
    ir.verify(module)
    got = run_func(func, x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert_same(got[0], e / e.sum(axis=1, keepdims=True))
    assert_same(got[1], x[::-1, None, 1, [3, 0]].sum(axis=-1))
    assert_same(got[2], x.T)


def test_symbolic_dims_flow_through():
    s0 = size_symbol("s0")
    t = TensorType(irdt.float64, (s0, 3))

    def body(em, v):
        y = translate(em, np.add, translate(em, np.sin, v), v)
        z = translate(em, np.sum, y, axis=0)
        t = translate(em, np.expand_dims, translate(em, np.transpose, y), 0)
        return t, z, getitem(em, v, (slice(None), 1))

    module, func = build_func(body, [t])
    ir.verify(module)
    assert [r.shape for r in func.result_types] == [(1, 3, s0), (3,), (s0,)]
    x = make("float64", (5, 3))
    got = run_func(func, x)
    assert_same(got[0], (np.sin(x) + x).T[None])
    assert_same(got[2], x[:, 1])


def test_symbolic_decisions_need_a_shape_env():
    s0 = size_symbol("s0")
    with pytest.raises(SymbolicShapeError, match="shape environment"):
        build_func(lambda em, v: getitem(em, v, slice(None, None, 2)), [TensorType(irdt.float64, (s0,))])
    with pytest.raises(SymbolicShapeError, match="shape environment"):
        build_func(lambda em, v: getitem(em, v, 0), [TensorType(irdt.float64, (s0,))])


def test_symbolic_mean_divides_by_the_runtime_count():
    s0 = size_symbol("s0")
    module, func = build_func(lambda em, v: translate(em, np.mean, v), [TensorType(irdt.float32, (s0,))])
    ir.verify(module)
    assert func.result_types[0] == TensorType(irdt.float32, ())
    x = make("float32", (7,))
    assert_same(run_func(func, x)[0], np.mean(x))
