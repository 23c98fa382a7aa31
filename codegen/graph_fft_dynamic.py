"""Complex transforms whose length is a symbol: plans built and cached at run time.

Each call site gets a 16-byte slot (a module-internal global: spin lock + plan) and asks the
kernel module's `aot_fft_plan_get_{p}` for a plan of the length the entry computed; the plan
(direct or Bluestein, codegen/fft/planner.py) is reused while the length stays the same and
rebuilt when it changes; a library frees the slots' plans when it is unloaded. Chunks of the
batch run `aot_fft_plan_exec_{p}` on the entry's threads, choosing lanes as the static path
does; the entry gives its reference back before it checks for errors, so a failed chunk leaks
nothing.
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
from .llvm.unload import on_unload

_SLOTS = 9  # src, dst, istride, idist, ostride, odist, error, plan, scale (double bits)


def dynamic_c2c(ectx: EntryCtx, cdtype, n, src, dst, howmany, strides: tuple, forward: bool, scale, vlen: int) -> None:
    """As graph_fft._c2c for a symbolic n (scale: a float or a double value)."""
    b = ectx.builder
    names = plan_names(precision_of(cdtype))
    slot = L.GlobalVariable(ectx.module, L.ArrayType(I64, 2), name=ectx.kernel_name("fft_plan_slot"))
    slot.linkage = "internal"
    slot.initializer = L.Constant(L.ArrayType(I64, 2), [0, 0])
    if ectx.options.library:  # a library frees the slot's plan when it is unloaded
        on_unload(ectx.module, _slot_cleanup(ectx, slot, names["release"]))
    nn = ectx.dim(n)
    plan = b.call(declare(ectx.module, names["get"], PTR, [PTR, I64]), [slot, nn])
    ectx.fail_if(b.icmp_unsigned("==", plan, L.Constant(PTR, None)), status.OUT_OF_MEMORY)
    if not isinstance(scale, L.Value):
        scale = L.Constant(L.DoubleType(), float(scale))
    kern = _chunk(ectx, cdtype, forward, vlen)
    slots = [src, dst, *strides, i64(0), plan, b.bitcast(scale, I64)]
    launch = ectx.call_kernel(kern, slots, howmany, vlen, work=b.mul(howmany, nn))
    b.call(declare(ectx.module, names["release"], L.VoidType(), [PTR]), [plan])
    ectx.fail_on_flag(launch, 6, status.OUT_OF_MEMORY)


def _slot_cleanup(ectx: EntryCtx, slot: L.GlobalVariable, release_name: str) -> L.Function:
    """void(): take the slot's plan out and give its reference back."""
    fn = L.Function(ectx.module, L.FunctionType(L.VoidType(), []), name=ectx.kernel_name("fft_plan_free"))
    fn.linkage = "internal"
    b = L.IRBuilder(fn.append_basic_block("entry"))
    plan_slot = b.gep(slot, [i64(0), i64(1)], source_etype=slot.value_type)
    plan = b.atomic_rmw("xchg", plan_slot, i64(0), "acq_rel")
    b.call(declare(ectx.module, release_name, L.VoidType(), [PTR]), [b.inttoptr(plan, PTR)])
    b.ret_void()
    return fn


def _chunk(ectx: EntryCtx, cdtype, forward: bool, vlen: int) -> L.Function:
    key = ("fft_dyn_chunk", cdtype, forward)
    if key not in ectx.helpers:
        ectx.helpers[key] = _emit_chunk(ectx, cdtype, forward, vlen)
    return ectx.helpers[key]


def _emit_chunk(ectx: EntryCtx, cdtype, forward: bool, vlen: int) -> L.Function:
    """kernel(args, lo, hi): transforms lo..hi of the batch in args (see _SLOTS)."""
    ft = float_type(cdtype)
    fn, b = new_kernel(ectx.module, ectx.kernel_name("fft_dyn"))
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
