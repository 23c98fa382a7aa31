"""Python operators (incl. reflected forms) and ndarray methods/attributes against numpy."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

from aot.frontend import (
    EagerEmitter,
    FrontendError,
    UnsupportedError,
    translate_attribute,
    translate_method,
    translate_operator,
)

from ._support import DTYPES, assert_same, make

BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
          "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "eq": operator.eq,
          "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
          "and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
          "rshift": operator.rshift}
OTHERS = [True, 3, 2.5, -1.5j]


def _numpy(fn, *args):
    with np.errstate(all="ignore"):
        try:
            return fn(*args), None
        except (TypeError, ValueError) as e:
            return None, type(e)


def _compare(name, fn, *args):
    want, error = _numpy(fn, *args)
    em = EagerEmitter()
    if error is not None or np.asarray(want).dtype.name not in DTYPES:
        with pytest.raises(error or TypeError):
            translate_operator(em, f"__{name}__", *args)
    else:
        with np.errstate(all="ignore"):
            assert_same(translate_operator(em, f"__{name}__", *args), want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_operators(name, dtype):
    x = make(dtype, (2, 3), 1, domain="small" if name == "pow" else "any")
    y = make(dtype, (3,), 2, domain="small" if name == "pow" else "nonzero")
    fn = BINARY[name]
    _compare(name, fn, x, y)
    for other in OTHERS:
        _compare(name, fn, x, other)
        if name not in ("eq", "ne", "lt", "le", "gt", "ge"):
            _compare(f"r{name}", lambda a, b: fn(b, a), x, other)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn", [("neg", operator.neg), ("pos", operator.pos), ("abs", operator.abs),
                                     ("invert", operator.invert)])
def test_unary_operators(name, fn, dtype):
    _compare(name, fn, make(dtype, (2, 3)))


def test_matmul_operator_and_reflection():
    a, b = make("float32", (2, 3), 1), make("float64", (3, 4), 2)
    assert_same(translate_operator(EagerEmitter(), "__matmul__", a, b), a @ b)
    assert_same(translate_operator(EagerEmitter(), "__rmatmul__", b, a), a @ b)
    assert_same(translate_operator(EagerEmitter(), "getitem", a, (0, slice(None, None, -1))), a[0, ::-1])
    with pytest.raises(UnsupportedError, match="lshift"):
        translate_operator(EagerEmitter(), "__lshift__", a, 1, 2)


def test_in_place_operators_update_the_array():
    a = make("float64", (2, 3), 1)
    want = a.copy()
    want += 2.5
    out = translate_operator(EagerEmitter(), "__iadd__", a, 2.5)
    assert out is a
    assert_same(a, want)
    i = np.arange(3)
    with pytest.raises(TypeError, match="same_kind"):  # numpy's out=i: float64 does not fit int64
        translate_operator(EagerEmitter(), "__iadd__", i, 0.5)


METHOD_CALLS = [
    ("sum", (), {}), ("sum", (0,), {"keepdims": True}), ("mean", (), {"axis": -1}), ("max", (1,), {}),
    ("min", (), {}), ("prod", (), {"axis": 0}), ("argmax", (), {}), ("argmin", (1,), {}), ("any", (), {}),
    ("all", (0,), {}), ("var", (), {"ddof": 1}), ("std", (0,), {}), ("reshape", (3, 4), {}),
    ("reshape", ((-1,),), {}), ("reshape", (2, -1, 3), {}), ("reshape", (np.int64(6), -1), {}),
    ("transpose", (), {}), ("transpose", (1, 0), {}),
    ("transpose", ((1, 0),), {}), ("astype", (np.float32,), {}), ("astype", ("complex128",), {}),
    ("squeeze", (), {}), ("flatten", (), {}), ("ravel", (), {}), ("clip", (-1, 1), {}),
    ("clip", (), {"max": 0}), ("conj", (), {}), ("conjugate", (), {}), ("swapaxes", (0, 1), {}),
    ("round", (), {}), ("round", (1,), {}), ("copy", (), {}), ("take", ([2, 0],), {"axis": 1}),
]


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex64"])
@pytest.mark.parametrize("name,args,kwargs", METHOD_CALLS, ids=[f"{m[0]}{m[1]}{m[2]}" for m in METHOD_CALLS])
def test_methods(name, args, kwargs, dtype):
    x = make(dtype, (3, 4))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        want = getattr(x, name)(*args, **kwargs)
    assert_same(translate_method(EagerEmitter(), x, name, *args, **kwargs), want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("attr", ["T", "mT", "real", "imag", "shape", "ndim", "size", "dtype", "itemsize",
                                  "nbytes"])
def test_attributes(attr, dtype):
    x = make(dtype, (2, 3, 4))
    got = translate_attribute(EagerEmitter(), x, attr)
    want = getattr(x, attr)
    if isinstance(want, np.ndarray):
        assert_same(got, want)
    else:
        assert got == want and type(got) is type(want)
    if attr in ("T", "shape"):
        assert_same(np.asarray(translate_method(EagerEmitter(), x, attr)), np.asarray(want))


def test_method_errors():
    x = make("float64", (2, 3))
    em = EagerEmitter()
    with pytest.raises(FrontendError, match="item.*concrete data"):
        translate_method(em, x, "item")
    with pytest.raises(FrontendError, match="resize.*in place"):
        translate_method(em, x, "resize", 4)
    translate_method(em, x, "fill", 0)  # the eager emitter updates numpy arrays in place
    assert not x.any()
    with pytest.raises(UnsupportedError, match="ndarray.tofile"):
        translate_method(em, x, "tofile", "x.bin")
    with pytest.raises(UnsupportedError, match="attribute 'flags'"):
        translate_attribute(em, x, "flags")
    with pytest.raises(UnsupportedError, match="`out`"):
        translate_method(em, x, "sum", out=np.empty(()))
    with pytest.raises(np.exceptions.AxisError):
        translate_method(em, x, "mean", axis=-3)
