"""ENTRY_LOWERINGS rows of the FFT ops (fft, rfft, irfft): calls into codegen.fft's kernels.

A c2c transform of a 1-D or 2-D operand of the result's dtype, with no padding, is one kernel
call straight from the input's to the output's strides. Everything else runs on a C-contiguous
complex work buffer holding the batch dims (in order) then the transform axis: the input is
copied in (cast to complex, truncated or zero-padded to n), the kernel transforms it in place as
`howmany` contiguous rows, and the result is copied out through a view that puts the axis back
(any output strides). Large batches are split over the entry's threads (whole lane groups).
Plans (header and twiddles), the Bluestein chirp and kernel, and the real passes' roots are
tables the host places (`Host.constant`: module constants on the CPU), and each chunk of a
batch takes its scratch from the host (`Host.scratch`). The kernel entries
(`aot_fft_c2c_{f32,f64}`, the real passes) are external symbols: the JIT registers them before
loading a graph that uses them, shared libraries link the kernel object (see
`kernel_precisions`). A symbolic transform length runs on a plan the kernel module builds at run
time and caches per call site (graph_fft_dynamic.py); the input's length along the axis may be
symbolic when n is given (truncated or padded at run time).

Real transforms of even length n run a complex transform of length n/2 plus the real pre/post
pass of codegen/fft/real.py (as aot/fft/_real.py), the pass split over the entry's threads by
rows (a run-time length picks this path when it is even, with the pass's table computed by the
kernel module); odd lengths and Bluestein half lengths go through the full complex transform:
rfft keeps the first n//2 + 1 outputs, irfft builds the Hermitian extension of its input and
keeps the real part.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir as L

from ir import status
from ir.core import Block, Operation
from ir.logger import get_logger
from ir.symbols import is_static, norm_dim, sympy
from ir.types import ScalarType, TensorType

from .fft import c2r_name, entry_name, r2c_name, use_bluestein
from .fft.names import FLAG_BLOCK, FLAG_LANES, scratch_values
from .fft.plan import (
    bluestein_block,
    bluestein_chirp,
    bluestein_kernel,
    bluestein_size,
    native_bluestein,
    unit_roots,
)
from .fft.planner import plan_names
from .graph_base import Desc, EntryCtx, contiguous_strides, entry_rule
from .graph_fft_common import (  # noqa: F401  (kernel_precisions: re-exported for aot's loaders and linkers)
    LANES_LIMIT_N,
    c2c_flags,
    fft_vlen,
    float_type,
    kernel_precisions,
    plan_globals,
    precision_of,
    work_dtype,
)
from .graph_fft_dynamic import dynamic_c2c
from .graph_fft_split import split_call
from .graph_ops import copy, fill, run_elementwise
from .kernels.common import new_kernel
from .llvm.context import declare
from .llvm.loops import alloca, elem_ptr, i64
from .llvm.types import I32, PTR

log = get_logger(__name__)

def _scale(ectx: EntryCtx, norm: str, n, forward: bool):
    """The normalisation factor: a float for a static n, else a double computed at run time."""
    unit = norm != "ortho" and (norm == "forward") != forward
    if is_static(n):
        return 1.0 if unit else (1.0 / math.sqrt(n) if norm == "ortho" else 1.0 / n)
    b = ectx.builder
    if unit:
        return L.Constant(L.DoubleType(), 1.0)
    nf = b.sitofp(ectx.dim(n), L.DoubleType())
    if norm == "ortho":
        nf = b.call(declare(ectx.module, "llvm.sqrt.f64", L.DoubleType(), [L.DoubleType()]), [nf])
    return b.fdiv(L.Constant(L.DoubleType(), 1.0), nf)


# --- small helpers over descriptors ----------------------------------------------------------------
def _moved(d: Desc, axis: int) -> Desc:
    """A view of `d` with `axis` last."""
    keep = [k for k in range(d.rank) if k != axis] + [axis]
    return Desc(d.dtype, d.data, [d.shape[k] for k in keep], [d.strides[k] for k in keep],
                tuple(d.static_shape[k] for k in keep))


def _last(ectx: EntryCtx, d: Desc, start, length, step: int = 1) -> Desc:
    """d[..., start : start + length*step : step] (static step; start and length dims)."""
    b = ectx.builder
    return Desc(d.dtype, elem_ptr(b, d.dtype, d.data, b.mul(ectx.dim(start), d.strides[-1])),
                d.shape[:-1] + [ectx.dim(length)], d.strides[:-1] + [b.mul(d.strides[-1], i64(step))],
                d.static_shape[:-1] + (length,))


def _const_desc(ectx: EntryCtx, what: str, arr: np.ndarray, cdtype) -> Desc:
    """A 1-D table of `cdtype` as an array operand (the host places it: Host.constant)."""
    arr = arr.astype(cdtype.numpy)
    return Desc(cdtype, ectx.host.constant(what, arr), [i64(arr.size)], [i64(1)], (arr.size,))


def _pointwise(ectx: EntryCtx, ins: list[Desc], out: Desc, build) -> None:
    """out = build(emit, *scalars of ins), elementwise over out's shape (ins broadcast)."""
    block = Block([ScalarType(d.dtype) for d in ins])

    def emit(name, operands, rtype, **attrs):
        op = Operation(name, list(operands), [ScalarType(rtype)], attrs)
        block.append(op)
        return op.results[0]

    res = build(emit, *block.args)
    block.append(Operation("yield", [res], []))
    run_elementwise(ectx, out.static_shape, block, ins, [out])


# --- the transform ---------------------------------------------------------------------------------
def _keep(m, limit):
    """How many input entries a transform reads: min(m, limit), symbolic when either is."""
    if is_static(m) and is_static(limit):
        return min(int(m), int(limit))
    return norm_dim(sympy().Min(m, limit))


def _pads(keep, n) -> bool:
    """Whether entries past `keep` of a length-n buffer may need zeros."""
    if is_static(keep) and is_static(n):
        return keep < n
    return sympy().simplify(sympy().sympify(n) - keep) != 0


def _load_work(ectx: EntryCtx, x: Desc, axis: int, n: int, keep: int, cdtype) -> Desc:
    """A contiguous complex (batch..., n) buffer holding x's first `keep` entries along axis
    (cast to complex), zeros after."""
    work = ectx.alloc(TensorType(cdtype, _batch_shape(x, axis) + (n,)))
    if _pads(keep, n):
        fill(ectx, work, 0)
    if not is_static(keep) or keep > 0:
        _copy_in(ectx, x, lambda d: _last(ectx, _moved(d, axis), 0, keep), _last(ectx, work, 0, keep))
    return work


# x and o of the rules below are arrays (Desc) or, for kernel.fft, its prologue and epilogue
# (graph_fft_fused.py), evaluated per element in the passes that fill the work buffer and write out
def _batch_shape(x, axis: int) -> tuple:
    return tuple(d for k, d in enumerate(x.static_shape) if k != axis)


def _copy_in(ectx: EntryCtx, x, view, dst: Desc) -> None:
    """dst[...] = view(x) cast to dst's dtype (`view` a Desc -> Desc view such as `_moved`)."""
    if isinstance(x, Desc):
        copy(ectx, view(x), dst)
    else:
        x.store(ectx, view, dst)


def _copy_out(ectx: EntryCtx, res: Desc, o, axis: int) -> None:
    """o[...] = res, whose rows run along o's `axis`, as o's dtype (the real part when o is real)."""
    if not isinstance(o, Desc):
        o.store(ectx, res, lambda d: _moved(d, axis))
    elif res.dtype.is_complex and not o.dtype.is_complex:
        _pointwise(ectx, [res], _moved(o, axis), lambda emit, v: emit("real", [v], o.dtype))
    else:
        copy(ectx, res, _moved(o, axis))


def _c2c_call(ectx: EntryCtx, work: Desc, n, forward: bool, scale) -> None:
    """Transform the contiguous rows of length n of `work` in place (a direct plan, or any plan
    built at run time when n is symbolic)."""
    nn = ectx.dim(n)
    _c2c(ectx, work.dtype, n, work.data, work.data, ectx.numel(work.shape[:-1]), (i64(1), nn, i64(1), nn),
         forward, scale)


def _c2c(ectx: EntryCtx, cdtype, n, src, dst, howmany, strides: tuple, forward: bool, scale) -> None:
    """`howmany` transforms of length n (direct plan); strides = (istride, idist, ostride, odist)
    in complex elements, as i64 values. The batch is split into chunks of whole lane groups over
    the entry's threads when large (each chunk takes its own scratch from the host; a failed
    allocation fails the entry with status OUT_OF_MEMORY). A symbolic n runs on a plan built at run
    time (graph_fft_dynamic.py)."""
    b = ectx.builder
    vlen = fft_vlen(ectx, cdtype)
    if _runtime_plan(n, cdtype):
        block = _blue_block(ectx, cdtype, n) if is_static(n) else None
        dynamic_c2c(ectx, cdtype, n, src, dst, howmany, strides, forward, scale, vlen, block)
        return

    def chunks():
        kern = _c2c_chunk(ectx, cdtype, n, forward, scale, vlen)
        slots = [src, dst, *strides, i64(0)]
        launch = ectx.call_kernel(kern, slots, howmany, vlen, work=b.mul(howmany, i64(n)))
        ectx.fail_on_flag(launch, len(slots) - 1, status.OUT_OF_MEMORY)

    split = split_call(ectx, cdtype, n, src, dst, howmany, strides, forward, scale, vlen)
    if split is None:
        chunks()
    elif split[0] is None:
        split[1]()  # one long row, as the eager path splits it
    else:
        with b.if_else(split[0]) as (then, otherwise):
            with then:
                split[1]()
            with otherwise:
                chunks()


def _c2c_chunk(ectx: EntryCtx, cdtype, n: int, forward: bool, scale: float, vlen: int) -> L.Function:
    """kernel(args, lo, hi): transforms lo..hi of the batch described by args = [src, dst, istride,
    idist, ostride, odist, error flag]. Lanes are chosen as aot/fft/_exec.py does. One per
    (precision, n, direction, scale) and module, sharing the plan's constants."""
    key = ("fft_chunk", cdtype, n, forward, scale)
    if key not in ectx.helpers:
        ectx.helpers[key] = _emit_c2c_chunk(ectx, cdtype, n, forward, scale, vlen)
    return ectx.helpers[key]


def _emit_c2c_chunk(ectx: EntryCtx, cdtype, n: int, forward: bool, scale: float, vlen: int) -> L.Function:
    prec, ft = precision_of(cdtype), float_type(cdtype)
    hdr, tw = plan_globals(ectx, cdtype, n)
    lanes_ok = n <= LANES_LIMIT_N
    values = scratch_values(n, vlen, 1, FLAG_LANES | FLAG_BLOCK if lanes_ok else 0)  # c2c_flags' most
    nbytes = values * cdtype.real_dtype.numpy.itemsize
    name = ectx.kernel_name("fft", cdtype, f"n{n}", "forward" if forward else "inverse")
    fn, b = new_kernel(ectx.module, name)
    args, lo, hi = fn.args
    slot = [b.load(b.gep(args, [i64(k)], source_etype=L.IntType(64)), typ=L.IntType(64)) for k in range(6)]
    src, dst = b.inttoptr(slot[0], PTR), b.inttoptr(slot[1], PTR)
    istride, idist, ostride, odist = slot[2:]
    cnt = b.sub(hi, lo)
    with b.if_then(b.icmp_signed(">", cnt, i64(0))):
        scratch, failed = ectx.host.scratch(b, nbytes)
        with b.if_else(failed) as (then, otherwise):
            with then:
                b.store(i64(1), b.gep(args, [i64(6)], source_etype=L.IntType(64)))
            with otherwise:
                flags = c2c_flags(b, forward, i64(n), cnt, idist, vlen)
                kern = declare(ectx.module, entry_name(prec), L.VoidType(),
                                [PTR, PTR, PTR, PTR] + [L.IntType(64)] * 5 + [I32, ft, PTR])
                s = b.gep(src, [b.mul(b.mul(lo, idist), i64(2))], source_etype=ft)
                d = b.gep(dst, [b.mul(b.mul(lo, odist), i64(2))], source_etype=ft)
                b.call(kern, [hdr, tw, s, d, cnt, istride, idist, ostride, odist, b.trunc(flags, I32),
                              L.Constant(ft, scale), scratch])
                ectx.host.free_scratch(b, scratch)
    b.ret_void()
    return fn


def _direct(ectx: EntryCtx, x: Desc, o: Desc, axis: int, n: int, forward: bool, scale: float) -> bool:
    """x -> o in one kernel call through their strides, when no cast, padding, Bluestein or
    multi-dim batch is involved; False when it does not apply."""
    if x.dtype != o.dtype or x.rank > 2 or x.static_shape[axis] != n:
        return False
    if is_static(n) and use_bluestein(n) and not _runtime_plan(n, x.dtype):
        return False
    if x.rank == 1:
        howmany, idist, odist = i64(1), i64(0), i64(0)
    else:
        other = 1 - axis
        howmany, idist, odist = x.shape[other], x.strides[other], o.strides[other]
    _c2c(ectx, x.dtype, n, x.data, o.data, howmany, (x.strides[axis], idist, o.strides[axis], odist),
         forward, scale)
    return True


def _runtime_plan(n, cdtype) -> bool:
    """Whether the transforms of length n run on a plan block through the kernel module's `exec`: a
    symbolic length (the planner builds it when the entry runs), and a Bluestein one the eager
    path runs that way (plan.native_bluestein; its block is a constant: the same bits)."""
    return not is_static(n) or (use_bluestein(n) and native_bluestein(n, cdtype.numpy.itemsize))


def _blue_block(ectx: EntryCtx, cdtype, n: int) -> L.Value:
    """The constant plan.bluestein_block of length n, once per entry (as plan_globals' tables)."""
    key = ("fft_blue", cdtype, n)
    if key not in ectx.helpers:
        ectx.helpers[key] = ectx.host.constant("fft_blue", bluestein_block(n, cdtype.numpy))
    return ectx.helpers[key]


def _transform(ectx: EntryCtx, work: Desc, n: int, forward: bool, scale: float) -> Desc:
    """scale * DFT of each row of `work` (contiguous (batch..., n)); returns where the result is."""
    if _runtime_plan(n, work.dtype) or not use_bluestein(n):  # run-time plans choose Bluestein themselves
        _c2c_call(ectx, work, n, forward, scale)
        return work
    return _bluestein(ectx, work, n, forward, scale)


def _bluestein(ectx: EntryCtx, work: Desc, n: int, forward: bool, scale: float) -> Desc:
    """pocketfft's fftblue: X = conj(c) * ((x * conj(c)) (*) c) with c_k = exp(i pi k^2 / n), the
    circular convolution of length n2 >= 2n - 1 run on direct plans; backward = conj(fwd(conj x))."""
    cdtype = work.dtype
    n2 = bluestein_size(n)
    cc = _const_desc(ectx, "fft_chirp", np.conj(bluestein_chirp(n)), cdtype)
    kf = _const_desc(ectx, "fft_bkern", bluestein_kernel(n), cdtype)
    big = ectx.alloc(TensorType(cdtype, work.static_shape[:-1] + (n2,)))
    fill(ectx, big, 0)

    def pre(emit, x, c):
        return emit("mul", [x if forward else emit("conj", [x], cdtype), c], cdtype)

    _pointwise(ectx, [work, cc], _last(ectx, big, 0, n), pre)
    _c2c_call(ectx, big, n2, True, 1.0)
    _pointwise(ectx, [big, kf], big, lambda emit, v, k: emit("mul", [v, k], cdtype))
    _c2c_call(ectx, big, n2, False, 1.0)

    def post(emit, v, c):
        r = emit("mul", [v, c], cdtype)
        if not forward:
            r = emit("conj", [r], cdtype)
        if scale != 1.0:
            s = emit("constant", [], cdtype, value=complex(scale), dtype=cdtype)
            r = emit("mul", [r, s], cdtype)
        return r

    _pointwise(ectx, [_last(ectx, big, 0, n), cc], work, post)
    return work


def _out(ectx: EntryCtx, op, out) -> Desc:
    return out[0] if out[0] is not None else ectx.alloc(op.results[0].type)


def _axis_n(op, x: Desc, default) -> tuple:
    """(axis, input length along it, transform length n): dims (int or sympy)."""
    axis = op.attrs["axis"] % x.rank
    m = x.static_shape[axis]
    n = op.attrs["n"]
    return axis, m, norm_dim(default(m) if n is None else n)


@entry_rule("fft")
def _fft(ectx: EntryCtx, op, x, out):
    axis, m, n = _axis_n(op, x, lambda m: m)
    forward = not op.attrs["inverse"]
    cdtype = work_dtype(op)
    scale = _scale(ectx, op.attrs["norm"], n, forward)
    o = _out(ectx, op, out)
    if isinstance(x, Desc) and isinstance(o, Desc) and _direct(ectx, x, o, axis, n, forward, scale):
        return [o]
    work = _load_work(ectx, x, axis, n, _keep(m, n), cdtype)
    res = _transform(ectx, work, n, forward, scale)
    _copy_out(ectx, res, o, axis)
    return [o]


@entry_rule("rfft")
def _rfft(ectx: EntryCtx, op, x, out):
    axis, m, n = _axis_n(op, x, lambda m: m)
    cdtype = work_dtype(op)
    scale = _scale(ectx, op.attrs["norm"], n, True)
    o = _out(ectx, op, out)
    if _half_length(n):
        _rfft_half(ectx, x, o, axis, _keep(m, n), n, scale)
    elif not is_static(n):  # a run-time length: the half-length path when it is even
        with ectx.builder.if_else(_is_even(ectx, n)) as (even, odd):
            with even:
                _rfft_half(ectx, x, o, axis, _keep(m, n), n, scale)
            with odd:
                _rfft_full(ectx, x, o, axis, _keep(m, n), n, scale, cdtype)
    else:
        _rfft_full(ectx, x, o, axis, _keep(m, n), n, scale, cdtype)
    return [o]


def _rfft_full(ectx: EntryCtx, x, o, axis: int, keep, n, scale, cdtype) -> None:
    work = _load_work(ectx, x, axis, n, keep, cdtype)
    res = _transform(ectx, work, n, True, scale)
    _copy_out(ectx, _last(ectx, res, 0, n // 2 + 1), o, axis)


def _is_even(ectx: EntryCtx, n):
    b = ectx.builder
    return b.icmp_signed("==", b.and_(ectx.dim(n), i64(1)), i64(0))


@entry_rule("irfft")
def _irfft(ectx: EntryCtx, op, x, out):
    """Odd n (or a Bluestein half length): the length-n Hermitian extension of x's first
    n//2 + 1 entries, inverse c2c, real part (the imaginary parts of X_0 and, for even n,
    X_{n/2} only reach the dropped imaginary part)."""
    axis, m, n = _axis_n(op, x, lambda m: 2 * (m - 1))
    cdtype = work_dtype(op)
    scale = _scale(ectx, op.attrs["norm"], n, False)
    o = _out(ectx, op, out)
    if _half_length(n):
        _irfft_half(ectx, x, o, axis, _keep(m, n // 2 + 1), n, scale)
    elif not is_static(n):  # a run-time length: the half-length path when it is even
        with ectx.builder.if_else(_is_even(ectx, n)) as (even, odd):
            with even:
                _irfft_half(ectx, x, o, axis, _keep(m, n // 2 + 1), n, scale)
            with odd:
                _irfft_full(ectx, x, o, axis, m, n, scale, cdtype)
    else:
        _irfft_full(ectx, x, o, axis, m, n, scale, cdtype)
    return [o]


def _irfft_full(ectx: EntryCtx, x, o, axis: int, m, n, scale, cdtype) -> None:
    work = _load_work(ectx, x, axis, n, _keep(m, n // 2 + 1), cdtype)
    mirror = (n - 1) // 2  # X_{n-j} = conj(X_j), j = 1 .. (n-1)//2
    if not is_static(mirror) or mirror > 0:
        src = _last(ectx, work, 1, mirror)
        _pointwise(ectx, [src], _last(ectx, work, n - 1, mirror, -1),
                   lambda emit, v: emit("conj", [v], cdtype))
    res = _transform(ectx, work, n, False, scale)
    _copy_out(ectx, res, o, axis)


# --- real transforms of even length: a half-length c2c plus the real pass (aot/fft/_real.py) -------
def _half_length(n) -> bool:
    """Whether a real transform of static length runs on the half-length complex one (a run-time
    length decides when it runs: even lengths do)."""
    return is_static(n) and n % 2 == 0 and not use_bluestein(n // 2)


def _real_view(ectx: EntryCtx, d: Desc, n) -> Desc:
    """The C-contiguous complex buffer `d` (batch..., k) as reals (batch..., n), n <= 2k."""
    b = ectx.builder
    return Desc(d.dtype.real_dtype, d.data, d.shape[:-1] + [ectx.dim(n)],
                [b.mul(s, i64(2)) for s in d.strides[:-1]] + [i64(1)], d.static_shape[:-1] + (n,))


def _half_roots(ectx: EntryCtx, n, cdtype):
    """w^k = exp(-2 pi i k/n), k < n/2: the table of the real passes (a constant for a static n,
    computed by the kernel module's planner for a run-time one)."""
    if is_static(n):
        roots = unit_roots(-np.arange(n // 2, dtype=np.int64), n).astype(cdtype.numpy)
        return ectx.host.constant("fft_rw", roots)
    table = ectx.alloc(TensorType(cdtype, (n // 2,)))
    rc = ectx.host.call_planner(plan_names(precision_of(cdtype))["roots"], I32, [L.IntType(64), PTR],
                                [ectx.dim(n), table.data])
    ectx.fail_if(ectx.builder.icmp_signed("!=", rc, L.Constant(I32, 0)), status.OUT_OF_MEMORY)
    return table.data


def _work_or_output(ectx: EntryCtx, o: Desc, axis: int, ttype: TensorType):
    """A C-contiguous buffer of type `ttype` for a result that belongs in `o`: o's own memory
    when the axis is o's last and o is C-contiguous (checked at run time), else a temporary.
    Returns (buffer, in_output: i1 or None); `_to_output` copies a temporary over."""
    b = ectx.builder
    if axis != o.rank - 1 or not isinstance(o, Desc):
        return ectx.alloc(ttype), None
    ok, expect = L.Constant(L.IntType(1), 1), i64(1)
    for k in range(o.rank - 1, -1, -1):
        good = b.or_(b.icmp_signed("==", o.shape[k], i64(1)), b.icmp_signed("==", o.strides[k], expect))
        ok, expect = b.and_(ok, good), b.mul(expect, o.shape[k])
    slot = alloca(ectx.alloca_builder, PTR)
    with b.if_else(ok) as (then, otherwise):
        with then:
            b.store(o.data, slot)
        with otherwise:
            b.store(ectx.alloc(ttype).data, slot)
    shape = [ectx.dim(d) for d in ttype.shape]
    return Desc(ttype.dtype, b.load(slot, typ=PTR), shape, contiguous_strides(b, shape), tuple(ttype.shape)), ok


def _to_output(ectx: EntryCtx, res: Desc, o: Desc, axis: int, in_output) -> None:
    if in_output is None:
        _copy_out(ectx, res, o, axis)
        return
    with ectx.builder.if_then(ectx.builder.not_(in_output)):
        copy(ectx, res, o)


def _rfft_half(ectx: EntryCtx, x: Desc, o: Desc, axis: int, keep: int, n: int, scale: float) -> None:
    """Rows z_j = x_2j + i x_2j+1 in a (batch..., h+1) buffer, DFT_h, then the r2c pass in place."""
    cdtype, h = o.dtype, n // 2
    work, in_output = _work_or_output(ectx, o, axis, TensorType(cdtype, _batch_shape(x, axis) + (h + 1,)))
    reals = _real_view(ectx, work, n)
    if not is_static(keep) or not is_static(n):
        if _pads(keep, n):
            fill(ectx, reals, 0)
    elif keep < n:
        fill(ectx, _last(ectx, reals, keep, n - keep), 0)
    if not is_static(keep) or keep > 0:
        _copy_in(ectx, x, lambda d: _last(ectx, _moved(d, axis), 0, keep), _last(ectx, reals, 0, keep))
    howmany = ectx.numel(work.shape[:-1])
    row = ectx.dim(h + 1)
    _c2c(ectx, cdtype, h, work.data, work.data, howmany, (i64(1), row, i64(1), row), True, 1.0)
    _real_pass(ectx, "r2c", cdtype, h, scale, [work.data, row, _half_roots(ectx, n, cdtype)], howmany)
    _to_output(ectx, work, o, axis, in_output)


def _irfft_half(ectx: EntryCtx, x: Desc, o: Desc, axis: int, keep: int, n: int, scale: float) -> None:
    """The c2r pass from x's first h+1 entries into z (batch..., h), IDFT_h, then reals x_2j = Re
    z_j, x_2j+1 = Im z_j."""
    cdtype, h = o.dtype.complex_dtype, n // 2
    spec = _load_work(ectx, x, axis, h + 1, keep, cdtype)
    z, in_output = _work_or_output(ectx, o, axis, TensorType(cdtype, spec.static_shape[:-1] + (h,)))
    howmany = ectx.numel(spec.shape[:-1])
    hh = ectx.dim(h)
    _real_pass(ectx, "c2r", cdtype, h, 1.0, [spec.data, ectx.dim(h + 1), z.data, hh, _half_roots(ectx, n, cdtype)],
               howmany)
    _c2c(ectx, cdtype, h, z.data, z.data, howmany, (i64(1), hh, i64(1), hh), False, scale)
    _to_output(ectx, _real_view(ectx, z, n), o, axis, in_output)


def _real_pass(ectx: EntryCtx, which: str, cdtype, h, scale, slots: list, howmany) -> None:
    """The r2c post pass (slots: rows, row distance, roots) or the c2r pre pass (slots: spectrum,
    its row distance, z, its row distance, roots) over `howmany` rows, split over the entry's
    threads when large; h and the scale (float or double value) are dims/values of the entry."""
    key = ("fft_real", which, cdtype)
    if key not in ectx.helpers:
        ectx.helpers[key] = _emit_real_chunk(ectx, which, cdtype)
    b = ectx.builder
    if not isinstance(scale, L.Value):
        scale = L.Constant(L.DoubleType(), float(scale))
    hh = ectx.dim(h)
    ectx.call_kernel(ectx.helpers[key], slots + [hh, b.bitcast(scale, L.IntType(64))], howmany, 1,
                     work=b.mul(howmany, hh))


def _emit_real_chunk(ectx: EntryCtx, which: str, cdtype) -> L.Function:
    """kernel(args, lo, hi): rows lo..hi of the real pass `which` (see _real_pass; h and the
    scale's double bits follow the pass's slots)."""
    ft, prec, I64 = float_type(cdtype), precision_of(cdtype), L.IntType(64)
    fn, b = new_kernel(ectx.module, ectx.kernel_name(f"fft_{which}", cdtype))
    args, lo, hi = fn.args
    nslots = 3 if which == "r2c" else 5
    slot = [b.load(b.gep(args, [i64(k)], source_etype=I64), typ=I64) for k in range(nslots + 2)]
    h, scale = slot[nslots], b.bitcast(slot[nslots + 1], L.DoubleType())
    if ft != L.DoubleType():
        scale = b.fptrunc(scale, ft)

    def rows(k):  # the pointer in slot k advanced to row lo (its row distance is in slot k + 1)
        return b.gep(b.inttoptr(slot[k], PTR), [b.mul(b.mul(lo, slot[k + 1]), i64(2))], source_etype=ft)

    cnt = b.sub(hi, lo)
    if which == "r2c":
        post = declare(ectx.module, r2c_name(prec), L.VoidType(), [PTR, I64, I64, I64, PTR, ft])
        b.call(post, [rows(0), h, cnt, slot[1], b.inttoptr(slot[2], PTR), scale])
    else:
        pre = declare(ectx.module, c2r_name(prec), L.VoidType(), [PTR, I64, PTR, I64, I64, I64, PTR])
        b.call(pre, [rows(0), slot[1], rows(2), slot[3], h, cnt, b.inttoptr(slot[4], PTR)])
    b.ret_void()
    return fn
