"""Results do not depend on the thread count, bit for bit: every reduction kind (split into the
host's fixed chunks, not one per thread), the row groups, and every FFT kind; and a float sum's
error against the exact sum is no worse than numpy's pairwise sum (codegen/kernels/reduce.py's
blocks added pairwise)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import aot
import aot.ops  # the op rows first: ir.reductions is imported through them
from ir.reductions import REDUCTIONS

THREADS = (1, 2, 3, 5)
RNG = np.random.default_rng(7)


def _runs(fn, *args):
    """fn compiled for each thread count, called on args: {threads: result}."""
    return {t: aot.compile(fn, options={"num_threads": t, "disk_cache": False})(*args) for t in THREADS}


def _same_for_all(runs: dict, ref, rtol: float) -> None:
    first = runs[THREADS[0]]
    for t, got in runs.items():
        np.testing.assert_array_equal(got, first, err_msg=f"{t} threads")
    assert np.asarray(first).dtype == np.asarray(ref).dtype
    np.testing.assert_allclose(first, ref, rtol=rtol, atol=0 if rtol == 0 else rtol)


# kind -> (numpy function, the dtypes it is checked in)
KINDS = {
    "sum": (np.sum, (np.float64, np.float32, np.int64, np.complex128)),
    "prod": (np.prod, (np.float64, np.complex128)),
    "max": (np.max, (np.float64, np.float32, np.int32)),
    "min": (np.min, (np.float64, np.int64)),
    "argmax": (np.argmax, (np.float64, np.float32, np.int32)),
    "argmin": (np.argmin, (np.float64, np.int64)),
    "any": (np.any, (np.bool_,)),
    "all": (np.all, (np.bool_,)),
}


def test_every_reduction_kind_is_covered():
    assert set(KINDS) == set(REDUCTIONS)


def _data(dt, shape):
    if dt == np.bool_:
        return RNG.random(shape) < 0.9995
    if np.issubdtype(dt, np.complexfloating):
        return (RNG.random(shape) + 1j * RNG.random(shape) + 0.5).astype(dt)
    if np.issubdtype(dt, np.integer):
        return RNG.integers(-50, 50, shape).astype(dt)
    return (RNG.random(shape) + 0.5).astype(dt)


def _tolerance(kind, dt) -> float:
    if kind in ("max", "min", "argmax", "argmin", "any", "all") or np.issubdtype(dt, np.integer):
        return 0.0
    return 1e-4 if dt in (np.float32, np.complex64) else 1e-11


CASES = [(k, dt, axis) for k, (_, dts) in KINDS.items() for dt in dts for axis in (None, 0, 1)]


@pytest.mark.parametrize("kind, dt, axis", CASES, ids=[f"{k}-{np.dtype(d).name}-{a}" for k, d, a in CASES])
def test_reductions_same_for_every_thread_count(kind, dt, axis):
    fn = KINDS[kind][0]
    n = 1 << 10 if kind == "prod" else 1 << 19  # large enough to split into chunks (and thread)
    x = _data(dt, (3, n // 3 + 1) if axis is not None else (n + 13,))
    if kind == "prod":
        x = (1 + (x - 1) * 1e-3).astype(dt)  # no overflow
    f = (lambda v: fn(v)) if axis is None else (lambda v: fn(v, axis=axis))
    _same_for_all(_runs(f, x), f(x), _tolerance(kind, dt))


@pytest.mark.parametrize("fn", [np.argmax, np.argmin])
def test_argmax_along_a_strided_axis_first_occurrence_and_nan(fn):
    x = RNG.random((300, 37))
    x[3, 5] = x[7, 5] = np.nan  # the first nan wins
    x[:, 9] = 1.0  # all tied: the first row
    x[10:, 11] = -np.inf
    x[:, 12] = x[::-1, 12]
    def f(v):
        return fn(v, axis=0)

    _same_for_all(_runs(f, x), f(x), 0.0)


def _full_arg_cases():
    """Inputs of a full argmax/argmin that split into chunks (codegen/split_arg.py), with their
    special values in chunks after the first."""
    x = RNG.standard_normal(1_000_003)
    nans = x.copy()
    nans[700_000] = nans[900_000] = np.nan  # the first nan, in a later chunk
    ties = np.zeros((129, 5000))  # 129 rows: trailing chunks are empty
    ties[50, 3] = ties[100, 7] = 1.0  # equal best values in two chunks: the first
    ties[60, 1] = ties[110, 2] = -1.0
    return {"normal": x, "nan": nans, "ties": ties, "all -inf": np.full((129, 5000), -np.inf),
            "strided": RNG.standard_normal((4000, 300))[:, ::2],
            "int32": RNG.integers(-5, 5, 2_000_000).astype(np.int32)}


@pytest.mark.parametrize("case", sorted(_full_arg_cases()))
@pytest.mark.parametrize("fn", [np.argmax, np.argmin])
def test_full_argmax_split_into_chunks_is_numpys_first_occurrence(fn, case):
    x = _full_arg_cases()[case]
    def f(v):
        return fn(v)

    _same_for_all(_runs(f, x), f(x), 0.0)
    def fused(v):
        return fn(v * 2.0 - 1.0)  # the combine evaluates the body at each chunk's index

    _same_for_all(_runs(fused, x), fused(x), 0.0)


def test_full_argmax_runs_in_chunks():
    import codegen
    from codegen.options import CodegenOptions
    from codegen.targets import host_target

    module = aot.export(lambda v: np.argmax(v), (np.zeros(1 << 20),)).ir_module()
    text = str(codegen.lower_module(module, host_target(), CodegenOptions(num_threads=2)))
    assert "argcomb" in text and "redpart" in text


def test_means_and_variances_same_for_every_thread_count():
    x = _data(np.float64, (4, 200_003))
    def f(v):
        return v.mean(), v.var(axis=1), v.std(axis=0)

    runs = _runs(f, x)
    for k, ref in enumerate(f(x)):
        _same_for_all({t: r[k] for t, r in runs.items()}, ref, 1e-11)


FFTS = {
    "fft": lambda x: np.fft.fft(x, axis=1),
    "ifft": lambda x: np.fft.ifft(x, axis=0, norm="ortho"),
    "rfft": lambda x: np.fft.rfft(x.real, axis=1),
    "irfft": lambda x: np.fft.irfft(x, axis=1),
    "fft2": lambda x: np.fft.fft2(x),
    "fftn": lambda x: np.fft.fftn(x, axes=(0, 1)),
    "hfft": lambda x: np.fft.hfft(x, axis=1),
}


@pytest.mark.parametrize("name", sorted(FFTS))
def test_ffts_same_for_every_thread_count(name):
    x = _data(np.complex128, (96, 1000))
    _same_for_all(_runs(FFTS[name], x), FFTS[name](x), 1e-9)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("dist", ["uniform", "normal", "lognormal"])
def test_sum_accuracy_no_worse_than_numpy_pairwise(dt, dist):
    """The RMS error against the exact sum (math.fsum) over 8 arrays of 1e6 values is within 1.5x
    of numpy's pairwise sum (one array's error is too noisy to compare: 0.3x-4x either way)."""
    f = aot.compile(lambda v: np.sum(v), options={"disk_cache": False})
    ours, numpy, floor = [], [], 0.0
    for seed in range(8):
        rng = np.random.default_rng(seed)  # the same data whatever ran before
        make = {"uniform": rng.random, "normal": rng.standard_normal, "lognormal": lambda k, rng=rng: rng.lognormal(0, 3, k)}
        x = make[dist](1_000_000).astype(dt)
        exact = math.fsum(x.astype(np.float64))
        ours.append(float(f(x)) - exact)
        numpy.append(float(np.sum(x)) - exact)
        floor = max(floor, np.spacing(np.asarray(abs(exact), dtype=dt)).item())
    rms = [float(np.sqrt(np.mean(np.square(e)))) for e in (ours, numpy)]
    assert rms[0] <= 1.5 * rms[1] + 4 * floor, rms
