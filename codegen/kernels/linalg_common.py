"""Shared pieces of the numpy.linalg kernels (linalg_lu, linalg_cholesky, linalg_qr, linalg_jacobi).

Each kernel is `void k(ptr args, i64 begin, i64 end)` over a range of batch members (the matrices
of a stack (..., M, N)): members are independent, so the host threads the range. The argument
block (`BatchArgs`) holds, in order: the operands' data pointers; the R batch dims; per operand
its R batch strides (0 where it broadcasts); per operand its two core strides (rows, columns;
0 where the operand has fewer core dims); the kernel's integer scalars (sizes); one error slot.
Strides are in elements, so any numpy view works without a copy. The kernels copy a member into
a contiguous row-major work matrix (a slice of a work operand the host allocates), factor it
there and write the results through the output strides.

`Arith` is arithmetic on one dtype's elements, real or complex (a complex value is a (re, im)
pair, as everywhere in codegen), in scalars (lanes 1) or vectors; the kernels are written once
against it. `strip` runs a body over a contiguous index range in full vectors and one masked tail.
"""

from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir as L

from ir.dtypes import DType, complex128, float64
from ir.records import record

from ..llvm.builder import Builder
from ..llvm.cast import convert
from ..llvm.context import LowerCtx
from ..llvm.loops import (
    alloca,
    elem_ptr,
    for_range,
    i64,
    lane_mask,
    load_scalar,
    load_vector,
    store_scalar,
    store_vector,
)
from ..llvm.mathfns import libm
from ..llvm.types import I64, PTR, value_type
from ..targets.base import Target
from .common import new_kernel


class KernelBuilder:
    """One kernel function being emitted: `b` emits the body, `var` makes stack slots in the
    entry block (so that LLVM promotes them to registers), `finish` closes the function."""

    def __init__(self, module: L.Module, target: Target, name: str, helpers: dict,
                 ftype: L.FunctionType | None = None):
        if ftype is None:  # a kernel: (args, begin, end)
            self.fn, self.b = new_kernel(module, name)
            self.args, self.begin, self.end = self.fn.args
        else:  # an internal helper function the kernels call
            self.fn = L.Function(module, ftype, name=name)
            self.fn.linkage = "internal"
            self.b = Builder(self.fn.append_basic_block("entry"))
        self.module, self.target, self.helpers = module, target, helpers
        self.ab = Builder(self.b.block)  # the entry block holds the allocas
        self.body = self.fn.append_basic_block("body")
        self.b.position_at_end(self.body)

    def slot(self, i: int):
        return self.b.load(self.slot_ptr(i), typ=I64)

    def slot_ptr(self, i: int):
        return self.b.gep(self.args, [i64(i)], source_etype=I64)

    def var(self, typ: L.Type, init=None) -> Var:
        v = Var(self.b, alloca(self.ab, typ))
        if init is not None:
            v.set(init)
        return v

    def finish(self, ret=None) -> L.Function:
        if ret is None:
            self.b.ret_void()
        else:
            self.b.ret(ret)
        self.ab.branch(self.body)
        return self.fn

    def lanes(self, dt: DType) -> int:
        """Vector lanes for `dt` (a complex vector of n lanes is 2n real components in memory)."""
        bits = dt.real_dtype.bits * (2 if dt.is_complex else 1)
        return self.target.vector_len(bits)

    def arith(self, dt: DType, lanes: int = 1) -> Arith:
        return Arith(self, dt, lanes)


@record
class Var:
    """A mutable stack slot (one LLVM value)."""

    b: L.IRBuilder
    ptr: L.Value

    def get(self):
        return self.b.load(self.ptr, typ=self.ptr.slot_type)

    def set(self, v) -> None:
        self.b.store(v, self.ptr)


class PairVar:
    """A mutable complex value: two stack slots."""

    def __init__(self, re: Var, im: Var):
        self.re, self.im = re, im

    def get(self):
        return (self.re.get(), self.im.get())

    def set(self, v) -> None:
        self.re.set(v[0])
        self.im.set(v[1])


class Arith:
    """Arithmetic on elements of `dt` (real: LLVM values; complex: (re, im) pairs), `lanes` wide."""

    def __init__(self, kb: KernelBuilder, dt: DType, lanes: int = 1):
        self.kb, self.b, self.dt, self.lanes = kb, kb.b, dt, lanes
        self.rt = dt.real_dtype
        self.cplx = dt.is_complex
        self.ctx = LowerCtx(kb.module, kb.b, kb.target, lanes, kb.helpers)
        self.rtype = value_type(self.rt, lanes)

    # --- constants and variables ------------------------------------------------------------------
    def rconst(self, x: float):
        return self.ctx.const(self.rt, x)

    def const(self, x: complex):
        return (self.rconst(x.real), self.rconst(x.imag)) if self.cplx else self.rconst(complex(x).real)

    def zero(self):
        return self.const(0.0)

    def one(self):
        return self.const(1.0)

    def var(self, init=None):
        if self.cplx:
            v = PairVar(self.kb.var(self.rtype), self.kb.var(self.rtype))
        else:
            v = self.kb.var(self.rtype)
        if init is not None:
            v.set(init)
        return v

    def rvar(self, init=None) -> Var:
        return self.kb.var(self.rtype, init)

    def splat(self, x):
        """A vector of `x`, a scalar value of the same dtype."""
        if self.lanes == 1:
            return x
        return tuple(self.ctx.splat(p) for p in x) if self.cplx else self.ctx.splat(x)

    # --- parts ----------------------------------------------------------------------------------
    def real(self, x):
        return x[0] if self.cplx else x

    def imag(self, x):
        return x[1] if self.cplx else self.rconst(0.0)

    def from_real(self, r):
        return (r, self.rconst(0.0)) if self.cplx else r

    def conj(self, x):
        return (x[0], self.b.fneg(x[1])) if self.cplx else x

    def select(self, cond, x, y):
        s = self.b.select
        return (s(cond, x[0], y[0]), s(cond, x[1], y[1])) if self.cplx else s(cond, x, y)

    # --- real helpers -----------------------------------------------------------------------------
    def rfma(self, a, b, c):
        """a * b + c (fused where the target has FMA)."""
        return self.ctx.intrinsic("fmuladd", [a, b, c])

    def rsqrt(self, r):
        return self.ctx.intrinsic("sqrt", [r])

    def rabs(self, r):
        return self.ctx.intrinsic("fabs", [r])

    def rmax(self, a, b):
        return self.b.select(self.b.fcmp_ordered(">", a, b), a, b)

    def rlog(self, r):
        return libm(self.ctx, "log", r)

    def rexp(self, r):
        return libm(self.ctx, "exp", r)

    def rhypot(self, a, b):
        """sqrt(a^2 + b^2) without overflow or underflow in between (scaled by the larger part)."""
        bld = self.b
        a, b = self.rabs(a), self.rabs(b)
        big = self.rmax(a, b)
        small = bld.select(bld.fcmp_ordered(">", a, b), b, a)
        ratio = bld.fdiv(small, big)
        r = bld.fmul(big, self.rsqrt(self.rfma(ratio, ratio, self.rconst(1.0))))
        # big == 0: 0 (ratio is nan); big inf: inf; a nan part: nan
        r = bld.select(bld.fcmp_ordered("==", big, self.rconst(0.0)), self.rconst(0.0), r)
        r = bld.select(bld.fcmp_ordered("==", big, self.rconst(float("inf"))), big, r)
        nan = bld.or_(bld.fcmp_unordered("uno", a, a), bld.fcmp_unordered("uno", b, b))
        return bld.select(nan, bld.fadd(a, b), r)

    # --- arithmetic ----------------------------------------------------------------------------
    def add(self, x, y):
        f = self.b.fadd
        return (f(x[0], y[0]), f(x[1], y[1])) if self.cplx else f(x, y)

    def sub(self, x, y):
        f = self.b.fsub
        return (f(x[0], y[0]), f(x[1], y[1])) if self.cplx else f(x, y)

    def neg(self, x):
        f = self.b.fneg
        return (f(x[0]), f(x[1])) if self.cplx else f(x)

    def mul(self, x, y):
        b = self.b
        if not self.cplx:
            return b.fmul(x, y)
        re = b.fsub(b.fmul(x[0], y[0]), b.fmul(x[1], y[1]))
        return (re, b.fadd(b.fmul(x[0], y[1]), b.fmul(x[1], y[0])))

    def muladd(self, x, y, z):
        """x * y + z"""
        if not self.cplx:
            return self.rfma(x, y, z)
        f, n = self.rfma, self.b.fneg
        return (f(n(x[1]), y[1], f(x[0], y[0], z[0])), f(x[1], y[0], f(x[0], y[1], z[1])))

    def mulsub(self, z, x, y):
        """z - x * y"""
        if not self.cplx:
            return self.rfma(self.b.fneg(x), y, z)
        f, n = self.rfma, self.b.fneg
        return (f(x[1], y[1], f(n(x[0]), y[0], z[0])), f(n(x[1]), y[0], f(n(x[0]), y[1], z[1])))

    def conj_muladd(self, x, y, z):
        """conj(x) * y + z (the step of a Hermitian inner product)"""
        if not self.cplx:
            return self.rfma(x, y, z)
        f, n = self.rfma, self.b.fneg
        return (f(x[1], y[1], f(x[0], y[0], z[0])), f(n(x[1]), y[0], f(x[0], y[1], z[1])))

    def scale(self, x, r):
        """x * r for a real r"""
        f = self.b.fmul
        return (f(x[0], r), f(x[1], r)) if self.cplx else f(x, r)

    def div(self, x, y):
        """x / y (complex: Smith's algorithm, as numpy's complex division)"""
        if not self.cplx:
            return self.b.fdiv(x, y)
        return self.mul(x, self.recip(y))

    def recip(self, y):
        """1 / y (complex: Smith's algorithm, no overflow in |y|^2)"""
        b = self.b
        if not self.cplx:
            return b.fdiv(self.rconst(1.0), y)
        re, im = y
        wide = b.fcmp_ordered(">=", self.rabs(re), self.rabs(im))
        # |re| >= |im|: r = im/re, d = re + im*r -> (1/d, -r/d); else the mirror image
        p, q = b.select(wide, re, im), b.select(wide, im, re)
        r = b.fdiv(q, p)
        d = self.rfma(q, r, p)
        inv = b.fdiv(self.rconst(1.0), d)
        t = b.fneg(b.fmul(r, inv))
        return (b.select(wide, inv, b.fneg(t)), b.select(wide, t, b.fneg(inv)))

    def abs1(self, x):
        """|re| + |im| (LAPACK's cabs1: how pivots are compared)"""
        return self.b.fadd(self.rabs(x[0]), self.rabs(x[1])) if self.cplx else self.rabs(x)

    def abs2(self, x):
        """|x|^2"""
        if not self.cplx:
            return self.b.fmul(x, x)
        return self.rfma(x[1], x[1], self.b.fmul(x[0], x[0]))

    def abs(self, x):
        return self.rhypot(x[0], x[1]) if self.cplx else self.rabs(x)

    def is_zero(self, x):
        b, z = self.b, self.rconst(0.0)
        if not self.cplx:
            return b.fcmp_ordered("==", x, z)
        return b.and_(b.fcmp_ordered("==", x[0], z), b.fcmp_ordered("==", x[1], z))

    def hsum(self, v):
        """The sum of a vector's lanes (in lane order), as a scalar."""
        if self.lanes == 1:
            return v
        b = self.b

        def total(x):
            acc = b.extract_element(x, L.Constant(L.IntType(32), 0))
            for k in range(1, self.lanes):
                acc = b.fadd(acc, b.extract_element(x, L.Constant(L.IntType(32), k)))
            return acc

        return (total(v[0]), total(v[1])) if self.cplx else total(v)

    # --- memory -------------------------------------------------------------------------------
    def ptr(self, base, index):
        return elem_ptr(self.b, self.dt, base, index)

    def load(self, base, index, mask=None):
        p = self.ptr(base, index)
        if self.lanes == 1:
            return load_scalar(self.ctx, self.dt, p)
        return load_vector(self.ctx, self.dt, p, mask)

    def store(self, base, index, v, mask=None) -> None:
        p = self.ptr(base, index)
        if self.lanes == 1:
            store_scalar(self.ctx, self.dt, p, v)
        else:
            store_vector(self.ctx, self.dt, p, v, mask)


def strip(kb: KernelBuilder, lanes: int, lo, hi, body, split: bool = False) -> None:
    """body(j, mask) for j in [lo, hi) in steps of `lanes`, mask a <lanes x i1> of the valid lanes
    (one body, masked everywhere: half the code); with `split`, full vectors unmasked (mask None)
    then one masked tail, for the hottest loops; with lanes == 1, every j unmasked."""
    b = kb.b
    if lanes == 1:
        with for_range(b, lo, hi, name="s") as j:
            body(j, None)
        return
    if not split:
        ctx = LowerCtx(kb.module, b, kb.target, lanes, kb.helpers)
        with for_range(b, lo, hi, lanes, name="m") as j:
            body(j, lane_mask(ctx, b.sub(hi, j)))
        return
    n = b.sub(hi, lo)
    n = b.select(b.icmp_signed("<", n, i64(0)), i64(0), n)
    full = b.add(lo, b.and_(n, i64(-lanes)))
    with for_range(b, lo, full, lanes, name="v") as j:
        body(j, None)
    with b.if_then(b.icmp_signed("<", full, hi)):
        ctx = LowerCtx(kb.module, b, kb.target, lanes, kb.helpers)
        body(full, lane_mask(ctx, b.sub(hi, full)))


@contextmanager
def count_down(b: L.IRBuilder, lo, hi, name: str = "d"):
    """for (i = hi - 1; i >= lo; i--): yields i."""
    with for_range(b, i64(0), b.sub(hi, lo), name=name) as t:
        yield b.sub(b.sub(hi, i64(1)), t)


def imin(b: L.IRBuilder, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


# --- the argument block ---------------------------------------------------------------------------
@record(frozen=True)
class Layout:
    """Slot positions of a batched kernel's argument block (see the module doc)."""

    n_operands: int
    rank: int  # batch dims
    n_scalars: int

    def ptr(self, p: int) -> int:
        return p

    def dim(self, d: int) -> int:
        return self.n_operands + d

    def batch_stride(self, p: int, d: int) -> int:
        return self.n_operands + self.rank + p * self.rank + d

    def core_stride(self, p: int, k: int) -> int:
        return self.n_operands * (1 + self.rank) + self.rank + 2 * p + k

    def scalar(self, j: int) -> int:
        return self.n_operands * (3 + self.rank) + self.rank + j

    @property
    def error(self) -> int:
        return self.scalar(self.n_scalars)

    @property
    def size(self) -> int:
        return self.error + 1


class BatchArgs:
    """Reads a batched kernel's argument block (Layout) in the kernel's entry code."""

    def __init__(self, kb: KernelBuilder, layout: Layout):
        self.kb, self.layout = kb, layout
        n = layout.n_operands
        self.ptrs = [kb.b.inttoptr(kb.slot(layout.ptr(p)), PTR) for p in range(n)]
        self.dims = [kb.slot(layout.dim(d)) for d in range(layout.rank)]
        self.bstrides = [[kb.slot(layout.batch_stride(p, d)) for d in range(layout.rank)] for p in range(n)]
        self.cstrides = [(kb.slot(layout.core_stride(p, 0)), kb.slot(layout.core_stride(p, 1)))
                         for p in range(n)]
        self.scalars = [kb.slot(layout.scalar(j)) for j in range(layout.n_scalars)]
        self.error = kb.slot_ptr(layout.error)

    def offsets(self, t) -> list:
        """Each operand's element offset of batch member t (the flat index over the batch dims)."""
        b = self.kb.b
        offs = [i64(0)] * self.layout.n_operands
        rest = t
        for d in range(self.layout.rank - 1, -1, -1):
            idx = b.srem(rest, self.dims[d])
            rest = b.sdiv(rest, self.dims[d])
            offs = [b.add(o, b.mul(idx, self.bstrides[p][d])) for p, o in enumerate(offs)]
        return offs

    def fail(self) -> None:
        """Set the error slot (members on other threads may set it too: an atomic store)."""
        self.kb.b.atomic_rmw("xchg", self.error, i64(1), "monotonic")


class Matrix:
    """A matrix at a base pointer with row and column strides (elements): m[i, j]. With `src`, the
    values stored are of dtype `src` and converted (an output written from the computation)."""

    def __init__(self, a: Arith, base, rs, cs, src: DType | None = None):
        self.a, self.base, self.rs, self.cs, self.src = a, base, rs, cs, src

    def index(self, i, j):
        b = self.a.b
        return b.add(b.mul(i, self.rs), b.mul(j, self.cs))

    def load(self, i, j):
        return self.a.load(self.base, self.index(i, j))

    def store(self, i, j, v) -> None:
        if self.src is not None and self.src != self.a.dt:
            v = convert_value(self.a.kb, v, self.src, self.a.dt)
        self.a.store(self.base, self.index(i, j), v)


def compute_dtype(dt: DType) -> DType:
    """numpy.linalg computes in double precision (its _commonType), whatever the result's dtype."""
    return complex128 if dt.is_complex else float64


def operand_matrix(kb: KernelBuilder, args: BatchArgs, p: int, dt: DType, off,
                   src: DType | None = None) -> Matrix:
    """Operand p of batch member `off` (its elements of dtype dt); `src`: stores convert from it."""
    base = elem_ptr(kb.b, dt, args.ptrs[p], off)
    rs, cs = args.cstrides[p]
    return Matrix(kb.arith(dt), base, rs, cs, src)


def work_matrix(kb: KernelBuilder, args: BatchArgs, p: int, dt: DType, off, ld) -> Matrix:
    """The contiguous row-major work matrix of operand p (leading dimension `ld`)."""
    return Matrix(kb.arith(dt), elem_ptr(kb.b, dt, args.ptrs[p], off), ld, i64(1))


def convert_value(kb: KernelBuilder, v, src: DType, dst: DType):
    return convert(LowerCtx(kb.module, kb.b, kb.target, 1, kb.helpers), v, src, dst)


def copy_in(kb: KernelBuilder, src: Matrix, src_dt: DType, dst: Matrix, rows, cols, conj: bool = False,
            transpose: bool = False) -> None:
    """dst[i, j] = src[i, j] (or src[j, i] with `transpose`; conjugated with `conj`), converted to
    dst's dtype, for i < rows, j < cols."""
    b = kb.b
    with for_range(b, i64(0), rows, name="ci") as i, for_range(b, i64(0), cols, name="cj") as j:
        v = src.load(j, i) if transpose else src.load(i, j)
        v = convert_value(kb, v, src_dt, dst.a.dt)
        dst.store(i, j, dst.a.conj(v) if conj else v)


def copy_out(kb: KernelBuilder, src: Matrix, dst: Matrix, rows, cols) -> None:
    b = kb.b
    with for_range(b, i64(0), rows, name="oi") as i, for_range(b, i64(0), cols, name="oj") as j:
        dst.store(i, j, src.load(i, j))  # dst converts (its src dtype)



def dot_conj(kb: KernelBuilder, dt: DType, base, x, y, lo, hi):
    """sum over j in [lo, hi) of conj(base[x + j]) * base[y + j] (a scalar)."""
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    acc = va.var(va.zero())
    b = kb.b

    def body(j, mask):
        acc.set(va.conj_muladd(va.load(base, b.add(x, j), mask), va.load(base, b.add(y, j), mask), acc.get()))

    strip(kb, lanes, lo, hi, body)
    return va.hsum(acc.get())


def scaled_norm(kb: KernelBuilder, dt: DType, load, lo, hi):
    """The 2-norm of the elements load(i), i in [lo, hi), without overflow or underflow on the
    way (scaled by the largest |part|, as LAPACK's *nrm2): a real scalar."""
    b = kb.b
    sa = kb.arith(dt)
    big = sa.rvar(sa.rconst(0.0))
    with for_range(b, lo, hi, name="nm") as i:
        x = load(i)
        for part in ((sa.real(x), sa.imag(x)) if dt.is_complex else (x,)):
            big.set(sa.rmax(sa.rabs(part), big.get()))
    scale = big.get()
    ssq = sa.rvar(sa.rconst(0.0))
    inv = b.fdiv(sa.rconst(1.0), scale)
    with b.if_then(b.fcmp_ordered(">", scale, sa.rconst(0.0))):
        with for_range(b, lo, hi, name="ns") as i:
            x = load(i)
            for part in ((sa.real(x), sa.imag(x)) if dt.is_complex else (x,)):
                r = b.fmul(part, inv)
                ssq.set(sa.rfma(r, r, ssq.get()))
    return b.fmul(scale, sa.rsqrt(ssq.get()))


def nonfinite(kb: KernelBuilder, dt: DType, base, count):
    """(i1 some element is NaN, i1 some element is infinite) of base[0:count]."""
    b = kb.b
    rt = dt.real_dtype
    ra = kb.arith(rt)
    false = L.Constant(L.IntType(1), 0)
    nan, inf = kb.var(false.type, false), kb.var(false.type, false)
    with for_range(b, i64(0), b.mul(count, i64(2 if dt.is_complex else 1)), name="nf") as i:
        x = ra.load(base, i)
        nan.set(b.or_(nan.get(), b.fcmp_unordered("uno", x, x)))
        inf.set(b.or_(inf.get(), b.fcmp_ordered("==", ra.rabs(x), ra.rconst(float("inf")))))
    return nan.get(), inf.get()


def fill(kb: KernelBuilder, m: Matrix, rows, cols, value: float) -> None:
    """m[i, j] = value (complex: value + value j) for i < rows, j < cols."""
    b = kb.b
    v = m.a.const(complex(value, value) if m.a.cplx else value)
    with for_range(b, i64(0), rows, name="fi") as i, for_range(b, i64(0), cols, name="fj") as j:
        m.a.store(m.base, m.index(i, j), v)


def shared_function(kb: KernelBuilder, key: tuple, ftype: L.FunctionType, build) -> L.Function:
    """A module-level internal function made once per `key` by build(fb: KernelBuilder) (which ends
    with fb.finish(...)), kept out of line: the kernels of one module (det, inv and solve; eigh and
    eigvalsh; ...) call one copy of a factorisation instead of compiling it again each."""
    fn = kb.helpers.get(key)
    if fn is None:
        name = "aot.linalg." + ".".join(str(k) for k in key)
        fb = KernelBuilder(kb.module, kb.target, name, kb.helpers, ftype)
        fb.fn.attributes.add("noinline")
        build(fb)
        fn = kb.helpers[key] = fb.fn
    return fn
