"""An intermediate that cannot be allocated raises MemoryError from compiled code, as numpy does
(still a NativeError, for callers that catch those)."""

from __future__ import annotations

import numpy as np
import pytest

import aot
import runtime


def corner(x, y):
    return (x[:, None] * y[None, :])[:1, :1].sum()  # the outer product is materialised, then sliced


def test_huge_intermediate_raises_memory_error():
    big = np.broadcast_to(np.ones(1), (1 << 26,))  # 2^52 doubles of product: 32 PiB, no address space has it
    with pytest.raises(MemoryError):
        corner(big, big)  # numpy, the reference
    f = aot.compile(corner, dynamic=True)
    assert f(np.arange(3.0), np.arange(4.0) + 2) == 0.0
    with pytest.raises(MemoryError, match="out of memory allocating an intermediate buffer") as info:
        f(big, big)
    assert isinstance(info.value, runtime.NativeError)
    assert f(np.arange(3.0) + 1, np.arange(4.0) + 2) == 2.0  # the failure freed everything and is over
