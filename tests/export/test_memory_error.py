"""A library whose intermediate cannot be allocated raises MemoryError, as numpy does (still a
LibraryError carrying AOT_STATUS_OUT_OF_MEMORY, for callers that catch those)."""

from __future__ import annotations

import numpy as np
import pytest

import aot
from runtime.abi import STATUS_CODE
from runtime.shared_lib import LibraryError


def corner(x, y):
    return (x[:, None] * y[None, :])[:1, :1].sum()  # the outer product is materialised, then sliced


def test_huge_intermediate_raises_memory_error(tmp_path, libs):  # `libs`: skips without cc
    N, M = aot.Dim("N", max=1 << 40), aot.Dim("M", max=1 << 40)
    lib = aot.aot_load(aot.aot_compile(corner, (np.ones(8), np.ones(8)), dynamic_shapes=({0: N}, {0: M}),
                                       path=tmp_path / "corner.so"))
    assert lib(np.arange(3.0), np.arange(4.0) + 2) == 0.0
    big = np.broadcast_to(np.ones(1), (1 << 26,))  # 2^52 doubles of product: 32 PiB, no address space has it
    with pytest.raises(MemoryError):
        corner(big, big)  # numpy, the reference
    with pytest.raises(MemoryError, match="corner: out of memory allocating an intermediate buffer") as info:
        lib(big, big)
    assert isinstance(info.value, LibraryError) and info.value.code == STATUS_CODE["OUT_OF_MEMORY"]
    assert lib(np.arange(3.0) + 1, np.arange(4.0) + 2) == 2.0
