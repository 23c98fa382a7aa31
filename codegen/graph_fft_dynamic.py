"""Complex transforms whose length is a symbol: plans built and cached at run time.

Each call site gets a 16-byte slot from the host (`Host.plan_slot`: spin lock + plan) and asks the
kernel module's `aot_fft_plan_get_{p}` for a plan of the length the entry computed (a host call,
`Host.call_planner`); the plan (direct or Bluestein, codegen/fft/planner.py) is reused while the
length stays the same and rebuilt when it changes; a library frees the slots' plans when it is
unloaded. Chunks of the batch run `aot_fft_plan_exec_{p}` (the per-transform kernel body) on the
entry's threads, choosing lanes as the static path does; the entry gives its reference back
before it checks for errors, so a failed chunk leaks nothing.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir import status

from .fft.planner import plan_names
from .graph_base import EntryCtx
from .graph_fft_common import c2c_flags, float_type, precision_of
from .kernels.common import new_kernel
from .llvm.context import declare
from .llvm.loops import i64
from .llvm.types import I32, I64, PTR

_SLOTS = 9  # src, dst, istride, idist, ostride, odist, error, plan, scale (double bits)


def dynamic_c2c(ectx: EntryCtx, cdtype, n, src, dst, howmany, strides: tuple, forward: bool, scale, vlen: int,
                block=None) -> None:
    """As graph_fft._c2c for a symbolic n (scale: a float or a double value); `block`: a plan block
    the module holds (a constant: plan.bluestein_block) instead of the planner's."""
    b = ectx.builder
    names = plan_names(precision_of(cdtype))
    nn = ectx.dim(n)
    if block is None:
        slot = ectx.host.plan_slot(names["release"])
        plan = ectx.host.call_planner(names["get"], PTR, [PTR, I64], [slot, nn])
        ectx.fail_if(b.icmp_unsigned("==", plan, L.Constant(PTR, None)), status.OUT_OF_MEMORY)
    else:
        plan = b.bitcast(block, PTR)
    if not isinstance(scale, L.Value):
        scale = L.Constant(L.DoubleType(), float(scale))
    kern = _chunk(ectx, cdtype, forward, vlen)
    slots = [src, dst, *strides, i64(0), plan, b.bitcast(scale, I64)]
    launch = ectx.call_kernel(kern, slots, howmany, vlen, work=b.mul(howmany, nn))
    if block is None:
        ectx.host.call_planner(names["release"], L.VoidType(), [PTR], [plan])  # before the check: no leak
    ectx.fail_on_flag(launch, 6, status.OUT_OF_MEMORY)


def _chunk(ectx: EntryCtx, cdtype, forward: bool, vlen: int) -> L.Function:
    key = ("fft_dyn_chunk", cdtype, forward)
    if key not in ectx.helpers:
        ectx.helpers[key] = _emit_chunk(ectx, cdtype, forward, vlen)
    return ectx.helpers[key]


def _emit_chunk(ectx: EntryCtx, cdtype, forward: bool, vlen: int) -> L.Function:
    """kernel(args, lo, hi): transforms lo..hi of the batch in args (see _SLOTS)."""
    ft = float_type(cdtype)
    fn, b = new_kernel(ectx.module, ectx.kernel_name("fft_dyn", cdtype, "forward" if forward else "inverse"))
    args, lo, hi = fn.args
    slot = [b.load(b.gep(args, [i64(k)], source_etype=I64), typ=I64) for k in range(_SLOTS)]
    src, dst, plan = b.inttoptr(slot[0], PTR), b.inttoptr(slot[1], PTR), b.inttoptr(slot[7], PTR)
    istride, idist, ostride, odist = slot[2:6]
    scale = b.bitcast(slot[8], L.DoubleType())
    if ft != L.DoubleType():
        scale = b.fptrunc(scale, ft)
    cnt = b.sub(hi, lo)
    with b.if_then(b.icmp_signed(">", cnt, i64(0))):
        flags = c2c_flags(b, forward, b.load(plan, typ=I64), cnt, idist, vlen)  # n: word 0 of a plan
        run = declare(ectx.module, plan_names(precision_of(cdtype))["exec"], I32,
                       [PTR, PTR, PTR] + [I64] * 5 + [I32, ft])
        s = b.gep(src, [b.mul(b.mul(lo, idist), i64(2))], source_etype=ft)
        d = b.gep(dst, [b.mul(b.mul(lo, odist), i64(2))], source_etype=ft)
        rc = b.call(run, [plan, s, d, cnt, istride, idist, ostride, odist, b.trunc(flags, I32), scale])
        with b.if_then(b.icmp_signed("!=", rc, L.Constant(I32, 0))):
            b.store(i64(1), b.gep(args, [i64(6)], source_etype=I64))
    b.ret_void()
    return fn
