"""Shared helpers of the benchmark scripts: timing by medians, optional contestants, ratio tables,
and the `--json PATH` record of a run (`Results`, read back by `read_results`; tools/plot_bench.py
charts it).

Every figure is measured in the running process; ratios are `contestant time / aot time`
(> 1 means aot is faster) unless a table says otherwise.

The JSON record of a run:
    {"benchmark": name, "date": ISO date-time,
     "machine": {"cpu": model name, "cores": n, "system": platform},
     "versions": {"python", "numpy", "aot", and each contestant library that was imported},
     "threads": {contestant: thread count or a note}, "notes": {free-form},
     "rows": [{"case": str, "table": title, "baseline": "aot",
               "times": {contestant: seconds or null}, "ratios": {contestant: time / baseline time},
               "notes": {free-form}}]}
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import importlib
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable

SETTLE = 0.3  # seconds: OpenMP workers (torch's, numba's) spin this long after their last job


def median_time(fn: Callable[[], object], *, min_time: float = 0.2, min_runs: int = 5,
                max_runs: int = 10_000, settle: float = SETTLE) -> float:
    """Median seconds of one call to fn, after `settle` seconds of sleep and one warm-up call: the
    previous contestant's spinning OpenMP workers (KMP_BLOCKTIME 200 ms, GOMP_SPINCOUNT) would
    otherwise take the cores from this one's threads (on 2 cores, tools/bench_elementwise.py's
    float64 chain at N=1e7, timed right after torch.compile: aot 106 ms without it, 20-30 ms with
    it, 18 ms in a process of its own)."""
    time.sleep(settle)
    fn()
    times: list[float] = []
    start = time.perf_counter()
    with _no_gc():
        while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() - start < min_time):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


@contextlib.contextmanager
def _no_gc():
    """The garbage collector off (a collection inside a timed call is not the call's cost)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def settled_medians(fns: dict, *, min_time: float = 0.2, min_runs: int = 5, rounds: int = 5,
                    settle: float = SETTLE) -> dict:
    """{name: median seconds of one call} of contestants that take turns, `rounds` turns each, every
    turn after `settle` seconds of sleep and one warm-up call (median_time's precautions against
    spinning OpenMP workers): a VM whose memory bandwidth drifts with its neighbours' load (2x
    within a minute, seen on a 2-core EPYC) then slows a turn of every contestant, not one
    contestant's whole run."""
    times: dict = {name: [] for name in fns}
    per_turn = max(1, -(-min_runs // rounds))
    for _ in range(rounds):
        for name, fn in fns.items():
            time.sleep(settle)
            fn()
            with _no_gc():
                start = time.perf_counter()
                while len(times[name]) < per_turn * (_ + 1) or time.perf_counter() - start < min_time / rounds:
                    t0 = time.perf_counter()
                    fn()
                    times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(v) for name, v in times.items()}


def interleaved_medians(fns: dict, *, min_time: float = 0.2, rounds: int = 7) -> dict:
    """{name: median seconds of one call} for contestants timed in alternating rounds (each round
    runs every fn for about min_time / rounds): a shared machine whose speed drifts slows
    neighbouring rounds alike instead of one contestant's whole run."""
    for fn in fns.values():
        fn()
    times: dict = {name: [] for name in fns}
    with _no_gc():
        for _ in range(rounds):
            for name, fn in fns.items():
                start = time.perf_counter()
                while True:
                    t0 = time.perf_counter()
                    fn()
                    t1 = time.perf_counter()
                    times[name].append(t1 - t0)
                    if t1 - start >= min_time / rounds:
                        break
    return {name: statistics.median(v) for name, v in times.items()}


def aligned_empty(shape, dtype):
    """np.empty(shape, dtype) starting on a 64-byte boundary, as pyfftw's builders' own arrays do
    (pyfftw.empty_aligned) and aot's results of 1 MB or more (runtime/blocks.py); numpy's large
    arrays start 16 bytes into a cache line."""
    import numpy as np

    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = math.prod(shape) * dtype.itemsize
    raw = np.empty(nbytes + 64, np.uint8)
    skip = -raw.ctypes.data % 64
    return raw[skip: skip + nbytes].view(dtype).reshape(shape)


def batched_time(fn: Callable[[], object], inner: int = 1000, repeats: int = 7) -> float:
    """Median seconds per call over `repeats` batches of `inner` calls (for sub-microsecond calls)."""
    fn()
    per = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        per.append((time.perf_counter() - t0) / inner)
    return statistics.median(per)


def optional(name: str):
    """Import an optional contestant, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken install is as good as a missing one here
        return None


def fmt_time(t: float | None) -> str:
    if t is None:
        return "-"
    if t < 1e-6:
        return f"{t * 1e9:.0f} ns"
    if t < 1e-3:
        return f"{t * 1e6:.1f} us"
    if t < 1:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"


def print_table(title: str, rows: list[dict], baseline: str = "aot", results: Results | None = None,
                notes: dict | None = None) -> None:
    """rows: [{"case": str, "<contestant>": seconds or None, ...}]; prints times and ratios to aot.

    With `results`, the rows are also recorded there (with `notes` on each), as printed."""
    if results is not None:
        results.add_table(title, rows, baseline=baseline, notes=notes)
    names = [k for k in rows[0] if k != "case"] if rows else []
    print(f"\n## {title}  (median times; ratio = contestant / {baseline}, > 1 means {baseline} is faster)")
    header = ["case"] + names + [f"{n}/{baseline}" for n in names if n != baseline]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        base = r.get(baseline)
        cells = [r["case"]] + [fmt_time(r.get(n)) for n in names]
        cells += [f"{r[n] / base:.2f}" if r.get(n) and base else "-" for n in names if n != baseline]
        print("| " + " | ".join(cells) + " |")


def threads() -> int:
    return int(os.environ.get("AOT_NUM_THREADS", os.cpu_count() or 1))


# --- the JSON record of a run (--json PATH) ---------------------------------------------------------
SCHEMA_KEYS = ("benchmark", "date", "machine", "versions", "threads", "rows")
# contestant libraries whose version is recorded when the run imported them
CONTESTANT_MODULES = ("numexpr", "numba", "torch", "jax", "jaxlib", "scipy", "pyfftw")
THREAD_ENV_VARS = ("AOT_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                   "NUMBA_NUM_THREADS")


class ResultsError(ValueError):
    """A results JSON file that cannot be read or does not follow the schema."""


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the tables' rows, machine and versions to PATH as JSON")


def ratios(times: dict, baseline: str) -> dict[str, float]:
    """contestant time / baseline time for every contestant timed next to a timed baseline."""
    base = times.get(baseline)
    if not base:
        return {}
    return {k: t / base for k, t in times.items() if k != baseline and t}


class Results:
    """The rows of one benchmark run, written as JSON by `write` (schema: this module's docstring)."""

    def __init__(self, benchmark: str):
        self.benchmark = benchmark
        self.rows: list[dict] = []
        self.threads: dict[str, object] = {}  # set by a script; filled from the libraries on write
        self.notes: dict[str, object] = {}

    def add(self, case: str, times: dict[str, float | None], *, baseline: str = "aot",
            table: str | None = None, notes: dict | None = None) -> dict:
        times = {k: (None if t is None else float(t)) for k, t in times.items()}
        row = {"case": str(case), "table": table, "baseline": baseline, "times": times,
               "ratios": ratios(times, baseline), "notes": dict(notes or {})}
        self.rows.append(row)
        return row

    def add_table(self, title: str, rows: list[dict], baseline: str = "aot", notes: dict | None = None) -> None:
        """Record print_table's rows ({"case": ..., contestant: seconds or None})."""
        for r in rows:
            self.add(r["case"], {k: v for k, v in r.items() if k != "case"}, baseline=baseline,
                     table=title, notes=notes)

    def libraries(self) -> set[str]:
        """The contestant libraries of the rows: "torch.compile" is torch's, "scipy w=2" scipy's."""
        names = {n for row in self.rows for n in row["times"]}
        libs = {re.split(r"[ ._]", n)[0] for n in names}
        return libs | ({"jaxlib"} if "jax" in libs else set())

    def to_dict(self) -> dict:
        return {"benchmark": self.benchmark,
                "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "machine": machine(), "versions": versions(self.libraries()),
                "threads": {**library_threads(self.libraries()), **self.threads},
                "notes": self.notes, "rows": self.rows}

    def write(self, path: str) -> None:
        data = self.to_dict()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = f"{path}.tmp"
        with open(tmp, "w") as f:  # allow_nan=False: the file stays JSON that every reader accepts
            json.dump(data, f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
        print(f"wrote {len(self.rows)} rows to {path}", file=sys.stderr)  # stdout keeps only the tables


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "Model", "Hardware")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine() -> dict:
    return {"cpu": cpu_model(), "cores": os.cpu_count() or 1, "system": platform.platform()}


def _version(name: str) -> str:
    mod = sys.modules.get(name)
    ver = getattr(mod, "__version__", None)
    if ver is None:
        try:
            from importlib.metadata import version

            ver = version(name)
        except Exception:  # noqa: BLE001 - a version is a label; never fail a run over it
            ver = "unknown"
    return str(ver)


def versions(libraries: set[str] = frozenset(CONTESTANT_MODULES)) -> dict[str, str]:
    """python, numpy, aot, and those of `libraries` this process imported (not merely installed)."""
    import numpy

    out = {"python": platform.python_version(), "numpy": numpy.__version__}
    try:
        import aot

        out["aot"] = str(getattr(aot, "__version__", "unknown"))
    except Exception as e:  # noqa: BLE001 - the record still names what it could not import
        out["aot"] = f"not importable ({type(e).__name__})"
    for name in CONTESTANT_MODULES:
        if name in libraries and name in sys.modules:
            out[name] = _version(name)
    return out


def library_threads(libraries: set[str] = frozenset(CONTESTANT_MODULES)) -> dict[str, object]:
    """aot's default thread count, that of each of `libraries` imported, and the thread variables set."""
    env = os.environ.get("AOT_NUM_THREADS")
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    out: dict[str, object] = {"aot": int(env) if env and env.isdigit() else usable}
    mods = {k: sys.modules.get(k) for k in libraries}
    torch = mods.get("torch")
    if torch is not None and hasattr(torch, "get_num_threads"):
        out["torch"] = torch.get_num_threads()
    numba = mods.get("numba")
    if numba is not None and hasattr(numba, "config"):  # the config value: asking launches the pool
        out["numba"] = numba.config.NUMBA_NUM_THREADS
    numexpr = mods.get("numexpr")
    if numexpr is not None:
        get = getattr(getattr(numexpr, "utils", None), "get_num_threads", None)
        out["numexpr"] = get() if get else getattr(numexpr, "nthreads", "unknown")
    env_set = {k: os.environ[k] for k in THREAD_ENV_VARS if k in os.environ}
    if env_set:
        out["env"] = env_set
    return out


def _fail(path: str, what: str):
    raise ResultsError(f"{path}: {what}")


def _check_row(path: str, i: int, row) -> None:
    where = f"rows[{i}]"
    if not isinstance(row, dict):
        _fail(path, f"{where} is {type(row).__name__}, expected an object")
    for key in ("case", "times", "ratios"):
        if key not in row:
            _fail(path, f"{where} has no {key!r}")
    if not isinstance(row["case"], str):
        _fail(path, f"{where}.case is {type(row['case']).__name__}, expected a string")
    for key, allow_null in (("times", True), ("ratios", False)):
        val = row[key]
        if not isinstance(val, dict):
            _fail(path, f"{where}.{key} is {type(val).__name__}, expected an object")
        for name, x in val.items():
            # not only positive: a table may hold a difference (bench_fft's overhead = call - kernel)
            ok = (x is None and allow_null) or (isinstance(x, (int, float)) and not isinstance(x, bool)
                                                 and math.isfinite(x))
            if not ok:
                _fail(path, f"{where}.{key}[{name!r}] is {x!r}, expected a number"
                      + (" or null" if allow_null else ""))


def validate(data, path: str = "<results>") -> dict:
    """The results object itself, or ResultsError naming the file and what is wrong."""
    if not isinstance(data, dict):
        _fail(path, f"top level is {type(data).__name__}, expected an object with {', '.join(SCHEMA_KEYS)}")
    missing = [k for k in SCHEMA_KEYS if k not in data]
    if missing:
        _fail(path, f"missing key(s) {', '.join(missing)} (not a benchmark results file?)")
    if not isinstance(data["benchmark"], str) or not data["benchmark"]:
        _fail(path, f"'benchmark' is {data['benchmark']!r}, expected a non-empty string")
    if not isinstance(data["machine"], dict):
        _fail(path, "'machine' is not an object")
    if not isinstance(data["rows"], list):
        _fail(path, f"'rows' is {type(data['rows']).__name__}, expected a list")
    for i, row in enumerate(data["rows"]):
        _check_row(path, i, row)
    return data


def read_results(path: str) -> dict:
    """Load and validate one results JSON file; ResultsError names the file and the problem."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        _fail(path, f"cannot read it ({e.strerror or e})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        _fail(path, f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})")
    return validate(data, path)
