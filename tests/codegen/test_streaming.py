"""Non-temporal stores of elementwise kernels (codegen/kernels/streaming.py): taken only where the
arrays are large, never changing a result: rows starting anywhere in a cache line, of any length,
any thread split, several outputs, dynamic shapes."""

from __future__ import annotations

import numpy as np
import pytest

import aot
import codegen
import ir
from codegen.entry import CodegenOptions
from codegen.kernels import streaming
from codegen.targets.cpu import host_target
from ir import dtypes as D
from ir.types import TensorType

from .helpers import add_elementwise, jit

pytestmark = pytest.mark.skipif(not host_target().streaming_stores, reason="no streaming stores on this host")


def _ir(shape, op="add", streaming=True) -> str:
    m = ir.Module("s")
    add_elementwise(m, "f", op, [TensorType(D.float64, shape)] * (1 if op in ("sin", "neg") else 2))
    opts = CodegenOptions(num_threads=2, parallel_threshold=65536, streaming_stores=streaming)
    return str(codegen.lower_module(m, None, opts))


def test_only_large_memory_bound_kernels_stream():
    big = streaming.STREAM_MIN_BYTES // 24 + 1  # two inputs and an output of float64
    assert "!nontemporal" not in _ir((1000,))
    assert "!nontemporal" not in _ir((big - 2,))
    text = _ir((big,))
    assert "!nontemporal" in text and "llvm.x86.sse.sfence" in text
    assert "!nontemporal" not in _ir((big,), streaming=False)  # options["streaming_stores"] = False


def test_compute_bound_bodies_keep_plain_stores():
    big = streaming.STREAM_MIN_BYTES // 16 + 1
    assert "!nontemporal" in _ir((big,), op="neg")
    assert "!nontemporal" not in _ir((big,), op="sin")


def test_streaming_option_is_a_bool():
    with pytest.raises(ValueError, match="streaming_stores"):
        aot.compile(lambda x: x + 1, options={"streaming_stores": "yes"})(np.ones(3))


@pytest.fixture
def always_stream(monkeypatch):
    monkeypatch.setattr(streaming, "STREAM_MIN_BYTES", 0)


@pytest.mark.parametrize("threads", [1, 2])
def test_streamed_rows_agree_with_numpy(always_stream, threads):
    """Outputs from numpy's allocator (16 bytes into a line below 1 MB): every row starts with
    masked vectors up to the line, and ranges split anywhere across threads."""
    shapes = [(1,), (7,), (1000,), (4097,), (37, 101), (5, 3, 64)]
    m = ir.Module("rows")
    for i, s in enumerate(shapes):
        add_elementwise(m, f"f{i}", "mul", [TensorType(D.float64, s), TensorType(D.float64, s[-1:])])
        add_elementwise(m, f"g{i}", "add", [TensorType(D.float32, s), TensorType(D.float32, s)])
        add_elementwise(m, f"c{i}", "mul", [TensorType(D.complex128, s), TensorType(D.complex128, s)])
    text = str(codegen.lower_module(m, None, CodegenOptions(num_threads=threads, parallel_threshold=16)))
    assert "!nontemporal" in text
    fns = jit(m, num_threads=threads, parallel_threshold=16)
    rng = np.random.default_rng(7)
    for i, s in enumerate(shapes):
        x, y = rng.normal(size=s), rng.normal(size=s[-1:])
        np.testing.assert_array_equal(fns[f"f{i}"](x, y), x * y)
        a, b = rng.normal(size=s).astype(np.float32), rng.normal(size=s).astype(np.float32)
        np.testing.assert_array_equal(fns[f"g{i}"](a, b), a + b)
        p = rng.normal(size=s) + 1j * rng.normal(size=s)
        q = rng.normal(size=s) + 1j * rng.normal(size=s)
        np.testing.assert_array_equal(fns[f"c{i}"](p, q), p * q)


def test_two_outputs_of_dynamic_shape(always_stream):
    """Two outputs of different dtypes (their lines start at different elements) in rows of odd
    lengths (each row starts elsewhere in a line), with dynamic shapes."""

    def two(x, y):
        return x * y + 1.5, (x - y).astype(np.float32)

    f = aot.compile(two, dynamic=True)
    rng = np.random.default_rng(3)
    for shape in ((5,), (333,), (2051,), (3, 333), (17, 129)):
        x, y = rng.normal(size=shape), rng.normal(size=shape)
        got = f(x, y)
        np.testing.assert_array_equal(got[0], x * y + 1.5)
        np.testing.assert_array_equal(got[1], (x - y).astype(np.float32))


def test_row_groups_keep_plain_stores(always_stream):
    """A row group's kernels read back what the previous one wrote to the block: from cache."""

    def softmax(x):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)

    x = np.random.default_rng(1).normal(size=(64, 256))
    for fn, streams in ((softmax, False), (lambda x: x * 2 + 1, True)):
        text = str(codegen.lower_module(aot.export(fn, (x,)).ir_module(), host_target(), CodegenOptions(num_threads=2)))
        assert ("!nontemporal" in text) is streams
