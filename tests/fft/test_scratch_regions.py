"""Threads' scratch regions are a page apart (codegen/fft/names.py thread_region): a prefetcher
running past the end of one thread's buffers must not pull lines another core is writing."""
from __future__ import annotations

import pytest

from codegen.fft.names import (
    FLAG_BLOCK,
    FLAG_LANES,
    REGION_GAP,
    four_step_scratch,
    halves_scratch,
    scratch_values,
    thread_region,
    whole_lines,
)

PAGE = 4096


@pytest.mark.parametrize("values", [1, 16, 4096, 4097, 16384 + 3])
@pytest.mark.parametrize("itemsize", [4, 8])
def test_regions_leave_a_page_between_threads(values, itemsize):
    stride = thread_region(values)
    assert stride % 16 == 0  # whole 64-byte lines of complex128, so each region starts on a line
    assert (stride - values) * itemsize >= PAGE
    assert stride == whole_lines(values) + REGION_GAP


@pytest.mark.parametrize("m1, m2, square", [(64, 64, True), (64, 1024, False), (256, 512, False)])
def test_split_transforms_space_their_regions(m1, m2, square):
    """The four-step and two-halves jobs (eager and compiled graphs) size their threads' regions
    with thread_region too."""
    _, region = four_step_scratch(m1, m2, square, 8)
    assert region == thread_region(max(scratch_values(m1, 8, 1, FLAG_LANES | FLAG_BLOCK),
                                       scratch_values(m2, 8, m2, 0)))
    assert halves_scratch(m2, 8) == thread_region(scratch_values(m2, 8, 1, 0))
