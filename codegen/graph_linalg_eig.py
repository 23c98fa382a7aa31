"""ENTRY_LOWERINGS rows of eig and eigvals (aot/ops/linalg_eig.py): one kernel call threaded over
the batch members (kernels/linalg_eig.py), a complex128 work row per member, and the kernel's error
bits turned into the entry's status: a NaN or an infinity anywhere first (numpy checks before it
computes), then no convergence."""

from __future__ import annotations

from ir import status
from ir.dtypes import complex128
from ir.types import TensorType

from .graph_base import EntryCtx, entry_rule
from .graph_linalg_kernels import batch_slots
from .kernels import linalg_eig as eig
from .llvm.loops import i64


@entry_rule("eig", "eigvals")
def _eig(ectx: EntryCtx, op, a, out):
    outs = [o if o is not None else ectx.alloc(r.type) for r, o in zip(op.results, out, strict=True)]
    vectors = op.name == "eig"
    at = op.operands[0].type
    batch, n_s = tuple(at.shape[:-2]), at.shape[-1]
    dt = op.results[0].type.dtype
    work = ectx.alloc(TensorType(complex128, batch + (eig.work_size(n_s, vectors),)))
    lay = eig.layout(vectors, len(batch))
    n = ectx.dim(n_s)
    key = ("linalg.kernel", op.name, a.dtype, dt, len(batch))
    kern = ectx.helpers.get(key)
    if kern is None:
        name = ectx.kernel_name(op.name, a.dtype)
        kern = eig.emit_eig(ectx.module, ectx.target, name, dt, a.dtype, vectors, len(batch), ectx.helpers)
        ectx.helpers[key] = kern
    ranks = [2, 1, 2, 1] if vectors else [2, 1, 1]
    slots = batch_slots(ectx, lay, [a, *outs, work], ranks, batch, [n])
    members = ectx.numel([ectx.dim(d) for d in batch])
    # one member costs some 25 n^3 flops (Hessenberg, about two QR sweeps per eigenvalue, vectors)
    launch = ectx.call_kernel(kern, slots, members, 1, work=ectx.numel([members, n, n, n, i64(25)]))
    bits = launch.read(lay.error)
    b = ectx.builder
    checks = ((eig.NOT_FINITE, status.LINALG_NOT_FINITE), (eig.NO_CONVERGENCE, status.EIGH_NO_CONVERGENCE))
    for bit, code in checks:
        ectx.fail_if(b.icmp_signed("!=", b.and_(bits, i64(bit)), i64(0)), code)
    return outs
