"""ENTRY_LOWERINGS row of `scan` (aot/ops/scan.py): numpy's accumulate along one axis.

The lanes (every index of the other dims) are independent and run in parallel, each folding its
axis in numpy's sequential order (kernels/scan.py emit_lanes; adjacent lanes share vectors when
the innermost dim is not the scan axis). A long axis with fewer lanes than threads is scanned in
chunks on threads instead, when the kind's combine is exactly associative (ir/scans.py: integer
sums and products, max, min, any, all, bitwise ops): each chunk is folded to a total, the totals
are scanned, and each chunk is scanned again from the total before it; the result is the
sequential one bit for bit. Float sums and products keep numpy's sequential order on every path.
"""

from __future__ import annotations

import math

from ir import status
from ir.opdef import may_raise
from ir.scans import exactly_associative, record
from ir.symbols import is_static
from ir.types import TensorType

from .graph_base import Desc, EntryCtx, entry_rule
from .graph_ops import identity_body
from .kernels.common import OperandInfo
from .kernels.reduce import ReduceSpec
from .kernels.scan import ScanSpec, emit_blocks, emit_lanes
from .llvm.builder import emit_if
from .llvm.loops import i64
from .split_reduce import split_reduce


# The blocked scan moves 3 elements per element (a reduction, then a read and a write) where the
# sequential one moves 2, so on T threads it gains at most 2T/3: it is used from 4 threads on (on 2
# busy cores it measured slower than the sequential scan).
MIN_BLOCK_THREADS = 4


class _RunTime:
    """A dim the kernel reads from its argument block (the totals' lengths)."""

    def __repr__(self) -> str:
        return "run-time"


@entry_rule("scan")
def _scan(ectx: EntryCtx, op, x: Desc, out):
    o = out[0] if out[0] is not None else ectx.alloc(op.results[0].type)
    a = op.attrs
    rt = op.results[0].type
    spec = ScanSpec(tuple(rt.shape), a["axis"], a["kind"], x.dtype, rt.dtype, may_raise(op))
    run_scan(ectx, spec, x, o)
    return [o]


def run_scan(ectx: EntryCtx, spec: ScanSpec, x: Desc, o: Desc) -> None:
    b = ectx.builder
    dims = [ectx.dim(d) for d in spec.shape]
    slots = [x.data, o.data] + dims + list(x.strides) + list(o.strides)
    n = dims[spec.axis]
    lanes = ectx.numel([d for k, d in enumerate(dims) if k != spec.axis])
    work = ectx.numel(dims)
    kern = emit_lanes(ectx.module, ectx.target, ectx.kernel_name("scan", spec.kind, spec.dtype), spec,
                      ectx.helpers)

    def by_lanes() -> None:
        align = spec.vector_len(ectx.target) if spec.axis != len(dims) - 1 else 1
        if not spec.reports:
            ectx.call_kernel(kern, slots, lanes, align, work=work)
            return
        launch = ectx.call_kernel(kern, slots + [i64(0)], lanes, align, work=work)
        ectx.fail_on_flag(launch, len(slots), status.NEGATIVE_POWER)

    nt = ectx.host.split_ways()  # chunks per lane: the build-time thread count
    exact = not spec.reports and exactly_associative(spec.kind, spec.dtype)
    if nt < MIN_BLOCK_THREADS or not exact or not _may_block(ectx, spec, nt):
        by_lanes()
        return
    few = b.icmp_signed("<", lanes, i64(nt))
    long_axis = b.icmp_signed(">=", n, i64(4 * nt))
    big = b.icmp_signed(">=", work, i64(max(ectx.options.parallel_threshold, 1)))
    emit_if(b, b.and_(few, b.and_(long_axis, big)), lambda: _blocked(ectx, spec, slots, n, lanes, work, nt),
            by_lanes)


def _may_block(ectx: EntryCtx, spec: ScanSpec, nt: int) -> bool:
    """Whether the run-time test below can pass (static shapes decide it now: no blocked kernels)."""
    if not all(is_static(d) for d in spec.shape):
        return True
    n = spec.shape[spec.axis]
    lanes = math.prod(d for k, d in enumerate(spec.shape) if k != spec.axis)
    return lanes < nt and n >= 4 * nt and n * lanes >= ectx.options.parallel_threshold


def _blocked(ectx: EntryCtx, spec: ScanSpec, slots: list, n, lanes, work, nt: int) -> None:
    """The chunked scan: totals of nt chunks per lane, their scan, then each chunk from its offset."""
    b = ectx.builder
    chunk = b.sdiv(b.add(n, i64(nt - 1)), i64(nt))
    used = b.sdiv(b.add(n, b.sub(chunk, i64(1))), chunk)  # chunks holding elements
    totals = _chunk_totals(ectx, spec, slots, chunk, lanes, work, nt)  # [t * lanes + lane]
    pre = _totals_kernel(ectx, spec)  # the totals of the used chunks, scanned along t, in place
    ectx.call_kernel(pre, [totals.data, totals.data, used, lanes, lanes, i64(1), lanes, i64(1)],
                     lanes, 1, work=b.mul(used, lanes))
    name = ectx.kernel_name("scanapply", spec.kind, spec.dtype)
    kern = emit_blocks(ectx.module, ectx.target, name, spec, "apply", ectx.helpers)
    ectx.call_kernel(kern, slots + [totals.data, chunk], b.mul(i64(nt), lanes), 1, work=work)


def _chunk_totals(ectx: EntryCtx, spec: ScanSpec, slots: list, chunk, lanes, work, nt: int) -> Desc:
    """The (nt, lanes) folds of each lane's nt chunks. A reduction record's kind on an exact dtype is
    the split reduction's first pass (split_reduce.py: the same chunks, vectorised; an int or bool
    fold is the same in any grouping); other kinds fold each chunk in order (emit_blocks)."""
    rec = record(spec.kind)
    r = len(spec.shape)
    kept = [k for k in range(r) if k != spec.axis]
    if rec is not None and rec.splittable and not spec.dtype.is_inexact:
        red = ReduceSpec(spec.shape, (spec.axis,), spec.kind, spec.dtype, identity_body(spec.src, spec.dtype),
                         (OperandInfo(spec.src, (False,) * r),),
                         OperandInfo(spec.dtype, tuple(k == spec.axis for k in range(r))))
        # the scan's argument block starts as the reduction's: input, output, dims, input strides
        return split_reduce(ectx, red, slots, [slots[2 + k] for k in kept], chunks=nt)  # the scan's chunks
    totals = ectx.alloc(TensorType(spec.dtype, (nt,) + tuple(spec.shape[k] for k in kept)))
    name = ectx.kernel_name("scantotal", spec.kind, spec.dtype)
    kern = emit_blocks(ectx.module, ectx.target, name, spec, "total", ectx.helpers)
    ectx.call_kernel(kern, slots + [totals.data, chunk], ectx.builder.mul(i64(nt), lanes), 1, work=work)
    return totals


def _totals_kernel(ectx: EntryCtx, spec: ScanSpec):
    """The scan of a (chunks, lanes) totals buffer along its chunks: one per kind and dtype in the
    module (its dims are read at run time)."""
    key = ("scan_totals", spec.kind, spec.dtype)
    if key not in ectx.helpers:
        tspec = ScanSpec((_RunTime(), _RunTime()), 0, spec.kind, spec.dtype, spec.dtype)
        name = f"aot.scan_totals.{spec.kind}.{spec.dtype}"
        ectx.helpers[key] = emit_lanes(ectx.module, ectx.target, name, tspec, ectx.helpers)
    return ectx.helpers[key]
