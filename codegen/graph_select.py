"""ENTRY_LOWERINGS rows of the selection family (aot/ops/selection_ops.py): select_kth, partition,
argpartition.

The lanes along the axis (every combination of the other dims) are independent: the kernels of
kernels/select_rows.py run over scratch slots (at most SLOTS_PER_THREAD per build-time thread,
each handling a contiguous run of lanes in its own part of one scratch buffer), so the host
threads over lanes when there are several. A position outside its lane fails the entry with
IndexError (INDEX_OUT_OF_RANGE).
"""

from __future__ import annotations

import numpy as np

from ir import status

from .graph_base import Desc, EntryCtx, entry_rule
from .kernels.select_rows import (
    PARTITION_FIXED,
    SELECT_FIXED,
    emit_partition_rows,
    emit_select_rows,
    row_layout,
)
from .kernels.sort_keys import key_bits
from .llvm.loops import i64

SLOTS_PER_THREAD = 2


def _output(ectx: EntryCtx, op, out: list) -> Desc:
    return out[0] if out[0] is not None else ectx.alloc(op.results[0].type)


def _slots(ectx: EntryCtx, x: Desc, axis: int, npos):
    """(lanes, slots, bytes per slot, scratch pointer, buffer mark) for lanes of x along axis."""
    b, host = ectx.builder, ectx.host
    rows = ectx.numel([x.shape[k] for k in range(x.rank) if k != axis])
    most = i64(max(1, host.split_ways()) * SLOTS_PER_THREAD)
    nslots = b.select(b.icmp_signed("<", rows, most), rows, most)
    _, slot_bytes = row_layout(b, x.shape[axis], npos, x.dtype)
    nbytes, overflow = ectx._checked_product([nslots, slot_bytes])
    mark = host.n_buffers()
    scratch, failed = host.alloc(nbytes, overflow)
    ectx.fail_if(failed, status.OUT_OF_MEMORY)
    return rows, nslots, slot_bytes, scratch, mark


def _lanes(ectx: EntryCtx, x: Desc) -> int:
    """Keys per vector of the selection passes (at most 16: wider bool vectors gain nothing)."""
    return min(16, ectx.target.vector_len(key_bits(x.dtype)))


def _other(d: Desc, axis: int, what: str) -> list:
    return [getattr(d, what)[k] for k in range(d.rank) if k != axis]


@entry_rule("select_kth")
def _select_kth(ectx: EntryCtx, op, x: Desc, idx: Desc, out):
    o = _output(ectx, op, out)
    axis = op.attrs["axis"]
    npos = o.shape[axis]
    rows, nslots, slot_bytes, scratch, mark = _slots(ectx, x, axis, npos)
    per_lane = idx.rank > 1
    istride = idx.strides[axis] if per_lane else idx.strides[0]
    i_other = _other(idx, axis, "strides") if per_lane else [i64(0)] * (x.rank - 1)
    name = ectx.kernel_name("select_rows", op.name, x.dtype)
    kern = emit_select_rows(ectx.module, name, x.dtype, x.rank, _lanes(ectx, x))
    slots = [x.data, idx.data, o.data, scratch, rows, nslots, x.shape[axis], npos, slot_bytes,
             x.strides[axis], istride, o.strides[axis]]
    assert len(slots) == SELECT_FIXED
    slots += _other(x, axis, "shape") + _other(x, axis, "strides") + i_other + _other(o, axis, "strides") + [i64(0)]
    launch = ectx.call_kernel(kern, slots, nslots, 1, work=ectx.numel(x.shape))
    ectx.fail_on_flag(launch, len(slots) - 1, status.INDEX_OUT_OF_RANGE)
    ectx.host.free(ectx.host.buffers_since(mark))
    return [o]


@entry_rule("partition", "argpartition")
def _partition(ectx: EntryCtx, op, x: Desc, out):
    o = _output(ectx, op, out)
    axis, kth = op.attrs["axis"], tuple(op.attrs["kth"])
    table = ectx.host.constant("kth", np.asarray(kth, np.int64))
    rows, nslots, slot_bytes, scratch, mark = _slots(ectx, x, axis, i64(len(kth)))
    name = ectx.kernel_name(op.name, x.dtype)
    kern = emit_partition_rows(ectx.module, name, x.dtype, x.rank, len(set(kth)),
                               op.name == "argpartition", _lanes(ectx, x))
    slots = [x.data, o.data, scratch, table, i64(len(kth)), rows, nslots, x.shape[axis], slot_bytes,
             x.strides[axis], o.strides[axis]]
    assert len(slots) == PARTITION_FIXED
    slots += _other(x, axis, "shape") + _other(x, axis, "strides") + _other(o, axis, "strides") + [i64(0)]
    launch = ectx.call_kernel(kern, slots, nslots, 1, work=ectx.numel(x.shape))
    ectx.fail_on_flag(launch, len(slots) - 1, status.INDEX_OUT_OF_RANGE)
    ectx.host.free(ectx.host.buffers_since(mark))
    return [o]
