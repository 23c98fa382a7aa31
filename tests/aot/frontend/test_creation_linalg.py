"""Creation functions and linear algebra (matmul, dot, outer, inner, vdot, tensordot, einsum)."""
from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import EagerEmitter, UnsupportedError, translate

from ._support import DTYPES, NUMERIC, check, make


def _check_type(f, *args, **kwargs):
    got, want = translate(EagerEmitter(), f, *args, **kwargs), f(*args, **kwargs)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)


@pytest.mark.parametrize("dtype", [None, *DTYPES])
def test_filled(dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    for f in (np.zeros, np.ones):
        check(f, (2, 3), **kw)
    _check_type(np.empty, (2, 3), **kw)  # numpy's values are uninitialised memory
    check(np.full, 4, 7, dtype=dtype)
    x = make("float32", (2, 0, 3))
    for f in (np.zeros_like, np.ones_like):
        check(f, x, dtype=dtype)
        check(f, x, dtype=dtype, shape=(4,))
    _check_type(np.empty_like, x, dtype=dtype)
    check(np.full_like, make("int32", (3,)), 2.7, dtype=dtype)


def test_full_default_dtypes_and_value_operands():
    for v in (True, 3, 2.5, 1 + 2j, np.float32(1.5)):
        check(np.full, (2, 2), v)
    check(np.full, (2, 3), np.array([1.0, 2.0, 3.0]))
    check(np.full_like, make("float64", (2, 3)), np.array([1, 2, 3]))


@pytest.mark.parametrize("args", [(5,), (2, 9), (1, 10, 3), (10, 1, -2), (0.5, 3.2, 0.3), (3, 3), (0, -4),
                                  (1.0, 2.0, 0.1)], ids=str)
@pytest.mark.parametrize("dtype", [None, "int32", "float32", "float64"])
def test_arange(args, dtype):
    if dtype is not None and "int" in dtype and any(isinstance(a, float) for a in args):
        return
    check(np.arange, *args, dtype=dtype)


@pytest.mark.parametrize("kwargs", [{}, {"num": 7}, {"num": 1}, {"num": 0}, {"num": 5, "endpoint": False},
                                    {"num": 4, "dtype": "int32"}, {"num": 6, "dtype": "float32"}], ids=str)
def test_linspace(kwargs):
    check(np.linspace, 0, 1, **kwargs)
    check(np.linspace, -2.5, 7, **kwargs)
    got = translate(EagerEmitter(), np.linspace, 0, 1, 5, retstep=True)
    assert got[1] == np.linspace(0, 1, 5, retstep=True)[1]


def test_eye_identity_tri():
    check(np.eye, 3)
    check(np.eye, 3, 5, k=1, dtype=np.int32)
    check(np.eye, 4, 2, k=-1, dtype=bool)
    check(np.identity, 3)
    x = make("float32", (2, 4, 5))
    for k in (-1, 0, 2):
        check(np.tril, x, k)
        check(np.triu, x, k)


# --- linear algebra -----------------------------------------------------------------------------

MATMUL_SHAPES = [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
                 ((2, 1, 3, 4), (5, 4, 2)), ((0, 4), (4, 3)), ((3, 0), (0, 2))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", NUMERIC)
def test_matmul_dot(dtype, shapes):
    a, b = make(dtype, shapes[0], 1), make(dtype, shapes[1], 2)
    check(np.matmul, a, b)
    check(np.dot, a, b)


@pytest.mark.parametrize("b_dtype", DTYPES)
def test_matmul_promotes(b_dtype):
    check(np.matmul, make("float32", (2, 3), 1), make(b_dtype, (3, 2), 2))


def test_dot_general_and_scalars():
    a, b = make("float64", (2, 3, 4), 1), make("float64", (5, 4, 6), 2)
    check(np.dot, a, b)
    check(np.dot, make("float64", (4,)), b)
    check(np.dot, a, 2.0)
    check(np.dot, np.float32(3), make("int32", (2,)))


def test_outer_inner_vdot_tensordot():
    a, b = make("float64", (2, 3), 1), make("complex128", (4, 3), 2)
    check(np.outer, a, b)
    check(np.inner, a, b)
    check(np.vdot, b, b)
    check(np.vdot, a, make("float64", (3, 2), 3))
    c = make("float32", (3, 4, 5), 3)
    d = make("float32", (4, 3, 2), 4)
    check(np.tensordot, c, d, axes=([0, 1], [1, 0]))
    check(np.tensordot, c, make("float32", (4, 5, 2), 5))
    check(np.tensordot, c, make("float32", (5, 2), 5), axes=1)
    check(np.tensordot, a, a, axes=0)


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("i,j->ij", [(2,), (3,)]),
    ("i,i->", [(4,), (4,)]), ("ij,ij->i", [(2, 3), (2, 3)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]), ("i...->...", [(2, 3, 4)]), ("ab,cd->dacb", [(2, 1), (3, 2)]),
    ("ij,kj->ikj", [(2, 3), (1, 3)]),
]


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex64"])
@pytest.mark.parametrize("spec,shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum(spec, shapes, dtype):
    ops = [make(dtype, s, i) for i, s in enumerate(shapes)]
    check(np.einsum, spec, *ops)


def test_einsum_dtype_promotion_and_errors():
    check(np.einsum, "ij,jk->ik", make("int32", (2, 3)), make("float32", (3, 2)))
    with pytest.raises(UnsupportedError, match="repeated subscripts"):
        translate(EagerEmitter(), np.einsum, "ii->i", make("float64", (3, 3)))
    with pytest.raises(ValueError, match="output subscript 'z'"):
        translate(EagerEmitter(), np.einsum, "ij->z", make("float64", (3, 3)))


def test_matmul_errors():
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        translate(EagerEmitter(), np.matmul, np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        translate(EagerEmitter(), np.matmul, np.ones(3), np.float64(2))
    with pytest.raises(ValueError, match="not aligned"):
        translate(EagerEmitter(), np.dot, np.ones((2, 3)), np.ones((4, 2)))
