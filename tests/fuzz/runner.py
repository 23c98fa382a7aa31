"""Run generated programs compiled (or through a shared library) and compare them with numpy.

Programs that return values are compiled several to one function (the compile dominates the cost);
a batch that fails is rerun one program at a time so that each failure names its seed. A program
that expects an error is compiled alone and must raise the same class of error as numpy.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

import aot

from .programs import Program, generate, mismatch, reference, rtol_of


@dataclass
class Report:
    programs: int = 0
    compiles: int = 0
    failures: list[str] = field(default_factory=list)
    max_compile_s: float = 0.0
    slowest: str = ""

    def add(self, other: Report) -> None:
        self.programs += other.programs
        self.compiles += other.compiles
        self.failures += other.failures
        if other.max_compile_s > self.max_compile_s:
            self.max_compile_s, self.slowest = other.max_compile_s, other.slowest


def _batch_fn(progs: list[Program], copy: bool = False, zero_d_arrays: bool = False):
    """One function running `progs`; `copy`: outputs are copies (a library returns only arrays it
    computes, never an input itself); `zero_d_arrays`: numpy's reference, 0-d values kept as arrays
    (Program.__call__)."""
    bounds, lo = [], 0
    for p in progs:
        bounds.append((lo, lo + len(p.inputs)))
        lo += len(p.inputs)

    def batch(*arrays):  # a flat tuple of outputs: what a library returns too
        outs = tuple(v for p, (a, b) in zip(progs, bounds) for v in p(*arrays[a:b], arrays=zero_d_arrays))
        return tuple(np.copy(v) for v in outs) if copy else outs

    return batch


def _compile(fn, library: bool, inputs: tuple, tmp: str | None):
    if not library:
        return aot.compile(fn, fullgraph=True)
    path = f"{tmp}/fuzz_{time.monotonic_ns()}.so"
    aot.aot_compile(fn, inputs, path=path)
    return aot.aot_load(path)


def check(progs: list[Program], library: bool = False, tmp: str | None = None) -> Report:
    """Compile `progs` as one function, call it once, compare every output with numpy."""
    report = Report(programs=len(progs), compiles=1)
    fn = _batch_fn(progs, copy=library)
    inputs = tuple(a for p in progs for a in p.inputs)
    expect_error = progs[0].expect_error if len(progs) == 1 else None
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = _compile(fn, library, inputs, tmp)(*inputs)
        fallbacks = [str(w.message) for w in caught if "aot" in w.filename or "aot" in str(w.message)]
        if fallbacks:  # an eager fallback (a compile over its time budget) hides a finding
            report.failures.append(f"{progs!r}: warned {fallbacks[0][:300]}")
    except Exception as e:  # noqa: BLE001  (any error is a finding, reported with the program)
        if expect_error is None or not isinstance(e, expect_error):
            report.failures.append(f"{progs!r}: raised {type(e).__name__}: {str(e)[:300]}")
        return report
    finally:
        report.max_compile_s, report.slowest = time.perf_counter() - start, repr(progs)
    if expect_error is not None:
        report.failures.append(f"{progs!r}: returned where numpy raises {expect_error.__name__}")
        return report
    want = reference(_batch_fn(progs, zero_d_arrays=True), *inputs)
    got = got if isinstance(got, tuple) else (got,)
    pos = 0
    for p in progs:
        w = want[pos:pos + len(p.outputs)]
        for k, (gi, wi) in enumerate(zip(got[pos:pos + len(p.outputs)], w)):
            with np.errstate(all="ignore"):
                why = mismatch(gi, wi, rtol_of([np.asarray(v) for v in (*p.inputs, *w)]), p.scales[k])
            if why:
                report.failures.append(f"{p!r}: output {k}: {why}")
        pos += len(p.outputs)
    if len(got) != len(want):
        report.failures.append(f"{progs!r}: {len(got)} outputs, numpy's {len(want)}")
    return report


def run(seeds, per_compile: int = 5, library_every: int = 0, tmp: str | None = None) -> Report:
    """Check the programs of `seeds`; every `library_every`-th batch goes through aot_load."""
    report = Report()
    batch: list[Program] = []
    n_batches = 0

    def flush():
        nonlocal batch, n_batches
        if not batch:
            return
        n_batches += 1
        library = bool(library_every) and n_batches % library_every == 0
        r = check(batch, library, tmp)
        if r.failures and len(batch) > 1:  # name the failing programs
            r = Report()
            for p in batch:
                r.add(check([p], library, tmp))
        report.add(r)
        batch = []

    for seed in seeds:
        p = generate(seed)
        if p.expect_error is not None:
            report.add(check([p], False, tmp))
            continue
        batch.append(p)
        if len(batch) == per_compile:
            flush()
    flush()
    return report
