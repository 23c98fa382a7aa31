"""ENTRY_LOWERINGS row of diagonal (aot/ops/arrays.py): a view of the operand, no copy. The other
dims keep their strides; the diagonal steps by both axes' strides at once, from the element
(0, offset) or (-offset, 0)."""

from __future__ import annotations

from .graph_base import Desc, EntryCtx, entry_rule
from .llvm.loops import elem_ptr, i64


@entry_rule("diagonal")
def _diagonal(ectx: EntryCtx, op, x: Desc, out):
    a = op.attrs
    i, j, offset = a["axis1"], a["axis2"], a["offset"]
    b = ectx.builder
    start = b.mul(i64(offset), x.strides[j]) if offset >= 0 else b.mul(i64(-offset), x.strides[i])
    rest = [k for k in range(x.rank) if k not in (i, j)]
    rt = op.results[0].type
    shape = [x.shape[k] for k in rest] + [ectx.dim(rt.shape[-1])]
    strides = [x.strides[k] for k in rest] + [b.add(x.strides[i], x.strides[j])]
    return [Desc(x.dtype, elem_ptr(b, x.dtype, x.data, start), shape, strides, tuple(rt.shape))]
