"""ENTRY_LOWERINGS row of scatter (aot/ops/updates.py): copy x into the result, then apply the
updates in order (kernels/updates.py). Distinct positions (`unique`: basic indexing) are written on
threads; repeated ones keep numpy's order on one thread, since the last write (or every combine)
must come in sequence."""

from __future__ import annotations

from ir import status
from ir.opdef import may_raise
from ir.scans import combine_body, record

from .graph_base import Desc, EntryCtx, entry_rule
from .graph_ops import copy
from .kernels.updates import ERR_COMBINE, ERR_INDEX, emit_scatter, unary_body
from .llvm.loops import i64


@entry_rule("scatter")
def _scatter(ectx: EntryCtx, op, x: Desc, idx: Desc, upd: Desc, out):
    o = out[0] if out[0] is not None else ectx.alloc(op.results[0].type)
    copy(ectx, x, o)
    kind = op.attrs["kind"]
    name = ectx.kernel_name("scatter", kind, o.dtype)
    kern = emit_scatter(ectx.module, ectx.target, name, o.dtype, idx.dtype, kind,
                        ectx.helpers)
    m = idx.shape[0]
    slots = [upd.data, idx.data, o.data, upd.strides[0], idx.strides[0], o.strides[0], o.shape[0], i64(0), i64(0)]
    launch = ectx.call_kernel(kern, slots, m, 1, work=None if op.attrs["unique"] else i64(0))
    ectx.fail_on_flag(launch, ERR_INDEX, status.INDEX_OUT_OF_RANGE)
    body = None if kind is None or record(kind) is not None else unary_body(kind, o.dtype) or combine_body(kind, o.dtype)
    if body is not None and any(may_raise(c) for c in body.ops):
        ectx.fail_on_flag(launch, ERR_COMBINE, status.NEGATIVE_POWER)
    return [o]
