"""In-place updates in compiled code (aot/frontend/assignment.py, aot/compiler/aliasing.py): x[key] = v,
x op= y, np.put & co, ufunc.at and the mutating methods, against numpy, including the caller's arrays
numpy updates and the views that see an update."""
from __future__ import annotations

import numpy as np
import pytest

import aot

MODES = [{}, {"backend": "eager"}, {"dynamic": True}]


def run(fn, *args, **kw):
    """fn compiled and fn in numpy on copies of args: equal results and equally updated arguments."""
    mine, theirs = [np.array(a, copy=True) for a in args], [np.array(a, copy=True) for a in args]
    want = fn(*theirs)
    got = aot.compile(fn, fullgraph=True, **kw)(*mine)
    for g, w in zip(got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m, t)


def basic_keys(x):
    y = x * 2
    y[0] = 5
    y[1:3] = -1
    y[-1] = y[0] + 1
    y[::-2] = 9
    return y


def masks(x):
    y = x.copy()
    y[y > 2] = 0
    z = np.zeros_like(x)
    z[x > 1] = x[x > 1]  # two masks computed apart: the values in order
    return y, z


def argument_updated(x):
    x[0] += 1
    x[1:] *= 2
    return x.sum()


def views_follow(x):
    y = np.zeros((3, 4))
    row = y[1]
    y[1, 2] = 7
    y[:, 0] = x[:3]
    col = y.T[0]
    row[3] = -3  # through a view into its base
    return row * 1, col * 1, y


def copies_do_not(x):
    y = x.copy()
    z = y.flatten()
    w = np.array(y)
    y[0] = 100
    return z, w, y


def aliases(x):
    a = x.copy()
    b = a
    a += 1
    a -= 0.5
    return b


def integer_arrays(x, i):
    y = x.copy()
    y[i] = 100  # a repeated index: the last write wins
    np.add.at(y, i, 1)  # unbuffered: every repeat adds
    np.maximum.at(y, [1, 1], 50)
    return y


def methods(x):
    y = x.copy()
    y.sort()
    z = x.copy()
    z.fill(3)
    return y, z


def functions(x, idx):
    y = x.copy()
    np.put(y, idx, [10, 20])
    np.copyto(y, 7.0, where=y > 15)
    m = np.eye(3)
    np.fill_diagonal(m, 5)
    np.place(m, m == 0, [-1, -2])
    np.putmask(y, y < 2, -y)
    return y, m


def loop_table(x):
    t = np.zeros(4)
    for i in range(4):  # constant writes fold into one constant
        t[i] = i * i
    return x[:4] * t


def int_casts(x):
    y = x.astype(np.int64)
    y[0] = 7.9  # numpy truncates
    y += 2
    return y


@pytest.mark.parametrize("kw", MODES, ids=["llvm", "eager", "dynamic"])
@pytest.mark.parametrize("fn", [basic_keys, masks, argument_updated, views_follow, copies_do_not, aliases,
                                methods, loop_table, int_casts])
def test_updates_match_numpy(fn, kw):
    run(fn, np.arange(6.0) - 1.5, **kw)


@pytest.mark.parametrize("kw", MODES, ids=["llvm", "eager", "dynamic"])
def test_index_updates(kw):
    run(integer_arrays, np.arange(6.0), np.array([0, 2, 2, -1]), **kw)
    run(functions, np.arange(6.0), np.array([0, 5]), **kw)


def test_strided_reshape_copies_as_numpy():
    def f(x):
        y = x.T.reshape(-1)  # numpy must copy here
        v = x.reshape(-1)  # and here it returns a view
        x[0, 0] = 99
        return y, v
    run(f, np.arange(6.0).reshape(2, 3))


def test_errors():
    def into_int(x):
        y = np.zeros(3, dtype=np.int64)
        y += x  # float64 into int64: numpy's same_kind error
        return y
    with pytest.raises(TypeError, match="same_kind"):
        aot.compile(into_int, fullgraph=True)(np.ones(3))

    def read_only(x):
        np.broadcast_to(x, (2, 3))[0, 0] = 1
        return x
    with pytest.raises(ValueError, match="read-only"):
        aot.compile(read_only, fullgraph=True)(np.ones(3))

    def out_of_range(x, i):
        y = x.copy()
        y[i] = 0
        return y
    with pytest.raises(IndexError):
        aot.compile(out_of_range)(np.ones(3), np.array([3]))

    def counts(x):
        y = np.zeros(4)
        y[x > 0] = np.ones(2)  # numpy needs as many values as True entries
        return y
    with pytest.raises(ValueError, match="boolean array indexing assignment"):
        aot.compile(counts)(np.ones(4))


def test_overlapping_arguments_run_as_numpy():
    def f(a, b):
        a[0] = 5
        return b.sum()
    x = np.zeros(3)
    g = aot.compile(f)
    assert g(np.zeros(3), np.zeros(3)) == 0
    assert g(x, x) == 5 and x[0] == 5  # one array passed twice: numpy's answer


def test_library(tmp_path):
    def fill(x):
        out = np.zeros(x.shape[0] + 2)
        out[1:-1] = x
        out[0], out[-1] = x[-1], x[0]
        out[out > 3] *= 2
        return out
    x = np.arange(5.0)
    lib = aot.aot_load(aot.aot_compile(fill, (x,), path=tmp_path / "fill.so"))
    np.testing.assert_array_equal(lib(x), fill(x.copy()))

    def updates_argument(x):
        x[0] = 1
        return x
    with pytest.raises(aot.export.ExportError if hasattr(aot, "export") and hasattr(aot.export, "ExportError")
                       else Exception, match="in place"):
        aot.aot_compile(updates_argument, (x,), path=tmp_path / "bad.so")


TABLE = np.zeros(4)


def test_captured_arrays_are_not_updated():
    def count(i):
        np.add.at(TABLE, i, 1.0)  # numpy's own TABLE.sum() would not see a traced update
        return TABLE.sum()
    with pytest.raises(aot.compiler.capture.GraphBreak, match="captured from outside"):
        aot.compile(count, fullgraph=True)(np.array([0, 1, 1]))
    with pytest.warns(RuntimeWarning, match="eagerly"):
        assert aot.compile(count)(np.array([0, 1, 1])) == 3 and TABLE[1] == 2  # run by numpy instead


@pytest.mark.parametrize("kw", MODES, ids=["llvm", "eager", "dynamic"])
def test_unary_ufunc_at(kw):
    def f(a):
        b = a.copy()
        np.negative.at(b, [0, 1, 1])  # twice on index 1: back to itself
        np.sqrt.at(b, [2, 3])
        np.square.at(b, [4, 4])  # squared twice
        return b
    run(f, np.arange(6.0) + 1, **kw)
    with pytest.raises(TypeError, match="same_kind"):
        aot.compile(lambda a: np.sqrt.at(a.astype(np.int64), [0]), fullgraph=True)(np.ones(3))
