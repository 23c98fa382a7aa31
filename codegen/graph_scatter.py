"""ENTRY_LOWERINGS row of bincount (aot/ops/scatter.py).

Few bins over many values take the threaded path: each of the host's split_ways() chunks of the
values counts into its own row of a private (T, length) buffer, then the rows are summed into the
result (deterministic for a fixed T; weighted float sums differ from numpy's sequential order only
by reassociation). Otherwise one chunk counts straight into the result."""

from __future__ import annotations

from llvmlite import ir as L

from ir import status
from ir.types import TensorType

from .graph_base import Desc, EntryCtx, entry_rule
from .graph_ops import Reduction, identity_body, run_reduce
from .kernels.scatter import ERR_NEGATIVE, ERR_TOO_LARGE, emit_bincount
from .llvm.builder import emit_if
from .llvm.loops import i64
from .llvm.types import PTR

_CODES = {s.name: s.code for s in status.ENTRY}
# the threaded path needs this many values per private bin (zeroing and summing T rows is the cost)
VALUES_PER_BIN = 4


@entry_rule("bincount")
def _bincount(ectx: EntryCtx, op, x: Desc, *weights: Desc, out):
    o = out[0] if out[0] is not None else ectx.alloc(op.results[0].type)
    w = weights[0] if weights else None
    name = ectx.kernel_name("bincount", x.dtype, "weighted" if w is not None else "")
    kern = emit_bincount(ectx.module, ectx.target, name, x.dtype,
                         w.dtype if w is not None else None, o.dtype, ectx.helpers)
    b = ectx.builder
    n, length = x.shape[0], o.shape[0]
    wp = w.data if w is not None else L.Constant(PTR, None)
    ws = w.strides[0] if w is not None else i64(0)

    def launch(dst, out_stride, row_stride, chunk, chunks):
        slots = [x.data, wp, dst, n, x.strides[0], ws, length, out_stride, row_stride, chunk, i64(0), i64(0)]
        done = ectx.call_kernel(kern, slots, chunks, 1, work=n)
        ectx.fail_on_flag(done, ERR_NEGATIVE, _CODES["BINCOUNT_NEGATIVE"])
        ectx.fail_on_flag(done, ERR_TOO_LARGE, _CODES["BINCOUNT_TOO_LARGE"])

    nt = ectx.host.split_ways()
    if nt <= 1:
        launch(o.data, o.strides[0], i64(0), n, i64(1))
        return [o]
    many = b.icmp_signed(">=", n, i64(max(ectx.options.parallel_threshold, 2 * nt)))
    few_bins = b.icmp_signed("<=", b.mul(length, i64(nt * VALUES_PER_BIN)), n)
    def threaded():
        part = ectx.alloc(TensorType(o.dtype, (nt, op.results[0].type.shape[0])))
        chunk = b.sdiv(b.add(n, i64(nt - 1)), i64(nt))
        launch(part.data, i64(1), length, chunk, i64(nt))
        rows = Reduction(part.static_shape, (0,), "sum", o.dtype, False, identity_body(o.dtype, o.dtype))
        run_reduce(ectx, rows, [part], o, allow_split=False)

    emit_if(b, b.and_(many, few_bins), threaded, lambda: launch(o.data, o.strides[0], i64(0), n, i64(1)))
    return [o]
