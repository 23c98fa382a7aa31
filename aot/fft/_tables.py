"""Repeated eager calls in native code: per public transform and set of arguments (n, axis, norm),
a table of prepared calls searched by a builtin (codegen/trampolines.py's aot_fft_call_{precision};
its layout is ir.abi_slots.FFT_CALL_*).

`fft(a)` first calls the builtin of its arguments' table with `a` (the default arguments' table
directly, others through a dict): when `a` is an aligned ndarray whose descr, rank, dims and
strides equal an entry's, the builtin makes the output with numpy's PyArray_New (widening real
input when the transform is complex) and runs the entry's thunk calls, so the call runs no Python
past the public function's argument tests. Anything else returns None and takes _fast's path,
whose first call of a key also installs small entries here.

The builtin holds the GIL while the kernels run, so every table's entries share one scratch
buffer per precision; only small work is installed (at most `_MAX_ELEMENTS` complex elements,
outputs well below runtime.blocks.ALIGNED_BYTES, which numpy's allocator makes), and nothing
without a GIL (free-threaded builds) or when numpy's array struct was not probed.
"""
from __future__ import annotations

import sys

import numpy as np

from ir.abi_slots import (
    FFT_CALL_CALLS,
    FFT_CALL_DIMS,
    FFT_CALL_ENTRIES,
    FFT_CALL_HEADER,
    FFT_CALL_RECORD,
    FFT_CALL_ROW,
)
from ir.abi_slots import FFT_THUNK as T

from ._exec import _address, _aligned_empty

_MAX_ELEMENTS = 1 << 14  # of an installed call's output: a few tens of us with the GIL held
_H = len(FFT_CALL_HEADER)


def _no_entry(a):
    return None


class Table:
    """One public transform's entries: `call(a)` is the output of a prepared call, or None."""

    def __init__(self, kind: str):
        self.kind = kind
        self.ctx = np.zeros(_H + FFT_CALL_ENTRIES * FFT_CALL_ROW, np.int64)
        self.kept: list = [None] * FFT_CALL_ENTRIES  # per entry: (what its blocks point into, key)
        self.turn = 0  # the entry replaced next once the table is full
        self.call = _no_entry

    def clear(self) -> None:
        self.ctx[FFT_CALL_HEADER.n_entries] = 0  # first: the builtin stops reading the records
        self.kept = [None] * FFT_CALL_ENTRIES
        self.turn = 0

    def hits(self) -> int:
        return int(self.ctx[FFT_CALL_HEADER.hits])

    def install(self, a: np.ndarray, entry, k) -> None:
        """Add the call of `a` prepared as _fast's `entry` (an _Entry; `k` the kernels of its
        precision), when it is small enough and this process can run it natively."""
        key = (a.dtype, a.shape, a.strides)
        if any(kept is not None and kept[1] == key for kept in self.kept):  # another thread's first call
            return
        calls = _calls(entry)
        if calls is None or not _native_ok(k):
            return
        if self.call is _no_entry:
            from runtime.buffers import builtin_at

            self._header()
            self.call = builtin_at(k.call_builtin, f"aot.fft.{self.kind}", self.ctx)
        rows, keep = calls
        record = FFT_CALL_RECORD.pack(descr=id(a.dtype), nd=a.ndim, typenum=entry.dtype.num,
                                      out_nd=len(entry.shape), n_calls=len(rows),
                                      convert=a.itemsize if entry.convert else 0, size=a.size)
        record += _padded(a.shape) + _padded(a.strides) + _padded(entry.shape)
        record += [x for row in rows for x in row] + [0] * 3 * (FFT_CALL_CALLS - len(rows))
        used = int(self.ctx[FFT_CALL_HEADER.n_entries])
        slot = used if used < FFT_CALL_ENTRIES else self.turn
        if used >= FFT_CALL_ENTRIES:
            self.turn = (self.turn + 1) % FFT_CALL_ENTRIES
        lo = _H + slot * FFT_CALL_ROW
        old = self.kept[slot]
        self.kept[slot] = (keep, key)
        self.ctx[lo: lo + FFT_CALL_ROW] = record  # one assignment: the builtin never sees half a record
        if slot == used:
            self.ctx[FFT_CALL_HEADER.n_entries] = used + 1
        del old

    def _header(self) -> None:
        from runtime.buffers import c_api_address, new_array_address

        h = FFT_CALL_HEADER
        self.ctx[h.ndarray_type], self.ctx[h.new_array] = id(np.ndarray), new_array_address()
        self.ctx[h.none], self.ctx[h.incref] = id(None), c_api_address("Py_IncRef")


def _native_ok(k) -> bool:
    from runtime.buffers import new_array_address

    gil = getattr(sys, "_is_gil_enabled", None)
    return (gil is None or gil()) and k.call_builtin is not None and new_array_address() is not None


def _padded(values) -> list[int]:
    return list(values) + [0] * (FFT_CALL_DIMS - len(values))


def _calls(entry):
    """(rows (thunk, block, reads the input), what they point into) of `entry`'s native copy: its
    blocks with the shared scratch (and a work buffer of its own), or None when it is not one to
    install."""
    if (entry.shared or len(entry.passes) > FFT_CALL_CALLS or len(entry.shape) > FFT_CALL_DIMS
            or int(np.prod(entry.shape)) > _MAX_ELEMENTS):
        return None
    work = None if entry.work is None else np.empty_like(entry.work)
    scratch = _shared_scratch(entry.scratch_values, entry.precision)
    rows, keep = [], [entry.keep, scratch, work]
    for (thunk, _, from_input), blk in zip(entry.passes, entry.blocks):
        b = blk.copy()
        b[T.scratch] = scratch.ctypes.data
        if work is not None:
            for s in (T.src_base, T.dst_base):
                if b[s] == entry.work.ctypes.data:
                    b[s] = work.ctypes.data
        keep.append(b)
        rows.append((_address(thunk), b.ctypes.data, int(from_input)))
    return rows, keep


_SCRATCH: dict[str, np.ndarray] = {}  # per precision: the newest shared scratch


def _shared_scratch(values: int, precision: str) -> np.ndarray:
    """A scratch buffer of at least `values` reals that the tables' entries share (they run with
    the GIL held); a larger one replaces it for later entries, earlier ones keep theirs."""
    buf = _SCRATCH.get(precision)
    if buf is None or buf.size < values:
        real = np.float32 if precision == "f32" else np.float64
        buf = _SCRATCH[precision] = _aligned_empty(max(values, 1 << 15), real)
    return buf


_MAX_KEYED = 32  # tables of other arguments per kind (the oldest is replaced)


class Kind:
    """A public transform's tables: `default` for calls with every other argument left out,
    `keyed[(n, axis, norm)]` for other exact int/str arguments (a torch-style `dim` counts as
    axis: the public function passes it as such)."""

    def __init__(self, kind: str):
        self.kind, self.default, self.keyed = kind, Table(kind), {}
        self.by_norm: dict = {}  # keyed's tables of (None, None, norm), by norm: no tuple to build

    def install(self, args: tuple, a: np.ndarray, entry, k) -> None:
        if args == (None, None, None):
            t = self.default
        else:
            t = self.keyed.get(args)
            if t is None:
                t = Table(self.kind)
        t.install(a, entry, k)
        if t.call is not _no_entry and t is not self.default and args not in self.keyed:
            if len(self.keyed) >= _MAX_KEYED:  # the oldest goes (a call running on it keeps it alive)
                old = next(iter(self.keyed))
                del self.keyed[old]
                if old[:2] == (None, None):
                    self.by_norm.pop(old[2], None)
            self.keyed[args] = t
            if args[:2] == (None, None):
                self.by_norm[args[2]] = t

    def tables(self) -> list[Table]:
        return [self.default, *list(self.keyed.values())]


KINDS: dict[str, Kind] = {}


def kind(name: str) -> Kind:
    k = KINDS.get(name)
    if k is None:
        k = KINDS[name] = Kind(name)
    return k


def clear() -> None:
    for k in KINDS.values():
        k.default.clear()
        k.keyed.clear()  # in place: the public functions hold these dicts
        k.by_norm.clear()


def hits() -> int:
    return sum(t.hits() for k in list(KINDS.values()) for t in k.tables())
