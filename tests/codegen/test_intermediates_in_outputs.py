"""An intermediate lives in the output buffer of the elementwise kernel that reads it last
(codegen/entry.py _stored_in_outputs): softmax's stored exp(x - m) allocates nothing, results stay
numpy's, and nothing is shared where the in-place write would be wrong."""
from __future__ import annotations

import re

import numpy as np
import pytest

import aot
import codegen
from codegen.options import CodegenOptions
from codegen.targets import host_target


def _allocations(fn, *args, library: bool = False) -> int:
    """Buffer allocations in the entry of fn's compiled graph (aligned_alloc in a library, the
    blocks module's allocator in JIT code)."""
    module = aot.export(fn, args).ir_module()
    options = CodegenOptions(num_threads=2, library="lib" if library else "")
    text = str(codegen.lower_module(module, host_target(), options))
    return len(re.findall(r'call ptr @"(aligned_alloc|aot_buffer_alloc)"', text))


def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def two_outputs(x):  # the exp is read last by the first output's kernel
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True), np.sin(x)


def through_a_view(x):  # e is read transposed: element i of the output is not element i of e
    e = np.exp(np.sin(x) * 3.0 + 1.0)
    return e.T * np.sum(e, axis=0)[:, None]


def returned_twice(x):  # e is itself an output: it keeps its own buffer
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e, e / np.sum(e, axis=1, keepdims=True)


def cast_last(x):  # the last reader's result has another dtype than e
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return (e / np.sum(e, axis=1, keepdims=True)).astype(np.float64)


def gathered_last(x):  # e's last reader is a gather: it reads other elements than it writes
    e = np.sin(x) * 2.0 + 1.0
    return np.take_along_axis(e, np.argsort(x, axis=1), axis=1)


def _x(shape=(64, 256), dtype=np.float32):
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


def test_softmax_allocates_only_its_row_statistics():
    x = _x()
    # the row max and the row sum; exp(x - m) is written into the output
    assert _allocations(softmax, x) == 2
    # a library's caller may pass an output that aliases an input: nothing is shared there
    assert _allocations(softmax, x, library=True) == 3


CASES = [softmax, two_outputs, through_a_view, returned_twice, cast_last, gathered_last]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("threads", ["1", "3"])
def test_results_equal_numpy(fn, threads, monkeypatch):
    monkeypatch.setenv("AOT_NUM_THREADS", threads)
    x = _x((48, 48), np.float64)
    want = fn(x)
    got = aot.compile(fn, options={"disk_cache": False})(x)
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,),
                    strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-300)


def test_no_sharing_through_a_view_or_into_a_returned_value():
    x = _x((48, 48), np.float64)
    base = _allocations(lambda y: np.exp(np.sin(y) * 3.0 + 1.0) * 2.0, x)
    assert _allocations(through_a_view, x) > base  # e gets a buffer of its own
    assert _allocations(returned_twice, x) == 2  # e is an output; only the row statistics
