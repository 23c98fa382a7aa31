"""Helpers the FFT rule modules share (graph_fft.py, graph_fft_dynamic.py, graph_fft_fused.py):
precisions and work dtypes of the transforms, the kernel flags (lanes) of a chunk of rows.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import complex64
from ir.structural import FFT_KINDS, inner_fft

from .fft.names import FLAG_BLOCK, FLAG_FORWARD, FLAG_LANES
from .fft.plan import make_cplan
from .graph_base import EntryCtx
from .llvm.loops import i64

FFT_OPS = FFT_KINDS  # the FFT ops of ir (fft, rfft, irfft); kernel.fft wraps one of them
LANES_MAX_N = 32  # as aot/fft/_exec.py: contiguous rows run across lanes when short or odd
LANES_LIMIT_N = 1 << 14


def precision_of(cdtype) -> str:
    return "f32" if cdtype == complex64 else "f64"


def float_type(cdtype) -> L.Type:
    """The LLVM type of one part of complex dtype `cdtype`."""
    return L.FloatType() if cdtype == complex64 else L.DoubleType()


def work_dtype(op):
    """The complex dtype the transform computes in."""
    dt = op.results[0].type.dtype
    return dt if dt.is_complex else dt.complex_dtype


def kernel_precisions(func) -> set[str]:
    """The precisions ("f32", "f64") of the FFT kernel modules ir function `func` calls into:
    loaders and linkers make those modules' symbols available to the graph's object."""
    return {precision_of(work_dtype(inner_fft(op) if op.name == "kernel.fft" else op))
            for op in func.walk() if op.name in FFT_OPS or op.name == "kernel.fft"}


def fft_vlen(ectx: EntryCtx, cdtype) -> int:
    """The lanes of the kernel module's transforms in `cdtype` (as its own choice)."""
    return max(2, ectx.target.vector_len(cdtype.real_dtype.numpy.itemsize * 8))


def c2c_flags(b: L.IRBuilder, forward: bool, n, cnt, idist, vlen: int):
    """The kernel's flags for `cnt` rows of length n (i64 values): lanes as aot/fft/_exec.py
    chooses them (short or odd rows, or long smooth ones that are neighbours, up to
    LANES_LIMIT_N: its scratch is sized for lanes below that, in lane blocks: names.scratch_values
    with idist 1)."""
    lanes = b.and_(b.icmp_signed(">=", cnt, i64(vlen)), b.icmp_signed("<=", n, i64(LANES_LIMIT_N)))
    long_smooth = b.and_(b.icmp_signed("==", b.srem(n, i64(vlen)), i64(0)), b.icmp_signed(">", n, i64(LANES_MAX_N)))
    lanes = b.and_(lanes, b.or_(b.not_(long_smooth), b.icmp_signed("==", idist, i64(1))))
    return b.or_(i64(FLAG_FORWARD if forward else 0), b.select(lanes, i64(FLAG_LANES | FLAG_BLOCK), i64(0)))


def plan_globals(ectx: EntryCtx, cdtype, n: int) -> tuple:
    """The (header, twiddles) constants of the direct plan of length n, once per entry."""
    key = ("fft_plan", cdtype, n)
    if key not in ectx.helpers:
        plan = make_cplan(n, cdtype.numpy)
        ectx.helpers[key] = (ectx.host.constant("fft_plan", plan.header),
                             ectx.host.constant("fft_tw", plan.twiddles))
    return ectx.helpers[key]
