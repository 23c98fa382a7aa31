"""ENTRY_LOWERINGS row of correlate1d (aot/ops/signal.py): the sliding dot product kernel
(kernels/signal.py) over blocks of outputs, threaded by the host when the work (outputs times the
shorter length) is large."""

from __future__ import annotations

from .graph_base import Desc, EntryCtx, entry_rule
from .kernels.signal import block_length, emit_correlate
from .llvm.loops import i64


@entry_rule("correlate1d")
def _correlate1d(ectx: EntryCtx, op, a: Desc, v: Desc, out):
    o = out[0] if out[0] is not None else ectx.alloc(op.results[0].type)
    dt = o.dtype
    kern = emit_correlate(ectx.module, ectx.target, ectx.kernel_name("correlate", dt), dt, ectx.helpers)
    b = ectx.builder
    total = o.shape[0]
    blen = block_length(ectx.target, dt)
    blocks = b.sdiv(b.add(total, i64(blen - 1)), i64(blen))
    slots = [a.data, v.data, o.data, a.shape[0], v.shape[0], a.strides[0], v.strides[0], o.strides[0],
             i64(op.attrs["left"]), total]
    ectx.call_kernel(kern, slots, blocks, 1, work=b.mul(total, v.shape[0]))
    return [o]
