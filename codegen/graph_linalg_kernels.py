"""ENTRY_LOWERINGS rows of the numpy.linalg factorisations (aot/ops/linalg_kernels.py): one kernel
call per op, threaded over the batch members (kernels/linalg_*.py), with a work buffer per member
the host allocates, and the singular / not-positive-definite error slot turned into the entry's
status (ir/status.py: LinAlgError). solve of static sizes up to 16 takes the unrolled kernel of
kernels/linalg_small.py (no work buffer)."""

from __future__ import annotations

from ir import status
from ir.symbols import is_static, norm_dim, sympy
from ir.types import TensorType

from .graph_base import Desc, EntryCtx, entry_rule
from .kernels import linalg_cholesky as chol
from .kernels import linalg_jacobi as jacobi
from .kernels import linalg_lu as lu
from .kernels import linalg_qr as qr
from .kernels import linalg_small as small
from .kernels import linalg_svd as svd
from .kernels.common import broadcast_flags
from .kernels.linalg_common import Layout, compute_dtype
from .llvm.loops import i64


def _outputs(ectx: EntryCtx, op, out: list) -> list[Desc]:
    return [o if o is not None else ectx.alloc(r.type) for r, o in zip(op.results, out, strict=True)]


def batch_slots(ectx: EntryCtx, layout: Layout, descs: list[Desc], core_ranks: list[int], batch: tuple,
                scalars: list) -> list:
    """The argument block of a batched kernel (kernels/linalg_common.py Layout): each operand's
    leading dims broadcast against the batch shape `batch` (stride 0 where they do)."""
    assert layout.n_operands == len(descs) and layout.rank == len(batch) and layout.n_scalars == len(scalars)
    slots = [d.data for d in descs] + [ectx.dim(d) for d in batch]
    for d, c in zip(descs, core_ranks, strict=True):
        lead = d.static_shape[: d.rank - c]
        flags = broadcast_flags(lead, batch)
        skip = len(batch) - len(lead)
        slots += [i64(0) if flags[k] else d.strides[k - skip] for k in range(len(batch))]
    for d, c in zip(descs, core_ranks, strict=True):
        slots += list(d.strides[d.rank - c:]) + [i64(0)] * (2 - c)
    return slots + list(scalars) + [i64(0)]


def _kernel(ectx: EntryCtx, op, ins: list[Desc], batch: tuple, build, variant: tuple = ()):
    """The op's kernel, emitted once per module for equal ops (dtypes, attributes, batch rank, and
    `variant`: what else the kernel is built for): build(name) -> L.Function."""
    key = ("linalg.kernel", op.name, tuple(d.dtype for d in ins), tuple(r.type.dtype for r in op.results),
           tuple(sorted(op.attrs.items())), len(batch), variant)
    fn = ectx.helpers.get(key)
    if fn is None:
        fn = ectx.helpers[key] = build(ectx.kernel_name(op.name, *dict.fromkeys(d.dtype for d in ins)))
    return fn


def _launch(ectx: EntryCtx, kern, slots: list, batch: tuple, cost: list):
    """Run the kernel over the batch members; `cost`: the factors of one member's work."""
    members = ectx.numel([ectx.dim(d) for d in batch])
    return ectx.call_kernel(kern, slots, members, 1, work=ectx.numel([members, *cost]))


@entry_rule("det", "slogdet", "inv", "solve")
def _lu(ectx: EntryCtx, op, *ins, out):
    outs = _outputs(ectx, op, out)
    mode = op.name
    res = op.results[0].type
    dt = res.dtype
    n_s = op.operands[0].type.shape[-1]
    if mode in ("det", "slogdet"):
        batch, k_s = tuple(res.shape), 0
    else:
        batch = tuple(res.shape[:-2])
        k_s = n_s if mode == "inv" else op.operands[1].type.shape[-1]
    if mode == "solve" and small.applies(n_s, k_s, dt):  # unrolled for the size, no work buffer
        return _small_solve(ectx, op, ins, outs, batch, n_s, k_s)
    work = ectx.alloc(TensorType(compute_dtype(dt), batch + (n_s, n_s + k_s)))
    descs = [*ins, *outs, work]
    ranks = [2] * len(ins) + [0 if mode in ("det", "slogdet") else 2] * len(outs) + [2]
    lay = lu.layout(mode, len(batch))
    n, k = ectx.dim(n_s), ectx.dim(k_s)
    nan = op.attrs.get("singular") == "nan"
    kern = _kernel(ectx, op, ins, batch, lambda name: lu.emit_lu(
        ectx.module, ectx.target, name, mode, dt, [d.dtype for d in ins], len(batch), ectx.helpers, nan))
    launch = _launch(ectx, kern, batch_slots(ectx, lay, descs, ranks, batch, [n, k]), batch,
                     [n, n, ectx.builder.add(n, k)])
    if mode in ("inv", "solve") and not nan:
        ectx.fail_on_flag(launch, lay.error, status.SINGULAR_MATRIX)
    return outs


def _small_solve(ectx: EntryCtx, op, ins: list, outs: list, batch: tuple, n: int, k: int) -> list:
    lay = small.layout(len(batch))
    kern = _kernel(ectx, op, ins, batch, lambda name: small.emit_small_solve(
        ectx.module, ectx.target, name, n, k, outs[0].dtype, [d.dtype for d in ins], len(batch), ectx.helpers),
        variant=("unrolled", n, k))
    launch = _launch(ectx, kern, batch_slots(ectx, lay, [*ins, *outs], [2, 2, 2], batch, []), batch,
                     [i64(n * n * (n + k))])
    ectx.fail_on_flag(launch, lay.error, status.SINGULAR_MATRIX)
    return outs


@entry_rule("cholesky")
def _cholesky(ectx: EntryCtx, op, a, out):
    outs = _outputs(ectx, op, out)
    res = op.results[0].type
    batch, n_s = tuple(res.shape[:-2]), res.shape[-1]
    work = ectx.alloc(TensorType(compute_dtype(res.dtype), batch + (n_s, n_s)))
    lay = chol.layout(len(batch))
    n = ectx.dim(n_s)
    upper = bool(op.attrs["upper"])
    kern = _kernel(ectx, op, [a], batch, lambda name: chol.emit_cholesky(
        ectx.module, ectx.target, name, res.dtype, a.dtype, upper, len(batch), ectx.helpers))
    slots = batch_slots(ectx, lay, [a, *outs, work], [2, 2, 2], batch, [n])
    launch = _launch(ectx, kern, slots, batch, [n, n, n])
    ectx.fail_on_flag(launch, lay.error, status.NOT_POSITIVE_DEFINITE)
    return outs


@entry_rule("qr")
def _qr(ectx: EntryCtx, op, a, out):
    outs = _outputs(ectx, op, out)
    q_t = op.results[0].type
    batch = tuple(q_t.shape[:-2])
    m_s, n_s = op.operands[0].type.shape[-2:]
    mq_s = q_t.shape[-1]
    dt = q_t.dtype
    work = ectx.alloc(TensorType(compute_dtype(dt), batch + (m_s + 1, n_s + 1)))
    qwork = ectx.alloc(TensorType(compute_dtype(dt), batch + (m_s + 1, mq_s)))
    lay = qr.layout(len(batch))
    m, n, mq = ectx.dim(m_s), ectx.dim(n_s), ectx.dim(mq_s)
    kern = _kernel(ectx, op, [a], batch, lambda name: qr.emit_qr(
        ectx.module, ectx.target, name, dt, a.dtype, len(batch), ectx.helpers))
    slots = batch_slots(ectx, lay, [a, *outs, work, qwork], [2] * 5, batch, [m, n, mq])
    _launch(ectx, kern, slots, batch, [m, n, ectx.builder.add(n, mq)])
    return outs


@entry_rule("eigh", "eigvalsh")
def _eigh(ectx: EntryCtx, op, a, out):
    outs = _outputs(ectx, op, out)
    vectors = op.name == "eigh"
    at = op.operands[0].type
    batch, n_s = tuple(at.shape[:-2]), at.shape[-1]
    dt = op.results[-1].type.dtype if vectors else _vector_dtype(op)
    work = ectx.alloc(TensorType(compute_dtype(dt), batch + ((2 if vectors else 1) * n_s, n_s)))
    lay = jacobi.layout(vectors, len(batch))
    n = ectx.dim(n_s)
    kern = _kernel(ectx, op, [a], batch, lambda name: jacobi.emit_eigh(
        ectx.module, ectx.target, name, dt, a.dtype, op.attrs["uplo"], vectors, len(batch), ectx.helpers))
    ranks = [2, 1, 2, 2] if vectors else [2, 1, 2]
    slots = batch_slots(ectx, lay, [a, *outs, work], ranks, batch, [n])
    launch = _launch(ectx, kern, slots, batch, [n, n, n, i64(8)])
    ectx.fail_on_flag(launch, lay.error, status.EIGH_NO_CONVERGENCE)
    return outs


@entry_rule("svd", "svdvals")
def _svd(ectx: EntryCtx, op, a, out):
    outs = _outputs(ectx, op, out)
    vectors = op.name == "svd"
    full = bool(op.attrs.get("full_matrices", False))
    at = op.operands[0].type
    batch, (m_s, n_s) = tuple(at.shape[:-2]), at.shape[-2:]
    dt = op.results[0].type.dtype if vectors else _vector_dtype(op)
    size = svd.work_size(m_s, n_s, full, vectors, smin, smax)
    work = ectx.alloc(TensorType(compute_dtype(dt), batch + (size,)))
    lay = svd.layout(vectors, len(batch))
    m, n = ectx.dim(m_s), ectx.dim(n_s)
    lstsq = bool(op.attrs.get("lstsq", False))
    kern = _kernel(ectx, op, [a], batch, lambda name: svd.emit_svd(
        ectx.module, ectx.target, name, dt, a.dtype, full, vectors, len(batch), ectx.helpers, lstsq=lstsq))
    ranks = [2, 2, 1, 2, 1] if vectors else [2, 1, 1]
    slots = batch_slots(ectx, lay, [a, *outs, work], ranks, batch, [m, n])
    launch = _launch(ectx, kern, slots, batch, [m, n, n, i64(8)])
    ectx.fail_on_flag(launch, lay.error, status.LSTSQ_NO_CONVERGENCE if lstsq else status.SVD_NO_CONVERGENCE)
    return outs


def _vector_dtype(op):
    """The dtype of the vectors the op would have (the kernels' out_dt): the real result's complex
    type for complex input."""
    rt = op.results[0].type.dtype
    return rt.complex_dtype if op.operands[0].type.dtype.is_complex else rt


def smin(a, b):
    a, b = norm_dim(a), norm_dim(b)
    return min(a, b) if is_static(a) and is_static(b) else norm_dim(sympy().Min(a, b))


def smax(a, b):
    a, b = norm_dim(a), norm_dim(b)
    return max(a, b) if is_static(a) and is_static(b) else norm_dim(sympy().Max(a, b))
