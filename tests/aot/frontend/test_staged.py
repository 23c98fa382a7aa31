"""Plain numpy programs staged through StagedArray: lowered to ir (and interpreted) or run eagerly."""
from __future__ import annotations

import numpy as np
import pytest

import ir
from aot.frontend import EagerEmitter, FrontendError, UnsupportedError
from aot.frontend.staged import StagedArray, lower_numpy
from ir import dtypes as irdt
from ir.interp import run_func
from ir.types import TensorType

from ._support import assert_same, make


def mlp_softmax(x, w, b):
    h = np.tanh(x @ w + b)
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def spectral_filter(x):
    spec = np.fft.rfft(x, axis=-1)
    keep = np.arange(spec.shape[-1]) < 3
    return np.fft.irfft(np.where(keep, spec, 0), n=x.shape[-1], axis=-1)


def statistics(x):
    centred = (x - x.mean(axis=0)) / (x.std(axis=0, ddof=1) + 1e-6)
    return np.stack([centred.max(0), centred.min(0), np.var(centred, axis=0)]), x.T[1:, ::2].sum()


def indexing_and_layout(x):
    y = np.moveaxis(x[::-1, None], 1, -1)[..., 0]
    padded = np.pad(y, ((0, 1), (1, 0)))
    return padded[:, 1:] * 2 + np.einsum("ij->j", x) + len(x)


PROGRAMS = [
    (mlp_softmax, [make("float32", (4, 3), 1), make("float32", (3, 5), 2), make("float32", (5,), 3)]),
    (spectral_filter, [make("float64", (2, 16), 4)]),
    (statistics, [make("float32", (6, 3), 5)]),
    (indexing_and_layout, [make("int32", (3, 4), 6)]),
]


@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_lower_numpy_program_to_ir(fn, args):
    want = fn(*args)
    module, func = lower_numpy(fn, [TensorType(irdt.from_numpy(a.dtype), a.shape) for a in args])
    ir.verify(module)
    got = run_func(func, *args)
    wants = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(wants)
    for g, w in zip(got, wants):
        assert_same(g, np.asarray(w), decomposed=True)


@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_eager_staging_matches_numpy(fn, args):
    em = EagerEmitter()
    got = fn(*(StagedArray(a, em) for a in args))
    wants = fn(*args)
    got, wants = (got, wants) if isinstance(wants, tuple) else ((got,), (wants,))
    for g, w in zip(got, wants):
        assert isinstance(g, StagedArray)
        assert_same(g.value, np.asarray(w), decomposed=True)


def test_staged_errors_and_protocol():
    x = StagedArray(make("float64", (3,)), EagerEmitter())
    assert len(x) == 3 and x.shape == (3,) and x.dtype == np.float64 and "StagedArray(f64[3])" == repr(x)
    with pytest.raises(FrontendError, match="np.where instead of `if`"):
        bool(x > 0)
    with pytest.raises(FrontendError, match="np.asarray"):
        np.asarray(x)
    x[0] = 1.0  # eager staging updates the numpy array, as numpy does
    assert x.value[0] == 1.0
    np.testing.assert_array_equal(np.add.reduceat(x, [0, 2]).value, np.add.reduceat(x.value, [0, 2]))
    with pytest.raises(UnsupportedError, match=r"np.unique"):
        np.unique(x)
    with pytest.raises(AttributeError, match="no attribute 'flags'"):
        _ = x.flags
