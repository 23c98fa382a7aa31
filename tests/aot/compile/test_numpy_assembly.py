"""np.block, np.insert, np.choose, np.piecewise, np.ix_, np.fromfunction, np.from_dlpack and
np.mask_indices (aot/frontend/numpy_assembly.py) against numpy: values, dtypes and errors through
backend="eager" and the compiled default backend, dynamic shapes and one library build; and the
refusal of the uint8 bit packers. Programs batch the calls so that a dtype costs one compile."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError

from ._support import DTYPES, make
from .test_numpy_everyday import BACKENDS, check, dtypes, numpy_of, run


def _assembly(a, k):
    v = a[::2].T  # a stepped, transposed view: (6, 2)
    i = np.abs(k) % 3
    return (
        np.block([[a, a[:, :2]], [a[:1], a[:1, :2]]]),
        np.block([a[0], 1]),  # a Python int is a strong int64 array in np.block
        np.block([[v], [v]]),
        np.block(v),
        np.insert(a, 1, a[0, 0]),
        np.insert(a, 2, a[:, 0], axis=1),
        np.insert(a, [0, -1, 3], 1, axis=1),
        np.insert(a, [2, 0, 2], a[:, :1], axis=1),  # repeated and unsorted indices
        np.insert(v, slice(None, None, 2), v[:1], axis=0),
        np.insert(a, np.array([True, False, True, False, False, False]), 0, axis=1),
        np.insert(a, [], 7),
        np.insert(a[:1], 0, [[1], [2]], axis=0),
        np.choose(i, [a, a * 2, 1]),
        np.choose(i[:1], (a, ~a if a.dtype == bool else -a, a)),
        np.choose(k, [a, v[:1, :1]], mode="wrap"),
        np.choose(k, [a] * 10, mode="clip"),  # more choices than the where chain: a gather
        np.piecewise(a, [k < 0, k > 1], [lambda z: z * 2, lambda z: z + z, 1]),
        np.piecewise(a, [i == 0], [0]),
        np.piecewise(v, [v != 0], [lambda z: z * 3]),
        np.ix_(k[0], [0, 2]),
        np.ix_(np.array([True, False]), k[1, :2], k[2]),
        np.fromfunction(lambda p, q: p + q * a[0, 0], (2, 3), dtype=a.dtype if a.dtype != bool else int),
        np.fromfunction(lambda p, q: p & q | (a[:2, :2] > 0), (2, 2), dtype=bool, like=a),
        np.fromfunction(lambda p, q: p * 10 + q + a[:2, :3], (2, 3)),
        np.fromfunction(lambda p: p - a[0, :4], (4,), dtype=int, like=a),
        np.from_dlpack(v),
        np.mask_indices(3, np.tril)[1] + k[0, 0],
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "int32"], ["bool", "complex64"]))
def test_assembly(dtype, backend):
    a, k = make(dtype, (4, 6), seed=1), make("int64", (4, 6), seed=2)
    check(run(_assembly, backend, a, k), numpy_of(_assembly, a, k), what=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_assembly_eager_dtypes(dtype):
    """Every dtype through the eager backend (the compiled one: two above, the rest with -m slow)."""
    a, k = make(dtype, (4, 6), seed=3), make("int64", (4, 6), seed=4)
    check(run(_assembly, "eager", a, k), numpy_of(_assembly, a, k), what=dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_choose_checks_indices(backend):
    x = np.arange(6.0)
    f = aot.compile(lambda i, a: np.choose(i, [a, -a]), backend=backend)
    check(f(np.array([0, 1, 1, 0, 1, 0]), x), np.choose(np.array([0, 1, 1, 0, 1, 0]), [x, -x]))
    for bad in ([0, 2, 0, 0, 0, 0], [0, -1, 0, 0, 0, 0]):
        with pytest.raises(ValueError, match="invalid entry in choice array"):
            f(np.array(bad), x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_and_one_element(backend):
    def fn(e, o):
        return (np.block([[e], [e]]), np.insert(e, 0, 5.0), np.insert(e, [0, 0], 1.0, axis=0),
                np.choose(np.zeros(0, int), [e[:, 0], e[:, 1]]), np.piecewise(e, [e > 0], [np.sin]),
                np.ix_([], o),
                np.block([o, o]), np.insert(o, 1, o), np.choose(np.zeros(1, int), [o]), np.i0(o),
                np.piecewise(o, [o > 0], [lambda z: -z]), np.fromfunction(lambda p, q: p + q + o, (0, 2)))

    e, o = np.zeros((0, 3)), np.array([2.5])
    check(run(fn, backend, e, o), numpy_of(fn, e, o))


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors(backend):
    x = np.arange(12.0).reshape(3, 4)
    cases = [
        (TypeError, "is a tuple", lambda a: np.block((a, a))),
        (ValueError, "List depths are mismatched", lambda a: np.block([[a], a])),
        (ValueError, r"List at arrays\[0\] cannot be empty", lambda a: np.block([[], [a]])),
        (UnsupportedError, "`obj` must be known at trace time", lambda a: np.insert(a, a[0].astype(int), 0)),
        (IndexError, "out of bounds for axis 1 with size 4", lambda a: np.insert(a, 5, 0, axis=1)),
        (IndexError, "out of bounds", lambda a: np.insert(a, [0, 9], 0, axis=1)),
        (ValueError, "one dimensional or scalar", lambda a: np.insert(a, [[0]], 0)),
        (ValueError, "shape mismatch", lambda a: np.insert(a, [0, 1], a[:2, 0], axis=0)),
        (TypeError, "according to the rule 'safe'", lambda a: np.choose(a, [a, a])),
        (ValueError, "clipmode must be one of", lambda a: np.choose(a.astype(int), [a], mode="bad")),
        (ValueError, "0-length sequence", lambda a: np.choose(a.astype(int), [])),
        (ValueError, "either 1 or 2 functions", lambda a: np.piecewise(a, [a > 0], [1, 2, 3])),
        (ValueError, "Cross index must be 1 dimensional", lambda a: np.ix_(a)),
        (UnsupportedError, "np.ix_ of a traced boolean", lambda a: np.ix_(a[0] > 1)),
        (UnsupportedError, "`shape` must be known",
         lambda a: np.fromfunction(lambda i: i, (a[0, 0],), like=a)),
    ]
    for exc, match, fn in cases:
        with pytest.raises(exc, match=match):
            run(fn, backend, x)


def test_dynamic():
    def fn(a, k):
        return (np.block([[a, a], [a, a]]), np.choose(k, [a, 2.0, -a], mode="clip"),
                np.piecewise(a, [a < 0, a > 1], [np.cos, lambda z: z * 2]), np.from_dlpack(a),
                np.ix_(k[0], k[1])[1] + 1)

    f = aot.compile(fn, dynamic=True)
    for n in (3, 5, 8):
        a, k = make("float64", (2, n), seed=n), make("int64", (2, n), seed=n + 1)
        check(f(a, k), numpy_of(fn, a, k), what=f"n={n}")
    assert f.cache_info()["compiles"] <= 2


@pytest.mark.parametrize("name", ["packbits", "unpackbits"])
def test_bit_packing_is_refused(name):
    """numpy's uint8 results (np.packbits) and inputs (np.unpackbits): a dtype traced code lacks."""
    with pytest.raises(UnsupportedError, match=f"np.{name} is not supported in traced code: .*uint8"):
        aot.compile(lambda a: getattr(np, name)(a > 0), fullgraph=True)(np.arange(8))


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(a, k, i):
        return _assembly(a, k) + (np.choose(i, [a, -a]),)

    a, k, i = make("float64", (4, 6), seed=5), make("int64", (4, 6), seed=6), make("bool", (4, 6), seed=7)
    i = i.astype(np.int64)
    lib = aot.aot_load(aot.aot_compile(fn, (a, k, i), path=tmp_path / "assembly.so"))
    check(lib(a, k, i), numpy_of(fn, a, k, i))
    with pytest.raises(ValueError, match="np.choose index is out of range"):
        lib(a, k, i + 1)
