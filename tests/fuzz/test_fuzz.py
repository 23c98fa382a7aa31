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


# --- the generator's own rules -------------------------------------------------------------------
def test_reference_keeps_zero_d_values_as_arrays():
    """numpy's scalars compare complex values without the ufuncs' nan checks; aot computes 0-d
    values as arrays, so the reference must too (`where(prod(x) > 0, 1, 0)` on [inf+1j])."""
    import numpy as np

    from .programs import Program

    x, one, zero = np.array([complex(np.inf, 1.0)]), np.array(1), np.array(0)
    prog = Program(0, (x, one, zero), (("reduce", "prod", 0, None, False), ("where", "where", 3, 1, 2)), (4,))
    with np.errstate(invalid="ignore"):
        as_scalar, = prog(x, one, zero)
        as_array, = prog(x, one, zero, arrays=True)
    assert as_scalar == 1 and as_array == 0  # numpy disagrees with itself on (inf+nanj) > 0
    assert isinstance(as_array, np.ndarray) and as_array.ndim == 0


def test_ill_conditioned_steps_are_not_programs():
    import numpy as np

    from .programs import _ill_conditioned

    x = np.array([1.6665326 + 1.5298754j, 1.1612115 - 2.9118955j, -1.451222 + 1.1285633j], np.complex64)
    tied = x * x[::-1]  # first and last tie exactly in numpy's strided loop, and differ by FMA rounding
    pool = [x, tied]
    assert _ill_conditioned(("reduce", "argmax", 1, None, False), pool, 1, np.asarray(0))
    assert not _ill_conditioned(("reduce", "argmax", 0, None, False), pool, 1, np.asarray(0))  # an input: exact
    assert not _ill_conditioned(("reduce", "argmax", 1, None, False), [x, x], 1, np.asarray(0))  # no tie
    base = np.array([1.63 - 0.8j])
    huge = np.array([1.6e300 - 8e299j])
    out = np.asarray(base ** 2)
    assert _ill_conditioned(("binary", "power", 0, 1), [base, huge], 1, out)  # the angle is noise
    assert not _ill_conditioned(("binary", "power", 0, 0), [base], 1, out)
    assert not _ill_conditioned(("scalar", "power", 0, float("inf"), True), [base], 1, out)  # C99's inf rules
