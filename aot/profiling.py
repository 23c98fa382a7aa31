"""aot.profile (this module's `profile`): per-kernel times of a compiled function, from a timed run.

`aot.profile(fn, *args, repeat=10, warmup=1, **kwargs)` compiles `fn` (a numpy function, or an
`aot.compile`d one: its options) a second time with options["profile"] = True: the entry reads
CLOCK_MONOTONIC around each kernel launch and around itself and adds the nanoseconds and a call
to counters of its own (codegen/host.py, CpuHost's profiling). It calls the unprofiled function
once and checks that the profiled one gives the same result (the same code, with clock reads
between the kernels), runs the profiled one `warmup` times, zeroes its counters, runs it `repeat`
times timing each call, and reads the counters back through the JIT.

The profiled function runs 1 + warmup + repeat times on the arguments as given (a function that
updates its arguments updates them that often); the unprofiled reference call runs on copies.

One row per launch site of the entry's code (its label: the kernel's LLVM function name); a site
the timed calls never reached (the other branch of a size test, e.g. a split reduction's chunked
path) has no row. Calls into the FFT kernel module are launches like the others, one row each.

Profiling is meant for one thread: concurrent calls of the same profiled entry add their times
into the same counters (atomically: no count is lost, but the times overlap). Each call of
aot.profile traces `fn` again; the LLVM work comes from the compile caches after the first time.
"""
from __future__ import annotations

import ctypes
import time
from dataclasses import asdict, dataclass

import numpy as np

from ir.logger import get_logger

from ._pytree import tree_flatten, tree_map

log = get_logger(__name__)

NS = 1e-9  # seconds per nanosecond


@dataclass(frozen=True)
class KernelTime:
    """One launch site of the entry: `label` its kernel's LLVM name, `site` its index in the
    entry's launch order, `calls` the launches in the timed calls, `total` their seconds, `mean`
    seconds per launch, `share` the fraction of the entry's native time."""

    label: str
    site: int
    calls: int
    total: float
    mean: float
    share: float


@dataclass(frozen=True)
class Profile:
    """A timed run of `repeat` calls: `rows` (KernelTime, in launch order), and per call (means
    over the timed calls, in seconds) `wall` (the call as Python sees it), `entry` (the native
    entry), `kernels` (the kernel launches) and `host` (entry time outside the kernels: argument
    checks, allocations, clock reads)."""

    function: str
    entry_name: str
    repeat: int
    rows: tuple[KernelTime, ...]
    wall: float
    entry: float
    kernels: float
    host: float

    def to_dict(self) -> dict:
        d = asdict(self)
        d["rows"] = [asdict(r) for r in self.rows]
        return d

    def __str__(self) -> str:
        from tabulate import tabulate

        prefix = f"{self.entry_name}."
        head = (f"aot.profile {self.function} ({self.entry_name or 'no native code'}), {self.repeat} calls; "
                f"per call: wall {_us(self.wall)}, entry {_us(self.entry)}, kernels {_us(self.kernels)}, "
                f"host {_us(self.host)}")
        if not self.rows:
            return f"{head}\n(no kernel launches)"
        table = [[r.site, r.label.removeprefix(prefix), r.calls, 1e6 * r.total, 1e6 * r.mean, 100 * r.share]
                 for r in self.rows]
        return head + "\n" + tabulate(table, headers=["site", "kernel", "calls", "total us", "mean us", "share %"],
                                      floatfmt=("", "", "", ".1f", ".2f", ".1f"))


def _us(seconds: float) -> str:
    return f"{1e6 * seconds:.1f} us"


def profile(fn, *args, repeat: int = 10, warmup: int = 1, **kwargs) -> Profile:
    """Profile `fn(*args, **kwargs)`: see the module docstring."""
    _check_counts(repeat, warmup)
    plain, profiled = _compiled_pair(fn)
    name = getattr(profiled, "_qualname", repr(fn))
    expected, native = _reference(plain, _copied(args), _copied(kwargs))  # copies: fn may update them
    got = profiled(*args, **kwargs)
    counters = _counters_of(profiled, args, kwargs, name)
    if native:  # numpy's answer (an eager call) may differ from the kernels' in the last bits
        _check_same(expected, got, name)
    for _ in range(warmup):
        profiled(*args, **kwargs)
    _reset(counters)
    wall_ns = 0
    for _ in range(repeat):
        t0 = time.perf_counter_ns()  # CLOCK_MONOTONIC on Linux, as the entry's clock
        profiled(*args, **kwargs)
        wall_ns += time.perf_counter_ns() - t0
    result = _profile_of(name, counters, _read(counters), wall_ns, repeat)
    log.debug("%s", result)
    return result


def _check_counts(repeat, warmup) -> None:
    if type(repeat) is not int or repeat < 1:
        raise ValueError(f"aot.profile: repeat must be an int >= 1 (the timed calls), got {repeat!r}")
    if type(warmup) is not int or warmup < 0:
        raise ValueError(f"aot.profile: warmup must be an int >= 0 (untimed calls first), got {warmup!r}")


def _compiled_pair(fn):
    """(the unprofiled function, a profiled compile of it)."""
    from .compiler import compile
    from .compiler.api import CompiledFunction

    if not callable(fn):
        raise TypeError(f"aot.profile: fn must be a numpy function, an aot.nn.Module or an aot.compile'd "
                        f"function, got {type(fn).__name__}")
    if not isinstance(fn, CompiledFunction):
        return compile(fn), compile(fn, options={"profile": True})
    if fn._backend_name != "llvm":
        raise ValueError(f"aot.profile: {fn._qualname} is compiled with backend {fn._backend_name!r}; only "
                         "the 'llvm' backend's native code can be profiled")
    options = {**fn._options, "profile": True, "cache_size_limit": fn._limit}  # compiled now, not async
    if fn._timeout is not None:
        options["compile_timeout"] = fn._timeout
    return fn, compile(fn._orig, dynamic=fn._dynamic, fullgraph=fn._fullgraph, options=options)


def _reference(plain, args: tuple, kwargs: dict):
    """(plain(*args, **kwargs), whether its native code answered); an asynchronous function's
    compile is waited for first."""
    if plain._async:
        plain.compile_async(*args, **kwargs).wait()
    eager = plain.cache_info()["calls"]["eager"]
    result = plain(*args, **kwargs)
    return result, plain.cache_info()["calls"]["eager"] == eager


def _copied(tree):
    return tree_map(lambda v: v.copy(order="K") if isinstance(v, np.ndarray) else v, tree)


def _counters_of(profiled, args: tuple, kwargs: dict, name: str):
    """The counters (llvm_backend.ProfileCounters) of the entry that serves these arguments; a
    RuntimeError naming why when the call did not run profiled native code."""
    if profiled._eager_reason is not None:
        raise RuntimeError(f"aot.profile: {name} runs eagerly with numpy ({profiled._eager_reason}): "
                           "there is no native code to profile")
    leaves, _ = tree_flatten((args, kwargs)) if kwargs else tree_flatten(args)
    entry = profiled._matching(leaves)
    if entry is None:
        raise RuntimeError(f"aot.profile: no compiled entry of {name} serves these arguments")
    if entry.pending is not None:
        raise RuntimeError(f"aot.profile: compiling {name} overran its budget and it runs eagerly meanwhile; "
                           "raise options['compile_timeout'] to profile it")
    if entry.error is not None:
        raise RuntimeError(f"aot.profile: compiling {name} failed ({type(entry.error).__name__}: "
                           f"{entry.error}); it runs eagerly") from entry.error
    counters = getattr(entry.runner, "profile", None)
    if counters is None:
        raise RuntimeError(f"aot.profile: the entry of {name} was built without profile counters")
    return counters


def _check_same(expected, got, name: str) -> None:
    a, spec_a = tree_flatten(expected)
    b, spec_b = tree_flatten(got)
    if spec_a != spec_b or len(a) != len(b) or not all(_same(x, y) for x, y in zip(a, b, strict=True)):
        raise RuntimeError(f"aot.profile: the profiled build of {name} gave another result than the "
                           "unprofiled one (the same kernels): please report this as a bug")


def _same(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    return bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))


def _words(counters):
    return (ctypes.c_int64 * counters.layout.size).from_address(counters.address)


def _reset(counters) -> None:
    if counters.address:
        ctypes.memset(counters.address, 0, 8 * counters.layout.size)


def _read(counters) -> list[int]:
    """[entry ns, entry calls, site 0 ns, site 0 calls, ...]; zeros for a graph without native code."""
    return list(_words(counters)) if counters.address else [0] * counters.layout.size


def _profile_of(name: str, counters, words: list[int], wall_ns: int, repeat: int) -> Profile:
    layout = counters.layout
    entry_ns, entry_calls = words[0], words[1]
    if counters.address and entry_calls != repeat:
        raise RuntimeError(f"aot.profile: {entry_calls} of the {repeat} timed calls of {name} ran the "
                           "profiled entry (the others ran eagerly, e.g. arguments sharing memory)")
    rows, kernel_ns = [], 0
    for k, label in enumerate(layout.labels):
        ns, calls = words[2 + 2 * k], words[3 + 2 * k]
        kernel_ns += ns
        if calls:
            rows.append(KernelTime(label, k, calls, ns * NS, ns * NS / calls, ns / entry_ns if entry_ns else 0.0))
    return Profile(name, layout.entry, repeat, tuple(rows), wall_ns * NS / repeat,
                   entry_ns * NS / repeat, kernel_ns * NS / repeat, (entry_ns - kernel_ns) * NS / repeat)

