"""Profiled entries (options.profile, aot.profile): the CPU host's clock reads and counters.

The entry reads CLOCK_MONOTONIC (clock_gettime, through the vDSO: ~20 ns, already in nanoseconds;
a cycle counter would need calibrating against it) around each launch and around itself, and adds
the nanoseconds and one call to the counters of its ProfileLayout (codegen/options.py) with atomic
adds, so that concurrent calls of one entry add up instead of losing counts.
"""
from __future__ import annotations

from llvmlite import ir as L

from .llvm.builder import Builder
from .llvm.context import declare
from .llvm.loops import alloca, i64
from .llvm.types import I32, I64, PTR
from .options import ProfileLayout, profile_symbol


class ProfiledLaunches:
    """Mixed into a Host with `module`, `fn`, `builder`, `alloca_builder`, `options`, `target`."""

    profiles = True  # whether this host can build profiled entries
    CLOCK_MONOTONIC = 1  # clock_gettime's clock id on Linux (every architecture)

    def _profiling(self) -> bool:
        """Whether this entry is profiled; refused where no counters can be read (GPU, libraries)."""
        if not self.options.profile:
            return False
        if not self.profiles:
            raise NotImplementedError(f"target {self.target.name!r}: profiled entries (options.profile) "
                                      f"are built for the CPU host's JIT entries only")
        if self.options.library:
            raise ValueError(f"library {self.options.library!r}: profiled entries (options.profile) are "
                             "JIT entries only (aot.profile reads their counters in-process)")
        return True

    def _profile_counters(self) -> L.GlobalVariable:
        """The entry's counters (external: the JIT resolves it by name); sized at `finish`, when the
        launch sites are known (the launches address it as i64 slots, whatever its size)."""
        g = self.module.globals.get(profile_symbol(self.fn.name))
        if g is None:
            g = L.GlobalVariable(self.module, L.ArrayType(I64, 2), name=profile_symbol(self.fn.name))
            g.type = PTR  # referenced as an opaque pointer: its value type changes at finish
            g.align = 64
            self._profile_labels: list[str] = []
        return g

    def _profile_site(self, kern: L.Function) -> int:
        """A new launch site of `kern`: its slot pair's index (2 + 2k for site k)."""
        self._profile_counters()
        self._profile_labels.append(kern.name)
        return 2 * len(self._profile_labels)

    def _profile_clock(self, b: L.IRBuilder | None = None) -> L.Value:
        """CLOCK_MONOTONIC in nanoseconds (i64), read at `b` (default: the entry's builder)."""
        b = b or self.builder
        ts = getattr(self, "_timespec", None)
        if ts is None:  # struct timespec {i64 tv_sec; i64 tv_nsec} on 64-bit Linux
            ts = self._timespec = alloca(self.alloca_builder, I64, size=2)
        clock_gettime = declare(self.module, "clock_gettime", I32, [I32, PTR])
        b.call(clock_gettime, [L.Constant(I32, self.CLOCK_MONOTONIC), ts])
        sec = b.load(ts, typ=I64)
        nsec = b.load(b.gep(ts, [i64(1)], source_etype=I64), typ=I64)
        return b.add(b.mul(sec, i64(1_000_000_000)), nsec)

    def _profile_add(self, slot: int, t0: L.Value, b: L.IRBuilder | None = None) -> None:
        """Add the nanoseconds since `t0` and one call to the counter pair at `slot`."""
        b = b or self.builder
        g = self._profile_counters()
        elapsed = b.sub(self._profile_clock(b), t0)
        b.atomic_rmw("add", b.gep(g, [i64(slot)], source_etype=I64), elapsed, "monotonic")
        b.atomic_rmw("add", b.gep(g, [i64(slot + 1)], source_etype=I64), i64(1), "monotonic")

    def _finish_profile(self, cb: L.IRBuilder) -> None:
        """Time the whole entry (its first instruction to `cleanup`'s return), size the counters and
        record their layout for the compiler (`module.aot_profile[entry name]`)."""
        g = self._profile_counters()
        start = Builder()
        start.position_at_start(self.alloca_builder.block)  # the entry block (already terminated)
        self._timespec = alloca(start, I64, size=2)
        t0 = self._profile_clock(start)
        self._profile_add(0, t0, cb)
        layout = ProfileLayout(self.fn.name, tuple(self._profile_labels))
        g.value_type = L.ArrayType(I64, layout.size)
        g.initializer = L.Constant(g.value_type, None)
        self.module.__dict__.setdefault("aot_profile", {})[self.fn.name] = layout
