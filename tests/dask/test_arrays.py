"""aot.compile'd functions on dask.array arguments (aot/dask) against numpy on the same data: fused
elementwise regions, every reduction with every axis/keepdims, uneven and empty chunks, FFT along a
single-chunk axis, numpy/dask mixes, dtypes; the clear errors; synchronous and threaded schedulers."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

CHUNKS = [(10, 7), (37, 23), ((5, 0, 32), (9, 14))]  # regular, one chunk, uneven with an empty one
REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin"]
AXES = [None, 0, 1, (0, 1)]


def _data(dtype, shape=(37, 23), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _tol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def _check(fn, arrays, chunks, scheduler="synchronous"):
    args = [da.from_array(a, chunks=c) if c is not None else a for a, c in zip(arrays, chunks)]
    lazy = aot.compile(fn)(*args)
    lazy = lazy if isinstance(lazy, tuple) else (lazy,)
    assert all(isinstance(r, da.Array) for r in lazy)
    got = dask.compute(*lazy, scheduler=scheduler)
    want = fn(*arrays)
    for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=_tol(w.dtype), atol=_tol(w.dtype))


def _reduction_cases(kinds):
    for red in kinds:
        for axis in AXES:
            for keep in (False, True):
                if red.startswith("arg") and (isinstance(axis, tuple) or (axis is None and keep)):
                    continue
                yield red, axis, keep


@pytest.mark.parametrize("chunks", CHUNKS, ids=["regular", "one", "uneven-empty"])
@pytest.mark.parametrize(("red", "axis", "keep"), list(_reduction_cases(REDUCTIONS)))
def test_reductions_float64(red, axis, keep, chunks):
    def fn(a):
        return getattr(np, red)(np.cos(a) * 0.5 + a, axis=axis, keepdims=keep)

    _check(fn, [_data(np.float64)], [chunks])


OTHER_DTYPES = [(np.float32, case) for case in _reduction_cases(["sum", "mean", "std", "max", "argmin"])] + \
    [(np.complex128, case) for case in _reduction_cases(["sum", "prod", "mean", "var"])]


@pytest.mark.parametrize(("dtype", "case"), OTHER_DTYPES)
def test_reductions_other_dtypes(dtype, case):
    red, axis, keep = case

    def fn(a):
        return getattr(np, red)(a * a + 1, axis=axis, keepdims=keep)

    _check(fn, [_data(dtype)], [CHUNKS[2]])


def test_integer_and_bool_reductions():
    x = (_data(np.float64) * 100).astype(np.int32)
    _check(lambda a: ((a * 3).sum(axis=0), (a > 10).any(axis=1), (a > -1000).all(), a.max(axis=1)),
           [x], [(7, 5)])


def test_elementwise_chain_is_one_task_per_chunk():
    x, y = _data(np.float64, seed=1), _data(np.float64, seed=2)

    def fn(a, b):
        return np.sin(a) * np.exp(-b) + a * b / (1 + b * b)

    _check(fn, [x, y], [(10, 7), (10, 7)])
    out = aot.compile(fn)(da.from_array(x, chunks=(10, 7)), da.from_array(y, chunks=(10, 7)))
    aot_layers = [k for k in out.dask.layers if k.startswith("aot-")]
    assert len(aot_layers) == 1  # the five ops fused: one blockwise layer
    assert out.npartitions == 4 * 4


def test_numpy_and_dask_arguments_broadcast_as_dask_does():
    x, v = _data(np.float64, (40, 16), 3), _data(np.float64, (16,), 4)
    _check(lambda a, b: (a * b + 1, (a - b).sum(axis=0)), [x, v], [(7, 16), None])
    _check(lambda a, b: a * b - b, [x, v], [(7, 5), (5,)])  # a dask row broadcast over dask rows
    _check(lambda a, b: a[:, :1] * b, [x, v], [(7, 5), (3,)])  # a size-1 dim against chunks


def test_fft_along_a_single_chunk_axis():
    x = _data(np.float64, (40, 16), 5)
    _check(lambda a: (np.fft.fft(a, axis=1), np.fft.rfft(a * 2, axis=-1)), [x], [(7, 16)])
    _check(lambda a: np.fft.irfft(np.fft.rfft(a, axis=0), axis=0), [x], [(40, 5)])


def test_fft_along_a_chunked_axis_names_the_axis_and_the_rechunk():
    x = da.from_array(_data(np.float64, (40, 16)), chunks=(7, 8))
    with pytest.raises(ValueError, match=r"rfft along axis 1 needs that axis in one chunk.*"
                                         r"rechunk\(\{1: -1\}\)"):
        aot.compile(lambda a: np.fft.rfft(a, axis=1))(x)


def test_layout_ops_are_dasks_own():
    x = _data(np.float64, (12, 10), 6)
    _check(lambda a: ((a.T * 2).sum(axis=1), np.sin(a[::2, 1:]), np.flip(a, 0) + 1, a[:, None, :] * 3),
           [x], [(5, 4)])
    _check(lambda a: (a * 2).reshape(120), [x], [(6, 10)])
    _check(lambda a: (np.concatenate([a, a * 2], axis=0), np.stack([a, a + 1], axis=1)), [x], [(5, 4)])
    with pytest.raises(UnsupportedError, match=r"reshape of a \(12, 10\) array in chunks.*dask.array cannot"):
        aot.compile(lambda a: (a * 2).reshape(6, 20))(da.from_array(x, chunks=(6, 10)))


def test_where_clip_and_scalars():
    x = _data(np.float64, (30, 8), 7)
    _check(lambda a: (np.where(a > 0.5, np.clip(a, 0.6, 0.9), -a), a.sum() / a.size), [x], [(7, 3)])


def test_unmapped_ops_are_refused_by_name():
    x = da.from_array(_data(np.float64, (20, 6)), chunks=(5, 6))
    with pytest.raises(UnsupportedError, match="cumsum|scan.*not mapped onto dask.array"):
        aot.compile(lambda a: np.cumsum(a * 2, axis=0))(x)
    with pytest.raises(UnsupportedError, match="matmul.*not mapped onto dask.array"):
        aot.compile(lambda a: (a * 2) @ np.ones((6, 3)))(x)


def test_max_of_an_empty_axis_is_refused_like_numpy():
    x = da.from_array(np.zeros((0, 4)), chunks=(1, 2))
    with pytest.raises(ValueError, match="zero-size array"):
        aot.compile(lambda a: a.max(axis=0))(x)


def test_threaded_scheduler_and_repeated_calls_reuse_the_plan():
    x = _data(np.float64, (50, 12), 8)
    f = aot.compile(lambda a: (np.exp(-a * a).sum(axis=0), a.std()))
    for _ in range(2):
        got = dask.compute(*f(da.from_array(x, chunks=(9, 12))), scheduler="threads")
        np.testing.assert_allclose(got[0], np.exp(-x * x).sum(axis=0), rtol=1e-12)
        np.testing.assert_allclose(got[1], x.std(), rtol=1e-12)
    (plan,) = f._dask_plans.values()
    assert all(fn.cache_info()["compiles"] <= 2 for fn, _ in plan.compiled.values())
