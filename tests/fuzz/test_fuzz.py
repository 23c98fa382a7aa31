"""The differential fuzzer in the suite: seeded programs compiled and compared with numpy.

The default run checks 500 programs (seeds 0..499, so a failure is reproduced by its seed with
`tools/fuzz.py --start SEED --programs 1`); the slow-marked run checks 20,000, one batch in 25
through a shared library. AOT_FUZZ_START moves the seeds to explore new programs.
"""
from __future__ import annotations

import os

import pytest

from .runner import run

START = int(os.environ.get("AOT_FUZZ_START", "0"))
CHUNKS, PER_CHUNK = 10, 50


def _check(seeds, **kw) -> None:
    report = run(seeds, **kw)
    assert not report.failures, f"{len(report.failures)} of {report.programs} programs differ from numpy:\n" + \
        "\n".join(report.failures[:20])


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_programs_match_numpy(chunk):
    lo = START + chunk * PER_CHUNK
    _check(range(lo, lo + PER_CHUNK))


def test_programs_through_a_library_match_numpy(tmp_path):
    _check(range(START + 100_000, START + 100_020), library_every=1, tmp=str(tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(40))
def test_many_programs_match_numpy(chunk, tmp_path):
    lo = START + 1_000_000 + chunk * 500
    _check(range(lo, lo + 500), library_every=25, tmp=str(tmp_path))
